/*
 * openshort.c - the short strings outside the vocabulary as an exact
 * stratum of open-vocabulary scoring (issue 14; opensig.c uses it for the
 * signature masses and lm/open.c for the norm check, beside
 * opendigits.c).
 *
 * A string of at most LLR_SHORT_MAX characters, each one the spelling
 * model has seen, is listed: with A such characters there are A + A^2 +
 * A^3 of them (about a million for a French corpus), each with its exact
 * q and its own row, so nothing is assumed about the extractors.  They
 * matter where a model weighs abbreviations and symbols ("nm", "°c") that
 * a dictionary accepts: rare among the draws, heavy in the sum.  The
 * strings of V', the known strings and, when the digit strings are summed
 * apart, the digit strings are left out.  Not here: strings with a
 * character the model never saw (drawn with the rest), the masses' use.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The seen characters: the n-gram's tokens less <s>, </s> and <unk>. */
static int32_t seen_chars(const llr_ngram *m, int32_t *out)
{
	int32_t n = 0;
	for (int32_t t = 0; t < llr_ngram_vocab_size(m); t++)
		if (t != llr_ngram_bos(m) && t != llr_ngram_eos(m) && t != llr_ngram_unk(m))
			out[n++] = t;
	return n;
}

int llr_seen_string(const llr_spelling *sp, const char *w, size_t len, int max_chars)
{
	const llr_ngram *m = llr_spelling_ngram(sp);
	int chars = 0;
	for (size_t i = 0; i < len; chars++) {
		int32_t cp;
		int k = llr_utf8_decode(w + i, len - i, &cp);
		if (k <= 0 || (max_chars > 0 && chars == max_chars))
			return 0;
		if (llr_spelling_char(m, w + i, (size_t)k, cp) < 0)
			return 0;
		i += (size_t)k;
	}
	return chars > 0;
}

int llr_short_string(const llr_spelling *sp, const char *w, size_t len)
{
	return llr_seen_string(sp, w, len, LLR_SHORT_MAX);
}

int llr_short_stratum_make(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int skip_digits,
                           llr_stratum *d, llr_err *err)
{
	*d = (llr_stratum){0};
	const llr_ngram *m = llr_spelling_ngram(x->spell);
	int32_t V = llr_ngram_vocab_size(m);
	int32_t *ch = llr_malloc((size_t)V * sizeof *ch);
	llr_csr_builder *b = llr_csr_builder_new((int32_t)llr_strmap_size(x->features));
	llr_rowbuf r = {0};
	size_t cap = 0;
	int rc = ch && b ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc < 0)
		goto out;
	int32_t A = seen_chars(m, ch);
	double lo = llr_openbg_log_outside(g);
	char buf[4 * LLR_SHORT_MAX + 1];
	for (int n = 1; A > 0 && n <= LLR_SHORT_MAX && rc >= 0; n++) {
		int idx[LLR_SHORT_MAX] = {0};
		for (;;) {
			size_t bl = 0;
			for (int i = 0; i < n; i++) {
				const char *t = llr_ngram_token(m, ch[idx[i]]);
				size_t k = strlen(t);
				memcpy(buf + bl, t, k);
				bl += k;
			}
			if (llr_strmap_get(x->vocab, buf, bl) < 0 && !(known && llr_strmap_get(known, buf, bl) >= 0) &&
			    !(skip_digits && llr_digit_string(buf, bl))) {
				size_t nn;
				if ((size_t)d->n == cap) {
					cap = cap ? 2 * cap : 4096;
					float *q = llr_reallocarray(d->logq, cap, sizeof *q);
					if (!q) {
						rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
						break;
					}
					d->logq = q;
				}
				if ((rc = llr_any_row_buf(x, buf, bl, &r, &nn, err)) < 0 ||
				    (rc = llr_csr_builder_row(b, r.c, r.v, nn, err)) < 0)
					break;
				double l = llr_spelling_logp(x->spell, buf, bl) - lo;
				d->logq[d->n++] = (float)l;
				d->Q += exp(l);
			}
			int i = 0;
			while (i < n && ++idx[i] == A)
				idx[i++] = 0;
			if (i == n)
				break;
		}
	}
	if (rc >= 0) {
		d->phi = llr_csr_builder_finish(b, err);
		b = NULL;
		if (!d->phi)
			rc = llr_err_code(err, LLR_ENOMEM);
	}
out:
	if (rc < 0)
		llr_stratum_free(d);
	llr_csr_builder_free(b);
	free(ch);
	free(r.c);
	free(r.v);
	return rc;
}
