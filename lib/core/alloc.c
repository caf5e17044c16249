/*
 * alloc.c - overflow-checked allocation, large arrays on huge pages, and
 * the growable byte buffer.  Nothing here aborts: a NULL or LLR_ENOMEM
 * goes back to the caller.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

void *llr_malloc(size_t size)
{
	return malloc(size ? size : 1);
}

void *llr_calloc(size_t n, size_t size)
{
	if (n == 0 || size == 0)
		return calloc(1, 1);
	return calloc(n, size);
}

void *llr_reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t total = n * size;
	return realloc(p, total ? total : 1);
}

#define HUGE_PAGE ((size_t)2 << 20)

void *llr_alloc_large(size_t n, size_t size, int zero)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t total = n * size;
#ifdef MADV_HUGEPAGE
	if (total >= HUGE_PAGE / 2 && total <= SIZE_MAX - HUGE_PAGE) {
		size_t r = (total + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		void *p = aligned_alloc(HUGE_PAGE, r);
		if (p) {
			madvise(p, r, MADV_HUGEPAGE); /* advice: without it, 4 KiB pages */
			if (zero)
				memset(p, 0, total);
			return p;
		}
	}
#endif
	return zero ? llr_calloc(n, size) : llr_malloc(total);
}

char *llr_strndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

int llr_buf_reserve(llr_buf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len - 1)
		return LLR_ENOMEM;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return LLR_OK;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *d = realloc(b->data, cap);
	if (!d)
		return LLR_ENOMEM;
	b->data = d;
	b->cap = cap;
	return LLR_OK;
}

int llr_buf_append(llr_buf *b, const void *p, size_t n)
{
	if (llr_buf_reserve(b, n))
		return LLR_ENOMEM;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
	return LLR_OK;
}

int llr_buf_putc(llr_buf *b, int c)
{
	char ch = (char)c;
	return llr_buf_append(b, &ch, 1);
}

int llr_buf_printf(llr_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || llr_buf_reserve(b, (size_t)n))
		return LLR_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return LLR_OK;
}

void llr_buf_clear(llr_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

void llr_buf_free(llr_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

float *llr_weights_grow(float **p, size_t *have, float **g, size_t n, size_t full, const char *what, llr_err *err)
{
	if (n > *have || !*p) {
		float *q = *p ? llr_reallocarray(*p, n, sizeof *q) : llr_calloc(n, sizeof *q);
		if (!q)
			return llr_err_set(err, LLR_ENOMEM, "%s: out of memory for %zu parameters", what, n), NULL;
		if (*p)
			memset(q + *have, 0, (n - *have) * sizeof *q);
		*p = q;
		*have = n;
	}
	if (g && n >= full && !*g && !(*g = llr_calloc(full, sizeof **g)))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory for %zu gradients", what, full), NULL;
	return *p;
}
