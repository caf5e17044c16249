/*
 * openpass.c - the spelling model's mass of every string, summed by the
 * row the string's features give it, exactly: one forward pass over all
 * strings at once (issue 14, item 4; llrnn(7), "Open vocabulary").
 *
 * The row of a string outside V' that no list names (opensig.c lists the
 * rest) is TOP:@notTop, OOV:@oov, its ORTH: classes and its SUF: suffixes,
 * the features the lexicon has.  Both the spelling model's next character
 * and those features depend on a string through finite automata:
 *   - the character n-gram, through the longest listed context that ends
 *     the string (ARPA backoff: p(a | h) depends on h only through its
 *     listed suffixes), and the suffix features, through the last
 *     characters (and, for SUF:^w$, the start): one Aho-Corasick trie
 *     over both pattern sets, whose node, the longest suffix of "<s> c1..ck"
 *     in the trie, holds every listed context and every suffix pattern
 *     that ends the string;
 *   - the orthographic classes, through orthostate.c's automaton (ORTH:year
 *     and the Roman ordinals excepted: opensig.c lists those strings).
 * So alpha_k(u, o), the mass of the strings of k characters that lead to
 * trie node u and ortho state o, follows
 *     alpha_{k+1}(go(u, a), step(o, a)) += alpha_k(u, o) p(a | u)
 * over the seen characters a, and over the unseen ones as the model's
 * <unk>, its probability shared among the U unseen scalar values by
 * their ortho class (as spelling.c scores them); the strings of k
 * characters end with alpha_k(u, o) p(</s> | u), into the class of the
 * row that (u, o, k) gives.  An unseen character a suffix feature names
 * is a symbol of its own in the trie (an extra), <unk> to the model, so
 * the suffix can be told from the other unseen characters.  The pass
 * stops when the mass still in flight is below 1e-17; that rest is
 * reported (unassigned), not guessed.  Models whose features the
 * automata cannot follow (character n-gram features) are refused with
 * the reason, and opensig.c draws instead.  Not here: the lists and the
 * masses' use (openexact.c, opensig.c), the spelling model (spelling.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FLIGHT_MIN 1e-17 /* stop when the mass in flight is below this */
#define MAX_STEPS 100000
#define NCAP 16            /* the ortho classes of a state are those of length 16 from 12 on */
#define TINY 1e-290        /* masses below this are dropped (counted as unassigned) */
#define MAX_EXTRA 64       /* unseen characters named by suffix features */
#define LLR_PATTERN_MAX 66 /* <s> and a suffix of up to 64 characters (extract.c's limit), and one */

typedef struct mark {
	int32_t col, k, caret, next;
} mark;

/* An open-addressing map from 64-bit keys to int32 values. */
typedef struct imap {
	uint64_t *key;
	int32_t *val;
	size_t cap, n;
} imap;

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static int32_t *imap_slot(imap *h, uint64_t k, int *fresh)
{
	if (2 * (h->n + 1) > h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 1024;
		uint64_t *key = llr_malloc(cap * sizeof *key);
		int32_t *val = llr_malloc(cap * sizeof *val);
		if (!key || !val) {
			free(key);
			free(val);
			return NULL;
		}
		memset(val, 0xff, cap * sizeof *val); /* -1: empty */
		for (size_t i = 0; i < h->cap; i++) {
			if (h->val[i] < 0)
				continue;
			size_t j = (size_t)mix(h->key[i]) & (cap - 1);
			while (val[j] >= 0)
				j = (j + 1) & (cap - 1);
			key[j] = h->key[i];
			val[j] = h->val[i];
		}
		free(h->key);
		free(h->val);
		h->key = key;
		h->val = val;
		h->cap = cap;
	}
	size_t j = (size_t)mix(k) & (h->cap - 1);
	while (h->val[j] >= 0 && h->key[j] != k)
		j = (j + 1) & (h->cap - 1);
	*fresh = h->val[j] < 0;
	if (*fresh) {
		h->key[j] = k;
		h->n++;
	}
	return &h->val[j];
}

static int32_t imap_get(const imap *h, uint64_t k)
{
	if (!h->cap)
		return -1;
	size_t j = (size_t)mix(k) & (h->cap - 1);
	while (h->val[j] >= 0 && h->key[j] != k)
		j = (j + 1) & (h->cap - 1);
	return h->val[j];
}

static void imap_free(imap *h)
{
	free(h->key);
	free(h->val);
	*h = (imap){0};
}

struct llr_openpass {
	const llr_lexicon *x;
	const llr_ngram *m;
	int32_t V, bos, eos, unk;
	/* the trie's alphabet: the V n-gram ids, then the extras, characters
	 * the spelling model never saw (each its <unk>) that a suffix feature
	 * names, so the trie can tell them from the other unseen ones */
	int32_t A, nextra;
	int32_t extra_cp[MAX_EXTRA];
	/* the trie: node 0 is the empty string */
	int32_t nodes, cap;
	int32_t *go;   /* cap x A: the node after symbol a; -1 while building */
	int32_t *fail; /* the longest proper suffix in the trie */
	int32_t *parent, *sym, *depth;
	int32_t *mark_at; /* the first mark of a node, -1 */
	mark *marks;
	int32_t nmarks, mcap;
	double *p; /* nodes x A: p(a | the node's string), an extra's its <unk>'s / U */
	/* the rows: column lists interned as sets */
	llr_strmap *sets;
	int32_t *sufset; /* B x nodes: the suffix set of a string of 1, .., B - 1, >= B characters at the node */
	int B;           /* the suffix features' longest, plus one */
	int32_t empty_set;
	int32_t top_col, oov_col;
	int ortho;
	/* the characters */
	int32_t *sym_cls;                 /* A: a seen character's or an extra's ortho class, -1 for <s> </s> <unk> */
	double unseen[LLR_ORTHO_CLASSES]; /* the unseen characters but the extras, each class's share of all U */
	double one_unseen;                /* 1 / U */
	/* the ortho states met */
	imap ostate_of;
	llr_ortho_state *ost;
	int32_t J, jcap;
	int32_t *trans; /* jcap x LLR_ORTHO_CLASSES, -1: not yet */
	int32_t *oset;  /* jcap x (NCAP + 1), -1: not yet */
	/* the classes */
	imap class_of; /* (suffix set << 32 | ortho set) -> class */
	uint64_t *ckey;
	double *mass;
	int32_t C, ccap;
	double unassigned;
	int steps;
};

void llr_openpass_free(llr_openpass *p)
{
	if (!p)
		return;
	free(p->go);
	free(p->fail);
	free(p->parent);
	free(p->sym);
	free(p->depth);
	free(p->mark_at);
	free(p->marks);
	free(p->p);
	llr_strmap_free(p->sets);
	free(p->sufset);
	free(p->sym_cls);
	imap_free(&p->ostate_of);
	free(p->ost);
	free(p->trans);
	free(p->oset);
	imap_free(&p->class_of);
	free(p->ckey);
	free(p->mass);
	free(p);
}

/* ------------------------------------------------------------- the trie */

/* Room for one node more. */
static int grow(llr_openpass *p)
{
	if (p->nodes < p->cap)
		return 0;
	int32_t cap = p->cap ? 2 * p->cap : 4096;
	size_t A = (size_t)p->A;
	int32_t *go = llr_reallocarray(p->go, (size_t)cap * A, sizeof *go);
	if (!go)
		return -1;
	p->go = go;
	memset(go + (size_t)p->cap * A, 0xff, (size_t)(cap - p->cap) * A * sizeof *go);
	int32_t **arr[] = {&p->fail, &p->parent, &p->sym, &p->depth, &p->mark_at};
	for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
		int32_t *a = llr_reallocarray(*arr[i], (size_t)cap, sizeof *a);
		if (!a)
			return -1;
		*arr[i] = a;
	}
	p->cap = cap;
	return 0;
}

/* The child of u by a, made if absent; -1 when out of memory. */
static int32_t child(llr_openpass *p, int32_t u, int32_t a)
{
	size_t at = (size_t)u * (size_t)p->A + (size_t)a;
	if (p->go[at] >= 0)
		return p->go[at];
	if (grow(p) < 0)
		return -1;
	int32_t c = p->nodes++;
	p->parent[c] = u;
	p->sym[c] = a;
	p->depth[c] = p->depth[u] + 1;
	p->mark_at[c] = -1;
	return p->go[at] = c;
}

/* The node of the symbols s[0..n), made if absent. */
static int32_t insert(llr_openpass *p, const int32_t *s, int n)
{
	int32_t u = 0;
	for (int i = 0; i < n && u >= 0; i++)
		u = child(p, u, s[i]);
	return u;
}

/* The listed contexts (levels 1 to order - 1) into the trie. */
static int insert_contexts(llr_openpass *p, llr_err *err)
{
	int N = llr_ngram_order(p->m);
	int32_t *at = llr_malloc((size_t)p->V * sizeof *at), *next = NULL;
	if (!at)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (int32_t a = 0; a < p->V; a++)
		if ((at[a] = child(p, 0, a)) < 0)
			goto oom;
	for (int k = 1; k + 1 <= N - 1; k++) {
		llr_ngram_level lv, up;
		llr_ngram_level_get(p->m, k, &lv);
		llr_ngram_level_get(p->m, k + 1, &up);
		free(next);
		if (!(next = llr_malloc((size_t)(up.count ? up.count : 1) * sizeof *next)))
			goto oom;
		for (int64_t i = 0; i < lv.count; i++)
			for (int64_t j = lv.child[i]; j < lv.child[i + 1]; j++)
				if ((next[j] = child(p, at[i], up.word[j])) < 0)
					goto oom;
		int32_t *t = at;
		at = next;
		next = t;
	}
	free(at);
	free(next);
	return LLR_OK;
oom:
	free(at);
	free(next);
	return llr_err_set(err, LLR_ENOMEM, "open pass: out of memory");
}

/* Each context holding <unk> again with every choice of <unk> or an
 * extra at each of its <unk>s: the extras are <unk> to the model. */
static int insert_variants(llr_openpass *p, llr_err *err)
{
	int32_t n0 = p->nodes;
	for (int32_t u = 1; u < n0 && p->nextra; u++) {
		int32_t s[LLR_NGRAM_MAX_ORDER + 64], d = p->depth[u], pos[LLR_NGRAM_MAX_ORDER + 64], nu = 0;
		for (int32_t v = u, i = d - 1; i >= 0; v = p->parent[v], i--)
			if ((s[i] = p->sym[v]) == p->unk)
				pos[nu++] = i;
		if (!nu)
			continue;
		int64_t total = 1;
		for (int i = 0; i < nu; i++)
			total *= p->nextra + 1;
		for (int64_t t = 1; t < total; t++) {
			int64_t r = t;
			for (int i = 0; i < nu; i++, r /= p->nextra + 1)
				s[pos[i]] = r % (p->nextra + 1) ? p->V + (int32_t)(r % (p->nextra + 1)) - 1 : p->unk;
			if (insert(p, s, d) < 0)
				return llr_err_set(err, LLR_ENOMEM, "open pass: out of memory");
		}
	}
	return LLR_OK;
}

/* The trie symbol of code point cp (its UTF-8 at w[0..k)): its n-gram
 * id, an extra, or <unk>. */
static int32_t char_sym(const llr_openpass *p, const char *w, int k, int32_t cp)
{
	int32_t a = llr_spelling_char(p->m, w, (size_t)k, cp);
	if (a >= 0)
		return a;
	for (int32_t e = 0; e < p->nextra; e++)
		if (p->extra_cp[e] == cp)
			return p->V + e;
	return p->unk;
}

/* A suffix pattern: its symbols and what it fires. */
typedef struct pattern {
	int32_t s[LLR_PATTERN_MAX];
	int n;
	mark mk;
} pattern;

/* The suffix features' patterns into *out (*np of them): each SUF: name
 * read both ways it can have come out of llr_extract (SUF:^w$ is the
 * whole word w, or the suffix "^w"), its unseen characters made extras. */
static int suffix_patterns(llr_openpass *p, int max_k, pattern **out, int32_t *np, char *why, size_t why_cap, llr_err *err)
{
	const llr_strmap *F = p->x->features;
	int32_t cap = 0;
	*out = NULL;
	*np = 0;
	for (int32_t col = 0; col < (int32_t)llr_strmap_size(F); col++) {
		const char *name = llr_strmap_str(F, col);
		size_t len = llr_strmap_len(F, col);
		if (len < 6 || memcmp(name, "SUF:", 4) || name[len - 1] != '$')
			continue;
		const char *body = name + 4;
		size_t bl = len - 5;
		for (int caret = 0; caret <= 1; caret++) {
			if (caret && body[0] != '^')
				continue;
			pattern pt = {.mk = {.col = col, .caret = caret}};
			if (caret)
				pt.s[pt.n++] = p->bos;
			const char *q = body + caret;
			size_t ql = bl - (size_t)caret;
			int k = 0;
			for (size_t i = 0; i < ql;) {
				int32_t cp;
				int l = llr_utf8_decode(q + i, ql - i, &cp);
				if (l <= 0 || k >= max_k || pt.n >= LLR_PATTERN_MAX) {
					k = -1;
					break;
				}
				int32_t a = char_sym(p, q + i, l, cp);
				if (a == p->unk) { /* a new extra */
					if (p->nextra == MAX_EXTRA) {
						snprintf(why, why_cap, "the suffix features name more than %d characters the spelling model never saw",
						         MAX_EXTRA);
						return LLR_OK;
					}
					p->extra_cp[p->nextra] = cp;
					a = p->V + p->nextra++;
				}
				pt.s[pt.n++] = a;
				k++;
				i += (size_t)l;
			}
			if (k < 1)
				continue;
			pt.mk.k = k;
			if (*np == cap) {
				cap = cap ? 2 * cap : 256;
				pattern *o = llr_reallocarray(*out, (size_t)cap, sizeof *o);
				if (!o)
					return llr_err_set(err, LLR_ENOMEM, "out of memory");
				*out = o;
			}
			(*out)[(*np)++] = pt;
		}
	}
	return LLR_OK;
}

/* The patterns into the trie, each with its mark. */
static int insert_suffixes(llr_openpass *p, const pattern *pt, int32_t np, llr_err *err)
{
	for (int32_t i = 0; i < np; i++) {
		int32_t u = insert(p, pt[i].s, pt[i].n);
		if (u < 0)
			return llr_err_set(err, LLR_ENOMEM, "open pass: out of memory");
		if (p->nmarks == p->mcap) {
			int32_t cap = p->mcap ? 2 * p->mcap : 1024;
			mark *mk = llr_reallocarray(p->marks, (size_t)cap, sizeof *mk);
			if (!mk)
				return llr_err_set(err, LLR_ENOMEM, "out of memory");
			p->marks = mk;
			p->mcap = cap;
		}
		p->marks[p->nmarks] = pt[i].mk;
		p->marks[p->nmarks].next = p->mark_at[u];
		p->mark_at[u] = p->nmarks++;
	}
	return LLR_OK;
}

/* Failure links and the full go table, breadth first. */
static int link_trie(llr_openpass *p, llr_err *err)
{
	int32_t *queue = llr_malloc((size_t)p->nodes * sizeof *queue);
	if (!queue)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	size_t A = (size_t)p->A, head = 0, tail = 0;
	p->fail[0] = 0;
	for (size_t a = 0; a < A; a++) {
		int32_t c = p->go[a];
		if (c >= 0) {
			p->fail[c] = 0;
			queue[tail++] = c;
		} else {
			p->go[a] = 0;
		}
	}
	while (head < tail) {
		int32_t u = queue[head++];
		int32_t *gu = p->go + (size_t)u * A;
		const int32_t *gf = p->go + (size_t)p->fail[u] * A;
		for (size_t a = 0; a < A; a++) {
			if (gu[a] >= 0) {
				p->fail[gu[a]] = gf[a];
				queue[tail++] = gu[a];
			} else {
				gu[a] = gf[a];
			}
		}
	}
	free(queue);
	return LLR_OK;
}

/* p(a | the node's string) for every node and symbol (an extra: its
 * <unk>'s share; an extra in the string: <unk> to the model). */
static int node_probs(llr_openpass *p, llr_err *err)
{
	size_t A = (size_t)p->A;
	if (!(p->p = llr_malloc((size_t)p->nodes * A * sizeof *p->p)))
		return llr_err_set(err, LLR_ENOMEM, "open pass: out of memory (%d trie nodes)", p->nodes);
	int32_t ctx[LLR_NGRAM_MAX_ORDER + 64];
	for (int32_t u = 0; u < p->nodes; u++) {
		int d = p->depth[u];
		for (int32_t v = u, i = d - 1; i >= 0; v = p->parent[v], i--)
			ctx[i] = p->sym[v] >= p->V ? p->unk : p->sym[v];
		double *pu = p->p + (size_t)u * A;
		for (int32_t a = 0; a < p->V; a++)
			pu[a] = a == p->bos ? 0.0 : pow(10.0, (double)llr_ngram_log10p(p->m, ctx, d, a, NULL));
		for (int32_t e = 0; e < p->nextra; e++)
			pu[p->V + e] = pu[p->unk] * p->one_unseen;
	}
	return LLR_OK;
}

/* ------------------------------------------------------------- the rows */

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The id of the set of columns c[0..n) (sorted here). */
static int32_t intern(llr_openpass *p, int32_t *c, size_t n)
{
	qsort(c, n, sizeof *c, cmp_i32);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || c[k - 1] != c[i])
			c[k++] = c[i];
	return llr_strmap_add(p->sets, (const char *)c, k * sizeof *c); /* the id it has, or a new one; -1: out of memory */
}

/* The suffix set of a string of n characters (n >= 1) at node u. */
static int32_t suffix_set(llr_openpass *p, int32_t u, int n)
{
	int32_t c[2 * LLR_PATTERN_MAX];
	size_t k = 0;
	for (int32_t v = u; v > 0; v = p->fail[v])
		for (int32_t i = p->mark_at[v]; i >= 0; i = p->marks[i].next) {
			const mark *mk = &p->marks[i];
			if ((mk->caret || mk->k < n) && k < sizeof c / sizeof *c)
				c[k++] = mk->col;
		}
	return intern(p, c, k);
}

typedef struct cols {
	const llr_strmap *F;
	int32_t c[64];
	size_t n;
} cols;

static int add_col(const char *name, size_t len, float value, void *ctx)
{
	(void)value;
	cols *c = ctx;
	int32_t col = llr_strmap_get(c->F, name, len);
	if (col >= 0 && c->n < sizeof c->c / sizeof *c->c)
		c->c[c->n++] = col;
	return LLR_OK;
}

/* ------------------------------------------------------ the ortho states */

static int32_t ortho_index(llr_openpass *p, llr_ortho_state s)
{
	int fresh;
	int32_t *v = imap_slot(&p->ostate_of, s, &fresh);
	if (!v)
		return -1;
	if (!fresh)
		return *v;
	if (p->J == p->jcap) {
		int32_t cap = p->jcap ? 2 * p->jcap : 64;
		llr_ortho_state *o = llr_reallocarray(p->ost, (size_t)cap, sizeof *o);
		if (o)
			p->ost = o;
		int32_t *t = o ? llr_reallocarray(p->trans, (size_t)cap * LLR_ORTHO_CLASSES, sizeof *t) : NULL;
		if (t)
			p->trans = t;
		int32_t *e = t ? llr_reallocarray(p->oset, (size_t)cap * (NCAP + 1), sizeof *e) : NULL;
		if (!e)
			return -1;
		p->oset = e;
		p->jcap = cap;
	}
	int32_t j = p->J++;
	p->ost[j] = s;
	memset(p->trans + (size_t)j * LLR_ORTHO_CLASSES, 0xff, LLR_ORTHO_CLASSES * sizeof *p->trans);
	memset(p->oset + (size_t)j * (NCAP + 1), 0xff, (NCAP + 1) * sizeof *p->oset);
	return *v = j;
}

/* The ortho state after j reads a character of class k; -1 out of memory. */
static int32_t ortho_next(llr_openpass *p, int32_t j, int32_t k)
{
	if (!p->ortho)
		return 0;
	int32_t t = p->trans[(size_t)j * LLR_ORTHO_CLASSES + (size_t)k];
	if (t >= 0)
		return t;
	t = ortho_index(p, llr_ortho_step_class(p->ost[j], k));
	if (t >= 0)
		p->trans[(size_t)j * LLR_ORTHO_CLASSES + (size_t)k] = t;
	return t;
}

/* The set of ORTH: columns of a string of n >= 1 characters in state j. */
static int32_t ortho_set(llr_openpass *p, int32_t j, int n)
{
	int nc = n < NCAP ? n : NCAP;
	int32_t *e = &p->oset[(size_t)j * (NCAP + 1) + (size_t)nc];
	if (*e >= 0)
		return *e;
	cols c = {.F = p->x->features};
	if (p->ortho)
		llr_ortho_final(p->ost[j], (size_t)nc, add_col, &c);
	int32_t id = intern(p, c.c, c.n);
	if (id >= 0)
		*e = id;
	return id;
}

/* ------------------------------------------------------------ the pass */

static int32_t class_index(llr_openpass *p, int32_t sset, int32_t oset)
{
	uint64_t key = (uint64_t)(uint32_t)sset << 32 | (uint32_t)oset;
	int fresh;
	int32_t *v = imap_slot(&p->class_of, key, &fresh);
	if (!v)
		return -1;
	if (!fresh)
		return *v;
	if (p->C == p->ccap) {
		int32_t cap = p->ccap ? 2 * p->ccap : 1024;
		uint64_t *k = llr_reallocarray(p->ckey, (size_t)cap, sizeof *k);
		if (k)
			p->ckey = k;
		double *m = k ? llr_reallocarray(p->mass, (size_t)cap, sizeof *m) : NULL;
		if (!m)
			return -1;
		p->mass = m;
		p->ccap = cap;
	}
	p->ckey[p->C] = key;
	p->mass[p->C] = 0;
	return *v = p->C++;
}

/* One length's mass: per ortho state a dense vector over the nodes, NULL
 * until a string reaches the state, and a bit per block of 64 nodes that
 * may hold mass, so the pass reads (and the memory holds) only the blocks
 * a string reached. */
#define BLOCK 64

typedef struct layer {
	double **a;    /* cap */
	uint64_t **bits; /* cap: a bit per block of a */
	int32_t cap;
} layer;

static void layer_free(layer *l)
{
	for (int32_t j = 0; j < l->cap; j++) {
		free(l->a[j]);
		free(l->bits[j]);
	}
	free(l->a);
	free(l->bits);
	*l = (layer){0};
}

static size_t block_words(int32_t nodes)
{
	size_t blocks = ((size_t)nodes + BLOCK - 1) / BLOCK;
	return (blocks + 63) / 64;
}

/* The capacity, doubled from cap (64 at first), that holds index j. */
static int32_t cap_for(int32_t cap, int32_t j)
{
	cap = cap ? cap : 64;
	while (cap <= j)
		cap *= 2;
	return cap;
}

/* Room for ortho state j in l. */
static int layer_room(layer *l, int32_t j, int32_t nodes)
{
	if (j >= l->cap) {
		int32_t cap = cap_for(l->cap, j);
		double **a = llr_reallocarray(l->a, (size_t)cap, sizeof *a);
		if (!a)
			return -1;
		l->a = a;
		uint64_t **bits = llr_reallocarray(l->bits, (size_t)cap, sizeof *bits);
		if (!bits)
			return -1;
		l->bits = bits;
		for (int32_t i = l->cap; i < cap; i++) {
			a[i] = NULL;
			bits[i] = NULL;
		}
		l->cap = cap;
	}
	if (!l->a[j] && !(l->a[j] = llr_calloc((size_t)nodes, sizeof **l->a)))
		return -1;
	if (!l->bits[j] && !(l->bits[j] = llr_calloc(block_words(nodes), sizeof **l->bits)))
		return -1;
	return 0;
}

/* The nodes [lo, *hi) of the lowest block set in word w's bits b. */
static inline int32_t block_span(size_t w, uint64_t b, int32_t nodes, int32_t *hi)
{
	int32_t lo = (int32_t)((w * 64 + (size_t)__builtin_ctzll(b)) * BLOCK);
	*hi = lo + BLOCK < nodes ? lo + BLOCK : nodes;
	return lo;
}

static inline void layer_add(double *a, uint64_t *bits, int32_t u, double w)
{
	a[u] += w;
	bits[u / BLOCK / 64] |= 1ull << (u / BLOCK % 64);
}

/* The nodes of vector a with mass, ascending, in on[] and their mass in
 * x[], taken out of a (zeroed, the block bits cleared); their number. */
static int32_t layer_take(double *a, uint64_t *bits, int32_t nodes, int32_t *on, double *x)
{
	int32_t n = 0;
	for (size_t w = 0; w < block_words(nodes); w++) {
		for (uint64_t b = bits[w]; b; b &= b - 1) {
			int32_t hi, lo = block_span(w, b, nodes, &hi);
			for (int32_t u = lo; u < hi; u++)
				if (a[u] != 0) {
					on[n] = u;
					x[n++] = a[u];
					a[u] = 0;
				}
		}
		bits[w] = 0;
	}
	return n;
}

/* The mass in vector a; what is below TINY is zeroed and added to *dropped. */
static double layer_flight(double *a, const uint64_t *bits, int32_t nodes, double *dropped)
{
	double f = 0;
	for (size_t w = 0; w < block_words(nodes); w++)
		for (uint64_t b = bits[w]; b; b &= b - 1) {
			int32_t hi, lo = block_span(w, b, nodes, &hi);
			for (int32_t u = lo; u < hi; u++) {
				if (a[u] == 0)
					continue;
				if (a[u] < TINY) {
					*dropped += a[u];
					a[u] = 0;
				} else {
					f += a[u];
				}
			}
		}
	return f;
}

/* A move out of an ortho state: the symbol a (for the unseen characters,
 * <unk>) times f (1, or the unseen characters' share) into the ortho
 * state dest. */
typedef struct move {
	int32_t dest, a;
	double f;
} move;

static int cmp_move(const void *x, const void *y)
{
	const move *m = x, *n = y;
	if (m->dest != n->dest)
		return (m->dest > n->dest) - (m->dest < n->dest);
	return (m->a > n->a) - (m->a < n->a);
}

/* Every ortho state's moves, made when the state is first stepped. */
typedef struct moves {
	move **mv;  /* cap: NULL, or the state's moves */
	int32_t *n; /* cap: their number */
	int32_t cap;
} moves;

static void moves_free(moves *c)
{
	for (int32_t j = 0; j < c->cap; j++)
		free(c->mv[j]);
	free(c->mv);
	free(c->n);
	*c = (moves){0};
}

/* The moves out of ortho state j, sorted by destination, one per (dest,
 * a) (the unseen classes that lead to one state summed), their number in
 * c->n[j]; NULL out of memory.  They do not depend on the length, so
 * each state's are made once, with room for their destinations in both
 * layers l0 and l1, which take turns as the next one. */
static const move *moves_of(llr_openpass *p, moves *c, int32_t j, layer *l0, layer *l1)
{
	if (j >= c->cap) {
		int32_t cap = cap_for(c->cap, j);
		move **mv = llr_reallocarray(c->mv, (size_t)cap, sizeof *mv);
		if (!mv)
			return NULL;
		c->mv = mv;
		int32_t *n = llr_reallocarray(c->n, (size_t)cap, sizeof *n);
		if (!n)
			return NULL;
		c->n = n;
		for (int32_t i = c->cap; i < cap; i++)
			c->mv[i] = NULL;
		c->cap = cap;
	}
	if (c->mv[j])
		return c->mv[j];
	move *mv = llr_malloc((size_t)(p->A + LLR_ORTHO_CLASSES) * sizeof *mv);
	if (!mv)
		return NULL;
	int32_t n = 0;
	for (int32_t a = 0; a < p->A; a++)
		if (p->sym_cls[a] >= 0)
			mv[n++] = (move){ortho_next(p, j, p->sym_cls[a]), a, 1.0};
	for (int32_t k = 0; k < LLR_ORTHO_CLASSES; k++)
		if (p->unseen[k] > 0)
			mv[n++] = (move){ortho_next(p, j, k), p->unk, p->unseen[k]};
	for (int32_t i = 0; i < n; i++)
		if (mv[i].dest < 0 || layer_room(l0, mv[i].dest, p->nodes) < 0 || layer_room(l1, mv[i].dest, p->nodes) < 0) {
			free(mv);
			return NULL;
		}
	qsort(mv, (size_t)n, sizeof *mv, cmp_move);
	int32_t m = 0;
	for (int32_t i = 0; i < n; i++) {
		if (m && mv[m - 1].dest == mv[i].dest && mv[m - 1].a == mv[i].a)
			mv[m - 1].f += mv[i].f;
		else
			mv[m++] = mv[i];
	}
	c->n[j] = m;
	return c->mv[j] = mv;
}

/* The alpha_{k+1} of the header, as the moves out of one ortho state:
 * for each destination state, every node with mass adds its mass times
 * p(a | u) to go(u, a), a of the moves to that state.  One destination's
 * vector at a time, so the scatter stays in a vector of the nodes. */
static void step_state(const llr_openpass *p, const move *mv, int32_t nm, const int32_t *on, const double *x,
                       int32_t non, layer *nxt)
{
	size_t A = (size_t)p->A;
	for (int32_t m = 0; m < nm;) {
		int32_t m1 = m + 1;
		while (m1 < nm && mv[m1].dest == mv[m].dest)
			m1++;
		double *y = nxt->a[mv[m].dest];
		uint64_t *bits = nxt->bits[mv[m].dest];
		for (int32_t i = 0; i < non; i++) {
			const double *pu = p->p + (size_t)on[i] * A;
			const int32_t *gu = p->go + (size_t)on[i] * A;
			for (int32_t q = m; q < m1; q++)
				layer_add(y, bits, gu[mv[q].a], x[i] * (pu[mv[q].a] * mv[q].f));
		}
		m = m1;
	}
}

static int run(llr_openpass *p, int max_len, llr_err *err)
{
	layer cur = {0}, nxt = {0};
	int32_t *on = NULL;  /* nodes: the nodes of one ortho state with mass */
	double *x = NULL;    /* nodes: their mass */
	double *peos = NULL; /* nodes: p(</s> | u) */
	moves mc = {0};
	int rc = LLR_OK;
	int32_t j0 = ortho_index(p, llr_ortho_start()); /* 0; the only one without ortho features */
	int32_t u0 = p->go[p->bos];                     /* after <s> */
	if (j0 < 0 || layer_room(&cur, j0, p->nodes) < 0 || !(on = llr_malloc((size_t)p->nodes * sizeof *on)) ||
	    !(x = llr_malloc((size_t)p->nodes * sizeof *x)) || !(peos = llr_malloc((size_t)p->nodes * sizeof *peos)))
		goto oom;
	for (int32_t u = 0; u < p->nodes; u++)
		peos[u] = p->p[(size_t)u * (size_t)p->A + (size_t)p->eos];
	layer_add(cur.a[j0], cur.bits[j0], u0, 1.0);
	double dropped = 0, flight = 1;
	for (int n = 0;; n++) {
		if (n >= MAX_STEPS) {
			rc = llr_err_set(err, LLR_ERANGE, "open pass: %.3g of the mass still in flight after %d characters", flight,
			                 MAX_STEPS);
			goto out;
		}
		int last = max_len > 0 && n == max_len; /* a test's cut: the longer strings are not followed */
		int nb = n < p->B ? n : p->B;
		for (int32_t j = 0; j < cur.cap; j++) {
			if (!cur.a[j])
				continue;
			int32_t non = layer_take(cur.a[j], cur.bits[j], p->nodes, on, x);
			if (!non)
				continue;
			/* the strings of n characters that end here */
			int32_t os = n ? ortho_set(p, j, n) : p->empty_set;
			if (os < 0)
				goto oom;
			for (int32_t i = 0; i < non; i++) {
				int32_t u = on[i];
				int32_t c = class_index(p, n ? p->sufset[(size_t)(nb - 1) * (size_t)p->nodes + (size_t)u] : p->empty_set, os);
				if (c < 0)
					goto oom;
				p->mass[c] += x[i] * peos[u];
			}
			if (last)
				continue;
			/* and the next character */
			const move *mv = moves_of(p, &mc, j, &cur, &nxt);
			if (!mv)
				goto oom;
			step_state(p, mv, mc.n[j], on, x, non, &nxt);
		}
		/* the mass in flight; what fell below TINY is dropped */
		flight = 0;
		for (int32_t j = 0; j < nxt.cap; j++)
			if (nxt.a[j])
				flight += layer_flight(nxt.a[j], nxt.bits[j], p->nodes, &dropped);
		layer t = cur;
		cur = nxt;
		nxt = t;
		p->steps = n + 1;
		if (flight < FLIGHT_MIN || last)
			break;
	}
	p->unassigned = flight + dropped;
	goto out;
oom:
	rc = llr_err_set(err, LLR_ENOMEM, "open pass: out of memory");
out:
	layer_free(&cur);
	layer_free(&nxt);
	moves_free(&mc);
	free(on);
	free(x);
	free(peos);
	return rc;
}

/* ------------------------------------------------------------ building */

/* Whether an unseen string fires TOP:@notTop: as anyword.c decides. */
static int32_t top_column(const llr_lexicon *x)
{
	if (!llr_lexicon_fires_nottop(x))
		return -1;
	return llr_strmap_get(x->features, LLR_FEAT_NOTTOP, strlen(LLR_FEAT_NOTTOP));
}

int llr_openpass_new_upto(const llr_lexicon *x, int max_len, llr_openpass **out, char *why, size_t why_cap, llr_err *err)
{
	char local[512];
	if (!why_cap) { /* the reason is not wanted, but the refusal is */
		why = local;
		why_cap = sizeof local;
	}
	*out = NULL;
	why[0] = 0;
	if (!x->spell)
		return llr_err_set(err, LLR_EINVAL, "open pass: no spelling model");
	if (x->extract.ngram_max > 0) {
		snprintf(why, why_cap, "the character n-gram features (CNG:) are beyond the exact pass");
		return LLR_OK;
	}
	llr_openpass *p = llr_calloc(1, sizeof *p);
	if (!p)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	p->x = x;
	p->m = llr_spelling_ngram(x->spell);
	p->V = llr_ngram_vocab_size(p->m);
	p->bos = llr_ngram_bos(p->m);
	p->eos = llr_ngram_eos(p->m);
	p->unk = llr_ngram_unk(p->m);
	p->ortho = x->extract.ortho;
	p->top_col = top_column(x);
	p->oov_col = llr_strmap_get(x->features, LLR_FEAT_OOV, strlen(LLR_FEAT_OOV));
	int rc = LLR_OK;
	pattern *pt = NULL;
	int32_t np = 0;
	unsigned char *seen = NULL;
	if ((rc = suffix_patterns(p, x->extract.suffix, &pt, &np, why, why_cap, err)) < 0 || why[0])
		goto out;
	p->A = p->V + p->nextra;
	if (!(p->sets = llr_strmap_new()) || !(p->sym_cls = llr_malloc((size_t)p->A * sizeof *p->sym_cls)) || grow(p) < 0) {
		rc = llr_err_set(err, LLR_ENOMEM, "open pass: out of memory");
		goto out;
	}
	p->nodes = 1;
	p->parent[0] = -1;
	p->sym[0] = -1;
	p->depth[0] = 0;
	p->mark_at[0] = -1;
	if ((rc = insert_contexts(p, err)) < 0 || (rc = insert_variants(p, err)) < 0 ||
	    (rc = insert_suffixes(p, pt, np, err)) < 0 || (rc = link_trie(p, err)) < 0)
		goto out;
	/* the characters: a seen one's class, an extra's; the other unseen
	 * ones' shares by class */
	if (!(seen = llr_calloc(0x110000 / 8, 1))) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	double U = 0, cnt[LLR_ORTHO_CLASSES] = {0};
	for (int32_t a = 0; a < p->A; a++) {
		p->sym_cls[a] = -1;
		if (a >= p->V) {
			p->sym_cls[a] = llr_ortho_class(p->extra_cp[a - p->V]);
			continue;
		}
		if (a == p->bos || a == p->eos || a == p->unk)
			continue;
		const char *t = llr_ngram_token(p->m, a);
		int32_t cp;
		int l = llr_utf8_decode(t, strlen(t), &cp);
		if (l <= 0 || llr_spelling_char(p->m, t, (size_t)l, cp) < 0)
			continue;
		p->sym_cls[a] = llr_ortho_class(cp);
		seen[cp >> 3] |= (unsigned char)(1 << (cp & 7));
	}
	for (int32_t cp = 0; cp < 0x110000; cp++) {
		if ((cp >= 0xD800 && cp <= 0xDFFF) || (seen[cp >> 3] >> (cp & 7) & 1))
			continue;
		U += 1;
		int extra = 0;
		for (int32_t e = 0; e < p->nextra; e++)
			extra |= p->extra_cp[e] == cp;
		if (!extra)
			cnt[llr_ortho_class(cp)] += 1;
	}
	p->one_unseen = 1 / U;
	for (int k = 0; k < LLR_ORTHO_CLASSES; k++)
		p->unseen[k] = cnt[k] / U;
	if ((rc = node_probs(p, err)) < 0)
		goto out;
	/* every node's suffix sets */
	int32_t none = 0;
	p->empty_set = intern(p, &none, 0);
	p->B = x->extract.suffix + 1;
	if (!(p->sufset = llr_malloc((size_t)p->B * (size_t)p->nodes * sizeof *p->sufset))) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	for (int nb = 1; nb <= p->B; nb++)
		for (int32_t u = 0; u < p->nodes; u++)
			if ((p->sufset[(size_t)(nb - 1) * (size_t)p->nodes + (size_t)u] = suffix_set(p, u, nb)) < 0) {
				rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
				goto out;
			}
	if ((rc = run(p, max_len, err)) < 0)
		goto out;
	free(p->p); /* the classes are made: the rest answers llr_openpass_class_of */
	p->p = NULL;
	*out = p;
	p = NULL;
out:
	free(pt);
	free(seen);
	llr_openpass_free(p);
	return rc;
}

int llr_openpass_new(const llr_lexicon *x, llr_openpass **out, char *why, size_t why_cap, llr_err *err)
{
	return llr_openpass_new_upto(x, 0, out, why, why_cap, err);
}

/* ------------------------------------------------------------- queries */

int32_t llr_openpass_classes(const llr_openpass *p)
{
	return p->C;
}

double llr_openpass_mass(const llr_openpass *p, int32_t c)
{
	return p->mass[c];
}

double llr_openpass_unassigned(const llr_openpass *p)
{
	return p->unassigned;
}

void llr_openpass_stats(const llr_openpass *p, int32_t *nodes, int32_t *ostates, int *steps)
{
	*nodes = p->nodes;
	*ostates = p->J;
	*steps = p->steps;
}

size_t llr_openpass_row(const llr_openpass *p, int32_t c, int32_t *cols, size_t cap)
{
	uint64_t key = p->ckey[c];
	int32_t sets[2] = {(int32_t)(key >> 32), (int32_t)(uint32_t)key};
	size_t n = 0;
	if (p->top_col >= 0 && n < cap)
		cols[n++] = p->top_col;
	if (p->oov_col >= 0 && n < cap)
		cols[n++] = p->oov_col;
	for (int s = 0; s < 2; s++) {
		const int32_t *v = (const int32_t *)llr_strmap_str(p->sets, sets[s]);
		size_t k = llr_strmap_len(p->sets, sets[s]) / sizeof *v;
		for (size_t i = 0; i < k && n < cap; i++)
			cols[n++] = v[i];
	}
	qsort(cols, n, sizeof *cols, cmp_i32);
	return n;
}

int32_t llr_openpass_class_of(const llr_openpass *p, const char *w, size_t len)
{
	int32_t u = p->go[p->bos], j = 0;
	llr_ortho_state s = llr_ortho_start();
	int n = 0;
	for (size_t i = 0; i < len; n++) {
		int32_t cp;
		int l = llr_utf8_decode(w + i, len - i, &cp);
		if (l <= 0)
			return -1;
		u = p->go[(size_t)u * (size_t)p->A + (size_t)char_sym(p, w + i, l, cp)];
		s = llr_ortho_step(s, cp);
		i += (size_t)l;
	}
	if (p->ortho && (j = imap_get(&p->ostate_of, s)) < 0)
		return -1; /* a state the pass never met: no mass */
	if (!p->ortho)
		j = 0;
	int32_t os;
	if (n == 0) {
		os = p->empty_set;
	} else {
		int nc = n < NCAP ? n : NCAP;
		os = p->oset[(size_t)j * (NCAP + 1) + (size_t)nc];
		if (os < 0)
			return -1;
	}
	int nb = n < p->B ? n : p->B;
	int32_t ss = n ? p->sufset[(size_t)(nb - 1) * (size_t)p->nodes + (size_t)u] : p->empty_set;
	return imap_get(&p->class_of, (uint64_t)(uint32_t)ss << 32 | (uint32_t)os);
}
