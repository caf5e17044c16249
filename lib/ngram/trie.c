/*
 * trie.c - the n-gram query structure (llrnn.h, "n-gram models"): a trie
 * of sorted arrays, one level per order, and its binary form, a tensor
 * archive of kind "ngram" (llrnn-tensor(5)) that numpy can read.
 *
 * Level n holds the n-grams of order n sorted by (prefix, last word); the
 * children of an entry of level n are a contiguous range of level n+1, so
 * finding an n-gram is n-1 binary searches among siblings.  Queries follow
 * the ARPA backoff rule.  Not here: estimation (estimate.c), ARPA text
 * (arpa.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

llr_ngram *llr_ngram_alloc(int order, llr_err *err)
{
	if (order < 1 || order > LLR_NGRAM_MAX_ORDER) {
		llr_err_set(err, LLR_ERANGE, "n-gram order %d: must be 1 to %d", order, LLR_NGRAM_MAX_ORDER);
		return NULL;
	}
	llr_ngram *m = llr_calloc(1, sizeof *m);
	if (!m || !(m->vocab = llr_strmap_new())) {
		free(m);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	m->order = order;
	m->bos = m->eos = m->unk = -1;
	return m;
}

void llr_ngram_free(llr_ngram *m)
{
	if (!m)
		return;
	llr_strmap_free(m->vocab);
	llr_ngram_probe_free(m->probe);
	free(m->path);
	for (int n = 0; n < LLR_NGRAM_MAX_ORDER; n++) {
		free(m->word[n]);
		free(m->logp[n]);
		free(m->backoff[n]);
		free(m->child[n]);
	}
	free(m);
}

void llr_ngram_specials(llr_ngram *m)
{
	m->bos = llr_strmap_get(m->vocab, LLR_BOS, strlen(LLR_BOS));
	m->eos = llr_strmap_get(m->vocab, LLR_EOS, strlen(LLR_EOS));
	m->unk = llr_strmap_get(m->vocab, LLR_UNK, strlen(LLR_UNK));
}

int llr_ngram_order(const llr_ngram *m)
{
	return m->order;
}

int64_t llr_ngram_count(const llr_ngram *m, int n)
{
	return n >= 1 && n <= m->order ? m->count[n - 1] : 0;
}

int32_t llr_ngram_vocab_size(const llr_ngram *m)
{
	return (int32_t)m->count[0];
}

int32_t llr_ngram_word(const llr_ngram *m, const char *w, size_t len)
{
	if (m->probe && m->probe->words)
		return llr_ngram_probe_word(m, w, len);
	return llr_strmap_get(m->vocab, w, len);
}

void llr_ngram_words(const llr_ngram *m, const char *const *w, size_t n, int32_t *ids)
{
	if (m->probe && m->probe->words) {
		llr_wordtab_get_many(m->probe->words, w, n, ids);
		return;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = llr_strmap_get(m->vocab, w[i], strlen(w[i]));
}

const char *llr_ngram_token(const llr_ngram *m, int32_t id)
{
	return llr_strmap_str(m->vocab, id);
}

int32_t llr_ngram_bos(const llr_ngram *m)
{
	return m->bos;
}

int32_t llr_ngram_eos(const llr_ngram *m)
{
	return m->eos;
}

int32_t llr_ngram_unk(const llr_ngram *m)
{
	return m->unk;
}

void llr_ngram_level_get(const llr_ngram *m, int n, llr_ngram_level *out)
{
	LLR_ASSERT(n >= 1 && n <= m->order && m->logp[0]);
	out->count = m->count[n - 1];
	out->word = m->word[n - 1];
	out->logp = m->logp[n - 1];
	out->backoff = m->backoff[n - 1];
	out->child = m->child[n - 1];
}

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* A binary search without branches on the comparisons (the halving
 * becomes a conditional move), with the two places the next step may
 * look at fetched ahead: the searches of a long sibling range are cache
 * misses, and this way they overlap instead of waiting on a mispredicted
 * branch each (Khuong & Morin, "Array layouts for comparison-based
 * searching", 2017). */
int64_t llr_ngram_child(const llr_ngram *m, int n, int64_t i, int32_t w)
{
	const int64_t *c = m->child[n - 1];
	const int32_t *word = m->word[n];
	int64_t len = c[i + 1] - c[i];
	if (len <= 0)
		return -1;
	const int32_t *base = word + c[i];
	while (len > 1) {
		int64_t half = len / 2;
		PREFETCH(base + half / 2);
		PREFETCH(base + half + half / 2);
		base = base[half] <= w ? base + half : base;
		len -= half;
	}
	return *base == w ? base - word : -1;
}

int64_t llr_ngram_find(const llr_ngram *m, const int32_t *words, int n)
{
	LLR_ASSERT(m->logp[0]);
	if (n < 1 || n > m->order || words[0] < 0 || words[0] >= m->count[0])
		return -1;
	int64_t i = words[0];
	for (int k = 1; k < n && i >= 0; k++)
		i = words[k] < 0 ? -1 : llr_ngram_child(m, k, i, words[k]);
	return i;
}

float llr_ngram_log10p(const llr_ngram *m, const int32_t *ctx, int n, int32_t w, int *matched)
{
	if (!m->logp[0])
		return llr_ngram_probe_log10p(m, ctx, n, w, matched);
	n = llr_ngram_context(m, &ctx, n);
	/* From the longest context down: a listed context whose extension by
	 * w is not listed adds its backoff. */
	float bo = 0;
	for (int k = n; k >= 1; k--) {
		int64_t c = llr_ngram_find(m, ctx + n - k, k);
		if (c < 0)
			continue;
		int64_t e = llr_ngram_child(m, k, c, w);
		if (e >= 0) {
			if (matched)
				*matched = k + 1;
			return bo + m->logp[k][e];
		}
		bo += m->backoff[k - 1][c];
	}
	if (matched)
		*matched = 1;
	return bo + m->logp[0][w];
}

int llr_ngram_check(const llr_ngram *m, const char *name, llr_err *err)
{
	const int64_t V = m->count[0];
	if ((int64_t)llr_strmap_size(m->vocab) != V)
		return llr_err_set(err, LLR_EFORMAT, "%s: %zu words for %lld 1-grams", name, llr_strmap_size(m->vocab), (long long)V);
	for (int n = 1; n <= m->order; n++) {
		for (int64_t i = 0; i < m->count[n - 1]; i++) {
			if (isnan(m->logp[n - 1][i]) || m->logp[n - 1][i] > 0)
				return llr_err_set(err, LLR_EFORMAT, "%s: %d-gram %lld: log10 p = %g, not a log-probability", name, n, (long long)i, m->logp[n - 1][i]);
			if (n < m->order && !isfinite(m->backoff[n - 1][i]))
				return llr_err_set(err, LLR_EFORMAT, "%s: %d-gram %lld: backoff %g is not finite", name, n, (long long)i, m->backoff[n - 1][i]);
		}
		if (n == m->order)
			break;
		const int64_t *c = m->child[n - 1];
		if (c[0] != 0 || c[m->count[n - 1]] != m->count[n])
			return llr_err_set(err, LLR_EFORMAT, "%s: level %d: child offsets do not span level %d", name, n, n + 1);
		for (int64_t i = 0; i < m->count[n - 1]; i++) {
			if (c[i + 1] < c[i])
				return llr_err_set(err, LLR_EFORMAT, "%s: level %d: child offsets decrease at %lld", name, n, (long long)i);
			for (int64_t j = c[i]; j < c[i + 1]; j++) {
				int32_t w = m->word[n][j];
				if (w < 0 || w >= V || (j > c[i] && w <= m->word[n][j - 1]))
					return llr_err_set(err, LLR_EFORMAT, "%s: level %d: word %d at %lld out of range or out of order", name, n + 1, w, (long long)j);
			}
		}
	}
	return LLR_OK;
}

/* ------------------------------------------------------- binary form */

/* The meta key prefix of the member prefix: its slashes as dots ("bg/"
 * gives keys bg.order, bg.ngram.N; "" gives order, ngram.N). */
static void meta_prefix(const char *prefix, char *out, size_t cap)
{
	snprintf(out, cap, "%s", prefix);
	for (char *p = out; *p; p++)
		if (*p == '/')
			*p = '.';
}

int llr_ngram_meta_counts(llr_meta *meta, const char *prefix, int order, const int64_t *count)
{
	char kp[32], key[64];
	meta_prefix(prefix, kp, sizeof kp);
	snprintf(key, sizeof key, "%sorder", kp);
	int rc = llr_meta_setf(meta, key, "%d", order);
	for (int n = 1; n <= order && rc == LLR_OK; n++) {
		snprintf(key, sizeof key, "%sngram.%d", kp, n);
		rc = llr_meta_setf(meta, key, "%lld", (long long)count[n - 1]);
	}
	return rc;
}

/* The meta keys of m's sizes: <prefix>order, <prefix>ngram.N. */
int llr_ngram_meta(const llr_ngram *m, llr_meta *meta, const char *prefix)
{
	return llr_ngram_meta_counts(meta, prefix, m->order, m->count);
}

int llr_ngram_put_members(llr_tensor_writer *w, const llr_ngram *m, const char *prefix, llr_err *err)
{
	char name[48];
	snprintf(name, sizeof name, "%svocab", prefix);
	int rc = llr_lex_put_names(w, name, m->vocab, err);
	for (int n = 1; n <= m->order && rc == LLR_OK; n++) {
		int64_t k = m->count[n - 1], k1 = k + 1;
		if (n > 1) {
			snprintf(name, sizeof name, "%s%d/word", prefix, n);
			rc = llr_tw_put_raw(w, name, LLR_I32, 1, &k, m->word[n - 1], err);
		}
		snprintf(name, sizeof name, "%s%d/logp", prefix, n);
		if (rc == LLR_OK)
			rc = llr_tw_put_raw(w, name, LLR_F32, 1, &k, m->logp[n - 1], err);
		if (n < m->order && rc == LLR_OK) {
			snprintf(name, sizeof name, "%s%d/backoff", prefix, n);
			rc = llr_tw_put_raw(w, name, LLR_F32, 1, &k, m->backoff[n - 1], err);
			snprintf(name, sizeof name, "%s%d/child", prefix, n);
			if (rc == LLR_OK)
				rc = llr_tw_put_raw(w, name, LLR_I64, 1, &k1, m->child[n - 1], err);
		}
	}
	return rc;
}

llr_tensor_writer *llr_ngram_writer_open(const char *path, int order, const int64_t *count, llr_err *err)
{
	llr_meta *meta = llr_meta_new();
	if (!meta || llr_ngram_meta_counts(meta, "", order, count) != LLR_OK) {
		llr_meta_free(meta);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	llr_tensor_writer *w = llr_tw_open(path, "ngram", meta, err);
	llr_meta_free(meta);
	return w;
}

int llr_ngram_save(const llr_ngram *m, const char *path, llr_err *err)
{
	llr_tensor_writer *w = llr_ngram_writer_open(path, m->order, m->count, err);
	if (!w)
		return llr_err_code(err, LLR_EIO);
	int rc = llr_ngram_put_members(w, m, "", err);
	if (rc != LLR_OK) {
		llr_tw_abort(w);
		return rc;
	}
	return llr_tw_close(w, err);
}

/* Read member `name` (the next one) as a 1-D array of n elements of dt
 * into *out (caller frees). */
static int read_array(llr_tensor_reader *r, const char *name, llr_dtype dt, int64_t n, void **out, llr_err *err)
{
	int rc = llr_lex_next_member(r, name, err);
	if (rc != LLR_OK)
		return rc;
	llr_tensor *t;
	if ((rc = llr_tr_tensor_expect(r, dt, 1, &n, &t, err)) != LLR_OK)
		return rc;
	*out = t->data;
	t->data = NULL;
	llr_tensor_free(t);
	return LLR_OK;
}

int llr_ngram_get_members(llr_tensor_reader *r, const llr_meta *meta, const char *prefix, const char *path, llr_ngram **out, llr_err *err)
{
	char kp[32], key[64], name[48];
	meta_prefix(prefix, kp, sizeof kp);
	int64_t order;
	llr_ngram *m = NULL;
	*out = NULL;
	snprintf(key, sizeof key, "%sorder", kp);
	int rc = llr_meta_get_i64(meta, key, &order, err);
	if (rc == LLR_OK && !(m = llr_ngram_alloc((int)(order < 1 || order > LLR_NGRAM_MAX_ORDER ? 0 : order), err)))
		rc = llr_err_prefix(err, "%s", path);
	for (int n = 1; rc == LLR_OK && n <= m->order; n++) {
		snprintf(key, sizeof key, "%sngram.%d", kp, n);
		if ((rc = llr_meta_get_i64(meta, key, &m->count[n - 1], err)) == LLR_OK && (m->count[n - 1] < 0 || m->count[n - 1] > ((int64_t)1 << 40) || (n == 1 && m->count[0] > LLR_MAX_VOCAB)))
			rc = llr_err_set(err, LLR_ERANGE, "%s: %s=%lld out of range", path, key, (long long)m->count[n - 1]);
	}
	if (rc == LLR_OK) {
		llr_strmap *v = NULL;
		snprintf(name, sizeof name, "%svocab", prefix);
		if ((rc = llr_lex_read_names(r, name, m->count[0], &v, err)) == LLR_OK) {
			llr_strmap_free(m->vocab);
			m->vocab = v;
		}
	}
	for (int n = 1; rc == LLR_OK && n <= m->order; n++) {
		int64_t k = m->count[n - 1];
		if (n > 1) {
			snprintf(name, sizeof name, "%s%d/word", prefix, n);
			rc = read_array(r, name, LLR_I32, k, (void **)&m->word[n - 1], err);
		}
		snprintf(name, sizeof name, "%s%d/logp", prefix, n);
		if (rc == LLR_OK)
			rc = read_array(r, name, LLR_F32, k, (void **)&m->logp[n - 1], err);
		if (n < m->order && rc == LLR_OK) {
			snprintf(name, sizeof name, "%s%d/backoff", prefix, n);
			rc = read_array(r, name, LLR_F32, k, (void **)&m->backoff[n - 1], err);
			snprintf(name, sizeof name, "%s%d/child", prefix, n);
			if (rc == LLR_OK)
				rc = read_array(r, name, LLR_I64, k + 1, (void **)&m->child[n - 1], err);
		}
	}
	if (rc == LLR_OK)
		rc = llr_ngram_check(m, path, err);
	if (rc != LLR_OK) {
		llr_ngram_free(m);
		return rc;
	}
	llr_ngram_specials(m);
	*out = m;
	return LLR_OK;
}

static int load_binary(const char *path, llr_ngram **out, llr_err *err)
{
	llr_tensor_reader *r = llr_tr_open(path, "ngram", err);
	if (!r)
		return llr_err_code(err, LLR_EFORMAT);
	const char *st = llr_meta_get(llr_tr_meta(r), "structure");
	int rc = st && strcmp(st, "trie") ? llr_err_set(err, LLR_EFORMAT,
	                                                "%s: a %s n-gram model can only be scored; make the trie form "
	                                                "for this use (train --ngram N --format trie)",
	                                                path, st)
	                                  : llr_ngram_get_members(r, llr_tr_meta(r), "", path, out, err);
	llr_tr_close(r);
	return rc;
}

/* The meta of the mapped archive t, checked as llr_tr_open checks it. */
static int map_meta(llr_tarmap *t, const char *path, llr_meta **out, llr_err *err)
{
	const llr_tarmap_member *mm = llr_tarmap_count(t) ? llr_tarmap_at(t, 0) : NULL;
	if (!mm || strcmp(mm->name, "meta"))
		return llr_err_set(err, LLR_EFORMAT, "%s: not an llrnn archive (no meta first)", path);
	int rc = mm->has_crc ? llr_tarmap_verify(t, mm, err) : LLR_OK;
	llr_meta *meta = rc == LLR_OK ? llr_meta_new() : NULL;
	if (rc == LLR_OK && !meta)
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc == LLR_OK && (rc = llr_meta_parse(meta, (const char *)mm->data, mm->size, err)) != LLR_OK)
		llr_err_prefix(err, "%s", path);
	const char *f = meta ? llr_meta_get(meta, "format") : NULL, *k = meta ? llr_meta_get(meta, "kind") : NULL;
	const char *v = meta ? llr_meta_get(meta, "version") : NULL, *c = meta ? llr_meta_get(meta, "checksum") : NULL;
	if (rc == LLR_OK && (!f || strcmp(f, "llrnn") || !k || strcmp(k, "ngram") || !v || atoi(v) != LLR_FORMAT_VERSION))
		rc = llr_err_set(err, LLR_EKIND, "%s: not an n-gram archive of version %d", path, LLR_FORMAT_VERSION);
	if (rc == LLR_OK && (!c || strcmp(c, "crc32c") || !mm->has_crc))
		rc = llr_err_set(err, LLR_EFORMAT, "%s: the probing form must carry checksums (checksum=crc32c)", path);
	if (rc != LLR_OK) {
		llr_meta_free(meta);
		return rc;
	}
	*out = meta;
	return LLR_OK;
}

/* 1 if text[0..n) has the line `line`. */
static int has_line(const unsigned char *text, size_t n, const char *line)
{
	size_t l = strlen(line);
	for (size_t i = 0; i + l <= n; i++)
		if ((i == 0 || text[i - 1] == '\n') && !memcmp(text + i, line, l) && (i + l == n || text[i + l] == '\n'))
			return 1;
	return 0;
}

/* The probing form mapped, or 0 when path is not one (an other binary
 * form, or not mappable: compressed, a pipe). */
static int open_mapped(const char *path, unsigned flags, llr_ngram **out, llr_err *err)
{
	llr_tarmap *t;
	llr_err e = {0};
	if (llr_tarmap_open(path, &t, &e) != LLR_OK)
		return 0;
	const llr_tarmap_member *mm = llr_tarmap_count(t) ? llr_tarmap_at(t, 0) : NULL;
	if (!mm || strcmp(mm->name, "meta") || !has_line(mm->data, mm->size, "structure=probing")) {
		llr_tarmap_close(t);
		return 0;
	}
	llr_meta *meta = NULL;
	int rc = map_meta(t, path, &meta, err);
	if (rc == LLR_OK) {
		rc = llr_ngram_probe_map(t, meta, path, (flags & LLR_NGRAM_VERIFY) != 0, out, err);
		llr_meta_free(meta);
		if (rc == LLR_OK)
			return 1;
	}
	llr_tarmap_close(t);
	return rc;
}

/* What path holds, from its first 64 KiB: 1 a tensor archive (its first
 * member is `meta`, after the pax header with its checksum,
 * llrnn-tensor(5)), 2 ARPA text (a line \data\), 0 something else. */
static int sniff_kind(const char *path, llr_err *err)
{
	llr_input *in = llr_input_open(path, err);
	if (!in)
		return llr_err_code(err, LLR_EIO);
	enum { HEAD = 65536 };
	char *buf = llr_malloc(HEAD + 1);
	if (!buf) {
		llr_input_close(in);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	size_t got = 0;
	while (got < HEAD) {
		ssize_t k = llr_input_read(in, buf + got, HEAD - got, err);
		if (k < 0) {
			llr_input_close(in);
			free(buf);
			return (int)k;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	llr_input_close(in);
	buf[got] = 0;
	int kind = 0;
	if ((got >= 5 && !memcmp(buf, "meta", 5)) || (got >= 15 && !memcmp(buf, "PaxHeader/meta", 15)))
		kind = 1;
	for (size_t i = 0; i + 6 <= got && !kind; i++)
		if ((i == 0 || buf[i - 1] == '\n') && !memcmp(buf + i, "\\data\\", 6))
			kind = 2;
	free(buf);
	return kind;
}

int llr_ngram_load(const char *path, llr_ngram **out, llr_err *err)
{
	*out = NULL;
	int a = sniff_kind(path, err);
	if (a < 0)
		return a;
	return a == 1 ? load_binary(path, out, err) : llr_ngram_read_arpa(path, out, err);
}

int llr_ngram_open(const char *path, unsigned flags, llr_ngram **out, llr_err *err)
{
	*out = NULL;
	int a = sniff_kind(path, err);
	if (a < 0)
		return a;
	if (a == 1) {
		int rc = open_mapped(path, flags, out, err);
		if (rc != 0)
			return rc < 0 ? rc : LLR_OK;
		llr_tensor_reader *r = llr_tr_open(path, "ngram", err);
		if (!r)
			return llr_err_code(err, LLR_EFORMAT);
		const char *st = llr_meta_get(llr_tr_meta(r), "structure");
		rc = st && strcmp(st, "trie") ? llr_err_set(err, LLR_EFORMAT, "%s: the %s form is mapped, not streamed: decompress it to a file", path, st)
		                              : llr_ngram_get_members(r, llr_tr_meta(r), "", path, out, err);
		llr_tr_close(r);
		if (rc != LLR_OK)
			return rc;
	} else {
		int rc = llr_ngram_read_arpa(path, out, err);
		if (rc != LLR_OK)
			return rc;
	}
	if (flags & LLR_NGRAM_PROBE) {
		int rc = llr_ngram_probe_build(*out, err);
		if (rc != LLR_OK) {
			llr_ngram_free(*out);
			*out = NULL;
			return rc;
		}
		llr_ngram_drop_trie(*out);
	}
	return LLR_OK;
}

const char *llr_ngram_structure(const llr_ngram *m)
{
	return m->probe ? "probing" : "trie";
}

int llr_ngram_sniff(const char *path, llr_err *err)
{
	int a = sniff_kind(path, err);
	if (a != 1)
		return a < 0 ? a : a == 2;
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(path, NULL, &e);
	if (!r)
		return 0;
	const char *kind = llr_meta_get(llr_tr_meta(r), "kind");
	int yes = kind && !strcmp(kind, "ngram");
	llr_tr_close(r);
	return yes;
}
