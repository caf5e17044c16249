/*
 * ngram.c - train's n-gram family (train(1), "N-gram models"):
 * `train --ngram N` counts the token files and estimates an interpolated
 * modified Kneser-Ney model with the library (lib/ngram/), then writes it
 * as ARPA text (.arpa, .arpa.gz and the other compressed suffixes, or
 * standard output) or as a binary tensor archive (any other name) in the
 * trie or the probing form (--format).  `train --convert MODEL` rewrites
 * a model instead of estimating one.  train.c parses the options
 * (train_opts: ngram, prune, discount_fallback, memory, ngram_format,
 * convert, inputs) and dispatches here; the option values are checked
 * here.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "../cli.h"
#include "train.h"

/* The n-gram form of train's usage, for the option errors found here. */
static const char usage[] =
    "usage: train --ngram N [-q] [-o FILE] [--prune N,N,...] [--discount-fallback]\n"
    "             [--memory SIZE] [--format trie|probing] [file ...]\n"
    "       train --convert MODEL [-q] -o FILE [--format trie|probing]\n";

/* "512M", "2G", "100000K", "1048576" -> bytes, at least 1 MiB. */
static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1024.0, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024.0 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024.0 * 1024 * 1024, end++;
	if (end == s || *end || !(v * mul >= 1 << 20) || v * mul > 1e15)
		cli_usage_error(usage, "--memory: '%s' is not a size of 1M or more (a number with K, M or G)", s);
	return (size_t)(v * mul);
}

/* "0,0,1" -> thresholds for orders 1, 2, 3... (the last one repeats). */
static void parse_prune(const char *s, llr_kn_opts *kn, int order)
{
	int n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		if (n == LLR_NGRAM_MAX_ORDER || *p < '0' || *p > '9')
			cli_usage_error(usage, "--prune: '%s' is not a list of counts such as 0,0,1", s);
		kn->prune[n++] = strtoull(p, &end, 10);
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			cli_usage_error(usage, "--prune: '%s' is not a list of counts such as 0,0,1", s);
	}
	for (int k = n; k > 0 && k < LLR_NGRAM_MAX_ORDER; k++)
		kn->prune[k] = kn->prune[n - 1];
	if (kn->prune[0] > 0)
		cli_usage_error(usage, "--prune: 1-grams cannot be pruned (the first count must be 0)");
	for (int k = 1; k < order; k++)
		if (kn->prune[k] < kn->prune[k - 1])
			cli_usage_error(usage, "--prune: the counts must not decrease with the order");
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* name.arpa, or name.arpa.gz (.bz2, .xz, .zst): ARPA text. */
static int is_arpa_name(const char *path)
{
	static const char *const suffixes[] = {".arpa", ".arpa.gz", ".arpa.bz2", ".arpa.xz", ".arpa.zst"};
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
		if (ends_with(path, suffixes[i]))
			return 1;
	return 0;
}

static void count_file(llr_ngram_counter *c, const char *path)
{
	llr_err err = {0};
	llr_lines *l = llr_lines_open(path, 0, &err);
	if (!l)
		cli_die_err(&err);
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, &err)) > 0)
		if (llr_ngram_count_line(c, line, len, &err) != LLR_OK) {
			llr_err_prefix(&err, "%s:%zu", llr_lines_name(l), llr_lines_lineno(l));
			cli_die_err(&err);
		}
	if (rc < 0)
		cli_die_err(&err);
	llr_lines_close(l);
}

static void report(int order, const llr_ngram *m, const double *D, uint64_t tokens, size_t bytes, double secs)
{
	fprintf(stderr, "%s: %d-gram model from %llu tokens (words + </s>) in %.2fs, counts held in %.1f MiB\n", cli_prog, order,
	        (unsigned long long)tokens, secs, (double)bytes / (1 << 20));
	for (int n = 1; n <= order; n++)
		fprintf(stderr, "%s:   %d-grams %lld, discounts D1 %.4f D2 %.4f D3+ %.4f\n", cli_prog, n, (long long)llr_ngram_count(m, n), D[(n - 1) * 3],
		        D[(n - 1) * 3 + 1], D[(n - 1) * 3 + 2]);
}

/* Write m to o->out: ARPA text by its name, else the --format binary. */
static void write_model(const train_opts *o, const llr_ngram *m)
{
	llr_err err = {0};
	int probing = 0;
	if (o->ngram_format && !(probing = !strcmp(o->ngram_format, "probing")) && strcmp(o->ngram_format, "trie"))
		cli_usage_error(usage, "--format: must be trie or probing, not '%s'", o->ngram_format);
	int arpa = !o->out || !strcmp(o->out, "-") || is_arpa_name(o->out);
	if (arpa && o->ngram_format)
		cli_usage_error(usage, "--format: for a binary output (-o FILE not ending in .arpa)");
	int rc = arpa ? llr_ngram_write_arpa(m, o->out, &err) : probing ? llr_ngram_save_probing(m, o->out, &err) : llr_ngram_save(m, o->out, &err);
	if (rc != LLR_OK)
		cli_die_err(&err);
}

/* train --convert MODEL: the model read (ARPA or the trie form), written. */
static int convert(const train_opts *o)
{
	if (o->ninputs)
		cli_usage_error(usage, "--convert reads MODEL: no file operands");
	if (o->prune || o->memory || o->discount_fallback)
		cli_usage_error(usage, "--convert: --prune, --memory and --discount-fallback are for estimation");
	if (!o->out)
		cli_usage_error(usage, "--convert: -o FILE is required");
	double t0 = cli_now();
	llr_err err = {0};
	llr_ngram *m;
	if (llr_ngram_load(o->convert, &m, &err) != LLR_OK)
		cli_die_err(&err);
	if (o->ngram && o->ngram != llr_ngram_order(m))
		cli_die("%s: a %d-gram model, not %d (--ngram)", o->convert, llr_ngram_order(m), o->ngram);
	write_model(o, m);
	if (!o->quiet)
		fprintf(stderr, "%s: %s: %d-gram model written to %s in %.2fs\n", cli_prog, o->convert, llr_ngram_order(m), o->out,
		        cli_now() - t0);
	llr_ngram_free(m);
	cli_flush_stdout();
	return 0;
}

int train_ngram(const train_opts *o)
{
	if (o->convert)
		return convert(o);
	llr_kn_opts kn;
	llr_kn_opts_init(&kn);
	kn.discount_fallback = o->discount_fallback;
	if (o->prune)
		parse_prune(o->prune, &kn, o->ngram);
	size_t memory = o->memory ? parse_size(o->memory) : (size_t)1 << 30;
#ifdef __GLIBC__
	/* Counting and estimation free large arrays as they go; a fixed mmap
	 * threshold keeps glibc from raising it and serving the later arrays
	 * from the heap, where freed pages stay resident. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
	double t0 = cli_now();
	llr_err err = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(o->ngram, memory, &err);
	if (!c)
		cli_die_err(&err);
	if (o->ninputs == 0)
		count_file(c, "-");
	for (int i = 0; i < o->ninputs; i++)
		count_file(c, o->inputs[i]);
	uint64_t tokens = llr_ngram_counter_tokens(c);
	llr_ngram *m = NULL;
	double D[LLR_NGRAM_MAX_ORDER * 3];
	if (llr_ngram_estimate(c, &kn, &m, D, &err) != LLR_OK)
		cli_die_err(&err);
	size_t bytes = llr_ngram_counter_bytes(c); /* its last merge is in the estimate */
	llr_ngram_counter_free(c);
	write_model(o, m);
	if (!o->quiet)
		report(o->ngram, m, D, tokens, bytes, cli_now() - t0);
	llr_ngram_free(m);
	cli_flush_stdout();
	return 0;
}
