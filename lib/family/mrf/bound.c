/*
 * bound.c - log Z of the chain MRF (mrf.h): exactly, by the forward
 * algorithm over the last K tokens (tiny V^K and N only), and bounded
 * above by the lifted tree-reweighted (TRW) bound, with its gradient and
 * the dual steps that tighten it.  Not here: the counts (counts.c), the
 * model file (model.c), learning (estimate.c).
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
 * One chain.  With G(a, b) = exp(K theta_k(a, b) + phi_k(b) - m) (m the
 * largest exponent) and a1(a) = exp(phi_k(a) - m1), the forward algorithm
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
 */
#include "family/mrf/mrf.h"

#include <math.h>
#include <stdlib.h>

struct mrf_ws {
	int32_t V;
	double *G, *acc, *E; /* V x V */
	double *phi, *a1, *r, *l, *t1, *t2, *nodes; /* V */
	double *al, *s;       /* the forward messages and their sums */
	int64_t alcap;
	/* each forest's last Perron vectors (K x V), to start the next power
	 * iteration from; have[k]: 1 right, 2 left, 3 both */
	double *rk, *lk;
	int have[MRF_MAX_K], k;
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
	size_t V = (size_t)d->V;
	w->V = d->V;
	w->G = llr_calloc(V * V, sizeof(double)); /* acc and E: with the first gradient */
	double **vec[] = {&w->phi, &w->a1, &w->r, &w->l, &w->t1, &w->t2, &w->nodes};
	w->rk = llr_calloc((size_t)d->K * V, sizeof(double));
	w->lk = llr_calloc((size_t)d->K * V, sizeof(double));
	int ok = w->G && w->rk && w->lk;
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
	free(w->G), free(w->acc), free(w->E), free(w->phi), free(w->a1), free(w->r), free(w->l), free(w->t1), free(w->t2);
	free(w->nodes), free(w->al), free(w->s), free(w->rk), free(w->lk);
	free(w);
}

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
		if (!al || !(s = llr_reallocarray(w->s, (size_t)L, sizeof *s)))
			return NAN;
		w->s = s;
		w->alcap = L;
	}
	double logz = m1 + (double)(L - 1) * m, *al = w->al, *s = w->s;
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

/* x normalised to sum 1 by power iteration with step (fwd or bwd),
 * from last (the forest's vector of its last call, NULL: uniform), where
 * it is left.  Any positive x keeps the bound a bound; convergence only
 * makes it tight and its gradient right. */
static void perron(const double *G, int32_t V, double *x, double *y,
                   double (*step)(const double *, int32_t, const double *, double *), double *last)
{
	for (int32_t a = 0; a < V; a++)
		x[a] = last ? last[a] : 1.0 / V;
	for (int it = 0; it < 5000; it++) {
		double t = step(G, V, x, y), diff = 0;
		for (int32_t a = 0; a < V; a++) {
			y[a] /= t;
			diff = fmax(diff, fabs(y[a] - x[a]) / y[a]);
			x[a] = y[a];
		}
		if (diff < 1e-12)
			break;
	}
}

/* A chain of L nodes bounded through the Perron root (the header). */
static double chain_perron(mrf_ws *w, double m, double m1, int64_t L, double mult, int grads, int pairs)
{
	int32_t V = w->V;
	double *r = w->r, *y = w->t1, *rk = w->rk + (size_t)w->k * V, *lk = w->lk + (size_t)w->k * V;
	perron(w->G, V, r, y, fwd, w->have[w->k] & 1 ? rk : NULL);
	memcpy(rk, r, (size_t)V * sizeof *rk);
	w->have[w->k] |= 1;
	fwd(w->G, V, r, y);
	double lam = 0, c = 0, sr = 0;
	for (int32_t a = 0; a < V; a++) {
		lam = fmax(lam, y[a] / r[a]);
		c = fmax(c, w->a1[a] / r[a]);
		sr += r[a];
	}
	double logz = m1 + (double)(L - 1) * (m + log(lam)) + log(c) + log(sr);
	if (!grads)
		return logz;
	double *l = w->l;
	perron(w->G, V, l, w->t2, bwd, w->have[w->k] & 2 ? lk : NULL);
	memcpy(lk, l, (size_t)V * sizeof *lk);
	w->have[w->k] |= 2;
	double lr = 0, la = 0, rho = 0;
	for (int32_t a = 0; a < V; a++) {
		lr += l[a] * r[a];
		la += l[a] * w->a1[a];
		rho += y[a] * l[a];
	}
	rho /= lr; /* l' G' r / l'r: the Perron root */
	double e = mult * (double)(L - 1) / (rho * lr);
	for (int32_t a = 0; a < V; a++) {
		if (pairs) { /* w->E is NULL when only the dual's gradient is asked for */
			const double *g = w->G + (size_t)a * V;
			double *E = w->E + (size_t)a * V;
			for (int32_t b = 0; b < V; b++)
				E[b] += e * r[a] * g[b] * l[b];
		}
		w->nodes[a] += mult * ((double)(L - 1) * r[a] * l[a] / lr + l[a] * w->a1[a] / la);
	}
	return logz;
}

static double chain(mrf_ws *w, double m, double m1, int64_t L, int method, double mult, int grads, int pairs)
{
	int exact = method == MRF_CHAIN_FORCE_EXACT ||
	            (method == MRF_CHAIN_AUTO && (double)(L - 1) * (double)w->V * (double)w->V <= MRF_CHAIN_EXACT);
	return exact || L == 1 ? chain_exact(w, m, m1, L, mult, grads, pairs) : chain_perron(w, m, m1, L, mult, grads, pairs);
}

/* Forest k's G, a1 and their shifts. */
static void forest(mrf_ws *w, const mrf_dims *d, const double *par, int k, const double *delta, double *m, double *m1)
{
	int32_t V = d->V;
	*m1 = -INFINITY;
	for (int32_t a = 0; a < V; a++) {
		w->phi[a] = par[a] + d->K * delta[(size_t)(k - 1) * V + a];
		*m1 = fmax(*m1, w->phi[a]);
	}
	*m = -INFINITY;
	for (int32_t a = 0; a < V; a++)
		for (int32_t b = 0; b < V; b++) {
			double x = d->K * mrf_theta(d, par, k, a, b) + w->phi[b];
			w->G[(size_t)a * V + b] = x;
			*m = fmax(*m, x);
		}
	for (size_t j = 0; j < (size_t)V * V; j++)
		w->G[j] = exp(w->G[j] - *m);
	for (int32_t a = 0; a < V; a++)
		w->a1[a] = exp(w->phi[a] - *m1);
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

double mrf_bound(mrf_ws *w, const mrf_dims *d, const double *par, int64_t N, const double *delta, int method, double *gpar,
                 double *gdelta)
{
	int32_t V = d->V;
	int grads = gpar || gdelta;
	double B = 0;
	if (gpar && !w->E) { /* the pair marginals' V x V, only when asked for */
		if (!w->acc && !(w->acc = llr_calloc((size_t)V * V, sizeof(double))))
			return NAN;
		if (!(w->E = llr_calloc((size_t)V * V, sizeof(double))))
			return NAN; /* w->acc stays, and is reused by the next call */
	}
	for (int k = 1; k <= d->K; k++) {
		double m, m1, zk = 0;
		forest(w, d, par, k, delta, &m, &m1);
		w->k = k - 1;
		if (grads) {
			if (gpar)
				memset(w->E, 0, (size_t)V * V * sizeof *w->E);
			memset(w->nodes, 0, (size_t)V * sizeof *w->nodes);
		}
		int64_t q = N / k, s = N % k;
		if (s > 0)
			zk += (double)s * chain(w, m, m1, q + 1, method, (double)s, grads, gpar != NULL);
		if (q > 0)
			zk += (double)(k - s) * chain(w, m, m1, q, method, (double)(k - s), grads, gpar != NULL);
		B += zk / d->K;
		if (gdelta)
			memcpy(gdelta + (size_t)(k - 1) * V, w->nodes, (size_t)V * sizeof *gdelta);
		if (gpar) {
			for (int32_t a = 0; a < V; a++)
				gpar[a] += w->nodes[a] / d->K;
			pair_grad(w, d, par, k, gpar);
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

double mrf_tighten(mrf_ws *w, const mrf_dims *d, const double *par, int64_t N, double *delta, int iters, double alpha0,
                   int method)
{
	size_t n = (size_t)d->K * d->V;
	double *g = d->K > 1 ? llr_malloc(3 * n * sizeof *g) : NULL;
	double cur = mrf_bound(w, d, par, N, delta, method, NULL, g);
	if (!g)
		return cur;
	double *trial = g + n, *gt = g + 2 * n;
	int t = 0;
	for (int it = 0; it < iters && t < 60; it++) {
		if (project(g, d, N) < 1e-15)
			break;
		double alpha = ldexp(alpha0, -t);
		for (size_t j = 0; j < n; j++)
			trial[j] = delta[j] - alpha * g[j];
		double val = mrf_bound(w, d, par, N, trial, method, NULL, gt);
		if (val < cur) {
			cur = val;
			memcpy(delta, trial, n * sizeof *delta);
			memcpy(g, gt, n * sizeof *g);
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
