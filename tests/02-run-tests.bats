#!/usr/bin/env bats
# 02-run-tests.bats - scripts/run-tests, the runner of make check: its last
# line counts passed and failed tests over all the files it ran, skipped
# tests (skip_sanitized, a missing package) are counted apart before it,
# and skip_sanitized skips only when SANITIZE is set.

load test_helper

@test "run-tests: one line 'N passed, N failed' last, skipped tests counted apart, a failure fails the run" {
	cd "$BATS_TEST_TMPDIR"
	printf '@test "a" { true; }\n@test "b" { skip "no reason"; }\n' >one.bats
	printf '@test "c" { true; }\n@test "d" { false; }\n' >two.bats
	run "$TOP/scripts/run-tests" -j 2 "$PWD/one.bats" "$PWD/two.bats"
	assert_failure
	assert_line --index 0 --partial "# $PWD/one.bats ("
	assert_line '# 1 skipped'
	assert_equal "${lines[-1]}" '2 passed, 1 failed'
	run "$TOP/scripts/run-tests" -j 1 "$PWD/one.bats"
	assert_success
	assert_equal "${lines[-1]}" '1 passed, 0 failed'
}

@test "skip_sanitized: skips under SANITIZE only, and says why" {
	cd "$BATS_TEST_TMPDIR"
	printf 'load %s/test_helper\n@test "x" { skip_sanitized "slow"; false; }\n' "$BATS_TEST_DIRNAME" >s.bats
	SANITIZE= run bats --tap s.bats
	assert_failure
	assert_line 'not ok 1 x'
	SANITIZE=address,undefined run bats --tap s.bats
	assert_success
	assert_line 'ok 1 x # skip under SANITIZE=address,undefined: slow'
}
