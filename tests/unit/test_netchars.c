/*
 * test_netchars.c - the whole network with a character-aware input
 * (charin.c) and with the tree and class softmax outputs (nettree.c):
 * finite-difference gradient checks of every tensor of the integrated
 * net for the input kinds (chars, concatenated with and summed onto the
 * psi embedding) and the outputs (softmax, log-linear, tree, classes);
 * exact normalisation of the factored outputs in batch scoring and step
 * by step; unseen words spelled out; learning the tree; bad input.
 */
#include "llrnn.h"
#include "netx.h"
#include "test.h"
#include "gradcheck.h"

static const char *const vocab_words[] = {"</s>", "<unk>", "le", "chat", "chats", "mange", "la", "souris", "petit", "petite", "noir"};
enum { V = 11 };

static llr_strmap *vocab(void)
{
	llr_strmap *m = llr_strmap_new();
	for (int i = 0; i < V; i++)
		llr_strmap_add(m, vocab_words[i], strlen(vocab_words[i]));
	return m;
}

static llr_csr *rand_phi(int rows, int cols, llr_rng *r)
{
	return random_rows(rows, cols, 3, 1, 0, r);
}

typedef struct fx {
	llr_strmap *voc;
	llr_words *words;
	llr_csr *phi;
	llr_csr *psi; /* the input rows of the V words and the unseen one */
	float logb[V];
	llr_net *net;
	int32_t unseen; /* input id of a word outside the vocabulary */
} fx;

/* A small net: E = 5 (so that LLR_IN_SUM has 2 + 3 filters), H = 4. */
static int fx_init(fx *f, int input, int output, int layers, uint64_t seed)
{
	llr_rng r;
	llr_rng_seed(&r, seed);
	memset(f, 0, sizeof *f);
	f->voc = vocab();
	llr_err e = {0};
	f->words = llr_words_new(f->voc, NULL, 0, &e);
	CHECK(f->words != NULL);
	f->unseen = llr_words_add(f->words, "chatte", 6, &e);
	CHECK(f->unseen == V);
	int ll = output == LLR_OUT_LOGLINEAR;
	f->phi = rand_phi(V, 6, &r);
	/* the unseen word's input features: its own (log-linear) or <unk>'s */
	int cols = ll ? 6 : V;
	llr_csr_builder *pb = llr_csr_builder_new(cols);
	for (int v = 0; v <= V; v++) {
		int32_t k = ll ? (v < V ? f->phi->indptr[v + 1] - f->phi->indptr[v] : 1) : 1;
		const int32_t *c = ll && v < V ? f->phi->indices + f->phi->indptr[v] : NULL;
		int32_t one = ll ? 4 : v < V ? v
		                             : 1;
		float val = 1.0f;
		llr_csr_builder_row(pb, c ? c : &one, c ? f->phi->data + f->phi->indptr[v] : &val, (size_t)k, NULL);
	}
	f->psi = llr_csr_builder_finish(pb, NULL);
	for (int v = 0; v < V; v++)
		f->logb[v] = (float)log(0.02 + llr_rng_uniform(&r));
	int32_t ncp;
	llr_words_chars(f->words, &ncp);
	llr_net_config cf = {.vocab = V, .feat_out = ll ? 6 : 0, .feat_in = ll ? 6 : 0, .embed = 5, .hidden = 4, .layers = layers, .output = output, .input = input, .char_vocab = ncp, .char_embed = 3, .char_nw = 2, .char_width = {1, 3}, .char_filters = {2, 3}, .highway = 1, .tree_depth = output == LLR_OUT_TREE ? 3 : 0, .tree_arity = output == LLR_OUT_TREE ? 2 : output == LLR_OUT_CLASSES ? 3
	                                                                                                                                                                                                                                                                                                                                                                                              : 0,
	                     .tree_cap = output == LLR_OUT_TREE ? 4 : 0};
	f->net = llr_net_new(&cf, ll ? f->phi : NULL, NULL, ll ? f->logb : NULL, &e);
	if (!f->net) {
		printf("#   llr_net_new: %s\n", e.msg);
		return -1;
	}
	llr_net_set_words(f->net, f->words);
	llr_net_init(f->net, &r);
	size_t np;
	float *P = llr_net_params(f->net, &np);
	fill(P, np, &r, 0.5);
	return 0;
}

static void fx_free(fx *f)
{
	llr_net_free(f->net);
	llr_words_free(f->words);
	llr_csr_free(f->phi);
	llr_csr_free(f->psi);
	llr_strmap_free(f->voc);
}

typedef struct net_ctx {
	llr_net *net;
	llr_batch bt;
} net_ctx;

static double net_loss(void *p)
{
	net_ctx *c = p;
	double nll = 0;
	int64_t nt = 0;
	if (llr_net_train_step(c->net, &c->bt, NULL, &nll, &nt, NULL) != LLR_OK)
		return NAN;
	return nll;
}

enum { B = 2,
       T = 4 };
/* two sentences, <s> first; the second reads the unseen word at step 2 */
static void batch(const fx *f, int32_t *in, int32_t *tg)
{
	static const int32_t s0[T] = {LLR_BOS_ID, 2, 3, 5}, t0[T] = {2, 3, 5, 0};
	static const int32_t s1[T] = {LLR_BOS_ID, 6, -9, 0}, t1[T] = {6, 7, 0, -1};
	for (int t = 0; t < T; t++) {
		in[t * B] = s0[t];
		in[t * B + 1] = s1[t] == -9 ? f->unseen : s1[t];
		tg[t * B] = t0[t];
		tg[t * B + 1] = t1[t];
	}
}

static void grad_case(const char *what, int input, int output)
{
	fx f;
	if (fx_init(&f, input, output, 1, 31) < 0) {
		CHECK(0);
		return;
	}
	llr_rng r;
	llr_rng_seed(&r, 5);
	int32_t in[T * B], tg[T * B];
	batch(&f, in, tg);
	net_ctx c = {f.net, {.B = B, .T = T, .input = in, .target = tg, .psi = f.psi}};
	size_t np;
	float *P = llr_net_params(f.net, &np), *G = llr_net_grads(f.net, NULL);
	memset(G, 0, np * sizeof *G);
	CHECK(isfinite(net_loss(&c)));
	float *g = malloc(np * sizeof *g);
	memcpy(g, G, np * sizeof *g);
	g_eps = 1e-3; /* no step may cross a max-pooling or relu kink */
	for (size_t i = 0; i < llr_net_n_tensors(f.net); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_net_tensor_info(f.net, i, &name, &nd, sh, &off);
		size_t n = (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
		char nm[96];
		snprintf(nm, sizeof nm, "%s %s", what, name);
		CHECK(gradcheck(nm, P + off, g + off, n, net_loss, &c, n, &r) == 0);
		/* a gradient that is all zero would pass: it is not */
		if (!(g_max_analytic > ATOL))
			printf("#   %s: max |analytic| %.3g\n", nm, g_max_analytic);
		CHECK(g_max_analytic > ATOL);
	}
	/* negative control: one corrupted component is caught */
	g[np / 2] += 1.0f;
	g_quiet = 1;
	CHECK(gradcheck("corrupted (expect 1 bad)", P + np / 2, g + np / 2, 1, net_loss, &c, 1, &r) == 1);
	g_quiet = 0;
	g_eps = EPS;
	free(g);
	fx_free(&f);
}

static void test_grad_chars(void)
{
	grad_case("chars softmax", LLR_IN_CHARS, LLR_OUT_SOFTMAX);
	grad_case("chars+word loglinear", LLR_IN_CONCAT, LLR_OUT_LOGLINEAR);
}

static void test_grad_tree(void)
{
	grad_case("word tree", LLR_IN_WORD, LLR_OUT_TREE);
	grad_case("chars tree", LLR_IN_CHARS, LLR_OUT_TREE);
	grad_case("chars summed classes", LLR_IN_SUM, LLR_OUT_CLASSES);
}

/* Scoring with the factored outputs: the whole distribution sums to 1 at
 * every position, step by step and in a batch, and the two agree. */
static void norm_case(int input, int output)
{
	fx f;
	if (fx_init(&f, input, output, 2, 44) < 0) {
		CHECK(0);
		return;
	}
	int32_t in[T * B], tg[T * B];
	batch(&f, in, tg);
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg, .psi = f.psi};
	float lp[T * B];
	double ne = 1;
	llr_err e = {0};
	CHECK_OK(llr_net_score(f.net, &bt, lp, &ne, &e));
	CHECK(fabs(ne) < 1e-5);
	llr_net_state *s = llr_net_state_new(f.net, B);
	float all[B * V];
	for (int t = 0; t < T; t++) {
		CHECK_OK(llr_net_step(f.net, s, in + t * B, f.psi, all, &e));
		for (int b = 0; b < B; b++) {
			double z = 0;
			for (int x = 0; x < V; x++)
				z += exp((double)all[b * V + x]);
			CHECK_NEAR(z, 1.0, 1e-5);
			if (tg[t * B + b] >= 0)
				CHECK_NEAR(all[b * V + tg[t * B + b]], lp[t * B + b], 1e-4);
		}
	}
	llr_net_state_free(s);
	fx_free(&f);
}

static void test_normalised(void)
{
	norm_case(LLR_IN_CHARS, LLR_OUT_TREE);
	norm_case(LLR_IN_CONCAT, LLR_OUT_CLASSES);
	norm_case(LLR_IN_CHARS, LLR_OUT_SOFTMAX);
}

/* An unseen word's input is its spelling: two spellings of it give the
 * same probabilities, another word different ones. */
static void test_unseen(void)
{
	fx f;
	if (fx_init(&f, LLR_IN_CHARS, LLR_OUT_TREE, 1, 9) < 0) {
		CHECK(0);
		return;
	}
	int32_t again = llr_words_add(f.words, "chatte", 6, NULL), other = llr_words_add(f.words, "xyz", 3, NULL);
	CHECK(again == V + 1 && other == V + 2 && llr_words_size(f.words) == V + 3);
	int32_t in[3] = {f.unseen, again, other}, tg[3] = {2, 2, 2};
	float lp[3];
	llr_batch bt = {.B = 3, .T = 1, .input = in, .target = tg};
	CHECK_OK(llr_net_score(f.net, &bt, lp, NULL, NULL));
	CHECK(lp[0] == lp[1]);
	CHECK(lp[0] != lp[2]);
	llr_words_reset(f.words);
	CHECK(llr_words_size(f.words) == V);
	llr_err e = {0};
	CHECK(llr_net_score(f.net, &bt, lp, NULL, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "out of range") != NULL);
	fx_free(&f);
}

/* Learning the tree moves words between groups, keeps the capacity, and
 * the output stays normalised; classes cannot learn. */
static void test_learn(void)
{
	fx f;
	if (fx_init(&f, LLR_IN_CHARS, LLR_OUT_TREE, 1, 12) < 0) {
		CHECK(0);
		return;
	}
	int32_t in[T * B], tg[T * B];
	batch(&f, in, tg);
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg, .psi = f.psi};
	int32_t moved = -1;
	llr_err e = {0};
	CHECK_OK(llr_net_tree_learn(f.net, &moved, &e));
	CHECK(moved == 0); /* no samples yet */
	int32_t before[V];
	memcpy(before, llr_net_tree_groups(f.net), sizeof before);
	for (int i = 0; i < 3; i++)
		CHECK_OK(llr_net_train_step(f.net, &bt, NULL, NULL, NULL, &e));
	CHECK_OK(llr_net_tree_learn(f.net, &moved, &e));
	const int32_t *g = llr_net_tree_groups(f.net);
	int diff = 0, cnt[4] = {0};
	for (int v = 0; v < V; v++) {
		diff += g[v] != before[v];
		CHECK(g[v] >= 0 && g[v] < 4);
		cnt[g[v] & 3]++;
	}
	CHECK(diff == moved);
	CHECK(moved > 0);
	for (int k = 0; k < 4; k++)
		CHECK(cnt[k] <= 4);
	double ne = 1;
	CHECK_OK(llr_net_score(f.net, &bt, NULL, &ne, &e));
	CHECK(fabs(ne) < 1e-5);
	/* groups set back, and bad groups refused */
	CHECK_OK(llr_net_tree_set_groups(f.net, before, &e));
	CHECK(!memcmp(llr_net_tree_groups(f.net), before, sizeof before));
	int32_t bad[V];
	for (int v = 0; v < V; v++)
		bad[v] = 0; /* 11 words in a group of 4 */
	CHECK(llr_net_tree_set_groups(f.net, bad, &e) == LLR_EFORMAT);
	CHECK(!memcmp(llr_net_tree_groups(f.net), before, sizeof before));
	fx_free(&f);
	CHECK(fx_init(&f, LLR_IN_WORD, LLR_OUT_CLASSES, 1, 12) == 0);
	CHECK(llr_net_tree_learn(f.net, NULL, &e) == LLR_EINVAL);
	fx_free(&f);
}

/* Scoring on threads: the copies made before the tree learns follow its
 * new groups and read the net's spellings (the unseen word). */
static void threads_case(int input, int output)
{
	fx f;
	if (fx_init(&f, input, output, 2, 31) < 0) {
		CHECK(0);
		return;
	}
	int32_t in[T * B], tg[T * B];
	batch(&f, in, tg);
	llr_batch bt = {.B = B, .T = T, .input = in, .target = tg, .psi = f.psi};
	llr_err e = {0};
	CHECK_OK(llr_net_set_score_threads(f.net, 2, &e));
	if (output == LLR_OUT_TREE) {
		int32_t moved = 0;
		for (int i = 0; i < 3; i++)
			CHECK_OK(llr_net_train_step(f.net, &bt, NULL, NULL, NULL, &e));
		CHECK_OK(llr_net_tree_learn(f.net, &moved, &e));
		CHECK(moved > 0);
	}
	float lp2[T * B], lp1[T * B];
	double ne2 = 1, ne1 = 1;
	CHECK_OK(llr_net_score(f.net, &bt, lp2, &ne2, &e));
	CHECK_OK(llr_net_set_score_threads(f.net, 1, &e));
	CHECK_OK(llr_net_score(f.net, &bt, lp1, &ne1, &e));
	for (int k = 0; k < T * B; k++)
		CHECK_NEAR(lp2[k], lp1[k], 1e-5 * (1 + fabs(lp1[k])));
	CHECK(fabs(ne2) < 1e-5 && fabs(ne1) < 1e-5);
	fx_free(&f);
}

static void test_threads(void)
{
	threads_case(LLR_IN_CHARS, LLR_OUT_TREE);
	threads_case(LLR_IN_CONCAT, LLR_OUT_CLASSES);
	threads_case(LLR_IN_SUM, LLR_OUT_LOGLINEAR);
}

static void test_errors(void)
{
	llr_err e = {0};
	llr_net_config cf = {.vocab = V, .embed = 6, .hidden = 4, .layers = 1, .output = LLR_OUT_SOFTMAX, .input = LLR_IN_SUM, .char_vocab = 5, .char_embed = 3, .char_nw = 1, .char_width = {2}, .char_filters = {5}};
	CHECK(llr_net_new(&cf, NULL, NULL, NULL, &e) == NULL && e.code == LLR_EINVAL);
	CHECK(strstr(e.msg, "embedding size") != NULL);
	cf.input = LLR_IN_CHARS;
	cf.char_nw = 0;
	CHECK(llr_net_new(&cf, NULL, NULL, NULL, &e) == NULL && e.code == LLR_EINVAL);
	cf.char_nw = 1;
	cf.output = LLR_OUT_TREE;
	cf.tree_depth = 9;
	CHECK(llr_net_new(&cf, NULL, NULL, NULL, &e) == NULL && e.code == LLR_EINVAL);
	cf.tree_depth = 0;
	llr_net *net = llr_net_new(&cf, NULL, NULL, NULL, &e);
	CHECK(net != NULL);
	/* the defaults are filled in */
	CHECK(llr_net_cfg(net)->tree_depth == 3 && llr_net_cfg(net)->tree_arity >= 2 && llr_net_cfg(net)->tree_cap >= 2);
	/* no spellings given */
	int32_t in[1] = {2}, tg[1] = {3};
	llr_batch bt = {.B = 1, .T = 1, .input = in, .target = tg};
	CHECK(llr_net_train_step(net, &bt, NULL, NULL, NULL, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "spellings") != NULL);
	llr_net_free(net);
}

/* llr_net_rows after a training step: the blocks' unlisted rows have a
 * zero gradient, the listed ones are ascending and some are nonzero: the
 * embedding (word+chars input) and the tree or class words. */
static void rows_case(int input, int output, int nblocks)
{
	fx f;
	if (fx_init(&f, input, output, 1, 17) < 0) {
		CHECK(0);
		return;
	}
	int32_t in[T * B], tg[T * B];
	batch(&f, in, tg);
	net_ctx c = {f.net, {.B = B, .T = T, .input = in, .target = tg, .psi = f.psi}};
	size_t np;
	float *G = llr_net_grads(f.net, &np);
	memset(G, 0, np * sizeof *G);
	CHECK(isfinite(net_loss(&c)));
	const llr_rows *b;
	int nb = llr_net_rows(f.net, &b, NULL);
	CHECK(nb == nblocks);
	for (int i = 0; i < nb; i++) {
		CHECK(i == 0 || b[i].off >= b[i - 1].off + (size_t)b[i - 1].rows * b[i - 1].cols);
		CHECK(b[i].off + (size_t)b[i].rows * b[i].cols <= np);
		CHECK(b[i].nrow > 0 && b[i].nrow < b[i].rows);
		int ok = 1, nonzero = 0;
		for (int32_t r = 0, k = 0; r < b[i].rows; r++) {
			int listed = k < b[i].nrow && b[i].row[k] == r;
			k += listed;
			ok &= k == 0 || b[i].row[k - 1] <= r;
			for (int32_t j = 0; j < b[i].cols; j++) {
				float g = G[b[i].off + (size_t)r * b[i].cols + j];
				ok &= listed || g == 0.0f;
				nonzero |= listed && g != 0.0f;
			}
		}
		CHECK(ok);
		CHECK(nonzero);
	}
	fx_free(&f);
}

static void test_rows(void)
{
	rows_case(LLR_IN_CONCAT, LLR_OUT_TREE, 3);
	rows_case(LLR_IN_SUM, LLR_OUT_CLASSES, 3);
	rows_case(LLR_IN_CONCAT, LLR_OUT_SOFTMAX, 1);
	rows_case(LLR_IN_CHARS, LLR_OUT_TREE, 2);
	rows_case(LLR_IN_CHARS, LLR_OUT_SOFTMAX, 0);
}

int main(void)
{
	llr_blas_set_threads(1);
	PLAN(8);
	RUN(test_grad_chars);
	RUN(test_grad_tree);
	RUN(test_normalised);
	RUN(test_unseen);
	RUN(test_learn);
	RUN(test_errors);
	RUN(test_threads);
	RUN(test_rows);
	DONE();
}
