/*
 * setup.c - a saved run of train --context resumed, with the options it
 * fixes checked (the stream: lmpos.c; new models: model.c's
 * llr_loglm_fresh).
 */
#include "family/loglm/loglm.h"

#include <stdio.h>
#include <stdlib.h>

/* The settings of o as the meta spells them, in the order of the
 * options a resumed model fixes. */
static void spell(const llr_loglm_setup *o, char want[LOGLM_NFIXED][32])
{
	snprintf(want[0], 32, "%d", o->order);
	snprintf(want[1], 32, "%d", o->skip);
	snprintf(want[2], 32, "%d", o->bag);
	snprintf(want[3], 32, "%lld", (long long)o->hash_size);
	snprintf(want[4], 32, "%.9g", o->l2);
	snprintf(want[5], 32, "%.9g", o->l1);
	snprintf(want[6], 32, "%d", o->batch);
	snprintf(want[7], 32, "%s", llr_optim_name(o->optim));
	snprintf(want[8], 32, "%llu", (unsigned long long)o->seed);
	snprintf(want[9], 32, "%s", o->output == LLR_OUT_LOGLINEAR ? "loglinear" : "softmax");
}

int llr_loglm_resume(const char *path, llr_loglm_setup *o, unsigned given, llr_loglm **out, llr_train_state **tsp, int *bad,
                     llr_err *err)
{
	static const char *const key[LOGLM_NFIXED] = {"order", "skip", "bag", "hash_size", "l2", "l1", "batch", "optim", "seed", "output"};
	char want[LOGLM_NFIXED][32];
	spell(o, want);
	*bad = -1;
	llr_loglm *m = NULL;
	llr_train_state *ts = NULL;
	int rc = llr_loglm_load(path, &m, &ts, err);
	if (rc == LLR_OK && (!ts || !ts->optim))
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no training state to resume from", path);
	for (int f = 0; rc == LLR_OK && f < LOGLM_NFIXED; f++) {
		const char *have = llr_meta_get(m->meta, key[f]);
		if (!have && f == 9)
			have = "softmax"; /* a file from before the log-linear output */
		if ((given & 1u << f) && (!have || strcmp(have, want[f]))) {
			*bad = f;
			rc = llr_err_set(err, LLR_EINVAL, "%s=%s", key[f], have ? have : "(none)");
		}
	}
	if (rc == LLR_OK) {
		const llr_maxent_config *c = llr_maxent_cfg(m->me);
		o->output = c->phi ? LLR_OUT_LOGLINEAR : LLR_OUT_SOFTMAX;
		o->order = c->order;
		o->skip = c->skip;
		o->bag = c->bag;
		o->hash_size = (int64_t)c->hash_size;
		o->l2 = llr_meta_num(m->meta, "l2", 0);
		o->l1 = llr_meta_num(m->meta, "l1", 0);
		o->batch = (int)llr_meta_num(m->meta, "batch", 0);
		if (o->batch < 1 || o->batch > 1 << 20 || !(o->l2 >= 0) || !(o->l1 >= 0))
			rc = llr_err_set(err, LLR_EFORMAT, "%s: bad batch, l2 or l1 in meta", path);
	}
	if (rc < 0) {
		llr_train_state_free(ts);
		llr_loglm_free(m);
		return rc;
	}
	*out = m;
	*tsp = ts;
	return LLR_OK;
}
