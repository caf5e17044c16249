/*
 * disc-pairs - ORDER, NEXT and CONJ discourse examples (Jernite et al.)
 * mined from document collections as they are shipped: archives of any
 * format libarchive reads, or single (possibly compressed) texts.
 *
 * This file reads: operands, archive members, the bounds on member size,
 * the text/binary decision, and the four input formats (text, tagged,
 * conllu, tokens), turning each member into paragraphs of tokenised
 * sentences.  The examples themselves are built in lib/discourse/tasks.c,
 * the marker tables live in lib/discourse/markers.c (the man page is the spec).
 */
#include "cli.h"
#include "progress.h"

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: disc-pairs [-hlq] [-o file] [-s seed] [--format text|tagged|conllu|tokens]\n"
    "                  [--lang en|fr] [--tasks list] [--markers file] [--min-par n]\n"
    "                  [--next-stride n] [--min-len n] [--max-len n] [--max-ratio x]\n"
    "                  [--max-member-bytes n] [--include pattern] [--exclude pattern]\n"
    "                  [--html-unit p|run] [--provenance] [--sentences] [file ...]\n"
    "       disc-pairs --list-markers [--lang en|fr] [--markers file]\n"
    "       disc-pairs --version\n";

static const char help[] =
    "Options:\n"
    "  -h, --help               print this help and exit\n"
    "  --version                print the version and exit\n"
    "  -l, --lower              lowercase the sentences\n"
    "  -o, --output file        write to file (atomically; .gz .bz2 .xz .zst compress)\n"
    "  -q, --quiet              no progress line and no summary\n"
    "  -s, --seed seed          seed of the random choices (default 1)\n"
    "  --format text|tagged|conllu|tokens  the input format (default text)\n"
    "  --lang en|fr             language of the tokenizer and markers (default en)\n"
    "  --tasks list             the tasks to write: order, next, conj (default all)\n"
    "  --markers file           a phrase<TAB>class table instead of the built-in one\n"
    "  --list-markers           print the marker table in use and exit\n"
    "  --min-par n              NEXT: the sentences of a block (default 9)\n"
    "  --next-stride n          NEXT: a block every n sentences\n"
    "  --min-len n              shortest sentence in tokens (default 5)\n"
    "  --max-len n              longest sentence in tokens (default 50)\n"
    "  --max-ratio x            length ratio cap of a pair (default 5)\n"
    "  --max-member-bytes n     cap on a member's decompressed bytes (default 256M)\n"
    "  --include pattern        read only the members whose name matches (repeatable)\n"
    "  --exclude pattern        leave out the members whose name matches (repeatable)\n"
    "  --html-unit p|run        what an HTML paragraph is (default p)\n"
    "  --provenance             add a last column doc:paragraph to every line\n"
    "  --sentences              write the paragraphs' sentences instead of examples\n";

enum { FMT_TEXT,
       FMT_TAGGED,
       FMT_CONLLU,
       FMT_TOKENS };
static const char *const fmt_names[] = {"text", "tagged", "conllu", "tokens"};
static const char *const fmt_what[] = {"text", "word/TAG text", "CoNLL-U", "tokens"};

#define SNIFF_BYTES ((size_t)64 << 10) /* the text/binary decision looks this far */
#define DEFAULT_MAX_MEMBER ((uint64_t)256 << 20)
#define MAX_WARN_LINES 5 /* per member, for malformed CoNLL-U lines */
#define MAX_DEPTH 8      /* nested archives: a .deb is 2 deep */
#define MAX_INCLUDE 16

enum { SKIP_BINARY,
       SKIP_UTF8,
       SKIP_FORMAT,
       SKIP_SIZE,
       SKIP_BROKEN,
       SKIP_N };
static const char *const skip_names[] = {"binary", "not UTF-8", "wrong format", "over --max-member-bytes", "truncated or corrupt archive"};

/* A member as a byte source for llr_lines: first the sniffed head, then
 * the rest of the member; counts bytes against the cap, refuses NULs. */
struct msrc {
	llr_archive *a;
	char *head;
	size_t head_len, head_pos;
	uint64_t total, cap;
	int binary, over, ioerr, eof;
	int head_nul_ok; /* while the head is read: NULs are judged after (an archive has them) */
};

static ssize_t msrc_pull(struct msrc *m, void *buf, size_t n, llr_err *err)
{
	if (m->eof)
		return 0;
	uint64_t room = m->cap - m->total + 1; /* one more than allowed: detects overflow */
	if (room < n)
		n = (size_t)room;
	ssize_t r = llr_archive_read(m->a, buf, n, err);
	if (r < 0) {
		m->ioerr = 1;
		return r;
	}
	if (r == 0) {
		m->eof = 1;
		return 0;
	}
	m->total += (uint64_t)r;
	if (m->total > m->cap) {
		m->over = 1;
		return llr_err_set(err, LLR_ERANGE, "member over --max-member-bytes");
	}
	if (!m->head_nul_ok && memchr(buf, '\0', (size_t)r)) {
		m->binary = 1;
		return llr_err_set(err, LLR_EFORMAT, "binary data (NUL byte)");
	}
	return r;
}

static ssize_t msrc_read(void *src, void *buf, size_t n, llr_err *err)
{
	struct msrc *m = src;
	if (m->head_pos < m->head_len) {
		size_t k = m->head_len - m->head_pos;
		if (k > n)
			k = n;
		memcpy(buf, m->head + m->head_pos, k);
		m->head_pos += k;
		return (ssize_t)k;
	}
	return msrc_pull(m, buf, n, err);
}

struct run {
	int format, lower, sentences, provenance, quiet, tasks;
	cli_progress prog;
	long long lines; /* read, for the progress line */
	int html_runs; /* --html-unit run */
	uint64_t max_member;
	const char *include[MAX_INCLUDE]; /* --include patterns */
	const char *exclude[MAX_INCLUDE]; /* --exclude patterns */
	int n_include, n_exclude;
	int depth;                             /* nesting of the current archive */
	uint64_t excluded, dropped, html_docs; /* left out by --include, by --exclude */
	llr_tokenizer *tok;
	llr_disc_tasks *ctx;
	FILE *out;
	int status;

	/* totals */
	uint64_t docs, paras, sents, skipped[SKIP_N];

	/* the current member */
	const char *doc;           /* "archive:member", or the file for a plain text */
	const char *arch, *member; /* the parts of doc */
	uint64_t par_index;
	int member_lines; /* content lines seen (format sniffing) */
	int member_bad;   /* malformed lines reported */
	uint64_t invalid_lines, untagged;
	int sent_bad;    /* CoNLL-U: current sentence had a malformed line */
	int doc_content; /* CoNLL-U: a sentence since the last # newdoc */

	llr_disc_para para;
	llr_buf ptext, tokout, norm, sent, lbuf, prov, docname, html, htext;
};

/* Text format: cut the text collected so far into sentences of the
 * current paragraph. */
static void flush_text(struct run *r)
{
	llr_disc_para *p = &r->para;
	if (r->format == FMT_TEXT && r->ptext.len > 0) {
		llr_err e = {0};
		llr_buf_clear(&r->tokout);
		if (llr_tokenize(r->tok, r->ptext.data, r->ptext.len, 1, &r->tokout, &e) != LLR_OK) {
			if (e.code == LLR_ENOMEM)
				cli_oom();
			cli_warn("%s: paragraph %" PRIu64 ": %s", r->doc, r->par_index + 1, e.msg[0] ? e.msg : llr_strerror(e.code));
		} else {
			const char *s = r->tokout.data, *end = s + r->tokout.len;
			while (s && s < end) {
				const char *nl = memchr(s, '\n', (size_t)(end - s));
				const char *e2 = nl ? nl : end;
				if (llr_disc_para_add(p, s, (size_t)(e2 - s)) != LLR_OK)
					cli_oom();
				s = e2 + 1;
			}
		}
		llr_buf_clear(&r->ptext);
	}
}

/* Emit the paragraph collected so far. */
static void end_par(struct run *r)
{
	llr_disc_para *p = &r->para;
	flush_text(r);
	if (p->n == 0)
		return;
	r->paras++;
	r->sents += p->n;
	r->par_index++;
	if (!r->doc_content)
		r->docs++; /* a document counts once it has a paragraph */
	r->doc_content = 1;
	llr_buf_clear(&r->prov);
	if (llr_buf_printf(&r->prov, "%s:%" PRIu64, r->doc, r->par_index) != LLR_OK)
		cli_oom();
	if (r->sentences) {
		for (size_t i = 0; i < p->n; i++) {
			fwrite(llr_disc_para_sent(p, i), 1, p->len[i], r->out);
			if (r->provenance) {
				fputc('\t', r->out);
				fputs(r->prov.data, r->out);
			}
			fputc('\n', r->out);
		}
		fputc('\n', r->out);
	} else if (llr_disc_tasks_paragraph(r->ctx, p, r->prov.data) != LLR_OK) {
		cli_oom();
	}
	llr_disc_para_clear(p);
}

/* Add one sentence given as raw tokens: NFC, optionally lowercased. */
static void add_sentence(struct run *r, const char *s, size_t len)
{
	llr_err e = {0};
	if (llr_normalize(s, len, 0, r->lower, &r->norm, &e) != LLR_OK) {
		if (e.code == LLR_ENOMEM)
			cli_oom();
		return;
	}
	if (llr_disc_para_add(&r->para, r->norm.data ? r->norm.data : "", r->norm.len) != LLR_OK)
		cli_oom();
}

static int blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\f' && s[i] != '\v')
			return 0;
	return 1;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* 1 if the member is not in the expected format (only decided on its
 * first content line), else 0. */
static int feed_text(struct run *r, const char *s, size_t len)
{
	if (blank(s, len)) {
		end_par(r);
		return 0;
	}
	if (r->ptext.len > 0 && llr_buf_putc(&r->ptext, ' ') != LLR_OK)
		cli_oom();
	if (llr_buf_append(&r->ptext, s, len) != LLR_OK)
		cli_oom();
	return 0;
}

static int feed_tokens(struct run *r, const char *s, size_t len)
{
	if (blank(s, len))
		end_par(r);
	else
		add_sentence(r, s, len);
	return 0;
}

static int feed_tagged(struct run *r, const char *s, size_t len)
{
	if (blank(s, len)) {
		end_par(r);
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
		if (ntok++ && llr_buf_putc(b, ' ') != LLR_OK)
			cli_oom();
		if (llr_buf_append(b, tok, wl) != LLR_OK)
			cli_oom();
	}
	if (all_hl) { /* a headline: ends the paragraph, is no sentence */
		end_par(r);
		return 0;
	}
	add_sentence(r, b->data, b->len);
	return 0;
}

static void conllu_end_sentence(struct run *r)
{
	if (r->sent_bad) {
		llr_buf_clear(&r->sent);
		r->sent_bad = 0;
		end_par(r); /* do not pair across the dropped sentence */
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

static int feed_conllu(struct run *r, const char *s, size_t len, size_t lineno)
{
	if (len > 0 && s[0] == '#') {
		if (comment_is(s, len, "newdoc")) {
			conllu_end_sentence(r);
			end_par(r);
			r->doc_content = 0;
		} else if (comment_is(s, len, "newpar")) {
			conllu_end_sentence(r);
			end_par(r);
		}
		return 0;
	}
	if (blank(s, len)) {
		conllu_end_sentence(r);
		return 0;
	}
	int first = r->member_lines++ == 0;
	llr_buf_clear(&r->lbuf);
	if (llr_buf_append(&r->lbuf, s, len) != LLR_OK)
		cli_oom();
	llr_conllu_word w;
	llr_err e = {0};
	if (llr_conllu_parse(r->lbuf.data, len, &w, &e) != LLR_OK) {
		if (first)
			return 1;
		if (r->member_bad++ < MAX_WARN_LINES)
			cli_warn("%s:%zu: %s; sentence dropped", r->doc, lineno, e.msg[0] ? e.msg : "malformed CoNLL-U line");
		r->status = 1;
		r->sent_bad = 1;
		return 0;
	}
	if (w.kind != 0 || !w.form)
		return 0;
	if (r->sent.len > 0 && llr_buf_putc(&r->sent, ' ') != LLR_OK)
		cli_oom();
	for (const char *f = w.form; *f; f++) /* a FORM with spaces stays one token */
		if (llr_buf_putc(&r->sent, is_ws(*f) ? '_' : *f) != LLR_OK)
			cli_oom();
	return 0;
}

/* Decide from the head whether the member is text: 0, or a SKIP_ reason
 * with a message in why. */
static int sniff(const struct msrc *m, int complete, char *why, size_t wsize)
{
	if (memchr(m->head, '\0', m->head_len)) {
		snprintf(why, wsize, "binary data (NUL byte); skipped");
		return SKIP_BINARY + 1;
	}
	size_t lines = 0, bad = 0, i = 0;
	while (i < m->head_len) {
		const char *nl = memchr(m->head + i, '\n', m->head_len - i);
		if (!nl && !complete)
			break; /* a partial last line is not judged */
		size_t e = nl ? (size_t)(nl - m->head) : m->head_len;
		lines++;
		if (llr_utf8_valid_prefix(m->head + i, e - i) != e - i)
			bad++;
		i = e + 1;
	}
	if (bad * 100 > lines) {
		snprintf(why, wsize, "invalid UTF-8 in %zu of the first %zu lines; skipped", bad, lines);
		return SKIP_UTF8 + 1;
	}
	return 0;
}

/* Warn with a library message, rewriting its "archive: member: " prefix
 * into this tool's "archive:member: ". */
static void warn_err(const struct run *r, const llr_err *e)
{
	const char *msg = e->msg[0] ? e->msg : llr_strerror(e->code);
	size_t na = r->arch ? strlen(r->arch) : 0, nm = r->member ? strlen(r->member) : 0;
	if (r->arch && r->member && strcmp(r->arch, r->member) &&
	    !strncmp(msg, r->arch, na) && !strncmp(msg + na, ": ", 2) &&
	    !strncmp(msg + na + 2, r->member, nm) && !strncmp(msg + na + 2 + nm, ": ", 2))
		cli_warn("%s: %s", r->doc, msg + na + 2 + nm + 2);
	else
		cli_warn("%s", msg);
}

static void skip_member(struct run *r, int reason, const char *why)
{
	r->skipped[reason]++;
	cli_warn("%s: %s", r->doc, why);
}

static void set_doc(struct run *r, const char *archive, const char *member)
{
	llr_buf_clear(&r->docname);
	int rc = strcmp(archive, member) ? llr_buf_printf(&r->docname, "%s:%s", archive, member)
	                                 : llr_buf_printf(&r->docname, "%s", archive);
	if (rc != LLR_OK)
		cli_oom();
	r->doc = r->docname.data;
	r->arch = archive;
	r->member = member;
}

static int do_member(struct run *r, llr_archive *a, int64_t size);

/* 1: read the member; 0: --include leaves it out; -1: --exclude does. */
static int included(const struct run *r)
{
	for (int i = 0; i < r->n_exclude; i++)
		if (!fnmatch(r->exclude[i], r->member, 0))
			return -1;
	if (!r->n_include)
		return 1;
	for (int i = 0; i < r->n_include; i++)
		if (!fnmatch(r->include[i], r->member, 0))
			return 1;
	return 0;
}

/* A member that is itself an archive or compressed: its members are read
 * in turn, named "archive:member:inner".  When it ends early, the rest of
 * it is skipped with a counted warning; returns -1 only when the outer
 * archive has failed too. */
static int do_nested(struct run *r, llr_archive *a, const char *head, size_t n)
{
	llr_err e = {0};
	llr_archive *na = llr_archive_open_nested(a, head, n, &e);
	if (!na) {
		if (e.code == LLR_ENOMEM)
			cli_oom();
		cli_warn("%s; skipped", e.msg[0] ? e.msg : llr_strerror(e.code));
		r->skipped[SKIP_BROKEN]++;
		r->status = 1;
		return llr_archive_failed(a) ? -1 : 0;
	}
	r->depth++;
	const char *name;
	int64_t size;
	int rc;
	while ((rc = llr_archive_next(na, &name, &size, &e)) > 0) {
		set_doc(r, llr_archive_name(na), name);
		if (do_member(r, na, size) < 0)
			break; /* counted there */
	}
	if (rc < 0) {
		cli_warn("%s; rest skipped", e.msg[0] ? e.msg : llr_strerror(e.code));
		r->skipped[SKIP_BROKEN]++;
		r->status = 1;
	}
	r->depth--;
	llr_archive_close(na);
	return llr_archive_failed(a) ? -1 : 0;
}

/* An HTML member: read whole (within --max-member-bytes), its running
 * text extracted by the parser, then cut as text. */
static int do_html(struct run *r, struct msrc *m)
{
	llr_buf *b = &r->html;
	llr_err e = {0};
	llr_buf_clear(b);
	if (llr_buf_append(b, m->head, m->head_len) != LLR_OK)
		cli_oom();
	for (;;) {
		if (llr_buf_reserve(b, (size_t)1 << 16) != LLR_OK)
			cli_oom();
		ssize_t k = msrc_pull(m, b->data + b->len, (size_t)1 << 16, &e);
		if (k < 0 && m->ioerr) {
			warn_err(r, &e);
			r->skipped[SKIP_BROKEN]++;
			r->status = 1;
			return -1;
		}
		if (k < 0) {
			int over = m->over;
			char why[96];
			snprintf(why, sizeof why, over ? "over --max-member-bytes; skipped" : "binary data (NUL byte); skipped");
			skip_member(r, over ? SKIP_SIZE : SKIP_BINARY, why);
			if (over)
				r->status = 1;
			return 0;
		}
		if (k == 0)
			break;
		b->len += (size_t)k;
	}
	if (llr_html_text(b->data ? b->data : "", b->len, r->doc, r->html_runs, &r->htext, &e) != LLR_OK) {
		if (e.code == LLR_ENOMEM)
			cli_oom();
		warn_err(r, &e);
		r->status = 1;
		return 0;
	}
	r->html_docs++;
	const char *s = r->htext.data, *end = s + r->htext.len;
	while (s && s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = (size_t)((nl ? nl : end) - s);
		if (llr_utf8_valid_prefix(s, len) != len) {
			end_par(r);
		} else {
			feed_text(r, s, len);
			if (r->html_runs)
				flush_text(r); /* a <p> of a run: its end ends a sentence */
		}
		s += len + 1;
	}
	end_par(r);
	return 0;
}

static int feed_member(struct run *r, struct msrc *m);

/* Read one member; returns 0, or -1 when the archive itself failed. */
static int do_member(struct run *r, llr_archive *a, int64_t size)
{
	r->par_index = 0;
	r->member_lines = r->member_bad = 0;
	r->invalid_lines = r->untagged = 0;
	r->sent_bad = 0;
	r->doc_content = 0;
	llr_disc_para_clear(&r->para);
	llr_buf_clear(&r->ptext);
	llr_buf_clear(&r->sent);

	char why[160];
	if (size >= 0 && (uint64_t)size > r->max_member) {
		snprintf(why, sizeof why, "%" PRId64 " bytes, over --max-member-bytes %" PRIu64 "; skipped", size, r->max_member);
		skip_member(r, SKIP_SIZE, why);
		r->status = 1;
		return 0;
	}
	static char head[SNIFF_BYTES];
	struct msrc m = {.a = a, .head = head, .cap = r->max_member, .head_nul_ok = 1};
	llr_err e = {0};
	while (m.head_len < SNIFF_BYTES) {
		ssize_t k = msrc_pull(&m, head + m.head_len, SNIFF_BYTES - m.head_len, &e);
		if (k < 0 && m.ioerr) {
			warn_err(r, &e);
			r->skipped[SKIP_BROKEN]++;
			r->status = 1;
			return -1;
		}
		if (k < 0 && m.over) {
			snprintf(why, sizeof why, "over --max-member-bytes %" PRIu64 "; skipped", r->max_member);
			skip_member(r, SKIP_SIZE, why);
			r->status = 1;
			return 0;
		}
		if (k < 0 && m.binary) {
			skip_member(r, SKIP_BINARY, "binary data (NUL byte); skipped");
			return 0;
		}
		if (k <= 0)
			break;
		m.head_len += (size_t)k;
	}
	m.head_nul_ok = 0;
	if (r->depth < MAX_DEPTH && llr_archive_sniff(head, m.head_len))
		return do_nested(r, a, head, m.head_len);
	int in = included(r);
	if (in <= 0) {
		*(in ? &r->dropped : &r->excluded) += 1;
		return 0;
	}
	if (r->format == FMT_TEXT && llr_html_is(r->member, head, m.head_len) && !memchr(head, '\0', m.head_len))
		return do_html(r, &m);
	int reason = sniff(&m, m.eof, why, sizeof why);
	if (reason) {
		skip_member(r, reason - 1, why);
		return 0;
	}

	return feed_member(r, &m);
}

/* The member's lines, fed to the --format reader; returns as do_member. */
static int feed_member(struct run *r, struct msrc *m)
{
	char why[160];
	llr_err e = {0};
	llr_lines *l = llr_lines_from(msrc_read, m, r->doc, LLR_LINES_NO_VALIDATE);
	if (!l)
		cli_oom();
	const char *line;
	size_t len;
	int rc, failed = 0, wrong = 0;
	while ((rc = llr_lines_next(l, &line, &len, &e)) > 0) {
		size_t lineno = llr_lines_lineno(l);
		r->lines++;
		if (cli_progress_due(&r->prog))
			cli_progress_show(&r->prog, r->lines, "lines", r->lines, "lines", cli_progress_fraction(&r->prog));
		if (lineno == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) {
			line += 3; /* a byte order mark */
			len -= 3;
		}
		if (llr_utf8_valid_prefix(line, len) != len) {
			r->invalid_lines++;
			if (r->format == FMT_CONLLU)
				r->sent_bad = 1;
			else
				end_par(r); /* never pair across a dropped line */
			continue;
		}
		int no;
		switch (r->format) {
		case FMT_TEXT: no = feed_text(r, line, len); break;
		case FMT_TAGGED: no = feed_tagged(r, line, len); break;
		case FMT_CONLLU: no = feed_conllu(r, line, len, lineno); break;
		default: no = feed_tokens(r, line, len); break;
		}
		if (no) {
			snprintf(why, sizeof why, "not %s (line %zu); skipped", fmt_what[r->format], lineno);
			wrong = 1;
			break;
		}
	}
	if (rc < 0) {
		failed = 1;
		if (m->binary) {
			cli_warn("%s: binary data (NUL byte) after line %zu; rest of member skipped", r->doc, llr_lines_lineno(l));
			r->skipped[SKIP_BINARY]++;
		} else if (m->over) {
			cli_warn("%s: over --max-member-bytes %" PRIu64 " after line %zu; rest of member skipped", r->doc, r->max_member, llr_lines_lineno(l));
			r->skipped[SKIP_SIZE]++;
			r->status = 1;
		} else {
			warn_err(r, &e);
			if (m->ioerr)
				r->skipped[SKIP_BROKEN]++;
			r->status = 1;
		}
	}
	llr_lines_close(l);
	if (wrong) {
		skip_member(r, SKIP_FORMAT, why);
		return 0;
	}
	if (failed) {
		/* The unfinished paragraph may be cut mid-sentence: dropped. */
		llr_disc_para_clear(&r->para);
		llr_buf_clear(&r->ptext);
		llr_buf_clear(&r->sent);
	} else {
		if (r->format == FMT_CONLLU)
			conllu_end_sentence(r);
		end_par(r);
	}
	if (r->invalid_lines)
		cli_warn("%s: %" PRIu64 " line%s with invalid UTF-8 dropped", r->doc, r->invalid_lines, r->invalid_lines == 1 ? "" : "s");
	if (r->untagged)
		cli_warn("%s: %" PRIu64 " token%s without /TAG kept whole", r->doc, r->untagged, r->untagged == 1 ? "" : "s");
	return (failed && m->ioerr) ? -1 : 0;
}

static void do_operand(struct run *r, const char *path)
{
	llr_err e = {0};
	r->arch = r->member = NULL;
	llr_archive *a = llr_archive_open(path, &e);
	if (!a) {
		cli_warn("%s", e.msg[0] ? e.msg : llr_strerror(e.code));
		r->status = 1;
		return;
	}
	cli_progress_archive(&r->prog, path, a);
	const char *name;
	int64_t size;
	int rc, n = 0;
	while ((rc = llr_archive_next(a, &name, &size, &e)) > 0) {
		n++;
		set_doc(r, llr_archive_name(a), name);
		if (do_member(r, a, size) < 0) {
			rc = 0;
			break;
		}
	}
	if (rc < 0) {
		warn_err(r, &e);
		r->skipped[SKIP_BROKEN]++;
		r->status = 1;
	} else if (n == 0 && rc == 0) {
		cli_warn("%s: no documents (empty input or archive)", llr_archive_name(a));
	}
	llr_archive_close(a);
}

static int parse_tasks(const char *s)
{
	int mask = 0;
	const char *p = s;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 5 && !strncmp(p, "order", 5))
			mask |= LLR_TASK_ORDER;
		else if (n == 4 && !strncmp(p, "next", 4))
			mask |= LLR_TASK_NEXT;
		else if (n == 4 && !strncmp(p, "conj", 4))
			mask |= LLR_TASK_CONJ;
		else if (n == 3 && !strncmp(p, "all", 3))
			mask |= LLR_TASK_ALL;
		else
			cli_usage_error(usage, "--tasks: unknown task '%.*s' (order, next, conj)", (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	if (!mask)
		cli_usage_error(usage, "--tasks: no task given");
	return mask;
}

/* --html-unit: 0 for p (each block element a paragraph), 1 for run. */
static int parse_html_unit(const char *s)
{
	if (strcmp(s, "p") && strcmp(s, "run"))
		cli_usage_error(usage, "--html-unit: unknown unit '%s' (p, run)", s);
	return !strcmp(s, "run");
}

static uint64_t parse_bytes(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		cli_usage_error(usage, "--max-member-bytes: not a size: '%s'", s);
	int shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || v == 0 || v > (1ULL << 50) >> shift)
		cli_usage_error(usage, "--max-member-bytes: not a size in [1, 2^50]: '%s'", s);
	return (uint64_t)v << shift;
}

static void summary(const struct run *r, const llr_disc_markers *mk)
{
	cli_warn("%" PRIu64 " document%s, %" PRIu64 " paragraph%s, %" PRIu64 " sentence%s",
	         r->docs, r->docs == 1 ? "" : "s", r->paras, r->paras == 1 ? "" : "s",
	         r->sents, r->sents == 1 ? "" : "s");
	if (!r->sentences) {
		llr_buf b = {0};
		const llr_disc_tasks *c = r->ctx;
		llr_buf_printf(&b, "pairs: ORDER %zu, NEXT %zu, CONJ %zu", llr_disc_tasks_count(c, LLR_TASK_ORDER),
		               llr_disc_tasks_count(c, LLR_TASK_NEXT), llr_disc_tasks_count(c, LLR_TASK_CONJ));
		if (mk && (r->tasks & LLR_TASK_CONJ)) {
			llr_buf_printf(&b, " (");
			for (size_t i = 0; i < llr_disc_markers_nclass(mk); i++)
				llr_buf_printf(&b, "%s%s %zu", i ? ", " : "", llr_disc_markers_class(mk, i), llr_disc_tasks_class_count(c, i));
			llr_buf_printf(&b, ")");
		}
		cli_warn("%s", b.data ? b.data : "pairs: out of memory");
		llr_buf_free(&b);
	}
	if (r->html_docs)
		cli_warn("%" PRIu64 " HTML document%s", r->html_docs, r->html_docs == 1 ? "" : "s");
	if (r->excluded)
		cli_warn("%" PRIu64 " member%s not matching --include", r->excluded, r->excluded == 1 ? "" : "s");
	if (r->dropped)
		cli_warn("%" PRIu64 " member%s matching --exclude", r->dropped, r->dropped == 1 ? "" : "s");
	uint64_t total = 0;
	for (int i = 0; i < SKIP_N; i++)
		total += r->skipped[i];
	if (total) {
		llr_buf b = {0};
		llr_buf_printf(&b, "skipped %" PRIu64 " member%s:", total, total == 1 ? "" : "s");
		int k = 0;
		for (int i = 0; i < SKIP_N; i++)
			if (r->skipped[i])
				llr_buf_printf(&b, "%s %" PRIu64 " %s", k++ ? "," : "", r->skipped[i], skip_names[i]);
		cli_warn("%s", b.data ? b.data : "skipped: out of memory");
		llr_buf_free(&b);
	}
}

/* The command line: disc-pairs.1 is its spec. */
enum { O_FORMAT = 256,
       O_LANG,
       O_TASKS,
       O_MARKERS,
       O_MINPAR,
       O_STRIDE,
       O_MINLEN,
       O_MAXLEN,
       O_MAXRATIO,
       O_MAXMEMBER,
       O_INCLUDE,
       O_EXCLUDE,
       O_HTMLUNIT,
       O_PROV,
       O_SENT,
       O_LIST };
static const struct option longopts[] = {
    {"lower", no_argument, NULL, 'l'},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"seed", required_argument, NULL, 's'},
    {"format", required_argument, NULL, O_FORMAT},
    {"lang", required_argument, NULL, O_LANG},
    {"tasks", required_argument, NULL, O_TASKS},
    {"markers", required_argument, NULL, O_MARKERS},
    {"min-par", required_argument, NULL, O_MINPAR},
    {"next-stride", required_argument, NULL, O_STRIDE},
    {"min-len", required_argument, NULL, O_MINLEN},
    {"max-len", required_argument, NULL, O_MAXLEN},
    {"max-ratio", required_argument, NULL, O_MAXRATIO},
    {"max-member-bytes", required_argument, NULL, O_MAXMEMBER},
    {"include", required_argument, NULL, O_INCLUDE},
    {"exclude", required_argument, NULL, O_EXCLUDE},
    {"html-unit", required_argument, NULL, O_HTMLUNIT},
    {"provenance", no_argument, NULL, O_PROV},
    {"sentences", no_argument, NULL, O_SENT},
    {"list-markers", no_argument, NULL, O_LIST},
    CLI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
	cli_init(argv[0], "disc-pairs");
	cli_set_help(help);
	struct run r = {0};
	llr_disc_opts o = {.tasks = LLR_TASK_ALL, .min_par = 9, .min_len = 5, .max_len = 50, .max_ratio = 5.0, .seed = 1};
	const char *lang = "en", *markers_path = NULL, *out_path = NULL;
	int list = 0;
	r.max_member = DEFAULT_MAX_MEMBER;
	int c;
	while ((c = cli_getopt(argc, argv, ":hlo:qs:", longopts, usage)) != -1) {
		switch (c) {
		case 'l': r.lower = 1; break;
		case 'q': r.quiet = 1; break;
		case 'o': out_path = optarg; break;
		case 's': o.seed = (uint64_t)cli_parse_int(usage, "-s", optarg, 0, INT64_MAX); break;
		case O_FORMAT: {
			int f = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, fmt_names[i]))
					f = i;
			if (f < 0)
				cli_usage_error(usage, "--format: unknown format '%s' (text, tagged, conllu, tokens)", optarg);
			r.format = f;
			break;
		}
		case O_LANG:
			if (strcmp(optarg, "en") && strcmp(optarg, "fr"))
				cli_usage_error(usage, "--lang: unknown language '%s' (en, fr)", optarg);
			lang = optarg;
			break;
		case O_TASKS: o.tasks = parse_tasks(optarg); break;
		case O_MARKERS: markers_path = optarg; break;
		case O_MINPAR: o.min_par = (int)cli_parse_int(usage, "--min-par", optarg, LLR_DISC_NEXT_CONTEXT + LLR_DISC_NEXT_CANDIDATES, 1000000); break;
		case O_STRIDE: o.next_stride = (int)cli_parse_int(usage, "--next-stride", optarg, 1, 1000000); break;
		case O_MINLEN: o.min_len = (int)cli_parse_int(usage, "--min-len", optarg, 1, 1000000); break;
		case O_MAXLEN: o.max_len = (int)cli_parse_int(usage, "--max-len", optarg, 1, 1000000); break;
		case O_MAXRATIO: o.max_ratio = cli_parse_double(usage, "--max-ratio", optarg, 1.0, 1e9); break;
		case O_MAXMEMBER: r.max_member = parse_bytes(optarg); break;
		case O_INCLUDE:
			if (r.n_include == MAX_INCLUDE)
				cli_usage_error(usage, "--include: more than %d patterns", MAX_INCLUDE);
			r.include[r.n_include++] = optarg;
			break;
		case O_EXCLUDE:
			if (r.n_exclude == MAX_INCLUDE)
				cli_usage_error(usage, "--exclude: more than %d patterns", MAX_INCLUDE);
			r.exclude[r.n_exclude++] = optarg;
			break;
		case O_HTMLUNIT: r.html_runs = parse_html_unit(optarg); break;
		case O_PROV: r.provenance = 1; break;
		case O_SENT: r.sentences = 1; break;
		case O_LIST: list = 1; break;
		}
	}
	if (o.min_len > o.max_len)
		cli_usage_error(usage, "--min-len %d is over --max-len %d", o.min_len, o.max_len);
	o.provenance = r.provenance;
	r.tasks = o.tasks;

	llr_err e = {0};
	llr_tok_opts to = {.lower = r.lower, .lang = lang};
	r.tok = llr_tokenizer_new(&to, &e);
	if (!r.tok)
		cli_die_err(&e);
	llr_disc_markers *mk = NULL;
	if (list || ((o.tasks & LLR_TASK_CONJ) && !r.sentences)) {
		mk = markers_path ? llr_disc_markers_load(markers_path, r.tok, &e) : llr_disc_markers_builtin(lang, r.tok, &e);
		if (!mk)
			cli_die_err(&e);
	}
	o.markers = mk;
	if (list) {
		if (optind < argc)
			cli_usage_error(usage, "--list-markers takes no file operands");
		for (size_t i = 0; i < llr_disc_markers_count(mk); i++) {
			size_t cls;
			const char *ph = llr_disc_markers_phrase(mk, i, &cls);
			printf("%s\t%s\n", ph, llr_disc_markers_class(mk, cls));
		}
		cli_flush_stdout();
		llr_disc_markers_free(mk);
		llr_tokenizer_free(r.tok);
		return 0;
	}

	cli_output out;
	cli_output_open(&out, out_path);
	r.out = out.fp;
	if (!(r.ctx = llr_disc_tasks_new(&o, r.out, &e)))
		cli_die_err(&e);

	cli_progress_init(&r.prog, r.quiet, out.fp == stdout);
	cli_progress_inputs(&r.prog, argv + optind, argc - optind);
	if (optind == argc)
		do_operand(&r, "-");
	for (int i = optind; i < argc; i++)
		do_operand(&r, argv[i]);
	cli_progress_clear();

	if (!r.quiet)
		summary(&r, mk);
	cli_output_close(&out);
	llr_disc_tasks_free(r.ctx);
	llr_disc_markers_free(mk);
	llr_tokenizer_free(r.tok);
	llr_disc_para_free(&r.para);
	llr_buf_free(&r.ptext);
	llr_buf_free(&r.tokout);
	llr_buf_free(&r.norm);
	llr_buf_free(&r.sent);
	llr_buf_free(&r.lbuf);
	llr_buf_free(&r.prov);
	llr_buf_free(&r.docname);
	llr_buf_free(&r.html);
	llr_buf_free(&r.htext);
	return r.status;
}
