#!/usr/bin/env bats
# make install / uninstall: PREFIX, DESTDIR, PROGPREFIX (llrnn- by
# default), the llrnn dispatcher, the tools' messages under their
# installed names, the static and shared libraries, the pkg-config file,
# programs built against either installed library, and PYTHONDIR's
# Python module.

bats_require_minimum_version 1.5.0
load test_helper

@test "install: the tools are llrnn-TOOL by default, with their man pages and llrnn; uninstall removes everything" {
	d="$BATS_TEST_TMPDIR/root"
	run make -s -C "$TOP" install PREFIX=/usr DESTDIR="$d"
	assert_success
	for t in tok vocab featurize train score gen disc-pairs; do
		assert_file_executable "$d/usr/bin/llrnn-$t"
		assert_file_not_exist "$d/usr/bin/$t"
		assert_file_exist "$d/usr/share/man/man1/llrnn-$t.1"
		# the tool's own page, whole: .Dt names the tool, section 1
		assert_file_not_empty "$d/usr/share/man/man1/llrnn-$t.1"
		cmp "$TOP/man/$t.1" "$d/usr/share/man/man1/llrnn-$t.1"
		run grep -x "\.Dt ${t^^} 1" "$d/usr/share/man/man1/llrnn-$t.1"
		assert_success
	done
	assert_file_executable "$d/usr/bin/llrnn"
	cmp "$TOP/man/llrnn.1" "$d/usr/share/man/man1/llrnn.1"
	for p in man5/llrnn-tensor.5:'LLRNN-TENSOR 5' man5/llrnn-model.5:'LLRNN-MODEL 5' man7/llrnn.7:'LLRNN 7'; do
		assert_file_not_empty "$d/usr/share/man/${p%%:*}"
		run grep -x "\.Dt ${p#*:}" "$d/usr/share/man/${p%%:*}"
		assert_success
	done
	# the installed tools run
	run "$d/usr/bin/llrnn-tok" <<<"a b"
	assert_success
	assert_output "a b"
	run "$d/usr/bin/llrnn-tok" --lang fr -l <<<"L'homme arrive."
	assert_success
	assert_output "l' homme arrive ."
	assert_file_exist "$d/usr/include/llrnn.h"
	assert_file_exist "$d/usr/lib/libllrnn.a"
	# the shared library under its full version, the soname and the
	# link-time name linking to it
	v=$(sed -n 's/^#define LLR_VERSION "\(.*\)"$/\1/p' "$TOP/lib/llrnn.h")
	assert_file_executable "$d/usr/lib/libllrnn.so.$v"
	[ "$(readlink "$d/usr/lib/libllrnn.so.${v%%.*}")" = "libllrnn.so.$v" ]
	[ "$(readlink "$d/usr/lib/libllrnn.so")" = "libllrnn.so.${v%%.*}" ]
	cmp "$TOP/build/libllrnn.so.$v" "$d/usr/lib/libllrnn.so.$v"
	run grep -x 'prefix=/usr' "$d/usr/lib/pkgconfig/llrnn.pc"
	assert_success
	# no Python module without PYTHONDIR
	run find "$d" -name '*.py'
	assert_output ""
	run make -s -C "$TOP" uninstall PREFIX=/usr DESTDIR="$d"
	assert_success
	run find "$d" ! -type d
	assert_output ""
}

@test "install: PROGPREFIX= installs the bare names, and llrnn still finds them" {
	d="$BATS_TEST_TMPDIR/root"
	run make -s -C "$TOP" install PREFIX=/usr DESTDIR="$d" PROGPREFIX=
	assert_success
	for t in tok vocab featurize train score gen disc-pairs; do
		assert_file_executable "$d/usr/bin/$t"
		assert_file_not_exist "$d/usr/bin/llrnn-$t"
		cmp "$TOP/man/$t.1" "$d/usr/share/man/man1/$t.1"
	done
	cmp "$TOP/man/llrnn.1" "$d/usr/share/man/man1/llrnn.1"
	run env PATH=/usr/bin:/bin "$d/usr/bin/llrnn" tok --lang fr -l <<<"L'homme arrive."
	assert_success
	assert_output "l' homme arrive ."
	run make -s -C "$TOP" uninstall PREFIX=/usr DESTDIR="$d" PROGPREFIX=
	assert_success
	run find "$d" -type f
	assert_output ""
}

@test "install: llrnn runs llrnn-TOOL beside it, the tool speaks under its installed name" {
	d="$BATS_TEST_TMPDIR/root"
	run make -s -C "$TOP" install PREFIX=/usr DESTDIR="$d"
	assert_success
	# PATH without bin/: llrnn finds its commands beside itself
	export PATH=/usr/bin:/bin
	run "$d/usr/bin/llrnn" tok --lang fr -l <<<"L'homme arrive."
	assert_success
	assert_output "l' homme arrive ."
	run --separate-stderr "$d/usr/bin/llrnn" --help
	assert_success
	for t in tok vocab featurize train score gen disc-pairs; do
		assert_line --regexp "^ +$t +[a-z]"
	done
	run_err 2 '^llrnn: bogus: unknown command' "$d/usr/bin/llrnn" bogus
	grep -q '^usage: llrnn ' "$BATS_TEST_TMPDIR/err.err"
	run_err 2 '^llrnn: no command given' "$d/usr/bin/llrnn"
	run_err 2 '^llrnn: --bogus: unknown option' "$d/usr/bin/llrnn" --bogus
	# nothing but the seven tools is a command
	run_err 2 '^llrnn: ls: unknown command' "$d/usr/bin/llrnn" ls
	# messages and usage under the installed name
	run --separate-stderr "$d/usr/bin/llrnn" score --bogus
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "llrnn-score: --bogus: unknown option" ]
	run_err 2 '^llrnn-score: --bogus: unknown option' "$d/usr/bin/llrnn-score" --bogus
	grep -qx 'usage: llrnn-score \[-hqv\] -m MODEL .*' "$BATS_TEST_TMPDIR/err.err"
	# the usage's continuation lines stay aligned under the longer name
	grep -qx '                   \[--.*' "$BATS_TEST_TMPDIR/err.err"
	run ! grep -qx '             \[--.*' "$BATS_TEST_TMPDIR/err.err"
	grep -qx '       llrnn-score --version' "$BATS_TEST_TMPDIR/err.err"
	run_err 1 '^llrnn-score: ' "$d/usr/bin/llrnn-score" -m "$BATS_TEST_TMPDIR/none.model"
	run_err 1 '^llrnn-tok: ' "$d/usr/bin/llrnn-tok" "$BATS_TEST_TMPDIR/none.txt"
	run --separate-stderr "$d/usr/bin/llrnn-vocab" --version
	assert_success
	assert_output --regexp '^llrnn-vocab \(llrnn\) '
	run --separate-stderr "$d/usr/bin/llrnn" vocab -h
	assert_success
	assert_line --index 0 --partial 'usage: llrnn-vocab [-hm]'
	# llrnn with no tool beside it looks on PATH, and says when it is not there
	mkdir "$BATS_TEST_TMPDIR/alone"
	cp "$d/usr/bin/llrnn" "$BATS_TEST_TMPDIR/alone/"
	run_err 1 '^llrnn: llrnn-gen: command not found' "$BATS_TEST_TMPDIR/alone/llrnn" gen -h
	PATH="$d/usr/bin:$PATH" run --separate-stderr "$BATS_TEST_TMPDIR/alone/llrnn" gen -h
	assert_success
	assert_line --index 0 --partial 'usage: llrnn-gen '
}

@test "llrnn(1): EXAMPLES run, and the page is lint-clean" {
	PATH="$TOP/bin:$PATH"
	run bash -c "echo \"L'homme arrive.\" | llrnn tok --lang fr -l"
	assert_success
	assert_output "l' homme arrive ."
	command -v mandoc >/dev/null || skip "mandoc not installed"
	run mandoc -Tlint -W warning "$TOP/man/llrnn.1"
	assert_success
	assert_output ""
}

@test "install: a program builds against the installed library through pkg-config" {
	p="$BATS_TEST_TMPDIR/prefix"
	# under `make SANITIZE=... check` the library is instrumented, and
	# its pkg-config file must say so
	run make -s -C "$TOP" install PREFIX="$p" SANITIZE="${SANITIZE:-}"
	assert_success
	cat >"$BATS_TEST_TMPDIR/v.c" <<'C'
#include <llrnn.h>
#include <stdio.h>
int main(void)
{
	llr_vocab *v = llr_vocab_new();
	llr_vocab_count_line(v, "a b a", 5, NULL);
	llr_vocab_sort(v, NULL);
	printf("%s %lld %zu\n", llr_vocab_token(v, 0), (long long)llr_vocab_count(v, 0), llr_vocab_size(v));
	llr_vocab_free(v);
	return 0;
}
C
	export PKG_CONFIG_PATH="$p/lib/pkgconfig"
	# the shared library: pkg-config --libs; it runs where the loader
	# finds libllrnn.so.MAJOR
	run bash -c "cc -o '$BATS_TEST_TMPDIR/v' '$BATS_TEST_TMPDIR/v.c' \$(pkg-config --cflags llrnn) \$(pkg-config --libs llrnn)"
	assert_success
	run readelf -d "$BATS_TEST_TMPDIR/v"
	assert_output --partial 'Shared library: [libllrnn.so.'
	run env LD_LIBRARY_PATH="$p/lib" "$BATS_TEST_TMPDIR/v"
	assert_success
	assert_output "a 2 3"
	# the static one: the archive, and pkg-config --static for what it
	# needs in turn; the program runs without the shared library
	run bash -c "cc -o '$BATS_TEST_TMPDIR/vs' '$BATS_TEST_TMPDIR/v.c' \$(pkg-config --cflags llrnn) -Wl,-Bstatic -lllrnn -Wl,-Bdynamic -Wl,--as-needed \$(pkg-config --static --libs llrnn)"
	assert_success
	run readelf -d "$BATS_TEST_TMPDIR/vs"
	refute_output --partial 'libllrnn'
	mv "$p/lib/libllrnn.so"* "$BATS_TEST_TMPDIR/"
	run "$BATS_TEST_TMPDIR/vs"
	assert_success
	assert_output "a 2 3"
	# while the one linked to it does not find it (the loader's 127)
	run -127 env LD_LIBRARY_PATH="$p/lib" "$BATS_TEST_TMPDIR/v"
	assert_output --partial 'libllrnn.so.'
}

@test "install: PYTHONDIR installs the Python module, which finds the installed library by its soname" {
	p="$BATS_TEST_TMPDIR/prefix"
	run make -s -C "$TOP" install PREFIX="$p" PYTHONDIR="$p/python" SANITIZE="${SANITIZE:-}"
	assert_success
	sanitized_python
	for f in "$TOP"/python/llrnn/*.py; do
		cmp "$f" "$p/python/llrnn/${f##*/}"
	done
	ud_slice "$BATS_TEST_TMPDIR"
	run train -q --ngram 2 -o "$BATS_TEST_TMPDIR/u.arpa" "$BATS_TEST_TMPDIR/train.tok"
	assert_success
	run env -u LLRNN_LIB PYTHONPATH="$p/python" LD_LIBRARY_PATH="$p/lib" /usr/bin/python3 -c '
import sys, llrnn
print("%.4f" % llrnn.Model(sys.argv[1]).score("la ville de paris"))' "$BATS_TEST_TMPDIR/u.arpa"
	assert_success
	assert_output "$(echo "la ville de paris" | score -q -m "$BATS_TEST_TMPDIR/u.arpa" --base 10 | cut -f1)"
	# uninstall takes the module (and what Python cached of it) away
	run make -s -C "$TOP" uninstall PREFIX="$p" PYTHONDIR="$p/python"
	assert_success
	run find "$p" ! -type d
	assert_output ""
}
