/*
 * extract.c - word features computed from the string alone (llr_extract):
 * orthographic classes (ORTH:...), suffixes (SUF:...) and character
 * n-grams (CNG:...), defined for any valid UTF-8 word, seen in training or
 * not, so featurize, score and gen give an unseen word the same features.
 *
 * Letter case and punctuation are decided by small built-in tables (ASCII,
 * Latin-1, Latin Extended-A, Greek, Cyrillic, the common punctuation and
 * symbol blocks), not by utf8proc: the classes only need to be stable, not
 * complete.  This file is not the hunspell analyser (hunspell.c) nor the
 * lexicon reader (lexicon.c).
 *
 * Names, for the record (man/featurize.1 documents them):
 *   ORTH:number ORTH:decimal ORTH:year ORTH:ordinal ORTH:has-digit
 *   ORTH:punct ORTH:cap ORTH:allcaps ORTH:hyphen ORTH:url ORTH:email
 *   ORTH:len1 ORTH:len2 ORTH:len3-4 ORTH:len5-7 ORTH:len8-11 ORTH:len12+
 *   SUF:<last k characters>$ for k = 1..N, SUF:^<word>$ when k is the
 *   whole word;  CNG:<n-gram of ^word$> for n = A..B (the lone markers
 *   ^ and $ are not features).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int llr_have_hunspell(void)
{
#ifdef LLR_HAVE_HUNSPELL
	return 1;
#else
	return 0;
#endif
}

/* ------------------------------------------------- character classes */

static int cp_upper(int32_t c)
{
	if (c >= 'A' && c <= 'Z')
		return 1;
	if (c >= 0xC0 && c <= 0xDE)
		return c != 0xD7;
	if (c >= 0x100 && c <= 0x137)
		return !(c & 1);
	if (c >= 0x139 && c <= 0x148)
		return c & 1;
	if (c >= 0x14A && c <= 0x177)
		return !(c & 1);
	if (c == 0x178)
		return 1;
	if (c >= 0x179 && c <= 0x17E)
		return c & 1;
	if (c == 0x386 || (c >= 0x388 && c <= 0x38F) || (c >= 0x391 && c <= 0x3AB && c != 0x3A2))
		return 1;
	if (c >= 0x400 && c <= 0x42F)
		return 1;
	return 0;
}

static int cp_lower(int32_t c)
{
	if (c >= 'a' && c <= 'z')
		return 1;
	if (c >= 0xDF && c <= 0xFF)
		return c != 0xF7;
	if (c == 0xB5)
		return 1;
	if (c >= 0x100 && c <= 0x17F)
		return !cp_upper(c);
	if (c >= 0x3AC && c <= 0x3CE)
		return 1;
	if (c >= 0x430 && c <= 0x45F)
		return 1;
	return 0;
}

static int cp_digit(int32_t c)
{
	return c >= '0' && c <= '9';
}

/* Punctuation and symbols (Unicode P* and S* for the blocks listed). */
static int cp_punct(int32_t c)
{
	if (c < 0x80)
		return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
		       (c >= 0x7B && c <= 0x7E);
	if (c >= 0xA1 && c <= 0xBF)
		return c != 0xAA && c != 0xB2 && c != 0xB3 && c != 0xB5 && c != 0xB9 && c != 0xBA &&
		       !(c >= 0xBC && c <= 0xBE);
	if (c == 0xD7 || c == 0xF7)
		return 1;
	if ((c >= 0x2010 && c <= 0x2027) || (c >= 0x2030 && c <= 0x205E))
		return 1;
	if (c >= 0x20A0 && c <= 0x20CF)
		return 1;
	if (c >= 0x2190 && c <= 0x23FF)
		return 1;
	if (c >= 0x2500 && c <= 0x27BF)
		return 1;
	if (c >= 0x2E00 && c <= 0x2E7F)
		return 1;
	if (c >= 0x3001 && c <= 0x3003)
		return 1;
	if (c >= 0x3008 && c <= 0x3011)
		return 1;
	if ((c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) ||
	    (c >= 0xFF5B && c <= 0xFF65))
		return 1;
	return 0;
}

static int cp_hyphen(int32_t c)
{
	return c == '-' || c == 0x2010 || c == 0x2011;
}

/* The classes above as LLR_CP_* bits, for the automaton that follows the
 * ORTH: rules (orthostate.c). */
int llr_cp_ortho_flags(int32_t c)
{
	return (cp_upper(c) ? LLR_CP_UPPER : 0) | (cp_lower(c) ? LLR_CP_LOWER : 0) | (cp_digit(c) ? LLR_CP_DIGIT : 0) |
	       (cp_punct(c) ? LLR_CP_PUNCT : 0) | (cp_hyphen(c) ? LLR_CP_HYPHEN : 0);
}

/* ------------------------------------------------------ string tests */

/* A decoded word: n code points, cp[i] starting at byte off[i]. */
typedef struct {
	const char *s;
	size_t len, n;
	int32_t *cp;
	size_t *off; /* n + 1 entries */
} word;

static int ascii_ieq(const char *a, size_t n, const char *b)
{
	if (strlen(b) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char x = a[i], y = b[i];
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (x != y)
			return 0;
	}
	return 1;
}

static const char *const hundreds[] = {"", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"};
static const char *const tens[] = {"", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"};
static const char *const ones[] = {"", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"};
/* what may follow a Roman numeral in an ordinal (is_ordinal) */
static const char *const rsuf[] = {"e", "er", "re", "ère", "ème", "eme", "è", "es", "èmes", NULL};

static int roman_value(const char *s, size_t n)
{
	/* Canonical numerals 1..3999: try every value's rendering greedily. */
	size_t i = 0;
	int v = 0;
	while (i < n && s[i] == 'M' && v < 3000) {
		v += 1000;
		i++;
	}
	const char *const *tab[] = {hundreds, tens, ones};
	int mul[] = {100, 10, 1};
	for (int t = 0; t < 3; t++) {
		int best = 0;
		size_t bl = 0;
		for (int d = 1; d < 10; d++) {
			size_t l = strlen(tab[t][d]);
			if (l > bl && l <= n - i && !memcmp(s + i, tab[t][d], l)) {
				best = d;
				bl = l;
			}
		}
		v += best * mul[t];
		i += bl;
	}
	return i == n && v > 0 ? v : 0;
}

static int is_ordinal(const word *w)
{
	static const char *const dsuf[] = {"er", "re", "ère", "e", "è", "ème", "eme", "ers", "res", "es",
					   "èmes", "emes", "nd", "nde", "ndes", "d", "st", "th", "rd",
					   "o", "a", "º", "ª", "°", NULL};
	size_t i = 0;
	while (i < w->n && cp_digit(w->cp[i]))
		i++;
	if (i > 0 && i < w->n) {
		const char *rest = w->s + w->off[i];
		size_t rl = w->len - w->off[i];
		for (int k = 0; dsuf[k]; k++)
			if (ascii_ieq(rest, rl, dsuf[k]))
				return 1;
		return 0;
	}
	if (i > 0)
		return 0;
	/* Roman numeral: upper case I V X L C D M, or lower case i v x when
	 * it cannot be an ordinary word (contains x, or 3+ letters). */
	size_t j = 0;
	int upper = w->n > 0 && cp_upper(w->cp[0]);
	char buf[32];
	while (j < w->n && j < sizeof buf - 1) {
		int32_t c = w->cp[j];
		if (upper && c < 0x80 && c && strchr("IVXLCDM", (int)c))
			buf[j] = (char)c;
		else if (!upper && (c == 'i' || c == 'v' || c == 'x'))
			buf[j] = (char)(c - 'a' + 'A');
		else
			break;
		j++;
	}
	if (j == 0 || j == w->n)
		return 0;
	if (!upper && !memchr(buf, 'X', j) && j < 3)
		return 0;
	if (!roman_value(buf, j))
		return 0;
	const char *rest = w->s + w->off[j];
	size_t rl = w->len - w->off[j];
	for (int k = 0; rsuf[k]; k++)
		if (rl == strlen(rsuf[k]) && !memcmp(rest, rsuf[k], rl))
			return 1;
	return 0;
}

/* [+-]? digits ([.,] digits)*: 1 = integer, 2 = decimal, 0 = neither. */
static int number_kind(const word *w)
{
	size_t i = 0;
	if (w->n > 1 && (w->cp[0] == '+' || w->cp[0] == '-'))
		i = 1;
	int groups = 0, digits = 0;
	for (; i < w->n; i++) {
		int32_t c = w->cp[i];
		if (cp_digit(c)) {
			digits++;
			continue;
		}
		if ((c == '.' || c == ',') && digits && i + 1 < w->n && cp_digit(w->cp[i + 1])) {
			groups++;
			digits = 0;
			continue;
		}
		return 0;
	}
	if (!digits)
		return 0;
	return groups ? 2 : 1;
}

static int is_url(const word *w)
{
	const char *s = w->s;
	size_t n = w->len;
	if (n > 4 && ascii_ieq(s, 4, "www.") && n > 5)
		return 1;
	size_t i = 0;
	while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			 (i > 0 && ((s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '.' || s[i] == '-'))))
		i++;
	return i >= 2 && i + 3 < n && !memcmp(s + i, "://", 3);
}

static int is_email(const word *w)
{
	const char *s = w->s;
	size_t n = w->len;
	const char *at = memchr(s, '@', n);
	if (!at || at == s || memchr(at + 1, '@', n - (size_t)(at + 1 - s)))
		return 0;
	const char *d = at + 1, *end = s + n;
	if (d == end || *d == '.' || end[-1] == '.')
		return 0;
	int dot = 0;
	for (const char *p = d; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '.') {
			if (p[-1] == '.')
				return 0;
			dot = 1;
		} else if (!(c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '-')) {
			return 0;
		}
	}
	for (const char *p = s; p < at; p++)
		if ((unsigned char)*p <= ' ')
			return 0;
	return dot;
}

/* ------------------------------------------------------------ llr_extract */

#define EMIT(lit) LLR_EMIT_LITERAL(emit, ctx, lit)

/* orthostate.c follows these rules (all but ORTH:year and the Roman
 * ordinals) code point by code point: a change here is a change there,
 * and tests/unit/test_orthostate.c compares the two. */
static int ortho(const word *w, llr_feature_fn emit, void *ctx)
{
	int nk = number_kind(w);
	if (nk == 1)
		EMIT("ORTH:number");
	if (nk == 2)
		EMIT("ORTH:decimal");
	if (w->n == 4 && nk == 1) {
		/* from the code points: w->s need not end at its length */
		int y = 0;
		for (size_t i = 0; i < 4 && y >= 0; i++)
			y = w->cp[i] >= '0' && w->cp[i] <= '9' ? 10 * y + (int)(w->cp[i] - '0') : -1;
		if (y >= 1000 && y <= 2099)
			EMIT("ORTH:year");
	}
	if (is_ordinal(w))
		EMIT("ORTH:ordinal");
	int digit = 0, punct = 1, upper = 0, lower = 0, hyph = 0;
	for (size_t i = 0; i < w->n; i++) {
		int32_t c = w->cp[i];
		digit |= cp_digit(c);
		punct &= cp_punct(c);
		upper += cp_upper(c);
		lower += cp_lower(c);
		if (cp_hyphen(c) && i > 0 && i + 1 < w->n && !cp_hyphen(w->cp[i - 1]) && !cp_hyphen(w->cp[i + 1]))
			hyph = 1;
	}
	if (digit)
		EMIT("ORTH:has-digit");
	if (punct)
		EMIT("ORTH:punct");
	if (cp_upper(w->cp[0]))
		EMIT("ORTH:cap");
	if (upper >= 2 && !lower)
		EMIT("ORTH:allcaps");
	if (hyph)
		EMIT("ORTH:hyphen");
	if (is_url(w))
		EMIT("ORTH:url");
	if (is_email(w))
		EMIT("ORTH:email");
	if (w->n == 1)
		EMIT("ORTH:len1");
	else if (w->n == 2)
		EMIT("ORTH:len2");
	else if (w->n <= 4)
		EMIT("ORTH:len3-4");
	else if (w->n <= 7)
		EMIT("ORTH:len5-7");
	else if (w->n <= 11)
		EMIT("ORTH:len8-11");
	else
		EMIT("ORTH:len12+");
	return LLR_OK;
}
#undef EMIT

/* Emit prefix + [^] + code points [a, b) + [$] through buf. */
static int emit_piece(const word *w, const char *prefix, int bos, size_t a, size_t b, int eos, char *buf,
		      llr_feature_fn emit, void *ctx)
{
	size_t k = strlen(prefix);
	memcpy(buf, prefix, k);
	if (bos)
		buf[k++] = '^';
	size_t bytes = w->off[b] - w->off[a];
	memcpy(buf + k, w->s + w->off[a], bytes);
	k += bytes;
	if (eos)
		buf[k++] = '$';
	buf[k] = '\0';
	return emit(buf, k, 1.0f, ctx);
}

int llr_extract(const llr_extractors *x, const char *s, size_t len, llr_feature_fn emit, void *ctx)
{
	if (!x || (!x->ortho && x->suffix <= 0 && x->ngram_max <= 0) || len == 0)
		return LLR_OK;
	word w = {.s = s, .len = len};
	w.cp = llr_calloc(len, sizeof *w.cp);
	w.off = llr_calloc(len + 1, sizeof *w.off);
	char *buf = llr_malloc(len + 16);
	int rc = LLR_OK;
	if (!w.cp || !w.off || !buf) {
		rc = LLR_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < len;) {
		int32_t c;
		int l = llr_utf8_decode(s + i, len - i, &c);
		if (l <= 0) {
			rc = LLR_EUTF8;
			goto out;
		}
		w.off[w.n] = i;
		w.cp[w.n++] = c;
		i += (size_t)l;
	}
	w.off[w.n] = len;
	if (x->ortho && (rc = ortho(&w, emit, ctx)) < 0)
		goto out;
	if (x->suffix > 0) {
		for (size_t k = 1; k <= (size_t)x->suffix && k <= w.n; k++) {
			rc = emit_piece(&w, "SUF:", k == w.n, w.n - k, w.n, 1, buf, emit, ctx);
			if (rc < 0)
				goto out;
		}
	}
	if (x->ngram_max > 0) {
		/* Positions 0..n+1 of ^ w $; gram [i, i+g). */
		size_t P = w.n + 2;
		size_t gmin = x->ngram_min > 0 ? (size_t)x->ngram_min : 1;
		for (size_t g = gmin; g <= (size_t)x->ngram_max && g <= P; g++) {
			for (size_t i = 0; i + g <= P; i++) {
				int bos = i == 0, eos = i + g == P;
				if (g == 1 && (bos || eos))
					continue;
				size_t a = bos ? 0 : i - 1, b = eos ? w.n : i + g - 1;
				rc = emit_piece(&w, "CNG:", bos, a, b, eos, buf, emit, ctx);
				if (rc < 0)
					goto out;
			}
		}
	}
	rc = LLR_OK;
out:
	free(w.cp);
	free(w.off);
	free(buf);
	return rc;
}

/* -------------------------------------------------------------- meta */

int llr_extractors_to_meta(const llr_extractors *x, llr_meta *m)
{
	int rc;
	if ((rc = llr_meta_setf(m, "extract.ortho", "%d", x->ortho ? 1 : 0)) < 0)
		return rc;
	if ((rc = llr_meta_setf(m, "extract.suffix", "%d", x->suffix > 0 ? x->suffix : 0)) < 0)
		return rc;
	if (x->ngram_max > 0)
		return llr_meta_setf(m, "extract.ngrams", "%d-%d", x->ngram_min > 0 ? x->ngram_min : 1,
				     x->ngram_max);
	return llr_meta_set(m, "extract.ngrams", "0");
}

#define LLR_EXTRACT_MAX 64 /* suffix length and n-gram order limit */

int llr_extractors_from_meta(llr_extractors *x, const llr_meta *m, llr_err *err)
{
	memset(x, 0, sizeof *x);
	const char *v;
	char *end;
	if ((v = llr_meta_get(m, "extract.ortho"))) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			return llr_err_set(err, LLR_EFORMAT, "meta: extract.ortho: expected 0 or 1, got '%s'", v);
		x->ortho = v[0] == '1';
	}
	if ((v = llr_meta_get(m, "extract.suffix"))) {
		long n = strtol(v, &end, 10);
		if (end == v || *end || n < 0 || n > LLR_EXTRACT_MAX)
			return llr_err_set(err, LLR_EFORMAT, "meta: extract.suffix: bad value '%s'", v);
		x->suffix = (int)n;
	}
	if ((v = llr_meta_get(m, "extract.ngrams")) && strcmp(v, "0")) {
		long a = strtol(v, &end, 10), b;
		if (end == v || *end != '-')
			return llr_err_set(err, LLR_EFORMAT, "meta: extract.ngrams: bad value '%s'", v);
		const char *p = end + 1;
		b = strtol(p, &end, 10);
		if (end == p || *end || a < 1 || b < a || b > LLR_EXTRACT_MAX)
			return llr_err_set(err, LLR_EFORMAT, "meta: extract.ngrams: bad value '%s'", v);
		x->ngram_min = (int)a;
		x->ngram_max = (int)b;
	}
	return LLR_OK;
}

/* ------------------------------------------- the finite lists of ORTH: */

int llr_extract_ortho_lists(llr_form_fn fn, void *ctx)
{
	char buf[64];
	int rc;
	/* the years: four digits from 1000 to 2099 */
	for (int y = 1000; y <= 2099; y++) {
		int n = snprintf(buf, sizeof buf, "%d", y);
		if ((rc = fn(buf, (size_t)n, ctx)) < 0)
			return rc;
	}
	/* the Roman ordinals: every numeral 1..3999 that roman_value reads,
	 * upper case, and lower case when it has only i, v and x, then each
	 * ending is_ordinal takes (a superset of the strings it calls
	 * ordinals: the caller compares rows) */
	for (int v = 1; v <= 3999; v++) {
		int n = 0;
		for (int m = 0; m < v / 1000; m++)
			buf[n++] = 'M';
		n += sprintf(buf + n, "%s%s%s", hundreds[v / 100 % 10], tens[v / 10 % 10], ones[v % 10]);
		int ivx = !strpbrk(buf, "MDCL");
		for (int lower = 0; lower <= ivx; lower++) {
			char r[64];
			for (int i = 0; i < n; i++)
				r[i] = lower ? (char)(buf[i] - 'A' + 'a') : buf[i];
			for (int k = 0; rsuf[k]; k++) {
				size_t sl = strlen(rsuf[k]);
				memcpy(r + n, rsuf[k], sl);
				if ((rc = fn(r, (size_t)n + sl, ctx)) < 0)
					return rc;
			}
		}
	}
	return LLR_OK;
}
