/*
 * score - log-probabilities of sentences under an llrnn model, one output
 * line per input line (score(1)).  Reads tokens into batches and asks
 * the one model interface (llr_model_open, llr_model_score) for log p of
 * every word and of </s>, whatever the model's family; here are the
 * options, the output lines and the summary on stderr.  Its other modes
 * are in score/: source/target pairs (pairs.c, llr_model_score_pairs),
 * sentence vectors (embed.c, llr_model_embed) and disc-pairs predictions
 * (task.c); the open-vocabulary summary (open.c) and the counts
 * (stats.c).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "tokcheck.h"
#include "score/disc.h"
#include "score/mix.h"
#include "score/open.h"
#include "score/pairs.h"
#include "score/stats.h"

static const char usage[] =
    "usage: score [-hqv] -m MODEL [-o FILE] [--base e|2|10] [--per-token] [--json]\n"
    "             [--show-computation] [--format tsv|json|srilm] [--debug 0|1]\n"
    "             [--blank-lines skip|score] [--batch N] [--check-norm]\n"
    "             [--norm-samples N] [-s SEED] [--threads N]\n"
    "             [--open | --closed] [--raw] [--strict] [--verify]\n"
    "             [--fsa FILE | --regex PATTERN | --grammar FILE] [file ...]\n"
    "       score -m MODEL -m MODEL ... [--weights w,w,... | --tune-weights FILE [--context-counts FILE]]\n"
    "             [the options above]\n"
    "       score --embed [-q] -m ENCODER [-o FILE] [--tensor] [--batch N] [--threads N] [file ...]\n"
    "       score --task order|next|conj|all [-q] -m ENCODER [-o FILE] [--batch N] [file ...]\n"
    "       score --tags [-q] -m TAGGER [-o FILE] [--beam X] [file ...]\n"
    "       score --version\n";

static const char help[] =
    "Sentence encoders:\n"
    "  --embed                  write one sentence vector a line\n"
    "  --tensor                 with --embed, write a tensor archive instead\n"
    "  --task order|next|conj|all  predict the labels of disc-pairs examples\n"
    "\n"
    "Taggers:\n"
    "  --tags                   write each sentence as word/TAG, with accuracy against gold tags\n"
    "  --beam X                 with --tags, TnT's beam: drop states X times less likely than the best\n"
    "\n"
    "Constrained scoring:\n"
    "  --fsa FILE               score under the automaton in FILE as a decode-time mask\n"
    "  --regex PATTERN          the same under a regular expression over tokens\n"
    "  --grammar FILE           the same under a GBNF grammar\n"
    "\n"
    "Encoder-decoder:\n"
    "  --source SRC             the sources, line by line, of the target lines\n"
    "  --fsa, --regex, --grammar  as above, over the target tokens\n"
    "\n"
    "Options:\n"
    "  -m, --model MODEL        the model (required); several: their mixture\n"
    "  --weights w,w,...        the mixture's weights, one a model, summing to 1 (default uniform)\n"
    "  --tune-weights FILE      fit the mixture's weights by EM on FILE's sentences first\n"
    "  --context-counts FILE    with --tune-weights, weights for each frequency class of the previous\n"
    "                           token, its count in FILE (a vocab(1) file)\n"
    "  -o, --output FILE        write to FILE (atomically; .gz .bz2 .xz .zst compress)\n"
    "  --base e|2|10            the base of the logarithms (default e)\n"
    "  --per-token              add the log-probability of every token\n"
    "  --show-computation       add m_t, the computation of every step (variable-computation cells)\n"
    "  --json                   JSON lines instead of columns (--format json)\n"
    "  --format tsv|json|srilm  the output: columns, JSON lines, or SRILM's -ppl summary\n"
    "  --debug 0|1              with --format srilm: 1 adds SRILM's -debug 1 lines a sentence\n"
    "  --blank-lines skip|score  skip blank lines (default), or score them as </s> alone\n"
    "  --batch N                score N lines in one forward pass (default 1)\n"
    "  --check-norm             check the distribution sums to 1 at every position\n"
    "  --verify                 check every checksum of the model at load\n"
    "  --norm-samples N         with --check-norm on an open LL-RNN: draws outside the vocabulary\n"
    "  -s, --seed SEED          the seed of those draws\n"
    "  --open                   score over all strings (a model with a spelling model)\n"
    "  --closed                 score OOV words as <unk>, even with a spelling model\n"
    "  --threads N              threads (default 1; 0 one per core)\n"
    "  --raw                    tokenise raw text as the model's training text was (tok)\n"
    "  --strict                 input tokenised otherwise than the training text is an error\n"
    "  -q, --quiet              no summary and no progress line\n"
    "  -v, --verbose            notes on stderr\n"
    "  -h, --help               print this help and exit\n"
    "  --version                print the version and exit\n";

#define NORM_TOL 1e-3
#define NORM_SAMPLES 100000  /* an open model's norm check: draws outside the vocabulary */
#define NORM_SEED 20161107    /* and their seed: fixed, so a check repeats */

enum { OPT_BASE = 256,
       OPT_PER_TOKEN,
       OPT_JSON,
       OPT_BATCH,
       OPT_CHECK_NORM,
       OPT_VERIFY,
       OPT_THREADS,
       OPT_EMBED,
       OPT_TASK,
       OPT_TENSOR,
       OPT_OPEN,
       OPT_CLOSED,
       OPT_NORM_SAMPLES,
       OPT_FORMAT,
       OPT_DEBUG,
       OPT_BLANK_LINES,
       OPT_STRICT,
       OPT_RAW,
       OPT_WEIGHTS,
       OPT_TUNE_WEIGHTS,
       OPT_CONTEXT_COUNTS,
       OPT_SHOW_COMPUTATION,
       OPT_TAGS,
       OPT_BEAM,
       OPT_FSA,
       OPT_REGEX,
       OPT_GRAMMAR };

enum { FMT_TSV,
       FMT_JSON,
       FMT_SRILM };

static const struct option longopts[] = {
    {"model", required_argument, NULL, 'm'},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"base", required_argument, NULL, OPT_BASE},
    {"per-token", no_argument, NULL, OPT_PER_TOKEN},
    {"json", no_argument, NULL, OPT_JSON},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"check-norm", no_argument, NULL, OPT_CHECK_NORM},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"embed", no_argument, NULL, OPT_EMBED},
    {"task", required_argument, NULL, OPT_TASK},
    {"tensor", no_argument, NULL, OPT_TENSOR},
    {"open", no_argument, NULL, OPT_OPEN},
    {"closed", no_argument, NULL, OPT_CLOSED},
    {"norm-samples", required_argument, NULL, OPT_NORM_SAMPLES},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"debug", required_argument, NULL, OPT_DEBUG},
    {"blank-lines", required_argument, NULL, OPT_BLANK_LINES},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"raw", no_argument, NULL, OPT_RAW},
    {"weights", required_argument, NULL, OPT_WEIGHTS},
    {"tune-weights", required_argument, NULL, OPT_TUNE_WEIGHTS},
    {"context-counts", required_argument, NULL, OPT_CONTEXT_COUNTS},
    {"show-computation", no_argument, NULL, OPT_SHOW_COMPUTATION},
    {"tags", no_argument, NULL, OPT_TAGS},
    {"beam", required_argument, NULL, OPT_BEAM},
    {"fsa", required_argument, NULL, OPT_FSA},
    {"regex", required_argument, NULL, OPT_REGEX},
    {"grammar", required_argument, NULL, OPT_GRAMMAR},
    {"seed", required_argument, NULL, 's'},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

/* One input line waiting in the batch. */
typedef struct sline {
	llr_buf text; /* the line, tokens NUL-separated after splitting */
	size_t n;     /* words, the sentence markers aside */
	size_t *tok;  /* n token offsets into text */
	int blank;    /* no token at all: skipped unless --blank-lines score */
	int bos, eos; /* a <s> before the words, a </s> after them (markers) */
	const char **words; /* n tokens in text, set before scoring */
	size_t cap;
	const char *file;
	size_t lineno;
} sline;

/* Everything one run of score keeps: options, totals, the model and the
 * batch being filled. */
typedef struct scorer {
	struct {
		int per_token, show_comp, check_norm, quiet, verbose, verify;
		int format, debug, blank_score, base_set;
		int strict, raw; /* --strict, --raw: the model's recorded tokenisation (tokcheck.c) */
		double base_div; /* ln(base) */
		const char *base_name;
		int batch, threads;
		int open; /* LLR_OPEN_* */
		long long norm_samples;
		unsigned long long seed;
		const char *model, *output;
		const char *models[SCORE_MIX_MAX]; /* every -m: several are mixed */
		size_t nmodels;
		const char *weights, *tune; /* --weights, --tune-weights */
		const char *ctx_counts;     /* --context-counts */
		const char *fsa, *regex, *grammar; /* the mask-only mode (llr_model_mask) */
	} opt;
	struct {
		llr_norm_stat norm; /* over every position so far */
		size_t norm_bad;
	} tot;
	sstats all, file; /* the counts of the run, of the current file */
	int unk_warned;   /* an n-gram model without <unk> met an OOV */
	llr_model *m;
	llr_model_info info;
	size_t chars; /* the scored lines' characters, for open scoring (sopen_count) */
	sline *lines; /* opt.batch slots */
	llr_sentence *sent;
	int nlines;
	/* the batch's predictions, line after line: n + 1 a line */
	double *lp;
	double *comp; /* --show-computation: m_t of each prediction's step */
	unsigned char *oov_at;
	size_t ids_cap;
	int flush_batches; /* stdout is a stream written a batch at a time */
	llr_buf outb;
	cli_output out;
	cli_progress prog;
	tokcheck tc;
} scorer;

/* Copy line into slot s and split it into NUL-terminated tokens; a <s>
 * first and a </s> last are markers, taken off the words.  NULL, or what
 * is wrong with the line (a marker elsewhere). */
static const char *take_line(sline *s, const char *line, size_t len, const char *file, size_t lineno)
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
			s->words = ereallocarray(s->words, s->cap, sizeof *s->words);
		}
		s->tok[s->n++] = (size_t)(tok - p);
		p[pos] = '\0'; /* it was a separator, or the end */
		pos += pos < len;
	}
	s->blank = s->n == 0;
	s->bos = s->n > 0 && !strcmp(p + s->tok[0], LLR_BOS);
	s->eos = s->n > (size_t)s->bos && !strcmp(p + s->tok[s->n - 1], LLR_EOS);
	s->n -= (size_t)s->bos + (size_t)s->eos;
	if (s->n) /* a blank line's slot may have no tokens yet (tok NULL) */
		memmove(s->tok, s->tok + s->bos, s->n * sizeof *s->tok);
	for (size_t i = 0; i < s->n; i++) {
		const char *w = p + s->tok[i];
		if (w[0] != '<') /* both markers begin so */
			continue;
		if (!strcmp(w, LLR_BOS))
			return "<s> inside the sentence (a marker only as its first token)";
		if (!strcmp(w, LLR_EOS))
			return "</s> inside the sentence (a marker only as its last token)";
	}
	return NULL;
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
static void put_num(const scorer *sc, llr_buf *b, double v)
{
	int rc;
	if (isfinite(v))
		rc = llr_buf_fixed(b, v / sc->opt.base_div, 4);
	else
		rc = llr_buf_printf(b, sc->opt.format == FMT_JSON ? "null" : "%s", v < 0 ? "-inf" : "nan");
	if (rc < 0)
		cli_oom();
}

static void ensure_ids(scorer *sc, size_t n)
{
	if (n <= sc->ids_cap)
		return;
	size_t cap = n + n / 2;
	free(sc->lp);
	free(sc->comp);
	free(sc->oov_at);
	sc->lp = ereallocarray(NULL, cap, sizeof *sc->lp);
	sc->comp = sc->opt.show_comp ? ereallocarray(NULL, cap, sizeof *sc->comp) : NULL;
	sc->oov_at = emalloc(cap);
	sc->ids_cap = cap;
}

/* The JSON object of line s, whose predictions start at o0. */
static int put_json(const scorer *sc, llr_buf *o, const sline *s, size_t o0, double sum, size_t noov)
{
	const size_t T = s->n + 1;
	int bad = llr_buf_append(o, "{\"logprob\":", 11);
	put_num(sc, o, sum);
	bad |= llr_buf_printf(o, ",\"tokens\":%zu,\"oovs\":%zu", T, noov) < 0;
	if (sc->opt.per_token) {
		bad |= llr_buf_append(o, ",\"per_token\":[", 14);
		for (size_t t = 0; t < T; t++) {
			size_t k = o0 + t;
			bad |= llr_buf_append(o, t ? ",{\"token\":" : "{\"token\":", t ? 10 : 9);
			json_string(o, t < s->n ? s->text.data + s->tok[t] : LLR_EOS);
			bad |= llr_buf_append(o, ",\"logprob\":", 11);
			put_num(sc, o, sc->lp[k]);
			bad |= llr_buf_printf(o, ",\"oov\":%s}", sc->oov_at[k] ? "true" : "false") < 0;
		}
		bad |= llr_buf_putc(o, ']');
	}
	for (size_t t = 0; sc->opt.show_comp && t < T; t++) {
		const char *open = t ? ",{\"token\":" : ",\"computation\":[{\"token\":";
		bad |= llr_buf_append(o, open, strlen(open));
		json_string(o, t ? s->text.data + s->tok[t - 1] : LLR_BOS);
		bad |= llr_buf_append(o, ",\"m\":", 5) | llr_buf_fixed(o, sc->comp[o0 + t], 4) | llr_buf_append(o, "}]", t + 1 < T ? 1 : 2);
	}
	return bad | llr_buf_putc(o, '}');
}

/* "\tTOKEN=", the start of a TOKEN=VALUE field. */
static int put_key(llr_buf *o, const char *w)
{
	return llr_buf_putc(o, '\t') | llr_buf_append(o, w, strlen(w)) | llr_buf_putc(o, '=');
}

/* The tab-separated fields of line s, whose predictions start at o0. */
static int put_tsv(const scorer *sc, llr_buf *o, const sline *s, size_t o0, double sum, size_t noov)
{
	const size_t T = s->n + 1;
	put_num(sc, o, sum);
	int bad = llr_buf_putc(o, '\t') | llr_buf_uint(o, T) | llr_buf_putc(o, '\t') | llr_buf_uint(o, noov);
	for (size_t t = 0; sc->opt.per_token && t < T; t++) {
		const char *w = t < s->n ? s->text.data + s->tok[t] : LLR_EOS;
		bad |= put_key(o, w);
		put_num(sc, o, sc->lp[o0 + t]);
	}
	for (size_t t = 0; sc->opt.show_comp && t < T; t++)
		bad |= put_key(o, t ? s->text.data + s->tok[t - 1] : LLR_BOS) | llr_buf_fixed(o, sc->comp[o0 + t], 4);
	return bad;
}

/* OOV words scored by their spelling (score(1), "Open vocabulary"). */
static int open_scoring(const scorer *sc)
{
	return sc->info.oov == LLR_OOV_SPREAD || sc->info.oov == LLR_OOV_FEATURES;
}

/* What the figures with OOVs count them as (score(1), "Summary"). */
static const char *oov_rule(const scorer *sc)
{
	if (open_scoring(sc))
		return "OOVs scored by their spelling";
	if (sc->info.oov == LLR_OOV_ZERO)
		return "OOVs at log p 0: the model has no <unk>";
	return "OOVs scored as <unk>";
}

/* The line's tokens as read, markers included, for SRILM's -debug 1. */
static void put_sentence(const scorer *sc, const sline *s)
{
	FILE *fp = sc->out.fp;
	const char *sep = "";
	if (s->bos) {
		fputs(LLR_BOS, fp);
		sep = " ";
	}
	for (size_t t = 0; t < s->n; t++, sep = " ")
		fprintf(fp, "%s%s", sep, s->text.data + s->tok[t]);
	if (s->eos)
		fprintf(fp, "%s%s", sep, LLR_EOS);
	fputc('\n', fp);
}

static void write_line(scorer *sc, const sline *s, size_t o0)
{
	llr_buf *o = &sc->outb;
	llr_buf_clear(o);
	if (s->blank && !sc->opt.blank_score) {
		sc->file.blanks++;
		if (sc->opt.format == FMT_SRILM)
			return;
		if ((sc->opt.format == FMT_JSON && llr_buf_append(o, "{\"blank\":true}", 14)) || llr_buf_putc(o, '\n'))
			cli_oom();
		fwrite(o->data, 1, o->len, sc->out.fp);
		return;
	}
	const size_t T = s->n + 1;
	sstats st = {.sentences = 1, .words = s->n};
	for (size_t k = o0; k < o0 + T; k++)
		sstats_token(&st, sc->lp[k], sc->oov_at[k]);
	if (st.oovs && sc->info.oov == LLR_OOV_ZERO && !sc->unk_warned) {
		cli_warn("%s: the model has no <unk>: OOV words (the first at %s:%zu) get log p 0 and cut the context, as in SRILM; ppl and ppl1 leave them out, the figures with OOVs count them at 0",
		         sc->opt.model, s->file, s->lineno);
		sc->unk_warned = 1;
	}
	if (open_scoring(sc))
		sc->chars += sopen_count(s->text.data, s->tok, s->n);
	sstats_add(&sc->file, &st);

	if (sc->opt.format == FMT_SRILM) {
		if (sc->opt.debug) {
			put_sentence(sc, s);
			sstats_srilm(sc->out.fp, NULL, &st);
			fputc('\n', sc->out.fp);
		}
		return;
	}
	int bad = sc->opt.format == FMT_JSON ? put_json(sc, o, s, o0, st.logp, st.oovs) : put_tsv(sc, o, s, o0, st.logp, st.oovs);
	if (bad || llr_buf_putc(o, '\n'))
		cli_oom();
	fwrite(o->data, 1, o->len, sc->out.fp);
}

/* A batch's norm check (ns): it fails when a deviation is beyond
 * NORM_TOL by more than LLR_NORM_Z standard errors of the check's own
 * estimate (none where the sum is exact). */
static void check_norm(scorer *sc, const llr_norm_stat *ns)
{
	const sline *first = &sc->lines[0], *last = &sc->lines[sc->nlines - 1];
	llr_norm_stat *t = &sc->tot.norm;
	if (!(fabs(ns->err) <= fabs(t->err))) {
		t->err = ns->err;
		t->se = ns->se;
	}
	t->lo = !(ns->lo <= t->lo) ? ns->lo : t->lo;
	t->hi = !(ns->hi <= t->hi) ? ns->hi : t->hi;
	if (ns->lo <= NORM_TOL)
		return;
	sc->tot.norm_bad++;
	char se[48] = "";
	if (ns->se > 0)
		snprintf(se, sizeof se, " (standard error %.2g)", ns->se);
	if (sc->nlines == 1)
		cli_warn("%s:%zu: distribution sums to 1 %+.3g%s", first->file, first->lineno, ns->err, se);
	else
		cli_warn("%s:%zu-%zu: distribution sums to 1 %+.3g%s", first->file, first->lineno, last->lineno, ns->err, se);
}

/* Score the pending lines (one llr_model_score call; the library splits
 * it across threads with --threads) and write them. */
static void flush_batch(scorer *sc)
{
	if (sc->nlines == 0)
		return;
	const int B = sc->nlines;
	size_t n = 0;
	for (int b = 0; b < B; b++) {
		sline *s = &sc->lines[b];
		for (size_t t = 0; t < s->n; t++)
			s->words[t] = s->text.data + s->tok[t];
		sc->sent[b] = (llr_sentence){s->words, s->n};
		n += s->n + 1;
	}
	ensure_ids(sc, n);
	llr_norm_stat norm = {0};
	llr_err err = {0};
	int rc = sc->opt.show_comp ? llr_model_score_computation(sc->m, sc->sent, (size_t)B, sc->lp, sc->oov_at, sc->comp, &norm, &err)
	                           : llr_model_score(sc->m, sc->sent, (size_t)B, sc->lp, sc->oov_at, &norm, &err);
	if (rc != LLR_OK)
		cli_die_err(&err);
	if (sc->opt.check_norm)
		check_norm(sc, &norm);
	for (size_t b = 0, o = 0; b < (size_t)B; o += sc->lines[b].n + 1, b++)
		write_line(sc, &sc->lines[b], o);
	if (sc->flush_batches)
		fflush(sc->out.fp);
	sc->nlines = 0;
}

static void score_file(scorer *sc, const char *path)
{
	llr_err err = {0};
	llr_lines *l = llr_lines_open(path, 0, &err);
	if (!l)
		cli_die_err(&err);
	const char *name = llr_lines_name(l);
	const char *line;
	size_t len;
	int rc;
	sc->file = (sstats){0};
	cli_progress_lines(&sc->prog, path, l);
	while ((rc = llr_lines_next(l, &line, &len, &err)) > 0) {
		size_t lineno = llr_lines_lineno(l);
		tokcheck_raw(&sc->tc, &line, &len, name, lineno);
		if (tokcheck_line(&sc->tc, line, len)) {
			flush_batch(sc);
			tokcheck_fail(&sc->tc, name, lineno);
		}
		const char *why = take_line(&sc->lines[sc->nlines], line, len, name, lineno);
		if (why) { /* the lines before it are scored and written first */
			flush_batch(sc);
			fflush(sc->out.fp);
			cli_die("%s:%zu: %s", name, llr_lines_lineno(l), why);
		}
		if (++sc->nlines == sc->opt.batch)
			flush_batch(sc);
		if (cli_progress_due(&sc->prog))
			cli_progress_show(&sc->prog, (long long)(sc->all.sentences + sc->file.sentences), "lines",
			                  (long long)(sc->all.sentences + sc->all.words + sc->file.sentences + sc->file.words),
			                  "tok", cli_progress_fraction(&sc->prog));
	}
	if (rc < 0) {
		flush_batch(sc);
		fflush(sc->out.fp);
		cli_die_err(&err);
	}
	/* Lines keep a pointer to the file name: score what is left first. */
	flush_batch(sc);
	llr_lines_close(l);
	if (sc->opt.format == FMT_SRILM)
		sstats_srilm(sc->out.fp, path, &sc->file);
	sstats_add(&sc->all, &sc->file);
}

static void summary(const scorer *sc)
{
	const sstats *t = &sc->all;
	sstats_summary(t, sc->opt.base_name, sc->opt.base_div, oov_rule(sc));
	if (open_scoring(sc))
		sopen_summary(&sc->info, sc->chars, t->logp, t->logp_oov, t->words, t->sentences, t->oovs);
	if (sc->opt.check_norm) {
		const llr_norm_stat *n = &sc->tot.norm;
		fprintf(stderr, "%s: norm check: max |sum p - 1| = %.3g, %zu batch(es) over %g", cli_prog, fabs(n->err), sc->tot.norm_bad, NORM_TOL);
		fprintf(stderr, sopen_norm_drawn(&sc->info) ? " by more than %g standard errors\n" : "\n", LLR_NORM_Z);
		fprintf(stderr, "%s: norm check: total mass %.9f at the position furthest from 1\n", cli_prog, 1.0 + n->err);
		if (sc->info.oov == LLR_OOV_FEATURES)
			sopen_norm_summary(&sc->info, n, NORM_TOL);
	}
}

static void disc_opt(int c, const char *arg, score_disc_opts *d)
{
	switch (c) {
	case OPT_EMBED: d->embed = 1; break;
	case OPT_TENSOR: d->tensor = 1; break;
	case OPT_TAGS: d->tags = 1; break;
	case OPT_BEAM: d->beam = cli_parse_double(usage, "--beam", arg, 1.0000001, 1e300); break;
	case OPT_TASK:
		if (!strcmp(arg, "order"))
			d->task = LLR_TASK_ORDER;
		else if (!strcmp(arg, "next"))
			d->task = LLR_TASK_NEXT;
		else if (!strcmp(arg, "conj"))
			d->task = LLR_TASK_CONJ;
		else if (!strcmp(arg, "all"))
			d->task = LLR_TASK_ALL;
		else
			cli_usage_error(usage, "--task: unknown task '%s' (order, next, conj, all)", arg);
		break;
	}
}

/* Options that do not go together. */
static void check_args(const scorer *sc)
{
	if (!sc->opt.model)
		cli_usage_error(usage, "no model: -m MODEL is required");
	if ((sc->opt.weights || sc->opt.tune) && sc->opt.nmodels < 2)
		cli_usage_error(usage, "%s: a mixture's option (two -m or more)", sc->opt.weights ? "--weights" : "--tune-weights");
	if (sc->opt.weights && sc->opt.tune)
		cli_usage_error(usage, "--weights and --tune-weights exclude each other");
	if (sc->opt.ctx_counts && !sc->opt.tune)
		cli_usage_error(usage, "--context-counts: weights by context are fitted (give --tune-weights)");
	if (sc->opt.format == FMT_SRILM && (sc->opt.per_token || sc->opt.base_set))
		cli_usage_error(usage, "--format srilm prints SRILM's figures (base 10): no --per-token, no --base but 10");
	if (sc->opt.debug && sc->opt.format != FMT_SRILM)
		cli_usage_error(usage, "--debug goes with --format srilm");
	cli_constraint_one(usage, sc->opt.fsa, sc->opt.regex, sc->opt.grammar);
	if ((sc->opt.fsa || sc->opt.regex || sc->opt.grammar) && sc->opt.nmodels > 1)
		cli_usage_error(usage, "%s: one -m (a mixture is not masked)", sc->opt.fsa ? "--fsa" : sc->opt.regex ? "--regex" : "--grammar");
	if (sc->opt.show_comp && (sc->opt.per_token || sc->opt.format == FMT_SRILM))
		cli_usage_error(usage, "--show-computation: not with %s", sc->opt.per_token ? "--per-token (both write TOKEN=VALUE fields)" : "--format srilm");
}

static void parse_args(scorer *sc, score_disc_opts *dopt, int argc, char **argv)
{
	sc->opt.threads = 1;
	sc->opt.base_div = 1.0;
	sc->opt.base_name = "e";
	sc->opt.batch = 1;
	sc->opt.norm_samples = NORM_SAMPLES;
	sc->opt.seed = NORM_SEED;
	int c;
	while ((c = cli_getopt(argc, argv, ":hm:o:qs:v", longopts, usage)) != -1) {
		switch (c) {
		case 'm':
			if (sc->opt.nmodels == SCORE_MIX_MAX)
				cli_usage_error(usage, "-m: %d models at most", SCORE_MIX_MAX);
			sc->opt.model = sc->opt.models[sc->opt.nmodels++] = optarg;
			break;
		case OPT_WEIGHTS:
			sc->opt.weights = optarg;
			break;
		case OPT_CONTEXT_COUNTS:
			sc->opt.ctx_counts = optarg;
			break;
		case OPT_TUNE_WEIGHTS:
			sc->opt.tune = optarg;
			break;
		case OPT_FSA:
		case OPT_REGEX:
		case OPT_GRAMMAR:
			*(c == OPT_FSA ? &sc->opt.fsa : c == OPT_REGEX ? &sc->opt.regex : &sc->opt.grammar) = optarg;
			break;
		case 'o':
			sc->opt.output = optarg;
			break;
		case 'q':
			sc->opt.quiet = 1;
			break;
		case 'v':
			sc->opt.verbose = 1;
			break;
		case 's':
			sc->opt.seed = (unsigned long long)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX);
			break;
		case OPT_NORM_SAMPLES:
			sc->opt.norm_samples = cli_parse_int(usage, "--norm-samples", optarg, 1, 100000000LL);
			break;
		case OPT_BASE:
			if (!strcmp(optarg, "e")) {
				sc->opt.base_div = 1.0;
			} else if (!strcmp(optarg, "2")) {
				sc->opt.base_div = log(2.0);
			} else if (!strcmp(optarg, "10")) {
				sc->opt.base_div = log(10.0);
			} else {
				cli_usage_error(usage, "--base: must be e, 2 or 10, not '%s'", optarg);
			}
			sc->opt.base_name = optarg;
			sc->opt.base_set = strcmp(optarg, "10") != 0;
			break;
		case OPT_PER_TOKEN:
			sc->opt.per_token = 1;
			break;
		case OPT_SHOW_COMPUTATION:
			sc->opt.show_comp = 1;
			break;
		case OPT_JSON:
			sc->opt.format = FMT_JSON;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "tsv"))
				sc->opt.format = FMT_TSV;
			else if (!strcmp(optarg, "json"))
				sc->opt.format = FMT_JSON;
			else if (!strcmp(optarg, "srilm"))
				sc->opt.format = FMT_SRILM;
			else
				cli_usage_error(usage, "--format: must be tsv, json or srilm, not '%s'", optarg);
			break;
		case OPT_DEBUG:
			sc->opt.debug = (int)cli_parse_int(usage, "--debug", optarg, 0, 1);
			break;
		case OPT_BLANK_LINES:
			if (!strcmp(optarg, "skip"))
				sc->opt.blank_score = 0;
			else if (!strcmp(optarg, "score"))
				sc->opt.blank_score = 1;
			else
				cli_usage_error(usage, "--blank-lines: must be skip or score, not '%s'", optarg);
			break;
		case OPT_BATCH:
			sc->opt.batch = (int)cli_parse_int(usage, "--batch", optarg, 1, 4096);
			break;
		case OPT_CHECK_NORM:
			sc->opt.check_norm = 1;
			break;
		case OPT_VERIFY:
			sc->opt.verify = 1;
			break;
		case OPT_STRICT:
			sc->opt.strict = 1;
			break;
		case OPT_RAW:
			sc->opt.raw = 1;
			break;
		case OPT_THREADS:
			sc->opt.threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024);
			break;
		case OPT_OPEN:
		case OPT_CLOSED:
			if (sc->opt.open != LLR_OPEN_AUTO && sc->opt.open != (c == OPT_OPEN ? LLR_OPEN_ON : LLR_OPEN_OFF))
				cli_usage_error(usage, "--open and --closed exclude each other");
			sc->opt.open = c == OPT_OPEN ? LLR_OPEN_ON : LLR_OPEN_OFF;
			break;
		default:
			disc_opt(c, optarg, dopt);
			break;
		}
	}
	check_args(sc);
}


static void scorer_free(scorer *sc)
{
	for (int b = 0; b < sc->opt.batch; b++) {
		llr_buf_free(&sc->lines[b].text);
		free(sc->lines[b].tok);
		free(sc->lines[b].words);
	}
	free(sc->lines);
	free(sc->sent);
	free(sc->lp);
	free(sc->comp);
	free(sc->oov_at);
	llr_buf_free(&sc->outb);
	tokcheck_free(&sc->tc);
	llr_model_close(sc->m);
}


/* The sentence modes (score/embed.c, score/task.c, score/tags.c). */
static int sentence_mode(const scorer *sc, score_disc_opts *dopt, int argc, char **argv)
{
	if (dopt->embed + !!dopt->task + dopt->tags > 1)
		cli_usage_error(usage, "--embed, --task and --tags exclude each other");
	if (dopt->tensor && !dopt->embed)
		cli_usage_error(usage, "--tensor goes with --embed");
	if (dopt->beam && !dopt->tags)
		cli_usage_error(usage, "--beam goes with --tags");
	if (sc->opt.strict || sc->opt.raw)
		cli_usage_error(usage, "%s: not with --embed, --task or --tags (a language model's option)", sc->opt.strict ? "--strict" : "--raw");
	if (sc->opt.nmodels > 1)
		cli_usage_error(usage, "one -m with --embed, --task or --tags (several are mixed: language models only)");
	if (sc->opt.show_comp)
		cli_usage_error(usage, "--show-computation: not with --embed, --task or --tags (a language model's option)");
	if (sc->opt.fsa || sc->opt.regex || sc->opt.grammar)
		cli_usage_error(usage, "--fsa, --regex, --grammar: not with --embed, --task or --tags (a language model's option)");
	if (dopt->tags && (sc->opt.per_token || sc->opt.format != FMT_TSV || sc->opt.base_set || sc->opt.check_norm))
		cli_usage_error(usage, "--tags writes word/TAG lines: no --per-token, --json, --format, --base or --check-norm");
	dopt->model = sc->opt.model;
	dopt->output = sc->opt.output;
	dopt->quiet = sc->opt.quiet;
	dopt->batch = sc->opt.batch > 1 ? sc->opt.batch : 64;
	llr_blas_set_threads(sc->opt.threads);
	if (dopt->tags)
		return score_tags(dopt, argc - optind, argv + optind);
	return dopt->embed ? score_embed(dopt, argc - optind, argv + optind) : score_task(dopt, argc - optind, argv + optind);
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "score");
	llr_blas_set_fixed_order(1); /* the scores do not depend on --batch or --threads */
	cli_set_help(help);
	if (score_pairs_wanted(argc, argv)) /* source/target pairs (score/pairs.c) */
		return score_pairs_main(argc, argv);
	scorer sc = {0};
	score_disc_opts dopt = {0};
	parse_args(&sc, &dopt, argc, argv);
	if (dopt.embed || dopt.task || dopt.tags || dopt.beam)
		return sentence_mode(&sc, &dopt, argc, argv);
	llr_model_opts mo = llr_model_opts_default();
	mo.open = sc.opt.open;
	mo.check_norm = sc.opt.check_norm;
	mo.verify = sc.opt.verify;
	mo.norm_samples = sc.opt.norm_samples;
	mo.seed = sc.opt.seed;
	llr_err err = {0};
	if (sc.opt.nmodels > 1) {
		sc.m = score_mix_open(sc.opt.nmodels, sc.opt.models, sc.opt.weights, sc.opt.tune, sc.opt.ctx_counts, &mo,
		                      sc.opt.quiet);
		sc.opt.model = "the mixture";
	} else if (llr_model_open(sc.opt.model, &mo, &sc.m, &err) != LLR_OK) {
		cli_die_err(&err);
	}
	llr_model_on_notice(sc.m, cli_notice, NULL);
	if (llr_model_score(sc.m, NULL, 0, NULL, NULL, NULL, &err) != LLR_OK) /* a family that cannot score yet */
		cli_die_err(&err);
	if ((sc.opt.fsa || sc.opt.regex || sc.opt.grammar) && llr_model_mask(sc.m, sc.opt.fsa, sc.opt.regex, sc.opt.grammar, &err) < 0)
		cli_die_err(&err);
	llr_model_describe(sc.m, &sc.info);
	if (sc.opt.show_comp && llr_model_score_computation(sc.m, NULL, 0, NULL, NULL, NULL, NULL, &err) != LLR_OK)
		cli_die_err(&err);
	if (sc.opt.verbose && llr_model_meta(sc.m))
		cli_note_checksums(sc.opt.model, llr_model_meta(sc.m));
	tokcheck_init(&sc.tc, sc.opt.model, llr_model_meta(sc.m), sc.opt.strict, sc.opt.raw);
	llr_blas_set_threads(sc.opt.threads);
	if (llr_blas_reserve(&err) < 0) /* a buffer for each scoring thread, too */
		cli_die_err(&err);
	/* With --threads N > 1 and --batch > 1 a batch is split into up to N
	 * groups of lines, scored at the same time with single-threaded
	 * BLAS: on the small per-step products of scoring, OpenBLAS's own
	 * threads gain little and spin. */
	if (sc.opt.batch > 1 && llr_blas_threads() > 1) {
		if (llr_model_set_threads(sc.m, MIN(llr_blas_threads(), sc.opt.batch), &err) < 0)
			cli_die_err(&err);
		llr_blas_set_threads(1);
	}
	sc.lines = ecalloc((size_t)sc.opt.batch, sizeof *sc.lines);
	sc.sent = ecalloc((size_t)sc.opt.batch, sizeof *sc.sent);
	cli_output_open_lines(&sc.out, sc.opt.output);
	/* A batch's lines are written together (a write each, not a line):
	 * a coprocess reads them once the batch is full and scored anyway. */
	if (sc.opt.batch > 1 && sc.out.fp == stdout && cli_stdout_stream()) {
		setvbuf(stdout, NULL, _IOFBF, BUFSIZ);
		sc.flush_batches = 1;
	}
	cli_progress_init(&sc.prog, sc.opt.quiet, sc.out.fp == stdout);
	cli_progress_inputs(&sc.prog, argv + optind, argc - optind);

	if (optind == argc) {
		score_file(&sc, "-");
	} else {
		for (int i = optind; i < argc; i++)
			score_file(&sc, argv[i]);
	}
	cli_progress_clear();
	if (sc.opt.strict) /* a mismatch fails before the output is in place */
		tokcheck_end(&sc.tc);
	cli_output_close(&sc.out);
	if (!sc.opt.quiet)
		summary(&sc);
	if (!sc.opt.strict)
		tokcheck_end(&sc.tc);
	size_t bad = sc.tot.norm_bad;
	int rows_bad = sopen_norm_failed(&sc.info);
	scorer_free(&sc);
	if (rows_bad)
		cli_die("norm check failed: a string's row is not the row its class of the exact sum has");
	if (bad)
		cli_die("norm check failed at %zu batch(es): the distribution does not sum to 1 within %g", bad, NORM_TOL);
	return 0;
}
