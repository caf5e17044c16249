/*
 * test_xsort.c - the external sort of lib/ngram/xsort.c (runs of a few
 * records, a fan-in of 2: several merge passes; folding of equal keys;
 * another column order; rewinding; a missing folder; runs sorted by
 * several threads, the same records in the same order) and the counter's
 * spill to it, estimated on disk into the same ARPA bytes as in memory.
 */
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

/* Runs sorted by 2, 3 and 7 threads: the records of one thread in the
 * same order (the sort is stable: equal keys in the order added). */
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

/* A random corpus counted in memory and with a spill every 16 keys:
 * the same ARPA text, for orders 1 to 4. */
static void test_counter_disk(void)
{
	char dir[] = "/tmp/llrnn-xsort-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char mem[64], disk[64];
	snprintf(mem, sizeof mem, "%s/mem.arpa", dir);
	snprintf(disk, sizeof disk, "%s/disk.arpa", dir);
	for (int N = 1; N <= 4; N++) {
		llr_err e = {0};
		llr_ngram_counter *a = llr_ngram_counter_new(N, 64 << 20, &e), *b = llr_ngram_counter_new(N, 64 << 20, &e);
		llr_ngram_disk d = {.dir = dir, .fanin = 3, .run_records = 16};
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
	PLAN(3);
	RUN(test_sort_fold);
	RUN(test_threads);
	RUN(test_counter_disk);
	DONE();
}
