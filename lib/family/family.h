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
	/* llr_model_score_computation: score, and the scheduler's m_t at
	 * each prediction's step (NULL: the family has no scheduler; a model
	 * of the family may still lack one, which B = 0 checks). */
	int (*score_computation)(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, double *comp,
	                         llr_norm_stat *norm, llr_err *err);
	/* score(1)'s operations beyond llr_model_score (each NULL when the
	 * family lacks it): score aligned source/target pairs (score
	 * --source; no_pairs, if set, says why not, else "<what> have no
	 * --source"); embed sentences (score --embed; B = 0 checks only
	 * that the model can). */
	int (*score_pairs)(llr_model *m, const llr_sentence *src, const llr_sentence *tgt, size_t B, double *logp,
	                   unsigned char *oov, llr_err *err);
	const char *no_pairs;
	/* llr_model_mask_pairs: score_pairs under a decode-time mask from
	 * then on (NULL: the family cannot). */
	int (*mask_pairs)(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err);
	/* llr_model_mask: score under a decode-time mask from then on (NULL:
	 * the family cannot). */
	int (*mask)(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err);
	int (*embed)(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err);
	/* Predict the labels of labelled examples (score --task). */
	int (*predict)(llr_model *m, unsigned tasks, const char *path, size_t batch,
	               int (*each)(void *ctx, const llr_prediction *p), void *ctx, llr_err *err);
	/* Tag the words of B sentences (llr_model_tag; NULL: the family
	 * cannot tag). */
	int (*tag)(llr_model *m, const llr_sentence *s, size_t B, const llr_tag_opts *o, const char **tags, unsigned char *unknown,
	           llr_err *err);
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
	/* How train(1) trains it (NULL: it does not): its options and its
	 * setup (a family's train.c or estimate.c). */
	const struct llr_trainer *trainer;
} llr_family;

/* What a trainable family declares to train(1) (options.c reads it). */
typedef struct llr_trainer {
	const llr_train_opt *opts; /* its options, ended by a zero row */
	const char *synopsis;      /* its lines of train's usage, NULL none */
	const char *usage;         /* the usage shown with its usage errors, NULL: train's */
	/* The error for an option it does not take, after "--name: " (NULL:
	 * the option's own msg, else "not for <what>"); and the words after
	 * "--name: " when one of its own options reaches another family. */
	const char *foreign, *only;
	int by_default; /* chosen when no family is asked for */
	/* A stream (the first operand) that only this family trains. */
	int (*claims)(const char *path);
	/* Usage errors among its options and operands (after their values
	 * are parsed; may be NULL). */
	int (*check)(const llr_train_args *a, llr_err *err);
	/* A gradient-trained family's model and data (llr_train_build). */
	int (*build)(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err);
	/* Or its whole run (llr_train_estimate). */
	int (*estimate)(llr_train_args *a, llr_err *err);
} llr_trainer;

/* options.c: for the trainers.  A usage error (LLR_EUSAGE); a line for
 * train to print (llr_train_args_on_note); the limits and schedule the
 * options give, with the mask (LLR_LIM_*) of those given; -q, or a rank
 * other than 0 (which leaves the talking to rank 0). */
int llr_train_usage_err(llr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void llr_train_note(const llr_train_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void llr_train_args_limits(const llr_train_args *a, llr_train_limits *l, unsigned *given);
int llr_train_quiet(const llr_train_args *a, const llr_train_comm *comm);
/* The optimiser: a new model's settings (kind's defaults, then lr and
 * eps where > 0); on --resume, --lr and --eps replacing the saved ones
 * (LLR_EUSAGE: --eps for SGD); and its meta keys optim and eps (none
 * for SGD).  Under -v a note when meta (of path) has no checksums. */
void llr_train_optim_config(llr_optim_config *oc, int kind, double lr, double eps);
int llr_train_optim_resume(llr_train_state *ts, double lr, double eps, llr_err *err);
int llr_train_optim_meta(llr_meta *m, const llr_optim *opt);
/* A run's limits, schedule and optimiser into its model's meta (the
 * three above); LLR_ENOMEM. */
int llr_train_run_meta(const llr_train_limits *lim, llr_meta *m, const llr_optim *opt);
/* A family's own run state for a job: size bytes zeroed, owned by s
 * (freed by free_fn with the job); NULL: no memory. */
void *llr_train_setup_own(llr_train_setup *s, size_t size, void (*free_fn)(void *));
void llr_train_note_checksums(const llr_train_args *a, const char *path, const llr_meta *meta);
/* --resume: a usage error when option opt was given and is not the
 * model's meta key (want: its value as the meta spells it); for a
 * probability, *val becomes the model's (have). */
/* How a message spells option name's value: "-s", "--hidden". */
const char *llr_train_spell(const llr_train_args *a, const char *name, char *buf, size_t size);
int llr_train_fixed(const llr_train_args *a, const char *opt, const llr_meta *m, const char *key, const char *want, llr_err *err);
/* An estimating family that saves its run on a signal
 * (llr_train_args_on_signal): have the caller catch SIGINT and SIGTERM
 * (nothing when it did not ask), and the signal caught so far, 0 none. */
void llr_train_catch_signals(const llr_train_args *a);
int llr_train_signal(const llr_train_args *a);
int llr_train_fixed_prob(const llr_train_args *a, const char *opt, const char *key, double *val, double have, llr_err *err);
/* What every gradient-trained family reads alike from the options: -o
 * (the --resume model when not given), --resume, --valid, the stream
 * (the first operand; NULL for standard input), the limits and schedule
 * with the mask of those given, and -q (or a rank other than 0). */
typedef struct llr_train_common {
	const char *out, *stream, *valid, *resume;
	llr_train_limits lim;
	unsigned lim_given;
	int quiet;
} llr_train_common;
void llr_train_args_common(const llr_train_args *a, const llr_train_comm *comm, llr_train_common *c);
/* The mask of the options names[0..n) given: bit k for names[k]. */
unsigned llr_train_args_mask(const llr_train_args *a, const char *const *names, int n);
/* After a family's resume call of the run in path returned rc, with bad
 * the index (into fixed, the option names by the family's LLR_*S_*
 * positions) of an option given that the model fixes otherwise, else
 * < 0: that usage error, or rc's error; then the limits given over the
 * model's (meta) and --lr and --eps over its optimiser (ts). */
int llr_train_resumed(const llr_train_args *a, int rc, int bad, const char *const *fixed, const char *path,
                      llr_train_limits *lim, unsigned lim_given, const llr_meta *meta, llr_train_state *ts, llr_err *err);

extern const llr_trainer llr_rnnlm_trainer, llr_ngram_trainer, llr_senc_trainer, llr_encdec_trainer, llr_fflm_trainer,
    llr_loglm_trainer, llr_hmm_trainer, llr_mrf_trainer;

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
/* The target tokens the encoder-decoder's output automaton a never
 * allows (no arc in any state; </s>: no final state), their count
 * returned and the first 20 named in list (encdec/constrain.c). */
size_t llr_encdec_fsa_unused(const llr_fsa *a, const llr_strmap *vocab, llr_buf *list);

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
	llr_notice notice; /* llr_model_on_notice's: the constraints made take it */
	void *state; /* the family's */
};

/* Why a language model family has no score_pairs (its no_pairs). */
#define LLR_LM_NO_PAIRS                                                                                                     \
	"a language model, trained without a source: it cannot read sources (train an encoder-decoder on featurize --source data)"

/* The end of a score operation whose net gives one float log-probability
 * a position (lp[0..n)) and, with the norm check, one largest error e:
 * logp as doubles, *norm from e when asked (norm and check_norm). */
void llr_family_score_out(const float *lp, size_t n, double *logp, int check_norm, double e, llr_norm_stat *norm);

/* Every word of B sentences valid UTF-8 (families.c), as score(1) and
 * gen(1) read their input: LLR_EUTF8 "PATH: WHAT B, word T: invalid
 * UTF-8 (byte 0xXX at byte K)" for the first that is not ("PATH: WHAT,
 * word T: ..." unless numbered; WHAT "sentence", "source", "the
 * prefix").  The calls that take sentences check them before the family
 * sees them. */
int llr_family_check_utf8(const llr_model *m, const char *what, int numbered, const llr_sentence *s, size_t B, llr_err *err);

/* The start of a closed-vocabulary family's open (families.c): its
 * state of size bytes, zeroed, as m's (freed by its close), and --open
 * refused ("PATH: --open: <what> have a closed vocabulary"). */
int llr_family_open_closed(llr_model *m, const char *path, size_t size, void **state, llr_err *err);

/* A batch of sentences as the closed-vocabulary word LMs score it
 * (wordlm.c: fflm, loglm): n positions, each sentence's words then
 * </s>; ids their targets (<unk> for a word outside the vocabulary), lp
 * the log-probabilities the net writes there, in the family's input at
 * each position (what its net reads there: a context, a feature set). */
typedef struct llr_wordlm_batch {
	int32_t *ids;
	float *lp;
	void *in;
	size_t n, cap;
} llr_wordlm_batch;

/* Sentences s[0..B) into b (grown as needed, in_size bytes of input a
 * position, the same on every call), oov[] set per position; LLR_EINVAL
 * for a word outside a vocabulary without <unk>. */
int llr_wordlm_batch_fill(llr_wordlm_batch *b, llr_lexicon *lex, const llr_sentence *s, size_t B, size_t in_size,
                          unsigned char *oov, llr_err *err);
void llr_wordlm_batch_free(llr_wordlm_batch *b);
/* What such a model is: its vocabulary, its order, word input, <unk>
 * for unseen words, no normalisation check recorded. */
void llr_wordlm_describe(const llr_lexicon *lex, int order, llr_model_info *info);

/* A model's kind ("model"), vocabulary size and <unk> from its lexicon
 * (describe.c). */
void llr_family_describe_vocab(const llr_lexicon *lex, llr_model_info *info);
/* The kind, vocabulary and sizes of an encoder family's model (its
 * lexicon lex, meta, and the meta key of its layer count). */
void llr_family_describe_lex(const llr_lexicon *lex, const llr_meta *meta, const char *layers_key, llr_model_info *info);

extern const llr_family llr_family_rnnlm, llr_family_ngram, llr_family_encdec, llr_family_sentenc, llr_family_mixture, llr_family_fflm,
    llr_family_loglm, llr_family_hmm, llr_family_mrf, llr_family_mrftag;
/* families.c: the i-th family of the table (NULL after the last); the
 * family key of the model file at path, copied into buf (empty when
 * absent), 0 when path is not a model file that can be peeked at (stdin
 * is read once, by the family). */
const llr_family *llr_family_at(size_t i);
int llr_family_peek(const char *path, char *buf, size_t size);

/* Length-bucketed batches of items 0..n-1 (buckets.c): with rng, the
 * items shuffled, stably sorted by key(ctx, item) (ties in shuffled
 * order), cut into batches of B and the batches shuffled; without rng
 * (validation) sorted, ties in item order.  idx[0..n) gets the items
 * batch after batch, first[0..nb] where each batch starts, *nbatches nb
 * = ceil(n / B).  LLR_ENOMEM. */
int llr_bucket_batches(size_t n, int B, llr_rng *rng, uint32_t (*key)(const void *ctx, int32_t item), const void *ctx,
                       int32_t *idx, size_t *first, size_t *nbatches);

/* lmpos.c: for the language models that predict every token from its
 * own context (fflm, loglm; mrf reads its stream here too).  The
 * features stream at path (name in messages) and its sentences (one
 * with an automaton background refused, LLR_EINVAL: these families
 * would ignore it), with a context of order - 1 words no
 * longer than the longest one (opt: the option that gave order, as
 * messages spell it); a predicted position (the sentence's offset in
 * the corpus ids, -1 another rank's; the token's place in it), every one
 * of c (caller frees; NULL: no memory); order[0..n) a shuffled 0..n-1. */
int llr_lm_stream_read(const char *path, const char *name, const char *opt, int order, const llr_train_comm *comm,
                       llr_lexicon **x, llr_lm_corpus *c, llr_err *err);
typedef struct llr_lm_pos {
	int64_t sent;
	int32_t pos;
} llr_lm_pos;
llr_lm_pos *llr_lm_positions(const llr_lm_corpus *c, size_t *n);
void llr_lm_shuffle(size_t *order, size_t n, llr_rng *r);
/* The end of such a family's training setup: rc is the outcome of
 * fitting the resumed model (resume, its path) to the stream's lexicon,
 * or of making a new model over it (resume NULL); an error is said again
 * naming the stream sname and the resumed model.  Then the validation
 * text (valid, NULL none) read over lex into *vc. */
int llr_lm_setup_end(int rc, const char *resume, const char *sname, const char *valid, llr_lexicon *lex, llr_lm_corpus *vc,
                     llr_err *err);
/* LLR_EINVAL, saying why: --output loglinear asked of a stream whose
 * words have no features (phi their identities alone). */
int llr_lm_featureless(llr_err *err);

#endif
