/*
 * output.c - the one place libarchive COMPRESSES output: the write filter
 * an output file's name asks for (.gz, .bz2, .xz, .zst), and a stdio
 * stream that writes text through it (libarchive's raw format: one
 * compressed stream, no archive around it), so a writer keeps using
 * fprintf and gets a file that zcat, bzcat, xzcat or zstdcat reads, and
 * that every llrnn reader decompresses (input.c).
 *
 * Not here: choosing or renaming the file (the callers write a temporary
 * and rename it), the tensor archive's own format (tensorio.c adds the
 * same filter to its tar writer).
 */
#define _GNU_SOURCE /* fopencookie */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static const struct {
	const char *suffix;
	llr_compress c;
} suffixes[] = {
	{".gz", LLR_COMPRESS_GZIP},
	{".bz2", LLR_COMPRESS_BZIP2},
	{".xz", LLR_COMPRESS_XZ},
	{".zst", LLR_COMPRESS_ZSTD},
};

llr_compress llr_compress_for_path(const char *path)
{
	if (!path || !strcmp(path, "-"))
		return LLR_COMPRESS_NONE;
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		size_t k = strlen(suffixes[i].suffix);
		if (n > k && !strcmp(path + n - k, suffixes[i].suffix))
			return suffixes[i].c;
	}
	return LLR_COMPRESS_NONE;
}

int llr_compress_add_filter(struct archive *a, llr_compress c)
{
	int r;
	switch (c) {
	case LLR_COMPRESS_GZIP: /* no time stamp: the same input, the same bytes (gzip -n) */
		r = archive_write_add_filter_gzip(a);
		if (r >= ARCHIVE_WARN && archive_write_set_filter_option(a, "gzip", "timestamp", NULL) < ARCHIVE_WARN)
			r = ARCHIVE_FATAL;
		break;
	case LLR_COMPRESS_BZIP2: r = archive_write_add_filter_bzip2(a); break;
	case LLR_COMPRESS_XZ: r = archive_write_add_filter_xz(a); break;
	case LLR_COMPRESS_ZSTD: r = archive_write_add_filter_zstd(a); break;
	default: r = archive_write_add_filter_none(a); break;
	}
	/* ARCHIVE_WARN: libarchive will run the external program instead */
	return r >= ARCHIVE_WARN ? LLR_OK : LLR_EIO;
}

typedef struct zcookie {
	struct archive *a;
	int fd;
} zcookie;

static ssize_t z_write(void *cookie, const char *buf, size_t n)
{
	zcookie *z = cookie;
	la_ssize_t w = archive_write_data(z->a, buf, n);
	if (w < 0 || (size_t)w != n) {
		errno = archive_errno(z->a) > 0 ? archive_errno(z->a) : EIO;
		return -1;
	}
	return (ssize_t)n;
}

static int z_close(void *cookie)
{
	zcookie *z = cookie;
	int bad = archive_write_close(z->a) != ARCHIVE_OK;
	int e = bad && archive_errno(z->a) > 0 ? archive_errno(z->a) : EIO;
	archive_write_free(z->a);
	if (close(z->fd) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	free(z);
	if (bad)
		errno = e;
	return bad ? EOF : 0;
}

FILE *llr_compress_fdopen(int fd, llr_compress c, const char *name, llr_err *err)
{
	zcookie *z = calloc(1, sizeof *z);
	struct archive_entry *ent = archive_entry_new();
	if (!z || !ent || !(z->a = archive_write_new())) {
		free(z);
		archive_entry_free(ent);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	z->fd = fd;
	archive_entry_set_filetype(ent, AE_IFREG);
	archive_entry_set_pathname(ent, "data");
	int ok = llr_compress_add_filter(z->a, c) == LLR_OK && archive_write_set_format_raw(z->a) == ARCHIVE_OK &&
	         archive_write_set_bytes_in_last_block(z->a, 1) == ARCHIVE_OK && archive_write_open_fd(z->a, fd) == ARCHIVE_OK &&
	         archive_write_header(z->a, ent) == ARCHIVE_OK;
	archive_entry_free(ent);
	FILE *fp = NULL;
	if (ok) {
		cookie_io_functions_t io = {.write = z_write, .close = z_close};
		fp = fopencookie(z, "w", io);
	}
	if (!fp) {
		const char *why = archive_error_string(z->a);
		llr_err_set(err, LLR_EIO, "%s: cannot start compressed output: %s", name, why ? why : strerror(errno));
		archive_write_free(z->a);
		free(z);
	}
	return fp;
}
