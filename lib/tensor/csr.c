/*
 * csr.c - compressed sparse row matrices (the word-feature matrices Phi and
 * Psi), their validation, and a row-by-row builder.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

llr_csr *llr_csr_new(int32_t rows, int32_t cols, int32_t nnz, llr_err *err)
{
	if (rows < 0 || cols < 0 || nnz < 0)
		return llr_err_set(err, LLR_EINVAL, "sparse matrix: negative size"), NULL;
	llr_csr *m = calloc(1, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "sparse matrix: out of memory"), NULL;
	m->rows = rows;
	m->cols = cols;
	m->nnz = nnz;
	m->indptr = llr_calloc((size_t)rows + 1, sizeof *m->indptr);
	m->indices = llr_calloc((size_t)nnz, sizeof *m->indices);
	m->data = llr_calloc((size_t)nnz, sizeof *m->data);
	if (!m->indptr || !m->indices || !m->data) {
		llr_csr_free(m);
		return llr_err_set(err, LLR_ENOMEM, "sparse matrix: out of memory for %d entries", nnz), NULL;
	}
	return m;
}

void llr_csr_free(llr_csr *m)
{
	if (!m)
		return;
	free(m->indptr);
	free(m->indices);
	free(m->data);
	free(m);
}

int llr_csr_check(const llr_csr *m, llr_err *err)
{
	if (m->indptr[0] != 0 || m->indptr[m->rows] != m->nnz)
		return llr_err_set(err, LLR_EFORMAT, "sparse matrix: indptr must run from 0 to nnz=%d", m->nnz);
	for (int32_t r = 0; r < m->rows; r++) {
		int32_t a = m->indptr[r], b = m->indptr[r + 1];
		if (b < a || b > m->nnz)
			return llr_err_set(err, LLR_EFORMAT, "sparse matrix: row %d: indptr decreases", r);
		for (int32_t k = a; k < b; k++) {
			if (m->indices[k] < 0 || m->indices[k] >= m->cols)
				return llr_err_set(err, LLR_EFORMAT, "sparse matrix: row %d: column %d out of range [0, %d)", r, m->indices[k], m->cols);
			if (k > a && m->indices[k] <= m->indices[k - 1])
				return llr_err_set(err, LLR_EFORMAT, "sparse matrix: row %d: columns not strictly increasing", r);
			if (!isfinite(m->data[k]))
				return llr_err_set(err, LLR_ENAN, "sparse matrix: row %d: value is not finite", r);
		}
	}
	return LLR_OK;
}

llr_csr *llr_csr_identity(int32_t n, llr_err *err)
{
	llr_csr *m = llr_csr_new(n, n, n, err);
	if (!m)
		return NULL;
	for (int32_t i = 0; i < n; i++) {
		m->indptr[i + 1] = i + 1;
		m->indices[i] = i;
		m->data[i] = 1.0f;
	}
	return m;
}

int llr_csr_one_hot(const llr_csr *m)
{
	if (!m)
		return 1;
	if (m->nnz != m->rows || m->cols != m->rows)
		return 0;
	for (int32_t r = 0; r < m->rows; r++)
		if (m->indptr[r + 1] - m->indptr[r] != 1 || m->data[m->indptr[r]] != 1.0f)
			return 0;
	return 1;
}

llr_csr *llr_csr_copy(const llr_csr *a, llr_err *err)
{
	llr_csr *m = llr_csr_new(a->rows, a->cols, a->nnz, err);
	if (!m)
		return NULL;
	memcpy(m->indptr, a->indptr, ((size_t)a->rows + 1) * sizeof *a->indptr);
	memcpy(m->indices, a->indices, (size_t)a->nnz * sizeof *a->indices);
	memcpy(m->data, a->data, (size_t)a->nnz * sizeof *a->data);
	return m;
}

struct llr_csr_builder {
	int32_t cols, rows;
	size_t nnz, cap, rcap;
	int32_t *indptr, *indices;
	float *data;
};

llr_csr_builder *llr_csr_builder_new(int32_t cols)
{
	llr_csr_builder *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->cols = cols;
	b->rcap = 1024;
	b->indptr = malloc(b->rcap * sizeof *b->indptr);
	if (!b->indptr) {
		free(b);
		return NULL;
	}
	b->indptr[0] = 0;
	return b;
}

void llr_csr_builder_free(llr_csr_builder *b)
{
	if (!b)
		return;
	free(b->indptr);
	free(b->indices);
	free(b->data);
	free(b);
}

typedef struct {
	int32_t col;
	float val;
} entry;

static int entry_cmp(const void *a, const void *b)
{
	int32_t x = ((const entry *)a)->col, y = ((const entry *)b)->col;
	return (x > y) - (x < y);
}

int llr_csr_builder_row(llr_csr_builder *b, const int32_t *cols, const float *vals, size_t n, llr_err *err)
{
	if (b->rows == INT32_MAX - 1)
		return llr_err_set(err, LLR_ERANGE, "sparse matrix: too many rows");
	if (b->nnz + n > INT32_MAX)
		return llr_err_set(err, LLR_ERANGE, "sparse matrix: more than %d non-zero entries", INT32_MAX);
	if ((size_t)b->rows + 2 > b->rcap) {
		int32_t *p = llr_reallocarray(b->indptr, b->rcap * 2, sizeof *p);
		if (!p)
			return llr_err_set(err, LLR_ENOMEM, "sparse matrix: out of memory");
		b->indptr = p;
		b->rcap *= 2;
	}
	if (b->nnz + n > b->cap) {
		size_t cap = LLR_MAX(b->cap * 2, b->nnz + n + 1024);
		int32_t *pi = llr_reallocarray(b->indices, cap, sizeof *pi);
		if (!pi)
			return llr_err_set(err, LLR_ENOMEM, "sparse matrix: out of memory");
		b->indices = pi;
		float *pd = llr_reallocarray(b->data, cap, sizeof *pd);
		if (!pd)
			return llr_err_set(err, LLR_ENOMEM, "sparse matrix: out of memory");
		b->data = pd;
		b->cap = cap;
	}
	entry *e = llr_calloc(n, sizeof *e);
	if (!e)
		return llr_err_set(err, LLR_ENOMEM, "sparse matrix: out of memory");
	for (size_t i = 0; i < n; i++) {
		if (cols[i] < 0 || cols[i] >= b->cols) {
			free(e);
			return llr_err_set(err, LLR_EINVAL, "sparse matrix: column %d out of range [0, %d)", cols[i], b->cols);
		}
		e[i].col = cols[i];
		e[i].val = vals ? vals[i] : 1.0f;
	}
	qsort(e, n, sizeof *e, entry_cmp);
	size_t k = b->nnz;
	for (size_t i = 0; i < n; i++) {
		if (k > b->nnz && b->indices[k - 1] == e[i].col) {
			b->data[k - 1] += e[i].val;
			continue;
		}
		b->indices[k] = e[i].col;
		b->data[k] = e[i].val;
		k++;
	}
	free(e);
	b->nnz = k;
	b->rows++;
	b->indptr[b->rows] = (int32_t)k;
	return LLR_OK;
}

llr_csr *llr_csr_builder_finish(llr_csr_builder *b, llr_err *err)
{
	llr_csr *m = llr_csr_new(b->rows, b->cols, (int32_t)b->nnz, err);
	if (m) {
		memcpy(m->indptr, b->indptr, ((size_t)b->rows + 1) * sizeof *m->indptr);
		if (b->nnz) {
			memcpy(m->indices, b->indices, b->nnz * sizeof *m->indices);
			memcpy(m->data, b->data, b->nnz * sizeof *m->data);
		}
	}
	llr_csr_builder_free(b);
	return m;
}
