/*
 * test_optim.c - unit tests for the optimisers (lib/nn/optim.c): first
 * updates against closed forms, several steps against an independent
 * double-precision transcription of torch.optim's rules, convergence on
 * a quadratic, state exposure and restore, gradient-norm clipping.
 */
#include "llrnn.h"
#include "test.h"

static void test_names(void)
{
	CHECK(llr_optim_parse("sgd") == LLR_OPT_SGD);
	CHECK(llr_optim_parse("rmsprop") == LLR_OPT_RMSPROP);
	CHECK(llr_optim_parse("adam") == LLR_OPT_ADAM);
	CHECK(llr_optim_parse("Adam") == 0);
	CHECK(llr_optim_parse(NULL) == 0);
	CHECK(!strcmp(llr_optim_name(LLR_OPT_ADAM), "adam"));
	llr_optim_config c;
	llr_optim_defaults(&c, LLR_OPT_RMSPROP);
	CHECK_NEAR(c.lr, 0.001, 1e-9);
	CHECK_NEAR(c.alpha, 0.99, 1e-7);
	CHECK_NEAR(c.eps, 1e-8, 1e-12);
	llr_optim_defaults(&c, 0);
	CHECK(c.kind == LLR_OPT_RMSPROP);
}

static void test_bad_config(void)
{
	llr_optim_config c;
	llr_err e = {0};
	llr_optim_defaults(&c, LLR_OPT_ADAM);
	c.lr = 0;
	CHECK(llr_optim_new(&c, 4, &e) == NULL);
	CHECK(e.code == LLR_EINVAL && strstr(e.msg, "adam: learning rate"));
	c.lr = NAN;
	CHECK(llr_optim_new(&c, 4, &e) == NULL);
	llr_optim_defaults(&c, LLR_OPT_ADAM);
	c.beta2 = 1.0f;
	CHECK(llr_optim_new(&c, 4, &e) == NULL);
	c.kind = 7;
	CHECK(llr_optim_new(&c, 4, &e) == NULL);
	CHECK(strstr(e.msg, "unknown kind") != NULL);
}

/* First update: closed forms of torch's rules. */
static void test_first_step(void)
{
	float g[3] = {0.5f, -2.0f, 0.0f};
	llr_optim_config c;

	llr_optim_defaults(&c, LLR_OPT_SGD);
	c.lr = 0.1f;
	llr_optim *o = llr_optim_new(&c, 3, NULL);
	float p[3] = {1, 1, 1};
	llr_optim_step(o, p, g);
	CHECK_NEAR(p[0], 0.95, 1e-6);
	CHECK_NEAR(p[1], 1.2, 1e-6);
	CHECK_NEAR(p[2], 1.0, 0);
	CHECK(llr_optim_n_state(o) == 0 && llr_optim_state(o, 0, NULL) == NULL);
	llr_optim_free(o);

	/* RMSprop: s = 0.01 g^2, step lr g / (0.1 |g| + eps) ~ 10 lr sign(g) */
	llr_optim_defaults(&c, LLR_OPT_RMSPROP);
	o = llr_optim_new(&c, 3, NULL);
	float q[3] = {1, 1, 1};
	llr_optim_step(o, q, g);
	CHECK_NEAR(q[0], 1 - 0.001 * 0.5 / (0.05 + 1e-8), 1e-6);
	CHECK_NEAR(q[1], 1 + 0.001 * 2.0 / (0.2 + 1e-8), 1e-6);
	CHECK_NEAR(q[2], 1.0, 0);
	const char *name;
	float *s = llr_optim_state(o, 0, &name);
	CHECK(llr_optim_n_state(o) == 1 && !strcmp(name, "sq"));
	CHECK_NEAR(s[1], 0.01 * 4.0, 1e-7);
	llr_optim_free(o);

	/* Adam: first step is lr sign(g) (up to eps) */
	llr_optim_defaults(&c, LLR_OPT_ADAM);
	c.lr = 0.01f;
	o = llr_optim_new(&c, 3, NULL);
	float r[3] = {1, 1, 1};
	llr_optim_step(o, r, g);
	CHECK_NEAR(r[0], 0.99, 1e-6);
	CHECK_NEAR(r[1], 1.01, 1e-6);
	CHECK_NEAR(r[2], 1.0, 0);
	CHECK(llr_optim_steps(o) == 1);
	CHECK(llr_optim_n_state(o) == 2);
	llr_optim_state(o, 1, &name);
	CHECK(!strcmp(name, "v"));
	llr_optim_free(o);
}

/* Reference transcriptions in double, for several steps with changing
 * gradients. */
static void ref_run(int kind, double *p, int n, int steps)
{
	double s[8] = {0}, m[8] = {0}, v[8] = {0};
	for (int t = 1; t <= steps; t++) {
		for (int i = 0; i < n; i++) {
			double g = sin(1.7 * i + 0.9 * t) + 0.3 * p[i];
			if (kind == LLR_OPT_RMSPROP) {
				s[i] = 0.99 * s[i] + 0.01 * g * g;
				p[i] -= 0.001 * g / (sqrt(s[i]) + 1e-8);
			} else {
				m[i] = 0.9 * m[i] + 0.1 * g;
				v[i] = 0.999 * v[i] + 0.001 * g * g;
				double mh = m[i] / (1 - pow(0.9, t)), vh = v[i] / (1 - pow(0.999, t));
				p[i] -= 0.001 * mh / (sqrt(vh) + 1e-8);
			}
		}
	}
}

static void test_against_reference(void)
{
	int kinds[2] = {LLR_OPT_RMSPROP, LLR_OPT_ADAM};
	for (int k = 0; k < 2; k++) {
		enum { N = 8,
		       STEPS = 50 };
		double ref[N];
		float p[N], g[N];
		for (int i = 0; i < N; i++)
			ref[i] = p[i] = 0.1f * (float)(i - 3);
		ref_run(kinds[k], ref, N, STEPS);
		llr_optim_config c;
		llr_optim_defaults(&c, kinds[k]);
		llr_optim *o = llr_optim_new(&c, N, NULL);
		for (int t = 1; t <= STEPS; t++) {
			for (int i = 0; i < N; i++)
				g[i] = (float)(sin(1.7 * i + 0.9 * t) + 0.3 * p[i]);
			llr_optim_step(o, p, g);
		}
		for (int i = 0; i < N; i++)
			CHECK_NEAR(p[i], ref[i], 2e-5);
		CHECK(llr_optim_steps(o) == STEPS);
		llr_optim_free(o);
	}
}

/* Every optimiser minimises f(p) = sum (p - i)^2 / 2. */
static void test_converges(void)
{
	for (int kind = LLR_OPT_SGD; kind <= LLR_OPT_ADAM; kind++) {
		llr_optim_config c;
		llr_optim_defaults(&c, kind);
		c.lr = kind == LLR_OPT_SGD ? 0.1f : 0.02f;
		llr_optim *o = llr_optim_new(&c, 4, NULL);
		float p[4] = {0}, g[4];
		for (int t = 0; t < 3000; t++) {
			for (int i = 0; i < 4; i++)
				g[i] = p[i] - (float)i;
			llr_optim_step(o, p, g);
		}
		for (int i = 0; i < 4; i++)
			CHECK_NEAR(p[i], i, 0.05);
		llr_optim_free(o);
	}
}

/* Saving the state and restoring it into a fresh optimiser continues the
 * run exactly. */
static void test_state_restore(void)
{
	llr_optim_config c;
	llr_optim_defaults(&c, LLR_OPT_ADAM);
	llr_optim *a = llr_optim_new(&c, 5, NULL), *b = llr_optim_new(&c, 5, NULL);
	float pa[5] = {1, 2, 3, 4, 5}, g[5];
	for (int t = 0; t < 7; t++) {
		for (int i = 0; i < 5; i++)
			g[i] = (float)cos(t + i);
		llr_optim_step(a, pa, g);
	}
	float pb[5];
	memcpy(pb, pa, sizeof pa);
	for (size_t k = 0; k < llr_optim_n_state(a); k++)
		memcpy(llr_optim_state(b, k, NULL), llr_optim_state(a, k, NULL), 5 * sizeof(float));
	llr_optim_set_steps(b, llr_optim_steps(a));
	for (int t = 7; t < 12; t++) {
		for (int i = 0; i < 5; i++)
			g[i] = (float)cos(t + i);
		llr_optim_step(a, pa, g);
		llr_optim_step(b, pb, g);
	}
	CHECK(!memcmp(pa, pb, sizeof pa));
	CHECK(llr_optim_size(b) == 5);
	llr_optim_free(a);
	llr_optim_free(b);
	llr_optim_free(NULL);
}

static void test_clip(void)
{
	float g[4] = {3, 4, 0, 0};
	CHECK_NEAR(llr_grad_norm(g, 4), 5.0, 1e-12);
	CHECK_NEAR(llr_clip_grad_norm(g, 4, 10.0), 5.0, 1e-12);
	CHECK(g[0] == 3 && g[1] == 4);
	CHECK_NEAR(llr_clip_grad_norm(g, 4, 1.0), 5.0, 1e-12);
	CHECK_NEAR(llr_grad_norm(g, 4), 1.0, 1e-5);
	CHECK_NEAR(g[0] / g[1], 0.75, 1e-6);
	float h[2] = {30, 40};
	CHECK_NEAR(llr_clip_grad_norm(h, 2, 0.0), 50.0, 1e-9);
	CHECK(h[0] == 30);
	float bad[2] = {NAN, 1};
	CHECK(isnan(llr_clip_grad_norm(bad, 2, 1.0)));
	CHECK(bad[1] == 1);
	float inf[2] = {INFINITY, 1};
	CHECK(!isfinite(llr_clip_grad_norm(inf, 2, 1.0)));
}

/* The row-sparse path (llr_optim_step_rows and the _rows gradient
 * functions) against the dense one on a gradient that is zero outside the
 * rows listed each step: the same bits in the weights, the norms and, once
 * read through llr_optim_state, the state; the rows of both blocks are
 * left unused for stretches (RMSprop's deferred decays); a restore
 * through llr_optim_set_steps mid-run changes nothing. */
static void test_rows(void)
{
	enum { N = 60,
	       STEPS = 40 };
	/* parameters 0-4 dense, 5-22 block 0 (6 x 3), 23-29 dense, 30-39
	 * block 1 (10 x 1), 40-59 dense */
	for (int kind = LLR_OPT_SGD; kind <= LLR_OPT_ADAM; kind++) {
		llr_optim_config c;
		llr_optim_defaults(&c, kind);
		c.lr = 0.01f;
		llr_err e = {0};
		llr_optim *a = llr_optim_new(&c, N, NULL), *b = llr_optim_new(&c, N, NULL);
		float pa[N], pb[N], ga[N], gb[N] = {0};
		llr_rng r;
		llr_rng_seed(&r, 3 + kind);
		for (int i = 0; i < N; i++)
			pa[i] = pb[i] = llr_rng_uniform(&r) - 0.5f;
		int same = 1, zero = 1, gaps = 0, used[6];
		for (int k = 0; k < 6; k++)
			used[k] = -1;
		for (int t = 0; t < STEPS; t++) {
			int32_t r0[6], r1[10], n0 = 0, n1 = 0;
			for (int32_t k = 0; k < 6; k++)
				if (llr_rng_uniform(&r) < (t < 20 ? 0.3 : 0.7)) {
					gaps += used[k] >= 0 && used[k] < t - 1;
					used[k] = t;
					r0[n0++] = k;
				}
			for (int32_t k = 0; k < 10; k++)
				if (k != 9 && llr_rng_uniform(&r) < 0.2) /* row 9 never */
					r1[n1++] = k;
			llr_rows blk[2] = {{5, 6, 3, r0, n0}, {30, 10, 1, r1, n1}};
			for (int i = 0; i < N; i++)
				zero &= gb[i] == 0.0f;
			memset(ga, 0, sizeof ga);
			for (int i = 0; i < N; i++) {
				int in0 = i >= 5 && i < 23, in1 = i >= 30 && i < 40, listed = !in0 && !in1;
				for (int k = 0; in0 && k < n0; k++)
					listed |= (i - 5) / 3 == r0[k];
				for (int k = 0; in1 && k < n1; k++)
					listed |= i - 30 == r1[k];
				if (listed)
					ga[i] = gb[i] = (float)sin(1.3 * i + 0.7 * t) * (t % 7 == 3 ? 40.0f : 1.0f);
			}
			float f = 1.0f / (float)(t + 3);
			for (int i = 0; i < N; i++)
				ga[i] *= f;
			llr_grad_scale_rows(gb, N, blk, 2, f);
			double na = llr_clip_grad_norm(ga, N, 5.0), nb = llr_clip_grad_norm_rows(gb, N, blk, 2, 5.0);
			same &= na == nb && llr_grad_norm_rows(gb, N, blk, 2) == llr_grad_norm(ga, N);
			llr_optim_step(a, pa, ga);
			CHECK_OK(llr_optim_step_rows(b, pb, gb, blk, 2, &e));
			llr_grad_zero_rows(gb, N, blk, 2);
			same &= !memcmp(pa, pb, sizeof pa);
			if (t == 25) { /* a restore: read the state, set the steps */
				for (size_t k = 0; k < llr_optim_n_state(b); k++)
					same &= !memcmp(llr_optim_state(a, k, NULL), llr_optim_state(b, k, NULL), N * sizeof(float));
				llr_optim_set_steps(b, llr_optim_steps(a));
			}
		}
		CHECK(same);
		CHECK(zero);
		CHECK(llr_optim_steps(a) == llr_optim_steps(b));
		for (size_t k = 0; k < llr_optim_n_state(b); k++)
			CHECK(!memcmp(llr_optim_state(a, k, NULL), llr_optim_state(b, k, NULL), N * sizeof(float)));
		CHECK(gaps > 0); /* rows used again after steps unused: deferred decays */
		if (kind == LLR_OPT_RMSPROP) {
			llr_rows other = {5, 5, 3, NULL, 0};
			CHECK(llr_optim_step_rows(b, pb, gb, &other, 1, &e) == LLR_EINVAL);
			CHECK(strstr(e.msg, "row blocks changed") != NULL);
		}
		llr_optim_free(a);
		llr_optim_free(b);
	}
}

/* The fused step (llr_grad_norm_scaled, llr_clip_coef,
 * llr_optim_step_scaled) against scaling, clipping and stepping in
 * place: the same parameters and state to the bit, the gradient left as
 * it was, the norm within double rounding. */
static void test_scaled(void)
{
	enum { N = 203 }; /* not a multiple of the 8 partial sums */
	int kinds[3] = {LLR_OPT_SGD, LLR_OPT_RMSPROP, LLR_OPT_ADAM};
	for (int q = 0; q < 3; q++) {
		llr_optim_config c;
		llr_optim_defaults(&c, kinds[q]);
		c.lr = 0.01f;
		llr_optim *a = llr_optim_new(&c, N, NULL), *b = llr_optim_new(&c, N, NULL);
		float pa[N], pb[N], ga[N], gb[N], keep[N];
		for (int i = 0; i < N; i++)
			pa[i] = pb[i] = (float)cos(0.3 * i);
		int same = 1, kept = 1, clipped = 0, near = 1;
		for (int t = 0; t < 40; t++) {
			for (int i = 0; i < N; i++)
				ga[i] = gb[i] = keep[i] = (float)sin(1.7 * i + 0.9 * t) * (t % 5 == 2 ? 300.0f : 3.0f) * (i % 13 == 4 ? 0.0f : 1.0f);
			float s = 1.0f / (float)(t % 9 + 1) / 7.0f;
			llr_grad_scale_rows(ga, N, NULL, 0, s);
			double na = llr_grad_norm(ga, N);
			CHECK_NEAR(llr_clip_grad_norm(ga, N, 5.0), na, 0.0);
			double nb = llr_grad_norm_scaled(gb, N, s);
			float coef = llr_clip_coef(nb, 5.0);
			clipped += coef < 1.0f;
			near &= fabs(na - nb) <= 1e-14 * na;
			llr_optim_step(a, pa, ga);
			llr_optim_step_scaled(b, pb, gb, s, coef);
			same &= !memcmp(pa, pb, sizeof pa);
			kept &= !memcmp(gb, keep, sizeof gb);
		}
		CHECK(same);
		CHECK(kept);
		CHECK(near);
		CHECK(clipped > 0 && clipped < 40);
		for (size_t k = 0; k < llr_optim_n_state(b); k++)
			CHECK(!memcmp(llr_optim_state(a, k, NULL), llr_optim_state(b, k, NULL), N * sizeof(float)));
		llr_optim_free(a);
		llr_optim_free(b);
	}
	CHECK(llr_clip_coef(3.0, 5.0) == 1.0f && llr_clip_coef(10.0, 0.0) == 1.0f && llr_clip_coef(NAN, 5.0) == 1.0f);
	CHECK(llr_clip_coef(10.0, 5.0) == (float)(5.0 / (10.0 + 1e-6)));
}

int main(void)
{
	PLAN(9);
	RUN(test_names);
	RUN(test_bad_config);
	RUN(test_first_step);
	RUN(test_against_reference);
	RUN(test_converges);
	RUN(test_state_restore);
	RUN(test_clip);
	RUN(test_rows);
	RUN(test_scaled);
	DONE();
}
