/*
 * automaton.c - featurize's automaton background (lib/featurize/fz.h):
 * --background fsa:FILE, regex:PATTERN or grammar:FILE (GBNF) compiled
 * over the vocabulary into the lexicon (lex->fsa), a factor of b next to the other
 * background, and the corpus checked against it: a sentence the
 * automaton rejects is an error naming file:line, the first rejected
 * token and the prefix before it, or with skip_rejected it is left out
 * of the ids and counted.  The corpus read whole is checked (and
 * compacted) before anything is written; with --vocab each sentence is
 * checked as it is mapped (llr_fz_accept).  Not here: the automaton
 * itself (lib/fsa/), its members (fsaio.c), its use in the output layer
 * (lib/nn/loglinear.c).
 */
#include <stdlib.h>
#include <string.h>

#include "fz.h"

int llr_fz_corpus_line(fz_corpus *c, int32_t file, int64_t line)
{
	if ((size_t)c->sentences >= c->lcap) {
		size_t cap = c->lcap ? 2 * c->lcap : 1024;
		int64_t *l = llr_reallocarray(c->line, cap, sizeof *l);
		if (!l)
			return LLR_ENOMEM;
		c->line = l;
		int32_t *f = llr_reallocarray(c->file, cap, sizeof *f);
		if (!f)
			return LLR_ENOMEM;
		c->file = f;
		c->lcap = cap;
	}
	c->line[c->sentences] = line;
	c->file[c->sentences] = file;
	return LLR_OK;
}

/* A file's name in messages. */
static const char *fz_file_name(const llr_featurize_opts *o, int32_t file)
{
	return !strcmp(o->files[file], "-") ? "<stdin>" : o->files[file];
}

/* The sentence ids[0..n) (vocabulary ids, no </s>) run through the
 * automaton: 1 accepted, 0 rejected and skipped (counted), or
 * LLR_EFORMAT naming name:line, the token and the prefix. */
static int fz_check(llr_featurizer *R, const int32_t *ids, size_t n, const char *name, int64_t line, llr_err *err)
{
	llr_err e = {0};
	int rc = llr_fsa_check(R->lex.fsa, R->lex.vocab, ids, n, &e);
	if (rc == LLR_OK)
		return 1;
	if (rc != LLR_EFORMAT) /* not a rejection: the grammar could not be followed */
		return llr_err_set(err, rc, "%s:%lld: %s", name, (long long)line, e.msg);
	if (R->o.skip_rejected) {
		R->st.rejected++;
		return 0;
	}
	return llr_err_set(err, LLR_EFORMAT, "%s:%lld: %s (--skip-rejected skips it)", name, (long long)line, e.msg);
}

/* The corpus read whole: every sentence checked, the rejected ones
 * (with skip_rejected) removed from cp->ids and its counts. */
static int fz_check_corpus(llr_featurizer *R, llr_err *err)
{
	fz_corpus *cp = &R->cp;
	size_t ntypes = llr_vocab_size(cp->types);
	int32_t *map = malloc((ntypes + 1) * sizeof *map), *sent = malloc((cp->nids + 1) * sizeof *sent);
	if (!map || !sent) {
		free(map);
		free(sent);
		return fz_nomem(err);
	}
	for (size_t i = 0; i < ntypes; i++) {
		const char *w = llr_vocab_token(cp->types, (int32_t)i);
		map[i] = llr_vocab_id(R->v, w, strlen(w));
	}
	size_t s0 = 0, out = 0;
	int64_t s = 0, kept = 0;
	int rc = LLR_OK;
	for (size_t i = 0; rc >= 0 && i < cp->nids; i++) {
		if (cp->ids[i] >= 0)
			continue;
		for (size_t k = s0; k < i; k++)
			sent[k - s0] = map[cp->ids[k]];
		rc = fz_check(R, sent, i - s0, fz_file_name(&R->o, cp->file[s]), cp->line[s], err);
		if (rc > 0) {
			memmove(cp->ids + out, cp->ids + s0, (i + 1 - s0) * sizeof *cp->ids);
			out += i + 1 - s0;
			kept++;
		} else if (rc == 0) {
			cp->tokens -= (int64_t)(i - s0);
		}
		s0 = i + 1;
		s++;
	}
	free(map);
	free(sent);
	if (rc < 0)
		return rc;
	cp->nids = out;
	cp->sentences = kept;
	if (!kept)
		return llr_err_set(err, LLR_EEMPTY, "%s: the %s rejects every sentence of the corpus", llr_fz_corpus_name(R),
		                   R->o.bg_fsa_kind == LLR_FZ_BG_GRAMMAR ? "grammar" : "automaton");
	return LLR_OK;
}

int llr_fz_accept(llr_featurizer *R, const char *line, size_t len, const char *name, int64_t lineno, llr_err *err)
{
	size_t n = llr_tokens_count(line, len), pos = 0, tl, k = 0;
	const char *tok;
	int32_t *ids = malloc(LLR_MAX(n, 1) * sizeof *ids);
	if (!ids)
		return fz_nomem(err);
	while (llr_token_next(line, len, &pos, &tok, &tl)) {
		int32_t id = llr_vocab_id(R->v, tok, tl);
		ids[k++] = id < 0 ? R->unk : id;
	}
	int rc = fz_check(R, ids, k, name, lineno, err);
	free(ids);
	return rc;
}

int llr_fz_automaton(llr_featurizer *R, llr_err *err)
{
	static const char *const prefix[] = {"fsa", "regex", "grammar"};
	const llr_featurize_opts *o = &R->o;
	const char *kind = prefix[o->bg_fsa_kind];
	llr_lexicon *lex = &R->lex;
	llr_err e = {0};
	if (o->spelling || o->source)
		return llr_err_set(err, LLR_EINVAL, "--background %s: not with %s (not implemented)", kind, o->spelling ? "--spelling" : "--source");
	if (strpbrk(o->bg_fsa, "\n\r")) /* the meta records it on one line */
		return llr_err_set(err, LLR_EINVAL, "--background %s: a newline in the %s", kind,
		                   o->bg_fsa_kind == LLR_FZ_BG_REGEX ? "pattern" : "file name");
	switch (o->bg_fsa_kind) {
	case LLR_FZ_BG_REGEX: lex->fsa = llr_fsa_regex(o->bg_fsa, lex->vocab, &e); break;
	case LLR_FZ_BG_GRAMMAR: lex->fsa = llr_fsa_grammar(o->bg_fsa, lex->vocab, &e); break;
	default: lex->fsa = llr_fsa_read(o->bg_fsa, lex->vocab, &e); break;
	}
	if (!lex->fsa) {
		if (o->bg_fsa_kind == LLR_FZ_BG_REGEX)
			return llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "regex '%s': %s", o->bg_fsa, e.msg);
		return llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "%s", e.msg);
	}
	if (o->note) /* a grammar's words that no token can be */
		llr_fsa_on_notice(lex->fsa, &(llr_notice){o->note, o->ctx});
	if (llr_meta_setf(lex->meta, "background_fsa", "%s:%s", kind, o->bg_fsa) < 0)
		return fz_nomem(err);
	if (R->streaming || o->dump)
		return LLR_OK;
	int rc = fz_check_corpus(R, err);
	if (rc < 0)
		return rc;
	llr_meta_setf(lex->meta, "tokens", "%lld", (long long)R->cp.tokens);
	llr_meta_setf(lex->meta, "sentences", "%lld", (long long)R->cp.sentences);
	return LLR_OK;
}
