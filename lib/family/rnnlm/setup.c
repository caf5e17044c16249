/*
 * setup.c - a new LSTM language model set up for training (lib/llrnn.h,
 * llr_rnnlm_setup): its network over the stream's lexicon (the output
 * chosen by the lexicon when not given), weights and training state from
 * the seed, the meta train --resume reads back, and a tree or classes
 * output's groups from the corpus' word counts.  Open-vocabulary
 * training is open.c's; the training itself the job of train.c.
 */
#include "family/family.h"

#include <stdlib.h>

static int fresh_meta(llr_meta *m, const llr_rnnlm_setup *o, double lr)
{
	int rc = 0;
	rc |= llr_meta_set(m, "optim", llr_optim_name(o->optim));
	rc |= llr_meta_set(m, "init", o->init == LLR_INIT_TORCH ? "torch" : "uniform");
	rc |= llr_meta_setf(m, "lr", "%g", lr);
	rc |= llr_meta_setf(m, "batch", "%d", o->batch);
	rc |= llr_meta_setf(m, "max_len", "%d", o->max_len);
	rc |= llr_meta_setf(m, "clip", "%.9g", o->clip);
	rc |= llr_meta_setf(m, "min_improvement", "%.9g", o->min_impr);
	rc |= llr_meta_setf(m, "seed", "%llu", (unsigned long long)o->seed);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

int llr_rnnlm_fresh(llr_lexicon *x, const llr_rnnlm_setup *o, llr_rnnlm **out, llr_train_state **tsp, llr_err *err)
{
	*out = NULL;
	*tsp = NULL;
	llr_net_config c = o->net;
	if (!c.output)
		c.output = !x->fsa && llr_csr_one_hot(x->phi) && llr_csr_one_hot(x->psi) ? LLR_OUT_SOFTMAX : LLR_OUT_LOGLINEAR;
	llr_rnnlm *m = llr_rnnlm_new(x, &c, err);
	if (!m)
		return llr_err_code(err, LLR_EINVAL);
	llr_rng init;
	size_t np;
	llr_net_params(m->net, &np);
	llr_train_state *ts = llr_train_state_fresh(o->seed, o->optim, o->lr, o->eps, np, &init, err);
	int rc = ts ? fresh_meta(m->meta, o, ts->lr) : llr_err_code(err, LLR_ENOMEM);
	if (rc < 0) {
		if (ts)
			llr_err_set(err, rc, "out of memory");
		llr_train_state_free(ts);
		m->lex = NULL; /* still the caller's */
		llr_rnnlm_free(m);
		return rc;
	}
	llr_net_init_scheme(m->net, &init, o->init);
	*out = m;
	*tsp = ts;
	return LLR_OK;
}

int llr_rnnlm_tree_init(llr_rnnlm *m, const int32_t *ids, size_t n, const llr_train_comm *comm, llr_err *err)
{
	int output = llr_net_cfg(m->net)->output;
	if (output != LLR_OUT_TREE && output != LLR_OUT_CLASSES)
		return LLR_OK;
	size_t V = llr_strmap_size(m->lex->vocab);
	int64_t *count = llr_calloc(V, sizeof *count);
	if (!count)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		count[ids[i]]++;
	llr_comm_sum_i64(comm, count, V); /* each rank holds a share of the corpus */
	int rc = llr_net_tree_from_counts(m->net, count, err);
	free(count);
	return rc;
}
