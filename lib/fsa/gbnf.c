/*
 * gbnf.c - the GBNF grammar reader (gbnf.h): llama.cpp's grammar syntax
 * parsed by recursive descent into rules of alternatives of elements
 * (character classes and rule references), groups and repetitions
 * turned into rules of their own, then checked: every rule defined and
 * defined once, root present, no left recursion (the recogniser would
 * expand such a rule forever), and a root that derives some string.
 * Recognition is gbnfrec.c's.
 */
#include "fsa/gbnf.h"

#include <stdlib.h>

enum { MAX_REPEAT = 1000, MAX_DEPTH = 200 };

typedef gbnf_ivec ivec;

/* A rule while parsing: its name (a group or repetition: NULL, and
 * owner the named rule it was written in), the line of its definition
 * (0: not yet defined) and of its first use, its alternatives. */
typedef struct prule {
	char *name;
	int32_t owner;
	size_t line, used;
	ivec *alts;
	size_t nalt, acap;
} prule;

typedef struct parser {
	const char *s, *end, *name;
	size_t line;
	int depth;
	llr_err *err;
	prule *r;
	size_t nr, rcap;
	llr_strmap *names; /* named rule -> its index in r (ids of names are not indices) */
	ivec idx;          /* names' id -> rule */
	ivec rng, cls_off;
	ivec neg;
	int32_t cur; /* the named rule being defined */
} parser;

int gbnf_push(gbnf_ivec *a, int32_t x)
{
	if (a->n == a->cap) {
		size_t c = a->cap ? 2 * a->cap : 8;
		int32_t *v = llr_reallocarray(a->v, c, sizeof *v);
		if (!v)
			return LLR_ENOMEM;
		a->v = v;
		a->cap = c;
	}
	a->v[a->n++] = x;
	return LLR_OK;
}

static int append(ivec *a, const ivec *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (gbnf_push(a, b->v[i]) < 0)
			return LLR_ENOMEM;
	return LLR_OK;
}

static int nomem(parser *p)
{
	return llr_err_set(p->err, LLR_ENOMEM, "out of memory");
}

static int bad(parser *p, const char *why, const char *arg)
{
	return llr_err_set(p->err, LLR_EFORMAT, "%s:%zu: %s%s%s%s", p->name, p->line, why, arg ? " '" : "", arg ? arg : "",
	                   arg ? "'" : "");
}

/* A new rule (name NULL: a group of the current rule); its index. */
static int32_t new_rule(parser *p, const char *name, size_t len)
{
	if (p->nr == p->rcap) {
		size_t c = p->rcap ? 2 * p->rcap : 16;
		prule *r = llr_reallocarray(p->r, c, sizeof *r);
		if (!r)
			return LLR_ENOMEM;
		p->r = r;
		p->rcap = c;
	}
	prule *r = &p->r[p->nr];
	memset(r, 0, sizeof *r);
	r->owner = name ? (int32_t)p->nr : p->cur;
	if (name) {
		if (!(r->name = llr_malloc(len + 1)))
			return LLR_ENOMEM;
		memcpy(r->name, name, len);
		r->name[len] = '\0';
	}
	return (int32_t)p->nr++;
}

static int add_alt(parser *p, int32_t r, ivec *seq)
{
	prule *q = &p->r[r];
	if (q->nalt == q->acap) {
		size_t c = q->acap ? 2 * q->acap : 4;
		ivec *a = llr_reallocarray(q->alts, c, sizeof *a);
		if (!a)
			return LLR_ENOMEM;
		q->alts = a;
		q->acap = c;
	}
	q->alts[q->nalt++] = *seq;
	memset(seq, 0, sizeof *seq);
	return LLR_OK;
}

/* The named rule name[0..len), made when first met. */
static int32_t named(parser *p, const char *name, size_t len)
{
	int32_t id = llr_strmap_get(p->names, name, len);
	if (id >= 0)
		return p->idx.v[id];
	int32_t r = new_rule(p, name, len);
	if (r < 0 || llr_strmap_add(p->names, name, len) < 0 || gbnf_push(&p->idx, r) < 0)
		return LLR_ENOMEM;
	return r;
}

/* A class of the ranges lo..hi in rng[from..] (pairs), negated or not:
 * its element. */
static int32_t new_class(parser *p, size_t from, int neg)
{
	if (!p->cls_off.n && gbnf_push(&p->cls_off, 0) < 0)
		return LLR_ENOMEM;
	int32_t k = (int32_t)p->cls_off.n - 1;
	LLR_ASSERT(from == 2 * (size_t)p->cls_off.v[k]);
	if (gbnf_push(&p->cls_off, (int32_t)(p->rng.n / 2)) < 0 || gbnf_push(&p->neg, neg) < 0)
		return LLR_ENOMEM;
	return GBNF_CLS(k);
}

static int name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static size_t name_len(const parser *p)
{
	size_t n = 0;
	while (p->s + n < p->end && name_char((unsigned char)p->s[n]))
		n++;
	return n;
}

/* Past blanks, newlines (counted) and comments. */
static void skip(parser *p)
{
	while (p->s < p->end) {
		char c = *p->s;
		if (c == '#')
			while (p->s < p->end && *p->s != '\n')
				p->s++;
		else if (c == '\n') {
			p->line++;
			p->s++;
		} else if (c == ' ' || c == '\t' || c == '\r')
			p->s++;
		else
			break;
	}
}

/* Is a rule head (name ::=) next? */
static int at_head(const parser *p)
{
	size_t n = name_len(p);
	const char *s = p->s + n;
	while (n && s < p->end && (*s == ' ' || *s == '\t'))
		s++;
	return n && p->end - s >= 3 && !memcmp(s, "::=", 3);
}

static int hex(parser *p, int digits, int32_t *c)
{
	*c = 0;
	for (int i = 0; i < digits; i++, p->s++) {
		int d = p->s < p->end ? (unsigned char)*p->s : 0;
		int v = d >= '0' && d <= '9' ? d - '0' : d >= 'a' && d <= 'f' ? d - 'a' + 10 : d >= 'A' && d <= 'F' ? d - 'A' + 10 : -1;
		if (v < 0)
			return bad(p, "bad hexadecimal escape", NULL);
		*c = *c * 16 + v;
	}
	if (*c > 0x10FFFF || (*c >= 0xD800 && *c <= 0xDFFF))
		return bad(p, "escape beyond Unicode", NULL);
	return LLR_OK;
}

/* One character of a literal or class (an escape, or a UTF-8 sequence)
 * into *c. */
static int one_char(parser *p, int32_t *c)
{
	if (p->s >= p->end || *p->s == '\n')
		return bad(p, "unterminated string or class", NULL);
	if (*p->s != '\\') {
		int k = llr_utf8_decode(p->s, (size_t)(p->end - p->s), c);
		if (k <= 0 || *c == 0)
			return bad(p, "invalid UTF-8", NULL);
		p->s += k;
		return LLR_OK;
	}
	p->s++;
	char e = p->s < p->end ? *p->s++ : '\0';
	switch (e) {
	case 'n': *c = '\n'; return LLR_OK;
	case 'r': *c = '\r'; return LLR_OK;
	case 't': *c = '\t'; return LLR_OK;
	case '\\': case '"': case '\'': case '[': case ']': case '-': case '^': case '/':
		*c = e;
		return LLR_OK;
	case 'x': return hex(p, 2, c);
	case 'u': return hex(p, 4, c);
	case 'U': return hex(p, 8, c);
	}
	char s[3] = {'\\', e, '\0'};
	return bad(p, "unknown escape", s);
}

/* "..." after its quote: one class per character, into seq. */
static int literal(parser *p, ivec *seq)
{
	while (p->s < p->end && *p->s != '"') {
		int32_t c;
		int rc = one_char(p, &c);
		if (rc < 0)
			return rc;
		size_t from = p->rng.n;
		int32_t e;
		if (gbnf_push(&p->rng, c) < 0 || gbnf_push(&p->rng, c) < 0 || (e = new_class(p, from, 0)) < 0 || gbnf_push(seq, e) < 0)
			return nomem(p);
	}
	if (p->s >= p->end)
		return bad(p, "unterminated string", NULL);
	p->s++;
	return LLR_OK;
}

/* [...] after its bracket: one class into seq. */
static int char_class(parser *p, ivec *seq)
{
	int neg = p->s < p->end && *p->s == '^';
	p->s += neg;
	size_t from = p->rng.n;
	while (p->s < p->end && *p->s != ']') {
		int32_t lo, hi;
		int rc = one_char(p, &lo);
		if (rc < 0)
			return rc;
		hi = lo;
		if (p->end - p->s >= 2 && p->s[0] == '-' && p->s[1] != ']') {
			p->s++;
			if ((rc = one_char(p, &hi)) < 0)
				return rc;
			if (hi < lo)
				return bad(p, "a range runs backwards in a character class", NULL);
		}
		if (gbnf_push(&p->rng, lo) < 0 || gbnf_push(&p->rng, hi) < 0)
			return nomem(p);
	}
	if (p->s >= p->end)
		return bad(p, "unterminated character class", NULL);
	p->s++;
	if (p->rng.n == from)
		return bad(p, "empty character class", NULL);
	int32_t e = new_class(p, from, neg);
	return e < 0 || gbnf_push(seq, e) < 0 ? nomem(p) : LLR_OK;
}

static int alternatives(parser *p, int32_t r, int nested);

/* One element, without its repetition, appended to seq. */
static int primary(parser *p, ivec *seq)
{
	char c = *p->s;
	if (c == '"') {
		p->s++;
		return literal(p, seq);
	}
	if (c == '[') {
		p->s++;
		return char_class(p, seq);
	}
	if (c == '.') {
		p->s++;
		int32_t e = new_class(p, p->rng.n, 1);
		return e < 0 || gbnf_push(seq, e) < 0 ? nomem(p) : LLR_OK;
	}
	if (c == '(') {
		size_t line = p->line;
		if (++p->depth > MAX_DEPTH)
			return bad(p, "groups nested too deeply", NULL);
		p->s++;
		int32_t g = new_rule(p, NULL, 0);
		if (g < 0 || gbnf_push(seq, GBNF_REF(g)) < 0)
			return nomem(p);
		int rc = alternatives(p, g, 1);
		if (rc < 0)
			return rc;
		if (p->s >= p->end || *p->s != ')') {
			p->line = line;
			return bad(p, "'(' without its ')'", NULL);
		}
		p->s++;
		p->depth--;
		return LLR_OK;
	}
	size_t n = name_len(p);
	if (!n) {
		char s[8] = {0};
		int k = llr_utf8_decode(p->s, (size_t)(p->end - p->s), &(int32_t){0});
		memcpy(s, p->s, k > 0 ? (size_t)k : 1);
		return bad(p, "unexpected character", s);
	}
	int32_t r = named(p, p->s, n);
	if (r < 0 || gbnf_push(seq, GBNF_REF(r)) < 0)
		return nomem(p);
	if (!p->r[r].used)
		p->r[r].used = p->line;
	p->s += n;
	return LLR_OK;
}

/* A rule of alternatives a and b (b may be NULL: one alternative);
 * its element. */
static int32_t rule2(parser *p, const ivec *a, const ivec *b)
{
	int32_t r = new_rule(p, NULL, 0);
	ivec x = {0}, y = {0};
	if (r < 0 || append(&x, a) < 0 || add_alt(p, r, &x) < 0 || (b && (append(&y, b) < 0 || add_alt(p, r, &y) < 0))) {
		free(x.v);
		free(y.v);
		return LLR_ENOMEM;
	}
	return GBNF_REF(r);
}

/* x*: a rule s ::= x s | (empty); its element. */
static int32_t star(parser *p, int32_t x)
{
	int32_t r = new_rule(p, NULL, 0);
	ivec a = {0}, e = {0};
	if (r < 0 || gbnf_push(&a, x) < 0 || gbnf_push(&a, GBNF_REF(r)) < 0 || add_alt(p, r, &a) < 0 || add_alt(p, r, &e) < 0) {
		free(a.v);
		return LLR_ENOMEM;
	}
	return GBNF_REF(r);
}

static int number(parser *p, int *v)
{
	if (p->s >= p->end || *p->s < '0' || *p->s > '9')
		return bad(p, "expected a number in {m,n}", NULL);
	*v = 0;
	while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
		*v = *v * 10 + (*p->s++ - '0');
		if (*v > MAX_REPEAT)
			return llr_err_set(p->err, LLR_EFORMAT, "%s:%zu: a repetition count above %d", p->name, p->line, MAX_REPEAT);
	}
	return LLR_OK;
}

/* {m}, {m,}, {m,n} or {,n} after its brace: *lo, *hi (-1: no bound). */
static int braces(parser *p, int *lo, int *hi)
{
	int rc = p->s < p->end && *p->s == ',' ? (*lo = 0) : number(p, lo);
	if (rc < 0)
		return rc;
	*hi = *lo;
	if (p->s < p->end && *p->s == ',') {
		p->s++;
		*hi = -1;
		if (p->s < p->end && *p->s != '}' && (rc = number(p, hi)) < 0)
			return rc;
	}
	if (p->s >= p->end || *p->s != '}')
		return bad(p, "expected '}' to end {m,n}", NULL);
	p->s++;
	if (*hi >= 0 && *hi < *lo)
		return bad(p, "{m,n} with n below m", NULL);
	return LLR_OK;
}

/* The repetitions after one element item (its elements): item repeated
 * into seq. */
static int repeat(parser *p, ivec *item, ivec *seq)
{
	for (;;) {
		char c = p->s < p->end ? *p->s : '\0';
		if (c != '*' && c != '+' && c != '?' && c != '{')
			return append(seq, item) < 0 ? nomem(p) : LLR_OK;
		p->s++;
		int lo = 0, hi = -1, rc;
		if (c == '+')
			lo = 1;
		else if (c == '?')
			hi = 1;
		else if (c == '{' && (rc = braces(p, &lo, &hi)) < 0)
			return rc;
		int32_t x = item->n == 1 ? item->v[0] : rule2(p, item, NULL);
		ivec out = {0};
		int ok = x >= 0;
		for (int i = 0; ok && i < lo; i++)
			ok = gbnf_push(&out, x) >= 0;
		if (ok && hi < 0) {
			int32_t s = star(p, x);
			ok = s >= 0 && gbnf_push(&out, s) >= 0;
		}
		/* x{0,k}: o_k ::= x o_(k-1) | (empty), o_0 empty */
		int32_t o = -1;
		for (int k = 0; ok && hi >= 0 && k < hi - lo; k++) {
			ivec a = {0}, e = {0};
			ok = gbnf_push(&a, x) >= 0 && (o < 0 || gbnf_push(&a, o) >= 0) && (o = rule2(p, &a, &e)) >= 0;
			free(a.v);
		}
		if (ok && o >= 0)
			ok = gbnf_push(&out, o) >= 0;
		free(item->v);
		*item = out;
		if (!ok)
			return nomem(p);
	}
}

/* One alternative into seq: elements up to '|', ')', the next rule head
 * or the end. */
static int sequence(parser *p, ivec *seq, int nested)
{
	for (;;) {
		skip(p);
		if (p->s >= p->end || *p->s == '|' || (*p->s == ')' && nested))
			return LLR_OK;
		if (*p->s == ')')
			return bad(p, "')' without its '('", NULL);
		if (at_head(p))
			return LLR_OK; /* nested: primary says the ')' is missing */
		ivec item = {0};
		int rc = primary(p, &item);
		if (rc >= 0)
			rc = repeat(p, &item, seq);
		free(item.v);
		if (rc < 0)
			return rc;
	}
}

static int alternatives(parser *p, int32_t r, int nested)
{
	for (;;) {
		ivec seq = {0};
		int rc = sequence(p, &seq, nested);
		if (rc >= 0 && add_alt(p, r, &seq) < 0)
			rc = nomem(p);
		free(seq.v);
		if (rc < 0)
			return rc;
		if (p->s >= p->end || *p->s != '|')
			return LLR_OK;
		p->s++;
	}
}

static int rules(parser *p)
{
	for (;;) {
		skip(p);
		if (p->s >= p->end)
			return LLR_OK;
		size_t n = name_len(p);
		if (!n || !at_head(p))
			return bad(p, n ? "expected '::=' after a rule name" : "expected a rule name", NULL);
		int32_t r = named(p, p->s, n);
		if (r < 0)
			return nomem(p);
		if (p->r[r].line)
			return llr_err_set(p->err, LLR_EFORMAT, "%s:%zu: rule '%s' is defined twice (first at line %zu)", p->name,
			                   p->line, p->r[r].name, p->r[r].line);
		p->r[r].line = p->line;
		p->cur = r;
		p->s += n;
		while (*p->s != ':') /* at_head found ::= after blanks */
			p->s++;
		p->s += 3;
		int rc = alternatives(p, r, 0);
		if (rc < 0)
			return rc;
	}
}

/* ------------------------------------------------------------- checks */

static const char *shown(const parser *p, int32_t r)
{
	return p->r[p->r[r].owner].name;
}

/* nullable (derives the empty string) or productive (derives some
 * string) for every rule, by fixpoint. */
static void fixpoint(const parser *p, uint8_t *ok, int productive)
{
	memset(ok, 0, p->nr);
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t r = 0; r < p->nr; r++)
			for (size_t a = 0; !ok[r] && a < p->r[r].nalt; a++) {
				const ivec *s = &p->r[r].alts[a];
				size_t i = 0;
				while (i < s->n && (GBNF_IS_REF(s->v[i]) ? ok[GBNF_ARG(s->v[i])] : productive))
					i++;
				if (i == s->n)
					ok[r] = changed = 1;
			}
	}
}

typedef struct lrec {
	const parser *p;
	const uint8_t *nullable;
	uint8_t *color; /* 0 new, 1 on the path, 2 done */
	int32_t *path;
	size_t n;
} lrec;

static int left_cycle(const lrec *l, int32_t s)
{
	const parser *p = l->p;
	size_t from = l->n;
	while (l->path[from - 1] != s)
		from--;
	from--;
	llr_buf b = {0};
	int all_groups = 1;
	const char *last = NULL;
	for (size_t i = from; i < l->n; i++) {
		int32_t r = l->path[i];
		all_groups &= !p->r[r].name;
		if (!last || strcmp(last, shown(p, r)))
			llr_buf_printf(&b, "%s -> ", shown(p, r));
		last = shown(p, r);
	}
	llr_buf_printf(&b, "%s", shown(p, s));
	const prule *o = &p->r[p->r[s].owner];
	int rc;
	if (all_groups)
		rc = llr_err_set(l->p->err, LLR_EFORMAT, "%s:%zu: rule '%s' repeats something that can be empty", p->name, o->line,
		                 o->name);
	else
		rc = llr_err_set(l->p->err, LLR_EFORMAT, "%s:%zu: rule '%s' is left-recursive (%s)", p->name, o->line, o->name,
		                 b.data ? b.data : "");
	llr_buf_free(&b);
	return rc;
}

/* Depth-first over "r may begin with s" from r. */
static int left_from(lrec *l, int32_t r)
{
	l->color[r] = 1;
	l->path[l->n++] = r;
	const prule *q = &l->p->r[r];
	for (size_t a = 0; a < q->nalt; a++) {
		const ivec *s = &q->alts[a];
		for (size_t i = 0; i < s->n && GBNF_IS_REF(s->v[i]); i++) {
			int32_t t = GBNF_ARG(s->v[i]);
			if (l->color[t] == 1)
				return left_cycle(l, t);
			int rc = l->color[t] ? LLR_OK : left_from(l, t);
			if (rc < 0)
				return rc;
			if (!l->nullable[t])
				break;
		}
	}
	l->n--;
	l->color[r] = 2;
	return LLR_OK;
}

static int check(parser *p, int32_t *root)
{
	for (size_t r = 0; r < p->nr; r++)
		if (p->r[r].name && !p->r[r].line) {
			p->line = p->r[r].used;
			return bad(p, "undefined rule", p->r[r].name);
		}
	int32_t id = llr_strmap_get(p->names, "root", 4);
	if (id < 0)
		return llr_err_set(p->err, LLR_EFORMAT, "%s: no rule 'root'", p->name);
	*root = p->idx.v[id];
	uint8_t *nullable = llr_malloc(p->nr + 1), *color = llr_calloc(p->nr + 1, 1);
	int32_t *path = llr_malloc((p->nr + 1) * sizeof *path);
	int rc = nullable && color && path ? LLR_OK : nomem(p);
	if (rc >= 0)
		fixpoint(p, nullable, 0);
	lrec l = {p, nullable, color, path, 0};
	for (size_t r = 0; rc >= 0 && r < p->nr; r++)
		if (!color[r])
			rc = left_from(&l, (int32_t)r);
	if (rc >= 0) {
		fixpoint(p, color, 1);
		if (!color[*root])
			rc = llr_err_set(p->err, LLR_EFORMAT, "%s: the grammar accepts nothing (rule 'root' derives no string)",
			                 p->name);
	}
	free(nullable);
	free(color);
	free(path);
	return rc;
}

/* ------------------------------------------------------------ result */

static llr_gbnf *flatten(parser *p, int32_t root)
{
	llr_gbnf *g = llr_calloc(1, sizeof *g);
	size_t nel = 0, nalt = 0;
	for (size_t r = 0; r < p->nr; r++)
		for (size_t a = 0; a < p->r[r].nalt; a++, nalt++)
			nel += p->r[r].alts[a].n + 1;
	if (!g || !(g->el = llr_malloc(nel * sizeof *g->el)) || !(g->alt = llr_malloc((nalt + 1) * sizeof *g->alt)) ||
	    !(g->alt_off = llr_malloc((p->nr + 1) * sizeof *g->alt_off))) {
		llr_gbnf_free(g);
		return NULL;
	}
	nel = nalt = 0;
	for (size_t r = 0; r < p->nr; r++) {
		g->alt_off[r] = (int32_t)nalt;
		for (size_t a = 0; a < p->r[r].nalt; a++) {
			const ivec *s = &p->r[r].alts[a];
			g->alt[nalt++] = (int32_t)nel;
			if (s->n)
				memcpy(g->el + nel, s->v, s->n * sizeof *s->v);
			nel += s->n;
			g->el[nel++] = GBNF_END;
		}
	}
	g->alt_off[p->nr] = (int32_t)nalt;
	g->nel = (int32_t)nel;
	g->nrules = (int32_t)p->nr;
	g->root = root;
	g->ncls = p->cls_off.n ? (int32_t)p->cls_off.n - 1 : 0;
	g->rng = p->rng.v;
	g->cls_off = p->cls_off.v;
	g->cls_neg = llr_malloc(p->neg.n + 1);
	if (!g->cls_neg) {
		llr_gbnf_free(g);
		return NULL;
	}
	for (size_t k = 0; k < p->neg.n; k++)
		g->cls_neg[k] = (uint8_t)p->neg.v[k];
	p->rng.v = p->cls_off.v = NULL;
	return g;
}

llr_gbnf *llr_gbnf_parse(const char *text, size_t n, const char *name, llr_err *err)
{
	parser p = {.s = text, .end = text + n, .name = name, .line = 1, .err = err, .names = llr_strmap_new()};
	int32_t root = -1;
	int rc = p.names ? rules(&p) : nomem(&p);
	if (rc >= 0)
		rc = check(&p, &root);
	llr_gbnf *g = rc >= 0 ? flatten(&p, root) : NULL;
	if (rc >= 0 && !g)
		nomem(&p);
	for (size_t r = 0; r < p.nr; r++) {
		for (size_t a = 0; a < p.r[r].nalt; a++)
			free(p.r[r].alts[a].v);
		free(p.r[r].alts);
		free(p.r[r].name);
	}
	free(p.r);
	free(p.idx.v);
	free(p.rng.v);
	free(p.cls_off.v);
	free(p.neg.v);
	llr_strmap_free(p.names);
	return g;
}

static int gather(void *ctx, const char *line, size_t len, llr_err *err)
{
	llr_buf *b = ctx;
	if (llr_buf_append(b, line, len) < 0 || llr_buf_putc(b, '\n') < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

int llr_gbnf_read_text(const char *path, llr_buf *b, llr_err *err)
{
	int rc = llr_lines_each(path, gather, b, err);
	return rc < 0 ? rc : LLR_OK;
}

llr_gbnf *llr_gbnf_read(const char *path, llr_err *err)
{
	llr_buf b = {0};
	llr_gbnf *g = NULL;
	if (llr_gbnf_read_text(path, &b, err) >= 0) {
		const char *name = !path || !strcmp(path, "-") ? "<stdin>" : path;
		g = llr_gbnf_parse(b.data ? b.data : "", b.len, name, err);
	}
	llr_buf_free(&b);
	return g;
}

void llr_gbnf_free(llr_gbnf *g)
{
	if (!g)
		return;
	free(g->el);
	free(g->alt);
	free(g->alt_off);
	free(g->rng);
	free(g->cls_off);
	free(g->cls_neg);
	free(g);
}

int llr_gbnf_class_has(const llr_gbnf *g, int32_t k, int32_t c)
{
	int in = 0;
	for (int32_t i = g->cls_off[k]; !in && i < g->cls_off[k + 1]; i++)
		in = c >= g->rng[2 * i] && c <= g->rng[2 * i + 1];
	return in != g->cls_neg[k];
}
