/*
 * test_gbnf.c - GBNF grammars (lib/fsa/gbnf.c, gbnfrec.c): the character
 * recogniser on hand-picked strings (literals and escapes, classes and
 * negated classes, alternation, groups, * + ? {m,n}, nested and
 * recursive rules, UTF-8, comments and rules over several lines), every
 * refusal with its file:line and rule, and the token-level recogniser
 * (tokens joined by single spaces) against the character recogniser on
 * every token string up to a length, with its distance to a final state
 * against a breadth-first search, and the limit on parses alive at once
 * (an ambiguous grammar refused in milliseconds, not followed for hours),
 * and the notice of a trimming past its budget.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fsa/gbnf.h"
#include "test.h"

static llr_gbnf *gram(const char *text, llr_err *e)
{
	return llr_gbnf_parse(text, strlen(text), "g.gbnf", e);
}

static int match(const llr_gbnf *g, const char *s)
{
	return llr_gbnf_match(g, s, strlen(s));
}

/* Does grammar text accept each string of yes and reject each of no? */
static void check_lang(const char *text, const char *const *yes, const char *const *no)
{
	llr_err e = {0};
	llr_gbnf *g = gram(text, &e);
	CHECK(g != NULL);
	if (!g) {
		printf("# %s: %s\n", text, e.msg);
		return;
	}
	for (; *yes; yes++) {
		int m = match(g, *yes);
		CHECK(m == 1);
		if (m != 1)
			printf("# %s: should accept '%s'\n", text, *yes);
	}
	for (; *no; no++) {
		int m = match(g, *no);
		CHECK(m == 0);
		if (m != 0)
			printf("# %s: should reject '%s'\n", text, *no);
	}
	llr_gbnf_free(g);
}

#define S(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_accept(void)
{
	check_lang("root ::= \"ab\" | \"c\"", S("ab", "c"), S("", "a", "abc", "cc", "b"));
	check_lang("root ::= [a-c]+ [^a-z]", S("a1", "abcA", "cc "), S("", "a", "ad1", "1"));
	check_lang("root ::= \"x\"* \"y\"? \"z\"{2,3}", S("zz", "xyzz", "xxxzzz"), S("z", "zzzz", "yyzz", "xy"));
	check_lang("root ::= (\"ab\" | \"c\"){2}", S("abab", "cab", "cc"), S("ab", "ccc", "abc "));
	check_lang("root ::= [0-9]{3,}", S("123", "12345"), S("12", "12a"));
	check_lang("root ::= [0-9]{,2}", S("", "1", "12"), S("123"));
	check_lang("root ::= .+", S("a", "\xc3\xa9t\xc3\xa9", "\xf0\x9f\x98\x80"), S(""));
	/* recursion: balanced parentheses, any depth (a language no automaton has) */
	check_lang("root ::= ( \"(\" root \")\" )*", S("", "()", "(())()", "((()))"), S("(", ")(", "(()", "())"));
	/* mutual recursion, expressions with precedence */
	check_lang("root ::= expr\n"
	           "expr ::= term (\"+\" term)*\n"
	           "term ::= factor (\"*\" factor)*\n"
	           "factor ::= [0-9]+ | \"(\" expr \")\"\n",
	           S("1", "1+2*3", "(1+2)*3", "((4))", "12*(3+4)*5"), S("", "1+", "(1", "1)", "+1", "1**2"));
	/* escapes and UTF-8 in literals and classes, comments, rules over lines */
	check_lang("# a comment\n"
	           "root ::= \"\\\"\" word   # another\n"
	           "        \"\\x41\\u00e9\\t\"\n"
	           "        | [\\]\\-]\n"
	           "word ::= [a-z\\u00e0-\\u00ff]+\n",
	           S("\"\xc3\xa9t\xc3\xa9" "A\xc3\xa9\t", "]", "-"), S("\"A\xc3\xa9\t", "\"\xc3\xa9t\xc3\xa9", "a"));
	/* a rule used before its definition, names with dashes */
	check_lang("root ::= a-b a-b\na-b ::= \"x\" | \"\"", S("", "x", "xx"), S("xxx"));
	/* many optional parts: one stack reached along 2^60 paths, expanded once */
	char a60[70], a61[70];
	memset(a60, 'a', 60);
	strcpy(a60 + 60, "b");
	memset(a61, 'a', 61);
	strcpy(a61 + 61, "b");
	check_lang("root ::= (\"a\"?){0,60} \"b\"", S("b", "aab", a60), S("a", "", a61));
	/* nullable prefixes are fine when they do not recurse */
	check_lang("root ::= sp \"a\" sp\nsp ::= \" \"*", S("a", " a ", "   a"), S(" ", "a a"));
}

/* text is refused with a message holding want. */
static void refused(const char *text, const char *want)
{
	llr_err e = {0};
	llr_gbnf *g = gram(text, &e);
	int ok = g == NULL && strstr(e.msg, want) != NULL;
	CHECK(ok);
	if (!ok)
		printf("# %s: got '%s', want '%s'\n", text, e.msg, want);
	CHECK(e.code == LLR_EFORMAT);
	llr_gbnf_free(g);
}

static void test_errors(void)
{
	refused("root ::= b\n\nb ::= \"x\" undef", "g.gbnf:3: undefined rule 'undef'");
	refused("root ::= a", "g.gbnf:1: undefined rule 'a'");
	refused("a ::= \"x\"", "g.gbnf: no rule 'root'");
	refused("", "g.gbnf: no rule 'root'");
	refused("root ::= root \"x\" | \"y\"", "g.gbnf:1: rule 'root' is left-recursive (root -> root)");
	refused("root ::= \"x\"\n\na ::= b \"x\"\nb ::= c\nc ::= a | \"y\"", "rule 'a' is left-recursive (a -> b -> c -> a)");
	refused("root ::= e\ne ::= sp e \"+\" | \"1\"\nsp ::= \" \"?", "g.gbnf:2: rule 'e' is left-recursive (e -> e)");
	refused("root ::= (\"a\"?)*", "g.gbnf:1: rule 'root' repeats something that can be empty");
	refused("root ::= \"x\" root", "g.gbnf: the grammar accepts nothing");
	refused("root ::= \"x\"\nroot ::= \"y\"", "g.gbnf:2: rule 'root' is defined twice (first at line 1)");
	refused("root ::= \"abc", "g.gbnf:1: unterminated string");
	refused("root ::= \"a\"\n  [a-", "g.gbnf:2: unterminated");
	refused("root ::= [z-a]", "g.gbnf:1: a range runs backwards");
	refused("root ::= []", "g.gbnf:1: empty character class");
	refused("root ::= (\"a\"\nb ::= \"c\"", "g.gbnf:1: '(' without its ')'");
	refused("root ::= \"a\" )", "g.gbnf:1: ')' without its '('");
	refused("root ::= \"a\"{3,1}", "g.gbnf:1: {m,n} with n below m");
	refused("root ::= \"a\"{2", "g.gbnf:1: expected '}'");
	refused("root ::= \"\\q\"", "g.gbnf:1: unknown escape '\\q'");
	refused("root ::= \"\\xZZ\"", "g.gbnf:1: bad hexadecimal escape");
	refused("root ::= \"a\" @", "g.gbnf:1: unexpected character '@'");
	refused("\n\nroot = \"a\"", "g.gbnf:3: expected '::=' after a rule name");
	refused("::= \"a\"", "g.gbnf:1: expected a rule name");
	refused("root ::= \"a\"{1001}", "g.gbnf:1: a repetition count above 1000");
}

/* tokens: </s>, <unk>, then words; the grammar sees them joined by spaces */
static const char *TOKS[] = {"</s>", "<unk>", "1", "2", "12", "+", "(", ")", "(1", "x", "<s>"};
enum { NT = 11 };

static void test_tokens(void)
{
	llr_strmap *v = llr_strmap_new();
	for (int i = 0; i < NT; i++)
		llr_strmap_add(v, TOKS[i], strlen(TOKS[i]));
	llr_err e = {0};
	const char *text = "root ::= expr\n"
	                   "expr ::= num (\" + \" num)* | \"(\" expr \")\"\n"
	                   "num ::= [0-9]+ | \"(\" \" \"? expr \" \"? \")\"\n";
	llr_gbnf *g = gram(text, &e);
	llr_gbnf_tok *t = g ? llr_gbnf_tok_new(g, v, &e) : NULL;
	CHECK(t != NULL);
	if (!t) {
		printf("# %s\n", e.msg);
		llr_gbnf_free(g);
		llr_strmap_free(v);
		return;
	}
	/* every token string of up to 5 tokens: the token recogniser agrees with
	 * the character recogniser on the joined string */
	int ids[5], agree = 1, n_acc = 0;
	for (int len = 0; len <= 5; len++) {
		long total = 1;
		for (int i = 0; i < len; i++)
			total *= NT - 3;
		for (long c = 0; c < total; c++) {
			long r = c;
			char s[64] = "";
			for (int i = 0; i < len; i++, r /= NT - 3) {
				ids[i] = 2 + (int)(r % (NT - 3));
				if (i)
					strcat(s, " ");
				strcat(s, TOKS[ids[i]]);
			}
			int32_t q = 0;
			for (int i = 0; i < len && q >= 0; i++)
				CHECK_OK(llr_gbnf_tok_next(t, q, ids[i], &q, &e));
			int tok = q >= 0 && llr_gbnf_tok_final(t, q), chr = match(g, s);
			n_acc += chr;
			if (tok != chr && agree) {
				printf("# '%s': tokens %d, characters %d\n", s, tok, chr);
				agree = 0;
			}
			/* the distance: 0 when final, else a continuation of that many tokens exists */
			if (q >= 0) {
				int32_t d = llr_gbnf_tok_dist(t, q, 6, &e);
				CHECK(d >= 0 && (d == 0) == tok);
			}
		}
	}
	CHECK(agree);
	CHECK(n_acc > 20);
	/* "(1" is a token the grammar can use: "(1 + 2 )" */
	int32_t q = 0, x;
	const int32_t *lab, *dst;
	int32_t n = llr_gbnf_tok_arcs(t, 0, &lab, &dst, &e);
	CHECK(n == 5); /* 1 2 12 ( (1, not + ) x nor the specials */
	for (int32_t k = 0; k < n; k++)
		CHECK(lab[k] >= 2 && lab[k] != 5 && lab[k] != 7 && lab[k] != 9 && (k == 0 || lab[k] > lab[k - 1]));
	CHECK_OK(llr_gbnf_tok_next(t, q, 8, &q, &e));
	CHECK(q > 0 && !llr_gbnf_tok_final(t, q));
	CHECK(llr_gbnf_tok_dist(t, q, 10, &e) == 1); /* ")" */
	CHECK(llr_gbnf_tok_dist(t, q, 0, &e) == 1);  /* more than 0 */
	CHECK_OK(llr_gbnf_tok_next(t, q, 9, &x, &e));
	CHECK(x == -1);
	/* nested: "( ( ( 1 ) ) )" needs 4 more tokens after "( ( (" */
	q = 0;
	for (int i = 0; i < 3; i++)
		CHECK_OK(llr_gbnf_tok_next(t, q, 6, &q, &e));
	CHECK(llr_gbnf_tok_dist(t, q, 3, &e) == 4);
	CHECK(llr_gbnf_tok_dist(t, q, 10, &e) == 4);
	llr_gbnf_tok_free(t);
	llr_gbnf_free(g);
	llr_strmap_free(v);
}

/* The notice of a trimming past its budget (LLRNN_GRAMMAR_BUDGET), for
 * every budget from 1 up to one the trimming fits: told at most once,
 * naming the grammar, and told whenever the answer differs from the
 * exact one (the dead "12" allowed untrimmed); none within the budget;
 * a budget that is no number refused. */
typedef struct told {
	int n, words; /* the budget's notices; the unspelled words' */
	char line[512], wline[512];
} told;

static void note(void *ctx, const char *line)
{
	told *t = ctx;
	int w = strstr(line, " of its literals no token of the vocabulary can be") != NULL;
	*(w ? &t->words : &t->n) += 1;
	snprintf(w ? t->wline : t->line, sizeof t->line, "%s", line);
}

static void test_notice(void)
{
	llr_strmap *v = llr_strmap_new();
	for (int i = 0; i < NT; i++)
		llr_strmap_add(v, TOKS[i], strlen(TOKS[i]));
	llr_err e = {0};
	/* "12" then "x" needs a token "xy": a dead end */
	llr_gbnf *g = gram("root ::= \"12 x\" \"y\" | \"2\"", &e);
	const int32_t *lab, *dst;
	int late = 0, inexact = 0, budget = 1;
	for (;; budget++) {
		char b[32];
		snprintf(b, sizeof b, "%d", budget);
		setenv("LLRNN_GRAMMAR_BUDGET", b, 1);
		told tl = {0};
		llr_notice sink = {note, &tl};
		llr_gbnf_tok *t = llr_gbnf_tok_new(g, v, &e);
		CHECK(t != NULL);
		if (!t)
			break;
		llr_gbnf_tok_on_notice(t, &sink, "g.gbnf");
		int before = tl.n;
		int32_t n = llr_gbnf_tok_arcs(t, 0, &lab, &dst, &e);
		int32_t q = -1;
		CHECK(n == 1 || n == 2);
		for (int32_t k = 0; k < n; k++) /* the next states decided too */
			CHECK_OK(llr_gbnf_tok_next(t, 0, lab[k], &q, &e));
		CHECK(tl.n <= 1);
		CHECK(n == 1 || tl.n == 1); /* "2" alone when exact */
		if (tl.n)
			CHECK(!strcmp(tl.line, "g.gbnf: trimming the grammar against the vocabulary ran past its budget of work: the states "
			                       "not decided by then are allowed untrimmed, so a sentence may reach a dead end (a state from "
			                       "which no sentence of the vocabulary's tokens ends)"));
		late += !before && tl.n;
		inexact += n == 2;
		llr_gbnf_tok_free(t);
		if (!tl.n)
			break;
		CHECK(budget < 100000);
		if (budget >= 100000)
			break;
	}
	CHECK(budget > 10 && late > 0 && inexact > 0);
	/* the default budget: exact, nothing told */
	unsetenv("LLRNN_GRAMMAR_BUDGET");
	told tl = {0};
	llr_notice sink = {note, &tl};
	llr_gbnf_tok *t = llr_gbnf_tok_new(g, v, &e);
	if (t)
		llr_gbnf_tok_on_notice(t, &sink, "g.gbnf");
	CHECK(t && llr_gbnf_tok_arcs(t, 0, &lab, &dst, &e) == 1 && tl.n == 0);
	/* "xy" is no token's beginning: told once, at once */
	CHECK(tl.words == 1 && !strcmp(tl.wline, "g.gbnf: 1 word of its literals no token of the vocabulary can be, so the "
	                                          "alternatives that hold it never apply: xy"));
	llr_gbnf_tok_free(t);
	const char *bad[] = {"x", "0", "-3", "5k", " 5"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		setenv("LLRNN_GRAMMAR_BUDGET", bad[i], 1);
		e = (llr_err){0};
		CHECK(!llr_gbnf_tok_new(g, v, &e) && e.code == LLR_EINVAL && strstr(e.msg, "LLRNN_GRAMMAR_BUDGET: '") &&
		      strstr(e.msg, "' is not a number of steps (1 or more)"));
	}
	unsetenv("LLRNN_GRAMMAR_BUDGET");
	llr_gbnf_free(g);
	llr_strmap_free(v);
}

/* root ::= "a" root "b" | "a" root "c" | "" has 2^n parses alive after n
 * a's: LLR_ERANGE past the limit (2^14), with the reason in err at the
 * token level; an unambiguous grammar as deep (one parse) is followed. */
static void test_ambiguous(void)
{
	llr_err e = {0};
	llr_gbnf *g = gram("root ::= \"a\" root \"b\" | \"a\" root \"c\" | \"\"\n", &e);
	llr_gbnf *u = gram("root ::= \"a\" root \"b\" | \"\"\n", &e);
	CHECK(g && u);
	if (!g || !u) {
		llr_gbnf_free(g);
		llr_gbnf_free(u);
		return;
	}
	char s[201];
	memset(s, 'a', 100);
	memset(s + 100, 'b', 100);
	s[200] = '\0';
	CHECK(match(g, "aaabcb") == 1);
	CHECK(match(g, "aaaaaaaaaaaabbbbbbbbbbbb") == 1); /* 12: 3 * 2^12 stacks alive */
	CHECK(match(g, s) == LLR_ERANGE);
	CHECK(match(u, s) == 1);
	/* over tokens, joined by spaces: "a a z b c" */
	llr_gbnf *w = gram("root ::= \"a \" root \" b\" | \"a \" root \" c\" | \"z\"\n", &e);
	llr_strmap *v = llr_strmap_new();
	for (const char *const *x = (const char *const[]){"a", "z", "b", "c", NULL}; *x; x++)
		llr_strmap_add(v, *x, strlen(*x));
	llr_gbnf_tok *t = w ? llr_gbnf_tok_new(w, v, &e) : NULL;
	CHECK(t != NULL);
	int32_t q = 0, rc = LLR_OK, steps = 0;
	for (; t && steps < 30 && rc >= 0; steps++)
		rc = llr_gbnf_tok_next(t, q, 0, &q, &e);
	CHECK(rc == LLR_ERANGE && steps > 10 && steps < 30);
	CHECK(e.code == LLR_ERANGE && strstr(e.msg, "too ambiguous"));
	llr_gbnf_tok_free(t);
	llr_strmap_free(v);
	llr_gbnf_free(w);
	llr_gbnf_free(g);
	llr_gbnf_free(u);
}

/* The words of the literals no token can be (gbnfwords.c): by position
 * in the run of literal characters, each told once, escaped; and against
 * a brute force over every placement, none told that a token can hold. */
static void unspelled_case(const char *text, const char *want, int nwant)
{
	static const char *const toks[] = {"ab", "bc", "x.y", "\xc3\xa9t\xc3\xa9", "</s>", "<unk>"};
	llr_strmap *v = llr_strmap_new();
	for (size_t i = 0; i < sizeof toks / sizeof *toks; i++)
		llr_strmap_add(v, toks[i], strlen(toks[i]));
	llr_err e = {0};
	llr_gbnf *g = gram(text, &e);
	CHECK(g != NULL);
	llr_buf out = {0};
	int n = g ? llr_gbnf_unspelled(g, v, &out) : -1;
	if (n != nwant || strcmp(out.data ? out.data : "", want))
		printf("# %s: %d '%s', want %d '%s'\n", text, n, out.data ? out.data : "", nwant, want);
	CHECK(n == nwant && !strcmp(out.data ? out.data : "", want));
	llr_buf_free(&out);
	llr_gbnf_free(g);
	llr_strmap_free(v);
}

static void test_unspelled(void)
{
	unspelled_case("root ::= \"ab bc\" | \" b\" | \"c \" | \"b\"", "", 0); /* ends, begins, ends, inside */
	unspelled_case("root ::= \" c \" | \"zab\" | \" ba\" | \"cb \"", "c, zab, ba, cb", 4);
	unspelled_case("root ::= \"a\" [x] | \"x.\" [y] | \"</s> .\" | \" <unk> \"", "ax, </s>, ., <unk>", 4); /* [x]: a literal's */
	unspelled_case("root ::= \"q\\n\" | \"\\t\" | \"t\\u00e9\" | \"\\u00e9t\\u00e9 \\u00a0\"", "q\\n, \\t, \\u00A0", 3);
	unspelled_case("root ::= \"zz\" | (\"zz\") | \" zz \"", "zz", 1); /* once */
}

int main(void)
{
	PLAN(6);
	RUN(test_accept);
	RUN(test_errors);
	RUN(test_tokens);
	RUN(test_ambiguous);
	RUN(test_notice);
	RUN(test_unspelled);
	DONE();
}
