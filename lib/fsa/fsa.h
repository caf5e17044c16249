/*
 * fsa.h - private to lib/fsa: the nondeterministic automaton over
 * vocabulary ids that the OpenFst text reader (fstext.c) and the regular
 * expression compiler (regex.c) build, and its determinisation into an
 * llr_fsa (fsa.c), and the grammar and intersection kinds of llr_fsa
 * (gbnffsa.c, meet.c).  Not API: the rest of the library sees llr_fsa
 * (lib/internal.h).
 */
#ifndef LLR_FSA_PRIV_H
#define LLR_FSA_PRIV_H

#include <pthread.h>

#include "internal.h"

/* The deterministic automaton (fsa.c; fsaio.c reads and writes it). */
struct llr_fsa {
	int32_t n, start;
	int32_t *off;        /* n + 1 */
	int32_t *lab, *dst;  /* off[n]: arcs of each state, sorted by label */
	float *logw;
	int32_t *def;        /* n: default arc's state, -1 none */
	float *deflogw;
	float *final;        /* n: ln final weight, -inf not final */
	int32_t *dist;       /* n */
	int32_t V, eos, bos; /* the vocabulary's size, </s> and <s> (-1 absent) */
	/* NULL, or a kind whose states are made when reached, with its
	 * state: a grammar (gbnffsa.c) or the intersection of two automata
	 * (meet.c); then the fields above but V, eos, bos and start are
	 * unused, and the queries are the kind's */
	const struct fsa_kind *kind;
	struct fsa_gram *gram;
	struct fsa_meet *meet;
	llr_notice notice; /* llr_fsa_on_notice's */
};

/* The kinds of llr_fsa whose states are made when reached, a grammar
 * (gbnffsa.c, d->gram) and an intersection (meet.c, d->meet): fsa.c's
 * queries hand an automaton with a kind to its operations.  Each guards
 * its table of states with its mutex: make (with the mutex held) makes
 * state q's allowed set, get (likewise) hands it out as fsa_set, its
 * arcs and its default arc as llr_fsa_arcs and llr_fsa_default give
 * them (the arrays stay valid until the automaton is freed); the other
 * operations take the mutex themselves and answer as the llr_fsa_
 * queries of their names.  dist_within looks no further than
 * FSA_GRAM_DIST_MAX tokens for llr_fsa_dist (INT32_MAX beyond). */
typedef struct fsa_set {
	int32_t def, n;
	const int32_t *lab, *dst;
	const float *logw;
	float deflogw;
} fsa_set;
typedef struct fsa_kind {
	pthread_mutex_t *(*mutex)(const llr_fsa *d);
	int (*make)(const llr_fsa *d, int32_t q, llr_err *err);
	void (*get)(const llr_fsa *d, int32_t q, fsa_set *out);
	int32_t (*states)(const llr_fsa *d);
	int32_t (*next)(const llr_fsa *d, int32_t q, int32_t x, float *logw);
	float (*final)(const llr_fsa *d, int32_t q);
	int32_t (*dist_within)(const llr_fsa *d, int32_t q, int32_t limit, llr_err *err);
} fsa_kind;
#define FSA_GRAM_DIST_MAX 4096
typedef struct fsa_gram fsa_gram;
typedef struct fsa_meet fsa_meet;
void fsa_gram_free(fsa_gram *gm);
/* A grammar's liveness against the plain automaton f (gbnf.h's
 * llr_gbnf_live, over the grammar's vocabulary), and the query: does
 * some sentence of both continue the grammar's state q and f's fq?
 * The caller frees with llr_gbnf_live_free. */
typedef struct llr_gbnf_live llr_gbnf_live;
llr_gbnf_live *fsa_gram_live_new(const llr_fsa *gram, const llr_fsa *f, llr_err *err);
int fsa_gram_live(const llr_fsa *gram, int32_t q, llr_gbnf_live *L, int32_t fq, llr_err *err);
/* The grammar's file name, as messages call it. */
const char *fsa_gram_name(const llr_fsa *gram);
void fsa_meet_free(fsa_meet *m);

/* An arc's label: a vocabulary id (>= 0), epsilon, or a class of
 * tokens (FSA_CLASS(k), class k of the automaton). */
#define FSA_EPS (-1)
#define FSA_CLASS(k) (-2 - (k))
#define FSA_IS_CLASS(l) ((l) <= -2)
#define FSA_CLASS_OF(l) (-2 - (l))

typedef struct fsa_arc {
	int32_t from, to, lab;
	float logw; /* ln of the arc's factor of b: -(OpenFst weight) */
	size_t line; /* where it was read (0: a regex) */
} fsa_arc;

/* A class: the sorted ids it lists, or with neg every producible token
 * but those ("." is the negated empty class). */
typedef struct fsa_class {
	int32_t *ids;
	int32_t n;
	int neg;
} fsa_class;

typedef struct fsa_nfa {
	int32_t nstates, start;
	fsa_arc *arcs;
	size_t narcs, acap;
	float *final; /* nstates: ln of the final weight, -inf: not final */
	size_t fcap;
	fsa_class *cls;
	int32_t ncls, ccap;
	const llr_strmap *vocab;
	int32_t eos, bos; /* their ids in vocab, -1 absent */
} fsa_nfa;

void fsa_nfa_init(fsa_nfa *a, const llr_strmap *vocab);
void fsa_nfa_free(fsa_nfa *a);
/* A new state (not final); its id, or LLR_ENOMEM. */
int32_t fsa_nfa_state(fsa_nfa *a);
/* States up to id exist. */
int fsa_nfa_grow(fsa_nfa *a, int32_t id);
int fsa_nfa_arc(fsa_nfa *a, int32_t from, int32_t to, int32_t lab, float logw, size_t line);
/* A class over ids[0..n) (copied, sorted here), its label in *lab;
 * LLR_ENOMEM. */
int fsa_nfa_class(fsa_nfa *a, const int32_t *ids, int32_t n, int neg, int32_t *lab);
/* 1 when token x (a producible id) matches label lab. */
int fsa_nfa_match(const fsa_nfa *a, int32_t lab, int32_t x);

/* The automaton a as an llr_fsa: taken as it is when deterministic
 * (no epsilon, no class, no two arcs of a state with one label), else
 * determinised by subset construction when it carries no weight, else
 * refused (LLR_EFORMAT, naming name and the arc's line).  Then trimmed
 * to the states that reach a final state; one that accepts nothing is
 * refused. */
llr_fsa *fsa_build(fsa_nfa *a, const char *name, llr_err *err);

#endif
