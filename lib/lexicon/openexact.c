/*
 * openexact.c - the strings outside V' as rows with their exact q (issue
 * 14, item 4; llrnn(7), "Open vocabulary"): the forward pass's classes
 * (openpass.c) less the strings some list names, and each of those
 * strings with a row of its own.  The lists are every string whose row
 * the pass does not give:
 *   - V' itself (taken out only: its words are not outside V');
 *   - the known strings (the training text's types outside V'), first,
 *     so the caller can find their rows;
 *   - the lexicon sources' words (their entries, anyword.c);
 *   - in listed mode, the hunspell dictionary's listed forms (the only
 *     strings outside V' hunspell analyses then);
 *   - the years and the Roman ordinals (llr_extract_ortho_lists).
 * A string is taken out of the class the pass put it in (its p_spell
 * subtracted) and added with its own row (llr_lexicon_any_row), so a list
 * may hold strings whose row is the pass's: nothing changes for them.
 * A class left with no more than rounding (1e-9 of what was taken out,
 * plus the pass's unassigned mass) held only listed strings and is
 * dropped; one left below minus that is a broken contract (LLR_ERANGE).
 * Not here: the signature masses made of these rows (opensig.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct taker {
	const llr_lexicon *x;
	const llr_openbg *g;
	llr_openpass *p;
	double *sub; /* C: p_spell taken out of each class */
	llr_strmap *done;
	llr_csr_builder *b;
	float *lw;
	size_t n, cap;
	llr_rowbuf r;
	double lo;        /* ln (1 - S_V) */
	int32_t last_row; /* the row of the string taken last, -1: none */
	int steps;        /* the lengths the pass followed */
	llr_err *err;
} taker;

/* Room for one more ln q. */
static int lw_room(taker *t)
{
	if (t->n < t->cap)
		return 0;
	size_t cap = t->cap ? 2 * t->cap : 4096;
	float *lw = llr_reallocarray(t->lw, cap, sizeof *lw);
	if (!lw)
		return -1;
	t->lw = lw;
	t->cap = cap;
	return 0;
}

/* Whether w[0..len) is UTF-8 (NUL included). */
static int utf8_ok(const char *w, size_t len)
{
	for (size_t i = 0; i < len;) {
		int l = llr_utf8_decode(w + i, len - i, NULL);
		if (l <= 0)
			return 0;
		i += (size_t)l;
	}
	return 1;
}

/* Take w out of its class and, outside V', give it a row. */
static int take(const char *w, size_t len, void *ctx)
{
	taker *t = ctx;
	t->last_row = -1;
	if (!utf8_ok(w, len))
		return LLR_OK; /* not a string of scalar values: not one the spelling model spells */
	if (llr_strmap_get(t->done, w, len) >= 0)
		return LLR_OK;
	if (llr_strmap_add(t->done, w, len) < 0)
		return llr_err_set(t->err, LLR_ENOMEM, "out of memory");
	double lp = llr_spelling_logp(t->x->spell, w, len);
	int32_t c = llr_openpass_class_of(t->p, w, len);
	if (c >= 0) {
		t->sub[c] += exp(lp);
	} else { /* longer than the pass went (its mass is in the unassigned), or a bug */
		size_t n = 0;
		for (size_t i = 0; i < len; n++)
			i += (size_t)llr_utf8_decode(w + i, len - i, NULL);
		if (n + 1 < (size_t)t->steps)
			return llr_err_set(t->err, LLR_ERANGE, "exact masses: '%.*s' has no class of the pass", (int)(len > 40 ? 40 : len),
			                   w);
	}
	if (llr_openbg_word(t->g, w, len) >= 0)
		return LLR_OK;
	if (lw_room(t) < 0)
		return llr_err_set(t->err, LLR_ENOMEM, "out of memory");
	size_t n;
	int rc;
	if ((rc = llr_any_row_buf(t->x, w, len, &t->r, &n, t->err)) < 0 ||
	    (rc = llr_csr_builder_row(t->b, t->r.c, t->r.v, n, t->err)) < 0)
		return rc;
	t->lw[t->n] = (float)(lp - t->lo);
	t->last_row = (int32_t)t->n++;
	return LLR_OK;
}

void llr_exact_rows_free(llr_exact_rows *r)
{
	llr_csr_free(r->phi);
	free(r->logq);
	llr_strmap_free(r->listed_set);
	llr_openpass_free(r->pass);
	*r = (llr_exact_rows){0};
}

int llr_exact_rows_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int32_t *krow,
                        llr_exact_rows *out, char *why, size_t why_cap, llr_err *err)
{
	*out = (llr_exact_rows){0};
	llr_openpass *p = NULL;
	int rc = llr_openpass_new(x, &p, why, why_cap, err);
	if (rc < 0 || !p)
		return rc;
	int32_t C = llr_openpass_classes(p);
	taker t = {.x = x, .g = g, .p = p, .lo = llr_openbg_log_outside(g), .err = err};
	int32_t nodes, ostates;
	llr_openpass_stats(p, &nodes, &ostates, &t.steps);
	t.sub = llr_calloc((size_t)C + 1, sizeof *t.sub);
	t.done = llr_strmap_new();
	t.b = llr_csr_builder_new((int32_t)llr_strmap_size(x->features));
	if (!t.sub || !t.done || !t.b) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	/* V' first: its words are only taken out */
	for (int32_t v = 0; v < (int32_t)llr_strmap_size(x->vocab) && rc >= 0; v++)
		if (v != x->unk_id)
			rc = take(llr_strmap_str(x->vocab, v), llr_strmap_len(x->vocab, v), &t);
	for (int32_t i = 0; known && i < (int32_t)llr_strmap_size(known) && rc >= 0; i++) {
		rc = take(llr_strmap_str(known, i), llr_strmap_len(known, i), &t);
		krow[i] = t.last_row;
	}
	out->known = (int32_t)t.n;
	const llr_strmap *aw = llr_lexicon_any_wordmap(x);
	for (int32_t i = 0; aw && i < (int32_t)llr_strmap_size(aw) && rc >= 0; i++)
		rc = take(llr_strmap_str(aw, i), llr_strmap_len(aw, i), &t);
	if (rc >= 0 && llr_lexicon_hunspell_listed(x)) {
		const llr_strmap *f = llr_lexicon_hunspell_forms(x, err);
		if (!f)
			rc = llr_err_code(err, LLR_EINVAL);
		for (int32_t i = 0; f && i < (int32_t)llr_strmap_size(f) && rc >= 0; i++)
			rc = take(llr_strmap_str(f, i), llr_strmap_len(f, i), &t);
	}
	if (rc >= 0 && x->extract.ortho)
		rc = llr_extract_ortho_lists(take, &t);
	if (rc < 0)
		goto out;
	out->listed = (int32_t)t.n;
	/* the classes, less what the lists took */
	double un = llr_openpass_unassigned(p);
	int32_t cols[256];
	float ones[256];
	for (int i = 0; i < 256; i++)
		ones[i] = 1.0f;
	for (int32_t c = 0; c < C; c++) {
		double m = llr_openpass_mass(p, c) - t.sub[c], tol = 1e-9 * t.sub[c] + un;
		if (m <= tol) {
			if (m < -tol) {
				rc = llr_err_set(err, LLR_ERANGE, "exact masses: the lists took %.17g from a class of %.17g", t.sub[c],
				                 llr_openpass_mass(p, c));
				goto out;
			}
			continue;
		}
		size_t n = llr_openpass_row(p, c, cols, sizeof cols / sizeof *cols);
		if (lw_room(&t) < 0) {
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = llr_csr_builder_row(t.b, cols, ones, n, err)) < 0)
			goto out;
		t.lw[t.n++] = (float)(log(m) - t.lo);
		out->classes++;
	}
	if (!(out->phi = llr_csr_builder_finish(t.b, err))) {
		t.b = NULL;
		rc = llr_err_code(err, LLR_ENOMEM);
		goto out;
	}
	t.b = NULL;
	out->logq = t.lw;
	t.lw = NULL;
	out->unassigned = un / exp(t.lo);
	out->listed_set = t.done;
	t.done = NULL;
	out->pass = p;
	p = NULL;
out:
	if (rc < 0)
		llr_exact_rows_free(out);
	llr_openpass_free(p);
	free(t.sub);
	llr_strmap_free(t.done);
	llr_csr_builder_free(t.b);
	free(t.lw);
	free(t.r.c);
	free(t.r.v);
	return rc;
}
