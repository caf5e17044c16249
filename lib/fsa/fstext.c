/*
 * fstext.c - OpenFst's text format over tokens (fstcompile's input,
 * fstprint's output with its symbol tables applied), read into an
 * automaton over a vocabulary (llr_fsa_read, lib/internal.h):
 *
 *   src dst label [weight]            an acceptor's arc
 *   src dst ilabel olabel [weight]    a transducer's arc; the labels must agree
 *   state [weight]                    a final state
 *
 * Fields are separated by spaces or tabs; states are integers >= 0; the
 * first line's first field is the start state.  Labels are the tokens
 * themselves (fstprint --isymbols=... --acceptor writes them so), and
 * <eps> is epsilon.  A weight is a cost, -ln of the factor it puts on b
 * (the tropical and log semirings' convention): 0, or no weight, is a
 * factor 1; Infinity is no arc, or no final state.  A line of four
 * fields whose last two agree is a transducer's arc; otherwise its last
 * field must be a weight.  Blank lines and lines starting with # are
 * skipped.  Not here: determinising and trimming (fsa.c), regular
 * expressions (regex.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fsa.h"

#define MAXF 6
#define FSA_MAX_STATES (1L << 26)

/* Split line into at most MAXF fields; their count (MAXF: too many). */
static int fields(char *line, char **f)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return n;
		if (n == MAXF)
			return MAXF;
		f[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static int parse_state(const char *s, int32_t *q)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < 0 || v >= FSA_MAX_STATES)
		return -1;
	*q = (int32_t)v;
	return 0;
}

/* A weight: a finite number, or Infinity (then *inf). */
static int parse_weight(const char *s, double *w, int *inf)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || isnan(v) || v == -INFINITY)
		return -1;
	*inf = v == INFINITY;
	*w = v;
	return 0;
}

static int is_weight(const char *s)
{
	double w;
	int inf;
	return parse_weight(s, &w, &inf) == 0;
}

typedef struct reader {
	fsa_nfa *a;
	const char *name;
	size_t line;
	llr_strmap *missing; /* tokens the vocabulary lacks, in order */
	llr_buf lines;       /* ", line N" of each missing token's first use */
	llr_err *err;
} reader;

/* The label of token s (-1 epsilon), or a token the vocabulary lacks
 * noted (then 0, and the file is refused at its end). */
static int label(reader *r, const char *s, int32_t *lab)
{
	const fsa_nfa *a = r->a;
	if (!strcmp(s, "<eps>")) {
		*lab = FSA_EPS;
		return LLR_OK;
	}
	if (!strcmp(s, LLR_EOS) || !strcmp(s, LLR_BOS))
		return llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: %s is not a label: %s", r->name, r->line, s,
		                   !strcmp(s, LLR_EOS) ? "a sentence ends in a final state" : "a sentence starts in the start state");
	int32_t id = llr_strmap_get(a->vocab, s, strlen(s));
	*lab = id < 0 ? 0 : id;
	if (id >= 0 || llr_strmap_get(r->missing, s, strlen(s)) >= 0)
		return LLR_OK;
	if (llr_strmap_add(r->missing, s, strlen(s)) < 0 || llr_buf_printf(&r->lines, "%zu%c", r->line, '\0') < 0)
		return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

static int bad_state(reader *r, const char *s)
{
	return llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: bad state '%.40s' (want an integer from 0 to 67108863)", r->name, r->line, s);
}

static int bad_weight(reader *r, const char *s)
{
	return llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: bad weight '%.40s' (want a number, or Infinity)", r->name, r->line, s);
}

static int one_line(reader *r, char *line)
{
	fsa_nfa *a = r->a;
	char *f[MAXF];
	int n = fields(line, f);
	if (n == 0 || f[0][0] == '#')
		return LLR_OK;
	if (n > 5)
		return llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: %s fields (want src dst label [weight], src dst ilabel olabel [weight], or state [weight])",
		                   r->name, r->line, n == MAXF ? "too many" : "6");
	int32_t src, dst, lab, olab;
	double w = 0;
	int inf = 0;
	if (parse_state(f[0], &src) < 0)
		return bad_state(r, f[0]);
	if (fsa_nfa_grow(a, src) < 0)
		return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	if (a->start < 0)
		a->start = src;
	if (n <= 2) {
		if (n == 2 && parse_weight(f[1], &w, &inf) < 0)
			return bad_weight(r, f[1]);
		a->final[src] = inf ? -INFINITY : (float)-w;
		return LLR_OK;
	}
	if (parse_state(f[1], &dst) < 0)
		return bad_state(r, f[1]);
	int rc = label(r, f[2], &lab);
	if (rc < 0)
		return rc;
	const char *wf = n == 4 ? f[3] : n == 5 ? f[4] : NULL;
	if (n == 5 || (n == 4 && !strcmp(f[2], f[3]))) {
		if ((rc = label(r, f[3], &olab)) < 0)
			return rc;
		if (strcmp(f[2], f[3]))
			return llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: input label '%.40s' and output label '%.40s' differ (want an acceptor)",
			                   r->name, r->line, f[2], f[3]);
		wf = n == 5 ? f[4] : NULL;
	} else if (n == 4 && !is_weight(f[3]))
		return llr_err_set(r->err, LLR_EFORMAT, "%s:%zu: input label '%.40s' and output label '%.40s' differ (want an acceptor)",
		                   r->name, r->line, f[2], f[3]);
	if (wf && parse_weight(wf, &w, &inf) < 0)
		return bad_weight(r, wf);
	if (fsa_nfa_grow(a, dst) < 0)
		return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	if (inf)
		return LLR_OK;
	if (fsa_nfa_arc(a, src, dst, lab, (float)-w, r->line) < 0)
		return llr_err_set(r->err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

/* "name: N tokens ... : a (line 3), b (line 7)" into err. */
static int missing_error(reader *r)
{
	size_t n = llr_strmap_size(r->missing);
	llr_buf b = {0};
	const char *ln = r->lines.data;
	for (size_t i = 0; i < n && i < 20; i++) {
		llr_buf_printf(&b, "%s%s (line %s)", i ? ", " : "", llr_strmap_str(r->missing, (int32_t)i), ln);
		ln += strlen(ln) + 1;
	}
	if (n > 20)
		llr_buf_printf(&b, ", ...");
	llr_err_set(r->err, LLR_EFORMAT, "%s: %zu token%s the model cannot produce (not in the vocabulary): %s", r->name, n,
	            n == 1 ? "" : "s", b.data ? b.data : "");
	llr_buf_free(&b);
	return LLR_EFORMAT;
}

llr_fsa *llr_fsa_read(const char *path, const llr_strmap *vocab, llr_err *err)
{
	llr_lines *l = llr_lines_open(path, 0, err);
	if (!l)
		return NULL;
	fsa_nfa a;
	fsa_nfa_init(&a, vocab);
	reader r = {&a, llr_lines_name(l), 0, llr_strmap_new(), {0}, err};
	int rc = r.missing ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	const char *line;
	size_t len;
	llr_buf copy = {0};
	while (rc >= 0 && (rc = llr_lines_next(l, &line, &len, err)) > 0) {
		r.line = llr_lines_lineno(l);
		llr_buf_clear(&copy);
		if (llr_buf_append(&copy, line, len) < 0 || llr_buf_putc(&copy, '\0') < 0)
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		else
			rc = one_line(&r, copy.data);
	}
	if (rc >= 0 && llr_strmap_size(r.missing))
		rc = missing_error(&r);
	llr_fsa *d = rc >= 0 ? fsa_build(&a, r.name, err) : NULL;
	llr_buf_free(&copy);
	llr_buf_free(&r.lines);
	llr_strmap_free(r.missing);
	fsa_nfa_free(&a);
	llr_lines_close(l);
	return d;
}
