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
 * Parameters, one flat array: bias V, theta H; gradients alike.  Not
 * here: the model files and training (lib/family/loglm).  Not safe from
 * two threads at once.
 */
#include "internal.h"
#include "nn.h"

#include <math.h>
#include <stdlib.h>

struct llr_maxent {
	llr_maxent_config c;
	size_t n;            /* V + H */
	float *w, *g;        /* bias V then theta H */
	float *z;            /* V: one position's logits */
	float *e;            /* V: exp(z - max z), then the gradient of the logits */
	uint32_t *off;       /* a position's feature offsets */
	size_t offcap;
	unsigned char *mark; /* H / CHUNK: a chunk touched since the last rows */
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
	free(f->off);
	free(f->mark);
	free(f->rows);
	free(f);
}

llr_maxent *llr_maxent_new(const llr_maxent_config *c, llr_err *err)
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
	llr_maxent *f = llr_calloc(1, sizeof *f);
	if (!f)
		return llr_err_set(err, LLR_ENOMEM, "out of memory"), NULL;
	f->c = *c;
	f->n = (size_t)c->vocab + (size_t)H;
	size_t R = (size_t)(H / LLR_ME_CHUNK);
	f->w = llr_calloc(f->n, sizeof *f->w);
	f->g = llr_calloc(f->n, sizeof *f->g);
	f->z = llr_malloc((size_t)c->vocab * sizeof *f->z);
	f->e = llr_malloc((size_t)c->vocab * sizeof *f->e);
	f->mark = llr_calloc(R, 1);
	f->rows = llr_malloc(R * sizeof *f->rows);
	if (!f->w || !f->g || !f->z || !f->e || !f->mark || !f->rows) {
		llr_maxent_free(f);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a log-linear LM of %zu parameters", (size_t)c->vocab + (size_t)H),
		       NULL;
	}
	f->block = (llr_rows){.off = (size_t)c->vocab, .rows = (int32_t)R, .cols = LLR_ME_CHUNK, .row = f->rows};
	return f;
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

size_t llr_maxent_features(const llr_maxent *f, const int32_t *seq, int64_t pos, uint32_t *off)
{
	size_t k = 0;
	uint64_t h = 0x6e6772616d000000ULL; /* n-grams: each longer one extends the last */
	for (int n = 1; n < f->c.order; n++) {
		h = mix(h ^ (uint32_t)at(f, seq, pos - n)) + (uint64_t)n;
		off[k++] = offset_of(f, h);
	}
	for (int d = 2; d <= f->c.skip; d++)
		off[k++] = offset_of(f, 0x736b697000000000ULL + ((uint64_t)d << 32) + (uint32_t)at(f, seq, pos - d));
	if (f->c.bag)
		for (int64_t p = 0; p < pos; p++)
			off[k++] = offset_of(f, 0x6261670000000000ULL + (uint32_t)at(f, seq, p));
	return k;
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

/* The logits of position p into f->z, its features in f->off; their count. */
static int logits(llr_maxent *f, const llr_maxent_pos *p, size_t *nf)
{
	size_t need = llr_maxent_nfeat(f, p->pos);
	if (need > f->offcap) {
		uint32_t *o = llr_reallocarray(f->off, need + need / 2 + 16, sizeof *o);
		if (!o)
			return LLR_ENOMEM;
		f->off = o;
		f->offcap = need + need / 2 + 16;
	}
	*nf = llr_maxent_features(f, p->seq, p->pos, f->off);
	const size_t V = (size_t)f->c.vocab, H = (size_t)f->c.hash_size;
	const float *theta = f->w + V;
	float *z = f->z;
	memcpy(z, f->w, V * sizeof *z);
	for (size_t i = 0; i < *nf; i++) {
		for (size_t w0 = 0, o = f->off[i]; w0 < V; o = 0) {
			size_t len = LLR_MIN(V - w0, H - o);
			add_to(z + w0, theta + o, len);
			w0 += len;
		}
	}
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
	const size_t V = (size_t)f->c.vocab, H = (size_t)f->c.hash_size, R = H / LLR_ME_CHUNK;
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
		for (size_t k = 0; k < nf; k++) {
			for (size_t w0 = 0, o = f->off[k]; w0 < V; o = 0) {
				size_t len = LLR_MIN(V - w0, H - o);
				add_to(gt + o, f->e + w0, len);
				w0 += len;
			}
			/* the chunks of the slice [o, o + V) */
			size_t nch = LLR_MIN((f->off[k] % LLR_ME_CHUNK + V + LLR_ME_CHUNK - 1) / LLR_ME_CHUNK, R);
			for (size_t c = 0, r = f->off[k] / LLR_ME_CHUNK; c < nch; c++)
				f->mark[(r + c) % R] = 1;
		}
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
