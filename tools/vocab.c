/*
 * vocab - count tokens into a vocabulary (see man/vocab.1).
 *
 * Reads one-sentence-per-line token files (or, with -m, count files) and
 * writes `token<TAB>count`, most frequent first, ties in byte order, with
 * one </s> per sentence; empty lines separate paragraphs and count
 * nothing.  Counting and sorting are llr_vocab_* in libllrnn.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "llrnn.h"

static const char usage[] =
	"usage: vocab [-hm] [--min-count n] [-o file] [--top n] [file ...]\n"
	"       vocab --version\n";

static const char help[] =
	"Options:\n"
	"  -h, --help               print this help and exit\n"
	"  --version                print the version and exit\n"
	"  -m, --merge              sum count files written by vocab\n"
	"  --min-count n            write only tokens counted at least n times (default 1)\n"
	"  -o, --output file        write to file (atomically; .gz .bz2 .xz .zst compress)\n"
	"  --top n                  write at most the n first lines\n";

int main(int argc, char **argv)
{
	enum { O_MIN = 256, O_TOP };
	static const struct option longopts[] = {
		{"merge", no_argument, NULL, 'm'},
		{"min-count", required_argument, NULL, O_MIN},
		{"output", required_argument, NULL, 'o'},
		{"top", required_argument, NULL, O_TOP},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	cli_init(argv[0], "vocab");
	cli_set_help(help);
	const char *outpath = NULL;
	int merge = 0, c;
	long long min_count = 1, top = -1;
	while ((c = cli_getopt(argc, argv, ":hmo:", longopts, usage)) != -1) {
		switch (c) {
		case 'm':
			merge = 1;
			break;
		case 'o':
			outpath = optarg;
			break;
		case O_MIN:
			min_count = cli_parse_int(usage, "--min-count", optarg, 0, INT64_MAX);
			break;
		case O_TOP:
			top = cli_parse_int(usage, "--top", optarg, 0, INT64_MAX);
			break;
		}
	}
	llr_err e = {0};
	llr_vocab *v = llr_vocab_new();
	if (!v)
		cli_oom();
	int nfiles = argc - optind;
	for (int i = 0; i < (nfiles ? nfiles : 1); i++) {
		llr_lines *l = llr_lines_open(nfiles ? argv[optind + i] : "-", 0, &e);
		if (!l)
			cli_die_err(&e);
		int rc;
		if (merge) {
			rc = llr_vocab_read(v, l, &e);
		} else {
			const char *line;
			size_t len;
			while ((rc = llr_lines_next(l, &line, &len, &e)) > 0)
				if ((rc = llr_vocab_count_line(v, line, len, &e)) < 0)
					break;
		}
		llr_lines_close(l);
		if (rc < 0)
			cli_die_err(&e);
	}
	if (llr_vocab_sort(v, &e))
		cli_die_err(&e);
	cli_output o;
	cli_output_open(&o, outpath);
	size_t n = llr_vocab_size(v);
	long long written = 0;
	for (size_t id = 0; id < n && (top < 0 || written < top); id++) {
		int64_t cnt = llr_vocab_count(v, (int32_t)id);
		if (cnt < min_count)
			break; /* sorted by count: nothing further qualifies */
		fprintf(o.fp, "%s\t%" PRId64 "\n", llr_vocab_token(v, (int32_t)id), cnt);
		written++;
	}
	llr_vocab_free(v);
	cli_output_close(&o);
	return 0;
}
