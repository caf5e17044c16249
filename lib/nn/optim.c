/*
 * optim.c - first-order optimisers (SGD, RMSprop, Adam) over one flat
 * parameter array, and global gradient-norm clipping.  The update rules
 * and defaults are torch.optim's, so runs compare with the PyTorch
 * reference.  The state (moments, step count) is exposed for model files.
 * This file does not know about networks, schedules or files: train.c
 * owns the learning-rate schedule, model.c the saving.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llrnn.h"
#include "nn.h"

#define MAX_ROW_BLOCKS 8

struct llr_optim {
	llr_optim_config c;
	size_t n;
	int64_t t;     /* updates done */
	size_t nstate; /* 0, 1 or 2 buffers */
	float *buf[2]; /* each n floats, zero-initialised */
	/* llr_optim_step_rows with RMSprop: the blocks of its first call, and
	 * for each of their rows the last step its squares are up to date
	 * with (they still owe t - last decays) */
	int nb;
	llr_rows blk[MAX_ROW_BLOCKS];
	int64_t *last[MAX_ROW_BLOCKS];
};

void llr_optim_defaults(llr_optim_config *c, int kind)
{
	if (kind != LLR_OPT_SGD && kind != LLR_OPT_ADAM)
		kind = LLR_OPT_RMSPROP;
	c->kind = kind;
	c->lr = kind == LLR_OPT_SGD ? 1.0f : 0.001f;
	c->alpha = 0.99f;
	c->beta1 = 0.9f;
	c->beta2 = 0.999f;
	c->eps = 1e-8f;
}

int llr_optim_parse(const char *name)
{
	if (!name)
		return 0;
	if (!strcmp(name, "sgd"))
		return LLR_OPT_SGD;
	if (!strcmp(name, "rmsprop"))
		return LLR_OPT_RMSPROP;
	if (!strcmp(name, "adam"))
		return LLR_OPT_ADAM;
	return 0;
}

const char *llr_optim_name(int kind)
{
	switch (kind) {
	case LLR_OPT_SGD: return "sgd";
	case LLR_OPT_RMSPROP: return "rmsprop";
	case LLR_OPT_ADAM: return "adam";
	}
	return "unknown";
}

static int in_01(float x)
{
	return isfinite(x) && x >= 0.0f && x < 1.0f;
}

llr_optim *llr_optim_new(const llr_optim_config *c, size_t n, llr_err *err)
{
	if (!llr_optim_parse(llr_optim_name(c->kind))) {
		llr_err_set(err, LLR_EINVAL, "optimiser: unknown kind %d", c->kind);
		return NULL;
	}
	if (!isfinite(c->lr) || c->lr <= 0.0f) {
		llr_err_set(err, LLR_EINVAL, "%s: learning rate must be finite and > 0", llr_optim_name(c->kind));
		return NULL;
	}
	if (!in_01(c->alpha) || !in_01(c->beta1) || !in_01(c->beta2) || !isfinite(c->eps) || c->eps < 0.0f) {
		llr_err_set(err, LLR_EINVAL, "%s: decay rates must be in [0, 1) and eps >= 0", llr_optim_name(c->kind));
		return NULL;
	}
	llr_optim *o = llr_calloc(1, sizeof *o);
	if (!o) {
		llr_err_set(err, LLR_ENOMEM, "optimiser: out of memory");
		return NULL;
	}
	o->c = *c;
	o->n = n;
	o->nstate = c->kind == LLR_OPT_SGD ? 0 : c->kind == LLR_OPT_RMSPROP ? 1
	                                                                    : 2;
	for (size_t i = 0; i < o->nstate; i++) {
		o->buf[i] = llr_calloc(n ? n : 1, sizeof(float));
		if (!o->buf[i]) {
			llr_optim_free(o);
			llr_err_set(err, LLR_ENOMEM, "optimiser: out of memory for %zu parameters", n);
			return NULL;
		}
	}
	return o;
}

void llr_optim_free(llr_optim *o)
{
	if (!o)
		return;
	free(o->buf[0]);
	free(o->buf[1]);
	for (int i = 0; i < o->nb; i++)
		free(o->last[i]);
	free(o);
}

const llr_optim_config *llr_optim_cfg(const llr_optim *o)
{
	return &o->c;
}

size_t llr_optim_size(const llr_optim *o)
{
	return o->n;
}

void llr_optim_set_lr(llr_optim *o, float lr)
{
	o->c.lr = lr;
}

void llr_optim_set_eps(llr_optim *o, float eps)
{
	o->c.eps = eps;
}

int64_t llr_optim_steps(const llr_optim *o)
{
	return o->t;
}

static void catch_up(llr_optim *o);

void llr_optim_set_steps(llr_optim *o, int64_t t)
{
	catch_up(o);
	o->t = t;
	for (int i = 0; i < o->nb; i++)
		for (int32_t r = 0; r < o->blk[i].rows; r++)
			o->last[i][r] = t;
}

size_t llr_optim_n_state(const llr_optim *o)
{
	return o->nstate;
}

float *llr_optim_state(llr_optim *o, size_t i, const char **name)
{
	static const char *rms[] = {"sq"}, *adam[] = {"m", "v"};
	if (i >= o->nstate)
		return NULL;
	catch_up(o);
	if (name)
		*name = o->c.kind == LLR_OPT_RMSPROP ? rms[i] : adam[i];
	return o->buf[i];
}

/* The update loops vectorise, element by element, the same operations in
 * the same order, so the same bits as the scalar loop.  sqrtf must not
 * have to set errno for that (it is never given a negative number here):
 * the Makefile compiles this file with -fno-math-errno, which GCC's
 * optimize attribute does not apply. */
#define OPTIM_VEC LLR_CLONES LLR_VECTORIZE

/* In every step the gradient is (g[i] * s1) * s2, each product rounded
 * to float: the bits llr_grad_scale_rows by s1 then clipping by s2 would
 * leave in g, without writing them (x * 1.0f is x, so s1 = s2 = 1 is the
 * plain step). */

/* p[n] -= lr g[n] */
OPTIM_VEC static void sgd_step(float *restrict p, const float *restrict g, size_t n, float lr, float s1, float s2)
{
	for (size_t i = 0; i < n; i++)
		p[i] -= lr * (g[i] * s1 * s2);
}

/* s[n] = alpha s + (1 - alpha) g^2;  p -= lr g / (sqrt(s) + eps) */
OPTIM_VEC static void rmsprop_step(float *restrict p, const float *restrict g, float *restrict s, size_t n, float lr, float alpha, float eps,
                                   float s1, float s2)
{
	const float beta = 1.0f - alpha;
	for (size_t i = 0; i < n; i++) {
		float gi = g[i] * s1 * s2;
		s[i] = alpha * s[i] + beta * gi * gi;
		p[i] -= lr * gi / (sqrtf(s[i]) + eps);
	}
}

/* Adam with torch's bias correction, t the 1-based step. */
OPTIM_VEC static void adam_step(float *restrict p, const float *restrict g, float *restrict m, float *restrict v, size_t n, const llr_optim_config *c, int64_t t,
                                float s1, float s2)
{
	double bc1 = 1.0 - pow(c->beta1, (double)t);
	double bc2 = 1.0 - pow(c->beta2, (double)t);
	float step = (float)(c->lr / bc1);
	float rbc2 = (float)(1.0 / sqrt(bc2));
	float b1 = c->beta1, b2 = c->beta2, eps = c->eps;
	for (size_t i = 0; i < n; i++) {
		float gi = g[i] * s1 * s2;
		m[i] = b1 * m[i] + (1.0f - b1) * gi;
		v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
		p[i] -= step * m[i] / (sqrtf(v[i]) * rbc2 + eps);
	}
}

void llr_optim_step_scaled(llr_optim *o, float *params, const float *grads, float scale, float coef)
{
	catch_up(o);
	o->t++;
	switch (o->c.kind) {
	case LLR_OPT_SGD:
		sgd_step(params, grads, o->n, o->c.lr, scale, coef);
		break;
	case LLR_OPT_RMSPROP:
		rmsprop_step(params, grads, o->buf[0], o->n, o->c.lr, o->c.alpha, o->c.eps, scale, coef);
		break;
	case LLR_OPT_ADAM:
		adam_step(params, grads, o->buf[0], o->buf[1], o->n, &o->c, o->t, scale, coef);
		break;
	}
}

void llr_optim_step(llr_optim *o, float *params, const float *grads)
{
	llr_optim_step_scaled(o, params, grads, 1.0f, 1.0f);
}

double llr_grad_norm(const float *g, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += (double)g[i] * g[i];
	return sqrt(s);
}

float llr_clip_coef(double norm, double max_norm)
{
	if (max_norm <= 0.0 || !isfinite(norm))
		return 1.0f;
	double coef = max_norm / (norm + 1e-6);
	return coef < 1.0 ? (float)coef : 1.0f;
}

double llr_clip_grad_norm(float *g, size_t n, double max_norm)
{
	double norm = llr_grad_norm(g, n);
	float f = llr_clip_coef(norm, max_norm);
	if (f != 1.0f)
		for (size_t i = 0; i < n; i++)
			g[i] *= f;
	return norm;
}

#define LANES 8

/* The squares of (g[i] * s) into acc[i % LANES], in double: independent
 * sums the compiler can keep in one vector register. */
OPTIM_VEC static void sq_lanes(const float *restrict g, size_t n, float s, double *restrict acc)
{
	size_t i = 0;
	for (; i + LANES <= n; i += LANES)
		for (int k = 0; k < LANES; k++) {
			double x = (double)(g[i + k] * s);
			acc[k] += x * x;
		}
	for (; i < n; i++) {
		double x = (double)(g[i] * s);
		acc[i % LANES] += x * x;
	}
}

double llr_grad_norm_scaled(const float *g, size_t n, float scale)
{
	double acc[LANES] = {0}, sum = 0.0;
	sq_lanes(g, n, scale, acc);
	for (int k = 0; k < LANES; k++)
		sum += acc[k];
	return sqrt(sum);
}

/* ---------------------------------------------------- row-sparse steps */

/* Call f on the spans of g[n] that may be nonzero, in ascending order:
 * the parameters between blocks whole, each listed row of a block (blk
 * its block, row its row; -1 for the parameters between blocks). */
typedef void span_fn(size_t off, size_t len, int blk, int32_t row, void *ctx);

static void for_spans(size_t n, const llr_rows *b, int nb, span_fn *f, void *ctx)
{
	size_t pos = 0;
	for (int i = 0; i < nb; i++) {
		if (b[i].off > pos)
			f(pos, b[i].off - pos, -1, -1, ctx);
		for (int32_t k = 0; k < b[i].nrow; k++)
			f(b[i].off + (size_t)b[i].row[k] * (size_t)b[i].cols, (size_t)b[i].cols, i, b[i].row[k], ctx);
		pos = b[i].off + (size_t)b[i].rows * (size_t)b[i].cols;
	}
	if (n > pos)
		f(pos, n - pos, -1, -1, ctx);
}

typedef struct span_ctx {
	float *g;
	const float *cg;
	double sum;
	float f;
	llr_optim *o;
	float *p;
} span_ctx;

static void norm_span(size_t off, size_t len, int blk, int32_t row, void *ctx)
{
	span_ctx *c = ctx;
	for (size_t i = off; i < off + len; i++)
		c->sum += (double)c->cg[i] * c->cg[i];
}

double llr_grad_norm_rows(const float *g, size_t n, const llr_rows *b, int nb)
{
	span_ctx c = {.cg = g};
	for_spans(n, b, nb, norm_span, &c);
	return sqrt(c.sum);
}

static void scale_span(size_t off, size_t len, int blk, int32_t row, void *ctx)
{
	span_ctx *c = ctx;
	for (size_t i = off; i < off + len; i++)
		c->g[i] *= c->f;
}

void llr_grad_scale_rows(float *g, size_t n, const llr_rows *b, int nb, float f)
{
	span_ctx c = {.g = g, .f = f};
	for_spans(n, b, nb, scale_span, &c);
}

double llr_clip_grad_norm_rows(float *g, size_t n, const llr_rows *b, int nb, double max_norm)
{
	double norm = llr_grad_norm_rows(g, n, b, nb);
	if (max_norm <= 0.0 || !isfinite(norm))
		return norm;
	double coef = max_norm / (norm + 1e-6);
	if (coef < 1.0)
		llr_grad_scale_rows(g, n, b, nb, (float)coef);
	return norm;
}

static void zero_span(size_t off, size_t len, int blk, int32_t row, void *ctx)
{
	span_ctx *c = ctx;
	memset(c->g + off, 0, len * sizeof *c->g);
}

void llr_grad_zero_rows(float *g, size_t n, const llr_rows *b, int nb)
{
	span_ctx c = {.g = g};
	for_spans(n, b, nb, zero_span, &c);
}

/* s[n] as k steps of rmsprop_step with a zero gradient would leave it. */
static void decay(float *restrict s, size_t n, int64_t k, float alpha)
{
	const float beta = 1.0f - alpha;
	for (int64_t j = 0; j < k; j++)
		for (size_t i = 0; i < n; i++)
			s[i] = alpha * s[i] + beta * 0.0f * 0.0f;
}

/* Bring every row's squares up to date with step t. */
static void catch_up(llr_optim *o)
{
	for (int i = 0; i < o->nb; i++) {
		const llr_rows *b = &o->blk[i];
		for (int32_t r = 0; r < b->rows; r++) {
			size_t at = b->off + (size_t)r * (size_t)b->cols;
			decay(o->buf[0] + at, (size_t)b->cols, o->t - o->last[i][r], o->c.alpha);
			o->last[i][r] = o->t;
		}
	}
}

static void step_span(size_t off, size_t len, int blk, int32_t row, void *ctx)
{
	span_ctx *c = ctx;
	llr_optim *o = c->o;
	if (o->c.kind == LLR_OPT_SGD) {
		sgd_step(c->p + off, c->cg + off, len, o->c.lr, 1.0f, 1.0f);
		return;
	}
	if (blk >= 0) { /* the decays it owes from the steps before this one */
		int64_t *last = &o->last[blk][row];
		decay(o->buf[0] + off, len, o->t - 1 - *last, o->c.alpha);
		*last = o->t;
	}
	rmsprop_step(c->p + off, c->cg + off, o->buf[0] + off, len, o->c.lr, o->c.alpha, o->c.eps, 1.0f, 1.0f);
}

/* The first call's blocks, with every row up to date. */
static int set_blocks(llr_optim *o, const llr_rows *b, int nb, llr_err *err)
{
	if (nb > MAX_ROW_BLOCKS)
		return llr_err_set(err, LLR_EINVAL, "optimiser: %d row blocks, at most %d", nb, MAX_ROW_BLOCKS);
	for (int i = 0; i < nb; i++) {
		if (!(o->last[i] = llr_calloc(b[i].rows ? (size_t)b[i].rows : 1, sizeof(int64_t)))) {
			for (int j = 0; j < i; j++) {
				free(o->last[j]);
				o->last[j] = NULL;
			}
			return llr_err_set(err, LLR_ENOMEM, "optimiser: out of memory");
		}
		for (int32_t r = 0; r < b[i].rows; r++)
			o->last[i][r] = o->t;
		o->blk[i] = b[i];
		o->blk[i].row = NULL;
		o->blk[i].nrow = 0;
	}
	o->nb = nb;
	return LLR_OK;
}

int llr_optim_step_rows(llr_optim *o, float *params, const float *g, const llr_rows *b, int nb, llr_err *err)
{
	if (o->c.kind == LLR_OPT_ADAM) {
		llr_optim_step(o, params, g);
		return LLR_OK;
	}
	if (o->c.kind == LLR_OPT_RMSPROP) {
		int rc;
		if (!o->nb && nb && (rc = set_blocks(o, b, nb, err)) < 0)
			return rc;
		int same = nb == o->nb;
		for (int i = 0; same && i < nb; i++)
			same = b[i].off == o->blk[i].off && b[i].rows == o->blk[i].rows && b[i].cols == o->blk[i].cols;
		if (!same)
			return llr_err_set(err, LLR_EINVAL, "optimiser: the row blocks changed");
	}
	o->t++;
	span_ctx c = {.cg = g, .o = o, .p = params};
	for_spans(o->n, b, nb, step_span, &c);
	return LLR_OK;
}
