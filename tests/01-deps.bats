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

@test "the PyTorch references say what to install when torch is missing, never a traceback" {
	cd "$BATS_TEST_TMPDIR"
	# a torch that fails to import, whether or not python3-torch is installed
	mkdir -p notorch/torch
	echo 'raise ImportError("no torch here")' >notorch/torch/__init__.py
	for f in g2p_torch.py disc_torch.py charcnn_torch.py; do
		run env PYTHONPATH="$PWD/notorch" /usr/bin/python3 "$TOP/bench/$f" --help
		assert_failure 1
		assert_output "$f: torch: not installed (Debian package python3-torch)"
	done
}
