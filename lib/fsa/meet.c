/*
 * meet.c - the intersection of two automata as a kind of llr_fsa
 * (issue 51, gen --fsa, --regex or --grammar on a model trained under
 * an automaton background; llr_fsa_meet, lib/internal.h): a kind whose
 * states are made when reached (fsa.h), as a grammar is.  A
 * state is a pair of states, one of each factor, numbered as it is
 * first reached (0: the pair of their starts); a token is allowed where
 * both allow it, a state is final where both are, and the weights are
 * the second factor's alone (llr_fsa_meet: gen's mask over a model
 * whose distribution holds the first's already) or the product of both
 * (llr_fsa_meet_weighted: score's background in place of the model's
 * own).  One factor may be a grammar (gbnffsa.c), so the pairs are
 * made when reached, never all at once, and each is kept only when some
 * sentence of both continues it: the emptiness of the grammar's
 * language from its state against the automaton's from its own,
 * decided by gbnflive.c (computed once per intersection, its tables
 * shared by every pair; past its budget of work, a pair not decided is
 * kept, and told once to the sink of a factor that has one).  Over two
 * automata the pairs are all made at
 * once and the intersection trimmed to the pairs from which a final
 * pair is reachable (trim).  Two grammars are refused: whether two
 * context-free languages share a sentence is undecidable, so no
 * procedure could trim their intersection.
 *
 * A pair's allowed set is laid out as fsa.c lays out a state's: the
 * tokens either factor lists, each to its pair (or to -1 where one of
 * them rejects it), and a default arc, the pair of the two defaults,
 * when both factors have one.  The fewest tokens from a pair to a final
 * one come from a breadth-first search over pairs, pruned by the
 * factors' own distances (exact for an automaton, none taken for a
 * grammar); its answers are remembered per pair: an upper bound from a
 * path found (every pair on that path gets one, so a generator that
 * follows only tokens with a path always has one), a lower bound from a
 * search that found none.  Over two automata the pairs are finitely
 * many and the search is exact; with a grammar it stops after
 * MEET_BUDGET pairs, and what it did not find is taken as absent.
 *
 * Threads: every query holds the meet's mutex (the table of pairs grows
 * as they are reached); the arc arrays a query returns are each pair's
 * own, allocated once, freed with the meet.  Not here: the factors
 * (fsa.c, gbnffsa.c), the generator that follows it (lib/family/gen.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "fsa.h"
#include "fsa/gbnf.h"

enum { MEET_BUDGET = 1 << 14 };
enum { NO_PAIR = -1, NO_MEMORY = -2 }; /* pair_of's and step's failures */

static const fsa_kind meet_kind; /* the operations, at the end */

typedef struct meet_pair {
	int32_t qa, qb;
	int32_t lb, ub; /* lb <= tokens to a final pair <= ub (INT32_MAX: none known) */
	int done;       /* the allowed set below is made */
	int32_t def, n;
	float deflogw;
	int32_t *lab, *dst;
	float *logw;
	uint32_t mark; /* the search that last met it */
	int32_t par, lev;
	int dead;  /* trimmed: no final pair is reachable from it */
	int alive; /* with a grammar: some sentence of both continues it (1), not (0), not known (-1) */
} meet_pair;

struct fsa_meet {
	const llr_fsa *a, *b;
	int weigh_a; /* the weights are a's and b's, summed (else b's alone) */
	int exact; /* neither factor is a grammar: the search has no budget */
	int trimmed; /* every pair is made, and the dead ones are cut off */
	int cut;   /* the last search left pairs unexpanded */
	meet_pair *p;
	int32_t n, cap;
	int32_t *slot; /* hcap: open addressing from (qa, qb) to the pair, -1 empty */
	size_t hcap;
	int32_t *queue; /* cap: the search's */
	uint32_t stamp;
	llr_gbnf_live *live; /* with a grammar: its liveness against the other */
	llr_notice notice;   /* a factor's sink (llr_fsa_on_notice) */
	int told;            /* live's budget run past: told */
	pthread_mutex_t mu;
};

void fsa_meet_free(fsa_meet *m)
{
	if (!m)
		return;
	for (int32_t i = 0; i < m->n; i++) {
		free(m->p[i].lab);
		free(m->p[i].dst);
		free(m->p[i].logw);
	}
	free(m->p);
	free(m->slot);
	free(m->queue);
	llr_gbnf_live_free(m->live);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

static size_t hash_pair(int32_t qa, int32_t qb, size_t hcap)
{
	uint64_t h = ((uint64_t)(uint32_t)qa << 32 | (uint32_t)qb) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 17) & (hcap - 1);
}

/* A factor's fewest tokens from q to a final state, as a lower bound:
 * an automaton's own (trimmed: always finite), 0 for a grammar (its
 * distances are a search of their own, not worth one per pair). */
static int32_t factor_lb(const llr_fsa *f, int32_t q)
{
	return f->gram ? 0 : llr_fsa_dist(f, q);
}

/* Room for one more pair, the table of pairs rehashed when it is half
 * full.  LLR_ENOMEM. */
static int grow(fsa_meet *m)
{
	if (m->n == m->cap) {
		int32_t cap = m->cap ? 2 * m->cap : 64;
		meet_pair *p = llr_reallocarray(m->p, (size_t)cap, sizeof *p);
		if (p)
			m->p = p;
		int32_t *q = llr_reallocarray(m->queue, (size_t)cap, sizeof *q);
		if (q)
			m->queue = q;
		if (!p || !q)
			return LLR_ENOMEM;
		m->cap = cap;
	}
	if (2 * ((size_t)m->n + 1) <= m->hcap)
		return LLR_OK;
	size_t hcap = m->hcap ? 2 * m->hcap : 128;
	int32_t *slot = llr_malloc(hcap * sizeof *slot);
	if (!slot)
		return LLR_ENOMEM;
	for (size_t i = 0; i < hcap; i++)
		slot[i] = -1;
	for (int32_t i = 0; i < m->n; i++) {
		size_t h = hash_pair(m->p[i].qa, m->p[i].qb, hcap);
		while (slot[h] >= 0)
			h = (h + 1) & (hcap - 1);
		slot[h] = i;
	}
	free(m->slot);
	m->slot = slot;
	m->hcap = hcap;
	return LLR_OK;
}

/* The pair (qa, qb), made if new: its number, or NO_MEMORY. */
static int32_t pair_of(fsa_meet *m, int32_t qa, int32_t qb)
{
	if (grow(m) < 0)
		return NO_MEMORY;
	size_t h = hash_pair(qa, qb, m->hcap);
	for (; m->slot[h] >= 0; h = (h + 1) & (m->hcap - 1))
		if (m->p[m->slot[h]].qa == qa && m->p[m->slot[h]].qb == qb)
			return m->slot[h];
	int32_t id = m->n++;
	m->slot[h] = id;
	m->p[id] = (meet_pair){.qa = qa, .qb = qb, .lb = LLR_MAX(factor_lb(m->a, qa), factor_lb(m->b, qb)), .ub = INT32_MAX, .def = -1, .alive = -1};
	return id;
}

/* Does some sentence of both continue pair q?  Over two automata, yes
 * until trim has cut it off; with a grammar, as gbnflive.c decides.  1,
 * 0, or its error. */
static int pair_alive(fsa_meet *m, int32_t q, llr_err *err)
{
	if (m->exact)
		return !m->trimmed || !m->p[q].dead;
	if (m->p[q].alive < 0) {
		int rc = m->a->gram ? fsa_gram_live(m->a, m->p[q].qa, m->live, m->p[q].qb, err)
		                    : fsa_gram_live(m->b, m->p[q].qb, m->live, m->p[q].qa, err);
		llr_gbnf_live_tell(m->live, &m->notice, &m->told, fsa_gram_name(m->a->gram ? m->a : m->b),
		                   "the grammar's intersection with the model's automaton", "both");
		if (rc < 0)
			return rc;
		m->p[q].alive = rc;
	}
	return m->p[q].alive;
}

/* The pair after token x in pair q, NO_PAIR when a factor rejects x or
 * no sentence of both continues it, NO_MEMORY on an error (err set:
 * LLR_ENOMEM, or the liveness's); its ln weight (b's, or with weigh_a
 * a's and b's) into *logw (may be NULL). */
static int32_t step(fsa_meet *m, int32_t q, int32_t x, float *logw, llr_err *err)
{
	float wa = 0;
	int32_t ta = llr_fsa_next(m->a, m->p[q].qa, x, m->weigh_a ? &wa : NULL), tb = llr_fsa_next(m->b, m->p[q].qb, x, logw);
	if (ta < 0 || tb < 0)
		return NO_PAIR;
	if (logw)
		*logw += wa;
	int32_t to = pair_of(m, ta, tb);
	if (to < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory"), NO_MEMORY;
	int live = pair_alive(m, to, err);
	return live < 0 ? NO_MEMORY : live ? to : NO_PAIR;
}

/* Pair q's allowed set, made once (the factors' states made ready
 * first, whose errors it returns; LLR_ENOMEM). */
static int set_make(fsa_meet *m, int32_t q, llr_err *err)
{
	if (m->p[q].done)
		return LLR_OK;
	int32_t qa = m->p[q].qa, qb = m->p[q].qb;
	int rc = llr_fsa_ready(m->a, qa, err);
	if (rc < 0 || (rc = llr_fsa_ready(m->b, qb, err)) < 0)
		return rc;
	const int32_t *la, *lb, *da, *db;
	const float *wa, *wb;
	int32_t na = llr_fsa_arcs(m->a, qa, &la, &da, &wa), nb = llr_fsa_arcs(m->b, qb, &lb, &db, &wb);
	float dw = 0, dwa = 0;
	int32_t defa = llr_fsa_default(m->a, qa, m->weigh_a ? &dwa : NULL), defb = llr_fsa_default(m->b, qb, &dw);
	dw += dwa;
	int32_t cap = LLR_MAX(na + nb, 1), n = 0, def = -1;
	int32_t *lab = llr_malloc((size_t)cap * sizeof *lab), *dst = llr_malloc((size_t)cap * sizeof *dst);
	float *logw = llr_malloc((size_t)cap * sizeof *logw);
	rc = lab && dst && logw ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	/* every token either lists, in order; the rest take both defaults */
	for (int32_t i = 0, j = 0; rc >= 0 && (i < na || j < nb);) {
		int32_t x = j >= nb || (i < na && la[i] < lb[j]) ? la[i] : lb[j];
		i += i < na && la[i] == x;
		j += j < nb && lb[j] == x;
		float w = 0;
		int32_t to = step(m, q, x, &w, err);
		if (to == NO_MEMORY)
			rc = llr_err_code(err, LLR_ENOMEM);
		else if (to >= 0 || (defa >= 0 && defb >= 0)) {
			lab[n] = x;
			dst[n] = to >= 0 ? to : -1;
			logw[n++] = to >= 0 ? w : 0.0f;
		}
	}
	if (rc >= 0 && defa >= 0 && defb >= 0 && (def = pair_of(m, defa, defb)) < 0)
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	int live = rc >= 0 && def >= 0 ? pair_alive(m, def, err) : 1;
	if (live < 0)
		rc = live;
	else if (!live)
		def = -1; /* the tokens it took lead nowhere */
	if (rc < 0) {
		free(lab);
		free(dst);
		free(logw);
		return rc;
	}
	meet_pair *p = &m->p[q]; /* after pair_of, which may move the table */
	*p = (meet_pair){.qa = qa, .qb = qb, .lb = p->lb, .ub = p->ub, .done = 1, .def = def, .n = n, .deflogw = dw,
	                 .lab = lab, .dst = dst, .logw = logw, .mark = p->mark, .par = p->par, .lev = p->lev, .dead = p->dead, .alive = p->alive};
	return LLR_OK;
}

static int is_final(const fsa_meet *m, int32_t q)
{
	return llr_fsa_final(m->a, m->p[q].qa) > -INFINITY && llr_fsa_final(m->b, m->p[q].qb) > -INFINITY;
}

/* Does pair q's default arc take any token (one its arcs do not list)? */
static int default_used(const fsa_meet *m, int32_t q)
{
	const llr_fsa *a = m->a;
	return m->p[q].def >= 0 && m->p[q].n < a->V - (a->eos >= 0) - (a->bos >= 0);
}

/* Visit pair t from pair q in the search under way. */
static void visit(fsa_meet *m, int32_t t, int32_t q, int32_t *tail)
{
	if (t < 0 || m->p[t].mark == m->stamp)
		return;
	m->p[t].mark = m->stamp;
	m->p[t].par = q;
	m->p[t].lev = m->p[q].lev + 1;
	m->queue[(*tail)++] = t;
}

/* Breadth first from pair s: the fewest tokens to a final pair within
 * limit, the pairs on the path found given their upper bounds; or
 * limit + 1, s given its lower bound, and m->cut set when a pair was
 * left unexpanded (by limit or the budget: else no final pair is
 * reachable at all).  Errors of set_make. */
static int32_t search(fsa_meet *m, int32_t s, int32_t limit, llr_err *err)
{
	m->cut = 0;
	if (++m->stamp == 0) { /* the marks wrapped: forget them */
		for (int32_t i = 0; i < m->n; i++)
			m->p[i].mark = 0;
		m->stamp = 1;
	}
	int32_t head = 0, tail = 0, expanded = 0;
	m->p[s].mark = m->stamp;
	m->p[s].lev = 0;
	m->p[s].par = -1;
	m->queue[tail++] = s;
	while (head < tail) {
		int32_t q = m->queue[head++], lev = m->p[q].lev;
		if (is_final(m, q)) {
			for (int32_t r = q; r >= 0; r = m->p[r].par)
				m->p[r].ub = LLR_MIN(m->p[r].ub, lev - m->p[r].lev);
			return lev;
		}
		if (lev >= limit || (int64_t)lev + m->p[q].lb > limit || (!m->exact && ++expanded > MEET_BUDGET)) {
			m->cut = 1;
			continue;
		}
		int rc = set_make(m, q, err);
		if (rc < 0)
			return rc;
		/* set_make may have made pairs: the queue has room for all */
		for (int32_t k = 0; k < m->p[q].n; k++)
			visit(m, m->p[q].dst[k], q, &tail);
		if (default_used(m, q))
			visit(m, m->p[q].def, q, &tail);
	}
	m->p[s].lb = LLR_MAX(m->p[s].lb, limit + 1);
	return limit + 1;
}

/* Two automata (m->exact): every pair reachable from the start made,
 * and those from which no final pair is reachable cut off (their arcs
 * to -1, a default arc to one dropped, step rejecting the token), so
 * that every token the intersection allows continues a sentence of both
 * and a distribution renormalised over them sums to 1 over its
 * sentences, as over a trimmed automaton's (fsa.c).  The liveness is
 * found backwards from the final pairs over a predecessor table.
 * LLR_ENOMEM. */
static int trim(fsa_meet *m, llr_err *err)
{
	int rc = LLR_OK;
	for (int32_t q = 0; rc >= 0 && q < m->n; q++) /* set_make appends the pairs it reaches */
		rc = set_make(m, q, err);
	if (rc < 0)
		return rc;
	int32_t n = m->n;
	size_t E = 0;
	for (int32_t q = 0; q < n; q++)
		E += (size_t)m->p[q].n + (m->p[q].def >= 0);
	int32_t *off = llr_calloc((size_t)n + 1, sizeof *off), *pred = llr_malloc(LLR_MAX(E, (size_t)1) * sizeof *pred);
	int32_t *stack = llr_malloc((size_t)n * sizeof *stack);
	if (!off || !pred || !stack) {
		free(off);
		free(pred);
		free(stack);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	/* the predecessors of each pair, counted then placed */
	for (int32_t q = 0; q < n; q++) {
		for (int32_t k = 0; k < m->p[q].n; k++)
			if (m->p[q].dst[k] >= 0)
				off[m->p[q].dst[k] + 1]++;
		if (m->p[q].def >= 0)
			off[m->p[q].def + 1]++;
	}
	for (int32_t q = 0; q < n; q++)
		off[q + 1] += off[q];
	for (int32_t q = 0; q < n; q++) {
		for (int32_t k = 0; k < m->p[q].n; k++)
			if (m->p[q].dst[k] >= 0)
				pred[off[m->p[q].dst[k]]++] = q;
		if (m->p[q].def >= 0)
			pred[off[m->p[q].def]++] = q;
	}
	for (int32_t q = n; q > 0; q--) /* back to the starts */
		off[q] = off[q - 1];
	off[0] = 0;
	int32_t top = 0;
	for (int32_t q = 0; q < n; q++) {
		m->p[q].dead = !is_final(m, q);
		if (!m->p[q].dead)
			stack[top++] = q;
	}
	while (top > 0) {
		int32_t t = stack[--top];
		for (int32_t i = off[t]; i < off[t + 1]; i++)
			if (m->p[pred[i]].dead) {
				m->p[pred[i]].dead = 0;
				stack[top++] = pred[i];
			}
	}
	for (int32_t q = 0; q < n; q++) {
		meet_pair *p = &m->p[q];
		for (int32_t k = 0; k < p->n; k++)
			if (p->dst[k] >= 0 && m->p[p->dst[k]].dead)
				p->dst[k] = -1;
		if (p->def >= 0 && m->p[p->def].dead)
			p->def = -1;
	}
	m->trimmed = 1;
	free(off);
	free(pred);
	free(stack);
	return LLR_OK;
}

static llr_fsa *meet_new(const llr_fsa *a, const llr_fsa *b, int weigh_a, llr_err *err)
{
	LLR_ASSERT(!a->meet && !b->meet);
	if (a->V != b->V || a->eos != b->eos) {
		llr_err_set(err, LLR_EINVAL, "the two automata are over different vocabularies (%d and %d tokens)", a->V, b->V);
		return NULL;
	}
	if (a->gram && b->gram) {
		llr_err_set(err, LLR_EINVAL, "two grammars: whether two context-free grammars share a sentence is undecidable, "
		            "so their intersection cannot be trimmed (give one of them as an automaton or a regular expression)");
		return NULL;
	}
	llr_fsa *d = llr_calloc(1, sizeof *d);
	fsa_meet *m = llr_calloc(1, sizeof *m);
	if (!d || !m) {
		free(d);
		free(m);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&m->mu, NULL);
	m->a = a;
	m->b = b;
	m->weigh_a = weigh_a;
	m->exact = !a->gram && !b->gram;
	m->notice = a->notice.fn ? a->notice : b->notice;
	d->meet = m;
	d->kind = &meet_kind;
	d->V = a->V;
	d->eos = a->eos;
	d->bos = a->bos;
	d->start = pair_of(m, llr_fsa_start(a), llr_fsa_start(b));
	int live = d->start < 0 ? llr_err_set(err, LLR_ENOMEM, "out of memory") : 1;
	if (live > 0 && !m->exact)
		live = (m->live = a->gram ? fsa_gram_live_new(a, b, err) : fsa_gram_live_new(b, a, err)) ? pair_alive(m, d->start, err)
		                                                                                          : llr_err_code(err, LLR_ENOMEM);
	int32_t n = live < 0 ? live : !live ? FSA_GRAM_DIST_MAX + 1 : search(m, d->start, FSA_GRAM_DIST_MAX, err);
	if (!live)
		llr_err_set(err, LLR_EFORMAT, "no sentence is accepted by both: their intersection is empty");
	else if (n > FSA_GRAM_DIST_MAX && !m->cut)
		llr_err_set(err, LLR_EFORMAT, "no sentence is accepted by both: their intersection is empty");
	else if (n > FSA_GRAM_DIST_MAX)
		llr_err_set(err, LLR_EFORMAT, "no sentence of both was found (a search of %d states of their intersection, "
		            "sentences of up to %d tokens): it is empty or out of reach", MEET_BUDGET, FSA_GRAM_DIST_MAX);
	else if (n >= 0 && (!m->exact || trim(m, err) >= 0))
		return d;
	llr_fsa_free(d);
	return NULL;
}

llr_fsa *llr_fsa_meet(const llr_fsa *a, const llr_fsa *b, llr_err *err)
{
	return meet_new(a, b, 0, err);
}

llr_fsa *llr_fsa_meet_weighted(const llr_fsa *a, const llr_fsa *b, llr_err *err)
{
	return meet_new(a, b, 1, err);
}

const llr_fsa *llr_fsa_meet_support(const llr_fsa *d)
{
	return d->meet ? d->meet->a : NULL;
}

/* ------------------------------------------ fsa.h's kind operations */

static pthread_mutex_t *meet_mutex(const llr_fsa *d)
{
	return &d->meet->mu;
}

static int meet_make(const llr_fsa *d, int32_t q, llr_err *err)
{
	LLR_ASSERT(q >= 0 && q < d->meet->n);
	return set_make(d->meet, q, err);
}

static void meet_get(const llr_fsa *d, int32_t q, fsa_set *out)
{
	const meet_pair *p = &d->meet->p[q];
	*out = (fsa_set){.def = p->def, .n = p->n, .lab = p->lab, .dst = p->dst, .logw = p->logw, .deflogw = p->deflogw};
}

static int32_t meet_states(const llr_fsa *d)
{
	pthread_mutex_lock(&d->meet->mu);
	int32_t n = d->meet->n;
	pthread_mutex_unlock(&d->meet->mu);
	return n;
}

static int32_t meet_next(const llr_fsa *d, int32_t q, int32_t x, float *logw)
{
	fsa_meet *m = d->meet;
	pthread_mutex_lock(&m->mu);
	LLR_ASSERT(q >= 0 && q < m->n);
	llr_err e = {0};
	int32_t to = step(m, q, x, logw, &e);
	pthread_mutex_unlock(&m->mu);
	return to < 0 ? -1 : to;
}

static float meet_final(const llr_fsa *d, int32_t q)
{
	fsa_meet *m = d->meet;
	pthread_mutex_lock(&m->mu);
	LLR_ASSERT(q >= 0 && q < m->n);
	float w = !is_final(m, q) ? -INFINITY
	          : llr_fsa_final(m->b, m->p[q].qb) + (m->weigh_a ? llr_fsa_final(m->a, m->p[q].qa) : 0.0f);
	pthread_mutex_unlock(&m->mu);
	return w;
}

static int32_t meet_dist_within(const llr_fsa *d, int32_t q, int32_t limit, llr_err *err)
{
	fsa_meet *m = d->meet;
	pthread_mutex_lock(&m->mu);
	LLR_ASSERT(q >= 0 && q < m->n);
	const meet_pair *p = &m->p[q];
	int32_t n = p->ub <= limit ? p->ub : p->lb > limit ? limit + 1 : search(m, q, limit, err);
	pthread_mutex_unlock(&m->mu);
	return n;
}

static const fsa_kind meet_kind = {meet_mutex, meet_make, meet_get, meet_states, meet_next, meet_final, meet_dist_within};
