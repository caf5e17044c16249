/*
 * lmx.c - train's options for the LSTM language model's
 * character-aware input and its tree and class softmax outputs (Jernite's
 * thesis, chapters 2 and 3; train(1)): parsing them into the network
 * configuration's fields, and checking them.  A new tree or class
 * output's groups (llr_rnnlm_tree_init) and their re-learning in the
 * first epoch are the family's, lib/family/rnnlm/.  CLI-only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "train.h"

int lmx_parse_output(const char *s)
{
	if (!strcmp(s, "loglinear") || !strcmp(s, "ll"))
		return LLR_OUT_LOGLINEAR;
	if (!strcmp(s, "softmax"))
		return LLR_OUT_SOFTMAX;
	if (!strcmp(s, "tree"))
		return LLR_OUT_TREE;
	if (!strcmp(s, "classes"))
		return LLR_OUT_CLASSES;
	return 0;
}

const char *lmx_output_name(int output)
{
	switch (output) {
	case LLR_OUT_SOFTMAX: return "softmax";
	case LLR_OUT_TREE: return "tree";
	case LLR_OUT_CLASSES: return "classes";
	default: return "loglinear";
	}
}

void lmx_defaults(train_lmx *x)
{
	/* Kim et al. 2016, the small character model: 15-dimensional
	 * characters, widths 1 to 6 with 25 w filters each, one highway layer */
	memset(x, 0, sizeof *x);
	llr_net_config *c = &x->net;
	c->char_embed = 15;
	c->char_nw = 6;
	for (int k = 0; k < 6; k++) {
		c->char_width[k] = k + 1;
		c->char_filters[k] = 25 * (k + 1);
	}
	c->highway = 1;
	x->tree_update = 100;
}

/* "1:25,2:50,...": width:filters pairs. */
static void parse_filters(llr_net_config *x, const char *arg, const char *usage)
{
	const char *s = arg;
	x->char_nw = 0;
	while (*s) {
		char *end;
		errno = 0;
		long w = strtol(s, &end, 10), f = 0;
		int ok = end != s && *end == ':' && !errno && w >= 1 && w <= 48;
		if (ok) {
			s = end + 1;
			f = strtol(s, &end, 10);
			ok = end != s && !errno && f >= 1 && f <= 65536 && (*end == ',' || !*end);
		}
		if (!ok || x->char_nw == LLR_MAX_CHAR_WIDTHS)
			cli_usage_error(usage, "--char-filters: '%s' is not a list of at most %d width:count pairs (widths 1 to 48)", arg, LLR_MAX_CHAR_WIDTHS);
		x->char_width[x->char_nw] = (int32_t)w;
		x->char_filters[x->char_nw++] = (int32_t)f;
		s = *end ? end + 1 : end;
	}
	if (!x->char_nw)
		cli_usage_error(usage, "--char-filters: empty list");
}

int lmx_parse_opt(train_opts *o, int c, const char *arg, const char *usage)
{
	train_lmx *x = &o->x;
	llr_net_config *n = &x->net;
	switch (c) {
	case O_INPUT:
		if (!strcmp(arg, "word"))
			n->input = LLR_IN_WORD;
		else if (!strcmp(arg, "chars"))
			n->input = LLR_IN_CHARS;
		else if (!strcmp(arg, "word+chars"))
			n->input = LLR_IN_CONCAT;
		else
			cli_usage_error(usage, "--input: '%s' is not word, chars or word+chars", arg);
		x->set_input = 1;
		return 1;
	case O_COMBINE:
		if (!strcmp(arg, "concat"))
			x->sum = 0;
		else if (!strcmp(arg, "sum"))
			x->sum = 1;
		else
			cli_usage_error(usage, "--combine: '%s' is neither concat nor sum", arg);
		x->set_chars = 1;
		return 1;
	case O_CHAR_EMBED:
		n->char_embed = (int)cli_parse_int(usage, "--char-embed", arg, 1, 4096);
		x->set_chars = 1;
		return 1;
	case O_CHAR_FILTERS:
		parse_filters(n, arg, usage);
		x->set_chars = 1;
		return 1;
	case O_HIGHWAY:
		n->highway = (int)cli_parse_int(usage, "--highway", arg, 0, 8);
		x->set_chars = 1;
		return 1;
	case O_CLASSES:
		n->tree_arity = (int)cli_parse_int(usage, "--classes", arg, 2, INT32_MAX);
		x->set_classes = 1;
		return 1;
	case O_TREE_DEPTH:
		n->tree_depth = (int)cli_parse_int(usage, "--tree-depth", arg, 2, 8);
		x->set_tree = 1;
		return 1;
	case O_TREE_ARITY:
		n->tree_arity = (int)cli_parse_int(usage, "--tree-arity", arg, 2, 1 << 20);
		x->set_tree = 1;
		return 1;
	case O_TREE_CAP:
		n->tree_cap = (int)cli_parse_int(usage, "--tree-cap", arg, 1, INT32_MAX);
		x->set_tree = 1;
		return 1;
	case O_TREE_UPDATE:
		x->tree_update = (int)cli_parse_int(usage, "--tree-update", arg, 0, INT32_MAX);
		x->set_tree = 1;
		return 1;
	}
	return 0;
}

void lmx_check(train_opts *o, const char *usage)
{
	train_lmx *x = &o->x;
	llr_net_config *n = &x->net;
	if (o->resume && (x->set_input || x->set_chars || x->set_tree || x->set_classes))
		cli_usage_error(usage, "--resume: the model's input and output cannot change (no --input, --combine, --char-*, --highway, --classes, --tree-*)");
	if (x->set_chars && n->input == LLR_IN_WORD)
		cli_usage_error(usage, "--combine, --char-embed, --char-filters and --highway need --input chars or word+chars");
	if (x->sum && n->input != LLR_IN_CONCAT)
		cli_usage_error(usage, "--combine sum needs --input word+chars");
	if (x->set_tree && o->output != LLR_OUT_TREE)
		cli_usage_error(usage, "--tree-depth, --tree-arity, --tree-cap and --tree-update need --output tree");
	if (x->set_classes && o->output != LLR_OUT_CLASSES)
		cli_usage_error(usage, "--classes needs --output classes");
	if (x->sum) {
		int D = 0;
		for (int k = 0; k < n->char_nw; k++)
			D += n->char_filters[k];
		if (D != o->embed)
			cli_usage_error(usage, "--combine sum: the %d filters of --char-filters must add up to --embed %d", D, o->embed);
		n->input = LLR_IN_SUM;
	}
}
