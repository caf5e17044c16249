/*
 * loglm.h - the log-linear (maximum-entropy) language model family's
 * shared parts (tutorial section 4, train --context N): the model (a
 * lexicon and the hashed feature weights of lib/nn/maxent.c, with a
 * softmax output or the log-linear one over the lexicon's phi), its files
 * (model.c), --resume (setup.c), the training job
 * (train.c), the scoring state behind llr_model (loglm.c) and the
 * generation operations (gen.c).  Private to lib/family/loglm.
 */
#ifndef LLR_FAMILY_LOGLM_H
#define LLR_FAMILY_LOGLM_H

#include "family/gen.h"

typedef struct llr_loglm {
	llr_lexicon *lex;
	llr_maxent *me;
	llr_meta *meta; /* the training settings and history */
} llr_loglm;

/* A new model's settings (train --context N ...). */
typedef struct llr_loglm_setup {
	int output; /* LLR_OUT_LOGLINEAR, else (0 too) the softmax */
	int order, skip, bag;
	int64_t hash_size;
	double l2, l1;  /* per predicted token, on the touched weights */
	int optim;      /* LLR_OPT_* */
	double lr, eps; /* > 0, else the optimiser's defaults */
	int batch;
	uint64_t seed;
	double clip, min_impr;
} llr_loglm_setup;

/* The options a resumed model fixes, by position (trainer.c's names, the
 * meta keys of setup.c). */
enum { LOGLM_NFIXED = 10 };

void llr_loglm_free(llr_loglm *m);
int llr_loglm_fresh(llr_lexicon *x, const llr_loglm_setup *o, llr_loglm **m, llr_train_state **ts, llr_err *err);
int llr_loglm_save(const char *path, const llr_loglm *m, const llr_train_state *ts, llr_err *err);
int llr_loglm_load(const char *path, llr_loglm **m, llr_train_state **ts, llr_err *err);
/* An input or target id of the model for word w (<unk> when unseen;
 * *oov set), or LLR_EINVAL without <unk>. */
int32_t loglm_word_id(const llr_loglm *m, const char *w, int *oov, llr_err *err);
/* The run saved in path, its settings into *o; *bad the position of an
 * option given (bit k of given) that the model fixes otherwise. */
int llr_loglm_resume(const char *path, llr_loglm_setup *o, unsigned given, llr_loglm **m, llr_train_state **ts, int *bad,
                     llr_err *err);
int llr_loglm_train_job(llr_loglm *m, const llr_lm_corpus *train, const llr_lm_corpus *valid, const llr_loglm_setup *o,
                        const llr_train_comm *comm, llr_train_job **out, llr_err *err);

/* The scoring state behind llr_model. */
typedef struct loglm {
	llr_loglm *model;
	llr_wordlm_batch batch; /* its input: each position as the features see it */
} loglm;

extern const llr_gen_ops llr_loglm_gen_ops;
extern const llr_train_ops llr_loglm_train_ops;

#endif
