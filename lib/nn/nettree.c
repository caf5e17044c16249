/*
 * nettree.c - the tree and class softmax outputs of the LSTM language
 * model (Jernite's thesis, chapter 3; treeout.h holds the kernels): their
 * default shapes, the output pass as net.c's forward_out does it for the
 * log-linear layer (loss, gradient, whole distribution, normalisation
 * check), and the reservoir of training samples from which the tree is
 * re-learned (llr_net_tree_learn).  The parameters are net.c's tensors
 * tree/nodes/w (nodes*M x H), tree/nodes/b, tree/words/w (V x H) and
 * tree/words/b (V).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netx.h"

static int ipow(int b, int e, int64_t lim, int64_t *out)
{
	int64_t r = 1;
	for (int i = 0; i < e; i++) {
		r *= b;
		if (r > lim)
			return -1;
	}
	*out = r;
	return 0;
}

int llr_treeout_init(llr_treeout *o, llr_net_config *cf, llr_err *err)
{
	int32_t V = cf->vocab;
	if (cf->output == LLR_OUT_CLASSES) {
		if (!cf->tree_arity)
			cf->tree_arity = (int)LLR_MAX(2, lround(sqrt((double)V)));
		cf->tree_depth = 2;
		cf->tree_cap = 0;
	} else {
		if (!cf->tree_depth)
			cf->tree_depth = 3;
		if (cf->tree_depth < 2 || cf->tree_depth > 8)
			return llr_err_set(err, LLR_EINVAL, "network: tree depth %d: must be 2 to 8", cf->tree_depth);
		if (!cf->tree_arity)
			cf->tree_arity = (int)LLR_MAX(2, ceil(pow((double)V, 1.0 / cf->tree_depth) - 1e-9));
		int64_t G;
		if (cf->tree_arity < 2 || ipow(cf->tree_arity, cf->tree_depth - 1, INT32_MAX / 4, &G) < 0)
			return llr_err_set(err, LLR_EINVAL, "network: tree arity %d, depth %d: need arity >= 2 and fewer than 2^29 groups", cf->tree_arity, cf->tree_depth);
		if (!cf->tree_cap)
			cf->tree_cap = (int32_t)LLR_MAX(2, 2 * ((V + G - 1) / G));
	}
	int rc = llr_tree_init(&o->t, V, cf->tree_depth, cf->tree_arity, cf->tree_cap, err);
	if (rc < 0)
		return llr_err_prefix(err, "network");
	o->H = cf->hidden;
	llr_rng_seed(&o->rng, 0x7265657374726565ull);
	return llr_treeout_counts(o, NULL, err);
}

int llr_treeout_counts(llr_treeout *o, const int64_t *count, llr_err *err)
{
	llr_tree *t = &o->t;
	if (t->cap == 0)
		llr_tree_freq_classes(t->V, count, t->arity, t->group);
	else
		llr_tree_freq_blocks(t->V, count, (t->V + t->groups - 1) / t->groups, t->group);
	return llr_tree_index(t, err);
}

int llr_treeout_set_groups(llr_treeout *o, const int32_t *group, llr_err *err)
{
	llr_tree *t = &o->t;
	int32_t *save = llr_malloc((size_t)t->V * sizeof *save);
	if (!save)
		return llr_err_set(err, LLR_ENOMEM, "tree: out of memory");
	memcpy(save, t->group, (size_t)t->V * sizeof *save);
	memcpy(t->group, group, (size_t)t->V * sizeof *group);
	int rc = llr_tree_index(t, err);
	if (rc < 0) {
		memcpy(t->group, save, (size_t)t->V * sizeof *save);
		llr_tree_index(t, NULL);
	}
	free(save);
	return rc;
}

void llr_treeout_free(llr_treeout *o)
{
	llr_tree_free(&o->t);
	llr_tree_ws_free(&o->ws);
	free(o->rh);
	free(o->ry);
	free(o->all);
}

llr_tree_io llr_treeout_io(const llr_treeout *o, const float *P, float *G)
{
	return (llr_tree_io){
	    .t = &o->t,
	    .H = o->H,
	    .Wn = P + o->o_wn,
	    .bn = P + o->o_bn,
	    .Ww = P + o->o_ww,
	    .bw = P + o->o_bw,
	    .dWn = G ? G + o->o_wn : NULL,
	    .dbn = G ? G + o->o_bn : NULL,
	    .dWw = G ? G + o->o_ww : NULL,
	    .dbw = G ? G + o->o_bw : NULL,
	};
}

/* Reservoir sampling (Vitter's algorithm R) of the training positions. */
static void sample(llr_treeout *o, const float *Hs, size_t N, const int32_t *tg)
{
	size_t H = (size_t)o->H;
	if (!o->rh) {
		o->rh = llr_malloc(LLR_TREE_SAMPLES * H * sizeof *o->rh);
		o->ry = llr_malloc(LLR_TREE_SAMPLES * sizeof *o->ry);
		if (!o->rh || !o->ry) {
			free(o->rh);
			free(o->ry);
			o->rh = NULL;
			o->ry = NULL;
			return; /* no samples: the tree stays as it is */
		}
	}
	for (size_t n = 0; n < N; n++) {
		if (tg[n] < 0)
			continue;
		int64_t k = o->seen++;
		if (k >= LLR_TREE_SAMPLES)
			k = (int64_t)llr_rng_below(&o->rng, (uint64_t)o->seen);
		if (k >= LLR_TREE_SAMPLES)
			continue;
		memcpy(o->rh + (size_t)k * H, Hs + n * H, H * sizeof *o->rh);
		o->ry[k] = tg[n];
		if (k >= o->filled)
			o->filled = (int)k + 1;
	}
}

int llr_treeout_learn(llr_treeout *o, const float *P, int32_t *moved, llr_err *err)
{
	if (moved)
		*moved = 0;
	if (o->t.cap == 0)
		return llr_err_set(err, LLR_EINVAL, "network: only a tree output learns its tree");
	if (!o->filled)
		return LLR_OK;
	int rc = llr_tree_learn(&o->t, P + o->o_wn, P + o->o_bn, o->H, o->filled, o->rh, o->ry, moved, err);
	o->filled = 0;
	o->seen = 0;
	return rc;
}

int llr_treeout_forward(llr_treeout *o, const float *P, float *G, const float *Hs, size_t N, const int32_t *tg, double *nll, float *logp_t, double *norm_err, float *logp_all, float *dH)
{
	llr_tree_io io = llr_treeout_io(o, P, dH ? G : NULL);
	size_t H = (size_t)o->H, V = (size_t)o->t.V;
	int rc = LLR_OK;
	if (tg && (nll || logp_t || dH)) {
		double s = 0;
		if ((rc = llr_tree_run(&io, &o->ws, (int)N, Hs, tg, &s, logp_t, dH)) < 0)
			return rc;
		if (nll)
			*nll = s;
		if (dH && o->t.cap > 0)
			sample(o, Hs, N, tg);
	}
	if (!norm_err && !logp_all)
		return LLR_OK;
	if (!logp_all && !o->all && !(o->all = llr_malloc(LLR_LL_CHUNK * V * sizeof *o->all)))
		return LLR_ENOMEM;
	double worst = 0;
	for (size_t p0 = 0; p0 < N; p0 += LLR_LL_CHUNK) {
		size_t n = LLR_MIN((size_t)LLR_LL_CHUNK, N - p0);
		float *out = logp_all ? logp_all + p0 * V : o->all;
		if ((rc = llr_tree_all(&io, &o->ws, (int)n, Hs + p0 * H, out)) < 0)
			return rc;
		for (size_t i = 0; norm_err && i < n; i++) {
			if (tg && tg[p0 + i] < 0)
				continue;
			double s = 0;
			const float *r = out + i * V;
			for (size_t x = 0; x < V; x++)
				s += exp((double)r[x]);
			double e = s - 1.0;
			if (llr_norm_worse(e, worst))
				worst = e;
		}
	}
	if (norm_err)
		*norm_err = worst;
	return LLR_OK;
}
