/*
 * parallel.c - featurize --source SRC (lib/featurize/fz.h): pairs the
 * source file with the target file line by line and builds the source
 * side of the stream (llr_source): the source vocabulary in count order
 * with </s> and <unk>, one SRC:<token> input feature per token, and the
 * source ids.  The target side is featurize's ordinary work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"

#define SRC_PREFIX "SRC:"

static int check_tokens(llr_lines *l, const char *line, size_t len, llr_err *err)
{
	llr_err e = {0};
	if (len && llr_tokens_check(line, len, &e) < 0)
		return llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "%s:%zu: %s", llr_lines_name(l), llr_lines_lineno(l), e.msg);
	return LLR_OK;
}

/* Count the lines left in l (after the current one) into *n. */
static int rest(llr_lines *l, size_t *n, llr_err *err)
{
	const char *line;
	size_t len;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, err)) > 0)
		;
	*n = llr_lines_lineno(l);
	return rc;
}

static int misaligned(llr_lines *ls, llr_lines *lt, int src_ended, llr_err *err)
{
	size_t ns = llr_lines_lineno(ls), nt = llr_lines_lineno(lt);
	int rc = src_ended ? rest(lt, &nt, err) : rest(ls, &ns, err);
	if (rc < 0)
		return rc;
	return llr_err_set(err, LLR_EFORMAT, "%s (%zu lines) and %s (%zu lines) are not aligned: they diverge at line %zu, which only %s has",
	                   llr_lines_name(ls), ns, llr_lines_name(lt), nt, (ns < nt ? ns : nt) + 1,
	                   ns < nt ? llr_lines_name(lt) : llr_lines_name(ls));
}

static int push(fz_parallel *p, size_t *cap, int32_t id, llr_err *err)
{
	if (p->nids == *cap) {
		size_t c = *cap ? 2 * *cap : 1 << 16;
		int32_t *q = llr_reallocarray(p->ids, c, sizeof *p->ids);
		if (!q)
			return fz_nomem(err);
		p->ids = q;
		*cap = c;
	}
	p->ids[p->nids++] = id;
	return LLR_OK;
}

/* The tokens of source line s into seen and the ids, -1 at its end. */
static int source_line(fz_parallel *p, llr_vocab *seen, llr_lines *ls, const char *s, size_t sl, size_t *cap, llr_err *err)
{
	int rc = check_tokens(ls, s, sl, err);
	size_t pos = 0, kl;
	const char *tok;
	while (rc >= 0 && llr_token_next(s, sl, &pos, &tok, &kl)) {
		int32_t id = llr_vocab_add(seen, tok, kl, 1);
		if (id < 0)
			return fz_nomem(err);
		if (llr_vocab_size(seen) > (size_t)LLR_MAX_VOCAB - 2)
			return llr_err_set(err, LLR_ERANGE, "%s:%zu: more than %d source types (the limit)", llr_lines_name(ls), llr_lines_lineno(ls),
			                   LLR_MAX_VOCAB - 2);
		rc = push(p, cap, id, err);
		p->tokens++;
	}
	p->empty += sl == 0;
	return rc < 0 ? rc : push(p, cap, -1, err);
}

/* The pairs of lines, as long as both files have one. */
static int pair_lines(fz_parallel *p, llr_vocab *seen, llr_lines *ls, llr_lines *lt, const llr_featurize_opts *o, llr_err *err)
{
	size_t cap = 0;
	for (;;) {
		const char *s, *t;
		size_t sl, tl;
		int hs = llr_lines_next(ls, &s, &sl, err), rc;
		if (hs < 0)
			return hs;
		if (hs && (rc = source_line(p, seen, ls, s, sl, &cap, err)) < 0)
			return rc;
		int ht = llr_lines_next(lt, &t, &tl, err);
		if (ht < 0)
			return ht;
		if (hs != ht)
			return misaligned(ls, lt, !hs, err);
		if (!hs)
			return LLR_OK;
		if ((rc = check_tokens(lt, t, tl, err)) < 0)
			return rc;
		if (!tl)
			return llr_err_set(err, LLR_EFORMAT, "%s:%zu: an empty target line (every source line needs a target: %s:%zu)",
			                   llr_lines_name(lt), llr_lines_lineno(lt), llr_lines_name(ls), llr_lines_lineno(ls));
		p->pairs++;
		if (o->progress)
			llr_fz_report(o, &(llr_fz_progress){.at = LLR_FZ_STEP, .unit = "pairs", .n = p->pairs, .tokens = p->tokens});
	}
}

/* Types in first-seen order into seen, the text as their ids with -1 at
 * each line end. */
static int read_pairs(fz_parallel *p, llr_vocab *seen, const llr_featurize_opts *o, llr_err *err)
{
	llr_lines *ls = llr_lines_open(o->source, 0, err);
	if (!ls)
		return llr_err_code(err, LLR_EIO);
	llr_lines *lt = llr_lines_open(o->files[0], 0, err);
	if (!lt) {
		llr_lines_close(ls);
		return llr_err_code(err, LLR_EIO);
	}
	char *const paths[1] = {(char *)o->source};
	llr_fz_report(o, &(llr_fz_progress){.at = LLR_FZ_BEGIN, .paths = paths, .npaths = 1});
	llr_fz_report(o, &(llr_fz_progress){.at = LLR_FZ_OPEN, .path = o->source, .lines = ls});
	int rc = pair_lines(p, seen, ls, lt, o, err);
	llr_fz_report(o, &(llr_fz_progress){.at = LLR_FZ_END});
	if (rc >= 0 && !p->pairs)
		rc = llr_err_set(err, LLR_EEMPTY, "%s: empty corpus (no line)", llr_lines_name(ls));
	llr_lines_close(ls);
	llr_lines_close(lt);
	return rc;
}

/* The vocabulary in DESIGN order (count descending, ties in byte order),
 * </s> counted once per line, <unk> with count 0. */
static int source_vocab(const fz_parallel *p, const llr_vocab *seen, llr_vocab *v, llr_err *err)
{
	for (size_t i = 0; i < llr_vocab_size(seen); i++) {
		const char *w = llr_vocab_token(seen, (int32_t)i);
		if (llr_vocab_add(v, w, strlen(w), llr_vocab_count(seen, (int32_t)i)) < 0)
			return fz_nomem(err);
	}
	if (llr_vocab_add(v, LLR_EOS, strlen(LLR_EOS), p->pairs) < 0 || llr_vocab_add(v, LLR_UNK, strlen(LLR_UNK), 0) < 0)
		return fz_nomem(err);
	return llr_vocab_sort(v, err);
}

/* The source's vocabulary, SRC: features and one-hot psi from v. */
static int source_side(llr_source *s, const llr_vocab *v, llr_err *err)
{
	int32_t Vs = (int32_t)llr_vocab_size(v);
	if (!(s->psi = llr_csr_new(Vs, Vs, Vs, err)))
		return llr_err_code(err, LLR_ENOMEM);
	llr_buf b = {0};
	int rc = LLR_OK;
	for (int32_t i = 0; i < Vs; i++) {
		const char *w = llr_vocab_token(v, i);
		llr_buf_clear(&b);
		if (llr_strmap_add(s->vocab, w, strlen(w)) < 0 || llr_buf_printf(&b, SRC_PREFIX "%s", w) < 0 ||
		    llr_strmap_add(s->features, b.data, b.len) < 0) {
			rc = fz_nomem(err);
			break;
		}
		s->psi->indptr[i + 1] = i + 1;
		s->psi->indices[i] = i;
		s->psi->data[i] = 1.0f;
	}
	llr_buf_free(&b);
	s->eos_id = llr_vocab_id(v, LLR_EOS, strlen(LLR_EOS));
	s->unk_id = llr_vocab_id(v, LLR_UNK, strlen(LLR_UNK));
	return rc;
}

int llr_fz_parallel_read(fz_parallel *p, const llr_featurize_opts *o, llr_err *err)
{
	memset(p, 0, sizeof *p);
	llr_vocab *seen = llr_vocab_new(), *v = llr_vocab_new();
	llr_source *s = calloc(1, sizeof *s);
	if (s) {
		s->vocab = llr_strmap_new();
		s->features = llr_strmap_new();
		p->src = s;
	}
	int rc = seen && v && s && s->vocab && s->features ? LLR_OK : fz_nomem(err);
	if (rc >= 0)
		rc = read_pairs(p, seen, o, err);
	if (rc >= 0)
		rc = source_vocab(p, seen, v, err);
	if (rc >= 0)
		rc = source_side(s, v, err);
	size_t nseen = seen ? llr_vocab_size(seen) : 0;
	int32_t *map = rc >= 0 ? calloc(nseen + 1, sizeof *map) : NULL;
	if (rc >= 0 && !map)
		rc = fz_nomem(err);
	for (size_t i = 0; rc >= 0 && i < nseen; i++) {
		const char *w = llr_vocab_token(seen, (int32_t)i);
		map[i] = llr_vocab_id(v, w, strlen(w));
	}
	for (size_t i = 0; rc >= 0 && i < p->nids; i++)
		p->ids[i] = p->ids[i] < 0 ? s->eos_id : map[p->ids[i]];
	free(map);
	llr_vocab_free(seen);
	llr_vocab_free(v);
	return rc < 0 ? rc : LLR_OK;
}

int llr_fz_parallel_write_ids(const fz_parallel *p, llr_tensor_writer *w, llr_err *err)
{
	size_t a = 0;
	int chunk = 0;
	while (a < p->nids) {
		/* whole sentences, up to FZ_CHUNK_IDS ids unless one is longer */
		size_t b = a, last = a;
		while (b < p->nids && (b - a < FZ_CHUNK_IDS || last == a)) {
			if (p->ids[b++] == p->src->eos_id)
				last = b;
		}
		if (last == a)
			last = b;
		char name[48];
		int64_t shape[1] = {(int64_t)(last - a)};
		snprintf(name, sizeof name, "source/ids/%06d", chunk++);
		int rc = llr_tw_put_raw(w, name, LLR_I32, 1, shape, p->ids + a, err);
		if (rc < 0)
			return rc;
		a = last;
	}
	return LLR_OK;
}

void llr_fz_parallel_free(fz_parallel *p)
{
	llr_source_free(p->src);
	free(p->ids);
	memset(p, 0, sizeof *p);
}
