/*
 * maxent.c - the log-linear (maximum-entropy) language model's scorer
 * (tutorial section 4; the loglm family, lib/family/loglm):
 *   p(w | context) = softmax_w(b_w + sum_{f active} theta[(o_f + w) mod H])
 * over sparse features of the context, each hashed to an offset o_f of one
 * weight ring theta of H floats (H a power of two, o_f anywhere in it, so
 * that two features rarely share a whole slice, only weights here and
 * there): n-gram identities of the previous 1 .. order - 1 words
 * (<s> before the sentence), the word at each distance 2 .. skip alone,
 * and with bag each earlier word of the sentence (a word twice counts
 * twice).  Logits are a few contiguous vector adds of length V, then the
 * softmax; the gradient of theta is sparse: the chunks of LLR_ME_CHUNK
 * floats the batch's slices touched, listed as one llr_rows block.
 * With the log-linear output over word features (config phi, V x K, and
 * a background logb; DESIGN section 1) each feature also carries a
 * vector a_f of K weights, a slice of a second ring alpha of H floats at
 * an offset hashed apart from o_f, and
 *   log p(w | context) = z_w + log b(w) + a . phi(w) - log Z,
 *   a = sum_{f active} a_f,  dLoss/da = Phi^T (p - onehot(target)),
 * z_w the logits above: one sparse product over Phi's nonzeros a
 * position, and the gradient of a_f, the same dLoss/da for every active
 * f, into alpha's chunks (the rows' block runs on over alpha).
 * Parameters, one flat array: bias V, theta H, then alpha H with the
 * log-linear output; gradients alike.  Not here: the model files and
 * training (lib/family/loglm).  Not safe from two threads at once.
 */
#include "internal.h"
#include "nn.h"

#include <math.h>
#include <stdlib.h>

struct llr_maxent {
	llr_maxent_config c;
	int32_t K;            /* the log-linear output's word features, or 0 */
	size_t n;             /* V + H, + H with the log-linear output */
	size_t have;          /* of w allocated so far (llr_maxent_params_grow) */
	float *w, *g;         /* bias V, theta H, alpha H; gradients alike */
	float *z;             /* V: one position's logits */
	float *e;             /* V: exp(z - max z), then the gradient of the logits */
	float *a;             /* K: a position's a, then dLoss/da */
	uint32_t *off, *aoff; /* their offsets into theta and alpha */
	size_t offcap;
	unsigned char *mark; /* (n - V) / CHUNK: a chunk touched since the last rows */
	int32_t *rows;
	llr_rows block;
};

const llr_maxent_config *llr_maxent_cfg(const llr_maxent *f)
{
	return &f->c;
}

float *llr_maxent_params(llr_maxent *f, size_t *n)
{
	if (n)
		*n = f->n;
	return f->w;
}

float *llr_maxent_grads(llr_maxent *f, size_t *n)
{
	if (n)
		*n = f->n;
	return f->g;
}

void llr_maxent_free(llr_maxent *f)
{
	if (!f)
		return;
	free(f->w);
	free(f->g);
	free(f->z);
	free(f->e);
	free(f->a);
	free(f->off);
	free(f->aoff);
	free(f->mark);
	free(f->rows);
	free(f);
}

/* The log-linear output's phi (V x K) and background (finite, or -inf
 * where b is 0). */
static int check_output(const llr_maxent_config *c, llr_err *err)
{
	if (c->phi->rows != c->vocab || c->phi->cols < 1 || !c->logb)
		return llr_err_set(err, LLR_EINVAL, "log-linear LM: phi is %dx%d for %d words%s", c->phi->rows, c->phi->cols, c->vocab,
		                   c->logb ? "" : ", and no background");
	for (int32_t v = 0; v < c->vocab; v++)
		if (isnan(c->logb[v]) || c->logb[v] == INFINITY)
			return llr_err_set(err, LLR_ENAN, "log-linear LM: background of word %d is %g", v, (double)c->logb[v]);
	return LLR_OK;
}

/* llr_maxent_new, its weights allocated or (empty) left for
 * llr_maxent_params_grow. */
static llr_maxent *maxent_new(const llr_maxent_config *c, int empty, llr_err *err)
{
	uint64_t H = c->hash_size;
	if (c->vocab < 1 || c->order < 1 || c->order > LLR_ME_MAX_ORDER || c->skip < 0 || c->skip > LLR_ME_MAX_ORDER ||
	    (c->order < 2 && c->skip < 2 && !c->bag))
		return llr_err_set(err, LLR_EINVAL, "log-linear LM: order %d, skip %d, bag %d: no feature of the context", c->order,
		                   c->skip, c->bag),
		       NULL;
	if (H < LLR_ME_CHUNK || H > (1ull << 31) || (H & (H - 1)))
		return llr_err_set(err, LLR_EINVAL, "log-linear LM: hash size %llu: must be a power of two in [%d, 2^31]",
		                   (unsigned long long)H, LLR_ME_CHUNK),
		       NULL;
	if (c->phi && check_output(c, err) < 0)
		return NULL;
	llr_maxent *f = llr_calloc(1, sizeof *f);
	if (!f)
		return llr_err_set(err, LLR_ENOMEM, "out of memory"), NULL;
	f->c = *c;
	f->K = c->phi ? c->phi->cols : 0;
	size_t rings = c->phi ? 2 : 1;
	f->n = (size_t)c->vocab + rings * (size_t)H;
	size_t R = rings * (size_t)(H / LLR_ME_CHUNK);
	if (!empty && !llr_maxent_params_grow(f, f->n, err)) {
		llr_maxent_free(f);
		return NULL;
	}
	f->z = llr_malloc((size_t)c->vocab * sizeof *f->z);
	f->e = llr_malloc((size_t)c->vocab * sizeof *f->e);
	f->a = f->K ? llr_malloc((size_t)f->K * sizeof *f->a) : NULL;
	f->mark = llr_calloc(R, 1);
	f->rows = llr_malloc(R * sizeof *f->rows);
	if (!f->z || !f->e || (f->K && !f->a) || !f->mark || !f->rows) {
		llr_maxent_free(f);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a log-linear LM of %zu parameters",
		                   (size_t)c->vocab + rings * (size_t)H),
		       NULL;
	}
	f->block = (llr_rows){.off = (size_t)c->vocab, .rows = (int32_t)R, .cols = LLR_ME_CHUNK, .row = f->rows};
	return f;
}

llr_maxent *llr_maxent_new(const llr_maxent_config *c, llr_err *err)
{
	return maxent_new(c, 0, err);
}

llr_maxent *llr_maxent_new_empty(const llr_maxent_config *c, llr_err *err)
{
	return maxent_new(c, 1, err);
}

float *llr_maxent_params_grow(llr_maxent *f, size_t n, llr_err *err)
{
	LLR_ASSERT(n <= f->n);
	return llr_weights_grow(&f->w, &f->have, &f->g, n, f->n, "log-linear LM", err);
}

/* ------------------------------------------------------------ features */

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* An input id as the model reads it: outside [0, V) (a spelling model's
 * signatures) <unk>, else <s>. */
static int32_t in_id(const llr_maxent *f, int32_t id)
{
	if (id >= 0 && id < f->c.vocab)
		return id;
	return id >= 0 && f->c.unk >= 0 ? f->c.unk : LLR_BOS_ID;
}

static int32_t at(const llr_maxent *f, const int32_t *seq, int64_t p)
{
	return p < 0 ? LLR_BOS_ID : in_id(f, seq[p]);
}

static uint32_t offset_of(const llr_maxent *f, uint64_t h)
{
	return (uint32_t)(mix(h) & (f->c.hash_size - 1));
}

size_t llr_maxent_nfeat(const llr_maxent *f, int64_t pos)
{
	return (size_t)(f->c.order - 1) + (size_t)LLR_MAX(f->c.skip - 1, 0) + (f->c.bag ? (size_t)pos : 0);
}

/* Feature k of a position, of key h: its offsets into theta and alpha
 * (aoff NULL: none). */
static void put(const llr_maxent *f, uint64_t h, size_t k, uint32_t *off, uint32_t *aoff)
{
	off[k] = offset_of(f, h);
	if (aoff)
		aoff[k] = offset_of(f, h ^ 0x616c706861000000ULL);
}

static size_t features(const llr_maxent *f, const int32_t *seq, int64_t pos, uint32_t *off, uint32_t *aoff)
{
	size_t k = 0;
	uint64_t h = 0x6e6772616d000000ULL; /* n-grams: each longer one extends the last */
	for (int n = 1; n < f->c.order; n++) {
		h = mix(h ^ (uint32_t)at(f, seq, pos - n)) + (uint64_t)n;
		put(f, h, k++, off, aoff);
	}
	for (int d = 2; d <= f->c.skip; d++)
		put(f, 0x736b697000000000ULL + ((uint64_t)d << 32) + (uint32_t)at(f, seq, pos - d), k++, off, aoff);
	if (f->c.bag)
		for (int64_t p = 0; p < pos; p++)
			put(f, 0x6261670000000000ULL + (uint32_t)at(f, seq, p), k++, off, aoff);
	return k;
}

size_t llr_maxent_features(const llr_maxent *f, const int32_t *seq, int64_t pos, uint32_t *off)
{
	return features(f, seq, pos, off, NULL);
}

/* ------------------------------------------------------------- scoring */

/* y[0..n) += x[0..n) (they do not overlap), and y[0..n) *= a: the hot
 * loops, vectorised (nn.h). */
LLR_CLONES LLR_VECTORIZE static void add_to(float *restrict y, const float *restrict x, size_t n)
{
	for (size_t j = 0; j < n; j++)
		y[j] += x[j];
}

LLR_CLONES LLR_VECTORIZE static void scale(float *restrict y, float a, size_t n)
{
	for (size_t j = 0; j < n; j++)
		y[j] *= a;
}

/* y[0..n) += ring[(o + j) mod H]: the slice at o of a ring of H floats. */
static void gather(float *y, const float *ring, size_t H, size_t o, size_t n)
{
	for (size_t j0 = 0; j0 < n; o = 0) {
		size_t len = LLR_MIN(n - j0, H - o);
		add_to(y + j0, ring + o, len);
		j0 += len;
	}
}

/* ring[(o + j) mod H] += x[0..n), and the slice's chunks marked in mark
 * (the ring's H / LLR_ME_CHUNK). */
static void scatter(float *ring, size_t H, size_t o, const float *x, size_t n, unsigned char *mark)
{
	for (size_t j0 = 0, q = o; j0 < n; q = 0) {
		size_t len = LLR_MIN(n - j0, H - q);
		add_to(ring + q, x + j0, len);
		j0 += len;
	}
	size_t R = H / LLR_ME_CHUNK;
	size_t nch = LLR_MIN((o % LLR_ME_CHUNK + n + LLR_ME_CHUNK - 1) / LLR_ME_CHUNK, R);
	for (size_t c = 0, r = o / LLR_ME_CHUNK; c < nch; c++)
		mark[(r + c) % R] = 1;
}

/* The log-linear output's share of the logits of a position of nf
 * features: a (K) = the sum of their slices of alpha, then
 * z_w += log b(w) + a . phi(w) over phi's rows (V x K, CSR). */
static void ll_logits(llr_maxent *f, size_t nf)
{
	const size_t V = (size_t)f->c.vocab, H = (size_t)f->c.hash_size, K = (size_t)f->K;
	const float *alpha = f->w + V + H, *logb = f->c.logb;
	const llr_csr *phi = f->c.phi;
	memset(f->a, 0, K * sizeof *f->a);
	for (size_t i = 0; i < nf; i++)
		gather(f->a, alpha, H, f->aoff[i], K);
	for (size_t w = 0; w < V; w++) {
		float s = logb[w];
		for (int32_t j = phi->indptr[w]; j < phi->indptr[w + 1]; j++)
			s += phi->data[j] * f->a[phi->indices[j]];
		f->z[w] += s;
	}
}

/* Its gradient from dLoss/dz (f->e, V) for a position of nf features:
 * dLoss/da = Phi^T dz into f->a, added to each feature's slice of alpha. */
static void ll_grad(llr_maxent *f, size_t nf)
{
	const size_t V = (size_t)f->c.vocab, H = (size_t)f->c.hash_size, K = (size_t)f->K;
	const llr_csr *phi = f->c.phi;
	float *ga = f->a;
	memset(ga, 0, K * sizeof *ga);
	for (size_t w = 0; w < V; w++) {
		float d = f->e[w];
		for (int32_t j = phi->indptr[w]; j < phi->indptr[w + 1]; j++)
			ga[phi->indices[j]] += phi->data[j] * d;
	}
	for (size_t i = 0; i < nf; i++)
		scatter(f->g + V + H, H, f->aoff[i], ga, K, f->mark + H / LLR_ME_CHUNK);
}

/* The logits of position p into f->z, its features in f->off (and
 * f->aoff); their count. */
static int logits(llr_maxent *f, const llr_maxent_pos *p, size_t *nf)
{
	size_t need = llr_maxent_nfeat(f, p->pos);
	if (need > f->offcap) {
		size_t cap = need + need / 2 + 16;
		uint32_t *o = llr_reallocarray(f->off, cap, sizeof *o);
		if (!o)
			return LLR_ENOMEM;
		f->off = o;
		if (f->K) {
			if (!(o = llr_reallocarray(f->aoff, cap, sizeof *o)))
				return LLR_ENOMEM;
			f->aoff = o;
		}
		f->offcap = cap;
	}
	*nf = features(f, p->seq, p->pos, f->off, f->K ? f->aoff : NULL);
	const size_t V = (size_t)f->c.vocab, H = (size_t)f->c.hash_size;
	const float *theta = f->w + V;
	float *z = f->z;
	memcpy(z, f->w, V * sizeof *z);
	for (size_t i = 0; i < *nf; i++)
		gather(z, theta, H, f->off[i], V);
	if (f->K)
		ll_logits(f, *nf);
	return LLR_OK;
}

/* max x[0..n), n > 0, and sum x[0..n) in double, in 8 lanes (so they
 * vectorise without reassociating a float sum); e[0..n) = x - m. */
LLR_CLONES LLR_VECTORIZE static float max_of(const float *x, size_t n)
{
	float a[8];
	for (int k = 0; k < 8; k++)
		a[k] = x[0];
	size_t j = 0;
	for (; j + 8 <= n; j += 8)
		for (int k = 0; k < 8; k++)
			a[k] = x[j + k] > a[k] ? x[j + k] : a[k];
	for (; j < n; j++)
		a[0] = x[j] > a[0] ? x[j] : a[0];
	float m = a[0];
	for (int k = 1; k < 8; k++)
		m = a[k] > m ? a[k] : m;
	return m;
}

LLR_CLONES LLR_VECTORIZE static double sum_of(const float *x, size_t n)
{
	double a[8] = {0};
	size_t j = 0;
	for (; j + 8 <= n; j += 8)
		for (int k = 0; k < 8; k++)
			a[k] += x[j + k];
	double s = 0;
	for (; j < n; j++)
		s += x[j];
	for (int k = 0; k < 8; k++)
		s += a[k];
	return s;
}

LLR_CLONES LLR_VECTORIZE static void minus(float *restrict e, const float *restrict x, float m, size_t n)
{
	for (size_t j = 0; j < n; j++)
		e[j] = x[j] - m;
}

/* log sum exp z[0..V), exp(z - max z) left in e and their sum in *sum. */
static float lse_of(const float *z, size_t V, float *e, double *sum)
{
	float mx = max_of(z, V);
	minus(e, z, mx, V);
	llr_vexp(e, e, V);
	double s = sum_of(e, V);
	if (sum)
		*sum = s;
	return (float)(mx + log(s));
}

/* The sum of exp(z - lse) - 1, as the probabilities score gives. */
static double norm_of(const float *z, size_t V, float lse)
{
	double tot = 0;
	for (size_t w = 0; w < V; w++)
		tot += exp((double)(z[w] - lse));
	return tot - 1;
}

int llr_maxent_score(llr_maxent *f, size_t N, const llr_maxent_pos *p, float *logp, double *norm_err, llr_err *err)
{
	double worst = 0;
	const size_t V = (size_t)f->c.vocab;
	for (size_t i = 0; i < N; i++) {
		size_t nf;
		if (logits(f, &p[i], &nf) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		float lse = lse_of(f->z, V, f->e, NULL);
		if (norm_err) {
			double e = norm_of(f->z, V, lse);
			if (!(fabs(e) <= fabs(worst)))
				worst = e;
		}
		logp[i] = p[i].target >= 0 ? f->z[p[i].target] - lse : 0;
		if (!isfinite(logp[i]))
			return llr_err_set(err, LLR_ENAN, "log-linear LM: a log-probability is not finite");
	}
	if (norm_err)
		*norm_err = worst;
	return LLR_OK;
}

int llr_maxent_dist(llr_maxent *f, size_t N, const llr_maxent_pos *p, float *logp_all, llr_err *err)
{
	const size_t V = (size_t)f->c.vocab;
	for (size_t i = 0; i < N; i++) {
		size_t nf;
		if (logits(f, &p[i], &nf) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		float lse = lse_of(f->z, V, f->e, NULL);
		float *out = logp_all + i * V;
		for (size_t w = 0; w < V; w++)
			out[w] = f->z[w] - lse;
	}
	return LLR_OK;
}

/* ------------------------------------------------------------ training */

int llr_maxent_train_step(llr_maxent *f, size_t N, const llr_maxent_pos *p, double *nll, int64_t *ntok, llr_err *err)
{
	const size_t V = (size_t)f->c.vocab, H = (size_t)f->c.hash_size;
	float *gb = f->g, *gt = f->g + V;
	for (size_t i = 0; i < N; i++) {
		if (p[i].target < 0)
			continue;
		size_t nf;
		if (logits(f, &p[i], &nf) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		double sum;
		float lp = f->z[p[i].target] - lse_of(f->z, V, f->e, &sum);
		if (!isfinite(lp))
			return llr_err_set(err, LLR_ENAN, "log-linear LM: the loss is not finite");
		*nll -= lp;
		(*ntok)++;
		/* dz = p - onehot(target), into e */
		const float inv = (float)(1 / sum);
		scale(f->e, inv, V);
		f->e[p[i].target] -= 1;
		add_to(gb, f->e, V);
		for (size_t k = 0; k < nf; k++)
			scatter(gt, H, f->off[k], f->e, V, f->mark);
		if (f->K)
			ll_grad(f, nf);
	}
	return LLR_OK;
}

const llr_rows *llr_maxent_rows(llr_maxent *f)
{
	int32_t k = 0;
	for (int32_t r = 0; r < f->block.rows; r++)
		if (f->mark[r]) {
			f->mark[r] = 0;
			f->rows[k++] = r;
		}
	f->block.nrow = k;
	return &f->block;
}

void llr_maxent_init(llr_maxent *f)
{
	memset(f->w, 0, f->n * sizeof *f->w);
}
