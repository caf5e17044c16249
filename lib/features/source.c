/*
 * source.c - the source side of parallel data and of encoder-decoder
 * models (llrnn.h, llr_source): the source vocabulary, its input features
 * psi and the priming table, their meta keys and their tensor-archive
 * members (source/vocab, source/features, source/psi/..., source/table).
 * Not here: building them (lib/featurize/parallel.c, lib/lm/prime.c), the
 * target side (lexicon.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void llr_source_free(llr_source *s)
{
	if (!s)
		return;
	llr_strmap_free(s->vocab);
	llr_strmap_free(s->features);
	llr_csr_free(s->psi);
	free(s->table);
	free(s);
}

int llr_source_to_meta(const llr_source *s, llr_meta *m)
{
	int rc;
	if ((rc = llr_meta_setf(m, "source_vocab_size", "%zu", llr_strmap_size(s->vocab))) < 0 ||
	    (rc = llr_meta_setf(m, "source_n_features", "%zu", llr_strmap_size(s->features))) < 0 ||
	    (rc = llr_meta_setf(m, "source_eos_id", "%d", s->eos_id)) < 0 ||
	    (rc = llr_meta_setf(m, "source_unk_id", "%d", s->unk_id)) < 0 ||
	    (rc = llr_meta_set(m, "prime", s->table ? "table" : "none")) < 0)
		return rc;
	if (s->table && ((rc = llr_meta_setf(m, "prime_iters", "%d", s->prime_iters)) < 0 ||
	                 (rc = llr_meta_setf(m, "prime_smoothing", "%.9g", s->prime_k)) < 0))
		return rc;
	return LLR_OK;
}

int llr_source_write(llr_tensor_writer *w, const llr_source *s, int32_t V, llr_err *err)
{
	int rc;
	LLR_ASSERT(s->psi && s->psi->rows == (int32_t)llr_strmap_size(s->vocab) && s->psi->cols == (int32_t)llr_strmap_size(s->features));
	if ((rc = llr_lex_put_names(w, "source/vocab", s->vocab, err)) < 0 ||
	    (rc = llr_lex_put_names(w, "source/features", s->features, err)) < 0 ||
	    (rc = llr_tw_put_csr(w, "source/psi", s->psi, err)) < 0)
		return rc;
	if (!s->table)
		return LLR_OK;
	int64_t shape[2] = {s->psi->rows, V};
	return llr_tw_put_raw(w, "source/table", LLR_F32, 2, shape, s->table, err);
}

static int meta_int(const llr_meta *m, const char *key, int64_t lo, int64_t hi, int64_t *out, llr_err *err)
{
	int rc = llr_meta_get_i64(m, key, out, err);
	if (rc < 0)
		return llr_err_set(err, rc, "meta: %s: missing or not an integer", key);
	if (*out < lo || *out > hi)
		return llr_err_set(err, LLR_ERANGE, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)*out, (long long)lo, (long long)hi);
	return LLR_OK;
}

/* The table: Vs x V, every row a distribution without zeros. */
static int read_table(llr_tensor_reader *r, int64_t Vs, int32_t V, float **out, llr_err *err)
{
	int rc = llr_lex_next_member(r, "source/table", err);
	llr_tensor *t = NULL;
	int64_t shape[2] = {Vs, V};
	if (rc < 0 || (rc = llr_tr_tensor_expect(r, LLR_F32, 2, shape, &t, err)) < 0)
		return rc;
	const float *d = t->data;
	for (int64_t s = 0; s < Vs; s++) {
		double z = 0;
		for (int32_t x = 0; x < V; x++) {
			float v = d[s * V + x];
			if (!(v > 0.0f) || !isfinite(v)) {
				llr_tensor_free(t);
				return llr_err_set(err, LLR_EFORMAT, "member source/table: entry (%lld, %d) is %g, not a positive probability", (long long)s, x, (double)v);
			}
			z += v;
		}
		if (fabs(z - 1.0) > 1e-3) {
			llr_tensor_free(t);
			return llr_err_set(err, LLR_EFORMAT, "member source/table: row %lld sums to %g, not 1", (long long)s, z);
		}
	}
	*out = t->data;
	t->data = NULL;
	llr_tensor_free(t);
	return LLR_OK;
}

int llr_source_read(llr_tensor_reader *r, int32_t V, llr_source **out, llr_err *err)
{
	*out = NULL;
	const llr_meta *m = llr_tr_meta(r);
	int64_t Vs, Fs, eos, unk;
	int rc;
	if ((rc = meta_int(m, "source_vocab_size", 2, LLR_MAX_VOCAB, &Vs, err)) < 0 ||
	    (rc = meta_int(m, "source_n_features", 1, LLR_MAX_FEATURES, &Fs, err)) < 0 ||
	    (rc = meta_int(m, "source_eos_id", 0, Vs - 1, &eos, err)) < 0 ||
	    (rc = meta_int(m, "source_unk_id", 0, Vs - 1, &unk, err)) < 0)
		return rc;
	const char *prime = llr_meta_get(m, "prime");
	if (!prime || (strcmp(prime, "none") && strcmp(prime, "table")))
		return llr_err_set(err, LLR_EFORMAT, "meta: prime: expected 'none' or 'table', got '%s'", prime ? prime : "(missing)");
	llr_source *s = calloc(1, sizeof *s);
	if (!s)
		return llr_err_set(err, LLR_ENOMEM, "source: out of memory");
	s->eos_id = (int32_t)eos;
	s->unk_id = (int32_t)unk;
	if (!strcmp(prime, "table")) {
		int64_t it;
		double k;
		if ((rc = meta_int(m, "prime_iters", 0, 1000, &it, err)) < 0 || (rc = llr_meta_get_f64(m, "prime_smoothing", &k, err)) < 0)
			goto fail;
		s->prime_iters = (int)it;
		s->prime_k = k;
	}
	if ((rc = llr_lex_read_names(r, "source/vocab", Vs, &s->vocab, err)) < 0 ||
	    (rc = llr_lex_read_names(r, "source/features", Fs, &s->features, err)) < 0)
		goto fail;
	if (strcmp(llr_strmap_str(s->vocab, s->eos_id), LLR_EOS) || strcmp(llr_strmap_str(s->vocab, s->unk_id), LLR_UNK)) {
		rc = llr_err_set(err, LLR_EFORMAT, "member source/vocab: source_eos_id %d is not %s or source_unk_id %d is not %s", s->eos_id, LLR_EOS, s->unk_id, LLR_UNK);
		goto fail;
	}
	if ((rc = llr_lex_read_csr(r, "source/psi", Vs, Fs, &s->psi, err)) < 0)
		goto fail;
	if (!strcmp(prime, "table") && (rc = read_table(r, Vs, V, &s->table, err)) < 0)
		goto fail;
	*out = s;
	return LLR_OK;
fail:
	llr_source_free(s);
	return rc;
}

int32_t llr_source_id(const llr_source *s, const char *tok, size_t len)
{
	int32_t id = llr_strmap_get(s->vocab, tok, len);
	return id < 0 ? s->unk_id : id;
}
