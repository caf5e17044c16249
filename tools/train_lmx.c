/*
 * train_lmx.c - train's options for the LSTM language model's
 * character-aware input and its tree and class softmax outputs (Jernite's
 * thesis, chapters 2 and 3; train(1)): parsing and checking them, and the
 * fields of the network configuration they fill.  A new tree or class
 * output's groups (llr_rnnlm_tree_init) and their re-learning in the
 * first epoch are the family's, lib/family/rnnlm/.  CLI-only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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
	x->char_embed = 15;
	x->char_nw = 6;
	for (int k = 0; k < 6; k++) {
		x->char_width[k] = k + 1;
		x->char_filters[k] = 25 * (k + 1);
	}
	x->highway = 1;
	x->tree_update = 100;
}

/* "1:25,2:50,...": width:filters pairs. */
static void parse_filters(train_lmx *x, const char *arg, const char *usage)
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
	switch (c) {
	case O_INPUT:
		if (!strcmp(arg, "word"))
			x->input = LLR_IN_WORD;
		else if (!strcmp(arg, "chars"))
			x->input = LLR_IN_CHARS;
		else if (!strcmp(arg, "word+chars"))
			x->input = LLR_IN_CONCAT;
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
		x->char_embed = (int)cli_parse_int(usage, "--char-embed", arg, 1, 4096);
		x->set_chars = 1;
		return 1;
	case O_CHAR_FILTERS:
		parse_filters(x, arg, usage);
		x->set_chars = 1;
		return 1;
	case O_HIGHWAY:
		x->highway = (int)cli_parse_int(usage, "--highway", arg, 0, 8);
		x->set_chars = 1;
		return 1;
	case O_CLASSES:
		x->classes = (int)cli_parse_int(usage, "--classes", arg, 2, INT32_MAX);
		x->set_classes = 1;
		return 1;
	case O_TREE_DEPTH:
		x->tree_depth = (int)cli_parse_int(usage, "--tree-depth", arg, 2, 8);
		x->set_tree = 1;
		return 1;
	case O_TREE_ARITY:
		x->tree_arity = (int)cli_parse_int(usage, "--tree-arity", arg, 2, 1 << 20);
		x->set_tree = 1;
		return 1;
	case O_TREE_CAP:
		x->tree_cap = (int)cli_parse_int(usage, "--tree-cap", arg, 1, INT32_MAX);
		x->set_tree = 1;
		return 1;
	case O_TREE_UPDATE:
		x->tree_update = (int)cli_parse_int(usage, "--tree-update", arg, 0, INT32_MAX);
		x->set_tree = 1;
		return 1;
	}
	return 0;
}

void lmx_check(const train_opts *o, const char *usage)
{
	const train_lmx *x = &o->x;
	if (o->resume && (x->set_input || x->set_chars || x->set_tree || x->set_classes))
		cli_usage_error(usage, "--resume: the model's input and output cannot change (no --input, --combine, --char-*, --highway, --classes, --tree-*)");
	if (x->set_chars && x->input == LLR_IN_WORD)
		cli_usage_error(usage, "--combine, --char-embed, --char-filters and --highway need --input chars or word+chars");
	if (x->sum && x->input != LLR_IN_CONCAT)
		cli_usage_error(usage, "--combine sum needs --input word+chars");
	if (x->set_tree && o->output != LLR_OUT_TREE)
		cli_usage_error(usage, "--tree-depth, --tree-arity, --tree-cap and --tree-update need --output tree");
	if (x->set_classes && o->output != LLR_OUT_CLASSES)
		cli_usage_error(usage, "--classes needs --output classes");
	if (x->sum) {
		int D = 0;
		for (int k = 0; k < x->char_nw; k++)
			D += x->char_filters[k];
		if (D != o->embed)
			cli_usage_error(usage, "--combine sum: the %d filters of --char-filters must add up to --embed %d", D, o->embed);
	}
}

void lmx_config(const train_opts *o, llr_net_config *c)
{
	const train_lmx *x = &o->x;
	c->input = x->input == LLR_IN_CONCAT && x->sum ? LLR_IN_SUM : x->input;
	c->char_embed = x->char_embed;
	c->char_nw = x->char_nw;
	memcpy(c->char_width, x->char_width, sizeof c->char_width);
	memcpy(c->char_filters, x->char_filters, sizeof c->char_filters);
	c->highway = x->highway;
	c->tree_depth = x->tree_depth;
	c->tree_arity = o->output == LLR_OUT_CLASSES ? x->classes : x->tree_arity;
	c->tree_cap = x->tree_cap;
}
