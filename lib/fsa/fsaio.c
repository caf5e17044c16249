/*
 * fsaio.c - an automaton background's members in a tensor archive (a
 * features stream or a model file, after the lexicon's other members):
 * the deterministic automaton as it was built (fsa.c), so that train,
 * score and gen use the very automaton featurize compiled, without the
 * file or the pattern.  Members, under the prefix (fsa/):
 *   arcs   int32 [M, 2]  label (a vocabulary id), destination (-1: the
 *                        label is excluded from the default arc)
 *   arcw   float32 [M]   ln of each arc's factor of b
 *   states int32 [N, 3]  end of the state's arcs (they start where the
 *                        previous state's end), default arc's state (-1
 *                        none), fewest tokens to a final state
 *   statew float32 [N, 2] ln of the default arc's factor, ln of the
 *                        final weight (-inf: not final)
 * and the meta keys fsa.states, fsa.arcs and fsa.start.  The reader
 * checks every index and that the distances are those of the automaton
 * (so every state reaches a final one: it accepts something).  A
 * grammar (gbnffsa.c) is stored as its text instead, whose states are
 * made only as they are reached:
 *   grammar              text, the GBNF grammar as featurize read it
 * with the meta key fsa.grammar (its length in bytes); the reader
 * parses it again and rebuilds the recogniser over the archive's
 * vocabulary.  Not here: making an automaton (fstext.c, regex.c,
 * fsa.c, gbnffsa.c).
 */
#include <math.h>
#include <stdlib.h>

#include "fsa.h"

int llr_fsa_meta(const llr_fsa *d, llr_meta *m)
{
	int rc;
	size_t len;
	LLR_ASSERT(!d->meet); /* an intersection is gen's, never stored */
	if (llr_fsa_grammar_source(d, &len))
		return llr_meta_setf(m, "fsa.grammar", "%zu", len);
	if ((rc = llr_meta_setf(m, "fsa.states", "%d", d->n)) < 0 || (rc = llr_meta_setf(m, "fsa.arcs", "%d", d->off[d->n])) < 0)
		return rc;
	return llr_meta_setf(m, "fsa.start", "%d", d->start);
}

int llr_fsa_write(llr_tensor_writer *w, const llr_fsa *d, llr_err *err)
{
	size_t len;
	LLR_ASSERT(!d->meet);
	const char *text = llr_fsa_grammar_source(d, &len);
	if (text)
		return llr_tw_put_text(w, "fsa/grammar", text, len, err);
	int64_t M = d->off[d->n], N = d->n;
	int32_t *arcs = llr_malloc((size_t)LLR_MAX(M, 1) * 2 * sizeof *arcs);
	int32_t *st = llr_malloc((size_t)N * 3 * sizeof *st);
	float *sw = llr_malloc((size_t)N * 2 * sizeof *sw);
	int rc = arcs && st && sw ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "automaton: out of memory");
	for (int64_t k = 0; rc >= 0 && k < M; k++) {
		arcs[2 * k] = d->lab[k];
		arcs[2 * k + 1] = d->dst[k];
	}
	for (int64_t q = 0; rc >= 0 && q < N; q++) {
		st[3 * q] = d->off[q + 1];
		st[3 * q + 1] = d->def[q];
		st[3 * q + 2] = d->dist[q];
		sw[2 * q] = d->deflogw[q];
		sw[2 * q + 1] = d->final[q];
	}
	int64_t as[2] = {M, 2}, ss[2] = {N, 3}, ws[2] = {N, 2};
	if (rc >= 0 && (rc = llr_tw_put_raw(w, "fsa/arcs", LLR_I32, 2, as, arcs, err)) >= 0 &&
	    (rc = llr_tw_put_raw(w, "fsa/arcw", LLR_F32, 1, as, d->logw, err)) >= 0 &&
	    (rc = llr_tw_put_raw(w, "fsa/states", LLR_I32, 2, ss, st, err)) >= 0)
		rc = llr_tw_put_raw(w, "fsa/statew", LLR_F32, 2, ws, sw, err);
	free(arcs);
	free(st);
	free(sw);
	return rc;
}

/* The next member, named name, of dtype dt and shape rows x cols (cols
 * 0: one dimension). */
static int member(llr_tensor_reader *r, const char *name, llr_dtype dt, int64_t rows, int64_t cols, llr_tensor **t, llr_err *err)
{
	int rc = llr_lex_next_member(r, name, err);
	int64_t shape[2] = {rows, cols};
	if (rc >= 0 && (rc = llr_tr_tensor_expect(r, dt, cols ? 2 : 1, shape, t, err)) < 0 && !strstr(err->msg, name))
		llr_err_prefix(err, name); /* a checksum error names the member already */
	return rc;
}

/* The state q's fewest tokens to a final state, from its successors'. */
static int64_t dist_of(const llr_fsa *d, int32_t q)
{
	if (isfinite(d->final[q]))
		return 0;
	int64_t best = INT64_MAX;
	for (int32_t k = d->off[q]; k < d->off[q + 1]; k++)
		if (d->dst[k] >= 0)
			best = LLR_MIN(best, (int64_t)d->dist[d->dst[k]] + 1);
	if (d->def[q] >= 0)
		best = LLR_MIN(best, (int64_t)d->dist[d->def[q]] + 1);
	return best;
}

/* Every index in range, labels sorted and producible, weights finite
 * (final weights -inf or finite), the distances those of the automaton. */
static int check(const llr_fsa *d, llr_err *err)
{
	for (int32_t q = 0; q < d->n; q++) {
		if (d->off[q + 1] < d->off[q])
			return llr_err_set(err, LLR_EFORMAT, "fsa/states: state %d: arcs out of order", q);
		if (d->def[q] < -1 || d->def[q] >= d->n || !isfinite(d->deflogw[q]) || d->dist[q] < 0 ||
		    (isnan(d->final[q]) || d->final[q] == INFINITY))
			return llr_err_set(err, LLR_EFORMAT, "fsa/states: state %d: bad default arc, weight or distance", q);
		for (int32_t k = d->off[q]; k < d->off[q + 1]; k++)
			if (d->lab[k] < 0 || d->lab[k] >= d->V || d->lab[k] == d->eos || d->lab[k] == d->bos ||
			    (k > d->off[q] && d->lab[k] <= d->lab[k - 1]) || d->dst[k] < -1 || d->dst[k] >= d->n || !isfinite(d->logw[k]))
				return llr_err_set(err, LLR_EFORMAT, "fsa/arcs: arc %d of state %d: bad label, destination or weight", k, q);
	}
	for (int32_t q = 0; q < d->n; q++)
		if (dist_of(d, q) != d->dist[q])
			return llr_err_set(err, LLR_EFORMAT, "fsa/states: state %d: distance %d to a final state is not the automaton's", q,
			                   d->dist[q]);
	return LLR_OK;
}

/* The meta's fsa.KEY in [lo, hi]. */
static int meta_i32(const llr_meta *m, const char *key, int64_t lo, int64_t hi, int32_t *out, llr_err *err)
{
	int64_t v;
	if (llr_meta_get_i64(m, key, &v, err) < 0 || v < lo || v > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or out of range [%lld, %lld]", key, (long long)lo, (long long)hi);
	*out = (int32_t)v;
	return LLR_OK;
}

int llr_fsa_in_meta(const llr_meta *m)
{
	return llr_meta_get(m, "fsa.states") || llr_meta_get(m, "fsa.grammar");
}

/* The grammar of fsa.grammar: its text member, of that length. */
static llr_fsa *get_grammar(llr_tensor_reader *r, const llr_meta *m, const llr_strmap *vocab, llr_err *err)
{
	int64_t want;
	char *text = NULL;
	size_t len = 0;
	if (llr_meta_get_i64(m, "fsa.grammar", &want, err) < 0 || want < 0) {
		llr_err_set(err, LLR_EFORMAT, "meta: fsa.grammar: missing or negative");
		return NULL;
	}
	int rc = llr_lex_next_member(r, "fsa/grammar", err);
	if (rc >= 0 && (rc = llr_tr_text(r, &text, &len, err)) >= 0 && len != (uint64_t)want)
		rc = llr_err_set(err, LLR_EFORMAT, "fsa/grammar: %zu bytes, the meta says %lld", len, (long long)want);
	llr_fsa *d = NULL;
	if (rc >= 0)
		d = llr_fsa_grammar_text(text, len, "fsa/grammar", vocab, err);
	free(text);
	return d;
}

llr_fsa *llr_fsa_get_members(llr_tensor_reader *r, const llr_meta *m, const llr_strmap *vocab, llr_err *err)
{
	if (llr_meta_get(m, "fsa.grammar"))
		return get_grammar(r, m, vocab, err);
	int32_t N = 0, M = 0, start = 0;
	if (meta_i32(m, "fsa.states", 1, INT32_MAX - 1, &N, err) < 0 || meta_i32(m, "fsa.arcs", 0, INT32_MAX - 1, &M, err) < 0 ||
	    meta_i32(m, "fsa.start", 0, N - 1, &start, err) < 0)
		return NULL;
	llr_fsa *d = llr_calloc(1, sizeof *d);
	llr_tensor *ta = NULL, *tw = NULL, *ts = NULL, *tsw = NULL;
	int rc = d ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "automaton: out of memory");
	if (rc >= 0 && (rc = member(r, "fsa/arcs", LLR_I32, M, 2, &ta, err)) >= 0 && (rc = member(r, "fsa/arcw", LLR_F32, M, 0, &tw, err)) >= 0 &&
	    (rc = member(r, "fsa/states", LLR_I32, N, 3, &ts, err)) >= 0)
		rc = member(r, "fsa/statew", LLR_F32, N, 2, &tsw, err);
	if (rc >= 0) {
		d->n = N;
		d->start = start;
		d->V = (int32_t)llr_strmap_size(vocab);
		d->eos = llr_strmap_get(vocab, LLR_EOS, strlen(LLR_EOS));
		d->bos = llr_strmap_get(vocab, LLR_BOS, strlen(LLR_BOS));
		d->off = llr_malloc(((size_t)N + 1) * sizeof *d->off);
		d->lab = llr_malloc((size_t)LLR_MAX(M, 1) * sizeof *d->lab);
		d->dst = llr_malloc((size_t)LLR_MAX(M, 1) * sizeof *d->dst);
		d->def = llr_malloc((size_t)N * sizeof *d->def);
		d->dist = llr_malloc((size_t)N * sizeof *d->dist);
		d->deflogw = llr_malloc((size_t)N * sizeof *d->deflogw);
		d->final = llr_malloc((size_t)N * sizeof *d->final);
		if (!d->off || !d->lab || !d->dst || !d->def || !d->dist || !d->deflogw || !d->final)
			rc = llr_err_set(err, LLR_ENOMEM, "automaton: out of memory");
	}
	if (rc >= 0) {
		const int32_t *a = ta->data, *s = ts->data;
		const float *sw = tsw->data;
		d->logw = tw->data;
		tw->data = NULL;
		d->off[0] = 0;
		for (int32_t k = 0; k < M; k++) {
			d->lab[k] = a[2 * k];
			d->dst[k] = a[2 * k + 1];
		}
		for (int32_t q = 0; q < N; q++) {
			d->off[q + 1] = s[3 * q] >= 0 && s[3 * q] <= M ? s[3 * q] : -1;
			d->def[q] = s[3 * q + 1];
			d->dist[q] = s[3 * q + 2];
			d->deflogw[q] = sw[2 * q];
			d->final[q] = sw[2 * q + 1];
		}
		d->off[N] = d->off[N] < 0 ? -1 : M == d->off[N] ? M : -1;
		rc = check(d, err);
	}
	llr_tensor_free(ta);
	llr_tensor_free(tw);
	llr_tensor_free(ts);
	llr_tensor_free(tsw);
	if (rc < 0) {
		llr_fsa_free(d);
		return NULL;
	}
	return d;
}
