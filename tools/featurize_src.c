/*
 * featurize_src.c - featurize's feature table (feature names and ids, the
 * words the lexicon sources know) and its file-reading feature sources:
 * CoNLL-U tag unions (--conllu), TSV lexicons (--lexicon) and word/TAG
 * corpora read through llr_archive (--tagged).  Each word's features are the union
 * over sources and occurrences.  CLI-only: exits on bad input with
 * `featurize: file:line: reason`.  Not here: TOP, hunspell and the string
 * extractors, which are computed per vocabulary word (featurize.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "featurize_src.h"

const char *const fz_src_names[FZ_NSRC] = {"top", "conllu", "tagged", "lexicon", "hunspell", "ortho", "suffix", "ngrams", "oov"};

/* ------------------------------------------------------ feature table */

int32_t fz_feature(fz_state *z, const char *name, size_t len, int src, const char **why)
{
	if (len == 0) {
		*why = "empty feature name";
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0) {
			*why = "feature name contains a space, TAB, newline or NUL";
			return -1;
		}
	}
	if (src != FZ_OOV && len >= strlen(LLR_OOV_PREFIX) && !memcmp(name, LLR_OOV_PREFIX, strlen(LLR_OOV_PREFIX))) {
		*why = "the prefix " LLR_OOV_PREFIX " is reserved for the features of strings outside the vocabulary";
		return -1;
	}
	size_t before = llr_strmap_size(z->names);
	int32_t id = llr_strmap_add(z->names, name, len);
	if (id < 0)
		cli_oom();
	if (llr_strmap_size(z->names) > before) {
		if (llr_strmap_size(z->names) > (size_t)LLR_MAX_FEATURES)
			cli_die("more than %d distinct features (the limit); use fewer sources or --min-feature-count",
			        LLR_MAX_FEATURES);
		if ((size_t)id >= z->fcap) {
			z->fcap = z->fcap ? z->fcap * 2 : 1024;
			z->fsrc = llr_reallocarray(z->fsrc, z->fcap, 1);
			if (!z->fsrc)
				cli_oom();
		}
		z->fsrc[id] = (unsigned char)src;
	}
	return id;
}

void fz_flist_add(fz_flist *l, int32_t f, float v)
{
	for (uint32_t i = 0; i < l->n; i++) {
		if (l->f[i] == f) {
			l->v[i] = v;
			return;
		}
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		l->f = llr_reallocarray(l->f, cap, sizeof *l->f);
		l->v = llr_reallocarray(l->v, cap, sizeof *l->v);
		if (!l->f || !l->v)
			cli_oom();
		l->cap = cap;
	}
	l->f[l->n] = f;
	l->v[l->n++] = v;
}

fz_flist *fz_word(fz_state *z, const char *w, size_t len)
{
	size_t before = llr_strmap_size(z->lw);
	int32_t id = llr_strmap_add(z->lw, w, len);
	if (id < 0)
		cli_oom();
	if (llr_strmap_size(z->lw) > before && (size_t)id >= z->lwcap) {
		size_t cap = z->lwcap ? z->lwcap * 2 : 1024;
		fz_flist *p = llr_reallocarray(z->lwf, cap, sizeof *p);
		if (!p)
			cli_oom();
		memset(p + z->lwcap, 0, (cap - z->lwcap) * sizeof *p);
		z->lwf = p;
		z->lwcap = cap;
	}
	return &z->lwf[id];
}

void fz_add_src(fz_state *z, int kind, const char *path)
{
	struct fz_src *p = llr_reallocarray(z->src, (size_t)z->nsrc + 1, sizeof *p);
	if (!p)
		cli_oom();
	p[z->nsrc].kind = kind;
	p[z->nsrc].path = path;
	z->src = p;
	z->nsrc++;
}

void fz_free(fz_state *z)
{
	for (size_t i = 0; i < llr_strmap_size(z->lw); i++) {
		free(z->lwf[i].f);
		free(z->lwf[i].v);
	}
	free(z->lwf);
	llr_strmap_free(z->lw);
	llr_strmap_free(z->names);
	free(z->fsrc);
	free(z->src);
}

/* NFC or with --nfkc NFKC (and lowercase with -l) into out; a space inside a word becomes
 * U+00A0, as tok writes it. */
static void fz_norm_word(fz_state *z, const char *s, size_t len, llr_buf *out, const char *name, size_t no)
{
	llr_err e = {0};
	if (llr_normalize(s, len, z->nfkc, z->lower, out, &e) < 0)
		cli_die("%s:%zu: word '%.*s': %s", name, no, (int)MIN(len, 80), s, e.msg[0] ? e.msg : llr_strerror(e.code));
	if (!memchr(out->data, ' ', out->len))
		return;
	llr_buf t = {0};
	for (size_t i = 0; i < out->len; i++) {
		if (out->data[i] == ' ' ? llr_buf_append(&t, "\xc2\xa0", 2) < 0 : llr_buf_putc(&t, out->data[i]) < 0)
			cli_oom();
	}
	llr_buf_clear(out);
	if (llr_buf_append(out, t.data, t.len) < 0)
		cli_oom();
	llr_buf_free(&t);
}

static void fz_add_feature(fz_state *z, fz_flist *l, const char *f, size_t len, float v, int src, const char *name,
                           size_t no)
{
	const char *why;
	int32_t id = fz_feature(z, f, len, src, &why);
	if (id < 0)
		cli_die("%s:%zu: feature '%.*s': %s", name, no, (int)MIN(len, 80), f, why);
	fz_flist_add(l, id, v);
}

/* ------------------------------------------------------------- CoNLL-U */

typedef struct {
	fz_state *z;
	fz_flist *l;
	const char *name;
	size_t no;
} feats_ctx;

static int fz_conllu_tag(const char *tag, size_t len, float value, void *ctx)
{
	feats_ctx *c = ctx;
	fz_add_feature(c->z, c->l, tag, len, value, FZ_CONLLU, c->name, c->no);
	return 0;
}

static void fz_load_conllu(fz_state *z, const char *path)
{
	llr_err e = {0};
	llr_lines *l = llr_lines_open(path, 0, &e);
	if (!l)
		cli_die_err(&e);
	llr_buf line = {0}, word = {0}, tag = {0};
	const char *s;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &s, &len, &e)) > 0) {
		if (len == 0 || s[0] == '#')
			continue;
		const char *name = llr_lines_name(l);
		size_t no = llr_lines_lineno(l);
		llr_buf_clear(&line);
		if (llr_buf_append(&line, s, len) < 0)
			cli_oom();
		llr_conllu_word w;
		if (llr_conllu_parse(line.data, len, &w, &e) < 0)
			cli_die("%s:%zu: %s", name, no, e.msg);
		if (w.kind != 0)
			continue;
		fz_norm_word(z, w.form, strlen(w.form), &word, name, no);
		fz_flist *fl = fz_word(z, word.data, word.len);
		llr_buf_clear(&tag);
		if (llr_buf_printf(&tag, "POS:%s", w.upos) < 0)
			cli_oom();
		fz_add_feature(z, fl, tag.data, tag.len, 1.0f, FZ_CONLLU, name, no);
		feats_ctx c = {z, fl, name, no};
		if (llr_conllu_feats(w.feats, fz_conllu_tag, &c, &e) < 0)
			cli_die("%s:%zu: %s", name, no, e.msg);
	}
	if (rc < 0)
		cli_die_err(&e);
	llr_lines_close(l);
	llr_buf_free(&line);
	llr_buf_free(&word);
	llr_buf_free(&tag);
}

/* -------------------------------------------------------- TSV lexicons */

static void fz_load_lexicon(fz_state *z, const char *path)
{
	llr_err e = {0};
	llr_lines *l = llr_lines_open(path, 0, &e);
	if (!l)
		cli_die_err(&e);
	llr_buf word = {0};
	const char *s;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &s, &len, &e)) > 0) {
		if (len == 0)
			continue;
		const char *name = llr_lines_name(l);
		size_t no = llr_lines_lineno(l);
		const char *tab = memchr(s, '\t', len), *end = s + len;
		if (!tab)
			cli_die("%s:%zu: expected token<TAB>features", name, no);
		if (tab == s)
			cli_die("%s:%zu: empty token", name, no);
		if (memchr(s, ' ', (size_t)(tab - s)))
			cli_die("%s:%zu: the token contains a space", name, no);
		fz_norm_word(z, s, (size_t)(tab - s), &word, name, no);
		fz_flist *fl = fz_word(z, word.data, word.len);
		const char *p = tab + 1;
		while (p < end) {
			const char *q = memchr(p, ' ', (size_t)(end - p));
			if (!q)
				q = end;
			if (q == p)
				cli_die("%s:%zu: empty feature (two spaces, or a space at an end)", name, no);
			if (memchr(p, '\t', (size_t)(q - p)))
				cli_die("%s:%zu: a TAB inside the features (separate them with single spaces)", name, no);
			/* name[=value]: the value is what follows the last '=' */
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
					cli_die("%s:%zu: feature '%.*s': bad value", name, no, (int)MIN(fl_len, 80), p);
				memcpy(num, eq + 1, nl);
				num[nl] = '\0';
				char *ne;
				double d = strtod(num, &ne);
				if (ne == num || *ne || !isfinite(d) || !isfinite((float)d))
					cli_die("%s:%zu: feature '%.*s': bad value '%s' (want a finite number)", name, no,
					        (int)MIN(fl_len, 80), p, num);
				val = (float)d;
				fl_len = (size_t)(eq - p);
			}
			fz_add_feature(z, fl, p, fl_len, val, FZ_LEXICON, name, no);
			p = q + 1;
			if (q + 1 == end)
				cli_die("%s:%zu: empty feature (a space at the end)", name, no);
		}
	}
	if (rc < 0)
		cli_die_err(&e);
	llr_lines_close(l);
	llr_buf_free(&word);
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

static void fz_load_tagged(fz_state *z, const char *path)
{
	llr_err e = {0};
	llr_archive *a = llr_archive_open(path, &e);
	if (!a)
		cli_die_err(&e);
	llr_buf word = {0}, tag = {0}, where = {0};
	const char *member;
	int64_t size;
	int rc, nread = 0;
	while ((rc = llr_archive_next(a, &member, &size, &e)) > 0) {
		int whole = !strcmp(member, llr_archive_name(a)) || !strcmp(path, "-");
		if (!whole && fz_skip_member(member))
			continue;
		llr_buf_clear(&where);
		if (whole ? llr_buf_printf(&where, "%s", llr_archive_name(a)) < 0
		          : llr_buf_printf(&where, "%s:%s", llr_archive_name(a), member) < 0)
			cli_oom();
		llr_lines *l = llr_lines_from(fz_arch_read, a, where.data, 0);
		if (!l)
			cli_oom();
		nread++;
		const char *s;
		size_t len;
		int lr;
		while ((lr = llr_lines_next(l, &s, &len, &e)) > 0) {
			size_t no = llr_lines_lineno(l);
			size_t pos = 0, tl;
			const char *p;
			while (llr_token_next(s, len, &pos, &p, &tl)) {
				const char *q = p + tl;
				const char *slash = NULL;
				for (const char *t = p; t < q; t++)
					if (*t == '/')
						slash = t;
				if (!slash || slash == p || slash + 1 == q)
					cli_die("%s:%zu: '%.*s': expected word/TAG", where.data, no, (int)MIN(q - p, 80), p);
				fz_norm_word(z, p, (size_t)(slash - p), &word, where.data, no);
				fz_flist *fl = fz_word(z, word.data, word.len);
				llr_buf_clear(&tag);
				if (llr_buf_append(&tag, "POS:", 4) < 0 || llr_buf_append(&tag, slash + 1, (size_t)(q - slash - 1)) < 0)
					cli_oom();
				fz_add_feature(z, fl, tag.data, tag.len, 1.0f, FZ_TAGGED, where.data, no);
			}
		}
		if (lr < 0)
			cli_die_err(&e);
		llr_lines_close(l);
	}
	if (rc < 0)
		cli_die_err(&e);
	if (!nread)
		cli_die("%s: no word/TAG document in it", path);
	llr_archive_close(a);
	llr_buf_free(&word);
	llr_buf_free(&tag);
	llr_buf_free(&where);
}

void fz_load_sources(fz_state *z)
{
	for (int i = 0; i < z->nsrc; i++) {
		switch (z->src[i].kind) {
		case FZ_CONLLU:
			fz_load_conllu(z, z->src[i].path);
			break;
		case FZ_LEXICON:
			fz_load_lexicon(z, z->src[i].path);
			break;
		case FZ_TAGGED:
			fz_load_tagged(z, z->src[i].path);
			break;
		}
	}
}
