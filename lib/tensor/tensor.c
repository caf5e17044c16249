/*
 * tensor.c - dense row-major tensors (float32, int32, int64, float64).
 * Stride-free: a tensor is a dtype, a shape and one owned block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llrnn.h"

size_t llr_dtype_size(llr_dtype t)
{
	switch (t) {
	case LLR_F32: case LLR_I32: return 4;
	case LLR_I64: case LLR_F64: return 8;
	}
	return 0;
}

const char *llr_dtype_name(llr_dtype t)
{
	switch (t) {
	case LLR_F32: return "float32";
	case LLR_I32: return "int32";
	case LLR_I64: return "int64";
	case LLR_F64: return "float64";
	}
	return "unknown";
}

const char *llr_shape_str(int ndim, const int64_t *shape, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = 0;
	if (ndim == 0)
		snprintf(buf, size, "scalar");
	for (int i = 0; i < ndim && off < size; i++)
		off += snprintf(buf + off, size - off, i ? "x%lld" : "%lld", (long long)shape[i]);
	return buf;
}

llr_tensor *llr_tensor_new(llr_dtype t, int ndim, const int64_t *shape, llr_err *err)
{
	size_t es = llr_dtype_size(t);
	if (!es)
		return llr_err_set(err, LLR_EINVAL, "tensor: unknown dtype %d", (int)t), NULL;
	if (ndim < 0 || ndim > LLR_MAX_DIMS)
		return llr_err_set(err, LLR_EINVAL, "tensor: %d dimensions (at most %d)", ndim, LLR_MAX_DIMS), NULL;
	size_t n = 1;
	for (int i = 0; i < ndim; i++) {
		if (shape[i] < 0 || (shape[i] && n > (SIZE_MAX / 8) / (size_t)shape[i]))
			return llr_err_set(err, LLR_ERANGE, "tensor: bad dimension %lld", (long long)shape[i]), NULL;
		n *= (size_t)shape[i];
	}
	llr_tensor *x = calloc(1, sizeof *x);
	if (!x)
		return llr_err_set(err, LLR_ENOMEM, "tensor: out of memory"), NULL;
	x->data = llr_calloc(n, es);
	if (!x->data) {
		free(x);
		return llr_err_set(err, LLR_ENOMEM, "tensor: out of memory for %zu elements", n), NULL;
	}
	x->dtype = t;
	x->ndim = ndim;
	for (int i = 0; i < ndim; i++)
		x->shape[i] = shape[i];
	return x;
}

void llr_tensor_free(llr_tensor *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

size_t llr_tensor_numel(const llr_tensor *t)
{
	size_t n = 1;
	for (int i = 0; i < t->ndim; i++)
		n *= (size_t)t->shape[i];
	return n;
}

size_t llr_tensor_nbytes(const llr_tensor *t)
{
	return llr_tensor_numel(t) * llr_dtype_size(t->dtype);
}
