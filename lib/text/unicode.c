/*
 * unicode.c - the utf8proc seam: normalisation (NFC/NFKC), character
 * classes and lowercase mapping for the tokenizer.  Every utf8proc call
 * in libllrnn lives here.  It does not tokenize (tokenize.c does) and does
 * not read input (lines.c validates UTF-8 line by line).
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <utf8proc.h>

#include "unicode.h"

static int cps_reserve(llr_cps *c, size_t n)
{
	if (n <= c->cap)
		return LLR_OK;
	size_t cap = c->cap ? c->cap : 256;
	while (cap < n)
		cap *= 2;
	int32_t *p = llr_reallocarray(c->cp, cap, sizeof *p);
	if (!p)
		return LLR_ENOMEM;
	c->cp = p;
	c->cap = cap;
	return LLR_OK;
}

void llr_cps_free(llr_cps *c)
{
	if (!c)
		return;
	free(c->cp);
	c->cp = NULL;
	c->n = c->cap = 0;
}

int llr_uni_normalize(const char *s, size_t len, int nfkc, llr_cps *out, llr_err *err)
{
	utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
	if (nfkc)
		opt |= UTF8PROC_COMPAT;
	out->n = 0;
	if (len == 0)
		return LLR_OK;
	if (len > (size_t)(SIZE_MAX / 2) / 8)
		return llr_err_set(err, LLR_ERANGE, "text too long to normalise");
	/* Decomposition rarely grows text much; retry with the size utf8proc
	 * asks for when it does. */
	size_t want = len + 16;
	for (;;) {
		if (cps_reserve(out, want) != LLR_OK)
			return llr_err_set(err, LLR_ENOMEM, "normalise: out of memory");
		utf8proc_ssize_t r = utf8proc_decompose((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len,
		                                        out->cp, (utf8proc_ssize_t)out->cap, opt);
		if (r < 0) {
			if (r == UTF8PROC_ERROR_INVALIDUTF8)
				return llr_err_set(err, LLR_EUTF8, "invalid UTF-8");
			if (r == UTF8PROC_ERROR_NOMEM)
				return llr_err_set(err, LLR_ENOMEM, "normalise: out of memory");
			return llr_err_set(err, LLR_EINVAL, "normalise: %s", utf8proc_errmsg(r));
		}
		if ((size_t)r <= out->cap) {
			r = utf8proc_normalize_utf32(out->cp, r, opt);
			if (r < 0)
				return llr_err_set(err, LLR_EINVAL, "normalise: %s", utf8proc_errmsg(r));
			out->n = (size_t)r;
			return LLR_OK;
		}
		want = (size_t)r;
	}
}

int llr_uni_class(int32_t c)
{
	switch (c) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case 0x85:
		return LLR_UC_SPACE;
	}
	switch (utf8proc_category(c)) {
	case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
	case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
		return LLR_UC_LETTER;
	case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
		return LLR_UC_MARK;
	case UTF8PROC_CATEGORY_ND:
		return LLR_UC_DIGIT;
	case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
		return LLR_UC_NUMBER;
	case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
	case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
	case UTF8PROC_CATEGORY_PO:
		return LLR_UC_PUNCT;
	case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK:
	case UTF8PROC_CATEGORY_SO:
		return LLR_UC_SYMBOL;
	case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
		return LLR_UC_SPACE;
	case UTF8PROC_CATEGORY_CC:
		return LLR_UC_CONTROL;
	case UTF8PROC_CATEGORY_CF:
		return LLR_UC_FORMAT;
	default:
		return LLR_UC_OTHER;
	}
}

int llr_uni_is_upper(int32_t c)
{
	int k = utf8proc_category(c);
	return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LT;
}

int llr_uni_is_lower(int32_t c)
{
	return utf8proc_category(c) == UTF8PROC_CATEGORY_LL;
}

int32_t llr_uni_lower(int32_t c)
{
	return utf8proc_tolower(c);
}

int llr_uni_encode(int32_t c, char *out)
{
	utf8proc_ssize_t n = utf8proc_encode_char(c, (utf8proc_uint8_t *)out);
	return (int)n;
}

int llr_uni_put(llr_buf *b, int32_t c, int lower)
{
	char u[4];
	if (lower)
		c = utf8proc_tolower(c);
	int n = llr_uni_encode(c, u);
	return llr_buf_append(b, u, (size_t)n);
}
