/*
 * featurize-stream OUT M FILE... - a program that builds a features stream
 * through libllrnn's builder alone (llr_featurizer; tests/30-featurize.bats):
 * the stream `featurize --top M --ortho -q -o OUT FILE...` writes, with
 * the notes the tool would print on stderr as "featurize-stream: ...".
 */
#include <stdio.h>
#include <stdlib.h>

#include "llrnn.h"

static void note(void *ctx, const char *msg)
{
	fprintf(stderr, "featurize-stream: %s\n", msg);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return fprintf(stderr, "usage: featurize-stream OUT M FILE...\n"), 2;
	llr_featurize_opts o;
	llr_featurize_opts_init(&o);
	o.files = argv + 3;
	o.nfiles = argc - 3;
	o.top = atoi(argv[2]);
	o.extract.ortho = 1;
	o.note = note;
	llr_err err = {0};
	llr_featurizer *f = llr_featurizer_new(&o, &err);
	if (!f || llr_featurizer_build(f, &err) != LLR_OK || llr_featurizer_write(f, argv[1], &err) != LLR_OK)
		return fprintf(stderr, "featurize-stream: %s\n", err.msg), 1;
	const llr_featurize_stats *st = llr_featurizer_stats(f);
	fprintf(stderr, "featurize-stream: %d types, %d features\n", st->types, st->features);
	llr_featurizer_free(f);
	return 0;
}
