/*
 * conllu.c - the CoNLL-U line parser (https://universaldependencies.org/
 * format.html): one word line split in place into its ten columns, and
 * FEATS split into Key:Value tags.  It does not read files, skip comments
 * or group sentences: callers (tok --from conllu, featurize --conllu) do,
 * and prefix errors with file:line.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A positive decimal integer of at most 9 digits, the whole of s[0..n). */
static int parse_pos(const char *s, size_t n, int *out)
{
	if (n == 0 || n > 9)
		return 0;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 1;
}

int llr_conllu_parse(char *line, size_t len, llr_conllu_word *w, llr_err *err)
{
	char *col[10];
	size_t ncol = 0, start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != '\t')
			continue;
		if (ncol == 10)
			return llr_err_set(err, LLR_EFORMAT, "expected 10 tab-separated columns, found more");
		if (i == start)
			return llr_err_set(err, LLR_EFORMAT, "column %zu is empty (use _)", ncol + 1);
		col[ncol++] = line + start;
		if (i < len)
			line[i] = 0;
		start = i + 1;
	}
	if (ncol != 10)
		return llr_err_set(err, LLR_EFORMAT, "expected 10 tab-separated columns, found %zu", ncol);
	line[len] = 0;
	memset(w, 0, sizeof *w);
	const char *id = col[0];
	size_t idn = strlen(id);
	const char *dash = memchr(id, '-', idn), *dot = memchr(id, '.', idn);
	int a, b;
	if (!dash && !dot && parse_pos(id, idn, &a)) {
		w->kind = 0;
	} else if (dash && !dot && parse_pos(id, (size_t)(dash - id), &a) &&
	           parse_pos(dash + 1, idn - (size_t)(dash - id) - 1, &b) && a < b) {
		w->kind = 1;
		w->range_first = a;
		w->range_last = b;
	} else if (dot && !dash && (dot == id + 1 && id[0] == '0' ? 1 : parse_pos(id, (size_t)(dot - id), &a)) &&
	           parse_pos(dot + 1, idn - (size_t)(dot - id) - 1, &b)) {
		w->kind = 2;
	} else {
		return llr_err_set(err, LLR_EFORMAT, "bad ID '%.40s'", id);
	}
	w->id = col[0];
	w->form = col[1];
	w->lemma = col[2];
	w->upos = col[3];
	w->xpos = col[4];
	w->feats = col[5];
	w->head = col[6];
	w->deprel = col[7];
	w->deps = col[8];
	w->misc = col[9];
	return LLR_OK;
}

int llr_conllu_feats(const char *feats, llr_feature_fn emit, void *ctx, llr_err *err)
{
	if (!strcmp(feats, "_"))
		return LLR_OK;
	llr_buf tag = {0};
	int rc = LLR_OK;
	const char *p = feats;
	for (;;) {
		const char *end = strchr(p, '|');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (!eq || eq == p || eq + 1 == p + n) {
			rc = llr_err_set(err, LLR_EFORMAT, "bad FEATS pair '%.*s' (want Key=Value)", (int)LLR_MIN(n, 60), p);
			break;
		}
		size_t klen = (size_t)(eq - p);
		const char *v = eq + 1, *vend = p + n;
		while (v <= vend) {
			const char *comma = memchr(v, ',', (size_t)(vend - v));
			const char *ve = comma ? comma : vend;
			if (ve == v) {
				rc = llr_err_set(err, LLR_EFORMAT, "bad FEATS pair '%.*s' (empty value)", (int)LLR_MIN(n, 60), p);
				goto out;
			}
			llr_buf_clear(&tag);
			if (llr_buf_append(&tag, p, klen) || llr_buf_putc(&tag, ':') ||
			    llr_buf_append(&tag, v, (size_t)(ve - v))) {
				rc = llr_err_set(err, LLR_ENOMEM, "FEATS: out of memory");
				goto out;
			}
			rc = emit(tag.data, tag.len, 1.0f, ctx);
			if (rc < 0)
				goto out;
			rc = LLR_OK;
			v = ve + 1;
		}
		if (!end)
			break;
		p = end + 1;
	}
out:
	llr_buf_free(&tag);
	return rc;
}
