/*
 * train.h - private to lib/train: the training driver's parts.  The API
 * is llr_train_run (lib/llrnn.h); the families' side is llr_train_ops
 * (lib/family/family.h).
 */
#ifndef LLR_TRAIN_TRAIN_H
#define LLR_TRAIN_TRAIN_H

#include "family/family.h"

/* schedule.c.  The end-of-epoch bookkeeping given the epoch's
 * validation loss v: a new best (v below the best by more than 1e-4) is
 * copied to best and counted in ts, a stall in ts->bad_epochs; then the
 * decay schedule, or without it SGD's RNNLM schedule, which may restore
 * best into the weights w (n floats; *best_current then 1, as after a new
 * best) and change ts->lr and the optimiser's rate. */
void llr_train_epoch_valid(llr_train_state *ts, const llr_train_limits *l, double v, float *w, float *best, size_t n, int *best_current);
/* The same for an error rate v (llr_train_job.error_rate): any drop is
 * a new best, copied to best, but only a drop by more than min_impr
 * resets ts->bad_epochs; the rate never changes. */
void llr_train_epoch_error(llr_train_state *ts, const llr_train_limits *l, double v, const float *w, float *best, size_t n,
                           int *best_current);

#endif
