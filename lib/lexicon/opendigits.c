/*
 * opendigits.c - the strings of ASCII digits outside the vocabulary as an
 * exact stratum of open-vocabulary scoring (issue 14; opensig.c uses it
 * for the signature masses and lm/open.c for the norm check).
 *
 * Sampling leaves these strings' masses noisy where it matters most: a
 * model puts much of its mass on numbers after "isbn" or "page", while
 * they are a few percent of p_spell's draws, spread over thousands of
 * rows (length class, last digits).  Their q is known exactly by groups
 * (lib/ngram/spelldigits.c: each string of up to 4 digits, then length
 * and last k digits), and with the usual
 * extractors (orthographic classes, suffixes up to k characters, a
 * dictionary that accepts every number) all the strings of a group share
 * one row.  So a group's row is computed from one of its strings, and the
 * stratum is used only when a second string of each group, with other
 * leading digits (for the longest lengths: LLR_DIGIT_LONG digits), gets
 * the same row; extractors that read more of the string (character
 * n-grams, long suffixes) fail that test and leave these strings to the
 * draws.  The strings of V', and the known strings (counted exactly
 * elsewhere), are taken out of their groups; so are the lexicon
 * sources' words (a number a treebank tags NUM), which join the stratum
 * as strings of their own, each with its row.  Not here: the sampled rest,
 * the masses' use (opensig.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int llr_digit_string(const char *w, size_t len)
{
	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (w[i] < '0' || w[i] > '9')
			return 0;
	return 1;
}

void llr_stratum_free(llr_stratum *d)
{
	llr_csr_free(d->phi);
	free(d->logq);
	llr_strmap_free(d->set);
	*d = (llr_stratum){0};
}

/* A string w is set apart from its group when the vocabulary, the known
 * strings or the lexicon sources list it: the first two are counted
 * elsewhere, the last have rows of their own. */
static int apart(const llr_lexicon *x, const llr_strmap *known, const char *w, size_t len)
{
	const llr_strmap *lw = llr_lexicon_any_wordmap(x);
	return llr_strmap_get(x->vocab, w, len) >= 0 || (known && llr_strmap_get(known, w, len) >= 0) ||
	       (lw && llr_strmap_get(lw, w, len) >= 0);
}

/* A string of the group (len, tail) into buf, not set apart: the tail
 * (all the digits up to LLR_DIGIT_SINGLE) after lead digits, the first of c, c + 1, ... (mod 10) that gives one;
 * its length, 0 if none does. */
static size_t group_string(const llr_lexicon *x, const llr_strmap *known, int len, int k, int32_t tail, char c, char *buf)
{
	int t = len <= LLR_DIGIT_SINGLE ? len : k;
	for (int i = 0; i < 10; i++) {
		memset(buf, '0' + (c - '0' + i) % 10, (size_t)(len - t));
		snprintf(buf + len - t, (size_t)t + 1, "%0*d", t, (int)tail);
		if (!apart(x, known, buf, (size_t)len))
			return (size_t)len;
	}
	return 0;
}

/* Take w out of its group (mass in p_spell units) if it is a digit
 * string; 1 if it was. */
static int take_out(const llr_spelling *sp, const llr_digit_groups *gr, double *mass, const char *w, size_t len)
{
	int32_t i = llr_digit_group_of(gr, w, len);
	if (i >= 0)
		mass[i] -= exp(llr_spelling_logp(sp, w, len));
	return i >= 0;
}

int llr_digit_stratum_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, llr_stratum *d,
                           const char **why, llr_err *err)
{
	*d = (llr_stratum){0};
	*why = NULL;
	const llr_spelling *sp = x->spell;
	int N = llr_ngram_order(llr_spelling_ngram(sp));
	if (N < 2 || N > LLR_DIGIT_MAX_K + 1) {
		*why = "the spelling model's order is not 2 to 5";
		return LLR_OK;
	}
	llr_digit_groups gr;
	int rc = llr_spelling_digit_groups(sp, LLR_DIGIT_CAP, &gr, err);
	if (rc < 0)
		return rc;
	double *mass = llr_malloc((size_t)gr.count * sizeof *mass);
	float *lq = NULL;
	llr_csr_builder *b = llr_csr_builder_new((int32_t)llr_strmap_size(x->features));
	llr_rowbuf r = {0}, r2 = {0}; /* a group's row, and that of its second string */
	if (!mass || !b) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t i = 0; i < gr.count; i++)
		mass[i] = exp(gr.logp[i]);
	/* the strings set apart: V' and known out, the lexicon sources'
	 * other words out of their groups and in as rows of their own */
	double lo = llr_openbg_log_outside(g);
	const llr_strmap *lw = llr_lexicon_any_wordmap(x);
	int32_t nlex = lw ? (int32_t)llr_strmap_size(lw) : 0;
	for (int32_t v = 0; v < (int32_t)llr_strmap_size(x->vocab); v++)
		if (v != x->unk_id)
			take_out(sp, &gr, mass, llr_strmap_str(x->vocab, v), llr_strmap_len(x->vocab, v));
	for (int32_t i = 0; known && i < (int32_t)llr_strmap_size(known); i++) {
		const char *w = llr_strmap_str(known, i);
		size_t len = llr_strmap_len(known, i);
		if (llr_strmap_get(x->vocab, w, len) < 0)
			take_out(sp, &gr, mass, w, len);
	}
	if (!(lq = llr_malloc(((size_t)gr.count + (size_t)nlex) * sizeof *lq))) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t i = 0; i < nlex; i++) {
		const char *w = llr_strmap_str(lw, i);
		size_t len = llr_strmap_len(lw, i), n;
		if (!llr_digit_string(w, len) || llr_strmap_get(x->vocab, w, len) >= 0 ||
		    (known && llr_strmap_get(known, w, len) >= 0))
			continue;
		take_out(sp, &gr, mass, w, len);
		if ((rc = llr_any_row_buf(x, w, len, &r, &n, err)) < 0 || (rc = llr_csr_builder_row(b, r.c, r.v, n, err)) < 0)
			goto out;
		double l = llr_spelling_logp(sp, w, len) - lo;
		lq[d->n++] = (float)l;
		d->Q += exp(l);
	}
	char buf[LLR_DIGIT_LONG + 1];
	for (int32_t i = 0; i < gr.count; i++) {
		int len;
		int32_t tail;
		llr_digit_group_key(&gr, i, &len, &tail);
		/* a group of one string of V' or known is empty now; of more,
		 * it keeps their rounding error at most */
		if (!(mass[i] > 1e-9 * exp(gr.logp[i])))
			continue;
		size_t n, n2, bl = group_string(x, known, len, gr.k, tail, '1', buf);
		if (bl == 0) { /* mass left, but no string to take the row from */
			*why = "a group of digit strings has no string left to take its row from";
			goto out;
		}
		if ((rc = llr_any_row_buf(x, buf, bl, &r, &n, err)) < 0)
			goto out;
		if (len > LLR_DIGIT_SINGLE) { /* another string of the group: its row too */
			int len2 = len < LLR_DIGIT_CAP ? len : LLR_DIGIT_LONG;
			if ((bl = group_string(x, known, len2, gr.k, tail, '0', buf)) == 0 &&
			    (bl = group_string(x, known, len, gr.k, tail, '0', buf)) == 0) {
				*why = "a group of digit strings has no second string left to check its row on";
				goto out;
			}
			if ((rc = llr_any_row_buf(x, buf, bl, &r2, &n2, err)) < 0)
				goto out;
			if (n2 != n || memcmp(r2.c, r.c, n * sizeof *r.c) || memcmp(r2.v, r.v, n * sizeof *r.v)) {
				*why = "the rows of digit strings depend on more than their length and last digits";
				goto out;
			}
		}
		if ((rc = llr_csr_builder_row(b, r.c, r.v, n, err)) < 0)
			goto out;
		lq[d->n++] = (float)(log(mass[i]) - lo);
		d->Q += exp(log(mass[i]) - lo);
	}
	if (!(d->phi = llr_csr_builder_finish(b, err))) {
		rc = llr_err_code(err, LLR_ENOMEM);
		b = NULL;
		goto out;
	}
	b = NULL;
	d->logq = lq;
	lq = NULL;
out:
	if (rc < 0 || *why) {
		llr_csr_free(d->phi);
		*d = (llr_stratum){0};
	}
	llr_csr_builder_free(b);
	llr_digit_groups_free(&gr);
	free(mass);
	free(lq);
	free(r.c);
	free(r.v);
	free(r2.c);
	free(r2.v);
	return rc;
}
