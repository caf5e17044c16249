/*
 * lines.c - UTF-8 line reading over any byte source, and the UTF-8
 * decoder/validator the rest of the library uses.
 *
 * A line ends at "\n" (a "\r" just before it is dropped too); a final line
 * without "\n" is still a line.  Lines are checked to be UTF-8 (no
 * overlong forms, no surrogates, nothing above U+10FFFF, no NUL byte);
 * a bad line is an LLR_EUTF8 error "name:line: invalid UTF-8 ...", or with
 * LLR_LINES_REPLACE_INVALID each maximal invalid subsequence becomes one
 * U+FFFD.  Lines longer than LLR_MAX_LINE bytes are LLR_ERANGE.
 * The check runs over the buffered bytes from a line's start to the first
 * invalid sequence at once (32 ASCII bytes a step), and the lines that
 * end before that point are not checked again one by one: a "\n" is a
 * whole sequence, so a valid run from a line start is valid line by line.
 *
 * Not here: opening files (input.c), normalisation (tok), tokenising.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LINES_CHUNK 65536

/* Decode one sequence at s (n > 0 bytes): the code point and its length,
 * or -(length of the maximal invalid subpart, >= 1) when invalid. */
static int utf8_step(const unsigned char *s, size_t n, int32_t *cp)
{
	unsigned c = s[0];
	if (c < 0x80) {
		*cp = (int32_t)c;
		return 1;
	}
	int len;
	unsigned lo = 0x80, hi = 0xBF;
	uint32_t v;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		v = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		v = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0; /* overlong */
		else if (c == 0xED)
			hi = 0x9F; /* surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xF0)
			lo = 0x90; /* overlong */
		else if (c == 0xF4)
			hi = 0x8F; /* above U+10FFFF */
	} else {
		return -1; /* continuation byte, C0, C1, F5..FF */
	}
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -i;
		unsigned b = s[i];
		if (b < lo || b > hi)
			return -i;
		lo = 0x80;
		hi = 0xBF;
		v = (v << 6) | (b & 0x3F);
	}
	*cp = (int32_t)v;
	return len;
}

int llr_utf8_decode(const char *s, size_t n, int32_t *cp)
{
	int32_t c;
	if (n == 0)
		return -1;
	int r = utf8_step((const unsigned char *)s, n, &c);
	if (r < 0)
		return -1;
	if (cp)
		*cp = c;
	return r;
}

int llr_utf8_encode(int32_t c, char *b)
{
	if (c < 0x80) {
		b[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (char)(0xC0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		b[0] = (char)(0xE0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		b[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	b[0] = (char)(0xF0 | (c >> 18));
	b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
	b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	b[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

size_t llr_utf8_valid_prefix(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	while (i < n) {
		/* ASCII fast path: 32 bytes, then 8 bytes at a time, none with
		 * its high bit set or zero. */
		while (i + 32 <= n) {
			uint64_t a, b, c, d;
			memcpy(&a, p + i, 8);
			memcpy(&b, p + i + 8, 8);
			memcpy(&c, p + i + 16, 8);
			memcpy(&d, p + i + 24, 8);
			uint64_t zero = ((a - ones) & ~a) | ((b - ones) & ~b) | ((c - ones) & ~c) | ((d - ones) & ~d);
			if ((a | b | c | d | zero) & highs)
				break;
			i += 32;
		}
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if ((w & 0x8080808080808080ull) || ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull))
				break;
			i += 8;
		}
		if (i >= n)
			break;
		int32_t cp;
		int r = p[i] ? utf8_step(p + i, n - i, &cp) : -1;
		if (r < 0)
			return i;
		i += (size_t)r;
	}
	return n;
}

/* ------------------------------------------------------------- llr_lines */

struct llr_lines {
	llr_read_fn fn;
	void *src;
	llr_input *own; /* opened by llr_lines_open */
	char *name;
	int flags;
	char *buf; /* unconsumed bytes are buf[start..end) */
	size_t start, end, cap;
	size_t valid; /* buf[..valid) is valid UTF-8 from a line on */
	int eof;
	int error;     /* sticky error code */
	llr_err saved; /* and its message */
	size_t lineno, replaced;
	llr_buf fixed; /* the line with U+FFFD replacements */
};

static ssize_t input_read_fn(void *src, void *buf, size_t n, llr_err *err)
{
	return llr_input_read(src, buf, n, err);
}

llr_lines *llr_lines_from(llr_read_fn fn, void *src, const char *name, int flags)
{
	llr_lines *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->fn = fn;
	l->src = src;
	l->flags = flags;
	l->name = strdup(name ? name : "<input>");
	l->cap = LINES_CHUNK;
	l->buf = malloc(l->cap + 1);
	if (!l->name || !l->buf) {
		llr_lines_close(l);
		return NULL;
	}
	return l;
}

llr_lines *llr_lines_open(const char *path, int flags, llr_err *err)
{
	llr_input *in = llr_input_open(path, err);
	if (!in)
		return NULL;
	llr_lines *l = llr_lines_from(input_read_fn, in, llr_input_name(in), flags);
	if (!l) {
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", llr_input_name(in));
		llr_input_close(in);
		return NULL;
	}
	l->own = in;
	return l;
}

static int fail(llr_lines *l, llr_err *err, int code, const char *fmt, const char *extra)
{
	l->error = code;
	llr_err_set(&l->saved, code, fmt, l->name, l->lineno, extra);
	if (err)
		*err = l->saved;
	return code;
}

/* Build the replaced copy of line[0..len) in l->fixed. */
static int replace_invalid(llr_lines *l, const char *line, size_t len)
{
	const unsigned char *p = (const unsigned char *)line;
	llr_buf_clear(&l->fixed);
	size_t i = 0;
	while (i < len) {
		size_t ok = llr_utf8_valid_prefix(line + i, len - i);
		if (llr_buf_append(&l->fixed, p + i, ok) < 0)
			return LLR_ENOMEM;
		i += ok;
		if (i >= len)
			break;
		int32_t cp;
		int r = p[i] ? utf8_step(p + i, len - i, &cp) : -1;
		i += (size_t)(r < 0 ? -r : 1);
		l->replaced++;
		if (llr_buf_append(&l->fixed, "\xEF\xBF\xBD", 3) < 0)
			return LLR_ENOMEM;
	}
	if (llr_buf_reserve(&l->fixed, 0) < 0)
		return LLR_ENOMEM;
	l->fixed.data[l->fixed.len] = 0;
	return LLR_OK;
}

/* Hand out buf[s..s+len) as the current line (checked). */
static int emit(llr_lines *l, size_t s, size_t len, const char **line, size_t *lenp, llr_err *err)
{
	char *p = l->buf + s;
	if (len > 0 && p[len - 1] == '\r' && s + len < l->end && p[len] == '\n')
		len--;
	/* Not within the run checked before: check from here to the end of
	 * the buffer (its later lines are not zeroed yet). */
	if (!(l->flags & LLR_LINES_NO_VALIDATE) && s + len > l->valid && len <= LLR_MAX_LINE)
		l->valid = s + llr_utf8_valid_prefix(p, l->end - s);
	p[len] = 0;
	l->lineno++;
	if (len > LLR_MAX_LINE)
		return fail(l, err, LLR_ERANGE, "%s:%zu: line longer than 64 MiB%s", "");
	if (!(l->flags & LLR_LINES_NO_VALIDATE) && s + len > l->valid) {
		size_t ok = llr_utf8_valid_prefix(p, len);
		if (ok < len) {
			if (l->flags & LLR_LINES_REPLACE_INVALID) {
				if (replace_invalid(l, p, len) < 0)
					return fail(l, err, LLR_ENOMEM, "%s:%zu: out of memory%s", "");
				*line = l->fixed.data;
				*lenp = l->fixed.len;
				return 1;
			}
			char what[64];
			unsigned char b = (unsigned char)p[ok];
			size_t col = 1;
			for (size_t i = 0; i < ok; i++)
				col += ((unsigned char)p[i] & 0xC0) != 0x80;
			if (b == 0)
				snprintf(what, sizeof what, " (NUL byte at column %zu)", col);
			else
				snprintf(what, sizeof what, " (byte 0x%02X at column %zu)", b, col);
			return fail(l, err, LLR_EUTF8, "%s:%zu: invalid UTF-8%s", what);
		}
	}
	*line = p;
	*lenp = len;
	return 1;
}

int llr_lines_next(llr_lines *l, const char **line, size_t *len, llr_err *err)
{
	const char *dummy_line;
	size_t dummy_len;
	if (!line)
		line = &dummy_line;
	if (!len)
		len = &dummy_len;
	if (l->error) {
		if (err)
			*err = l->saved;
		return l->error;
	}
	size_t scanned = l->start; /* bytes before this hold no '\n' */
	for (;;) {
		char *nl = memchr(l->buf + scanned, '\n', l->end - scanned);
		if (nl) {
			size_t s = l->start, n = (size_t)(nl - (l->buf + s));
			l->start = n + s + 1;
			return emit(l, s, n, line, len, err);
		}
		scanned = l->end;
		if (l->eof) {
			if (l->start == l->end)
				return 0;
			size_t s = l->start, n = l->end - s;
			l->start = l->end;
			return emit(l, s, n, line, len, err);
		}
		/* A line over the limit (allowing for a "\r" before "\n"). */
		if (l->end - l->start > LLR_MAX_LINE + 1) {
			l->lineno++;
			return fail(l, err, LLR_ERANGE, "%s:%zu: line longer than 64 MiB%s", "");
		}
		/* Make room: slide the partial line down, grow if full. */
		if (l->start > 0) {
			memmove(l->buf, l->buf + l->start, l->end - l->start);
			l->valid = l->valid > l->start ? l->valid - l->start : 0;
			l->end -= l->start;
			scanned -= l->start;
			l->start = 0;
		}
		if (l->cap - l->end < LINES_CHUNK / 2) {
			size_t ncap = LLR_MIN(l->cap * 2, LLR_MAX_LINE + LINES_CHUNK);
			char *nb = realloc(l->buf, ncap + 1);
			if (!nb)
				return fail(l, err, LLR_ENOMEM, "%s:%zu: out of memory reading a long line%s", "");
			l->buf = nb;
			l->cap = ncap;
		}
		llr_err e = {0};
		ssize_t r = l->fn(l->src, l->buf + l->end, l->cap - l->end, &e);
		if (r < 0) {
			l->error = (int)r;
			if (!e.code)
				llr_err_set(&e, (int)r, "%s: %s", l->name, llr_strerror((int)r));
			l->saved = e;
			l->saved.code = (int)r;
			if (err)
				*err = l->saved;
			return (int)r;
		}
		if (r == 0)
			l->eof = 1;
		l->end += (size_t)r;
	}
}

size_t llr_lines_lineno(const llr_lines *l)
{
	return l->lineno;
}

const char *llr_lines_name(const llr_lines *l)
{
	return l->name;
}

int64_t llr_lines_offset(const llr_lines *l)
{
	return l->own ? llr_input_offset(l->own) : -1;
}

size_t llr_lines_replaced(const llr_lines *l)
{
	return l->replaced;
}

void llr_lines_close(llr_lines *l)
{
	if (!l)
		return;
	llr_input_close(l->own);
	free(l->name);
	free(l->buf);
	llr_buf_free(&l->fixed);
	free(l);
}

int llr_lines_each(const char *path, int (*fn)(void *ctx, const char *line, size_t len, llr_err *err), void *ctx,
                   llr_err *err)
{
	llr_lines *l = llr_lines_open(path, 0, err);
	if (!l)
		return err->code ? err->code : LLR_EIO;
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, err)) > 0)
		if ((rc = fn(ctx, line, len, err)) != LLR_OK) {
			if (rc != LLR_EIO)
				llr_err_prefix(err, "%s:%zu", llr_lines_name(l), llr_lines_lineno(l));
			break;
		}
	llr_lines_close(l);
	return rc < 0 ? rc : LLR_OK;
}
