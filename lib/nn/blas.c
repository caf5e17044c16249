/*
 * blas.c - the BLAS seam: the only file that calls cblas_* or openblas_*.
 *
 * Row-major single-precision GEMM for the dense layers, and the OpenBLAS
 * thread count.  Everything else in lib/ reaches BLAS through here, so a
 * different BLAS (or none) means changing this file alone.  Not here: the
 * sparse Phi products and the softmax, which are hand-written loops in
 * loglinear.c.
 */
#include <stdlib.h>
#include <unistd.h>

#include <cblas.h>

#include "nn.h"

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
