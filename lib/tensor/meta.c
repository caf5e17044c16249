/*
 * meta.c - key=value metadata (the `meta` member of a tensor archive):
 * an ordered list of keys [A-Za-z0-9_.-]+ with one-line values, its text
 * form ("key=value\n" per entry) and the parser for that form.
 *
 * Not here: what the keys mean (each kind documents its own, see
 * llrnn-tensor(5)), reading or writing archives (tensorio.c).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct llr_meta {
	size_t n, cap;
	char **keys, **values;
};

llr_meta *llr_meta_new(void)
{
	return calloc(1, sizeof(llr_meta));
}

void llr_meta_free(llr_meta *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->keys[i]);
		free(m->values[i]);
	}
	free(m->keys);
	free(m->values);
	free(m);
}

static int key_ok(const char *k, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

static int value_ok(const char *v, size_t n)
{
	return !memchr(v, '\n', n) && !memchr(v, '\r', n) && !memchr(v, '\0', n);
}

static ssize_t find(const llr_meta *m, const char *key, size_t klen)
{
	for (size_t i = 0; i < m->n; i++)
		if (strlen(m->keys[i]) == klen && !memcmp(m->keys[i], key, klen))
			return (ssize_t)i;
	return -1;
}

/* Set key[0..klen) to value[0..vlen) (both already checked). */
static int set_n(llr_meta *m, const char *key, size_t klen, const char *value, size_t vlen)
{
	char *v = llr_strndup(value, vlen);
	if (!v)
		return LLR_ENOMEM;
	ssize_t i = find(m, key, klen);
	if (i >= 0) {
		free(m->values[i]);
		m->values[i] = v;
		return LLR_OK;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		char **k = llr_reallocarray(m->keys, cap, sizeof *k);
		if (!k)
			goto nomem;
		m->keys = k;
		char **vv = llr_reallocarray(m->values, cap, sizeof *vv);
		if (!vv)
			goto nomem;
		m->values = vv;
		m->cap = cap;
	}
	char *k = llr_strndup(key, klen);
	if (!k)
		goto nomem;
	m->keys[m->n] = k;
	m->values[m->n] = v;
	m->n++;
	return LLR_OK;
nomem:
	free(v);
	return LLR_ENOMEM;
}

int llr_meta_set(llr_meta *m, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);
	if (!key_ok(key, kl) || !value_ok(value, vl))
		return LLR_EINVAL;
	return set_n(m, key, kl, value, vl);
}

int llr_meta_setf(llr_meta *m, const char *key, const char *fmt, ...)
{
	llr_buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	char small[256];
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return LLR_EINVAL;
	if ((size_t)n < sizeof small)
		return llr_meta_set(m, key, small);
	if (llr_buf_reserve(&b, (size_t)n) < 0)
		return LLR_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b.data, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int rc = llr_meta_set(m, key, b.data);
	llr_buf_free(&b);
	return rc;
}

const char *llr_meta_get(const llr_meta *m, const char *key)
{
	ssize_t i = find(m, key, strlen(key));
	return i < 0 ? NULL : m->values[i];
}

int llr_meta_get_i64(const llr_meta *m, const char *key, int64_t *out, llr_err *err)
{
	const char *v = llr_meta_get(m, key);
	if (!v)
		return llr_err_set(err, LLR_EFORMAT, "meta: missing key '%s'", key);
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (end == v || *end || errno)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%s is not an integer", key, v);
	*out = (int64_t)x;
	return LLR_OK;
}

int llr_meta_get_f64(const llr_meta *m, const char *key, double *out, llr_err *err)
{
	const char *v = llr_meta_get(m, key);
	if (!v)
		return llr_err_set(err, LLR_EFORMAT, "meta: missing key '%s'", key);
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || (errno == ERANGE && isinf(x)))
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%s is not a number", key, v);
	*out = x;
	return LLR_OK;
}

size_t llr_meta_count(const llr_meta *m)
{
	return m->n;
}

void llr_meta_at(const llr_meta *m, size_t i, const char **key, const char **value)
{
	LLR_ASSERT(i < m->n);
	if (key)
		*key = m->keys[i];
	if (value)
		*value = m->values[i];
}

int llr_meta_format(const llr_meta *m, llr_buf *out)
{
	for (size_t i = 0; i < m->n; i++) {
		size_t kl = strlen(m->keys[i]), vl = strlen(m->values[i]);
		if (llr_buf_reserve(out, kl + vl + 2) < 0)
			return LLR_ENOMEM;
		llr_buf_append(out, m->keys[i], kl);
		llr_buf_putc(out, '=');
		llr_buf_append(out, m->values[i], vl);
		llr_buf_putc(out, '\n');
	}
	return LLR_OK;
}

/* Lines "key=value"; blank lines and lines starting with '#' are skipped.
 * A key given twice is an error (the text is meant to be machine-made). */
int llr_meta_parse(llr_meta *m, const char *text, size_t len, llr_err *err)
{
	size_t lineno = 0, i = 0;
	while (i < len) {
		const char *s = text + i;
		const char *nl = memchr(s, '\n', len - i);
		size_t n = nl ? (size_t)(nl - s) : len - i;
		i += n + (nl != NULL);
		lineno++;
		if (n == 0 || s[0] == '#')
			continue;
		const char *eq = memchr(s, '=', n);
		if (!eq)
			return llr_err_set(err, LLR_EFORMAT, "line %zu: expected key=value", lineno);
		size_t kl = (size_t)(eq - s), vl = n - kl - 1;
		if (!key_ok(s, kl))
			return llr_err_set(err, LLR_EFORMAT, "line %zu: bad key '%.*s' (allowed: letters, digits, _ . -)", lineno, (int)LLR_MIN(kl, 64), s);
		if (!value_ok(eq + 1, vl))
			return llr_err_set(err, LLR_EFORMAT, "line %zu: value of '%.*s' holds a control character (CR or NUL)", lineno, (int)LLR_MIN(kl, 64), s);
		if (find(m, s, kl) >= 0)
			return llr_err_set(err, LLR_EFORMAT, "line %zu: key '%.*s' given twice", lineno, (int)LLR_MIN(kl, 64), s);
		if (set_n(m, s, kl, eq + 1, vl) < 0)
			return llr_err_set(err, LLR_ENOMEM, "line %zu: out of memory", lineno);
	}
	return LLR_OK;
}
