/*
 * anyword.c - the feature row of any string, seen by featurize or not
 * (issue 14, "features for any string"): what a lexicon keeps for it
 * beyond the string extractors, and the rows themselves
 * (llr_lexicon_any_row, llr_lexicon_word_row).
 *
 * featurize gives a vocabulary word past the top M the row
 *     TOP:@notTop + its lexicon sources' entry + hunspell + extractors,
 * features no vocabulary word has (or rarer than --min-feature-count)
 * dropped.  To give a string it never saw the same row, the lexicon keeps
 *   - the lexicon sources' (CoNLL-U, word/TAG, TSV) entries, every word
 *     they list with a feature the model has (in the vocabulary or not:
 *     so the row is a function of the string alone), as rows in phi's
 *     columns: member any/words (one word a line) and any/phi (CSR,
 *     words x F);
 *   - the hunspell dictionary featurize read, embedded byte for byte:
 *     members any/hunspell.aff and any/hunspell.dic, reopened (through a
 *     private temporary directory, hunspell reads files only) the first
 *     time a row needs it;
 *   - the extractors' configuration (extract.*, extract.c) and the meta
 *     key top, as before.
 * A string outside V' (V less <unk>) also gets OOV:@oov, and OOV:HS:@known
 * when the dictionary knows it, if the lexicon has those features
 * (featurize --spelling names them): no word of V has them, so the
 * feature names themselves are the configuration and a lexicon without
 * them (older, or --no-oov-features) gives the rows it always gave.
 * Meta keys: any.words (the number of entries), any.hunspell (the
 * dictionary's name, or 0), any.hunspell.aff_bytes, any.hunspell.dic_bytes.
 * Not here: the extractors (extract.c), hunspell's analyses (hunspell.c),
 * the rest of the lexicon's members (lexicon.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct llr_anyword {
	llr_strmap *words; /* the lexicon sources' words */
	llr_csr *rows;     /* their rows, words x F, phi's columns */
	char *hs_name;     /* the dictionary's name, NULL without one */
	char *aff, *dic;   /* its bytes */
	size_t aff_len, dic_len;
	llr_morph *morph; /* opened on first use */
	int morph_failed;
	int listed;          /* outside V', only the dictionary's listed forms are analysed */
	llr_strmap *forms;   /* those forms (llr_affix_forms), made on first use */
	char forms_err[512]; /* why they could not be listed, "" */
};

void llr_anyword_free(llr_anyword *a)
{
	if (!a)
		return;
	llr_strmap_free(a->words);
	llr_csr_free(a->rows);
	free(a->hs_name);
	free(a->aff);
	free(a->dic);
	llr_morph_close(a->morph);
	llr_strmap_free(a->forms);
	free(a);
}

static llr_anyword *any_of(llr_lexicon *x, llr_err *err)
{
	if (!x->any && !(x->any = calloc(1, sizeof *x->any)))
		llr_err_set(err, LLR_ENOMEM, "lexicon: out of memory");
	return x->any;
}

size_t llr_lexicon_any_words(const llr_lexicon *x)
{
	return x->any && x->any->words ? llr_strmap_size(x->any->words) : 0;
}

const llr_strmap *llr_lexicon_any_wordmap(const llr_lexicon *x)
{
	return x->any ? x->any->words : NULL;
}

int llr_lexicon_any_hunspell_text(const llr_lexicon *x, const char **aff, size_t *aff_len, const char **dic,
                                  size_t *dic_len)
{
	if (!x->any || !x->any->hs_name || !x->any->aff || !x->any->dic)
		return 0;
	*aff = x->any->aff;
	*aff_len = x->any->aff_len;
	*dic = x->any->dic;
	*dic_len = x->any->dic_len;
	return 1;
}

int llr_lexicon_any_hunspell(const llr_lexicon *x)
{
	return x->any && x->any->hs_name;
}

int llr_lexicon_set_words(llr_lexicon *x, llr_strmap *words, llr_csr *rows, llr_err *err)
{
	LLR_ASSERT(words && rows && rows->rows == (int32_t)llr_strmap_size(words) &&
	           rows->cols == (int32_t)llr_strmap_size(x->features));
	llr_anyword *a = any_of(x, err);
	if (!a) {
		llr_strmap_free(words);
		llr_csr_free(rows);
		return LLR_ENOMEM;
	}
	llr_strmap_free(a->words);
	llr_csr_free(a->rows);
	a->words = words;
	a->rows = rows;
	return LLR_OK;
}

/* The whole file at path into *out (caller frees). */
static int slurp(const char *path, char **out, size_t *len, llr_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return llr_err_set(err, LLR_EIO, "%s: cannot open", path);
	llr_buf b = {0};
	char tmp[65536];
	size_t n;
	int rc = LLR_OK;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		if (llr_buf_append(&b, tmp, n) < 0) {
			rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
			break;
		}
	if (rc == LLR_OK && ferror(f))
		rc = llr_err_set(err, LLR_EIO, "%s: read error", path);
	fclose(f);
	if (rc < 0) {
		llr_buf_free(&b);
		return rc;
	}
	if (!b.data && llr_buf_append(&b, "", 0) < 0)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	*out = b.data;
	*len = b.len;
	return LLR_OK;
}

int llr_lexicon_set_hunspell(llr_lexicon *x, const char *path, llr_err *err)
{
	llr_anyword *a = any_of(x, err);
	if (!a)
		return LLR_ENOMEM;
	size_t n = strlen(path);
	if (n > 4 && (!strcmp(path + n - 4, ".dic") || !strcmp(path + n - 4, ".aff")))
		n -= 4;
	llr_buf aff = {0}, dic = {0};
	int rc = LLR_ENOMEM;
	if (llr_buf_printf(&aff, "%.*s.aff", (int)n, path) < 0 || llr_buf_printf(&dic, "%.*s.dic", (int)n, path) < 0) {
		llr_err_set(err, rc, "%s: out of memory", path);
		goto out;
	}
	free(a->aff);
	free(a->dic);
	free(a->hs_name);
	a->aff = a->dic = a->hs_name = NULL;
	if ((rc = slurp(aff.data, &a->aff, &a->aff_len, err)) < 0 || (rc = slurp(dic.data, &a->dic, &a->dic_len, err)) < 0)
		goto out;
	const char *base = strrchr(dic.data, '/');
	base = base ? base + 1 : dic.data;
	/* a meta value is one line of printable text */
	a->hs_name = llr_malloc(strlen(base) + 1);
	if (!a->hs_name) {
		rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	size_t k = 0;
	for (const char *p = base; *p; p++)
		a->hs_name[k++] = (unsigned char)*p < 0x20 || *p == '=' ? '_' : *p;
	a->hs_name[k] = '\0';
	rc = LLR_OK;
out:
	if (rc < 0) {
		free(a->aff);
		free(a->dic);
		a->aff = a->dic = NULL;
	}
	llr_buf_free(&aff);
	llr_buf_free(&dic);
	return rc;
}

/* ------------------------------------------------------------ members */

int llr_anyword_meta(const llr_anyword *a, llr_meta *m)
{
	int rc;
	size_t n = a->words ? llr_strmap_size(a->words) : 0;
	if ((rc = llr_meta_setf(m, "any.words", "%zu", n)) < 0)
		return rc;
	if (!a->hs_name)
		return llr_meta_set(m, "any.hunspell", "0");
	if ((rc = llr_meta_set(m, "any.hunspell", a->hs_name)) < 0 ||
	    (rc = llr_meta_setf(m, "any.hunspell.aff_bytes", "%zu", a->aff_len)) < 0 ||
	    (a->listed && (rc = llr_meta_set(m, "any.hunspell.scope", "listed")) < 0))
		return rc;
	return llr_meta_setf(m, "any.hunspell.dic_bytes", "%zu", a->dic_len);
}

int llr_anyword_write(llr_tensor_writer *w, const llr_anyword *a, llr_err *err)
{
	int rc;
	if (a->words && llr_strmap_size(a->words) > 0) {
		if ((rc = llr_lex_put_names(w, "any/words", a->words, err)) < 0 ||
		    (rc = llr_tw_put_csr(w, "any/phi", a->rows, err)) < 0)
			return rc;
	}
	if (!a->hs_name)
		return LLR_OK;
	if ((rc = llr_tw_put_text(w, "any/hunspell.aff", a->aff, a->aff_len, err)) < 0)
		return rc;
	return llr_tw_put_text(w, "any/hunspell.dic", a->dic, a->dic_len, err);
}

static int read_text(llr_tensor_reader *r, const char *member, const llr_meta *m, const char *key, char **out,
                     size_t *len, llr_err *err)
{
	int64_t want;
	int rc = llr_lex_next_member(r, member, err);
	if (rc < 0)
		return rc;
	if (llr_meta_get_i64(m, key, &want, err) < 0 || want < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not a size", key);
	if ((rc = llr_tr_text(r, out, len, err)) < 0)
		return rc;
	if ((int64_t)*len != want)
		return llr_err_set(err, LLR_EFORMAT, "member %s: %zu bytes, the meta declares %lld", member, *len,
		                   (long long)want);
	return LLR_OK;
}

int llr_anyword_read(llr_tensor_reader *r, const llr_meta *m, int32_t F, llr_anyword **out, llr_err *err)
{
	int64_t n;
	if (llr_meta_get_i64(m, "any.words", &n, err) < 0 || n < 0 || n > LLR_MAX_VOCAB)
		return llr_err_set(err, LLR_EFORMAT, "meta: any.words: missing or out of range");
	const char *hs = llr_meta_get(m, "any.hunspell");
	if (!hs || !*hs)
		return llr_err_set(err, LLR_EFORMAT, "meta: any.hunspell: missing");
	llr_anyword *a = calloc(1, sizeof *a);
	if (!a)
		return llr_err_set(err, LLR_ENOMEM, "lexicon: out of memory");
	int rc = LLR_OK;
	if (n > 0 && ((rc = llr_lex_read_names(r, "any/words", n, &a->words, err)) < 0 ||
	              (rc = llr_lex_read_csr(r, "any/phi", n, F, &a->rows, err)) < 0))
		goto fail;
	if (strcmp(hs, "0")) {
		if (!(a->hs_name = llr_malloc(strlen(hs) + 1))) {
			rc = llr_err_set(err, LLR_ENOMEM, "lexicon: out of memory");
			goto fail;
		}
		strcpy(a->hs_name, hs);
		const char *sc = llr_meta_get(m, "any.hunspell.scope");
		if (sc && strcmp(sc, "listed")) {
			rc = llr_err_set(err, LLR_EFORMAT, "meta: any.hunspell.scope: '%s', not 'listed'", sc);
			goto fail;
		}
		a->listed = sc != NULL;
		if ((rc = read_text(r, "any/hunspell.aff", m, "any.hunspell.aff_bytes", &a->aff, &a->aff_len, err)) < 0 ||
		    (rc = read_text(r, "any/hunspell.dic", m, "any.hunspell.dic_bytes", &a->dic, &a->dic_len, err)) < 0)
			goto fail;
	}
	*out = a;
	return LLR_OK;
fail:
	llr_anyword_free(a);
	return rc;
}

/* ------------------------------------------------- the listed forms */

static int add_form(const char *w, size_t len, void *ctx)
{
	return llr_strmap_add(ctx, w, len) < 0 ? LLR_ENOMEM : LLR_OK;
}

const llr_strmap *llr_lexicon_hunspell_forms(const llr_lexicon *x, llr_err *err)
{
	llr_anyword *a = x->any;
	if (!a || !a->hs_name) {
		llr_err_set(err, LLR_EINVAL, "no hunspell dictionary");
		return NULL;
	}
	if (a->forms)
		return a->forms;
	if (a->forms_err[0]) {
		llr_err_set(err, LLR_EFORMAT, "%s", a->forms_err);
		return NULL;
	}
	llr_err e = {0};
	llr_strmap *f = llr_strmap_new();
	int rc = f ? llr_affix_forms(a->aff, a->aff_len, a->dic, a->dic_len, add_form, f, &e)
	           : llr_err_set(&e, LLR_ENOMEM, "out of memory");
	if (rc < 0) {
		llr_strmap_free(f);
		llr_err_set(err, rc, "the dictionary %s: %s", a->hs_name, e.msg[0] ? e.msg : "its forms cannot be listed");
		if (rc != LLR_ENOMEM)
			snprintf(a->forms_err, sizeof a->forms_err, "the dictionary %.100s: %.380s", a->hs_name, e.msg);
		return NULL;
	}
	return a->forms = f;
}

int llr_lexicon_set_hunspell_listed(llr_lexicon *x, int on, llr_err *err)
{
	if (on && !llr_lexicon_hunspell_forms(x, err))
		return llr_err_code(err, LLR_EINVAL);
	if (x->any)
		x->any->listed = on;
	return LLR_OK;
}

int llr_lexicon_hunspell_listed(const llr_lexicon *x)
{
	return x->any && x->any->hs_name && x->any->listed;
}

/* --------------------------------------------------- rows of any word */

typedef struct {
	const llr_strmap *names;
	int32_t *c;
	float *v;
	size_t n, cap;
	int hs_known; /* LLR_FEAT_HS_KNOWN was emitted, kept or not */
} row_acc;

static int acc_add(row_acc *a, int32_t col, float val)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 32;
		int32_t *c = llr_reallocarray(a->c, cap, sizeof *c);
		if (!c)
			return LLR_ENOMEM;
		a->c = c;
		float *v = llr_reallocarray(a->v, cap, sizeof *v);
		if (!v)
			return LLR_ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->c[a->n] = col;
	a->v[a->n++] = val;
	return LLR_OK;
}

static int acc_emit(const char *name, size_t len, float value, void *ctx)
{
	row_acc *a = ctx;
	if (len == strlen(LLR_FEAT_HS_KNOWN) && !memcmp(name, LLR_FEAT_HS_KNOWN, len))
		a->hs_known = 1;
	int32_t col = llr_strmap_get(a->names, name, len);
	return col < 0 ? LLR_OK : acc_add(a, col, value);
}

static int copy_row(const llr_csr *m, int32_t r, int32_t *cols, float *vals, size_t cap, size_t *n, llr_err *err)
{
	size_t a = (size_t)m->indptr[r], b = (size_t)m->indptr[r + 1];
	if (b - a > cap)
		return llr_err_set(err, LLR_ERANGE, "word row: %zu features, room for %zu", b - a, cap);
	memcpy(cols, m->indices + a, (b - a) * sizeof *cols);
	if (vals)
		memcpy(vals, m->data + a, (b - a) * sizeof *vals);
	*n = b - a;
	return LLR_OK;
}

/* Whether an unseen word fires TOP:@notTop: as featurize gives it to the
 * words past the top M, so only with --top M > 0; a lexicon whose meta
 * does not say (older, or built by hand) gives it whenever it exists. */
int llr_lexicon_fires_nottop(const llr_lexicon *x)
{
	const char *t = x->meta ? llr_meta_get(x->meta, "top") : NULL;
	return !t || strcmp(t, "0");
}

/* The hunspell features of word into a (the dictionary opened on first
 * use). */
static int any_hunspell(llr_anyword *any, const char *word, size_t len, row_acc *a, llr_err *err)
{
	if (!any->morph) {
		if (any->morph_failed)
			return llr_err_set(err, LLR_EINVAL, "hunspell dictionary %s: could not be opened", any->hs_name);
		llr_err e = {0};
		any->morph = llr_morph_open_mem(any->aff, any->aff_len, any->dic, any->dic_len, &e);
		if (!any->morph) {
			any->morph_failed = 1;
			return llr_err_set(err, e.code ? e.code : LLR_EINVAL,
			                   "the model's hunspell dictionary %s: %s", any->hs_name, e.msg);
		}
	}
	int rc = llr_morph_features(any->morph, word, len, acc_emit, a);
	return rc == LLR_EINVAL ? LLR_OK : rc; /* a word hunspell cannot take has no analyses */
}

/* Whether word is outside V' (not a vocabulary word, or <unk>). */
static int outside_vocab(const llr_lexicon *x, const char *word, size_t len)
{
	int32_t id = x->vocab ? llr_strmap_get(x->vocab, word, len) : -1;
	return id < 0 || id == x->unk_id;
}

/* The features of a string outside V' into a, those the lexicon has. */
static int any_oov(const llr_lexicon *x, const char *word, size_t len, row_acc *a)
{
	if (!outside_vocab(x, word, len))
		return LLR_OK;
	int rc = acc_emit(LLR_FEAT_OOV, strlen(LLR_FEAT_OOV), 1.0f, a);
	if (rc >= 0 && a->hs_known)
		rc = acc_emit(LLR_FEAT_OOV_HS_KNOWN, strlen(LLR_FEAT_OOV_HS_KNOWN), 1.0f, a);
	return rc;
}

/* The row's entries, unsorted, into a. */
static int any_collect(const llr_lexicon *x, const char *word, size_t len, int in, row_acc *a, llr_err *err)
{
	int rc = LLR_OK;
	if (llr_lexicon_fires_nottop(x)) {
		int32_t top = llr_strmap_get(a->names, LLR_FEAT_NOTTOP, strlen(LLR_FEAT_NOTTOP));
		if (top >= 0 && (rc = acc_add(a, top, 1.0f)) < 0)
			return llr_err_set(err, rc, "word row: out of memory");
	}
	llr_anyword *any = x->any;
	int32_t id = any && any->words ? llr_strmap_get(any->words, word, len) : -1;
	if (id >= 0) {
		const llr_csr *m = any->rows;
		for (int32_t k = m->indptr[id]; k < m->indptr[id + 1] && rc >= 0; k++) {
			int32_t c = m->indices[k];
			if (in)
				c = llr_strmap_get(a->names, llr_strmap_str(x->features, c), llr_strmap_len(x->features, c));
			if (c >= 0)
				rc = acc_add(a, c, m->data[k]);
		}
		if (rc < 0)
			return llr_err_set(err, rc, "word row: out of memory");
	}
	int analyse = any && any->hs_name;
	if (analyse && any->listed && outside_vocab(x, word, len)) {
		const llr_strmap *f = llr_lexicon_hunspell_forms(x, err);
		if (!f)
			return llr_err_code(err, LLR_EINVAL);
		analyse = llr_strmap_get(f, word, len) >= 0;
	}
	if (analyse && (rc = any_hunspell(any, word, len, a, err)) < 0)
		return rc == LLR_ENOMEM ? llr_err_set(err, rc, "word row: out of memory") : rc;
	rc = llr_extract(&x->extract, word, len, acc_emit, a);
	if (rc == LLR_EUTF8)
		rc = LLR_OK; /* invalid UTF-8: no string features */
	if (rc >= 0)
		rc = any_oov(x, word, len, a);
	if (rc < 0)
		return llr_err_set(err, rc, "word row: out of memory");
	return LLR_OK;
}

int llr_lexicon_any_row(const llr_lexicon *x, const char *word, size_t len, int input_side, int32_t *cols,
                        float *vals, size_t cap, size_t *n, llr_err *err)
{
	int in = input_side && x->psi && x->features_in;
	row_acc a = {.names = in ? x->features_in : x->features};
	*n = 0;
	int rc = any_collect(x, word, len, in, &a, err);
	if (rc < 0)
		goto out;
	/* Sort by column (insertion sort, stable: rows are short), keep the
	 * first of repeated columns, drop zeros (as featurize does). */
	for (size_t i = 1; i < a.n; i++) {
		int32_t c = a.c[i];
		float v = a.v[i];
		size_t j = i;
		while (j > 0 && a.c[j - 1] > c) {
			a.c[j] = a.c[j - 1];
			a.v[j] = a.v[j - 1];
			j--;
		}
		a.c[j] = c;
		a.v[j] = v;
	}
	size_t k = 0;
	for (size_t i = 0; i < a.n; i++) {
		if (i && a.c[i - 1] == a.c[i])
			continue;
		if (a.v[i] == 0.0f)
			continue;
		if (k == cap) {
			rc = llr_err_set(err, LLR_ERANGE, "word row: more than %zu features", cap);
			goto out;
		}
		cols[k] = a.c[i];
		if (vals)
			vals[k] = a.v[i];
		k++;
	}
	*n = k;
out:
	free(a.c);
	free(a.v);
	return rc;
}

int llr_lexicon_word_row(const llr_lexicon *x, const char *word, size_t len, int input_side, int32_t *cols, float *vals,
                         size_t cap, size_t *n, llr_err *err)
{
	int in = input_side && x->psi && x->features_in;
	const llr_csr *m = in ? x->psi : x->phi;
	*n = 0;
	int32_t id = llr_strmap_get(x->vocab, word, len);
	if (id >= 0)
		return copy_row(m, id, cols, vals, cap, n, err);
	int rc = llr_lexicon_any_row(x, word, len, input_side, cols, vals, cap, n, err);
	if (rc < 0 || *n > 0)
		return rc;
	return copy_row(m, x->unk_id, cols, vals, cap, n, err);
}
