/*
 * fuzz_conllu.c - the CoNLL-U reader (lib/text/conllu.c) over the line
 * reader: every non-comment, non-blank line parsed, its FEATS split.
 */
#include "fuzz.h"

static int tag(const char *name, size_t len, float value, void *ctx)
{
	(void)name, (void)value;
	*(size_t *)ctx += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llr_err e = {0};
	llr_lines *l = llr_lines_open(fuzz_file(data, size), LLR_LINES_REPLACE_INVALID, &e);
	if (!l)
		return 0;
	const char *line;
	size_t len, sum = 0;
	while (llr_lines_next(l, &line, &len, &e) > 0) {
		if (!len || line[0] == '#')
			continue;
		llr_conllu_word w;
		if (llr_conllu_parse((char *)line, len, &w, &e) == LLR_OK && w.kind == 0)
			llr_conllu_feats(w.feats, tag, &sum, &e);
	}
	llr_lines_close(l);
	return 0;
}
