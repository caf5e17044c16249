/*
 * xestimate.c - interpolated modified Kneser-Ney estimation on disk, in
 * a memory budget, for counts that count.c spilled: the same model as
 * estimate.c (see there for the formulas), written as ARPA a line at a
 * time, never held whole.  Every level is a stream of fixed-size records
 * in temporary files (xsort.c); only the vocabulary and the unigrams
 * (dense by word id) stay in memory.
 *
 * The passes, as lmplz's stages but in plain sorted streams:
 *  1. Split: the merged count runs (N-grams in lexicographic order) go
 *     to level N, and a key beginning with j >= 2 <s> to level N-j+1
 *     (its own stream, which comes out sorted too).
 *  2. Adjust, N down to 2: level n is sorted by its suffix (its last
 *     n-1 words), and equal suffixes folded (the count of n-grams and
 *     the sum of raw counts): in lexicographic order, merged with the
 *     <s> entries of level n-1, that is level n-1, adjusted.  The counts
 *     of adjusted counts and the n-grams kept by pruning are counted as
 *     each level is written, so the discounts and the ARPA header are
 *     known before any probability.
 *  3. Interpolate, 2 up to N: level n in context order (lexicographic)
 *     gives each context its denominator and gamma (a stream G); level n
 *     again with G attaches u and gamma to each n-gram, which is sorted
 *     by suffix and joined with level n-1's probabilities (lexicographic,
 *     so in suffix order of level n): p = u + gamma p(suffix); those are
 *     sorted back to lexicographic order for the level above and for the
 *     ARPA lines of level n, whose backoffs come from G of level n+1.
 * Each sort has the whole budget less the vocabulary, the unigrams and
 * the stream buffers (xsort's fan-in times two, plus a few).  Not here:
 * the in-memory estimation (estimate.c), the binary forms (they need the
 * model in memory).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

#define BOS_ID 1u
#define EOS_ID 2u
#define UNK_ID 0u

/* Record layouts, after the words padded to 8 bytes (kw):
 * level:  adj, raw (u64)        G: gamma (double), denom (u64)
 * S:      u, gamma (double), kept (u64)     P: p (double), kept (u64) */
typedef struct xest {
	int N;
	uint32_t V;
	const llr_kn_opts *o;
	llr_xsort_cfg cfg; /* mem: what one sort may hold */
	llr_xsort *lev[LLR_NGRAM_MAX_ORDER + 1]; /* level n at n, lexicographic */
	llr_xsort *bos[LLR_NGRAM_MAX_ORDER + 1]; /* <s> entries of level n */
	uint64_t t[LLR_NGRAM_MAX_ORDER + 1][5];  /* counts of adjusted counts */
	int64_t kept[LLR_NGRAM_MAX_ORDER];
	double D[LLR_NGRAM_MAX_ORDER + 1][4];
	uint64_t *adj1; /* the unigrams' adjusted counts */
	double *p1;
	float *logp1;
	llr_ngram_disk_stats *st;
	int trie; /* the trie form, not ARPA: each level's lines to lines[n] */
	size_t words; /* the ARPA writer's copy of the words */
	llr_xsort *lines[LLR_NGRAM_MAX_ORDER + 1]; /* words, log10 p, log10 backoff */
} xest;

static size_t kw(int n)
{
	return llr_xrec_key_bytes(n);
}

static uint64_t get64(const void *rec, size_t at)
{
	uint64_t v;
	memcpy(&v, (const char *)rec + at, 8);
	return v;
}

static double getd(const void *rec, size_t at)
{
	double v;
	memcpy(&v, (const char *)rec + at, 8);
	return v;
}

static void put64(void *rec, size_t at, uint64_t v)
{
	memcpy((char *)rec + at, &v, 8);
}

static void putd(void *rec, size_t at, double v)
{
	memcpy((char *)rec + at, &v, 8);
}

/* Level records folded: adjusted and raw counts added. */
static void add_two(void *into, const void *from, size_t rec)
{
	put64(into, rec - 16, get64(into, rec - 16) + get64(from, rec - 16));
	put64(into, rec - 8, get64(into, rec - 8) + get64(from, rec - 8));
}

static int key_cmp(const void *a, const void *b, int n)
{
	const uint32_t *x = a, *y = b;
	for (int i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static const int lex_cols[LLR_NGRAM_MAX_ORDER] = {0, 1, 2, 3, 4, 5, 6, 7};
static const int suf_cols[LLR_NGRAM_MAX_ORDER] = {1, 2, 3, 4, 5, 6, 7};

static llr_xsort *x_new(xest *x, size_t payload, int n, const int *cols, int ncols, void (*combine)(void *, const void *, size_t), llr_err *err)
{
	return llr_xsort_new(&x->cfg, kw(n) + payload, n, cols, ncols, x->V, combine, err);
}

static void x_done(xest *x, llr_xsort **s)
{
	if (*s) {
		x->st->runs += llr_xsort_runs(*s);
		x->st->passes += llr_xsort_passes(*s);
	}
	llr_xsort_free(*s);
	*s = NULL;
}

/* The disk in use, as the most seen: the files of the levels' streams
 * and of open[0..k). */
static void x_disk(xest *x, llr_xsort *const *open, int k)
{
	uint64_t d = 0;
	for (int i = 0; i < k; i++)
		d += open[i] ? llr_xsort_disk(open[i]) : 0;
	for (int n = 0; n <= LLR_NGRAM_MAX_ORDER; n++)
		d += (x->lev[n] ? llr_xsort_disk(x->lev[n]) : 0) + (x->bos[n] ? llr_xsort_disk(x->bos[n]) : 0);
	if (d > x->st->disk)
		x->st->disk = d;
}

/* Level n's record written to its stream, counted for the discounts
 * and the header. */
static int level_put(xest *x, int n, const void *rec, llr_err *err)
{
	uint64_t adj = get64(rec, kw(n)), raw = get64(rec, kw(n) + 8);
	if (adj >= 1 && adj <= 4)
		x->t[n][adj]++;
	x->kept[n - 1] += !(x->o->prune[n - 1] > 0 && raw <= x->o->prune[n - 1]);
	return llr_xsort_run_put(x->lev[n], rec, err);
}

/* Pass 1: the counts to level N and the <s> streams. */
static int split(xest *x, llr_xsort *counts, llr_err *err)
{
	const int N = x->N;
	/* level N here; the lower levels are made by adjust() */
	for (int n = 2; n <= N; n++)
		if ((n == N && !(x->lev[n] = x_new(x, 16, n, lex_cols, n, NULL, err))) ||
		    (n < N && !(x->bos[n] = x_new(x, 16, n, lex_cols, n, NULL, err))))
			return llr_err_code(err, LLR_ENOMEM);
	const void *r;
	int rc;
	uint64_t rec[LLR_NGRAM_MAX_ORDER / 2 + 3];
	uint64_t total = 0;
	while ((rc = llr_xsort_next(counts, &r, err)) == 1) {
		const uint32_t *key = r;
		uint64_t c = get64(r, kw(N));
		int j = 0;
		while (j < N && key[j] == BOS_ID)
			j++;
		int n = N >= 2 && j >= 2 ? N - j + 1 : N;
		memset(rec, 0, sizeof rec);
		memcpy(rec, key + (N - n), (size_t)n * 4);
		put64(rec, kw(n), c);
		put64(rec, kw(n) + 8, c);
		total++;
		if (n == N)
			rc = N == 1 ? LLR_OK : level_put(x, N, rec, err);
		else
			rc = llr_xsort_run_put(x->bos[n], rec, err);
		if (N == 1) /* unigrams only: dense */
			x->adj1[key[0]] += c;
		if (rc != LLR_OK)
			return rc;
	}
	if (rc < 0)
		return rc;
	if (total == 0)
		return llr_err_set(err, LLR_EEMPTY, "no n-grams counted (empty corpus)");
	for (int n = 2; n <= N; n++)
		if ((n == N && (rc = llr_xsort_finish(x->lev[n], err)) != LLR_OK) || (n < N && (rc = llr_xsort_finish(x->bos[n], err)) != LLR_OK))
			return rc;
	return LLR_OK;
}

/* Pass 2 at level n: level n-1 from level n's suffixes and its <s>
 * entries (or the dense unigrams). */
static int adjust(xest *x, int n, llr_err *err)
{
	const int m = n - 1;
	llr_xsort *suf = x_new(x, 16, m, lex_cols, m, add_two, err);
	if (!suf)
		return llr_err_code(err, LLR_ENOMEM);
	const void *r;
	int rc;
	uint64_t rec[LLR_NGRAM_MAX_ORDER / 2 + 3];
	memset(rec, 0, sizeof rec);
	while ((rc = llr_xsort_next(x->lev[n], &r, err)) == 1) {
		memcpy(rec, (const uint32_t *)r + 1, (size_t)m * 4);
		put64(rec, kw(m), 1);
		put64(rec, kw(m) + 8, get64(r, kw(n) + 8));
		if ((rc = llr_xsort_add(suf, rec, err)) != LLR_OK)
			break;
	}
	if (rc == LLR_OK && (rc = llr_xsort_finish(suf, err)) == LLR_OK && (rc = llr_xsort_rewind(x->lev[n], err)) == LLR_OK) {
		x_disk(x, &suf, 1);
	}
	if (rc < 0) {
		x_done(x, &suf);
		return rc;
	}
	if (m == 1) {
		while ((rc = llr_xsort_next(suf, &r, err)) == 1) {
			uint32_t w = *(const uint32_t *)r;
			x->adj1[w] = get64(r, kw(1));
		}
		x_done(x, &suf);
		return rc < 0 ? rc : LLR_OK;
	}
	if (!(x->lev[m] = x_new(x, 16, m, lex_cols, m, NULL, err))) {
		x_done(x, &suf);
		return llr_err_code(err, LLR_ENOMEM);
	}
	const void *a = NULL, *b = NULL;
	int ha = llr_xsort_next(suf, &a, err), hb = ha < 0 ? ha : llr_xsort_next(x->bos[m], &b, err);
	rc = LLR_OK;
	while (rc == LLR_OK && ha >= 0 && hb >= 0 && (ha || hb)) {
		int takea = ha && (!hb || key_cmp(a, b, m) < 0);
		rc = level_put(x, m, takea ? a : b, err);
		if (rc == LLR_OK && takea)
			ha = llr_xsort_next(suf, &a, err);
		else if (rc == LLR_OK)
			hb = llr_xsort_next(x->bos[m], &b, err);
	}
	x_done(x, &suf);
	x_done(x, &x->bos[m]);
	if (rc == LLR_OK && (ha < 0 || hb < 0))
		rc = ha < 0 ? ha : hb;
	return rc == LLR_OK ? llr_xsort_finish(x->lev[m], err) : rc;
}

/* Pass 3a at level n: G, each context's gamma and denominator (level n
 * read in lexicographic order, so in context order). */
static int contexts(xest *x, int n, llr_xsort **G, llr_err *err)
{
	const int m = n - 1;
	const uint64_t cut = x->o->prune[n - 1];
	const double *D = x->D[n];
	if (!(*G = x_new(x, 16, m, lex_cols, m, NULL, err)))
		return llr_err_code(err, LLR_ENOMEM);
	uint64_t ctx[LLR_NGRAM_MAX_ORDER / 2 + 3];
	uint64_t denom = 0, nk[4] = {0}, pruned = 0;
	int have = 0, rc, more;
	const void *r = NULL;
	if ((rc = llr_xsort_rewind(x->lev[n], err)) != LLR_OK)
		return rc;
	do {
		more = llr_xsort_next(x->lev[n], &r, err);
		if (more < 0)
			return more;
		if (have && (!more || key_cmp(ctx, r, m) != 0)) {
			putd(ctx, kw(m), (D[1] * (double)nk[1] + D[2] * (double)nk[2] + D[3] * (double)nk[3] + (double)pruned) / (double)denom);
			put64(ctx, kw(m) + 8, denom);
			if ((rc = llr_xsort_run_put(*G, ctx, err)) != LLR_OK)
				return rc;
			have = 0;
		}
		if (!more)
			break;
		if (!have) {
			memset(ctx, 0, sizeof ctx);
			memcpy(ctx, r, (size_t)m * 4);
			denom = pruned = 0;
			memset(nk, 0, sizeof nk);
			have = 1;
		}
		uint64_t adj = get64(r, kw(n)), raw = get64(r, kw(n) + 8);
		denom += adj;
		if (cut > 0 && raw <= cut)
			pruned += adj;
		else
			nk[adj < 3 ? adj : 3]++;
	} while (more);
	return llr_xsort_finish(*G, err);
}

/* Pass 3b at level n: u and gamma of each n-gram sorted by suffix, and
 * joined with the probabilities of level n-1 (plo, or the unigrams at
 * n = 2) into *P, lexicographic; level n's stream is done with. */
static int interpolate(xest *x, int n, llr_xsort *G, llr_xsort *plo, llr_xsort **P, llr_err *err)
{
	const int m = n - 1;
	const uint64_t cut = x->o->prune[n - 1];
	llr_xsort *S = x_new(x, 24, n, suf_cols, m, NULL, err);
	if (!S)
		return llr_err_code(err, LLR_ENOMEM);
	uint64_t rec[LLR_NGRAM_MAX_ORDER / 2 + 4];
	memset(rec, 0, sizeof rec);
	const void *r, *g = NULL;
	int rc = llr_xsort_rewind(x->lev[n], err), hg = 0;
	if (rc == LLR_OK && (rc = llr_xsort_rewind(G, err)) == LLR_OK && (hg = llr_xsort_next(G, &g, err)) < 0)
		rc = hg;
	while (rc == LLR_OK && (rc = llr_xsort_next(x->lev[n], &r, err)) == 1) {
		while (hg == 1 && key_cmp(g, r, m) < 0)
			hg = llr_xsort_next(G, &g, err);
		if (hg < 0) {
			rc = hg;
			break;
		}
		LLR_ASSERT(hg == 1 && key_cmp(g, r, m) == 0);
		uint64_t adj = get64(r, kw(n)), raw = get64(r, kw(n) + 8);
		memcpy(rec, r, (size_t)n * 4);
		putd(rec, kw(n), ((double)adj - llr_kn_disc(x->D[n], adj)) / (double)get64(g, kw(m) + 8));
		putd(rec, kw(n) + 8, getd(g, kw(m)));
		put64(rec, kw(n) + 16, !(cut > 0 && raw <= cut));
		rc = llr_xsort_add(S, rec, err);
	}
	if (rc == LLR_OK)
		rc = llr_xsort_finish(S, err);
	if (rc == LLR_OK)
		x_disk(x, &S, 1);
	x_done(x, &x->lev[n]);
	if (rc == LLR_OK && !(*P = x_new(x, 16, n, lex_cols, n, NULL, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	if (rc == LLR_OK) /* S comes in suffix order: one pass (by the first word) sorts it */
		llr_xsort_presorted(*P, 1);
	const void *lo = NULL;
	int hl = 0;
	if (rc == LLR_OK && plo && (rc = llr_xsort_rewind(plo, err)) == LLR_OK && (hl = llr_xsort_next(plo, &lo, err)) < 0)
		rc = hl;
	while (rc == LLR_OK && (rc = llr_xsort_next(S, &r, err)) == 1) {
		const uint32_t *suf = (const uint32_t *)r + 1;
		double p;
		if (n == 2) {
			p = x->p1[suf[0]];
		} else {
			while (hl == 1 && key_cmp(lo, suf, m) < 0)
				hl = llr_xsort_next(plo, &lo, err);
			if (hl < 0) {
				rc = hl;
				break;
			}
			LLR_ASSERT(hl == 1 && key_cmp(lo, suf, m) == 0);
			p = getd(lo, kw(m));
		}
		uint64_t kept = get64(r, kw(n) + 16);
		memcpy(rec, r, (size_t)n * 4);
		putd(rec, kw(n), getd(r, kw(n)) + getd(r, kw(n) + 8) * p);
		put64(rec, kw(n) + 8, kept);
		rc = n == x->N && !kept ? LLR_OK : llr_xsort_add(*P, rec, err);
	}
	if (rc == LLR_OK)
		rc = llr_xsort_finish(*P, err);
	if (rc == LLR_OK)
		x_disk(x, &S, 1);
	x_done(x, &S);
	return rc;
}

/* A line of level n: to the ARPA file, or (the trie form) to level n's
 * stream of lines, which comes out in the trie's order. */
static int put_line(xest *x, llr_arpa_out *out, int n, const void *key, float logp, float bo, llr_err *err)
{
	if (!x->trie) {
		int rc = llr_arpa_out_line(out, n, key, logp, bo);
		if (rc == LLR_ENOMEM)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (rc == LLR_EIO) {
			int e = llr_arpa_out_errno(out);
			return llr_err_set(err, LLR_EIO, "%s: %s%s", llr_arpa_out_name(out), e ? strerror(e) : "write failed",
			                   llr_arpa_out_name(out) == x->cfg.dir ? " (standard output is held there until the end)" : "");
		}
		return rc;
	}
	uint64_t rec[LLR_NGRAM_MAX_ORDER / 2 + 2];
	memset(rec, 0, sizeof rec);
	memcpy(rec, key, (size_t)n * 4);
	memcpy((char *)rec + kw(n), &logp, 4);
	memcpy((char *)rec + kw(n) + 4, &bo, 4);
	return llr_xsort_run_put(x->lines[n], rec, err);
}

/* The lines of level n: from p (or the unigrams at n = 1) and the
 * backoffs of G (contexts of level n+1; NULL at the highest order),
 * each read by a cursor of its own, so that interpolate() may read the
 * same sorts meanwhile in another thread (probabilities()). */
static int write_level(xest *x, llr_arpa_out *out, int n, const llr_xsort *p, const llr_xsort *G, llr_err *err)
{
	llr_xsort_cursor *gc = NULL, *pc = NULL;
	const void *g = NULL, *r;
	int hg = 0, rc = LLR_OK;
	if (!x->trie)
		rc = llr_arpa_out_section(out, n);
	else if (!(x->lines[n] = x_new(x, 8, n, lex_cols, n, NULL, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	if (rc == LLR_OK && G && (!(gc = llr_xsort_cursor_new(G, err)) || (hg = llr_xsort_cursor_next(gc, &g, err)) < 0))
		rc = gc ? hg : llr_err_code(err, LLR_ENOMEM);
	if (rc == LLR_OK && p && !(pc = llr_xsort_cursor_new(p, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	uint32_t w = 0;
	while (rc == LLR_OK) {
		float logp;
		if (n == 1) {
			if (w == x->V)
				break;
			r = &w;
			logp = x->logp1[w];
		} else {
			if ((rc = llr_xsort_cursor_next(pc, &r, err)) != 1)
				break;
			rc = LLR_OK;
			if (!get64(r, kw(n) + 8))
				continue;
			logp = fminf(0.0f, (float)log10(getd(r, kw(n))));
		}
		float bo = 0.0f;
		while (hg == 1 && key_cmp(g, r, n) < 0)
			hg = llr_xsort_cursor_next(gc, &g, err);
		if (hg < 0) {
			rc = hg;
			break;
		}
		uint32_t last = ((const uint32_t *)r)[n - 1];
		if (hg == 1 && key_cmp(g, r, n) == 0 && last != EOS_ID && last != UNK_ID)
			bo = (float)log10(getd(g, kw(n)));
		rc = put_line(x, out, n, r, logp, bo, err);
		w++;
	}
	llr_xsort_cursor_free(gc);
	llr_xsort_cursor_free(pc);
	if (rc == LLR_OK && x->trie)
		rc = llr_xsort_finish(x->lines[n], err);
	return rc < 0 ? rc : LLR_OK;
}

/* write_level() in a thread of its own (x->cfg.threads > 1) while
 * interpolate() goes on in this one: the arguments, the result. */
typedef struct xwriter {
	xest *x;
	llr_arpa_out *out;
	int n;
	const llr_xsort *p, *G;
	int rc, started;
	llr_err err;
	pthread_t th;
} xwriter;

static void *writer_run(void *arg)
{
	xwriter *w = arg;
	w->rc = write_level(w->x, w->out, w->n, w->p, w->G, &w->err);
	return NULL;
}

/* Start the writer: in a thread, or here (one thread, or none starts). */
static void writer_start(xwriter *w)
{
	memset(&w->err, 0, sizeof w->err);
	w->started = w->x->cfg.threads > 1 && pthread_create(&w->th, NULL, writer_run, w) == 0;
	if (!w->started)
		writer_run(w);
}

/* The writer done; rc, or the writer's error if rc is LLR_OK. */
static int writer_join(xwriter *w, int rc, llr_err *err)
{
	if (w->started)
		pthread_join(w->th, NULL);
	w->started = 0;
	if (rc == LLR_OK && w->rc != LLR_OK) {
		if (err)
			*err = w->err;
		rc = w->rc;
	}
	return rc;
}

/* Passes 1 and 2, the discounts and the unigrams. */
static int prepare(xest *x, llr_xsort *counts, double *discounts, llr_err *err)
{
	int rc = llr_xsort_finish(counts, err);
	if (rc == LLR_OK)
		x_disk(x, &counts, 1);
	if (rc == LLR_OK)
		rc = split(x, counts, err);
	if (rc == LLR_OK)
		x_disk(x, &counts, 1);
	for (int n = x->N; rc == LLR_OK && n >= 2; n--)
		rc = adjust(x, n, err);
	if (rc != LLR_OK)
		return rc;
	for (uint32_t w = 0; w < x->V; w++)
		if (x->adj1[w] >= 1 && x->adj1[w] <= 4)
			x->t[1][x->adj1[w]]++;
	for (int n = 1; n <= x->N; n++) {
		if ((rc = llr_kn_discounts(x->t[n], n, x->o, x->D[n], err)) != LLR_OK)
			return rc;
		if (discounts)
			for (int k = 0; k < 3; k++)
				discounts[(n - 1) * 3 + k] = x->D[n][k + 1];
	}
	x->kept[0] = x->V;
	llr_kn_unigrams(x->adj1, x->V, x->D[1], x->p1, x->logp1);
	free(x->adj1);
	x->adj1 = NULL;
	return LLR_OK;
}

/* Pass 3 and the ARPA file. */
static int probabilities(xest *x, llr_arpa_out *out, llr_err *err)
{
	llr_xsort *G = NULL, *plo = NULL, *P = NULL;
	int rc = LLR_OK;
	for (int n = 2; n <= x->N && rc == LLR_OK; n++) {
		if ((rc = contexts(x, n, &G, err)) == LLR_OK) {
			/* the lines of level n-1 written while level n is
			 * interpolated: both read G and plo, by readers of their own */
			xwriter w = {.x = x, .out = out, .n = n - 1, .p = plo, .G = G};
			writer_start(&w);
			rc = writer_join(&w, interpolate(x, n, G, plo, &P, err), err);
		}
		x_done(x, &G);
		x_done(x, &plo);
		plo = P;
		P = NULL;
	}
	if (rc == LLR_OK)
		rc = write_level(x, out, x->N, x->N == 1 ? NULL : plo, NULL, err);
	x_done(x, &plo);
	return rc;
}

/* Level n of the trie form (trie.c's members, as llr_ngram_save writes
 * them) from its stream of lines, each member gathered in a spool (its
 * CRC goes before its bytes); the child ranges counted from level n+1's
 * lines, in the same order, each n-gram after its prefix. */
static int trie_level(xest *x, llr_tensor_writer *w, int n, llr_err *err)
{
	static const char *const what[4] = {"word", "logp", "backoff", "child"};
	const llr_dtype dt[4] = {LLR_I32, LLR_F32, LLR_F32, LLR_I64};
	const int want[4] = {n > 1, 1, n < x->N, n < x->N};
	llr_xsort *hi = n < x->N ? x->lines[n + 1] : NULL;
	llr_tw_spool *sp[4] = {NULL};
	int rc = LLR_OK, more = 0, hc = 0;
	for (int i = 0; i < 4 && rc == LLR_OK; i++)
		if (want[i] && !(sp[i] = llr_tw_spool_new(x->cfg.dir, dt[i], x->kept[n - 1] + (i == 3), err)))
			rc = llr_err_code(err, LLR_ENOMEM);
	const void *r, *c = NULL;
	if (rc == LLR_OK)
		rc = llr_xsort_rewind(x->lines[n], err);
	if (rc == LLR_OK && hi && (rc = llr_xsort_rewind(hi, err)) == LLR_OK && (hc = llr_xsort_next(hi, &c, err)) < 0)
		rc = hc;
	int64_t at = 0; /* the next n+1-gram's index */
	while (rc == LLR_OK && (more = llr_xsort_next(x->lines[n], &r, err)) == 1) {
		int32_t word = (int32_t)((const uint32_t *)r)[n - 1];
		const char *v = (const char *)r + kw(n); /* log10 p, log10 backoff */
		if (sp[0])
			rc = llr_tw_spool_add(sp[0], &word, err);
		if (rc == LLR_OK)
			rc = llr_tw_spool_add(sp[1], v, err);
		if (rc == LLR_OK && sp[2])
			rc = llr_tw_spool_add(sp[2], v + 4, err);
		if (rc == LLR_OK && sp[3])
			rc = llr_tw_spool_add(sp[3], &at, err);
		for (; rc == LLR_OK && hc == 1 && key_cmp(c, r, n) == 0; at++)
			hc = llr_xsort_next(hi, &c, err);
		if (hc < 0)
			rc = hc;
	}
	if (rc == LLR_OK && more < 0)
		rc = more;
	if (rc == LLR_OK && hc == 1) /* KN keeps every prefix; pruning is checked to keep them (llr_kn_check) */
		rc = llr_err_set(err, LLR_EINVAL, "a %d-gram without its prefix among the %d-grams: no trie", n + 1, n);
	if (rc == LLR_OK && sp[3])
		rc = llr_tw_spool_add(sp[3], &at, err);
	for (int i = 0; i < 4 && rc == LLR_OK; i++) {
		char name[32];
		snprintf(name, sizeof name, "%d/%s", n, what[i]);
		if (sp[i])
			rc = llr_tw_put_spool(w, name, sp[i], err);
	}
	for (int i = 0; i < 4; i++)
		llr_tw_spool_free(sp[i]);
	return rc;
}

/* The trie form to path from the levels' lines, freed as they are done. */
static int write_trie(xest *x, const char *path, const llr_strmap *vocab, llr_err *err)
{
	llr_tensor_writer *w = llr_ngram_writer_open(path, x->N, x->kept, err);
	if (!w)
		return llr_err_code(err, LLR_EIO);
	int rc = llr_lex_put_names(w, "vocab", vocab, err);
	for (int n = 1; n <= x->N && rc == LLR_OK; n++) {
		rc = trie_level(x, w, n, err);
		x_done(x, &x->lines[n]);
	}
	if (rc != LLR_OK) {
		llr_tw_abort(w);
		return rc;
	}
	return llr_tw_close(w, err);
}

/* What stays in memory besides the sorts: the vocabulary (and the ARPA
 * writer's copy of its words), the unigrams and the stream buffers (of
 * iobuf bytes each: the readers of two sorts, and the writer's two
 * cursors, which may read at the same time in another thread). */
static size_t x_fixed(const xest *x, size_t vocab_bytes, size_t iobuf)
{
	size_t trie = x->trie ? (size_t)(x->N + 1) * iobuf + 4 * LLR_TW_SPOOL_BYTES : 0; /* the lines, the spools */
	size_t threads = x->cfg.threads > 1 ? (size_t)(2 * x->cfg.threads + 1) * LLR_NGRAM_THREAD_BYTES : 0; /* the spill's, the sort's, the writer */
	return vocab_bytes + x->words + (size_t)x->V * 20 + (size_t)(4 * x->cfg.fanin + x->N + 6) * iobuf + trie + threads;
}

/* The least budget at stream buffers of iobuf bytes: x_fixed and a sort
 * of a few records (its counts a thread, three buffers with threads). */
static size_t x_least(const xest *x, size_t vocab_bytes, size_t iobuf)
{
	size_t k = x->cfg.threads > 1 ? (size_t)x->cfg.threads : 1;
	return x_fixed(x, vocab_bytes, iobuf) + k * ((size_t)x->V + 1) * 4 + (k > 1 ? 3 : 2) * 4096 * (kw(x->N) + 24);
}

static int estimate_disk(llr_ngram_counter *c, const llr_kn_opts *o, const char *path, int trie, double *discounts,
                         llr_ngram_disk_stats *st, llr_err *err)
{
	xest x;
	llr_ngram_disk_stats st0;
	memset(&x, 0, sizeof x);
	x.trie = trie;
	x.st = st ? st : &st0;
	memset(x.st, 0, sizeof *x.st);
	x.o = o;
	llr_xsort *counts = NULL;
	llr_strmap *vocab = NULL;
	size_t max_bytes, vocab_bytes, base = llr_ngram_counter_base(c);
	int rc = llr_ngram_counter_take_runs(c, &x.N, &counts, &x.cfg, &max_bytes, &vocab_bytes, &vocab, err);
	if (rc != LLR_OK)
		return rc;
	if ((rc = llr_kn_check(o, x.N, err)) != LLR_OK)
		goto done;
	x.V = (uint32_t)llr_strmap_size(vocab);
	x.words = trie ? 0 : llr_arpa_out_words_bytes(vocab);
	size_t least = x_least(&x, vocab_bytes, x.cfg.iobuf);
	if (max_bytes < least) {
		/* the least budget that holds what it needs at its own buffer
		 * size, and 1 MiB more: the program's own share (base) differs
		 * from run to run by a few hundred KiB */
		size_t mib = ((least + base) >> 20) + 2;
		while (x_least(&x, vocab_bytes, llr_ngram_iobuf((mib << 20) - base)) + base > mib << 20)
			mib++;
		rc = llr_err_set(err, LLR_ERANGE, "a memory budget of %zu MiB is too small to estimate on disk: this vocabulary needs %zu MiB at least",
		                 (max_bytes + base) >> 20, mib);
		goto done;
	}
	size_t fixed = x_fixed(&x, vocab_bytes, x.cfg.iobuf);
	x.cfg.mem = max_bytes - fixed;
	x.adj1 = llr_calloc(x.V, sizeof *x.adj1);
	x.p1 = llr_malloc((size_t)x.V * sizeof *x.p1);
	x.logp1 = llr_malloc((size_t)x.V * sizeof *x.logp1);
	if (!x.adj1 || !x.p1 || !x.logp1) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = prepare(&x, counts, discounts, err)) != LLR_OK)
		goto done;
	x_done(&x, &counts);
	if (trie) {
		if ((rc = probabilities(&x, NULL, err)) == LLR_OK)
			rc = write_trie(&x, path, vocab, err);
	} else {
		llr_arpa_out *out = llr_arpa_out_open(path, x.cfg.dir, x.N, x.kept, vocab, err);
		if (!out) {
			rc = llr_err_code(err, LLR_EIO);
			goto done;
		}
		rc = probabilities(&x, out, err);
		int rc2 = llr_arpa_out_close(out, rc == LLR_OK, err);
		if (rc == LLR_OK)
			rc = rc2;
	}
	memcpy(x.st->count, x.kept, sizeof x.kept);
done:
	x_done(&x, &counts);
	for (int n = 0; n <= LLR_NGRAM_MAX_ORDER; n++) {
		x_done(&x, &x.lev[n]);
		x_done(&x, &x.bos[n]);
		x_done(&x, &x.lines[n]);
	}
	free(x.adj1);
	free(x.p1);
	free(x.logp1);
	llr_strmap_free(vocab);
	LLR_ASSERT(rc <= 0); /* a stream's 1 ("a record") never escapes */
	return rc;
}

int llr_ngram_estimate_arpa(llr_ngram_counter *c, const llr_kn_opts *o, const char *path, double *discounts, llr_ngram_disk_stats *st,
                            llr_err *err)
{
	return estimate_disk(c, o, path, 0, discounts, st, err);
}

int llr_ngram_estimate_trie(llr_ngram_counter *c, const llr_kn_opts *o, const char *path, double *discounts, llr_ngram_disk_stats *st,
                            llr_err *err)
{
	return estimate_disk(c, o, path, 1, discounts, st, err);
}
