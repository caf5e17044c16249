/*
 * test_features.c - unit tests for the word features: the string
 * extractors (llr_extract), their meta round trip, the lexicon members
 * (llr_lexicon_write/read through a real tensor archive, with shape
 * checks), llr_lexicon_word_row for seen and unseen words, and hunspell
 * when built in and a French dictionary is installed.
 */
#include <unistd.h>

#include "llrnn.h"
#include "test.h"

/* Collect emitted names, space separated, into a buffer. */
static int collect(const char *name, size_t len, float value, void *ctx)
{
	llr_buf *b = ctx;
	if (b->len)
		llr_buf_putc(b, ' ');
	llr_buf_append(b, name, len);
	return value == 1.0f ? 0 : -100;
}

/* 1 if the space-separated list has the word. */
static int has(const llr_buf *b, const char *f)
{
	size_t n = strlen(f);
	const char *p = b->data;
	if (!p)
		return 0;
	while ((p = strstr(p, f))) {
		if ((p == b->data || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

static llr_buf feats(const llr_extractors *x, const char *w)
{
	llr_buf b = {0};
	int rc = llr_extract(x, w, strlen(w), collect, &b);
	CHECK(rc == LLR_OK);
	return b;
}

/* A word handed over as a slice of a longer string: ORTH:year reads the
 * slice's four digits, not what follows them. */
static void test_ortho_year_slice(void)
{
	llr_extractors x = {.ortho = 1};
	const struct {
		const char *s;
		int year;
	} cases[] = {{"19995", 1}, {"2099 ", 1}, {"21001", 0}, {"0999x", 0}, {"1000999", 1}, {"+199", 0}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		llr_buf b = {0};
		CHECK(llr_extract(&x, cases[i].s, 4, collect, &b) == LLR_OK);
		CHECK(has(&b, "ORTH:year") == cases[i].year);
		llr_buf_free(&b);
	}
}

static void test_ortho(void)
{
	llr_extractors x = {.ortho = 1};
	struct {
		const char *word, *yes, *no;
	} cases[] = {
		{"1999", "ORTH:number ORTH:year ORTH:has-digit ORTH:len3-4", "ORTH:decimal ORTH:punct"},
		{"2100", "ORTH:number", "ORTH:year"},
		{"3,14", "ORTH:decimal ORTH:has-digit", "ORTH:number"},
		{"-12.5", "ORTH:decimal", "ORTH:number"},
		{"1er", "ORTH:ordinal ORTH:has-digit", "ORTH:number"},
		{"2nd", "ORTH:ordinal", ""},
		{"21st", "ORTH:ordinal", ""},
		{"3e", "ORTH:ordinal ORTH:len2", ""},
		{"XIXe", "ORTH:ordinal ORTH:cap", "ORTH:allcaps"},
		{"xixe", "ORTH:ordinal", "ORTH:cap"},
		{"vie", "", "ORTH:ordinal"},
		{"le", "", "ORTH:ordinal"},
		{"…", "ORTH:punct ORTH:len1", "ORTH:cap"},
		{"«", "ORTH:punct", ""},
		{"?!", "ORTH:punct ORTH:len2", ""},
		{"État", "ORTH:cap", "ORTH:allcaps ORTH:punct"},
		{"ÉTATS", "ORTH:cap ORTH:allcaps ORTH:len5-7", ""},
		{"peut-être", "ORTH:hyphen ORTH:len8-11", "ORTH:punct"},
		{"-", "ORTH:punct", "ORTH:hyphen"},
		{"https://example.org/x", "ORTH:url ORTH:len12+", "ORTH:email"},
		{"www.inria.fr", "ORTH:url", ""},
		{"jean.dupont@example.fr", "ORTH:email", "ORTH:url"},
		{"a@b", "", "ORTH:email"},
		{"maison", "ORTH:len5-7", "ORTH:number ORTH:has-digit ORTH:cap ORTH:punct"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		llr_buf b = feats(&x, cases[i].word);
		char tmp[256];
		snprintf(tmp, sizeof tmp, "%s", cases[i].yes);
		for (char *t = strtok(tmp, " "); t; t = strtok(NULL, " ")) {
			if (!has(&b, t))
				printf("#   '%s' lacks %s (has: %s)\n", cases[i].word, t, b.data ? b.data : "");
			CHECK(has(&b, t));
		}
		snprintf(tmp, sizeof tmp, "%s", cases[i].no);
		for (char *t = strtok(tmp, " "); t; t = strtok(NULL, " ")) {
			if (has(&b, t))
				printf("#   '%s' has %s\n", cases[i].word, t);
			CHECK(!has(&b, t));
		}
		llr_buf_free(&b);
	}
}

static void test_subword(void)
{
	llr_extractors x = {.suffix = 3};
	llr_buf b = feats(&x, "année");
	CHECK(b.data && !strcmp(b.data, "SUF:e$ SUF:ée$ SUF:née$"));
	llr_buf_free(&b);
	b = feats(&x, "le");
	CHECK(b.data && !strcmp(b.data, "SUF:e$ SUF:^le$"));
	llr_buf_free(&b);
	llr_extractors y = {.ngram_min = 2, .ngram_max = 3};
	b = feats(&y, "rêve");
	CHECK(b.data && !strcmp(b.data, "CNG:^r CNG:rê CNG:êv CNG:ve CNG:e$ CNG:^rê CNG:rêv CNG:êve CNG:ve$"));
	llr_buf_free(&b);
	llr_extractors z = {.ngram_min = 1, .ngram_max = 1};
	b = feats(&z, "ab");
	CHECK(b.data && !strcmp(b.data, "CNG:a CNG:b"));
	llr_buf_free(&b);
	/* Nothing on, nothing out; invalid UTF-8 is an error. */
	llr_extractors none = {0};
	b = feats(&none, "abc");
	CHECK(b.len == 0);
	llr_buf_free(&b);
	CHECK(llr_extract(&x, "a\xff", 2, collect, &b) == LLR_EUTF8);
	llr_buf_free(&b);
	/* emit's error comes back */
	CHECK(llr_extract(&x, "abc", 3, collect, &b) == LLR_OK);
	llr_buf_free(&b);
}

static int fail_emit(const char *name, size_t len, float value, void *ctx)
{
	(void)name, (void)len, (void)value;
	return ++*(int *)ctx >= 2 ? -42 : 0;
}

static void test_emit_error(void)
{
	llr_extractors x = {.ortho = 1, .suffix = 4};
	int calls = 0;
	CHECK(llr_extract(&x, "maison", 6, fail_emit, &calls) == -42);
	CHECK(calls == 2);
}

static void test_extract_meta(void)
{
	llr_extractors x = {.ortho = 1, .suffix = 4, .ngram_min = 2, .ngram_max = 5}, y;
	llr_meta *m = llr_meta_new();
	CHECK_OK(llr_extractors_to_meta(&x, m));
	CHECK(!strcmp(llr_meta_get(m, "extract.ngrams"), "2-5"));
	CHECK_OK(llr_extractors_from_meta(&y, m, NULL));
	CHECK(y.ortho == 1 && y.suffix == 4 && y.ngram_min == 2 && y.ngram_max == 5);
	llr_meta_set(m, "extract.ngrams", "5-2");
	llr_err e = {0};
	CHECK(llr_extractors_from_meta(&y, m, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "extract.ngrams") != NULL);
	llr_meta_free(m);
}

/* A 5-word lexicon: le chat chats </s> <unk>, features TOP:le TOP:</s>
 * TOP:@notTop POS:NOUN Number:Plur SUF:s$ SUF:at$ ORTH:year (on no word). */
static llr_lexicon *small_lexicon(int with_psi)
{
	llr_lexicon *x = llr_calloc(1, sizeof *x);
	x->vocab = llr_strmap_new();
	x->features = llr_strmap_new();
	const char *v[] = {"le", "</s>", "chat", "chats", "<unk>"};
	for (int i = 0; i < 5; i++)
		llr_strmap_add(x->vocab, v[i], strlen(v[i]));
	const char *f[] = {"TOP:le", "TOP:</s>", "TOP:@notTop", "POS:NOUN", "Number:Plur", "SUF:s$", "SUF:at$", "ORTH:year"};
	for (int i = 0; i < 8; i++)
		llr_strmap_add(x->features, f[i], strlen(f[i]));
	llr_csr_builder *b = llr_csr_builder_new(8);
	int32_t r0[] = {0}, r1[] = {1}, r2[] = {2, 3, 6}, r3[] = {2, 3, 4, 5}, r4[] = {2};
	float half[] = {1, 0.5f, 1, 1};
	llr_csr_builder_row(b, r0, NULL, 1, NULL);
	llr_csr_builder_row(b, r1, NULL, 1, NULL);
	llr_csr_builder_row(b, r2, NULL, 3, NULL);
	llr_csr_builder_row(b, r3, half, 4, NULL);
	llr_csr_builder_row(b, r4, NULL, 1, NULL);
	x->phi = llr_csr_builder_finish(b, NULL);
	if (with_psi) {
		x->features_in = llr_strmap_new();
		llr_strmap_add(x->features_in, "POS:NOUN", 8);
		llr_strmap_add(x->features_in, "TOP:@notTop", 11);
		b = llr_csr_builder_new(2);
		int32_t p2[] = {0, 1}, p4[] = {1};
		llr_csr_builder_row(b, NULL, NULL, 0, NULL);
		llr_csr_builder_row(b, NULL, NULL, 0, NULL);
		llr_csr_builder_row(b, p2, NULL, 2, NULL);
		llr_csr_builder_row(b, p2, NULL, 2, NULL);
		llr_csr_builder_row(b, p4, NULL, 1, NULL);
		x->psi = llr_csr_builder_finish(b, NULL);
	}
	x->logb = llr_calloc(5, sizeof *x->logb);
	for (int i = 0; i < 5; i++)
		x->logb[i] = logf(0.2f);
	x->eos_id = 1;
	x->unk_id = 4;
	x->extract.suffix = 2;
	x->extract.ortho = 1;
	x->meta = llr_meta_new();
	llr_meta_set(x->meta, "background", "uniform");
	llr_meta_set(x->meta, "kind", "ignored");
	return x;
}

static char *write_lexicon(const llr_lexicon *x, const char *name, const char *tamper_key, const char *tamper_val)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", test_tmpdir(), name);
	llr_meta *m = llr_meta_new();
	CHECK_OK(llr_lexicon_to_meta(x, m));
	if (tamper_key)
		llr_meta_set(m, tamper_key, tamper_val);
	llr_err e = {0};
	llr_tensor_writer *w = llr_tw_open(path, "features", m, &e);
	CHECK(w != NULL);
	llr_meta_free(m);
	if (!w)
		return path;
	CHECK_OK(llr_lexicon_write(w, x, &e));
	int64_t shape[1] = {3};
	int32_t ids[3] = {0, 2, 1};
	CHECK_OK(llr_tw_put_raw(w, "ids/000000", LLR_I32, 1, shape, ids, &e));
	CHECK_OK(llr_tw_close(w, &e));
	return path;
}

static void test_lexicon_roundtrip(void)
{
	for (int with_psi = 0; with_psi < 2; with_psi++) {
		llr_lexicon *x = small_lexicon(with_psi);
		const char *path = write_lexicon(x, "lex.tar", NULL, NULL);
		llr_err e = {0};
		llr_tensor_reader *r = llr_tr_open(path, "features", &e);
		CHECK(r != NULL);
		if (!r) {
			printf("#   %s\n", e.msg);
			llr_lexicon_free(x);
			return;
		}
		CHECK(!strcmp(llr_meta_get(llr_tr_meta(r), "psi"), with_psi ? "own" : "same"));
		CHECK(!strcmp(llr_meta_get(llr_tr_meta(r), "background"), "uniform"));
		CHECK(!strcmp(llr_meta_get(llr_tr_meta(r), "kind"), "features"));
		llr_lexicon *y = NULL;
		int rc = llr_lexicon_read(r, &y, &e);
		CHECK(rc == LLR_OK);
		if (rc) {
			printf("#   %s\n", e.msg);
		} else {
			CHECK(llr_strmap_size(y->vocab) == 5 && llr_strmap_size(y->features) == 8);
			CHECK(!strcmp(llr_strmap_str(y->vocab, 3), "chats"));
			CHECK(y->eos_id == 1 && y->unk_id == 4 && y->extract.suffix == 2);
			CHECK(y->phi->nnz == x->phi->nnz && !memcmp(y->phi->indices, x->phi->indices, 10 * 4));
			CHECK_NEAR(y->phi->data[6], 0.5, 0);
			CHECK_NEAR(y->logb[3], logf(0.2f), 0);
			CHECK(with_psi ? y->psi && y->psi->cols == 2 && y->features_in : !y->psi && !y->features_in);
			/* the caller's members follow */
			const char *name;
			CHECK(llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "ids/000000"));
			CHECK(llr_tr_next(r, &name, &e) == 0);
		}
		llr_lexicon_free(y);
		llr_tr_close(r);
		llr_lexicon_free(x);
	}
}

static void expect_read_error(const char *key, const char *val, const char *want)
{
	llr_lexicon *x = small_lexicon(0);
	const char *path = write_lexicon(x, "bad.tar", key, val);
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(path, "features", &e);
	CHECK(r != NULL);
	if (r) {
		llr_lexicon *y = NULL;
		int rc = llr_lexicon_read(r, &y, &e);
		CHECK(rc < 0 && y == NULL);
		if (!strstr(e.msg, want))
			printf("#   %s=%s: message '%s' lacks '%s'\n", key, val, e.msg, want);
		CHECK(strstr(e.msg, want) != NULL);
		llr_tr_close(r);
	}
	llr_lexicon_free(x);
}

static void test_lexicon_checks(void)
{
	expect_read_error("vocab_size", "6", "member vocab");
	expect_read_error("n_features", "9", "n_features_in=8 differs");
	expect_read_error("eos_id", "0", "eos_id");
	expect_read_error("unk_id", "9", "unk_id");
	expect_read_error("psi", "own", "features_in");
	expect_read_error("psi", "maybe", "psi");
	expect_read_error("extract.suffix", "x", "extract.suffix");
}

static void test_word_row(void)
{
	llr_lexicon *x = small_lexicon(1);
	int32_t cols[16];
	float vals[16];
	size_t n = 99;
	/* a vocabulary word: its phi row, or its psi row */
	CHECK_OK(llr_lexicon_word_row(x, "chats", 5, 0, cols, vals, 16, &n, NULL));
	CHECK(n == 4 && cols[0] == 2 && cols[1] == 3 && cols[2] == 4 && cols[3] == 5);
	CHECK_NEAR(vals[1], 0.5, 0);
	CHECK_OK(llr_lexicon_word_row(x, "chats", 5, 1, cols, vals, 16, &n, NULL));
	CHECK(n == 2 && cols[0] == 0 && cols[1] == 1);
	/* unseen: suffix features that exist + TOP:@notTop */
	CHECK_OK(llr_lexicon_word_row(x, "rats", 4, 0, cols, vals, 16, &n, NULL));
	CHECK(n == 2 && cols[0] == 2 && cols[1] == 5);
	CHECK_OK(llr_lexicon_word_row(x, "plat", 4, 0, cols, vals, 16, &n, NULL));
	CHECK(n == 2 && cols[0] == 2 && cols[1] == 6);
	CHECK_OK(llr_lexicon_word_row(x, "plat", 4, 1, cols, vals, 16, &n, NULL));
	CHECK(n == 1 && cols[0] == 1);
	/* --ortho: a year never seen gets ORTH:year */
	CHECK_OK(llr_lexicon_word_row(x, "2031", 4, 0, cols, vals, 16, &n, NULL));
	CHECK(n == 2 && cols[0] == 2 && cols[1] == 7);
	/* too small a buffer */
	llr_err e = {0};
	CHECK(llr_lexicon_word_row(x, "chats", 5, 0, cols, vals, 2, &n, &e) == LLR_ERANGE);
	/* no TOP:@notTop and no extractor match: the <unk> row */
	llr_lexicon *y = small_lexicon(0);
	y->extract.suffix = 0;
	y->extract.ortho = 0;
	llr_strmap_free(y->features);
	y->features = llr_strmap_new();
	const char *f[] = {"TOP:le", "TOP:</s>", "UNK", "POS:NOUN", "Number:Plur", "SUF:s$", "SUF:at$"};
	for (int i = 0; i < 7; i++)
		llr_strmap_add(y->features, f[i], strlen(f[i]));
	CHECK_OK(llr_lexicon_word_row(y, "zzz", 3, 0, cols, vals, 16, &n, NULL));
	CHECK(n == 1 && cols[0] == 2);
	llr_lexicon_free(y);
	llr_lexicon_free(x);
}

static void test_hunspell(void)
{
	const char *dic = "/usr/share/hunspell/fr_FR.dic";
	if (!llr_have_hunspell()) {
		llr_err e = {0};
		CHECK(llr_morph_open(dic, &e) == NULL && e.code == LLR_EINVAL);
		/* CI installs libhunspell-dev with hunspell-fr: a dictionary
		 * without the library means a broken build, not a skip */
		if (access(dic, R_OK) == 0) {
			printf("# %s is installed but libllrnn was built without "
			       "hunspell (install libhunspell-dev, rebuild)\n",
			       dic);
			CHECK(llr_have_hunspell());
		} else {
			SKIP("libllrnn built without hunspell and no hunspell-fr");
		}
		return;
	}
	if (access(dic, R_OK) != 0) {
		SKIP("hunspell-fr absent: /usr/share/hunspell/fr_FR.dic");
		return;
	}
	llr_err e = {0};
	llr_morph *m = llr_morph_open("/usr/share/hunspell/fr_FR", &e);
	CHECK(m != NULL);
	if (!m)
		return;
	llr_buf b = {0};
	CHECK_OK(llr_morph_features(m, "maisons", 7, collect, &b));
	CHECK(has(&b, "HS:po:nom") && has(&b, "HS:is:fem") && has(&b, "HS:is:pl"));
	CHECK(!strstr(b.data ? b.data : "", "st:"));
	llr_buf_clear(&b);
	CHECK_OK(llr_morph_features(m, "xqzwv", 5, collect, &b));
	CHECK(b.len == 0);
	llr_buf_free(&b);
	llr_morph_close(m);
	CHECK(llr_morph_open("/nonexistent/xx_XX", &e) == NULL && strstr(e.msg, "xx_XX"));
}

int main(void)
{
	PLAN(9);
	RUN(test_ortho);
	RUN(test_ortho_year_slice);
	RUN(test_subword);
	RUN(test_emit_error);
	RUN(test_extract_meta);
	RUN(test_lexicon_roundtrip);
	RUN(test_lexicon_checks);
	RUN(test_word_row);
	RUN(test_hunspell);
	DONE();
}
