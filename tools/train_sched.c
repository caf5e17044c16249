/*
 * train_sched.c - what the families trained by gradient steps (the
 * language model, train.c; the encoder-decoder, train_encdec.c) do at the
 * end of an epoch with the validation loss: keep the best weights, count
 * the epochs without one (--patience), and change the learning rate:
 * --lr-decay's schedule (restore the best weights, multiply the rate) for
 * any optimiser, else SGD's RNNLM halving.  Its state is the training
 * state's (bad_epochs, decays, halving, converged, lr), so a resumed run
 * goes on exactly.  The spec is train(1), --lr-decay and --optim.
 */
#include <math.h>
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

void sched_meta(const train_sched *s, llr_meta *m)
{
	if (!(s->decay > 0) && !llr_meta_get(m, "lr_decay"))
		return;
	if (llr_meta_setf(m, "lr_decay", "%.9g", s->decay) < 0 || llr_meta_setf(m, "lr_patience", "%d", s->patience) < 0 ||
	    llr_meta_setf(m, "lr_decays", "%d", s->max_decays) < 0)
		cli_oom();
}

void sched_resume(train_sched *s, const llr_meta *m)
{
	if (!s->set_decay)
		s->decay = train_meta_num(m, "lr_decay", s->decay);
	if (!s->set_patience)
		s->patience = (int)train_meta_num(m, "lr_patience", s->patience);
	if (!s->set_max)
		s->max_decays = (int)train_meta_num(m, "lr_decays", s->max_decays);
	if (!(s->decay >= 0 && s->decay < 1) || s->patience < 1 || s->max_decays < 0)
		cli_die("bad lr_decay, lr_patience or lr_decays in the resumed model's meta");
}

static void set_lr(llr_train_state *ts, double lr)
{
	ts->lr = lr;
	llr_optim_set_lr(ts->optim, (float)lr);
}

static void restore(float *w, const float *best, size_t n, int *best_current)
{
	if (!*best_current)
		memcpy(w, best, n * sizeof(float));
	*best_current = 1;
}

/* --lr-decay: after --lr-patience epochs in a row that do not beat the
 * best by --min-improvement (gain: the best before this epoch minus v),
 * the best weights back and the rate times F; such a stall after the
 * last decay stops training.  The optimiser's moments are kept. */
static void decay_schedule(llr_train_state *ts, const train_sched *s, double gain, double min_impr, float *w, const float *best,
                           size_t n, int *best_current)
{
	if (gain >= min_impr) {
		ts->stalls = 0;
		return;
	}
	if (++ts->stalls < s->patience)
		return;
	ts->stalls = 0;
	if (ts->decays >= s->max_decays) {
		ts->converged = 1;
		return;
	}
	restore(w, best, n, best_current);
	ts->decays++;
	set_lr(ts, ts->lr * s->decay);
}

/* RNNLM schedule (Mikolov), SGD without --lr-decay: a worse epoch is
 * undone; once the gain falls below min_impr the rate is halved every
 * epoch, and the second time it falls below, training stops. */
static void rnnlm_schedule(llr_train_state *ts, double min_impr, double v, float *w, const float *best, size_t n, int *best_current)
{
	int bad = isfinite(ts->last_valid) && v >= ts->last_valid;
	if (bad)
		restore(w, best, n, best_current);
	if (bad || (isfinite(ts->last_valid) && ts->last_valid - v < min_impr)) {
		if (ts->halving)
			ts->converged = 1;
		ts->halving = 1;
	}
	if (ts->halving && !ts->converged)
		set_lr(ts, ts->lr / 2);
	if (!bad)
		ts->last_valid = v;
}

void train_epoch_valid(llr_train_state *ts, const train_sched *s, double min_impr, double v, float *w, float *best, size_t n,
                       int *best_current)
{
	int improved = v < ts->best_valid - 1e-4;
	double gain = ts->best_valid - v;
	if (improved) {
		ts->best_valid = v;
		ts->best_epoch = ts->epoch;
		ts->bad_epochs = 0;
		memcpy(best, w, n * sizeof(float));
		*best_current = 1;
	} else {
		ts->bad_epochs++;
	}
	if (s->decay > 0)
		decay_schedule(ts, s, gain, min_impr, w, best, n, best_current);
	else if (llr_optim_cfg(ts->optim)->kind == LLR_OPT_SGD)
		rnnlm_schedule(ts, min_impr, v, w, best, n, best_current);
}
