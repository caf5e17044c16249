/*
 * test_text.c - unit tests for the text side of libllrnn: normalisation,
 * the tokenizer and sentence splitter, the CoNLL-U line parser and FEATS
 * splitting, the token splitter, and the vocabulary (counting, sorting,
 * reading counts).
 */
#include "llrnn.h"
#include "test.h"

/* Tokenize s with the given options; returns a static copy of the result. */
static const char *tk(const char *lang, int lower, int nfkc, int chars, int sent, const char *s)
{
	static char res[4096];
	llr_tok_opts o = {lower, nfkc, lang, chars};
	llr_err e = {0};
	llr_tokenizer *t = llr_tokenizer_new(&o, &e);
	llr_buf b = {0};
	res[0] = 0;
	if (!t)
		return "(new failed)";
	if (llr_tokenize(t, s, strlen(s), sent, &b, &e) == LLR_OK)
		snprintf(res, sizeof res, "%s", b.len ? b.data : "");
	else
		snprintf(res, sizeof res, "(error %d: %s)", e.code, e.msg);
	llr_buf_free(&b);
	llr_tokenizer_free(t);
	return res;
}

#define TOK(lang, s, want) CHECK_STR(tk(lang, 0, 0, 0, 0, s), want)
#define CHECK_STR(got, want)                                                      \
	do {                                                                      \
		const char *g_ = (got), *w_ = (want);                             \
		if (strcmp(g_, w_)) {                                             \
			printf("#   %s:%d: got  '%s'\n#   want '%s'\n", __FILE__, \
			       __LINE__, g_, w_);                                 \
			t_failed_checks++;                                        \
		}                                                                 \
	} while (0)

static void test_french(void)
{
	CHECK_STR(tk("fr", 1, 0, 0, 0, "L'homme qu'il a vu coûte 3,5 euros."), "l' homme qu' il a vu coûte 3,5 euros .");
	TOK("fr", "jusqu'à aujourd'hui, d'aujourd'hui", "jusqu' à aujourd'hui , d' aujourd'hui");
	TOK("fr", "l\xe2\x80\x99homme s\xe2\x80\x99il", "l\xe2\x80\x99 homme s\xe2\x80\x99 il");
	TOK("fr", "Qu'est-ce que c'est ? Lorsqu'il", "Qu' est -ce que c' est ? Lorsqu' il");
	TOK("fr", "dit-il, a-t-il, rendez-vous, peut-être, celle-ci", "dit -il , a -t-il , rendez-vous , peut-être , celle-ci");
	TOK("fr", "d'1,5 million", "d' 1,5 million");
	TOK(NULL, "l'homme", "l'homme");
}

static void test_english(void)
{
	TOK("en", "Don't DON'T can't won't", "Do n't DO N'T ca n't wo n't");
	TOK("en", "John's they're I'm we've he'll I'd", "John 's they 're I 'm we 've he 'll I 'd");
	TOK("en", "o'clock O'Neil's cannot", "o'clock O'Neil 's can not");
	TOK("en", "don\xe2\x80\x99t", "do n\xe2\x80\x99t");
	TOK("en", "\"Hi,\" she said (twice).", "\" Hi , \" she said ( twice ) .");
}

static void test_numbers_urls(void)
{
	TOK(NULL, "1.000 1999 -12.5 1/2 3,5% 12:30 (-4)", "1.000 1999 -12.5 1/2 3,5 % 12:30 ( -4 )");
	TOK(NULL, "in 1999. Then", "in 1999 . Then");
	TOK(NULL, "see https://ex.com/a_b?c=1&d=2. ok", "see https://ex.com/a_b?c=1&d=2 . ok");
	TOK(NULL, "(www.example.org)", "( www.example.org )");
	TOK(NULL, "mail john.doe+x@mail.example.com, now", "mail john.doe+x@mail.example.com , now");
	TOK(NULL, "a@b not mail", "a @ b not mail");
	TOK(NULL, "Wait... what?!", "Wait ... what ?!");
	TOK(NULL, "a -- b", "a -- b");
	TOK(NULL, "  \t ", "");
	TOK(NULL, "", "");
	TOK(NULL, "x\xc2\xad"
	          "y z\xe2\x80\x8bw",
	    "xy zw"); /* soft hyphen, ZWSP dropped */
}

static void test_normalisation(void)
{
	/* e + combining acute -> U+00E9 (NFC); the ligature only under NFKC. */
	CHECK_STR(tk(NULL, 0, 0, 0, 0, "cafe\xcc\x81 \xef\xac\x81n"), "caf\xc3\xa9 \xef\xac\x81n");
	CHECK_STR(tk(NULL, 0, 1, 0, 0, "cafe\xcc\x81 \xef\xac\x81n"), "caf\xc3\xa9 fin");
	CHECK_STR(tk(NULL, 1, 0, 0, 0, "ÉCOLE Straße ΣΟΦΙΑ"), "école straße σοφια");
	llr_buf b = {0};
	llr_err e = {0};
	CHECK(llr_normalize("E\xcc\x81t\xc3\xa9", 6, 0, 1, &b, &e) == LLR_OK);
	CHECK(b.len == 5 && !strcmp(b.data, "\xc3\xa9t\xc3\xa9"));
	CHECK(llr_normalize("a\xff", 2, 0, 0, &b, &e) == LLR_EUTF8);
	llr_buf_free(&b);
	CHECK(!strncmp(tk(NULL, 0, 0, 0, 0, "ok \xc3\x28"), "(error -5", 9));
	llr_tok_opts o = {0, 0, "de", 0};
	CHECK(llr_tokenizer_new(&o, &e) == NULL && e.code == LLR_EINVAL);
}

static void test_chars(void)
{
	CHECK_STR(tk(NULL, 1, 0, 1, 0, " Ab  c\xcc\xa7!"), "a b \xe2\x96\x81 \xc3\xa7 !");
	CHECK_STR(tk(NULL, 0, 0, 1, 1, "Oui. Non."), "O u i .\nN o n .");
}

static void test_sentences(void)
{
	CHECK_STR(tk("fr", 0, 0, 0, 1, "M. Dupont est là. Mme Durand aussi, etc. Puis « Fin ! » dit-elle. Oui..."),
	          "M. Dupont est là .\nMme Durand aussi , etc.\nPuis « Fin ! » dit -elle .\nOui ...");
	CHECK_STR(tk("en", 0, 0, 0, 1, "Mr. Smith said \"Hi.\" Then e.g. this. The U.S. won. See p. 4. No. 5 is it. He said no. Ok"),
	          "Mr. Smith said \" Hi . \"\nThen e.g. this .\nThe U.S. won .\nSee p. 4 .\nNo. 5 is it .\nHe said no .\nOk");
	CHECK_STR(tk("en", 0, 0, 0, 1, "What? no way. (Really.) Yes"), "What ? no way .\n( Really . )\nYes");
	CHECK_STR(tk("en", 0, 0, 0, 1, "Line one\nstill one. Two"), "Line one still one .\nTwo");
}

static int collect(const char *name, size_t len, float v, void *ctx)
{
	llr_buf *b = ctx;
	llr_buf_append(b, name, len);
	llr_buf_printf(b, "=%g;", v);
	return 0;
}

static void test_conllu(void)
{
	char l1[] = "1\tL'\tle\tDET\t_\tDefinite=Def|Number=Sing\t2\tdet\t_\t_";
	llr_conllu_word w;
	llr_err e = {0};
	CHECK(llr_conllu_parse(l1, strlen(l1), &w, &e) == LLR_OK);
	CHECK(w.kind == 0 && !strcmp(w.form, "L'") && !strcmp(w.upos, "DET") && !strcmp(w.misc, "_"));
	char l2[] = "3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_";
	CHECK(llr_conllu_parse(l2, strlen(l2), &w, &e) == LLR_OK);
	CHECK(w.kind == 1 && w.range_first == 3 && w.range_last == 4 && !strcmp(w.form, "du"));
	char l3[] = "5.1\tx\t_\t_\t_\t_\t_\t_\t_\t_";
	CHECK(llr_conllu_parse(l3, strlen(l3), &w, &e) == LLR_OK && w.kind == 2);
	char l4[] = "7\t17 451\t17 451\tNUM\t_\t_\t1\tnummod\t_\t_";
	CHECK(llr_conllu_parse(l4, strlen(l4), &w, &e) == LLR_OK && !strcmp(w.form, "17 451"));
	char b1[] = "1\tx\t_\t_";
	CHECK(llr_conllu_parse(b1, strlen(b1), &w, &e) == LLR_EFORMAT && strstr(e.msg, "found 4"));
	char b2[] = "x\tx\t_\t_\t_\t_\t_\t_\t_\t_";
	CHECK(llr_conllu_parse(b2, strlen(b2), &w, &e) == LLR_EFORMAT && strstr(e.msg, "bad ID"));
	char b3[] = "4-2\tx\t_\t_\t_\t_\t_\t_\t_\t_";
	CHECK(llr_conllu_parse(b3, strlen(b3), &w, &e) == LLR_EFORMAT);
	char b4[] = "1\t\t_\t_\t_\t_\t_\t_\t_\t_";
	CHECK(llr_conllu_parse(b4, strlen(b4), &w, &e) == LLR_EFORMAT && strstr(e.msg, "column 2"));
	char b5[] = "1\tx\t_\t_\t_\t_\t_\t_\t_\t_\t_";
	CHECK(llr_conllu_parse(b5, strlen(b5), &w, &e) == LLR_EFORMAT);

	llr_buf b = {0};
	CHECK(llr_conllu_feats("Gender=Fem|PronType=Int,Rel", collect, &b, &e) == LLR_OK);
	CHECK(b.len && !strcmp(b.data, "Gender:Fem=1;PronType:Int=1;PronType:Rel=1;"));
	llr_buf_clear(&b);
	CHECK(llr_conllu_feats("_", collect, &b, &e) == LLR_OK && b.len == 0);
	CHECK(llr_conllu_feats("Gender", collect, &b, &e) == LLR_EFORMAT);
	CHECK(llr_conllu_feats("Gender=", collect, &b, &e) == LLR_EFORMAT);
	CHECK(llr_conllu_feats("A=b||C=d", collect, &b, &e) == LLR_EFORMAT);
	CHECK(llr_conllu_feats("A=b,", collect, &b, &e) == LLR_EFORMAT);
	llr_buf_free(&b);
}

static ssize_t str_read(void *src, void *buf, size_t n, llr_err *err)
{
	const char **p = src;
	(void)err;
	size_t k = strlen(*p);
	if (k > n)
		k = n;
	memcpy(buf, *p, k);
	*p += k;
	return (ssize_t)k;
}

static void test_vocab(void)
{
	llr_vocab *v = llr_vocab_new();
	llr_err e = {0};
	const char *lines[] = {"b a c a", "", "  ", "c\tb a", "z"};
	for (int i = 0; i < 5; i++)
		CHECK(llr_vocab_count_line(v, lines[i], strlen(lines[i]), &e) == LLR_OK);
	CHECK(llr_vocab_sort(v, &e) == LLR_OK);
	CHECK(llr_vocab_size(v) == 5);
	/* a and </s> tie at 3: '<' sorts before 'a'. */
	CHECK(!strcmp(llr_vocab_token(v, 0), "</s>") && llr_vocab_count(v, 0) == 3);
	CHECK(!strcmp(llr_vocab_token(v, 1), "a") && llr_vocab_count(v, 1) == 3);
	CHECK(!strcmp(llr_vocab_token(v, 2), "b") && !strcmp(llr_vocab_token(v, 3), "c"));
	CHECK(!strcmp(llr_vocab_token(v, 4), "z") && llr_vocab_count(v, 4) == 1);
	CHECK(llr_vocab_id(v, "c", 1) == 3 && llr_vocab_id(v, "a", 1) == 1 && llr_vocab_id(v, "q", 1) == -1);
	CHECK(llr_vocab_token(v, 5) == NULL && llr_vocab_count(v, -1) == 0);

	const char *src = "a\t2\nnew\t7\n\nb\t0\n";
	llr_lines *l = llr_lines_from(str_read, &src, "counts", 0);
	CHECK(llr_vocab_read(v, l, &e) == LLR_OK);
	llr_lines_close(l);
	CHECK(llr_vocab_sort(v, &e) == LLR_OK);
	CHECK(!strcmp(llr_vocab_token(v, 0), "new") && !strcmp(llr_vocab_token(v, 1), "a") && llr_vocab_count(v, 1) == 5);

	const char *bad[] = {"a 1\n", "\t3\n", "a\t-1\n", "a\t\n", "a\t99999999999999999999\n", "x y\t1\n"};
	for (int i = 0; i < 6; i++) {
		const char *s = bad[i];
		l = llr_lines_from(str_read, &s, "f", 0);
		e.code = 0;
		CHECK(llr_vocab_read(v, l, &e) < 0 && !strncmp(e.msg, "f:1: ", 5));
		llr_lines_close(l);
	}
	llr_vocab_free(v);
	llr_vocab_free(NULL);

	/* Ties in byte order, by memcmp: "B" < "a" < "ab" < "b" < "\xc3\xa9". */
	v = llr_vocab_new();
	const char *t = "b \xc3\xa9 ab a B";
	CHECK(llr_vocab_count_line(v, t, strlen(t), &e) == LLR_OK);
	CHECK(llr_vocab_sort(v, &e) == LLR_OK);
	const char *want[] = {"</s>", "B", "a", "ab", "b", "\xc3\xa9"};
	for (int i = 0; i < 6; i++)
		CHECK(!strcmp(llr_vocab_token(v, i), want[i]));
	llr_vocab_free(v);
}

/* llr_token_next (8 bytes at a time inside a token) against the rule
 * read byte by byte, on random lines of letters, UTF-8 bytes, spaces and
 * TABs, of every length from 0 to 40 at every start offset: the same
 * tokens at the same places. */
static void test_token_split(void)
{
	const char alphabet[] = {' ', '\t', 'a', 'Z', '0', '-', (char)0xc3, (char)0xa9, (char)0x89, (char)0x20 ^ (char)0x80};
	char line[48];
	uint64_t st = 12345;
	int bad = 0, tokens = 0;
	for (int rep = 0; rep < 20000; rep++) {
		size_t len = (size_t)(rep % 41);
		for (size_t i = 0; i < len; i++) {
			st = st * 6364136223846793005ull + 1442695040888963407ull;
			int k = (int)((st >> 33) % 10);
			line[i] = alphabet[(st >> 40) % 4 == 0 ? k % 2 : k];
		}
		size_t pos = 0, ref = 0, tl, n = 0;
		const char *t;
		for (;;) {
			while (ref < len && (line[ref] == ' ' || line[ref] == '\t'))
				ref++;
			size_t s0 = ref;
			while (ref < len && line[ref] != ' ' && line[ref] != '\t')
				ref++;
			int got = llr_token_next(line, len, &pos, &t, &tl);
			if (got != (ref > s0) || pos != ref || (got && (t != line + s0 || tl != ref - s0))) {
				bad++;
				break;
			}
			if (!got)
				break;
			n++;
		}
		if (llr_tokens_count(line, len) != n)
			bad++;
		tokens += (int)n;
	}
	CHECK(bad == 0);
	CHECK(tokens > 50000);
}

int main(void)
{
	PLAN(9);
	RUN(test_french);
	RUN(test_english);
	RUN(test_numbers_urls);
	RUN(test_normalisation);
	RUN(test_chars);
	RUN(test_sentences);
	RUN(test_conllu);
	RUN(test_vocab);
	RUN(test_token_split);
	DONE();
}
