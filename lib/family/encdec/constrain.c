/*
 * constrain.c - an encoder-decoder's output automaton (train
 * --output-fsa, issue 51) against its data: the pairs whose target it
 * rejects (llr_encdec_pairs_constrain, an error naming where the pair
 * was read, or skipped and counted), and the target tokens it never
 * allows (llr_encdec_fsa_unused, for train's opening note).  Not here:
 * the automaton (lib/fsa/), its use in the output layer
 * (lib/nn/encdec.c), its members in the model (lexicon.c).
 */
#include "family/family.h"

#include <math.h>
#include <stdio.h>

int llr_encdec_pairs_constrain(llr_encdec_pairs *p, const llr_fsa *a, const llr_strmap *vocab, const char *name, int stream, int skip,
                               llr_err *err)
{
	size_t out = 0, ns = 0, nt = 0;
	for (size_t k = 0; k < p->n; k++) {
		size_t s0 = p->soff[k], s1 = p->soff[k + 1], t0 = p->toff[k], t1 = p->toff[k + 1];
		llr_err e = {0};
		/* the target without its </s> */
		if (llr_fsa_check(a, vocab, p->tgt + t0, t1 - t0 - 1, &e) < 0) {
			if (!skip) {
				if (stream)
					return llr_err_set(err, LLR_EFORMAT, "%s: pair %lld (line %lld of the target file featurize read): %s (--skip-rejected skips it)",
					                   name, (long long)p->line[k], (long long)p->line[k], e.msg);
				return llr_err_set(err, LLR_EFORMAT, "%s:%lld: %s (--skip-rejected skips it)", name, (long long)p->line[k], e.msg);
			}
			p->rejected++;
			p->tokens -= (int64_t)(t1 - t0);
			continue;
		}
		memmove(p->src + ns, p->src + s0, (s1 - s0) * sizeof *p->src);
		memmove(p->tgt + nt, p->tgt + t0, (t1 - t0) * sizeof *p->tgt);
		p->line[out] = p->line[k];
		p->soff[out] = ns;
		p->toff[out] = nt;
		ns += s1 - s0;
		nt += t1 - t0;
		out++;
		p->soff[out] = ns;
		p->toff[out] = nt;
	}
	p->n = out;
	p->ns = ns;
	p->nt = nt;
	if (!out)
		return llr_err_set(err, LLR_EEMPTY, "%s: the automaton rejects the target of every pair", name);
	return LLR_OK;
}

size_t llr_encdec_fsa_unused(const llr_fsa *a, const llr_strmap *vocab, llr_buf *list)
{
	int32_t V = (int32_t)llr_strmap_size(vocab), eos = llr_fsa_eos(a), N = llr_fsa_states(a);
	size_t n = 0;
	for (int32_t x = 0; x < V; x++) {
		int used = 0;
		for (int32_t q = 0; !used && q < N; q++)
			used = x == eos ? llr_fsa_final(a, q) > -INFINITY : llr_fsa_next(a, q, x, NULL) >= 0;
		if (used)
			continue;
		if (n < 20)
			llr_buf_printf(list, "%s%s", n ? ", " : "", llr_strmap_str(vocab, x));
		else if (n == 20)
			llr_buf_printf(list, ", ...");
		n++;
	}
	return n;
}
