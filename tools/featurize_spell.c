/*
 * featurize_spell.c - featurize --spelling N (featurize(1)): the spelling
 * model p_spell, a Kneser-Ney character n-gram of the training text's
 * types (the vocabulary's counted ones and those outside it), and lambda, the open background's unseen-word mass,
 * both stored in the lexicon so the stream and the model carry them.
 *
 * Types, not tokens: an unseen word looks like a rare type, not like
 * running text, where "the" and "of" would dominate the character
 * statistics.  lambda is Good-Turing's estimate from the same counts
 * (llr_open_lambda): the types seen once and the tokens already outside
 * the vocabulary, over all the events the model predicts.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "featurize_spell.h"

#define SPELL_MAX_BYTES ((size_t)1 << 31)

void fz_spelling(const llr_vocab *v, const llr_strmap *extra, int order, int64_t n_unk_corpus, int64_t events_corpus, llr_lexicon *lex,
                 const char *name)
{
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(order, SPELL_MAX_BYTES, &e);
	if (!c)
		cli_die_err(&e);
	int64_t n1 = 0, n_unk = 0, events = 0, types = 0;
	/* the corpus's types outside v, each once; <unk> and </s> are
	 * tokens, not spellings */
	for (int32_t i = 0; extra && i < (int32_t)llr_strmap_size(extra); i++) {
		const char *w = llr_strmap_str(extra, i);
		if (!strcmp(w, LLR_UNK) || !strcmp(w, LLR_EOS))
			continue;
		types++;
		if (llr_spelling_count(c, w, strlen(w), &e) < 0)
			cli_die("%s: --spelling: %s", name, e.msg);
	}
	for (int32_t i = 0; i < (int32_t)llr_vocab_size(v); i++) {
		const char *w = llr_vocab_token(v, i);
		int64_t k = llr_vocab_count(v, i);
		events += k;
		if (!strcmp(w, LLR_UNK)) {
			n_unk += k;
			continue;
		}
		if (k <= 0 || !strcmp(w, LLR_EOS))
			continue;
		n1 += k == 1;
		types++;
		if (llr_spelling_count(c, w, strlen(w), &e) < 0)
			cli_die("%s: --spelling: %s", name, e.msg);
	}
	if (n_unk_corpus >= 0) {
		n_unk = n_unk_corpus;
		events = events_corpus;
	}
	if (types == 0 || events < 2)
		cli_die("%s: --spelling: no counted word to learn spellings from", name);
	llr_kn_opts o;
	llr_kn_opts_init(&o);
	o.discount_fallback = 1; /* small corpora lack some counts of counts */
	llr_ngram *m = NULL;
	if (llr_ngram_estimate(c, &o, &m, NULL, &e) < 0)
		cli_die("%s: --spelling: %s", name, e.msg);
	llr_ngram_counter_free(c);
	if (!(lex->spell = llr_spelling_new(m, &e))) {
		llr_ngram_free(m);
		cli_die("%s: --spelling: %s", name, e.msg);
	}
	lex->spell_lambda = llr_open_lambda(n1, n_unk, events);
	if (n1 + n_unk == 0)
		cli_warn("%s: --spelling: no type seen once and no token outside the vocabulary: lambda is its floor 1/%lld%s", name,
		         (long long)events, n_unk_corpus < 0 ? " (a --vocab file without rare words or an <unk> line?)" : "");
	llr_openbg *g = llr_openbg_new(lex, &e);
	if (!g)
		cli_die("%s: --spelling: %s", name, e.msg);
	double outside = exp(llr_openbg_log_outside(g));
	llr_openbg_free(g);
	if (llr_meta_set(lex->meta, "spell.estimator", "good-turing (n1 + n_unk) / N") < 0 ||
	    llr_meta_setf(lex->meta, "spell.n1", "%lld", (long long)n1) < 0 ||
	    llr_meta_setf(lex->meta, "spell.n_unk", "%lld", (long long)n_unk) < 0 ||
	    llr_meta_setf(lex->meta, "spell.events", "%lld", (long long)events) < 0 ||
	    llr_meta_setf(lex->meta, "spell.types", "%lld", (long long)types) < 0 ||
	    llr_meta_setf(lex->meta, "spell.mass_outside", "%.9g", outside) < 0)
		cli_oom();
	int64_t grams = 0;
	for (int n = 1; n <= order; n++)
		grams += llr_ngram_count(m, n);
	fprintf(stderr,
	        "%s: spelling model: order %d on %lld types, %lld character n-grams; lambda %.6g = (%lld + %lld) / %lld; "
	        "p_spell outside the vocabulary %.6f\n",
	        cli_prog, order, (long long)types, (long long)grams, lex->spell_lambda, (long long)n1, (long long)n_unk, (long long)events,
	        outside);
}
