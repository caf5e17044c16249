/*
 * gen-sentence MODEL SEED N [WORD ...] - a program that uses libllrnn
 * only through the one model interface (tests/52-model-api.bats): N
 * sentences sampled after the prefix WORD ... with llr_gen_start and
 * llr_gen_sample, from a generator seeded with SEED, printed as gen(1)
 * -s SEED -n N -p 'WORD ...' --logprob prints them (the prefix, the
 * words, a TAB and the sentence's log-probability).
 */
#include <stdio.h>
#include <stdlib.h>

#include "llrnn.h"

int main(int argc, char **argv)
{
	llr_model *m = NULL;
	llr_gen *g = NULL;
	int status = 1;
	llr_gen_opts o;
	llr_err err = {0};
	llr_rng rng;
	if (argc < 4)
		return fprintf(stderr, "usage: gen-sentence MODEL SEED N [WORD ...]\n"), 2;
	llr_gen_opts_init(&o);
	if (llr_model_open(argv[1], NULL, &m, &err) != LLR_OK || llr_gen_new(m, &o, &g, &err) != LLR_OK)
		goto out;
	llr_rng_seed(&rng, strtoull(argv[2], NULL, 10));
	llr_sentence prefix = {(const char *const *)argv + 4, (size_t)argc - 4};
	if (llr_gen_start(g, &prefix, &err) != LLR_OK)
		goto out;
	for (long left = atol(argv[3]); left > 0; left -= LLR_GEN_BATCH) {
		size_t n = left < LLR_GEN_BATCH ? (size_t)left : LLR_GEN_BATCH;
		if (llr_gen_sample(g, &rng, n, &err) != LLR_OK)
			goto out;
		for (size_t i = 0; i < n; i++) {
			llr_gen_result r;
			llr_gen_result_get(g, i, &r);
			for (size_t k = 0; k < prefix.n + r.n; k++)
				printf("%s%s", k ? " " : "", k < prefix.n ? prefix.words[k] : llr_gen_word(g, i, k - prefix.n));
			printf("\t%.4f\n", r.logp_total);
		}
	}
	status = 0;
out: /* every path frees what it opened: the sanitizer build checks leaks */
	if (status)
		fprintf(stderr, "gen-sentence: %s\n", err.msg);
	llr_gen_free(g);
	llr_model_close(m);
	return status;
}
