/*
 * wordlm.c - what the closed-vocabulary word language models scored
 * position by position (fflm, loglm) share behind llr_model: a batch's
 * targets (each sentence's word ids, </s> after them, <unk> for a word
 * outside the vocabulary), its log-probability buffer, room for the
 * family's own input at each position, and their description.
 */
#include "family/family.h"

#include <stdlib.h>
#include <string.h>

void llr_wordlm_batch_free(llr_wordlm_batch *b)
{
	free(b->ids);
	free(b->lp);
	free(b->in);
	memset(b, 0, sizeof *b);
}

/* Room for n positions, with in_size bytes of input each. */
static int ensure(llr_wordlm_batch *b, size_t n, size_t in_size)
{
	if (n <= b->cap)
		return LLR_OK;
	size_t cap = n + n / 2;
	free(b->ids);
	free(b->lp);
	free(b->in);
	b->ids = llr_reallocarray(NULL, cap, sizeof *b->ids);
	b->lp = llr_reallocarray(NULL, cap, sizeof *b->lp);
	b->in = llr_reallocarray(NULL, cap, in_size);
	b->cap = b->ids && b->lp && b->in ? cap : 0;
	return b->cap ? LLR_OK : LLR_ENOMEM;
}

int llr_wordlm_batch_fill(llr_wordlm_batch *b, llr_lexicon *lex, const llr_sentence *s, size_t B, size_t in_size,
                          unsigned char *oov, llr_err *err)
{
	size_t N = 0;
	for (size_t k = 0; k < B; k++)
		N += s[k].n + 1;
	if (ensure(b, N, in_size) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu sentences", B);
	llr_rnnlm lm = {.lex = lex};
	for (size_t k = 0, o = 0; k < B; o += s[k].n + 1, k++) {
		int32_t *ids = b->ids + o;
		for (size_t t = 0; t < s[k].n; t++) {
			int bad = 0;
			const char *w = s[k].words[t];
			if ((ids[t] = llr_rnnlm_target(&lm, w, strlen(w), &bad, err)) < 0)
				return ids[t];
			oov[o + t] = (unsigned char)bad;
		}
		ids[s[k].n] = lex->eos_id;
		oov[o + s[k].n] = 0;
	}
	b->n = N;
	return LLR_OK;
}

void llr_wordlm_describe(const llr_lexicon *lex, int order, llr_model_info *info)
{
	llr_family_describe_vocab(lex, info);
	info->order = order;
	info->input = "word";
	info->oov = LLR_OOV_UNK;
	info->norm_checked = -1;
}
