/*
 * blas.c - the BLAS seam: the only file that calls cblas_* or openblas_*.
 *
 * Row-major single-precision GEMM for the dense layers, and the OpenBLAS
 * thread count.  Everything else in lib/ reaches BLAS through here, so a
 * different BLAS (or none) means changing this file alone.  Not here: the
 * sparse Phi products and the softmax, which are hand-written loops in
 * loglinear.c.
 *
 * The fixed order (llr_blas_set_fixed_order): GEMM by a loop of our own
 * that sums every element of C over k = 0 .. K-1 in that order, from 0,
 * then scales it, whatever M, N, the element's place in the matrix or
 * the thread count.  OpenBLAS picks its kernels by shape (a row alone
 * goes through GEMV; on some cores a row left over after pairs through
 * another kernel), so the same row of A gives bits that depend on how
 * many rows came with it; score needs them not to.
 */
#include <stdlib.h>
#include <unistd.h>

#include <cblas.h>

#include "nn.h"

/* Set once, before any thread of ours starts (llr_blas_set_fixed_order). */
static int fixed_order;

void llr_blas_set_fixed_order(int on)
{
	fixed_order = on != 0;
}

#define FIX_ROWS 4
#define FIX_COLS 64
#define FIX_DEPTH 64 /* k per tile of a transposed B */

/* C (rows x cols, ldc) = alpha op(A) op(B) + beta C for rows <= FIX_ROWS
 * and cols <= FIX_COLS, op(A) rows x K, op(B) K x cols: element (r, j) is
 * acc = sum_k op(A)(r, k) op(B)(k, j), added up in k order from 0, then
 * alpha acc (+ beta C).  The j loops vectorise across elements, never
 * along k.  A transposed B is copied FIX_DEPTH rows of k at a time. */
LLR_CLONES LLR_VECTORIZE static void fixed_block(int rows, int cols, int K, float alpha, const float *A, int lda, int transA, const float *B, int ldb, int transB, float beta, float *C, int ldc)
{
	float acc[FIX_ROWS][FIX_COLS], tile[FIX_DEPTH][FIX_COLS];
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < cols; j++)
			acc[r][j] = 0.0f;
	for (int k0 = 0; k0 < K; k0 += FIX_DEPTH) {
		int kn = LLR_MIN(FIX_DEPTH, K - k0);
		if (transB)
			for (int j = 0; j < cols; j++)
				for (int k = 0; k < kn; k++)
					tile[k][j] = B[(size_t)j * ldb + (size_t)(k0 + k)];
		for (int k = 0; k < kn; k++) {
			const float *b = transB ? tile[k] : B + (size_t)(k0 + k) * ldb;
			for (int r = 0; r < rows; r++) {
				float a = transA ? A[(size_t)(k0 + k) * lda + r] : A[(size_t)r * lda + (size_t)(k0 + k)];
				for (int j = 0; j < cols; j++)
					acc[r][j] += a * b[j];
			}
		}
	}
	for (int r = 0; r < rows; r++) {
		float *c = C + (size_t)r * ldc;
		if (beta == 0.0f)
			for (int j = 0; j < cols; j++)
				c[j] = alpha * acc[r][j];
		else
			for (int j = 0; j < cols; j++)
				c[j] = alpha * acc[r][j] + beta * c[j];
	}
}

/* llr_gemm in the fixed order, a block of C at a time. */
static void fixed_gemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	for (int i = 0; i < M; i += FIX_ROWS)
		for (int j = 0; j < N; j += FIX_COLS)
			fixed_block(LLR_MIN(FIX_ROWS, M - i), LLR_MIN(FIX_COLS, N - j), K, alpha, transA ? A + i : A + (size_t)i * lda, lda, transA,
			            transB ? B + (size_t)j * ldb : B + j, ldb, transB, beta, C + (size_t)i * ldc + j, ldc);
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
