/*
 * tag-sentences MODEL - a program that uses libllrnn only through the one
 * model interface (tests/56-hmm.bats): up to 64 lines of stdin, each a
 * tokenised sentence, tagged by one llr_model_tag call and printed as
 * score(1) --tags prints them; then the unknown words' count.  A model
 * that cannot tag: its message and status 1.
 */
#include <stdio.h>
#include <string.h>

#include "llrnn.h"

int main(int argc, char **argv)
{
	llr_model *m;
	llr_err err = {0};
	if (argc != 2 || llr_model_open(argv[1], NULL, &m, &err) != LLR_OK)
		return fprintf(stderr, "tag-sentences: %s\n", argc != 2 ? "usage: tag-sentences MODEL" : err.msg), 1;
	if (llr_model_tag(m, NULL, 0, NULL, NULL, NULL, &err) != LLR_OK)
		return fprintf(stderr, "tag-sentences: %s (%d)\n", err.msg, err.code), llr_model_close(m), 1;
	static char text[64][4096];
	static const char *w[64 * 256], *tags[64 * 256];
	static unsigned char unknown[64 * 256];
	llr_sentence s[64];
	size_t B = 0, at = 0, unk = 0;
	while (B < 64 && fgets(text[B], sizeof text[B], stdin)) {
		s[B] = (llr_sentence){w + at, 0};
		for (char *t = strtok(text[B], " \n"); t && s[B].n < 256; t = strtok(NULL, " \n"))
			w[at + s[B].n++] = t;
		at += s[B++].n;
	}
	llr_tag_opts o = {.beam = 0};
	if (llr_model_tag(m, s, B, &o, tags, unknown, &err) != LLR_OK)
		return fprintf(stderr, "tag-sentences: %s\n", err.msg), llr_model_close(m), 1;
	for (size_t b = 0, k = 0; b < B; b++) {
		for (size_t t = 0; t < s[b].n; t++, k++) {
			printf("%s%s/%s", t ? " " : "", s[b].words[t], tags[k]);
			unk += unknown[k];
		}
		printf("\n");
	}
	fprintf(stderr, "%zu unknown\n", unk);
	llr_model_close(m);
	return 0;
}
