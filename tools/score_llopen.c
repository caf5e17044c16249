/*
 * score_llopen.c - score's open-vocabulary mode for the LL-RNN (see
 * score_llopen.h): the targets outside V' (the vocabulary less <unk>) of
 * a batch become rows of their own, llr_lexicon_any_row's, with the open
 * background's ln b(w); the library scores them against Z(K) with the
 * signature masses (llr_open_new).
 */
#include "score_llopen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int sllopen_init(sllopen *s, slm *m, long long norm_samples, unsigned long long seed)
{
	memset(s, 0, sizeof *s);
	if (!m->loglinear || !m->lex->spell || !llr_lexicon_sigs(m->lex))
		return 0;
	llr_err e = {0};
	if (!(s->op = llr_open_new(m->model, &e)))
		cli_die("open vocabulary: %s", e.msg);
	if (norm_samples > 0 && llr_open_norm_samples(s->op, norm_samples, seed, &e) < 0)
		cli_die("--check-norm: %s", e.msg);
	s->norm_samples = norm_samples;
	s->lex = m->lex;
	s->V = m->V;
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

int32_t sllopen_target(sllopen *s, const char *w, size_t len, int *oov)
{
	int32_t id = llr_open_word(s->op, w, len);
	*oov = id < 0;
	if (id >= 0)
		return id;
	if (!s->rows && !(s->rows = llr_csr_builder_new((int32_t)llr_strmap_size(s->lex->features))))
		cli_oom();
	llr_err e = {0};
	size_t n = anyrow_fill(&s->r, s->lex, w, len, 0); /* before reading s->r, which it may move */
	if (llr_csr_builder_row(s->rows, s->r.c, s->r.v, n, &e) < 0)
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
	const char *n = llr_meta_get(m, "sig.samples"), *ex = llr_meta_get(m, "sig.exact");
	if (ex)
		fprintf(stderr, "%s: open vocabulary (LL-RNN): lambda %.6g, %zu signatures, every string outside the vocabulary summed exactly; a word outside the vocabulary scores lambda p_spell(w) e^{a.phi(w)} / Z\n",
		        cli_prog, s->lex->spell_lambda, llr_lexicon_sigs(s->lex));
	else
		fprintf(stderr, "%s: open vocabulary (LL-RNN): lambda %.6g, %zu signatures from %s draws; a word outside the vocabulary scores lambda p_spell(w) e^{a.phi(w)} / Z\n",
		        cli_prog, s->lex->spell_lambda, llr_lexicon_sigs(s->lex), n ? n : "?");
}

/* The norm check of a model with exact signature masses: the sum is
 * exact; the draws test the rows it assumed. */
static void exact_norm_summary(const sllopen *s, const llr_norm_stat *t, double tol, int64_t checked)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	llr_open_norm_exact(s->op, &listed, &bad, &first);
	fprintf(stderr, "%s: norm check: every string outside the vocabulary summed exactly (the spelling model's forward pass, %d strings listed apart), recomputed from the model's spelling model and features\n",
	        cli_prog, (int)listed);
	fprintf(stderr, "%s: norm check: the rows of %lld strings drawn outside the vocabulary and the lists: %lld differ from their class's%s%s%s\n",
	        cli_prog, (long long)checked, (long long)bad, bad ? " (the first: '" : "", bad ? first : "", bad ? "')" : "");
	if (bad)
		fprintf(stderr, "%s: norm check: the exact sum does not hold for these strings\n", cli_prog);
	else if (t->lo > tol)
		fprintf(stderr, "%s: norm check: beyond %g\n", cli_prog, tol);
	else
		fprintf(stderr, "%s: norm check: within %g at every position\n", cli_prog, tol);
}

int sllopen_norm_drawn(const sllopen *s)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	return s->op && s->norm_samples > 0 && llr_open_norm_exact(s->op, &listed, &bad, &first) < 0;
}

int sllopen_norm_failed(const sllopen *s)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	return s->op && s->norm_samples > 0 && llr_open_norm_exact(s->op, &listed, &bad, &first) >= 0 && bad > 0;
}

void sllopen_norm_summary(const sllopen *s, const llr_norm_stat *t, double tol)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	int64_t checked = llr_open_norm_exact(s->op, &listed, &bad, &first);
	if (checked >= 0) {
		exact_norm_summary(s, t, tol, checked);
		return;
	}
	const char *n = llr_meta_get(s->lex->meta, "sig.samples");
	double sig_n = n ? strtod(n, NULL) : 0;
	int32_t shorts, digits = llr_open_norm_digits(s->op, &shorts);
	if (digits > 0)
		fprintf(stderr, "%s: norm check: the digit strings outside the vocabulary summed exactly (%d groups), the draws from the rest\n",
		        cli_prog, (int)digits);
	if (shorts > 0)
		fprintf(stderr, "%s: norm check: the strings of at most 3 characters outside the vocabulary summed exactly (%d), the draws from the rest\n",
		        cli_prog, (int)shorts);
	int32_t dict = llr_open_norm_dict(s->op);
	if (dict > 0)
		fprintf(stderr, "%s: norm check: the hunspell dictionary's word forms outside the vocabulary summed exactly (%d), the draws from the rest\n",
		        cli_prog, (int)dict);
	fprintf(stderr, "%s: norm check: standard error %.2g there (%lld draws outside the vocabulary); the signature masses' own there %.2g (%s draws)\n",
	        cli_prog, t->se, s->norm_samples, sig_n > 0 ? t->se * sqrt((double)s->norm_samples / sig_n) : NAN, n ? n : "?");
	if (t->lo > tol)
		fprintf(stderr, "%s: norm check: beyond %g by more than %g standard errors\n", cli_prog, tol, LLR_NORM_Z);
	else if (t->hi <= tol)
		fprintf(stderr, "%s: norm check: within %g at every position: |sum p - 1| + %g standard errors at most %g\n", cli_prog, tol, LLR_NORM_Z, tol);
	else
		fprintf(stderr, "%s: norm check: not resolved against %g: largest |sum p - 1| -/+ %g standard errors %.3g / %.3g (more draws: --norm-samples)\n",
		        cli_prog, tol, LLR_NORM_Z, t->lo, t->hi);
}

void sllopen_free(sllopen *s)
{
	sllopen_reset(s);
	llr_open_free(s->op);
	free(s->xlogb);
	anyrow_free(&s->r);
	memset(s, 0, sizeof *s);
}
