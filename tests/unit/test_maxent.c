/*
 * test_maxent.c - the log-linear LM's scorer (lib/nn/maxent.c) against
 * finite differences: the bias and every weight of the hashed ring, with
 * n-gram, skip and bag features, slices that wrap around the ring and a
 * vocabulary larger than it (a slice over itself); that the gradient is
 * zero outside the chunks llr_maxent_rows lists; that its distributions
 * sum to 1 and agree with its scores; the configurations it refuses.
 * Tolerances: gradcheck.h's (atol 2e-3, rtol 2e-2, step 1e-2).
 */
#include "llrnn.h"
#include "internal.h"
#include "test.h"
#include "gradcheck.h"

enum { T = 12 };

typedef struct mecase {
	llr_maxent *f;
	int32_t seq[T];
	llr_maxent_pos p[T];
} mecase;

static double me_loss(void *c)
{
	mecase *k = c;
	float lp[T];
	llr_err e = {0};
	CHECK(llr_maxent_score(k->f, T, k->p, lp, NULL, &e) == 0);
	double s = 0;
	for (int n = 0; n < T; n++)
		s -= lp[n];
	return s;
}

/* A sentence of T ids (one past V: <unk>), every position predicted but
 * one; the parameters random. */
static void setup(mecase *k, const llr_maxent_config *c, llr_rng *r)
{
	llr_err e = {0};
	k->f = llr_maxent_new(c, &e);
	CHECK(k->f != NULL);
	if (!k->f)
		return;
	for (int t = 0; t < T; t++)
		k->seq[t] = t == 4 ? c->vocab + 3 : (int32_t)llr_rng_below(r, (uint64_t)c->vocab);
	for (int t = 0; t < T; t++)
		k->p[t] = (llr_maxent_pos){k->seq, t, t == 5 ? -1 : t == 4 ? c->unk : k->seq[t]};
	size_t np;
	float *w = llr_maxent_params(k->f, &np);
	fill(w, np, r, 0.5);
}

static void check_config(int32_t V, uint64_t H, int order, int skip, int bag)
{
	llr_rng r;
	llr_rng_seed(&r, (uint64_t)(11 + V + H + 10 * order + skip + bag));
	llr_maxent_config c = {.vocab = V, .unk = 1, .order = order, .skip = skip, .bag = bag, .hash_size = H};
	mecase k;
	setup(&k, &c, &r);
	if (!k.f)
		return;
	size_t np;
	float *p = llr_maxent_params(k.f, &np), *g = llr_maxent_grads(k.f, NULL);
	memset(g, 0, np * sizeof *g);
	double nll = 0;
	int64_t ntok = 0;
	llr_err e = {0};
	CHECK(llr_maxent_train_step(k.f, T, k.p, &nll, &ntok, &e) == 0);
	CHECK(ntok == T - 1);
	CHECK_NEAR(nll, me_loss(&k), 1e-3);
	char what[64];
	snprintf(what, sizeof what, "bias V=%d H=%llu n=%d skip=%d bag=%d", V, (unsigned long long)H, order, skip, bag);
	CHECK(gradcheck(what, p, g, (size_t)V, me_loss, &k, 60, &r) == 0);
	CHECK(g_max_analytic > 1e-4);
	snprintf(what, sizeof what, "theta V=%d H=%llu n=%d skip=%d bag=%d", V, (unsigned long long)H, order, skip, bag);
	CHECK(gradcheck(what, p + V, g + V, (size_t)H, me_loss, &k, 200, &r) == 0);
	CHECK(g_max_analytic > 1e-4);
	/* nothing outside the rows listed */
	const llr_rows *b = llr_maxent_rows(k.f);
	CHECK(b->off == (size_t)V && b->cols == LLR_ME_CHUNK && b->rows == (int32_t)(H / LLR_ME_CHUNK) && b->nrow > 0);
	unsigned char *in = calloc((size_t)b->rows, 1);
	for (int32_t i = 0; i < b->nrow; i++) {
		CHECK(i == 0 || b->row[i] > b->row[i - 1]);
		in[b->row[i]] = 1;
	}
	int outside = 0;
	for (size_t j = 0; j < H; j++)
		outside += g[V + j] != 0 && !in[j / LLR_ME_CHUNK];
	CHECK(outside == 0);
	CHECK(llr_maxent_rows(k.f)->nrow == 0);
	free(in);
	llr_maxent_free(k.f);
}

static void test_grad(void)
{
	check_config(13, 256, 3, 0, 0);
	check_config(13, 256, 2, 4, 1);
	check_config(100, 128, 4, 3, 0); /* slices wrap around the ring */
	check_config(150, 128, 3, 0, 1); /* a slice longer than the ring */
	check_config(20, 64, 1, 0, 1);   /* the bag alone */
}

/* llr_maxent_dist's rows sum to 1 and hold llr_maxent_score's numbers;
 * the features of a position are its context's alone. */
static void test_dist(void)
{
	llr_rng r;
	llr_rng_seed(&r, 5);
	llr_maxent_config c = {.vocab = 30, .unk = 2, .order = 3, .skip = 3, .bag = 1, .hash_size = 1024};
	mecase k;
	setup(&k, &c, &r);
	float lp[T], all[T * 30];
	llr_err e = {0};
	CHECK(llr_maxent_score(k.f, T, k.p, lp, NULL, &e) == 0);
	CHECK(llr_maxent_dist(k.f, T, k.p, all, &e) == 0);
	for (int n = 0; n < T; n++) {
		double s = 0;
		for (int v = 0; v < 30; v++)
			s += exp(all[n * 30 + v]);
		CHECK_NEAR(s, 1.0, 1e-5);
		if (k.p[n].target >= 0)
			CHECK_NEAR(all[n * 30 + k.p[n].target], lp[n], 1e-5);
	}
	/* changing the target or a later word changes nothing */
	uint32_t a[64], b2[64];
	size_t na = llr_maxent_features(k.f, k.seq, 7, a);
	CHECK(na == llr_maxent_nfeat(k.f, 7) && na == 2 + 2 + 7);
	k.seq[7] = (k.seq[7] + 1) % 30;
	k.seq[9] = (k.seq[9] + 1) % 30;
	CHECK(llr_maxent_features(k.f, k.seq, 7, b2) == na && !memcmp(a, b2, na * sizeof *a));
	k.seq[6] = (k.seq[6] + 1) % 30;
	llr_maxent_features(k.f, k.seq, 7, b2);
	CHECK(memcmp(a, b2, na * sizeof *a) != 0);
	for (size_t i = 0; i < na; i++)
		CHECK(a[i] < 1024);
	llr_maxent_free(k.f);
}

static void test_bad_config(void)
{
	llr_err e = {0};
	llr_maxent_config c = {.vocab = 10, .unk = -1, .order = 1, .hash_size = 1024};
	CHECK(llr_maxent_new(&c, &e) == NULL && strstr(e.msg, "no feature"));
	c.order = 3;
	c.hash_size = 1000;
	CHECK(llr_maxent_new(&c, &e) == NULL && strstr(e.msg, "power of two"));
	c.hash_size = 32;
	CHECK(llr_maxent_new(&c, &e) == NULL);
	c.hash_size = 64;
	c.order = LLR_ME_MAX_ORDER + 1;
	CHECK(llr_maxent_new(&c, &e) == NULL);
}

int main(void)
{
	PLAN(3);
	RUN(test_grad);
	RUN(test_dist);
	RUN(test_bad_config);
	DONE();
}
