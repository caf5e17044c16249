#!/usr/bin/env bats
# 53-shared-lib.bats - the shared library (issue 48): build/libllrnn.so
# with the soname libllrnn.so.MAJOR (LLR_VERSION), exporting exactly the
# functions lib/llrnn.h declares, all llr_; and a C++ program
# (tests/api/score-sentence-cxx.cc, g++ through the header's extern "C")
# linked against it scores as score(1) does, OOVs included, for an LL-RNN,
# an open-vocabulary LL-RNN and an ARPA n-gram (tiny models on the UD
# French slice, as tests/52-model-api.bats).

load test_helper


setup_file() {
	api_models "$BATS_FILE_TMPDIR"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	SO="$TOP/build/libllrnn.so"
	CXXAPI="$TOP/build/tests/api/score-sentence-cxx"
	for f in "$SO" "$CXXAPI"; do
		if [ ! -e "$f" ]; then
			echo "${f#"$TOP"/} not built (make builds it)" >&2
			return 1
		fi
	done
	# zorglub and 4817 are in no vocabulary here
	printf '%s\n' "le zorglub mange 4817 pommes ." "la ville de paris" >in.tok
}

@test "libllrnn.so: soname libllrnn.so.MAJOR of LLR_VERSION, the links beside it" {
	v=$(sed -n 's/^#define LLR_VERSION "\(.*\)"$/\1/p' "$TOP/lib/llrnn.h")
	[ -n "$v" ]
	run readelf -d "$SO"
	assert_success
	assert_output --partial "Library soname: [libllrnn.so.${v%%.*}]"
	[ "$(readlink "$SO")" = "libllrnn.so.${v%%.*}" ]
	[ "$(readlink "$TOP/build/libllrnn.so.${v%%.*}")" = "libllrnn.so.$v" ]
	assert_file_exist "$TOP/build/libllrnn.so.$v"
	assert_file_exist "$TOP/build/libllrnn.a"
}

@test "libllrnn.so: it exports only llr_ functions, each declared in lib/llrnn.h, and the model interface is among them" {
	nm -D --defined-only "$SO" | awk '{ print $NF }' | sort >exported
	[ "$(wc -l <exported)" -gt 100 ]
	run grep -v '^llr_' exported
	assert_failure
	assert_output ""
	grep -o 'llr_[A-Za-z0-9_]*' "$TOP/lib/llrnn.h" | sort -u >declared
	run comm -23 exported declared
	assert_output ""
	for f in llr_model_open llr_model_describe llr_model_score llr_model_close llr_model_set_threads \
		llr_model_opts_default llr_strerror llr_err_set llr_vocab_new; do
		grep -qx "$f" exported
	done
	# the library's internals (lib/internal.h, lib/nn/nn.h) stay inside
	nm --defined-only -g "$TOP/build/libllrnn.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >static
	[ "$(comm -23 static exported | wc -l)" -gt 0 ]
	run grep -x 'llr_lstm_forward\|llr_alloc_large\|llr_attn_forward' exported
	assert_failure
}

# score's per-token fields from the third on (OOVs, word=logp) against the
# C++ program's.
same_as_score() {
	score -q -m "$1" --per-token in.tok | cut -f3- >want
	"$CXXAPI" "$1" <in.tok >got
	diff want got
	[ "$(head -1 got | cut -f1)" -ge 1 ]
}

@test "C++ against libllrnn.so: an LL-RNN, unseen words included, as score" {
	run readelf -d "$CXXAPI"
	assert_output --partial 'Shared library: [libllrnn.so.'
	same_as_score "$D/ll.llrnn"
}

@test "C++ against libllrnn.so: an open-vocabulary LL-RNN, as score" {
	same_as_score "$D/open.llrnn"
}

@test "C++ against libllrnn.so: an ARPA n-gram, as score" {
	same_as_score "$D/lm.arpa"
}

@test "C++ against libllrnn.so: a file that is no model, the library's message, status 1" {
	echo "not a model" >bad.llrnn
	run_err 1 '^score-sentence-cxx: bad\.llrnn: ' "$CXXAPI" bad.llrnn
}

@test "C++: lib/llrnn.h compiles as C++ with every warning, and its functions link with C names" {
	printf '#include "llrnn.h"\nint main() { llr_err e = {}; return llr_model_open("none", nullptr, nullptr, &e) == LLR_OK; }\n' >h.cc
	run g++ -std=c++11 -Wall -Wextra -pedantic -Werror -I"$TOP/lib" -c -o h.o h.cc
	assert_success
	assert_output ""
	run nm -u h.o
	assert_output --partial 'U llr_model_open'
}
