/*
 * formats.c - the lines of a disc-pairs document cut into paragraphs of
 * tokenised sentences, in each of the four input formats: running text
 * (blank lines end paragraphs, the tokenizer splits the sentences),
 * word/TAG text (a line a sentence, tags dropped, headlines end
 * paragraphs), CoNLL-U (FORMs, # newdoc and # newpar) and tokens (a line
 * a sentence).  Each finished paragraph goes to the reader's callback.
 * Not here: archives, members and their sniffing (reader.c).
 */
#include <inttypes.h>
#include <string.h>

#include "reader.h"

#define MAX_WARN_LINES 5 /* per member, for malformed CoNLL-U lines */

/* Text format: cut the text collected so far into sentences of the
 * current paragraph. */
static void flush_text(llr_disc_reader *r)
{
	llr_disc_para *p = &r->para;
	if (r->o.format != LLR_DISC_FMT_TEXT || r->ptext.len == 0)
		return;
	llr_err e = {0};
	llr_buf_clear(&r->tokout);
	if (llr_tokenize(r->o.tok, r->ptext.data, r->ptext.len, 1, &r->tokout, &e) != LLR_OK) {
		if (e.code == LLR_ENOMEM)
			llr_disc_oom(r);
		else
			llr_disc_note(r, 0, "%s: paragraph %" PRIu64 ": %s", r->doc, r->par_index + 1, e.msg[0] ? e.msg : llr_strerror(e.code));
	} else {
		const char *s = r->tokout.data ? r->tokout.data : "", *end = s + r->tokout.len;
		while (s < end) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			const char *e2 = nl ? nl : end;
			if (llr_disc_para_add(p, s, (size_t)(e2 - s)) != LLR_OK) {
				llr_disc_oom(r);
				break;
			}
			s = e2 + 1;
		}
	}
	llr_buf_clear(&r->ptext);
}

void llr_disc_end_par(llr_disc_reader *r)
{
	llr_disc_para *p = &r->para;
	flush_text(r);
	if (p->n == 0 || r->rc)
		return;
	r->st.paras++;
	r->st.sents += p->n;
	r->par_index++;
	if (!r->doc_content)
		r->st.docs++; /* a document counts once it has a paragraph */
	r->doc_content = 1;
	int rc = r->o.paragraph ? r->o.paragraph(r->o.arg, p, r->doc, r->par_index) : LLR_OK;
	if (rc != LLR_OK && !r->rc)
		r->rc = rc;
	llr_disc_para_clear(p);
}

/* Add one sentence given as raw tokens: NFC, optionally lowercased. */
static void add_sentence(llr_disc_reader *r, const char *s, size_t len)
{
	llr_err e = {0};
	if (llr_normalize(s, len, 0, r->o.lower, &r->norm, &e) != LLR_OK) {
		if (e.code == LLR_ENOMEM)
			llr_disc_oom(r);
		return;
	}
	if (llr_disc_para_add(&r->para, r->norm.data ? r->norm.data : "", r->norm.len) != LLR_OK)
		llr_disc_oom(r);
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_ws(s[i]))
			return 0;
	return 1;
}

static void feed_text(llr_disc_reader *r, const char *s, size_t len)
{
	if (blank(s, len)) {
		llr_disc_end_par(r);
		return;
	}
	if ((r->ptext.len > 0 && llr_buf_putc(&r->ptext, ' ') != LLR_OK) || llr_buf_append(&r->ptext, s, len) != LLR_OK)
		llr_disc_oom(r);
}

void llr_disc_feed_html_line(llr_disc_reader *r, const char *s, size_t len, int end)
{
	feed_text(r, s, len);
	if (end)
		flush_text(r);
}

static void feed_tokens(llr_disc_reader *r, const char *s, size_t len)
{
	if (blank(s, len))
		llr_disc_end_par(r);
	else
		add_sentence(r, s, len);
}

/* 1 if the first line shows the member is not tagged, else 0. */
static int feed_tagged(llr_disc_reader *r, const char *s, size_t len)
{
	if (blank(s, len)) {
		llr_disc_end_par(r);
		return 0;
	}
	llr_buf *b = &r->sent;
	llr_buf_clear(b);
	int first = r->member_lines++ == 0, all_hl = 1, ntok = 0;
	size_t i = 0;
	while (i < len) {
		while (i < len && is_ws(s[i]))
			i++;
		size_t st = i;
		while (i < len && !is_ws(s[i]))
			i++;
		if (i == st)
			break;
		const char *tok = s + st;
		size_t tl = i - st, wl = tl;
		const char *slash = NULL;
		for (size_t k = tl; k-- > 0;)
			if (tok[k] == '/') {
				slash = tok + k;
				break;
			}
		if (slash && slash > tok && slash < tok + tl - 1) {
			wl = (size_t)(slash - tok);
			size_t taglen = tl - wl - 1;
			if (!(taglen >= 3 && !memcmp(slash + 1 + taglen - 3, "-hl", 3)))
				all_hl = 0;
		} else {
			if (first)
				return 1;
			r->untagged++;
			all_hl = 0;
		}
		if ((ntok++ && llr_buf_putc(b, ' ') != LLR_OK) || llr_buf_append(b, tok, wl) != LLR_OK) {
			llr_disc_oom(r);
			return 0;
		}
	}
	if (all_hl) { /* a headline: ends the paragraph, is no sentence */
		llr_disc_end_par(r);
		return 0;
	}
	add_sentence(r, b->data, b->len);
	return 0;
}

static void conllu_end_sentence(llr_disc_reader *r)
{
	if (r->sent_bad) {
		llr_buf_clear(&r->sent);
		r->sent_bad = 0;
		llr_disc_end_par(r); /* do not pair across the dropped sentence */
		return;
	}
	if (r->sent.len > 0)
		add_sentence(r, r->sent.data, r->sent.len);
	llr_buf_clear(&r->sent);
}

static int comment_is(const char *s, size_t len, const char *key)
{
	size_t i = 1, k = strlen(key);
	while (i < len && is_ws(s[i]))
		i++;
	if (len - i < k || memcmp(s + i, key, k))
		return 0;
	return i + k == len || is_ws(s[i + k]) || s[i + k] == '=';
}

/* 1 if the first content line shows the member is not CoNLL-U, else 0. */
static int feed_conllu(llr_disc_reader *r, const char *s, size_t len, size_t lineno)
{
	if (len > 0 && s[0] == '#') {
		if (comment_is(s, len, "newdoc")) {
			conllu_end_sentence(r);
			llr_disc_end_par(r);
			r->doc_content = 0;
		} else if (comment_is(s, len, "newpar")) {
			conllu_end_sentence(r);
			llr_disc_end_par(r);
		}
		return 0;
	}
	if (blank(s, len)) {
		conllu_end_sentence(r);
		return 0;
	}
	int first = r->member_lines++ == 0;
	llr_buf_clear(&r->lbuf);
	if (llr_buf_append(&r->lbuf, s, len) != LLR_OK) {
		llr_disc_oom(r);
		return 0;
	}
	llr_conllu_word w;
	llr_err e = {0};
	if (llr_conllu_parse(r->lbuf.data, len, &w, &e) != LLR_OK) {
		if (first)
			return 1;
		if (r->member_bad++ < MAX_WARN_LINES)
			llr_disc_note(r, 1, "%s:%zu: %s; sentence dropped", r->doc, lineno, e.msg[0] ? e.msg : "malformed CoNLL-U line");
		r->sent_bad = 1;
		return 0;
	}
	if (w.kind != 0 || !w.form)
		return 0;
	if (r->sent.len > 0 && llr_buf_putc(&r->sent, ' ') != LLR_OK) {
		llr_disc_oom(r);
		return 0;
	}
	for (const char *f = w.form; *f; f++) /* a FORM with spaces stays one token */
		if (llr_buf_putc(&r->sent, is_ws(*f) ? '_' : *f) != LLR_OK) {
			llr_disc_oom(r);
			return 0;
		}
	return 0;
}

int llr_disc_feed_line(llr_disc_reader *r, const char *s, size_t len, size_t lineno)
{
	switch (r->o.format) {
	case LLR_DISC_FMT_TEXT: feed_text(r, s, len); return 0;
	case LLR_DISC_FMT_TAGGED: return feed_tagged(r, s, len);
	case LLR_DISC_FMT_CONLLU: return feed_conllu(r, s, len, lineno);
	default: feed_tokens(r, s, len); return 0;
	}
}

void llr_disc_drop_line(llr_disc_reader *r)
{
	r->invalid_lines++;
	if (r->o.format == LLR_DISC_FMT_CONLLU)
		r->sent_bad = 1;
	else
		llr_disc_end_par(r); /* never pair across a dropped line */
}

void llr_disc_end_member(llr_disc_reader *r, int cut)
{
	if (cut) {
		/* The unfinished paragraph may be cut mid-sentence: dropped. */
		llr_disc_para_clear(&r->para);
		llr_buf_clear(&r->ptext);
		llr_buf_clear(&r->sent);
		return;
	}
	if (r->o.format == LLR_DISC_FMT_CONLLU)
		conllu_end_sentence(r);
	llr_disc_end_par(r);
}
