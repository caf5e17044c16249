/*
 * markers.c - discourse-marker tables for disc-pairs (CONJ): the
 * built-in English and French tables as data, `phrase<TAB>class` files,
 * and the longest-first, case-insensitive match at the start of a
 * tokenised sentence.
 *
 * The classes are those of Jernite, Bowman & Sontag, "Discourse-based
 * objectives for fast unsupervised sentence representation learning"
 * (2017), also chapter 5 of Jernite's thesis.  The phrase lists are this
 * project's own.  Not here: reading text, writing examples.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct marker_def {
	const char *phrase, *cls;
};

/* The nine classes, in the order the summary prints them (and a sentence
 * encoder numbers them: llr_disc_conj_builtin). */
static const char *const builtin_classes[] = {
    "addition",
    "contrast",
    "time",
    "result",
    "specific",
    "compare",
    "strengthen",
    "return",
    "recognize",
};

void llr_disc_conj_builtin(char conj[][32], int *n)
{
	size_t k = sizeof builtin_classes / sizeof *builtin_classes;
	for (size_t i = 0; i < k; i++)
		strcpy(conj[i], builtin_classes[i]);
	*n = (int)k;
}

static const struct marker_def markers_en[] = {
    {"also", "addition"},
    {"in addition", "addition"},
    {"moreover", "addition"},
    {"furthermore", "addition"},
    {"besides", "addition"},
    {"additionally", "addition"},
    {"further", "addition"},
    {"what is more", "addition"},
    {"however", "contrast"},
    {"nevertheless", "contrast"},
    {"nonetheless", "contrast"},
    {"instead", "contrast"},
    {"otherwise", "contrast"},
    {"conversely", "contrast"},
    {"still", "contrast"},
    {"yet", "contrast"},
    {"on the other hand", "contrast"},
    {"in contrast", "contrast"},
    {"by contrast", "contrast"},
    {"on the contrary", "contrast"},
    {"meanwhile", "time"},
    {"then", "time"},
    {"later", "time"},
    {"afterwards", "time"},
    {"afterward", "time"},
    {"subsequently", "time"},
    {"eventually", "time"},
    {"finally", "time"},
    {"next", "time"},
    {"previously", "time"},
    {"in the meantime", "time"},
    {"at first", "time"},
    {"therefore", "result"},
    {"thus", "result"},
    {"consequently", "result"},
    {"as a result", "result"},
    {"hence", "result"},
    {"accordingly", "result"},
    {"as a consequence", "result"},
    {"so", "result"},
    {"for example", "specific"},
    {"for instance", "specific"},
    {"in particular", "specific"},
    {"specifically", "specific"},
    {"namely", "specific"},
    {"that is", "specific"},
    {"likewise", "compare"},
    {"similarly", "compare"},
    {"in the same way", "compare"},
    {"by the same token", "compare"},
    {"indeed", "strengthen"},
    {"in fact", "strengthen"},
    {"clearly", "strengthen"},
    {"certainly", "strengthen"},
    {"actually", "strengthen"},
    {"above all", "strengthen"},
    {"anyway", "return"},
    {"anyhow", "return"},
    {"at any rate", "return"},
    {"in any case", "return"},
    {"in any event", "return"},
    {"of course", "recognize"},
    {"admittedly", "recognize"},
    {"undoubtedly", "recognize"},
    {"granted", "recognize"},
    {"to be sure", "recognize"},
    {"naturally", "recognize"},
    {"obviously", "recognize"},
};

static const struct marker_def markers_fr[] = {
    {"de plus", "addition"},
    {"en outre", "addition"},
    {"par ailleurs", "addition"},
    {"d'ailleurs", "addition"},
    {"en plus", "addition"},
    {"également", "addition"},
    {"qui plus est", "addition"},
    {"cependant", "contrast"},
    {"pourtant", "contrast"},
    {"toutefois", "contrast"},
    {"néanmoins", "contrast"},
    {"en revanche", "contrast"},
    {"par contre", "contrast"},
    {"au contraire", "contrast"},
    {"malgré tout", "contrast"},
    {"ensuite", "time"},
    {"puis", "time"},
    {"plus tard", "time"},
    {"entre-temps", "time"},
    {"auparavant", "time"},
    {"finalement", "time"},
    {"enfin", "time"},
    {"depuis", "time"},
    {"donc", "result"},
    {"ainsi", "result"},
    {"par conséquent", "result"},
    {"en conséquence", "result"},
    {"dès lors", "result"},
    {"de ce fait", "result"},
    {"alors", "result"},
    {"par exemple", "specific"},
    {"notamment", "specific"},
    {"en particulier", "specific"},
    {"c'est-à-dire", "specific"},
    {"à savoir", "specific"},
    {"de même", "compare"},
    {"pareillement", "compare"},
    {"de la même façon", "compare"},
    {"de la même manière", "compare"},
    {"en effet", "strengthen"},
    {"en fait", "strengthen"},
    {"effectivement", "strengthen"},
    {"en réalité", "strengthen"},
    {"clairement", "strengthen"},
    {"de toute façon", "return"},
    {"en tout cas", "return"},
    {"quoi qu'il en soit", "return"},
    {"bref", "return"},
    {"bien sûr", "recognize"},
    {"certes", "recognize"},
    {"naturellement", "recognize"},
    {"évidemment", "recognize"},
    {"bien entendu", "recognize"},
    {"sans doute", "recognize"},
};

struct marker {
	char *s; /* tokenised, lowercased, single spaces */
	size_t len;
	int ntok;
	int32_t cls;
	size_t order; /* position in the table, for a stable sort */
};

struct llr_disc_markers {
	struct marker *m;
	size_t n, cap;
	llr_strmap *classes;
	int max_tok;
};

static int count_tokens(const char *s, size_t len)
{
	int n = len > 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == ' ';
	return n;
}

static llr_disc_markers *markers_new(void)
{
	llr_disc_markers *m = calloc(1, sizeof *m);
	if (m && !(m->classes = llr_strmap_new())) {
		free(m);
		return NULL;
	}
	return m;
}

void llr_disc_markers_free(llr_disc_markers *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->m[i].s);
	free(m->m);
	llr_strmap_free(m->classes);
	free(m);
}

/* Tokenise and lowercase phrase, then add it; where names the phrase in
 * messages.  A phrase already present with the same class is ignored. */
static int markers_add(llr_disc_markers *m, llr_tokenizer *tok, const char *phrase, const char *cls, const char *where, llr_err *err)
{
	llr_buf t = {0}, low = {0};
	int rc = llr_tokenize(tok, phrase, strlen(phrase), 0, &t, err);
	if (rc == LLR_OK)
		rc = llr_normalize(t.data ? t.data : "", t.len, 0, 1, &low, err);
	llr_buf_free(&t);
	if (rc != LLR_OK) {
		llr_buf_free(&low);
		return llr_err_prefix(err, "%s", where);
	}
	if (low.len == 0) {
		llr_buf_free(&low);
		return llr_err_set(err, LLR_EFORMAT, "%s: empty marker phrase", where);
	}
	int32_t c = llr_strmap_add(m->classes, cls, strlen(cls));
	if (c < 0) {
		llr_buf_free(&low);
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", where);
	}
	for (size_t i = 0; i < m->n; i++) {
		if (m->m[i].len == low.len && !memcmp(m->m[i].s, low.data, low.len)) {
			llr_buf_free(&low);
			if (m->m[i].cls == c)
				return LLR_OK;
			return llr_err_set(err, LLR_EFORMAT, "%s: marker '%s' already has class %s", where, phrase, llr_strmap_str(m->classes, m->m[i].cls));
		}
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct marker *p = llr_reallocarray(m->m, cap, sizeof *p);
		if (!p) {
			llr_buf_free(&low);
			return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", where);
		}
		m->m = p;
		m->cap = cap;
	}
	struct marker *k = &m->m[m->n];
	k->s = low.data;
	k->len = low.len;
	k->ntok = count_tokens(low.data, low.len);
	k->cls = c;
	k->order = m->n++;
	if (k->ntok > m->max_tok)
		m->max_tok = k->ntok;
	return LLR_OK;
}

static int longest_first(const void *a, const void *b)
{
	const struct marker *x = a, *y = b;
	if (x->ntok != y->ntok)
		return x->ntok > y->ntok ? -1 : 1;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void markers_sort(llr_disc_markers *m)
{
	qsort(m->m, m->n, sizeof *m->m, longest_first);
}

llr_disc_markers *llr_disc_markers_builtin(const char *lang, llr_tokenizer *tok, llr_err *err)
{
	const struct marker_def *defs;
	size_t n;
	if (lang && !strcmp(lang, "en")) {
		defs = markers_en;
		n = sizeof markers_en / sizeof *markers_en;
	} else if (lang && !strcmp(lang, "fr")) {
		defs = markers_fr;
		n = sizeof markers_fr / sizeof *markers_fr;
	} else {
		llr_err_set(err, LLR_EINVAL, "no built-in discourse markers for language '%s'", lang ? lang : "(none)");
		return NULL;
	}
	llr_disc_markers *m = markers_new();
	if (!m) {
		llr_err_set(err, LLR_ENOMEM, "markers: out of memory");
		return NULL;
	}
	for (size_t i = 0; i < sizeof builtin_classes / sizeof *builtin_classes; i++) {
		if (llr_strmap_add(m->classes, builtin_classes[i], strlen(builtin_classes[i])) < 0) {
			llr_err_set(err, LLR_ENOMEM, "markers: out of memory");
			llr_disc_markers_free(m);
			return NULL;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (markers_add(m, tok, defs[i].phrase, defs[i].cls, "built-in markers", err) != LLR_OK) {
			llr_disc_markers_free(m);
			return NULL;
		}
	}
	markers_sort(m);
	return m;
}

llr_disc_markers *llr_disc_markers_load(const char *path, llr_tokenizer *tok, llr_err *err)
{
	llr_lines *l = llr_lines_open(path, 0, err);
	if (!l)
		return NULL;
	llr_disc_markers *m = markers_new();
	if (!m) {
		llr_lines_close(l);
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	const char *line;
	size_t len;
	int r;
	char where[600];
	while ((r = llr_lines_next(l, &line, &len, err)) > 0) {
		snprintf(where, sizeof where, "%s:%zu", llr_lines_name(l), llr_lines_lineno(l));
		size_t i = 0;
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len || line[i] == '#')
			continue;
		const char *tab = memchr(line, '\t', len);
		if (!tab || tab == line) {
			r = llr_err_set(err, LLR_EFORMAT, "%s: expected phrase<TAB>class", where);
			break;
		}
		const char *cls = tab + 1;
		size_t clen = len - (size_t)(cls - line);
		while (clen > 0 && (cls[clen - 1] == ' ' || cls[clen - 1] == '\t'))
			clen--;
		if (clen == 0 || memchr(cls, '\t', clen) || memchr(cls, ' ', clen)) {
			r = llr_err_set(err, LLR_EFORMAT, "%s: expected one class name after the tab", where);
			break;
		}
		char *phrase = llr_strndup(line, (size_t)(tab - line));
		char *cname = llr_strndup(cls, clen);
		if (!phrase || !cname) {
			free(phrase);
			free(cname);
			r = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", where);
			break;
		}
		r = markers_add(m, tok, phrase, cname, where, err);
		free(phrase);
		free(cname);
		if (r != LLR_OK)
			break;
	}
	if (r == 0 && m->n == 0)
		r = llr_err_set(err, LLR_EEMPTY, "%s: no markers", llr_lines_name(l));
	llr_lines_close(l);
	if (r < 0) {
		llr_disc_markers_free(m);
		return NULL;
	}
	markers_sort(m);
	return m;
}

size_t llr_disc_markers_count(const llr_disc_markers *m)
{
	return m->n;
}

size_t llr_disc_markers_nclass(const llr_disc_markers *m)
{
	return llr_strmap_size(m->classes);
}

const char *llr_disc_markers_class(const llr_disc_markers *m, size_t c)
{
	return llr_strmap_str(m->classes, (int32_t)c);
}

const char *llr_disc_markers_phrase(const llr_disc_markers *m, size_t i, size_t *cls)
{
	if (cls)
		*cls = (size_t)m->m[i].cls;
	return m->m[i].s;
}

/* Byte offset just past the first k tokens of s (or len). */
static size_t after_tokens(const char *s, size_t len, int k)
{
	size_t i = 0;
	for (int t = 0; t < k && i < len; t++) {
		const char *sp = memchr(s + i, ' ', len - i);
		if (!sp)
			return len;
		i = (size_t)(sp - s) + 1;
	}
	return i;
}

int llr_disc_markers_match(const llr_disc_markers *m, const char *s, size_t len, size_t *skip, int *ntok, llr_buf *scratch)
{
	if (!m || m->n == 0 || len == 0)
		return -1;
	size_t pre = after_tokens(s, len, m->max_tok + 1);
	if (pre > 0 && pre < len)
		pre--; /* drop the space after the last token */
	llr_err e;
	if (llr_normalize(s, pre, 0, 1, scratch, &e) != LLR_OK)
		return e.code == LLR_ENOMEM ? LLR_ENOMEM : -1;
	const char *p = scratch->data ? scratch->data : "";
	size_t plen = scratch->len;
	for (size_t i = 0; i < m->n; i++) {
		const struct marker *k = &m->m[i];
		if (plen < k->len + 2 || memcmp(p, k->s, k->len) != 0)
			continue;
		if (p[k->len] != ' ' || p[k->len + 1] != ',')
			continue;
		if (plen != k->len + 2 && p[k->len + 2] != ' ')
			continue;
		*ntok = k->ntok + 1;
		*skip = after_tokens(s, len, k->ntok + 1);
		return k->cls;
	}
	return -1;
}
