/*
 * abbrev.c - per-language abbreviation lists for the tokenizer, as data.
 * An entry is the abbreviation without its final period.  A leading '!'
 * marks a title or reference word that never ends a sentence (M. Dupont,
 * Dr. Smith, cf. Fig. 2); the others (etc., Inc.) may end one when the
 * next word starts with a capital.  A leading '#' marks a word that is an
 * abbreviation only before a number (p. 12, No. 5).  Lookup is exact
 * (case-sensitive).  This file holds no logic beyond the lookup.
 */
#include <string.h>

#include "tokenize.h"

static const char *const abbrev_fr[] = {
	"!M", "!MM", "!Mme", "!Mmes", "!Mlle", "!Mlles", "!Mgr", "!Me", "!Dr", "!Pr",
	"!St", "!Ste", "!cf", "!Cf", "!av", "!apr", "!chap", "!éd", "!vol", "!fig",
	"!Fig", "!tél", "!hab", "!coll",
	"#p", "#pp", "#n", "#no", "#N", "#No",
	"etc", "cie", "Cie", "Inc", "Ltd", "Jr", "Sr", "sq", "suiv",
	"janv", "févr", "avr", "juil", "sept", "oct", "nov", "déc",
	NULL,
};

static const char *const abbrev_en[] = {
	"!Mr", "!Mrs", "!Ms", "!Messrs", "!Dr", "!Prof", "!St", "!Mt", "!Rev", "!Hon",
	"!Gen", "!Col", "!Capt", "!Lt", "!Sgt", "!Gov", "!Sen", "!Rep", "!Pres",
	"!cf", "!Cf", "!vs", "!viz", "!approx", "!Fig", "!fig", "!Figs", "!Eq",
	"!e.g", "!E.g", "!i.e", "!I.e", "!Vol", "!vol", "!Ch", "!ch", "!Sec", "!Dept", "!Univ", "!ca",
	"#p", "#pp", "#No", "#no", "#Nos",
	"etc", "al", "Inc", "Ltd", "Co", "Corp", "Bros", "Jr", "Sr", "Esq", "Ph.D",
	"Jan", "Feb", "Mar", "Apr", "Aug", "Sept", "Sep", "Oct", "Nov", "Dec",
	"Tues", "Thurs", "eds", "dept", "misc",
	NULL,
};

static int lookup(const char *const *list, const char *w, size_t n)
{
	for (size_t i = 0; list[i]; i++) {
		const char *e = list[i];
		int kind = LLR_ABBR_MAYEND;
		if (*e == '!')
			kind = LLR_ABBR_TITLE, e++;
		else if (*e == '#')
			kind = LLR_ABBR_NUMBER, e++;
		if (strlen(e) == n && !memcmp(e, w, n))
			return kind;
	}
	return LLR_ABBR_NONE;
}

int llr_abbrev_kind(const char *lang, const char *w, size_t n)
{
	if (lang && !strcmp(lang, "fr"))
		return lookup(abbrev_fr, w, n);
	if (lang && !strcmp(lang, "en"))
		return lookup(abbrev_en, w, n);
	int k = lookup(abbrev_en, w, n);
	return k ? k : lookup(abbrev_fr, w, n);
}
