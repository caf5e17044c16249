/*
 * ff_gemm.c - GFLOP per CPU-second of OpenBLAS's sgemm on the shapes of
 * one bench/ff-speed training batch (the output layer: V = 17,222 rows,
 * H = 256 hidden units, B = 128 positions), beside a square GEMM of the
 * same size class as the attainable rate of this core.  Thread CPU time,
 * not wall time, so a loaded machine disturbs it less.  A measuring
 * tool for bench/README.md, not part of llrnn:
 *
 *   cc -O2 -o ff_gemm bench/ff_gemm.c $(pkg-config --cflags --libs openblas)
 *   OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX ./ff_gemm [V H B reps]
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *filled(size_t n)
{
	float *p = malloc(n * sizeof *p);
	if (!p) {
		perror("ff_gemm");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (float)((double)(i % 1000) / 1000.0 - 0.5);
	return p;
}

/* One row-major C (M x N) = op(A) op(B) + beta C, timed over reps; the
 * best of the reps in GFLOP per CPU-second. */
static void run(const char *what, int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc, int reps)
{
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		double t0 = cpu_now();
		cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A,
		            lda, B, ldb, beta, C, ldc);
		double t = cpu_now() - t0;
		best = t < best ? t : best;
	}
	printf("%-34s M=%-6d N=%-6d K=%-6d %8.2f ms %7.1f GFLOP/s\n", what, M, N, K, 1e3 * best, 2.0 * M * N * K / best / 1e9);
}

int main(int argc, char **argv)
{
	int V = argc > 1 ? atoi(argv[1]) : 17222, H = argc > 2 ? atoi(argv[2]) : 256, B = argc > 3 ? atoi(argv[3]) : 128;
	int reps = argc > 4 ? atoi(argv[4]) : 5;
	if (V < 1 || H < 1 || B < 1 || reps < 1) {
		fprintf(stderr, "usage: ff_gemm [V H B reps]\n");
		return 2;
	}
	float *W = filled((size_t)V * H), *X = filled((size_t)B * H), *A = filled((size_t)V * B);
	float *dW = filled((size_t)V * H), *dX = filled((size_t)B * H);
	/* as ffnet.c and dense.c call them: A, dA feature-major (V x B) */
	run("forward A = W X^T (nt)", 0, 1, V, B, H, W, H, X, H, 1.0f, A, B, reps);
	run("dW += dA X (nn)", 0, 0, V, H, B, A, B, X, H, 1.0f, dW, H, reps);
	run("dX = dA^T W (tn)", 1, 0, B, H, V, A, B, W, H, 0.0f, dX, H, reps);
	/* the same products with A, dA position-major (B x V) */
	run("forward A' = X W^T (nt)", 0, 1, B, V, H, X, H, W, H, 1.0f, A, V, reps);
	run("dW += dA'^T X (tn)", 1, 0, V, H, B, A, V, X, H, 1.0f, dW, H, reps);
	run("dX = dA' W (nn)", 0, 0, B, H, V, A, V, W, H, 0.0f, dX, H, reps);
	/* the attainable rate: a square GEMM of about the same flops */
	int S = 1024;
	float *P = filled((size_t)S * S), *Q = filled((size_t)S * S), *R = filled((size_t)S * S);
	run("square (nn)", 0, 0, S, S, S, P, S, Q, S, 0.0f, R, S, reps);
	free(W);
	free(X);
	free(A);
	free(dW);
	free(dX);
	free(P);
	free(Q);
	free(R);
	return 0;
}
