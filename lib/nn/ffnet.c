/*
 * ffnet.c - the feed-forward language model's network (Bengio et al.
 * 2003, "A Neural Probabilistic Language Model"; lib/internal.h):
 *   x   = [e(w_{t-n+1}); ...; e(w_{t-1})]           (n-1) E, e: psi . embed
 *   h_1 = tanh(x W_1 + b_1), h_l = tanh(h_{l-1} W_l + b_l)
 *   a   = W_out h_L + b_out (+ W_dir x)             F, the adaptor
 *   log p(y) = log b(y) + a . phi(y) - log Z         (llr_ll_run, nn.h)
 * In training with dropout p, x and every h_l are multiplied by masks of
 * 0 (probability p) and 1 / (1 - p), so scoring needs no rescaling.
 * A softmax is the same code with phi the identity and b uniform.  The
 * positions of a batch are independent, so every layer is one GEMM over
 * all of them; the output layer runs in slices of positions (bounded
 * memory, as net.c).  Not here: batching a corpus, the optimiser, the
 * model file (lib/family/fflm).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn.h"

#define NT (2 + 2 * LLR_FF_MAX_LAYERS + 3)
#define OUT_BUDGET ((size_t)128 << 20) /* bytes of A and dA together */
#define SCORE_SLICE 256

typedef struct ftensor {
	char name[24];
	int ndim;
	int64_t shape[2];
	size_t off;
} ftensor;

struct llr_ffnet {
	llr_ffnet_config cfg;
	llr_ll out;
	llr_ll_classes cls;
	const llr_csr *psi;
	llr_csr *own_eye;
	float *own_logb;
	int C, Din, Htop; /* context words, (n-1) E, the adaptor's input width */
	float *params, *grads;
	size_t nparams;
	size_t have; /* params allocated so far (llr_ffnet_params_grow) */
	ftensor ti[NT];
	size_t nt;
	size_t o_emb, o_bos, o_w[LLR_FF_MAX_LAYERS], o_b[LLR_FF_MAX_LAYERS], o_dir, o_ow, o_ob;
	/* workspace for capN positions, slice positions of the output */
	size_t capN;
	int slice, llthreads;
	int32_t *in, *tg;   /* C x N (slot-major), N */
	float *xs;          /* N x E: one slot's embeddings, or their gradient */
	float *x;           /* N x Din */
	float *h[LLR_FF_MAX_LAYERS]; /* N x H each */
	/* dropout: x's mask (N x Din), each layer's mask and masked output
	 * (N x H); drop: the last forward pass drew them */
	float *mx, *mh[LLR_FF_MAX_LAYERS], *hd[LLR_FF_MAX_LAYERS];
	int drop;
	float *dx, *dh, *dt; /* N x max(Din, H): gradients */
	float *A, *dA, *llwork;
	double *chunk;
};

static void add(llr_ffnet *f, const char *name, int ndim, int64_t d0, int64_t d1, size_t *off)
{
	ftensor *t = &f->ti[f->nt++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->ndim = ndim;
	t->shape[0] = d0;
	t->shape[1] = ndim > 1 ? d1 : 0;
	t->off = *off = f->nparams;
	f->nparams += (size_t)d0 * (size_t)(ndim > 1 ? d1 : 1);
}

static int check_cfg(llr_ffnet_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err)
{
	if (c->order < 2 || c->order > LLR_FF_MAX_ORDER)
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: order %d: must be 2 to %d (a context of at least one word)", c->order, LLR_FF_MAX_ORDER);
	if (c->vocab <= 0 || c->embed <= 0 || (c->layers > 0 && c->hidden <= 0))
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: vocabulary, embedding and hidden sizes must be positive");
	if (c->layers < 0 || c->layers > LLR_FF_MAX_LAYERS)
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: %d hidden layers: must be 0 to %d", c->layers, LLR_FF_MAX_LAYERS);
	if (c->direct && c->layers == 0)
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: direct connections need a hidden layer (without one the output reads the embeddings already)");
	if (!(c->dropout >= 0.0f && c->dropout < 1.0f))
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: dropout %g: must be in [0, 1)", (double)c->dropout);
	if ((int64_t)(c->order - 1) * c->embed > 1 << 24 || (int64_t)c->hidden > 1 << 20)
		return llr_err_set(err, LLR_ERANGE, "feed-forward network: layers too wide");
	if (!c->layers)
		c->hidden = 0;
	if (c->output == LLR_OUT_SOFTMAX) {
		c->feat_in = c->feat_out = c->vocab;
		return LLR_OK;
	}
	if (c->output != LLR_OUT_LOGLINEAR)
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: the output is softmax or loglinear");
	const llr_csr *ps = psi ? psi : phi;
	if (!phi || !logb)
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: a log-linear output needs phi and a background");
	if (phi->rows != c->vocab || ps->rows != c->vocab || phi->cols <= 0 || ps->cols <= 0)
		return llr_err_set(err, LLR_EINVAL, "feed-forward network: phi is %dx%d and psi %dx%d for %d words", phi->rows, phi->cols, ps->rows, ps->cols, c->vocab);
	c->feat_out = phi->cols;
	c->feat_in = ps->cols;
	for (int32_t v = 0; v < c->vocab; v++)
		if (isnan(logb[v]) || logb[v] == INFINITY)
			return llr_err_set(err, LLR_ENAN, "feed-forward network: background of word %d is %g", v, (double)logb[v]);
	return LLR_OK;
}

/* The output layer: identity features and a uniform background for a
 * softmax, else phi, logb and their classes. */
static int setup_out(llr_ffnet *f, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err)
{
	const llr_ffnet_config *c = &f->cfg;
	f->out.V = c->vocab;
	f->out.F = c->feat_out;
	if (c->output == LLR_OUT_LOGLINEAR) {
		f->out.phi = phi;
		f->out.logb = logb;
		f->psi = psi ? psi : phi;
		if (llr_ll_classes_build(&f->cls, phi, logb, err) < 0)
			return llr_err_code(err, LLR_ENOMEM);
		f->out.cls = &f->cls;
		return LLR_OK;
	}
	f->own_eye = llr_csr_identity(c->vocab, err);
	f->own_logb = llr_malloc((size_t)c->vocab * sizeof *f->own_logb);
	if (!f->own_eye || !f->own_logb)
		return llr_err_set(err, LLR_ENOMEM, "feed-forward network: out of memory");
	for (int32_t v = 0; v < c->vocab; v++)
		f->own_logb[v] = (float)-log((double)c->vocab);
	f->out.phi = f->psi = f->own_eye;
	f->out.logb = f->own_logb;
	f->out.identity = 1;
	return LLR_OK;
}

/* llr_ffnet_new, its weights allocated or (empty) left for
 * llr_ffnet_params_grow. */
static llr_ffnet *ffnet_new(const llr_ffnet_config *cfg, const llr_csr *phi, const llr_csr *psi, const float *logb, int empty, llr_err *err)
{
	llr_ffnet_config c = *cfg;
	if (check_cfg(&c, phi, psi, logb, err) < 0)
		return NULL;
	llr_ffnet *f = llr_calloc(1, sizeof *f);
	if (!f)
		return llr_err_set(err, LLR_ENOMEM, "feed-forward network: out of memory"), NULL;
	f->cfg = c;
	if (setup_out(f, phi, psi, logb, err) < 0) {
		llr_ffnet_free(f);
		return NULL;
	}
	f->C = c.order - 1;
	f->Din = f->C * c.embed;
	f->Htop = c.layers ? c.hidden : f->Din;
	add(f, "embed", 2, c.feat_in, c.embed, &f->o_emb);
	add(f, "bos", 1, c.embed, 0, &f->o_bos);
	for (int l = 0; l < c.layers; l++) {
		char nm[24];
		snprintf(nm, sizeof nm, "hidden%d/w", l);
		add(f, nm, 2, l ? c.hidden : f->Din, c.hidden, &f->o_w[l]);
		snprintf(nm, sizeof nm, "hidden%d/b", l);
		add(f, nm, 1, c.hidden, 0, &f->o_b[l]);
	}
	if (c.direct)
		add(f, "direct/w", 2, c.feat_out, f->Din, &f->o_dir);
	add(f, "out/w", 2, c.feat_out, f->Htop, &f->o_ow);
	add(f, "out/b", 1, c.feat_out, 0, &f->o_ob);
	if (!empty && !llr_ffnet_params_grow(f, f->nparams, err)) {
		llr_ffnet_free(f);
		return NULL;
	}
	return f;
}

llr_ffnet *llr_ffnet_new(const llr_ffnet_config *cfg, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err)
{
	return ffnet_new(cfg, phi, psi, logb, 0, err);
}

llr_ffnet *llr_ffnet_new_empty(const llr_ffnet_config *cfg, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err)
{
	return ffnet_new(cfg, phi, psi, logb, 1, err);
}

float *llr_ffnet_params_grow(llr_ffnet *f, size_t n, llr_err *err)
{
	LLR_ASSERT(n <= f->nparams);
	return llr_weights_grow(&f->params, &f->have, &f->grads, n, f->nparams, "feed-forward network", err);
}

static void free_ws(llr_ffnet *f)
{
	free(f->in);
	free(f->tg);
	free(f->xs);
	free(f->x);
	free(f->mx);
	f->mx = NULL;
	for (int l = 0; l < LLR_FF_MAX_LAYERS; l++) {
		free(f->h[l]);
		free(f->mh[l]);
		free(f->hd[l]);
		f->h[l] = f->mh[l] = f->hd[l] = NULL;
	}
	free(f->dx);
	free(f->dh);
	free(f->dt);
	f->in = f->tg = NULL;
	f->xs = f->x = f->dx = f->dh = f->dt = NULL;
	f->capN = 0;
}

void llr_ffnet_free(llr_ffnet *f)
{
	if (!f)
		return;
	free_ws(f);
	free(f->A);
	free(f->dA);
	free(f->chunk);
	free(f->llwork);
	free(f->params);
	free(f->grads);
	llr_csr_free(f->own_eye);
	free(f->own_logb);
	llr_ll_classes_free(&f->cls);
	free(f);
}

const llr_ffnet_config *llr_ffnet_cfg(const llr_ffnet *f)
{
	return &f->cfg;
}

float *llr_ffnet_params(llr_ffnet *f, size_t *n)
{
	if (n)
		*n = f->nparams;
	return f->params;
}

float *llr_ffnet_grads(llr_ffnet *f, size_t *n)
{
	if (n)
		*n = f->nparams;
	return f->grads;
}

size_t llr_ffnet_n_tensors(const llr_ffnet *f)
{
	return f->nt;
}

void llr_ffnet_tensor_info(const llr_ffnet *f, size_t i, const char **name, int *ndim, int64_t shape[2], size_t *offset)
{
	LLR_ASSERT(i < f->nt);
	const ftensor *t = &f->ti[i];
	*name = t->name;
	*ndim = t->ndim;
	shape[0] = t->shape[0];
	shape[1] = t->shape[1];
	*offset = t->off;
}

void llr_ffnet_init(llr_ffnet *f, llr_rng *rng)
{
	for (size_t i = 0; i < f->nt; i++) {
		const ftensor *t = &f->ti[i];
		float *p = f->params + t->off;
		size_t n = (size_t)t->shape[0] * (size_t)(t->ndim > 1 ? t->shape[1] : 1);
		int emb = !strcmp(t->name, "embed") || !strcmp(t->name, "bos");
		/* fan-in: a hidden layer's rows; out/w and direct/w's columns */
		double fan = t->ndim < 2 ? 0 : t->name[0] == 'h' ? (double)t->shape[0] : (double)t->shape[1];
		for (size_t k = 0; k < n; k++)
			p[k] = emb ? (float)(0.1 * llr_rng_normal(rng)) : fan > 0 ? (float)((2 * llr_rng_uniform(rng) - 1) / sqrt(fan)) : 0.0f;
	}
}

/* Workspace for N positions; dA when training. */
static int ensure_ws(llr_ffnet *f, size_t N, int train, llr_err *err)
{
	const llr_ffnet_config *c = &f->cfg;
	size_t F = (size_t)c->feat_out, E = (size_t)c->embed, H = (size_t)c->hidden, D = LLR_MAX((size_t)f->Din, H);
	size_t cap = OUT_BUDGET / (F * 2 * sizeof(float)) / LLR_LL_CHUNK * LLR_LL_CHUNK;
	cap = LLR_MIN(LLR_MAX(cap, (size_t)LLR_LL_CHUNK), (size_t)INT32_MAX / 2);
	size_t need = LLR_MIN(LLR_MAX(N, (size_t)1), cap);
	if (!f->A || need > (size_t)f->slice) {
		free(f->A);
		free(f->dA);
		free(f->chunk);
		f->dA = NULL;
		f->A = llr_malloc(F * need * sizeof(float));
		f->chunk = llr_malloc(llr_ll_chunk_size((int)need) * sizeof(double));
		f->slice = f->A && f->chunk ? (int)need : 0;
		if (!f->slice)
			return llr_err_set(err, LLR_ENOMEM, "feed-forward network: out of memory for the output's %zu x %zu block", F, need);
	}
	if (train && !f->dA && !(f->dA = llr_malloc(F * (size_t)f->slice * sizeof(float))))
		return llr_err_set(err, LLR_ENOMEM, "feed-forward network: out of memory");
	if (N > f->capN) {
		N = LLR_MAX(N, f->capN + f->capN / 2);
		free_ws(f);
		int ok = (f->in = llr_malloc(N * (size_t)f->C * sizeof(int32_t))) && (f->tg = llr_malloc(N * sizeof(int32_t))) &&
		         (f->xs = llr_malloc(N * E * sizeof(float))) && (f->x = llr_malloc(N * (size_t)f->Din * sizeof(float))) &&
		         (f->dx = llr_malloc(N * D * sizeof(float))) && (f->dh = llr_malloc(N * D * sizeof(float))) &&
		         (f->dt = llr_malloc(N * D * sizeof(float)));
		for (int l = 0; ok && l < c->layers; l++)
			ok = (f->h[l] = llr_malloc(N * H * sizeof(float))) != NULL;
		if (ok && c->dropout > 0.0f) {
			ok = (f->mx = llr_malloc(N * (size_t)f->Din * sizeof(float))) != NULL;
			for (int l = 0; ok && l < c->layers; l++)
				ok = (f->mh[l] = llr_malloc(N * H * sizeof(float))) && (f->hd[l] = llr_malloc(N * H * sizeof(float)));
		}
		if (!ok) {
			free_ws(f);
			return llr_err_set(err, LLR_ENOMEM, "feed-forward network: out of memory for %zu positions", N);
		}
		f->capN = N;
	}
	int th = llr_blas_threads();
	if (th != f->llthreads) {
		free(f->llwork);
		f->llthreads = 0;
		if (!(f->llwork = llr_malloc(llr_ll_work_size(c->vocab, th) * sizeof(float))))
			return llr_err_set(err, LLR_ENOMEM, "feed-forward network: out of memory");
		f->llthreads = th;
	}
	return LLR_OK;
}

/* The context ids, slot-major, and the targets, checked. */
static int load(llr_ffnet *f, size_t N, const int32_t *ctx, const int32_t *target, llr_err *err)
{
	int32_t rows = f->psi->rows, V = f->cfg.vocab;
	for (size_t n = 0; n < N; n++) {
		int32_t y = target ? target[n] : -1;
		if (y < -1 || y >= V)
			return llr_err_set(err, LLR_EINVAL, "feed-forward network: position %zu: target %d out of range [0, %d)", n, y, V);
		f->tg[n] = y;
		for (int j = 0; j < f->C; j++) {
			int32_t x = ctx[n * (size_t)f->C + (size_t)j];
			if (x != LLR_BOS_ID && (x < 0 || x >= rows))
				return llr_err_set(err, LLR_EINVAL, "feed-forward network: position %zu: context word %d out of range [0, %d)", n, x, rows);
			f->in[(size_t)j * N + n] = x;
		}
	}
	return LLR_OK;
}

/* x, then the hidden layers: the top layer's N x Htop; with rng, dropout
 * as the configuration says. */
static const float *forward(llr_ffnet *f, size_t N, llr_rng *rng)
{
	const llr_ffnet_config *c = &f->cfg;
	const float *P = f->params;
	int E = c->embed, H = c->hidden, Din = f->Din;
	f->drop = rng && c->dropout > 0.0f;
	for (int j = 0; j < f->C; j++) {
		llr_embed_forward(f->psi, P + f->o_emb, P + f->o_bos, E, f->in + (size_t)j * N, N, f->xs);
		for (size_t n = 0; n < N; n++)
			memcpy(f->x + n * Din + (size_t)j * E, f->xs + n * E, (size_t)E * sizeof(float));
	}
	/* x is read only through its masked values, so it is masked in place */
	if (f->drop)
		llr_dropout(f->x, f->x, f->mx, N * (size_t)Din, c->dropout, rng);
	const float *in = f->x;
	for (int l = 0; l < c->layers; l++) {
		int d = l ? H : Din;
		float *h = f->h[l];
		const float *b = P + f->o_b[l];
		for (size_t n = 0; n < N; n++)
			memcpy(h + n * H, b, (size_t)H * sizeof(float));
		llr_gemm(0, 0, (int)N, H, d, 1.0f, in, d, P + f->o_w[l], H, 1.0f, h, H);
		for (size_t k = 0; k < N * (size_t)H; k++)
			h[k] = tanhf(h[k]);
		in = h;
		if (f->drop) {
			llr_dropout(h, f->hd[l], f->mh[l], N * (size_t)H, c->dropout, rng);
			in = f->hd[l];
		}
	}
	return in;
}

/* The output over N positions of top (N x Htop) in slices: the adaptor
 * (out, direct) then llr_ll_run in mode; training (dtop set), the
 * adaptor's gradients, dLoss/dtop into dtop and the direct connections'
 * dLoss/dx into f->dx. */
static int output(llr_ffnet *f, const float *top, size_t N, int mode, double *nll, float *logp, double *norm_err, float *logp_all,
                  float *dtop)
{
	const llr_ffnet_config *c = &f->cfg;
	const float *P = f->params;
	float *G = f->grads;
	int F = c->feat_out, Ht = f->Htop, Din = f->Din;
	size_t slice = dtop ? (size_t)f->slice : LLR_MIN((size_t)f->slice, (size_t)SCORE_SLICE);
	double tot = 0;
	llr_norm_stat worst = {0};
	int rc = LLR_OK;
	for (size_t p0 = 0; p0 < N; p0 += slice) {
		int n = (int)LLR_MIN(slice, N - p0);
		const float *xp = f->x + p0 * Din;
		llr_dense_forward(n, Ht, F, top + p0 * Ht, P + f->o_ow, P + f->o_ob, f->A, n);
		if (c->direct)
			llr_gemm(0, 1, F, n, Din, 1.0f, P + f->o_dir, Din, xp, Din, 1.0f, f->A, n);
		double s = 0;
		llr_norm_stat ne = {0};
		llr_ll_io io = {
		    .mode = mode,
		    .N = n,
		    .lda = n,
		    .A = f->A,
		    .target = f->tg + p0,
		    .nll = &s,
		    .logp_t = logp ? logp + p0 : NULL,
		    .norm = norm_err ? &ne : NULL,
		    .logp_all = logp_all ? logp_all + p0 * (size_t)c->vocab : NULL,
		    .dA = dtop ? f->dA : NULL,
		    .work = f->llwork,
		    .chunk = f->chunk,
		    .threads = f->llthreads,
		};
		int r = llr_ll_run(&f->out, &io);
		if (r < 0)
			rc = r;
		tot += s;
		llr_norm_merge(&worst, &ne);
		if (!dtop)
			continue;
		llr_dense_backward(n, Ht, F, top + p0 * Ht, P + f->o_ow, f->dA, n, dtop + p0 * Ht, G + f->o_ow, G + f->o_ob);
		if (c->direct) {
			llr_gemm(0, 0, F, Din, n, 1.0f, f->dA, n, xp, Din, 1.0f, G + f->o_dir, Din);
			llr_gemm(1, 0, n, Din, F, 1.0f, f->dA, n, P + f->o_dir, Din, 0.0f, f->dx + p0 * Din, Din);
		}
	}
	if (nll)
		*nll = tot;
	if (norm_err)
		*norm_err = worst.err;
	return rc;
}

/* From dLoss/dtop (f->dh, N x Htop) back through the hidden layers and
 * the embeddings; f->dx holds the direct connections' share of dLoss/dx.
 * Through the last forward pass's dropout masks, if it drew them. */
static void backward(llr_ffnet *f, size_t N)
{
	const llr_ffnet_config *c = &f->cfg;
	const float *P = f->params;
	float *G = f->grads;
	int E = c->embed, H = c->hidden, Din = f->Din;
	float *d = f->dh, *t = f->dt;
	for (int l = c->layers - 1; l >= 0; l--) {
		const float *h = f->h[l], *in = !l ? f->x : f->drop ? f->hd[l - 1] : f->h[l - 1];
		int di = l ? H : Din;
		float *gb = G + f->o_b[l];
		if (f->drop) /* through the mask first: dLoss/dh_l */
			for (size_t k = 0; k < N * (size_t)H; k++)
				d[k] *= f->mh[l][k];
		for (size_t n = 0; n < N; n++)
			for (int k = 0; k < H; k++) {
				float y = h[n * H + k];
				float z = d[n * H + k] * (1.0f - y * y);
				d[n * H + k] = z;
				gb[k] += z;
			}
		llr_gemm(1, 0, di, H, (int)N, 1.0f, in, di, d, H, 1.0f, G + f->o_w[l], H);
		/* the first layer's input gradient adds to the direct one */
		float *dst = l ? t : f->dx;
		llr_gemm(0, 1, (int)N, di, H, 1.0f, d, H, P + f->o_w[l], H, l || !c->direct ? 0.0f : 1.0f, dst, di);
		float *s = d;
		d = t;
		t = s;
	}
	float *dx = c->layers ? f->dx : f->dh;
	if (f->drop)
		for (size_t k = 0; k < N * (size_t)Din; k++)
			dx[k] *= f->mx[k];
	for (int j = 0; j < f->C; j++) {
		for (size_t n = 0; n < N; n++)
			memcpy(f->xs + n * E, dx + n * Din + (size_t)j * E, (size_t)E * sizeof(float));
		llr_embed_backward(f->psi, E, f->in + (size_t)j * N, N, f->xs, G + f->o_emb, G + f->o_bos);
	}
}

int llr_ffnet_train_step(llr_ffnet *f, size_t N, const int32_t *ctx, const int32_t *target, llr_rng *rng, double *nll,
                         int64_t *ntok, llr_err *err)
{
	int rc;
	if ((rc = ensure_ws(f, N, 1, err)) < 0 || (rc = load(f, N, ctx, target, err)) < 0)
		return rc;
	int64_t cnt = 0;
	for (size_t n = 0; n < N; n++)
		cnt += f->tg[n] >= 0;
	const float *top = forward(f, N, rng);
	double s = 0;
	rc = output(f, top, N, LLR_LL_GRAD, &s, NULL, NULL, NULL, f->dh);
	if (nll)
		*nll = s;
	if (ntok)
		*ntok = cnt;
	if (rc < 0)
		return llr_err_set(err, rc, "feed-forward network: loss is not finite (%g)", s);
	backward(f, N);
	return LLR_OK;
}

int llr_ffnet_score(llr_ffnet *f, size_t N, const int32_t *ctx, const int32_t *target, float *logp, double *norm_err,
                    llr_err *err)
{
	int rc;
	if (!N)
		return LLR_OK;
	if ((rc = ensure_ws(f, N, 0, err)) < 0 || (rc = load(f, N, ctx, target, err)) < 0)
		return rc;
	rc = output(f, forward(f, N, NULL), N, LLR_LL_LOSS, NULL, logp, norm_err, NULL, NULL);
	if (rc < 0)
		return llr_err_set(err, rc, "feed-forward network: log-probability is not finite");
	return LLR_OK;
}

int llr_ffnet_dist(llr_ffnet *f, size_t N, const int32_t *ctx, float *logp_all, llr_err *err)
{
	int rc;
	if (!N)
		return LLR_OK;
	if ((rc = ensure_ws(f, N, 0, err)) < 0 || (rc = load(f, N, ctx, NULL, err)) < 0)
		return rc;
	rc = output(f, forward(f, N, NULL), N, LLR_LL_DIST, NULL, NULL, NULL, logp_all, NULL);
	if (rc < 0)
		return llr_err_set(err, rc, "feed-forward network: log-probability is not finite");
	return LLR_OK;
}
