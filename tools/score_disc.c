/*
 * score_disc.c - score's sentence-encoder modes: --embed writes one
 * sentence vector per input line (TSV, or a tensor archive with
 * --tensor), --task predicts the labels of disc-pairs examples and
 * reports the accuracy per task.  The model is a train --task file
 * (family sentenc); --embed also takes an LL-RNN (family lm, word input):
 * a sentence's vector is then the mean of its words' input embeddings.
 * score(1) is the spec.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "discread.h"
#include "score_disc.h"

#define EMBED_CHUNK 4096 /* rows per tensor member */

static llr_senc_model *load_model(const char *path)
{
	llr_err e = {0};
	llr_senc_model *m = NULL;
	if (llr_senc_model_load(path, &m, NULL, &e) < 0)
		cli_die_err(&e);
	return m;
}

/* The bag of an LL-RNN's input embeddings: a word's embedding is its row
 * of psi times the F_in x E table "embed" (for a softmax, tree or classes
 * output psi is the identity: the table's row). */
typedef struct lm_bag {
	llr_rnnlm *m;
	const float *emb;   /* F_in x E */
	const llr_csr *psi; /* NULL: identity */
	int E;
} lm_bag;

/* Load path, a model of family lm (llr_senc_model_load said so), as an
 * LL-RNN with word input; dies otherwise. */
static void lm_bag_load(lm_bag *b, const char *path)
{
	llr_err e = {0};
	if (llr_rnnlm_load(path, &b->m, &e) < 0)
		cli_die_err(&e);
	const llr_net_config *c = llr_net_cfg(b->m->net);
	if (c->input != LLR_IN_WORD)
		cli_die("%s: --embed: an LL-RNN with character input has no table of word embeddings to average", path);
	b->emb = llr_net_tensor(b->m->net, "embed", NULL);
	if (!b->emb)
		cli_die("%s: --embed: the LL-RNN has no 'embed' tensor", path);
	const llr_lexicon *x = b->m->lex;
	b->psi = c->output == LLR_OUT_LOGLINEAR ? (x->psi ? x->psi : x->phi) : NULL;
	b->E = c->embed;
}

/* out (E) = the mean of the embeddings of ids[0..n); 0 when n = 0. */
static void lm_bag_mean(const lm_bag *b, const int32_t *ids, size_t n, float *out)
{
	int E = b->E;
	memset(out, 0, (size_t)E * sizeof *out);
	for (size_t t = 0; t < n; t++) {
		int32_t r = ids[t];
		int32_t lo = b->psi ? b->psi->indptr[r] : 0, hi = b->psi ? b->psi->indptr[r + 1] : 1;
		for (int32_t k = lo; k < hi; k++) {
			const float *row = b->emb + (size_t)(b->psi ? b->psi->indices[k] : r) * (size_t)E;
			float v = b->psi ? b->psi->data[k] : 1.0f;
			for (int j = 0; j < E; j++)
				out[j] += v * row[j];
		}
	}
	if (n)
		for (int j = 0; j < E; j++)
			out[j] /= (float)n;
}

typedef struct embedder {
	llr_senc_model *m; /* a sentence encoder, or */
	lm_bag bag;        /* an LL-RNN (bag.m) */
	const llr_lexicon *lex;
	const score_disc_opts *o;
	int D;
	int32_t *ids;
	size_t n_ids, cap_ids;
	size_t off[EMBED_CHUNK + 1];
	size_t n;
	float *vec;
	FILE *fp;
	llr_tensor_writer *tw;
	size_t chunk;
	uint64_t sentences, tokens, unknown;
	cli_progress prog;
} embedder;

static void embed_flush(embedder *x)
{
	if (!x->n)
		return;
	llr_err e = {0};
	if (x->bag.m)
		for (size_t i = 0; i < x->n; i++)
			lm_bag_mean(&x->bag, x->ids + x->off[i], x->off[i + 1] - x->off[i], x->vec + i * (size_t)x->D);
	else if (llr_senc_encode(x->m->enc, x->ids, x->off, x->n, x->vec, &e) < 0)
		cli_die_err(&e);
	if (x->tw) {
		char name[32];
		int64_t shape[2] = {(int64_t)x->n, x->D};
		snprintf(name, sizeof name, "vectors/%06zu", x->chunk++);
		if (llr_tw_put_raw(x->tw, name, LLR_F32, 2, shape, x->vec, &e) < 0)
			cli_die_err(&e);
	} else {
		for (size_t i = 0; i < x->n; i++) {
			const float *v = x->vec + i * (size_t)x->D;
			for (int j = 0; j < x->D; j++)
				fprintf(x->fp, j ? "\t%.6g" : "%.6g", (double)v[j]);
			fputc('\n', x->fp);
		}
	}
	x->n = 0;
	x->n_ids = 0;
	x->off[0] = 0;
}

static void embed_line(embedder *x, const char *s, size_t len)
{
	const llr_lexicon *lex = x->lex;
	size_t i = 0;
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		size_t st = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		if (i == st)
			break;
		int32_t id = llr_strmap_get(lex->vocab, s + st, i - st);
		if (x->n_ids == x->cap_ids) {
			x->cap_ids = x->cap_ids ? 2 * x->cap_ids : 1 << 16;
			x->ids = ereallocarray(x->ids, x->cap_ids, sizeof *x->ids);
		}
		x->ids[x->n_ids++] = id < 0 ? lex->unk_id : id;
		x->tokens++;
		x->unknown += id < 0;
	}
	x->off[++x->n] = x->n_ids;
	x->sentences++;
	if (x->n == (size_t)(x->o->batch < EMBED_CHUNK ? x->o->batch : EMBED_CHUNK))
		embed_flush(x);
	if (cli_progress_due(&x->prog))
		cli_progress_show(&x->prog, (long long)x->sentences, "lines", (long long)x->tokens, "tok", cli_progress_fraction(&x->prog));
}

static int do_embed(const score_disc_opts *o, int nfiles, char **files)
{
	embedder x = {.o = o};
	const char *kind = "lm-input-mean";
	llr_err e = {0};
	int rc = llr_senc_model_load(o->model, &x.m, NULL, &e);
	if (rc == LLR_EKIND) { /* an LL-RNN: the bag of its input embeddings */
		lm_bag_load(&x.bag, o->model);
		x.lex = x.bag.m->lex;
		x.D = x.bag.E;
	} else if (rc < 0) {
		cli_die_err(&e);
	} else {
		x.lex = x.m->lex;
		x.D = llr_senc_dim(x.m->enc);
		kind = llr_senc_encoder_name(llr_senc_cfg(x.m->enc)->encoder);
	}
	x.vec = emalloc((size_t)EMBED_CHUNK * x.D * sizeof *x.vec);
	cli_output out = {0};
	if (o->tensor) {
		llr_meta *meta = llr_meta_new();
		if (!meta)
			cli_oom();
		llr_meta_setf(meta, "dim", "%d", x.D);
		llr_meta_set(meta, "encoder", kind);
		if (!o->output || !strcmp(o->output, "-"))
			cli_refuse_tty(1, "a tensor archive");
		if (!(x.tw = llr_tw_open(o->output, "vectors", meta, &e)))
			cli_die_err(&e);
		llr_meta_free(meta);
	} else {
		cli_output_open_lines(&out, o->output);
		x.fp = out.fp;
	}
	cli_progress_init(&x.prog, o->quiet, !x.tw && x.fp == stdout);
	cli_progress_inputs(&x.prog, files, nfiles);
	for (int f = 0; f < (nfiles ? nfiles : 1); f++) {
		llr_lines *l = llr_lines_open(nfiles ? files[f] : "-", 0, &e);
		if (!l)
			cli_die_err(&e);
		cli_progress_lines(&x.prog, nfiles ? files[f] : "-", l);
		const char *line;
		size_t len;
		int rc;
		while ((rc = llr_lines_next(l, &line, &len, &e)) > 0)
			embed_line(&x, line, len);
		if (rc < 0)
			cli_die_err(&e);
		llr_lines_close(l);
	}
	embed_flush(&x);
	cli_progress_clear();
	if (x.tw && llr_tw_close(x.tw, &e) < 0)
		cli_die_err(&e);
	if (!x.tw)
		cli_output_close(&out);
	if (!o->quiet)
		cli_warn("%llu sentences, %llu tokens, %llu unknown; %d-dimensional %s vectors", (unsigned long long)x.sentences,
		         (unsigned long long)x.tokens, (unsigned long long)x.unknown, x.D, kind);
	free(x.ids);
	free(x.vec);
	llr_senc_model_free(x.m);
	llr_rnnlm_free(x.bag.m);
	return 0;
}

static const char *const upper[3] = {"ORDER", "NEXT", "CONJ"};

/* Predict every example of task index t in d: a line each. */
/* The examples a --task run has predicted, of how many in the file. */
typedef struct task_progress {
	cli_progress prog;
	long long done, total;
} task_progress;

static void predict_task(llr_senc_model *m, const dset *d, int t, int batch, FILE *fp, size_t *correct, task_progress *tp)
{
	llr_err e = {0};
	dset_buf buf = {0};
	size_t bs = (size_t)batch, *idx = ecalloc(bs, sizeof *idx);
	int32_t *pred = ecalloc(bs, sizeof *pred);
	for (size_t s = 0; s < d->task[t].n; s += bs) {
		size_t k = d->task[t].n - s < bs ? d->task[t].n - s : bs;
		for (size_t i = 0; i < k; i++)
			idx[i] = s + i;
		llr_senc_batch b;
		dset_batch(d, t, idx, k, &buf, &b);
		if (llr_senc_run(m->enc, &b, 0, NULL, correct, pred, &e) < 0)
			cli_die_err(&e);
		for (size_t i = 0; i < k; i++) {
			if (t == 2)
				fprintf(fp, "%s\t%s\t%s\n", upper[t], m->conj[b.label[i]], m->conj[pred[i]]);
			else
				fprintf(fp, "%s\t%d\t%d\n", upper[t], b.label[i], pred[i]);
		}
		tp->done += (long long)k;
		if (cli_progress_due(&tp->prog))
			cli_progress_show(&tp->prog, tp->done, "examples", tp->done, "examples", (double)tp->done / (double)tp->total);
	}
	free(idx);
	free(pred);
	dset_buf_free(&buf);
}

static int do_task(const score_disc_opts *o, int nfiles, char **files)
{
	llr_senc_model *m = load_model(o->model);
	int have = llr_senc_cfg(m->enc)->tasks, tasks = o->task & have;
	if (!tasks)
		cli_die("%s: the model has no head for the task asked for", o->model);
	cli_output out;
	cli_output_open_lines(&out, o->output);
	task_progress tp = {0};
	cli_progress_init(&tp.prog, o->quiet, out.fp == stdout);
	for (int f = 0; f < (nfiles ? nfiles : 1); f++) {
		dset d = {.conj = m->conj, .n_conj = m->n_conj};
		dset_read(&d, nfiles ? files[f] : "-", m->lex, tasks, 0);
		tp.done = tp.total = 0;
		for (int t = 0; t < 3; t++)
			if (tasks & (1 << t))
				tp.total += (long long)d.task[t].n;
		for (int t = 0; t < 3; t++) {
			if (!(tasks & (1 << t)))
				continue;
			size_t correct = 0;
			predict_task(m, &d, t, o->batch, out.fp, &correct, &tp);
			cli_progress_clear();
			if (!o->quiet && d.task[t].n)
				cli_warn("%s: %s: %zu examples, accuracy %.2f%%", nfiles ? files[f] : "<stdin>", upper[t], d.task[t].n,
				         100.0 * (double)correct / (double)d.task[t].n);
			else if (!o->quiet)
				cli_warn("%s: %s: no examples", nfiles ? files[f] : "<stdin>", upper[t]);
		}
		dset_free(&d);
	}
	cli_output_close(&out);
	llr_senc_model_free(m);
	return 0;
}

int score_disc(const score_disc_opts *o, int nfiles, char **files)
{
	return o->embed ? do_embed(o, nfiles, files) : do_task(o, nfiles, files);
}
