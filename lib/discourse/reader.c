/*
 * reader.c - the documents of disc-pairs: every member of an archive
 * (of any format libarchive reads, archives nested in it, or a single
 * possibly compressed text), bounded in size, judged text or binary from
 * its head, HTML sent through html.c, the rest read as lines in the
 * chosen format (formats.c).  Problems with a member are notices to the
 * caller's callback and the member is skipped and counted; only running
 * out of memory (or the paragraph callback's error) stops the reading.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

#define SNIFF_BYTES ((size_t)64 << 10) /* the text/binary decision looks this far */
#define MAX_DEPTH 8                    /* nested archives: a .deb is 2 deep */

static const char *const fmt_what[] = {"text", "word/TAG text", "CoNLL-U", "tokens"};

void llr_disc_note(llr_disc_reader *r, int error, const char *fmt, ...)
{
	if (!r->o.notice)
		return;
	va_list ap;
	llr_buf_clear(&r->msg);
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || llr_buf_reserve(&r->msg, (size_t)n + 1) != LLR_OK) {
		llr_disc_oom(r);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(r->msg.data, (size_t)n + 1, fmt, ap);
	va_end(ap);
	r->msg.len = (size_t)n;
	r->o.notice(r->o.arg, error, r->msg.data);
}

void llr_disc_oom(llr_disc_reader *r)
{
	if (!r->rc)
		r->rc = LLR_ENOMEM;
}

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

/* Decide from the head whether the member is text: 0, or an
 * LLR_DISC_SKIP_ reason + 1 with a message in why. */
static int sniff(const struct msrc *m, int complete, char *why, size_t wsize)
{
	if (memchr(m->head, '\0', m->head_len)) {
		snprintf(why, wsize, "binary data (NUL byte); skipped");
		return LLR_DISC_SKIP_BINARY + 1;
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
		return LLR_DISC_SKIP_UTF8 + 1;
	}
	return 0;
}

/* An error of the library as a notice, its "archive: member: " prefix
 * rewritten into the document's name "archive:member: ". */
static void note_err(llr_disc_reader *r, const llr_err *e)
{
	const char *msg = e->msg[0] ? e->msg : llr_strerror(e->code);
	size_t na = r->arch ? strlen(r->arch) : 0, nm = r->member ? strlen(r->member) : 0;
	if (r->arch && r->member && strcmp(r->arch, r->member) &&
	    !strncmp(msg, r->arch, na) && !strncmp(msg + na, ": ", 2) &&
	    !strncmp(msg + na + 2, r->member, nm) && !strncmp(msg + na + 2 + nm, ": ", 2))
		llr_disc_note(r, 1, "%s: %s", r->doc, msg + na + 2 + nm + 2);
	else
		llr_disc_note(r, 1, "%s", msg);
}

/* A member skipped for reason; only one over the size cap is an error. */
static void skip_member(llr_disc_reader *r, int reason, const char *why)
{
	r->st.skipped[reason]++;
	llr_disc_note(r, reason == LLR_DISC_SKIP_SIZE, "%s: %s", r->doc, why);
}

static void set_doc(llr_disc_reader *r, const char *archive, const char *member)
{
	llr_buf_clear(&r->docname);
	int rc = strcmp(archive, member) ? llr_buf_printf(&r->docname, "%s:%s", archive, member)
	                                 : llr_buf_printf(&r->docname, "%s", archive);
	if (rc != LLR_OK)
		llr_disc_oom(r);
	r->doc = r->docname.data ? r->docname.data : "";
	r->arch = archive;
	r->member = member;
}

/* 1: read the member; 0: the include patterns leave it out; -1: an
 * exclude pattern does. */
static int included(const llr_disc_reader *r)
{
	for (int i = 0; i < r->o.n_exclude; i++)
		if (!fnmatch(r->o.exclude[i], r->member, 0))
			return -1;
	if (!r->o.n_include)
		return 1;
	for (int i = 0; i < r->o.n_include; i++)
		if (!fnmatch(r->o.include[i], r->member, 0))
			return 1;
	return 0;
}

static int do_member(llr_disc_reader *r, llr_archive *a, int64_t size);

/* Every member of a in turn; *n counts them.  The rc of the last
 * llr_archive_next (< 0: the archive failed, err says why), or 0 when a
 * member's reading failed the archive (counted there) or reading stops. */
static int members(llr_disc_reader *r, llr_archive *a, int *n, llr_err *err)
{
	const char *name;
	int64_t size;
	int rc;
	while ((rc = llr_archive_next(a, &name, &size, err)) > 0) {
		++*n;
		set_doc(r, llr_archive_name(a), name);
		if (r->rc || do_member(r, a, size) < 0 || r->rc)
			return 0;
	}
	return rc;
}

/* A member that is itself an archive or compressed: its members are read
 * in turn, named "archive:member:inner".  When it ends early, the rest of
 * it is skipped with a counted warning; returns -1 only when the outer
 * archive has failed too. */
static int do_nested(llr_disc_reader *r, llr_archive *a, const char *head, size_t n)
{
	llr_err e = {0};
	llr_archive *na = llr_archive_open_nested(a, head, n, &e);
	if (!na) {
		if (e.code == LLR_ENOMEM) {
			llr_disc_oom(r);
			return 0;
		}
		llr_disc_note(r, 1, "%s; skipped", e.msg[0] ? e.msg : llr_strerror(e.code));
		r->st.skipped[LLR_DISC_SKIP_BROKEN]++;
		return llr_archive_failed(a) ? -1 : 0;
	}
	const char *arch = r->arch, *member = r->member;
	r->depth++;
	int count = 0;
	if (members(r, na, &count, &e) < 0) {
		llr_disc_note(r, 1, "%s; rest skipped", e.msg[0] ? e.msg : llr_strerror(e.code));
		r->st.skipped[LLR_DISC_SKIP_BROKEN]++;
	}
	r->depth--;
	llr_archive_close(na);
	/* The inner names went with na: a later message on a names this member. */
	set_doc(r, arch, member);
	return llr_archive_failed(a) ? -1 : 0;
}

/* An HTML member: read whole (within max_member bytes), its running text
 * extracted by the parser, then cut as text. */
static int do_html(llr_disc_reader *r, struct msrc *m)
{
	llr_buf *b = &r->html;
	llr_err e = {0};
	llr_buf_clear(b);
	if (llr_buf_append(b, m->head, m->head_len) != LLR_OK) {
		llr_disc_oom(r);
		return 0;
	}
	for (;;) {
		if (llr_buf_reserve(b, (size_t)1 << 16) != LLR_OK) {
			llr_disc_oom(r);
			return 0;
		}
		ssize_t k = msrc_pull(m, b->data + b->len, (size_t)1 << 16, &e);
		if (k < 0 && m->ioerr) {
			note_err(r, &e);
			r->st.skipped[LLR_DISC_SKIP_BROKEN]++;
			return -1;
		}
		if (k < 0) {
			int over = m->over;
			skip_member(r, over ? LLR_DISC_SKIP_SIZE : LLR_DISC_SKIP_BINARY,
			            over ? "over --max-member-bytes; skipped" : "binary data (NUL byte); skipped");
			return 0;
		}
		if (k == 0)
			break;
		b->len += (size_t)k;
	}
	if (llr_html_text(b->data ? b->data : "", b->len, r->doc, r->o.html_runs, &r->htext, &e) != LLR_OK) {
		if (e.code == LLR_ENOMEM)
			llr_disc_oom(r);
		else
			note_err(r, &e);
		return 0;
	}
	r->st.html_docs++;
	const char *s = r->htext.data ? r->htext.data : "", *end = s + r->htext.len;
	while (s < end && !r->rc) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = (size_t)((nl ? nl : end) - s);
		if (llr_utf8_valid_prefix(s, len) != len)
			llr_disc_end_par(r);
		else /* under --html-unit run, the end of a <p> ends a sentence */
			llr_disc_feed_html_line(r, s, len, r->o.html_runs);
		s += len + 1;
	}
	llr_disc_end_par(r);
	return 0;
}

static int feed_member(llr_disc_reader *r, struct msrc *m);

/* Read one member; returns 0, or -1 when the archive itself failed. */
static int do_member(llr_disc_reader *r, llr_archive *a, int64_t size)
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
	if (size >= 0 && (uint64_t)size > r->o.max_member) {
		snprintf(why, sizeof why, "%" PRId64 " bytes, over --max-member-bytes %" PRIu64 "; skipped", size, r->o.max_member);
		skip_member(r, LLR_DISC_SKIP_SIZE, why);
		return 0;
	}
	char *head = r->head;
	struct msrc m = {.a = a, .head = head, .cap = r->o.max_member, .head_nul_ok = 1};
	llr_err e = {0};
	while (m.head_len < SNIFF_BYTES) {
		ssize_t k = msrc_pull(&m, head + m.head_len, SNIFF_BYTES - m.head_len, &e);
		if (k < 0 && m.ioerr) {
			note_err(r, &e);
			r->st.skipped[LLR_DISC_SKIP_BROKEN]++;
			return -1;
		}
		if (k < 0 && m.over) {
			snprintf(why, sizeof why, "over --max-member-bytes %" PRIu64 "; skipped", r->o.max_member);
			skip_member(r, LLR_DISC_SKIP_SIZE, why);
			return 0;
		}
		if (k < 0 && m.binary) {
			skip_member(r, LLR_DISC_SKIP_BINARY, "binary data (NUL byte); skipped");
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
		*(in ? &r->st.dropped : &r->st.excluded) += 1;
		return 0;
	}
	if (r->o.format == LLR_DISC_FMT_TEXT && llr_html_is(r->member, head, m.head_len) && !memchr(head, '\0', m.head_len))
		return do_html(r, &m);
	int reason = sniff(&m, m.eof, why, sizeof why);
	if (reason) {
		skip_member(r, reason - 1, why);
		return 0;
	}
	return feed_member(r, &m);
}

/* The end of a member's lines that failed: why, counted. */
static void member_failed(llr_disc_reader *r, const struct msrc *m, const llr_lines *l, const llr_err *e)
{
	if (m->binary) {
		llr_disc_note(r, 0, "%s: binary data (NUL byte) after line %zu; rest of member skipped", r->doc, llr_lines_lineno(l));
		r->st.skipped[LLR_DISC_SKIP_BINARY]++;
	} else if (m->over) {
		llr_disc_note(r, 1, "%s: over --max-member-bytes %" PRIu64 " after line %zu; rest of member skipped", r->doc, r->o.max_member, llr_lines_lineno(l));
		r->st.skipped[LLR_DISC_SKIP_SIZE]++;
	} else {
		note_err(r, e);
		if (m->ioerr)
			r->st.skipped[LLR_DISC_SKIP_BROKEN]++;
	}
}

/* The member's lines, fed to the format's reader; returns as do_member. */
static int feed_member(llr_disc_reader *r, struct msrc *m)
{
	llr_err e = {0};
	llr_lines *l = llr_lines_from(msrc_read, m, r->doc, LLR_LINES_NO_VALIDATE);
	if (!l) {
		llr_disc_oom(r);
		return 0;
	}
	const char *line;
	size_t len, wrong = 0;
	int rc = 0;
	while (!r->rc && (rc = llr_lines_next(l, &line, &len, &e)) > 0) {
		size_t lineno = llr_lines_lineno(l);
		r->st.lines++;
		if (r->o.line)
			r->o.line(r->o.arg, r->st.lines);
		if (lineno == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) {
			line += 3; /* a byte order mark */
			len -= 3;
		}
		if (llr_utf8_valid_prefix(line, len) != len) {
			llr_disc_drop_line(r);
		} else if (llr_disc_feed_line(r, line, len, lineno)) {
			wrong = lineno;
			break;
		}
	}
	int failed = !r->rc && rc < 0;
	if (failed)
		member_failed(r, m, l, &e);
	llr_lines_close(l);
	if (wrong) {
		char why[160];
		snprintf(why, sizeof why, "not %s (line %zu); skipped", fmt_what[r->o.format], wrong);
		skip_member(r, LLR_DISC_SKIP_FORMAT, why);
		return 0;
	}
	llr_disc_end_member(r, failed);
	if (r->invalid_lines)
		llr_disc_note(r, 0, "%s: %" PRIu64 " line%s with invalid UTF-8 dropped", r->doc, r->invalid_lines, r->invalid_lines == 1 ? "" : "s");
	if (r->untagged)
		llr_disc_note(r, 0, "%s: %" PRIu64 " token%s without /TAG kept whole", r->doc, r->untagged, r->untagged == 1 ? "" : "s");
	return (failed && m->ioerr) ? -1 : 0;
}

llr_disc_reader *llr_disc_reader_new(const llr_disc_read_opts *o, llr_err *err)
{
	if (o->format < LLR_DISC_FMT_TEXT || o->format > LLR_DISC_FMT_TOKENS || (!o->tok && o->format == LLR_DISC_FMT_TEXT)) {
		llr_err_set(err, LLR_EINVAL, "disc reader: no such format, or text without a tokenizer");
		return NULL;
	}
	llr_disc_reader *r = llr_calloc(1, sizeof *r);
	if (r && !(r->head = malloc(SNIFF_BYTES))) {
		free(r);
		r = NULL;
	}
	if (!r) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	r->o = *o;
	return r;
}

void llr_disc_reader_free(llr_disc_reader *r)
{
	if (!r)
		return;
	llr_disc_para_free(&r->para);
	llr_buf *bufs[] = {&r->ptext, &r->tokout, &r->norm, &r->sent, &r->lbuf, &r->docname, &r->html, &r->htext, &r->msg};
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		llr_buf_free(bufs[i]);
	free(r->head);
	free(r);
}

int llr_disc_reader_read(llr_disc_reader *r, llr_archive *a, llr_err *err)
{
	llr_err e = {0};
	int n = 0;
	r->arch = r->member = NULL;
	int rc = members(r, a, &n, &e);
	if (r->rc)
		return llr_err_set(err, r->rc, "%s", llr_strerror(r->rc));
	if (rc < 0) {
		note_err(r, &e);
		r->st.skipped[LLR_DISC_SKIP_BROKEN]++;
	} else if (n == 0) {
		llr_disc_note(r, 0, "%s: no documents (empty input or archive)", llr_archive_name(a));
	}
	return r->rc ? llr_err_set(err, r->rc, "%s", llr_strerror(r->rc)) : LLR_OK;
}

const llr_disc_stats *llr_disc_reader_stats(const llr_disc_reader *r)
{
	return &r->st;
}
