/*
 * struct-layout - the offsets of the fields of the structures the Python
 * module mirrors in ctypes (python/llrnn/_capi.py), one "struct.field
 * offset" a line, then each structure's size: tests/54-python.bats
 * compares them with ctypes' own.
 */
#include <stddef.h>
#include <stdio.h>

#include "llrnn.h"

#define F(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(s, f))
#define Z(s) printf("%s %zu\n", #s, sizeof(s))

int main(void)
{
	F(llr_err, code), F(llr_err, msg), Z(llr_err);
	F(llr_model_opts, open), F(llr_model_opts, check_norm), F(llr_model_opts, norm_samples);
	F(llr_model_opts, seed), F(llr_model_opts, verify), Z(llr_model_opts);
	F(llr_model_info, kind), F(llr_model_info, family), F(llr_model_info, vocab);
	F(llr_model_info, has_unk), F(llr_model_info, order), F(llr_model_info, layers);
	F(llr_model_info, embed), F(llr_model_info, hidden), F(llr_model_info, output);
	F(llr_model_info, input), F(llr_model_info, cell), F(llr_model_info, spelling), F(llr_model_info, oov);
	F(llr_model_info, log_outside), F(llr_model_info, spell_lambda), F(llr_model_info, sigs);
	F(llr_model_info, sigs_exact), F(llr_model_info, sig_samples), F(llr_model_info, norm_draws);
	F(llr_model_info, norm_checked), F(llr_model_info, norm_mismatched), F(llr_model_info, norm_first);
	F(llr_model_info, norm_listed), F(llr_model_info, norm_digits), F(llr_model_info, norm_shorts);
	F(llr_model_info, norm_dict), F(llr_model_info, dim), F(llr_model_info, embedding);
	F(llr_model_info, ops), Z(llr_model_info);
	F(llr_sentence, words), F(llr_sentence, n), Z(llr_sentence);
	F(llr_sample_opts, temperature), F(llr_sample_opts, top_k), F(llr_sample_opts, top_p);
	F(llr_sample_opts, greedy), Z(llr_sample_opts);
	F(llr_gen_opts, sample), F(llr_gen_opts, max_len), F(llr_gen_opts, beam), F(llr_gen_opts, nbest);
	F(llr_gen_opts, no_unk), F(llr_gen_opts, closed), F(llr_gen_opts, spell_tries);
	F(llr_gen_opts, len_norm), F(llr_gen_opts, attention), F(llr_gen_opts, fsa), F(llr_gen_opts, regex);
	F(llr_gen_opts, grammar);
	Z(llr_gen_opts);
	F(llr_gen_result, n), F(llr_gen_result, logp), F(llr_gen_result, logp_total), F(llr_gen_result, ended);
	F(llr_gen_result, eos_logp), F(llr_gen_result, score), Z(llr_gen_result);
	F(llr_rng, s), Z(llr_rng);
	printf("LLR_GEN_BATCH %d\n", LLR_GEN_BATCH);
	return 0;
}
