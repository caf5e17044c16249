/*
 * disc_pairs_read.c - reading disc-pairs output (ORDER, NEXT and CONJ
 * examples, TSV) into token ids for train --task and score --task: a
 * CLI-only helper shared by tools/train_disc.c and tools/score/task.c.
 * Errors name file:line and stop the tool.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "discread.h"

/* The nine classes of disc-pairs' built-in tables, in its order. */
static const char *const builtin_conj[] = {
    "addition",
    "contrast",
    "time",
    "result",
    "specific",
    "compare",
    "strengthen",
    "return",
    "recognize",
};

void dset_conj_builtin(char conj[][32], int *n)
{
	for (int k = 0; k < 9; k++)
		strcpy(conj[k], builtin_conj[k]);
	*n = 9;
}

static void push_id(dset *d, int32_t id)
{
	if (d->n_ids == d->cap_ids) {
		d->cap_ids = d->cap_ids ? 2 * d->cap_ids : 1 << 16;
		d->ids = ereallocarray(d->ids, d->cap_ids, sizeof *d->ids);
	}
	d->ids[d->n_ids++] = id;
}

static void end_sent(dset *d)
{
	if (d->n_sent + 2 > d->cap_sent) {
		d->cap_sent = d->cap_sent ? 2 * d->cap_sent : 1 << 14;
		d->off = ereallocarray(d->off, d->cap_sent, sizeof *d->off);
	}
	if (d->n_sent == 0)
		d->off[0] = 0;
	d->off[++d->n_sent] = d->n_ids;
}

static void push_example(dset_task *t, size_t first, int32_t label)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->first = ereallocarray(t->first, t->cap, sizeof *t->first);
		t->label = ereallocarray(t->label, t->cap, sizeof *t->label);
	}
	t->first[t->n] = first;
	t->label[t->n++] = label;
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

static int32_t parse_label(const char *s, size_t n, int task, dset *d, int add_classes, const char **why)
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

/* One sentence: tokens separated by spaces, looked up in vocab (<unk>
 * for unknown words); 0 if it has no token. */
static size_t add_tokens(dset *d, const llr_strmap *vocab, int32_t unk, const char *s, size_t len)
{
	size_t k = 0, i = 0;
	while (i < len) {
		while (i < len && s[i] == ' ')
			i++;
		size_t st = i;
		while (i < len && s[i] != ' ')
			i++;
		if (i == st)
			break;
		int32_t id = llr_strmap_get(vocab, s + st, i - st);
		push_id(d, id < 0 ? unk : id);
		d->tokens++;
		if (id < 0)
			d->unknown++;
		k++;
	}
	end_sent(d);
	return k;
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

void dset_read(dset *d, const char *path, const llr_lexicon *lex, int tasks, int add_classes)
{
	static const int ncols[3] = {4, 10, 4};
	llr_err e = {0};
	llr_lines *l = llr_lines_open(path, 0, &e);
	if (!l)
		cli_die_err(&e);
	const char *name = llr_lines_name(l);
	const char *line, *f[12];
	size_t len, fl[12];
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, &e)) > 0) {
		size_t ln = llr_lines_lineno(l);
		if (len == 0)
			continue;
		int nf = split_tabs(line, len, f, fl, 12);
		int t = task_of(f[0], fl[0]);
		if (t < 0)
			cli_die("%s:%zu: unknown task '%.*s' (ORDER, NEXT, CONJ)", name, ln, (int)(fl[0] > 20 ? 20 : fl[0]), f[0]);
		if (nf != ncols[t] && nf != ncols[t] + 1)
			cli_die("%s:%zu: %d columns; %.*s lines have %d (%d with provenance)", name, ln, nf, (int)fl[0], f[0], ncols[t], ncols[t] + 1);
		if (!(tasks & (1 << t))) {
			d->skipped++;
			continue;
		}
		const char *why = NULL;
		int32_t lab = parse_label(f[1], fl[1], t, d, add_classes, &why);
		if (lab < 0)
			cli_die("%s:%zu: %s: '%.*s'", name, ln, why, (int)(fl[1] > 40 ? 40 : fl[1]), f[1]);
		size_t g = d->task[t].total++, first = d->n_sent;
		int keep = d->shard_size <= 1 || g % (size_t)d->shard_size == (size_t)d->shard_rank;
		for (int k = 2; k < ncols[t]; k++)
			if ((keep ? add_tokens(d, lex->vocab, lex->unk_id, f[k], fl[k]) : (size_t)has_token(f[k], fl[k])) == 0)
				cli_die("%s:%zu: empty sentence in column %d", name, ln, k + 1);
		if (keep)
			push_example(&d->task[t], first, lab);
	}
	if (rc < 0)
		cli_die_err(&e);
	llr_lines_close(l);
}

void dset_free(dset *d)
{
	free(d->ids);
	free(d->off);
	for (int t = 0; t < 3; t++) {
		free(d->task[t].first);
		free(d->task[t].label);
	}
	memset(d, 0, sizeof *d);
}

/* Gather examples idx[0..n) of task t into the batch buffers. */
void dset_batch(const dset *d, int t, const size_t *idx, size_t n, dset_buf *b, llr_senc_batch *out)
{
	int S = llr_senc_task_sents(1 << t);
	size_t ns = n * (size_t)S, ntok = 0;
	for (size_t i = 0; i < n; i++) {
		size_t f0 = d->task[t].first[idx[i]];
		ntok += d->off[f0 + S] - d->off[f0];
	}
	if (ns + 1 > b->cap_off) {
		b->cap_off = ns + 1;
		b->off = ereallocarray(b->off, b->cap_off, sizeof *b->off);
	}
	if (ntok > b->cap_ids) {
		b->cap_ids = ntok;
		b->ids = ereallocarray(b->ids, b->cap_ids, sizeof *b->ids);
	}
	if (n > b->cap_lab) {
		b->cap_lab = n;
		b->label = ereallocarray(b->label, b->cap_lab, sizeof *b->label);
	}
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
}

void dset_buf_free(dset_buf *b)
{
	free(b->ids);
	free(b->off);
	free(b->label);
}
