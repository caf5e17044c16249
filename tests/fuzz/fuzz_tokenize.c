/*
 * fuzz_tokenize.c - the tokenizer (lib/text/tokenize.c) and the token
 * splitter (lib/text/tokens.c): the input's first byte picks the options
 * (lowercase, NFKC, language, character mode, sentence splitting), the
 * rest is the text, valid UTF-8 or not.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned o = data[0];
	static const char *langs[] = {NULL, "en", "fr", NULL};
	llr_tok_opts opts = {.lower = o & 1, .nfkc = (o >> 1) & 1, .lang = langs[(o >> 2) & 3], .chars = (o >> 4) & 1};
	llr_err e = {0};
	llr_tokenizer *t = llr_tokenizer_new(&opts, &e);
	if (!t)
		abort();
	const char *text = (const char *)data + 1;
	size_t n = size - 1;
	llr_buf out = {0};
	if (llr_tokenize(t, text, n, (o >> 5) & 1, &out, &e) == LLR_OK && out.len) {
		size_t pos = 0, tl, count = 0;
		const char *tok;
		while (llr_token_next(out.data, out.len, &pos, &tok, &tl))
			count++;
		if (count != llr_tokens_count(out.data, out.len))
			abort();
		llr_tokens_check(out.data, out.len, &e);
	}
	llr_buf_clear(&out);
	llr_normalize(text, n, (o >> 1) & 1, o & 1, &out, &e);
	llr_buf_free(&out);
	llr_tokenizer_free(t);
	return 0;
}
