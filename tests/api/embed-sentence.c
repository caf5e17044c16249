/*
 * embed-sentence MODEL - a program that uses libllrnn only through the
 * one model interface (tests/53-model-embed.bats): each line of stdin,
 * a tokenised sentence, embedded by llr_model_embed and printed as
 * score(1) --embed prints it (the vector's components, tab-separated),
 * one sentence at a time where score takes 64.
 * The model's family, vector size and kind of vectors go to stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llrnn.h"

int main(int argc, char **argv)
{
	llr_model *m = NULL;
	float *vec = NULL;
	int status = 1;
	llr_model_info info;
	llr_err err = {0};
	llr_blas_set_fixed_order(1); /* as score does: a vector's bits do not depend on its batch */
	if (argc != 2)
		return fprintf(stderr, "usage: embed-sentence MODEL\n"), 2;
	if (llr_model_open(argv[1], NULL, &m, &err) != LLR_OK || llr_model_embed(m, NULL, 0, NULL, NULL, &err) != LLR_OK)
		goto out;
	llr_model_describe(m, &info);
	fprintf(stderr, "%s %d %s\n", info.family, info.dim, info.embedding);
	vec = malloc((size_t)info.dim * sizeof *vec);
	char line[4096];
	while (vec && fgets(line, sizeof line, stdin)) {
		const char *w[256];
		size_t n = 0;
		for (char *t = strtok(line, " \t\n"); t && n < 256; t = strtok(NULL, " \t\n"))
			w[n++] = t;
		llr_sentence s = {w, n};
		if (llr_model_embed(m, &s, 1, vec, NULL, &err) != LLR_OK)
			goto out;
		for (int j = 0; j < info.dim; j++)
			printf(j ? "\t%.6g" : "%.6g", (double)vec[j]);
		printf("\n");
	}
	status = 0;
out: /* every path frees what it opened: the sanitizer build checks leaks */
	if (status)
		fprintf(stderr, "embed-sentence: %s\n", err.msg);
	free(vec);
	llr_model_close(m);
	return status;
}
