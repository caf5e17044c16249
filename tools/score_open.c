/*
 * score_open.c - score's open-vocabulary summary (see score_open.h).
 * The library scores an OOV word w open (lib/family/rnnlm/rnnlm.c); here
 * are the character count and the lines that report the scores.
 */
#include "score_open.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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

void sopen_summary(const llr_model_info *info, size_t C, double L, double L_oov, size_t W, size_t S, size_t O)
{
	size_t T = W + S;
	if (info->oov == LLR_OOV_SPREAD)
		fprintf(stderr, "%s: open vocabulary: OOV words scored as p(<unk> | K) p_spell(w) / (1 - S_V), 1 - S_V = %.6f\n",
		        cli_prog, exp(info->log_outside));
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
