/*
 * background.c - featurize's background b and meta (lib/featurize/fz.h):
 * log b over the vocabulary from --background (uniform, unigram with
 * add-k, a token<TAB>probability file, or an n-gram carried in the
 * stream), and the meta keys that record how the stream was made
 * (sources, top, tokenisation, ...).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"

/* --background ngram:LM: b(K; x) from an ARPA or binary n-gram, carried
 * in the stream; logb is its unigram level.  Words of the vocabulary the
 * n-gram lacks take its <unk> probability (a note says so). */
static int fz_background_ngram(const llr_featurize_opts *o, llr_lexicon *lex, llr_err *err)
{
	llr_err e = {0};
	int rc = llr_ngram_load(o->bg_file, &lex->ngram, err);
	if (rc < 0)
		return rc;
	if (!(lex->bg = llr_ngram_bg_new(lex->ngram, lex->vocab, &e)))
		return llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "%s: %s", o->bg_file, e.msg);
	memcpy(lex->logb, llr_ngram_bg_logb1(lex->bg), llr_strmap_size(lex->vocab) * sizeof *lex->logb);
	llr_meta_set(lex->meta, "background", "ngram");
	llr_meta_setf(lex->meta, "background_absent", "%d", llr_ngram_bg_absent(lex->bg));
	if (llr_ngram_bg_absent(lex->bg))
		llr_fz_note(o, "%s: %d vocabulary words are not in the n-gram: they take its <unk> probability", o->bg_file,
		            llr_ngram_bg_absent(lex->bg));
	return LLR_OK;
}

/* One line of a background file into p, seen. */
static int fz_background_line(const llr_vocab *v, llr_lines *l, const char *line, size_t len, double *p, unsigned char *seen,
                              llr_err *err)
{
	const char *name = llr_lines_name(l);
	size_t no = llr_lines_lineno(l);
	const char *tab = memchr(line, '\t', len);
	if (!tab || tab == line)
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: expected token<TAB>probability", name, no);
	char *end;
	double x = strtod(tab + 1, &end);
	if (end == tab + 1 || end != line + len || !isfinite(x) || x < 0)
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: bad probability '%.*s' (want a finite number >= 0)", name, no,
		                   (int)LLR_MIN((size_t)(line + len - tab - 1), 40), tab + 1);
	int32_t id = llr_vocab_id(v, line, (size_t)(tab - line));
	if (id < 0)
		return LLR_OK;
	if (seen[id])
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: '%.*s' given twice", name, no, (int)(tab - line), line);
	if (x == 0)
		return llr_err_set(err, LLR_EFORMAT, "%s:%zu: zero probability for vocabulary word '%.*s'", name, no, (int)(tab - line), line);
	seen[id] = 1;
	p[id] = x;
	return LLR_OK;
}

/* token<TAB>probability, every vocabulary word present. */
static int fz_background_file(const llr_featurize_opts *o, const llr_vocab *v, float *logb, llr_meta *m, llr_err *err)
{
	size_t V = llr_vocab_size(v);
	llr_lines *l = llr_lines_open(o->bg_file, 0, err);
	if (!l)
		return llr_err_code(err, LLR_EIO);
	double *p = calloc(V, sizeof *p);
	unsigned char *seen = calloc(V, 1);
	int rc = p && seen ? LLR_OK : fz_nomem(err);
	const char *line;
	size_t len;
	while (rc >= 0 && (rc = llr_lines_next(l, &line, &len, err)) > 0)
		if (len > 0)
			rc = fz_background_line(v, l, line, len, p, seen, err);
	double sum = 0;
	for (size_t i = 0; rc >= 0 && i < V; i++) {
		if (!seen[i])
			rc = llr_err_set(err, LLR_EFORMAT,
			                 "%s: no probability for vocabulary word '%s' (every word, </s> and <unk> included, needs one)",
			                 llr_lines_name(l), llr_vocab_token(v, (int32_t)i));
		sum += p[i];
	}
	for (size_t i = 0; rc >= 0 && i < V; i++)
		logb[i] = (float)log(p[i] / sum);
	if (rc >= 0)
		llr_meta_set(m, "background", "file");
	llr_lines_close(l);
	free(p);
	free(seen);
	return rc < 0 ? rc : LLR_OK;
}

static int fz_background(const llr_featurize_opts *o, const llr_vocab *v, float *logb, llr_meta *m, llr_err *err)
{
	size_t V = llr_vocab_size(v);
	if (o->bg == LLR_FZ_BG_UNIFORM) {
		for (size_t i = 0; i < V; i++)
			logb[i] = (float)-log((double)V);
		llr_meta_set(m, "background", "uniform");
		return LLR_OK;
	}
	if (o->bg == LLR_FZ_BG_UNIGRAM) {
		double k = o->bg_k;
		double N = 0;
		for (size_t i = 0; i < V; i++)
			N += (double)llr_vocab_count(v, (int32_t)i);
		for (size_t i = 0; i < V; i++)
			logb[i] = (float)log(((double)llr_vocab_count(v, (int32_t)i) + k) / (N + k * (double)V));
		llr_meta_setf(m, "background", "unigram:%g", k);
		return LLR_OK;
	}
	return fz_background_file(o, v, logb, m, err);
}

/* "name,name" of the sources in mask. */
static int fz_source_list(llr_meta *m, const char *key, unsigned mask)
{
	llr_buf b = {0};
	int rc = LLR_OK;
	for (int s = 0; s < LLR_FZ_NSRC; s++)
		if (mask & (1u << s) && llr_buf_printf(&b, "%s%s", b.len ? "," : "", llr_featurize_source_name(s)) < 0)
			rc = LLR_ENOMEM;
	if (rc >= 0 && llr_meta_set(m, key, b.len ? b.data : "") < 0)
		rc = LLR_ENOMEM;
	llr_buf_free(&b);
	return rc;
}

/* How the corpus was tokenised (llr_tokprof): tok's options as given to
 * featurize, the rest seen in the corpus's types (the vocabulary file's
 * with --vocab, the corpus being read after the meta is written). */
static int fz_tok_record(llr_featurizer *R, llr_meta *m, llr_err *err)
{
	llr_tokprof p = R->o.tok;
	llr_tokstat *s = llr_tokstat_new();
	if (!s)
		return fz_nomem(err);
	const llr_vocab *v = R->streaming ? R->v : R->cp.types;
	int rc = LLR_OK;
	for (size_t i = 0; rc >= 0 && v && i < llr_vocab_size(v); i++) {
		const char *w = llr_vocab_token(v, (int32_t)i);
		if (!strcmp(w, LLR_EOS) || !strcmp(w, LLR_UNK) || !strcmp(w, LLR_BOS))
			continue;
		rc = llr_tokstat_token(s, w, strlen(w), llr_vocab_count(v, (int32_t)i), err);
	}
	if (rc >= 0) {
		llr_tokprof_detect(&p, s);
		if (llr_tokprof_to_meta(&p, m) < 0)
			rc = fz_nomem(err);
	}
	llr_tokstat_free(s);
	return rc < 0 ? rc : LLR_OK;
}

/* With --spelling, for the record (any_row goes by the features
 * themselves): the OOV: features phi has. */
static int fz_oov_record(llr_lexicon *lex)
{
	const char *oov[] = {LLR_FEAT_OOV, LLR_FEAT_OOV_HS_KNOWN};
	llr_buf b = {0};
	int rc = LLR_OK;
	for (int k = 0; k < 2; k++)
		if (llr_strmap_get(lex->features, oov[k], strlen(oov[k])) >= 0 && llr_buf_printf(&b, "%s%s", b.len ? "," : "", oov[k]) < 0)
			rc = LLR_ENOMEM;
	if (rc >= 0 && llr_meta_set(lex->meta, "oov_features", b.len ? b.data : "none") < 0)
		rc = LLR_ENOMEM;
	llr_buf_free(&b);
	return rc;
}

/* Background and meta. */
int llr_fz_meta(llr_featurizer *R, llr_err *err)
{
	const llr_featurize_opts *o = &R->o;
	llr_lexicon *lex = &R->lex;
	llr_meta *m = lex->meta;
	if (!(lex->logb = calloc((size_t)R->V, sizeof *lex->logb)))
		return fz_nomem(err);
	int rc = o->bg == LLR_FZ_BG_NGRAM ? fz_background_ngram(o, lex, err) : fz_background(o, R->v, lex->logb, m, err);
	if (rc < 0)
		return rc;
	llr_meta_setf(m, "unk_logb", "%.9g", (double)lex->logb[R->unk]);
	if (fz_source_list(m, "sources", R->used) < 0 ||
	    (R->own_psi ? fz_source_list(m, "sources_in", R->used & o->in_mask) : llr_meta_set(m, "sources_in", "same")) < 0)
		return fz_nomem(err);
	llr_meta_setf(m, "top", "%d", o->top);
	llr_meta_setf(m, "lowercase", "%d", R->z.lower);
	if ((rc = fz_tok_record(R, m, err)) < 0)
		return rc;
	llr_meta_setf(m, "min_feature_count", "%d", o->min_count);
	llr_meta_set(m, "unk_features", LLR_FEAT_NOTTOP);
	llr_meta_set(m, "eos_features", LLR_FEAT_EOS);
	if (o->spelling && fz_oov_record(lex) < 0)
		return fz_nomem(err);
	if (!R->streaming) {
		llr_meta_setf(m, "tokens", "%lld", (long long)R->cp.tokens);
		llr_meta_setf(m, "sentences", "%lld", (long long)R->cp.sentences);
	}
	llr_meta_setf(m, "ids_chunk", "%zu", FZ_CHUNK_IDS);
	return LLR_OK;
}
