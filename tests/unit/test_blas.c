/*
 * test_blas.c - llr_gemm's fixed order (llr_blas_set_fixed_order): every
 * element of C has the same bits whatever else is in the call.  Each
 * product is computed whole, then again as blocks of rows and of columns
 * at other offsets and sizes (which also moves it between the kernel's
 * two orientations, its packed and unpacked panels and its partial
 * blocks), for every transpose, with beta 0 (C not read) and 1.
 */
#include <stdint.h>

#include "llrnn.h"
#include "test.h"

static float *randoms(size_t n, uint32_t *s)
{
	float *p = malloc(n * sizeof *p);
	for (size_t i = 0; i < n; i++) {
		*s = *s * 1103515245u + 12345u;
		p[i] = (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
	}
	return p;
}

/* C (M x N, ldc N) of op(A) op(B), with A and B as stored for the whole
 * product (MX x K or K x MX, NX x K or K x NX), from row i0 and column
 * j0; C starts as c0 (beta 1) or NaN (beta 0). */
static void product(int tA, int tB, int i0, int M, int j0, int N, int K, int MX, int NX, const float *A, const float *B, float beta,
                    const float *c0, float *C)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			C[(size_t)i * N + j] = beta == 0.0f ? NAN : c0[(size_t)(i0 + i) * NX + j0 + j];
	const float *a = tA ? A + i0 : A + (size_t)i0 * K;
	const float *b = tB ? B + (size_t)j0 * K : B + j0;
	llr_gemm(tA, tB, M, N, K, 1.0f, a, tA ? MX : K, b, tB ? K : NX, beta, C, N);
}

static int same_block(const float *C, int i0, int M, int j0, int N, const float *ref, int NX)
{
	for (int i = 0; i < M; i++)
		if (memcmp(C + (size_t)i * N, ref + (size_t)(i0 + i) * NX + j0, (size_t)N * sizeof *C))
			return 0;
	return 1;
}

static void test_fixed_order_blocks(void)
{
	static const int Ks[] = {1, 7, 64, 301}, NXs[] = {5, 40, 700};
	static const int sizes[] = {1, 2, 3, 5, 6, 7, 13, 16, 17, 33};
	const int MX = 90;
	uint32_t s = 11;
	int bad = 0, checked = 0;
	llr_blas_set_fixed_order(1);
	for (int t = 0; t < 4; t++)
		for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
			for (size_t ni = 0; ni < sizeof NXs / sizeof *NXs; ni++)
				for (int bi = 0; bi < 2; bi++) {
					int tA = t & 1, tB = t >> 1, K = Ks[ki], NX = NXs[ni];
					float beta = (float)bi;
					float *A = randoms((size_t)MX * K, &s), *B = randoms((size_t)NX * K, &s);
					float *c0 = randoms((size_t)MX * NX, &s), *ref = malloc((size_t)MX * NX * sizeof *ref);
					float *C = malloc((size_t)MX * NX * sizeof *C);
					product(tA, tB, 0, MX, 0, NX, K, MX, NX, A, B, beta, c0, ref);
					for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
						for (int off = 0; off <= 4; off += 4) {
							int m = sizes[z];
							/* rows i0 .. i0 + m - 1, every column */
							product(tA, tB, off, m, 0, NX, K, MX, NX, A, B, beta, c0, C);
							bad += !same_block(C, off, m, 0, NX, ref, NX);
							/* every row, columns j0 .. j0 + n - 1 */
							int n = m < NX - off ? m : NX - off;
							product(tA, tB, 0, MX, off, n, K, MX, NX, A, B, beta, c0, C);
							bad += !same_block(C, 0, MX, off, n, ref, NX);
							checked += 2;
						}
					free(A), free(B), free(c0), free(ref), free(C);
				}
	llr_blas_set_fixed_order(0);
	if (bad)
		printf("#   %d of %d blocks differ from the whole product\n", bad, checked);
	CHECK(bad == 0);
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(2);
	RUN(test_fixed_order_blocks);
	llr_blas_set_threads(2);
	RUN(test_fixed_order_blocks);
	DONE();
}
