/*
 * test_fsa.c - automata over tokens (lib/fsa/): the OpenFst text reader
 * (arcs, weights, final states, transducer lines, <eps> and the
 * determinisation it triggers, comments; every refusal with its
 * file:line), the regular-expression compiler against a brute-force
 * matcher of random expressions on random token strings, and the state
 * machine's queries (next, final, the distance to a final state, run)
 * against a breadth-first search over token strings, and the
 * intersection of two automata (llr_fsa_meet) against its factors run
 * side by side.
 */
#include <stdint.h>
#include <unistd.h>

#include "internal.h"
#include "test.h"

/* </s>, <unk>, then the tokens; "." a token to escape. */
static const char *TOKS[] = {"</s>", "<unk>", "a", "b", "c", "d", ".", "<s>"};
enum { NT = 8, EOS = 0, FIRST = 1, LAST = 6 };

static llr_strmap *vocab(void)
{
	llr_strmap *m = llr_strmap_new();
	for (int i = 0; i < NT; i++)
		llr_strmap_add(m, TOKS[i], strlen(TOKS[i]));
	return m;
}

static char tmpl[512];

static const char *write_file(const char *text)
{
	snprintf(tmpl, sizeof tmpl, "%s/test_fsa.XXXXXX", test_tmpdir());
	int fd = mkstemp(tmpl);
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return tmpl;
}

/* Read text as an automaton; NULL with e's message. */
static llr_fsa *read_text(const llr_strmap *v, const char *text, llr_err *e)
{
	const char *p = write_file(text);
	llr_fsa *a = llr_fsa_read(p, v, e);
	unlink(p);
	return a;
}

static int32_t id(const llr_strmap *v, const char *t)
{
	return llr_strmap_get(v, t, strlen(t));
}

/* Does a accept the sentence of tokens s (space separated)? */
static int accepts(const llr_fsa *a, const llr_strmap *v, const char *s)
{
	int32_t ids[32];
	size_t n = 0;
	char buf[256];
	strcpy(buf, s);
	for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
		ids[n++] = id(v, t);
	int32_t q = llr_fsa_run(a, ids, n);
	return q >= 0 && llr_fsa_final(a, q) != -INFINITY;
}

static void test_read(void)
{
	llr_strmap *v = vocab();
	llr_err e = {0};
	/* a b* c, weighted; a transducer line; a comment; final weight */
	llr_fsa *a = read_text(v, "# a b* c\n0 1 a 0.5\n1 1 b b\n\n1\t2\tc\tc\t1.25\n2 0.75\n3 4 d\n", &e);
	CHECK(a != NULL);
	if (!a) {
		printf("# %s\n", e.msg);
		llr_strmap_free(v);
		return;
	}
	CHECK(llr_fsa_states(a) == 3); /* 3 and 4 reach no final state: trimmed */
	float w;
	int32_t q = llr_fsa_start(a), q1 = llr_fsa_next(a, q, id(v, "a"), &w);
	CHECK(q1 >= 0);
	CHECK_NEAR(w, -0.5, 1e-7);
	CHECK(llr_fsa_next(a, q, id(v, "b"), NULL) == -1);
	CHECK(llr_fsa_next(a, q1, id(v, "b"), &w) == q1);
	CHECK_NEAR(w, 0, 0);
	int32_t q2 = llr_fsa_next(a, q1, id(v, "c"), &w);
	CHECK_NEAR(w, -1.25, 1e-7);
	CHECK_NEAR(llr_fsa_final(a, q2), -0.75, 1e-7);
	CHECK(llr_fsa_final(a, q1) == -INFINITY);
	CHECK(llr_fsa_dist(a, q) == 2 && llr_fsa_dist(a, q1) == 1 && llr_fsa_dist(a, q2) == 0);
	CHECK(llr_fsa_next(a, q1, id(v, "</s>"), NULL) == -1);
	CHECK(accepts(a, v, "a c") && accepts(a, v, "a b b b c") && !accepts(a, v, "a b") && !accepts(a, v, "c"));
	int32_t bad[] = {id(v, "a"), id(v, "b"), id(v, "d")};
	CHECK(llr_fsa_run(a, bad, 3) == -3);
	llr_fsa_free(a);

	/* Infinity: no arc, not final; the start is the first line's source */
	a = read_text(v, "5 6 a\n5 6 b Infinity\n6\n5 inf\n", &e);
	CHECK(a && accepts(a, v, "a") && !accepts(a, v, "b") && !accepts(a, v, ""));
	llr_fsa_free(a);

	/* unweighted and nondeterministic, with <eps>: determinised */
	a = read_text(v, "0 1 a\n0 2 a\n1 3 b\n2 3 c\n3 4 <eps>\n4\n0 4 <eps>\n", &e);
	CHECK(a != NULL);
	CHECK(a && accepts(a, v, "a b") && accepts(a, v, "a c") && accepts(a, v, "") && !accepts(a, v, "a"));
	llr_fsa_free(a);
	llr_strmap_free(v);
}

/* The message of reading text, "FILE" standing for the file's name. */
static const char *read_error(const llr_strmap *v, const char *text, char *msg)
{
	llr_err e = {0};
	const char *p = write_file(text);
	llr_fsa *a = llr_fsa_read(p, v, &e);
	unlink(p);
	if (a) {
		llr_fsa_free(a);
		return strcpy(msg, "(accepted)");
	}
	size_t n = strlen(p);
	if (!strncmp(e.msg, p, n))
		sprintf(msg, "FILE%s", e.msg + n);
	else
		strcpy(msg, e.msg);
	return msg;
}

static void test_read_errors(void)
{
	llr_strmap *v = vocab();
	char m[600];
	CHECK(!strcmp(read_error(v, "0 1 a\n1 x b\n", m), "FILE:2: bad state 'x' (want an integer from 0 to 67108863)"));
	CHECK(!strcmp(read_error(v, "0 1 a z\n1\n", m), "FILE:1: input label 'a' and output label 'z' differ (want an acceptor)"));
	CHECK(!strcmp(read_error(v, "0 1 a b 1\n1\n", m), "FILE:1: input label 'a' and output label 'b' differ (want an acceptor)"));
	CHECK(!strcmp(read_error(v, "0 1 a\n1 nan\n", m), "FILE:2: bad weight 'nan' (want a number, or Infinity)"));
	CHECK(!strncmp(read_error(v, "0 1 a 1 1 1 1\n", m), "FILE:1: too many fields", 23));
	CHECK(!strcmp(read_error(v, "0 1 </s>\n1\n", m), "FILE:1: </s> is not a label: a sentence ends in a final state"));
	CHECK(!strcmp(read_error(v, "0 1 zz\n1 2 a\n2 3 yy\n3 4 zz\n4\n", m),
	              "FILE: 2 tokens the model cannot produce (not in the vocabulary): zz (line 1), yy (line 3)"));
	CHECK(!strcmp(read_error(v, "0 1 a\n1 2 b\n", m), "FILE: the automaton accepts nothing (no final state is reachable from its start)"));
	CHECK(!strcmp(read_error(v, "", m), "FILE: an empty automaton accepts nothing"));
	CHECK(!strcmp(read_error(v, "0 1 a 1\n0 2 a\n1\n2\n", m),
	              "FILE:2: the automaton is weighted and not deterministic (two arcs of one label from state 0): "
	              "determinise it first (fstdeterminize), or drop its weights"));
	llr_strmap_free(v);
}

/* ----------------------------------------------- random expressions */

enum { TOK, ANY, CLS, CAT, ALT, STAR, PLUS, QUES };
typedef struct node {
	int op, tok, neg;
	unsigned set; /* CLS: bit per token id */
	struct node *l, *r;
} node;

static node pool[4096];
static int npool;

static node *gen(llr_rng *g, int depth)
{
	node *n = &pool[npool++];
	memset(n, 0, sizeof *n);
	int op = depth <= 0 ? (int)llr_rng_below(g, 3) : (int)llr_rng_below(g, 8);
	n->op = op;
	if (op == TOK)
		n->tok = FIRST + 1 + (int)llr_rng_below(g, LAST - FIRST); /* a .. "." */
	else if (op == CLS) {
		n->neg = (int)llr_rng_below(g, 2);
		for (int t = FIRST + 1; t <= LAST; t++)
			if (llr_rng_below(g, 3) == 0)
				n->set |= 1u << t;
	} else if (op >= CAT) {
		n->l = gen(g, depth - 1);
		if (op <= ALT)
			n->r = gen(g, depth - 1);
	}
	return n;
}

static void render(const node *n, llr_buf *b)
{
	switch (n->op) {
	case TOK:
		llr_buf_printf(b, "%s", n->tok == LAST ? "\\." : TOKS[n->tok]);
		break;
	case ANY:
		llr_buf_printf(b, ".");
		break;
	case CLS:
		llr_buf_printf(b, "[%s", n->neg ? "^" : "");
		for (int t = FIRST + 1; t <= LAST; t++)
			if (n->set >> t & 1)
				llr_buf_printf(b, " %s", t == LAST ? "\\." : TOKS[t]);
		llr_buf_printf(b, "]");
		break;
	case CAT:
	case ALT:
		llr_buf_printf(b, "(");
		render(n->l, b);
		llr_buf_printf(b, n->op == CAT ? ") (" : ")|(");
		render(n->r, b);
		llr_buf_printf(b, ")");
		break;
	default:
		llr_buf_printf(b, "(");
		render(n->l, b);
		llr_buf_printf(b, ")%c", n->op == STAR ? '*' : n->op == PLUS ? '+' : '?');
	}
}

/* The end positions of n's matches of s[i..] as a bit set. */
static unsigned ends(const node *n, const int *s, int len, int i)
{
	unsigned out = 0, todo, seen;
	switch (n->op) {
	case TOK:
		return i < len && s[i] == n->tok ? 1u << (i + 1) : 0;
	case ANY:
		return i < len ? 1u << (i + 1) : 0;
	case CLS:
		return i < len && (((n->set >> s[i]) & 1) != (unsigned)n->neg) ? 1u << (i + 1) : 0;
	case CAT:
		todo = ends(n->l, s, len, i);
		for (int j = 0; j <= len; j++)
			if (todo >> j & 1)
				out |= ends(n->r, s, len, j);
		return out;
	case ALT:
		return ends(n->l, s, len, i) | ends(n->r, s, len, i);
	case QUES:
		return 1u << i | ends(n->l, s, len, i);
	default: /* STAR, PLUS: the closure of one more repetition */
		seen = n->op == STAR ? 1u << i : 0;
		todo = ends(n->l, s, len, i);
		while (todo & ~seen) {
			unsigned fresh = todo & ~seen;
			seen |= fresh;
			todo = 0;
			for (int j = 0; j <= len; j++)
				if (fresh >> j & 1)
					todo |= ends(n->l, s, len, j);
		}
		return seen;
	}
}

static void test_regex_random(void)
{
	llr_strmap *v = vocab();
	llr_rng g;
	llr_rng_seed(&g, 51);
	int compared = 0, accepted = 0, exprs = 0;
	for (int k = 0; k < 300; k++) {
		npool = 0;
		node *n = gen(&g, 1 + (int)llr_rng_below(&g, 4));
		llr_buf b = {0};
		render(n, &b);
		llr_err e = {0};
		llr_fsa *a = llr_fsa_regex(b.data, v, &e);
		int any = 0; /* does the brute force accept some string up to 6 long? */
		int s[8];
		for (int t = 0; t < 400; t++) {
			int len = (int)llr_rng_below(&g, 7);
			for (int i = 0; i < len; i++)
				s[i] = FIRST + (int)llr_rng_below(&g, LAST - FIRST + 1); /* <unk> too: "." matches it */
			int want = ends(n, s, len, 0) >> len & 1;
			any |= want;
			if (!a)
				continue;
			int32_t q = llr_fsa_run(a, s, (size_t)len);
			int got = q >= 0 && llr_fsa_final(a, q) != -INFINITY;
			if (got != want && compared < 1000000)
				printf("#   '%s' on a string of %d: dfa %d, brute force %d\n", b.data, len, got, want);
			CHECK(got == want);
			compared++;
			accepted += got;
		}
		if (!a) { /* refused: only for a language without short strings we saw */
			CHECK(!any);
			CHECK(strstr(e.msg, "accepts nothing") != NULL);
		}
		exprs += a != NULL;
		llr_fsa_free(a);
		llr_buf_free(&b);
	}
	printf("# %d expressions, %d strings compared, %d accepted\n", exprs, compared, accepted);
	CHECK(exprs > 200 && accepted > 1000 && compared - accepted > 1000);
	llr_strmap_free(v);
}

static const char *regex_error(const llr_strmap *v, const char *pat, char *msg)
{
	llr_err e = {0};
	llr_fsa *a = llr_fsa_regex(pat, v, &e);
	if (a) {
		llr_fsa_free(a);
		return strcpy(msg, "(accepted)");
	}
	return strcpy(msg, e.msg);
}

static void test_regex(void)
{
	llr_strmap *v = vocab();
	llr_err e = {0};
	llr_fsa *a = llr_fsa_regex("a (b|c)* [^ a b] \\. ?", v, &e);
	CHECK(a != NULL);
	CHECK(a && accepts(a, v, "a d") && accepts(a, v, "a b c b <unk>") && accepts(a, v, "a c .") && accepts(a, v, "a . .") &&
	      !accepts(a, v, "a b") && !accepts(a, v, "a a") && !accepts(a, v, "a d . ."));
	llr_fsa_free(a);
	a = llr_fsa_regex("", v, &e);
	CHECK(a && accepts(a, v, "") && !accepts(a, v, "a"));
	llr_fsa_free(a);
	a = llr_fsa_regex(". .*", v, &e); /* any token: one default arc, not V arcs */
	CHECK(a && llr_fsa_states(a) <= 3 && accepts(a, v, "<unk> a . d") && !accepts(a, v, ""));
	llr_fsa_free(a);
	char m[600];
	CHECK(!strcmp(regex_error(v, "a (b", m), "regex: character 5: ( without )"));
	CHECK(!strcmp(regex_error(v, "a b)", m), "regex: character 4: ) without ("));
	CHECK(!strcmp(regex_error(v, "* a", m), "regex: character 1: nothing to repeat"));
	CHECK(!strcmp(regex_error(v, "a [b c", m), "regex: character 7: [ without ]"));
	CHECK(!strcmp(regex_error(v, "a ]", m), "regex: character 3: ] without ["));
	CHECK(!strcmp(regex_error(v, "a\\", m), "regex: character 2: a \\ ends the pattern"));
	CHECK(!strcmp(regex_error(v, "a </s>", m), "regex: character 7: </s> is not a token of a sentence (a match ends at the end of the sentence)"));
	CHECK(!strcmp(regex_error(v, "a zz (yy|zz)", m), "regex: 2 tokens the model cannot produce (not in the vocabulary): zz, yy"));
	CHECK(!strcmp(regex_error(v, "a []", m), "regex: the automaton accepts nothing (no final state is reachable from its start)"));
	llr_strmap_free(v);
}

/* The fewest tokens that lead from state qa of a (and qb of b, when b
 * is not NULL) to a final state of both, found by enumerating token
 * strings of up to maxlen; -1 when none. */
static int shortest_end(const llr_fsa *a, int32_t qa, const llr_fsa *b, int32_t qb, int maxlen)
{
	for (int len = 0; len <= maxlen; len++) {
		long total = 1;
		for (int i = 0; i < len; i++)
			total *= LAST - FIRST + 1;
		for (long c = 0; c < total; c++) {
			long x = c;
			int32_t p = qa, r = qb;
			for (int i = 0; i < len && p >= 0 && r >= 0; i++, x /= LAST - FIRST + 1) {
				int32_t t = FIRST + (int32_t)(x % (LAST - FIRST + 1));
				p = llr_fsa_next(a, p, t, NULL);
				r = b ? llr_fsa_next(b, r, t, NULL) : 0;
			}
			if (p >= 0 && r >= 0 && llr_fsa_final(a, p) != -INFINITY && (!b || llr_fsa_final(b, r) != -INFINITY))
				return len;
		}
	}
	return -1;
}

/* dist against a breadth-first search over token strings: the shortest
 * accepted continuation from each state, found by enumerating strings. */
static void test_dist(void)
{
	llr_strmap *v = vocab();
	llr_err e = {0};
	llr_fsa *a = llr_fsa_regex("(a b c d|b+ c) (d d | .)? c", v, &e);
	CHECK(a != NULL);
	for (int32_t q = 0; a && q < llr_fsa_states(a); q++)
		CHECK(shortest_end(a, q, NULL, 0, 7) == llr_fsa_dist(a, q));
	CHECK(a && llr_fsa_dist(a, llr_fsa_start(a)) == 3);
	llr_fsa_free(a);
	llr_strmap_free(v);
}

/* The intersection m of a and b against a and b run side by side, on
 * every token string of up to 3 tokens: m rejects a prefix when one of
 * them does; otherwise its state allows a token (by next, and by its
 * arcs and default arc) when both do, with b's weight, is final when
 * both are, with b's final weight, and its distance to a final state is
 * the enumerated one (none within 5: the search found none). */
static void check_meet(const llr_fsa *m, const llr_fsa *a, const llr_fsa *b)
{
	const int32_t K = LAST - FIRST + 1;
	for (long c = 0; c < 1 + K + K * K + K * K * K; c++) {
		int32_t ids[3], n = c < 1 ? 0 : c < 1 + K ? 1 : c < 1 + K + K * K ? 2 : 3;
		long x = c - (n == 0 ? 0 : n == 1 ? 1 : n == 2 ? 1 + K : 1 + K + K * K);
		for (int32_t i = 0; i < n; i++, x /= K)
			ids[i] = FIRST + (int32_t)(x % K);
		int32_t q = llr_fsa_run(m, ids, (size_t)n), qa = llr_fsa_run(a, ids, (size_t)n), qb = llr_fsa_run(b, ids, (size_t)n);
		CHECK((q >= 0) == (qa >= 0 && qb >= 0));
		if (q < 0)
			continue;
		float fb = llr_fsa_final(b, qb);
		CHECK(llr_fsa_final(m, q) == (llr_fsa_final(a, qa) != -INFINITY ? fb : -INFINITY));
		const int32_t *lab, *dst;
		const float *lw;
		int32_t na = llr_fsa_arcs(m, q, &lab, &dst, &lw), def = llr_fsa_default(m, q, NULL);
		for (int32_t t = 0; t < NT; t++) {
			float w = 0, wb = 0;
			int32_t to = llr_fsa_next(m, q, t, &w), tb = llr_fsa_next(b, qb, t, &wb);
			CHECK((to >= 0) == (llr_fsa_next(a, qa, t, NULL) >= 0 && tb >= 0));
			CHECK(to < 0 || w == wb);
			if (t == EOS || !strcmp(TOKS[t], "<s>"))
				continue;
			int32_t k = 0;
			while (k < na && lab[k] != t)
				k++;
			CHECK((k < na ? dst[k] : def) == to);
			CHECK(k == na || to < 0 || lw[k] == wb);
		}
		int want = shortest_end(a, qa, b, qb, 5);
		int32_t d = llr_fsa_dist(m, q);
		CHECK(want >= 0 ? d == want : d == INT32_MAX);
	}
}

static void test_meet(void)
{
	llr_strmap *v = vocab();
	llr_err e = {0};
	const char *pairs[][2] = {{"(a|b) .* c", "[^ b] .* [^ d]"}, /* both with default arcs */
	                          {"(a|b) c* d", "a c* d|b c"},     /* dead pairs: "b c" */
	                          {". . .*", "a|b c|c . d"}};
	for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
		llr_fsa *a = llr_fsa_regex(pairs[i][0], v, &e), *b = llr_fsa_regex(pairs[i][1], v, &e);
		llr_fsa *m = a && b ? llr_fsa_meet(a, b, &e) : NULL;
		CHECK(m != NULL && llr_fsa_meet_support(m) == a && !llr_fsa_meet_support(a));
		if (m)
			check_meet(m, a, b);
		llr_fsa_free(m);
		llr_fsa_free(b);
		llr_fsa_free(a);
	}
	/* weighted b: its weights, a's left out */
	llr_fsa *a = read_text(v, "0 1 a 3.0\n0 1 b\n1 1 c 2.0\n1 2 d\n2\n1\n", &e);
	llr_fsa *b = read_text(v, "0 1 a 0.5\n0 2 b\n1 1 c 1.0\n1 2 d\n2 0.25\n1\n", &e);
	llr_fsa *m = a && b ? llr_fsa_meet(a, b, &e) : NULL;
	CHECK(m != NULL);
	if (m) {
		check_meet(m, a, b);
		CHECK(accepts(m, v, "a c c") && accepts(m, v, "a d") && accepts(m, v, "b") && accepts(m, v, "a") && !accepts(m, v, "b d") && !accepts(m, v, "a d c"));
	}
	llr_fsa_free(m);
	llr_fsa_free(b);
	/* a grammar as b */
	const char *g = "root ::= \"a\" (\" c\")* \" d\" | \"b\"\n";
	b = llr_fsa_grammar_text(g, strlen(g), "test.gbnf", v, &e);
	m = a && b ? llr_fsa_meet(a, b, &e) : NULL;
	CHECK(m != NULL);
	if (m)
		check_meet(m, a, b);
	llr_fsa_free(m);
	llr_fsa_free(b);
	llr_fsa_free(a);
	/* nothing in common: refused */
	a = llr_fsa_regex("a .* b", v, &e);
	b = llr_fsa_regex("a .* c", v, &e);
	m = a && b ? llr_fsa_meet(a, b, &e) : NULL;
	CHECK(a && b && !m && e.code == LLR_EFORMAT);
	CHECK(!strcmp(e.msg, "no sentence is accepted by both: their intersection is empty"));
	llr_fsa_free(b);
	b = llr_fsa_grammar_text("root ::= \"b c\"\n", 14, "g", v, &e);
	m = a && b ? llr_fsa_meet(a, b, &e) : NULL;
	CHECK(b && !m && !strcmp(e.msg, "no sentence is accepted by both: their intersection is empty"));
	llr_fsa_free(b);
	llr_fsa_free(a);
	llr_strmap_free(v);
}

int main(void)
{
	PLAN(6);
	RUN(test_read);
	RUN(test_read_errors);
	RUN(test_regex);
	RUN(test_regex_random);
	RUN(test_dist);
	RUN(test_meet);
	DONE();
}
