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

struct llr_optim {
	llr_optim_config c;
	size_t n;
	int64_t t;      /* updates done */
	size_t nstate;  /* 0, 1 or 2 buffers */
	float *buf[2];  /* each n floats, zero-initialised */
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
	o->nstate = c->kind == LLR_OPT_SGD ? 0 : c->kind == LLR_OPT_RMSPROP ? 1 : 2;
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

int64_t llr_optim_steps(const llr_optim *o)
{
	return o->t;
}

void llr_optim_set_steps(llr_optim *o, int64_t t)
{
	o->t = t;
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
	if (name)
		*name = o->c.kind == LLR_OPT_RMSPROP ? rms[i] : adam[i];
	return o->buf[i];
}

/* p[n] -= lr g[n] */
static void sgd_step(float *restrict p, const float *restrict g, size_t n, float lr)
{
	for (size_t i = 0; i < n; i++)
		p[i] -= lr * g[i];
}

/* s[n] = alpha s + (1 - alpha) g^2;  p -= lr g / (sqrt(s) + eps) */
static void rmsprop_step(float *restrict p, const float *restrict g, float *restrict s, size_t n, float lr, float alpha, float eps)
{
	const float beta = 1.0f - alpha;
	for (size_t i = 0; i < n; i++) {
		s[i] = alpha * s[i] + beta * g[i] * g[i];
		p[i] -= lr * g[i] / (sqrtf(s[i]) + eps);
	}
}

/* Adam with torch's bias correction, t the 1-based step. */
static void adam_step(float *restrict p, const float *restrict g, float *restrict m, float *restrict v, size_t n, const llr_optim_config *c, int64_t t)
{
	double bc1 = 1.0 - pow(c->beta1, (double)t);
	double bc2 = 1.0 - pow(c->beta2, (double)t);
	float step = (float)(c->lr / bc1);
	float rbc2 = (float)(1.0 / sqrt(bc2));
	float b1 = c->beta1, b2 = c->beta2, eps = c->eps;
	for (size_t i = 0; i < n; i++) {
		m[i] = b1 * m[i] + (1.0f - b1) * g[i];
		v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
		p[i] -= step * m[i] / (sqrtf(v[i]) * rbc2 + eps);
	}
}

void llr_optim_step(llr_optim *o, float *params, const float *grads)
{
	o->t++;
	switch (o->c.kind) {
	case LLR_OPT_SGD:
		sgd_step(params, grads, o->n, o->c.lr);
		break;
	case LLR_OPT_RMSPROP:
		rmsprop_step(params, grads, o->buf[0], o->n, o->c.lr, o->c.alpha, o->c.eps);
		break;
	case LLR_OPT_ADAM:
		adam_step(params, grads, o->buf[0], o->buf[1], o->n, &o->c, o->t);
		break;
	}
}

double llr_grad_norm(const float *g, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += (double)g[i] * g[i];
	return sqrt(s);
}

double llr_clip_grad_norm(float *g, size_t n, double max_norm)
{
	double norm = llr_grad_norm(g, n);
	if (max_norm <= 0.0 || !isfinite(norm))
		return norm;
	double coef = max_norm / (norm + 1e-6);
	if (coef < 1.0) {
		float f = (float)coef;
		for (size_t i = 0; i < n; i++)
			g[i] *= f;
	}
	return norm;
}
