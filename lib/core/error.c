/*
 * error.c - error codes, their messages, and the llr_err message buffer
 * every fallible library function fills; the llr_notice sink for what
 * is not an error.  Also the contract-failure abort.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llrnn.h"

const char *llr_strerror(int code)
{
	switch (code) {
	case LLR_OK: return "success";
	case LLR_ENOMEM: return "out of memory";
	case LLR_EIO: return "input/output error";
	case LLR_EFORMAT: return "malformed data";
	case LLR_EINVAL: return "invalid argument";
	case LLR_EUTF8: return "invalid UTF-8";
	case LLR_ERANGE: return "value out of range";
	case LLR_ETRUNC: return "truncated input";
	case LLR_EKIND: return "wrong kind or version of file";
	case LLR_ENAN: return "not a finite number";
	case LLR_EEMPTY: return "empty input";
	case LLR_EUSAGE: return "usage error";
	}
	return "unknown error";
}

int llr_err_set(llr_err *err, int code, const char *fmt, ...)
{
	if (!err)
		return code;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

int llr_err_prefix(llr_err *err, const char *fmt, ...)
{
	if (!err)
		return LLR_EINVAL;
	char prefix[256], old[sizeof err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	const char *rest = old[0] ? old : llr_strerror(err->code);
	size_t n = strlen(prefix);
	if (n > sizeof err->msg - 3)
		n = sizeof err->msg - 3;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	size_t room = sizeof err->msg - n - 3, m = strlen(rest);
	memcpy(err->msg + n + 2, rest, m < room ? m : room);
	err->msg[n + 2 + (m < room ? m : room)] = 0;
	return err->code;
}

void llr_notice_vsend(const llr_notice *n, const char *fmt, va_list ap)
{
	if (!n || !n->fn)
		return;
	char line[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	n->fn(n->ctx, line);
}

void llr_notice_send(const llr_notice *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	llr_notice_vsend(n, fmt, ap);
	va_end(ap);
}

void llr_assert_fail(const char *file, int line, const char *expr)
{
	fprintf(stderr, "llrnn: %s:%d: internal error: assertion failed: %s\n", file, line, expr);
	abort();
}
