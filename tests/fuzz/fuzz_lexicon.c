/*
 * fuzz_lexicon.c - the lexicon reader (lib/lexicon/lexicon.c): a
 * features stream's vocabulary, feature names, phi/psi matrices and logb,
 * then its ids, as train reads them.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(fuzz_file(data, size), "features", &e);
	if (!r)
		return 0;
	llr_lexicon *x = NULL;
	if (llr_lexicon_read(r, &x, &e) == LLR_OK) {
		const char *name;
		while (llr_tr_next(r, &name, &e) > 0) {
			llr_tensor *t = NULL;
			int64_t any = -1;
			if (llr_tr_tensor_expect(r, LLR_I32, 1, &any, &t, &e) == LLR_OK)
				llr_tensor_free(t);
		}
		int32_t cols[64];
		float vals[64];
		size_t n;
		llr_lexicon_word_row(x, "chat", 4, 0, cols, vals, 64, &n, &e);
		llr_lexicon_word_row(x, "zzqx", 4, 1, cols, vals, 64, &n, &e);
		llr_lexicon_free(x);
	}
	llr_tr_close(r);
	return 0;
}
