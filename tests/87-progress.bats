#!/usr/bin/env bats
# 87-progress.bats - the live progress line of score, gen, featurize,
# disc-pairs and train: drawn in place on a terminal (a pseudo-terminal
# from script(1)), never when stderr is a file or standard output is the
# same terminal, never under -q.  Fixtures only.

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local d=$BATS_FILE_TMPDIR
	cat "$FIXTURES/featurize/tiny.tok" "$FIXTURES/tok/fr.golden" >"$d/small.tok"
	cp "$d/small.tok" "$d/big.tok"
	for i in $(seq 12); do cat "$d/big.tok" "$d/big.tok" >"$d/x" && mv "$d/x" "$d/big.tok"; done
	featurize --top 20 --ortho -o "$d/small.fz" "$d/small.tok" 2>/dev/null
	train -q -s 1 --hidden 8 --embed 8 --layers 1 --threads 1 --epochs 1 -o "$d/m.llrnn" "$d/small.fz"
	train -q --ngram 3 --discount-fallback -o "$d/m.arpa" "$d/small.tok"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D=$BATS_FILE_TMPDIR
	M=$D/m.llrnn
}

# on_tty CMD: run the shell command CMD with a pseudo-terminal as its
# standard input, output and error; what the terminal showed is in tty.out.
# script's own input is /dev/null, whatever the suite's is (none in CI).
on_tty() {
	script -qfec "$1" /dev/null </dev/null >tty.out
}

# A reader that waits before taking anything: the tool blocks on a full
# pipe for 0.6 s, so a progress line is due whatever the speed.
SLOW_READER='(sleep 0.6; cat >/dev/null)'
# A writer that sends its file five times with a pause of 0.3 s before
# each copy after the first: a line is due after whichever pause comes
# once the tool reads, even when its start (a sanitizer build on a
# loaded machine) outlasts one pause, as it did in CI.
slow_writer() {
	printf '(cat %s; for i in 1 2 3 4; do sleep 0.3; cat %s; done)' "$1" "$1"
}

@test "progress: score shows lines, tok/s, the part of the file read and an ETA on a terminal, only there" {
	on_tty "score -m $M $D/big.tok | $SLOW_READER"
	grep -Eq $'\r\e\\[Kscore: [0-9]+ lines [0-9]+ tok/s [0-9]+% ETA [0-9hms]+' tty.out
	# the line is erased before the summary
	grep -q $'\r\e\\[Kscore: [0-9]* sentences' tty.out
	# a pipe has no size: no part, no ETA
	on_tty "$(slow_writer "$D/small.tok") | score -m $M -o s.out"
	grep -Eq $'\r\e\\[Kscore: [0-9]+ lines [0-9]+ tok/s\r' tty.out
	! grep -q 'ETA' tty.out
	# nothing under -q, with stderr in a file, or printing to the terminal
	on_tty "score -q -m $M $D/big.tok | $SLOW_READER"
	! grep -q 'tok/s' tty.out
	! grep -q $'\r' tty.out
	on_tty "score -m $M $D/big.tok 2>err | $SLOW_READER"
	! grep -q 'tok/s' tty.out err
	! grep -q $'\r' err
	grep -q '^score: [0-9]* sentences' err
	on_tty "$(slow_writer "$D/small.tok") | score -m $M"
	! grep -q 'tok/s' tty.out
	[ "$(grep -c . tty.out)" -gt 16 ]
}

@test "progress: gen counts sentences against -n; -q silences it" {
	on_tty "gen -m $M -n 20000 --max-len 12 | $SLOW_READER"
	grep -Eq $'\r\e\\[Kgen: [0-9]+ sentences [0-9]+ tok/s [0-9]+% ETA [0-9hms]+' tty.out
	on_tty "gen -q -m $M -n 20000 --max-len 12 | $SLOW_READER"
	[ ! -s tty.out ]
	on_tty "gen -m $M -n 20000 --max-len 12 2>err | $SLOW_READER"
	[ ! -s tty.out ]
	[ ! -s err ]
}

@test "progress: gen with an n-gram model counts sentences against -n, or the prefix file read; -q silences it" {
	on_tty "gen -m $D/m.arpa -n 20000 --max-len 12 | $SLOW_READER"
	grep -Eq $'\r\e\\[Kgen: [0-9]+ sentences [0-9]+ tok/s [0-9]+% ETA [0-9hms]+' tty.out
	head -n 3000 "$D/big.tok" | cut -d' ' -f1-2 >prefixes
	on_tty "gen -m $D/m.arpa --prefix-file prefixes --max-len 5 | $SLOW_READER"
	grep -Eq $'\r\e\\[Kgen: [0-9]+ sentences [0-9]+ tok/s [0-9]+% ETA [0-9hms]+' tty.out
	on_tty "gen -q -m $D/m.arpa -n 20000 --max-len 12 | $SLOW_READER"
	[ ! -s tty.out ]
	on_tty "gen -m $D/m.arpa -n 20000 --max-len 12 2>err | $SLOW_READER"
	[ ! -s tty.out ]
	[ ! -s err ]
}

@test "progress: score and gen with an encoder-decoder, and score --embed, on a terminal; -q silences them" {
	# a copy task: each line its own source
	grep . "$D/small.tok" >pairs
	featurize --source pairs -o ed.fz pairs 2>/dev/null
	train -q --hidden 8 --embed 8 --attn-hidden 8 --threads 1 --epochs 1 -o ed.bin ed.fz
	grep . "$D/big.tok" >bigpairs
	on_tty "score -m ed.bin --source bigpairs bigpairs | $SLOW_READER"
	grep -Eq $'\r\e\\[Kscore: [0-9]+ pairs [0-9]+ tok/s [0-9]+% ETA [0-9hms]+' tty.out
	on_tty "score -q -m ed.bin --source bigpairs bigpairs | $SLOW_READER"
	[ ! -s tty.out ]
	on_tty "$(slow_writer "$D/small.tok") | gen -m ed.bin -o g.out"
	grep -Eq $'\r\e\\[Kgen: [0-9]+ sources [0-9]+ tok/s' tty.out
	on_tty "$(slow_writer "$D/small.tok") | gen -q -m ed.bin -o g.out"
	[ ! -s tty.out ]
	[ -s g.out ]
	on_tty "score --embed -m $M $D/big.tok | $SLOW_READER"
	# (the first draw may come before a byte of the file counts: 0% ETA ?)
	grep -Eq $'\r\e\\[Kscore: [0-9]+ lines [0-9]+ tok/s [0-9]+% ETA ([0-9hms]+|\\?)' tty.out
	on_tty "score -q --embed -m $M $D/big.tok | $SLOW_READER"
	[ ! -s tty.out ]
}

@test "progress: score --task counts the examples predicted of the file's; -q silences it" {
	disc-pairs --format tagged "$BROWN" >pairs.tsv 2>/dev/null
	disc-pairs --format tagged --sentences "$BROWN" 2>/dev/null | grep . >brown.tok
	featurize --top 2000 brown.tok >brown.fz 2>/dev/null
	train -q --task all --encoder cbow --features brown.fz --hidden 8 --embed 8 --threads 1 --epochs 1 -o cbow.bin pairs.tsv
	for i in 1 2 3 4 5 6 7 8; do cat pairs.tsv; done >many.tsv
	on_tty "score --task all -m cbow.bin many.tsv | $SLOW_READER"
	grep -Eq $'\r\e\\[Kscore: [0-9]+ examples [0-9]+ examples/s [0-9]+% ETA ([0-9hms]+|\\?)' tty.out
	grep -q 'score: many.tsv: ORDER: [0-9]* examples, accuracy' tty.out
	on_tty "score -q --task all -m cbow.bin many.tsv | $SLOW_READER"
	[ ! -s tty.out ]
}

@test "progress: featurize and disc-pairs on a terminal; -q silences progress and summary" {
	on_tty "$(slow_writer "$D/small.tok") | featurize --top 5 -o f.fz"
	grep -Eq $'\r\e\\[Kfeaturize: [0-9]+ lines [0-9]+ tok/s' tty.out
	grep -q $'\r\e\\[Kfeaturize: .* types' tty.out
	# --source: the pairs read from the source file, then the target pass
	grep . "$D/small.tok" >pairs
	cat pairs pairs pairs pairs pairs >pairs2 # as many lines as slow_writer sends
	on_tty "$(slow_writer pairs) | featurize --source - -o ed.fz pairs2"
	grep -Eq $'\r\e\\[Kfeaturize: [0-9]+ pairs [0-9]+ tok/s' tty.out
	on_tty "$(slow_writer "$D/small.tok") | featurize -q --top 5 -o f.fz"
	[ ! -s tty.out ]
	on_tty "$(slow_writer "$D/small.tok") | featurize --top 5 -o f.fz 2>err"
	! grep -q $'\r' err
	grep -q '^featurize: .* types' err
	g=$FIXTURES/disc-pairs/garden.txt
	on_tty "$(slow_writer "$g") | disc-pairs -o p.tsv"
	grep -Eq $'\r\e\\[Kdisc-pairs: [0-9]+ lines [0-9]+ lines/s' tty.out
	on_tty "$(slow_writer "$g") | disc-pairs -q -o p.tsv"
	[ ! -s tty.out ]
	[ -s p.tsv ]
}

@test "progress: train draws its step line with the run's ETA in place; -q silences it" {
	on_tty "train -s 1 --hidden 8 --embed 8 --layers 1 --threads 1 --epochs 2 -o t.llrnn $D/small.fz"
	grep -Eq $'\r\e\\[Ktrain: epoch 1 step 1 batch 1/1 loss [0-9.]+ [0-9]+ tok/s ETA 0s run ETA [0-9hms]+' tty.out
	! grep -q 'step 1 .*ETA.*'$'\r\n' tty.out
	on_tty "train -q -s 1 --hidden 8 --embed 8 --layers 1 --threads 1 --epochs 2 -o t.llrnn $D/small.fz"
	[ ! -s tty.out ]
}
