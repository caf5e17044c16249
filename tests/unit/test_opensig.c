/*
 * test_opensig.c - the open-vocabulary output (issue 14): the log-linear
 * layer's normalisation with signature rows (llr_net_set_open), targets
 * outside the vocabulary (llr_batch xphi), the norm check's extra rows
 * (llr_net_set_norm_rows), and the errors; the signature masses
 * (llr_lexicon_estimate_sigs): they sum to 1, repeat with a seed, agree
 * with a second estimate within their standard errors, round trip
 * through a file, and bad members are refused.
 */
#include "lexicon_fixture.h"
#include "llrnn.h"
#include "nn.h"
#include "spelling_fixture.h"
#include "test.h"

enum { V = 11,
       F = 8,
       E = 6,
       H = 7,
       S = 5,
       UNK = 10 };

static llr_csr *rand_phi(int rows, int cols, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(cols);
	for (int v = 0; v < rows; v++) {
		int32_t c[4];
		float x[4];
		int k = 1 + (int)llr_rng_below(r, 3);
		for (int j = 0; j < k; j++) {
			c[j] = (int32_t)((v + 3 * j) % cols); /* distinct columns */
			x[j] = j ? (float)(0.5 + llr_rng_uniform(r)) : 1.0f;
		}
		llr_csr_builder_row(b, c, x, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

typedef struct fixture {
	llr_csr *phi, *sig;
	float logb[V], logb_open[V], sig_logb[S];
	llr_net *net;
} fixture;

static void fx_init(fixture *fx, int output)
{
	llr_rng r;
	llr_rng_seed(&r, 5);
	fx->phi = rand_phi(V, F, &r);
	fx->sig = rand_phi(S, F, &r);
	for (int v = 0; v < V; v++) {
		fx->logb[v] = (float)log(0.01 + llr_rng_uniform(&r));
		fx->logb_open[v] = v == UNK ? -INFINITY : fx->logb[v] + (float)log(0.8);
	}
	for (int s = 0; s < S; s++)
		fx->sig_logb[s] = (float)log(0.04 * (0.5 + llr_rng_uniform(&r)));
	llr_net_config cf = {.vocab = V, .feat_out = F, .feat_in = F, .embed = E, .hidden = H, .layers = 1, .output = output};
	if (output == LLR_OUT_SOFTMAX)
		cf.feat_out = cf.feat_in = 0;
	fx->net = llr_net_new(&cf, output == LLR_OUT_SOFTMAX ? NULL : fx->phi, NULL, fx->logb, NULL);
	llr_net_init(fx->net, &r);
	size_t n;
	float *p = llr_net_params(fx->net, &n);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(llr_rng_uniform(&r) - 0.5);
}

static void fx_free(fixture *fx)
{
	llr_net_free(fx->net);
	llr_csr_free(fx->phi);
	llr_csr_free(fx->sig);
}

/* The signature rows as the norm check's rows, one draw each of weight
 * S e^{sig_logb}: the estimate is then their exact mass. */
static int sig_norm_rows(fixture *fx, llr_err *e)
{
	static float lw[S];
	static const int64_t one[S] = {1, 1, 1, 1, 1};
	for (int s = 0; s < S; s++)
		lw[s] = fx->sig_logb[s] + logf((float)S);
	return llr_net_set_norm_rows(fx->net, fx->sig, lw, one, S, e);
}

/* After the prefix 3 1 4, every word of V but <unk> and every signature
 * row as a target, one stream each: their probabilities sum to one. */
static void test_open_sums_to_one(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	CHECK_OK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, fx.sig_logb, NULL));
	enum { B = V - 1 + S,
	       T = 4 };
	int32_t in[T * B], tg[T * B];
	for (int b = 0; b < B; b++) {
		int32_t pre[] = {LLR_BOS_ID, 3, 1, 4};
		for (int t = 0; t < T; t++) {
			in[t * B + b] = pre[t];
			tg[t * B + b] = t < T - 1 ? pre[t + 1] : (b < UNK ? b : V + (b - UNK));
		}
	}
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg, .xphi = fx.sig, .xlogb = fx.sig_logb};
	float lp[T * B];
	CHECK_OK(llr_net_score(fx.net, &bt, lp, NULL, NULL));
	double sum = 0;
	for (int b = 0; b < B; b++)
		sum += exp((double)lp[(T - 1) * B + b]);
	CHECK_NEAR(sum, 1.0, 1e-5);
	/* the same positions alone (B = 1): the same numbers */
	int32_t in1[T], tg1[T];
	for (int t = 0; t < T; t++) {
		in1[t] = in[t * B + B - 1];
		tg1[t] = tg[t * B + B - 1];
	}
	llr_batch b1 = {.B = 1, .T = T, .input = in1, .target = tg1, .xphi = fx.sig, .xlogb = fx.sig_logb};
	float l1[T];
	CHECK_OK(llr_net_score(fx.net, &b1, l1, NULL, NULL));
	CHECK_NEAR(l1[T - 1], lp[(T - 1) * B + B - 1], 1e-5);
	/* the norm check: V exactly, plus the signature rows as its extra
	 * rows, is 1; without them it misses their mass */
	llr_batch bv = {.B = 1, .T = T, .input = in1, .target = tg1};
	tg1[T - 1] = 0;
	double ne = -1;
	CHECK_OK(llr_net_score(fx.net, &bv, l1, &ne, NULL));
	CHECK(ne < -0.01); /* under 1: the signatures' mass is missing */
	CHECK_OK(sig_norm_rows(&fx, NULL));
	CHECK_OK(llr_net_score(fx.net, &bv, l1, &ne, NULL));
	CHECK(fabs(ne) < 1e-5);
	fx_free(&fx);
}

/* llr_net_step after llr_net_set_open: V + S entries a position, the
 * words' and the signatures' log-probabilities as llr_net_score gives
 * them as targets, summing to one. */
static void test_open_step(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	CHECK(llr_net_out_width(fx.net) == V);
	CHECK_OK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, fx.sig_logb, NULL));
	CHECK(llr_net_out_width(fx.net) == V + S);
	llr_net_state *st = llr_net_state_new(fx.net, 2);
	int32_t pre[] = {LLR_BOS_ID, 3, 1, 4};
	float all[2 * (V + S)];
	for (int t = 0; t < 4; t++) {
		int32_t in[2] = {pre[t], t ? pre[t - 1] : LLR_BOS_ID};
		CHECK_OK(llr_net_step(fx.net, st, in, NULL, all, NULL));
	}
	double sum = 0;
	for (int x = 0; x < V + S; x++)
		sum += exp((double)all[x]);
	CHECK_NEAR(sum, 1.0, 1e-5);
	CHECK(all[UNK] == -INFINITY);
	/* every word but <unk> and every signature as a target after the
	 * prefix (stream 0) */
	for (int x = 0; x < V + S; x++) {
		if (x == UNK)
			continue;
		int32_t tg[4] = {3, 1, 4, x};
		llr_batch bt = {.B = 1, .T = 4, .input = pre, .target = tg, .xphi = fx.sig, .xlogb = fx.sig_logb};
		float lp[4];
		CHECK_OK(llr_net_score(fx.net, &bt, lp, NULL, NULL));
		CHECK_NEAR(all[x], lp[3], 1e-5);
	}
	llr_net_state_free(st);
	fx_free(&fx);
}

/* Open scoring on 3 threads (llr_net_set_score_threads, before or after
 * llr_net_set_open): the one-thread numbers, rows outside V included,
 * and the norm check with the signature rows. */
static void test_open_threads(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	enum { B = 7,
	       T = 5 };
	int32_t in[T * B], tg[T * B];
	llr_rng r;
	llr_rng_seed(&r, 9);
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			int last = t >= 1 + b % T; /* streams of 1 to T positions */
			in[t * B + b] = t ? (int32_t)llr_rng_below(&r, UNK) : LLR_BOS_ID;
			tg[t * B + b] = last ? -1 : (t % 2 ? (int32_t)llr_rng_below(&r, UNK) : V + (int32_t)llr_rng_below(&r, S));
		}
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg, .xphi = fx.sig, .xlogb = fx.sig_logb};
	float one[T * B], three[T * B];
	double n1 = -1, n3 = -1;
	CHECK_OK(llr_net_set_score_threads(fx.net, 3, NULL));
	CHECK_OK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, fx.sig_logb, NULL));
	CHECK_OK(sig_norm_rows(&fx, NULL));
	CHECK_OK(llr_net_score(fx.net, &bt, three, &n3, NULL));
	CHECK_OK(llr_net_set_score_threads(fx.net, 1, NULL));
	CHECK_OK(llr_net_score(fx.net, &bt, one, &n1, NULL));
	int far = 0;
	for (int k = 0; k < T * B; k++)
		far += fabsf(one[k] - three[k]) > 1e-5f;
	CHECK(far == 0);
	CHECK(n1 >= 0 && n1 < 1e-5 && n3 >= 0 && n3 < 1e-5);
	/* and set up after the copies exist */
	CHECK_OK(llr_net_set_score_threads(fx.net, 3, NULL));
	CHECK_OK(llr_net_score(fx.net, &bt, three, NULL, NULL));
	for (int k = 0; k < T * B; k++)
		far += fabsf(one[k] - three[k]) > 1e-5f;
	CHECK(far == 0);
	fx_free(&fx);
}

/* The norm check's estimate and its standard error (llr_net_norm) by
 * hand: norm rows with counts c_k of K draws and weights w_k give y_k =
 * w_k e^{a.phi_k} / Z = w_k p(sig k) / e^{sig_logb[k]}, the estimate O =
 * sum c_k / K y_k, the deviation O - sum_s p(sig s), the standard error
 * sqrt((sum c_k / K y_k^2 - O^2) / K); a closed check's is 0. */
static void test_norm_se(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	int32_t in[] = {LLR_BOS_ID, 3, 1, 4}, tg[] = {3, 1, 4, 0};
	llr_batch bt = {.B = 1, .T = 4, .input = in, .target = tg};
	float lp[4], all[V + S];
	double ne;
	CHECK_OK(llr_net_score(fx.net, &bt, lp, &ne, NULL));
	llr_norm_stat ns = llr_net_norm(fx.net);
	CHECK(ns.se == 0 && ns.err == ne && ns.lo == fabs(ne) && ns.hi == fabs(ne));
	CHECK_OK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, fx.sig_logb, NULL));
	const int64_t c[S] = {1, 4, 2, 7, 6};
	const float w[S] = {0.3f, 0.05f, 0.1f, 0.02f, 0.2f};
	float lw[S];
	for (int k = 0; k < S; k++)
		lw[k] = logf(w[k]);
	CHECK_OK(llr_net_set_norm_rows(fx.net, fx.sig, lw, c, 20, NULL));
	/* by hand at each of the 4 positions: the deviation of largest
	 * magnitude and its se, the largest |dev| -+ 3 se */
	llr_net_state *st = llr_net_state_new(fx.net, 1);
	double dev = 0, se = 0, lo = -1, hi = 0;
	for (int t = 0; t < 4; t++) {
		CHECK_OK(llr_net_step(fx.net, st, in + t, NULL, all, NULL));
		double O = 0, Q = 0, P = 0;
		for (int k = 0; k < S; k++) {
			double y = (double)w[k] * exp((double)all[V + k] - (double)fx.sig_logb[k]);
			O += (double)c[k] / 20 * y;
			Q += (double)c[k] / 20 * y * y;
			P += exp((double)all[V + k]);
		}
		double d = O - P, sd = sqrt((Q - O * O) / 20);
		if (fabs(d) > fabs(dev)) {
			dev = d;
			se = sd;
		}
		lo = fmax(lo, fabs(d) - LLR_NORM_Z * sd);
		hi = fmax(hi, fabs(d) + LLR_NORM_Z * sd);
	}
	llr_net_state_free(st);
	CHECK_OK(llr_net_score(fx.net, &bt, lp, &ne, NULL));
	ns = llr_net_norm(fx.net);
	printf("# norm check: deviation %.6f (by hand %.6f), se %.6f (by hand %.6f)\n", ns.err, dev, ns.se, se);
	CHECK(ns.err == ne);
	CHECK_NEAR(ns.err, dev, 1e-5);
	CHECK(se > 1e-3);
	CHECK_NEAR(ns.se, se, 1e-5 + 1e-4 * se);
	CHECK_NEAR(ns.lo, lo, 1e-4);
	CHECK_NEAR(ns.hi, hi, 1e-4);
	/* on threads, the same figures */
	CHECK_OK(llr_net_set_score_threads(fx.net, 2, NULL));
	int32_t in2[] = {LLR_BOS_ID, LLR_BOS_ID, 3, 3, 1, 1, 4, 4}, tg2[] = {3, 3, 1, 1, 4, 4, 0, -1};
	llr_batch b2 = {.B = 2, .T = 4, .input = in2, .target = tg2};
	float lp2[8];
	CHECK_OK(llr_net_score(fx.net, &b2, lp2, &ne, NULL));
	llr_norm_stat n2 = llr_net_norm(fx.net);
	CHECK_NEAR(n2.err, ns.err, 1e-6);
	CHECK_NEAR(n2.se, ns.se, 1e-6);
	/* the first two rows summed exactly (count 0): they add w_k e^{..}
	 * and no variance; the other three stand for 20 draws */
	CHECK_OK(llr_net_set_score_threads(fx.net, 1, NULL));
	const int64_t cx[S] = {0, 0, 2, 7, 11};
	CHECK_OK(llr_net_set_norm_rows(fx.net, fx.sig, lw, cx, 20, NULL));
	st = llr_net_state_new(fx.net, 1);
	dev = se = 0;
	for (int t = 0; t < 4; t++) {
		CHECK_OK(llr_net_step(fx.net, st, in + t, NULL, all, NULL));
		double X = 0, O = 0, Q = 0, P = 0;
		for (int k = 0; k < S; k++) {
			double y = (double)w[k] * exp((double)all[V + k] - (double)fx.sig_logb[k]);
			if (k < 2)
				X += y;
			O += (double)cx[k] / 20 * y;
			Q += (double)cx[k] / 20 * y * y;
			P += exp((double)all[V + k]);
		}
		double d = X + O - P, sd = sqrt((Q - O * O) / 20);
		if (fabs(d) > fabs(dev)) {
			dev = d;
			se = sd;
		}
	}
	llr_net_state_free(st);
	CHECK_OK(llr_net_score(fx.net, &bt, lp, &ne, NULL));
	ns = llr_net_norm(fx.net);
	printf("# with 2 exact rows: deviation %.6f (by hand %.6f), se %.6f (by hand %.6f)\n", ns.err, dev, ns.se, se);
	CHECK_NEAR(ns.err, dev, 1e-5);
	CHECK_NEAR(ns.se, se, 1e-5 + 1e-4 * se);
	/* exact rows come first */
	const int64_t cbad[S] = {0, 9, 0, 0, 11};
	llr_err e = {0};
	CHECK(llr_net_set_norm_rows(fx.net, fx.sig, lw, cbad, 20, &e) == LLR_EINVAL && strstr(e.msg, "row 2"));
	fx_free(&fx);
}

/* With no signature rows and the closed background, the open output is
 * the closed one. */
static void test_open_empty_is_closed(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	int32_t in[] = {LLR_BOS_ID, 3, 1, 4}, tg[] = {3, 1, 4, 0};
	llr_batch bt = {.B = 1, .T = 4, .input = in, .target = tg};
	float a[4], b[4];
	CHECK_OK(llr_net_score(fx.net, &bt, a, NULL, NULL));
	llr_csr *none = llr_csr_builder_finish(llr_csr_builder_new(F), NULL);
	CHECK_OK(llr_net_set_open(fx.net, fx.logb, none, NULL, NULL));
	CHECK_OK(llr_net_score(fx.net, &bt, b, NULL, NULL));
	for (int t = 0; t < 4; t++)
		CHECK_NEAR(a[t], b[t], 1e-5);
	llr_csr_free(none);
	fx_free(&fx);
}

static void test_open_errors(void)
{
	fixture fx;
	fx_init(&fx, LLR_OUT_LOGLINEAR);
	llr_err e = {0};
	int32_t in[] = {LLR_BOS_ID, 3}, tg[] = {3, V};
	llr_batch bt = {.B = 1, .T = 2, .input = in, .target = tg, .xphi = fx.sig, .xlogb = fx.sig_logb};
	float lp[2];
	/* rows outside V before llr_net_set_open */
	CHECK(llr_net_score(fx.net, &bt, lp, NULL, &e) == LLR_EINVAL && strstr(e.msg, "llr_net_set_open"));
	CHECK(sig_norm_rows(&fx, &e) == LLR_EINVAL);
	CHECK_OK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, fx.sig_logb, NULL));
	/* norm rows whose counts do not add up to the draws */
	const int64_t c3[S] = {1, 1, 1, 1, 1}, c0[S] = {1, 0, 2, 1, 1};
	CHECK(llr_net_set_norm_rows(fx.net, fx.sig, fx.sig_logb, c3, 6, &e) == LLR_EINVAL && strstr(e.msg, "not 6"));
	CHECK(llr_net_set_norm_rows(fx.net, fx.sig, fx.sig_logb, c0, 5, &e) == LLR_EINVAL && strstr(e.msg, "row 1"));
	/* a target past the rows given */
	tg[1] = V + S;
	CHECK(llr_net_score(fx.net, &bt, lp, NULL, &e) == LLR_EINVAL && strstr(e.msg, "out of range"));
	/* training takes a signature's id, not rows of their own */
	tg[1] = 2;
	double nll, nls;
	int64_t nt;
	CHECK(llr_net_train_step(fx.net, &bt, NULL, &nll, &nt, &e) == LLR_EINVAL && strstr(e.msg, "training"));
	/* a string outside V by its signature (V + s): trained, the loss
	 * the scoring pass gives; past the signatures, out of range */
	bt.xphi = NULL;
	tg[1] = V + 1;
	CHECK_OK(llr_net_train_step(fx.net, &bt, NULL, &nll, &nt, &e));
	CHECK(nt == 2 && isfinite(nll));
	CHECK_OK(llr_net_score(fx.net, &bt, lp, NULL, &e));
	nls = -(double)lp[0] - (double)lp[1];
	CHECK_NEAR(nll, nls, 1e-4 * fabs(nls));
	tg[1] = V + S;
	CHECK(llr_net_train_step(fx.net, &bt, NULL, &nll, &nt, &e) == LLR_EINVAL && strstr(e.msg, "out of range"));
	/* a NaN background */
	float bad[S];
	memcpy(bad, fx.sig_logb, sizeof bad);
	bad[2] = NAN;
	CHECK(llr_net_set_open(fx.net, fx.logb_open, fx.sig, bad, &e) == LLR_ENAN);
	fx_free(&fx);
	/* a softmax output has no features to give unseen strings */
	fx_init(&fx, LLR_OUT_SOFTMAX);
	llr_csr *none = llr_csr_builder_finish(llr_csr_builder_new(F), NULL);
	CHECK(llr_net_set_open(fx.net, fx.logb, none, NULL, &e) == LLR_EINVAL && strstr(e.msg, "log-linear"));
	llr_csr_free(none);
	fx_free(&fx);
}

/* ------------------------------------------------- signature masses */

static const char *const words[] = {"le", "la", "les", "chat", "chats", "chien", "chiens", "rats", "dort", "dorment"};

/* vocab le la </s> <unk>; features TOP:@notTop SUF:s$ SUF:t$
 * ORTH:len1 (--suffix 1 --ortho would give more; the model keeps
 * these); a spelling model of order 3 on the words above; lambda 0.1. */
static llr_lexicon *open_lexicon(void)
{
	llr_lexicon *x = calloc(1, sizeof *x);
	x->vocab = llr_strmap_new();
	const char *v[] = {"le", "la", "</s>", "<unk>"};
	for (int i = 0; i < 4; i++)
		llr_strmap_add(x->vocab, v[i], strlen(v[i]));
	x->features = llr_strmap_new();
	const char *f[] = {"TOP:le", "TOP:</s>", "TOP:@notTop", "SUF:s$", "SUF:t$", "ORTH:len1"};
	for (int i = 0; i < 6; i++)
		llr_strmap_add(x->features, f[i], strlen(f[i]));
	llr_csr_builder *b = llr_csr_builder_new(6);
	int32_t r0[] = {0}, r1[] = {2}, r2[] = {1}, r3[] = {2};
	llr_csr_builder_row(b, r0, NULL, 1, NULL);
	llr_csr_builder_row(b, r1, NULL, 1, NULL);
	llr_csr_builder_row(b, r2, NULL, 1, NULL);
	llr_csr_builder_row(b, r3, NULL, 1, NULL);
	x->phi = llr_csr_builder_finish(b, NULL);
	x->logb = calloc(4, sizeof *x->logb);
	for (int i = 0; i < 4; i++)
		x->logb[i] = logf(0.25f);
	x->eos_id = 2;
	x->unk_id = 3;
	x->extract.suffix = 1;
	x->extract.ortho = 1;
	x->meta = llr_meta_new();
	llr_meta_set(x->meta, "top", "1");
	x->spell = fixture_spelling(words, sizeof words / sizeof *words, 3);
	CHECK(x->spell != NULL);
	x->spell_lambda = 0.1;
	return x;
}

/* The sum of M over the signatures holding feature name. */
static double mass_with(const llr_lexicon *x, const char *name)
{
	int32_t f = llr_strmap_get(x->features, name, strlen(name));
	const llr_csr *p = llr_lexicon_sig_phi(x);
	const float *lm = llr_lexicon_sig_logm(x);
	double m = 0;
	for (int32_t s = 0; s < p->rows; s++)
		for (int32_t k = p->indptr[s]; k < p->indptr[s + 1]; k++)
			if (p->indices[k] == f)
				m += exp((double)lm[s]);
	return m;
}

/* The characters the spelling model has seen (its tokens less <s>, </s>
 * and <unk>) into out (64 at most); how many. */
static int seen_chars(const llr_ngram *m, const char **out)
{
	int n = 0;
	for (int32_t t = 0; t < llr_ngram_vocab_size(m) && n < 64; t++)
		if (t != llr_ngram_bos(m) && t != llr_ngram_eos(m) && t != llr_ngram_unk(m))
			out[n++] = llr_ngram_token(m, t);
	return n;
}

/* The exact mass under q of the strings of one character (none is in
 * V'): the seen characters one by one, the U unseen ones together. */
static double one_char_mass(const llr_lexicon *x)
{
	const char *alpha[64];
	int seen = seen_chars(llr_spelling_ngram(x->spell), alpha);
	double p = 0;
	for (int i = 0; i < seen; i++)
		p += exp(llr_spelling_logp(x->spell, alpha[i], strlen(alpha[i])));
	p += (1112064.0 - seen) * exp(llr_spelling_logp(x->spell, "\xe2\x82\xac", 3)); /* any unseen one */
	double sv = 0;
	for (int32_t v = 0; v < (int32_t)llr_strmap_size(x->vocab); v++)
		if (v != x->unk_id)
			sv += exp(llr_spelling_logp(x->spell, llr_strmap_str(x->vocab, v), llr_strmap_len(x->vocab, v)));
	return p / (1 - sv);
}

static void test_sigs(void)
{
	llr_lexicon *x = open_lexicon();
	llr_err e = {0};
	CHECK(x->spell != NULL);
	if (!x->spell) {
		llr_lexicon_free(x);
		return;
	}
	CHECK(llr_lexicon_estimate_sigs(x, 0, 1, NULL, NULL, &e) == LLR_EINVAL);
	enum { N = 20000 };
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, NULL, NULL, &e));
	size_t S = llr_lexicon_sigs(x);
	/* TOP:@notTop always; SUF:s$, SUF:t$ or neither; ORTH:len1 or not */
	CHECK(S >= 3 && S <= 6);
	const float *lm = llr_lexicon_sig_logm(x);
	double tot = 0;
	for (size_t s = 0; s < S; s++)
		tot += exp((double)lm[s]);
	CHECK_NEAR(tot, 1.0, 1e-5);
	CHECK_NEAR(mass_with(x, "TOP:@notTop"), 1.0, 1e-5);
	/* the one-character strings: the estimate within 5 standard errors
	 * of their exact mass */
	double want = one_char_mass(x), got = mass_with(x, "ORTH:len1");
	printf("# M(one character) = %.5f, exact %.5f, SE %.5f\n", got, want, sqrt(want * (1 - want) / N));
	CHECK(want > 0.001 && fabs(got - want) <= 5 * sqrt(want * (1 - want) / N));
	/* a seed repeats; another seed agrees within the standard errors */
	double ms = mass_with(x, "SUF:s$");
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, NULL, NULL, &e));
	CHECK(mass_with(x, "SUF:s$") == ms);
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 8, NULL, NULL, &e));
	double ms2 = mass_with(x, "SUF:s$");
	CHECK(ms2 != ms && fabs(ms2 - ms) <= 5 * sqrt(2 * ms * (1 - ms) / N));
	llr_lexicon_free(x);
}

/* A lexicon whose strings outside V' include numbers: V' holds "12", the
 * lexicon sources list "2025" (POS:NUM), the spelling model saw digits. */
static const char *const numwords[] = {"le", "la", "12", "2025", "1999", "300", "45", "7", "le", "chat", "125", "8"};

static llr_lexicon *num_lexicon(int suffix3)
{
	llr_lexicon *x = calloc(1, sizeof *x);
	x->vocab = llr_strmap_new();
	const char *v[] = {"le", "la", "12", "</s>", "<unk>"};
	for (int i = 0; i < 5; i++)
		llr_strmap_add(x->vocab, v[i], strlen(v[i]));
	x->features = llr_strmap_new();
	const char *f[] = {"TOP:le", "TOP:</s>", "TOP:@notTop", "ORTH:number", "ORTH:has-digit", "SUF:5$", "POS:NUM", "SUF:125$"};
	for (int i = 0; i < 8; i++)
		llr_strmap_add(x->features, f[i], strlen(f[i]));
	llr_csr_builder *b = llr_csr_builder_new(8);
	int32_t r0[] = {0}, r1[] = {2}, r2[] = {2, 3, 4}, r3[] = {1}, r4[] = {2};
	llr_csr_builder_row(b, r0, NULL, 1, NULL);
	llr_csr_builder_row(b, r1, NULL, 1, NULL);
	llr_csr_builder_row(b, r2, NULL, 3, NULL);
	llr_csr_builder_row(b, r3, NULL, 1, NULL);
	llr_csr_builder_row(b, r4, NULL, 1, NULL);
	x->phi = llr_csr_builder_finish(b, NULL);
	x->logb = calloc(5, sizeof *x->logb);
	for (int i = 0; i < 5; i++)
		x->logb[i] = logf(0.2f);
	x->eos_id = 3;
	x->unk_id = 4;
	x->extract.suffix = suffix3 ? 3 : 1;
	x->extract.ortho = 1;
	x->meta = llr_meta_new();
	llr_meta_set(x->meta, "top", "1");
	x->spell = fixture_spelling(numwords, sizeof numwords / sizeof *numwords, 3);
	x->spell_lambda = 0.1;
	llr_strmap *lw = llr_strmap_new();
	llr_strmap_add(lw, "2025", 4);
	llr_csr_builder *lb = llr_csr_builder_new(8);
	int32_t num[] = {6};
	llr_csr_builder_row(lb, num, NULL, 1, NULL);
	llr_err e = {0};
	CHECK_OK(llr_lexicon_set_words(x, lw, llr_csr_builder_finish(lb, NULL), &e));
	return x;
}

/* The digit strings outside V' as an exact stratum (opendigits.c): their
 * signatures' masses are the same with any seed and equal their exact q
 * (the groups of llr_spelling_digit_groups less "12", which is in V');
 * the lexicon's "2025" is a signature of its own, of mass q("2025");
 * the norm check sums them exactly too.  With a suffix of 3 digits
 * among the features (the groups keep 2) the rows depend on more than a
 * group's key: the digit strings are drawn with the rest, and their
 * masses move with the seed. */
static void test_sigs_digits(void)
{
	llr_lexicon *x = num_lexicon(0);
	llr_err e = {0};
	llr_openbg *g = llr_openbg_new(x, &e);
	CHECK(g != NULL);
	llr_digit_groups gr;
	CHECK_OK(llr_spelling_digit_groups(x->spell, 16, &gr, &e));
	double all = 0;
	for (int32_t i = 0; i < gr.count; i++)
		all += exp(gr.logp[i]);
	double lo = llr_openbg_log_outside(g);
	double want = (all - exp(llr_spelling_logp(x->spell, "12", 2))) / exp(lo);
	double q2025 = exp(llr_openbg_unseen_logp(g, "2025", 4));
	enum { N = 5000 };
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, NULL, NULL, &e));
	double q, q8;
	const char *why;
	int64_t dg = llr_lexicon_sig_digits(x, &q, &why);
	double m7 = mass_with(x, "ORTH:number"), n7 = mass_with(x, "POS:NUM"), s7 = mass_with(x, "TOP:@notTop");
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 8, NULL, NULL, &e));
	double m8 = mass_with(x, "ORTH:number"), s8 = mass_with(x, "TOP:@notTop") - m8;
	printf("# digit strings: %lld groups, q %.6f (exact %.6f); M(ORTH:number) %.6f and %.6f with two seeds; M(POS:NUM) %.3g, q(2025) %.3g\n",
	       (long long)dg, q, want, m7, m8, n7, q2025);
	CHECK(dg > 100 && llr_lexicon_sig_digits(x, &q8, &why) == dg && q8 == q);
	CHECK_NEAR(q, want, 1e-9);
	CHECK(want > 0.01);
	CHECK_NEAR(m7, want, 2e-6 * want); /* float log masses */
	CHECK_NEAR(m8, want, 2e-6 * want);
	CHECK_NEAR(n7, q2025, 2e-6 * q2025);
	CHECK(s8 != s7 - m7); /* the rest is drawn */
	llr_digit_groups_free(&gr);
	llr_openbg_free(g);
	llr_lexicon_free(x);

	x = num_lexicon(1);
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, NULL, NULL, &e));
	CHECK(llr_lexicon_sig_digits(x, &q, &why) == 0 && why && strstr(why, "last digits"));
	m7 = mass_with(x, "ORTH:number");
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 8, NULL, NULL, &e));
	m8 = mass_with(x, "ORTH:number");
	printf("# with SUF:125$: drawn (%s); M(ORTH:number) %.6f and %.6f\n", why, m7, m8);
	CHECK(m7 != m8 && fabs(m7 - m8) < 0.05);
	llr_lexicon_free(x);

	/* every string a group would take its row from is known (the ten
	 * lead digits before 25 in 5 digits): drawn, said so, nothing lost */
	x = num_lexicon(0);
	llr_strmap *known = llr_strmap_new();
	for (int c = 0; c < 10; c++) {
		char w[6];
		snprintf(w, sizeof w, "%c%c%c25", '0' + c, '0' + c, '0' + c);
		llr_strmap_add(known, w, 5);
	}
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, known, NULL, &e));
	CHECK(llr_lexicon_sig_digits(x, &q, &why) == 0 && why && strstr(why, "no string left"));
	llr_strmap_free(known);
	llr_lexicon_free(x);
}

/* The strings of at most 3 seen characters outside V' as an exact
 * stratum (openshort.c): their count and total q are those of a listing
 * by hand (V' left out), and M(ORTH:len1) holds the seen one-character
 * strings' q exactly with any seed; only the unseen characters' share is
 * drawn. */
static void test_sigs_short(void)
{
	llr_lexicon *x = open_lexicon();
	llr_err e = {0};
	llr_openbg *g = llr_openbg_new(x, &e);
	const char *alpha[64];
	int na = seen_chars(llr_spelling_ngram(x->spell), alpha);
	double want = 0, seen1 = 0;
	int64_t count = 0;
	char buf[16];
	for (int n = 1; n <= 3; n++) {
		int idx[3] = {0, 0, 0};
		for (;;) {
			size_t bl = 0;
			for (int i = 0; i < n; i++) {
				size_t k = strlen(alpha[idx[i]]);
				memcpy(buf + bl, alpha[idx[i]], k);
				bl += k;
			}
			if (llr_openbg_word(g, buf, bl) < 0) {
				double q = exp(llr_openbg_unseen_logp(g, buf, bl));
				want += q;
				seen1 += n == 1 ? q : 0;
				count++;
			}
			int i = 0;
			while (i < n && ++idx[i] == na)
				idx[i++] = 0;
			if (i == n)
				break;
		}
	}
	enum { N = 5000 };
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, NULL, NULL, &e));
	double q;
	int64_t c = llr_lexicon_sig_shorts(x, &q);
	double m7 = mass_with(x, "ORTH:len1");
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 8, NULL, NULL, &e));
	double m8 = mass_with(x, "ORTH:len1"), unseen = one_char_mass(x) - seen1;
	printf("# short strings: %lld (by hand %lld), q %.6f (%.6f); M(ORTH:len1) %.6f and %.6f, seen one-character q %.6f, unseen %.2g\n",
	       (long long)c, (long long)count, q, want, m7, m8, seen1, unseen);
	CHECK(c == count && count > 1000);
	CHECK_NEAR(q, want, 1e-9);
	CHECK(m7 >= seen1 * (1 - 2e-6) && m8 >= seen1 * (1 - 2e-6));
	CHECK(m7 - seen1 <= unseen + 5 * sqrt(unseen / N) && m8 - seen1 <= unseen + 5 * sqrt(unseen / N));
	llr_openbg_free(g);
	llr_lexicon_free(x);
}

/* open_lexicon's, with the hunspell dictionary at path embedded and its
 * features HS:@known and HS:po:noun among the columns. */
static llr_lexicon *dict_lexicon(const char *path)
{
	llr_lexicon *x = open_lexicon();
	llr_strmap_add(x->features, "HS:@known", 9);
	llr_strmap_add(x->features, "HS:po:noun", 10);
	x->phi->cols = (int32_t)llr_strmap_size(x->features);
	llr_err e = {0};
	CHECK_OK(llr_lexicon_set_hunspell(x, path, &e));
	return x;
}

/* The hunspell dictionary's word forms outside V' as an exact stratum
 * (opendict.c): of tests/fixtures/open/mini's forms, those of characters
 * the spelling model has seen and longer than the short strings are
 * listed (chat chats rats), with their q; the mass of the signatures with
 * HS:@known is theirs and rat's (a short string) exactly with any seed:
 * no draw is a dictionary word; sig.dict round trips; an affix file the
 * listing cannot read leaves the forms to the draws, and says why. */
static void test_sigs_dict(void)
{
	if (!llr_have_hunspell()) {
		SKIP("libllrnn built without hunspell");
		return;
	}
	llr_lexicon *x = dict_lexicon("tests/fixtures/open/mini");
	llr_err e = {0};
	llr_openbg *g = llr_openbg_new(x, &e);
	const char *listed[] = {"chat", "chats", "rats"};
	double want = 0;
	for (int i = 0; i < 3; i++)
		want += exp(llr_openbg_unseen_logp(g, listed[i], strlen(listed[i])));
	double known = want + exp(llr_openbg_unseen_logp(g, "rat", 3));
	enum { N = 5000 };
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, NULL, NULL, &e));
	double q, qy;
	const char *why;
	int64_t c = llr_lexicon_sig_dict(x, &q, &why);
	double m7 = mass_with(x, "HS:@known"), t7 = mass_with(x, "TOP:@notTop");
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 8, NULL, NULL, &e));
	double m8 = mass_with(x, "HS:@known"), t8 = mass_with(x, "TOP:@notTop");
	printf("# dictionary forms: %lld, q %.6f (by hand %.6f); M(HS:@known) %.6f and %.6f (exact %.6f)\n", (long long)c, q,
	       want, m7, m8, known);
	CHECK(c == 3 && why == NULL);
	CHECK_NEAR(q, want, 1e-9);
	CHECK(want > 0.01);
	CHECK_NEAR(m7, known, 2e-6 * known);
	CHECK_NEAR(m8, known, 2e-6 * known);
	CHECK_NEAR(t7, 1.0, 1e-5);
	CHECK_NEAR(t8, 1.0, 1e-5);
	llr_lexicon *y = lexicon_round_trip(x, NULL, NULL, &e);
	CHECK(y && llr_lexicon_sig_dict(y, &qy, &why) == 3 && qy == q && why == NULL);
	llr_lexicon_free(y);
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "sig.dict_q", "0", &e) == NULL && strstr(e.msg, "sig.dict"));
	llr_openbg_free(g);
	llr_lexicon_free(x);

	/* one entry more than its header says: hunspell reads on, the
	 * listing stops there */
	char path[512];
	snprintf(path, sizeof path, "%s/extra", test_tmpdir());
	char aff[600], dic[600];
	snprintf(aff, sizeof aff, "%s.aff", path);
	snprintf(dic, sizeof dic, "%s.dic", path);
	FILE *f = fopen(aff, "w");
	fputs("SET UTF-8\nSFX S Y 1\nSFX S 0 s .\nSFX S 0 x .\n", f);
	fclose(f);
	f = fopen(dic, "w");
	fputs("1\nchat/S po:noun\n", f);
	fclose(f);
	x = dict_lexicon(path);
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, NULL, NULL, &e));
	CHECK(llr_lexicon_sig_dict(x, &q, &why) == 0 && why && strstr(why, "line 4"));
	printf("# drawn: %s\n", why ? why : "(no reason)");
	llr_lexicon_free(x);
	unlink(aff);
	unlink(dic);
}

/* The signature of the one-character strings (TOP:@notTop ORTH:len1:
 * the suffix features need a longer word), or -1. */
static int32_t one_char_sig(const llr_lexicon *x)
{
	const llr_csr *p = llr_lexicon_sig_phi(x);
	int32_t top = llr_strmap_get(x->features, "TOP:@notTop", 11), len1 = llr_strmap_get(x->features, "ORTH:len1", 9);
	for (int32_t s = 0; s < p->rows; s++) {
		int32_t a = p->indptr[s];
		if (p->indptr[s + 1] - a == 2 && p->indices[a] == LLR_MIN(top, len1) && p->indices[a + 1] == LLR_MAX(top, len1))
			return s;
	}
	return -1;
}

/* llr_open_draw: the strings of a signature, each with that row, drawn
 * in proportion to q (the seen characters here, each within 5 binomial
 * standard errors), with ln q(w) - ln M(s); the tries
 * bound and the errors.  llr_openbg_draw: strings outside V' with ln q. */
static void test_open_draw(void)
{
	llr_lexicon *x = open_lexicon();
	llr_err e = {0};
	CHECK_OK(llr_lexicon_estimate_sigs(x, 20000, 7, NULL, NULL, &e));
	llr_net_config cf = {.vocab = 4, .feat_out = 6, .feat_in = 6, .embed = E, .hidden = H, .layers = 1, .output = LLR_OUT_LOGLINEAR};
	llr_rnnlm m = {.lex = x, .net = llr_net_new(&cf, x->phi, NULL, x->logb, NULL)};
	llr_rng r;
	llr_rng_seed(&r, 3);
	llr_net_init(m.net, &r);
	llr_open *o = llr_open_new(&m, &e);
	CHECK(o != NULL);
	int32_t s = one_char_sig(x);
	CHECK(s >= 0);
	if (!o || s < 0)
		goto out;
	CHECK(llr_open_sigs(o) == (int32_t)llr_lexicon_sigs(x));
	llr_openbg *g = llr_openbg_new(x, &e);
	const llr_ngram *sp = llr_spelling_ngram(x->spell);
	int32_t nc = llr_ngram_vocab_size(sp);
	enum { N = 6000 };
	int64_t *cnt = calloc((size_t)nc, sizeof *cnt), draws, total = 0;
	double z = 0; /* q of the seen characters */
	llr_buf w = {0};
	int bad = 0;
	for (int i = 0; i < N; i++) {
		double lp;
		CHECK(llr_open_draw(o, s, &r, 1000000, &w, &lp, &draws, &e) == 1);
		total += draws;
		int32_t c;
		bad += llr_utf8_decode(w.data, w.len, &c) != (int)w.len;
		bad += fabs(lp - (llr_openbg_unseen_logp(g, w.data, w.len) - (double)llr_lexicon_sig_logm(x)[s])) > 1e-9;
		int32_t t = llr_ngram_word(sp, w.data, w.len);
		if (t >= 0)
			cnt[t]++;
	}
	CHECK(bad == 0);
	double ms = exp((double)llr_lexicon_sig_logm(x)[s]);
	for (int32_t t = 0; t < nc; t++) {
		const char *c = llr_ngram_token(sp, t);
		if (t != llr_ngram_bos(sp) && t != llr_ngram_eos(sp) && t != llr_ngram_unk(sp))
			z += exp(llr_openbg_unseen_logp(g, c, strlen(c)));
	}
	int64_t seen = 0;
	for (int32_t t = 0; t < nc; t++)
		seen += cnt[t];
	int far = 0;
	for (int32_t t = 0; t < nc; t++) {
		const char *c = llr_ngram_token(sp, t);
		if (t == llr_ngram_bos(sp) || t == llr_ngram_eos(sp) || t == llr_ngram_unk(sp))
			continue;
		/* among the draws that are seen characters: q(c) / z each */
		double p = exp(llr_openbg_unseen_logp(g, c, strlen(c))) / z, n = (double)seen;
		far += fabs((double)cnt[t] - n * p) > 5 * sqrt(n * p * (1 - p)) + 1;
	}
	CHECK(far == 0);
	printf("# %d strings of signature %d in %lld draws, M = %.4f\n", N, s, (long long)total, ms);
	/* the bound, the errors */
	CHECK(llr_open_draw(o, s, &r, 0, &w, NULL, &draws, &e) == 0 && draws == 0);
	CHECK(llr_open_draw(o, llr_open_sigs(o), &r, 10, &w, NULL, &draws, &e) == LLR_EINVAL && strstr(e.msg, "out of range"));
	for (int i = 0; i < 200; i++) {
		double lq;
		CHECK(llr_openbg_draw(g, &r, 1000, &w, &lq, &draws, &e) == 1);
		CHECK(llr_openbg_word(g, w.data ? w.data : "", w.len) < 0 && llr_open_is_token(w.data, w.len));
		CHECK_NEAR(lq, llr_openbg_unseen_logp(g, w.data ? w.data : "", w.len), 1e-9);
	}
	CHECK(llr_openbg_draw(g, &r, 0, &w, NULL, &draws, &e) == 0 && draws == 0);
	CHECK(llr_open_is_token("x", 1) && llr_open_is_token("\xc3\xa9t\xc3\xa9", 5));
	CHECK(!llr_open_is_token("", 0) && !llr_open_is_token("a b", 3) && !llr_open_is_token("a\tb", 3));
	CHECK(!llr_open_is_token("a\n", 2) && !llr_open_is_token("\r", 1) && !llr_open_is_token("a\0b", 3));
	llr_buf_free(&w);
	free(cnt);
	llr_openbg_free(g);
out:
	llr_open_free(o);
	llr_net_free(m.net);
	llr_lexicon_free(x);
}

static void test_sigs_file(void)
{
	llr_lexicon *x = open_lexicon();
	llr_err e = {0};
	CHECK_OK(llr_lexicon_estimate_sigs(x, 3000, 3, NULL, NULL, &e));
	llr_lexicon *y = lexicon_round_trip(x, NULL, NULL, &e);
	CHECK(y != NULL);
	if (y) {
		size_t S = llr_lexicon_sigs(x);
		CHECK(llr_lexicon_sigs(y) == S);
		CHECK(!memcmp(llr_lexicon_sig_logm(x), llr_lexicon_sig_logm(y), S * sizeof(float)));
		CHECK(!strcmp(llr_meta_get(y->meta, "sig.samples"), "3000"));
		double q, qy;
		const char *why;
		CHECK(llr_lexicon_sig_digits(x, &q, &why) > 0 && llr_lexicon_sig_digits(y, &qy, &why) == llr_lexicon_sig_digits(x, &q, &why));
		CHECK(q > 0 && q == qy);
		llr_lexicon_free(y);
	}
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "sig.count", "100000", &e) == NULL && strstr(e.msg, "sig.count"));
	CHECK(llr_meta_get(x->meta, "sig.digits") == NULL); /* set by llr_lexicon_to_meta, not in x->meta */
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "sig.digits", "0", &e) == NULL && strstr(e.msg, "sig.digits"));
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "sig.digits_q", "1.5", &e) == NULL && strstr(e.msg, "sig.digits"));
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "sig.count", "1", &e) == NULL && strstr(e.msg, "sig/phi"));
	llr_lexicon_free(x);
}

/* Known strings (the training text's types outside the vocabulary): the
 * stratified estimate holds each one's q exactly and gives its signature;
 * the draws skip them, so the masses stay unbiased: with every seen
 * character known, the one-character strings' mass is still within 5
 * standard errors of the exact one (counted twice, it would be far off);
 * a string in V' takes no part; sig.known round trips and bounds the
 * signatures a file may have. */
static void test_sigs_known(void)
{
	llr_lexicon *x = open_lexicon();
	llr_err e = {0};
	llr_openbg *g = llr_openbg_new(x, &e);
	const llr_ngram *sp = llr_spelling_ngram(x->spell);
	llr_strmap *known = llr_strmap_new();
	llr_strmap_add(known, "la", 2); /* in V' */
	llr_strmap_add(known, "chats", 5);
	llr_strmap_add(known, "dort", 4);
	double qk = 0;
	const char *alpha[64];
	for (int i = 0, na = seen_chars(sp, alpha); i < na; i++) {
		llr_strmap_add(known, alpha[i], strlen(alpha[i]));
		qk += exp(llr_openbg_unseen_logp(g, alpha[i], strlen(alpha[i])));
	}
	int32_t nk = (int32_t)llr_strmap_size(known);
	int32_t *ks = calloc((size_t)nk, sizeof *ks);
	enum { N = 20000 };
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 7, known, ks, &e));
	size_t S = llr_lexicon_sigs(x);
	const float *lm = llr_lexicon_sig_logm(x);
	const llr_csr *p = llr_lexicon_sig_phi(x);
	double tot = 0;
	for (size_t s = 0; s < S; s++)
		tot += exp((double)lm[s]);
	CHECK_NEAR(tot, 1.0, 1e-5);
	CHECK(ks[0] == -1);
	int bad = 0;
	for (int32_t i = 1; i < nk; i++) {
		const char *w = llr_strmap_str(known, i);
		size_t len = llr_strmap_len(known, i), n;
		int32_t c[8];
		float v[8];
		if (ks[i] < 0 || ks[i] >= (int32_t)S || llr_lexicon_any_row(x, w, len, 0, c, v, 8, &n, &e) < 0) {
			bad++;
			continue;
		}
		int32_t a = p->indptr[ks[i]];
		bad += (size_t)(p->indptr[ks[i] + 1] - a) != n || memcmp(p->indices + a, c, n * sizeof *c) ||
		       exp((double)lm[ks[i]]) < exp(llr_openbg_unseen_logp(g, w, len)) * (1 - 1e-5);
	}
	CHECK(bad == 0);
	/* the one-character strings: the known ones exactly, the unseen
	 * characters by the draws */
	double want = one_char_mass(x), got = mass_with(x, "ORTH:len1"), se = (1 - qk) * sqrt(want * (1 - want) / N);
	printf("# M(one character) with %d known strings (q %.5f) = %.5f, exact %.5f, SE at most %.5f\n", nk - 1, qk, got, want, se);
	CHECK(qk > 0.01 && fabs(got - want) <= 5 * se && fabs(got - want) < qk / 10);
	/* another signature agrees with the estimate without known strings */
	double mk = mass_with(x, "SUF:s$");
	llr_lexicon *y = lexicon_round_trip(x, NULL, NULL, &e);
	CHECK(y && llr_lexicon_sigs(y) == S && !memcmp(llr_lexicon_sig_logm(y), lm, S * sizeof *lm));
	CHECK(y && llr_meta_get(y->meta, "sig.known") && atoi(llr_meta_get(y->meta, "sig.known")) == nk - 1);
	llr_lexicon_free(y);
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "sig.known", "0", &e) == NULL && strstr(e.msg, "sig.known"));
	CHECK_OK(llr_lexicon_estimate_sigs(x, N, 8, NULL, NULL, &e));
	double m0 = mass_with(x, "SUF:s$");
	printf("# M(SUF:s$) = %.5f with known strings, %.5f without\n", mk, m0);
	CHECK(fabs(mk - m0) <= 5 * sqrt(2 * m0 * (1 - m0) / N));
	/* one draw and the known strings: more signatures than draws */
	CHECK_OK(llr_lexicon_estimate_sigs(x, 1, 7, known, NULL, &e));
	CHECK(llr_lexicon_sigs(x) > 1);
	y = lexicon_round_trip(x, NULL, NULL, &e);
	CHECK(y != NULL);
	llr_lexicon_free(y);
	free(ks);
	llr_strmap_free(known);
	llr_openbg_free(g);
	llr_lexicon_free(x);
}

/* The context-free bias fit (llr_open_fit_rows) on a problem with a closed
 * form: words w0 {f0}, w1 {}, w2 (no background mass) and signature s0
 * {f1}, backgrounds equal; targets 6 w0, 3 w1, 1 s0.  Without the L2
 * penalty the fit gives p = (0.6, 0.3, 0, 0.1): beta = (ln 2, ln 1/3) and
 * the mean log-likelihood 0.6 ln 0.6 + 0.3 ln 0.3 + 0.1 ln 0.1. */
static llr_csr *rows_of(int32_t F, int nrow, const int32_t *col)
{
	llr_csr_builder *b = llr_csr_builder_new(F);
	for (int r = 0; r < nrow; r++)
		llr_csr_builder_row(b, col + r, NULL, col[r] >= 0 ? 1 : 0, NULL);
	return llr_csr_builder_finish(b, NULL);
}

static void test_fit_bias(void)
{
	int32_t wc[] = {0, -1, -1}, sc[] = {1};
	llr_csr *phi = rows_of(2, 3, wc), *sphi = rows_of(2, 1, sc);
	float lb = logf(1.0f / 3), lbv[] = {lb, lb, -INFINITY}, lbs[] = {lb};
	llr_open_rows R = {.phi = phi, .sig_phi = sphi, .logb_v = lbv, .sig_logb = lbs};
	int64_t count[] = {6, 3, 0, 1};
	llr_fit_opts fo = {.iters = 3000, .rate = 0.05, .l2 = 0};
	llr_fit_report rep;
	double beta[2];
	CHECK_OK(llr_open_fit_rows(&R, count, &fo, beta, &rep, NULL));
	CHECK_NEAR(beta[0], log(2.0), 1e-3);
	CHECK_NEAR(beta[1], log(1.0 / 3), 1e-3);
	CHECK_NEAR(rep.after, 0.6 * log(0.6) + 0.3 * log(0.3) + 0.1 * log(0.1), 1e-6);
	CHECK_NEAR(rep.before, log(1.0 / 3), 1e-6);
	CHECK(rep.grad_norm < 1e-4);
	CHECK(rep.targets == 10);
	/* the L2 penalty pulls beta towards 0 */
	fo.l2 = 0.1;
	double shrunk[2];
	CHECK_OK(llr_open_fit_rows(&R, count, &fo, shrunk, &rep, NULL));
	CHECK(shrunk[0] > 0 && shrunk[0] < beta[0] - 0.01 && shrunk[1] < 0 && shrunk[1] > beta[1] + 0.01);
	/* errors: no targets, a target without background mass, a negative count */
	llr_err e = {0};
	int64_t none[] = {0, 0, 0, 0}, bad[] = {1, 0, 1, 0}, neg[] = {1, -1, 0, 0};
	CHECK(llr_open_fit_rows(&R, none, &fo, beta, &rep, &e) == LLR_EINVAL && strstr(e.msg, "no targets"));
	CHECK(llr_open_fit_rows(&R, bad, &fo, beta, &rep, &e) == LLR_EINVAL && strstr(e.msg, "row 2 is a target"));
	CHECK(llr_open_fit_rows(&R, neg, &fo, beta, &rep, &e) == LLR_EINVAL && strstr(e.msg, "negative"));
	llr_csr_free(phi);
	llr_csr_free(sphi);
}

int main(void)
{
	PLAN(14);
	RUN(test_open_sums_to_one);
	RUN(test_open_step);
	RUN(test_open_threads);
	RUN(test_open_empty_is_closed);
	RUN(test_norm_se);
	RUN(test_open_errors);
	RUN(test_sigs);
	RUN(test_sigs_file);
	RUN(test_sigs_known);
	RUN(test_sigs_digits);
	RUN(test_sigs_short);
	RUN(test_sigs_dict);
	RUN(test_open_draw);
	RUN(test_fit_bias);
	DONE();
}
