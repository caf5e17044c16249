/*
 * test_model.c - unit tests for model files (lib/lm/model.c): save and load
 * round trips (weights, every tensor shape, meta, training state with the
 * optimiser moments and the best weights), byte-identical saves, a
 * truncated file, NaN weights, a foreign kind, a bad configuration, and
 * llr_rnnlm_fits against a changed lexicon; character-aware inputs and
 * tree/classes outputs (their character vocabulary and groups carried).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "llrnn.h"
#include "test.h"

static const char *words[] = {"le", "chat", "dort", "la", "</s>", "<unk>"};
#define NW 6

/* A lexicon with identities of the first 4 words, @notTop and two tags. */
static llr_lexicon *make_lexicon(void)
{
	llr_lexicon *x = calloc(1, sizeof *x);
	x->vocab = llr_strmap_new();
	x->features = llr_strmap_new();
	for (int i = 0; i < NW; i++)
		llr_strmap_add(x->vocab, words[i], strlen(words[i]));
	const char *feats[] = {"TOP:le", "TOP:chat", "TOP:dort", "TOP:la", "TOP:@notTop", "POS:DET", "POS:EOS"};
	for (int i = 0; i < 7; i++)
		llr_strmap_add(x->features, feats[i], strlen(feats[i]));
	llr_csr_builder *b = llr_csr_builder_new(7);
	int32_t rows[NW][2] = {{0, 5}, {1, -1}, {2, -1}, {3, 5}, {4, 6}, {4, -1}};
	for (int i = 0; i < NW; i++) {
		float v[2] = {1, 1};
		CHECK_OK(llr_csr_builder_row(b, rows[i], v, rows[i][1] < 0 ? 1 : 2, NULL));
	}
	x->phi = llr_csr_builder_finish(b, NULL);
	x->logb = malloc(NW * sizeof(float));
	for (int i = 0; i < NW; i++)
		x->logb[i] = logf(1.0f / NW);
	x->eos_id = 4;
	x->unk_id = 5;
	return x;
}

static llr_rnnlm *make_model(int output)
{
	llr_net_config c = {.embed = 5, .hidden = 4, .layers = 2, .dropout = 0.25f, .output = output};
	llr_err e = {0};
	llr_rnnlm *m = llr_rnnlm_new(make_lexicon(), &c, &e);
	if (!m) {
		printf("# llr_rnnlm_new: %s\n", e.msg);
		exit(1);
	}
	llr_rng r;
	llr_rng_seed(&r, 7);
	llr_net_init(m->net, &r);
	llr_meta_set(m->meta, "optim", "adam");
	llr_meta_set(m->meta, "epochs_done", "3");
	return m;
}

static char *tmp(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ % 4];
	snprintf(p, 512, "%s/%s", test_tmpdir(), name);
	return p;
}

static int same_file(const char *a, const char *b)
{
	FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
	int same = f && g;
	while (same) {
		int x = getc(f), y = getc(g);
		if (x != y)
			same = 0;
		if (x == EOF || y == EOF)
			break;
	}
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	return same;
}

static void test_round_trip(void)
{
	for (int output = LLR_OUT_LOGLINEAR; output <= LLR_OUT_SOFTMAX; output++) {
		llr_rnnlm *m = make_model(output);
		const char *p = tmp("m.bin");
		llr_err e = {0};
		CHECK(llr_rnnlm_save(p, m, NULL, &e) == LLR_OK);
		llr_rnnlm *l = NULL;
		int rc = llr_rnnlm_load(p, &l, &e);
		CHECK(rc == LLR_OK);
		if (rc < 0) {
			printf("# %s\n", e.msg);
			llr_rnnlm_free(m);
			continue;
		}
		size_t n1, n2;
		float *a = llr_net_params(m->net, &n1), *b = llr_net_params(l->net, &n2);
		CHECK(n1 == n2 && !memcmp(a, b, n1 * sizeof(float)));
		const llr_net_config *c1 = llr_net_cfg(m->net), *c2 = llr_net_cfg(l->net);
		CHECK(c1->vocab == c2->vocab && c1->feat_out == c2->feat_out && c1->feat_in == c2->feat_in);
		CHECK(c1->embed == c2->embed && c1->hidden == c2->hidden && c1->layers == c2->layers);
		CHECK(c1->output == c2->output && c1->dropout == c2->dropout);
		/* every tensor has the same name, shape and place */
		CHECK(llr_net_n_tensors(m->net) == llr_net_n_tensors(l->net));
		for (size_t i = 0; i < llr_net_n_tensors(m->net); i++) {
			const char *na, *nb;
			int da, db;
			int64_t sa[2], sb[2];
			size_t oa, ob;
			llr_net_tensor_info(m->net, i, &na, &da, sa, &oa);
			llr_net_tensor_info(l->net, i, &nb, &db, sb, &ob);
			CHECK(!strcmp(na, nb) && da == db && oa == ob);
			for (int d = 0; d < da; d++)
				CHECK(sa[d] == sb[d]);
		}
		CHECK(!strcmp(llr_meta_get(l->meta, "optim"), "adam"));
		CHECK(!strcmp(llr_meta_get(l->meta, "output"), output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear"));
		CHECK(!strcmp(llr_meta_get(l->meta, "vocab_size"), "6"));
		CHECK(llr_strmap_size(l->lex->vocab) == NW && l->lex->eos_id == 4 && l->lex->unk_id == 5);
		CHECK(llr_rnnlm_fits(l, m->lex, &e) == LLR_OK);
		/* the loaded model scores like the saved one */
		int32_t in[3] = {LLR_BOS_ID, 0, 1}, tg[3] = {0, 1, 4};
		llr_batch bt = {.B = 1, .T = 3, .input = in, .target = tg};
		float la[3], lb[3];
		CHECK_OK(llr_net_score(m->net, &bt, la, NULL, NULL));
		CHECK_OK(llr_net_score(l->net, &bt, lb, NULL, NULL));
		CHECK(!memcmp(la, lb, sizeof la));
		/* saving the loaded model gives the same bytes */
		const char *q = tmp("m2.bin");
		CHECK(llr_rnnlm_save(q, l, NULL, &e) == LLR_OK);
		CHECK(same_file(p, q));
		llr_rnnlm_free(l);
		llr_rnnlm_free(m);
	}
}

static void test_state(void)
{
	llr_rnnlm *m = make_model(LLR_OUT_LOGLINEAR);
	size_t n;
	float *w = llr_net_params(m->net, &n);
	llr_optim_config oc;
	llr_optim_defaults(&oc, LLR_OPT_ADAM);
	oc.lr = 0.005f;
	llr_train_state ts = {.epoch = 2, .batch = 5, .step = 17, .epoch_nll = 12.5, .epoch_tok = 40, .best_valid = 3.25, .best_epoch = 1, .last_valid = INFINITY, .bad_epochs = 1, .halving = 1, .lr = 0.0025};
	llr_rng_seed(&ts.rng_epoch, 1);
	llr_rng_seed(&ts.rng, 2);
	ts.optim = llr_optim_new(&oc, n, NULL);
	float *g = calloc(n, sizeof(float));
	for (size_t i = 0; i < n; i++)
		g[i] = (float)sin((double)i);
	llr_optim_step(ts.optim, w, g);
	float *best = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		best[i] = w[i] * 0.5f;
	ts.best = best;
	const char *p = tmp("s.bin");
	llr_err e = {0};
	CHECK(llr_rnnlm_save(p, m, &ts, &e) == LLR_OK);

	/* plain load: the best weights */
	llr_rnnlm *l = NULL;
	CHECK(llr_rnnlm_load(p, &l, &e) == LLR_OK);
	if (l)
		CHECK(!memcmp(llr_net_params(l->net, NULL), best, n * sizeof(float)));
	llr_rnnlm_free(l);

	/* with state: the current weights, the best aside, everything else */
	llr_train_state *s = NULL;
	int rc = llr_rnnlm_load_state(p, &l, &s, &e);
	CHECK(rc == LLR_OK && s != NULL);
	if (rc == LLR_OK && s) {
		CHECK(!memcmp(llr_net_params(l->net, NULL), w, n * sizeof(float)));
		CHECK(s->best && !memcmp(s->best, best, n * sizeof(float)));
		CHECK(s->epoch == 2 && s->batch == 5 && s->step == 17 && s->epoch_tok == 40);
		CHECK(s->epoch_nll == 12.5 && s->best_valid == 3.25 && s->best_epoch == 1);
		CHECK(isinf(s->last_valid) && s->bad_epochs == 1 && s->halving == 1 && !s->converged);
		CHECK(s->lr == 0.0025);
		CHECK(!memcmp(&s->rng_epoch, &ts.rng_epoch, sizeof ts.rng_epoch));
		CHECK(!memcmp(&s->rng, &ts.rng, sizeof ts.rng));
		CHECK(s->optim && llr_optim_cfg(s->optim)->kind == LLR_OPT_ADAM);
		CHECK(s->optim && llr_optim_cfg(s->optim)->lr == 0.005f);
		CHECK(s->optim && llr_optim_steps(s->optim) == 1);
		for (size_t k = 0; s->optim && k < 2; k++)
			CHECK(!memcmp(llr_optim_state(s->optim, k, NULL), llr_optim_state(ts.optim, k, NULL), n * sizeof(float)));
	}
	llr_train_state_free(s);
	llr_rnnlm_free(l);

	/* a model without state loads with *ts == NULL */
	CHECK(llr_rnnlm_save(p, m, NULL, &e) == LLR_OK);
	s = (llr_train_state *)1;
	CHECK(llr_rnnlm_load_state(p, &l, &s, &e) == LLR_OK && s == NULL);
	llr_rnnlm_free(l);

	free(g);
	free(best);
	llr_optim_free(ts.optim);
	llr_rnnlm_free(m);
}

static long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static void truncate_copy(const char *from, const char *to, long n)
{
	FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
	for (long i = 0; i < n; i++)
		putc(getc(f), g);
	fclose(f);
	fclose(g);
}

static void test_truncated(void)
{
	llr_rnnlm *m = make_model(LLR_OUT_LOGLINEAR);
	const char *p = tmp("t.bin"), *q = tmp("t-cut.bin");
	llr_err e = {0};
	CHECK(llr_rnnlm_save(p, m, NULL, &e) == LLR_OK);
	long sz = file_size(p);
	long cuts[] = {sz / 3, sz / 2, sz - 2000, sz - 1100};
	for (int i = 0; i < 4; i++) {
		truncate_copy(p, q, cuts[i]);
		llr_rnnlm *l = NULL;
		memset(&e, 0, sizeof e);
		int rc = llr_rnnlm_load(q, &l, &e);
		CHECK(rc < 0 && l == NULL);
		CHECK(strstr(e.msg, "t-cut.bin") != NULL);
		if (rc >= 0 || !strstr(e.msg, "t-cut.bin"))
			printf("# cut at %ld of %ld: rc %d: %s\n", cuts[i], sz, rc, e.msg);
		llr_rnnlm_free(l);
	}
	llr_rnnlm_free(m);
}

static void test_nan(void)
{
	llr_rnnlm *m = make_model(LLR_OUT_LOGLINEAR);
	const char *name;
	int nd;
	int64_t shape[2];
	size_t off;
	/* poison one weight of the second tensor */
	llr_net_tensor_info(m->net, 1, &name, &nd, shape, &off);
	llr_net_params(m->net, NULL)[off + 1] = NAN;
	const char *p = tmp("nan.bin");
	llr_err e = {0};
	CHECK(llr_rnnlm_save(p, m, NULL, &e) == LLR_OK);
	llr_rnnlm *l = NULL;
	CHECK(llr_rnnlm_load(p, &l, &e) == LLR_ENAN);
	char want[256];
	snprintf(want, sizeof want, "nan.bin: params/%s: NaN weights", name);
	CHECK(strstr(e.msg, want) != NULL);
	if (!strstr(e.msg, want))
		printf("# %s\n", e.msg);
	llr_rnnlm_free(m);
}

static void test_foreign(void)
{
	/* a features-kind archive is not a model */
	llr_lexicon *x = make_lexicon();
	llr_meta *meta = llr_meta_new();
	llr_lexicon_to_meta(x, meta);
	const char *p = tmp("feat.bin");
	llr_err e = {0};
	llr_tensor_writer *w = llr_tw_open(p, "features", meta, &e);
	CHECK(w != NULL);
	CHECK_OK(llr_lexicon_write(w, x, &e));
	CHECK_OK(llr_tw_close(w, &e));
	llr_rnnlm *l = NULL;
	CHECK(llr_rnnlm_load(p, &l, &e) == LLR_EKIND);
	CHECK(strstr(e.msg, "feat.bin") != NULL);

	/* a model whose meta lacks the configuration */
	w = llr_tw_open(p, "model", meta, &e);
	CHECK_OK(llr_lexicon_write(w, x, &e));
	CHECK_OK(llr_tw_close(w, &e));
	CHECK(llr_rnnlm_load(p, &l, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "output") != NULL);

	/* a model whose params do not fit its configuration */
	llr_meta_set(meta, "output", "loglinear");
	llr_meta_set(meta, "embed", "5");
	llr_meta_set(meta, "hidden", "4");
	llr_meta_set(meta, "layers", "1");
	llr_meta_set(meta, "dropout", "0");
	w = llr_tw_open(p, "model", meta, &e);
	CHECK_OK(llr_lexicon_write(w, x, &e));
	float junk[3] = {0};
	int64_t sh[1] = {3};
	CHECK_OK(llr_tw_put_raw(w, "params/embed", LLR_F32, 1, sh, junk, &e));
	CHECK_OK(llr_tw_close(w, &e));
	memset(&e, 0, sizeof e);
	CHECK(llr_rnnlm_load(p, &l, &e) < 0 && l == NULL);
	CHECK(strstr(e.msg, "feat.bin") != NULL);
	printf("# shape mismatch: %s\n", e.msg);
	/* the message names the member, the shape found and the one expected
	 * (7 input features x embed 5) */
	CHECK(strstr(e.msg, "params/embed") != NULL);
	CHECK(strstr(e.msg, " 3, expected ") != NULL);
	CHECK(strstr(e.msg, "7x5") != NULL);
	CHECK(llr_rnnlm_load(tmp("absent.bin"), &l, &e) < 0);
	llr_meta_free(meta);
	llr_lexicon_free(x);
}

static void test_fits(void)
{
	llr_rnnlm *m = make_model(LLR_OUT_LOGLINEAR);
	llr_lexicon *x = make_lexicon();
	llr_err e = {0};
	CHECK(llr_rnnlm_fits(m, x, &e) == LLR_OK);
	x->logb[2] += 0.5f;
	CHECK(llr_rnnlm_fits(m, x, &e) == LLR_EFORMAT && strstr(e.msg, "background"));
	llr_lexicon_free(x);
	x = make_lexicon();
	llr_strmap_add(x->vocab, "chien", 5);
	CHECK(llr_rnnlm_fits(m, x, &e) == LLR_EFORMAT && strstr(e.msg, "vocabularies differ"));
	llr_lexicon_free(x);
	x = make_lexicon();
	x->phi->data[0] = 2;
	CHECK(llr_rnnlm_fits(m, x, &e) == LLR_EFORMAT && strstr(e.msg, "phi"));
	llr_lexicon_free(x);
	llr_rnnlm_free(m);
	llr_rnnlm_free(NULL);
	llr_train_state_free(NULL);
}

/* llr_rnnlm_new takes the sizes from the lexicon, whatever the config
 * says, gives zero weights, and leaves the lexicon to the caller when it
 * fails. */
static void test_new(void)
{
	for (int output = LLR_OUT_LOGLINEAR; output <= LLR_OUT_SOFTMAX; output++) {
		llr_net_config c = {.vocab = 99, .feat_out = 98, .feat_in = 97, .embed = 3, .hidden = 2, .layers = 1, .output = output};
		llr_err e = {0};
		llr_lexicon *x = make_lexicon();
		/* psi: 3 input features */
		llr_csr_builder *b = llr_csr_builder_new(3);
		for (int i = 0; i < NW; i++) {
			int32_t col = i % 3;
			float v = 1;
			CHECK_OK(llr_csr_builder_row(b, &col, &v, 1, NULL));
		}
		x->psi = llr_csr_builder_finish(b, NULL);
		llr_rnnlm *m = llr_rnnlm_new(x, &c, &e);
		CHECK(m != NULL);
		if (!m) {
			printf("# %s\n", e.msg);
			llr_lexicon_free(x);
			continue;
		}
		const llr_net_config *g = llr_net_cfg(m->net);
		int sm = output == LLR_OUT_SOFTMAX;
		CHECK(m->lex == x && m->meta && llr_meta_count(m->meta) == 0);
		CHECK(g->vocab == NW && g->feat_out == (sm ? NW : 7) && g->feat_in == (sm ? NW : 3));
		CHECK(g->embed == 3 && g->hidden == 2 && g->layers == 1 && g->output == output);
		size_t n;
		const float *p = llr_net_params(m->net, &n);
		size_t nz = 0;
		for (size_t i = 0; i < n; i++)
			nz += p[i] != 0;
		CHECK(n > 0 && nz == 0);
		llr_rnnlm_free(m);

		/* a refused configuration: NULL, the lexicon still ours */
		x = make_lexicon();
		c.hidden = 0;
		CHECK(llr_rnnlm_new(x, &c, &e) == NULL && e.code == LLR_EINVAL);
		CHECK(llr_rnnlm_net_new(x, &c, &e) == NULL && e.code == LLR_EINVAL);
		llr_lexicon_free(x);
	}
	/* a log-linear net needs phi */
	llr_lexicon *x = make_lexicon();
	llr_csr_free(x->phi);
	x->phi = NULL;
	llr_net_config c = {.embed = 3, .hidden = 2, .layers = 1, .output = LLR_OUT_LOGLINEAR};
	llr_err e = {0};
	CHECK(llr_rnnlm_net_new(x, &c, &e) == NULL && e.code == LLR_EINVAL);
	llr_lexicon_free(x);
}

/* A character-aware input and a factored output: the configuration, the
 * character vocabulary and the tree's groups survive the round trip, the
 * loaded model scores unseen words like the saved one, the file is
 * byte-identical when saved again, and a file cut before the groups is
 * refused. */
static void test_chars_tree(void)
{
	const int inputs[] = {LLR_IN_CHARS, LLR_IN_SUM, LLR_IN_CONCAT};
	const int outputs[] = {LLR_OUT_TREE, LLR_OUT_CLASSES, LLR_OUT_SOFTMAX};
	for (int k = 0; k < 3; k++) {
		llr_rnnlm *m = calloc(1, sizeof *m);
		m->lex = make_lexicon();
		llr_err e = {0};
		m->words = llr_words_new(m->lex->vocab, NULL, 0, &e);
		int32_t ncp;
		llr_words_chars(m->words, &ncp);
		llr_net_config c = {.vocab = NW, .embed = 5, .hidden = 4, .layers = 1, .output = outputs[k], .input = inputs[k], .char_vocab = ncp, .char_embed = 3, .char_nw = 2, .char_width = {1, 2}, .char_filters = {2, 3}, .highway = k, .tree_depth = 2, .tree_arity = 2};
		m->net = llr_net_new(&c, NULL, NULL, NULL, &e);
		CHECK(m->net != NULL);
		if (!m->net) {
			printf("# %s\n", e.msg);
			llr_rnnlm_free(m);
			continue;
		}
		llr_net_set_words(m->net, m->words);
		llr_rng r;
		llr_rng_seed(&r, 3);
		llr_net_init(m->net, &r);
		int64_t count[NW] = {5, 9, 1, 7, 3, 2};
		if (outputs[k] != LLR_OUT_SOFTMAX)
			CHECK_OK(llr_net_tree_from_counts(m->net, count, &e));
		m->meta = llr_meta_new();
		const char *p = tmp("c.bin"), *q = tmp("c2.bin");
		CHECK_OK(llr_rnnlm_save(p, m, NULL, &e));
		llr_rnnlm *l = NULL;
		int rc = llr_rnnlm_load(p, &l, &e);
		CHECK(rc == LLR_OK);
		if (rc < 0) {
			printf("# %s\n", e.msg);
			llr_rnnlm_free(m);
			continue;
		}
		const llr_net_config *a = llr_net_cfg(m->net), *b = llr_net_cfg(l->net);
		CHECK(a->input == b->input && a->output == b->output && a->char_vocab == b->char_vocab && a->char_embed == b->char_embed);
		CHECK(a->char_nw == b->char_nw && a->highway == b->highway && a->char_width[1] == b->char_width[1] && a->char_filters[1] == b->char_filters[1]);
		CHECK(a->tree_depth == b->tree_depth && a->tree_arity == b->tree_arity && a->tree_cap == b->tree_cap);
		const int32_t *ga = llr_net_tree_groups(m->net), *gb = llr_net_tree_groups(l->net);
		CHECK(!ga == !gb && (!ga || !memcmp(ga, gb, NW * sizeof *ga)));
		CHECK(l->words != NULL && llr_words_size(l->words) == NW);
		/* an unseen word, spelled out, in both */
		int32_t ua = llr_words_add(m->words, "chats", 5, NULL), ub = llr_words_add(l->words, "chats", 5, NULL);
		CHECK(ua == NW && ub == NW);
		int32_t in[3] = {LLR_BOS_ID, 0, inputs[k] == LLR_IN_CHARS ? NW : 1}, tg[3] = {0, 1, 4};
		llr_batch bt = {.B = 1, .T = 3, .input = in, .target = tg};
		float la[3], lb[3];
		CHECK_OK(llr_net_score(m->net, &bt, la, NULL, NULL));
		CHECK_OK(llr_net_score(l->net, &bt, lb, NULL, NULL));
		CHECK(!memcmp(la, lb, sizeof la));
		CHECK_OK(llr_rnnlm_save(q, l, NULL, &e));
		CHECK(same_file(p, q));
		llr_rnnlm_free(l);
		llr_rnnlm_free(m);
	}
	/* the model of the last round, cut inside its members: refused */
	const char *p = tmp("c.bin"), *q = tmp("c-cut.bin");
	long sz = file_size(p);
	for (long cut = 1536; cut < sz; cut += 1024) {
		truncate_copy(p, q, cut);
		llr_rnnlm *l = NULL;
		llr_err e = {0};
		CHECK(llr_rnnlm_load(q, &l, &e) < 0 && l == NULL);
		llr_rnnlm_free(l);
	}
}

int main(void)
{
	PLAN(8);
	RUN(test_round_trip);
	RUN(test_state);
	RUN(test_truncated);
	RUN(test_nan);
	RUN(test_foreign);
	RUN(test_fits);
	RUN(test_new);
	RUN(test_chars_tree);
	DONE();
}
