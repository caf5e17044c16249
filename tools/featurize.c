/*
 * featurize - word features phi/psi and the background b for a
 * vocabulary, plus the corpus as token ids: the tensor stream train reads
 * (kind "features"), or with --dump the lexicon as text.  The spec is
 * man/featurize.1; the stream layout is lib/features/lexicon.c's.  Feature sources
 * that read files (CoNLL-U, lexicons, word/TAG corpora) live in
 * tools/featurize_src.c; this file holds the vocabulary, the rows, the
 * background and the output.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "featurize_src.h"

static const char usage[] =
	"usage: featurize [-l] [--top M] [--conllu FILE] [--lexicon FILE] [--tagged FILE]\n"
	"                 [--ortho] [--suffix N] [--char-ngrams A-B] [--hunspell PATH]\n"
	"                 [--min-feature-count N] [--input-features LIST]\n"
	"                 [--vocab FILE | --vocab-from corpus|corpus+lexicon] [--extra FILE]\n"
	"                 [--background uniform|unigram[:K]|FILE] [--dump] [-o FILE] [FILE ...]\n"
	"       featurize --version\n";

#define CHUNK_IDS ((size_t)1 << 20) /* ids per ids/NNNNNN member, at most (whole sentences) */

const char *const fz_src_names[FZ_NSRC] = {"top", "conllu", "tagged", "lexicon", "hunspell", "ortho", "suffix", "ngrams"};

/* ------------------------------------------------------ feature table */

int32_t fz_feature(fz_state *z, const char *name, size_t len, int src, const char **why)
{
	if (len == 0) {
		*why = "empty feature name";
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0) {
			*why = "feature name contains a space, TAB, newline or NUL";
			return -1;
		}
	}
	size_t before = llr_strmap_size(z->names);
	int32_t id = llr_strmap_add(z->names, name, len);
	if (id < 0)
		cli_oom();
	if (llr_strmap_size(z->names) > before) {
		if (llr_strmap_size(z->names) > (size_t)LLR_MAX_FEATURES)
			cli_die("more than %d distinct features (the limit); use fewer sources or --min-feature-count",
				LLR_MAX_FEATURES);
		if ((size_t)id >= z->fcap) {
			z->fcap = z->fcap ? z->fcap * 2 : 1024;
			z->fsrc = llr_reallocarray(z->fsrc, z->fcap, 1);
			if (!z->fsrc)
				cli_oom();
		}
		z->fsrc[id] = (unsigned char)src;
	}
	return id;
}

void fz_flist_add(fz_flist *l, int32_t f, float v)
{
	for (uint32_t i = 0; i < l->n; i++) {
		if (l->f[i] == f) {
			l->v[i] = v;
			return;
		}
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		l->f = llr_reallocarray(l->f, cap, sizeof *l->f);
		l->v = llr_reallocarray(l->v, cap, sizeof *l->v);
		if (!l->f || !l->v)
			cli_oom();
		l->cap = cap;
	}
	l->f[l->n] = f;
	l->v[l->n++] = v;
}

fz_flist *fz_word(fz_state *z, const char *w, size_t len)
{
	size_t before = llr_strmap_size(z->lw);
	int32_t id = llr_strmap_add(z->lw, w, len);
	if (id < 0)
		cli_oom();
	if (llr_strmap_size(z->lw) > before && (size_t)id >= z->lwcap) {
		size_t cap = z->lwcap ? z->lwcap * 2 : 1024;
		fz_flist *p = llr_reallocarray(z->lwf, cap, sizeof *p);
		if (!p)
			cli_oom();
		memset(p + z->lwcap, 0, (cap - z->lwcap) * sizeof *p);
		z->lwf = p;
		z->lwcap = cap;
	}
	return &z->lwf[id];
}

/* ------------------------------------------------------- token input */

/* Sentences of token files, one after another. */
typedef struct {
	char **files;
	int n, i;
	llr_lines *l;
} tok_in;

/* 1 with a non-empty line in the canonical form (llr_tokens_check), 0
 * at the end of the last file. */
static int tok_next(tok_in *t, const char **line, size_t *len)
{
	llr_err e = {0};
	for (;;) {
		if (!t->l) {
			if (t->i >= t->n)
				return 0;
			const char *path = t->files[t->i++];
			if (!(t->l = llr_lines_open(path, 0, &e)))
				cli_die_err(&e);
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
		return 1;
	}
}

static void tok_close(tok_in *t)
{
	llr_lines_close(t->l);
	t->l = NULL;
}

static char *stdin_only[] = {"-"};

/* ------------------------------------------------------------ options */

typedef struct {
	const char *output;
	int dump;
	int top;
	int min_count;
	int vocab_lex; /* --vocab-from corpus+lexicon */
	const char *vocab_file;
	char **extra;
	int nextra;
	const char *background; /* "uniform", "unigram[:k]" or a file */
	const char *hunspell;
	unsigned in_mask; /* sources of psi; 0 = psi is phi */
	char **files;
	int nfiles;
} fz_opts;

static void add_str(char ***v, int *n, char *s)
{
	char **p = llr_reallocarray(*v, (size_t)*n + 1, sizeof *p);
	if (!p)
		cli_oom();
	p[(*n)++] = s;
	*v = p;
}

static unsigned parse_sources(const char *s)
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
			cli_usage_error(usage, "--input-features: unknown source '%.*s' (top conllu tagged lexicon hunspell ortho suffix ngrams)",
					(int)l, p);
		mask |= 1u << k;
		p += l + (q ? 1 : 0);
	}
	if (!mask)
		cli_usage_error(usage, "--input-features: empty list");
	return mask;
}

static void parse_ngrams(const char *s, llr_extractors *x)
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
} corpus;

static void corpus_push(corpus *c, int32_t id)
{
	if (c->nids == c->idcap) {
		c->idcap = c->idcap ? c->idcap * 2 : 1 << 16;
		c->ids = llr_reallocarray(c->ids, c->idcap, sizeof *c->ids);
		if (!c->ids)
			cli_die("out of memory (corpus of %zu tokens)", c->nids);
	}
	c->ids[c->nids++] = id;
}

static void corpus_read(corpus *c, tok_in *t)
{
	const char *line;
	size_t len;
	c->types = llr_vocab_new();
	if (!c->types)
		cli_oom();
	while (tok_next(t, &line, &len)) {
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
			corpus_push(c, id);
		}
		corpus_push(c, -1);
		c->sentences++;
	}
}

static void add_type(llr_vocab *v, const char *s, size_t len, int64_t count)
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
} rows;

static void row_put(rows *r, int32_t c, float v)
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
	rows *r;
	int src;
	const char *word;
} emit_ctx;

static int emit_row(const char *name, size_t len, float value, void *ctx)
{
	emit_ctx *e = ctx;
	const char *why;
	int32_t f = fz_feature(e->z, name, len, e->src, &why);
	if (f < 0)
		cli_die("word '%s': %s feature '%.*s': %s", e->word, fz_src_names[e->src], (int)MIN(len, 80), name,
			why);
	row_put(e->r, f, value);
	return 0;
}

static int cmp_entry_col(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	return (*x > *y) - (*x < *y);
}

/* ------------------------------------------------------------ background */

static void background(const fz_opts *o, const llr_vocab *v, float *logb, llr_meta *m)
{
	size_t V = llr_vocab_size(v);
	const char *bg = o->background ? o->background : "unigram";
	if (!strcmp(bg, "uniform")) {
		for (size_t i = 0; i < V; i++)
			logb[i] = (float)-log((double)V);
		llr_meta_set(m, "background", "uniform");
		return;
	}
	if (!strncmp(bg, "unigram", 7) && (bg[7] == '\0' || bg[7] == ':')) {
		double k = 0.5;
		if (bg[7] == ':')
			k = cli_parse_double(usage, "--background unigram:K", bg + 8, 1e-9, 1e9);
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
	llr_lines *l = llr_lines_open(bg, 0, &e);
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
static llr_tensor_writer *g_writer;

static void abort_writer(void)
{
	if (g_writer)
		llr_tw_abort(g_writer);
	g_writer = NULL;
}

static void write_ids(llr_tensor_writer *w, int32_t *buf, size_t n, int *chunk)
{
	llr_err e = {0};
	char name[32];
	int64_t shape[1] = {(int64_t)n};
	snprintf(name, sizeof name, "ids/%06d", (*chunk)++);
	if (llr_tw_put_raw(w, name, LLR_I32, 1, shape, buf, &e) < 0)
		cli_die_err(&e);
}

static void dump(const fz_opts *o, const llr_lexicon *x)
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

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	cli_init(argv[0], "featurize");
	fz_opts o = {0};
	fz_state z = {0};
	llr_extractors ex = {0};
	enum {
		O_TOP = 256, O_CONLLU, O_LEXICON, O_TAGGED, O_ORTHO, O_SUFFIX, O_NGRAMS, O_HUNSPELL, O_MINCOUNT,
		O_INPUT, O_VOCAB, O_VOCABFROM, O_EXTRA, O_BACKGROUND, O_DUMP
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
		{"lowercase", no_argument, 0, 'l'},
		{"output", required_argument, 0, 'o'},
		CLI_COMMON_OPTIONS,
		{0, 0, 0, 0},
	};
	int c;
	while ((c = cli_getopt(argc, argv, ":hlo:", lopts, usage)) != -1) {
		switch (c) {
		case 'l':
			z.lower = 1;
			break;
		case 'o':
			o.output = optarg;
			break;
		case O_TOP:
			o.top = (int)cli_parse_int(usage, "--top", optarg, 0, LLR_MAX_VOCAB);
			break;
		case O_CONLLU:
		case O_LEXICON:
		case O_TAGGED:
			add_src(&z, c == O_CONLLU ? FZ_CONLLU : c == O_LEXICON ? FZ_LEXICON : FZ_TAGGED, optarg);
			break;
		case O_ORTHO:
			ex.ortho = 1;
			break;
		case O_SUFFIX:
			ex.suffix = (int)cli_parse_int(usage, "--suffix", optarg, 1, 16);
			break;
		case O_NGRAMS:
			parse_ngrams(optarg, &ex);
			break;
		case O_HUNSPELL:
			o.hunspell = optarg;
			break;
		case O_MINCOUNT:
			o.min_count = (int)cli_parse_int(usage, "--min-feature-count", optarg, 1, INT32_MAX);
			break;
		case O_INPUT:
			o.in_mask = parse_sources(optarg);
			break;
		case O_VOCAB:
			o.vocab_file = optarg;
			break;
		case O_VOCABFROM:
			if (!strcmp(optarg, "corpus"))
				o.vocab_lex = 0;
			else if (!strcmp(optarg, "corpus+lexicon"))
				o.vocab_lex = 1;
			else
				cli_usage_error(usage, "--vocab-from: want corpus or corpus+lexicon, got '%s'", optarg);
			break;
		case O_EXTRA:
			add_str(&o.extra, &o.nextra, optarg);
			break;
		case O_BACKGROUND:
			o.background = optarg;
			break;
		case O_DUMP:
			o.dump = 1;
			break;
		}
	}
	o.files = argv + optind;
	o.nfiles = argc - optind;
	if (o.nfiles == 0) {
		o.files = stdin_only;
		o.nfiles = 1;
	}
	if (o.background && strncmp(o.background, "unigram:", 8) == 0)
		cli_parse_double(usage, "--background unigram:K", o.background + 8, 1e-9, 1e9);
	if (o.vocab_lex && !z.nsrc)
		cli_usage_error(usage, "--vocab-from corpus+lexicon needs a lexicon source (--conllu, --lexicon, --tagged)");

	z.names = llr_strmap_new();
	z.lw = llr_strmap_new();
	if (!z.names || !z.lw)
		cli_oom();
	llr_morph *morph = NULL;
	if (o.hunspell) {
		llr_err e = {0};
		if (!(morph = llr_morph_open(o.hunspell, &e)))
			cli_die_err(&e);
	}

	/* 1. Lexicon sources, in command-line order. */
	load_sources(&z);

	/* 2. Vocabulary. */
	llr_vocab *v = llr_vocab_new();
	if (!v)
		cli_oom();
	corpus cp = {0};
	tok_in tin = {.files = o.files, .n = o.nfiles};
	int streaming = o.vocab_file != NULL;
	const char *first = NULL;
	size_t first_len = 0;
	if (streaming) {
		llr_err e = {0};
		llr_lines *l = llr_lines_open(o.vocab_file, 0, &e);
		if (!l || llr_vocab_read(v, l, &e) < 0)
			cli_die_err(&e);
		llr_lines_close(l);
		if (llr_vocab_size(v) == 0)
			cli_die("%s: empty vocabulary", o.vocab_file);
		if (llr_vocab_id(v, LLR_BOS, strlen(LLR_BOS)) >= 0)
			cli_die("%s: the reserved token %s is in the vocabulary", o.vocab_file, LLR_BOS);
		if (llr_vocab_size(v) > (size_t)LLR_MAX_VOCAB - 2)
			cli_die("%s: more than %d types (the limit)", o.vocab_file, LLR_MAX_VOCAB - 2);
		if (!o.dump && !tok_next(&tin, &first, &first_len))
			cli_die("%s: empty corpus (no sentence to map to ids)", o.nfiles == 1 && !strcmp(o.files[0], "-") ? "<stdin>" : o.files[0]);
	} else {
		corpus_read(&cp, &tin);
		if (cp.sentences == 0)
			cli_die("%s: empty corpus (no tokens)", o.nfiles == 1 && !strcmp(o.files[0], "-") ? "<stdin>" : o.files[0]);
		for (size_t i = 0; i < llr_vocab_size(cp.types); i++) {
			const char *w = llr_vocab_token(cp.types, (int32_t)i);
			add_type(v, w, strlen(w), llr_vocab_count(cp.types, (int32_t)i));
		}
		add_type(v, LLR_EOS, strlen(LLR_EOS), cp.sentences);
	}
	for (int i = 0; i < o.nextra; i++) {
		tok_in t = {.files = &o.extra[i], .n = 1};
		const char *line;
		size_t len;
		while (tok_next(&t, &line, &len)) {
			size_t pos = 0, tl;
			const char *tok;
			while (llr_token_next(line, len, &pos, &tok, &tl))
				add_type(v, tok, tl, 0);
		}
		tok_close(&t);
	}
	if (o.vocab_lex)
		for (size_t i = 0; i < llr_strmap_size(z.lw); i++)
			add_type(v, llr_strmap_str(z.lw, (int32_t)i), llr_strmap_len(z.lw, (int32_t)i), 0);
	add_type(v, LLR_EOS, strlen(LLR_EOS), 0);
	add_type(v, LLR_UNK, strlen(LLR_UNK), 0);
	{
		llr_err e = {0};
		if (llr_vocab_sort(v, &e) < 0)
			cli_die_err(&e);
	}
	int32_t V = (int32_t)llr_vocab_size(v);
	int32_t eos = llr_vocab_id(v, LLR_EOS, strlen(LLR_EOS));
	int32_t unk = llr_vocab_id(v, LLR_UNK, strlen(LLR_UNK));

	/* 3. Rows, in vocabulary order: TOP, lexicon sources, hunspell,
	 * string extractors. */
	rows r = {0};
	r.rowptr = llr_calloc((size_t)V + 1, sizeof *r.rowptr);
	if (!r.rowptr)
		cli_oom();
	int32_t rank = 0;
	const char *why;
	for (int32_t i = 0; i < V; i++) {
		const char *w = llr_vocab_token(v, i);
		size_t wl = strlen(w);
		int special = i == eos || i == unk;
		if (i == eos)
			row_put(&r, fz_feature(&z, LLR_FEAT_EOS, strlen(LLR_FEAT_EOS), FZ_TOP, &why), 1.0f);
		else if (i == unk)
			row_put(&r, fz_feature(&z, LLR_FEAT_NOTTOP, strlen(LLR_FEAT_NOTTOP), FZ_TOP, &why), 1.0f);
		else if (o.top > 0) {
			if (rank < o.top && llr_vocab_count(v, i) > 0) {
				llr_buf b = {0};
				if (llr_buf_printf(&b, LLR_TOP_PREFIX "%s", w) < 0)
					cli_oom();
				row_put(&r, fz_feature(&z, b.data, b.len, FZ_TOP, &why), 1.0f);
				llr_buf_free(&b);
			} else {
				row_put(&r, fz_feature(&z, LLR_FEAT_NOTTOP, strlen(LLR_FEAT_NOTTOP), FZ_TOP, &why), 1.0f);
			}
			rank++;
		}
		int32_t lid = llr_strmap_get(z.lw, w, wl);
		if (lid >= 0)
			for (uint32_t k = 0; k < z.lwf[lid].n; k++)
				row_put(&r, z.lwf[lid].f[k], z.lwf[lid].v[k]);
		if (!special) {
			emit_ctx ec = {.z = &z, .r = &r, .word = w};
			if (morph) {
				ec.src = FZ_HUNSPELL;
				llr_morph_features(morph, w, wl, emit_row, &ec);
			}
			ec.src = FZ_ORTHO; /* llr_extract's names carry their kind */
			int rc = llr_extract(&ex, w, wl, emit_row, &ec);
			if (rc == LLR_EUTF8)
				cli_die("word '%s': invalid UTF-8", w);
		}
		/* Sort this row by column and drop repeats (the first wins). */
		size_t a = (size_t)r.rowptr[i], n = r.n - a;
		if (n > 1) {
			int32_t *pairs = llr_calloc(n, 2 * sizeof *pairs);
			if (!pairs)
				cli_oom();
			for (size_t k = 0; k < n; k++) {
				pairs[2 * k] = r.c[a + k];
				memcpy(&pairs[2 * k + 1], &r.v[a + k], sizeof(float));
			}
			qsort(pairs, n, 2 * sizeof *pairs, cmp_entry_col);
			size_t m = 0;
			for (size_t k = 0; k < n; k++) {
				if (m && r.c[a + m - 1] == pairs[2 * k])
					continue;
				r.c[a + m] = pairs[2 * k];
				memcpy(&r.v[a + m], &pairs[2 * k + 1], sizeof(float));
				m++;
			}
			r.n = a + m;
			free(pairs);
		}
		r.rowptr[i + 1] = (int64_t)r.n;
		if (r.n > (size_t)INT32_MAX)
			cli_die("more than %d non-zero entries in phi (the limit)", INT32_MAX);
	}
	llr_morph_close(morph);

	/* 4. Which features to keep, their columns: by source, then first
	 * seen.  Features no vocabulary word has are dropped, and with
	 * --min-feature-count those on fewer types (TOP features excepted). */
	int32_t Fall = (int32_t)llr_strmap_size(z.names);
	int64_t *df = llr_calloc((size_t)Fall + 1, sizeof *df);
	int32_t *col = llr_calloc((size_t)Fall + 1, sizeof *col);
	int32_t *col_in = llr_calloc((size_t)Fall + 1, sizeof *col_in);
	if (!df || !col || !col_in)
		cli_oom();
	for (size_t k = 0; k < r.n; k++)
		if (r.v[k] != 0.0f)
			df[r.c[k]]++;
	llr_lexicon lex = {0};
	lex.features = llr_strmap_new();
	lex.vocab = llr_strmap_new();
	lex.meta = llr_meta_new();
	if (!lex.features || !lex.vocab || !lex.meta)
		cli_oom();
	int64_t per_src[FZ_NSRC] = {0};
	unsigned used = 0;
	for (int s = 0; s < FZ_NSRC; s++) {
		for (int32_t f = 0; f < Fall; f++) {
			const char *nm = llr_strmap_str(z.names, f);
			int fs = z.fsrc[f];
			/* Extractor names say which extractor made them. */
			if (fs == FZ_ORTHO)
				fs = !strncmp(nm, "SUF:", 4) ? FZ_SUFFIX : !strncmp(nm, "CNG:", 4) ? FZ_NGRAMS : FZ_ORTHO;
			if (fs != s)
				continue;
			z.fsrc[f] = (unsigned char)fs;
			if (df[f] == 0 || (s != FZ_TOP && o.min_count > 0 && df[f] < o.min_count)) {
				col[f] = -1;
				continue;
			}
			col[f] = (int32_t)llr_strmap_size(lex.features);
			if (llr_strmap_add(lex.features, nm, llr_strmap_len(z.names, f)) < 0)
				cli_oom();
			per_src[s]++;
			used |= 1u << s;
		}
	}
	int32_t F = (int32_t)llr_strmap_size(lex.features);
	int own_psi = o.in_mask && (used & ~o.in_mask);
	if (own_psi) {
		lex.features_in = llr_strmap_new();
		if (!lex.features_in)
			cli_oom();
		for (int32_t f = 0; f < Fall; f++)
			col_in[f] = -1;
		/* Walk kept columns in phi order. */
		int32_t *byc = llr_calloc((size_t)F + 1, sizeof *byc);
		if (!byc)
			cli_oom();
		for (int32_t f = 0; f < Fall; f++)
			if (col[f] >= 0)
				byc[col[f]] = f;
		for (int32_t k = 0; k < F; k++) {
			int32_t f = byc[k];
			if (!(o.in_mask & (1u << z.fsrc[f])))
				continue;
			col_in[f] = (int32_t)llr_strmap_size(lex.features_in);
			if (llr_strmap_add(lex.features_in, llr_strmap_str(z.names, f), llr_strmap_len(z.names, f)) < 0)
				cli_oom();
		}
		free(byc);
	}

	/* 5. Phi (and Psi). */
	llr_err e = {0};
	llr_csr_builder *bphi = llr_csr_builder_new(F);
	llr_csr_builder *bpsi = own_psi ? llr_csr_builder_new((int32_t)llr_strmap_size(lex.features_in)) : NULL;
	int32_t *rc_ = llr_calloc((size_t)Fall + 1, sizeof *rc_), *rc_in = llr_calloc((size_t)Fall + 1, sizeof *rc_in);
	float *rv = llr_calloc((size_t)Fall + 1, sizeof *rv), *rv_in = llr_calloc((size_t)Fall + 1, sizeof *rv_in);
	if (!bphi || (own_psi && !bpsi) || !rc_ || !rc_in || !rv || !rv_in)
		cli_oom();
	int64_t nonid_tok = 0, word_tok = 0;
	unsigned char *covered = llr_calloc((size_t)V, 1);
	if (!covered)
		cli_oom();
	for (int32_t i = 0; i < V; i++) {
		size_t n = 0, nin = 0;
		for (int64_t k = r.rowptr[i]; k < r.rowptr[i + 1]; k++) {
			int32_t f = r.c[k];
			if (col[f] < 0 || r.v[k] == 0.0f)
				continue;
			rc_[n] = col[f];
			rv[n++] = r.v[k];
			if (z.fsrc[f] != FZ_TOP)
				covered[i] = 1;
			if (own_psi && col_in[f] >= 0) {
				rc_in[nin] = col_in[f];
				rv_in[nin++] = r.v[k];
			}
		}
		if (llr_csr_builder_row(bphi, rc_, rv, n, &e) < 0 || (own_psi && llr_csr_builder_row(bpsi, rc_in, rv_in, nin, &e) < 0))
			cli_die_err(&e);
		if (llr_strmap_add(lex.vocab, llr_vocab_token(v, i), strlen(llr_vocab_token(v, i))) < 0)
			cli_oom();
		if (i != eos) {
			word_tok += llr_vocab_count(v, i);
			if (covered[i])
				nonid_tok += llr_vocab_count(v, i);
		}
	}
	free(rc_);
	free(rc_in);
	free(rv);
	free(rv_in);
	if (!(lex.phi = llr_csr_builder_finish(bphi, &e)))
		cli_die_err(&e);
	if (own_psi && !(lex.psi = llr_csr_builder_finish(bpsi, &e)))
		cli_die_err(&e);
	if (!own_psi) {
		llr_strmap_free(lex.features_in);
		lex.features_in = NULL;
	}
	lex.eos_id = eos;
	lex.unk_id = unk;
	lex.extract = ex;

	/* 6. Background and meta. */
	if (!(lex.logb = llr_calloc((size_t)V, sizeof *lex.logb)))
		cli_oom();
	background(&o, v, lex.logb, lex.meta);
	llr_meta_setf(lex.meta, "unk_logb", "%.9g", (double)lex.logb[unk]);
	{
		llr_buf b = {0};
		for (int s = 0; s < FZ_NSRC; s++)
			if (used & (1u << s))
				llr_buf_printf(&b, "%s%s", b.len ? "," : "", fz_src_names[s]);
		llr_meta_set(lex.meta, "sources", b.len ? b.data : "");
		llr_buf_clear(&b);
		for (int s = 0; s < FZ_NSRC; s++)
			if (used & o.in_mask & (1u << s))
				llr_buf_printf(&b, "%s%s", b.len ? "," : "", fz_src_names[s]);
		llr_meta_set(lex.meta, "sources_in", own_psi ? (b.len ? b.data : "") : "same");
		llr_buf_free(&b);
	}
	llr_meta_setf(lex.meta, "top", "%d", o.top);
	llr_meta_setf(lex.meta, "lowercase", "%d", z.lower);
	llr_meta_setf(lex.meta, "min_feature_count", "%d", o.min_count);
	llr_meta_set(lex.meta, "unk_features", LLR_FEAT_NOTTOP);
	llr_meta_set(lex.meta, "eos_features", LLR_FEAT_EOS);
	if (!streaming) {
		llr_meta_setf(lex.meta, "tokens", "%lld", (long long)cp.tokens);
		llr_meta_setf(lex.meta, "sentences", "%lld", (long long)cp.sentences);
	}
	llr_meta_setf(lex.meta, "ids_chunk", "%zu", CHUNK_IDS);

	/* 7. Output. */
	int64_t stream_tok = 0, stream_unk = 0, stream_cov = 0, stream_sent = 0;
	if (o.dump) {
		dump(&o, &lex);
	} else {
		if (!o.output || !strcmp(o.output, "-"))
			cli_refuse_tty(1, "a tensor stream");
		llr_meta *m = llr_meta_new();
		if (!m || llr_lexicon_to_meta(&lex, m) < 0)
			cli_oom();
		llr_tensor_writer *w = llr_tw_open(o.output, "features", m, &e);
		if (!w)
			cli_die_err(&e);
		g_writer = w;
		atexit(abort_writer);
		llr_meta_free(m);
		if (llr_lexicon_write(w, &lex, &e) < 0)
			cli_die_err(&e);
		int32_t *buf = llr_malloc(CHUNK_IDS * sizeof *buf);
		if (!buf)
			cli_oom();
		size_t nb = 0;
		int chunk = 0;
		if (!streaming) {
			int32_t *map = llr_calloc(llr_vocab_size(cp.types) + 1, sizeof *map);
			if (!map)
				cli_oom();
			for (size_t i = 0; i < llr_vocab_size(cp.types); i++) {
				const char *w = llr_vocab_token(cp.types, (int32_t)i);
				map[i] = llr_vocab_id(v, w, strlen(w));
			}
			size_t s0 = 0;
			for (size_t i = 0; i < cp.nids; i++) {
				if (cp.ids[i] >= 0)
					continue;
				/* sentence [s0, i] */
				size_t slen = i + 1 - s0;
				if (nb && nb + slen > CHUNK_IDS) {
					write_ids(w, buf, nb, &chunk);
					nb = 0;
				}
				for (size_t k = s0; k <= i; k++) {
					int32_t id = cp.ids[k] < 0 ? eos : map[cp.ids[k]];
					if (nb == CHUNK_IDS) {
						write_ids(w, buf, nb, &chunk);
						nb = 0;
					}
					buf[nb++] = id;
				}
				s0 = i + 1;
			}
			free(map);
		} else {
			const char *line = first;
			size_t len = first_len;
			int more = 1;
			while (more) {
				size_t ntok = llr_tokens_count(line, len);
				if (nb && nb + ntok + 1 > CHUNK_IDS) {
					write_ids(w, buf, nb, &chunk);
					nb = 0;
				}
				size_t pos = 0, tl;
				const char *tok;
				while (llr_token_next(line, len, &pos, &tok, &tl)) {
					int32_t id = llr_vocab_id(v, tok, tl);
					if (id < 0) {
						id = unk;
						stream_unk++;
					}
					if (covered[id])
						stream_cov++;
					stream_tok++;
					if (nb == CHUNK_IDS) {
						write_ids(w, buf, nb, &chunk);
						nb = 0;
					}
					buf[nb++] = id;
				}
				if (nb == CHUNK_IDS) {
					write_ids(w, buf, nb, &chunk);
					nb = 0;
				}
				buf[nb++] = eos;
				stream_sent++;
				more = tok_next(&tin, &line, &len);
			}
		}
		if (nb)
			write_ids(w, buf, nb, &chunk);
		free(buf);
		g_writer = NULL;
		if (llr_tw_close(w, &e) < 0)
			cli_die_err(&e);
	}

	/* 8. Summary. */
	llr_buf b = {0};
	for (int s = 0; s < FZ_NSRC; s++)
		if (per_src[s])
			llr_buf_printf(&b, "%s%s %lld", b.len ? ", " : "", fz_src_names[s], (long long)per_src[s]);
	fprintf(stderr, "featurize: %d types, %d features (%s), nnz(phi) %d", V, F, b.len ? b.data : "none",
		lex.phi->nnz);
	if (lex.psi)
		fprintf(stderr, ", psi %d features nnz %d", lex.psi->cols, lex.psi->nnz);
	fputc('\n', stderr);
	if (streaming && !o.dump)
		fprintf(stderr, "featurize: %lld tokens in %lld sentences, %lld unknown, coverage %.2f%%\n",
			(long long)stream_tok, (long long)stream_sent, (long long)stream_unk,
			stream_tok ? 100.0 * (double)stream_cov / (double)stream_tok : 0.0);
	else
		fprintf(stderr, "featurize: %lld tokens%s, coverage %.2f%% (share of running tokens with a non-TOP feature)\n",
			(long long)word_tok, streaming ? " (vocabulary counts)" : "",
			word_tok ? 100.0 * (double)nonid_tok / (double)word_tok : 0.0);
	llr_buf_free(&b);
	tok_close(&tin);
	free(covered);
	free(df);
	free(col);
	free(col_in);
	free(r.c);
	free(r.v);
	free(r.rowptr);
	free(cp.ids);
	llr_vocab_free(cp.types);
	llr_vocab_free(v);
	fz_free(&z);
	llr_strmap_free(lex.vocab);
	llr_strmap_free(lex.features);
	llr_strmap_free(lex.features_in);
	llr_csr_free(lex.phi);
	llr_csr_free(lex.psi);
	free(lex.logb);
	llr_meta_free(lex.meta);
	free(o.extra);
	return 0;
}
