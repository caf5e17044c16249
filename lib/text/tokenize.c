/*
 * tokenize.c - the word tokenizer and sentence splitter behind tok(1) and
 * disc-pairs: text is normalised (NFC or NFKC, through unicode.c), split
 * at white space, then each chunk is cut into URLs, e-mail addresses,
 * numbers (3,5 1.000 -12.5 1/2), words (hyphenated words and inner
 * apostrophes kept) and punctuation; language rules then split French
 * elisions (l' homme) and hyphenated subject/object pronouns (dit -il),
 * and English clitics the Penn Treebank way (do n't, John 's).
 * Abbreviations (abbrev.c) keep their period.  Sentence ends are found
 * on the token list.  Lowercasing happens only when tokens are written, so
 * the rules see the original case.  Nothing here reads files or prints.
 */
#include <stdlib.h>
#include <string.h>

#include "tokenize.h"
#include "unicode.h"

enum {
	T_SPACE = 1,   /* white space before the token */
	T_FINAL = 2,   /* a run of . ! ? ... */
	T_TITLE = 4,   /* abbreviation that never ends a sentence */
	T_MAYEND = 8,  /* abbreviation that may end one */
	T_CLOSER = 16, /* closing quote or bracket */
	T_AMBIG = 32,  /* " or ' : closing only when glued to what precedes */
};

typedef struct span {
	size_t s, e;
	unsigned flags;
} span;

struct llr_tokenizer {
	llr_tok_opts o;
	int en, fr;
	const char *lang; /* "en", "fr" or NULL */
	llr_cps cps;
	span *t;
	size_t nt, capt;
	llr_buf tmp;
	int32_t *cp; /* cps.cp while tokenizing */
	size_t ncp;
	unsigned pending; /* flags for the next pushed token */
	int nomem;
};

static int is_word(int32_t c)
{
	if (c == '_' || c == 0xFFFD) /* U+FFFD: an invalid byte inside a word */
		return 1;
	int k = llr_uni_class(c);
	return k == LLR_UC_LETTER || k == LLR_UC_DIGIT || k == LLR_UC_NUMBER || k == LLR_UC_MARK;
}
static int is_letter(int32_t c) { return llr_uni_class(c) == LLR_UC_LETTER; }
static int is_digit(int32_t c) { return llr_uni_class(c) == LLR_UC_DIGIT; }
static int is_space(int32_t c) { return llr_uni_class(c) == LLR_UC_SPACE; }
static int is_mark(int32_t c) { return llr_uni_class(c) == LLR_UC_MARK; }
static int is_apos(int32_t c) { return c == '\'' || c == 0x2019 || c == 0x02BC; }
static int is_hyphen(int32_t c) { return c == '-' || c == 0x2010 || c == 0x2011; }
static int is_sign(int32_t c) { return c == '-' || c == '+' || c == 0x2212; }
static int is_final(int32_t c) { return c == '.' || c == '!' || c == '?' || c == 0x2026; }
static int32_t ascii_lower(int32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

llr_tokenizer *llr_tokenizer_new(const llr_tok_opts *o, llr_err *err)
{
	llr_tok_opts def = {0};
	if (!o)
		o = &def;
	if (o->lang && strcmp(o->lang, "en") && strcmp(o->lang, "fr")) {
		llr_err_set(err, LLR_EINVAL, "unknown language '%s' (use en or fr)", o->lang);
		return NULL;
	}
	llr_tokenizer *t = calloc(1, sizeof *t);
	if (!t) {
		llr_err_set(err, LLR_ENOMEM, "tokenizer: out of memory");
		return NULL;
	}
	t->o = *o;
	t->en = o->lang && !strcmp(o->lang, "en");
	t->fr = o->lang && !strcmp(o->lang, "fr");
	t->lang = t->en ? "en" : t->fr ? "fr" : NULL;
	t->o.lang = t->lang;
	return t;
}

void llr_tokenizer_free(llr_tokenizer *t)
{
	if (!t)
		return;
	llr_cps_free(&t->cps);
	free(t->t);
	llr_buf_free(&t->tmp);
	free(t);
}

static void push(llr_tokenizer *t, size_t s, size_t e, unsigned flags)
{
	if (s >= e)
		return;
	if (t->nt == t->capt) {
		size_t cap = t->capt ? t->capt * 2 : 256;
		span *p = llr_reallocarray(t->t, cap, sizeof *p);
		if (!p) {
			t->nomem = 1;
			return;
		}
		t->t = p;
		t->capt = cap;
	}
	t->t[t->nt++] = (span){s, e, flags | t->pending};
	t->pending = 0;
}

/* Case-insensitive (ASCII letters) comparison of cp[s..e) with lit, where
 * apostrophes of any kind match '. */
static int eq_ci(const int32_t *cp, size_t s, size_t e, const char *lit)
{
	size_t n = strlen(lit);
	if (e - s != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int32_t c = ascii_lower(cp[s + i]);
		if (is_apos(c))
			c = '\'';
		if (c != (unsigned char)lit[i])
			return 0;
	}
	return 1;
}

/* Lowercase UTF-8 of cp[s..e) in t->tmp (apostrophes as '). */
static const char *lower_utf8(llr_tokenizer *t, size_t s, size_t e)
{
	llr_buf_clear(&t->tmp);
	for (size_t i = s; i < e; i++)
		if (llr_uni_put(&t->tmp, is_apos(t->cp[i]) ? '\'' : t->cp[i], 1))
			t->nomem = 1;
	return t->tmp.len ? t->tmp.data : "";
}

static const char *utf8(llr_tokenizer *t, size_t s, size_t e)
{
	llr_buf_clear(&t->tmp);
	for (size_t i = s; i < e; i++)
		if (llr_uni_put(&t->tmp, t->cp[i], 0))
			t->nomem = 1;
	return t->tmp.len ? t->tmp.data : "";
}

static int starts_with_ci(const int32_t *cp, size_t s, size_t e, const char *lit)
{
	size_t n = strlen(lit);
	return e - s > n && eq_ci(cp, s, s + n, lit);
}

/* A URL starting at i (chunk ends at e): its end, or i. */
static size_t match_url(const int32_t *cp, size_t i, size_t e)
{
	static const char *const pre[] = {"http://", "https://", "ftp://", "www.", NULL};
	size_t k = 0;
	for (int p = 0; pre[p]; p++)
		if (starts_with_ci(cp, i, e, pre[p]) && is_word(cp[i + strlen(pre[p])])) {
			k = e;
			break;
		}
	if (!k)
		return i;
	size_t open = 0;
	for (size_t j = i; j < k; j++)
		open += cp[j] == '(';
	while (k > i) {
		int32_t c = cp[k - 1];
		if (c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?' || c == '"' ||
		    is_apos(c) || c == 0xBB || c == 0x201D || c == 0x2026 || c == ']' || c == '>' ||
		    (c == ')' && !open))
			k--;
		else
			break;
	}
	return k;
}

/* An e-mail address starting at i: its end, or i. */
static size_t match_email(const int32_t *cp, size_t i, size_t e)
{
	size_t k = i;
	if (!is_word(cp[i]))
		return i;
	while (k < e && k - i < 64 && (is_word(cp[k]) || cp[k] == '.' || cp[k] == '_' || cp[k] == '%' || cp[k] == '+' || cp[k] == '-'))
		k++;
	if (k >= e || cp[k] != '@')
		return i;
	size_t d = k + 1, end = 0, ls = 0, labels = 0;
	for (;;) {
		size_t s = d;
		while (d < e && (is_word(cp[d]) || cp[d] == '-'))
			d++;
		if (d == s)
			break;
		labels++;
		ls = s;
		end = d;
		if (d + 1 < e && cp[d] == '.' && is_word(cp[d + 1])) {
			d++;
			continue;
		}
		break;
	}
	if (labels < 2 || end - ls < 2)
		return i;
	for (size_t j = ls; j < end; j++)
		if (!is_letter(cp[j]))
			return i;
	return end;
}

/* Single letters with periods, two or more: U.S. e.g. a.m.  Its end or i. */
static size_t match_letter_dots(const int32_t *cp, size_t i, size_t e)
{
	size_t k = i, n = 0;
	while (k + 1 < e && is_letter(cp[k]) && cp[k + 1] == '.') {
		k += 2;
		n++;
		if (!(k + 1 < e && is_letter(cp[k]) && cp[k + 1] == '.'))
			break;
	}
	if (n >= 2 && (k >= e || !is_word(cp[k])))
		return k;
	return i;
}

/* The end of the word (or number) starting at i. */
static size_t scan_word(const int32_t *cp, size_t i, size_t e)
{
	size_t j = i;
	if (is_sign(cp[j]))
		j++;
	for (;;) {
		while (j < e && is_word(cp[j]))
			j++;
		if (j + 1 >= e || j == i || !is_word(cp[j - 1]))
			break;
		int32_t p = cp[j - 1], c = cp[j], n = cp[j + 1];
		if (is_hyphen(c) && is_word(n)) {
			j++;
			continue;
		}
		if ((c == '.' || c == ',' || c == ':' || c == '/' || c == 0x2044) && is_digit(p) && is_digit(n)) {
			j++;
			continue;
		}
		if (is_apos(c) && (is_letter(p) || is_digit(p)) && (is_letter(n) || (is_digit(n) && is_letter(p)))) {
			j++;
			continue;
		}
		break;
	}
	return j;
}

static const char *const fr_elisions[] = {
	"l'", "d'", "j'", "m'", "n'", "s'", "t'", "c'", "ç'", "qu'",
	"jusqu'", "lorsqu'", "puisqu'", "quoiqu'", NULL,
};
static const char *const fr_pronouns[] = {
	"je", "tu", "il", "elle", "on", "nous", "vous", "ils", "elles", "le", "la", "les",
	"lui", "leur", "moi", "toi", "y", "en", "ce", NULL,
};
static const char *const fr_hyphen_whole[] = {"rendez-vous", NULL};
static const char *const en_clitics[] = {"'s", "'re", "'ve", "'ll", "'d", "'m", NULL};

static int in_list(const char *const *l, const char *s)
{
	for (size_t i = 0; l[i]; i++)
		if (!strcmp(l[i], s))
			return 1;
	return 0;
}

/* Push word cp[ws..we) split by the language's clitic rules. */
static void split_word(llr_tokenizer *t, size_t ws, size_t we)
{
	const int32_t *cp = t->cp;
	size_t orig_we = we;
	size_t tails[8];
	int nt = 0;
	if (t->fr) {
		for (;;) {
			size_t k = ws;
			while (k < we && !is_apos(cp[k]))
				k++;
			if (k + 1 >= we || !in_list(fr_elisions, lower_utf8(t, ws, k + 1)))
				break;
			push(t, ws, k + 1, 0);
			ws = k + 1;
		}
		while (nt < 8 && !in_list(fr_hyphen_whole, lower_utf8(t, ws, we))) {
			size_t h = we;
			while (h > ws && !is_hyphen(cp[h - 1]))
				h--;
			if (h <= ws + 1)
				break;
			h--; /* at the hyphen */
			const char *suf = lower_utf8(t, h + 1, we);
			if (!in_list(fr_pronouns, suf))
				break;
			if (h >= ws + 3 && cp[h - 1] == 't' && is_hyphen(cp[h - 2]) &&
			    (!strcmp(suf, "il") || !strcmp(suf, "elle") || !strcmp(suf, "on") ||
			     !strcmp(suf, "ils") || !strcmp(suf, "elles")))
				h -= 2;
			tails[nt++] = h;
			we = h;
		}
	} else if (t->en && we - ws >= 2) {
		size_t n = we - ws;
		if (n >= 4 && ascii_lower(cp[we - 3]) == 'n' && is_apos(cp[we - 2]) && ascii_lower(cp[we - 1]) == 't') {
			tails[nt++] = we - 3;
			we -= 3;
		} else if (eq_ci(cp, ws, we, "cannot")) {
			tails[nt++] = we - 3;
			we -= 3;
		} else {
			for (size_t k = 2; k <= 3 && k < n; k++)
				if (is_apos(cp[we - k]) && in_list(en_clitics, lower_utf8(t, we - k, we))) {
					tails[nt++] = we - k;
					we -= k;
					break;
				}
		}
	}
	push(t, ws, we, 0);
	for (int k = nt - 1; k >= 0; k--)
		push(t, tails[k], k == 0 ? orig_we : tails[k - 1], 0);
}

/* Tokens of the white-space-free chunk cp[s..e). */
static void scan_chunk(llr_tokenizer *t, size_t s, size_t e)
{
	const int32_t *cp = t->cp;
	size_t i = s;
	while (i < e && !t->nomem) {
		int32_t c = cp[i];
		int glued = i > s;
		size_t j;
		if ((i == s || !is_word(cp[i - 1])) && ((j = match_url(cp, i, e)) > i || (j = match_email(cp, i, e)) > i)) {
			push(t, i, j, 0);
			i = j;
			continue;
		}
		if (is_word(c) || (is_sign(c) && i + 1 < e && is_digit(cp[i + 1]) && (i == s || !is_word(cp[i - 1])))) {
			if ((j = match_letter_dots(cp, i, e)) > i) {
				const char *w = utf8(t, i, j - 1);
				int k = llr_abbrev_kind(t->lang, w, t->tmp.len);
				push(t, i, j, k == LLR_ABBR_TITLE ? T_TITLE : T_MAYEND);
				i = j;
				continue;
			}
			j = scan_word(cp, i, e);
			size_t first = t->nt;
			split_word(t, i, j);
			if (t->nt == first)
				break;
			span *last = &t->t[t->nt - 1];
			if (j < e && cp[j] == '.' && last->e == j) {
				size_t ls = last->s;
				int k = LLR_ABBR_NONE;
				if (j - ls == 1 && llr_uni_is_upper(cp[ls]))
					k = LLR_ABBR_TITLE;
				else {
					const char *w = utf8(t, ls, j);
					k = llr_abbrev_kind(t->lang, w, t->tmp.len);
				}
				if (k == LLR_ABBR_NUMBER) {
					size_t n = j + 1;
					while (n < t->ncp && is_space(cp[n]))
						n++;
					k = n < t->ncp && is_digit(cp[n]) ? LLR_ABBR_TITLE : LLR_ABBR_NONE;
				}
				if (k != LLR_ABBR_NONE) {
					last->e = ++j;
					last->flags |= k == LLR_ABBR_TITLE ? T_TITLE : T_MAYEND;
				}
			}
			i = j;
			continue;
		}
		unsigned fl = 0;
		j = i + 1;
		if (is_final(c)) {
			while (j < e && is_final(cp[j]))
				j++;
			fl = T_FINAL;
		} else if (c == '-' && j < e && cp[j] == '-') {
			while (j < e && cp[j] == '-')
				j++;
		} else if (c == ')' || c == ']' || c == '}' || c == 0xBB || c == 0x201D || c == 0x2019 || c == 0x203A) {
			fl = T_CLOSER;
		} else if (c == '"' || c == '\'') {
			fl = glued ? T_CLOSER | T_AMBIG : T_AMBIG;
		}
		while (j < e && is_mark(cp[j]))
			j++;
		push(t, i, j, fl);
		i = j;
	}
}

/* Split cp[0..ncp) into spans. */
static void scan(llr_tokenizer *t)
{
	size_t i = 0, n = t->ncp;
	t->nt = 0;
	while (i < n && !t->nomem) {
		while (i < n && is_space(t->cp[i]))
			i++;
		if (i > 0)
			t->pending = T_SPACE;
		size_t s = i;
		while (i < n && !is_space(t->cp[i]))
			i++;
		if (i > s)
			scan_chunk(t, s, i);
	}
	t->pending = 0;
}

/* Does token u open a sentence (as seen from the token before)? */
static int opens(const llr_tokenizer *t, size_t u)
{
	int32_t c = t->cp[t->t[u].s];
	if (llr_uni_is_lower(c))
		return 0;
	if (c == ',' || c == ';' || c == ':' || c == ')' || c == ']' || c == '}' || c == 0xBB || c == 0x201D ||
	    is_final(c) || c == '%')
		return 0;
	return 1;
}

/* 1 if a sentence ends after token t->t[k] given the token list; *last is
 * the last token of the sentence (closing quotes and brackets included). */
static int ends_at(const llr_tokenizer *t, size_t k, size_t *last)
{
	unsigned f = t->t[k].flags;
	if (!(f & (T_FINAL | T_MAYEND)))
		return 0;
	size_t u = k + 1;
	while (u < t->nt && (t->t[u].flags & T_CLOSER))
		u++;
	*last = u - 1;
	if (u >= t->nt)
		return 1;
	if (f & T_MAYEND)
		return llr_uni_is_upper(t->cp[t->t[u].s]);
	return opens(t, u);
}

static int put_span(llr_tokenizer *t, llr_buf *out, size_t s, size_t e)
{
	for (size_t i = s; i < e; i++)
		if (llr_uni_put(out, t->cp[i], t->o.lower))
			return LLR_ENOMEM;
	return LLR_OK;
}

/* Character mode over cp[s..e): each character (with its combining marks)
 * a token, runs of white space one U+2581 token. */
static int put_chars(llr_tokenizer *t, llr_buf *out, size_t s, size_t e, int *first)
{
	size_t i = s;
	while (i < e) {
		if (is_space(t->cp[i])) {
			while (i < e && is_space(t->cp[i]))
				i++;
			if (i < e && !*first && llr_buf_append(out, " \xe2\x96\x81", 4))
				return LLR_ENOMEM;
			continue;
		}
		size_t j = i + 1;
		while (j < e && is_mark(t->cp[j]))
			j++;
		if (!*first && llr_buf_putc(out, ' '))
			return LLR_ENOMEM;
		*first = 0;
		if (put_span(t, out, i, j))
			return LLR_ENOMEM;
		i = j;
	}
	return LLR_OK;
}

int llr_tokenize(llr_tokenizer *t, const char *text, size_t len, int split_sentences, llr_buf *out, llr_err *err)
{
	int rc = llr_uni_normalize(text, len, t->o.nfkc, &t->cps, err);
	if (rc)
		return rc;
	/* Format characters (soft hyphen, zero-width space, BOM) go; other
	 * control characters count as white space. */
	size_t n = 0;
	for (size_t i = 0; i < t->cps.n; i++) {
		int32_t c = t->cps.cp[i];
		int k = llr_uni_class(c);
		if (k == LLR_UC_FORMAT)
			continue;
		t->cps.cp[n++] = k == LLR_UC_CONTROL ? ' ' : c;
	}
	t->cp = t->cps.cp;
	t->ncp = n;
	t->nomem = 0;
	if (t->o.chars && !split_sentences) {
		int first = 1;
		if (put_chars(t, out, 0, n, &first))
			return llr_err_set(err, LLR_ENOMEM, "tokenizer: out of memory");
		return LLR_OK;
	}
	scan(t);
	if (t->nomem)
		return llr_err_set(err, LLR_ENOMEM, "tokenizer: out of memory");
	size_t start = 0; /* first token of the current sentence */
	for (size_t k = 0; k < t->nt; k++) {
		size_t last = k;
		int end = k + 1 == t->nt || (split_sentences && ends_at(t, k, &last));
		if (!end)
			continue;
		if (start > 0 && llr_buf_putc(out, '\n'))
			goto nomem;
		if (t->o.chars) {
			int first = 1;
			if (put_chars(t, out, t->t[start].s, t->t[last].e, &first))
				goto nomem;
		} else {
			for (size_t u = start; u <= last; u++) {
				if (u > start && llr_buf_putc(out, ' '))
					goto nomem;
				if (put_span(t, out, t->t[u].s, t->t[u].e))
					goto nomem;
			}
		}
		start = last + 1;
		k = last;
	}
	return LLR_OK;
nomem:
	return llr_err_set(err, LLR_ENOMEM, "tokenizer: out of memory");
}

int llr_normalize(const char *s, size_t len, int nfkc, int lower, llr_buf *out, llr_err *err)
{
	llr_cps c = {0};
	llr_buf_clear(out);
	int rc = llr_uni_normalize(s, len, nfkc, &c, err);
	for (size_t i = 0; rc == LLR_OK && i < c.n; i++)
		if (llr_uni_put(out, c.cp[i], lower))
			rc = llr_err_set(err, LLR_ENOMEM, "normalise: out of memory");
	llr_cps_free(&c);
	return rc;
}
