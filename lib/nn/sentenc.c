/*
 * sentenc.c - sentence encoders trained on discourse objectives (Jernite,
 * Bowman and Sontag 2017; Jernite's thesis, chapter 5): a sentence is
 * encoded by the sum of its word embeddings (CBOW), by a GRU or by a
 * bidirectional GRU, the recurrent ones max-pooled over their hidden
 * states; bilinear classifiers on the encodings predict ORDER (are two
 * sentences in order), CONJ (the discourse marker's class) and NEXT
 * (which of five candidates follows three context sentences).
 *
 * The word embedding is the input embedding of the LL-RNN (embed.c): the
 * row psi[x] of the lexicon's input features times the F_in x E table, so
 * one-hot features give an ordinary lookup table.  All the weights are
 * one flat array (llr_senc_params) in the order of llr_senc_tensor; the
 * gradient array has the same layout.  Dropout, in training, zeroes
 * components of the encodings between the encoder and the heads; word
 * dropout zeroes whole words' embeddings before the encoder (the same
 * words in both directions of the BiGRU), the others scaled by 1 / (1 -
 * p) as dropout scales.  Not here: reading pairs, batching, the
 * optimiser and model files (lib/family/sentenc/train.c,
 * lib/lm/senc_model.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

enum { T_EMB,
       T_FWX,
       T_FWH,
       T_FBX,
       T_FBH,
       T_BWX,
       T_BWH,
       T_BBX,
       T_BBH,
       T_OW,
       T_OB,
       T_NW,
       T_CW,
       T_CB,
       T_N };
static const char *const tnames[T_N] = {
    "emb",
    "gru/wx",
    "gru/wh",
    "gru/bx",
    "gru/bh",
    "gru_rev/wx",
    "gru_rev/wh",
    "gru_rev/bx",
    "gru_rev/bh",
    "order/W",
    "order/b",
    "next/W",
    "conj/W",
    "conj/b",
};

/* One direction's saved forward pass. */
typedef struct dir_ws {
	int32_t *in; /* N packed input ids */
	size_t *pos; /* N: the packed row's token, counted from the first */
	float *X;    /* N x E */
	float *a, *c, *g, *h;
	int32_t *arg; /* n x H: the packed row each pooled maximum came from */
} dir_ws;

struct llr_senc {
	llr_senc_config c;
	const llr_csr *psi;
	int D;
	int64_t shape[T_N][2];
	size_t off[T_N], size[T_N];
	size_t n_params;
	size_t have; /* w allocated so far (llr_senc_params_grow) */
	float *w, *grad;

	/* the last forward pass */
	size_t n, N; /* sentences, tokens */
	int T;
	size_t *perm; /* sorted position -> sentence */
	int *len;     /* sorted lengths */
	int *rows;    /* T */
	size_t *cnt;  /* T + 1: the sort by length */
	const int32_t *ids;
	const size_t *soff;
	const float *wm; /* word dropout: N, 0 or 1 / (1 - p) a token; NULL: none */
	dir_ws d[2];
	float *dh, *da, *dc, *dX; /* backward scratch */
	size_t cap_n, cap_N, cap_T;
	/* heads */
	float *enc, *denc, *U, *Vv, *UW, *dUW, *dU, *p;
	int32_t *wlabel; /* NEXT with in-batch negatives: the gold column a row */
	size_t cap_wlabel;
	float *mask;  /* dropout: 0 or 1 / (1 - p) per component of enc */
	float *wmask; /* word dropout: the mask of llr_senc_run's tokens */
	size_t cap_enc, cap_head, cap_wmask;
	/* llr_senc_rows */
	unsigned char *rmark; /* psi->cols zeros between calls */
	int32_t *rrow;        /* psi->cols */
	llr_rows rblk;
};

int llr_senc_encoder_parse(const char *s)
{
	if (!strcmp(s, "cbow"))
		return LLR_SENC_CBOW;
	if (!strcmp(s, "gru"))
		return LLR_SENC_GRU;
	if (!strcmp(s, "bigru"))
		return LLR_SENC_BIGRU;
	return 0;
}

const char *llr_senc_encoder_name(int kind)
{
	return kind == LLR_SENC_CBOW ? "cbow" : kind == LLR_SENC_GRU ? "gru"
	                                    : kind == LLR_SENC_BIGRU ? "bigru"
	                                                             : "?";
}

static void set_shape(llr_senc *s, int t, int64_t r, int64_t c)
{
	s->shape[t][0] = r;
	s->shape[t][1] = c;
}

/* llr_senc_new, its weights allocated or (empty) left for
 * llr_senc_params_grow. */
static llr_senc *senc_new(const llr_senc_config *c, const llr_csr *psi, int empty, llr_err *err)
{
	if (c->encoder < LLR_SENC_CBOW || c->encoder > LLR_SENC_BIGRU) {
		llr_err_set(err, LLR_EINVAL, "unknown encoder %d", c->encoder);
		return NULL;
	}
	if (c->E < 1 || c->E > 65536 || (c->encoder != LLR_SENC_CBOW && (c->H < 1 || c->H > 65536))) {
		llr_err_set(err, LLR_EINVAL, "embedding size %d or hidden size %d out of range", c->E, c->H);
		return NULL;
	}
	if (!(c->tasks & LLR_TASK_ALL) || (c->tasks & ~LLR_TASK_ALL) || ((c->tasks & LLR_TASK_CONJ) && (c->n_conj < 2 || c->n_conj > 1024))) {
		llr_err_set(err, LLR_EINVAL, "bad task set %d (CONJ classes %d)", c->tasks, c->n_conj);
		return NULL;
	}
	if (!(c->dropout >= 0.0f && c->dropout < 1.0f)) {
		llr_err_set(err, LLR_EINVAL, "dropout %g: must be in [0, 1)", (double)c->dropout);
		return NULL;
	}
	if (!(c->word_dropout >= 0.0f && c->word_dropout < 1.0f)) {
		llr_err_set(err, LLR_EINVAL, "word dropout %g: must be in [0, 1)", (double)c->word_dropout);
		return NULL;
	}
	if (!psi || psi->cols < 1) {
		llr_err_set(err, LLR_EINVAL, "no input features");
		return NULL;
	}
	llr_senc *s = calloc(1, sizeof *s);
	if (!s) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	s->c = *c;
	s->psi = psi;
	int E = c->E, H = c->H;
	s->D = c->encoder == LLR_SENC_CBOW ? E : c->encoder == LLR_SENC_GRU ? H
	                                                                    : 2 * H;
	int D = s->D;
	set_shape(s, T_EMB, psi->cols, E);
	if (c->encoder != LLR_SENC_CBOW) {
		set_shape(s, T_FWX, E, 3 * H);
		set_shape(s, T_FWH, H, 3 * H);
		set_shape(s, T_FBX, 1, 3 * H);
		set_shape(s, T_FBH, 1, 3 * H);
	}
	if (c->encoder == LLR_SENC_BIGRU) {
		set_shape(s, T_BWX, E, 3 * H);
		set_shape(s, T_BWH, H, 3 * H);
		set_shape(s, T_BBX, 1, 3 * H);
		set_shape(s, T_BBH, 1, 3 * H);
	}
	if (c->tasks & LLR_TASK_ORDER) {
		set_shape(s, T_OW, D, 2 * D);
		set_shape(s, T_OB, 1, 2);
	}
	if (c->tasks & LLR_TASK_NEXT)
		set_shape(s, T_NW, 3 * D, D);
	if (c->tasks & LLR_TASK_CONJ) {
		set_shape(s, T_CW, D, (int64_t)c->n_conj * D);
		set_shape(s, T_CB, 1, c->n_conj);
	}
	size_t n = 0;
	for (int t = 0; t < T_N; t++) {
		s->off[t] = n;
		s->size[t] = (size_t)(s->shape[t][0] * s->shape[t][1]);
		n += s->size[t];
	}
	s->n_params = n;
	if (!empty && !llr_senc_params_grow(s, n, err)) {
		llr_senc_free(s);
		return NULL;
	}
	return s;
}

llr_senc *llr_senc_new(const llr_senc_config *c, const llr_csr *psi, llr_err *err)
{
	return senc_new(c, psi, 0, err);
}

llr_senc *llr_senc_new_empty(const llr_senc_config *c, const llr_csr *psi, llr_err *err)
{
	return senc_new(c, psi, 1, err);
}

float *llr_senc_params_grow(llr_senc *s, size_t n, llr_err *err)
{
	LLR_ASSERT(n <= s->n_params);
	return llr_weights_grow(&s->w, &s->have, &s->grad, n, s->n_params, "sentence encoder", err);
}

static void dir_free(dir_ws *d)
{
	free(d->in);
	free(d->pos);
	free(d->X);
	free(d->a);
	free(d->c);
	free(d->g);
	free(d->h);
	free(d->arg);
}

void llr_senc_free(llr_senc *s)
{
	if (!s)
		return;
	free(s->w);
	free(s->grad);
	free(s->perm);
	free(s->len);
	free(s->rows);
	free(s->cnt);
	dir_free(&s->d[0]);
	dir_free(&s->d[1]);
	free(s->dh);
	free(s->da);
	free(s->dc);
	free(s->dX);
	free(s->enc);
	free(s->denc);
	free(s->mask);
	free(s->wmask);
	free(s->U);
	free(s->Vv);
	free(s->UW);
	free(s->dUW);
	free(s->dU);
	free(s->p);
	free(s->wlabel);
	free(s->rmark);
	free(s->rrow);
	free(s);
}

const llr_senc_config *llr_senc_cfg(const llr_senc *s)
{
	return &s->c;
}
int llr_senc_dim(const llr_senc *s)
{
	return s->D;
}
size_t llr_senc_n_params(const llr_senc *s)
{
	return s->n_params;
}
float *llr_senc_params(llr_senc *s)
{
	return s->w;
}
float *llr_senc_grads(llr_senc *s)
{
	return s->grad;
}

int llr_senc_n_tensors(void)
{
	return T_N;
}

size_t llr_senc_tensor(const llr_senc *s, int i, const char **name, int64_t shape[2])
{
	*name = tnames[i];
	shape[0] = s->shape[i][0];
	shape[1] = s->shape[i][1];
	return s->off[i];
}

void llr_senc_init(llr_senc *s, llr_rng *rng)
{
	for (int t = 0; t < T_N; t++) {
		double scale = 0.1;
		if (t >= T_FWX && t <= T_BBH)
			scale = 1.0 / sqrt((double)s->c.H); /* PyTorch's GRU */
		else if (t == T_OW || t == T_NW || t == T_CW)
			scale = 1.0 / (double)s->D;
		else if (t == T_OB || t == T_CB)
			scale = 0.0;
		float *w = s->w + s->off[t];
		for (size_t i = 0; i < s->size[t]; i++)
			w[i] = (float)((2.0 * llr_rng_uniform(rng) - 1.0) * scale);
	}
	if (s->size[T_NW]) { /* NEXT: W = [0; 0; I - 11'/D] (llrnn.h) */
		float *w = s->w + s->off[T_NW];
		int D = s->D;
		memset(w, 0, s->size[T_NW] * sizeof *w);
		for (int i = 0; i < D; i++)
			for (int j = 0; j < D; j++)
				w[(size_t)(2 * D + i) * D + j] = (i == j ? 1.0f : 0.0f) - 1.0f / (float)D;
	}
}

#define GROW(p, cap, need, what)                                                      \
	do {                                                                          \
		if ((need) > (cap)) {                                                 \
			void *q_ = realloc((p), (need) * sizeof *(p));                \
			if (!q_)                                                      \
				return llr_err_set(err, LLR_ENOMEM, "out of memory"); \
			(p) = q_;                                                     \
		}                                                                     \
	} while (0)

static int grow(llr_senc *s, size_t n, size_t N, int T, llr_err *err)
{
	int H = s->c.H, E = s->c.E, G = 3 * H;
	size_t gH = (size_t)(H > 0 ? H : 1);
	if (n > s->cap_n) {
		GROW(s->perm, s->cap_n, n, "perm");
		GROW(s->len, s->cap_n, n, "len");
		for (int k = 0; k < 2; k++)
			GROW(s->d[k].arg, s->cap_n * gH, n * gH, "arg");
		s->cap_n = n;
	}
	if ((size_t)T + 1 > s->cap_T) {
		GROW(s->rows, s->cap_T, (size_t)T + 1, "rows");
		GROW(s->cnt, s->cap_T, (size_t)T + 1, "cnt");
		s->cap_T = (size_t)T + 1;
	}
	if (N > s->cap_N) {
		for (int k = 0; k < 2; k++) {
			dir_ws *d = &s->d[k];
			GROW(d->in, s->cap_N, N, "in");
			GROW(d->pos, s->cap_N, N, "pos");
			GROW(d->X, s->cap_N * E, N * E, "X");
			GROW(d->a, s->cap_N * G, N * G, "a");
			GROW(d->c, s->cap_N * G, N * G, "c");
			GROW(d->g, s->cap_N * G, N * G, "g");
			GROW(d->h, s->cap_N * gH, N * gH, "h");
		}
		GROW(s->dh, s->cap_N * gH, N * gH, "dh");
		GROW(s->da, s->cap_N * G, N * G, "da");
		GROW(s->dc, s->cap_N * G, N * G, "dc");
		GROW(s->dX, s->cap_N * E, N * E, "dX");
		s->cap_N = N;
	}
	return LLR_OK;
}

/* Word dropout's scaling of n embedding rows X, row r token pos[r] (pos
 * NULL: token r): forward on the embeddings, backward on their gradient. */
static void word_mask(const llr_senc *s, float *X, const size_t *pos, size_t n)
{
	int E = s->c.E;
	for (size_t r = 0; s->wm && r < n; r++) {
		float m = s->wm[pos ? pos[r] : r];
		if (m != 1.0f)
			for (int j = 0; j < E; j++)
				X[r * E + j] *= m;
	}
}

/* One direction of the recurrent encoder: packed ids, embeddings (word
 * dropout's mask applied), GRU, max-pooling into out columns [col, col + H). */
static void gru_dir(llr_senc *s, int k, float *out, int col)
{
	dir_ws *d = &s->d[k];
	int H = s->c.H, E = s->c.E, D = s->D;
	size_t p = 0;
	for (int t = 0; t < s->T; t++)
		for (int b = 0; b < s->rows[t]; b++) {
			size_t i = s->perm[b];
			int L = s->len[b];
			d->pos[p] = s->soff[i] + (size_t)(k ? L - 1 - t : t) - s->soff[0];
			d->in[p] = s->ids[s->soff[0] + d->pos[p]];
			p++;
		}
	const float *w = s->w;
	llr_embed_forward(s->psi, w + s->off[T_EMB], NULL, E, d->in, s->N, d->X);
	word_mask(s, d->X, d->pos, s->N);
	int o = k ? T_BWX - T_FWX : 0;
	llr_gru_io io = {.T = s->T, .Din = E, .H = H, .rows = s->rows, .wx = w + s->off[T_FWX + o], .wh = w + s->off[T_FWH + o], .bx = w + s->off[T_FBX + o], .bh = w + s->off[T_FBH + o], .a = d->a, .c = d->c, .g = d->g, .h = d->h};
	llr_gru_forward(&io, d->X);
	/* max-pooling over the steps of each sentence */
	for (size_t b = 0; b < s->n; b++) {
		float *v = out + s->perm[b] * (size_t)D + col;
		int32_t *arg = d->arg + b * (size_t)H;
		if (s->len[b] == 0) {
			memset(v, 0, (size_t)H * sizeof *v);
			for (int j = 0; j < H; j++)
				arg[j] = -1;
		}
	}
	size_t off = 0;
	for (int t = 0; t < s->T; off += (size_t)s->rows[t], t++)
		for (int b = 0; b < s->rows[t]; b++) {
			const float *h = d->h + (off + b) * H;
			float *v = out + s->perm[b] * (size_t)D + col;
			int32_t *arg = d->arg + (size_t)b * H;
			for (int j = 0; j < H; j++)
				if (t == 0 || h[j] > v[j]) {
					v[j] = h[j];
					arg[j] = (int32_t)(off + b);
				}
		}
}

/* llr_senc_encode with word dropout's mask wm (NULL: none). */
static int encode(llr_senc *s, const int32_t *ids, const size_t *off, size_t n, const float *wm, float *out, llr_err *err)
{
	int D = s->D, E = s->c.E;
	size_t N = off[n] - off[0];
	int T = 0;
	for (size_t i = 0; i < n; i++)
		if (off[i + 1] - off[i] > (size_t)T)
			T = (int)(off[i + 1] - off[i]);
	int rc = grow(s, n ? n : 1, N ? N : 1, T ? T : 1, err);
	if (rc < 0)
		return rc;
	s->n = n;
	s->N = N;
	s->T = T;
	s->ids = ids;
	s->soff = off;
	s->wm = wm;
	if (s->c.encoder == LLR_SENC_CBOW) {
		llr_embed_forward(s->psi, s->w + s->off[T_EMB], NULL, E, ids + off[0], N, s->d[0].X);
		word_mask(s, s->d[0].X, NULL, N);
		for (size_t i = 0; i < n; i++) {
			float *v = out + i * (size_t)D;
			memset(v, 0, (size_t)D * sizeof *v);
			for (size_t p = off[i]; p < off[i + 1]; p++) {
				const float *x = s->d[0].X + (p - off[0]) * E;
				for (int j = 0; j < E; j++)
					v[j] += x[j];
			}
		}
		return LLR_OK;
	}
	/* Longest first, equal lengths in sentence order: a counting sort. */
	memset(s->cnt, 0, ((size_t)T + 1) * sizeof *s->cnt);
	for (size_t i = 0; i < n; i++)
		s->cnt[T - (off[i + 1] - off[i])]++;
	for (size_t k = 0, acc = 0; k <= (size_t)T; k++) {
		size_t c = s->cnt[k];
		s->cnt[k] = acc;
		acc += c;
	}
	for (size_t i = 0; i < n; i++)
		s->perm[s->cnt[T - (off[i + 1] - off[i])]++] = i;
	for (size_t b = 0; b < n; b++)
		s->len[b] = (int)(off[s->perm[b] + 1] - off[s->perm[b]]);
	for (int t = 0; t < T; t++) {
		int r = 0;
		while ((size_t)r < n && s->len[r] > t)
			r++;
		s->rows[t] = r;
	}
	gru_dir(s, 0, out, 0);
	if (s->c.encoder == LLR_SENC_BIGRU)
		gru_dir(s, 1, out, s->c.H);
	return LLR_OK;
}

int llr_senc_encode(llr_senc *s, const int32_t *ids, const size_t *off, size_t n, float *out, llr_err *err)
{
	return encode(s, ids, off, n, NULL, out, err);
}

static void gru_dir_backward(llr_senc *s, int k, const float *dout, int col)
{
	dir_ws *d = &s->d[k];
	int H = s->c.H, E = s->c.E, D = s->D;
	memset(s->dh, 0, s->N * (size_t)H * sizeof *s->dh);
	for (size_t b = 0; b < s->n; b++) {
		const float *dv = dout + s->perm[b] * (size_t)D + col;
		const int32_t *arg = d->arg + b * (size_t)H;
		for (int j = 0; j < H; j++)
			if (arg[j] >= 0)
				s->dh[(size_t)arg[j] * H + j] += dv[j];
	}
	float *g = s->grad;
	int o = k ? T_BWX - T_FWX : 0;
	const float *w = s->w;
	llr_gru_io io = {.T = s->T, .Din = E, .H = H, .rows = s->rows, .wx = w + s->off[T_FWX + o], .wh = w + s->off[T_FWH + o], .bx = w + s->off[T_FBX + o], .bh = w + s->off[T_FBH + o], .a = d->a, .c = d->c, .g = d->g, .h = d->h};
	llr_gru_backward(&io, d->X, s->dh, s->da, s->dc, s->dX, g + s->off[T_FWX + o], g + s->off[T_FWH + o], g + s->off[T_FBX + o], g + s->off[T_FBH + o]);
	word_mask(s, s->dX, d->pos, s->N);
	llr_embed_backward(s->psi, E, d->in, s->N, s->dX, g + s->off[T_EMB], NULL);
}

void llr_senc_backward(llr_senc *s, const float *dout)
{
	int D = s->D, E = s->c.E;
	if (s->N == 0)
		return;
	if (s->c.encoder == LLR_SENC_CBOW) {
		size_t o = s->soff[0];
		for (size_t i = 0; i < s->n; i++)
			for (size_t p = s->soff[i]; p < s->soff[i + 1]; p++)
				memcpy(s->dX + (p - o) * E, dout + i * (size_t)D, (size_t)E * sizeof *s->dX);
		word_mask(s, s->dX, NULL, s->N);
		llr_embed_backward(s->psi, E, s->ids + o, s->N, s->dX, s->grad + s->off[T_EMB], NULL);
		return;
	}
	gru_dir_backward(s, 0, dout, 0);
	if (s->c.encoder == LLR_SENC_BIGRU)
		gru_dir_backward(s, 1, dout, s->c.H);
}

/* --------------------------------------------------------------- heads */

int llr_senc_task_sents(int task)
{
	return task == LLR_TASK_NEXT ? 3 + 5 : 2;
}

int llr_senc_task_classes(const llr_senc *s, int task)
{
	return task == LLR_TASK_ORDER ? 2 : task == LLR_TASK_NEXT ? 5
	                                                          : s->c.n_conj;
}

/* Softmax cross-entropy of the K scores of each of n rows of sc: the
 * loss summed, the argmax count against label, pred; sc becomes the
 * gradient of the mean loss when grad. */
static double softmax_xent(float *sc, size_t n, int K, const int32_t *label, int grad, size_t *correct, int32_t *pred)
{
	double loss = 0;
	for (size_t i = 0; i < n; i++) {
		float *z = sc + i * (size_t)K;
		int best = 0;
		for (int k = 1; k < K; k++)
			if (z[k] > z[best])
				best = k;
		double m = z[best], sum = 0;
		for (int k = 0; k < K; k++)
			sum += exp((double)z[k] - m);
		double lse = m + log(sum);
		int y = label ? label[i] : -1;
		if (y >= 0)
			loss += lse - z[y];
		if (correct && best == y)
			(*correct)++;
		if (pred)
			pred[i] = best;
		if (grad) {
			for (int k = 0; k < K; k++)
				z[k] = (float)((exp((double)z[k] - lse) - (k == y)) / (double)n);
		}
	}
	return loss;
}

/* NEXT's head backward from d(ctx W) in dUW (n x D): W's gradient, and
 * the contexts' into denc. */
static void next_context_backward(llr_senc *s, size_t n)
{
	int D = s->D;
	const float *W = s->w + s->off[T_NW];
	llr_gemm(1, 0, 3 * D, D, (int)n, 1.0f, s->U, 3 * D, s->dUW, D, 1.0f, s->grad + s->off[T_NW], D);
	llr_gemm(0, 1, (int)n, 3 * D, D, 1.0f, s->dUW, D, W, D, 0.0f, s->dU, 3 * D);
	for (size_t i = 0; i < n; i++) {
		float *de = s->denc + i * 8 * (size_t)D;
		for (int j = 0; j < 3 * D; j++)
			de[j] += s->dU[i * 3 * D + j];
	}
}

/* From the heads' gradient in denc (need_enc floats) through dropout's
 * masks (drop) and the encoder. */
static void heads_backward(llr_senc *s, size_t need_enc, int drop)
{
	if (drop)
		for (size_t k = 0; k < need_enc; k++)
			s->denc[k] *= s->mask[k];
	llr_senc_backward(s, s->denc);
}

/* Whether sentences i and j of the batch are the same words. */
static int same_sentence(const llr_senc_batch *b, size_t i, size_t j)
{
	size_t li = b->off[i + 1] - b->off[i];
	return li == b->off[j + 1] - b->off[j] && !memcmp(b->ids + b->off[i], b->ids + b->off[j], li * sizeof *b->ids);
}

/* The best of the five scores of row i, against the label for correct. */
static void own_best(const float *row, const llr_senc_batch *b, size_t i, size_t *correct, int32_t *pred)
{
	int best = 0;
	for (int k = 1; k < 5; k++)
		if (row[k] > row[best])
			best = k;
	if (correct && best == b->label[i])
		(*correct)++;
	if (pred)
		pred[i] = best;
}

/* NEXT in training with in-batch negatives, from the contexts' UW = ctx W
 * (n x D): every context scored against all 5n candidates of the batch
 * (gathered into Vv), a softmax over them, the label its own true one; a
 * candidate of another example that is the same words as the true one
 * is left out (it would be a right answer marked wrong).  *correct and
 * pred count the best of each example's own five, as without; *loss is
 * the wide softmax's.  Then the gradient, as llr_senc_run's. */
static int next_wide(llr_senc *s, const llr_senc_batch *b, size_t need_enc, int drop, double *loss, size_t *correct, int32_t *pred)
{
	int D = s->D, S = 3 + 5;
	size_t n = b->n, C = 5 * n;
	float *sc = s->p;
	for (size_t i = 0; i < n; i++)
		memcpy(s->Vv + i * 5 * D, s->enc + (i * S + 3) * (size_t)D, 5 * (size_t)D * sizeof(float));
	llr_gemm(0, 1, (int)n, (int)C, D, 1.0f, s->UW, D, s->Vv, D, 0.0f, sc, (int)C);
	for (size_t i = 0; i < n; i++) {
		size_t gold = i * S + 3 + (size_t)b->label[i];
		s->wlabel[i] = (int32_t)(i * 5 + (size_t)b->label[i]);
		own_best(sc + i * C + i * 5, b, i, correct, pred);
		for (size_t j = 0; j < C; j++)
			if (j / 5 != i && same_sentence(b, gold, (j / 5) * S + 3 + j % 5))
				sc[i * C + j] = -INFINITY;
	}
	double l = softmax_xent(sc, n, (int)C, s->wlabel, 1, NULL, NULL);
	if (loss)
		*loss = l;
	memset(s->denc, 0, need_enc * sizeof *s->denc);
	/* d ctx W = G Vv; d cand = G' UW, into the candidates' rows */
	llr_gemm(0, 0, (int)n, D, (int)C, 1.0f, sc, (int)C, s->Vv, D, 0.0f, s->dUW, D);
	llr_gemm(1, 0, (int)C, D, (int)n, 1.0f, sc, (int)C, s->UW, D, 0.0f, s->Vv, D);
	for (size_t i = 0; i < n; i++)
		memcpy(s->denc + (i * S + 3) * (size_t)D, s->Vv + i * 5 * D, 5 * (size_t)D * sizeof(float));
	next_context_backward(s, n);
	heads_backward(s, need_enc, drop);
	return LLR_OK;
}

int llr_senc_run(llr_senc *s, const llr_senc_batch *b, int grad, double *loss, size_t *correct, int32_t *pred, llr_err *err)
{
	int task = b->task;
	if (!(task == LLR_TASK_ORDER || task == LLR_TASK_NEXT || task == LLR_TASK_CONJ) || !(s->c.tasks & task))
		return llr_err_set(err, LLR_EINVAL, "the model has no head for task %d", task);
	int D = s->D, S = llr_senc_task_sents(task), K = llr_senc_task_classes(s, task);
	size_t n = b->n, ns = n * (size_t)S;
	for (size_t i = 0; b->label && i < n; i++)
		if (b->label[i] < 0 || b->label[i] >= K)
			return llr_err_set(err, LLR_EINVAL, "label %d out of range [0, %d)", b->label[i], K);
	/* NEXT in training with in-batch negatives: each context against all
	 * 5n candidates of the batch, its own true one the label */
	int wide = task == LLR_TASK_NEXT && grad && b->label && b->next_batch_negatives;
	size_t need_enc = ns * (size_t)D, need_head = n * (size_t)K * (size_t)D + n * 3 * (size_t)D;
	if (wide && need_head < n * 5 * n)
		need_head = n * 5 * n;
	GROW(s->enc, s->cap_enc, need_enc, "enc");
	GROW(s->denc, s->cap_enc, need_enc, "denc");
	GROW(s->mask, s->cap_enc, need_enc, "mask");
	if (need_enc > s->cap_enc)
		s->cap_enc = need_enc;
	GROW(s->U, s->cap_head, need_head, "U");
	GROW(s->Vv, s->cap_head, need_head, "V");
	GROW(s->UW, s->cap_head, need_head, "UW");
	GROW(s->dUW, s->cap_head, need_head, "dUW");
	GROW(s->dU, s->cap_head, need_head, "dU");
	GROW(s->p, s->cap_head, need_head, "p");
	if (need_head > s->cap_head)
		s->cap_head = need_head;
	/* word dropout's draws (one a token), then dropout's (one a component) */
	size_t ntok = b->off[ns] - b->off[0];
	const float *wm = NULL;
	if (grad && b->rng && s->c.word_dropout > 0.0f) {
		GROW(s->wmask, s->cap_wmask, ntok ? ntok : 1, "wmask");
		if (ntok > s->cap_wmask)
			s->cap_wmask = ntok;
		float q = s->c.word_dropout, keep = 1.0f / (1.0f - q);
		for (size_t k = 0; k < ntok; k++)
			s->wmask[k] = llr_rng_uniform(b->rng) < q ? 0.0f : keep;
		wm = s->wmask;
	}
	int rc = encode(s, b->ids, b->off, ns, wm, s->enc, err);
	if (rc < 0)
		return rc;
	int drop = grad && b->rng && s->c.dropout > 0.0f;
	if (drop) {
		float q = s->c.dropout, keep = 1.0f / (1.0f - q);
		for (size_t k = 0; k < need_enc; k++) {
			s->mask[k] = llr_rng_uniform(b->rng) < q ? 0.0f : keep;
			s->enc[k] *= s->mask[k];
		}
	}
	float *sc = s->p, *W, *bias = NULL;
	if (task == LLR_TASK_NEXT) {
		/* context: the three encodings side by side (n x 3D); score of
		 * candidate k: ctx^T W cand_k */
		W = s->w + s->off[T_NW];
		for (size_t i = 0; i < n; i++)
			memcpy(s->U + i * 3 * D, s->enc + i * S * (size_t)D, 3 * (size_t)D * sizeof(float));
		llr_gemm(0, 0, (int)n, D, 3 * D, 1.0f, s->U, 3 * D, W, D, 0.0f, s->UW, D);
		if (wide) {
			GROW(s->wlabel, s->cap_wlabel, n, "wlabel");
			if (n > s->cap_wlabel)
				s->cap_wlabel = n;
			return next_wide(s, b, need_enc, drop, loss, correct, pred);
		}
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < 5; k++) {
				const float *cand = s->enc + (i * S + 3 + k) * (size_t)D;
				double dot = 0;
				for (int j = 0; j < D; j++)
					dot += (double)s->UW[i * D + j] * cand[j];
				sc[i * 5 + k] = (float)dot;
			}
	} else {
		/* pair: score of class k: u^T W_k v + b_k, W = [W_1 ... W_K] (D x K D) */
		int t = task == LLR_TASK_ORDER ? T_OW : T_CW;
		W = s->w + s->off[t];
		bias = s->w + s->off[t + 1];
		for (size_t i = 0; i < n; i++) {
			memcpy(s->U + i * D, s->enc + 2 * i * (size_t)D, (size_t)D * sizeof(float));
			memcpy(s->Vv + i * D, s->enc + (2 * i + 1) * (size_t)D, (size_t)D * sizeof(float));
		}
		llr_gemm(0, 0, (int)n, K * D, D, 1.0f, s->U, D, W, K * D, 0.0f, s->UW, K * D);
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < K; k++) {
				const float *uw = s->UW + (i * K + k) * (size_t)D, *v = s->Vv + i * D;
				double dot = bias[k];
				for (int j = 0; j < D; j++)
					dot += (double)uw[j] * v[j];
				sc[i * K + k] = (float)dot;
			}
	}
	double l = softmax_xent(sc, n, K, b->label, grad, correct, pred);
	if (loss)
		*loss = l;
	if (!grad)
		return LLR_OK;
	float *g = s->grad;
	memset(s->denc, 0, need_enc * sizeof *s->denc);
	if (task == LLR_TASK_NEXT) {
		float *dctx = s->dUW;
		for (size_t i = 0; i < n; i++) {
			float *dc = dctx + i * D;
			memset(dc, 0, (size_t)D * sizeof *dc);
			for (int k = 0; k < 5; k++) {
				float d = sc[i * 5 + k];
				const float *cand = s->enc + (i * S + 3 + k) * (size_t)D;
				float *dcand = s->denc + (i * S + 3 + k) * (size_t)D;
				const float *uw = s->UW + i * D;
				for (int j = 0; j < D; j++) {
					dc[j] += d * cand[j];
					dcand[j] += d * uw[j];
				}
			}
		}
		next_context_backward(s, n);
	} else {
		int t = task == LLR_TASK_ORDER ? T_OW : T_CW;
		float *dW = g + s->off[t], *db = g + s->off[t + 1];
		for (size_t i = 0; i < n; i++) {
			float *dv = s->denc + (2 * i + 1) * (size_t)D;
			const float *v = s->Vv + i * D;
			for (int k = 0; k < K; k++) {
				float d = sc[i * K + k];
				const float *uw = s->UW + (i * K + k) * (size_t)D;
				float *duw = s->dUW + (i * K + k) * (size_t)D;
				db[k] += d;
				for (int j = 0; j < D; j++) {
					duw[j] = d * v[j];
					dv[j] += d * uw[j];
				}
			}
		}
		llr_gemm(1, 0, D, K * D, (int)n, 1.0f, s->U, D, s->dUW, K * D, 1.0f, dW, K * D);
		llr_gemm(0, 1, (int)n, D, K * D, 1.0f, s->dUW, K * D, W, K * D, 0.0f, s->dU, D);
		for (size_t i = 0; i < n; i++) {
			float *du = s->denc + 2 * i * (size_t)D;
			for (int j = 0; j < D; j++)
				du[j] += s->dU[i * D + j];
		}
	}
	heads_backward(s, need_enc, drop);
	return LLR_OK;
}

int llr_senc_rows(llr_senc *s, const llr_rows **blocks, llr_err *err)
{
	const llr_csr *psi = s->psi;
	if (!s->rmark) {
		s->rmark = calloc((size_t)psi->cols, 1);
		s->rrow = malloc((size_t)psi->cols * sizeof *s->rrow);
		if (!s->rmark || !s->rrow) {
			free(s->rmark);
			free(s->rrow);
			s->rmark = NULL;
			s->rrow = NULL;
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		}
	}
	size_t a = s->n ? s->soff[0] : 0, z = s->n ? s->soff[s->n] : 0;
	for (size_t p = a; p < z; p++) {
		int32_t id = s->ids[p];
		if (id < 0 || id >= psi->rows)
			continue;
		for (int32_t k = psi->indptr[id]; k < psi->indptr[id + 1]; k++)
			s->rmark[psi->indices[k]] = 1;
	}
	int32_t k = 0;
	for (int32_t c = 0; c < psi->cols; c++)
		if (s->rmark[c]) {
			s->rmark[c] = 0;
			s->rrow[k++] = c;
		}
	s->rblk = (llr_rows){.off = s->off[T_EMB], .rows = (int32_t)psi->cols, .cols = s->c.E, .row = s->rrow, .nrow = k};
	*blocks = &s->rblk;
	return 1;
}
