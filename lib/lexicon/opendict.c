/*
 * opendict.c - the hunspell dictionary's word forms outside the
 * vocabulary as an exact stratum of open-vocabulary scoring (issue 14;
 * opensig.c uses it for the signature masses and lm/open.c for the norm
 * check, beside opendigits.c and openshort.c).
 *
 * A model whose features include a hunspell dictionary weighs the strings
 * the dictionary knows apart (HS:@known, OOV:HS:@known, their tags), and
 * q gives them a small share of its draws: drawn, they carry most of the
 * norm check's variance.  Here every form affixforms.c spells out of the
 * model's own dictionary is listed once, with its exact q and its own
 * row: right for any list, since nothing is assumed of the rows.  Left
 * out: the strings of V', the known strings, the short strings (their own
 * stratum), the digit strings when they are summed apart, and forms with
 * a character the spelling model never saw (their q is the floor's; they
 * are drawn with the rest, as are the words hunspell accepts that the
 * listing never spells, such as compounds).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct lister {
	const llr_lexicon *x;
	const llr_strmap *known;
	int skip_digits;
	double lo; /* ln (1 - S_V): q = p_spell / (1 - S_V) */
	llr_stratum *d;
	llr_csr_builder *b;
	llr_rowbuf r;
	size_t cap;
	llr_err *err;
} lister;

static int list_form(const char *w, size_t len, void *ctx)
{
	lister *L = ctx;
	const llr_lexicon *x = L->x;
	llr_stratum *d = L->d;
	if (llr_strmap_get(x->vocab, w, len) >= 0 || (L->known && llr_strmap_get(L->known, w, len) >= 0) ||
	    llr_short_string(x->spell, w, len) || (L->skip_digits && llr_digit_string(w, len)) ||
	    !llr_seen_string(x->spell, w, len, 0) || llr_strmap_get(d->set, w, len) >= 0)
		return LLR_OK;
	if (llr_strmap_add(d->set, w, len) < 0)
		return llr_err_set(L->err, LLR_ENOMEM, "out of memory");
	if ((size_t)d->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 4096;
		float *q = llr_reallocarray(d->logq, cap, sizeof *q);
		if (!q)
			return llr_err_set(L->err, LLR_ENOMEM, "out of memory");
		d->logq = q;
		L->cap = cap;
	}
	size_t n;
	int rc;
	if ((rc = llr_any_row_buf(x, w, len, &L->r, &n, L->err)) < 0 ||
	    (rc = llr_csr_builder_row(L->b, L->r.c, L->r.v, n, L->err)) < 0)
		return rc;
	double l = llr_spelling_logp(x->spell, w, len) - L->lo;
	d->logq[d->n++] = (float)l;
	d->Q += exp(l);
	return LLR_OK;
}

int llr_dict_stratum_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int skip_digits,
                          llr_stratum *d, char *why, size_t why_cap, llr_err *err)
{
	if (why_cap)
		why[0] = 0;
	*d = (llr_stratum){0};
	const char *aff, *dic;
	size_t al, dl;
	if (!llr_lexicon_any_hunspell_text(x, &aff, &al, &dic, &dl))
		return LLR_OK; /* no dictionary: no stratum */
	lister L = {.x = x, .known = known, .skip_digits = skip_digits, .lo = llr_openbg_log_outside(g), .d = d, .err = err};
	L.b = llr_csr_builder_new((int32_t)llr_strmap_size(x->features));
	d->set = llr_strmap_new();
	int rc = L.b && d->set ? llr_affix_forms(aff, al, dic, dl, list_form, &L, err)
	                       : llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc == LLR_EFORMAT) { /* an affix file the listing cannot read: the forms are drawn */
		snprintf(why, why_cap, "%s", err ? err->msg : "the affix file cannot be read");
		if (err)
			*err = (llr_err){0};
		rc = LLR_OK;
		llr_stratum_free(d);
	} else if (rc >= 0 && d->n == 0) { /* nothing listed: no stratum */
		llr_stratum_free(d);
	} else if (rc >= 0) {
		d->phi = llr_csr_builder_finish(L.b, err);
		L.b = NULL;
		if (!d->phi)
			rc = llr_err_code(err, LLR_ENOMEM);
	}
	if (rc < 0)
		llr_stratum_free(d);
	llr_csr_builder_free(L.b);
	free(L.r.c);
	free(L.r.v);
	return rc;
}

int llr_dict_string(const llr_stratum *d, const char *w, size_t len)
{
	return d->set && llr_strmap_get(d->set, w, len) >= 0;
}
