/*
 * mrf.h - the chain Markov random field language model (family
 * chain-mrf; Jernite's thesis ch. 4, Jernite, Rush & Sontag 2015): a
 * corpus x_1..x_N over V words (its sentences joined, each ending in
 * </s>, the separator) is one linear-chain MRF, every token linked to
 * its K following tokens,
 *
 *   p(x) = exp(S(x)) / Z,  S(x) = sum_i b(x_i) + sum_i sum_{k=1..K} theta_k(x_i, x_{i+k}),
 *   theta_k(w, w') = u_{k,w} . v_{k,w'}   (rank D, one pair u_k, v_k a distance)
 *
 * and Z sums exp(S) over all V^N corpora of length N.  The parameters, one
 * flat array par: b[V], then for k = 1..K u_k[V][D] and v_k[V][D].  One u, v
 * a distance rather than one shared pair: a word's left and right
 * neighbours at distance 1 and 2 differ (adjacent words are not words two
 * apart), and the forests of the bound (bound.c) each carry one distance,
 * so each forest's potentials are one low-rank matrix.
 *
 * Here: the shapes, the counts a corpus gives (all that learning sees of
 * it: N, the unigram counts and the counts of pairs at each distance),
 * the exact log Z by dynamic programming (tiny V^K only), the lifted
 * tree-reweighted bound on log Z with its gradient and its dual steps
 * (bound.c, whose header comment derives it), the model file (model.c).
 * Private to lib/family/mrf.
 */
#ifndef LLR_FAMILY_MRF_H
#define LLR_FAMILY_MRF_H

#include "family/family.h"

#define MRF_MAX_K 8
#define MRF_MAX_D 4096

typedef struct mrf_dims {
	int32_t V;
	int K, D;
} mrf_dims;

/* par's size, and where b, u_k and v_k (k = 1..K) start in it. */
static inline size_t mrf_nparams(const mrf_dims *d)
{
	return (size_t)d->V + 2 * (size_t)d->K * (size_t)d->V * (size_t)d->D;
}
static inline size_t mrf_u_off(const mrf_dims *d, int k)
{
	return (size_t)d->V + (size_t)(2 * (k - 1)) * (size_t)d->V * (size_t)d->D;
}
static inline size_t mrf_v_off(const mrf_dims *d, int k)
{
	return mrf_u_off(d, k) + (size_t)d->V * (size_t)d->D;
}
/* theta_k(a, b) = u_{k,a} . v_{k,b}. */
double mrf_theta(const mrf_dims *d, const double *par, int k, int32_t a, int32_t b);

/* The counts of a corpus: N tokens, uni[w] the count of w, and for each
 * distance k = 1..K the distinct pairs (a[j], b[j]) with x_i = a, x_{i+k} = b
 * counted c[j] times (i = 1..N-k). */
typedef struct mrf_pairs {
	int32_t *a, *b;
	double *c;
	size_t n;
} mrf_pairs;
typedef struct mrf_counts {
	int64_t N;
	int32_t V;
	int K;
	double *uni;
	mrf_pairs pair[MRF_MAX_K];
} mrf_counts;
/* The counts of ids[0..n) (each in [0, V)); LLR_ENOMEM. */
int mrf_counts_make(const int32_t *ids, size_t n, int32_t V, int K, mrf_counts *c, llr_err *err);
void mrf_counts_free(mrf_counts *c);
/* S(x) of the counted corpus: par . counts; with g, its gradient added. */
double mrf_score_counts(const mrf_dims *d, const double *par, const mrf_counts *c, double *g);

/* The exact log Z over all corpora of length N (forward algorithm over
 * the last K tokens: (V+1)^K states, N (V+1)^K V steps), NaN when that
 * is more than MRF_EXACT_MAX steps. */
#define MRF_EXACT_MAX 50000000.0
double mrf_exact_logz(const mrf_dims *d, const double *par, int64_t N);

/* The bound (bound.c).  delta[K][V]: the dual, the split of the unary
 * potentials among the K forests (sum over k of delta_k = 0).  The chains
 * of a forest are summed exactly by the forward algorithm when
 * (L - 1) V^2 <= MRF_CHAIN_EXACT (or always with MRF_CHAIN_FORCE_EXACT),
 * else bounded through the Perron root (MRF_CHAIN_FORCE_PERRON: always). */
#define MRF_CHAIN_EXACT 65536.0
enum { MRF_CHAIN_AUTO, MRF_CHAIN_FORCE_EXACT, MRF_CHAIN_FORCE_PERRON };
typedef struct mrf_ws mrf_ws;
/* The workspace holds K V x V transfer matrices (bound.c), made again
 * when u or v change; NULL out of memory. */
mrf_ws *mrf_ws_new(const mrf_dims *d);
void mrf_ws_free(mrf_ws *w);
/* The V x V matrix-vector products of the power iterations so far. */
int64_t mrf_ws_products(const mrf_ws *w);
/* log Z(theta) <= mrf_bound(...).  gpar (npar, may be NULL) gets the
 * gradient with respect to par added, gdelta (K V, may be NULL) set to
 * the one with respect to delta; NaN when a chain fails (out of memory). */
double mrf_bound(mrf_ws *w, const mrf_dims *d, const double *par, int64_t N, const double *delta, int method, double *gpar,
                 double *gdelta);
/* Dual steps on delta (in place; the best found kept): iters projected
 * sub-gradient steps of size alpha0 / 2^t, t the steps so far that did not
 * decrease the bound (a step that does not is undone).  Returns the
 * bound at the final delta, never above its value at the given one (that
 * value at once, no step taken, when it is not finite). */
double mrf_tighten(mrf_ws *w, const mrf_dims *d, const double *par, int64_t N, double *delta, int iters, double alpha0,
                   int method);

/* L-BFGS (minimise.c): minimise eval from x (n values, in place) by
 * liblbfgs's backtracking line search, at most max_iter iterations; iter
 * (may be NULL) after each, stopping the run when it returns non-zero.
 * An evaluation whose f or g is not finite is taken as f = +inf, g = 0
 * (the line search backs off it) and counted in nonfinite.  LLR_OK, with
 * status liblbfgs's and f eval's value at the final x (evaluated again);
 * LLR_ENAN when that point's f or g is not finite, whatever the status;
 * LLR_ENOMEM. */
typedef struct mrf_min {
	double (*eval)(void *ctx, const double *x, double *g, int n);
	int (*iter)(void *ctx, const double *x, double fx, double gnorm, int k, int evals);
	void *ctx;
	int max_iter;
	int status;
	long nonfinite;
	double f;
} mrf_min;
int mrf_minimise(mrf_min *m, int n, double *x, llr_err *err);

/* The LM's objective (objective.c): f(x) = (B - S) / N + (l2/2) |x|^2,
 * B the bound after dual dual steps from the dual of the last accepted
 * point (start; delta: the last evaluation's), bound and score the last
 * evaluation's B and S.  mrf_obj_init: LLR_ENOMEM (o freed); mrf_obj_eval
 * is an mrf_min eval (inst an mrf_obj); mrf_obj_accept: the last
 * evaluation's point is accepted, the next evaluations start from its
 * dual.  mrf_obj_start: the starting point (b the centred log unigram
 * frequencies, u and v small normal draws from seed). */
typedef struct mrf_obj {
	mrf_dims d;
	const mrf_counts *c;
	double l2;
	int dual;
	mrf_ws *ws;
	double *delta, *start, *gs;
	double bound, score;
} mrf_obj;
int mrf_obj_init(mrf_obj *o, const mrf_dims *d, const mrf_counts *c, double l2, int dual);
void mrf_obj_free(mrf_obj *o);
double mrf_obj_eval(void *o, const double *x, double *g, int n);
void mrf_obj_accept(mrf_obj *o);
void mrf_obj_start(const mrf_dims *d, const mrf_counts *c, uint64_t seed, double *par);

/* A chain model (model.c). */
typedef struct mrf_model {
	mrf_dims d;
	double *par;
	llr_lexicon *lex;
	llr_meta *meta;
} mrf_model;
int mrf_model_save(const char *path, const mrf_model *m, llr_err *err);
int mrf_model_load(const char *path, mrf_model **out, llr_err *err);
void mrf_model_free(mrf_model *m);

extern const llr_trainer llr_mrf_trainer;

#endif
