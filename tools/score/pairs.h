/*
 * pairs.h - score --source (pairs.c): aligned source/target lines scored
 * by a model with llr_model_score_pairs (score(1), "Encoder-decoder").
 * CLI-only.
 */
#ifndef LLR_SCORE_PAIRS_H
#define LLR_SCORE_PAIRS_H

/* 1 if the command line gives --source, or some -m/--model names a model
 * file that scores pairs and not sentences (cli_models_can). */
int score_pairs_wanted(int argc, char **argv);
/* score's pairs mode; returns the exit status. */
int score_pairs_main(int argc, char **argv);

#endif
