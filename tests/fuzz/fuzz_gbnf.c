/*
 * fuzz_gbnf.c - the GBNF grammar reader (lib/fsa/gbnf.c) and its
 * recogniser (gbnfrec.c): the input as a grammar file; a grammar it
 * accepts then recognises a few strings cut from the input itself and
 * runs over a small vocabulary (the allowed tokens of the start, a few
 * steps, the distance to acceptance).
 */
#include "fuzz.h"

#include "fsa/gbnf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	llr_err e = {0};
	llr_gbnf *g = llr_gbnf_read(fuzz_file(data, size), &e);
	if (!g)
		return 0;
	const char *s = (const char *)data;
	for (size_t n = 0; n <= size && n < 64; n += 7)
		llr_gbnf_match(g, s, n);
	static const char *toks[] = {"</s>", "<unk>", "a", "b", "ab", "1", "(", ")", " ", "\xc3\xa9", "x y"};
	llr_strmap *v = llr_strmap_new();
	for (size_t i = 0; v && i < sizeof toks / sizeof *toks; i++)
		llr_strmap_add(v, toks[i], strlen(toks[i]));
	llr_gbnf_tok *t = v ? llr_gbnf_tok_new(g, v, &e) : NULL;
	int32_t q = 0;
	for (int step = 0; t && q >= 0 && step < 6; step++) {
		const int32_t *lab, *dst;
		int32_t m = llr_gbnf_tok_arcs(t, q, &lab, &dst, &e);
		llr_gbnf_tok_dist(t, q, 8, &e);
		llr_gbnf_tok_final(t, q);
		q = m > 0 ? dst[(size_t)(step * 7 + size) % (size_t)m] : -1;
	}
	llr_gbnf_tok_free(t);
	llr_strmap_free(v);
	llr_gbnf_free(g);
	return 0;
}
