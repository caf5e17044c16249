/*
 * open.c - score's open-vocabulary summary (see open.h).  The library
 * scores an OOV word open (lib/family/rnnlm/) and describes how it did
 * (llr_model_info); here are the character count and the lines that
 * report the scores and the norm check.
 */
#include "open.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"

size_t sopen_count(const char *text, const size_t *tok, size_t n)
{
	size_t chars = 0;
	for (size_t i = 0; i < n; i++) {
		const char *w = text + tok[i];
		size_t len = strlen(w);
		for (size_t j = 0; j < len; chars++) {
			int32_t cp;
			int k = llr_utf8_decode(w + j, len - j, &cp);
			j += k > 0 ? (size_t)k : 1;
		}
		chars++;
	}
	return chars + (n == 0); /* the newline of an empty line */
}

/* The line on how OOV words were scored. */
static void oov_line(const llr_model_info *info)
{
	const char *n = info->sig_samples;
	if (info->oov == LLR_OOV_FEATURES && info->sigs_exact)
		fprintf(stderr, "%s: open vocabulary (LL-RNN): lambda %.6g, %zu signatures, every string outside the vocabulary summed exactly; a word outside the vocabulary scores lambda p_spell(w) e^{a.phi(w)} / Z\n",
		        cli_prog, info->spell_lambda, info->sigs);
	else if (info->oov == LLR_OOV_FEATURES)
		fprintf(stderr, "%s: open vocabulary (LL-RNN): lambda %.6g, %zu signatures from %s draws; a word outside the vocabulary scores lambda p_spell(w) e^{a.phi(w)} / Z\n",
		        cli_prog, info->spell_lambda, info->sigs, n ? n : "?");
	else if (info->oov == LLR_OOV_SPREAD)
		fprintf(stderr, "%s: open vocabulary: OOV words scored as p(<unk> | K) p_spell(w) / (1 - S_V), 1 - S_V = %.6f\n",
		        cli_prog, exp(info->log_outside));
}

void sopen_summary(const llr_model_info *info, size_t C, double L, double L_oov, size_t W, size_t S, size_t O)
{
	size_t T = W + S;
	oov_line(info);
	if (T == 0) {
		fprintf(stderr, "%s: nats per token: n/a (no tokens)\n", cli_prog);
		return;
	}
	fprintf(stderr, "%s: nats per token: %.4f over %zu tokens (words + </s>)\n", cli_prog, -L / (double)T, T);
	if (O)
		fprintf(stderr, "%s: OOV tokens: %zu, %.2f%% of the tokens, %.2f%% of the nats, %.4f nats per OOV token\n",
		        cli_prog, O, 100.0 * (double)O / (double)T, L < 0 ? 100.0 * L_oov / L : 0.0, -L_oov / (double)O);
	else
		fprintf(stderr, "%s: OOV tokens: 0\n", cli_prog);
	if (C)
		fprintf(stderr, "%s: bits per character: %.4f over %zu characters (code points of the words + 1 a word)\n",
		        cli_prog, -L / log(2.0) / (double)C, C);
	else
		fprintf(stderr, "%s: bits per character: n/a (no characters)\n", cli_prog);
}

int sopen_norm_drawn(const llr_model_info *info)
{
	return info->oov == LLR_OOV_FEATURES && info->norm_draws > 0 && info->norm_checked < 0;
}

int sopen_norm_failed(const llr_model_info *info)
{
	return info->oov == LLR_OOV_FEATURES && info->norm_draws > 0 && info->norm_checked >= 0 && info->norm_mismatched > 0;
}

/* The norm check of a model with exact signature masses: the sum is
 * exact; the draws test the rows it assumed. */
static void exact_norm_summary(const llr_model_info *info, const llr_norm_stat *t, double tol)
{
	int64_t bad = info->norm_mismatched;
	fprintf(stderr, "%s: norm check: every string outside the vocabulary summed exactly (the spelling model's forward pass, %d strings listed apart), recomputed from the model's spelling model and features\n",
	        cli_prog, (int)info->norm_listed);
	fprintf(stderr, "%s: norm check: the rows of %lld strings drawn outside the vocabulary and the lists: %lld differ from their class's%s%s%s\n",
	        cli_prog, (long long)info->norm_checked, (long long)bad, bad ? " (the first: '" : "", bad ? info->norm_first : "", bad ? "')" : "");
	if (bad)
		fprintf(stderr, "%s: norm check: the exact sum does not hold for these strings\n", cli_prog);
	else if (t->lo > tol)
		fprintf(stderr, "%s: norm check: beyond %g\n", cli_prog, tol);
	else
		fprintf(stderr, "%s: norm check: within %g at every position\n", cli_prog, tol);
}

/* The strata the norm check summed exactly beside its draws. */
static void strata_lines(const llr_model_info *info)
{
	if (info->norm_digits > 0)
		fprintf(stderr, "%s: norm check: the digit strings outside the vocabulary summed exactly (%d groups), the draws from the rest\n",
		        cli_prog, (int)info->norm_digits);
	if (info->norm_shorts > 0)
		fprintf(stderr, "%s: norm check: the strings of at most 3 characters outside the vocabulary summed exactly (%d), the draws from the rest\n",
		        cli_prog, (int)info->norm_shorts);
	if (info->norm_dict > 0)
		fprintf(stderr, "%s: norm check: the hunspell dictionary's word forms outside the vocabulary summed exactly (%d), the draws from the rest\n",
		        cli_prog, (int)info->norm_dict);
}

void sopen_norm_summary(const llr_model_info *info, const llr_norm_stat *t, double tol)
{
	if (info->norm_checked >= 0) {
		exact_norm_summary(info, t, tol);
		return;
	}
	const char *n = info->sig_samples;
	double sig_n = n ? strtod(n, NULL) : 0;
	long long draws = info->norm_draws;
	strata_lines(info);
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
