/*
 * tensorio.c - the tensor archive (DESIGN section 3, llrnn-tensor(5)):
 * a POSIX pax tar stream written and read with libarchive, first member a
 * text `meta`, then NumPy .npy v1.0 members (little-endian, C order) and
 * text members.  Also the .npy header encoder and parser.
 *
 * The writer is deterministic (mtime 0, uid/gid 0, no user names, no
 * padding of the last block), so identical input gives identical bytes;
 * a path ending in .gz, .bz2, .xz or .zst gets the stream compressed
 * (llr_compress_for_path, output.c), which the reader undoes.
 * The reader streams: it never seeks, reads compressed streams (any
 * libarchive filter), and checks everything it is handed (kind, version,
 * .npy magic, header, dtype, shape, exact sizes) before allocating, and
 * grows a member's buffer with the bytes that arrive, so a truncated or
 * foreign stream is an error, never a crash or a huge allocation.
 *
 * Checksums: every member carries the CRC-32C of its bytes in its pax
 * header, as the extended attribute user.llrnn.crc32c (the key
 * SCHILY.xattr.user.llrnn.crc32c, 8 lowercase hex digits), and meta says
 * checksum=crc32c.  The CRC is computed before the header is written (the
 * writer holds the member's bytes), and the reader checks it as soon as
 * it has read a member's last byte, before handing the data on; a member
 * the caller skips is read through and checked when it moves on.  Files
 * written before checksums (no key in meta, none on meta) still load.
 *
 * Not here: what the members of a given kind mean (lexicon, model).
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAX_HEADER 65536
#define IO_CHUNK 65536
#define FIRST_READ ((size_t)1 << 20) /* tr_read_alloc's first buffer; it doubles from there */
#define CRC_XATTR "user.llrnn.crc32c"

static int host_le(void)
{
	uint16_t x = 1;
	unsigned char c;
	memcpy(&c, &x, 1);
	return c == 1;
}

/* Reverse the bytes of n elements of es bytes each, in place. */
static void swap_bytes(void *p, size_t n, size_t es)
{
	unsigned char *b = p;
	for (size_t i = 0; i < n; i++, b += es)
		for (size_t j = 0; j < es / 2; j++) {
			unsigned char t = b[j];
			b[j] = b[es - 1 - j];
			b[es - 1 - j] = t;
		}
}

static const char *npy_descr(llr_dtype dt)
{
	switch (dt) {
	case LLR_F32: return "<f4";
	case LLR_I32: return "<i4";
	case LLR_I64: return "<i8";
	case LLR_F64: return "<f8";
	}
	return NULL;
}

/* Bytes of a tensor of this shape, or -1 when over LLR_MAX_MEMBER. */
static int64_t shape_bytes(llr_dtype dt, int ndim, const int64_t *shape)
{
	int64_t n = (int64_t)llr_dtype_size(dt);
	for (int i = 0; i < ndim; i++) {
		if (shape[i] < 0)
			return -1;
		if (shape[i] && n > LLR_MAX_MEMBER / shape[i])
			return -1;
		n *= shape[i];
	}
	return n > LLR_MAX_MEMBER ? -1 : n;
}

/* The .npy v1.0 preamble: magic, version, header length, the header dict
 * padded with spaces and ended with "\n" so the data starts at a multiple
 * of 64. */
int llr_npy_header(llr_buf *b, llr_dtype dt, int ndim, const int64_t *shape)
{
	llr_buf d = {0};
	int rc = llr_buf_printf(&d, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(dt));
	for (int i = 0; i < ndim && rc == LLR_OK; i++)
		rc = llr_buf_printf(&d, i ? " %lld," : "%lld,", (long long)shape[i]);
	if (rc == LLR_OK && ndim > 1)
		d.len--; /* "(3, 4)" but "(3,)" */
	if (rc == LLR_OK)
		rc = llr_buf_printf(&d, "), }");
	size_t total = 10 + d.len + 1;
	size_t pad = (64 - total % 64) % 64;
	for (size_t i = 0; i < pad && rc == LLR_OK; i++)
		rc = llr_buf_putc(&d, ' ');
	if (rc == LLR_OK)
		rc = llr_buf_putc(&d, '\n');
	if (rc == LLR_OK && d.len > 65535)
		rc = LLR_ERANGE;
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(d.len & 0xff), (unsigned char)(d.len >> 8)};
	if (rc == LLR_OK)
		rc = llr_buf_append(b, pre, sizeof pre);
	if (rc == LLR_OK)
		rc = llr_buf_append(b, d.data, d.len);
	llr_buf_free(&d);
	return rc;
}

/* ------------------------------------------------------- .npy header parse */

typedef struct npy_parser {
	const char *s, *end;
} npy_parser;

static void np_ws(npy_parser *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static int np_lit(npy_parser *p, const char *lit)
{
	np_ws(p);
	size_t n = strlen(lit);
	if ((size_t)(p->end - p->s) < n || memcmp(p->s, lit, n))
		return 0;
	p->s += n;
	return 1;
}

/* A Python string literal '...' or "..." without escapes into out. */
static int np_str(npy_parser *p, char *out, size_t size)
{
	np_ws(p);
	if (p->s >= p->end || (*p->s != '\'' && *p->s != '"'))
		return 0;
	char q = *p->s++;
	size_t n = 0;
	while (p->s < p->end && *p->s != q) {
		if (*p->s == '\\' || n + 1 >= size)
			return 0;
		out[n++] = *p->s++;
	}
	if (p->s >= p->end)
		return 0;
	p->s++;
	out[n] = 0;
	return 1;
}

static int np_int(npy_parser *p, int64_t *v)
{
	np_ws(p);
	int64_t x = 0;
	const char *start = p->s;
	while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
		int d = *p->s++ - '0';
		if (x > (INT64_MAX - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	if (p->s == start)
		return 0;
	if (p->s < p->end && *p->s == 'L') /* Python 2 long */
		p->s++;
	*v = x;
	return 1;
}

/* Parse the header dict; on failure write the reason into why. */
static int npy_parse(const char *h, size_t n, llr_dtype *dt, int *ndim, int64_t *shape, char *why, size_t wsize)
{
	npy_parser p = {h, h + n};
	int have_descr = 0, have_fortran = 0, have_shape = 0;
	if (!np_lit(&p, "{"))
		return snprintf(why, wsize, "header is not a dict"), -1;
	for (;;) {
		if (np_lit(&p, "}"))
			break;
		char key[32], descr[32];
		if (!np_str(&p, key, sizeof key) || !np_lit(&p, ":"))
			return snprintf(why, wsize, "malformed header dict"), -1;
		if (!strcmp(key, "descr")) {
			if (!np_str(&p, descr, sizeof descr))
				return snprintf(why, wsize, "malformed 'descr'"), -1;
			if (!strcmp(descr, "<f4"))
				*dt = LLR_F32;
			else if (!strcmp(descr, "<i4"))
				*dt = LLR_I32;
			else if (!strcmp(descr, "<i8"))
				*dt = LLR_I64;
			else if (!strcmp(descr, "<f8"))
				*dt = LLR_F64;
			else
				return snprintf(why, wsize, "dtype '%s' not supported (only <f4, <i4, <i8, <f8)", descr), -1;
			have_descr = 1;
		} else if (!strcmp(key, "fortran_order")) {
			if (np_lit(&p, "False"))
				;
			else if (np_lit(&p, "True"))
				return snprintf(why, wsize, "Fortran order not supported (write C order)"), -1;
			else
				return snprintf(why, wsize, "malformed 'fortran_order'"), -1;
			have_fortran = 1;
		} else if (!strcmp(key, "shape")) {
			if (!np_lit(&p, "("))
				return snprintf(why, wsize, "malformed 'shape'"), -1;
			int k = 0;
			while (!np_lit(&p, ")")) {
				if (k == LLR_MAX_DIMS)
					return snprintf(why, wsize, "more than %d dimensions", LLR_MAX_DIMS), -1;
				if (!np_int(&p, &shape[k]))
					return snprintf(why, wsize, "malformed 'shape'"), -1;
				k++;
				if (!np_lit(&p, ",")) {
					if (!np_lit(&p, ")"))
						return snprintf(why, wsize, "malformed 'shape'"), -1;
					break;
				}
			}
			*ndim = k;
			have_shape = 1;
		} else {
			return snprintf(why, wsize, "unknown header key '%s'", key), -1;
		}
		if (np_lit(&p, ","))
			continue;
		if (np_lit(&p, "}"))
			break;
		return snprintf(why, wsize, "malformed header dict"), -1;
	}
	np_ws(&p);
	if (p.s != p.end)
		return snprintf(why, wsize, "junk after the header dict"), -1;
	if (!have_descr || !have_fortran || !have_shape)
		return snprintf(why, wsize, "header lacks '%s'", !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape"), -1;
	return 0;
}

/* ----------------------------------------------------------------- names */

/* Member names: [A-Za-z0-9_.-] components separated by single '/', no "."
 * or ".." component, at most 200 bytes; "meta" is the writer's. */
static int name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 200 || s[0] == '/' || s[n - 1] == '/')
		return 0;
	size_t comp = 0;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];
		if (c == '/' || c == 0) {
			if (comp == 0)
				return 0;
			const char *cs = s + i - comp;
			if ((comp == 1 && cs[0] == '.') || (comp == 2 && cs[0] == '.' && cs[1] == '.'))
				return 0;
			comp = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
		comp++;
	}
	return 1;
}

static int ends_with_npy(const char *s)
{
	size_t n = strlen(s);
	return n >= 4 && !strcmp(s + n - 4, ".npy");
}

/* ---------------------------------------------------------------- writer */

struct llr_tensor_writer {
	struct archive *a;
	char *name;   /* for messages: the path or "<stdout>" */
	char *path;   /* final path, NULL for stdout */
	char *tmp;    /* temporary beside it */
	int fd;
	int out;      /* the descriptor written: fd, or 1 for stdout */
	int failed;
	int cut;      /* given up (llr_tw_abort): nothing more reaches out */
	llr_strmap *members;
};

/* libarchive's write callback: the bytes to out, as
 * archive_write_open_fd's would (a short write returned as such, EINTR
 * retried, the reason in errno under "Write error"); after llr_tw_abort
 * dropped, so the close that frees the archive (its last block, the
 * end-of-archive blocks) leaves the output cut, and libarchive frees
 * everything (archive_write_fail would leak its buffers). */
static la_ssize_t tw_write(struct archive *a, void *data, const void *buf, size_t n)
{
	llr_tensor_writer *w = data;
	if (w->cut)
		return (la_ssize_t)n;
	for (;;) {
		ssize_t k = write(w->out, buf, n);
		if (k > 0)
			return (la_ssize_t)k;
		if (k < 0 && errno == EINTR)
			continue;
		archive_set_error(a, k < 0 ? errno : EIO, "Write error");
		return -1;
	}
}

static int tw_fail(llr_tensor_writer *w, llr_err *err, const char *member)
{
	w->failed = 1;
	const char *s = archive_error_string(w->a);
	int e = archive_errno(w->a);
	/* libarchive says "Write error" and keeps the reason in errno */
	const char *why = e > 0 ? strerror(e) : "write error";
	if (!s || (e > 0 && !strcmp(s, "Write error")))
		s = why;
	if (member)
		return llr_err_set(err, LLR_EIO, "%s: %s: %s", w->name, member, s);
	return llr_err_set(err, LLR_EIO, "%s: %s", w->name, s);
}

static void tw_free(llr_tensor_writer *w)
{
	if (w->a)
		archive_write_free(w->a);
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp)
		unlink(w->tmp);
	free(w->name);
	free(w->path);
	free(w->tmp);
	llr_strmap_free(w->members);
	free(w);
}

/* Create path.tmp-PID-N exclusively (mode 0666 less the umask); a
 * special path (/dev/null, a FIFO) is opened in place, with no temporary. */
static int make_temp(llr_tensor_writer *w, llr_err *err)
{
	if (llr_path_is_special(w->path)) {
		w->fd = open(w->path, O_WRONLY | O_CLOEXEC);
		if (w->fd < 0)
			return llr_err_set(err, LLR_EIO, "%s: %s", w->name, strerror(errno));
		return LLR_OK;
	}
	size_t n = strlen(w->path) + 48;
	w->tmp = malloc(n);
	if (!w->tmp)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(w->tmp, n, "%s.tmp-%ld-%u", w->path, (long)getpid(), i);
		w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (w->fd >= 0)
			return LLR_OK;
		if (errno != EEXIST) {
			int e = errno;
			free(w->tmp);
			w->tmp = NULL;
			return llr_err_set(err, LLR_EIO, "%s: %s", w->name, strerror(e));
		}
	}
	free(w->tmp);
	w->tmp = NULL;
	return llr_err_set(err, LLR_EIO, "%s: cannot create a temporary file", w->name);
}

/* A regular member's header: its name, size and CRC-32C. */
static int tw_header(llr_tensor_writer *w, const char *mname, int64_t size, uint32_t crc, llr_err *err)
{
	char hex[9];
	snprintf(hex, sizeof hex, "%08x", (unsigned)crc);
	struct archive_entry *e = archive_entry_new();
	if (!e)
		return w->failed = 1, llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
	archive_entry_xattr_add_entry(e, CRC_XATTR, hex, 8);
	archive_entry_set_pathname(e, mname);
	archive_entry_set_size(e, (la_int64_t)size);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, 0, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	int r = archive_write_header(w->a, e);
	archive_entry_free(e);
	return r < ARCHIVE_OK ? tw_fail(w, err, mname) : LLR_OK;
}

/* Bytes to the member whose header was written. */
static int tw_data(llr_tensor_writer *w, const char *mname, const char *p, size_t left, llr_err *err)
{
	while (left > 0) {
		la_ssize_t wr = archive_write_data(w->a, p, LLR_MIN(left, (size_t)IO_CHUNK));
		if (wr <= 0)
			return tw_fail(w, err, mname);
		p += wr;
		left -= (size_t)wr;
	}
	return LLR_OK;
}

/* One regular member: header, then the given pieces of data. */
static int tw_member(llr_tensor_writer *w, const char *mname, const void *p1, size_t n1, const void *p2, size_t n2, int swap_es, llr_err *err)
{
	if (w->failed)
		return llr_err_set(err, LLR_EIO, "%s: write after an error", w->name);
	if ((int64_t)n1 + (int64_t)n2 > LLR_MAX_MEMBER) {
		w->failed = 1;
		return llr_err_set(err, LLR_ERANGE, "%s: member %s: %zu bytes, over the 4 GiB limit", w->name, mname, n1 + n2);
	}
	const void *ps[2] = {p1, p2};
	size_t ns[2] = {n1, n2};
	char *tmp = NULL;
	uint32_t crc = 0;
	for (int k = 0; k < 2; k++) { /* the CRC of the bytes as stored */
		if (k == 1 && swap_es > 1) {
			const char *p = ps[k];
			for (size_t left = ns[k]; left > 0;) {
				size_t n = LLR_MIN(left, (size_t)IO_CHUNK);
				if (!tmp && !(tmp = malloc(IO_CHUNK)))
					return w->failed = 1, llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
				memcpy(tmp, p, n);
				swap_bytes(tmp, n / (size_t)swap_es, (size_t)swap_es);
				crc = llr_crc32c(crc, tmp, n);
				p += n;
				left -= n;
			}
		} else if (ns[k]) {
			crc = llr_crc32c(crc, ps[k], ns[k]);
		}
	}
	if (swap_es > 1 && ns[1] && !tmp && !(tmp = malloc(IO_CHUNK)))
		return w->failed = 1, llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
	int rc = tw_header(w, mname, (int64_t)(n1 + n2), crc, err);
	for (int k = 0; k < 2 && rc == LLR_OK; k++) {
		if (k == 0 || swap_es <= 1) {
			rc = tw_data(w, mname, ps[k], ns[k], err);
			continue;
		}
		for (size_t at = 0; at < ns[k] && rc == LLR_OK; at += IO_CHUNK) { /* big-endian host: write LE */
			size_t n = LLR_MIN(ns[k] - at, (size_t)IO_CHUNK);
			memcpy(tmp, (const char *)ps[k] + at, n);
			swap_bytes(tmp, n / (size_t)swap_es, (size_t)swap_es);
			rc = tw_data(w, mname, tmp, n, err);
		}
	}
	free(tmp);
	return rc;
}

static int tw_claim(llr_tensor_writer *w, const char *name, const char *kind, llr_err *err)
{
	if (!name_ok(name) || !strcmp(name, "meta"))
		return llr_err_set(err, LLR_EINVAL, "%s: bad %s member name '%s'", w->name, kind, name);
	size_t before = llr_strmap_size(w->members);
	if (llr_strmap_add(w->members, name, strlen(name)) < 0)
		return w->failed = 1, llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
	if (llr_strmap_size(w->members) == before)
		return llr_err_set(err, LLR_EINVAL, "%s: member '%s' written twice", w->name, name);
	return LLR_OK;
}

/* Member name.npy: the .npy header of (dt, ndim, shape), then the array's
 * bytes read from fd from its start (little-endian already); crc is the
 * CRC-32C of all of them, the header included. */
int llr_tw_put_npy_fd(llr_tensor_writer *w, const char *name, llr_dtype dt, int ndim, const int64_t *shape, int fd, uint32_t crc,
                      llr_err *err)
{
	int64_t nbytes = shape_bytes(dt, ndim, shape);
	if (!npy_descr(dt) || ndim < 0 || ndim > LLR_MAX_DIMS || nbytes < 0 || ends_with_npy(name))
		return llr_err_set(err, LLR_EINVAL, "%s: %s: not a tensor the archive can hold", w->name, name);
	if (w->failed)
		return llr_err_set(err, LLR_EIO, "%s: write after an error", w->name);
	int rc = tw_claim(w, name, "tensor", err);
	if (rc < 0)
		return rc;
	char *mname = malloc(strlen(name) + 5), *chunk = malloc(IO_CHUNK);
	llr_buf h = {0};
	if (!mname || !chunk || llr_npy_header(&h, dt, ndim, shape) != LLR_OK) {
		rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
		w->failed = 1;
		goto done;
	}
	sprintf(mname, "%s.npy", name);
	if ((int64_t)h.len + nbytes > LLR_MAX_MEMBER) {
		w->failed = 1;
		rc = llr_err_set(err, LLR_ERANGE, "%s: member %s: %lld bytes, over the 4 GiB limit", w->name, mname, (long long)(h.len + nbytes));
		goto done;
	}
	if ((rc = tw_header(w, mname, (int64_t)h.len + nbytes, crc, err)) != LLR_OK || (rc = tw_data(w, mname, h.data, h.len, err)) != LLR_OK)
		goto done;
	for (int64_t at = 0; at < nbytes && rc == LLR_OK;) {
		ssize_t k = pread(fd, chunk, (size_t)LLR_MIN(nbytes - at, (int64_t)IO_CHUNK), (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			w->failed = 1;
			rc = llr_err_set(err, LLR_EIO, "%s: %s: its temporary file: %s", w->name, mname, k < 0 ? strerror(errno) : "shorter than declared");
			break;
		}
		rc = tw_data(w, mname, chunk, (size_t)k, err);
		at += k;
	}
done:
	free(mname);
	free(chunk);
	llr_buf_free(&h);
	return rc;
}

llr_tensor_writer *llr_tw_open(const char *path, const char *kind, const llr_meta *meta, llr_err *err)
{
	int to_stdout = !path || !strcmp(path, "-");
	llr_tensor_writer *w = calloc(1, sizeof *w);
	if (!w) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	w->fd = -1;
	w->name = strdup(to_stdout ? "<stdout>" : path);
	w->path = to_stdout ? NULL : strdup(path);
	w->members = llr_strmap_new();
	w->a = archive_write_new();
	if (!w->name || (!to_stdout && !w->path) || !w->members || !w->a) {
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", to_stdout ? "<stdout>" : path);
		tw_free(w);
		return NULL;
	}
	if (!kind || !name_ok(kind)) {
		llr_err_set(err, LLR_EINVAL, "%s: bad archive kind '%s'", w->name, kind ? kind : "(null)");
		tw_free(w);
		return NULL;
	}
	if (!to_stdout && make_temp(w, err) < 0) {
		tw_free(w);
		return NULL;
	}
	if (archive_write_set_format_pax_restricted(w->a) != ARCHIVE_OK ||
	    llr_compress_add_filter(w->a, llr_compress_for_path(w->path)) != LLR_OK ||
	    /* the checksum once, as SCHILY.xattr.*, which GNU tar knows */
	    archive_write_set_format_option(w->a, "pax", "xattrheader", "SCHILY") < ARCHIVE_WARN ||
	    archive_write_set_bytes_in_last_block(w->a, 1) != ARCHIVE_OK ||
	    /* to a file, whole 2 MiB writes at 2 MiB offsets: the page cache
	     * then holds it in huge folios, which a reader's mapping
	     * (tarmap.c) maps 2 MiB a TLB entry; the bytes are the same (to
	     * stdout, libarchive's 10 KiB blocks, out as they fill) */
	    (!to_stdout && archive_write_set_bytes_per_block(w->a, 2 << 20) != ARCHIVE_OK) ||
	    (w->out = to_stdout ? 1 : w->fd, archive_write_open2(w->a, w, NULL, tw_write, NULL, NULL)) != ARCHIVE_OK) {
		tw_fail(w, err, NULL);
		tw_free(w);
		return NULL;
	}
	llr_meta *m = llr_meta_new();
	llr_buf text = {0};
	int rc = m ? LLR_OK : LLR_ENOMEM;
	if (rc == LLR_OK)
		rc = llr_meta_set(m, "format", "llrnn");
	if (rc == LLR_OK)
		rc = llr_meta_setf(m, "version", "%d", LLR_FORMAT_VERSION);
	if (rc == LLR_OK)
		rc = llr_meta_set(m, "kind", kind);
	if (rc == LLR_OK)
		rc = llr_meta_set(m, "checksum", "crc32c");
	for (size_t i = 0; meta && rc == LLR_OK && i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		if (strcmp(k, "format") && strcmp(k, "version") && strcmp(k, "kind") && strcmp(k, "checksum"))
			rc = llr_meta_set(m, k, v);
	}
	if (rc == LLR_OK)
		rc = llr_meta_format(m, &text);
	llr_meta_free(m);
	if (rc != LLR_OK) {
		llr_err_set(err, rc, "%s: meta: %s", w->name, llr_strerror(rc));
		llr_buf_free(&text);
		tw_free(w);
		return NULL;
	}
	rc = tw_member(w, "meta", text.data, text.len, NULL, 0, 0, err);
	llr_buf_free(&text);
	if (rc != LLR_OK) {
		tw_free(w);
		return NULL;
	}
	return w;
}

int llr_tw_put_raw(llr_tensor_writer *w, const char *name, llr_dtype dt, int ndim, const int64_t *shape, const void *data, llr_err *err)
{
	if (!npy_descr(dt))
		return llr_err_set(err, LLR_EINVAL, "%s: %s: unknown dtype %d", w->name, name, (int)dt);
	if (ndim < 0 || ndim > LLR_MAX_DIMS)
		return llr_err_set(err, LLR_EINVAL, "%s: %s: %d dimensions (at most %d)", w->name, name, ndim, LLR_MAX_DIMS);
	int64_t nbytes = shape_bytes(dt, ndim, shape);
	if (nbytes < 0)
		return llr_err_set(err, LLR_ERANGE, "%s: %s: shape is negative or over the 4 GiB member limit", w->name, name);
	if (ends_with_npy(name))
		return llr_err_set(err, LLR_EINVAL, "%s: tensor name '%s' must not end in .npy (added by the writer)", w->name, name);
	int rc = tw_claim(w, name, "tensor", err);
	if (rc < 0)
		return rc;
	char *mname = malloc(strlen(name) + 5);
	llr_buf h = {0};
	if (!mname || llr_npy_header(&h, dt, ndim, shape) != LLR_OK) {
		free(mname);
		llr_buf_free(&h);
		w->failed = 1;
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
	}
	sprintf(mname, "%s.npy", name);
	rc = tw_member(w, mname, h.data, h.len, data, (size_t)nbytes, host_le() ? 0 : (int)llr_dtype_size(dt), err);
	free(mname);
	llr_buf_free(&h);
	return rc;
}

int llr_tw_put(llr_tensor_writer *w, const char *name, const llr_tensor *t, llr_err *err)
{
	return llr_tw_put_raw(w, name, t->dtype, t->ndim, t->shape, t->data, err);
}

int llr_tw_put_text(llr_tensor_writer *w, const char *name, const char *text, size_t len, llr_err *err)
{
	if (ends_with_npy(name))
		return llr_err_set(err, LLR_EINVAL, "%s: text member '%s' must not end in .npy", w->name, name);
	int rc = tw_claim(w, name, "text", err);
	if (rc < 0)
		return rc;
	return tw_member(w, name, text, len, NULL, 0, 0, err);
}

int llr_tw_put_csr(llr_tensor_writer *w, const char *name, const llr_csr *m, llr_err *err)
{
	size_t n = strlen(name);
	char *buf = malloc(n + 16);
	if (!buf)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", w->name);
	int64_t rows1 = (int64_t)m->rows + 1, nnz = m->nnz;
	sprintf(buf, "%s/indptr", name);
	int rc = llr_tw_put_raw(w, buf, LLR_I32, 1, &rows1, m->indptr, err);
	if (rc == LLR_OK) {
		sprintf(buf, "%s/indices", name);
		rc = llr_tw_put_raw(w, buf, LLR_I32, 1, &nnz, m->indices, err);
	}
	if (rc == LLR_OK) {
		sprintf(buf, "%s/data", name);
		rc = llr_tw_put_raw(w, buf, LLR_F32, 1, &nnz, m->data, err);
	}
	free(buf);
	return rc;
}

int llr_tw_close(llr_tensor_writer *w, llr_err *err)
{
	if (!w)
		return LLR_OK;
	int rc = LLR_OK;
	if (w->failed)
		rc = llr_err_set(err, LLR_EIO, "%s: not written (an earlier write failed)", w->name);
	else if (archive_write_close(w->a) != ARCHIVE_OK)
		rc = tw_fail(w, err, NULL);
	if (rc == LLR_OK && w->fd >= 0) {
		int fd = w->fd;
		w->fd = -1;
		if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
			rc = llr_err_set(err, LLR_EIO, "%s: %s", w->name, strerror(errno));
			close(fd);
		} else if (close(fd) < 0) {
			rc = llr_err_set(err, LLR_EIO, "%s: %s", w->name, strerror(errno));
		} else if (w->tmp && rename(w->tmp, w->path) < 0) {
			rc = llr_err_set(err, LLR_EIO, "%s: %s", w->name, strerror(errno));
		} else {
			free(w->tmp);
			w->tmp = NULL; /* renamed: nothing to remove */
		}
	}
	tw_free(w);
	return rc;
}

/* archive_write_fail first, so that archive_write_free does not close
 * the archive cleanly: on standard output or a pipe what was written
 * stays a cut stream, without its last buffered block and without the
 * end-of-archive blocks, which every reader refuses as truncated
 * (tr_advance), never a shorter archive that looks whole. */
void llr_tw_abort(llr_tensor_writer *w)
{
	if (!w)
		return;
	w->cut = 1;
	tw_free(w);
}

/* ---------------------------------------------------------------- reader */

struct llr_tensor_reader {
	struct archive *a;
	char *name;      /* the path or "<stdin>" */
	llr_meta *meta;
	char *member;    /* current member (name as stored) */
	char *shown;     /* and without .npy */
	int is_npy;
	int64_t size, done; /* declared size, bytes read */
	int state;       /* 0 member current, 1 end, -1 failed */
	int has_crc;     /* the current member carries a CRC-32C */
	int checked;     /* and it has been checked */
	uint32_t want_crc, crc; /* the stored CRC, the CRC of what was read */
	int need_crc;           /* a checksummed file: every member has one */
	int crc_bad;            /* a member failed its check */
};

/* libarchive's read failure as an LLR code and "name: member: reason". */
static int tr_fail(llr_tensor_reader *r, llr_err *err, const char *what)
{
	r->state = -1;
	const char *s = archive_error_string(r->a);
	int e = archive_errno(r->a);
	int code = LLR_EFORMAT;
	/* libarchive fails without a word when the stream ends inside a pax
	 * extended header (the checksum's) */
	if (!s && e <= 0) {
		s = "truncated stream (ends inside a member's pax header)";
		code = LLR_ETRUNC;
	}
	if (!s)
		s = strerror(e);
	if (code == LLR_ETRUNC || strstr(s, "runcat") || strstr(s, "remature") || strstr(s, "nexpected end"))
		code = LLR_ETRUNC;
	else if (e == ENOMEM)
		code = LLR_ENOMEM;
	else if (e > 0 && e != EILSEQ && e != EINVAL)
		code = LLR_EIO;
	if (what)
		return llr_err_set(err, code, "%s: %s: %s", r->name, what, s);
	return llr_err_set(err, code, "%s: %s", r->name, s);
}

static int tr_crc_mismatch(llr_tensor_reader *r, llr_err *err)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* the fuzz harnesses (tests/fuzz): let inputs past the CRC, into
	 * the parsers behind it */
	(void)err;
	return LLR_OK;
#endif
	r->state = -1;
	r->crc_bad = 1;
	return llr_err_set(err, LLR_EFORMAT, "%s: member %s: checksum mismatch (corrupted file)", r->name, r->member);
}

/* Exactly n bytes of the current member into buf; the member's CRC is
 * checked with its last byte. */
static int tr_read(llr_tensor_reader *r, void *buf, size_t n, llr_err *err)
{
	char *p = buf;
	while (n > 0) {
		size_t want = LLR_MIN(n, (size_t)1 << 30);
		ssize_t got = llr_archive_data(r->a, p, want);
		if (got < 0) {
			char what[300];
			snprintf(what, sizeof what, "member %s", r->member);
			return tr_fail(r, err, what);
		}
		if (got == 0) {
			r->state = -1;
			return llr_err_set(err, LLR_ETRUNC, "%s: member %s: ends after %lld of %lld bytes (truncated stream)", r->name, r->member, (long long)r->done, (long long)r->size);
		}
		if (r->has_crc)
			r->crc = llr_crc32c(r->crc, p, (size_t)got);
		p += got;
		n -= (size_t)got;
		r->done += got;
	}
	if (r->has_crc && r->done == r->size && !r->checked) {
		r->checked = 1;
		if (r->crc != r->want_crc)
			return tr_crc_mismatch(r, err);
	}
	return LLR_OK;
}

/* n bytes of the member into a new buffer of n + extra bytes (*out, for
 * free()).  The buffer grows with the bytes that arrive, from 1 MiB,
 * doubling: a header that declares gigabytes over a stream that ends
 * early is reported as truncated, not first allocated (a fuzzed pax size
 * made libFuzzer's malloc limit fail on CI). */
static int tr_read_alloc(llr_tensor_reader *r, size_t n, size_t extra, char **out, llr_err *err)
{
	*out = NULL;
	char *buf = NULL;
	size_t have = 0, cap = LLR_MIN(n, FIRST_READ);
	for (;;) {
		char *b = llr_reallocarray(buf, cap + extra, 1);
		if (!b) {
			free(buf);
			return llr_err_set(err, LLR_ENOMEM, "%s: member %s: out of memory for %zu bytes", r->name, r->member, cap + extra);
		}
		buf = b;
		int rc = tr_read(r, buf + have, cap - have, err);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		if ((have = cap) == n)
			break;
		cap = n - cap > cap ? 2 * cap : n;
	}
	*out = buf;
	return LLR_OK;
}

/* Before leaving a member: read what the caller left of it and check its
 * CRC, so a damaged member the caller skips is still reported. */
static int tr_finish(llr_tensor_reader *r, llr_err *err)
{
	if (r->state != 0 || !r->has_crc || r->checked)
		return LLR_OK;
	char buf[4096];
	while (r->done < r->size) {
		int rc = tr_read(r, buf, (size_t)LLR_MIN(r->size - r->done, (int64_t)sizeof buf), err);
		if (rc < 0)
			return rc;
	}
	if (!r->checked) { /* an empty member */
		r->checked = 1;
		if (r->crc != r->want_crc)
			return tr_crc_mismatch(r, err);
	}
	return LLR_OK;
}

/* A member refused before its end (bad .npy header, wrong shape): when
 * its CRC fails, the damage is the reason, so say that instead. */
static int tr_blame(llr_tensor_reader *r, int rc, llr_err *err)
{
	if (rc >= 0 || r->state != 0 || !r->has_crc || r->checked)
		return rc;
	llr_err e = {0};
	if (tr_finish(r, &e) < 0 && r->crc_bad) {
		if (err)
			*err = e;
		return e.code;
	}
	return rc;
}

/* The member's stored CRC: 1 with *crc, 0 when it has none, -1 when the
 * value is not 8 hex digits. */
static int entry_crc(struct archive_entry *e, uint32_t *crc)
{
	const char *name;
	const void *v;
	size_t n;
	int found = 0;
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &name, &v, &n) == ARCHIVE_OK) {
		if (strcmp(name, CRC_XATTR))
			continue;
		const char *s = v;
		uint32_t x = 0;
		if (n != 8)
			return -1;
		for (size_t i = 0; i < 8; i++) {
			int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			                                                                        : -1;
			if (d < 0)
				return -1;
			x = x << 4 | (uint32_t)d;
		}
		if (found && x != *crc)
			return -1;
		*crc = x;
		found = 1;
	}
	return found;
}

/* Advance to the next regular member: 1, 0 at a proper end, <0. */
static int tr_advance(llr_tensor_reader *r, llr_err *err)
{
	int frc = tr_finish(r, err);
	if (frc < 0)
		return frc;
	for (;;) {
		struct archive_entry *e;
		int rc = llr_archive_header(r->a, &e);
		if (rc == ARCHIVE_EOF) {
			/* A tar ends with zero blocks; a stream cut exactly
			 * between two members ends without them. */
			if (archive_filter_bytes(r->a, 0) <= archive_read_header_position(r->a)) {
				r->state = -1;
				if (r->member)
					return llr_err_set(err, LLR_ETRUNC, "%s: truncated stream (ends after member %s without the end-of-archive blocks)", r->name, r->member);
				return 0; /* nothing at all: the caller says what */
			}
			r->state = 1;
			return 0;
		}
		if (rc < ARCHIVE_WARN) {
			if (r->member) {
				char what[300];
				snprintf(what, sizeof what, "after member %s", r->member);
				return tr_fail(r, err, what);
			}
			return tr_fail(r, err, NULL);
		}
		if (archive_entry_filetype(e) != AE_IFREG)
			continue;
		const char *pn = archive_entry_pathname(e);
		if (!pn)
			pn = "";
		char *m = strdup(pn);
		size_t n = strlen(pn);
		char *shown = llr_strndup(pn, ends_with_npy(pn) ? n - 4 : n);
		if (!m || !shown) {
			free(m);
			free(shown);
			r->state = -1;
			return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", r->name);
		}
		free(r->member);
		free(r->shown);
		r->member = m;
		r->shown = shown;
		r->is_npy = ends_with_npy(pn);
		r->size = archive_entry_size_is_set(e) ? (int64_t)archive_entry_size(e) : -1;
		r->done = 0;
		r->state = 0;
		r->checked = 0;
		r->crc = 0;
		r->has_crc = entry_crc(e, &r->want_crc);
		if (r->has_crc < 0) {
			r->state = -1;
			return llr_err_set(err, LLR_EFORMAT, "%s: member %s: malformed checksum in its header (corrupted file)", r->name, r->member);
		}
		if (r->need_crc && !r->has_crc) {
			r->state = -1;
			return llr_err_set(err, LLR_EFORMAT, "%s: member %s: no checksum in its header (corrupted file)", r->name, r->member);
		}
		if (r->size < 0) {
			r->state = -1;
			return llr_err_set(err, LLR_EFORMAT, "%s: member %s: no size in its header", r->name, r->member);
		}
		if (r->size > LLR_MAX_MEMBER) {
			r->state = -1;
			return llr_err_set(err, LLR_ERANGE, "%s: member %s: %lld bytes, over the 4 GiB limit", r->name, r->member, (long long)r->size);
		}
		return 1;
	}
}

/* The tool that makes archives of a kind, for mismatch messages. */
static const char *kind_maker(const char *kind)
{
	static const char *const table[][2] = {
		{"features", "featurize"},
		{"model", "train"},
		{"ngram", "train --ngram"},
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (!strcmp(kind, table[i][0]))
			return table[i][1];
	return NULL;
}

static const char *article(const char *w)
{
	return strchr("aeiouAEIOU", w[0]) && w[0] ? "an" : "a";
}

static int tr_check_meta(llr_tensor_reader *r, const char *kind, llr_err *err)
{
	const char *f = llr_meta_get(r->meta, "format");
	if (!f || strcmp(f, "llrnn"))
		return llr_err_set(err, LLR_EKIND, "%s: not an llrnn tensor archive (meta has %s%s%s, expected format=llrnn)", r->name, f ? "format=" : "no format key", f ? f : "", "");
	int64_t v;
	llr_err e = {0};
	if (llr_meta_get_i64(r->meta, "version", &v, &e) < 0)
		return llr_err_set(err, LLR_EFORMAT, "%s: %s", r->name, e.msg);
	if (v > LLR_FORMAT_VERSION)
		return llr_err_set(err, LLR_EKIND, "%s: written by a newer llrnn (version %lld > %d): upgrade llrnn", r->name, (long long)v, LLR_FORMAT_VERSION);
	if (v < 1)
		return llr_err_set(err, LLR_EFORMAT, "%s: meta: bad version %lld", r->name, (long long)v);
	const char *k = llr_meta_get(r->meta, "kind");
	if (!k)
		return llr_err_set(err, LLR_EFORMAT, "%s: meta: missing key 'kind'", r->name);
	if (kind && strcmp(k, kind)) {
		const char *maker = kind_maker(kind), *made = kind_maker(k);
		char by[64] = "";
		if (made)
			snprintf(by, sizeof by, " (made by %s)", made);
		if (maker)
			return llr_err_set(err, LLR_EKIND, "%s: is %s '%s' archive%s, expected %s '%s'; make one with '%s'", r->name, article(k), k, by, article(kind), kind, maker);
		return llr_err_set(err, LLR_EKIND, "%s: is %s '%s' archive%s, expected %s '%s'", r->name, article(k), k, by, article(kind), kind);
	}
	return LLR_OK;
}

llr_tensor_reader *llr_tr_open(const char *path, const char *kind, llr_err *err)
{
	int from_stdin = !path || !strcmp(path, "-");
	llr_tensor_reader *r = calloc(1, sizeof *r);
	if (!r || !(r->name = strdup(from_stdin ? "<stdin>" : path)) || !(r->a = archive_read_new()) || !(r->meta = llr_meta_new())) {
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", from_stdin ? "<stdin>" : path);
		llr_tr_close(r);
		return NULL;
	}
	archive_read_support_filter_all(r->a);
	archive_read_support_format_tar(r->a);
	archive_read_support_format_empty(r->a);
	int rc = from_stdin ? archive_read_open_fd(r->a, 0, IO_CHUNK) : archive_read_open_filename(r->a, path, IO_CHUNK);
	if (rc != ARCHIVE_OK) {
		int e = archive_errno(r->a);
		llr_err fe = {0};
		if (e > 0 && e != EILSEQ)
			llr_err_set(err, LLR_EIO, "%s: %s", r->name, strerror(e));
		else if (tr_fail(r, &fe, NULL) == LLR_EFORMAT)
			llr_err_set(err, LLR_EKIND, "%s: not an llrnn tensor archive (%s)", r->name, archive_error_string(r->a) ? archive_error_string(r->a) : "unreadable");
		else if (err)
			*err = fe;
		llr_tr_close(r);
		return NULL;
	}
	llr_err e = {0};
	rc = tr_advance(r, &e);
	if (rc <= 0) {
		if (rc == 0)
			llr_err_set(err, LLR_EKIND, "%s: empty, not an llrnn tensor archive", r->name);
		else if (e.code == LLR_EFORMAT)
			llr_err_set(err, LLR_EKIND, "%s: not an llrnn tensor archive (%s)", r->name, archive_error_string(r->a) ? archive_error_string(r->a) : "unreadable");
		else if (err)
			*err = e;
		llr_tr_close(r);
		return NULL;
	}
	if (strcmp(r->member, "meta")) {
		llr_err_set(err, LLR_EKIND, "%s: not an llrnn tensor archive (first member is '%.100s', not 'meta')", r->name, r->member);
		llr_tr_close(r);
		return NULL;
	}
	r->need_crc = r->has_crc;
	if (r->size > LLR_MAX_META) {
		llr_err_set(err, LLR_ERANGE, "%s: meta: %lld bytes, over the 16 MiB limit", r->name, (long long)r->size);
		llr_tr_close(r);
		return NULL;
	}
	char *text = malloc((size_t)r->size + 1);
	if (!text) {
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", r->name);
		llr_tr_close(r);
		return NULL;
	}
	rc = tr_read(r, text, (size_t)r->size, err);
	if (rc == LLR_OK) {
		rc = llr_meta_parse(r->meta, text, (size_t)r->size, &e);
		if (rc < 0)
			llr_err_set(err, rc, "%s: meta: %s", r->name, e.msg);
	}
	free(text);
	if (rc == LLR_OK)
		rc = tr_check_meta(r, kind, err);
	if (rc == LLR_OK) {
		const char *ck = llr_meta_get(r->meta, "checksum");
		if (ck && strcmp(ck, "crc32c"))
			rc = llr_err_set(err, LLR_EKIND, "%s: meta: checksum=%s not supported (only crc32c): upgrade llrnn", r->name, ck);
		else if (ck && !r->has_crc)
			rc = llr_err_set(err, LLR_EFORMAT, "%s: member meta: no checksum in its header (corrupted file)", r->name);
		r->need_crc = r->need_crc || ck;
	}
	if (rc < 0) {
		llr_tr_close(r);
		return NULL;
	}
	return r;
}

const llr_meta *llr_tr_meta(const llr_tensor_reader *r)
{
	return r->meta;
}

int llr_tr_next(llr_tensor_reader *r, const char **name, llr_err *err)
{
	if (r->state == 1)
		return 0;
	if (r->state < 0)
		return llr_err_set(err, LLR_EIO, "%s: read after an error", r->name);
	int rc = tr_advance(r, err);
	if (rc == 1 && name)
		*name = r->shown;
	return rc;
}

/* Read and check the .npy preamble of the current member. */
static int tr_npy_header(llr_tensor_reader *r, llr_dtype *dt, int *ndim, int64_t *shape, int64_t *nbytes, llr_err *err)
{
	if (r->state != 0)
		return llr_err_set(err, LLR_EINVAL, "%s: no current member", r->name);
	if (!r->is_npy)
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s is text, not a .npy tensor", r->name, r->member);
	if (r->done)
		return llr_err_set(err, LLR_EINVAL, "%s: member %s already read", r->name, r->member);
	unsigned char pre[12];
	if (r->size < 10)
		return llr_err_set(err, LLR_ETRUNC, "%s: member %s: %lld bytes, too short for a .npy file (truncated member)", r->name, r->member, (long long)r->size);
	int rc = tr_read(r, pre, 8, err);
	if (rc < 0)
		return rc;
	if (memcmp(pre, NPY_MAGIC, 6))
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s: not a .npy file (bad magic)", r->name, r->member);
	int major = pre[6];
	size_t plen = major == 1 ? 10 : 12;
	if (major < 1 || major > 3)
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s: .npy version %d.%d not supported", r->name, r->member, pre[6], pre[7]);
	if (r->size < (int64_t)plen)
		return llr_err_set(err, LLR_ETRUNC, "%s: member %s: truncated .npy preamble", r->name, r->member);
	if ((rc = tr_read(r, pre + 8, plen - 8, err)) < 0)
		return rc;
	uint64_t hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
	if (major > 1)
		hlen |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
	if (hlen > NPY_MAX_HEADER)
		return llr_err_set(err, LLR_ERANGE, "%s: member %s: .npy header of %llu bytes (limit %d)", r->name, r->member, (unsigned long long)hlen, NPY_MAX_HEADER);
	if ((int64_t)(plen + hlen) > r->size)
		return llr_err_set(err, LLR_ETRUNC, "%s: member %s: .npy header runs past the member's %lld bytes (truncated member)", r->name, r->member, (long long)r->size);
	char *h = malloc(hlen + 1);
	if (!h)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", r->name);
	rc = tr_read(r, h, hlen, err);
	if (rc == LLR_OK) {
		char why[160];
		if (npy_parse(h, hlen, dt, ndim, shape, why, sizeof why) < 0)
			rc = llr_err_set(err, LLR_EFORMAT, "%s: member %s: bad .npy header: %s", r->name, r->member, why);
	}
	free(h);
	if (rc < 0)
		return rc;
	int64_t need = shape_bytes(*dt, *ndim, shape), have = r->size - (int64_t)(plen + hlen);
	char sh[96];
	if (need < 0)
		return llr_err_set(err, LLR_ERANGE, "%s: member %s: shape %s %s is over the 4 GiB member limit", r->name, r->member, llr_shape_str(*ndim, shape, sh, sizeof sh), llr_dtype_name(*dt));
	if (have < need)
		return llr_err_set(err, LLR_ETRUNC, "%s: member %s: shape %s %s needs %lld bytes, the member holds %lld (truncated member)", r->name, r->member, llr_shape_str(*ndim, shape, sh, sizeof sh), llr_dtype_name(*dt), (long long)need, (long long)have);
	if (have > need)
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s: %lld stray bytes after the data of shape %s %s", r->name, r->member, (long long)(have - need), llr_shape_str(*ndim, shape, sh, sizeof sh), llr_dtype_name(*dt));
	*nbytes = need;
	return LLR_OK;
}

int llr_tr_tensor_expect(llr_tensor_reader *r, llr_dtype dt, int ndim, const int64_t *shape, llr_tensor **out, llr_err *err)
{
	*out = NULL;
	llr_dtype fdt = 0;
	int fnd = 0;
	int64_t fsh[LLR_MAX_DIMS] = {0}, nbytes = 0;
	int rc = tr_npy_header(r, &fdt, &fnd, fsh, &nbytes, err);
	if (rc < 0)
		return tr_blame(r, rc, err);
	if (dt) {
		int ok = fdt == dt && fnd == ndim;
		for (int i = 0; ok && i < ndim; i++)
			ok = shape[i] < 0 || shape[i] == fsh[i];
		if (!ok) {
			char a[96], b[96];
			llr_shape_str(fnd, fsh, a, sizeof a);
			llr_shape_str(ndim, shape, b, sizeof b);
			for (char *p = b; *p; p++) /* "-1" entries read as "any" */
				if (p[0] == '-' && p[1] == '1')
					p[0] = '*', memmove(p + 1, p + 2, strlen(p + 2) + 1);
			rc = llr_err_set(err, LLR_EFORMAT, "%s: member %s: %s %s, expected %s %s", r->name, r->member, llr_dtype_name(fdt), fnd ? a : "scalar", llr_dtype_name(dt), ndim ? b : "scalar");
			return tr_blame(r, rc, err);
		}
	}
	char *data;
	if ((rc = tr_read_alloc(r, (size_t)nbytes, 0, &data, err)) < 0)
		return rc;
	llr_tensor *t = calloc(1, sizeof *t);
	if (!t) {
		free(data);
		return llr_err_set(err, LLR_ENOMEM, "%s: member %s: out of memory", r->name, r->member);
	}
	t->dtype = fdt;
	t->ndim = fnd;
	memcpy(t->shape, fsh, sizeof fsh);
	t->data = data;
	if (!host_le())
		swap_bytes(t->data, llr_tensor_numel(t), llr_dtype_size(fdt));
	*out = t;
	return LLR_OK;
}

int llr_tr_tensor(llr_tensor_reader *r, llr_tensor **out, llr_err *err)
{
	return llr_tr_tensor_expect(r, 0, 0, NULL, out, err);
}

int llr_tr_text(llr_tensor_reader *r, char **text, size_t *len, llr_err *err)
{
	*text = NULL;
	if (r->state != 0)
		return llr_err_set(err, LLR_EINVAL, "%s: no current member", r->name);
	if (r->is_npy)
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s is a .npy tensor, not text", r->name, r->member);
	if (r->done)
		return llr_err_set(err, LLR_EINVAL, "%s: member %s already read", r->name, r->member);
	char *t;
	int rc = tr_read_alloc(r, (size_t)r->size, 1, &t, err);
	if (rc < 0)
		return rc;
	t[r->size] = 0;
	*text = t;
	if (len)
		*len = (size_t)r->size;
	return LLR_OK;
}

int llr_tr_csr(llr_tensor_reader *r, const char *name, int32_t cols, llr_csr **out, llr_err *err)
{
	*out = NULL;
	static const char *const parts[3] = {"indptr", "indices", "data"};
	llr_tensor *t[3] = {NULL, NULL, NULL};
	int rc = LLR_OK;
	char want[256];
	if (cols < 0)
		return llr_err_set(err, LLR_EINVAL, "%s: %s: negative column count", r->name, name);
	for (int i = 0; i < 3 && rc == LLR_OK; i++) {
		snprintf(want, sizeof want, "%s/%s", name, parts[i]);
		if (i > 0) {
			const char *got;
			rc = llr_tr_next(r, &got, err);
			if (rc == 0)
				rc = llr_err_set(err, LLR_EFORMAT, "%s: missing member %s.npy (the stream ends)", r->name, want);
			if (rc < 0)
				break;
			rc = LLR_OK;
		}
		if (r->state != 0 || strcmp(r->shown, want) || !r->is_npy) {
			rc = llr_err_set(err, LLR_EFORMAT, "%s: expected member %s.npy, found %s", r->name, want, r->state == 0 ? r->member : "nothing");
			break;
		}
		int64_t any = -1;
		rc = llr_tr_tensor_expect(r, i == 2 ? LLR_F32 : LLR_I32, 1, &any, &t[i], err);
	}
	if (rc == LLR_OK) {
		int64_t rows1 = t[0]->shape[0], nnz = t[1]->shape[0];
		if (rows1 < 1 || rows1 - 1 > INT32_MAX)
			rc = llr_err_set(err, LLR_EFORMAT, "%s: %s/indptr: %lld entries, expected rows + 1 with 0 <= rows <= %d", r->name, name, (long long)rows1, INT32_MAX);
		else if (nnz > INT32_MAX)
			rc = llr_err_set(err, LLR_ERANGE, "%s: %s: %lld entries, over the %d limit", r->name, name, (long long)nnz, INT32_MAX);
		else if (t[2]->shape[0] != nnz)
			rc = llr_err_set(err, LLR_EFORMAT, "%s: %s: indices has %lld entries, data %lld", r->name, name, (long long)nnz, (long long)t[2]->shape[0]);
		if (rc == LLR_OK) {
			llr_csr *m = calloc(1, sizeof *m);
			if (!m) {
				rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", r->name);
			} else {
				m->rows = (int32_t)(rows1 - 1);
				m->cols = cols;
				m->nnz = (int32_t)nnz;
				m->indptr = t[0]->data;
				m->indices = t[1]->data;
				m->data = t[2]->data;
				for (int i = 0; i < 3; i++)
					t[i]->data = NULL;
				rc = llr_csr_check(m, err);
				if (rc < 0) {
					llr_err_prefix(err, "%s: %s", r->name, name);
					llr_csr_free(m);
				} else {
					*out = m;
				}
			}
		}
	}
	for (int i = 0; i < 3; i++)
		llr_tensor_free(t[i]);
	return rc;
}

void llr_tr_close(llr_tensor_reader *r)
{
	if (!r)
		return;
	if (r->a)
		archive_read_free(r->a);
	llr_meta_free(r->meta);
	free(r->name);
	free(r->member);
	free(r->shown);
	free(r);
}
