/*
 * options.c - train(1)'s options as the library declares them: the
 * options every family trained by gradient steps shares, the rows each
 * family adds (its llr_trainer, family.h), the choice of the family to
 * train, and the values of the options given, parsed and checked against
 * that family.  A new trainable family declares its options and how it is
 * chosen in its own folder; train itself knows none of them.  Never
 * prints: usage errors are LLR_EUSAGE, the family's lines go to the
 * program's note function.
 */
#include "family.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

/* The shared options (the families' rows may give one of them their own
 * default or range, or refuse it). */
static const llr_train_opt common[] = {
	{"verbose", 'v', LLR_TOPT_FLAG, 0, .help = "notes on stderr"},
	{"o", 'o', LLR_TOPT_PATH, LLR_TOPT_NOLONG | LLR_TOPT_EVERY, .arg = "model",
	 .help = "write the model (every epoch end; .gz .bz2 .xz .zst compress)"},
	{"quiet", 'q', LLR_TOPT_FLAG, LLR_TOPT_EVERY, .help = "no progress or summary lines"},
	{"seed", 's', LLR_TOPT_INT, 0, 0, INT64_MAX, .dflt = "1", .arg = "seed", .help = "seed of every random choice (default 1)"},
	{"batch", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "32", .arg = "n", .help = "sentences per minibatch (default 32)"},
	{"optim", 0, LLR_TOPT_CHOICE, 0, .choices = "rmsprop|adam|sgd", .dflt = "rmsprop", .arg = "rmsprop|adam|sgd",
	 .help = "the optimiser (default rmsprop)", .bad = "unknown optimiser '%s' (rmsprop, adam, sgd)"},
	{"lr", 0, LLR_TOPT_DOUBLE, 0, .lo = 1e-12, .hi = 1e30, .arg = "x", .help = "learning rate (default 0.001; 1 for sgd)"},
	{"eps", 0, LLR_TOPT_DOUBLE, 0, .lo = 1e-30, .hi = 1, .arg = "x", .help = "RMSprop's and Adam's epsilon (default 1e-8)"},
	{"clip", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1e12, .dflt = "5", .arg = "x",
	 .help = "largest global gradient norm; 0 none (default 5)"},
	{"min-improvement", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1e6, .dflt = "0.003", .arg = "x",
	 .help = "the schedules' threshold on the validation gain"},
	{"lr-decay", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 0.999, .arg = "f",
	 .help = "multiply the learning rate by f when validation stalls"},
	{"lr-patience", 0, LLR_TOPT_INT, 0, 1, 1 << 20, .dflt = "1", .arg = "n", .help = "stalled epochs before a decay (default 1)"},
	{"lr-decays", 0, LLR_TOPT_INT, 0, 0, 1 << 20, .dflt = "5", .arg = "n", .help = "decays at most (default 5)"},
	{"valid", 0, LLR_TOPT_PATH, 0, .arg = "file", .help = "validation tokens, for early stopping"},
	{"patience", 0, LLR_TOPT_INT, 0, 1, 1 << 20, .dflt = "3", .arg = "n",
	 .help = "stop after n epochs without a new best (default 3)"},
	{"epochs", 0, LLR_TOPT_INT, 0, 0, 1 << 30, .dflt = "30", .arg = "n", .help = "stop after n epochs in all (default 30)"},
	{"max-time", 0, LLR_TOPT_DURATION, 0, .arg = "duration", .help = "stop after this wall-clock time (s, m, h, d)"},
	{"max-tokens", 0, LLR_TOPT_INT, 0, 1, INT64_MAX, .arg = "n", .help = "stop after this run's steps predicted n tokens"},
	{"threads", 0, LLR_TOPT_INT, 0, 0, 1024, .arg = "n", .help = "BLAS threads (default: the cores)"},
	{"distributed", 0, LLR_TOPT_FLAG, 0, .help = "one rank of an MPI job (mpirun)"},
	{"log", 0, LLR_TOPT_PATH, 0, .arg = "file", .help = "write the learning curve as TSV"},
	{"progress", 0, LLR_TOPT_INT, 0, 0, INT32_MAX, .dflt = "100", .arg = "n",
	 .help = "off a terminal, a step line every n steps (default 100)"},
	{"resume", 0, LLR_TOPT_PATH, 0, .arg = "model", .help = "continue the run saved in model"},
	{0},
};

typedef struct slot {
	const llr_train_opt *row;
	const char *given; /* the value given ("" for a flag), NULL: not given */
	long long i;
	double d;
	const char *s;
} slot;

struct llr_train_args {
	char **name, **value; /* the options given, in the order first given */
	size_t ngiven;
	int nops;
	char **ops;
	const llr_family *fam;
	slot *slots;
	size_t nslots;
	void (*note)(void *ctx, const char *line);
	void *note_ctx;
	void (*catch_signals)(void);
	const volatile sig_atomic_t *signal;
};

/* -------------------------------------------------------------- tables */

static const llr_trainer *trainer_at(size_t k)
{
	const llr_family *f = llr_family_at(k);
	return f ? f->trainer : NULL;
}

const llr_train_opt *llr_train_option(size_t i)
{
	size_t n = sizeof common / sizeof *common - 1;
	if (i < n)
		return &common[i];
	i -= n;
	for (size_t k = 0; llr_family_at(k); k++) {
		const llr_trainer *t = trainer_at(k);
		if (!t)
			continue;
		for (n = 0; t->opts[n].name; n++)
			;
		if (i < n)
			return &t->opts[i];
		i -= n;
	}
	return NULL;
}

const char *llr_train_synopsis(size_t i)
{
	for (size_t k = 0; llr_family_at(k); k++) {
		const llr_trainer *t = trainer_at(k);
		if (t && t->synopsis && i-- == 0)
			return t->synopsis;
	}
	return NULL;
}

static const llr_train_opt *row_in(const llr_train_opt *rows, const char *name)
{
	for (; rows && rows->name; rows++)
		if (!strcmp(rows->name, name))
			return rows;
	return NULL;
}

/* The row of name for family f: its own, else a shared one it takes. */
static const llr_train_opt *row_for(const llr_family *f, const char *name)
{
	const llr_train_opt *r = row_in(f->trainer->opts, name);
	if (r)
		return r;
	r = row_in(common, name);
	return r && (f->trainer->build || (r->flags & LLR_TOPT_EVERY)) ? r : NULL;
}

/* How a message spells an option: --name, or -x for a letter-only one
 * (value: -x whenever it has a letter, as in "-s: not an integer"). */
static const char *spell(const llr_train_opt *r, int value, char *buf, size_t size)
{
	if (r->letter && (value || (r->flags & LLR_TOPT_NOLONG)))
		snprintf(buf, size, "-%c", r->letter);
	else
		snprintf(buf, size, "--%s", r->name);
	return buf;
}

/* --------------------------------------------------------------- given */

llr_train_args *llr_train_args_new(void)
{
	return llr_calloc(1, sizeof(llr_train_args));
}

void llr_train_args_free(llr_train_args *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->ngiven; i++) {
		free(a->name[i]);
		free(a->value[i]);
	}
	free(a->name);
	free(a->value);
	free(a->slots);
	free(a);
}

static int known(const char *name)
{
	const llr_train_opt *r;
	for (size_t i = 0; (r = llr_train_option(i)); i++)
		if (!strcmp(r->name, name))
			return 1;
	return 0;
}

static char *dup(const char *s)
{
	return s ? llr_strndup(s, strlen(s)) : NULL;
}

int llr_train_args_give(llr_train_args *a, const char *name, const char *value, llr_err *err)
{
	if (!known(name))
		return llr_err_set(err, LLR_EINVAL, "--%s: no such training option", name);
	char *v = dup(value ? value : "");
	if (!v)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t i = 0; i < a->ngiven; i++)
		if (!strcmp(a->name[i], name)) {
			free(a->value[i]);
			a->value[i] = v;
			return LLR_OK;
		}
	char **n = realloc(a->name, (a->ngiven + 1) * sizeof *n);
	if (n)
		a->name = n;
	char **vs = n ? realloc(a->value, (a->ngiven + 1) * sizeof *vs) : NULL;
	if (vs)
		a->value = vs;
	char *k = vs ? dup(name) : NULL;
	if (!k) {
		free(v);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	a->name[a->ngiven] = k;
	a->value[a->ngiven++] = v;
	return LLR_OK;
}

void llr_train_args_operands(llr_train_args *a, int n, char **v)
{
	a->nops = n;
	a->ops = v;
}

void llr_train_args_on_note(llr_train_args *a, void (*note)(void *ctx, const char *line), void *ctx)
{
	a->note = note;
	a->note_ctx = ctx;
}

void llr_train_args_on_signal(llr_train_args *a, void (*catch_fn)(void), const volatile sig_atomic_t *flag)
{
	a->catch_signals = catch_fn;
	a->signal = flag;
}

void llr_train_catch_signals(const llr_train_args *a)
{
	if (a->catch_signals)
		a->catch_signals();
}

int llr_train_signal(const llr_train_args *a)
{
	return a->signal ? (int)*a->signal : 0;
}

/* -------------------------------------------------------------- choice */

static int given_selects(const llr_train_args *a, const llr_trainer *t)
{
	for (size_t i = 0; i < a->ngiven; i++) {
		const llr_train_opt *r = row_in(t->opts, a->name[i]);
		if (r && (r->flags & LLR_TOPT_SELECTS))
			return 1;
	}
	return 0;
}

static const char *given_value(const llr_train_args *a, const char *name)
{
	for (size_t i = 0; i < a->ngiven; i++)
		if (!strcmp(a->name[i], name))
			return a->value[i];
	return NULL;
}

/* The family to train: the first of the table that an option of its
 * own, the --resume model's family key or the first stream asks for;
 * else the default one. */
static const llr_family *choose(const llr_train_args *a)
{
	const char *resume = given_value(a, "resume");
	const char *stream = a->nops > 0 && strcmp(a->ops[0], "-") ? a->ops[0] : NULL;
	char key[64] = "";
	if (resume)
		llr_family_peek(resume, key, sizeof key);
	const llr_family *f, *dflt = NULL;
	for (size_t k = 0; (f = llr_family_at(k)); k++) {
		const llr_trainer *t = f->trainer;
		if (!t)
			continue;
		if (t->by_default)
			dflt = f;
		if (given_selects(a, t) || (key[0] && f->family_key && !strcmp(key, f->family_key)) ||
		    (stream && t->claims && t->claims(stream)))
			return f;
	}
	return dflt;
}

/* An option the chosen family does not take. */
static int foreign(const llr_train_args *a, const char *name, llr_err *err)
{
	const llr_trainer *t = a->fam->trainer;
	if (t->foreign)
		return llr_train_usage_err(err, "--%s: %s", name, t->foreign);
	const llr_family *f;
	for (size_t k = 0; (f = llr_family_at(k)); k++) {
		const llr_train_opt *r = f->trainer ? row_in(f->trainer->opts, name) : NULL;
		if (!r || r->kind == LLR_TOPT_REFUSED)
			continue;
		if (r->msg)
			return llr_train_usage_err(err, "%s", r->msg);
		if (f->trainer->only)
			return llr_train_usage_err(err, "--%s: %s", name, f->trainer->only);
	}
	return llr_train_usage_err(err, "--%s: not for %s", name, a->fam->what);
}

/* ---------------------------------------------------------------- values */

/* "512M", "2G", "100000K", "1048576": bytes, at least r->min. */
static int parse_size(const char *s, long long min, long long *out)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1024.0, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024.0 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024.0 * 1024 * 1024, end++;
	if (end == s || *end || !(v * mul >= (double)min) || v * mul > 1e15)
		return -1;
	*out = (long long)(v * mul);
	return 0;
}

/* A duration: s, m, h, d, or a number alone (seconds). */
static int parse_duration(const char *s, double *out)
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
		return -1;
	*out = v * mul;
	return 0;
}

static int parse_choice(const char *choices, const char *s)
{
	size_t n = strlen(s);
	int k = 0;
	for (const char *p = choices; *p; k++) {
		size_t len = strcspn(p, "|");
		if (len == n && !strncmp(p, s, n))
			return k;
		p += len + (p[len] == '|');
	}
	return -1;
}

/* A choice or size that is none: the row's words for it (bad). */
static int bad_value(const llr_train_opt *r, const char *opt, const char *s, llr_err *err)
{
	char what[256];
	if (r->bad)
		snprintf(what, sizeof what, r->bad, s);
	else
		snprintf(what, sizeof what, "'%s' is not one of %s", s, r->choices ? r->choices : "its values");
	return llr_train_usage_err(err, "%s: %s", opt, what);
}

/* The value s of row r into v. */
static int parse_value(slot *v, const char *s, llr_err *err)
{
	const llr_train_opt *r = v->row;
	char buf[64], *end;
	const char *opt = spell(r, 1, buf, sizeof buf);
	v->s = s;
	errno = 0;
	switch (r->kind) {
	case LLR_TOPT_FLAG: v->i = 1; break;
	case LLR_TOPT_INT:
		v->i = strtoll(s, &end, 10);
		if (errno || end == s || *end)
			return llr_train_usage_err(err, "%s: not an integer: '%s'", opt, s);
		if (v->i < r->min || v->i > r->max)
			return llr_train_usage_err(err, "%s: %lld out of range [%lld, %lld]", opt, v->i, r->min, r->max);
		v->d = (double)v->i;
		break;
	case LLR_TOPT_DOUBLE:
		v->d = strtod(s, &end);
		if (errno || end == s || *end || !isfinite(v->d))
			return llr_train_usage_err(err, "%s: not a number: '%s'", opt, s);
		if (v->d < r->lo || v->d > r->hi)
			return llr_train_usage_err(err, "%s: %g out of range [%g, %g]", opt, v->d, r->lo, r->hi);
		break;
	case LLR_TOPT_CHOICE:
		if ((v->i = parse_choice(r->choices, s)) < 0)
			return bad_value(r, opt, s, err);
		break;
	case LLR_TOPT_SIZE:
		if (parse_size(s, r->min, &v->i) < 0)
			return bad_value(r, opt, s, err);
		break;
	case LLR_TOPT_DURATION:
		if (parse_duration(s, &v->d) < 0)
			return llr_train_usage_err(err, "%s: not a positive duration: '%s'", opt, s);
		break;
	}
	return LLR_OK;
}

static slot *find(const llr_train_args *a, const char *name)
{
	for (size_t i = 0; i < a->nslots; i++)
		if (!strcmp(a->slots[i].row->name, name))
			return &a->slots[i];
	return NULL;
}

/* A slot for every option the chosen family takes, with its default. */
static int make_slots(llr_train_args *a, llr_err *err)
{
	const llr_trainer *t = a->fam->trainer;
	size_t n = 0, cap = sizeof common / sizeof *common;
	for (const llr_train_opt *r = t->opts; r->name; r++)
		cap++;
	if (!(a->slots = llr_calloc(cap, sizeof *a->slots)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (const llr_train_opt *r = t->opts; r->name; r++)
		if (r->kind != LLR_TOPT_REFUSED)
			a->slots[n++].row = r;
	/* a shared option the family refuses keeps its default (the limits) */
	for (const llr_train_opt *r = common; r->name; r++) {
		const llr_train_opt *own = row_in(t->opts, r->name);
		if ((!own || own->kind == LLR_TOPT_REFUSED) && (t->build || (r->flags & LLR_TOPT_EVERY)))
			a->slots[n++].row = r;
	}
	a->nslots = n;
	for (size_t i = 0; i < n; i++)
		if (a->slots[i].row->dflt && a->slots[i].row->kind != LLR_TOPT_FLAG && parse_value(&a->slots[i], a->slots[i].row->dflt, err) < 0)
			return llr_err_set(err, LLR_EINVAL, "--%s: the default %s is not a value of it", a->slots[i].row->name,
			                   a->slots[i].row->dflt);
	return LLR_OK;
}

/* The checks of every family trained by gradient steps. */
static int check_gradient(const llr_train_args *a, llr_err *err)
{
	if (llr_train_args_num(a, "eps") > 0 && llr_optim_parse(llr_train_args_str(a, "optim")) == LLR_OPT_SGD)
		return llr_train_usage_err(err, "--eps: for --optim rmsprop and adam (SGD has no eps)");
	double decay = llr_train_args_num(a, "lr-decay");
	if (decay > 0 && decay < 1e-6)
		return llr_train_usage_err(err, "--lr-decay: %s is not 0 (off) or a factor in [1e-6, 0.999]", llr_train_args_str(a, "lr-decay"));
	if (decay > 0 && !llr_train_args_given(a, "valid"))
		return llr_train_usage_err(err, "--lr-decay needs --valid (it decays when the validation loss stalls)");
	const char *out = llr_train_args_str(a, "o");
	if (!out)
		out = llr_train_args_str(a, "resume");
	if (!out)
		return llr_train_usage_err(err, "-o model is required");
	if (!strcmp(out, "-"))
		return llr_train_usage_err(err, "-o: the model must be a file (it is rewritten every epoch)");
	return LLR_OK;
}

int llr_train_args_check(llr_train_args *a, llr_err *err)
{
	if (!(a->fam = choose(a)))
		return llr_err_set(err, LLR_EINVAL, "no family to train");
	for (size_t i = 0; i < a->ngiven; i++)
		if (!row_for(a->fam, a->name[i]))
			return foreign(a, a->name[i], err);
	for (size_t i = 0; i < a->ngiven; i++) {
		const llr_train_opt *r = row_for(a->fam, a->name[i]);
		if (r->kind == LLR_TOPT_REFUSED)
			return llr_train_usage_err(err, "%s", r->msg);
	}
	int rc = make_slots(a, err);
	for (size_t i = 0; rc == LLR_OK && i < a->ngiven; i++) {
		slot *v = find(a, a->name[i]);
		v->given = a->value[i];
		rc = parse_value(v, a->value[i], err);
	}
	if (rc == LLR_OK && a->fam->trainer->check)
		rc = a->fam->trainer->check(a, err);
	if (rc == LLR_OK && a->fam->trainer->build)
		rc = check_gradient(a, err);
	return rc;
}

const char *llr_train_args_usage(const llr_train_args *a)
{
	return a->fam ? a->fam->trainer->usage : NULL;
}

const char *llr_train_args_family(const llr_train_args *a)
{
	return a->fam ? a->fam->name : NULL;
}

int llr_train_args_gradient(const llr_train_args *a)
{
	return a->fam && a->fam->trainer->build;
}

int llr_train_args_given(const llr_train_args *a, const char *name)
{
	const slot *v = find(a, name);
	return v && v->given;
}

long long llr_train_args_int(const llr_train_args *a, const char *name)
{
	const slot *v = find(a, name);
	return v ? v->i : 0;
}

double llr_train_args_num(const llr_train_args *a, const char *name)
{
	const slot *v = find(a, name);
	return v ? v->d : 0;
}

const char *llr_train_args_str(const llr_train_args *a, const char *name)
{
	const slot *v = find(a, name);
	return v ? v->s : NULL;
}

int llr_train_args_noperands(const llr_train_args *a)
{
	return a->nops;
}

const char *llr_train_args_operand(const llr_train_args *a, int i)
{
	return i >= 0 && i < a->nops ? a->ops[i] : NULL;
}

/* ------------------------------------------------------------ building */

int llr_train_build(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err)
{
	memset(s, 0, sizeof *s);
	if (!llr_train_args_gradient(a))
		return llr_err_set(err, LLR_EINVAL, "%s are not trained by gradient steps", a->fam ? a->fam->what : "models");
	return a->fam->trainer->build(a, comm, s, err);
}

/* A job is the families' (family.h), made by their train_job calls. */
void llr_train_job_free(llr_train_job *job)
{
	if (!job)
		return;
	job->ops->free(job->state);
	free(job);
}

void llr_train_setup_free(llr_train_setup *s)
{
	llr_train_job_free(s->job);
	if (s->fam_free)
		s->fam_free(s->fam);
	memset(s, 0, sizeof *s);
}

int llr_train_estimate(llr_train_args *a, llr_err *err)
{
	if (!a->fam || !a->fam->trainer->estimate)
		return llr_err_set(err, LLR_EINVAL, "%s are trained by gradient steps", a->fam ? a->fam->what : "models");
	return a->fam->trainer->estimate(a, err);
}

size_t llr_train_step_bytes(size_t n)
{
	return n * sizeof(float) + 2 * sizeof(double) + 2 * sizeof(int);
}

/* ------------------------------------------------- for the families */

int llr_train_usage_err(llr_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err) {
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		err->code = LLR_EUSAGE;
	}
	va_end(ap);
	return LLR_EUSAGE;
}

void llr_train_note(const llr_train_args *a, const char *fmt, ...)
{
	llr_notice n = {a->note, a->note_ctx};
	va_list ap;
	va_start(ap, fmt);
	llr_notice_vsend(&n, fmt, ap);
	va_end(ap);
}

void llr_train_args_limits(const llr_train_args *a, llr_train_limits *l, unsigned *given)
{
	*l = (llr_train_limits){
	    .epochs = llr_train_args_int(a, "epochs"),
	    .patience = (int)llr_train_args_int(a, "patience"),
	    .min_impr = llr_train_args_num(a, "min-improvement"),
	    .clip = llr_train_args_num(a, "clip"),
	    .max_time = llr_train_args_num(a, "max-time"),
	    .max_tokens = llr_train_args_int(a, "max-tokens"),
	    .lr_decay = llr_train_args_num(a, "lr-decay"),
	    .lr_patience = (int)llr_train_args_int(a, "lr-patience"),
	    .lr_decays = (int)llr_train_args_int(a, "lr-decays"),
	};
	static const struct {
		const char *name;
		unsigned bit;
	} bits[] = {{"clip", LLR_LIM_CLIP},         {"min-improvement", LLR_LIM_MIN_IMPR}, {"patience", LLR_LIM_PATIENCE},
	            {"epochs", LLR_LIM_EPOCHS},      {"lr-decay", LLR_LIM_LR_DECAY},        {"lr-patience", LLR_LIM_LR_PATIENCE},
	            {"lr-decays", LLR_LIM_LR_DECAYS}};
	*given = 0;
	for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
		if (llr_train_args_given(a, bits[i].name))
			*given |= bits[i].bit;
}

int llr_train_quiet(const llr_train_args *a, const llr_train_comm *comm)
{
	return llr_train_args_int(a, "quiet") || (comm && comm->rank != 0);
}

void llr_train_optim_config(llr_optim_config *oc, int kind, double lr, double eps)
{
	llr_optim_defaults(oc, kind);
	if (lr > 0)
		oc->lr = (float)lr;
	if (eps > 0)
		oc->eps = (float)eps;
}

int llr_train_optim_resume(llr_train_state *ts, double lr, double eps, llr_err *err)
{
	if (lr > 0) {
		ts->lr = lr;
		llr_optim_set_lr(ts->optim, (float)lr);
	}
	if (eps > 0) {
		if (llr_optim_cfg(ts->optim)->kind == LLR_OPT_SGD)
			return llr_train_usage_err(err, "--eps: the resumed model trains with SGD, which has no eps");
		llr_optim_set_eps(ts->optim, (float)eps);
	}
	return LLR_OK;
}

int llr_train_optim_meta(llr_meta *m, const llr_optim *opt)
{
	const llr_optim_config *c = llr_optim_cfg(opt);
	if (llr_meta_set(m, "optim", llr_optim_name(c->kind)) < 0 ||
	    (c->kind != LLR_OPT_SGD && llr_meta_setf(m, "eps", "%g", (double)c->eps) < 0))
		return LLR_ENOMEM;
	return LLR_OK;
}

int llr_train_run_meta(const llr_train_limits *lim, llr_meta *m, const llr_optim *opt)
{
	if (llr_train_limits_meta(lim, m) < 0 || llr_train_schedule_meta(lim, m) < 0 || llr_train_optim_meta(m, opt) < 0)
		return LLR_ENOMEM;
	return LLR_OK;
}

void *llr_train_setup_own(llr_train_setup *s, size_t size, void (*free_fn)(void *))
{
	void *run = llr_calloc(1, size);
	if (run) {
		s->fam = run;
		s->fam_free = free_fn;
	}
	return run;
}

void llr_train_note_checksums(const llr_train_args *a, const char *path, const llr_meta *meta)
{
	if (llr_train_args_int(a, "verbose") && !llr_meta_get(meta, "checksum"))
		llr_train_note(a, "%s: no checksums (written before llrnn had them): its data are not verified", path ? path : "<stdin>");
}

const char *llr_train_spell(const llr_train_args *a, const char *name, char *buf, size_t size)
{
	const slot *v = find(a, name);
	if (v)
		return spell(v->row, 1, buf, size);
	snprintf(buf, size, "--%s", name);
	return buf;
}

int llr_train_fixed(const llr_train_args *a, const char *opt, const llr_meta *m, const char *key, const char *want, llr_err *err)
{
	const slot *v = find(a, opt);
	const char *have = llr_meta_get(m, key);
	char buf[64];
	if (v && v->given && (!have || strcmp(have, want)))
		return llr_train_usage_err(err, "%s %s: the resumed model has %s=%s", spell(v->row, 1, buf, sizeof buf), want, key,
		                           have ? have : "(none)");
	return LLR_OK;
}

int llr_train_fixed_prob(const llr_train_args *a, const char *opt, const char *key, double *val, double have, llr_err *err)
{
	if (llr_train_args_given(a, opt) && fabs(*val - have) > 1e-6)
		return llr_train_usage_err(err, "--%s %g: the resumed model has %s=%g", opt, *val, key, have);
	*val = have;
	return LLR_OK;
}

void llr_train_args_common(const llr_train_args *a, const llr_train_comm *comm, llr_train_common *c)
{
	llr_train_args_limits(a, &c->lim, &c->lim_given);
	c->quiet = llr_train_quiet(a, comm);
	c->valid = llr_train_args_str(a, "valid");
	c->resume = llr_train_args_str(a, "resume");
	c->out = llr_train_args_str(a, "o");
	if (!c->out)
		c->out = c->resume;
	const char *s = llr_train_args_operand(a, 0);
	c->stream = s && strcmp(s, "-") ? s : NULL;
}

unsigned llr_train_args_mask(const llr_train_args *a, const char *const *names, int n)
{
	unsigned mask = 0;
	for (int k = 0; k < n; k++)
		if (llr_train_args_given(a, names[k]))
			mask |= 1u << k;
	return mask;
}

int llr_train_resumed(const llr_train_args *a, int rc, int bad, const char *const *fixed, const char *path,
                      llr_train_limits *lim, unsigned lim_given, const llr_meta *meta, llr_train_state *ts, llr_err *err)
{
	if (rc < 0 && bad >= 0) {
		char have[sizeof err->msg], opt[64];
		snprintf(have, sizeof have, "%s", err->msg);
		return llr_train_usage_err(err, "%s: the resumed model %s has %s", llr_train_spell(a, fixed[bad], opt, sizeof opt), path,
		                           have);
	}
	if (rc < 0 || (rc = llr_train_limits_resume(lim, lim_given, meta, path, err)) < 0)
		return rc;
	return llr_train_optim_resume(ts, llr_train_args_num(a, "lr"), llr_train_args_num(a, "eps"), err);
}
