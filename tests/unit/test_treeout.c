/*
 * test_treeout.c - the factored outputs (treeout.c): the tree's checks
 * and indexes, exact normalisation (the probabilities of all V words sum
 * to 1 at every position), the training pass against the full
 * distribution, finite-difference gradient checks of the tree softmax
 * (depths 2 and 3) and of the frequency-binned class softmax, and the
 * learning of the tree on a problem whose best tree is known.
 */
#include "llrnn.h"
#include "treeout.h"
#include "test.h"
#include "gradcheck.h"

static void test_tree_index(void)
{
	llr_tree t;
	llr_err e = {0};
	CHECK(llr_tree_init(&t, 10, 2, 3, 3, &e) == LLR_EINVAL); /* 3 groups of 3 < 10 words */
	CHECK(strstr(e.msg, "cannot hold") != NULL);
	CHECK(llr_tree_init(&t, 10, 1, 3, 4, &e) == LLR_EINVAL);
	CHECK(llr_tree_init(&t, 10, 3, 2, 4, &e) == LLR_OK);
	CHECK(t.groups == 4 && t.nodes == 3);
	int32_t g[10] = {0, 0, 1, 3, 3, 3, 1, 0, 1, 3};
	memcpy(t.group, g, sizeof g);
	CHECK(llr_tree_index(&t, &e) == LLR_OK);
	CHECK(t.maxk == 4);
	/* group 2 is empty: node 2 (prefix 1) has one live child */
	CHECK(t.below[0] == 6 && t.below[1] == 4);
	CHECK(t.below[2 * 2 + 0] == 0 && t.below[2 * 2 + 1] == 4);
	/* words by group, ascending, and their places */
	CHECK(t.gstart[4] - t.gstart[3] == 4 && t.gword[t.gstart[3]] == 3 && t.gpos[9] == 3);
	CHECK(t.gword[t.gstart[0] + 2] == 7 && t.gpos[7] == 2);
	t.group[9] = 2;
	CHECK(llr_tree_index(&t, &e) == LLR_OK);
	t.group[9] = 4;
	CHECK(llr_tree_index(&t, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "word 9") != NULL);
	t.group[9] = 0;
	t.group[6] = 0; /* five words in group 0 */
	CHECK(llr_tree_index(&t, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "capacity") != NULL);
	llr_tree_free(&t);
}

/* ----------------------------------------------------- loss and gradients */

typedef struct tree_ctx {
	llr_tree_io io;
	llr_tree_ws ws;
	int N;
	float *Hs;
	const int32_t *tg;
} tree_ctx;

static double tree_loss(void *p)
{
	tree_ctx *c = p;
	double nll = 0;
	llr_tree_run(&c->io, &c->ws, c->N, c->Hs, c->tg, &nll, NULL, NULL);
	return nll;
}

/* Random parameters and positions over tree t; checks normalisation,
 * the pass against the full distribution, and every gradient. */
static void tree_case(const char *what, llr_tree *t, uint64_t seed)
{
	llr_rng r;
	llr_rng_seed(&r, seed);
	int H = 6, N = 40, V = t->V, R = t->nodes * t->arity;
	float *Wn = malloc((size_t)R * H * sizeof *Wn), *bn = malloc((size_t)R * sizeof *bn);
	float *Ww = malloc((size_t)V * H * sizeof *Ww), *bw = malloc((size_t)V * sizeof *bw);
	float *dWn = calloc((size_t)R * H, sizeof *dWn), *dbn = calloc((size_t)R, sizeof *dbn);
	float *dWw = calloc((size_t)V * H, sizeof *dWw), *dbw = calloc((size_t)V, sizeof *dbw);
	float *Hs = malloc((size_t)N * H * sizeof *Hs), *dH = malloc((size_t)N * H * sizeof *dH);
	float *all = malloc((size_t)N * V * sizeof *all), lt[40];
	int32_t tg[40];
	fill(Wn, (size_t)R * H, &r, 0.8), fill(bn, (size_t)R, &r, 0.5);
	fill(Ww, (size_t)V * H, &r, 0.8), fill(bw, (size_t)V, &r, 0.5);
	fill(Hs, (size_t)N * H, &r, 1.0);
	for (int n = 0; n < N; n++)
		tg[n] = n % 9 == 4 ? -1 : (int32_t)llr_rng_below(&r, (uint64_t)V);
	tree_ctx c = {{t, H, Wn, bn, Ww, bw, dWn, dbn, dWw, dbw}, {0}, N, Hs, tg};
	double nll = 0, nll2 = 0;
	CHECK(llr_tree_run(&c.io, &c.ws, N, Hs, tg, &nll, lt, dH) == LLR_OK);
	/* the scoring pass: the same numbers without gradients */
	CHECK(llr_tree_run(&c.io, &c.ws, N, Hs, tg, &nll2, NULL, NULL) == LLR_OK);
	CHECK(nll == nll2);
	/* the full distribution: normalised, and it holds the targets' log p */
	CHECK(llr_tree_all(&c.io, &c.ws, N, Hs, all) == LLR_OK);
	double worst = 0, ref = 0, we = 0;
	for (int n = 0; n < N; n++) {
		double s = 0;
		for (int v = 0; v < V; v++)
			s += exp((double)all[(size_t)n * V + v]);
		worst = fmax(worst, fabs(s - 1));
		if (tg[n] >= 0) {
			ref -= all[(size_t)n * V + tg[n]];
			we = fmax(we, fabs(lt[n] - all[(size_t)n * V + tg[n]]));
		} else {
			CHECK(lt[n] == 0.0f);
		}
	}
	printf("#   %s: |sum p - 1| <= %.3g, |log p(target) - full| <= %.3g\n", what, worst, we);
	CHECK(worst < 1e-5);
	CHECK(we < 1e-5);
	CHECK_NEAR(nll, ref, 1e-5 * fabs(ref));
	char nm[96];
	struct {
		const char *name;
		float *p, *g;
		size_t n;
	} ts[] = {{"Wn", Wn, dWn, (size_t)R * H}, {"bn", bn, dbn, (size_t)R}, {"Ww", Ww, dWw, (size_t)V * H}, {"bw", bw, dbw, (size_t)V}, {"h", Hs, dH, (size_t)N * H}};
	for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
		snprintf(nm, sizeof nm, "%s %s", what, ts[i].name);
		CHECK(gradcheck(nm, ts[i].p, ts[i].g, ts[i].n, tree_loss, &c, 300, &r) == 0);
		CHECK(g_max_analytic > 5 * ATOL);
	}
	/* a wrong component is caught */
	dWw[(size_t)tg[0] * H + 1] += 0.1f;
	snprintf(nm, sizeof nm, "%s Ww, corrupted (expect 1 bad)", what);
	CHECK(gradcheck(nm, Ww + (size_t)tg[0] * H, dWw + (size_t)tg[0] * H, (size_t)H, tree_loss, &c, (size_t)H, &r) == 1);
	llr_tree_ws_free(&c.ws);
	free(Wn), free(bn), free(Ww), free(bw), free(dWn), free(dbn), free(dWw), free(dbw);
	free(Hs), free(dH), free(all);
}

/* A random assignment within capacity that leaves group `empty` empty. */
static void random_groups(llr_tree *t, int32_t empty, llr_rng *r)
{
	int32_t *load = calloc((size_t)t->groups, sizeof *load);
	for (int32_t w = 0; w < t->V; w++) {
		int32_t g;
		do
			g = (int32_t)llr_rng_below(r, (uint64_t)t->groups);
		while (g == empty || (t->cap && load[g] >= t->cap));
		load[g]++;
		t->group[w] = g;
	}
	free(load);
}

static void test_tree_grad(void)
{
	llr_rng r;
	llr_rng_seed(&r, 71);
	llr_tree t;
	/* depth 2: 5 groups of at most 6 words, group 3 empty */
	CHECK(llr_tree_init(&t, 23, 2, 5, 6, NULL) == LLR_OK);
	random_groups(&t, 3, &r);
	CHECK(llr_tree_index(&t, NULL) == LLR_OK);
	tree_case("tree D=2", &t, 72);
	llr_tree_free(&t);
	/* depth 3: 9 groups of at most 3 words, group 4 empty (so node 2 has
	 * a dead child), a group of one word somewhere likely */
	CHECK(llr_tree_init(&t, 20, 3, 3, 3, NULL) == LLR_OK);
	random_groups(&t, 4, &r);
	CHECK(llr_tree_index(&t, NULL) == LLR_OK);
	tree_case("tree D=3", &t, 73);
	llr_tree_free(&t);
}

static void test_classes(void)
{
	enum { V = 30,
	       C = 5 };
	int64_t cnt[V];
	double tot = 0;
	for (int v = 0; v < V; v++) {
		cnt[v] = v == 17 ? 0 : (int64_t)(1000.0 / (1 + ((v * 7) % V))); /* Zipf, shuffled ids */
		tot += (double)cnt[v];
	}
	llr_tree t;
	CHECK(llr_tree_init(&t, V, 2, C, 0, NULL) == LLR_OK);
	llr_tree_freq_classes(V, cnt, C, t.group);
	CHECK(llr_tree_index(&t, NULL) == LLR_OK);
	/* the most frequent word alone carries more than 1/C of the mass:
	 * it is alone in class 0; classes follow frequency; an unseen word
	 * is in the last class */
	int32_t top = 0;
	for (int v = 1; v < V; v++)
		if (cnt[v] > cnt[top])
			top = v;
	CHECK(t.group[top] == 0 && t.gstart[1] - t.gstart[0] == 1);
	for (int v = 0; v < V; v++)
		for (int w = 0; w < V; w++)
			if (cnt[v] > cnt[w])
				CHECK(t.group[v] <= t.group[w]);
	CHECK(t.group[17] == C - 1);
	/* each class but the last reaches its share of the mass */
	double cum = 0;
	for (int g = 0; g < C - 1; g++) {
		for (int32_t k = t.gstart[g]; k < t.gstart[g + 1]; k++)
			cum += (double)cnt[t.gword[k]] / tot;
		CHECK(cum > (double)(g + 1) / C);
	}
	tree_case("classes", &t, 74);
	/* frequency blocks (the tree's start): cap words a group, by count */
	llr_tree b;
	CHECK(llr_tree_init(&b, V, 2, 4, 8, NULL) == LLR_OK);
	llr_tree_freq_blocks(V, cnt, 8, b.group);
	CHECK(llr_tree_index(&b, NULL) == LLR_OK);
	CHECK(b.group[top] == 0 && b.group[17] == 3 && b.gstart[1] == 8);
	llr_tree_free(&b);
	llr_tree_free(&t);
}

/* Learning: 12 words in 3 true clusters; the root's classifier already
 * separates the clusters (its child j answers to direction j of h); the
 * words start scrambled.  One re-assignment puts every word with samples
 * in its cluster's child, within capacity; a word without samples stays
 * where it was when there is room, else goes where there is most. */
static void test_tree_learn(void)
{
	enum { V = 12,
	       M = 3,
	       H = 4,
	       S = 300 };
	llr_tree t;
	CHECK(llr_tree_init(&t, V, 2, M, 4, NULL) == LLR_OK);
	int32_t scramble[V] = {2, 1, 0, 0, 2, 1, 1, 0, 2, 2, 0, 1};
	memcpy(t.group, scramble, sizeof scramble);
	CHECK(llr_tree_index(&t, NULL) == LLR_OK);
	float Wn[M * H] = {0}, bn[M] = {0}, Hs[S * H];
	for (int j = 0; j < M; j++)
		Wn[j * H + j] = 1.0f;
	int32_t y[S];
	llr_rng r;
	llr_rng_seed(&r, 75);
	/* word w's cluster is w % 3, except word 11: no samples */
	for (int s = 0; s < S; s++) {
		int32_t w = (int32_t)llr_rng_below(&r, V - 1);
		y[s] = w;
		for (int e = 0; e < H; e++)
			Hs[s * H + e] = (float)(0.3 * (2 * llr_rng_uniform(&r) - 1));
		Hs[s * H + w % 3] += 3.0f;
	}
	int32_t moved = -1;
	llr_err e = {0};
	CHECK(llr_tree_learn(&t, Wn, bn, H, S, Hs, y, &moved, &e) == LLR_OK);
	for (int w = 0; w < V - 1; w++)
		CHECK(t.group[w] == w % 3);
	CHECK(t.group[11] == 2); /* its group was full: the one with room */
	int same = 0;
	for (int w = 0; w < V; w++)
		same += t.group[w] == scramble[w];
	CHECK(moved == V - same && moved > 0);
	for (int g = 0; g < M; g++)
		CHECK(t.gstart[g + 1] - t.gstart[g] <= 4);
	/* again: nothing moves */
	CHECK(llr_tree_learn(&t, Wn, bn, H, S, Hs, y, &moved, &e) == LLR_OK);
	CHECK(moved == 0);
	/* capacity binds: 5 words want child 0, only 4 fit; the one with the
	 * fewest samples goes to its next best child */
	for (int s = 0; s < S; s++)
		if (y[s] == 1 && s % 2) {
			y[s] = 3;
			Hs[s * H + 1] -= 3.0f;
			Hs[s * H + 0] += 3.0f;
		}
	for (int s = 0; s < S; s++)
		if (y[s] == 1) {
			Hs[s * H + 1] -= 3.0f;
			Hs[s * H + 0] += 3.0f;
			Hs[s * H + 2] += 1.0f;
		}
	CHECK(llr_tree_learn(&t, Wn, bn, H, S, Hs, y, &moved, &e) == LLR_OK);
	int in0 = 0;
	for (int w = 0; w < V; w++)
		in0 += t.group[w] == 0;
	CHECK(in0 == 4);
	CHECK(t.group[1] == 2);
	/* a class tree (no capacity) cannot learn */
	llr_tree c;
	CHECK(llr_tree_init(&c, V, 2, M, 0, NULL) == LLR_OK);
	CHECK(llr_tree_index(&c, NULL) == LLR_OK);
	CHECK(llr_tree_learn(&c, Wn, bn, H, S, Hs, y, &moved, &e) == LLR_EINVAL);
	llr_tree_free(&c);
	llr_tree_free(&t);
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(4);
	RUN(test_tree_index);
	RUN(test_tree_grad);
	RUN(test_classes);
	RUN(test_tree_learn);
	DONE();
}
