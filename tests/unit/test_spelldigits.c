/*
 * test_spelldigits.c - unit tests for lib/ngram/spelldigits.c: the exact
 * masses of the strings of ASCII digits under the spelling model equal
 * the sums of llr_spelling_logp over every such string (lengths below
 * the cap one by one, the capped group through a second cap), a digit the
 * model never saw included; their total matches the share of digit
 * strings among p_spell's draws; the groups' keys and bad models.
 */
#include <math.h>

#include "llrnn.h"
#include "spelling_fixture.h"
#include "test.h"

/* no 6 anywhere: an unseen digit */
static const char *const words[] = {"1", "12", "2024", "1999", "300", "7e", "le", "12345", "3,5", "08", "42", "la",
                                    "1er", "2e", "99", "100", "1789", "5", "0", "47", "et", "de", "9"};

/* ln of the sum of p_spell over the strings of n digits whose last k
 * digits are tail (every string of n digits, by llr_spelling_logp). */
static double brute(const llr_spelling *s, int n, int k, int32_t tail)
{
	int32_t all = 1, mod = 1;
	for (int i = 0; i < n; i++)
		all *= 10;
	for (int i = 0; i < (n < k ? n : k); i++)
		mod *= 10;
	double sum = 0;
	char buf[16];
	for (int32_t x = (int32_t)tail; x < all; x += mod) {
		snprintf(buf, sizeof buf, "%0*d", n, (int)x);
		sum += exp(llr_spelling_logp(s, buf, (size_t)n));
	}
	return log(sum);
}

/* Every group below the cap against brute; the capped group of cap
 * against brute at lengths cap .. cap2-1 plus the capped group of cap2. */
static void check_model(int order, int cap, int cap2)
{
	llr_spelling *s = fixture_spelling(words, sizeof words / sizeof *words, order);
	CHECK(s != NULL);
	if (!s)
		return;
	llr_digit_groups g, g2;
	llr_err e = {0};
	CHECK(llr_spelling_digit_groups(s, cap, &g, &e) == LLR_OK);
	CHECK(llr_spelling_digit_groups(s, cap2, &g2, &e) == LLR_OK);
	CHECK(g.k == order - 1 && g.cap == cap);
	int bad = 0, capped = 0;
	double worst = 0;
	for (int32_t i = 0; i < g.count; i++) {
		int len;
		int32_t tail;
		llr_digit_group_key(&g, i, &len, &tail);
		double want;
		if (len < cap) {
			want = brute(s, len, len <= LLR_DIGIT_SINGLE ? len : g.k, tail);
		} else {
			double sum = 0;
			for (int n = cap; n < cap2; n++)
				sum += exp(brute(s, n, g.k, tail));
			char buf[32];
			snprintf(buf, sizeof buf, "%0*d", cap2 + 3, (int)tail); /* a string of g2's capped group */
			sum += exp(g2.logp[llr_digit_group_of(&g2, buf, strlen(buf))]);
			want = log(sum);
			capped++;
		}
		double d = fabs(g.logp[i] - want);
		if (d > worst)
			worst = d;
		if (!(d < 1e-9))
			bad++;
		/* the key back to the group */
		char buf[32];
		snprintf(buf, sizeof buf, "%0*d", len, (int)tail);
		if (llr_digit_group_of(&g, buf, (size_t)len) != i)
			bad++;
	}
	printf("# order %d, cap %d: %d groups (%d capped), largest |ln difference| %.3g\n", order, cap, g.count, capped,
	       worst);
	CHECK(bad == 0);
	CHECK(capped == (int)pow(10, g.k));
	llr_digit_groups_free(&g);
	llr_digit_groups_free(&g2);
	llr_spelling_free(s);
}

static void test_exact(void)
{
	check_model(3, 6, 7);
	check_model(5, 6, 7);
}

/* The groups' total against the share of draws that are digit strings. */
static void test_total(void)
{
	llr_spelling *s = fixture_spelling(words, sizeof words / sizeof *words, 5);
	CHECK(s != NULL);
	if (!s)
		return;
	llr_digit_groups g;
	llr_err e = {0};
	CHECK(llr_spelling_digit_groups(s, 16, &g, &e) == LLR_OK);
	double total = 0;
	for (int32_t i = 0; i < g.count; i++)
		total += exp(g.logp[i]);
	enum { DRAWS = 200000 };
	llr_rng rng;
	llr_rng_seed(&rng, 7);
	llr_buf b = {0};
	int digits = 0;
	for (int i = 0; i < DRAWS; i++) {
		if (llr_spelling_sample(s, &rng, &b, NULL, &e) != LLR_OK)
			break;
		digits += llr_digit_group_of(&g, b.data ? b.data : "", b.len) >= 0;
	}
	double want = DRAWS * total, sd = sqrt(want * (1 - total));
	printf("# digit strings: %.6f of p_spell; %d of %d draws (%.1f expected)\n", total, digits, DRAWS, want);
	CHECK(total > 0.05 && total < 0.9);
	CHECK(fabs(digits - want) < 5 * sd);
	llr_buf_free(&b);
	llr_digit_groups_free(&g);
	llr_spelling_free(s);
}

static void test_keys_and_errors(void)
{
	llr_spelling *s = fixture_spelling(words, sizeof words / sizeof *words, 3);
	llr_spelling *uni = fixture_spelling(words, sizeof words / sizeof *words, 1);
	llr_spelling *big = fixture_spelling(words, sizeof words / sizeof *words, 6);
	CHECK(s && uni && big);
	if (!s || !uni || !big)
		goto out;
	llr_digit_groups g;
	llr_err e = {0};
	CHECK(llr_spelling_digit_groups(uni, 8, &g, &e) == LLR_EINVAL && strstr(e.msg, "order 1"));
	CHECK(g.logp == NULL);
	CHECK(llr_spelling_digit_groups(big, 8, &g, &e) == LLR_EINVAL && strstr(e.msg, "order 6"));
	CHECK(llr_spelling_digit_groups(s, 4, &g, &e) == LLR_EINVAL && strstr(e.msg, "cap 4"));
	CHECK(llr_spelling_digit_groups(s, 6, &g, &e) == LLR_OK);
	/* k = 2, cap 6: the 11110 strings of up to 4 digits, then lengths 5
	 * and 6+ by their last 2 digits */
	CHECK(g.count == 11110 + 2 * 100);
	CHECK(llr_digit_group_of(&g, "", 0) == -1);
	CHECK(llr_digit_group_of(&g, "12a", 3) == -1);
	CHECK(llr_digit_group_of(&g, "-12", 3) == -1);
	CHECK(llr_digit_group_of(&g, "\xd9\xa3", 2) == -1); /* ARABIC-INDIC DIGIT THREE */
	CHECK(llr_digit_group_of(&g, "7", 1) == 7);
	CHECK(llr_digit_group_of(&g, "07", 2) == 10 + 7);
	CHECK(llr_digit_group_of(&g, "9507", 4) == 1110 + 9507);
	CHECK(llr_digit_group_of(&g, "12345", 5) == 11110 + 45);
	CHECK(llr_digit_group_of(&g, "123456789", 9) == 11110 + 100 + 89);
	int len;
	int32_t tail;
	llr_digit_group_key(&g, 11110 + 100 + 89, &len, &tail);
	CHECK(len == 6 && tail == 89);
	llr_digit_group_key(&g, 1110 + 9507, &len, &tail);
	CHECK(len == 4 && tail == 9507);
	llr_digit_group_key(&g, 17, &len, &tail);
	CHECK(len == 2 && tail == 7);
	llr_digit_groups_free(&g);
	llr_digit_groups_free(&g); /* twice: a no-op */
out:
	llr_spelling_free(s);
	llr_spelling_free(uni);
	llr_spelling_free(big);
}

int main(void)
{
	PLAN(3);
	RUN(test_exact);
	RUN(test_total);
	RUN(test_keys_and_errors);
	DONE();
}
