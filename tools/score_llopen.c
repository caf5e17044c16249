/*
 * score_llopen.c - score's open-vocabulary mode for the LL-RNN (see
 * score_llopen.h): the targets outside V' (the vocabulary less <unk>) of
 * a batch become rows of their own, llr_lexicon_any_row's, with the open
 * background's ln b(w); the library scores them against Z(K) with the
 * signature masses (llr_open_new).
 */
#include "score_llopen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define NORM_SEED 20161107 /* the norm check's draws: fixed, so a check repeats */

int sllopen_init(sllopen *s, slm *m, int check_norm, long norm_samples)
{
	memset(s, 0, sizeof *s);
	if (!m->loglinear || !m->lex->spell || !llr_lexicon_sigs(m->lex))
		return 0;
	llr_err e = {0};
	if (!(s->op = llr_open_new(m->model, &e)))
		cli_die("open vocabulary: %s", e.msg);
	if (check_norm && llr_open_norm_samples(s->op, norm_samples, NORM_SEED, &e) < 0)
		cli_die("--check-norm: %s", e.msg);
	s->lex = m->lex;
	s->V = m->V;
	s->cap = 256;
	s->c = ereallocarray(NULL, s->cap, sizeof *s->c);
	s->v = ereallocarray(NULL, s->cap, sizeof *s->v);
	return 1;
}

void sllopen_reset(sllopen *s)
{
	llr_csr_builder_free(s->rows);
	llr_csr_free(s->xphi);
	s->rows = NULL;
	s->xphi = NULL;
	s->nx = 0;
}

/* Row of w into the scratch, growing it; its length. */
static size_t row_of(sllopen *s, const char *w, size_t len)
{
	for (;;) {
		llr_err e = {0};
		size_t n;
		int rc = llr_lexicon_any_row(s->lex, w, len, 0, s->c, s->v, s->cap, &n, &e);
		if (rc == LLR_OK)
			return n;
		if (rc != LLR_ERANGE)
			cli_die_err(&e);
		s->cap *= 2;
		s->c = ereallocarray(s->c, s->cap, sizeof *s->c);
		s->v = ereallocarray(s->v, s->cap, sizeof *s->v);
	}
}

int32_t sllopen_target(sllopen *s, const char *w, size_t len, int *oov)
{
	int32_t id = llr_open_word(s->op, w, len);
	*oov = id < 0;
	if (id >= 0)
		return id;
	if (!s->rows && !(s->rows = llr_csr_builder_new((int32_t)llr_strmap_size(s->lex->features))))
		cli_oom();
	llr_err e = {0};
	if (llr_csr_builder_row(s->rows, s->c, s->v, row_of(s, w, len), &e) < 0)
		cli_die_err(&e);
	if (s->nx == s->xcap) {
		s->xcap = s->xcap ? 2 * s->xcap : 64;
		s->xlogb = ereallocarray(s->xlogb, s->xcap, sizeof *s->xlogb);
	}
	s->xlogb[s->nx] = (float)llr_open_logb(s->op, w, len);
	return s->V + (int32_t)s->nx++;
}

void sllopen_finish(sllopen *s, const llr_csr **xphi, const float **xlogb)
{
	*xphi = NULL;
	*xlogb = NULL;
	if (!s->rows)
		return;
	llr_err e = {0};
	if (!(s->xphi = llr_csr_builder_finish(s->rows, &e)))
		cli_die_err(&e);
	s->rows = NULL;
	*xphi = s->xphi;
	*xlogb = s->xlogb;
}

void sllopen_summary(const sllopen *s)
{
	const llr_meta *m = s->lex->meta;
	const char *n = llr_meta_get(m, "sig.samples");
	fprintf(stderr, "%s: open vocabulary (LL-RNN): lambda %.6g, %zu signatures from %s draws; a word outside the vocabulary scores lambda p_spell(w) e^{a.phi(w)} / Z\n",
	        cli_prog, s->lex->spell_lambda, llr_lexicon_sigs(s->lex), n ? n : "?");
}

void sllopen_free(sllopen *s)
{
	sllopen_reset(s);
	llr_open_free(s->op);
	free(s->xlogb);
	free(s->c);
	free(s->v);
	memset(s, 0, sizeof *s);
}
