/*
 * tagger.c - the family of MRF part-of-speech taggers behind llr_model
 * (family.h; train --mrf --tags, tagger.h): it tags (llr_model_tag,
 * score --tags) and does nothing else.  A sentence's features are looked
 * up among the model's (a feature training never saw has no weight),
 * then one exact first-order Viterbi search; a word is unknown when
 * training never saw it (its W0= feature is not the model's).  The beam
 * of llr_tag_opts is the HMM's pruning; the search here is always exact.
 */
#include "family/mrf/tagger.h"

#include <stdlib.h>

typedef struct tagger {
	mrft_model *m;
	mrft_ws ws;
	mrft_feats f;
	int32_t *best;
	size_t *lens, cap;
} tagger;

static void mrft_close(void *state)
{
	tagger *s = state;
	mrft_model_free(s->m);
	mrft_ws_free(&s->ws);
	mrft_feats_free(&s->f);
	free(s->best);
	free(s->lens);
	free(s);
}

static int mrft_open(llr_model *m, const char *path, llr_err *err)
{
	tagger *s;
	int rc = llr_family_open_closed(m, path, sizeof *s, (void **)&s, err);
	return rc < 0 ? rc : mrft_model_load(path, &s->m, err);
}

static void mrft_describe(const llr_model *m, llr_model_info *info)
{
	const tagger *s = m->state;
	info->kind = "model";
	info->order = 2;
	info->vocab = s->m->F;
}

static const llr_meta *mrft_meta(const llr_model *m)
{
	const tagger *s = m->state;
	return s->m->meta;
}

static int mrft_tag(llr_model *m, const llr_sentence *x, size_t B, const llr_tag_opts *o, const char **tags, unsigned char *unknown,
                    llr_err *err)
{
	(void)o;
	tagger *s = m->state;
	const mrft_model *md = s->m;
	for (size_t b = 0, at = 0; b < B; at += x[b].n, b++) {
		const size_t n = x[b].n;
		if (n == 0)
			continue;
		if (n > s->cap) {
			size_t cap = n + n / 2 + 16;
			free(s->best);
			free(s->lens);
			s->best = llr_malloc(cap * sizeof *s->best);
			s->lens = llr_malloc(cap * sizeof *s->lens);
			s->cap = s->best && s->lens ? cap : 0;
		}
		if (!s->cap || mrft_ws_reserve(&s->ws, md->T, n) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a sentence of %zu words", n);
		for (size_t i = 0; i < n; i++)
			s->lens[i] = strlen(x[b].words[i]);
		int rc = mrft_features(&s->f, md->feats, 0, md->M, (const char *const *)x[b].words, s->lens, n, err);
		if (rc < 0)
			return rc;
		mrft_viterbi(&s->ws, md->F, md->T, md->w, &s->f, s->best);
		for (size_t i = 0; i < n; i++) {
			tags[at + i] = llr_strmap_str(md->tags, s->best[i]);
			if (!unknown)
				continue;
			if (mrft_word_feature(&s->f.name, x[b].words[i], s->lens[i]) < 0)
				return llr_err_set(err, LLR_ENOMEM, "out of memory");
			unknown[at + i] = llr_strmap_get(md->feats, s->f.name.data, s->f.name.len) < 0;
		}
	}
	return LLR_OK;
}

const llr_family llr_family_mrftag = {
	.name = "mrf-tagger",
	.what = "MRF taggers",
	.instead = "an MRF tagger: score --tags tags sentences with it",
	.family_key = "mrf-tagger",
	.open = mrft_open,
	.close = mrft_close,
	.describe = mrft_describe,
	.meta = mrft_meta,
	.tag = mrft_tag,
	.no_pairs = "an MRF tagger: it tags sentences (score --tags), it cannot read sources",
};
