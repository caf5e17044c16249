/*
 * nn.h - private interface of the network layers (embed.c, lstm.c,
 * dense.c, loglinear.c) assembled by net.c; not API.
 *
 * Shapes are row-major.  Positions are time-major, n = t * B + b, N = T * B.
 * Forward functions overwrite their outputs; backward functions ADD into
 * parameter gradients and overwrite input gradients, unless a comment says
 * otherwise.  Broken shape contracts are LLR_ASSERTed by the callers in
 * net.c; these kernels trust their arguments.
 */
#ifndef LLR_NN_H
#define LLR_NN_H

#include <math.h>

#include "internal.h"

#if defined(__GNUC__) && !defined(__clang__)
/* The hot loops are written to vectorise (fixed-length chunks, branch-free
 * exp); -O2 alone does not vectorise them, and GCC will not if-convert the
 * float comparisons of the exp while FP operations may trap (we never
 * unmask FP exceptions).  Applied to every function of the hot path so
 * they inline into each other. */
#define LLR_VECTORIZE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math")))
#else
#define LLR_VECTORIZE
#endif
/* The default build targets baseline x86-64 (SSE2); on x86-64 Linux the
 * hot loops are also compiled for AVX2 and picked at load time.  Not under
 * ThreadSanitizer: GCC instruments the ifunc resolvers the clones need,
 * and the dynamic loader runs them before the TSan runtime is set up, so
 * every tool crashed at start (even --version). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__SANITIZE_THREAD__)
#define LLR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LLR_CLONES
#endif

/* Input id of a padded position: its embedding is the zero vector. */
#define LLR_PAD_IN (-2)

/* ------------------------------------------------------------- embed.c */

/* X[n] (N x E) = sum over (f, v) in row input[n] of psi of v * emb[f]
 * (emb is F_in x E); bos (E) for LLR_BOS_ID; zeros for LLR_PAD_IN. */
void llr_embed_forward(const llr_csr *psi, const float *emb, const float *bos, int E, const int32_t *input, size_t N, float *X);
/* demb[f] += v * dX[n] for every (f, v) of row input[n]; dbos += dX[n]
 * for <s>.  dX is N x E. */
void llr_embed_backward(const llr_csr *psi, int E, const int32_t *input, size_t N, const float *dX, float *demb, float *dbos);

/* -------------------------------------------------------------- lstm.c */

/* One LSTM layer over T steps of B streams.  Gate order i, f, o, g: the
 * 4H columns of wx (Din x 4H), wh (H x 4H) and b (4H) are the input,
 * forget and output gates (sigmoid) then the candidate (tanh):
 *   z_t = x_t wx + h_{t-1} wh + b
 *   c_t = f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
 * h0, c0 (B x H) are the initial state, NULL = zeros.  Saved for backward:
 * act (N x 4H: activated gates), c (N x H), tc (N x H: tanh c).  h (N x H)
 * is the output. */
typedef struct llr_lstm_io {
	int T, B, Din, H;
	const float *wx, *wh, *b;
	const float *h0, *c0;
	float *act, *c, *tc, *h;
	/* Forward only: streams alive at each step (T values, non-increasing,
	 * at most B; the alive ones are the first rows of the previous step),
	 * steps packed one after the other without padding; NULL: B each. */
	const int *rows;
} llr_lstm_io;

void llr_lstm_forward(const llr_lstm_io *io, const float *X);
/* Back-propagation through time.  dh (N x H) holds dLoss/dh_t from above
 * on entry and is used as scratch; dz (N x 4H) and dc (B x H) are scratch;
 * dX (N x Din) receives dLoss/dX unless NULL; dwx, dwh, db accumulate.
 * The gradient into h0/c0 is not computed. */
void llr_lstm_backward(const llr_lstm_io *io, const float *X, float *dh, float *dz, float *dc, float *dX, float *dwx, float *dwh, float *db);

/* --------------------------------------------------------------- gru.c */

/* One GRU layer (PyTorch's gate order r, z, n and two biases):
 *   a_t = x_t wx + bx,  c_t = h_{t-1} wh + bh       (N x 3H each)
 *   r = sigmoid(a_r + c_r), z = sigmoid(a_z + c_z), n = tanh(a_n + r c_n)
 *   h_t = (1 - z) n + z h_{t-1},  h_{-1} = 0
 * over sequences sorted longest first and packed: step t holds rows[t]
 * rows (non-increasing; the sequences still running, the first rows of
 * step t-1), steps one after the other, N = sum of rows.  Saved for
 * backward (N x 3H each, their layout gru.c's own): a, c, g (the
 * activated r, z, n); h (N x H) is the output. */
typedef struct llr_gru_io {
	int T, Din, H;
	const int *rows;
	const float *wx, *wh, *bx, *bh; /* Din x 3H, H x 3H, 3H, 3H */
	float *a, *c, *g, *h;
} llr_gru_io;

void llr_gru_forward(const llr_gru_io *io, const float *X);
/* dh (N x H) holds dLoss/dh_t on entry and is scratch after; da and dc
 * (N x 3H each) are scratch; dX (N x Din) is overwritten unless
 * NULL; dwx, dwh, dbx, dbh accumulate. */
void llr_gru_backward(const llr_gru_io *io, const float *X, float *dh, float *da, float *dc, float *dX, float *dwx, float *dwh, float *dbx, float *dbh);

/* ------------------------------------------ vc.c, vcrnn.c, vcgru.c */

/* The variable-computation layers (Jernite et al., thesis section 2.4;
 * the equations in vc.c's header) over T steps of B streams, time-major
 * (n = t * B + b, N = T * B; packed by rows, forward only).  G gates per hidden dimension: 1 for the
 * VCRNN, 3 (r, z, n) for the VCGRU.  The G H columns of wx and wh are
 * dimension-major: column G j + q is gate q of dimension j, so the
 * leading d dimensions are the leading G d columns, one BLAS block. */
enum { LLR_VC_RNN = 1,
       LLR_VC_GRU = 3 };

typedef struct llr_vc_io {
	int cell; /* LLR_VC_RNN or LLR_VC_GRU (its value is G) */
	int T, B, Din, H;
	float lambda, eps;    /* the mask's sharpness and threshold */
	const float *wx, *wh; /* Din x G H, H x G H */
	const float *bx, *bh; /* G H each; bh: VCGRU only (NULL for the VCRNN) */
	const float *u;       /* Din + H: the scheduler's weights over [x_t; h_{t-1}];
	                       * NULL: none, m_t = 1 and e_t = 1 (the dense cell) */
	const float *ub;      /* 1: its bias */
	const float *h0;      /* B x H, the initial state; NULL: zeros */
	/* Forward only: streams alive at each step (T values, non-increasing,
	 * at most B; the alive ones are the first rows of the previous step),
	 * steps packed one after the other, N their sum; NULL: B each. */
	const int *rows;
	/* Saved for backward: m (N), the dimensions kept k (N), e (N x H,
	 * the leading k of each row), act (N x G H: the RNN's g; the GRU's r,
	 * z, n dimension-major), cn (N x H, GRU: h_{t-1} wh_n + bh_n), g (N x
	 * H: the cell's output before the mask).  h (N x H) is the output. */
	float *m;
	int *k;
	float *e, *act, *cn, *g, *h;
	float *work;   /* llr_vc_work_size floats of scratch */
	int *order;    /* 3 B ints of scratch */
	uint64_t macs; /* multiply-adds of the products, added by each pass */
	uint64_t pad;  /* forward: those done past k on merged stairs (vc.c) */
} llr_vc_io;

/* The parameter gradients backward accumulates (shapes as llr_vc_io's). */
typedef struct llr_vc_grad {
	float *wx, *wh, *bx, *bh, *u, *ub;
} llr_vc_grad;

void llr_vc_forward(llr_vc_io *io, const float *X);
/* Back-propagation through time.  dh (N x H) holds dLoss/dh_t from above
 * on entry and is scratch after; dm (N) holds dLoss/dm_t from above (the
 * penalty on m) or is NULL; dX (N x Din) and dh0 (B x H) are overwritten
 * unless NULL; g accumulates. */
void llr_vc_backward(llr_vc_io *io, const float *X, float *dh, const float *dm, float *dX, float *dh0, const llr_vc_grad *g);

/* Floats of io->work the passes need: B (2 Din + 3 H + 2 G H). */
size_t llr_vc_work_size(const llr_vc_io *io);

/* One step as vc.c hands it to a cell: its R rows by k descending (the
 * staircase: the rows that keep dimension j are a prefix), their
 * positions n and k, their inputs and previous states gathered in that
 * order (hp NULL: zeros), and R x G H blocks for the products of x and of
 * h_{t-1} (forward) or their gradients (backward). */
typedef struct llr_vc_step {
	int R;
	const int *row, *k, *kp; /* kp: the k its products are computed to */
	const float *x, *hp; /* R x Din, R x H */
	float *a, *c;        /* R x G H each */
	float *dx, *dhp;     /* backward: R x Din, R x H, accumulated */
} llr_vc_step;

/* vcrnn.c, vcgru.c: a cell over a step's leading dimensions, given the
 * step's products s->a = x wx and s->c = h_{t-1} wh (the staircase; c
 * not read when s->hp is NULL).  Forward writes act, cn and g[0..k) of
 * each row's position; backward reads dg (R x H, dLoss/dg, row r's
 * leading k[r]), writes the gradients of the products into s->a and s->c,
 * and adds the rest into s->dhp (unless s->hp is NULL) and gr's biases. */
void llr_vcrnn_step_forward(const llr_vc_io *io, const llr_vc_step *s);
void llr_vcrnn_step_backward(const llr_vc_io *io, const llr_vc_step *s, const float *dg, const llr_vc_grad *gr);
void llr_vcgru_step_forward(const llr_vc_io *io, const llr_vc_step *s);
void llr_vcgru_step_backward(const llr_vc_io *io, const llr_vc_step *s, const float *dg, const llr_vc_grad *gr);

/* ----------------------------------------------------------- dropout.c */

/* y = x mask (y may be x), mask[k] 0 with probability p, else 1 / (1 - p),
 * drawn from rng in the order of k. */
void llr_dropout(const float *x, float *y, float *mask, size_t n, float p, llr_rng *rng);

/* ------------------------------------------------------------- dense.c */

/* A = W X^T + c: W is F x Din, X is N x Din, c is F; A is F x N stored
 * with leading dimension lda >= N (the layout the sparse output wants). */
void llr_dense_forward(int N, int Din, int F, const float *X, const float *W, const float *c, float *A, int lda);
/* From dA (F x N, lda): dW += dA X, dc += row sums of dA, and
 * dX = dA^T W (N x Din, overwritten) unless dX is NULL. */
void llr_dense_backward(int N, int Din, int F, const float *X, const float *W, const float *dA, int lda, float *dX, float *dW, float *dc);

/* --------------------------------------------------------- loglinear.c */

/* Positions per chunk of the V x chunk logit block (its inner loop). */
#define LLR_LL_CHUNK 64

/* The log-linear output over V words with F features:
 *   log p(x | n) = logb[x] + s_x(n) - log Z_n,
 *   s_x(n) = sum_{(f,v) in phi row x} v * A[f][n]
 * identity: phi is the V x V identity (the softmax RNN); the products are
 * then plain copies, the same function. */
/* Words with identical rows of phi, which the output cannot tell apart
 * (llclass.c): C distinct rows, the log of each class's summed background,
 * and the class of every word. */
typedef struct llr_ll_factors llr_ll_factors;
typedef struct llr_ll_classes {
	int C;
	llr_csr *phi;  /* C x F */
	float *logB;   /* C */
	int32_t *of;   /* V */
	llr_ll_factors *fac; /* NULL, or the rows factored (llfactor.c) */
} llr_ll_classes;
int llr_ll_classes_build(llr_ll_classes *k, const llr_csr *phi, const float *logb, llr_err *err);
/* Frees what k holds, its factors too. */
void llr_ll_classes_free(llr_ll_classes *k);

/* The classes' rows as products over G groups of features (llfactor.c):
 * part[i] holds the distinct parts of the rows in the i-th group of the
 * factoring's order (the group of most parts last).  Class term t (in
 * the order of its parts) has background w[t] = B_c, last part last[t];
 * the terms of prefix q (its parts in the first G - 1 groups, pre[q (G -
 * 1) + i]) end before pre_end[q], those of the prefix before it ending
 * where they start.  So Z = sum_q prod_i e^{s(pre_i)} sum_t w[t]
 * e^{s(last[t])}. */
#define LLR_LL_GROUPS 4
struct llr_ll_factors {
	int G;
	llr_csr *part[LLR_LL_GROUPS];
	int32_t parts; /* rows of all the parts together */
	int32_t npre, nterm;
	int32_t *pre, *pre_end;
	int32_t *last;
	double *w;
};
/* Factors k's rows over the G groups of group_of (phi's F columns, each
 * in [0, G)) into k->fac when the loss's pass then costs less than
 * three quarters of the pass over the rows: 1 if it did, 0 if not (k->fac
 * then NULL); LLR_ENOMEM. */
int llr_ll_factors_build(llr_ll_classes *k, const int32_t *group_of, int G, llr_err *err);
void llr_ll_factors_free(llr_ll_factors *fz);

typedef struct llr_ll {
	int V, F;
	const llr_csr *phi; /* V x F; unused when identity */
	const float *logb;  /* V */
	int identity;
	/* NULL, or phi's classes: the pass over V then runs over the C
	 * classes (the same numbers up to float rounding) */
	const llr_ll_classes *cls;
	/* NULL, or a context-dependent background (lib/ngram/background.c):
	 * b(K_n; x) replaces exp(logb[x]), logb then being its unigram level
	 * (llr_ngram_bg_logb1); each position's context is ctxlen n-gram ids
	 * in io->ctx.  Z is the pass over the rows with logb, scaled by C(K),
	 * plus the sparse correction over the listed continuations. */
	const llr_ngram_bg *bg;
	int ctxlen;
	/* Scoring an open vocabulary (llr_net_set_open): NULL, or rows the
	 * normalisation check adds to its sum over the V words, nrm_phi
	 * (K x F), importance samples of the strings outside the
	 * vocabulary, and nrm_logw (2 K + 1): row k standing for c_k of D
	 * draws of weight w_k, nrm_logw[k] = ln (c_k w_k / D) and
	 * nrm_logw[K + k] = ln (c_k w_k^2 / D), then ln D.  So sum_k
	 * exp(nrm_logw[k] + s_k - log Z) estimates the mass outside V,
	 * sum_k exp(nrm_logw[K + k] + 2 (s_k - log Z)) is the per-draw
	 * second moment, and (second moment - estimate^2) / D the
	 * estimate's variance.  Its first nrm_exact rows are not draws but
	 * strings summed exactly (nrm_logw[k] = ln of their weight): they
	 * join the estimate, not its variance.  Not with bg. */
	const llr_csr *nrm_phi;
	const float *nrm_logw;
	/* An open vocabulary: X rows past the V words (the signatures),
	 * with logb[V + i] and cls->of[V + i], in Z; a target may be one
	 * (LLR_LL_GRAD, LLR_LL_LOSS without xphi); LLR_LL_DIST then writes
	 * V + X entries a position, entry V + i the log-probability of row
	 * V + i (needs cls).  0 otherwise. */
	int X;
	/* nrm_phi's rows summed exactly (see nrm_phi) */
	int32_t nrm_exact;
	/* NULL, or an automaton background (lib/fsa/): b(K_n; x) is then
	 * further multiplied by b_fsa(q_n; x), q_n the automaton's state
	 * after the prefix (the last entry of each io->ctx), 0 for the tokens not allowed there and
	 * for </s> outside final states; the sum runs over the allowed
	 * tokens only (the arcs, the default arc's share of the rows) */
	const llr_fsa *fsa;
} llr_ll;

/* One pass of the output over N positions, in one of three modes:
 *   LLR_LL_LOSS  the loss: nll, logp_t and norm_err (each optional)
 *   LLR_LL_GRAD  the loss and its gradient dA (training): needs target
 *                and dA; nll and logp_t optional
 *   LLR_LL_DIST  the whole distribution logp_all (llr_net_step): target,
 *                nll, logp_t and norm_err optional
 * Fields of the io:
 *   A         F x N, leading dimension lda >= N: the adaptor a_n per column
 *   target    N: target[n] in [0, V) or -1 (skip: no loss, zero gradient);
 *             may be NULL in LLR_LL_DIST only; in LLR_LL_LOSS also in
 *             [V, V + xphi->rows): a string outside the vocabulary, row
 *             target - V of xphi, log background xlogb[target - V];
 *             without xphi also in [V, V + X): extra row target (an open
 *             vocabulary's signature, a class of its own: training on
 *             the strings outside the vocabulary, the gradient then
 *             E_p[phi] - phi_sig)
 *   nll       sum of -log p(target) over non-skipped positions (double)
 *   logp_t    N: log p(target[n]), 0 where skipped
 *   norm_err  sum_x p(x) - 1 (signed) at the non-skipped position where
 *             its magnitude is largest, the sum taken in double (when
 *             target is NULL every position counts)
 *   norm      the same check's figures (llr_norm_stat): with importance
 *             samples (nrm_phi) the deviation is an estimate, and se its
 *             standard error
 *   logp_all  N x (V + X): log p(x | n) for every x, then every extra row
 *   dA        F x N (lda): E_p[phi] - phi(target), overwritten; zero in
 *             skipped columns
 *   work      the scratch of llr_ll_work_size(V, threads) floats
 *   ctx       with a context-dependent background (o->bg), the context
 *             of every position (of the non-skipped ones at least)
 *   chunk     llr_ll_chunk_size(N) doubles
 *   threads   chunks of positions run on that many threads; the result
 *             does not depend on the thread count
 * Returns LLR_OK, or LLR_ENAN if a loss is not finite. */
enum { LLR_LL_LOSS = 0, LLR_LL_GRAD = 1, LLR_LL_DIST = 2 };

/* A normalisation error (sum - 1, signed) further from 0 than worst, or
 * NaN (which then propagates). */
static inline int llr_norm_worse(double e, double worst)
{
	return !(fabs(e) <= fabs(worst));
}
/* Position figures (deviation e, standard error se) into a's: err and se
 * of the deviation of largest magnitude, the largest |e| -+ LLR_NORM_Z se. */
static inline void llr_norm_add(llr_norm_stat *a, double e, double se)
{
	if (llr_norm_worse(e, a->err)) {
		a->err = e;
		a->se = se;
	}
	double lo = fabs(e) - LLR_NORM_Z * se, hi = fabs(e) + LLR_NORM_Z * se;
	if (!(lo <= a->lo)) /* NaN propagates */
		a->lo = lo;
	if (!(hi <= a->hi))
		a->hi = hi;
}
/* b's figures (over other positions) into a's. */
static inline void llr_norm_merge(llr_norm_stat *a, const llr_norm_stat *b)
{
	if (llr_norm_worse(b->err, a->err)) {
		a->err = b->err;
		a->se = b->se;
	}
	if (!(b->lo <= a->lo))
		a->lo = b->lo;
	if (!(b->hi <= a->hi))
		a->hi = b->hi;
}
typedef struct llr_ll_io {
	int mode; /* LLR_LL_* */
	int N, lda;
	const float *A;
	const int32_t *target;
	double *nll;
	float *logp_t;
	double *norm_err;
	llr_norm_stat *norm;
	float *logp_all;
	float *dA;
	float *work;
	double *chunk;
	int threads;
	const int32_t *ctx; /* N x ctxlen n-gram ids, oldest first (o->bg), then
	                       with o->fsa the automaton's state (-1: the
	                       prefix is rejected): N x (ctxlen + 1) */
	const llr_csr *xphi; /* NULL, or the rows of targets >= V (F columns) */
	const float *xlogb;
} llr_ll_io;
int llr_ll_run(const llr_ll *o, const llr_ll_io *io);
/* Floats of scratch llr_ll_run needs (V: the rows the pass runs over,
 * the words or, when more, their classes); doubles of its per-chunk
 * results. */
size_t llr_ll_work_size(int V, int threads);
size_t llr_ll_chunk_size(int N);

/* Vectorisable exp for float: relative error below 2e-7 on [-87, 88],
 * 0 below, +inf above.  Used by the LSTM and softmax loops. */
void llr_vexp(float *y, const float *x, size_t n);

/* --------------------------------------------------------------- net.c */

/* Bound, in bytes, on the F x positions blocks of the output layer (A and
 * dA together; default 256 MiB): longer batches pass through the output
 * layer in slices of positions.  For tests of the slicing. */
void llr_net_set_out_budget(llr_net *net, size_t bytes);

/* --------------------------------------------------------- attention.c */

/* Attention of B decoder queries over an encoder memory (attention.c):
 * scores e_bj of the memory rows m_jb, j < len[b], for the query q_b,
 *   LLR_ATT_DOT       e_bj = q_b . m_jb                          (H = C)
 *   LLR_ATT_BILINEAR  e_bj = q_b . (W m_jb)                       W: H x C
 *   LLR_ATT_MLP       e_bj = v . tanh(q_b Wq + m_jb Wk + c)       Wq: H x A,
 *                     Wk: C x A, c and v: A
 * alpha_b = softmax_j(e_b), ctx_b = sum_j alpha_bj m_jb.  The memory is
 * time-major, row j * B + b of C floats, or with shared set one memory
 * (row j) for every query (beam search).  The terms that depend on the
 * memory alone (W m, m Wk + c) are the keys K, one GEMM per batch. */
typedef struct llr_attn {
	int kind;          /* LLR_ATT_* */
	int B, S, C, H, A; /* streams, memory length, memory width, query width, MLP width */
	int shared;        /* one memory for all B queries */
	const int32_t *len; /* B lengths <= S (0: alpha empty, ctx 0); NULL: S each */
	const float *M;    /* S*B x C (shared: S x C) */
	float *K;          /* keys: bilinear S*B x H, MLP S*B x A (dot: unused) */
	const float *W;    /* bilinear: H x C; MLP: Wq, H x A */
	const float *Wk;   /* MLP: C x A */
	const float *c;    /* MLP: A */
	const float *v;    /* MLP: A */
} llr_attn;

/* Width of a key row (0 for dot). */
int llr_attn_key_width(const llr_attn *a);
/* K from M (one GEMM; nothing for dot). */
void llr_attn_keys(const llr_attn *a);
/* One step: q (B rows, ldq) -> alpha (B x S, zero past len), ctx (B rows,
 * ldc).  MLP: Q (B x A) and U (B x S x A, the tanh values) are saved for
 * backward; unused otherwise (may be NULL). */
void llr_attn_forward(const llr_attn *a, const float *q, int ldq, float *alpha, float *ctx, int ldc, float *Q, float *U);
/* Its backward from dctx (B rows, lddc): dq (B rows, lddq) += the query
 * gradient; dM (as M) += the memory gradient through the values (and the
 * keys, for dot); dK (as K) += the key gradient; MLP: dQ (B x A) is
 * overwritten, dW (dWq) and dv accumulate.  de is B x S scratch. */
void llr_attn_backward(const llr_attn *a, const float *q, int ldq, const float *alpha, const float *U, const float *dctx, int lddc, float *dq, int lddq, float *dM, float *dK, float *dQ, float *dW, float *dv, float *de);
/* After the steps: dK back into dM (+=) and the key parameters (dW for
 * bilinear, dWk and dc for MLP, accumulated). */
void llr_attn_keys_backward(const llr_attn *a, const float *dK, float *dM, float *dW, float *dWk, float *dc);

#endif
