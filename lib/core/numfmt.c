/*
 * numfmt.c - numbers as decimal text, byte for byte what printf writes
 * ("%.<d>f" of a double, "%zu"), without printf's cost: score(1) writes a
 * number or more a sentence, and printf's exact binary-to-decimal
 * conversion took a tenth of an n-gram model's scoring time.
 *
 * A fixed-point number is v scaled by 10^d and rounded to an integer.
 * The scaled product is exact to within a few units of its last bit, so
 * its rounding is the exact value's unless the product lies within that
 * error of a half; those few cases, the numbers too large for an int64
 * and the non-finite ones go to snprintf, which rounds the exact binary
 * value (half to even, as nearbyint does for exact halves).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The decimal digits of u, written backwards ending before end; the first. */
static char *digits_back(char *end, uint64_t u)
{
	do {
		*--end = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	return end;
}

int llr_buf_uint(llr_buf *b, uint64_t u)
{
	char s[24];
	char *p = digits_back(s + sizeof s, u);
	return llr_buf_append(b, p, (size_t)(s + sizeof s - p));
}

static const double pow10_of[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

int llr_buf_fixed(llr_buf *b, double v, int d)
{
	if (d < 0 || d > 9 || !isfinite(v) || fabs(v) >= 1e9)
		return llr_buf_printf(b, "%.*f", d, v) < 0 ? LLR_ENOMEM : LLR_OK;
	double s = fabs(v) * pow10_of[d], r = nearbyint(s);
	/* |s| < 1e18: the product is within 2 ulp of the exact one */
	double slack = 4 * s * 0x1p-53 + 0x1p-60;
	if (fabs(fabs(s - r) - 0.5) <= slack)
		return llr_buf_printf(b, "%.*f", d, v) < 0 ? LLR_ENOMEM : LLR_OK;
	uint64_t u = (uint64_t)r, unit = (uint64_t)pow10_of[d];
	char buf[48];
	char *end = buf + sizeof buf, *p = end;
	if (d > 0) {
		uint64_t frac = u % unit;
		for (int k = 0; k < d; k++, frac /= 10)
			*--p = (char)('0' + frac % 10);
		*--p = '.';
	}
	p = digits_back(p, u / unit);
	if (signbit(v))
		*--p = '-';
	return llr_buf_append(b, p, (size_t)(end - p));
}
