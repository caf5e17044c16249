/*
 * gbnfwords.c - the words of a grammar's literals that no token of a
 * vocabulary spells (gbnf.h, llr_gbnf_unspelled): issue 51's alphabet
 * mismatch for grammars.  A grammar is over characters, so what its
 * tokens are is not written in it; but a run of literal characters in an
 * alternative, cut at its spaces (the separators of tokens), says part
 * of it: a piece between two of its spaces is a whole token, a piece
 * after its last space begins one, a piece before its first space ends
 * one, and a run without a space lies inside one.  A piece that no token
 * can be is text the grammar can never match, so the alternatives that
 * hold it never apply.  Conservative: what lies outside a run (a class,
 * a rule) is not followed, so a piece is only reported when no token
 * could hold it whatever came around it.
 */
#include <stdlib.h>

#include "gbnf.h"

/* Is element e a class of exactly one character (a literal's)?  Its
 * character into *c. */
static int one_char(const llr_gbnf *g, int32_t e, int32_t *c)
{
	if (e < 0 || GBNF_IS_REF(e))
		return 0;
	int32_t k = GBNF_ARG(e);
	if (g->cls_neg[k] || g->cls_off[k + 1] - g->cls_off[k] != 1)
		return 0;
	int32_t i = g->cls_off[k];
	if (g->rng[2 * i] != g->rng[2 * i + 1])
		return 0;
	*c = g->rng[2 * i];
	return 1;
}

/* Where a piece lies in its run: after a space of the run (closed on the
 * left), a token begins with it; before one (closed on the right), a
 * token ends with it; both, it is a token; neither, inside one. */
enum { INSIDE = 0, BEGINS = 1, ENDS = 2, WHOLE = 3 };

/* Can some token of vocab hold s (n bytes) in the position how says? */
static int spelled(const llr_strmap *vocab, const char *s, size_t n, int how)
{
	if (how == WHOLE)
		return llr_strmap_get(vocab, s, n) >= 0;
	size_t V = llr_strmap_size(vocab);
	for (size_t v = 0; v < V; v++) {
		const char *w = llr_strmap_str(vocab, (int32_t)v);
		size_t m = llr_strmap_len(vocab, (int32_t)v);
		if (m < n || !gbnf_token_text(w, m))
			continue;
		if ((how == BEGINS && !memcmp(w, s, n)) || (how == ENDS && !memcmp(w + m - n, s, n)))
			return 1;
		if (how == INSIDE)
			for (size_t i = 0; i + n <= m; i++)
				if (!memcmp(w + i, s, n))
					return 1;
	}
	return 0;
}

/* Piece s[0..n) of a run, in position how: appended to out (once) when no
 * token holds it.  1 appended, 0 not, LLR_ENOMEM. */
static int check_piece(const llr_strmap *vocab, const char *s, size_t n, int how, llr_strmap *seen, llr_buf *out)
{
	if (!n || llr_strmap_get(seen, s, n) >= 0 || spelled(vocab, s, n, how))
		return 0;
	if (llr_strmap_add(seen, s, n) < 0 || llr_buf_printf(out, "%s%.*s", out->len ? ", " : "", (int)n, s) < 0)
		return LLR_ENOMEM;
	return 1;
}

/* The run of literal characters el[from..to) of g, as UTF-8 into b, cut
 * at its spaces and each piece checked; how many were appended. */
static int check_run(const llr_gbnf *g, int32_t from, int32_t to, const llr_strmap *vocab, llr_buf *b, llr_strmap *seen, llr_buf *out)
{
	b->len = 0;
	for (int32_t i = from; i < to; i++) {
		int32_t c = 0;
		char u[4];
		one_char(g, g->el[i], &c);
		if (llr_buf_append(b, u, (size_t)llr_utf8_encode(c, u)) < 0)
			return LLR_ENOMEM;
	}
	int found = 0;
	size_t start = 0;
	for (size_t i = 0; i <= b->len; i++) {
		if (i < b->len && b->data[i] != ' ')
			continue;
		int how = (start > 0 ? BEGINS : 0) | (i < b->len ? ENDS : 0);
		int rc = check_piece(vocab, b->data + start, i - start, how, seen, out);
		if (rc < 0)
			return rc;
		found += rc;
		start = i + 1;
	}
	return found;
}

int llr_gbnf_unspelled(const llr_gbnf *g, const llr_strmap *vocab, llr_buf *out)
{
	llr_strmap *seen = llr_strmap_new();
	llr_buf b = {0};
	if (!seen)
		return LLR_ENOMEM;
	int total = 0;
	for (int32_t a = 0; total >= 0 && a < g->alt_off[g->nrules]; a++) {
		int32_t i = g->alt[a];
		while (total >= 0 && g->el[i] != GBNF_END) {
			int32_t c, j = i;
			while (g->el[j] != GBNF_END && one_char(g, g->el[j], &c))
				j++;
			if (j > i) {
				int rc = check_run(g, i, j, vocab, &b, seen, out);
				total = rc < 0 ? rc : total + rc;
				i = j;
			} else {
				i++;
			}
		}
	}
	llr_buf_free(&b);
	llr_strmap_free(seen);
	return total;
}
