/*
 * featurize - word features phi/psi and the background b for a
 * vocabulary, plus the corpus as token ids: the tensor stream train reads
 * (kind "features"), or with --dump the lexicon as text.  The spec is
 * man/featurize.1.  The work is the library's (llr_featurizer,
 * lib/featurize/); this file parses the options, draws the progress line,
 * prints the notes and the summary, and formats --dump.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"

static const char usage[] =
    "usage: featurize [-hlq] [--nfkc] [--lang en|fr] [--top M] [--conllu FILE] [--lexicon FILE] [--tagged FILE]\n"
    "                 [--ortho] [--suffix N] [--char-ngrams A-B] [--hunspell PATH]\n"
    "                 [--min-feature-count N] [--input-features LIST] [--lexicon-scope vocab|all]\n"
    "                 [--vocab FILE | --vocab-from corpus|corpus+lexicon] [--extra FILE]\n"
    "                 [--background uniform|unigram[:K]|ngram:LM|FILE] [--background fsa:FILE|regex:PATTERN|grammar:FILE [--skip-rejected]]\n"
    "                 [--spelling N [--signature-samples N] [--no-oov-features]]\n"
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
    "  --background B           uniform, unigram[:K] (default), ngram:LM or a FILE; or an automaton\n"
    "                           fsa:FILE (OpenFst text), regex:PATTERN or grammar:FILE (GBNF)\n"
    "                           multiplying it (give both)\n"
    "  --skip-rejected          skip the corpus sentences the automaton rejects (default: an error)\n"
    "  --spelling N             add a character N-gram spelling model (open vocabulary)\n"
    "  --no-oov-features        with --spelling, no OOV: features\n"
    "  --signature-samples N    draw N strings for the signature masses\n"
    "  --dump                   write the lexicon as text instead of the stream\n"
    "  --source SRC             parallel data: SRC's lines are the sources of the target's\n"
    "  -o, --output FILE        write to FILE (atomically; .gz .bz2 .xz .zst compress)\n";

/* ------------------------------------------------------------ options */

/* The options as parsed, and what the tool keeps beside them. */
typedef struct fz_cli {
	llr_featurize_opts o;
	llr_fz_source *src; /* --conllu, --lexicon, --tagged, in order */
	int nsrc;
	char **extra; /* --extra */
	int nextra;
	const char *output;
	int dump, quiet;
	cli_progress prog; /* the progress line of the reading */
	int to_stdout;     /* the output goes to standard output */
} fz_cli;

static char *fz_stdin_only[] = {"-"};

static void fz_add_str(char ***v, int *n, char *s)
{
	char **p = llr_reallocarray(*v, (size_t)*n + 1, sizeof *p);
	if (!p)
		cli_oom();
	p[(*n)++] = s;
	*v = p;
}

static void fz_add_src(fz_cli *T, int kind, const char *path)
{
	llr_fz_source *p = llr_reallocarray(T->src, (size_t)T->nsrc + 1, sizeof *p);
	if (!p)
		cli_oom();
	p[T->nsrc].kind = kind;
	p[T->nsrc].path = path;
	T->src = p;
	T->nsrc++;
}

static unsigned fz_parse_sources(const char *s)
{
	unsigned mask = 0;
	const char *p = s;
	while (*p) {
		const char *q = strchr(p, ',');
		size_t l = q ? (size_t)(q - p) : strlen(p);
		int k;
		for (k = 0; k < LLR_FZ_NSRC; k++)
			if (strlen(llr_featurize_source_name(k)) == l && !strncmp(p, llr_featurize_source_name(k), l))
				break;
		if (k == LLR_FZ_NSRC)
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

/* --background fsa:FILE, regex:PATTERN or grammar:FILE into o, once;
 * any other background into *bg. */
static void fz_background_opt(const char *s, llr_featurize_opts *o, const char **bg)
{
	static const struct {
		const char *prefix, *what;
		llr_fz_automaton_kind kind;
	} kinds[] = {{"fsa:", "file", LLR_FZ_BG_FSA}, {"regex:", "pattern", LLR_FZ_BG_REGEX}, {"grammar:", "file", LLR_FZ_BG_GRAMMAR}};
	size_t k = 0;
	while (k < sizeof kinds / sizeof *kinds && strncmp(s, kinds[k].prefix, strlen(kinds[k].prefix)))
		k++;
	if (k == sizeof kinds / sizeof *kinds) {
		*bg = s;
		return;
	}
	if (o->bg_fsa)
		cli_usage_error(usage, "--background %s: one automaton or grammar only", s);
	o->bg_fsa = s + strlen(kinds[k].prefix);
	o->bg_fsa_kind = kinds[k].kind;
	if (!*o->bg_fsa)
		cli_usage_error(usage, "--background %s needs a %s", s, kinds[k].what);
}

/* The options that go with another one. */
static void fz_check_pairs(const llr_featurize_opts *o, int dump)
{
	if (o->skip_rejected && !o->bg_fsa)
		cli_usage_error(usage, "--skip-rejected: goes with --background fsa:FILE, regex:PATTERN or grammar:FILE");
	if (o->sig_samples && !o->spelling)
		cli_usage_error(usage, "--signature-samples: goes with --spelling N");
	if (o->no_oov && !o->spelling)
		cli_usage_error(usage, "--no-oov-features: goes with --spelling N");
	if (o->spelling && dump)
		cli_usage_error(usage, "--spelling: not with --dump (the dump holds the features only)");
}

/* --background, parsed once: uniform, unigram[:K] (K defaults to 0.5),
 * ngram:LM or a file. */
static void fz_parse_background(const char *s, llr_featurize_opts *o)
{
	o->bg_k = 0.5;
	if (!strcmp(s, "uniform")) {
		o->bg = LLR_FZ_BG_UNIFORM;
	} else if (!strncmp(s, "unigram", 7) && (s[7] == '\0' || s[7] == ':')) {
		o->bg = LLR_FZ_BG_UNIGRAM;
		if (s[7] == ':')
			o->bg_k = cli_parse_double(usage, "--background unigram:K", s + 8, 1e-9, 1e9);
	} else if (!strncmp(s, "ngram:", 6)) {
		o->bg = LLR_FZ_BG_NGRAM;
		o->bg_file = s + 6;
		if (!*o->bg_file)
			cli_usage_error(usage, "--background ngram: needs a file");
	} else {
		o->bg = LLR_FZ_BG_FILE;
		o->bg_file = s;
	}
}

static void fz_parse_opts(int argc, char **argv, fz_cli *T)
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
		O_LANG,
		O_SKIPREJ
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
	    {"skip-rejected", no_argument, 0, O_SKIPREJ},
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
	llr_featurize_opts *o = &T->o;
	const char *bg = "unigram";
	int c;
	llr_featurize_opts_init(o);
	while ((c = cli_getopt(argc, argv, ":hlo:q", lopts, usage)) != -1) {
		switch (c) {
		case 'l': o->tok.lower = 1; break;
		case 'q': T->quiet = 1; break;
		case O_NFKC: o->tok.norm = LLR_NORM_NFKC; break;
		case O_LANG: o->tok.clitics = fz_parse_lang(optarg); break;
		case 'o': T->output = optarg; break;
		case O_TOP: o->top = (int)cli_parse_int(usage, "--top", optarg, 0, LLR_MAX_VOCAB); break;
		case O_CONLLU: fz_add_src(T, LLR_FZ_CONLLU, optarg); break;
		case O_LEXICON: fz_add_src(T, LLR_FZ_LEXICON, optarg); break;
		case O_TAGGED: fz_add_src(T, LLR_FZ_TAGGED, optarg); break;
		case O_ORTHO: o->extract.ortho = 1; break;
		case O_SUFFIX: o->extract.suffix = (int)cli_parse_int(usage, "--suffix", optarg, 1, 16); break;
		case O_NGRAMS: fz_parse_ngrams(optarg, &o->extract); break;
		case O_HUNSPELL: o->hunspell = optarg; break;
		case O_MINCOUNT: o->min_count = (int)cli_parse_int(usage, "--min-feature-count", optarg, 1, INT32_MAX); break;
		case O_INPUT: o->in_mask = fz_parse_sources(optarg); break;
		case O_VOCAB: o->vocab_file = optarg; break;
		case O_VOCABFROM: o->vocab_lex = fz_parse_vocab_from(optarg); break;
		case O_EXTRA: fz_add_str(&T->extra, &T->nextra, optarg); break;
		case O_BACKGROUND: fz_background_opt(optarg, o, &bg); break;
		case O_SKIPREJ: o->skip_rejected = 1; break;
		case O_DUMP: T->dump = o->dump = 1; break;
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
	o->extra = T->extra;
	o->nextra = T->nextra;
	o->sources = T->src;
	o->nsources = T->nsrc;
	fz_parse_background(bg, o);
	fz_check_pairs(o, T->dump);
	if (o->lex_vocab && o->vocab_lex)
		cli_usage_error(usage, "--lexicon-scope vocab: not with --vocab-from corpus+lexicon (every lexicon word is then in the vocabulary)");
	if (o->vocab_lex && !T->nsrc)
		cli_usage_error(usage, "--vocab-from corpus+lexicon needs a lexicon source (--conllu, --lexicon, --tagged)");
	if (o->source && T->dump)
		cli_usage_error(usage, "--source: not with --dump (the lexicon is the target's)");
	if (o->source && (argc - optind != 1 || !strcmp(o->files[0], "-")))
		cli_usage_error(usage, "--source: want exactly one target file, aligned with the source line by line");
}

/* ------------------------------------------------------------ output */

/* The progress of the library's reading, on the progress line. */
static void fz_progress(void *ctx, const llr_fz_progress *e)
{
	fz_cli *T = ctx;
	switch (e->at) {
	case LLR_FZ_BEGIN:
		cli_progress_init(&T->prog, T->quiet, T->to_stdout);
		cli_progress_inputs(&T->prog, e->paths, e->npaths);
		break;
	case LLR_FZ_OPEN: cli_progress_lines(&T->prog, e->path, e->lines); break;
	case LLR_FZ_STEP:
		if (cli_progress_due(&T->prog))
			cli_progress_show(&T->prog, e->n, e->unit, e->tokens, "tok", cli_progress_fraction(&T->prog));
		break;
	case LLR_FZ_END: cli_progress_clear(); break;
	}
}

/* The library's notes: "featurize: msg" on stderr. */
static void fz_note(void *ctx, const char *msg)
{
	cli_warn("%s", msg);
}

/* --dump: the lexicon as text, token<TAB>feat feat=value ... */
static void fz_dump(const char *output, const llr_lexicon *x)
{
	cli_output out;
	cli_output_open(&out, output);
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

/* The summary on stderr. */
static void fz_summary(const fz_cli *T, const llr_featurize_stats *st, const llr_lexicon *lex)
{
	llr_buf b = {0};
	for (int s = 0; s < LLR_FZ_NSRC; s++)
		if (st->per_source[s])
			llr_buf_printf(&b, "%s%s %lld", b.len ? ", " : "", llr_featurize_source_name(s), (long long)st->per_source[s]);
	fprintf(stderr, "%s: %d types, %d features (%s), nnz(phi) %d", cli_prog, st->types, st->features, b.len ? b.data : "none",
	        lex->phi->nnz);
	if (lex->psi)
		fprintf(stderr, ", psi %d features nnz %d", lex->psi->cols, lex->psi->nnz);
	fputc('\n', stderr);
	if (st->streamed && !T->dump)
		fprintf(stderr, "%s: %lld tokens in %lld sentences, %lld unknown (%lld as their signature), coverage %.2f%%\n", cli_prog,
		        (long long)st->stream_tokens, (long long)st->stream_sentences, (long long)st->stream_unknown,
		        (long long)st->stream_signatures,
		        st->stream_tokens ? 100.0 * (double)st->stream_covered / (double)st->stream_tokens : 0.0);
	else
		fprintf(stderr, "%s: %lld tokens%s, coverage %.2f%% (share of running tokens with a non-TOP feature)\n", cli_prog,
		        (long long)st->word_tokens, st->streamed ? " (vocabulary counts)" : "",
		        st->word_tokens ? 100.0 * (double)st->covered_tokens / (double)st->word_tokens : 0.0);
	llr_buf_free(&b);
	if (T->o.source)
		fprintf(stderr, "%s: source %s: %lld lines (%lld empty), %lld tokens, %zu types\n", cli_prog, T->o.source,
		        (long long)st->source_lines, (long long)st->source_empty, (long long)st->source_tokens, st->source_types);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	cli_init(argv[0], "featurize");
	cli_set_help(help);
	fz_cli T = {0};
	fz_parse_opts(argc, argv, &T);
	T.to_stdout = !T.output || !strcmp(T.output, "-");
	cli_progress_init(&T.prog, T.quiet, T.to_stdout);
	if (T.prog.on)
		T.o.progress = fz_progress;
	T.o.note = fz_note;
	T.o.ctx = &T;
	llr_err e = {0};
	llr_featurizer *f = llr_featurizer_new(&T.o, &e);
	if (!f || llr_featurizer_build(f, &e) < 0)
		cli_die_err(&e);
	if (T.dump) {
		fz_dump(T.output, llr_featurizer_lexicon(f));
	} else {
		if (T.to_stdout)
			cli_refuse_tty(1, "a tensor stream");
		if (llr_featurizer_write(f, T.output, &e) < 0)
			cli_die_err(&e);
	}
	if (!T.quiet)
		fz_summary(&T, llr_featurizer_stats(f), llr_featurizer_lexicon(f));
	if (llr_featurizer_stats(f)->rejected) /* even with -q: data were dropped */
		fprintf(stderr, "%s: %lld sentences the %s rejects skipped\n", cli_prog, (long long)llr_featurizer_stats(f)->rejected,
		        T.o.bg_fsa_kind == LLR_FZ_BG_GRAMMAR ? "grammar" : "automaton");
	llr_featurizer_free(f);
	free(T.src);
	free(T.extra);
	return 0;
}
