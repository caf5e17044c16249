/*
 * test_openpass.c - the exact signature masses (issue 14): the forward
 * pass over all strings (openpass.c) against brute force over every
 * string of up to 3 characters (the unseen characters by class), each
 * string's class row against llr_lexicon_any_row, the masses summing to
 * one, and the lists (openexact.c): the years and Roman ordinals, the
 * known strings, the hunspell dictionary's listed forms; then the
 * signature masses llr_lexicon_estimate_sigs makes from them, against
 * the sampled ones within their standard errors.
 */
#include "internal.h"
#include "lexicon_fixture.h"
#include "llrnn.h"
#include "spelling_fixture.h"
#include "test.h"

static const char *const words[] = {"le", "la", "les", "chat", "Chats", "chien-loup", "1999", "12,5", "3e",
                                    "XIVe", "rats", "dort", "A", "www.x", "a@b.c", "2nd", "la", "le", "http://z"};

/* vocab le la </s> <unk>; features: TOP:@notTop, OOV:@oov, every ORTH:
 * name, the suffixes of up to 2 characters of the words above (and
 * SUF:^a$ style whole words); a spelling model of order 3 on the words. */
static llr_lexicon *pass_lexicon_lines(const char *const *lines, size_t nl)
{
	llr_lexicon *x = calloc(1, sizeof *x);
	x->vocab = llr_strmap_new();
	const char *v[] = {"le", "la", "</s>", "<unk>"};
	for (int i = 0; i < 4; i++)
		llr_strmap_add(x->vocab, v[i], strlen(v[i]));
	x->features = llr_strmap_new();
	const char *f[] = {"TOP:le", "TOP:la", "TOP:</s>", "TOP:@notTop", "OOV:@oov", "ORTH:number", "ORTH:decimal",
	                   "ORTH:year", "ORTH:ordinal", "ORTH:has-digit", "ORTH:punct", "ORTH:cap", "ORTH:allcaps",
	                   "ORTH:hyphen", "ORTH:url", "ORTH:email", "ORTH:len1", "ORTH:len2", "ORTH:len3-4", "ORTH:len5-7",
	                   "ORTH:len8-11", "ORTH:len12+", "SUF:e$", "SUF:s$", "SUF:^a$", "SUF:^le$", "SUF:es$", "SUF:t$",
	                   "SUF:9$", "SUF:,5$", "SUF:-$", "SUF:^-$", "SUF:Ve$", "SUF:ts$"};
	int nf = (int)(sizeof f / sizeof *f);
	for (int i = 0; i < nf; i++)
		llr_strmap_add(x->features, f[i], strlen(f[i]));
	llr_csr_builder *b = llr_csr_builder_new(nf);
	int32_t r[4][4] = {{0, 17, 22, 25}, {1, 17}, {2}, {3}};
	size_t rn[4] = {4, 2, 1, 1};
	for (int i = 0; i < 4; i++)
		llr_csr_builder_row(b, r[i], NULL, rn[i], NULL);
	x->phi = llr_csr_builder_finish(b, NULL);
	x->logb = calloc(4, sizeof *x->logb);
	for (int i = 0; i < 4; i++)
		x->logb[i] = logf(0.25f);
	x->eos_id = 2;
	x->unk_id = 3;
	x->extract.suffix = 2;
	x->extract.ortho = 1;
	x->meta = llr_meta_new();
	llr_meta_set(x->meta, "top", "1");
	x->spell = fixture_spelling_lines(words, sizeof words / sizeof *words, lines, nl, 3);
	CHECK(x->spell != NULL);
	x->spell_lambda = 0.1;
	return x;
}

static llr_lexicon *pass_lexicon(void)
{
	return pass_lexicon_lines(NULL, 0);
}

/* x, or NULL (x freed) when its spelling model could not be made (the
 * fixture has printed why). */
static llr_lexicon *with_spelling(llr_lexicon *x)
{
	if (x->spell)
		return x;
	llr_lexicon_free(x);
	return NULL;
}

/* pass_lexicon's with tests/fixtures/open/mini embedded and its
 * features HS:@known and OOV:HS:@known among the columns. */
static void add_dictionary(llr_lexicon *x)
{
	llr_err e = {0};
	llr_strmap_add(x->features, "HS:@known", 9);
	llr_strmap_add(x->features, "OOV:HS:@known", 13);
	x->phi->cols = (int32_t)llr_strmap_size(x->features);
	CHECK_OK(llr_lexicon_set_hunspell(x, "tests/fixtures/open/mini", &e));
}

/* The seen characters' strings and one representative of each class of
 * unseen code points with its count. */
typedef struct alphabet {
	char s[256][5];
	size_t len[256];
	double mult[256]; /* 1, or the class's count of unseen code points */
	int n;
} alphabet;

static int is_seen(const llr_ngram *m, int32_t cp)
{
	char b[5];
	int k = llr_utf8_encode(cp, b);
	int32_t x = llr_ngram_word(m, b, (size_t)k);
	return cp != ' ' && cp != '\t' && x >= 0 && x != llr_ngram_bos(m) && x != llr_ngram_eos(m) && x != llr_ngram_unk(m);
}

static void make_alphabet(const llr_ngram *m, alphabet *a)
{
	static double cnt[LLR_ORTHO_CLASSES];
	static int32_t rep[LLR_ORTHO_CLASSES];
	memset(cnt, 0, sizeof cnt);
	a->n = 0;
	for (int32_t cp = 0; cp < 0x110000; cp++) {
		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		if (is_seen(m, cp)) {
			a->len[a->n] = (size_t)llr_utf8_encode(cp, a->s[a->n]);
			a->mult[a->n++] = 1;
			continue;
		}
		int c = llr_ortho_class(cp);
		if (!cnt[c] || cp == '^')
			rep[c] = cp; /* '^' (a class of its own, an extra of SUF:^a$) stands for itself */
		cnt[c] += 1;
	}
	for (int c = 0; c < LLR_ORTHO_CLASSES; c++) {
		if (!cnt[c])
			continue;
		a->len[a->n] = (size_t)llr_utf8_encode(rep[c], a->s[a->n]);
		a->mult[a->n++] = cnt[c];
	}
}

static int add_string(const char *w, size_t len, void *ctx)
{
	return llr_strmap_add(ctx, w, len) < 0 ? LLR_ENOMEM : LLR_OK;
}

/* Every string of 1 to 3 characters (by class) against the pass cut at
 * 3: the mass of each class, and each string's row against its class's. */
static void brute_force(llr_lexicon *x)
{
	if (!(x = with_spelling(x)))
		return;
	llr_err e = {0};
	char why[256];
	llr_openpass *p = NULL;
	CHECK_OK(llr_openpass_new_upto(x, 3, &p, why, sizeof why, &e));
	CHECK(p != NULL);
	if (!p) {
		printf("# %s %s\n", why, e.msg);
		llr_lexicon_free(x);
		return;
	}
	alphabet *a = calloc(1, sizeof *a);
	make_alphabet(llr_spelling_ngram(x->spell), a);
	llr_strmap *lists = llr_strmap_new(); /* the years and Roman ordinals: rows of their own */
	CHECK_OK(llr_extract_ortho_lists(add_string, lists));
	int32_t C = llr_openpass_classes(p);
	double *brute = calloc((size_t)C, sizeof *brute);
	double lost = 0;
	int32_t cols[64], rc[256];
	float rv[256];
	long bad_rows = 0, strings = 0;
	/* the empty string too */
	double pe = exp(llr_spelling_logp(x->spell, "", 0));
	int32_t c0 = llr_openpass_class_of(p, "", 0);
	CHECK(c0 >= 0);
	if (c0 >= 0)
		brute[c0] += pe;
	for (int n = 1; n <= 3; n++) {
		long total = 1;
		for (int i = 0; i < n; i++)
			total *= a->n;
		for (long t = 0; t < total; t++) {
			char w[32];
			size_t len = 0;
			double mult = 1;
			long r = t;
			for (int i = 0; i < n; i++, r /= a->n) {
				size_t k = a->len[r % a->n];
				memcpy(w + len, a->s[r % a->n], k);
				len += k;
				mult *= a->mult[r % a->n];
			}
			double q = mult * exp(llr_spelling_logp(x->spell, w, len));
			int32_t c = llr_openpass_class_of(p, w, len);
			strings++;
			if (c < 0) {
				lost += q;
				continue;
			}
			brute[c] += q;
			if (llr_strmap_get(x->vocab, w, len) >= 0 || llr_strmap_get(lists, w, len) >= 0)
				continue;
			size_t m = 0, k = llr_openpass_row(p, c, cols, 64);
			CHECK_OK(llr_lexicon_any_row(x, w, len, 0, rc, rv, 256, &m, &e));
			if (m != k || memcmp(cols, rc, k * sizeof *cols)) {
				if (bad_rows < 5) {
					printf("# '%.*s': its row is not its class's:", (int)len, w);
					for (size_t i = 0; i < m; i++)
						printf(" %s", llr_strmap_str(x->features, rc[i]));
					printf(" /");
					for (size_t i = 0; i < k; i++)
						printf(" %s", llr_strmap_str(x->features, cols[i]));
					printf("\n");
				}
				bad_rows++;
			}
		}
	}
	CHECK(lost == 0);
	CHECK(bad_rows == 0);
	double worst = 0, sum = 0;
	for (int32_t c = 0; c < C; c++) {
		double d = fabs(brute[c] - llr_openpass_mass(p, c));
		worst = d > worst ? d : worst;
		sum += llr_openpass_mass(p, c);
	}
	CHECK_NEAR(worst, 0, 1e-12);
	printf("# %ld strings of up to 3 characters over %d symbols, %d classes, mass %.12f, largest difference %.3g\n",
	       strings, a->n, C, sum, worst);
	free(brute);
	free(a);
	llr_strmap_free(lists);
	llr_openpass_free(p);
	llr_lexicon_free(x);
}

static void test_pass_brute_force(void)
{
	brute_force(pass_lexicon());
}

/* A spelling model whose contexts hold <unk> (a character seen only as
 * unknown in its training lines): the pass must also follow them after
 * an extra, the '^' of SUF:^a$, which the model takes as <unk> too
 * (openpass.c's variants of those contexts). */
static void test_pass_unk_contexts(void)
{
	static const char *const lines[] = {"l <unk> a", "<unk> e s", "c <unk> <unk>", "a <unk>"};
	brute_force(pass_lexicon_lines(lines, sizeof lines / sizeof *lines));
}

/* Draws from the spelling model: how many (outside the vocabulary and
 * the lists of years and Roman ordinals) have a row other than their
 * class's. */
static long draws_agree(llr_lexicon *x, llr_openpass *p, int n)
{
	llr_err e = {0};
	llr_strmap *lists = llr_strmap_new();
	CHECK_OK(llr_extract_ortho_lists(add_string, lists));
	llr_rng rng;
	llr_rng_seed(&rng, 3);
	llr_buf w = {0};
	int32_t cols[64], rc[256];
	float rv[256];
	long bad = 0, listed = 0;
	for (int i = 0; i < n; i++) {
		CHECK_OK(llr_spelling_sample(x->spell, &rng, &w, NULL, &e));
		const char *s = w.data ? w.data : "";
		if (llr_strmap_get(x->vocab, s, w.len) >= 0 || llr_strmap_get(lists, s, w.len) >= 0) {
			listed++;
			continue;
		}
		int32_t c = llr_openpass_class_of(p, s, w.len);
		size_t m = 0, k = c >= 0 ? llr_openpass_row(p, c, cols, 64) : 0;
		CHECK_OK(llr_lexicon_any_row(x, s, w.len, 0, rc, rv, 256, &m, &e));
		if ((c < 0 || m != k || memcmp(cols, rc, k * sizeof *cols)) && !bad++)
			printf("# '%s': its row is not its class's\n", s);
	}
	printf("# %d draws: %ld in the vocabulary or the lists, %ld of the rest not with their class's row\n", n, listed, bad);
	llr_buf_free(&w);
	llr_strmap_free(lists);
	return bad;
}

/* The whole pass: the classes and what it left unassigned sum to one;
 * drawn strings get the row of their class. */
static void test_pass_total(void)
{
	llr_lexicon *x = with_spelling(pass_lexicon());
	if (!x)
		return;
	llr_err e = {0};
	char why[256];
	llr_openpass *p = NULL;
	CHECK_OK(llr_openpass_new(x, &p, why, sizeof why, &e));
	CHECK(p != NULL);
	if (!p) {
		llr_lexicon_free(x);
		return;
	}
	double sum = 0;
	for (int32_t c = 0; c < llr_openpass_classes(p); c++)
		sum += llr_openpass_mass(p, c);
	double un = llr_openpass_unassigned(p);
	CHECK(un >= 0 && un < 1e-15);
	/* the spelling model's own total: its next-character distributions
	 * sum to 1 only to float rounding (its log10 p are floats) */
	double worst = 0;
	const llr_ngram *m = llr_spelling_ngram(x->spell);
	int32_t ctx[2] = {llr_ngram_bos(m), 0};
	for (int32_t c = -1; c < llr_ngram_vocab_size(m); c++) {
		double t = 0;
		ctx[1] = c;
		for (int32_t a = 0; a < llr_ngram_vocab_size(m); a++)
			if (a != llr_ngram_bos(m))
				t += pow(10.0, (double)llr_ngram_log10p(m, ctx, c < 0 ? 1 : 2, a, NULL));
		worst = fabs(t - 1) > worst ? fabs(t - 1) : worst;
	}
	printf("# the spelling model's next-character sums: 1 within %.2g\n", worst);
	CHECK(worst < 1e-6);
	CHECK_NEAR(sum + un, 1.0, 1e-6);
	int32_t nodes, ost;
	int steps;
	llr_openpass_stats(p, &nodes, &ost, &steps);
	printf("# %d classes, %d trie nodes, %d ortho states, %d characters, mass %.15f\n", llr_openpass_classes(p), nodes,
	       ost, steps, sum);
	CHECK(draws_agree(x, p, 20000) == 0);
	llr_openpass_free(p);
	llr_lexicon_free(x);
}

/* Suffixes of 4 characters (--suffix 4): SUF:hats$ fires on Chats (5
 * characters), SUF:^chat$ on chat alone, never SUF:chat$ there; drawn
 * strings keep their class's row. */
static void test_pass_long_suffix(void)
{
	llr_lexicon *x = with_spelling(pass_lexicon());
	if (!x)
		return;
	x->extract.suffix = 4;
	const char *nf[] = {"SUF:hats$", "SUF:^chat$", "SUF:chat$", "SUF:-loup$"};
	int32_t col[4];
	for (int i = 0; i < 4; i++)
		col[i] = llr_strmap_add(x->features, nf[i], strlen(nf[i]));
	x->phi->cols = (int32_t)llr_strmap_size(x->features);
	llr_err e = {0};
	char why[256];
	llr_openpass *p = NULL;
	CHECK_OK(llr_openpass_new(x, &p, why, sizeof why, &e));
	CHECK(p != NULL);
	if (!p) {
		llr_lexicon_free(x);
		return;
	}
	const char *ws[] = {"Chats", "chat", "xchat"};
	int want[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
	for (int i = 0; i < 3; i++) {
		int32_t cols[64];
		int32_t c = llr_openpass_class_of(p, ws[i], strlen(ws[i]));
		size_t n = c >= 0 ? llr_openpass_row(p, c, cols, 64) : 0;
		for (int f = 0; f < 4; f++) {
			int has = 0;
			for (size_t k = 0; k < n; k++)
				has |= cols[k] == col[f];
			CHECK(has == want[i][f]);
		}
	}
	CHECK(draws_agree(x, p, 20000) == 0);
	llr_openpass_free(p);
	llr_lexicon_free(x);
}

/* What the pass cannot follow: a reason, no pass; a suffix feature with
 * a character the spelling model never saw is followed (an extra). */
static void test_pass_refuses(void)
{
	llr_lexicon *x = with_spelling(pass_lexicon());
	if (!x)
		return;
	llr_err e = {0};
	char why[256];
	llr_openpass *p = NULL;
	x->extract.ngram_min = x->extract.ngram_max = 2;
	CHECK_OK(llr_openpass_new(x, &p, why, sizeof why, &e));
	CHECK(p == NULL && strstr(why, "CNG"));
	x->extract.ngram_min = x->extract.ngram_max = 0;
	int32_t euro = llr_strmap_add(x->features, "SUF:€$", strlen("SUF:€$"));
	CHECK_OK(llr_openpass_new(x, &p, why, sizeof why, &e));
	CHECK(p != NULL && !why[0]);
	int32_t cols[64];
	int with[2] = {0, 0};
	const char *ws[2] = {"x€", "x£"};
	for (int i = 0; p && i < 2; i++) {
		int32_t c = llr_openpass_class_of(p, ws[i], strlen(ws[i]));
		size_t n = c >= 0 ? llr_openpass_row(p, c, cols, 64) : 0;
		for (size_t k = 0; k < n; k++)
			with[i] |= cols[k] == euro;
	}
	CHECK(with[0] && !with[1]);
	llr_openpass_free(p);
	llr_lexicon_free(x);
}

/* The signature masses made exactly: they sum to one less the
 * unassigned; the known strings' signatures; a year and a Roman ordinal
 * in signatures with ORTH:year and ORTH:ordinal; every drawn signature
 * is one of the exact ones, and those of 50 expected draws or more
 * agree within 5 standard errors. */
static void test_exact_sigs(void)
{
	llr_lexicon *x = with_spelling(pass_lexicon());
	if (!x)
		return;
	llr_err e = {0};
	llr_strmap *known = llr_strmap_new();
	const char *kw[] = {"chat", "le", "XIVe", "1999"};
	for (int i = 0; i < 4; i++)
		llr_strmap_add(known, kw[i], strlen(kw[i]));
	int32_t ks[4];
	char why[256];
	CHECK_OK(llr_lexicon_exact_sigs(x, known, ks, why, sizeof why, &e));
	int64_t listed;
	double un;
	int64_t ex = llr_lexicon_sig_exact(x, &listed, &un);
	CHECK(ex > 0);
	CHECK(listed > 1100); /* the years and Roman ordinals */
	size_t S = llr_lexicon_sigs(x);
	const float *lm = llr_lexicon_sig_logm(x);
	const llr_csr *sp = llr_lexicon_sig_phi(x);
	double sum = 0;
	for (size_t s = 0; s < S; s++)
		sum += exp((double)lm[s]);
	CHECK_NEAR(sum, 1.0, 1e-6);
	CHECK(ks[1] == -1);
	CHECK(ks[0] >= 0 && ks[2] >= 0 && ks[3] >= 0);
	int32_t year = llr_strmap_get(x->features, "ORTH:year", 9), ord = llr_strmap_get(x->features, "ORTH:ordinal", 12);
	int has_year = 0, has_ord = 0;
	for (int32_t k = sp->indptr[ks[3]]; k < sp->indptr[ks[3] + 1]; k++)
		has_year |= sp->indices[k] == year;
	for (int32_t k = sp->indptr[ks[2]]; k < sp->indptr[ks[2] + 1]; k++)
		has_ord |= sp->indices[k] == ord;
	CHECK(has_year && has_ord);
	/* the same lexicon drawn: every exact mass within 5 standard errors */
	llr_lexicon *y = pass_lexicon();
	enum { N = 200000 };
	CHECK_OK(llr_lexicon_estimate_sigs(y, N, 7, NULL, NULL, &e));
	CHECK(llr_lexicon_sig_exact(y, &listed, &un) == 0);
	/* exact masses without the known strings, for a like-for-like comparison */
	CHECK_OK(llr_lexicon_exact_sigs(x, NULL, NULL, why, sizeof why, &e));
	S = llr_lexicon_sigs(x);
	lm = llr_lexicon_sig_logm(x);
	sp = llr_lexicon_sig_phi(x);
	const llr_csr *yp = llr_lexicon_sig_phi(y);
	const float *ym = llr_lexicon_sig_logm(y);
	int far = 0, matched = 0;
	for (int32_t t = 0; t < yp->rows; t++) {
		int32_t n = yp->indptr[t + 1] - yp->indptr[t];
		for (size_t s = 0; s < S; s++) {
			if (sp->indptr[s + 1] - sp->indptr[s] != n ||
			    memcmp(sp->indices + sp->indptr[s], yp->indices + yp->indptr[t], (size_t)n * sizeof(int32_t)))
				continue;
			double m = exp((double)lm[s]), mh = exp((double)ym[t]), se = sqrt(m * (1 - m) / N);
			if (m * N >= 50 && fabs(mh - m) > 5 * se) { /* (rarer ones: a draw or two either way) */
				if (!far++) {
					printf("# signature %d: drawn %.6g, exact %.6g (standard error %.2g):", t, mh, m, se);
					for (int32_t i = yp->indptr[t]; i < yp->indptr[t + 1]; i++)
						printf(" %s", llr_strmap_str(y->features, yp->indices[i]));
					printf("\n");
				}
			}
			matched++;
			break;
		}
	}
	CHECK(far == 0);
	CHECK(matched == yp->rows);
	printf("# %zu exact signatures; %d drawn ones, all found\n", S, yp->rows);
	llr_lexicon_free(y);
	llr_strmap_free(known);
	llr_lexicon_free(x);
}

/* In listed mode, a string outside V' gets hunspell's features only when
 * the dictionary lists it; the exact masses take the listed forms apart
 * and survive a round trip through a file. */
static void test_exact_listed(void)
{
	if (!llr_have_hunspell()) {
		SKIP("libllrnn built without hunspell");
		return;
	}
	llr_lexicon *x = with_spelling(pass_lexicon());
	if (!x)
		return;
	llr_err e = {0};
	add_dictionary(x);
	const llr_strmap *forms = llr_lexicon_hunspell_forms(x, &e);
	CHECK(forms != NULL);
	if (!forms) {
		llr_lexicon_free(x);
		return;
	}
	/* a listed form and its capitalised spelling, which hunspell also
	 * accepts but the list does not hold */
	const char *f = NULL;
	for (int32_t i = 0; i < (int32_t)llr_strmap_size(forms) && !f; i++) {
		const char *s = llr_strmap_str(forms, i);
		if (s[0] >= 'a' && s[0] <= 'z' && llr_strmap_get(x->vocab, s, strlen(s)) < 0)
			f = s;
	}
	CHECK(f != NULL);
	char cap[64];
	snprintf(cap, sizeof cap, "%s", f ? f : "x");
	cap[0] = (char)(cap[0] - 'a' + 'A');
	int32_t hs = llr_strmap_get(x->features, "HS:@known", 9);
	int32_t c[64];
	size_t n;
	int with_f = 0, with_cap = 0;
	CHECK_OK(llr_lexicon_any_row(x, f, strlen(f), 0, c, NULL, 64, &n, &e));
	for (size_t i = 0; i < n; i++)
		with_f |= c[i] == hs;
	CHECK_OK(llr_lexicon_any_row(x, cap, strlen(cap), 0, c, NULL, 64, &n, &e));
	for (size_t i = 0; i < n; i++)
		with_cap |= c[i] == hs;
	CHECK(with_f && with_cap); /* live analyses: both */
	char why[256];
	CHECK_OK(llr_lexicon_exact_sigs(x, NULL, NULL, why, sizeof why, &e));
	CHECK(llr_lexicon_hunspell_listed(x));
	with_f = with_cap = 0;
	CHECK_OK(llr_lexicon_any_row(x, f, strlen(f), 0, c, NULL, 64, &n, &e));
	for (size_t i = 0; i < n; i++)
		with_f |= c[i] == hs;
	CHECK_OK(llr_lexicon_any_row(x, cap, strlen(cap), 0, c, NULL, 64, &n, &e));
	for (size_t i = 0; i < n; i++)
		with_cap |= c[i] == hs;
	CHECK(with_f && !with_cap); /* listed mode: only the listed form */
	int64_t listed;
	double un;
	CHECK(llr_lexicon_sig_exact(x, &listed, &un) > 0);
	CHECK(listed >= (int64_t)llr_strmap_size(forms) - 2);
	/* a round trip keeps the mode and the masses */
	llr_lexicon *y = lexicon_round_trip(x, NULL, NULL, &e);
	CHECK(y != NULL);
	if (y) {
		CHECK(llr_lexicon_hunspell_listed(y));
		CHECK(llr_lexicon_sig_exact(y, &listed, &un) > 0);
		CHECK(llr_lexicon_sigs(y) == llr_lexicon_sigs(x));
		llr_lexicon_free(y);
	}
	llr_lexicon_free(x);
}

/* The norm check of exact masses (llr_open_norm_samples): its draws
 * have their class's row; with listed mode switched off behind its back,
 * the check no longer lists the dictionary's forms, hunspell analyses
 * every string, and the draws it knows (rat, Chats) have rows that are
 * not their class's: the check finds them. */
static void test_exact_norm(void)
{
	if (!llr_have_hunspell()) {
		SKIP("libllrnn built without hunspell");
		return;
	}
	llr_lexicon *x = with_spelling(pass_lexicon());
	if (!x)
		return;
	llr_err e = {0};
	add_dictionary(x);
	char why[256];
	CHECK_OK(llr_lexicon_exact_sigs(x, NULL, NULL, why, sizeof why, &e));
	llr_net_config c = {.embed = 4, .hidden = 4, .layers = 1, .output = LLR_OUT_LOGLINEAR};
	llr_rnnlm *m = llr_rnnlm_new(x, &c, &e);
	CHECK(m != NULL);
	if (!m) {
		printf("# %s\n", e.msg);
		llr_lexicon_free(x);
		return;
	}
	llr_rng r;
	llr_rng_seed(&r, 7);
	llr_net_init(m->net, &r);
	llr_open *o = llr_open_new(m, &e);
	CHECK(o != NULL);
	int32_t listed = 0;
	int64_t bad = -1;
	const char *first = NULL;
	if (o) {
		CHECK_OK(llr_open_norm_samples(o, 3000, 5, &e));
		CHECK(llr_open_norm_exact(o, &listed, &bad, &first) == 3000);
		CHECK(bad == 0 && first == NULL);
		CHECK(listed > 1100);
		CHECK_OK(llr_lexicon_set_hunspell_listed(m->lex, 0, &e));
		CHECK_OK(llr_open_norm_samples(o, 3000, 5, &e));
		CHECK(llr_open_norm_exact(o, &listed, &bad, &first) == 3000);
		CHECK(bad > 0 && first);
		printf("# listed mode off: %lld of 3000 draws differ, the first '%s'\n", (long long)bad, first ? first : "");
	}
	llr_open_free(o);
	llr_rnnlm_free(m);
}

int main(void)
{
	PLAN(8);
	RUN(test_pass_brute_force);
	RUN(test_pass_unk_contexts);
	RUN(test_pass_total);
	RUN(test_pass_long_suffix);
	RUN(test_pass_refuses);
	RUN(test_exact_sigs);
	RUN(test_exact_listed);
	RUN(test_exact_norm);
	DONE();
}
