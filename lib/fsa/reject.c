/*
 * reject.c - why an automaton rejects a sentence, for the messages of
 * featurize (its corpus) and train (its streams and validation text):
 * the first token it does not allow and the prefix before it, or the
 * state it ends in not being final.  Not here: running the automaton
 * (fsa.c).
 */
#include <math.h>

#include "fsa.h"

/* At most this many tokens of the prefix in a message. */
#define SHOWN 20

int llr_fsa_check(const llr_fsa *a, const llr_strmap *vocab, const int32_t *ids, size_t n, llr_err *err)
{
	int32_t q = llr_fsa_run(a, ids, n);
	if (q >= 0 && llr_fsa_final(a, q) > -INFINITY)
		return LLR_OK;
	size_t k = q >= 0 ? n : (size_t)(-1 - q);
	llr_buf b = {0};
	for (size_t i = 0; i < k && i < SHOWN; i++) {
		int32_t x = ids[i];
		llr_buf_printf(&b, "%s%s", i ? " " : "", x >= 0 && (size_t)x < llr_strmap_size(vocab) ? llr_strmap_str(vocab, x) : "?");
	}
	if (k > SHOWN)
		llr_buf_printf(&b, " ...");
	if (q >= 0)
		llr_err_set(err, LLR_EFORMAT, "the automaton rejects the sentence: it may not end after '%s'", b.data ? b.data : "");
	else
		llr_err_set(err, LLR_EFORMAT, "the automaton rejects token %zu '%s'%s%s%s", k + 1,
		            ids[k] >= 0 && (size_t)ids[k] < llr_strmap_size(vocab) ? llr_strmap_str(vocab, ids[k]) : "?",
		            k ? " after '" : " at the start", k ? b.data : "", k ? "'" : "");
	llr_buf_free(&b);
	return LLR_EFORMAT;
}
