/*
 * fz.h - private to lib/featurize/: the builder behind llr_featurizer
 * (llrnn.h, "featurize") and the phases its files share.  Not API.
 *
 * The phases, in the order llr_featurizer_build runs them: the source
 * side of parallel data (parallel.c), the file-reading feature sources
 * (sources.c, into the feature table of table.c), the vocabulary
 * (corpus.c), the rows, columns and matrices (rows.c), the background and
 * meta (background.c), the spelling model and signature masses
 * (spelling.c); then llr_featurizer_write (stream.c).
 */
#ifndef LLR_FEATURIZE_PRIV_H
#define LLR_FEATURIZE_PRIV_H

#include "internal.h"

#define FZ_CHUNK_IDS ((size_t)1 << 20) /* ids per ids/NNNNNN member, at most (whole sentences) */

static inline int fz_nomem(llr_err *err)
{
	return llr_err_set(err, LLR_ENOMEM, "out of memory");
}

/* ------------------------------------------------------ feature table */

/* The features of one word: columns and values, no repeats. */
typedef struct fz_flist {
	int32_t *f;
	float *v;
	uint32_t n, cap;
} fz_flist;

typedef struct fz_state {
	int lower;           /* lowercase the words of lexicon sources */
	int nfkc;            /* NFKC instead of NFC for them */
	llr_strmap *names;   /* every feature name seen, first-seen order */
	unsigned char *fsrc; /* the source that named each one first */
	size_t fcap;
	llr_strmap *lw; /* words the lexicon sources know */
	fz_flist *lwf;  /* their features */
	size_t lwcap;
} fz_state;

/* table.c.  Feature id of name (registered for src if new), or a
 * negative code: LLR_EFORMAT with *why for an invalid name
 * (LLR_OOV_PREFIX is LLR_FZ_OOV's alone; err untouched), LLR_ERANGE past
 * the feature limit, LLR_ENOMEM (both in err). */
int32_t llr_fz_feature(fz_state *z, const char *name, size_t len, int src, const char **why, llr_err *err);
/* Set feature f of a word to v (the last value given wins). */
int llr_fz_flist_add(fz_flist *l, int32_t f, float v, llr_err *err);
/* The feature list of word w, created empty if new; NULL out of memory. */
fz_flist *llr_fz_word(fz_state *z, const char *w, size_t len, llr_err *err);
void llr_fz_state_free(fz_state *z);

/* sources.c: read the file-reading sources in order into z. */
int llr_fz_load_sources(fz_state *z, const llr_fz_source *src, int n, llr_err *err);

/* ------------------------------------------------------------- inputs */

/* Sentences of token files, one after another, with the progress of
 * the reading (when o->progress is set and prog is). */
typedef struct fz_tok_in {
	char *const *files;
	int n, i;
	llr_lines *l;
	const llr_featurize_opts *o;
	int prog;
	long long lines, tokens;
} fz_tok_in;

/* 1 with a non-empty line in the canonical form, 0 at the end of the
 * last file, negative on an error. */
int llr_fz_tok_next(fz_tok_in *t, const char **line, size_t *len, llr_err *err);
void llr_fz_tok_close(fz_tok_in *t);
void llr_fz_report(const llr_featurize_opts *o, const llr_fz_progress *p);
/* A note for stderr, through o->note. */
void llr_fz_note(const llr_featurize_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The corpus read whole: types in first-seen order, their counts, and
 * the text as type ids with -1 at each sentence end. */
typedef struct fz_corpus {
	llr_vocab *types;
	int32_t *ids;
	size_t nids, idcap;
	int64_t sentences, tokens;
	/* with an automaton background: each sentence's file (an index
	 * into the corpus files) and line */
	int64_t *line;
	int32_t *file;
	size_t lcap;
} fz_corpus;

/* parallel.c: the source side of --source. */
typedef struct fz_parallel {
	llr_source *src; /* vocabulary (with </s> and <unk>) and one-hot psi */
	int32_t *ids;    /* every source sentence's ids, each ending in </s> */
	size_t nids;
	int64_t pairs;  /* lines of each file */
	int64_t tokens; /* source tokens (without </s>) */
	int64_t empty;  /* empty source lines */
} fz_parallel;

/* Read the source file and check it against the target file, line by
 * line: the same number of lines, every line in the canonical token
 * form, no empty target line.  Builds the source vocabulary, SRC:<token>
 * features and the ids. */
int llr_fz_parallel_read(fz_parallel *p, const llr_featurize_opts *o, llr_err *err);
/* The source ids as source/ids/NNNNNN members (whole sentences each). */
int llr_fz_parallel_write_ids(const fz_parallel *p, llr_tensor_writer *w, llr_err *err);
void llr_fz_parallel_free(fz_parallel *p);

/* --------------------------------------------------------------- rows */

typedef struct fz_rows {
	int32_t *c;
	float *v;
	size_t n, cap;
	int64_t *rowptr; /* V + 1 */
} fz_rows;

/* ------------------------------------------------------------ builder */

struct llr_featurizer {
	llr_featurize_opts o;
	llr_featurize_stats st;
	int built;
	fz_state z;
	llr_morph *morph; /* hunspell */
	/* the vocabulary */
	llr_vocab *v;      /* sorted: its ids are the stream's */
	fz_corpus cp;      /* the corpus, when it makes the vocabulary */
	fz_tok_in tin;     /* the token files */
	int streaming;     /* vocab_file: the corpus is mapped as it is read */
	const char *first; /* streaming: its first sentence, read already */
	size_t first_len;
	int32_t V, eos, unk;
	/* spelling with vocab_file: the corpus's types outside the
	 * vocabulary, its tokens outside it (-1: not counted) and its
	 * events; each type's signature (-1: none) */
	llr_strmap *outside;
	int64_t out_unk, out_events;
	int32_t *out_sig;
	/* rows, in vocabulary order, then the types outside it */
	fz_rows r;
	/* columns */
	int32_t Fall, F; /* features seen, kept */
	int64_t *df;     /* vocabulary words with each feature */
	int32_t *col;    /* phi column of each feature seen, -1 dropped */
	int32_t *col_in; /* psi column, -1 not an input feature */
	unsigned used;   /* sources with a kept feature */
	int own_psi;     /* psi differs from phi */
	/* the lexicon */
	llr_lexicon lex;
	unsigned char *covered; /* words with a non-TOP feature */
	fz_parallel par;        /* the source side */
};

/* The name of the corpus in messages. */
const char *llr_fz_corpus_name(const llr_featurizer *R);

/* corpus.c */
int llr_fz_vocabulary(llr_featurizer *R, llr_err *err);
int llr_fz_outside(llr_featurizer *R, llr_err *err);
/* rows.c */
int llr_fz_rows_build(llr_featurizer *R, llr_err *err);
int llr_fz_columns(llr_featurizer *R, llr_err *err);
int llr_fz_matrices(llr_featurizer *R, llr_err *err);
int llr_fz_any(llr_featurizer *R, llr_err *err);
/* background.c */
int llr_fz_meta(llr_featurizer *R, llr_err *err);
/* automaton.c: sentence c->sentences is at file:line; the automaton
 * background built and the corpus checked; a line (--vocab) checked: 1
 * accepted, 0 skipped, < 0 an error. */
int llr_fz_corpus_line(fz_corpus *c, int32_t file, int64_t line);
int llr_fz_automaton(llr_featurizer *R, llr_err *err);
int llr_fz_accept(llr_featurizer *R, const char *line, size_t len, const char *name, int64_t lineno, llr_err *err);
/* spelling.c */
int llr_fz_spelling(llr_featurizer *R, llr_err *err);
int llr_fz_signatures(llr_featurizer *R, llr_err *err);

#endif
