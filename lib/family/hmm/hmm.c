/*
 * hmm.c - the family of HMM part-of-speech taggers behind llr_model
 * (family.h; train --hmm, hmm.h): it tags (llr_model_tag, score --tags)
 * and does nothing else: it scores no sentence, embeds none and
 * generates none.  A sentence's positions get their candidate tags and
 * log emissions (tag.c's lexical model), then one Viterbi search.
 */
#include "family/hmm/hmm.h"

#include <math.h>
#include <stdlib.h>

typedef struct hmm_state {
	llr_hmm *h;
	hmm_viterbi v;
	int32_t *nc, *best, *cand;
	size_t *off;
	double *logem, *p;
	size_t cap_pos, cap_cand;
} hmm_state;

static void hmm_close(void *state)
{
	hmm_state *s = state;
	llr_hmm_free(s->h);
	hmm_viterbi_free(&s->v);
	free(s->nc);
	free(s->best);
	free(s->cand);
	free(s->off);
	free(s->logem);
	free(s->p);
	free(s);
}

static int hmm_open(llr_model *m, const char *path, llr_err *err)
{
	hmm_state *s;
	int rc = llr_family_open_closed(m, path, sizeof *s, (void **)&s, err);
	if (rc < 0 || (rc = llr_hmm_load(path, &s->h, err)) < 0)
		return rc;
	if (!(s->p = llr_malloc((size_t)s->h->T * sizeof *s->p)))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	return LLR_OK;
}

static void hmm_describe(const llr_model *m, llr_model_info *info)
{
	const hmm_state *s = m->state;
	info->kind = "model";
	info->vocab = (int64_t)llr_strmap_size(s->h->words);
	info->order = 3;
}

static const llr_meta *hmm_meta(const llr_model *m)
{
	const hmm_state *s = m->state;
	return s->h->meta;
}

static const char *hmm_word(const llr_model *m, int64_t i)
{
	const hmm_state *s = m->state;
	return llr_strmap_str(s->h->words, (int32_t)i);
}

/* Room for n positions and their candidates (every tag at most). */
static int reserve(hmm_state *s, size_t n, llr_err *err)
{
	size_t T = (size_t)s->h->T;
	if (n <= s->cap_pos)
		return LLR_OK;
	size_t cap = n + n / 2 + 16;
	free(s->nc);
	free(s->best);
	free(s->off);
	free(s->cand);
	free(s->logem);
	s->nc = llr_malloc(cap * sizeof *s->nc);
	s->best = llr_malloc(cap * sizeof *s->best);
	s->off = llr_malloc(cap * sizeof *s->off);
	s->cand = llr_reallocarray(NULL, cap * T, sizeof *s->cand);
	s->logem = llr_reallocarray(NULL, cap * T, sizeof *s->logem);
	s->cap_pos = s->nc && s->best && s->off && s->cand && s->logem ? cap : 0;
	return s->cap_pos ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory for a sentence of %zu words", n);
}

/* The candidates of an unknown word w (n bytes) at k, from the suffix
 * model of its capitalisation (the other one when that one learnt from
 * no word; every tag at log emission 0 when neither did). */
static int32_t unknown_word(hmm_state *s, const char *w, size_t n, int32_t *cand, double *logem)
{
	const llr_hmm *h = s->h;
	const hmm_suffix *sm = &h->sm[llr_hmm_capitalised(w, n)];
	if (!sm->total)
		sm = &h->sm[sm == &h->sm[0]];
	int32_t k = 0;
	if (!sm->total) {
		for (int32_t t = 0; t < h->T; t++, k++) {
			cand[k] = t;
			logem[k] = 0;
		}
		return k;
	}
	llr_hmm_suffix_probs(h, sm, w, n, s->p);
	for (int32_t t = 0; t < h->T; t++)
		if (sm->base[t] > 0) {
			cand[k] = t;
			logem[k++] = log(s->p[t]) - log((double)sm->base[t] / (double)sm->total);
		}
	return k;
}

static int hmm_tag(llr_model *m, const llr_sentence *x, size_t B, const llr_tag_opts *o, const char **tags, unsigned char *unknown,
                   llr_err *err)
{
	hmm_state *s = m->state;
	const llr_hmm *h = s->h;
	const double beam = o ? o->beam : 0;
	for (size_t b = 0, at = 0; b < B; at += x[b].n, b++) {
		const size_t n = x[b].n;
		int rc = reserve(s, n, err);
		if (rc < 0)
			return rc;
		size_t off = 0;
		for (size_t i = 0; i < n; i++) {
			const char *w = x[b].words[i];
			size_t len = strlen(w);
			int32_t id = llr_strmap_get(h->words, w, len), k = 0;
			s->off[i] = off;
			if (id >= 0) {
				for (int64_t e = h->lex.ptr[id]; e < h->lex.ptr[id + 1]; e++, k++) {
					s->cand[off + (size_t)k] = h->lex.tag[e];
					s->logem[off + (size_t)k] = log((double)h->lex.count[e] / (double)h->uni[h->lex.tag[e]]);
				}
			} else {
				k = unknown_word(s, w, len, s->cand + off, s->logem + off);
			}
			s->nc[i] = k;
			off += (size_t)k;
			if (unknown)
				unknown[at + i] = id < 0;
		}
		double score;
		if ((rc = llr_hmm_viterbi(&s->v, h, n, s->nc, s->off, s->cand, s->logem, beam, s->best, &score, err)) < 0)
			return rc;
		for (size_t i = 0; i < n; i++)
			tags[at + i] = llr_strmap_str(h->tags, s->cand[s->off[i] + (size_t)s->best[i]]);
	}
	return LLR_OK;
}

const llr_family llr_family_hmm = {
	.name = "hmm",
	.what = "HMM taggers",
	.instead = "an HMM tagger: score --tags tags sentences with it",
	.family_key = "hmm",
	.open = hmm_open,
	.close = hmm_close,
	.describe = hmm_describe,
	.meta = hmm_meta,
	.word = hmm_word,
	.tag = hmm_tag,
	.no_pairs = "an HMM tagger: it tags sentences (score --tags), it cannot read sources",
	.trainer = &llr_hmm_trainer,
};
