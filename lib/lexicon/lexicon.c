/*
 * lexicon.c - the word model shared by the features stream (featurize ->
 * train) and model files: vocabulary, feature names, the V x F matrix Phi,
 * the optional input matrix Psi, the log background; its tensor-archive
 * members (llr_lexicon_write/read, see llrnn-tensor(5)).
 *
 * Member order, exactly: vocab, features, [features_in], phi/indptr,
 * phi/indices, phi/data, [psi/indptr, psi/indices, psi/data], logb.  The
 * sizes live in the meta member written before them (llr_lexicon_to_meta).
 * With an n-gram background (x->ngram) its trie follows logb, under bg/;
 * with a spelling model (x->spell) its character n-gram follows, under
 * spell/; then, with x->any, the any/ members (anyword.c), with x->sig
 * the signature masses under sig/ (lib/lexicon/opensig.c), with x->fsa
 * the automaton of an automaton background under fsa/ (lib/fsa/fsaio.c).
 * Not here:
 * building a lexicon from sources (lib/featurize/), the string
 * extractors (extract.c), the rows of words outside the vocabulary
 * (anyword.c), the archive format (tensorio.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void llr_lexicon_free(llr_lexicon *x)
{
	if (!x)
		return;
	llr_strmap_free(x->vocab);
	llr_strmap_free(x->features);
	llr_strmap_free(x->features_in);
	llr_csr_free(x->phi);
	llr_csr_free(x->psi);
	free(x->logb);
	llr_meta_free(x->meta);
	llr_ngram_bg_free(x->bg);
	llr_ngram_free(x->ngram);
	llr_spelling_free(x->spell);
	llr_anyword_free(x->any);
	llr_opensig_free(x->sig);
	llr_fsa_free(x->fsa);
	free(x);
}

/* ------------------------------------------------------------- writing */

static int is_reserved_key(const char *k)
{
	static const char *const keys[] = {"format", "version", "kind", "vocab_size", "n_features",
					   "n_features_in", "eos_id", "unk_id", "psi", NULL};
	for (int i = 0; keys[i]; i++)
		if (!strcmp(k, keys[i]))
			return 1;
	return !strncmp(k, "extract.", 8) || !strncmp(k, "bg.", 3) || !strcmp(k, "spell.order") || !strcmp(k, "spell.lambda") ||
	       !strncmp(k, "spell.ngram.", 12) || !strncmp(k, "any.", 4) || !strncmp(k, "sig.", 4) ||
	       !strncmp(k, "fsa.", 4);
}

int llr_lexicon_to_meta(const llr_lexicon *x, llr_meta *m)
{
	int rc;
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	int32_t F = (int32_t)llr_strmap_size(x->features);
	int32_t Fin = x->psi && x->features_in ? (int32_t)llr_strmap_size(x->features_in) : F;
	if ((rc = llr_meta_setf(m, "vocab_size", "%d", V)) < 0 ||
	    (rc = llr_meta_setf(m, "n_features", "%d", F)) < 0 ||
	    (rc = llr_meta_setf(m, "n_features_in", "%d", Fin)) < 0 ||
	    (rc = llr_meta_setf(m, "eos_id", "%d", x->eos_id)) < 0 ||
	    (rc = llr_meta_setf(m, "unk_id", "%d", x->unk_id)) < 0 ||
	    (rc = llr_meta_set(m, "psi", x->psi ? "own" : "same")) < 0 ||
	    (rc = llr_extractors_to_meta(&x->extract, m)) < 0)
		return rc;
	if (x->ngram && (rc = llr_ngram_meta(x->ngram, m, "bg/")) < 0)
		return rc;
	if (x->spell && ((rc = llr_ngram_meta(llr_spelling_ngram(x->spell), m, "spell/")) < 0 ||
	                 (rc = llr_meta_setf(m, "spell.lambda", "%.17g", x->spell_lambda)) < 0))
		return rc;
	if (x->any && (rc = llr_anyword_meta(x->any, m)) < 0)
		return rc;
	if (x->sig && (rc = llr_opensig_meta(x->sig, m)) < 0)
		return rc;
	if (x->fsa && (rc = llr_fsa_meta(x->fsa, m)) < 0)
		return rc;
	size_t n = x->meta ? llr_meta_count(x->meta) : 0;
	for (size_t i = 0; i < n; i++) {
		const char *k, *v;
		llr_meta_at(x->meta, i, &k, &v);
		if (is_reserved_key(k) || llr_meta_get(m, k))
			continue;
		if ((rc = llr_meta_set(m, k, v)) < 0)
			return rc;
	}
	return LLR_OK;
}

int llr_lexicon_write(llr_tensor_writer *w, const llr_lexicon *x, llr_err *err)
{
	int rc;
	int64_t V = (int64_t)llr_strmap_size(x->vocab);
	LLR_ASSERT(x->phi && x->phi->rows == V && x->phi->cols == (int32_t)llr_strmap_size(x->features));
	LLR_ASSERT(!x->psi || (x->features_in && x->psi->rows == V &&
			       x->psi->cols == (int32_t)llr_strmap_size(x->features_in)));
	if ((rc = llr_lex_put_names(w, "vocab", x->vocab, err)) < 0 || (rc = llr_lex_put_names(w, "features", x->features, err)) < 0)
		return rc;
	if (x->psi && (rc = llr_lex_put_names(w, "features_in", x->features_in, err)) < 0)
		return rc;
	if ((rc = llr_tw_put_csr(w, "phi", x->phi, err)) < 0)
		return rc;
	if (x->psi && (rc = llr_tw_put_csr(w, "psi", x->psi, err)) < 0)
		return rc;
	if ((rc = llr_tw_put_raw(w, "logb", LLR_F32, 1, &V, x->logb, err)) < 0)
		return rc;
	if (x->ngram && (rc = llr_ngram_put_members(w, x->ngram, "bg/", err)) < 0)
		return rc;
	if (x->spell && (rc = llr_ngram_put_members(w, llr_spelling_ngram(x->spell), "spell/", err)) < 0)
		return rc;
	if (x->any && (rc = llr_anyword_write(w, x->any, err)) < 0)
		return rc;
	if (x->sig && (rc = llr_opensig_write(w, x->sig, err)) < 0)
		return rc;
	return x->fsa ? llr_fsa_write(w, x->fsa, err) : LLR_OK;
}

/* ------------------------------------------------------------- reading */

static int meta_int(const llr_meta *m, const char *key, int64_t lo, int64_t hi, int64_t *out, llr_err *err)
{
	int rc = llr_meta_get_i64(m, key, out, err);
	if (rc < 0)
		return llr_err_set(err, rc, "meta: %s: missing or not an integer", key);
	if (*out < lo || *out > hi)
		return llr_err_set(err, LLR_ERANGE, "meta: %s=%lld out of range [%lld, %lld]", key,
				   (long long)*out, (long long)lo, (long long)hi);
	return LLR_OK;
}

/* The n-gram of a context-dependent background, after logb: its unigram
 * level must be logb exactly. */
static int read_ngram_bg(llr_tensor_reader *r, const llr_meta *m, llr_lexicon *x, llr_err *err)
{
	int rc = llr_ngram_get_members(r, m, "bg/", "member bg", &x->ngram, err);
	if (rc < 0)
		return rc;
	if (!(x->bg = llr_ngram_bg_new(x->ngram, x->vocab, err)))
		return llr_err_prefix(err, "member bg");
	size_t V = llr_strmap_size(x->vocab);
	if (memcmp(x->logb, llr_ngram_bg_logb1(x->bg), V * sizeof(float)))
		return llr_err_set(err, LLR_EFORMAT, "member logb: not the unigram level of the n-gram background");
	return LLR_OK;
}

/* The spelling model, after logb and the n-gram background: a character
 * n-gram and the unseen-word mass spell.lambda in (0, 1). */
static int read_spelling(llr_tensor_reader *r, const llr_meta *m, llr_lexicon *x, llr_err *err)
{
	const char *l = llr_meta_get(m, "spell.lambda");
	char *end = NULL;
	double lambda = l ? strtod(l, &end) : NAN;
	if (!l || end == l || *end || !(lambda > 0 && lambda < 1))
		return llr_err_set(err, LLR_EFORMAT, "meta: spell.lambda: %s%s%s", l ? "'" : "missing", l ? l : "",
		                   l ? "' is not a number in (0, 1)" : "");
	llr_ngram *ng = NULL;
	int rc = llr_ngram_get_members(r, m, "spell/", "member spell", &ng, err);
	if (rc < 0)
		return rc;
	if (!(x->spell = llr_spelling_new(ng, err))) {
		llr_ngram_free(ng);
		return llr_err_prefix(err, "member spell");
	}
	x->spell_lambda = lambda;
	return LLR_OK;
}

int llr_lexicon_read(llr_tensor_reader *r, llr_lexicon **out, llr_err *err)
{
	*out = NULL;
	const llr_meta *m = llr_tr_meta(r);
	int64_t V, F, Fin, eos, unk;
	int rc;
	if ((rc = meta_int(m, "vocab_size", 2, LLR_MAX_VOCAB, &V, err)) < 0 ||
	    (rc = meta_int(m, "n_features", 0, LLR_MAX_FEATURES, &F, err)) < 0 ||
	    (rc = meta_int(m, "n_features_in", 0, LLR_MAX_FEATURES, &Fin, err)) < 0 ||
	    (rc = meta_int(m, "eos_id", 0, V - 1, &eos, err)) < 0 ||
	    (rc = meta_int(m, "unk_id", 0, V - 1, &unk, err)) < 0)
		return rc;
	const char *psi = llr_meta_get(m, "psi");
	if (!psi || (strcmp(psi, "same") && strcmp(psi, "own")))
		return llr_err_set(err, LLR_EFORMAT, "meta: psi: expected 'same' or 'own', got '%s'",
				   psi ? psi : "(missing)");
	int own = !strcmp(psi, "own");
	if (!own && Fin != F)
		return llr_err_set(err, LLR_EFORMAT, "meta: psi=same but n_features_in=%lld differs from n_features=%lld",
				   (long long)Fin, (long long)F);
	llr_lexicon *x = calloc(1, sizeof *x);
	if (!x)
		return llr_err_set(err, LLR_ENOMEM, "lexicon: out of memory");
	x->eos_id = (int32_t)eos;
	x->unk_id = (int32_t)unk;
	if ((rc = llr_extractors_from_meta(&x->extract, m, err)) < 0)
		goto fail;
	if (!(x->meta = llr_meta_new())) {
		rc = llr_err_set(err, LLR_ENOMEM, "lexicon: out of memory");
		goto fail;
	}
	for (size_t i = 0; i < llr_meta_count(m); i++) {
		const char *k, *v;
		llr_meta_at(m, i, &k, &v);
		if ((rc = llr_meta_set(x->meta, k, v)) < 0) {
			llr_err_set(err, rc, "lexicon: out of memory");
			goto fail;
		}
	}
	if ((rc = llr_lex_read_names(r, "vocab", V, &x->vocab, err)) < 0 ||
	    (rc = llr_lex_read_names(r, "features", F, &x->features, err)) < 0)
		goto fail;
	if (own && (rc = llr_lex_read_names(r, "features_in", Fin, &x->features_in, err)) < 0)
		goto fail;
	if (strcmp(llr_strmap_str(x->vocab, x->eos_id), LLR_EOS) || strcmp(llr_strmap_str(x->vocab, x->unk_id), LLR_UNK)) {
		rc = llr_err_set(err, LLR_EFORMAT, "member vocab: eos_id %d is not %s or unk_id %d is not %s",
				 x->eos_id, LLR_EOS, x->unk_id, LLR_UNK);
		goto fail;
	}
	if ((rc = llr_lex_read_csr(r, "phi", V, F, &x->phi, err)) < 0)
		goto fail;
	if (own && (rc = llr_lex_read_csr(r, "psi", V, Fin, &x->psi, err)) < 0)
		goto fail;
	if ((rc = llr_lex_next_member(r, "logb", err)) < 0)
		goto fail;
	llr_tensor *t = NULL;
	int64_t shape[1] = {V};
	if ((rc = llr_tr_tensor_expect(r, LLR_F32, 1, shape, &t, err)) < 0) {
		llr_err_prefix(err, "member logb");
		goto fail;
	}
	x->logb = t->data;
	t->data = NULL;
	llr_tensor_free(t);
	for (int64_t i = 0; i < V; i++) {
		if (!isfinite(x->logb[i]) || x->logb[i] > 0) {
			rc = llr_err_set(err, LLR_EFORMAT, "member logb: entry %lld (%s) is %g, not a log probability",
					 (long long)i, llr_strmap_str(x->vocab, (int32_t)i), x->logb[i]);
			goto fail;
		}
	}
	if (llr_meta_get(m, "bg.order") && (rc = read_ngram_bg(r, m, x, err)) < 0)
		goto fail;
	if (llr_meta_get(m, "spell.order") && (rc = read_spelling(r, m, x, err)) < 0)
		goto fail;
	if (llr_meta_get(m, "any.words") && (rc = llr_anyword_read(r, m, (int32_t)F, &x->any, err)) < 0)
		goto fail;
	if (llr_meta_get(m, "sig.count") && (rc = llr_opensig_read(r, m, (int32_t)F, &x->sig, err)) < 0)
		goto fail;
	if (llr_fsa_in_meta(m) && !(x->fsa = llr_fsa_get_members(r, m, x->vocab, err))) {
		rc = llr_err_code(err, LLR_EFORMAT);
		goto fail;
	}
	*out = x;
	return LLR_OK;
fail:
	llr_lexicon_free(x);
	return rc;
}

/* ------------------------------------------------------------ comparing */

static int same_strmap(const llr_strmap *a, const llr_strmap *b, const char *what, const char *an, const char *bn, llr_err *err)
{
	size_t na = llr_strmap_size(a), nb = llr_strmap_size(b);
	if (na != nb)
		return llr_err_set(err, LLR_EFORMAT, "%s differ (%zu in %s, %zu in %s)", what, na, an, nb, bn);
	for (size_t i = 0; i < na; i++) {
		size_t la = llr_strmap_len(a, (int32_t)i), lb = llr_strmap_len(b, (int32_t)i);
		if (la != lb || memcmp(llr_strmap_str(a, (int32_t)i), llr_strmap_str(b, (int32_t)i), la))
			return llr_err_set(err, LLR_EFORMAT, "%s differ at %zu ('%s' in %s, '%s' in %s)", what, i, llr_strmap_str(a, (int32_t)i), an, llr_strmap_str(b, (int32_t)i), bn);
	}
	return LLR_OK;
}

static int same_csr(const llr_csr *a, const llr_csr *b)
{
	if (!a || !b)
		return a == b;
	return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
	       !memcmp(a->indptr, b->indptr, ((size_t)a->rows + 1) * sizeof(int32_t)) &&
	       !memcmp(a->indices, b->indices, (size_t)a->nnz * sizeof(int32_t)) &&
	       !memcmp(a->data, b->data, (size_t)a->nnz * sizeof(float));
}

/* The same n-gram: vocabulary, sizes and every probability and backoff. */
static int same_ngram(const llr_ngram *a, const llr_ngram *b)
{
	int n = llr_ngram_order(a);
	if (n != llr_ngram_order(b) || llr_ngram_vocab_size(a) != llr_ngram_vocab_size(b))
		return 0;
	for (int32_t w = 0; w < llr_ngram_vocab_size(a); w++)
		if (strcmp(llr_ngram_token(a, w), llr_ngram_token(b, w)))
			return 0;
	for (int k = 1; k <= n; k++) {
		llr_ngram_level la, lb;
		llr_ngram_level_get(a, k, &la);
		llr_ngram_level_get(b, k, &lb);
		size_t c = (size_t)la.count;
		if (la.count != lb.count || memcmp(la.logp, lb.logp, c * sizeof(float)) ||
		    (la.word && memcmp(la.word, lb.word, c * sizeof(int32_t))) ||
		    (la.backoff && memcmp(la.backoff, lb.backoff, c * sizeof(float))))
			return 0;
	}
	return 1;
}

/* The same automaton: states, start, arcs, defaults, final weights; or
 * the same grammar text. */
static int same_fsa(const llr_fsa *a, const llr_fsa *b)
{
	size_t na, nb;
	const char *ga = llr_fsa_grammar_source(a, &na), *gb = llr_fsa_grammar_source(b, &nb);
	if (ga || gb)
		return ga && gb && na == nb && !memcmp(ga, gb, na);
	if (llr_fsa_states(a) != llr_fsa_states(b) || llr_fsa_start(a) != llr_fsa_start(b))
		return 0;
	for (int32_t q = 0; q < llr_fsa_states(a); q++) {
		const int32_t *la, *lb, *da, *db;
		const float *wa, *wb;
		float fa, fb;
		int32_t na = llr_fsa_arcs(a, q, &la, &da, &wa), nb = llr_fsa_arcs(b, q, &lb, &db, &wb);
		if (na != nb || llr_fsa_default(a, q, &fa) != llr_fsa_default(b, q, &fb) || fa != fb ||
		    llr_fsa_final(a, q) != llr_fsa_final(b, q))
			return 0;
		if (na && (memcmp(la, lb, (size_t)na * sizeof *la) || memcmp(da, db, (size_t)na * sizeof *da) ||
		           memcmp(wa, wb, (size_t)na * sizeof *wa)))
			return 0;
	}
	return 1;
}

int llr_lexicon_same(const llr_lexicon *y, const llr_lexicon *x, const char *yname, const char *xname, llr_err *err)
{
	int rc;
	if ((rc = same_strmap(y->vocab, x->vocab, "vocabularies", yname, xname, err)) < 0)
		return rc;
	if ((rc = same_strmap(y->features, x->features, "output features", yname, xname, err)) < 0)
		return rc;
	if (!y->features_in != !x->features_in)
		return llr_err_set(err, LLR_EFORMAT, "input features differ (psi %s in %s, %s in %s)", y->features_in ? "own" : "same", yname, x->features_in ? "own" : "same", xname);
	if (y->features_in && (rc = same_strmap(y->features_in, x->features_in, "input features", yname, xname, err)) < 0)
		return rc;
	if (!same_csr(y->phi, x->phi))
		return llr_err_set(err, LLR_EFORMAT, "phi differs");
	if (!same_csr(y->psi, x->psi))
		return llr_err_set(err, LLR_EFORMAT, "psi differs");
	size_t V = llr_strmap_size(x->vocab);
	if (memcmp(y->logb, x->logb, V * sizeof(float)))
		return llr_err_set(err, LLR_EFORMAT, "background differs");
	if (y->eos_id != x->eos_id || y->unk_id != x->unk_id)
		return llr_err_set(err, LLR_EFORMAT, "</s> or <unk> ids differ");
	if (!y->ngram != !x->ngram)
		return llr_err_set(err, LLR_EFORMAT, "background differs (an n-gram in %s only)", y->ngram ? yname : xname);
	if (y->ngram && !same_ngram(y->ngram, x->ngram))
		return llr_err_set(err, LLR_EFORMAT, "n-gram backgrounds differ");
	if (!y->fsa != !x->fsa)
		return llr_err_set(err, LLR_EFORMAT, "background differs (an automaton in %s only)", y->fsa ? yname : xname);
	if (y->fsa && !same_fsa(y->fsa, x->fsa))
		return llr_err_set(err, LLR_EFORMAT, "automaton backgrounds differ");
	return LLR_OK;
}
