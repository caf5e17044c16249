#!/usr/bin/env bats
# 54-api-docs.bats - the documentation of the C and Python interfaces
# runs as written: README.md's "Using llrnn from C and Python" blocks
# (marked "<!-- api example: ... -->") and llrnn(3)'s EXAMPLES, against a
# library, header, llrnn.pc and Python module installed by make install
# PREFIX=... PYTHONDIR=..., on an n-gram and a tiny LSTM LM of the UD
# French slice; their numbers are score's and gen's.  python3 is Debian's
# (/usr/bin/python3, with python3-numpy), as install-deps installs it.

load test_helper

setup_file() {
	local p="$BATS_FILE_TMPDIR/prefix"
	make -s -C "$TOP" install PREFIX="$p" PYTHONDIR="$p/python" SANITIZE="${SANITIZE:-}" >/dev/null
	ud_slice "$BATS_FILE_TMPDIR"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	p="$BATS_FILE_TMPDIR/prefix"
	cp "$BATS_FILE_TMPDIR/train.tok" .
	# as a user with the library installed there: no LLRNN_LIB
	unset LLRNN_LIB
	export PKG_CONFIG_PATH="$p/lib/pkgconfig" LD_LIBRARY_PATH="$p/lib" PYTHONPATH="$p/python" PYTHONDONTWRITEBYTECODE=1
	sanitized_python
	mkdir -p pybin
	ln -sf /usr/bin/python3 pybin/python3
	PATH="$BATS_TEST_TMPDIR/pybin:$PATH"
}

# The marked blocks of README.md's API section, in order, unindented.
api_blocks() {
	awk '
		/^<!-- api example/ { want = 1; inblock = 0; next }
		want && /^    / { inblock = 1; print substr($0, 5); next }
		want && /^[ \t]*$/ { if (inblock) print ""; next }
		want { want = 0; inblock = 0 }
	' "$TOP/README.md"
}

# man_block N: the Nth literal block of llrnn(3)'s EXAMPLES, mdoc's \e
# escapes undone.
man_block() {
	awk -v n="$1" '
		/^\.Sh / { ex = ($2 == "EXAMPLES") }
		ex && /^\.Bd -literal/ { k++; inb = 1; next }
		ex && /^\.Ed/ { inb = 0; next }
		inb && k == n { print }
	' "$TOP/man/llrnn.3" | sed 's/\\e/\\/g'
}

# score's tokens of "la ville de paris" on lm.arpa, as the C example
# prints them: token, ln p, OOV.
want_tokens() {
	echo "la ville de paris" | score -q -m lm.arpa --per-token | cut -f4- | tr '\t' '\n' |
		sed 's/^\(.*\)=\(.*\)$/\1\t\2\t0/'
}

@test "README: the C and Python blocks of \"Using llrnn from C and Python\" run as written, with score's and gen's numbers" {
	api_blocks >blocks.sh
	[ "$(grep -c '^EOF$' blocks.sh)" -eq 3 ]
	run bash -e blocks.sh
	assert_success
	[ -x first ]
	want_tokens >want
	# the C program's five lines, then the Python block's
	printf '%s\n' "${lines[@]:0:5}" >got
	diff want got
	assert_line --index 5 --regexp '^ngram 3 [0-9]+$'
	assert_line --index 6 "$(echo "la ville de paris" | score -q -m lm.arpa --base 10 | cut -f1) $(echo "la ville de paris" | score -q -m lm.arpa | cut -f1)"
	printf '%s\n' "${lines[@]:7:5}" >got
	diff want got
	# the generation block, on the LSTM LM it trained: gen's sentences, the
	# vectors' shape, gen --show-features' features, score's totals
	[ -s lm.llrnn ]
	gen -q -m lm.llrnn -p "la ville" -n 3 -s 7 --top-k 50 --logprob >want
	printf '%s\n' "${lines[@]:12:3}" >got
	diff want got
	assert_line --index 15 "(2, 16) float32 lm-input-mean"
	assert_line --index 16 "$(gen -q -m lm.llrnn -p ville --show-features --max-len 1 | head -n 1 | cut -f2 | sed 's/=[^ ]*//g')"
	printf '%s\n' "la ville" "le chat dort" | score -q -m lm.llrnn --base 10 | cut -f1 >want
	echo "${lines[17]}" | tr -d '[]' | tr -s ' ' '\n' | grep . | awk '{ printf "%.4f\n", $1 }' | diff want -
	[ "${#lines[@]}" -eq 18 ]
}

@test "llrnn(3): EXAMPLES run as written (the program, its build and run, the Python line); the page is lint-clean" {
	train -q --ngram 3 -o lm.arpa train.tok
	man_block 1 >first.c
	# the README shows the same program
	api_blocks | sed -n '/^cat >first.c/,/^EOF$/p' | sed '1d;$d' | diff - first.c
	man_block 2 | sed -n 's/^\$ //p' >build.sh
	[ "$(wc -l <build.sh)" -eq 2 ]
	run bash -e build.sh
	assert_success
	printf '%s\n' "$output" >got
	want_tokens | diff - got
	# the program's errors: the library's message, status 1
	run_err 1 '^first: none\.arpa: ' ./first none.arpa
	run_err 1 '^first: usage: first MODEL' ./first
	cmd=$(man_block 3 | sed -n 's/^\$ //p')
	[[ "$cmd" == "python3 -c "* ]]
	run bash -c "$cmd"
	assert_success
	[ "$(printf '%.4f' "$output")" = "$(echo "la ville de paris" | score -q -m lm.arpa --base 10 | cut -f1)" ]
	command -v mandoc >/dev/null || skip "mandoc not installed"
	run mandoc -Tlint -W warning "$TOP/man/llrnn.3"
	assert_success
	assert_output ""
}

@test "install: llrnn(3) lands in man3" {
	assert_file_exist "$p/share/man/man3/llrnn.3"
	cmp "$TOP/man/llrnn.3" "$p/share/man/man3/llrnn.3"
}
