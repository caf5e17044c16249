/*
 * test_affixforms.c - the word forms of a hunspell dictionary
 * (llr_affix_forms, lib/features/affixforms.c): suffixes with strip and
 * condition, prefixes, cross products, a suffix's continuation flags,
 * NEEDAFFIX and FORBIDDENWORD, the flag types and AF aliases, every form
 * checked against a listing by hand; an affix file it cannot read, and a
 * callback that stops.
 */
#include "internal.h"
#include "llrnn.h"
#include "test.h"

typedef struct forms {
	char s[64][32];
	int n;
} forms;

static int collect(const char *w, size_t len, void *ctx)
{
	forms *f = ctx;
	if (f->n < 64 && len < 32) {
		memcpy(f->s[f->n], w, len);
		f->s[f->n][len] = 0;
	}
	f->n++;
	return LLR_OK;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The forms of aff and dic, sorted, joined by spaces into out. */
static int forms_of(const char *aff, const char *dic, char *out, size_t cap, llr_err *e)
{
	forms f = {0};
	int rc = llr_affix_forms(aff, strlen(aff), dic, strlen(dic), collect, &f, e);
	int n = f.n < 64 ? f.n : 64;
	qsort(f.s, (size_t)n, sizeof f.s[0], by_str);
	size_t l = 0;
	out[0] = 0;
	for (int i = 0; i < n && l < cap; i++)
		l += (size_t)snprintf(out + l, cap - l, "%s%s", i ? " " : "", f.s[i]);
	return rc < 0 ? rc : f.n;
}

/* Suffixes with strip and conditions ([^...], sets, '.', UTF-8),
 * a prefix crossed with them or not, a twofold suffix and a prefix among
 * a suffix's continuation flags. */
static void test_suffixes_prefixes(void)
{
	const char *aff = "SET UTF-8\n"
	                  "# a comment\n"
	                  "SFX S Y 2\n"
	                  "SFX S 0 s [^s]\n"
	                  "SFX S 0 0 s\n"
	                  "SFX A Y 2\n"
	                  "SFX A er é/S er\n"
	                  "SFX A er ons [^g]er\n"
	                  "SFX B N 1\n"
	                  "SFX B é ée/P é\n"
	                  "PFX P Y 1\n"
	                  "PFX P 0 l' [aeéiou]\n"
	                  "PFX R Y 2\n"
	                  "PFX R 0 re .\n"
	                  "PFX R a ra a\n";
	const char *dic = "4\n"
	                  "chat/S po:nom\n"
	                  "bras/S\n"
	                  "aimer/ARB\n"
	                  "manger/A\n";
	char got[1024];
	llr_err e = {0};
	int n = forms_of(aff, dic, got, sizeof got, &e);
	printf("# %d forms: %s\n", n, got);
	/* chat: chat chats; bras: bras bras (0 s); aimer: aimer, aimé
	 * aimés (twofold S), aimons, re+ (crossed with A: reaimé reaimons,
	 * not with B's é), raimer (strip a); manger: manger mangé mangés
	 * (not mangons: [^g]er) */
	CHECK(!strcmp(got, "aimer aimons aimé aimés bras bras chat chats manger mangé mangés raimer raimons raimé reaimer "
	                   "reaimons reaimé"));
	CHECK(n == 17);

	/* a prefix among a suffix's continuation flags, on the suffixed form */
	const char *aff2 = "SFX B Y 1\nSFX B er é/P er\nPFX P Y 1\nPFX P 0 l' [aeéiou]\n";
	n = forms_of(aff2, "2\naimer/B\nchanter/B\n", got, sizeof got, &e);
	printf("# %d forms: %s\n", n, got);
	CHECK(!strcmp(got, "aimer aimé chanter chanté l'aimé"));
}

/* Whether the forms of aff and dic, sorted, are want (printed when not). */
static int forms_are(const char *aff, const char *dic, const char *want)
{
	char got[1024];
	llr_err e = {0};
	int n = forms_of(aff, dic, got, sizeof got, &e);
	int ok = n >= 0 && !strcmp(got, want);
	if (!ok)
		printf("# %d forms: %s (want %s)\n", n, got, want);
	return ok;
}

/* NEEDAFFIX stems and affixes, FORBIDDENWORD, long and numeric flags
 * and AF aliases. */
static void test_flags(void)
{
	/* bonx needs another affix; mal needs one; mot is forbidden */
	CHECK(forms_are("FLAG long\nNEEDAFFIX nn\nFORBIDDENWORD ff\n"
	                "SFX Aa Y 2\nSFX Aa 0 s .\nSFX Aa 0 x/nn .\n"
	                "SFX Bb Y 1\nSFX Bb 0 e .\n",
	                "3\nbon/AaBb\nmal/nnAa\nmot/ffAa\n", "bon bone bons mals"));
	CHECK(forms_are("FLAG num\nSFX 12 Y 1\nSFX 12 0 s .\nSFX 7 Y 1\nSFX 7 0 e .\n", "1\nvert/12,7\n",
	                "vert verte verts"));
	CHECK(forms_are("AF 2\nAF S\nAF SE\nSFX S Y 1\nSFX S 0 s .\nSFX E Y 1\nSFX E 0 e/1 .\n", "2\ngris/1\nvert/2\n",
	                "gris griss vert verte vertes verts"));
	/* an alias is read where hunspell reads one (the .dic, continuation
	 * flags), never as a rule's own flag */
	CHECK(forms_are("FLAG num\nAF 1\nAF 7,12\nSFX 12 Y 1\nSFX 12 0 s .\nSFX 7 Y 1\nSFX 7 0 e .\n", "1\nvert/1\n",
	                "vert verte verts"));
	CHECK(forms_are("AF 2\nAF 2\nAF 1\nSFX 1 Y 1\nSFX 1 0 s .\nSFX 2 Y 1\nSFX 2 0 e .\n", "1\nfoo/1\n", "foo fooe"));
	CHECK(forms_are("FLAG UTF-8\nSFX é Y 1\nSFX é 0 s .\n", "1\nmot/é\n", "mot mots"));
}

static int stop_at_two(const char *w, size_t len, void *ctx)
{
	int *n = ctx;
	return ++*n == 2 ? LLR_EIO : LLR_OK;
}

/* An affix file it cannot read names its line; the callback's error
 * stops the listing and comes back; a stem with flags it cannot read is
 * left out. */
static void test_errors(void)
{
	char got[256];
	llr_err e = {0};
	CHECK(forms_of("SFX S Y 1\nSFX S\n", "1\nchat/S\n", got, sizeof got, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "line 2") != NULL);
	printf("# %s\n", e.msg);
	e = (llr_err){0};
	CHECK(forms_of("SFX S 1\n", "1\nchat/S\n", got, sizeof got, &e) == LLR_EFORMAT && strstr(e.msg, "header"));
	e = (llr_err){0};
	CHECK(forms_of("SFX S Y 1\nSFX S 0 s [ab\n", "1\nchat/S\n", got, sizeof got, &e) == LLR_EFORMAT &&
	      strstr(e.msg, "condition"));
	int n = 0;
	const char *aff = "SFX S Y 1\nSFX S 0 s .\n";
	CHECK(llr_affix_forms(aff, strlen(aff), "1\nchat/S\n", 9, stop_at_two, &n, &e) == LLR_EIO && n == 2);
	e = (llr_err){0};
	CHECK(forms_of("FLAG long\nSFX Ss Y 1\nSFX Ss 0 s .\n", "2\nchat/S\nrat/Ss\n", got, sizeof got, &e) == 2);
	CHECK(!strcmp(got, "rat rats"));
	CHECK(forms_of("", "", got, sizeof got, &e) == 0);
	/* an alias count beyond any file: refused, nothing allocated for it */
	e = (llr_err){0};
	CHECK(forms_of("AF 18446744073709551615\nAF x\n", "1\nchat/1\n", got, sizeof got, &e) == LLR_EFORMAT &&
	      strstr(e.msg, "line 1: AF 18446744073709551615: not a count of aliases"));
	e = (llr_err){0};
	CHECK(forms_of("AF 99\nAF x\n", "1\nchat/1\n", got, sizeof got, &e) == LLR_EFORMAT);
	/* a .dic without a final NUL or newline, its last flags an alias */
	const char *af = "AF 1\nAF S\nSFX S Y 1\nSFX S 0 s .\n";
	char dic[] = {'1', '\n', 'c', 'h', 'a', 't', '/', '1'};
	forms f = {0};
	CHECK(llr_affix_forms(af, strlen(af), dic, sizeof dic, collect, &f, &e) == LLR_OK && f.n == 2);
}

int main(void)
{
	PLAN(3);
	RUN(test_suffixes_prefixes);
	RUN(test_flags);
	RUN(test_errors);
	DONE();
}
