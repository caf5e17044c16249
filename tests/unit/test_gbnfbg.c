/*
 * test_gbnfbg.c - a GBNF grammar as the background factor b_fsa of the
 * log-linear output (lib/fsa/gbnffsa.c, issue 51): a grammar that is in
 * fact regular, written once as GBNF and once as a regular expression
 * over the same tokens, gives the same loss, log p, gradient and whole
 * distribution at the states both reach after the same prefixes (one and
 * three threads); the grammar's queries from several threads at once on
 * a recogniser that makes its states as they are reached (the mutex;
 * run under ThreadSanitizer in CI with the other unit tests); its text
 * written and read back (fsa/grammar) gives the same answers; an
 * ambiguous grammar fails with LLR_ERANGE in llr_fsa_check, a syntax
 * error names the line, and a grammar no token can start is refused.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "llrnn.h"
#include "nn.h"
#include "fsa_vocab.h"
#include "test.h"

enum { NW = 12,
       FEAT = 6,
       NPOS = 160 };

/* The same language twice: w0, then any of w3 w4 w5, then w6 or w7,
 * then w8 or nothing; w1 is a prefix of w10 and w11 as strings, which
 * the grammar (over characters) must not confuse. */
static const char regex[] = "w0 (w3|w4|w5|w1)* (w6|w7|w10) w8?";
static const char grammar[] = "# the regular expression's language\n"
                              "root ::= \"w0\" (\" \" mid)* \" \" end (\" w8\")?\n"
                              "mid  ::= \"w3\" | \"w4\" | \"w5\" | \"w1\"\n"
                              "end  ::= \"w6\" | \"w7\" | \"w1\" \"0\"\n";
/* And one whose states allow most tokens: the regex's has default arcs,
 * the grammar's sets take the default form (gbnffsa.c) too; <unk> is
 * never a token of a grammar. */
static const char regex2[] = "w0 [^ w1 w2 <unk>]* (w3|w4) w5?";
static const char grammar2[] = "root ::= \"w0\" (\" \" any)* \" \" (\"w3\" | \"w4\") (\" w5\")?\n"
                               "any  ::= \"w0\" | \"w\" [3-9] | \"w1\" [01]\n";

static llr_csr *make_phi(int V, llr_rng *r)
{
	llr_csr_builder *b = llr_csr_builder_new(FEAT);
	int32_t cols[3];
	float vals[3];
	for (int v = 0; v < V; v++) {
		int k = 1 + (int)llr_rng_below(r, 3);
		for (int j = 0; j < k; j++) {
			cols[j] = (int32_t)llr_rng_below(r, FEAT);
			vals[j] = (float)(0.3 + llr_rng_uniform(r));
		}
		llr_csr_builder_row(b, cols, vals, (size_t)k, NULL);
	}
	return llr_csr_builder_finish(b, NULL);
}

/* Positions of random sentences of the language: the regex's state
 * qr[n] and the grammar's qg[n] after the same prefix, and the token
 * drawn next (</s> = 0 where the state is final), uniformly among those
 * the regex allows.  Both must allow the same tokens at every step. */
static int walk(const llr_fsa *re, const llr_fsa *gr, int V, llr_rng *r, int32_t *qr, int32_t *qg, int32_t *tg)
{
	int mismatch = 0, n = 0;
	llr_err e = {0};
	while (n < NPOS) {
		int32_t a = llr_fsa_start(re), b = llr_fsa_start(gr);
		for (;;) {
			CHECK(llr_fsa_ready(gr, b, &e) == LLR_OK);
			int32_t ok[32], nok = 0;
			for (int v = 0; v < V; v++) {
				int ra = v == 0 ? llr_fsa_final(re, a) > -INFINITY : llr_fsa_next(re, a, v, NULL) >= 0;
				int rb = v == 0 ? llr_fsa_final(gr, b) > -INFINITY : llr_fsa_next(gr, b, v, NULL) >= 0;
				mismatch += ra != rb;
				if (ra)
					ok[nok++] = v;
			}
			CHECK(nok > 0);
			int32_t y = ok[llr_rng_below(r, (uint64_t)nok)];
			qr[n] = a;
			qg[n] = b;
			tg[n++] = y;
			if (y == 0 || n == NPOS)
				break;
			a = llr_fsa_next(re, a, y, NULL);
			b = llr_fsa_next(gr, b, y, NULL);
		}
	}
	return mismatch;
}

typedef struct run {
	double nll, nllg;
	float lt[NPOS], dA[FEAT * NPOS], all[NPOS * (NW + 2)];
} run;

static void ll_all(const llr_ll *o, const float *A, const int32_t *ctx, const int32_t *tg, int threads, run *out)
{
	float *work = malloc(llr_ll_work_size(o->V, 3) * sizeof(float));
	double *chunk = malloc(llr_ll_chunk_size(NPOS) * sizeof(double)), ne = -1;
	memset(out, 0, sizeof *out);
	CHECK(llr_ll_run(o, &(llr_ll_io){.mode = LLR_LL_LOSS, .N = NPOS, .lda = NPOS, .A = A, .target = tg, .nll = &out->nll, .logp_t = out->lt, .norm_err = &ne, .work = work, .chunk = chunk, .threads = threads, .ctx = ctx}) == LLR_OK);
	CHECK(fabs(ne) < 1e-5);
	CHECK(llr_ll_run(o, &(llr_ll_io){.mode = LLR_LL_GRAD, .N = NPOS, .lda = NPOS, .A = A, .target = tg, .nll = &out->nllg, .dA = out->dA, .work = work, .chunk = chunk, .threads = threads, .ctx = ctx}) == LLR_OK);
	CHECK(llr_ll_run(o, &(llr_ll_io){.mode = LLR_LL_DIST, .N = NPOS, .lda = NPOS, .A = A, .norm_err = &ne, .logp_all = out->all, .work = work, .chunk = chunk, .threads = threads, .ctx = ctx}) == LLR_OK);
	CHECK(fabs(ne) < 1e-5);
	free(work);
	free(chunk);
}

static llr_fsa *make_grammar(const char *text, const llr_strmap *vocab, llr_err *e)
{
	return llr_fsa_grammar_text(text, strlen(text), "test.gbnf", vocab, e);
}

/* The regular grammar and the regular expression: the same numbers. */
static void same_case(const char *regex, const char *grammar, int threads)
{
	llr_rng r;
	llr_rng_seed(&r, 51);
	llr_err e = {0};
	llr_strmap *vocab = fsa_test_vocab(NW);
	int V = (int)llr_strmap_size(vocab);
	llr_fsa *re = llr_fsa_regex(regex, vocab, &e), *gr = make_grammar(grammar, vocab, &e);
	CHECK(re != NULL && gr != NULL);
	CHECK(llr_fsa_grammar_source(gr, &(size_t){0}) != NULL && llr_fsa_grammar_source(re, &(size_t){0}) == NULL);
	static int32_t qr[NPOS], qg[NPOS], tg[NPOS];
	CHECK(walk(re, gr, V, &r, qr, qg, tg) == 0);
	int defaults = 0;
	for (int n = 0; n < NPOS; n++)
		defaults += llr_fsa_default(gr, qg[n], NULL) >= 0;
	llr_csr *phi = make_phi(V, &r);
	float *logb = malloc((size_t)V * sizeof *logb), A[FEAT * NPOS];
	for (int v = 0; v < V; v++)
		logb[v] = (float)(-log((double)V) + 0.5 * (llr_rng_uniform(&r) - 0.5));
	for (int i = 0; i < FEAT * NPOS; i++)
		A[i] = (float)(3.0 * (llr_rng_uniform(&r) - 0.5));
	llr_ll o = {V, FEAT, phi, logb, 0, NULL, NULL, 0, NULL, NULL, 0, 0, re};
	static run a, b;
	ll_all(&o, A, qr, tg, threads, &a);
	o.fsa = gr;
	ll_all(&o, A, qg, tg, threads, &b);
	double wlp = 0, wdA = 0, wall = 0;
	size_t excluded = 0, finite = 0;
	for (int n = 0; n < NPOS; n++)
		wlp = fmax(wlp, fabs(a.lt[n] - b.lt[n]));
	for (int i = 0; i < FEAT * NPOS; i++)
		wdA = fmax(wdA, fabs(a.dA[i] - b.dA[i]));
	for (int i = 0; i < NPOS * V; i++) {
		CHECK(!isnan(b.all[i]));
		if (a.all[i] == -INFINITY || b.all[i] == -INFINITY) {
			excluded++;
			CHECK(a.all[i] == b.all[i]);
		} else {
			finite++;
			wall = fmax(wall, fabs(a.all[i] - b.all[i]));
		}
	}
	printf("# threads %d: loss %.9g vs %.9g, %zu excluded, %zu allowed, %d default sets, |log p| %.2g, |dA| %.2g, |logp_all| %.2g\n",
	       threads, a.nll, b.nll, excluded, finite, defaults, wlp, wdA, wall);
	CHECK(regex == regex2 ? defaults > NPOS / 4 : defaults == 0);
	CHECK(isfinite(a.nll) && a.nll > 0);
	CHECK(excluded > (size_t)NPOS && finite > (size_t)NPOS);
	CHECK_NEAR(a.nll, b.nll, 1e-9 * a.nll);
	CHECK_NEAR(a.nllg, b.nllg, 1e-9 * a.nll);
	CHECK(wlp < 1e-6 && wdA < 1e-6 && wall < 1e-6);
	llr_csr_free(phi);
	free(logb);
	llr_fsa_free(re);
	llr_fsa_free(gr);
	llr_strmap_free(vocab);
}

static void test_same_as_regex(void)
{
	same_case(regex, grammar, 1);
	same_case(regex, grammar, 3);
	same_case(regex2, grammar2, 1);
	same_case(regex2, grammar2, 3);
}

/* Threads that walk one grammar at once, each along its own sentences,
 * while it makes its states: each thread's answers are those of the
 * same walk on a grammar of its own. */
typedef struct walker {
	const llr_fsa *g;
	uint64_t seed;
	int32_t trace[400];
} walker;

static void *walk_thread(void *p)
{
	walker *w = p;
	llr_rng r;
	llr_rng_seed(&r, w->seed);
	int32_t q = llr_fsa_start(w->g);
	llr_err e = {0};
	for (int i = 0; i < 400; i++) {
		const int32_t *lab, *dst;
		const float *lw;
		if (llr_fsa_ready(w->g, q, &e) < 0)
			return NULL;
		int32_t n = llr_fsa_arcs(w->g, q, &lab, &dst, &lw);
		int fin = llr_fsa_final(w->g, q) > -INFINITY;
		w->trace[i] = n * 2 + fin;
		int32_t k = (int32_t)llr_rng_below(&r, (uint64_t)n + 1);
		q = k == n ? llr_fsa_start(w->g) : llr_fsa_next(w->g, q, lab[k], NULL);
		if (k < n && (dst[k] != q || lw[k] != 0.0f))
			w->trace[i] = -1;
	}
	return NULL;
}

static void test_threads(void)
{
	llr_err e = {0};
	llr_strmap *vocab = fsa_test_vocab(NW);
	/* nesting: infinitely many states, each made when first reached */
	const char *nest = "root ::= item (\" \" item)*\nitem ::= \"w0\" | \"w1 \" root \" w2\" | \"w3\"\n";
	llr_fsa *shared = make_grammar(nest, vocab, &e);
	CHECK(shared != NULL);
	enum { T = 4 };
	walker w[T], ref[T];
	pthread_t th[T];
	for (int t = 0; t < T; t++) {
		w[t].g = shared;
		w[t].seed = 100 + (uint64_t)t;
		CHECK(pthread_create(&th[t], NULL, walk_thread, &w[t]) == 0);
	}
	for (int t = 0; t < T; t++)
		pthread_join(th[t], NULL);
	int diff = 0;
	for (int t = 0; t < T; t++) {
		llr_fsa *own = make_grammar(nest, vocab, &e);
		ref[t].g = own;
		ref[t].seed = 100 + (uint64_t)t;
		walk_thread(&ref[t]);
		diff += memcmp(ref[t].trace, w[t].trace, sizeof w[t].trace) != 0;
		for (int i = 0; i < 400; i++)
			diff += w[t].trace[i] < 0;
		llr_fsa_free(own);
	}
	printf("# %d threads, %d states made\n", T, llr_fsa_states(shared));
	CHECK(diff == 0);
	CHECK(llr_fsa_states(shared) > 20);
	llr_fsa_free(shared);
	llr_strmap_free(vocab);
}

/* fsa/grammar written and read back: the same grammar. */
static void test_members(void)
{
	llr_err e = {0};
	llr_strmap *vocab = fsa_test_vocab(NW);
	llr_fsa *g = make_grammar(grammar, vocab, &e);
	CHECK(g != NULL);
	char path[] = "/tmp/test_gbnfbg_tar.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	llr_meta *m = llr_meta_new();
	CHECK(llr_fsa_meta(g, m) == LLR_OK);
	CHECK(llr_fsa_in_meta(m));
	llr_tensor_writer *w = llr_tw_open(path, "features", m, &e);
	CHECK(w != NULL && llr_fsa_write(w, g, &e) == LLR_OK && llr_tw_close(w, &e) == LLR_OK);
	llr_meta_free(m);
	llr_tensor_reader *r = llr_tr_open(path, "features", &e);
	CHECK(r != NULL);
	llr_fsa *b = llr_fsa_get_members(r, llr_tr_meta(r), vocab, &e);
	CHECK(b != NULL);
	size_t n1 = 0, n2 = 0;
	const char *t1 = llr_fsa_grammar_source(g, &n1), *t2 = llr_fsa_grammar_source(b, &n2);
	CHECK(n1 == strlen(grammar) && n1 == n2 && !memcmp(t1, t2, n1));
	int32_t ids[] = {2, 5, 3, 8, 10}; /* w0 w3 w1 w6 w8 */
	CHECK(llr_fsa_check(b, vocab, ids, 5, &e) == LLR_OK);
	CHECK(llr_fsa_check(b, vocab, ids, 4, &e) == LLR_OK);
	CHECK(llr_fsa_check(b, vocab, ids, 3, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "the grammar rejects the sentence: it may not end after 'w0 w3 w1'") != NULL);
	CHECK(llr_fsa_check(b, vocab, (int32_t[]){2, 9, 9}, 3, &e) == LLR_EFORMAT); /* w0 w7 w7 */
	CHECK(strstr(e.msg, "the grammar rejects token 3 'w7' after 'w0 w7'") != NULL);
	llr_fsa_free(b);
	llr_tr_close(r);
	unlink(path);
	llr_fsa_free(g);
	llr_strmap_free(vocab);
}

/* The bad grammars: syntax (file:line), none of the vocabulary's
 * tokens can start it, too ambiguous to follow (LLR_ERANGE from the
 * check, not a rejection). */
static void test_bad(void)
{
	llr_err e = {0};
	llr_strmap *vocab = fsa_test_vocab(NW);
	CHECK(make_grammar("root ::= \"w0\"\nx ::= (\n", vocab, &e) == NULL);
	CHECK(e.code == LLR_EFORMAT && !strncmp(e.msg, "test.gbnf:2: ", 13));
	CHECK(make_grammar("root ::= \"zz\" | \"x\" \"w0\"\n", vocab, &e) == NULL);
	CHECK(e.code == LLR_EFORMAT && strstr(e.msg, "the grammar accepts no sentence of the vocabulary's tokens") != NULL);
	llr_fsa *g = make_grammar("root ::= \"w0 \" root \" w1\" | \"w0 \" root \" w2\" | \"w3\"\n", vocab, &e);
	CHECK(g != NULL);
	int32_t ids[40];
	for (int i = 0; i < 40; i++)
		ids[i] = 2;
	CHECK(llr_fsa_check(g, vocab, ids, 40, &e) == LLR_ERANGE);
	CHECK(strstr(e.msg, "too ambiguous") != NULL);
	llr_fsa_free(g);
	llr_strmap_free(vocab);
}

int main(void)
{
	PLAN(4);
	RUN(test_same_as_regex);
	RUN(test_threads);
	RUN(test_members);
	RUN(test_bad);
	DONE();
}
