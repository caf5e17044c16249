/*
 * members.c - tensor-archive member helpers for the kinds made of named
 * tables (the lexicon, the n-gram trie, the any/ and source members): a
 * text member of names, one a line; the next member, checked to be the
 * one expected; a text member of exactly the declared number of distinct
 * names; name/indptr, name/indices, name/data as a matrix of the declared
 * shape.  Moved here from lexicon.c, so the word models below the lexicon
 * (ngram/trie.c, features/) use them without calling up (scripts/layers).
 * Not here: the archive itself (tensorio.c), what a kind's members mean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int llr_lex_put_names(llr_tensor_writer *w, const char *member, const llr_strmap *s, llr_err *err)
{
	llr_buf b = {0};
	size_t n = llr_strmap_size(s);
	for (size_t i = 0; i < n; i++) {
		const char *t = llr_strmap_str(s, (int32_t)i);
		size_t l = llr_strmap_len(s, (int32_t)i);
		if (l == 0 || memchr(t, '\n', l)) {
			llr_buf_free(&b);
			return llr_err_set(err, LLR_EFORMAT, "%s: entry %zu is empty or holds a newline", member, i);
		}
		if (llr_buf_append(&b, t, l) < 0 || llr_buf_putc(&b, '\n') < 0) {
			llr_buf_free(&b);
			return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", member);
		}
	}
	int rc = llr_tw_put_text(w, member, b.data ? b.data : "", b.len, err);
	llr_buf_free(&b);
	return rc;
}

int llr_lex_next_member(llr_tensor_reader *r, const char *want, llr_err *err)
{
	const char *name;
	int rc = llr_tr_next(r, &name, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return llr_err_set(err, LLR_ETRUNC, "member %s: missing (the stream ends before it)", want);
	if (strcmp(name, want))
		return llr_err_set(err, LLR_EFORMAT, "member %s: expected here, found member %s", want, name);
	return LLR_OK;
}

/* A text member of exactly `want` non-empty, distinct lines. */
int llr_lex_read_names(llr_tensor_reader *r, const char *member, int64_t want, llr_strmap **out, llr_err *err)
{
	int rc = llr_lex_next_member(r, member, err);
	if (rc < 0)
		return rc;
	char *text = NULL;
	size_t len = 0;
	if ((rc = llr_tr_text(r, &text, &len, err)) < 0)
		return rc;
	rc = llr_lex_parse_names(text, len, member, want, out, err);
	free(text);
	return rc;
}

int llr_lex_parse_names(const char *text, size_t len, const char *member, int64_t want, llr_strmap **out, llr_err *err)
{
	llr_strmap *s = llr_strmap_new();
	if (!s)
		return llr_err_set(err, LLR_ENOMEM, "member %s: out of memory", member);
	size_t i = 0;
	int rc = LLR_OK;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
		if (l == 0) {
			rc = llr_err_set(err, LLR_EFORMAT, "member %s: line %zu is empty", member,
					 llr_strmap_size(s) + 1);
			break;
		}
		if ((int64_t)llr_strmap_size(s) >= want) {
			rc = llr_err_set(err, LLR_EFORMAT, "member %s: more than the %lld entries the meta declares",
					 member, (long long)want);
			break;
		}
		size_t before = llr_strmap_size(s);
		int32_t id = llr_strmap_add(s, text + i, l);
		if (id < 0) {
			rc = llr_err_set(err, LLR_ENOMEM, "member %s: out of memory", member);
			break;
		}
		if (llr_strmap_size(s) == before) {
			rc = llr_err_set(err, LLR_EFORMAT, "member %s: line %zu repeats '%.*s'", member, before + 1,
					 (int)LLR_MIN(l, 100), text + i);
			break;
		}
		i += l + (nl ? 1 : 0);
	}
	if (rc == LLR_OK && (int64_t)llr_strmap_size(s) != want)
		rc = llr_err_set(err, LLR_EFORMAT, "member %s: %zu entries, the meta declares %lld", member,
				 llr_strmap_size(s), (long long)want);
	if (rc < 0) {
		llr_strmap_free(s);
		return rc;
	}
	*out = s;
	return LLR_OK;
}

int llr_lex_read_csr(llr_tensor_reader *r, const char *name, int64_t rows, int64_t cols, llr_csr **out, llr_err *err)
{
	char member[64];
	snprintf(member, sizeof member, "%s/indptr", name);
	int rc = llr_lex_next_member(r, member, err);
	if (rc < 0)
		return rc;
	if ((rc = llr_tr_csr(r, name, (int32_t)cols, out, err)) < 0)
		return rc;
	if ((*out)->rows != rows || (*out)->cols != cols) {
		rc = llr_err_set(err, LLR_EFORMAT, "member %s: %d x %d, the meta declares %lld x %lld", name,
				 (*out)->rows, (*out)->cols, (long long)rows, (long long)cols);
		llr_csr_free(*out);
		*out = NULL;
	}
	return rc;
}
