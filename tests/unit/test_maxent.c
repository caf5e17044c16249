/*
 * test_maxent.c - the log-linear LM's scorer (lib/nn/maxent.c) against
 * finite differences: the bias and every weight of the hashed ring, with
 * n-gram, skip and bag features, slices that wrap around the ring and a
 * vocabulary larger than it (a slice over itself); that the gradient is
 * zero outside the chunks llr_maxent_rows lists; the same with the
 * log-linear output over word features (every weight of the second
 * ring alpha too, real-valued rows of phi, a background); that its
 * distributions sum to 1 and agree with its scores, and that the
 * log-linear output with alpha zero and a uniform background is the
 * softmax; the configurations it refuses.
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

/* A V x K phi of one to three features a word, real-valued, and a
 * background logb (V, finite): the log-linear output's. */
static llr_csr *random_phi(int32_t V, int32_t K, llr_rng *r, float *logb)
{
	for (int32_t v = 0; v < V; v++)
		logb[v] = (float)(-1 - 3 * llr_rng_uniform(r));
	return random_rows(V, K, 3, 0.3, 1, r);
}

/* K > 0: with the log-linear output over a random phi of K columns. */
static void check_config(int32_t V, uint64_t H, int order, int skip, int bag, int32_t K)
{
	llr_rng r;
	llr_rng_seed(&r, (uint64_t)(11 + V + H + 10 * order + skip + bag + 100 * K));
	llr_maxent_config c = {.vocab = V, .unk = 1, .order = order, .skip = skip, .bag = bag, .hash_size = H};
	float *logb = malloc((size_t)V * sizeof *logb);
	llr_csr *phi = K ? random_phi(V, K, &r, logb) : NULL;
	c.phi = phi;
	c.logb = K ? logb : NULL;
	size_t rings = K ? 2 : 1;
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
	if (K) {
		CHECK(np == (size_t)V + 2 * H);
		snprintf(what, sizeof what, "alpha V=%d H=%llu K=%d n=%d skip=%d bag=%d", V, (unsigned long long)H, K, order, skip, bag);
		CHECK(gradcheck(what, p + V + H, g + V + H, (size_t)H, me_loss, &k, 200, &r) == 0);
		CHECK(g_max_analytic > 1e-4);
	}
	/* nothing outside the rows listed, over both rings */
	const llr_rows *b = llr_maxent_rows(k.f);
	CHECK(b->off == (size_t)V && b->cols == LLR_ME_CHUNK && b->rows == (int32_t)(rings * H / LLR_ME_CHUNK) && b->nrow > 0);
	unsigned char *in = calloc((size_t)b->rows, 1);
	for (int32_t i = 0; i < b->nrow; i++) {
		CHECK(i == 0 || b->row[i] > b->row[i - 1]);
		in[b->row[i]] = 1;
	}
	int outside = 0, alpha_rows = 0;
	for (size_t j = 0; j < rings * H; j++)
		outside += g[V + j] != 0 && !in[j / LLR_ME_CHUNK];
	for (int32_t i = 0; i < b->nrow; i++)
		alpha_rows += b->row[i] >= (int32_t)(H / LLR_ME_CHUNK);
	CHECK(outside == 0);
	CHECK(K ? alpha_rows > 0 : alpha_rows == 0);
	CHECK(llr_maxent_rows(k.f)->nrow == 0);
	free(in);
	llr_maxent_free(k.f);
	llr_csr_free(phi);
	free(logb);
}

static void test_grad(void)
{
	check_config(13, 256, 3, 0, 0, 0);
	check_config(13, 256, 2, 4, 1, 0);
	check_config(100, 128, 4, 3, 0, 0); /* slices wrap around the ring */
	check_config(150, 128, 3, 0, 1, 0); /* a slice longer than the ring */
	check_config(20, 64, 1, 0, 1, 0);   /* the bag alone */
	/* the log-linear output over word features */
	check_config(13, 256, 3, 2, 1, 7);
	check_config(40, 128, 4, 3, 0, 90); /* alpha's slices wrap around */
	check_config(30, 64, 2, 0, 1, 150); /* a slice of alpha longer than the ring */
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

/* The log-linear output: its distributions sum to 1 and hold its
 * scores; with alpha zero and a uniform background it is the softmax of
 * the same bias and theta; alpha moves it. */
static void test_ll_dist(void)
{
	enum { V = 25, K = 6 };
	llr_rng r;
	llr_rng_seed(&r, 9);
	float logb[V], flat[V];
	llr_csr *phi = random_phi(V, K, &r, logb);
	for (int v = 0; v < V; v++)
		flat[v] = (float)-log(V);
	llr_maxent_config c = {.vocab = V, .unk = 2, .order = 3, .skip = 2, .bag = 1, .hash_size = 256, .phi = phi, .logb = logb};
	mecase k;
	setup(&k, &c, &r);
	float lp[T], all[T * V];
	llr_err e = {0};
	double ne = 1;
	CHECK(llr_maxent_score(k.f, T, k.p, lp, &ne, &e) == 0);
	CHECK(fabs(ne) < 1e-5);
	CHECK(llr_maxent_dist(k.f, T, k.p, all, &e) == 0);
	for (int n = 0; n < T; n++) {
		double s = 0;
		for (int v = 0; v < V; v++)
			s += exp(all[n * V + v]);
		CHECK_NEAR(s, 1.0, 1e-5);
		if (k.p[n].target >= 0)
			CHECK_NEAR(all[n * V + k.p[n].target], lp[n], 1e-5);
	}
	/* alpha zero, b uniform: the softmax scorer's numbers */
	llr_maxent_config sc = c;
	sc.phi = NULL;
	sc.logb = NULL;
	llr_maxent *sm = llr_maxent_new(&sc, &e);
	c.logb = flat;
	llr_maxent *ll = llr_maxent_new(&c, &e);
	CHECK(sm && ll);
	size_t ns, nl;
	float *ps = llr_maxent_params(sm, &ns), *pl = llr_maxent_params(ll, &nl);
	CHECK(nl == ns + 256);
	memcpy(ps, llr_maxent_params(k.f, NULL), ns * sizeof *ps);
	memcpy(pl, ps, ns * sizeof *pl);
	float a[T], b[T];
	CHECK(llr_maxent_score(sm, T, k.p, a, NULL, &e) == 0);
	CHECK(llr_maxent_score(ll, T, k.p, b, NULL, &e) == 0);
	for (int n = 0; n < T; n++)
		CHECK_NEAR(a[n], b[n], 1e-5);
	fill(pl + ns, nl - ns, &r, 0.5);
	CHECK(llr_maxent_score(ll, T, k.p, b, NULL, &e) == 0);
	double d = 0;
	for (int n = 0; n < T; n++)
		d += fabs(a[n] - b[n]);
	CHECK(d > 1e-2);
	llr_maxent_free(sm);
	llr_maxent_free(ll);
	llr_maxent_free(k.f);
	llr_csr_free(phi);
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
	/* the log-linear output: phi's rows are the words, a background */
	llr_rng r;
	llr_rng_seed(&r, 3);
	float logb[11];
	llr_csr *phi = random_phi(11, 4, &r, logb);
	c.order = 3;
	c.phi = phi;
	c.logb = logb;
	CHECK(llr_maxent_new(&c, &e) == NULL && strstr(e.msg, "phi is 11x4 for 10 words"));
	c.vocab = 11;
	c.logb = NULL;
	CHECK(llr_maxent_new(&c, &e) == NULL && strstr(e.msg, "no background"));
	logb[3] = NAN;
	c.logb = logb;
	CHECK(llr_maxent_new(&c, &e) == NULL && strstr(e.msg, "background of word 3"));
	logb[3] = -INFINITY; /* b = 0 is allowed */
	llr_maxent *f = llr_maxent_new(&c, &e);
	CHECK(f != NULL);
	llr_maxent_free(f);
	llr_csr_free(phi);
}

int main(void)
{
	PLAN(4);
	RUN(test_grad);
	RUN(test_dist);
	RUN(test_ll_dist);
	RUN(test_bad_config);
	DONE();
}
