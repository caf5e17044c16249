/*
 * test_spelling.c - unit tests for lib/ngram/spelling.c: the spelling
 * model's probabilities of all strings sum to one (by dynamic programming
 * over its contexts, and by enumerating every short string through
 * llr_spelling_logp), unseen characters share <unk>'s mass, every input
 * gets a finite log-probability, and bad training words are refused.
 */
#include <math.h>

#include "llrnn.h"
#include "spelling_fixture.h"
#include "test.h"

static const char *const words[] = {"le", "la", "les", "chat", "chats", "chien", "chiens", "été", "le", "chat"};

/* p(x | ctx[0..n)) of the character model. */
static double p(const llr_ngram *m, const int32_t *ctx, int n, int32_t x)
{
	return pow(10.0, llr_ngram_log10p(m, ctx, n, x, NULL));
}

/* The total mass of the strings of at most L characters, unseen ones as
 * <unk> (their class: p(<unk> | h) for the U of them together): a walk
 * over the contexts of the order-3 model, (a, b) with a = -1 at the
 * start, where the context is <s> b. */
static double mass_upto(const llr_ngram *m, int L)
{
	int32_t V = llr_ngram_vocab_size(m), bos = llr_ngram_bos(m), eos = llr_ngram_eos(m);
	size_t S = (size_t)(V + 1) * (size_t)V;
	double *cur = calloc(S, sizeof *cur), *nxt = calloc(S, sizeof *nxt), total = 0;
#define AT(a, b) ((size_t)((a) + 1) * (size_t)V + (size_t)(b))
	cur[AT(-1, bos)] = 1;
	for (int len = 0; len <= L; len++) {
		memset(nxt, 0, S * sizeof *nxt);
		for (int32_t a = -1; a < V; a++)
			for (int32_t b = 0; b < V; b++) {
				double w = cur[AT(a, b)];
				if (w == 0)
					continue;
				int32_t ctx[2] = {a, b};
				int n = a < 0 ? 1 : 2;
				const int32_t *c = a < 0 ? ctx + 1 : ctx;
				total += w * p(m, c, n, eos);
				if (len < L)
					for (int32_t x = 0; x < V; x++)
						if (x != bos && x != eos)
							nxt[AT(b, x)] += w * p(m, c, n, x);
			}
		double *t = cur;
		cur = nxt;
		nxt = t;
	}
#undef AT
	free(cur);
	free(nxt);
	return total;
}

static void test_normalised(void)
{
	llr_spelling *s = fixture_spelling(words, sizeof words / sizeof *words, 3);
	CHECK(s != NULL);
	if (!s)
		return;
	const llr_ngram *m = llr_spelling_ngram(s);
	/* the probabilities are stored as float log10: each context's sum is
	 * 1 to about 1e-7, and the walk has converged by 80 characters */
	double all = mass_upto(m, 80), more = mass_upto(m, 160);
	printf("# mass of the strings up to 80 characters: %.12f, up to 160: %.12f\n", all, more);
	CHECK(fabs(all - 1) < 1e-6);
	CHECK(fabs(more - all) < 1e-12);

	/* every string of at most 3 characters through llr_spelling_logp:
	 * the seen characters, and one unseen character standing for the U
	 * unseen ones (its probability times U) */
	int32_t V = llr_ngram_vocab_size(m);
	const char *alpha[64];
	int na = 0;
	for (int32_t x = 0; x < V; x++)
		if (x != llr_ngram_bos(m) && x != llr_ngram_eos(m) && x != llr_ngram_unk(m))
			alpha[na++] = llr_ngram_token(m, x);
	double U = 1112064.0 - na;
	alpha[na++] = "Ω"; /* never seen */
	double enumerated = 0;
	char buf[64];
	for (int len = 0; len <= 3; len++) {
		int idx[3] = {0, 0, 0};
		for (;;) {
			size_t bl = 0;
			int unseen = 0;
			for (int i = 0; i < len; i++) {
				size_t k = strlen(alpha[idx[i]]);
				memcpy(buf + bl, alpha[idx[i]], k);
				bl += k;
				unseen += idx[i] == na - 1;
			}
			enumerated += exp(llr_spelling_logp(s, buf, bl)) * pow(U, unseen);
			int i = 0;
			while (i < len && ++idx[i] == na)
				idx[i++] = 0;
			if (i == len)
				break;
		}
	}
	double dp3 = mass_upto(m, 3);
	printf("# strings up to 3 characters: enumerated %.12f, walked %.12f\n", enumerated, dp3);
	CHECK(fabs(enumerated - dp3) < 1e-9);
	CHECK(dp3 > 0.2 && dp3 < 1);

	/* a word of the list against the product of its characters */
	int32_t c = llr_ngram_word(m, "c", 1), h = llr_ngram_word(m, "h", 1), a = llr_ngram_word(m, "a", 1),
	        t = llr_ngram_word(m, "t", 1), bos = llr_ngram_bos(m), eos = llr_ngram_eos(m);
	int32_t h1[1] = {bos}, h2[2] = {bos, c}, h3[2] = {c, h}, h4[2] = {h, a}, h5[2] = {a, t};
	double want = log(p(m, h1, 1, c)) + log(p(m, h2, 2, h)) + log(p(m, h3, 2, a)) + log(p(m, h4, 2, t)) + log(p(m, h5, 2, eos));
	CHECK_NEAR(llr_spelling_logp(s, "chat", 4), want, 1e-9);
	/* an unseen character: <unk>'s share, and <unk> in the next context */
	int32_t unk = llr_ngram_unk(m), g2[2] = {a, unk};
	want = log(p(m, h1, 1, c)) + log(p(m, h2, 2, h)) + log(p(m, h3, 2, a)) + log(p(m, h4, 2, unk)) - log(U) +
	       log(p(m, g2, 2, eos));
	CHECK_NEAR(llr_spelling_logp(s, "cha\xe2\x82\xac", 6), want, 1e-9);
	llr_spelling_free(s);
}

static void test_finite(void)
{
	llr_spelling *s = fixture_spelling(words, sizeof words / sizeof *words, 3);
	CHECK(s != NULL);
	if (!s)
		return;
	const char *odd[] = {"", "\xff\xfe", "a b", "a\tb", "<s>", "</s>", "<unk>", "\xe2\x82", "zzzzzzzz"};
	for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
		double lp = llr_spelling_logp(s, odd[i], strlen(odd[i]));
		CHECK(isfinite(lp) && lp < 0);
	}
	size_t n = 20000;
	char *lng = malloc(n);
	memset(lng, 'e', n);
	double lp = llr_spelling_logp(s, lng, n);
	CHECK(isfinite(lp) && lp < -1000);
	free(lng);
	/* a word of the list is likelier than a misspelling of it */
	CHECK(llr_spelling_logp(s, "chat", 4) > llr_spelling_logp(s, "chqt", 4));
	CHECK(llr_spelling_logp(s, "chiens", 6) > llr_spelling_logp(s, "cheins", 6));
	llr_spelling_free(s);
}

static void test_count_errors(void)
{
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(3, (size_t)1 << 24, &e);
	CHECK(llr_spelling_count(c, "", 0, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "empty word") != NULL);
	CHECK(llr_spelling_count(c, "a b", 3, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "'a b': a word cannot hold a space") != NULL);
	CHECK(llr_spelling_count(c, "a\xff", 2, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "not valid UTF-8") != NULL);
	CHECK(llr_spelling_count(c, "été", strlen("été"), &e) == LLR_OK);
	llr_ngram_counter_free(c);
	/* a model without <unk> is refused */
	llr_ngram *m = NULL;
	char path[512];
	snprintf(path, sizeof path, "%s/spell-nounk.arpa", test_tmpdir());
	FILE *f = fopen(path, "w");
	fputs("\\data\\\nngram 1=3\n\n\\1-grams:\n-99\t<s>\n-0.3\ta\n-0.3\t</s>\n\n\\end\\\n", f);
	fclose(f);
	if (llr_ngram_read_arpa(path, &m, &e) != LLR_OK)
		printf("# %s\n", e.msg);
	CHECK(m != NULL);
	remove(path);
	if (m) {
		CHECK(llr_spelling_new(m, &e) == NULL);
		CHECK(strstr(e.msg, "needs <unk>") != NULL);
		llr_ngram_free(m);
	}
	/* a model of words, not characters, is refused */
	f = fopen(path, "w");
	fputs("\\data\\\nngram 1=4\n\n\\1-grams:\n-99\t<s>\n-0.5\t<unk>\n-0.3\tab\n-0.3\t</s>\n\n\\end\\\n", f);
	fclose(f);
	m = NULL;
	CHECK(llr_ngram_read_arpa(path, &m, &e) == LLR_OK);
	remove(path);
	if (m) {
		CHECK(llr_spelling_new(m, &e) == NULL);
		CHECK(strstr(e.msg, "not a character model: its token 'ab'") != NULL);
		llr_ngram_free(m);
	}
}

/* Draws from llr_spelling_sample: each carries its own llr_spelling_logp,
 * and the frequency of every string likely enough to count matches
 * p_spell within 5 standard errors of a binomial count; so does the share
 * of draws that start with a character the model never saw. */
static void test_sample(void)
{
	llr_spelling *s = fixture_spelling(words, sizeof words / sizeof *words, 3);
	CHECK(s != NULL);
	if (!s)
		return;
	enum { DRAWS = 100000 };
	llr_rng rng;
	llr_rng_seed(&rng, 42);
	llr_strmap *seen = llr_strmap_new();
	int64_t *count = calloc(DRAWS, sizeof *count);
	llr_buf b = {0};
	llr_err e = {0};
	int logp_bad = 0, unseen = 0;
	for (int i = 0; i < DRAWS; i++) {
		double lp = 0;
		if (llr_spelling_sample(s, &rng, &b, &lp, &e) != LLR_OK) {
			printf("# sample: %s\n", e.msg);
			t_failed_checks++;
			break;
		}
		const char *w = b.data ? b.data : "";
		if (fabs(lp - llr_spelling_logp(s, w, b.len)) > 1e-9)
			logp_bad++;
		int32_t cp;
		int k = b.len ? llr_utf8_decode(w, b.len, &cp) : 0;
		if (k > 0 && llr_ngram_word(llr_spelling_ngram(s), w, (size_t)k) < 0)
			unseen++; /* the first character is one the model never saw */
		count[llr_strmap_add(seen, w, b.len)]++;
	}
	CHECK(logp_bad == 0);
	int tested = 0;
	for (int32_t i = 0; i < (int32_t)llr_strmap_size(seen); i++) {
		double want = DRAWS * exp(llr_spelling_logp(s, llr_strmap_str(seen, i), llr_strmap_len(seen, i)));
		if (want < 50)
			continue;
		tested++;
		double sd = sqrt(want * (1 - want / DRAWS));
		if (fabs((double)count[i] - want) > 5 * sd) {
			printf("# '%s': %lld draws, p_spell says %.1f\n", llr_strmap_str(seen, i), (long long)count[i], want);
			t_failed_checks++;
		}
	}
	CHECK(tested >= 10);
	/* draws that start with an unseen character: p(<unk> | <s>) */
	const llr_ngram *m = llr_spelling_ngram(s);
	int32_t bos = llr_ngram_bos(m);
	double want = DRAWS * pow(10.0, llr_ngram_log10p(m, &bos, 1, llr_ngram_unk(m), NULL));
	CHECK(want > 100 && fabs(unseen - want) <= 5 * sqrt(want));
	printf("# %d distinct strings tested; %d draws start with an unseen character, p_spell says %.1f\n", tested, unseen, want);
	free(count);
	llr_strmap_free(seen);
	llr_buf_free(&b);
	llr_spelling_free(s);
}

int main(void)
{
	PLAN(4);
	RUN(test_normalised);
	RUN(test_finite);
	RUN(test_count_errors);
	RUN(test_sample);
	DONE();
}
