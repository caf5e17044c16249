/*
 * featurize.c - the builder behind featurize(1) (llrnn.h, "featurize";
 * lib/featurize/fz.h): its options, llr_featurizer_build running the
 * phases in order, and what it hands back (the lexicon, the counts).
 * The phases live in the other files of this folder; the stream is
 * written by stream.c.
 */
#include <stdlib.h>
#include <string.h>

#include "fz.h"

void llr_featurize_opts_init(llr_featurize_opts *o)
{
	memset(o, 0, sizeof *o);
	o->bg = LLR_FZ_BG_UNIGRAM;
	o->bg_k = 0.5;
	llr_tokprof_unknown(&o->tok);
}

llr_featurizer *llr_featurizer_new(const llr_featurize_opts *o, llr_err *err)
{
	if (o->nfiles < 1)
		return llr_err_set(err, LLR_EINVAL, "featurize: no corpus file"), NULL;
	if (o->source && o->nfiles != 1)
		return llr_err_set(err, LLR_EINVAL, "featurize: --source: want exactly one target file"), NULL;
	llr_featurizer *R = calloc(1, sizeof *R);
	if (!R) {
		fz_nomem(err);
		return NULL;
	}
	R->o = *o;
	R->z.lower = o->tok.lower == 1;
	R->z.nfkc = o->tok.norm == LLR_NORM_NFKC;
	R->z.names = llr_strmap_new();
	R->z.lw = llr_strmap_new();
	if (!R->z.names || !R->z.lw) {
		llr_featurizer_free(R);
		fz_nomem(err);
		return NULL;
	}
	return R;
}

/* The phases up to the lexicon's matrices. */
static int fz_build_rows(llr_featurizer *R, llr_err *err)
{
	const llr_featurize_opts *o = &R->o;
	if (o->hunspell && !(R->morph = llr_morph_open(o->hunspell, err)))
		return llr_err_code(err, LLR_EINVAL);
	int rc = LLR_OK;
	if (o->source) /* the source side first: misaligned files stop here */
		rc = llr_fz_parallel_read(&R->par, o, err);
	if (rc >= 0) /* the lexicon sources, in the order given */
		rc = llr_fz_load_sources(&R->z, o->sources, o->nsources, err);
	if (rc >= 0)
		rc = llr_fz_vocabulary(R, err);
	if (rc >= 0)
		rc = llr_fz_outside(R, err);
	if (rc >= 0)
		rc = llr_fz_rows_build(R, err);
	llr_morph_close(R->morph);
	R->morph = NULL;
	if (rc >= 0)
		rc = llr_fz_columns(R, err);
	if (rc >= 0)
		rc = llr_fz_matrices(R, err);
	return rc;
}

int llr_featurizer_build(llr_featurizer *R, llr_err *err)
{
	llr_err tmp = {0};
	if (!err)
		err = &tmp;
	err->code = 0;
	err->msg[0] = '\0';
	if (R->built)
		return llr_err_set(err, LLR_EINVAL, "featurize: built already");
	int rc = fz_build_rows(R, err);
	if (rc >= 0 && !R->o.dump)
		rc = llr_fz_any(R, err);
	if (rc >= 0)
		rc = llr_fz_meta(R, err);
	if (rc >= 0 && R->o.spelling)
		rc = llr_fz_spelling(R, err);
	if (rc >= 0 && R->o.spelling)
		rc = llr_fz_signatures(R, err);
	if (rc >= 0 && R->o.bg_fsa)
		rc = llr_fz_automaton(R, err);
	if (rc < 0)
		return rc;
	R->st.types = R->V;
	R->st.features = R->F;
	R->st.streamed = R->streaming;
	R->st.source_lines = R->par.pairs;
	R->st.source_empty = R->par.empty;
	R->st.source_tokens = R->par.tokens;
	R->st.source_types = R->par.src ? llr_strmap_size(R->par.src->vocab) : 0;
	R->built = 1;
	return LLR_OK;
}

const llr_lexicon *llr_featurizer_lexicon(const llr_featurizer *R)
{
	return R->built ? &R->lex : NULL;
}

const llr_featurize_stats *llr_featurizer_stats(const llr_featurizer *R)
{
	return &R->st;
}

void llr_featurizer_free(llr_featurizer *R)
{
	if (!R)
		return;
	llr_fz_parallel_free(&R->par);
	llr_fz_tok_close(&R->tin);
	llr_morph_close(R->morph);
	free(R->covered);
	free(R->df);
	free(R->col);
	free(R->col_in);
	free(R->r.c);
	free(R->r.v);
	free(R->r.rowptr);
	free(R->cp.ids);
	free(R->cp.line);
	free(R->cp.file);
	llr_vocab_free(R->cp.types);
	llr_vocab_free(R->v);
	llr_strmap_free(R->outside);
	free(R->out_sig);
	llr_fz_state_free(&R->z);
	llr_strmap_free(R->lex.vocab);
	llr_strmap_free(R->lex.features);
	llr_strmap_free(R->lex.features_in);
	llr_csr_free(R->lex.phi);
	llr_csr_free(R->lex.psi);
	free(R->lex.logb);
	llr_meta_free(R->lex.meta);
	llr_ngram_bg_free(R->lex.bg);
	llr_ngram_free(R->lex.ngram);
	llr_spelling_free(R->lex.spell);
	llr_opensig_free(R->lex.sig);
	llr_anyword_free(R->lex.any);
	llr_fsa_free(R->lex.fsa);
	free(R);
}
