/*
 * loglinear.c - the log-linear output layer of the LL-RNN (Dymetman & Xiao
 * 2016, DESIGN section 1), which is also the softmax output (phi = I,
 * uniform b):
 *
 *   log p(x | n) = log b(x) + a_n . phi(x) - log Z_n,
 *   dLoss/da_n   = E_p[phi] - phi(target_n)
 *
 * Phi (V x F, CSR) is never made dense.  The pass over V runs over rows:
 * the words, or, when the layer has them, the classes of words with
 * identical rows of Phi (llclass.c), each with its summed background.
 * The adaptor vectors arrive feature-major (A is F x N), and positions are
 * processed in chunks of LLR_LL_CHUNK so that every inner loop runs over
 * the contiguous positions of a chunk: s[r][.] = sum_{(f,val) in row r}
 * val * A[f][.], the logits logb[r] + s[r][.], the softmax over rows, then
 * dA[f][.] += val * (p - onehot)[r][.].  Training makes three passes over
 * the R x chunk block (scores + max; exp + sum; gradient + scatter) in
 * per-thread scratch (a softmax's in dA itself); scoring makes one, over blocks of rows that stay in
 * L1, with a running max (online softmax).  Chunks are independent (they
 * touch disjoint columns of dA), so they run on several threads without
 * locks; per-chunk sums are combined in chunk order, so the result does not
 * depend on the number of threads.  With a context-dependent background
 * (an n-gram, o->bg) the pass over the rows uses its unigram level and is
 * scaled by the context's backoff product C(K); the words listed after
 * the context and its suffixes then correct Z, log p and the gradient
 * one by one (bg_sum, bg_grad: background.c has the identity), so the
 * cost stays sparse.  An automaton background (o->fsa, lib/fsa/) is one
 * more factor of the same kind: in state q the tokens off q's arcs take
 * its default arc's factor (0 without one), so C(K) takes that factor
 * and q's arcs and </s> (its final weight) join the listed words;
 * b = 0 is a term exp(-inf) = 0, never a log of 0 in the sums, and a
 * position where nothing is allowed gets log Z = +inf (every log p
 * -inf, a loss that is not finite).  When the classes carry factors (llfactor.c: an
 * open vocabulary's signatures), the loss and its gradient take log Z
 * and E_p[phi] from them instead: one exponential per distinct part of a
 * row, one multiply-add a class (two with the gradient).
 * Not here: the dense layer that makes A (dense.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "nn.h"

#define NC LLR_LL_CHUNK


/* exp(x) for float, branch-free so loops of it vectorise: Cody-Waite
 * reduction x = k ln2 + r, |r| <= ln2/2, then a degree-7 polynomial for
 * e^r (Cephes' expf coefficients) scaled by 2^k built from its bits.
 * Below ln(FLT_MIN) the result is 0 (never a denormal), above the float
 * range +inf; NaN stays NaN. */
LLR_VECTORIZE static inline float vexp1(float x)
{
	const float hi = 88.3762626647949f, lo = -87.3365447505531f;
	float xc = x < lo ? lo : x;
	xc = xc > hi ? hi : xc;
	float t = xc * 1.44269504088896341f + 12582912.0f;
	float kf = t - 12582912.0f;
	float r = xc - kf * 0.693359375f;
	r = r + kf * 2.12194440e-4f;
	float p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r * r + r + 1.0f;
	/* 2^k from the bits of t = 1.5 * 2^23 + k (no float-to-int
	 * conversion, so NaN input is not undefined behaviour) */
	union {
		uint32_t u;
		float f;
	} tb, s;
	tb.f = t;
	s.u = (tb.u - 0x4B400000u + 127u) << 23;
	float y = p * s.f;
	y = x < lo ? 0.0f : y;
	y = x > hi ? INFINITY : y;
	return y;
}

LLR_CLONES LLR_VECTORIZE void llr_vexp(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = vexp1(x[i]);
}

/* Per thread: the V x NC block of scores, then for a context-dependent
 * background V doubles of ln b, V doubles of terms and V word ids (6 V
 * floats, so the next thread's block stays 8-byte aligned). */
#define WSTRIDE(V) ((size_t)(V) * (NC + 6))

size_t llr_ll_work_size(int V, int threads)
{
	return (size_t)(threads > 0 ? threads : 1) * WSTRIDE(V);
}

/* Per chunk: its loss, then its norm check's figures (llr_norm_stat, 4
 * doubles). */
size_t llr_ll_chunk_size(int N)
{
	return 5 * (((size_t)N + NC - 1) / NC);
}

typedef struct job {
	const llr_ll *o;
	int N, lda;
	const float *A;
	const int32_t *target;
	float *logp_t, *logp_all, *dA;
	int want_norm;
	double *cnll; /* per chunk */
	llr_norm_stat *cnorm;
	float *work;
	int threads, nchunks;
	/* The rows the pass over V runs over: the words, or their classes
	 * (llclass.c): R rows of phi, their log background, and each word's
	 * row (NULL: row v is word v). */
	int R;
	const llr_csr *rphi;
	const float *rlogb;
	const int32_t *row_of;
	const int32_t *ctx; /* N x o->ctxlen, with o->bg */
	const llr_ll_factors *fac; /* NULL, or the rows factored (no full distribution) */
	const llr_csr *xphi;       /* rows of targets >= V */
	const float *xlogb;
	size_t stride; /* floats of work per thread */
} job;

/* The score s of row r at position n: the same float operations, in the
 * same order, as pass 1, so a word's logit logb + s is the same number
 * here and in the full distribution. */
static float score_of(const job *jb, int r, int n)
{
	if (jb->o->identity)
		return jb->A[(size_t)r * jb->lda + n];
	const llr_csr *phi = jb->rphi;
	float s = 0.0f;
	for (int32_t k = phi->indptr[r]; k < phi->indptr[r + 1]; k++)
		s += phi->data[k] * jb->A[(size_t)phi->indices[k] * jb->lda + n];
	return s;
}

/* The score of row r of m (F columns) at position n, in double. */
static double csr_score(const job *jb, const llr_csr *m, int32_t r, int n)
{
	double s = 0.0;
	for (int32_t k = m->indptr[r]; k < m->indptr[r + 1]; k++)
		s += (double)m->data[k] * (double)jb->A[(size_t)m->indices[k] * jb->lda + n];
	return s;
}

/* Scores of row r of phi (F columns) for the nc positions of a chunk
 * into row[]. */
LLR_VECTORIZE static inline __attribute__((always_inline)) void csr_row_scores(const job *jb, const llr_csr *phi, int r,
                                                                               int n0, int nc, float *row)
{
	const float *A = jb->A;
	for (int j = 0; j < nc; j++)
		row[j] = 0.0f;
	for (int32_t k = phi->indptr[r]; k < phi->indptr[r + 1]; k++) {
		const float *a = A + (size_t)phi->indices[k] * jb->lda + n0;
		float val = phi->data[k];
		for (int j = 0; j < nc; j++)
			row[j] += val * a[j];
	}
}

/* Scores of row r of the pass's rows for the nc positions of a chunk
 * into row[]. */
LLR_VECTORIZE static inline __attribute__((always_inline)) void row_scores(const job *jb, int r, int n0, int nc, float *row)
{
	if (jb->o->identity) {
		const float *a = jb->A + (size_t)r * jb->lda + n0;
		for (int j = 0; j < nc; j++)
			row[j] = a[j];
		return;
	}
	csr_row_scores(jb, jb->rphi, r, n0, nc, row);
}

/* The loss at the targets of a chunk, given log Z and, with a
 * context-dependent background, lny[j] = ln b(K; target). */
static double chunk_loss(const job *jb, int n0, int nc, const double *logz, const double *lny)
{
	double nll = 0.0;
	for (int j = 0; j < nc; j++) {
		int n = n0 + j;
		int y = jb->target ? jb->target[n] : -1;
		if (y >= jb->o->V && jb->xphi) { /* a string outside the vocabulary, its own row */
			double lp = (double)jb->xlogb[y - jb->o->V] + csr_score(jb, jb->xphi, y - jb->o->V, n) - logz[j];
			nll -= lp;
			if (jb->logp_t)
				jb->logp_t[n] = (float)lp;
		} else if (y >= jb->o->V) { /* an extra row (a signature) */
			double lp = (double)(jb->o->logb[y] + score_of(jb, jb->row_of[y], n)) - logz[j];
			nll -= lp;
			if (jb->logp_t)
				jb->logp_t[n] = (float)lp;
		} else if (y >= 0) {
			int r = jb->row_of ? jb->row_of[y] : y;
			double lp;
			if (lny)
				lp = lny[j] + (double)score_of(jb, r, n) - logz[j];
			else
				lp = (double)(jb->o->logb[y] + score_of(jb, r, n)) - logz[j];
			nll -= lp;
			if (jb->logp_t)
				jb->logp_t[n] = (float)lp;
		} else if (jb->logp_t) {
			jb->logp_t[n] = 0.0f;
		}
	}
	return nll;
}

/* ------------------------------------ context-dependent background */

/* A context-dependent background: the n-gram's, the automaton's or both. */
#define CTXBG(o) ((o)->bg || (o)->fsa)

/* A position's context: the n-gram's ctxlen ids, then with an automaton
 * its state. */
static size_t ctx_stride(const llr_ll *o)
{
	return (size_t)o->ctxlen + (o->fsa != NULL);
}

/* A thread's scratch for the listed continuations, after its scores. */
typedef struct bgscr {
	double *lnb, *t;
	int32_t *x;
} bgscr;

static bgscr bg_scratch(const job *jb, float *L)
{
	size_t V = (size_t)jb->o->V;
	double *d = (double *)(L + V * NC);
	return (bgscr){d, d + V, (int32_t *)(d + 2 * V)};
}

/* dA[:, n] += coef * (row r of the rows' phi). */
static void row_axpy(const job *jb, int r, int n, float coef)
{
	if (jb->o->identity) {
		jb->dA[(size_t)r * jb->lda + n] += coef;
		return;
	}
	const llr_csr *phi = jb->rphi;
	for (int32_t k = phi->indptr[r]; k < phi->indptr[r + 1]; k++)
		jb->dA[(size_t)phi->indices[k] * jb->lda + n] += coef * phi->data[k];
}

/* ln b_fsa(q; x): an arc's factor, the default arc's, q's final weight
 * for </s>, -inf where x is not allowed. */
static double fsa_factor(const llr_ll *o, int32_t q, int32_t x, int32_t eos)
{
	if (q < 0)
		return -INFINITY;
	if (x == eos)
		return (double)llr_fsa_final(o->fsa, q);
	float w;
	return llr_fsa_next(o->fsa, q, x, &w) >= 0 ? (double)w : -INFINITY;
}

/* U(K) and ln b on it (sc->x, sc->lnb, their count returned) and ln C
 * (*logc), b(K; x) = C exp(logb[x]) off U: the n-gram's expansion
 * (background.c), or U empty and C 1, times the automaton's factors at
 * the position's state: C by the default arc's, each listed word by its
 * own, then q's arcs and </s> that the n-gram did not list. */
static size_t bg_expand(const job *jb, int n, bgscr *sc, double *logc)
{
	const llr_ll *o = jb->o;
	size_t cnt = 0;
	*logc = 0.0;
	if (o->bg)
		cnt = llr_ngram_bg_expand(o->bg, jb->ctx + (size_t)n * ctx_stride(o), o->ctxlen, logc, sc->x, sc->lnb);
	if (!o->fsa)
		return cnt;
	int32_t q = jb->ctx[(size_t)n * ctx_stride(o) + (size_t)o->ctxlen], eos = llr_fsa_eos(o->fsa);
	const int32_t *lab = NULL, *dst = NULL;
	const float *w = NULL;
	int32_t na = q >= 0 ? llr_fsa_arcs(o->fsa, q, &lab, &dst, &w) : 0;
	float dw = 0.0f;
	int32_t def = q >= 0 ? llr_fsa_default(o->fsa, q, &dw) : -1;
	/* seen[k]: arc k (k = na: </s>) is among the n-gram's words; the
	 * bytes live in sc->t, which bg_sum fills only afterwards */
	unsigned char *seen = (unsigned char *)sc->t;
	memset(seen, 0, (size_t)na + 1);
	for (size_t i = 0; i < cnt; i++) {
		int32_t x = sc->x[i];
		if (x == eos) {
			seen[na] = 1;
		} else {
			int32_t lo = 0, hi = na;
			while (lo < hi) {
				int32_t mid = lo + (hi - lo) / 2;
				if (lab[mid] < x)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < na && lab[lo] == x)
				seen[lo] = 1;
		}
		sc->lnb[i] += fsa_factor(o, q, x, eos);
	}
	for (int32_t k = 0; k < na; k++)
		if (!seen[k]) {
			sc->x[cnt] = lab[k];
			sc->lnb[cnt++] = *logc + (double)o->logb[lab[k]] + (dst[k] >= 0 ? (double)w[k] : -INFINITY);
		}
	if (eos >= 0 && !seen[na]) {
		sc->x[cnt] = eos;
		sc->lnb[cnt++] = *logc + (double)o->logb[eos] + fsa_factor(o, q, eos, eos);
	}
	*logc += def >= 0 ? (double)dw : -INFINITY;
	return cnt;
}

/* Position n with the context-dependent background: from the sum over
 * the rows with the unigram level, s1 = sum_x p1(x) e^{s_x - mx}, the sum
 * S = Z(K) e^{-mx} = C s1 + sum_{x in U} (b(K; x) - C p1(x)) e^{s_x - mx}
 * (background.c).  sc gets U (x, ln b) and each word's term; *k its size,
 * *logc ln C; *lny ln b(K; y) when y >= 0. */
static double bg_sum(const job *jb, int n, float mx, double s1, int32_t y, bgscr *sc, size_t *k, double *logc, double *lny)
{
	const llr_ll *o = jb->o;
	size_t cnt = bg_expand(jb, n, sc, logc);
	double S = exp(*logc) * s1;
	if (y >= 0)
		*lny = *logc + (double)o->logb[y];
	for (size_t i = 0; i < cnt; i++) {
		int32_t x = sc->x[i];
		int r = jb->row_of ? jb->row_of[x] : x;
		double e = exp((double)score_of(jb, r, n) - (double)mx);
		sc->t[i] = (exp(sc->lnb[i]) - exp(*logc + (double)o->logb[x])) * e;
		S += sc->t[i];
		if (x == y)
			*lny = sc->lnb[i];
	}
	*k = cnt;
	return S;
}

/* Gradient at position n (after the rows' part, C p1 e^s / Z each): the
 * listed words' terms over Z, minus phi(y). */
static void bg_grad(const job *jb, int n, float mx, double s1, double S, int32_t y, bgscr *sc)
{
	size_t cnt;
	double logc, lny;
	bg_sum(jb, n, mx, s1, y, sc, &cnt, &logc, &lny);
	for (size_t i = 0; i < cnt; i++) {
		int32_t x = sc->x[i];
		row_axpy(jb, jb->row_of ? jb->row_of[x] : x, n, (float)(sc->t[i] / S));
	}
	row_axpy(jb, jb->row_of ? jb->row_of[y] : y, n, -1.0f);
}

/* Inference at position n: log p of every word (logp_all) from its row's
 * score in L (column j), and the normalisation error, summed over the
 * words with b from the plain backoff query (independent of bg_sum). */
static double bg_dist(const job *jb, int n, int j, const float *L, double logz, bgscr *sc, float mx, double s1, int norm)
{
	const llr_ll *o = jb->o;
	size_t cnt;
	double logc, lny;
	bg_sum(jb, n, mx, s1, -1, sc, &cnt, &logc, &lny);
	if (jb->logp_all) {
		float *lp = jb->logp_all + (size_t)n * o->V;
		for (int v = 0; v < o->V; v++)
			lp[v] = (float)(logc + (double)o->logb[v] + (double)L[(size_t)(jb->row_of ? jb->row_of[v] : v) * NC + j] - logz);
		for (size_t i = 0; i < cnt; i++) {
			int32_t x = sc->x[i];
			lp[x] = (float)(sc->lnb[i] + (double)L[(size_t)(jb->row_of ? jb->row_of[x] : x) * NC + j] - logz);
		}
	}
	if (!norm)
		return 0.0;
	double sum = 0.0;
	const int32_t *ctx = jb->ctx + (size_t)n * ctx_stride(o);
	if (o->fsa && ctx[o->ctxlen] < 0)
		return 0.0; /* a prefix the automaton rejects: no distribution to check */
	int32_t eos = o->fsa ? llr_fsa_eos(o->fsa) : -1;
	for (int v = 0; v < o->V; v++) {
		double lb = o->bg ? llr_ngram_bg_logp(o->bg, ctx, o->ctxlen, v) : (double)o->logb[v];
		if (o->fsa)
			lb += fsa_factor(o, ctx[o->ctxlen], v, eos);
		sum += exp(lb + (double)L[(size_t)(jb->row_of ? jb->row_of[v] : v) * NC + j] - logz);
	}
	return sum - 1.0;
}

/* ------------------------------------------------- factored rows */

/* Each group's parts (llfactor.c) scored for the nc positions of a chunk
 * into L, shifted by the group's max and exponentiated: E[g] (its parts x
 * NC), shs[j] the sum of the shifts.  Floats of L used: parts x NC. */
LLR_VECTORIZE static inline __attribute__((always_inline)) void factor_exps(const job *jb, int n0, int nc, float *L,
                                                                            const float **E, double *shs)
{
	const llr_ll_factors *fz = jb->fac;
	float m[NC];
	for (int j = 0; j < nc; j++)
		shs[j] = 0.0;
	float *Eg = L;
	for (int g = 0; g < fz->G; g++) {
		const llr_csr *P = fz->part[g];
		for (int j = 0; j < nc; j++)
			m[j] = -INFINITY;
		for (int32_t p = 0; p < P->rows; p++) {
			float *row = Eg + (size_t)p * NC;
			csr_row_scores(jb, P, p, n0, nc, row);
			for (int j = 0; j < nc; j++)
				m[j] = row[j] > m[j] ? row[j] : m[j];
		}
		for (int j = 0; j < nc; j++) {
			m[j] = isinf(m[j]) ? 0.0f : m[j];
			shs[j] += (double)m[j];
		}
		for (int32_t p = 0; p < P->rows; p++) {
			float *row = Eg + (size_t)p * NC;
			for (int j = 0; j < nc; j++)
				row[j] = vexp1(row[j] - m[j]);
		}
		E[g] = Eg;
		Eg += (size_t)P->rows * NC;
	}
}

/* Prefix q's product of its parts' exponentials, pp = prod_{i < G-1}
 * E_i[pre_i(q)], and its terms' sum u = sum_t w_t E_last[last_t], t from
 * t0 to the prefix's end. */
LLR_VECTORIZE static inline __attribute__((always_inline)) void prefix_sums(const llr_ll_factors *fz, const float **E,
                                                                            int32_t q, int32_t t0, int nc, double *pp,
                                                                            double *u)
{
	int G = fz->G;
	for (int j = 0; j < nc; j++) {
		pp[j] = 1.0;
		u[j] = 0.0;
	}
	for (int i = 0; i < G - 1; i++) {
		const float *e = E[i] + (size_t)fz->pre[(size_t)q * (size_t)(G - 1) + (size_t)i] * NC;
		for (int j = 0; j < nc; j++)
			pp[j] *= (double)e[j];
	}
	for (int32_t t = t0; t < fz->pre_end[q]; t++) {
		const float *e = E[G - 1] + (size_t)fz->last[t] * NC;
		double w = fz->w[t];
		for (int j = 0; j < nc; j++)
			u[j] += w * (double)e[j];
	}
}

/* log Z at the nc positions of a chunk from the factors:
 *   Z = e^{sum_g sh_g} sum_q pp_q u_q,
 * the sum T in double.  E and T are left for the gradient.  0 (and the
 * caller runs over the rows) when a sum is not positive and finite: a
 * term of every group underflowed, or the scores are not finite. */
LLR_VECTORIZE static inline __attribute__((always_inline)) int lse_factored(const job *jb, int n0, int nc, float *L,
                                                                            const float **E, double *T, double *logz)
{
	const llr_ll_factors *fz = jb->fac;
	double shs[NC], pp[NC], u[NC];
	factor_exps(jb, n0, nc, L, E, shs);
	for (int j = 0; j < nc; j++)
		T[j] = 0.0;
	for (int32_t q = 0; q < fz->npre; q++) {
		prefix_sums(fz, E, q, q ? fz->pre_end[q - 1] : 0, nc, pp, u);
		for (int j = 0; j < nc; j++)
			T[j] += pp[j] * u[j];
	}
	int ok = 1;
	for (int j = 0; j < nc; j++) {
		ok &= T[j] > 0.0 && T[j] < INFINITY && isfinite(shs[j]);
		logz[j] = shs[j] + log(T[j]);
	}
	return ok;
}

/* The loss and its gradient from the factors.  A class's probability is
 * p_c = w_c prod_g E_g[part_g(c)] / T, and phi_c is the sum of its parts,
 * so E_p[phi] = sum_g sum_parts P_g[part] phi_part with P_g[part] the
 * summed p_c of the classes with that part: for the last group each
 * term's p_c, for a prefix group its prefixes' pp u / T.  P goes into L
 * after E, then dA = sum P phi_part - phi(target).  0 when the sums fail
 * (lse_factored) or P does not fit the scratch: the caller then runs over
 * the rows. */
LLR_VECTORIZE static inline __attribute__((always_inline)) int grad_factored(const job *jb, int n0, int nc, float *L,
                                                                             double *out_nll)
{
	const llr_ll_factors *fz = jb->fac;
	int G = fz->G, lda = jb->lda;
	size_t parts = (size_t)fz->parts;
	if (2 * parts * NC > jb->stride)
		return 0;
	const float *E[LLR_LL_GROUPS] = {0};
	double T[NC], logz[NC], pp[NC], u[NC], c[NC];
	if (!lse_factored(jb, n0, nc, L, E, T, logz))
		return 0;
	*out_nll = chunk_loss(jb, n0, nc, logz, NULL);

	float *P[LLR_LL_GROUPS] = {0};
	float *Pall = L + parts * NC;
	memset(Pall, 0, parts * NC * sizeof *Pall);
	for (int g = 0; g < G; g++)
		P[g] = Pall + (E[g] - L);
	double invT[NC];
	for (int j = 0; j < nc; j++)
		invT[j] = jb->target[n0 + j] >= 0 ? 1.0 / T[j] : 0.0;
	for (int32_t q = 0; q < fz->npre; q++) {
		int32_t t0 = q ? fz->pre_end[q - 1] : 0;
		prefix_sums(fz, E, q, t0, nc, pp, u);
		for (int j = 0; j < nc; j++)
			c[j] = pp[j] * invT[j];
		for (int32_t t = t0; t < fz->pre_end[q]; t++) {
			const float *e = E[G - 1] + (size_t)fz->last[t] * NC;
			float *d = P[G - 1] + (size_t)fz->last[t] * NC;
			double w = fz->w[t];
			for (int j = 0; j < nc; j++)
				d[j] += (float)(c[j] * w * (double)e[j]);
		}
		for (int i = 0; i < G - 1; i++) {
			float *d = P[i] + (size_t)fz->pre[(size_t)q * (size_t)(G - 1) + (size_t)i] * NC;
			for (int j = 0; j < nc; j++)
				d[j] += (float)(c[j] * u[j]);
		}
	}
	for (int f = 0; f < jb->o->F; f++)
		memset(jb->dA + (size_t)f * lda + n0, 0, (size_t)nc * sizeof *jb->dA);
	for (int g = 0; g < G; g++) {
		const llr_csr *part = fz->part[g];
		for (int32_t p = 0; p < part->rows; p++) {
			const float *pr = P[g] + (size_t)p * NC;
			for (int32_t k = part->indptr[p]; k < part->indptr[p + 1]; k++) {
				float *d = jb->dA + (size_t)part->indices[k] * lda + n0;
				float val = part->data[k];
				for (int j = 0; j < nc; j++)
					d[j] += val * pr[j];
			}
		}
	}
	for (int j = 0; j < nc; j++)
		if (jb->target[n0 + j] >= 0)
			row_axpy(jb, jb->row_of[jb->target[n0 + j]], n0 + j, -1.0f);
	return 1;
}

/* A softmax's training chunk (phi = I, no background): the three passes
 * of chunk_body with the same float operations in the same order, but
 * reading the logits from A and keeping exp(l - max), then the gradient,
 * in dA itself, so that no R x NC block of scratch (past L2 for a large
 * vocabulary) is written and read again.  dA must not be A. */
LLR_VECTORIZE static inline __attribute__((always_inline)) void chunk_softmax_grad(const job *jb, int n0, int nc, double *out_nll)
{
	int R = jb->R, lda = jb->lda;
	float mx[NC], inv[NC];
	double s[NC], logz[NC];
	for (int j = 0; j < nc; j++) {
		mx[j] = -INFINITY;
		s[j] = 0.0;
	}
	for (int r = 0; r < R; r++) {
		const float *a = jb->A + (size_t)r * lda + n0;
		float lb = jb->rlogb[r];
		for (int j = 0; j < nc; j++)
			mx[j] = lb + a[j] > mx[j] ? lb + a[j] : mx[j];
	}
	for (int r = 0; r < R; r++) {
		const float *a = jb->A + (size_t)r * lda + n0;
		float *e = jb->dA + (size_t)r * lda + n0, lb = jb->rlogb[r];
		for (int j = 0; j < nc; j++)
			e[j] = lb + a[j] - mx[j];
		for (int j = 0; j < nc; j++)
			e[j] = vexp1(e[j]);
		for (int j = 0; j < nc; j++)
			s[j] += e[j];
	}
	for (int j = 0; j < nc; j++)
		logz[j] = mx[j] + log(s[j]);
	*out_nll = chunk_loss(jb, n0, nc, logz, NULL);
	for (int j = 0; j < nc; j++) {
		int y = jb->target[n0 + j];
		inv[j] = y >= 0 ? (float)(1.0 / s[j]) : 0.0f;
		if (y >= 0)
			jb->dA[(size_t)y * lda + n0 + j] -= (float)s[j];
	}
	for (int r = 0; r < R; r++) {
		float *g = jb->dA + (size_t)r * lda + n0;
		for (int j = 0; j < nc; j++)
			g[j] *= inv[j];
	}
}

/* One chunk of nc <= NC positions starting at n0; L is R x NC scratch of
 * scores.  Inlined into a constant-nc and a variable-nc caller so the full
 * chunks get fixed-length inner loops. */
LLR_VECTORIZE static inline __attribute__((always_inline)) void chunk_body(const job *jb, int n0, int nc, float *L, double *out_nll, llr_norm_stat *out_norm)
{
	const llr_ll *o = jb->o;
	const llr_csr *phi = jb->rphi;
	int R = jb->R, F = o->F, lda = jb->lda;
	float mx[NC], tmp[NC], inv[NC];
	double s[NC], logz[NC];

	*out_norm = (llr_norm_stat){0};
	if (jb->dA && jb->fac && grad_factored(jb, n0, nc, L, out_nll))
		return;
	if (jb->dA && o->identity && !CTXBG(o) && jb->dA != jb->A) {
		chunk_softmax_grad(jb, n0, nc, out_nll);
		return;
	}
	/* Pass 1: scores, and the max over rows of the logits logb + s. */
	for (int j = 0; j < nc; j++)
		mx[j] = -INFINITY;
	for (int r = 0; r < R; r++) {
		float *row = L + (size_t)r * NC;
		float lb = jb->rlogb[r];
		row_scores(jb, r, n0, nc, row);
		for (int j = 0; j < nc; j++)
			mx[j] = lb + row[j] > mx[j] ? lb + row[j] : mx[j];
	}

	/* Pass 2: sum of exp(l - max), in double; kept in L when training. */
	for (int j = 0; j < nc; j++)
		s[j] = 0.0;
	for (int r = 0; r < R; r++) {
		float *row = L + (size_t)r * NC;
		float lb = jb->rlogb[r];
		float *e = jb->dA ? row : tmp;
		for (int j = 0; j < nc; j++)
			e[j] = lb + row[j] - mx[j];
		for (int j = 0; j < nc; j++)
			e[j] = vexp1(e[j]);
		for (int j = 0; j < nc; j++)
			s[j] += e[j];
	}
	double S[NC], lny[NC];
	bgscr sc = {0};
	if (CTXBG(o))
		sc = bg_scratch(jb, L);
	for (int j = 0; j < nc; j++) {
		int32_t y = jb->target ? jb->target[n0 + j] : -1;
		if (CTXBG(o) && (y >= 0 || !jb->target || jb->logp_all)) {
			size_t k;
			double lc;
			S[j] = bg_sum(jb, n0 + j, mx[j], s[j], y, &sc, &k, &lc, &lny[j]);
			/* nothing allowed (S 0): every log p is -inf */
			logz[j] = S[j] > 0.0 ? mx[j] + log(S[j]) : INFINITY;
			inv[j] = S[j] > 0.0 ? (float)(exp(lc) / S[j]) : 0.0f;
		} else {
			logz[j] = mx[j] + log(s[j]);
		}
	}
	*out_nll = chunk_loss(jb, n0, nc, logz, CTXBG(o) ? lny : NULL);
	*out_norm = (llr_norm_stat){0};

	if (jb->dA) {
		/* Pass 3: g = p - onehot(target) over the rows (a class's p
		 * is its words' summed p, and the target's class takes the
		 * onehot), 0 at skipped positions, and dA = Phi_rows^T g.  The
		 * onehot is taken off in exp units first. */
		for (int j = 0; j < nc; j++) {
			int y = jb->target[n0 + j];
			if (CTXBG(o)) {
				/* C / S from above; phi(y) comes off in bg_grad */
				inv[j] = y >= 0 ? inv[j] : 0.0f;
				continue;
			}
			inv[j] = y >= 0 ? (float)(1.0 / s[j]) : 0.0f;
			if (y >= 0)
				L[(size_t)(jb->row_of ? jb->row_of[y] : y) * NC + j] -= (float)s[j];
		}
		if (!o->identity)
			for (int f = 0; f < F; f++)
				memset(jb->dA + (size_t)f * lda + n0, 0, (size_t)nc * sizeof *jb->dA);
		for (int r = 0; r < R; r++) {
			float *g = L + (size_t)r * NC;
			for (int j = 0; j < nc; j++)
				g[j] *= inv[j];
			if (o->identity) {
				memcpy(jb->dA + (size_t)r * lda + n0, g, (size_t)nc * sizeof *g);
				continue;
			}
			for (int32_t k = phi->indptr[r]; k < phi->indptr[r + 1]; k++) {
				float *d = jb->dA + (size_t)phi->indices[k] * lda + n0;
				float val = phi->data[k];
				for (int j = 0; j < nc; j++)
					d[j] += val * g[j];
			}
		}
		for (int j = 0; CTXBG(o) && j < nc; j++)
			if (jb->target[n0 + j] >= 0)
				bg_grad(jb, n0 + j, mx[j], s[j], S[j], jb->target[n0 + j], &sc);
	} else if (CTXBG(o) && (jb->logp_all || jb->want_norm)) {
		for (int j = 0; j < nc; j++) {
			int counted = !jb->target || jb->target[n0 + j] >= 0;
			if (!counted && !jb->logp_all)
				continue;
			double e = bg_dist(jb, n0 + j, j, L, logz[j], &sc, mx[j], s[j], counted && jb->want_norm);
			if (counted && jb->want_norm)
				llr_norm_add(out_norm, e, 0.0);
		}
	} else if (jb->logp_all || jb->want_norm) {
		/* Pass 3 (inference): log p for every word from its row's
		 * score; the normalisation check uses libm's expf,
		 * independent of vexp1. */
		float lzf[NC];
		double sum[NC];
		for (int j = 0; j < nc; j++) {
			lzf[j] = (float)logz[j];
			sum[j] = 0.0;
		}
		size_t W = (size_t)o->V + (size_t)o->X;
		for (int v = 0; v < o->V; v++) {
			const float *row = L + (size_t)(jb->row_of ? jb->row_of[v] : v) * NC;
			float lb = o->logb[v];
			for (int j = 0; j < nc; j++) {
				float l = lb + row[j];
				float lp = (float)((double)l - logz[j]);
				if (jb->logp_all)
					jb->logp_all[(size_t)(n0 + j) * W + v] = lp;
				if (jb->want_norm)
					sum[j] += expf(l - lzf[j]);
			}
		}
		/* the extra rows (an open vocabulary's signatures): in Z
		 * already, not in the norm check's sum over V */
		for (int v = o->V; jb->logp_all && v < o->V + o->X; v++) {
			const float *row = L + (size_t)jb->row_of[v] * NC;
			float lb = o->logb[v];
			for (int j = 0; j < nc; j++)
				jb->logp_all[(size_t)(n0 + j) * W + v] = (float)((double)(lb + row[j]) - logz[j]);
		}
		/* the strings outside V summed exactly (ox), then the
		 * importance samples of the rest: their estimate of its mass,
		 * O = sum_k exp(logw_k + s_k - log Z),
		 * and its variance (Q - O^2) / draws, Q the per-draw second
		 * moment sum_k exp(logw2_k + 2 (s_k - log Z)) */
		const llr_csr *np = o->nrm_phi;
		double os[NC], oq[NC], ox[NC];
		for (int j = 0; j < nc; j++)
			os[j] = oq[j] = ox[j] = 0.0;
		for (int32_t k = 0; np && jb->want_norm && k < o->nrm_exact; k++)
			for (int j = 0; j < nc; j++)
				ox[j] += exp((double)o->nrm_logw[k] + csr_score(jb, np, k, n0 + j) - logz[j]);
		for (int32_t k = o->nrm_exact; np && jb->want_norm && k < np->rows; k++)
			for (int j = 0; j < nc; j++) {
				double x = csr_score(jb, np, k, n0 + j) - logz[j];
				os[j] += exp((double)o->nrm_logw[k] + x);
				oq[j] += exp((double)o->nrm_logw[np->rows + k] + 2.0 * x);
			}
		for (int j = 0; jb->want_norm && j < nc; j++) {
			if (jb->target && jb->target[n0 + j] < 0)
				continue;
			double var = np && o->nrm_exact < np->rows
			                 ? (oq[j] - os[j] * os[j]) * exp(-(double)o->nrm_logw[2 * np->rows])
			                 : 0.0;                                                            /* no draws: exact */
			llr_norm_add(out_norm, sum[j] + ox[j] + os[j] - 1.0, var > 0.0 ? sqrt(var) : 0.0); /* NaN propagates */
		}
	}
}

/* Rows of the score block computed at a time by chunk_lse. */
#define VB 64

/* Scoring only (no gradient, no full distribution): log Z in one pass
 * over the rows, in blocks of VB whose scores stay in L1 (the full R x NC
 * block of chunk_body need not fit in cache).  The running max m and sum
 * s = sum exp(l - m) are rescaled by exp(m_old - m_new) when a block
 * raises the max, as in an online softmax. */
LLR_VECTORIZE static inline __attribute__((always_inline)) void chunk_lse_body(const job *jb, int n0, int nc, float *L, double *out_nll)
{
	int R = jb->R;
	float mx[NC], bm[NC], sh[NC], tmp[NC];
	double s[NC], logz[NC];

	const float *E[LLR_LL_GROUPS];
	double T[NC];
	if (jb->fac && lse_factored(jb, n0, nc, L, E, T, logz)) {
		*out_nll = chunk_loss(jb, n0, nc, logz, NULL);
		return;
	}
	for (int j = 0; j < nc; j++) {
		mx[j] = -INFINITY;
		sh[j] = 0.0f;
		s[j] = 0.0;
	}
	for (int r0 = 0; r0 < R; r0 += VB) {
		int rn = LLR_MIN(VB, R - r0);
		for (int j = 0; j < nc; j++)
			bm[j] = -INFINITY;
		for (int r = 0; r < rn; r++) {
			float *row = L + (size_t)r * NC;
			float lb = jb->rlogb[r0 + r];
			row_scores(jb, r0 + r, n0, nc, row);
			for (int j = 0; j < nc; j++) {
				row[j] += lb;
				bm[j] = row[j] > bm[j] ? row[j] : bm[j];
			}
		}
		for (int j = 0; j < nc; j++)
			if (bm[j] > mx[j]) {
				if (s[j] > 0.0)
					s[j] *= exp((double)mx[j] - (double)bm[j]);
				mx[j] = bm[j];
				sh[j] = bm[j] == INFINITY ? 0.0f : bm[j];
			}
		for (int r = 0; r < rn; r++) {
			const float *row = L + (size_t)r * NC;
			for (int j = 0; j < nc; j++)
				tmp[j] = vexp1(row[j] - sh[j]);
			for (int j = 0; j < nc; j++)
				s[j] += tmp[j];
		}
	}
	double lny[NC];
	bgscr sc = {0};
	if (CTXBG(jb->o))
		sc = bg_scratch(jb, L);
	for (int j = 0; j < nc; j++) {
		int32_t y = jb->target[n0 + j];
		if (CTXBG(jb->o) && y >= 0) {
			size_t k;
			double lc;
			double S = bg_sum(jb, n0 + j, mx[j], s[j], y, &sc, &k, &lc, &lny[j]);
			logz[j] = S > 0.0 ? mx[j] + log(S) : INFINITY;
		} else {
			logz[j] = mx[j] + log(s[j]);
		}
	}
	*out_nll = chunk_loss(jb, n0, nc, logz, CTXBG(jb->o) ? lny : NULL);
}

LLR_CLONES LLR_VECTORIZE static void chunk_lse_full(const job *jb, int n0, float *L, double *nll)
{
	chunk_lse_body(jb, n0, NC, L, nll);
}

LLR_CLONES LLR_VECTORIZE static void chunk_lse_part(const job *jb, int n0, int nc, float *L, double *nll)
{
	chunk_lse_body(jb, n0, nc, L, nll);
}

LLR_CLONES LLR_VECTORIZE static void chunk_full(const job *jb, int n0, float *L, double *nll, llr_norm_stat *norm)
{
	chunk_body(jb, n0, NC, L, nll, norm);
}

LLR_CLONES LLR_VECTORIZE static void chunk_part(const job *jb, int n0, int nc, float *L, double *nll, llr_norm_stat *norm)
{
	chunk_body(jb, n0, nc, L, nll, norm);
}

typedef struct worker {
	const job *jb;
	int tid;
} worker;

static void *worker_run(void *arg)
{
	const worker *w = arg;
	const job *jb = w->jb;
	float *L = jb->work + (size_t)w->tid * jb->stride;
	for (int ci = w->tid; ci < jb->nchunks; ci += jb->threads) {
		int n0 = ci * NC, nc = LLR_MIN(NC, jb->N - n0);
		if (!jb->dA && !jb->logp_all && !jb->want_norm) {
			jb->cnorm[ci] = (llr_norm_stat){0};
			if (nc == NC)
				chunk_lse_full(jb, n0, L, &jb->cnll[ci]);
			else
				chunk_lse_part(jb, n0, nc, L, &jb->cnll[ci]);
		} else if (nc == NC)
			chunk_full(jb, n0, L, &jb->cnll[ci], &jb->cnorm[ci]);
		else
			chunk_part(jb, n0, nc, L, &jb->cnll[ci], &jb->cnorm[ci]);
	}
	return NULL;
}

#define LLR_MAX_THREADS 64

int llr_ll_run(const llr_ll *o, const llr_ll_io *io)
{
	int N = io->N, threads = io->threads;
	LLR_ASSERT(io->lda >= N);
	switch (io->mode) {
	case LLR_LL_LOSS:
		LLR_ASSERT(!io->dA && !io->logp_all && io->target);
		break;
	case LLR_LL_GRAD:
		LLR_ASSERT(io->dA && io->target && !io->logp_all && !io->norm_err && !io->norm && !io->xphi);
		break;
	case LLR_LL_DIST:
		LLR_ASSERT(io->logp_all && !io->dA);
		break;
	default:
		LLR_ASSERT(!"llr_ll_run: unknown mode");
	}
	job jb = {
		.o = o, .N = N, .lda = io->lda, .A = io->A, .target = io->target,
		.logp_t = io->logp_t,
		.logp_all = io->mode == LLR_LL_DIST ? io->logp_all : NULL,
		.dA = io->mode == LLR_LL_GRAD ? io->dA : NULL,
		.want_norm = io->norm_err || io->norm, .work = io->work,
		.R = o->V, .rphi = o->phi, .rlogb = o->logb, .ctx = io->ctx,
	};
	LLR_ASSERT(!o->bg || o->ctxlen == 0 || io->ctx);
	LLR_ASSERT(!o->fsa || io->ctx);
	LLR_ASSERT(!io->xphi || (io->mode == LLR_LL_LOSS && !CTXBG(o) && io->xphi->cols == o->F && io->xlogb));
	LLR_ASSERT(!o->nrm_phi || (!CTXBG(o) && o->nrm_phi->cols == o->F));
	LLR_ASSERT(!o->X || (o->cls && !o->identity && !CTXBG(o)));
	jb.xphi = io->xphi;
	jb.xlogb = io->xlogb;
	if (o->cls && !o->identity) {
		jb.R = o->cls->C;
		jb.rphi = o->cls->phi;
		jb.rlogb = o->cls->logB;
		jb.row_of = o->cls->of;
		jb.fac = CTXBG(o) ? NULL : o->cls->fac;
	}
	jb.stride = WSTRIDE(LLR_MAX(o->V, jb.R)); /* llr_ll_work_size's */
	jb.nchunks = (N + NC - 1) / NC;
	jb.cnll = io->chunk;
	jb.cnorm = (llr_norm_stat *)(io->chunk + jb.nchunks);
	if (threads < 1)
		threads = 1;
	if (threads > LLR_MAX_THREADS)
		threads = LLR_MAX_THREADS;
	if (threads > jb.nchunks)
		threads = jb.nchunks > 0 ? jb.nchunks : 1;
	jb.threads = threads;

	worker w[LLR_MAX_THREADS];
	pthread_t th[LLR_MAX_THREADS];
	int started = 0;
	for (int t = 0; t < threads; t++) {
		w[t].jb = &jb;
		w[t].tid = t;
	}
	for (int t = 1; t < threads; t++) {
		if (pthread_create(&th[t], NULL, worker_run, &w[t]) != 0)
			break;
		started = t;
	}
	if (started < threads - 1) {
		/* Could not start every thread: do their share here, after the
		 * ones that did start (their chunks are disjoint). */
		for (int t = started + 1; t < threads; t++)
			worker_run(&w[t]);
	}
	worker_run(&w[0]);
	for (int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);

	double tot = 0.0;
	llr_norm_stat worst = {0};
	for (int ci = 0; ci < jb.nchunks; ci++) {
		tot += jb.cnll[ci];
		llr_norm_merge(&worst, &jb.cnorm[ci]);
	}
	if (io->nll)
		*io->nll = tot;
	if (io->norm_err)
		*io->norm_err = worst.err;
	if (io->norm)
		*io->norm = worst;
	/* scoring under an automaton: a token it does not allow has
	 * probability 0, log p -inf (score(1) counts a zeroprob) */
	if (o->fsa && io->mode == LLR_LL_LOSS && tot == INFINITY)
		return LLR_OK;
	if (!isfinite(tot))
		return LLR_ENAN;
	return LLR_OK;
}
