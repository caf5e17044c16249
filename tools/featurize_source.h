/*
 * featurize_source.h - featurize --source: the source side of parallel
 * data (featurize(1), "Parallel data"); CLI-only, not libllrnn API.
 */
#ifndef LLR_FEATURIZE_SOURCE_H
#define LLR_FEATURIZE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "llrnn.h"
#include "progress.h"

typedef struct fz_parallel {
	llr_source *src; /* vocabulary (with </s> and <unk>) and one-hot psi */
	int32_t *ids;    /* every source sentence's ids, each ending in </s> */
	size_t nids;
	int64_t pairs;  /* lines of each file */
	int64_t tokens; /* source tokens (without </s>) */
	int64_t empty;  /* empty source lines */
} fz_parallel;

/* Read the source file and check it against the target file, line by
 * line (drawing prog's progress line): the same number of lines (else exit 1 naming both files and the
 * first line one of them lacks), every line in the canonical token form,
 * no empty target line.  Builds the source vocabulary, SRC:<token>
 * features and the ids. */
void fz_parallel_read(fz_parallel *p, const char *src_path, const char *tgt_path, cli_progress *prog);
/* The source ids as source/ids/NNNNNN members (whole sentences each). */
void fz_parallel_write_ids(const fz_parallel *p, llr_tensor_writer *w);
void fz_parallel_free(fz_parallel *p);

#endif
