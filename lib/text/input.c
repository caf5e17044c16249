/*
 * input.c - the one place libarchive READS text: llr_input (a single,
 * possibly compressed byte stream: plain, gzip, bzip2, xz, zstd, lz4...,
 * from a file or stdin, never seeking) and llr_archive (the regular
 * members of an archive in any format libarchive reads, or one document
 * when the input is not an archive).
 *
 * A pipe, terminal or socket is peeked at with read(2) first: plain text
 * is then read with read(2) as it arrives (libarchive would wait to fill
 * its read-ahead, which stalls a coprocess such as `score` answering line
 * by line), while compressed data or an archive goes to libarchive through
 * callbacks that replay the peeked bytes.  Regular files go to libarchive
 * directly (zip and 7z want to seek).
 *
 * Not here: line splitting and UTF-8 checks (lines.c), the tensor archive
 * (tensorio.c), anything that writes.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ------------------------------------------------- non-regular sources */

#define PEEK_MAX 512 /* enough to see a tar header */

/* A pipe, terminal or socket: the bytes peeked so far, then the fd. */
typedef struct pipe_src {
	int fd, own_fd;
	char *buf;
	size_t len, pos, cap;
	int eof;
} pipe_src;

static int starts_with(const pipe_src *p, const char *magic, size_t n)
{
	return p->len >= n && !memcmp(p->buf, magic, n);
}

/* Compressed data that libarchive's filters undo. */
static int looks_compressed(const pipe_src *p)
{
	return starts_with(p, "\x1f\x8b", 2) ||                 /* gzip */
	       starts_with(p, "\x1f\x9d", 2) ||                 /* compress */
	       (starts_with(p, "BZh", 3) && p->len >= 4 && p->buf[3] >= '1' && p->buf[3] <= '9') ||
	       starts_with(p, "\xfd" "7zXZ\0", 6) ||            /* xz */
	       starts_with(p, "\x28\xb5\x2f\xfd", 4) ||         /* zstd */
	       starts_with(p, "\x04\x22\x4d\x18", 4) ||         /* lz4 */
	       starts_with(p, "LZIP", 4) ||
	       starts_with(p, "\x5d\0\0", 3) ||                 /* lzma */
	       starts_with(p, "\x89LZO", 4);
}

/* Archive formats recognisable from their first bytes; tar, iso and the
 * binary formats all put NUL bytes in their first 512 bytes. */
static int looks_archive(const pipe_src *p)
{
	if (memchr(p->buf, 0, p->len))
		return 1;
	return starts_with(p, "PK\x03\x04", 4) || starts_with(p, "PK\x05\x06", 4) ||
	       starts_with(p, "7z\xbc\xaf\x27\x1c", 6) || starts_with(p, "!<arch>\n", 8) ||
	       starts_with(p, "07070", 5) || starts_with(p, "xar!", 4) ||
	       starts_with(p, "MSCF", 4) || starts_with(p, "Rar!", 4) ||
	       starts_with(p, "WARC/", 5);
}

/* Read until PEEK_MAX bytes, the end, or a whole first line that cannot
 * begin a compressed stream or an archive: a terminal or a coprocess
 * writing one line is then answered without waiting for more. */
static int pipe_peek(pipe_src *p, int for_archive)
{
	p->cap = PEEK_MAX > 65536 ? PEEK_MAX : 65536;
	if (!(p->buf = malloc(p->cap)))
		return LLR_ENOMEM;
	while (p->len < PEEK_MAX) {
		ssize_t r = read(p->fd, p->buf + p->len, PEEK_MAX - p->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return LLR_EIO;
		if (r == 0) {
			p->eof = 1;
			break;
		}
		p->len += (size_t)r;
		if (p->len >= 6 && memchr(p->buf, '\n', p->len) && !looks_compressed(p) &&
		    !(for_archive && looks_archive(p)))
			break;
	}
	return LLR_OK;
}

static ssize_t pipe_read(pipe_src *p, void *buf, size_t n)
{
	if (p->pos < p->len) {
		size_t k = LLR_MIN(n, p->len - p->pos);
		memcpy(buf, p->buf + p->pos, k);
		p->pos += k;
		return (ssize_t)k;
	}
	if (p->eof)
		return 0;
	for (;;) {
		ssize_t r = read(p->fd, buf, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			p->eof = 1;
		return r;
	}
}

/* libarchive read callback: replay the peeked bytes, then read blocks. */
static la_ssize_t pipe_archive_read(struct archive *a, void *data, const void **out)
{
	pipe_src *p = data;
	if (p->pos < p->len) {
		*out = p->buf + p->pos;
		la_ssize_t k = (la_ssize_t)(p->len - p->pos);
		p->pos = p->len;
		return k;
	}
	ssize_t r = pipe_read(p, p->buf, p->cap);
	if (r < 0) {
		archive_set_error(a, errno, "read error");
		return -1;
	}
	*out = p->buf;
	return r;
}

static void pipe_free(pipe_src *p)
{
	if (!p)
		return;
	if (p->own_fd)
		close(p->fd);
	free(p->buf);
	free(p);
}

/* Open path (or stdin) as a file descriptor; *regular tells whether it is
 * a regular file.  Returns the fd or -1 with errno set. */
static int open_fd(const char *path, int *own, int *regular)
{
	int fd = 0;
	*own = 0;
	if (path && strcmp(path, "-")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		*own = 1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		if (*own)
			close(fd);
		errno = e;
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (*own)
			close(fd);
		errno = EISDIR;
		return -1;
	}
	*regular = S_ISREG(st.st_mode);
	return fd;
}

/* Prepare the source of path: a regular file is left to libarchive
 * (*pipe = NULL); otherwise peek at it.  LLR_OK or an error in err. */
static int open_pipe(const char *path, const char *name, int for_archive, pipe_src **pipe, llr_err *err)
{
	int own, regular;
	*pipe = NULL;
	int fd = open_fd(path, &own, &regular);
	if (fd < 0)
		return llr_err_set(err, LLR_EIO, "%s: %s", name, strerror(errno));
	if (regular) {
		if (own)
			close(fd);
		return LLR_OK;
	}
	pipe_src *p = calloc(1, sizeof *p);
	if (!p) {
		if (own)
			close(fd);
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
	}
	p->fd = fd;
	p->own_fd = own;
	int rc = pipe_peek(p, for_archive);
	if (rc) {
		int e = errno;
		pipe_free(p);
		return llr_err_set(err, rc, "%s: %s", name, rc == LLR_EIO ? strerror(e) : llr_strerror(rc));
	}
	*pipe = p;
	return LLR_OK;
}

/* Plain text on a pipe: read directly. */
static int pipe_is_text(const pipe_src *p, int for_archive)
{
	return !looks_compressed(p) && !(for_archive && looks_archive(p));
}

static int open_source(struct archive *a, const char *path, pipe_src *p)
{
	if (p)
		return archive_read_open(a, p, NULL, pipe_archive_read, NULL);
	if (!path || !strcmp(path, "-"))
		return archive_read_open_fd(a, 0, INPUT_BLOCK);
	return archive_read_open_filename(a, path, INPUT_BLOCK);
}

/* ------------------------------------------------------------- llr_input */

struct llr_input {
	struct archive *a; /* NULL: plain text read from pipe */
	pipe_src *pipe;
	char *name;
	int eof, failed;
};

llr_input *llr_input_open(const char *path, llr_err *err)
{
	const char *name = display_name(path);
	llr_input *in = calloc(1, sizeof *in);
	if (!in || !(in->name = strdup(name))) {
		llr_input_close(in);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	if (open_pipe(path, name, 0, &in->pipe, err)) {
		llr_input_close(in);
		return NULL;
	}
	if (in->pipe && pipe_is_text(in->pipe, 0))
		return in;
	if (!(in->a = archive_read_new())) {
		llr_input_close(in);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	archive_read_support_filter_all(in->a);
	archive_read_support_format_empty(in->a);
	archive_read_support_format_raw(in->a);
	if (open_source(in->a, path, in->pipe) != ARCHIVE_OK) {
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
	if (!in->a) {
		ssize_t k = pipe_read(in->pipe, buf, n);
		if (k < 0) {
			in->failed = 1;
			return llr_err_set(err, LLR_EIO, "%s: %s", in->name, strerror(errno));
		}
		if (k == 0)
			in->eof = 1;
		return k;
	}
	ssize_t r = llr_archive_data(in->a, buf, n);
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

/* The bytes libarchive took from the file (archive_filter_bytes of the
 * last filter, the raw I/O), read-ahead included. */
int64_t llr_input_offset(const llr_input *in)
{
	return in->a ? (int64_t)archive_filter_bytes(in->a, -1) : -1;
}

void llr_input_close(llr_input *in)
{
	if (!in)
		return;
	if (in->a)
		archive_read_free(in->a);
	pipe_free(in->pipe);
	free(in->name);
	free(in);
}

/* ----------------------------------------------------------- llr_archive */

/* The source of a nested archive: the bytes of the parent's member
 * already read, then the rest of it. */
typedef struct nest_src {
	llr_archive *parent;
	char *head;
	size_t len, pos;
	char block[INPUT_BLOCK];
} nest_src;

struct llr_archive {
	struct archive *a; /* NULL: plain text read from pipe, one document */
	pipe_src *pipe;
	nest_src *nest;
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
	if (!ar || !(ar->name = strdup(name))) {
		llr_archive_close(ar);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	if (open_pipe(path, name, 1, &ar->pipe, err)) {
		llr_archive_close(ar);
		return NULL;
	}
	if (ar->pipe && pipe_is_text(ar->pipe, 1)) {
		ar->raw = 1;
		return ar;
	}
	if (!(ar->a = archive_read_new())) {
		llr_archive_close(ar);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	archive_read_support_filter_all(ar->a);
	support_formats(ar->a);
	if (open_source(ar->a, path, ar->pipe) != ARCHIVE_OK) {
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
	if (!ar->a) {
		/* plain text from a pipe: one document, unless it is empty */
		if (ar->started || (ar->pipe->len == 0 && ar->pipe->eof)) {
			ar->done = 1;
			return 0;
		}
		ar->started = 1;
		free(ar->member);
		if (!(ar->member = strdup(ar->name))) {
			ar->failed = 1;
			return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", ar->name);
		}
		ar->member_eof = 0;
		if (name)
			*name = ar->member;
		if (size)
			*size = -1;
		return 1;
	}
	for (;;) {
		struct archive_entry *ent;
		int r = llr_archive_header(ar->a, &ent);
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
	if (!ar->a) {
		ssize_t k = pipe_read(ar->pipe, buf, n);
		if (k < 0) {
			ar->failed = 1;
			return llr_err_set(err, LLR_EIO, "%s: %s", ar->name, strerror(errno));
		}
		if (k == 0)
			ar->member_eof = 1;
		return k;
	}
	ssize_t r = llr_archive_data(ar->a, buf, n);
	if (r < 0) {
		ar->failed = 1;
		return archive_fail(ar->a, err, ar->name, ar->raw ? NULL : ar->member);
	}
	if (r == 0)
		ar->member_eof = 1;
	return r;
}

int llr_archive_sniff(const void *head, size_t n)
{
	pipe_src p = {.buf = (char *)head, .len = n};
	if (n >= 262 && !memcmp((const char *)head + 257, "ustar", 5))
		return 1;
	return looks_compressed(&p) || starts_with(&p, "PK\x03\x04", 4) ||
	       starts_with(&p, "7z\xbc\xaf\x27\x1c", 6) || starts_with(&p, "!<arch>\n", 8) ||
	       starts_with(&p, "07070", 5) || starts_with(&p, "xar!", 4) ||
	       starts_with(&p, "MSCF", 4) || starts_with(&p, "Rar!", 4) ||
	       starts_with(&p, "WARC/", 5);
}

/* libarchive read callback of a nested archive; a failure of the parent
 * keeps its message (and so its "Truncated" for LLR_ETRUNC). */
static la_ssize_t nest_read(struct archive *a, void *data, const void **out)
{
	nest_src *s = data;
	if (s->pos < s->len) {
		*out = s->head + s->pos;
		la_ssize_t k = (la_ssize_t)(s->len - s->pos);
		s->pos = s->len;
		return k;
	}
	llr_err e = {0};
	ssize_t r = llr_archive_read(s->parent, s->block, sizeof s->block, &e);
	if (r < 0) {
		archive_set_error(a, e.code == LLR_ENOMEM ? ENOMEM : EIO, "%s", e.msg[0] ? e.msg : llr_strerror(e.code));
		return -1;
	}
	*out = s->block;
	return (la_ssize_t)r;
}

llr_archive *llr_archive_open_nested(llr_archive *parent, const void *head, size_t n, llr_err *err)
{
	const char *pm = parent->member ? parent->member : "";
	size_t nl = strlen(parent->name) + 1 + strlen(pm) + 1;
	llr_archive *ar = calloc(1, sizeof *ar);
	if (!ar || !(ar->name = malloc(nl)) || !(ar->nest = calloc(1, sizeof *ar->nest)) ||
	    (n && !(ar->nest->head = malloc(n))) || !(ar->a = archive_read_new())) {
		llr_archive_close(ar);
		llr_err_set(err, LLR_ENOMEM, "%s: %s: out of memory", parent->name, pm);
		return NULL;
	}
	snprintf(ar->name, nl, "%s:%s", parent->name, pm);
	ar->nest->parent = parent;
	if (n)
		memcpy(ar->nest->head, head, n);
	ar->nest->len = n;
	archive_read_support_filter_all(ar->a);
	support_formats(ar->a);
	if (archive_read_open(ar->a, ar->nest, NULL, nest_read, NULL) != ARCHIVE_OK) {
		archive_fail(ar->a, err, ar->name, NULL);
		llr_archive_close(ar);
		return NULL;
	}
	return ar;
}

int llr_archive_failed(const llr_archive *ar)
{
	return ar->failed;
}

const char *llr_archive_name(const llr_archive *ar)
{
	return ar->name;
}

int64_t llr_archive_offset(const llr_archive *ar)
{
	return ar->a && !ar->nest ? (int64_t)archive_filter_bytes(ar->a, -1) : -1;
}

void llr_archive_close(llr_archive *ar)
{
	if (!ar)
		return;
	if (ar->a)
		archive_read_free(ar->a);
	pipe_free(ar->pipe);
	if (ar->nest)
		free(ar->nest->head);
	free(ar->nest);
	free(ar->name);
	free(ar->member);
	free(ar);
}
