/*
 * sample.c - choosing the next word from a log-probability vector:
 * temperature, top-k, top-p (nucleus), greedy argmax, and the top-k
 * selection beam search uses.  Works on any vector over V (a row of
 * llr_net_step's output already holds log b, so an untruncated draw at
 * temperature 1 follows the exact LL-RNN distribution).  It does not run
 * the network and keeps no state besides its workspace; randomness comes
 * only from the llr_rng passed in.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

typedef struct item {
	float v;
	int32_t id;
} item;

struct llr_sampler {
	int32_t V;
	item *items; /* V */
	double *w;   /* V */
};

void llr_sample_opts_init(llr_sample_opts *o)
{
	o->temperature = 1.0;
	o->top_k = 0;
	o->top_p = 1.0;
	o->greedy = 0;
}

int llr_sample_opts_check(const llr_sample_opts *o, llr_err *err)
{
	if (!(o->temperature > 0) || !isfinite(o->temperature))
		return llr_err_set(err, LLR_EINVAL, "sampling: temperature must be a finite number > 0, not %g", o->temperature);
	if (o->top_k < 0)
		return llr_err_set(err, LLR_EINVAL, "sampling: top-k must be >= 0, not %d", (int)o->top_k);
	if (!(o->top_p > 0 && o->top_p <= 1))
		return llr_err_set(err, LLR_EINVAL, "sampling: top-p must be in (0, 1], not %g", o->top_p);
	return LLR_OK;
}

llr_sampler *llr_sampler_new(int32_t V, llr_err *err)
{
	if (V <= 0)
		return llr_err_set(err, LLR_EINVAL, "sampler: vocabulary size %d", (int)V), NULL;
	llr_sampler *s = calloc(1, sizeof *s);
	if (s) {
		s->V = V;
		s->items = llr_calloc((size_t)V, sizeof *s->items);
		s->w = llr_calloc((size_t)V, sizeof *s->w);
	}
	if (!s || !s->items || !s->w) {
		llr_sampler_free(s);
		return llr_err_set(err, LLR_ENOMEM, "sampler: out of memory for %d words", (int)V), NULL;
	}
	return s;
}

void llr_sampler_free(llr_sampler *s)
{
	if (!s)
		return;
	free(s->items);
	free(s->w);
	free(s);
}

static inline float clean(float v)
{
	return isnan(v) ? -INFINITY : v;
}

/* a ranks before b: larger value, then lower id. */
static inline int better(const item *a, const item *b)
{
	return a->v > b->v || (a->v == b->v && a->id < b->id);
}

static int cmp_items(const void *pa, const void *pb)
{
	const item *a = pa, *b = pb;
	if (better(a, b))
		return -1;
	if (better(b, a))
		return 1;
	return 0;
}

/* Min-heap on "better": the root is the worst item kept. */
static void sift_down(item *h, int32_t n, int32_t i)
{
	for (;;) {
		int32_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < n && better(&h[w], &h[l]))
			w = l;
		if (r < n && better(&h[w], &h[r]))
			w = r;
		if (w == i)
			return;
		item t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

static void sift_up(item *h, int32_t i)
{
	while (i > 0) {
		int32_t p = (i - 1) / 2;
		if (!better(&h[p], &h[i]))
			return;
		item t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

/* The k best of x into buf (capacity >= k), sorted best first. */
static int32_t top_k_into(const float *x, int32_t n, int32_t k, item *buf)
{
	if (k > n)
		k = n;
	if (k <= 0)
		return 0;
	int32_t m = 0;
	for (int32_t i = 0; i < n; i++) {
		item it = {clean(x[i]), i};
		if (m < k) {
			buf[m] = it;
			sift_up(buf, m);
			m++;
		} else if (better(&it, &buf[0])) {
			buf[0] = it;
			sift_down(buf, m, 0);
		}
	}
	qsort(buf, (size_t)m, sizeof *buf, cmp_items);
	return m;
}

int32_t llr_top_k(const float *x, int32_t n, int32_t k, int32_t *idx)
{
	if (k > n)
		k = n;
	if (k <= 0)
		return 0;
	item *buf = llr_malloc((size_t)k * sizeof *buf);
	if (!buf)
		return LLR_ENOMEM;
	int32_t m = top_k_into(x, n, k, buf);
	for (int32_t i = 0; i < m; i++)
		idx[i] = buf[i].id;
	free(buf);
	return m;
}

int32_t llr_argmax(const float *x, int32_t n)
{
	int32_t best = -1;
	for (int32_t i = 0; i < n; i++)
		if (!isnan(x[i]) && (best < 0 || x[i] > x[best]))
			best = i;
	return best;
}

int32_t llr_sample(llr_sampler *s, const llr_sample_opts *o, const float *logp, llr_rng *rng)
{
	const int32_t V = s->V;
	int32_t a = llr_argmax(logp, V);
	if (a < 0 || !isfinite(logp[a]))
		return LLR_EINVAL;
	if (o->greedy)
		return a;

	const double invT = 1.0 / o->temperature;
	const double m = (double)logp[a] * invT;
	const int truncate = (o->top_k > 0 && o->top_k < V) || o->top_p < 1.0;

	if (!truncate) {
		/* Exact draw over the whole vocabulary, in id order. */
		double total = 0;
		for (int32_t i = 0; i < V; i++) {
			float v = clean(logp[i]);
			double w = v == -INFINITY ? 0.0 : exp((double)v * invT - m);
			s->w[i] = w;
			total += w;
		}
		double u = llr_rng_uniform(rng) * total, cum = 0;
		int32_t last = a;
		for (int32_t i = 0; i < V; i++) {
			if (s->w[i] <= 0)
				continue;
			cum += s->w[i];
			last = i;
			if (u < cum)
				return i;
		}
		return last; /* rounding: u landed at the very end */
	}

	/* Candidates best first: top-k of them, or all finite ones sorted. */
	int32_t n;
	if (o->top_k > 0 && o->top_k < V) {
		n = top_k_into(logp, V, o->top_k, s->items);
	} else {
		n = 0;
		for (int32_t i = 0; i < V; i++) {
			float v = clean(logp[i]);
			if (v != -INFINITY)
				s->items[n++] = (item){v, i};
		}
		qsort(s->items, (size_t)n, sizeof *s->items, cmp_items);
	}
	double total = 0;
	int32_t kept = 0;
	for (int32_t i = 0; i < n; i++) {
		float v = s->items[i].v;
		double w = v == -INFINITY ? 0.0 : exp((double)v * invT - m);
		s->w[i] = w;
		total += w;
		if (w > 0)
			kept = i + 1;
	}
	n = kept;
	if (o->top_p < 1.0) {
		/* Nucleus: the shortest best-first prefix whose mass reaches
		 * top_p of what is left after top-k. */
		double goal = o->top_p * total, cum = 0;
		int32_t i = 0;
		while (i < n) {
			cum += s->w[i++];
			if (cum >= goal)
				break;
		}
		n = i;
		total = cum;
	}
	double u = llr_rng_uniform(rng) * total, cum = 0;
	for (int32_t i = 0; i < n; i++) {
		cum += s->w[i];
		if (u < cum)
			return s->items[i].id;
	}
	return s->items[n - 1].id;
}
