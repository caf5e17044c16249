/*
 * reader.h - private to lib/discourse: the state of an llr_disc_reader,
 * shared by reader.c (archives, members, the text/binary decision,
 * HTML) and formats.c (the lines of the four input formats cut into
 * paragraphs of sentences).  Not API.
 */
#ifndef LLR_DISCOURSE_READER_H
#define LLR_DISCOURSE_READER_H

#include "internal.h"

struct llr_disc_reader {
	llr_disc_read_opts o;
	llr_disc_stats st;
	int rc;    /* the first failure (LLR_ENOMEM, or the paragraph callback's): reading stops */
	int depth; /* nesting of the current archive */
	char *head; /* the sniffed head of the current member */

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
	llr_buf ptext, tokout, norm, sent, lbuf, docname, html, htext, msg;
};

/* A message on the current document to the notice callback; error: a
 * runtime or data error, not a note. */
void llr_disc_note(llr_disc_reader *r, int error, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/* Out of memory: remembered in r->rc (reading stops). */
void llr_disc_oom(llr_disc_reader *r);

/* formats.c: one line of the member in r->o.format (valid UTF-8, no
 * newline); 1 when its first content line shows the member is not in
 * that format, else 0. */
int llr_disc_feed_line(llr_disc_reader *r, const char *s, size_t len, size_t lineno);
/* A line dropped (invalid UTF-8): no example pairs across it. */
void llr_disc_drop_line(llr_disc_reader *r);
/* HTML's running text, one line of a paragraph; with end, that line
 * ends a sentence (--html-unit run). */
void llr_disc_feed_html_line(llr_disc_reader *r, const char *s, size_t len, int end);
/* The member ended: its last sentence and paragraph are given out; with
 * cut, it ended early and the unfinished paragraph is dropped instead. */
void llr_disc_end_member(llr_disc_reader *r, int cut);
/* The paragraph so far is given out (a boundary). */
void llr_disc_end_par(llr_disc_reader *r);

#endif
