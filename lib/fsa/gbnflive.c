/*
 * gbnflive.c - which states of a GBNF grammar's token recogniser
 * (gbnfrec.c) some sentence continues (issue 51): the emptiness of a
 * context-free language intersected with a regular one, the Bar-Hillel
 * construction computed on demand.  The regular language is that of an
 * automaton over tokens (a trimmed llr_fsa of fsa.c; NULL: every
 * sequence of the vocabulary's tokens), its sentences written as the
 * grammar reads them, the tokens joined by single spaces.
 *
 * The characters are first merged into atoms, the classes of
 * characters that no character class of the grammar tells apart (' '
 * among them, as any other).  The automaton becomes a nondeterministic
 * one over atoms: for each of its states q, a state A(q) after a token
 * (final when q is, ' ' leads to B(q)), and a trie of the atoms of the
 * tokens q allows, rooted at B(q), whose node ending token x is final
 * when q's successor after x is and goes on ' ' to that successor's B;
 * a state Z, B of the start that is final when the start is, is where
 * the first token begins.  It is then made deterministic and minimal
 * (reduce): a vocabulary's trie has many states that the grammar, which
 * sees only atoms, cannot tell apart.  Then for a position p of the grammar (the
 * rest of an alternative, what a stack entry of the recogniser holds)
 * and a state s, Sum(p, s) is the set of states t such that the rest
 * of the alternative from p derives a string leading from s to t: the
 * least solution of Sum(end, s) = {s}, Sum(class k, s) = Sum(p + 1, the
 * atoms of k from s), Sum(rule r, s) = Sum(p + 1, the union of Sum(its
 * alternatives, s)), found by tabulation (summaries of the (p, s) asked
 * for, as interprocedural analyses do: a worklist of path edges).  A
 * stack of the recogniser (its top, the next class, matched first) is
 * live from s when composing the Sum of its entries, top to bottom,
 * reaches a final state; a state of the recogniser when one of its
 * stacks is, from A(q) after a token, from Z before the first.
 *
 * The tables grow across queries, so that each (p, s) is solved once
 * for the automaton's lifetime; not thread-safe (the callers hold their
 * locks).  The relation of a rule is quadratic in the states: a rule
 * such as [a-z]+ against a large vocabulary's automaton relates most
 * pairs of its states.  So the work is budgeted: LIVE_STATES states of
 * the automaton over atoms, LIVE_WORK steps (characters read, path
 * edges, states united; the environment's LLRNN_GRAMMAR_BUDGET in its
 * place, so that the tests reach it on small grammars); past either,
 * every state not yet decided is taken as live (over): the answers
 * given stay exact, the others allow what the recogniser allows, as an
 * untrimmed grammar does.  The callers tell the user (llr_notice).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fsa.h"
#include "fsa/gbnf.h"

enum { LIVE_STATES = 1 << 20, LIVE_WORK = 1 << 22 };

/* A summary asked for: Sum(p, s) so far, and the path edges waiting on
 * it, as (entry, position) pairs. */
typedef struct entry {
	int32_t p, s;
	gbnf_ivec sum, call;
} entry;

struct llr_gbnf_live {
	const llr_gbnf *g;
	int32_t natom;
	uint8_t *has; /* ncls x natom: does class k hold atom a */
	/* the automaton over atoms: N states, state i's arcs (atom, dst)
	 * at off[i] .. off[i + 1] */
	int32_t N, nq, zero; /* Z = zero, A(q) = aq[q] */
	int32_t *aq;
	int32_t *off, *atom, *dst;
	uint8_t *fin;
	/* the tabulation */
	llr_strmap *entries, *edges, *sums;
	entry *e;
	size_t ne, ecap;
	gbnf_ivec work; /* path edges to process: (entry, p, s) */
	int32_t *cur, *next;
	uint32_t *mark, stamp;
	size_t spent, budget; /* steps of the budget, and the budget */
	int over; /* past the budget: every state not decided is live */
};

void llr_gbnf_live_free(llr_gbnf_live *L)
{
	if (!L)
		return;
	for (size_t i = 0; i < L->ne; i++) {
		free(L->e[i].sum.v);
		free(L->e[i].call.v);
	}
	free(L->e);
	free(L->has);
	free(L->off);
	free(L->atom);
	free(L->dst);
	free(L->fin);
	free(L->aq);
	llr_strmap_free(L->entries);
	llr_strmap_free(L->edges);
	llr_strmap_free(L->sums);
	free(L->work.v);
	free(L->cur);
	free(L->next);
	free(L->mark);
	free(L);
}

/* Is w[0..n) the special token s? */
static int is_special(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && !memcmp(w, s, n);
}

int gbnf_token_text(const char *w, size_t n)
{
	if (!n || is_special(w, n, LLR_EOS) || is_special(w, n, LLR_BOS) || is_special(w, n, LLR_UNK))
		return 0;
	for (size_t i = 0; i < n;) {
		int32_t c;
		int k = llr_utf8_decode(w + i, n - i, &c);
		if (k <= 0 || !c)
			return 0;
		i += (size_t)k;
	}
	return 1;
}

/* ------------------------------------------- the automaton over atoms */

/* What the construction keeps: the arcs (from, atom, to) as made, the
 * atoms of each character met, the trie's children and ends. */
typedef struct build {
	llr_gbnf_live *L;
	gbnf_ivec arcs, fin;
	llr_strmap *sig, *cps, *kids, *ends;
	gbnf_ivec cpatom, kid; /* cps's atom; kids' child state */
	char *sigbuf;
} build;

/* The atom of code point c: its id, made when new; LLR_ENOMEM. */
static int32_t atom_of(build *b, int32_t c)
{
	const llr_gbnf *g = b->L->g;
	size_t before = llr_strmap_size(b->cps);
	int32_t i = llr_strmap_add(b->cps, (const char *)&c, sizeof c);
	if (i < 0)
		return LLR_ENOMEM;
	if ((size_t)i < before)
		return b->cpatom.v[i];
	for (int32_t k = 0; k < g->ncls; k++)
		b->sigbuf[k] = (char)('0' + llr_gbnf_class_has(g, k, c));
	size_t na = llr_strmap_size(b->sig);
	int32_t a = llr_strmap_add(b->sig, b->sigbuf, (size_t)g->ncls);
	if (a < 0 || gbnf_push(&b->cpatom, a) < 0)
		return LLR_ENOMEM;
	if ((size_t)a == na)
		b->L->natom = a + 1;
	return a;
}

static int32_t new_state(build *b, int final)
{
	if (b->L->N >= LIVE_STATES)
		return LLR_ERANGE;
	return gbnf_push(&b->fin, final) < 0 ? LLR_ENOMEM : b->L->N++;
}

static int push3(gbnf_ivec *v, int32_t x, int32_t y, int32_t z)
{
	return gbnf_push(v, x) < 0 || gbnf_push(v, y) < 0 || gbnf_push(v, z) < 0 ? LLR_ENOMEM : LLR_OK;
}

static int arc(build *b, int32_t from, int32_t a, int32_t to)
{
	return push3(&b->arcs, from, a, to);
}

/* Key (x, y) of the construction's maps: its id, *made 1 when new. */
static int32_t key2(llr_strmap *m, int32_t x, int32_t y, int *made)
{
	int32_t k[2] = {x, y};
	size_t before = llr_strmap_size(m);
	int32_t id = llr_strmap_add(m, (const char *)k, sizeof k);
	*made = id >= 0 && (size_t)id == before;
	return id;
}

/* Token w (n bytes) from B(q) = root, leading to the automaton's state
 * to (final: is it final): its atoms down the trie, its end node final
 * then and on ' ' to B(to). */
static int add_token(build *b, int32_t root, const char *w, size_t n, int32_t to, int final, int32_t space, int32_t broot)
{
	int32_t at = root, made;
	if ((b->L->spent += n) > b->L->budget)
		return LLR_ERANGE;
	for (size_t i = 0; i < n;) {
		int32_t c;
		i += (size_t)llr_utf8_decode(w + i, n - i, &c);
		int32_t a = atom_of(b, c);
		if (a < 0)
			return a;
		int32_t k = key2(b->kids, at, a, &made);
		if (k < 0)
			return LLR_ENOMEM;
		if (made) {
			int32_t s = new_state(b, 0);
			if (s < 0 || gbnf_push(&b->kid, s) < 0 || arc(b, at, a, s) < 0)
				return s < 0 ? s : LLR_ENOMEM;
		}
		at = b->kid.v[k];
	}
	if (final)
		b->fin.v[at] = 1;
	int32_t k = key2(b->ends, at, to, &made);
	return k < 0 ? LLR_ENOMEM : made ? arc(b, at, space, broot + to) : LLR_OK;
}

/* Arcs (from, atom, to) or pairs (atom, to) in order. */
static int arc_cmp(const void *pa, const void *pb)
{
	const int32_t *a = pa, *b = pb;
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return (a[i] > b[i]) - (a[i] < b[i]);
	return 0;
}

static int pair_cmp(const void *pa, const void *pb)
{
	const int32_t *a = pa, *b = pb;
	return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* The arcs (from, atom, to) and finality fin of N states into L's
 * tables, sorted. */
static int set_arcs(llr_gbnf_live *L, gbnf_ivec *arcs, const int32_t *fin, int32_t N)
{
	size_t E = arcs->n / 3;
	qsort(arcs->v, E, 3 * sizeof *arcs->v, arc_cmp);
	free(L->off);
	free(L->atom);
	free(L->dst);
	free(L->fin);
	L->N = N;
	if (!(L->off = llr_calloc((size_t)N + 1, sizeof *L->off)) || !(L->atom = llr_malloc((E + 1) * sizeof *L->atom)) ||
	    !(L->dst = llr_malloc((E + 1) * sizeof *L->dst)) || !(L->fin = llr_malloc((size_t)N + 1)))
		return LLR_ENOMEM;
	for (size_t i = 0; i < E; i++) {
		L->off[arcs->v[3 * i] + 1]++;
		L->atom[i] = arcs->v[3 * i + 1];
		L->dst[i] = arcs->v[3 * i + 2];
	}
	for (int32_t s = 0; s < N; s++) {
		L->off[s + 1] += L->off[s];
		L->fin[s] = (uint8_t)fin[s];
	}
	return LLR_OK;
}

/* The set of states v[0..n) (sorted, each once) as a state of the
 * deterministic automaton, made when new (its members appended to mem,
 * from moff[id]); its id. */
static int32_t subset(llr_strmap *sets, const int32_t *v, size_t n, gbnf_ivec *mem, gbnf_ivec *moff)
{
	size_t before = llr_strmap_size(sets);
	int32_t id = llr_strmap_add(sets, (const char *)v, n * sizeof *v);
	if (id < 0 || (size_t)id < before)
		return id < 0 ? LLR_ENOMEM : id;
	if (id >= LIVE_STATES)
		return LLR_ERANGE;
	for (size_t i = 0; i < n; i++)
		if (gbnf_push(mem, v[i]) < 0)
			return LLR_ENOMEM;
	return gbnf_push(moff, (int32_t)mem->n) < 0 ? LLR_ENOMEM : id;
}

/* L made deterministic by subset construction from each A(q) and Z
 * alone; LLR_ENOMEM, LLR_ERANGE. */
static int determinise(llr_gbnf_live *L)
{
	llr_strmap *sets = llr_strmap_new();
	gbnf_ivec mem = {0}, moff = {0}, arcs = {0}, fin = {0}, pairs = {0}, set = {0};
	int rc = sets && gbnf_push(&moff, 0) >= 0 ? LLR_OK : LLR_ENOMEM;
	for (int32_t q = 0; rc >= 0 && q <= L->nq; q++) { /* the A(q), then Z */
		int32_t s = q < L->nq ? L->aq[q] : L->zero, d = subset(sets, &s, 1, &mem, &moff);
		rc = d < 0 ? d : LLR_OK;
		*(q < L->nq ? &L->aq[q] : &L->zero) = d;
	}
	for (int32_t d = 0; rc >= 0 && d < (int32_t)llr_strmap_size(sets); d++) {
		int f = 0;
		pairs.n = 0;
		for (int32_t i = moff.v[d]; rc >= 0 && i < moff.v[d + 1]; i++) {
			int32_t s = mem.v[i];
			f |= L->fin[s];
			for (int32_t k = L->off[s]; rc >= 0 && k < L->off[s + 1]; k++)
				if (gbnf_push(&pairs, L->atom[k]) < 0 || gbnf_push(&pairs, L->dst[k]) < 0)
					rc = LLR_ENOMEM;
		}
		if (rc < 0 || (rc = gbnf_push(&fin, f)) < 0)
			break;
		qsort(pairs.v, pairs.n / 2, 2 * sizeof *pairs.v, pair_cmp);
		for (size_t i = 0, j; rc >= 0 && i < pairs.n; i = j) {
			set.n = 0;
			for (j = i; rc >= 0 && j < pairs.n && pairs.v[j] == pairs.v[i]; j += 2)
				if (!set.n || set.v[set.n - 1] != pairs.v[j + 1])
					rc = gbnf_push(&set, pairs.v[j + 1]);
			int32_t to = rc < 0 ? rc : subset(sets, set.v, set.n, &mem, &moff);
			if ((rc = to) >= 0)
				rc = push3(&arcs, d, pairs.v[i], to);
		}
	}
	if (rc >= 0)
		rc = set_arcs(L, &arcs, fin.v, (int32_t)llr_strmap_size(sets));
	llr_strmap_free(sets);
	free(mem.v);
	free(moff.v);
	free(arcs.v);
	free(fin.v);
	free(pairs.v);
	free(set.v);
	return rc;
}

/* The deterministic L made minimal by Moore's refinement: the states
 * split by finality, then again and again by the classes their atoms
 * lead to, until no class splits; each class then one state. */
static int minimise(llr_gbnf_live *L)
{
	int32_t N = L->N, K = 0, *cls = llr_malloc((size_t)N * sizeof *cls), *rep = llr_malloc((size_t)N * sizeof *rep);
	gbnf_ivec sig = {0}, arcs = {0}, fin = {0};
	int rc = cls && rep ? LLR_OK : LLR_ENOMEM;
	for (int32_t s = 0; rc >= 0 && s < N; s++)
		cls[s] = L->fin[s];
	for (int32_t before = -1; rc >= 0 && K != before;) {
		before = K;
		llr_strmap *m = llr_strmap_new();
		rc = m ? LLR_OK : LLR_ENOMEM;
		int32_t *next = rep; /* the new classes, then copied */
		for (int32_t s = 0; rc >= 0 && s < N; s++) {
			sig.n = 0;
			rc = gbnf_push(&sig, cls[s]);
			for (int32_t k = L->off[s]; rc >= 0 && k < L->off[s + 1]; k++)
				if (gbnf_push(&sig, L->atom[k]) < 0 || gbnf_push(&sig, cls[L->dst[k]]) < 0)
					rc = LLR_ENOMEM;
			if (rc >= 0 && (next[s] = llr_strmap_add(m, (const char *)sig.v, sig.n * sizeof *sig.v)) < 0)
				rc = LLR_ENOMEM;
		}
		if (rc >= 0) {
			K = (int32_t)llr_strmap_size(m);
			memcpy(cls, next, (size_t)N * sizeof *cls);
		}
		llr_strmap_free(m);
	}
	/* each class from its first state */
	for (int32_t c = 0; rc >= 0 && c < K; c++)
		rep[c] = -1;
	for (int32_t s = 0; rc >= 0 && s < N; s++)
		if (rep[cls[s]] < 0) {
			rep[cls[s]] = s;
			for (int32_t k = L->off[s]; rc >= 0 && k < L->off[s + 1]; k++)
				rc = push3(&arcs, cls[s], L->atom[k], cls[L->dst[k]]);
		}
	for (int32_t c = 0; rc >= 0 && c < K; c++)
		rc = gbnf_push(&fin, L->fin[rep[c]]);
	if (rc >= 0) {
		for (int32_t q = 0; q < L->nq; q++)
			L->aq[q] = cls[L->aq[q]];
		L->zero = cls[L->zero];
		rc = set_arcs(L, &arcs, fin.v, K);
	}
	free(cls);
	free(rep);
	free(sig.v);
	free(arcs.v);
	free(fin.v);
	return rc;
}


/* The automaton over atoms of f (NULL: every token, one state) over the
 * tokens of vocab. */
static int automaton(build *b, const llr_strmap *vocab, const llr_fsa *f)
{
	llr_gbnf_live *L = b->L;
	int32_t nq = f ? llr_fsa_states(f) : 1, q0 = f ? llr_fsa_start(f) : 0, V = (int32_t)llr_strmap_size(vocab), rc = LLR_OK;
	int32_t space = atom_of(b, ' ');
	if (space < 0)
		return space;
	L->nq = nq;
	if (!(L->aq = llr_malloc((size_t)nq * sizeof *L->aq)))
		return LLR_ENOMEM;
	for (int32_t q = 0; rc >= 0 && q < nq; q++) /* A(q) */
		rc = L->aq[q] = new_state(b, !f || llr_fsa_final(f, q) > -INFINITY);
	if (rc >= 0)
		rc = L->zero = new_state(b, !f || llr_fsa_final(f, q0) > -INFINITY);
	int32_t broot = L->zero + 1;
	for (int32_t q = 0; rc >= 0 && q < nq; q++) /* B(q) */
		if ((rc = new_state(b, 0)) >= 0)
			rc = arc(b, q, space, broot + q);
	for (int32_t q = 0; rc >= 0 && q < nq; q++)
		for (int32_t x = 0; rc >= 0 && x < V; x++) {
			const char *w = llr_strmap_str(vocab, x);
			size_t n = llr_strmap_len(vocab, x);
			int32_t to = !gbnf_token_text(w, n) ? -1 : f ? llr_fsa_next(f, q, x, NULL) : 0;
			if (to >= 0)
				rc = add_token(b, broot + q, w, n, to, !f || llr_fsa_final(f, to) > -INFINITY, space, broot);
		}
	/* Z: B of the start, final when the start is */
	size_t na = b->arcs.n;
	for (size_t i = 0; rc >= 0 && i < na; i += 3)
		if (b->arcs.v[i] == broot + q0)
			rc = arc(b, L->zero, b->arcs.v[i + 1], b->arcs.v[i + 2]);
	if (rc < 0 || (rc = set_arcs(L, &b->arcs, b->fin.v, L->N)) < 0 || (rc = determinise(L)) < 0 || (rc = minimise(L)) < 0)
		return rc;
	if (!(L->has = llr_malloc((size_t)LLR_MAX(L->g->ncls, 1) * (size_t)L->natom)))
		return LLR_ENOMEM;
	/* the classes' atoms */
	for (int32_t i = 0; i < L->natom; i++) {
		const char *sig = llr_strmap_str(b->sig, i);
		for (int32_t k = 0; k < L->g->ncls; k++)
			L->has[(size_t)k * (size_t)L->natom + (size_t)i] = sig[k] == '1';
	}
	return LLR_OK;
}

/* The budget of steps: LIVE_WORK, or LLRNN_GRAMMAR_BUDGET's when set
 * (LLR_EINVAL when it is not a number of steps). */
static int budget(size_t *out, llr_err *err)
{
	const char *k = getenv("LLRNN_GRAMMAR_BUDGET");
	*out = LIVE_WORK;
	if (!k || !*k)
		return LLR_OK;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(k, &end, 10);
	if (*end || errno || v == 0 || *k < '0' || *k > '9' || v > SIZE_MAX / 2)
		return llr_err_set(err, LLR_EINVAL, "LLRNN_GRAMMAR_BUDGET: '%s' is not a number of steps (1 or more)", k);
	*out = (size_t)v;
	return LLR_OK;
}

llr_gbnf_live *llr_gbnf_live_new(const llr_gbnf *g, const llr_strmap *vocab, const llr_fsa *f, llr_err *err)
{
	size_t work;
	if (budget(&work, err) < 0)
		return NULL;
	llr_gbnf_live *L = llr_calloc(1, sizeof *L);
	build b = {L, {0}, {0}, NULL, NULL, NULL, NULL, {0}, {0}, NULL};
	int rc = LLR_ENOMEM;
	if (L) {
		L->g = g;
		L->budget = work;
		if ((b.sig = llr_strmap_new()) && (b.cps = llr_strmap_new()) && (b.kids = llr_strmap_new()) &&
		    (b.ends = llr_strmap_new()) && (b.sigbuf = llr_malloc((size_t)LLR_MAX(g->ncls, 1))) &&
		    (L->entries = llr_strmap_new()) && (L->edges = llr_strmap_new()) && (L->sums = llr_strmap_new()))
			rc = automaton(&b, vocab, f);
		if (rc >= 0 && (!(L->cur = llr_malloc((size_t)L->N * sizeof *L->cur)) ||
		                !(L->next = llr_malloc((size_t)L->N * sizeof *L->next)) || !(L->mark = llr_calloc((size_t)L->N, sizeof *L->mark))))
			rc = LLR_ENOMEM;
	}
	free(b.arcs.v);
	free(b.fin.v);
	free(b.cpatom.v);
	free(b.kid.v);
	free(b.sigbuf);
	llr_strmap_free(b.sig);
	llr_strmap_free(b.cps);
	llr_strmap_free(b.kids);
	llr_strmap_free(b.ends);
	if (L && (rc >= 0 || (L->over = rc == LLR_ERANGE)))
		return L;
	llr_gbnf_live_free(L);
	llr_err_set(err, LLR_ENOMEM, "out of memory");
	return NULL;
}

/* -------------------------------------------------------- tabulation */

static int edge(llr_gbnf_live *L, int32_t E, int32_t p, int32_t s)
{
	int32_t k[3] = {E, p, s};
	size_t before = llr_strmap_size(L->edges);
	if (++L->spent > L->budget)
		return LLR_ERANGE;
	int32_t id = llr_strmap_add(L->edges, (const char *)k, sizeof k);
	if (id < 0)
		return LLR_ENOMEM;
	if ((size_t)id < before)
		return LLR_OK;
	return gbnf_push(&L->work, E) < 0 || gbnf_push(&L->work, p) < 0 || gbnf_push(&L->work, s) < 0 ? LLR_ENOMEM : LLR_OK;
}

/* The entry of Sum(p, s), asked for now if new: its id. */
static int32_t demand(llr_gbnf_live *L, int32_t p, int32_t s)
{
	int made;
	int32_t id = key2(L->entries, p, s, &made);
	if (id < 0 || !made)
		return id < 0 ? LLR_ENOMEM : id;
	if (L->ne == L->ecap) {
		size_t c = L->ecap ? 2 * L->ecap : 256;
		entry *e = llr_reallocarray(L->e, c, sizeof *e);
		if (!e)
			return LLR_ENOMEM;
		L->e = e;
		L->ecap = c;
	}
	L->e[L->ne++] = (entry){.p = p, .s = s};
	int rc = edge(L, id, p, s);
	return rc < 0 ? rc : id;
}

/* t joins Sum of entry E, and the path edges waiting on E go on from t. */
static int sum_add(llr_gbnf_live *L, int32_t E, int32_t t)
{
	int made;
	int32_t id = key2(L->sums, E, t, &made);
	if (id < 0 || (made && gbnf_push(&L->e[E].sum, t) < 0))
		return LLR_ENOMEM;
	int rc = LLR_OK;
	for (size_t i = 0; made && rc >= 0 && i < L->e[E].call.n; i += 2)
		rc = edge(L, L->e[E].call.v[i], L->e[E].call.v[i + 1], t);
	return rc;
}

/* Path edge (E, p, s): the rest of an alternative from E's position to
 * p leads from E's state to s. */
static int process(llr_gbnf_live *L, int32_t E, int32_t p, int32_t s)
{
	const llr_gbnf *g = L->g;
	int32_t el = g->el[p];
	int rc = LLR_OK;
	if (el == GBNF_END)
		return sum_add(L, E, s);
	if (!GBNF_IS_REF(el)) {
		const uint8_t *has = L->has + (size_t)GBNF_ARG(el) * (size_t)L->natom;
		for (int32_t i = L->off[s]; rc >= 0 && i < L->off[s + 1]; i++)
			if (has[L->atom[i]])
				rc = edge(L, E, p + 1, L->dst[i]);
		return rc;
	}
	int32_t r = GBNF_ARG(el);
	for (int32_t a = g->alt_off[r]; rc >= 0 && a < g->alt_off[r + 1]; a++) {
		int32_t C = demand(L, g->alt[a], s);
		if (C < 0 || gbnf_push(&L->e[C].call, E) < 0 || gbnf_push(&L->e[C].call, p + 1) < 0)
			return C < 0 ? C : LLR_ENOMEM;
		for (size_t i = 0; rc >= 0 && i < L->e[C].sum.n; i++)
			rc = edge(L, E, p + 1, L->e[C].sum.v[i]);
	}
	return rc;
}

static int run(llr_gbnf_live *L)
{
	int rc = LLR_OK;
	while (rc >= 0 && L->work.n) {
		L->work.n -= 3;
		int32_t *w = L->work.v + L->work.n;
		rc = process(L, w[0], w[1], w[2]);
	}
	return rc;
}

/* Is the stack s[0..len) (bottom to top) live from state c? */
static int stack_live(llr_gbnf_live *L, const int32_t *s, size_t len, int32_t c)
{
	int32_t n = 1;
	L->cur[0] = c;
	for (size_t i = len; i-- > 0 && n;) {
		int rc = LLR_OK;
		for (int32_t j = 0; rc >= 0 && j < n; j++)
			if ((rc = demand(L, s[i], L->cur[j])) >= 0)
				L->cur[j] = rc; /* now the entry */
		if (rc < 0 || (rc = run(L)) < 0)
			return rc;
		if (++L->stamp == 0) {
			memset(L->mark, 0, (size_t)L->N * sizeof *L->mark);
			L->stamp = 1;
		}
		int32_t m = 0;
		for (int32_t j = 0; j < n; j++) {
			const entry *e = &L->e[L->cur[j]];
			if ((L->spent += e->sum.n) > L->budget)
				return LLR_ERANGE;
			for (size_t k = 0; k < e->sum.n; k++)
				if (L->mark[e->sum.v[k]] != L->stamp) {
					L->mark[e->sum.v[k]] = L->stamp;
					L->next[m++] = e->sum.v[k];
				}
		}
		int32_t *t = L->cur;
		L->cur = L->next;
		L->next = t;
		n = m;
	}
	for (int32_t j = 0; j < n; j++)
		if (L->fin[L->cur[j]])
			return 1;
	return 0;
}

int llr_gbnf_live_check(llr_gbnf_live *L, const int32_t *v, size_t n, int sep, int32_t q, llr_err *err)
{
	int rc = 0;
	for (size_t i = 0; !L->over && !rc && i < n; i += (size_t)v[i] + 1)
		rc = stack_live(L, v + i + 1, (size_t)v[i], sep ? L->aq[q] : L->zero);
	if (rc == LLR_ERANGE)
		L->over = 1; /* the tables may be half made: never read again */
	if (L->over)
		return 1;
	return rc < 0 ? llr_err_set(err, LLR_ENOMEM, "out of memory") : rc;
}

int llr_gbnf_live_exact(const llr_gbnf_live *L)
{
	return !L->over;
}

void llr_gbnf_live_tell(const llr_gbnf_live *L, const llr_notice *n, int *told, const char *name, const char *what, const char *of)
{
	if (*told || !n || !n->fn || !L->over)
		return;
	*told = 1;
	llr_notice_send(n, "%s: trimming %s ran past its budget of work: the states not decided by then are allowed untrimmed, so "
	                "a sentence may reach a dead end (a state from which no sentence of %s ends)", name, what, of);
}
