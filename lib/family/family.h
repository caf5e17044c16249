/*
 * family.h - what a model family gives the one model interface
 * (llr_model, lib/llrnn.h): its table of operations, filled by
 * lib/family/<name>/ and listed in lib/family/families.c.  Private to
 * lib/family; not API.
 */
#ifndef LLR_FAMILY_H
#define LLR_FAMILY_H

#include "internal.h"

typedef struct llr_family {
	const char *name; /* llr_model_info.family */
	const char *what; /* the plural for messages: "n-gram models" */
	const char *instead; /* what scores it when it has no score operation */
	/* How a file is told to be this family's: sniff (1 yes, 0 no, < 0 an
	 * error), asked first; else the value of the meta's family key
	 * (NULL: a model file without one). */
	int (*sniff)(const char *path, llr_err *err);
	const char *family_key;
	/* Load path into m->state (the caller has set m->opts); on failure
	 * m->state is NULL or closable. */
	int (*open)(llr_model *m, const char *path, llr_err *err);
	void (*close)(void *state);
	void (*describe)(const llr_model *m, llr_model_info *info);
	const llr_meta *(*meta)(const llr_model *m);
	/* The operations a family may lack (NULL). */
	int (*score)(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
	             llr_err *err);
	int (*set_threads)(llr_model *m, int n, llr_err *err);
	/* score(1)'s operations beyond llr_model_score (each NULL when the
	 * family lacks it): score aligned source/target pairs (score
	 * --source; no_pairs, if set, says why not, else "<what> have no
	 * --source"); embed sentences (score --embed; B = 0 checks only
	 * that the model can). */
	int (*score_pairs)(llr_model *m, const llr_sentence *src, const llr_sentence *tgt, size_t B, double *logp,
	                   unsigned char *oov, llr_err *err);
	const char *no_pairs;
	int (*embed)(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err);
	/* Predict the labels of labelled examples (score --task). */
	int (*predict)(llr_model *m, unsigned tasks, const char *path, size_t batch,
	               int (*each)(void *ctx, const llr_prediction *p), void *ctx, llr_err *err);
	/* llr_model_score_lengths' n-gram lengths (NULL: the family's score,
	 * every length 0); a word's features (llr_model_word_features; NULL:
	 * the family has none). */
	int (*score_lengths)(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, int32_t *len,
	                     llr_err *err);
	int (*word_features)(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err);
	/* The vocabulary's word i, 0 <= i < llr_model_info.vocab (NULL: the
	 * family does not list its words; a mixture then checks the tokens
	 * it scores only). */
	const char *(*word)(const llr_model *m, int64_t i);
	/* Generation (llr_gen_*, lib/family/gen.h): the family's generation
	 * operations, in lib/family/<name>/gen.c; NULL when it cannot
	 * generate ("sentence encoders cannot generate"). */
	const struct llr_gen_ops *gen;
	/* Training by gradient steps (lib/family/<name>/train.c), driven by
	 * lib/train/; NULL for a family trained otherwise (n-gram) or not
	 * yet.  The family's llr_<name>_train_job builds the job. */
	const struct llr_train_ops *train;
} llr_family;

/* What a family gives the training driver (lib/train/driver.c) for a
 * model being trained; job is the family's state.  Every rank of a
 * distributed run calls each operation but evaluate, which rank 0 alone
 * calls. */
typedef struct llr_train_ops {
	/* The epoch's batches, shuffled with r: *nbatches of them. */
	int (*plan)(void *job, llr_rng *r, size_t *nbatches, llr_err *err);
	/* This rank's share of batch k: its gradient (the family zeroes what
	 * it must first), s->nll and s->ntok; LLR_ENAN when not finite. */
	int (*grad)(void *job, size_t k, llr_train_state *ts, llr_train_sums *s, llr_err *err);
	/* The gradient, summed over the ranks, averaged over ntok tokens and
	 * clipped to clip: its norm before clipping in *norm; when finite,
	 * the optimiser's step. */
	int (*apply)(void *job, llr_train_state *ts, int64_t ntok, double clip, double *norm, llr_err *err);
	/* After each step and after each epoch's end (both may be NULL). */
	int (*after_step)(void *job, const llr_train_state *ts, llr_err *err);
	int (*epoch_done)(void *job, const llr_train_state *ts, llr_err *err);
	/* The epoch's mean training loss over its batches [0, ts->batch)
	 * (NULL: ts->epoch_nll per ts->epoch_tok token). */
	double (*train_loss)(void *job, const llr_train_state *ts);
	/* The validation number to minimise (the loss per predicted token; a
	 * job with error_rate set, an error rate); NaN when it is not finite. */
	int (*evaluate)(void *job, double *loss, llr_err *err);
	/* The weights (*n of them; n may be NULL) and, when grads is not
	 * NULL, their gradient in *grads. */
	float *(*params)(void *job, float **grads, size_t *n);
	/* The model with ts (ts->best: the best weights, when set) to path. */
	int (*save)(void *job, const char *path, const llr_train_state *ts, llr_err *err);
	void (*free)(void *job);
} llr_train_ops;

/* The families' (lib/family/<name>/train.c). */
extern const llr_train_ops llr_rnnlm_train_ops, llr_encdec_train_ops, llr_senc_train_ops;

struct llr_train_job {
	const llr_train_ops *ops;
	void *state;          /* the family's */
	llr_meta *meta;       /* the model's, where the summary goes */
	int64_t train_tokens; /* tokens an epoch predicts (meta train_tokens) */
	/* The validation number is an error rate in points (the discourse
	 * encoders'; lib/train/schedule.c): no epoch 0, a best whenever it
	 * drops, patience counting the epochs that do not beat the best by
	 * min_impr, a constant rate; the meta's valid_error and train_loss
	 * instead of valid_logppl and train_logppl.  0: a loss (the rest). */
	int error_rate;
};

struct llr_model {
	const llr_family *fam;
	char *path; /* for messages */
	llr_model_opts opts;
	void *state; /* the family's */
};

/* The kind, vocabulary and sizes of an encoder family's model (its
 * lexicon lex, meta, and the meta key of its layer count). */
void llr_family_describe_lex(const llr_lexicon *lex, const llr_meta *meta, const char *layers_key, llr_model_info *info);

extern const llr_family llr_family_rnnlm, llr_family_ngram, llr_family_encdec, llr_family_sentenc, llr_family_mixture;

/* Length-bucketed batches of items 0..n-1 (buckets.c): with rng, the
 * items shuffled, stably sorted by key(ctx, item) (ties in shuffled
 * order), cut into batches of B and the batches shuffled; without rng
 * (validation) sorted, ties in item order.  idx[0..n) gets the items
 * batch after batch, first[0..nb] where each batch starts, *nbatches nb
 * = ceil(n / B).  LLR_ENOMEM. */
int llr_bucket_batches(size_t n, int B, llr_rng *rng, uint32_t (*key)(const void *ctx, int32_t item), const void *ctx,
                       int32_t *idx, size_t *first, size_t *nbatches);

#endif
