/*
 * affixforms.c - the word forms a hunspell dictionary spells out: each
 * stem of the .dic, then the stem with every suffix and prefix its flags
 * allow (the .aff's SFX and PFX rules: strip, add, condition; prefix and
 * suffix together where both allow the cross product; an affix's own
 * continuation flags one level deep).  It lists strings; it does not
 * decide what hunspell accepts: a form may come out twice, or be one
 * hunspell would refuse, and compounds, CIRCUMFIX and the input
 * conversions are not followed, so some accepted words never come out.
 * opendict.c gives each listed string its exact mass and its row, which
 * is right for any list.  Flags: FLAG (8-bit by default, UTF-8, long,
 * num) and AF aliases; NEEDAFFIX and FORBIDDENWORD stems are not listed
 * bare.  Not here: hunspell itself (hunspell.c), the masses (opendict.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { FLAG_CHAR,
       FLAG_UTF8,
       FLAG_LONG,
       FLAG_NUM };

#define MAX_COND 32 /* condition elements: hunspell's own conditions are short */

typedef struct cond_elem {
	int neg;      /* [^...] */
	int32_t *set; /* NULL: any character ('.') */
	int n;
} cond_elem;

typedef struct rule {
	uint32_t flag;
	int sfx, cross;
	char *strip, *add;
	size_t sl, al;
	int ncond;
	cond_elem cond[MAX_COND];
	uint32_t *cont;
	int ncont;
} rule;

typedef struct affixes {
	int flag_type;
	uint32_t needaffix, forbidden; /* 0: none */
	rule *r;
	size_t n, cap;
	char **af; /* AF aliases, 1-based */
	size_t naf, naf_cap;
	/* the header being read: its flag, kind and entries still to come */
	uint32_t hdr_flag;
	int hdr_sfx, hdr_cross;
	long hdr_left;
} affixes;

static void affixes_free(affixes *a)
{
	for (size_t i = 0; i < a->n; i++) {
		rule *r = &a->r[i];
		free(r->strip);
		free(r->add);
		free(r->cont);
		for (int k = 0; k < r->ncond; k++)
			free(r->cond[k].set);
	}
	free(a->r);
	for (size_t i = 0; i < a->naf; i++)
		free(a->af[i]);
	free(a->af);
}

/* The decimal number s[0..n) (digits only, not beyond 2^20), or -1. */
static long number(const char *s, size_t n)
{
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (1L << 20))
			return -1;
		v = 10 * v + (s[i] - '0');
	}
	return n && v <= (1L << 20) ? v : -1;
}

/* The flags of s[0..n) by the file's flag type into out (cap at most):
 * their count, or -1 when malformed.  With alias, as in the .dic and in
 * an affix's continuation flags, a number names an AF line when the file
 * has them (a rule's own flag and NEEDAFFIX's are never aliases). */
static int parse_flags(const affixes *a, const char *s, size_t n, uint32_t *out, int cap, int alias)
{
	if (alias && a->naf) { /* an AF alias */
		long k = number(s, n);
		if (k < 1 || (size_t)k > a->naf)
			return -1;
		return parse_flags(a, a->af[k - 1], strlen(a->af[k - 1]), out, cap, 0);
	}
	int c = 0;
	for (size_t i = 0; i < n;) {
		uint32_t f;
		if (a->flag_type == FLAG_LONG) {
			if (i + 1 >= n)
				return -1;
			f = (uint32_t)(unsigned char)s[i] << 8 | (unsigned char)s[i + 1];
			i += 2;
		} else if (a->flag_type == FLAG_UTF8) {
			int32_t cp;
			int k = llr_utf8_decode(s + i, n - i, &cp);
			if (k <= 0)
				return -1;
			f = (uint32_t)cp;
			i += (size_t)k;
		} else if (a->flag_type == FLAG_NUM) {
			size_t e = i;
			while (e < n && s[e] != ',')
				e++;
			long v = number(s + i, e - i);
			if (v < 1 || v > 65535)
				return -1;
			f = (uint32_t)v;
			i = e < n ? e + 1 : e;
		} else {
			f = (unsigned char)s[i++];
		}
		if (c < cap)
			out[c] = f;
		c++;
	}
	return c <= cap ? c : -1;
}

/* The whitespace-separated fields of line (modified) into f: their count. */
static int split(char *line, char **f, int cap)
{
	int n = 0;
	char *s = line;
	while (n < cap) {
		s += strspn(s, " \t\r");
		if (!*s)
			break;
		f[n++] = s;
		s += strcspn(s, " \t\r");
		if (*s)
			*s++ = 0;
	}
	return n;
}

static int parse_cond(rule *r, const char *s)
{
	if (!strcmp(s, "."))
		return 0;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		if (r->ncond == MAX_COND)
			return -1;
		cond_elem *e = &r->cond[r->ncond++];
		if (s[i] == '.') {
			i++;
			continue;
		}
		size_t end = i + 1;
		int set = s[i] == '[';
		if (set) {
			i++;
			if (i < n && s[i] == '^') {
				e->neg = 1;
				i++;
			}
			end = i;
			while (end < n && s[end] != ']')
				end++;
			if (end == n)
				return -1;
		} else {
			int32_t cp;
			int k = llr_utf8_decode(s + i, n - i, &cp);
			if (k <= 0)
				return -1;
			end = i + (size_t)k;
		}
		if (!(e->set = llr_malloc((end - i + 1) * sizeof *e->set)))
			return -1;
		while (i < end) {
			int32_t cp;
			int k = llr_utf8_decode(s + i, end - i, &cp);
			if (k <= 0)
				return -1;
			e->set[e->n++] = cp;
			i += (size_t)k;
		}
		if (set)
			i++; /* the ']' */
	}
	return 0;
}

static char *dup0(const char *s)
{
	if (!strcmp(s, "0"))
		s = "";
	size_t n = strlen(s);
	char *d = llr_malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

/* One PFX or SFX line (its fields f[0..n)). */
static int affix_line(affixes *a, char **f, int n, const char *where, llr_err *err)
{
	uint32_t fl[2];
	int sfx = f[0][0] == 'S';
	if (n < 2 || parse_flags(a, f[1], strlen(f[1]), fl, 1, 0) != 1)
		return llr_err_set(err, LLR_EFORMAT, "%s: %s without one flag", where, f[0]);
	if (!a->hdr_left || a->hdr_flag != fl[0] || a->hdr_sfx != sfx) { /* a header: kind flag cross count */
		if (n < 4 || (strcmp(f[2], "Y") && strcmp(f[2], "N")))
			return llr_err_set(err, LLR_EFORMAT, "%s: %s %s: not a header (cross product Y or N, count)", where, f[0], f[1]);
		a->hdr_flag = fl[0];
		a->hdr_sfx = sfx;
		a->hdr_cross = f[2][0] == 'Y';
		a->hdr_left = strtol(f[3], NULL, 10);
		return LLR_OK;
	}
	if (n < 4)
		return llr_err_set(err, LLR_EFORMAT, "%s: %s %s: an entry needs strip and add", where, f[0], f[1]);
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 256;
		rule *r = llr_reallocarray(a->r, cap, sizeof *r);
		if (!r)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		a->r = r;
		a->cap = cap;
	}
	rule *r = &a->r[a->n];
	memset(r, 0, sizeof *r);
	a->n++;
	a->hdr_left--;
	r->flag = fl[0];
	r->sfx = sfx;
	r->cross = a->hdr_cross;
	char *slash = strchr(f[3], '/');
	if (slash) {
		*slash++ = 0;
		uint32_t cont[256];
		int c = parse_flags(a, slash, strlen(slash), cont, 256, 1);
		if (c < 0)
			return llr_err_set(err, LLR_EFORMAT, "%s: %s %s: bad continuation flags", where, f[0], f[1]);
		if (c && !(r->cont = llr_malloc((size_t)c * sizeof *r->cont)))
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		if (c)
			memcpy(r->cont, cont, (size_t)c * sizeof *cont);
		r->ncont = c;
	}
	if (!(r->strip = dup0(f[2])) || !(r->add = dup0(f[3])))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	r->sl = strlen(r->strip);
	r->al = strlen(r->add);
	if (parse_cond(r, n > 4 ? f[4] : ".") < 0)
		return llr_err_set(err, LLR_EFORMAT, "%s: %s %s: bad condition", where, f[0], f[1]);
	return LLR_OK;
}

static int by_flag(const void *x, const void *y)
{
	const rule *a = x, *b = y;
	if (a->flag != b->flag)
		return a->flag < b->flag ? -1 : 1;
	return a->sfx - b->sfx;
}

/* The next line of [*p, end) (without its "\n"), NULL at the end. */
static const char *next_line(const char **p, const char *end, size_t *n)
{
	if (*p >= end)
		return NULL;
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
	*n = (size_t)((nl ? nl : end) - s);
	*p = nl ? nl + 1 : end;
	return s;
}

static int read_aff(affixes *a, const char *aff, size_t len, llr_err *err)
{
	const char *p = aff, *line;
	size_t n, lineno = 0;
	char buf[1024];
	int rc = LLR_OK;
	while (rc >= 0 && (line = next_line(&p, aff + len, &n))) {
		lineno++;
		if (n >= sizeof buf)
			continue; /* no directive is this long */
		memcpy(buf, line, n);
		buf[n] = 0;
		char *f[6];
		int nf = split(buf, f, 6);
		char where[48];
		snprintf(where, sizeof where, "affix file line %zu", lineno);
		if (nf == 0 || f[0][0] == '#')
			continue;
		if (!strcmp(f[0], "FLAG") && nf > 1)
			a->flag_type = !strcmp(f[1], "long") ? FLAG_LONG : !strcmp(f[1], "num") ? FLAG_NUM
			                                               : !strcmp(f[1], "UTF-8") ? FLAG_UTF8
			                                                                        : FLAG_CHAR;
		else if (!strcmp(f[0], "AF") && nf > 1 && !a->af) { /* the count of aliases */
			long k = number(f[1], strlen(f[1]));
			if (k < 0 || (size_t)k > len) /* an alias takes a line */
				rc = llr_err_set(err, LLR_EFORMAT, "%s: AF %s: not a count of aliases", where, f[1]);
			else if (!(a->af = llr_calloc((size_t)k + 1, sizeof *a->af)))
				rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
			a->naf_cap = (size_t)k;
		} else if (!strcmp(f[0], "AF") && nf > 1 && a->af && a->naf < a->naf_cap) {
			if (!(a->af[a->naf++] = dup0(f[1])))
				rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		} else if ((!strcmp(f[0], "NEEDAFFIX") || !strcmp(f[0], "FORBIDDENWORD")) && nf > 1) {
			uint32_t fl[1];
			if (parse_flags(a, f[1], strlen(f[1]), fl, 1, 0) == 1)
				*(f[0][0] == 'N' ? &a->needaffix : &a->forbidden) = fl[0];
		} else if (!strcmp(f[0], "PFX") || !strcmp(f[0], "SFX")) {
			rc = affix_line(a, f, nf, where, err);
		}
	}
	if (rc >= 0 && a->n)
		qsort(a->r, a->n, sizeof *a->r, by_flag);
	return rc;
}

/* The rules of flag f and kind sfx: [*first, *first + count). */
static size_t rules_of(const affixes *a, uint32_t f, int sfx, size_t *first)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a->r[mid].flag < f || (a->r[mid].flag == f && a->r[mid].sfx < sfx))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t e = lo;
	while (e < a->n && a->r[e].flag == f && a->r[e].sfx == sfx)
		e++;
	*first = lo;
	return e - lo;
}

static int has_flag(const uint32_t *fl, int n, uint32_t f)
{
	for (int i = 0; f && i < n; i++)
		if (fl[i] == f)
			return 1;
	return 0;
}

static int elem_match(const cond_elem *e, int32_t c)
{
	if (!e->set)
		return 1;
	int in = 0;
	for (int i = 0; i < e->n && !in; i++)
		in = e->set[i] == c;
	return in != e->neg;
}

/* Whether rule r applies to w[0..n) (its strip there, its condition on
 * the stem's end for a suffix, its start for a prefix). */
static int applies(const rule *r, const char *w, size_t n)
{
	if (r->sl > n || (r->sl == n && r->al == 0))
		return 0;
	if (r->sl && memcmp(r->sfx ? w + n - r->sl : w, r->strip, r->sl))
		return 0;
	int32_t cp[MAX_COND];
	int k = 0;
	if (r->sfx) { /* the last ncond code points, from the end */
		size_t i = n;
		while (k < r->ncond) {
			if (i == 0)
				return 0;
			size_t s = i - 1;
			while (s > 0 && ((unsigned char)w[s] & 0xC0) == 0x80)
				s--;
			if (llr_utf8_decode(w + s, i - s, &cp[r->ncond - 1 - k]) <= 0)
				return 0;
			k++;
			i = s;
		}
	} else {
		for (size_t i = 0; k < r->ncond; k++) {
			if (i >= n)
				return 0;
			int l = llr_utf8_decode(w + i, n - i, &cp[k]);
			if (l <= 0)
				return 0;
			i += (size_t)l;
		}
	}
	for (int i = 0; i < r->ncond; i++)
		if (!elem_match(&r->cond[i], cp[i]))
			return 0;
	return 1;
}

typedef struct expander {
	const affixes *a;
	llr_form_fn fn;
	void *ctx;
	char buf[3][512];
} expander;

/* r applied to w[0..n) into out (room for 512): its length, or -1. */
static long apply(const rule *r, const char *w, size_t n, char *out)
{
	size_t keep = n - r->sl;
	if (keep + r->al >= 512)
		return -1;
	if (r->sfx) {
		memcpy(out, w, keep);
		memcpy(out + keep, r->add, r->al);
	} else {
		memcpy(out, r->add, r->al);
		memcpy(out + r->al, w + r->sl, keep);
	}
	return (long)(keep + r->al);
}

static int needs_more(const expander *x, const rule *r)
{
	return has_flag(r->cont, r->ncont, x->a->needaffix);
}

/* The prefixes of flags fl[0..nfl) (cross-product ones only if cross)
 * on w[0..n). */
static int prefixes(expander *x, const uint32_t *fl, int nfl, int cross, const char *w, size_t n)
{
	for (int i = 0; i < nfl; i++) {
		size_t first, c = rules_of(x->a, fl[i], 0, &first);
		for (size_t j = first; j < first + c; j++) {
			const rule *p = &x->a->r[j];
			if ((cross && !p->cross) || !applies(p, w, n) || needs_more(x, p))
				continue;
			long m = apply(p, w, n, x->buf[2]);
			int rc = m < 0 ? LLR_OK : x->fn(x->buf[2], (size_t)m, x->ctx);
			if (rc < 0)
				return rc;
		}
	}
	return LLR_OK;
}

static int expand_stem(expander *x, const char *w, size_t n, const uint32_t *fl, int nfl)
{
	const affixes *a = x->a;
	int rc = LLR_OK;
	if (!has_flag(fl, nfl, a->needaffix) && !has_flag(fl, nfl, a->forbidden) && (rc = x->fn(w, n, x->ctx)) < 0)
		return rc;
	if (has_flag(fl, nfl, a->forbidden))
		return LLR_OK;
	if ((rc = prefixes(x, fl, nfl, 0, w, n)) < 0)
		return rc;
	for (int i = 0; i < nfl; i++) {
		size_t first, c = rules_of(a, fl[i], 1, &first);
		for (size_t j = first; j < first + c; j++) {
			const rule *s = &a->r[j];
			if (!applies(s, w, n))
				continue;
			long m = apply(s, w, n, x->buf[0]);
			if (m < 0)
				continue;
			if (!needs_more(x, s) && (rc = x->fn(x->buf[0], (size_t)m, x->ctx)) < 0)
				return rc;
			if (s->cross && (rc = prefixes(x, fl, nfl, 1, x->buf[0], (size_t)m)) < 0)
				return rc;
			if ((rc = prefixes(x, s->cont, s->ncont, 0, x->buf[0], (size_t)m)) < 0)
				return rc;
			for (int k = 0; k < s->ncont; k++) { /* a second suffix on the first */
				size_t f2, c2 = rules_of(a, s->cont[k], 1, &f2);
				for (size_t j2 = f2; j2 < f2 + c2; j2++) {
					const rule *t = &a->r[j2];
					long m2 = applies(t, x->buf[0], (size_t)m) ? apply(t, x->buf[0], (size_t)m, x->buf[1]) : -1;
					if (m2 >= 0 && !needs_more(x, t) && (rc = x->fn(x->buf[1], (size_t)m2, x->ctx)) < 0)
						return rc;
				}
			}
		}
	}
	return LLR_OK;
}

int llr_affix_forms(const char *aff, size_t aff_len, const char *dic, size_t dic_len, llr_form_fn fn, void *ctx,
                    llr_err *err)
{
	affixes a = {0};
	int rc = read_aff(&a, aff, aff_len, err);
	expander *x = rc >= 0 ? llr_malloc(sizeof *x) : NULL;
	if (rc >= 0 && !x)
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc < 0)
		goto out;
	x->a = &a;
	x->fn = fn;
	x->ctx = ctx;
	const char *p = dic, *line;
	size_t n;
	int first = 1;
	while ((line = next_line(&p, dic + dic_len, &n))) {
		if (first) { /* the count of stems */
			first = 0;
			continue;
		}
		size_t wl = 0;
		while (wl < n && line[wl] != '/' && line[wl] != '\t' && line[wl] != ' ' && line[wl] != '\r')
			wl++;
		if (wl == 0)
			continue;
		uint32_t fl[256];
		int nfl = 0;
		if (wl < n && line[wl] == '/') {
			size_t e = wl + 1;
			while (e < n && line[e] != '\t' && line[e] != ' ' && line[e] != '\r')
				e++;
			nfl = parse_flags(&a, line + wl + 1, e - wl - 1, fl, 256, 1);
			if (nfl < 0)
				continue; /* flags this reader cannot take: the stem is left out */
		}
		if ((rc = expand_stem(x, line, wl, fl, nfl)) < 0)
			break;
	}
out:
	free(x);
	affixes_free(&a);
	return rc;
}
