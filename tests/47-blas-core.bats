#!/usr/bin/env bats
# 47-blas-core.bats - the tools run OpenBLAS's tuned kernels on a CPU the
# system's OpenBLAS does not know (tools/cli.c, llr_blas_better_core):
# they set OPENBLAS_CORETYPE and execute themselves again, once, with
# their arguments, input and exit status unchanged; a kernel choice the
# user made stands.

load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# the cores OpenBLAS reports loading, one line each (OPENBLAS_VERBOSE=2)
cores() {
	OPENBLAS_VERBOSE=2 "$@" 2>&1 >/dev/null | sed -n 's/^Core: //p'
}

@test "blas core: tuned kernels on a CPU with AVX2 and FMA, whatever OpenBLAS knows of it" {
	grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo || skip "this CPU has no AVX2 and FMA"
	run cores env -u OPENBLAS_CORETYPE score -h
	assert_success
	[ -n "$output" ]
	[ "${lines[-1]}" != Prescott ]
	# at most one second start
	[ "${#lines[@]}" -le 2 ]
}

@test "blas core: the user's OPENBLAS_CORETYPE stands (one start)" {
	run cores env OPENBLAS_CORETYPE=Prescott score -h
	assert_success
	assert_output Prescott
}

@test "blas core: arguments, standard input and exit status survive the second start" {
	printf 'Le chat dort.\nIl pleut.\n' >in.txt
	env OPENBLAS_CORETYPE=Prescott tok --lang fr -l <in.txt >want.tok
	env -u OPENBLAS_CORETYPE tok --lang fr -l <in.txt >got.tok
	cmp want.tok got.tok
	[ -s got.tok ]
	run env -u OPENBLAS_CORETYPE tok --no-such-option
	local status_got=$status
	run env OPENBLAS_CORETYPE=Prescott tok --no-such-option
	[ "$status" -eq "$status_got" ]
	[ "$status" -ne 0 ]
}
