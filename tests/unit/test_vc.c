/*
 * test_vc.c - the variable-computation layers of vc.c, vcrnn.c and
 * vcgru.c (issue 52): the sparse forward against a dense computation in
 * double followed by the mask (with steps whose rows keep different
 * numbers of dimensions: the staircase of GEMMs), packed steps against
 * the full batch, the hard mask (lambda large) carrying the trailing
 * dimensions over bit for bit with the multiply-adds it counts, and
 * finite-difference gradient checks (gradcheck.h) of both cells, the
 * scheduler's u and b included, at lambda small and large.  Without a
 * scheduler (u NULL: the dense GRU and Elman RNN of train --cell gru|rnn)
 * the same layer against the dense computation, every dimension updated
 * (h = g bit for bit), and its gradient check.
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

enum { T = 4,
       B = 3,
       DIN = 5,
       H = 8,
       N = T * B,
       GMAX = 3 };

typedef struct vc_ctx {
	llr_vc_io io;
	float wx[DIN * GMAX * H], wh[H * GMAX * H], bx[GMAX * H], bh[GMAX * H];
	float u[DIN + H], ub[1], h0[B * H], X[N * DIN], R[N * H], Q[N];
	float m[N], e[N * H], act[N * GMAX * H], cn[N * H], g[N * H], h[N * H];
	float work[B * (2 * DIN + 3 * H + 2 * GMAX * H)];
	int k[N], order[3 * B];
} vc_ctx;

static void vc_setup(vc_ctx *c, int cell, float lambda, float eps, unsigned seed)
{
	llr_rng r;
	llr_rng_seed(&r, seed);
	memset(c, 0, sizeof *c);
	fill(c->wx, sizeof c->wx / 4, &r, 0.6);
	fill(c->wh, sizeof c->wh / 4, &r, 0.6);
	fill(c->bx, sizeof c->bx / 4, &r, 0.3);
	fill(c->bh, sizeof c->bh / 4, &r, 0.3);
	fill(c->u, DIN + H, &r, 0.8);
	fill(c->ub, 1, &r, 0.5);
	fill(c->h0, B * H, &r, 0.8);
	fill(c->X, N * DIN, &r, 1.0);
	fill(c->R, N * H, &r, 1.0);
	fill(c->Q, N, &r, 1.0);
	c->io = (llr_vc_io){.cell = cell, .T = T, .B = B, .Din = DIN, .H = H, .lambda = lambda, .eps = eps, .wx = c->wx, .wh = c->wh, .bx = c->bx, .bh = cell == LLR_VC_GRU ? c->bh : NULL, .u = c->u, .ub = c->ub, .h0 = c->h0, .m = c->m, .k = c->k, .e = c->e, .act = c->act, .cn = c->cn, .g = c->g, .h = c->h, .work = c->work, .order = c->order};
	CHECK(llr_vc_work_size(&c->io) <= sizeof c->work / sizeof *c->work);
}

static double vc_loss(void *p)
{
	vc_ctx *c = p;
	llr_vc_forward(&c->io, c->X);
	return dot_d(c->h, c->R, N * H) + dot_d(c->m, c->Q, N);
}

static double sig_d(double x)
{
	return 1 / (1 + exp(-x));
}

/* One step of one stream in double, dense: every dimension of the cell,
 * then the mask over all of them.  Returns m; writes h and k. */
static double direct_step(const vc_ctx *c, const float *x, const double *hp, double *h, int *k)
{
	int G = c->io.cell;
	double s = c->ub[0];
	for (int i = 0; i < DIN; i++)
		s += (double)c->u[i] * x[i];
	for (int j = 0; j < H; j++)
		s += (double)c->u[DIN + j] * hp[j];
	double m = c->io.u ? sig_d(s) : 1.0;
	*k = H;
	for (int j = 0; j < H; j++) {
		double a[3], cc[3];
		for (int q = 0; q < G; q++) {
			a[q] = c->bx[G * j + q];
			cc[q] = G == 3 ? c->bh[G * j + q] : 0;
			for (int i = 0; i < DIN; i++)
				a[q] += (double)x[i] * c->wx[i * G * H + G * j + q];
			for (int i = 0; i < H; i++)
				cc[q] += hp[i] * c->wh[i * G * H + G * j + q];
		}
		double g;
		if (G == 1) {
			g = tanh(a[0] + cc[0]);
		} else {
			double r = sig_d(a[0] + cc[0]), z = sig_d(a[1] + cc[1]);
			g = (1 - z) * tanh(a[2] + r * cc[2]) + z * hp[j];
		}
		double e = c->io.u ? sig_d(c->io.lambda * (m * H - (j + 1))) : 1.0;
		if (e < c->io.eps || j >= *k) {
			e = 0;
			if (j < *k)
				*k = j;
		} else if (e > 1 - c->io.eps) {
			e = 1;
		}
		h[j] = e * g + (1 - e) * hp[j];
	}
	return m;
}

/* The layer's forward (done) against direct_step, each step from the
 * layer's previous state: the largest difference of m and h, and into
 * *diffk the rows whose k differs. */
static double against_direct(const vc_ctx *c, int with_h0, int *diffk)
{
	double worst = 0;
	*diffk = 0;
	for (int b = 0; b < B; b++) {
		double hp[H], hn[H];
		for (int j = 0; j < H; j++)
			hp[j] = with_h0 ? c->h0[b * H + j] : 0;
		for (int t = 0; t < T; t++) {
			int n = t * B + b, k;
			double m = direct_step(c, c->X + n * DIN, hp, hn, &k);
			worst = fmax(worst, fabs(m - c->m[n]));
			for (int j = 0; j < H; j++) {
				worst = fmax(worst, fabs(hn[j] - c->h[n * H + j]));
				hp[j] = c->h[n * H + j];
			}
			*diffk += k != c->k[n];
		}
	}
	return worst;
}

static void forward_case(int cell, int with_h0)
{
	vc_ctx c;
	vc_setup(&c, cell, 2.0f, 0.01f, 11 + cell);
	if (!with_h0)
		c.io.h0 = NULL;
	vc_loss(&c);
	int sparse = 0, diffk;
	double worst = against_direct(&c, with_h0, &diffk);
	for (int n = 0; n < N; n++)
		sparse += c.k[n] < H;
	/* steps whose rows keep different numbers of dimensions: the
	 * staircase has more than one block there */
	int stairs = 0;
	for (int t = 0; t < T; t++)
		stairs += c.k[t * B] != c.k[t * B + 1] || c.k[t * B + 1] != c.k[t * B + 2];
	printf("#   %s: worst %.3g, %d of %d rows sparse, %d steps of several k\n", cell == LLR_VC_GRU ? "vcgru" : "vcrnn", worst, sparse, N, stairs);
	CHECK(stairs > 0);
	CHECK(worst < 1e-5);
	CHECK(diffk == 0);
	CHECK(sparse > 0);
}

static void test_forward(void)
{
	forward_case(LLR_VC_RNN, 1);
	forward_case(LLR_VC_GRU, 1);
	forward_case(LLR_VC_RNN, 0);
	forward_case(LLR_VC_GRU, 0);
}

/* Packed steps (io.rows, forward only): streams 3, 3, 2, 1 alive, the
 * states of the alive ones as in the full batch. */
static void packed_case(int cell)
{
	static const int rows[T] = {3, 3, 2, 1};
	vc_ctx full, c;
	vc_setup(&full, cell, 2.0f, 0.01f, 41 + cell);
	vc_loss(&full);
	vc_setup(&c, cell, 2.0f, 0.01f, 41 + cell);
	c.io.rows = rows;
	float Xp[N * DIN];
	int np = 0;
	for (int t = 0; t < T; t++)
		for (int b = 0; b < rows[t]; b++, np++)
			memcpy(Xp + np * DIN, full.X + (t * B + b) * DIN, sizeof(float) * DIN);
	llr_vc_forward(&c.io, Xp);
	double worst = 0;
	int badk = 0;
	for (int t = 0, p = 0; t < T; t++)
		for (int b = 0; b < rows[t]; b++, p++) {
			int n = t * B + b;
			worst = fmax(worst, fabs(c.m[p] - full.m[n]));
			badk += c.k[p] != full.k[n];
			for (int j = 0; j < H; j++)
				worst = fmax(worst, fabs(c.h[p * H + j] - full.h[n * H + j]));
		}
	CHECK(worst < 1e-6);
	CHECK(badk == 0);
	CHECK(c.io.macs < full.io.macs);
}

static void test_packed(void)
{
	packed_case(LLR_VC_RNN);
	packed_case(LLR_VC_GRU);
}

/* lambda 1e4: the mask is hard, k = floor(m D); the leading dimensions
 * are the cell's output, the trailing ones h_{t-1}'s bits. */
static void hard_case(int cell)
{
	vc_ctx c;
	vc_setup(&c, cell, 1e4f, 0.01f, 21 + cell);
	vc_loss(&c);
	int G = cell, badk = 0, badcopy = 0, badlead = 0;
	uint64_t macs = 0;
	for (int n = 0; n < N; n++) {
		const float *hp = n < B ? c.h0 + n * H : c.h + (n - B) * H;
		int k = c.k[n];
		badk += k != (int)floorf(c.m[n] * H);
		badcopy += memcmp(c.h + n * H + k, hp + k, (size_t)(H - k) * sizeof(float)) != 0;
		badlead += memcmp(c.h + n * H, c.g + n * H, (size_t)k * sizeof(float)) != 0;
		macs += (uint64_t)(DIN + H) * (uint64_t)(1 + G * k);
	}
	CHECK(badk == 0);
	CHECK(badcopy == 0);
	CHECK(badlead == 0);
	CHECK(c.io.macs == macs);
	CHECK(macs < (uint64_t)N * (DIN + H) * (1 + G * H));
	printf("#   %s: %llu multiply-adds forward, %llu dense\n", cell == LLR_VC_GRU ? "vcgru" : "vcrnn", (unsigned long long)macs, (unsigned long long)N * (DIN + H) * (1 + G * H));
}

static void test_hard_mask(void)
{
	hard_case(LLR_VC_RNN);
	hard_case(LLR_VC_GRU);
}

/* No scheduler: the dense cell, against direct_step in double; every
 * row keeps all H dimensions, h is g bit for bit, and the multiply-adds
 * are the products' only. */
static void dense_case(int cell)
{
	vc_ctx c;
	vc_setup(&c, cell, 1.0f, 0.01f, 51 + cell);
	c.io.u = c.io.ub = NULL;
	vc_loss(&c);
	int badk, badh = 0;
	double worst = against_direct(&c, 1, &badk);
	for (int n = 0; n < N; n++) {
		badk += c.k[n] != H || c.m[n] != 1.0f;
		badh += memcmp(c.h + n * H, c.g + n * H, sizeof(float) * H) != 0;
	}
	printf("#   dense %s: worst %.3g\n", cell == LLR_VC_GRU ? "gru" : "rnn", worst);
	CHECK(worst < 1e-5);
	CHECK(badk == 0);
	CHECK(badh == 0);
	CHECK(c.io.macs == (uint64_t)N * (DIN + H) * cell * H);
}

static void test_dense(void)
{
	dense_case(LLR_VC_RNN);
	dense_case(LLR_VC_GRU);
}

/* with_h0 0: the initial state is zeros (h0 NULL), and step 0 has no
 * recurrent product; dense: no scheduler (u and b not checked). */
static void grad_case(int cell, float lambda, double step, int with_h0, int dense)
{
	vc_ctx c;
	vc_setup(&c, cell, lambda, 1e-6f, 31 + cell + (int)lambda + 7 * with_h0 + 13 * dense);
	if (!with_h0)
		c.io.h0 = NULL;
	if (dense)
		c.io.u = c.io.ub = NULL;
	int G = cell;
	float dwx[DIN * GMAX * H] = {0}, dwh[H * GMAX * H] = {0}, dbx[GMAX * H] = {0}, dbh[GMAX * H] = {0};
	float du[DIN + H] = {0}, dub[1] = {0}, dh[N * H], dm[N], dX[N * DIN], dh0[B * H];
	llr_vc_grad gr = {dwx, dwh, dbx, dbh, du, dub};
	vc_loss(&c);
	int sparse = 0;
	for (int n = 0; n < N; n++)
		sparse += c.k[n] < H;
	memcpy(dh, c.R, sizeof dh);
	memcpy(dm, c.Q, sizeof dm);
	llr_vc_backward(&c.io, c.X, dh, dm, dX, dh0, &gr);
	char nm[64];
	const char *cn = dense ? (cell == LLR_VC_GRU ? "gru" : "rnn") : cell == LLR_VC_GRU ? "vcgru" : "vcrnn";
	printf("#   %s, lambda %g%s: %d of %d rows sparse\n", cn, lambda, with_h0 ? "" : " (zero h0)", sparse, N);
	if (lambda > 1)
		CHECK(dense ? sparse == 0 : sparse > 0);
	g_eps = step;
	struct {
		const char *what;
		float *p, *d;
		size_t n;
	} ps[] = {{"wx", c.wx, dwx, (size_t)DIN * G * H}, {"wh", c.wh, dwh, (size_t)H * G * H}, {"bx", c.bx, dbx, (size_t)G * H}, {"bh", c.bh, dbh, cell == LLR_VC_GRU ? (size_t)G * H : 0}, {"u", c.u, du, dense ? 0 : DIN + H}, {"b", c.ub, dub, dense ? 0 : 1}, {"X", c.X, dX, N * DIN}, {"h0", c.h0, dh0, with_h0 ? B * H : 0}};
	for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
		if (!ps[i].n)
			continue;
		snprintf(nm, sizeof nm, "%s %s lambda %g%s", cn, ps[i].what, lambda, with_h0 ? "" : " (zero h0)");
		CHECK(gradcheck(nm, ps[i].p, ps[i].d, ps[i].n, vc_loss, &c, ps[i].n, NULL) == 0);
		CHECK(g_max_analytic > 5 * ATOL);
	}
	g_eps = EPS;
}

static void test_grad_vcrnn(void)
{
	grad_case(LLR_VC_RNN, 0.1f, EPS, 1, 0);
	grad_case(LLR_VC_RNN, 5.0f, 2e-3, 1, 0);
	grad_case(LLR_VC_RNN, 5.0f, 2e-3, 0, 0);
}

static void test_grad_vcgru(void)
{
	grad_case(LLR_VC_GRU, 0.1f, EPS, 1, 0);
	grad_case(LLR_VC_GRU, 5.0f, 2e-3, 1, 0);
	grad_case(LLR_VC_GRU, 5.0f, 2e-3, 0, 0);
}

/* The dense cells: no scheduler, every dimension updated. */
static void test_grad_dense(void)
{
	grad_case(LLR_VC_RNN, 1.0f, EPS, 1, 1);
	grad_case(LLR_VC_RNN, 1.0f, EPS, 0, 1);
	grad_case(LLR_VC_GRU, 1.0f, EPS, 1, 1);
	grad_case(LLR_VC_GRU, 1.0f, EPS, 0, 1);
}

int main(void)
{
	PLAN(7);
	RUN(test_forward);
	RUN(test_packed);
	RUN(test_hard_mask);
	RUN(test_grad_vcrnn);
	RUN(test_grad_vcgru);
	RUN(test_dense);
	RUN(test_grad_dense);
	DONE();
}
