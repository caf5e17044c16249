/*
 * orthostate.c - llr_extract's ORTH: features (extract.c, ortho()) as a
 * deterministic finite automaton read left to right, one code point at a
 * time, so a dynamic programme can sum a character model's probability
 * over every string jointly with its features.
 *
 * A state packs one small sub-automaton per rule into a uint64_t, each
 * with 0 as its start value and one value for "can no longer hold": the
 * number and decimal rule, the digit-led ordinals (the suffix list as a
 * minimised trie), has-digit, punct, cap, allcaps, hyphen, the two url
 * forms and the e-mail rule (these two over UTF-8 bytes, which for the
 * bytes they test are the code points, a multi-byte code point being
 * bytes >= 0x80 only).  The length features come from the caller's n.
 *
 * It is not the rules themselves: extract.c is, and a change there must
 * be made here too (tests/unit/test_orthostate.c compares the two).  It
 * leaves out ORTH:year and the Roman ordinals, which are finite lists.
 */
#include "internal.h"

/* ------------------------------------------------------------ fields */

/* Bit offset and width of every sub-automaton in a state. */
enum {
	NUM_AT = 0,      /* 3 bits */
	ORD_AT = 3,      /* 4 */
	NONPUNCT_AT = 7, /* 1: a code point not punct was seen */
	DIGIT_AT = 8,    /* 1 */
	CAP_AT = 9,      /* 2 */
	UPC_AT = 11,     /* 2 */
	HYPH_AT = 13,    /* 3 */
	WWW_AT = 16,     /* 3 */
	SCHEME_AT = 19,  /* 3 */
	MAIL_AT = 22,    /* 3 */
};

/* number_kind: [+-]? digits ([.,] digits)*. */
enum {
	N_START,
	N_SIGN, /* a sign first */
	N_INT,  /* digits, no separator: ORTH:number */
	N_SEP,  /* a separator after a digit: a digit must follow */
	N_DEC,  /* digits after a separator: ORTH:decimal */
	N_DEAD,
};

/* is_ordinal's digit branch: digits, then the rest (A-Z lowered) one of
 * dsuf, through the trie of dsuf, minimised. */
enum {
	O_START,
	O_DIG,  /* digits so far */
	O_E,    /* e: accepts */
	O_R,    /* r */
	O_EG,   /* è: accepts */
	O_N,    /* n */
	O_ND,   /* nd: accepts */
	O_S,    /* s */
	O_T,    /* t */
	O_EM,   /* em, èm: e leads to O_AS */
	O_XE,   /* èr: e leads to O_LEAF */
	O_AS,   /* er, re, eme, ème, nde: accepts, s leads to O_LEAF */
	O_LEAF, /* accepts, leads nowhere */
	O_DEAD,
};

/* The first code point upper. */
enum {
	C_START,
	C_YES,
	C_NO,
};

/* Upper-case code points counted to 2, none lower. */
enum {
	U_0,
	U_1,
	U_2,
	U_DEAD, /* a lower-case one */
};

/* A hyphen with a non-hyphen on each side. */
enum {
	H_START,
	H_NONH,   /* the last code point is no hyphen */
	H_CAND,   /* the last is a hyphen after a non-hyphen */
	H_NOCAND, /* the last is a hyphen, first or after a hyphen */
	H_FOUND,
};

/* is_url's first form: "www." in the first 4 bytes, 6 bytes or more. */
enum {
	W_0, /* W_0..W_3: that many bytes of "www." matched */
	W_1,
	W_2,
	W_3,
	W_4, /* "www." */
	W_5, /* and one byte more */
	W_YES,
	W_NO,
};

/* is_url's second form: a scheme run of 2+ bytes, "://", a byte more. */
enum {
	S_0,
	S_1,  /* a run of 1 */
	S_2,  /* a run of 2 or more */
	S_C1, /* S_C1..S_C3: that many bytes of "://" after the run */
	S_C2,
	S_C3,
	S_YES,
	S_NO,
};

/* is_email. */
enum {
	M_L0,  /* nothing yet */
	M_L,   /* a local part */
	M_D0,  /* and '@' */
	M_DN0, /* a domain without a dot */
	M_DD,  /* a domain ending in a dot */
	M_DN1, /* a domain with a dot, not last: ORTH:email */
	M_NO,
};

static unsigned get(llr_ortho_state s, int at, int bits)
{
	return (unsigned)(s >> at) & ((1u << bits) - 1);
}

static llr_ortho_state put(llr_ortho_state s, int at, int bits, unsigned v)
{
	llr_ortho_state m = (((llr_ortho_state)1 << bits) - 1) << at;
	return (s & ~m) | ((llr_ortho_state)v << at & m);
}

/* -------------------------------------------------------------- steps */

static unsigned step_num(unsigned q, int32_t c, int digit)
{
	int sep = c == '.' || c == ',';
	if (digit && (q == N_START || q == N_SIGN || q == N_INT))
		return N_INT;
	if (digit && (q == N_SEP || q == N_DEC))
		return N_DEC;
	if (q == N_START && (c == '+' || c == '-'))
		return N_SIGN;
	if (sep && (q == N_INT || q == N_DEC)) /* a digit must follow */
		return N_SEP;
	return N_DEAD;
}

static unsigned step_ord(unsigned q, int32_t c, int digit)
{
	static const struct {
		uint8_t from;
		int32_t c;
		uint8_t to;
	} edges[] = {
	    {O_DIG, 'e', O_E},
	    {O_DIG, 'r', O_R},
	    {O_DIG, 0xE8, O_EG},
	    {O_DIG, 'n', O_N},
	    {O_DIG, 's', O_S},
	    {O_DIG, 't', O_T},
	    {O_DIG, 'd', O_LEAF},
	    {O_DIG, 'o', O_LEAF},
	    {O_DIG, 'a', O_LEAF},
	    {O_DIG, 0xBA, O_LEAF},
	    {O_DIG, 0xAA, O_LEAF},
	    {O_DIG, 0xB0, O_LEAF},
	    {O_E, 'r', O_AS},
	    {O_E, 'm', O_EM},
	    {O_E, 's', O_LEAF},
	    {O_R, 'e', O_AS},
	    {O_R, 'd', O_LEAF},
	    {O_EG, 'r', O_XE},
	    {O_EG, 'm', O_EM},
	    {O_N, 'd', O_ND},
	    {O_ND, 'e', O_AS},
	    {O_S, 't', O_LEAF},
	    {O_T, 'h', O_LEAF},
	    {O_EM, 'e', O_AS},
	    {O_XE, 'e', O_LEAF},
	    {O_AS, 's', O_LEAF},
	};
	if (q == O_START || q == O_DIG)
		if (digit)
			return O_DIG;
	if (c >= 'A' && c <= 'Z')
		c += 'a' - 'A';
	for (size_t k = 0; k < sizeof edges / sizeof *edges; k++)
		if (edges[k].from == q && edges[k].c == c)
			return edges[k].to;
	return O_DEAD;
}

/* A hyphen counts with a non-hyphen on each side: H_CAND is "the last
 * code point is such a hyphen after a non-hyphen", H_NOCAND "the last is
 * a hyphen that cannot count" (first, or after a hyphen). */
static unsigned step_hyph(unsigned q, int hyphen)
{
	switch (q) {
	case H_START:
		return hyphen ? H_NOCAND : H_NONH;
	case H_NONH:
		return hyphen ? H_CAND : H_NONH;
	case H_CAND:
		return hyphen ? H_NOCAND : H_FOUND;
	case H_NOCAND:
		return hyphen ? H_NOCAND : H_NONH;
	default:
		return H_FOUND;
	}
}

static int ascii_alpha(int32_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int ascii_digit(int32_t c)
{
	return c >= '0' && c <= '9';
}

/* The first byte of a code point of 2+ bytes is >= 0x80, never w, W or
 * '.', and brings the count after "www." to 2 or more at once. */
static unsigned step_www(unsigned q, int32_t c)
{
	switch (q) {
	case W_0:
	case W_1:
	case W_2:
		return c == 'w' || c == 'W' ? q + 1 : W_NO;
	case W_3:
		return c == '.' ? W_4 : W_NO;
	case W_4:
		return c < 0x80 ? W_5 : W_YES;
	case W_5:
	case W_YES:
		return W_YES;
	default:
		return W_NO;
	}
}

/* The run is over ASCII bytes only, so its bytes are its code points. */
static unsigned step_scheme(unsigned q, int32_t c)
{
	switch (q) {
	case S_0:
		return ascii_alpha(c) ? S_1 : S_NO;
	case S_1:
	case S_2:
		if (ascii_alpha(c) || ascii_digit(c) || c == '+' || c == '.' || c == '-')
			return S_2;
		return q == S_2 && c == ':' ? S_C1 : S_NO;
	case S_C1:
		return c == '/' ? S_C2 : S_NO;
	case S_C2:
		return c == '/' ? S_C3 : S_NO;
	case S_C3:
	case S_YES:
		return S_YES;
	default:
		return S_NO;
	}
}

/* Every byte of a code point >= 0x80 is >= 0x80: above ' ', and allowed
 * in a domain. */
static unsigned step_mail(unsigned q, int32_t c)
{
	int dom = c >= 0x80 || ascii_alpha(c) || ascii_digit(c) || c == '-';
	switch (q) {
	case M_L0:
		return c == '@' || c <= ' ' ? M_NO : M_L;
	case M_L:
		if (c == '@')
			return M_D0;
		return c <= ' ' ? M_NO : M_L;
	case M_D0:
		return dom ? M_DN0 : M_NO;
	case M_DN0:
	case M_DN1:
		if (c == '.')
			return M_DD;
		return dom ? q : M_NO;
	case M_DD:
		return dom ? M_DN1 : M_NO;
	default:
		return M_NO;
	}
}

llr_ortho_state llr_ortho_start(void)
{
	return 0;
}

llr_ortho_state llr_ortho_step(llr_ortho_state s, int32_t c)
{
	int f = llr_cp_ortho_flags(c);
	int digit = !!(f & LLR_CP_DIGIT);
	llr_ortho_state t = 0;
	t = put(t, NUM_AT, 3, step_num(get(s, NUM_AT, 3), c, digit));
	t = put(t, ORD_AT, 4, step_ord(get(s, ORD_AT, 4), c, digit));
	t = put(t, NONPUNCT_AT, 1, get(s, NONPUNCT_AT, 1) | !(f & LLR_CP_PUNCT));
	t = put(t, DIGIT_AT, 1, get(s, DIGIT_AT, 1) | (unsigned)digit);
	unsigned cap = get(s, CAP_AT, 2);
	if (cap == C_START)
		cap = f & LLR_CP_UPPER ? C_YES : C_NO;
	t = put(t, CAP_AT, 2, cap);
	unsigned upc = get(s, UPC_AT, 2);
	if (upc == U_DEAD || (f & LLR_CP_LOWER))
		upc = U_DEAD;
	else if ((f & LLR_CP_UPPER) && upc < U_2)
		upc++;
	t = put(t, UPC_AT, 2, upc);
	t = put(t, HYPH_AT, 3, step_hyph(get(s, HYPH_AT, 3), !!(f & LLR_CP_HYPHEN)));
	unsigned www = step_www(get(s, WWW_AT, 3), c);
	unsigned scheme = step_scheme(get(s, SCHEME_AT, 3), c);
	if (www == W_YES || scheme == S_YES) { /* one value for "is a url" */
		www = W_YES;
		scheme = S_YES;
	} else if (www == W_5 || scheme == S_C3) { /* one for "a byte more is" */
		www = W_5;
		scheme = S_C3;
	}
	t = put(t, WWW_AT, 3, www);
	t = put(t, SCHEME_AT, 3, scheme);
	t = put(t, MAIL_AT, 3, step_mail(get(s, MAIL_AT, 3), c));
	return t;
}

/* ------------------------------------------------------------ classes */

/* Above ASCII, the rules see a code point's flags and whether it is è,
 * º or ª, or °, the non-ASCII code points of the ordinal suffixes (è and
 * ° differ from others of their flags, º and ª from none but each
 * other).  No code point above ASCII has two of upper, lower and punct,
 * nor is a digit; the unit test steps every one to check. */
enum {
	CL_OTHER = 128,
	CL_UPPER,
	CL_LOWER,
	CL_PUNCT,
	CL_HYPHEN,
	CL_E_GRAVE,
	CL_ORD_IND,
	CL_DEGREE,
	CL_END
};

_Static_assert(CL_END == LLR_ORTHO_CLASSES, "LLR_ORTHO_CLASSES counts the classes");

int32_t llr_ortho_class(int32_t c)
{
	if (c >= 0 && c < 0x80)
		return c;
	if (c == 0xE8)
		return CL_E_GRAVE;
	if (c == 0xBA || c == 0xAA)
		return CL_ORD_IND;
	if (c == 0xB0)
		return CL_DEGREE;
	int f = llr_cp_ortho_flags(c);
	if (f & LLR_CP_HYPHEN)
		return CL_HYPHEN;
	if (f & LLR_CP_PUNCT)
		return CL_PUNCT;
	if (f & LLR_CP_UPPER)
		return CL_UPPER;
	if (f & LLR_CP_LOWER)
		return CL_LOWER;
	return CL_OTHER;
}

int32_t llr_ortho_class_rep(int32_t cls)
{
	static const int32_t rep[] = {
	    [CL_OTHER - 128] = 0x4E00,  /* CJK */
	    [CL_UPPER - 128] = 0xC0,    /* À */
	    [CL_LOWER - 128] = 0xE0,    /* à */
	    [CL_PUNCT - 128] = 0xAB,    /* « */
	    [CL_HYPHEN - 128] = 0x2010, /* hyphen */
	    [CL_E_GRAVE - 128] = 0xE8,  /* è */
	    [CL_ORD_IND - 128] = 0xBA,  /* º */
	    [CL_DEGREE - 128] = 0xB0,   /* ° */
	};
	LLR_ASSERT(cls >= 0 && cls < LLR_ORTHO_CLASSES);
	return cls < 0x80 ? cls : rep[cls - 128];
}

llr_ortho_state llr_ortho_step_class(llr_ortho_state s, int32_t cls)
{
	return llr_ortho_step(s, llr_ortho_class_rep(cls));
}

/* -------------------------------------------------------------- final */

#define EMIT(lit) LLR_EMIT_LITERAL(emit, ctx, lit)

int llr_ortho_final(llr_ortho_state s, size_t n, llr_feature_fn emit, void *ctx)
{
	if (n == 0)
		return LLR_OK;
	unsigned num = get(s, NUM_AT, 3), ord = get(s, ORD_AT, 4);
	if (num == N_INT)
		EMIT("ORTH:number");
	if (num == N_DEC)
		EMIT("ORTH:decimal");
	if (ord == O_E || ord == O_EG || ord == O_ND || ord == O_AS || ord == O_LEAF)
		EMIT("ORTH:ordinal");
	if (get(s, DIGIT_AT, 1))
		EMIT("ORTH:has-digit");
	if (!get(s, NONPUNCT_AT, 1))
		EMIT("ORTH:punct");
	if (get(s, CAP_AT, 2) == C_YES)
		EMIT("ORTH:cap");
	if (get(s, UPC_AT, 2) == U_2)
		EMIT("ORTH:allcaps");
	if (get(s, HYPH_AT, 3) == H_FOUND)
		EMIT("ORTH:hyphen");
	if (get(s, WWW_AT, 3) == W_YES)
		EMIT("ORTH:url");
	if (get(s, MAIL_AT, 3) == M_DN1)
		EMIT("ORTH:email");
	if (n == 1)
		EMIT("ORTH:len1");
	else if (n == 2)
		EMIT("ORTH:len2");
	else if (n <= 4)
		EMIT("ORTH:len3-4");
	else if (n <= 7)
		EMIT("ORTH:len5-7");
	else if (n <= 11)
		EMIT("ORTH:len8-11");
	else
		EMIT("ORTH:len12+");
	return LLR_OK;
}
#undef EMIT
