/*
 * word-features MODEL WORD ... - a program that uses libllrnn only
 * through the one model interface (tests/52-model-api.bats): each WORD's
 * features from llr_model_word_features, printed as gen(1)
 * --show-features prints a token's (the word, a TAB, "NAME" or
 * "NAME=VALUE" separated by spaces).
 */
#include <stdio.h>

#include "llrnn.h"

/* Append " NAME" or " NAME=VALUE" to the llr_buf ctx. */
static int put(const char *name, size_t len, float value, void *ctx)
{
	return llr_buf_printf(ctx, value != 1.0f ? " %.*s=%g" : " %.*s", (int)len, name, (double)value) < 0 ? LLR_ENOMEM
	                                                                                                      : LLR_OK;
}

int main(int argc, char **argv)
{
	llr_model *m = NULL;
	llr_buf b = {0};
	llr_err err = {0};
	int status = 1;
	if (argc < 2)
		return fprintf(stderr, "usage: word-features MODEL [WORD ...]\n"), 2;
	if (llr_model_open(argv[1], NULL, &m, &err) != LLR_OK)
		goto out;
	for (int i = 2; i < argc; i++) {
		llr_buf_clear(&b);
		if (llr_model_word_features(m, argv[i], put, &b, &err) != LLR_OK)
			goto out;
		printf("%s\t%s\n", argv[i], b.len ? b.data + 1 : "");
	}
	status = 0;
out: /* every path frees what it opened: the sanitizer build checks leaks */
	if (status)
		fprintf(stderr, "word-features: %s\n", err.msg);
	llr_buf_free(&b);
	llr_model_close(m);
	return status;
}
