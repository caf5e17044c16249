/*
 * score_stdin.c - line input for score and gen that answers line by line
 * when standard input is a pipe or a terminal (coprocess use).  Files and
 * a regular file on standard input go through llr_lines_open (libarchive,
 * any compression); libarchive reads a pipe ahead until its buffer fills
 * or the input ends, which would stall a coprocess, so a non-regular
 * standard input is read here with read(2) as plain text instead, and
 * compressed data on it is refused with a message saying what to do.
 */
#include "score_lm.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fdsrc {
	int fd;
	int first;
} fdsrc;

static fdsrc stdin_src;

static int compressed_magic(const unsigned char *b, size_t n)
{
	static const struct {
		const char *m;
		size_t n;
	} magic[] = {
		{"\x1f\x8b", 2},              /* gzip */
		{"BZh", 3},                   /* bzip2 */
		{"\xfd" "7zXZ\x00", 6},       /* xz */
		{"\x28\xb5\x2f\xfd", 4},      /* zstd */
	};
	for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
		if (n >= magic[i].n && !memcmp(b, magic[i].m, magic[i].n))
			return 1;
	return 0;
}

static ssize_t fd_read(void *src, void *buf, size_t n, llr_err *err)
{
	fdsrc *s = src;
	ssize_t r;
	do
		r = read(s->fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return llr_err_set(err, LLR_EIO, "<stdin>: %s", strerror(errno));
	if (s->first && r > 0) {
		s->first = 0;
		if (compressed_magic(buf, (size_t)r))
			return llr_err_set(err, LLR_EFORMAT, "<stdin>: compressed data on a pipe: give the file name, or decompress it first (zcat, xzcat, zstdcat)");
	}
	return r;
}

llr_lines *slm_lines_open(const char *path, llr_err *err)
{
	struct stat st;
	if ((!path || !strcmp(path, "-")) && fstat(0, &st) == 0 && !S_ISREG(st.st_mode)) {
		stdin_src.fd = 0;
		stdin_src.first = 1;
		llr_lines *l = llr_lines_from(fd_read, &stdin_src, "<stdin>", 0);
		if (!l)
			llr_err_set(err, LLR_ENOMEM, "<stdin>: out of memory");
		return l;
	}
	return llr_lines_open(path, 0, err);
}
