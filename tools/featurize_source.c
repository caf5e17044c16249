/*
 * featurize_source.c - featurize --source SRC: pairs the source file with
 * the target file line by line and builds the source side of the stream
 * (llrnn.h, llr_source): the source vocabulary in count order with </s>
 * and <unk>, one SRC:<token> input feature per token, and the source ids.
 * The target side is featurize's ordinary work (featurize.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "featurize_source.h"

#define SRC_PREFIX "SRC:"
#define CHUNK_IDS ((size_t)1 << 20)

/* The next line of l (1), or 0 at its end; exits on a read error. */
static int next_line(llr_lines *l, const char **line, size_t *len)
{
	llr_err e = {0};
	int rc = llr_lines_next(l, line, len, &e);
	if (rc < 0)
		cli_die_err(&e);
	return rc;
}

static void check_tokens(llr_lines *l, const char *line, size_t len)
{
	llr_err e = {0};
	if (len && llr_tokens_check(line, len, &e) < 0)
		cli_die("%s:%zu: %s", llr_lines_name(l), llr_lines_lineno(l), e.msg);
}

/* Count the lines left in l (after the current one). */
static size_t rest(llr_lines *l)
{
	const char *line;
	size_t len;
	while (next_line(l, &line, &len))
		;
	return llr_lines_lineno(l);
}

static void misaligned(llr_lines *ls, llr_lines *lt, int src_ended)
{
	size_t ns = src_ended ? llr_lines_lineno(ls) : rest(ls);
	size_t nt = src_ended ? rest(lt) : llr_lines_lineno(lt);
	cli_die("%s (%zu lines) and %s (%zu lines) are not aligned: they diverge at line %zu, which only %s has",
	        llr_lines_name(ls), ns, llr_lines_name(lt), nt, (ns < nt ? ns : nt) + 1,
	        ns < nt ? llr_lines_name(lt) : llr_lines_name(ls));
}

static void push(fz_parallel *p, size_t *cap, int32_t id)
{
	if (p->nids == *cap) {
		*cap = *cap ? 2 * *cap : 1 << 16;
		p->ids = ereallocarray(p->ids, *cap, sizeof *p->ids);
	}
	p->ids[p->nids++] = id;
}

/* Types in first-seen order into seen, the text as their ids with -1 at
 * each line end. */
static void read_pairs(fz_parallel *p, llr_vocab *seen, const char *src_path, const char *tgt_path, cli_progress *prog)
{
	llr_err e = {0};
	llr_lines *ls = llr_lines_open(src_path, 0, &e);
	if (!ls)
		cli_die_err(&e);
	llr_lines *lt = llr_lines_open(tgt_path, 0, &e);
	if (!lt)
		cli_die_err(&e);
	cli_progress_lines(prog, src_path, ls);
	size_t cap = 0;
	for (;;) {
		const char *s, *t;
		size_t sl, tl;
		int hs = next_line(ls, &s, &sl);
		if (hs) {
			check_tokens(ls, s, sl);
			size_t pos = 0, kl;
			const char *tok;
			while (llr_token_next(s, sl, &pos, &tok, &kl)) {
				int32_t id = llr_vocab_add(seen, tok, kl, 1);
				if (id < 0)
					cli_oom();
				if (llr_vocab_size(seen) > (size_t)LLR_MAX_VOCAB - 2)
					cli_die("%s:%zu: more than %d source types (the limit)", llr_lines_name(ls), llr_lines_lineno(ls), LLR_MAX_VOCAB - 2);
				push(p, &cap, id);
				p->tokens++;
			}
			p->empty += sl == 0;
			push(p, &cap, -1);
		}
		int ht = next_line(lt, &t, &tl);
		if (hs != ht)
			misaligned(ls, lt, !hs);
		if (!hs)
			break;
		check_tokens(lt, t, tl);
		if (!tl)
			cli_die("%s:%zu: an empty target line (every source line needs a target: %s:%zu)", llr_lines_name(lt),
			        llr_lines_lineno(lt), llr_lines_name(ls), llr_lines_lineno(ls));
		p->pairs++;
		if (cli_progress_due(prog))
			cli_progress_show(prog, p->pairs, "pairs", p->tokens, "tok", cli_progress_fraction(prog));
	}
	cli_progress_clear();
	if (!p->pairs)
		cli_die("%s: empty corpus (no line)", llr_lines_name(ls));
	llr_lines_close(ls);
	llr_lines_close(lt);
}

void fz_parallel_read(fz_parallel *p, const char *src_path, const char *tgt_path, cli_progress *prog)
{
	memset(p, 0, sizeof *p);
	llr_vocab *seen = llr_vocab_new(), *v = llr_vocab_new();
	llr_source *s = ecalloc(1, sizeof *s);
	s->vocab = llr_strmap_new();
	s->features = llr_strmap_new();
	if (!seen || !v || !s->vocab || !s->features)
		cli_oom();
	read_pairs(p, seen, src_path, tgt_path, prog);

	/* The vocabulary in DESIGN order (count descending, ties in byte
	 * order), </s> counted once per line, <unk> with count 0. */
	llr_err e = {0};
	size_t nseen = llr_vocab_size(seen);
	for (size_t i = 0; i < nseen; i++) {
		const char *w = llr_vocab_token(seen, (int32_t)i);
		if (llr_vocab_add(v, w, strlen(w), llr_vocab_count(seen, (int32_t)i)) < 0)
			cli_oom();
	}
	if (llr_vocab_add(v, LLR_EOS, strlen(LLR_EOS), p->pairs) < 0 || llr_vocab_add(v, LLR_UNK, strlen(LLR_UNK), 0) < 0)
		cli_oom();
	if (llr_vocab_sort(v, &e) < 0)
		cli_die_err(&e);
	int32_t Vs = (int32_t)llr_vocab_size(v);
	llr_csr *psi = llr_csr_new(Vs, Vs, Vs, &e);
	if (!psi)
		cli_die_err(&e);
	llr_buf b = {0};
	for (int32_t i = 0; i < Vs; i++) {
		const char *w = llr_vocab_token(v, i);
		llr_buf_clear(&b);
		if (llr_strmap_add(s->vocab, w, strlen(w)) < 0 || llr_buf_printf(&b, SRC_PREFIX "%s", w) < 0 ||
		    llr_strmap_add(s->features, b.data, b.len) < 0)
			cli_oom();
		psi->indptr[i + 1] = i + 1;
		psi->indices[i] = i;
		psi->data[i] = 1.0f;
	}
	llr_buf_free(&b);
	s->psi = psi;
	s->eos_id = llr_vocab_id(v, LLR_EOS, strlen(LLR_EOS));
	s->unk_id = llr_vocab_id(v, LLR_UNK, strlen(LLR_UNK));
	int32_t *map = ecalloc(nseen + 1, sizeof *map);
	for (size_t i = 0; i < nseen; i++) {
		const char *w = llr_vocab_token(seen, (int32_t)i);
		map[i] = llr_vocab_id(v, w, strlen(w));
	}
	for (size_t i = 0; i < p->nids; i++)
		p->ids[i] = p->ids[i] < 0 ? s->eos_id : map[p->ids[i]];
	free(map);
	llr_vocab_free(seen);
	llr_vocab_free(v);
	p->src = s;
}

void fz_parallel_write_ids(const fz_parallel *p, llr_tensor_writer *w)
{
	llr_err e = {0};
	size_t a = 0;
	int chunk = 0;
	while (a < p->nids) {
		/* whole sentences, up to CHUNK_IDS ids unless one is longer */
		size_t b = a, last = a;
		while (b < p->nids && (b - a < CHUNK_IDS || last == a)) {
			if (p->ids[b++] == p->src->eos_id)
				last = b;
		}
		if (last == a)
			last = b;
		char name[48];
		int64_t shape[1] = {(int64_t)(last - a)};
		snprintf(name, sizeof name, "source/ids/%06d", chunk++);
		if (llr_tw_put_raw(w, name, LLR_I32, 1, shape, p->ids + a, &e) < 0)
			cli_die_err(&e);
		a = last;
	}
}

void fz_parallel_free(fz_parallel *p)
{
	llr_source_free(p->src);
	free(p->ids);
	memset(p, 0, sizeof *p);
}
