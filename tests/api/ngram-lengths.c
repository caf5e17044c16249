/*
 * ngram-lengths MODEL - a program that uses libllrnn only through the one
 * model interface (tests/52-model-api.bats): each line of stdin, a
 * tokenised sentence, scored by llr_model_score_lengths and printed as
 * its tokens, </s> last, each "word=LENGTH:LOGP" (the n-gram length, ln p
 * to 4 places), separated by TABs.
 */
#include <stdio.h>
#include <string.h>

#include "llrnn.h"

int main(int argc, char **argv)
{
	llr_model *m;
	llr_err err = {0};
	if (argc != 2 || llr_model_open(argv[1], NULL, &m, &err) != LLR_OK)
		return fprintf(stderr, "ngram-lengths: %s\n", argc != 2 ? "usage: ngram-lengths MODEL" : err.msg), 1;
	char line[4096];
	while (fgets(line, sizeof line, stdin)) {
		const char *w[256];
		size_t n = 0;
		for (char *t = strtok(line, " \n"); t && n < 256; t = strtok(NULL, " \n"))
			w[n++] = t;
		double lp[257];
		unsigned char oov[257];
		int32_t len[257];
		llr_sentence s = {w, n};
		if (llr_model_score_lengths(m, &s, 1, lp, oov, len, &err) != LLR_OK) {
			fprintf(stderr, "ngram-lengths: %s\n", err.msg);
			llr_model_close(m);
			return 1;
		}
		for (size_t t = 0; t <= n; t++)
			printf("%s%s=%d:%.4f", t ? "\t" : "", t < n ? w[t] : "</s>", (int)len[t], lp[t]);
		printf("\n");
	}
	llr_model_close(m);
	return 0;
}
