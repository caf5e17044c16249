/*
 * pairs.c - disc-pairs output (ORDER, NEXT and CONJ examples, TSV) read
 * back into token ids, and batches of its examples for a sentence
 * encoder (train --task, score --task).  A bad line is an error naming
 * file:line.  Not here: writing the examples (tasks.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Sentences of an example of each task (0 ORDER, 1 NEXT, 2 CONJ); its
 * line has two columns more, the task and the label. */
static const int task_sents[3] = {2, LLR_DISC_NEXT_CONTEXT + LLR_DISC_NEXT_CANDIDATES, 2};

/* Grow *p, an array of *cap elements of size bytes, to hold need:
 * doubling from first.  LLR_OK or LLR_ENOMEM (*p unchanged). */
static int grow(void **p, size_t *cap, size_t need, size_t first, size_t size)
{
	if (need <= *cap)
		return LLR_OK;
	size_t n = *cap ? 2 * *cap : first;
	while (n < need)
		n *= 2;
	void *q = llr_reallocarray(*p, n, size);
	if (!q)
		return LLR_ENOMEM;
	*p = q;
	*cap = n;
	return LLR_OK;
}

static int push_id(llr_disc_set *d, int32_t id)
{
	if (grow((void **)&d->ids, &d->cap_ids, d->n_ids + 1, 1 << 16, sizeof *d->ids) != LLR_OK)
		return LLR_ENOMEM;
	d->ids[d->n_ids++] = id;
	return LLR_OK;
}

static int end_sent(llr_disc_set *d)
{
	if (grow((void **)&d->off, &d->cap_sent, d->n_sent + 2, 1 << 14, sizeof *d->off) != LLR_OK)
		return LLR_ENOMEM;
	if (d->n_sent == 0)
		d->off[0] = 0;
	d->off[++d->n_sent] = d->n_ids;
	return LLR_OK;
}

static int push_example(llr_disc_set_task *t, size_t first, int32_t label)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		size_t *f = llr_reallocarray(t->first, cap, sizeof *f);
		if (!f)
			return LLR_ENOMEM;
		t->first = f;
		int32_t *l = llr_reallocarray(t->label, cap, sizeof *l);
		if (!l)
			return LLR_ENOMEM;
		t->label = l;
		t->cap = cap;
	}
	t->first[t->n] = first;
	t->label[t->n++] = label;
	return LLR_OK;
}

static int task_of(const char *s, size_t n)
{
	if (n == 5 && !memcmp(s, "ORDER", 5))
		return 0;
	if (n == 4 && !memcmp(s, "NEXT", 4))
		return 1;
	if (n == 4 && !memcmp(s, "CONJ", 4))
		return 2;
	return -1;
}

static int32_t parse_label(const char *s, size_t n, int task, llr_disc_set *d, int add_classes, const char **why)
{
	if (task < 2) {
		int hi = task == 0 ? 1 : 4;
		if (n == 1 && s[0] >= '0' && s[0] <= '0' + hi)
			return s[0] - '0';
		*why = task == 0 ? "ORDER label not 0 or 1" : "NEXT label not in 0..4";
		return -1;
	}
	for (int k = 0; k < d->n_conj; k++)
		if (strlen(d->conj[k]) == n && !memcmp(d->conj[k], s, n))
			return k;
	if (!add_classes || d->n_conj == LLR_SENC_MAX_CONJ || n == 0 || n >= sizeof d->conj[0]) {
		*why = "unknown CONJ class";
		return -1;
	}
	memcpy(d->conj[d->n_conj], s, n);
	d->conj[d->n_conj][n] = 0;
	return d->n_conj++;
}

/* Split a line at TABs: up to cap fields; returns the count (may exceed cap). */
static int split_tabs(const char *s, size_t len, const char **f, size_t *fl, int cap)
{
	int n = 0;
	size_t st = 0;
	for (size_t i = 0; i <= len; i++)
		if (i == len || s[i] == '\t') {
			if (n < cap) {
				f[n] = s + st;
				fl[n] = i - st;
			}
			n++;
			st = i + 1;
		}
	return n;
}

/* One sentence: tokens separated by spaces, looked up in vocab (unk
 * for unknown words); its tokens (0: none), or LLR_ENOMEM. */
static long add_tokens(llr_disc_set *d, const llr_strmap *vocab, int32_t unk, const char *s, size_t len)
{
	size_t i = 0;
	long k = 0;
	while (i < len) {
		while (i < len && s[i] == ' ')
			i++;
		size_t st = i;
		while (i < len && s[i] != ' ')
			i++;
		if (i == st)
			break;
		int32_t id = llr_strmap_get(vocab, s + st, i - st);
		if (push_id(d, id < 0 ? unk : id) != LLR_OK)
			return LLR_ENOMEM;
		d->tokens++;
		if (id < 0)
			d->unknown++;
		k++;
	}
	return end_sent(d) != LLR_OK ? LLR_ENOMEM : (long)k;
}

/* Does a sentence column hold a token? (a shard's check of the lines it
 * does not keep) */
static int has_token(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ')
			return 1;
	return 0;
}

/* One line of the file (not empty): its example added to d.  LLR_OK, or
 * an error (the caller puts file:line before its message). */
static int read_line(llr_disc_set *d, const char *line, size_t len, const llr_strmap *vocab, int32_t unk, int tasks, int add_classes, llr_err *err)
{
	const char *f[12];
	size_t fl[12];
	int nf = split_tabs(line, len, f, fl, 12);
	int t = task_of(f[0], fl[0]);
	if (t < 0)
		return llr_err_set(err, LLR_EFORMAT, "unknown task '%.*s' (ORDER, NEXT, CONJ)", (int)(fl[0] > 20 ? 20 : fl[0]), f[0]);
	int ncols = task_sents[t] + 2;
	if (nf != ncols && nf != ncols + 1)
		return llr_err_set(err, LLR_EFORMAT, "%d columns; %.*s lines have %d (%d with provenance)", nf, (int)fl[0], f[0], ncols, ncols + 1);
	if (!(tasks & (1 << t))) {
		d->skipped++;
		return LLR_OK;
	}
	const char *why = NULL;
	int32_t lab = parse_label(f[1], fl[1], t, d, add_classes, &why);
	if (lab < 0)
		return llr_err_set(err, LLR_EFORMAT, "%s: '%.*s'", why, (int)(fl[1] > 40 ? 40 : fl[1]), f[1]);
	size_t g = d->task[t].total++, first = d->n_sent;
	int keep = d->shard_size <= 1 || g % (size_t)d->shard_size == (size_t)d->shard_rank;
	for (int k = 2; k < ncols; k++) {
		long nt = keep ? add_tokens(d, vocab, unk, f[k], fl[k]) : has_token(f[k], fl[k]);
		if (nt < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (nt == 0)
			return llr_err_set(err, LLR_EFORMAT, "empty sentence in column %d", k + 1);
	}
	if (keep && push_example(&d->task[t], first, lab) != LLR_OK)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

int llr_disc_set_read(llr_disc_set *d, const char *path, const llr_strmap *vocab, int32_t unk, int tasks, int add_classes, llr_err *err)
{
	llr_lines *l = llr_lines_open(path, 0, err);
	if (!l)
		return llr_err_code(err, LLR_EIO);
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, err)) > 0) {
		if (len == 0)
			continue;
		if ((rc = read_line(d, line, len, vocab, unk, tasks, add_classes, err)) != LLR_OK) {
			llr_err_prefix(err, "%s:%zu", llr_lines_name(l), llr_lines_lineno(l));
			break;
		}
	}
	llr_lines_close(l);
	return rc < 0 ? rc : LLR_OK;
}

void llr_disc_set_free(llr_disc_set *d)
{
	free(d->ids);
	free(d->off);
	for (int t = 0; t < 3; t++) {
		free(d->task[t].first);
		free(d->task[t].label);
	}
	memset(d, 0, sizeof *d);
}

int llr_disc_set_batch(const llr_disc_set *d, int t, const size_t *idx, size_t n, llr_disc_batch_buf *b, llr_senc_batch *out)
{
	int S = task_sents[t];
	size_t ns = n * (size_t)S, ntok = 0;
	for (size_t i = 0; i < n; i++) {
		size_t f0 = d->task[t].first[idx[i]];
		ntok += d->off[f0 + S] - d->off[f0];
	}
	if (grow((void **)&b->off, &b->cap_off, ns + 1, ns + 1, sizeof *b->off) != LLR_OK ||
	    grow((void **)&b->ids, &b->cap_ids, ntok, ntok, sizeof *b->ids) != LLR_OK ||
	    grow((void **)&b->label, &b->cap_lab, n, n, sizeof *b->label) != LLR_OK)
		return LLR_ENOMEM;
	size_t p = 0, s = 0;
	b->off[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t f0 = d->task[t].first[idx[i]];
		for (int k = 0; k < S; k++) {
			size_t a = d->off[f0 + k], z = d->off[f0 + k + 1];
			memcpy(b->ids + p, d->ids + a, (z - a) * sizeof *b->ids);
			p += z - a;
			b->off[++s] = p;
		}
		b->label[i] = d->task[t].label[idx[i]];
	}
	*out = (llr_senc_batch){.task = 1 << t, .n = n, .ids = b->ids, .off = b->off, .label = b->label};
	b->tokens = ntok;
	return LLR_OK;
}

void llr_disc_batch_buf_free(llr_disc_batch_buf *b)
{
	free(b->ids);
	free(b->off);
	free(b->label);
}
