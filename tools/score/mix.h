/*
 * mix.h - score -m A -m B: the linear interpolation of several models
 * (score(1), "Mixtures"), with --weights or weights fitted by EM on
 * --tune-weights's sentences.  The mixing is the library's
 * (llr_model_open_mixture, llr_model_tune_mixture); here the options and
 * the reading of the tuning text.  CLI-only, not libllrnn API.
 */
#ifndef LLR_SCORE_MIX_H
#define LLR_SCORE_MIX_H

#include <stddef.h>

#include "llrnn.h"

#define SCORE_MIX_MAX 64 /* -m options at most */

/* The mixture of the n models at paths: weights_arg "w1,w2,..." (NULL:
 * uniform) or, with tune set, weights fitted on the sentences of the file
 * tune (one a line, as score reads them), reported on stderr unless
 * quiet; with counts (a vocab(1) file) too, weights for each frequency
 * class of the previous token (llr_model_mixture_by_context).  Exits with
 * a message on any error. */
llr_model *score_mix_open(size_t n, const char *const *paths, const char *weights_arg, const char *tune,
                          const char *counts, const llr_model_opts *mo, int quiet);

#endif
