/*
 * test.h - a minimal TAP harness for the C unit tests.
 *
 * Each test is a function registered in main() with RUN(fn); CHECK and
 * CHECK_NEAR record failures without stopping the test, so one run reports
 * every broken expectation.  Output is TAP, counted by scripts/run-tests.
 */
#ifndef LLR_TEST_H
#define LLR_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed_checks;
static int t_number;
static int t_any_failed;
static const char *t_skip; /* set by SKIP(): the reason this test is skipped */

/* Mark the running test skipped: RUN reports it with a TAP "# SKIP"
 * directive.  The caller returns afterwards. */
#define SKIP(reason) (t_skip = (reason))

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("#   %s:%d: CHECK(%s) failed\n", __FILE__,     \
			       __LINE__, #cond);                              \
			t_failed_checks++;                                     \
		}                                                              \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                  \
	do {                                                                   \
		double t_a_ = (a), t_b_ = (b);                                 \
		if (!(fabs(t_a_ - t_b_) <= (tol))) {                           \
			printf("#   %s:%d: %s = %.9g, %s = %.9g, tol %g\n",   \
			       __FILE__, __LINE__, #a, t_a_, #b, t_b_,        \
			       (double)(tol));                                 \
			t_failed_checks++;                                     \
		}                                                              \
	} while (0)

#define CHECK_OK(expr)                                                         \
	do {                                                                   \
		llr_err t_e_ = {0};                                            \
		int t_rc_ = (expr);                                            \
		(void)t_e_;                                                    \
		if (t_rc_ != 0) {                                              \
			printf("#   %s:%d: %s returned %d\n", __FILE__,       \
			       __LINE__, #expr, t_rc_);                        \
			t_failed_checks++;                                     \
		}                                                              \
	} while (0)

#define RUN(fn)                                                                \
	do {                                                                   \
		t_failed_checks = 0;                                           \
		t_skip = NULL;                                                 \
		fn();                                                          \
		t_number++;                                                    \
		printf("%sok %d - %s%s%s\n", t_failed_checks ? "not " : "",   \
		       t_number, #fn, t_skip ? " # SKIP " : "",               \
		       t_skip ? t_skip : "");                                 \
		if (t_failed_checks)                                           \
			t_any_failed = 1;                                      \
		fflush(stdout);                                                \
	} while (0)

/* Print the plan first: tests/unit files call PLAN(n) then RUN each.  A
 * plan that does not match the tests run is a failure of its own, so it
 * cannot drift when tests are added. */
static int t_plan;
#define PLAN(n) (t_plan = (n), printf("1..%d\n", t_plan))
#define DONE()                                                                 \
	do {                                                                   \
		if (t_number != t_plan) {                                      \
			printf("not ok %d - the plan says %d tests, %d ran\n",  \
			       t_number + 1, t_plan, t_number);                \
			t_any_failed = 1;                                      \
		}                                                              \
		return t_any_failed;                                           \
	} while (0)

/* A scratch directory for files tests write, under $TMPDIR: scripts/run-tests
 * points that at a folder of its own and removes it after the run. */
static inline const char *test_tmpdir(void)
{
	static char dir[256];
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/llrnn-unit-XXXXXX", t ? t : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			exit(2);
		}
	}
	return dir;
}

#endif
