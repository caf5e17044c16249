/*
 * lmpos.c - what the language models that predict every token from its
 * own context share for training (the feed-forward and log-linear
 * families, family.h): the features stream read with the context order
 * checked against its longest sentence, the corpus as its predicted
 * positions, an epoch's shuffled order of them, and the end of their
 * setup (the model's fit to the stream, the validation text), the
 * refusal of a log-linear output without word features.  Not here: the
 * models' contexts (each family's), the LSTM's sentence batches.
 */
#include "family/family.h"

#include <stdio.h>
#include <stdlib.h>

int llr_lm_stream_read(const char *path, const char *name, const char *opt, int order, const llr_train_comm *comm,
                       llr_lexicon **x, llr_lm_corpus *c, llr_err *err)
{
	*x = NULL;
	llr_tensor_reader *r = llr_tr_open(path, "features", err);
	int rc = r ? llr_lexicon_read(r, x, err) : llr_err_code(err, LLR_EIO);
	if (rc == LLR_OK)
		rc = llr_lm_corpus_read(r, name, *x, 1 << 30, comm, c, err);
	llr_tr_close(r);
	if (rc == LLR_OK && (*x)->fsa)
		rc = llr_err_set(err, LLR_EINVAL, "%s: %s does not take an automaton background (featurize --background fsa:, regex: or grammar:): "
		                 "its output would ignore it; train an LL-RNN on this stream, or featurize it without the automaton",
		                 name, opt);
	if (rc < 0) {
		if (strncmp(err->msg, name, strlen(name)))
			llr_err_prefix(err, "%s", name);
		return rc;
	}
	int32_t longest = 0;
	for (size_t i = 0; i < c->npieces; i++)
		longest = LLR_MAX(longest, c->pieces[i].len);
	if (order - 1 > longest)
		return llr_err_set(err, LLR_EINVAL, "%s: %s %d: a context of %d words, but the longest sentence has %d tokens (</s> included)",
		                   name, opt, order, order - 1, longest);
	return LLR_OK;
}

llr_lm_pos *llr_lm_positions(const llr_lm_corpus *c, size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i < c->npieces; i++)
		k += (size_t)c->pieces[i].len;
	llr_lm_pos *p = llr_malloc((k ? k : 1) * sizeof *p);
	if (!p)
		return NULL;
	k = 0;
	for (size_t i = 0; i < c->npieces; i++) {
		const llr_lm_piece *q = &c->pieces[i];
		for (int32_t t = 0; t < q->len; t++)
			p[k++] = (llr_lm_pos){q->sent, q->start + t};
	}
	*n = k;
	return p;
}

void llr_lm_shuffle(size_t *order, size_t n, llr_rng *r)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)llr_rng_below(r, (uint64_t)i), t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

int llr_lm_setup_end(int rc, const char *resume, const char *sname, const char *valid, llr_lexicon *lex, llr_lm_corpus *vc,
                     llr_err *err)
{
	if (rc < 0) {
		char why[sizeof err->msg];
		snprintf(why, sizeof why, "%s", err->msg);
		return resume ? llr_err_set(err, rc, "%s: does not fit %s: %s", resume, sname, why)
		              : llr_err_set(err, rc, "%s: %s", sname, why);
	}
	int64_t skipped;
	llr_rnnlm lm = {.lex = lex};
	if (valid && (rc = llr_lm_corpus_read_text(valid, &lm, NULL, 1 << 30, vc, &skipped, err)) < 0)
		return rc;
	return LLR_OK;
}

int llr_lm_featureless(llr_err *err)
{
	return llr_err_set(err, LLR_EINVAL, "--output loglinear: the stream has no word features (phi is the words' identities "
	                                    "alone); featurize it with features, or train --output softmax");
}
