/*
 * bound.c - log Z of the chain MRF (mrf.h): exactly, by the forward
 * algorithm over the last K tokens (tiny V^K and N only), and bounded
 * above by the lifted tree-reweighted (TRW) bound, with its gradient and
 * the dual steps that tighten it.  Not here: the counts (counts.c), the
 * model file (model.c), learning (objective.c, estimate.c).
 *
 * The bound.  The edges (i, i+k) of the corpus graph fall into K spanning
 * forests F_1..F_K, F_k holding the edges of distance k: k disjoint chains,
 * the positions i = r, r+k, r+2k... for r = 1..k, of lengths q+1 (the
 * first s of them) and q (the others), N = q k + s.  Write theta as
 * sum_k rho_k theta^k with rho_k = 1/K and theta^k living on F_k: its
 * pair potentials K theta_k on F_k's edges (the only forest with them),
 * its unary potentials phi_k = b + K delta_k at every node, where
 * sum_k delta_k = 0 (so sum_k rho_k phi_k = b).  log Z is convex in the
 * potentials (a log-sum-exp of linear functions), so by Jensen
 *   log Z(theta) = log Z(sum_k rho_k theta^k) <= sum_k rho_k log Z(theta^k)
 * for every such delta (Wainwright, Jaakkola & Willsky 2005): that is
 * the TRW bound over the forests.  Each log Z(theta^k) is a sum over the
 * forest's independent chains, and each chain has the same potentials
 * at every node and edge (the lifting: delta_k is one vector for all
 * nodes, by the chain's symmetry; a restriction of the dual that keeps
 * the bound an upper bound), so log Z(theta^k) = s log Z_c(q+1) +
 * (k - s) log Z_c(q), Z_c(L) the partition function of one chain of L
 * nodes.  No pass over the corpus: N alone enters.
 *
 * One chain.  With G(a, b) = exp(K theta_k(a, b) + phi_k(b) - m) and
 * a1(a) = exp(phi_k(a) - m1), the forward algorithm
 * gives Z_c(L) = exp(m1 + (L-1) m) 1' (G')^(L-1) a1 exactly, in (L-1) V^2
 * steps; it is used when that is at most MRF_CHAIN_EXACT.  Longer chains
 * are bounded above through the Perron root: for any positive vector r
 * let lam = max_b (G' r)_b / r_b (the Collatz-Wielandt bound, >= the
 * Perron root) and c = max_a a1(a) / r(a).  G' is nonnegative, so
 * G' r <= lam r entrywise gives (G')^n r <= lam^n r, and a1 <= c r gives
 *   Z_c(L) <= exp(m1 + (L-1) m) c lam^(L-1) 1'r,
 * an upper bound whatever r is; r is the Perron vector by power iteration,
 * where lam is the Perron root to rounding, so the bound per token is the
 * exact free energy of the infinite chain and the ends cost O(1).  Its
 * gradient is taken as that of the asymptotic form (L-1) log lam +
 * log l'a1 (l the left Perron vector): bulk pair marginals r_a G(a,b)
 * l_b / (lam l'r), the first node's l a1 / l'a1; the ends' dependence
 * through r is left out (O(1) against O(L)).
 *
 * Gradients: d log Z_c / d(pair potential) is the expected pair count on
 * the chain's edges, d / d(unary) the expected count of the word on its
 * nodes; hence dB/d theta_k(a,b) = E_k(a,b) (rho_k times K), dB/db =
 * (1/K) sum_k n_k, dB/d delta_k = n_k, and through theta_k = u_k . v_k the
 * gradients of u_k and v_k.
 *
 * The computation.  G factors as T_k diag(w): T_k(a, b) = exp(K
 * theta_k(a, b) - mt_k) (mt_k its largest exponent) depends on u_k, v_k
 * alone, w(b) = exp(phi_k(b) - m1) = a1(b) on b and delta, and m = mt_k +
 * m1.  T_k (V x V, one a forest) is made once for given u, v (a GEMM of
 * rank D, then V^2 exponentials) and kept: the dual steps change w only,
 * so a step costs the products of the power iterations, T_k or T_k' times
 * a vector (GEMV), and no exponential.  The power iterations run on s =
 * r / w, the right Perron vector of T_k' diag(w) (s <- T_k' (w o s)); then
 * lam = max_b (T_k'(w o s))_b / s_b, c = max_a 1 / s_a and 1'r = w's, and
 * no ratio divides by w, which may underflow to 0 where phi_k is hundreds
 * of nats below its largest.  The left vector: l <- T_k (w o l).  The
 * pair marginals are E(a, b) = e (w o s)_a T_k(a, b) (w o l)_b, so the
 * gradients of u_k and v_k are two GEMMs with T_k, (T_k (diag(w o l)
 * v_k) and T_k' (diag(w o s) u_k), each row scaled), never a V x V E.
 * T_k's entries are floored at exp(MRF_LOG_FLOOR) (forest_T): T_k > 0, so
 * s and l are positive in every entry, at least exp(MRF_LOG_FLOOR) / V,
 * and no sum of the power iterations underflows to 0 (exp alone gives 0
 * below -745, and then an entry of r of 0 gave c = inf, a sum of 0 a
 * NaN, kept as the next call's start: issue 53).  Raising a potential
 * can only raise log Z, so the bound stays a bound; no entry is that far
 * below the largest unless theta spans hundreds of nats (a long trial
 * step of L-BFGS).  The exact chains (small V and L only) form G.
 */
#include "family/mrf/mrf.h"

#include <math.h>
#include <stdlib.h>

/* The floor of log T_k (forest_T): s and l stay at least exp(-300) / V
 * (5e-131 / V) in every entry, and a product of the power iterations at
 * least exp(-600) / V, far above the smallest normal double (2.2e-308). */
#define MRF_LOG_FLOOR (-300.0)

struct mrf_ws {
	int32_t V;
	int K, D;
	double *T;             /* K x V x V: T_k(a, b) at T[((k-1) V + a) V + b] */
	double mt[MRF_MAX_K];  /* T_k's shift */
	double *uv;            /* the u, v (2 K V D) T was made from */
	int made;              /* 1: T is uv's, -1: uv's potentials are not finite, 0: nothing yet */
	double *phi, *a1, *s, *l, *y, *z, *t1, *t2, *nodes; /* V; a1 is w */
	double *P, *Q;         /* V x D: the Perron chains' pair gradient */
	double *G, *acc, *E;   /* V x V, the exact chains only, made when first needed */
	double *al, *sums;     /* the forward messages and their sums */
	int64_t alcap;
	/* each forest's last s and l (K x V), to start the next power
	 * iteration from; have[k]: 1 s, 2 l, 3 both */
	double *rk, *lk;
	int have[MRF_MAX_K], k;
	/* forest k in this call: pr, pl the right and left Perron quantities
	 * made; gk G made, ek E zeroed; epair the coefficient e of the Perron
	 * chains' pair marginals */
	int pr, pl, gk, ek;
	double lam, c, sr, lr, la, ly, epair;
	int64_t products;
};

double mrf_theta(const mrf_dims *d, const double *par, int k, int32_t a, int32_t b)
{
	const double *u = par + mrf_u_off(d, k) + (size_t)a * d->D, *v = par + mrf_v_off(d, k) + (size_t)b * d->D;
	double t = 0;
	for (int j = 0; j < d->D; j++)
		t += u[j] * v[j];
	return t;
}

mrf_ws *mrf_ws_new(const mrf_dims *d)
{
	mrf_ws *w = llr_calloc(1, sizeof *w);
	if (!w)
		return NULL;
	size_t V = (size_t)d->V, D = (size_t)d->D, K = (size_t)d->K;
	w->V = d->V;
	w->K = d->K;
	w->D = d->D;
	w->T = llr_malloc(K * V * V * sizeof(double));
	w->uv = llr_malloc(2 * K * V * D * sizeof(double));
	w->P = llr_malloc(V * D * sizeof(double));
	w->Q = llr_malloc(V * D * sizeof(double));
	double **vec[] = {&w->phi, &w->a1, &w->s, &w->l, &w->y, &w->z, &w->t1, &w->t2, &w->nodes};
	w->rk = llr_calloc(K * V, sizeof(double));
	w->lk = llr_calloc(K * V, sizeof(double));
	int ok = w->T && w->uv && w->P && w->Q && w->rk && w->lk;
	for (size_t i = 0; i < sizeof vec / sizeof *vec; i++)
		ok &= (*vec[i] = llr_calloc(V, sizeof(double))) != NULL;
	if (!ok) {
		mrf_ws_free(w);
		return NULL;
	}
	return w;
}

void mrf_ws_free(mrf_ws *w)
{
	if (!w)
		return;
	free(w->T), free(w->uv), free(w->P), free(w->Q), free(w->G), free(w->acc), free(w->E);
	free(w->phi), free(w->a1), free(w->s), free(w->l), free(w->y), free(w->z), free(w->t1), free(w->t2), free(w->nodes);
	free(w->al), free(w->sums), free(w->rk), free(w->lk);
	free(w);
}

int64_t mrf_ws_products(const mrf_ws *w)
{
	return w->products;
}

/* T_k for every forest, unless T already holds par's u, v; -1 when they
 * give potentials that are not finite. */
static int forest_T(mrf_ws *w, const mrf_dims *d, const double *par)
{
	size_t V = (size_t)w->V, n = 2 * (size_t)d->K * V * (size_t)d->D;
	const double *uv = par + mrf_u_off(d, 1);
	if (w->made && !memcmp(w->uv, uv, n * sizeof *uv))
		return w->made > 0 ? 0 : -1;
	memcpy(w->uv, uv, n * sizeof *uv);
	w->made = -1;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(uv[i]))
			return -1;
	for (int k = 1; k <= d->K; k++) {
		double *T = w->T + (size_t)(k - 1) * V * V, mt = -INFINITY;
		llr_dgemm(0, 1, w->V, w->V, d->D, (double)d->K, par + mrf_u_off(d, k), d->D, par + mrf_v_off(d, k), d->D, 0.0, T, w->V);
		for (size_t j = 0; j < V * V; j++)
			mt = fmax(mt, T[j]);
		if (!isfinite(mt))
			return -1;
		for (size_t j = 0; j < V * V; j++)
			T[j] = exp(fmax(T[j] - mt, MRF_LOG_FLOOR));
		w->mt[k - 1] = mt;
	}
	w->made = 1;
	return 0;
}

/* Forest k's phi, a1 = w and the shifts m = mt_k + m1, m1; -1 when phi
 * is not finite. */
static int forest(mrf_ws *w, const mrf_dims *d, const double *par, int k, const double *delta, double *m, double *m1)
{
	int32_t V = d->V;
	*m1 = -INFINITY;
	for (int32_t a = 0; a < V; a++) {
		w->phi[a] = par[a] + d->K * delta[(size_t)(k - 1) * V + a];
		if (!isfinite(w->phi[a]))
			return -1;
		*m1 = fmax(*m1, w->phi[a]);
	}
	for (int32_t a = 0; a < V; a++)
		w->a1[a] = exp(w->phi[a] - *m1);
	*m = w->mt[k - 1] + *m1;
	return 0;
}

/* ------------------------------------------------- the exact chains */

/* y = G' x (y_b = sum_a x_a G(a, b)); returns sum y. */
static double fwd(const double *G, int32_t V, const double *x, double *y)
{
	for (int32_t b = 0; b < V; b++)
		y[b] = 0;
	for (int32_t a = 0; a < V; a++) {
		const double *g = G + (size_t)a * V;
		for (int32_t b = 0; b < V; b++)
			y[b] += x[a] * g[b];
	}
	double t = 0;
	for (int32_t b = 0; b < V; b++)
		t += y[b];
	return t;
}

/* y = G x (y_a = sum_b G(a, b) x_b); returns sum y. */
static double bwd(const double *G, int32_t V, const double *x, double *y)
{
	double t = 0;
	for (int32_t a = 0; a < V; a++) {
		const double *g = G + (size_t)a * V;
		double z = 0;
		for (int32_t b = 0; b < V; b++)
			z += g[b] * x[b];
		y[a] = z;
		t += z;
	}
	return t;
}

/* A chain of L nodes, exactly: log Z_c(L) (the log(G) shift m, a1's m1);
 * with grads, mult times its expected pair counts added to w->E and its
 * expected node counts to w->nodes. */
static double chain_exact(mrf_ws *w, double m, double m1, int64_t L, double mult, int grads, int pairs)
{
	int32_t V = w->V;
	if (L > w->alcap) {
		double *al = llr_reallocarray(w->al, (size_t)L * (size_t)V, sizeof *al), *s;
		if (al)
			w->al = al;
		if (!al || !(s = llr_reallocarray(w->sums, (size_t)L, sizeof *s)))
			return NAN;
		w->sums = s;
		w->alcap = L;
	}
	double logz = m1 + (double)(L - 1) * m, *al = w->al, *s = w->sums;
	double t = 0;
	for (int32_t a = 0; a < V; a++)
		t += w->a1[a];
	for (int32_t a = 0; a < V; a++)
		al[a] = w->a1[a] / t;
	s[0] = t;
	logz += log(t);
	for (int64_t i = 1; i < L; i++) {
		double *y = al + (size_t)i * V;
		s[i] = fwd(w->G, V, al + (size_t)(i - 1) * V, y);
		for (int32_t b = 0; b < V; b++)
			y[b] /= s[i];
		logz += log(s[i]);
	}
	if (!grads)
		return logz;
	/* beta_L = 1; beta_i = G beta_{i+1} / s_{i+1}; node i: al_i beta_i;
	 * edge (i, i+1): al_i(a) G(a,b) beta_{i+1}(b) / s_{i+1}. */
	double *beta = w->t1, *nb = w->t2;
	for (int32_t a = 0; a < V; a++)
		beta[a] = 1;
	if (pairs)
		memset(w->acc, 0, (size_t)V * V * sizeof *w->acc);
	for (int64_t i = L - 1; i >= 0; i--) {
		const double *x = al + (size_t)i * V;
		for (int32_t a = 0; a < V; a++)
			w->nodes[a] += mult * x[a] * beta[a];
		if (i == 0)
			break;
		const double *p = al + (size_t)(i - 1) * V;
		for (int32_t a = 0; pairs && a < V; a++) {
			double *acc = w->acc + (size_t)a * V, pa = p[a] / s[i];
			for (int32_t b = 0; b < V; b++)
				acc[b] += pa * beta[b];
		}
		bwd(w->G, V, beta, nb);
		for (int32_t a = 0; a < V; a++)
			beta[a] = nb[a] / s[i];
	}
	for (size_t j = 0; pairs && j < (size_t)V * V; j++)
		w->E[j] += mult * w->acc[j] * w->G[j];
	return logz;
}

/* Forest k's G = T_k diag(w) for the exact chains, and with pairs its E
 * zeroed (each made once a call of mrf_bound, when first needed); -1 out
 * of memory. */
static int exact_ready(mrf_ws *w, const double *T, int pairs)
{
	size_t VV = (size_t)w->V * (size_t)w->V;
	if (!w->G && !(w->G = llr_malloc(VV * sizeof *w->G)))
		return -1;
	if (pairs && ((!w->acc && !(w->acc = llr_malloc(VV * sizeof *w->acc))) || (!w->E && !(w->E = llr_malloc(VV * sizeof *w->E)))))
		return -1;
	if (!w->gk) {
		for (size_t j = 0; j < VV; j++)
			w->G[j] = T[j] * w->a1[j % (size_t)w->V];
		w->gk = 1;
	}
	if (pairs && !w->ek) {
		memset(w->E, 0, VV * sizeof *w->E);
		w->ek = 1;
	}
	return 0;
}

/* w->E (forest k's expected pair counts) into the gradient of u_k, v_k. */
static void pair_grad(const mrf_ws *w, const mrf_dims *d, const double *par, int k, double *gpar)
{
	int32_t V = d->V;
	int D = d->D;
	const double *u = par + mrf_u_off(d, k), *v = par + mrf_v_off(d, k);
	double *gu = gpar + mrf_u_off(d, k), *gv = gpar + mrf_v_off(d, k);
	for (int32_t a = 0; a < V; a++)
		for (int32_t b = 0; b < V; b++) {
			double e = w->E[(size_t)a * V + b];
			for (int j = 0; j < D; j++) {
				gu[(size_t)a * D + j] += e * v[(size_t)b * D + j];
				gv[(size_t)b * D + j] += e * u[(size_t)a * D + j];
			}
		}
}

/* ------------------------------------------------- the Perron chains */

/* y = T' (w o x) (trans, the right vectors: y_b = sum_a T(a, b) w_a x_a)
 * or y = T (w o x) (the left ones: y_a = sum_b T(a, b) w_b x_b); returns
 * sum y. */
static double step(mrf_ws *w, const double *T, const double *x, double *y, int trans)
{
	int32_t V = w->V;
	for (int32_t a = 0; a < V; a++)
		w->z[a] = w->a1[a] * x[a];
	llr_dgemv(trans, V, V, 1.0, T, V, w->z, 0.0, y);
	w->products++;
	double t = 0;
	for (int32_t a = 0; a < V; a++)
		t += y[a];
	return t;
}

/* x normalised to sum 1 by power iteration with step(trans), from last (the
 * forest's vector of its last call, NULL: uniform), where it is left; -1
 * (x unusable) when a step's sum is not positive and finite, which the
 * floor of T rules out for finite potentials.  Any positive x keeps the
 * bound a bound; convergence only makes it tight and its gradient right. */
static int perron(mrf_ws *w, const double *T, double *x, double *y, int trans, const double *last)
{
	int32_t V = w->V;
	double sum = 0;
	for (int32_t a = 0; last && a < V; a++)
		sum += last[a];
	for (int32_t a = 0; a < V; a++) /* a last vector that is not positive and finite is not reused */
		x[a] = sum > 0 && isfinite(sum) ? last[a] : 1.0 / V;
	for (int it = 0; it < 5000; it++) {
		double t = step(w, T, x, y, trans), diff = 0;
		if (!(t > 0 && isfinite(t)))
			return -1;
		for (int32_t a = 0; a < V; a++) {
			y[a] /= t;
			diff = fmax(diff, fabs(y[a] - x[a]) / y[a]);
			x[a] = y[a];
		}
		if (diff < 1e-12)
			break;
	}
	return 0;
}

/* Forest k's right Perron quantities (s, y = T'(w o s), lam, c, 1'r),
 * once a call; -1 when the power iteration fails. */
static int perron_right(mrf_ws *w, const double *T)
{
	int32_t V = w->V;
	double *rk = w->rk + (size_t)w->k * V, *s = w->s, *y = w->y;
	if (perron(w, T, s, y, 1, w->have[w->k] & 1 ? rk : NULL) < 0)
		return -1;
	memcpy(rk, s, (size_t)V * sizeof *rk);
	w->have[w->k] |= 1;
	step(w, T, s, y, 1);
	double lam = 0, smin = INFINITY, sr = 0;
	for (int32_t a = 0; a < V; a++) {
		lam = fmax(lam, y[a] / s[a]);
		smin = fmin(smin, s[a]);
		sr += w->a1[a] * s[a];
	}
	w->lam = lam, w->c = 1 / smin, w->sr = sr;
	w->pr = 1;
	return lam > 0 && isfinite(lam) && sr > 0 ? 0 : -1;
}

/* Forest k's left Perron vector l and the sums of the gradient: l'r =
 * l'(w o s), l'a1 = l'w, l'G'r = (w o l)'T'(w o s); once a call. */
static int perron_left(mrf_ws *w, const double *T)
{
	int32_t V = w->V;
	double *lk = w->lk + (size_t)w->k * V, *l = w->l;
	if (perron(w, T, l, w->t2, 0, w->have[w->k] & 2 ? lk : NULL) < 0)
		return -1;
	memcpy(lk, l, (size_t)V * sizeof *lk);
	w->have[w->k] |= 2;
	double lr = 0, la = 0, ly = 0;
	for (int32_t a = 0; a < V; a++) {
		lr += l[a] * w->a1[a] * w->s[a];
		la += l[a] * w->a1[a];
		ly += l[a] * w->a1[a] * w->y[a];
	}
	w->lr = lr, w->la = la, w->ly = ly;
	w->pl = 1;
	return lr > 0 && la > 0 && ly > 0 ? 0 : -1; /* positive when T and s are (the floor) */
}

/* A chain of L nodes bounded through the Perron root (the header); with
 * grads, mult times its expected node counts added to w->nodes and, with
 * pairs, its pair marginals' coefficient to w->epair. */
static double chain_perron(mrf_ws *w, const double *T, double m, double m1, int64_t L, double mult, int grads, int pairs)
{
	if (!w->pr && perron_right(w, T) < 0)
		return NAN;
	double logz = m1 + (double)(L - 1) * (m + log(w->lam)) + log(w->c) + log(w->sr);
	if (!grads)
		return logz;
	if (!w->pl && perron_left(w, T) < 0)
		return NAN;
	if (pairs)
		w->epair += mult * (double)(L - 1) / w->ly;
	for (int32_t a = 0; a < w->V; a++)
		w->nodes[a] += mult * ((double)(L - 1) * w->a1[a] * w->s[a] * w->l[a] / w->lr + w->l[a] * w->a1[a] / w->la);
	return logz;
}

/* g += epair diag(w o out) op(T) diag(w o in) x: op(T) = T (trans 0) or
 * T' (1); x and g V x D. */
static void pair_side(mrf_ws *w, int D, const double *T, int trans, const double *in, const double *x, const double *out, double *g)
{
	int32_t V = w->V;
	double *P = w->P, *Q = w->Q;
	for (int32_t a = 0; a < V; a++)
		for (int j = 0; j < D; j++)
			P[(size_t)a * D + j] = w->a1[a] * in[a] * x[(size_t)a * D + j];
	llr_dgemm(trans, 0, V, D, V, 1.0, T, V, P, D, 0.0, Q, D);
	for (int32_t a = 0; a < V; a++)
		for (int j = 0; j < D; j++)
			g[(size_t)a * D + j] += w->epair * w->a1[a] * out[a] * Q[(size_t)a * D + j];
}

/* The Perron chains' pair marginals E(a, b) = epair (w o s)_a T(a, b)
 * (w o l)_b into the gradient of u_k (E v_k) and v_k (E' u_k), as two
 * GEMMs of T_k with V x D. */
static void perron_pair_grad(mrf_ws *w, const mrf_dims *d, const double *par, int k, const double *T, double *gpar)
{
	pair_side(w, d->D, T, 0, w->l, par + mrf_v_off(d, k), w->s, gpar + mrf_u_off(d, k));
	pair_side(w, d->D, T, 1, w->s, par + mrf_u_off(d, k), w->l, gpar + mrf_v_off(d, k));
}

static double chain(mrf_ws *w, const double *T, double m, double m1, int64_t L, int method, double mult, int grads, int pairs)
{
	int exact = method == MRF_CHAIN_FORCE_EXACT ||
	            (method == MRF_CHAIN_AUTO && (double)(L - 1) * (double)w->V * (double)w->V <= MRF_CHAIN_EXACT);
	if (!exact && L > 1)
		return chain_perron(w, T, m, m1, L, mult, grads, pairs);
	if (exact_ready(w, T, grads && pairs) < 0)
		return NAN;
	return chain_exact(w, m, m1, L, mult, grads, pairs);
}

double mrf_bound(mrf_ws *w, const mrf_dims *d, const double *par, int64_t N, const double *delta, int method, double *gpar,
                 double *gdelta)
{
	int32_t V = d->V;
	int grads = gpar || gdelta;
	double B = 0;
	if (forest_T(w, d, par) < 0)
		return NAN;
	for (int k = 1; k <= d->K; k++) {
		double m, m1, zk = 0;
		const double *T = w->T + (size_t)(k - 1) * V * V;
		if (forest(w, d, par, k, delta, &m, &m1) < 0)
			return NAN;
		w->k = k - 1;
		w->pr = w->pl = w->gk = w->ek = 0;
		w->epair = 0;
		if (grads)
			memset(w->nodes, 0, (size_t)V * sizeof *w->nodes);
		int64_t q = N / k, s = N % k;
		if (s > 0)
			zk += (double)s * chain(w, T, m, m1, q + 1, method, (double)s, grads, gpar != NULL);
		if (q > 0)
			zk += (double)(k - s) * chain(w, T, m, m1, q, method, (double)(k - s), grads, gpar != NULL);
		B += zk / d->K;
		if (gdelta)
			memcpy(gdelta + (size_t)(k - 1) * V, w->nodes, (size_t)V * sizeof *gdelta);
		if (gpar) {
			for (int32_t a = 0; a < V; a++)
				gpar[a] += w->nodes[a] / d->K;
			if (w->ek)
				pair_grad(w, d, par, k, gpar);
			if (w->epair != 0)
				perron_pair_grad(w, d, par, k, T, gpar);
		}
	}
	return B;
}

/* g[K][V] projected onto sum_k g_k = 0 and divided by N; its largest
 * magnitude. */
static double project(double *g, const mrf_dims *d, int64_t N)
{
	double big = 0;
	for (int32_t a = 0; a < d->V; a++) {
		double mean = 0;
		for (int k = 0; k < d->K; k++)
			mean += g[(size_t)k * d->V + a] / d->K;
		for (int k = 0; k < d->K; k++) {
			double *x = g + (size_t)k * d->V + a;
			*x = (*x - mean) / (double)N;
			big = fmax(big, fabs(*x));
		}
	}
	return big;
}

/* A trial's bound is computed without its gradient (the left Perron
 * vectors), which only a step that is kept needs: it is then computed
 * at the new delta. */
double mrf_tighten(mrf_ws *w, const mrf_dims *d, const double *par, int64_t N, double *delta, int iters, double alpha0,
                   int method)
{
	size_t n = (size_t)d->K * d->V;
	double *g = d->K > 1 ? llr_malloc(2 * n * sizeof *g) : NULL;
	double cur = mrf_bound(w, d, par, N, delta, method, NULL, g);
	if (!g || !isfinite(cur)) { /* not finite: g was not set, and no step can help */
		free(g);
		return cur;
	}
	double *trial = g + n;
	int t = 0;
	for (int it = 0; it < iters && t < 60; it++) {
		if (project(g, d, N) < 1e-15)
			break;
		double alpha = ldexp(alpha0, -t);
		for (size_t j = 0; j < n; j++)
			trial[j] = delta[j] - alpha * g[j];
		double val = mrf_bound(w, d, par, N, trial, method, NULL, NULL);
		if (val < cur) {
			cur = val;
			memcpy(delta, trial, n * sizeof *delta);
			mrf_bound(w, d, par, N, delta, method, NULL, g);
		} else {
			t++;
		}
	}
	free(g);
	return cur;
}

/* ------------------------------------------------------- exact log Z */

static double lse(double a, double b)
{
	if (a == -INFINITY)
		return b;
	if (b == -INFINITY)
		return a;
	return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

double mrf_exact_logz(const mrf_dims *d, const double *par, int64_t N)
{
	int32_t V = d->V, V1 = V + 1;
	int K = d->K;
	double S = 1;
	for (int k = 0; k < K; k++)
		S *= V1;
	if (N < 1 || (double)N * S * V > MRF_EXACT_MAX)
		return NAN;
	size_t ns = (size_t)S, low = ns / (size_t)V1; /* states; (V+1)^(K-1) */
	double *f = llr_malloc(2 * ns * sizeof *f), *th = llr_malloc((size_t)K * V * V * sizeof *th);
	if (!f || !th) {
		free(f), free(th);
		return NAN;
	}
	for (int k = 1; k <= K; k++)
		for (int32_t a = 0; a < V; a++)
			for (int32_t b = 0; b < V; b++)
				th[((size_t)(k - 1) * V + a) * V + b] = mrf_theta(d, par, k, a, b);
	/* a state: sum_j t_j (V+1)^(j-1), t_j the token j back (V: none) */
	double *cur = f, *nxt = f + ns;
	for (size_t st = 0; st < ns; st++)
		cur[st] = -INFINITY;
	cur[ns - 1] = 0; /* every t_j = V */
	for (int64_t i = 0; i < N; i++) {
		for (size_t st = 0; st < ns; st++)
			nxt[st] = -INFINITY;
		for (size_t st = 0; st < ns; st++) {
			if (cur[st] == -INFINITY)
				continue;
			for (int32_t x = 0; x < V; x++) {
				double e = cur[st] + par[x];
				size_t rest = st;
				for (int k = 1; k <= K; k++, rest /= (size_t)V1) {
					int32_t t = (int32_t)(rest % (size_t)V1);
					if (t < V)
						e += th[((size_t)(k - 1) * V + t) * V + x];
				}
				size_t ns2 = (size_t)x + (size_t)V1 * (st % low);
				nxt[ns2] = lse(nxt[ns2], e);
			}
		}
		double *tmp = cur;
		cur = nxt;
		nxt = tmp;
	}
	double z = -INFINITY;
	for (size_t st = 0; st < ns; st++)
		z = lse(z, cur[st]);
	free(f), free(th);
	return z;
}
