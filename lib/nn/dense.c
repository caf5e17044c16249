/*
 * dense.c - the dense layer a = W h + c between the last LSTM layer and
 * the output layer (F outputs), computed for all N positions with one
 * GEMM.  The result is stored feature-major (F x N) because the sparse
 * output products in loglinear.c run with the positions innermost.
 */
#include "nn.h"

/* A (F x N, lda) = W (F x Din) X^T (Din x N) + c (F). */
LLR_CLONES LLR_VECTORIZE void llr_dense_forward(int N, int Din, int F, const float *X, const float *W, const float *c, float *A, int lda)
{
	for (int f = 0; f < F; f++) {
		float *a = A + (size_t)f * lda;
		for (int n = 0; n < N; n++)
			a[n] = c[f];
	}
	llr_gemm(0, 1, F, N, Din, 1.0f, W, Din, X, Din, 1.0f, A, lda);
}

/* dW (F x Din) += dA X; dc += sum_n dA[f][n]; dX (N x Din) = dA^T W. */
LLR_CLONES LLR_VECTORIZE void llr_dense_backward(int N, int Din, int F, const float *X, const float *W, const float *dA, int lda, float *dX, float *dW, float *dc)
{
	llr_gemm(0, 0, F, Din, N, 1.0f, dA, lda, X, Din, 1.0f, dW, Din);
	for (int f = 0; f < F; f++) {
		const float *d = dA + (size_t)f * lda;
		double s = 0;
		for (int n = 0; n < N; n++)
			s += d[n];
		dc[f] += (float)s;
	}
	if (dX)
		llr_gemm(1, 0, N, Din, F, 1.0f, dA, lda, W, Din, 0.0f, dX, Din);
}
