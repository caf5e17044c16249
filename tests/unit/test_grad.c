/*
 * test_grad.c - finite-difference gradient checks for every layer of the
 * network (embedding sum, LSTM, dense, log-linear and softmax outputs) and
 * for the whole net end to end, plus a check of the checker itself.
 *
 * The checker and its tolerances are in gradcheck.h; a wrong gradient (a
 * missing term, a swapped gate) is off by far more than they allow, which
 * test_checker demonstrates.
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

/* A random V x F matrix with 1..maxnnz entries per row, overlapping
 * columns, values in {1} or real when real != 0. */
static llr_csr *rand_csr(int V, int F, int maxnnz, int real, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(F);
	for (int v = 0; v < V; v++) {
		int32_t cols[16];
		float vals[16];
		int k = 1 + (int)llr_rng_below(r, (uint64_t)maxnnz);
		for (int j = 0; j < k; j++) {
			cols[j] = (int32_t)llr_rng_below(r, (uint64_t)F);
			vals[j] = real ? (float)(0.2 + 1.5 * llr_rng_uniform(r)) * (llr_rng_uniform(r) < 0.2 ? -1.0f : 1.0f) : 1.0f;
		}
		llr_csr_builder_row(b, cols, vals, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

/* ------------------------------------------------------------- checker */

typedef struct known_ctx {
	float *x;
	size_t n;
} known_ctx;

static double known_loss(void *c)
{
	known_ctx *k = c;
	double s = 0;
	for (size_t i = 0; i < k->n; i++)
		s += sin(k->x[i]) * k->x[i] * k->x[i];
	return s;
}

/* The checker accepts the true derivative of a known function and rejects
 * a slightly wrong one. */
static void test_checker(void)
{
	llr_rng r;
	llr_rng_seed(&r, 1);
	float x[20], g[20];
	fill(x, 20, &r, 2.0);
	for (int i = 0; i < 20; i++)
		g[i] = (float)(cos(x[i]) * x[i] * x[i] + 2 * sin(x[i]) * x[i]);
	known_ctx k = {x, 20};
	CHECK(gradcheck("known f", x, g, 20, known_loss, &k, 20, &r) == 0);
	g[7] *= 1.1f;
	g[12] = -g[12] - 0.1f;
	CHECK(gradcheck("known f, two wrong (expect 2 bad)", x, g, 20, known_loss, &k, 20, &r) == 2);
	/* a gradient missing the product-rule term fails almost everywhere */
	for (int i = 0; i < 20; i++)
		g[i] = (float)(cos(x[i]) * x[i] * x[i]);
	CHECK(gradcheck("known f, missing term (expect bad)", x, g, 20, known_loss, &k, 20, &r) >= 15);
}

/* ----------------------------------------------------------------- exp */

/* The vectorised exp of the LSTM and softmax loops against libm. */
static void test_vexp(void)
{
	enum { N = 4001 };
	static float x[N + 4], y[N + 4];
	for (int i = 0; i < N; i++)
		x[i] = -100.0f + 200.0f * (float)i / (N - 1);
	x[N] = -INFINITY, x[N + 1] = INFINITY, x[N + 2] = NAN, x[N + 3] = 0.0f;
	llr_vexp(y, x, N + 4);
	double worst = 0;
	int edges = 1;
	for (int i = 0; i < N; i++) {
		double ref = exp((double)x[i]);
		if (x[i] < -87.34f)
			edges &= y[i] == 0.0f;
		else if (x[i] > 88.38f)
			edges &= y[i] == INFINITY;
		else
			worst = fmax(worst, fabs(y[i] - ref) / ref);
	}
	printf("#   vexp: worst relative error %.3g\n", worst);
	CHECK(worst < 1e-6);
	CHECK(edges);
	CHECK(y[N] == 0.0f && y[N + 1] == INFINITY && isnan(y[N + 2]) && y[N + 3] == 1.0f);
}

/* --------------------------------------------------------------- dense */

typedef struct dense_ctx {
	int N, Din, F;
	float *X, *W, *c, *R, *A;
} dense_ctx;

static double dense_loss(void *p)
{
	dense_ctx *d = p;
	llr_dense_forward(d->N, d->Din, d->F, d->X, d->W, d->c, d->A, d->N + 3);
	double s = 0;
	for (int f = 0; f < d->F; f++)
		s += dot_d(d->A + (size_t)f * (d->N + 3), d->R + (size_t)f * d->N, (size_t)d->N);
	return s;
}

static void test_dense(void)
{
	llr_rng r;
	llr_rng_seed(&r, 2);
	dense_ctx d = {.N = 7, .Din = 5, .F = 6};
	int lda = d.N + 3;
	float X[35], W[30], c[6], R[42], A[60], dA[60], dW[30] = {0}, dc[6] = {0}, dX[35];
	d.X = X, d.W = W, d.c = c, d.R = R, d.A = A;
	fill(X, 35, &r, 1), fill(W, 30, &r, 1), fill(c, 6, &r, 1), fill(R, 42, &r, 1);
	for (int f = 0; f < 6; f++)
		for (int n = 0; n < lda; n++)
			dA[f * lda + n] = n < d.N ? R[f * d.N + n] : 1e30f; /* padding columns must be ignored */
	llr_dense_backward(d.N, d.Din, d.F, X, W, dA, lda, dX, dW, dc);
	/* forward against a direct sum */
	dense_loss(&d);
	double e = 0;
	for (int f = 0; f < 6; f++)
		for (int n = 0; n < 7; n++) {
			double s = c[f];
			for (int k = 0; k < 5; k++)
				s += (double)W[f * 5 + k] * X[n * 5 + k];
			e = fmax(e, fabs(s - A[f * lda + n]));
		}
	CHECK(e < 1e-5);
	CHECK(gradcheck("dense W", W, dW, 30, dense_loss, &d, 30, &r) == 0);
	CHECK(gradcheck("dense c", c, dc, 6, dense_loss, &d, 6, &r) == 0);
	CHECK(gradcheck("dense X", X, dX, 35, dense_loss, &d, 35, &r) == 0);
	/* the checker catches a wrong layer gradient */
	dW[4] += 0.1f;
	CHECK(gradcheck("dense W, corrupted (expect 1 bad)", W, dW, 30, dense_loss, &d, 30, &r) == 1);
}

/* ----------------------------------------------------------- embedding */

typedef struct embed_ctx {
	const llr_csr *psi;
	int E;
	const int32_t *in;
	size_t N;
	float *emb, *bos, *R, *X;
} embed_ctx;

static double embed_loss(void *p)
{
	embed_ctx *c = p;
	llr_embed_forward(c->psi, c->emb, c->bos, c->E, c->in, c->N, c->X);
	return dot_d(c->X, c->R, c->N * c->E);
}

static void test_embed(void)
{
	llr_rng r;
	llr_rng_seed(&r, 3);
	enum { V = 6, FI = 5, E = 4, N = 9 };
	llr_csr *psi = rand_csr(V, FI, 4, 1, &r);
	int32_t in[N] = {LLR_BOS_ID, 0, 3, 5, LLR_BOS_ID, 2, 2, 1, LLR_PAD_IN};
	float emb[FI * E], bos[E], R[N * E], X[N * E], demb[FI * E] = {0}, dbos[E] = {0};
	fill(emb, FI * E, &r, 1), fill(bos, E, &r, 1), fill(R, N * E, &r, 1);
	embed_ctx c = {psi, E, in, N, emb, bos, R, X};
	embed_loss(&c);
	/* forward: the weighted sum of feature rows */
	double e = 0;
	for (int j = 0; j < E; j++) {
		double s = 0;
		for (int32_t k = psi->indptr[3]; k < psi->indptr[4]; k++)
			s += psi->data[k] * emb[psi->indices[k] * E + j];
		e = fmax(e, fabs(s - X[2 * E + j]));
		e = fmax(e, fabs(bos[j] - X[4 * E + j]));
		e = fmax(e, fabs(X[8 * E + j]));
	}
	CHECK(e < 1e-6);
	llr_embed_backward(psi, E, in, N, R, demb, dbos);
	CHECK(gradcheck("embed table", emb, demb, FI * E, embed_loss, &c, FI * E, &r) == 0);
	CHECK(gradcheck("embed bos", bos, dbos, E, embed_loss, &c, E, &r) == 0);
	llr_csr_free(psi);
}

/* ---------------------------------------------------------------- LSTM */

typedef struct lstm_ctx {
	llr_lstm_io io;
	float *X, *R;
} lstm_ctx;

static double lstm_loss(void *p)
{
	lstm_ctx *c = p;
	llr_lstm_forward(&c->io, c->X);
	return dot_d(c->io.h, c->R, (size_t)c->io.T * c->io.B * c->io.H);
}

static void lstm_case(int with_state)
{
	llr_rng r;
	llr_rng_seed(&r, 4 + with_state);
	enum { T = 4, B = 3, D = 5, H = 4, G = 16, N = T * B };
	float wx[D * G], wh[H * G], b[G], h0[B * H], c0[B * H], X[N * D], R[N * H];
	float act[N * G], cc[N * H], tc[N * H], h[N * H];
	float dh[N * H], dz[N * G], dc[B * H], dX[N * D], dwx[D * G] = {0}, dwh[H * G] = {0}, db[G] = {0};
	fill(wx, D * G, &r, 0.5), fill(wh, H * G, &r, 0.5), fill(b, G, &r, 0.5);
	fill(h0, B * H, &r, 0.8), fill(c0, B * H, &r, 0.8), fill(X, N * D, &r, 1), fill(R, N * H, &r, 1);
	lstm_ctx c = {{.T = T, .B = B, .Din = D, .H = H, .wx = wx, .wh = wh, .b = b,
		       .h0 = with_state ? h0 : NULL, .c0 = with_state ? c0 : NULL,
		       .act = act, .c = cc, .tc = tc, .h = h},
		      X, R};
	lstm_loss(&c);
	/* forward at t = 0, b = 1, unit 2 against the formulas */
	{
		double z[4];
		for (int q = 0; q < 4; q++) {
			z[q] = b[q * H + 2];
			for (int k = 0; k < D; k++)
				z[q] += (double)X[1 * D + k] * wx[k * G + q * H + 2];
			for (int k = 0; with_state && k < H; k++)
				z[q] += (double)h0[1 * H + k] * wh[k * G + q * H + 2];
		}
		double i = 1 / (1 + exp(-z[0])), f = 1 / (1 + exp(-z[1])), o = 1 / (1 + exp(-z[2])), g = tanh(z[3]);
		double cv = f * (with_state ? c0[1 * H + 2] : 0) + i * g;
		CHECK_NEAR(h[1 * H + 2], o * tanh(cv), 1e-6);
	}
	memcpy(dh, R, sizeof dh);
	llr_lstm_backward(&c.io, X, dh, dz, dc, dX, dwx, dwh, db);
	const char *s = with_state ? " (initial state)" : "";
	char nm[64];
	snprintf(nm, sizeof nm, "lstm wx%s", s);
	CHECK(gradcheck(nm, wx, dwx, D * G, lstm_loss, &c, D * G, &r) == 0);
	snprintf(nm, sizeof nm, "lstm wh%s", s);
	CHECK(gradcheck(nm, wh, dwh, H * G, lstm_loss, &c, H * G, &r) == 0);
	snprintf(nm, sizeof nm, "lstm b%s", s);
	CHECK(gradcheck(nm, b, db, G, lstm_loss, &c, G, &r) == 0);
	snprintf(nm, sizeof nm, "lstm X%s", s);
	CHECK(gradcheck(nm, X, dX, N * D, lstm_loss, &c, N * D, &r) == 0);
}

static void test_lstm(void)
{
	lstm_case(0);
	lstm_case(1);
}

/* ------------------------------------------------- log-linear, softmax */

typedef struct ll_ctx {
	llr_ll o;
	int N, lda;
	float *A;
	const int32_t *tg;
	float *work;
	double *chunk;
} ll_ctx;

static double ll_loss(void *p)
{
	ll_ctx *c = p;
	double nll = 0;
	llr_ll_run(&c->o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = c->N, .lda = c->lda, .A = c->A, .target = c->tg, .nll = &nll, .work = c->work, .chunk = c->chunk, .threads = 1});
	return nll;
}

static void ll_case(int identity)
{
	llr_rng r;
	llr_rng_seed(&r, 10 + identity);
	int V = 9, F = identity ? 9 : 6, N = 70, lda = 75; /* a full chunk and a tail */
	llr_csr *phi = identity ? llr_csr_identity(V, NULL) : rand_csr(V, F, 4, 1, &r);
	float logb[9];
	for (int v = 0; v < V; v++)
		logb[v] = identity ? (float)-log(9.0) : (float)log(0.02 + llr_rng_uniform(&r));
	int32_t *tg = malloc(N * sizeof *tg);
	for (int n = 0; n < N; n++)
		tg[n] = n % 11 == 5 ? -1 : (int32_t)llr_rng_below(&r, (uint64_t)V);
	/* columns N..lda of dA are not written: calloc keeps them 0 */
	float *A = malloc((size_t)F * lda * sizeof *A), *dA = calloc((size_t)F * lda, sizeof *dA), *dA2 = calloc((size_t)F * lda, sizeof *dA);
	fill(A, (size_t)F * lda, &r, 1.5);
	ll_ctx c = {{V, F, phi, logb, identity, NULL, NULL, 0, NULL, NULL, 0, 0, NULL}, N, lda, A, tg, NULL, NULL};
	c.work = malloc(llr_ll_work_size(V, 2) * sizeof(float));
	c.chunk = malloc(llr_ll_chunk_size(N) * sizeof(double));
	double nll = 0, nll2 = 0;
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nll, .dA = dA, .work = c.work, .chunk = c.chunk, .threads = 1}) == LLR_OK);
	/* the loss against a direct double computation */
	double ref = 0;
	for (int n = 0; n < N; n++) {
		if (tg[n] < 0)
			continue;
		double l[9], z = 0;
		for (int v = 0; v < V; v++) {
			l[v] = logb[v];
			for (int32_t k = phi->indptr[v]; k < phi->indptr[v + 1]; k++)
				l[v] += (double)phi->data[k] * A[(size_t)phi->indices[k] * lda + n];
			z += exp(l[v]);
		}
		ref -= l[tg[n]] - log(z);
	}
	CHECK_NEAR(nll, ref, 1e-5 * fabs(ref));
	/* two threads: the same numbers */
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nll2, .dA = dA2, .work = c.work, .chunk = c.chunk, .threads = 2}) == LLR_OK);
	CHECK(nll == nll2);
	int same = 1, zero = 1;
	for (int f = 0; f < F; f++)
		for (int n = 0; n < N; n++) {
			same &= dA[f * lda + n] == dA2[f * lda + n];
			if (tg[n] < 0)
				zero &= dA[f * lda + n] == 0.0f;
		}
	CHECK(same);
	CHECK(zero);
	CHECK(gradcheck(identity ? "softmax dA" : "loglinear dA", A, dA, (size_t)F * lda, ll_loss, &c, 150, &r) == 0);
	/* the gradient is E_p[phi] - phi(target): columns of dA sum to
	 * sum_v p(v) |phi(v)| - |phi(target)|, zero for the softmax */
	if (identity) {
		double e = 0;
		for (int n = 0; n < N; n++) {
			double s = 0;
			for (int f = 0; f < F; f++)
				s += dA[f * lda + n];
			e = fmax(e, fabs(s));
		}
		CHECK(e < 1e-5);
		/* the softmax's own training pass (in dA, no scratch) against
		 * the general one with the same identity phi: the same numbers */
		llr_ll g = c.o;
		g.identity = 0;
		double nllg = 0;
		CHECK(llr_ll_run(&g, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nllg, .dA = dA2, .work = c.work, .chunk = c.chunk, .threads = 1}) == LLR_OK);
		CHECK(nllg == nll);
		same = 1;
		for (int f = 0; f < F; f++)
			for (int n = 0; n < N; n++)
				same &= dA[f * lda + n] == dA2[f * lda + n];
		CHECK(same);
	}
	free(tg), free(A), free(dA), free(dA2), free(c.work), free(c.chunk);
	llr_csr_free(phi);
}

static void test_loglinear(void)
{
	ll_case(0);
}

static void test_softmax(void)
{
	ll_case(1);
}

/* Words with identical rows of phi grouped into classes (llclass.c): the
 * pass over the classes gives the numbers of the pass over the words, and
 * its gradient is right. */
static void test_loglinear_classes(void)
{
	llr_rng r;
	llr_rng_seed(&r, 31);
	int D = 6, V = 15, F = 5, N = 70, lda = 70;
	llr_csr *base = rand_csr(D, F, 3, 1, &r);
	llr_csr_builder *bd = llr_csr_builder_new(F);
	for (int v = 0; v < V; v++) {
		int d = v < D ? v : (v * 5) % D; /* words D.. repeat earlier rows */
		int32_t a = base->indptr[d];
		llr_csr_builder_row(bd, base->indices + a, base->data + a, (size_t)(base->indptr[d + 1] - a), NULL);
	}
	llr_csr *phi = llr_csr_builder_finish(bd, NULL);
	float logb[15];
	for (int v = 0; v < V; v++)
		logb[v] = (float)log(0.01 + llr_rng_uniform(&r));
	logb[V - 1] = -INFINITY; /* a word the background rules out */
	llr_ll_classes k;
	CHECK(llr_ll_classes_build(&k, phi, logb, NULL) == LLR_OK);
	/* as many classes as distinct rows, each word in its row's class */
	int distinct = 0;
	for (int d = 0; d < D; d++) {
		int first = 1;
		for (int e = 0; e < d; e++) {
			int32_t a = base->indptr[d], b = base->indptr[e], n = base->indptr[d + 1] - a;
			if (n == base->indptr[e + 1] - b && !memcmp(base->indices + a, base->indices + b, (size_t)n * 4) &&
			    !memcmp(base->data + a, base->data + b, (size_t)n * 4))
				first = 0;
		}
		distinct += first;
	}
	CHECK(k.C == distinct && k.C < V);
	for (int v = D; v < V; v++)
		CHECK(k.of[v] == k.of[(v * 5) % D]);
	/* a class's background is its words' summed background */
	for (int c = 0; c < k.C; c++) {
		double m = 0;
		for (int v = 0; v < V; v++)
			if (k.of[v] == c)
				m += exp((double)logb[v]);
		CHECK_NEAR(exp((double)k.logB[c]), m, 1e-6 * m);
	}

	int32_t tg[70];
	for (int n = 0; n < N; n++)
		tg[n] = n % 13 == 4 ? -1 : (int32_t)llr_rng_below(&r, (uint64_t)(V - 1));
	float *A = malloc((size_t)F * lda * sizeof *A), *dA = calloc((size_t)F * lda, sizeof *dA), *dAk = calloc((size_t)F * lda, sizeof *dA);
	float lt[70], ltk[70], *all = malloc((size_t)N * V * sizeof *all), *allk = malloc((size_t)N * V * sizeof *all);
	fill(A, (size_t)F * lda, &r, 1.5);
	ll_ctx c = {{V, F, phi, logb, 0, NULL, NULL, 0, NULL, NULL, 0, 0, NULL}, N, lda, A, tg, NULL, NULL};
	ll_ctx ck = {{V, F, phi, logb, 0, &k, NULL, 0, NULL, NULL, 0, 0, NULL}, N, lda, A, tg, NULL, NULL};
	c.work = ck.work = malloc(llr_ll_work_size(V, 2) * sizeof(float));
	c.chunk = ck.chunk = malloc(llr_ll_chunk_size(N) * sizeof(double));
	double nll = 0, nllk = 0, ne = 1, nek = 1, nls = 0, nlsk = 0;
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nll, .logp_t = lt, .dA = dA, .work = c.work, .chunk = c.chunk, .threads = 1}) == LLR_OK);
	CHECK(llr_ll_run(&ck.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nllk, .logp_t = ltk, .dA = dAk, .work = ck.work, .chunk = ck.chunk, .threads = 2}) == LLR_OK);
	CHECK_NEAR(nllk, nll, 1e-5 * fabs(nll));
	double worst = 0;
	for (size_t i = 0; i < (size_t)F * lda; i++)
		worst = fmax(worst, fabs((double)dA[i] - dAk[i]));
	CHECK(worst < 1e-5);
	worst = 0;
	for (int n = 0; n < N; n++)
		worst = fmax(worst, fabs((double)lt[n] - ltk[n]));
	CHECK(worst < 1e-5);
	/* scoring (the one-pass online softmax) and the full distribution */
	CHECK(llr_ll_run(&ck.o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nlsk, .logp_t = ltk, .work = ck.work, .chunk = ck.chunk, .threads = 1}) == LLR_OK);
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nls, .work = c.work, .chunk = c.chunk, .threads = 1}) == LLR_OK);
	CHECK_NEAR(nlsk, nll, 1e-5 * fabs(nll));
	CHECK_NEAR(nls, nll, 1e-5 * fabs(nll));
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_DIST, .N = N, .lda = lda, .A = A, .norm_err = &ne, .logp_all = all, .work = c.work, .chunk = c.chunk, .threads = 1}) == LLR_OK);
	CHECK(llr_ll_run(&ck.o, &(llr_ll_io){.mode = LLR_LL_DIST, .N = N, .lda = lda, .A = A, .norm_err = &nek, .logp_all = allk, .work = ck.work, .chunk = ck.chunk, .threads = 1}) == LLR_OK);
	CHECK(fabs(ne) < 1e-5 && fabs(nek) < 1e-5);
	worst = 0;
	for (size_t i = 0; i < (size_t)N * V; i++)
		if (isfinite(all[i]) || isfinite(allk[i]))
			worst = fmax(worst, fabs((double)all[i] - allk[i]));
	CHECK(worst < 1e-5);
	CHECK(isinf(allk[V - 1]) && allk[V - 1] < 0);
	/* the target's log p in the full distribution is the scored one */
	for (int n = 0; n < N; n++)
		if (tg[n] >= 0)
			CHECK(allk[(size_t)n * V + tg[n]] == ltk[n]);
	CHECK(gradcheck("loglinear dA over classes", A, dAk, (size_t)F * lda, ll_loss, &ck, 150, &r) == 0);
	free(A), free(dA), free(dAk), free(all), free(allk), free(c.work), free(c.chunk);
	llr_ll_classes_free(&k);
	llr_csr_free(phi);
	llr_csr_free(base);
}

/* An open vocabulary's output in training (llr_net_set_open's layer):
 * V words and S signature rows past them, in Z together; a target V + s
 * (a string outside the vocabulary, by its signature) has the loss
 * -(logb[V + s] + a.phi_s - log Z) and the gradient E_p[phi] - phi_s.
 * The loss against a direct double computation, the gradient by finite
 * differences (OOV targets included), the scoring pass, and the same
 * loss through a row of its own (xphi, score's way). */
static void test_loglinear_open(void)
{
	llr_rng r;
	llr_rng_seed(&r, 53);
	int V = 7, S = 5, F = 6, N = 70, lda = 70, R = V + S;
	llr_csr *all = rand_csr(R, F, 3, 1, &r);
	float logb[12];
	for (int v = 0; v < R; v++)
		logb[v] = (float)log(0.02 + llr_rng_uniform(&r)) - (v >= V ? 1.0f : 0.0f);
	logb[V - 1] = -INFINITY; /* <unk>: out of the open output */
	llr_ll_classes k;
	CHECK(llr_ll_classes_build(&k, all, logb, NULL) == LLR_OK);
	int32_t tg[70];
	int oov = 0;
	for (int n = 0; n < N; n++) {
		tg[n] = n % 13 == 4 ? -1 : n % 3 == 0 ? V + (int32_t)llr_rng_below(&r, (uint64_t)S) : (int32_t)llr_rng_below(&r, (uint64_t)(V - 1));
		oov += tg[n] >= V;
	}
	CHECK(oov > 10);
	float *A = malloc((size_t)F * lda * sizeof *A), *dA = calloc((size_t)F * lda, sizeof *dA);
	float lt[70], lx[70];
	fill(A, (size_t)F * lda, &r, 1.5);
	ll_ctx c = {{V, F, all, logb, 0, &k, NULL, 0, NULL, NULL, S, 0, NULL}, N, lda, A, tg, NULL, NULL};
	c.work = malloc(llr_ll_work_size(R, 2) * sizeof(float));
	c.chunk = malloc(llr_ll_chunk_size(N) * sizeof(double));
	double nll = 0, nls = 0, nlx = 0;
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nll, .logp_t = lt, .dA = dA, .work = c.work, .chunk = c.chunk, .threads = 2}) == LLR_OK);
	double ref = 0, worst = 0;
	for (int n = 0; n < N; n++) {
		if (tg[n] < 0)
			continue;
		double l[12], z = 0, e[6] = {0};
		for (int v = 0; v < R; v++) {
			l[v] = logb[v];
			for (int32_t j = all->indptr[v]; j < all->indptr[v + 1]; j++)
				l[v] += (double)all->data[j] * A[(size_t)all->indices[j] * lda + n];
			z += exp(l[v]);
		}
		ref -= l[tg[n]] - log(z);
		/* E_p[phi] - phi(target), over the words and the signatures */
		for (int v = 0; v < R; v++)
			for (int32_t j = all->indptr[v]; j < all->indptr[v + 1]; j++)
				e[all->indices[j]] += exp(l[v] - log(z)) * all->data[j] - (v == tg[n] ? all->data[j] : 0.0);
		for (int f = 0; f < F; f++)
			worst = fmax(worst, fabs(e[f] - dA[(size_t)f * lda + n]));
	}
	CHECK_NEAR(nll, ref, 1e-5 * fabs(ref));
	CHECK(worst < 1e-5);
	CHECK(gradcheck("open loglinear dA", A, dA, (size_t)F * lda, ll_loss, &c, 200, &r) == 0);
	CHECK(g_max_analytic > 0.1);
	/* the scoring pass gives the training loss */
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = lda, .A = A, .target = tg, .nll = &nls, .work = c.work, .chunk = c.chunk, .threads = 1}) == LLR_OK);
	CHECK_NEAR(nls, nll, 1e-5 * fabs(nll));
	/* a target's own row (xphi) equal to its signature's, with the
	 * signature's log background: the same log p */
	llr_csr_builder *b = llr_csr_builder_new(F);
	int32_t tx[70];
	float xl[70];
	int nx = 0;
	for (int n = 0; n < N; n++) {
		tx[n] = tg[n];
		if (tg[n] < V)
			continue;
		int32_t a = all->indptr[tg[n]];
		llr_csr_builder_row(b, all->indices + a, all->data + a, (size_t)(all->indptr[tg[n] + 1] - a), NULL);
		xl[nx] = logb[tg[n]];
		tx[n] = V + nx++;
	}
	llr_csr *xphi = llr_csr_builder_finish(b, NULL);
	CHECK(llr_ll_run(&c.o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = lda, .A = A, .target = tx, .nll = &nlx, .logp_t = lx, .work = c.work, .chunk = c.chunk, .threads = 1, .xphi = xphi, .xlogb = xl}) == LLR_OK);
	CHECK_NEAR(nlx, nll, 1e-5 * fabs(nll));
	for (int n = 0; n < N; n++)
		CHECK_NEAR(lx[n], lt[n], 1e-4);
	llr_csr_free(xphi);
	free(A), free(dA), free(c.work), free(c.chunk);
	llr_ll_classes_free(&k);
	llr_csr_free(all);
}

/* The scoring pass (online softmax over blocks of 64 rows) across many
 * blocks, the first ones ruled out entirely by the background: the same
 * loss as the training pass, with and without classes. */
static void test_loglinear_blocks(void)
{
	llr_rng r;
	llr_rng_seed(&r, 47);
	int V = 500, F = 12, N = 130, lda = 130;
	llr_csr *phi = rand_csr(V, F, 3, 0, &r);
	float *logb = malloc((size_t)V * sizeof *logb);
	for (int v = 0; v < V; v++)
		logb[v] = (float)log(0.01 + llr_rng_uniform(&r));
	llr_ll_classes k;
	CHECK(llr_ll_classes_build(&k, phi, logb, NULL) == LLR_OK);
	CHECK(k.C > 2 * 64 && k.C < V); /* several blocks of classes */
	int C0 = k.C;
	/* rule out every word of the first 70 classes, then regroup */
	for (int v = 0; v < V; v++)
		if (k.of[v] < 70)
			logb[v] = -INFINITY;
	llr_ll_classes_free(&k);
	CHECK(llr_ll_classes_build(&k, phi, logb, NULL) == LLR_OK);
	CHECK(k.C == C0);
	int32_t *tg = malloc((size_t)N * sizeof *tg);
	for (int n = 0; n < N; n++) {
		do
			tg[n] = (int32_t)llr_rng_below(&r, (uint64_t)V);
		while (!isfinite(logb[tg[n]]));
		if (n % 17 == 3)
			tg[n] = -1;
	}
	float *A = malloc((size_t)F * lda * sizeof *A), *dA = calloc((size_t)F * lda, sizeof *dA);
	fill(A, (size_t)F * lda, &r, 2.0);
	float *work = malloc(llr_ll_work_size(V, 3) * sizeof(float));
	double *chunk = malloc(llr_ll_chunk_size(N) * sizeof(double));
	llr_ll o = {V, F, phi, logb, 0, NULL, NULL, 0, NULL, NULL, 0, 0, NULL}, ok = {V, F, phi, logb, 0, &k, NULL, 0, NULL, NULL, 0, 0, NULL};
	double train = 0, plain = 0, cls = 0, cls3 = 0;
	CHECK(llr_ll_run(&o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = N, .lda = lda, .A = A, .target = tg, .nll = &train, .dA = dA, .work = work, .chunk = chunk, .threads = 1}) == LLR_OK);
	CHECK(llr_ll_run(&o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = lda, .A = A, .target = tg, .nll = &plain, .work = work, .chunk = chunk, .threads = 1}) == LLR_OK);
	CHECK(llr_ll_run(&ok, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = lda, .A = A, .target = tg, .nll = &cls, .work = work, .chunk = chunk, .threads = 1}) == LLR_OK);
	CHECK(llr_ll_run(&ok, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = N, .lda = lda, .A = A, .target = tg, .nll = &cls3, .work = work, .chunk = chunk, .threads = 3}) == LLR_OK);
	CHECK(isfinite(train));
	CHECK_NEAR(plain, train, 1e-5 * fabs(train));
	CHECK_NEAR(cls, train, 1e-5 * fabs(train));
	CHECK(cls3 == cls);
	free(tg), free(A), free(dA), free(work), free(chunk), free(logb);
	llr_ll_classes_free(&k);
	llr_csr_free(phi);
}

/* ------------------------------------------------------ the whole net */

typedef struct net_ctx {
	llr_net *net;
	llr_batch bt;
	uint64_t seed; /* dropout masks: the same for every evaluation */
} net_ctx;

static double net_loss(void *p)
{
	net_ctx *c = p;
	llr_rng r;
	llr_rng_seed(&r, c->seed);
	double nll = 0;
	int64_t nt = 0;
	if (llr_net_train_step(c->net, &c->bt, c->seed ? &r : NULL, &nll, &nt, NULL) != LLR_OK)
		return NAN;
	return nll;
}

/* Tensor i of the net: its name, its offset in the parameters, its size. */
static size_t tensor_span(llr_net *net, size_t i, const char **name, size_t *off)
{
	int nd;
	int64_t sh[2];
	llr_net_tensor_info(net, i, name, &nd, sh, off);
	return (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
}

static void net_case(float dropout, int own_psi, int cell)
{
	llr_rng r;
	llr_rng_seed(&r, 20);
	enum { V = 9, F = 6, FI = 7, B = 3, T = 5 };
	llr_csr *phi = rand_csr(V, F, 4, 0, &r);
	llr_csr *psi = own_psi ? rand_csr(V, FI, 3, 1, &r) : NULL;
	float logb[V];
	for (int v = 0; v < V; v++)
		logb[v] = (float)log(0.02 + llr_rng_uniform(&r));
	llr_net_config cf = {.vocab = V, .feat_out = F, .feat_in = own_psi ? FI : F, .embed = 4, .hidden = 5, .layers = 2, .dropout = dropout, .output = LLR_OUT_LOGLINEAR};
	if (cell != LLR_CELL_LSTM) /* one layer; a VC cell's mask soft (most dimensions kept, partly) */
		cf.cell = cell, cf.layers = 1, cf.vc_lambda = 0.5f;
	llr_err e = {0};
	llr_net *net = llr_net_new(&cf, phi, psi, logb, &e);
	CHECK(net != NULL);
	if (!net) {
		printf("#   %s\n", e.msg);
		return;
	}
	llr_net_init(net, &r);
	size_t np;
	float *P = llr_net_params(net, &np);
	fill(P, np, &r, 0.5); /* larger weights than init: more signal */
	/* three sentences of lengths 5, 3, 2 (with </s>), padded */
	int32_t in[T * B], tg[T * B];
	int len[B] = {5, 3, 2};
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			in[t * B + b] = t == 0 ? LLR_BOS_ID : (t < len[b] ? (int32_t)llr_rng_below(&r, V) : 0);
			tg[t * B + b] = t < len[b] ? (int32_t)llr_rng_below(&r, V) : -1;
		}
	net_ctx c = {net, {.B = B, .T = T, .input = in, .target = tg}, dropout > 0 ? 77 : 0};
	float *G = llr_net_grads(net, NULL);
	memset(G, 0, np * sizeof *G);
	net_loss(&c);
	float *g = malloc(np * sizeof *g);
	memcpy(g, G, np * sizeof *g);
	for (size_t i = 0; i < llr_net_n_tensors(net); i++) {
		const char *name;
		size_t off, n = tensor_span(net, i, &name, &off);
		char nm[64];
		snprintf(nm, sizeof nm, "net%s%s%s%s %s", dropout > 0 ? " dropout" : "", own_psi ? " psi" : "", cell ? " " : "", cell ? llr_cell_name(cell) : "", name);
		CHECK(gradcheck(nm, P + off, g + off, n, net_loss, &c, 40, &r) == 0);
		/* every component too, and they carry signal well above the
		 * tolerance (5 * ATOL: layer 0's wh under a real-valued psi
		 * peaks near 0.018 in this small net) */
		strncat(nm, " (all)", sizeof nm - strlen(nm) - 1);
		CHECK(gradcheck(nm, P + off, g + off, n, net_loss, &c, n, &r) == 0);
		if (!(g_max_analytic > 5 * ATOL))
			printf("#   %s: max |analytic| %.3g, not above 5 * atol\n", nm, g_max_analytic);
		CHECK(g_max_analytic > 5 * ATOL);
		/* a zeroed gradient for this tensor is caught */
		float *zero = calloc(n, sizeof *zero);
		strncat(nm, ", zeroed (expect bad)", sizeof nm - strlen(nm) - 1);
		g_quiet = 1;
		CHECK(zero && gradcheck(nm, P + off, zero, n, net_loss, &c, n, &r) > 0);
		g_quiet = 0;
		free(zero);
	}
	/* negative control: one corrupted component of the smallest tensor
	 * (checked whole) is caught, and only that one */
	size_t best_n = 0, best_off = 0;
	for (size_t i = 0; i < llr_net_n_tensors(net); i++) {
		const char *name;
		size_t off, n = tensor_span(net, i, &name, &off);
		if (i == 0 || n < best_n)
			best_n = n, best_off = off;
	}
	g[best_off + best_n / 2] += 1.0f;
	CHECK(gradcheck("net, corrupted (expect 1 bad)", P + best_off, g + best_off, best_n, net_loss, &c, best_n, &r) == 1);
	free(g);
	llr_net_free(net);
	llr_csr_free(phi);
	llr_csr_free(psi);
}

static void test_net(void)
{
	net_case(0.0f, 0, LLR_CELL_LSTM);
	net_case(0.0f, 1, LLR_CELL_LSTM);
}

static void test_net_dropout(void)
{
	net_case(0.4f, 1, LLR_CELL_LSTM);
}

/* The net with a variable-computation cell (issue 52): its tensors
 * through the output layer and the embedding. */
static void test_net_vc(void)
{
	net_case(0.0f, 1, LLR_CELL_VCRNN);
	net_case(0.0f, 0, LLR_CELL_VCGRU);
}

/* The net with the dense GRU and Elman RNN (the VC layer without its
 * scheduler): no vc0/u or vc0/ub among its tensors, each one checked. */
static void test_net_dense(void)
{
	for (int cell = LLR_CELL_GRU; cell <= LLR_CELL_RNN; cell++) {
		net_case(0.0f, 1, cell);
		llr_net_config cf = {.vocab = 5, .embed = 3, .hidden = 4, .layers = 1, .output = LLR_OUT_SOFTMAX, .cell = cell};
		llr_net *net = llr_net_new(&cf, NULL, NULL, NULL, NULL);
		CHECK(net != NULL);
		int sched = 0;
		for (size_t i = 0; net && i < llr_net_n_tensors(net); i++) {
			const char *name;
			size_t off;
			tensor_span(net, i, &name, &off);
			sched += strstr(name, "/u") != NULL || strncmp(name, "vc0", 3) == 0;
		}
		CHECK(sched == 0);
		llr_net_free(net);
	}
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(15);
	RUN(test_checker);
	RUN(test_vexp);
	RUN(test_dense);
	RUN(test_embed);
	RUN(test_lstm);
	RUN(test_loglinear);
	RUN(test_softmax);
	RUN(test_loglinear_classes);
	RUN(test_loglinear_open);
	RUN(test_loglinear_blocks);
	RUN(test_net);
	RUN(test_net_dropout);
	RUN(test_net_vc);
	RUN(test_net_dense);
	llr_blas_set_threads(2);
	RUN(test_net);
	DONE();
}
