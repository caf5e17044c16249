/*
 * limits.c - the options of the families trained by gradient steps
 * that say when training stops and how the learning rate changes
 * (--epochs, --patience, --min-improvement, --clip, --max-time,
 * --max-tokens, --lr-decay, --lr-patience, --lr-decays): their defaults,
 * parsing, and on --resume the model's values for those not given.  The
 * schedule itself is the library's training driver's
 * (lib/train/schedule.c).  The spec is train(1).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "train.h"

void lim_defaults(llr_train_limits *l)
{
	*l = (llr_train_limits){
	    .epochs = 30,
	    .patience = 3,
	    .min_impr = 0.003,
	    .clip = 5,
	    .lr_patience = 1,
	    .lr_decays = 5,
	};
}

/* --max-time's duration (s, m, h, d; a number alone: seconds). */
static double parse_duration(const char *usage, const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double mul = 1;
	if (end != s && *end && !end[1]) {
		mul = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 : *end == 'd' ? 86400 : 0;
		if (mul > 0)
			end++;
	}
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		cli_usage_error(usage, "--max-time: not a positive duration: '%s'", s);
	return v * mul;
}

/* The schedule's options. */
static int parse_sched(llr_train_limits *l, unsigned *given, int c, const char *arg, const char *usage)
{
	switch (c) {
	case O_LR_DECAY:
		l->lr_decay = cli_parse_double(usage, "--lr-decay", arg, 0, 0.999);
		if (l->lr_decay > 0 && l->lr_decay < 1e-6)
			cli_usage_error(usage, "--lr-decay: %s is not 0 (off) or a factor in [1e-6, 0.999]", arg);
		*given |= LLR_LIM_LR_DECAY;
		return 1;
	case O_LR_PATIENCE:
		l->lr_patience = (int)cli_parse_int(usage, "--lr-patience", arg, 1, 1 << 20);
		*given |= LLR_LIM_LR_PATIENCE;
		return 1;
	case O_LR_DECAYS:
		l->lr_decays = (int)cli_parse_int(usage, "--lr-decays", arg, 0, 1 << 20);
		*given |= LLR_LIM_LR_DECAYS;
		return 1;
	}
	return 0;
}

int lim_parse_opt(llr_train_limits *l, unsigned *given, int c, const char *arg, const char *usage)
{
	switch (c) {
	case O_CLIP:
		l->clip = cli_parse_double(usage, "--clip", arg, 0, 1e12);
		*given |= LLR_LIM_CLIP;
		return 1;
	case O_MINIMPR:
		l->min_impr = cli_parse_double(usage, "--min-improvement", arg, 0, 1e6);
		*given |= LLR_LIM_MIN_IMPR;
		return 1;
	case O_PATIENCE:
		l->patience = (int)cli_parse_int(usage, "--patience", arg, 1, 1 << 20);
		*given |= LLR_LIM_PATIENCE;
		return 1;
	case O_EPOCHS:
		l->epochs = cli_parse_int(usage, "--epochs", arg, 0, 1 << 30);
		*given |= LLR_LIM_EPOCHS;
		return 1;
	case O_MAXTIME: l->max_time = parse_duration(usage, arg); return 1;
	case O_MAXTOKENS: l->max_tokens = cli_parse_int(usage, "--max-tokens", arg, 1, INT64_MAX); return 1;
	}
	return parse_sched(l, given, c, arg, usage);
}

void lim_resume(llr_train_limits *l, unsigned given, const llr_meta *m, const char *path)
{
	llr_err e = {0};
	if (llr_train_limits_resume(l, given, m, path, &e) < 0)
		cli_die_err(&e);
}
