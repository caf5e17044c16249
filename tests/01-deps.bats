#!/usr/bin/env bats
# 01-deps.bats - first of the BATS files: the Debian packages the tests
# and the pipelines need are those scripts/install-deps installs (issue 44:
# a script imported matplotlib, which it did not).

load test_helper

@test "install-deps --list: the packages one a line, installing nothing; other operands are a usage error" {
	run "$TOP/scripts/install-deps" --list
	assert_success
	assert_line python3-numpy
	assert_line gnuplot-nox
	assert_line file
	refute_output --partial ' '
	refute_output --partial matplotlib
	run "$TOP/scripts/install-deps" --lst
	assert_failure 2
	assert_output "usage: install-deps [--list]"
}
