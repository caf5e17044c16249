/*
 * score - log-probabilities of sentences under an llrnn model, one output
 * line per input line (score(1)).  Reads tokens, looks words up, gives
 * unseen words their extracted input features, and asks the library's
 * forward pass (llr_net_score) for log p of every word and of </s>; it
 * has no network code of its own.  The summary goes to stderr.
 */
#include <getopt.h>
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "score_lm.h"

static const char usage[] =
	"usage: score [-hq] -m MODEL [-o FILE] [--base e|2|10] [--per-token] [--json]\n"
	"             [--batch N] [--check-norm] [--threads N] [file ...]\n"
	"       score --version\n";

#define NORM_TOL 1e-3

enum { OPT_BASE = 256, OPT_PER_TOKEN, OPT_JSON, OPT_BATCH, OPT_CHECK_NORM, OPT_THREADS };

static const struct option longopts[] = {
	{"model", required_argument, NULL, 'm'},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{"base", required_argument, NULL, OPT_BASE},
	{"per-token", no_argument, NULL, OPT_PER_TOKEN},
	{"json", no_argument, NULL, OPT_JSON},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"check-norm", no_argument, NULL, OPT_CHECK_NORM},
	{"threads", required_argument, NULL, OPT_THREADS},
	CLI_COMMON_OPTIONS,
	{NULL, 0, NULL, 0},
};

/* One input line waiting in the batch. */
typedef struct sline {
	llr_buf text;   /* the line, tokens NUL-separated after splitting */
	size_t n;       /* words */
	size_t *tok;    /* n token offsets into text */
	size_t cap;
	const char *file;
	size_t lineno;
} sline;

static struct {
	int per_token, json, check_norm, quiet;
	double base_div; /* ln(base) */
	const char *base_name;
	int batch;
	FILE *out;
} opt;

static struct {
	size_t sentences, words, oovs;
	double logp;     /* natural log, all tokens */
	double logp_oov; /* the part of logp on OOV words */
	double norm_max;
	size_t norm_bad;
} tot;

static slm lm;
static sline *lines;
static int nlines;
static int32_t *in_ids, *tgt_ids;
static float *lp;
static unsigned char *oov_at;
static size_t ids_cap;
static llr_buf outb;
static cli_output out;


/* Copy line into slot s and split it into NUL-terminated tokens. */
static void take_line(sline *s, const char *line, size_t len, const char *file, size_t lineno)
{
	llr_buf_clear(&s->text);
	if (llr_buf_append(&s->text, line, len) || llr_buf_putc(&s->text, '\0'))
		cli_oom();
	s->n = 0;
	s->file = file;
	s->lineno = lineno;
	char *p = s->text.data;
	size_t pos = 0, tl;
	const char *tok;
	while (llr_token_next(p, len, &pos, &tok, &tl)) {
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 32;
			s->tok = ereallocarray(s->tok, s->cap, sizeof *s->tok);
		}
		s->tok[s->n++] = (size_t)(tok - p);
		p[pos] = '\0'; /* it was a separator, or the end */
		pos += pos < len;
	}
}

static void json_string(llr_buf *b, const char *s)
{
	int bad = llr_buf_putc(b, '"');
	for (; *s && !bad; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			bad = llr_buf_putc(b, '\\') || llr_buf_putc(b, c);
		} else if (c == '\n') {
			bad = llr_buf_append(b, "\\n", 2);
		} else if (c == '\t') {
			bad = llr_buf_append(b, "\\t", 2);
		} else if (c == '\r') {
			bad = llr_buf_append(b, "\\r", 2);
		} else if (c < 0x20 || c == 0x7f) {
			bad = llr_buf_printf(b, "\\u%04x", c) < 0;
		} else {
			bad = llr_buf_putc(b, c);
		}
	}
	if (bad || llr_buf_putc(b, '"'))
		cli_oom();
}

/* A number in the chosen base, %.4f; JSON has no infinities (null). */
static void put_num(llr_buf *b, double v)
{
	int rc;
	if (isfinite(v))
		rc = llr_buf_printf(b, "%.4f", v / opt.base_div);
	else
		rc = llr_buf_printf(b, opt.json ? "null" : "%s", v < 0 ? "-inf" : "nan");
	if (rc < 0)
		cli_oom();
}

static void ensure_ids(size_t n)
{
	if (n <= ids_cap)
		return;
	size_t cap = n + n / 2;
	free(in_ids);
	free(tgt_ids);
	free(lp);
	free(oov_at);
	in_ids = llr_malloc(cap * sizeof *in_ids);
	tgt_ids = llr_malloc(cap * sizeof *tgt_ids);
	lp = llr_malloc(cap * sizeof *lp);
	oov_at = llr_malloc(cap);
	if (!in_ids || !tgt_ids || !lp || !oov_at)
		cli_oom();
	ids_cap = cap;
}

static void write_line(const sline *s, int b, int B)
{
	const size_t T = s->n + 1;
	double sum = 0, sum_oov = 0;
	size_t noov = 0;
	for (size_t t = 0; t < T; t++) {
		size_t k = t * (size_t)B + (size_t)b;
		sum += lp[k];
		if (oov_at[k]) {
			noov++;
			sum_oov += lp[k];
		}
	}
	tot.sentences++;
	tot.words += s->n;
	tot.oovs += noov;
	tot.logp += sum;
	tot.logp_oov += sum_oov;

	llr_buf *o = &outb;
	llr_buf_clear(o);
	int bad = 0;
	if (opt.json) {
		bad |= llr_buf_append(o, "{\"logprob\":", 11);
		put_num(o, sum);
		bad |= llr_buf_printf(o, ",\"tokens\":%zu,\"oovs\":%zu", T, noov) < 0;
		if (opt.per_token) {
			bad |= llr_buf_append(o, ",\"per_token\":[", 14);
			for (size_t t = 0; t < T; t++) {
				size_t k = t * (size_t)B + (size_t)b;
				bad |= llr_buf_append(o, t ? ",{\"token\":" : "{\"token\":", t ? 10 : 9);
				json_string(o, t < s->n ? s->text.data + s->tok[t] : LLR_EOS);
				bad |= llr_buf_append(o, ",\"logprob\":", 11);
				put_num(o, lp[k]);
				bad |= llr_buf_printf(o, ",\"oov\":%s}", oov_at[k] ? "true" : "false") < 0;
			}
			bad |= llr_buf_putc(o, ']');
		}
		bad |= llr_buf_putc(o, '}');
	} else {
		put_num(o, sum);
		bad |= llr_buf_printf(o, "\t%zu\t%zu", T, noov) < 0;
		if (opt.per_token) {
			for (size_t t = 0; t < T; t++) {
				size_t k = t * (size_t)B + (size_t)b;
				const char *w = t < s->n ? s->text.data + s->tok[t] : LLR_EOS;
				bad |= llr_buf_printf(o, "\t%s=", w) < 0;
				put_num(o, lp[k]);
			}
		}
	}
	bad |= llr_buf_putc(o, '\n');
	if (bad)
		cli_oom();
	fwrite(o->data, 1, o->len, opt.out);
}

/* With --threads N > 1 and --batch > 1 a batch is split into up to N
 * groups of lines, scored at the same time, each on its own copy of the
 * network with single-threaded BLAS: on the small per-step products of
 * scoring, OpenBLAS's own threads gain little and spin.  The lines are
 * dealt to the groups in order of length, so every group gets about the
 * same number of tokens. */
typedef struct worker {
	llr_net *net; /* workers[0] uses the model's own */
	int *cols;    /* its columns of the batch */
	int B, T;     /* how many, its longest line */
	int32_t *in, *tgt;
	float *lp;
	size_t cap;
	double norm;
	int rc;
	llr_err err;
	pthread_t th;
} worker;
static worker *workers;
static int nworkers;
static int *deal; /* a batch's columns, longest line first */
static int deal_cap;

static void *worker_run(void *p)
{
	worker *w = p;
	llr_batch bt = {.B = w->B, .T = w->T, .input = w->in, .target = w->tgt, .psi = slm_psi(&lm)};
	w->norm = 0;
	w->rc = llr_net_score(w->net, &bt, w->lp, opt.check_norm ? &w->norm : NULL, &w->err);
	return NULL;
}

static void workers_init(int n)
{
	workers = calloc((size_t)n, sizeof *workers);
	if (!workers)
		cli_oom();
	nworkers = n;
	const llr_net_config *c = llr_net_cfg(lm.net);
	size_t np, np2;
	const float *src = llr_net_params(lm.net, &np);
	for (int i = 0; i < n; i++) {
		if (i == 0) {
			workers[i].net = lm.net;
			continue;
		}
		llr_err err = {0};
		workers[i].net = llr_model_net_new(lm.lex, c, &err);
		if (!workers[i].net)
			cli_die_err(&err);
		memcpy(llr_net_params(workers[i].net, &np2), src, np * sizeof(float));
	}
}

static void workers_free(void)
{
	for (int i = 0; i < nworkers; i++) {
		if (i > 0)
			llr_net_free(workers[i].net);
		free(workers[i].in);
		free(workers[i].tgt);
		free(workers[i].lp);
		free(workers[i].cols);
	}
	free(workers);
	free(deal);
}

/* Score columns of the batch (B lines, T steps, in in_ids/tgt_ids) on
 * the workers and put the log-probabilities back into lp. */
static int by_length_desc(const void *a, const void *b)
{
	size_t x = lines[*(const int *)a].n, y = lines[*(const int *)b].n;
	if (x != y)
		return x > y ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

static void score_split(int B, size_t T, double *norm)
{
	int W = nworkers < B ? nworkers : B;
	if (B > deal_cap) {
		free(deal);
		deal_cap = B;
		if (!(deal = malloc((size_t)B * sizeof *deal)))
			cli_oom();
		for (int g = 0; g < nworkers; g++) {
			free(workers[g].cols);
			if (!(workers[g].cols = malloc((size_t)B * sizeof *workers[g].cols)))
				cli_oom();
		}
	}
	for (int b = 0; b < B; b++)
		deal[b] = b;
	qsort(deal, (size_t)B, sizeof *deal, by_length_desc);
	for (int g = 0; g < W; g++)
		workers[g].B = 0;
	for (int k = 0; k < B; k++) {
		worker *w = &workers[k % W];
		w->cols[w->B++] = deal[k];
	}
	for (int g = 0; g < W; g++) {
		worker *w = &workers[g];
		size_t Tg = lines[w->cols[0]].n + 1;
		w->T = (int)Tg;
		size_t need = Tg * (size_t)w->B;
		if (need > w->cap) {
			free(w->in);
			free(w->tgt);
			free(w->lp);
			w->in = llr_malloc(need * sizeof *w->in);
			w->tgt = llr_malloc(need * sizeof *w->tgt);
			w->lp = llr_malloc(need * sizeof *w->lp);
			if (!w->in || !w->tgt || !w->lp)
				cli_oom();
			w->cap = need;
		}
		for (size_t t = 0; t < Tg; t++)
			for (int j = 0; j < w->B; j++) {
				w->in[t * (size_t)w->B + (size_t)j] = in_ids[t * (size_t)B + (size_t)w->cols[j]];
				w->tgt[t * (size_t)w->B + (size_t)j] = tgt_ids[t * (size_t)B + (size_t)w->cols[j]];
			}
	}
	int started[W];
	for (int g = 1; g < W; g++)
		started[g] = pthread_create(&workers[g].th, NULL, worker_run, &workers[g]) == 0;
	worker_run(&workers[0]);
	for (int g = 1; g < W; g++) {
		if (started[g])
			pthread_join(workers[g].th, NULL);
		else
			worker_run(&workers[g]); /* no thread: run it here */
	}
	*norm = 0;
	for (int g = 0; g < W; g++) {
		worker *w = &workers[g];
		if (w->rc != LLR_OK)
			cli_die_err(&w->err);
		if (w->norm > *norm || isnan(w->norm))
			*norm = w->norm;
		for (size_t t = 0; t < (size_t)w->T; t++)
			for (int j = 0; j < w->B; j++)
				lp[t * (size_t)B + (size_t)w->cols[j]] = w->lp[t * (size_t)w->B + (size_t)j];
	}
	(void)T;
}

/* Score the pending lines (one llr_net_score call, or one per worker)
 * and write them. */
static void flush_batch(void)
{
	if (nlines == 0)
		return;
	const int B = nlines;
	size_t T = 0;
	for (int b = 0; b < B; b++)
		if (lines[b].n + 1 > T)
			T = lines[b].n + 1;
	ensure_ids(T * (size_t)B);
	slm_input_reset(&lm);
	for (int b = 0; b < B; b++) {
		sline *s = &lines[b];
		for (size_t t = 0; t < T; t++) {
			size_t k = t * (size_t)B + (size_t)b;
			oov_at[k] = 0;
			lp[k] = 0;
			if (t > s->n) { /* padding */
				in_ids[k] = LLR_BOS_ID;
				tgt_ids[k] = -1;
				continue;
			}
			int oov = 0;
			if (t < s->n) {
				const char *w = s->text.data + s->tok[t];
				size_t len = strlen(w);
				int32_t vid = slm_word(&lm, w, len);
				tgt_ids[k] = slm_target(&lm, w, len, &oov);
				oov_at[k] = (unsigned char)oov;
				/* word t is the input of position t + 1 */
				if (t + 1 < T)
					in_ids[k + (size_t)B] = slm_input(&lm, w, len, vid);
			} else {
				tgt_ids[k] = lm.eos_id;
			}
			if (t == 0)
				in_ids[k] = LLR_BOS_ID;
		}
	}
	double norm = 0;
	if (nworkers > 1 && B > 1) {
		score_split(B, T, &norm);
	} else {
		llr_batch bt = {.B = B, .T = (int)T, .input = in_ids, .target = tgt_ids, .psi = slm_psi(&lm)};
		llr_err err = {0};
		if (llr_net_score(lm.net, &bt, lp, opt.check_norm ? &norm : NULL, &err) != LLR_OK)
			cli_die_err(&err);
	}
	if (opt.check_norm) {
		if (norm > tot.norm_max || isnan(norm))
			tot.norm_max = norm;
		if (!(norm <= NORM_TOL)) {
			tot.norm_bad++;
			if (B == 1)
				cli_warn("%s:%zu: distribution sums to 1 %+.3g", lines[0].file, lines[0].lineno, norm);
			else
				cli_warn("%s:%zu-%zu: distribution sums to 1 %+.3g", lines[0].file, lines[0].lineno, lines[B - 1].lineno, norm);
		}
	}
	for (int b = 0; b < B; b++)
		write_line(&lines[b], b, B);
	nlines = 0;
}

static void score_file(const char *path)
{
	llr_err err = {0};
	llr_lines *l = llr_lines_open(path, 0, &err);
	if (!l)
		cli_die_err(&err);
	const char *name = llr_lines_name(l);
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, &err)) > 0) {
		take_line(&lines[nlines++], line, len, name, llr_lines_lineno(l));
		if (nlines == opt.batch)
			flush_batch();
	}
	if (rc < 0) {
		flush_batch();
		fflush(opt.out);
		cli_die_err(&err);
	}
	/* Lines keep a pointer to the file name: score what is left first. */
	flush_batch();
	llr_lines_close(l);
}

static void ppl_line(const char *what, double logp, size_t n)
{
	if (n == 0)
		fprintf(stderr, "%s: perplexity %s: n/a (no tokens)\n", cli_prog, what);
	else
		fprintf(stderr, "%s: perplexity %s: %.4f\n", cli_prog, what, exp(-logp / (double)n));
}

static void summary(void)
{
	size_t ntok = tot.words + tot.sentences;
	fprintf(stderr, "%s: %zu sentences, %zu words, %zu OOVs\n", cli_prog, tot.sentences, tot.words, tot.oovs);
	fprintf(stderr, "%s: logprob (base %s): %.4f over %zu tokens (words + </s>)\n", cli_prog, opt.base_name, tot.logp / opt.base_div, ntok);
	ppl_line("(words + </s>)", tot.logp, ntok);
	ppl_line("(ppl1, words only)", tot.logp, tot.words);
	ppl_line("(excluding OOVs)", tot.logp - tot.logp_oov, ntok - tot.oovs);
	if (opt.check_norm)
		fprintf(stderr, "%s: norm check: max |sum p - 1| = %.3g, %zu batch(es) over %g\n", cli_prog, tot.norm_max, tot.norm_bad, NORM_TOL);
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "score");
	const char *model = NULL, *output = NULL;
	int threads = 1;
	opt.base_div = 1.0;
	opt.base_name = "e";
	opt.batch = 1;
	int c;
	while ((c = cli_getopt(argc, argv, ":hm:o:q", longopts, usage)) != -1) {
		switch (c) {
		case 'm':
			model = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case OPT_BASE:
			if (!strcmp(optarg, "e")) {
				opt.base_div = 1.0;
			} else if (!strcmp(optarg, "2")) {
				opt.base_div = log(2.0);
			} else if (!strcmp(optarg, "10")) {
				opt.base_div = log(10.0);
			} else {
				cli_usage_error(usage, "--base: must be e, 2 or 10, not '%s'", optarg);
			}
			opt.base_name = optarg;
			break;
		case OPT_PER_TOKEN:
			opt.per_token = 1;
			break;
		case OPT_JSON:
			opt.json = 1;
			break;
		case OPT_BATCH:
			opt.batch = (int)cli_parse_int(usage, "--batch", optarg, 1, 4096);
			break;
		case OPT_CHECK_NORM:
			opt.check_norm = 1;
			break;
		case OPT_THREADS:
			threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024);
			break;
		}
	}
	if (!model)
		cli_usage_error(usage, "no model: -m MODEL is required");

	slm_load(&lm, model);
	llr_blas_set_threads(threads);
	if (opt.batch > 1 && llr_blas_threads() > 1) {
		workers_init(llr_blas_threads() < opt.batch ? llr_blas_threads() : opt.batch);
		llr_blas_set_threads(1);
	}
	lines = calloc((size_t)opt.batch, sizeof *lines);
	if (!lines)
		cli_oom();

	cli_output_open_lines(&out, output);
	opt.out = out.fp;

	if (optind == argc) {
		score_file("-");
	} else {
		for (int i = optind; i < argc; i++)
			score_file(argv[i]);
	}
	cli_output_close(&out);
	if (!opt.quiet)
		summary();

	for (int b = 0; b < opt.batch; b++) {
		llr_buf_free(&lines[b].text);
		free(lines[b].tok);
	}
	free(lines);
	workers_free();
	free(in_ids);
	free(tgt_ids);
	free(lp);
	free(oov_at);
	llr_buf_free(&outb);
	slm_free(&lm);
	if (tot.norm_bad)
		cli_die("norm check failed at %zu batch(es): the distribution does not sum to 1 within %g", tot.norm_bad, NORM_TOL);
	return 0;
}
