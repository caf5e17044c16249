/*
 * reject.c - why an automaton rejects a sentence, for the messages of
 * featurize (its corpus) and train (its streams and validation text):
 * the first token it does not allow and the prefix before it, or the
 * state it ends in not being final; every state met made ready
 * (llr_fsa_ready), so that a grammar too ambiguous is reported here and
 * the states of an accepted sentence are not expanded again later.  Not
 * here: running the automaton (fsa.c).
 */
#include <math.h>

#include "fsa.h"

/* At most this many tokens of the prefix in a message. */
#define SHOWN 20

int llr_fsa_check(const llr_fsa *a, const llr_strmap *vocab, const int32_t *ids, size_t n, llr_err *err)
{
	int32_t q = llr_fsa_start(a);
	size_t k = 0;
	int rc = llr_fsa_ready(a, q, err);
	for (; rc >= 0 && k < n; k++)
		if ((q = llr_fsa_next(a, q, ids[k], NULL)) < 0 || (rc = llr_fsa_ready(a, q, err)) < 0)
			break;
	if (rc < 0)
		return rc;
	if (q >= 0 && llr_fsa_final(a, q) > -INFINITY)
		return LLR_OK;
	size_t shown = 0;
	const char *what = llr_fsa_grammar_source(a, &shown) ? "grammar" : "automaton";
	llr_buf b = {0};
	for (size_t i = 0; i < k && i < SHOWN; i++) {
		int32_t x = ids[i];
		llr_buf_printf(&b, "%s%s", i ? " " : "", x >= 0 && (size_t)x < llr_strmap_size(vocab) ? llr_strmap_str(vocab, x) : "?");
	}
	if (k > SHOWN)
		llr_buf_printf(&b, " ...");
	if (q >= 0)
		llr_err_set(err, LLR_EFORMAT, "the %s rejects the sentence: it may not end after '%s'", what, b.data ? b.data : "");
	else
		llr_err_set(err, LLR_EFORMAT, "the %s rejects token %zu '%s'%s%s%s", what, k + 1,
		            ids[k] >= 0 && (size_t)ids[k] < llr_strmap_size(vocab) ? llr_strmap_str(vocab, ids[k]) : "?",
		            k ? " after '" : " at the start", k ? b.data : "", k ? "'" : "");
	llr_buf_free(&b);
	return LLR_EFORMAT;
}
