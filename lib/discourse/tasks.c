/*
 * tasks.c - the ORDER, NEXT and CONJ examples of disc-pairs, built
 * from one paragraph of tokenised sentences and written as TSV lines.
 *
 * ORDER: every adjacent pair, swapped with probability 0.5 (label 1 in
 * order, 0 swapped).  NEXT: one example per block of min_par sentences
 * of a paragraph (or, with a stride, per window of min_par sentences
 * starting every stride sentences): the block's first three sentences,
 * then the fourth (the true next one) and four others drawn from later in
 * the block, shuffled; the label is the 0-based index of the true one.  CONJ: adjacent pairs whose
 * second sentence opens with a marker and a comma.  The rules are spelled
 * out in disc-pairs(1).  Not here: reading input, splitting sentences.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct llr_disc_tasks {
	llr_disc_opts o;
	FILE *out;
	llr_rng rng_order, rng_next;
	size_t n_order, n_next, n_conj;
	size_t *n_class; /* per marker class */
	llr_buf scratch, line;
	int32_t *pool;
	size_t pool_cap;
};

llr_disc_tasks *llr_disc_tasks_new(const llr_disc_opts *o, FILE *out, llr_err *err)
{
	llr_disc_tasks *c = llr_calloc(1, sizeof *c);
	size_t nc = o->markers ? llr_disc_markers_nclass(o->markers) : 0;
	if (c)
		c->n_class = llr_calloc(nc ? nc : 1, sizeof *c->n_class);
	if (!c || !c->n_class) {
		free(c);
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	c->o = *o;
	c->out = out;
	llr_rng_seed(&c->rng_order, o->seed);
	llr_rng_seed(&c->rng_next, o->seed ^ 0x9e3779b97f4a7c15ULL);
	return c;
}

void llr_disc_tasks_free(llr_disc_tasks *c)
{
	if (!c)
		return;
	free(c->n_class);
	free(c->pool);
	llr_buf_free(&c->scratch);
	llr_buf_free(&c->line);
	free(c);
}

size_t llr_disc_tasks_count(const llr_disc_tasks *c, int task)
{
	return task == LLR_TASK_ORDER ? c->n_order : task == LLR_TASK_NEXT ? c->n_next : task == LLR_TASK_CONJ ? c->n_conj : 0;
}

size_t llr_disc_tasks_class_count(const llr_disc_tasks *c, size_t cls)
{
	return c->n_class[cls];
}

static int len_ok(const llr_disc_tasks *c, int ntok)
{
	return ntok >= c->o.min_len && ntok <= c->o.max_len;
}

static int pair_ok(const llr_disc_tasks *c, int a, int b)
{
	if (!len_ok(c, a) || !len_ok(c, b))
		return 0;
	int lo = a < b ? a : b, hi = a < b ? b : a;
	return (double)hi <= c->o.max_ratio * (double)lo;
}

/* Append "\t" and the sentence (tabs cannot occur; replaced defensively). */
static int put_field(llr_buf *b, const char *s, size_t len)
{
	if (llr_buf_putc(b, '\t') != LLR_OK || llr_buf_reserve(b, len + 1) != LLR_OK)
		return LLR_ENOMEM;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		b->data[b->len++] = (ch == '\t' || ch == '\n' || ch == '\r') ? ' ' : ch;
	}
	b->data[b->len] = '\0';
	return LLR_OK;
}

static int finish_line(llr_disc_tasks *c, const char *prov)
{
	llr_buf *b = &c->line;
	if (c->o.provenance && put_field(b, prov ? prov : "", prov ? strlen(prov) : 0) != LLR_OK)
		return LLR_ENOMEM;
	if (llr_buf_putc(b, '\n') != LLR_OK)
		return LLR_ENOMEM;
	fwrite(b->data, 1, b->len, c->out);
	return LLR_OK;
}

static int start_line(llr_disc_tasks *c, const char *task, const char *label)
{
	llr_buf_clear(&c->line);
	return llr_buf_printf(&c->line, "%s\t%s", task, label);
}

static int do_order(llr_disc_tasks *c, const llr_disc_para *p, size_t i, const char *prov)
{
	if (!pair_ok(c, p->ntok[i], p->ntok[i + 1]))
		return LLR_OK;
	int swap = (int)llr_rng_below(&c->rng_order, 2);
	size_t a = swap ? i + 1 : i, b = swap ? i : i + 1;
	if (start_line(c, "ORDER", swap ? "0" : "1") != LLR_OK ||
	    put_field(&c->line, llr_disc_para_sent(p, a), p->len[a]) != LLR_OK ||
	    put_field(&c->line, llr_disc_para_sent(p, b), p->len[b]) != LLR_OK ||
	    finish_line(c, prov) != LLR_OK)
		return LLR_ENOMEM;
	c->n_order++;
	return LLR_OK;
}

static int do_conj(llr_disc_tasks *c, const llr_disc_para *p, size_t i, const char *prov)
{
	const llr_disc_markers *m = c->o.markers;
	size_t skip2, skip1 = 0;
	int nt2, nt1 = 0;
	int cls = llr_disc_markers_match(m, llr_disc_para_sent(p, i + 1), p->len[i + 1], &skip2, &nt2, &c->scratch);
	if (cls < -1)
		return LLR_ENOMEM;
	if (cls < 0)
		return LLR_OK;
	int r = llr_disc_markers_match(m, llr_disc_para_sent(p, i), p->len[i], &skip1, &nt1, &c->scratch);
	if (r < -1)
		return LLR_ENOMEM;
	if (r < 0)
		skip1 = 0, nt1 = 0;
	/* Stacked markers ("of course , however , ..."): which one the label
	 * should be is unclear, and one would stay in the text; skipped. */
	size_t sk;
	int nt;
	r = llr_disc_markers_match(m, llr_disc_para_sent(p, i + 1) + skip2, p->len[i + 1] - skip2, &sk, &nt, &c->scratch);
	if (r == -1 && skip1)
		r = llr_disc_markers_match(m, llr_disc_para_sent(p, i) + skip1, p->len[i] - skip1, &sk, &nt, &c->scratch);
	if (r < -1)
		return LLR_ENOMEM;
	if (r >= 0)
		return LLR_OK;
	if (!pair_ok(c, p->ntok[i] - nt1, p->ntok[i + 1] - nt2))
		return LLR_OK;
	if (start_line(c, "CONJ", llr_disc_markers_class(m, (size_t)cls)) != LLR_OK ||
	    put_field(&c->line, llr_disc_para_sent(p, i) + skip1, p->len[i] - skip1) != LLR_OK ||
	    put_field(&c->line, llr_disc_para_sent(p, i + 1) + skip2, p->len[i + 1] - skip2) != LLR_OK ||
	    finish_line(c, prov) != LLR_OK)
		return LLR_ENOMEM;
	c->n_conj++;
	c->n_class[cls]++;
	return LLR_OK;
}

static int same_sent(const llr_disc_para *p, size_t a, size_t b)
{
	return p->len[a] == p->len[b] && !memcmp(llr_disc_para_sent(p, a), llr_disc_para_sent(p, b), p->len[a]);
}

/* One NEXT example from the block of sentences [b, e) of p. */
static int next_block(llr_disc_tasks *c, const llr_disc_para *p, size_t b, size_t e, const char *prov)
{
	const size_t truth = b + LLR_DISC_NEXT_CONTEXT;
	for (size_t i = b; i <= truth; i++)
		if (!len_ok(c, p->ntok[i]))
			return LLR_OK;
	/* Distractors: later sentences of the block within the length bounds
	 * that differ from the true one, so exactly one candidate is right. */
	if (p->n > c->pool_cap) {
		int32_t *np = llr_reallocarray(c->pool, p->n, sizeof *np);
		if (!np)
			return LLR_ENOMEM;
		c->pool = np;
		c->pool_cap = p->n;
	}
	size_t np = 0;
	for (size_t j = truth + 1; j < e; j++)
		if (len_ok(c, p->ntok[j]) && !same_sent(p, j, truth))
			c->pool[np++] = (int32_t)j;
	const size_t nd = LLR_DISC_NEXT_CANDIDATES - 1;
	if (np < nd)
		return LLR_OK;
	for (size_t k = 0; k < nd; k++) { /* partial Fisher-Yates */
		size_t r = k + (size_t)llr_rng_below(&c->rng_next, np - k);
		int32_t t = c->pool[k];
		c->pool[k] = c->pool[r];
		c->pool[r] = t;
	}
	int32_t cand[LLR_DISC_NEXT_CANDIDATES];
	cand[0] = (int32_t)truth;
	for (size_t k = 0; k < nd; k++)
		cand[k + 1] = c->pool[k];
	llr_rng_shuffle_i32(&c->rng_next, cand, LLR_DISC_NEXT_CANDIDATES);
	int label = 0;
	for (int k = 0; k < LLR_DISC_NEXT_CANDIDATES; k++)
		if (cand[k] == (int32_t)truth)
			label = k;
	char lab[16];
	snprintf(lab, sizeof lab, "%d", label);
	if (start_line(c, "NEXT", lab) != LLR_OK)
		return LLR_ENOMEM;
	for (size_t i = b; i < truth; i++)
		if (put_field(&c->line, llr_disc_para_sent(p, i), p->len[i]) != LLR_OK)
			return LLR_ENOMEM;
	for (int k = 0; k < LLR_DISC_NEXT_CANDIDATES; k++)
		if (put_field(&c->line, llr_disc_para_sent(p, (size_t)cand[k]), p->len[cand[k]]) != LLR_OK)
			return LLR_ENOMEM;
	if (finish_line(c, prov) != LLR_OK)
		return LLR_ENOMEM;
	c->n_next++;
	return LLR_OK;
}

/* The paragraph is cut into floor(n / min_par) blocks of min_par
 * sentences, the last one taking the remainder; one example per block.
 * A paragraph of min_par to 2 min_par - 1 sentences is one block.  With
 * a stride s, the blocks are the windows [i, i + min_par) for i = 0, s,
 * 2s, ... that fit in the paragraph (n - min_par + 1 of them for s = 1). */
static int do_next(llr_disc_tasks *c, const llr_disc_para *p, const char *prov)
{
	size_t m = (size_t)c->o.min_par, nb = p->n / m;
	if (c->o.next_stride > 0) {
		for (size_t i = 0; i + m <= p->n; i += (size_t)c->o.next_stride) {
			int rc = next_block(c, p, i, i + m, prov);
			if (rc != LLR_OK)
				return rc;
		}
		return LLR_OK;
	}
	for (size_t k = 0; k < nb; k++) {
		int rc = next_block(c, p, k * m, k + 1 == nb ? p->n : (k + 1) * m, prov);
		if (rc != LLR_OK)
			return rc;
	}
	return LLR_OK;
}

int llr_disc_tasks_paragraph(llr_disc_tasks *c, const llr_disc_para *p, const char *prov)
{
	int rc = LLR_OK;
	for (size_t i = 0; i + 1 < p->n && rc == LLR_OK; i++) {
		if (c->o.tasks & LLR_TASK_ORDER)
			rc = do_order(c, p, i, prov);
		if (rc == LLR_OK && (c->o.tasks & LLR_TASK_CONJ) && c->o.markers)
			rc = do_conj(c, p, i, prov);
	}
	if (rc == LLR_OK && (c->o.tasks & LLR_TASK_NEXT))
		rc = do_next(c, p, prov);
	return rc;
}
