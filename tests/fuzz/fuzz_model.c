/*
 * fuzz_model.c - the model loader (lib/lm/model.c, lib/lm/trainstate.c,
 * and the lexicon reader lib/lexicon/lexicon.c under it): load with the
 * training state, as train --resume does.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llr_err e = {0};
	llr_rnnlm *m = NULL;
	llr_train_state *ts = NULL;
	if (llr_rnnlm_load_state(fuzz_file(data, size), &m, &ts, &e) == LLR_OK) {
		llr_rnnlm_free(m);
		llr_train_state_free(ts);
	}
	return 0;
}
