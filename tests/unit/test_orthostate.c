/*
 * test_orthostate.c - unit tests for the ORTH: automaton (orthostate.c):
 * its final features against llr_extract's ORTH: features (less
 * ORTH:year, and less ORTH:ordinal when the first code point is not an
 * ASCII digit, which the automaton leaves to lists) for every short
 * string over an alphabet of the characters the rules look at, for
 * random strings and for chosen ones; and its step classes, over every
 * Unicode scalar value.
 */
#include "internal.h"
#include "test.h"

#define MAXLEN 24
#define MAXF 24

/* ORTH: features in the order they came. */
typedef struct {
	int n;
	char name[MAXF][24];
} names;

static int collect(const char *name, size_t len, float value, void *ctx)
{
	names *f = ctx;
	if (f->n == MAXF || len >= sizeof f->name[0])
		return -100;
	memcpy(f->name[f->n], name, len + 1);
	f->n++;
	return 0;
}

/* The code points of a UTF-8 literal. */
static int decode(const char *s, int32_t *cp)
{
	size_t len = strlen(s);
	int n = 0;
	for (size_t i = 0; i < len && n < MAXLEN;) {
		int l = llr_utf8_decode(s + i, len - i, &cp[n++]);
		if (l <= 0)
			return -1;
		i += (size_t)l;
	}
	return n;
}

/* llr_extract's ORTH: features of cp[0..n), less those the automaton
 * leaves out. */
static int extract_names(const int32_t *cp, int n, names *out)
{
	char buf[4 * MAXLEN] = {0};
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += (size_t)llr_utf8_encode(cp[i], buf + len);
	llr_extractors x = {.ortho = 1};
	names all = {0};
	int rc = llr_extract(&x, buf, len, collect, &all);
	out->n = 0;
	int digit_led = n > 0 && cp[0] >= '0' && cp[0] <= '9';
	for (int k = 0; k < all.n; k++) {
		if (!strcmp(all.name[k], "ORTH:year"))
			continue;
		if (!strcmp(all.name[k], "ORTH:ordinal") && !digit_led)
			continue;
		memcpy(out->name[out->n++], all.name[k], sizeof all.name[k]);
	}
	return rc;
}

static int mismatches; /* printed so far, to keep a failing run short */

/* 1 when the automaton, ending in s after cp[0..n), agrees with
 * llr_extract; else prints both once in a while and returns 0. */
static int agrees(llr_ortho_state s, const int32_t *cp, int n)
{
	names want, got = {0};
	int rc1 = extract_names(cp, n, &want);
	int rc2 = llr_ortho_final(s, (size_t)n, collect, &got);
	int same = rc1 == LLR_OK && rc2 == LLR_OK && want.n == got.n;
	for (int k = 0; same && k < want.n; k++)
		same = !strcmp(want.name[k], got.name[k]);
	if (!same && mismatches++ < 10) {
		printf("#   string");
		for (int i = 0; i < n; i++)
			printf(" U+%04X", (unsigned)cp[i]);
		printf("\n#     llr_extract:");
		for (int k = 0; k < want.n; k++)
			printf(" %s", want.name[k]);
		printf("\n#     automaton:  ");
		for (int k = 0; k < got.n; k++)
			printf(" %s", got.name[k]);
		printf("\n");
	}
	return same;
}

static llr_ortho_state run(const int32_t *cp, int n)
{
	llr_ortho_state s = llr_ortho_start();
	for (int i = 0; i < n; i++)
		s = llr_ortho_step(s, cp[i]);
	return s;
}

/* The characters the rules look at, and a few they do not. */
static const int32_t rich[] = {
    '0',
    '1',
    '9',
    '+',
    '-',
    '.',
    ',',
    '@',
    ':',
    '/',
    'w',
    'W',
    'e',
    'E',
    'r',
    'R',
    'n',
    'N',
    'd',
    'D',
    's',
    'S',
    't',
    'T',
    'h',
    'H',
    'o',
    'O',
    'a',
    'A',
    'm',
    'M',
    'x',
    ' ',
    0,
    0x01,
    0xE8,
    0xC8,
    0xBA,
    0xAA,
    0xB0,
    0x2010,
    0x2011,
    0xC9,
    0xE9,
    0x3B1,
    0x391,
    0xAB,
    0x4E2D,
};
#define NRICH (int)(sizeof rich / sizeof *rich)

/* A smaller alphabet for the strings of 5. */
static const int32_t small[] = {'1', '-', '.', ',', '@', ':', '/', 'w', 'e', 'r', 'm', 0xE8, 0x2010, 'A', 0xE9, ' '};
#define NSMALL (int)(sizeof small / sizeof *small)

/* One for the url and e-mail rules, which take 5 or 6 bytes. */
static const int32_t tiny[] = {'w', '.', ':', '/', 'a', '1', '@', '-', ' ', 0xE9};
#define NTINY (int)(sizeof tiny / sizeof *tiny)

/* Every string of 1..maxn code points over alpha, states by prefix. */
static long exhaust(const int32_t *alpha, int na, int maxn, int32_t *cp, int n, llr_ortho_state s, long *bad)
{
	long count = 0;
	for (int k = 0; k < na; k++) {
		cp[n] = alpha[k];
		llr_ortho_state t = llr_ortho_step(s, alpha[k]);
		count++;
		if (!agrees(t, cp, n + 1))
			(*bad)++;
		if (n + 1 < maxn)
			count += exhaust(alpha, na, maxn, cp, n + 1, t, bad);
	}
	return count;
}

static void test_exhaustive(void)
{
	int32_t cp[MAXLEN];
	long bad = 0;
	long count = exhaust(rich, NRICH, 4, cp, 0, llr_ortho_start(), &bad);
	printf("# %ld strings of 1 to 4 over %d code points, %ld disagree\n", count, NRICH, bad);
	CHECK(bad == 0);
	bad = 0;
	count = exhaust(small, NSMALL, 5, cp, 0, llr_ortho_start(), &bad);
	printf("# %ld strings of 1 to 5 over %d code points, %ld disagree\n", count, NSMALL, bad);
	CHECK(bad == 0);
	bad = 0;
	count = exhaust(tiny, NTINY, 6, cp, 0, llr_ortho_start(), &bad);
	printf("# %ld strings of 1 to 6 over %d code points, %ld disagree\n", count, NTINY, bad);
	CHECK(bad == 0);
}

static size_t nstates; /* reachable from the start (test_states) */

/* A set of states: open addressing, ~0 free (no state is all ones). */
#define SET_BITS 20
typedef struct {
	uint64_t *slot;
	size_t n;
} stateset;

static void set_add(stateset *h, uint64_t s)
{
	size_t mask = ((size_t)1 << SET_BITS) - 1;
	size_t i = (size_t)((s * 0x9E3779B97F4A7C15ull) >> (64 - SET_BITS));
	while (h->slot[i] != ~(uint64_t)0) {
		if (h->slot[i] == s)
			return;
		i = (i + 1) & mask;
	}
	if (h->n + 1 < mask / 2) {
		h->slot[i] = s;
		h->n++;
	}
}

/* A random scalar value, from the blocks extract.c's tables cover or from
 * anywhere. */
static int32_t random_cp(llr_rng *r)
{
	int32_t c;
	switch (llr_rng_below(r, 4)) {
	case 0: return (int32_t)llr_rng_below(r, 0x80);
	case 1: return (int32_t)(0x80 + llr_rng_below(r, 0x480));
	case 2: return (int32_t)(0x2000 + llr_rng_below(r, 0x800));
	default:
		do
			c = (int32_t)llr_rng_below(r, 0x110000);
		while (c >= 0xD800 && c <= 0xDFFF);
		return c;
	}
}

static const char *const pieces[] = {
    "www.",
    "WWW.",
    "wWw",
    "ww",
    "http",
    "h",
    "ftp",
    "a1+.-",
    "://",
    ":/",
    "//",
    ":",
    "/",
    "@",
    "@@",
    ".",
    "..",
    "-",
    "--",
    "‐",
    "‑",
    "+",
    "1",
    "12",
    "2024",
    "0",
    ",5",
    ".5",
    "e",
    "er",
    "ère",
    "ème",
    "ÈME",
    "emes",
    "EMES",
    "nd",
    "nde",
    "ndes",
    "s",
    "st",
    "th",
    "rd",
    "d",
    "o",
    "a",
    "º",
    "ª",
    "°",
    "x",
    "é",
    "É",
    "Ab",
    "AB",
    "ab",
    "\x01",
    " ",
    "«",
    "…",
    "α",
    "Ω",
    "中",
    "ÿ",
    "Ÿ",
    "µ",
};
#define NPIECES (int)(sizeof pieces / sizeof *pieces)

static int random_string(llr_rng *r, int32_t *cp)
{
	int n = 1 + (int)llr_rng_below(r, 20);
	int mode = (int)llr_rng_below(r, 3);
	int i = 0;
	while (i < n) {
		if (mode == 0) {
			cp[i++] = rich[llr_rng_below(r, NRICH)];
		} else if (mode == 1) {
			int32_t p[MAXLEN];
			int m = decode(pieces[llr_rng_below(r, NPIECES)], p);
			for (int k = 0; k < m && i < n; k++)
				cp[i++] = p[k];
		} else {
			uint64_t u = llr_rng_below(r, 10);
			cp[i++] = u < 7 ? rich[llr_rng_below(r, NRICH)] : random_cp(r);
		}
	}
	return n;
}

static void test_random(void)
{
	llr_rng r;
	llr_rng_seed(&r, 20240611);
	stateset h = {malloc(sizeof(uint64_t) << SET_BITS), 0};
	CHECK(h.slot != NULL);
	if (!h.slot)
		return;
	memset(h.slot, 0xFF, sizeof(uint64_t) << SET_BITS);
	set_add(&h, llr_ortho_start());
	long bad = 0, count = 300000;
	for (long t = 0; t < count; t++) {
		int32_t cp[MAXLEN];
		int n = random_string(&r, cp);
		llr_ortho_state s = llr_ortho_start();
		for (int i = 0; i < n; i++) {
			s = llr_ortho_step(s, cp[i]);
			set_add(&h, s);
		}
		if (!agrees(s, cp, n))
			bad++;
	}
	printf("# %ld random strings of 1 to 20, %ld disagree; %zu distinct states reached\n", count, bad, h.n);
	CHECK(bad == 0);
	CHECK(h.n <= nstates);
	free(h.slot);
}

/* Upper case for the letters the targeted strings use. */
static int32_t upper(int32_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2))
		return c - 0x20;
	return c;
}

static void test_targeted(void)
{
	static const char *const words[] = {
	    "www.ab",
	    "WWW.a",
	    "www.",
	    "www.a",
	    "www.é",
	    "www.ab://",
	    "wwW.xyz",
	    "ww.abc",
	    "www-ab",
	    "http://x",
	    "http://",
	    "http:/x",
	    "ht://x",
	    "h://x",
	    "a1+.-://y",
	    "1a://x",
	    "é://x",
	    "ht:://x",
	    "ht://é",
	    "x@y.z",
	    "@y.z",
	    "x@y..z",
	    "x@.y",
	    "x@y.",
	    "a@b@c.d",
	    "a@b",
	    "a b@c.d",
	    " a@b.c",
	    "\x01a@b.c",
	    "a\x7f@b.c",
	    "a\x01@c.d",
	    "é@ü.ç",
	    "a@b-c.d_e",
	    "a@b.c.d",
	    "1,5",
	    "+1",
	    "-1.2.3",
	    "1,",
	    "1,,5",
	    "1.5,6",
	    "+",
	    "-",
	    "+-1",
	    "+.5",
	    ".5",
	    "1.",
	    "12e",
	    "3ÈME",
	    "3ème",
	    "3èME",
	    "3ÈMES",
	    "2nd",
	    "2ND",
	    "2nde",
	    "2ndes",
	    "21st",
	    "11th",
	    "3rd",
	    "1er",
	    "1ers",
	    "1re",
	    "1res",
	    "1ère",
	    "1è",
	    "1èr",
	    "1èm",
	    "1ém",
	    "1o",
	    "1º",
	    "1ª",
	    "1°",
	    "1°s",
	    "1d",
	    "1ds",
	    "1e",
	    "1es",
	    "1emes",
	    "1eme",
	    "1em",
	    "1ee",
	    "1ère2",
	    "12",
	    "1",
	    "XIXe",
	    "ixe",
	    "-",
	    "--",
	    "a-b",
	    "a--b",
	    "-a-",
	    "a-",
	    "-a",
	    "a‐b",
	    "a‑b",
	    "a-‐b",
	    "a-b-",
	    "AB",
	    "Ab",
	    "ÀÉ",
	    "Àé",
	    "ÿŸ",
	    "ΑΒ",
	    "ab",
	    "?!",
	    "«»",
	    "°",
	    "·",
	    "×",
	    "÷",
	    "µ",
	    "ªº",
	    "é",
	    "中文",
	    "",
	    "abcdefghijkl",
	    "abcdefghijk",
	    "abcdefgh",
	    "abcdefg",
	    "abcde",
	};
	long bad = 0, count = 0;
	for (size_t k = 0; k < sizeof words / sizeof *words; k++) {
		int32_t cp[MAXLEN];
		int n = decode(words[k], cp);
		CHECK(n >= 0);
		for (int v = 0; v < 3 && n > 0; v++) {
			if (v == 1)
				cp[0] = upper(cp[0]);
			if (v == 2)
				for (int i = 0; i < n; i++)
					cp[i] = upper(cp[i]);
			count++;
			if (!agrees(run(cp, n), cp, n))
				bad++;
		}
	}
	printf("# %ld chosen strings and their capitalised and upper-case forms, %ld disagree\n", count, bad);
	CHECK(bad == 0);

	/* Spot checks that do not lean on llr_extract. */
	names f = {0};
	int32_t cp[MAXLEN];
	int n = decode("2nd", cp);
	CHECK(llr_ortho_final(run(cp, n), (size_t)n, collect, &f) == LLR_OK);
	CHECK(f.n == 3 && !strcmp(f.name[0], "ORTH:ordinal") && !strcmp(f.name[1], "ORTH:has-digit") &&
	      !strcmp(f.name[2], "ORTH:len3-4"));
	f.n = 0;
	n = decode("a-b", cp);
	CHECK(llr_ortho_final(run(cp, n), (size_t)n, collect, &f) == LLR_OK);
	CHECK(f.n == 2 && !strcmp(f.name[0], "ORTH:hyphen"));
	f.n = 0;
	CHECK(llr_ortho_final(llr_ortho_start(), 0, collect, &f) == LLR_OK && f.n == 0);
}

static void test_classes(void)
{
	for (int32_t c = 0; c < LLR_ORTHO_CLASSES; c++) {
		int32_t rep = llr_ortho_class_rep(c);
		CHECK(rep >= 0 && rep <= 0x10FFFF && !(rep >= 0xD800 && rep <= 0xDFFF));
		CHECK(llr_ortho_class(rep) == c);
	}
	static const char *const from[] = {
	    "",
	    "1",
	    "12,",
	    "1e",
	    "1è",
	    "1èm",
	    "1nd",
	    "+",
	    "a-",
	    "a-‐",
	    "www",
	    "www.",
	    "www.a",
	    "ht:",
	    "ht:/",
	    "ht://",
	    "x",
	    "x@",
	    "x@y",
	    "x@y.",
	    "A",
	    "AB",
	    "-1.2",
	    "1.",
	};
	long bad = 0, range = 0;
	for (size_t k = 0; k < sizeof from / sizeof *from; k++) {
		int32_t cp[MAXLEN];
		int n = decode(from[k], cp);
		llr_ortho_state s = run(cp, n);
		for (int32_t c = 0; c <= 0x10FFFF; c++) {
			if (c == 0xD800)
				c = 0xE000;
			int32_t cls = llr_ortho_class(c);
			if (cls < 0 || cls >= LLR_ORTHO_CLASSES) {
				range++;
				continue;
			}
			if (llr_ortho_step(s, c) != llr_ortho_step_class(s, cls) && bad++ < 5)
				printf("#   from \"%s\": U+%04X steps unlike its class %d\n", from[k], (unsigned)c, cls);
		}
	}
	printf("# every scalar value from %zu states: %ld out of range, %ld step unlike their class\n",
	       sizeof from / sizeof *from, range, bad);
	CHECK(range == 0);
	CHECK(bad == 0);
}

/* The states reachable from the start (stepping by class), and whether
 * any two of them are equivalent: Moore's refinement from the partition
 * by features (less the length ones, which come from n; the start apart,
 * as n = 0 is its alone), until it is stable.  A new rule that splits
 * states for nothing, or forgets to collapse a dead sub-automaton, shows
 * here. */
static llr_ortho_state *states;
static int32_t *succ; /* nstates x LLR_ORTHO_CLASSES indices */
static int32_t *block, *nblock;

static int state_index(const stateset *h, const int32_t *idx, uint64_t s)
{
	size_t mask = ((size_t)1 << SET_BITS) - 1;
	size_t i = (size_t)((s * 0x9E3779B97F4A7C15ull) >> (64 - SET_BITS));
	while (h->slot[i] != ~(uint64_t)0) {
		if (h->slot[i] == s)
			return idx[i];
		i = (i + 1) & mask;
	}
	return -1;
}

static int by_signature(const void *a, const void *b)
{
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	if (block[i] != block[j])
		return block[i] < block[j] ? -1 : 1;
	for (int c = 0; c < LLR_ORTHO_CLASSES; c++) {
		int32_t x = block[succ[(size_t)i * LLR_ORTHO_CLASSES + c]];
		int32_t y = block[succ[(size_t)j * LLR_ORTHO_CLASSES + c]];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static int feature_hash(const char *name, size_t len, float value, void *ctx)
{
	uint64_t *h = ctx;
	if (!strncmp(name, "ORTH:len", 8))
		return 0;
	for (size_t i = 0; i < len; i++)
		*h = (*h ^ (unsigned char)name[i]) * 0x100000001B3ull;
	*h = (*h ^ ' ') * 0x100000001B3ull;
	return 0;
}

static void test_states(void)
{
	size_t cap = (size_t)1 << (SET_BITS - 2);
	stateset h = {malloc(sizeof(uint64_t) << SET_BITS), 0};
	int32_t *idx = malloc(sizeof(int32_t) << SET_BITS);
	states = malloc(cap * sizeof *states);
	CHECK(h.slot && idx && states);
	if (!h.slot || !idx || !states)
		goto out;
	memset(h.slot, 0xFF, sizeof(uint64_t) << SET_BITS);
	size_t mask = ((size_t)1 << SET_BITS) - 1;
	states[nstates++] = llr_ortho_start();
	set_add(&h, states[0]);
	idx[(size_t)((states[0] * 0x9E3779B97F4A7C15ull) >> (64 - SET_BITS))] = 0;
	for (size_t i = 0; i < nstates; i++) {
		for (int32_t c = 0; c < LLR_ORTHO_CLASSES; c++) {
			llr_ortho_state t = llr_ortho_step_class(states[i], c);
			if (state_index(&h, idx, t) >= 0)
				continue;
			CHECK(nstates < cap);
			if (nstates == cap)
				goto out;
			size_t k = (size_t)((t * 0x9E3779B97F4A7C15ull) >> (64 - SET_BITS));
			while (h.slot[k] != ~(uint64_t)0)
				k = (k + 1) & mask;
			set_add(&h, t);
			idx[k] = (int32_t)nstates;
			states[nstates++] = t;
		}
	}
	succ = malloc(nstates * LLR_ORTHO_CLASSES * sizeof *succ);
	block = malloc(nstates * sizeof *block);
	nblock = malloc(nstates * sizeof *nblock);
	int32_t *order = malloc(nstates * sizeof *order);
	uint64_t *out0 = malloc(nstates * sizeof *out0);
	CHECK(succ && block && nblock && order && out0);
	if (!succ || !block || !nblock || !order || !out0) {
		free(order);
		free(out0);
		goto out;
	}
	for (size_t i = 0; i < nstates; i++) {
		for (int32_t c = 0; c < LLR_ORTHO_CLASSES; c++)
			succ[i * LLR_ORTHO_CLASSES + c] = state_index(&h, idx, llr_ortho_step_class(states[i], c));
		out0[i] = 0;
		llr_ortho_final(states[i], 2, feature_hash, &out0[i]);
	}
	/* Blocks by output: the first state with the same output names it. */
	for (size_t i = 0; i < nstates; i++) {
		block[i] = (int32_t)i;
		for (size_t j = 1; j < i && i > 0; j++)
			if (out0[j] == out0[i]) {
				block[i] = block[j];
				break;
			}
	}
	size_t nb = 0, prev = 0;
	for (;;) {
		for (size_t i = 0; i < nstates; i++)
			order[i] = (int32_t)i;
		qsort(order, nstates, sizeof *order, by_signature);
		nb = 0;
		for (size_t k = 0; k < nstates; k++) {
			if (k > 0 && by_signature(&order[k - 1], &order[k]))
				nb++;
			nblock[order[k]] = (int32_t)nb;
		}
		nb++;
		memcpy(block, nblock, nstates * sizeof *block);
		if (nb == prev)
			break;
		prev = nb;
	}
	printf("# %zu states reachable from the start, %zu classes of equivalent ones\n", nstates, nb);
	CHECK(nb == nstates);
	free(order);
	free(out0);
out:
	free(h.slot);
	free(idx);
}

/* Every reachable state, stepped by the code points of the blocks
 * extract.c's tables cover (test_classes takes every scalar value, from
 * fewer states). */
static void test_classes_reachable(void)
{
	static const int32_t range[][2] = {{0, 0x3100}, {0xFF00, 0xFF70}};
	long bad = 0, count = 0;
	for (size_t i = 0; i < nstates; i++)
		for (size_t r = 0; r < sizeof range / sizeof *range; r++)
			for (int32_t c = range[r][0]; c < range[r][1]; c++) {
				count++;
				if (llr_ortho_step(states[i], c) != llr_ortho_step_class(states[i], llr_ortho_class(c)) &&
				    bad++ < 5)
					printf("#   from state %#llx: U+%04X steps unlike its class\n",
					       (unsigned long long)states[i], (unsigned)c);
			}
	printf("# %ld steps from the %zu reachable states, %ld unlike their class\n", count, nstates, bad);
	CHECK(nstates > 0);
	CHECK(bad == 0);
}

static int stop(const char *name, size_t len, float value, void *ctx)
{
	int *calls = ctx;
	return ++*calls == 2 ? -7 : 0;
}

static void test_emit_error(void)
{
	int32_t cp[MAXLEN];
	int n = decode("1999", cp), calls = 0;
	CHECK(llr_ortho_final(run(cp, n), (size_t)n, stop, &calls) == -7);
	CHECK(calls == 2);
}

int main(void)
{
	PLAN(7);
	RUN(test_classes);
	RUN(test_states);
	RUN(test_classes_reachable);
	RUN(test_targeted);
	RUN(test_exhaustive);
	RUN(test_random);
	RUN(test_emit_error);
	free(states);
	free(succ);
	free(block);
	free(nblock);
	DONE();
}
