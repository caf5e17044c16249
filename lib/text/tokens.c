/*
 * tokens.c - the one rule by which every tool reads a line of tokens
 * (tok(1), "Token lines"): tokens are the maximal runs of bytes other
 * than space and TAB.  vocab, featurize, train --valid, score and gen all
 * split through llr_token_next, which is llr_token_scan of internal.h
 * (inline there for the n-gram readers), so one file reads the same
 * everywhere; featurize, which fixes the ids of a training corpus, also asks
 * llr_tokens_check for the canonical form.  llr_open_is_token says
 * whether a string could be one token of such a line (the open
 * vocabulary's strings, ngram/openbg.c and lm/open.c).  Not here:
 * tokenising raw text (tokenize.c).
 */
#include <string.h>

#include "internal.h"

static int is_sep(char c)
{
	return c == ' ' || c == '\t';
}

int llr_token_next(const char *line, size_t len, size_t *pos, const char **tok, size_t *toklen)
{
	return llr_token_scan(line, len, pos, tok, toklen);
}

size_t llr_tokens_count(const char *line, size_t len)
{
	size_t pos = 0, n = 0, tl;
	const char *t;
	while (llr_token_next(line, len, &pos, &t, &tl))
		n++;
	return n;
}

int llr_tokens_check(const char *line, size_t len, llr_err *err)
{
	for (size_t i = 0, s = 0; i <= len; i++) {
		if (i < len && !is_sep(line[i]))
			continue;
		size_t n = i - s;
		if (n == 0 && len > 0)
			return llr_err_set(err, LLR_EFORMAT, "empty token (two separators in a row, or one at an end of the line)");
		if ((n == strlen(LLR_BOS) && !memcmp(line + s, LLR_BOS, n)) || (n == strlen(LLR_EOS) && !memcmp(line + s, LLR_EOS, n)))
			return llr_err_set(err, LLR_EFORMAT, "the reserved token '%.*s' is in the text", (int)n, line + s);
		s = i + 1;
	}
	return LLR_OK;
}

int llr_open_is_token(const char *w, size_t len)
{
	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (w[i] == ' ' || w[i] == '\t' || w[i] == '\n' || w[i] == '\r' || w[i] == '\0')
			return 0;
	return 1;
}
