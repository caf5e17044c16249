/*
 * test_sample.c - unit tests of lib/nn/sample.c: greedy argmax and its ties,
 * top-k selection order, exact draws matching the distribution
 * (frequencies within a few standard deviations), temperature, top-k and
 * top-p truncation, -inf and NaN entries, option checks, reproducibility.
 */
#include "llrnn.h"
#include "test.h"

#define V 6

static const float logp_ref[V] = {-1.2f, -0.9f, -2.5f, -INFINITY, -1.6f, -3.0f};

static void probs(const float *lp, double T, double *p)
{
	double z = 0;
	for (int i = 0; i < V; i++)
		z += p[i] = isinf(lp[i]) || isnan(lp[i]) ? 0 : exp(lp[i] / T);
	for (int i = 0; i < V; i++)
		p[i] /= z;
}

/* Draw n times; check each frequency against p within 5 sigma. */
static void check_freq(llr_sampler *s, const llr_sample_opts *o, const float *lp, const double *p, int n, uint64_t seed)
{
	llr_rng r;
	llr_rng_seed(&r, seed);
	int count[V] = {0};
	for (int k = 0; k < n; k++) {
		int32_t id = llr_sample(s, o, lp, &r);
		CHECK(id >= 0 && id < V);
		if (id >= 0 && id < V)
			count[id]++;
	}
	for (int i = 0; i < V; i++) {
		double sd = sqrt(n * p[i] * (1 - p[i])) + 1e-9;
		CHECK_NEAR(count[i], n * p[i], 5 * sd + 0.5);
		if (p[i] == 0)
			CHECK(count[i] == 0);
	}
}

static void test_argmax_topk(void)
{
	float x[] = {1, 3, NAN, 3, -INFINITY, 2};
	CHECK(llr_argmax(x, 6) == 1);
	CHECK(llr_argmax(x, 0) == -1);
	float nn[] = {NAN, NAN};
	CHECK(llr_argmax(nn, 2) == -1);
	int32_t idx[6];
	CHECK(llr_top_k(x, 6, 3, idx) == 3);
	CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 5);
	CHECK(llr_top_k(x, 6, 10, idx) == 6);
	CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 5 && idx[3] == 0);
	/* NaN counts as -inf, ties by index: 2 (NaN) and 4 (-inf) -> 2 first */
	CHECK(idx[4] == 2 && idx[5] == 4);
	CHECK(llr_top_k(x, 6, 0, idx) == 0);
}

static void test_greedy(void)
{
	llr_sampler *s = llr_sampler_new(V, NULL);
	llr_sample_opts o;
	llr_sample_opts_init(&o);
	o.greedy = 1;
	llr_rng r;
	llr_rng_seed(&r, 1);
	llr_rng before = r;
	CHECK(llr_sample(s, &o, logp_ref, &r) == 1);
	CHECK(!memcmp(&before, &r, sizeof r)); /* greedy draws nothing */
	float none[V];
	for (int i = 0; i < V; i++)
		none[i] = -INFINITY;
	CHECK(llr_sample(s, &o, none, &r) == LLR_EINVAL);
	o.greedy = 0;
	CHECK(llr_sample(s, &o, none, &r) == LLR_EINVAL);
	llr_sampler_free(s);
}

static void test_exact_and_temperature(void)
{
	llr_sampler *s = llr_sampler_new(V, NULL);
	llr_sample_opts o;
	llr_sample_opts_init(&o);
	double p[V];
	probs(logp_ref, 1, p);
	check_freq(s, &o, logp_ref, p, 20000, 7);
	o.temperature = 0.5;
	probs(logp_ref, 0.5, p);
	check_freq(s, &o, logp_ref, p, 20000, 8);
	o.temperature = 3;
	probs(logp_ref, 3, p);
	check_freq(s, &o, logp_ref, p, 20000, 9);
	/* unnormalised input: same distribution */
	float shifted[V];
	for (int i = 0; i < V; i++)
		shifted[i] = logp_ref[i] + 50;
	o.temperature = 1;
	probs(logp_ref, 1, p);
	check_freq(s, &o, shifted, p, 20000, 10);
	/* NaN entries are never drawn */
	float withnan[V];
	memcpy(withnan, logp_ref, sizeof withnan);
	withnan[0] = NAN;
	probs(withnan, 1, p);
	p[0] = 0;
	double z = 0;
	for (int i = 0; i < V; i++)
		z += p[i];
	for (int i = 0; i < V; i++)
		p[i] /= z;
	check_freq(s, &o, withnan, p, 20000, 11);
	llr_sampler_free(s);
}

static void test_truncation(void)
{
	llr_sampler *s = llr_sampler_new(V, NULL);
	llr_sample_opts o;
	llr_sample_opts_init(&o);
	double p[V], q[V] = {0};
	probs(logp_ref, 1, p);
	/* top-k 2: words 1 and 0, renormalised */
	o.top_k = 2;
	q[1] = p[1] / (p[0] + p[1]);
	q[0] = p[0] / (p[0] + p[1]);
	check_freq(s, &o, logp_ref, q, 20000, 12);
	/* top-p: word 1 alone has mass p1 ~ 0.39; p = 0.3 keeps it only */
	o.top_k = 0;
	o.top_p = 0.3;
	memset(q, 0, sizeof q);
	q[1] = 1;
	check_freq(s, &o, logp_ref, q, 2000, 13);
	/* top-p 0.6: words 1 and 0 (mass ~ 0.68) */
	o.top_p = 0.6;
	q[1] = p[1] / (p[0] + p[1]);
	q[0] = p[0] / (p[0] + p[1]);
	check_freq(s, &o, logp_ref, q, 20000, 14);
	/* top-k 3 then top-p 0.99 of what is left: all three */
	o.top_k = 3;
	o.top_p = 0.99;
	double z3 = p[0] + p[1] + p[4];
	memset(q, 0, sizeof q);
	q[0] = p[0] / z3, q[1] = p[1] / z3, q[4] = p[4] / z3;
	check_freq(s, &o, logp_ref, q, 20000, 15);
	llr_sampler_free(s);
}

static void test_opts_and_seed(void)
{
	llr_sample_opts o;
	llr_sample_opts_init(&o);
	llr_err e = {0};
	CHECK(llr_sample_opts_check(&o, &e) == LLR_OK);
	o.temperature = 0;
	CHECK(llr_sample_opts_check(&o, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "temperature") != NULL);
	llr_sample_opts_init(&o);
	o.top_p = 0;
	CHECK(llr_sample_opts_check(&o, &e) == LLR_EINVAL);
	o.top_p = 1.5;
	CHECK(llr_sample_opts_check(&o, &e) == LLR_EINVAL);
	llr_sample_opts_init(&o);
	o.top_k = -1;
	CHECK(llr_sample_opts_check(&o, &e) == LLR_EINVAL);
	CHECK(llr_sampler_new(0, &e) == NULL);

	llr_sample_opts_init(&o);
	llr_sampler *s = llr_sampler_new(V, NULL);
	llr_rng a, b;
	llr_rng_seed(&a, 99);
	llr_rng_seed(&b, 99);
	int same = 1;
	for (int k = 0; k < 200; k++)
		same &= llr_sample(s, &o, logp_ref, &a) == llr_sample(s, &o, logp_ref, &b);
	CHECK(same);
	llr_sampler_free(s);
	llr_sampler_free(NULL);
}

int main(void)
{
	PLAN(5);
	RUN(test_argmax_topk);
	RUN(test_greedy);
	RUN(test_exact_and_temperature);
	RUN(test_truncation);
	RUN(test_opts_and_seed);
	DONE();
}
