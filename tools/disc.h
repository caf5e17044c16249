/*
 * disc.h - CLI-only helpers of disc-pairs: the discourse-marker tables
 * (disc_markers.c) and the builders of ORDER, NEXT and CONJ examples from
 * one paragraph of tokenised sentences (disc_tasks.c).
 *
 * Not library API: nothing here is in lib/ or llrnn.h, and none of it
 * reads archives or parses input formats (that is disc-pairs.c).
 */
#ifndef LLR_DISC_H
#define LLR_DISC_H

#include <stdio.h>

#include "llrnn.h"

/* ------------------------------------------------------------ markers */

/* A table of discourse markers: phrases (stored tokenised and lowercased)
 * with a class each.  Classes are named; the built-in tables use the nine
 * classes of Jernite, Bowman & Sontag (2017), a --markers file may use any
 * names (in order of first appearance). */
typedef struct disc_markers disc_markers;

/* The built-in table for lang "en" or "fr" (LLR_EINVAL otherwise).  Each
 * phrase is tokenised with tok, so markers split exactly as the text is. */
disc_markers *disc_markers_builtin(const char *lang, llr_tokenizer *tok, llr_err *err);
/* A table read from `phrase<TAB>class` lines; blank lines and lines
 * starting with '#' are ignored.  Errors name file:line. */
disc_markers *disc_markers_load(const char *path, llr_tokenizer *tok, llr_err *err);
void disc_markers_free(disc_markers *m);
size_t disc_markers_count(const disc_markers *m);
size_t disc_markers_nclass(const disc_markers *m);
const char *disc_markers_class(const disc_markers *m, size_t c);
/* Phrase i of the table (tokenised, lowercased) and its class. */
const char *disc_markers_phrase(const disc_markers *m, size_t i, size_t *cls);

/* Does the sentence s[0..len) (tokens separated by single spaces) begin
 * with a marker followed by a "," token?  Matching is case-insensitive,
 * on token boundaries, longest marker first.  Returns the class (>= 0)
 * and sets *skip to the bytes to remove (marker, comma and the space
 * after it) and *ntok to the tokens removed; -1 if no marker;
 * LLR_ENOMEM (< -1) on failure.  scratch is working memory. */
int disc_markers_match(const disc_markers *m, const char *s, size_t len, size_t *skip, int *ntok, llr_buf *scratch);

/* -------------------------------------------------------------- tasks */

enum { DISC_ORDER = 1, DISC_NEXT = 2, DISC_CONJ = 4, DISC_ALL = 7 };

#define DISC_NEXT_CONTEXT 3
#define DISC_NEXT_CANDIDATES 5

/* One paragraph: sentences as single-space separated tokens. */
typedef struct disc_para {
	llr_buf text;   /* sentences back to back, each NUL-terminated */
	size_t *off;    /* n: offset of sentence i in text */
	size_t *len;    /* n: its length in bytes */
	int *ntok;      /* n: its number of tokens */
	size_t n, cap;
} disc_para;

void disc_para_clear(disc_para *p);
void disc_para_free(disc_para *p);
/* Add one sentence: runs of spaces, tabs, CR and other ASCII controls
 * become one space, leading and trailing ones are dropped; an empty
 * sentence is not added.  LLR_OK or LLR_ENOMEM. */
int disc_para_add(disc_para *p, const char *s, size_t len);
static inline const char *disc_para_sent(const disc_para *p, size_t i)
{
	return p->text.data + p->off[i];
}

typedef struct disc_opts {
	int tasks;        /* DISC_* mask */
	int min_par;      /* NEXT: sentences a paragraph needs */
	int next_stride;  /* NEXT: 0 = blocks of min_par; s = a window of min_par every s sentences */
	int min_len, max_len; /* sentence length bounds, in tokens */
	double max_ratio; /* pairs: longer / shorter at most this */
	int provenance;   /* append a provenance column */
	const disc_markers *markers; /* CONJ */
	uint64_t seed;
} disc_opts;

typedef struct disc_ctx {
	disc_opts o;
	FILE *out;
	llr_rng rng_order, rng_next;
	size_t n_order, n_next, n_conj;
	size_t *n_class; /* per marker class */
	llr_buf scratch, line;
	int32_t *pool;
	size_t pool_cap;
} disc_ctx;

/* Set up a context writing to out (o->markers must outlive it).  The
 * tasks draw from independent generators seeded from o->seed, so the
 * ORDER lines of a run are the same whatever other tasks are chosen. */
int disc_ctx_init(disc_ctx *c, const disc_opts *o, FILE *out, llr_err *err);
void disc_ctx_free(disc_ctx *c);
/* Write the examples of one paragraph.  prov ("doc:P") is the provenance
 * column, used when o->provenance is set.  LLR_OK or LLR_ENOMEM; write
 * errors are left to the caller's ferror check. */
int disc_paragraph(disc_ctx *c, const disc_para *p, const char *prov);

/* --------------------------------------------------------------- html */

/* Is a member HTML: its name ends in .html, .htm or .xhtml, or its head
 * starts with <!DOCTYPE html or <html (case-insensitive, after a BOM and
 * white space)? */
int disc_html_is(const char *name, const char *head, size_t n);
/* The running text of an HTML document (libxml2's HTML parser, with its
 * recovery for malformed markup) into out: one line per paragraph, white
 * space collapsed, paragraphs separated by blank lines.  Text in block
 * elements (p, div, li, dd, blockquote, ...) makes paragraphs; headings,
 * pre, tables, scripts, styles, navigation and Sphinx page furniture are
 * left out.  With runs, adjacent <p> elements (siblings with nothing but
 * white space, comments or empty inline elements between them) make one
 * paragraph, one line each.  url names the document in messages.  LLR_OK,
 * LLR_ENOMEM or LLR_ERANGE (over 2 GiB). */
int disc_html_text(const char *buf, size_t len, const char *url, int runs, llr_buf *out, llr_err *err);

#endif
