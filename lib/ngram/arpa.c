/*
 * arpa.c - ARPA backoff n-gram files in and out (the format of SRILM's
 * ngram-format(5), as KenLM, SRILM and IRSTLM write it): a \data\ header
 * of "ngram n=count" lines, then one \n-grams: section per order of
 * "log10p<TAB>w1 .. wn[<TAB>log10backoff]" lines, then \end\.  Fields may
 * be separated by any run of spaces and tabs; blank lines separate
 * sections; text before \data\ is ignored.  A log-probability of -inf
 * reads as -99, SRILM's stand-in.
 *
 * The reader builds the trie of trie.c level by level in one pass over
 * the lines: each n-gram goes straight into its level's arrays, and the
 * child offsets of the level below are counted as the lines come, when
 * they are in (prefix entry, word) order as writers list them; a section
 * in any other order is sorted once it is read.  Every prefix must be
 * listed in the section before.  Numbers are parsed exactly (Clinger's
 * fast path, the digits after the point up to 8 at a time, else strtod),
 * words looked up in a table of their own (wordtab.c), and the prefix of
 * the line before is reused when it repeats; the trie's arrays are on
 * huge pages (llr_alloc_large).  The writer walks the trie; its numbers
 * have 8 significant digits, 9 when 8 do not read back as the same
 * float.  Compressed output (.gz, .bz2, .xz, .zst) goes through
 * llr_compress_fdopen (lib/core/output.c).  Not here:
 * estimation, queries.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ngram.h"

/* ------------------------------------------------------------ reading */

/* The hot part of the word table (wordtab.c): 4,096 words, 192 KiB. */
#define ARPA_HOT_WORDS 4096

typedef struct reader {
	llr_wordtab *wt;
	llr_lines *l;
	const char *name;
	const char *line;
	size_t len;
	int eof;
	llr_err *err;
} reader;

static int rd_next(reader *r)
{
	int rc = llr_lines_next(r->l, &r->line, &r->len, r->err);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		r->eof = 1;
		r->line = "";
		r->len = 0;
	}
	return LLR_OK;
}

static int is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* The line without surrounding blanks equals s. */
static int line_is(const reader *r, const char *s)
{
	size_t a = 0, b = r->len, n = strlen(s);
	while (a < b && (r->line[a] == ' ' || r->line[a] == '\t'))
		a++;
	while (b > a && (r->line[b - 1] == ' ' || r->line[b - 1] == '\t' || r->line[b - 1] == '\r'))
		b--;
	return b - a == n && !memcmp(r->line + a, s, n);
}

static int rd_fail(reader *r, const char *fmt, const char *a, long long x, long long y)
{
	char why[400];
	snprintf(why, sizeof why, fmt, a, x, y);
	if (r->eof)
		return llr_err_set(r->err, LLR_EFORMAT, "%s: %s", r->name, why);
	return llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: %s", r->name, llr_lines_lineno(r->l), why);
}

/* Skip blank lines. */
static int rd_skip_blank(reader *r)
{
	int rc = LLR_OK;
	while (rc == LLR_OK && !r->eof && is_blank(r->line, r->len))
		rc = rd_next(r);
	return rc;
}

/* The exact powers of ten of a double. */
static const double pow10_exact[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The general case of llr_arpa_parse_float: strtod on a copy. */
static int parse_float_slow(const char *s, size_t n, float *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	double v = strtod(buf, &end);
	if (end != buf + n || isnan(v))
		return -1;
	if (isinf(v) && v < 0)
		v = -99;
	if (isinf(v))
		return -1;
	*out = (float)v;
	return 0;
}

/* Powers of ten up to 10^8, as integers. */
static const uint64_t pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARPA_SWAR 1

/* The 8 bytes of s ending at byte `to`, those before byte `from` (at
 * most 8 back) replaced by '0', as the 8-digit number they spell into
 * *v, so k = to - from digits read as 8 with leading zeros: 1 if they
 * are all digits.  The check: every byte 0x30..0x39, i.e. its high
 * nibble is 3, and still 3 after adding 6; the value with three
 * multiplications (the byte-pair, pair-of-pairs and half sums;
 * simdjson's parse_eight_digits_unrolled).  Needs to >= 8. */
static inline int eight_digits(const char *s, size_t from, size_t to, uint32_t *v)
{
	const uint64_t nib = 0xF0F0F0F0F0F0F0F0ull;
	uint64_t w, low = to - from >= 8 ? 0 : ~0ull >> (8 * (to - from)); /* the bytes before from */
	memcpy(&w, s + to - 8, 8);
	w = (w & ~low) | (0x3030303030303030ull & low);
	if (((w & nib) | (((w + 0x0606060606060606ull) & nib) >> 4)) != 0x3333333333333333ull)
		return 0;
	w = (w & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
	w = (w & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
	*v = (uint32_t)((w & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32);
	return 1;
}
#endif

/* m followed by the decimal digits of s[*i..n) up to the first other
 * byte, modulo 2^64 (the caller counts the digits); *i moves past them.
 * For the digits after the point; on a little-endian machine up to 8 at
 * a time (eight_digits) when s has 8 bytes up to their end. */
static inline uint64_t parse_fraction(const char *s, size_t n, size_t *i, uint64_t m)
{
	size_t p = *i;
#ifdef ARPA_SWAR
	uint32_t v;
	while (p < n) {
		size_t k = n - p < 8 ? n - p : 8;
		if (p + k < 8 || !eight_digits(s, p, p + k, &v))
			break;
		m = m * pow10_u64[k] + v;
		p += k;
	}
#endif
	for (; p < n && (unsigned)(s[p] - '0') < 10; p++)
		m = m * 10 + (unsigned)(s[p] - '0');
	*i = p;
	return m;
}

/* Decimal numbers ([+-]digits[.digits][e[+-]digits]) of at most 19
 * significant digits whose value m * 10^e has m <= 2^53 and |e| <= 22
 * take one exact multiplication or division of doubles (Clinger's fast
 * path), so they get strtod's correctly rounded double; every other
 * form (hex, inf, long or extreme numbers) goes to strtod itself. */
int llr_arpa_parse_float(const char *s, size_t n, float *out)
{
	size_t p = 0;
	int neg = 0;
#ifdef ARPA_SWAR
	/* Most ARPA numbers: [-]d.d..d with 1 to 16 digits after the point,
	 * in 8 bytes or more: the last 8 of them (or fewer) at once, those
	 * before one by one; the value m / 10^k exactly as below. */
	if (n >= 8 && (unsigned)(s[s[0] == '-'] - '0') < 10 && s[(s[0] == '-') + 1] == '.') {
		size_t q = s[0] == '-', k = n - q - 2, j = q + 2, last = k < 8 ? k : 8;
		uint64_t m = (unsigned)(s[q] - '0');
		for (; j < n - last && (unsigned)(s[j] - '0') < 10; j++)
			m = m * 10 + (unsigned)(s[j] - '0');
		uint32_t v;
		if (k >= 1 && k <= 16 && j == n - last && eight_digits(s, j, n, &v) && (m = m * pow10_u64[last] + v) <= (uint64_t)1 << 53) {
			double x = (double)m / pow10_exact[k];
			*out = (float)(q ? -x : x);
			return 0;
		}
	}
#endif
	if (p < n && (s[p] == '-' || s[p] == '+'))
		neg = s[p++] == '-';
	const size_t d0 = p;
	while (p < n && s[p] == '0') /* leading zeros */
		p++;
	const size_t s0 = p;
	uint64_t m = 0;
	for (; p < n && (unsigned)(s[p] - '0') < 10; p++) /* mostly 0 to 2 digits */
		m = m * 10 + (unsigned)(s[p] - '0');
	long nd = (long)(p - s0), digits = (long)(p - d0), x10 = 0; /* significant digits, all */
	if (p < n && s[p] == '.') {
		const size_t f0 = ++p;
		if (m == 0)
			while (p < n && s[p] == '0')
				p++;
		const size_t f1 = p;
		m = parse_fraction(s, n, &p, m);
		nd += (long)(p - f1);
		digits += (long)(p - f0);
		x10 = -(long)(p - f0);
	}
	if (!digits || nd > 19)
		return parse_float_slow(s, n, out);
	if (p < n && (s[p] == 'e' || s[p] == 'E')) {
		int eneg = 0;
		long x = 0;
		if (++p < n && (s[p] == '-' || s[p] == '+'))
			eneg = s[p++] == '-';
		if (p == n)
			return parse_float_slow(s, n, out);
		for (; p < n && (unsigned)(s[p] - '0') < 10; p++)
			if (x < 100000)
				x = x * 10 + (s[p] - '0');
		x10 += eneg ? -x : x;
	}
	if (p != n || m > (uint64_t)1 << 53 || (m && (x10 < -22 || x10 > 22)))
		return parse_float_slow(s, n, out);
	double v = m == 0 ? 0.0 : x10 < 0 ? (double)m / pow10_exact[-x10]
	                                  : (double)m * pow10_exact[x10];
	*out = (float)(neg ? -v : v);
	return 0;
}

static int parse_header(reader *r, int *order, int64_t *counts)
{
	int rc;
	while ((rc = rd_next(r)) == LLR_OK && !r->eof && !line_is(r, "\\data\\"))
		;
	if (rc != LLR_OK)
		return rc;
	if (r->eof)
		return rd_fail(r, "no \\data\\ section: not an ARPA file%s", "", 0, 0);
	*order = 0;
	while ((rc = rd_next(r)) == LLR_OK && !r->eof) {
		if (is_blank(r->line, r->len))
			continue;
		if (r->line[0] == '\\')
			break;
		long long n, c;
		char tail;
		if (sscanf(r->line, " ngram %lld = %lld %c", &n, &c, &tail) != 2)
			return rd_fail(r, "'%s' is not an \"ngram N=count\" line", r->line, 0, 0);
		if (n != *order + 1)
			return rd_fail(r, "ngram %s%lld: expected order %lld", "", n, *order + 1);
		if (n > LLR_NGRAM_MAX_ORDER)
			return rd_fail(r, "order %s%lld is over the limit of %lld", "", n, LLR_NGRAM_MAX_ORDER);
		if (c < 0 || c > ((long long)1 << 40) || (n == 1 && c > LLR_MAX_VOCAB))
			return rd_fail(r, "ngram %s%lld=%lld: count out of range", "", n, c);
		counts[n - 1] = c;
		*order = (int)n;
	}
	if (rc != LLR_OK)
		return rc;
	if (*order == 0)
		return rd_fail(r, "\\data\\ lists no \"ngram N=count\" line%s", "", 0, 0);
	return LLR_OK;
}

/* Section n as it is read: its entries go straight into the trie's
 * arrays of level n, and level n-1's child counts are counted as they
 * come while the lines are in (prefix, word) order, as ARPA writers list
 * them; a section out of that order keeps the prefix entry of every line
 * (from the first line out of order on, the lines before rebuilt from the
 * counts) and is sorted at its end.  The bytes and entry of the last
 * prefix looked up are kept, since most lines repeat the prefix of the
 * line before. */
typedef struct section {
	int n;
	int64_t k, cap, want;
	int64_t *child;    /* n > 1: level n-1's, counts at [prefix + 1] */
	int64_t *prefix;   /* out of order: the prefix entry of each line */
	size_t first_line; /* the line of entry 0 */
	int sorted;        /* so far by (prefix, word) */
	int64_t dup;       /* an entry equal to the one before it, or -1 */
	char *pbuf;        /* the cached prefix, as on its line after the number */
	size_t plen, pcap;
	int64_t pidx;  /* its entry, -1 none */
	int64_t pidx0; /* the prefix entry of the line before */
} section;

/* An array of the trie: at first on huge pages (llr_alloc_large), then
 * grown. */
static void *grow(void *p, size_t n, size_t size)
{
	return p ? llr_reallocarray(p, n, size) : llr_alloc_large(n, size, 0);
}

/* Room for more entries: at first the count \data\ gives (up to 2^24;
 * pages untouched cost nothing), then twice as many. */
static int sec_grow(section *sc, llr_ngram *m)
{
	const int n = sc->n;
	int64_t cap = sc->cap ? sc->cap * 2 : (int64_t)1 << 24;
	if (cap > sc->want)
		cap = sc->want;
	size_t sz = (size_t)cap + 1;
	float *lp = grow(m->logp[n - 1], sz, sizeof *lp);
	if (lp)
		m->logp[n - 1] = lp;
	float *bo = n < m->order ? grow(m->backoff[n - 1], sz, sizeof *bo) : NULL;
	if (bo)
		m->backoff[n - 1] = bo;
	int32_t *w = n > 1 ? grow(m->word[n - 1], sz, sizeof *w) : NULL;
	if (w)
		m->word[n - 1] = w;
	int64_t *pr = sc->prefix ? llr_reallocarray(sc->prefix, sz, sizeof *pr) : NULL;
	if (pr)
		sc->prefix = pr;
	if (!lp || (n < m->order && !bo) || (n > 1 && !w) || (sc->prefix && !pr))
		return LLR_ENOMEM;
	sc->cap = cap;
	return LLR_OK;
}

/* The first line out of order: the prefix entries of the lines before
 * it from the counts, then of every line. */
static int sec_unsorted(section *sc, const llr_ngram *m)
{
	if (!(sc->prefix = llr_malloc(((size_t)sc->cap + 1) * sizeof *sc->prefix)))
		return LLR_ENOMEM;
	int64_t i = 0;
	for (int64_t p = 0; p < m->count[sc->n - 2]; p++)
		for (int64_t c = sc->child[p + 1]; c > 0; c--)
			sc->prefix[i++] = p;
	sc->sorted = 0;
	return LLR_OK;
}

/* a[0..n) == b[0..n), 8 bytes a step: the prefixes compared are short,
 * and a call to memcmp for each line cost more than the comparison. */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return 0;
	}
	for (; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* The first n-1 words of an n-gram line from pos on: their entry in
 * level n-1 into *prefix (-1 if not listed), through the cache of sc.
 * *pos moves past them. */
static int parse_prefix(reader *r, const llr_ngram *m, section *sc, size_t *pos, int64_t *prefix)
{
	const int n = sc->n;
	const char *tok = NULL, *l = r->line;
	size_t tl = 0, p0 = *pos, q = p0 + sc->plen;
	/* The same bytes as the cached prefix, then a separator: the same words. */
	if (sc->pidx >= 0 && q < r->len && (l[q] == ' ' || l[q] == '\t') && same_bytes(l + p0, sc->pbuf, sc->plen)) {
		*pos = q;
		*prefix = sc->pidx;
		return LLR_OK;
	}
	for (int k = 0; k < n - 1; k++)
		if (!llr_token_scan(l, r->len, pos, &tok, &tl))
			return rd_fail(r, "%s%lld words expected, %lld found", "", n, k);
	size_t plen = (size_t)(tok + tl - (l + p0));
	int32_t words[LLR_NGRAM_MAX_ORDER];
	size_t c = p0;
	for (int k = 0; k < n - 1; k++) {
		llr_token_scan(l, r->len, &c, &tok, &tl);
		if ((words[k] = llr_wordtab_get(r->wt, tok, tl, (size_t)(l + r->len - tok))) < 0) {
			char w[256];
			snprintf(w, sizeof w, "%.*s", (int)(tl < 200 ? tl : 200), tok);
			return rd_fail(r, "the word '%s' is not among the 1-grams", w, 0, 0);
		}
	}
	*prefix = llr_ngram_find(m, words, n - 1);
	sc->pidx = -1;
	if (*prefix < 0)
		return LLR_OK;
	if (plen > sc->pcap) {
		char *b = llr_reallocarray(sc->pbuf, plen, 1);
		if (!b)
			return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
		sc->pbuf = b;
		sc->pcap = plen;
	}
	memcpy(sc->pbuf, l + p0, plen);
	sc->plen = plen;
	sc->pidx = *prefix;
	return LLR_OK;
}

/* One n-gram line of section n as entry sc->k (for n = 1 the word is
 * added to the vocabulary). */
static int parse_entry(reader *r, llr_ngram *m, section *sc)
{
	const int n = sc->n;
	const int64_t i = sc->k;
	const char *tok = NULL;
	size_t pos = 0, tl = 0;
	float lp, bo = 0;
	if (!llr_token_scan(r->line, r->len, &pos, &tok, &tl) || llr_arpa_parse_float(tok, tl, &lp) < 0)
		return rd_fail(r, "'%.40s' is not a number (the log10 probability)", tl ? tok : "", 0, 0);
	if (lp > 0)
		return rd_fail(r, "log10 probability %s%lld > 0", "", 0, 0);
	int64_t prefix = 0;
	int rc;
	if (n > 1 && (rc = parse_prefix(r, m, sc, &pos, &prefix)) != LLR_OK)
		return rc;
	if (!llr_token_scan(r->line, r->len, &pos, &tok, &tl))
		return rd_fail(r, "%s%lld words expected, %lld found", "", n, n - 1);
	int32_t w;
	if (n == 1) {
		size_t before = llr_strmap_size(m->vocab);
		if ((w = llr_strmap_add(m->vocab, tok, tl)) < 0)
			return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
		if (llr_strmap_size(m->vocab) == before)
			return rd_fail(r, "the 1-gram '%.200s' is listed twice", tok, 0, 0);
	} else if ((w = llr_wordtab_get(r->wt, tok, tl, (size_t)(r->line + r->len - tok))) < 0) {
		char s[256];
		snprintf(s, sizeof s, "%.*s", (int)(tl < 200 ? tl : 200), tok);
		return rd_fail(r, "the word '%s' is not among the 1-grams", s, 0, 0);
	}
	if (llr_token_scan(r->line, r->len, &pos, &tok, &tl)) {
		if (n == m->order)
			return rd_fail(r, "a %s%lld-gram of the highest order has no backoff weight", "", n, 0);
		if (llr_arpa_parse_float(tok, tl, &bo) < 0)
			return rd_fail(r, "'%.40s' is not a number (the log10 backoff)", tok, 0, 0);
		if (llr_token_scan(r->line, r->len, &pos, &tok, &tl))
			return rd_fail(r, "'%.40s': more fields than an n-gram line has", tok, 0, 0);
	}
	if (prefix < 0)
		return rd_fail(r, "the prefix of this %s%lld-gram is not listed among the %lld-grams", "", n, n - 1);
	m->logp[n - 1][i] = lp;
	if (n < m->order)
		m->backoff[n - 1][i] = bo;
	if (n == 1)
		return LLR_OK;
	m->word[n - 1][i] = w;
	if (sc->sorted && i > 0) {
		int64_t pp = sc->pidx0;
		int32_t pw = m->word[n - 1][i - 1];
		if (pp > prefix || (pp == prefix && pw > w)) {
			if (sec_unsorted(sc, m) != LLR_OK)
				return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
		} else if (pp == prefix && pw == w && sc->dup < 0) {
			sc->dup = i;
		}
	}
	if (sc->sorted)
		sc->child[prefix + 1]++;
	else
		sc->prefix[i] = prefix;
	sc->pidx0 = prefix;
	return LLR_OK;
}

typedef struct skey {
	int64_t prefix, idx;
	int32_t word;
} skey;

static int by_prefix_word(const void *a, const void *b)
{
	const skey *x = a, *y = b;
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	if (x->word != y->word)
		return x->word < y->word ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* A section listed out of order: sort its entries by (prefix, word) and
 * report the first n-gram listed twice, at the later of its two lines. */
static int sec_sort(reader *r, llr_ngram *m, section *sc)
{
	const int n = sc->n;
	const int64_t k = sc->k;
	size_t sz = (size_t)k + 1;
	skey *key = llr_malloc(sz * sizeof *key);
	float *lp = llr_malloc(sz * sizeof *lp), *bo = n < m->order ? llr_malloc(sz * sizeof *bo) : NULL;
	int32_t *w = llr_malloc(sz * sizeof *w);
	if (!key || !lp || !w || (n < m->order && !bo)) {
		free(key);
		free(lp);
		free(bo);
		free(w);
		return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; i < k; i++)
		key[i] = (skey){sc->prefix[i], i, m->word[n - 1][i]};
	qsort(key, (size_t)k, sizeof *key, by_prefix_word);
	sc->dup = -1;
	for (int64_t i = 0; i < k; i++) {
		int64_t j = key[i].idx;
		lp[i] = m->logp[n - 1][j];
		if (bo)
			bo[i] = m->backoff[n - 1][j];
		w[i] = key[i].word;
		sc->prefix[i] = key[i].prefix;
		if (i > 0 && sc->dup < 0 && key[i].prefix == key[i - 1].prefix && key[i].word == key[i - 1].word) {
			int64_t a = key[i - 1].idx < j ? key[i - 1].idx : j, b = key[i - 1].idx < j ? j : key[i - 1].idx;
			sc->dup = b;
			llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: this %d-gram is also on line %zu", r->name, sc->first_line + (size_t)b, n, sc->first_line + (size_t)a);
		}
	}
	free(key);
	free(m->logp[n - 1]);
	m->logp[n - 1] = lp;
	if (bo) {
		free(m->backoff[n - 1]);
		m->backoff[n - 1] = bo;
	}
	free(m->word[n - 1]);
	m->word[n - 1] = w;
	return sc->dup >= 0 ? LLR_EFORMAT : LLR_OK;
}

/* Section n: its lines into the trie (level n, and level n-1's child
 * offsets). */
static int read_section(reader *r, llr_ngram *m, int n, int64_t want)
{
	char head[32];
	snprintf(head, sizeof head, "\\%d-grams:", n);
	int rc = rd_skip_blank(r);
	if (rc != LLR_OK)
		return rc;
	if (r->eof)
		return rd_fail(r, "missing section %s (the file ends)", head, 0, 0);
	if (!line_is(r, head)) {
		char what[128];
		snprintf(what, sizeof what, "%s (found '%.40s')", head, r->line);
		return rd_fail(r, "missing section %s", what, 0, 0);
	}
	section sc = {.n = n, .want = want, .sorted = 1, .dup = -1, .pidx = -1};
	if (n > 1 && !(sc.child = m->child[n - 2] = llr_alloc_large((size_t)m->count[n - 2] + 1, sizeof(int64_t), 1)))
		return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	while ((rc = rd_next(r)) == LLR_OK && !r->eof && !is_blank(r->line, r->len) && r->line[0] != '\\') {
		if (sc.k == want) {
			rc = rd_fail(r, "\\data\\ says %s%lld %lld-grams, the section has more", "", want, n);
			break;
		}
		if (sc.k == sc.cap && (rc = sec_grow(&sc, m)) != LLR_OK) {
			rc = llr_err_set(r->err, LLR_ENOMEM, "out of memory");
			break;
		}
		if (sc.k == 0)
			sc.first_line = llr_lines_lineno(r->l);
		if ((rc = parse_entry(r, m, &sc)) != LLR_OK)
			break;
		sc.k++;
	}
	if (rc == LLR_OK && sc.k != want)
		rc = rd_fail(r, "\\data\\ says %s%lld %lld-grams, the section has fewer", "", want, n);
	if (rc == LLR_OK && sc.k == 0 && (rc = sec_grow(&sc, m)) != LLR_OK)
		rc = llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	if (rc == LLR_OK && !sc.sorted && (rc = sec_sort(r, m, &sc)) == LLR_OK) {
		memset(sc.child, 0, ((size_t)m->count[n - 2] + 1) * sizeof *sc.child);
		for (int64_t i = 0; i < sc.k; i++)
			sc.child[sc.prefix[i] + 1]++;
	} else if (rc == LLR_OK && sc.dup >= 0) {
		rc = llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: this %d-gram is also on line %zu", r->name, sc.first_line + (size_t)sc.dup, n, sc.first_line + (size_t)sc.dup - 1);
	}
	if (rc == LLR_OK) {
		m->count[n - 1] = sc.k;
		for (int64_t i = 0; n > 1 && i < m->count[n - 2]; i++)
			sc.child[i + 1] += sc.child[i];
	}
	free(sc.prefix);
	free(sc.pbuf);
	return rc;
}

int llr_ngram_read_arpa(const char *path, llr_ngram **out, llr_err *err)
{
	*out = NULL;
	reader r = {0};
	r.err = err;
	if (!(r.l = llr_lines_open(path, LLR_LINES_REPLACE_INVALID, err)))
		return llr_err_code(err, LLR_EIO);
	r.name = llr_lines_name(r.l);
	int order = 0;
	int64_t counts[LLR_NGRAM_MAX_ORDER];
	llr_ngram *m = NULL;
	int rc = parse_header(&r, &order, counts);
	if (rc == LLR_OK && !(m = llr_ngram_alloc(order, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	for (int n = 1; rc == LLR_OK && n <= order; n++) {
		if (n == 2 && !(r.wt = llr_wordtab_new(m->vocab, m->logp[0], ARPA_HOT_WORDS)))
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (rc == LLR_OK)
			rc = read_section(&r, m, n, counts[n - 1]);
	}
	llr_wordtab_free(r.wt);
	if (rc == LLR_OK)
		rc = rd_skip_blank(&r);
	if (rc == LLR_OK && (r.eof || !line_is(&r, "\\end\\")))
		rc = r.eof ? rd_fail(&r, "no \\end\\ line (a truncated file?)%s", "", 0, 0) : rd_fail(&r, "expected \\end\\, found '%.40s'", r.line, 0, 0);
	llr_lines_close(r.l);
	if (rc != LLR_OK) {
		llr_ngram_free(m);
		return rc;
	}
	llr_ngram_specials(m);
	*out = m;
	return LLR_OK;
}

/* ------------------------------------------------------------ writing */

typedef struct awriter {
	FILE *fp; /* plain or compressed (llr_compress_fdopen) output */
	int fd;   /* before fp owns it */
	char *tmp;
	llr_buf buf;
	int failed;
	int errnum; /* errno of the first failure, for the message (0: none known) */
} awriter;

static void aw_flush(awriter *w)
{
	if (w->failed || w->buf.len == 0)
		return;
	if (fwrite(w->buf.data, 1, w->buf.len, w->fp) != w->buf.len) {
		w->failed = 1;
		w->errnum = errno;
	}
	llr_buf_clear(&w->buf);
}

static int aw_open(awriter *w, const char *path, llr_err *err)
{
	memset(w, 0, sizeof *w);
	w->fd = -1;
	if (!path || !strcmp(path, "-")) {
		w->fp = stdout;
		return LLR_OK;
	}
	size_t n = strlen(path) + 48;
	if (llr_path_is_special(path)) { /* /dev/null, a FIFO: in place */
		if ((w->fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
			return llr_err_set(err, LLR_EIO, "%s: %s", path, strerror(errno));
	} else if (!(w->tmp = llr_malloc(n)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (unsigned i = 0; w->tmp && i < 1000 && w->fd < 0; i++) {
		snprintf(w->tmp, n, "%s.tmp-%ld-%u", path, (long)getpid(), i);
		w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (w->fd < 0 && errno != EEXIST)
			break;
	}
	if (w->fd < 0) {
		int e = errno;
		free(w->tmp);
		w->tmp = NULL;
		return llr_err_set(err, LLR_EIO, "%s: %s", path, strerror(e));
	}
	llr_compress c = llr_compress_for_path(path);
	if (c != LLR_COMPRESS_NONE) {
		if (!(w->fp = llr_compress_fdopen(w->fd, c, path, err)))
			return llr_err_code(err, LLR_EIO);
	} else if (!(w->fp = fdopen(w->fd, "w"))) {
		return llr_err_set(err, LLR_EIO, "%s: %s", path, strerror(errno));
	}
	w->fd = -1; /* the FILE owns it */
	return LLR_OK;
}

static int aw_close(awriter *w, const char *path, int ok, llr_err *err)
{
	aw_flush(w);
	int failed = w->failed || !ok, e = w->errnum;
	if (w->fp == stdout) {
		if (fflush(stdout) != 0)
			failed = 1, e = e ? e : errno;
	} else if (w->fp) {
		if (fclose(w->fp) != 0)
			failed = 1, e = e ? e : errno;
	} else if (w->fd >= 0) {
		close(w->fd);
	}
	llr_buf_free(&w->buf);
	int rc = LLR_OK;
	if (w->tmp) {
		if (!failed && rename(w->tmp, path) < 0)
			failed = 1, e = errno;
		if (failed)
			unlink(w->tmp);
		free(w->tmp);
	}
	if (failed && ok && e)
		rc = llr_err_set(err, LLR_EIO, "%s: %s", path ? path : "<stdout>", strerror(e));
	else if (failed && ok)
		rc = llr_err_set(err, LLR_EIO, "%s: write failed", path ? path : "<stdout>");
	else if (failed)
		rc = llr_err_code(err, LLR_EIO);
	return rc;
}

/* ------------------------------------------------- number formatting */

__extension__ typedef unsigned __int128 u128;

/* x as printf's %.*g with precision p, for the general case. */
static size_t format_g(char *buf, int p, float x)
{
	int k = snprintf(buf, 32, "%.*g", p, (double)x);
	return k > 0 ? (size_t)k : 0;
}

/* The digits q (p of them) of a number d.ddd x 10^X as %g prints them:
 * style e when X < -4 or X >= p, else style f; trailing zeros and a
 * trailing point dropped. */
static size_t put_g(char *buf, int neg, uint64_t q, int prec, int X)
{
	char d[20];
	int p = prec;
	for (int i = p - 1; i >= 0; i--, q /= 10)
		d[i] = (char)('0' + q % 10);
	while (p > 1 && d[p - 1] == '0')
		p--;
	size_t n = 0;
	if (neg)
		buf[n++] = '-';
	if (X < -4 || X >= prec) {
		buf[n++] = d[0];
		if (p > 1) {
			buf[n++] = '.';
			memcpy(buf + n, d + 1, (size_t)p - 1);
			n += (size_t)p - 1;
		}
		buf[n++] = 'e';
		buf[n++] = X < 0 ? '-' : '+';
		int a = X < 0 ? -X : X;
		if (a >= 100)
			buf[n++] = (char)('0' + a / 100);
		buf[n++] = (char)('0' + a / 10 % 10);
		buf[n++] = (char)('0' + a % 10);
	} else if (X < 0) {
		buf[n++] = '0';
		buf[n++] = '.';
		for (int i = 0; i < -X - 1; i++)
			buf[n++] = '0';
		memcpy(buf + n, d, (size_t)p);
		n += (size_t)p;
	} else {
		for (int i = 0; i <= X; i++)
			buf[n++] = i < p ? d[i] : '0';
		if (p > X + 1) {
			buf[n++] = '.';
			memcpy(buf + n, d + X + 1, (size_t)(p - X - 1));
			n += (size_t)(p - X - 1);
		}
	}
	buf[n] = 0;
	return n;
}

/* Powers of 10 up to 10^38 and of 5 up to 5^44. */
#define P19 ((u128)10000000000000000000ull)
#define P27 ((u128)7450580596923828125ull)
static const u128 pow10_128[39] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
	10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
	1000000000000000ull, 10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull, P19 * 10ull, P19 * 100ull, P19 * 1000ull, P19 * 10000ull, P19 * 100000ull,
	P19 * 1000000ull, P19 * 10000000ull, P19 * 100000000ull, P19 * 1000000000ull, P19 * 10000000000ull,
	P19 * 100000000000ull, P19 * 1000000000000ull, P19 * 10000000000000ull, P19 * 100000000000000ull,
	P19 * 1000000000000000ull, P19 * 10000000000000000ull, P19 * 100000000000000000ull,
	P19 * 1000000000000000000ull, P19 * 10000000000000000000ull};
static const u128 pow5_128[45] = {
	1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull, 1953125ull, 9765625ull,
	48828125ull, 244140625ull, 1220703125ull, 6103515625ull, 30517578125ull, 152587890625ull, 762939453125ull,
	3814697265625ull, 19073486328125ull, 95367431640625ull, 476837158203125ull, 2384185791015625ull,
	11920928955078125ull, 59604644775390625ull, 298023223876953125ull, 1490116119384765625ull,
	7450580596923828125ull, P27 * 5ull, P27 * 25ull, P27 * 125ull, P27 * 625ull, P27 * 3125ull, P27 * 15625ull,
	P27 * 78125ull, P27 * 390625ull, P27 * 1953125ull, P27 * 9765625ull, P27 * 48828125ull, P27 * 244140625ull,
	P27 * 1220703125ull, P27 * 6103515625ull, P27 * 30517578125ull, P27 * 152587890625ull, P27 * 762939453125ull};

/* x as %.8g, or %.9g when that does not read back as x (strtof), as
 * the writer has always printed it.  A normal float of magnitude 2^-21 to
 * 2^23 is m 2^e with m < 2^24 and -44 <= e < 0, so N = m 5^k (k = -e)
 * = x 10^k is an integer below 2^127 of D digits: it is rounded to p = 8
 * digits exactly (half to even, as glibc's printf), and the 8 digits
 * read back as x exactly when they are closer to N than half the float's
 * spacing, 5^k / 2 in that scale (a quarter below a power of two; 5^k is
 * odd, so never a tie); else 9 digits.  Dropping drop = D - p digits
 * divides N by 10^drop = 2^drop 5^drop, and drop <= k (N < 2^24 5^k has
 * at most 8.23 + 0.7 k digits): so the quotient is t >> drop and the
 * remainder (t mod 2^drop) 5^drop with t = m 5^(k-drop) below 2^64, and
 * the rounding and the read-back test compare t mod 2^drop with 2^drop
 * and 5^(k-drop), no division.  Other numbers go through snprintf and
 * strtof. */
size_t llr_arpa_format_float(char *buf, float x)
{
	if (x == 0 || x == -99) {
		memcpy(buf, x == 0 ? "0" : "-99", x == 0 ? 2 : 4);
		return x == 0 ? 1 : 3;
	}
	uint32_t bits;
	memcpy(&bits, &x, 4);
	int be = (int)(bits >> 23 & 0xff), e = be - 150, k = -e;
	if (be == 0 || e < -44 || e >= 0) {
		size_t n = format_g(buf, 8, x);
		if (strtof(buf, NULL) != x)
			n = format_g(buf, 9, x);
		return n;
	}
	const uint64_t m = (bits & 0x7fffff) | 0x800000;
	const u128 N = (u128)m * pow5_128[k];
	uint64_t hi = (uint64_t)(N >> 64);
	int nbits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)N);
	int D = (nbits * 1233) >> 12; /* floor(log10 N) or one more */
	D += N >= pow10_128[D];
	for (int p = 8;; p++) {
		int drop = D - p, X = D - 1 + e, ok = 1;
		uint64_t q;
		if (drop <= 0) {
			q = (uint64_t)N * (uint64_t)pow10_128[-drop];
		} else {
			LLR_ASSERT(drop <= k && drop < 64 && k - drop <= 17); /* t below 2^64 */
			const uint64_t t = (uint64_t)((u128)m * pow5_128[k - drop]), five = (uint64_t)pow5_128[k - drop];
			const uint64_t low = t & ((1ull << drop) - 1), half = 1ull << (drop - 1);
			q = t >> drop;
			int up = low > half || (low == half && (q & 1));
			q += (uint64_t)up;
			if (p == 8) {
				uint64_t diff = up ? (1ull << drop) - low : low;
				ok = (!up && m == 0x800000) ? 4 * diff < five : 2 * diff < five;
			}
		}
		if (q == (p == 8 ? 100000000u : 1000000000u))
			q /= 10, X++;
		if (ok)
			return put_g(buf, (int)(bits >> 31), q, p, X);
	}
}

/* The words of the vocabulary, for the writer. */
typedef struct wword {
	const char *s;
	size_t len;
} wword;

/* The n-grams of level n, in trie order, each on a line with its words
 * (words[0 .. k) filled for entry e of level k). */
static int put_level(awriter *w, const llr_ngram *m, const wword *vw, int n, int k, int64_t e, int32_t *words)
{
	if (k < n) {
		for (int64_t i = m->child[k - 1][e]; i < m->child[k - 1][e + 1]; i++) {
			words[k] = m->word[k][i];
			if (put_level(w, m, vw, n, k + 1, i, words) != LLR_OK)
				return LLR_ENOMEM;
		}
		return LLR_OK;
	}
	size_t need = 2 * 32 + (size_t)n + 1;
	for (int j = 0; j < n; j++)
		need += vw[words[j]].len;
	if (llr_buf_reserve(&w->buf, need) != LLR_OK)
		return LLR_ENOMEM;
	char *p = w->buf.data + w->buf.len;
	p += llr_arpa_format_float(p, m->logp[n - 1][e]);
	for (int j = 0; j < n; j++) {
		*p++ = j ? ' ' : '\t';
		memcpy(p, vw[words[j]].s, vw[words[j]].len);
		p += vw[words[j]].len;
	}
	if (n < m->order) {
		*p++ = '\t';
		p += llr_arpa_format_float(p, m->backoff[n - 1][e]);
	}
	*p++ = '\n';
	*p = 0;
	w->buf.len = (size_t)(p - w->buf.data);
	if (w->buf.len >= 1 << 18)
		aw_flush(w);
	return LLR_OK;
}

int llr_ngram_write_arpa(const llr_ngram *m, const char *path, llr_err *err)
{
	awriter w;
	int rc = aw_open(&w, path, err);
	if (rc != LLR_OK)
		return aw_close(&w, path, 0, err), rc;
	int bad = llr_buf_printf(&w.buf, "\\data\\\n") < 0;
	for (int n = 1; n <= m->order; n++)
		bad |= llr_buf_printf(&w.buf, "ngram %d=%lld\n", n, (long long)m->count[n - 1]) < 0;
	wword *vw = llr_malloc(((size_t)m->count[0] + 1) * sizeof *vw);
	bad |= !vw;
	for (int64_t i = 0; i < m->count[0] && !bad; i++)
		vw[i] = (wword){llr_strmap_str(m->vocab, (int32_t)i), llr_strmap_len(m->vocab, (int32_t)i)};
	for (int n = 1; n <= m->order && !bad; n++) {
		bad |= llr_buf_printf(&w.buf, "\n\\%d-grams:\n", n) < 0;
		int32_t words[LLR_NGRAM_MAX_ORDER];
		for (int64_t i = 0; i < m->count[0] && !bad; i++) {
			words[0] = (int32_t)i;
			bad |= put_level(&w, m, vw, n, 1, i, words) != LLR_OK;
		}
	}
	free(vw);
	bad |= llr_buf_printf(&w.buf, "\n\\end\\\n") < 0;
	if (bad)
		llr_err_set(err, LLR_ENOMEM, "out of memory");
	return aw_close(&w, path, !bad, err);
}

/* ------------------------------------------------- the streamed writer */

/* An ARPA file written a line at a time, for estimation on disk
 * (xestimate.c): the same bytes as llr_ngram_write_arpa gives for the
 * same model.  Standard output is held in an unlinked temporary file in
 * tmpdir until llr_arpa_out_close, so that a failure leaves it empty. */
struct llr_arpa_out {
	awriter w;
	char *path;
	FILE *spool; /* standard output's temporary file, or NULL */
	const char *tmpdir;
	int order;
	uint32_t *off; /* word w's bytes: chars[off[w] .. off[w + 1]) */
	char *chars;
};

size_t llr_arpa_out_words_bytes(const llr_strmap *vocab)
{
	size_t V = llr_strmap_size(vocab), n = (V + 1) * sizeof(uint32_t);
	for (size_t w = 0; w < V; w++)
		n += llr_strmap_len(vocab, (int32_t)w);
	return n;
}

/* The words laid out one after another, by id. */
static int out_words(llr_arpa_out *o, const llr_strmap *vocab)
{
	size_t V = llr_strmap_size(vocab), chars = llr_arpa_out_words_bytes(vocab) - (V + 1) * sizeof(uint32_t);
	if (chars > UINT32_MAX || !(o->off = llr_malloc((V + 1) * sizeof *o->off)) || !(o->chars = llr_malloc(chars + 1)))
		return LLR_ENOMEM;
	uint32_t at = 0;
	for (size_t w = 0; w < V; w++) {
		size_t len = llr_strmap_len(vocab, (int32_t)w);
		o->off[w] = at;
		memcpy(o->chars + at, llr_strmap_str(vocab, (int32_t)w), len);
		at += (uint32_t)len;
	}
	o->off[V] = at;
	return LLR_OK;
}

llr_arpa_out *llr_arpa_out_open(const char *path, const char *tmpdir, int order, const int64_t *counts, const llr_strmap *vocab, llr_err *err)
{
	llr_arpa_out *o = llr_calloc(1, sizeof *o);
	if (!o || (path && !(o->path = strdup(path)))) {
		free(o);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	o->order = order;
	o->tmpdir = tmpdir;
	int rc = out_words(o, vocab) == LLR_OK ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc != LLR_OK) {
		memset(&o->w, 0, sizeof o->w);
		o->w.fd = -1;
	} else if (!path || !strcmp(path, "-")) {
		memset(&o->w, 0, sizeof o->w);
		o->w.fd = -1;
		size_t n = strlen(tmpdir) + 32;
		char *t = llr_malloc(n);
		int fd = -1;
		if (t) {
			snprintf(t, n, "%s/llrnn-arpa-XXXXXX", tmpdir);
			if ((fd = mkstemp(t)) >= 0)
				unlink(t);
		}
		if (fd < 0 || !(o->spool = fdopen(fd, "w+")))
			rc = llr_err_set(err, LLR_EIO, "%s: cannot create a temporary file: %s", tmpdir, t ? strerror(errno) : "out of memory");
		if (fd >= 0 && !o->spool)
			close(fd);
		free(t);
		o->w.fp = o->spool;
	} else {
		rc = aw_open(&o->w, path, err);
	}
	if (rc == LLR_OK) {
		int bad = llr_buf_printf(&o->w.buf, "\\data\\\n") < 0;
		for (int n = 1; n <= order; n++)
			bad |= llr_buf_printf(&o->w.buf, "ngram %d=%lld\n", n, (long long)counts[n - 1]) < 0;
		if (bad)
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	if (rc != LLR_OK) {
		llr_arpa_out_close(o, 0, err);
		return NULL;
	}
	return o;
}

int llr_arpa_out_section(llr_arpa_out *o, int n)
{
	return llr_buf_printf(&o->w.buf, "\n\\%d-grams:\n", n) < 0 ? LLR_ENOMEM : LLR_OK;
}

int llr_arpa_out_line(llr_arpa_out *o, int n, const uint32_t *words, float logp, float backoff)
{
	size_t need = 2 * 32 + (size_t)n + 1;
	for (int j = 0; j < n; j++)
		need += o->off[words[j] + 1] - o->off[words[j]];
	if (o->w.buf.cap - o->w.buf.len < need && llr_buf_reserve(&o->w.buf, need) != LLR_OK)
		return LLR_ENOMEM;
	char *p = o->w.buf.data + o->w.buf.len;
	p += llr_arpa_format_float(p, logp);
	for (int j = 0; j < n; j++) {
		uint32_t at = o->off[words[j]], len = o->off[words[j] + 1] - at;
		*p++ = j ? ' ' : '\t';
		memcpy(p, o->chars + at, len);
		p += len;
	}
	if (n < o->order) {
		*p++ = '\t';
		p += llr_arpa_format_float(p, backoff);
	}
	*p++ = '\n';
	*p = 0;
	o->w.buf.len = (size_t)(p - o->w.buf.data);
	if (o->w.buf.len >= 1 << 18)
		aw_flush(&o->w);
	return o->w.failed ? LLR_EIO : LLR_OK;
}

int llr_arpa_out_errno(const llr_arpa_out *o)
{
	return o->w.errnum;
}

const char *llr_arpa_out_name(const llr_arpa_out *o)
{
	return o->path && strcmp(o->path, "-") ? o->path : o->tmpdir;
}

/* The end written and the file closed (ok) or dropped (!ok). */
int llr_arpa_out_close(llr_arpa_out *o, int ok, llr_err *err)
{
	if (!o)
		return LLR_OK;
	if (ok && llr_buf_printf(&o->w.buf, "\n\\end\\\n") < 0)
		ok = 0, llr_err_set(err, LLR_ENOMEM, "out of memory");
	int rc;
	if (o->spool) {
		aw_flush(&o->w);
		int failed = o->w.failed || fflush(o->spool) != 0;
		llr_buf_free(&o->w.buf);
		if (ok && !failed) {
			char buf[1 << 16];
			size_t k;
			rewind(o->spool);
			while ((k = fread(buf, 1, sizeof buf, o->spool)) > 0)
				if (fwrite(buf, 1, k, stdout) != k)
					break;
			failed = ferror(o->spool) || ferror(stdout) || fflush(stdout) != 0;
		}
		fclose(o->spool);
		if (failed && ok)
			rc = llr_err_set(err, LLR_EIO, "<stdout>: write failed");
		else
			rc = failed || !ok ? llr_err_code(err, LLR_EIO) : LLR_OK;
	} else {
		rc = aw_close(&o->w, o->path, ok, err);
	}
	free(o->path);
	free(o->off);
	free(o->chars);
	free(o);
	return rc;
}
