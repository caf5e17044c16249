/*
 * encdec.c - the encoder-decoder with attention (llrnn.h, "encoder-
 * decoder"; Neubig's NMT tutorial sections 7 and 8), assembled from the
 * layers of nn.h:
 *
 *   encoder  source embedding (sum of source psi features), then L
 *            bidirectional layers: lstm.c's layer run forward over the
 *            sequence and again over each sequence reversed within its
 *            length; a position's output is [h_fw; h_bw] (H = 2 x H/2)
 *   bridge   the decoder starts from h_0 = [h_fw at the last position;
 *            h_bw at the first], c_0 = 0, ctx_0 = 0
 *   decoder  z_t = x_t Wx + [h_{t-1}; ctx_{t-1}] Wr + b (input feeding:
 *            the previous context enters the LSTM), the LSTM cell, then
 *            the attention (attention.c) with query h_t gives ctx_t
 *   output   a_t = W [h_t; ctx_t] + c (dense.c) and the log-linear layer
 *            (loglinear.c): softmax when phi = I and b uniform
 *   priming  log b(C; x) = beta log tbar(x | C): the background enters the
 *            output layer as V extra adaptor rows, phi' = [phi | I_V] and
 *            a' = [a; beta log tbar(. | C)], so loglinear.c computes the
 *            exact distribution and the gradient of those rows gives
 *            beta's: d beta = sum_n sum_x (p - onehot)_x log tbar(x | C_n)
 *   automaton an output automaton (llr_encdec_set_fsa, train --output-fsa)
 *            is one more factor of b: b_fsa(q_t; x), q_t its state after
 *            the target prefix, 0 outside the tokens allowed in q_t
 *            (</s> only in a final state), the arc's weight inside; the
 *            output layer normalises over the allowed tokens exactly
 *            (loglinear.c), so the loss is the cross-entropy over the
 *            constrained language
 *
 * The decoder runs step by step (the context feeds the next step), but
 * its input projection x_t Wx, its weight gradients, the attention keys
 * and the output layer are each one GEMM over the whole batch.  The
 * per-step GEMMs run on one BLAS thread, as in lstm.c.  Parameters and
 * workspace follow net.c: one flat array, buffers grown on demand.  Not
 * here: the priming table (lib/lm/prime.c), beam search (lib/lm/
 * encdec_search.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

#define MAX_ENC 16
#define OUT_BUDGET ((size_t)128 << 20)

typedef struct tinfo {
	char name[24];
	int ndim;
	int64_t shape[2];
	size_t off;
} tinfo;

typedef struct fbuf {
	float *p;
	size_t cap;
} fbuf;

typedef struct ibuf {
	int32_t *p;
	size_t cap;
} ibuf;

/* Encoder buffers of one layer and direction (lstm.c's saved values). */
typedef struct encdir {
	fbuf act, c, tc, h;
} encdir;

struct llr_encdec {
	llr_encdec_config cfg;
	const llr_csr *spsi, *tpsi;
	const float *table;
	llr_ll out;
	llr_csr *own_phi, *own_eye;
	float *own_logb;
	int Fo; /* rows of the output block: F, or F + V when primed */
	const llr_fsa *fsa; /* NULL, or the output automaton (borrowed) */

	float *params, *grads;
	size_t nparams;
	size_t have; /* params allocated so far (llr_encdec_params_grow) */
	tinfo ti[16 + 6 * MAX_ENC];
	size_t nt;
	size_t o_semb, o_ewx[MAX_ENC][2], o_ewh[MAX_ENC][2], o_eb[MAX_ENC][2];
	size_t o_emb, o_bos, o_dwx, o_dwr, o_db, o_aw, o_awk, o_ab, o_av, o_ow, o_ob, o_beta;

	/* workspace */
	ibuf sid, len, in, tg, fq; /* fq: each position's automaton state */
	fbuf xs, xr[MAX_ENC], Y[MAX_ENC], Yd[MAX_ENC], ymask[MAX_ENC];
	encdir ed[MAX_ENC][2];
	fbuf K, dK, dY, dM, ehd, ez, edc, edx, edxr;
	fbuf xe, act, cell, tc, O, Od, omask, alpha, Q, U;
	fbuf dO, dz, dcc, dQ, de, dxe, LT;
	fbuf Aout, dAout, llwork;
	double *chunk;
	size_t chunk_cap;
	int slice, llthreads;
};

struct llr_encdec_state {
	int K, S, Scap, H;
	float *M, *Kk, *O, *c, *O2, *c2, *LT;
	int32_t *sid;
	int32_t *fq, *fq2; /* K: each slot's automaton state (-1: rejected) */
};

/* ------------------------------------------------------------ names */

int llr_attention_parse(const char *name)
{
	if (!strcmp(name, "dot"))
		return LLR_ATT_DOT;
	if (!strcmp(name, "bilinear"))
		return LLR_ATT_BILINEAR;
	if (!strcmp(name, "mlp"))
		return LLR_ATT_MLP;
	return 0;
}

const char *llr_attention_name(int kind)
{
	return kind == LLR_ATT_DOT ? "dot" : kind == LLR_ATT_BILINEAR ? "bilinear"
	                                 : kind == LLR_ATT_MLP        ? "mlp"
	                                                              : "?";
}

/* ------------------------------------------------------ construction */

static void add_tensor(llr_encdec *m, const char *name, int ndim, int64_t d0, int64_t d1, size_t *off)
{
	LLR_ASSERT(m->nt < sizeof m->ti / sizeof m->ti[0]);
	tinfo *t = &m->ti[m->nt++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->ndim = ndim;
	t->shape[0] = d0;
	t->shape[1] = ndim > 1 ? d1 : 0;
	t->off = m->nparams;
	*off = m->nparams;
	m->nparams += (size_t)d0 * (size_t)(ndim > 1 ? d1 : 1);
}

static int check_config(const llr_encdec_config *c, const llr_csr *spsi, const llr_csr *phi, const llr_csr *psi, const float *logb, const float *table, llr_err *err)
{
	if (c->src_vocab <= 0 || c->src_feat <= 0 || c->vocab <= 0 || c->embed <= 0 || c->hidden <= 0)
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: vocabulary, feature, embedding and hidden sizes must be positive");
	if (c->hidden % 2)
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: hidden size %d: must be even (the encoder has half of it per direction)", c->hidden);
	if ((int64_t)c->hidden * 4 > INT32_MAX / 4 || c->embed > (1 << 20))
		return llr_err_set(err, LLR_ERANGE, "encoder-decoder: sizes too large");
	if (c->enc_layers < 1 || c->enc_layers > MAX_ENC)
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: %d encoder layers: must be 1 to %d", c->enc_layers, MAX_ENC);
	if (!(c->dropout >= 0.0f && c->dropout < 1.0f))
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: dropout %g: must be in [0, 1)", (double)c->dropout);
	if (!c->attention || !strcmp(llr_attention_name(c->attention), "?"))
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: unknown attention %d", c->attention);
	if (c->attention == LLR_ATT_MLP && (c->attn_hidden <= 0 || c->attn_hidden > (1 << 16)))
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: MLP attention size %d out of range", c->attn_hidden);
	if (!spsi || spsi->rows != c->src_vocab || spsi->cols != c->src_feat)
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: the source psi must be %dx%d", c->src_vocab, c->src_feat);
	if (c->primed && !table)
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: priming needs a translation table");
	if (c->output == LLR_OUT_SOFTMAX) {
		if ((c->feat_out && c->feat_out != c->vocab) || (c->feat_in && c->feat_in != c->vocab))
			return llr_err_set(err, LLR_EINVAL, "encoder-decoder: softmax output: feature counts must equal the vocabulary size %d", c->vocab);
	} else if (c->output == LLR_OUT_LOGLINEAR) {
		const llr_csr *ps = psi ? psi : phi;
		if (!phi || (!logb && !c->primed))
			return llr_err_set(err, LLR_EINVAL, "encoder-decoder: log-linear output needs phi and a background");
		if (phi->rows != c->vocab || phi->cols != c->feat_out || c->feat_out <= 0)
			return llr_err_set(err, LLR_EINVAL, "encoder-decoder: phi is %dx%d, expected %dx%d", phi->rows, phi->cols, c->vocab, c->feat_out);
		if (ps->rows != c->vocab || ps->cols != c->feat_in || c->feat_in <= 0)
			return llr_err_set(err, LLR_EINVAL, "encoder-decoder: psi is %dx%d, expected %dx%d", ps->rows, ps->cols, c->vocab, c->feat_in);
		for (int32_t v = 0; !c->primed && v < c->vocab; v++)
			if (isnan(logb[v]) || logb[v] == INFINITY)
				return llr_err_set(err, LLR_ENAN, "encoder-decoder: background of word %d is %g", v, (double)logb[v]);
	} else {
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: unknown output kind %d", c->output);
	}
	for (size_t k = 0; c->primed && k < (size_t)c->src_vocab * (size_t)c->vocab; k++)
		if (!(table[k] > 0.0f) || !isfinite(table[k]))
			return llr_err_set(err, LLR_EINVAL, "encoder-decoder: translation table entry (%zu, %zu) is %g: must be positive", k / (size_t)c->vocab, k % (size_t)c->vocab, (double)table[k]);
	return LLR_OK;
}

/* The output layer: phi (identity for softmax), and [phi | I_V] with a
 * zero background when primed. */
static int build_output(llr_encdec *m, const llr_csr *phi, const float *logb, llr_err *err)
{
	const llr_encdec_config *c = &m->cfg;
	int32_t V = c->vocab, F = c->feat_out;
	int sm = c->output == LLR_OUT_SOFTMAX;
	m->out.V = V;
	m->Fo = c->primed ? F + V : F;
	m->out.F = m->Fo;
	if (!c->primed && !sm) {
		m->out.phi = phi;
		m->out.logb = logb;
		return LLR_OK;
	}
	m->own_logb = llr_malloc((size_t)V * sizeof *m->own_logb);
	if (!m->own_logb)
		return llr_err_set(err, LLR_ENOMEM, "encoder-decoder: out of memory");
	float u = c->primed ? 0.0f : (float)-log((double)V);
	for (int32_t v = 0; v < V; v++)
		m->own_logb[v] = u;
	m->out.logb = m->own_logb;
	if (!c->primed) {
		m->own_phi = llr_csr_identity(V, err);
		m->out.identity = 1;
	} else {
		llr_csr_builder *b = llr_csr_builder_new(m->Fo);
		int32_t cols[4096];
		float vals[4096];
		for (int32_t v = 0; b && v < V; v++) {
			size_t n = 0;
			if (sm) {
				cols[n] = v;
				vals[n++] = 1.0f;
			} else {
				for (int32_t k = phi->indptr[v]; k < phi->indptr[v + 1]; k++) {
					if (n + 1 >= sizeof cols / sizeof cols[0]) {
						llr_csr_builder_free(b);
						return llr_err_set(err, LLR_ERANGE, "encoder-decoder: word %d has more than 4094 features", v);
					}
					cols[n] = phi->indices[k];
					vals[n++] = phi->data[k];
				}
			}
			cols[n] = F + v;
			vals[n++] = 1.0f;
			if (llr_csr_builder_row(b, cols, vals, n, err) < 0) {
				llr_csr_builder_free(b);
				return llr_err_code(err, LLR_ENOMEM);
			}
		}
		m->own_phi = b ? llr_csr_builder_finish(b, err) : NULL;
	}
	if (!m->own_phi)
		return llr_err_set(err, LLR_ENOMEM, "encoder-decoder: out of memory");
	m->out.phi = m->own_phi;
	return LLR_OK;
}

/* llr_encdec_new, its weights allocated or (empty) left for
 * llr_encdec_params_grow. */
static llr_encdec *encdec_new(const llr_encdec_config *c, const llr_csr *src_psi, const llr_csr *phi, const llr_csr *psi, const float *logb,
                              const float *table, int empty, llr_err *err)
{
	if (check_config(c, src_psi, phi, psi, logb, table, err) < 0)
		return NULL;
	llr_encdec *m = calloc(1, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "encoder-decoder: out of memory"), NULL;
	m->cfg = *c;
	llr_encdec_config *cf = &m->cfg;
	int sm = cf->output == LLR_OUT_SOFTMAX;
	if (sm)
		cf->feat_out = cf->feat_in = cf->vocab;
	if (cf->attention != LLR_ATT_MLP)
		cf->attn_hidden = 0;
	m->spsi = src_psi;
	m->table = cf->primed ? table : NULL;
	if (build_output(m, phi, logb, err) < 0) {
		llr_encdec_free(m);
		return NULL;
	}
	/* the target input side: psi, or the identity for softmax */
	m->tpsi = psi ? psi : phi;
	if (sm && m->out.identity) {
		m->tpsi = m->own_phi;
	} else if (sm) {
		if (!(m->own_eye = llr_csr_identity(cf->vocab, err))) {
			llr_encdec_free(m);
			return NULL;
		}
		m->tpsi = m->own_eye;
	}

	int E = cf->embed, H = cf->hidden, h = H / 2, A = cf->attn_hidden;
	add_tensor(m, "src/embed", 2, cf->src_feat, E, &m->o_semb);
	for (int l = 0; l < cf->enc_layers; l++) {
		for (int d = 0; d < 2; d++) {
			char nm[24];
			const char *dn = d ? "bw" : "fw";
			snprintf(nm, sizeof nm, "enc%d/%s/wx", l, dn);
			add_tensor(m, nm, 2, l ? H : E, 4 * h, &m->o_ewx[l][d]);
			snprintf(nm, sizeof nm, "enc%d/%s/wh", l, dn);
			add_tensor(m, nm, 2, h, 4 * h, &m->o_ewh[l][d]);
			snprintf(nm, sizeof nm, "enc%d/%s/b", l, dn);
			add_tensor(m, nm, 1, 4 * h, 0, &m->o_eb[l][d]);
		}
	}
	add_tensor(m, "embed", 2, cf->feat_in, E, &m->o_emb);
	add_tensor(m, "bos", 1, E, 0, &m->o_bos);
	add_tensor(m, "dec/wx", 2, E, 4 * H, &m->o_dwx);
	add_tensor(m, "dec/wr", 2, 2 * H, 4 * H, &m->o_dwr);
	add_tensor(m, "dec/b", 1, 4 * H, 0, &m->o_db);
	if (cf->attention == LLR_ATT_BILINEAR)
		add_tensor(m, "att/w", 2, H, H, &m->o_aw);
	if (cf->attention == LLR_ATT_MLP) {
		add_tensor(m, "att/w", 2, H, A, &m->o_aw);
		add_tensor(m, "att/wk", 2, H, A, &m->o_awk);
		add_tensor(m, "att/b", 1, A, 0, &m->o_ab);
		add_tensor(m, "att/v", 1, A, 0, &m->o_av);
	}
	add_tensor(m, "out/w", 2, cf->feat_out, 2 * H, &m->o_ow);
	add_tensor(m, "out/b", 1, cf->feat_out, 0, &m->o_ob);
	if (cf->primed)
		add_tensor(m, "prime/beta", 1, 1, 0, &m->o_beta);
	if (!empty && !llr_encdec_params_grow(m, m->nparams, err)) {
		llr_encdec_free(m);
		return NULL;
	}
	return m;
}

llr_encdec *llr_encdec_new(const llr_encdec_config *c, const llr_csr *src_psi, const llr_csr *phi, const llr_csr *psi, const float *logb, const float *table, llr_err *err)
{
	return encdec_new(c, src_psi, phi, psi, logb, table, 0, err);
}

llr_encdec *llr_encdec_new_empty(const llr_encdec_config *c, const llr_csr *src_psi, const llr_csr *phi, const llr_csr *psi, const float *logb,
                                 const float *table, llr_err *err)
{
	return encdec_new(c, src_psi, phi, psi, logb, table, 1, err);
}

float *llr_encdec_params_grow(llr_encdec *m, size_t n, llr_err *err)
{
	LLR_ASSERT(n <= m->nparams);
	return llr_weights_grow(&m->params, &m->have, &m->grads, n, m->nparams, "encoder-decoder", err);
}

void llr_encdec_free(llr_encdec *m)
{
	if (!m)
		return;
	fbuf *fb[] = {&m->xs, &m->K, &m->dK, &m->dY, &m->dM, &m->ehd, &m->ez, &m->edc, &m->edx, &m->edxr,
	              &m->xe, &m->act, &m->cell, &m->tc, &m->O, &m->Od, &m->omask, &m->alpha, &m->Q, &m->U,
	              &m->dO, &m->dz, &m->dcc, &m->dQ, &m->de, &m->dxe, &m->LT, &m->Aout, &m->dAout, &m->llwork};
	for (size_t i = 0; i < sizeof fb / sizeof fb[0]; i++)
		free(fb[i]->p);
	for (int l = 0; l < MAX_ENC; l++) {
		free(m->xr[l].p);
		free(m->Y[l].p);
		free(m->Yd[l].p);
		free(m->ymask[l].p);
		for (int d = 0; d < 2; d++) {
			free(m->ed[l][d].act.p);
			free(m->ed[l][d].c.p);
			free(m->ed[l][d].tc.p);
			free(m->ed[l][d].h.p);
		}
	}
	free(m->sid.p);
	free(m->len.p);
	free(m->in.p);
	free(m->tg.p);
	free(m->fq.p);
	free(m->chunk);
	free(m->params);
	free(m->grads);
	llr_csr_free(m->own_phi);
	llr_csr_free(m->own_eye);
	free(m->own_logb);
	free(m);
}

int llr_encdec_set_fsa(llr_encdec *m, const llr_fsa *a, llr_err *err)
{
	if (a && (llr_fsa_eos(a) < 0 || llr_fsa_eos(a) >= m->out.V))
		return llr_err_set(err, LLR_EINVAL, "encoder-decoder: the automaton's vocabulary has no </s> among the %d targets", m->out.V);
	m->fsa = a;
	m->out.fsa = a;
	return LLR_OK;
}

const llr_fsa *llr_encdec_fsa(const llr_encdec *m)
{
	return m->fsa;
}

const llr_encdec_config *llr_encdec_cfg(const llr_encdec *m)
{
	return &m->cfg;
}

float *llr_encdec_params(llr_encdec *m, size_t *n)
{
	if (n)
		*n = m->nparams;
	return m->params;
}

float *llr_encdec_grads(llr_encdec *m, size_t *n)
{
	if (n)
		*n = m->nparams;
	return m->grads;
}

size_t llr_encdec_n_tensors(const llr_encdec *m)
{
	return m->nt;
}

void llr_encdec_tensor_info(const llr_encdec *m, size_t i, const char **name, int *ndim, int64_t shape[2], size_t *offset)
{
	LLR_ASSERT(i < m->nt);
	const tinfo *t = &m->ti[i];
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

void llr_encdec_init(llr_encdec *m, llr_rng *rng)
{
	for (size_t i = 0; i < m->nt; i++) {
		const tinfo *t = &m->ti[i];
		float *p = m->params + t->off;
		size_t n = (size_t)t->shape[0] * (size_t)(t->ndim > 1 ? t->shape[1] : 1);
		const char *nm = t->name;
		size_t ln = strlen(nm);
		int bias = ln >= 2 && !strcmp(nm + ln - 2, "/b");
		for (size_t k = 0; k < n; k++)
			p[k] = bias ? 0.0f : (float)(0.16 * llr_rng_uniform(rng) - 0.08);
		if (bias && (!strncmp(nm, "enc", 3) || !strncmp(nm, "dec", 3)))
			for (size_t j = n / 4; j < n / 2; j++)
				p[j] = 1.0f; /* forget gates */
		if (!strcmp(nm, "prime/beta"))
			p[0] = 1.0f;
	}
}

/* --------------------------------------------------------- workspace */

static int grow(fbuf *b, size_t n)
{
	if (n == 0)
		n = 1;
	if (n <= b->cap)
		return 0;
	size_t cap = b->cap && n < b->cap + b->cap / 2 ? b->cap + b->cap / 2 : n;
	free(b->p);
	b->p = llr_malloc(cap * sizeof(float));
	b->cap = b->p ? cap : 0;
	return b->p ? 0 : -1;
}

static int grow_i(ibuf *b, size_t n)
{
	if (n == 0)
		n = 1;
	if (n <= b->cap)
		return 0;
	free(b->p);
	b->p = llr_malloc(n * sizeof(int32_t));
	b->cap = b->p ? n : 0;
	return b->p ? 0 : -1;
}

static int key_width(const llr_encdec *m)
{
	return m->cfg.attention == LLR_ATT_BILINEAR ? m->cfg.hidden : m->cfg.attn_hidden;
}

/* Buffers for B streams, S source and T target steps. */
static int ensure(llr_encdec *m, int B, int S, int T, int train, llr_err *err)
{
	const llr_encdec_config *c = &m->cfg;
	size_t E = (size_t)c->embed, H = (size_t)c->hidden, h = H / 2, A = (size_t)c->attn_hidden;
	size_t NS = (size_t)S * B, NT = (size_t)T * B, KW = (size_t)key_width(m), V = (size_t)c->vocab;
	size_t D = LLR_MAX(E, H);
	int drop = train && c->dropout > 0.0f;
	int bad = grow_i(&m->sid, NS) | grow_i(&m->len, (size_t)B) | grow_i(&m->in, NT) | grow_i(&m->tg, NT) | grow_i(&m->fq, NT);
	bad |= grow(&m->xs, NS * E) | grow(&m->K, NS * KW);
	for (int l = 0; l < c->enc_layers; l++) {
		bad |= grow(&m->xr[l], NS * (l ? H : E)) | grow(&m->Y[l], NS * H);
		if (drop)
			bad |= grow(&m->Yd[l], NS * H) | grow(&m->ymask[l], NS * H);
		for (int d = 0; d < 2; d++) {
			encdir *e = &m->ed[l][d];
			bad |= grow(&e->act, NS * 4 * h) | grow(&e->c, NS * h) | grow(&e->tc, NS * h) | grow(&e->h, NS * h);
		}
	}
	bad |= grow(&m->xe, NT * E) | grow(&m->act, NT * 4 * H) | grow(&m->cell, NT * H) | grow(&m->tc, NT * H);
	bad |= grow(&m->O, (NT + B) * 2 * H) | grow(&m->alpha, NT * S);
	bad |= grow(&m->Q, NT * A) | grow(&m->U, NT * S * A);
	if (c->primed)
		bad |= grow(&m->LT, (size_t)B * V);
	if (drop)
		bad |= grow(&m->Od, NT * 2 * H) | grow(&m->omask, NT * 2 * H);
	if (train) {
		bad |= grow(&m->dK, NS * KW) | grow(&m->dY, NS * H) | grow(&m->dM, NS * H) | grow(&m->ehd, NS * h);
		bad |= grow(&m->ez, NS * 4 * h) | grow(&m->edc, (size_t)B * h) | grow(&m->edx, NS * D) | grow(&m->edxr, NS * D);
		bad |= grow(&m->dO, (NT + B) * 2 * H) | grow(&m->dz, NT * 4 * H) | grow(&m->dcc, (size_t)B * H);
		bad |= grow(&m->dQ, (size_t)B * A) | grow(&m->de, (size_t)B * S) | grow(&m->dxe, NT * E);
	}
	/* the output block: Fo x slice positions, bounded by the budget */
	size_t Fo = (size_t)m->Fo;
	size_t cap = OUT_BUDGET / (Fo * 2 * sizeof(float));
	cap = LLR_MAX(cap / LLR_LL_CHUNK * LLR_LL_CHUNK, (size_t)LLR_LL_CHUNK);
	size_t slice = LLR_MIN(NT, cap);
	if (slice > (size_t)m->slice)
		m->slice = (int)slice;
	bad |= grow(&m->Aout, Fo * (size_t)m->slice);
	if (train)
		bad |= grow(&m->dAout, Fo * (size_t)m->slice);
	size_t nch = llr_ll_chunk_size(m->slice);
	if (nch > m->chunk_cap) {
		free(m->chunk);
		m->chunk = llr_malloc(nch * sizeof(double));
		m->chunk_cap = m->chunk ? nch : 0;
		bad |= !m->chunk;
	}
	int th = llr_blas_threads();
	if (th != m->llthreads) {
		m->llwork.cap = 0;
		free(m->llwork.p);
		m->llwork.p = NULL;
		m->llthreads = th;
	}
	bad |= grow(&m->llwork, llr_ll_work_size(c->vocab, th));
	if (bad)
		return llr_err_set(err, LLR_ENOMEM, "encoder-decoder: out of memory for a batch of %d x (%d + %d) steps", B, S, T);
	return LLR_OK;
}

/* Check a batch and copy its ids: m->sid (source, LLR_PAD_IN past the
 * length), m->len, m->in (LLR_PAD_IN at padding with no valid input) and
 * m->tg. */
static int load_batch(llr_encdec *m, const llr_encdec_batch *bt, llr_err *err)
{
	const llr_encdec_config *c = &m->cfg;
	int B = bt->B, S = bt->S;
	for (int b = 0; b < B; b++) {
		int L = bt->src_len[b];
		if (L < 0 || L > S)
			return llr_err_set(err, LLR_EINVAL, "batch: stream %d: source length %d out of range [0, %d]", b, L, S);
		m->len.p[b] = L;
		for (int j = 0; j < S; j++) {
			size_t n = (size_t)j * B + b;
			int32_t x = j < L ? bt->src[n] : LLR_PAD_IN;
			if (j < L && (x < 0 || x >= c->src_vocab))
				return llr_err_set(err, LLR_EINVAL, "batch: source position %d, stream %d: id %d out of range [0, %d)", j, b, x, c->src_vocab);
			m->sid.p[n] = x;
		}
	}
	size_t NT = (size_t)bt->T * B;
	for (size_t n = 0; n < NT; n++) {
		int32_t y = bt->target ? bt->target[n] : -1, x = bt->input[n];
		if (y < -1 || y >= c->vocab)
			return llr_err_set(err, LLR_EINVAL, "batch: step %d, stream %d: target %d out of range [0, %d)", (int)(n / B), (int)(n % B), y, c->vocab);
		int valid = x == LLR_BOS_ID || (x >= 0 && x < m->tpsi->rows);
		if (!valid && (y >= 0 || !bt->target))
			return llr_err_set(err, LLR_EINVAL, "batch: step %d, stream %d: input %d out of range [0, %d)", (int)(n / B), (int)(n % B), x, m->tpsi->rows);
		m->in.p[n] = valid ? x : LLR_PAD_IN;
		m->tg.p[n] = y;
		/* the automaton's state after the inputs since <s> (-1 once
		 * one is rejected; padding steps keep a state, unused) */
		if (m->fsa) {
			int32_t prev = n >= (size_t)B ? m->fq.p[n - B] : -1;
			m->fq.p[n] = x == LLR_BOS_ID ? llr_fsa_start(m->fsa) : y < 0 ? prev : prev >= 0 ? llr_fsa_next(m->fsa, prev, x, NULL) : -1;
		}
	}
	return LLR_OK;
}

/* log tbar(x | C) for the source ids src[j * stride + b], j < len, into
 * lt (V): the mean of the table's rows, uniform for an empty source. */
static void prime_row(const llr_encdec *m, const int32_t *src, size_t stride, int len, float *lt)
{
	int32_t V = m->cfg.vocab;
	if (len == 0) {
		for (int32_t x = 0; x < V; x++)
			lt[x] = (float)-log((double)V);
		return;
	}
	for (int32_t x = 0; x < V; x++)
		lt[x] = 0.0f;
	for (int j = 0; j < len; j++) {
		const float *row = m->table + (size_t)src[(size_t)j * stride] * V;
		for (int32_t x = 0; x < V; x++)
			lt[x] += row[x];
	}
	for (int32_t x = 0; x < V; x++)
		lt[x] = logf(lt[x] / (float)len);
}

/* --------------------------------------------------------- the layers */

/* Row n = j * B + b of X to row rev(n) of Xr, where the first len_b
 * positions of stream b are reversed and the rest stay (an involution). */
static void reverse_rows(const float *X, float *Xr, int S, int B, const int32_t *len, size_t D)
{
	for (int j = 0; j < S; j++)
		for (int b = 0; b < B; b++) {
			int jr = j < len[b] ? len[b] - 1 - j : j;
			memcpy(Xr + ((size_t)jr * B + b) * D, X + ((size_t)j * B + b) * D, D * sizeof(float));
		}
}

static llr_lstm_io enc_io(llr_encdec *m, int l, int d, int S, int B)
{
	const float *P = m->params;
	encdir *e = &m->ed[l][d];
	return (llr_lstm_io){
	    .T = S,
	    .B = B,
	    .Din = l ? m->cfg.hidden : m->cfg.embed,
	    .H = m->cfg.hidden / 2,
	    .wx = P + m->o_ewx[l][d],
	    .wh = P + m->o_ewh[l][d],
	    .b = P + m->o_eb[l][d],
	    .act = e->act.p,
	    .c = e->c.p,
	    .tc = e->tc.p,
	    .h = e->h.p,
	};
}

/* The layer l input: the embeddings or the previous layer's output. */
static const float *enc_input(const llr_encdec *m, int l, int drop)
{
	return l == 0 ? m->xs.p : drop ? m->Yd[l - 1].p
	                               : m->Y[l - 1].p;
}

/* The encoder over m->sid (S x B, lengths m->len); returns the memory
 * (S*B x H). */
static const float *enc_forward(llr_encdec *m, int B, int S, int drop, llr_rng *rng)
{
	const llr_encdec_config *c = &m->cfg;
	size_t NS = (size_t)S * B, H = (size_t)c->hidden, h = H / 2, E = (size_t)c->embed;
	const int32_t *len = m->len.p;
	llr_embed_forward(m->spsi, m->params + m->o_semb, m->params + m->o_bos, (int)E, m->sid.p, NS, m->xs.p);
	for (int l = 0; l < c->enc_layers; l++) {
		const float *X = enc_input(m, l, drop);
		reverse_rows(X, m->xr[l].p, S, B, len, l ? H : E);
		for (int d = 0; d < 2; d++) {
			llr_lstm_io io = enc_io(m, l, d, S, B);
			llr_lstm_forward(&io, d ? m->xr[l].p : X);
		}
		float *Y = m->Y[l].p;
		const float *hf = m->ed[l][0].h.p, *hb = m->ed[l][1].h.p;
		for (int j = 0; j < S; j++)
			for (int b = 0; b < B; b++) {
				float *y = Y + ((size_t)j * B + b) * H;
				if (j >= len[b]) {
					memset(y, 0, H * sizeof *y);
					continue;
				}
				memcpy(y, hf + ((size_t)j * B + b) * h, h * sizeof *y);
				memcpy(y + h, hb + ((size_t)(len[b] - 1 - j) * B + b) * h, h * sizeof *y);
			}
		if (drop)
			llr_dropout(Y, m->Yd[l].p, m->ymask[l].p, NS * H, c->dropout, rng);
	}
	int top = c->enc_layers - 1;
	return drop ? m->Yd[top].p : m->Y[top].p;
}

/* The decoder's initial [h; ctx] for stream b: the forward state at the
 * last position, the backward state at the first, a zero context. */
static void bridge(const llr_encdec *m, int B, int b, float *o)
{
	size_t H = (size_t)m->cfg.hidden, h = H / 2;
	const float *Y = m->Y[m->cfg.enc_layers - 1].p;
	int L = m->len.p[b];
	memset(o, 0, 2 * H * sizeof *o);
	if (L == 0)
		return;
	memcpy(o, Y + ((size_t)(L - 1) * B + b) * H, h * sizeof *o);
	memcpy(o + h, Y + (size_t)b * H + h, h * sizeof *o);
}

/* z (rows x 4H) + bias -> gates i, f, o (sigmoid) and g (tanh) in place;
 * c = f c_prev + i g (c_prev NULL: zero), tc = tanh(c), h = o tc (rows
 * of ldh). */
LLR_CLONES LLR_VECTORIZE static void cell_forward(float *z, const float *bias, const float *cprev, float *c, float *tc, float *h, int ldh, int rows, int H)
{
	int G = 4 * H;
	for (int r = 0; r < rows; r++) {
		float *zr = z + (size_t)r * G;
		for (int j = 0; j < 3 * H; j++)
			zr[j] = -(zr[j] + bias[j]);
		for (int j = 3 * H; j < G; j++)
			zr[j] = 2.0f * (zr[j] + bias[j]);
	}
	llr_vexp(z, z, (size_t)rows * G);
	for (int r = 0; r < rows; r++) {
		float *zr = z + (size_t)r * G;
		for (int j = 0; j < 3 * H; j++)
			zr[j] = 1.0f / (1.0f + zr[j]);
		for (int j = 3 * H; j < G; j++)
			zr[j] = 1.0f - 2.0f / (1.0f + zr[j]);
	}
	for (int r = 0; r < rows; r++) {
		const float *zi = z + (size_t)r * G, *zf = zi + H, *zg = zi + 3 * H;
		float *cr = c + (size_t)r * H, *tr = tc + (size_t)r * H;
		const float *cp = cprev ? cprev + (size_t)r * H : NULL;
		for (int j = 0; j < H; j++)
			cr[j] = (cp ? zf[j] * cp[j] : 0.0f) + zi[j] * zg[j];
		for (int j = 0; j < H; j++)
			tr[j] = 2.0f * cr[j];
	}
	llr_vexp(tc, tc, (size_t)rows * H);
	for (int r = 0; r < rows; r++) {
		const float *zo = z + (size_t)r * G + 2 * H;
		float *tr = tc + (size_t)r * H, *hr = h + (size_t)r * ldh;
		for (int j = 0; j < H; j++) {
			tr[j] = 1.0f - 2.0f / (1.0f + tr[j]);
			hr[j] = zo[j] * tr[j];
		}
	}
}

/* Its backward: from dh (rows of ldh) and the carried dc (rows x H,
 * updated to dLoss/dc_prev), dz (rows x 4H) of the pre-activations. */
LLR_CLONES LLR_VECTORIZE static void cell_backward(const float *act, const float *tc, const float *cprev, const float *dh, int ldh, float *dc, float *dz, int rows, int H)
{
	int G = 4 * H;
	for (int r = 0; r < rows; r++) {
		const float *a = act + (size_t)r * G, *ai = a, *af = a + H, *ao = a + 2 * H, *ag = a + 3 * H;
		const float *t = tc + (size_t)r * H, *d = dh + (size_t)r * ldh;
		const float *cp = cprev ? cprev + (size_t)r * H : NULL;
		float *z = dz + (size_t)r * G, *dcr = dc + (size_t)r * H;
		for (int j = 0; j < H; j++) {
			float dcv = dcr[j] + d[j] * ao[j] * (1.0f - t[j] * t[j]);
			float cpv = cp ? cp[j] : 0.0f;
			z[j] = dcv * ag[j] * ai[j] * (1.0f - ai[j]);
			z[H + j] = dcv * cpv * af[j] * (1.0f - af[j]);
			z[2 * H + j] = d[j] * t[j] * ao[j] * (1.0f - ao[j]);
			z[3 * H + j] = dcv * ai[j] * (1.0f - ag[j] * ag[j]);
			dcr[j] = dcv * af[j];
		}
	}
}

static llr_attn attn_of(llr_encdec *m, int B, int S, const int32_t *len, const float *M, float *K, int shared)
{
	const float *P = m->params;
	const llr_encdec_config *c = &m->cfg;
	return (llr_attn){
	    .kind = c->attention,
	    .B = B,
	    .S = S,
	    .C = c->hidden,
	    .H = c->hidden,
	    .A = c->attn_hidden,
	    .shared = shared,
	    .len = len,
	    .M = M,
	    .K = K,
	    .W = P + m->o_aw,
	    .Wk = P + m->o_awk,
	    .c = P + m->o_ab,
	    .v = P + m->o_av,
	};
}

/* The decoder over T steps from O's first B rows (the bridge). */
static void dec_forward(llr_encdec *m, const llr_attn *a, int B, int T)
{
	const llr_encdec_config *c = &m->cfg;
	const float *P = m->params;
	int E = c->embed, H = c->hidden, G = 4 * H, D2 = 2 * H, S = a->S, A = c->attn_hidden;
	size_t NT = (size_t)T * B;
	llr_embed_forward(m->tpsi, P + m->o_emb, P + m->o_bos, E, m->in.p, NT, m->xe.p);
	llr_gemm(0, 0, (int)NT, G, E, 1.0f, m->xe.p, E, P + m->o_dwx, G, 0.0f, m->act.p, G);
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	for (int t = 0; t < T; t++) {
		size_t r0 = (size_t)t * B;
		float *z = m->act.p + r0 * G, *o = m->O.p + (r0 + B) * D2;
		llr_gemm(0, 0, B, G, D2, 1.0f, m->O.p + r0 * D2, D2, P + m->o_dwr, G, 1.0f, z, G);
		cell_forward(z, P + m->o_db, t ? m->cell.p + (r0 - B) * H : NULL, m->cell.p + r0 * H, m->tc.p + r0 * H, o, D2, B, H);
		llr_attn_forward(a, o, D2, m->alpha.p + r0 * S, o + H, D2, m->Q.p + r0 * A, m->U.p + r0 * S * A);
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
}

/* The output layer over N positions of X (N x 2H), in slices: the dense
 * adaptor, the background rows when primed (position n is stream n % B,
 * whose log tbar is lt + (n % B) * lt_stride), the log-linear pass; when
 * training (dX not NULL) dX (N x 2H) and the gradients of out/ and beta. */
static int out_pass(llr_encdec *m, int B, size_t N, const float *X, const int32_t *tg, const int32_t *fq, const float *lt, size_t lt_stride, double *nll, float *logp_t, double *norm_err, float *logp_all, float *dX)
{
	const llr_encdec_config *c = &m->cfg;
	int D2 = 2 * c->hidden, F = c->feat_out, V = c->vocab;
	const float *P = m->params;
	float beta = c->primed ? P[m->o_beta] : 0.0f;
	double tot = 0.0, worst = 0.0, dbeta = 0.0;
	int rc = LLR_OK;
	for (size_t p0 = 0; p0 < N; p0 += (size_t)m->slice) {
		int n = (int)LLR_MIN((size_t)m->slice, N - p0);
		float *A = m->Aout.p;
		llr_dense_forward(n, D2, F, X + p0 * D2, P + m->o_ow, P + m->o_ob, A, n);
		for (int x = 0; c->primed && x < V; x++) {
			float *row = A + (size_t)(F + x) * n;
			for (int k = 0; k < n; k++)
				row[k] = beta * lt[((p0 + (size_t)k) % (size_t)B) * lt_stride + x];
		}
		double s = 0.0, ne = 0.0;
		llr_ll_io io = {
			.mode = dX ? LLR_LL_GRAD : logp_all ? LLR_LL_DIST : LLR_LL_LOSS,
			.N = n, .lda = n, .A = A, .target = tg ? tg + p0 : NULL,
			.nll = &s, .logp_t = logp_t ? logp_t + p0 : NULL, .norm_err = norm_err ? &ne : NULL,
			.logp_all = logp_all ? logp_all + p0 * (size_t)V : NULL, .dA = dX ? m->dAout.p : NULL,
			.work = m->llwork.p, .chunk = m->chunk, .threads = m->llthreads,
			.ctx = m->fsa ? fq + p0 : NULL,
		};
		int r = llr_ll_run(&m->out, &io);
		if (r < 0)
			rc = r;
		tot += s;
		if (llr_norm_worse(ne, worst))
			worst = ne;
		if (!dX)
			continue;
		for (int x = 0; c->primed && x < V; x++) {
			const float *row = m->dAout.p + (size_t)(F + x) * n;
			for (int k = 0; k < n; k++)
				dbeta += (double)row[k] * lt[((p0 + (size_t)k) % (size_t)B) * lt_stride + x];
		}
		llr_dense_backward(n, D2, F, X + p0 * D2, P + m->o_ow, m->dAout.p, n, dX + p0 * D2, m->grads + m->o_ow, m->grads + m->o_ob);
	}
	if (c->primed && dX)
		m->grads[m->o_beta] += (float)dbeta;
	if (nll)
		*nll = tot;
	if (norm_err)
		*norm_err = worst;
	return rc;
}

/* Forward through encoder, bridge and decoder for a loaded batch;
 * returns the output layer's input (T*B x 2H). */
static const float *forward(llr_encdec *m, const llr_encdec_batch *bt, int drop, llr_rng *rng, llr_attn *a)
{
	const llr_encdec_config *c = &m->cfg;
	int B = bt->B, S = bt->S, T = bt->T, D2 = 2 * c->hidden;
	const float *M = enc_forward(m, B, S, drop, rng);
	for (int b = 0; b < B; b++)
		bridge(m, B, b, m->O.p + (size_t)b * D2);
	for (int b = 0; c->primed && b < B; b++)
		prime_row(m, m->sid.p + b, (size_t)B, m->len.p[b], m->LT.p + (size_t)b * c->vocab);
	*a = attn_of(m, B, S, m->len.p, M, m->K.p, 0);
	llr_attn_keys(a);
	dec_forward(m, a, B, T);
	const float *X = m->O.p + (size_t)B * D2;
	if (drop) {
		size_t n = (size_t)T * B * D2;
		llr_dropout(X, m->Od.p, m->omask.p, n, c->dropout, rng);
		X = m->Od.p;
	}
	return X;
}

static void dec_backward(llr_encdec *m, const llr_attn *a, int B, int T)
{
	const llr_encdec_config *c = &m->cfg;
	const float *P = m->params;
	float *G = m->grads;
	int E = c->embed, H = c->hidden, G4 = 4 * H, D2 = 2 * H, S = a->S, A = c->attn_hidden;
	size_t NT = (size_t)T * B;
	memset(m->dcc.p, 0, (size_t)B * H * sizeof(float));
	int threads = llr_blas_threads();
	if (threads > 1)
		llr_blas_set_threads(1);
	for (int t = T - 1; t >= 0; t--) {
		size_t r0 = (size_t)t * B;
		const float *o = m->O.p + (r0 + B) * D2;
		float *d = m->dO.p + (r0 + B) * D2, *dz = m->dz.p + r0 * G4;
		llr_attn_backward(a, o, D2, m->alpha.p + r0 * S, m->U.p + r0 * S * A, d + H, D2, d, D2, m->dM.p, m->dK.p, m->dQ.p,
		                  G + m->o_aw, G + m->o_av, m->de.p);
		cell_backward(m->act.p + r0 * G4, m->tc.p + r0 * H, t ? m->cell.p + (r0 - B) * H : NULL, d, D2, m->dcc.p, dz, B, H);
		llr_gemm(0, 1, B, D2, G4, 1.0f, dz, G4, P + m->o_dwr, G4, 1.0f, m->dO.p + r0 * D2, D2);
	}
	if (threads > 1)
		llr_blas_set_threads(threads);
	llr_gemm(1, 0, D2, G4, (int)NT, 1.0f, m->O.p, D2, m->dz.p, G4, 1.0f, G + m->o_dwr, G4);
	llr_gemm(1, 0, E, G4, (int)NT, 1.0f, m->xe.p, E, m->dz.p, G4, 1.0f, G + m->o_dwx, G4);
	float *db = G + m->o_db;
	for (size_t n = 0; n < NT; n++) {
		const float *dz = m->dz.p + n * G4;
		for (int j = 0; j < G4; j++)
			db[j] += dz[j];
	}
	llr_gemm(0, 1, (int)NT, E, G4, 1.0f, m->dz.p, G4, P + m->o_dwx, G4, 0.0f, m->dxe.p, E);
	llr_embed_backward(m->tpsi, E, m->in.p, NT, m->dxe.p, G + m->o_emb, G + m->o_bos);
	llr_attn_keys_backward(a, m->dK.p, m->dM.p, G + m->o_aw, G + m->o_awk, G + m->o_ab);
}

static void enc_backward(llr_encdec *m, int B, int S, int drop)
{
	const llr_encdec_config *c = &m->cfg;
	float *G = m->grads;
	size_t NS = (size_t)S * B, H = (size_t)c->hidden, h = H / 2, E = (size_t)c->embed;
	const int32_t *len = m->len.p;
	int top = c->enc_layers - 1;
	float *dY = m->dY.p;
	for (size_t k = 0; k < NS * H; k++)
		dY[k] = drop ? m->dM.p[k] * m->ymask[top].p[k] : m->dM.p[k];
	for (int b = 0; b < B; b++) {
		const float *d0 = m->dO.p + (size_t)b * 2 * H;
		if (len[b] == 0)
			continue;
		float *yl = dY + ((size_t)(len[b] - 1) * B + b) * H, *yf = dY + (size_t)b * H + h;
		for (size_t j = 0; j < h; j++) {
			yl[j] += d0[j];
			yf[j] += d0[h + j];
		}
	}
	for (int l = top; l >= 0; l--) {
		size_t Din = l ? H : E;
		const float *X = enc_input(m, l, drop);
		for (size_t n = 0; n < NS; n++)
			memcpy(m->ehd.p + n * h, dY + n * H, h * sizeof(float));
		llr_lstm_io io = enc_io(m, l, 0, S, B);
		llr_lstm_backward(&io, X, m->ehd.p, m->ez.p, m->edc.p, m->edx.p, G + m->o_ewx[l][0], G + m->o_ewh[l][0], G + m->o_eb[l][0]);
		for (int j = 0; j < S; j++)
			for (int b = 0; b < B; b++) {
				int jr = j < len[b] ? len[b] - 1 - j : j;
				memcpy(m->ehd.p + ((size_t)jr * B + b) * h, dY + ((size_t)j * B + b) * H + h, h * sizeof(float));
			}
		io = enc_io(m, l, 1, S, B);
		llr_lstm_backward(&io, m->xr[l].p, m->ehd.p, m->ez.p, m->edc.p, m->edxr.p, G + m->o_ewx[l][1], G + m->o_ewh[l][1], G + m->o_eb[l][1]);
		for (int j = 0; j < S; j++)
			for (int b = 0; b < B; b++) {
				int jr = j < len[b] ? len[b] - 1 - j : j;
				float *dx = m->edx.p + ((size_t)j * B + b) * Din;
				const float *dr = m->edxr.p + ((size_t)jr * B + b) * Din;
				for (size_t k = 0; k < Din; k++)
					dx[k] += dr[k];
			}
		if (l > 0) {
			const float *mask = drop ? m->ymask[l - 1].p : NULL;
			for (size_t k = 0; k < NS * H; k++)
				dY[k] = mask ? m->edx.p[k] * mask[k] : m->edx.p[k];
		} else {
			llr_embed_backward(m->spsi, (int)E, m->sid.p, NS, m->edx.p, G + m->o_semb, G + m->o_bos);
		}
	}
}

static int check_batch(const llr_encdec_batch *bt, llr_err *err)
{
	if (bt->B <= 0 || bt->T <= 0 || bt->S < 0 || !bt->src_len || !bt->input || !bt->target || (bt->S > 0 && !bt->src))
		return llr_err_set(err, LLR_EINVAL, "batch: empty or incomplete");
	return LLR_OK;
}

int llr_encdec_train_step(llr_encdec *m, const llr_encdec_batch *bt, llr_rng *rng, double *nll, int64_t *ntok, llr_err *err)
{
	const llr_encdec_config *c = &m->cfg;
	int rc = check_batch(bt, err);
	if (rc < 0 || (rc = ensure(m, bt->B, bt->S, bt->T, 1, err)) < 0 || (rc = load_batch(m, bt, err)) < 0)
		return rc;
	int B = bt->B, S = bt->S, T = bt->T, D2 = 2 * c->hidden, drop = rng && c->dropout > 0.0f;
	size_t NT = (size_t)T * B;
	int64_t cnt = 0;
	for (size_t n = 0; n < NT; n++)
		cnt += m->tg.p[n] >= 0;
	llr_attn a;
	const float *X = forward(m, bt, drop, rng, &a);
	double s = 0.0;
	float *dX = m->dO.p + (size_t)B * D2;
	rc = out_pass(m, B, NT, X, m->tg.p, m->fq.p, m->LT.p, (size_t)c->vocab, &s, NULL, NULL, NULL, dX);
	if (nll)
		*nll = s;
	if (ntok)
		*ntok = cnt;
	if (rc < 0)
		return llr_err_set(err, rc, "encoder-decoder: loss is not finite (%g)", s);
	if (drop)
		for (size_t k = 0; k < NT * D2; k++)
			dX[k] *= m->omask.p[k];
	memset(m->dO.p, 0, (size_t)B * D2 * sizeof(float));
	memset(m->dM.p, 0, (size_t)S * B * c->hidden * sizeof(float));
	memset(m->dK.p, 0, (size_t)S * B * key_width(m) * sizeof(float));
	dec_backward(m, &a, B, T);
	enc_backward(m, B, S, drop);
	return LLR_OK;
}

int llr_encdec_score(llr_encdec *m, const llr_encdec_batch *bt, float *logp, double *norm_err, llr_err *err)
{
	int rc = check_batch(bt, err);
	if (rc < 0 || (rc = ensure(m, bt->B, bt->S, bt->T, 0, err)) < 0 || (rc = load_batch(m, bt, err)) < 0)
		return rc;
	llr_attn a;
	const float *X = forward(m, bt, 0, NULL, &a);
	rc = out_pass(m, bt->B, (size_t)bt->T * bt->B, X, m->tg.p, m->fq.p, m->LT.p, (size_t)m->cfg.vocab, NULL, logp, norm_err, NULL, NULL);
	if (rc < 0)
		return llr_err_set(err, rc, "encoder-decoder: log-probability is not finite");
	return LLR_OK;
}

/* ---------------------------------------------------------- decoding */

llr_encdec_state *llr_encdec_state_new(const llr_encdec *m, int K)
{
	if (K <= 0)
		return NULL;
	llr_encdec_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	size_t H = (size_t)m->cfg.hidden;
	s->K = K;
	s->H = (int)H;
	s->O = llr_calloc((size_t)K * 2 * H, sizeof(float));
	s->O2 = llr_calloc((size_t)K * 2 * H, sizeof(float));
	s->c = llr_calloc((size_t)K * H, sizeof(float));
	s->c2 = llr_calloc((size_t)K * H, sizeof(float));
	s->LT = llr_calloc((size_t)m->cfg.vocab, sizeof(float));
	s->fq = llr_calloc((size_t)K, sizeof *s->fq);
	s->fq2 = llr_calloc((size_t)K, sizeof *s->fq2);
	if (!s->O || !s->O2 || !s->c || !s->c2 || !s->LT || !s->fq || !s->fq2) {
		llr_encdec_state_free(s);
		return NULL;
	}
	return s;
}

void llr_encdec_state_free(llr_encdec_state *s)
{
	if (!s)
		return;
	free(s->M);
	free(s->Kk);
	free(s->O);
	free(s->O2);
	free(s->c);
	free(s->c2);
	free(s->LT);
	free(s->sid);
	free(s->fq);
	free(s->fq2);
	free(s);
}

int llr_encdec_start(llr_encdec *m, llr_encdec_state *s, const int32_t *src, int len, llr_err *err)
{
	const llr_encdec_config *c = &m->cfg;
	size_t H = (size_t)c->hidden, KW = (size_t)key_width(m);
	if (len < 0)
		return llr_err_set(err, LLR_EINVAL, "source length %d", len);
	if (len > s->Scap) {
		free(s->M);
		free(s->Kk);
		free(s->sid);
		s->M = llr_malloc((size_t)len * H * sizeof(float));
		s->Kk = llr_malloc((size_t)len * (KW ? KW : 1) * sizeof(float));
		s->sid = llr_malloc((size_t)len * sizeof(int32_t));
		s->Scap = s->M && s->Kk && s->sid ? len : 0;
		if (!s->Scap)
			return llr_err_set(err, LLR_ENOMEM, "encoder-decoder: out of memory for a source of %d tokens", len);
	}
	for (int j = 0; j < len; j++)
		if (src[j] < 0 || src[j] >= c->src_vocab)
			return llr_err_set(err, LLR_EINVAL, "source position %d: id %d out of range [0, %d)", j, src[j], c->src_vocab);
	int rc = ensure(m, 1, len, 1, 0, err);
	if (rc < 0)
		return rc;
	memcpy(m->sid.p, src, (size_t)len * sizeof *src);
	memcpy(s->sid, src, (size_t)len * sizeof *src);
	m->len.p[0] = len;
	s->S = len;
	float *o = m->O.p;
	if (len > 0) {
		const float *M = enc_forward(m, 1, len, 0, NULL);
		memcpy(s->M, M, (size_t)len * H * sizeof(float));
		llr_attn a = attn_of(m, 1, len, NULL, s->M, s->Kk, 1);
		llr_attn_keys(&a);
	}
	bridge(m, 1, 0, o);
	for (int k = 0; k < s->K; k++)
		memcpy(s->O + (size_t)k * 2 * H, o, 2 * H * sizeof(float));
	memset(s->c, 0, (size_t)s->K * H * sizeof(float));
	if (c->primed)
		prime_row(m, src, 1, len, s->LT);
	return LLR_OK;
}

int llr_encdec_step(llr_encdec *m, llr_encdec_state *s, int n, const int32_t *input, float *logp, float *attn, llr_err *err)
{
	const llr_encdec_config *c = &m->cfg;
	LLR_ASSERT(n > 0 && n <= s->K);
	int E = c->embed, H = c->hidden, G = 4 * H, D2 = 2 * H;
	const float *P = m->params;
	int rc = ensure(m, n, s->S, 1, 0, err);
	if (rc < 0)
		return rc;
	for (int k = 0; k < n; k++) {
		int32_t x = input[k];
		if (x != LLR_BOS_ID && (x < 0 || x >= m->tpsi->rows))
			return llr_err_set(err, LLR_EINVAL, "decoder input %d out of range [0, %d)", x, m->tpsi->rows);
		m->in.p[k] = x;
		if (m->fsa)
			s->fq[k] = x == LLR_BOS_ID ? llr_fsa_start(m->fsa) : s->fq[k] >= 0 ? llr_fsa_next(m->fsa, s->fq[k], x, NULL) : -1;
	}
	float *o = m->O.p, *z = m->act.p;
	llr_embed_forward(m->tpsi, P + m->o_emb, P + m->o_bos, E, m->in.p, (size_t)n, m->xe.p);
	llr_gemm(0, 0, n, G, E, 1.0f, m->xe.p, E, P + m->o_dwx, G, 0.0f, z, G);
	llr_gemm(0, 0, n, G, D2, 1.0f, s->O, D2, P + m->o_dwr, G, 1.0f, z, G);
	cell_forward(z, P + m->o_db, s->c, m->cell.p, m->tc.p, o, D2, n, H);
	llr_attn a = attn_of(m, n, s->S, NULL, s->M, s->Kk, 1);
	llr_attn_forward(&a, o, D2, m->alpha.p, o + H, D2, m->Q.p, m->U.p);
	rc = out_pass(m, n, (size_t)n, o, NULL, s->fq, s->LT, 0, NULL, NULL, NULL, logp, NULL);
	if (rc < 0)
		return llr_err_set(err, rc, "encoder-decoder: log-probability is not finite");
	for (size_t k = 0; k < (size_t)n * c->vocab; k++)
		if (isnan(logp[k]))
			return llr_err_set(err, LLR_ENAN, "encoder-decoder: log-probability is not a number");
	memcpy(s->O, o, (size_t)n * D2 * sizeof(float));
	memcpy(s->c, m->cell.p, (size_t)n * H * sizeof(float));
	if (attn)
		memcpy(attn, m->alpha.p, (size_t)n * s->S * sizeof(float));
	return LLR_OK;
}

int llr_encdec_state_len(const llr_encdec_state *s)
{
	return s->S;
}

void llr_encdec_state_select(llr_encdec_state *s, const int *from, int n)
{
	LLR_ASSERT(n <= s->K);
	size_t H = (size_t)s->H;
	for (int k = 0; k < n; k++) {
		LLR_ASSERT(from[k] >= 0 && from[k] < s->K);
		memcpy(s->O2 + (size_t)k * 2 * H, s->O + (size_t)from[k] * 2 * H, 2 * H * sizeof(float));
		memcpy(s->c2 + (size_t)k * H, s->c + (size_t)from[k] * H, H * sizeof(float));
		s->fq2[k] = s->fq[from[k]];
	}
	memcpy(s->fq, s->fq2, (size_t)n * sizeof *s->fq);
	memcpy(s->O, s->O2, (size_t)n * 2 * H * sizeof(float));
	memcpy(s->c, s->c2, (size_t)n * H * sizeof(float));
}
