#!/usr/bin/env bats
# 01-deps.bats - first of the BATS files: every Debian package the tests
# and the pipelines need is one scripts/install-deps installs (issue 44: a
# script imported matplotlib, which it did not).  scripts/check-deps reads
# the clone without running it: the Python modules imported (standard
# library, or scripts/deps-map), the external commands (their package, by
# dpkg -S); these tests run it on the clone, and on small made-up trees
# to show what it catches.

load test_helper

setup() {
	skip_sanitized "Python and shell only, no C of ours"
}

# tree DIR PACKAGE...: a made-up clone in DIR whose install-deps lists
# PACKAGE..., whose deps-map maps numpy to python3-numpy.
tree() {
	local d=$1
	shift
	mkdir -p "$d/scripts" "$d/tests" "$d/pipelines" "$d/bench" "$d/tools"
	printf '#!/bin/sh\n[ "$1" = --list ] && printf "%%s\\n" %s\n' "$*" >"$d/scripts/install-deps"
	chmod +x "$d/scripts/install-deps"
	printf '# kind\tname\tpackage\tneed\nmodule\tnumpy\tpython3-numpy\trequired\n' >"$d/scripts/deps-map"
	: >"$d/Makefile"
}

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

@test "check-deps: every module and command of the tests, pipelines, scripts and bench comes from a package install-deps installs" {
	run "$TOP/scripts/check-deps"
	assert_success
	assert_output ""
	# what it found, so an empty scan cannot pass: numpy, gnuplot (the
	# plots, the attention plot's subprocess), 7z and mpirun, python3
	run "$TOP/scripts/check-deps" -v
	assert_success
	assert_line --regexp '^module	numpy	python3-numpy	required	'
	assert_line --regexp '^module	torch	python3-torch	optional	bench/g2p_torch.py:'
	assert_line --regexp '^command	gnuplot	gnuplot-nox	listed	'
	assert_line --regexp '^command	7z	p7zip-full	listed	tests/70-disc-pairs.bats:'
	assert_line --regexp '^command	mpirun	openmpi-bin	listed	'
	assert_line --regexp '^command	/usr/bin/python3	python3[.0-9a-z-]*	(listed|dependency)	'
	run grep -c '^command	' <<<"$output"
	[ "$output" -gt 40 ]
}

@test "check-deps: flags matplotlib, a mapped module or a command whose package install-deps does not list, and an unknown command" {
	cd "$BATS_TEST_TMPDIR"
	tree t python3 bats
	printf '#!/usr/bin/env python3\nimport sys\nimport matplotlib.pyplot as plt\n' >t/scripts/plot
	printf 'import numpy\n' >t/scripts/probe.py
	printf 'import subprocess\nsubprocess.run(["mandoc", "-Tlint", "x.1"])\n' >t/scripts/lint.py
	sed 's/^at_test/@test/' >t/tests/10-x.bats <<'EOF'
at_test "x" {
	run 7z a x.7z f
	[ -n "$(sh -c 'xz -d y.xz | gnuplot-nox')" ]
	nosuchcommand-llrnn --version
}
EOF
	printf 'all:\n\tzstd -q $< -o $@\n' >t/pipelines/x.mk
	mkdir t/tests/unit
	printf '#include <stdlib.h>\nint main(void)\n{\n\treturn system("cd d && cpio -i < a.cpio");\n}\n' >t/tests/unit/test_x.c
	run "$TOP/scripts/check-deps" t
	assert_failure 1
	assert_output --partial "check-deps: scripts/plot:3: import matplotlib: not in the standard library nor in scripts/deps-map"
	assert_output --regexp "check-deps: scripts/deps-map:[0-9]+: module numpy: its package python3-numpy is not in install-deps --list"
	assert_output --partial "check-deps: tests/10-x.bats:2: 7z: /usr/bin/7z is in p7zip-full, which scripts/install-deps does not install"
	assert_output --partial "check-deps: tests/10-x.bats:3: gnuplot-nox: /usr/bin/gnuplot-nox is in gnuplot-nox, which"
	assert_output --partial "check-deps: pipelines/x.mk:2: zstd: /usr/bin/zstd is in zstd, which"
	assert_output --partial "check-deps: tests/10-x.bats:4: nosuchcommand-llrnn: not found in /usr/bin, /bin, /usr/sbin, /sbin here"
	# xz-utils is of priority standard, not required: a fresh minimal
	# Debian may lack it
	assert_output --partial "check-deps: tests/10-x.bats:3: xz: "
	# a command a C unit test runs, one Python runs
	assert_output --partial "check-deps: tests/unit/test_x.c:4: cpio: /usr/bin/cpio is in cpio, which"
	assert_output --partial "check-deps: scripts/lint.py:2: mandoc: /usr/bin/mandoc is in mandoc, which"
	# no traceback, nothing on stdout
	refute_output --partial Traceback
	run bash -c '"$0" t 2>/dev/null' "$TOP/scripts/check-deps"
	assert_failure 1
	assert_output ""
}

@test "check-deps: the same tree passes once install-deps lists the packages; comments, strings, builtins and functions are no commands" {
	cd "$BATS_TEST_TMPDIR"
	tree t python3 bats python3-numpy p7zip-full xz-utils gnuplot-nox zstd
	printf '#!/usr/bin/env python3\nimport sys\nimport numpy\n' >t/scripts/probe.py
	sed 's/^at_test/@test/' >t/tests/10-x.bats <<'EOF'
# matplotlib and 7z in a comment, column in a string, a function "top"
top() { echo "column -t"; }
at_test "x" {
	run 7z a x.7z f
	[ -n "$(sh -c 'xz -d y.xz | gnuplot-nox')" ]
	top; printf 'import matplotlib\n' | grep -q matplotlib
	/usr/bin/python3 - <<'PY'
import numpy, json
PY
}
EOF
	printf 'all:\n\tzstd -q $< -o $@\n' >t/pipelines/x.mk
	run "$TOP/scripts/check-deps" t
	assert_success
	assert_output ""
	# and an import in a here-document to python3 is read too
	sed -i 's/import numpy, json/import numpy, matplotlib/' t/tests/10-x.bats
	run "$TOP/scripts/check-deps" t
	assert_failure 1
	assert_output --partial "check-deps: tests/10-x.bats:8: import matplotlib: not in the standard library"
}

@test "check-deps: the clone's own Python modules (python/NAME/, scripts/NAME.py) are no dependency; their imports are checked too" {
	cd "$BATS_TEST_TMPDIR"
	tree t python3 bats
	printf '# kind\tname\tpackage\tneed\n' >t/scripts/deps-map
	printf '@test "p" {\n\t/usr/bin/python3 -c "import llrnnx"\n}\n' >t/tests/10-p.bats
	run "$TOP/scripts/check-deps" t
	assert_failure 1
	assert_output --partial "check-deps: tests/10-p.bats:2: import llrnnx: not in the standard library nor in scripts/deps-map"
	mkdir -p t/python/llrnnx
	printf 'from . import model\nimport ctypes\n' >t/python/llrnnx/__init__.py
	printf 'import ctypes\n' >t/python/llrnnx/model.py
	run "$TOP/scripts/check-deps" t
	assert_success
	assert_output ""
	printf 'import matplotlib\n' >t/python/llrnnx/model.py
	run "$TOP/scripts/check-deps" t
	assert_failure 1
	assert_output --partial "check-deps: python/llrnnx/model.py:1: import matplotlib: not in the standard library"
	# a script module a test imports by path (scripts/runs.py), itself checked
	printf 'import ctypes\n' >t/python/llrnnx/model.py
	printf '@test "s" {\n\t/usr/bin/python3 -c "import runsx"\n}\n' >t/tests/10-s.bats
	run "$TOP/scripts/check-deps" t
	assert_failure 1
	assert_output --partial "check-deps: tests/10-s.bats:2: import runsx: not in the standard library"
	printf 'import yaml\n' >t/scripts/runsx.py
	run "$TOP/scripts/check-deps" t
	assert_failure 1
	refute_output --partial "import runsx"
	assert_output --partial "check-deps: scripts/runsx.py:1: import yaml: not in the standard library"
}

@test "check-deps: an optional module is imported in try/except ImportError, and a test running its script skips naming the package" {
	cd "$BATS_TEST_TMPDIR"
	tree t python3 bats python3-numpy
	printf 'module\ttorch\tpython3-torch\toptional\n' >t/scripts/deps-map
	printf '#!/usr/bin/python3\nimport sys\nimport torch\n' >t/bench/ref_torch.py
	printf '@test "r" {\n\tpython3 "$TOP/bench/ref_torch.py"\n}\n' >t/tests/10-r.bats
	run "$TOP/scripts/check-deps" t
	assert_failure 1
	assert_output --partial "check-deps: bench/ref_torch.py:3: import torch: python3-torch is optional; import it in try/except ImportError"
	assert_output --partial "check-deps: tests/10-r.bats: runs ref_torch.py, which needs python3-torch (optional): skip with a message naming python3-torch"
	printf '#!/usr/bin/python3\nimport sys\ntry:\n    import torch\nexcept ImportError:\n    sys.exit("ref_torch.py: torch: not installed (Debian package python3-torch)")\n' >t/bench/ref_torch.py
	printf '@test "r" {\n\tpython3 -c "import torch" 2>/dev/null || skip "python3-torch not installed"\n\tpython3 "$TOP/bench/ref_torch.py"\n}\n' >t/tests/10-r.bats
	run "$TOP/scripts/check-deps" t
	assert_success
	assert_output ""
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

@test "check-deps: usage" {
	run "$TOP/scripts/check-deps" -h
	assert_success
	assert_output "usage: check-deps [-v] [DIR]"
	run "$TOP/scripts/check-deps" -x
	assert_failure 2
	assert_output "usage: check-deps [-v] [DIR]"
}
