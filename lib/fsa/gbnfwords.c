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

/* The vocabulary's tokens of grammar text, sorted (fwd) and with their
 * bytes reversed, sorted (rev), for the prefix and suffix queries by
 * binary search (scratch: a piece reversed); the pieces decided (cache;
 * key: the position as a byte, then the piece) and the words told. */
typedef struct vwords {
	const llr_strmap *vocab;
	char **fwd, **rev;
	size_t n;
	llr_buf scratch;
	llr_strmap *cache, *told;
} vwords;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void vwords_free(vwords *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->fwd[i]);
		free(w->rev[i]);
	}
	free(w->fwd);
	free(w->rev);
	llr_buf_free(&w->scratch);
	llr_strmap_free(w->cache);
	llr_strmap_free(w->told);
}

static int vwords_init(vwords *w, const llr_strmap *vocab)
{
	memset(w, 0, sizeof *w);
	w->vocab = vocab;
	size_t V = llr_strmap_size(vocab);
	if (!(w->cache = llr_strmap_new()) || !(w->told = llr_strmap_new()) || !(w->fwd = llr_calloc(V + 1, sizeof *w->fwd)) || !(w->rev = llr_calloc(V + 1, sizeof *w->rev)))
		return LLR_ENOMEM;
	for (size_t v = 0; v < V; v++) {
		const char *t = llr_strmap_str(vocab, (int32_t)v);
		size_t m = llr_strmap_len(vocab, (int32_t)v);
		if (!gbnf_token_text(t, m))
			continue;
		char *f = llr_strndup(t, m), *r = llr_malloc(m + 1);
		if (!f || !r) {
			free(f);
			free(r);
			return LLR_ENOMEM;
		}
		for (size_t i = 0; i < m; i++)
			r[i] = t[m - 1 - i];
		r[m] = 0;
		w->fwd[w->n] = f;
		w->rev[w->n++] = r;
	}
	qsort(w->fwd, w->n, sizeof *w->fwd, cmp_str);
	qsort(w->rev, w->n, sizeof *w->rev, cmp_str);
	return LLR_OK;
}

/* Does some string of the sorted a[0..n) begin with s[0..k)? */
static int has_prefix(char *const *a, size_t n, const char *s, size_t k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first string not below s[0..k) */
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(a[mid], s, k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strncmp(a[lo], s, k);
}

/* Can some token hold s (n bytes, no NUL) in the position how says?  1,
 * 0, or LLR_ENOMEM. */
static int spelled(vwords *w, const char *s, size_t n, int how)
{
	if (how == WHOLE) /* </s>, <s> and <unk> are never the grammar's tokens */
		return llr_strmap_get(w->vocab, s, n) >= 0 && gbnf_token_text(s, n);
	if (how == BEGINS)
		return has_prefix(w->fwd, w->n, s, n);
	if (how == ENDS) {
		w->scratch.len = 0;
		if (llr_buf_reserve(&w->scratch, n) < 0)
			return LLR_ENOMEM;
		for (size_t i = 0; i < n; i++)
			w->scratch.data[i] = s[n - 1 - i];
		return has_prefix(w->rev, w->n, w->scratch.data, n);
	}
	for (size_t v = 0; v < w->n; v++) {
		size_t m = strlen(w->fwd[v]);
		for (size_t i = 0; i + n <= m; i++)
			if (!memcmp(w->fwd[v] + i, s, n))
				return 1;
	}
	return 0;
}

/* Piece s[0..n) in position how, as it is written in the notice: the
 * characters below U+0020, DEL and the no-break space escaped, so that
 * the notice stays one line of visible text. */
static int put_piece(llr_buf *out, const char *s, size_t n)
{
	int rc = llr_buf_printf(out, "%s", out->len ? ", " : "");
	for (size_t i = 0; rc >= 0 && i < n;) {
		int32_t c;
		int k = llr_utf8_decode(s + i, n - i, &c);
		if (k <= 0)
			k = 1, c = (unsigned char)s[i];
		if (c == '\n')
			rc = llr_buf_printf(out, "\\n");
		else if (c == '\t')
			rc = llr_buf_printf(out, "\\t");
		else if (c < 0x20 || c == 0x7f || c == 0xa0)
			rc = llr_buf_printf(out, "\\u%04X", (unsigned)c);
		else
			rc = llr_buf_append(out, s + i, (size_t)k);
		i += (size_t)k;
	}
	return rc;
}

/* Piece s[0..n) of a run, in position how: appended to out (once) when no
 * token holds it.  1 appended, 0 not, LLR_ENOMEM. */
static int check_piece(vwords *w, const char *s, size_t n, int how, llr_buf *key, llr_buf *out)
{
	if (!n)
		return 0;
	key->len = 0;
	char h = (char)('0' + how);
	if (llr_buf_append(key, &h, 1) < 0 || llr_buf_append(key, s, n) < 0)
		return LLR_ENOMEM;
	if (llr_strmap_get(w->cache, key->data, key->len) >= 0)
		return 0; /* decided here before */
	if (llr_strmap_add(w->cache, key->data, key->len) < 0)
		return LLR_ENOMEM;
	int sp = llr_strmap_get(w->told, s, n) >= 0 ? 1 : spelled(w, s, n, how);
	if (sp)
		return sp < 0 ? sp : 0;
	if (llr_strmap_add(w->told, s, n) < 0 || put_piece(out, s, n) < 0)
		return LLR_ENOMEM;
	return 1;
}

/* The run of literal characters el[from..to) of g, as UTF-8 into b, cut
 * at its spaces and each piece checked; how many were appended. */
static int check_run(const llr_gbnf *g, int32_t from, int32_t to, vwords *w, llr_buf *b, llr_buf *key, llr_buf *out)
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
		int rc = check_piece(w, b->data + start, i - start, how, key, out);
		if (rc < 0)
			return rc;
		found += rc;
		start = i + 1;
	}
	return found;
}

int llr_gbnf_unspelled(const llr_gbnf *g, const llr_strmap *vocab, llr_buf *out)
{
	vwords w;
	llr_buf b = {0}, key = {0};
	int total = vwords_init(&w, vocab);
	for (int32_t a = 0; total >= 0 && a < g->alt_off[g->nrules]; a++) {
		int32_t i = g->alt[a];
		while (total >= 0 && g->el[i] != GBNF_END) {
			int32_t c, j = i;
			while (g->el[j] != GBNF_END && one_char(g, g->el[j], &c))
				j++;
			if (j > i) {
				int rc = check_run(g, i, j, &w, &b, &key, out);
				total = rc < 0 ? rc : total + rc;
				i = j;
			} else {
				i++;
			}
		}
	}
	llr_buf_free(&b);
	llr_buf_free(&key);
	vwords_free(&w);
	return total;
}
