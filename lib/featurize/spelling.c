/*
 * spelling.c - featurize --spelling N (featurize(1), "Spelling model";
 * lib/featurize/fz.h): the spelling model p_spell, a Kneser-Ney character
 * n-gram of the training text's types (the vocabulary's counted ones and
 * those outside it), and lambda, the open background's unseen-word mass,
 * both stored in the lexicon so the stream and the model carry them;
 * then the signature masses of the strings outside the vocabulary.
 *
 * Types, not tokens: an unseen word looks like a rare type, not like
 * running text, where "the" and "of" would dominate the character
 * statistics.  lambda is Good-Turing's estimate from the same counts
 * (llr_open_lambda): the types seen once and the tokens already outside
 * the vocabulary, over all the events the model predicts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"

#define SPELL_MAX_BYTES ((size_t)1 << 31)
#define FZ_SIG_SAMPLES 200000 /* draws when the features are beyond the exact pass */
#define FZ_SIG_SEED 14        /* the draws are seeded: a run repeats */

/* What the spelling model is trained on and lambda estimated from. */
typedef struct {
	int64_t n1, n_unk, events, types;
} fz_spell_counts;

/* Count the types of v with a positive count and those of extra (the
 * corpus's types outside v; NULL: none), </s> and <unk> aside, each type
 * once, into c. */
static int fz_spell_count(llr_ngram_counter *c, const llr_vocab *v, const llr_strmap *extra, fz_spell_counts *k, const char *name,
                          llr_err *err)
{
	llr_err e = {0};
	/* the corpus's types outside v, each once; <unk> and </s> are
	 * tokens, not spellings */
	for (int32_t i = 0; extra && i < (int32_t)llr_strmap_size(extra); i++) {
		const char *w = llr_strmap_str(extra, i);
		if (!strcmp(w, LLR_UNK) || !strcmp(w, LLR_EOS))
			continue;
		k->types++;
		if (llr_spelling_count(c, w, strlen(w), &e) < 0)
			return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s: --spelling: %s", name, e.msg);
	}
	for (int32_t i = 0; i < (int32_t)llr_vocab_size(v); i++) {
		const char *w = llr_vocab_token(v, i);
		int64_t n = llr_vocab_count(v, i);
		k->events += n;
		if (!strcmp(w, LLR_UNK)) {
			k->n_unk += n;
			continue;
		}
		if (n <= 0 || !strcmp(w, LLR_EOS))
			continue;
		k->n1 += n == 1;
		k->types++;
		if (llr_spelling_count(c, w, strlen(w), &e) < 0)
			return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s: --spelling: %s", name, e.msg);
	}
	return LLR_OK;
}

/* The meta keys spell.* and the note on the model. */
static int fz_spell_record(llr_featurizer *R, const fz_spell_counts *k, const llr_ngram *m, llr_err *err)
{
	llr_err e = {0};
	llr_lexicon *lex = &R->lex;
	const char *name = llr_fz_corpus_name(R);
	llr_openbg *g = llr_openbg_new(lex, &e);
	if (!g)
		return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s: --spelling: %s", name, e.msg);
	double outside = exp(llr_openbg_log_outside(g));
	llr_openbg_free(g);
	if (llr_meta_set(lex->meta, "spell.estimator", "good-turing (n1 + n_unk) / N") < 0 ||
	    llr_meta_setf(lex->meta, "spell.n1", "%lld", (long long)k->n1) < 0 ||
	    llr_meta_setf(lex->meta, "spell.n_unk", "%lld", (long long)k->n_unk) < 0 ||
	    llr_meta_setf(lex->meta, "spell.events", "%lld", (long long)k->events) < 0 ||
	    llr_meta_setf(lex->meta, "spell.types", "%lld", (long long)k->types) < 0 ||
	    llr_meta_setf(lex->meta, "spell.mass_outside", "%.9g", outside) < 0)
		return fz_nomem(err);
	int64_t grams = 0;
	for (int n = 1; n <= R->o.spelling; n++)
		grams += llr_ngram_count(m, n);
	llr_fz_note(&R->o,
	            "spelling model: order %d on %lld types, %lld character n-grams; lambda %.6g = (%lld + %lld) / %lld; "
	            "p_spell outside the vocabulary %.6f",
	            R->o.spelling, (long long)k->types, (long long)grams, lex->spell_lambda, (long long)k->n1, (long long)k->n_unk,
	            (long long)k->events, outside);
	return LLR_OK;
}

/* Train lex->spell on the vocabulary and the corpus's types outside it
 * (llr_fz_outside); lambda from the vocabulary's counts, or with
 * out_unk >= 0 n_unk and the events as counted in the corpus. */
int llr_fz_spelling(llr_featurizer *R, llr_err *err)
{
	llr_err e = {0};
	const char *name = llr_fz_corpus_name(R);
	llr_ngram_counter *c = llr_ngram_counter_new(R->o.spelling, SPELL_MAX_BYTES, err);
	if (!c)
		return llr_err_code(err, LLR_ENOMEM);
	fz_spell_counts k = {0};
	int rc = fz_spell_count(c, R->v, R->outside, &k, name, err);
	if (rc < 0) {
		llr_ngram_counter_free(c);
		return rc;
	}
	if (R->out_unk >= 0) {
		k.n_unk = R->out_unk;
		k.events = R->out_events;
	}
	if (k.types == 0 || k.events < 2) {
		llr_ngram_counter_free(c);
		return llr_err_set(err, LLR_EEMPTY, "%s: --spelling: no counted word to learn spellings from", name);
	}
	llr_kn_opts ko;
	llr_kn_opts_init(&ko);
	ko.discount_fallback = 1; /* small corpora lack some counts of counts */
	llr_ngram *m = NULL;
	rc = llr_ngram_estimate(c, &ko, &m, NULL, &e);
	llr_ngram_counter_free(c);
	if (rc < 0)
		return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s: --spelling: %s", name, e.msg);
	if (!(R->lex.spell = llr_spelling_new(m, &e))) {
		llr_ngram_free(m);
		return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s: --spelling: %s", name, e.msg);
	}
	R->lex.spell_lambda = llr_open_lambda(k.n1, k.n_unk, k.events);
	if (k.n1 + k.n_unk == 0)
		llr_fz_note(&R->o, "%s: --spelling: no type seen once and no token outside the vocabulary: lambda is its floor 1/%lld%s", name,
		            (long long)k.events, R->out_unk < 0 ? " (a --vocab file without rare words or an <unk> line?)" : "");
	return fz_spell_record(R, &k, m, err);
}

/* The notes on drawn signature masses. */
static void fz_signature_notes(llr_featurizer *R, long n, int32_t nout)
{
	const llr_featurize_opts *o = &R->o;
	llr_fz_note(o, "signature masses: %zu signatures from %ld strings drawn outside the vocabulary and %d types of the corpus outside it",
	            llr_lexicon_sigs(&R->lex), n, nout);
	double q;
	const char *why;
	int64_t dg = llr_lexicon_sig_digits(&R->lex, &q, &why);
	if (dg)
		llr_fz_note(o, "signature masses: the digit strings outside the vocabulary exactly: %lld groups, q %.6g", (long long)dg, q);
	else
		llr_fz_note(o, "signature masses: the digit strings drawn with the rest: %s", why ? why : "?");
	if ((dg = llr_lexicon_sig_shorts(&R->lex, &q)) > 0)
		llr_fz_note(o, "signature masses: the strings of at most 3 characters outside the vocabulary exactly: %lld, q %.6g", (long long)dg, q);
	if ((dg = llr_lexicon_sig_dict(&R->lex, &q, &why)) > 0)
		llr_fz_note(o, "signature masses: the hunspell dictionary's word forms outside the vocabulary exactly: %lld, q %.6g", (long long)dg,
		            q);
	else if (why)
		llr_fz_note(o, "signature masses: the hunspell dictionary's word forms drawn with the rest: %s", why);
}

/* --spelling: the signature masses of the strings outside the
 * vocabulary, exactly (llr_lexicon_exact_sigs) unless the features are
 * beyond the exact pass or --signature-samples asks for draws
 * (llr_lexicon_estimate_sigs), and each of the corpus's types outside it
 * with its signature into out_sig. */
int llr_fz_signatures(llr_featurizer *R, llr_err *err)
{
	llr_err e = {0};
	int32_t nout = R->outside ? (int32_t)llr_strmap_size(R->outside) : 0;
	if (nout && !(R->out_sig = calloc((size_t)nout, sizeof *R->out_sig)))
		return fz_nomem(err);
	char nowhy[512] = "";
	if (!R->o.sig_samples) { /* exact, where the features allow it */
		if (llr_lexicon_exact_sigs(&R->lex, R->outside, R->out_sig, nowhy, sizeof nowhy, &e) < 0)
			return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s: --spelling: signature masses: %s", llr_fz_corpus_name(R), e.msg);
		int64_t listed;
		double un;
		int64_t ex = llr_lexicon_sig_exact(&R->lex, &listed, &un);
		if (ex) {
			llr_fz_note(&R->o,
			            "signature masses: %zu signatures, every string outside the vocabulary summed exactly: %lld classes of the spelling "
			            "model's forward pass, %lld strings listed apart, %d types of the corpus outside it; q unassigned %.3g",
			            llr_lexicon_sigs(&R->lex), (long long)ex, (long long)listed, nout, un);
			return LLR_OK;
		}
		llr_fz_note(&R->o, "signature masses: not exact (%s): drawn", nowhy);
	}
	long n = R->o.sig_samples ? R->o.sig_samples : FZ_SIG_SAMPLES;
	if (llr_lexicon_estimate_sigs(&R->lex, n, FZ_SIG_SEED, R->outside, R->out_sig, &e) < 0)
		return llr_err_set(err, llr_err_code(&e, LLR_EINVAL), "%s: --spelling: signature masses: %s", llr_fz_corpus_name(R), e.msg);
	fz_signature_notes(R, n, nout);
	return LLR_OK;
}
