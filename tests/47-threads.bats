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

@test "threads: score --threads 2 --batch 8 gives the one-thread scores" {
	train -q --threads 1 --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o m.bin "$D/fz.bin"
	score -q --threads 1 -m m.bin "$D/in.tok" >one.txt
	score -q --threads 2 --batch 8 -m m.bin "$D/in.tok" >two.txt
	score -q --threads 2 --batch 3 --per-token -m m.bin "$D/in.tok" >pt.txt
	[ "$(wc -l <two.txt)" -eq 80 ] && [ "$(wc -l <pt.txt)" -eq 80 ]
	paste one.txt two.txt | awk -F'\t' '{ d = $1 - $4; if (d < 0) d = -d; if (d > 1e-3) { print "line " NR ": " $0; bad = 1 } } END { exit bad }'
}

@test "threads: gen --threads 2 samples" {
	train -q --threads 1 --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o m.bin "$D/fz.bin"
	gen --threads 2 -m m.bin -n 20 -s 5 >g.txt
	[ "$(wc -l <g.txt)" -eq 20 ]
}
