/*
 * tokcheck.h - score's and gen's comparison of their input with the
 * tokenisation a model records (llr_tokprof, featurize's tok.* meta):
 * counts as lines come, a warning per mismatch at the end, --strict
 * (exit 1 at the first mismatch), and score --raw (each line tokenised
 * as the model's text was).  CLI-only: it warns and exits.
 */
#ifndef LLR_TOKCHECK_H
#define LLR_TOKCHECK_H

#include "llrnn.h"

typedef struct tokcheck {
	llr_tokprof prof;
	int on;     /* the model records a tokenisation */
	int strict; /* --strict */
	llr_tokstat *st;
	llr_tokenizer *tz; /* --raw */
	llr_buf raw, msg;
} tokcheck;

/* From the model at path with meta meta: strict and raw as the options
 * say.  raw with a model that records no tokenisation exits 1. */
void tokcheck_init(tokcheck *c, const char *path, const llr_meta *meta, int strict, int raw);
/* --raw: replace *line, *len with its tokens (valid until the next
 * call); the text line file:lineno, for messages. */
void tokcheck_raw(tokcheck *c, const char **line, size_t *len, const char *file, size_t lineno);
/* Count the tokens of a line: 1 when, under --strict, it shows a
 * mismatch (the caller writes what came before, then tokcheck_fail). */
int tokcheck_line(tokcheck *c, const char *line, size_t len);
/* Under --strict: report the mismatch at file:lineno (file NULL: no
 * place; lineno 0: the file alone) and exit 1. */
_Noreturn void tokcheck_fail(tokcheck *c, const char *file, size_t lineno);
/* At the end of the input: each mismatch as a warning, or under
 * --strict exit 1. */
void tokcheck_end(tokcheck *c);
void tokcheck_free(tokcheck *c);

#endif
