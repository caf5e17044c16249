/*
 * test_anyword.c - the feature row of any string (lib/features/anyword.c):
 * lexicon entries beyond the vocabulary, the embedded hunspell dictionary,
 * TOP:@notTop, the OOV: features of the strings outside the vocabulary,
 * the any/ members' round trip and their checks.
 *
 * With two arguments, STREAM DUMP, it compares instead the rows that
 * featurize wrote (DUMP, from featurize --dump) with llr_lexicon_any_row
 * on the features stream STREAM of the same run, word by word
 * (tests/58-open-features.bats).
 */
#include <unistd.h>

#include "lexicon_fixture.h"
#include "llrnn.h"
#include "test.h"

#define DICT "tests/fixtures/open/mini"

static const char *const feats[] = {"TOP:le", "TOP:</s>", "TOP:@notTop", "POS:NOUN", "HS:po:noun",
                                    "HS:is:plur", "SUF:s$", "SUF:t$", "HS:@known", LLR_FEAT_OOV,
                                    LLR_FEAT_OOV_HS_KNOWN};
enum { NF = 9 }; /* the features but the last two (OOV:) */

/* vocab le </s> chat <unk>; top 1; --suffix 1; psi own (POS and SUF);
 * the first nf features. */
static llr_lexicon *lexicon_nf(const char *top, int nf)
{
	llr_lexicon *x = calloc(1, sizeof *x);
	x->vocab = llr_strmap_new();
	const char *v[] = {"le", "</s>", "chat", "<unk>"};
	for (int i = 0; i < 4; i++)
		llr_strmap_add(x->vocab, v[i], strlen(v[i]));
	x->features = llr_strmap_new();
	for (int i = 0; i < nf; i++)
		llr_strmap_add(x->features, feats[i], strlen(feats[i]));
	x->features_in = llr_strmap_new();
	llr_strmap_add(x->features_in, "POS:NOUN", 8);
	llr_strmap_add(x->features_in, "SUF:t$", 6);
	llr_csr_builder *b = llr_csr_builder_new(nf), *bi = llr_csr_builder_new(2);
	int32_t r0[] = {0}, r1[] = {1}, r2[] = {2, 3, 4, 7}, r3[] = {2}, i2[] = {0, 1};
	llr_csr_builder_row(b, r0, NULL, 1, NULL);
	llr_csr_builder_row(b, r1, NULL, 1, NULL);
	llr_csr_builder_row(b, r2, NULL, 4, NULL);
	llr_csr_builder_row(b, r3, NULL, 1, NULL);
	llr_csr_builder_row(bi, NULL, NULL, 0, NULL);
	llr_csr_builder_row(bi, NULL, NULL, 0, NULL);
	llr_csr_builder_row(bi, i2, NULL, 2, NULL);
	llr_csr_builder_row(bi, NULL, NULL, 0, NULL);
	x->phi = llr_csr_builder_finish(b, NULL);
	x->psi = llr_csr_builder_finish(bi, NULL);
	x->logb = calloc(4, sizeof *x->logb);
	for (int i = 0; i < 4; i++)
		x->logb[i] = logf(0.25f);
	x->eos_id = 1;
	x->unk_id = 3;
	x->extract.suffix = 1;
	x->meta = llr_meta_new();
	if (top)
		llr_meta_set(x->meta, "top", top);
	/* lexicon entries beyond the vocabulary: chien POS:NOUN, nul POS:NOUN=0 */
	llr_strmap *w = llr_strmap_new();
	llr_strmap_add(w, "chien", 5);
	llr_strmap_add(w, "nul", 3);
	llr_csr_builder *bw = llr_csr_builder_new(nf);
	int32_t c3[] = {3};
	float one[] = {1.0f}, zero[] = {0.0f};
	llr_csr_builder_row(bw, c3, one, 1, NULL);
	llr_csr_builder_row(bw, c3, zero, 1, NULL);
	CHECK_OK(llr_lexicon_set_words(x, w, llr_csr_builder_finish(bw, NULL), NULL));
	return x;
}

static llr_lexicon *lexicon(const char *top)
{
	return lexicon_nf(top, NF);
}

/* The row of w as a space-separated list of names. */
static const char *row(const llr_lexicon *x, const char *w, int in, int any)
{
	static char out[512];
	int32_t c[32];
	float v[32];
	size_t n = 0;
	llr_err e = {0};
	int rc = any ? llr_lexicon_any_row(x, w, strlen(w), in, c, v, 32, &n, &e)
	             : llr_lexicon_word_row(x, w, strlen(w), in, c, v, 32, &n, &e);
	if (rc < 0) {
		snprintf(out, sizeof out, "error: %.400s", e.msg);
		return out;
	}
	const llr_strmap *names = in && x->features_in ? x->features_in : x->features;
	out[0] = '\0';
	for (size_t k = 0; k < n; k++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", k ? " " : "", llr_strmap_str(names, c[k]));
	return out;
}

static void test_rows(void)
{
	llr_lexicon *x = lexicon("1");
	CHECK(!strcmp(row(x, "chien", 0, 1), "TOP:@notTop POS:NOUN"));
	CHECK(!strcmp(row(x, "chats", 0, 1), "TOP:@notTop SUF:s$"));
	CHECK(!strcmp(row(x, "nul", 0, 1), "TOP:@notTop")); /* a zero value is no feature */
	CHECK(!strcmp(row(x, "xyz", 0, 1), "TOP:@notTop"));
	/* a vocabulary word computed as if unseen: its TOP feature is @notTop */
	CHECK(!strcmp(row(x, "chat", 0, 1), "TOP:@notTop SUF:t$"));
	CHECK(!strcmp(row(x, "chat", 0, 0), "TOP:@notTop POS:NOUN HS:po:noun SUF:t$"));
	/* the input side: psi's columns */
	CHECK(!strcmp(row(x, "chien", 1, 1), "POS:NOUN"));
	CHECK(!strcmp(row(x, "bout", 1, 1), "SUF:t$"));
	CHECK(!strcmp(row(x, "xyz", 1, 1), ""));
	CHECK(!strcmp(row(x, "xyz", 1, 0), "")); /* <unk>'s psi row is empty */
	/* not UTF-8: no string features, not an error */
	CHECK(!strcmp(row(x, "\xff\xfes", 0, 1), "TOP:@notTop"));
	/* too small a buffer */
	int32_t c[1];
	size_t n;
	llr_err e = {0};
	CHECK(llr_lexicon_any_row(x, "chien", 5, 0, c, NULL, 1, &n, &e) == LLR_ERANGE);
	CHECK(llr_lexicon_any_words(x) == 2 && !llr_lexicon_any_hunspell(x));
	llr_lexicon_free(x);

	/* --top 0: featurize gives no TOP feature past the top, nor does any_row */
	x = lexicon("0");
	CHECK(!strcmp(row(x, "xyz", 0, 1), ""));
	CHECK(!strcmp(row(x, "chien", 0, 1), "POS:NOUN"));
	/* word_row keeps its contract: an empty row is <unk>'s */
	CHECK(!strcmp(row(x, "xyz", 0, 0), "TOP:@notTop"));
	llr_lexicon_free(x);
}

static void test_hunspell_embedded(void)
{
	llr_lexicon *x = lexicon("1");
	llr_err e = {0};
	CHECK(llr_lexicon_set_hunspell(x, "/nonexistent/xx_XX.dic", &e) == LLR_EIO && strstr(e.msg, "xx_XX.aff"));
	if (!llr_have_hunspell()) {
		llr_lexicon_free(x);
		SKIP("libllrnn built without hunspell");
		return;
	}
	CHECK_OK(llr_lexicon_set_hunspell(x, DICT ".dic", &e));
	CHECK(llr_lexicon_any_hunspell(x));
	CHECK(!strcmp(row(x, "chats", 0, 1), "TOP:@notTop HS:po:noun HS:is:plur SUF:s$ HS:@known"));
	CHECK(!strcmp(row(x, "zorgs", 0, 1), "TOP:@notTop HS:po:noun HS:is:plur SUF:s$ HS:@known"));
	CHECK(!strcmp(row(x, "rat", 0, 1), "TOP:@notTop HS:po:noun SUF:t$ HS:@known"));
	/* a NUL inside: hunspell cannot take it, the rest of the row stays */
	int32_t c[8];
	size_t n;
	CHECK_OK(llr_lexicon_any_row(x, "ra\0ts", 5, 0, c, NULL, 8, &n, &e));
	CHECK(n == 2 && c[0] == 2 && c[1] == 6);

	/* the members round trip: the same rows from the file */
	llr_lexicon *y = lexicon_round_trip(x, NULL, NULL, &e);
	CHECK(y != NULL);
	if (y) {
		CHECK(llr_lexicon_any_words(y) == 2 && llr_lexicon_any_hunspell(y));
		CHECK(!strcmp(llr_meta_get(y->meta, "any.hunspell"), "mini.dic"));
		CHECK(!strcmp(row(y, "chats", 0, 1), "TOP:@notTop HS:po:noun HS:is:plur SUF:s$ HS:@known"));
		CHECK(!strcmp(row(y, "chien", 0, 1), "TOP:@notTop POS:NOUN"));
		CHECK(!strcmp(row(y, "chien", 1, 1), "POS:NOUN"));
		llr_lexicon_free(y);
	}
	/* a size that does not match the member is refused, naming it */
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "any.hunspell.dic_bytes", "3", &e) == NULL && strstr(e.msg, "any/hunspell.dic"));
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "any.words", "5", &e) == NULL && strstr(e.msg, "any/words"));
	e = (llr_err){0};
	CHECK(lexicon_round_trip(x, "any.words", "-1", &e) == NULL && strstr(e.msg, "any.words"));
	/* a dictionary hunspell cannot load: the error says so, every time */
	y = lexicon_round_trip(x, NULL, NULL, &e);
	CHECK(y != NULL);
	llr_lexicon_free(x);
	llr_lexicon_free(y);
}

/* OOV:@oov and OOV:HS:@known: for the strings outside V' only, when the
 * lexicon has them. */
static void test_oov(void)
{
	llr_lexicon *x = lexicon_nf("1", NF + 2);
	CHECK(!strcmp(row(x, "chien", 0, 1), "TOP:@notTop POS:NOUN OOV:@oov"));
	CHECK(!strcmp(row(x, "xyz", 0, 1), "TOP:@notTop OOV:@oov"));
	CHECK(!strcmp(row(x, "xyz", 0, 0), "TOP:@notTop OOV:@oov"));
	CHECK(!strcmp(row(x, "\xff\xfes", 0, 1), "TOP:@notTop OOV:@oov"));
	/* the words of V never, as if unseen or not; the string <unk> is
	 * outside V' */
	CHECK(!strcmp(row(x, "chat", 0, 1), "TOP:@notTop SUF:t$"));
	CHECK(!strcmp(row(x, "chat", 0, 0), "TOP:@notTop POS:NOUN HS:po:noun SUF:t$"));
	CHECK(!strcmp(row(x, "le", 0, 1), "TOP:@notTop"));
	CHECK(!strcmp(row(x, "</s>", 0, 1), "TOP:@notTop"));
	CHECK(!strcmp(row(x, "<unk>", 0, 1), "TOP:@notTop OOV:@oov"));
	/* not input features here: psi has its own columns */
	CHECK(!strcmp(row(x, "xyz", 1, 1), ""));
	if (llr_have_hunspell()) {
		CHECK_OK(llr_lexicon_set_hunspell(x, DICT, NULL));
		CHECK(!strcmp(row(x, "zorgs", 0, 1), "TOP:@notTop HS:po:noun HS:is:plur SUF:s$ HS:@known OOV:@oov OOV:HS:@known"));
		CHECK(!strcmp(row(x, "xyzs", 0, 1), "TOP:@notTop SUF:s$ OOV:@oov"));
		CHECK(!strcmp(row(x, "chat", 0, 1), "TOP:@notTop HS:po:noun SUF:t$ HS:@known"));
		/* the round trip keeps them: the feature names are the record */
		llr_lexicon *y = lexicon_round_trip(x, NULL, NULL, NULL);
		CHECK(y != NULL);
		if (y)
			CHECK(!strcmp(row(y, "zorgs", 0, 1), "TOP:@notTop HS:po:noun HS:is:plur SUF:s$ HS:@known OOV:@oov OOV:HS:@known"));
		llr_lexicon_free(y);
	}
	llr_lexicon_free(x);
	/* a lexicon without them (older streams) gives the rows it gave */
	x = lexicon("1");
	CHECK(!strcmp(row(x, "xyz", 0, 1), "TOP:@notTop"));
	llr_lexicon_free(x);
}

/* ------------------------------------------- featurize's rows vs ours */

static int compare(const char *stream, const char *dump)
{
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(stream, "features", &e);
	llr_lexicon *x = NULL;
	if (!r || llr_lexicon_read(r, &x, &e) < 0) {
		printf("not ok 1 - %s: %s\n", stream, e.msg);
		return 1;
	}
	llr_tr_close(r);
	FILE *f = fopen(dump, "r");
	if (!f) {
		printf("not ok 1 - %s: cannot open\n", dump);
		return 1;
	}
	char line[8192];
	int bad = 0, words = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		if (!strcmp(line, LLR_EOS) || !strcmp(line, LLR_UNK))
			continue;
		/* featurize's row, a top word's TOP:w read as TOP:@notTop */
		char want[8192] = "";
		for (char *t = strtok(tab + 1, " "); t; t = strtok(NULL, " ")) {
			if (!strncmp(t, LLR_TOP_PREFIX, strlen(LLR_TOP_PREFIX)))
				t = LLR_FEAT_NOTTOP;
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", want[0] ? " " : "", t);
		}
		/* ours, in the dump's notation (name=value when not 1) */
		int32_t c[1024];
		float v[1024];
		size_t n;
		char got[8192] = "";
		if (llr_lexicon_any_row(x, line, strlen(line), 0, c, v, 1024, &n, &e) < 0) {
			printf("# %s: %s\n", line, e.msg);
			bad++;
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			const char *nm = llr_strmap_str(x->features, c[k]);
			size_t at = strlen(got);
			if (v[k] != 1.0f || strchr(nm, '='))
				snprintf(got + at, sizeof got - at, "%s%s=%.9g", at ? " " : "", nm, (double)v[k]);
			else
				snprintf(got + at, sizeof got - at, "%s%s", at ? " " : "", nm);
		}
		words++;
		if (strcmp(want, got)) {
			printf("# %s:\n#   featurize %s\n#   any_row   %s\n", line, want, got);
			bad++;
		}
	}
	fclose(f);
	llr_lexicon_free(x);
	printf("1..1\n%s 1 - %d words, %d rows differ\n", bad || !words ? "not ok" : "ok", words, bad);
	return bad || !words;
}

int main(int argc, char **argv)
{
	if (argc == 3)
		return compare(argv[1], argv[2]);
	PLAN(3);
	RUN(test_rows);
	RUN(test_hunspell_embedded);
	RUN(test_oov);
	DONE();
}
