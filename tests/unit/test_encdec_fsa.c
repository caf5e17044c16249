/*
 * test_encdec_fsa.c - the encoder-decoder under an output automaton
 * (llr_encdec_set_fsa, train --output-fsa, issue 51): the constrained
 * log p of forced scoring, of every decoding step and the training loss
 * against a normaliser computed here by hand from the unconstrained
 * network's distribution and the automaton's table written out below
 * (p_c(x) = p(x) w(q, x) / sum over the allowed y of p(y) w(q, y), </s>
 * with the final weight), for the log-linear, softmax and primed
 * outputs; a finite-difference gradient check through the masked
 * output; a rejected reference (-inf when scored, an error in
 * training, never NaN); and beam search that ends only in final states
 * and says when none is reachable within max_len.
 */
#include <stdlib.h>
#include <unistd.h>

#include "llrnn.h"
#include "nn.h"
#include "test.h"
#include "gradcheck.h"

enum { VS = 5, FS = 5, V = 7, F = 5, B = 3, S = 6, T = 5 };

/* Targets: 0 </s>, 1 a, 2 b, 3 c, 4 d, 5 e, 6 f. */
static const char fst[] = "0 1 a 0.5\n"
                          "0 0 b\n"
                          "0 2 c 1.0\n"
                          "1 1 b 0.25\n"
                          "1 2 d\n"
                          "2 2 e 0.1\n"
                          "2 0.3\n"
                          "1\n";

/* The same automaton, as a table: state, label, next state, cost. */
static const struct {
	int q, x, r;
	double cost;
} arcs[] = {{0, 1, 1, 0.5}, {0, 2, 0, 0}, {0, 3, 2, 1.0}, {1, 2, 1, 0.25}, {1, 4, 2, 0}, {2, 5, 2, 0.1}};
static const double final_cost[3] = {INFINITY, 0, 0.3};

/* The state after x in q (-1: not allowed), its cost in *c; </s> (x 0)
 * the final cost, state q. */
static int step_of(int q, int x, double *c)
{
	if (q < 0)
		return -1;
	if (x == 0) {
		*c = final_cost[q];
		return isinf(final_cost[q]) ? -1 : q;
	}
	for (size_t k = 0; k < sizeof arcs / sizeof arcs[0]; k++)
		if (arcs[k].q == q && arcs[k].x == x) {
			*c = arcs[k].cost;
			return arcs[k].r;
		}
	return -1;
}

static llr_csr *rand_csr(int rows, int cols, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(cols);
	int32_t c[3];
	float v[3];
	for (int i = 0; i < rows; i++) {
		int k = 1 + (int)llr_rng_below(r, 3);
		for (int j = 0; j < k; j++) {
			c[j] = (int32_t)llr_rng_below(r, cols);
			v[j] = (float)(0.5 + llr_rng_uniform(r));
		}
		llr_csr_builder_row(b, c, v, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

typedef struct fix {
	llr_strmap *vocab;
	llr_fsa *a;
	llr_csr *spsi, *phi;
	float logb[V], table[VS * V];
	int32_t src[S * B], slen[B], in[T * B], tg[T * B];
} fix;

static void make_fix(fix *f, llr_rng *r, const int32_t tgt[B][T])
{
	f->vocab = llr_strmap_new();
	const char *names[V] = {"</s>", "a", "b", "c", "d", "e", "f"};
	for (int v = 0; v < V; v++)
		llr_strmap_add(f->vocab, names[v], strlen(names[v]));
	char path[] = "/tmp/test_encdec_fsa.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, fst, sizeof fst - 1) == (ssize_t)(sizeof fst - 1));
	close(fd);
	llr_err e = {0};
	f->a = llr_fsa_read(path, f->vocab, &e);
	unlink(path);
	CHECK(f->a != NULL);
	f->spsi = rand_csr(VS, FS, r);
	f->phi = rand_csr(V, F, r);
	for (int v = 0; v < V; v++)
		f->logb[v] = (float)log(0.1 + llr_rng_uniform(r));
	for (int s = 0; s < VS; s++) {
		double z = 0;
		for (int x = 0; x < V; x++)
			z += f->table[s * V + x] = (float)(0.05 + llr_rng_uniform(r));
		for (int x = 0; x < V; x++)
			f->table[s * V + x] = (float)(f->table[s * V + x] / z);
	}
	int sl[B] = {6, 3, 2};
	for (int b = 0; b < B; b++) {
		f->slen[b] = sl[b];
		for (int j = 0; j < S; j++)
			f->src[j * B + b] = j < sl[b] ? (int32_t)llr_rng_below(r, VS) : 0;
		for (int t = 0; t < T; t++) {
			f->tg[t * B + b] = tgt[b][t];
			f->in[t * B + b] = t == 0 ? LLR_BOS_ID : tgt[b][t] >= 0 ? tgt[b][t - 1] : 0;
		}
	}
}

static void free_fix(fix *f)
{
	llr_fsa_free(f->a);
	llr_strmap_free(f->vocab);
	llr_csr_free(f->spsi);
	llr_csr_free(f->phi);
}

static llr_encdec *make_net(fix *f, int output, int primed, llr_rng *r)
{
	int sm = output == LLR_OUT_SOFTMAX;
	llr_encdec_config c = {.src_vocab = VS, .src_feat = FS, .vocab = V, .feat_out = sm ? V : F, .feat_in = sm ? V : F, .embed = 4,
	                       .hidden = 8, .enc_layers = 1, .attn_hidden = 4, .attention = LLR_ATT_MLP, .output = output, .primed = primed};
	llr_err e = {0};
	llr_encdec *m = llr_encdec_new(&c, f->spsi, sm ? NULL : f->phi, NULL, sm ? NULL : f->logb, primed ? f->table : NULL, &e);
	CHECK(m != NULL);
	if (!m)
		return NULL;
	llr_encdec_init(m, r);
	size_t np;
	float *P = llr_encdec_params(m, &np);
	for (size_t i = 0; i < np; i++)
		P[i] = (float)(1.5 * (2 * llr_rng_uniform(r) - 1)); /* a peaked distribution */
	if (primed)
		P[np - 1] = 0.8f;
	return m;
}

static const int32_t good[B][T] = {{1, 2, 4, 5, 0}, {3, 5, 0, -1, -1}, {2, 1, 0, -1, -1}};

/* Forced scoring, each step's distribution and the training loss under
 * the automaton against the hand normaliser over the unconstrained
 * step's log p. */
static void constrained_case(int output, int primed)
{
	llr_rng r;
	llr_rng_seed(&r, 5 + output * 3 + primed);
	fix f;
	make_fix(&f, &r, good);
	llr_encdec *m = make_net(&f, output, primed, &r);
	if (!m || !f.a) {
		free_fix(&f);
		return;
	}
	llr_err e = {0};
	llr_encdec_batch bt = {.B = B, .S = S, .T = T, .src = f.src, .src_len = f.slen, .input = f.in, .target = f.tg};
	float want[T * B] = {0};
	double nll_want = 0;
	llr_encdec_state *st = llr_encdec_state_new(m, 1);
	for (int b = 0; b < B; b++) {
		int32_t src[S];
		for (int j = 0; j < f.slen[b]; j++)
			src[j] = f.src[j * B + b];
		int q = 0;
		for (int t = 0; t < T && f.tg[t * B + b] >= 0; t++) {
			float lp0[V], lpc[V];
			/* unconstrained: from the start, fed the prefix */
			CHECK(llr_encdec_set_fsa(m, NULL, &e) == LLR_OK);
			CHECK(llr_encdec_start(m, st, src, f.slen[b], &e) == LLR_OK);
			for (int u = 0; u <= t; u++) {
				int32_t x = f.in[u * B + b];
				CHECK(llr_encdec_step(m, st, 1, &x, lp0, NULL, &e) == LLR_OK);
			}
			CHECK(llr_encdec_set_fsa(m, f.a, &e) == LLR_OK);
			CHECK(llr_encdec_start(m, st, src, f.slen[b], &e) == LLR_OK);
			for (int u = 0; u <= t; u++) {
				int32_t x = f.in[u * B + b];
				CHECK(llr_encdec_step(m, st, 1, &x, lpc, NULL, &e) == LLR_OK);
			}
			/* the normaliser by hand */
			double z = 0, c;
			for (int x = 0; x < V; x++)
				if (step_of(q, x, &c) >= 0)
					z += exp((double)lp0[x] - c);
			for (int x = 0; x < V; x++) {
				if (step_of(q, x, &c) >= 0)
					CHECK_NEAR(lpc[x], (double)lp0[x] - c - log(z), 2e-5);
				else
					CHECK(lpc[x] == -INFINITY);
			}
			int y = f.tg[t * B + b];
			int nq = step_of(q, y, &c);
			CHECK(nq >= 0);
			want[t * B + b] = (float)((double)lp0[y] - c - log(z));
			nll_want -= (double)lp0[y] - c - log(z);
			q = nq;
		}
	}
	llr_encdec_state_free(st);
	float logp[T * B];
	CHECK(llr_encdec_score(m, &bt, logp, NULL, &e) == LLR_OK);
	for (int n = 0; n < T * B; n++)
		CHECK_NEAR(logp[n], want[n], 2e-5);
	double nll = 0;
	int64_t ntok = 0;
	CHECK(llr_encdec_train_step(m, &bt, NULL, &nll, &ntok, &e) == LLR_OK);
	CHECK(ntok == 11);
	CHECK_NEAR(nll, nll_want, 1e-4);
	/* and it is not the unconstrained loss */
	double nll0 = 0;
	CHECK(llr_encdec_set_fsa(m, NULL, &e) == LLR_OK);
	CHECK(llr_encdec_train_step(m, &bt, NULL, &nll0, &ntok, &e) == LLR_OK);
	CHECK(nll0 > nll + 0.1);
	llr_encdec_free(m);
	free_fix(&f);
}

static void test_constrained_loglinear(void)
{
	constrained_case(LLR_OUT_LOGLINEAR, 0);
}

static void test_constrained_softmax(void)
{
	constrained_case(LLR_OUT_SOFTMAX, 0);
}

static void test_constrained_primed(void)
{
	constrained_case(LLR_OUT_LOGLINEAR, 1);
}

typedef struct gctx {
	llr_encdec *m;
	llr_encdec_batch bt;
} gctx;

static double loss(void *p)
{
	gctx *c = p;
	double nll = 0;
	int64_t nt;
	return llr_encdec_train_step(c->m, &c->bt, NULL, &nll, &nt, NULL) == LLR_OK ? nll : NAN;
}

/* Central differences of the constrained loss against its gradient, for
 * every tensor; a zeroed gradient fails. */
static void grad_case(int output)
{
	llr_rng r;
	llr_rng_seed(&r, 71 + output);
	fix f;
	make_fix(&f, &r, good);
	llr_encdec *m = make_net(&f, output, 0, &r);
	if (!m || !f.a) {
		free_fix(&f);
		return;
	}
	CHECK(llr_encdec_set_fsa(m, f.a, NULL) == LLR_OK);
	gctx c = {m, {.B = B, .S = S, .T = T, .src = f.src, .src_len = f.slen, .input = f.in, .target = f.tg}};
	size_t np;
	float *P = llr_encdec_params(m, &np), *G = llr_encdec_grads(m, NULL);
	memset(G, 0, np * sizeof *G);
	CHECK(isfinite(loss(&c)));
	float *g = malloc(np * sizeof *g);
	memcpy(g, G, np * sizeof *g);
	for (size_t i = 0; i < llr_encdec_n_tensors(m); i++) {
		const char *name;
		int nd;
		int64_t sh[2];
		size_t off;
		llr_encdec_tensor_info(m, i, &name, &nd, sh, &off);
		size_t n = (size_t)sh[0] * (size_t)(nd > 1 ? sh[1] : 1);
		char nm[96];
		snprintf(nm, sizeof nm, "encdec fsa %s %s", output == LLR_OUT_SOFTMAX ? "softmax" : "ll", name);
		CHECK(gradcheck(nm, P + off, g + off, n, loss, &c, n, &r) == 0);
		if (!strcmp(name, "out/w")) {
			float *zero = calloc(n, sizeof *zero);
			g_quiet = 1;
			CHECK(zero && gradcheck("out/w zeroed (expect bad)", P + off, zero, n, loss, &c, n, &r) > 0);
			g_quiet = 0;
			free(zero);
		}
	}
	free(g);
	llr_encdec_free(m);
	free_fix(&f);
}

static void test_grad_loglinear(void)
{
	grad_case(LLR_OUT_LOGLINEAR);
}

static void test_grad_softmax(void)
{
	grad_case(LLR_OUT_SOFTMAX);
}

/* A reference the automaton rejects: -inf from its first rejected token
 * on when scored, finite before and for the other pairs, an error when
 * training; never NaN. */
static void test_rejected(void)
{
	static const int32_t bad[B][T] = {{1, 2, 4, 5, 0}, {3, 6, 0, -1, -1}, {2, 1, 0, -1, -1}};
	llr_rng r;
	llr_rng_seed(&r, 9);
	fix f;
	make_fix(&f, &r, bad);
	llr_encdec *m = make_net(&f, LLR_OUT_LOGLINEAR, 0, &r);
	if (!m || !f.a) {
		free_fix(&f);
		return;
	}
	llr_err e = {0};
	CHECK(llr_encdec_set_fsa(m, f.a, &e) == LLR_OK);
	llr_encdec_batch bt = {.B = B, .S = S, .T = T, .src = f.src, .src_len = f.slen, .input = f.in, .target = f.tg};
	float logp[T * B];
	CHECK(llr_encdec_score(m, &bt, logp, NULL, &e) == LLR_OK);
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			float v = logp[t * B + b];
			CHECK(!isnan(v));
			if (b == 1 && t >= 1 && t <= 2)
				CHECK(v == -INFINITY);
			else if (f.tg[t * B + b] >= 0)
				CHECK(isfinite(v) && v < 0);
		}
	double nll = 0;
	int64_t nt;
	CHECK(llr_encdec_train_step(m, &bt, NULL, &nll, &nt, &e) < 0);
	CHECK(strstr(e.msg, "not finite") != NULL);
	llr_encdec_free(m);
	free_fix(&f);
}

/* Greedy and beam search end in final states within max_len, with a
 * hypothesis the automaton accepts; a max_len no sentence fits is an
 * error saying so. */
static void test_search(void)
{
	llr_rng r;
	llr_rng_seed(&r, 13);
	fix f;
	make_fix(&f, &r, good);
	llr_encdec *m = make_net(&f, LLR_OUT_LOGLINEAR, 0, &r);
	if (!m || !f.a) {
		free_fix(&f);
		return;
	}
	llr_err e = {0};
	CHECK(llr_encdec_set_fsa(m, f.a, &e) == LLR_OK);
	llr_encdec_state *st = llr_encdec_state_new(m, 4);
	int32_t src[3] = {1, 2, 3};
	int lens[3] = {2, 3, 8}, beams[2] = {1, 4};
	for (int li = 0; li < 3; li++)
		for (int bi = 0; bi < 2; bi++) {
			CHECK(llr_encdec_start(m, st, src, 3, &e) == LLR_OK);
			llr_search_opts o = {.beam = beams[bi], .nbest = beams[bi], .max_len = lens[li], .len_norm = 1.0};
			llr_hyp h[4];
			int n = 0;
			CHECK(llr_encdec_search(&m, &st, 1, 0, &o, h, &n, &e) == LLR_OK);
			CHECK(n >= 1);
			for (int k = 0; k < n; k++) {
				CHECK(h[k].finished && h[k].len <= lens[li] && h[k].ids[h[k].len - 1] == 0);
				int q = 0;
				double c;
				for (int i = 0; i < h[k].len && q >= 0; i++)
					q = step_of(q, h[k].ids[i], &c);
				CHECK(q >= 0);
				llr_hyp_clear(&h[k]);
			}
		}
	CHECK(llr_encdec_start(m, st, src, 3, &e) == LLR_OK);
	llr_search_opts o = {.beam = 2, .nbest = 1, .max_len = 1, .len_norm = 1.0};
	llr_hyp h[2];
	int n = 0;
	CHECK(llr_encdec_search(&m, &st, 1, 0, &o, h, &n, &e) == LLR_ERANGE);
	CHECK(strstr(e.msg, "no accepting state is reachable within --max-len 1") != NULL);
	llr_encdec_state_free(st);
	llr_encdec_free(m);
	free_fix(&f);
}

/* The mask-only mode (llr_search_opts.mask): a model trained without
 * the automaton searched under it finds outputs in the language, with
 * the log p of the masked, renormalised steps (recomputed here from
 * llr_encdec_step's rows); refused with a model that has its own. */
static void test_search_mask(void)
{
	llr_rng r;
	llr_rng_seed(&r, 17);
	fix f;
	make_fix(&f, &r, good);
	llr_encdec *m = make_net(&f, LLR_OUT_LOGLINEAR, 0, &r);
	if (!m || !f.a) {
		free_fix(&f);
		return;
	}
	llr_err e = {0};
	llr_encdec_state *st = llr_encdec_state_new(m, 4), *one = llr_encdec_state_new(m, 1);
	int32_t src[3] = {1, 2, 3};
	for (int beam = 1; beam <= 4; beam += 3) {
		CHECK(llr_encdec_start(m, st, src, 3, &e) == LLR_OK);
		llr_search_opts o = {.beam = beam, .nbest = beam, .max_len = 8, .len_norm = 1.0, .mask = f.a};
		llr_hyp h[4];
		int n = 0;
		CHECK(llr_encdec_search(&m, &st, 1, 0, &o, h, &n, &e) == LLR_OK);
		CHECK(n >= 1);
		for (int k = 0; k < n; k++) {
			CHECK(h[k].finished && h[k].ids[h[k].len - 1] == 0);
			CHECK(llr_encdec_start(m, one, src, 3, &e) == LLR_OK);
			int32_t in = LLR_BOS_ID, q = llr_fsa_start(f.a);
			double lp = 0.0;
			for (int i = 0; i < h[k].len && q >= 0; i++) {
				float row[V];
				CHECK(llr_encdec_step(m, one, 1, &in, row, NULL, &e) == LLR_OK);
				double z = 0.0, w[V];
				for (int x = 0; x < V; x++) {
					float lw = -INFINITY;
					if (x == 0)
						lw = llr_fsa_final(f.a, q);
					else if (llr_fsa_next(f.a, q, x, &lw) < 0)
						lw = -INFINITY;
					w[x] = lw > -INFINITY ? exp(row[x] + lw) : 0.0;
					z += w[x];
				}
				int32_t x = h[k].ids[i];
				lp += log(w[x] / z);
				q = x == 0 ? q : llr_fsa_next(f.a, q, x, NULL);
				in = x;
			}
			CHECK(q >= 0);
			CHECK(fabs(lp - h[k].logp) < 1e-4);
			llr_hyp_clear(&h[k]);
		}
	}
	CHECK(llr_encdec_set_fsa(m, f.a, &e) == LLR_OK);
	CHECK(llr_encdec_start(m, st, src, 3, &e) == LLR_OK);
	llr_search_opts o = {.beam = 2, .nbest = 1, .max_len = 8, .len_norm = 1.0, .mask = f.a};
	llr_hyp h[2];
	int n = 0;
	CHECK(llr_encdec_search(&m, &st, 1, 0, &o, h, &n, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "own output automaton") != NULL);
	llr_encdec_state_free(one);
	llr_encdec_state_free(st);
	llr_encdec_free(m);
	free_fix(&f);
}

int main(void)
{
	PLAN(8);
	RUN(test_constrained_loglinear);
	RUN(test_constrained_softmax);
	RUN(test_constrained_primed);
	RUN(test_grad_loglinear);
	RUN(test_grad_softmax);
	RUN(test_rejected);
	RUN(test_search);
	RUN(test_search_mask);
	DONE();
}
