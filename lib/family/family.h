/*
 * family.h - what a model family gives the one model interface
 * (llr_model, lib/llrnn.h): its table of operations, filled by
 * lib/family/<name>/ and listed in lib/family/families.c.  Private to
 * lib/family; not API.
 */
#ifndef LLR_FAMILY_H
#define LLR_FAMILY_H

#include "internal.h"

typedef struct llr_family {
	const char *name; /* llr_model_info.family */
	const char *what; /* the plural for messages: "n-gram models" */
	const char *instead; /* what scores it when it has no score operation */
	/* How a file is told to be this family's: sniff (1 yes, 0 no, < 0 an
	 * error), asked first; else the value of the meta's family key
	 * (NULL: a model file without one). */
	int (*sniff)(const char *path, llr_err *err);
	const char *family_key;
	/* Load path into m->state (the caller has set m->opts); on failure
	 * m->state is NULL or closable. */
	int (*open)(llr_model *m, const char *path, llr_err *err);
	void (*close)(void *state);
	void (*describe)(const llr_model *m, llr_model_info *info);
	const llr_meta *(*meta)(const llr_model *m);
	/* The operations a family may lack (NULL). */
	int (*score)(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
	             llr_err *err);
	int (*set_threads)(llr_model *m, int n, llr_err *err);
	/* score(1)'s operations beyond llr_model_score (each NULL when the
	 * family lacks it): score aligned source/target pairs (score
	 * --source; no_pairs, if set, says why not, else "<what> have no
	 * --source"); embed sentences (score --embed; B = 0 checks only
	 * that the model can). */
	int (*score_pairs)(llr_model *m, const llr_sentence *src, const llr_sentence *tgt, size_t B, double *logp,
	                   unsigned char *oov, llr_err *err);
	const char *no_pairs;
	int (*embed)(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err);
	/* What gen(1) still reaches behind the handle. */
	const llr_ngram *(*ngram)(const llr_model *m);
} llr_family;

struct llr_model {
	const llr_family *fam;
	char *path; /* for messages */
	llr_model_opts opts;
	void *state; /* the family's */
};

/* The kind, vocabulary and sizes of an encoder family's model (its
 * lexicon lex, meta, and the meta key of its layer count). */
void llr_family_describe_lex(const llr_lexicon *lex, const llr_meta *meta, const char *layers_key, llr_model_info *info);

extern const llr_family llr_family_rnnlm, llr_family_ngram, llr_family_encdec, llr_family_sentenc;

#endif
