/*
 * stream.c - featurize's output (lib/featurize/fz.h,
 * llr_featurizer_write): the tensor stream of kind "features", its meta,
 * the lexicon's members, the source side, then the corpus as ids/
 * members of whole sentences: the corpus read whole, or with --vocab
 * mapped as it is read (unknown words to <unk> or with --spelling to
 * their signature).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"

/* The ids/ members being written: FZ_CHUNK_IDS ids at most each, whole
 * sentences per member whenever a sentence fits in one. */
typedef struct fz_ids {
	llr_tensor_writer *w;
	int32_t *buf;
	size_t n;
	int chunk;
} fz_ids;

static int fz_ids_flush(fz_ids *d, llr_err *err)
{
	char name[32];
	int64_t shape[1] = {(int64_t)d->n};
	if (!d->n)
		return LLR_OK;
	snprintf(name, sizeof name, "ids/%06d", d->chunk++);
	d->n = 0;
	return llr_tw_put_raw(d->w, name, LLR_I32, 1, shape, d->buf, err);
}

/* A sentence of len ids (its </s> included) begins: it starts a new
 * member unless it fits in this one. */
static int fz_ids_sentence(fz_ids *d, size_t len, llr_err *err)
{
	if (d->n && d->n + len > FZ_CHUNK_IDS)
		return fz_ids_flush(d, err);
	return LLR_OK;
}

static inline int fz_ids_put(fz_ids *d, int32_t id, llr_err *err)
{
	int rc = LLR_OK;
	if (d->n == FZ_CHUNK_IDS)
		rc = fz_ids_flush(d, err);
	d->buf[d->n++] = id;
	return rc;
}

/* The corpus read whole (the vocabulary was made from it) as ids. */
static int fz_ids_corpus(llr_featurizer *R, fz_ids *d, llr_err *err)
{
	const fz_corpus *cp = &R->cp;
	int32_t *map = calloc(llr_vocab_size(cp->types) + 1, sizeof *map);
	if (!map)
		return fz_nomem(err);
	for (size_t i = 0; i < llr_vocab_size(cp->types); i++) {
		const char *w = llr_vocab_token(cp->types, (int32_t)i);
		map[i] = llr_vocab_id(R->v, w, strlen(w));
	}
	size_t s0 = 0;
	int rc = LLR_OK;
	for (size_t i = 0; rc >= 0 && i < cp->nids; i++) {
		if (cp->ids[i] >= 0)
			continue;
		/* sentence [s0, i] */
		rc = fz_ids_sentence(d, i + 1 - s0, err);
		for (size_t k = s0; rc >= 0 && k <= i; k++)
			rc = fz_ids_put(d, cp->ids[k] < 0 ? R->eos : map[cp->ids[k]], err);
		s0 = i + 1;
	}
	free(map);
	return rc;
}

/* The id of a token outside the vocabulary: its signature, or <unk>. */
static int32_t fz_id_outside(llr_featurizer *R, const char *tok, size_t tl)
{
	int32_t j = R->out_sig ? llr_strmap_get(R->outside, tok, tl) : -1;
	int32_t s = j >= 0 ? R->out_sig[j] : -1;
	R->st.stream_signatures += s >= 0;
	R->st.stream_unknown++;
	return s >= 0 ? R->V + s : R->unk;
}

/* --vocab: the corpus mapped to ids as it is read, unknown words to
 * <unk>, or with --spelling to V + s, s their signature. */
static int fz_ids_stream(llr_featurizer *R, fz_ids *d, llr_err *err)
{
	llr_featurize_stats *st = &R->st;
	const char *line = R->first;
	size_t len = R->first_len;
	int rc;
	do {
		if (R->lex.fsa && (rc = llr_fz_accept(R, line, len, llr_lines_name(R->tin.l), (int64_t)llr_lines_lineno(R->tin.l), err)) <= 0) {
			if (rc < 0)
				return rc;
			continue;
		}
		if ((rc = fz_ids_sentence(d, llr_tokens_count(line, len) + 1, err)) < 0)
			return rc;
		size_t pos = 0, tl;
		const char *tok;
		while (llr_token_next(line, len, &pos, &tok, &tl)) {
			int32_t id = llr_vocab_id(R->v, tok, tl);
			if (id < 0)
				id = fz_id_outside(R, tok, tl);
			if (id < R->V && R->covered[id])
				st->stream_covered++;
			st->stream_tokens++;
			if ((rc = fz_ids_put(d, id, err)) < 0)
				return rc;
		}
		if ((rc = fz_ids_put(d, R->eos, err)) < 0)
			return rc;
		st->stream_sentences++;
	} while ((rc = llr_fz_tok_next(&R->tin, &line, &len, err)) > 0);
	return rc;
}

/* The members after the meta. */
static int fz_write_members(llr_featurizer *R, fz_ids *d, llr_err *err)
{
	int rc = llr_lexicon_write(d->w, &R->lex, err);
	if (rc >= 0 && R->par.src)
		rc = llr_source_write(d->w, R->par.src, R->V, err);
	if (rc >= 0)
		rc = R->streaming ? fz_ids_stream(R, d, err) : fz_ids_corpus(R, d, err);
	if (rc >= 0)
		rc = fz_ids_flush(d, err);
	if (rc >= 0 && R->par.src)
		rc = llr_fz_parallel_write_ids(&R->par, d->w, err);
	return rc;
}

int llr_featurizer_write(llr_featurizer *R, const char *path, llr_err *err)
{
	llr_err tmp = {0};
	if (!err)
		err = &tmp;
	if (!R->built)
		return llr_err_set(err, LLR_EINVAL, "featurize: the stream is written after llr_featurizer_build");
	llr_meta *m = llr_meta_new();
	if (!m || llr_lexicon_to_meta(&R->lex, m) < 0 || (R->par.src && llr_source_to_meta(R->par.src, m) < 0)) {
		llr_meta_free(m);
		return fz_nomem(err);
	}
	fz_ids d = {.buf = malloc(FZ_CHUNK_IDS * sizeof *d.buf)};
	if (!d.buf) {
		llr_meta_free(m);
		return fz_nomem(err);
	}
	d.w = llr_tw_open(path, "features", m, err);
	llr_meta_free(m);
	if (!d.w) {
		free(d.buf);
		return llr_err_code(err, LLR_EIO);
	}
	int rc = fz_write_members(R, &d, err);
	free(d.buf);
	if (rc < 0) {
		llr_tw_abort(d.w);
		return rc;
	}
	return llr_tw_close(d.w, err);
}
