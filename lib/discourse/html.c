/*
 * html.c - the running text of an HTML document for disc-pairs, through
 * libxml2's HTML parser (never regular expressions; the library's one
 * use of libxml2).  Malformed markup goes through the parser's recovery.
 * Block elements end paragraphs; code, tables, headings, navigation and
 * scripts are no prose and are left out.  Optionally a run of adjacent
 * <p> elements (nothing but white space between them) is one paragraph,
 * one <p> a line.
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include "internal.h"

static int name_is(const xmlNode *n, const char *const *list)
{
	for (; *list; list++)
		if (!xmlStrcasecmp(n->name, (const xmlChar *)*list))
			return 1;
	return 0;
}

/* Elements whose whole content is dropped. */
static const char *const skipped[] = {
    "head",
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "pre",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "form",
    "button",
    "select",
    "textarea",
    "svg",
    "math",
    "iframe",
    "object",
    "footer",
    "aside",
    NULL,
};
/* Elements that end a paragraph (before and after them). */
static const char *const blocks[] = {
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "blockquote",
    "section",
    "article",
    "main",
    "header",
    "br",
    "hr",
    "figure",
    "figcaption",
    "caption",
    "address",
    "body",
    "html",
    "details",
    "summary",
    "center",
    NULL,
};
/* Sphinx and similar generators mark their page furniture with classes. */
static const char *const skipped_class[] = {
    "headerlink",
    "sphinxsidebar",
    "related",
    "footer",
    "highlight",
    "toctree-wrapper",
    "navigation",
    "breadcrumb",
    NULL,
};

static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = s; (p = strstr(p, w)); p++)
		if ((p == s || isspace((unsigned char)p[-1]) || p[-1] == '-') &&
		    (!p[n] || isspace((unsigned char)p[n]) || p[n] == '-'))
			return 1;
	return 0;
}

static int skip_node(const xmlNode *n)
{
	if (name_is(n, skipped))
		return 1;
	int skip = 0;
	xmlChar *v = xmlGetProp(n, (const xmlChar *)"class");
	if (v) {
		for (const char *const *c = skipped_class; *c && !skip; c++)
			skip = has_word((const char *)v, *c);
		xmlFree(v);
	}
	if (!skip && (v = xmlGetProp(n, (const xmlChar *)"role"))) {
		skip = !xmlStrcasecmp(v, (const xmlChar *)"navigation") || !xmlStrcasecmp(v, (const xmlChar *)"search");
		xmlFree(v);
	}
	return skip;
}

struct emit {
	llr_buf *out;
	int space; /* a space is pending before the next word */
	int runs;  /* join adjacent <p> elements into one paragraph */
	int soft;  /* a <p> just ended: a line break, the paragraph goes on */
	int ok;
};

static void put_break(struct emit *e)
{
	llr_buf *b = e->out;
	e->space = 0;
	e->soft = 0;
	if (b->len == 0 || (b->len >= 2 && b->data[b->len - 1] == '\n' && b->data[b->len - 2] == '\n'))
		return;
	if (llr_buf_append(b, "\n\n", b->data[b->len - 1] == '\n' ? 1 : 2) != LLR_OK)
		e->ok = 0;
}

/* The end of a <p> when adjacent ones are joined: one newline, a
 * paragraph break only if something other than another <p> follows. */
static void put_soft(struct emit *e)
{
	llr_buf *b = e->out;
	e->space = 0;
	if (b->len == 0 || b->data[b->len - 1] == '\n')
		return;
	if (llr_buf_putc(b, '\n') != LLR_OK)
		e->ok = 0;
	e->soft = 1;
}

/* Text with its white space (and any newline) collapsed to single spaces. */
static void put_text(struct emit *e, const char *s)
{
	llr_buf *b = e->out;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			e->space = 1;
			continue;
		}
		if (e->soft)
			put_break(e); /* text between two <p>: they are not adjacent */
		if (e->space && b->len > 0 && b->data[b->len - 1] != '\n' && llr_buf_putc(b, ' ') != LLR_OK)
			e->ok = 0;
		e->space = 0;
		if (llr_buf_putc(b, c) != LLR_OK)
			e->ok = 0;
	}
}

int llr_html_is(const char *name, const char *head, size_t n)
{
	const char *dot = name ? strrchr(name, '.') : NULL;
	if (dot && (!strcasecmp(dot, ".html") || !strcasecmp(dot, ".htm") || !strcasecmp(dot, ".xhtml")))
		return 1;
	size_t i = 0;
	if (n >= 3 && !memcmp(head, "\xEF\xBB\xBF", 3))
		i = 3;
	while (i < n && isspace((unsigned char)head[i]))
		i++;
	return (n - i >= 14 && !strncasecmp(head + i, "<!doctype html", 14)) || (n - i >= 5 && !strncasecmp(head + i, "<html", 5));
}

static int is_p(const xmlNode *n)
{
	return !xmlStrcasecmp(n->name, (const xmlChar *)"p");
}

int llr_html_text(const char *buf, size_t len, const char *url, int runs, llr_buf *out, llr_err *err)
{
	if (len > INT_MAX)
		return llr_err_set(err, LLR_ERANGE, "%s: HTML document over 2 GiB", url);
	htmlDocPtr doc = htmlReadMemory(len ? buf : "", (int)len, url, NULL,
	                                HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET);
	llr_buf_clear(out);
	if (!doc)
		return LLR_OK; /* nothing the parser could recover: no text */
	struct emit e = {.out = out, .runs = runs, .ok = 1};
	xmlNode *n = xmlDocGetRootElement(doc);
	/* Walk the tree without recursion: deep markup cannot blow the stack. */
	while (n) {
		int descend = 0;
		if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
			if (n->content)
				put_text(&e, (const char *)n->content);
		} else if (n->type == XML_ELEMENT_NODE) {
			if (skip_node(n)) {
				if (name_is(n, blocks) || !name_is(n, (const char *const[]){"a", "span", "code", "button", "select", NULL}))
					put_break(&e);
			} else {
				if (e.soft && is_p(n))
					e.soft = 0; /* the next <p> of a run */
				else if (name_is(n, blocks))
					put_break(&e);
				descend = n->children != NULL;
			}
		}
		if (descend) {
			n = n->children;
			continue;
		}
		while (n && !n->next) {
			n = n->parent;
			if (n && n->type == XML_ELEMENT_NODE && e.runs && is_p(n))
				put_soft(&e);
			else if (n && n->type == XML_ELEMENT_NODE && name_is(n, blocks))
				put_break(&e);
			if (n && n->type != XML_ELEMENT_NODE)
				n = NULL; /* the document node: done */
		}
		if (n)
			n = n->next;
	}
	xmlFreeDoc(doc);
	put_break(&e);
	return e.ok ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "%s: out of memory", url);
}
