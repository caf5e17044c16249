/*
 * train.h - train's side of the library's training driver (run.c);
 * CLI-only, not libllrnn API.  The options, the choice of the family and
 * its setup are the library's (llr_train_args, llr_train_build); train.c
 * parses the command line into them.
 */
#ifndef LLR_TRAIN_H
#define LLR_TRAIN_H

#include <signal.h>
#include <stdint.h>

#include "llrnn.h"
#include "dist.h"

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

/* The SIGINT and SIGTERM handler (a second signal kills) and the flag
 * it sets to the signal; train_run installs it, and an estimating
 * family that saves on a signal asks for it (llr_train_args_on_signal). */
void train_catch_signals(void);
const volatile sig_atomic_t *train_signal_flag(void);

/* lock.c: hold MODEL.lock for the run, or stop (status 1) naming the
 * other train that holds it. */
void train_lock_model(const char *model);

#endif
