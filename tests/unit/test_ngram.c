/*
 * test_ngram.c - unit tests for lib/ngram: modified Kneser-Ney estimation
 * pinned on a corpus worked by hand and on KenLM's own test model, the
 * normalisation of the estimated models, the ARPA reader's errors, ARPA
 * and binary round trips, and the counter's memory bound; the ARPA
 * number parser and formatter against strtod and printf, sections
 * listed out of order, and counts merged many times.
 */
#include <math.h>
#include <unistd.h>

#include "llrnn.h"
#include "ngram/ngram.h"
#include "test.h"

static llr_ngram *estimate_pruned(const char *text, int order, int fallback, double *D, uint64_t prune)
{
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(order, (size_t)1 << 30, &e);
	if (!c)
		return NULL;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (llr_ngram_count_line(c, p, len, &e) != LLR_OK) {
			printf("# count: %s\n", e.msg);
			llr_ngram_counter_free(c);
			return NULL;
		}
		p += len + (nl != NULL);
	}
	llr_kn_opts o;
	llr_kn_opts_init(&o);
	o.discount_fallback = fallback;
	for (int n = 2; n <= order; n++)
		o.prune[n - 1] = prune;
	llr_ngram *m = NULL;
	if (llr_ngram_estimate(c, &o, &m, D, &e) != LLR_OK)
		printf("# estimate: %s\n", e.msg);
	llr_ngram_counter_free(c);
	return m;
}

static llr_ngram *estimate(const char *text, int order, int fallback, double *D)
{
	return estimate_pruned(text, order, fallback, D, 0);
}

/* p(w | ctx), ctx and w as space-separated words ("" = no context). */
static double prob(const llr_ngram *m, const char *ctx, const char *w)
{
	int32_t ids[16];
	int n = 0;
	size_t pos = 0, tl;
	const char *t;
	while (llr_token_next(ctx, strlen(ctx), &pos, &t, &tl))
		ids[n++] = llr_ngram_word(m, t, tl);
	return pow(10.0, llr_ngram_log10p(m, ids, n, llr_ngram_word(m, w, strlen(w)), NULL));
}

/* The backoff weight of a listed context, as a factor. */
static double backoff(const llr_ngram *m, const char *ctx)
{
	int32_t ids[16];
	int n = 0;
	size_t pos = 0, tl;
	const char *t;
	while (llr_token_next(ctx, strlen(ctx), &pos, &t, &tl))
		ids[n++] = llr_ngram_word(m, t, tl);
	int64_t i = llr_ngram_find(m, ids, n);
	if (i < 0)
		return NAN;
	llr_ngram_level lv;
	llr_ngram_level_get(m, n, &lv);
	return pow(10.0, lv.backoff[i]);
}

/* The corpus below, worked by hand (bigrams):
 *   <s> c a </s> | <s> c </s> | <s> c </s> | <s> a </s> | <s> b </s>
 * Bigram counts: <s> c 3; a </s> 2, c </s> 2; c a, <s> a, <s> b, b </s> 1.
 *   t1 = 4, t2 = 2, t3 = 1, t4 = 0; Y = 4 / (4 + 2*2) = 1/2
 *   D1 = 1 - 2 Y t2/t1 = 1/2, D2 = 2 - 3 Y t3/t2 = 5/4, D3 = 3 - 4 Y t4/t3 = 3
 * Unigram continuation counts: c 1 (<s>), b 1 (<s>), a 2 (c, <s>),
 * </s> 3 (a, c, b); sum 7.
 *   t1 = 2, t2 = 1, t3 = 1, t4 = 0; Y = 1/2; D1 = 1/2, D2 = 1/2, D3 = 3
 *   g() = (1/2 * 2 + 1/2 * 1 + 3 * 1) / 7 = 4.5/7, spread over the 5 words
 *   other than <s> (<unk> included):
 *   p(c) = p(b) = (1 - 1/2)/7 + 4.5/35 = 0.2
 *   p(a) = (2 - 1/2)/7 + 4.5/35 = 12/35;  p(</s>) = p(<unk>) = 4.5/35
 * Context <s>: sum 5, g(<s>) = (3 * 1 + 1/2 * 2) / 5 = 0.8
 *   p(c | <s>) = (3 - 3)/5 + 0.8 * 0.2 = 0.16
 *   p(a | <s>) = (1 - 1/2)/5 + 0.8 * 12/35;  p(b | <s>) = 0.1 + 0.16
 * Context c: sum 3, g(c) = (1/2 + 5/4) / 3 = 7/12
 *   p(a | c) = (1/2)/3 + 7/12 * 12/35 = 11/30
 *   p(</s> | c) = (2 - 5/4)/3 + 7/12 * 4.5/35 = 0.325 */
static const char hand_corpus[] = "c a\nc\nc\na\nb\n";

static void test_hand_worked(void)
{
	double D[6];
	llr_ngram *m = estimate(hand_corpus, 2, 0, D);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_NEAR(D[0], 0.5, 1e-12);
	CHECK_NEAR(D[1], 0.5, 1e-12);
	CHECK_NEAR(D[2], 3.0, 1e-12);
	CHECK_NEAR(D[3], 0.5, 1e-12);
	CHECK_NEAR(D[4], 1.25, 1e-12);
	CHECK_NEAR(D[5], 3.0, 1e-12);
	CHECK(llr_ngram_vocab_size(m) == 6); /* <unk> <s> </s> c a b */
	CHECK(llr_ngram_count(m, 2) == 7);
	CHECK_NEAR(prob(m, "", "c"), 0.2, 1e-6);
	CHECK_NEAR(prob(m, "", "b"), 0.2, 1e-6);
	CHECK_NEAR(prob(m, "", "a"), 12.0 / 35, 1e-6);
	CHECK_NEAR(prob(m, "", "</s>"), 4.5 / 35, 1e-6);
	CHECK_NEAR(prob(m, "", "<unk>"), 4.5 / 35, 1e-6);
	CHECK_NEAR(prob(m, "<s>", "c"), 0.16, 1e-6);
	CHECK_NEAR(prob(m, "<s>", "a"), 0.1 + 0.8 * 12 / 35, 1e-6);
	CHECK_NEAR(prob(m, "<s>", "b"), 0.26, 1e-6);
	CHECK_NEAR(prob(m, "c", "a"), 11.0 / 30, 1e-6);
	CHECK_NEAR(prob(m, "c", "</s>"), 0.325, 1e-6);
	/* backed off: p(b | c) = g(c) p(b) */
	CHECK_NEAR(prob(m, "c", "b"), 7.0 / 12 * 0.2, 1e-6);
	CHECK_NEAR(backoff(m, "<s>"), 0.8, 1e-6);
	CHECK_NEAR(backoff(m, "c"), 7.0 / 12, 1e-6);
	CHECK_NEAR(backoff(m, "</s>"), 1.0, 1e-7);
	/* <s> has log10 p = 0, as lmplz writes it */
	int32_t bos = llr_ngram_bos(m);
	CHECK(bos == 1);
	CHECK(llr_ngram_log10p(m, NULL, 0, bos, NULL) == 0.0f);
	llr_ngram_free(m);
}

static const char *write_tmp(const char *name, const char *text)
{
	static char path[8][512];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 512, "%s/%s", test_tmpdir(), name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

/* lmplz -o 3 --discount_fallback on "a a b a / b a a b": the file
 * lm/common/test_data/toy0.arpa of KenLM (github.com/kpu/kenlm, LGPL 2.1),
 * values quoted as expected results. */
static const char kenlm_toy0[] =
    "\\data\\\nngram 1=5\nngram 2=7\nngram 3=7\n\n\\1-grams:\n"
    "-0.90309\t<unk>\t0\n0\t<s>\t-0.30103\n-0.46943438\ta\t-0.30103\n-0.5720968\t</s>\t0\n-0.5720968\tb\t-0.30103\n\n"
    "\\2-grams:\n-0.37712017\t<s> a\t-0.30103\n-0.37712017\ta a\t-0.30103\n-0.2984526\tb a\t-0.30103\n"
    "-0.58682007\ta </s>\t0\n-0.5220179\tb </s>\t0\n-0.41574955\t<s> b\t-0.30103\n-0.58682007\ta b\t-0.30103\n\n"
    "\\3-grams:\n-0.14885087\t<s> a a\n-0.33741078\tb a a\n-0.124077894\t<s> b a\n-0.2997394\ta b a\n"
    "-0.42082912\tb a </s>\n-0.397617\ta b </s>\n-0.20102891\ta a b\n\n\\end\\\n";

/* Every n-gram of a equals b's, probability and backoff, within tol. */
static void check_same_model(const llr_ngram *a, const llr_ngram *b, double tol)
{
	CHECK(llr_ngram_order(a) == llr_ngram_order(b));
	int N = llr_ngram_order(a);
	for (int n = 1; n <= N; n++)
		CHECK(llr_ngram_count(a, n) == llr_ngram_count(b, n));
	CHECK(llr_ngram_vocab_size(a) == llr_ngram_vocab_size(b));
	/* Walk a's trie; find each n-gram in b by its words. */
	int32_t V = llr_ngram_vocab_size(a);
	int32_t *map = calloc((size_t)V, sizeof *map);
	for (int32_t w = 0; w < V; w++) {
		const char *s = llr_ngram_token(a, w);
		map[w] = llr_ngram_word(b, s, strlen(s));
		CHECK(map[w] >= 0);
	}
	int bad = 0;
	int64_t *parent[8] = {0};
	for (int n = 1; n <= N && !bad; n++) {
		llr_ngram_level la, lb;
		llr_ngram_level_get(a, n, &la);
		llr_ngram_level_get(b, n, &lb);
		if (n > 1) {
			llr_ngram_level lp;
			llr_ngram_level_get(a, n - 1, &lp);
			parent[n - 1] = malloc((size_t)(la.count + 1) * sizeof(int64_t));
			for (int64_t j = 0; j < lp.count; j++)
				for (int64_t i = lp.child[j]; i < lp.child[j + 1]; i++)
					parent[n - 1][i] = j;
		}
		for (int64_t i = 0; i < la.count && !bad; i++) {
			int32_t words[8];
			int64_t e = i;
			for (int k = n; k >= 2; k--) {
				llr_ngram_level lk;
				llr_ngram_level_get(a, k, &lk);
				words[k - 1] = map[lk.word[e]];
				e = parent[k - 1][e];
			}
			words[0] = map[e];
			int64_t j = llr_ngram_find(b, words, n);
			if (j < 0 || fabs(la.logp[i] - lb.logp[j]) > tol || (n < N && fabs(la.backoff[i] - lb.backoff[j]) > tol)) {
				printf("#   %d-gram %lld differs (found %lld)\n", n, (long long)i, (long long)j);
				bad = 1;
			}
		}
	}
	CHECK(!bad);
	for (int n = 0; n < 8; n++)
		free(parent[n]);
	free(map);
}

static void test_kenlm_toy(void)
{
	llr_err e = {0};
	llr_ngram *ken = NULL;
	CHECK_OK(llr_ngram_read_arpa(write_tmp("toy0.arpa", kenlm_toy0), &ken, &e));
	llr_ngram *m = estimate("a a b a\nb a a b\n", 3, 1, NULL);
	CHECK(m && ken);
	if (m && ken) {
		check_same_model(m, ken, 2e-7);
		check_same_model(ken, m, 2e-7);
	}
	/* Without the fallback the tiny corpus has no valid discounts. */
	llr_ngram_counter *c = llr_ngram_counter_new(3, 1 << 20, &e);
	CHECK_OK(llr_ngram_count_line(c, "a a b a", 7, &e));
	llr_kn_opts o;
	llr_kn_opts_init(&o);
	llr_ngram *x = NULL;
	CHECK(llr_ngram_estimate(c, &o, &x, NULL, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "discount") != NULL);
	llr_ngram_counter_free(c);
	llr_ngram_free(m);
	llr_ngram_free(ken);
}

/* A corpus from a seeded generator: Zipf-like words, sentences of 1-12. */
static char *random_corpus(uint64_t seed, int sentences, int V)
{
	llr_rng r;
	llr_rng_seed(&r, seed);
	llr_buf b = {0};
	for (int s = 0; s < sentences; s++) {
		int len = 1 + (int)llr_rng_below(&r, 12);
		for (int i = 0; i < len; i++) {
			double u = llr_rng_uniform(&r);
			int w = (int)(pow((double)V, u)) - 1; /* ~ 1/w */
			llr_buf_printf(&b, "%sw%d", i ? " " : "", w);
		}
		llr_buf_putc(&b, '\n');
	}
	return b.data;
}

/* sum over the vocabulary (without <s>) of p(w | ctx) for several
 * contexts, listed or not, with and without pruning (singletons of
 * orders 2 and up). */
static void test_sums_to_one(void)
{
	char *text = random_corpus(7, 400, 2000);
	for (int N = 2; N <= 8; N++) {
		llr_ngram *m = estimate_pruned(text, N <= 4 ? N : N - 3, 1, NULL, N > 4);
		if (m && N > 4) { /* pruning removed n-grams of every order >= 2 */
			llr_ngram *full = estimate(text, N - 3, 1, NULL);
			for (int n = 2; n <= N - 3; n++)
				if (!(full && llr_ngram_count(m, n) < llr_ngram_count(full, n) && (n > 2 || llr_ngram_count(m, n) > 0))) {
					printf("# N=%d n=%d %lld %lld\n", N - 3, n, (long long)llr_ngram_count(m, n), (long long)(full ? llr_ngram_count(full, n) : -1));
					t_failed_checks++;
				}
			llr_ngram_free(full);
		}
		CHECK(m != NULL);
		if (!m)
			continue;
		int32_t V = llr_ngram_vocab_size(m), bos = llr_ngram_bos(m);
		llr_rng r;
		llr_rng_seed(&r, 11);
		for (int trial = 0; trial < 12; trial++) {
			int32_t ctx[LLR_NGRAM_MAX_ORDER];
			int n = trial % llr_ngram_order(m);
			for (int k = 0; k < n; k++)
				ctx[k] = (int32_t)llr_rng_below(&r, (uint64_t)V);
			if (trial % 3 == 0 && n > 0)
				ctx[0] = bos;
			double sum = 0;
			for (int32_t w = 0; w < V; w++)
				if (w != bos)
					sum += pow(10.0, llr_ngram_log10p(m, ctx, n, w, NULL));
			CHECK_NEAR(sum, 1.0, 2e-5);
		}
		llr_ngram_free(m);
	}
	free(text);
}

static void test_round_trips(void)
{
	char *text = random_corpus(3, 300, 2000);
	llr_ngram *m = estimate(text, 3, 0, NULL);
	free(text);
	CHECK(m != NULL);
	if (!m)
		return;
	llr_err e = {0};
	char path[3][512];
	snprintf(path[0], 512, "%s/rt.arpa", test_tmpdir());
	snprintf(path[1], 512, "%s/rt.arpa.gz", test_tmpdir());
	snprintf(path[2], 512, "%s/rt.ngram", test_tmpdir());
	CHECK_OK(llr_ngram_write_arpa(m, path[0], &e));
	CHECK_OK(llr_ngram_write_arpa(m, path[1], &e));
	CHECK_OK(llr_ngram_save(m, path[2], &e));
	FILE *f = fopen(path[1], "rb");
	CHECK(f && fgetc(f) == 0x1f && fgetc(f) == 0x8b); /* gzip magic */
	if (f)
		fclose(f);
	for (int i = 0; i < 3; i++) {
		llr_ngram *r = NULL;
		CHECK(llr_ngram_sniff(path[i], &e) == 1);
		CHECK_OK(llr_ngram_load(path[i], &r, &e));
		if (r)
			check_same_model(m, r, 0); /* exact: shortest round-trip floats */
		llr_ngram_free(r);
	}
	llr_ngram_free(m);
}

/* An ARPA file with one line changed is refused with file:line: reason. */
static void arpa_error(const char *text, const char *want_line, const char *want)
{
	llr_err e = {0};
	llr_ngram *m = NULL;
	const char *p = write_tmp("bad.arpa", text);
	int rc = llr_ngram_read_arpa(p, &m, &e);
	CHECK(rc == LLR_EFORMAT);
	CHECK(m == NULL);
	char where[600];
	snprintf(where, sizeof where, "%s%s", p, want_line);
	if (strncmp(e.msg, where, strlen(where)) || !strstr(e.msg, want)) {
		printf("#   got '%s', want '%s' ... '%s'\n", e.msg, where, want);
		t_failed_checks++;
	}
}

static void test_arpa_errors(void)
{
	const char *head = "\\data\\\nngram 1=3\nngram 2=2\n\n\\1-grams:\n-1\t<s>\t-0.5\n-0.5\ta\t-0.2\n-0.3\t</s>\n\n\\2-grams:\n";
	char buf[1024];
	snprintf(buf, sizeof buf, "%s-0.1\t<s> a\n-0.2\ta </s>\n\n\\end\\\n", head);
	llr_err e = {0};
	llr_ngram *m = NULL;
	CHECK_OK(llr_ngram_read_arpa(write_tmp("good.arpa", buf), &m, &e));
	CHECK(m && llr_ngram_count(m, 2) == 2);
	if (m) /* a listed bigram; a backed-off one: bo(a) + p(a) */
		CHECK_NEAR(llr_ngram_log10p(m, (int32_t[]){1}, 1, 2, NULL), -0.2f, 1e-6);
	if (m)
		CHECK_NEAR(llr_ngram_log10p(m, (int32_t[]){1}, 1, 1, NULL), -0.2f - 0.5f, 1e-6);
	llr_ngram_free(m);

	snprintf(buf, sizeof buf, "%s-0.1\t<s> a\n\n\\end\\\n", head);
	arpa_error(buf, ":12:", "the section has fewer");
	snprintf(buf, sizeof buf, "%s-0.1\t<s> a\n-0.2\ta </s>\n-0.2\ta a\n\n\\end\\\n", head);
	arpa_error(buf, ":13:", "the section has more");
	snprintf(buf, sizeof buf, "%s-0.1\t<s> a\n-0.2x\ta </s>\n\n\\end\\\n", head);
	arpa_error(buf, ":12:", "not a number");
	snprintf(buf, sizeof buf, "%s-0.1\t<s> a\n-0.2\ta b\n\n\\end\\\n", head);
	arpa_error(buf, ":12:", "'b' is not among the 1-grams");
	snprintf(buf, sizeof buf, "%s-0.1\t<s> a\n-0.2\t<s> a\n\n\\end\\\n", head);
	arpa_error(buf, ":12:", "also on line 11");
	arpa_error("\\data\\\nngram 1=1\nngram 2=1\n\n\\1-grams:\n-1\ta\n\n\\end\\\n", ":8:", "missing section \\2-grams:");
	arpa_error("\\data\\\nngram 1=2\nngram 2=1\nngram 3=1\n\n\\1-grams:\n-1\ta\t0\n-1\tb\t0\n\n\\2-grams:\n-1\ta b\t0\n\n\\3-grams:\n-1\tb a b\n\n\\end\\\n",
	           ":14:", "prefix of this 3-gram is not listed");
	arpa_error("\\data\\\nngram 1=1\n\n\\1-grams:\n-1\ta\n", "", "no \\end\\");
	arpa_error("hello\n", "", "no \\data\\");
	arpa_error("\\data\\\nngram 1=1\nngram 3=1\n", ":3:", "expected order 2");
}

static void test_memory_bound(void)
{
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(3, 64 << 10, &e);
	CHECK(c != NULL);
	char *text = random_corpus(5, 2000, 500);
	int rc = LLR_OK;
	const char *p = text;
	while (*p && rc == LLR_OK) {
		const char *nl = strchr(p, '\n');
		rc = llr_ngram_count_line(c, p, (size_t)(nl - p), &e);
		p = nl + 1;
		CHECK(llr_ngram_counter_bytes(c) <= 64 << 10);
	}
	CHECK(rc == LLR_ERANGE);
	CHECK(strstr(e.msg, "MiB") != NULL);
	CHECK(llr_ngram_count_line(c, "<s> b", 5, &e) == LLR_EFORMAT);
	free(text);
	llr_ngram_counter_free(c);
}

/* What llr_arpa_parse_float must give: (float)strtod on the whole
 * string, -inf as -99, NaN and +inf refused. */
static int ref_parse(const char *s, float *out)
{
	char *end;
	double v = strtod(s, &end);
	if (!*s || *end || isnan(v) || (isinf(v) && v > 0))
		return -1;
	*out = (float)(isinf(v) ? -99 : v);
	return 0;
}

/* llr_arpa_parse_float on an exact-size heap copy of s (the sanitizers
 * catch a read past it), against ref_parse, bit for bit. */
static int same_parse(const char *s)
{
	float a = 1234.5f, b = 1234.5f;
	size_t n = strlen(s);
	char *copy = malloc(n ? n : 1);
	memcpy(copy, s, n);
	int ra = llr_arpa_parse_float(copy, n, &a), rb = ref_parse(s, &b);
	free(copy);
	if (ra != rb || (ra == 0 && memcmp(&a, &b, sizeof a))) {
		printf("#   '%s': parsed %d %.9g, strtod %d %.9g\n", s, ra, (double)a, rb, (double)b);
		return 0;
	}
	return 1;
}

static void test_parse_float(void)
{
	static const char *good[] = {"-1.5e-05", "-99", "0", "-0", "1.", ".5", "-.5", "+2.5", "-3.1839137", "-0.094899632", "1E3", "1e+2",
	                             "-2.4e-7", "0.000000000000000000000000001", "12345678901234567890", "-1.17549435e-38", "3.4028235e38",
	                             "1e-50", "9007199254740993", "0x1p3", "-inf", "-Infinity", "00012.500", "-0.0000", "4.9406564584124654e-324",
	                             /* 8 digits at a time: runs of 1 to 20 digits, zeros, the 19-digit limit */
	                             "-0.0", "-0", "-00000000000000000000.5", "0.12345678", "-0.41236243", "12345678", "123456789",
	                             "1234567890123456789", "12345678901234567891", "9999999999999999999", "-99.000000", "-99.0",
	                             "1E+08", "9.99999999e-01", "0.000000012345678", "1.0000000000000000000000001", "99999999.99999999",
	                             "-0.000000000000000000000000000000000000000001", "1.00000005960464477539", "-1e-99", "12345678.e2",
	                             "0.00000000", "-000000000000000000000000",
	                             /* the [-]d.ddd form of 8 bytes or more, 1 to 16 digits after the point */
	                             "-1.0000000", "1.2345678", "-1.234567", "-0.055734646", "-0.0000000000000001", "9.9999999999999999",
	                             "-9.007199254740993", "0.1234567", "-0.0000000", "1.23456e5", "-1.5e-0500", "+1.2345678"};
	static const char *bad[] = {"", "-", "+", ".", "-.", "e5", "1e", "1e+", "1e-", "1.2.3", "1,5", "--1", "1e5x", "1 ",
	                            "nan", "-nan", "inf", "+inf", "1e999", "0x", "1-", "abc", "1d5",
	                            "1.2345678x9", "12345678e", "1234567a", "-0.1234567:", "12345678901234567890a", "1.23456789-"};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		float v;
		CHECK(same_parse(good[i]));
		CHECK(llr_arpa_parse_float(good[i], strlen(good[i]), &v) == 0);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		float v;
		CHECK(same_parse(bad[i]));
		if (llr_arpa_parse_float(bad[i], strlen(bad[i]), &v) != -1)
			printf("#   %s accepted\n", bad[i]), t_failed_checks++;
	}
	float v;
	CHECK(llr_arpa_parse_float("-1.5e-05", 8, &v) == 0 && v == (float)-1.5e-05);
	CHECK(llr_arpa_parse_float("-99", 3, &v) == 0 && v == -99.0f);
	CHECK(llr_arpa_parse_float("-0.25x", 5, &v) == 0 && v == -0.25f); /* only n bytes */
	char longnum[200];
	memset(longnum, '1', sizeof longnum - 1);
	longnum[sizeof longnum - 1] = 0;
	CHECK(llr_arpa_parse_float(longnum, strlen(longnum), &v) == -1); /* longer than any number */
	/* Random decimals of the forms ARPA writers print, bit for bit. */
	llr_rng rng;
	llr_rng_seed(&rng, 13);
	int bad_count = 0;
	for (int i = 0; i < 300000 && bad_count < 5; i++) {
		char s[64];
		int len = 0, intd = (int)(llr_rng_u64(&rng) % 4), frac = (int)(llr_rng_u64(&rng) % 12);
		if (llr_rng_u64(&rng) % 4)
			s[len++] = '-';
		for (int k = 0; k < intd; k++)
			s[len++] = (char)('0' + llr_rng_u64(&rng) % 10);
		if (frac || !intd) {
			s[len++] = '.';
			for (int k = 0; k < frac + !intd; k++)
				s[len++] = (char)('0' + llr_rng_u64(&rng) % 10);
		}
		if (llr_rng_u64(&rng) % 3 == 0)
			len += snprintf(s + len, sizeof s - (size_t)len, "e%d", (int)(llr_rng_u64(&rng) % 81) - 40);
		s[len] = 0;
		bad_count += !same_parse(s);
	}
	CHECK(bad_count == 0);
	/* Long and zero-heavy mantissas (up to 20 integer and 24 fraction
	 * digits, each a 0 half the time), e/E exponents with or without a
	 * sign: around and past the 19 digits of the fast path. */
	bad_count = 0;
	for (int i = 0; i < 300000 && bad_count < 5; i++) {
		char s[96];
		int len = 0, intd = (int)(llr_rng_u64(&rng) % 21), frac = (int)(llr_rng_u64(&rng) % 25);
		uint64_t r = llr_rng_u64(&rng);
		if (r % 3)
			s[len++] = r % 3 == 1 ? '-' : '+';
		for (int k = 0; k < intd; k++)
			s[len++] = (char)('0' + (llr_rng_u64(&rng) % 2 ? 0 : llr_rng_u64(&rng) % 10));
		if (frac || !intd) {
			s[len++] = '.';
			for (int k = 0; k < frac + !intd; k++)
				s[len++] = (char)('0' + (llr_rng_u64(&rng) % 2 ? 0 : llr_rng_u64(&rng) % 10));
		}
		if (r / 3 % 4 == 0)
			len += snprintf(s + len, sizeof s - (size_t)len, "%c%s%d", r / 12 % 2 ? 'e' : 'E', r / 24 % 2 ? "+" : "",
			                (int)(llr_rng_u64(&rng) % 61) - 30);
		s[len] = 0;
		bad_count += !same_parse(s);
	}
	CHECK(bad_count == 0);
}

/* Every line of each \n-grams: section of `in`, for n >= 2, put out of
 * order (the second half shuffled, or the whole section reversed), into
 * `out`; dup_at > 0 repeats the dup_at-th 2-gram line at the end of its
 * section and raises its count in \data\. */
static void arpa_disorder(const char *in, const char *out, int reverse, int dup_at)
{
	FILE *f = fopen(in, "r"), *g = fopen(out, "w");
	char **lines = NULL, buf[4096], dup[4096] = "";
	size_t n = 0, cap = 0;
	int sec = 0;
	llr_rng rng;
	llr_rng_seed(&rng, 5);
	for (;;) {
		char *l = fgets(buf, sizeof buf, f);
		if (!l || buf[0] == '\n' || buf[0] == '\\') {
			size_t h = reverse ? 0 : n / 2;
			if (reverse)
				for (size_t i = 0; i < n / 2; i++) {
					char *t = lines[i];
					lines[i] = lines[n - 1 - i];
					lines[n - 1 - i] = t;
				}
			else
				for (size_t i = n; i > h + 1; i--) {
					size_t j = h + (size_t)(llr_rng_u64(&rng) % (i - h));
					char *t = lines[i - 1];
					lines[i - 1] = lines[j];
					lines[j] = t;
				}
			for (size_t i = 0; i < n; i++) {
				fputs(lines[i], g);
				free(lines[i]);
			}
			if (sec == 2 && dup[0])
				fputs(dup, g);
			n = 0;
		}
		if (!l)
			break;
		if (buf[0] == '\\' && buf[1] >= '1' && buf[1] <= '9')
			sec = buf[1] - '0';
		else if (buf[0] == '\\')
			sec = 0;
		if (sec >= 2 && buf[0] != '\n' && buf[0] != '\\') {
			if (n == cap)
				lines = realloc(lines, (cap = cap ? 2 * cap : 64) * sizeof *lines);
			lines[n++] = strdup(buf);
			if (sec == 2 && (int)n == dup_at)
				snprintf(dup, sizeof dup, "%s", buf);
		} else if (dup_at > 0 && !strncmp(buf, "ngram 2=", 8)) {
			fprintf(g, "ngram 2=%lld\n", atoll(buf + 8) + 1);
		} else {
			fputs(buf, g);
		}
	}
	free(lines);
	fclose(f);
	fclose(g);
}

static void test_arpa_order(void)
{
	char *text = random_corpus(7, 400, 1500);
	llr_ngram *m = estimate(text, 3, 0, NULL);
	free(text);
	CHECK(m != NULL);
	if (!m)
		return;
	llr_err e = {0};
	char path[3][512];
	snprintf(path[0], 512, "%s/ord.arpa", test_tmpdir());
	snprintf(path[1], 512, "%s/ord-shuffled.arpa", test_tmpdir());
	snprintf(path[2], 512, "%s/ord-dup.arpa", test_tmpdir());
	CHECK_OK(llr_ngram_write_arpa(m, path[0], &e));
	for (int reverse = 0; reverse <= 1; reverse++) {
		arpa_disorder(path[0], path[1], reverse, 0);
		llr_ngram *r = NULL;
		CHECK_OK(llr_ngram_read_arpa(path[1], &r, &e));
		if (r)
			check_same_model(m, r, 0);
		llr_ngram_free(r);
	}
	/* A 2-gram listed twice in a section out of order: the later line. */
	arpa_disorder(path[0], path[2], 1, 3);
	llr_ngram *r = NULL;
	CHECK(llr_ngram_read_arpa(path[2], &r, &e) == LLR_EFORMAT);
	CHECK(r == NULL && strstr(e.msg, "2-gram is also on line") != NULL);
	llr_ngram_free(m);

	/* A very long word and line; numbers as SRILM prints them. */
	size_t wl = 100000;
	char *big = malloc(3 * wl + 400);
	char *word = malloc(wl + 1);
	memset(word, 'x', wl);
	word[wl] = 0;
	snprintf(big, 3 * wl + 400, "\\data\\\nngram 1=3\nngram 2=2\n\n\\1-grams:\n-99\t<s>\t-1.5e-05\n-0.5\t%s\t-2E-1\n-3.0103e-01\t</s>\n\n\\2-grams:\n-0.1\t<s> %s\n-1e-07\t%s </s>\n\n\\end\\\n", word, word, word);
	if (llr_ngram_read_arpa(write_tmp("long.arpa", big), &r, &e) != LLR_OK)
		printf("#   %s\n", e.msg), t_failed_checks++;
	if (r) {
		llr_ngram_level lv;
		llr_ngram_level_get(r, 1, &lv);
		CHECK(lv.logp[0] == -99.0f && lv.backoff[0] == (float)-1.5e-05 && lv.backoff[1] == -0.2f && lv.logp[2] == (float)-3.0103e-01);
		CHECK(llr_ngram_word(r, word, wl) == 1);
		llr_ngram_level_get(r, 2, &lv);
		CHECK(lv.count == 2 && lv.logp[1] == (float)-1e-07);
	}
	llr_ngram_free(r);
	free(big);
	free(word);
}

/* What llr_arpa_format_float must print: %.8g, or %.9g when %.8g does
 * not read back as x; 0 and -99 as such. */
static void ref_format(char *s, float x)
{
	if (x == 0 || x == -99) {
		strcpy(s, x == 0 ? "0" : "-99");
		return;
	}
	for (int p = 8; p <= 9; p++) {
		snprintf(s, 32, "%.*g", p, (double)x);
		if (strtof(s, NULL) == x)
			break;
	}
}

static int same_format(float x)
{
	char a[48], b[48];
	size_t n = llr_arpa_format_float(a, x);
	ref_format(b, x);
	float back = 0;
	if (n != strlen(a) || strcmp(a, b) || (isfinite(x) && (llr_arpa_parse_float(a, n, &back) != 0 || back != (x == -99 ? -99 : x + 0.0f)))) {
		printf("#   %.9g: printed '%s', printf '%s'\n", (double)x, a, b);
		return 0;
	}
	return 1;
}

static void test_format_float(void)
{
	static const float fixed[] = {-1.5e-05f, -99, 0, -0.0f, 1, -1, 0.5f, -3.1839137f, -0.094899632f, 4196066.5f, -8388607.5f, 8388608, 1e-7f,
	                              -2.4e-7f, 4.76837158e-07f, 1e30f, -1e-30f, 1e-40f, 123456789, 0.1f, -0.30103f, 1e-4f, -9.99999975e-05f,
	                              99999.9922f, 999999.938f, 0x1p-21f, -0x1p-22f, 0x1.fffffep-22f, 0x1.fffffep22f, 0x1p23f, INFINITY, -INFINITY};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		CHECK(same_format(fixed[i]));
	char s[48];
	CHECK(llr_arpa_format_float(s, -1.5e-05f) == 8 && !strcmp(s, "-1.5e-05"));
	CHECK(llr_arpa_format_float(s, -0.25f) == 5 && !strcmp(s, "-0.25"));
	CHECK(llr_arpa_format_float(s, -99) == 3 && !strcmp(s, "-99"));
	/* Random floats: any bits, and the log10 range of ARPA files. */
	llr_rng rng;
	llr_rng_seed(&rng, 31);
	int bad = 0;
	for (int i = 0; i < 400000 && bad < 5; i++) {
		uint32_t bits = (uint32_t)llr_rng_u64(&rng);
		if (i % 2)
			bits = 0xb0000000u + (uint32_t)(llr_rng_u64(&rng) % 0x12c80000u); /* -4.7e-10 .. -100 */
		float x;
		memcpy(&x, &bits, 4);
		if (!isnan(x))
			bad += !same_format(x);
	}
	CHECK(bad == 0);
}

/* The counter's merges (count.c): counted with a merge every few keys,
 * a corpus gives byte for byte the ARPA file of one merge at the end. */
static char *estimate_arpa(const char *text, int order, size_t merge_at, const char *name)
{
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(order, (size_t)1 << 30, &e);
	if (!c)
		return NULL;
	if (merge_at)
		llr_ngram_counter_merge_at(c, merge_at);
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		CHECK_OK(llr_ngram_count_line(c, p, len, &e));
		p += len + (nl != NULL);
	}
	llr_kn_opts o;
	llr_kn_opts_init(&o);
	o.discount_fallback = 1;
	llr_ngram *m = NULL;
	if (llr_ngram_estimate(c, &o, &m, NULL, &e) != LLR_OK)
		printf("#   estimate: %s\n", e.msg);
	llr_ngram_counter_free(c);
	if (!m)
		return NULL;
	char path[512];
	snprintf(path, sizeof path, "%s/%s", test_tmpdir(), name);
	CHECK_OK(llr_ngram_write_arpa(m, path, &e));
	llr_ngram_free(m);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	s[fread(s, 1, (size_t)n, f)] = 0;
	fclose(f);
	return s;
}

static void test_merges(void)
{
	char *text = random_corpus(11, 600, 3000);
	for (int order = 1; order <= 4; order += 3) {
		char *one = estimate_arpa(text, order, 0, "merge0.arpa");
		CHECK(one != NULL && strstr(one, "\\end\\") != NULL);
		size_t every[] = {1, 7, 1000};
		for (size_t k = 0; k < sizeof every / sizeof *every; k++) {
			char *many = estimate_arpa(text, order, every[k], "merge1.arpa");
			CHECK(one && many && !strcmp(one, many));
			free(many);
		}
		free(one);
	}
	free(text);
}

/* The ARPA reader's word table (wordtab.c): random words of 1 to 20
 * bytes (UTF-8 bytes too) with random log-probabilities (many tied), for
 * hot parts of every size from none to all: every word gives its id, with
 * the bytes after it readable or not, and the strings that are not words
 * (a byte more, a byte less, a byte changed) give -1. */
static void test_wordtab(void)
{
	llr_rng rng;
	llr_rng_seed(&rng, 2611);
	llr_strmap *v = llr_strmap_new();
	float logp[3000];
	char buf[64];
	while (llr_strmap_size(v) < 3000) {
		size_t len = 1 + llr_rng_u64(&rng) % 20;
		for (size_t k = 0; k < len; k++)
			buf[k] = (char)("abcdefgh\xc3\xa9xyz"[llr_rng_u64(&rng) % 12]);
		size_t before = llr_strmap_size(v);
		llr_strmap_add(v, buf, len);
		if (llr_strmap_size(v) > before)
			logp[before] = -(float)(llr_rng_u64(&rng) % 40) / 8;
	}
	static const size_t hots[] = {0, 1, 7, 1000, 2999, 3000, 5000};
	int bad = 0;
	for (size_t h = 0; h < sizeof hots / sizeof *hots; h++) {
		llr_wordtab *t = llr_wordtab_new(v, logp, hots[h]);
		CHECK(t != NULL);
		for (int32_t i = 0; i < 3000 && t; i++) {
			const char *w = llr_strmap_str(v, i);
			size_t len = llr_strmap_len(v, i);
			char *exact = malloc(len); /* nothing readable after it */
			memcpy(exact, w, len);
			memset(buf, 'q', sizeof buf);
			memcpy(buf, w, len);
			bad += llr_wordtab_get(t, exact, len, len) != i;
			bad += llr_wordtab_get(t, buf, len, sizeof buf) != i;
			free(exact);
			/* not words, unless they happen to be another one */
			buf[len] = 'a';
			int32_t j = llr_wordtab_get(t, buf, len + 1, sizeof buf);
			bad += j != llr_strmap_get(v, buf, len + 1);
			if (len > 1) {
				j = llr_wordtab_get(t, buf, len - 1, sizeof buf);
				bad += j != llr_strmap_get(v, buf, len - 1);
			}
			buf[len - 1] = 'Q';
			bad += llr_wordtab_get(t, buf, len, sizeof buf) != -1;
		}
		/* Many at once: every word, and a non-word after each (its
		 * last byte changed), in runs that end inside and across the
		 * groups fetched together. */
		enum { N = 2 * 3000 };
		static char *many[N];
		static int32_t ids[N];
		for (int32_t i = 0; i < 3000 && t; i++) {
			size_t len = llr_strmap_len(v, i);
			many[2 * i] = strndup(llr_strmap_str(v, i), len);
			many[2 * i + 1] = strndup(llr_strmap_str(v, i), len);
			many[2 * i + 1][len - 1] = 'Q';
		}
		static const size_t runs[] = {1, 15, 16, 17, 33, N};
		for (size_t r = 0; r < sizeof runs / sizeof *runs && t; r++)
			for (size_t at = 0; at < N; at += runs[r]) {
				size_t k = LLR_MIN(runs[r], N - at);
				memset(ids, 0x55, sizeof ids);
				llr_wordtab_get_many(t, (const char *const *)many + at, k, ids + at);
				for (size_t i = at; i < at + k; i++)
					bad += ids[i] != (i % 2 ? -1 : (int32_t)(i / 2));
				bad += at + k < N && ids[at + k] != 0x55555555;
			}
		for (int32_t i = 0; i < N && t; i++)
			free(many[i]);
		llr_wordtab_free(t);
	}
	CHECK(bad == 0);
	llr_wordtab_free(NULL);
	llr_strmap_free(v);
}

/* The probing form answers as the trie does, to the bit: on every word
 * of random sentences (unknown words among them), by the state of the
 * suffix-closed path (llr_ngram_score_ids), by the context-by-context
 * path (closed cleared) and by llr_ngram_log10p, with matched lengths. */
static void test_probing_same(void)
{
	static const char *const words[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
	llr_buf text = {0};
	uint64_t st = 7;
	for (int line = 0; line < 800; line++) {
		int n = 1 + (int)((st = st * 6364136223846793005ull + 1442695040888963407ull) >> 60);
		for (int k = 0; k < n; k++) {
			st = st * 6364136223846793005ull + 1442695040888963407ull;
			llr_buf_printf(&text, k ? " %s" : "%s", words[(st >> 33) % (5 + line % 8)]);
		}
		llr_buf_putc(&text, '\n');
	}
	llr_buf_putc(&text, 0);
	for (int pruned = 0; pruned <= 1; pruned++) {
		double D[LLR_NGRAM_MAX_ORDER * 3];
		llr_ngram *t = estimate_pruned(text.data, 4, 1, D, pruned), *p = estimate_pruned(text.data, 4, 1, D, pruned);
		llr_err e = {0};
		CHECK(t && p && llr_ngram_probe_build(p, &e) == LLR_OK);
		if (!t || !p || !p->probe)
			return;
		llr_ngram_drop_trie(p);
		CHECK(p->probe->closed);
		int32_t h[40];
		float a[40], b[40];
		int32_t la[40], lb[40];
		int same = 1, same_len = 1;
		/* the 300 sentences one after the other: ids, figures, lengths */
		static int32_t bh[300 * 40], bla[300 * 40], blb[300 * 40];
		static float ba[300 * 40], bb[300 * 40];
		size_t bn[300], nh = 0, na = 0;
		for (int s = 0; s < 300; s++) {
			st = st * 6364136223846793005ull + 1442695040888963407ull;
			size_t n = 1 + (st >> 59);
			h[0] = llr_ngram_bos(t);
			for (size_t k = 1; k <= n; k++) {
				st = st * 6364136223846793005ull + 1442695040888963407ull;
				int32_t w = (int32_t)((st >> 33) % 16);
				h[k] = w < llr_ngram_vocab_size(t) && w != h[0] ? w : -1;
			}
			for (size_t k = 1; k <= n; k++) {
				int nctx = (int)LLR_MIN(k, (size_t)3), m = 0;
				a[k - 1] = h[k] >= 0 ? llr_ngram_log10p(t, h + k - nctx, nctx, h[k], &m) : 0.0f;
				la[k - 1] = m;
			}
			for (int closed = 1; closed >= 0; closed--) {
				p->probe->closed = closed;
				CHECK(llr_ngram_score_ids(p, h, n, b, lb, &e) == LLR_OK);
				same &= !memcmp(a, b, n * sizeof *a);
				same_len &= !memcmp(la, lb, n * sizeof *la);
			}
			p->probe->closed = 1;
			/* the batch: this sentence after the ones before it */
			memcpy(bh + nh, h, (n + 1) * sizeof *h);
			memcpy(ba + na, a, n * sizeof *a);
			memcpy(bla + na, la, n * sizeof *la);
			bn[s] = n;
			nh += n + 1;
			na += n;
		}
		CHECK(same);
		CHECK(same_len);
		/* All 300 sentences as one batch, and as batches of 1 to 7 (the
		 * lookups fetched across sentences), by both paths. */
		int same_batch = 1;
		for (int closed = 1; closed >= 0; closed--) {
			p->probe->closed = closed;
			for (size_t B = 1; B <= 300; B = B < 7 ? B + 1 : B == 7 ? 300 : 301) {
				memset(bb, 0, na * sizeof *bb);
				memset(blb, 0, na * sizeof *blb);
				for (size_t s = 0, ih = 0, ia = 0; s < 300; s += B) {
					size_t k = LLR_MIN(B, 300 - s), th = 0, ta = 0;
					for (size_t j = s; j < s + k; j++) {
						th += bn[j] + 1;
						ta += bn[j];
					}
					CHECK(llr_ngram_score_batch(p, bh + ih, bn + s, k, bb + ia, blb + ia, &e) == LLR_OK);
					ih += th;
					ia += ta;
				}
				same_batch &= !memcmp(ba, bb, na * sizeof *ba) && !memcmp(bla, blb, na * sizeof *bla);
			}
		}
		p->probe->closed = 1;
		CHECK(same_batch);
		/* The words at once, by the trie's vocabulary and the table. */
		static const char *const some[] = {"a", "zz", "b", "l", "", "<s>", "k", "c", "</s>", "a"};
		int32_t wt[10], wp[10], same_words = 1;
		llr_ngram_words(t, some, 10, wt);
		llr_ngram_words(p, some, 10, wp);
		for (int i = 0; i < 10; i++)
			same_words &= wt[i] == llr_ngram_word(t, some[i], strlen(some[i])) && wp[i] == wt[i];
		CHECK(same_words && wt[1] == -1 && wt[0] >= 0);
		llr_ngram_free(t);
		llr_ngram_free(p);
	}
	llr_buf_free(&text);
}

/* Open the probing file at path with its tables read where they are
 * mapped (in_place) rather than from a copy, as map_tables chooses for
 * a mapping in 2 MiB pages or tables over 256 MiB, which a test cannot
 * count on: the copies made at load (none touched yet) dropped. */
static llr_ngram *open_probing(const char *path, int in_place)
{
	llr_err e = {0};
	llr_ngram *m = NULL;
	if (llr_ngram_open(path, LLR_NGRAM_PROBE, &m, &e) != LLR_OK) {
		printf("#   open %s: %s\n", path, e.msg);
		return NULL;
	}
	for (int n = 2; in_place && n <= m->order; n++) {
		llr_ngram_probe *p = m->probe;
		free(p->own[n - 1]);
		p->own[n - 1] = NULL;
		p->tab[n - 1] = p->src[n - 1];
	}
	return m;
}

/* The probing binary read in place (no copy of its tables) scores as
 * the copy and the trie do, to the bit, in batches that cross the
 * scorer's windows of 256 tokens; a corrupt table read in place is
 * found on use (the CRC of each block still checked, lazily); and
 * llr_tarmap_huge refuses ranges outside the mapping or under 2 MiB. */
static void test_probing_in_place(void)
{
	char *text = random_corpus(5, 4000, 3000);
	double D[LLR_NGRAM_MAX_ORDER * 3];
	llr_ngram *t = estimate(text, 4, 1, D);
	llr_err e = {0};
	char path[512], bad[512];
	snprintf(path, sizeof path, "%s/inplace.probing", test_tmpdir());
	snprintf(bad, sizeof bad, "%s/inplace-bad.probing", test_tmpdir());
	CHECK(t && llr_ngram_save_probing(t, path, &e) == LLR_OK);
	llr_ngram *c = open_probing(path, 0), *p = open_probing(path, 1);
	CHECK(c && p && p->probe->closed && p->probe->tab[1] == p->probe->src[1] && c->probe->tab[1] != c->probe->src[1]);
	if (!t || !c || !p) {
		free(text);
		return;
	}
	CHECK(c->probe->nb[1] > 2 << LLR_PROBE_BLOCK_SHIFT); /* the lazy checks span blocks */
	/* the training text's first S lines, 1 word in 50 unknown (-1),
	 * 1 sentence in 7 without <s> */
	enum { S = 400 };
	static int32_t h[S * 14], la[S * 13], lb[S * 13], lc[S * 13];
	static float a[S * 13], b[S * 13], cc[S * 13];
	size_t n[S], nh = 0, na = 0;
	llr_rng r;
	llr_rng_seed(&r, 9);
	const char *line = text;
	for (int s = 0; s < S; s++) {
		const char *nl = strchr(line, '\n');
		size_t pos = 0, tl, k = 0;
		const char *tok;
		h[nh] = s % 7 ? llr_ngram_bos(t) : -1;
		while (llr_token_next(line, (size_t)(nl - line), &pos, &tok, &tl))
			h[nh + ++k] = llr_rng_below(&r, 50) ? llr_ngram_word(t, tok, tl) : -1;
		n[s] = k;
		line = nl + 1;
		for (k = 1; k <= n[s]; k++) {
			size_t nctx = LLR_MIN(k, (size_t)3);
			int m = 0;
			a[na + k - 1] = h[nh + k] >= 0 ? llr_ngram_log10p(t, h + nh + k - nctx, (int)nctx, h[nh + k], &m) : 0.0f;
			la[na + k - 1] = m;
		}
		nh += n[s] + 1;
		na += n[s];
	}
	free(text);
	CHECK(na > 4 * 256);
	CHECK(llr_ngram_score_batch(c, h, n, S, cc, lc, &e) == LLR_OK);
	CHECK(llr_ngram_score_batch(p, h, n, S, b, lb, &e) == LLR_OK);
	CHECK(!memcmp(a, b, na * sizeof *a) && !memcmp(la, lb, na * sizeof *la));
	CHECK(!memcmp(a, cc, na * sizeof *a) && !memcmp(la, lc, na * sizeof *la));
	int longest = 0;
	for (size_t i = 0; i < na; i++)
		longest = LLR_MAX(longest, lb[i]);
	CHECK(longest == 4);
	/* a byte of the 3-gram table's last block flipped */
	llr_tarmap *tm = NULL;
	CHECK_OK(llr_tarmap_open(path, &tm, &e));
	const llr_tarmap_member *mem = tm ? llr_tarmap_find(tm, "3/table.npy") : NULL;
	CHECK(mem != NULL);
	if (!mem) {
		llr_tarmap_close(tm);
		return;
	}
	size_t at = (size_t)(mem->data - llr_tarmap_at(tm, 0)->data) + mem->size - 5;
	int huge_small = llr_tarmap_huge(tm, mem->data, mem->size), huge_out = llr_tarmap_huge(tm, mem->data - 4096, (size_t)1 << 40);
	CHECK(huge_small == 0 && huge_out == 0);
	llr_tarmap_close(tm);
	FILE *in = fopen(path, "rb"), *out = fopen(bad, "wb");
	for (int ch, i = 0; in && out && (ch = getc(in)) != EOF; i++)
		putc((size_t)i == at ? ch ^ 0x40 : ch, out);
	fclose(in);
	fclose(out);
	llr_ngram *q = open_probing(bad, 1);
	CHECK(q && llr_ngram_status(q, &e) == LLR_OK);
	if (q) {
		int rc = llr_ngram_score_batch(q, h, n, S, b, lb, &e);
		CHECK(rc == LLR_EFORMAT && strstr(e.msg, "member 3/table.npy: block") && strstr(e.msg, "checksum mismatch"));
	}
	llr_ngram_free(q);
	llr_ngram_free(t);
	llr_ngram_free(c);
	llr_ngram_free(p);
}

int main(void)
{
	PLAN(13);
	RUN(test_hand_worked);
	RUN(test_kenlm_toy);
	RUN(test_sums_to_one);
	RUN(test_round_trips);
	RUN(test_arpa_errors);
	RUN(test_memory_bound);
	RUN(test_merges);
	RUN(test_parse_float);
	RUN(test_format_float);
	RUN(test_arpa_order);
	RUN(test_wordtab);
	RUN(test_probing_same);
	RUN(test_probing_in_place);
	DONE();
}
