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
 * read.  Runs live in two temporary files in cfg->dir, created with
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

/* The most threads a run's sort is split among. */
#define XSORT_MAX_THREADS 64

typedef struct xrun {
	uint64_t off, len; /* bytes in the file */
} xrun;

typedef struct xreader {
	int fd;
	uint64_t pos, end; /* what is left to read */
	char *buf;
	size_t have, at; /* bytes in buf, the next record's offset */
} xreader;

struct llr_xsort {
	llr_xsort_cfg cfg;
	size_t rec, kbytes;
	int cols[LLR_NGRAM_MAX_ORDER + 1], ncols;
	uint32_t V;
	void (*combine)(void *into, const void *from, size_t rec);
	char *buf; /* the records being gathered */
	size_t n, cap, most;
	int fd[2], cur; /* runs live in fd[cur] */
	uint64_t size[2];
	xrun *runs;
	size_t nruns, runcap;
	/* the writer of a run: its buffer and the record held back for folding */
	char *wbuf;
	size_t wlen, wcap;
	char *pending;
	int has_pending, in_run;
	uint64_t run_off;
	/* reading: the merge of the last runs */
	int reading;
	xreader *in;
	int nin, *heap, nheap;
	char *out;
	uint64_t records, passes, written;
};

/* The threads of a sort: cfg->threads within 1 .. XSORT_MAX_THREADS. */
static int x_threads(const llr_xsort *s)
{
	return s->cfg.threads < 1 ? 1 : s->cfg.threads > XSORT_MAX_THREADS ? XSORT_MAX_THREADS : s->cfg.threads;
}

static int x_errno(llr_xsort *s, int e, const char *what, llr_err *err)
{
	return llr_err_set(err, LLR_EIO, "%s: %s a temporary file: %s", s->cfg.dir, what, strerror(e));
}

static int x_cmp(const llr_xsort *s, const char *a, const char *b)
{
	const uint32_t *x = (const uint32_t *)a, *y = (const uint32_t *)b;
	for (int i = 0; i < s->ncols; i++)
		if (x[s->cols[i]] != y[s->cols[i]])
			return x[s->cols[i]] < y[s->cols[i]] ? -1 : 1;
	return 0;
}

llr_xsort *llr_xsort_new(const llr_xsort_cfg *cfg, size_t rec, int nkey, const int *cols, int ncols, uint32_t V,
                         void (*combine)(void *into, const void *from, size_t rec), llr_err *err)
{
	LLR_ASSERT(rec % 4 == 0 && rec >= (size_t)nkey * 4 && ncols <= LLR_NGRAM_MAX_ORDER + 1 && cfg->fanin >= 2);
	llr_xsort *s = llr_calloc(1, sizeof *s);
	if (!s) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	s->rec = rec;
	s->kbytes = (size_t)nkey * 4;
	memcpy(s->cols, cols, (size_t)ncols * sizeof *cols);
	s->ncols = ncols;
	s->V = V;
	s->combine = combine;
	s->fd[0] = s->fd[1] = -1;
	size_t cnt = (size_t)x_threads(s) * ((size_t)V + 1) * sizeof(uint32_t);
	s->most = cfg->mem > cnt ? (cfg->mem - cnt) / (2 * rec) : 0;
	if (cfg->run_records && cfg->run_records < s->most)
		s->most = cfg->run_records;
	s->wcap = cfg->iobuf / rec * rec;
	if (s->wcap < rec)
		s->wcap = rec;
	if (!(s->pending = llr_malloc(rec)) || !(s->out = llr_malloc(rec))) {
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

static int w_put(llr_xsort *s, const void *rec, llr_err *err)
{
	if (s->wlen == s->wcap) {
		int rc = w_flush(s, err);
		if (rc != LLR_OK)
			return rc;
	}
	memcpy(s->wbuf + s->wlen, rec, s->rec);
	s->wlen += s->rec;
	return LLR_OK;
}

/* Begin a run at the end of fd[cur]. */
static int run_begin(llr_xsort *s, llr_err *err)
{
	int rc = x_open(s, s->cur, err);
	if (rc != LLR_OK)
		return rc;
	if (!s->wbuf && !(s->wbuf = llr_malloc(s->wcap)))
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
	s->run_off = s->size[s->cur];
	return LLR_OK;
}

int llr_xsort_run_put(llr_xsort *s, const void *rec, llr_err *err)
{
	int rc;
	if (!s->in_run && (rc = run_begin(s, err)) != LLR_OK)
		return rc;
	if (s->has_pending && s->combine && !memcmp(s->pending, rec, s->kbytes)) {
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

static void *x_part(void *arg)
{
	xpart *p = arg;
	if (p->phase == 0) {
		memset(p->cnt, 0, (size_t)p->V * sizeof *p->cnt);
		for (size_t i = p->lo; i < p->hi; i++)
			p->cnt[((const uint32_t *)(p->src + i * p->rec))[p->at]]++;
	} else {
		for (size_t i = p->lo; i < p->hi; i++) {
			const char *r = p->src + i * p->rec;
			memcpy(p->dst + (size_t)p->cnt[((const uint32_t *)r)[p->at]]++ * p->rec, r, p->rec);
		}
	}
	return NULL;
}

/* Run x_part over the k parts, the first in this thread; a part whose
 * thread cannot start is done here after the first (the result is the
 * same). */
static void x_parts(xpart *part, int k)
{
	pthread_t th[XSORT_MAX_THREADS];
	int started[XSORT_MAX_THREADS] = {0};
	for (int t = 1; t < k; t++)
		started[t] = pthread_create(&th[t], NULL, x_part, &part[t]) == 0;
	x_part(&part[0]);
	for (int t = 1; t < k; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			x_part(&part[t]);
	}
}

/* The buffer sorted (into a scratch copy, which replaces it) and
 * written as a run; the buffer is freed.  The sort is stable, an LSD
 * radix sort over the columns; with cfg->threads > 1 each counting pass
 * is split among threads by ranges of records, each with its own counts,
 * whose offsets are laid out range after range: the records land where
 * one thread puts them. */
static int spill(llr_xsort *s, llr_err *err)
{
	if (s->n == 0)
		return LLR_OK;
	int k = x_threads(s);
	if ((size_t)k > s->n)
		k = (int)s->n;
	char *tmp = llr_malloc(s->n * s->rec);
	uint32_t *cnt = llr_malloc((size_t)k * s->V * sizeof *cnt);
	if (!tmp || (!cnt && s->V)) {
		free(tmp);
		free(cnt);
		return llr_err_set(err, LLR_ENOMEM, "out of memory sorting n-grams");
	}
	xpart part[XSORT_MAX_THREADS];
	char *src = s->buf, *dst = tmp;
	for (int c = s->ncols - 1; c >= 0; c--) {
		for (int t = 0; t < k; t++)
			part[t] = (xpart){src, dst, s->rec, (size_t)s->cols[c], s->n * (size_t)t / (size_t)k, s->n * (size_t)(t + 1) / (size_t)k,
			                  s->V, cnt + (size_t)t * s->V, 0};
		x_parts(part, k);
		uint32_t run = 0;
		for (uint32_t v = 0; v < s->V; v++)
			for (int t = 0; t < k; t++) {
				uint32_t here = part[t].cnt[v];
				part[t].cnt[v] = run;
				run += here;
			}
		for (int t = 0; t < k; t++)
			part[t].phase = 1;
		x_parts(part, k);
		char *t = src;
		src = dst;
		dst = t;
	}
	free(cnt);
	free(dst);
	s->buf = NULL;
	int rc = LLR_OK;
	for (size_t i = 0; i < s->n && rc == LLR_OK; i++)
		rc = llr_xsort_run_put(s, src + i * s->rec, err);
	free(src);
	s->n = s->cap = 0;
	return rc == LLR_OK ? llr_xsort_run_end(s, err) : rc;
}

int llr_xsort_add(llr_xsort *s, const void *rec, llr_err *err)
{
	if (s->n == s->cap) {
		int rc;
		if (s->n >= s->most && (rc = spill(s, err)) != LLR_OK)
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

static int rd_fill(xreader *r, size_t bufsize)
{
	size_t want = r->end - r->pos < bufsize ? (size_t)(r->end - r->pos) : bufsize;
	size_t got = 0;
	while (got < want) {
		ssize_t k = pread(r->fd, r->buf + got, want - got, (off_t)(r->pos + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		got += (size_t)k;
	}
	r->pos += got;
	r->have = got;
	r->at = 0;
	return 0;
}

/* The reader's current record, NULL at its end; errno-style code in *e. */
static const char *rd_rec(const llr_xsort *s, xreader *r, int *e)
{
	if (r->at == r->have) {
		if (r->pos == r->end)
			return NULL;
		if ((*e = rd_fill(r, s->wcap)) != 0)
			return NULL;
	}
	return r->buf + r->at;
}

static int heap_less(const llr_xsort *s, int a, int b)
{
	const xreader *x = &s->in[a], *y = &s->in[b];
	int c = x_cmp(s, x->buf + x->at, y->buf + y->at);
	return c < 0 || (c == 0 && a < b);
}

static void heap_down(llr_xsort *s, int i)
{
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < s->nheap && heap_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && heap_less(s, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		int t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

/* Readers over runs[first .. first + k) of fd[cur], merged by the heap. */
static int open_readers(llr_xsort *s, size_t first, int k, llr_err *err)
{
	if (!s->in) {
		s->in = llr_calloc((size_t)s->cfg.fanin, sizeof *s->in);
		s->heap = llr_malloc((size_t)s->cfg.fanin * sizeof *s->heap);
		if (!s->in || !s->heap)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	s->nin = k;
	s->nheap = 0;
	for (int i = 0; i < k; i++) {
		xreader *r = &s->in[i];
		if (!r->buf && !(r->buf = llr_malloc(s->wcap)))
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		r->fd = s->fd[s->cur];
		r->pos = s->runs[first + (size_t)i].off;
		r->end = r->pos + s->runs[first + (size_t)i].len;
		r->have = r->at = 0;
		int e = 0;
		if (rd_rec(s, r, &e))
			s->heap[s->nheap++] = i;
		else if (e)
			return x_errno(s, e, "cannot read", err);
	}
	for (int i = s->nheap / 2 - 1; i >= 0; i--)
		heap_down(s, i);
	return LLR_OK;
}

/* The next record of the readers' merge copied to s->out, equal keys
 * folded; 1, 0 at the end, or an error. */
static int merge_next(llr_xsort *s, llr_err *err)
{
	int first = 1;
	while (s->nheap > 0) {
		xreader *r = &s->in[s->heap[0]];
		const char *rec = r->buf + r->at;
		if (first)
			memcpy(s->out, rec, s->rec);
		else if (s->combine && !memcmp(s->out, rec, s->kbytes))
			s->combine(s->out, rec, s->rec);
		else
			return 1;
		first = 0;
		r->at += s->rec;
		int e = 0;
		if (!rd_rec(s, r, &e)) {
			if (e)
				return x_errno(s, e, "cannot read", err);
			s->heap[0] = s->heap[--s->nheap];
		}
		heap_down(s, 0);
		if (!s->combine)
			return 1;
	}
	return first ? 0 : 1;
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
		rc = open_readers(s, g, k, err);
		s->runs = keep;
		s->cur = !from;
		while (rc == LLR_OK && (rc = merge_next(s, err)) == 1)
			rc = llr_xsort_run_put(s, s->out, err);
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
	int rc = llr_xsort_run_end(s, err);
	if (rc == LLR_OK)
		rc = spill(s, err);
	free(s->buf);
	s->buf = NULL;
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
	return open_readers(s, 0, (int)s->nruns, err);
}

int llr_xsort_next(llr_xsort *s, const void **rec, llr_err *err)
{
	int rc = merge_next(s, err);
	*rec = rc == 1 ? s->out : NULL;
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

void llr_xsort_free(llr_xsort *s)
{
	if (!s)
		return;
	for (int i = 0; i < 2; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	for (int i = 0; s->in && i < s->cfg.fanin; i++)
		free(s->in[i].buf);
	free(s->in);
	free(s->heap);
	free(s->buf);
	free(s->wbuf);
	free(s->pending);
	free(s->out);
	free(s->runs);
	free(s);
}
