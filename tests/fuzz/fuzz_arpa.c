/*
 * fuzz_arpa.c - the n-gram model reader (lib/ngram/arpa.c): ARPA text,
 * compressed or not, or an "ngram" tensor archive (llr_ngram_load tells
 * them apart), then a lookup of the first words.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llr_err e = {0};
	llr_ngram *m = NULL;
	if (llr_ngram_load(fuzz_file(data, size), &m, &e) == LLR_OK) {
		int32_t w[3] = {0, 1, 2};
		for (int n = 1; n <= 3; n++)
			llr_ngram_find(m, w, n);
		llr_ngram_free(m);
	}
	return 0;
}
