/*
 * score_llopen.c - score's summary lines for an LL-RNN scored open (see
 * score_llopen.h); the scoring is the library's (lib/family/rnnlm/).
 */
#include "score_llopen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void sllopen_summary(const llr_model_info *info, const llr_meta *m)
{
	const char *n = llr_meta_get(m, "sig.samples"), *ex = llr_meta_get(m, "sig.exact");
	if (ex)
		fprintf(stderr, "%s: open vocabulary (LL-RNN): lambda %.6g, %zu signatures, every string outside the vocabulary summed exactly; a word outside the vocabulary scores lambda p_spell(w) e^{a.phi(w)} / Z\n",
		        cli_prog, info->spell_lambda, info->sigs);
	else
		fprintf(stderr, "%s: open vocabulary (LL-RNN): lambda %.6g, %zu signatures from %s draws; a word outside the vocabulary scores lambda p_spell(w) e^{a.phi(w)} / Z\n",
		        cli_prog, info->spell_lambda, info->sigs, n ? n : "?");
}

/* The norm check of a model with exact signature masses: the sum is
 * exact; the draws test the rows it assumed. */
static void exact_norm_summary(const llr_open *op, const llr_norm_stat *t, double tol, int64_t checked)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	llr_open_norm_exact(op, &listed, &bad, &first);
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

int sllopen_norm_drawn(const llr_open *op, long long draws)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	return op && draws > 0 && llr_open_norm_exact(op, &listed, &bad, &first) < 0;
}

int sllopen_norm_failed(const llr_open *op, long long draws)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	return op && draws > 0 && llr_open_norm_exact(op, &listed, &bad, &first) >= 0 && bad > 0;
}

void sllopen_norm_summary(const llr_open *op, const llr_meta *m, long long draws, const llr_norm_stat *t, double tol)
{
	int32_t listed;
	int64_t bad;
	const char *first;
	int64_t checked = llr_open_norm_exact(op, &listed, &bad, &first);
	if (checked >= 0) {
		exact_norm_summary(op, t, tol, checked);
		return;
	}
	const char *n = llr_meta_get(m, "sig.samples");
	double sig_n = n ? strtod(n, NULL) : 0;
	int32_t shorts, digits = llr_open_norm_digits(op, &shorts);
	if (digits > 0)
		fprintf(stderr, "%s: norm check: the digit strings outside the vocabulary summed exactly (%d groups), the draws from the rest\n",
		        cli_prog, (int)digits);
	if (shorts > 0)
		fprintf(stderr, "%s: norm check: the strings of at most 3 characters outside the vocabulary summed exactly (%d), the draws from the rest\n",
		        cli_prog, (int)shorts);
	int32_t dict = llr_open_norm_dict(op);
	if (dict > 0)
		fprintf(stderr, "%s: norm check: the hunspell dictionary's word forms outside the vocabulary summed exactly (%d), the draws from the rest\n",
		        cli_prog, (int)dict);
	fprintf(stderr, "%s: norm check: standard error %.2g there (%lld draws outside the vocabulary); the signature masses' own there %.2g (%s draws)\n",
	        cli_prog, t->se, draws, sig_n > 0 ? t->se * sqrt((double)draws / sig_n) : NAN, n ? n : "?");
	if (t->lo > tol)
		fprintf(stderr, "%s: norm check: beyond %g by more than %g standard errors\n", cli_prog, tol, LLR_NORM_Z);
	else if (t->hi <= tol)
		fprintf(stderr, "%s: norm check: within %g at every position: |sum p - 1| + %g standard errors at most %g\n", cli_prog, tol, LLR_NORM_Z, tol);
	else
		fprintf(stderr, "%s: norm check: not resolved against %g: largest |sum p - 1| -/+ %g standard errors %.3g / %.3g (more draws: --norm-samples)\n",
		        cli_prog, tol, LLR_NORM_Z, t->lo, t->hi);
}
