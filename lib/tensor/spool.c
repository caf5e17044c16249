/*
 * spool.c - a tensor-archive member whose bytes come before they can be
 * written (the n-gram trie built from sorted streams on disk, in a
 * memory budget): a 1-D array of a declared length, appended an element
 * at a time to an unlinked temporary file, its CRC-32C computed a buffer
 * at a time (the archive wants the CRC in the member's header, before the
 * bytes),
 * then copied into the archive by llr_tw_put_npy_fd.  Memory: one
 * buffer of LLR_TW_SPOOL_BYTES.  Not here: the archive (tensorio.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define SPOOL_BUF LLR_TW_SPOOL_BYTES

struct llr_tw_spool {
	int fd;
	llr_dtype dt;
	size_t es;           /* bytes an element */
	int64_t n, have;     /* declared, appended */
	uint32_t crc;        /* of the .npy header and the bytes flushed */
	char *buf;
	size_t used;         /* bytes in buf */
	off_t off;           /* bytes in the file */
	char *dir;           /* for messages */
};

static int spool_flush(llr_tw_spool *s, llr_err *err)
{
	s->crc = llr_crc32c(s->crc, s->buf, s->used);
	for (size_t at = 0; at < s->used;) {
		ssize_t k = pwrite(s->fd, s->buf + at, s->used - at, s->off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return llr_err_set(err, LLR_EIO, "%s: a temporary file: %s", s->dir, k < 0 ? strerror(errno) : "write failed");
		at += (size_t)k;
		s->off += k;
	}
	s->used = 0;
	return LLR_OK;
}

llr_tw_spool *llr_tw_spool_new(const char *dir, llr_dtype dt, int64_t n, llr_err *err)
{
	llr_tw_spool *s = calloc(1, sizeof *s);
	llr_buf h = {0};
	size_t dl = strlen(dir);
	if (!s || !(s->buf = malloc(SPOOL_BUF)) || !(s->dir = malloc(dl + 24)) || llr_npy_header(&h, dt, 1, &n) != LLR_OK) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (s) {
			free(s->buf);
			free(s->dir);
		}
		free(s);
		llr_buf_free(&h);
		return NULL;
	}
	s->dt = dt;
	s->es = llr_dtype_size(dt);
	s->n = n;
	s->crc = llr_crc32c(0, h.data, h.len);
	llr_buf_free(&h);
	snprintf(s->dir, dl + 24, "%s/llrnn-spool-XXXXXX", dir);
	s->fd = mkstemp(s->dir);
	if (s->fd < 0) {
		llr_err_set(err, LLR_EIO, "%s: %s", dir, strerror(errno));
		free(s->buf);
		free(s->dir);
		free(s);
		return NULL;
	}
	unlink(s->dir);
	s->dir[dl] = 0;
	return s;
}

int llr_tw_spool_add(llr_tw_spool *s, const void *elem, llr_err *err)
{
	if (s->have == s->n)
		return llr_err_set(err, LLR_EINVAL, "a spooled member: more than its %lld elements", (long long)s->n);
	if (s->used + s->es > SPOOL_BUF && spool_flush(s, err) != LLR_OK)
		return LLR_EIO;
	char *at = s->buf + s->used;
	memcpy(at, elem, s->es);
	const uint16_t one = 1;
	if (!*(const unsigned char *)&one) /* big-endian host: stored little-endian */
		for (size_t i = 0; i < s->es / 2; i++) {
			char c = at[i];
			at[i] = at[s->es - 1 - i];
			at[s->es - 1 - i] = c;
		}
	s->used += s->es;
	s->have++;
	return LLR_OK;
}

int llr_tw_put_spool(llr_tensor_writer *w, const char *name, llr_tw_spool *s, llr_err *err)
{
	if (s->have != s->n)
		return llr_err_set(err, LLR_EINVAL, "%s: %lld elements of the %lld declared", name, (long long)s->have, (long long)s->n);
	int rc = spool_flush(s, err);
	return rc == LLR_OK ? llr_tw_put_npy_fd(w, name, s->dt, 1, &s->n, s->fd, s->crc, err) : rc;
}

void llr_tw_spool_free(llr_tw_spool *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s->buf);
	free(s->dir);
	free(s);
}
