/*
 * dist.h - train --distributed: synchronous data-parallel training
 * over MPI, CLI-only.  Every rank runs the same epoch loop on the same
 * weights; rank r holds the sentences whose index is r modulo the number
 * of ranks, trains on its share of each batch, and the gradients, losses
 * and token counts are summed across ranks before the one optimiser step
 * every rank takes.  Rank 0 alone validates, logs and writes files; the
 * decisions every rank must take alike (stop, signals, the validation
 * figure) are agreed through these calls.  Built without MPI, train_dist
 * still compiles: a single process is rank 0 of 1, and asking for
 * --distributed is an error naming the missing library.
 */
#ifndef LLR_TRAIN_DIST_H
#define LLR_TRAIN_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "llrnn.h"

typedef struct train_dist {
	int on;         /* running under --distributed */
	int rank, size; /* 0 and 1 when not */
	llr_train_comm comm; /* the same for the library's training driver */
} train_dist;

/* Start MPI when want (exits 1 when built without it, or when MPI fails
 * to start).  From then on an exit other than through dist_finish aborts
 * every rank, so none waits forever for a rank that died. */
void dist_init(train_dist *d, int want);
/* Shut MPI down before a normal exit (a no-op when not distributed). */
void dist_finish(train_dist *d);

/* Does this rank hold sentence i? */
static inline int dist_owns(const train_dist *d, int64_t i)
{
	return !d->on || i % d->size == d->rank;
}

/* One step's sums across ranks, in place: the gradient g[0..n), the
 * loss and token count, and flags (a flag is set when any rank set it). */
typedef llr_train_sums dist_step;
void dist_reduce_step(const train_dist *d, float *g, size_t n, dist_step *s);

/* Rank 0's value, on every rank. */
double dist_bcast_double(const train_dist *d, double v);
int dist_any(const train_dist *d, int flag);

/* In place: the sums across ranks of v[0..n); rank 0's v[0..n) on every
 * rank. */
void dist_sum_i64(const train_dist *d, int64_t *v, size_t n);
void dist_bcast_i32(const train_dist *d, int32_t *v, size_t n);
/* 1 when every rank passed the same h, 0 otherwise (on every rank). */
int dist_same(const train_dist *d, uint64_t h);

#endif
