/*
 * gen - sentences from an llrnn model (gen(1)): ancestral sampling with
 * temperature, top-k and top-p, greedy decoding, or beam search with
 * length normalisation; optional prefixes, log-probabilities and the
 * features of every token.  The network runs step by step through the
 * library (llr_net_step) and draws go through llr_sample; this file holds
 * only the decoding loops and the output layouts.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "gen_encdec.h"
#include "gen_lm.h"
#include "gen_ngram.h"
#include "gen_open.h"
#include "tokcheck.h"

static const char usage[] =
    "usage: gen [-hqv] -m MODEL [-o FILE] [-n N] [-s SEED] [-p TOKENS | --prefix-file FILE]\n"
    "           [--max-len N] [--temperature T] [--top-k K] [--top-p P] [--greedy]\n"
    "           [--beam K] [--nbest K] [--no-unk] [--logprob] [--show-features]\n"
    "           [--threads N] [--closed] [--spell-tries N] [--strict]\n"
    "       gen --version\n";

static const char help[] =
    "Encoder-decoder models (the operands are sources):\n"
    "  --len-norm A             rank hypotheses by log p / length^A (default 1)\n"
    "  --nbest N                write the N best hypotheses with their rank and score\n"
    "  --logprob                add each hypothesis' log-probability\n"
    "  --show-attention         write the attention weights after each line\n"
    "\n"
    "Options:\n"
    "  -m, --model MODEL        the model (required; repeat for an encoder-decoder ensemble)\n"
    "  -o, --output FILE        write to FILE (atomically; .gz .bz2 .xz .zst compress)\n"
    "  -n, --count N            sampled sentences per prefix (default 1)\n"
    "  -s, --seed SEED          seed of the random generator (default 1)\n"
    "  -p, --prefix TOKENS      continue TOKENS\n"
    "  --prefix-file FILE       continue every line of FILE\n"
    "  --max-len N              at most N generated words a sentence (default 100)\n"
    "  --temperature T          divide log-probabilities by T before drawing (default 1)\n"
    "  --top-k K                draw among the K most probable words (default 0: all)\n"
    "  --top-p P                draw among the fewest words of mass P (default 1: all)\n"
    "  --greedy                 the most probable word at every step\n"
    "  --beam K                 beam search with K beams\n"
    "  --nbest K                print the K best sentences of the beam (default 1)\n"
    "  --no-unk                 never produce <unk> nor an unseen word\n"
    "  --logprob                add each sentence's log-probability\n"
    "  --show-features          one token a line with its features\n"
    "  --threads N              OpenBLAS threads (default 1; 0 one per core)\n"
    "  --closed                 no unseen words from a model with a spelling model\n"
    "  --spell-tries N          draws an unseen word's spelling may take (default 100000)\n"
    "  --strict                 a prefix tokenised otherwise than the training text is an error\n"
    "  -q, --quiet              no progress line\n"
    "  -v, --verbose            notes on stderr\n"
    "  -h, --help               print this help and exit\n"
    "  --version                print the version and exit\n";

#define GROUP 32 /* sampled sentences decoded side by side */

enum {
	OPT_PREFIX_FILE = 256,
	OPT_MAX_LEN,
	OPT_TEMPERATURE,
	OPT_TOP_K,
	OPT_TOP_P,
	OPT_GREEDY,
	OPT_BEAM,
	OPT_NBEST,
	OPT_NO_UNK,
	OPT_LOGPROB,
	OPT_SHOW_FEATURES,
	OPT_THREADS,
	OPT_CLOSED,
	OPT_SPELL_TRIES,
	OPT_STRICT,
};

static const struct option longopts[] = {
    {"model", required_argument, NULL, 'm'},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"output", required_argument, NULL, 'o'},
    {"count", required_argument, NULL, 'n'},
    {"seed", required_argument, NULL, 's'},
    {"prefix", required_argument, NULL, 'p'},
    {"prefix-file", required_argument, NULL, OPT_PREFIX_FILE},
    {"max-len", required_argument, NULL, OPT_MAX_LEN},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"top-k", required_argument, NULL, OPT_TOP_K},
    {"top-p", required_argument, NULL, OPT_TOP_P},
    {"greedy", no_argument, NULL, OPT_GREEDY},
    {"beam", required_argument, NULL, OPT_BEAM},
    {"nbest", required_argument, NULL, OPT_NBEST},
    {"no-unk", no_argument, NULL, OPT_NO_UNK},
    {"logprob", no_argument, NULL, OPT_LOGPROB},
    {"show-features", no_argument, NULL, OPT_SHOW_FEATURES},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"closed", no_argument, NULL, OPT_CLOSED},
    {"spell-tries", required_argument, NULL, OPT_SPELL_TRIES},
    {"strict", no_argument, NULL, OPT_STRICT},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

/* A sentence being generated: ids and per-token log p after the prefix;
 * a string outside the vocabulary has id -1 - (its offset in oov), and
 * sig its signature (-1: a spelled <unk>). */
typedef struct hyp {
	int32_t *ids, *sig;
	llr_buf oov;
	float *lps;
	size_t n, cap;
	double lp; /* log p of prefix + generated tokens (+ </s> if ended) */
	int ended; /* </s> generated */
	int done;
	float eos_lp;
	llr_rng rng;
} hyp;

/* The prefix of the sentences: its words as given, and how the model
 * sees them. */
typedef struct prefix {
	llr_buf text;
	size_t n, cap;
	size_t *off;
	int32_t *vid, *in, *tgt;
	float *lps;
	double lp;
} prefix;

/* Everything one run of gen keeps: options, the model, the sampler and
 * the network states and rows of the decoding loops. */
typedef struct generator {
	struct {
		long long n;
		int n_given;
		int max_len;
		int beam, nbest;
		int no_unk, logprob, show_features;
		llr_sample_opts so;
		const char *model, *output, *prefix_text, *prefix_file;
		unsigned long long seed;
		int threads;
		int verbose, quiet;
		int closed;
		long long spell_tries;
		int strict; /* --strict: a prefix unlike the model's text fails (tokcheck.c) */
	} opt;
	slm lm;
	genopen go;
	int32_t W;    /* entries of a row: V, or V + S signatures (open LL-RNN) */
	llr_buf word; /* a drawn unseen word */
	llr_sampler *sampler;
	llr_rng master;
	llr_net_state *st1, *stA, *stB;
	float *row1, *rows;
	int32_t *inputs;
	int nstreams; /* streams of stA and stB */
	llr_buf outb;
	cli_output out;
	cli_progress prog;
	long long sentences, tokens; /* written so far */
	long long want;              /* sentences in all, -1 when not known */
	tokcheck tc;
} generator;

static void hyp_push(hyp *h, int32_t id, float lp, int32_t sig)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 32;
		h->ids = ereallocarray(h->ids, cap, sizeof *h->ids);
		h->sig = ereallocarray(h->sig, cap, sizeof *h->sig);
		h->lps = ereallocarray(h->lps, cap, sizeof *h->lps);
		h->cap = cap;
	}
	h->ids[h->n] = id;
	h->sig[h->n] = sig;
	h->lps[h->n] = lp;
	h->n++;
	h->lp += lp;
}

/* An unseen word w of signature sig (-1: none). */
static int32_t hyp_push_word(hyp *h, const llr_buf *w, float lp, int32_t sig)
{
	if (h->oov.len > INT32_MAX / 2)
		cli_die("generated words too long");
	int32_t id = -1 - (int32_t)h->oov.len;
	if (llr_buf_append(&h->oov, w->data ? w->data : "", w->len) || llr_buf_putc(&h->oov, '\0'))
		cli_oom();
	hyp_push(h, id, lp, sig);
	return id;
}

static void hyp_clear(hyp *h)
{
	h->n = 0;
	llr_buf_clear(&h->oov);
}

static void hyp_copy(hyp *dst, const hyp *src)
{
	dst->n = 0;
	llr_buf_clear(&dst->oov);
	if (src->oov.len && llr_buf_append(&dst->oov, src->oov.data, src->oov.len))
		cli_oom();
	for (size_t i = 0; i < src->n; i++)
		hyp_push(dst, src->ids[i], src->lps[i], src->sig[i]);
	dst->lp = src->lp;
	dst->ended = src->ended;
	dst->done = src->done;
	dst->eos_lp = src->eos_lp;
}

static void hyp_free(hyp *h)
{
	free(h->ids);
	free(h->sig);
	llr_buf_free(&h->oov);
	free(h->lps);
}

static void step(generator *g, llr_net_state *s, const int32_t *in, float *logp)
{
	llr_err err = {0};
	if (llr_net_step(g->lm.net, s, in, slm_psi(&g->lm), logp, &err) != LLR_OK)
		cli_die_err(&err);
}

static void set_prefix(generator *g, prefix *p, const char *line, size_t len)
{
	llr_buf_clear(&p->text);
	if (llr_buf_append(&p->text, line, len) || llr_buf_putc(&p->text, '\0'))
		cli_oom();
	char *s = p->text.data;
	p->n = 0;
	size_t pos = 0, tl;
	const char *tok;
	while (llr_token_next(s, len, &pos, &tok, &tl)) {
		if (p->n == p->cap) {
			p->cap = p->cap ? p->cap * 2 : 16;
			p->off = ereallocarray(p->off, p->cap, sizeof *p->off);
			p->vid = ereallocarray(p->vid, p->cap, sizeof *p->vid);
			p->in = ereallocarray(p->in, p->cap, sizeof *p->in);
			p->tgt = ereallocarray(p->tgt, p->cap, sizeof *p->tgt);
			p->lps = ereallocarray(p->lps, p->cap, sizeof *p->lps);
		}
		p->off[p->n++] = (size_t)(tok - s);
		s[pos] = '\0'; /* it was a separator, or the end */
		pos += pos < len;
	}
	slm_input_reset(&g->lm);
	for (size_t k = 0; k < p->n; k++) {
		const char *w = s + p->off[k];
		size_t wl = strlen(w);
		int oov;
		p->vid[k] = slm_word(&g->lm, w, wl);
		p->tgt[k] = slm_target(&g->lm, w, wl, &oov);
		p->in[k] = slm_input(&g->lm, w, wl, p->vid[k]);
	}
}

/* Feed <s> and the prefix through st1 (one stream), scoring each prefix
 * word; row1 then holds log p of the first word to generate. */
static void run_prefix(generator *g, prefix *p)
{
	llr_net_state_reset(g->st1);
	int32_t in = LLR_BOS_ID;
	step(g, g->st1, &in, g->row1);
	for (size_t k = 0; k < p->n; k++) {
		p->lps[k] = g->row1[p->tgt[k]];
		in = p->in[k];
		step(g, g->st1, &in, g->row1);
	}
	if (g->go.mode != GOPEN_CLOSED && p->n) { /* the unseen words by their spelling */
		char **ws = ereallocarray(NULL, p->n, sizeof *ws);
		for (size_t k = 0; k < p->n; k++)
			ws[k] = p->text.data + p->off[k];
		genopen_prefix(&g->go, &g->lm, ws, p->n, p->in, p->lps);
		free(ws);
	}
	p->lp = 0;
	for (size_t k = 0; k < p->n; k++)
		p->lp += p->lps[k];
}

static const char *prefix_word(const prefix *p, size_t k)
{
	return p->text.data + p->off[k];
}

static void put_lp(llr_buf *o, double v)
{
	if (llr_buf_printf(o, isfinite(v) ? "%.4f" : "%.0f", v) < 0)
		cli_oom();
}

/* Token k of h: a vocabulary word or an unseen one. */
static const char *hyp_word(const generator *g, const hyp *h, size_t k, size_t *len)
{
	int32_t id = h->ids[k];
	if (id < 0) {
		const char *w = h->oov.data + (-1 - (int64_t)id);
		*len = strlen(w);
		return w;
	}
	*len = llr_strmap_len(g->lm.lex->vocab, id);
	return llr_strmap_str(g->lm.lex->vocab, id);
}

static void emit(generator *g, const prefix *p, const hyp *h)
{
	llr_buf *o = &g->outb;
	llr_buf_clear(o);
	if (!g->opt.show_features) {
		for (size_t k = 0; k < p->n; k++)
			if ((k && llr_buf_putc(o, ' ')) || llr_buf_append(o, prefix_word(p, k), strlen(prefix_word(p, k))))
				cli_oom();
		for (size_t k = 0; k < h->n; k++) {
			size_t wl;
			const char *w = hyp_word(g, h, k, &wl);
			if (((p->n || k) && llr_buf_putc(o, ' ')) || llr_buf_append(o, w, wl))
				cli_oom();
		}
		if (g->opt.logprob) {
			if (llr_buf_putc(o, '\t'))
				cli_oom();
			put_lp(o, h->lp);
		}
		if (llr_buf_putc(o, '\n'))
			cli_oom();
	} else {
		size_t total = p->n + h->n + (g->opt.logprob && h->ended);
		for (size_t k = 0; k < total; k++) {
			const char *w;
			size_t wl;
			int32_t vid, sig = -1; /* vid -2: </s> */
			float lp;
			if (k < p->n) {
				w = prefix_word(p, k);
				wl = strlen(w);
				vid = p->vid[k];
				lp = p->lps[k];
			} else if (k < p->n + h->n) {
				vid = h->ids[k - p->n] >= 0 ? h->ids[k - p->n] : -1;
				sig = h->ids[k - p->n] >= 0 ? -1 : h->sig[k - p->n];
				w = hyp_word(g, h, k - p->n, &wl);
				lp = h->lps[k - p->n];
			} else {
				w = LLR_EOS;
				wl = strlen(w);
				vid = -2;
				lp = h->eos_lp;
			}
			if (llr_buf_append(o, w, wl) || llr_buf_putc(o, '\t'))
				cli_oom();
			if (g->opt.logprob) {
				put_lp(o, lp);
				if (llr_buf_putc(o, '\t'))
					cli_oom();
			}
			if (sig >= 0) /* a drawn unseen word: its signature's row */
				genopen_sig_features(&g->go, &g->lm, sig, o);
			else if (vid != -2)
				slm_features(&g->lm, w, wl, vid, o);
			if (llr_buf_putc(o, '\n'))
				cli_oom();
		}
		if (llr_buf_putc(o, '\n'))
			cli_oom();
	}
	fwrite(o->data, 1, o->len, g->out.fp);
	g->sentences++;
	g->tokens += (long long)h->n + h->ended;
	if (cli_progress_due(&g->prog))
		cli_progress_show(&g->prog, g->sentences, "sentences", g->tokens, "tok",
		                  g->want > 0 ? (double)g->sentences / (double)g->want : cli_progress_fraction(&g->prog));
}

/* After the token just chosen, does hypothesis h stop? */
static void advance(generator *g, hyp *h, int32_t id, float lp)
{
	if (id == g->lm.eos_id) {
		h->lp += lp;
		h->eos_lp = lp;
		h->ended = h->done = 1;
		return;
	}
	hyp_push(h, id, lp, -1);
	if ((int)h->n >= g->opt.max_len)
		h->done = 1;
}

/* --no-unk: neither <unk> nor an unseen word. */
static void mask_row(generator *g, float *row)
{
	if (g->opt.no_unk && g->lm.unk_id >= 0 && g->lm.unk_id != g->lm.eos_id)
		row[g->lm.unk_id] = -INFINITY;
	if (g->opt.no_unk)
		genopen_mask(&g->go, row);
}

/* Draw hypothesis h's next token from row; the next input id, or
 * LLR_BOS_ID when h is done. */
static int32_t sample_next(generator *g, hyp *h, float *row)
{
	float lp_unk = g->lm.unk_id >= 0 ? row[g->lm.unk_id] : 0, lp;
	int32_t sig;
	mask_row(g, row);
	int32_t id = genopen_pick(&g->go, g->sampler, &g->opt.so, row, lp_unk, &h->rng, &g->word, &lp, &sig);
	if (id >= 0) {
		advance(g, h, id, lp);
		return h->done ? LLR_BOS_ID : id;
	}
	hyp_push_word(h, &g->word, lp, sig);
	if ((int)h->n >= g->opt.max_len)
		h->done = 1;
	return h->done ? LLR_BOS_ID : slm_input(&g->lm, g->word.data ? g->word.data : "", g->word.len, -1);
}

/* Sampling and greedy decoding: count sentences after prefix p, up to
 * GROUP streams at a time, each with its own generator drawn from the
 * master one (so sentence i does not depend on how many are asked). */
static void decode_sample(generator *g, prefix *p, long long count)
{
	const int32_t W = g->W;
	hyp hs[GROUP];
	memset(hs, 0, sizeof hs);
	run_prefix(g, p);
	while (count > 0) {
		int G = (int)MIN(count, GROUP);
		count -= G;
		slm_input_reset(&g->lm); /* the prefix is in st1; rows of unseen words from here */
		for (int b = 0; b < G; b++) {
			hyp_clear(&hs[b]);
			hs[b].lp = p->lp;
			hs[b].ended = hs[b].done = 0;
			llr_rng_seed(&hs[b].rng, llr_rng_u64(&g->master));
			llr_net_state_copy(g->stA, b, g->st1, 0);
			memcpy(g->rows + (size_t)b * W, g->row1, (size_t)W * sizeof *g->rows);
		}
		for (int b = G; b < g->nstreams; b++)
			llr_net_state_copy(g->stA, b, g->st1, 0);
		for (;;) {
			int live = 0;
			for (int b = 0; b < G; b++) {
				g->inputs[b] = LLR_BOS_ID;
				if (hs[b].done)
					continue;
				g->inputs[b] = sample_next(g, &hs[b], g->rows + (size_t)b * W);
				live += !hs[b].done;
			}
			if (!live)
				break;
			for (int b = G; b < g->nstreams; b++)
				g->inputs[b] = LLR_BOS_ID;
			step(g, g->stA, g->inputs, g->rows);
		}
		for (int b = 0; b < G; b++)
			emit(g, p, &hs[b]);
	}
	for (int b = 0; b < GROUP; b++)
		hyp_free(&hs[b]);
}

typedef struct cand {
	double score;
	int beam;
	int32_t id;
	float lp;
} cand;

static int cmp_cand(const void *pa, const void *pb)
{
	const cand *a = pa, *b = pb;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->beam != b->beam)
		return a->beam < b->beam ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static double norm_score(const hyp *h, double prefix_lp)
{
	size_t len = h->n + (size_t)h->ended;
	return len ? (h->lp - prefix_lp) / (double)len : 0;
}

/* Beam search with K beams: each step keeps the K best continuations by
 * total log p; a hypothesis ending in </s> among the K best is finished;
 * the search stops when K are finished or at --max-len, and the finished
 * ones are ranked by log p / length (generated tokens, </s> included). */
static void decode_beam(generator *g, prefix *p)
{
	const int K = g->opt.beam;
	const int32_t V = g->lm.V, W = g->W;
	hyp *live = ecalloc((size_t)K, sizeof *live), *next = ecalloc((size_t)K, sizeof *next);
	hyp *fin = ecalloc((size_t)K * 2, sizeof *fin);
	cand *cs = ereallocarray(NULL, (size_t)K * 2 * (size_t)K, sizeof *cs);
	int32_t *top = ereallocarray(NULL, (size_t)K * 2, sizeof *top);
	int *order = ereallocarray(NULL, (size_t)K * 2, sizeof *order);
	int nlive = 1, nfin = 0;
	run_prefix(g, p);
	for (int b = 0; b < g->nstreams; b++)
		llr_net_state_copy(g->stA, b, g->st1, 0);
	memcpy(g->rows, g->row1, (size_t)W * sizeof *g->rows);
	live[0].n = 0;
	live[0].lp = p->lp;
	live[0].ended = live[0].done = 0;
	for (int len = 0; nlive > 0; len++) {
		int nc = 0;
		for (int b = 0; b < nlive; b++) {
			float *row = g->rows + (size_t)b * W;
			mask_row(g, row);
			genopen_mask(&g->go, row);                 /* a spelled <unk> is not one word */
			int32_t m = llr_top_k(row, V, 2 * K, top); /* the words only */
			if (m < 0)
				cli_oom();
			for (int32_t j = 0; j < m; j++)
				if (isfinite(row[top[j]]))
					cs[nc++] = (cand){live[b].lp + row[top[j]], b, top[j], row[top[j]]};
		}
		if (nc == 0)
			cli_die("the model gives no finite log-probability to any word");
		qsort(cs, (size_t)nc, sizeof *cs, cmp_cand);
		int nnext = 0;
		for (int c = 0; c < nc && nnext < K; c++) {
			if (cs[c].id == g->lm.eos_id) {
				if (c < K && nfin < K) {
					hyp_copy(&fin[nfin], &live[cs[c].beam]);
					advance(g, &fin[nfin], cs[c].id, cs[c].lp);
					nfin++;
				}
				continue;
			}
			hyp_copy(&next[nnext], &live[cs[c].beam]);
			advance(g, &next[nnext], cs[c].id, cs[c].lp);
			llr_net_state_copy(g->stB, nnext, g->stA, cs[c].beam);
			g->inputs[nnext] = cs[c].id;
			nnext++;
		}
		hyp *t = live;
		live = next;
		next = t;
		llr_net_state *ts = g->stA;
		g->stA = g->stB;
		g->stB = ts;
		nlive = nnext;
		if (nfin >= K)
			break;
		if (len + 1 >= g->opt.max_len) {
			/* Out of length: the live ones end here, without </s>. */
			for (int b = 0; b < nlive && nfin < 2 * K; b++)
				hyp_copy(&fin[nfin++], &live[b]);
			break;
		}
		for (int b = nlive; b < g->nstreams; b++)
			g->inputs[b] = LLR_BOS_ID;
		step(g, g->stA, g->inputs, g->rows);
	}
	for (int i = 0; i < nfin; i++)
		order[i] = i;
	/* Stable insertion sort by normalised score, best first. */
	for (int i = 1; i < nfin; i++) {
		int v = order[i], j = i;
		double sv = norm_score(&fin[v], p->lp);
		while (j > 0 && norm_score(&fin[order[j - 1]], p->lp) < sv) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	for (int i = 0; i < nfin && i < g->opt.nbest; i++)
		emit(g, p, &fin[order[i]]);
	for (int b = 0; b < K; b++) {
		hyp_free(&live[b]);
		hyp_free(&next[b]);
	}
	for (int i = 0; i < 2 * K; i++)
		hyp_free(&fin[i]);
	free(live);
	free(next);
	free(fin);
	free(cs);
	free(top);
	free(order);
}

static void generate(generator *g, prefix *p)
{
	if (g->opt.beam > 0)
		decode_beam(g, p);
	else
		decode_sample(g, p, g->opt.so.greedy ? 1 : g->opt.n);
}

/* Options that exclude or need each other. */
static void check_args(const generator *g, int nbest_given)
{
	if (!g->opt.model)
		cli_usage_error(usage, "no model: -m MODEL is required");
	if (g->opt.prefix_text && g->opt.prefix_file)
		cli_usage_error(usage, "-p and --prefix-file exclude each other");
	if (g->opt.so.greedy && g->opt.beam)
		cli_usage_error(usage, "--greedy and --beam exclude each other");
	if ((g->opt.so.greedy || g->opt.beam) && g->opt.n_given)
		cli_usage_error(usage, "-n applies to sampling; --greedy and --beam give one sentence (--nbest for more)");
	if (nbest_given && !g->opt.beam)
		cli_usage_error(usage, "--nbest needs --beam");
	if (g->opt.beam && g->opt.nbest > g->opt.beam)
		cli_usage_error(usage, "--nbest %d is more than --beam %d", g->opt.nbest, g->opt.beam);
	llr_err err = {0};
	if (llr_sample_opts_check(&g->opt.so, &err) != LLR_OK)
		cli_usage_error(usage, "%s", err.msg);
}

static void parse_args(generator *g, int argc, char **argv)
{
	int nbest_given = 0;
	g->opt.seed = 1;
	g->opt.threads = 1;
	g->opt.n = 1;
	g->opt.max_len = 100;
	g->opt.nbest = 1;
	g->opt.spell_tries = 100000;
	llr_sample_opts_init(&g->opt.so);
	int c;
	while ((c = cli_getopt(argc, argv, ":hm:o:n:qs:p:v", longopts, usage)) != -1) {
		switch (c) {
		case 'm':
			g->opt.model = optarg;
			break;
		case 'v':
			g->opt.verbose = 1;
			break;
		case 'q':
			g->opt.quiet = 1;
			break;
		case 'o':
			g->opt.output = optarg;
			break;
		case 'n':
			g->opt.n = cli_parse_int(usage, "-n", optarg, 1, 1000000000LL);
			g->opt.n_given = 1;
			break;
		case 's':
			g->opt.seed = (unsigned long long)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX);
			break;
		case 'p':
			g->opt.prefix_text = optarg;
			break;
		case OPT_PREFIX_FILE:
			g->opt.prefix_file = optarg;
			break;
		case OPT_MAX_LEN:
			g->opt.max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 100000);
			break;
		case OPT_TEMPERATURE:
			g->opt.so.temperature = cli_parse_double(usage, "--temperature", optarg, 1e-6, 1e6);
			break;
		case OPT_TOP_K:
			g->opt.so.top_k = (int32_t)cli_parse_int(usage, "--top-k", optarg, 0, INT32_MAX);
			break;
		case OPT_TOP_P:
			g->opt.so.top_p = cli_parse_double(usage, "--top-p", optarg, 1e-9, 1);
			break;
		case OPT_GREEDY:
			g->opt.so.greedy = 1;
			break;
		case OPT_BEAM:
			g->opt.beam = (int)cli_parse_int(usage, "--beam", optarg, 1, 1000);
			break;
		case OPT_NBEST:
			g->opt.nbest = (int)cli_parse_int(usage, "--nbest", optarg, 1, 1000);
			nbest_given = 1;
			break;
		case OPT_NO_UNK:
			g->opt.no_unk = 1;
			break;
		case OPT_LOGPROB:
			g->opt.logprob = 1;
			break;
		case OPT_SHOW_FEATURES:
			g->opt.show_features = 1;
			break;
		case OPT_THREADS:
			g->opt.threads = (int)cli_parse_int(usage, "--threads", optarg, 0, 1024);
			break;
		case OPT_CLOSED:
			g->opt.closed = 1;
			break;
		case OPT_SPELL_TRIES:
			g->opt.spell_tries = cli_parse_int(usage, "--spell-tries", optarg, 1, INT64_MAX);
			break;
		case OPT_STRICT:
			g->opt.strict = 1;
			break;
		}
	}
	if (optind < argc)
		cli_usage_error(usage, "unexpected operand '%s' (prefixes come with -p or --prefix-file)", argv[optind]);
	check_args(g, nbest_given);
}

/* The model, the sampler, the network states and the rows. */
static void generator_init(generator *g)
{
	llr_err err = {0};
	slm_load(&g->lm, g->opt.model, g->opt.verbose);
	llr_blas_set_threads(g->opt.threads);
	if (llr_blas_reserve(&err) < 0)
		cli_die_err(&err);
	llr_rng_seed(&g->master, g->opt.seed);
	genopen_init(&g->go, &g->lm, g->opt.closed, g->opt.spell_tries);
	tokcheck_init(&g->tc, g->opt.model, g->lm.model->meta, g->opt.strict, 0);
	g->W = g->go.W;
	int B = g->nstreams = MAX(g->opt.beam, GROUP);
	g->sampler = llr_sampler_new(g->W, &err);
	if (!g->sampler)
		cli_die_err(&err);
	g->st1 = llr_net_state_new(g->lm.net, 1);
	g->stA = llr_net_state_new(g->lm.net, B);
	g->stB = llr_net_state_new(g->lm.net, B);
	if (!g->st1 || !g->stA || !g->stB)
		cli_oom();
	g->row1 = ereallocarray(NULL, (size_t)g->W, sizeof *g->row1);
	g->rows = ereallocarray(NULL, (size_t)B * (size_t)g->W, sizeof *g->rows);
	g->inputs = ereallocarray(NULL, (size_t)B, sizeof *g->inputs);
}

static void generator_free(generator *g)
{
	if (g->opt.verbose)
		genopen_summary(&g->go);
	genopen_free(&g->go);
	llr_buf_free(&g->word);
	llr_buf_free(&g->outb);
	free(g->row1);
	free(g->rows);
	free(g->inputs);
	llr_net_state_free(g->st1);
	llr_net_state_free(g->stA);
	llr_net_state_free(g->stB);
	llr_sampler_free(g->sampler);
	tokcheck_free(&g->tc);
	slm_free(&g->lm);
}

static void prefix_free(prefix *p)
{
	llr_buf_free(&p->text);
	free(p->off);
	free(p->vid);
	free(p->in);
	free(p->tgt);
	free(p->lps);
}

/* Generate after every line of the prefix file, or after -p (default:
 * nothing). */
static void run(generator *g)
{
	prefix p = {0};
	if (g->opt.prefix_file) {
		llr_err err = {0};
		llr_lines *l = llr_lines_open(g->opt.prefix_file, 0, &err);
		if (!l)
			cli_die_err(&err);
		cli_progress_inputs(&g->prog, (char *const *)&g->opt.prefix_file, 1);
		cli_progress_lines(&g->prog, g->opt.prefix_file, l);
		const char *line;
		size_t len;
		int rc;
		while ((rc = llr_lines_next(l, &line, &len, &err)) > 0) {
			if (tokcheck_line(&g->tc, line, len))
				tokcheck_fail(&g->tc, llr_lines_name(l), llr_lines_lineno(l));
			set_prefix(g, &p, line, len);
			generate(g, &p);
		}
		if (rc < 0)
			cli_die_err(&err);
		llr_lines_close(l);
	} else {
		const char *t = g->opt.prefix_text ? g->opt.prefix_text : "";
		if (tokcheck_line(&g->tc, t, strlen(t)))
			tokcheck_fail(&g->tc, "-p", 0);
		set_prefix(g, &p, t, strlen(t));
		generate(g, &p);
	}
	prefix_free(&p);
}

/* An n-gram model: sampling and greedy decoding in gen_ngram.c.  0 when
 * the model is not an n-gram model. */
static int run_ngram(const generator *g, int *rc)
{
	llr_err err = {0};
	int k = llr_ngram_sniff(g->opt.model, &err);
	if (k < 0)
		cli_die_err(&err);
	if (k == 0)
		return 0;
	llr_model_opts mo = llr_model_opts_default();
	mo.open = LLR_OPEN_OFF;
	llr_model *m;
	if (llr_model_open(g->opt.model, &mo, &m, &err) != LLR_OK)
		cli_die_err(&err);
	if (g->opt.beam || g->opt.show_features)
		cli_usage_error(usage, "--beam and --show-features need a neural model, not an n-gram model");
	gen_ngram_opts o = {g->opt.n, g->opt.seed, g->opt.max_len, g->opt.no_unk, g->opt.logprob, g->opt.quiet, g->opt.so, g->opt.prefix_text, g->opt.prefix_file, g->opt.output};
	*rc = gen_ngram(llr_model_ngram(m), &o);
	llr_model_close(m);
	return 1;
}

int main(int argc, char **argv)
{
	cli_init(argv[0], "gen");
	cli_set_help(help);
	if (encdec_wanted(argc, argv, 0)) /* the encoder-decoder family */
		return gen_encdec_main(argc, argv);
	generator g = {0};
	parse_args(&g, argc, argv);
	int rc;
	if (run_ngram(&g, &rc))
		return rc;
	generator_init(&g);
	cli_output_open_lines(&g.out, g.opt.output);
	cli_progress_init(&g.prog, g.opt.quiet, g.out.fp == stdout);
	g.want = g.opt.prefix_file ? -1 : g.opt.beam ? g.opt.nbest : g.opt.so.greedy ? 1 : g.opt.n;
	run(&g);
	cli_progress_clear();
	if (g.opt.strict) /* a mismatch fails before the output is in place */
		tokcheck_end(&g.tc);
	cli_output_close(&g.out);
	if (!g.opt.strict)
		tokcheck_end(&g.tc);
	generator_free(&g);
	return 0;
}
