/*
 * gbnf.h - context-free grammars in llama.cpp's GBNF syntax over
 * characters (issue 51, gen --grammar): the grammar compiled by gbnf.c
 * and its pushdown recogniser (gbnfrec.c), first over characters, then
 * over the tokens of a vocabulary.  Not API: lib/family/gen.c is its one
 * user outside lib/fsa.  The syntax and the token-to-string mapping are
 * gen(1)'s "Grammars".
 */
#ifndef LLR_GBNF_H
#define LLR_GBNF_H

#include "internal.h"

/* A checked grammar: every rule defined, none left-recursive, root
 * derives some string.  Repetitions, groups and optionals are rules of
 * their own here (named after the rule they were written in).  An
 * element of an alternative: GBNF_END ends it, GBNF_CLS(k) is character
 * class k, GBNF_REF(r) rule r.  Alternative a of rule r begins at
 * el[alt[alt_off[r] + a]]; class k is the ranges rng[2i], rng[2i + 1]
 * (inclusive) for i in cls_off[k] .. cls_off[k + 1], negated with
 * cls_neg[k]. */
#define GBNF_END (-1)
#define GBNF_CLS(k) (2 * (k))
#define GBNF_REF(r) (2 * (r) + 1)
#define GBNF_IS_REF(e) ((e) >= 0 && ((e)&1))
#define GBNF_ARG(e) ((e) >> 1)

/* A growable list of int32_t (the parser's vectors, the recogniser's
 * stack sets); gbnf_push appends x, LLR_ENOMEM when it cannot grow. */
typedef struct gbnf_ivec {
	int32_t *v;
	size_t n, cap;
} gbnf_ivec;
int gbnf_push(gbnf_ivec *a, int32_t x);

typedef struct llr_gbnf {
	int32_t *el, *alt, *alt_off;
	int32_t nel, nrules, root;
	int32_t *rng, *cls_off;
	uint8_t *cls_neg;
	int32_t ncls;
} llr_gbnf;

/* The grammar text[0..n) (name: for messages) or the file at path ("-":
 * stdin).  Errors, with LLR_EFORMAT: "name:line: reason" for syntax, a
 * rule used but not defined, defined twice or left-recursive (directly,
 * through other rules, or after a prefix that can be empty; the rule
 * named), "name: no rule 'root'", "name: the grammar accepts nothing";
 * LLR_EIO, LLR_ENOMEM.  The caller frees with llr_gbnf_free. */
llr_gbnf *llr_gbnf_parse(const char *text, size_t n, const char *name, llr_err *err);
llr_gbnf *llr_gbnf_read(const char *path, llr_err *err);
/* The text llr_gbnf_read parses: the file's lines, each ended by a
 * newline, appended to b; LLR_EIO, LLR_ENOMEM. */
int llr_gbnf_read_text(const char *path, llr_buf *b, llr_err *err);
void llr_gbnf_free(llr_gbnf *g);
/* Does class k hold code point c? */
int llr_gbnf_class_has(const llr_gbnf *g, int32_t k, int32_t c);

/* Does g derive the string s[0..n) (UTF-8)?  1 or 0; 0 for invalid
 * UTF-8; LLR_ENOMEM; LLR_ERANGE when more parses are alive at once than
 * the recogniser follows (16384: an ambiguous grammar, such as root ::=
 * "a" root "b" | "a" root "c" | "", has 2^n after n characters).  The
 * functions over tokens below fail the same way, with err saying so. */
int llr_gbnf_match(const llr_gbnf *g, const char *s, size_t n);

/* The grammar over the tokens of a vocabulary: a sentence of tokens is
 * the string of its tokens joined by single spaces (no space before the
 * first or after the last), and it belongs to the language when g
 * derives that string.  A token is allowed only where some sentence of
 * the vocabulary's tokens continues it (trimmed: gbnflive.c decides it,
 * so that a rule that cannot end, or text no token spells, allows no
 * token that leads there).  States are the sets of stacks of the pushdown
 * recogniser after a prefix of tokens, numbered as they are first met
 * (0: the start); there may be infinitely many, so they are made when
 * reached.  </s>, <s> and <unk> are never tokens here.  g and vocab are
 * borrowed (they must outlive it).  The caller frees with
 * llr_gbnf_tok_free; NULL on LLR_ENOMEM. */
typedef struct llr_gbnf_tok llr_gbnf_tok;
llr_gbnf_tok *llr_gbnf_tok_new(const llr_gbnf *g, const llr_strmap *vocab, llr_err *err);
void llr_gbnf_tok_free(llr_gbnf_tok *t);
/* The tokens allowed in state q, ascending (*lab), with the states they
 * lead to (*dst): their count, or LLR_ENOMEM.  The arrays are q's own,
 * made when q is first expanded and valid until llr_gbnf_tok_free (the
 * grammar background keeps them past its lock, lib/fsa/gbnffsa.c). */
int32_t llr_gbnf_tok_arcs(llr_gbnf_tok *t, int32_t q, const int32_t **lab, const int32_t **dst, llr_err *err);
/* The state after token x in state q into *to (-1: x not allowed). */
int llr_gbnf_tok_next(llr_gbnf_tok *t, int32_t q, int32_t x, int32_t *to, llr_err *err);
/* The words of the grammar's literals no token of the vocabulary can be
 * (llr_gbnf_unspelled's list, "" when none), *n of them. */
const char *llr_gbnf_tok_unspelled(const llr_gbnf_tok *t, int *n);
/* How many states have been made so far. */
int32_t llr_gbnf_tok_states(const llr_gbnf_tok *t);
/* Does the sentence end well in q (may </s> come)? */
int llr_gbnf_tok_final(const llr_gbnf_tok *t, int32_t q);
/* From now on t tells n (copied) once, naming the grammar name (the
 * caller's, kept while t lives), that its trimming against the
 * vocabulary ran past its budget (llr_gbnf_live_check), and tells it
 * at once when it has already; and once, at once, the words of its
 * literals no token can be (llr_gbnf_unspelled), if any. */
void llr_gbnf_tok_on_notice(llr_gbnf_tok *t, const llr_notice *n, const char *name);
/* A number of tokens, at most limit, that lead from q to a final state,
 * or limit + 1 when none was found.  Exact (the fewest, or none within
 * limit) when a breadth-first search settles it within its budget of
 * states; else a search guided towards shallow stacks looks for some
 * path within limit, and what it does not find is taken as absent.  The
 * states on a path found remember it, so a generator that follows only
 * tokens with a path always has one.  LLR_ENOMEM. */
int32_t llr_gbnf_tok_dist(llr_gbnf_tok *t, int32_t q, int32_t limit, llr_err *err);

/* The words of g's literals that no token of vocab can be (gbnfwords.c:
 * a run of literal characters cut at its spaces; a piece between two
 * spaces must be a token, after the last one begin one, before the first
 * end one, else lie inside one), appended to out as "w1, w2"; how many,
 * or LLR_ENOMEM. */
int llr_gbnf_unspelled(const llr_gbnf *g, const llr_strmap *vocab, llr_buf *out);

/* Is w (n bytes, not NUL-terminated) a token of the grammar: text
 * (valid UTF-8, no NUL), neither </s>, <s> nor <unk>? */
int gbnf_token_text(const char *w, size_t n);

/* Which states of the recogniser some sentence continues (gbnflive.c):
 * the grammar g against the automaton f over the tokens of vocab (a
 * plain llr_fsa of fsa.c; NULL: any sequence of its tokens), their
 * sentences the tokens joined by single spaces.  g, vocab and f are
 * borrowed.  NULL with err set: LLR_ENOMEM, LLR_EINVAL.  llr_gbnf_live_check: do
 * the stacks v[0..n) (a state's, gbnfrec.c's layout) in f's state q
 * (sep 0: before the first token, in f's start) lead to a sentence of
 * both: 1 or 0, LLR_ENOMEM.  Exact within a budget of work (gbnflive.c:
 * about 4 million steps, or LLRNN_GRAMMAR_BUDGET's, gen(1) ENVIRONMENT,
 * whose bad value is llr_gbnf_live_new's LLR_EINVAL); past it, 1 for
 * every state not decided before, and llr_gbnf_live_exact says 0 from
 * then on.  Not thread-safe. */
typedef struct llr_gbnf_live llr_gbnf_live;
llr_gbnf_live *llr_gbnf_live_new(const llr_gbnf *g, const llr_strmap *vocab, const llr_fsa *f, llr_err *err);
void llr_gbnf_live_free(llr_gbnf_live *L);
int llr_gbnf_live_check(llr_gbnf_live *L, const int32_t *v, size_t n, int sep, int32_t q, llr_err *err);
int llr_gbnf_live_exact(const llr_gbnf_live *L);
/* Tell n (NULL or without fn: nothing) once, *told keeping track, that
 * L ran past its budget when it has: "NAME: trimming WHAT ran past its
 * budget ... (a state from which no sentence of OF ends)". */
void llr_gbnf_live_tell(const llr_gbnf_live *L, const llr_notice *n, int *told, const char *name, const char *what, const char *of);
/* Does some sentence of both continue state q of t, with L's automaton
 * in its state fq (L made over t's grammar and vocabulary)? */
int llr_gbnf_tok_live(const llr_gbnf_tok *t, int32_t q, llr_gbnf_live *L, int32_t fq, llr_err *err);

#endif
