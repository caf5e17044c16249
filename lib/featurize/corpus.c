/*
 * corpus.c - featurize's reading of the corpus (lib/featurize/fz.h):
 * token files one after another with the progress of the reading, the
 * vocabulary (the corpus's types and counts, or a --vocab file, the
 * --extra words, the lexicon words with --vocab-from corpus+lexicon,
 * </s> and <unk>, sorted), and with --spelling and --vocab the corpus's
 * types outside the vocabulary.  Not here: mapping the corpus to ids
 * (stream.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"

void llr_fz_report(const llr_featurize_opts *o, const llr_fz_progress *p)
{
	if (o->progress)
		o->progress(o->ctx, p);
}

void llr_fz_note(const llr_featurize_opts *o, const char *fmt, ...)
{
	if (!o->note)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!msg)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->note(o->ctx, msg);
	free(msg);
}

/* The tokens of line, counted for the progress line. */
static void fz_tok_step(fz_tok_in *t, const char *line, size_t len)
{
	size_t pos = 0, tl;
	const char *tok;
	t->lines++;
	while (llr_token_next(line, len, &pos, &tok, &tl))
		t->tokens++;
	llr_fz_report(t->o, &(llr_fz_progress){.at = LLR_FZ_STEP, .unit = "lines", .n = t->lines, .tokens = t->tokens});
}

int llr_fz_tok_next(fz_tok_in *t, const char **line, size_t *len, llr_err *err)
{
	int prog = t->prog && t->o->progress;
	for (;;) {
		if (!t->l) {
			if (t->i >= t->n) {
				if (prog)
					llr_fz_report(t->o, &(llr_fz_progress){.at = LLR_FZ_END});
				return 0;
			}
			const char *path = t->files[t->i++];
			if (!(t->l = llr_lines_open(path, 0, err)))
				return llr_err_code(err, LLR_EIO);
			if (prog)
				llr_fz_report(t->o, &(llr_fz_progress){.at = LLR_FZ_OPEN, .path = path, .lines = t->l});
		}
		int rc = llr_lines_next(t->l, line, len, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			llr_lines_close(t->l);
			t->l = NULL;
			continue;
		}
		if (*len == 0)
			continue;
		llr_err e = {0};
		if (llr_tokens_check(*line, *len, &e) < 0)
			return llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "%s:%zu: %s", llr_lines_name(t->l), llr_lines_lineno(t->l), e.msg);
		if (prog)
			fz_tok_step(t, *line, *len);
		return 1;
	}
}

void llr_fz_tok_close(fz_tok_in *t)
{
	llr_lines_close(t->l);
	t->l = NULL;
}

const char *llr_fz_corpus_name(const llr_featurizer *R)
{
	const llr_featurize_opts *o = &R->o;
	return o->nfiles == 1 && !strcmp(o->files[0], "-") ? "<stdin>" : o->files[0];
}

/* ---------------------------------------------------------- vocabulary */

static int fz_corpus_push(fz_corpus *c, int32_t id, llr_err *err)
{
	if (c->nids == c->idcap) {
		size_t cap = c->idcap ? c->idcap * 2 : 1 << 16;
		int32_t *p = llr_reallocarray(c->ids, cap, sizeof *c->ids);
		if (!p)
			return llr_err_set(err, LLR_ENOMEM, "out of memory (corpus of %zu tokens)", c->nids);
		c->ids = p;
		c->idcap = cap;
	}
	c->ids[c->nids++] = id;
	return LLR_OK;
}

/* The corpus whole: its types in first-seen order, their counts, and the
 * text as type ids with -1 at each sentence end. */
static int fz_corpus_read(fz_corpus *c, fz_tok_in *t, llr_err *err)
{
	const char *line;
	size_t len;
	int rc;
	if (!(c->types = llr_vocab_new()))
		return fz_nomem(err);
	while ((rc = llr_fz_tok_next(t, &line, &len, err)) > 0) {
		size_t pos = 0, tl;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			int32_t id = llr_vocab_add(c->types, tok, tl, 1);
			if (id < 0)
				return fz_nomem(err);
			if (llr_vocab_size(c->types) > (size_t)LLR_MAX_VOCAB - 2)
				return llr_err_set(err, LLR_ERANGE, "%s:%zu: more than %d types (the limit)", llr_lines_name(t->l),
				                   llr_lines_lineno(t->l), LLR_MAX_VOCAB - 2);
			c->tokens++;
			if ((rc = fz_corpus_push(c, id, err)) < 0)
				return rc;
		}
		if ((rc = fz_corpus_push(c, -1, err)) < 0)
			return rc;
		if (t->o->bg_fsa && llr_fz_corpus_line(c, t->i - 1, (int64_t)llr_lines_lineno(t->l)) < 0)
			return fz_nomem(err);
		c->sentences++;
	}
	return rc;
}

static int fz_add_type(llr_vocab *v, const char *s, size_t len, int64_t count, llr_err *err)
{
	if (llr_vocab_add(v, s, len, count) < 0)
		return fz_nomem(err);
	if (llr_vocab_size(v) > (size_t)LLR_MAX_VOCAB)
		return llr_err_set(err, LLR_ERANGE, "more than %d types (the limit)", LLR_MAX_VOCAB);
	return LLR_OK;
}

/* --vocab: the vocabulary file, and the corpus's first sentence (the
 * rest is mapped to ids as it is read). */
static int fz_vocab_file(llr_featurizer *R, llr_err *err)
{
	const llr_featurize_opts *o = &R->o;
	llr_lines *l = llr_lines_open(o->vocab_file, 0, err);
	if (!l)
		return llr_err_code(err, LLR_EIO);
	int rc = llr_vocab_read(R->v, l, err);
	llr_lines_close(l);
	if (rc < 0)
		return rc;
	if (llr_vocab_size(R->v) == 0)
		return llr_err_set(err, LLR_EEMPTY, "%s: empty vocabulary", o->vocab_file);
	if (llr_vocab_id(R->v, LLR_BOS, strlen(LLR_BOS)) >= 0)
		return llr_err_set(err, LLR_EFORMAT, "%s: the reserved token %s is in the vocabulary", o->vocab_file, LLR_BOS);
	if (llr_vocab_size(R->v) > (size_t)LLR_MAX_VOCAB - 2)
		return llr_err_set(err, LLR_ERANGE, "%s: more than %d types (the limit)", o->vocab_file, LLR_MAX_VOCAB - 2);
	if (o->dump)
		return LLR_OK;
	if ((rc = llr_fz_tok_next(&R->tin, &R->first, &R->first_len, err)) < 0)
		return rc;
	if (rc == 0)
		return llr_err_set(err, LLR_EEMPTY, "%s: empty corpus (no sentence to map to ids)", llr_fz_corpus_name(R));
	return LLR_OK;
}

/* The corpus's types, with their counts, and </s> once a sentence. */
static int fz_vocab_corpus(llr_featurizer *R, llr_err *err)
{
	fz_corpus *cp = &R->cp;
	int rc = fz_corpus_read(cp, &R->tin, err);
	if (rc < 0)
		return rc;
	if (cp->sentences == 0)
		return llr_err_set(err, LLR_EEMPTY, "%s: empty corpus (no tokens)", llr_fz_corpus_name(R));
	for (size_t i = 0; i < llr_vocab_size(cp->types); i++) {
		const char *w = llr_vocab_token(cp->types, (int32_t)i);
		if ((rc = fz_add_type(R->v, w, strlen(w), llr_vocab_count(cp->types, (int32_t)i), err)) < 0)
			return rc;
	}
	return fz_add_type(R->v, LLR_EOS, strlen(LLR_EOS), cp->sentences, err);
}

/* The types of an --extra file, with count 0. */
static int fz_vocab_extra(llr_featurizer *R, char *const *path, llr_err *err)
{
	fz_tok_in t = {.files = path, .n = 1, .o = &R->o};
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_fz_tok_next(&t, &line, &len, err)) > 0) {
		size_t pos = 0, tl;
		const char *tok;
		while (rc >= 0 && llr_token_next(line, len, &pos, &tok, &tl))
			rc = fz_add_type(R->v, tok, tl, 0, err);
		if (rc < 0)
			break;
	}
	llr_fz_tok_close(&t);
	return rc;
}

int llr_fz_vocabulary(llr_featurizer *R, llr_err *err)
{
	const llr_featurize_opts *o = &R->o;
	if (!(R->v = llr_vocab_new()))
		return fz_nomem(err);
	R->tin = (fz_tok_in){.files = o->files, .n = o->nfiles, .o = o, .prog = 1};
	if (o->progress)
		llr_fz_report(o, &(llr_fz_progress){.at = LLR_FZ_BEGIN, .paths = o->files, .npaths = o->nfiles});
	R->streaming = o->vocab_file != NULL;
	int rc = R->streaming ? fz_vocab_file(R, err) : fz_vocab_corpus(R, err);
	for (int i = 0; rc >= 0 && i < o->nextra; i++)
		rc = fz_vocab_extra(R, &o->extra[i], err);
	for (size_t i = 0; rc >= 0 && o->vocab_lex && i < llr_strmap_size(R->z.lw); i++)
		rc = fz_add_type(R->v, llr_strmap_str(R->z.lw, (int32_t)i), llr_strmap_len(R->z.lw, (int32_t)i), 0, err);
	if (rc >= 0)
		rc = fz_add_type(R->v, LLR_EOS, strlen(LLR_EOS), 0, err);
	if (rc >= 0)
		rc = fz_add_type(R->v, LLR_UNK, strlen(LLR_UNK), 0, err);
	if (rc >= 0)
		rc = llr_vocab_sort(R->v, err);
	if (rc < 0)
		return rc;
	R->V = (int32_t)llr_vocab_size(R->v);
	R->eos = llr_vocab_id(R->v, LLR_EOS, strlen(LLR_EOS));
	R->unk = llr_vocab_id(R->v, LLR_UNK, strlen(LLR_UNK));
	return LLR_OK;
}

/* --spelling with --vocab: the corpus read once more first, for its types
 * outside the vocabulary (the spelling model learns from every type of
 * the training text, the features' columns count them, and their tokens
 * are written as their signatures), its tokens outside the vocabulary
 * and its events; not when it is standard input (then the vocabulary
 * file's counts, and those tokens are <unk>). */
int llr_fz_outside(llr_featurizer *R, llr_err *err)
{
	const llr_featurize_opts *o = &R->o;
	int piped = 0;
	for (int i = 0; i < o->nfiles; i++)
		piped |= !strcmp(o->files[i], "-");
	R->out_unk = -1;
	if (!o->spelling || !R->streaming || piped)
		return LLR_OK;
	fz_tok_in t = {.files = o->files, .n = o->nfiles, .o = o};
	const char *line;
	size_t len;
	int rc;
	R->out_unk = 0;
	if (!(R->outside = llr_strmap_new()))
		return fz_nomem(err);
	while ((rc = llr_fz_tok_next(&t, &line, &len, err)) > 0) {
		size_t pos = 0, tl;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			int32_t id = llr_vocab_id(R->v, tok, tl);
			R->out_unk += id < 0 || id == R->unk;
			if (id < 0 && llr_strmap_add(R->outside, tok, tl) < 0) {
				llr_fz_tok_close(&t);
				return fz_nomem(err);
			}
			R->out_events++;
		}
		R->out_events++;
	}
	llr_fz_tok_close(&t);
	return rc;
}
