/*
 * fflm.h - the feed-forward language model family's shared parts
 * (Bengio et al. 2003; lib/llrnn.h llr_fflm): the scoring state behind
 * llr_model (fflm.c), the context of a position, the generation and
 * training operations (gen.c, train.c).  Private to lib/family/fflm.
 */
#ifndef LLR_FAMILY_FFLM_H
#define LLR_FAMILY_FFLM_H

#include "family/gen.h"

typedef struct fflm {
	llr_fflm *model;
	llr_wordlm_batch batch; /* its input: contexts, order - 1 ids each */
} fflm;

/* The order - 1 input ids before position pos of the sentence seq
 * (seq[0..pos) its words so far), oldest first, LLR_BOS_ID before it. */
static inline void fflm_context(const int32_t *seq, int64_t pos, int C, int32_t *ctx)
{
	for (int j = 0; j < C; j++) {
		int64_t p = pos - C + j;
		ctx[j] = p < 0 ? LLR_BOS_ID : seq[p];
	}
}

/* An input or target id of the model for word w (<unk> when unseen;
 * *oov set), or LLR_EINVAL without <unk>. */
int32_t fflm_word_id(const llr_fflm *m, const char *w, int *oov, llr_err *err);

extern const llr_gen_ops llr_fflm_gen_ops;
extern const llr_train_ops llr_fflm_train_ops;

#endif
