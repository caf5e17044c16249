/*
 * embed.c - an LSTM LM's sentence vectors (llr_rnnlm_embed, behind
 * llr_model_embed and score(1) --embed): the bag of its input
 * embeddings.  A word's embedding is its row of psi times the F_in x E
 * table "embed" (for a softmax, tree or classes output psi is the
 * identity: the table's row); a sentence's vector is the mean over its
 * words, <unk>'s row for a word outside the vocabulary.  The
 * feed-forward LMs (lib/family/fflm) embed through the same mean
 * (llr_lm_embed_words).
 */
#include "family/family.h"

#include <stdlib.h>

/* out (E) = the mean of the embeddings of ids[0..n); 0 when n = 0. */
static void bag_mean(const float *emb, const llr_csr *psi, int E, const int32_t *ids, size_t n, float *out)
{
	memset(out, 0, (size_t)E * sizeof *out);
	for (size_t t = 0; t < n; t++) {
		int32_t r = ids[t];
		int32_t lo = psi ? psi->indptr[r] : 0, hi = psi ? psi->indptr[r + 1] : 1;
		for (int32_t k = lo; k < hi; k++) {
			const float *row = emb + (size_t)(psi ? psi->indices[k] : r) * (size_t)E;
			float v = psi ? psi->data[k] : 1.0f;
			for (int j = 0; j < E; j++)
				out[j] += v * row[j];
		}
	}
	if (n)
		for (int j = 0; j < E; j++)
			out[j] /= (float)n;
}

int llr_lm_embed_words(const llr_lexicon *x, int output, const float *emb, int E, const llr_sentence *s, size_t B, float *vec,
                       unsigned char *oov, llr_err *err)
{
	const llr_csr *psi = output == LLR_OUT_LOGLINEAR ? (x->psi ? x->psi : x->phi) : NULL;
	size_t n = 0;
	for (size_t b = 0; b < B; b++)
		n = LLR_MAX(n, s[b].n);
	int32_t *ids = llr_reallocarray(NULL, n ? n : 1, sizeof *ids);
	if (!ids)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t b = 0; b < B; b++) {
		for (size_t t = 0; t < s[b].n; t++) {
			int32_t id = llr_strmap_get(x->vocab, s[b].words[t], strlen(s[b].words[t]));
			if (id < 0 && x->unk_id < 0) {
				free(ids);
				return llr_err_set(err, LLR_EINVAL, "--embed: '%s' is outside the vocabulary, which has no <unk>", s[b].words[t]);
			}
			if (oov)
				*oov++ = id < 0;
			ids[t] = id < 0 ? x->unk_id : id;
		}
		bag_mean(emb, psi, E, ids, s[b].n, vec + b * (size_t)E);
	}
	free(ids);
	return LLR_OK;
}

int llr_rnnlm_embed(const llr_rnnlm *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, const char *path,
                    llr_err *err)
{
	const llr_net_config *c = llr_net_cfg(m->net);
	if (c->input != LLR_IN_WORD)
		return llr_err_set(err, LLR_EINVAL, "%s: --embed: an LL-RNN with character input has no table of word embeddings to average", path);
	const float *emb = llr_net_tensor(m->net, "embed", NULL);
	if (!emb)
		return llr_err_set(err, LLR_EINVAL, "%s: --embed: the LL-RNN has no 'embed' tensor", path);
	return llr_lm_embed_words(m->lex, c->output, emb, c->embed, s, B, vec, oov, err);
}
