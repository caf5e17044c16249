/*
 * test_xsort.c - the external sort of lib/ngram/xsort.c (runs of a few
 * records, a fan-in of 2: several merge passes; folding of equal keys;
 * another column order; rewinding; a missing folder; runs sorted by
 * several threads, and spilled by a thread of their own while the next
 * fills, the same records in the same order; its error at the next
 * spill; a cursor read in another thread at the same time as the sort's
 * own reading; wide records through the encoding on disk, at several
 * V; records added in the order of their last columns) and the
 * counter's spill to it, estimated on disk into the same ARPA bytes as
 * in memory.
 */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "llrnn.h"
#include "ngram/ngram.h"
#include "test.h"

typedef struct rec {
	uint32_t w[2];
	uint64_t n;
} rec;

static void add_n(void *into, const void *from, size_t size)
{
	CHECK(size == sizeof(rec));
	((rec *)into)->n += ((const rec *)from)->n;
}

/* The reference: counts of the (a, b) pairs in a V x V table. */
static void test_sort_fold(void)
{
	enum { V = 37, NREC = 5000 };
	static uint64_t want[V][V];
	memset(want, 0, sizeof want);
	llr_err e = {0};
	llr_xsort_cfg cfg = {.dir = "/tmp", .mem = 1 << 20, .iobuf = 4096, .fanin = 2, .run_records = 50};
	static const int suffix_first[2] = {1, 0};
	llr_xsort *s = llr_xsort_new(&cfg, sizeof(rec), 2, suffix_first, 2, V, add_n, &e);
	CHECK(s != NULL);
	uint64_t state = 12345;
	for (int i = 0; i < NREC; i++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		rec r = {{(uint32_t)(state >> 33) % V, (uint32_t)(state >> 45) % V}, 1 + (state >> 60)};
		want[r.w[0]][r.w[1]] += r.n;
		CHECK(llr_xsort_add(s, &r, &e) == LLR_OK);
	}
	CHECK(llr_xsort_finish(s, &e) == LLR_OK);
	CHECK(llr_xsort_passes(s) >= 3); /* 100 runs, merged 2 at a time */
	for (int pass = 0; pass < 2; pass++) {
		const void *p;
		int rc, k = 0, bad = 0;
		long last = -1;
		while ((rc = llr_xsort_next(s, &p, &e)) == 1) {
			const rec *r = p;
			long key = (long)r->w[1] * V + r->w[0]; /* the second word first */
			bad += key <= last || r->n != want[r->w[0]][r->w[1]];
			last = key;
			k++;
		}
		CHECK(rc == 0);
		CHECK(bad == 0);
		int distinct = 0;
		for (int a = 0; a < V; a++)
			for (int b = 0; b < V; b++)
				distinct += want[a][b] > 0;
		CHECK(k == distinct);
		CHECK(llr_xsort_rewind(s, &e) == LLR_OK);
	}
	llr_xsort_free(s);
	/* a folder that is not there: the first run fails, naming it */
	cfg.dir = "/nonexistent-llrnn-dir";
	s = llr_xsort_new(&cfg, sizeof(rec), 2, suffix_first, 2, V, NULL, &e);
	int rc = LLR_OK;
	for (int i = 0; i < 100 && rc == LLR_OK; i++)
		rc = llr_xsort_add(s, &(rec){{1, 2}, 3}, &e);
	CHECK(rc == LLR_EIO);
	CHECK(strstr(e.msg, "/nonexistent-llrnn-dir: cannot create a temporary file") != NULL);
	llr_xsort_free(s);
	/* the same with two threads: the run fails in the background spill's
	 * thread, and the next spill (or the end) says so */
	for (int end = 0; end < 2; end++) {
		cfg.threads = 2;
		memset(&e, 0, sizeof e);
		s = llr_xsort_new(&cfg, sizeof(rec), 2, suffix_first, 2, V, NULL, &e);
		rc = LLR_OK;
		for (int i = 0; i < (end ? 60 : 1000) && rc == LLR_OK; i++)
			rc = llr_xsort_add(s, &(rec){{1, 2}, 3}, &e);
		if (end) {
			CHECK(rc == LLR_OK); /* one run handed over: its error comes at the end */
			rc = llr_xsort_finish(s, &e);
		}
		CHECK(rc == LLR_EIO);
		CHECK(strstr(e.msg, "/nonexistent-llrnn-dir: cannot create a temporary file") != NULL);
		llr_xsort_free(s);
	}
}

/* The records of n pseudo-random pairs (payload: their index) sorted
 * with threads threads and no folding, read back into out. */
static void sort_with(int threads, int n, int V, rec *out)
{
	llr_err e = {0};
	llr_xsort_cfg cfg = {.dir = "/tmp", .mem = 1 << 20, .iobuf = 4096, .fanin = 3, .run_records = 700, .threads = threads};
	static const int suffix_first[2] = {1, 0};
	llr_xsort *s = llr_xsort_new(&cfg, sizeof(rec), 2, suffix_first, 2, (uint32_t)V, NULL, &e);
	CHECK(s != NULL);
	uint64_t state = 777;
	for (int i = 0; i < n; i++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		rec r = {{(uint32_t)(state >> 33) % (uint32_t)V, (uint32_t)(state >> 45) % (uint32_t)V}, (uint64_t)i};
		CHECK(llr_xsort_add(s, &r, &e) == LLR_OK);
	}
	CHECK(llr_xsort_finish(s, &e) == LLR_OK);
	const void *p;
	int rc, k = 0;
	while ((rc = llr_xsort_next(s, &p, &e)) == 1 && k < n)
		out[k++] = *(const rec *)p;
	CHECK(rc == 0 && k == n);
	llr_xsort_free(s);
}

/* Runs sorted by 2, 3 and 7 threads (each full buffer sorted and
 * written by a thread of its own while the next fills): the records of
 * one thread in the same order (the sort is stable: equal keys in the
 * order added, so a run written out of turn would show). */
static void test_threads(void)
{
	enum { V = 50, NREC = 6000 };
	static rec one[NREC], more[NREC];
	sort_with(1, NREC, V, one);
	int unstable = 0;
	for (int i = 1; i < NREC; i++)
		unstable += one[i].w[0] == one[i - 1].w[0] && one[i].w[1] == one[i - 1].w[1] && one[i].n < one[i - 1].n;
	CHECK(unstable == 0);
	static const int threads[3] = {2, 3, 7};
	for (int t = 0; t < 3; t++) {
		memset(more, 0, sizeof more);
		sort_with(threads[t], NREC, V, more);
		CHECK(memcmp(one, more, sizeof one) == 0);
	}
}

typedef struct creader {
	llr_xsort_cursor *c;
	rec *out;
	int n, k, rc;
} creader;

static void *cursor_read(void *arg)
{
	creader *r = arg;
	llr_err e = {0};
	const void *p;
	while ((r->rc = llr_xsort_cursor_next(r->c, &p, &e)) == 1 && r->k < r->n)
		r->out[r->k++] = *(const rec *)p;
	return NULL;
}

/* A cursor read in another thread while the sort's own reader goes
 * through the same runs (several, merged with folding): both give the
 * records of one reading. */
static void test_cursor(void)
{
	enum { V = 20, NREC = 5000 }; /* every pair drawn */
	static rec own[NREC], other[NREC];
	llr_err e = {0};
	llr_xsort_cfg cfg = {.dir = "/tmp", .mem = 1 << 20, .iobuf = 4096, .fanin = 8, .run_records = 400, .threads = 2};
	static const int lex[2] = {0, 1};
	llr_xsort *s = llr_xsort_new(&cfg, sizeof(rec), 2, lex, 2, V, add_n, &e);
	CHECK(s != NULL);
	uint64_t state = 4242;
	for (int i = 0; i < NREC; i++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		CHECK(llr_xsort_add(s, &(rec){{(uint32_t)(state >> 33) % V, (uint32_t)(state >> 45) % V}, 1}, &e) == LLR_OK);
	}
	CHECK(llr_xsort_finish(s, &e) == LLR_OK);
	CHECK(llr_xsort_runs(s) >= 8);
	creader r = {llr_xsort_cursor_new(s, &e), other, NREC, 0, 0};
	CHECK(r.c != NULL);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, cursor_read, &r) == 0);
	const void *p;
	int rc, k = 0;
	uint64_t total = 0;
	while ((rc = llr_xsort_next(s, &p, &e)) == 1 && k < NREC) {
		own[k++] = *(const rec *)p;
		total += ((const rec *)p)->n;
	}
	pthread_join(th, NULL);
	CHECK(rc == 0 && r.rc == 0);
	CHECK(total == NREC); /* every record, folded */
	CHECK(k == r.k && k == V * V);
	CHECK(memcmp(own, other, (size_t)k * sizeof *own) == 0);
	llr_xsort_cursor_free(r.c);
	llr_xsort_free(s);
}

/* A wide record: 5 words, its padding, and payloads that are zero,
 * small, repeated or anything (the encoding on disk keeps the words
 * that differ from the record before). */
typedef struct wrec {
	uint32_t w[5], pad;
	uint64_t i;     /* the order added */
	uint64_t small; /* 0, 1 or 2 */
	uint64_t any;
	uint32_t same, last; /* the same in every record; anything */
} wrec;

static const int wide_cols[5] = {2, 0, 4, 1, 3};

static int wide_cmp(const void *a, const void *b)
{
	const wrec *x = a, *y = b;
	for (int c = 0; c < 5; c++)
		if (x->w[wide_cols[c]] != y->w[wide_cols[c]])
			return x->w[wide_cols[c]] < y->w[wide_cols[c]] ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i; /* stable */
}

/* NREC wide records with words below V, a few values each in some
 * columns (shared leading words) and any in others, sorted by
 * wide_cols with threads threads through runs of 900 (records
 * straddle the 4096-byte buffers): the records of a stable sort
 * (qsort on the columns, then the order added), every byte; the file
 * smaller than the records. */
static void wide_with(uint32_t V, int threads)
{
	enum { NREC = 20000 };
	static wrec in[NREC], want[NREC];
	llr_err e = {0};
	llr_xsort_cfg cfg = {.dir = "/tmp", .mem = 1 << 24, .iobuf = 4096, .fanin = 3, .run_records = 900, .threads = threads};
	llr_xsort *s = llr_xsort_new(&cfg, sizeof(wrec), 5, wide_cols, 5, V, NULL, &e);
	CHECK(s != NULL);
	uint64_t state = 99 + V;
	for (int i = 0; i < NREC; i++) {
		wrec r;
		memset(&r, 0, sizeof r);
		for (int j = 0; j < 5; j++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t x = (uint32_t)(state >> 32);
			r.w[j] = j == 2 || j == 0 ? x % 3 * (V / 3) : j == 4 ? (x % 2 ? V - 1 : x % V) : x % V;
		}
		r.i = (uint64_t)i;
		r.small = state >> 62 & 1 ? 0 : 1 + (state >> 61 & 1);
		r.any = state * 2862933555777941757ull;
		r.same = 0xdeadbeef;
		r.last = (uint32_t)(state >> 7);
		in[i] = r;
		CHECK(llr_xsort_add(s, &r, &e) == LLR_OK);
	}
	CHECK(llr_xsort_finish(s, &e) == LLR_OK);
	CHECK(llr_xsort_passes(s) >= 2);
	memcpy(want, in, sizeof in);
	qsort(want, NREC, sizeof *want, wide_cmp);
	for (int pass = 0; pass < 2; pass++) { /* and again after a rewind */
		const void *p;
		int rc, k = 0, bad = 0;
		while ((rc = llr_xsort_next(s, &p, &e)) == 1 && k < NREC)
			bad += memcmp(p, &want[k++], sizeof(wrec)) != 0;
		CHECK(rc == 0 && k == NREC && bad == 0);
		CHECK(llr_xsort_rewind(s, &e) == LLR_OK);
	}
	CHECK(llr_xsort_disk(s) < (uint64_t)NREC * sizeof(wrec) * 3 / 4);
	llr_xsort_free(s);
}

static void test_wide(void)
{
	static const uint32_t V[3] = {7, 100003, 1u << 20};
	for (int v = 0; v < 3; v++)
		for (int t = 1; t <= 2; t++)
			wide_with(V[v], t);
}

/* Records added in the order of their last columns (llr_xsort_presorted):
 * the bytes of the full sort; and when they are not in that order after
 * all, the full sort all the same. */
static void test_presorted(void)
{
	enum { V = 300, NREC = 9000 };
	static rec out[3][NREC];
	static const int lex[2] = {0, 1};
	for (int mode = 0; mode < 3; mode++) { /* full sort; presorted; claimed but not */
		llr_err e = {0};
		llr_xsort_cfg cfg = {.dir = "/tmp", .mem = 1 << 20, .iobuf = 4096, .fanin = 3, .run_records = 800};
		llr_xsort *s = llr_xsort_new(&cfg, sizeof(rec), 2, lex, 2, V, NULL, &e);
		CHECK(s != NULL);
		if (mode)
			llr_xsort_presorted(s, 1);
		uint64_t state = 5;
		for (int i = 0; i < NREC; i++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t w1 = mode == 2 ? (uint32_t)(state >> 40) % V : (uint32_t)(i * (uint64_t)V / NREC);
			CHECK(llr_xsort_add(s, &(rec){{(uint32_t)(state >> 33) % V, w1}, (uint64_t)i}, &e) == LLR_OK);
		}
		CHECK(llr_xsort_finish(s, &e) == LLR_OK);
		const void *p;
		int rc, k = 0, bad = 0;
		while ((rc = llr_xsort_next(s, &p, &e)) == 1 && k < NREC) {
			out[mode][k] = *(const rec *)p;
			if (k > 0) { /* lexicographic, ties in the order added */
				const rec *a = &out[mode][k - 1], *b = &out[mode][k];
				bad += a->w[0] > b->w[0] || (a->w[0] == b->w[0] && (a->w[1] > b->w[1] || (a->w[1] == b->w[1] && a->n > b->n)));
			}
			k++;
		}
		CHECK(rc == 0 && k == NREC && bad == 0);
		llr_xsort_free(s);
	}
	CHECK(memcmp(out[0], out[1], sizeof out[0]) == 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *b = malloc((size_t)n + 1);
	b[fread(b, 1, (size_t)n, f)] = 0;
	fclose(f);
	return b;
}

/* A random corpus counted in memory and with a spill every 16 keys
 * (with one thread, and with 3: the counting sort split, the runs
 * spilled and the lines written in threads): the same ARPA text, for
 * orders 1 to 4. */
static void test_counter_disk(void)
{
	char dir[] = "/tmp/llrnn-xsort-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char mem[64], disk[64];
	snprintf(mem, sizeof mem, "%s/mem.arpa", dir);
	snprintf(disk, sizeof disk, "%s/disk.arpa", dir);
	for (int N = 1, th = 1; N <= 4; N += th == 3, th = th == 3 ? 1 : 3) {
		llr_err e = {0};
		llr_ngram_counter *a = llr_ngram_counter_new(N, 64 << 20, &e), *b = llr_ngram_counter_new(N, 64 << 20, &e);
		llr_ngram_disk d = {.dir = dir, .fanin = 3, .run_records = 16, .threads = th};
		CHECK(llr_ngram_counter_spill(b, &d, &e) == LLR_OK);
		uint64_t state = 99;
		char line[256];
		for (int s = 0; s < 400; s++) {
			size_t len = 0;
			int k = 1 + s % 9;
			for (int i = 0; i < k; i++) {
				state = state * 6364136223846793005ull + 1442695040888963407ull;
				len += (size_t)snprintf(line + len, sizeof line - len, "%sw%u", i ? " " : "", (unsigned)(state >> 58) % 40);
			}
			CHECK(llr_ngram_count_line(a, line, len, &e) == LLR_OK);
			CHECK(llr_ngram_count_line(b, line, len, &e) == LLR_OK);
		}
		CHECK(llr_ngram_counter_end(b, &e) == LLR_OK);
		CHECK(llr_ngram_counter_spilled(b));
		llr_kn_opts o;
		llr_kn_opts_init(&o);
		o.discount_fallback = 1;
		llr_ngram *m = NULL;
		double D1[LLR_NGRAM_MAX_ORDER * 3], D2[LLR_NGRAM_MAX_ORDER * 3];
		CHECK(llr_ngram_estimate(a, &o, &m, D1, &e) == LLR_OK);
		CHECK(m && llr_ngram_write_arpa(m, mem, &e) == LLR_OK);
		llr_ngram_disk_stats st;
		CHECK(llr_ngram_estimate_arpa(b, &o, disk, D2, &st, &e) == LLR_OK);
		CHECK(st.runs > 10 && st.passes > 0);
		CHECK(memcmp(D1, D2, (size_t)N * 3 * sizeof *D1) == 0);
		char *x = slurp(mem), *y = slurp(disk);
		CHECK(x && y && !strcmp(x, y));
		free(x);
		free(y);
		llr_ngram_free(m);
		llr_ngram_counter_free(a);
		llr_ngram_counter_free(b);
		unlink(mem);
		unlink(disk);
	}
	CHECK(rmdir(dir) == 0); /* nothing else left in it */
}

int main(void)
{
	PLAN(6);
	RUN(test_sort_fold);
	RUN(test_threads);
	RUN(test_cursor);
	RUN(test_wide);
	RUN(test_presorted);
	RUN(test_counter_disk);
	DONE();
}
