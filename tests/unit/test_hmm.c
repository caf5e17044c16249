/*
 * test_hmm.c - the HMM tagger of lib/family/hmm (Brants's TnT): the
 * counts and TnT's interpolation weights (its figure 1) on a corpus
 * small enough to derive by hand, the smoothed transition, theta, the
 * suffix models' successive abstraction on hand-made words, the
 * second-order Viterbi search against brute-force enumeration of every
 * tag sequence on random tiny models, with and without the table of log
 * transitions (and the beam: a wide one finds
 * the same path, any one a path no better), and the model file's round
 * trip.
 */
#include <math.h>

#include "family/hmm/hmm.h"
#include "llrnn.h"
#include "test.h"

/* A model from word/TAG lines. */
static llr_hmm *model_of(const char *const *lines, size_t n)
{
	hmm_counter *c = hmm_counter_new();
	llr_err e = {0};
	llr_hmm *h = NULL;
	for (size_t i = 0; c && i < n; i++)
		if (hmm_counter_line(c, lines[i], strlen(lines[i]), &e) < 0)
			printf("#   line %zu: %s\n", i + 1, e.msg);
	if (!c || hmm_counter_model(c, &h, &e) < 0)
		printf("#   %s\n", c ? e.msg : "out of memory");
	hmm_counter_free(c);
	return h;
}

static int32_t tag_id(const llr_hmm *h, const char *t)
{
	return llr_strmap_get(h->tags, t, strlen(t));
}

/*
 * Three sentences, tags A B, A B, A A (words a, b).  Counted as BOS BOS
 * t1 .. tn EOS, the trigrams are
 *   (BOS,BOS,A) 3, (BOS,A,B) 2, (A,B,EOS) 2, (BOS,A,A) 1, (A,A,EOS) 1,
 * N = 9 predicted events; unigrams f(A) 4, f(B) 2, f(EOS) 3; bigrams
 * (BOS,A) 3, (A,B) 2, (B,EOS) 2, (A,A) 1, (A,EOS) 1, so f(BOS) 3, f(A) 4,
 * f(B) 2 as histories; trigram histories (BOS,BOS) 3, (BOS,A) 3, (A,B) 2,
 * (A,A) 1.  TnT's figure 1, each trigram of count f voting f for the
 * largest of (f3-1)/(f12-1), (f23-1)/(f2-1), (f3u-1)/(N-1) (0 when the
 * denominator is 0; a tie shares the vote):
 *   (BOS,BOS,A) f 3: 2/2 = 1, 2/2 = 1, 3/8     -> lambda3 1.5, lambda2 1.5
 *   (BOS,A,B)   f 2: 1/2, 1/3, 1/8             -> lambda3 2
 *   (A,B,EOS)   f 2: 1/1 = 1, 1/1 = 1, 2/8     -> lambda3 1, lambda2 1
 *   (BOS,A,A)   f 1: 0/2, 0/3, 3/8             -> lambda1 1
 *   (A,A,EOS)   f 1: 0 (1 - 1 = 0), 0/3, 2/8   -> lambda1 1
 * lambda = (2, 2.5, 4.5) / 9.  Then p(B | BOS, A) = 2/9 * 2/9 + 2.5/9 *
 * 2/4 + 4.5/9 * 2/3 = 4/81 + 1.25/9 + 3/9; theta over p(A) = 2/3, p(B) =
 * 1/3: mean 1/2, sqrt(((1/6)^2 * 2) / (2 - 1)) = sqrt(1/18).
 */
static void test_lambdas_by_hand(void)
{
	static const char *const lines[] = {"a/A b/B", "a/A b/B", "a/A a/A"};
	llr_hmm *h = model_of(lines, 3);
	CHECK(h != NULL);
	if (!h)
		return;
	int32_t A = tag_id(h, "A"), B = tag_id(h, "B"), T = h->T, S = T + 2;
	CHECK(T == 2 && A >= 0 && B >= 0);
	CHECK(h->N == 9 && h->ntri == 5);
	CHECK(h->uni[A] == 4 && h->uni[B] == 2 && h->uni[HMM_EOS(T)] == 3 && h->uni[HMM_BOS(T)] == 0);
	CHECK(h->h1[HMM_BOS(T)] == 3 && h->h1[A] == 4 && h->h1[B] == 2);
	CHECK(h->h2[HMM_BOS(T) * S + HMM_BOS(T)] == 3 && h->h2[HMM_BOS(T) * S + A] == 3 && h->h2[A * S + B] == 2 && h->h2[A * S + A] == 1);
	CHECK_NEAR(h->lambda[0], 2.0 / 9, 1e-12);
	CHECK_NEAR(h->lambda[1], 2.5 / 9, 1e-12);
	CHECK_NEAR(h->lambda[2], 4.5 / 9, 1e-12);
	CHECK_NEAR(llr_hmm_trans(h, HMM_BOS(T), A, B), 4.0 / 81 + 1.25 / 9 + 3.0 / 9, 1e-12);
	/* an unseen trigram and bigram: the unigram term alone */
	CHECK_NEAR(llr_hmm_trans(h, B, B, B), 2.0 / 9 * 2.0 / 9, 1e-12);
	CHECK_NEAR(h->theta, sqrt(1.0 / 18), 1e-12);
	/* p(. | t1, t2) sums to 1 over what may follow (the tags and EOS)
	 * after a history seen (TnT does not renormalise after an unseen one:
	 * its estimates are 0 there) */
	for (int32_t a = 0; a < S; a++)
		for (int32_t b = 0; b < S; b++) {
			if (!h->h2[a * S + b])
				continue;
			double sum = 0;
			for (int32_t c = 0; c < S; c++)
				sum += llr_hmm_trans(h, a, b, c);
			CHECK_NEAR(sum, 1.0, 1e-12);
		}
	/* the lexicon: p(a | A) = 4/4, a and b each with one tag */
	int32_t wa = llr_strmap_get(h->words, "a", 1);
	CHECK(wa >= 0 && h->lex.ptr[wa + 1] - h->lex.ptr[wa] == 1 && h->lex.count[h->lex.ptr[wa]] == 4);
	llr_hmm_free(h);
}

/* theta: the standard deviation of the tag probabilities, divisor n - 1.
 * Counts 1, 1, 2 (sum 4): p = 1/4, 1/4, 1/2, mean 1/3, deviations
 * -1/12, -1/12, 1/6: sum of squares 1/144 + 1/144 + 4/144 = 1/24, over 2
 * = 1/48. */
static void test_theta(void)
{
	int64_t c[3] = {1, 1, 2}, one[1] = {5}, even[4] = {3, 3, 3, 3};
	CHECK_NEAR(llr_hmm_theta(c, 3), sqrt(1.0 / 48), 1e-15);
	CHECK(llr_hmm_theta(one, 1) == 0);
	CHECK_NEAR(llr_hmm_theta(even, 4), 0, 1e-15);
}

/*
 * The suffix models.  Uncapitalised rare words: xab/A twice, yb/B,
 * zab/B ("the" is seen 11 times: not rare, left out); capitalised: Qb/A,
 * Éb/B.  Lower model: base A 2, B 2 (P_0 = 1/2, 1/2); suffix "b": A 2,
 * B 2; "ab": A 2, B 1; "xab" A 2, "yb" B 1, "zab" B 1.  With theta = 1/2,
 * the unknown "wab": P_1 = ((1/2, 1/2) + 1/2 (1/2, 1/2)) / (3/2) = (1/2,
 * 1/2); P_2 = ((2/3, 1/3) + 1/2 (1/2, 1/2)) / (3/2) = (11/18, 7/18); "wab"
 * itself is unseen: suffix length 2.  "éb" (lowercase é) uses the lower
 * model: "b" only, (1/2, 1/2), length 1.  The capitalised "Wb": base A
 * 1, B 1; "b": A 1, B 1; length 1, (1/2, 1/2); "Rxb": "b" then "xb"
 * unseen: length 1.  A word of no known suffix ("q") keeps P_0.
 */
static void test_suffix_model(void)
{
	static const char *const lines[] = {"xab/A xab/A yb/B zab/B", "Qb/A \xc3\x89" "b/B",
	                                    "the/A the/A the/A the/A the/A the/A the/A the/A the/A the/A the/A"};
	llr_hmm *h = model_of(lines, 3);
	CHECK(h != NULL);
	if (!h)
		return;
	int32_t A = tag_id(h, "A"), B = tag_id(h, "B");
	const hmm_suffix *lo = &h->sm[0], *up = &h->sm[1];
	CHECK(lo->total == 4 && lo->base[A] == 2 && lo->base[B] == 2);
	CHECK(up->total == 2 && up->base[A] == 1 && up->base[B] == 1);
	CHECK(llr_strmap_get(lo->sfx, "e", 1) < 0); /* "the" is not rare */
	int32_t ab = llr_strmap_get(lo->sfx, "ab", 2);
	CHECK(ab >= 0 && lo->rows.total[ab] == 3);
	h->theta = 0.5;
	double p[2];
	CHECK(llr_hmm_suffix_probs(h, lo, "wab", 3, p) == 2);
	CHECK_NEAR(p[A], 11.0 / 18, 1e-12);
	CHECK_NEAR(p[B], 7.0 / 18, 1e-12);
	CHECK(llr_hmm_suffix_probs(h, lo, "\xc3\xa9" "b", 3, p) == 1);
	CHECK_NEAR(p[A], 0.5, 1e-12);
	CHECK(llr_hmm_suffix_probs(h, up, "Wb", 2, p) == 1);
	CHECK_NEAR(p[A], 0.5, 1e-12);
	CHECK(llr_hmm_suffix_probs(h, up, "Rxb", 3, p) == 1);
	CHECK(llr_hmm_suffix_probs(h, lo, "q", 1, p) == 0);
	CHECK_NEAR(p[A], 0.5, 1e-12);
	/* the whole word is a suffix too: "xab" as an unseen "xab" would be
	 * (P_3 from "xab" = (1, 0)) */
	CHECK(llr_hmm_suffix_probs(h, lo, "xab", 3, p) == 3);
	CHECK_NEAR(p[A], (1 + 0.5 * 11.0 / 18) / 1.5, 1e-12);
	/* characters, not bytes; capitals beyond ASCII */
	CHECK(hmm_suffix_at("\xc3\xa9" "b", 3, 1) == 2 && hmm_suffix_at("\xc3\xa9" "b", 3, 2) == 0 && hmm_suffix_at("\xc3\xa9" "b", 3, 3) == -1);
	CHECK(llr_hmm_capitalised("\xc3\x89" "b", 3) && !llr_hmm_capitalised("\xc3\xa9" "b", 3) && !llr_hmm_capitalised("1a", 2));
	llr_hmm_free(h);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* Every tag sequence over the candidates: the best log score and path. */
static double brute(const llr_hmm *h, size_t n, const int32_t *nc, const size_t *off, const int32_t *cand, const double *logem,
                    int32_t *best)
{
	int32_t idx[8] = {0};
	double top = -INFINITY;
	for (;;) {
		double s = 0;
		int32_t a = HMM_BOS(h->T), b = HMM_BOS(h->T);
		for (size_t i = 0; i < n; i++) {
			int32_t c = cand[off[i] + (size_t)idx[i]];
			s += log(llr_hmm_trans(h, a, b, c)) + logem[off[i] + (size_t)idx[i]];
			a = b;
			b = c;
		}
		s += log(llr_hmm_trans(h, a, b, HMM_EOS(h->T)));
		if (s > top) {
			top = s;
			memcpy(best, idx, n * sizeof *idx);
		}
		size_t i = 0;
		while (i < n && ++idx[i] == nc[i])
			idx[i++] = 0;
		if (i == n)
			return top;
	}
}

/* Random models of 2 to 4 tags from random tag sequences; random
 * sentences of 1 to 6 positions, each with a random non-empty set of
 * candidate tags and random log emissions. */
static void test_viterbi_brute_force(void)
{
	llr_err e = {0};
	int mismatch = 0, beam_better = 0, wide_differs = 0, runs = 0;
	for (int model = 0; model < 40; model++) {
		int T = 2 + (int)rnd(3);
		char lines[12][128];
		const char *lp[12];
		for (int l = 0; l < 12; l++) {
			int len = 1 + (int)rnd(6), o = 0;
			for (int k = 0; k < len; k++)
				o += snprintf(lines[l] + o, sizeof lines[l] - (size_t)o, "%sw%u/T%u", k ? " " : "", rnd(5), rnd((uint32_t)T));
			lp[l] = lines[l];
		}
		llr_hmm *h = model_of(lp, 12);
		if (!h)
			continue;
		hmm_viterbi v = {0};
		for (int sent = 0; sent < 10; sent++) {
			size_t n = 1 + rnd(6), off[8], k = 0;
			int32_t nc[8], cand[8 * 4], best[8], want[8];
			double logem[8 * 4], score, wide, narrow;
			for (size_t i = 0; i < n; i++) {
				off[i] = k;
				nc[i] = 0;
				for (int32_t t = 0; t < h->T; t++)
					if (rnd(2) || (t == h->T - 1 && nc[i] == 0)) {
						cand[k] = t;
						logem[k++] = log((rnd(1000) + 1) / 1000.0);
						nc[i]++;
					}
			}
			double exact = brute(h, n, nc, off, cand, logem, want);
			CHECK_OK(llr_hmm_viterbi(&v, h, n, nc, off, cand, logem, 0, best, &score, &e));
			mismatch += fabs(score - exact) > 1e-9 || memcmp(best, want, n * sizeof *best) != 0;
			/* the same without the table of log transitions (large tag sets) */
			double *cache = h->logtrans;
			h->logtrans = NULL;
			CHECK_OK(llr_hmm_viterbi(&v, h, n, nc, off, cand, logem, 0, best, &score, &e));
			h->logtrans = cache;
			mismatch += !cache || fabs(score - exact) > 1e-9 || memcmp(best, want, n * sizeof *best) != 0;
			CHECK_OK(llr_hmm_viterbi(&v, h, n, nc, off, cand, logem, 1e300, best, &wide, &e));
			wide_differs += fabs(wide - exact) > 1e-9 || memcmp(best, want, n * sizeof *best) != 0;
			CHECK_OK(llr_hmm_viterbi(&v, h, n, nc, off, cand, logem, 2, best, &narrow, &e));
			beam_better += narrow > exact + 1e-9;
			runs++;
		}
		hmm_viterbi_free(&v);
		llr_hmm_free(h);
	}
	printf("#   %d sentences, %d mismatches, %d wide beams differing, %d narrow beams better than exact\n", runs, mismatch,
	       wide_differs, beam_better);
	CHECK(runs >= 350);
	CHECK(mismatch == 0);
	CHECK(wide_differs == 0);
	CHECK(beam_better == 0);
}

/* Save and load: the same counts, weights and transitions. */
static void test_round_trip(void)
{
	static const char *const lines[] = {"Le/DET chat/NOUN dort/VERB ./PUNCT", "le/DET chien/NOUN court/VERB vite/ADV ./PUNCT",
	                                    "Il/PRON dort/VERB ./PUNCT"};
	llr_hmm *h = model_of(lines, 3), *g = NULL;
	CHECK(h != NULL);
	if (!h)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/rt.hmm", test_tmpdir());
	llr_err e = {0};
	CHECK_OK(llr_hmm_save(path, h, &e));
	CHECK_OK(llr_hmm_load(path, &g, &e));
	CHECK(g != NULL);
	if (g) {
		CHECK(g->T == h->T && g->ntri == h->ntri && g->N == h->N && g->lex.rows == h->lex.rows);
		for (int k = 0; k < 3; k++)
			CHECK(g->lambda[k] == h->lambda[k]);
		CHECK(g->theta == h->theta);
		int32_t S = h->T + 2, bad = 0;
		for (int32_t a = 0; a < S; a++)
			for (int32_t b = 0; b < S; b++)
				for (int32_t c = 0; c < S; c++)
					bad += llr_hmm_trans(g, a, b, c) != llr_hmm_trans(h, a, b, c);
		CHECK(bad == 0);
		CHECK(g->sm[0].total == h->sm[0].total && g->sm[1].total == h->sm[1].total);
	}
	llr_hmm_free(g);
	llr_hmm_free(h);
}

/* A token without a tag, and no sentence at all. */
static void test_counter_errors(void)
{
	hmm_counter *c = hmm_counter_new();
	llr_err e = {0};
	llr_hmm *h = NULL;
	CHECK(hmm_counter_line(c, "a/A b", 5, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "token 'b' has no /TAG") != NULL);
	CHECK(hmm_counter_line(c, "/A", 2, &e) == LLR_EFORMAT);
	CHECK(hmm_counter_line(c, "a/", 2, &e) == LLR_EFORMAT);
	CHECK(hmm_counter_model(c, &h, &e) == LLR_EINVAL && h == NULL);
	hmm_counter_free(c);
}

int main(void)
{
	PLAN(6);
	RUN(test_lambdas_by_hand);
	RUN(test_theta);
	RUN(test_suffix_model);
	RUN(test_viterbi_brute_force);
	RUN(test_round_trip);
	RUN(test_counter_errors);
	DONE();
}
