/*
 * tokprof.c - how a token corpus was normalised and tokenised (the tok(1)
 * settings that made it), recorded by featurize in its meta as tok.*
 * keys and kept by the model, and the token counts that compare text with
 * such a record: capitals, NFC and NFKC, English clitics and French
 * elisions split off or attached, punctuation glued to a word.
 * featurize takes the record from its options and, where they say
 * nothing, from the counts of its corpus (llr_tokprof_detect); score and
 * gen count their input and report what goes against the model's record
 * (llr_tokprof_check).  Not here: the tokenizer itself (tokenize.c),
 * the meta format (meta.c).  Nothing here prints.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EX_MAX 40         /* bytes of an example token kept */
#define CASED_MIN_WORDS 100 /* a cased model's input with no capital: only from this many words on */

struct llr_tokstat {
	int64_t tokens, words; /* words: tokens holding a letter */
	int64_t n[LLR_TS_NKINDS];
	char ex[LLR_TS_NKINDS][EX_MAX + 1];
	llr_buf a, b, c;
};

llr_tokstat *llr_tokstat_new(void)
{
	return calloc(1, sizeof(llr_tokstat));
}

void llr_tokstat_free(llr_tokstat *s)
{
	if (!s)
		return;
	llr_buf_free(&s->a);
	llr_buf_free(&s->b);
	llr_buf_free(&s->c);
	free(s);
}

int64_t llr_tokstat_tokens(const llr_tokstat *s)
{
	return s->tokens;
}

int64_t llr_tokstat_count(const llr_tokstat *s, int kind)
{
	return kind >= 0 && kind < LLR_TS_NKINDS ? s->n[kind] : 0;
}

static const char *const en_split[] = {"n't", "'s", "'re", "'ve", "'ll", "'d", "'m", NULL};
static const char *const en_tails[] = {"'s", "'re", "'ve", "'ll", "'d", "'m", NULL};
static const char *const fr_elisions[] = {"l'", "d'", "j'", "m'", "n'", "s'", "t'", "c'", "ç'", "qu'",
                                          "jusqu'", "lorsqu'", "puisqu'", "quoiqu'", NULL};

static int in_list(const char *const *l, const char *s, size_t n)
{
	for (size_t i = 0; l[i]; i++)
		if (strlen(l[i]) == n && !memcmp(l[i], s, n))
			return 1;
	return 0;
}

/* A byte of a word: an ASCII letter or digit, or part of a non-ASCII
 * character (letters, for the text these tools read). */
static int wordish(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

static void note(llr_tokstat *s, int kind, const char *t, size_t n, int64_t count)
{
	if (s->n[kind] == 0) {
		size_t k = n < EX_MAX ? n : EX_MAX;
		while (k < n && k > 0 && ((unsigned char)t[k] & 0xC0) == 0x80) /* whole characters */
			k--;
		memcpy(s->ex[kind], t, k);
		s->ex[kind][k] = '\0';
	}
	s->n[kind] += count;
}

/* The clitic and elision tests on c[0..n): a token lowercased, NFC, with
 * its apostrophes (U+2019, U+02BC) made ASCII. */
static void clitics(llr_tokstat *s, const char *t, size_t tn, const char *c, size_t n, int64_t count)
{
	if (!memchr(c, '\'', n))
		return;
	if (in_list(en_split, c, n)) { /* not n' + t, a French elision */
		note(s, LLR_TS_EN_SPLIT, t, tn, count);
		return;
	}
	if (n >= 4 && !memcmp(c + n - 3, "n't", 3) && wordish((unsigned char)c[n - 4]))
		note(s, LLR_TS_EN_ATTACHED, t, tn, count);
	else
		for (size_t k = 2; k <= 3 && k < n; k++)
			if (in_list(en_tails, c + n - k, k) && wordish((unsigned char)c[n - k - 1])) {
				note(s, LLR_TS_EN_ATTACHED, t, tn, count);
				break;
			}
	if (in_list(fr_elisions, c, n)) {
		note(s, LLR_TS_FR_SPLIT, t, tn, count);
		return;
	}
	const char *q = memchr(c, '\'', n);
	size_t k = (size_t)(q - c) + 1;
	if (k < n && in_list(fr_elisions, c, k) && wordish((unsigned char)c[k]))
		note(s, LLR_TS_FR_ATTACHED, t, tn, count);
}

int llr_tokstat_token(llr_tokstat *s, const char *t, size_t n, int64_t count, llr_err *err)
{
	if (n == 0 || count <= 0)
		return LLR_OK;
	s->tokens += count;
	for (size_t i = 0; i < n; i++)
		if (wordish((unsigned char)t[i])) {
			s->words += count;
			break;
		}
	llr_err e = {0};
	if (llr_normalize(t, n, 0, 0, &s->a, &e) < 0)
		return e.code == LLR_ENOMEM ? llr_err_set(err, LLR_ENOMEM, "out of memory") : LLR_OK; /* invalid UTF-8: the reader's business */
	if (s->a.len != n || memcmp(s->a.data, t, n))
		note(s, LLR_TS_NOT_NFC, t, n, count);
	if (llr_normalize(t, n, 1, 0, &s->b, &e) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (s->b.len != n || memcmp(s->b.data, t, n))
		note(s, LLR_TS_NOT_NFKC, t, n, count);
	if (llr_normalize(s->a.data, s->a.len, 0, 1, &s->b, &e) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (s->b.len != s->a.len || memcmp(s->b.data, s->a.data, s->a.len))
		note(s, LLR_TS_CAPITALS, t, n, count);
	unsigned char last = (unsigned char)t[n - 1];
	if (n >= 2 && last && strchr(",;:!?", last) && wordish((unsigned char)t[n - 2]))
		note(s, LLR_TS_PUNCT_ATTACHED, t, n, count);
	/* the lowercased form with ASCII apostrophes */
	llr_buf_clear(&s->c);
	const char *p = s->b.data;
	size_t m = s->b.len;
	for (size_t i = 0; i < m;) {
		int apos = 0;
		if ((unsigned char)p[i] == 0xE2 && i + 2 < m && (unsigned char)p[i + 1] == 0x80 && (unsigned char)p[i + 2] == 0x99)
			apos = 3; /* U+2019 */
		else if ((unsigned char)p[i] == 0xCA && i + 1 < m && (unsigned char)p[i + 1] == 0xBC)
			apos = 2; /* U+02BC */
		if (apos ? llr_buf_putc(&s->c, '\'') : llr_buf_putc(&s->c, p[i]))
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		i += apos ? (size_t)apos : 1;
	}
	clitics(s, t, n, s->c.data, s->c.len, count);
	return LLR_OK;
}

int llr_tokstat_line(llr_tokstat *s, const char *line, size_t len, llr_err *err)
{
	size_t pos = 0, tl;
	const char *t;
	while (llr_token_next(line, len, &pos, &t, &tl))
		if (llr_tokstat_token(s, t, tl, 1, err) < 0)
			return llr_err_code(err, LLR_ENOMEM);
	return LLR_OK;
}

void llr_tokprof_unknown(llr_tokprof *p)
{
	p->lower = p->norm = p->clitics = p->punct = LLR_TP_UNKNOWN;
}

void llr_tokprof_detect(llr_tokprof *p, const llr_tokstat *s)
{
	if (s->tokens == 0)
		return;
	const int64_t *n = s->n;
	if (p->lower == LLR_TP_UNKNOWN)
		p->lower = n[LLR_TS_CAPITALS] == 0;
	if (p->norm == LLR_TP_UNKNOWN)
		p->norm = n[LLR_TS_NOT_NFC] ? LLR_NORM_NONE : LLR_NORM_NFC;
	if (p->clitics == LLR_TP_UNKNOWN) {
		/* split off when split tokens outnumber attached ones, the
		 * language's with more of them: English text with its clitics
		 * attached and a few "n'" or "d'" (rock n' roll) is attached */
		int64_t fr = n[LLR_TS_FR_SPLIT], en = n[LLR_TS_EN_SPLIT];
		int64_t attached = n[LLR_TS_FR_ATTACHED] + n[LLR_TS_EN_ATTACHED];
		if (fr + en > attached)
			p->clitics = fr > en ? LLR_CLITICS_FR : LLR_CLITICS_EN;
		else if (attached > 0)
			p->clitics = LLR_CLITICS_ATTACHED;
	}
	if (p->punct == LLR_TP_UNKNOWN)
		p->punct = n[LLR_TS_PUNCT_ATTACHED] == 0;
}

static const char *const norm_names[] = {"none", "nfc", "nfkc"};
static const char *const clitic_names[] = {"none", "en", "fr"};

int llr_tokprof_to_meta(const llr_tokprof *p, llr_meta *m)
{
	int rc = LLR_OK;
	if (p->lower != LLR_TP_UNKNOWN)
		rc = llr_meta_set(m, "tok.lowercase", p->lower ? "1" : "0");
	if (rc >= 0 && p->norm != LLR_TP_UNKNOWN)
		rc = llr_meta_set(m, "tok.norm", norm_names[p->norm]);
	if (rc >= 0 && p->clitics != LLR_TP_UNKNOWN)
		rc = llr_meta_set(m, "tok.clitics", clitic_names[p->clitics]);
	if (rc >= 0 && p->punct != LLR_TP_UNKNOWN)
		rc = llr_meta_set(m, "tok.punct", p->punct ? "split" : "attached");
	return rc;
}

/* The index of value v in names[0..n), or -1. */
static int lookup(const char *const *names, int n, const char *v)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], v))
			return i;
	return -1;
}

int llr_tokprof_from_meta(llr_tokprof *p, const llr_meta *m, llr_err *err)
{
	static const char *const lower_names[] = {"0", "1"};
	static const char *const punct_names[] = {"attached", "split"};
	struct {
		const char *key;
		const char *const *names;
		int n;
		int *field;
	} keys[] = {
	    {"tok.lowercase", lower_names, 2, &p->lower},
	    {"tok.norm", norm_names, 3, &p->norm},
	    {"tok.clitics", clitic_names, 3, &p->clitics},
	    {"tok.punct", punct_names, 2, &p->punct},
	};
	int any = 0;
	llr_tokprof_unknown(p);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = llr_meta_get(m, keys[i].key);
		if (!v)
			continue;
		if ((*keys[i].field = lookup(keys[i].names, keys[i].n, v)) < 0)
			return llr_err_set(err, LLR_EFORMAT, "meta: %s=%s: not a value it takes", keys[i].key, v);
		any = 1;
	}
	return any;
}

int llr_tokprof_tok_opts(const llr_tokprof *p, llr_tok_opts *o)
{
	memset(o, 0, sizeof *o);
	o->lower = p->lower == 1;
	o->nfkc = p->norm == LLR_NORM_NFKC;
	o->lang = p->clitics == LLR_CLITICS_EN ? "en" : p->clitics == LLR_CLITICS_FR ? "fr" : NULL;
	return LLR_OK;
}

int llr_tokprof_options(const llr_tokprof *p, llr_buf *out)
{
	llr_tok_opts o;
	llr_tokprof_tok_opts(p, &o);
	return llr_buf_printf(out, "tok%s%s%s%s", o.lower ? " -l" : "", o.nfkc ? " --nfkc" : "", o.lang ? " --lang " : "",
	                      o.lang ? o.lang : "") < 0
	           ? LLR_ENOMEM
	           : LLR_OK;
}

static int say(llr_buf *out, const llr_tokstat *s, int kind, const char *what, const char *trained)
{
	return llr_buf_printf(out, "%lld of %lld tokens %s (first: '%s'); the model was trained on %s\n", (long long)s->n[kind],
	                      (long long)s->tokens, what, s->ex[kind], trained) < 0
	           ? -1
	           : 1;
}

int llr_tokprof_check(const llr_tokprof *p, const llr_tokstat *s, int final, llr_buf *out)
{
	const int64_t *n = s->n;
	int bad = 0, r = 0;
	if (p->lower == 1 && n[LLR_TS_CAPITALS] && (r = say(out, s, LLR_TS_CAPITALS, "have capitals", "lowercased text (tok -l)")) > 0)
		bad++;
	if (r >= 0 && p->lower == 0 && final && !n[LLR_TS_CAPITALS] && s->words >= CASED_MIN_WORDS) {
		r = llr_buf_printf(out, "none of %lld tokens has a capital; the model was trained on cased text (tok without -l)\n",
		                   (long long)s->tokens);
		bad += r >= 0;
	}
	if (r >= 0 && p->norm == LLR_NORM_NFC && n[LLR_TS_NOT_NFC] &&
	    (r = say(out, s, LLR_TS_NOT_NFC, "are not NFC-normalised", "NFC text (tok)")) > 0)
		bad++;
	if (r >= 0 && p->norm == LLR_NORM_NFKC && n[LLR_TS_NOT_NFKC] &&
	    (r = say(out, s, LLR_TS_NOT_NFKC, "are not NFKC-normalised", "NFKC text (tok --nfkc)")) > 0)
		bad++;
	if (r >= 0 && p->clitics == LLR_CLITICS_EN && n[LLR_TS_EN_ATTACHED] &&
	    (r = say(out, s, LLR_TS_EN_ATTACHED, "have an English clitic attached", "text with them split off (tok --lang en)")) > 0)
		bad++;
	if (r >= 0 && p->clitics == LLR_CLITICS_FR && n[LLR_TS_FR_ATTACHED] &&
	    (r = say(out, s, LLR_TS_FR_ATTACHED, "have a French elision attached", "text with them split off (tok --lang fr)")) > 0)
		bad++;
	if (r >= 0 && p->clitics == LLR_CLITICS_ATTACHED) {
		int k = n[LLR_TS_EN_SPLIT] >= n[LLR_TS_FR_SPLIT] ? LLR_TS_EN_SPLIT : LLR_TS_FR_SPLIT;
		if (n[k] && (r = say(out, s, k, k == LLR_TS_EN_SPLIT ? "are English clitics split off" : "are French elisions split off",
		                     "text with them attached (tok without --lang)")) > 0)
			bad++;
	}
	if (r >= 0 && p->punct == 1 && n[LLR_TS_PUNCT_ATTACHED] &&
	    (r = say(out, s, LLR_TS_PUNCT_ATTACHED, "have punctuation attached", "text with punctuation split off (tok)")) > 0)
		bad++;
	return r < 0 ? LLR_ENOMEM : bad;
}
