/*
 * pairs.c - an encoder-decoder's training and validation pairs
 * (llr_encdec_pairs, lib/llrnn.h): from a featurize --source stream (its
 * ids/ chunks, then its source/ids/ chunks, sentence for sentence), or
 * from two aligned text files; pairs longer than max_len on either side
 * are counted and left out.  Each pair keeps where it was read (for
 * the messages of constrain.c).
 */
#include "family/family.h"

#include <stdlib.h>

static int push_id(int32_t **a, size_t *n, size_t *cap, int32_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1 << 14;
		int32_t *p = llr_reallocarray(*a, c, sizeof *p);
		if (!p)
			return LLR_ENOMEM;
		*a = p;
		*cap = c;
	}
	(*a)[(*n)++] = x;
	return LLR_OK;
}

/* The pair just pushed (its ids from ns0, nt0 on), read at line, closed
 * as pair n. */
static int close_pair(llr_encdec_pairs *p, size_t nt0, int64_t line)
{
	if (p->n + 2 > p->cap_p) {
		size_t cap = p->cap_p ? 2 * p->cap_p : 1024;
		size_t *so = llr_reallocarray(p->soff, cap, sizeof *so);
		if (so)
			p->soff = so;
		size_t *to = so ? llr_reallocarray(p->toff, cap, sizeof *to) : NULL;
		if (to)
			p->toff = to;
		int64_t *ln = to ? llr_reallocarray(p->line, cap, sizeof *ln) : NULL;
		if (!ln)
			return LLR_ENOMEM;
		p->line = ln;
		p->cap_p = cap;
	}
	p->line[p->n] = line;
	p->soff[0] = p->toff[0] = 0;
	p->n++;
	p->soff[p->n] = p->ns;
	p->toff[p->n] = p->nt;
	p->tokens += (int64_t)(p->nt - nt0);
	return LLR_OK;
}

/* Sentence ends in ids (those equal to eos) as offsets into *off (k + 1
 * of them for k sentences); (size_t)-1 when out of memory. */
static size_t split_ids(const int32_t *ids, size_t n, int32_t eos, size_t **off)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += ids[i] == eos;
	if (!(*off = llr_calloc(k + 1, sizeof **off)))
		return (size_t)-1;
	size_t j = 0;
	for (size_t i = 0; i < n; i++)
		if (ids[i] == eos)
			(*off)[++j] = i + 1;
	return k;
}

/* Read chunks named prefix* while they come, from the member *mn on;
 * *mn becomes the member that ended them (NULL at the end). */
static int read_chunks(llr_tensor_reader *r, const char *sname, const char **mn, const char *prefix, int32_t lim, int32_t **ids,
                       size_t *n, size_t *cap, llr_err *err)
{
	while (*mn && !strncmp(*mn, prefix, strlen(prefix))) {
		llr_tensor *t = NULL;
		int64_t shape[1] = {-1};
		if (llr_tr_tensor_expect(r, LLR_I32, 1, shape, &t, err) < 0)
			return llr_err_code(err, LLR_EFORMAT);
		const int32_t *d = t->data;
		int rc = LLR_OK;
		for (size_t i = 0; rc == LLR_OK && i < llr_tensor_numel(t); i++) {
			if (d[i] < 0 || d[i] >= lim)
				rc = llr_err_set(err, LLR_EFORMAT, "%s: %s: id %d out of range [0, %d)", sname, *mn, (int)d[i], (int)lim);
			else if (push_id(ids, n, cap, d[i]) < 0)
				rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		}
		llr_tensor_free(t);
		if (rc < 0)
			return rc;
		if ((rc = llr_tr_next(r, mn, err)) < 0)
			return rc;
		if (rc == 0)
			*mn = NULL;
	}
	return LLR_OK;
}

/* The pairs of the ids read (tid/toff, sid/soff, kt of them) within
 * max_len into p. */
static int keep_pairs(llr_encdec_pairs *p, const int32_t *tid, const size_t *toff, const int32_t *sid, const size_t *soff, size_t kt,
                      int max_len, llr_err *err)
{
	for (size_t k = 0; k < kt; k++) {
		size_t sl = soff[k + 1] - soff[k], tl = toff[k + 1] - toff[k], nt0 = p->nt;
		if (sl > (size_t)max_len || tl > (size_t)max_len) {
			p->skipped++;
			continue;
		}
		int rc = LLR_OK;
		for (size_t i = 0; rc == LLR_OK && i < sl; i++)
			rc = push_id(&p->src, &p->ns, &p->cap_s, sid[soff[k] + i]);
		for (size_t i = 0; rc == LLR_OK && i < tl; i++)
			rc = push_id(&p->tgt, &p->nt, &p->cap_t, tid[toff[k] + i]);
		if (rc < 0 || close_pair(p, nt0, (int64_t)k + 1) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	return LLR_OK;
}

/* The stream's pairs, once its ids are read. */
static int split_pairs(const char *sname, const llr_lexicon *x, const llr_source *s, int max_len, int32_t *tid, size_t nt, int32_t *sid,
                       size_t ns, llr_encdec_pairs *p, llr_err *err)
{
	size_t *toff = NULL, *soff = NULL;
	size_t kt = split_ids(tid, nt, x->eos_id, &toff), ks = kt == (size_t)-1 ? kt : split_ids(sid, ns, s->eos_id, &soff);
	int rc = LLR_OK;
	if (kt == (size_t)-1 || ks == (size_t)-1)
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	else if (!kt)
		rc = llr_err_set(err, LLR_EEMPTY, "%s: no ids/ members: empty corpus", sname);
	else if (kt != ks)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: %zu target sentences but %zu source sentences (not a featurize --source stream?)", sname,
		                 kt, ks);
	else if (toff[kt] != nt || soff[ks] != ns)
		rc = llr_err_set(err, LLR_ETRUNC, "%s: the last sentence has no </s> (truncated stream?)", sname);
	else
		rc = keep_pairs(p, tid, toff, sid, soff, kt, max_len, err);
	free(toff);
	free(soff);
	if (rc == LLR_OK && !p->n)
		rc = llr_err_set(err, LLR_EEMPTY, "%s: no pair within --max-len %d", sname, max_len);
	return rc;
}

int llr_encdec_pairs_read(llr_tensor_reader *r, const char *sname, const llr_lexicon *x, const llr_source *s, int max_len,
                          llr_encdec_pairs *p, llr_err *err)
{
	const char *mn = NULL;
	int rc = llr_tr_next(r, &mn, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		mn = NULL;
	int32_t *tid = NULL, *sid = NULL;
	size_t nt = 0, ns = 0, ct = 0, cs = 0;
	rc = read_chunks(r, sname, &mn, "ids/", (int32_t)llr_strmap_size(x->vocab), &tid, &nt, &ct, err);
	if (rc == LLR_OK)
		rc = read_chunks(r, sname, &mn, "source/ids/", (int32_t)llr_strmap_size(s->vocab), &sid, &ns, &cs, err);
	if (rc == LLR_OK && mn)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: unexpected member '%s' (ids/ then source/ids/ chunks expected)", sname, mn);
	if (rc == LLR_OK)
		rc = split_pairs(sname, x, s, max_len, tid, nt, sid, ns, p, err);
	free(tid);
	free(sid);
	return rc;
}

/* The ids of one text line: source tokens (unknown: <unk>) and the
 * source </s>, or target tokens likewise. */
static int line_ids(llr_encdec_pairs *p, const char *line, size_t len, int src, const llr_lexicon *x, const llr_source *s)
{
	size_t pos = 0, tl;
	const char *tok;
	int rc = LLR_OK;
	while (rc == LLR_OK && llr_token_next(line, len, &pos, &tok, &tl)) {
		int32_t id = src ? llr_source_id(s, tok, tl) : llr_strmap_get(x->vocab, tok, tl);
		if (id < 0)
			id = x->unk_id;
		rc = src ? push_id(&p->src, &p->ns, &p->cap_s, id) : push_id(&p->tgt, &p->nt, &p->cap_t, id);
	}
	if (rc == LLR_OK)
		rc = src ? push_id(&p->src, &p->ns, &p->cap_s, s->eos_id) : push_id(&p->tgt, &p->nt, &p->cap_t, x->eos_id);
	return rc;
}

/* The next pair of ls and lt into p: 1, 0 at the end of both. */
static int text_pair(llr_lines *ls, llr_lines *lt, const char *spath, const char *tpath, const llr_lexicon *x, const llr_source *s,
                     int max_len, llr_encdec_pairs *p, llr_err *err)
{
	const char *sl, *tl;
	size_t sn, tn, s0 = p->ns, t0 = p->nt;
	int a = llr_lines_next(ls, &sl, &sn, err);
	if (a < 0)
		return a;
	if (a && line_ids(p, sl, sn, 1, x, s) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	int b = llr_lines_next(lt, &tl, &tn, err);
	if (b < 0)
		return b;
	if (a != b)
		return llr_err_set(err, LLR_EFORMAT, "%s and %s are not aligned: they diverge at line %zu, which only %s has", spath, tpath,
		                   (a ? llr_lines_lineno(ls) : llr_lines_lineno(lt)), a ? spath : tpath);
	if (!a)
		return 0;
	if (line_ids(p, tl, tn, 0, x, s) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (p->ns - s0 > (size_t)max_len || p->nt - t0 > (size_t)max_len) {
		p->ns = s0;
		p->nt = t0;
		p->skipped++;
		return 1;
	}
	return close_pair(p, t0, (int64_t)llr_lines_lineno(lt)) < 0 ? llr_err_set(err, LLR_ENOMEM, "out of memory") : 1;
}

int llr_encdec_pairs_read_text(const char *spath, const char *tpath, const llr_lexicon *x, const llr_source *s, int max_len,
                               llr_encdec_pairs *p, llr_err *err)
{
	llr_lines *ls = llr_lines_open(spath, 0, err), *lt = ls ? llr_lines_open(tpath, 0, err) : NULL;
	int rc = ls && lt ? 1 : llr_err_code(err, LLR_EIO);
	while (rc > 0)
		rc = text_pair(ls, lt, spath, tpath, x, s, max_len, p, err);
	llr_lines_close(ls);
	llr_lines_close(lt);
	if (rc == 0 && !p->n)
		rc = llr_err_set(err, LLR_EEMPTY, "%s: no validation pair", tpath);
	return rc;
}

void llr_encdec_pairs_free(llr_encdec_pairs *p)
{
	free(p->src);
	free(p->tgt);
	free(p->soff);
	free(p->toff);
	free(p->line);
}
