/*
 * families.c - the one model interface (llr_model, lib/llrnn.h): the
 * table of model families, llr_model_open's choice among them, and the
 * dispatch of every operation to the family's table (family.h).  A new
 * family is one line in the table.
 */
#include "family.h"
#include "family/gen.h"

#include <math.h>
#include <stdlib.h>

/* Asked in this order: the families that sniff a file first (ARPA text
 * has no meta), then the family key of a model file's meta.  train(1)
 * asks them in this order too (options.c): its usage and --help follow
 * it, and --ngram is asked before --task. */
static const llr_family *const families[] = {
	&llr_family_rnnlm,
	&llr_family_ngram,
	&llr_family_mixture,
	&llr_family_sentenc,
	&llr_family_encdec,
	&llr_family_fflm,
	&llr_family_loglm,
	&llr_family_hmm,
	&llr_family_mrf,
	&llr_family_mrftag,
};
#define NFAM (sizeof families / sizeof *families)

const llr_family *llr_family_at(size_t i)
{
	return i < NFAM ? families[i] : NULL;
}

llr_model_opts llr_model_opts_default(void)
{
	return (llr_model_opts){.open = LLR_OPEN_AUTO, .norm_samples = 100000, .seed = 20161107};
}

int llr_family_peek(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	if (!path || !strcmp(path, "-"))
		return 0;
	llr_tensor_reader *r = llr_tr_open(path, "model", NULL);
	if (!r)
		return 0;
	const char *fam = llr_meta_get(llr_tr_meta(r), "family");
	if (fam)
		snprintf(buf, size, "%s", fam);
	llr_tr_close(r);
	return 1;
}

static const llr_family *choose(const char *path, llr_err *err, int *rc)
{
	*rc = LLR_OK;
	for (size_t i = 0; i < NFAM; i++) {
		if (!families[i]->sniff)
			continue;
		int k = families[i]->sniff(path, err);
		if (k < 0) {
			*rc = k;
			return NULL;
		}
		if (k)
			return families[i];
	}
	char key[64];
	llr_family_peek(path, key, sizeof key);
	for (size_t i = 0; i < NFAM; i++) {
		const char *want = families[i]->family_key;
		if (!families[i]->sniff && (want ? !strcmp(want, key) : !key[0]))
			return families[i];
	}
	*rc = llr_err_set(err, LLR_EKIND, "%s: a model of family %s, which this llrnn does not know", path, key);
	return NULL;
}

int llr_model_open(const char *path, const llr_model_opts *opts, llr_model **out, llr_err *err)
{
	*out = NULL;
	int rc;
	const llr_family *f = choose(path, err, &rc);
	if (!f)
		return rc;
	llr_model *m = llr_calloc(1, sizeof *m);
	if (!m)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	m->fam = f;
	m->opts = opts ? *opts : llr_model_opts_default();
	if (!(m->path = llr_strndup(path, strlen(path)))) {
		free(m);
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	}
	if ((rc = f->open(m, path, err)) < 0) {
		llr_model_close(m);
		return rc;
	}
	*out = m;
	return LLR_OK;
}

void llr_family_score_out(const float *lp, size_t n, double *logp, int check_norm, double e, llr_norm_stat *norm)
{
	if (check_norm && norm) {
		*norm = (llr_norm_stat){0};
		norm->err = e;
		norm->lo = norm->hi = fabs(e);
	}
	for (size_t k = 0; k < n; k++)
		logp[k] = lp[k];
}

int llr_family_open_closed(llr_model *m, const char *path, size_t size, void **state, llr_err *err)
{
	if (!(*state = m->state = llr_calloc(1, size)))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	if (m->opts.open == LLR_OPEN_ON)
		return llr_err_set(err, LLR_EINVAL, "%s: --open: %s have a closed vocabulary", path, m->fam->what);
	return LLR_OK;
}

void llr_model_close(llr_model *m)
{
	if (!m)
		return;
	if (m->state)
		m->fam->close(m->state);
	free(m->path);
	free(m);
}

/* The LLR_MODEL_* operations of family f. */
static unsigned ops_of(const llr_family *f)
{
	unsigned ops = LLR_MODEL_DESCRIBE | (f->score ? LLR_MODEL_SCORE : 0) | (f->score_pairs ? LLR_MODEL_SCORE_PAIRS : 0) |
	               (f->embed ? LLR_MODEL_EMBED : 0) | (f->predict ? LLR_MODEL_PREDICT : 0) |
	               (f->tag ? LLR_MODEL_TAG : 0);
	if (f->gen)
		ops |= LLR_MODEL_GEN | (f->gen->beam ? LLR_MODEL_BEAM : 0) | (f->gen->features ? LLR_MODEL_GEN_FEATURES : 0) |
		       (f->gen->source ? LLR_MODEL_GEN_SOURCE : 0);
	return ops;
}

unsigned llr_model_file_ops(const char *path)
{
	llr_err err = {0};
	int rc;
	const llr_family *f = path && strcmp(path, "-") ? choose(path, &err, &rc) : NULL;
	return f ? ops_of(f) : 0;
}

int llr_model_describe(const llr_model *m, llr_model_info *info)
{
	memset(info, 0, sizeof *info);
	info->family = m->fam->name;
	info->ops = ops_of(m->fam);
	m->fam->describe(m, info);
	return LLR_OK;
}

const llr_meta *llr_model_meta(const llr_model *m)
{
	return m->fam->meta(m);
}

int llr_family_check_utf8(const llr_model *m, const char *what, int numbered, const llr_sentence *s, size_t B, llr_err *err)
{
	for (size_t b = 0; b < B; b++)
		for (size_t t = 0; t < s[b].n; t++) {
			const char *w = s[b].words[t];
			unsigned char high = 0; /* an ASCII word (most) needs no more */
			size_t len = 0;
			for (; w[len]; len++)
				high |= (unsigned char)w[len];
			size_t ok = high & 0x80 ? llr_utf8_valid_prefix(w, len) : len;
			if (ok == len)
				continue;
			char where[64];
			if (numbered)
				snprintf(where, sizeof where, "%s %zu, ", what, b + 1);
			else
				snprintf(where, sizeof where, "%s, ", what);
			return llr_err_set(err, LLR_EUTF8, "%s: %sword %zu: invalid UTF-8 (byte 0x%02X at byte %zu)", m->path, where,
			                   t + 1, (unsigned)(unsigned char)w[ok], ok + 1);
		}
	return LLR_OK;
}

int llr_model_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                    llr_err *err)
{
	if (!m->fam->score)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no llr_model_score yet (%s)", m->path, m->fam->what, m->fam->instead);
	if (B == 0)
		return LLR_OK;
	int rc = llr_family_check_utf8(m, "sentence", 1, s, B, err);
	return rc < 0 ? rc : m->fam->score(m, s, B, logp, oov, norm, err);
}

int llr_model_score_computation(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, double *comp,
                                llr_norm_stat *norm, llr_err *err)
{
	if (!m->fam->score_computation)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no variable-computation cell (no m_t to show)", m->path, m->fam->what);
	int rc = B ? llr_family_check_utf8(m, "sentence", 1, s, B, err) : LLR_OK;
	return rc < 0 ? rc : m->fam->score_computation(m, s, B, logp, oov, comp, norm, err);
}

int llr_model_score_pairs(llr_model *m, const llr_sentence *src, const llr_sentence *tgt, size_t B, double *logp,
                          unsigned char *oov, llr_err *err)
{
	if (!m->fam->score_pairs && m->fam->no_pairs)
		return llr_err_set(err, LLR_EINVAL, "%s: %s", m->path, m->fam->no_pairs);
	if (!m->fam->score_pairs)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no --source", m->path, m->fam->what);
	if (B == 0)
		return LLR_OK;
	int rc = llr_family_check_utf8(m, "source", 1, src, B, err);
	if (rc < 0 || (rc = llr_family_check_utf8(m, "sentence", 1, tgt, B, err)) < 0)
		return rc;
	return m->fam->score_pairs(m, src, tgt, B, logp, oov, err);
}

int llr_model_mask_pairs(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err)
{
	if ((fsa != NULL) + (regex != NULL) + (grammar != NULL) != 1)
		return llr_err_set(err, LLR_EINVAL, "llr_model_mask_pairs: exactly one of an automaton, a regular expression and a grammar");
	if (!m->fam->mask_pairs)
		return llr_err_set(err, LLR_EINVAL, "%s: %s take no decode-time mask when scoring pairs", m->path, m->fam->what);
	return m->fam->mask_pairs(m, fsa, regex, grammar, err);
}

int llr_model_mask(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err)
{
	if ((fsa != NULL) + (regex != NULL) + (grammar != NULL) != 1)
		return llr_err_set(err, LLR_EINVAL, "llr_model_mask: exactly one of an automaton, a regular expression and a grammar");
	if (!m->fam->mask)
		return llr_err_set(err, LLR_EINVAL, "%s: %s take no --fsa, --regex or --grammar when scoring (LSTM language models with "
		                   "the log-linear output do; gen's mask-only mode takes any)", m->path, m->fam->what);
	return m->fam->mask(m, fsa, regex, grammar, err);
}

int llr_model_embed(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err)
{
	if (!m->fam->embed)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no --embed", m->path, m->fam->what);
	int rc = llr_family_check_utf8(m, "sentence", 1, s, B, err);
	return rc < 0 ? rc : m->fam->embed(m, s, B, vec, oov, err);
}

int llr_model_predict(llr_model *m, unsigned tasks, const char *path, size_t batch,
                      int (*each)(void *ctx, const llr_prediction *p), void *ctx, llr_err *err)
{
	if (!m->fam->predict)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no --task", m->path, m->fam->what);
	return m->fam->predict(m, tasks, path, batch ? batch : 1, each, ctx, err);
}

int llr_model_tag(llr_model *m, const llr_sentence *s, size_t B, const llr_tag_opts *o, const char **tags, unsigned char *unknown,
                  llr_err *err)
{
	if (!m->fam->tag)
		return llr_err_set(err, LLR_EINVAL, "%s: %s cannot tag (train --hmm trains a tagger)", m->path, m->fam->what);
	if (o && !(o->beam == 0 || o->beam > 1))
		return llr_err_set(err, LLR_EINVAL, "%s: a tagging beam is 0 (exact) or above 1, not %g", m->path, o->beam);
	if (B == 0)
		return LLR_OK;
	int rc = llr_family_check_utf8(m, "sentence", 1, s, B, err);
	return rc < 0 ? rc : m->fam->tag(m, s, B, o, tags, unknown, err);
}

int llr_model_score_lengths(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov,
                            int32_t *len, llr_err *err)
{
	if (m->fam->score_lengths && B > 0) {
		int rc = llr_family_check_utf8(m, "sentence", 1, s, B, err);
		return rc < 0 ? rc : m->fam->score_lengths(m, s, B, logp, oov, len, err);
	}
	llr_norm_stat norm; /* not asked for, but opts may have check_norm */
	int rc = llr_model_score(m, s, B, logp, oov, &norm, err);
	if (rc < 0 || !len)
		return rc;
	for (size_t b = 0, o = 0; b < B; o += s[b].n + 1, b++)
		memset(len + o, 0, (s[b].n + 1) * sizeof *len);
	return LLR_OK;
}

int llr_model_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err)
{
	if (!m->fam->word_features)
		return llr_err_set(err, LLR_EINVAL, "%s: %s have no word features", m->path, m->fam->what);
	size_t len = strlen(word), ok = llr_utf8_valid_prefix(word, len);
	if (ok < len)
		return llr_err_set(err, LLR_EUTF8, "%s: the word: invalid UTF-8 (byte 0x%02X at byte %zu)", m->path,
		                   (unsigned)(unsigned char)word[ok], ok + 1);
	return m->fam->word_features(m, word, emit, ctx, err);
}

int llr_model_set_threads(llr_model *m, int n, llr_err *err)
{
	return m->fam->set_threads ? m->fam->set_threads(m, n, err) : LLR_OK;
}

void llr_model_on_notice(llr_model *m, void (*fn)(void *ctx, const char *line), void *ctx)
{
	m->notice = (llr_notice){fn, ctx};
}
