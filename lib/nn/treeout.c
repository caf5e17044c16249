/*
 * treeout.c - the factored output layers of treeout.h: the two-level
 * class softmax and the learned tree softmax, forward, backward, the full
 * distribution, and the learning of the tree.
 *
 * Computation.  Positions are bucketed by the node their target's path
 * crosses at each depth (a stable counting sort), so every node (and
 * every group) of the batch is one GEMM of its positions' hidden states
 * with its few parameter rows: P x H times H x M for a node, P x H times
 * H x |group| for a group, whose word rows are gathered once per batch.
 * The backward pass is two more GEMMs per node and the rows' gradients
 * scattered back.
 *
 * Learning the tree (Jernite, Choromanska & Sontag 2017, "Simultaneous
 * Learning of Trees and Representations for Extreme Classification and
 * Density Estimation"; Jernite's thesis, chapter 3).  The paper learns
 * the tree online along with the representations: its nodes' classifiers
 * are trained by gradient as here, and every so often the labels are
 * re-assigned to the leaves, top-down, greedily, under well-formedness
 * (capacity) constraints, by a per-node objective computed from the
 * current classifiers' outputs on recent examples.  What this file does:
 * at every internal node n, from the root down, for the samples (h, y)
 * whose word y is (now) below n, the current classifier's log-probability
 * of each child j; each word i is scored by the mean, over its samples,
 * of log p_n(j | h): the log-likelihood the node would give it in child
 * j.  Words with samples are taken by decreasing number of samples, each
 * put in its best child that still has room (a child of depth d+1 holds
 * cap * M^(D-2-d) words); words without samples keep their child when it
 * has room, else go to the child with the most room.  Where it departs
 * from the paper: the paper's node objective J_n is a balance/purity
 * criterion, sum_j sum_i q_i |p_j - p_j|i| (the multi-way form of
 * Choromanska & Langford's LOM-tree objective), and its density
 * estimation variant ties it to the log-likelihood; we score children
 * with the log-likelihood directly and get the balance from the capacity
 * bound alone.  The samples come from the training batches since the
 * previous re-assignment (net.c keeps a reservoir); a word's output row
 * (Ww) moves with it, the nodes' rows stay with the nodes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "treeout.h"

#define MAX_DEPTH 8

static void powers(const llr_tree *t, int64_t *pw)
{
	pw[0] = 1;
	for (int k = 1; k <= t->depth; k++)
		pw[k] = pw[k - 1] * t->arity;
}

/* First node number of depth d. */
static int32_t first_of(const int64_t *pw, int M, int d)
{
	return (int32_t)((pw[d] - 1) / (M - 1));
}

int llr_tree_init(llr_tree *t, int32_t V, int depth, int arity, int32_t cap, llr_err *err)
{
	memset(t, 0, sizeof *t);
	if (V < 1 || depth < 2 || depth > MAX_DEPTH || arity < 2 || cap < 0)
		return llr_err_set(err, LLR_EINVAL, "tree: V %d, depth %d, arity %d, capacity %d: need V >= 1, depth 2 to %d, arity >= 2", V, depth, arity, cap, MAX_DEPTH);
	int64_t g = 1;
	for (int d = 1; d < depth; d++) {
		g *= arity;
		if (g > INT32_MAX / arity / 2)
			return llr_err_set(err, LLR_ERANGE, "tree: %d^%d groups is too many", arity, depth - 1);
	}
	if (cap > 0 && g * cap < V)
		return llr_err_set(err, LLR_EINVAL, "tree: %lld groups of %d words cannot hold %d words", (long long)g, cap, V);
	t->V = V;
	t->depth = depth;
	t->arity = arity;
	t->groups = (int32_t)g;
	t->nodes = (int32_t)((g - 1) / (arity - 1));
	t->cap = cap;
	t->group = llr_calloc((size_t)V, sizeof *t->group);
	t->gstart = llr_calloc((size_t)g + 1, sizeof *t->gstart);
	t->gword = llr_calloc((size_t)V, sizeof *t->gword);
	t->gpos = llr_calloc((size_t)V, sizeof *t->gpos);
	t->below = llr_calloc((size_t)t->nodes * arity, sizeof *t->below);
	if (!t->group || !t->gstart || !t->gword || !t->gpos || !t->below) {
		llr_tree_free(t);
		return llr_err_set(err, LLR_ENOMEM, "tree: out of memory");
	}
	return LLR_OK;
}

void llr_tree_free(llr_tree *t)
{
	free(t->group);
	free(t->gstart);
	free(t->gword);
	free(t->gpos);
	free(t->below);
	memset(t, 0, sizeof *t);
}

int llr_tree_index(llr_tree *t, llr_err *err)
{
	int32_t G = t->groups, M = t->arity, D = t->depth;
	int64_t pw[MAX_DEPTH + 1];
	powers(t, pw);
	memset(t->gstart, 0, ((size_t)G + 1) * sizeof *t->gstart);
	for (int32_t w = 0; w < t->V; w++) {
		int32_t g = t->group[w];
		if (g < 0 || g >= G)
			return llr_err_set(err, LLR_EFORMAT, "tree: word %d in group %d, not in [0, %d)", w, g, G);
		t->gstart[g + 1]++;
	}
	t->maxk = 0;
	for (int32_t g = 0; g < G; g++) {
		int32_t k = t->gstart[g + 1];
		if (t->cap > 0 && k > t->cap)
			return llr_err_set(err, LLR_EFORMAT, "tree: group %d holds %d words, more than its capacity %d", g, k, t->cap);
		if (k > t->maxk)
			t->maxk = k;
		t->gstart[g + 1] += t->gstart[g];
	}
	memset(t->below, 0, (size_t)t->nodes * M * sizeof *t->below);
	/* fill in ascending word order: a cursor per group */
	int32_t *cur = malloc((size_t)G * sizeof *cur);
	if (!cur)
		return llr_err_set(err, LLR_ENOMEM, "tree: out of memory");
	memcpy(cur, t->gstart, (size_t)G * sizeof *cur);
	for (int32_t w = 0; w < t->V; w++) {
		int32_t g = t->group[w];
		t->gpos[w] = cur[g] - t->gstart[g];
		t->gword[cur[g]++] = w;
	}
	free(cur);
	for (int32_t g = 0; g < G; g++) {
		int32_t k = t->gstart[g + 1] - t->gstart[g];
		if (!k)
			continue;
		for (int d = 0; d < D - 1; d++) {
			int32_t n = first_of(pw, M, d) + (int32_t)(g / pw[D - 1 - d]);
			int32_t j = (int32_t)((g / pw[D - 2 - d]) % M);
			t->below[(size_t)n * M + j] += k;
		}
	}
	return LLR_OK;
}

typedef struct wc {
	int64_t count;
	int32_t word;
} wc;

/* Count descending, ties by id. */
static int by_count(const void *a, const void *b)
{
	const wc *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->word > y->word) - (x->word < y->word);
}

/* ord[0..V): words by decreasing count (ids in order when count is NULL:
 * they are already in frequency order); NULL when out of memory, and the
 * callers then take the ids in order. */
static int32_t *freq_order(int32_t V, const int64_t *count)
{
	int32_t *ord = malloc((size_t)V * sizeof *ord);
	wc *k = count ? malloc((size_t)V * sizeof *k) : NULL;
	if (!ord || (count && !k)) {
		free(ord);
		free(k);
		return NULL;
	}
	for (int32_t w = 0; w < V; w++)
		ord[w] = w;
	if (count) {
		for (int32_t w = 0; w < V; w++)
			k[w] = (wc){count[w], w};
		qsort(k, (size_t)V, sizeof *k, by_count);
		for (int32_t w = 0; w < V; w++)
			ord[w] = k[w].word;
		free(k);
	}
	return ord;
}

void llr_tree_freq_classes(int32_t V, const int64_t *count, int C, int32_t *group)
{
	int32_t *ord = freq_order(V, count);
	double total = 0;
	for (int32_t w = 0; w < V; w++)
		total += count ? (double)count[w] : 1.0;
	double cum = 0;
	int a = 0;
	for (int32_t i = 0; i < V; i++) {
		int32_t w = ord ? ord[i] : i;
		cum += total > 0 ? (count ? (double)count[w] : 1.0) / total : 0.0;
		group[w] = a;
		if (cum > (double)(a + 1) / C && a < C - 1)
			a++;
	}
	free(ord);
}

void llr_tree_freq_blocks(int32_t V, const int64_t *count, int32_t cap, int32_t *group)
{
	int32_t *ord = freq_order(V, count);
	for (int32_t i = 0; i < V; i++)
		group[ord ? ord[i] : i] = i / cap;
	free(ord);
}

/* ----------------------------------------------------------- scratch */

void llr_tree_ws_free(llr_tree_ws *ws)
{
	free(ws->key);
	free(ws->idx);
	free(ws->cnt);
	free(ws->hg);
	free(ws->dhg);
	free(ws->L);
	free(ws->wg);
	free(ws->lp);
	memset(ws, 0, sizeof *ws);
}

static int growf(float **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return LLR_OK;
	size_t c = n + n / 2;
	float *q = llr_malloc(c * sizeof *q);
	if (!q)
		return LLR_ENOMEM;
	free(*p);
	*p = q;
	*cap = c;
	return LLR_OK;
}

static int ws_positions(llr_tree_ws *ws, size_t N, size_t keys, int H)
{
	if (N > ws->n_cap) {
		free(ws->key);
		free(ws->idx);
		free(ws->lp);
		ws->n_cap = N + N / 2;
		ws->key = llr_malloc(ws->n_cap * sizeof *ws->key);
		ws->idx = llr_malloc(ws->n_cap * sizeof *ws->idx);
		ws->lp = llr_malloc(ws->n_cap * sizeof *ws->lp);
		if (!ws->key || !ws->idx || !ws->lp) {
			ws->n_cap = 0;
			return LLR_ENOMEM;
		}
	}
	if (keys + 1 > ws->k_cap) {
		free(ws->cnt);
		ws->k_cap = keys + 1;
		if (!(ws->cnt = llr_malloc(ws->k_cap * sizeof *ws->cnt))) {
			ws->k_cap = 0;
			return LLR_ENOMEM;
		}
	}
	if (growf(&ws->hg, &ws->h_cap, N * (size_t)H) < 0)
		return LLR_ENOMEM;
	return growf(&ws->dhg, &ws->dh_cap, N * (size_t)H);
}

/* Stable bucket sort of positions by key (keys < 0 dropped): positions of
 * key k are idx[cnt[k] .. cnt[k+1]). */
static void bucket(llr_tree_ws *ws, size_t N, int32_t nk)
{
	int32_t *cnt = ws->cnt;
	memset(cnt, 0, ((size_t)nk + 1) * sizeof *cnt);
	for (size_t n = 0; n < N; n++)
		if (ws->key[n] >= 0)
			cnt[ws->key[n] + 1]++;
	for (int32_t k = 0; k < nk; k++)
		cnt[k + 1] += cnt[k];
	for (size_t n = 0; n < N; n++)
		if (ws->key[n] >= 0)
			ws->idx[cnt[ws->key[n]]++] = (int32_t)n;
	for (int32_t k = nk; k > 0; k--)
		cnt[k] = cnt[k - 1];
	cnt[0] = 0;
}

/* ----------------------------------------------------- forward/backward */

/* Row-wise log-softmax pieces of L (P x K): for each row p the target
 * column tg[p] gives lp += L[tg] - lse; with grad, L becomes
 * softmax - onehot(tg). */
static void softmax_rows(float *L, int P, int K, const int32_t *tg, double *lp, int grad)
{
	for (int p = 0; p < P; p++) {
		float *l = L + (size_t)p * K;
		float m = -INFINITY;
		for (int j = 0; j < K; j++)
			m = l[j] > m ? l[j] : m;
		double s = 0;
		for (int j = 0; j < K; j++)
			s += exp((double)l[j] - m);
		double lse = m + log(s);
		lp[p] += (double)l[tg[p]] - lse;
		if (grad) {
			for (int j = 0; j < K; j++)
				l[j] = (float)exp((double)l[j] - lse);
			l[tg[p]] -= 1.0f;
		}
	}
}

int llr_tree_run(const llr_tree_io *io, llr_tree_ws *ws, int N, const float *Hs, const int32_t *target, double *nll, float *logp_t, float *dH)
{
	const llr_tree *t = io->t;
	int H = io->H, M = t->arity, D = t->depth;
	int64_t pw[MAX_DEPTH + 1];
	powers(t, pw);
	int grad = dH != NULL;
	if (ws_positions(ws, (size_t)N, (size_t)t->groups, H) < 0)
		return LLR_ENOMEM;
	if (grad)
		memset(dH, 0, (size_t)N * H * sizeof *dH);
	double *lp = ws->lp;
	for (int n = 0; n < N; n++)
		lp[n] = 0.0;
	int32_t *tgl = llr_malloc(((size_t)N + 1) * sizeof *tgl);
	double *lpl = llr_malloc(((size_t)N + 1) * sizeof *lpl);
	if (!tgl || !lpl) {
		free(tgl);
		free(lpl);
		return LLR_ENOMEM;
	}
	int rc = LLR_OK;
	for (int d = 0; d < D && rc == LLR_OK; d++) {
		int last = d == D - 1;
		int32_t nk = last ? t->groups : (int32_t)pw[d];
		for (int n = 0; n < N; n++)
			ws->key[n] = target[n] < 0 ? -1 : (int32_t)(t->group[target[n]] / pw[D - 1 - d]);
		bucket(ws, (size_t)N, nk);
		for (int32_t k = 0; k < nk; k++) {
			int P = ws->cnt[k + 1] - ws->cnt[k];
			if (!P)
				continue;
			const int32_t *pos = ws->idx + ws->cnt[k];
			for (int p = 0; p < P; p++)
				memcpy(ws->hg + (size_t)p * H, Hs + (size_t)pos[p] * H, (size_t)H * sizeof(float));
			int K;
			const float *Wr, *br = NULL;
			int32_t node = 0;
			if (!last) {
				node = first_of(pw, M, d) + k;
				K = M;
				Wr = io->Wn + (size_t)node * M * H;
				br = io->bn + (size_t)node * M;
			} else {
				K = t->gstart[k + 1] - t->gstart[k];
				if (growf(&ws->wg, &ws->w_cap, (size_t)K * H) < 0) {
					rc = LLR_ENOMEM;
					break;
				}
				for (int j = 0; j < K; j++)
					memcpy(ws->wg + (size_t)j * H, io->Ww + (size_t)t->gword[t->gstart[k] + j] * H, (size_t)H * sizeof(float));
				Wr = ws->wg;
			}
			if (growf(&ws->L, &ws->l_cap, (size_t)P * K) < 0) {
				rc = LLR_ENOMEM;
				break;
			}
			float *L = ws->L;
			llr_gemm(0, 1, P, K, H, 1.0f, ws->hg, H, Wr, H, 0.0f, L, K);
			for (int p = 0; p < P; p++) {
				float *l = L + (size_t)p * K;
				int32_t g = t->group[target[pos[p]]];
				if (!last) {
					for (int j = 0; j < K; j++)
						l[j] = t->below[(size_t)node * M + j] ? l[j] + br[j] : -INFINITY;
					tgl[p] = (int32_t)((g / pw[D - 2 - d]) % M);
				} else {
					const int32_t *ws_ = t->gword + t->gstart[k];
					for (int j = 0; j < K; j++)
						l[j] += io->bw[ws_[j]];
					tgl[p] = t->gpos[target[pos[p]]];
				}
				lpl[p] = 0.0;
			}
			softmax_rows(L, P, K, tgl, lpl, grad);
			for (int p = 0; p < P; p++)
				lp[pos[p]] += lpl[p];
			if (!grad)
				continue;
			/* dhg = dL Wr, then the rows' gradients */
			llr_gemm(0, 0, P, H, K, 1.0f, L, K, Wr, H, 0.0f, ws->dhg, H);
			if (!last) {
				llr_gemm(1, 0, K, H, P, 1.0f, L, K, ws->hg, H, 1.0f, io->dWn + (size_t)node * M * H, H);
				float *db = io->dbn + (size_t)node * M;
				for (int p = 0; p < P; p++)
					for (int j = 0; j < K; j++)
						db[j] += L[(size_t)p * K + j];
			} else {
				llr_gemm(1, 0, K, H, P, 1.0f, L, K, ws->hg, H, 0.0f, ws->wg, H);
				const int32_t *gw = t->gword + t->gstart[k];
				for (int j = 0; j < K; j++) {
					float *dw = io->dWw + (size_t)gw[j] * H;
					const float *s = ws->wg + (size_t)j * H;
					for (int e = 0; e < H; e++)
						dw[e] += s[e];
					double b = 0;
					for (int p = 0; p < P; p++)
						b += L[(size_t)p * K + j];
					io->dbw[gw[j]] += (float)b;
				}
			}
			for (int p = 0; p < P; p++) {
				float *dh = dH + (size_t)pos[p] * H;
				const float *s = ws->dhg + (size_t)p * H;
				for (int e = 0; e < H; e++)
					dh[e] += s[e];
			}
		}
	}
	free(tgl);
	free(lpl);
	if (rc < 0)
		return rc;
	double tot = 0;
	for (int n = 0; n < N; n++) {
		if (target[n] < 0)
			continue;
		tot -= lp[n];
		if (!isfinite(lp[n]))
			rc = LLR_ENAN;
	}
	if (logp_t)
		for (int n = 0; n < N; n++)
			logp_t[n] = target[n] < 0 ? 0.0f : (float)lp[n];
	if (nll)
		*nll = tot;
	return rc;
}

int llr_tree_all(const llr_tree_io *io, llr_tree_ws *ws, int N, const float *Hs, float *logp_all)
{
	const llr_tree *t = io->t;
	int H = io->H, M = t->arity, D = t->depth;
	int32_t V = t->V, R = t->nodes * M;
	int64_t pw[MAX_DEPTH + 1];
	powers(t, pw);
	if (growf(&ws->L, &ws->l_cap, (size_t)N * R) < 0)
		return LLR_ENOMEM;
	float *Ln = ws->L;
	llr_gemm(0, 1, N, V, H, 1.0f, Hs, H, io->Ww, H, 0.0f, logp_all, V);
	llr_gemm(0, 1, N, R, H, 1.0f, Hs, H, io->Wn, H, 0.0f, Ln, R);
	for (int n = 0; n < N; n++) {
		float *ln = Ln + (size_t)n * R;
		for (int32_t node = 0; node < t->nodes; node++) {
			float *l = ln + (size_t)node * M;
			const int32_t *bl = t->below + (size_t)node * M;
			const float *b = io->bn + (size_t)node * M;
			float m = -INFINITY;
			for (int j = 0; j < M; j++) {
				l[j] = bl[j] ? l[j] + b[j] : -INFINITY;
				m = l[j] > m ? l[j] : m;
			}
			if (m == -INFINITY)
				continue; /* a node with no words below */
			double s = 0;
			for (int j = 0; j < M; j++)
				s += exp((double)l[j] - m);
			float lse = (float)(m + log(s));
			for (int j = 0; j < M; j++)
				l[j] -= lse;
		}
		float *out = logp_all + (size_t)n * V;
		for (int32_t w = 0; w < V; w++)
			out[w] += io->bw[w];
		for (int32_t g = 0; g < t->groups; g++) {
			int32_t a = t->gstart[g], K = t->gstart[g + 1] - a;
			if (!K)
				continue;
			double lg = 0;
			for (int d = 0; d < D - 1; d++) {
				int32_t node = first_of(pw, M, d) + (int32_t)(g / pw[D - 1 - d]);
				lg += ln[(size_t)node * M + (g / pw[D - 2 - d]) % M];
			}
			const int32_t *gw = t->gword + a;
			float m = -INFINITY;
			for (int j = 0; j < K; j++)
				m = out[gw[j]] > m ? out[gw[j]] : m;
			double s = 0;
			for (int j = 0; j < K; j++)
				s += exp((double)out[gw[j]] - m);
			double off = lg - (m + log(s));
			for (int j = 0; j < K; j++)
				out[gw[j]] = (float)(out[gw[j]] + off);
		}
	}
	return LLR_OK;
}

/* ------------------------------------------------------------ learning */

typedef struct lab {
	int32_t word, n;
} lab;

static int by_samples(const void *a, const void *b)
{
	const lab *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return (x->word > y->word) - (x->word < y->word);
}

int llr_tree_learn(llr_tree *t, const float *Wn, const float *bn, int H, int S, const float *Hs, const int32_t *y, int32_t *moved, llr_err *err)
{
	int M = t->arity, D = t->depth;
	int32_t V = t->V;
	int64_t pw[MAX_DEPTH + 1];
	powers(t, pw);
	if (t->cap <= 0)
		return llr_err_set(err, LLR_EINVAL, "tree: learning needs a bounded group size");
	int32_t *ng = malloc((size_t)V * sizeof *ng);
	int32_t *slot = malloc((size_t)V * sizeof *slot);       /* word -> its label index at a node, -1 */
	int32_t *wkey = malloc((size_t)V * sizeof *wkey);       /* word -> prefix */
	int32_t *word_at = malloc((size_t)V * sizeof *word_at); /* words bucketed by prefix */
	int32_t *skey = malloc(((size_t)S + 1) * sizeof *skey);
	int32_t *sord = malloc(((size_t)S + 1) * sizeof *sord);
	int64_t *rem = malloc((size_t)M * sizeof *rem);
	lab *labs = malloc((size_t)V * sizeof *labs);
	float *hq = malloc(((size_t)S + 1) * H * sizeof *hq);
	float *q = malloc(((size_t)S + 1) * M * sizeof *q);
	double *acc = malloc(((size_t)S + 1) * M * sizeof *acc);
	int64_t nodes_d = 1;
	int32_t *wcnt = NULL, *scnt = NULL;
	int rc = LLR_OK;
	if (!ng || !slot || !wkey || !word_at || !skey || !sord || !rem || !labs || !hq || !q || !acc) {
		rc = llr_err_set(err, LLR_ENOMEM, "tree: out of memory learning the tree");
		goto done;
	}
	memcpy(ng, t->group, (size_t)V * sizeof *ng);
	for (int32_t w = 0; w < V; w++)
		slot[w] = -1;
	for (int d = 0; d < D - 1; d++, nodes_d *= M) {
		int64_t below = pw[D - 1 - d], sub = pw[D - 2 - d]; /* groups under a node of depth d, a child */
		int64_t capc = (int64_t)t->cap * sub;               /* words a child holds */
		free(wcnt);
		free(scnt);
		wcnt = calloc((size_t)nodes_d + 1, sizeof *wcnt);
		scnt = calloc((size_t)nodes_d + 1, sizeof *scnt);
		if (!wcnt || !scnt) {
			rc = llr_err_set(err, LLR_ENOMEM, "tree: out of memory learning the tree");
			goto done;
		}
		/* words and samples by the node of depth d above them */
		for (int32_t w = 0; w < V; w++) {
			wkey[w] = (int32_t)(ng[w] / below);
			wcnt[wkey[w] + 1]++;
		}
		for (int s = 0; s < S; s++) {
			skey[s] = (int32_t)(ng[y[s]] / below);
			scnt[skey[s] + 1]++;
		}
		for (int64_t k = 0; k < nodes_d; k++) {
			wcnt[k + 1] += wcnt[k];
			scnt[k + 1] += scnt[k];
		}
		for (int32_t w = 0; w < V; w++)
			word_at[wcnt[wkey[w]]++] = w;
		for (int s = 0; s < S; s++)
			sord[scnt[skey[s]]++] = s;
		for (int64_t k = nodes_d; k > 0; k--) {
			wcnt[k] = wcnt[k - 1];
			scnt[k] = scnt[k - 1];
		}
		wcnt[0] = scnt[0] = 0;
		for (int64_t k = 0; k < nodes_d; k++) {
			int32_t nw = wcnt[k + 1] - wcnt[k], ns = scnt[k + 1] - scnt[k];
			if (!nw)
				continue;
			const int32_t *words = word_at + wcnt[k], *smp = sord + scnt[k];
			int32_t node = first_of(pw, M, d) + (int32_t)k;
			/* the node's log-probabilities of its children for its samples */
			int nl = 0;
			if (ns) {
				for (int i = 0; i < ns; i++)
					memcpy(hq + (size_t)i * H, Hs + (size_t)smp[i] * H, (size_t)H * sizeof *hq);
				llr_gemm(0, 1, ns, M, H, 1.0f, hq, H, Wn + (size_t)node * M * H, H, 0.0f, q, M);
				for (int i = 0; i < ns; i++) {
					float *l = q + (size_t)i * M;
					float m = -INFINITY;
					for (int j = 0; j < M; j++) {
						l[j] += bn[(size_t)node * M + j];
						m = l[j] > m ? l[j] : m;
					}
					double z = 0;
					for (int j = 0; j < M; j++)
						z += exp((double)l[j] - m);
					float lse = (float)(m + log(z));
					int32_t w = y[smp[i]];
					if (slot[w] < 0) {
						slot[w] = nl;
						labs[nl] = (lab){w, 0};
						memset(acc + (size_t)nl * M, 0, (size_t)M * sizeof *acc);
						nl++;
					}
					labs[slot[w]].n++;
					double *a = acc + (size_t)slot[w] * M;
					for (int j = 0; j < M; j++)
						a[j] += (double)l[j] - lse;
				}
			}
			/* the order: words with samples by count (their acc rows
			 * follow the sort through `slot`), then the others */
			int32_t nseen = nl;
			lab *order = labs; /* the seen words; slot[] keeps their acc rows */
			qsort(order, (size_t)nl, sizeof *order, by_samples);
			for (int j = 0; j < M; j++)
				rem[j] = capc;
			int64_t base = k * M; /* prefix of depth d+1 of child 0 */
			for (int32_t i = 0; i < nseen; i++) {
				int32_t w = order[i].word;
				const double *a = acc + (size_t)slot[w] * M;
				int best = -1;
				double bs = -INFINITY;
				for (int j = 0; j < M; j++)
					if (rem[j] > 0 && (best < 0 || a[j] > bs))
						best = j, bs = a[j];
				rem[best]--;
				ng[w] = (int32_t)((base + best) * sub + ng[w] % sub);
			}
			for (int32_t i = 0; i < nw; i++) {
				int32_t w = words[i];
				if (slot[w] >= 0)
					continue;
				int j = (int)((ng[w] / sub) % M);
				if (rem[j] <= 0) {
					j = 0;
					for (int c = 1; c < M; c++)
						if (rem[c] > rem[j])
							j = c;
				}
				rem[j]--;
				ng[w] = (int32_t)((base + j) * sub + ng[w] % sub);
			}
			for (int32_t i = 0; i < nseen; i++)
				slot[order[i].word] = -1;
		}
	}
	/* the last level: a group keeps at most cap words (the capacities
	 * above guarantee it); the words' order within it is by id */
	int32_t nmoved = 0;
	for (int32_t w = 0; w < V; w++)
		nmoved += ng[w] != t->group[w];
	int32_t *old = t->group;
	t->group = ng;
	ng = old;
	if ((rc = llr_tree_index(t, err)) < 0) {
		/* cannot happen: restore the old tree */
		old = t->group;
		t->group = ng;
		ng = old;
		llr_tree_index(t, NULL);
	}
	if (moved)
		*moved = nmoved;
done:
	free(ng);
	free(slot);
	free(wkey);
	free(word_at);
	free(skey);
	free(sord);
	free(rem);
	free(labs);
	free(hq);
	free(q);
	free(acc);
	free(wcnt);
	free(scnt);
	return rc;
}
