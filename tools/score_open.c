/*
 * score_open.c - score's open-vocabulary mode (score(1), "Open
 * vocabulary"): with the spelling model a model carries (featurize
 * --spelling), an OOV word w is not <unk> but itself, with
 *     p(w | K) = p(<unk> | K) p_spell(w) / (1 - S_V)
 * (llr_openbg_unseen_logp): the model's <unk> mass spread over the
 * strings outside the vocabulary by their spelling.  For a softmax RNN
 * this is the softmax-plus-spelling baseline of issue 14.  The
 * distribution over all strings sums to one whenever the model's does
 * over its vocabulary.  Here: the mode's choice, the OOV term, the
 * character count and the summary; score.c adds the term to the scores.
 */
#include "score_open.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void sopen_init(sopen *o, int mode, const llr_lexicon *lex, const char *path)
{
	memset(o, 0, sizeof *o);
	if (mode == SOPEN_OFF)
		return;
	if (!lex || !lex->spell) {
		if (mode == SOPEN_ON)
			cli_die("%s: --open: the model has no spelling model (%s)", path,
			        lex ? "featurize --spelling N makes one" : "an n-gram model");
		return;
	}
	llr_err e = {0};
	if (!(o->g = llr_openbg_new(lex, &e)))
		cli_die("%s: %s", path, e.msg);
}

void sopen_free(sopen *o)
{
	llr_openbg_free(o->g);
	o->g = NULL;
}

double sopen_oov(const sopen *o, const char *w, size_t len)
{
	return llr_openbg_unseen_logp(o->g, w, len);
}

void sopen_count(sopen *o, const char *text, const size_t *tok, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *w = text + tok[i];
		size_t len = strlen(w);
		for (size_t j = 0; j < len; o->chars++) {
			int32_t cp;
			int k = llr_utf8_decode(w + j, len - j, &cp);
			j += k > 0 ? (size_t)k : 1;
		}
		o->chars++;
	}
	o->chars += n == 0; /* the newline of an empty line */
}

void sopen_summary(const sopen *o, int spread_unk, double L, double L_oov, size_t W, size_t S, size_t O)
{
	size_t T = W + S;
	if (spread_unk)
		fprintf(stderr, "%s: open vocabulary: OOV words scored as p(<unk> | K) p_spell(w) / (1 - S_V), 1 - S_V = %.6f\n",
		        cli_prog, exp(llr_openbg_log_outside(o->g)));
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
	if (o->chars)
		fprintf(stderr, "%s: bits per character: %.4f over %zu characters (code points of the words + 1 a word)\n",
		        cli_prog, -L / log(2.0) / (double)o->chars, o->chars);
	else
		fprintf(stderr, "%s: bits per character: n/a (no characters)\n", cli_prog);
}
