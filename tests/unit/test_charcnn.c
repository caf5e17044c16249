/*
 * test_charcnn.c - the character-aware word input (charcnn.c,
 * highway.c): character vocabulary and spellings, the convolution with
 * max-pooling over time against a direct computation, and
 * finite-difference gradient checks of the convolution and the highway
 * layer (gradcheck.h).
 */
#include "llrnn.h"
#include "charcnn.h"
#include "test.h"
#include "gradcheck.h"

static llr_strmap *words(const char *const *w, int n)
{
	llr_strmap *m = llr_strmap_new();
	for (int i = 0; i < n; i++)
		llr_strmap_add(m, w[i], strlen(w[i]));
	return m;
}

/* ----------------------------------------------------------- spelling */

static void test_spell(void)
{
	const char *v[] = {"le", "été", LLR_EOS, LLR_UNK, "chats", "l'"};
	llr_strmap *m = words(v, 6);
	int32_t *cps = NULL, n = 0;
	CHECK(llr_charvocab_build(m, &cps, &n, NULL) == LLR_OK);
	/* ' a c e h l s t é, ascending; nothing from the special tokens */
	int32_t want[] = {'\'', 'a', 'c', 'e', 'h', 'l', 's', 't', 0xe9};
	CHECK(n == 9);
	for (int i = 0; i < 9 && n == 9; i++)
		CHECK(cps[i] == want[i]);
	int32_t s[LLR_SPELL_MAX];
	int len = llr_word_spell(cps, n, "été", strlen("été"), s);
	CHECK(len == 5);
	CHECK(s[0] == LLR_CH_BOW && s[4] == LLR_CH_EOW);
	CHECK(s[1] == LLR_CH_FIRST + 8 && s[2] == LLR_CH_FIRST + 7 && s[3] == LLR_CH_FIRST + 8);
	/* an unseen character and an invalid byte are UNK */
	len = llr_word_spell(cps, n, "lx\xff", 3, s);
	CHECK(len == 5 && s[1] == LLR_CH_FIRST + 5 && s[2] == LLR_CH_UNK && s[3] == LLR_CH_UNK);
	/* special tokens have one character of their own */
	len = llr_word_spell(cps, n, LLR_EOS, strlen(LLR_EOS), s);
	CHECK(len == 3 && s[1] == LLR_CH_EOS);
	len = llr_word_spell(cps, n, LLR_BOS, strlen(LLR_BOS), s);
	CHECK(len == 3 && s[1] == LLR_CH_BOS);
	len = llr_word_spell(cps, n, LLR_UNK, strlen(LLR_UNK), s);
	CHECK(len == 3 && s[1] == LLR_CH_UNKW);
	/* a long word keeps its first characters and its last */
	char lng[100];
	for (int i = 0; i < 99; i++)
		lng[i] = 'a';
	lng[98] = 's';
	len = llr_word_spell(cps, n, lng, 99, s);
	CHECK(len == LLR_SPELL_MAX);
	CHECK(s[1] == LLR_CH_FIRST + 1 && s[LLR_SPELL_MAX - 2] == LLR_CH_FIRST + 6 && s[LLR_SPELL_MAX - 1] == LLR_CH_EOW);
	/* the table of spellings */
	llr_spell sp = {0};
	CHECK(llr_spell_push(&sp, s, len) == LLR_OK);
	CHECK(llr_spell_push(&sp, s, 3) == LLR_OK);
	CHECK(sp.n == 2 && sp.off[1] == len && sp.off[2] == len + 3);
	llr_spell_truncate(&sp, 1);
	CHECK(sp.n == 1);
	llr_spell_free(&sp);
	free(cps);
	llr_strmap_free(m);
}

/* -------------------------------------------------------- convolution */

enum { DC = 3,
       NW = 4,
       C = LLR_CH_FIRST + 6 };
static const int width[NW] = {1, 2, 3, 5}, nf[NW] = {2, 3, 2, 2};

typedef struct conv_ctx {
	llr_conv c;
	llr_conv_ws ws;
	llr_spell sp;
	int32_t wid[6];
	int U;
	float *Y, *R;
} conv_ctx;

static double conv_loss(void *p)
{
	conv_ctx *x = p;
	llr_conv_forward(&x->c, &x->ws, &x->sp, x->wid, x->U, x->Y);
	return dot_d(x->Y, x->R, (size_t)x->U * x->c.D);
}

static void test_conv(void)
{
	llr_rng r;
	llr_rng_seed(&r, 61);
	conv_ctx x = {0};
	llr_conv *c = &x.c;
	c->dc = DC;
	c->nw = NW;
	float emb[C * DC], K[NW][5 * DC * 3], b[NW][3];
	float demb[C * DC] = {0}, dK[NW][5 * DC * 3] = {{0}}, db[NW][3] = {{0}};
	fill(emb, C * DC, &r, 1.0);
	for (int k = 0; k < NW; k++) {
		c->width[k] = width[k];
		c->nf[k] = nf[k];
		c->off[k] = c->D;
		c->D += nf[k];
		fill(K[k], (size_t)width[k] * DC * nf[k], &r, 1.0);
		fill(b[k], (size_t)nf[k], &r, 0.5);
		c->K[k] = K[k], c->b[k] = b[k], c->dK[k] = dK[k], c->db[k] = db[k];
	}
	c->emb = emb, c->demb = demb;
	/* words of 3 (shorter than the widest filter), 4, 7 and 9 characters */
	int32_t w0[] = {LLR_CH_BOW, LLR_CH_FIRST, LLR_CH_EOW};
	int32_t w1[] = {LLR_CH_BOW, LLR_CH_FIRST + 1, LLR_CH_FIRST + 2, LLR_CH_EOW};
	int32_t w2[] = {LLR_CH_BOW, LLR_CH_FIRST + 3, LLR_CH_FIRST + 4, LLR_CH_FIRST + 3, LLR_CH_UNK, LLR_CH_FIRST + 5, LLR_CH_EOW};
	int32_t w3[] = {LLR_CH_BOW, LLR_CH_FIRST + 5, LLR_CH_FIRST, LLR_CH_FIRST + 1, LLR_CH_FIRST + 2, LLR_CH_FIRST + 3, LLR_CH_FIRST + 4, LLR_CH_FIRST, LLR_CH_EOW};
	llr_spell_push(&x.sp, w0, 3);
	llr_spell_push(&x.sp, w1, 4);
	llr_spell_push(&x.sp, w2, 7);
	llr_spell_push(&x.sp, w3, 9);
	/* a batch with a repeated word */
	int32_t wid[] = {2, 0, 3, 1, 2};
	x.U = 5;
	memcpy(x.wid, wid, sizeof wid);
	float Y[5 * 9], R[5 * 9], dY[5 * 9];
	CHECK(c->D == 9);
	x.Y = Y, x.R = R;
	fill(R, sizeof R / sizeof *R, &r, 1.0);
	conv_loss(&x);
	/* forward against a direct computation */
	double e = 0;
	for (int u = 0; u < x.U; u++) {
		const int32_t *ch = x.sp.ids + x.sp.off[wid[u]];
		int len = x.sp.off[wid[u] + 1] - x.sp.off[wid[u]];
		for (int k = 0; k < NW; k++) {
			int w = width[k], L = (len > w ? len : w) - w + 1;
			for (int f = 0; f < nf[k]; f++) {
				double best = -1e30;
				for (int s = 0; s < L; s++) {
					double z = b[k][f];
					for (int t = 0; t < w; t++)
						for (int q = 0; q < DC && s + t < len; q++)
							z += (double)emb[ch[s + t] * DC + q] * K[k][(t * DC + q) * nf[k] + f];
					best = z > best ? z : best;
				}
				e = fmax(e, fabs(tanh(best) - Y[u * 9 + c->off[k] + f]));
			}
		}
	}
	printf("#   conv forward: worst error %.3g\n", e);
	CHECK(e < 1e-5);
	memcpy(dY, R, sizeof dY);
	CHECK(llr_conv_backward(c, &x.ws, &x.sp, x.wid, x.U, Y, dY) == LLR_OK);
	/* the padding character's row is never read and gets no gradient */
	for (int q = 0; q < DC; q++)
		CHECK(demb[LLR_CH_PAD * DC + q] == 0.0f);
	g_eps = 1e-3; /* no step may cross to another window's maximum */
	CHECK(gradcheck("conv embeddings", emb, demb, C * DC, conv_loss, &x, C * DC, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	for (int k = 0; k < NW; k++) {
		char nm[32];
		snprintf(nm, sizeof nm, "conv width %d K", width[k]);
		CHECK(gradcheck(nm, K[k], dK[k], (size_t)width[k] * DC * nf[k], conv_loss, &x, 1000, &r) == 0);
		CHECK(g_max_analytic > 5 * ATOL);
		snprintf(nm, sizeof nm, "conv width %d b", width[k]);
		CHECK(gradcheck(nm, b[k], db[k], (size_t)nf[k], conv_loss, &x, 1000, &r) == 0);
	}
	/* a wrong gradient is caught */
	dK[2][1] += 0.05f;
	g_quiet = 1;
	CHECK(gradcheck("conv K, corrupted (expect 1 bad)", K[2], dK[2], (size_t)3 * DC * 2, conv_loss, &x, 1000, &r) == 1);
	g_quiet = 0;
	g_eps = EPS;
	llr_conv_ws_free(&x.ws);
	llr_spell_free(&x.sp);
}

/* ------------------------------------------------------------ highway */

typedef struct hw_ctx {
	int U, D;
	float *W, *b, *y, *gt, *z, *R;
} hw_ctx;

static double hw_loss(void *p)
{
	hw_ctx *h = p;
	llr_highway_forward(h->U, h->D, h->W, h->b, h->y, h->gt, h->z);
	return dot_d(h->z, h->R, (size_t)h->U * h->D);
}

static void test_highway(void)
{
	llr_rng r;
	llr_rng_seed(&r, 62);
	enum { U = 6,
	       D = 5 };
	float W[D * 2 * D], b[2 * D], y[U * D], gt[U * 2 * D], z[U * D], R[U * D];
	float dW[D * 2 * D] = {0}, db[2 * D] = {0}, dy[U * D], sc[U * 2 * D];
	fill(W, D * 2 * D, &r, 0.8), fill(b, 2 * D, &r, 0.5), fill(y, U * D, &r, 1.0), fill(R, U * D, &r, 1.0);
	hw_ctx h = {U, D, W, b, y, gt, z, R};
	hw_loss(&h);
	/* forward against the formula */
	double e = 0;
	for (int u = 0; u < U; u++)
		for (int j = 0; j < D; j++) {
			double g = b[j], t = b[D + j];
			for (int i = 0; i < D; i++) {
				g += (double)y[u * D + i] * W[i * 2 * D + j];
				t += (double)y[u * D + i] * W[i * 2 * D + D + j];
			}
			g = g > 0 ? g : 0;
			t = 1 / (1 + exp(-t));
			e = fmax(e, fabs(t * g + (1 - t) * y[u * D + j] - z[u * D + j]));
		}
	CHECK(e < 1e-5);
	llr_highway_backward(U, D, W, y, gt, R, dy, dW, db, sc);
	g_eps = 1e-3;
	CHECK(gradcheck("highway W", W, dW, D * 2 * D, hw_loss, &h, D * 2 * D, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	CHECK(gradcheck("highway b", b, db, 2 * D, hw_loss, &h, 2 * D, &r) == 0);
	CHECK(gradcheck("highway y", y, dy, U * D, hw_loss, &h, U * D, &r) == 0);
	CHECK(g_max_analytic > 5 * ATOL);
	g_eps = EPS;
	/* a very negative gate bias carries y through */
	for (int j = 0; j < D; j++)
		b[D + j] = -30.0f;
	hw_loss(&h);
	e = 0;
	for (int i = 0; i < U * D; i++)
		e = fmax(e, fabs(z[i] - y[i]));
	CHECK(e < 1e-6);
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(3);
	RUN(test_spell);
	RUN(test_conv);
	RUN(test_highway);
	DONE();
}
