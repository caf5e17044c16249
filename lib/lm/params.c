/*
 * params.c - the params/ members of a model file whose family lists its
 * tensors over one flat array of weights (fflm, loglm): the meta's
 * n_params checked against the configuration, each listed member read in
 * order (its name, dtype, shape, finite values) into its slice of the
 * array, then what follows (llr_state_tail: the training state, or
 * nothing).  The family gives the list; the checks and messages are the
 * same for all.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int read_one(llr_tensor_reader *r, const char *path, const llr_param_tensor *pt, float **parp, const llr_param_grow *grow,
                    const char **name, llr_err *err)
{
	int rc = llr_tr_next(r, name, err);
	if (rc <= 0)
		return rc < 0 ? rc : llr_err_set(err, LLR_ETRUNC, "%s: truncated: %s missing", path, pt->name);
	if (strcmp(*name, pt->name))
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s where %s was expected", path, *name, pt->name);
	llr_tensor *t = NULL;
	if ((rc = llr_tr_tensor_expect(r, LLR_F32, pt->nd, pt->shape, &t, err)) < 0)
		return rc;
	size_t cnt = llr_tensor_numel(t);
	if (grow && !(*parp = grow->fn(grow->ctx, pt->off + cnt, err))) {
		llr_tensor_free(t);
		return llr_err_prefix(err, "%s", path);
	}
	float *par = *parp;
	memcpy(par + pt->off, t->data, cnt * sizeof(float));
	llr_tensor_free(t);
	for (size_t k = 0; k < cnt; k++)
		if (!isfinite(par[pt->off + k]))
			return llr_err_set(err, LLR_ENAN, "%s: %s: NaN weights", path, pt->name);
	return LLR_OK;
}

int llr_params_load(llr_tensor_reader *r, const char *path, const llr_meta *meta, const void *net, size_t ntensors,
                    llr_param_tensor_fn tensor, float *par, size_t n, const llr_param_grow *grow, llr_train_state **tsp,
                    llr_err *err)
{
	int64_t np;
	if (llr_meta_get_i64(meta, "n_params", &np, NULL) < 0 || np != (int64_t)n)
		return llr_err_set(err, LLR_EFORMAT, "%s: n_params=%s but the configuration has %zu parameters", path,
		                   llr_meta_get(meta, "n_params") ? llr_meta_get(meta, "n_params") : "(missing)", n);
	const char *name = NULL;
	int rc;
	for (size_t i = 0; i < ntensors; i++) {
		llr_param_tensor pt;
		tensor(net, i, &pt);
		if ((rc = read_one(r, path, &pt, &par, grow, &name, err)) < 0)
			return rc;
	}
	if (grow && !(par = grow->fn(grow->ctx, n, err)))
		return llr_err_prefix(err, "%s", path);
	rc = llr_tr_next(r, &name, err);
	if (rc < 0)
		return rc;
	return llr_state_tail(r, path, name, rc > 0, par, n, tsp, err);
}
