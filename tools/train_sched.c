/*
 * train_sched.c - the options of the learning-rate schedule (--lr-decay,
 * --lr-patience, --lr-decays) of the families trained by gradient steps:
 * their defaults and parsing.  The schedule itself is the library's
 * training driver's (lib/train/schedule.c).  The spec is train(1).
 */
#include <string.h>

#include "cli.h"
#include "train.h"

void sched_defaults(train_sched *s)
{
	memset(s, 0, sizeof *s);
	s->patience = 1;
	s->max_decays = 5;
}

int sched_parse_opt(train_sched *s, int c, const char *arg, const char *usage)
{
	switch (c) {
	case O_LR_DECAY:
		s->decay = cli_parse_double(usage, "--lr-decay", arg, 0, 0.999);
		if (s->decay > 0 && s->decay < 1e-6)
			cli_usage_error(usage, "--lr-decay: %s is not 0 (off) or a factor in [1e-6, 0.999]", arg);
		s->set_decay = 1;
		return 1;
	case O_LR_PATIENCE:
		s->patience = (int)cli_parse_int(usage, "--lr-patience", arg, 1, 1 << 20);
		s->set_patience = 1;
		return 1;
	case O_LR_DECAYS:
		s->max_decays = (int)cli_parse_int(usage, "--lr-decays", arg, 0, 1 << 20);
		s->set_max = 1;
		return 1;
	}
	return 0;
}
