/*
 * train.h - train's parsed command line and its model families; CLI-only,
 * not libllrnn API.  main (train.c) parses the options into a train_opts,
 * picks the family and hands the options to that family's entry point.
 * A new family (n-gram, encoder-decoder, discourse encoder, character
 * input) adds its value to the enum, its options to train_opts and
 * parse_opts, its entry point below (in tools/train_<family>.c) and one
 * case to the dispatch in main.
 */
#ifndef LLR_TRAIN_H
#define LLR_TRAIN_H

#include <stdint.h>

#include "llrnn.h"
#include "dist.h"

/* The model families train knows. */
enum {
	TRAIN_LM,     /* LSTM language model over a featurize stream, softmax or log-linear output (train.c) */
	TRAIN_NGRAM,  /* backoff n-gram model, modified Kneser-Ney, from token files (ngram.c) */
	TRAIN_DISC,   /* discourse sentence encoder over disc-pairs output (disc.c) */
	TRAIN_ENCDEC, /* encoder-decoder with attention over a featurize --source stream (encdec.c) */
};

/* The options of the families trained by gradient steps (the language
 * model, train.c; the encoder-decoder, encdec.c), in both option
 * tables as TRAIN_OPTIONS; a family's own ids start at O_TRAIN_OWN. */
enum {
	O_OUTPUT = 256,
	O_LAYERS,
	O_HIDDEN,
	O_EMBED,
	O_DROPOUT,
	O_BATCH,
	O_MAXLEN,
	O_OPTIM,
	O_LR,
	O_EPS,
	O_CLIP,
	O_MINIMPR,
	O_VALID,
	O_PATIENCE,
	O_EPOCHS,
	O_MAXTIME,
	O_THREADS,
	O_LOG,
	O_PROGRESS,
	O_RESUME,
	O_MAXTOKENS,
	O_INIT,
	O_DISTRIBUTED,
	O_TRAIN_OWN = 320,
};
#define TRAIN_OPTIONS                                                    \
	{"quiet", no_argument, NULL, 'q'}, {"seed", required_argument, NULL, 's'},                          \
	    {"output", required_argument, NULL, O_OUTPUT}, {"layers", required_argument, NULL, O_LAYERS},   \
	    {"hidden", required_argument, NULL, O_HIDDEN}, {"embed", required_argument, NULL, O_EMBED},     \
	    {"dropout", required_argument, NULL, O_DROPOUT}, {"batch", required_argument, NULL, O_BATCH},   \
	    {"max-len", required_argument, NULL, O_MAXLEN}, {"optim", required_argument, NULL, O_OPTIM},    \
	    {"lr", required_argument, NULL, O_LR}, {"eps", required_argument, NULL, O_EPS},                 \
	    {"clip", required_argument, NULL, O_CLIP}, {"min-improvement", required_argument, NULL, O_MINIMPR}, \
	    {"valid", required_argument, NULL, O_VALID}, {"patience", required_argument, NULL, O_PATIENCE},  \
	    {"epochs", required_argument, NULL, O_EPOCHS}, {"max-time", required_argument, NULL, O_MAXTIME}, \
	    {"max-tokens", required_argument, NULL, O_MAXTOKENS},                                           \
	    {"threads", required_argument, NULL, O_THREADS}, {"log", required_argument, NULL, O_LOG},       \
	    {"progress", required_argument, NULL, O_PROGRESS}, {"resume", required_argument, NULL, O_RESUME}, \
	    {"init", required_argument, NULL, O_INIT}, {"distributed", no_argument, NULL, O_DISTRIBUTED}
/* The LM family's character-aware input and factored outputs
 * (lmx.c), parsed into the fields of the new net's configuration
 * they set (input, char_*, highway; tree_depth, tree_arity, which
 * --classes sets for a classes output, tree_cap). */
typedef struct train_lmx {
	llr_net_config net;
	int sum;         /* --combine sum: with word+chars, LLR_IN_SUM (lmx_check) */
	int tree_update; /* batches between re-learnings of the tree */
	int set_input, set_chars, set_tree, set_classes;
} train_lmx;

/* Their long options (ids from 512 on, clear of train.c's). */
enum {
	O_INPUT = 512,
	O_COMBINE,
	O_CHAR_EMBED,
	O_CHAR_FILTERS,
	O_HIGHWAY,
	O_CLASSES,
	O_TREE_DEPTH,
	O_TREE_ARITY,
	O_TREE_CAP,
	O_TREE_UPDATE,
};
#define LMX_OPTIONS                                                    \
	{"input", required_argument, NULL, O_INPUT},                   \
	    {"combine", required_argument, NULL, O_COMBINE},           \
	    {"char-embed", required_argument, NULL, O_CHAR_EMBED},     \
	    {"char-filters", required_argument, NULL, O_CHAR_FILTERS}, \
	    {"highway", required_argument, NULL, O_HIGHWAY},           \
	    {"classes", required_argument, NULL, O_CLASSES},           \
	    {"tree-depth", required_argument, NULL, O_TREE_DEPTH},     \
	    {"tree-arity", required_argument, NULL, O_TREE_ARITY},     \
	    {"tree-cap", required_argument, NULL, O_TREE_CAP},         \
	{                                                              \
		"tree-update", required_argument, NULL, O_TREE_UPDATE  \
	}

/* When training stops and how the learning rate changes (limits.c):
 * --epochs, --patience, --min-improvement, --clip, --max-time,
 * --max-tokens and the --lr-decay schedule, as the library's driver takes
 * them (llr_train_limits), with the mask of those given (LLR_LIM_*). */
enum {
	O_LR_DECAY = 640,
	O_LR_PATIENCE,
	O_LR_DECAYS,
};
#define SCHED_OPTIONS                                                \
	{"lr-decay", required_argument, NULL, O_LR_DECAY},           \
	    {"lr-patience", required_argument, NULL, O_LR_PATIENCE}, \
	{                                                            \
		"lr-decays", required_argument, NULL, O_LR_DECAYS    \
	}
void lim_defaults(llr_train_limits *l);
/* 1 if option c (with its argument) was one of them. */
int lim_parse_opt(llr_train_limits *l, unsigned *given, int c, const char *arg, const char *usage);
/* --resume: the model's values (meta m of the file path) for those not
 * given; exits 1 on bad ones. */
void lim_resume(llr_train_limits *l, unsigned given, const llr_meta *m, const char *path);

typedef struct train_opts {
	int family; /* TRAIN_* */
	/* The command line, for a family that parses its own options
	 * (TRAIN_ENCDEC: parse_opts sets only family, argc and argv). */
	int argc;
	char **argv;
	const char *out, *stream, *valid, *log, *resume;
	char **more; /* further streams, read after stream as one corpus */
	int nmore;
	int output; /* 0 = by the stream */
	int layers, hidden, embed;
	double dropout;
	int batch, max_len;
	int optim;
	double lr; /* 0 = the optimiser's default */
	double eps; /* RMSprop's and Adam's eps, 0 = the default */
	llr_train_limits lim; /* --epochs, --patience, --clip ... (limits.c) */
	unsigned lim_given;   /* LLR_LIM_*: those given */
	int init;           /* LLR_INIT_* */
	int set_init;
	int closed; /* --closed: no open vocabulary (llr_lm_open_new) */
	int no_bias_fit; /* --no-bias-fit: open training keeps the --init scheme's out/b */
	uint64_t seed;
	int threads;
	int distributed; /* --distributed: one rank of an MPI job (dist.h) */
	int progress;
	int quiet;
	int verbose; /* -v: notes (an archive without checksums) */
	/* which were given on the command line (for --resume) */
	int set_output, set_layers, set_hidden, set_embed, set_dropout, set_batch;
	int set_max_len, set_optim, set_lr, set_seed;
	/* TRAIN_NGRAM: the order, option values as given (checked by
	 * train_ngram), the token files */
	int ngram;
	int not_ngram; /* the first option given that n-gram estimation has no use for */
	const char *prune, *memory;
	const char *ngram_format; /* --format trie|probing, or NULL */
	const char *convert;      /* --convert MODEL, or NULL */
	int discount_fallback;
	char **inputs;
	int ninputs;
	/* TRAIN_DISC */
	int task;             /* LLR_TASK_* mask; nonzero selects the family */
	int encoder;          /* LLR_SENC_* */
	int set_encoder;      /* --encoder given */
	const char *features; /* featurize stream: vocabulary and psi */
	double word_dropout;  /* --word-dropout */
	int set_word_dropout;
	long long task_cap;   /* --task-cap: examples of a task an epoch; 0: all */
	int set_task_cap;
	int next_batch_negatives; /* --next-negatives batch */
	int set_next_negatives;
	train_lmx x;
} train_opts;

/* lmx.c.  --output's value (loglinear or ll, softmax, tree,
 * classes) as LLR_OUT_*, 0 if unknown; and back. */
int lmx_parse_output(const char *s);
const char *lmx_output_name(int output);
void lmx_defaults(train_lmx *x);
/* 1 if option c (with its argument) was one of LMX_OPTIONS. */
int lmx_parse_opt(train_opts *o, int c, const char *arg, const char *usage);
/* Usage errors for options that do not go together (after parsing);
 * then --input word+chars --combine sum's input, LLR_IN_SUM. */
void lmx_check(train_opts *o, const char *usage);
/* Each family's entry point trains from the parsed options and returns
 * main's exit status (errors exit through cli_die). */
int train_ngram(const train_opts *o);

/* For the families (train.c): the usage text; a usage error when an
 * option given (given) differs from the resumed model's meta key
 * (llr_meta_num reads a number of the meta). */

extern const char *const train_usage;
void train_fixed_opt(int given, const char *opt, const llr_meta *m, const char *key, const char *want);
/* --resume: a probability the model fixes (--dropout, --word-dropout):
 * *val becomes the model's key (have); a different opt given is a usage
 * error. */
void train_resume_prob(int given, const char *opt, const char *key, double *val, double have);
/* The run's limits and schedule as the library's driver takes them;
 * into a model's meta (patience, max_epochs, clip, min_improvement, then
 * the schedule's keys); on --resume, back from it for those not given,
 * the optimiser checked and --lr applied. */
void train_limits_meta(const train_opts *o, llr_meta *m);
void train_resume_limits(train_opts *o, const llr_meta *m, llr_train_state *ts);
/* The optimiser of every family: a new model's settings (kind's
 * defaults, then --lr and --eps where given, 0 where not); on --resume,
 * --lr and --eps replacing the saved ones (--eps for SGD is a usage
 * error, under the family's usage text); and its meta keys optim and
 * eps (none for SGD), from the optimiser itself. */
void train_optim_config(llr_optim_config *oc, int kind, double lr, double eps);
void train_optim_resume(const char *usage_text, llr_train_state *ts, double lr, double eps);
void train_optim_meta(llr_meta *m, const llr_optim *opt);

/* run.c: train job from ts with the library's driver (o: the
 * file, log, limits; its hooks are set here), showing its events on
 * stderr unless quiet; after a signal the run is saved and train exits
 * 128 + the signal, after an error 1. */
typedef struct train_run_opts {
	int quiet;
	int progress;         /* --progress: off a terminal, a step line every n steps */
	int64_t train_tokens; /* for the epoch 0 line */
	/* A family's own line after each epoch's (NULL: none). */
	void (*epoch_note)(void *ctx, const llr_train_event *ev);
	void *note_ctx;
} train_run_opts;
void train_run(llr_train_job *job, llr_train_state *ts, llr_train_opts *o, const train_run_opts *r, train_dist *dist);

/* train --task: tools/train/disc.c */
int train_disc(train_opts *o);
/* encdec.c: 1 if the command line trains an encoder-decoder (an
 * option only it has, a --resume model of family encdec, or a stream made
 * by featurize --source); reads only those files' meta. */
int train_encdec_wanted(int argc, char **argv);
/* Parses o->argc, o->argv itself (train(1), "Encoder-decoder"). */
int train_encdec(const train_opts *o);

#endif
