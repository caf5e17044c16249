#!/usr/bin/env bats
# 47-threads.bats - the threaded paths on their own, small enough to run
# under ThreadSanitizer in CI (.ci/run: make check SANITIZE=thread
# TESTS=tests/47-threads.bats): train --threads 2, score --threads 2 with
# --batch, gen --threads 2.  The results must equal the one-thread runs.

load test_helper

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -n 80 >"$d/in.tok"
	featurize --top 30 -l --suffix 2 "$d/in.tok" >"$d/fz.bin" 2>/dev/null
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

@test "threads: train --threads 2 learns, and its model scores" {
	run train --threads 2 --hidden 16 --embed 16 --layers 2 --epochs 2 -s 3 -o m2.bin "$D/fz.bin"
	assert_success
	assert_output --regexp "epoch 2 train [0-9.]+"
	score -q -m m2.bin "$D/in.tok" >s.txt
	[ "$(wc -l <s.txt)" -eq 80 ]
}

# Every number of two score outputs (line totals, per-token "w=logp")
# the same up to one unit of the printed fourth decimal plus float
# rounding (2e-6 relative): a stream scored in a group of other lines, or
# alone, runs the same kernels on other row counts, which moves a
# log-probability by a few float ulps (at most 4.5e-6 on the 100 UD
# French test lines of a 32-unit model, printed with nine decimals),
# never by 1e-4.
same_numbers() {
	paste "$1" "$2" | awk -F'\t' '{ n = NF / 2; for (i = 1; i <= n; i++) {
		a = $i; b = $(i + n); sub(/.*=/, "", a); sub(/.*=/, "", b); d = a - b; if (d < 0) d = -d;
		m = a < 0 ? -a : a; if (d > 1e-4 + 2e-6 * m + 1e-9) { print "line " NR " field " i ": " $i " " $(i + n); bad = 1 } } }
		END { exit bad }'
}

@test "threads: score --threads 2 --batch 8 gives the one-thread scores" {
	train -q --threads 1 --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o m.bin "$D/fz.bin"
	score -q --threads 1 -m m.bin "$D/in.tok" >one.txt
	score -q --threads 2 --batch 8 -m m.bin "$D/in.tok" >two.txt
	score -q --threads 1 --per-token -m m.bin "$D/in.tok" >pt1.txt
	score -q --threads 2 --batch 3 --per-token -m m.bin "$D/in.tok" >pt.txt
	[ "$(wc -l <two.txt)" -eq 80 ] && [ "$(wc -l <pt.txt)" -eq 80 ]
	same_numbers one.txt two.txt
	same_numbers pt1.txt pt.txt
	# and it can fail: a change of 2e-4 in one token is caught
	awk -F'\t' -v OFS='\t' 'NR == 5 { t = $5; sub(/=[^=]*$/, "", t); v = substr($5, length(t) + 2); $5 = t "=" sprintf("%.4f", v - 0.0002) } 1' pt.txt >changed
	! cmp -s pt.txt changed
	run same_numbers pt1.txt changed
	assert_failure
}

@test "threads: gen --threads 2 samples" {
	train -q --threads 1 --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o m.bin "$D/fz.bin"
	gen --threads 2 -m m.bin -n 20 -s 5 >g.txt
	[ "$(wc -l <g.txt)" -eq 20 ]
}
