/*
 * open.c - open-vocabulary training of an LL-RNN (llr_lm_open,
 * lib/llrnn.h; train(1), "Open vocabulary"): the training inputs' rows
 * (the model's V, then one a signature), the context-free fit of a new
 * model's output bias, and validation read from text with every string
 * outside V' a row of its own, as score --open scores it.  The loss of a
 * word w outside V' is -ln(lambda M(s) e^{a.phi_s} / Z), s its
 * signature, the constant ln q(w) - ln M(s) aside (llr_net_set_open):
 * the score of w by score --open up to that constant.  Its input is the
 * signature's row when psi is phi (the word's own row, as score gives an
 * unseen input), else <unk>'s.
 */
#include "family/family.h"

#include <stdlib.h>

/* Adam steps of the output bias fit (llr_open_fit_bias). */
#define FIT_ITERS 300

struct llr_lm_open {
	llr_open *op;
	llr_rnnlm *m;
	int32_t V, S;
	llr_csr *psi; /* the training inputs' rows: V, then one a signature */
	/* validation: the targets outside V' (vb: their rows and ln b) and
	 * the inputs (V rows, then one a string outside V') */
	llr_open_batch *vb;
	llr_csr_builder *vin;
	llr_csr *vpsi;
	llr_row r; /* a scratch row */
};

/* m's psi (phi when it has none of its own). */
static const llr_csr *base_psi(const llr_rnnlm *m)
{
	return m->lex->psi ? m->lex->psi : m->lex->phi;
}

static int put_row(llr_csr_builder *b, const llr_csr *m, int32_t r, llr_err *err)
{
	int32_t a = m->indptr[r];
	return llr_csr_builder_row(b, m->indices + a, m->data + a, (size_t)(m->indptr[r + 1] - a), err);
}

/* A builder holding m's V input rows (NULL, err set, on failure). */
static llr_csr_builder *with_base(const llr_rnnlm *m, llr_err *err)
{
	const llr_csr *p = base_psi(m);
	llr_csr_builder *b = llr_csr_builder_new(p->cols);
	if (!b) {
		llr_err_set(err, LLR_ENOMEM, "open vocabulary: out of memory");
		return NULL;
	}
	for (int32_t v = 0; v < p->rows; v++)
		if (put_row(b, p, v, err) < 0) {
			llr_csr_builder_free(b);
			return NULL;
		}
	return b;
}

/* t's open scoring and training inputs. */
static int open_init(llr_lm_open *t, llr_err *err)
{
	const llr_lexicon *x = t->m->lex;
	if (!(t->op = llr_open_new(t->m, err)))
		return llr_err_prefix(err, "open vocabulary");
	if (!(t->vb = llr_open_batch_new(t->op, err)))
		return llr_err_code(err, LLR_ENOMEM);
	t->V = (int32_t)llr_strmap_size(x->vocab);
	t->S = (int32_t)llr_lexicon_sigs(x);
	llr_csr_builder *b = with_base(t->m, err);
	if (!b)
		return llr_err_code(err, LLR_ENOMEM);
	int rc = LLR_OK;
	for (int32_t s = 0; rc == LLR_OK && s < t->S; s++)
		rc = put_row(b, x->psi ? x->psi : llr_lexicon_sig_phi(x), x->psi ? x->unk_id : s, err);
	if (rc == LLR_OK && !(t->psi = llr_csr_builder_finish(b, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	if (rc < 0)
		llr_csr_builder_free(b);
	return rc;
}

int llr_lm_open_new(llr_rnnlm *m, llr_lm_corpus *tc, int closed, llr_lm_open **out, int64_t *outside, llr_err *err)
{
	*out = NULL;
	const llr_lexicon *x = m->lex;
	const llr_net_config *cf = llr_net_cfg(m->net);
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	*outside = 0;
	for (size_t i = 0; i < tc->n; i++)
		*outside += tc->ids[i] >= V;
	if (!closed && cf->output == LLR_OUT_LOGLINEAR && cf->input == LLR_IN_WORD && x->spell && llr_lexicon_sigs(x)) {
		llr_lm_open *t = llr_calloc(1, sizeof *t);
		if (!t)
			return llr_err_set(err, LLR_ENOMEM, "open vocabulary: out of memory");
		t->m = m;
		int rc = open_init(t, err);
		if (rc == LLR_OK && llr_meta_setf(m->meta, "open_training", "%d signatures", t->S) < 0)
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (rc < 0) {
			llr_lm_open_free(t);
			return rc;
		}
		tc->psi = t->psi;
		*out = t;
		return LLR_OK;
	}
	if (!*outside)
		return LLR_OK;
	if (x->unk_id < 0)
		return llr_err_set(err, LLR_EFORMAT, "the stream has words outside the vocabulary and the vocabulary has no <unk>");
	for (size_t i = 0; i < tc->n; i++)
		if (tc->ids[i] >= V)
			tc->ids[i] = x->unk_id;
	return LLR_OK;
}

int32_t llr_lm_open_sigs(const llr_lm_open *t)
{
	return t->S;
}

/* Meta open_bias_fit: the fitted weights of the features that set the
 * strings outside the vocabulary apart, those the model has. */
static int fit_meta(llr_rnnlm *m)
{
	static const char *const named[] = {LLR_FEAT_HS_KNOWN, LLR_FEAT_OOV, LLR_FEAT_OOV_HS_KNOWN};
	const llr_strmap *names = m->lex->features;
	const float *b = llr_net_tensor(m->net, "out/b", NULL);
	llr_buf line = {0};
	int rc = 0;
	for (size_t k = 0; b && k < sizeof named / sizeof *named; k++) {
		int32_t f = llr_strmap_get(names, named[k], strlen(named[k]));
		if (f >= 0)
			rc |= llr_buf_printf(&line, "%s%s=%.4f", line.len ? " " : "", named[k], (double)b[f]);
	}
	if (rc >= 0 && line.len)
		rc = llr_meta_set(m->meta, "open_bias_fit", line.data);
	llr_buf_free(&line);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

int llr_lm_open_fit_bias(llr_lm_open *t, const int32_t *ids, size_t n, const llr_train_comm *comm, llr_fit_report *rep,
                         llr_err *err)
{
	size_t R = (size_t)t->V + (size_t)t->S;
	int64_t *count = llr_calloc(R, sizeof *count);
	if (!count)
		return llr_err_set(err, LLR_ENOMEM, "open vocabulary: out of memory");
	for (size_t i = 0; i < n; i++)
		if (ids[i] >= 0 && (size_t)ids[i] < R)
			count[ids[i]]++;
	llr_comm_sum_i64(comm, count, R);
	llr_fit_opts fo = {.iters = FIT_ITERS, .rate = 0.05, .l2 = 1e-4};
	int rc = llr_open_fit_bias(t->op, count, &fo, rep, err);
	free(count);
	if (rc < 0)
		return llr_err_prefix(err, "open vocabulary");
	if (llr_meta_setf(t->m->meta, "open_bias_init", "fit: %d Adam steps, mean log-likelihood %.6f -> %.6f over %.0f targets", fo.iters,
	                  rep->before, rep->after, rep->targets) < 0 ||
	    fit_meta(t->m) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

/* A validation word's target: its id in V', or V + i for the i-th string
 * outside V' (its rows added); a negative code on error. */
static int32_t valid_target(llr_lm_open *t, const char *w, size_t len, llr_err *err)
{
	int oov;
	int32_t id = llr_open_batch_target(t->vb, w, len, &oov, err);
	if (id < 0 || !oov)
		return id;
	if (!t->vin && !(t->vin = with_base(t->m, err)))
		return llr_err_code(err, LLR_ENOMEM);
	size_t n;
	int rc = llr_row_fill(&t->r, t->m->lex, w, len, 1, 1, &n, err);
	if (rc < 0 || (rc = llr_csr_builder_row(t->vin, t->r.cols, t->r.vals, n, err)) < 0)
		return rc;
	return id;
}

/* Validation's rows, once every sentence is read, into c. */
static int valid_finish(llr_lm_open *t, llr_lm_corpus *c, llr_err *err)
{
	if (!t || !t->vin)
		return LLR_OK;
	t->vpsi = llr_csr_builder_finish(t->vin, err);
	t->vin = NULL;
	if (!t->vpsi)
		return llr_err_code(err, LLR_ENOMEM);
	int rc = llr_open_batch_finish(t->vb, &c->xphi, &c->xlogb, err);
	c->psi = t->vpsi;
	return rc;
}

/* One validation line's ids into *buf (</s> last; *n of them, 0 for an
 * empty line); 1 when it has a word outside the vocabulary and m no <unk>
 * (skip it), 0 to keep it, or a negative code. */
static int valid_line(const char *line, size_t len, const llr_rnnlm *m, llr_lm_open *t, llr_lm_corpus *c, int32_t **buf,
                      size_t *cap, size_t *n, llr_err *err)
{
	const llr_lexicon *x = m->lex;
	size_t pos = 0, tl;
	const char *tok;
	*n = 0;
	while (llr_token_next(line, len, &pos, &tok, &tl)) {
		int32_t id = t ? valid_target(t, tok, tl, err) : llr_strmap_get(x->vocab, tok, tl);
		if (t && id < 0)
			return id;
		if (id < 0 && x->unk_id < 0)
			return 1;
		if (id < 0)
			id = x->unk_id;
		else if (id != x->unk_id && id != x->eos_id && (!t || id < t->V))
			c->known++;
		if (*n + 1 >= *cap) {
			size_t nc = *cap ? 2 * *cap : 256;
			int32_t *p = llr_reallocarray(*buf, nc, sizeof *p);
			if (!p)
				return llr_err_set(err, LLR_ENOMEM, "out of memory for the validation set");
			*buf = p;
			*cap = nc;
		}
		(*buf)[(*n)++] = id;
	}
	if (*n)
		(*buf)[(*n)++] = x->eos_id;
	return 0;
}

int llr_lm_corpus_read_text(const char *path, const llr_rnnlm *m, llr_lm_open *t, int max_len, llr_lm_corpus *c,
                            int64_t *skipped, llr_err *err)
{
	*skipped = 0;
	llr_lines *l = llr_lines_open(path, 0, err);
	if (!l)
		return llr_err_code(err, LLR_EIO);
	const char *line;
	size_t len, cap = 0, n;
	int32_t *buf = NULL;
	int rc;
	while ((rc = llr_lines_next(l, &line, &len, err)) > 0) {
		if ((rc = valid_line(line, len, m, t, c, &buf, &cap, &n, err)) < 0)
			break;
		*skipped += rc;
		if (rc || !n)
			continue;
		llr_err e = {0};
		if (m->lex->fsa && (rc = llr_fsa_check(m->lex->fsa, m->lex->vocab, buf, n - 1, &e)) < 0) {
			rc = llr_err_set(err, rc, "%s:%zu: %s%s", llr_lines_name(l), llr_lines_lineno(l), e.msg,
			                 rc == LLR_EFORMAT ? " (a validation sentence must be in the language)" : "");
			break;
		}
		int64_t off = (int64_t)c->n;
		if (llr_lm_corpus_push(c, buf, n) < 0 || llr_lm_corpus_sentence(c, off, (int32_t)n, max_len) < 0) {
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory for the corpus");
			break;
		}
	}
	free(buf);
	const char *name = llr_lines_name(l);
	if (rc == 0 && !c->sentences)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no validation sentence", name);
	else if (rc == 0 && !c->known)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: no known word in the validation set (wrong vocabulary or language?)", name);
	llr_lines_close(l);
	return rc < 0 ? rc : valid_finish(t, c, err);
}

void llr_lm_open_free(llr_lm_open *t)
{
	if (!t)
		return;
	llr_open_batch_free(t->vb);
	llr_csr_builder_free(t->vin);
	llr_csr_free(t->psi);
	llr_csr_free(t->vpsi);
	llr_row_free(&t->r);
	llr_open_free(t->op);
	free(t);
}
