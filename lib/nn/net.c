/*
 * net.c - the LSTM language model of DESIGN section 1, assembled from the
 * layers in nn.h: input embedding (sum of psi features, <s> vector), L LSTM
 * layers with optional dropout on each layer's output, the dense adaptor
 * a = W h + c (F outputs) and the log-linear output over V words.  The
 * softmax RNN is the same code with phi = identity and a uniform
 * background.
 *
 * Parameters live in one flat float array, in this fixed order:
 *   embed     F_in x E   uniform(-0.08, 0.08)
 *   bos       E          uniform(-0.08, 0.08)
 *   lstmL/wx  Din x 4H   uniform(-0.08, 0.08)   (Din = E for L = 0, else H)
 *   lstmL/wh  H x 4H     uniform(-0.08, 0.08)
 *   lstmL/b   4H         0, forget gate (columns H..2H) 1
 *   out/w     F x H      uniform(-0.08, 0.08)
 *   out/b     F          0 (so the untrained LL-RNN predicts b)
 * With a character-aware input (input != LLR_IN_WORD; charin.c) the
 * embed and bos tensors are there only when the psi embedding is kept
 * (LLR_IN_CONCAT, LLR_IN_SUM), and after them come
 *   chars/embed    C x dc    uniform(-0.08, 0.08)   (C = 7 + code points)
 *   chars/convK/w  w*dc x nf uniform(-0.08, 0.08)   per filter width
 *   chars/convK/b  nf        0
 *   highwayL/w     D x 2D    uniform(-0.08, 0.08)   (D: the filters)
 *   highwayL/b     2D        0, transform gate (columns D..2D) -2
 * and with a tree or classes output (nettree.c), out/w and out/b are
 * replaced by tree/nodes/w, tree/nodes/b, tree/words/w, tree/words/b.
 * A variable-computation cell (cfg.cell, one layer; netvc.c) has vc0/wx,
 * vc0/wh, vc0/bx, vc0/bh (VCGRU only), vc0/u, vc0/ub in place of the
 * LSTM's tensors, drawn as the other matrices and biases are (u, ub as
 * matrices: the scheduler starts near m_t = 1/2).  The dense GRU and
 * Elman RNN are the same layer without the scheduler: gru0/wx, gru0/wh,
 * gru0/bx, gru0/bh, or rnn0/wx, rnn0/wh, rnn0/bx.
 * Gradients have the same layout.  Workspace for a batch is allocated on
 * first use and grown on demand: no allocation per step once the largest
 * batch has been seen.  A net is not safe to use from two threads at once.
 * Not here: the optimiser, batching of sentences and the model file.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netx.h"

#define MAX_LAYERS 64
/* Bound on the F x positions block of the output layer (both A and dA):
 * longer batches go through the output layer in slices of positions. */
#define OUT_BUDGET ((size_t)256 << 20)

/* One group of llr_net_score's threaded split: its streams (columns of
 * the caller's batch, longest first) copied into a batch of their own. */
typedef struct score_group {
	llr_net *net; /* the net itself for group 0, else a copy sharing its weights */
	const llr_csr *psi;
	const llr_csr *xphi; /* an open vocabulary's rows of the batch (shared) */
	const float *xlogb;
	int *cols;
	int B, T;
	int32_t *in, *tg;
	float *lp, *sched; /* sched: the batch's m_t, when wanted */
	size_t cap;
	llr_norm_stat norm;
	int want_norm, want_sched;
	int rc;
	llr_err err;
	pthread_t th;
} score_group;

typedef struct tinfo {
	char name[24];
	int ndim;
	int64_t shape[2];
	size_t off;
} tinfo;

struct llr_net {
	llr_net_config cfg;
	llr_ll out;
	llr_ll_classes out_cls;
	const llr_csr *psi;
	llr_csr *own_eye;
	float *own_logb;

	float *params, *grads;
	size_t nparams;
	size_t have; /* params allocated so far (llr_net_params_grow) */
	tinfo ti[3 + 3 * MAX_LAYERS + 4 + 1 + 2 * LLR_CNN_MAX_WIDTHS + 2 * LLR_MAX_HIGHWAY];
	size_t nt;
	size_t o_emb, o_bos, o_wx[MAX_LAYERS], o_wh[MAX_LAYERS], o_b[MAX_LAYERS], o_ow, o_ob;

	/* workspace for N positions of B streams */
	size_t capN;
	int capB, slice; /* slice: positions per output-layer pass */
	size_t budget;   /* bytes for A and dA */
	int32_t *in, *tg;
	float *x0;
	float *act[MAX_LAYERS], *c[MAX_LAYERS], *tc[MAX_LAYERS], *h[MAX_LAYERS];
	float *hd[MAX_LAYERS], *mask[MAX_LAYERS]; /* dropout output and mask */
	float *A, *dA, *dz, *dh, *dx, *dc;
	float *llwork;
	double *chunk;
	int llthreads;

	/* a one-layer cell of netvc.c in place of the LSTM: a
	 * variable-computation cell, or the dense GRU or Elman RNN */
	int vc_layer;
	llr_netvc vc;

	/* character-aware input and factored outputs (netx.h) */
	int din0;     /* the LSTM's input width */
	int has_emb;  /* the psi embedding is part of the input */
	int factored; /* tree or classes output */
	const llr_words *words;
	llr_charin ci;
	llr_treeout tree;
	float *xe; /* LLR_IN_CONCAT: N x E, the embedding and its gradient */

	/* a context-dependent background (llr_net_set_ngram_bg): the
	 * context of every position, ctxlen n-gram ids each, oldest first */
	const llr_ngram_bg *bg;
	int32_t *ctx;
	size_t ctx_cap; /* positions ctx holds */
	/* an automaton background (llr_net_set_fsa_bg): then each
	 * position's context ends with the automaton's state after the
	 * prefix (-1: the prefix is rejected); an unseen word's input is
	 * read as fsa_unk */
	const llr_fsa *fsa;
	int32_t fsa_unk;

	/* llr_net_rows: the row-sparse blocks of the last training batch */
	llr_rows rblk[3];
	int nrblk;
	unsigned char *rmark; /* max(feat_in, V) zeros between calls */
	int32_t *remb, *rword;
	size_t rmark_cap, remb_cap, rword_cap;

	/* an open vocabulary (llr_net_set_open): the output's background
	 * over V, its classes then grouping V and the signature rows;
	 * out_rows the rows of its pass (llwork's size); the rows of the
	 * current batch's targets outside V */
	float *open_logb;
	int open, out_rows;
	const llr_csr *xphi;
	const float *xlogb;
	/* llr_net_set_norm_rows: the rows' log weights (llr_ll's
	 * nrm_logw), the norm check's figures of the last scoring call */
	float *nrm_lw;
	llr_norm_stat nstat;

	int shared;        /* params are another net's (a scoring copy) */
	score_group *grp;  /* llr_net_set_score_threads: ngrp groups */
	int ngrp, grp_cap; /* grp_cap: streams each group's cols can hold */
};

/* The n-gram words a stream has read, oldest first (-1: none), for a
 * context-dependent background. */
#define HIST (LLR_NGRAM_MAX_ORDER - 1)

struct llr_net_state {
	int B, L, H;
	float *h, *c;  /* L x B x H each */
	int32_t *hist; /* B x HIST */
	int32_t *fq;   /* B: the automaton's state (-1: none or rejected) */
};

/* The context of a position: the n-gram's ids, then the automaton's
 * state; how many int32 (0: no context-dependent background). */
static size_t ctx_width(const llr_net *net)
{
	return (net->bg ? (size_t)llr_ngram_bg_ctxlen(net->bg) : 0) + (net->fsa != NULL);
}

static void add_tensor(llr_net *net, const char *name, int ndim, int64_t d0, int64_t d1, size_t *off)
{
	tinfo *t = &net->ti[net->nt++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->ndim = ndim;
	t->shape[0] = d0;
	t->shape[1] = ndim > 1 ? d1 : 0;
	t->off = net->nparams;
	*off = net->nparams;
	net->nparams += (size_t)d0 * (size_t)(ndim > 1 ? d1 : 1);
}

static int din_of(const llr_net *net, int l)
{
	return l ? net->cfg.hidden : net->din0;
}

/* The input's tensors (psi embedding and/or characters). */
static void add_input_tensors(llr_net *net)
{
	const llr_net_config *cf = &net->cfg;
	int E = cf->embed;
	net->has_emb = cf->input != LLR_IN_CHARS;
	net->din0 = E;
	if (net->has_emb) {
		add_tensor(net, "embed", 2, cf->feat_in, E, &net->o_emb);
		add_tensor(net, "bos", 1, E, 0, &net->o_bos);
	}
	if (cf->input == LLR_IN_WORD)
		return;
	llr_charin *ci = &net->ci;
	llr_conv *c = &ci->conv;
	int dc = cf->char_embed;
	char nm[24];
	c->dc = dc;
	c->nw = cf->char_nw;
	add_tensor(net, "chars/embed", 2, LLR_CH_FIRST + cf->char_vocab, dc, &ci->o_emb);
	for (int k = 0; k < c->nw; k++) {
		c->width[k] = cf->char_width[k];
		c->nf[k] = cf->char_filters[k];
		c->off[k] = c->D;
		c->D += c->nf[k];
		snprintf(nm, sizeof nm, "chars/conv%d/w", k);
		add_tensor(net, nm, 2, (int64_t)c->width[k] * dc, c->nf[k], &ci->o_K[k]);
		snprintf(nm, sizeof nm, "chars/conv%d/b", k);
		add_tensor(net, nm, 1, c->nf[k], 0, &ci->o_b[k]);
	}
	ci->D = c->D;
	ci->hw = cf->highway;
	for (int l = 0; l < ci->hw; l++) {
		snprintf(nm, sizeof nm, "highway%d/w", l);
		add_tensor(net, nm, 2, ci->D, 2 * ci->D, &ci->o_hw[l]);
		snprintf(nm, sizeof nm, "highway%d/b", l);
		add_tensor(net, nm, 1, 2 * ci->D, 0, &ci->o_hb[l]);
	}
	net->din0 = cf->input == LLR_IN_CHARS ? ci->D : cf->input == LLR_IN_CONCAT ? E + ci->D
	                                                                           : E;
}

/* The output's tensors. */
static void add_output_tensors(llr_net *net)
{
	const llr_net_config *cf = &net->cfg;
	int H = cf->hidden;
	if (!net->factored) {
		add_tensor(net, "out/w", 2, cf->feat_out, H, &net->o_ow);
		add_tensor(net, "out/b", 1, cf->feat_out, 0, &net->o_ob);
		return;
	}
	llr_treeout *o = &net->tree;
	int64_t R = (int64_t)o->t.nodes * o->t.arity;
	add_tensor(net, "tree/nodes/w", 2, R, H, &o->o_wn);
	add_tensor(net, "tree/nodes/b", 1, R, 0, &o->o_bn);
	add_tensor(net, "tree/words/w", 2, cf->vocab, H, &o->o_ww);
	add_tensor(net, "tree/words/b", 1, cf->vocab, 0, &o->o_bw);
}

static const char *const cell_names[LLR_CELL_COUNT] = {
    [LLR_CELL_LSTM] = "lstm", [LLR_CELL_GRU] = "gru", [LLR_CELL_RNN] = "rnn", [LLR_CELL_VCRNN] = "vcrnn", [LLR_CELL_VCGRU] = "vcgru"};

const char *llr_cell_name(int cell)
{
	return cell >= 0 && cell < LLR_CELL_COUNT ? cell_names[cell] : NULL;
}

int llr_cell_is_vc(int cell)
{
	return cell == LLR_CELL_VCRNN || cell == LLR_CELL_VCGRU;
}

/* The cell: the LSTM, or one layer of netvc.c (a variable-computation
 * one with lambda > 0). */
static int check_cell(const llr_net_config *c, llr_err *err)
{
	if (c->cell == LLR_CELL_LSTM)
		return LLR_OK;
	if (!llr_cell_name(c->cell))
		return llr_err_set(err, LLR_EINVAL, "network: unknown cell %d", c->cell);
	if (c->layers != 1)
		return llr_err_set(err, LLR_EINVAL, "network: %d layers: the %s cell has one layer", c->layers, llr_cell_name(c->cell));
	if (llr_cell_is_vc(c->cell) && !(c->vc_lambda > 0.0f && isfinite(c->vc_lambda)))
		return llr_err_set(err, LLR_EINVAL, "network: the mask's sharpness %g must be positive", (double)c->vc_lambda);
	return LLR_OK;
}

/* The layer's tensors of netvc.c (after the input's): the scheduler's u
 * and ub for a variable-computation cell only. */
static void add_vc_tensors(llr_net *net)
{
	llr_netvc *v = &net->vc;
	llr_netvc_init(v, net->cfg.cell, net->din0, net->cfg.hidden);
	int64_t GH = (int64_t)v->G * v->H;
	static const char *const part[] = {"wx", "wh", "bx", "bh"};
	size_t *off[] = {&v->o_wx, &v->o_wh, &v->o_bx, &v->o_bh};
	int64_t rows[] = {v->Din, v->H, GH, GH};
	for (int i = 0; i < (v->G == LLR_VC_GRU ? 4 : 3); i++) {
		char nm[24];
		snprintf(nm, sizeof nm, "%s0/%s", v->sched ? "vc" : llr_cell_name(net->cfg.cell), part[i]);
		add_tensor(net, nm, i < 2 ? 2 : 1, rows[i], i < 2 ? GH : 0, off[i]);
	}
	if (!v->sched)
		return;
	add_tensor(net, "vc0/u", 1, (int64_t)v->Din + v->H, 0, &v->o_u);
	add_tensor(net, "vc0/ub", 1, 1, 0, &v->o_ub);
}

/* llr_net_new, with its parameters and gradients allocated or (empty)
 * left for llr_net_params_grow. */
static llr_net *net_new(const llr_net_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, int empty, llr_err *err)
{
	llr_net_config cf = *c;
	if (cf.vocab <= 0 || cf.embed <= 0 || cf.hidden <= 0)
		return llr_err_set(err, LLR_EINVAL, "network: vocabulary, embedding and hidden sizes must be positive"), NULL;
	if (cf.layers < 1 || cf.layers > MAX_LAYERS)
		return llr_err_set(err, LLR_EINVAL, "network: %d layers: must be 1 to %d", cf.layers, MAX_LAYERS), NULL;
	if (!(cf.dropout >= 0.0f && cf.dropout < 1.0f))
		return llr_err_set(err, LLR_EINVAL, "network: dropout %g: must be in [0, 1)", (double)cf.dropout), NULL;
	if ((int64_t)cf.hidden * 4 > INT32_MAX / 4)
		return llr_err_set(err, LLR_ERANGE, "network: hidden size %d too large", cf.hidden), NULL;
	if (llr_charin_check(&cf, err) < 0)
		return NULL;
	int factored = cf.output == LLR_OUT_TREE || cf.output == LLR_OUT_CLASSES;
	if (!factored)
		cf.tree_depth = cf.tree_arity = cf.tree_cap = 0;
	if (cf.input == LLR_IN_WORD) {
		cf.char_vocab = cf.char_embed = cf.char_nw = cf.highway = 0;
		memset(cf.char_width, 0, sizeof cf.char_width);
		memset(cf.char_filters, 0, sizeof cf.char_filters);
	}
	if (cf.output == LLR_OUT_SOFTMAX || factored) {
		if ((cf.feat_out && cf.feat_out != cf.vocab) || (cf.feat_in && cf.feat_in != cf.vocab))
			return llr_err_set(err, LLR_EINVAL, "network: softmax output: feature counts must equal the vocabulary size %d", cf.vocab), NULL;
		cf.feat_out = cf.feat_in = cf.vocab;
	} else if (cf.output == LLR_OUT_LOGLINEAR) {
		if (!phi || !logb)
			return llr_err_set(err, LLR_EINVAL, "network: log-linear output needs phi and a background"), NULL;
		const llr_csr *ps = psi ? psi : phi;
		if (phi->rows != cf.vocab || phi->cols != cf.feat_out)
			return llr_err_set(err, LLR_EINVAL, "network: phi is %dx%d, expected %dx%d", phi->rows, phi->cols, cf.vocab, cf.feat_out), NULL;
		if (ps->rows != cf.vocab || ps->cols != cf.feat_in)
			return llr_err_set(err, LLR_EINVAL, "network: psi is %dx%d, expected %dx%d", ps->rows, ps->cols, cf.vocab, cf.feat_in), NULL;
		if (cf.feat_out <= 0 || cf.feat_in <= 0)
			return llr_err_set(err, LLR_EINVAL, "network: no features"), NULL;
		for (int32_t v = 0; v < cf.vocab; v++)
			if (isnan(logb[v]) || logb[v] == INFINITY)
				return llr_err_set(err, LLR_ENAN, "network: background of word %d is %g", v, (double)logb[v]), NULL;
	} else {
		return llr_err_set(err, LLR_EINVAL, "network: unknown output kind %d", cf.output), NULL;
	}

	if (check_cell(&cf, err) < 0)
		return NULL;
	llr_net *net = calloc(1, sizeof *net);
	if (!net)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory"), NULL;
	net->cfg = cf;
	net->vc_layer = cf.cell != LLR_CELL_LSTM;
	net->factored = factored;
	net->budget = OUT_BUDGET;
	if (factored && llr_treeout_init(&net->tree, &net->cfg, err) < 0) {
		llr_net_free(net);
		return NULL;
	}
	net->out.V = cf.vocab;
	net->out.F = cf.feat_out;
	if (cf.output != LLR_OUT_LOGLINEAR) {
		net->own_eye = llr_csr_identity(cf.vocab, err);
		net->own_logb = llr_malloc((size_t)cf.vocab * sizeof *net->own_logb);
		if (!net->own_eye || !net->own_logb) {
			llr_net_free(net);
			return llr_err_set(err, LLR_ENOMEM, "network: out of memory"), NULL;
		}
		float u = (float)-log((double)cf.vocab);
		for (int32_t v = 0; v < cf.vocab; v++)
			net->own_logb[v] = u;
		net->out.phi = net->own_eye;
		net->out.logb = net->own_logb;
		net->out.identity = 1;
		net->psi = net->own_eye;
	} else {
		net->out.phi = phi;
		net->out.logb = logb;
		net->psi = psi ? psi : phi;
		if (llr_ll_classes_build(&net->out_cls, phi, logb, err) < 0) {
			llr_net_free(net);
			return NULL;
		}
		net->out.cls = &net->out_cls;
	}

	int H = cf.hidden;
	add_input_tensors(net);
	for (int l = 0; !net->vc_layer && l < cf.layers; l++) {
		char nm[24];
		snprintf(nm, sizeof nm, "lstm%d/wx", l);
		add_tensor(net, nm, 2, din_of(net, l), 4 * H, &net->o_wx[l]);
		snprintf(nm, sizeof nm, "lstm%d/wh", l);
		add_tensor(net, nm, 2, H, 4 * H, &net->o_wh[l]);
		snprintf(nm, sizeof nm, "lstm%d/b", l);
		add_tensor(net, nm, 1, 4 * H, 0, &net->o_b[l]);
	}
	if (net->vc_layer)
		add_vc_tensors(net);
	add_output_tensors(net);
	if (!empty && !llr_net_params_grow(net, net->nparams, err)) {
		llr_net_free(net);
		return NULL;
	}
	return net;
}

llr_net *llr_net_new(const llr_net_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err)
{
	return net_new(c, phi, psi, logb, 0, err);
}

llr_net *llr_net_new_empty(const llr_net_config *c, const llr_csr *phi, const llr_csr *psi, const float *logb, llr_err *err)
{
	return net_new(c, phi, psi, logb, 1, err);
}

float *llr_net_params_grow(llr_net *net, size_t n, llr_err *err)
{
	LLR_ASSERT(n <= net->nparams && !net->shared);
	return llr_weights_grow(&net->params, &net->have, &net->grads, n, net->nparams, "network", err);
}

/* The workspace that grows with the positions of a batch. */
static void free_ws(llr_net *net)
{
	free(net->in);
	free(net->tg);
	free(net->x0);
	for (int l = 0; l < MAX_LAYERS; l++) {
		free(net->act[l]);
		free(net->c[l]);
		free(net->tc[l]);
		free(net->h[l]);
		free(net->hd[l]);
		free(net->mask[l]);
		net->act[l] = net->c[l] = net->tc[l] = net->h[l] = net->hd[l] = net->mask[l] = NULL;
	}
	free(net->dz);
	free(net->dh);
	free(net->dx);
	free(net->xe);
	net->in = net->tg = NULL;
	net->x0 = net->dz = net->dh = net->dx = net->xe = NULL;
	net->capN = 0;
}

/* The workspace, the output layer's blocks included. */
static void free_all_ws(llr_net *net)
{
	free_ws(net);
	free(net->A);
	free(net->dA);
	free(net->chunk);
	free(net->ctx);
	net->A = net->dA = NULL;
	net->chunk = NULL;
	net->ctx = NULL;
	net->ctx_cap = 0;
}

static void free_groups(llr_net *net)
{
	for (int g = 0; g < net->ngrp; g++) {
		score_group *w = &net->grp[g];
		if (g > 0)
			llr_net_free(w->net);
		free(w->cols);
		free(w->in);
		free(w->tg);
		free(w->lp);
		free(w->sched);
	}
	free(net->grp);
	net->grp = NULL;
	net->ngrp = net->grp_cap = 0;
}

void llr_net_free(llr_net *net)
{
	if (!net)
		return;
	free_all_ws(net);
	free(net->dc);
	free(net->llwork);
	free_groups(net);
	if (!net->shared)
		free(net->params);
	free(net->grads);
	llr_csr_free(net->own_eye);
	llr_ll_classes_free(&net->out_cls);
	free(net->open_logb);
	free(net->nrm_lw);
	llr_charin_free(&net->ci);
	llr_netvc_free(&net->vc);
	if (net->factored)
		llr_treeout_free(&net->tree);
	free(net->own_logb);
	free(net->rmark);
	free(net->remb);
	free(net->rword);
	free(net);
}

void llr_net_set_out_budget(llr_net *net, size_t bytes)
{
	free_all_ws(net);
	net->budget = bytes;
}

const llr_net_config *llr_net_cfg(const llr_net *net)
{
	return &net->cfg;
}

float *llr_net_params(llr_net *net, size_t *n)
{
	if (n)
		*n = net->nparams;
	return net->params;
}

float *llr_net_grads(llr_net *net, size_t *n)
{
	if (n)
		*n = net->nparams;
	return net->grads;
}

size_t llr_net_n_tensors(const llr_net *net)
{
	return net->nt;
}

float *llr_net_tensor(llr_net *net, const char *name, int64_t shape[2])
{
	for (size_t i = 0; i < net->nt; i++) {
		const tinfo *t = &net->ti[i];
		if (strcmp(t->name, name))
			continue;
		if (shape) {
			shape[0] = t->shape[0];
			shape[1] = t->shape[1];
		}
		return net->params + t->off;
	}
	return NULL;
}

void llr_net_tensor_info(const llr_net *net, size_t i, const char **name, int *ndim, int64_t shape[2], size_t *offset)
{
	LLR_ASSERT(i < net->nt);
	const tinfo *t = &net->ti[i];
	if (name)
		*name = t->name;
	if (ndim)
		*ndim = t->ndim;
	if (shape) {
		shape[0] = t->shape[0];
		shape[1] = t->shape[1];
	}
	if (offset)
		*offset = t->off;
}

void llr_net_init_scheme(llr_net *net, llr_rng *rng, int scheme)
{
	int H = net->cfg.hidden;
	double r = 1.0 / sqrt((double)H);
	for (size_t i = 0; i < net->nt; i++) {
		const tinfo *t = &net->ti[i];
		float *p = net->params + t->off;
		size_t n = (size_t)t->shape[0] * (size_t)(t->ndim > 1 ? t->shape[1] : 1);
		int is_bias = strstr(t->name, "/b") && t->ndim == 1;
		int is_lstm = strncmp(t->name, "lstm", 4) == 0;
		int is_embedding = !strcmp(t->name, "embed") || !strcmp(t->name, "bos") || !strcmp(t->name, "chars/embed");
		for (size_t k = 0; k < n; k++) {
			if (scheme == LLR_INIT_TORCH && is_embedding)
				p[k] = (float)llr_rng_normal(rng);
			else if (scheme == LLR_INIT_TORCH && is_bias && is_lstm)
				p[k] = (float)(r * (2 * llr_rng_uniform(rng) - 1) + r * (2 * llr_rng_uniform(rng) - 1));
			else if (scheme == LLR_INIT_TORCH)
				p[k] = (float)(r * (2 * llr_rng_uniform(rng) - 1));
			else
				p[k] = is_bias ? 0.0f : (float)(0.16 * llr_rng_uniform(rng) - 0.08);
		}
		if (scheme != LLR_INIT_TORCH && is_bias && is_lstm)
			for (int j = H; j < 2 * H; j++)
				p[j] = 1.0f;
		/* Kim et al.: the transform gates start closed, carrying y */
		if (is_bias && !strncmp(t->name, "highway", 7))
			for (size_t j = n / 2; j < n; j++)
				p[j] = -2.0f;
	}
}

void llr_net_init(llr_net *net, llr_rng *rng)
{
	llr_net_init_scheme(net, rng, LLR_INIT_UNIFORM);
}

/* Make the workspace hold N positions of B streams, with dropout masks
 * when needed and dA when training. */
static int ensure_ws(llr_net *net, size_t N, int B, int train, llr_err *err)
{
	const llr_net_config *cf = &net->cfg;
	size_t E = (size_t)cf->embed, H = (size_t)cf->hidden, F = net->factored ? 1 : (size_t)cf->feat_out;
	size_t I = (size_t)net->din0;
	int th = llr_blas_threads();
	int drop = train && cf->dropout > 0.0f;

	/* The output layer's F x slice blocks: at most the budget, grown
	 * (doubling) only when a batch needs more, so they are reallocated,
	 * and their pages faulted in afresh, a few times only. */
	size_t cap = net->budget / (F * 2 * sizeof(float));
	cap = cap / LLR_LL_CHUNK * LLR_LL_CHUNK;
	if (cap < LLR_LL_CHUNK)
		cap = LLR_LL_CHUNK;
	if (cap > INT32_MAX / 2)
		cap = INT32_MAX / 2 / LLR_LL_CHUNK * LLR_LL_CHUNK;
	size_t need = LLR_MIN(N, cap);
	if (!net->A || need > (size_t)net->slice) {
		size_t slice = net->A ? LLR_MIN(cap, LLR_MAX(need, 2 * (size_t)net->slice)) : need;
		free(net->A);
		free(net->dA);
		free(net->chunk);
		net->dA = NULL;
		if (!(net->A = llr_calloc(F * slice, sizeof(float))) ||
		    !(net->chunk = llr_malloc(llr_ll_chunk_size((int)slice) * sizeof(double)))) {
			free_all_ws(net);
			return llr_err_set(err, LLR_ENOMEM, "network: out of memory for the output layer's %zu x %zu block", F, slice);
		}
		net->slice = (int)slice;
	}
	if (N > net->capN) {
		/* grow by half at least: batches of slowly rising sizes then
		 * reallocate (and fault in fresh pages) a few times only */
		if (net->capN && N < net->capN + net->capN / 2)
			N = net->capN + net->capN / 2;
		free_ws(net);
		size_t D = LLR_MAX(I, H);
		int ok = (net->in = llr_malloc(N * sizeof *net->in)) && (net->tg = llr_malloc(N * sizeof *net->tg)) &&
		         (net->x0 = llr_malloc(N * I * sizeof(float))) &&
		         (cf->input != LLR_IN_CONCAT || (net->xe = llr_malloc(N * E * sizeof(float)))) &&
		         (net->dz = llr_malloc(N * 4 * H * sizeof(float))) && (net->dh = llr_malloc(N * H * sizeof(float))) &&
		         (net->dx = llr_malloc(N * D * sizeof(float)));
		for (int l = 0; ok && l < cf->layers; l++)
			ok = (net->act[l] = llr_malloc(N * 4 * H * sizeof(float))) && (net->c[l] = llr_malloc(N * H * sizeof(float))) &&
			     (net->tc[l] = llr_malloc(N * H * sizeof(float))) && (net->h[l] = llr_malloc(N * H * sizeof(float)));
		if (!ok) {
			free_ws(net);
			return llr_err_set(err, LLR_ENOMEM, "network: out of memory for a batch of %zu positions", N);
		}
		net->capN = N;
	}
	if (net->vc_layer && llr_netvc_ensure(&net->vc, net->capN, B) < 0)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory for a batch of %zu positions", N);
	if ((net->bg || net->fsa) && net->ctx_cap < N) {
		size_t m = ctx_width(net);
		free(net->ctx);
		net->ctx_cap = 0;
		if (!(net->ctx = llr_malloc(LLR_MAX(N, net->capN) * (m ? m : 1) * sizeof *net->ctx)))
			return llr_err_set(err, LLR_ENOMEM, "network: out of memory for a batch of %zu positions", N);
		net->ctx_cap = LLR_MAX(N, net->capN);
	}
	if (train && !net->dA && !(net->dA = llr_calloc(F * (size_t)net->slice, sizeof(float))))
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory for a batch of %zu positions", N);
	for (int l = 0; drop && l < cf->layers; l++)
		if (!net->hd[l] && !((net->hd[l] = llr_malloc(net->capN * H * sizeof(float))) && (net->mask[l] = llr_malloc(net->capN * H * sizeof(float)))))
			return llr_err_set(err, LLR_ENOMEM, "network: out of memory for a batch of %zu positions", N);
	if (B > net->capB) {
		free(net->dc);
		if (!(net->dc = llr_malloc((size_t)B * H * sizeof(float)))) {
			net->capB = 0;
			return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
		}
		net->capB = B;
	}
	if (th != net->llthreads && !net->factored) {
		free(net->llwork);
		if (!(net->llwork = llr_malloc(llr_ll_work_size(LLR_MAX(cf->vocab, net->out_rows), th) * sizeof(float)))) {
			net->llthreads = 0;
			return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
		}
		net->llthreads = th;
	}
	return LLR_OK;
}

/* The automaton background's state after input x from state q (-1:
 * rejected): <s> starts it; an unseen word's row (an input id past the
 * vocabulary) is read as <unk>; padding is rejected. */
static int32_t fsa_step(const llr_net *net, int32_t q, int32_t x)
{
	if (x == LLR_BOS_ID)
		return llr_fsa_start(net->fsa);
	if (q < 0)
		return -1;
	if (x >= net->cfg.vocab)
		x = net->fsa_unk;
	return x >= 0 ? llr_fsa_next(net->fsa, q, x, NULL) : -1;
}

/* The n-gram context of every position of a batch (a context-dependent
 * background): the inputs read so far in the stream back to its <s>,
 * the last ctxlen of them as n-gram ids, oldest first, -1 before <s>
 * (or before the batch's first step when a stream does not start with
 * <s>).  An input that is not a lexicon word (an unseen word's row,
 * padding) is the n-gram's <unk>.  Each automaton state is made ready
 * here (llr_fsa_ready: a grammar's may fail), so the output layer's
 * threads only read them. */
static int batch_contexts(llr_net *net, const llr_batch *bt, llr_err *err)
{
	int m = net->bg ? llr_ngram_bg_ctxlen(net->bg) : 0, B = bt->B, w = (int)ctx_width(net);
	int32_t bos = net->bg ? llr_ngram_bos(llr_ngram_bg_model(net->bg)) : -1;
	for (size_t n = 0; net->fsa && n < (size_t)bt->T * B; n++) {
		/* the automaton's state after the stream's inputs back to its
		 * <s> (-1 when the stream does not start with one) */
		int32_t *q = net->ctx + n * (size_t)w + m;
		*q = fsa_step(net, n < (size_t)B ? -1 : q[-(ptrdiff_t)B * w], bt->input[n]);
		if (*q >= 0 && llr_fsa_ready(net->fsa, *q, err) < 0)
			return llr_err_code(err, LLR_ENOMEM);
	}
	for (size_t n = 0; m && n < (size_t)bt->T * B; n++) {
		int t = (int)(n / B), b = (int)(n % B), stop = 0;
		int32_t *c = net->ctx + n * (size_t)w;
		for (int k = 0; k < m; k++) {
			int32_t v = -1;
			if (!stop && t - k >= 0) {
				int32_t x = bt->input[(size_t)(t - k) * B + b];
				stop = x == LLR_BOS_ID;
				v = stop ? bos : llr_ngram_bg_map(net->bg, x);
			} else {
				stop = 1;
			}
			c[m - 1 - k] = v;
		}
	}
	return LLR_OK;
}

/* Validate a batch and fill net->in (input ids, LLR_PAD_IN for padding
 * positions whose input is not a valid id) and net->tg. */
static int load_batch(llr_net *net, const llr_batch *bt, const llr_csr *psi, int need_target, llr_err *err)
{
	size_t N = (size_t)bt->T * bt->B;
	int32_t rows = psi->rows;
	if (net->cfg.input != LLR_IN_WORD) {
		if (!net->words)
			return llr_err_set(err, LLR_EINVAL, "network: a character-aware input needs the words' spellings (llr_net_set_words)");
		int32_t nw = llr_words_size(net->words);
		rows = net->cfg.input == LLR_IN_CHARS ? nw : LLR_MIN(rows, nw);
	}
	for (size_t n = 0; n < N; n++) {
		int t = (int)(n / bt->B), b = (int)(n % bt->B);
		int32_t y = bt->target ? bt->target[n] : -1;
		int32_t x = bt->input[n];
		int32_t ny = net->cfg.vocab + (bt->xphi ? bt->xphi->rows : net->out.X);
		if (y < -1 || y >= ny)
			return llr_err_set(err, LLR_EINVAL, "batch: step %d, stream %d: target %d out of range [0, %d)", t, b, y, ny);
		int valid = x == LLR_BOS_ID || (x >= 0 && x < rows);
		if (!valid && (y >= 0 || !need_target))
			return llr_err_set(err, LLR_EINVAL, "batch: step %d, stream %d: input %d out of range [0, %d)", t, b, x, rows);
		net->in[n] = valid ? x : LLR_PAD_IN;
		net->tg[n] = y;
	}
	if ((net->bg || net->fsa) && bt->T > 0 && bt->target) {
		int rc = batch_contexts(net, bt, err);
		if (rc < 0)
			return rc;
	}
	net->xphi = bt->xphi;
	net->xlogb = bt->xlogb;
	return LLR_OK;
}

static int check_psi(const llr_net *net, const llr_csr *psi, llr_err *err)
{
	if (psi && psi->cols != net->cfg.feat_in)
		return llr_err_set(err, LLR_EINVAL, "batch: input features have %d columns, the network %d", psi->cols, net->cfg.feat_in);
	return LLR_OK;
}

static float *layer_out(llr_net *net, int l, int drop)
{
	return drop ? net->hd[l] : net->h[l];
}

/* Embedding and LSTM stack over T x B positions (net->in); dropout masks
 * drawn from rng when drop.  h0/c0: per-layer initial states (L x B x H)
 * or NULL for zeros. */
/* The LSTM stack over T steps of B streams (rows: the live streams of each
 * step, see llr_lstm_io).  keep: every layer keeps its gates and cells
 * (training and llr_net_step need them); otherwise the layers share layer
 * 0's, and only each layer's h is kept. */
/* The LSTM's input x0 (N x din0) from net->in: the psi embedding, the
 * character vectors, or both side by side or summed. */
static int forward_input(llr_net *net, const llr_csr *psi, size_t N)
{
	const llr_net_config *cf = &net->cfg;
	const float *P = net->params;
	int E = cf->embed, I = net->din0;
	if (cf->input == LLR_IN_CONCAT) {
		llr_embed_forward(psi, P + net->o_emb, P + net->o_bos, E, net->in, N, net->xe);
		for (size_t n = 0; n < N; n++)
			memcpy(net->x0 + n * I, net->xe + n * E, (size_t)E * sizeof(float));
	} else if (net->has_emb) {
		llr_embed_forward(psi, P + net->o_emb, P + net->o_bos, E, net->in, N, net->x0);
	}
	if (cf->input == LLR_IN_WORD)
		return LLR_OK;
	int off = cf->input == LLR_IN_CONCAT ? E : 0;
	return llr_charin_forward(&net->ci, P, net->words, net->in, N, net->x0 + off, I, cf->input == LLR_IN_SUM);
}

/* Its backward from dx (N x din0). */
static int backward_input(llr_net *net, const llr_csr *psi, size_t N, const float *dx)
{
	const llr_net_config *cf = &net->cfg;
	float *G = net->grads;
	int E = cf->embed, I = net->din0;
	if (cf->input == LLR_IN_CONCAT) {
		for (size_t n = 0; n < N; n++)
			memcpy(net->xe + n * E, dx + n * I, (size_t)E * sizeof(float));
		llr_embed_backward(psi, E, net->in, N, net->xe, G + net->o_emb, G + net->o_bos);
	} else if (net->has_emb) {
		llr_embed_backward(psi, E, net->in, N, dx, G + net->o_emb, G + net->o_bos);
	}
	if (cf->input == LLR_IN_WORD)
		return LLR_OK;
	int off = cf->input == LLR_IN_CONCAT ? E : 0;
	return llr_charin_backward(&net->ci, net->params, G, net->words, N, dx + off, I);
}

static int forward_rnn(llr_net *net, const llr_csr *psi, int T, int B, const int *rows, size_t N, const float *h0, const float *c0, llr_rng *rng, int drop, int keep)
{
	const llr_net_config *cf = &net->cfg;
	size_t H = (size_t)cf->hidden;
	const float *P = net->params;
	if (forward_input(net, psi, N) < 0)
		return LLR_ENOMEM;
	const float *X = net->x0;
	for (int l = 0; l < cf->layers; l++) {
		if (net->vc_layer) {
			llr_netvc_forward(&net->vc, P, cf->vc_lambda, T, B, rows, h0, X, net->act[0], net->c[0], net->tc[0], net->h[0]);
		} else {
			llr_lstm_io io = {
			    .T = T,
			    .B = B,
			    .Din = din_of(net, l),
			    .H = cf->hidden,
			    .wx = P + net->o_wx[l],
			    .wh = P + net->o_wh[l],
			    .b = P + net->o_b[l],
			    .h0 = h0 ? h0 + (size_t)l * B * H : NULL,
			    .c0 = c0 ? c0 + (size_t)l * B * H : NULL,
			    .act = net->act[keep ? l : 0],
			    .c = net->c[keep ? l : 0],
			    .tc = net->tc[keep ? l : 0],
			    .h = net->h[l],
			    .rows = rows,
			};
			llr_lstm_forward(&io, X);
		}
		if (drop)
			llr_dropout(net->h[l], net->hd[l], net->mask[l], N * H, cf->dropout, rng);
		X = layer_out(net, l, drop);
	}
	return LLR_OK;
}

/* The output layer over N positions of Htop (N x H), in slices of at most
 * net->slice positions (bounded memory): dense then log-linear, and when
 * training (dhtop not NULL) the dense backward, dLoss/dHtop into dhtop
 * (N x H) and out/w, out/b gradients accumulated. */
/* Positions per output slice when scoring: the F x slice block of A then
 * stays in cache for the pass over the rows. */
#define LLR_SCORE_SLICE 256
static int forward_out(llr_net *net, const float *Htop, size_t N, double *nll, float *logp_t, double *norm_err, float *logp_all, float *dhtop)
{
	const llr_net_config *cf = &net->cfg;
	int H = cf->hidden, F = cf->feat_out;
	const float *P = net->params;
	double tot = 0.0;
	llr_norm_stat worst = {0};
	int rc = LLR_OK;
	if (net->factored) {
		rc = llr_treeout_forward(&net->tree, P, net->grads, Htop, N, net->tg, nll, logp_t, norm_err, logp_all, dhtop);
		if (norm_err) { /* an exact sum: no sampling error */
			net->nstat = (llr_norm_stat){0};
			llr_norm_add(&net->nstat, *norm_err, 0.0);
		}
		return rc;
	}
	size_t slice = (size_t)net->slice;
	if (!dhtop && slice > LLR_SCORE_SLICE)
		slice = LLR_SCORE_SLICE;
	for (size_t p0 = 0; p0 < N; p0 += slice) {
		int n = (int)LLR_MIN(slice, N - p0);
		double s = 0.0;
		llr_norm_stat ne = {0};
		llr_dense_forward(n, H, F, Htop + p0 * H, P + net->o_ow, P + net->o_ob, net->A, n);
		llr_ll_io io = {
		    .mode = dhtop ? LLR_LL_GRAD : logp_all ? LLR_LL_DIST
		                                           : LLR_LL_LOSS,
		    .N = n,
		    .lda = n,
		    .A = net->A,
		    .target = net->tg + p0,
		    .nll = &s,
		    .logp_t = logp_t ? logp_t + p0 : NULL,
		    .norm = norm_err ? &ne : NULL,
		    .logp_all = logp_all ? logp_all + p0 * ((size_t)cf->vocab + (size_t)net->out.X) : NULL,
		    .dA = dhtop ? net->dA : NULL,
		    .work = net->llwork,
		    .chunk = net->chunk,
		    .threads = net->llthreads,
		    .ctx = net->bg || net->fsa ? net->ctx + p0 * ctx_width(net) : NULL,
		    .xphi = dhtop ? NULL : net->xphi,
		    .xlogb = dhtop ? NULL : net->xlogb,
		};
		int r = llr_ll_run(&net->out, &io);
		if (r < 0)
			rc = r;
		tot += s;
		llr_norm_merge(&worst, &ne);
		if (dhtop)
			llr_dense_backward(n, H, F, Htop + p0 * H, P + net->o_ow, net->dA, n, dhtop + p0 * H, net->grads + net->o_ow, net->grads + net->o_ob);
	}
	if (nll)
		*nll = tot;
	if (norm_err) {
		*norm_err = worst.err;
		net->nstat = worst;
	}
	return rc;
}

static int grow_i32(int32_t **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return LLR_OK;
	int32_t *q = llr_reallocarray(*p, n, sizeof *q);
	if (!q)
		return LLR_ENOMEM;
	*p = q;
	*cap = n;
	return LLR_OK;
}

/* The rows of the listed marks, ascending, into out (the marks cleared). */
static int32_t collect(unsigned char *mark, int32_t n, int32_t *out)
{
	int32_t k = 0;
	for (int32_t i = 0; i < n; i++)
		if (mark[i]) {
			mark[i] = 0;
			out[k++] = i;
		}
	return k;
}

/* The row-sparse blocks of the batch just trained (llr_net_rows): the
 * embedding rows of the inputs' psi entries; the tree words of the
 * targets' groups (their w and b rows). */
static int find_rows(llr_net *net, const llr_csr *psi, size_t N)
{
	const llr_net_config *cf = &net->cfg;
	size_t need = net->has_emb ? (size_t)cf->feat_in : 0;
	if (net->factored && (size_t)cf->vocab > need)
		need = (size_t)cf->vocab;
	net->nrblk = 0;
	if (!need)
		return LLR_OK;
	if (need > net->rmark_cap) {
		free(net->rmark);
		if (!(net->rmark = llr_calloc(need, 1)))
			return net->rmark_cap = 0, LLR_ENOMEM;
		net->rmark_cap = need;
	}
	unsigned char *mark = net->rmark;
	llr_rows *b = net->rblk;
	if (net->has_emb) {
		if (grow_i32(&net->remb, &net->remb_cap, (size_t)cf->feat_in) < 0)
			return LLR_ENOMEM;
		for (size_t n = 0; n < N; n++) {
			int32_t id = net->in[n];
			if (id < 0 || id >= psi->rows)
				continue; /* <s> (its own vector) or padding */
			for (int32_t k = psi->indptr[id]; k < psi->indptr[id + 1]; k++)
				mark[psi->indices[k]] = 1;
		}
		int32_t k = collect(mark, cf->feat_in, net->remb);
		b[net->nrblk++] = (llr_rows){net->o_emb, cf->feat_in, cf->embed, net->remb, k};
	}
	if (net->factored) {
		const llr_tree *t = &net->tree.t;
		if (grow_i32(&net->rword, &net->rword_cap, (size_t)cf->vocab) < 0)
			return LLR_ENOMEM;
		for (size_t n = 0; n < N; n++) {
			int32_t y = net->tg[n];
			if (y < 0)
				continue;
			const int32_t *w = t->gword + t->gstart[t->group[y]], *end = t->gword + t->gstart[t->group[y] + 1];
			if (mark[*w])
				continue; /* the group is marked already */
			for (; w < end; w++)
				mark[*w] = 1;
		}
		int32_t k = collect(mark, cf->vocab, net->rword);
		b[net->nrblk++] = (llr_rows){net->tree.o_ww, cf->vocab, cf->hidden, net->rword, k};
		b[net->nrblk++] = (llr_rows){net->tree.o_bw, cf->vocab, 1, net->rword, k};
	}
	for (int i = 1; i < net->nrblk; i++) /* in ascending order of off */
		for (int j = i; j > 0 && b[j].off < b[j - 1].off; j--) {
			llr_rows x = b[j];
			b[j] = b[j - 1];
			b[j - 1] = x;
		}
	return LLR_OK;
}

int llr_net_train_step(llr_net *net, const llr_batch *bt, llr_rng *rng, double *nll, int64_t *ntok, llr_err *err)
{
	const llr_net_config *cf = &net->cfg;
	const llr_csr *psi = bt->psi ? bt->psi : net->psi;
	if (bt->B <= 0 || bt->T <= 0 || !bt->input || !bt->target)
		return llr_err_set(err, LLR_EINVAL, "batch: empty or incomplete");
	int rc = check_psi(net, psi, err);
	size_t N = (size_t)bt->T * bt->B, H = (size_t)cf->hidden;
	int drop = rng && cf->dropout > 0.0f;
	if (rc == LLR_OK && bt->xphi)
		rc = llr_err_set(err, LLR_EINVAL, "network: training takes a signature's id, not the rows of strings outside the vocabulary");
	if (rc < 0 || (rc = ensure_ws(net, N, bt->B, 1, err)) < 0 || (rc = load_batch(net, bt, psi, 1, err)) < 0)
		return rc;
	int64_t cnt = 0;
	for (size_t n = 0; n < N; n++)
		cnt += net->tg[n] >= 0;

	if (forward_rnn(net, psi, bt->T, bt->B, NULL, N, NULL, NULL, rng, drop, 1) < 0)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
	int L = cf->layers;
	double s = 0.0;
	rc = forward_out(net, layer_out(net, L - 1, drop), N, &s, NULL, NULL, NULL, net->dh);
	if (nll)
		*nll = s;
	if (ntok)
		*ntok = cnt;
	if (rc < 0)
		return llr_err_set(err, rc, "network: loss is not finite (%g)", s);

	float *G = net->grads;
	for (int l = L - 1; l >= 0; l--) {
		if (drop) {
			const float *m = net->mask[l];
			for (size_t k = 0; k < N * H; k++)
				net->dh[k] *= m[k];
		}
		const float *X = l ? layer_out(net, l - 1, drop) : net->x0;
		const float *P = net->params;
		if (net->vc_layer) {
			llr_netvc_backward(&net->vc, P, G, cf->vc_lambda, bt->T, bt->B, net->tg, X, net->act[0], net->c[0], net->tc[0], net->h[0],
			                   net->dh, net->dx);
			continue;
		}
		llr_lstm_io io = {
		    .T = bt->T,
		    .B = bt->B,
		    .Din = din_of(net, l),
		    .H = cf->hidden,
		    .wx = P + net->o_wx[l],
		    .wh = P + net->o_wh[l],
		    .b = P + net->o_b[l],
		    .act = net->act[l],
		    .c = net->c[l],
		    .tc = net->tc[l],
		    .h = net->h[l],
		};
		llr_lstm_backward(&io, X, net->dh, net->dz, net->dc, net->dx, G + net->o_wx[l], G + net->o_wh[l], G + net->o_b[l]);
		if (l)
			memcpy(net->dh, net->dx, N * H * sizeof *net->dh);
	}
	if (backward_input(net, psi, N, net->dx) < 0 || find_rows(net, psi, N) < 0)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
	return LLR_OK;
}

int llr_net_rows(llr_net *net, const llr_rows **blocks, llr_err *err)
{
	*blocks = net->rblk;
	return net->nrblk;
}

/* One forward pass over a whole batch (validated by the caller). */
static int score_pass(llr_net *net, const llr_csr *psi, const llr_batch *bt, float *logp, double *norm_err, llr_err *err)
{
	size_t N = (size_t)bt->T * bt->B;
	int rc;
	if ((rc = ensure_ws(net, N, bt->B, 0, err)) < 0 || (rc = load_batch(net, bt, psi, 1, err)) < 0)
		return rc;
	if (forward_rnn(net, psi, bt->T, bt->B, NULL, N, NULL, NULL, NULL, 0, 0) < 0)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
	for (size_t n = 0; bt->sched && n < N; n++)
		bt->sched[n] = net->tg[n] < 0 ? 0.0f : net->vc.m[n];
	double s = 0.0;
	rc = forward_out(net, net->h[net->cfg.layers - 1], N, &s, logp, norm_err, NULL, NULL);
	if (rc < 0)
		return llr_err_set(err, rc, "network: log-probability is not finite");
	return LLR_OK;
}

typedef struct slen {
	int b, len;
} slen;

static int by_len_desc(const void *x, const void *y)
{
	const slen *a = x, *b = y;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->b - b->b;
}

/* Scoring batches of unequal streams (score --batch pads every line to
 * the longest): positions after a stream's last target cannot change its
 * earlier log-probabilities (the LSTM is causal), so the streams are
 * sorted by length and packed, step after step, with only the streams
 * still alive at each step (as PyTorch's packed sequences): no padding is
 * computed, and the per-step products keep as many rows as there are live
 * streams.  Every position is computed by the same kernels on its own row,
 * so the results are those of the padded pass, up to float rounding of the
 * BLAS blocking. */
static int score_one(llr_net *net, const llr_csr *psi, const llr_batch *bt, float *logp, double *norm_err, llr_err *err)
{
	int rc;
	int B = bt->B, T = bt->T;
	size_t N = (size_t)T * B;
	if (B == 1)
		return score_pass(net, psi, bt, logp, norm_err, err);
	if ((rc = ensure_ws(net, N, B, 0, err)) < 0 || (rc = load_batch(net, bt, psi, 1, err)) < 0)
		return rc;
	slen *sl = malloc((size_t)B * sizeof *sl);
	int *rows = malloc((size_t)T * sizeof *rows);
	int32_t *in = malloc(N * sizeof *in), *tg = malloc(N * sizeof *tg);
	float *lp = logp ? malloc(N * sizeof *lp) : NULL;
	size_t m = ctx_width(net);
	int32_t *cx = m ? malloc(N * m * sizeof *cx) : NULL;
	if (!sl || !rows || !in || !tg || (logp && !lp) || (m && !cx)) {
		rc = llr_err_set(err, LLR_ENOMEM, "network: out of memory");
		goto done;
	}
	for (int b = 0; b < B; b++) {
		int len = 0;
		for (int t = T; t > 0; t--)
			if (net->tg[(size_t)(t - 1) * B + b] != -1) {
				len = t;
				break;
			}
		sl[b].b = b;
		sl[b].len = len;
	}
	qsort(sl, (size_t)B, sizeof *sl, by_len_desc);
	int Tp = sl[0].len;
	size_t live = 0;
	for (int t = 0, alive = B; t < Tp; t++) {
		while (alive > 0 && sl[alive - 1].len <= t)
			alive--;
		rows[t] = alive;
		for (int j = 0; j < alive; j++, live++) {
			size_t src = (size_t)t * B + sl[j].b;
			in[live] = net->in[src];
			tg[live] = net->tg[src];
			if (m)
				memcpy(cx + live * m, net->ctx + src * m, m * sizeof *cx);
		}
	}
	if (logp)
		memset(logp, 0, N * sizeof *logp);
	if (bt->sched)
		memset(bt->sched, 0, N * sizeof *bt->sched);
	if (norm_err) {
		*norm_err = 0.0;
		net->nstat = (llr_norm_stat){0};
	}
	if (live == 0)
		goto done;
	memcpy(net->in, in, live * sizeof *in);
	memcpy(net->tg, tg, live * sizeof *tg);
	if (m)
		memcpy(net->ctx, cx, live * m * sizeof *cx);
	if (forward_rnn(net, psi, Tp, B, rows, live, NULL, NULL, NULL, 0, 0) < 0) {
		rc = llr_err_set(err, LLR_ENOMEM, "network: out of memory");
		goto done;
	}
	rc = forward_out(net, net->h[net->cfg.layers - 1], live, NULL, lp, norm_err, NULL, NULL);
	if (rc < 0) {
		rc = llr_err_set(err, rc, "network: log-probability is not finite");
		goto done;
	}
	for (size_t t = 0, n = 0; t < (size_t)Tp; t++)
		for (int j = 0; j < rows[t]; j++, n++) {
			if (logp)
				logp[t * B + sl[j].b] = lp[n];
			if (bt->sched && tg[n] >= 0)
				bt->sched[t * B + sl[j].b] = net->vc.m[n];
		}
done:
	free(sl);
	free(rows);
	free(in);
	free(tg);
	free(lp);
	free(cx);
	return rc;
}

/* ------------------------------------------------ scoring on threads */

/* A copy of net for one scoring group: its own workspace and output
 * classes, net's weights (shared, read-only). */
static llr_net *net_copy(llr_net *net, llr_err *err)
{
	int ll = net->cfg.output == LLR_OUT_LOGLINEAR;
	llr_net *c = llr_net_new_empty(&net->cfg, ll ? net->out.phi : NULL, ll ? net->psi : NULL, ll ? net->out.logb : NULL, err);
	if (!c)
		return NULL;
	c->params = net->params;
	c->have = net->have;
	c->shared = 1;
	c->budget = net->budget;
	return c;
}

/* What a copy must share with its net at every call: the spellings, and
 * the groups of a tree or classes output (they change as it learns). */
static int sync_copy(llr_net *net, llr_net *c, llr_err *err)
{
	c->words = net->words;
	c->cfg.vc_lambda = net->cfg.vc_lambda;
	if (c->bg != net->bg || c->fsa != net->fsa) {
		free(c->ctx);
		c->ctx = NULL;
		c->ctx_cap = 0;
		c->bg = net->bg;
		c->out.bg = net->out.bg;
		c->out.ctxlen = net->out.ctxlen;
		c->fsa = net->fsa;
		c->out.fsa = net->out.fsa;
	}
	if (net->open) { /* net's open output, read-only: its classes and background */
		if (!c->open || c->out_rows != net->out_rows) {
			free(c->llwork); /* sized again for out_rows at the next batch */
			c->llwork = NULL;
			c->llthreads = 0;
			c->out_rows = net->out_rows;
		}
		c->open = 1;
		c->out.cls = net->out.cls;
		c->out.logb = net->out.logb;
		c->out.X = net->out.X;
		c->out.nrm_phi = net->out.nrm_phi;
		c->out.nrm_logw = net->out.nrm_logw;
		c->out.nrm_exact = net->out.nrm_exact;
	}
	if (!net->factored)
		return LLR_OK;
	const int32_t *g = net->tree.t.group, *h = c->tree.t.group;
	if (!memcmp(g, h, (size_t)net->cfg.vocab * sizeof *g))
		return LLR_OK;
	return llr_treeout_set_groups(&c->tree, g, err);
}

int llr_net_set_score_threads(llr_net *net, int n, llr_err *err)
{
	if (net->shared)
		return llr_err_set(err, LLR_EINVAL, "network: a scoring copy has no copies");
	free_groups(net);
	if (n <= 1)
		return LLR_OK;
	if (!(net->grp = llr_calloc((size_t)n, sizeof *net->grp)))
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
	net->ngrp = n;
	for (int g = 0; g < n; g++) {
		net->grp[g].net = g ? net_copy(net, err) : net;
		if (!net->grp[g].net) {
			net->ngrp = g;
			free_groups(net);
			return llr_err_code(err, LLR_ENOMEM);
		}
	}
	return LLR_OK;
}

static void *group_run(void *p)
{
	score_group *w = p;
	llr_batch bt = {.B = w->B, .T = w->T, .input = w->in, .target = w->tg, .xphi = w->xphi, .xlogb = w->xlogb,
	               .sched = w->want_sched ? w->sched : NULL};
	double e;
	w->rc = score_one(w->net, w->psi, &bt, w->lp, w->want_norm ? &e : NULL, &w->err);
	w->norm = w->want_norm ? w->net->nstat : (llr_norm_stat){0};
	return NULL;
}

/* Steps up to a stream's last target (0 if it has none). */
static int stream_len(const llr_batch *bt, int b)
{
	for (int t = bt->T; t > 0; t--)
		if (bt->target[(size_t)(t - 1) * bt->B + b] != -1)
			return t;
	return 0;
}

/* Deal the streams of bt, longest first, to W groups in turn, and copy
 * each group's columns into a batch of its own (its T: its longest). */
static int deal_groups(llr_net *net, const llr_csr *psi, const llr_batch *bt, int W, int want_norm, llr_err *err)
{
	int B = bt->B;
	if (B > net->grp_cap) {
		for (int g = 0; g < net->ngrp; g++) {
			free(net->grp[g].cols);
			if (!(net->grp[g].cols = llr_malloc((size_t)B * sizeof(int)))) {
				net->grp_cap = 0;
				return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
			}
		}
		net->grp_cap = B;
	}
	slen *sl = llr_malloc((size_t)B * sizeof *sl);
	if (!sl)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
	for (int b = 0; b < B; b++)
		sl[b] = (slen){b, stream_len(bt, b)};
	qsort(sl, (size_t)B, sizeof *sl, by_len_desc);
	for (int g = 0; g < W; g++)
		net->grp[g].B = 0;
	for (int k = 0; k < B; k++) {
		score_group *w = &net->grp[k % W];
		if (w->B == 0)
			w->T = sl[k].len > 0 ? sl[k].len : 1;
		w->cols[w->B++] = sl[k].b;
	}
	free(sl);
	for (int g = 0; g < W; g++) {
		score_group *w = &net->grp[g];
		size_t need = (size_t)w->T * (size_t)w->B;
		int sched = bt->sched != NULL; /* m_t only when asked for */
		if (need > w->cap || (sched && !w->sched)) {
			free(w->in);
			free(w->tg);
			free(w->lp);
			free(w->sched);
			w->in = llr_malloc(need * sizeof *w->in);
			w->tg = llr_malloc(need * sizeof *w->tg);
			w->lp = llr_malloc(need * sizeof *w->lp);
			w->sched = sched ? llr_malloc(need * sizeof *w->sched) : NULL;
			if (!w->in || !w->tg || !w->lp || (sched && !w->sched)) {
				w->cap = 0;
				return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
			}
			w->cap = need;
		}
		for (size_t t = 0; t < (size_t)w->T; t++)
			for (int j = 0; j < w->B; j++) {
				w->in[t * (size_t)w->B + (size_t)j] = bt->input[t * (size_t)B + (size_t)w->cols[j]];
				w->tg[t * (size_t)w->B + (size_t)j] = bt->target[t * (size_t)B + (size_t)w->cols[j]];
			}
		w->psi = psi;
		w->xphi = bt->xphi;
		w->xlogb = bt->xlogb;
		w->want_norm = want_norm;
		w->want_sched = sched;
	}
	return LLR_OK;
}

/* llr_net_score on the groups at once: group 0 on this thread, the others
 * on threads of their own (or here, one after another, if a thread cannot
 * be started). */
static int score_split(llr_net *net, const llr_csr *psi, const llr_batch *bt, float *logp, double *norm_err, llr_err *err)
{
	int B = bt->B, W = net->ngrp < B ? net->ngrp : B;
	int rc = deal_groups(net, psi, bt, W, norm_err != NULL, err);
	for (int g = 1; g < W && rc >= 0; g++)
		rc = sync_copy(net, net->grp[g].net, err);
	if (rc < 0)
		return rc;
	int started[W];
	for (int g = 1; g < W; g++)
		started[g] = pthread_create(&net->grp[g].th, NULL, group_run, &net->grp[g]) == 0;
	group_run(&net->grp[0]);
	for (int g = 1; g < W; g++) {
		if (started[g])
			pthread_join(net->grp[g].th, NULL);
		else
			group_run(&net->grp[g]);
	}
	if (logp)
		memset(logp, 0, (size_t)bt->T * (size_t)B * sizeof *logp);
	if (bt->sched)
		memset(bt->sched, 0, (size_t)bt->T * (size_t)B * sizeof *bt->sched);
	llr_norm_stat norm = {0};
	for (int g = 0; g < W; g++) {
		score_group *w = &net->grp[g];
		if (w->rc < 0) {
			if (err)
				*err = w->err;
			return w->rc;
		}
		llr_norm_merge(&norm, &w->norm);
		for (size_t t = 0; t < (size_t)w->T; t++)
			for (int j = 0; j < w->B; j++) {
				size_t to = t * (size_t)B + (size_t)w->cols[j], from = t * (size_t)w->B + (size_t)j;
				if (logp)
					logp[to] = w->lp[from];
				if (bt->sched)
					bt->sched[to] = w->sched[from];
			}
	}
	if (norm_err) {
		*norm_err = norm.err;
		net->nstat = norm;
	}
	return LLR_OK;
}

int llr_net_score(llr_net *net, const llr_batch *bt, float *logp, double *norm_err, llr_err *err)
{
	const llr_csr *psi = bt->psi ? bt->psi : net->psi;
	if (bt->B <= 0 || bt->T <= 0 || !bt->input || !bt->target)
		return llr_err_set(err, LLR_EINVAL, "batch: empty or incomplete");
	int rc = check_psi(net, psi, err);
	if (rc < 0)
		return rc;
	if (bt->xphi && (!net->open || bt->xphi->cols != net->cfg.feat_out || !bt->xlogb))
		return llr_err_set(err, LLR_EINVAL, "batch: rows outside the vocabulary need llr_net_set_open and F columns");
	if (bt->sched && !(net->vc_layer && net->vc.sched))
		return llr_err_set(err, LLR_EINVAL, "network: the %s cell has no scheduler (no m_t)", llr_cell_name(net->cfg.cell));
	if (net->ngrp > 1 && bt->B > 1)
		return score_split(net, psi, bt, logp, norm_err, err);
	return score_one(net, psi, bt, logp, norm_err, err);
}

llr_net_state *llr_net_state_new(const llr_net *net, int B)
{
	if (B <= 0)
		return NULL;
	llr_net_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->B = B;
	s->L = net->cfg.layers;
	s->H = net->cfg.hidden;
	size_t n = (size_t)s->L * B * s->H;
	s->h = llr_calloc(n, sizeof *s->h);
	s->c = llr_calloc(n, sizeof *s->c);
	s->hist = llr_malloc((size_t)B * HIST * sizeof *s->hist);
	if (s->hist)
		for (size_t k = 0; k < (size_t)B * HIST; k++)
			s->hist[k] = -1;
	s->fq = llr_malloc((size_t)B * sizeof *s->fq);
	for (int b = 0; s->fq && b < B; b++)
		s->fq[b] = -1;
	if (!s->h || !s->c || !s->hist || !s->fq) {
		llr_net_state_free(s);
		return NULL;
	}
	return s;
}

void llr_net_state_free(llr_net_state *s)
{
	if (!s)
		return;
	free(s->h);
	free(s->c);
	free(s->hist);
	free(s->fq);
	free(s);
}

void llr_net_state_reset(llr_net_state *s)
{
	size_t n = (size_t)s->L * s->B * s->H;
	memset(s->h, 0, n * sizeof *s->h);
	memset(s->c, 0, n * sizeof *s->c);
	for (size_t k = 0; k < (size_t)s->B * HIST; k++)
		s->hist[k] = -1;
	for (int b = 0; b < s->B; b++)
		s->fq[b] = -1;
}

void llr_net_state_copy(llr_net_state *dst, int db, const llr_net_state *src, int sb)
{
	LLR_ASSERT(dst->L == src->L && dst->H == src->H);
	LLR_ASSERT(db >= 0 && db < dst->B && sb >= 0 && sb < src->B);
	size_t H = (size_t)src->H;
	for (int l = 0; l < src->L; l++) {
		memmove(dst->h + ((size_t)l * dst->B + db) * H, src->h + ((size_t)l * src->B + sb) * H, H * sizeof(float));
		memmove(dst->c + ((size_t)l * dst->B + db) * H, src->c + ((size_t)l * src->B + sb) * H, H * sizeof(float));
	}
	memmove(dst->hist + (size_t)db * HIST, src->hist + (size_t)sb * HIST, HIST * sizeof *dst->hist);
	dst->fq[db] = src->fq[sb];
}

/* A step's contexts from the streams' histories, after the input; the
 * automaton's states made ready (as in batch_contexts). */
static int step_contexts(llr_net *net, llr_net_state *s, const int32_t *input, llr_err *err)
{
	int m = net->bg ? llr_ngram_bg_ctxlen(net->bg) : 0, w = (int)ctx_width(net);
	for (int b = 0; net->fsa && b < s->B; b++) {
		s->fq[b] = fsa_step(net, s->fq[b], input[b]);
		net->ctx[(size_t)b * w + m] = s->fq[b];
		if (s->fq[b] >= 0 && llr_fsa_ready(net->fsa, s->fq[b], err) < 0)
			return llr_err_code(err, LLR_ENOMEM);
	}
	if (!net->bg)
		return LLR_OK;
	int32_t bos = llr_ngram_bos(llr_ngram_bg_model(net->bg));
	for (int b = 0; b < s->B; b++) {
		int32_t *h = s->hist + (size_t)b * HIST;
		if (input[b] == LLR_BOS_ID) {
			for (int k = 0; k < HIST - 1; k++)
				h[k] = -1;
		} else {
			memmove(h, h + 1, (HIST - 1) * sizeof *h);
		}
		h[HIST - 1] = input[b] == LLR_BOS_ID ? bos : llr_ngram_bg_map(net->bg, input[b]);
		memcpy(net->ctx + (size_t)b * w, h + HIST - m, (size_t)m * sizeof *h);
	}
	return LLR_OK;
}

int llr_net_step(llr_net *net, llr_net_state *s, const int32_t *input, const llr_csr *psi, float *logp, llr_err *err)
{
	const llr_net_config *cf = &net->cfg;
	LLR_ASSERT(s->L == cf->layers && s->H == cf->hidden);
	if (!psi)
		psi = net->psi;
	int B = s->B, rc = check_psi(net, psi, err);
	llr_batch bt = {.B = B, .T = 1, .input = input, .target = NULL, .psi = psi};
	if (rc < 0 || (rc = ensure_ws(net, (size_t)B, B, 0, err)) < 0 || (rc = load_batch(net, &bt, psi, 0, err)) < 0)
		return rc;
	if (forward_rnn(net, psi, 1, B, NULL, (size_t)B, s->h, s->c, NULL, 0, 1) < 0)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
	size_t BH = (size_t)B * cf->hidden;
	for (int l = 0; l < cf->layers; l++) {
		memcpy(s->h + l * BH, net->h[l], BH * sizeof(float));
		memcpy(s->c + l * BH, net->c[l], BH * sizeof(float));
	}
	if ((net->bg || net->fsa) && (rc = step_contexts(net, s, input, err)) < 0)
		return rc;
	rc = forward_out(net, net->h[cf->layers - 1], (size_t)B, NULL, NULL, NULL, logp, NULL);
	if (rc < 0)
		return llr_err_set(err, rc, "network: log-probability is not finite");
	for (size_t k = 0; k < (size_t)B * ((size_t)cf->vocab + (size_t)net->out.X); k++)
		if (isnan(logp[k]))
			return llr_err_set(err, LLR_ENAN, "network: log-probability is not a number");
	return LLR_OK;
}

int32_t llr_net_out_width(const llr_net *net)
{
	return net->cfg.vocab + net->out.X;
}

void llr_net_set_vc(llr_net *net, float lambda, float target, float weight)
{
	if (!net->vc.sched)
		return;
	LLR_ASSERT(lambda > 0.0f);
	net->cfg.vc_lambda = lambda;
	net->vc.target = target;
	net->vc.weight = weight;
}

void llr_net_vc_macs(const llr_net *net, uint64_t *macs, uint64_t *padded, uint64_t *positions, double *dense)
{
	const llr_netvc *v = &net->vc;
	int vc = net->vc_layer && v->sched;
	*macs = vc ? v->macs : 0;
	*padded = vc ? v->pad : 0;
	*positions = vc ? v->pos : 0;
	*dense = vc ? (double)(v->Din + v->H) * (1.0 + (double)v->G * v->H) : 0.0;
}

void llr_net_set_words(llr_net *net, const llr_words *w)
{
	net->words = w;
}

int llr_net_tree_from_counts(llr_net *net, const int64_t *count, llr_err *err)
{
	if (!net->factored)
		return llr_err_set(err, LLR_EINVAL, "network: no tree or classes output");
	return llr_treeout_counts(&net->tree, count, err);
}

const int32_t *llr_net_tree_groups(const llr_net *net)
{
	return net->factored ? net->tree.t.group : NULL;
}

int llr_net_tree_set_groups(llr_net *net, const int32_t *group, llr_err *err)
{
	if (!net->factored)
		return llr_err_set(err, LLR_EINVAL, "network: no tree or classes output");
	return llr_treeout_set_groups(&net->tree, group, err);
}

int llr_net_tree_learn(llr_net *net, int32_t *moved, llr_err *err)
{
	if (!net->factored)
		return llr_err_set(err, LLR_EINVAL, "network: no tree output");
	return llr_treeout_learn(&net->tree, net->params, moved, err);
}

int llr_net_set_ngram_bg(llr_net *net, const llr_ngram_bg *g, llr_err *err)
{
	if (g) {
		if (net->cfg.output != LLR_OUT_LOGLINEAR)
			return llr_err_set(err, LLR_EINVAL, "network: a context-dependent background needs the log-linear output");
		if (llr_ngram_bg_size(g) != net->cfg.vocab)
			return llr_err_set(err, LLR_EINVAL, "network: the n-gram background has %d words, the network %d", llr_ngram_bg_size(g), net->cfg.vocab);
		if (llr_ngram_bg_ctxlen(g) > HIST)
			return llr_err_set(err, LLR_EINVAL, "network: n-gram order %d over %d", llr_ngram_bg_ctxlen(g) + 1, HIST + 1);
		if (memcmp(net->out.logb, llr_ngram_bg_logb1(g), (size_t)net->cfg.vocab * sizeof(float)))
			return llr_err_set(err, LLR_EINVAL, "network: the background is not the n-gram's unigram level");
	}
	free(net->ctx);
	net->ctx = NULL;
	net->ctx_cap = 0;
	net->bg = g;
	net->out.bg = g;
	net->out.ctxlen = g ? llr_ngram_bg_ctxlen(g) : 0;
	return LLR_OK;
}

int llr_net_set_fsa_bg(llr_net *net, const llr_fsa *a, int32_t unk, llr_err *err)
{
	if (a && net->cfg.output != LLR_OUT_LOGLINEAR)
		return llr_err_set(err, LLR_EINVAL, "network: an automaton background needs the log-linear output");
	if (a && net->open)
		return llr_err_set(err, LLR_EINVAL, "network: an automaton background with an open vocabulary is not implemented");
	free(net->ctx);
	net->ctx = NULL;
	net->ctx_cap = 0;
	net->fsa = a;
	net->fsa_unk = unk;
	net->out.fsa = a;
	return LLR_OK;
}

int llr_net_set_open(llr_net *net, const float *logb_v, const llr_csr *sig_phi, const float *sig_logb, llr_err *err)
{
	const llr_net_config *cf = &net->cfg;
	if (cf->output != LLR_OUT_LOGLINEAR || net->factored || net->bg || net->fsa)
		return llr_err_set(err, LLR_EINVAL, "network: an open vocabulary needs the log-linear output and no n-gram or automaton background");
	if (sig_phi->cols != cf->feat_out)
		return llr_err_set(err, LLR_EINVAL, "network: signatures have %d features, the network %d", sig_phi->cols, cf->feat_out);
	int32_t V = cf->vocab, S = sig_phi->rows;
	const llr_csr *phi = net->out.phi;
	float *lb = llr_malloc(((size_t)V + (size_t)S + 1) * sizeof *lb);
	llr_csr_builder *b = llr_csr_builder_new(cf->feat_out);
	llr_csr *all = NULL;
	int rc = LLR_ENOMEM;
	if (!lb || !b)
		goto nomem;
	for (int32_t v = 0; v < V + S; v++) {
		const llr_csr *m = v < V ? phi : sig_phi;
		int32_t r = v < V ? v : v - V;
		float x = v < V ? logb_v[v] : sig_logb[r];
		if (isnan(x) || x == INFINITY) {
			rc = llr_err_set(err, LLR_ENAN, "network: open background of row %d is %g", v, (double)x);
			goto fail;
		}
		lb[v] = x;
		int32_t a = m->indptr[r];
		if ((rc = llr_csr_builder_row(b, m->indices + a, m->data + a, (size_t)(m->indptr[r + 1] - a), err)) < 0)
			goto fail;
	}
	if (!(all = llr_csr_builder_finish(b, err))) {
		b = NULL;
		goto nomem;
	}
	b = NULL;
	llr_ll_classes cls;
	if ((rc = llr_ll_classes_build(&cls, all, lb, err)) < 0)
		goto fail;
	llr_ll_classes_free(&net->out_cls);
	net->out_cls = cls;
	net->out.cls = &net->out_cls;
	free(net->open_logb);
	net->open_logb = lb;
	net->out.logb = lb; /* its first V entries */
	net->open = 1;
	net->out.X = S;
	net->out_rows = LLR_MAX(V, cls.C);
	free(net->llwork); /* sized again for out_rows at the next batch */
	net->llwork = NULL;
	net->llthreads = 0;
	llr_csr_free(all);
	return LLR_OK;
nomem:
	rc = llr_err_set(err, LLR_ENOMEM, "network: out of memory");
fail:
	llr_csr_builder_free(b);
	llr_csr_free(all);
	free(lb);
	return rc;
}

int llr_net_set_out_groups(llr_net *net, const int32_t *group_of, int G, llr_err *err)
{
	if (!net->out.cls || net->out.identity || net->bg || net->fsa)
		return 0;
	if (G < 1 || G > LLR_LL_GROUPS)
		return llr_err_set(err, LLR_EINVAL, "network: %d groups of output features (1 to %d)", G, LLR_LL_GROUPS);
	for (int32_t f = 0; f < net->cfg.feat_out; f++)
		if (group_of[f] < 0 || group_of[f] >= G)
			return llr_err_set(err, LLR_EINVAL, "network: output feature %d in group %d of %d", f, group_of[f], G);
	return llr_ll_factors_build(&net->out_cls, group_of, G, err);
}

llr_norm_stat llr_net_norm(const llr_net *net)
{
	return net->nstat;
}

int llr_net_set_norm_rows(llr_net *net, const llr_csr *phi, const float *logw, const int64_t *count, int64_t draws,
                          llr_err *err)
{
	if (phi && (!net->open || phi->cols != net->cfg.feat_out))
		return llr_err_set(err, LLR_EINVAL, "network: norm rows need llr_net_set_open and F columns");
	int64_t sum = 0;
	int32_t X = 0;
	while (phi && X < phi->rows && count[X] == 0)
		X++;
	for (int32_t k = X; phi && k < phi->rows; k++) {
		if (count[k] < 1 || count[k] > draws - sum)
			return llr_err_set(err, LLR_EINVAL, "network: norm row %d stands for %lld draws", k, (long long)count[k]);
		sum += count[k];
	}
	if (phi && sum != draws)
		return llr_err_set(err, LLR_EINVAL, "network: norm rows stand for %lld draws, not %lld", (long long)sum,
		                   (long long)draws);
	float *lw = phi ? llr_malloc(2 * ((size_t)phi->rows + 1) * sizeof *lw) : NULL;
	if (phi && !lw)
		return llr_err_set(err, LLR_ENOMEM, "network: out of memory");
	for (int32_t k = 0; phi && k < phi->rows; k++) {
		double c = k < X ? 0.0 : log((double)count[k] / (double)draws);
		lw[k] = (float)((double)logw[k] + c);
		lw[phi->rows + k] = k < X ? -INFINITY : (float)(2.0 * (double)logw[k] + c);
	}
	if (phi)
		lw[2 * phi->rows] = (float)log((double)draws);
	free(net->nrm_lw);
	net->nrm_lw = lw;
	net->out.nrm_phi = phi;
	net->out.nrm_logw = lw;
	net->out.nrm_exact = X;
	return LLR_OK;
}
