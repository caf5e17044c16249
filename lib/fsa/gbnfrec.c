/*
 * gbnfrec.c - the pushdown recogniser of a GBNF grammar (gbnf.h), as
 * llama.cpp runs one: the state after a prefix of characters is the set
 * of the stacks of every parse still alive, a stack the positions (in
 * gbnf.h's elements) still to match, innermost on top, its top always a
 * character class (the rule references above it expanded, which ends
 * because no rule is left-recursive) or the stack empty (the root
 * derived: the prefix is a sentence).  One character advances every
 * stack whose top class holds it.  Then the same over tokens
 * (llr_gbnf_tok): a state is a set of stacks, interned, whose allowed
 * tokens come from one walk of the vocabulary's character trie, each
 * kept only when some sentence of the vocabulary's tokens continues it
 * (gbnflive.c).  Not a parser: no tree is kept.
 */
#include "fsa/gbnf.h"

#include <stdlib.h>

/* A set of stacks: each one its length, then its positions bottom to
 * top, one after another. */
typedef gbnf_ivec sset;

/* One closure: the stacks made, into out (made: how many).  After PLAIN
 * expansions of a rule reference the stacks expanded are remembered
 * (seen) and not expanded again: a rule of many optional parts, such as
 * ("a"?){0,50}, reaches one stack along exponentially many paths. */
typedef struct closure {
	const llr_gbnf *g;
	sset *out;
	llr_strmap *seen;
	size_t n, made;
} closure;

/* LIVE_MAX: the most stacks one closure may make (LLR_ERANGE beyond).
 * A set of stacks holds one per parse alive, and an ambiguous grammar
 * has exponentially many: after n a's, root ::= "a" root "b" | "a" root
 * "c" | "" has 2^n, which no recogniser of this kind (llama.cpp's
 * neither) can follow.  Beyond the limit the grammar is refused, not
 * followed for hours. */
enum { PLAIN = 256, LIVE_MAX = 1 << 14 };

static int expand(closure *c, int32_t *s, size_t len);

/* The stacks base[0..m) with each alternative of rule r on top. */
static int expand_rule(closure *c, const int32_t *base, size_t m, int32_t r)
{
	const llr_gbnf *g = c->g;
	int32_t *t = llr_malloc((m + 1) * sizeof *t);
	if (!t)
		return LLR_ENOMEM;
	if (m)
		memcpy(t, base, m * sizeof *t);
	int rc = LLR_OK;
	for (int32_t a = g->alt_off[r]; rc >= 0 && a < g->alt_off[r + 1]; a++) {
		int32_t start = g->alt[a];
		t[m] = start;
		rc = expand(c, t, m + (g->el[start] != GBNF_END));
	}
	free(t);
	return rc;
}

/* Stack s[0..len) into out, its rule references on top expanded. */
static int expand(closure *c, int32_t *s, size_t len)
{
	const llr_gbnf *g = c->g;
	sset *out = c->out;
	if (len && GBNF_IS_REF(g->el[s[len - 1]])) {
		if (c->n >= (size_t)LIVE_MAX * 16)
			return LLR_ERANGE;
		if (++c->n > PLAIN) {
			if (!c->seen && !(c->seen = llr_strmap_new()))
				return LLR_ENOMEM;
			size_t before = llr_strmap_size(c->seen);
			int32_t id = llr_strmap_add(c->seen, (const char *)s, len * sizeof *s);
			if (id < 0)
				return LLR_ENOMEM;
			if ((size_t)id < before)
				return LLR_OK;
		}
		int32_t top = s[len - 1], r = GBNF_ARG(g->el[top]);
		size_t m = len - 1;
		int32_t keep = s[m];
		if (g->el[top + 1] != GBNF_END)
			s[m++] = top + 1;
		int rc = expand_rule(c, s, m, r);
		s[len - 1] = keep;
		return rc;
	}
	if (++c->made > LIVE_MAX)
		return LLR_ERANGE;
	if (gbnf_push(out, (int32_t)len) < 0)
		return LLR_ENOMEM;
	for (size_t i = 0; i < len; i++)
		if (gbnf_push(out, s[i]) < 0)
			return LLR_ENOMEM;
	return LLR_OK;
}

static int stack_cmp(const void *pa, const void *pb)
{
	const int32_t *a = *(const int32_t *const *)pa, *b = *(const int32_t *const *)pb;
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	for (int32_t i = 1; i <= a[0]; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* a in its one form: stacks sorted, each once. */
static int canon(sset *a)
{
	size_t k = 0;
	for (size_t i = 0; i < a->n; i += (size_t)a->v[i] + 1)
		k++;
	if (k < 2)
		return LLR_OK;
	const int32_t **p = llr_malloc(k * sizeof *p);
	int32_t *v = llr_malloc(a->n * sizeof *v);
	if (!p || !v) {
		free(p);
		free(v);
		return LLR_ENOMEM;
	}
	k = 0;
	for (size_t i = 0; i < a->n; i += (size_t)a->v[i] + 1)
		p[k++] = a->v + i;
	qsort(p, k, sizeof *p, stack_cmp);
	size_t n = 0;
	for (size_t i = 0; i < k; i++)
		if (!i || stack_cmp(&p[i - 1], &p[i])) {
			memcpy(v + n, p[i], ((size_t)p[i][0] + 1) * sizeof *v);
			n += (size_t)p[i][0] + 1;
		}
	free(p);
	free(a->v);
	a->v = v;
	a->n = n;
	a->cap = a->n;
	return LLR_OK;
}

/* The stacks of the start: root expanded. */
static int start(const llr_gbnf *g, sset *out)
{
	out->n = 0;
	closure c = {g, out, NULL, 0, 0};
	int rc = expand_rule(&c, NULL, 0, g->root);
	llr_strmap_free(c.seen);
	return rc < 0 ? rc : canon(out);
}

/* The stacks of in after character c, into out (emptied first). */
static int advance(const llr_gbnf *g, const sset *in, int32_t c, sset *out)
{
	out->n = 0;
	closure cl = {g, out, NULL, 0, 0};
	int32_t *t = NULL;
	size_t tcap = 0;
	int rc = LLR_OK;
	for (size_t i = 0; rc >= 0 && i < in->n; i += (size_t)in->v[i] + 1) {
		size_t len = (size_t)in->v[i];
		const int32_t *s = in->v + i + 1;
		if (!len || !llr_gbnf_class_has(g, GBNF_ARG(g->el[s[len - 1]]), c))
			continue;
		if (len > tcap) {
			free(t);
			tcap = 2 * len;
			if (!(t = llr_malloc(tcap * sizeof *t))) {
				rc = LLR_ENOMEM;
				break;
			}
		}
		size_t m = len - 1;
		memcpy(t, s, m * sizeof *t);
		if (g->el[s[m] + 1] != GBNF_END)
			t[m++] = s[len - 1] + 1;
		rc = expand(&cl, t, m);
	}
	llr_strmap_free(cl.seen);
	free(t);
	return rc < 0 ? rc : canon(out);
}

static int accepting(const sset *a)
{
	for (size_t i = 0; i < a->n; i += (size_t)a->v[i] + 1)
		if (!a->v[i])
			return 1;
	return 0;
}

/* rc (LLR_ENOMEM or LLR_ERANGE) into err, with its reason (the
 * liveness's own, le, when it failed). */
static int fail(const llr_err *le, llr_err *err, int rc)
{
	if (le && le->code < 0)
		return llr_err_set(err, le->code, "%s", le->msg);
	if (rc == LLR_ERANGE)
		return llr_err_set(err, rc, "the grammar is too ambiguous: more than %d parses alive at once", LIVE_MAX);
	return llr_err_set(err, LLR_ENOMEM, "out of memory");
}

int llr_gbnf_match(const llr_gbnf *g, const char *s, size_t n)
{
	sset a = {0}, b = {0};
	int rc = start(g, &a);
	for (size_t i = 0; rc >= 0 && i < n && a.n;) {
		int32_t c;
		int k = llr_utf8_decode(s + i, n - i, &c);
		if (k <= 0) {
			a.n = 0;
			break;
		}
		i += (size_t)k;
		rc = advance(g, &a, c, &b);
		sset t = a;
		a = b;
		b = t;
	}
	if (rc >= 0)
		rc = accepting(&a);
	free(a.v);
	free(b.v);
	return rc;
}

/* ------------------------------------------------------------- tokens */

typedef struct tstate {
	int32_t *lab, *dst, narc;
	int expanded, final;
	int32_t ub;    /* a final state is this many tokens away (INT32_MAX: not known) */
	int32_t lb;    /* none is this many tokens away or fewer (-1: not known) */
	int32_t depth; /* the fewest frames on one of its stacks (the search's guide) */
	int alive;     /* some sentence continues it: 1, 0 not, -1 not known */
} tstate;

/* How many states the searches of llr_gbnf_tok_dist visit at most: the
 * exhaustive one, breadth first, then the one guided to shallow stacks;
 * and how much work each may do, in stack entries read and made by the
 * walks of the states it expands (a grammar of many parses alive makes
 * each state dear: a fuzzed one took 16 s for 4096 states). */
enum { BFS_BUDGET = 64, GUIDED_BUDGET = 4096, WORK_BUDGET = 1 << 20 };

/* The vocabulary's tokens as a trie over code points: node i's code
 * point, first child, next sibling, and the token ending there (-1). */
typedef struct trie {
	int32_t *cp, *child, *sib, *tok;
	size_t n, cap;
} trie;

struct llr_gbnf_tok {
	const llr_gbnf *g;
	llr_strmap *keys; /* a state's stacks as bytes, then its separator byte */
	tstate *st;
	size_t nst, cap;
	trie tr;
	uint32_t *mark, stamp;
	size_t mcap;
	size_t work; /* stack entries the walks have read and made */
	llr_gbnf_live *live;
	llr_err lerr; /* live's failure */
	llr_notice notice; /* llr_gbnf_tok_on_notice's, and its name */
	const char *name;
	int told; /* live's budget run past: told */
	llr_buf unspelled; /* llr_gbnf_unspelled's words, nunspelled of them */
	int nunspelled, told_unspelled;
};

static int32_t trie_node(trie *t, int32_t cp)
{
	if (t->n == t->cap) {
		size_t c = t->cap ? 2 * t->cap : 256;
		int32_t **f[4] = {&t->cp, &t->child, &t->sib, &t->tok};
		for (int i = 0; i < 4; i++) {
			int32_t *v = llr_reallocarray(*f[i], c, sizeof *v);
			if (!v)
				return LLR_ENOMEM;
			*f[i] = v;
		}
		t->cap = c;
	}
	t->cp[t->n] = cp;
	t->child[t->n] = t->sib[t->n] = t->tok[t->n] = -1;
	return (int32_t)t->n++;
}

static int trie_add(trie *t, const char *w, size_t n, int32_t x)
{
	int32_t at = 0;
	for (size_t i = 0; i < n;) {
		int32_t c;
		int k = llr_utf8_decode(w + i, n - i, &c);
		if (k <= 0 || !c)
			return LLR_OK; /* not text: never a token of the grammar */
		i += (size_t)k;
		int32_t ch = t->child[at];
		while (ch >= 0 && t->cp[ch] != c)
			ch = t->sib[ch];
		if (ch < 0) {
			if ((ch = trie_node(t, c)) < 0)
				return LLR_ENOMEM;
			t->sib[ch] = t->child[at];
			t->child[at] = ch;
		}
		at = ch;
	}
	if (at > 0)
		t->tok[at] = x;
	return LLR_OK;
}

/* The state of the stacks a with separator flag sep: its id, made when
 * new. */
static int32_t intern(llr_gbnf_tok *t, const sset *a, int sep)
{
	size_t nb = a->n * sizeof *a->v;
	char *key = llr_malloc(nb + 1);
	if (!key)
		return LLR_ENOMEM;
	memcpy(key, a->v, nb);
	key[nb] = (char)sep;
	size_t before = llr_strmap_size(t->keys);
	int32_t q = llr_strmap_add(t->keys, key, nb + 1);
	free(key);
	if (q < 0 || (size_t)q < before)
		return q;
	if (t->nst == t->cap) {
		size_t c = t->cap ? 2 * t->cap : 64;
		tstate *s = llr_reallocarray(t->st, c, sizeof *s);
		if (!s)
			return LLR_ENOMEM;
		t->st = s;
		t->cap = c;
	}
	tstate *s = &t->st[t->nst++];
	memset(s, 0, sizeof *s);
	s->final = accepting(a);
	s->ub = s->final ? 0 : INT32_MAX;
	s->lb = -1;
	s->depth = INT32_MAX;
	s->alive = -1;
	for (size_t i = 0; i < a->n; i += (size_t)a->v[i] + 1)
		s->depth = LLR_MIN(s->depth, a->v[i]);
	return q;
}

llr_gbnf_tok *llr_gbnf_tok_new(const llr_gbnf *g, const llr_strmap *vocab, llr_err *err)
{
	llr_gbnf_tok *t = llr_calloc(1, sizeof *t);
	sset a = {0};
	int rc = t && (t->keys = llr_strmap_new()) && trie_node(&t->tr, 0) >= 0 ? LLR_OK : LLR_ENOMEM;
	if (t)
		t->g = g;
	int32_t V = (int32_t)llr_strmap_size(vocab);
	for (int32_t x = 0; rc >= 0 && x < V; x++) {
		const char *w = llr_strmap_str(vocab, x);
		if (gbnf_token_text(w, llr_strmap_len(vocab, x)))
			rc = trie_add(&t->tr, w, llr_strmap_len(vocab, x), x);
	}
	if (rc >= 0 && (rc = start(g, &a)) >= 0)
		rc = intern(t, &a, 0);
	free(a.v);
	if (rc >= 0)
		rc = t->nunspelled = llr_gbnf_unspelled(g, vocab, &t->unspelled);
	if (rc >= 0 && !(t->live = llr_gbnf_live_new(g, vocab, NULL, err))) {
		llr_gbnf_tok_free(t);
		return NULL;
	}
	if (rc < 0) {
		llr_gbnf_tok_free(t);
		fail(NULL, err, rc);
		return NULL;
	}
	return t;
}

void llr_gbnf_tok_free(llr_gbnf_tok *t)
{
	if (!t)
		return;
	for (size_t q = 0; q < t->nst; q++) {
		free(t->st[q].lab);
		free(t->st[q].dst);
	}
	free(t->st);
	llr_strmap_free(t->keys);
	free(t->tr.cp);
	free(t->tr.child);
	free(t->tr.sib);
	free(t->tr.tok);
	free(t->mark);
	llr_gbnf_live_free(t->live);
	llr_buf_free(&t->unspelled);
	free(t);
}

int llr_gbnf_tok_live(const llr_gbnf_tok *t, int32_t q, llr_gbnf_live *L, int32_t fq, llr_err *err)
{
	LLR_ASSERT(q >= 0 && (size_t)q < t->nst);
	size_t len = llr_strmap_len(t->keys, q);
	const char *key = llr_strmap_str(t->keys, q);
	int32_t *v = llr_malloc(len); /* the key is not aligned */
	if (!v)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	memcpy(v, key, len - 1);
	int rc = llr_gbnf_live_check(L, v, (len - 1) / sizeof *v, key[len - 1], fq, err);
	free(v);
	return rc;
}

/* Tell once that live ran past its budget, when it has. */
static void tell(llr_gbnf_tok *t)
{
	llr_gbnf_live_tell(t->live, &t->notice, &t->told, t->name, "the grammar against the vocabulary", "the vocabulary's tokens");
}

const char *llr_gbnf_tok_unspelled(const llr_gbnf_tok *t, int *n)
{
	*n = t->nunspelled;
	return t->unspelled.data ? t->unspelled.data : "";
}

void llr_gbnf_tok_on_notice(llr_gbnf_tok *t, const llr_notice *n, const char *name)
{
	t->notice = n ? *n : (llr_notice){0};
	t->name = name;
	tell(t);
	if (t->nunspelled > 0 && !t->told_unspelled && t->notice.fn) {
		t->told_unspelled = 1;
		llr_notice_send(&t->notice, "%s: %d word%s of its literals no token of the vocabulary can be, so the alternatives that hold %s never apply: %s",
		                name, t->nunspelled, t->nunspelled > 1 ? "s" : "", t->nunspelled > 1 ? "them" : "it", t->unspelled.data);
	}
}

/* Does some sentence continue state q?  1, 0, or the liveness's failure
 * (in t->lerr). */
static int alive(llr_gbnf_tok *t, int32_t q)
{
	if (t->st[q].alive < 0) {
		int rc = llr_gbnf_tok_live(t, q, t->live, 0, &t->lerr);
		tell(t);
		if (rc < 0)
			return rc;
		t->st[q].alive = rc;
	}
	return t->st[q].alive;
}

/* Can a token end where the stacks a are: is a the end of a sentence,
 * or can a space (before the next token) come next?  A token after
 * which neither holds leads nowhere (such as "w1" in a grammar that has
 * only "w1" [01]), and is not allowed. */
static int may_end_token(const llr_gbnf *g, const sset *a)
{
	for (size_t i = 0; i < a->n; i += (size_t)a->v[i] + 1) {
		size_t len = (size_t)a->v[i];
		if (!len || llr_gbnf_class_has(g, GBNF_ARG(g->el[a->v[i + len]]), ' '))
			return 1;
	}
	return 0;
}

/* The tokens below trie node at that the stacks a (before the node's
 * children) let through, as (token, state) pairs into arcs. */
static int walk(llr_gbnf_tok *t, int32_t at, const sset *a, sset *arcs)
{
	sset b = {0};
	int rc = LLR_OK;
	for (int32_t ch = t->tr.child[at]; rc >= 0 && ch >= 0; ch = t->tr.sib[ch]) {
		rc = advance(t->g, a, t->tr.cp[ch], &b);
		t->work += a->n + b.n;
		if (rc < 0 || !b.n)
			continue;
		if (t->tr.tok[ch] >= 0 && may_end_token(t->g, &b)) {
			int32_t q = intern(t, &b, 1), live = q < 0 ? q : alive(t, q);
			if (live < 0 || (live && (gbnf_push(arcs, t->tr.tok[ch]) < 0 || gbnf_push(arcs, q) < 0)))
				rc = live < 0 ? live : LLR_ENOMEM;
		}
		if (rc >= 0)
			rc = walk(t, ch, &b, arcs);
	}
	free(b.v);
	return rc;
}

static int pair_cmp(const void *pa, const void *pb)
{
	const int32_t *a = pa, *b = pb;
	return (a[0] > b[0]) - (a[0] < b[0]);
}

/* q's allowed tokens, found once. */
static int expand_state(llr_gbnf_tok *t, int32_t q)
{
	if (t->st[q].expanded)
		return LLR_OK;
	size_t len = llr_strmap_len(t->keys, q);
	const char *key = llr_strmap_str(t->keys, q);
	sset a = {0}, b = {0}, arcs = {0};
	int rc = LLR_OK;
	if (!(a.v = llr_malloc(len)))
		return LLR_ENOMEM;
	memcpy(a.v, key, len - 1);
	a.n = a.cap = (len - 1) / sizeof *a.v;
	const sset *from = &a;
	if (key[len - 1]) {
		rc = advance(t->g, &a, ' ', &b);
		from = &b;
	}
	if (rc >= 0 && from->n)
		rc = walk(t, 0, from, &arcs);
	size_t n = arcs.n / 2;
	int32_t *lab = llr_malloc((n + 1) * sizeof *lab), *dst = llr_malloc((n + 1) * sizeof *dst);
	if (rc >= 0 && lab && dst) {
		if (n)
			qsort(arcs.v, n, 2 * sizeof *arcs.v, pair_cmp);
		for (size_t i = 0; i < n; i++) {
			lab[i] = arcs.v[2 * i];
			dst[i] = arcs.v[2 * i + 1];
		}
		tstate *s = &t->st[q];
		s->lab = lab;
		s->dst = dst;
		s->narc = (int32_t)n;
		s->expanded = 1;
		lab = dst = NULL;
	} else if (rc >= 0)
		rc = LLR_ENOMEM;
	free(lab);
	free(dst);
	free(a.v);
	free(b.v);
	free(arcs.v);
	return rc;
}

int32_t llr_gbnf_tok_arcs(llr_gbnf_tok *t, int32_t q, const int32_t **lab, const int32_t **dst, llr_err *err)
{
	LLR_ASSERT(q >= 0 && (size_t)q < t->nst);
	int rc = expand_state(t, q);
	if (rc < 0)
		return fail(&t->lerr, err, rc);
	*lab = t->st[q].lab;
	*dst = t->st[q].dst;
	return t->st[q].narc;
}

int llr_gbnf_tok_next(llr_gbnf_tok *t, int32_t q, int32_t x, int32_t *to, llr_err *err)
{
	const int32_t *lab, *dst;
	int32_t n = llr_gbnf_tok_arcs(t, q, &lab, &dst, err), lo = 0, hi = n;
	if (n < 0)
		return n;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (lab[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	*to = lo < n && lab[lo] == x ? dst[lo] : -1;
	return LLR_OK;
}

int32_t llr_gbnf_tok_states(const llr_gbnf_tok *t)
{
	return (int32_t)t->nst;
}

int llr_gbnf_tok_final(const llr_gbnf_tok *t, int32_t q)
{
	return t->st[q].final;
}

/* Room to mark every state, each unmarked. */
static int marks(llr_gbnf_tok *t)
{
	if (t->mcap < t->nst) {
		size_t c = 2 * t->nst;
		uint32_t *m = llr_reallocarray(t->mark, c, sizeof *m);
		if (!m)
			return LLR_ENOMEM;
		memset(m + t->mcap, 0, (c - t->mcap) * sizeof *m);
		t->mark = m;
		t->mcap = c;
	}
	return LLR_OK;
}

/* A state met by a search: the node it came from (-1: the first), its
 * tokens from the first. */
typedef struct node {
	int32_t q, parent, d;
} node;

typedef struct search {
	llr_gbnf_tok *t;
	node *nd;
	size_t n, cap;
	int32_t *heap; /* the guided search's open nodes, a binary heap */
	size_t nh;
} search;

static int visit(search *s, int32_t q, int32_t parent, int32_t d)
{
	llr_gbnf_tok *t = s->t;
	if (marks(t) < 0)
		return LLR_ENOMEM;
	if (t->mark[q] == t->stamp)
		return 0;
	t->mark[q] = t->stamp;
	if (s->n == s->cap) {
		size_t c = s->cap ? 2 * s->cap : 64;
		node *nd = llr_reallocarray(s->nd, c, sizeof *nd);
		int32_t *h = llr_reallocarray(s->heap, c, sizeof *h);
		if (h)
			s->heap = h;
		if (nd)
			s->nd = nd;
		if (!nd || !h)
			return LLR_ENOMEM;
		s->cap = c;
	}
	s->nd[s->n++] = (node){q, parent, d};
	return 1;
}

/* Node i is end tokens from a final state: every state on its path
 * from the first learns how far one is. */
static int32_t witness(search *s, int32_t i, int32_t end)
{
	int32_t total = s->nd[i].d + end;
	for (; i >= 0; i = s->nd[i].parent) {
		tstate *st = &s->t->st[s->nd[i].q];
		st->ub = LLR_MIN(st->ub, total - s->nd[i].d);
	}
	return total;
}

/* Breadth first from q over at most BFS_BUDGET states: the fewest
 * tokens to a final state, limit + 1 when there is none within limit,
 * -2 when a budget (states, work) ran out first. */
static int32_t breadth(search *s, int32_t q, int32_t limit)
{
	s->n = 0;
	s->t->stamp++;
	size_t w0 = s->t->work;
	int rc = visit(s, q, -1, 0);
	for (size_t i = 0; rc >= 0 && i < s->n; i++) {
		if (s->t->work - w0 > WORK_BUDGET)
			return -2;
		node x = s->nd[i];
		if (s->t->st[x.q].final)
			return witness(s, (int32_t)i, 0);
		if (x.d == limit || s->t->st[x.q].lb >= limit - x.d)
			continue;
		if ((rc = expand_state(s->t, x.q)) < 0)
			break;
		const tstate *st = &s->t->st[x.q];
		for (int32_t k = 0; rc >= 0 && k < st->narc; k++)
			if ((rc = visit(s, st->dst[k], (int32_t)i, x.d + 1)) >= 0 && s->n > BFS_BUDGET)
				return -2;
	}
	return rc < 0 ? rc : limit + 1;
}

/* Is open node a before b: the shallower stack, then fewer tokens. */
static int before(const search *s, int32_t a, int32_t b)
{
	const tstate *x = &s->t->st[s->nd[a].q], *y = &s->t->st[s->nd[b].q];
	if (x->depth != y->depth)
		return x->depth < y->depth;
	return s->nd[a].d < s->nd[b].d;
}

static void heap_push(search *s, int32_t i)
{
	size_t k = s->nh++;
	for (; k && before(s, i, s->heap[(k - 1) / 2]); k = (k - 1) / 2)
		s->heap[k] = s->heap[(k - 1) / 2];
	s->heap[k] = i;
}

static int32_t heap_pop(search *s)
{
	int32_t top = s->heap[0], last = s->heap[--s->nh];
	size_t k = 0;
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= s->nh)
			break;
		if (c + 1 < s->nh && before(s, s->heap[c + 1], s->heap[c]))
			c++;
		if (!before(s, s->heap[c], last))
			break;
		s->heap[k] = s->heap[c];
		k = c;
	}
	if (s->nh)
		s->heap[k] = last;
	return top;
}

/* Best first from q towards the shallowest stacks, over at most
 * GUIDED_BUDGET states and WORK_BUDGET work: a number of tokens within
 * limit that reach a final state (not always the fewest), else limit +
 * 1. */
static int32_t guided(search *s, int32_t q, int32_t limit)
{
	s->n = s->nh = 0;
	s->t->stamp++;
	size_t w0 = s->t->work;
	int rc = visit(s, q, -1, 0);
	if (rc > 0)
		heap_push(s, 0);
	while (rc >= 0 && s->nh && s->n <= GUIDED_BUDGET && s->t->work - w0 <= WORK_BUDGET) {
		int32_t i = heap_pop(s);
		node x = s->nd[i];
		const tstate *st = &s->t->st[x.q];
		if (st->ub <= limit - x.d)
			return witness(s, i, st->ub);
		if (x.d == limit || st->lb >= limit - x.d || (rc = expand_state(s->t, x.q)) < 0)
			continue;
		st = &s->t->st[x.q];
		for (int32_t k = 0; rc >= 0 && k < st->narc; k++)
			if ((rc = visit(s, st->dst[k], i, x.d + 1)) > 0)
				heap_push(s, (int32_t)s->n - 1);
	}
	return rc < 0 ? rc : limit + 1;
}

int32_t llr_gbnf_tok_dist(llr_gbnf_tok *t, int32_t q, int32_t limit, llr_err *err)
{
	if (t->st[q].ub <= limit)
		return t->st[q].ub;
	if (t->st[q].lb >= limit)
		return limit + 1;
	search s = {t, NULL, 0, 0, NULL, 0};
	int32_t d = breadth(&s, q, limit);
	int exact = d != -2;
	if (!exact)
		d = guided(&s, q, limit);
	free(s.nd);
	free(s.heap);
	if (d < 0)
		return fail(&t->lerr, err, d);
	if (d > limit)
		t->st[q].lb = LLR_MAX(t->st[q].lb, limit); /* after a guided search: none found, taken as none */
	return d;
}
