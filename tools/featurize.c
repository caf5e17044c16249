/*
 * featurize - word features phi/psi and the background b for a
 * vocabulary, plus the corpus as token ids: the tensor stream train reads
 * (kind "features"), or with --dump the lexicon as text.  The spec is
 * man/featurize.1; the stream layout is lib/lexicon/lexicon.c's.  The
 * feature table and the sources that read files (CoNLL-U, lexicons,
 * word/TAG corpora) live in tools/featurize_src.c (featurize_src.h); this
 * file holds the vocabulary, the rows, the columns, the background and
 * the output, one function per phase of main.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "featurize_source.h"
#include "featurize_spell.h"
#include "featurize_src.h"

static const char usage[] =
    "usage: featurize [-hlq] [--nfkc] [--lang en|fr] [--top M] [--conllu FILE] [--lexicon FILE] [--tagged FILE]\n"
    "                 [--ortho] [--suffix N] [--char-ngrams A-B] [--hunspell PATH]\n"
    "                 [--min-feature-count N] [--input-features LIST] [--lexicon-scope vocab|all]\n"
    "                 [--vocab FILE | --vocab-from corpus|corpus+lexicon] [--extra FILE]\n"
    "                 [--background uniform|unigram[:K]|ngram:LM|FILE] [--spelling N [--signature-samples N] [--no-oov-features]]\n"
    "                 [--dump] [-o FILE] [FILE ...]\n"
    "       featurize [options] --source SRC [-o FILE] TARGET\n"
    "       featurize --version\n";

static const char help[] =
    "Feature sources:\n"
    "  --top M                  identity features TOP:word for the M most frequent words\n"
    "  --conllu FILE            a CoNLL-U treebank: each form's tags (repeatable)\n"
    "  --lexicon FILE           a token<TAB>features lexicon (repeatable)\n"
    "  --tagged FILE            a word/TAG corpus, file or archive (repeatable)\n"
    "  --ortho                  orthographic classes (number, capitalised, punctuation...)\n"
    "  --suffix N               suffixes of 1 to N characters\n"
    "  --char-ngrams A-B        character n-grams of A to B characters\n"
    "  --hunspell PATH          morphological analyses from a hunspell dictionary\n"
    "\n"
    "Options:\n"
    "  -h, --help               print this help and exit\n"
    "  --version                print the version and exit\n"
    "  -l, --lowercase          the corpus was lowercased (tok -l): record it, lowercase the lexicons\n"
    "  -q, --quiet              no progress line and no summary\n"
    "  --nfkc                   the corpus is in NFKC (tok --nfkc): record it, NFKC the lexicons\n"
    "  --lang en|fr             clitics or elisions were split off (tok --lang): record it\n"
    "  --min-feature-count N    drop features found on fewer than N types\n"
    "  --lexicon-scope vocab|all  which lexicon entries count (default all)\n"
    "  --input-features LIST    build psi from these sources only (default psi = phi)\n"
    "  --vocab FILE             fix the vocabulary to a vocab(1) file\n"
    "  --vocab-from corpus|corpus+lexicon  whether lexicon words join the vocabulary\n"
    "  --extra FILE             add the types of another token file (repeatable)\n"
    "  --background B           uniform, unigram[:K] (default), ngram:LM or a FILE\n"
    "  --spelling N             add a character N-gram spelling model (open vocabulary)\n"
    "  --no-oov-features        with --spelling, no OOV: features\n"
    "  --signature-samples N    draw N strings for the signature masses\n"
    "  --dump                   write the lexicon as text instead of the stream\n"
    "  --source SRC             parallel data: SRC's lines are the sources of the target's\n"
    "  -o, --output FILE        write to FILE (atomically; .gz .bz2 .xz .zst compress)\n";

#define CHUNK_IDS ((size_t)1 << 20) /* ids per ids/NNNNNN member, at most (whole sentences) */
#define FZ_SIG_SAMPLES 200000       /* draws when the features are beyond the exact pass */
#define FZ_SIG_SEED 14              /* the draws are seeded: a run repeats */

/* ------------------------------------------------------- token input */

/* Sentences of token files, one after another; the corpus's reader
 * draws the progress line (prog). */
typedef struct {
	char **files;
	int n, i;
	llr_lines *l;
	cli_progress *prog;
	long long lines, tokens; /* for the progress line */
} fz_tok_in;

/* 1 with a non-empty line in the canonical form (llr_tokens_check), 0
 * at the end of the last file. */
static int fz_tok_next(fz_tok_in *t, const char **line, size_t *len)
{
	llr_err e = {0};
	for (;;) {
		if (!t->l) {
			if (t->i >= t->n) {
				if (t->prog)
					cli_progress_clear();
				return 0;
			}
			const char *path = t->files[t->i++];
			if (!(t->l = llr_lines_open(path, 0, &e)))
				cli_die_err(&e);
			if (t->prog)
				cli_progress_lines(t->prog, path, t->l);
		}
		int rc = llr_lines_next(t->l, line, len, &e);
		if (rc < 0)
			cli_die_err(&e);
		if (rc == 0) {
			llr_lines_close(t->l);
			t->l = NULL;
			continue;
		}
		if (*len == 0)
			continue;
		if (llr_tokens_check(*line, *len, &e) < 0)
			cli_die("%s:%zu: %s", llr_lines_name(t->l), llr_lines_lineno(t->l), e.msg);
		if (t->prog && t->prog->on) {
			size_t pos = 0, tl;
			const char *tok;
			t->lines++;
			while (llr_token_next(*line, *len, &pos, &tok, &tl))
				t->tokens++;
			if (cli_progress_due(t->prog))
				cli_progress_show(t->prog, t->lines, "lines", t->tokens, "tok", cli_progress_fraction(t->prog));
		}
		return 1;
	}
}

static void fz_tok_close(fz_tok_in *t)
{
	llr_lines_close(t->l);
	t->l = NULL;
}

static char *fz_stdin_only[] = {"-"};

/* ------------------------------------------------------------ options */

enum { FZ_BG_UNIGRAM,
       FZ_BG_UNIFORM,
       FZ_BG_FILE,
       FZ_BG_NGRAM };

typedef struct {
	const char *output;
	int dump;
	int quiet;
	int top;
	int min_count;
	int vocab_lex; /* --vocab-from corpus+lexicon */
	int lex_vocab; /* --lexicon-scope vocab: lexicon entries for vocabulary words only */
	const char *vocab_file;
	char **extra;
	int nextra;
	int bg;              /* --background: FZ_BG_* */
	double bg_k;         /* FZ_BG_UNIGRAM: the count added to every word */
	const char *bg_file; /* FZ_BG_FILE: token<TAB>probability; FZ_BG_NGRAM: the n-gram */
	llr_tokprof tok;     /* how the corpus was tokenised: -l, --nfkc, --lang, else unknown */
	const char *hunspell;
	const char *source; /* --source: parallel data (featurize_source.c) */
	int spelling;       /* --spelling N: the character order, 0 = none (featurize_spell.c) */
	long sig_samples;   /* --signature-samples N: draws for the signature masses */
	int no_oov;         /* --no-oov-features: no FZ_OOV features with --spelling */
	unsigned in_mask;   /* sources of psi; 0 = psi is phi */
	char **files;
	int nfiles;
} fz_opts;

static void fz_add_str(char ***v, int *n, char *s)
{
	char **p = llr_reallocarray(*v, (size_t)*n + 1, sizeof *p);
	if (!p)
		cli_oom();
	p[(*n)++] = s;
	*v = p;
}

static unsigned fz_parse_sources(const char *s)
{
	unsigned mask = 0;
	const char *p = s;
	while (*p) {
		const char *q = strchr(p, ',');
		size_t l = q ? (size_t)(q - p) : strlen(p);
		int k;
		for (k = 0; k < FZ_NSRC; k++)
			if (strlen(fz_src_names[k]) == l && !strncmp(p, fz_src_names[k], l))
				break;
		if (k == FZ_NSRC)
			cli_usage_error(usage, "--input-features: unknown source '%.*s' (top conllu tagged lexicon hunspell ortho suffix ngrams oov)",
			                (int)l, p);
		mask |= 1u << k;
		p += l + (q ? 1 : 0);
	}
	if (!mask)
		cli_usage_error(usage, "--input-features: empty list");
	return mask;
}

/* --lang en|fr: the clitics or elisions tok split off. */
static int fz_parse_lang(const char *s)
{
	if (!strcmp(s, "en"))
		return LLR_CLITICS_EN;
	if (!strcmp(s, "fr"))
		return LLR_CLITICS_FR;
	cli_usage_error(usage, "--lang: unknown language '%s' (use en or fr)", s);
}

/* --vocab-from corpus|corpus+lexicon: 1 when the lexicons' words join. */
static int fz_parse_vocab_from(const char *s)
{
	if (!strcmp(s, "corpus"))
		return 0;
	if (!strcmp(s, "corpus+lexicon"))
		return 1;
	cli_usage_error(usage, "--vocab-from: want corpus or corpus+lexicon, got '%s'", s);
}

static void fz_parse_ngrams(const char *s, llr_extractors *x)
{
	char *end;
	long a = strtol(s, &end, 10), b = a;
	if (end != s && *end == '-') {
		const char *p = end + 1;
		b = strtol(p, &end, 10);
		if (end == p)
			b = -1;
	}
	if (end == s || *end || a < 1 || b < a || b > 10)
		cli_usage_error(usage, "--char-ngrams: want A-B with 1 <= A <= B <= 10, got '%s'", s);
	x->ngram_min = (int)a;
	x->ngram_max = (int)b;
}

/* ---------------------------------------------------------- vocabulary */

/* Read the corpus: types in first-seen order (z->ctypes), their counts,
 * and the text as type ids with -1 at each sentence end. */
typedef struct {
	llr_vocab *types; /* unsorted: ids in first-seen order */
	int32_t *ids;
	size_t nids, idcap;
	int64_t sentences, tokens;
} fz_corpus;

static void fz_corpus_push(fz_corpus *c, int32_t id)
{
	if (c->nids == c->idcap) {
		c->idcap = c->idcap ? c->idcap * 2 : 1 << 16;
		c->ids = llr_reallocarray(c->ids, c->idcap, sizeof *c->ids);
		if (!c->ids)
			cli_die("out of memory (corpus of %zu tokens)", c->nids);
	}
	c->ids[c->nids++] = id;
}

static void fz_corpus_read(fz_corpus *c, fz_tok_in *t)
{
	const char *line;
	size_t len;
	c->types = llr_vocab_new();
	if (!c->types)
		cli_oom();
	while (fz_tok_next(t, &line, &len)) {
		size_t pos = 0, tl;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			int32_t id = llr_vocab_add(c->types, tok, tl, 1);
			if (id < 0)
				cli_oom();
			if (llr_vocab_size(c->types) > (size_t)LLR_MAX_VOCAB - 2)
				cli_die("%s:%zu: more than %d types (the limit)", llr_lines_name(t->l),
				        llr_lines_lineno(t->l), LLR_MAX_VOCAB - 2);
			c->tokens++;
			fz_corpus_push(c, id);
		}
		fz_corpus_push(c, -1);
		c->sentences++;
	}
}

static void fz_add_type(llr_vocab *v, const char *s, size_t len, int64_t count)
{
	if (llr_vocab_add(v, s, len, count) < 0)
		cli_oom();
	if (llr_vocab_size(v) > (size_t)LLR_MAX_VOCAB)
		cli_die("more than %d types (the limit)", LLR_MAX_VOCAB);
}

/* ----------------------------------------------------------------- rows */

typedef struct {
	int32_t *c;
	float *v;
	size_t n, cap;
	int64_t *rowptr; /* V + 1 */
} fz_rows;

static void fz_row_put(fz_rows *r, int32_t c, float v)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1 << 16;
		r->c = llr_reallocarray(r->c, r->cap, sizeof *r->c);
		r->v = llr_reallocarray(r->v, r->cap, sizeof *r->v);
		if (!r->c || !r->v)
			cli_die("out of memory (%zu feature entries)", r->n);
	}
	r->c[r->n] = c;
	r->v[r->n++] = v;
}

typedef struct {
	fz_state *z;
	fz_rows *r;
	int src;
	const char *word;
} fz_emit_ctx;

static int fz_emit_row(const char *name, size_t len, float value, void *ctx)
{
	fz_emit_ctx *e = ctx;
	const char *why;
	int32_t f = fz_feature(e->z, name, len, e->src, &why);
	if (f < 0)
		cli_die("word '%s': %s feature '%.*s': %s", e->word, fz_src_names[e->src], (int)MIN(len, 80), name,
		        why);
	fz_row_put(e->r, f, value);
	return 0;
}

static int fz_cmp_col(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	return (*x > *y) - (*x < *y);
}

/* ------------------------------------------------------------ background */

/* --background, parsed once: uniform, unigram[:K] (K defaults to 0.5)
 * or a file. */
static void fz_parse_background(const char *s, fz_opts *o)
{
	o->bg_k = 0.5;
	if (!strcmp(s, "uniform")) {
		o->bg = FZ_BG_UNIFORM;
	} else if (!strncmp(s, "unigram", 7) && (s[7] == '\0' || s[7] == ':')) {
		o->bg = FZ_BG_UNIGRAM;
		if (s[7] == ':')
			o->bg_k = cli_parse_double(usage, "--background unigram:K", s + 8, 1e-9, 1e9);
	} else if (!strncmp(s, "ngram:", 6)) {
		o->bg = FZ_BG_NGRAM;
		o->bg_file = s + 6;
		if (!*o->bg_file)
			cli_usage_error(usage, "--background ngram: needs a file");
	} else {
		o->bg = FZ_BG_FILE;
		o->bg_file = s;
	}
}

/* --background ngram:LM: b(K; x) from an ARPA or binary n-gram, carried
 * in the stream; logb is its unigram level.  Words of the vocabulary the
 * n-gram lacks take its <unk> probability (said on stderr). */
static void fz_background_ngram(const fz_opts *o, llr_lexicon *lex)
{
	llr_err e = {0};
	if (llr_ngram_load(o->bg_file, &lex->ngram, &e) < 0)
		cli_die_err(&e);
	if (!(lex->bg = llr_ngram_bg_new(lex->ngram, lex->vocab, &e)))
		cli_die("%s: %s", o->bg_file, e.msg);
	memcpy(lex->logb, llr_ngram_bg_logb1(lex->bg), llr_strmap_size(lex->vocab) * sizeof *lex->logb);
	llr_meta_set(lex->meta, "background", "ngram");
	llr_meta_setf(lex->meta, "background_absent", "%d", llr_ngram_bg_absent(lex->bg));
	if (llr_ngram_bg_absent(lex->bg))
		fprintf(stderr, "%s: %s: %d vocabulary words are not in the n-gram: they take its <unk> probability\n", cli_prog, o->bg_file,
		        llr_ngram_bg_absent(lex->bg));
}

static void fz_background(const fz_opts *o, const llr_vocab *v, float *logb, llr_meta *m)
{
	size_t V = llr_vocab_size(v);
	if (o->bg == FZ_BG_UNIFORM) {
		for (size_t i = 0; i < V; i++)
			logb[i] = (float)-log((double)V);
		llr_meta_set(m, "background", "uniform");
		return;
	}
	if (o->bg == FZ_BG_UNIGRAM) {
		double k = o->bg_k;
		double N = 0;
		for (size_t i = 0; i < V; i++)
			N += (double)llr_vocab_count(v, (int32_t)i);
		for (size_t i = 0; i < V; i++)
			logb[i] = (float)log(((double)llr_vocab_count(v, (int32_t)i) + k) / (N + k * (double)V));
		llr_meta_setf(m, "background", "unigram:%g", k);
		return;
	}
	/* token<TAB>probability, every vocabulary word present. */
	llr_err e = {0};
	llr_lines *l = llr_lines_open(o->bg_file, 0, &e);
	if (!l)
		cli_die_err(&e);
	double *p = llr_calloc(V, sizeof *p);
	unsigned char *seen = llr_calloc(V, 1);
	if (!p || !seen)
		cli_oom();
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, &e)) > 0) {
		if (len == 0)
			continue;
		const char *name = llr_lines_name(l);
		size_t no = llr_lines_lineno(l);
		const char *tab = memchr(line, '\t', len);
		if (!tab || tab == line)
			cli_die("%s:%zu: expected token<TAB>probability", name, no);
		char *end;
		double x = strtod(tab + 1, &end);
		if (end == tab + 1 || end != line + len || !isfinite(x) || x < 0)
			cli_die("%s:%zu: bad probability '%.*s' (want a finite number >= 0)", name, no,
			        (int)MIN((size_t)(line + len - tab - 1), 40), tab + 1);
		int32_t id = llr_vocab_id(v, line, (size_t)(tab - line));
		if (id < 0)
			continue;
		if (seen[id])
			cli_die("%s:%zu: '%.*s' given twice", name, no, (int)(tab - line), line);
		if (x == 0)
			cli_die("%s:%zu: zero probability for vocabulary word '%.*s'", name, no, (int)(tab - line), line);
		seen[id] = 1;
		p[id] = x;
	}
	if (rc < 0)
		cli_die_err(&e);
	double sum = 0;
	for (size_t i = 0; i < V; i++) {
		if (!seen[i])
			cli_die("%s: no probability for vocabulary word '%s' (every word, </s> and <unk> included, needs one)",
			        llr_lines_name(l), llr_vocab_token(v, (int32_t)i));
		sum += p[i];
	}
	for (size_t i = 0; i < V; i++)
		logb[i] = (float)log(p[i] / sum);
	llr_meta_set(m, "background", "file");
	llr_lines_close(l);
	free(p);
	free(seen);
}

/* --------------------------------------------------------------- output */

/* The stream being written to a file: removed if we exit on an error. */
static llr_tensor_writer *fz_writer;

static void fz_abort_writer(void)
{
	if (fz_writer)
		llr_tw_abort(fz_writer);
	fz_writer = NULL;
}

/* The ids/ members being written: CHUNK_IDS ids at most each, whole
 * sentences per member whenever a sentence fits in one. */
typedef struct fz_ids {
	llr_tensor_writer *w;
	int32_t *buf;
	size_t n;
	int chunk;
} fz_ids;

static void fz_ids_flush(fz_ids *d)
{
	llr_err e = {0};
	char name[32];
	int64_t shape[1] = {(int64_t)d->n};
	if (!d->n)
		return;
	snprintf(name, sizeof name, "ids/%06d", d->chunk++);
	if (llr_tw_put_raw(d->w, name, LLR_I32, 1, shape, d->buf, &e) < 0)
		cli_die_err(&e);
	d->n = 0;
}

/* A sentence of len ids (its </s> included) begins: it starts a new
 * member unless it fits in this one. */
static void fz_ids_sentence(fz_ids *d, size_t len)
{
	if (d->n && d->n + len > CHUNK_IDS)
		fz_ids_flush(d);
}

static void fz_ids_put(fz_ids *d, int32_t id)
{
	if (d->n == CHUNK_IDS)
		fz_ids_flush(d);
	d->buf[d->n++] = id;
}

static void fz_dump(const fz_opts *o, const llr_lexicon *x)
{
	cli_output out;
	cli_output_open(&out, o->output);
	const llr_csr *m = x->phi;
	for (int32_t i = 0; i < m->rows; i++) {
		fputs(llr_strmap_str(x->vocab, i), out.fp);
		fputc('\t', out.fp);
		for (int32_t k = m->indptr[i]; k < m->indptr[i + 1]; k++) {
			const char *f = llr_strmap_str(x->features, m->indices[k]);
			if (k > m->indptr[i])
				fputc(' ', out.fp);
			fputs(f, out.fp);
			if (m->data[k] != 1.0f || strchr(f, '='))
				fprintf(out.fp, "=%.9g", (double)m->data[k]);
		}
		if (fputc('\n', out.fp) == EOF)
			break;
	}
	cli_output_close(&out);
}

/* ------------------------------------------------------------ the run */

/* What one run builds, phase by phase (the numbered steps of main). */
typedef struct fz_run {
	fz_opts o;
	fz_state z;
	llr_extractors ex;
	llr_morph *morph; /* --hunspell */
	/* 2. vocabulary */
	llr_vocab *v;      /* sorted: its ids are the stream's */
	fz_corpus cp;      /* the corpus, when it makes the vocabulary */
	fz_tok_in tin;     /* the token files */
	cli_progress prog; /* reading them */
	int streaming;     /* --vocab: the corpus is mapped as it is read */
	const char *first; /* streaming: its first sentence, read already */
	size_t first_len;
	int32_t V, eos, unk;
	/* 2b. --spelling with --vocab: the corpus's types outside the
	 * vocabulary, its tokens outside it (-1: not counted) and its
	 * events; each type's signature (-1: none) */
	llr_strmap *outside;
	int64_t out_unk, out_events;
	int32_t *out_sig;
	/* 3. rows, in vocabulary order, then the types outside it */
	fz_rows r;
	/* 4. columns */
	int32_t Fall, F; /* features seen, kept */
	int64_t *df;     /* vocabulary words with each feature */
	int32_t *col;    /* phi column of each feature seen, -1 dropped */
	int32_t *col_in; /* psi column, -1 not an input feature */
	int64_t per_src[FZ_NSRC];
	unsigned used; /* sources with a kept feature */
	int own_psi;   /* psi differs from phi */
	/* 5. the lexicon */
	llr_lexicon lex;
	unsigned char *covered; /* words with a non-TOP feature */
	int64_t word_tok, nonid_tok;
	fz_parallel par; /* --source: the source side */
	/* 7. the stream of ids */
	int64_t stream_tok, stream_unk, stream_cov, stream_sent, stream_sig;
} fz_run;

static void fz_parse_opts(int argc, char **argv, fz_run *R)
{
	enum {
		O_TOP = 256,
		O_CONLLU,
		O_LEXICON,
		O_TAGGED,
		O_ORTHO,
		O_SUFFIX,
		O_NGRAMS,
		O_HUNSPELL,
		O_MINCOUNT,
		O_INPUT,
		O_VOCAB,
		O_VOCABFROM,
		O_EXTRA,
		O_BACKGROUND,
		O_DUMP,
		O_SOURCE,
		O_SPELLING,
		O_SIGSAMPLES,
		O_LEXSCOPE,
		O_NOOOV,
		O_NFKC,
		O_LANG
	};
	static const struct option lopts[] = {
	    {"top", required_argument, 0, O_TOP},
	    {"conllu", required_argument, 0, O_CONLLU},
	    {"lexicon", required_argument, 0, O_LEXICON},
	    {"tagged", required_argument, 0, O_TAGGED},
	    {"ortho", no_argument, 0, O_ORTHO},
	    {"suffix", required_argument, 0, O_SUFFIX},
	    {"char-ngrams", required_argument, 0, O_NGRAMS},
	    {"hunspell", required_argument, 0, O_HUNSPELL},
	    {"min-feature-count", required_argument, 0, O_MINCOUNT},
	    {"input-features", required_argument, 0, O_INPUT},
	    {"vocab", required_argument, 0, O_VOCAB},
	    {"vocab-from", required_argument, 0, O_VOCABFROM},
	    {"extra", required_argument, 0, O_EXTRA},
	    {"background", required_argument, 0, O_BACKGROUND},
	    {"dump", no_argument, 0, O_DUMP},
	    {"source", required_argument, 0, O_SOURCE},
	    {"spelling", required_argument, 0, O_SPELLING},
	    {"signature-samples", required_argument, 0, O_SIGSAMPLES},
	    {"lexicon-scope", required_argument, 0, O_LEXSCOPE},
	    {"no-oov-features", no_argument, 0, O_NOOOV},
	    {"lowercase", no_argument, 0, 'l'},
	    {"nfkc", no_argument, 0, O_NFKC},
	    {"lang", required_argument, 0, O_LANG},
	    {"output", required_argument, 0, 'o'},
	    {"quiet", no_argument, 0, 'q'},
	    CLI_COMMON_OPTIONS,
	    {0, 0, 0, 0},
	};
	fz_opts *o = &R->o;
	const char *bg = "unigram";
	int c;
	llr_tokprof_unknown(&o->tok);
	while ((c = cli_getopt(argc, argv, ":hlo:q", lopts, usage)) != -1) {
		switch (c) {
		case 'l': R->z.lower = o->tok.lower = 1; break;
		case 'q': o->quiet = 1; break;
		case O_NFKC: R->z.nfkc = 1; o->tok.norm = LLR_NORM_NFKC; break;
		case O_LANG: o->tok.clitics = fz_parse_lang(optarg); break;
		case 'o': o->output = optarg; break;
		case O_TOP: o->top = (int)cli_parse_int(usage, "--top", optarg, 0, LLR_MAX_VOCAB); break;
		case O_CONLLU: fz_add_src(&R->z, FZ_CONLLU, optarg); break;
		case O_LEXICON: fz_add_src(&R->z, FZ_LEXICON, optarg); break;
		case O_TAGGED: fz_add_src(&R->z, FZ_TAGGED, optarg); break;
		case O_ORTHO: R->ex.ortho = 1; break;
		case O_SUFFIX: R->ex.suffix = (int)cli_parse_int(usage, "--suffix", optarg, 1, 16); break;
		case O_NGRAMS: fz_parse_ngrams(optarg, &R->ex); break;
		case O_HUNSPELL: o->hunspell = optarg; break;
		case O_MINCOUNT: o->min_count = (int)cli_parse_int(usage, "--min-feature-count", optarg, 1, INT32_MAX); break;
		case O_INPUT: o->in_mask = fz_parse_sources(optarg); break;
		case O_VOCAB: o->vocab_file = optarg; break;
		case O_VOCABFROM: o->vocab_lex = fz_parse_vocab_from(optarg); break;
		case O_EXTRA: fz_add_str(&o->extra, &o->nextra, optarg); break;
		case O_BACKGROUND: bg = optarg; break;
		case O_DUMP: o->dump = 1; break;
		case O_SOURCE: o->source = optarg; break;
		case O_SPELLING: o->spelling = (int)cli_parse_int(usage, "--spelling", optarg, 1, LLR_NGRAM_MAX_ORDER); break;
		case O_LEXSCOPE:
			if (strcmp(optarg, "vocab") && strcmp(optarg, "all"))
				cli_usage_error(usage, "--lexicon-scope: want vocab or all, got '%s'", optarg);
			o->lex_vocab = !strcmp(optarg, "vocab");
			break;
		case O_SIGSAMPLES: o->sig_samples = (long)cli_parse_int(usage, "--signature-samples", optarg, 1, 100000000); break;
		case O_NOOOV: o->no_oov = 1; break;
		}
	}
	o->files = argv + optind;
	o->nfiles = argc - optind;
	if (o->nfiles == 0) {
		o->files = fz_stdin_only;
		o->nfiles = 1;
	}
	fz_parse_background(bg, o);
	if (o->sig_samples && !o->spelling)
		cli_usage_error(usage, "--signature-samples: goes with --spelling N");
	if (o->no_oov && !o->spelling)
		cli_usage_error(usage, "--no-oov-features: goes with --spelling N");
	if (o->lex_vocab && o->vocab_lex)
		cli_usage_error(usage, "--lexicon-scope vocab: not with --vocab-from corpus+lexicon (every lexicon word is then in the vocabulary)");
	if (o->vocab_lex && !R->z.nsrc)
		cli_usage_error(usage, "--vocab-from corpus+lexicon needs a lexicon source (--conllu, --lexicon, --tagged)");
	if (o->spelling && o->dump)
		cli_usage_error(usage, "--spelling: not with --dump (the dump holds the features only)");
	if (o->source && o->dump)
		cli_usage_error(usage, "--source: not with --dump (the lexicon is the target's)");
	if (o->source && (argc - optind != 1 || !strcmp(o->files[0], "-")))
		cli_usage_error(usage, "--source: want exactly one target file, aligned with the source line by line");
}

/* The name of the corpus in messages. */
static const char *fz_corpus_name(const fz_opts *o)
{
	return o->nfiles == 1 && !strcmp(o->files[0], "-") ? "<stdin>" : o->files[0];
}

/* 2a. --vocab: the vocabulary file, and the corpus's first sentence (the
 * rest is mapped to ids as it is read). */
static void fz_vocab_file(fz_run *R)
{
	const fz_opts *o = &R->o;
	llr_err e = {0};
	llr_lines *l = llr_lines_open(o->vocab_file, 0, &e);
	if (!l || llr_vocab_read(R->v, l, &e) < 0)
		cli_die_err(&e);
	llr_lines_close(l);
	if (llr_vocab_size(R->v) == 0)
		cli_die("%s: empty vocabulary", o->vocab_file);
	if (llr_vocab_id(R->v, LLR_BOS, strlen(LLR_BOS)) >= 0)
		cli_die("%s: the reserved token %s is in the vocabulary", o->vocab_file, LLR_BOS);
	if (llr_vocab_size(R->v) > (size_t)LLR_MAX_VOCAB - 2)
		cli_die("%s: more than %d types (the limit)", o->vocab_file, LLR_MAX_VOCAB - 2);
	if (!o->dump && !fz_tok_next(&R->tin, &R->first, &R->first_len))
		cli_die("%s: empty corpus (no sentence to map to ids)", fz_corpus_name(o));
}

/* 2b. The corpus's types, with their counts, and </s> once a sentence. */
static void fz_vocab_corpus(fz_run *R)
{
	fz_corpus *cp = &R->cp;
	fz_corpus_read(cp, &R->tin);
	if (cp->sentences == 0)
		cli_die("%s: empty corpus (no tokens)", fz_corpus_name(&R->o));
	for (size_t i = 0; i < llr_vocab_size(cp->types); i++) {
		const char *w = llr_vocab_token(cp->types, (int32_t)i);
		fz_add_type(R->v, w, strlen(w), llr_vocab_count(cp->types, (int32_t)i));
	}
	fz_add_type(R->v, LLR_EOS, strlen(LLR_EOS), cp->sentences);
}

/* 2. The vocabulary: the corpus's or --vocab's, the --extra words, with
 * --vocab-from corpus+lexicon the lexicon's words, </s> and <unk>;
 * sorted. */
static void fz_vocabulary(fz_run *R)
{
	const fz_opts *o = &R->o;
	if (!(R->v = llr_vocab_new()))
		cli_oom();
	R->tin = (fz_tok_in){.files = o->files, .n = o->nfiles, .prog = &R->prog};
	cli_progress_init(&R->prog, o->quiet, !o->output || !strcmp(o->output, "-"));
	cli_progress_inputs(&R->prog, o->files, o->nfiles);
	R->streaming = o->vocab_file != NULL;
	if (R->streaming)
		fz_vocab_file(R);
	else
		fz_vocab_corpus(R);
	for (int i = 0; i < o->nextra; i++) {
		fz_tok_in t = {.files = &o->extra[i], .n = 1};
		const char *line;
		size_t len;
		while (fz_tok_next(&t, &line, &len)) {
			size_t pos = 0, tl;
			const char *tok;
			while (llr_token_next(line, len, &pos, &tok, &tl))
				fz_add_type(R->v, tok, tl, 0);
		}
		fz_tok_close(&t);
	}
	if (o->vocab_lex)
		for (size_t i = 0; i < llr_strmap_size(R->z.lw); i++)
			fz_add_type(R->v, llr_strmap_str(R->z.lw, (int32_t)i), llr_strmap_len(R->z.lw, (int32_t)i), 0);
	fz_add_type(R->v, LLR_EOS, strlen(LLR_EOS), 0);
	fz_add_type(R->v, LLR_UNK, strlen(LLR_UNK), 0);
	llr_err e = {0};
	if (llr_vocab_sort(R->v, &e) < 0)
		cli_die_err(&e);
	R->V = (int32_t)llr_vocab_size(R->v);
	R->eos = llr_vocab_id(R->v, LLR_EOS, strlen(LLR_EOS));
	R->unk = llr_vocab_id(R->v, LLR_UNK, strlen(LLR_UNK));
}

/* 2c. --spelling with --vocab: the corpus read once more first, for its
 * types outside the vocabulary (the spelling model learns from every type
 * of the training text, the features' columns count them, and their
 * tokens are written as their signatures), its tokens outside the
 * vocabulary and its events; not when it is standard input (then the
 * vocabulary file's counts, and those tokens are <unk>). */
static void fz_outside(fz_run *R)
{
	const fz_opts *o = &R->o;
	int piped = 0;
	for (int i = 0; i < o->nfiles; i++)
		piped |= !strcmp(o->files[i], "-");
	R->out_unk = -1;
	if (!o->spelling || !R->streaming || piped)
		return;
	fz_tok_in t = {.files = o->files, .n = o->nfiles};
	const char *line;
	size_t len;
	R->out_unk = 0;
	if (!(R->outside = llr_strmap_new()))
		cli_oom();
	while (fz_tok_next(&t, &line, &len)) {
		size_t pos = 0, tl;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			int32_t id = llr_vocab_id(R->v, tok, tl);
			R->out_unk += id < 0 || id == R->unk;
			if (id < 0 && llr_strmap_add(R->outside, tok, tl) < 0)
				cli_oom();
			R->out_events++;
		}
		R->out_events++;
	}
	fz_tok_close(&t);
}

/* Sort row i (entries rowptr[i] ..) by column and drop repeats (the
 * first wins); close the row. */
static void fz_row_finish(fz_rows *r, int32_t i)
{
	size_t a = (size_t)r->rowptr[i], n = r->n - a;
	if (n > 1) {
		int32_t *pairs = ecalloc(n, 2 * sizeof *pairs);
		for (size_t k = 0; k < n; k++) {
			pairs[2 * k] = r->c[a + k];
			memcpy(&pairs[2 * k + 1], &r->v[a + k], sizeof(float));
		}
		qsort(pairs, n, 2 * sizeof *pairs, fz_cmp_col);
		size_t m = 0;
		for (size_t k = 0; k < n; k++) {
			if (m && r->c[a + m - 1] == pairs[2 * k])
				continue;
			r->c[a + m] = pairs[2 * k];
			memcpy(&r->v[a + m], &pairs[2 * k + 1], sizeof(float));
			m++;
		}
		r->n = a + m;
		free(pairs);
	}
	r->rowptr[i + 1] = (int64_t)r->n;
	if (r->n > (size_t)INT32_MAX)
		cli_die("more than %d non-zero entries in phi (the limit)", INT32_MAX);
}

/* 3a. The TOP feature of word i, the rank-th in vocabulary order. */
static void fz_row_top(fz_run *R, int32_t i, int32_t *rank)
{
	const char *why;
	fz_state *z = &R->z;
	if (i == R->eos) {
		fz_row_put(&R->r, fz_feature(z, LLR_FEAT_EOS, strlen(LLR_FEAT_EOS), FZ_TOP, &why), 1.0f);
	} else if (i == R->unk) {
		fz_row_put(&R->r, fz_feature(z, LLR_FEAT_NOTTOP, strlen(LLR_FEAT_NOTTOP), FZ_TOP, &why), 1.0f);
	} else if (R->o.top > 0) {
		if (*rank < R->o.top && llr_vocab_count(R->v, i) > 0) {
			llr_buf b = {0};
			if (llr_buf_printf(&b, LLR_TOP_PREFIX "%s", llr_vocab_token(R->v, i)) < 0)
				cli_oom();
			fz_row_put(&R->r, fz_feature(z, b.data, b.len, FZ_TOP, &why), 1.0f);
			llr_buf_free(&b);
		} else {
			fz_row_put(&R->r, fz_feature(z, LLR_FEAT_NOTTOP, strlen(LLR_FEAT_NOTTOP), FZ_TOP, &why), 1.0f);
		}
		(*rank)++;
	}
}

/* 3b. Word w's features beyond TOP: lexicon sources (unless outside the
 * vocabulary under --lexicon-scope vocab), and unless it is </s> or
 * <unk> (special), hunspell and the string extractors. */
static void fz_row_features(fz_run *R, const char *w, int special, int outside)
{
	fz_rows *r = &R->r;
	size_t wl = strlen(w);
	int32_t lid = outside && R->o.lex_vocab ? -1 : llr_strmap_get(R->z.lw, w, wl);
	if (lid >= 0)
		for (uint32_t k = 0; k < R->z.lwf[lid].n; k++)
			fz_row_put(r, R->z.lwf[lid].f[k], R->z.lwf[lid].v[k]);
	if (special)
		return;
	fz_emit_ctx ec = {.z = &R->z, .r = r, .word = w};
	if (R->morph) {
		ec.src = FZ_HUNSPELL;
		llr_morph_features(R->morph, w, wl, fz_emit_row, &ec);
	}
	ec.src = FZ_ORTHO; /* llr_extract's names carry their kind */
	if (llr_extract(&R->ex, w, wl, fz_emit_row, &ec) == LLR_EUTF8)
		cli_die("word '%s': invalid UTF-8", w);
}

/* 3c. The features of a type outside the vocabulary only (--spelling,
 * unless --no-oov-features), on row j of the rows being built: OOV:@oov,
 * and OOV:HS:@known when hunspell knows it (the row has HS:@known);
 * llr_lexicon_any_row gives them the same way. */
static void fz_row_oov(fz_run *R, int64_t from)
{
	fz_rows *r = &R->r;
	const char *why;
	int32_t known = llr_strmap_get(R->z.names, LLR_FEAT_HS_KNOWN, strlen(LLR_FEAT_HS_KNOWN));
	int hs = 0;
	for (size_t k = (size_t)from; known >= 0 && k < r->n; k++)
		hs |= r->c[k] == known && r->v[k] != 0.0f;
	fz_row_put(r, fz_feature(&R->z, LLR_FEAT_OOV, strlen(LLR_FEAT_OOV), FZ_OOV, &why), 1.0f);
	if (hs)
		fz_row_put(r, fz_feature(&R->z, LLR_FEAT_OOV_HS_KNOWN, strlen(LLR_FEAT_OOV_HS_KNOWN), FZ_OOV, &why), 1.0f);
}

/* 3. Rows, in vocabulary order: TOP, lexicon sources, hunspell, string
 * extractors; then the rows of the types outside the vocabulary
 * (fz_outside), TOP:@notTop, the rest and the OOV: features, which count
 * in the columns' document frequencies (a feature only the words outside
 * the vocabulary have is kept: what an open vocabulary learns from) but
 * are not phi's. */
static void fz_rows_build(fz_run *R)
{
	fz_rows *r = &R->r;
	int32_t nout = R->outside ? (int32_t)llr_strmap_size(R->outside) : 0;
	r->rowptr = ecalloc((size_t)R->V + (size_t)nout + 1, sizeof *r->rowptr);
	int32_t rank = 0;
	for (int32_t i = 0; i < R->V; i++) {
		fz_row_top(R, i, &rank);
		fz_row_features(R, llr_vocab_token(R->v, i), i == R->eos || i == R->unk, 0);
		fz_row_finish(r, i);
	}
	const char *why;
	for (int32_t j = 0; j < nout; j++) {
		if (R->o.top > 0)
			fz_row_put(r, fz_feature(&R->z, LLR_FEAT_NOTTOP, strlen(LLR_FEAT_NOTTOP), FZ_TOP, &why), 1.0f);
		fz_row_features(R, llr_strmap_str(R->outside, j), 0, 1);
		if (!R->o.no_oov)
			fz_row_oov(R, r->rowptr[R->V + j]);
		fz_row_finish(r, R->V + j);
	}
}

/* 4a. psi's columns (own_psi): the --input-features sources' kept
 * features, in phi's order. */
static void fz_columns_in(fz_run *R)
{
	fz_state *z = &R->z;
	if (!(R->lex.features_in = llr_strmap_new()))
		cli_oom();
	for (int32_t f = 0; f < R->Fall; f++)
		R->col_in[f] = -1;
	int32_t *byc = ecalloc((size_t)R->F + 1, sizeof *byc);
	for (int32_t f = 0; f < R->Fall; f++)
		if (R->col[f] >= 0)
			byc[R->col[f]] = f;
	for (int32_t k = 0; k < R->F; k++) {
		int32_t f = byc[k];
		if (!(R->o.in_mask & (1u << z->fsrc[f])))
			continue;
		R->col_in[f] = (int32_t)llr_strmap_size(R->lex.features_in);
		if (llr_strmap_add(R->lex.features_in, llr_strmap_str(z->names, f), llr_strmap_len(z->names, f)) < 0)
			cli_oom();
	}
	free(byc);
}

/* 4. Which features to keep, their columns: by source, then first seen.
 * Features no vocabulary word has are dropped, and with
 * --min-feature-count those on fewer types (TOP features excepted). */
static void fz_columns(fz_run *R)
{
	fz_state *z = &R->z;
	llr_lexicon *lex = &R->lex;
	R->Fall = (int32_t)llr_strmap_size(z->names);
	R->df = ecalloc((size_t)R->Fall + 1, sizeof *R->df);
	R->col = ecalloc((size_t)R->Fall + 1, sizeof *R->col);
	R->col_in = ecalloc((size_t)R->Fall + 1, sizeof *R->col_in);
	for (size_t k = 0; k < R->r.n; k++)
		if (R->r.v[k] != 0.0f)
			R->df[R->r.c[k]]++;
	lex->features = llr_strmap_new();
	lex->vocab = llr_strmap_new();
	lex->meta = llr_meta_new();
	if (!lex->features || !lex->vocab || !lex->meta)
		cli_oom();
	for (int s = 0; s < FZ_NSRC; s++) {
		for (int32_t f = 0; f < R->Fall; f++) {
			const char *nm = llr_strmap_str(z->names, f);
			int fs = z->fsrc[f];
			/* Extractor names say which extractor made them. */
			if (fs == FZ_ORTHO)
				fs = !strncmp(nm, "SUF:", 4) ? FZ_SUFFIX : !strncmp(nm, "CNG:", 4) ? FZ_NGRAMS
				                                                                   : FZ_ORTHO;
			if (fs != s)
				continue;
			z->fsrc[f] = (unsigned char)fs;
			if (R->df[f] == 0 || (s != FZ_TOP && R->o.min_count > 0 && R->df[f] < R->o.min_count)) {
				R->col[f] = -1;
				continue;
			}
			R->col[f] = (int32_t)llr_strmap_size(lex->features);
			if (llr_strmap_add(lex->features, nm, llr_strmap_len(z->names, f)) < 0)
				cli_oom();
			R->per_src[s]++;
			R->used |= 1u << s;
		}
	}
	R->F = (int32_t)llr_strmap_size(lex->features);
	R->own_psi = R->o.in_mask && (R->used & ~R->o.in_mask);
	if (R->own_psi)
		fz_columns_in(R);
}

/* 5. Phi (and psi), the lexicon's vocabulary, and the coverage counts. */
static void fz_matrices(fz_run *R)
{
	llr_err e = {0};
	llr_lexicon *lex = &R->lex;
	const fz_rows *r = &R->r;
	int own_psi = R->own_psi;
	llr_csr_builder *bphi = llr_csr_builder_new(R->F);
	llr_csr_builder *bpsi = own_psi ? llr_csr_builder_new((int32_t)llr_strmap_size(lex->features_in)) : NULL;
	if (!bphi || (own_psi && !bpsi))
		cli_oom();
	int32_t *rc = ecalloc((size_t)R->Fall + 1, sizeof *rc), *rc_in = ecalloc((size_t)R->Fall + 1, sizeof *rc_in);
	float *rv = ecalloc((size_t)R->Fall + 1, sizeof *rv), *rv_in = ecalloc((size_t)R->Fall + 1, sizeof *rv_in);
	R->covered = ecalloc((size_t)R->V, 1);
	for (int32_t i = 0; i < R->V; i++) {
		size_t n = 0, nin = 0;
		for (int64_t k = r->rowptr[i]; k < r->rowptr[i + 1]; k++) {
			int32_t f = r->c[k];
			if (R->col[f] < 0 || r->v[k] == 0.0f)
				continue;
			rc[n] = R->col[f];
			rv[n++] = r->v[k];
			if (R->z.fsrc[f] != FZ_TOP)
				R->covered[i] = 1;
			if (own_psi && R->col_in[f] >= 0) {
				rc_in[nin] = R->col_in[f];
				rv_in[nin++] = r->v[k];
			}
		}
		if (llr_csr_builder_row(bphi, rc, rv, n, &e) < 0 || (own_psi && llr_csr_builder_row(bpsi, rc_in, rv_in, nin, &e) < 0))
			cli_die_err(&e);
		const char *w = llr_vocab_token(R->v, i);
		if (llr_strmap_add(lex->vocab, w, strlen(w)) < 0)
			cli_oom();
		if (i != R->eos) {
			R->word_tok += llr_vocab_count(R->v, i);
			if (R->covered[i])
				R->nonid_tok += llr_vocab_count(R->v, i);
		}
	}
	free(rc);
	free(rc_in);
	free(rv);
	free(rv_in);
	if (!(lex->phi = llr_csr_builder_finish(bphi, &e)))
		cli_die_err(&e);
	if (own_psi && !(lex->psi = llr_csr_builder_finish(bpsi, &e)))
		cli_die_err(&e);
	lex->eos_id = R->eos;
	lex->unk_id = R->unk;
	lex->extract = R->ex;
}

/* 5b. What the row of a word featurize does not see needs beyond the
 * extractors (llr_lexicon_any_row): the lexicon sources' entries, in
 * phi's columns, and the hunspell dictionary, embedded. */
static void fz_any(fz_run *R)
{
	llr_err e = {0};
	const fz_state *z = &R->z;
	llr_strmap *words = llr_strmap_new();
	llr_csr_builder *b = llr_csr_builder_new(R->F);
	int32_t *c = ecalloc((size_t)R->F + 1, sizeof *c);
	float *v = ecalloc((size_t)R->F + 1, sizeof *v);
	if (!words || !b)
		cli_oom();
	for (int32_t lid = 0; lid < (int32_t)llr_strmap_size(z->lw); lid++) {
		const char *w = llr_strmap_str(z->lw, lid);
		size_t wl = llr_strmap_len(z->lw, lid), n = 0;
		if (R->o.lex_vocab && llr_vocab_id(R->v, w, wl) < 0)
			continue; /* --lexicon-scope vocab */
		for (uint32_t k = 0; k < z->lwf[lid].n; k++) {
			int32_t col = R->col[z->lwf[lid].f[k]];
			float val = z->lwf[lid].v[k];
			if (col < 0 || val == 0.0f)
				continue;
			size_t j = n++; /* insertion by column (a list has no repeats) */
			for (; j > 0 && c[j - 1] > col; j--) {
				c[j] = c[j - 1];
				v[j] = v[j - 1];
			}
			c[j] = col;
			v[j] = val;
		}
		if (n == 0)
			continue;
		if (llr_strmap_add(words, w, wl) < 0)
			cli_oom();
		if (llr_csr_builder_row(b, c, v, n, &e) < 0)
			cli_die_err(&e);
	}
	free(c);
	free(v);
	llr_csr *rows = llr_csr_builder_finish(b, &e);
	if (!rows)
		cli_die_err(&e);
	if (rows->rows == 0) { /* nothing to store: no any/ members */
		llr_strmap_free(words);
		llr_csr_free(rows);
	} else if (llr_lexicon_set_words(&R->lex, words, rows, &e) < 0) {
		cli_die_err(&e);
	}
	if (R->o.hunspell && llr_lexicon_set_hunspell(&R->lex, R->o.hunspell, &e) < 0)
		cli_die_err(&e);
}

/* 6c. --spelling: the signature masses of the strings outside the
 * vocabulary, exactly (llr_lexicon_exact_sigs) unless the features are
 * beyond the exact pass or --signature-samples asks for draws
 * (llr_lexicon_estimate_sigs), and each of the corpus's types outside
 * it with its signature into out_sig. */
static void fz_signatures(fz_run *R)
{
	llr_err e = {0};
	int32_t nout = R->outside ? (int32_t)llr_strmap_size(R->outside) : 0;
	if (nout)
		R->out_sig = ecalloc((size_t)nout, sizeof *R->out_sig);
	char nowhy[512] = "";
	if (!R->o.sig_samples) { /* exact, where the features allow it */
		if (llr_lexicon_exact_sigs(&R->lex, R->outside, R->out_sig, nowhy, sizeof nowhy, &e) < 0)
			cli_die("%s: --spelling: signature masses: %s", fz_corpus_name(&R->o), e.msg);
		int64_t listed;
		double un;
		int64_t ex = llr_lexicon_sig_exact(&R->lex, &listed, &un);
		if (ex) {
			fprintf(stderr, "%s: signature masses: %zu signatures, every string outside the vocabulary summed exactly: %lld classes of the spelling model's forward pass, %lld strings listed apart, %d types of the corpus outside it; q unassigned %.3g\n", cli_prog,
			        llr_lexicon_sigs(&R->lex), (long long)ex, (long long)listed, nout, un);
			return;
		}
		fprintf(stderr, "%s: signature masses: not exact (%s): drawn\n", cli_prog, nowhy);
	}
	long n = R->o.sig_samples ? R->o.sig_samples : FZ_SIG_SAMPLES;
	if (llr_lexicon_estimate_sigs(&R->lex, n, FZ_SIG_SEED, R->outside, R->out_sig, &e) < 0)
		cli_die("%s: --spelling: signature masses: %s", fz_corpus_name(&R->o), e.msg);
	fprintf(stderr, "%s: signature masses: %zu signatures from %ld strings drawn outside the vocabulary and %d types of the corpus outside it\n", cli_prog,
	        llr_lexicon_sigs(&R->lex), n, nout);
	double q;
	const char *why;
	int64_t dg = llr_lexicon_sig_digits(&R->lex, &q, &why);
	if (dg)
		fprintf(stderr, "%s: signature masses: the digit strings outside the vocabulary exactly: %lld groups, q %.6g\n", cli_prog,
		        (long long)dg, q);
	else
		fprintf(stderr, "%s: signature masses: the digit strings drawn with the rest: %s\n", cli_prog, why ? why : "?");
	if ((dg = llr_lexicon_sig_shorts(&R->lex, &q)) > 0)
		fprintf(stderr, "%s: signature masses: the strings of at most 3 characters outside the vocabulary exactly: %lld, q %.6g\n", cli_prog,
		        (long long)dg, q);
	if ((dg = llr_lexicon_sig_dict(&R->lex, &q, &why)) > 0)
		fprintf(stderr, "%s: signature masses: the hunspell dictionary's word forms outside the vocabulary exactly: %lld, q %.6g\n", cli_prog,
		        (long long)dg, q);
	else if (why)
		fprintf(stderr, "%s: signature masses: the hunspell dictionary's word forms drawn with the rest: %s\n", cli_prog, why);
}

/* "name,name" of the sources in mask. */
static void fz_source_list(llr_meta *m, const char *key, unsigned mask)
{
	llr_buf b = {0};
	for (int s = 0; s < FZ_NSRC; s++)
		if (mask & (1u << s))
			llr_buf_printf(&b, "%s%s", b.len ? "," : "", fz_src_names[s]);
	llr_meta_set(m, key, b.len ? b.data : "");
	llr_buf_free(&b);
}

/* How the corpus was tokenised (llr_tokprof): tok's options as given to
 * featurize, the rest seen in the corpus's types (the vocabulary file's
 * with --vocab, the corpus being read after the meta is written). */
static void fz_tok_record(fz_run *R, llr_meta *m)
{
	llr_tokprof p = R->o.tok;
	llr_tokstat *s = llr_tokstat_new();
	if (!s)
		cli_oom();
	const llr_vocab *v = R->streaming ? R->v : R->cp.types;
	llr_err e = {0};
	for (size_t i = 0; v && i < llr_vocab_size(v); i++) {
		const char *w = llr_vocab_token(v, (int32_t)i);
		if (!strcmp(w, LLR_EOS) || !strcmp(w, LLR_UNK) || !strcmp(w, LLR_BOS))
			continue;
		if (llr_tokstat_token(s, w, strlen(w), llr_vocab_count(v, (int32_t)i), &e) < 0)
			cli_die_err(&e);
	}
	llr_tokprof_detect(&p, s);
	llr_tokstat_free(s);
	if (llr_tokprof_to_meta(&p, m) < 0)
		cli_oom();
}

/* 6. Background and meta. */
static void fz_meta(fz_run *R)
{
	const fz_opts *o = &R->o;
	llr_lexicon *lex = &R->lex;
	lex->logb = ecalloc((size_t)R->V, sizeof *lex->logb);
	if (o->bg == FZ_BG_NGRAM)
		fz_background_ngram(o, lex);
	else
		fz_background(o, R->v, lex->logb, lex->meta);
	llr_meta_setf(lex->meta, "unk_logb", "%.9g", (double)lex->logb[R->unk]);
	fz_source_list(lex->meta, "sources", R->used);
	if (R->own_psi)
		fz_source_list(lex->meta, "sources_in", R->used & o->in_mask);
	else
		llr_meta_set(lex->meta, "sources_in", "same");
	llr_meta_setf(lex->meta, "top", "%d", o->top);
	llr_meta_setf(lex->meta, "lowercase", "%d", R->z.lower);
	fz_tok_record(R, lex->meta);
	llr_meta_setf(lex->meta, "min_feature_count", "%d", o->min_count);
	llr_meta_set(lex->meta, "unk_features", LLR_FEAT_NOTTOP);
	llr_meta_set(lex->meta, "eos_features", LLR_FEAT_EOS);
	if (o->spelling) { /* for the record: any_row goes by the features themselves */
		const char *oov[] = {LLR_FEAT_OOV, LLR_FEAT_OOV_HS_KNOWN};
		llr_buf b = {0};
		for (int k = 0; k < 2; k++)
			if (llr_strmap_get(lex->features, oov[k], strlen(oov[k])) >= 0 &&
			    llr_buf_printf(&b, "%s%s", b.len ? "," : "", oov[k]) < 0)
				cli_oom();
		llr_meta_set(lex->meta, "oov_features", b.len ? b.data : "none");
		llr_buf_free(&b);
	}
	if (!R->streaming) {
		llr_meta_setf(lex->meta, "tokens", "%lld", (long long)R->cp.tokens);
		llr_meta_setf(lex->meta, "sentences", "%lld", (long long)R->cp.sentences);
	}
	llr_meta_setf(lex->meta, "ids_chunk", "%zu", CHUNK_IDS);
}

/* 6b. --spelling: the spelling model and lambda, from the vocabulary and
 * the corpus's types outside it (fz_outside). */
static void fz_spelling_run(fz_run *R)
{
	fz_spelling(R->v, R->outside, R->o.spelling, R->out_unk, R->out_events, &R->lex, fz_corpus_name(&R->o));
}

/* 7a. The corpus read whole (the vocabulary was made from it) as ids. */
static void fz_ids_corpus(fz_run *R, fz_ids *d)
{
	const fz_corpus *cp = &R->cp;
	int32_t *map = ecalloc(llr_vocab_size(cp->types) + 1, sizeof *map);
	for (size_t i = 0; i < llr_vocab_size(cp->types); i++) {
		const char *w = llr_vocab_token(cp->types, (int32_t)i);
		map[i] = llr_vocab_id(R->v, w, strlen(w));
	}
	size_t s0 = 0;
	for (size_t i = 0; i < cp->nids; i++) {
		if (cp->ids[i] >= 0)
			continue;
		/* sentence [s0, i] */
		fz_ids_sentence(d, i + 1 - s0);
		for (size_t k = s0; k <= i; k++)
			fz_ids_put(d, cp->ids[k] < 0 ? R->eos : map[cp->ids[k]]);
		s0 = i + 1;
	}
	free(map);
}

/* 7b. --vocab: the corpus mapped to ids as it is read, unknown words to
 * <unk>, or with --spelling to V + s, s their signature. */
static void fz_ids_stream(fz_run *R, fz_ids *d)
{
	const char *line = R->first;
	size_t len = R->first_len;
	do {
		fz_ids_sentence(d, llr_tokens_count(line, len) + 1);
		size_t pos = 0, tl;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			int32_t id = llr_vocab_id(R->v, tok, tl);
			if (id < 0) {
				int32_t j = R->out_sig ? llr_strmap_get(R->outside, tok, tl) : -1;
				int32_t s = j >= 0 ? R->out_sig[j] : -1;
				id = s >= 0 ? R->V + s : R->unk; /* its signature, or <unk> */
				R->stream_sig += s >= 0;
				R->stream_unk++;
			}
			if (id < R->V && R->covered[id])
				R->stream_cov++;
			R->stream_tok++;
			fz_ids_put(d, id);
		}
		fz_ids_put(d, R->eos);
		R->stream_sent++;
	} while (fz_tok_next(&R->tin, &line, &len));
}

/* 7. The tensor stream: the lexicon, then the corpus as ids/ members. */
static void fz_write_stream(fz_run *R)
{
	llr_err e = {0};
	const char *out = R->o.output;
	if (!out || !strcmp(out, "-"))
		cli_refuse_tty(1, "a tensor stream");
	llr_meta *m = llr_meta_new();
	if (!m || llr_lexicon_to_meta(&R->lex, m) < 0 || (R->par.src && llr_source_to_meta(R->par.src, m) < 0))
		cli_oom();
	fz_ids d = {.buf = emalloc(CHUNK_IDS * sizeof *d.buf)};
	if (!(d.w = llr_tw_open(out, "features", m, &e)))
		cli_die_err(&e);
	fz_writer = d.w;
	atexit(fz_abort_writer);
	llr_meta_free(m);
	if (llr_lexicon_write(d.w, &R->lex, &e) < 0 || (R->par.src && llr_source_write(d.w, R->par.src, R->V, &e) < 0))
		cli_die_err(&e);
	if (R->streaming)
		fz_ids_stream(R, &d);
	else
		fz_ids_corpus(R, &d);
	fz_ids_flush(&d);
	free(d.buf);
	if (R->par.src)
		fz_parallel_write_ids(&R->par, d.w);
	fz_writer = NULL;
	if (llr_tw_close(d.w, &e) < 0)
		cli_die_err(&e);
}

/* 8. The summary on stderr. */
static void fz_summary(const fz_run *R)
{
	const llr_lexicon *lex = &R->lex;
	llr_buf b = {0};
	for (int s = 0; s < FZ_NSRC; s++)
		if (R->per_src[s])
			llr_buf_printf(&b, "%s%s %lld", b.len ? ", " : "", fz_src_names[s], (long long)R->per_src[s]);
	fprintf(stderr, "%s: %d types, %d features (%s), nnz(phi) %d", cli_prog, R->V, R->F, b.len ? b.data : "none",
	        lex->phi->nnz);
	if (lex->psi)
		fprintf(stderr, ", psi %d features nnz %d", lex->psi->cols, lex->psi->nnz);
	fputc('\n', stderr);
	if (R->streaming && !R->o.dump)
		fprintf(stderr, "%s: %lld tokens in %lld sentences, %lld unknown (%lld as their signature), coverage %.2f%%\n", cli_prog,
		        (long long)R->stream_tok, (long long)R->stream_sent, (long long)R->stream_unk, (long long)R->stream_sig,
		        R->stream_tok ? 100.0 * (double)R->stream_cov / (double)R->stream_tok : 0.0);
	else
		fprintf(stderr, "%s: %lld tokens%s, coverage %.2f%% (share of running tokens with a non-TOP feature)\n", cli_prog,
		        (long long)R->word_tok, R->streaming ? " (vocabulary counts)" : "",
		        R->word_tok ? 100.0 * (double)R->nonid_tok / (double)R->word_tok : 0.0);
	llr_buf_free(&b);
	if (R->par.src)
		fprintf(stderr, "%s: source %s: %lld lines (%lld empty), %lld tokens, %zu types\n", cli_prog, R->o.source,
		        (long long)R->par.pairs, (long long)R->par.empty, (long long)R->par.tokens, llr_strmap_size(R->par.src->vocab));
}

static void fz_run_free(fz_run *R)
{
	fz_parallel_free(&R->par);
	fz_tok_close(&R->tin);
	free(R->covered);
	free(R->df);
	free(R->col);
	free(R->col_in);
	free(R->r.c);
	free(R->r.v);
	free(R->r.rowptr);
	free(R->cp.ids);
	llr_vocab_free(R->cp.types);
	llr_vocab_free(R->v);
	llr_strmap_free(R->outside);
	free(R->out_sig);
	fz_free(&R->z);
	llr_strmap_free(R->lex.vocab);
	llr_strmap_free(R->lex.features);
	llr_strmap_free(R->lex.features_in);
	llr_csr_free(R->lex.phi);
	llr_csr_free(R->lex.psi);
	free(R->lex.logb);
	llr_meta_free(R->lex.meta);
	llr_ngram_bg_free(R->lex.bg);
	llr_ngram_free(R->lex.ngram);
	llr_spelling_free(R->lex.spell);
	llr_opensig_free(R->lex.sig);
	llr_anyword_free(R->lex.any);
	free(R->o.extra);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	cli_init(argv[0], "featurize");
	cli_set_help(help);
	fz_run R = {0};
	fz_parse_opts(argc, argv, &R);
	R.z.names = llr_strmap_new();
	R.z.lw = llr_strmap_new();
	if (!R.z.names || !R.z.lw)
		cli_oom();
	if (R.o.hunspell) {
		llr_err e = {0};
		if (!(R.morph = llr_morph_open(R.o.hunspell, &e)))
			cli_die_err(&e);
	}
	if (R.o.source) { /* the source side first: misaligned files stop here */
		cli_progress sp;
		cli_progress_init(&sp, R.o.quiet, !R.o.output || !strcmp(R.o.output, "-"));
		cli_progress_inputs(&sp, (char *const *)&R.o.source, 1);
		fz_parallel_read(&R.par, R.o.source, R.o.files[0], &sp);
	}
	fz_load_sources(&R.z); /* 1. lexicon sources, in command-line order */
	fz_vocabulary(&R);     /* 2. */
	fz_outside(&R);
	fz_rows_build(&R); /* 3. */
	llr_morph_close(R.morph);
	fz_columns(&R);  /* 4. */
	fz_matrices(&R); /* 5. */
	if (!R.o.dump)
		fz_any(&R);
	fz_meta(&R); /* 6. */
	if (R.o.spelling) {
		fz_spelling_run(&R);
		fz_signatures(&R);
	}
	if (R.o.dump) /* 7. */
		fz_dump(&R.o, &R.lex);
	else
		fz_write_stream(&R);
	if (!R.o.quiet)
		fz_summary(&R); /* 8. */
	fz_run_free(&R);
	return 0;
}
