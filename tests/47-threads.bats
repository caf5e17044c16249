#!/usr/bin/env bats
# 47-threads.bats - the threaded paths on their own, small enough to run
# under ThreadSanitizer in CI (.ci/run: make check SANITIZE=thread
# TESTS=tests/47-threads.bats): train --threads 2, score --threads 2 with
# --batch, gen --threads 2.  The results must equal the one-thread runs
# (score's byte for byte).

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

@test "threads: score's output is byte-identical for every --threads and --batch" {
	# score multiplies in one fixed order (llr_blas_set_fixed_order), so a
	# line's scores do not depend on the lines scored with it or on how
	# many threads share the work: LL-RNN, softmax and tree outputs, a
	# character-aware input, per-token and JSON output alike
	train -q --threads 1 --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o ll.bin "$D/fz.bin"
	train -q --threads 1 --output softmax --hidden 16 --embed 16 --layers 2 --epochs 1 -s 3 -o sm.bin "$D/fz.bin"
	train -q --threads 1 --output tree --input chars --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o tr.bin "$D/fz.bin"
	{ cat "$D/in.tok"; echo "zzqxa le 2024"; } >in.tok
	for m in ll sm tr; do
		score -q -m $m.bin --per-token in.tok >$m.one
		[ "$(wc -l <$m.one)" -eq 81 ]
		score -q -m $m.bin --json --per-token in.tok >$m.json
		for t in 1 2; do
			for b in 1 2 3 8 64; do
				score -q --threads $t --batch $b -m $m.bin --per-token in.tok | cmp - $m.one
				score -q --threads $t --batch $b -m $m.bin --json --per-token in.tok | cmp - $m.json
			done
		done
	done
}

@test "threads: gen --threads 2 samples" {
	train -q --threads 1 --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o m.bin "$D/fz.bin"
	gen --threads 2 -m m.bin -n 20 -s 5 >g.txt
	[ "$(wc -l <g.txt)" -eq 20 ]
}

@test "threads: a grammar background (states made as they are reached, behind a mutex) under train, score and gen --threads 2" {
	printf '%s\n' 'root ::= item (" " item)*' 'item ::= [^ ()]+ | "(" (" " item)* " )"' >g.gbnf
	featurize -q --top 30 -l --skip-rejected --background grammar:g.gbnf -o g.fz "$D/in.tok" 2>/dev/null
	train -q --threads 2 --hidden 16 --embed 16 --layers 1 --epochs 1 -s 3 -o g.bin g.fz
	score -q --threads 1 -m g.bin --per-token "$D/in.tok" >one
	[ "$(wc -l <one)" -eq 80 ]
	score -q --threads 2 --batch 8 -m g.bin --per-token "$D/in.tok" | cmp - one
	gen --threads 2 -m g.bin -n 20 -s 5 --max-len 20 >g.txt
	[ "$(wc -l <g.txt)" -eq 20 ]
}
