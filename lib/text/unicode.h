/*
 * unicode.h - the private utf8proc seam of libllrnn (see unicode.c).
 * Only lib/ files include this; it is not API.  Every call into utf8proc
 * goes through these functions.
 */
#ifndef LLR_UNICODE_H
#define LLR_UNICODE_H

#include "internal.h"

/* Character classes the tokenizer cares about. */
enum {
	LLR_UC_OTHER = 0, /* unassigned, private use, surrogates */
	LLR_UC_LETTER,    /* L* */
	LLR_UC_DIGIT,     /* Nd */
	LLR_UC_NUMBER,    /* Nl, No (Roman numerals, fractions, superscripts) */
	LLR_UC_MARK,      /* M*: combining marks */
	LLR_UC_SPACE,     /* Z*, and the ASCII/C1 whitespace controls */
	LLR_UC_PUNCT,     /* P* */
	LLR_UC_SYMBOL,    /* S* */
	LLR_UC_CONTROL,   /* Cc that is not whitespace */
	LLR_UC_FORMAT,    /* Cf: soft hyphen, zero-width space, BOM... */
};

/* A growable array of code points. */
typedef struct llr_cps {
	int32_t *cp;
	size_t n, cap;
} llr_cps;

/* Decode s[0..len) (UTF-8), normalise it (NFC, or NFKC when nfkc) and put
 * the code points in out (replacing its content).  LLR_EUTF8 on invalid
 * UTF-8, LLR_ENOMEM. */
int llr_uni_normalize(const char *s, size_t len, int nfkc, llr_cps *out, llr_err *err);
void llr_cps_free(llr_cps *c);

int llr_uni_class(int32_t c);
int llr_uni_is_upper(int32_t c); /* Lu or Lt */
int llr_uni_is_lower(int32_t c); /* Ll */
int32_t llr_uni_lower(int32_t c); /* simple Unicode lowercase mapping */
/* Encode c as UTF-8 into out (4 bytes room); returns the length. */
int llr_uni_encode(int32_t c, char *out);
/* Append c (lowercased when lower) as UTF-8 to b. */
int llr_uni_put(llr_buf *b, int32_t c, int lower);

#endif
