/*
 * test_senc.c - the sentence encoders of sentenc.c and the GRU of gru.c:
 * the GRU against a direct step-by-step computation, packing (an encoding
 * does not depend on the batch it is in), the reverse direction, CBOW as a
 * sum, and finite-difference gradient checks (gradcheck.h) of the GRU and
 * of every encoder under every head, and of NEXT's in-batch negatives,
 * whose loss is checked against a direct computation.
 */
#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

static float sig(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* ------------------------------------------------------------------ GRU */

enum { GT = 4,
       GDIN = 3,
       GH = 5 };
static const int grows[GT] = {3, 3, 2, 1}; /* lengths 4, 3, 2 */
#define GN 9

typedef struct gru_ctx {
	float wx[GDIN * 3 * GH], wh[GH * 3 * GH], bx[3 * GH], bh[3 * GH];
	float X[GN * GDIN], R[GN * GH];
	float a[GN * 3 * GH], c[GN * 3 * GH], g[GN * 3 * GH], h[GN * GH];
} gru_ctx;

static llr_gru_io gru_io(gru_ctx *x)
{
	llr_gru_io io = {.T = GT, .Din = GDIN, .H = GH, .rows = grows, .wx = x->wx, .wh = x->wh, .bx = x->bx, .bh = x->bh, .a = x->a, .c = x->c, .g = x->g, .h = x->h};
	return io;
}

static double gru_loss(void *p)
{
	gru_ctx *x = p;
	llr_gru_io io = gru_io(x);
	llr_gru_forward(&io, x->X);
	return dot_d(x->h, x->R, GN * GH);
}

static void test_gru(void)
{
	llr_rng r;
	llr_rng_seed(&r, 3);
	gru_ctx x;
	fill(x.wx, sizeof x.wx / 4, &r, 0.6);
	fill(x.wh, sizeof x.wh / 4, &r, 0.6);
	fill(x.bx, sizeof x.bx / 4, &r, 0.3);
	fill(x.bh, sizeof x.bh / 4, &r, 0.3);
	fill(x.X, sizeof x.X / 4, &r, 1.0);
	fill(x.R, sizeof x.R / 4, &r, 1.0);
	gru_loss(&x);
	/* direct: sequence b, step t at packed row off_t + b */
	double worst = 0;
	for (int b = 0; b < 3; b++) {
		float hp[GH] = {0}, hn[GH];
		for (int t = 0, off = 0; t < GT && b < grows[t]; off += grows[t], t++) {
			const float *xt = x.X + (off + b) * GDIN;
			for (int j = 0; j < GH; j++) {
				float a[3], c[3];
				for (int q = 0; q < 3; q++) {
					a[q] = x.bx[q * GH + j];
					c[q] = x.bh[q * GH + j];
					for (int i = 0; i < GDIN; i++)
						a[q] += xt[i] * x.wx[i * 3 * GH + q * GH + j];
					for (int i = 0; i < GH; i++)
						c[q] += hp[i] * x.wh[i * 3 * GH + q * GH + j];
				}
				float rr = sig(a[0] + c[0]), z = sig(a[1] + c[1]), n = tanhf(a[2] + rr * c[2]);
				hn[j] = (1 - z) * n + z * hp[j];
			}
			for (int j = 0; j < GH; j++) {
				worst = fmax(worst, fabs(hn[j] - x.h[(off + b) * GH + j]));
				hp[j] = hn[j];
			}
		}
	}
	CHECK(worst < 1e-5);
	float dwx[sizeof x.wx / 4] = {0}, dwh[sizeof x.wh / 4] = {0}, dbx[3 * GH] = {0}, dbh[3 * GH] = {0};
	float dh[GN * GH], da[GN * 3 * GH], dc[GN * 3 * GH], dX[GN * GDIN];
	memcpy(dh, x.R, sizeof dh);
	llr_gru_io io = gru_io(&x);
	llr_gru_backward(&io, x.X, dh, da, dc, dX, dwx, dwh, dbx, dbh);
	CHECK(gradcheck("gru wx", x.wx, dwx, sizeof dwx / 4, gru_loss, &x, 1000, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	CHECK(gradcheck("gru wh", x.wh, dwh, sizeof dwh / 4, gru_loss, &x, 1000, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	CHECK(gradcheck("gru bx", x.bx, dbx, 3 * GH, gru_loss, &x, 1000, &r) == 0);
	CHECK(gradcheck("gru bh", x.bh, dbh, 3 * GH, gru_loss, &x, 1000, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	CHECK(gradcheck("gru X", x.X, dX, GN * GDIN, gru_loss, &x, 1000, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
}

/* ------------------------------------------------------------- encoders */

enum { V = 11,
       E = 4,
       H = 3,
       NCONJ = 3 };

/* 9 sentences of lengths 0..8-ish over the V words */
static const int32_t sids[] = {1, 2, 3, 4, 5, /**/ 6, 7, /**/ 8, 9, 10, 1, 2, 3, 4, /**/ 5, /**/ 6, 6, 7, /**/ 10, 9, 8, 7, /**/ 2, 4, 6, /**/ 3, 5, 7, 9, 1, /**/ 0, 1, /**/ 4, 4, 4, 4, 4, 4};
static const size_t soff[] = {0, 5, 7, 14, 15, 18, 22, 25, 30, 32, 38};
#define NS 10

static float g_dropout, g_word_dropout; /* of the encoders enc_new makes */
static int g_wide;                      /* check_case: NEXT's in-batch negatives */

static llr_senc *enc_new(int kind, int tasks, llr_csr **psi, uint64_t seed)
{
	llr_err e = {0};
	*psi = llr_csr_identity(V, &e);
	llr_senc_config c = {.encoder = kind, .E = E, .H = H, .tasks = tasks, .n_conj = NCONJ, .dropout = g_dropout, .word_dropout = g_word_dropout};
	llr_senc *s = llr_senc_new(&c, *psi, &e);
	CHECK(s != NULL);
	llr_rng r;
	llr_rng_seed(&r, seed);
	if (s)
		llr_senc_init(s, &r);
	return s;
}

static void test_encode(void)
{
	llr_csr *psi;
	llr_err e = {0};
	/* CBOW: the sum of the rows of emb */
	llr_senc *s = enc_new(LLR_SENC_CBOW, LLR_TASK_ORDER, &psi, 1);
	CHECK(llr_senc_dim(s) == E);
	float out[NS * 2 * H + NS * E];
	CHECK_OK(llr_senc_encode(s, sids, soff, NS, out, &e));
	const float *emb = llr_senc_params(s);
	double worst = 0;
	for (int i = 0; i < NS; i++)
		for (int j = 0; j < E; j++) {
			double want = 0;
			for (size_t p = soff[i]; p < soff[i + 1]; p++)
				want += emb[sids[p] * E + j];
			worst = fmax(worst, fabs(want - out[i * E + j]));
		}
	CHECK(worst < 1e-6);
	llr_senc_free(s);
	llr_csr_free(psi);

	/* BiGRU: one sentence alone encodes as in the batch (packing, sort) */
	s = enc_new(LLR_SENC_BIGRU, LLR_TASK_ALL, &psi, 2);
	int D = llr_senc_dim(s);
	CHECK(D == 2 * H);
	CHECK_OK(llr_senc_encode(s, sids, soff, NS, out, &e));
	worst = 0;
	for (int i = 0; i < NS; i++) {
		float one[2 * H];
		size_t o1[2] = {soff[i], soff[i + 1]};
		CHECK_OK(llr_senc_encode(s, sids, o1, 1, one, &e));
		for (int j = 0; j < D; j++)
			worst = fmax(worst, fabs(one[j] - out[i * D + j]));
	}
	CHECK(worst < 1e-6);
	/* an empty sentence encodes as 0 */
	size_t o0[2] = {3, 3};
	float zero[2 * H];
	CHECK_OK(llr_senc_encode(s, sids, o0, 1, zero, &e));
	for (int j = 0; j < D; j++)
		CHECK(zero[j] == 0.0f);
	/* the reverse half is a forward GRU with the gru_rev weights over
	 * the reversed sentence */
	llr_senc_config c1 = {.encoder = LLR_SENC_GRU, .E = E, .H = H, .tasks = LLR_TASK_ORDER};
	llr_senc *f = llr_senc_new(&c1, psi, &e);
	CHECK(f != NULL);
	int64_t sh[2], sh2[2];
	const char *nm, *nm2;
	for (int t = 0; t < llr_senc_n_tensors(); t++) {
		size_t of = llr_senc_tensor(f, t, &nm, sh);
		if (!strncmp(nm, "gru_rev/", 8) || !strncmp(nm, "order", 5) || sh[0] == 0)
			continue;
		/* emb from s, gru tensors from gru_rev ones */
		char want[32];
		snprintf(want, sizeof want, "%s%s", strncmp(nm, "gru/", 4) ? "" : "gru_rev/", strncmp(nm, "gru/", 4) ? nm : nm + 4);
		for (int u = 0; u < llr_senc_n_tensors(); u++) {
			size_t os = llr_senc_tensor(s, u, &nm2, sh2);
			if (!strcmp(nm2, want))
				memcpy(llr_senc_params(f) + of, llr_senc_params(s) + os, (size_t)(sh[0] * sh[1]) * sizeof(float));
		}
	}
	int32_t rev[8];
	worst = 0;
	for (int i = 0; i < NS; i++) {
		size_t L = soff[i + 1] - soff[i], o1[2] = {0, L};
		for (size_t k = 0; k < L; k++)
			rev[k] = sids[soff[i] + L - 1 - k];
		float one[H];
		CHECK_OK(llr_senc_encode(f, rev, o1, 1, one, &e));
		for (int j = 0; j < H; j++)
			worst = fmax(worst, fabs(one[j] - out[i * D + H + j]));
	}
	CHECK(worst < 1e-6);
	/* max-pooling: the encoding of a longer prefix is nowhere smaller,
	 * and somewhere larger */
	{
		float prev[2 * H], cur[2 * H];
		int grew = 0;
		llr_rng r;
		llr_rng_seed(&r, 5);
		fill(llr_senc_params(s), llr_senc_n_params(s), &r, 1.0); /* varied states */
		for (size_t i = 0, k = 1; i < NS; k = soff[i] + k < soff[i + 1] ? k + 1 : (i++, 1)) {
			if (soff[i] + k > soff[i + 1])
				continue;
			size_t o1[2] = {soff[i], soff[i] + k};
			CHECK_OK(llr_senc_encode(s, sids, o1, 1, cur, &e));
			for (int j = 0; k > 1 && j < H; j++) {
				CHECK(cur[j] >= prev[j]);
				grew += cur[j] > prev[j];
			}
			memcpy(prev, cur, sizeof cur);
		}
		CHECK(grew > 0);
	}
	llr_senc_free(f);
	llr_senc_free(s);
	llr_csr_free(psi);
	/* bad configurations */
	llr_senc_config bad = {.encoder = 9, .E = E, .H = H, .tasks = 1};
	CHECK(llr_senc_new(&bad, psi, &e) == NULL);
	CHECK(llr_senc_encoder_parse("bigru") == LLR_SENC_BIGRU && llr_senc_encoder_parse("lstm") == 0);
}

/* ------------------------------------------------------ gradient checks */

typedef struct run_ctx {
	llr_senc *s;
	llr_senc_batch b;
	uint64_t drop_seed; /* with dropout: every pass draws the same masks */
	int train;          /* a training pass even without dropout (in-batch negatives) */
} run_ctx;

static double run_loss(void *p)
{
	run_ctx *x = p;
	llr_err e = {0};
	double l = 0;
	if (x->drop_seed) { /* dropout applies in training passes only */
		llr_rng r;
		llr_rng_seed(&r, x->drop_seed);
		llr_senc_batch b = x->b;
		b.rng = &r;
		llr_senc_run(x->s, &b, 1, &l, NULL, NULL, &e);
	} else
		llr_senc_run(x->s, &x->b, x->train, &l, NULL, NULL, &e);
	return l / (double)x->b.n;
}

static void check_case(int kind, int task)
{
	llr_csr *psi;
	llr_senc *s = enc_new(kind, LLR_TASK_ALL, &psi, 10 + kind * 3 + task);
	/* make the heads large enough to give gradients worth checking */
	int64_t sh[2];
	const char *nm;
	llr_rng r;
	llr_rng_seed(&r, 77 + task);
	for (int t = 0; t < llr_senc_n_tensors(); t++) {
		size_t o = llr_senc_tensor(s, t, &nm, sh);
		if (strstr(nm, "/W") || strstr(nm, "/b") || !strcmp(nm, "emb"))
			fill(llr_senc_params(s) + o, (size_t)(sh[0] * sh[1]), &r, strcmp(nm, "emb") ? 0.8 : 0.5);
	}
	int S = llr_senc_task_sents(task), K = llr_senc_task_classes(s, task);
	size_t n = task == LLR_TASK_NEXT ? 2 : 5;
	int32_t ids[200], label[5];
	size_t off[41];
	off[0] = 0;
	for (size_t i = 0; i < n * S; i++) {
		int L = 1 + (int)llr_rng_below(&r, 6);
		for (int k = 0; k < L; k++)
			ids[off[i] + k] = (int32_t)llr_rng_below(&r, V);
		off[i + 1] = off[i] + L;
	}
	for (size_t i = 0; i < n; i++)
		label[i] = (int32_t)llr_rng_below(&r, (uint64_t)K);
	run_ctx x = {.s = s, .b = {.task = task, .n = n, .ids = ids, .off = off, .label = label, .next_batch_negatives = g_wide}, .drop_seed = g_dropout > 0 || g_word_dropout > 0 ? 99 : 0, .train = g_wide};
	llr_err e = {0};
	size_t np = llr_senc_n_params(s);
	memset(llr_senc_grads(s), 0, np * sizeof(float));
	double l0;
	llr_rng dr;
	llr_rng_seed(&dr, 99);
	llr_senc_batch b1 = x.b;
	b1.rng = x.drop_seed ? &dr : NULL;
	CHECK_OK(llr_senc_run(s, &b1, 1, &l0, NULL, NULL, &e));
	CHECK(l0 > 0);
	float *g = malloc(np * sizeof *g);
	memcpy(g, llr_senc_grads(s), np * sizeof *g);
	printf("# %s %s%s%s\n", llr_senc_encoder_name(kind), task == 1 ? "order" : task == 2 ? "next"
	                                                                                     : "conj",
	       g_dropout > 0 ? " with dropout" : g_word_dropout > 0 ? " with word dropout"
	                                                            : "",
	       g_wide ? ", in-batch negatives" : "");
	g_eps = kind == LLR_SENC_CBOW ? 1e-2 : 1e-3; /* max-pooling kinks (2e-3 crosses one under word dropout) */
	for (int t = 0; t < llr_senc_n_tensors(); t++) {
		size_t o = llr_senc_tensor(s, t, &nm, sh);
		size_t cnt = (size_t)(sh[0] * sh[1]);
		if (!cnt)
			continue;
		int mine = (task == LLR_TASK_ORDER && !strncmp(nm, "order", 5)) || (task == LLR_TASK_NEXT && !strncmp(nm, "next", 4)) ||
		           (task == LLR_TASK_CONJ && !strncmp(nm, "conj", 4)) || !strncmp(nm, "gru", 3) || !strcmp(nm, "emb");
		if (!mine) {
			/* other heads get no gradient */
			double m = 0;
			for (size_t i = 0; i < cnt; i++)
				m = fmax(m, fabs(g[o + i]));
			CHECK(m == 0);
			continue;
		}
		CHECK(gradcheck(nm, llr_senc_params(s) + o, g + o, cnt, run_loss, &x, 60, &r) == 0);
		CHECK(g_max_analytic > ATOL);
	}
	g_eps = EPS;
	/* the accuracy count agrees with the predictions */
	int32_t pred[5];
	size_t correct = 0, c2 = 0;
	CHECK_OK(llr_senc_run(s, &x.b, 0, NULL, &correct, pred, &e));
	for (size_t i = 0; i < n; i++)
		c2 += pred[i] == label[i];
	CHECK(correct == c2);
	/* a label out of range is refused */
	label[0] = K;
	CHECK(llr_senc_run(s, &x.b, 0, NULL, NULL, NULL, &e) == LLR_EINVAL);
	free(g);
	llr_senc_free(s);
	llr_csr_free(psi);
}

/* The NEXT head starts at [0; 0; I - 11'/D] (the candidate against the
 * last context sentence, both centred); the other heads start small and
 * random. */
static void test_init_next(void)
{
	for (int kind = LLR_SENC_CBOW; kind <= LLR_SENC_BIGRU; kind++) {
		llr_csr *psi;
		llr_senc *s = enc_new(kind, LLR_TASK_ORDER | LLR_TASK_NEXT | LLR_TASK_CONJ, &psi, 3);
		int D = llr_senc_dim(s), seen = 0;
		for (int t = 0; t < llr_senc_n_tensors(); t++) {
			const char *nm;
			int64_t sh[2];
			size_t o = llr_senc_tensor(s, t, &nm, sh);
			const float *w = llr_senc_params(s) + o;
			if (!strcmp(nm, "next/W")) {
				CHECK(sh[0] == 3 * D && sh[1] == D);
				int bad = 0;
				for (int i = 0; i < 3 * D; i++)
					for (int j = 0; j < D; j++)
						bad += fabsf(w[(size_t)i * D + j] - (i < 2 * D ? 0.0f : (i == 2 * D + j) - 1.0f / (float)D)) > 1e-7f;
				CHECK(bad == 0);
				/* centred: a constant vector scores 0 against anything */
				double row = 0;
				for (int j = 0; j < D; j++)
					row += w[(size_t)(2 * D) * D + j];
				CHECK(fabs(row) < 1e-5);
				seen++;
			} else if (!strcmp(nm, "order/W") || !strcmp(nm, "conj/W")) {
				double m = 0;
				for (int64_t i = 0; i < sh[0] * sh[1]; i++)
					m = fmax(m, fabs(w[i]));
				CHECK(m > 0 && m <= 1.0 / D);
				seen++;
			}
		}
		CHECK(seen == 3);
		llr_senc_free(s);
		llr_csr_free(psi);
	}
}

static void test_grad_cbow(void)
{
	check_case(LLR_SENC_CBOW, LLR_TASK_ORDER);
	check_case(LLR_SENC_CBOW, LLR_TASK_NEXT);
	check_case(LLR_SENC_CBOW, LLR_TASK_CONJ);
}

static void test_grad_gru(void)
{
	check_case(LLR_SENC_GRU, LLR_TASK_ORDER);
	check_case(LLR_SENC_GRU, LLR_TASK_NEXT);
	check_case(LLR_SENC_GRU, LLR_TASK_CONJ);
}

static void test_grad_bigru(void)
{
	check_case(LLR_SENC_BIGRU, LLR_TASK_ORDER);
	check_case(LLR_SENC_BIGRU, LLR_TASK_NEXT);
	check_case(LLR_SENC_BIGRU, LLR_TASK_CONJ);
}

/* The loss and gradient of an ORDER batch of the 10 sentences: the sum
 * of the gradient's magnitudes in *gsum. */
static double order_pass(llr_senc *s, int grad, llr_rng *rng, double *gsum)
{
	static const int32_t lab[5] = {0, 1, 1, 0, 1};
	llr_senc_batch b = {.task = LLR_TASK_ORDER, .n = 5, .ids = sids, .off = soff, .label = lab, .rng = rng};
	llr_err e = {0};
	size_t np = llr_senc_n_params(s);
	memset(llr_senc_grads(s), 0, np * sizeof(float));
	double l = NAN;
	CHECK_OK(llr_senc_run(s, &b, grad, &l, NULL, NULL, &e));
	*gsum = 0;
	for (size_t i = 0; i < np; i++)
		*gsum += fabs(llr_senc_grads(s)[i]);
	return l;
}

/* A kind of dropout, *knob (g_dropout or g_word_dropout) set to 0.5 for
 * the encoders it makes: only in a training pass given an rng, the same
 * masks from the same draws, ignored by a model without it; its draws
 * leave the rng as a fresh one after draws uniforms (when draws > 0); a
 * probability outside [0, 1) refused with a message naming what. */
static void mask_props(float *knob, size_t draws, const char *what)
{
	for (int kind = LLR_SENC_CBOW; kind <= LLR_SENC_BIGRU; kind++) {
		llr_csr *p0, *p1;
		llr_senc *s0 = enc_new(kind, LLR_TASK_ALL, &p0, 5);
		*knob = 0.5f;
		llr_senc *s1 = enc_new(kind, LLR_TASK_ALL, &p1, 5);
		*knob = 0;
		llr_rng r, r2;
		llr_rng_seed(&r, 8);
		double g0, g1, g2;
		/* evaluation, or training without an rng: no dropout */
		CHECK(order_pass(s0, 0, &r, &g0) == order_pass(s1, 0, &r, &g1));
		double l0 = order_pass(s0, 1, NULL, &g0), l1 = order_pass(s1, 1, NULL, &g1);
		CHECK(l0 == l1 && g0 == g1 && g0 > 0);
		/* training with an rng: another loss, repeated by the same draws */
		llr_rng_seed(&r, 8);
		l1 = order_pass(s1, 1, &r, &g1);
		CHECK(l1 != l0 && isfinite(l1) && g1 != g0);
		llr_rng_seed(&r2, 8);
		CHECK(order_pass(s1, 1, &r2, &g2) == l1 && g2 == g1);
		if (draws) { /* so many draws, nothing else */
			llr_rng r3;
			llr_rng_seed(&r3, 8);
			for (size_t k = 0; k < draws; k++)
				llr_rng_uniform(&r3);
			CHECK(llr_rng_u64(&r2) == llr_rng_u64(&r3));
		}
		/* the model without dropout ignores the rng */
		llr_rng_seed(&r, 8);
		CHECK(order_pass(s0, 1, &r, &g2) == l0 && g2 == g0);
		llr_senc_free(s0);
		llr_senc_free(s1);
		llr_csr_free(p0);
		llr_csr_free(p1);
	}
	llr_err e = {0};
	llr_csr *psi = llr_csr_identity(V, &e);
	float bad[] = {1.0f, -0.1f, NAN};
	for (int i = 0; i < 3; i++) {
		llr_senc_config c = {.encoder = LLR_SENC_CBOW, .E = E, .tasks = LLR_TASK_ORDER};
		*(knob == &g_dropout ? &c.dropout : &c.word_dropout) = bad[i];
		CHECK(llr_senc_new(&c, psi, &e) == NULL && e.code == LLR_EINVAL && strstr(e.msg, what));
	}
	llr_csr_free(psi);
}

/* Dropout on the encodings: mask_props, and gradient checks through the
 * masks. */
static void test_dropout(void)
{
	mask_props(&g_dropout, 0, "dropout");
	g_dropout = 0.4f;
	check_case(LLR_SENC_CBOW, LLR_TASK_NEXT);
	check_case(LLR_SENC_BIGRU, LLR_TASK_ORDER);
	check_case(LLR_SENC_BIGRU, LLR_TASK_NEXT);
	g_dropout = 0;
}

/* Word dropout drops tokens, the same in both directions of the BiGRU:
 * a training pass on a batch that starts past the first token (off[0] =
 * 7) has the loss of the same network without dropout over a vocabulary
 * of one word a token, each token's embedding row its word's times its
 * mask (0 or 1 / (1 - p), the draws of the same seed, one a token). */
static void word_dropout_tokens(void)
{
	llr_csr *psi;
	g_word_dropout = 0.5f;
	llr_senc *s = enc_new(LLR_SENC_BIGRU, LLR_TASK_ORDER, &psi, 6);
	g_word_dropout = 0;
	llr_rng r;
	llr_rng_seed(&r, 31);
	int64_t sh[2];
	const char *nm;
	for (int t = 0; t < llr_senc_n_tensors(); t++) { /* heads large enough to matter */
		size_t o = llr_senc_tensor(s, t, &nm, sh);
		if (strstr(nm, "order/"))
			fill(llr_senc_params(s) + o, (size_t)(sh[0] * sh[1]), &r, 0.8);
	}
	static const int32_t lab[4] = {1, 0, 1, 1};
	const size_t *off = soff + 2, N = soff[NS] - soff[2];
	llr_senc_batch b = {.task = LLR_TASK_ORDER, .n = 4, .ids = sids, .off = off, .label = lab, .rng = &r};
	llr_err e = {0};
	double l1 = NAN, l2 = NAN;
	llr_rng_seed(&r, 8);
	CHECK_OK(llr_senc_run(s, &b, 1, &l1, NULL, NULL, &e));
	/* the reference: token k is word k of its own vocabulary */
	llr_csr *psi2 = llr_csr_identity((int32_t)N, &e);
	llr_senc_config c = *llr_senc_cfg(s);
	c.word_dropout = 0;
	llr_senc *s2 = llr_senc_new(&c, psi2, &e);
	CHECK(s2 != NULL);
	int32_t ids2[64];
	size_t off2[NS + 1];
	llr_rng_seed(&r, 8);
	for (int t = 0; s2 && t < llr_senc_n_tensors(); t++) {
		int64_t sh2[2];
		size_t o = llr_senc_tensor(s, t, &nm, sh), o2 = llr_senc_tensor(s2, t, &nm, sh2);
		const float *w = llr_senc_params(s) + o;
		float *w2 = llr_senc_params(s2) + o2;
		if (strcmp(nm, "emb")) {
			memcpy(w2, w, (size_t)(sh[0] * sh[1]) * sizeof *w);
			continue;
		}
		for (size_t k = 0; k < N; k++) {
			float m = llr_rng_uniform(&r) < 0.5 ? 0.0f : 2.0f;
			for (int j = 0; j < E; j++)
				w2[k * E + j] = w[(size_t)sids[soff[2] + k] * E + j] * m;
			ids2[k] = (int32_t)k;
		}
	}
	for (int i = 0; i <= 8; i++)
		off2[i] = off[i] - off[0];
	llr_senc_batch b2 = {.task = LLR_TASK_ORDER, .n = 4, .ids = ids2, .off = off2, .label = lab};
	CHECK_OK(llr_senc_run(s2, &b2, 0, &l2, NULL, NULL, &e));
	printf("# word dropout by token: loss %.9g, reference %.9g\n", l1, l2);
	CHECK(fabs(l1 - l2) <= 1e-6 * fabs(l2));
	llr_senc_free(s);
	llr_senc_free(s2);
	llr_csr_free(psi);
	llr_csr_free(psi2);
}

/* Word dropout on the embeddings: mask_props with one draw a token of the
 * batch; gradient checks through the masks (both directions of the
 * BiGRU), and with dropout as well. */
static void test_word_dropout(void)
{
	mask_props(&g_word_dropout, soff[10] - soff[0], "word dropout");
	word_dropout_tokens();
	g_word_dropout = 0.4f;
	check_case(LLR_SENC_CBOW, LLR_TASK_NEXT);
	check_case(LLR_SENC_GRU, LLR_TASK_CONJ);
	check_case(LLR_SENC_BIGRU, LLR_TASK_ORDER);
	check_case(LLR_SENC_BIGRU, LLR_TASK_NEXT);
	g_dropout = 0.3f;
	check_case(LLR_SENC_BIGRU, LLR_TASK_CONJ);
	g_dropout = g_word_dropout = 0;
}

/* NEXT's in-batch negatives, n examples: each context against all 5n
 * candidates, computed here directly from the encodings; a candidate of
 * another example that is the same words as an example's true one is
 * left out of that example's softmax; *correct and pred are those of the
 * own five (as the plain pass gives them); gradient checks of every
 * encoder, and with dropout. */
static void test_next_batch_negatives(void)
{
	enum { NB = 3, SB = 8 };
	llr_csr *psi;
	llr_err e = {0};
	llr_senc *s = enc_new(LLR_SENC_GRU, LLR_TASK_NEXT, &psi, 4);
	int D = llr_senc_dim(s);
	llr_rng r;
	llr_rng_seed(&r, 8);
	fill(llr_senc_params(s), llr_senc_n_params(s), &r, 0.5);
	int32_t ids[NB * SB * 6], label[NB] = {1, 4, 0};
	size_t off[NB * SB + 1] = {0};
	/* candidate 2 of example 2 is the words of example 0's true one */
	const size_t gold0 = 3 + 1, dup = 2 * SB + 3 + 2;
	for (size_t i = 0; i < NB * SB; i++) {
		size_t L = i == dup ? off[gold0 + 1] - off[gold0] : 2 + llr_rng_below(&r, 4);
		for (size_t k = 0; k < L; k++)
			ids[off[i] + k] = i == dup ? ids[off[gold0] + k] : (int32_t)llr_rng_below(&r, V);
		off[i + 1] = off[i] + L;
	}
	float enc[NB * SB * 16];
	CHECK(D <= 16);
	CHECK_OK(llr_senc_encode(s, ids, off, NB * SB, enc, &e));
	const float *W = NULL;
	for (int t = 0; t < llr_senc_n_tensors(); t++) {
		const char *nm;
		int64_t sh[2];
		size_t o = llr_senc_tensor(s, t, &nm, sh);
		if (!strcmp(nm, "next/W"))
			W = llr_senc_params(s) + o;
	}
	CHECK(W != NULL);
	double want = 0;
	for (int i = 0; i < NB; i++) {
		double uw[16] = {0}, z[NB * 5], m = -INFINITY, sum = 0;
		for (int j = 0; j < D; j++)
			for (int c = 0; c < 3 * D; c++)
				uw[j] += (double)enc[(size_t)(i * SB) * D + c] * W[(size_t)c * D + j];
		for (int c = 0; c < NB * 5; c++) {
			z[c] = 0;
			for (int j = 0; j < D; j++)
				z[c] += uw[j] * enc[(size_t)((c / 5) * SB + 3 + c % 5) * D + j];
			if (!(i == 0 && c == 2 * 5 + 2))
				m = fmax(m, z[c]);
		}
		for (int c = 0; c < NB * 5; c++)
			if (!(i == 0 && c == 2 * 5 + 2))
				sum += exp(z[c] - m);
		want += m + log(sum) - z[i * 5 + label[i]];
	}
	llr_senc_batch b = {.task = LLR_TASK_NEXT, .n = NB, .ids = ids, .off = off, .label = label, .next_batch_negatives = 1};
	double got = NAN, plain = NAN;
	size_t correct = 0, correct_plain = 0;
	int32_t pred[NB], pred_plain[NB];
	memset(llr_senc_grads(s), 0, llr_senc_n_params(s) * sizeof(float));
	CHECK_OK(llr_senc_run(s, &b, 1, &got, &correct, pred, &e));
	CHECK(fabs(got - want) < 1e-4 * fmax(1, fabs(want)));
	CHECK_OK(llr_senc_run(s, &b, 0, &plain, &correct_plain, pred_plain, &e)); /* no grad: the five */
	CHECK(got > plain);
	CHECK(correct == correct_plain && !memcmp(pred, pred_plain, sizeof pred));
	llr_senc_free(s);
	llr_csr_free(psi);
	g_wide = 1;
	check_case(LLR_SENC_CBOW, LLR_TASK_NEXT);
	check_case(LLR_SENC_GRU, LLR_TASK_NEXT);
	check_case(LLR_SENC_BIGRU, LLR_TASK_NEXT);
	g_dropout = 0.3f;
	check_case(LLR_SENC_BIGRU, LLR_TASK_NEXT);
	g_dropout = 0;
	g_wide = 0;
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(9);
	RUN(test_gru);
	RUN(test_encode);
	RUN(test_init_next);
	RUN(test_grad_cbow);
	RUN(test_grad_gru);
	RUN(test_grad_bigru);
	RUN(test_dropout);
	RUN(test_word_dropout);
	RUN(test_next_batch_negatives);
	DONE();
}
