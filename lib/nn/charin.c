/*
 * charin.c - the character-aware input of the LSTM language model
 * (Kim, Jernite, Sontag & Rush 2016; Jernite's thesis, chapter 2): the
 * table of spellings the net reads (llr_words) and the word vectors of a
 * batch, convolution (charcnn.c) then highway layers (highway.c), forward
 * and backward.  Each distinct word of a batch is computed once; its
 * positions share the vector and add up their gradients.  Not here: where
 * the vectors go (net.c puts them alone, beside or onto the psi
 * embedding) and the parameters' layout (net.c).
 */
#include <stdlib.h>
#include <string.h>

#include "netx.h"

struct llr_words {
	int32_t V, ncp;
	int32_t *cps;
	llr_spell sp; /* entry 0: <s>; entry id + 1: input id id */
};

void llr_words_free(llr_words *w)
{
	if (!w)
		return;
	free(w->cps);
	llr_spell_free(&w->sp);
	free(w);
}

static int push_word(llr_words *w, const char *s, size_t len)
{
	int32_t ids[LLR_SPELL_MAX];
	int n = llr_word_spell(w->cps, w->ncp, s, len, ids);
	return llr_spell_push(&w->sp, ids, n);
}

llr_words *llr_words_new(const llr_strmap *vocab, const int32_t *cps, int32_t ncp, llr_err *err)
{
	llr_words *w = llr_calloc(1, sizeof *w);
	if (!w)
		return llr_err_set(err, LLR_ENOMEM, "spellings: out of memory"), NULL;
	if (!cps) {
		if (llr_charvocab_build(vocab, &w->cps, &w->ncp, err) < 0) {
			free(w);
			return NULL;
		}
	} else {
		for (int32_t i = 1; i < ncp; i++)
			if (cps[i] <= cps[i - 1]) {
				free(w);
				return llr_err_set(err, LLR_EFORMAT, "character vocabulary: code points not ascending at %d", i), NULL;
			}
		w->ncp = ncp;
		if (!(w->cps = llr_malloc(((size_t)ncp + 1) * sizeof *w->cps))) {
			free(w);
			return llr_err_set(err, LLR_ENOMEM, "spellings: out of memory"), NULL;
		}
		memcpy(w->cps, cps, (size_t)ncp * sizeof *cps);
	}
	w->V = (int32_t)llr_strmap_size(vocab);
	int rc = push_word(w, LLR_BOS, strlen(LLR_BOS));
	for (int32_t i = 0; rc >= 0 && i < w->V; i++)
		rc = push_word(w, llr_strmap_str(vocab, i), llr_strmap_len(vocab, i));
	if (rc < 0) {
		llr_words_free(w);
		return llr_err_set(err, LLR_ENOMEM, "spellings: out of memory"), NULL;
	}
	return w;
}

const int32_t *llr_words_chars(const llr_words *w, int32_t *ncp)
{
	*ncp = w->ncp;
	return w->cps;
}

int32_t llr_words_size(const llr_words *w)
{
	return w->sp.n - 1;
}

int32_t llr_words_add(llr_words *w, const char *word, size_t len, llr_err *err)
{
	if (w->sp.n >= INT32_MAX - 1 || push_word(w, word, len) < 0)
		return llr_err_set(err, LLR_ENOMEM, "spellings: out of memory");
	return w->sp.n - 2;
}

void llr_words_reset(llr_words *w)
{
	llr_spell_truncate(&w->sp, w->V + 1);
}

const llr_spell *llr_words_spell(const llr_words *w)
{
	return &w->sp;
}

/* ---------------------------------------------------------- the input */

int llr_charin_check(const llr_net_config *c, llr_err *err)
{
	if (c->input < LLR_IN_WORD || c->input > LLR_IN_SUM)
		return llr_err_set(err, LLR_EINVAL, "network: unknown input kind %d", c->input);
	if (c->input == LLR_IN_WORD)
		return LLR_OK;
	if (c->char_vocab < 0 || c->char_vocab > (1 << 21) || c->char_embed < 1 || c->char_embed > 4096)
		return llr_err_set(err, LLR_EINVAL, "network: %d characters of embedding size %d: out of range", c->char_vocab, c->char_embed);
	if (c->char_nw < 1 || c->char_nw > LLR_CNN_MAX_WIDTHS)
		return llr_err_set(err, LLR_EINVAL, "network: %d filter widths: must be 1 to %d", c->char_nw, LLR_CNN_MAX_WIDTHS);
	int64_t D = 0;
	for (int k = 0; k < c->char_nw; k++) {
		if (c->char_width[k] < 1 || c->char_width[k] > LLR_SPELL_MAX || c->char_filters[k] < 1 || c->char_filters[k] > 65536)
			return llr_err_set(err, LLR_EINVAL, "network: %d filters of width %d: need widths 1 to %d and 1 to 65536 filters", c->char_filters[k], c->char_width[k], LLR_SPELL_MAX);
		D += c->char_filters[k];
	}
	if (D > 65536)
		return llr_err_set(err, LLR_EINVAL, "network: %lld filters in all: at most 65536", (long long)D);
	if (c->highway < 0 || c->highway > LLR_MAX_HIGHWAY)
		return llr_err_set(err, LLR_EINVAL, "network: %d highway layers: must be 0 to %d", c->highway, LLR_MAX_HIGHWAY);
	if (c->input == LLR_IN_SUM && D != c->embed)
		return llr_err_set(err, LLR_EINVAL, "network: summed inputs: the %lld filters must equal the embedding size %d", (long long)D, c->embed);
	return LLR_OK;
}

void llr_charin_free(llr_charin *ci)
{
	llr_conv_ws_free(&ci->ws);
	free(ci->wid);
	free(ci->uof);
	free(ci->slot);
	free(ci->Z);
	free(ci->gt);
}

static int grow_i32(int32_t **p, size_t *cap, size_t n, int fill)
{
	if (n <= *cap)
		return LLR_OK;
	size_t c = n + n / 2;
	int32_t *q = llr_reallocarray(*p, c, sizeof *q);
	if (!q)
		return LLR_ENOMEM;
	if (fill)
		for (size_t i = *cap; i < c; i++)
			q[i] = -1;
	*p = q;
	*cap = c;
	return LLR_OK;
}

static int grow_f(float **p, size_t *cap, size_t n)
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

static void set_conv(llr_charin *ci, const float *P, float *G)
{
	llr_conv *c = &ci->conv;
	c->emb = P + ci->o_emb;
	c->demb = G ? G + ci->o_emb : NULL;
	for (int k = 0; k < c->nw; k++) {
		c->K[k] = P + ci->o_K[k];
		c->b[k] = P + ci->o_b[k];
		c->dK[k] = G ? G + ci->o_K[k] : NULL;
		c->db[k] = G ? G + ci->o_b[k] : NULL;
	}
}

int llr_charin_forward(llr_charin *ci, const float *P, const llr_words *w, const int32_t *in, size_t N, float *X, int ldx, int add)
{
	const llr_spell *sp = &w->sp;
	int D = ci->D, hw = ci->hw;
	if (grow_i32(&ci->uof, &ci->n_cap, N, 0) < 0 || grow_i32(&ci->slot, &ci->s_cap, (size_t)sp->n, 1) < 0)
		return LLR_ENOMEM;
	int U = 0;
	for (size_t n = 0; n < N; n++) {
		int32_t x = in[n];
		int32_t s = x == LLR_BOS_ID ? 0 : x >= 0 && x < sp->n - 1 ? x + 1
		                                                          : -1;
		if (s < 0) {
			ci->uof[n] = -1;
			continue;
		}
		if (ci->slot[s] < 0) {
			if (grow_i32(&ci->wid, &ci->u_cap, (size_t)U + 1, 0) < 0)
				return LLR_ENOMEM;
			ci->slot[s] = U;
			ci->wid[U++] = s;
		}
		ci->uof[n] = ci->slot[s];
	}
	for (int u = 0; u < U; u++)
		ci->slot[ci->wid[u]] = -1;
	ci->U = U;
	size_t UD = (size_t)U * D;
	if (grow_f(&ci->Z, &ci->z_cap, ((size_t)hw + 1) * UD + 1) < 0 || grow_f(&ci->gt, &ci->g_cap, (size_t)hw * 2 * UD + 1) < 0)
		return LLR_ENOMEM;
	set_conv(ci, P, NULL);
	if (U && llr_conv_forward(&ci->conv, &ci->ws, sp, ci->wid, U, ci->Z) < 0)
		return LLR_ENOMEM;
	for (int l = 0; U && l < hw; l++)
		llr_highway_forward(U, D, P + ci->o_hw[l], P + ci->o_hb[l], ci->Z + (size_t)l * UD, ci->gt + (size_t)l * 2 * UD, ci->Z + (size_t)(l + 1) * UD);
	const float *top = ci->Z + (size_t)hw * UD;
	for (size_t n = 0; n < N; n++) {
		float *x = X + n * (size_t)ldx;
		int32_t u = ci->uof[n];
		if (u < 0) {
			if (!add)
				memset(x, 0, (size_t)D * sizeof *x);
			continue;
		}
		const float *z = top + (size_t)u * D;
		if (add)
			for (int j = 0; j < D; j++)
				x[j] += z[j];
		else
			memcpy(x, z, (size_t)D * sizeof *x);
	}
	return LLR_OK;
}

int llr_charin_backward(llr_charin *ci, const float *P, float *G, const llr_words *w, size_t N, const float *dX, int ldx)
{
	int D = ci->D, hw = ci->hw, U = ci->U;
	if (!U)
		return LLR_OK;
	size_t UD = (size_t)U * D;
	float *dZ = llr_calloc(UD, sizeof *dZ), *dY = llr_malloc(UD * sizeof *dY), *scr = llr_malloc(2 * UD * sizeof *scr);
	int rc = LLR_OK;
	if (!dZ || !dY || !scr) {
		rc = LLR_ENOMEM;
		goto done;
	}
	for (size_t n = 0; n < N; n++) {
		int32_t u = ci->uof[n];
		if (u < 0)
			continue;
		const float *d = dX + n * (size_t)ldx;
		float *z = dZ + (size_t)u * D;
		for (int j = 0; j < D; j++)
			z[j] += d[j];
	}
	for (int l = hw - 1; l >= 0; l--) {
		llr_highway_backward(U, D, P + ci->o_hw[l], ci->Z + (size_t)l * UD, ci->gt + (size_t)l * 2 * UD, dZ, dY, G + ci->o_hw[l], G + ci->o_hb[l], scr);
		float *t = dZ;
		dZ = dY;
		dY = t;
	}
	set_conv(ci, P, G);
	if (llr_conv_backward(&ci->conv, &ci->ws, &w->sp, ci->wid, U, ci->Z, dZ) < 0)
		rc = LLR_ENOMEM;
done:
	free(dZ);
	free(dY);
	free(scr);
	return rc;
}
