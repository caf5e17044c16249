/*
 * llrnn.h - the public API of libllrnn, the library under the llrnn tools.
 *
 * Log-Linear RNN language models (Dymetman & Xiao 2016): an LSTM whose
 * softmax is replaced by p(x) ~ b(x) exp(a . phi(x)).  This header is the
 * only one the tools include; what is not declared here is not API.
 *
 * Conventions:
 * - Every exported symbol is prefixed llr_, every constant LLR_.
 * - Fallible functions return LLR_OK (0) or a negative LLR_E* code and fill
 *   the optional llr_err they are given with a message naming the object
 *   ("file:line: reason").  The library never prints and never exits.
 * - Handles come from llr_X_new/open and go to llr_X_free/close; freeing
 *   NULL is a no-op.  Unless a comment says otherwise, the caller owns what
 *   it passes in and keeps owning it.
 * - Broken contracts (shape mismatches between layers) abort with
 *   file:line through LLR_ASSERT: they are bugs, not data errors.
 */
#ifndef LLRNN_H
#define LLRNN_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every declaration below is the shared library's interface: built with
 * -fvisibility=hidden (build/libllrnn.so), the library exports what this
 * header declares and nothing else. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define LLR_VERSION "0.1.0"

/* ================================================================ models
 *
 * One model interface (issue 45): open any model file, ask what it is,
 * score tokenised sentences (or source/target pairs) and embed them
 * exactly as score(1) does, generate as gen(1) does.  This section is
 * all a program that only uses models needs; the rest of the header is
 * the machinery under it.  Types named here and defined further down:
 * llr_err (errors), llr_meta (tensor archives), llr_norm_stat (networks).
 *
 * The families behind the handle (lib/family/families.c lists them):
 *   rnnlm    LSTM language models, kind "model" without a family key:
 *            every output (softmax, loglinear, tree, classes) and input
 *            (word features, characters, both), scored closed or open
 *            (a spelling model's share of <unk>, or an LL-RNN's own
 *            features of any string).       describe, score, generate
 *   ngram    backoff n-grams: ARPA text or the binary archive (kind
 *            "ngram").       describe, score, generate (no beam search)
 *   encdec   encoder-decoders (family=encdec): source/target pairs,
 *            generation from a source.  describe, score pairs, generate
 *   sentenc  sentence encoders (family=sentenc): sentence vectors;
 *            score(1) --task still drives them itself.  describe, embed
 *   fflm     feed-forward language models (family=fflm, Bengio et al.
 *            2003; train --feedforward N).  describe, score, generate,
 *            embed
 *   loglm    log-linear (maximum-entropy) language models over hashed
 *            n-gram, skip-gram and bag features of the context
 *            (family=loglm; train --context N).  describe, score,
 *            generate (no beam search)
 *   mixture  the linear interpolation of language models of one
 *            vocabulary (a mixture file, llr_model_open_mixture).
 *            describe, score
 *   hmm      trigram HMM part-of-speech taggers (family=hmm, Brants's
 *            TnT; train --hmm).  describe, tag
 * An LSTM LM with word input and a feed-forward LM embed a sentence
 * too (the mean of its words' input embeddings).
 * An operation a family lacks fails with LLR_EINVAL and a message that
 * says so ("m.arpa: n-gram models have no --embed").  Training is not an
 * operation yet.
 */
typedef struct llr_model llr_model;
typedef struct llr_err llr_err;
typedef struct llr_meta llr_meta;
typedef struct llr_norm_stat llr_norm_stat;

/* How words outside the vocabulary are scored (score(1) --open,
 * --closed): AUTO opens a model that has a spelling model. */
enum { LLR_OPEN_AUTO = 0, LLR_OPEN_ON = 1, LLR_OPEN_OFF = 2 };

typedef struct llr_model_opts {
	int open;                /* LLR_OPEN_*; ON without a spelling model fails */
	int check_norm;          /* llr_model_score fills *norm (costs O(V) a token) */
	int64_t norm_samples;    /* an open LL-RNN's norm check: draws outside the
	                            vocabulary (score --norm-samples) */
	uint64_t seed;           /* and their seed (score -s) */
	int verify;              /* check every checksum at load (score --verify):
	                            the n-gram probing form checks its tables
	                            lazily otherwise; the others always do */
} llr_model_opts;

/* score(1)'s defaults: AUTO, no norm check, 100000 draws, seed 20161107. */
llr_model_opts llr_model_opts_default(void);

/* Open the model at path ("-": stdin, read once) with opts (NULL: the
 * defaults): an "ngram" archive or ARPA text is an n-gram model, any
 * other model file goes by the family key of its meta.  The caller
 * closes *out with llr_model_close.  LLR_EFORMAT, LLR_EKIND, LLR_EIO...
 * with err naming the file; --open without a spelling model is
 * LLR_EINVAL. */
int llr_model_open(const char *path, const llr_model_opts *opts, llr_model **out, llr_err *err);
void llr_model_close(llr_model *m);
/* Split a batch of sentences among n threads in llr_model_score (n <= 1:
 * the calling thread), each using the BLAS threads the caller set
 * (llr_blas_set_threads; 1 is best, score(1) --threads).  A no-op for
 * the families that score without BLAS. */
int llr_model_set_threads(llr_model *m, int n, llr_err *err);
/* From now on m tells its notices (llr_notice) to fn with ctx: the
 * constraints of llr_model_mask and llr_gen_new made after this call
 * take it (gen(1) and score(1) print them on stderr).  fn NULL: none
 * (the default). */
void llr_model_on_notice(llr_model *m, void (*fn)(void *ctx, const char *line), void *ctx);

/* How llr_model_score scores a word outside the vocabulary. */
enum { LLR_OOV_UNK = 0,      /* as <unk> */
       LLR_OOV_SPREAD = 1,   /* p(<unk> | K) p_spell(w) / (1 - S_V) */
       LLR_OOV_FEATURES = 2, /* an LL-RNN's own row of the string's features */
       LLR_OOV_ZERO = 3      /* an n-gram without <unk>: log p 0, the context cut (SRILM) */
};

/* The operations of llr_model_info.ops, one bit each: scoring and
 * embedding in the low byte, generation (llr_gen_*, below) from bit 8. */
enum { LLR_MODEL_DESCRIBE = 1, LLR_MODEL_SCORE = 2, LLR_MODEL_SCORE_PAIRS = 4, LLR_MODEL_EMBED = 8, LLR_MODEL_PREDICT = 16,
       LLR_MODEL_TAG = 32,
       LLR_MODEL_GEN = 1 << 8, LLR_MODEL_BEAM = 1 << 9, LLR_MODEL_GEN_FEATURES = 1 << 10, LLR_MODEL_GEN_SOURCE = 1 << 11 };

/* What llr_model_describe tells; the strings are the model's (valid
 * until llr_model_close). */
typedef struct llr_model_info {
	const char *kind;    /* the meta's kind: "model" or "ngram" ("ngram" for ARPA) */
	const char *family;  /* "rnnlm", "ngram", "encdec", "sentenc", "fflm", "loglm", "chain-mrf", "mixture", "hmm" */
	int64_t vocab;       /* (target) vocabulary size, <s>, </s> and <unk> included */
	int has_unk;         /* 1: <unk> is in the vocabulary */
	int order;           /* n-gram order; 0 for networks */
	int layers, embed, hidden; /* network sizes; 0 for n-grams */
	const char *output;  /* rnnlm: "softmax", "loglinear", "tree", "classes"; else NULL */
	const char *input;   /* rnnlm: "word", "chars", "concat", "sum"; else NULL */
	const char *cell;    /* rnnlm: "lstm", "gru", "rnn", "vcrnn", "vcgru" (llr_cell_name); else NULL */
	int spelling;        /* 1: it carries a spelling model (open scoring possible) */
	int oov;             /* LLR_OOV_*: how llr_model_score scores OOVs as opened */
	double log_outside;  /* LLR_OOV_SPREAD: ln(1 - S_V); else 0 */
	double spell_lambda; /* LLR_OOV_FEATURES: the open background's lambda; else 0 */
	size_t sigs;         /* LLR_OOV_FEATURES: signatures; else 0 */
	/* LLR_OOV_FEATURES: how the signature masses were made, and what
	 * the norm check of opts.check_norm sums exactly and draws
	 * (llr_open_norm_*); else 0 and NULL. */
	int sigs_exact;          /* 1: every string outside the vocabulary summed (meta sig.exact) */
	const char *sig_samples; /* else the draws they came from (meta sig.samples), NULL unknown */
	int64_t norm_draws;      /* strings drawn outside the vocabulary (opts.norm_samples) */
	int64_t norm_checked;    /* exact masses: draws whose row was compared with their class's; else -1 */
	int64_t norm_mismatched; /* of them, those whose row differs */
	const char *norm_first;  /* the first of those (NULL: none) */
	int32_t norm_listed;     /* exact masses: the strings listed apart */
	int32_t norm_digits, norm_shorts, norm_dict; /* drawn masses: the groups summed exactly */
	int dim;               /* llr_model_embed's vector size; 0 without */
	const char *embedding; /* and what the vectors are: "cbow", "gru", "bigru"
	                          (sentence encoders), "lm-input-mean" (an LSTM LM),
	                          "mrf-uv" (a chain MRF: its words' u and v) */
	unsigned ops;        /* LLR_MODEL_* it has */
} llr_model_info;

int llr_model_describe(const llr_model *m, llr_model_info *info);
/* The model file's meta (every key of llrnn-model(5)); NULL for n-gram
 * models. */
const llr_meta *llr_model_meta(const llr_model *m);

/* A tokenised sentence: n words, NUL-terminated, without <s> and </s>. */
typedef struct llr_sentence {
	const char *const *words;
	size_t n;
} llr_sentence;

/* Score B sentences at once (every sentence from <s>).  Sentence b has
 * n_b + 1 predictions, its words then </s>, written at logp[o_b + t] and
 * oov[o_b + t] for t = 0 .. n_b, o_b = sum over i < b of (n_i + 1):
 * logp the natural log of p(token | <s> and the words before), oov 1 for
 * a word outside the vocabulary, scored as info.oov says.  With
 * opts.check_norm, *norm (may be NULL otherwise) gets the batch's
 * normalisation figures: err the signed sum p - 1 where it is largest in
 * magnitude, se, lo and hi as llr_net_norm.  LLR_EINVAL for a closed
 * model without <unk> meeting an OOV, or a family without the operation
 * (B = 0 checks only that); LLR_EUTF8 for a word that is not valid UTF-8
 * (llr_model_score_pairs, llr_model_embed, llr_model_word_features and
 * llr_gen_start check theirs too); LLR_ENOMEM.  A sentence of no words
 * is </s> alone.  Not thread-safe on one handle. */
int llr_model_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov,
                    llr_norm_stat *norm, llr_err *err);

/* llr_model_score, and the computation a variable-computation cell
 * (train --cell vcrnn|vcgru) spends at each step: comp[o_b + t] (laid
 * out as logp) is the scheduler's m_t in (0, 1] at the step that reads
 * <s> (t = 0) or word t of sentence b and predicts logp[o_b + t]'s token
 * (score --show-computation).  LLR_EINVAL for a model without a
 * scheduler (B = 0 checks only that); LLR_EUTF8 as llr_model_score;
 * LLR_ENOMEM. */
int llr_model_score_computation(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, double *comp,
                                llr_norm_stat *norm, llr_err *err);

/* The linear interpolation of n models (score(1) -m A -m B --weights):
 * p(w | h) = sum_i weights[i] p_i(w | h), token by token; weights NULL
 * is uniform, else each in [0, 1] and their sum 1 (within 1e-6).  The
 * components must share one vocabulary: LLR_EINVAL for vocabularies
 * that differ (the words they predict, as strings), for a component that scores words outside its vocabulary
 * other than as <unk> (no <unk>, or open scoring: open them closed), and
 * at llr_model_score for a token that some components have and others
 * do not.  A mixture file (llrnn-model(5): "llrnn-mixture 1", then
 * "WEIGHT PATH" lines) opens the same by llr_model_open.  A mixture
 * scores (its norm check bounds |sum_w p(w) - 1| by the weighted sum of
 * the components'), and cannot generate. */
int llr_model_open_mixture(size_t n, const char *const *paths, const double *weights, const llr_model_opts *opts,
                           llr_model **out, llr_err *err);
/* A mixture's weights into weights[0..n); returns its component count
 * (0: m is not a mixture). */
int llr_model_mixture_weights(const llr_model *m, double *weights, size_t n);
/* Fit a mixture's weights by EM to maximise the likelihood of B
 * sentences (a validation set), from uniform weights, until an
 * iteration gains less than tol nats per token or after max_iters. */
typedef struct llr_mixture_fit {
	int max_iters;  /* in */
	double tol;     /* in: nats per token */
	int iters;      /* out: the EM iterations run */
	int64_t tokens; /* out: the predictions fitted on (words and </s>) */
	double logp;    /* out: their total natural log-probability, fitted */
	double pooled_logp; /* out: the same under the pooled weights */
	int classes;    /* out: context classes fitted on their own (llr_model_mixture_by_context) */
	int class_iters; /* out: the EM iterations over the classes */
} llr_mixture_fit;
int llr_model_tune_mixture(llr_model *m, const llr_sentence *s, size_t B, llr_mixture_fit *fit, llr_err *err);
/* Weights by context, as Bengio et al. 2003's interpolated trigram had a
 * set per context-frequency bin: the previous token's count in the file
 * counts (vocab(1)'s "token<TAB>count" lines; the sentence's start counts
 * as </s>) puts each prediction in class 0 (a token absent) or
 * 1 + floor(log2 count).  Call it before llr_model_tune_mixture: the
 * pooled weights are fitted first, then each class with 1,000 tuning
 * predictions or more gets its own by EM, the others keeping the pooled
 * ones.  The mixture stays exact: the weights depend on the context
 * only. */
#define LLR_MIX_CLASSES 64
int llr_model_mixture_by_context(llr_model *m, const char *counts, llr_err *err);
/* Context class k's weights into weights[0..n), and its tuning
 * predictions into *tokens; returns 1 when the class has weights of its
 * own, 0 when it has the pooled ones, LLR_EINVAL when m is not a mixture
 * by context or k is not in [0, LLR_MIX_CLASSES). */
int llr_model_mixture_class_weights(const llr_model *m, int k, double *weights, size_t n, int64_t *tokens);

/* Score B aligned source/target pairs (encoder-decoders: the target
 * given the source, from <s>).  Target b has n_b + 1 predictions, its
 * words then </s>, written at logp[o_b + t] and oov[o_b + t] as
 * llr_model_score writes a sentence's (a target word outside the
 * vocabulary scored as <unk>); a source word outside the source
 * vocabulary reads as its <unk>.  LLR_EINVAL for a family without the
 * operation (B = 0 checks only that). */
int llr_model_score_pairs(llr_model *m, const llr_sentence *src, const llr_sentence *tgt, size_t B, double *logp,
                          unsigned char *oov, llr_err *err);
/* From now on llr_model_score_pairs scores under a decode-time mask,
 * exactly one of the automaton at fsa (OpenFst text over the target
 * tokens), the regular expression regex and the GBNF grammar at grammar
 * (the others NULL; gen(1)'s "Constrained generation"): each step's
 * distribution masked to the tokens it allows, weighted and
 * renormalised over them, the probability gen's mask-only mode gives
 * (score --fsa, --regex, --grammar); a target it rejects gets -inf from
 * the rejected token on.  On a model trained under an output automaton,
 * the intersection of the two, as gen follows it (LLR_EFORMAT naming
 * both when they share no target).  Encoder-decoders only (LLR_EINVAL
 * otherwise); the constraint's errors (LLR_EFORMAT, LLR_EIO) name the
 * file. */
int llr_model_mask_pairs(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err);
/* From now on llr_model_score scores a language model's sentences
 * under a decode-time mask, the probability gen's mask-only mode gives
 * (gen --fsa, --regex, --grammar; score --fsa, --regex, --grammar):
 * at each step p(x | K) masked to the tokens the automaton allows after
 * the prefix, weighted by its arcs (</s> only in a final state, by its
 * final weight) and renormalised over them; a sentence it rejects gets
 * -inf from the rejected token on.  Exactly one of fsa (OpenFst text),
 * regex (a regular expression over tokens) and grammar (a GBNF file) is
 * set, over the model's vocabulary.  LSTM LMs with the log-linear
 * output and closed vocabulary: the mask is then the automaton
 * background b_fsa of featurize(1), attached at scoring time, whose
 * normaliser sums exactly over the allowed tokens; on a model trained
 * under an automaton background, the intersection of its automaton
 * with the given one, weighted by both, in its place (what gen follows
 * on such a model; LLR_EFORMAT naming both when they share no
 * sentence).  LLR_EINVAL for other models; the automaton's errors,
 * LLR_EFORMAT or LLR_EIO, name it. */
int llr_model_mask(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err);
/* Embed B sentences into vec (B x info.dim, sentence b's vector at
 * vec[b * dim]; an empty sentence's is 0): a sentence encoder's
 * encoding, or for an LSTM LM with word input the mean of its words'
 * input embeddings.  oov (may be NULL) gets 1 at o_b + t for word t
 * outside the vocabulary (read as <unk>), o_b = sum over i < b of n_i.
 * LLR_EINVAL for a family without the operation or a model that cannot
 * (B = 0 checks only that). */
int llr_model_embed(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err);
/* One call of llr_model_predict's callback: an example predicted, or
 * (gold and pred NULL) the end of a task's examples. */
typedef struct llr_prediction {
	int task;                /* an LLR_TASK_* bit */
	const char *name;        /* its name as disc-pairs writes it: ORDER, NEXT, CONJ */
	const char *gold, *pred; /* the labels as disc-pairs writes them */
	size_t n, correct;       /* the task's examples so far, and those right */
	size_t done, total;      /* the examples of the file predicted so far, of */
} llr_prediction;
/* Predict the labels of the disc-pairs examples in path ("-": stdin) of
 * the tasks of the LLR_TASK_* mask tasks (score --task: a sentence
 * encoder's heads), batch examples at a time: each is called for every
 * example, a task's in the file's order, the tasks in the order ORDER,
 * NEXT, CONJ, and once at each task's end (also for a task without
 * examples).  A nonzero return of each stops and is returned.  LLR_EINVAL
 * for a family without the operation or a mask the model has no head
 * for; the file's errors as llr_disc_set_read's. */
int llr_model_predict(llr_model *m, unsigned tasks, const char *path, size_t batch,
                      int (*each)(void *ctx, const llr_prediction *p), void *ctx, llr_err *err);
/* How llr_model_tag decodes: beam 0 finds the best tag sequence exactly
 * (Viterbi); beam > 1 keeps, at each word, the states within a factor
 * beam of the best (TnT's beam search: faster, maybe not the best). */
typedef struct llr_tag_opts {
	double beam;
} llr_tag_opts;
/* Tag the words of B sentences (a part-of-speech tagger: train --hmm;
 * llr_model_info.ops has LLR_MODEL_TAG): tags[o_b + t] gets the tag of
 * word t of sentence b, o_b = sum over i < b of n_i, a string the model
 * owns (valid until llr_model_close); unknown (may be NULL) 1 there for
 * a word outside the training lexicon (tagged through its suffixes).  o
 * NULL: exact.  LLR_EINVAL for a family that cannot tag (B = 0 checks
 * only that) or a beam neither 0 nor above 1; LLR_EUTF8 as
 * llr_model_score; LLR_ENOMEM. */
int llr_model_tag(llr_model *m, const llr_sentence *s, size_t B, const llr_tag_opts *o, const char **tags,
                  unsigned char *unknown, llr_err *err);
/* llr_model_score (without its norm check) that also writes len[o_b + t]
 * (may be NULL): the length of the n-gram that gave the prediction its
 * probability, KenLM's full_scores ngram_length.  An n-gram model's is
 * the longest listed n-gram ending in the token, <s> counted (1: the
 * unigram, <unk>'s for a word outside the vocabulary; 0 for a word an
 * n-gram without <unk> scores 0, LLR_OOV_ZERO); every other family's is
 * 0 (networks have no n-grams).  Errors as llr_model_score's. */
int llr_model_score_lengths(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov,
                            int32_t *len, llr_err *err);
/* A feature and its value (llr_model_word_features, llr_extract): name
 * is NUL-terminated, len bytes, valid during the call only; a negative
 * return stops the caller, which returns it. */
typedef int (*llr_feature_fn)(const char *name, size_t len, float value, void *ctx);
/* The features of word (NUL-terminated) as the output layer of an LSTM
 * language model sees it, the ones gen(1) --show-features prints: a
 * vocabulary word's row of phi (an LL-RNN's lexicon features; none in a
 * softmax model), any other string's features from the model's
 * extractors and its unseen-word features.  emit(name, len, value, ctx)
 * for each nonzero one, in the row's order.  LLR_EINVAL for a family
 * without word features (all but rnnlm: "m.arpa: n-gram models have no
 * word features"), or the first negative value emit returned. */
int llr_model_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err);
/* The LLR_MODEL_* operations of the family of the model file at path,
 * told from its head alone (without loading it: what a tool asks to
 * choose its mode before it parses that mode's options); 0 when it
 * cannot be told (stdin, a missing or foreign file: llr_model_open says
 * why). */
unsigned llr_model_file_ops(const char *path);

/* Generation (gen(1)): a generator holds a model's state after <s> and
 * a prefix, and draws sentences from there.  llr_gen_new makes one for m
 * (which must outlive it); llr_gen_start feeds it a prefix (no words:
 * from <s>); then llr_gen_sample draws n sentences, or llr_gen_beam runs
 * a beam search, and llr_gen_result, llr_gen_word and llr_gen_features
 * read the results until the next call.  The families: rnnlm samples,
 * decodes greedily and beam-searches, open vocabulary included (gen(1),
 * "Unseen words"); ngram samples and decodes greedily; encdec
 * beam-searches (beam 1: greedy) from a source sentence, alone or as an
 * ensemble (llr_gen_ensemble); the others cannot generate (LLR_EINVAL:
 * "sentence encoders cannot generate").  What a model can do is in
 * llr_model_info.ops: LLR_MODEL_GEN, LLR_MODEL_BEAM,
 * LLR_MODEL_GEN_FEATURES, LLR_MODEL_GEN_SOURCE. */

typedef struct llr_rng llr_rng;
typedef struct llr_buf llr_buf;
typedef struct llr_gen llr_gen;

/* How a draw is made from a row of log-probabilities (gen(1)
 * --temperature, --top-k, --top-p, --greedy). */
typedef struct llr_sample_opts {
	double temperature; /* > 0; 1 = the model's own distribution */
	int32_t top_k;      /* keep the k most probable words; 0 = no limit */
	double top_p;       /* keep the smallest set of mass >= top_p; 1 = off */
	int greedy;         /* argmax; the fields above are then ignored */
} llr_sample_opts;

typedef struct llr_gen_opts {
	llr_sample_opts sample;
	int max_len;         /* at most this many generated words (gen --max-len) */
	int beam, nbest;     /* llr_gen_beam: K beams, the nbest best results */
	int no_unk;          /* never <unk> nor an unseen word (gen --no-unk) */
	int closed;          /* no unseen words from a spelling model (gen --closed) */
	int64_t spell_tries; /* draws an unseen word's spelling may take */
	double len_norm;     /* encoder-decoders: rank by log p / length^len_norm */
	int attention;       /* encoder-decoders: keep the first model's attention */
	/* An automaton the sentences must belong to (gen --fsa, --regex,
	 * --grammar; NULL: none; at most one of the three), over the
	 * model's vocabulary: OpenFst text at fsa, a regular expression
	 * over tokens, or a GBNF grammar file over the characters of the
	 * tokens joined by single spaces (gen(1), "Constrained generation",
	 * "Grammars").  At each step the model's distribution is masked to
	 * the tokens the automaton allows, weighted by its arcs (</s> only
	 * in a final state, by its final weight) and renormalised; a token
	 * after which no final state is reachable within max_len is never
	 * drawn.  Word-level language models only; generation is then
	 * closed (no unseen words).  A model trained under an automaton
	 * background is held to its own automaton so without these (not
	 * reweighted: its distribution holds the weights); with one of
	 * them, to the intersection of its automaton with it, masked and
	 * weighted by the given one alone (LLR_EFORMAT from llr_gen_new
	 * when the two share no sentence). */
	const char *fsa;
	const char *regex;
	const char *grammar;
} llr_gen_opts;

/* gen(1)'s defaults: llr_sample_opts_init, max_len 100, no beam, nbest
 * 1, spell_tries 100000, len_norm 1. */
void llr_gen_opts_init(llr_gen_opts *o);
/* Sentences one llr_gen_sample call draws at most. */
#define LLR_GEN_BATCH 32

/* The caller frees *out with llr_gen_free.  LLR_EINVAL for a family that
 * cannot generate, or beam without LLR_MODEL_BEAM; LLR_ENOMEM. */
int llr_gen_new(llr_model *m, const llr_gen_opts *o, llr_gen **out, llr_err *err);
void llr_gen_free(llr_gen *g);
/* Average the log-probabilities of another model of the same family and
 * target vocabulary with g's (other must outlive g), before the first
 * start.  LLR_EINVAL for a family without ensembles (only LLR_MODEL_GEN_SOURCE
 * ones have them) or another vocabulary. */
int llr_gen_ensemble(llr_gen *g, llr_model *other, llr_err *err);
/* Feed <s> and prefix (its words are copied); with LLR_MODEL_GEN_SOURCE
 * the sentence is the source, and generation starts from the target's
 * <s>.  Not thread-safe on one generator, nor on two of one model. */
int llr_gen_start(llr_gen *g, const llr_sentence *prefix, llr_err *err);
/* The prefix's per-word log p (prefix->n entries; an unseen word as
 * llr_model_score gives it), valid until the next start; *total their
 * sum. */
const float *llr_gen_prefix_logp(const llr_gen *g, double *total);
/* Draw n (1 .. LLR_GEN_BATCH) sentences after the prefix, sentence i
 * from a generator seeded with the i-th llr_rng_u64 of rng, so a
 * sentence does not depend on how many are drawn with it.  Results 0 ..
 * n - 1.  LLR_EINVAL when the model gives no finite log p to any word. */
int llr_gen_sample(llr_gen *g, llr_rng *rng, size_t n, llr_err *err);
/* Beam search with opts.beam beams: each step keeps the K best
 * continuations by total log p, a hypothesis ending in </s> among the K
 * best is finished, and the search stops when K are or at max_len.
 * Returns how many results (at most opts.nbest), ranked by log p /
 * length (generated tokens, </s> included), or a negative code. */
int llr_gen_beam(llr_gen *g, llr_err *err);

/* A result of the last llr_gen_sample or llr_gen_beam. */
typedef struct llr_gen_result {
	size_t n;           /* generated words (</s> not among them) */
	const float *logp;  /* their log p (an unseen word's: its spelling's share);
	                       NULL for a source model */
	double logp_total;  /* log p of the prefix, the words and, if ended, </s> */
	int ended;          /* 1: ended by </s>; 0: cut at max_len */
	float eos_logp;     /* log p(</s>) when ended (not for a source model) */
	double score;       /* a source model's rank: logp_total / length^len_norm */
} llr_gen_result;
/* Result i (valid until the next sample, beam or start). */
void llr_gen_result_get(const llr_gen *g, size_t i, llr_gen_result *r);
/* Word k of result i: a vocabulary word or a drawn unseen string. */
const char *llr_gen_word(const llr_gen *g, size_t i, size_t k);
/* Append to out the features of token k of prefix + result i (k below
 * the prefix's n: a prefix word), lexicon style ("POS:VERB w=0.5"): a
 * vocabulary word's row, an unseen word's from its string, a drawn
 * signature's row.  LLR_EINVAL without LLR_MODEL_GEN_FEATURES. */
int llr_gen_features(llr_gen *g, size_t i, size_t k, llr_buf *out, llr_err *err);
/* With opts.attention, result i's attention: *rows (its tokens, </s>
 * included) x *cols (the source's tokens and </s>), row-major; else
 * NULL. */
const float *llr_gen_attention(const llr_gen *g, size_t i, size_t *rows, size_t *cols);
/* Append a line of notes on what the generator did so far (open
 * vocabulary: the unseen words drawn), without a newline; nothing when
 * there is nothing to tell. */
int llr_gen_note(const llr_gen *g, llr_buf *out);

/* ---------------------------------------------------------------- errors */

enum {
	LLR_OK = 0,
	LLR_ENOMEM = -1,  /* out of memory */
	LLR_EIO = -2,     /* read or write failed (errno-level) */
	LLR_EFORMAT = -3, /* malformed or foreign data */
	LLR_EINVAL = -4,  /* invalid argument or option value */
	LLR_EUTF8 = -5,   /* invalid UTF-8 */
	LLR_ERANGE = -6,  /* a size or value over a documented limit */
	LLR_ETRUNC = -7,  /* input ended early (truncated stream) */
	LLR_EKIND = -8,   /* tensor archive of the wrong kind or version */
	LLR_ENAN = -9,    /* NaN or Inf where a finite number is required */
	LLR_EEMPTY = -10, /* nothing to work on (empty corpus...) */
	LLR_EUSAGE = -11, /* a command-line option misused (train's options) */
};

/* A message buffer filled by the function that failed. */
typedef struct llr_err {
	int code;
	char msg[512];
} llr_err;

/* Static English text for an LLR_E* code. */
const char *llr_strerror(int code);

/* Record code and a printf-style message in err (may be NULL); returns
 * code, so `return llr_err_set(err, LLR_EFORMAT, "%s:%zu: bad", ...)`. */
int llr_err_set(llr_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/* Prefix an existing message with "prefix: " (keeps the code). */
int llr_err_prefix(llr_err *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Where the library tells a program what is not an error but should not
 * pass unseen: a budget run past and an approximation taken in its place
 * (gen and score --grammar: the grammar's trimming).  fn gets one line,
 * without the program's name or a newline ("FILE: what happened: what
 * it means"), and ctx; it is called from the thread that meets the
 * event (score's threads among them: fn must be safe to call from any
 * thread), with the object's lock held, so it must not call back into
 * the library.  Each event is told once per object.  An object without
 * a sink (fn NULL) tells nothing.  llr_train_args_on_note is the same
 * channel for the training driver. */
typedef struct llr_notice {
	void (*fn)(void *ctx, const char *line);
	void *ctx;
} llr_notice;
/* Format a line and hand it to n->fn; nothing when n or n->fn is NULL. */
void llr_notice_send(const llr_notice *n, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
void llr_notice_vsend(const llr_notice *n, const char *fmt, va_list ap);

void llr_assert_fail(const char *file, int line, const char *expr);
#define LLR_ASSERT(e) ((e) ? (void)0 : llr_assert_fail(__FILE__, __LINE__, #e))

/* ------------------------------------------------------------ allocation */

/* malloc/calloc/realloc that return NULL on failure or when n*size
 * overflows.  llr_calloc zero-fills. */
void *llr_malloc(size_t size);
void *llr_calloc(size_t n, size_t size);
void *llr_reallocarray(void *p, size_t n, size_t size);
char *llr_strndup(const char *s, size_t n);

/* A growable byte buffer, always NUL-terminated when len > 0. */
typedef struct llr_buf {
	char *data;
	size_t len, cap;
} llr_buf;

int llr_buf_reserve(llr_buf *b, size_t extra); /* LLR_OK or LLR_ENOMEM */
int llr_buf_append(llr_buf *b, const void *p, size_t n);
int llr_buf_putc(llr_buf *b, int c);
int llr_buf_printf(llr_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
/* printf's "%.<d>f" of v (d 0 to 9) and "%zu" of u, byte for byte and
 * faster (numfmt.c); LLR_OK or LLR_ENOMEM. */
int llr_buf_fixed(llr_buf *b, double v, int d);
int llr_buf_uint(llr_buf *b, uint64_t u);
void llr_buf_clear(llr_buf *b); /* len = 0, keeps memory */
void llr_buf_free(llr_buf *b);

/* ------------------------------------------------------------------- rng */

/* xoshiro256** seeded through splitmix64.  All randomness in llrnn goes
 * through one of these, passed by pointer: same seed, same stream. */
typedef struct llr_rng {
	uint64_t s[4];
} llr_rng;

void llr_rng_seed(llr_rng *r, uint64_t seed);
uint64_t llr_rng_u64(llr_rng *r);
double llr_rng_uniform(llr_rng *r);              /* [0, 1) */
uint64_t llr_rng_below(llr_rng *r, uint64_t n);  /* [0, n), unbiased; n > 0 */
double llr_rng_normal(llr_rng *r);               /* N(0, 1) */
void llr_rng_shuffle_i32(llr_rng *r, int32_t *a, size_t n); /* Fisher-Yates */

/* ----------------------------------------------------------------- crc32c */

/* CRC-32C (Castagnoli) of n bytes, continuing from crc (0 to start):
 * llr_crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t llr_crc32c(uint32_t crc, const void *data, size_t n);

/* --------------------------------------------------------------- tensors */

typedef enum llr_dtype { LLR_F32 = 1, LLR_I32 = 2, LLR_I64 = 3, LLR_F64 = 4 } llr_dtype;

#define LLR_MAX_DIMS 4

/* Dense, row-major, stride-free. */
typedef struct llr_tensor {
	llr_dtype dtype;
	int ndim;
	int64_t shape[LLR_MAX_DIMS];
	void *data; /* owned */
} llr_tensor;

size_t llr_dtype_size(llr_dtype t);
const char *llr_dtype_name(llr_dtype t); /* "float32", "int32"... */
/* A zero-filled tensor; NULL on bad shape (err says why) or no memory. */
llr_tensor *llr_tensor_new(llr_dtype t, int ndim, const int64_t *shape, llr_err *err);
void llr_tensor_free(llr_tensor *t);
size_t llr_tensor_numel(const llr_tensor *t);
size_t llr_tensor_nbytes(const llr_tensor *t);
/* "3x4" into buf (for messages). */
const char *llr_shape_str(int ndim, const int64_t *shape, char *buf, size_t size);

/* Compressed sparse rows: rows x cols, row r's entries are
 * indices[indptr[r] .. indptr[r+1]) with values data[...], columns strictly
 * increasing within a row.  nnz is limited to INT32_MAX. */
typedef struct llr_csr {
	int32_t rows, cols;
	int32_t nnz;
	int32_t *indptr;  /* rows + 1, owned */
	int32_t *indices; /* nnz, owned */
	float *data;      /* nnz, owned */
} llr_csr;

llr_csr *llr_csr_new(int32_t rows, int32_t cols, int32_t nnz, llr_err *err);
void llr_csr_free(llr_csr *m);
/* LLR_OK if indptr is monotone from 0 to nnz, indices in range and strictly
 * increasing per row, values finite; otherwise LLR_EFORMAT naming the row. */
int llr_csr_check(const llr_csr *m, llr_err *err);
llr_csr *llr_csr_identity(int32_t n, llr_err *err);
/* 1 if m is one-hot (square, one entry of 1 per row, each column once:
 * a permutation of the identity; the words' identities alone), or NULL;
 * else 0. */
int llr_csr_one_hot(const llr_csr *m);
llr_csr *llr_csr_copy(const llr_csr *m, llr_err *err);

/* Row-by-row construction: append rows in order, then finish. */
typedef struct llr_csr_builder llr_csr_builder;
llr_csr_builder *llr_csr_builder_new(int32_t cols);
/* cols need not be sorted; duplicates are summed. */
int llr_csr_builder_row(llr_csr_builder *b, const int32_t *cols, const float *vals, size_t n, llr_err *err);
/* Returns the matrix (caller frees) and frees the builder. */
llr_csr *llr_csr_builder_finish(llr_csr_builder *b, llr_err *err);
void llr_csr_builder_free(llr_csr_builder *b);

/* ----------------------------------------------------- string interning */

/* Byte strings -> dense ids 0..n-1 in insertion order. */
typedef struct llr_strmap llr_strmap;
llr_strmap *llr_strmap_new(void);
void llr_strmap_free(llr_strmap *m);
int32_t llr_strmap_get(const llr_strmap *m, const char *s, size_t len); /* -1 absent */
/* Existing or new id; LLR_ENOMEM (<0) on failure. */
int32_t llr_strmap_add(llr_strmap *m, const char *s, size_t len);
size_t llr_strmap_size(const llr_strmap *m);
const char *llr_strmap_str(const llr_strmap *m, int32_t id); /* NUL-terminated */
size_t llr_strmap_len(const llr_strmap *m, int32_t id);

/* ------------------------------------------------------------------ input */

/* Every text input goes through libarchive: plain, gzip, bzip2, xz, zstd,
 * from a file or stdin, never seeking.  path NULL or "-" is stdin, named
 * "<stdin>" in messages. */
typedef struct llr_input llr_input;
llr_input *llr_input_open(const char *path, llr_err *err);
/* Reads up to n bytes; returns bytes read, 0 at end, <0 on error. */
ssize_t llr_input_read(llr_input *in, void *buf, size_t n, llr_err *err);
const char *llr_input_name(const llr_input *in);
/* Bytes read from the file so far (compressed bytes when it is
 * compressed, read-ahead included), for progress against its size; -1
 * when not known (text from a pipe). */
int64_t llr_input_offset(const llr_input *in);
void llr_input_close(llr_input *in);

/* An archive of documents (tar, zip, 7z, cpio, ar, iso, any compression),
 * or, when the input is not an archive, one document: the whole (possibly
 * compressed) text, named after the file.  Only regular members are
 * returned; directories, links and devices are skipped (a zip read from a
 * pipe cannot tell a symlink from a file: its member holds the target). */
typedef struct llr_archive llr_archive;
llr_archive *llr_archive_open(const char *path, llr_err *err);
/* Advance to the next regular member: 1 and its name (valid until the next
 * call) and size (-1 if unknown), 0 at the end, <0 on error (a truncated
 * or corrupt archive). */
int llr_archive_next(llr_archive *a, const char **name, int64_t *size, llr_err *err);
/* Read from the current member: bytes, 0 at its end, <0 on error. */
ssize_t llr_archive_read(llr_archive *a, void *buf, size_t n, llr_err *err);
const char *llr_archive_name(const llr_archive *a); /* the archive's path */
/* Bytes read from the archive's file so far, as llr_input_offset; -1 when
 * not known (text from a pipe, a nested archive). */
int64_t llr_archive_offset(const llr_archive *a);
void llr_archive_close(llr_archive *a);
/* 1 if the first bytes of a member begin a compressed stream or an archive
 * libarchive reads (by magic number: gzip, bzip2, xz, zstd, lz4, lzip,
 * zip, 7z, ar, tar, cpio, xar, cab, rar, warc), else 0. */
int llr_archive_sniff(const void *head, size_t n);
/* The current member of parent read as an archive of its own (a .deb's
 * data.tar.xz, a compressed member): head[0..n) are the bytes of the
 * member already taken with llr_archive_read, replayed first.  It is named
 * "parent:member", reads parent as it goes, and must be closed before
 * parent moves on.  A member that is not an archive is one document. */
llr_archive *llr_archive_open_nested(llr_archive *parent, const void *head, size_t n, llr_err *err);
/* 1 once a read or a header of a has failed (it can go no further). */
int llr_archive_failed(const llr_archive *a);

/* --------------------------------------------------------------- lines */

#define LLR_MAX_LINE ((size_t)64 << 20) /* 64 MiB: longer is LLR_ERANGE */

enum {
	LLR_LINES_REPLACE_INVALID = 1, /* invalid UTF-8 -> U+FFFD instead of an error */
	LLR_LINES_NO_VALIDATE = 2,     /* bytes as they are */
};

/* UTF-8 line reader over a byte source.  Lines are returned without their
 * "\n" or "\r\n", NUL-terminated, valid until the next call. */
typedef struct llr_lines llr_lines;
typedef ssize_t (*llr_read_fn)(void *src, void *buf, size_t n, llr_err *err);
/* Open a file (through llr_input_open). */
llr_lines *llr_lines_open(const char *path, int flags, llr_err *err);
/* Read from any source; name is used in messages; src is not owned. */
llr_lines *llr_lines_from(llr_read_fn fn, void *src, const char *name, int flags);
/* 1 with a line, 0 at end, <0 on error ("name:line: invalid UTF-8"). */
int llr_lines_next(llr_lines *l, const char **line, size_t *len, llr_err *err);
size_t llr_lines_lineno(const llr_lines *l);
const char *llr_lines_name(const llr_lines *l);
/* llr_input_offset of a file opened with llr_lines_open; -1 otherwise. */
int64_t llr_lines_offset(const llr_lines *l);
/* Number of invalid sequences replaced so far (with REPLACE_INVALID). */
size_t llr_lines_replaced(const llr_lines *l);
void llr_lines_close(llr_lines *l);

/* Length of the valid UTF-8 prefix of s[0..n); a NUL byte counts as
 * invalid (it cannot travel in a C string). */
size_t llr_utf8_valid_prefix(const char *s, size_t n);
/* Decode one code point at s (n bytes left): its length, or -1 if invalid
 * (overlong, surrogate, above U+10FFFF, cut short; NUL decodes to 0). */
int llr_utf8_decode(const char *s, size_t n, int32_t *cp);
/* Encode scalar value c at b (room for 4 bytes): its length, 1 to 4. */
int llr_utf8_encode(int32_t c, char *b);

/* --------------------------------------------------------- tensor archive */

/* DESIGN section 3 and llrnn-tensor(5): a POSIX tar (pax) stream whose
 * first member is a text `meta` (key=value lines: format=llrnn, version,
 * kind...), then .npy v1.0 members (little-endian, C order) and text
 * members. */

#define LLR_FORMAT_VERSION 1
/* Limits (llrnn-tensor(5)): a member holds at most 4 GiB, `meta` at most
 * 16 MiB; larger is LLR_ERANGE, refused before anything is allocated. */
#define LLR_MAX_MEMBER ((int64_t)1 << 32)
#define LLR_MAX_META ((int64_t)16 << 20)

/* key=value metadata, in insertion order. */
typedef struct llr_meta llr_meta;
llr_meta *llr_meta_new(void);
void llr_meta_free(llr_meta *m);
int llr_meta_set(llr_meta *m, const char *key, const char *value);
int llr_meta_setf(llr_meta *m, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
const char *llr_meta_get(const llr_meta *m, const char *key); /* NULL absent */
/* Integer/real value of key into *out; LLR_EFORMAT if absent or malformed. */
int llr_meta_get_i64(const llr_meta *m, const char *key, int64_t *out, llr_err *err);
int llr_meta_get_f64(const llr_meta *m, const char *key, double *out, llr_err *err);
size_t llr_meta_count(const llr_meta *m);
void llr_meta_at(const llr_meta *m, size_t i, const char **key, const char **value);
int llr_meta_format(const llr_meta *m, llr_buf *out);
int llr_meta_parse(llr_meta *m, const char *text, size_t len, llr_err *err);

typedef struct llr_tensor_writer llr_tensor_writer;
/* Start a tensor archive.  path "-" or NULL writes to stdout; a file is
 * written to a temporary beside it and renamed into place by
 * llr_tw_close, so a reader never sees a partial file.  The meta member
 * is written first; format and version are added to it. */
llr_tensor_writer *llr_tw_open(const char *path, const char *kind, const llr_meta *meta, llr_err *err);
int llr_tw_put(llr_tensor_writer *w, const char *name, const llr_tensor *t, llr_err *err);
/* Same from a raw array. */
int llr_tw_put_raw(llr_tensor_writer *w, const char *name, llr_dtype dt, int ndim, const int64_t *shape, const void *data, llr_err *err);
int llr_tw_put_text(llr_tensor_writer *w, const char *name, const char *text, size_t len, llr_err *err);
/* CSR as three members: name/indptr, name/indices (int32), name/data (f32). */
int llr_tw_put_csr(llr_tensor_writer *w, const char *name, const llr_csr *m, llr_err *err);
/* Finish: flush, close, rename into place.  Frees w even on error. */
int llr_tw_close(llr_tensor_writer *w, llr_err *err);
/* Give up: remove the temporary file; on standard output (or a special
 * file) leave what was written cut, without the end of the archive, so
 * that no reader takes it for a whole one (llr_tr_next says it is
 * truncated).  Frees w. */
void llr_tw_abort(llr_tensor_writer *w);

typedef struct llr_tensor_reader llr_tensor_reader;
/* Open and read `meta`; checks format=llrnn, that kind equals `kind` (NULL
 * accepts any) and version <= LLR_FORMAT_VERSION, with a message saying
 * what the file is and what to do on a mismatch (LLR_EKIND). */
llr_tensor_reader *llr_tr_open(const char *path, const char *kind, llr_err *err);
const llr_meta *llr_tr_meta(const llr_tensor_reader *r);
/* Next member: 1 with its name (.npy suffix removed: "phi/indptr"), 0 at
 * the end, <0 on a truncated or foreign stream. */
int llr_tr_next(llr_tensor_reader *r, const char **name, llr_err *err);
/* Read the current member as a tensor (checks .npy magic, header, dtype,
 * and that the payload has exactly the declared size). */
int llr_tr_tensor(llr_tensor_reader *r, llr_tensor **out, llr_err *err);
/* Same, and check dtype and shape (shape entries < 0 match anything). */
int llr_tr_tensor_expect(llr_tensor_reader *r, llr_dtype dt, int ndim, const int64_t *shape, llr_tensor **out, llr_err *err);
/* Read the current member as text (caller frees *text). */
int llr_tr_text(llr_tensor_reader *r, char **text, size_t *len, llr_err *err);
/* Read name/indptr, name/indices, name/data starting at the current member
 * (whose name must be name/indptr), check them, and build the matrix. */
int llr_tr_csr(llr_tensor_reader *r, const char *name, int32_t cols, llr_csr **out, llr_err *err);
void llr_tr_close(llr_tensor_reader *r);

/* -------------------------------------------------------------- text */

/* Tokenizer (tok, disc-pairs): Unicode normalisation and case folding via
 * utf8proc, punctuation split off, numbers/URLs/e-mails kept whole,
 * language-aware clitics, optional sentence splitting. */
typedef struct llr_tok_opts {
	int lower;        /* Unicode lowercase */
	int nfkc;         /* NFKC instead of NFC */
	const char *lang; /* "en", "fr" or NULL (no clitic rules) */
	int chars;        /* character mode: each character a token, U+2581 for spaces */
} llr_tok_opts;

typedef struct llr_tokenizer llr_tokenizer;
llr_tokenizer *llr_tokenizer_new(const llr_tok_opts *o, llr_err *err);
void llr_tokenizer_free(llr_tokenizer *t);
/* Append the tokens of text[0..len) to out, single-space separated.  With
 * split_sentences, sentences are separated by '\n' (no trailing '\n').
 * Returns LLR_OK or a negative code. */
int llr_tokenize(llr_tokenizer *t, const char *text, size_t len, int split_sentences, llr_buf *out, llr_err *err);
/* Normalise (NFC/NFKC) and optionally lowercase one already tokenised
 * string, replacing its content in out. */
int llr_normalize(const char *s, size_t len, int nfkc, int lower, llr_buf *out, llr_err *err);

/* ---------------------------------------------------- tokenisation record */

/* How a token corpus was normalised and tokenised: the settings of tok(1)
 * that made it.  featurize records them in its meta (tok.lowercase=0|1,
 * tok.norm=nfc|nfkc|none, tok.clitics=en|fr|none, tok.punct=split|
 * attached; a key absent is unknown), the model keeps them, and score
 * and gen compare their input with them (lib/features/tokprof.c). */
enum { LLR_TP_UNKNOWN = -1 };
enum { LLR_NORM_NONE, LLR_NORM_NFC, LLR_NORM_NFKC };
enum { LLR_CLITICS_ATTACHED, LLR_CLITICS_EN, LLR_CLITICS_FR };
typedef struct llr_tokprof {
	int lower;   /* 1 lowercased (tok -l), 0 cased, or LLR_TP_UNKNOWN */
	int norm;    /* LLR_NORM_*, or unknown */
	int clitics; /* split the English (--lang en) or French (--lang fr) way, attached, or unknown */
	int punct;   /* 1 split off words (as tok does), 0 attached, or unknown */
} llr_tokprof;
void llr_tokprof_unknown(llr_tokprof *p); /* every field LLR_TP_UNKNOWN */

/* Counts over tokens, each with its first example: tokens with a capital
 * letter, not NFC, not NFKC, English clitics standing alone (n't 's 're
 * 've 'll 'd 'm) or attached to a word (don't, John's), French elisions
 * standing alone (l' qu' jusqu'...) or attached (l'homme), a word with
 * , ; : ! or ? glued to its end.  Apostrophes U+2019 and U+02BC count as
 * ASCII ones.  Caller frees with llr_tokstat_free. */
enum { LLR_TS_CAPITALS, LLR_TS_NOT_NFC, LLR_TS_NOT_NFKC, LLR_TS_EN_SPLIT, LLR_TS_EN_ATTACHED,
       LLR_TS_FR_SPLIT, LLR_TS_FR_ATTACHED, LLR_TS_PUNCT_ATTACHED, LLR_TS_NKINDS };
typedef struct llr_tokstat llr_tokstat;
llr_tokstat *llr_tokstat_new(void); /* NULL: out of memory */
void llr_tokstat_free(llr_tokstat *s);
/* Count token tok[0..len) count times (a vocabulary type with its count);
 * a token that is not valid UTF-8 counts as a token only.  LLR_OK or
 * LLR_ENOMEM. */
int llr_tokstat_token(llr_tokstat *s, const char *tok, size_t len, int64_t count, llr_err *err);
/* Count every token of a token line (llr_token_next). */
int llr_tokstat_line(llr_tokstat *s, const char *line, size_t len, llr_err *err);
int64_t llr_tokstat_tokens(const llr_tokstat *s);
int64_t llr_tokstat_count(const llr_tokstat *s, int kind); /* kind LLR_TS_* */
/* Fill the unknown fields of p with what a corpus counted in s shows:
 * lowercased when no token has a capital, NFC when every token is,
 * clitics split the French or English way when more of them stand
 * alone than are attached (attached when only attached ones are seen,
 * unknown when none is), punctuation split when no word has any glued
 * to it.  Nothing changes when s counted no token. */
void llr_tokprof_detect(llr_tokprof *p, const llr_tokstat *s);
/* Set the tok.* keys of the known fields of p in m. */
int llr_tokprof_to_meta(const llr_tokprof *p, llr_meta *m);
/* Read p from m: 1 when m records any tok.* key, 0 when none (a file
 * older than the record: p all unknown), LLR_EFORMAT on a bad value. */
int llr_tokprof_from_meta(llr_tokprof *p, const llr_meta *m, llr_err *err);
/* The llr_tokenizer_new options that write text as p records it (an
 * unknown field as tok's default), and the same as the command line
 * "tok -l --lang fr" appended to out. */
int llr_tokprof_tok_opts(const llr_tokprof *p, llr_tok_opts *o);
int llr_tokprof_options(const llr_tokprof *p, llr_buf *out);
/* What the input counted in s does against the record p, one line each
 * ("412 of 4535 tokens have capitals (first: 'Le'); the model was
 * trained on lowercased text (tok -l)\n") appended to out; returns how
 * many (0: none), or LLR_ENOMEM.  With final = 0 only what a token
 * shows; with final = 1 also what needs the whole input: a cased record
 * given at least 100 words and not one capital. */
int llr_tokprof_check(const llr_tokprof *p, const llr_tokstat *s, int final, llr_buf *out);

/* ----------------------------------------------------------- token lines */

/* 1 when path names something that exists and is not a regular file: a
 * device such as /dev/null or /dev/stdout, a FIFO, a directory.  Every
 * writer of llrnn writes a regular file through a temporary renamed over
 * it (no half-written output); a special file is opened and written in
 * place instead, since renaming over /dev/null would replace the device
 * with a file. */
int llr_path_is_special(const char *path);

/* Compressed output (lib/core/output.c): the filter an output file's name
 * asks for, by its suffix (.gz gzip, .bz2 bzip2, .xz xz, .zst zstd;
 * anything else, NULL and "-" none), as every llrnn writer applies it. */
typedef enum llr_compress {
	LLR_COMPRESS_NONE,
	LLR_COMPRESS_GZIP,
	LLR_COMPRESS_BZIP2,
	LLR_COMPRESS_XZ,
	LLR_COMPRESS_ZSTD,
} llr_compress;
llr_compress llr_compress_for_path(const char *path);
/* A stream whose writes reach fd compressed with c (one raw stream, as
 * gzip(1) writes it); fclose finishes the stream and closes fd, and
 * returns EOF when anything failed.  NULL with err set ("name: ...") if
 * it cannot start; fd is then left open.  Caller closes with fclose. */
FILE *llr_compress_fdopen(int fd, llr_compress c, const char *name, llr_err *err);

/* The one way every tool reads a line of tokens (tok(1), "Token lines"):
 * the tokens are the maximal runs of bytes other than space and TAB, so
 * runs of separators, and separators at the ends, separate nothing.  tok
 * writes one space between tokens. */
/* The next token of line[0..len) from *pos on (start with *pos = 0): 1
 * with *tok pointing into line and *toklen its length, *pos past it; 0
 * when no token is left. */
int llr_token_next(const char *line, size_t len, size_t *pos, const char **tok, size_t *toklen);
/* The number of tokens of line[0..len). */
size_t llr_tokens_count(const char *line, size_t len);
/* The canonical form (what featurize requires of the corpus it maps to
 * ids): LLR_OK, or LLR_EFORMAT with a reason for an empty token (two
 * separators in a row, or one at an end of a non-empty line) or for the
 * reserved <s> or </s> among the tokens.  The caller prefixes file:line. */
int llr_tokens_check(const char *line, size_t len, llr_err *err);

/* ------------------------------------------------------------ vocabulary */

#define LLR_BOS "<s>"
#define LLR_EOS "</s>"
#define LLR_UNK "<unk>"

/* Features featurize gives every vocabulary (featurize(1)): the identity
 * feature of each of the top M words is LLR_TOP_PREFIX followed by the
 * word; </s> has its own, LLR_FEAT_EOS; every other word, <unk>
 * included, shares LLR_FEAT_NOTTOP, which readers also give an unseen
 * word (llr_lexicon_word_row). */
#define LLR_TOP_PREFIX "TOP:"
#define LLR_FEAT_EOS LLR_TOP_PREFIX LLR_EOS
#define LLR_FEAT_NOTTOP LLR_TOP_PREFIX "@notTop"
/* Features of the strings outside the vocabulary V' (V less <unk>) only,
 * never of a word of V: featurize --spelling N names them (unless
 * --no-oov-features) and readers give them to a string outside V'
 * whose lexicon has them (llr_lexicon_any_row), so an open model weighs
 * the strings outside V apart from V's words.  LLR_FEAT_OOV fires for
 * every such string, LLR_FEAT_OOV_HS_KNOWN for those that also fire
 * LLR_FEAT_HS_KNOWN.  The prefix is reserved: no lexicon source may
 * name a feature with it. */
#define LLR_OOV_PREFIX "OOV:"
#define LLR_FEAT_OOV LLR_OOV_PREFIX "@oov"
#define LLR_FEAT_OOV_HS_KNOWN LLR_OOV_PREFIX "HS:@known"

/* token <-> id with counts.  Ids are dense; after llr_vocab_sort they are
 * in DESIGN order: count descending, ties in byte order. */
typedef struct llr_vocab llr_vocab;
llr_vocab *llr_vocab_new(void);
void llr_vocab_free(llr_vocab *v);
/* Add count to token (creating it). Returns its id or <0. */
int32_t llr_vocab_add(llr_vocab *v, const char *tok, size_t len, int64_t count);
/* Count the tokens of one sentence (llr_token_next), plus one </s>. */
int llr_vocab_count_line(llr_vocab *v, const char *line, size_t len, llr_err *err);
/* Re-number by count descending, ties in byte order. */
int llr_vocab_sort(llr_vocab *v, llr_err *err);
/* Read `token<TAB>count` lines, adding counts (merging). */
int llr_vocab_read(llr_vocab *v, llr_lines *l, llr_err *err);
size_t llr_vocab_size(const llr_vocab *v);
int32_t llr_vocab_id(const llr_vocab *v, const char *tok, size_t len); /* -1 absent */
const char *llr_vocab_token(const llr_vocab *v, int32_t id);
int64_t llr_vocab_count(const llr_vocab *v, int32_t id);

/* ------------------------------------------------------------- features */

/* Features computed from the string alone, for any word, seen or not;
 * stored in the features stream and the model so score/gen can featurize
 * an unseen word exactly as featurize did. */
typedef struct llr_extractors {
	int ortho;              /* orthographic classes (ORTH:...) */
	int suffix;             /* SUF: suffixes of 1..suffix characters, 0 = off */
	int ngram_min, ngram_max; /* CNG: character n-grams with ^ $ markers, 0 = off */
} llr_extractors;

/* Call emit(name, len, value, ctx) (llr_feature_fn, in the models
 * section) for every feature of word (UTF-8); name is NUL-terminated and
 * valid during the call only.  A name may be emitted more than once (a
 * repeated n-gram): callers treat features as a set.  Names are listed in
 * featurize(1).  Returns LLR_OK, LLR_EUTF8 for invalid UTF-8, or the
 * first negative value emit returned. */
int llr_extract(const llr_extractors *x, const char *word, size_t len, llr_feature_fn emit, void *ctx);
/* 1 if this library was built with hunspell (llr_morph_* work), else 0. */
int llr_have_hunspell(void);
/* meta round trip: keys extract.ortho, extract.suffix, extract.ngrams. */
int llr_extractors_to_meta(const llr_extractors *x, llr_meta *m);
int llr_extractors_from_meta(llr_extractors *x, const llr_meta *m, llr_err *err);

/* ---------------------------------------------------------------- CoNLL-U */

/* One CoNLL-U line, parsed in place (fields point into the line, which the
 * parser modifies).  kind: 0 a syntactic word (integer ID), 1 a multiword
 * token range ("1-2"), 2 an empty node ("3.1"); comments and blank lines
 * are the caller's business. */
typedef struct llr_conllu_word {
	int kind;
	const char *id, *form, *lemma, *upos, *xpos, *feats, *head, *deprel, *deps, *misc;
	int range_first, range_last; /* for kind 1 */
} llr_conllu_word;

/* Parse a non-comment, non-blank line of 10 tab-separated columns (tabs
 * become NULs; line[len] must exist and is set to NUL, as with lines from
 * llr_lines_next); on error LLR_EFORMAT with a reason (the caller prefixes
 * file:line).  Empty columns and malformed IDs are errors. */
int llr_conllu_parse(char *line, size_t len, llr_conllu_word *w, llr_err *err);
/* Split FEATS ("Gender=Fem|PronType=Int,Rel" or "_") into tags
 * "Gender:Fem", "PronType:Int", "PronType:Rel", calling emit for each;
 * LLR_EFORMAT on a malformed pair. */
int llr_conllu_feats(const char *feats, llr_feature_fn emit, void *ctx, llr_err *err);

/* ------------------------------------------------------ features stream */

/* An n-gram model and its use as a context-dependent background (the
 * n-gram models section below). */
typedef struct llr_ngram llr_ngram;
typedef struct llr_ngram_bg llr_ngram_bg;
typedef struct llr_spelling llr_spelling;
typedef struct llr_anyword llr_anyword;
typedef struct llr_opensig llr_opensig;
typedef struct llr_fsa llr_fsa;

/* What featurize writes and train reads (kind "features"), also the word
 * model part of a model file.  See llrnn-tensor(5). */
typedef struct llr_lexicon {
	llr_strmap *vocab;     /* V tokens in id order, includes </s> and <unk> */
	llr_strmap *features;  /* F output feature names in column order */
	llr_strmap *features_in; /* input feature names if psi differs, else NULL */
	llr_csr *phi;          /* V x F */
	llr_csr *psi;          /* V x F_in, or NULL: psi = phi */
	float *logb;           /* V: log background, finite where p > 0 */
	int32_t eos_id, unk_id;
	llr_extractors extract;
	llr_meta *meta;        /* everything else featurize recorded */
	/* NULL, or the n-gram of a context-dependent background b(K; x)
	 * (featurize --background ngram:FILE), whose unigram level logb
	 * then is, and bg its mapping onto vocab (llr_ngram_bg_new); both
	 * owned, written and read with the other members */
	llr_ngram *ngram;
	llr_ngram_bg *bg;
	/* NULL, or the spelling model p_spell of open-vocabulary scoring
	 * (featurize --spelling N), owned, and spell_lambda, the open
	 * background's mass of the strings outside the vocabulary
	 * (llr_open_lambda), in (0, 1); see llr_openbg_new */
	llr_spelling *spell;
	double spell_lambda;
	/* NULL, or what the row of a string featurize never saw needs
	 * beyond the extractors (llr_lexicon_any_row): the lexicon sources'
	 * entries, an embedded hunspell dictionary;
	 * owned, written and read with the other members (any/...) */
	llr_anyword *any;
	/* NULL, or the signature masses M(sig) of the strings outside the
	 * vocabulary (llr_lexicon_estimate_sigs; lib/lexicon/opensig.c), owned,
	 * written and read with the other members (sig/...) */
	llr_opensig *sig;
	/* NULL, or the automaton of an automaton background b_fsa(q; x)
	 * (featurize --background fsa:FILE or regex:PATTERN) over vocab,
	 * a factor of b: 0 outside the language; owned, written and read
	 * with the other members (fsa/..., after sig/) */
	llr_fsa *fsa;
} llr_lexicon;

/* Limits featurize and the readers enforce (LLR_ERANGE beyond them). */
#define LLR_MAX_VOCAB ((int32_t)1 << 27)    /* V */
#define LLR_MAX_FEATURES ((int32_t)1 << 24) /* F and F_in */

void llr_lexicon_free(llr_lexicon *x);
/* The meta keys of a lexicon, to put in the meta given to llr_tw_open
 * before llr_lexicon_write: vocab_size, n_features, n_features_in, eos_id,
 * unk_id, psi=same|own, extract.*, then every entry of x->meta (if any)
 * except format, version, kind and those keys. */
int llr_lexicon_to_meta(const llr_lexicon *x, llr_meta *m);
/* Write the members vocab (text, one token a line), features (text, one
 * name a line)[, features_in], phi/indptr phi/indices phi/data[, psi/...],
 * logb (float32 [V]), and with an n-gram background the n-gram's trie as
 * bg/vocab, bg/1/logp, bg/1/backoff, bg/1/child, bg/2/word... (the
 * members of llr_ngram_save under bg/; its sizes in the meta as
 * bg.order, bg.ngram.N), then with a spelling model its character n-gram
 * the same way under spell/ (meta spell.order, spell.ngram.N, and
 * spell.lambda), then with x->any its any/ members
 * (llr_lexicon_any_row); the meta member is the writer's (see above). */
int llr_lexicon_write(llr_tensor_writer *w, const llr_lexicon *x, llr_err *err);
/* Read those members: the first is the next member of r (right after
 * llr_tr_open, or after the caller's own members), the last is logb (or
 * the n-gram's last, when the meta has bg.order: then logb must be the
 * n-gram's unigram level, or LLR_EFORMAT; then the spelling model's, when
 * the meta has spell.order: spell.lambda must be in (0, 1)), so
 * the caller goes on with llr_tr_next for its own members.  Sizes, eos_id,
 * unk_id and the extractors come from llr_tr_meta(r); every member is
 * checked against them (messages name the member).  *out: caller frees
 * with llr_lexicon_free; out->meta is a copy of the reader's meta. */
int llr_lexicon_read(llr_tensor_reader *r, llr_lexicon **out, llr_err *err);
/* LLR_OK when x is y: the same vocabulary, features, phi, psi, background
 * and </s>, <unk> ids (the extractors and meta are not compared);
 * otherwise LLR_EFORMAT with the first difference, naming y and x as
 * yname and xname ("vocabularies differ (12 in yname, 13 in xname)"). */
int llr_lexicon_same(const llr_lexicon *y, const llr_lexicon *x, const char *yname, const char *xname, llr_err *err);

/* ------------------------------------------------- lexicon: unseen words */

/* The feature row of a word, seen or not: for a vocabulary word its row of
 * phi (input_side 0) or psi (input_side 1); for an unseen word the
 * extractor features that exist among the model's features, plus
 * TOP:@notTop when that feature exists.  cols/vals hold up to cap entries,
 * sorted by column; *n is the count.  LLR_ERANGE if cap is too small. */
int llr_lexicon_word_row(const llr_lexicon *x, const char *word, size_t len, int input_side, int32_t *cols, float *vals, size_t cap, size_t *n, llr_err *err);

/* ------------------------------------ lexicon: features of any string */

/* The row featurize would give the string word if it were a vocabulary
 * word past the top M (lib/features/anyword.c), in x's columns (phi's, or
 * with input_side psi's), features x does not have dropped: TOP:@notTop
 * (when featurize ran with --top M > 0, or the meta does not say), the
 * lexicon sources' entry for word (x->any keeps them all), the hunspell
 * analyses of the embedded dictionary, and the extractors' features.  Zero values dropped, sorted by column,
 * the first of repeated columns kept; the row may be empty.  A word that
 * is not valid UTF-8 gets no string features.  For a vocabulary word past
 * the top M this is its row of phi (tests/58-open-features.bats checks
 * it).  A string outside V' (not in x->vocab, or <unk>) also gets
 * LLR_FEAT_OOV, and LLR_FEAT_OOV_HS_KNOWN when the dictionary knows it,
 * if x has those features (no word of V has them).  Opens the embedded dictionary on first use: not safe to call from
 * several threads at once on the same x.  LLR_ERANGE if cap is too small,
 * LLR_EINVAL when x embeds a dictionary and this library was built
 * without hunspell. */
int llr_lexicon_any_row(const llr_lexicon *x, const char *word, size_t len, int input_side, int32_t *cols,
                        float *vals, size_t cap, size_t *n, llr_err *err);
/* Give x the lexicon sources' entries: words (distinct) and their rows (a
 * words x F matrix in phi's columns).  Takes both, even on failure. */
int llr_lexicon_set_words(llr_lexicon *x, llr_strmap *words, llr_csr *rows, llr_err *err);
/* Embed the hunspell dictionary at path (as llr_morph_open takes it: the
 * .aff and .dic files, their bytes as they are) so that any_row analyses
 * an unseen word with it.  The meta records its name and sizes. */
int llr_lexicon_set_hunspell(llr_lexicon *x, const char *path, llr_err *err);
/* The entries set by llr_lexicon_set_words (0 when none), and whether a
 * dictionary is embedded. */
size_t llr_lexicon_any_words(const llr_lexicon *x);
int llr_lexicon_any_hunspell(const llr_lexicon *x);
/* Free x->any's content (for a lexicon not freed by llr_lexicon_free). */
void llr_anyword_free(llr_anyword *a);

/* -------------------------------------------------------------- hunspell */

/* Morphological analyses from a hunspell dictionary (featurize --hunspell).
 * Only when llr_have_hunspell() is 1; otherwise llr_morph_open fails with
 * LLR_EINVAL.  path is the dictionary without suffix (".../fr_FR") or its
 * .dic or .aff file. */
typedef struct llr_morph llr_morph;
llr_morph *llr_morph_open(const char *path, llr_err *err);
/* The same from a dictionary's bytes (aff_len bytes of .aff, dic_len of
 * .dic), written to a private temporary directory for hunspell to read
 * and removed once it has. */
llr_morph *llr_morph_open_mem(const char *aff, size_t aff_len, const char *dic, size_t dic_len, llr_err *err);
/* emit HS:<field>:<value> for every kept field (po: is: ds: ts: dp: ip:
 * tp: fl:) of every analysis of word (UTF-8); stems and other free-text
 * fields (st: al: pa: sp: ...) are skipped; first LLR_FEAT_HS_KNOWN if
 * the word has an analysis at all.  A name may repeat.  LLR_OK, the
 * first negative emit value, or LLR_EINVAL for a word hunspell cannot
 * take (embedded NUL, not UTF-8 for the dictionary's encoding). */
#define LLR_FEAT_HS_KNOWN "HS:@known"
int llr_morph_features(llr_morph *m, const char *word, size_t len, llr_feature_fn emit, void *ctx);
void llr_morph_close(llr_morph *m);

/* ------------------------------------------------------------ featurize */

/* Building a features stream (kind "features") from a corpus of token
 * lines and feature sources: what featurize(1) does, option for option
 * (lib/featurize/).  Fill llr_featurize_opts, then llr_featurizer_new,
 * llr_featurizer_build, and llr_featurizer_write (or read the lexicon
 * with llr_featurizer_lexicon, as --dump does).  Messages on bad input
 * name the file and line, as featurize(1) prints them after "featurize: ". */

/* Feature sources, in column order; llr_featurize_source_name gives the
 * names the meta keys sources and sources_in use ("top", "conllu", ...). */
enum { LLR_FZ_TOP,
       LLR_FZ_CONLLU,
       LLR_FZ_TAGGED,
       LLR_FZ_LEXICON,
       LLR_FZ_HUNSPELL,
       LLR_FZ_ORTHO,
       LLR_FZ_SUFFIX,
       LLR_FZ_NGRAMS,
       LLR_FZ_OOV, /* --spelling: the strings outside the vocabulary (LLR_OOV_PREFIX) */
       LLR_FZ_NSRC };
const char *llr_featurize_source_name(int src);

/* The background b: unigram with add-k (bg_k), uniform, a file of
 * token<TAB>probability (bg_file), or an n-gram LM (bg_file). */
enum { LLR_FZ_BG_UNIGRAM, LLR_FZ_BG_UNIFORM, LLR_FZ_BG_FILE, LLR_FZ_BG_NGRAM };

/* A file-reading feature source: kind LLR_FZ_CONLLU, LLR_FZ_LEXICON or
 * LLR_FZ_TAGGED, read in the order given. */
typedef struct llr_fz_source {
	int kind;
	const char *path;
} llr_fz_source;

/* Progress of the reading: LLR_FZ_BEGIN before a pass over inputs (paths,
 * npaths: all of them, for the share read), LLR_FZ_OPEN as one is opened
 * (path, lines), LLR_FZ_STEP after each line (n lines or pairs of unit,
 * tokens so far), LLR_FZ_END when the pass is over. */
enum { LLR_FZ_BEGIN, LLR_FZ_OPEN, LLR_FZ_STEP, LLR_FZ_END };
typedef struct llr_fz_progress {
	int at;
	char *const *paths;
	int npaths;
	const char *path;
	const llr_lines *lines;
	const char *unit;
	long long n, tokens;
} llr_fz_progress;

/* The kinds of featurize's automaton background (--background fsa:,
 * regex:, grammar:). */
typedef enum { LLR_FZ_BG_FSA, LLR_FZ_BG_REGEX, LLR_FZ_BG_GRAMMAR } llr_fz_automaton_kind;

typedef struct llr_featurize_opts {
	char *const *files; /* the corpus: token files ("-" standard input), at least one */
	int nfiles;
	int dump;               /* only the lexicon: no any/ rows, the corpus not mapped to ids */
	int top;                /* TOP:word identities of the top M words */
	int min_count;          /* drop features on fewer types (TOP excepted), 0 = none */
	int vocab_lex;          /* --vocab-from corpus+lexicon */
	int lex_vocab;          /* --lexicon-scope vocab */
	const char *vocab_file; /* --vocab: the vocabulary fixed; the corpus mapped as it is read */
	char *const *extra;     /* --extra token files */
	int nextra;
	const llr_fz_source *sources; /* --conllu, --lexicon, --tagged */
	int nsources;
	llr_extractors extract; /* --ortho, --suffix, --char-ngrams */
	const char *hunspell;   /* --hunspell dictionary, or NULL */
	llr_tokprof tok;        /* -l, --nfkc, --lang; lower 1: lowercase the lexicons, norm NFKC: NFKC them */
	int bg;                 /* LLR_FZ_BG_* */
	double bg_k;
	const char *bg_file;
	const char *source;     /* --source: parallel data, files[0] its target */
	int spelling;           /* --spelling N, 0 = none */
	long sig_samples;       /* --signature-samples, 0 = exact where possible */
	int no_oov;             /* --no-oov-features */
	unsigned in_mask;       /* sources of psi (1 << LLR_FZ_*), 0 = psi is phi */
	/* Called, when set, with the progress of the reading (the tokens of a
	 * line are counted only then) and with each note featurize prints on
	 * stderr (a line, without the tool's name), with ctx. */
	void (*progress)(void *ctx, const llr_fz_progress *p);
	void (*note)(void *ctx, const char *msg);
	void *ctx;
	/* --background fsa:FILE, regex:PATTERN or grammar:FILE (bg_fsa the
	 * file or the pattern, bg_fsa_kind which): an automaton or a GBNF
	 * grammar over the vocabulary whose weights multiply the background
	 * (bg), NULL none; skip_rejected: a corpus sentence it rejects is
	 * skipped and counted (stats.rejected), not an error */
	const char *bg_fsa;
	llr_fz_automaton_kind bg_fsa_kind;
	int skip_rejected;
} llr_featurize_opts;
/* Everything off, the background unigram:0.5, tok unknown. */
void llr_featurize_opts_init(llr_featurize_opts *o);

/* What a build counted, for featurize's summary. */
typedef struct llr_featurize_stats {
	int32_t types, features;              /* V and F */
	int64_t per_source[LLR_FZ_NSRC];      /* kept features by source */
	int streamed;                         /* with vocab_file: the stream_* counts */
	int64_t word_tokens, covered_tokens;  /* the vocabulary's counts, and those with a non-TOP feature */
	int64_t stream_tokens, stream_sentences, stream_unknown, stream_signatures, stream_covered;
	int64_t source_lines, source_empty, source_tokens; /* --source */
	size_t source_types;
	int64_t rejected; /* sentences the automaton background rejected (skip_rejected) */
} llr_featurize_stats;

typedef struct llr_featurizer llr_featurizer;
/* A builder for o (copied; the strings and arrays it points to must
 * outlive the builder).  Caller frees with llr_featurizer_free. */
llr_featurizer *llr_featurizer_new(const llr_featurize_opts *o, llr_err *err);
/* Read the sources and the corpus, build the vocabulary, phi and psi, the
 * background, the meta and with spelling the spelling model and the
 * signature masses.  With vocab_file the corpus is read only as far as
 * its first sentence; llr_featurizer_write reads the rest. */
int llr_featurizer_build(llr_featurizer *f, llr_err *err);
/* The lexicon built (NULL before llr_featurizer_build). */
const llr_lexicon *llr_featurizer_lexicon(const llr_featurizer *f);
/* Write the stream to path ("-" or NULL standard output; compressed by
 * its suffix): the lexicon, the source side, the corpus as ids.  Nothing
 * is left at path on failure. */
int llr_featurizer_write(llr_featurizer *f, const char *path, llr_err *err);
const llr_featurize_stats *llr_featurizer_stats(const llr_featurizer *f);
void llr_featurizer_free(llr_featurizer *f);

/* --------------------------------------------------------------- network */

/* The LSTM language model of DESIGN section 1.  One code path for both
 * outputs: the softmax RNN is the log-linear layer with phi = identity and
 * uniform b.  Layout: time-major, position n = t * B + b. */

/* LLR_OUT_TREE and LLR_OUT_CLASSES are the factored softmaxes of
 * Jernite's thesis, chapter 3 (treeout.h): a tree of softmaxes over the
 * words, learned along with the network (llr_net_tree_learn), and its
 * baseline, the frequency-binned two-level class softmax.  Both give
 * exact normalised probabilities. */
enum { LLR_OUT_LOGLINEAR = 1, LLR_OUT_SOFTMAX = 2, LLR_OUT_TREE = 3, LLR_OUT_CLASSES = 4 };

/* The input of the LSTM (Jernite's thesis, chapter 2; Kim, Jernite,
 * Sontag & Rush 2016): the embedding of the psi features (LLR_IN_WORD;
 * for a softmax, tree or classes output psi is the identity, a word
 * embedding), or a word vector built from the word's characters by a
 * convolution and highway layers (LLR_IN_CHARS), or both: LLR_IN_CONCAT
 * puts the two side by side (the LSTM sees E + D numbers), LLR_IN_SUM
 * adds them (the character vector then has E numbers: the filters must
 * sum to the embedding size). */
enum { LLR_IN_WORD = 0, LLR_IN_CHARS = 1, LLR_IN_CONCAT = 2, LLR_IN_SUM = 3 };
#define LLR_MAX_CHAR_WIDTHS 16

#define LLR_BOS_ID (-1) /* input id of <s> (it has its own embedding) */

typedef struct llr_net_config {
	int32_t vocab;     /* V */
	int32_t feat_out;  /* F: columns of phi (softmax: V) */
	int32_t feat_in;   /* F_in: columns of psi (softmax: V) */
	int32_t embed;     /* embedding size (default 256) */
	int32_t hidden;    /* LSTM size (default 256) */
	int32_t layers;    /* LSTM layers (default 2) */
	float dropout;     /* between layers, training only */
	int output;        /* LLR_OUT_* */
	/* character-aware input (input != LLR_IN_WORD) */
	int input;          /* LLR_IN_* */
	int32_t char_vocab; /* code points of the character vocabulary */
	int32_t char_embed; /* character embedding size */
	int char_nw;        /* filter widths, 1 .. LLR_MAX_CHAR_WIDTHS */
	int32_t char_width[LLR_MAX_CHAR_WIDTHS], char_filters[LLR_MAX_CHAR_WIDTHS];
	int highway;        /* highway layers after the convolution */
	/* tree (classes: depth 2, arity = the number of classes, cap 0);
	 * 0 = a default chosen by llr_net_new from V, visible in llr_net_cfg */
	int tree_depth, tree_arity;
	int32_t tree_cap;   /* words per group at most (tree) */
	/* the recurrent cell (LLR_CELL_*; 0, the LSTM, by default); the
	 * variable-computation cells (Jernite's thesis section 2.4, one
	 * layer) with their mask's sharpness lambda > 0 */
	int cell;
	float vc_lambda;
} llr_net_config;

/* The recurrent cells: the LSTM, and the variable-computation RNN and
 * GRU (lib/nn/vc.c), whose tensors are vc0/wx (Din x G H), vc0/wh (H x
 * G H), vc0/bx (G H), vc0/bh (G H, VCGRU only), vc0/u (Din + H) and
 * vc0/ub (1): G = 1 for the VCRNN, 3 for the VCGRU (columns
 * dimension-major).  The dense GRU and Elman RNN (h_t = tanh(x_t wx +
 * h_{t-1} wh + bx)) are the same cells with every dimension updated and
 * no scheduler: tensors gru0/wx, gru0/wh, gru0/bx, gru0/bh and rnn0/wx,
 * rnn0/wh, rnn0/bx, no u or ub.  Every cell but the LSTM has one layer. */
enum { LLR_CELL_LSTM = 0, LLR_CELL_VCRNN = 1, LLR_CELL_VCGRU = 2, LLR_CELL_GRU = 3, LLR_CELL_RNN = 4, LLR_CELL_COUNT = 5 };
/* The cell's name as the model file and train --cell spell it ("lstm",
 * "gru", "rnn", "vcrnn", "vcgru"; static), NULL for no cell. */
const char *llr_cell_name(int cell);
/* 1 for a variable-computation cell (a scheduler and its mask), else 0. */
int llr_cell_is_vc(int cell);

typedef struct llr_net llr_net;
/* phi (V x F), psi (V x F_in, NULL = phi) and logb (V) are borrowed and
 * must outlive the net, unchanged (the output layer groups the words of
 * identical phi rows, with their summed background, here); for
 * LLR_OUT_SOFTMAX all three are ignored (pass NULL) and the net uses
 * identity features and a uniform background. */
llr_net *llr_net_new(const llr_net_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err);
/* llr_net_new without room for the parameters and gradients yet, for a
 * loader: llr_net_params_grow(net, n) makes room for the first n
 * parameters (zero, those before kept; n at most llr_net_params' count)
 * and returns the array, NULL on failure; at the full count the
 * gradients too.  A loader grows it tensor by tensor as their data
 * arrives, so a meta that declares a huge network over a file that ends
 * is not allocated first. */
llr_net *llr_net_new_empty(const llr_net_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err);
float *llr_net_params_grow(llr_net *net, size_t n, llr_err *err);
void llr_net_free(llr_net *net);
const llr_net_config *llr_net_cfg(const llr_net *net);
/* All parameters are one flat array; gradients have the same layout. */
float *llr_net_params(llr_net *net, size_t *n);
float *llr_net_grads(llr_net *net, size_t *n);
/* The parameter tensors, in a fixed order: name ("embed", "lstm0/wx"...),
 * shape and offset into the flat array.  The order is embed (F_in x E),
 * bos (E), then per layer L lstmL/wx (Din x 4H), lstmL/wh (H x 4H),
 * lstmL/b (4H), then out/w (F x H), out/b (F).  The 4H gate columns are
 * in the order input, forget, output gates, then the tanh candidate. */
size_t llr_net_n_tensors(const llr_net *net);
void llr_net_tensor_info(const llr_net *net, size_t i, const char **name, int *ndim, int64_t shape[2], size_t *offset);
/* The parameters of the tensor called name ("embed", "out/b"...) in
 * llr_net_params, its shape into shape (may be NULL), or NULL if the net
 * has none. */
float *llr_net_tensor(llr_net *net, const char *name, int64_t shape[2]);
/* Fresh weights from rng, deterministically: every matrix and bos
 * uniform in [-0.08, 0.08), LSTM biases 0 except the forget gate's 1,
 * out/b 0 (so an untrained LL-RNN predicts its background b). */
void llr_net_init(llr_net *net, llr_rng *rng);
/* Initialisation schemes: LLR_INIT_UNIFORM is llr_net_init's; with
 * LLR_INIT_TORCH the weights are drawn as PyTorch's nn.Embedding, nn.LSTM
 * and nn.Linear draw theirs (embed and bos N(0, 1); LSTM and output
 * matrices U(+-1/sqrt(H)); the LSTM bias the sum of two such draws, as
 * torch's b_ih + b_hh; out/b U(+-1/sqrt(H))), for comparisons with a
 * PyTorch model. */
enum { LLR_INIT_UNIFORM = 0, LLR_INIT_TORCH = 1 };
void llr_net_init_scheme(llr_net *net, llr_rng *rng, int scheme);

typedef struct llr_batch {
	int B, T;              /* B sequences, T steps (padded) */
	const int32_t *input;  /* T x B: row ids of psi, LLR_BOS_ID for <s> */
	const int32_t *target; /* T x B: vocabulary ids to predict, -1 = padding */
	const llr_csr *psi;    /* NULL: the net's psi; else a matrix with F_in
	                          columns whose rows the input ids index (score
	                          uses it for unseen words) */
	/* Scoring an open vocabulary only (llr_net_set_open): NULL, or the
	 * rows (F columns) of targets outside the vocabulary: target V + i
	 * is the string whose row of phi is row i, its log background
	 * xlogb[i].  Without xphi, an open net's target V + s is signature
	 * s (training's way) */
	const llr_csr *xphi;
	const float *xlogb;
	/* llr_net_score of a net with a scheduler (a variable-computation
	 * cell) only: NULL, or T x B floats that receive m_t, the scheduler's
	 * output at the step of each position (0 at padding). */
	float *sched;
} llr_batch;

/* Forward and backward over a batch: *nll = sum of -log p(target) over
 * non-padding positions, *ntok = their number; gradients are ADDED to
 * llr_net_grads (the caller zeroes them).  Dropout (inverted: kept units
 * scaled by 1/(1-p)) is applied to the output of every LSTM layer when
 * rng is not NULL.  Each sequence starts from a zero state.  At a padding
 * position (target -1) the input may be anything: an id out of range is
 * read as a zero embedding; padding must come after a sequence's last
 * real position.  Uses llr_blas_threads() threads, also for the sparse
 * output loops.  LLR_EINVAL on an id out of range, LLR_ENAN if the loss
 * is not finite. */
int llr_net_train_step(llr_net *net, const llr_batch *bt, llr_rng *rng, double *nll, int64_t *ntok, llr_err *err);

/* Row-sparse gradients.  A block is a rows x cols matrix of the flat
 * parameter array starting at off; after llr_net_train_step the
 * gradient of the block's rows that are not listed in row (ascending,
 * nrow of them) is exactly zero: the rows of the input embedding the
 * batch's inputs did not use, and a tree or class output's rows of the
 * words outside the batch's target groups.  The blocks are in ascending
 * order of off and do not overlap. */
typedef struct llr_rows {
	size_t off;
	int32_t rows, cols;
	const int32_t *row;
	int32_t nrow;
} llr_rows;
/* The blocks of the last llr_net_train_step (net-owned, valid until the
 * next call): their count (0: every gradient may be nonzero), or
 * LLR_ENOMEM. */
int llr_net_rows(llr_net *net, const llr_rows **blocks, llr_err *err);
/* Forward only: logp[t*B+b] = log p(target) (0 at padding).  If norm_err is
 * not NULL it receives sum_x p(x) - 1 (signed) at the position where its
 * magnitude is largest (NaN if any is).  bt->sched, if set, gets the
 * scheduler's m_t (LLR_EINVAL for a net without a scheduler). */
int llr_net_score(llr_net *net, const llr_batch *bt, float *logp, double *norm_err, llr_err *err);
/* The norm check's figures over the positions of a call: err the signed
 * deviation sum p - 1 of largest magnitude (norm_err), se the standard
 * error of the check's estimate of it there (0 where the sum is exact, as
 * over a closed vocabulary; with llr_net_set_norm_rows the part outside V
 * is an importance-sampling estimate), lo and hi the largest |dev| -
 * LLR_NORM_Z se and |dev| + LLR_NORM_Z se over the positions: lo > tol
 * says a deviation is beyond tol beyond the check's error, hi <= tol that
 * every one is within it. */
#define LLR_NORM_Z 3.0
typedef struct llr_norm_stat {
	double err, se, lo, hi;
} llr_norm_stat;
/* The figures of the last llr_net_score call with norm_err. */
llr_norm_stat llr_net_norm(const llr_net *net);
/* An open vocabulary (issue 14; lib/lm/open.c sets it up from a
 * model): the log-linear output's background over the V words becomes
 * logb_v (V entries; -inf takes a word out, as <unk>), and S signature
 * rows sig_phi (S x F) with log masses sig_logb (S) join the
 * normalisation: Z = sum_v b_v e^{a.phi_v} + sum_s e^{sig_logb[s] +
 * a.phi_s}, one pass over the classes of the V + S rows (llclass.c).
 * Then llr_batch's xphi rows score strings outside V; the scoring copies
 * of llr_net_set_score_threads read this open output too.  Training
 * (llr_net_train_step) takes a string outside V as target V + s, s its
 * signature (loss -(sig_logb[s] + a.phi_s - log Z), the constant
 * ln q(w) - ln M(s) aside; gradient E_p[phi] - phi_s), never xphi rows;
 * so does scoring without xphi.  Copies what it needs. */
int llr_net_set_open(llr_net *net, const float *logb_v, const llr_csr *sig_phi, const float *sig_logb, llr_err *err);
/* The log-linear output's features in G <= 4 groups (group_of, F
 * entries, each in [0, G)), such as an open vocabulary's suffixes,
 * orthographic classes and the rest: llr_net_score's loss (without the
 * full distribution or the norm check) and llr_net_train_step's gradient
 * then sum Z and E_p[phi] over products of the groups' exponentials, each
 * distinct part of a row once (llfactor.c), when that is cheaper than the
 * pass over the rows.  The same numbers up to float rounding.  1 if the factors are used, 0 if not (no gain, or an
 * output without classes); LLR_EINVAL, LLR_ENOMEM.  Call again after
 * llr_net_set_open, which drops them. */
int llr_net_set_out_groups(llr_net *net, const int32_t *group_of, int G, llr_err *err);
/* Entries a position of llr_net_step's logp has: V, or after
 * llr_net_set_open V + S, entry V + s the log-probability of the strings
 * of signature s together, sig_logb[s] + a.phi_s - log Z. */
int32_t llr_net_out_width(const llr_net *net);
/* A variable-computation net (cell LLR_CELL_VCRNN or LLR_CELL_VCGRU): the
 * mask's sharpness lambda > 0 from now on (saved in the config), and the
 * symmetric L1 penalty weight * |m_t - target| on the scheduler's m_t of
 * every predicted position, whose gradient llr_net_train_step adds (not
 * its nll: that stays the language model's).  No effect on other cells. */
void llr_net_set_vc(llr_net *net, float lambda, float target, float weight);
/* The multiply-adds the recurrent layer's forward passes counted since
 * the net was made (*macs: those the masks keep, the thesis's count),
 * those they also did past the masks (*padded: the rows a step computes
 * with the wider rows above them, for fewer and larger products), over
 * *positions positions, and the dense cell's per position (*dense: the
 * same cell with every dimension updated).  0 for a cell that is not
 * variable-computation. */
void llr_net_vc_macs(const llr_net *net, uint64_t *macs, uint64_t *padded, uint64_t *positions, double *dense);
/* After llr_net_set_open: rows (K x F, borrowed) that llr_net_score's
 * norm check adds to its exact sum over V: importance samples of the mass
 * outside V, row k standing for count[k] of the draws, each of weight
 * e^{logw[k]}, so the estimate is sum_k count[k] / draws exp(logw[k] +
 * a.phi_k - log Z), with its standard error (llr_net_norm) from the
 * draws' spread.  Leading rows of count 0 are strings summed exactly
 * instead, of total weight e^{logw[k]}: they add exp(logw[k] + a.phi_k -
 * log Z) and no variance.  NULL removes them; LLR_EINVAL unless the other
 * counts are positive and sum to draws. */
int llr_net_set_norm_rows(llr_net *net, const llr_csr *phi, const float *logw, const int64_t *count, int64_t draws,
                          llr_err *err);
/* Score on n threads: llr_net_score then splits a batch of B > 1 streams
 * into min(n, B) groups, dealt in turn in order of length (longest first,
 * ties by stream), and scores the groups at the same time, group 0 on the
 * calling thread, each on its own copy of the network's workspace (the
 * copies share the weights: change none during a call).  A stream's
 * log-probabilities are those llr_net_score gives its group alone, so
 * they can differ from a one-thread call by float rounding only (the same
 * kernels run on fewer rows), and not at all under
 * llr_blas_set_fixed_order; norm_err is the groups' largest in magnitude.
 * Each group still uses llr_blas_threads() BLAS threads: the caller sets
 * that (1 is best on the small products of scoring).  n <= 1 goes back to
 * one thread.  LLR_ENOMEM (the net then scores on one thread). */
int llr_net_set_score_threads(llr_net *net, int n, llr_err *err);

/* The spellings the character-aware input reads: the character
 * vocabulary (code points, ascending) and, for every input id, the word
 * as character ids: ids 0 .. V-1 are the vocabulary's words, and
 * llr_words_add gives any other word (seen or not) an id from V on.
 * Characters outside the vocabulary share one id; <s> </s> <unk> have
 * their own. */
typedef struct llr_words llr_words;
/* cps NULL: the characters of vocab's words (special tokens excluded). */
llr_words *llr_words_new(const llr_strmap *vocab, const int32_t *cps, int32_t ncp, llr_err *err);
void llr_words_free(llr_words *w);
const int32_t *llr_words_chars(const llr_words *w, int32_t *ncp);
int32_t llr_words_size(const llr_words *w); /* V + words added */
/* The input id of a new word (V, V+1...), or LLR_ENOMEM. */
int32_t llr_words_add(llr_words *w, const char *word, size_t len, llr_err *err);
/* Forget the added words. */
void llr_words_reset(llr_words *w);

/* The spellings a character-aware net reads (borrowed; they must
 * outlive the net's use, and may grow with llr_words_add meanwhile).
 * An input id must then be below llr_words_size (and, with LLR_IN_CONCAT
 * or LLR_IN_SUM, a row of psi too). */
void llr_net_set_words(llr_net *net, const llr_words *w);

/* Tree and classes outputs.  The groups (the word -> leaf assignment,
 * V entries): from word counts (count[w]; NULL: ids are in frequency
 * order), frequency-binned classes or the tree's initial frequency
 * blocks; read back, and set from a model file (checked: LLR_EFORMAT). */
int llr_net_tree_from_counts(llr_net *net, const int64_t *count, llr_err *err);
const int32_t *llr_net_tree_groups(const llr_net *net); /* NULL: no tree */
int llr_net_tree_set_groups(llr_net *net, const int32_t *group, llr_err *err);
/* LLR_OUT_TREE: re-assign the words to the leaves from the hidden states
 * and targets sampled (a reservoir of 4096) by llr_net_train_step since
 * the last call (treeout.c describes the algorithm); *moved: words that
 * changed group.  Nothing happens without samples. */
int llr_net_tree_learn(llr_net *net, int32_t *moved, llr_err *err);

/* Step-by-step inference (gen, beam search): LSTM state for B streams,
 * zero after _new and _reset (the state before <s>).  _new returns NULL
 * when out of memory or B <= 0. */
typedef struct llr_net_state llr_net_state;
llr_net_state *llr_net_state_new(const llr_net *net, int B);
void llr_net_state_free(llr_net_state *s);
void llr_net_state_reset(llr_net_state *s);
/* Copy stream sb of src into stream db of dst (same net). */
void llr_net_state_copy(llr_net_state *dst, int db, const llr_net_state *src, int sb);
/* Feed one input id per stream (input[b], LLR_BOS_ID for <s>; psi as in
 * llr_batch) and get log p(x) for every x in V: logp is B x V, or after
 * llr_net_set_open B x (V + S), each word then each signature
 * (llr_net_out_width). */
int llr_net_step(llr_net *net, llr_net_state *s, const int32_t *input, const llr_csr *psi, float *logp, llr_err *err);

/* ------------------------------------------------------------ optimisers */

/* First-order optimisers over one flat parameter array (llr_net_params),
 * with the update rules and defaults of torch.optim:
 *   SGD      p -= lr g
 *   RMSprop  s = alpha s + (1 - alpha) g^2;  p -= lr g / (sqrt(s) + eps)
 *   Adam     m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
 *            p -= lr/(1 - b1^t) m / (sqrt(v)/sqrt(1 - b2^t) + eps)
 * Their state (moments, step count) is exposed so a model file can hold
 * it and training can resume exactly. */
enum { LLR_OPT_SGD = 1, LLR_OPT_RMSPROP = 2, LLR_OPT_ADAM = 3 };

typedef struct llr_optim_config {
	int kind;           /* LLR_OPT_* */
	float lr;           /* SGD 1, RMSprop 0.001, Adam 0.001 */
	float alpha;        /* RMSprop decay, 0.99 */
	float beta1, beta2; /* Adam, 0.9 and 0.999 */
	float eps;          /* 1e-8 */
} llr_optim_config;

/* The defaults above for kind (LLR_OPT_RMSPROP if kind is unknown). */
void llr_optim_defaults(llr_optim_config *c, int kind);
/* "sgd", "rmsprop", "adam" -> LLR_OPT_*, 0 if unknown; and back. */
int llr_optim_parse(const char *name);
const char *llr_optim_name(int kind);

typedef struct llr_optim llr_optim;
/* An optimiser for n parameters, state zeroed.  NULL with err on a bad
 * config (unknown kind, lr not finite and > 0...) or no memory. */
llr_optim *llr_optim_new(const llr_optim_config *c, size_t n, llr_err *err);
void llr_optim_free(llr_optim *o);
const llr_optim_config *llr_optim_cfg(const llr_optim *o);
size_t llr_optim_size(const llr_optim *o); /* n */
void llr_optim_set_lr(llr_optim *o, float lr);
/* RMSprop's and Adam's eps (> 0); SGD has none and ignores it. */
void llr_optim_set_eps(llr_optim *o, float eps);
/* One update of params[n] from grads[n] (grads are not modified). */
void llr_optim_step(llr_optim *o, float *params, const float *grads);
/* The same update from the gradient (grads[i] * scale) * coef, each
 * product rounded to float: the bits that llr_grad_scale_rows(grads,
 * scale) then a clipping by coef (llr_clip_coef) would leave in grads,
 * with the same result as those then llr_optim_step, in one pass and
 * without writing grads. */
void llr_optim_step_scaled(llr_optim *o, float *params, const float *grads, float scale, float coef);
/* Updates done so far (Adam's t); settable when restoring a state. */
int64_t llr_optim_steps(const llr_optim *o);
void llr_optim_set_steps(llr_optim *o, int64_t t);
/* State buffers, each n floats, readable and writable in place: SGD has
 * none, RMSprop one ("sq"), Adam two ("m", "v"). */
size_t llr_optim_n_state(const llr_optim *o);
float *llr_optim_state(llr_optim *o, size_t i, const char **name);

/* Euclidean norm of g[n], accumulated in double. */
double llr_grad_norm(const float *g, size_t n);
/* Scale g so its norm is at most max_norm (as torch's clip_grad_norm_:
 * factor max_norm / (norm + 1e-6) when below 1); max_norm <= 0 leaves g
 * alone.  Returns the norm before clipping (NaN/Inf if g is not finite,
 * and then g is left alone). */
double llr_clip_grad_norm(float *g, size_t n, double max_norm);
/* The factor llr_clip_grad_norm multiplies g by for a gradient of that
 * norm: 1 when max_norm <= 0, norm is not finite or the factor is not
 * below 1. */
float llr_clip_coef(double norm, double max_norm);
/* The norm of g[n] * scale (each product rounded to float, as
 * llr_grad_scale_rows leaves g), without writing g.  The squares are
 * summed in double in 8 interleaved partial sums (element i in sum i mod
 * 8, the sums added last), which vectorises; so it may differ from
 * llr_grad_norm in the last bits of the double. */
double llr_grad_norm_scaled(const float *g, size_t n, float scale);

/* The same for a gradient g[n] that is zero outside the listed rows of
 * the blocks b[0 .. nb) (llr_net_rows): only the rows listed and the
 * parameters in no block are read or written, with results identical to
 * the dense functions' (the norm sums the same terms in the same order).
 * llr_optim_step_rows is llr_optim_step: SGD and RMSprop update only those
 * rows (RMSprop's decay of the other rows' squares is caught up, one
 * multiplication per step as in llr_optim_step, when a row is next used
 * or the state is read through llr_optim_state); Adam, whose every
 * parameter moves at every step, stays dense.  llr_grad_zero_rows zeroes
 * what the others read, so g is all zero again. */
double llr_grad_norm_rows(const float *g, size_t n, const llr_rows *b, int nb);
double llr_clip_grad_norm_rows(float *g, size_t n, const llr_rows *b, int nb, double max_norm);
void llr_grad_scale_rows(float *g, size_t n, const llr_rows *b, int nb, float f);
void llr_grad_zero_rows(float *g, size_t n, const llr_rows *b, int nb);
/* LLR_ENOMEM (nothing done), LLR_EINVAL if the blocks are not the first
 * call's (the lazy RMSprop state is per row of those blocks). */
int llr_optim_step_rows(llr_optim *o, float *params, const float *g, const llr_rows *b, int nb, llr_err *err);

/* ----------------------------------------------------------------- model */

/* A model file (kind "model", llrnn-model(5)): the lexicon, the network
 * configuration and weights, and the training state for --resume. */
typedef struct llr_rnnlm {
	llr_lexicon *lex;
	llr_net *net;
	llr_words *words; /* character-aware input: the spellings the net reads
	                     (llr_net_set_words), else NULL */
	llr_meta *meta; /* hyperparameters and training summary */
} llr_rnnlm;

/* Load and check kind, version, every shape, finite weights. */
int llr_rnnlm_load(const char *path, llr_rnnlm **out, llr_err *err);
void llr_rnnlm_free(llr_rnnlm *m);

/* What train needs to continue a run (--resume), kept in the model file's
 * state/ members.  Counters are exact, so a resumed run with the same
 * options repeats the steps an uninterrupted run would take. */
typedef struct llr_train_state {
	int64_t epoch;      /* epochs completed */
	int64_t batch;      /* batches done in the next epoch (0 at an epoch end) */
	int64_t step;       /* optimiser updates so far */
	double epoch_nll;   /* -log p summed over the batches of the epoch so far */
	int64_t epoch_tok;  /* and their predicted tokens */
	double best_valid;  /* best validation log-perplexity, INFINITY if none */
	int64_t best_epoch; /* the epoch that reached it, 0 if none */
	double last_valid;  /* the previous epoch's, INFINITY if none (SGD schedule) */
	int64_t bad_epochs; /* epochs since the best (patience) */
	int halving;        /* SGD schedule: learning-rate halving has begun */
	int converged;      /* SGD or --lr-decay schedule: stop */
	int64_t decays;     /* --lr-decay schedule: decays done */
	int64_t stalls;     /* and epochs since the last gain of --min-improvement or decay */
	double lr;          /* learning rate now */
	llr_rng rng_epoch;  /* batch shuffling: generator at the start of the epoch */
	llr_rng rng;        /* dropout: generator now */
	llr_optim *optim;   /* borrowed by llr_rnnlm_save; owned after loading */
	float *best;        /* best weights (llr_net_params layout) when they differ
	                       from the current ones, else NULL; as optim */
} llr_train_state;

/* Frees optim and best too (a loaded state owns them). */
void llr_train_state_free(llr_train_state *s);

/* ------------------------------------------------------- training driver */

/* The one training loop of the families trained by gradient steps
 * (lib/train/): epochs of shuffled batches, the learning-rate schedule on
 * the validation loss, early stopping, a checkpoint at every epoch end
 * and on a signal, --resume from the training state, the sums of a
 * data-parallel run and the progress of it all as events.  A family
 * provides a job (llr_rnnlm_train_job, llr_encdec_train_job,
 * llr_senc_train_job): its batches,
 * one gradient, one update, validation and saving.  The driver never
 * prints: the program formats the events. */

/* One step's sums across the ranks of a run. */
typedef struct llr_train_sums {
	double nll;   /* -log p of the batch's predicted tokens */
	int64_t ntok; /* and their count */
	int signal;   /* a signal number, 0 none: the largest any rank saw */
	int time_up;  /* the time budget has run out on some rank */
} llr_train_sums;

/* The ranks of a data-parallel run (train --distributed).  libllrnn does
 * not link MPI: the program supplies these collective operations
 * (tools/train/dist.c).  Every rank trains on its share of every batch;
 * rank 0 validates and writes.  on 0: one process, rank 0 of 1, and the
 * operations are not called (NULL allowed). */
typedef struct llr_train_comm {
	int on, rank, size;
	void *ctx;
	/* g[0..n) and the sums summed (flags: the largest) across the ranks */
	void (*reduce_step)(void *ctx, float *g, size_t n, llr_train_sums *s);
	double (*bcast_f64)(void *ctx, double v);       /* rank 0's v */
	int (*any)(void *ctx, int flag);                /* set on any rank */
	void (*sum_i64)(void *ctx, int64_t *v, size_t n); /* in place */
	void (*bcast_i32)(void *ctx, int32_t *v, size_t n);
	int (*same)(void *ctx, uint64_t h); /* 1 when every rank passed h */
} llr_train_comm;

/* When training stops, and the schedule (train(1)).  With lr_decay, after
 * lr_patience epochs in a row that do not beat the best by min_impr, the
 * best weights come back and the rate is multiplied by lr_decay; once
 * lr_decays decays are done, the next stall stops training
 * ("converged").  Without it, SGD keeps the RNNLM halving schedule and
 * the other optimisers a constant rate. */
typedef struct llr_train_limits {
	int64_t epochs;     /* in all */
	int patience;       /* epochs without a new best (with validation) */
	double min_impr;    /* the schedules' threshold on the validation gain */
	double clip;        /* largest global gradient norm, 0 none */
	double max_time;    /* seconds of this run, 0 none */
	int64_t max_tokens; /* training tokens of this run, 0 none */
	double lr_decay;    /* 0: off */
	int lr_patience, lr_decays;
} llr_train_limits;

/* The limits into a model's meta (patience, max_epochs, clip,
 * min_improvement), the schedule (lr_decay, lr_patience, lr_decays, when
 * a decay was ever set; LLR_ENOMEM); and back from a resumed model's meta, for those a mask bit of
 * keep does not hold (LLR_LIM_*: given on the command line).  LLR_EFORMAT
 * for values out of range. */
enum {
	LLR_LIM_CLIP = 1,
	LLR_LIM_MIN_IMPR = 2,
	LLR_LIM_PATIENCE = 4,
	LLR_LIM_EPOCHS = 8,
	LLR_LIM_LR_DECAY = 16,
	LLR_LIM_LR_PATIENCE = 32,
	LLR_LIM_LR_DECAYS = 64,
};
int llr_train_limits_meta(const llr_train_limits *l, llr_meta *m);
int llr_train_schedule_meta(const llr_train_limits *l, llr_meta *m);
int llr_train_limits_resume(llr_train_limits *l, unsigned keep, const llr_meta *m, const char *path, llr_err *err);
/* A number of m, or dflt when absent or not a number. */
double llr_meta_num(const llr_meta *m, const char *key, double dflt);

/* What the driver reports (llr_train_opts.event). */
enum {
	LLR_TRAIN_START,  /* before the first step: valid is the untrained model's loss (NaN: none) */
	LLR_TRAIN_STEP,   /* after every step */
	LLR_TRAIN_EPOCH,  /* an epoch ended (saved) */
	LLR_TRAIN_CUT,    /* max-time or max-tokens ended the run inside an epoch (saved) */
	LLR_TRAIN_DONE,   /* the run ended (the model saved) */
};
typedef struct llr_train_event {
	int kind;
	const llr_train_state *ts;
	size_t batch, nbatches; /* STEP, CUT: batches done in the epoch, of */
	double loss;            /* STEP: the epoch's mean so far; EPOCH: the epoch's */
	double valid;           /* START, EPOCH: the validation loss, NaN none */
	int best;               /* EPOCH: valid is a new best */
	double lr;              /* EPOCH: the rate the epoch trained with */
	double tok_s;           /* STEP, EPOCH: training tokens per second */
	double seconds;         /* EPOCH: its duration */
	double eta, run_eta;    /* STEP: seconds left in the epoch and in the run */
	size_t params;          /* START */
	const char *stop;       /* CUT, DONE: why training stopped */
	int64_t run_tokens;     /* DONE: this run's training tokens */
	double run_seconds;     /* and the seconds its steps took */
} llr_train_event;

typedef struct llr_train_opts {
	const char *out;  /* the model file, rewritten at every epoch end */
	const char *log;  /* the learning curve as TSV (rank 0), NULL none */
	int resumed;      /* continuing a saved run: the log is appended to */
	int has_valid;    /* the job validates (early stopping, best weights) */
	llr_train_limits lim;
	const llr_train_comm *comm; /* NULL: one process */
	/* Set by the program's SIGINT and SIGTERM handler (the library
	 * installs none): the run saves and returns with res->signal. */
	const volatile sig_atomic_t *signal;
	void (*event)(void *ctx, const llr_train_event *ev); /* NULL: none */
	void *ctx;
} llr_train_opts;

typedef struct llr_train_result {
	const char *stop; /* "epochs", "patience", "converged", "max-time", "max-tokens", "interrupted" (every family's) */
	int signal;       /* the signal that interrupted the run, else 0 */
} llr_train_result;

/* A family's model with its data, being trained (opaque). */
typedef struct llr_train_job llr_train_job;
/* Train job from ts (fresh or loaded; its best weights are taken over)
 * until a limit stops it, saving o->out at every epoch end and at the
 * end.  LLR_ENAN when training diverged (the message says which file
 * keeps which epoch); else LLR_OK or another error. */
int llr_train_run(llr_train_job *job, llr_train_state *ts, const llr_train_opts *o, llr_train_result *res, llr_err *err);
void llr_train_job_free(llr_train_job *job);

/* ------------------------------------------------------ training options */

/* train(1)'s options, declared by the library: the options every family
 * trained by gradient steps shares (lib/family/options.c) and each
 * family's own, with what chooses a family (lib/family/<name>/).  A
 * program lists them (llr_train_option), records those given
 * (llr_train_args_give), lets the library choose the family and check
 * the values (llr_train_args_check), then builds the chosen family's job
 * (llr_train_build) or, for a family not trained by gradient steps, runs
 * its estimation (llr_train_estimate). */
enum {
	LLR_TOPT_FLAG,     /* no argument: 1 when given */
	LLR_TOPT_INT,      /* an integer in [min, max] */
	LLR_TOPT_DOUBLE,   /* a number in [lo, hi] */
	LLR_TOPT_CHOICE,   /* one of choices ("a|b|c"): its index; its name as a string */
	LLR_TOPT_SIZE,     /* bytes: a number with K, M or G, at least min */
	LLR_TOPT_DURATION, /* seconds: a positive number with s, m, h or d */
	LLR_TOPT_PATH,     /* a file */
	LLR_TOPT_TEXT,     /* text the family parses (a list, a spec) */
	LLR_TOPT_REFUSED,  /* the family refuses it: msg is the usage error */
};
enum {
	LLR_TOPT_SELECTS = 1, /* giving it chooses its family */
	LLR_TOPT_EVERY = 2,   /* a shared option every family takes, not only those trained by gradient steps */
	LLR_TOPT_NOLONG = 4,  /* only its letter is an option (name is the key) */
};
typedef struct llr_train_opt {
	const char *name;    /* the long option without "--", and the key */
	char letter;         /* its short option, 0 none */
	unsigned char kind;  /* LLR_TOPT_* */
	unsigned char flags; /* LLR_TOPT_SELECTS ... */
	long long min, max;  /* INT, SIZE: the range */
	double lo, hi;       /* DOUBLE: the range */
	const char *choices; /* CHOICE */
	const char *dflt;    /* the value when not given, spelt as given (NULL: 0, none) */
	const char *arg;     /* its argument in --help ("n"); NULL for a flag */
	const char *help;    /* --help's line */
	const char *section; /* --help's section title, NULL: the options' */
	const char *bad;     /* CHOICE, SIZE: the error for a value ('%s'), after "--name: " */
	const char *msg;     /* REFUSED: the usage error; else the error when another family is given it
	                        (NULL: "--name: " and its family's own words) */
} llr_train_opt;

/* The i-th option row (NULL after the last): the shared ones, then each
 * family's in the order of the families' table.  A name may come more
 * than once (a family's own default or range for a shared option, or the
 * same name in two families): --help shows the first. */
const llr_train_opt *llr_train_option(size_t i);
/* The i-th training family's lines of train's usage, each starting
 * "train " (NULL after the last). */
const char *llr_train_synopsis(size_t i);

/* The options given and the operands, the family they choose and their
 * values (opaque; llr_train_args_free). */
typedef struct llr_train_args llr_train_args;
llr_train_args *llr_train_args_new(void);
void llr_train_args_free(llr_train_args *a);
/* Option name (a row's name) given with value (NULL for a flag); the
 * last of repeats counts.  LLR_ENOMEM, LLR_EINVAL for an unknown name. */
int llr_train_args_give(llr_train_args *a, const char *name, const char *value, llr_err *err);
/* The operands (borrowed until llr_train_args_free). */
void llr_train_args_operands(llr_train_args *a, int n, char **v);
/* Where a family's lines go while it sets up (the lines train prints on
 * stderr), NULL: nowhere. */
void llr_train_args_on_note(llr_train_args *a, void (*note)(void *ctx, const char *line), void *ctx);
/* For a family trained by llr_train_estimate that saves its run on
 * SIGINT or SIGTERM (the MRF tagger): catch_fn, called by the family when
 * its run starts, installs the caller's handlers, which store the signal
 * in *flag; the family polls *flag, saves the model it has and returns
 * LLR_OK, and the caller then sees *flag set.  Not set: such a family
 * installs nothing and a signal ends the process as usual. */
void llr_train_args_on_signal(llr_train_args *a, void (*catch_fn)(void), const volatile sig_atomic_t *flag);
/* Choose the family (its option marked LLR_TOPT_SELECTS, a --resume
 * model of its family key, or a stream only it trains; else the default
 * family), then check the options against it and parse their values:
 * LLR_EUSAGE with the message (llr_train_args_usage: the usage text to
 * show with it). */
int llr_train_args_check(llr_train_args *a, llr_err *err);
const char *llr_train_args_usage(const llr_train_args *a);
/* After the check: the chosen family's name, and 1 when it trains by
 * gradient steps (llr_train_build), 0 when llr_train_estimate does it. */
const char *llr_train_args_family(const llr_train_args *a);
int llr_train_args_gradient(const llr_train_args *a);
/* After the check, the value of option name (the given one, else its
 * default): whether it was given; INT, CHOICE (the index), FLAG, SIZE as
 * an integer; DOUBLE, DURATION as a number; PATH, TEXT, CHOICE as a
 * string (NULL none). */
int llr_train_args_given(const llr_train_args *a, const char *name);
long long llr_train_args_int(const llr_train_args *a, const char *name);
double llr_train_args_num(const llr_train_args *a, const char *name);
const char *llr_train_args_str(const llr_train_args *a, const char *name);
int llr_train_args_noperands(const llr_train_args *a);
const char *llr_train_args_operand(const llr_train_args *a, int i);

/* A family's model and data made ready for llr_train_run
 * (llr_train_build); llr_train_setup_free frees them. */
typedef struct llr_train_setup {
	llr_train_job *job;
	llr_train_state *ts;
	llr_train_limits lim; /* the options', or a resumed model's */
	int64_t train_tokens; /* for the epoch 0 line */
	int has_valid;        /* the job validates */
	/* The family's line after each epoch's (NULL: none; empty: no line). */
	int (*epoch_note)(void *fam, const llr_train_event *ev, llr_buf *line);
	void *fam; /* the family's (model, data, training state) */
	void (*fam_free)(void *fam);
} llr_train_setup;
/* The chosen family's new or resumed model over the operands, as the
 * options say (comm: the ranks of a distributed run, its data shared
 * out).  LLR_EUSAGE for options that do not fit the model. */
int llr_train_build(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err);
void llr_train_setup_free(llr_train_setup *s);
/* A family not trained by gradient steps (n-gram estimation): its whole
 * run, the model written to -o. */
int llr_train_estimate(llr_train_args *a, llr_err *err);
/* The bytes a distributed step sums across the ranks for n weights. */
size_t llr_train_step_bytes(size_t n);

/* A language model's training or validation corpus
 * (llr_rnnlm_train_job): the ids of its sentences, words then </s>, one
 * after another, and their pieces of at most max_len predicted tokens.
 * In a distributed run a rank keeps the ids of its own sentences only;
 * the others' pieces are indexed all the same (sent -1), so every rank
 * plans the same batches. */
typedef struct llr_lm_piece {
	int64_t sent;  /* offset of the sentence in ids; -1: another rank's */
	int32_t start; /* first predicted position */
	int32_t len;   /* predicted tokens, <= max_len */
} llr_lm_piece;
typedef struct llr_lm_corpus {
	int64_t read; /* sentences read, empty ones too (their index: the rank's share) */
	int64_t held; /* sentences with a word whose ids this rank keeps */
	int32_t *ids;
	size_t n, cap;
	llr_lm_piece *pieces;
	size_t npieces, pcap;
	int64_t sentences, tokens; /* tokens predicted: words + one </s> each */
	int64_t known;             /* validation: words that are not <unk> */
	/* an open vocabulary: the inputs' rows (NULL: the net's psi), and
	 * validation's rows of the targets outside V' (llr_batch) */
	const llr_csr *psi, *xphi;
	const float *xlogb;
} llr_lm_corpus;
/* Append x[0..k) to the ids; LLR_ENOMEM. */
int llr_lm_corpus_push(llr_lm_corpus *c, const int32_t *x, size_t k);
/* Index the sentence of len ids (the last one </s>) at offset off (-1:
 * another rank's): an empty one is skipped, a longer one than max_len
 * split into pieces.  LLR_ENOMEM. */
int llr_lm_corpus_sentence(llr_lm_corpus *c, int64_t off, int32_t len, int max_len);
void llr_lm_corpus_free(llr_lm_corpus *c);
/* The ids/ chunks of a featurize stream r (named name in messages; its
 * lexicon x read) added to c, every sentence ending in x's </s>; with
 * comm, this rank's share (c->read counts on from earlier streams). */
int llr_lm_corpus_read(llr_tensor_reader *r, const char *name, const llr_lexicon *x, int max_len, const llr_train_comm *comm,
                       llr_lm_corpus *c, llr_err *err);

typedef struct llr_lm_train_cfg {
	int batch, max_len;
	int dropout;     /* dropout masks from the training state's generator */
	int tree_update; /* a tree output: re-learn the tree every tree_update
	                    batches of the first epoch (rank 0's for all), 0 never */
	/* a variable-computation cell: the L1 penalty vc_penalty |m_t -
	 * vc_target| (llr_net_set_vc), and the mask's sharpness set by the
	 * epoch, 0.1 in the first, 0.1 more in each next, 1 at most */
	float vc_target, vc_penalty;
} llr_lm_train_cfg;
/* A job for llr_train_run (freed with llr_train_job_free): m trained on
 * train, validated on valid (rank 0's; NULL or without sentences: none),
 * all borrowed. */
int llr_rnnlm_train_job(llr_rnnlm *m, const llr_lm_corpus *train, const llr_lm_corpus *valid, const llr_lm_train_cfg *cfg,
                        const llr_train_comm *comm, llr_train_job **out, llr_err *err);

/* Feed-forward language models (Bengio et al. 2003; lib/family/fflm,
 * train --feedforward N): p(w_t | the previous N - 1 words, <s> before
 * the sentence) through their concatenated input embeddings, tanh
 * layers, optional direct connections and a softmax or log-linear
 * output (the network: lib/nn/ffnet.c).  score and gen reach them
 * through llr_model_open (family=fflm). */
#define LLR_FF_MAX_ORDER 64
#define LLR_FF_MAX_LAYERS 16
typedef struct llr_ffnet_config {
	int32_t order;  /* n: the context is n - 1 words */
	int32_t embed, hidden, layers;
	int direct;     /* connections from the embeddings to the output */
	int output;     /* LLR_OUT_SOFTMAX or LLR_OUT_LOGLINEAR */
	int32_t vocab, feat_in, feat_out;
	float dropout;  /* in training, on the embeddings and each hidden layer: [0, 1) */
} llr_ffnet_config;
typedef struct llr_ffnet llr_ffnet;
/* The network's configuration and weights (one flat array, *n of them). */
const llr_ffnet_config *llr_ffnet_cfg(const llr_ffnet *f);
float *llr_ffnet_params(llr_ffnet *f, size_t *n);
typedef struct llr_fflm {
	llr_lexicon *lex;
	llr_ffnet *net;
	llr_meta *meta; /* hyperparameters and training summary */
} llr_fflm;
typedef struct llr_fflm_setup {
	int order;  /* N: 2 .. LLR_FF_MAX_ORDER (64) */
	int embed, hidden, layers, direct;
	int output; /* LLR_OUT_SOFTMAX or LLR_OUT_LOGLINEAR; 0: by the lexicon */
	int optim;  /* LLR_OPT_* */
	double lr, eps; /* > 0, else the optimiser's defaults */
	int batch;      /* predicted tokens per step */
	double clip, min_impr; /* for the meta */
	uint64_t seed;
	double dropout; /* [0, 1): llr_ffnet_config's */
	double l2;      /* >= 0: the L2 penalty per token on the weights, not the biases (meta key l2) */
} llr_fflm_setup;
/* A new model over x (owned from then on; on failure still the
 * caller's), its weights and training state *ts from o->seed.  A lexicon
 * with an n-gram background, and an explicit log-linear output over a
 * lexicon without features (phi one-hot, no psi) are refused
 * (LLR_EINVAL). */
int llr_fflm_fresh(llr_lexicon *x, const llr_fflm_setup *o, llr_fflm **m, llr_train_state **ts, llr_err *err);
/* As llr_rnnlm_save and llr_rnnlm_load_state (ts may be NULL). */
int llr_fflm_save(const char *path, const llr_fflm *m, const llr_train_state *ts, llr_err *err);
int llr_fflm_load(const char *path, llr_fflm **m, llr_train_state **ts, llr_err *err);
void llr_fflm_free(llr_fflm *m);
/* LLR_OK if x is the lexicon m was trained on (llr_rnnlm_fits). */
int llr_fflm_fits(const llr_fflm *m, const llr_lexicon *x, llr_err *err);
/* train --feedforward's stream at path (name for messages): its lexicon
 * into *x (caller frees) and its sentences into c (this rank's with
 * comm); LLR_EINVAL when a context of order - 1 words is longer than its
 * longest sentence (words and </s>). */
int llr_fflm_read_stream(const char *path, const char *name, int order, const llr_train_comm *comm, llr_lexicon **x,
                         llr_lm_corpus *c, llr_err *err);
/* The fields a resumed model fixes (llr_fflm_resume's given), in the
 * order of *bad. */
enum {
	LLR_FFS_OUTPUT = 1 << 0, LLR_FFS_ORDER = 1 << 1, LLR_FFS_LAYERS = 1 << 2, LLR_FFS_HIDDEN = 1 << 3, LLR_FFS_EMBED = 1 << 4,
	LLR_FFS_DIRECT = 1 << 5, LLR_FFS_BATCH = 1 << 6, LLR_FFS_OPTIM = 1 << 7, LLR_FFS_SEED = 1 << 8,
	LLR_FFS_NFIXED = 9
};
/* Load the run saved in path: the fields of o in the mask given must be
 * the model's (else LLR_EINVAL, *bad the field's index and the message
 * its key=value), and o gets the model's configuration and batch.  *bad
 * is -1 on other errors. */
int llr_fflm_resume(const char *path, llr_fflm_setup *o, unsigned given, llr_fflm **m, llr_train_state **ts, int *bad,
                    llr_err *err);
/* A job for llr_train_run: m trained on every predicted token of train,
 * batch of them a step, in an order shuffled every epoch; validated on
 * valid (NULL or empty: none).  All borrowed. */
int llr_fflm_train_job(llr_fflm *m, const llr_lm_corpus *train, const llr_lm_corpus *valid, int batch,
                       const llr_train_comm *comm, llr_train_job **out, llr_err *err);

/* Setting an LSTM language model up for training (lib/family/rnnlm/
 * setup.c, open.c; train(1)).  A new model's choices: */
typedef struct llr_rnnlm_setup {
	/* embed, hidden, layers, dropout, output (0: by the lexicon, softmax
	 * when its phi and psi are one-hot, else log-linear), the input and
	 * the tree or classes fields, as llr_rnnlm_new takes them */
	llr_net_config net;
	int init;       /* LLR_INIT_* */
	int optim;      /* LLR_OPT_* */
	double lr, eps; /* > 0, else the optimiser's defaults */
	int batch, max_len;
	double clip, min_impr; /* for the meta */
	uint64_t seed;
} llr_rnnlm_setup;
/* A new model over x (llr_rnnlm_new: it owns x from then on; on failure
 * x is still the caller's), its weights (o->init) and training state *ts
 * from o->seed, and the meta train --resume reads back. */
int llr_rnnlm_fresh(llr_lexicon *x, const llr_rnnlm_setup *o, llr_rnnlm **m, llr_train_state **ts, llr_err *err);
/* A new model's tree or classes output from the counts of the training
 * ids[0..n) (all < V; with comm, this rank's share: the counts are
 * summed across the ranks); nothing for another output. */
int llr_rnnlm_tree_init(llr_rnnlm *m, const int32_t *ids, size_t n, const llr_train_comm *comm, llr_err *err);

/* Write m to path atomically (llr_tw_open: temporary file and rename):
 * meta (kind "model": m->meta's keys, the network configuration, the
 * lexicon's keys), the lexicon members, params/<name> for every tensor in
 * llr_net_tensor_info order, and with ts the state/ members.  params/ are
 * ts->best when given, else the net's weights; the net's weights then go
 * to state/weights.  No wall-clock time is stored, so equal inputs give
 * byte-identical files. */
int llr_rnnlm_save(const char *path, const llr_rnnlm *m, const llr_train_state *ts, llr_err *err);
/* llr_rnnlm_load, and when ts is not NULL the training state too (*ts
 * NULL when the file has none).  The net then holds the current weights
 * (state/weights when present) and (*ts)->best the saved params. */
int llr_rnnlm_load_state(const char *path, llr_rnnlm **out, llr_train_state **ts, llr_err *err);
/* LLR_OK if lexicon x (from a features stream) is the one m was trained
 * on: same vocabulary, features, phi, psi and background; else LLR_EFORMAT
 * saying what differs. */
int llr_rnnlm_fits(const llr_rnnlm *m, const llr_lexicon *x, llr_err *err);
/* The network configuration a model meta describes (keys output, embed,
 * hidden, layers, dropout) for lexicon x; LLR_EFORMAT naming a bad key. */
int llr_rnnlm_config(const llr_meta *meta, const llr_lexicon *x, llr_net_config *c, llr_err *err);
/* The one way to build the network of a lexicon (train, model loading,
 * score's copies per thread).  From c it takes output, embed, hidden,
 * layers and dropout; vocab, feat_out and feat_in come from x (softmax:
 * V each; log-linear: the columns of phi and of psi, or phi when x has no
 * psi), whatever c holds there.  A log-linear net borrows x's phi, psi
 * and logb, so x must outlive it, unchanged.  The weights are zero (see
 * llr_net_init_scheme).  NULL with err set (LLR_EINVAL, LLR_ENAN,
 * LLR_ENOMEM) when llr_net_new refuses the configuration. */
llr_net *llr_rnnlm_net_new(const llr_lexicon *x, const llr_net_config *c, llr_err *err);
/* A new model: x, a network built by llr_rnnlm_net_new, an empty meta;
 * with a character-aware input (c->input) also the spellings of x's
 * words, m->words, whose character vocabulary (the characters of x's
 * words) sets char_vocab, and which the net reads.
 * The model owns x from then on (llr_rnnlm_free frees it); on failure
 * (NULL, err set) x is still the caller's. */
llr_rnnlm *llr_rnnlm_new(llr_lexicon *x, const llr_net_config *c, llr_err *err);

/* A word's feature row in a buffer that grows (lib/family/rnnlm/rows.c);
 * zero-initialise, free with llr_row_free. */
typedef struct llr_row {
	int32_t *cols;
	float *vals;
	size_t cap;
} llr_row;
/* Room for n entries: LLR_OK or LLR_ENOMEM (r unchanged). */
int llr_row_reserve(llr_row *r, size_t n, llr_err *err);
/* w's row of phi (input_side 0) or psi (1) into r, growing it: the
 * features the lexicon's extractors give a word (llr_lexicon_word_row;
 * any 0) or, for an open model, those of any string
 * (llr_lexicon_any_row; any 1).  Its length in *n. */
int llr_row_fill(llr_row *r, const llr_lexicon *x, const char *w, size_t len, int input_side, int any, size_t *n,
                 llr_err *err);
void llr_row_free(llr_row *r);

/* The input ids of words for an LSTM LM's forward pass, as score and gen
 * give them (lib/family/rnnlm/inputs.c): a vocabulary word is its id; a
 * word outside the vocabulary gets, in a log-linear model, a new row of
 * psi with the input features extracted from the string (<unk>'s id if
 * it has none), and with a character-aware input a new id (its spelling,
 * llr_words_add on m->words, and a psi row when the net reads psi too).
 * m is borrowed and must outlive it; path names m in messages.
 * LLR_EFORMAT when m has no </s>, or psi does not fit the network. */
typedef struct llr_rnnlm_inputs llr_rnnlm_inputs;
llr_rnnlm_inputs *llr_rnnlm_inputs_new(llr_rnnlm *m, const char *path, llr_err *err);
void llr_rnnlm_inputs_free(llr_rnnlm_inputs *in);
/* The input id of word w whose vocabulary id is vid (-1 if unseen), or a
 * negative code. */
int32_t llr_rnnlm_inputs_add(llr_rnnlm_inputs *in, const char *w, size_t len, int32_t vid, llr_err *err);
/* Forget the rows and spellings added since the last reset. */
void llr_rnnlm_inputs_reset(llr_rnnlm_inputs *in);
/* The matrix to pass as llr_batch.psi or llr_net_step's psi: NULL while
 * no row was added (the net's own psi is then exact). */
const llr_csr *llr_rnnlm_inputs_psi(const llr_rnnlm_inputs *in);
/* Target id of w: its vocabulary id, or <unk>'s (*oov set to 1 for
 * both); LLR_EINVAL when w is unseen and m has no <unk>. */
int32_t llr_rnnlm_target(const llr_rnnlm *m, const char *w, size_t len, int *oov, llr_err *err);
/* The vectors of B sentences as llr_model_embed gives them for an LSTM
 * LM (lib/family/rnnlm/embed.c): the mean of the words' input
 * embeddings, a word's embedding its row of psi times the F_in x E table
 * "embed" (for a softmax, tree or classes output the table's row), into
 * vec (B x E; 0 for an empty sentence).  B = 0 checks only that m has a
 * word input and that table (LLR_EINVAL, naming path). */
int llr_rnnlm_embed(const llr_rnnlm *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, const char *path,
                    llr_err *err);
/* The same mean for any word LM with the F_in x E input table emb over
 * the lexicon x: psi's rows for a log-linear output (x->psi, else
 * x->phi), the table's rows for any other; a word outside x's vocabulary
 * is x->unk_id (oov, may be NULL, gets 1 for it). */
int llr_lm_embed_words(const llr_lexicon *x, int output, const float *emb, int E, const llr_sentence *s, size_t B, float *vec,
                       unsigned char *oov, llr_err *err);

/* ------------------------------------------------------ sentence encoders */

/* Sentence encoders trained on the discourse objectives of disc-pairs
 * (Jernite, Bowman and Sontag 2017): the sum of the word embeddings
 * (CBOW), a GRU, or a bidirectional GRU, the recurrent ones max-pooled
 * over their hidden states (D = E, H or 2H), with bilinear heads:
 *   ORDER (2 classes) and CONJ (n_conj): score_k = u^T W_k v + b_k for the
 *     encodings u, v of the two sentences;
 *   NEXT (5 candidates): score_k = [c1 c2 c3]^T W e_k, the three context
 *     encodings side by side against candidate k's.
 * A word's embedding is its row of the lexicon's input features psi times
 * the F_in x E table (the LL-RNN's input embedding).  The weights are one
 * flat array, tensor after tensor (llr_senc_tensor), the gradient likewise. */
enum { LLR_SENC_CBOW = 1, LLR_SENC_GRU = 2, LLR_SENC_BIGRU = 3 };
enum { LLR_TASK_ORDER = 1, LLR_TASK_NEXT = 2, LLR_TASK_CONJ = 4, LLR_TASK_ALL = 7 };

typedef struct llr_senc_config {
	int encoder; /* LLR_SENC_* */
	int E, H;    /* embedding and GRU sizes (H unused by CBOW) */
	int tasks;   /* LLR_TASK_* mask: the heads present */
	int n_conj;  /* CONJ classes */
	float dropout; /* in training, the probability of zeroing each
	                * component of the encodings the heads read */
	float word_dropout; /* in training, the probability of zeroing each
	                     * word's embedding before the encoder */
} llr_senc_config;

typedef struct llr_senc llr_senc;
/* "cbow", "gru", "bigru" -> LLR_SENC_*, 0 if unknown; and back. */
int llr_senc_encoder_parse(const char *s);
const char *llr_senc_encoder_name(int kind);
/* A new encoder over psi (borrowed: it must outlive the encoder), weights
 * zero.  NULL with err on a bad configuration or no memory. */
llr_senc *llr_senc_new(const llr_senc_config *c, const llr_csr *psi, llr_err *err);
/* As llr_net_new_empty and llr_net_params_grow, for a loader. */
llr_senc *llr_senc_new_empty(const llr_senc_config *c, const llr_csr *psi, llr_err *err);
float *llr_senc_params_grow(llr_senc *s, size_t n, llr_err *err);
void llr_senc_free(llr_senc *s);
const llr_senc_config *llr_senc_cfg(const llr_senc *s);
int llr_senc_dim(const llr_senc *s); /* D */
size_t llr_senc_n_params(const llr_senc *s);
float *llr_senc_params(llr_senc *s);
float *llr_senc_grads(llr_senc *s); /* accumulated by llr_senc_run; the caller zeroes */
/* Uniform weights: the GRU's in +-1/sqrt(H) (as PyTorch), the embeddings
 * +-0.1, the ORDER and CONJ heads +-1/D, biases 0; the NEXT head starts
 * at W = [0; 0; I - 11'/D], the candidate's encoding against the last
 * context sentence's, each centred on its mean over the coordinates (the
 * lexical continuity a random head does not find from a few thousand
 * examples; the centring takes out the common positive offset of
 * max-pooled states, which a plain dot product is mostly made of:
 * results/discourse-notes.md); its uniform draws are still made, so the
 * other tensors start as they did before. */
void llr_senc_init(llr_senc *s, llr_rng *rng);
/* The tensors: i in [0, llr_senc_n_tensors()), their name, shape (rows,
 * cols; 0 x 0 when the configuration has no such tensor) and offset. */
int llr_senc_n_tensors(void);
size_t llr_senc_tensor(const llr_senc *s, int i, const char **name, int64_t shape[2]);

/* Encode n sentences, sentence i the ids[off[i] .. off[i+1]) (vocabulary
 * ids of psi's rows), into out (n x D).  An empty sentence encodes as 0.
 * No dropout of either kind. */
int llr_senc_encode(llr_senc *s, const int32_t *ids, const size_t *off, size_t n, float *out, llr_err *err);

/* A batch of n examples of one task: sentences as in llr_senc_encode,
 * llr_senc_task_sents(task) per example (ORDER and CONJ: s1, s2; NEXT:
 * c1 c2 c3 k1 .. k5), and a label each (or NULL: predict only). */
typedef struct llr_senc_batch {
	int task;
	size_t n;
	const int32_t *ids;
	const size_t *off;
	const int32_t *label;
	llr_rng *rng; /* training: the dropout masks' draws (NULL: none) */
	int next_batch_negatives; /* NEXT, with grad and labels: in-batch
	                           * negatives (llr_senc_run) */
} llr_senc_batch;
int llr_senc_task_sents(int task);
int llr_senc_task_classes(const llr_senc *s, int task);
/* Scores the batch: *loss the summed cross-entropy (nats), *correct the
 * examples whose best class is the label, pred[n] the best classes (each
 * optional).  With grad, adds the gradient of the MEAN loss to the
 * gradient array; with grad and b->rng, the configuration's word dropout
 * applies to the words' embeddings and its dropout to the encodings
 * (never without grad), the word masks drawn first.  NEXT with grad,
 * labels and b->next_batch_negatives trains on a wider softmax: each
 * context against the 5n candidates of the whole batch, its own true one
 * the label (a candidate that is the same words as it left out), so the
 * other examples' candidates are negatives too; *loss is that softmax's,
 * *correct and pred still the best of each example's own five. */
int llr_senc_run(llr_senc *s, const llr_senc_batch *b, int grad, double *loss, size_t *correct, int32_t *pred, llr_err *err);
/* The row-sparse block of the last llr_senc_run's gradient (llr_rows):
 * the word embedding's rows (psi's columns) its sentences used, the only
 * rows of that tensor whose gradient it changed.  Valid until the next
 * call; 1 block, or LLR_ENOMEM.  For llr_clip_grad_norm_rows and
 * llr_grad_zero_rows. */
int llr_senc_rows(llr_senc *s, const llr_rows **blocks, llr_err *err);

/* A sentence-encoder model file (llrnn-model(5), family "sentenc"): the
 * lexicon, the encoder, the CONJ class names, meta. */
#define LLR_SENC_MAX_CONJ 64
typedef struct llr_senc_model {
	llr_lexicon *lex;
	llr_senc *enc; /* reads lex's psi (phi when psi is phi) */
	char conj[LLR_SENC_MAX_CONJ][32];
	int n_conj;
	llr_meta *meta; /* hyperparameters and training summary */
} llr_senc_model;
void llr_senc_model_free(llr_senc_model *m);
/* Write atomically: params/ are ts->best when given, else the weights;
 * with ts the state/ members too (as llr_rnnlm_save). */
int llr_senc_model_save(const char *path, const llr_senc_model *m, const llr_train_state *ts, llr_err *err);
/* A model to train over the lexicon of the features stream at features
 * (featurize's; messages name it), with the built-in CONJ classes, an
 * empty meta and no encoder yet (llr_senc_train_init); free with
 * llr_senc_model_free. */
int llr_senc_model_new(const char *features, llr_senc_model **out, llr_err *err);
/* Load (LLR_EKIND for a model of another family); with tsp the training
 * state too (*tsp NULL when the file has none; a file written when the
 * validation loss decided has its best as the best epoch's error). */
int llr_senc_model_load(const char *path, llr_senc_model **out, llr_train_state **tsp, llr_err *err);

/* ------------------------------------------------ discourse examples */

/* What disc-pairs(1) mines from documents (lib/discourse/; Jernite,
 * Bowman and Sontag 2017): paragraphs of tokenised sentences, the
 * discourse-marker tables, and the ORDER, NEXT and CONJ examples built
 * from one paragraph at a time, written as the TSV lines disc-pairs(1)
 * documents.  The tasks are the LLR_TASK_* bits. */
#define LLR_DISC_NEXT_CONTEXT 3    /* NEXT: the context sentences */
#define LLR_DISC_NEXT_CANDIDATES 5 /* NEXT: the candidates, one true */

/* A table of discourse markers: phrases (stored tokenised and lowercased)
 * with a class each.  Classes are named; the built-in tables use the nine
 * classes of Jernite et al. (llr_disc_conj_builtin), a file may use any
 * names (in order of first appearance). */
typedef struct llr_disc_markers llr_disc_markers;
/* The built-in table for lang "en" or "fr" (LLR_EINVAL otherwise).  Each
 * phrase is tokenised with tok, so markers split exactly as the text is.
 * Caller frees with llr_disc_markers_free. */
llr_disc_markers *llr_disc_markers_builtin(const char *lang, llr_tokenizer *tok, llr_err *err);
/* A table read from `phrase<TAB>class` lines; blank lines and lines
 * starting with '#' are ignored.  Errors name file:line. */
llr_disc_markers *llr_disc_markers_load(const char *path, llr_tokenizer *tok, llr_err *err);
void llr_disc_markers_free(llr_disc_markers *m);
size_t llr_disc_markers_count(const llr_disc_markers *m);
size_t llr_disc_markers_nclass(const llr_disc_markers *m);
const char *llr_disc_markers_class(const llr_disc_markers *m, size_t c);
/* Phrase i of the table (tokenised, lowercased, longest first) and its class. */
const char *llr_disc_markers_phrase(const llr_disc_markers *m, size_t i, size_t *cls);
/* Does the sentence s[0..len) (tokens separated by single spaces) begin
 * with a marker followed by a "," token?  Matching is case-insensitive,
 * on token boundaries, longest marker first.  Returns the class (>= 0)
 * and sets *skip to the bytes to remove (marker, comma and the space
 * after it) and *ntok to the tokens removed; -1 if no marker;
 * LLR_ENOMEM (< -1) on failure.  scratch is working memory. */
int llr_disc_markers_match(const llr_disc_markers *m, const char *s, size_t len, size_t *skip, int *ntok, llr_buf *scratch);
/* The nine classes of the built-in tables, in their order, into conj
 * (*n = 9): the CONJ classes a sentence encoder starts with. */
void llr_disc_conj_builtin(char conj[][32], int *n);

/* One paragraph: sentences as single-space separated tokens. */
typedef struct llr_disc_para {
	llr_buf text;   /* sentences back to back, each NUL-terminated */
	size_t *off;    /* n: offset of sentence i in text */
	size_t *len;    /* n: its length in bytes */
	int *ntok;      /* n: its number of tokens */
	size_t n, cap;
} llr_disc_para;
void llr_disc_para_clear(llr_disc_para *p);
void llr_disc_para_free(llr_disc_para *p);
/* Add one sentence: runs of spaces, tabs, CR and other ASCII controls
 * become one space, leading and trailing ones are dropped; an empty
 * sentence is not added.  LLR_OK or LLR_ENOMEM. */
int llr_disc_para_add(llr_disc_para *p, const char *s, size_t len);
static inline const char *llr_disc_para_sent(const llr_disc_para *p, size_t i)
{
	return p->text.data + p->off[i];
}

typedef struct llr_disc_opts {
	int tasks;        /* LLR_TASK_* mask */
	int min_par;      /* NEXT: sentences a paragraph needs */
	int next_stride;  /* NEXT: 0 = blocks of min_par; s = a window of min_par every s sentences */
	int min_len, max_len; /* sentence length bounds, in tokens */
	double max_ratio; /* pairs: longer / shorter at most this */
	int provenance;   /* append a provenance column */
	const llr_disc_markers *markers; /* CONJ (borrowed) */
	uint64_t seed;
} llr_disc_opts;

/* The example writer: lines to out, counts kept.  The tasks draw from
 * independent generators seeded from o->seed, so the ORDER lines of a run
 * are the same whatever other tasks are chosen.  o->markers must outlive
 * it.  Caller frees with llr_disc_tasks_free. */
typedef struct llr_disc_tasks llr_disc_tasks;
llr_disc_tasks *llr_disc_tasks_new(const llr_disc_opts *o, FILE *out, llr_err *err);
void llr_disc_tasks_free(llr_disc_tasks *t);
/* Write the examples of one paragraph.  prov ("doc:P") is the provenance
 * column, used when o->provenance is set.  LLR_OK or LLR_ENOMEM; write
 * errors are left to the caller's ferror check. */
int llr_disc_tasks_paragraph(llr_disc_tasks *t, const llr_disc_para *p, const char *prov);
/* Examples written so far: of one task (an LLR_TASK_* bit), and the CONJ
 * examples of marker class c. */
size_t llr_disc_tasks_count(const llr_disc_tasks *t, int task);
size_t llr_disc_tasks_class_count(const llr_disc_tasks *t, size_t c);

/* The documents examples are mined from: every member of an archive
 * (nested archives, up to 8 deep, included; a plain or compressed text is
 * an archive of one member), read as paragraphs of tokenised sentences.
 * A member is skipped, counted and noticed when it is over max_member
 * bytes, binary (a NUL byte), not UTF-8 (over 1% of the lines of its
 * first 64 KiB), not in the format (its first content line), or when the
 * archive is truncated or corrupt there.  HTML members (by name or head;
 * format text only) are read through llr_html_text.  The formats and the
 * rules are disc-pairs(1)'s. */
enum { LLR_DISC_FMT_TEXT, LLR_DISC_FMT_TAGGED, LLR_DISC_FMT_CONLLU, LLR_DISC_FMT_TOKENS };
/* Why members are skipped (llr_disc_stats.skipped). */
enum { LLR_DISC_SKIP_BINARY, LLR_DISC_SKIP_UTF8, LLR_DISC_SKIP_FORMAT, LLR_DISC_SKIP_SIZE, LLR_DISC_SKIP_BROKEN, LLR_DISC_SKIP_N };

typedef struct llr_disc_read_opts {
	int format;          /* LLR_DISC_FMT_* */
	int lower;           /* lowercase the sentences of tagged, CoNLL-U and token input
	                      * (text is cut by tok, which lowercases or not) */
	int html_runs;       /* adjacent <p> elements make one paragraph (llr_html_text) */
	uint64_t max_member; /* bytes of a member, decompressed, at most */
	const char *const *include; /* fnmatch patterns of the members to read (none: all) */
	const char *const *exclude; /* and of those to leave out */
	int n_include, n_exclude;
	llr_tokenizer *tok; /* cuts text and HTML into sentences (borrowed) */
	/* Each paragraph with sentences, of document doc ("archive:member", or
	 * the archive when it is a plain text), index its number there from 1:
	 * LLR_OK, or an error code that stops the reading. */
	int (*paragraph)(void *arg, const llr_disc_para *p, const char *doc, uint64_t index);
	/* A message about a document (naming it): error is 1 for a runtime or
	 * data error (a member skipped for its size, a truncated archive, a
	 * malformed CoNLL-U line), 0 for a note (a binary member skipped). */
	void (*notice)(void *arg, int error, const char *msg);
	void (*line)(void *arg, uint64_t lines); /* after each line read (progress) */
	void *arg;
} llr_disc_read_opts;

typedef struct llr_disc_stats {
	uint64_t docs, paras, sents; /* a document counts once it has a paragraph */
	uint64_t lines;              /* lines read */
	uint64_t html_docs;          /* HTML documents read */
	uint64_t excluded, dropped;  /* members left out by include, by exclude */
	uint64_t skipped[LLR_DISC_SKIP_N];
} llr_disc_stats;

typedef struct llr_disc_reader llr_disc_reader;
/* A reader with options o (copied; the patterns and tok are borrowed).
 * Caller frees with llr_disc_reader_free. */
llr_disc_reader *llr_disc_reader_new(const llr_disc_read_opts *o, llr_err *err);
void llr_disc_reader_free(llr_disc_reader *r);
/* Read every member of a.  Problems with members are notices and leave
 * LLR_OK; an error (LLR_ENOMEM, or the paragraph callback's) stops it. */
int llr_disc_reader_read(llr_disc_reader *r, llr_archive *a, llr_err *err);
/* The counts of every read so far. */
const llr_disc_stats *llr_disc_reader_stats(const llr_disc_reader *r);

/* Is a document HTML: its name ends in .html, .htm or .xhtml, or its head
 * starts with <!DOCTYPE html or <html (case-insensitive, after a BOM and
 * white space)? */
int llr_html_is(const char *name, const char *head, size_t n);
/* The running text of an HTML document (libxml2's HTML parser, with its
 * recovery for malformed markup) into out: one line per paragraph, white
 * space collapsed, paragraphs separated by blank lines.  Text in block
 * elements (p, div, li, dd, blockquote, ...) makes paragraphs; headings,
 * pre, tables, scripts, styles, navigation and Sphinx page furniture are
 * left out.  With runs, adjacent <p> elements (siblings with nothing but
 * white space, comments or empty inline elements between them) make one
 * paragraph, one line each.  url names the document in messages.  LLR_OK,
 * LLR_ENOMEM or LLR_ERANGE (over 2 GiB). */
int llr_html_text(const char *buf, size_t len, const char *url, int runs, llr_buf *out, llr_err *err);

/* disc-pairs output read back, its sentences as token ids, for a
 * sentence encoder: the examples of one task are the index of each one's
 * first sentence (its sentences follow in order) and its label.  Example i
 * of a shard is the task's example i * shard_size + shard_rank of the
 * file. */
typedef struct llr_disc_set_task {
	size_t *first;
	int32_t *label;
	size_t n, cap;
	size_t total; /* the task's examples in the file, every shard's */
} llr_disc_set_task;
/* Examples of the three tasks (0 ORDER, 1 NEXT, 2 CONJ; LLR_TASK_* is
 * 1 << index), their sentences as ids (sentence i: ids[off[i]..off[i+1])).
 * Zero it, set conj (and shard_*) and read into it; free with
 * llr_disc_set_free. */
typedef struct llr_disc_set {
	int32_t *ids;
	size_t n_ids, cap_ids;
	size_t *off;
	size_t n_sent, cap_sent;
	llr_disc_set_task task[3];
	char (*conj)[32]; /* the CONJ class names (caller's table of LLR_SENC_MAX_CONJ) */
	int n_conj;
	uint64_t tokens, unknown, skipped;
	int shard_rank, shard_size; /* 0 and 0 or 1: all */
} llr_disc_set;
/* Read a disc-pairs TSV file (compressed or not; "-" stdin): lines of the
 * tasks in the tasks mask (others are counted in skipped), each token
 * its id in vocab or unk.  A bad line is an LLR_EFORMAT error naming
 * file:line.  A CONJ class not in d->conj is added when add_classes, else
 * an error.  With d->shard_size > 1 (train --distributed) only the
 * shard's examples are kept, but every line is checked and every class
 * added, so all shards stop on the same bad line and number the CONJ
 * classes alike.  LLR_OK or an error. */
int llr_disc_set_read(llr_disc_set *d, const char *path, const llr_strmap *vocab, int32_t unk, int tasks, int add_classes, llr_err *err);
void llr_disc_set_free(llr_disc_set *d);
/* The buffers of a batch (zeroed before the first use; grown as needed). */
typedef struct llr_disc_batch_buf {
	int32_t *ids;
	size_t *off;
	int32_t *label;
	size_t cap_ids, cap_off, cap_lab;
	size_t tokens;
} llr_disc_batch_buf;
/* The examples idx[0..n) of task index t as a batch (pointing into b).
 * LLR_OK or LLR_ENOMEM. */
int llr_disc_set_batch(const llr_disc_set *d, int t, const size_t *idx, size_t n, llr_disc_batch_buf *b, llr_senc_batch *out);
void llr_disc_batch_buf_free(llr_disc_batch_buf *b);

/* Training a sentence encoder on such examples (train --task;
 * lib/family/sentenc/train.c). */
typedef struct llr_senc_train_cfg {
	int batch;                /* examples of one task a batch */
	int64_t task_cap;         /* examples of a task an epoch, 0: all */
	int tasks;                /* LLR_TASK_* trained (each with examples in train) */
	int dropout;              /* masks from the training state's generator (either kind) */
	int next_batch_negatives; /* llr_senc_batch's, one process only */
} llr_senc_train_cfg;
/* A job for llr_train_run (freed with llr_train_job_free): m's encoder
 * trained on train (this rank's shard of it under comm, m->conj and
 * m->n_conj its classes), validated on valid (rank 0's; NULL: none).
 * An epoch shuffles each task's examples, keeps task_cap of them, cuts
 * them into batches and shuffles the batches of all tasks together;
 * every rank trains on its share of each batch.  The validation number
 * is the mean over the tasks of 100 minus the accuracy (the driver's
 * error-rate rule); the file keeps the best epoch's accuracies in its
 * meta (valid_<task>_acc) and the epochs done (epochs_trained).
 * LLR_EINVAL when the ranks read train differently, or valid has no
 * example of the tasks. */
int llr_senc_train_job(llr_senc_model *m, const llr_disc_set *train, const llr_disc_set *valid, const llr_senc_train_cfg *cfg,
                       const llr_train_comm *comm, llr_train_job **out, llr_err *err);
/* A new model's encoder (configuration c; its n_conj is m's), its
 * weights drawn from seed, and the training state *ts of a fresh run:
 * the optimiser oc, the shuffles' and the dropout masks' generators
 * seeded from seed + 1 and seed + 2.  The caller frees ts->optim. */
int llr_senc_train_init(llr_senc_model *m, const llr_senc_config *c, uint64_t seed, const llr_optim_config *oc, llr_train_state *ts,
                        llr_err *err);
/* The job's last validation: each task's mean loss and accuracy in
 * percent (NaN for a task not validated).  LLR_EINVAL for a job of
 * another family. */
int llr_senc_train_valid(const llr_train_job *job, double loss[3], double acc[3]);

/* -------------------------------------------------------------- sampling */

/* Choosing the next word from a log-probability vector over V, such as a
 * row of llr_net_step's output (log b already included, so a draw is from
 * the exact LL distribution): ancestral sampling with temperature, top-k
 * and top-p (nucleus) truncation, or greedy argmax.  Order of operations:
 * temperature, then top-k, then top-p on what top-k kept (renormalised).
 * Ties are broken towards the lower id everywhere, so results never depend
 * on the platform's sort. */
/* llr_sample_opts: in the models section.  temperature 1, top_k 0, top_p 1, greedy 0. */
void llr_sample_opts_init(llr_sample_opts *o);
/* LLR_EINVAL naming the bad field (temperature <= 0, top_k < 0,
 * top_p outside (0, 1]). */
int llr_sample_opts_check(const llr_sample_opts *o, llr_err *err);

/* Workspace for drawing from vectors of length V. */
typedef struct llr_sampler llr_sampler;
llr_sampler *llr_sampler_new(int32_t V, llr_err *err);
void llr_sampler_free(llr_sampler *s);
/* Draw an id from logp[0..V) (need not be normalised; -inf and NaN
 * entries are never drawn) with one llr_rng_uniform call (none when
 * greedy).  Returns the id, or LLR_EINVAL if no entry is finite. */
int32_t llr_sample(llr_sampler *s, const llr_sample_opts *o, const float *logp, llr_rng *rng);
/* Index of the largest entry (NaN ignored, ties: lowest index); -1 if
 * n == 0 or every entry is NaN. */
int32_t llr_argmax(const float *x, int32_t n);
/* The min(k, n) largest entries of x in descending order (ties: lower
 * index first) into idx; returns how many, or LLR_ENOMEM.  NaN entries
 * count as -inf. */
int32_t llr_top_k(const float *x, int32_t n, int32_t k, int32_t *idx);

/* ------------------------------------------------------ encoder-decoder */

/* The encoder-decoder with attention of Neubig's NMT tutorial (sections 7
 * and 8): a bidirectional LSTM encoder over the source, an LSTM decoder
 * fed with the previous word and the previous attention context (input
 * feeding), attention with a dot, bilinear or MLP score, and the output
 * p(x) ~ b(x) exp(a . phi(x)) with a = W [h; ctx] + c: the softmax when
 * phi is the identity and b uniform, the log-linear layer otherwise.  With
 * priming (Dymetman & Xiao, condition-based priming) the background
 * depends on the source C: log b(C; x) = beta log tbar(x | C), where
 * tbar(x | C) = (1/|C|) sum_{s in C} t(x | s) is a bag-of-source-tokens
 * translation table (llr_prime_table) and beta is learnt (initially 1).
 * Layout: time-major, position n = t * B + b, as llr_net. */

enum { LLR_ATT_DOT = 1, LLR_ATT_BILINEAR = 2, LLR_ATT_MLP = 3 };
/* "dot", "bilinear", "mlp" -> LLR_ATT_*, 0 if unknown; and back. */
int llr_attention_parse(const char *name);
const char *llr_attention_name(int kind);

typedef struct llr_encdec_config {
	int32_t src_vocab;   /* Vs: rows of the source psi */
	int32_t src_feat;    /* its columns */
	int32_t vocab;       /* V: target words */
	int32_t feat_out;    /* F: columns of phi (softmax: V) */
	int32_t feat_in;     /* columns of the target psi (softmax: V) */
	int32_t embed;       /* E, source and target embeddings */
	int32_t hidden;      /* H (even): the decoder LSTM and the attention
	                        context; the encoder has H/2 per direction */
	int32_t enc_layers;  /* bidirectional encoder layers */
	int32_t attn_hidden; /* A: the MLP score's width */
	int attention;       /* LLR_ATT_* */
	int output;          /* LLR_OUT_* */
	int primed;          /* b(C; x) from a translation table */
	float dropout;       /* on the encoder layers' outputs and on [h; ctx]
	                        before the output layer, training only */
} llr_encdec_config;

typedef struct llr_encdec llr_encdec;
/* src_psi (Vs x Fs), phi (V x F), psi (V x F_in, NULL = phi), logb (V)
 * and table (Vs x V: t(x | s), every row a distribution with no zero;
 * only when primed) are borrowed and must outlive the network.  For
 * LLR_OUT_SOFTMAX phi, psi and logb are ignored (pass NULL); a primed
 * network ignores logb.  NULL with err on a bad configuration. */
llr_encdec *llr_encdec_new(const llr_encdec_config *c, const llr_csr *src_psi, const llr_csr *phi, const llr_csr *psi, const float *logb, const float *table, llr_err *err);
/* As llr_net_new_empty and llr_net_params_grow, for a loader. */
llr_encdec *llr_encdec_new_empty(const llr_encdec_config *c, const llr_csr *src_psi, const llr_csr *phi, const llr_csr *psi, const float *logb,
                                 const float *table, llr_err *err);
float *llr_encdec_params_grow(llr_encdec *m, size_t n, llr_err *err);
void llr_encdec_free(llr_encdec *m);
const llr_encdec_config *llr_encdec_cfg(const llr_encdec *m);
/* Make a (borrowed, NULL: none) a factor of the output's background:
 * b(C, y_<t; x) times b_fsa(q_t; x), q_t the automaton's state after the
 * target prefix y_<t (from its start at <s>), so that training, forced
 * scoring and every step normalise over the tokens allowed in q_t (</s>
 * only in a final state) and a target the automaton rejects has log p
 * -inf.  a must be over the target vocabulary (train --output-fsa; the
 * model file keeps it as the lexicon's fsa/ members).  LLR_EINVAL when
 * its vocabulary has no </s> among the targets. */
int llr_encdec_set_fsa(llr_encdec *m, const llr_fsa *a, llr_err *err);
/* The automaton of llr_encdec_set_fsa, NULL: none. */
const llr_fsa *llr_encdec_fsa(const llr_encdec *m);
/* Parameters and gradients: one flat array each, as llr_net.  The
 * tensors, in order: src/embed (Fs x E); per encoder layer L and
 * direction D (fw, bw) encL/D/wx (Din x 2H), encL/D/wh (H/2 x 2H),
 * encL/D/b (2H) with Din = E for L = 0, else H; embed (F_in x E), bos
 * (E); dec/wx (E x 4H), dec/wr (2H x 4H: applied to the previous
 * [h; ctx]), dec/b (4H); att/w (bilinear H x H, MLP H x A), att/wk (MLP
 * H x A), att/b and att/v (MLP, A); out/w (F x 2H), out/b (F); prime/beta
 * (1, primed).  Gate columns as llr_net: input, forget, output, candidate. */
float *llr_encdec_params(llr_encdec *m, size_t *n);
float *llr_encdec_grads(llr_encdec *m, size_t *n);
size_t llr_encdec_n_tensors(const llr_encdec *m);
void llr_encdec_tensor_info(const llr_encdec *m, size_t i, const char **name, int *ndim, int64_t shape[2], size_t *offset);
/* Weights uniform in [-0.08, 0.08), biases 0 except the LSTM forget
 * gates' 1, prime/beta 1. */
void llr_encdec_init(llr_encdec *m, llr_rng *rng);

/* B source-target pairs.  The decoder's first input is LLR_BOS_ID, and the
 * decoder starts from the encoder's last states (forward direction at the
 * last position, backward at the first) with a zero context. */
typedef struct llr_encdec_batch {
	int B, S, T;
	const int32_t *src;     /* S x B: rows of the source psi (caller adds the
	                           source </s>); positions from src_len on are
	                           ignored */
	const int32_t *src_len; /* B: 0 .. S */
	const int32_t *input;   /* T x B: rows of the target psi, LLR_BOS_ID */
	const int32_t *target;  /* T x B: target ids, -1 = padding (at the end) */
} llr_encdec_batch;

/* As llr_net_train_step: gradients ADDED to llr_encdec_grads, *nll the
 * summed -log p over the *ntok non-padding targets; dropout when rng is
 * not NULL.  LLR_EINVAL on an id out of range, LLR_ENAN on a non-finite
 * loss. */
int llr_encdec_train_step(llr_encdec *m, const llr_encdec_batch *bt, llr_rng *rng, double *nll, int64_t *ntok, llr_err *err);
/* Forced decoding: logp[t*B+b] = log p(target) (0 at padding); norm_err
 * as llr_net_score. */
int llr_encdec_score(llr_encdec *m, const llr_encdec_batch *bt, float *logp, double *norm_err, llr_err *err);

/* Step-by-step decoding of one source with K hypothesis slots. */
typedef struct llr_encdec_state llr_encdec_state;
llr_encdec_state *llr_encdec_state_new(const llr_encdec *m, int K);
void llr_encdec_state_free(llr_encdec_state *s);
/* Encode src[0..len) (len may be 0) and put every slot at the start. */
int llr_encdec_start(llr_encdec *m, llr_encdec_state *s, const int32_t *src, int len, llr_err *err);
/* Feed input[k] (LLR_BOS_ID first) to slots k < n: logp (n x V) gets
 * log p(x) for every word, attn (n x len, may be NULL) the attention. */
int llr_encdec_step(llr_encdec *m, llr_encdec_state *s, int n, const int32_t *input, float *logp, float *attn, llr_err *err);
/* Slot k takes the state slot from[k] had, for k < n (beam search). */
void llr_encdec_state_select(llr_encdec_state *s, const int *from, int n);

/* Length of the source the state was started on. */
int llr_encdec_state_len(const llr_encdec_state *s);

/* Beam search (Neubig's tutorial, section 7.2) over one model or an
 * ensemble (section 7.4): every model is fed the same hypotheses, and the
 * ensemble's log p(x) is the average of the models' log p(x), renormalised
 * over V.  Expansions are ranked by their summed log-probability; those
 * ending in eos among the best `beam` are set aside as finished, and the
 * `beam` best others stay alive.  The search stops when `beam` hypotheses
 * have finished, none is alive, or after max_len tokens.  Finished ones
 * (and, if fewer than nbest finished, the best unfinished) are ranked by
 * score = logp / len^len_norm, len counting eos; ties keep the earlier. */
typedef struct llr_search_opts {
	int beam;        /* >= 1; 1 is greedy search */
	int nbest;       /* hypotheses wanted, 1 .. beam */
	int max_len;     /* tokens at most, eos included */
	double len_norm; /* >= 0; 0 ranks by logp */
	int attention;   /* keep each hypothesis' attention (first model) */
	/* NULL, or an automaton over the target vocabulary that masks models
	 * trained without one (gen --fsa on an encoder-decoder: the
	 * mask-only mode).  Each step's log p is then masked to the tokens
	 * it allows in the hypothesis' state (</s> in a final state),
	 * weighted by their arcs and renormalised over them; an expansion
	 * is kept only when a final state stays reachable within max_len,
	 * as under a model's own automaton.  When the first model has its
	 * own automaton (llr_encdec_set_fsa), the mask must be the
	 * intersection of that automaton with another (llr_fsa_meet, gen
	 * --fsa on such a model: weighted by the other alone), else
	 * LLR_EINVAL; the other models' automata mask through their log p. */
	const llr_fsa *mask;
} llr_search_opts;

typedef struct llr_hyp {
	int32_t *ids;   /* len tokens; the last is eos when finished */
	int len;
	int finished;
	double logp;    /* summed log-probability of the tokens */
	double score;   /* logp / len^len_norm */
	float *attn;    /* len x source length, or NULL */
} llr_hyp;

/* states[m] must belong to models[m], have at least beam slots and have
 * been started on the source; the models must share the target
 * vocabulary.  out holds nbest hypotheses; *nout gets their number (at
 * least 1), best first; free each with llr_hyp_clear. */
int llr_encdec_search(llr_encdec *const *models, llr_encdec_state *const *states, int M, int32_t eos, const llr_search_opts *o, llr_hyp *out, int *nout, llr_err *err);
void llr_hyp_clear(llr_hyp *h);
/* Forced decoding of one target step by step, on slot 0 of a state
 * started on the source: logp[t] gets log p of tgt[t] for t < n, then
 * of eos at t = n (n + 1 entries).  With mask (an automaton over the
 * target vocabulary; for a model with its own automaton, the
 * intersection of that one with another, llr_fsa_meet, as
 * llr_search_opts.mask is) each step is masked and renormalised as
 * llr_encdec_search's mask does (score --fsa: the probability gen
 * --fsa's search gives a reference); a token the mask rejects, and
 * every later one, gets -inf.  LLR_EINVAL on a token out of range, or
 * a model with its own automaton and a mask that is not its
 * intersection. */
int llr_encdec_force(llr_encdec *m, llr_encdec_state *s, const int32_t *tgt, int n, int32_t eos, const llr_fsa *mask, double *logp, llr_err *err);

/* The source side of parallel data (featurize --source) and of an
 * encoder-decoder model file: the source vocabulary (with </s>, added to
 * every source sentence, and <unk>), its input features psi (one-hot
 * SRC:<token> features), and with a source-conditioned background the
 * priming table t(x | s) over the target vocabulary V.  Meta keys:
 * source_vocab_size, source_n_features, source_eos_id, source_unk_id,
 * prime (none or table), prime_iters, prime_smoothing.  Members, in
 * order: source/vocab, source/features (text, one entry a line),
 * source/psi/indptr, source/psi/indices, source/psi/data, and with
 * prime=table source/table (float32, Vs x V).  See llrnn-tensor(5). */
typedef struct llr_source {
	llr_strmap *vocab;    /* Vs tokens */
	llr_strmap *features; /* Fs feature names */
	llr_csr *psi;         /* Vs x Fs */
	int32_t eos_id, unk_id;
	float *table;         /* Vs x V, or NULL */
	int prime_iters;      /* how the table was estimated (llr_prime_table) */
	double prime_k;
} llr_source;

void llr_source_free(llr_source *s);
int llr_source_to_meta(const llr_source *s, llr_meta *m);
/* Write the members; V is the target vocabulary size (the table's width). */
int llr_source_write(llr_tensor_writer *w, const llr_source *s, int32_t V, llr_err *err);
/* Read them, the first being the next member of r (as llr_lexicon_read),
 * the sizes from llr_tr_meta(r); the table's rows must be distributions
 * without zeros.  Caller frees *out with llr_source_free. */
int llr_source_read(llr_tensor_reader *r, int32_t V, llr_source **out, llr_err *err);
/* A source token's id, unk_id if unknown. */
int32_t llr_source_id(const llr_source *s, const char *tok, size_t len);

/* An encoder-decoder model file (kind "model", meta family=encdec,
 * llrnn-model(5)): the target lexicon, the source side, the network's
 * configuration and weights (params/<name> in llr_encdec_tensor_info
 * order), and the training state as llr_rnnlm_save writes it. */
typedef struct llr_encdec_model {
	llr_lexicon *lex;
	llr_source *src;
	llr_encdec *net;
	llr_meta *meta; /* hyperparameters and training summary */
} llr_encdec_model;

/* The configuration the meta keys output, attention, embed, hidden,
 * enc_layers, attn_hidden, dropout and primed describe for x and s. */
int llr_encdec_model_config(const llr_meta *meta, const llr_lexicon *x, const llr_source *s, llr_encdec_config *c, llr_err *err);
/* The network of configuration c over x and s (borrowed). */
llr_encdec *llr_encdec_model_net(const llr_encdec_config *c, const llr_lexicon *x, const llr_source *s, llr_err *err);
/* As llr_rnnlm_save and llr_rnnlm_load_state (ts may be NULL). */
int llr_encdec_model_save(const char *path, const llr_encdec_model *m, const llr_train_state *ts, llr_err *err);
int llr_encdec_model_load(const char *path, llr_encdec_model **out, llr_train_state **ts, llr_err *err);
void llr_encdec_model_free(llr_encdec_model *m);
/* LLR_OK if the stream's lexicon x and source s are the model's. */
int llr_encdec_model_fits(const llr_encdec_model *m, const llr_lexicon *x, const llr_source *s, llr_err *err);

/* Source-target pairs for training an encoder-decoder: pair k is
 * src[soff[k] .. soff[k+1]) (ending in the source </s>) and
 * tgt[toff[k] .. toff[k+1]) (ending in </s>). */
typedef struct llr_encdec_pairs {
	int32_t *src, *tgt;
	size_t *soff, *toff;
	size_t n, ns, nt, cap_s, cap_t, cap_p;
	int64_t tokens;  /* target tokens, </s> included */
	int64_t skipped; /* longer than max_len on either side */
	int64_t *line;   /* n: where pair k was read: its sentence number in
	                    the stream (the line of featurize's target file),
	                    or its line in the target text file */
	int64_t rejected; /* left out by llr_encdec_pairs_constrain */
} llr_encdec_pairs;
/* The pairs of a featurize --source stream r (named name in messages;
 * its lexicon x and source s read), those within max_len. */
int llr_encdec_pairs_read(llr_tensor_reader *r, const char *name, const llr_lexicon *x, const llr_source *s, int max_len,
                          llr_encdec_pairs *p, llr_err *err);
/* The pairs of two aligned text files, a sentence a line (unknown tokens
 * <unk>), those within max_len. */
int llr_encdec_pairs_read_text(const char *spath, const char *tpath, const llr_lexicon *x, const llr_source *s, int max_len,
                               llr_encdec_pairs *p, llr_err *err);
void llr_encdec_pairs_free(llr_encdec_pairs *p);
/* Keep the pairs whose target the automaton a (over vocab) accepts: a
 * rejected one is LLR_EFORMAT naming where it was read (name and its
 * line; stream 1: a featurize --source stream, whose pair n is line n of
 * the target file featurize read), the first token rejected and the
 * prefix before it, or with skip it is left out and counted in
 * p->rejected (p->tokens follows).  LLR_EEMPTY when skip leaves none. */
int llr_encdec_pairs_constrain(llr_encdec_pairs *p, const llr_fsa *a, const llr_strmap *vocab, const char *name, int stream, int skip,
                               llr_err *err);

typedef struct llr_encdec_train_cfg {
	int batch, max_len;
	int dropout; /* dropout masks: from the training state's generator */
} llr_encdec_train_cfg;
/* A job for llr_train_run (freed with llr_train_job_free): m trained on
 * train, validated on valid (rank 0's; NULL or empty: none), all
 * borrowed.  In a distributed run rank r trains on the pairs r, r +
 * size, ... of every batch. */
int llr_encdec_train_job(llr_encdec_model *m, const llr_encdec_pairs *train, const llr_encdec_pairs *valid,
                         const llr_encdec_train_cfg *cfg, const llr_train_comm *comm, llr_train_job **out, llr_err *err);

/* Setting an encoder-decoder up for training (lib/family/encdec/
 * setup.c; train(1), "Encoder-decoder").  A new model's choices: */
typedef struct llr_encdec_setup {
	int output;      /* LLR_OUT_LOGLINEAR (0: that) or LLR_OUT_SOFTMAX */
	int attention;   /* LLR_ATT_* */
	int prime;       /* a priming table from the training pairs (log-linear) */
	int prime_iters; /* its llr_prime_table iters and k */
	double prime_k;
	int embed, hidden, enc_layers, attn_hidden;
	double dropout;
	int batch, max_len;
	int optim;      /* LLR_OPT_* */
	double lr, eps; /* > 0, else the optimiser's defaults */
	uint64_t seed;
} llr_encdec_setup;
/* The fields a resumed model fixes (llr_encdec_resume's given), in the
 * order of their index (the bit's position). */
enum {
	LLR_EDS_OUTPUT = 1 << 0, LLR_EDS_ATTENTION = 1 << 1, LLR_EDS_EMBED = 1 << 2, LLR_EDS_HIDDEN = 1 << 3,
	LLR_EDS_ENC_LAYERS = 1 << 4, LLR_EDS_ATTN_HIDDEN = 1 << 5, LLR_EDS_DROPOUT = 1 << 6, LLR_EDS_BATCH = 1 << 7,
	LLR_EDS_MAX_LEN = 1 << 8, LLR_EDS_OPTIM = 1 << 9, LLR_EDS_PRIME = 1 << 10, LLR_EDS_SEED = 1 << 11,
	LLR_EDS_NFIXED = 12
};
/* 1 when the features stream at path was made by featurize --source (it
 * has a source side), else 0 (unreadable too). */
int llr_encdec_stream_has_source(const char *path);
/* The training stream at path (NULL: stdin, named name in messages): its
 * lexicon *x, source *s (caller frees both) and pairs within max_len into
 * p.  LLR_EFORMAT when it has no source side. */
int llr_encdec_stream_read(const char *path, const char *name, int max_len, llr_lexicon **x, llr_source **s,
                           llr_encdec_pairs *p, llr_err *err);
/* A new model over x and s with the priming table (o->prime) estimated
 * from the training pairs tp, its weights and training state *ts from
 * o->seed, and the meta train --resume reads back (optim, lr, batch,
 * max_len, seed).  The model owns x and s from then on; on failure they
 * are still the caller's.  LLR_EINVAL for a primed softmax output. */
int llr_encdec_fresh(const llr_encdec_setup *o, llr_lexicon *x, llr_source *s, const llr_encdec_pairs *tp,
                     llr_encdec_model **m, llr_train_state **ts, llr_err *err);
/* The model file path and its training state, to continue the run: the
 * fields of o in the mask given (LLR_EDS_*) must be the model's, and o's
 * batch, max_len and dropout become the model's.  A field that differs
 * is LLR_EINVAL with its index (the bit's position) in *bad and the
 * message "key=value" (the model's meta); otherwise *bad is -1. */
int llr_encdec_resume(const char *path, llr_encdec_setup *o, unsigned given, llr_encdec_model **m, llr_train_state **ts,
                      int *bad, llr_err *err);
/* A resumed model m (named path) against the stream's x and s (named
 * name) and training pairs tp: a primed model's table is estimated again
 * from tp as the model's was, then both sides must be the model's
 * (LLR_EFORMAT saying what differs).  x and s are freed in any case. */
int llr_encdec_resume_sides(llr_encdec_model *m, const char *path, llr_lexicon *x, llr_source *s, const char *name,
                            const llr_encdec_pairs *tp, llr_err *err);

/* The priming table: t(x | s) from aligned source and target id
 * sequences (pairs k of src[soff[k] .. soff[k+1]) and tgt[toff[k] ..
 * toff[k+1]), the target's </s> included).  iters = 0: co-occurrence
 * counts, t(x | s) ~ sum over pairs of count_s count_x / |source|;
 * iters > 0: that many EM iterations of IBM model 1 from there.  Every
 * row is smoothed with weight k towards the add-one target unigram
 * distribution u(x) = (count(x) + 1) / (N + V), so no entry is 0:
 * t(x | s) = (n(s, x) + k u(x)) / (n(s) + k).  table is Vs x V.
 * LLR_EEMPTY if there is no pair with a target. */
int llr_prime_table(int32_t Vs, int32_t V, size_t npairs, const int32_t *src, const size_t *soff, const int32_t *tgt, const size_t *toff, int iters, double k, float *table, llr_err *err);

/* --------------------------------------------------------- n-gram models */

/* Backoff n-gram models (lib/ngram/): counting a corpus, interpolated
 * modified Kneser-Ney estimation as KenLM's lmplz does it (Chen & Goodman
 * 1998; Heafield et al. 2013), ARPA files in and out, and the query
 * structure: a trie of sorted arrays, one level per order, saved as a
 * tensor archive of kind "ngram" (llrnn-tensor(5)).  Probabilities are
 * stored as in ARPA files, log10 in float; queries answer in log10 too. */

#define LLR_NGRAM_MAX_ORDER 8

/* Counting: the highest-order n-grams of every sentence "<s> w1 .. wk
 * </s>", the context at a sentence start padded with <s> as lmplz does,
 * in one open-addressing hash table of (4 N + 8)-byte slots, at most 70%
 * full, which grows by doubling.  Growing beyond max_bytes (table and
 * vocabulary together) is LLR_ERANGE.  Word ids: <unk> 0, <s> 1, </s> 2,
 * then the words in order of first appearance. */
typedef struct llr_ngram_counter llr_ngram_counter;
llr_ngram_counter *llr_ngram_counter_new(int order, size_t max_bytes, llr_err *err);
void llr_ngram_counter_free(llr_ngram_counter *c);
/* Count one sentence of tokens (llr_token_next).  A token <s> or </s> is
 * LLR_EFORMAT (the caller prefixes file:line); <unk> is the unknown word. */
int llr_ngram_count_line(llr_ngram_counter *c, const char *line, size_t len, llr_err *err);
/* Memory the counter holds now, in bytes. */
size_t llr_ngram_counter_bytes(const llr_ngram_counter *c);
uint64_t llr_ngram_counter_tokens(const llr_ngram_counter *c); /* words + </s> */

typedef struct llr_kn_opts {
	/* Discount fallback (lmplz --discount_fallback): when an order's
	 * counts of counts give no valid discounts (a count of count zero, a
	 * discount outside [0, k]), use fallback[0..2] instead of failing. */
	int discount_fallback;
	double fallback[3]; /* 0.5 1 1.5 as lmplz */
	/* Pruning (lmplz --prune): prune[n-1] > 0 drops n-grams of order n
	 * (n >= 2) whose raw count is <= prune[n-1], unless a longer kept
	 * n-gram extends them; their discounted mass goes to the backoff. */
	uint64_t prune[LLR_NGRAM_MAX_ORDER];
} llr_kn_opts;
void llr_kn_opts_init(llr_kn_opts *o);

/* Estimate the model from the counts (the counter is left empty, its
 * memory given back as estimation proceeds).  discounts, when not NULL,
 * gets D1, D2, D3+ for each order (order x 3).  LLR_EEMPTY if nothing
 * was counted, LLR_EINVAL if discounts cannot be computed (see
 * discount_fallback). */
int llr_ngram_estimate(llr_ngram_counter *c, const llr_kn_opts *o, llr_ngram **out, double *discounts, llr_err *err);
/* After llr_ngram_counter_end, counts not spilled: the most bytes
 * llr_ngram_estimate would hold for them, the model and the vocabulary
 * included, an upper bound from the sizes of its arrays (each order's
 * n-grams bounded by a pass over the counts); for a caller to choose
 * llr_ngram_estimate_arpa when it passes its budget. */
size_t llr_ngram_estimate_bytes(const llr_ngram_counter *c, const llr_kn_opts *o);

/* Counting and estimating on disk (lib/ngram/xestimate.c).  Once
 * llr_ngram_counter_spill is called (before the first line), counts that
 * outgrow max_bytes are written as sorted runs to temporary files in
 * dir instead of failing, and llr_ngram_counter_spilled says so at the
 * end; such counts are estimated by llr_ngram_estimate_arpa, in sorted
 * streams on disk within max_bytes, straight to an ARPA file (the
 * model is never in memory: llr_ngram_estimate refuses them).  The
 * temporary files are unlinked as soon as they are created. */
typedef struct llr_ngram_disk {
	const char *dir;    /* the folder of the temporary files */
	int fanin;          /* the most runs merged at once; 0: 16 */
	size_t run_records; /* tests: a run every so many records; 0: when memory is full */
	int threads;        /* threads sorting each run (0 or 1: one); the output is the same */
	size_t base;        /* bytes of max_bytes the process holds apart from counting and estimation (its
	                     * code, libraries, stacks: its resident memory before counting), taken off */
} llr_ngram_disk;
typedef struct llr_ngram_disk_stats {
	uint64_t runs;   /* sorted runs written, counting included */
	uint64_t passes; /* merge passes before the last merge */
	uint64_t disk;   /* the most bytes in temporary files at once */
	int64_t count[LLR_NGRAM_MAX_ORDER]; /* n-grams written per order */
} llr_ngram_disk_stats;
int llr_ngram_counter_spill(llr_ngram_counter *c, const llr_ngram_disk *d, llr_err *err);
/* The last keys merged (which may spill them); then spilled says
 * whether the counts are on disk. */
int llr_ngram_counter_end(llr_ngram_counter *c, llr_err *err);
int llr_ngram_counter_spilled(const llr_ngram_counter *c);
/* Estimate the counts of c (spilled, or still in memory: then written as
 * one sorted run first) and write the ARPA model to path
 * (NULL or "-": standard output, held in a temporary file until the end
 * so that an error leaves it empty); as llr_ngram_estimate otherwise.
 * LLR_ERANGE when max_bytes is too small to sort in (the message gives
 * the least that works). */
int llr_ngram_estimate_arpa(llr_ngram_counter *c, const llr_kn_opts *o, const char *path, double *discounts, llr_ngram_disk_stats *st,
                            llr_err *err);
/* The same written as the trie's binary form (llr_ngram_save's bytes
 * for the same counts), built from the levels' sorted streams on disk,
 * member by member, within max_bytes. */
int llr_ngram_estimate_trie(llr_ngram_counter *c, const llr_kn_opts *o, const char *path, double *discounts, llr_ngram_disk_stats *st,
                            llr_err *err);
void llr_ngram_free(llr_ngram *m);

int llr_ngram_order(const llr_ngram *m);
int64_t llr_ngram_count(const llr_ngram *m, int n); /* n-grams of order n */
int32_t llr_ngram_vocab_size(const llr_ngram *m);
int32_t llr_ngram_word(const llr_ngram *m, const char *w, size_t len); /* -1 absent */
/* The ids of n NUL-terminated words (-1 absent), as llr_ngram_word each. */
void llr_ngram_words(const llr_ngram *m, const char *const *w, size_t n, int32_t *ids);
const char *llr_ngram_token(const llr_ngram *m, int32_t id);
/* Ids of <s>, </s>, <unk>; -1 when the model lacks them. */
int32_t llr_ngram_bos(const llr_ngram *m);
int32_t llr_ngram_eos(const llr_ngram *m);
int32_t llr_ngram_unk(const llr_ngram *m);

/* log10 p(w | ctx[0..n)), ctx oldest first (only the last order-1 words
 * count), by the ARPA backoff rule: the longest listed n-gram ending in w
 * gives its probability, times the backoff weights of the longer
 * contexts that are listed.  *matched (may be NULL) gets that n-gram's
 * length.  Ids must be in range; a negative context id (an unknown word)
 * cuts the context there. */
float llr_ngram_log10p(const llr_ngram *m, const int32_t *ctx, int n, int32_t w, int *matched);

/* The trie.  Level n (1-based) holds the n-grams of order n sorted by
 * (prefix, last word); level 1 is indexed by word id.  For n < order,
 * the children of entry i of level n, its extensions by one word, are the
 * entries child[i] .. child[i+1]-1 of level n+1. */
typedef struct llr_ngram_level {
	int64_t count;
	const int32_t *word;  /* last word (level 1: NULL, the index) */
	const float *logp;    /* log10 p */
	const float *backoff; /* log10 backoff; NULL at the highest order */
	const int64_t *child; /* count + 1 offsets; NULL at the highest order */
} llr_ngram_level;
void llr_ngram_level_get(const llr_ngram *m, int n, llr_ngram_level *out);
/* The entry of level n for words[0..n), or -1 if it is not listed. */
int64_t llr_ngram_find(const llr_ngram *m, const int32_t *words, int n);

/* ARPA text (any writer: llrnn, KenLM, SRILM, IRSTLM), compressed or not.
 * Errors "file:line: reason" (LLR_EFORMAT): counts that differ from
 * \data\, a missing or misplaced section, a field that is not a number,
 * a word of a longer n-gram absent from the 1-grams, an n-gram whose
 * prefix is not listed, a duplicate. */
int llr_ngram_read_arpa(const char *path, llr_ngram **out, llr_err *err);
/* Write ARPA (compressed by path's suffix, llr_compress_for_path), atomically (temporary file and
 * rename, mode 0666 less the umask); path "-" is stdout.  Numbers have 8
 * significant digits, 9 when 8 do not read back as the same float. */
int llr_ngram_write_arpa(const llr_ngram *m, const char *path, llr_err *err);
/* The binary form: a tensor archive of kind "ngram" (llrnn-tensor(5)). */
int llr_ngram_save(const llr_ngram *m, const char *path, llr_err *err);
/* Read either form (a tensor archive is told by its first bytes; anything
 * else is read as ARPA). */
int llr_ngram_load(const char *path, llr_ngram **out, llr_err *err);
/* 1 if path holds an n-gram model (an "ngram" archive, or text with a
 * \data\ line in its first 64 KiB), 0 if not (another llrnn archive, other
 * text), <0 if it cannot be read. */
int llr_ngram_sniff(const char *path, llr_err *err);
/* Open an n-gram model for queries: ARPA text, the trie form, or the
 * probing form (llrnn-tensor(5), structure=probing), which is mapped
 * (mmap) rather than read, so it loads in milliseconds.  Flags:
 *   LLR_NGRAM_PROBE   build the probing form in memory from ARPA text or
 *                     the trie form and drop the trie (faster queries; the
 *                     trie's arrays, llr_ngram_level_get and
 *                     llr_ngram_find, are then gone);
 *   LLR_NGRAM_VERIFY  check every member's CRC at load.  Without it the
 *                     probing form's tables are checked lazily, 64 KiB at
 *                     a time, when a query first touches them, and a
 *                     mismatch shows in llr_ngram_status.
 * llr_ngram_load is llr_ngram_open with no flags, minus the probing form
 * (refused: the trie's users need the trie). */
#define LLR_NGRAM_PROBE 1u
#define LLR_NGRAM_VERIFY 2u
int llr_ngram_open(const char *path, unsigned flags, llr_ngram **out, llr_err *err);
/* "probing" or "trie". */
const char *llr_ngram_structure(const llr_ngram *m);
/* Write m's probing form to path (atomically, as llr_ngram_save). */
int llr_ngram_save_probing(const llr_ngram *m, const char *path, llr_err *err);
/* log10 p of h[1..n] (ids, -1 for a word scored 0) after h[0] (<s>, or
 * -1), each as llr_ngram_log10p gives it with the context before it,
 * into lp[0..n); len (may be NULL) the matched lengths.  LLR_OK, or
 * LLR_EFORMAT when the model was found corrupted (llr_ngram_status): the
 * figures are then not to be used. */
int llr_ngram_score_ids(const llr_ngram *m, const int32_t *h, size_t n, float *lp, int32_t *len, llr_err *err);
/* The same for B sentences at once, the lookups of the next tokens
 * fetched across sentences: sentence b is n[b] + 1 ids of h (its context
 * first, then its n[b] tokens), the next sentence's right after, and its
 * figures are n[b] of lp and len, the next's right after. */
int llr_ngram_score_batch(const llr_ngram *m, const int32_t *h, const size_t *n, size_t B, float *lp, int32_t *len, llr_err *err);
/* LLR_OK, or LLR_EFORMAT naming the block of the probing form that failed
 * its lazy checksum; sticky, from that query on. */
int llr_ngram_status(const llr_ngram *m, llr_err *err);

/* The spelling model of open-vocabulary scoring (lib/ngram/spelling.c):
 * p_spell(w) over every finite string of Unicode scalar values, a
 * Kneser-Ney character n-gram with </s> ending the word; a character it
 * never saw gets p(<unk> | h) / U (U: the scalar values not seen), so the
 * probabilities of all strings sum to 1 and none is 0.  Train it by
 * counting words with llr_spelling_count into an llr_ngram_counter, then
 * llr_ngram_estimate (llr_kn_opts.discount_fallback helps small word
 * lists) and llr_spelling_new. */
/* Count w[0..len) as the sentence of its characters.  LLR_EFORMAT for an
 * empty word, invalid UTF-8, a space, TAB, newline or NUL. */
int llr_spelling_count(llr_ngram_counter *c, const char *w, size_t len, llr_err *err);
/* Takes m (llr_spelling_free frees it; on failure it stays the caller's).
 * LLR_EINVAL if m has no <unk> or </s>. */
llr_spelling *llr_spelling_new(llr_ngram *m, llr_err *err);
void llr_spelling_free(llr_spelling *s);
const llr_ngram *llr_spelling_ngram(const llr_spelling *s);
/* ln p_spell(w), finite for any bytes (a byte that is not UTF-8, a space
 * or a TAB scores as an unseen character). */
double llr_spelling_logp(const llr_spelling *s, const char *w, size_t len);
/* ln of the share of p(<unk> | h) that one unseen character takes. */
double llr_spelling_log_unseen(const llr_spelling *s);
/* The strings of ASCII digits under p_spell, exactly, grouped
 * (lib/ngram/spelldigits.c): the strings of at most LLR_DIGIT_SINGLE
 * digits are a group each, the longer ones a group per length and last k
 * digits (k the model's order less 1), and the lengths from cap on share
 * one group per last k digits.  logp[i] is ln of group i's total
 * p_spell. */
#define LLR_DIGIT_MAX_K 4
#define LLR_DIGIT_SINGLE 4
typedef struct llr_digit_groups {
	int k, cap;
	int32_t count;
	double *logp; /* count */
} llr_digit_groups;
/* Make g (llr_digit_groups_free frees it) by a forward pass over the
 * n-gram.  LLR_EINVAL for a model of order below 2 or above
 * LLR_DIGIT_MAX_K + 1, or cap <= LLR_DIGIT_SINGLE; LLR_ERANGE if the strings do not end
 * (their mass in flight is not below 1e-17 of the total after a million
 * digits). */
int llr_spelling_digit_groups(const llr_spelling *s, int cap, llr_digit_groups *g, llr_err *err);
void llr_digit_groups_free(llr_digit_groups *g);
/* The group of w[0..len), or -1 when w is empty or not all ASCII digits. */
int32_t llr_digit_group_of(const llr_digit_groups *g, const char *w, size_t len);
/* Group i's length (cap for the longest) and its digits as a number: all
 * of them up to LLR_DIGIT_SINGLE, else the last k. */
void llr_digit_group_key(const llr_digit_groups *g, int32_t i, int *len, int32_t *tail);
/* Draw one string w from p_spell into out (cleared first; UTF-8, no NUL
 * added beyond llr_buf's own): character by character from the n-gram's
 * distribution until </s>, an unseen character uniformly among the U.
 * *logp (may be NULL) gets ln p_spell(w), as llr_spelling_logp gives it.
 * The string may be empty, or hold a space or TAB (p_spell covers every
 * string); LLR_ERANGE past 10,000 characters (a model whose </s> is
 * vanishingly rare).  Keeps the distributions of the contexts it met in
 * s (up to 12,288 of them): not safe from several threads on one s. */
int llr_spelling_sample(const llr_spelling *s, llr_rng *rng, llr_buf *out, double *logp, llr_err *err);

/* The open background of open-vocabulary scoring (lib/ngram/openbg.c),
 * over every string w, for a lexicon with a spelling model.  V' is the
 * vocabulary less <unk> (</s> stays: the end of the sentence), and
 *     b(w) = (1 - lambda) b_V(w)                       for w in V'
 *     b(w) = lambda p_spell(w) / (1 - S_V)             for w outside V'
 * with b_V(w) = exp(logb[w]) / (1 - exp(logb[<unk>])), the lexicon's
 * background renormalised to V', and S_V = sum over v in V' of
 * p_spell(v): p_spell renormalised to the strings outside V', so V' has
 * mass exactly 1 - lambda and the rest exactly lambda.  The string
 * "<unk>" is outside V' like any unseen string.  The softmax-plus-spelling
 * baseline spreads p(<unk> | K) over the unseen strings by the same
 * p_spell(w) / (1 - S_V) (llr_openbg_unseen_logp). */
typedef struct llr_openbg llr_openbg;
/* The unseen-word mass lambda, Good-Turing: (n1 + n_unk) / N, with n1 the
 * training types seen once, n_unk the training tokens outside the
 * vocabulary and N every event the model predicts (tokens and </s>);
 * at least 1 / N, at most 1 - 1 / N.  N >= 2. */
double llr_open_lambda(int64_t n1, int64_t n_unk, int64_t N);
/* x (borrowed; it must outlive g) with x->spell.  LLR_EINVAL without a
 * spelling model; LLR_ENOMEM. */
llr_openbg *llr_openbg_new(const llr_lexicon *x, llr_err *err);
void llr_openbg_free(llr_openbg *g);
double llr_openbg_lambda(const llr_openbg *g);
/* ln(1 - S_V): the log of p_spell's mass outside V'. */
double llr_openbg_log_outside(const llr_openbg *g);
/* The id of w in V', or -1 for a string outside V' (among them <unk>). */
int32_t llr_openbg_word(const llr_openbg *g, const char *w, size_t len);
/* ln p_spell(w) - ln(1 - S_V): the distribution over the strings outside
 * V' (meaningful only for those). */
double llr_openbg_unseen_logp(const llr_openbg *g, const char *w, size_t len);
/* ln b(w) for any bytes, finite. */
double llr_openbg_logb(const llr_openbg *g, const char *w, size_t len);
/* 1 if the string can be written as one token of text (lib/text/tokens.c,
 * beside the rule that reads token lines): not empty, and
 * no space, TAB, LF, CR or NUL byte; else 0.  p_spell gives the other
 * strings mass too, but text never holds them. */
int llr_open_is_token(const char *w, size_t len);
/* Draw a token outside V' from q = p_spell / (1 - S_V) (gen's spelling
 * of <unk>): draws from p_spell until one is a token (llr_open_is_token)
 * outside V', at most tries of them (*draws: how many it took), so w
 * comes with probability q(w) / (the q-mass of the tokens).  1 with the
 * string in out and ln q(w) in *logq (may be NULL), 0 if no draw was, or
 * an error of llr_spelling_sample. */
int llr_openbg_draw(const llr_openbg *g, llr_rng *rng, int64_t tries, llr_buf *out, double *logq, int64_t *draws,
                    llr_err *err);

/* Signature masses and open-vocabulary scoring with the LL-RNN
 * (lib/lexicon/opensig.c, lib/lm/open.c; llrnn(7), "Open vocabulary").  For the strings w
 * outside V' (the open background's), q(w) = p_spell(w) / (1 - S_V), and
 * a signature sig is a row of phi:
 *     M(sig) = sum of q(w) over the w outside V' with llr_lexicon_any_row(w) = sig
 *     Z(K) = sum_{v in V'} b(v) e^{a.phi(v)} + lambda sum_sig M(sig) e^{a.phi_sig}
 *     p(w | K) = lambda q(w) e^{a.phi(w)} / Z(K)     for w outside V'. */
/* Estimate M, stratified: the known strings outside V' (known: NULL or a
 * set of strings; those in V' take no part) exactly, the rest from n
 * draws from q restricted to the strings outside V' and known (p_spell's
 * draws, those rejected), grouped by distinct row (llclass.c):
 *     M(sig) = sum of q(k) over the known k with row sig + (1 - Q) m(sig)
 * Q the known strings' total q, m(sig) the share of draws with row sig:
 * unbiased, the sampled part's standard error (1 - Q) sqrt(m (1 - m) / n).
 * Without known strings M(sig) = m(sig), standard error sqrt(M (1 - M) /
 * n).  known_sig (NULL, or one entry a known string) gets each known
 * string's signature, -1 for one in V'.  Needs x->spell; x then carries
 * them (members sig/phi, sig/logm; meta sig.count, sig.samples, sig.drawn,
 * sig.known when not 0, sig.seed).  Deterministic in seed; LLR_ERANGE if
 * the known strings carry all of q. */
int llr_lexicon_estimate_sigs(llr_lexicon *x, int64_t n, uint64_t seed, const llr_strmap *known, int32_t *known_sig,
                              llr_err *err);
/* The signature masses exactly (lib/lexicon/openexact.c, lib/lexicon/openpass.c):
 * every string outside V' summed by a forward pass over the spelling
 * model jointly with the features' automata, the strings whose rows the
 * pass does not give (the known strings, the lexicon sources' words, the
 * hunspell dictionary's listed forms, years and Roman ordinals) listed
 * apart.  A lexicon with a hunspell dictionary is put in listed mode
 * first (llrnn(7): then only the forms the dictionary lists get its
 * features outside V').  known and known_sig as above.  Features the
 * pass cannot follow (CNG:, more than 64 characters the spelling model
 * never saw among the suffix features, an affix file it cannot list):
 * LLR_OK, x unchanged, and why (why_cap bytes) says why. */
int llr_lexicon_exact_sigs(llr_lexicon *x, const llr_strmap *known, int32_t *known_sig, char *why, size_t why_cap,
                           llr_err *err);
/* The number of signatures (0 without); their rows (S x F) and ln M
 * (S), NULL without. */
size_t llr_lexicon_sigs(const llr_lexicon *x);
const llr_csr *llr_lexicon_sig_phi(const llr_lexicon *x);
const float *llr_lexicon_sig_logm(const llr_lexicon *x);
/* The digit strings' groups the signature masses sum exactly
 * (lib/lexicon/opendigits.c; meta sig.digits), their total q into *q; 0 when
 * they were drawn, with the reason in *why (a static string, NULL for a
 * lexicon read from a file or without signatures). */
int64_t llr_lexicon_sig_digits(const llr_lexicon *x, double *q, const char **why);
/* The short strings (of at most 3 characters the spelling model has
 * seen, lib/lexicon/openshort.c) the signature masses sum exactly (meta
 * sig.short), their total q into *q; 0 without. */
int64_t llr_lexicon_sig_shorts(const llr_lexicon *x, double *q);
/* The hunspell dictionary's word forms (lib/lexicon/opendict.c) the signature
 * masses sum exactly (meta sig.dict), their total q into *q; 0 without,
 * with *why the reason they were drawn (NULL when there was no dictionary
 * or for a lexicon read from a file). */
int64_t llr_lexicon_sig_dict(const llr_lexicon *x, double *q, const char **why);
/* When every string outside V' was summed exactly (lib/lexicon/openexact.c;
 * meta sig.exact, sig.listed, sig.unassigned): the classes of the
 * forward pass, the strings listed apart into *listed, the q the pass
 * left unassigned into *unassigned; 0 when they were drawn. */
int64_t llr_lexicon_sig_exact(const llr_lexicon *x, int64_t *listed, double *unassigned);
void llr_opensig_free(llr_opensig *g);

/* A log-linear model's network set up for open scoring (llr_net_set_open:
 * the open background over V, <unk> out, the signatures with log masses
 * ln lambda + ln M): m (borrowed) must outlive it.  LLR_EINVAL without a
 * spelling model or signatures. */
typedef struct llr_open llr_open;
llr_open *llr_open_new(llr_rnnlm *m, llr_err *err);
void llr_open_free(llr_open *o);
/* w's id in V', or -1 for a string outside it. */
int32_t llr_open_word(const llr_open *o, const char *w, size_t len);
/* ln b(w), the open background, for any bytes. */
double llr_open_logb(const llr_open *o, const char *w, size_t len);
/* The norm check over all strings: K fresh draws from q (seeded) whose
 * rows join llr_net_score's norm check, each of weight lambda, counted
 * (llr_net_set_norm_rows): V' exactly, the rest by importance sampling,
 * with its standard error (llr_net_norm).  LLR_EINVAL for K < 1 or the
 * signature masses' own seed (meta sig.seed: their very draws again). */
int llr_open_norm_samples(llr_open *o, int64_t K, uint64_t seed, llr_err *err);
/* The digit strings' groups the last llr_open_norm_samples summed
 * exactly (lib/lexicon/opendigits.c; its draws then skip them), 0 when it drew
 * them; the short strings it summed (lib/lexicon/openshort.c) into *shorts. */
int32_t llr_open_norm_digits(const llr_open *o, int32_t *shorts);
/* The dictionary's forms the last llr_open_norm_samples summed exactly
 * (lib/lexicon/opendict.c), 0 without. */
int32_t llr_open_norm_dict(const llr_open *o);
/* For a model with exact signature masses, llr_open_norm_samples sums
 * every string outside V' exactly, from the model's spelling model and
 * features (not its stored masses), and compares the row of each of K
 * draws with the row of its class: the draws compared (-1 for a model
 * whose masses were drawn), those that differ into *mismatched, the
 * first of them into *first (NULL: none), the strings listed apart into
 * *listed. */
int64_t llr_open_norm_exact(const llr_open *o, int32_t *listed, int64_t *mismatched, const char **first);
/* The number S of signatures. */
int32_t llr_open_sigs(const llr_open *o);
/* Draw a string of signature s (gen): from q restricted to the tokens
 * (llr_open_is_token) whose row (llr_lexicon_any_row) is s's, by
 * rejection, drawing from p_spell at most tries times (*draws: how many
 * it took; the acceptance rate is (1 - S_V) M(s) less the strings that
 * are not tokens).  1 with the string in out and in *logp (may be NULL)
 * ln q(w) - ln M(s), the log-probability of w among the strings of s (so
 * log p(s | K) + *logp is the model's log p(w | K)); 0 if no draw had
 * the row; LLR_EINVAL for s out of range, or an error of the spelling
 * model or the row.  Not thread-safe (o keeps a scratch row). */
int llr_open_draw(llr_open *o, int32_t s, llr_rng *rng, int64_t tries, llr_buf *out, double *logp, int64_t *draws,
                  llr_err *err);

/* The rows an open model scores (borrowed from o): the V words' phi and
 * log backgrounds (<unk>'s -inf), the S signatures' rows and
 * ln lambda + ln M. */
typedef struct llr_open_rows {
	const llr_csr *phi, *sig_phi;
	const float *logb_v, *sig_logb;
} llr_open_rows;
void llr_open_get_rows(const llr_open *o, llr_open_rows *R);
llr_rnnlm *llr_open_model(const llr_open *o);
/* The targets outside V' of a batch scored open (lib/family/rnnlm/
 * openrows.c): each string becomes a row of its own
 * (llr_lexicon_any_row) with its ln b(w) (llr_open_logb), for llr_batch's
 * xphi and xlogb.  op is borrowed. */
typedef struct llr_open_batch llr_open_batch;
llr_open_batch *llr_open_batch_new(const llr_open *op, llr_err *err);
void llr_open_batch_free(llr_open_batch *s);
/* A new batch: no rows yet. */
void llr_open_batch_reset(llr_open_batch *s);
/* Target id of w: its id in V', or V + i for the batch's i-th string
 * outside V' (*oov set to 1); a negative code on error. */
int32_t llr_open_batch_target(llr_open_batch *s, const char *w, size_t len, int *oov, llr_err *err);
/* The batch's rows and log backgrounds (NULL, NULL when none); owned by
 * s until the next reset. */
int llr_open_batch_finish(llr_open_batch *s, const llr_csr **xphi, const float **xlogb, llr_err *err);
/* The context-free fit of the output bias (lib/lm/openfit.c): beta (F)
 * maximising the mean log-likelihood of the targets, count[y] of row y
 * (V words, then S signatures), under p(y) = e^{lb(y) + beta.phi(y)} / Z,
 * less (l2 / 2) |beta|^2, by iters steps of Adam at rate from beta = 0.
 * rep: that log-likelihood before (beta = 0) and after, the last
 * gradient's norm, the number of targets.  LLR_EINVAL for no targets, a
 * negative count, or a target without background mass. */
typedef struct llr_fit_opts {
	int iters;
	double rate, l2;
} llr_fit_opts;
typedef struct llr_fit_report {
	double before, after, grad_norm, targets;
	int iters; /* the Adam steps taken */
} llr_fit_report;
int llr_open_fit_rows(const llr_open_rows *R, const int64_t *count, const llr_fit_opts *fo, double *beta,
                      llr_fit_report *rep, llr_err *err);
/* The same over o's rows, beta written to the network's out/b. */
int llr_open_fit_bias(llr_open *o, const int64_t *count, const llr_fit_opts *fo, llr_fit_report *rep, llr_err *err);

/* Open-vocabulary training of an LL-RNN (lib/family/rnnlm/open.c;
 * train(1), "Open vocabulary"): a stream whose lexicon has a spelling
 * model and signature masses (featurize --spelling) trains the
 * distribution score --open scores.  Its words outside the vocabulary come
 * as signature ids V + s; the loss of such a word is -ln(lambda M(s)
 * e^{a.phi_s} / Z) (llr_net_set_open), and its input the signature's row
 * when psi is phi, else <unk>'s.  Validation scores a string outside V'
 * by its own row, as score --open does. */
typedef struct llr_lm_open llr_lm_open;
/* Set m up to train on tc: open (*out set, tc->psi its training inputs'
 * rows, meta open_training) when closed is 0, m has a log-linear output
 * over word inputs and its lexicon signature masses; else closed (*out
 * NULL), tc's ids >= V (words outside the vocabulary) turned into <unk>
 * (LLR_EFORMAT when there are some and no <unk>).  *outside: how many
 * tokens of tc are outside the vocabulary.  Free *out with
 * llr_lm_open_free after the training (tc borrows from it). */
int llr_lm_open_new(llr_rnnlm *m, llr_lm_corpus *tc, int closed, llr_lm_open **out, int64_t *outside, llr_err *err);
void llr_lm_open_free(llr_lm_open *t);
/* The number S of signatures. */
int32_t llr_lm_open_sigs(const llr_lm_open *t);
/* A new model's output bias fitted context-free to the training targets
 * ids[0..n) (-1 padding; with comm the counts are summed across the
 * ranks) by llr_open_fit_bias, reported in rep and in the meta
 * (open_bias_init; open_bias_fit: the fitted weights of the HS:@known
 * and OOV: features the model has, when it has any). */
int llr_lm_open_fit_bias(llr_lm_open *t, const int32_t *ids, size_t n, const llr_train_comm *comm, llr_fit_report *rep,
                         llr_err *err);
/* The validation sentences of the text file path (one a line) into c,
 * pieces of at most max_len: a word outside the vocabulary is <unk>, or
 * with t (open training) its own row, target V + i for the i-th string
 * outside V' (c->psi, xphi and xlogb then borrow from t).  Sentences
 * with such a word are skipped when m has no <unk> (*skipped counts
 * them).  LLR_EFORMAT when no sentence, or no known word, is left. */
int llr_lm_corpus_read_text(const char *path, const llr_rnnlm *m, llr_lm_open *t, int max_len, llr_lm_corpus *c,
                            int64_t *skipped, llr_err *err);

/* An n-gram as the context-dependent background b(K; x) of the LL-RNN
 * (featurize --background ngram:FILE; man/llrnn.7 derives the sums).
 * b(K; x) is the n-gram's probability of lexicon word x after the last
 * order-1 words of K.  A lexicon word the n-gram lacks maps to the
 * n-gram's <unk> (all such words then share p(<unk> | K)); without a
 * <unk> in the n-gram, or when a word's unigram probability is 0,
 * llr_ngram_bg_new refuses (LLR_EINVAL naming the word).  m and vocab
 * are borrowed (m must outlive the background; vocab is read here only).
 * Contexts are arrays of n-gram ids, oldest first, as llr_ngram_log10p
 * reads them (a negative id cuts the context there). */
llr_ngram_bg *llr_ngram_bg_new(const llr_ngram *m, const llr_strmap *vocab, llr_err *err);
void llr_ngram_bg_free(llr_ngram_bg *g);
const llr_ngram *llr_ngram_bg_model(const llr_ngram_bg *g);
int32_t llr_ngram_bg_size(const llr_ngram_bg *g);   /* V, lexicon words */
int llr_ngram_bg_ctxlen(const llr_ngram_bg *g);     /* order - 1 */
/* ln p1(x) for the V lexicon words: the context-free part of b, the
 * lexicon's logb (the unigram level of the backoff recursion). */
const float *llr_ngram_bg_logb1(const llr_ngram_bg *g);
int32_t llr_ngram_bg_absent(const llr_ngram_bg *g); /* words mapped to <unk> */
/* n-gram id of lexicon word x; any x outside [0, V) gives <unk> (-1 if
 * the n-gram has none). */
int32_t llr_ngram_bg_map(const llr_ngram_bg *g, int32_t x);
/* ln b(K; x) by the plain backoff query (the dense definition). */
double llr_ngram_bg_logp(const llr_ngram_bg *g, const int32_t *ctx, int n, int32_t x);
/* The sparse form of b(K; .): *logc = ln C(K), the sum of the ln backoff
 * weights of the listed suffixes of K, so b(K; x) = C(K) p1(x) for every
 * word not returned; the returned words xs[i] (distinct lexicon ids, at
 * most V: the caller's arrays hold V) are those listed after a suffix of
 * K, with lnb[i] = ln b(K; xs[i]).  Cost: the listed continuations of the
 * suffixes of K, never O(V). */
size_t llr_ngram_bg_expand(const llr_ngram_bg *g, const int32_t *ctx, int n, double *logc, int32_t *xs, double *lnb);
/* Make g (borrowed, NULL: none) the background of a log-linear net: its
 * logb must be g's unigram level (llr_ngram_bg_logb1), V the same.  Each
 * position's context is then the stream's inputs back to its <s>
 * (llr_net_train_step, llr_net_score) or the inputs fed to a state since
 * its reset or <s> (llr_net_step); an input that is not a vocabulary
 * word counts as <unk>.  llr_rnnlm_net_new does this for a lexicon with
 * an n-gram.  LLR_EINVAL otherwise (another output, a mismatch). */
int llr_net_set_ngram_bg(llr_net *net, const llr_ngram_bg *g, llr_err *err);

/* ------------------------------------------------------------ BLAS seam */

/* C = alpha op(A) op(B) + beta C, row-major; op = transpose when trans. */
void llr_gemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);
/* The same in double precision, and y = alpha op(A) x + beta y (A M x N,
 * row-major): OpenBLAS's kernels, whatever llr_blas_set_fixed_order says. */
void llr_dgemm(int transA, int transB, int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
               double beta, double *C, int ldc);
void llr_dgemv(int trans, int M, int N, double alpha, const double *A, int lda, const double *x, double beta, double *y);
/* on: every llr_gemm from then on sums each element of C in one order
 * (over k, first to last), so a row of C has the same bits whatever the
 * shape, the row's place in it and the thread count (score's output does
 * not depend on --batch or --threads); off (the default): OpenBLAS, whose
 * kernels depend on the shape; faster only on a core its kernels are
 * tuned for (measured: about 1.4x on AVX-512; 2x slower than the fixed
 * order where 0.3.21 falls back to its generic kernels).  Process-wide:
 * call it before any thread that multiplies starts. */
void llr_blas_set_fixed_order(int on);
void llr_blas_set_threads(int n); /* n <= 0: number of cores */
int llr_blas_threads(void);
/* Have BLAS take its work space now, after llr_blas_set_threads: LLR_OK,
 * or LLR_ENOMEM when it does not fit.  OpenBLAS (0.3.21) takes ~128 MiB
 * per thread on its first GEMM and, when malloc fails, retries forever:
 * a process near its memory limit would hang instead of failing.  Tools
 * call this before they load anything big. */
int llr_blas_reserve(llr_err *err);
/* The value of OPENBLAS_CORETYPE that gives this CPU tuned kernels when
 * OpenBLAS fell back to its generic ones because it does not know the
 * CPU ("SkylakeX" with AVX-512 F, BW, DQ and VL, "Haswell" with AVX2 and
 * FMA), else NULL.  OpenBLAS reads the variable when it is loaded, so a
 * program sets it and executes itself again (the tools do, llrnn(1)
 * ENVIRONMENT), or the user sets it before starting Python. */
const char *llr_blas_better_core(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
