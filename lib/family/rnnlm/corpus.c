/*
 * corpus.c - a language model's training corpus (llr_lm_corpus,
 * lib/llrnn.h) and its batches: sentences as pieces of at most max_len
 * predicted tokens, an epoch's order of them bucketed by length, and the
 * time-major batch of a list of pieces; and the ids/ chunks of a
 * featurize stream read into one.  The training job (train.c) uses them.
 */
#include "family/rnnlm/lmtrain.h"

#include <stdlib.h>

int llr_lm_corpus_push(llr_lm_corpus *c, const int32_t *x, size_t k)
{
	if (c->n + k > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		while (cap < c->n + k)
			cap *= 2;
		int32_t *p = llr_reallocarray(c->ids, cap, sizeof *p);
		if (!p)
			return LLR_ENOMEM;
		c->ids = p;
		c->cap = cap;
	}
	memcpy(c->ids + c->n, x, k * sizeof *x);
	c->n += k;
	return LLR_OK;
}

static int push_piece(llr_lm_corpus *c, int64_t sent, int32_t start, int32_t len)
{
	if (c->npieces == c->pcap) {
		size_t cap = c->pcap ? 2 * c->pcap : 1024;
		llr_lm_piece *p = llr_reallocarray(c->pieces, cap, sizeof *p);
		if (!p)
			return LLR_ENOMEM;
		c->pieces = p;
		c->pcap = cap;
	}
	c->pieces[c->npieces++] = (llr_lm_piece){sent, start, len};
	return LLR_OK;
}

int llr_lm_corpus_sentence(llr_lm_corpus *c, int64_t off, int32_t len, int max_len)
{
	if (len <= 1)
		return LLR_OK;
	c->sentences++;
	c->tokens += len;
	for (int32_t s = 0; s < len; s += max_len)
		if (push_piece(c, off, s, LLR_MIN(max_len, len - s)) < 0)
			return LLR_ENOMEM;
	return LLR_OK;
}

void llr_lm_corpus_free(llr_lm_corpus *c)
{
	free(c->ids);
	free(c->pieces);
	c->ids = NULL;
	c->pieces = NULL;
}

/* Does this rank keep sentence i (every size-th from its rank)? */
static int owns(const llr_train_comm *comm, int64_t i)
{
	return !comm || !comm->on || i % comm->size == comm->rank;
}

/* The ids of one chunk d[0..k) (member mn), sentence by sentence; *len
 * and *index carry the sentence that runs on into the next chunk. */
static int read_chunk(llr_lm_corpus *c, const char *name, const char *mn, const int32_t *d, size_t k, int32_t V, int32_t eos,
                      int max_len, const llr_train_comm *comm, int64_t *index, int64_t *len, int64_t *sent, llr_err *err)
{
	size_t seg = 0; /* the current sentence's first id in this chunk */
	for (size_t i = 0; i < k; i++) {
		if (d[i] < 0 || d[i] >= V)
			return llr_err_set(err, LLR_EFORMAT, "%s: %s: id %d out of range [0, %d)", name, mn, (int)d[i], (int)V);
		if (d[i] != eos)
			continue;
		int own = owns(comm, *index);
		if (own && llr_lm_corpus_push(c, d + seg, i + 1 - seg) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for the corpus");
		*len += (int64_t)(i + 1 - seg);
		if (*len > INT32_MAX)
			return llr_err_set(err, LLR_ERANGE, "%s: a sentence of more than %d tokens", name, INT32_MAX);
		if (llr_lm_corpus_sentence(c, own ? *sent : -1, (int32_t)*len, max_len) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for the corpus");
		c->held += own && *len > 1;
		*sent = (int64_t)c->n;
		*len = 0;
		++*index;
		seg = i + 1;
	}
	if (owns(comm, *index) && llr_lm_corpus_push(c, d + seg, k - seg) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the corpus");
	*len += (int64_t)(k - seg);
	return LLR_OK;
}

int llr_lm_corpus_read(llr_tensor_reader *r, const char *name, const llr_lexicon *x, int max_len, const llr_train_comm *comm,
                       llr_lm_corpus *c, llr_err *err)
{
	const char *mn;
	int rc;
	/* ids V + s: a word outside the vocabulary, of signature s
	 * (featurize --spelling) */
	int32_t V = (int32_t)llr_strmap_size(x->vocab) + (x->spell ? (int32_t)llr_lexicon_sigs(x) : 0);
	int64_t index = c->read;      /* of the current sentence in the streams */
	int64_t len = 0;              /* its ids read so far */
	int64_t sent = (int64_t)c->n; /* where it starts in c->ids */
	int nchunks = 0;
	while ((rc = llr_tr_next(r, &mn, err)) > 0) {
		if (strncmp(mn, "ids/", 4))
			return llr_err_set(err, LLR_EFORMAT, "%s: unexpected member '%s' where ids/ chunks were expected", name, mn);
		llr_tensor *t = NULL;
		int64_t shape[1] = {-1};
		if ((rc = llr_tr_tensor_expect(r, LLR_I32, 1, shape, &t, err)) < 0)
			return rc;
		rc = read_chunk(c, name, mn, t->data, llr_tensor_numel(t), V, x->eos_id, max_len, comm, &index, &len, &sent, err);
		llr_tensor_free(t);
		if (rc < 0)
			return rc;
		nchunks++;
	}
	if (rc < 0)
		return rc;
	if (!nchunks)
		return llr_err_set(err, LLR_EEMPTY, "%s: no ids/ members: empty corpus", name);
	if (len)
		return llr_err_set(err, LLR_ETRUNC, "%s: the last sentence has no </s> (truncated stream?)", name);
	c->read = index;
	if (!c->sentences)
		return llr_err_set(err, LLR_EEMPTY, "%s: empty corpus: no sentence with a word", name);
	return LLR_OK;
}

int lm_corpus_check_fsa(const llr_lm_corpus *c, const llr_lexicon *x, const char *name, int max_len, llr_err *err)
{
	for (size_t i = 0; i < c->npieces; i++)
		if (c->pieces[i].start > 0)
			return llr_err_set(err, LLR_ERANGE,
			                   "%s: a sentence of more than %d tokens: with an automaton background sentences are not cut, "
			                   "raise --max-len",
			                   name, max_len);
	for (size_t i = 0; i < c->npieces; i++) {
		const llr_lm_piece *p = &c->pieces[i];
		llr_err e = {0};
		int rc = p->sent >= 0 ? llr_fsa_check(x->fsa, x->vocab, c->ids + p->sent, (size_t)p->len - 1, &e) : LLR_OK;
		if (rc == LLR_EFORMAT)
			return llr_err_set(err, LLR_EFORMAT, "%s: sentence %zu: %s (featurize --skip-rejected leaves such sentences out)", name,
			                   i + 1, e.msg);
		if (rc < 0)
			return llr_err_set(err, rc, "%s: sentence %zu: %s", name, i + 1, e.msg);
	}
	return LLR_OK;
}

int lm_batcher_init(lm_batcher *b, int maxB, int maxT)
{
	b->maxB = maxB;
	b->maxT = maxT;
	size_t n = (size_t)maxB * (size_t)maxT;
	b->input = llr_malloc(n * sizeof(int32_t));
	b->target = llr_malloc(n * sizeof(int32_t));
	b->logp = llr_malloc(n * sizeof(float));
	return b->input && b->target && b->logp ? LLR_OK : LLR_ENOMEM;
}

void lm_batcher_free(lm_batcher *b)
{
	free(b->input);
	free(b->target);
	free(b->logp);
}

llr_batch lm_make_batch(lm_batcher *bb, const llr_lm_corpus *c, const llr_lm_piece *const *p, int B)
{
	int T = 0;
	for (int b = 0; b < B; b++)
		T = LLR_MAX(T, p[b]->len);
	LLR_ASSERT(B <= bb->maxB && T <= bb->maxT);
	for (int t = 0; t < T; t++) {
		for (int b = 0; b < B; b++) {
			size_t n = (size_t)t * B + b;
			const llr_lm_piece *q = p[b];
			if (t < q->len) {
				const int32_t *seq = c->ids + q->sent;
				int32_t pos = q->start + t;
				bb->input[n] = pos == 0 ? LLR_BOS_ID : seq[pos - 1];
				bb->target[n] = seq[pos];
			} else {
				bb->input[n] = LLR_BOS_ID;
				bb->target[n] = -1;
			}
		}
	}
	return (llr_batch){.B = B, .T = T, .input = bb->input, .target = bb->target, .psi = c->psi, .xphi = c->xphi, .xlogb = c->xlogb};
}

static uint32_t piece_key(const void *ctx, int32_t i)
{
	const llr_lm_corpus *c = ctx;
	return (uint32_t)c->pieces[i].len;
}

int lm_make_order(lm_order *o, const llr_lm_corpus *c, int B, llr_rng *rng)
{
	size_t n = c->npieces;
	if (!o->p) {
		o->p = llr_malloc(n * sizeof *o->p);
		o->first = llr_malloc((n / (size_t)B + 2) * sizeof *o->first);
		if (!o->p || !o->first)
			return LLR_ENOMEM;
	}
	int32_t *idx = llr_malloc((n ? n : 1) * sizeof *idx);
	int rc = idx ? llr_bucket_batches(n, B, rng, piece_key, c, idx, o->first, &o->nbatches) : LLR_ENOMEM;
	for (size_t i = 0; rc == LLR_OK && i < n; i++)
		o->p[i] = &c->pieces[idx[i]];
	free(idx);
	return rc;
}

void lm_order_free(lm_order *o)
{
	free(o->p);
	free(o->first);
}
