/*
 * gen_encdec.h - gen for encoder-decoder models (gen(1),
 * "Encoder-decoder"); CLI-only, not libllrnn API.
 */
#ifndef LLR_GEN_ENCDEC_H
#define LLR_GEN_ENCDEC_H

#include "llrnn.h"

/* 1 if some -m/--model of this command line names an encoder-decoder
 * model (meta family=encdec), or, with source_opt, --source is given.
 * Reads only the models' meta. */
int encdec_wanted(int argc, char **argv, int source_opt);
/* Load an encoder-decoder model for inference, exiting 1 with a message
 * naming path when it is not one (a language model: "trained without a
 * source"). */
llr_encdec_model *encdec_load(const char *path);
/* The source ids of a token line: the model's ids (<unk> for unknown
 * tokens) then the source </s>, into *ids (grown); returns the count and
 * adds the unknown tokens to *unk. */
int encdec_source_ids(const llr_source *s, const char *line, size_t len, int32_t **ids, size_t *cap, int64_t *unk);

int gen_encdec_main(int argc, char **argv);

#endif
