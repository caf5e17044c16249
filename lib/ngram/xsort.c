/*
 * xsort.c - external sorting of fixed-size records for n-gram estimation
 * in bounded memory (count.c spills its counts here, xestimate.c sorts
 * the n-grams of each order by their suffix and by their context).
 *
 * A record begins with nkey 32-bit word ids (below V) and carries a
 * payload after them; it is ordered by the words cols[0..ncols), most
 * significant first.  Records are gathered in a buffer of at most
 * cfg->mem bytes with its sort scratch (an LSD radix sort, one counting
 * pass per column, from the buffer into a scratch buffer of the same
 * size); a full buffer is sorted and written as a run.  A caller that
 * has its records sorted already writes them as a run directly
 * (llr_xsort_run_put).  Runs of equal keys are folded into one record
 * by the combine function, if any, wherever records are written or
 * read; on disk each is the words that differ from the record before
 * it (below).  Runs live in two temporary files in cfg->dir, created with
 * mkstemp and unlinked at once, so nothing is left on disk whatever
 * way the process ends; a merge pass reads at most cfg->fanin runs of
 * one file through buffers of cfg->iobuf bytes each and appends their
 * merge to the other file, then empties the first, until at most fanin
 * runs are left, which the reader merges as it goes.  With
 * cfg->threads > 1 the sort of a run is split among threads (each
 * with counts of its own, within cfg->mem), and its result is the
 * one thread's to the byte.  Not here: what the records mean.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ngram.h"


typedef struct xrun {
	uint64_t off, len; /* bytes in the file */
} xrun;

/* On disk a record is its 32-bit words that differ from the record
 * before it in its run (the first against zeros): a mask of hb bytes,
 * bit i for word i, little-endian, then those words.  Sorted runs share
 * leading words, and the padding and the high halves of small counts
 * are zeros: the files of a 5-gram took 0.35 of the records' bytes
 * (bench/README.md).  It costs user time to encode and decode. */
#define XMAXW 16 /* words a record may have (xestimate.c: 14 at most) */

typedef struct xreader {
	int fd;
	uint64_t pos, end; /* what is left to read */
	char *buf;
	size_t have, at; /* bytes in buf, the next encoded record's offset */
	int valid;       /* cur holds the current record (else the one before) */
	_Alignas(8) uint32_t cur[XMAXW]; /* aligned as the records of a buffer were */
} xreader;

/* A merge of runs as it is read: its readers, their heap, the record
 * folded.  The sort has one (merge passes, llr_xsort_next); a cursor
 * (llr_xsort_cursor_new) is another over the same runs, which another
 * thread may read at the same time (pread, nothing written). */
typedef struct xcursor {
	xreader *in;
	int nin, *heap, nheap;
	int advance; /* the top reader's record was handed out in place: move past it first */
	char *out;
} xcursor;

struct llr_xsort_cursor {
	const llr_xsort *s;
	xcursor c;
};

struct llr_xsort {
	llr_xsort_cfg cfg;
	size_t rec, kbytes;
	int words, hb;  /* the record's 32-bit words, its mask bytes on disk */
	size_t ebytes;  /* the most bytes of a record on disk */
	int cols[LLR_NGRAM_MAX_ORDER + 1], ncols;
	int presorted; /* the records come in the order of cols[presorted .. ncols) */
	uint32_t V;
	void (*combine)(void *into, const void *from, size_t rec);
	char *buf; /* the records being gathered */
	size_t n, cap, most;
	char *scratch; /* the sort's second buffer, of scap records, kept between runs */
	size_t scap;
	uint32_t *cnt; /* its counts, kept too */
	/* the spill in the background (cfg->threads > 1): a full buffer
	 * handed to a thread of its own, which sorts it with the scratch
	 * buffer and writes it as a run while the next buffer fills; it owns
	 * sbuf, scratch, spare, cnt and the writer until joined */
	int bg, busy;
	pthread_t th;
	char *sbuf, *spare; /* the buffer it sorts; a free one of most records */
	size_t sn;
	int brc;
	llr_err berr;
	int fd[2], cur; /* runs live in fd[cur] */
	uint64_t size[2];
	xrun *runs;
	size_t nruns, runcap;
	/* the writer of a run: its buffer and the record held back for folding */
	char *wbuf;
	size_t wlen, wcap;
	uint32_t wprev[XMAXW]; /* the run's last record written */
	char *pending;
	int has_pending, in_run;
	uint64_t run_off;
	/* reading: the merge of the last runs */
	int reading;
	xcursor rd;
	uint64_t records, passes, written;
};

/* The threads of a sort: cfg->threads within 1 .. LLR_NGRAM_MAX_THREADS. */
static int x_threads(const llr_xsort *s)
{
	return s->cfg.threads < 1 ? 1 : s->cfg.threads > LLR_NGRAM_MAX_THREADS ? LLR_NGRAM_MAX_THREADS : s->cfg.threads;
}

static int x_errno(const llr_xsort *s, int e, const char *what, llr_err *err)
{
	return llr_err_set(err, LLR_EIO, "%s: %s a temporary file: %s", s->cfg.dir, what, strerror(e));
}

/* a against b by the columns cols[from .. ncols). */
static int x_cmp_from(const llr_xsort *s, int from, const char *a, const char *b)
{
	const uint32_t *x = (const uint32_t *)a, *y = (const uint32_t *)b;
	for (int i = from; i < s->ncols; i++)
		if (x[s->cols[i]] != y[s->cols[i]])
			return x[s->cols[i]] < y[s->cols[i]] ? -1 : 1;
	return 0;
}

static int x_cmp(const llr_xsort *s, const char *a, const char *b)
{
	return x_cmp_from(s, 0, a, b);
}

llr_xsort *llr_xsort_new(const llr_xsort_cfg *cfg, size_t rec, int nkey, const int *cols, int ncols, uint32_t V,
                         void (*combine)(void *into, const void *from, size_t rec), llr_err *err)
{
	LLR_ASSERT(rec % 4 == 0 && rec >= (size_t)nkey * 4 && rec <= XMAXW * 4 && ncols <= LLR_NGRAM_MAX_ORDER + 1 && cfg->fanin >= 2);
	llr_xsort *s = llr_calloc(1, sizeof *s);
	if (!s) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	s->rec = rec;
	s->kbytes = (size_t)nkey * 4;
	s->words = (int)(rec / 4);
	s->hb = (s->words + 7) / 8;
	s->ebytes = (size_t)s->hb + rec;
	memcpy(s->cols, cols, (size_t)ncols * sizeof *cols);
	s->ncols = ncols;
	s->presorted = ncols;
	s->V = V;
	s->combine = combine;
	s->fd[0] = s->fd[1] = -1;
	size_t cnt = (size_t)x_threads(s) * ((size_t)V + 1) * sizeof(uint32_t);
	s->bg = x_threads(s) > 1;
	s->most = cfg->mem > cnt ? (cfg->mem - cnt) / ((s->bg ? 3 : 2) * rec) : 0; /* the buffers: filling, (sorting,) scratch */
	if (cfg->run_records && cfg->run_records < s->most)
		s->most = cfg->run_records;
	/* the buffers are wcap bytes and 8 more (a word decoded past the
	 * last is read, not used), iobuf in all */
	s->wcap = cfg->iobuf > s->ebytes + 8 ? cfg->iobuf - 8 : s->ebytes;
	if (!(s->pending = llr_malloc(rec)) || !(s->rd.out = llr_malloc(rec))) {
		llr_xsort_free(s);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	return s;
}

static int x_open(llr_xsort *s, int i, llr_err *err)
{
	if (s->fd[i] >= 0)
		return LLR_OK;
	size_t n = strlen(s->cfg.dir) + 32;
	char *path = llr_malloc(n);
	if (!path)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	snprintf(path, n, "%s/llrnn-sort-XXXXXX", s->cfg.dir);
	s->fd[i] = mkstemp(path);
	int e = errno;
	if (s->fd[i] >= 0)
		unlink(path);
	free(path);
	return s->fd[i] < 0 ? x_errno(s, e, "cannot create", err) : LLR_OK;
}

/* The write buffer to the end of fd[cur]. */
static int w_flush(llr_xsort *s, llr_err *err)
{
	int f = s->fd[s->cur];
	size_t done = 0;
	while (done < s->wlen) {
		ssize_t k = pwrite(f, s->wbuf + done, s->wlen - done, (off_t)(s->size[s->cur] + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return x_errno(s, k < 0 ? errno : ENOSPC, "cannot write", err);
		done += (size_t)k;
	}
	s->size[s->cur] += done;
	s->wlen = 0;
	return LLR_OK;
}

/* Record rec of w words encoded at o against prev (then rec); the end
 * of its bytes.  Inlined for each size (the loops unrolled). */
static inline __attribute__((always_inline)) unsigned char *x_enc(unsigned char *o, const void *rec, uint32_t *prev, int w)
{
	const int hb = (w + 7) / 8;
	unsigned char *q = o + hb;
	uint32_t mask = 0;
#pragma GCC unroll 16
	for (int i = 0; i < w; i++) {
		uint32_t v;
		memcpy(&v, (const char *)rec + 4 * i, 4);
		memcpy(q, &v, 4); /* kept if it differs */
		uint32_t d = v != prev[i];
		mask |= d << i;
		q += 4 * d;
		prev[i] = v;
	}
	o[0] = (unsigned char)mask;
	if (hb > 1)
		o[1] = (unsigned char)(mask >> 8);
	return q;
}

/* The record encoded at p decoded into cur (the record before it); the
 * end of its bytes. */
static inline __attribute__((always_inline)) const unsigned char *x_dec(const unsigned char *p, uint32_t *cur, int w)
{
	const int hb = (w + 7) / 8;
	uint32_t mask = p[0] | (hb > 1 ? (uint32_t)p[1] << 8 : 0);
	p += hb;
#pragma GCC unroll 16
	for (int i = 0; i < w; i++) {
		uint32_t v;
		memcpy(&v, p, 4); /* the next word stored, or bytes past the last */
		uint32_t d = mask >> i & 1;
		cur[i] = d ? v : cur[i];
		p += 4 * d;
	}
	return p;
}

/* x_enc or x_dec at the record sizes xsort's callers use, else any. */
#define X_SIZES(call, w)                                                                         \
	switch (w) {                                                                                 \
	case 4: call(4); break;                                                                      \
	case 6: call(6); break;                                                                      \
	case 8: call(8); break;                                                                      \
	case 10: call(10); break;                                                                    \
	case 12: call(12); break;                                                                    \
	case 14: call(14); break;                                                                    \
	default: call(w); break;                                                                     \
	}

static int w_put(llr_xsort *s, const void *rec, llr_err *err)
{
	if (s->wcap - s->wlen < s->ebytes) {
		int rc = w_flush(s, err);
		if (rc != LLR_OK)
			return rc;
	}
	unsigned char *o = (unsigned char *)s->wbuf + s->wlen;
#define ENC(w) o = x_enc(o, rec, s->wprev, w)
	X_SIZES(ENC, s->words)
#undef ENC
	s->wlen = (size_t)((char *)o - s->wbuf);
	return LLR_OK;
}

/* Begin a run at the end of fd[cur]. */
static int run_begin(llr_xsort *s, llr_err *err)
{
	int rc = x_open(s, s->cur, err);
	if (rc != LLR_OK)
		return rc;
	if (!s->wbuf && !(s->wbuf = llr_malloc(s->wcap + 8)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (s->nruns == s->runcap) {
		size_t cap = s->runcap ? 2 * s->runcap : 16;
		xrun *r = llr_reallocarray(s->runs, cap, sizeof *r);
		if (!r)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		s->runs = r;
		s->runcap = cap;
	}
	s->in_run = 1;
	s->has_pending = 0;
	memset(s->wprev, 0, sizeof s->wprev);
	s->run_off = s->size[s->cur];
	return LLR_OK;
}

int llr_xsort_run_put(llr_xsort *s, const void *rec, llr_err *err)
{
	int rc;
	if (!s->in_run && (rc = run_begin(s, err)) != LLR_OK)
		return rc;
	if (!s->combine) /* nothing to fold: no record held back */
		return w_put(s, rec, err);
	if (s->has_pending && !memcmp(s->pending, rec, s->kbytes)) {
		s->combine(s->pending, rec, s->rec);
		return LLR_OK;
	}
	if (s->has_pending && (rc = w_put(s, s->pending, err)) != LLR_OK)
		return rc;
	memcpy(s->pending, rec, s->rec);
	s->has_pending = 1;
	return LLR_OK;
}

int llr_xsort_run_end(llr_xsort *s, llr_err *err)
{
	if (!s->in_run)
		return LLR_OK;
	int rc = LLR_OK;
	if (s->has_pending)
		rc = w_put(s, s->pending, err);
	if (rc == LLR_OK)
		rc = w_flush(s, err);
	s->in_run = s->has_pending = 0;
	if (rc != LLR_OK)
		return rc;
	if (s->size[s->cur] > s->run_off)
		s->runs[s->nruns++] = (xrun){s->run_off, s->size[s->cur] - s->run_off}, s->written++;
	return LLR_OK;
}

/* One thread's part of a counting pass of the radix sort: the records
 * [lo, hi) of src, their counts by the word at column at into cnt[0..V)
 * (phase 0), then moved to dst at the offsets cnt holds (phase 1). */
typedef struct xpart {
	const char *src;
	char *dst;
	size_t rec, at, lo, hi;
	uint32_t V, *cnt;
	int phase;
} xpart;

/* Phase 1 of x_part with records of size bytes. */
#define SCATTER(p, size)                                                                        \
	for (size_t i = (p)->lo; i < (p)->hi; i++) {                                            \
		const char *r = (p)->src + i * (size);                                          \
		memcpy((p)->dst + (size_t)(p)->cnt[((const uint32_t *)r)[(p)->at]]++ * (size), r, (size)); \
	}

static void *x_part(void *arg)
{
	xpart *p = arg;
	if (p->phase == 0) {
		memset(p->cnt, 0, (size_t)p->V * sizeof *p->cnt);
		for (size_t i = p->lo; i < p->hi; i++)
			p->cnt[((const uint32_t *)(p->src + i * p->rec))[p->at]]++;
	} else {
		switch (p->rec) { /* the copy inlined for the sizes xestimate.c uses */
		case 16: SCATTER(p, 16); break;
		case 24: SCATTER(p, 24); break;
		case 32: SCATTER(p, 32); break;
		case 40: SCATTER(p, 40); break;
		case 48: SCATTER(p, 48); break;
		case 56: SCATTER(p, 56); break;
		default: SCATTER(p, p->rec); break;
		}
	}
	return NULL;
}

void llr_parts_run(void *(*fn)(void *), void *part, size_t size, int k)
{
	pthread_t th[LLR_NGRAM_MAX_THREADS];
	int started[LLR_NGRAM_MAX_THREADS] = {0};
	LLR_ASSERT(k >= 1 && k <= LLR_NGRAM_MAX_THREADS);
	for (int t = 1; t < k; t++)
		started[t] = pthread_create(&th[t], NULL, fn, (char *)part + (size_t)t * size) == 0;
	fn(part);
	for (int t = 1; t < k; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			fn((char *)part + (size_t)t * size);
	}
}

void llr_parts_offsets(uint32_t *cnt, size_t stride, int k, uint32_t V)
{
	uint32_t run = 0;
	for (uint32_t v = 0; v < V; v++)
		for (int t = 0; t < k; t++) {
			uint32_t *c = cnt + (size_t)t * stride + v, here = *c;
			*c = run;
			run += here;
		}
}

/* The n records of *a sorted (ping-pong with *b, of as many records)
 * and written as a run; both buffers are free after.  The sort is
 * stable, an LSD radix sort over the columns; with cfg->threads > 1
 * each counting pass is split among threads by ranges of records, each
 * with its own counts, whose offsets are laid out range after range:
 * the records land where one thread puts them. */
static int sort_write(llr_xsort *s, char **a, char **b, size_t n, llr_err *err)
{
	int k = x_threads(s);
	if ((size_t)k > n)
		k = (int)n;
	xpart part[LLR_NGRAM_MAX_THREADS];
	char *src = *a, *dst = *b;
	int from = s->presorted;
	for (size_t i = 1; i < n && from < s->ncols; i++)
		if (x_cmp_from(s, from, src + (i - 1) * s->rec, src + i * s->rec) > 0)
			from = s->ncols; /* not in that order after all */
	for (int c = from - 1; c >= 0; c--) {
		for (int t = 0; t < k; t++)
			part[t] = (xpart){src, dst, s->rec, (size_t)s->cols[c], n * (size_t)t / (size_t)k, n * (size_t)(t + 1) / (size_t)k,
			                  s->V, s->cnt + (size_t)t * s->V, 0};
		llr_parts_run(x_part, part, sizeof *part, k);
		llr_parts_offsets(s->cnt, s->V, k, s->V);
		for (int t = 0; t < k; t++)
			part[t].phase = 1;
		llr_parts_run(x_part, part, sizeof *part, k);
		char *t = src;
		src = dst;
		dst = t;
	}
	*a = src; /* sorted */
	*b = dst;
	int rc = LLR_OK;
	for (size_t i = 0; i < n && rc == LLR_OK; i++)
		rc = llr_xsort_run_put(s, src + i * s->rec, err);
	return rc == LLR_OK ? llr_xsort_run_end(s, err) : rc;
}

/* The background spill's thread: sbuf sorted and written, its two
 * buffers left as spare and scratch. */
static void *bg_spill(void *arg)
{
	llr_xsort *s = arg;
	char *a = s->sbuf, *b = s->scratch;
	s->brc = sort_write(s, &a, &b, s->sn, &s->berr);
	s->spare = a;
	s->scratch = b;
	s->sbuf = NULL;
	s->sn = 0;
	return NULL;
}

/* The background spill waited for; its error, if any. */
static int x_join(llr_xsort *s, llr_err *err)
{
	if (!s->busy)
		return LLR_OK;
	pthread_join(s->th, NULL);
	s->busy = 0;
	if (s->brc != LLR_OK && err)
		*err = s->berr;
	return s->brc;
}

/* The scratch buffer of cap records and the counts, for a sort. */
static int x_sort_bufs(llr_xsort *s, llr_err *err)
{
	if (s->scap < s->cap) {
		free(s->scratch);
		s->scap = (s->scratch = llr_malloc(s->cap * s->rec)) ? s->cap : 0;
	}
	if (!s->cnt && s->V)
		s->cnt = llr_malloc((size_t)x_threads(s) * s->V * sizeof *s->cnt);
	if (!s->scratch || (!s->cnt && s->V))
		return llr_err_set(err, LLR_ENOMEM, "out of memory sorting n-grams");
	return LLR_OK;
}

/* The buffer sorted and written as a run, here (the other buffer kept
 * as scratch for the next run; a full buffer is sorted before it
 * grows, so both hold cap records). */
static int spill(llr_xsort *s, llr_err *err)
{
	int rc = x_join(s, err);
	if (rc != LLR_OK || s->n == 0 || (rc = x_sort_bufs(s, err)) != LLR_OK)
		return rc;
	rc = sort_write(s, &s->buf, &s->scratch, s->n, err);
	s->scap = s->cap;
	s->n = 0;
	return rc;
}

/* The full buffer (of most records) handed to the background spill,
 * once the previous one is done, and a free one to fill: three buffers
 * of most records at most, as llr_xsort_new counted.  A thread that
 * cannot start: the spill is done here. */
static int spill_bg(llr_xsort *s, llr_err *err)
{
	int rc = x_join(s, err);
	if (rc != LLR_OK || (rc = x_sort_bufs(s, err)) != LLR_OK)
		return rc;
	char *next = s->spare ? s->spare : llr_malloc(s->cap * s->rec);
	if (!next)
		return llr_err_set(err, LLR_ENOMEM, "out of memory sorting n-grams");
	s->spare = NULL;
	s->sbuf = s->buf;
	s->sn = s->n;
	s->buf = next;
	s->n = 0;
	s->brc = LLR_OK;
	if (pthread_create(&s->th, NULL, bg_spill, s) == 0) {
		s->busy = 1;
		return LLR_OK;
	}
	bg_spill(s);
	if (s->brc != LLR_OK && err)
		*err = s->berr;
	return s->brc;
}

/* The buffers of the sort freed (the last run written). */
static void x_free_sort(llr_xsort *s)
{
	x_join(s, NULL);
	free(s->buf);
	free(s->scratch);
	free(s->spare);
	free(s->cnt);
	s->buf = s->scratch = s->spare = NULL;
	s->cnt = NULL;
	s->n = s->cap = s->scap = 0;
}

void llr_xsort_presorted(llr_xsort *s, int k)
{
	LLR_ASSERT(k >= 0 && k <= s->ncols);
	s->presorted = k;
}

int llr_xsort_add(llr_xsort *s, const void *rec, llr_err *err)
{
	if (s->n == s->cap) {
		int rc;
		if (s->n >= s->most && (rc = (s->bg ? spill_bg : spill)(s, err)) != LLR_OK)
			return rc;
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 4096;
			if (cap > s->most)
				cap = s->most;
			char *b = llr_reallocarray(s->buf, cap, s->rec);
			if (!b)
				return llr_err_set(err, LLR_ENOMEM, "out of memory sorting n-grams");
			s->buf = b;
			s->cap = cap;
		}
	}
	memcpy(s->buf + s->n * s->rec, rec, s->rec);
	s->n++;
	s->records++;
	return LLR_OK;
}

/* The reader's buffer refilled after the bytes not yet decoded. */
static int rd_fill(xreader *r, size_t bufsize)
{
	size_t keep = r->have - r->at;
	memmove(r->buf, r->buf + r->at, keep);
	r->have = keep;
	r->at = 0;
	bufsize -= keep;
	size_t want = r->end - r->pos < bufsize ? (size_t)(r->end - r->pos) : bufsize;
	size_t got = 0;
	while (got < want) {
		ssize_t k = pread(r->fd, r->buf + keep + got, want - got, (off_t)(r->pos + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		got += (size_t)k;
	}
	r->pos += got;
	r->have = keep + got;
	return 0;
}

/* The reader's current record, NULL at its end; errno-style code in *e. */
static const char *rd_rec(const llr_xsort *s, xreader *r, int *e)
{
	if (r->valid)
		return (const char *)r->cur;
	if (r->have - r->at < s->ebytes && r->pos < r->end && (*e = rd_fill(r, s->wcap)) != 0)
		return NULL;
	if (r->at == r->have)
		return NULL;
	const unsigned char *p = (const unsigned char *)r->buf + r->at;
#define DEC(w) p = x_dec(p, r->cur, w)
	X_SIZES(DEC, s->words)
#undef DEC
	r->at = (size_t)((const char *)p - r->buf);
	r->valid = 1;
	return (const char *)r->cur;
}

static int heap_less(const llr_xsort *s, const xcursor *c, int a, int b)
{
	const xreader *x = &c->in[a], *y = &c->in[b];
	int d = x_cmp(s, (const char *)x->cur, (const char *)y->cur);
	return d < 0 || (d == 0 && a < b);
}

static void heap_down(const llr_xsort *s, xcursor *c, int i)
{
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < c->nheap && heap_less(s, c, c->heap[l], c->heap[m]))
			m = l;
		if (l + 1 < c->nheap && heap_less(s, c, c->heap[l + 1], c->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		int t = c->heap[i];
		c->heap[i] = c->heap[m];
		c->heap[m] = t;
		i = m;
	}
}

/* Readers over runs[first .. first + k) of fd[cur], merged by the heap. */
static int open_readers(const llr_xsort *s, xcursor *c, size_t first, int k, llr_err *err)
{
	if (!c->in) {
		c->in = llr_calloc((size_t)s->cfg.fanin, sizeof *c->in);
		c->heap = llr_malloc((size_t)s->cfg.fanin * sizeof *c->heap);
		if (!c->in || !c->heap)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	c->nin = k;
	c->nheap = 0;
	c->advance = 0;
	for (int i = 0; i < k; i++) {
		xreader *r = &c->in[i];
		if (!r->buf && !(r->buf = llr_calloc(1, s->wcap + 8)))
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		r->fd = s->fd[s->cur];
		r->pos = s->runs[first + (size_t)i].off;
		r->end = r->pos + s->runs[first + (size_t)i].len;
		r->have = r->at = 0;
		r->valid = 0;
		memset(r->cur, 0, sizeof r->cur);
		int e = 0;
		if (rd_rec(s, r, &e))
			c->heap[c->nheap++] = i;
		else if (e)
			return x_errno(s, e, "cannot read", err);
	}
	for (int i = c->nheap / 2 - 1; i >= 0; i--)
		heap_down(s, c, i);
	return LLR_OK;
}

/* The top reader moved past its record; errno-style code, 0 if none. */
static int merge_pop(const llr_xsort *s, xcursor *c)
{
	xreader *r = &c->in[c->heap[0]];
	r->valid = 0;
	int e = 0;
	if (!rd_rec(s, r, &e)) {
		if (e)
			return e;
		c->heap[0] = c->heap[--c->nheap];
	}
	heap_down(s, c, 0);
	return 0;
}

/* The next record of the readers' merge in *out: in place in its
 * reader's buffer (valid until the next call) when nothing folds, else
 * copied to c->out with the records of equal keys folded in; 1, 0 at
 * the end, or an error. */
static int merge_next(const llr_xsort *s, xcursor *c, const char **out, llr_err *err)
{
	int e;
	if (c->advance) {
		c->advance = 0;
		if ((e = merge_pop(s, c)) != 0)
			return x_errno(s, e, "cannot read", err);
	}
	if (c->nheap == 0)
		return 0;
	if (!s->combine) {
		const xreader *r = &c->in[c->heap[0]];
		*out = (const char *)r->cur;
		c->advance = 1;
		return 1;
	}
	memcpy(c->out, c->in[c->heap[0]].cur, s->rec);
	*out = c->out;
	for (;;) {
		if ((e = merge_pop(s, c)) != 0)
			return x_errno(s, e, "cannot read", err);
		if (c->nheap == 0)
			return 1;
		const xreader *r = &c->in[c->heap[0]];
		if (memcmp(c->out, r->cur, s->kbytes))
			return 1;
		s->combine(c->out, r->cur, s->rec);
	}
}

/* One pass: the runs of fd[cur] merged fanin at a time into fd[!cur]. */
static int merge_pass(llr_xsort *s, llr_err *err)
{
	const int from = s->cur;
	xrun *old = s->runs;
	size_t nold = s->nruns;
	s->runs = NULL;
	s->nruns = s->runcap = 0;
	int rc = LLR_OK;
	for (size_t g = 0; g < nold && rc == LLR_OK; g += (size_t)s->cfg.fanin) {
		int k = nold - g < (size_t)s->cfg.fanin ? (int)(nold - g) : s->cfg.fanin;
		xrun *keep = s->runs;
		s->runs = old;
		s->cur = from;
		rc = open_readers(s, &s->rd, g, k, err);
		s->runs = keep;
		s->cur = !from;
		const char *rec;
		while (rc == LLR_OK && (rc = merge_next(s, &s->rd, &rec, err)) == 1)
			rc = llr_xsort_run_put(s, rec, err);
		if (rc == LLR_OK)
			rc = llr_xsort_run_end(s, err);
	}
	free(old);
	s->cur = !from;
	if (rc == LLR_OK && ftruncate(s->fd[from], 0) != 0)
		rc = x_errno(s, errno, "cannot empty", err);
	s->size[from] = 0;
	s->passes++;
	return rc;
}

int llr_xsort_finish(llr_xsort *s, llr_err *err)
{
	int rc = x_join(s, err);
	if (rc == LLR_OK)
		rc = llr_xsort_run_end(s, err);
	if (rc == LLR_OK)
		rc = spill(s, err);
	x_free_sort(s);
	while (rc == LLR_OK && s->nruns > (size_t)s->cfg.fanin)
		rc = merge_pass(s, err);
	free(s->wbuf);
	s->wbuf = NULL;
	s->reading = 1;
	return rc == LLR_OK ? llr_xsort_rewind(s, err) : rc;
}

int llr_xsort_rewind(llr_xsort *s, llr_err *err)
{
	LLR_ASSERT(s->reading);
	return open_readers(s, &s->rd, 0, (int)s->nruns, err);
}

int llr_xsort_next(llr_xsort *s, const void **rec, llr_err *err)
{
	const char *r = NULL;
	int rc = merge_next(s, &s->rd, &r, err);
	*rec = rc == 1 ? r : NULL;
	return rc;
}

uint64_t llr_xsort_runs(const llr_xsort *s)
{
	return s->written;
}

uint64_t llr_xsort_passes(const llr_xsort *s)
{
	return s->passes;
}

uint64_t llr_xsort_disk(const llr_xsort *s)
{
	return s->size[0] + s->size[1];
}

static void x_cursor_free(const llr_xsort *s, xcursor *c)
{
	for (int i = 0; c->in && i < s->cfg.fanin; i++)
		free(c->in[i].buf);
	free(c->in);
	free(c->heap);
	free(c->out);
}

llr_xsort_cursor *llr_xsort_cursor_new(const llr_xsort *s, llr_err *err)
{
	LLR_ASSERT(s->reading);
	llr_xsort_cursor *c = llr_calloc(1, sizeof *c);
	if (!c || !(c->c.out = llr_malloc(s->rec))) {
		free(c);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	c->s = s;
	if (open_readers(s, &c->c, 0, (int)s->nruns, err) != LLR_OK) {
		llr_xsort_cursor_free(c);
		return NULL;
	}
	return c;
}

int llr_xsort_cursor_next(llr_xsort_cursor *c, const void **rec, llr_err *err)
{
	const char *r = NULL;
	int rc = merge_next(c->s, &c->c, &r, err);
	*rec = rc == 1 ? r : NULL;
	return rc;
}

void llr_xsort_cursor_free(llr_xsort_cursor *c)
{
	if (!c)
		return;
	x_cursor_free(c->s, &c->c);
	free(c);
}

void llr_xsort_free(llr_xsort *s)
{
	if (!s)
		return;
	x_join(s, NULL); /* it writes to fd[cur] */
	for (int i = 0; i < 2; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	x_cursor_free(s, &s->rd);
	x_free_sort(s);
	free(s->wbuf);
	free(s->pending);
	free(s->runs);
	free(s);
}
