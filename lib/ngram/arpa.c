/*
 * arpa.c - ARPA backoff n-gram files in and out (the format of SRILM's
 * ngram-format(5), as KenLM, SRILM and IRSTLM write it): a \data\ header
 * of "ngram n=count" lines, then one \n-grams: section per order of
 * "log10p<TAB>w1 .. wn[<TAB>log10backoff]" lines, then \end\.  Fields may
 * be separated by any run of spaces and tabs; blank lines separate
 * sections; text before \data\ is ignored.  A log-probability of -inf
 * reads as -99, SRILM's stand-in.
 *
 * The reader builds the trie of trie.c level by level: the n-grams of a
 * section are sorted by (prefix entry, word) once the section is read, so
 * the file may list them in any order, but every prefix must be listed
 * in the section before.  The writer walks the trie; its numbers have 8
 * significant digits, 9 when 8 do not read back as the same float.  gzip output goes
 * through libarchive's raw writer.  Not here: estimation, queries.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ngram.h"

/* ------------------------------------------------------------ reading */

typedef struct rentry {
	int64_t prefix;
	int32_t word;
	float logp, backoff;
	size_t line;
} rentry;

typedef struct reader {
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

static int parse_num(const char *s, size_t n, float *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	errno = 0;
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

static int by_prefix_word(const void *a, const void *b)
{
	const rentry *x = a, *y = b;
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return (x->word > y->word) - (x->word < y->word);
}

/* One n-gram line of section n into e (words looked up; for n = 1 the
 * word is added to the vocabulary). */
static int parse_entry(reader *r, llr_ngram *m, int n, rentry *e, int32_t *words)
{
	const char *tok;
	size_t pos = 0, tl;
	if (!llr_token_next(r->line, r->len, &pos, &tok, &tl) || parse_num(tok, tl, &e->logp) < 0)
		return rd_fail(r, "'%.40s' is not a number (the log10 probability)", tl ? tok : "", 0, 0);
	if (e->logp > 0)
		return rd_fail(r, "log10 probability %s%lld > 0", "", 0, 0);
	for (int k = 0; k < n; k++) {
		if (!llr_token_next(r->line, r->len, &pos, &tok, &tl))
			return rd_fail(r, "%s%lld words expected, %lld found", "", n, k);
		if (n == 1) {
			if (llr_strmap_get(m->vocab, tok, tl) >= 0)
				return rd_fail(r, "the 1-gram '%.200s' is listed twice", tok, 0, 0);
			words[k] = llr_strmap_add(m->vocab, tok, tl);
			if (words[k] < 0)
				return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
		} else if ((words[k] = llr_strmap_get(m->vocab, tok, tl)) < 0) {
			char w[256];
			snprintf(w, sizeof w, "%.*s", (int)(tl < 200 ? tl : 200), tok);
			return rd_fail(r, "the word '%s' is not among the 1-grams", w, 0, 0);
		}
	}
	e->backoff = 0;
	if (llr_token_next(r->line, r->len, &pos, &tok, &tl)) {
		if (n == m->order)
			return rd_fail(r, "a %s%lld-gram of the highest order has no backoff weight", "", n, 0);
		if (parse_num(tok, tl, &e->backoff) < 0)
			return rd_fail(r, "'%.40s' is not a number (the log10 backoff)", tok, 0, 0);
		if (llr_token_next(r->line, r->len, &pos, &tok, &tl))
			return rd_fail(r, "'%.40s': more fields than an n-gram line has", tok, 0, 0);
	}
	e->word = words[n - 1];
	e->line = llr_lines_lineno(r->l);
	e->prefix = n == 1 ? 0 : llr_ngram_find(m, words, n - 1);
	if (e->prefix < 0)
		return rd_fail(r, "the prefix of this %s%lld-gram is not listed among the %lld-grams", "", n, n - 1);
	return LLR_OK;
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
	rentry *e = NULL;
	size_t cap = 0;
	int64_t k = 0;
	int32_t words[LLR_NGRAM_MAX_ORDER];
	while ((rc = rd_next(r)) == LLR_OK && !r->eof && !is_blank(r->line, r->len) && r->line[0] != '\\') {
		if (k == want) {
			rc = rd_fail(r, "\\data\\ says %s%lld %lld-grams, the section has more", "", want, n);
			break;
		}
		if ((size_t)k == cap) {
			cap = cap ? cap * 2 : 4096;
			rentry *ne = llr_reallocarray(e, cap, sizeof *e);
			if (!ne) {
				rc = llr_err_set(r->err, LLR_ENOMEM, "out of memory");
				break;
			}
			e = ne;
		}
		if ((rc = parse_entry(r, m, n, &e[k], words)) != LLR_OK)
			break;
		k++;
	}
	if (rc == LLR_OK && k != want)
		rc = rd_fail(r, "\\data\\ says %s%lld %lld-grams, the section has fewer", "", want, n);
	if (rc == LLR_OK && n > 1) {
		int sorted = 1;
		for (int64_t i = 1; i < k && sorted; i++)
			sorted = by_prefix_word(&e[i - 1], &e[i]) < 0;
		if (!sorted)
			qsort(e, (size_t)k, sizeof *e, by_prefix_word);
		for (int64_t i = 1; i < k && rc == LLR_OK; i++)
			if (!by_prefix_word(&e[i - 1], &e[i]))
				rc = llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: this %d-gram is also on line %zu", r->name, e[i].line > e[i - 1].line ? e[i].line : e[i - 1].line, n, e[i].line > e[i - 1].line ? e[i - 1].line : e[i].line);
	}
	size_t sz = (size_t)k + 1;
	if (rc == LLR_OK && (!(m->logp[n - 1] = llr_malloc(sz * sizeof(float))) || (n < m->order && !(m->backoff[n - 1] = llr_malloc(sz * sizeof(float)))) ||
	                     (n > 1 && !(m->word[n - 1] = llr_malloc(sz * sizeof(int32_t)))) || (n > 1 && !(m->child[n - 2] = llr_calloc((size_t)m->count[n - 2] + 1, sizeof(int64_t))))))
		rc = llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	if (rc == LLR_OK) {
		m->count[n - 1] = k;
		for (int64_t i = 0; i < k; i++) {
			m->logp[n - 1][i] = e[i].logp;
			if (n < m->order)
				m->backoff[n - 1][i] = e[i].backoff;
			if (n > 1) {
				m->word[n - 1][i] = e[i].word;
				m->child[n - 2][e[i].prefix + 1]++;
			}
		}
		if (n > 1)
			for (int64_t i = 0; i < m->count[n - 2]; i++)
				m->child[n - 2][i + 1] += m->child[n - 2][i];
	}
	free(e);
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
	for (int n = 1; rc == LLR_OK && n <= order; n++)
		rc = read_section(&r, m, n, counts[n - 1]);
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
	FILE *fp;          /* plain output */
	struct archive *a; /* gzip output */
	int fd;
	char *tmp;
	llr_buf buf;
	int failed;
} awriter;

static void aw_flush(awriter *w)
{
	if (w->failed || w->buf.len == 0)
		return;
	if (w->a) {
		if (archive_write_data(w->a, w->buf.data, w->buf.len) != (la_ssize_t)w->buf.len)
			w->failed = 1;
	} else if (fwrite(w->buf.data, 1, w->buf.len, w->fp) != w->buf.len) {
		w->failed = 1;
	}
	llr_buf_clear(&w->buf);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
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
	if (!(w->tmp = llr_malloc(n)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (unsigned i = 0; i < 1000 && w->fd < 0; i++) {
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
	if (ends_with(path, ".gz")) {
		struct archive *a = archive_write_new();
		if (!a || archive_write_add_filter_gzip(a) != ARCHIVE_OK || archive_write_set_format_raw(a) != ARCHIVE_OK ||
		    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK || archive_write_open_fd(a, w->fd) != ARCHIVE_OK) {
			if (a)
				archive_write_free(a);
			return llr_err_set(err, LLR_EIO, "%s: cannot start gzip output", path);
		}
		struct archive_entry *ent = archive_entry_new();
		archive_entry_set_filetype(ent, AE_IFREG);
		archive_entry_set_pathname(ent, "arpa");
		int ok = archive_write_header(a, ent) == ARCHIVE_OK;
		archive_entry_free(ent);
		if (!ok) {
			archive_write_free(a);
			return llr_err_set(err, LLR_EIO, "%s: cannot start gzip output", path);
		}
		w->a = a;
	} else if (!(w->fp = fdopen(w->fd, "w"))) {
		return llr_err_set(err, LLR_EIO, "%s: %s", path, strerror(errno));
	} else {
		w->fd = -1; /* the FILE owns it */
	}
	return LLR_OK;
}

static int aw_close(awriter *w, const char *path, int ok, llr_err *err)
{
	aw_flush(w);
	int failed = w->failed || !ok;
	if (w->a) {
		if (archive_write_close(w->a) != ARCHIVE_OK)
			failed = 1;
		archive_write_free(w->a);
		if (close(w->fd) < 0)
			failed = 1;
	} else if (w->fp == stdout) {
		if (fflush(stdout) != 0)
			failed = 1;
	} else if (w->fp) {
		if (fclose(w->fp) != 0)
			failed = 1;
	} else if (w->fd >= 0) {
		close(w->fd);
	}
	llr_buf_free(&w->buf);
	int rc = LLR_OK;
	if (w->tmp) {
		if (!failed && rename(w->tmp, path) < 0)
			failed = 1;
		if (failed)
			unlink(w->tmp);
		free(w->tmp);
	}
	if (failed && ok)
		rc = llr_err_set(err, LLR_EIO, "%s: write failed", path ? path : "<stdout>");
	else if (failed)
		rc = llr_err_code(err, LLR_EIO);
	return rc;
}

/* x as %.8g, or %.9g when that does not read back as x. */
static int put_float(llr_buf *b, float x)
{
	char s[32];
	if (x == 0 || x == -99)
		return llr_buf_append(b, x == 0 ? "0" : "-99", x == 0 ? 1 : 3);
	for (int p = 8; p <= 9; p++) {
		snprintf(s, sizeof s, "%.*g", p, (double)x);
		if (strtof(s, NULL) == x)
			break;
	}
	return llr_buf_append(b, s, strlen(s));
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
	/* parent[n-1][i]: the entry of level n-1 that entry i of level n extends */
	int64_t *parent[LLR_NGRAM_MAX_ORDER] = {0};
	for (int n = 2; n <= m->order && !bad; n++) {
		if (!(parent[n - 1] = llr_malloc(((size_t)m->count[n - 1] + 1) * sizeof(int64_t)))) {
			bad = 1;
			break;
		}
		for (int64_t j = 0; j < m->count[n - 2]; j++)
			for (int64_t i = m->child[n - 2][j]; i < m->child[n - 2][j + 1]; i++)
				parent[n - 1][i] = j;
	}
	for (int n = 1; n <= m->order && !bad; n++) {
		bad |= llr_buf_printf(&w.buf, "\n\\%d-grams:\n", n) < 0;
		for (int64_t i = 0; i < m->count[n - 1] && !bad; i++) {
			int32_t words[LLR_NGRAM_MAX_ORDER];
			int64_t e = i;
			for (int k = n; k >= 2; k--) {
				words[k - 1] = m->word[k - 1][e];
				e = parent[k - 1][e];
			}
			words[0] = (int32_t)e;
			bad |= put_float(&w.buf, m->logp[n - 1][i]);
			for (int k = 0; k < n; k++)
				bad |= llr_buf_putc(&w.buf, k ? ' ' : '\t') || llr_buf_append(&w.buf, llr_strmap_str(m->vocab, words[k]), llr_strmap_len(m->vocab, words[k]));
			if (n < m->order) {
				bad |= llr_buf_putc(&w.buf, '\t');
				bad |= put_float(&w.buf, m->backoff[n - 1][i]);
			}
			bad |= llr_buf_putc(&w.buf, '\n');
			if (w.buf.len >= 1 << 16)
				aw_flush(&w);
		}
	}
	bad |= llr_buf_printf(&w.buf, "\n\\end\\\n") < 0;
	for (int n = 0; n < LLR_NGRAM_MAX_ORDER; n++)
		free(parent[n]);
	if (bad)
		llr_err_set(err, LLR_ENOMEM, "out of memory");
	return aw_close(&w, path, !bad, err);
}
