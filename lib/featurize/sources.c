/*
 * sources.c - featurize's file-reading feature sources, read into the
 * feature table (table.c): CoNLL-U tag unions (--conllu), TSV lexicons
 * (--lexicon) and word/TAG corpora read through llr_archive (--tagged).
 * Each word's features are the union over sources and occurrences.  Bad
 * input is an error naming file:line.  Not here: TOP, hunspell and the
 * string extractors, which are computed per vocabulary word (rows.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"

/* NFC or NFKC (and lowercase) into out; a space inside a word becomes
 * U+00A0, as tok writes it. */
static int fz_norm_word(fz_state *z, const char *s, size_t len, llr_buf *out, const char *name, size_t no, llr_err *err)
{
	llr_err e = {0};
	if (llr_normalize(s, len, z->nfkc, z->lower, out, &e) < 0)
		return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s:%zu: word '%.*s': %s", name, no, (int)LLR_MIN(len, 80), s,
		                   e.msg[0] ? e.msg : llr_strerror(e.code));
	if (!memchr(out->data, ' ', out->len))
		return LLR_OK;
	llr_buf t = {0};
	for (size_t i = 0; i < out->len; i++) {
		if (out->data[i] == ' ' ? llr_buf_append(&t, "\xc2\xa0", 2) < 0 : llr_buf_putc(&t, out->data[i]) < 0) {
			llr_buf_free(&t);
			return fz_nomem(err);
		}
	}
	llr_buf_clear(out);
	int rc = llr_buf_append(out, t.data, t.len) < 0 ? fz_nomem(err) : LLR_OK;
	llr_buf_free(&t);
	return rc;
}

static int fz_add_feature(fz_state *z, fz_flist *l, const char *f, size_t len, float v, int src, const char *name, size_t no,
                          llr_err *err)
{
	const char *why;
	int32_t id = llr_fz_feature(z, f, len, src, &why, err);
	if (id < 0 && why)
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: feature '%.*s': %s", name, no, (int)LLR_MIN(len, 80), f, why);
	if (id < 0)
		return id;
	return llr_fz_flist_add(l, id, v, err);
}

/* The list of word s (normalised) into *fl. */
static int fz_word_of(fz_state *z, const char *s, size_t len, llr_buf *word, const char *name, size_t no, fz_flist **fl, llr_err *err)
{
	int rc = fz_norm_word(z, s, len, word, name, no, err);
	if (rc < 0)
		return rc;
	return (*fl = llr_fz_word(z, word->data, word->len, err)) ? LLR_OK : LLR_ENOMEM;
}

/* ------------------------------------------------------------- CoNLL-U */

typedef struct {
	fz_state *z;
	fz_flist *l;
	const char *name;
	size_t no;
	llr_err *err;
} feats_ctx;

static int fz_conllu_tag(const char *tag, size_t len, float value, void *ctx)
{
	feats_ctx *c = ctx;
	return fz_add_feature(c->z, c->l, tag, len, value, LLR_FZ_CONLLU, c->name, c->no, c->err);
}

/* One line of a CoNLL-U file. */
static int fz_conllu_line(fz_state *z, llr_lines *l, const char *s, size_t len, llr_buf *line, llr_buf *word, llr_buf *tag,
                          llr_err *err)
{
	llr_err e = {0};
	const char *name = llr_lines_name(l);
	size_t no = llr_lines_lineno(l);
	llr_buf_clear(line);
	if (llr_buf_append(line, s, len) < 0)
		return fz_nomem(err);
	llr_conllu_word w;
	if (llr_conllu_parse(line->data, len, &w, &e) < 0)
		return llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "%s:%zu: %s", name, no, e.msg);
	if (w.kind != 0)
		return LLR_OK;
	fz_flist *fl;
	int rc = fz_word_of(z, w.form, strlen(w.form), word, name, no, &fl, err);
	if (rc < 0)
		return rc;
	llr_buf_clear(tag);
	if (llr_buf_printf(tag, "POS:%s", w.upos) < 0)
		return fz_nomem(err);
	if ((rc = fz_add_feature(z, fl, tag->data, tag->len, 1.0f, LLR_FZ_CONLLU, name, no, err)) < 0)
		return rc;
	feats_ctx c = {z, fl, name, no, err};
	if ((rc = llr_conllu_feats(w.feats, fz_conllu_tag, &c, &e)) < 0)
		return err->code ? rc : llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "%s:%zu: %s", name, no, e.msg);
	return LLR_OK;
}

static int fz_load_conllu(fz_state *z, const char *path, llr_err *err)
{
	llr_lines *l = llr_lines_open(path, 0, err);
	if (!l)
		return llr_err_code(err, LLR_EIO);
	llr_buf line = {0}, word = {0}, tag = {0};
	const char *s;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &s, &len, err)) > 0) {
		if (len == 0 || s[0] == '#')
			continue;
		if ((rc = fz_conllu_line(z, l, s, len, &line, &word, &tag, err)) < 0)
			break;
	}
	llr_lines_close(l);
	llr_buf_free(&line);
	llr_buf_free(&word);
	llr_buf_free(&tag);
	return rc < 0 ? rc : LLR_OK;
}

/* -------------------------------------------------------- TSV lexicons */

/* One feature p..q of a lexicon line: name[=value], the value what
 * follows the last '='. */
static int fz_lexicon_feature(fz_state *z, fz_flist *fl, const char *p, const char *q, const char *name, size_t no, llr_err *err)
{
	size_t fl_len = (size_t)(q - p);
	float val = 1.0f;
	const char *eq = NULL;
	for (const char *t = p; t < q; t++)
		if (*t == '=')
			eq = t;
	if (eq && eq + 1 < q) {
		char num[64];
		size_t nl = (size_t)(q - eq - 1);
		if (nl >= sizeof num)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: feature '%.*s': bad value", name, no, (int)LLR_MIN(fl_len, 80), p);
		memcpy(num, eq + 1, nl);
		num[nl] = '\0';
		char *ne;
		double d = strtod(num, &ne);
		if (ne == num || *ne || !isfinite(d) || !isfinite((float)d))
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: feature '%.*s': bad value '%s' (want a finite number)", name, no,
			                   (int)LLR_MIN(fl_len, 80), p, num);
		val = (float)d;
		fl_len = (size_t)(eq - p);
	}
	return fz_add_feature(z, fl, p, fl_len, val, LLR_FZ_LEXICON, name, no, err);
}

/* One line of a TSV lexicon: token<TAB>feat feat=0.5 ... */
static int fz_lexicon_line(fz_state *z, llr_lines *l, const char *s, size_t len, llr_buf *word, llr_err *err)
{
	const char *name = llr_lines_name(l);
	size_t no = llr_lines_lineno(l);
	const char *tab = memchr(s, '\t', len), *end = s + len;
	if (!tab)
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: expected token<TAB>features", name, no);
	if (tab == s)
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: empty token", name, no);
	if (memchr(s, ' ', (size_t)(tab - s)))
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: the token contains a space", name, no);
	fz_flist *fl;
	int rc = fz_word_of(z, s, (size_t)(tab - s), word, name, no, &fl, err);
	if (rc < 0)
		return rc;
	const char *p = tab + 1;
	while (p < end) {
		const char *q = memchr(p, ' ', (size_t)(end - p));
		if (!q)
			q = end;
		if (q == p)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: empty feature (two spaces, or a space at an end)", name, no);
		if (memchr(p, '\t', (size_t)(q - p)))
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: a TAB inside the features (separate them with single spaces)", name, no);
		if ((rc = fz_lexicon_feature(z, fl, p, q, name, no, err)) < 0)
			return rc;
		p = q + 1;
		if (q + 1 == end)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: empty feature (a space at the end)", name, no);
	}
	return LLR_OK;
}

static int fz_load_lexicon(fz_state *z, const char *path, llr_err *err)
{
	llr_lines *l = llr_lines_open(path, 0, err);
	if (!l)
		return llr_err_code(err, LLR_EIO);
	llr_buf word = {0};
	const char *s;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &s, &len, err)) > 0) {
		if (len == 0)
			continue;
		if ((rc = fz_lexicon_line(z, l, s, len, &word, err)) < 0)
			break;
	}
	llr_lines_close(l);
	llr_buf_free(&word);
	return rc < 0 ? rc : LLR_OK;
}

/* ------------------------------------------------------ word/TAG corpora */

static ssize_t fz_arch_read(void *src, void *buf, size_t n, llr_err *err)
{
	return llr_archive_read(src, buf, n, err);
}

/* Archive members that are not corpus text: a dot in the base name
 * (package.json, cats.txt) or no lower-case letter (README, CONTENTS). */
static int fz_skip_member(const char *m)
{
	const char *b = strrchr(m, '/');
	b = b ? b + 1 : m;
	if (strchr(b, '.'))
		return 1;
	for (const char *p = b; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			return 0;
	return 1;
}

/* The word/TAG tokens of one line of document where. */
static int fz_tagged_line(fz_state *z, const char *s, size_t len, const char *where, size_t no, llr_buf *word, llr_buf *tag,
                          llr_err *err)
{
	size_t pos = 0, tl;
	const char *p;
	while (llr_token_next(s, len, &pos, &p, &tl)) {
		const char *q = p + tl;
		const char *slash = NULL;
		for (const char *t = p; t < q; t++)
			if (*t == '/')
				slash = t;
		if (!slash || slash == p || slash + 1 == q)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: '%.*s': expected word/TAG", where, no, (int)LLR_MIN(q - p, 80), p);
		fz_flist *fl;
		int rc = fz_word_of(z, p, (size_t)(slash - p), word, where, no, &fl, err);
		if (rc < 0)
			return rc;
		llr_buf_clear(tag);
		if (llr_buf_append(tag, "POS:", 4) < 0 || llr_buf_append(tag, slash + 1, (size_t)(q - slash - 1)) < 0)
			return fz_nomem(err);
		if ((rc = fz_add_feature(z, fl, tag->data, tag->len, 1.0f, LLR_FZ_TAGGED, where, no, err)) < 0)
			return rc;
	}
	return LLR_OK;
}

/* One document of a word/TAG archive. */
static int fz_tagged_doc(fz_state *z, llr_archive *a, const char *where, llr_buf *word, llr_buf *tag, llr_err *err)
{
	llr_lines *l = llr_lines_from(fz_arch_read, a, where, 0);
	if (!l)
		return fz_nomem(err);
	const char *s;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &s, &len, err)) > 0)
		if ((rc = fz_tagged_line(z, s, len, where, llr_lines_lineno(l), word, tag, err)) < 0)
			break;
	llr_lines_close(l);
	return rc < 0 ? rc : LLR_OK;
}

static int fz_load_tagged(fz_state *z, const char *path, llr_err *err)
{
	llr_archive *a = llr_archive_open(path, err);
	if (!a)
		return llr_err_code(err, LLR_EIO);
	llr_buf word = {0}, tag = {0}, where = {0};
	const char *member;
	int64_t size;
	int rc, nread = 0;
	while ((rc = llr_archive_next(a, &member, &size, err)) > 0) {
		int whole = !strcmp(member, llr_archive_name(a)) || !strcmp(path, "-");
		if (!whole && fz_skip_member(member))
			continue;
		llr_buf_clear(&where);
		if (whole ? llr_buf_printf(&where, "%s", llr_archive_name(a)) < 0
		          : llr_buf_printf(&where, "%s:%s", llr_archive_name(a), member) < 0) {
			rc = fz_nomem(err);
			break;
		}
		nread++;
		if ((rc = fz_tagged_doc(z, a, where.data, &word, &tag, err)) < 0)
			break;
	}
	if (rc >= 0 && !nread)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no word/TAG document in it", path);
	llr_archive_close(a);
	llr_buf_free(&word);
	llr_buf_free(&tag);
	llr_buf_free(&where);
	return rc < 0 ? rc : LLR_OK;
}

int llr_fz_load_sources(fz_state *z, const llr_fz_source *src, int n, llr_err *err)
{
	for (int i = 0; i < n; i++) {
		int rc = LLR_OK;
		switch (src[i].kind) {
		case LLR_FZ_CONLLU: rc = fz_load_conllu(z, src[i].path, err); break;
		case LLR_FZ_LEXICON: rc = fz_load_lexicon(z, src[i].path, err); break;
		case LLR_FZ_TAGGED: rc = fz_load_tagged(z, src[i].path, err); break;
		}
		if (rc < 0)
			return rc;
	}
	return LLR_OK;
}
