/*
 * featurize_spell.h - featurize --spelling N: the spelling model and the
 * unseen-word mass of open-vocabulary scoring (featurize(1), "Spelling
 * model"); CLI-only, not libllrnn API.
 */
#ifndef LLR_FEATURIZE_SPELL_H
#define LLR_FEATURIZE_SPELL_H

#include "llrnn.h"

/* Train lex->spell, a Kneser-Ney character n-gram of the given order, on
 * the types of v with a positive count (</s> and <unk> aside), each type
 * once; set lex->spell_lambda (llr_open_lambda of v's counts) and the
 * meta keys spell.*; print one summary line on stderr.  lex must be
 * complete otherwise (vocab, logb).  name: the corpus, in messages.
 * Exits 1 on an error. */
void fz_spelling(const llr_vocab *v, int order, llr_lexicon *lex, const char *name);

#endif
