/*
 * hunspell.c - the one seam to libhunspell: morphological analyses of a
 * word from a hunspell dictionary, turned into features HS:<field>:<value>
 * (featurize --hunspell).  Built with hunspell only when the Makefile found
 * it (LLR_HAVE_HUNSPELL); otherwise llr_morph_open reports that the
 * library was built without it.
 *
 * Kept fields (hunspell(4) morphological description): po: (part of
 * speech), is: (inflectional suffix), ds: (derivational suffix), ts:
 * (terminal suffix), dp: ip: tp: (derivational, inflectional, terminal
 * prefix), fl: (the affix rule that made the form, the only tag of
 * dictionaries without morphological fields such as en_US: walked gives
 * HS:fl:D, cats HS:fl:S).  Skipped: st: (stem), al: (allomorph), pa:
 * (compound part), sp: (surface prefix) and anything else, which are words
 * rather than tags.  Every word the dictionary knows (has an analysis)
 * also gets HS:@known: one feature that sets dictionary words apart from
 * the strings a spelling model makes up, whatever their tags.
 * Only UTF-8 dictionaries are supported (Debian's hunspell-fr is one).
 * Not here: which words are analysed (featurize decides).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifdef LLR_HAVE_HUNSPELL

#include <hunspell.h>

struct llr_morph {
	Hunhandle *h;
	char *buf; /* the word, NUL-terminated */
	size_t cap;
};

llr_morph *llr_morph_open(const char *path, llr_err *err)
{
	size_t n = strlen(path);
	if (n > 4 && (!strcmp(path + n - 4, ".dic") || !strcmp(path + n - 4, ".aff")))
		n -= 4;
	char *aff = llr_malloc(n + 5), *dic = llr_malloc(n + 5);
	llr_morph *m = calloc(1, sizeof *m);
	if (!aff || !dic || !m) {
		llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	memcpy(aff, path, n);
	memcpy(aff + n, ".aff", 5);
	memcpy(dic, path, n);
	memcpy(dic + n, ".dic", 5);
	if (access(aff, R_OK) != 0 || access(dic, R_OK) != 0) {
		llr_err_set(err, LLR_EIO, "%s: no readable hunspell dictionary (%s and %s)", path, aff, dic);
		goto fail;
	}
	m->h = Hunspell_create(aff, dic);
	if (!m->h) {
		llr_err_set(err, LLR_EFORMAT, "%s: hunspell could not load the dictionary", path);
		goto fail;
	}
	const char *enc = Hunspell_get_dic_encoding(m->h);
	if (!enc || (strcmp(enc, "UTF-8") && strcmp(enc, "utf-8") && strcmp(enc, "UTF8"))) {
		llr_err_set(err, LLR_EFORMAT, "%s: dictionary encoding %s is not supported (UTF-8 only)", path,
			    enc ? enc : "(none)");
		goto fail;
	}
	free(aff);
	free(dic);
	return m;
fail:
	free(aff);
	free(dic);
	llr_morph_close(m);
	return NULL;
}

static int write_all(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = n ? fwrite(data, 1, n, f) : 0;
	return fclose(f) != 0 || w != n ? -1 : 0;
}

llr_morph *llr_morph_open_mem(const char *aff, size_t aff_len, const char *dic, size_t dic_len, llr_err *err)
{
	const char *tmp = getenv("TMPDIR");
	llr_buf dir = {0}, file = {0};
	llr_morph *m = NULL;
	if (llr_buf_printf(&dir, "%s/llrnn-hunspell-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		llr_err_set(err, LLR_ENOMEM, "hunspell: out of memory");
		goto out;
	}
	if (!mkdtemp(dir.data)) {
		llr_err_set(err, LLR_EIO, "hunspell: cannot make a temporary directory %s", dir.data);
		goto out;
	}
	int ok = llr_buf_printf(&file, "%s/d.aff", dir.data) >= 0 && write_all(file.data, aff, aff_len) == 0;
	llr_buf_clear(&file);
	ok = ok && llr_buf_printf(&file, "%s/d.dic", dir.data) >= 0 && write_all(file.data, dic, dic_len) == 0;
	llr_buf_clear(&file);
	if (ok && llr_buf_printf(&file, "%s/d", dir.data) >= 0)
		m = llr_morph_open(file.data, err);
	else
		llr_err_set(err, LLR_EIO, "hunspell: cannot write the dictionary to %s", dir.data);
	/* hunspell has read both files: remove them */
	llr_buf_clear(&file);
	if (llr_buf_printf(&file, "%s/d.aff", dir.data) >= 0)
		unlink(file.data);
	llr_buf_clear(&file);
	if (llr_buf_printf(&file, "%s/d.dic", dir.data) >= 0)
		unlink(file.data);
	rmdir(dir.data);
out:
	llr_buf_free(&dir);
	llr_buf_free(&file);
	return m;
}

static int kept_field(const char *f)
{
	static const char *const keep[] = {"po:", "is:", "ds:", "ts:", "dp:", "ip:", "tp:", "fl:", NULL};
	for (int i = 0; keep[i]; i++)
		if (!strncmp(f, keep[i], 3))
			return 1;
	return 0;
}

int llr_morph_features(llr_morph *m, const char *word, size_t len, llr_feature_fn emit, void *ctx)
{
	if (memchr(word, '\0', len) || llr_utf8_valid_prefix(word, len) != len)
		return LLR_EINVAL;
	if (len + 1 > m->cap) {
		char *p = realloc(m->buf, len + 64);
		if (!p)
			return LLR_ENOMEM;
		m->buf = p;
		m->cap = len + 64;
	}
	memcpy(m->buf, word, len);
	m->buf[len] = '\0';
	char **list = NULL;
	int na = Hunspell_analyze(m->h, &list, m->buf);
	int rc = na > 0 ? emit(LLR_FEAT_HS_KNOWN, strlen(LLR_FEAT_HS_KNOWN), 1.0f, ctx) : LLR_OK;
	llr_buf name = {0};
	for (int a = 0; a < na && rc >= 0; a++) {
		const char *p = list[a];
		while (*p && rc >= 0) {
			while (*p == ' ' || *p == '\t')
				p++;
			const char *q = p;
			while (*q && *q != ' ' && *q != '\t')
				q++;
			if (q - p > 3 && kept_field(p)) {
				llr_buf_clear(&name);
				if (llr_buf_append(&name, "HS:", 3) < 0 || llr_buf_append(&name, p, (size_t)(q - p)) < 0)
					rc = LLR_ENOMEM;
				else
					rc = emit(name.data, name.len, 1.0f, ctx);
			}
			p = q;
		}
	}
	llr_buf_free(&name);
	if (list)
		Hunspell_free_list(m->h, &list, na);
	return rc < 0 ? rc : LLR_OK;
}

void llr_morph_close(llr_morph *m)
{
	if (!m)
		return;
	if (m->h)
		Hunspell_destroy(m->h);
	free(m->buf);
	free(m);
}

#else /* !LLR_HAVE_HUNSPELL */

struct llr_morph {
	int unused;
};

llr_morph *llr_morph_open(const char *path, llr_err *err)
{
	llr_err_set(err, LLR_EINVAL, "%s: this llrnn was built without hunspell (install libhunspell-dev and rebuild)",
		    path);
	return NULL;
}

llr_morph *llr_morph_open_mem(const char *aff, size_t aff_len, const char *dic, size_t dic_len, llr_err *err)
{
	(void)aff, (void)aff_len, (void)dic, (void)dic_len;
	return llr_morph_open("embedded dictionary", err);
}

int llr_morph_features(llr_morph *m, const char *word, size_t len, llr_feature_fn emit, void *ctx)
{
	return LLR_EINVAL;
}

void llr_morph_close(llr_morph *m)
{
	free(m);
}

#endif
