/*
 * dist.c - train --distributed over MPI (dist.h): start and
 * stop, the per-step gradient sum (MPI_Allreduce), and the agreements on
 * rank 0's decisions.  Without LLR_HAVE_MPI it is the single-process
 * case, and dist_init refuses --distributed.
 */
#include "dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../cli.h"
#include "llrnn.h"

#ifdef LLR_HAVE_MPI
#include <mpi.h>

/* At exit: MPI still running means this rank did not end normally
 * (cli_die, a usage error, a write error): abort the job with the rank's
 * exit status (1, or 2 for a usage error), so no rank waits forever in a
 * reduction this one will never join. */
static void abort_job(int status, void *arg)
{
	int fin = 1;
	MPI_Finalized(&fin);
	if (fin)
		return;
	/* The message this rank printed goes to mpirun through a pipe; the
	 * abort kills the daemons that forward it, so give it a second first
	 * (the job is ending anyway; a loaded machine forwards slowly). */
	fflush(stderr);
	nanosleep(&(struct timespec){1, 0}, NULL);
	MPI_Abort(MPI_COMM_WORLD, status ? status : 1);
}

static void comm_reduce_step(void *ctx, float *g, size_t n, llr_train_sums *s)
{
	dist_reduce_step(ctx, g, n, s);
}

static double comm_bcast_f64(void *ctx, double v)
{
	return dist_bcast_double(ctx, v);
}

static int comm_any(void *ctx, int flag)
{
	return dist_any(ctx, flag);
}

static void comm_sum_i64(void *ctx, int64_t *v, size_t n)
{
	dist_sum_i64(ctx, v, n);
}

static void comm_bcast_i32(void *ctx, int32_t *v, size_t n)
{
	dist_bcast_i32(ctx, v, n);
}

static int comm_same(void *ctx, uint64_t h)
{
	return dist_same(ctx, h);
}

void dist_init(train_dist *d, int want)
{
	*d = (train_dist){0, 0, 1, {.size = 1}};
	if (!want)
		return;
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
		cli_die("--distributed: MPI_Init failed");
	on_exit(abort_job, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &d->size);
	d->on = 1;
	d->comm = (llr_train_comm){
	    .on = 1,
	    .rank = d->rank,
	    .size = d->size,
	    .ctx = d,
	    .reduce_step = comm_reduce_step,
	    .bcast_f64 = comm_bcast_f64,
	    .any = comm_any,
	    .sum_i64 = comm_sum_i64,
	    .bcast_i32 = comm_bcast_i32,
	    .same = comm_same,
	};
}

void dist_finish(train_dist *d)
{
	if (!d->on)
		return;
	MPI_Finalize();
}

void dist_reduce_step(const train_dist *d, float *g, size_t n, dist_step *s)
{
	if (!d->on)
		return;
	if (n > (size_t)INT32_MAX)
		cli_die("--distributed: %zu parameters: more than MPI can reduce in one call", n);
	MPI_Allreduce(MPI_IN_PLACE, g, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	double sums[2] = {s->nll, (double)s->ntok};
	MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	s->nll = sums[0];
	s->ntok = (int64_t)sums[1];
	int flags[2] = {s->signal, s->time_up};
	MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	s->signal = flags[0];
	s->time_up = flags[1];
}

double dist_bcast_double(const train_dist *d, double v)
{
	if (d->on)
		MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	return v;
}

int dist_any(const train_dist *d, int flag)
{
	if (d->on)
		MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return flag;
}

static int count_int(size_t n)
{
	if (n > (size_t)INT32_MAX)
		cli_die("--distributed: %zu values: more than MPI sends in one call", n);
	return (int)n;
}

void dist_sum_i64(const train_dist *d, int64_t *v, size_t n)
{
	if (d->on)
		MPI_Allreduce(MPI_IN_PLACE, v, count_int(n), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

void dist_bcast_i32(const train_dist *d, int32_t *v, size_t n)
{
	if (d->on)
		MPI_Bcast(v, count_int(n), MPI_INT32_T, 0, MPI_COMM_WORLD);
}

int dist_same(const train_dist *d, uint64_t h)
{
	if (!d->on)
		return 1;
	uint64_t lo = h, hi = h;
	MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
	return lo == hi;
}

#else

void dist_init(train_dist *d, int want)
{
	*d = (train_dist){0, 0, 1, {.size = 1}};
	if (want)
		cli_die("--distributed: this train was built without MPI (install libopenmpi-dev and rebuild)");
}

void dist_finish(train_dist *d)
{
}

void dist_reduce_step(const train_dist *d, float *g, size_t n, dist_step *s)
{
}

double dist_bcast_double(const train_dist *d, double v)
{
	return v;
}

int dist_any(const train_dist *d, int flag)
{
	return flag;
}

void dist_sum_i64(const train_dist *d, int64_t *v, size_t n)
{
}

void dist_bcast_i32(const train_dist *d, int32_t *v, size_t n)
{
}

int dist_same(const train_dist *d, uint64_t h)
{
	return 1;
}

#endif
