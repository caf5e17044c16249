/*
 * score-sentence [--computation] MODEL - a program that uses libllrnn
 * only through the one model interface (tests/52-model-api.bats): each
 * line of stdin, a tokenised sentence, scored by llr_model_score and
 * printed as score(1) --per-token prints it from its third field on
 * (OOVs, then word=logp); with --computation, by
 * llr_model_score_computation and printed as score --show-computation
 * prints it from its third field on (OOVs, then the token read=m_t).
 * The model's kind, family, vocabulary size and OOV mode go to stderr.
 */
#include <stdio.h>
#include <string.h>

#include "llrnn.h"

int main(int argc, char **argv)
{
	llr_model *m;
	llr_model_info info;
	llr_err err = {0};
	int comp = argc == 3 && !strcmp(argv[1], "--computation");
	if (argc != 2 + comp || llr_model_open(argv[1 + comp], NULL, &m, &err) != LLR_OK)
		return fprintf(stderr, "score-sentence: %s\n", argc != 2 + comp ? "usage: score-sentence [--computation] MODEL" : err.msg), 1;
	llr_model_describe(m, &info);
	fprintf(stderr, "%s %s %lld %d\n", info.kind, info.family, (long long)info.vocab, info.oov);
	char line[4096];
	while (fgets(line, sizeof line, stdin)) {
		const char *w[256];
		size_t n = 0, noov = 0;
		for (char *t = strtok(line, " \n"); t && n < 256; t = strtok(NULL, " \n"))
			w[n++] = t;
		double lp[257], mt[257];
		unsigned char oov[257];
		llr_sentence s = {w, n};
		int rc = comp ? llr_model_score_computation(m, &s, 1, lp, oov, mt, NULL, &err) : llr_model_score(m, &s, 1, lp, oov, NULL, &err);
		if (rc != LLR_OK)
			return fprintf(stderr, "score-sentence: %s\n", err.msg), 1;
		for (size_t t = 0; t <= n; t++)
			noov += oov[t];
		printf("%zu", noov);
		for (size_t t = 0; t <= n; t++)
			if (comp)
				printf("\t%s=%.4f", t ? w[t - 1] : "<s>", mt[t]);
			else
				printf("\t%s=%.4f", t < n ? w[t] : "</s>", lp[t]);
		printf("\n");
	}
	llr_model_close(m);
	return 0;
}
