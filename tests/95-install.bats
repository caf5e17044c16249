#!/usr/bin/env bats
# make install / uninstall: PREFIX, DESTDIR, PROGPREFIX, the pkg-config
# file, and a program built against the installed library.

load test_helper

@test "install: PROGPREFIX names the tools and their man pages; uninstall removes everything" {
	d="$BATS_TEST_TMPDIR/root"
	run make -s -C "$TOP" install PREFIX=/usr DESTDIR="$d" PROGPREFIX=llrnn-
	assert_success
	for t in tok vocab featurize train score gen disc-pairs; do
		assert_file_executable "$d/usr/bin/llrnn-$t"
		assert_file_exist "$d/usr/share/man/man1/llrnn-$t.1"
		# the tool's own page, whole: .Dt names the tool, section 1
		assert_file_not_empty "$d/usr/share/man/man1/llrnn-$t.1"
		cmp "$TOP/man/$t.1" "$d/usr/share/man/man1/llrnn-$t.1"
		run grep -x "\.Dt ${t^^} 1" "$d/usr/share/man/man1/llrnn-$t.1"
		assert_success
	done
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
	run grep -x 'prefix=/usr' "$d/usr/lib/pkgconfig/llrnn.pc"
	assert_success
	run make -s -C "$TOP" uninstall PREFIX=/usr DESTDIR="$d" PROGPREFIX=llrnn-
	assert_success
	run find "$d" -type f
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
	run bash -c "cc -o '$BATS_TEST_TMPDIR/v' '$BATS_TEST_TMPDIR/v.c' \$(pkg-config --cflags llrnn) \$(pkg-config --libs llrnn)"
	assert_success
	run "$BATS_TEST_TMPDIR/v"
	assert_success
	assert_output "a 2 3"
}
