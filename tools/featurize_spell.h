/*
 * featurize_spell.h - featurize --spelling N: the spelling model and the
 * unseen-word mass of open-vocabulary scoring (featurize(1), "Spelling
 * model"); CLI-only, not libllrnn API.
 */
#ifndef LLR_FEATURIZE_SPELL_H
#define LLR_FEATURIZE_SPELL_H

#include "llrnn.h"

/* Train lex->spell, a Kneser-Ney character n-gram of the given order, on
 * the types of v with a positive count and those of extra (the
 * corpus's types outside v; NULL: none), </s> and <unk> aside, each type
 * once; set lex->spell_lambda (llr_open_lambda: n1 from v's counts; n_unk
 * and the events N from v's counts too, unless n_unk >= 0: then those
 * two as given, counted in the corpus) and the meta keys spell.*; print
 * one summary line on stderr.  lex must be complete otherwise (vocab,
 * logb).  name: the corpus, in messages.  Exits 1 on an error. */
void fz_spelling(const llr_vocab *v, const llr_strmap *extra, int order, int64_t n_unk, int64_t events, llr_lexicon *lex, const char *name);

#endif
