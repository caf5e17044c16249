/*
 * input.c - the one place libarchive READS text: llr_input (a single,
 * possibly compressed byte stream: plain, gzip, bzip2, xz, zstd, lz4...,
 * from a file or stdin, never seeking) and llr_archive (the regular
 * members of an archive in any format libarchive reads, or one document
 * when the input is not an archive).
 *
 * Not here: line splitting and UTF-8 checks (lines.c), the tensor archive
 * (tensorio.c), anything that writes.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define INPUT_BLOCK 65536

static const char *display_name(const char *path)
{
	return (!path || !strcmp(path, "-")) ? "<stdin>" : path;
}

/* Map a libarchive failure to an LLR_E* code and message "name: reason".
 * When member_is_next, the failure came while looking for the member after
 * `member`.  libarchive reports format errors with errno EILSEQ on Linux (its
 * private ARCHIVE_ERRNO_FILE_FORMAT) or -1 (ARCHIVE_ERRNO_MISC). */
static int archive_fail_at(struct archive *a, llr_err *err, const char *name, const char *member, int member_is_next)
{
	const char *s = archive_error_string(a);
	int e = archive_errno(a);
	int code = LLR_EIO;
	if (!s)
		s = e > 0 ? strerror(e) : "read error";
	if (strstr(s, "runcat") || strstr(s, "remature") || strstr(s, "nexpected end") || strstr(s, "EOF"))
		code = LLR_ETRUNC;
	else if (e == EILSEQ || e == -1 /* ARCHIVE_ERRNO_MISC */)
		code = LLR_EFORMAT;
	else if (e == ENOMEM)
		code = LLR_ENOMEM;
	if (member && member_is_next)
		return llr_err_set(err, code, "%s: after member %s: %s", name, member, s);
	if (member)
		return llr_err_set(err, code, "%s: %s: %s", name, member, s);
	return llr_err_set(err, code, "%s: %s", name, s);
}

/* Open failures carry errno: "name: No such file or directory". */
static int archive_fail(struct archive *a, llr_err *err, const char *name, const char *member)
{
	return archive_fail_at(a, err, name, member, 0);
}

static int open_fail(struct archive *a, llr_err *err, const char *name)
{
	int e = archive_errno(a);
	if (e > 0)
		return llr_err_set(err, e == ENOMEM ? LLR_ENOMEM : LLR_EIO, "%s: %s", name, strerror(e));
	return archive_fail(a, err, name, NULL);
}

static int open_source(struct archive *a, const char *path)
{
	if (!path || !strcmp(path, "-"))
		return archive_read_open_fd(a, 0, INPUT_BLOCK);
	return archive_read_open_filename(a, path, INPUT_BLOCK);
}

/* ------------------------------------------------------------- llr_input */

struct llr_input {
	struct archive *a;
	char *name;
	int eof, failed;
};

llr_input *llr_input_open(const char *path, llr_err *err)
{
	const char *name = display_name(path);
	llr_input *in = calloc(1, sizeof *in);
	if (!in || !(in->name = strdup(name)) || !(in->a = archive_read_new())) {
		llr_input_close(in);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	archive_read_support_filter_all(in->a);
	archive_read_support_format_empty(in->a);
	archive_read_support_format_raw(in->a);
	if (open_source(in->a, path) != ARCHIVE_OK) {
		open_fail(in->a, err, name);
		llr_input_close(in);
		return NULL;
	}
	struct archive_entry *ent;
	int r = archive_read_next_header(in->a, &ent);
	if (r == ARCHIVE_EOF) {
		in->eof = 1; /* an empty file */
	} else if (r < ARCHIVE_WARN) {
		archive_fail(in->a, err, name, NULL);
		llr_input_close(in);
		return NULL;
	}
	return in;
}

ssize_t llr_input_read(llr_input *in, void *buf, size_t n, llr_err *err)
{
	if (in->failed)
		return llr_err_set(err, LLR_EIO, "%s: read after an error", in->name);
	if (in->eof || n == 0)
		return 0;
	la_ssize_t r;
	do
		r = archive_read_data(in->a, buf, n);
	while (r == ARCHIVE_RETRY);
	if (r < 0) {
		in->failed = 1;
		return archive_fail(in->a, err, in->name, NULL);
	}
	if (r == 0)
		in->eof = 1;
	return r;
}

const char *llr_input_name(const llr_input *in)
{
	return in->name;
}

void llr_input_close(llr_input *in)
{
	if (!in)
		return;
	if (in->a)
		archive_read_free(in->a);
	free(in->name);
	free(in);
}

/* ----------------------------------------------------------- llr_archive */

struct llr_archive {
	struct archive *a;
	char *name;
	char *member; /* current member's name (a copy) */
	int raw;      /* not an archive: one document */
	int started, done, failed, member_eof;
};

/* Every format libarchive reads except mtree, whose bidder accepts plain
 * text that starts with "#mtree" or looks like "name key=value" lines, and
 * raw last as the fallback (it bids lowest, so a real archive wins).  The
 * order matters with libarchive 3.6: when iso9660 bids before tar on a
 * short file, its 32 KiB read-ahead hits the end and a truncated tar then
 * ends quietly instead of failing, so tar (and zip) bid first. */
static void support_formats(struct archive *a)
{
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_ar(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_cab(a);
	archive_read_support_format_lha(a);
	archive_read_support_format_rar(a);
	archive_read_support_format_rar5(a);
	archive_read_support_format_warc(a);
	archive_read_support_format_xar(a);
	archive_read_support_format_iso9660(a);
	archive_read_support_format_empty(a);
	archive_read_support_format_raw(a);
}

llr_archive *llr_archive_open(const char *path, llr_err *err)
{
	const char *name = display_name(path);
	llr_archive *ar = calloc(1, sizeof *ar);
	if (!ar || !(ar->name = strdup(name)) || !(ar->a = archive_read_new())) {
		llr_archive_close(ar);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	archive_read_support_filter_all(ar->a);
	support_formats(ar->a);
	if (open_source(ar->a, path) != ARCHIVE_OK) {
		open_fail(ar->a, err, name);
		llr_archive_close(ar);
		return NULL;
	}
	return ar;
}

int llr_archive_next(llr_archive *ar, const char **name, int64_t *size, llr_err *err)
{
	if (ar->failed)
		return llr_err_set(err, LLR_EIO, "%s: read after an error", ar->name);
	if (ar->done)
		return 0;
	for (;;) {
		struct archive_entry *ent;
		int r;
		do
			r = archive_read_next_header(ar->a, &ent);
		while (r == ARCHIVE_RETRY);
		if (r == ARCHIVE_EOF) {
			ar->done = 1;
			return 0;
		}
		if (r < ARCHIVE_WARN) {
			ar->failed = 1;
			return archive_fail_at(ar->a, err, ar->name, ar->raw ? NULL : ar->member, 1);
		}
		if (!ar->started) {
			ar->started = 1;
			ar->raw = archive_format(ar->a) == ARCHIVE_FORMAT_RAW;
		}
		/* ar archives made by Debian's deterministic `ar rc` carry no
		 * file-type bits: a type of 0 is a regular member there. */
		mode_t ft = archive_entry_filetype(ent);
		if (!ar->raw && ft != AE_IFREG && ft != 0)
			continue;
		const char *mn = ar->raw ? ar->name : archive_entry_pathname(ent);
		if (!mn)
			mn = "(unnamed member)";
		char *copy = strdup(mn);
		if (!copy) {
			ar->failed = 1;
			return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", ar->name);
		}
		free(ar->member);
		ar->member = copy;
		ar->member_eof = 0;
		if (name)
			*name = ar->member;
		if (size)
			*size = (!ar->raw && archive_entry_size_is_set(ent)) ? (int64_t)archive_entry_size(ent) : -1;
		return 1;
	}
}

ssize_t llr_archive_read(llr_archive *ar, void *buf, size_t n, llr_err *err)
{
	if (ar->failed)
		return llr_err_set(err, LLR_EIO, "%s: read after an error", ar->name);
	if (!ar->member || ar->done || ar->member_eof || n == 0)
		return 0;
	la_ssize_t r;
	do
		r = archive_read_data(ar->a, buf, n);
	while (r == ARCHIVE_RETRY);
	if (r < 0) {
		ar->failed = 1;
		return archive_fail(ar->a, err, ar->name, ar->raw ? NULL : ar->member);
	}
	if (r == 0)
		ar->member_eof = 1;
	return r;
}

const char *llr_archive_name(const llr_archive *ar)
{
	return ar->name;
}

void llr_archive_close(llr_archive *ar)
{
	if (!ar)
		return;
	if (ar->a)
		archive_read_free(ar->a);
	free(ar->name);
	free(ar->member);
	free(ar);
}
