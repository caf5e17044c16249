/*
 * blas.c - the BLAS seam: the only file that calls cblas_* or openblas_*.
 *
 * Row-major single-precision GEMM for the dense layers, double-precision
 * GEMM and GEMV for the chain MRF's bound, and the OpenBLAS thread
 * count.  Everything else in lib/ reaches BLAS through here, so a
 * different BLAS (or none) means changing this file alone.  Not here: the
 * sparse Phi products and the softmax, which are hand-written loops in
 * loglinear.c.
 *
 * The fixed order (llr_blas_set_fixed_order): GEMM by a kernel of our own
 * that sums every element of C over k = 0 .. K-1 in that order, from 0,
 * then scales it, whatever M, N, the element's place in the matrix or
 * the thread count.  OpenBLAS's bits depend on all of these (measured on
 * 0.3.21): its kernels sum the rows left over after whole blocks (after
 * pairs of rows, or fours of columns, with the SSE3 kernels) in another
 * order, its Haswell and Zen kernels sum a row in one of two orders by
 * its place modulo 12 in the call, and two threads can change the blocks; so
 * the same row of A gives bits that depend on the rows that came with
 * it, and score needs them not to.  The kernel keeps a block of C in vector
 * registers (each lane its own element, so the order stays fixed).  On
 * the products of scoring (one thread, CPU time, tests/unit/test_blas.c
 * for the bits) it runs at 2-4x the speed of OpenBLAS 0.3.21's SSE3
 * kernels, which it picks on CPUs it does not know, about as fast as its
 * Haswell kernels, and at 0.55-0.85x its AVX-512 ones on large products.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "nn.h"

/* Set once, before any thread of ours starts (llr_blas_set_fixed_order). */
static int fixed_order;

void llr_blas_set_fixed_order(int on)
{
	fixed_order = on != 0;
}

/* The fixed-order kernel.  A block of C is VL wide along the vector
 * side (one vector of VL floats per row of the block) and MR long along
 * the broadcast side; every element keeps its own accumulator, from 0,
 * into which acc += s * p is added for k = 0 .. K-1 (one fused
 * multiply-add where the target has it, else a multiply then an add, the
 * same in every lane), then alpha acc + beta C is stored.  Which side is
 * vectorised, how C is tiled and which elements share a call never
 * change that sequence, so the bits of an element depend on its row of
 * op(A), its column of op(B), K, alpha and beta only.
 *
 * The vector side is read as panels: K rows of VL consecutive floats,
 * straight from the matrix when it is laid out that way, otherwise
 * packed (and zero-padded past its end) into a work buffer. */
#define VL 16
#define MR 6
/* acc += s * p as one fused multiply-add where the target has one (the
 * x86-64-v3 and v4 clones): ISO C mode leaves GCC's contraction off.
 * Every sum of the kernel is written acc += s * p and built with this, so
 * all of them are fused, or (baseline x86-64) none. */
#if defined(__GNUC__) && !defined(__clang__)
#define FO_FMA __attribute__((optimize("fp-contract=fast")))
#else
#define FO_FMA
#endif
typedef float vfl __attribute__((vector_size(VL * sizeof(float))));
typedef float vflu __attribute__((vector_size(VL * sizeof(float)), aligned(sizeof(float))));

/* One side of the product as the kernel sees it: element (r, k) of the
 * broadcast side is s[r * sr + k * sk]. */
typedef struct side {
	const float *s;
	size_t sr, sk;
} side;

/* out = alpha acc + beta c, or alpha acc when beta is 0 (c is not read:
 * it may hold anything, NaN included).  Inlined everywhere, so every
 * store of the kernel computes it the same way. */
static inline __attribute__((always_inline)) void fo_finish(vfl *out, const vfl *acc, const vfl *c, float alpha, float beta)
{
	if (beta == 0.0f)
		*out = alpha * *acc;
	else
		*out = alpha * *acc + beta * *c;
}

/* acc[r] (r < MR) = sum_k s(row[r], k) * p[k * lp .. + VL), in k order;
 * row[] may repeat a row (a block shorter than MR). */
static inline __attribute__((always_inline)) void fo_micro(int K, const float *const *row, size_t sk, const float *p, size_t lp, vfl acc[MR])
{
	vfl c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0};
	const float *r0 = row[0], *r1 = row[1], *r2 = row[2], *r3 = row[3], *r4 = row[4], *r5 = row[5];
	for (int k = 0; k < K; k++) {
		vfl b = *(const vflu *)(p + (size_t)k * lp);
		size_t o = (size_t)k * sk;
		c0 += r0[o] * b;
		c1 += r1[o] * b;
		c2 += r2[o] * b;
		c3 += r3[o] * b;
		c4 += r4[o] * b;
		c5 += r5[o] * b;
	}
	acc[0] = c0, acc[1] = c1, acc[2] = c2, acc[3] = c3, acc[4] = c4, acc[5] = c5;
}

/* acc[q] (q < NP) = sum_k s(row, k) * panel q's row k, in k order: one
 * row of C against NP panels, for a product of one row, where the six
 * rows of fo_micro would be one row six times, each sum waiting on the
 * adds before it. */
#define NP 4
static inline __attribute__((always_inline)) void fo_micro_row(int K, const float *row, size_t sk, const float *const *p, size_t lp, vfl acc[NP])
{
	vfl c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
	const float *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
	for (int k = 0; k < K; k++) {
		float a = row[(size_t)k * sk];
		size_t o = (size_t)k * lp;
		c0 += a * *(const vflu *)(p0 + o);
		c1 += a * *(const vflu *)(p1 + o);
		c2 += a * *(const vflu *)(p2 + o);
		c3 += a * *(const vflu *)(p3 + o);
	}
	acc[0] = c0, acc[1] = c1, acc[2] = c2, acc[3] = c3;
}

/* Stores a block's row r0 + r, panel q of acc: alpha acc + beta D. */
static inline __attribute__((always_inline)) void fo_store(const vfl *acc, int nv, int q, float alpha, float beta, float *d, size_t dv)
{
	int nvv = LLR_MIN(VL, nv - q * VL);
	vfl c = {0}, o;
	if (dv == 1 && nvv == VL) {
		if (beta != 0.0f)
			c = *(vflu *)d;
		fo_finish(&o, acc, &c, alpha, beta);
		*(vflu *)d = o;
		return;
	}
	if (beta != 0.0f)
		for (int v = 0; v < nvv; v++)
			c[v] = d[(size_t)v * dv];
	fo_finish(&o, acc, &c, alpha, beta);
	for (int v = 0; v < nvv; v++)
		d[(size_t)v * dv] = o[v];
}

/* D (nb x nv) = alpha S P + beta D, where S (nb x K) is the broadcast
 * side, P (K x nv) the vector side: panel q (columns q VL .. q VL + VL-1
 * of P) starts at pan + q * pstep, k rows lp apart; D's element (r, v) is
 * at D[r * dr + v * dv].  rows_outer: loop over blocks of S outside the
 * panels (S large, P small enough to stay in cache), else inside. */
LLR_CLONES LLR_VECTORIZE FO_FMA static void fo_run(int nb, int nv, int K, float alpha, side S, const float *pan, size_t pstep, size_t lp, float beta, float *D, size_t dr, size_t dv, int rows_outer)
{
	int nbk = (nb + MR - 1) / MR, npn = (nv + VL - 1) / VL;
	if (nb == 1) {
		for (int q0 = 0; q0 < npn; q0 += NP) {
			const float *p[NP];
			for (int q = 0; q < NP; q++)
				p[q] = pan + (size_t)LLR_MIN(q0 + q, npn - 1) * pstep;
			vfl acc[NP];
			fo_micro_row(K, S.s, S.sk, p, lp, acc);
			for (int q = 0; q < NP && q0 + q < npn; q++)
				fo_store(&acc[q], nv, q0 + q, alpha, beta, D + (size_t)(q0 + q) * VL * dv, dv);
		}
		return;
	}
	for (int outer = 0; outer < (rows_outer ? nbk : npn); outer++)
		for (int inner = 0; inner < (rows_outer ? npn : nbk); inner++) {
			int ib = rows_outer ? outer : inner, q = rows_outer ? inner : outer;
			int r0 = ib * MR, nr = LLR_MIN(MR, nb - r0);
			const float *row[MR];
			for (int r = 0; r < MR; r++)
				row[r] = S.s + (size_t)(r0 + LLR_MIN(r, nr - 1)) * S.sr;
			vfl acc[MR];
			fo_micro(K, row, S.sk, pan + (size_t)q * pstep, lp, acc);
			for (int r = 0; r < nr; r++)
				fo_store(&acc[r], nv, q, alpha, beta, D + (size_t)(r0 + r) * dr + (size_t)q * VL * dv, dv);
		}
}

/* fo_run on threads: the blocks of the broadcast side are shared out in
 * contiguous runs, one a thread, the first on the calling thread.  An
 * element's sum is the same whichever thread computes it, so the split
 * needs no care for the order.  Only for products big enough to pay for
 * starting threads (scoring one line: the output layer, the input
 * projection), with llr_blas_threads() threads; score's groups of lines
 * run with one. */
#define FO_MAX_THREADS 64
#define FO_MIN_WORK ((size_t)1 << 22) /* multiply-adds a thread at least */
typedef struct fo_job {
	int nb, nv, K, rows_outer;
	float alpha, beta;
	side S;
	const float *pan;
	size_t pstep, lp, dr, dv;
	float *D;
} fo_job;

static void *fo_job_run(void *p)
{
	const fo_job *j = p;
	fo_run(j->nb, j->nv, j->K, j->alpha, j->S, j->pan, j->pstep, j->lp, j->beta, j->D, j->dr, j->dv, j->rows_outer);
	return NULL;
}

static void fo_split(const fo_job *all)
{
	size_t work = (size_t)all->nb * all->nv * all->K;
	int nt = LLR_MIN(llr_blas_threads(), FO_MAX_THREADS);
	nt = (int)LLR_MIN((size_t)nt, work / FO_MIN_WORK);
	nt = LLR_MIN(nt, all->nb / MR);
	if (nt <= 1) {
		fo_job_run((void *)all);
		return;
	}
	fo_job job[FO_MAX_THREADS];
	pthread_t tid[FO_MAX_THREADS];
	int started[FO_MAX_THREADS] = {0};
	int blocks = (all->nb + MR - 1) / MR;
	for (int t = 0; t < nt; t++) {
		int b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
		job[t] = *all;
		job[t].nb = LLR_MIN(b1 * MR, all->nb) - b0 * MR;
		job[t].S.s = all->S.s + (size_t)b0 * MR * all->S.sr;
		job[t].D = all->D + (size_t)b0 * MR * all->dr;
	}
	for (int t = 1; t < nt; t++)
		started[t] = pthread_create(&tid[t], NULL, fo_job_run, &job[t]) == 0;
	fo_job_run(&job[0]);
	for (int t = 1; t < nt; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			fo_job_run(&job[t]);
	}
}

/* Work buffer for packed panels, one per thread (score runs groups of
 * streams on threads of its own); freed at thread exit. */
static _Thread_local float *fo_buf;
static _Thread_local size_t fo_cap;
static pthread_key_t fo_key;
static pthread_once_t fo_once = PTHREAD_ONCE_INIT;

static void fo_key_init(void)
{
	pthread_key_create(&fo_key, free);
}

static float *fo_work(size_t n)
{
	if (n <= fo_cap)
		return fo_buf;
	pthread_once(&fo_once, fo_key_init);
	float *p = realloc(fo_buf, n * sizeof *p);
	if (!p)
		return NULL;
	fo_buf = p;
	fo_cap = n;
	pthread_setspecific(fo_key, p);
	return p;
}

/* P (K x nv, column v at v, row k at e(k, v) = x[k * xk + v * xv]) into
 * panels of VL columns, K x VL each, zeros past nv. */
static void fo_pack(int K, int nv, const float *x, size_t xk, size_t xv, float *P)
{
	for (int v0 = 0; v0 < nv; v0 += VL) {
		int n = LLR_MIN(VL, nv - v0);
		float *q = P + (size_t)v0 * K;
		for (int k = 0; k < K; k++, q += VL) {
			int v = 0;
			for (; v < n; v++)
				q[v] = x[(size_t)k * xk + (size_t)(v0 + v) * xv];
			for (; v < VL; v++)
				q[v] = 0.0f;
		}
	}
}

/* The same sums element by element, for when the work buffer cannot be
 * had: same order, same finish, slower. */
LLR_CLONES LLR_VECTORIZE FO_FMA static void fo_slow(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			vfl acc = {0}, c = {0};
			for (int k = 0; k < K; k++)
				acc[0] += (transA ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) * (transB ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]);
			float *d = C + (size_t)i * ldc + j;
			if (beta != 0.0f)
				c[0] = *d;
			vfl o;
			fo_finish(&o, &acc, &c, alpha, beta);
			*d = o[0];
		}
}

/* llr_gemm in the fixed order.  The vector side is the columns of C
 * (op(B)) unless only op(A) can be read without packing a large op(B),
 * as for X W^T with a big W: then the rows of C are, and C is written
 * across. */
static void fixed_gemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	/* floats to pack with each choice: op(B) K x N unless it is B as is */
	size_t packB = transB ? (size_t)K * N : (N % VL ? (size_t)K * VL : 0);
	size_t packA = !transA ? (size_t)K * M : (M % VL ? (size_t)K * VL : 0);
	if (packA < packB) { /* C^T = op(B)^T op(A)^T: rows of C in the vector */
		side S = transB ? (side){B, (size_t)ldb, 1} : (side){B, 1, (size_t)ldb};
		size_t np = (size_t)(M + VL - 1) / VL * VL;
		const float *pan = A;
		size_t pstep = VL, lp = (size_t)lda;
		if (!transA || M % VL) {
			float *w = fo_work(np * K);
			if (!w) {
				fo_slow(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
				return;
			}
			fo_pack(K, M, A, transA ? (size_t)lda : 1, transA ? 1 : (size_t)lda, w);
			pan = w, pstep = (size_t)VL * K, lp = VL;
		}
		fo_split(&(fo_job){N, M, K, (size_t)N * K > np * K, alpha, beta, S, pan, pstep, lp, 1, (size_t)ldc, C});
		return;
	}
	side S = transA ? (side){A, 1, (size_t)lda} : (side){A, (size_t)lda, 1};
	size_t np = (size_t)(N + VL - 1) / VL * VL;
	const float *pan = B;
	size_t pstep = VL, lp = (size_t)ldb;
	if (transB || N % VL) {
		float *w = fo_work(np * K);
		if (!w) {
			fo_slow(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
			return;
		}
		fo_pack(K, N, B, transB ? 1 : (size_t)ldb, transB ? (size_t)ldb : 1, w);
		pan = w, pstep = (size_t)VL * K, lp = VL;
	}
	fo_split(&(fo_job){M, N, K, (size_t)M * K > np * K, alpha, beta, S, pan, pstep, lp, (size_t)ldc, 1, C});
}

void llr_gemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	if (M <= 0 || N <= 0)
		return;
	if (K <= 0) {
		/* BLAS leaves C alone when K = 0 only if beta = 1; be explicit. */
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
				C[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[(size_t)i * ldc + j];
		return;
	}
	if (fixed_order) {
		fixed_gemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
		return;
	}
	cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Double precision, row-major, OpenBLAS's kernels (no fixed order): the
 * chain MRF's transfer matrices (lib/family/mrf/bound.c). */
void llr_dgemm(int transA, int transB, int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
               double beta, double *C, int ldc)
{
	cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B,
	            ldb, beta, C, ldc);
}

void llr_dgemv(int trans, int M, int N, double alpha, const double *A, int lda, const double *x, double beta, double *y)
{
	cblas_dgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, M, N, alpha, A, lda, x, 1, beta, y, 1);
}

#if defined(__SANITIZE_THREAD__)
#define LLR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LLR_TSAN 1
#endif
#endif

#ifdef LLR_TSAN
/* Under ThreadSanitizer OpenBLAS runs every GEMM on the calling thread.
 * Its thread pool hands work over by spinning on plain flags, which TSan
 * cannot see (OpenBLAS is not instrumented), so each split GEMM was
 * reported as a race between sgemm_* on OpenBLAS's thread and our reads
 * of its result.  The count asked for is still what llr_blas_threads
 * returns, so our own threads (the log-linear workers, the score groups)
 * run as many as without TSan, and TSan checks them. */
static _Atomic int tsan_threads = 1;

__attribute__((constructor)) static void tsan_blas_init(void)
{
	tsan_threads = openblas_get_num_threads();
	openblas_set_num_threads(1);
}
#endif

void llr_blas_set_threads(int n)
{
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (int)c : 1;
	}
#ifdef LLR_TSAN
	tsan_threads = n;
	n = 1;
#endif
	openblas_set_num_threads(n);
}

/* OpenBLAS's BUFFER_SIZE on x86_64 (128 MiB, 32 << 22) and a margin for
 * its alignment; one buffer a thread. */
#define BLAS_BUFFER (((size_t)128 << 20) + ((size_t)1 << 20))
#define WARM 128 /* over OpenBLAS's small-matrix path, which takes no buffer */

int llr_blas_reserve(llr_err *err)
{
	size_t n = (size_t)llr_blas_threads();
	void *p = malloc(n * BLAS_BUFFER);
	if (!p)
		return llr_err_set(err, LLR_ENOMEM, "out of memory: BLAS needs %zu MiB of work space (%zu thread%s)", n * (BLAS_BUFFER >> 20), n, n == 1 ? "" : "s");
	free(p);
	float *m = calloc((size_t)3 * WARM * WARM, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	llr_gemm(0, 0, WARM, WARM, WARM, 1.0f, m, WARM, m + WARM * WARM, WARM, 0.0f, m + 2 * WARM * WARM, WARM);
	free(m);
	return LLR_OK;
}

int llr_blas_threads(void)
{
#ifdef LLR_TSAN
	int n = tsan_threads;
#else
	int n = openblas_get_num_threads();
#endif
	return n > 0 ? n : 1;
}

/* OpenBLAS picks its kernels by the CPU's family and model; 0.3.21
 * (Debian 12) does not know the CPUs released after it (a Sapphire Rapids
 * Xeon, model 0x8f, among them) and falls back to its generic SSE3
 * kernels, "Prescott".  Measured on such a CPU (2026-11-30, one thread):
 * the LL-RNN of UD French trained at a third of the CPU time with the
 * SkylakeX kernels, and PyTorch's feed-forward LM, which loads the same
 * library, 4.7 times faster.  OpenBLAS reads OPENBLAS_CORETYPE when it is
 * loaded, before any of our code runs, so this only names the kernels;
 * the tools set the variable and execute themselves again (cli.c). */
const char *llr_blas_better_core(void)
{
#if defined(__x86_64__) || defined(__i386__)
	const char *core = openblas_get_corename();
	if (!core || strcmp(core, "Prescott"))
		return NULL;
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
#endif
	return NULL; /* elsewhere OpenBLAS's own choice stands */
}
