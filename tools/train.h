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

/* The model families train knows. */
enum {
	TRAIN_LM,     /* LSTM language model over a featurize stream, softmax or log-linear output (train.c) */
	TRAIN_NGRAM,  /* backoff n-gram model, modified Kneser-Ney, from token files (train_ngram.c) */
	TRAIN_DISC,   /* discourse sentence encoder over disc-pairs output (train_disc.c) */
	TRAIN_ENCDEC, /* encoder-decoder with attention over a featurize --source stream (train_encdec.c) */
};

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
	double clip;
	double min_impr;
	int patience;
	int64_t epochs;
	double max_time;    /* seconds, 0 = none */
	int64_t max_tokens; /* training tokens in this run, 0 = none */
	int init;           /* LLR_INIT_* */
	int set_init;
	uint64_t seed;
	int threads;
	int distributed; /* --distributed: one rank of an MPI job (train_dist.h) */
	int progress;
	int quiet;
	/* which were given on the command line (for --resume) */
	int set_output, set_layers, set_hidden, set_embed, set_dropout, set_batch;
	int set_max_len, set_optim, set_lr, set_clip, set_min_impr, set_seed;
	int set_patience, set_epochs;
	/* TRAIN_NGRAM: the order, option values as given (checked by
	 * train_ngram), the token files */
	int ngram;
	const char *prune, *memory;
	int discount_fallback;
	char **inputs;
	int ninputs;
	/* TRAIN_DISC */
	int task;             /* LLR_TASK_* mask; nonzero selects the family */
	int encoder;          /* LLR_SENC_* */
	int set_encoder;      /* --encoder given */
	const char *features; /* featurize stream: vocabulary and psi */
} train_opts;

/* Each family's entry point trains from the parsed options and returns
 * main's exit status (errors exit through cli_die). */
int train_ngram(const train_opts *o);

/* For the families (train.c): the usage text; a usage error when an
 * option given (given) differs from the resumed model's meta key; a
 * number of the meta, or dflt. */
extern const char *const train_usage;
void train_fixed_opt(int given, const char *opt, const llr_meta *m, const char *key, const char *want);
double train_meta_num(const llr_meta *m, const char *key, double dflt);

/* train --task: tools/train_disc.c */
int train_disc(train_opts *o);
/* train_encdec.c: 1 if the command line trains an encoder-decoder (an
 * option only it has, a --resume model of family encdec, or a stream made
 * by featurize --source); reads only those files' meta. */
int train_encdec_wanted(int argc, char **argv);
/* Parses o->argc, o->argv itself (train(1), "Encoder-decoder"). */
int train_encdec(const train_opts *o);

#endif
