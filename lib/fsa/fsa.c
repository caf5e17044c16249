/*
 * fsa.c - the deterministic automaton over vocabulary ids (llr_fsa,
 * lib/internal.h) and how it is made from the nondeterministic one the
 * readers build (fsa.h): taken as it is when it is deterministic,
 * otherwise determinised by subset construction (unweighted automata
 * only: the determinisation of a weighted automaton is OpenFst's
 * fstdeterminize, and need not terminate), then trimmed to the states
 * from which a final state is reachable, with each state's distance to
 * the nearest final state (a backward breadth-first search).
 *
 * A state keeps its arcs sorted by label (an arc to state -1 rejects
 * its token), and at most one default arc that every other producible
 * token takes (what "." and "[^ ...]" of a
 * regular expression leave after the subset construction), so "any
 * token" costs one arc and not V.  The queries hand an automaton that
 * is of a kind whose states are made when reached (a grammar, an
 * intersection) to that kind (fsa.h).  Not here: the file and pattern
 * readers (fstext.c, regex.c).
 */
#include <math.h>
#include <stdlib.h>

#include "fsa.h"

/* ------------------------------------------------------------- the NFA */

void fsa_nfa_init(fsa_nfa *a, const llr_strmap *vocab)
{
	memset(a, 0, sizeof *a);
	a->start = -1;
	a->vocab = vocab;
	a->eos = llr_strmap_get(vocab, LLR_EOS, strlen(LLR_EOS));
	a->bos = llr_strmap_get(vocab, LLR_BOS, strlen(LLR_BOS));
}

void fsa_nfa_free(fsa_nfa *a)
{
	free(a->arcs);
	free(a->final);
	for (int32_t k = 0; k < a->ncls; k++)
		free(a->cls[k].ids);
	free(a->cls);
	memset(a, 0, sizeof *a);
}

int fsa_nfa_grow(fsa_nfa *a, int32_t id)
{
	if (id < a->nstates)
		return LLR_OK;
	if ((size_t)id >= a->fcap) {
		size_t cap = LLR_MAX((size_t)id + 1, 2 * a->fcap);
		float *f = llr_reallocarray(a->final, cap, sizeof *f);
		if (!f)
			return LLR_ENOMEM;
		a->final = f;
		a->fcap = cap;
	}
	for (int32_t q = a->nstates; q <= id; q++)
		a->final[q] = -INFINITY;
	a->nstates = id + 1;
	return LLR_OK;
}

int32_t fsa_nfa_state(fsa_nfa *a)
{
	if (a->nstates == INT32_MAX || fsa_nfa_grow(a, a->nstates) < 0)
		return LLR_ENOMEM;
	return a->nstates - 1;
}

int fsa_nfa_arc(fsa_nfa *a, int32_t from, int32_t to, int32_t lab, float logw, size_t line)
{
	if (a->narcs == a->acap) {
		size_t cap = a->acap ? 2 * a->acap : 64;
		fsa_arc *p = llr_reallocarray(a->arcs, cap, sizeof *p);
		if (!p)
			return LLR_ENOMEM;
		a->arcs = p;
		a->acap = cap;
	}
	a->arcs[a->narcs++] = (fsa_arc){from, to, lab, logw, line};
	return LLR_OK;
}

static int cmp_i32(const void *pa, const void *pb)
{
	int32_t x = *(const int32_t *)pa, y = *(const int32_t *)pb;
	return (x > y) - (x < y);
}

/* Sort and deduplicate ids[0..n); the new count. */
static int32_t sort_unique(int32_t *ids, int32_t n)
{
	if (n < 2)
		return n;
	qsort(ids, (size_t)n, sizeof *ids, cmp_i32);
	int32_t m = 1;
	for (int32_t i = 1; i < n; i++)
		if (ids[i] != ids[m - 1])
			ids[m++] = ids[i];
	return m;
}

int fsa_nfa_class(fsa_nfa *a, const int32_t *ids, int32_t n, int neg, int32_t *lab)
{
	if (a->ncls == a->ccap) {
		int32_t cap = a->ccap ? 2 * a->ccap : 8;
		fsa_class *c = llr_reallocarray(a->cls, (size_t)cap, sizeof *c);
		if (!c)
			return LLR_ENOMEM;
		a->cls = c;
		a->ccap = cap;
	}
	int32_t *cp = llr_malloc((size_t)LLR_MAX(n, 1) * sizeof *cp);
	if (!cp)
		return LLR_ENOMEM;
	if (n)
		memcpy(cp, ids, (size_t)n * sizeof *cp);
	a->cls[a->ncls] = (fsa_class){cp, sort_unique(cp, n), neg};
	*lab = FSA_CLASS(a->ncls++);
	return LLR_OK;
}

static int in_sorted(const int32_t *ids, int32_t n, int32_t x)
{
	int32_t lo = 0, hi = n;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (ids[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo] == x;
}

int fsa_nfa_match(const fsa_nfa *a, int32_t lab, int32_t x)
{
	if (lab >= 0)
		return lab == x;
	if (!FSA_IS_CLASS(lab))
		return 0;
	const fsa_class *c = &a->cls[FSA_CLASS_OF(lab)];
	return in_sorted(c->ids, c->n, x) != c->neg;
}

/* ------------------------------------------------------------- the DFA */

void llr_fsa_free(llr_fsa *d)
{
	if (!d)
		return;
	free(d->off);
	free(d->lab);
	free(d->dst);
	free(d->logw);
	free(d->def);
	free(d->deflogw);
	free(d->final);
	free(d->dist);
	fsa_gram_free(d->gram);
	fsa_meet_free(d->meet);
	free(d);
}

/* A DFA of n states and m arcs, uninitialised but for def (-1). */
static llr_fsa *dfa_alloc(int32_t n, size_t m, int32_t V, int32_t eos, int32_t bos)
{
	llr_fsa *d = llr_calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->n = n;
	d->V = V;
	d->eos = eos;
	d->bos = bos;
	d->off = llr_calloc((size_t)n + 1, sizeof *d->off);
	d->lab = llr_malloc(LLR_MAX(m, 1) * sizeof *d->lab);
	d->dst = llr_malloc(LLR_MAX(m, 1) * sizeof *d->dst);
	d->logw = llr_malloc(LLR_MAX(m, 1) * sizeof *d->logw);
	d->def = llr_malloc((size_t)LLR_MAX(n, 1) * sizeof *d->def);
	d->deflogw = llr_calloc((size_t)LLR_MAX(n, 1), sizeof *d->deflogw);
	d->final = llr_malloc((size_t)LLR_MAX(n, 1) * sizeof *d->final);
	d->dist = llr_malloc((size_t)LLR_MAX(n, 1) * sizeof *d->dist);
	if (!d->off || !d->lab || !d->dst || !d->logw || !d->def || !d->deflogw || !d->final || !d->dist) {
		llr_fsa_free(d);
		return NULL;
	}
	for (int32_t q = 0; q < n; q++)
		d->def[q] = -1;
	return d;
}

/* Arcs in the order (from, label). */
static int cmp_arc(const void *pa, const void *pb)
{
	const fsa_arc *x = pa, *y = pb;
	if (x->from != y->from)
		return (x->from > y->from) - (x->from < y->from);
	return (x->lab > y->lab) - (x->lab < y->lab);
}

/* The first arc that makes a nondeterministic (after sorting), or NULL. */
static const fsa_arc *nondeterministic(const fsa_nfa *a)
{
	for (size_t i = 0; i < a->narcs; i++) {
		const fsa_arc *x = &a->arcs[i];
		if (x->lab < 0 || (i && a->arcs[i - 1].from == x->from && a->arcs[i - 1].lab == x->lab))
			return x;
	}
	return NULL;
}

static int weighted(const fsa_nfa *a)
{
	for (size_t i = 0; i < a->narcs; i++)
		if (a->arcs[i].logw != 0.0f)
			return 1;
	for (int32_t q = 0; q < a->nstates; q++)
		if (a->final[q] != 0.0f && a->final[q] != -INFINITY)
			return 1;
	return 0;
}

/* a, deterministic, as a DFA (arcs sorted). */
static llr_fsa *dfa_copy(const fsa_nfa *a)
{
	llr_fsa *d = dfa_alloc(a->nstates, a->narcs, (int32_t)llr_strmap_size(a->vocab), a->eos, a->bos);
	if (!d)
		return NULL;
	d->start = a->start;
	for (size_t i = 0; i < a->narcs; i++) {
		d->off[a->arcs[i].from + 1]++;
		d->lab[i] = a->arcs[i].lab;
		d->dst[i] = a->arcs[i].to;
		d->logw[i] = a->arcs[i].logw;
	}
	for (int32_t q = 0; q < a->nstates; q++) {
		d->off[q + 1] += d->off[q];
		d->final[q] = a->final[q];
	}
	return d;
}

/* ------------------------------------------------ subset construction */

typedef struct subsets {
	const fsa_nfa *a;
	int32_t *aoff;      /* nstates + 1: arcs of each NFA state (a's sorted) */
	llr_strmap *seen;   /* a set's sorted ids as bytes -> DFA state */
	int32_t **sets;     /* DFA state -> its NFA states */
	int32_t *setn;
	size_t cap;
	int32_t *stack, *buf; /* nstates each */
	unsigned char *mark;
	/* the DFA under construction */
	fsa_arc *arcs; /* from = DFA state; lab -1: the default arc */
	size_t narcs, acap;
} subsets;

/* The epsilon closure of set[0..n) into s->buf; its size. */
static int32_t closure(subsets *s, const int32_t *set, int32_t n)
{
	const fsa_nfa *a = s->a;
	int32_t sp = 0, m = 0;
	for (int32_t i = 0; i < n; i++)
		if (!s->mark[set[i]]) {
			s->mark[set[i]] = 1;
			s->stack[sp++] = set[i];
		}
	while (sp) {
		int32_t q = s->stack[--sp];
		s->buf[m++] = q;
		for (int32_t k = s->aoff[q]; k < s->aoff[q + 1]; k++)
			if (a->arcs[k].lab == FSA_EPS && !s->mark[a->arcs[k].to]) {
				s->mark[a->arcs[k].to] = 1;
				s->stack[sp++] = a->arcs[k].to;
			}
	}
	for (int32_t i = 0; i < m; i++)
		s->mark[s->buf[i]] = 0;
	return sort_unique(s->buf, m);
}

/* The DFA state of the closed set s->buf[0..n), made when new; its id
 * or LLR_ENOMEM. */
static int32_t subset_state(subsets *s, int32_t n)
{
	int32_t id = llr_strmap_get(s->seen, (const char *)s->buf, (size_t)n * sizeof *s->buf);
	if (id >= 0)
		return id;
	size_t k = llr_strmap_size(s->seen);
	if (k == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		int32_t **sets = llr_reallocarray(s->sets, cap, sizeof *sets);
		if (sets)
			s->sets = sets;
		int32_t *setn = llr_reallocarray(s->setn, cap, sizeof *setn);
		if (setn)
			s->setn = setn;
		if (!sets || !setn)
			return LLR_ENOMEM;
		s->cap = cap;
	}
	if (!(s->sets[k] = llr_malloc((size_t)LLR_MAX(n, 1) * sizeof **s->sets)))
		return LLR_ENOMEM;
	memcpy(s->sets[k], s->buf, (size_t)n * sizeof *s->buf);
	s->setn[k] = n;
	if (llr_strmap_add(s->seen, (const char *)s->buf, (size_t)n * sizeof *s->buf) < 0) {
		free(s->sets[k]);
		return LLR_ENOMEM;
	}
	return (int32_t)k;
}

static int subset_arc(subsets *s, int32_t from, int32_t lab, int32_t to)
{
	if (s->narcs == s->acap) {
		size_t cap = s->acap ? 2 * s->acap : 64;
		fsa_arc *p = llr_reallocarray(s->arcs, cap, sizeof *p);
		if (!p)
			return LLR_ENOMEM;
		s->arcs = p;
		s->acap = cap;
	}
	s->arcs[s->narcs++] = (fsa_arc){from, to, lab, 0.0f, 0};
	return LLR_OK;
}

/* The arcs of DFA state q: one per token some member's arcs name (a
 * token or a class's listed token), then the default for the rest. */
static int subset_expand(subsets *s, int32_t q, int32_t *names, int32_t *targets)
{
	const fsa_nfa *a = s->a;
	const int32_t *set = s->sets[q];
	int32_t n = s->setn[q], nn = 0;
	for (int32_t i = 0; i < n; i++)
		for (int32_t k = s->aoff[set[i]]; k < s->aoff[set[i] + 1]; k++) {
			int32_t lab = a->arcs[k].lab;
			if (lab >= 0)
				names[nn++] = lab;
			else if (FSA_IS_CLASS(lab)) {
				const fsa_class *c = &a->cls[FSA_CLASS_OF(lab)];
				for (int32_t j = 0; j < c->n; j++)
					names[nn++] = c->ids[j];
			}
		}
	nn = sort_unique(names, nn);
	for (int32_t j = 0; j <= nn; j++) {
		int32_t x = j < nn ? names[j] : -1, nt = 0; /* x -1: every other token */
		for (int32_t i = 0; i < n; i++)
			for (int32_t k = s->aoff[set[i]]; k < s->aoff[set[i] + 1]; k++) {
				int32_t lab = a->arcs[k].lab;
				int hit = x >= 0 ? fsa_nfa_match(a, lab, x) : FSA_IS_CLASS(lab) && a->cls[FSA_CLASS_OF(lab)].neg;
				if (hit)
					targets[nt++] = a->arcs[k].to;
			}
		if (!nt) {
			/* a token named only to be excluded ([^ ...]): an
			 * arc to nowhere, so the default does not take it */
			if (x >= 0 && subset_arc(s, q, x, -1) < 0)
				return LLR_ENOMEM;
			continue;
		}
		int32_t m = closure(s, targets, nt), to = subset_state(s, m);
		if (to < 0 || subset_arc(s, q, x, to) < 0)
			return LLR_ENOMEM;
	}
	return LLR_OK;
}

/* The names buffer must hold every token a state's members name: at
 * most one per arc of a token, a class's size per arc of a class. */
static size_t names_size(const fsa_nfa *a)
{
	size_t m = 1;
	for (size_t i = 0; i < a->narcs; i++)
		m += FSA_IS_CLASS(a->arcs[i].lab) ? (size_t)a->cls[FSA_CLASS_OF(a->arcs[i].lab)].n : 1;
	return m;
}

static llr_fsa *determinise(const fsa_nfa *a, llr_err *err)
{
	subsets s = {.a = a};
	llr_fsa *d = NULL;
	int32_t *names = llr_malloc(names_size(a) * sizeof *names);
	int32_t *targets = llr_malloc(LLR_MAX(a->narcs, 1) * sizeof *targets);
	s.aoff = llr_calloc((size_t)a->nstates + 1, sizeof *s.aoff);
	s.stack = llr_malloc((size_t)a->nstates * sizeof *s.stack);
	s.buf = llr_malloc((size_t)a->nstates * sizeof *s.buf);
	s.mark = llr_calloc((size_t)a->nstates, 1);
	s.seen = llr_strmap_new();
	int rc = names && targets && s.aoff && s.stack && s.buf && s.mark && s.seen ? LLR_OK : LLR_ENOMEM;
	for (size_t i = 0; rc >= 0 && i < a->narcs; i++)
		s.aoff[a->arcs[i].from + 1]++;
	for (int32_t q = 0; rc >= 0 && q < a->nstates; q++)
		s.aoff[q + 1] += s.aoff[q];
	if (rc >= 0 && subset_state(&s, closure(&s, &a->start, 1)) < 0)
		rc = LLR_ENOMEM;
	for (int32_t q = 0; rc >= 0 && (size_t)q < llr_strmap_size(s.seen); q++)
		rc = subset_expand(&s, q, names, targets);
	int32_t n = s.seen ? (int32_t)llr_strmap_size(s.seen) : 0;
	size_t nexp = 0;
	for (size_t i = 0; rc >= 0 && i < s.narcs; i++)
		nexp += s.arcs[i].lab >= 0;
	if (rc >= 0 && !(d = dfa_alloc(n, nexp, (int32_t)llr_strmap_size(a->vocab), a->eos, a->bos)))
		rc = LLR_ENOMEM;
	if (rc >= 0) {
		d->start = 0;
		size_t j = 0;
		for (size_t i = 0; i < s.narcs; i++) { /* made state by state, tokens ascending, default last */
			const fsa_arc *x = &s.arcs[i];
			if (x->lab < 0) {
				d->def[x->from] = x->to;
				continue;
			}
			d->off[x->from + 1]++;
			d->lab[j] = x->lab;
			d->dst[j] = x->to;
			d->logw[j++] = 0.0f;
		}
		for (int32_t q = 0; q < n; q++) {
			d->off[q + 1] += d->off[q];
			d->final[q] = -INFINITY;
			for (int32_t i = 0; i < s.setn[q]; i++)
				if (a->final[s.sets[q][i]] != -INFINITY)
					d->final[q] = 0.0f;
		}
	}
	for (size_t k = 0; k < s.cap && k < (size_t)n; k++)
		free(s.sets[k]);
	free(s.sets);
	free(s.setn);
	free(s.arcs);
	free(s.aoff);
	free(s.stack);
	free(s.buf);
	free(s.mark);
	llr_strmap_free(s.seen);
	free(names);
	free(targets);
	if (rc < 0)
		llr_err_set(err, LLR_ENOMEM, "out of memory determinising the automaton");
	return rc < 0 ? NULL : d;
}

/* ------------------------------------------------------------ trimming */

/* Does q's default arc take any token (one not among its labels)? */
static int default_used(const llr_fsa *d, int32_t q)
{
	if (d->def[q] < 0)
		return 0;
	int32_t producible = d->V - (d->eos >= 0) - (d->bos >= 0);
	return d->off[q + 1] - d->off[q] < producible;
}

/* dist by a backward breadth-first search from the final states;
 * INT32_MAX where none is reachable.  LLR_ENOMEM. */
static int distances(llr_fsa *d)
{
	int32_t n = d->n;
	size_t m = (size_t)d->off[n] + (size_t)n;
	int32_t *roff = llr_calloc((size_t)n + 1, sizeof *roff), *rsrc = llr_malloc(LLR_MAX(m, 1) * sizeof *rsrc);
	int32_t *queue = llr_malloc((size_t)LLR_MAX(n, 1) * sizeof *queue);
	if (!roff || !rsrc || !queue) {
		free(roff);
		free(rsrc);
		free(queue);
		return LLR_ENOMEM;
	}
	for (int32_t q = 0; q < n; q++) {
		for (int32_t k = d->off[q]; k < d->off[q + 1]; k++)
			roff[d->dst[k] + 1] += d->dst[k] >= 0;
		if (default_used(d, q))
			roff[d->def[q] + 1]++;
	}
	for (int32_t q = 0; q < n; q++)
		roff[q + 1] += roff[q];
	for (int32_t q = 0; q < n; q++) {
		for (int32_t k = d->off[q]; k < d->off[q + 1]; k++)
			if (d->dst[k] >= 0)
				rsrc[roff[d->dst[k]]++] = q;
		if (default_used(d, q))
			rsrc[roff[d->def[q]]++] = q;
	}
	for (int32_t q = n; q > 0; q--)
		roff[q] = roff[q - 1];
	roff[0] = 0;
	int32_t head = 0, tail = 0;
	for (int32_t q = 0; q < n; q++) {
		d->dist[q] = d->final[q] != -INFINITY ? 0 : INT32_MAX;
		if (!d->dist[q])
			queue[tail++] = q;
	}
	while (head < tail) {
		int32_t q = queue[head++];
		for (int32_t k = roff[q]; k < roff[q + 1]; k++)
			if (d->dist[rsrc[k]] == INT32_MAX) {
				d->dist[rsrc[k]] = d->dist[q] + 1;
				queue[tail++] = rsrc[k];
			}
	}
	free(roff);
	free(rsrc);
	free(queue);
	return LLR_OK;
}

/* Is arc k of state q kept by trim: into a live state, or, when q keeps
 * its default arc, an arc to nowhere that keeps the token from it. */
static int keep_arc(const llr_fsa *d, const int32_t *map, int32_t q, int32_t k)
{
	if (d->dst[k] >= 0 && map[d->dst[k]] >= 0)
		return 1;
	return default_used(d, q) && map[d->def[q]] >= 0;
}

/* d without the states that reach no final state, and the arcs into
 * them; states renumbered in order. */
static llr_fsa *trim(llr_fsa *d)
{
	int32_t *map = llr_malloc((size_t)LLR_MAX(d->n, 1) * sizeof *map), n = 0;
	if (!map)
		return NULL;
	size_t m = 0;
	for (int32_t q = 0; q < d->n; q++)
		map[q] = d->dist[q] == INT32_MAX ? -1 : n++;
	for (int32_t q = 0; q < d->n; q++)
		for (int32_t k = d->off[q]; map[q] >= 0 && k < d->off[q + 1]; k++)
			m += keep_arc(d, map, q, k);
	llr_fsa *t = dfa_alloc(n, m, d->V, d->eos, d->bos);
	if (!t) {
		free(map);
		return NULL;
	}
	t->start = map[d->start];
	int32_t j = 0;
	for (int32_t q = 0; q < d->n; q++) {
		int32_t p = map[q];
		if (p < 0)
			continue;
		for (int32_t k = d->off[q]; k < d->off[q + 1]; k++)
			if (keep_arc(d, map, q, k)) {
				t->lab[j] = d->lab[k];
				t->dst[j] = d->dst[k] >= 0 ? map[d->dst[k]] : -1;
				t->logw[j++] = d->logw[k];
			}
		t->off[p + 1] = j;
		if (default_used(d, q) && map[d->def[q]] >= 0) {
			t->def[p] = map[d->def[q]];
			t->deflogw[p] = d->deflogw[q];
		}
		t->final[p] = d->final[q];
		t->dist[p] = d->dist[q];
	}
	free(map);
	return t;
}

llr_fsa *fsa_build(fsa_nfa *a, const char *name, llr_err *err)
{
	if (a->start < 0 || a->nstates == 0) {
		llr_err_set(err, LLR_EFORMAT, "%s: an empty automaton accepts nothing", name);
		return NULL;
	}
	if (a->narcs)
		qsort(a->arcs, a->narcs, sizeof *a->arcs, cmp_arc);
	const fsa_arc *nd = nondeterministic(a);
	llr_fsa *d;
	if (nd && weighted(a)) {
		llr_err_set(err, LLR_EFORMAT,
		            "%s:%zu: the automaton is weighted and not deterministic (%s from state %d): "
		            "determinise it first (fstdeterminize), or drop its weights",
		            name, nd->line, nd->lab == FSA_EPS ? "an <eps> arc" : "two arcs of one label", nd->from);
		return NULL;
	}
	d = nd ? determinise(a, err) : dfa_copy(a);
	if (!d) {
		if (!nd)
			llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	if (distances(d) < 0) {
		llr_fsa_free(d);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	if (d->dist[d->start] == INT32_MAX) {
		llr_err_set(err, LLR_EFORMAT, "%s: the automaton accepts nothing (no final state is reachable from its start)", name);
		llr_fsa_free(d);
		return NULL;
	}
	llr_fsa *t = trim(d);
	llr_fsa_free(d);
	if (!t)
		llr_err_set(err, LLR_ENOMEM, "out of memory");
	return t;
}

/* ------------------------------------------------------------- queries */

int llr_fsa_ready(const llr_fsa *d, int32_t q, llr_err *err)
{
	if (!d->kind)
		return LLR_OK;
	pthread_mutex_t *mu = d->kind->mutex(d);
	pthread_mutex_lock(mu);
	int rc = d->kind->make(d, q, err);
	pthread_mutex_unlock(mu);
	return rc;
}

/* A kind's state q: its allowed set, made if need be, copied out under
 * its mutex (the table of states may move when another thread adds one;
 * the arrays it points to do not): 0, or -1 when making it failed
 * (nothing allowed). */
static int kind_set(const llr_fsa *d, int32_t q, fsa_set *out)
{
	llr_err e = {0};
	pthread_mutex_t *mu = d->kind->mutex(d);
	pthread_mutex_lock(mu);
	int rc = d->kind->make(d, q, &e);
	if (rc >= 0)
		d->kind->get(d, q, out);
	pthread_mutex_unlock(mu);
	return rc < 0 ? -1 : 0;
}

int32_t llr_fsa_states(const llr_fsa *d)
{
	if (d->kind)
		return d->kind->states(d);
	return d->n;
}

int32_t llr_fsa_start(const llr_fsa *d)
{
	return d->start;
}

int32_t llr_fsa_eos(const llr_fsa *d)
{
	return d->eos;
}

int32_t llr_fsa_next(const llr_fsa *d, int32_t q, int32_t x, float *logw)
{
	if (x < 0 || x >= d->V || x == d->eos || x == d->bos)
		return -1;
	if (d->kind)
		return d->kind->next(d, q, x, logw);
	LLR_ASSERT(q >= 0 && q < d->n);
	int32_t lo = d->off[q], hi = d->off[q + 1];
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (d->lab[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < d->off[q + 1] && d->lab[lo] == x) { /* dst -1: excluded from the default */
		if (logw)
			*logw = d->logw[lo];
		return d->dst[lo];
	}
	if (logw)
		*logw = d->deflogw[q];
	return d->def[q];
}

int32_t llr_fsa_arcs(const llr_fsa *d, int32_t q, const int32_t **lab, const int32_t **dst, const float **logw)
{
	if (d->kind) {
		fsa_set st = {.def = -1};
		int rc = kind_set(d, q, &st);
		*lab = st.lab;
		*dst = st.dst;
		*logw = st.logw;
		return rc < 0 ? 0 : st.n;
	}
	LLR_ASSERT(q >= 0 && q < d->n);
	*lab = d->lab + d->off[q];
	*dst = d->dst + d->off[q];
	*logw = d->logw + d->off[q];
	return d->off[q + 1] - d->off[q];
}

int32_t llr_fsa_default(const llr_fsa *d, int32_t q, float *logw)
{
	if (d->kind) {
		fsa_set st = {.def = -1};
		kind_set(d, q, &st);
		if (logw)
			*logw = st.deflogw;
		return st.def;
	}
	LLR_ASSERT(q >= 0 && q < d->n);
	if (logw)
		*logw = d->deflogw[q];
	return d->def[q];
}

float llr_fsa_final(const llr_fsa *d, int32_t q)
{
	if (d->kind)
		return d->kind->final(d, q);
	LLR_ASSERT(q >= 0 && q < d->n);
	return d->final[q];
}

int32_t llr_fsa_dist(const llr_fsa *d, int32_t q)
{
	if (d->kind) {
		llr_err e = {0};
		int32_t n = d->kind->dist_within(d, q, FSA_GRAM_DIST_MAX, &e);
		return n < 0 || n > FSA_GRAM_DIST_MAX ? INT32_MAX : n;
	}
	LLR_ASSERT(q >= 0 && q < d->n);
	return d->dist[q];
}

int32_t llr_fsa_dist_within(const llr_fsa *d, int32_t q, int32_t limit, llr_err *err)
{
	if (d->kind)
		return d->kind->dist_within(d, q, limit, err);
	LLR_ASSERT(q >= 0 && q < d->n);
	return d->dist[q];
}

int32_t llr_fsa_run(const llr_fsa *d, const int32_t *ids, size_t n)
{
	int32_t q = d->start;
	for (size_t k = 0; k < n; k++)
		if ((q = llr_fsa_next(d, q, ids[k], NULL)) < 0)
			return -1 - (int32_t)k;
	return q;
}
