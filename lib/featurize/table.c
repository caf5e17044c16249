/*
 * table.c - featurize's feature table (lib/featurize/fz.h): every feature
 * name seen, with the source that named it first, and the words the
 * file-reading sources know, each with its features.  Not here: reading
 * those sources (sources.c), the rows of the vocabulary (rows.c).
 */
#include <stdlib.h>
#include <string.h>

#include "fz.h"

static const char *const fz_src_names[LLR_FZ_NSRC] = {"top", "conllu", "tagged", "lexicon", "hunspell", "ortho", "suffix", "ngrams", "oov"};

const char *llr_featurize_source_name(int src)
{
	return src >= 0 && src < LLR_FZ_NSRC ? fz_src_names[src] : "?";
}

int32_t llr_fz_feature(fz_state *z, const char *name, size_t len, int src, const char **why, llr_err *err)
{
	*why = NULL;
	if (len == 0) {
		*why = "empty feature name";
		return LLR_EFORMAT;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0) {
			*why = "feature name contains a space, TAB, newline or NUL";
			return LLR_EFORMAT;
		}
	}
	if (src != LLR_FZ_OOV && len >= strlen(LLR_OOV_PREFIX) && !memcmp(name, LLR_OOV_PREFIX, strlen(LLR_OOV_PREFIX))) {
		*why = "the prefix " LLR_OOV_PREFIX " is reserved for the features of strings outside the vocabulary";
		return LLR_EFORMAT;
	}
	size_t before = llr_strmap_size(z->names);
	int32_t id = llr_strmap_add(z->names, name, len);
	if (id < 0)
		return fz_nomem(err);
	if (llr_strmap_size(z->names) > before) {
		if (llr_strmap_size(z->names) > (size_t)LLR_MAX_FEATURES)
			return llr_err_set(err, LLR_ERANGE, "more than %d distinct features (the limit); use fewer sources or --min-feature-count",
			                   LLR_MAX_FEATURES);
		if ((size_t)id >= z->fcap) {
			size_t cap = z->fcap ? z->fcap * 2 : 1024;
			unsigned char *p = llr_reallocarray(z->fsrc, cap, 1);
			if (!p)
				return fz_nomem(err);
			z->fsrc = p;
			z->fcap = cap;
		}
		z->fsrc[id] = (unsigned char)src;
	}
	return id;
}

int llr_fz_flist_add(fz_flist *l, int32_t f, float v, llr_err *err)
{
	for (uint32_t i = 0; i < l->n; i++) {
		if (l->f[i] == f) {
			l->v[i] = v;
			return LLR_OK;
		}
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		int32_t *pf = llr_reallocarray(l->f, cap, sizeof *l->f);
		if (pf)
			l->f = pf;
		float *pv = llr_reallocarray(l->v, cap, sizeof *l->v);
		if (pv)
			l->v = pv;
		if (!pf || !pv)
			return fz_nomem(err);
		l->cap = cap;
	}
	l->f[l->n] = f;
	l->v[l->n++] = v;
	return LLR_OK;
}

fz_flist *llr_fz_word(fz_state *z, const char *w, size_t len, llr_err *err)
{
	size_t before = llr_strmap_size(z->lw);
	int32_t id = llr_strmap_add(z->lw, w, len);
	if (id < 0) {
		fz_nomem(err);
		return NULL;
	}
	if (llr_strmap_size(z->lw) > before && (size_t)id >= z->lwcap) {
		size_t cap = z->lwcap ? z->lwcap * 2 : 1024;
		fz_flist *p = llr_reallocarray(z->lwf, cap, sizeof *p);
		if (!p) {
			fz_nomem(err);
			return NULL;
		}
		memset(p + z->lwcap, 0, (cap - z->lwcap) * sizeof *p);
		z->lwf = p;
		z->lwcap = cap;
	}
	return &z->lwf[id];
}

void llr_fz_state_free(fz_state *z)
{
	for (size_t i = 0; z->lwf && i < llr_strmap_size(z->lw) && i < z->lwcap; i++) {
		free(z->lwf[i].f);
		free(z->lwf[i].v);
	}
	free(z->lwf);
	llr_strmap_free(z->lw);
	llr_strmap_free(z->names);
	free(z->fsrc);
	memset(z, 0, sizeof *z);
}
