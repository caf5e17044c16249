/*
 * charcnn.c - the character convolution of the character-aware word input
 * (Kim, Jernite, Sontag & Rush 2016, section 2.2; charcnn.h): the
 * character vocabulary, the spellings of words as character ids, and the
 * convolution with max-pooling over time, forward and backward.
 *
 * The convolution is a GEMM over unfolded windows: for a filter width w,
 * every window of w characters of every word of the batch becomes one row
 * of w*dc numbers (the embeddings of its characters side by side); the
 * rows times the w*dc x nf filter matrix give all the filters' responses
 * at once.  Max over each word's rows, then tanh (monotone, so the max of
 * the tanh is the tanh of the max).  Backward: only a word's maximum
 * window of a filter has a gradient; the filter gradient is windows^T dZ
 * and the windows' gradient dZ K^T, one GEMM each, folded back onto the
 * character embeddings.  Not here: the highway layers (highway.c) and the
 * choice of words and widths (net.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "charcnn.h"

/* ------------------------------------------------ characters and words */

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static int special(const char *w, size_t len)
{
	if (len == strlen(LLR_BOS) && !memcmp(w, LLR_BOS, len))
		return LLR_CH_BOS;
	if (len == strlen(LLR_EOS) && !memcmp(w, LLR_EOS, len))
		return LLR_CH_EOS;
	if (len == strlen(LLR_UNK) && !memcmp(w, LLR_UNK, len))
		return LLR_CH_UNKW;
	return 0;
}

int llr_charvocab_build(const llr_strmap *vocab, int32_t **cps, int32_t *n, llr_err *err)
{
	size_t cap = 256, k = 0;
	int32_t *a = malloc(cap * sizeof *a);
	if (!a)
		return llr_err_set(err, LLR_ENOMEM, "character vocabulary: out of memory");
	for (size_t i = 0; i < llr_strmap_size(vocab); i++) {
		const char *w = llr_strmap_str(vocab, (int32_t)i);
		size_t len = llr_strmap_len(vocab, (int32_t)i);
		if (special(w, len))
			continue;
		for (size_t j = 0; j < len;) {
			int32_t cp;
			int l = llr_utf8_decode(w + j, len - j, &cp);
			if (l <= 0) {
				j++;
				continue;
			}
			j += (size_t)l;
			if (k == cap) {
				/* keep the set small as it grows: sort and unique */
				qsort(a, k, sizeof *a, cmp_i32);
				size_t u = 0;
				for (size_t q = 0; q < k; q++)
					if (!u || a[q] != a[u - 1])
						a[u++] = a[q];
				k = u;
				if (k > cap / 2) {
					int32_t *b = llr_reallocarray(a, cap * 2, sizeof *a);
					if (!b) {
						free(a);
						return llr_err_set(err, LLR_ENOMEM, "character vocabulary: out of memory");
					}
					a = b;
					cap *= 2;
				}
			}
			a[k++] = cp;
		}
	}
	qsort(a, k, sizeof *a, cmp_i32);
	size_t u = 0;
	for (size_t q = 0; q < k; q++)
		if (!u || a[q] != a[u - 1])
			a[u++] = a[q];
	*cps = a;
	*n = (int32_t)u;
	return LLR_OK;
}

static int32_t char_id(const int32_t *cps, int32_t ncp, int32_t cp)
{
	int32_t lo = 0, hi = ncp;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (cps[mid] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ncp && cps[lo] == cp ? LLR_CH_FIRST + lo : LLR_CH_UNK;
}

int llr_word_spell(const int32_t *cps, int32_t ncp, const char *w, size_t len, int32_t *out)
{
	int n = 0;
	out[n++] = LLR_CH_BOW;
	int sp = special(w, len);
	if (sp) {
		out[n++] = sp;
	} else {
		int32_t last = -1;
		for (size_t j = 0; j < len;) {
			int32_t cp, id;
			int l = llr_utf8_decode(w + j, len - j, &cp);
			if (l <= 0) {
				id = LLR_CH_UNK;
				j++;
			} else {
				id = char_id(cps, ncp, cp);
				j += (size_t)l;
			}
			if (n < LLR_CHAR_MAX_WORD)
				out[n++] = id; /* the first LLR_CHAR_MAX_WORD - 1 */
			else
				last = id;
		}
		if (last >= 0)
			out[n++] = last;
	}
	out[n++] = LLR_CH_EOW;
	return n;
}

int llr_spell_push(llr_spell *s, const int32_t *ids, int len)
{
	if ((size_t)s->n + 2 > s->ncap) {
		size_t cap = s->ncap ? 2 * s->ncap : 256;
		int32_t *o = llr_reallocarray(s->off, cap, sizeof *o);
		if (!o)
			return LLR_ENOMEM;
		s->off = o;
		s->ncap = cap;
		if (s->n == 0)
			s->off[0] = 0;
	}
	size_t used = (size_t)s->off[s->n];
	if (used + (size_t)len > s->icap) {
		size_t cap = s->icap ? 2 * s->icap : 1024;
		while (cap < used + (size_t)len)
			cap *= 2;
		if (cap > INT32_MAX)
			return LLR_ENOMEM;
		int32_t *p = llr_reallocarray(s->ids, cap, sizeof *p);
		if (!p)
			return LLR_ENOMEM;
		s->ids = p;
		s->icap = cap;
	}
	memcpy(s->ids + used, ids, (size_t)len * sizeof *ids);
	s->off[s->n + 1] = (int32_t)(used + (size_t)len);
	s->n++;
	return LLR_OK;
}

void llr_spell_truncate(llr_spell *s, int32_t n)
{
	if (n < s->n)
		s->n = n;
}

void llr_spell_free(llr_spell *s)
{
	free(s->off);
	free(s->ids);
	memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------- convolution */

void llr_conv_ws_free(llr_conv_ws *ws)
{
	free(ws->unf);
	free(ws->z);
	free(ws->dz);
	free(ws->arg);
	memset(ws, 0, sizeof *ws);
}

static int grow(float **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return LLR_OK;
	size_t c = n + n / 2;
	float *q = llr_malloc(c * sizeof *q);
	if (!q)
		return LLR_ENOMEM;
	free(*p);
	*p = q;
	*cap = c;
	return LLR_OK;
}

/* Windows of a spelling of len characters for a filter of width w. */
static inline int nwin(int len, int w)
{
	return (len > w ? len : w) - w + 1;
}

LLR_CLONES LLR_VECTORIZE int llr_conv_forward(const llr_conv *c, llr_conv_ws *ws, const llr_spell *sp, const int32_t *wid, int U, float *Y)
{
	int dc = c->dc, D = c->D;
	size_t unf = 0, zmax = 0;
	for (int k = 0; k < c->nw; k++) {
		size_t r = 0;
		for (int u = 0; u < U; u++)
			r += (size_t)nwin(sp->off[wid[u] + 1] - sp->off[wid[u]], c->width[k]);
		ws->rows[k] = r;
		ws->unf_off[k] = unf;
		unf += r * (size_t)c->width[k] * dc;
		if (r * (size_t)c->nf[k] > zmax)
			zmax = r * (size_t)c->nf[k];
	}
	if (grow(&ws->unf, &ws->unf_cap, unf) < 0 || grow(&ws->z, &ws->z_cap, zmax) < 0)
		return LLR_ENOMEM;
	if ((size_t)U * D > ws->arg_cap) {
		free(ws->arg);
		ws->arg_cap = (size_t)U * D + (size_t)U * D / 2;
		if (!(ws->arg = llr_malloc(ws->arg_cap * sizeof *ws->arg))) {
			ws->arg_cap = 0;
			return LLR_ENOMEM;
		}
	}
	for (int k = 0; k < c->nw; k++) {
		int w = c->width[k], nf = c->nf[k], cols = w * dc;
		float *X = ws->unf + ws->unf_off[k];
		size_t r = 0;
		for (int u = 0; u < U; u++) {
			const int32_t *ch = sp->ids + sp->off[wid[u]];
			int len = sp->off[wid[u] + 1] - sp->off[wid[u]];
			for (int s = 0, L = nwin(len, w); s < L; s++, r++) {
				float *row = X + r * (size_t)cols;
				for (int t = 0; t < w; t++) {
					int pos = s + t;
					if (pos < len && ch[pos] != LLR_CH_PAD)
						memcpy(row + t * dc, c->emb + (size_t)ch[pos] * dc, (size_t)dc * sizeof *row);
					else
						memset(row + t * dc, 0, (size_t)dc * sizeof *row);
				}
			}
		}
		llr_gemm(0, 0, (int)r, nf, cols, 1.0f, X, cols, c->K[k], nf, 0.0f, ws->z, nf);
		r = 0;
		for (int u = 0; u < U; u++) {
			int len = sp->off[wid[u] + 1] - sp->off[wid[u]], L = nwin(len, w);
			float *y = Y + (size_t)u * D + c->off[k];
			int32_t *arg = ws->arg + (size_t)u * D + c->off[k];
			const float *z0 = ws->z + r * (size_t)nf;
			for (int f = 0; f < nf; f++) {
				y[f] = z0[f];
				arg[f] = (int32_t)r;
			}
			for (int s = 1; s < L; s++) {
				const float *z = z0 + (size_t)s * nf;
				for (int f = 0; f < nf; f++) {
					int better = z[f] > y[f];
					y[f] = better ? z[f] : y[f];
					arg[f] = better ? (int32_t)(r + (size_t)s) : arg[f];
				}
			}
			for (int f = 0; f < nf; f++)
				y[f] = tanhf(y[f] + c->b[k][f]);
			r += (size_t)L;
		}
	}
	return LLR_OK;
}

int llr_conv_backward(const llr_conv *c, llr_conv_ws *ws, const llr_spell *sp, const int32_t *wid, int U, const float *Y, const float *dY)
{
	int dc = c->dc, D = c->D;
	size_t zmax = 0, umax = 0;
	for (int k = 0; k < c->nw; k++) {
		size_t z = ws->rows[k] * (size_t)c->nf[k], x = ws->rows[k] * (size_t)c->width[k] * dc;
		zmax = z > zmax ? z : zmax;
		umax = x > umax ? x : umax;
	}
	/* dz holds dZ (rows x nf) then, after it, the windows' gradient */
	if (grow(&ws->dz, &ws->dz_cap, zmax + umax) < 0)
		return LLR_ENOMEM;
	for (int k = 0; k < c->nw; k++) {
		int w = c->width[k], nf = c->nf[k], cols = w * dc;
		size_t R = ws->rows[k];
		float *dZ = ws->dz, *dX = ws->dz + zmax;
		memset(dZ, 0, R * (size_t)nf * sizeof *dZ);
		float *db = c->db[k];
		for (int u = 0; u < U; u++) {
			const float *y = Y + (size_t)u * D + c->off[k];
			const float *dy = dY + (size_t)u * D + c->off[k];
			const int32_t *arg = ws->arg + (size_t)u * D + c->off[k];
			for (int f = 0; f < nf; f++) {
				float g = dy[f] * (1.0f - y[f] * y[f]);
				dZ[(size_t)arg[f] * nf + f] += g;
				db[f] += g;
			}
		}
		const float *X = ws->unf + ws->unf_off[k];
		llr_gemm(1, 0, cols, nf, (int)R, 1.0f, X, cols, dZ, nf, 1.0f, c->dK[k], nf);
		llr_gemm(0, 1, (int)R, cols, nf, 1.0f, dZ, nf, c->K[k], nf, 0.0f, dX, cols);
		size_t r = 0;
		for (int u = 0; u < U; u++) {
			const int32_t *ch = sp->ids + sp->off[wid[u]];
			int len = sp->off[wid[u] + 1] - sp->off[wid[u]];
			for (int s = 0, L = nwin(len, w); s < L; s++, r++) {
				const float *row = dX + r * (size_t)cols;
				for (int t = 0; t < w && s + t < len; t++) {
					int32_t id = ch[s + t];
					if (id == LLR_CH_PAD)
						continue;
					float *de = c->demb + (size_t)id * dc;
					for (int e = 0; e < dc; e++)
						de[e] += row[t * dc + e];
				}
			}
		}
	}
	return LLR_OK;
}
