/*
 * setup.c - what train --feedforward needs before the driver runs
 * (lib/llrnn.h): the training stream read with its context order checked
 * against its longest sentence, and a saved run resumed with the options
 * it fixes checked.  New models are model.c's (llr_fflm_fresh).
 */
#include "family/fflm/fflm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int llr_fflm_read_stream(const char *path, const char *name, int order, const llr_train_comm *comm, llr_lexicon **x,
                         llr_lm_corpus *c, llr_err *err)
{
	return llr_lm_stream_read(path, name, "--feedforward", order, comm, x, c, err);
}

int llr_fflm_resume(const char *path, llr_fflm_setup *o, unsigned given, llr_fflm **out, llr_train_state **tsp, int *bad,
                    llr_err *err)
{
	static const char *const key[LLR_FFS_NFIXED] = {"output", "order", "layers", "hidden", "embed", "direct", "batch", "optim", "seed"};
	char want[LLR_FFS_NFIXED][32];
	snprintf(want[0], 32, "%s", o->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear");
	const long long num[] = {o->order, o->layers, o->hidden, o->embed, o->direct, o->batch};
	for (int f = 1; f <= 6; f++)
		snprintf(want[f], 32, "%lld", num[f - 1]);
	snprintf(want[7], 32, "%s", llr_optim_name(o->optim));
	snprintf(want[8], 32, "%llu", (unsigned long long)o->seed);
	*bad = -1;
	llr_fflm *m = NULL;
	llr_train_state *ts = NULL;
	int rc = llr_fflm_load(path, &m, &ts, err);
	if (rc == LLR_OK && (!ts || !ts->optim))
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no training state to resume from", path);
	for (int f = 0; rc == LLR_OK && f < LLR_FFS_NFIXED; f++) {
		const char *have = llr_meta_get(m->meta, key[f]);
		if ((given & 1u << f) && (!have || strcmp(have, want[f]))) {
			*bad = f;
			rc = llr_err_set(err, LLR_EINVAL, "%s=%s", key[f], have ? have : "(none)");
		}
	}
	int64_t batch = 0;
	if (rc == LLR_OK) {
		const llr_ffnet_config *c = llr_ffnet_cfg(m->net);
		llr_meta_get_i64(m->meta, "batch", &batch, NULL);
		*o = (llr_fflm_setup){.order = c->order, .embed = c->embed, .hidden = c->hidden, .layers = c->layers, .direct = c->direct,
		                      .output = c->output, .optim = o->optim, .lr = o->lr, .eps = o->eps, .batch = (int)batch, .seed = o->seed,
		                      .dropout = c->dropout, .l2 = llr_meta_num(m->meta, "l2", 0)};
		if (batch < 1 || batch > 1 << 20)
			rc = llr_err_set(err, LLR_EFORMAT, "%s: bad batch in meta", path);
		else if (!(o->l2 >= 0 && isfinite(o->l2)))
			rc = llr_err_set(err, LLR_EFORMAT, "%s: bad l2 in meta", path);
	}
	if (rc < 0) {
		llr_train_state_free(ts);
		llr_fflm_free(m);
		return rc;
	}
	*out = m;
	*tsp = ts;
	return LLR_OK;
}
