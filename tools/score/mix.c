/*
 * mix.c - score -m A -m B (mix.h): the options of a mixture, and the
 * sentences of --tune-weights read as score reads its input (tokens
 * separated by blanks, a leading <s> and a trailing </s> taken as
 * markers, blank lines skipped).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "mix.h"

/* "w1,w2,..." into w (exactly n of them). */
static void parse_weights(const char *arg, size_t n, double *w)
{
	const char *p = arg;
	size_t k = 0;
	for (;;) {
		char *end;
		errno = 0;
		double v = strtod(p, &end);
		if (end == p || errno)
			cli_die("--weights: '%s' is not a list of numbers", arg);
		if (k < n)
			w[k] = v;
		k++;
		if (*end != ',') {
			if (*end)
				cli_die("--weights: '%s' is not a list of numbers", arg);
			break;
		}
		p = end + 1;
	}
	if (k != n)
		cli_die("--weights: %zu weights for %zu models", k, n);
}

/* The tuning sentences: words NUL-terminated in *text (kept until the
 * end), sentence b's at word offsets first[b] .. first[b + 1). */
typedef struct tune_text {
	llr_buf text;
	size_t *at, nat, capat;       /* word offsets into text */
	size_t *first, nsent, capsent; /* nsent + 1 entries used */
} tune_text;

static void push(size_t **a, size_t *n, size_t *cap, size_t v)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*a = ereallocarray(*a, *cap, sizeof **a);
	}
	(*a)[(*n)++] = v;
}

static void read_tune(tune_text *t, const char *path)
{
	llr_err err = {0};
	llr_lines *l = llr_lines_open(path, 0, &err);
	if (!l)
		cli_die_err(&err);
	const char *line;
	size_t len;
	int rc;
	push(&t->first, &t->nsent, &t->capsent, 0);
	while ((rc = llr_lines_next(l, &line, &len, &err)) > 0) {
		size_t pos = 0, tl, start = t->nat;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			push(&t->at, &t->nat, &t->capat, t->text.len);
			if (llr_buf_append(&t->text, tok, tl) || llr_buf_putc(&t->text, '\0'))
				cli_oom();
			pos += pos < len;
		}
		size_t n = t->nat - start;
		const char *w0 = n ? t->text.data + t->at[start] : "";
		if (n && !strcmp(w0, LLR_BOS)) {
			memmove(t->at + start, t->at + start + 1, --n * sizeof *t->at);
			t->nat--;
		}
		if (n && !strcmp(t->text.data + t->at[t->nat - 1], LLR_EOS)) {
			n--;
			t->nat--;
		}
		for (size_t i = start; i < t->nat; i++)
			if (!strcmp(t->text.data + t->at[i], LLR_BOS) || !strcmp(t->text.data + t->at[i], LLR_EOS))
				cli_die("%s:%zu: %s inside the sentence (a marker only at its ends)", llr_lines_name(l),
				        llr_lines_lineno(l), t->text.data + t->at[i]);
		if (n)
			push(&t->first, &t->nsent, &t->capsent, t->nat);
	}
	if (rc < 0)
		cli_die_err(&err);
	llr_lines_close(l);
	if (t->nsent < 2)
		cli_die("--tune-weights: %s has no sentence to fit the weights on", path);
}

/* The weights of each context class, on stderr. */
static void report_classes(const llr_model *m, size_t n, const char *counts, const llr_mixture_fit *f)
{
	fprintf(stderr, "score: --context-counts %s: %d context classes with weights of their own (EM, %d iterations; %.4f nats per token)\n",
	        counts, f->classes, f->class_iters, -f->logp / (double)f->tokens);
	for (int k = 0; k < LLR_MIX_CLASSES; k++) {
		double w[SCORE_MIX_MAX];
		int64_t tokens;
		int own = llr_model_mixture_class_weights(m, k, w, n, &tokens);
		if (own < 0 || tokens == 0)
			continue;
		if (k == 0)
			fprintf(stderr, "score:   class 0 (a token absent from %s):", counts);
		else
			fprintf(stderr, "score:   class %d (counts %lld to %lld):", k, 1LL << (k - 1),
			        k < 63 ? (1LL << k) - 1 : (long long)INT64_MAX);
		fprintf(stderr, " %lld tokens, weights", (long long)tokens);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s%.6f", i ? "," : " ", w[i]);
		fprintf(stderr, "%s\n", own ? "" : " (pooled: under 1000 tokens)");
	}
}

static void fit(llr_model *m, size_t n, const char *path, const char *counts, int quiet)
{
	tune_text t = {0};
	read_tune(&t, path);
	size_t B = t.nsent - 1;
	const char **words = ereallocarray(NULL, t.nat ? t.nat : 1, sizeof *words);
	for (size_t i = 0; i < t.nat; i++)
		words[i] = t.text.data + t.at[i];
	llr_sentence *s = ereallocarray(NULL, B, sizeof *s);
	for (size_t b = 0; b < B; b++)
		s[b] = (llr_sentence){words + t.first[b], t.first[b + 1] - t.first[b]};
	llr_mixture_fit f = {.max_iters = 1000, .tol = 1e-7};
	llr_err err = {0};
	if (counts && llr_model_mixture_by_context(m, counts, &err) < 0)
		cli_die_err(&err);
	if (llr_model_tune_mixture(m, s, B, &f, &err) < 0)
		cli_die_err(&err);
	if (!quiet) {
		double w[SCORE_MIX_MAX];
		llr_model_mixture_weights(m, w, n);
		fprintf(stderr, "score: --tune-weights %s: weights", path);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s%.6f", i ? "," : " ", w[i]);
		fprintf(stderr, " (EM, %d iterations; %zu sentences, %lld tokens, %.4f nats per token)\n", f.iters, B,
		        (long long)f.tokens, -f.pooled_logp / (double)f.tokens);
		if (counts)
			report_classes(m, n, counts, &f);
	}
	free(s);
	free(words);
	free(t.at);
	free(t.first);
	llr_buf_free(&t.text);
}

llr_model *score_mix_open(size_t n, const char *const *paths, const char *weights_arg, const char *tune,
                          const char *counts, const llr_model_opts *mo, int quiet)
{
	double w[SCORE_MIX_MAX];
	if (weights_arg)
		parse_weights(weights_arg, n, w);
	llr_err err = {0};
	llr_model *m;
	if (llr_model_open_mixture(n, paths, weights_arg ? w : NULL, mo, &m, &err) < 0)
		cli_die_err(&err);
	if (tune)
		fit(m, n, tune, counts, quiet);
	return m;
}
