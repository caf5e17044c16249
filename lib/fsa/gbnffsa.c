/*
 * gbnffsa.c - a GBNF grammar as the third kind of llr_fsa (issue 51,
 * featurize --background grammar:FILE), next to the OpenFst automaton
 * and the regular expression: fsa.c's queries dispatch here when the
 * automaton carries a grammar (d->gram), and answer them from the
 * states of the grammar's token recogniser (gbnfrec.c), which are made
 * as they are reached.  Every arc weighs 1 (ln 0), a state is final when
 * the tokens read are a sentence of the grammar, and a state whose
 * allowed tokens mostly lead to one state takes it as its default arc
 * (gram_set), as a DFA of "." does.  The grammar's text is kept so that fsaio.c can store it and
 * a reader rebuild the recogniser from it.  The automaton's notice sink
 * (llr_fsa_on_notice) is the recogniser's (llr_gbnf_tok_on_notice).
 *
 * Threads: the recogniser grows its table of states when a query meets
 * a new one, and train's and score's threads query one automaton at
 * once, so every query here holds the grammar's mutex (a guard, not a
 * table computed in advance: the states of the texts scored later are
 * not known at load).  The arc arrays a query returns stay valid after
 * it: each state's are allocated once, when it is expanded, and freed
 * with the recogniser.  Expanding a state can fail (LLR_ENOMEM, or
 * LLR_ERANGE for a grammar too ambiguous to follow): llr_fsa_ready
 * expands a state where the caller can report that, and the queries
 * that cannot report take a state that failed as allowing nothing.
 * Not here: the grammar (gbnf.c) and its recogniser (gbnfrec.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "fsa.h"
#include "fsa/gbnf.h"

/* A state's allowed set as fsa.c lays one out: when most allowed tokens
 * lead to one state, that state is the default arc and the arcs list
 * only the other tokens (to their states, or to -1 for a token not
 * allowed), so a state that allows most of the vocabulary costs the
 * normaliser the few tokens it treats apart, not all it allows. */
typedef struct gram_set {
	int done;
	int32_t def, n; /* the default arc's state (-1 none), the arcs */
	int32_t *lab, *dst;
} gram_set;

struct fsa_gram {
	char *text; /* the grammar as read, text[len] = 0 */
	size_t len;
	char *name; /* its file, for messages */
	llr_gbnf *g;
	llr_gbnf_tok *t;
	const llr_strmap *vocab; /* borrowed */
	float *zero;   /* V zeros: the ln weight of every arc */
	gram_set *set; /* nset: each state's, made with it */
	size_t nset;
	pthread_mutex_t mu;
};

static const fsa_kind gram_kind; /* its operations, at the end */

void fsa_gram_free(fsa_gram *gm)
{
	if (!gm)
		return;
	for (size_t q = 0; q < gm->nset; q++)
		if (gm->set[q].done && gm->set[q].def >= 0) { /* its own arrays, not the recogniser's */
			free(gm->set[q].lab);
			free(gm->set[q].dst);
		}
	free(gm->set);
	llr_gbnf_tok_free(gm->t);
	llr_gbnf_free(gm->g);
	free(gm->text);
	free(gm->name);
	free(gm->zero);
	pthread_mutex_destroy(&gm->mu);
	free(gm);
}

llr_fsa *llr_fsa_grammar_text(const char *text, size_t len, const char *name, const llr_strmap *vocab, llr_err *err)
{
	llr_fsa *d = llr_calloc(1, sizeof *d);
	fsa_gram *gm = llr_calloc(1, sizeof *gm);
	int32_t V = (int32_t)llr_strmap_size(vocab);
	if (!d || !gm || !(gm->text = llr_malloc(len + 1)) || !(gm->name = llr_strndup(name, strlen(name))) ||
	    !(gm->zero = llr_calloc((size_t)LLR_MAX(V, 1), sizeof *gm->zero))) {
		free(d);
		if (gm) {
			free(gm->text);
			free(gm->name);
			free(gm);
		}
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	if (len)
		memcpy(gm->text, text, len);
	gm->text[len] = 0;
	gm->len = len;
	pthread_mutex_init(&gm->mu, NULL);
	d->gram = gm;
	gm->vocab = vocab;
	d->kind = &gram_kind;
	d->V = V;
	d->eos = llr_strmap_get(vocab, LLR_EOS, strlen(LLR_EOS));
	d->bos = llr_strmap_get(vocab, LLR_BOS, strlen(LLR_BOS));
	const int32_t *lab, *dst;
	int32_t n = 0;
	if ((gm->g = llr_gbnf_parse(gm->text, len, name, err)) && (gm->t = llr_gbnf_tok_new(gm->g, vocab, err)) &&
	    (n = llr_gbnf_tok_arcs(gm->t, 0, &lab, &dst, err)) >= 0 && !n && !llr_gbnf_tok_final(gm->t, 0)) {
		int nu;
		const char *words = llr_gbnf_tok_unspelled(gm->t, &nu);
		llr_err_set(err, LLR_EFORMAT, "%s: the grammar accepts no sentence of the vocabulary's tokens%s%.200s%s", name,
		            nu ? " (no token can be these words of its literals: " : "", words, nu ? ")" : "");
	}
	else if (gm->g && (!gm->t || n < 0))
		llr_err_prefix(err, name);
	else if (gm->g)
		return d;
	llr_fsa_free(d);
	return NULL;
}

llr_fsa *llr_fsa_grammar(const char *path, const llr_strmap *vocab, llr_err *err)
{
	llr_buf b = {0};
	llr_fsa *d = NULL;
	if (llr_gbnf_read_text(path, &b, err) >= 0)
		d = llr_fsa_grammar_text(b.data ? b.data : "", b.len, !path || !strcmp(path, "-") ? "<stdin>" : path, vocab, err);
	llr_buf_free(&b);
	return d;
}

llr_fsa *llr_fsa_constraint(const char *fsa, const char *regex, const char *grammar, const llr_strmap *vocab, const llr_notice *note,
                            llr_err *err)
{
	LLR_ASSERT((fsa != NULL) + (regex != NULL) + (grammar != NULL) == 1);
	llr_fsa *d = fsa ? llr_fsa_read(fsa, vocab, err) : regex ? llr_fsa_regex(regex, vocab, err) : llr_fsa_grammar(grammar, vocab, err);
	if (d)
		llr_fsa_on_notice(d, note);
	return d;
}

void llr_fsa_on_notice(llr_fsa *d, const llr_notice *n)
{
	pthread_mutex_t *mu = d->gram ? &d->gram->mu : NULL;
	if (mu)
		pthread_mutex_lock(mu);
	d->notice = n ? *n : (llr_notice){0};
	if (mu) {
		llr_gbnf_tok_on_notice(d->gram->t, &d->notice, d->gram->name);
		pthread_mutex_unlock(mu);
	}
}

const char *fsa_gram_name(const llr_fsa *gram)
{
	return gram->gram->name;
}

const char *llr_fsa_grammar_source(const llr_fsa *d, size_t *len)
{
	if (!d->gram)
		return NULL;
	*len = d->gram->len;
	return d->gram->text;
}

llr_gbnf_live *fsa_gram_live_new(const llr_fsa *gram, const llr_fsa *f, llr_err *err)
{
	return llr_gbnf_live_new(gram->gram->g, gram->gram->vocab, f, err);
}

int fsa_gram_live(const llr_fsa *gram, int32_t q, llr_gbnf_live *L, int32_t fq, llr_err *err)
{
	fsa_gram *gm = gram->gram;
	pthread_mutex_lock(&gm->mu);
	int rc = llr_gbnf_tok_live(gm->t, q, L, fq, err);
	pthread_mutex_unlock(&gm->mu);
	return rc;
}

/* The recogniser's failure rc into err, named. */
static int gram_fail(int rc, const llr_err *e, llr_err *err)
{
	return llr_err_set(err, rc, "grammar background: %s", e->msg);
}

static int cmp_i32(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	return (a > b) - (a < b);
}

/* The most frequent of the states dst[0..n), into *mode (-1: n = 0);
 * how often. */
static int32_t mode_of(const int32_t *dst, int32_t n, int32_t *scratch, int32_t *mode)
{
	memcpy(scratch, dst, (size_t)n * sizeof *scratch);
	qsort(scratch, (size_t)n, sizeof *scratch, cmp_i32);
	int32_t best = 0;
	*mode = -1;
	for (int32_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && scratch[j] == scratch[i]; j++)
			;
		if (j - i > best) {
			best = j - i;
			*mode = scratch[i];
		}
	}
	return best;
}

/* State q's set (gm->set[q]), made once; with the mutex held.  The
 * default form when it lists fewer tokens than the plain one: V - 1 -
 * (tokens to the most frequent state), </s> never listed. */
static int gram_set_make(const llr_fsa *d, int32_t q, llr_err *err)
{
	fsa_gram *gm = d->gram;
	if ((size_t)q < gm->nset && gm->set[q].done)
		return LLR_OK;
	const int32_t *lab, *dst;
	int32_t n = llr_gbnf_tok_arcs(gm->t, q, &lab, &dst, err);
	if (n < 0)
		return n;
	if ((size_t)q >= gm->nset) {
		size_t c = LLR_MAX((size_t)q + 1, 2 * gm->nset);
		gram_set *v = llr_reallocarray(gm->set, c, sizeof *v);
		if (!v)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		memset(v + gm->nset, 0, (c - gm->nset) * sizeof *v);
		gm->set = v;
		gm->nset = c;
	}
	gram_set *st = &gm->set[q];
	int32_t *scratch = llr_malloc((size_t)LLR_MAX(n, 1) * sizeof *scratch), mode;
	if (!scratch)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	int32_t m = mode_of(dst, n, scratch, &mode), listed = d->V - (d->eos >= 0) - m;
	free(scratch);
	st->def = -1;
	st->lab = (int32_t *)lab; /* the recogniser's own arrays */
	st->dst = (int32_t *)dst;
	st->n = n;
	if (m > 0 && listed < n) {
		int32_t *l = llr_malloc((size_t)LLR_MAX(listed, 1) * sizeof *l), *t = llr_malloc((size_t)LLR_MAX(listed, 1) * sizeof *t);
		if (!l || !t) {
			free(l);
			free(t);
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		}
		int32_t k = 0, j = 0;
		for (int32_t x = 0; x < d->V; x++) {
			while (j < n && lab[j] < x)
				j++;
			int32_t to = j < n && lab[j] == x ? dst[j] : -1;
			if (x != d->eos && to != mode) {
				l[k] = x;
				t[k++] = to;
			}
		}
		LLR_ASSERT(k == listed);
		st->lab = l;
		st->dst = t;
		st->n = listed;
		st->def = mode;
	}
	st->done = 1;
	return LLR_OK;
}

/* fsa.h's kind operations, make and get with the mutex held. */
static pthread_mutex_t *gram_mutex(const llr_fsa *d)
{
	return &d->gram->mu;
}

static int gram_make(const llr_fsa *d, int32_t q, llr_err *err)
{
	llr_err e = {0};
	LLR_ASSERT(q >= 0 && q < llr_gbnf_tok_states(d->gram->t));
	int rc = gram_set_make(d, q, &e);
	return rc < 0 ? gram_fail(rc, &e, err) : LLR_OK;
}

static void gram_get(const llr_fsa *d, int32_t q, fsa_set *out)
{
	const gram_set *st = &d->gram->set[q];
	*out = (fsa_set){.def = st->def, .n = st->n, .lab = st->lab, .dst = st->dst, .logw = d->gram->zero, .deflogw = 0.0f};
}

static int32_t gram_states(const llr_fsa *d)
{
	pthread_mutex_lock(&d->gram->mu);
	int32_t n = llr_gbnf_tok_states(d->gram->t);
	pthread_mutex_unlock(&d->gram->mu);
	return n;
}

static int32_t gram_next(const llr_fsa *d, int32_t q, int32_t x, float *logw)
{
	fsa_gram *gm = d->gram;
	llr_err e = {0};
	int32_t to = -1;
	pthread_mutex_lock(&gm->mu);
	LLR_ASSERT(q >= 0 && q < llr_gbnf_tok_states(gm->t));
	if (llr_gbnf_tok_next(gm->t, q, x, &to, &e) < 0)
		to = -1;
	pthread_mutex_unlock(&gm->mu);
	if (logw)
		*logw = 0.0f;
	return to;
}

static float gram_final(const llr_fsa *d, int32_t q)
{
	fsa_gram *gm = d->gram;
	pthread_mutex_lock(&gm->mu);
	LLR_ASSERT(q >= 0 && q < llr_gbnf_tok_states(gm->t));
	int f = llr_gbnf_tok_final(gm->t, q);
	pthread_mutex_unlock(&gm->mu);
	return f ? 0.0f : -INFINITY;
}

static int32_t gram_dist_within(const llr_fsa *d, int32_t q, int32_t limit, llr_err *err)
{
	fsa_gram *gm = d->gram;
	pthread_mutex_lock(&gm->mu);
	LLR_ASSERT(q >= 0 && q < llr_gbnf_tok_states(gm->t));
	int32_t n = llr_gbnf_tok_dist(gm->t, q, limit, err);
	pthread_mutex_unlock(&gm->mu);
	return n;
}

static const fsa_kind gram_kind = {gram_mutex, gram_make, gram_get, gram_states, gram_next, gram_final, gram_dist_within};
