/*
 * para.c - a paragraph of disc-pairs: its tokenised sentences back to
 * back in one buffer, each with its length in bytes and in tokens.  The
 * sentences' white space is normalised as they are added.  Not here:
 * cutting text into sentences (reader.c), building examples (tasks.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void llr_disc_para_clear(llr_disc_para *p)
{
	llr_buf_clear(&p->text);
	p->n = 0;
}

void llr_disc_para_free(llr_disc_para *p)
{
	llr_buf_free(&p->text);
	free(p->off);
	free(p->len);
	free(p->ntok);
	memset(p, 0, sizeof *p);
}

static int is_space(unsigned char c)
{
	return c <= ' ' || c == 0x7f;
}

int llr_disc_para_add(llr_disc_para *p, const char *s, size_t len)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 32;
		size_t *off = llr_reallocarray(p->off, cap, sizeof *off);
		if (!off)
			return LLR_ENOMEM;
		p->off = off;
		size_t *ln = llr_reallocarray(p->len, cap, sizeof *ln);
		if (!ln)
			return LLR_ENOMEM;
		p->len = ln;
		int *nt = llr_reallocarray(p->ntok, cap, sizeof *nt);
		if (!nt)
			return LLR_ENOMEM;
		p->ntok = nt;
		p->cap = cap;
	}
	size_t start = p->text.len;
	if (llr_buf_reserve(&p->text, len + 1) != LLR_OK)
		return LLR_ENOMEM;
	char *d = p->text.data + start;
	size_t o = 0;
	int ntok = 0, gap = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_space(c)) {
			gap = 1;
			continue;
		}
		if (gap && o > 0)
			d[o++] = ' ';
		if (o == 0 || gap)
			ntok++;
		gap = 0;
		d[o++] = (char)c;
	}
	if (o == 0)
		return LLR_OK;
	d[o] = '\0';
	p->text.len = start + o + 1;
	p->off[p->n] = start;
	p->len[p->n] = o;
	p->ntok[p->n] = ntok;
	p->n++;
	return LLR_OK;
}
