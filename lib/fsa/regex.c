/*
 * regex.c - a regular expression over tokens compiled to an automaton
 * (llr_fsa_regex, lib/internal.h): Thompson's construction into an NFA
 * with epsilon arcs, then fsa.c's subset construction.  The syntax
 * (gen(1), "Constrained generation"):
 *
 *   tok          a token: a run of characters other than spaces and
 *                ( ) | * + ? [ ] \ ; \c is the character c itself
 *   .            alone, any token (a token "." is \.)
 *   [a b c]      one of the tokens listed; [^a b c] any token but them
 *   R S          R then S (tokens are separated by spaces)
 *   R|S  R*  R+  R?  (R)   as in grep -E, over tokens (spaces may
 *                stand before an operator)
 *
 * "Any token" is every token of the vocabulary but </s> and <s>.  The
 * empty pattern accepts the empty sentence.  Errors name the character
 * (1-based) where the pattern went wrong.  Not here: the subset
 * construction (fsa.c).
 */
#include <stdlib.h>

#include "fsa.h"

#define MAX_DEPTH 200

typedef struct frag {
	int32_t s, e;
} frag;

typedef struct parser {
	fsa_nfa *a;
	const char *p, *s; /* the pattern, its position */
	int depth;
	llr_strmap *missing;
	llr_buf word;
	llr_err *err;
} parser;

static int special(char c)
{
	return c && strchr("()|*+?[]\\", c) != NULL;
}

static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static void skip(parser *r)
{
	while (space(*r->s))
		r->s++;
}

static int fail(parser *r, const char *fmt, const char *what)
{
	return llr_err_set(r->err, LLR_EFORMAT, "regex: character %zu: %s%s", (size_t)(r->s - r->p) + 1, fmt, what ? what : "");
}

static int nomem(parser *r)
{
	return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
}

/* A word at r->s into r->word; *any when it is a lone unescaped ".". */
static int word(parser *r, int *any)
{
	llr_buf_clear(&r->word);
	int escaped = 0;
	while (*r->s && !space(*r->s) && (!special(*r->s) || *r->s == '\\')) {
		if (*r->s == '\\') {
			if (!r->s[1])
				return fail(r, "a \\ ends the pattern", NULL);
			escaped = 1;
			r->s++;
		}
		if (llr_buf_putc(&r->word, *r->s++) < 0)
			return nomem(r);
	}
	if (llr_buf_putc(&r->word, '\0') < 0)
		return nomem(r);
	*any = !escaped && !strcmp(r->word.data, ".");
	return LLR_OK;
}

/* The id of the token in r->word; a token the vocabulary lacks is
 * noted (0, and the pattern is refused at its end). */
static int token(parser *r, int32_t *id)
{
	const char *w = r->word.data;
	if (!strcmp(w, LLR_EOS) || !strcmp(w, LLR_BOS))
		return fail(r, w, " is not a token of a sentence (a match ends at the end of the sentence)");
	*id = llr_strmap_get(r->a->vocab, w, strlen(w));
	if (*id >= 0)
		return LLR_OK;
	*id = 0;
	if (llr_strmap_get(r->missing, w, strlen(w)) < 0 && llr_strmap_add(r->missing, w, strlen(w)) < 0)
		return nomem(r);
	return LLR_OK;
}

static int single(parser *r, int32_t lab, frag *f)
{
	f->s = fsa_nfa_state(r->a);
	f->e = fsa_nfa_state(r->a);
	if (f->s < 0 || f->e < 0 || fsa_nfa_arc(r->a, f->s, f->e, lab, 0.0f, 0) < 0)
		return nomem(r);
	return LLR_OK;
}

/* [a b c] or [^a b c], r->s after the [. */
static int bracket(parser *r, frag *f)
{
	int neg = 0, any;
	if (*r->s == '^') {
		neg = 1;
		r->s++;
	}
	int32_t *ids = NULL, n = 0, cap = 0, id;
	int rc = LLR_OK;
	for (skip(r); rc >= 0 && *r->s != ']'; skip(r)) {
		if (!*r->s) {
			rc = fail(r, "[ without ]", NULL);
			break;
		}
		if (special(*r->s) && *r->s != '\\') {
			rc = fail(r, "in [ ], only tokens (escape the character with \\)", NULL);
			break;
		}
		if ((rc = word(r, &any)) < 0 || (rc = token(r, &id)) < 0)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			int32_t *p = llr_reallocarray(ids, (size_t)cap, sizeof *p);
			if (!p) {
				rc = nomem(r);
				break;
			}
			ids = p;
		}
		ids[n++] = id;
	}
	int32_t lab = 0;
	if (rc >= 0) {
		r->s++;
		if (fsa_nfa_class(r->a, ids, n, neg, &lab) < 0)
			rc = nomem(r);
	}
	free(ids);
	return rc < 0 ? rc : single(r, lab, f);
}

static int alt(parser *r, frag *f);

static int atom(parser *r, frag *f)
{
	int any;
	int32_t id;
	int rc;
	if (*r->s == '(') {
		r->s++;
		if ((rc = alt(r, f)) < 0)
			return rc;
		skip(r);
		if (*r->s != ')')
			return fail(r, "( without )", NULL);
		r->s++;
		return LLR_OK;
	}
	if (*r->s == '[') {
		r->s++;
		return bracket(r, f);
	}
	if ((rc = word(r, &any)) < 0)
		return rc;
	if (any) {
		int32_t lab;
		if (fsa_nfa_class(r->a, NULL, 0, 1, &lab) < 0)
			return nomem(r);
		return single(r, lab, f);
	}
	if ((rc = token(r, &id)) < 0)
		return rc;
	return single(r, id, f);
}

/* f made optional (?), repeatable (+), or both (*). */
static int repeat(parser *r, frag *f, char op)
{
	int32_t s = fsa_nfa_state(r->a), e = fsa_nfa_state(r->a);
	if (s < 0 || e < 0 || fsa_nfa_arc(r->a, s, f->s, FSA_EPS, 0, 0) < 0 || fsa_nfa_arc(r->a, f->e, e, FSA_EPS, 0, 0) < 0 ||
	    (op != '+' && fsa_nfa_arc(r->a, s, e, FSA_EPS, 0, 0) < 0) ||
	    (op != '?' && fsa_nfa_arc(r->a, f->e, f->s, FSA_EPS, 0, 0) < 0))
		return nomem(r);
	*f = (frag){s, e};
	return LLR_OK;
}

/* A sequence of repeated atoms, up to | or ) or the end. */
static int cat(parser *r, frag *f)
{
	f->s = f->e = fsa_nfa_state(r->a);
	if (f->s < 0)
		return nomem(r);
	for (skip(r); *r->s && *r->s != '|' && *r->s != ')'; skip(r)) {
		if (strchr("*+?", *r->s))
			return fail(r, "nothing to repeat", NULL);
		if (*r->s == ']')
			return fail(r, "] without [", NULL);
		frag g;
		int rc = atom(r, &g);
		if (rc < 0)
			return rc;
		for (skip(r); *r->s && strchr("*+?", *r->s); r->s++, skip(r))
			if ((rc = repeat(r, &g, *r->s)) < 0)
				return rc;
		if (fsa_nfa_arc(r->a, f->e, g.s, FSA_EPS, 0, 0) < 0)
			return nomem(r);
		f->e = g.e;
	}
	return LLR_OK;
}

static int alt(parser *r, frag *f)
{
	if (++r->depth > MAX_DEPTH)
		return fail(r, "nested too deep", NULL);
	int rc = cat(r, f);
	while (rc >= 0 && *r->s == '|') {
		r->s++;
		frag g;
		if ((rc = cat(r, &g)) < 0)
			break;
		int32_t s = fsa_nfa_state(r->a), e = fsa_nfa_state(r->a);
		if (s < 0 || e < 0 || fsa_nfa_arc(r->a, s, f->s, FSA_EPS, 0, 0) < 0 || fsa_nfa_arc(r->a, s, g.s, FSA_EPS, 0, 0) < 0 ||
		    fsa_nfa_arc(r->a, f->e, e, FSA_EPS, 0, 0) < 0 || fsa_nfa_arc(r->a, g.e, e, FSA_EPS, 0, 0) < 0)
			return nomem(r);
		*f = (frag){s, e};
	}
	r->depth--;
	return rc;
}

llr_fsa *llr_fsa_regex(const char *pattern, const llr_strmap *vocab, llr_err *err)
{
	fsa_nfa a;
	fsa_nfa_init(&a, vocab);
	parser r = {&a, pattern, pattern, 0, llr_strmap_new(), {0}, err};
	frag f = {0, 0};
	int rc = r.missing ? alt(&r, &f) : nomem(&r);
	if (rc >= 0 && *r.s == ')')
		rc = fail(&r, ") without (", NULL);
	size_t n = r.missing ? llr_strmap_size(r.missing) : 0;
	if (rc >= 0 && n) {
		llr_buf b = {0};
		for (size_t i = 0; i < n && i < 20; i++)
			llr_buf_printf(&b, "%s%s", i ? ", " : "", llr_strmap_str(r.missing, (int32_t)i));
		llr_err_set(err, LLR_EFORMAT, "regex: %zu token%s the model cannot produce (not in the vocabulary): %s%s", n,
		            n == 1 ? "" : "s", b.data ? b.data : "", n > 20 ? ", ..." : "");
		llr_buf_free(&b);
		rc = LLR_EFORMAT;
	}
	llr_fsa *d = NULL;
	if (rc >= 0) {
		a.start = f.s;
		a.final[f.e] = 0.0f;
		d = fsa_build(&a, "regex", err);
	}
	llr_buf_free(&r.word);
	llr_strmap_free(r.missing);
	fsa_nfa_free(&a);
	return d;
}
