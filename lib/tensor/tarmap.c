/*
 * tarmap.c - an uncompressed tensor archive (llrnn-tensor(5)) mapped into
 * memory, its members found in place: the ustar headers and the pax
 * extended headers before them are walked over the mapping, each
 * member's data is a pointer into it, and nothing is read until it is
 * touched.  This is what the n-gram probing form (lib/ngram/probing.c)
 * loads in milliseconds.  Not here: the streaming reader (tensorio.c,
 * libarchive), which reads pipes and compressed archives front to back
 * and checks every CRC as it goes; here checking a CRC is the caller's
 * choice (llr_tarmap_verify).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CRC_KEY "SCHILY.xattr.user.llrnn.crc32c"

struct llr_tarmap {
	const unsigned char *map;
	size_t len;
	llr_tarmap_member *m;
	size_t n;
	char *path;
};

/* The octal number of a ustar field, or -1. */
static int64_t octal(const unsigned char *p, size_t n)
{
	int64_t v = 0;
	size_t i = 0;
	while (i < n && p[i] == ' ')
		i++;
	if (i == n || p[i] < '0' || p[i] > '7')
		return -1;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++)
		v = v * 8 + (p[i] - '0');
	return v;
}

/* The path and the CRC of a pax extended header's records ("LEN
 * key=value\n" each) into m; -1 if they are malformed. */
static int pax_records(const unsigned char *p, size_t n, llr_tarmap_member *m)
{
	size_t i = 0;
	while (i < n) {
		size_t len = 0, j = i;
		while (j < n && p[j] >= '0' && p[j] <= '9' && len < n)
			len = len * 10 + (p[j++] - '0');
		if (j == i || j >= n || p[j] != ' ' || len == 0 || len > n - i || p[i + len - 1] != '\n')
			return -1;
		const char *kv = (const char *)p + j + 1;
		size_t kvlen = i + len - 1 - (j + 1);
		const char *eq = memchr(kv, '=', kvlen);
		if (eq) {
			size_t kl = (size_t)(eq - kv), vl = kvlen - kl - 1;
			if (kl == 4 && !memcmp(kv, "path", 4) && vl < sizeof m->name) {
				memcpy(m->name, eq + 1, vl);
				m->name[vl] = 0;
			} else if (kl == strlen(CRC_KEY) && !memcmp(kv, CRC_KEY, kl) && vl == 8) {
				char hex[9];
				memcpy(hex, eq + 1, 8);
				hex[8] = 0;
				char *end;
				m->crc = (uint32_t)strtoul(hex, &end, 16);
				m->has_crc = *end == 0;
			}
		}
		i += len;
	}
	return 0;
}

static int walk(llr_tarmap *t, llr_err *err)
{
	size_t off = 0, cap = 0;
	llr_tarmap_member cur = {0};
	int have_pax = 0;
	while (off + 512 <= t->len) {
		const unsigned char *h = t->map + off;
		int zero = 1;
		for (int i = 0; i < 512 && zero; i++)
			zero = h[i] == 0;
		if (zero)
			return LLR_OK;
		if (memcmp(h + 257, "ustar", 5))
			return llr_err_set(err, LLR_EFORMAT, "%s: not an uncompressed tar archive", t->path);
		int64_t size = octal(h + 124, 12);
		if (size < 0 || (uint64_t)size > t->len - off - 512)
			return llr_err_set(err, LLR_EFORMAT, "%s: member at byte %zu: bad size (truncated file?)", t->path, off);
		const unsigned char *data = h + 512;
		char type = (char)h[156];
		if (type == 'x') {
			memset(&cur, 0, sizeof cur);
			if (pax_records(data, (size_t)size, &cur) < 0)
				return llr_err_set(err, LLR_EFORMAT, "%s: member at byte %zu: malformed pax header", t->path, off);
			have_pax = 1;
		} else {
			if (!have_pax)
				memset(&cur, 0, sizeof cur);
			if (!cur.name[0]) {
				size_t pl = strnlen((const char *)h + 345, 155), nl = strnlen((const char *)h, 100);
				snprintf(cur.name, sizeof cur.name, "%.*s%s%.*s", (int)pl, h + 345, pl ? "/" : "", (int)nl, h);
			}
			if (type == '0' || type == 0) {
				if (t->n == cap) {
					cap = cap ? 2 * cap : 16;
					llr_tarmap_member *m = llr_reallocarray(t->m, cap, sizeof *m);
					if (!m)
						return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", t->path);
					t->m = m;
				}
				cur.data = data;
				cur.size = (size_t)size;
				t->m[t->n++] = cur;
			}
			have_pax = 0;
		}
		off += 512 + (((size_t)size + 511) & ~(size_t)511);
	}
	return llr_err_set(err, LLR_ETRUNC, "%s: the archive ends early (truncated file)", t->path);
}

int llr_tarmap_open(const char *path, llr_tarmap **out, llr_err *err)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return llr_err_set(err, LLR_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 1024) {
		close(fd);
		return llr_err_set(err, LLR_EFORMAT, "%s: not a regular uncompressed archive", path);
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return llr_err_set(err, LLR_EIO, "%s: mmap: %s", path, strerror(errno));
	llr_tarmap *t = llr_calloc(1, sizeof *t);
	if (!t || !(t->path = strdup(path))) {
		free(t);
		munmap(map, (size_t)st.st_size);
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	}
	t->map = map;
	t->len = (size_t)st.st_size;
	int rc = memcmp(t->map + 257, "ustar", 5) ? llr_err_set(err, LLR_EFORMAT, "%s: not an uncompressed tar archive", path)
	                                          : walk(t, err);
	if (rc != LLR_OK) {
		llr_tarmap_close(t);
		return rc;
	}
	*out = t;
	return LLR_OK;
}

void llr_tarmap_close(llr_tarmap *t)
{
	if (!t)
		return;
	munmap((void *)t->map, t->len);
	free(t->m);
	free(t->path);
	free(t);
}

/* FilePmdMapped of this process (/proc/self/smaps_rollup, Linux), in
 * KiB: what of its mapped files is mapped 2 MiB a page table entry; -1
 * when it cannot be read. */
static long file_pmd_kib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "re");
	if (!f)
		return -1;
	char line[256];
	long kib = -1;
	while (kib < 0 && fgets(line, sizeof line, f))
		if (sscanf(line, "FilePmdMapped: %ld kB", &kib) != 1)
			kib = -1;
	fclose(f);
	return kib;
}

#define HUGE ((uintptr_t)2 << 20)

int llr_tarmap_huge(const llr_tarmap *t, const void *data, size_t len)
{
	uintptr_t lo = ((uintptr_t)data + HUGE - 1) & ~(HUGE - 1), hi = ((uintptr_t)data + len) & ~(HUGE - 1);
	if ((const unsigned char *)data < t->map || len > t->len || (size_t)((const unsigned char *)data - t->map) > t->len - len ||
	    hi <= lo)
		return 0;
#ifdef MADV_HUGEPAGE
	/* read from disk, the range comes into the page cache as huge folios */
	madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
	/* 8 of its 2 MiB pages, evenly spread, touched: how many came in as one */
	long before = file_pmd_kib(), n = (long)((hi - lo) / HUGE), k = n < 8 ? n : 8;
	if (before < 0)
		return 0;
	for (long i = 0; i < k; i++)
		(void)*(volatile const unsigned char *)(lo + (uintptr_t)(i * n / k) * HUGE);
	return (file_pmd_kib() - before) * 2 >= k * (long)(HUGE >> 10);
}

size_t llr_tarmap_count(const llr_tarmap *t)
{
	return t->n;
}

const llr_tarmap_member *llr_tarmap_at(const llr_tarmap *t, size_t i)
{
	return i < t->n ? &t->m[i] : NULL;
}

const llr_tarmap_member *llr_tarmap_find(const llr_tarmap *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->m[i].name, name))
			return &t->m[i];
	return NULL;
}

int llr_tarmap_verify(const llr_tarmap *t, const llr_tarmap_member *m, llr_err *err)
{
	if (!m->has_crc)
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s: no checksum", t->path, m->name);
	if (llr_crc32c(0, m->data, m->size) != m->crc)
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s: checksum mismatch (corrupted file)", t->path, m->name);
	return LLR_OK;
}

int llr_tarmap_array(const llr_tarmap *t, const char *name, llr_dtype dt, int ndim, const int64_t *shape, const void **data,
                     const llr_tarmap_member **mem, llr_err *err)
{
	char full[256];
	snprintf(full, sizeof full, "%s.npy", name);
	const llr_tarmap_member *m = llr_tarmap_find(t, full);
	if (!m)
		return llr_err_set(err, LLR_EFORMAT, "%s: no member %s", t->path, full);
	llr_buf h = {0};
	if (llr_npy_header(&h, dt, ndim, shape) != LLR_OK)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", t->path);
	size_t n = llr_dtype_size(dt);
	for (int i = 0; i < ndim; i++)
		n *= (size_t)shape[i];
	int ok = m->size == h.len + n && !memcmp(m->data, h.data, h.len);
	size_t hl = h.len;
	llr_buf_free(&h);
	if (!ok)
		return llr_err_set(err, LLR_EFORMAT, "%s: member %s: not a %s array of the size the meta declares", t->path, full,
		                   llr_dtype_name(dt));
	*data = m->data + hl;
	if (mem)
		*mem = m;
	return LLR_OK;
}
