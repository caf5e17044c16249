/*
 * limits.c - the limits and schedule of a training run (llr_train_limits)
 * in a model's meta and back from a resumed model's: what the families'
 * setups write and read (options.c, lib/family/<name>/), below the
 * training driver that keeps to them (lib/train/).
 */
#include "family.h"

double llr_meta_num(const llr_meta *m, const char *key, double dflt)
{
	double v;
	return llr_meta_get_f64(m, key, &v, NULL) < 0 ? dflt : v;
}

int llr_train_limits_meta(const llr_train_limits *l, llr_meta *m)
{
	if (llr_meta_setf(m, "patience", "%d", l->patience) < 0 || llr_meta_setf(m, "max_epochs", "%lld", (long long)l->epochs) < 0 ||
	    llr_meta_setf(m, "clip", "%.9g", l->clip) < 0 || llr_meta_setf(m, "min_improvement", "%.9g", l->min_impr) < 0)
		return LLR_ENOMEM;
	return LLR_OK;
}

int llr_train_schedule_meta(const llr_train_limits *l, llr_meta *m)
{
	if (!(l->lr_decay > 0) && !llr_meta_get(m, "lr_decay"))
		return LLR_OK;
	if (llr_meta_setf(m, "lr_decay", "%.9g", l->lr_decay) < 0 || llr_meta_setf(m, "lr_patience", "%d", l->lr_patience) < 0 ||
	    llr_meta_setf(m, "lr_decays", "%d", l->lr_decays) < 0)
		return LLR_ENOMEM;
	return LLR_OK;
}

int llr_train_limits_resume(llr_train_limits *l, unsigned keep, const llr_meta *m, const char *path, llr_err *err)
{
	if (!(keep & LLR_LIM_CLIP))
		l->clip = llr_meta_num(m, "clip", l->clip);
	if (!(keep & LLR_LIM_MIN_IMPR))
		l->min_impr = llr_meta_num(m, "min_improvement", l->min_impr);
	if (!(keep & LLR_LIM_PATIENCE))
		l->patience = (int)llr_meta_num(m, "patience", l->patience);
	if (!(keep & LLR_LIM_EPOCHS))
		l->epochs = (int64_t)llr_meta_num(m, "max_epochs", (double)l->epochs);
	if (l->patience < 1 || l->epochs < 0)
		return llr_err_set(err, LLR_EFORMAT, "%s: bad patience or max_epochs in meta", path);
	if (!(keep & LLR_LIM_LR_DECAY))
		l->lr_decay = llr_meta_num(m, "lr_decay", l->lr_decay);
	if (!(keep & LLR_LIM_LR_PATIENCE))
		l->lr_patience = (int)llr_meta_num(m, "lr_patience", l->lr_patience);
	if (!(keep & LLR_LIM_LR_DECAYS))
		l->lr_decays = (int)llr_meta_num(m, "lr_decays", l->lr_decays);
	if (!(l->lr_decay >= 0 && l->lr_decay < 1) || l->lr_patience < 1 || l->lr_decays < 0)
		return llr_err_set(err, LLR_EFORMAT, "bad lr_decay, lr_patience or lr_decays in the resumed model's meta");
	return LLR_OK;
}
