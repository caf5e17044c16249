/*
 * ngram.h - private to lib/ngram/: the layout of the n-gram trie that
 * estimate.c, arpa.c and trie.c build and read.  Not API (llrnn.h has the
 * public view, llr_ngram_level).
 */
#ifndef LLR_NGRAM_PRIV_H
#define LLR_NGRAM_PRIV_H

#include "internal.h"

/* probing.c: the hashed form of the levels above the first.  Entry of an
 * n-gram: its 64-bit key (never 0, which marks an empty bucket), its log10
 * p and log10 backoff (0 at the highest order). */
typedef struct llr_probe_entry {
	uint64_t key;
	float logp, backoff;
} llr_probe_entry;

/* Buckets per block of the lazy check (64 KiB of entries). */
#define LLR_PROBE_BLOCK_SHIFT 12

typedef struct llr_ngram_probe {
	const float *uni;                                /* V x 2: log10 p, backoff */
	const llr_probe_entry *tab[LLR_NGRAM_MAX_ORDER]; /* order n at n-1, n >= 2 */
	uint64_t nb[LLR_NGRAM_MAX_ORDER];                /* buckets of order n at n-1 */
	int closed; /* every n-gram's suffix (its first word dropped) is listed */
	/* The mapped form's lazy check: CRC-32C of each block of a table,
	 * and a byte per block set once it matched (NULL when built here).
	 * A block that matched is copied from the mapping (src) into tab,
	 * memory of huge pages (or tab is the mapping itself). */
	const uint32_t *bcrc[LLR_NGRAM_MAX_ORDER];
	unsigned char *checked[LLR_NGRAM_MAX_ORDER];
	/* The flags the lookups read: checked, until every block of the
	 * table has passed (nchecked of blocks), then NULL (none to read). */
	unsigned char *ok[LLR_NGRAM_MAX_ORDER];
	uint64_t nchecked[LLR_NGRAM_MAX_ORDER], blocks[LLR_NGRAM_MAX_ORDER];
	const llr_probe_entry *src[LLR_NGRAM_MAX_ORDER];
	int bad; /* a block failed its check: answers are not to be used */
	int bad_order;
	uint64_t bad_block;
	llr_tarmap *map; /* the mapping, or NULL */
	struct llr_wordtab *words; /* the vocabulary for lookups (llr_ngram_word) */
	void *own[LLR_NGRAM_MAX_ORDER]; /* arrays allocated here */
} llr_ngram_probe;

struct llr_ngram {
	int order;
	llr_ngram_probe *probe; /* the probing form, or NULL */
	char *path;             /* the file, for messages (NULL if built) */
	llr_strmap *vocab; /* V words; id = index of level 1 */
	int32_t bos, eos, unk;
	/* level n (1-based) at index n-1 */
	int64_t count[LLR_NGRAM_MAX_ORDER];
	int32_t *word[LLR_NGRAM_MAX_ORDER]; /* NULL for level 1 */
	float *logp[LLR_NGRAM_MAX_ORDER];
	float *backoff[LLR_NGRAM_MAX_ORDER]; /* levels < order */
	int64_t *child[LLR_NGRAM_MAX_ORDER]; /* levels < order, count + 1 */
};

/* The part of the context ctx[0..n) a query uses: at most the last
 * order-1 words, none before an unknown (negative) one; *ctx moved to it,
 * its length returned. */
static inline int llr_ngram_context(const llr_ngram *m, const int32_t **ctx, int n)
{
	if (n > m->order - 1) {
		*ctx += n - (m->order - 1);
		n = m->order - 1;
	}
	for (int k = n - 1; k >= 0; k--)
		if ((*ctx)[k] < 0) {
			*ctx += k + 1;
			return n - (k + 1);
		}
	return n;
}

/* An empty model of the given order (vocab allocated, arrays NULL). */
llr_ngram *llr_ngram_alloc(int order, llr_err *err);
/* Entry of level n+1 extending entry i of level n by word w, or -1. */
int64_t llr_ngram_child(const llr_ngram *m, int n, int64_t i, int32_t w);
/* Recompute bos/eos/unk from the vocabulary. */
void llr_ngram_specials(llr_ngram *m);
/* LLR_OK if the arrays make a valid trie (offsets monotone and within
 * the next level, words in range and strictly increasing among
 * siblings); else LLR_EFORMAT naming what is wrong. */
int llr_ngram_check(const llr_ngram *m, const char *name, llr_err *err);

/* count.c, for estimate.c: merge the last counts and hand over the
 * order, the sorted array of the n distinct N-grams (keys order x n,
 * counts n) and the vocabulary; the counter is left empty.  LLR_ERANGE
 * if that merge would pass the counter's bound. */
/* For tests: merge every `keys` keys instead of the usual rule. */
void llr_ngram_counter_merge_at(llr_ngram_counter *c, size_t keys);
int llr_ngram_counter_take(llr_ngram_counter *c, int *order, uint32_t **keys, uint64_t **counts, size_t *n, llr_strmap **vocab, llr_err *err);
/* count.c, for estimate.c: the order and the keys the same, after
 * llr_ngram_counter_end, only looked at (the counter keeps them), with
 * the vocabulary's size and the estimate of its memory. */
void llr_ngram_counter_peek(const llr_ngram_counter *c, int *order, const uint32_t **keys, size_t *n, uint32_t *V, size_t *vocab_bytes);
/* count.c, for xestimate.c: after spilling, the runs (records of the
 * N words, padded, and a 64-bit count, lexicographic, llr_xsort_finish
 * not yet called), their set-up, the budget, the memory the vocabulary
 * takes and the vocabulary; the counter is left empty. */
struct llr_xsort;
struct llr_xsort_cfg;
/* count.c: perm[0..n) the entries of key (n of stride words each)
 * ordered by the words at columns cols[0..nc) (most significant first,
 * below V), stable: an LSD radix sort of a 32-bit permutation, each
 * counting pass split among threads (1 to 64) by ranges of entries, with
 * counts of their own laid out range after range, so the order is one
 * thread's; tmp holds n more, cnt threads * (V + 1). */
void llr_perm_sort(const uint32_t *key, size_t stride, size_t n, const int *cols, int nc, uint32_t V, int threads, uint32_t *perm, uint32_t *tmp,
                   uint32_t *cnt);
/* count.c: the threads of its sorts (llr_ngram_disk.threads, 1 before the spill's set-up). */
int llr_ngram_counter_threads(const llr_ngram_counter *c);
/* count.c: the bytes of the budget held outside the counter (llr_ngram_disk.base),
 * which its max_bytes (and take_runs' *max_bytes) leave out. */
size_t llr_ngram_counter_base(const llr_ngram_counter *c);
int llr_ngram_counter_take_runs(llr_ngram_counter *c, int *order, struct llr_xsort **runs, struct llr_xsort_cfg *cfg, size_t *max_bytes,
                                size_t *vocab_bytes, llr_strmap **vocab, llr_err *err);

/* estimate.c, shared with xestimate.c: the checks of o's pruning
 * thresholds for order N; the discounts D[1..3] of order n from its
 * counts of adjusted counts t[1..4] (D[0] = 0); the unigrams' p and
 * log10 p from their adjusted counts (V words, dense by id). */
int llr_kn_check(const llr_kn_opts *o, int N, llr_err *err);
int llr_kn_discounts(const uint64_t t[5], int n, const llr_kn_opts *o, double D[4], llr_err *err);
void llr_kn_unigrams(const uint64_t *adj, uint32_t V, const double D[4], double *p, float *logp);
/* The discount of an adjusted count a: D(0) = 0, D(a) = D[min(a, 3)]. */
static inline double llr_kn_disc(const double D[4], uint64_t a)
{
	return D[a < 3 ? a : 3];
}

/* wordtab.c: the ARPA reader's table of the words of v (ids = their
 * index in v), the `hot` of highest logp (V values, no NaN; ties by id)
 * looked at first; NULL when out of memory.  Get gives the id of
 * s[0..n), -1 if it is not in v; s[0..avail) must be readable (avail >= n;
 * more lets it read 8 bytes at once). */
typedef struct llr_wordtab llr_wordtab;
llr_wordtab *llr_wordtab_new(const llr_strmap *v, const float *logp, size_t hot);
void llr_wordtab_free(llr_wordtab *t);
int32_t llr_wordtab_get(const llr_wordtab *t, const char *s, size_t n, size_t avail);
/* The ids of n NUL-terminated words w (-1 absent) into ids, as
 * llr_wordtab_get each, the slots of several fetched at once. */
void llr_wordtab_get_many(const llr_wordtab *t, const char *const *w, size_t n, int32_t *ids);

/* arpa.c: an ARPA number (the whole of s[0..n)) as (float)strtod(s)
 * gives it, -inf as -99; -1 if s is not a number (or is NaN or +inf). */
int llr_arpa_parse_float(const char *s, size_t n, float *out);
/* arpa.c: x as the ARPA writer prints it (printf's %.8g, or %.9g when
 * %.8g does not read back as x), NUL-terminated in buf; its length. */
size_t llr_arpa_format_float(char *buf, float x);

/* arpa.c: an ARPA file written a line at a time (the header with the
 * counts of each order, then each order's section and its lines, words
 * as ids of vocab), the same bytes as llr_ngram_write_arpa; to standard
 * output (path NULL or "-") only once closed with ok set.  It holds the
 * words of vocab one after another (llr_arpa_out_words_bytes), besides
 * its buffer of a few hundred KiB. */
typedef struct llr_arpa_out llr_arpa_out;
size_t llr_arpa_out_words_bytes(const llr_strmap *vocab);
llr_arpa_out *llr_arpa_out_open(const char *path, const char *tmpdir, int order, const int64_t *counts, const llr_strmap *vocab, llr_err *err);
int llr_arpa_out_section(llr_arpa_out *o, int n);
int llr_arpa_out_line(llr_arpa_out *o, int n, const uint32_t *words, float logp, float backoff);
int llr_arpa_out_close(llr_arpa_out *o, int ok, llr_err *err);
/* What a write error names: the file, or the folder standard output is
 * held in. */
const char *llr_arpa_out_name(const llr_arpa_out *o);
/* The errno of its first failed write, 0 if none is known. */
int llr_arpa_out_errno(const llr_arpa_out *o);

/* probing.c: build m's probing form from its trie (in memory); free
 * it; drop the trie once the probing form answers every query. */
int llr_ngram_probe_build(llr_ngram *m, llr_err *err);
void llr_ngram_probe_free(llr_ngram_probe *p);
void llr_ngram_drop_trie(llr_ngram *m);
/* probing.c: the id of word w[0..len) by the probing form's word table. */
int32_t llr_ngram_probe_word(const llr_ngram *m, const char *w, size_t len);
/* probing.c: m's log10 p of w by the probing form, as llr_ngram_log10p. */
float llr_ngram_probe_log10p(const llr_ngram *m, const int32_t *ctx, int n, int32_t w, int *matched);
/* probing.c: load the probing form from the mapped archive t (its meta
 * already read and checked), llrnn-tensor(5); verify checks every CRC
 * now.  On success m owns t. */
int llr_ngram_probe_map(llr_tarmap *t, const llr_meta *meta, const char *path, int verify, llr_ngram **out, llr_err *err);

/* Bytes of the first nwords 32-bit words of an external record, padded
 * to 8 so that 64-bit fields follow aligned. */
static inline size_t llr_xrec_key_bytes(int nwords)
{
	return (size_t)(nwords + 1) / 2 * 8;
}

/* xsort.c: external sorting of fixed-size records (rec bytes, a
 * multiple of 4, at most 64) that begin with nkey 32-bit word ids below V, ordered
 * by the words cols[0..ncols) (most significant first); records with
 * the same nkey words are folded by combine (NULL: kept apart).  Add
 * records (or write sorted ones as a run: run_put, run_end), finish,
 * then read them in order with next (1, 0 at the end, or an error; the
 * record stays valid until the next call) and again after rewind.  The
 * temporary files (in cfg->dir) are unlinked as soon as created. */
typedef struct llr_xsort_cfg {
	const char *dir;     /* the folder of the temporary files */
	size_t mem;          /* the buffer, its sort scratch and counts */
	size_t iobuf;        /* bytes of each run's read or write buffer */
	int fanin;           /* the most runs merged at once (>= 2) */
	size_t run_records;  /* if not 0: at most this many records a run */
	int threads;         /* threads sorting a run (< 2: this one) */
} llr_xsort_cfg;
typedef struct llr_xsort llr_xsort;
/* count.c: the bytes of each stream buffer under a budget of max_bytes. */
size_t llr_ngram_iobuf(size_t max_bytes);
/* count.c: the sorting set-up of a budget of max_bytes (mem = max_bytes). */
void llr_ngram_xcfg(const llr_ngram_disk *d, size_t max_bytes, llr_xsort_cfg *cfg);
llr_xsort *llr_xsort_new(const llr_xsort_cfg *cfg, size_t rec, int nkey, const int *cols, int ncols, uint32_t V,
                         void (*combine)(void *into, const void *from, size_t rec), llr_err *err);
int llr_xsort_add(llr_xsort *s, const void *rec, llr_err *err);
/* The records will be added in the order of the columns cols[k ..
 * ncols) (ties in any order): the sort of a run skips their passes,
 * the same result at fewer passes; a run found out of that order is
 * sorted by every column all the same. */
void llr_xsort_presorted(llr_xsort *s, int k);
int llr_xsort_run_put(llr_xsort *s, const void *rec, llr_err *err);
int llr_xsort_run_end(llr_xsort *s, llr_err *err);
int llr_xsort_finish(llr_xsort *s, llr_err *err);
int llr_xsort_rewind(llr_xsort *s, llr_err *err);
int llr_xsort_next(llr_xsort *s, const void **rec, llr_err *err);
uint64_t llr_xsort_runs(const llr_xsort *s);   /* runs written, merges included */
uint64_t llr_xsort_passes(const llr_xsort *s); /* merge passes done */
uint64_t llr_xsort_disk(const llr_xsort *s);   /* bytes in its files */
void llr_xsort_free(llr_xsort *s);
/* xsort.c, for count.c too: fn run on the k parts (1 to 64) of size
 * bytes each at part, the first in this thread, the others each in a
 * thread of its own (or here after the first, if it cannot start: the
 * same result); then the counts of a counting pass of k parts (V words,
 * part t's at cnt + t * stride) made offsets laid out word by word, part
 * after part: the records of part t land after those of the parts
 * before it with the same word, as one thread would put them. */
#define LLR_NGRAM_MAX_THREADS 64 /* the most threads a sort is split among */
/* What a thread of counting or estimation holds besides its buffers,
 * counted in the budget: the pages of its stack it touches, its share
 * of the allocator's arenas. */
#define LLR_NGRAM_THREAD_BYTES ((size_t)256 << 10)
void llr_parts_run(void *(*fn)(void *), void *part, size_t size, int k);
void llr_parts_offsets(uint32_t *cnt, size_t stride, int k, uint32_t V);
/* Another reader of a finished sort's merged runs, from the start, with
 * buffers of its own (cfg->fanin of cfg->iobuf bytes at most): it and
 * the sort's own reading (llr_xsort_next) may go on in two threads at
 * once.  Freed before the sort. */
typedef struct llr_xsort_cursor llr_xsort_cursor;
llr_xsort_cursor *llr_xsort_cursor_new(const llr_xsort *s, llr_err *err);
int llr_xsort_cursor_next(llr_xsort_cursor *c, const void **rec, llr_err *err);
void llr_xsort_cursor_free(llr_xsort_cursor *c);

#endif
