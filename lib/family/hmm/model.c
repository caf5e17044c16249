/*
 * model.c - the HMM tagger's model (hmm.h): its counts, what is derived
 * from them (the trigram tables, the suffix models), TnT's smoothed
 * transition probability and its two estimates (the interpolation
 * weights lambda and the suffix weight theta), and the model file (kind
 * "model", meta family=hmm, llrnn-model(5)): the tag and word names, each
 * word's tag counts and the trigram counts of the tag sequences, with
 * lambda and theta as train estimated them in the meta.  Everything else
 * is derived at load, so a file cannot hold counts that disagree.  Not
 * here: counting a corpus (estimate.c), decoding (tag.c).
 */
#include "family/hmm/hmm.h"

#include <math.h>
#include <stdlib.h>

#define FAMILY "hmm"
#define EMPTY UINT64_MAX

/* ------------------------------------------------------------- counts */

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int grow(hmm_counts *c)
{
	size_t cap = c->cap ? 2 * c->cap : 1024;
	uint64_t *key = llr_malloc(cap * sizeof *key);
	int64_t *val = llr_malloc(cap * sizeof *val);
	if (!key || !val) {
		free(key);
		free(val);
		return LLR_ENOMEM;
	}
	memset(key, 0xff, cap * sizeof *key);
	for (size_t i = 0; i < c->cap; i++) {
		if (c->key[i] == EMPTY)
			continue;
		size_t j = slot_of(c->key[i], cap);
		while (key[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		key[j] = c->key[i];
		val[j] = c->val[i];
	}
	free(c->key);
	free(c->val);
	c->key = key;
	c->val = val;
	c->cap = cap;
	return LLR_OK;
}

int hmm_counts_add(hmm_counts *c, uint64_t key, int64_t v)
{
	if (2 * (c->n + 1) > c->cap && grow(c) < 0)
		return LLR_ENOMEM;
	size_t j = slot_of(key, c->cap);
	while (c->key[j] != EMPTY && c->key[j] != key)
		j = (j + 1) & (c->cap - 1);
	if (c->key[j] == EMPTY) {
		c->key[j] = key;
		c->val[j] = 0;
		c->n++;
	}
	c->val[j] += v;
	return LLR_OK;
}

int64_t hmm_counts_get(const hmm_counts *c, uint64_t key)
{
	if (!c->cap)
		return 0;
	size_t j = slot_of(key, c->cap);
	while (c->key[j] != EMPTY) {
		if (c->key[j] == key)
			return c->val[j];
		j = (j + 1) & (c->cap - 1);
	}
	return 0;
}

void hmm_counts_free(hmm_counts *c)
{
	free(c->key);
	free(c->val);
	*c = (hmm_counts){0};
}

/* --------------------------------------------------------------- rows */

void hmm_rows_free(hmm_rows *r)
{
	free(r->ptr);
	free(r->count);
	free(r->total);
	free(r->tag);
	*r = (hmm_rows){0};
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int hmm_rows_from(hmm_rows *r, const hmm_counts *c, size_t rows, llr_err *err)
{
	hmm_rows_free(r);
	uint64_t *k = llr_malloc((c->n + 1) * sizeof *k);
	r->ptr = llr_calloc(rows + 1, sizeof *r->ptr);
	r->total = llr_calloc(rows + 1, sizeof *r->total);
	r->count = llr_malloc((c->n + 1) * sizeof *r->count);
	r->tag = llr_malloc((c->n + 1) * sizeof *r->tag);
	if (!k || !r->ptr || !r->total || !r->count || !r->tag) {
		free(k);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %zu counts", c->n);
	}
	r->rows = rows;
	size_t n = 0;
	for (size_t i = 0; i < c->cap; i++)
		if (c->key[i] != EMPTY)
			k[n++] = c->key[i];
	qsort(k, n, sizeof *k, cmp_u64);
	for (size_t i = 0; i < n; i++) {
		size_t row = (size_t)(k[i] >> 20);
		r->tag[i] = (int32_t)(k[i] & 0xfffff);
		r->count[i] = hmm_counts_get(c, k[i]);
		r->ptr[row + 1]++;
		r->total[row] += r->count[i];
	}
	for (size_t i = 0; i < rows; i++)
		r->ptr[i + 1] += r->ptr[i];
	free(k);
	return LLR_OK;
}

/* ------------------------------------------------------------ derived */

static void suffix_free(hmm_suffix *s)
{
	llr_strmap_free(s->sfx);
	hmm_rows_free(&s->rows);
	free(s->base);
	*s = (hmm_suffix){0};
}

void llr_hmm_free(llr_hmm *h)
{
	if (!h)
		return;
	llr_strmap_free(h->tags);
	llr_strmap_free(h->words);
	hmm_rows_free(&h->lex);
	free(h->tri);
	free(h->tri_count);
	llr_meta_free(h->meta);
	free(h->uni);
	free(h->bi);
	free(h->h1);
	free(h->h2);
	hmm_counts_free(&h->tri_map);
	free(h->logtrans);
	suffix_free(&h->sm[0]);
	suffix_free(&h->sm[1]);
	free(h);
}

int llr_hmm_capitalised(const char *w, size_t n)
{
	int32_t cp;
	return n > 0 && llr_utf8_decode(w, n, &cp) > 0 && (llr_cp_ortho_flags(cp) & LLR_CP_UPPER);
}

long hmm_suffix_at(const char *w, size_t n, int k)
{
	size_t i = n;
	for (int c = 0; c < k; c++) {
		if (i == 0)
			return -1;
		do
			i--;
		while (i > 0 && ((unsigned char)w[i] & 0xc0) == 0x80);
	}
	return (long)i;
}

/* The suffix models of the words seen at most h->rare times. */
static int derive_suffixes(llr_hmm *h, llr_err *err)
{
	hmm_counts c[2] = {{0}};
	int rc = LLR_OK;
	for (int s = 0; s < 2; s++)
		if (!(h->sm[s].sfx = llr_strmap_new()) || !(h->sm[s].base = llr_calloc((size_t)h->T, sizeof *h->sm[s].base)))
			rc = LLR_ENOMEM;
	for (size_t w = 0; rc == LLR_OK && w < h->lex.rows; w++) {
		if (h->lex.total[w] > h->rare)
			continue;
		const char *word = llr_strmap_str(h->words, (int32_t)w);
		size_t n = llr_strmap_len(h->words, (int32_t)w);
		hmm_suffix *sm = &h->sm[llr_hmm_capitalised(word, n)];
		hmm_counts *cc = &c[sm == &h->sm[1]];
		for (int64_t e = h->lex.ptr[w]; e < h->lex.ptr[w + 1]; e++) {
			sm->base[h->lex.tag[e]] += h->lex.count[e];
			sm->total += h->lex.count[e];
		}
		long at;
		for (int k = 1; rc == LLR_OK && k <= h->max_suffix && (at = hmm_suffix_at(word, n, k)) >= 0; k++) {
			int32_t id = llr_strmap_add(sm->sfx, word + at, n - (size_t)at);
			if (id < 0) {
				rc = LLR_ENOMEM;
				break;
			}
			for (int64_t e = h->lex.ptr[w]; rc == LLR_OK && e < h->lex.ptr[w + 1]; e++)
				rc = hmm_counts_add(cc, (uint64_t)id << 20 | (uint64_t)h->lex.tag[e], h->lex.count[e]);
		}
	}
	for (int s = 0; rc == LLR_OK && s < 2; s++)
		rc = hmm_rows_from(&h->sm[s].rows, &c[s], llr_strmap_size(h->sm[s].sfx), err);
	hmm_counts_free(&c[0]);
	hmm_counts_free(&c[1]);
	return rc == LLR_ENOMEM ? llr_err_set(err, LLR_ENOMEM, "out of memory for the suffix models") : rc;
}

int hmm_derive(llr_hmm *h, llr_err *err)
{
	const size_t S = (size_t)h->T + 2;
	if (!(h->uni = llr_calloc(S, sizeof *h->uni)) || !(h->h1 = llr_calloc(S, sizeof *h->h1)) ||
	    !(h->bi = llr_calloc(S * S, sizeof *h->bi)) || !(h->h2 = llr_calloc(S * S, sizeof *h->h2)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %d tags", h->T);
	h->N = 0;
	for (size_t i = 0; i < h->ntri; i++) {
		const int32_t *t = h->tri + 3 * i;
		int64_t f = h->tri_count[i];
		h->uni[t[2]] += f;
		h->bi[t[1] * S + t[2]] += f;
		h->h1[t[1]] += f;
		h->h2[t[0] * S + t[1]] += f;
		h->N += f;
		if (hmm_counts_add(&h->tri_map, ((uint64_t)t[0] * S + (uint64_t)t[1]) * S + (uint64_t)t[2], f) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for %zu trigrams", h->ntri);
	}
	int64_t *f = llr_calloc(S, sizeof *f);
	if (!f)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t e = 0; e < (size_t)h->lex.ptr[h->lex.rows]; e++)
		f[h->lex.tag[e]] += h->lex.count[e];
	int32_t bad = -1;
	for (int32_t t = 0; t < h->T && bad < 0; t++)
		if (f[t] != h->uni[t] || f[t] == 0)
			bad = t;
	free(f);
	if (bad >= 0)
		return llr_err_set(err, LLR_EFORMAT, "tag %s: its count in the lexicon is not its count in the tag trigrams",
		                   llr_strmap_str(h->tags, bad));
	return derive_suffixes(h, err);
}

/* ---------------------------------------------------------- estimates */

/* (f - 1) / (d - 1), 0 when d - 1 is 0 (TnT's rule for figure 1). */
static double held_out(int64_t f, int64_t d)
{
	return d > 1 ? (double)(f - 1) / (double)(d - 1) : 0.0;
}

void llr_hmm_lambdas(const llr_hmm *h, double lambda[3])
{
	const size_t S = (size_t)h->T + 2;
	lambda[0] = lambda[1] = lambda[2] = 0;
	for (size_t i = 0; i < h->ntri; i++) {
		const int32_t *t = h->tri + 3 * i;
		int64_t f = h->tri_count[i];
		/* each estimate with this trigram's event taken out of its counts */
		double v[3] = {held_out(h->uni[t[2]], h->N), held_out(h->bi[t[1] * S + t[2]], h->h1[t[1]]),
		               held_out(f, h->h2[t[0] * S + t[1]])};
		double m = fmax(v[0], fmax(v[1], v[2]));
		int ties = (v[0] == m) + (v[1] == m) + (v[2] == m);
		for (int k = 0; k < 3; k++)
			if (v[k] == m)
				lambda[k] += (double)f / ties;
	}
	double sum = lambda[0] + lambda[1] + lambda[2];
	for (int k = 0; k < 3; k++)
		lambda[k] = sum > 0 ? lambda[k] / sum : 1.0 / 3;
}

double llr_hmm_theta(const int64_t *count, int32_t n)
{
	if (n < 2)
		return 0;
	double sum = 0, ss = 0;
	for (int32_t t = 0; t < n; t++)
		sum += (double)count[t];
	if (sum <= 0)
		return 0;
	const double mean = 1.0 / n;
	for (int32_t t = 0; t < n; t++) {
		double d = (double)count[t] / sum - mean;
		ss += d * d;
	}
	return sqrt(ss / (n - 1));
}

double llr_hmm_trans(const llr_hmm *h, int32_t t1, int32_t t2, int32_t t3)
{
	const size_t S = (size_t)h->T + 2;
	double p = h->N ? h->lambda[0] * (double)h->uni[t3] / (double)h->N : 0;
	if (h->h1[t2])
		p += h->lambda[1] * (double)h->bi[t2 * S + t3] / (double)h->h1[t2];
	int64_t d = h->h2[t1 * S + t2];
	if (d)
		p += h->lambda[2] * (double)hmm_counts_get(&h->tri_map, ((uint64_t)t1 * S + (uint64_t)t2) * S + (uint64_t)t3) / (double)d;
	return p;
}

int hmm_cache(llr_hmm *h, llr_err *err)
{
	const size_t S = (size_t)h->T + 2;
	free(h->logtrans);
	h->logtrans = NULL;
	if (S > HMM_CACHE_S)
		return LLR_OK;
	double *c = llr_malloc(S * S * S * sizeof *c);
	if (!c)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %d tags", h->T);
	for (size_t a = 0; a < S; a++)
		for (size_t b = 0; b < S; b++)
			for (size_t t = 0; t < S; t++)
				c[(a * S + b) * S + t] = log(llr_hmm_trans(h, (int32_t)a, (int32_t)b, (int32_t)t));
	h->logtrans = c;
	return LLR_OK;
}

/* -------------------------------------------------------------- files */

static int build_meta(const void *mv, llr_meta *meta)
{
	const llr_hmm *h = mv;
	int64_t tokens = 0;
	for (int32_t t = 0; t < h->T; t++)
		tokens += h->uni[t];
	int rc = llr_meta_set(meta, "family", FAMILY);
	rc |= llr_meta_setf(meta, "tags", "%d", h->T);
	rc |= llr_meta_setf(meta, "words", "%zu", llr_strmap_size(h->words));
	rc |= llr_meta_setf(meta, "trigrams", "%zu", h->ntri);
	rc |= llr_meta_setf(meta, "train_tokens", "%lld", (long long)tokens);
	rc |= llr_meta_setf(meta, "train_sentences", "%lld", (long long)h->uni[HMM_EOS(h->T)]);
	rc |= llr_meta_setf(meta, "rare", "%d", h->rare);
	rc |= llr_meta_setf(meta, "suffix", "%d", h->max_suffix);
	for (int k = 0; k < 3; k++) {
		char key[16];
		snprintf(key, sizeof key, "lambda%d", k + 1);
		rc |= llr_meta_setf(meta, key, "%.17g", h->lambda[k]);
	}
	rc |= llr_meta_setf(meta, "theta", "%.17g", h->theta);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

static int write_model(llr_tensor_writer *w, const void *mv, const llr_train_state *ts, llr_err *err)
{
	(void)ts;
	const llr_hmm *h = mv;
	int64_t W = (int64_t)h->lex.rows, nnz = h->lex.ptr[W], n1 = W + 1, k3[2] = {(int64_t)h->ntri, 3}, k = (int64_t)h->ntri;
	int rc = llr_lex_put_names(w, "tags", h->tags, err);
	if (rc >= 0)
		rc = llr_lex_put_names(w, "words", h->words, err);
	if (rc >= 0)
		rc = llr_tw_put_raw(w, "lex/indptr", LLR_I64, 1, &n1, h->lex.ptr, err);
	if (rc >= 0)
		rc = llr_tw_put_raw(w, "lex/tag", LLR_I32, 1, &nnz, h->lex.tag, err);
	if (rc >= 0)
		rc = llr_tw_put_raw(w, "lex/count", LLR_I64, 1, &nnz, h->lex.count, err);
	if (rc >= 0)
		rc = llr_tw_put_raw(w, "trigrams/tags", LLR_I32, 2, k3, h->tri, err);
	if (rc >= 0)
		rc = llr_tw_put_raw(w, "trigrams/count", LLR_I64, 1, &k, h->tri_count, err);
	return rc;
}

int llr_hmm_save(const char *path, const llr_hmm *h, llr_err *err)
{
	return llr_model_file_save(path, h, build_meta, write_model, NULL, err);
}

static int meta_int(const llr_meta *m, const char *key, int64_t lo, int64_t hi, int64_t *out, llr_err *err)
{
	if (llr_meta_get_i64(m, key, out, NULL) < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not an integer", key);
	if (*out < lo || *out > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)*out, (long long)lo,
		                   (long long)hi);
	return LLR_OK;
}

static int meta_num(const llr_meta *m, const char *key, double *out, llr_err *err)
{
	if (llr_meta_get_f64(m, key, out, NULL) < 0 || !(*out >= 0 && *out < INFINITY))
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not a number >= 0", key);
	return LLR_OK;
}

/* Member name as a tensor of dt and shape (a -1 matches any) into *out. */
static int member(llr_tensor_reader *r, const char *name, llr_dtype dt, int nd, const int64_t *shape, void **out, llr_err *err)
{
	llr_tensor *t;
	int rc = llr_lex_next_member(r, name, err);
	if (rc < 0 || (rc = llr_tr_tensor_expect(r, dt, nd, shape, &t, err)) < 0)
		return rc;
	*out = t->data;
	t->data = NULL;
	llr_tensor_free(t);
	return LLR_OK;
}

/* Each word's tag counts: rows from 0 to nnz, tags increasing and below
 * T, counts positive. */
static int check_lex(const llr_hmm *h, int64_t nnz, llr_err *err)
{
	const hmm_rows *x = &h->lex;
	if (x->ptr[0] != 0 || x->ptr[x->rows] != nnz)
		return llr_err_set(err, LLR_EFORMAT, "member lex/indptr: does not run from 0 to %lld", (long long)nnz);
	for (size_t w = 0; w < x->rows; w++) {
		if (x->ptr[w + 1] <= x->ptr[w])
			return llr_err_set(err, LLR_EFORMAT, "member lex/indptr: word %zu has no tag", w + 1);
		if (x->ptr[w + 1] > nnz)
			return llr_err_set(err, LLR_EFORMAT, "member lex/indptr: word %zu runs past the %lld entries", w + 1, (long long)nnz);
		for (int64_t e = x->ptr[w]; e < x->ptr[w + 1]; e++)
			if (x->tag[e] < 0 || x->tag[e] >= h->T || (e > x->ptr[w] && x->tag[e] <= x->tag[e - 1]) || x->count[e] <= 0)
				return llr_err_set(err, LLR_EFORMAT, "member lex: word %zu: a bad tag or count", w + 1);
	}
	return LLR_OK;
}

/* The trigrams of BOS BOS t1 .. tn EOS: BOS never follows a tag nor is
 * predicted, EOS never precedes; sorted, distinct, counts positive. */
static int check_trigrams(const llr_hmm *h, llr_err *err)
{
	const int32_t T = h->T, S = T + 2;
	int64_t prev = -1;
	for (size_t i = 0; i < h->ntri; i++) {
		const int32_t *t = h->tri + 3 * i;
		int ok = h->tri_count[i] > 0;
		for (int j = 0; j < 3; j++)
			ok &= t[j] >= 0 && t[j] < S;
		ok = ok && t[2] != HMM_BOS(T) && t[0] != HMM_EOS(T) && t[1] != HMM_EOS(T) && !(t[0] < T && t[1] == HMM_BOS(T));
		int64_t key = ok ? ((int64_t)t[0] * S + t[1]) * S + t[2] : 0;
		if (!ok || key <= prev)
			return llr_err_set(err, LLR_EFORMAT, "member trigrams: trigram %zu is not a tag trigram of the file", i + 1);
		prev = key;
	}
	return LLR_OK;
}

static int load_members(llr_tensor_reader *r, llr_hmm *h, int64_t W, int64_t K, llr_err *err)
{
	int rc = llr_lex_read_names(r, "tags", h->T, &h->tags, err);
	if (rc >= 0)
		rc = llr_lex_read_names(r, "words", W, &h->words, err);
	int64_t n1 = W + 1, k3[2] = {K, 3};
	h->lex.rows = (size_t)W;
	if (rc >= 0)
		rc = member(r, "lex/indptr", LLR_I64, 1, &n1, (void **)&h->lex.ptr, err);
	int64_t nnz = rc >= 0 ? h->lex.ptr[W] : 0;
	if (rc >= 0 && (nnz < W || nnz > W * (int64_t)h->T))
		rc = llr_err_set(err, LLR_EFORMAT, "member lex/indptr: %lld counts for %lld words", (long long)nnz, (long long)W);
	if (rc >= 0)
		rc = member(r, "lex/tag", LLR_I32, 1, &nnz, (void **)&h->lex.tag, err);
	if (rc >= 0)
		rc = member(r, "lex/count", LLR_I64, 1, &nnz, (void **)&h->lex.count, err);
	if (rc >= 0)
		rc = member(r, "trigrams/tags", LLR_I32, 2, k3, (void **)&h->tri, err);
	if (rc >= 0)
		rc = member(r, "trigrams/count", LLR_I64, 1, &K, (void **)&h->tri_count, err);
	h->ntri = (size_t)K;
	if (rc >= 0 && !(h->lex.total = llr_calloc((size_t)W + 1, sizeof *h->lex.total)))
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc >= 0 && (rc = check_lex(h, nnz, err)) >= 0 && (rc = check_trigrams(h, err)) >= 0) {
		for (int64_t w = 0; w < W; w++)
			for (int64_t e = h->lex.ptr[w]; e < h->lex.ptr[w + 1]; e++)
				h->lex.total[w] += h->lex.count[e];
		rc = hmm_derive(h, err);
	}
	return rc;
}

static int load(llr_tensor_reader *r, const char *path, void *mv, llr_train_state **tsp, llr_err *err)
{
	(void)tsp;
	llr_hmm *h = mv;
	const llr_meta *meta = llr_tr_meta(r);
	const char *fam = llr_meta_get(meta, "family");
	if (!fam || strcmp(fam, FAMILY))
		return llr_err_set(err, LLR_EKIND, "%s: a model of family %s, not an HMM tagger (family=%s)", path, fam ? fam : "lm", FAMILY);
	int64_t T, W, K, rare, sfx;
	int rc = meta_int(meta, "tags", 1, LLR_HMM_MAX_TAGS, &T, err);
	if (rc >= 0)
		rc = meta_int(meta, "words", 1, INT32_MAX, &W, err);
	if (rc >= 0)
		rc = meta_int(meta, "trigrams", 1, INT32_MAX, &K, err);
	if (rc >= 0)
		rc = meta_int(meta, "rare", 0, INT32_MAX, &rare, err);
	if (rc >= 0)
		rc = meta_int(meta, "suffix", 0, 1000, &sfx, err);
	for (int k = 0; rc >= 0 && k < 3; k++)
		rc = meta_num(meta, k == 0 ? "lambda1" : k == 1 ? "lambda2" : "lambda3", &h->lambda[k], err);
	if (rc >= 0)
		rc = meta_num(meta, "theta", &h->theta, err);
	if (rc >= 0 && fabs(h->lambda[0] + h->lambda[1] + h->lambda[2] - 1) > 1e-9)
		rc = llr_err_set(err, LLR_EFORMAT, "meta: lambda1 + lambda2 + lambda3 is not 1");
	h->T = (int32_t)T;
	h->rare = (int)rare;
	h->max_suffix = (int)sfx;
	if (rc >= 0)
		rc = load_members(r, h, W, K, err);
	if (rc >= 0)
		rc = hmm_cache(h, err);
	if (rc >= 0 && !(h->meta = llr_meta_new()))
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t i = 0; rc >= 0 && i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		if (llr_meta_set(h->meta, k, v) < 0)
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	if (rc < 0 && strncmp(err->msg, path, strlen(path)))
		llr_err_prefix(err, "%s", path);
	return rc;
}

static void free_any(void *h)
{
	llr_hmm_free(h);
}

int llr_hmm_load(const char *path, llr_hmm **out, llr_err *err)
{
	void *h = NULL;
	int rc = llr_model_file_load(path, sizeof **out, load, free_any, &h, NULL, err);
	*out = h;
	return rc;
}
