/*
 * test_fsa.c - automata over tokens (lib/fsa/): the OpenFst text reader
 * (arcs, weights, final states, transducer lines, <eps> and the
 * determinisation it triggers, comments; every refusal with its
 * file:line), the regular-expression compiler against a brute-force
 * matcher of random expressions on random token strings, and the state
 * machine's queries (next, final, the distance to a final state, run)
 * against a breadth-first search over token strings, and the
 * intersection of two automata (llr_fsa_meet) against its factors run
 * side by side, and the trimming of a grammar, alone and intersected
 * with an automaton, against a brute-force search for a sentence that
 * continues each prefix (the grammar's own matcher on the tokens joined
 * by spaces).
 */
#include <stdint.h>
#include <unistd.h>

#include "fsa/gbnf.h"
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

/* Do a in state qa and b in qb both accept a string from there (the
 * pair is live), by enumeration up to 5 tokens; with trimmed 0 (b is a
 * grammar), whenever both states exist. */
static int meet_live(const llr_fsa *a, int32_t qa, const llr_fsa *b, int32_t qb, int trimmed)
{
	return qa >= 0 && qb >= 0 && (!trimmed || shortest_end(a, qa, b, qb, 5) >= 0);
}

/* The prefixes of up to 3 tokens of FIRST..LAST, numbered: the empty
 * one, then those of 1, 2 and 3 tokens; writes the c-th to ids and
 * returns its length. */
#define K_TOKENS (LAST - FIRST + 1)
#define N_PREFIXES (1L + K_TOKENS + K_TOKENS * K_TOKENS + K_TOKENS * K_TOKENS * K_TOKENS)
static int32_t nth_prefix(long c, int32_t *ids)
{
	const long K = K_TOKENS;
	int32_t n = c < 1 ? 0 : c < 1 + K ? 1 : c < 1 + K + K * K ? 2 : 3;
	long x = c - (n == 0 ? 0 : n == 1 ? 1 : n == 2 ? 1 + K : 1 + K + K * K);
	for (int32_t i = 0; i < n; i++, x /= K)
		ids[i] = FIRST + (int32_t)(x % K);
	return n;
}

/* The intersection m of a and b against a and b run side by side, on
 * every token string of up to 3 tokens: m rejects a prefix when one of
 * them does, or (trimmed: two automata) when no string of both
 * continues it; otherwise its state allows a token (by next, and by its
 * arcs and default arc) when both do and (trimmed) a string of both
 * continues it, with b's weight (weighted: a's and b's), is final when
 * both are, with b's final weight (weighted: a's and b's), and its
 * distance to a final state is the enumerated one (none within 5: the
 * search found none). */
static void check_meet(const llr_fsa *m, const llr_fsa *a, const llr_fsa *b, int trimmed, int weighted)
{
	for (long c = 0; c < N_PREFIXES; c++) {
		int32_t ids[3], n = nth_prefix(c, ids);
		int32_t q = llr_fsa_run(m, ids, (size_t)n), qa = llr_fsa_run(a, ids, (size_t)n), qb = llr_fsa_run(b, ids, (size_t)n);
		CHECK((q >= 0) == meet_live(a, qa, b, qb, trimmed));
		if (q < 0)
			continue;
		float fa = llr_fsa_final(a, qa), fb = llr_fsa_final(b, qb);
		CHECK(llr_fsa_final(m, q) == (fa != -INFINITY && fb != -INFINITY ? fb + (weighted ? fa : 0.0f) : -INFINITY));
		const int32_t *lab, *dst;
		const float *lw;
		int32_t na = llr_fsa_arcs(m, q, &lab, &dst, &lw), def = llr_fsa_default(m, q, NULL);
		for (int32_t t = 0; t < NT; t++) {
			float w = 0, wa = 0, wb = 0;
			int32_t to = llr_fsa_next(m, q, t, &w), ta = llr_fsa_next(a, qa, t, &wa), tb = llr_fsa_next(b, qb, t, &wb);
			wb += weighted ? wa : 0.0f;
			CHECK((to >= 0) == meet_live(a, ta, b, tb, trimmed));
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
			check_meet(m, a, b, 1, 0);
		llr_fsa_free(m);
		llr_fsa_free(b);
		llr_fsa_free(a);
	}
	/* weighted b: its weights, a's left out; llr_fsa_meet_weighted: both */
	llr_fsa *a = read_text(v, "0 1 a 3.0\n0 1 b\n1 1 c 2.0\n1 2 d\n2\n1\n", &e);
	llr_fsa *b = read_text(v, "0 1 a 0.5\n0 2 b\n1 1 c 1.0\n1 2 d\n2 0.25\n1\n", &e);
	llr_fsa *m = a && b ? llr_fsa_meet(a, b, &e) : NULL;
	CHECK(m != NULL);
	if (m) {
		check_meet(m, a, b, 1, 0);
		CHECK(accepts(m, v, "a c c") && accepts(m, v, "a d") && accepts(m, v, "b") && accepts(m, v, "a") && !accepts(m, v, "b d") && !accepts(m, v, "a d c"));
	}
	llr_fsa_free(m);
	m = a && b ? llr_fsa_meet_weighted(a, b, &e) : NULL;
	CHECK(m != NULL && llr_fsa_meet_support(m) == a);
	if (m) {
		check_meet(m, a, b, 1, 1);
		float w = 0;
		CHECK(llr_fsa_next(m, llr_fsa_start(m), id(v, "a"), &w) >= 0 && w == -3.5f);
	}
	llr_fsa_free(m);
	llr_fsa_free(b);
	/* a grammar as b */
	const char *g = "root ::= \"a\" (\" c\")* \" d\" | \"b\"\n";
	b = llr_fsa_grammar_text(g, strlen(g), "test.gbnf", v, &e);
	m = a && b ? llr_fsa_meet(a, b, &e) : NULL;
	CHECK(m != NULL);
	if (m)
		check_meet(m, a, b, 1, 0);
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

/* Is there a sentence of up to depth more tokens after ids[0..n) that
 * the grammar g derives (its tokens joined by spaces, llr_gbnf_match)
 * and f (NULL: none) accepts? */
static int continued(const llr_gbnf *g, const llr_fsa *f, int32_t *ids, int n, int depth)
{
	char buf[256];
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", TOKS[ids[i]]);
	int32_t q = f ? llr_fsa_run(f, ids, (size_t)n) : 0;
	if (f && q < 0)
		return 0;
	if (llr_gbnf_match(g, buf, len) == 1 && (!f || llr_fsa_final(f, q) != -INFINITY))
		return 1;
	for (int32_t t = FIRST; depth > 0 && t <= LAST; t++) {
		if (t == 1) /* <unk>: never a token of a grammar */
			continue;
		ids[n] = t;
		if (continued(g, f, ids, n + 1, depth - 1))
			return 1;
	}
	return 0;
}

/* m (a grammar, or its intersection with f) against the search: on
 * every prefix of up to 3 tokens that it runs, a token is allowed when
 * and only when some sentence of up to 4 more tokens continues it. */
static void check_trimmed(const llr_fsa *m, const llr_gbnf *g, const llr_fsa *f)
{
	for (long c = 0; c < N_PREFIXES; c++) {
		int32_t ids[16], n = nth_prefix(c, ids);
		int32_t q = llr_fsa_run(m, ids, (size_t)n);
		if (q < 0)
			continue;
		CHECK(continued(g, f, ids, n, 5));
		for (int32_t t = FIRST; t <= LAST; t++) {
			ids[n] = t;
			int want = t != 1 && continued(g, f, ids, n + 1, 4);
			CHECK((llr_fsa_next(m, q, t, NULL) >= 0) == want);
			if ((llr_fsa_next(m, q, t, NULL) >= 0) != want)
				fprintf(stderr, "# prefix of %d tokens, token %s: allowed %d, continued %d\n", n, TOKS[t], !want, want);
		}
	}
}

/* A grammar is trimmed, alone and against an automaton on either side
 * of llr_fsa_meet: a rule that cannot end ("b" x), text that no token
 * spells ("c zz"), a sentence of the grammar the automaton does not
 * continue ("b c c" against (a|b) c d) allow no token that leads
 * there; two grammars are refused. */
static void test_grammar_trim(void)
{
	llr_strmap *v = vocab();
	llr_err e = {0};
	const char *gt[] = {"root ::= \"a\" (\" b\")* | \"b\" x | \"c zz\" | \"d\" (\" c\" | \" zz\")\nx ::= \" c\" x\n",
	                    "root ::= \"a c d\" | \"b c c\" | \"b\" (\" d\")+ \" c\"?\n"};
	for (size_t i = 0; i < 2; i++) {
		llr_gbnf *g = llr_gbnf_parse(gt[i], strlen(gt[i]), "g", &e);
		llr_fsa *d = llr_fsa_grammar_text(gt[i], strlen(gt[i]), "g", v, &e);
		CHECK(g && d);
		if (g && d)
			check_trimmed(d, g, NULL);
		if (i == 0 && d) { /* "b" and "c" lead nowhere; "d" on to " c" alone */
			int32_t s = llr_fsa_start(d), to = llr_fsa_next(d, s, id(v, "d"), NULL);
			CHECK(llr_fsa_next(d, s, id(v, "a"), NULL) >= 0 && llr_fsa_next(d, s, id(v, "b"), NULL) < 0);
			CHECK(llr_fsa_next(d, s, id(v, "c"), NULL) < 0 && to >= 0 && llr_fsa_final(d, to) == -INFINITY);
		}
		llr_fsa *a = llr_fsa_regex("(a|b) c d|b d d c", v, &e);
		for (int side = 0; a && d && side < 2; side++) {
			llr_fsa *m = side ? llr_fsa_meet(d, a, &e) : llr_fsa_meet(a, d, &e);
			/* the first grammar shares no sentence with a */
			CHECK(i ? m != NULL : !m && !strcmp(e.msg, "no sentence is accepted by both: their intersection is empty"));
			if (m && i == 1) {
				check_trimmed(m, g, a);
				check_meet(m, side ? d : a, side ? a : d, 1, 0);
				/* "b" is allowed by both, and only "b d d c" continues it */
				int32_t s = llr_fsa_start(m), tb = llr_fsa_next(m, s, id(v, "b"), NULL);
				CHECK(tb >= 0 && llr_fsa_next(m, tb, id(v, "c"), NULL) < 0 && llr_fsa_next(m, tb, id(v, "d"), NULL) >= 0);
			}
			llr_fsa_free(m);
		}
		/* two grammars */
		llr_fsa *m = d ? llr_fsa_meet(d, d, &e) : NULL;
		CHECK(d && !m && e.code == LLR_EINVAL && strstr(e.msg, "two grammars: whether two context-free grammars share a sentence is undecidable"));
		llr_fsa_free(a);
		llr_fsa_free(d);
		llr_gbnf_free(g);
	}
	llr_strmap_free(v);
}

int main(void)
{
	PLAN(7);
	RUN(test_read);
	RUN(test_read_errors);
	RUN(test_regex);
	RUN(test_regex_random);
	RUN(test_dist);
	RUN(test_meet);
	RUN(test_grammar_trim);
	DONE();
}
