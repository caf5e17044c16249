#!/usr/bin/env bats
# 85-tools.bats - what every tool shares: --version, -h, the one message
# for an unknown option or a missing argument, and the one rule by which
# tokens are read (tok(1), "Token lines"), the same in vocab, featurize,
# train --valid, score and gen.  Fixtures only: no shared data.

bats_require_minimum_version 1.5.0
load test_helper

TOOLS="tok vocab featurize train score gen disc-pairs"

@test "tools: every tool prints the version llrnn.pc gives" {
	v=$(sed -n 's/^Version: //p' "$TOP/build/llrnn.pc")
	[ -n "$v" ]
	for t in $TOOLS; do
		run --separate-stderr "$t" --version
		assert_success
		assert_output "$t (llrnn) $v"
		[ -z "$stderr" ]
	done
}

@test "tools: -h prints the usage on stdout" {
	for t in $TOOLS; do
		run --separate-stderr "$t" -h
		assert_success
		assert_line --index 0 --partial "usage: $t"
		run --separate-stderr "$t" --help
		assert_success
		assert_line --index 0 --partial "usage: $t"
	done
}

@test "tools: one message for an unknown option or a missing argument" {
	for t in $TOOLS; do
		run_err 2 "^$t: --bogus: unknown option" "$t" --bogus
		grep -q "usage: $t" "$BATS_TEST_TMPDIR/err.err"
		run_err 2 "^$t: --bogus: unknown option" "$t" --bogus=1
		run_err 2 "^$t: -Z: unknown option" "$t" -Z
		run_err 2 "^$t: -o: missing argument" "$t" -o
		run_err 2 "^$t: --output: missing argument" "$t" --output
	done
	run_err 2 "^vocab: -Z: unknown option" vocab -mZ
}

@test "tools: a tool run under another name speaks under it (messages, usage, progress)" {
	cd "$BATS_TEST_TMPDIR"
	for t in $TOOLS; do
		ln -s "$TOP/bin/$t" "llrnn-$t"
		run_err 2 "^llrnn-$t: --bogus: unknown option" "./llrnn-$t" --bogus
		grep -q "^usage: llrnn-$t " err.err
		run --separate-stderr "./llrnn-$t" -h
		assert_success
		assert_line --index 0 --partial "usage: llrnn-$t "
		# no line of the usage names the tool by its short name
		refute_line --regexp "^(usage:|      ) $t "
		run --separate-stderr "./llrnn-$t" --version
		assert_output --regexp "^llrnn-$t \(llrnn\) "
	done
	run_err 1 '^llrnn-vocab: nonexistent: ' ./llrnn-vocab nonexistent
	# what featurize and train report on stderr
	./llrnn-featurize --top 5 "$FIXTURES/featurize/tiny.tok" >f.llr 2>f.err
	[ -s f.err ]
	run grep -v '^llrnn-featurize: ' f.err
	assert_output ""
	./llrnn-train --hidden 4 --embed 4 --layers 1 --epochs 1 --progress 1 -s 1 -o m.llr f.llr 2>t.err
	grep -q '^llrnn-train: epoch 1 step 1 ' t.err
	run grep '^train: ' t.err
	assert_output ""
}

# A corpus to train on, and validation lines written with TABs and runs
# of separators, and the same lines with single spaces.
corpus() {
	cat "$FIXTURES/featurize/tiny.tok" "$FIXTURES/tok/fr.golden" >train.tok
	printf 'le\tchat  dort .\n\tle lait\tcoule en\t \t1999 \nqui dort\n' >tabs.tok
	printf 'le chat dort .\nle lait coule en 1999\nqui dort\n' >spaces.tok
}

@test "tokens: train --valid and score read a TAB-separated line alike" {
	cd "$BATS_TEST_TMPDIR"
	corpus
	featurize --top 20 --ortho train.tok >train.fz 2>/dev/null
	for v in tabs spaces; do
		train -q -s 1 --hidden 8 --embed 8 --layers 1 --threads 1 --epochs 0 --valid $v.tok -o $v.model train.fz
	done
	# the same tokens, hence the same validation log-perplexity
	vt=$(meta tabs.model valid_logppl)
	[ -n "$vt" ]
	[ "$vt" = "$(meta spaces.model valid_logppl)" ]
	# score: the same tokens, one by one, with either file
	score -m tabs.model --per-token tabs.tok >tabs.scores 2>tabs.sum
	score -m tabs.model --per-token spaces.tok >spaces.scores 2>/dev/null
	run diff tabs.scores spaces.scores
	assert_success
	run cut -f2 tabs.scores
	assert_output $'5\n6\n3'
	run cut -f4- tabs.scores
	assert_line --index 0 --regexp $'^le=-[0-9.]+\tchat=-[0-9.]+\tdort=-[0-9.]+\t\\.=-[0-9.]+\t</s>=-[0-9.]+$'
	# and score's log-perplexity is train's
	run awk -v v="$vt" '/logprob \(base e\)/ { lp = $5; n = $7 } END { d = -lp / n - v; exit !(n == 14 && d < 1e-3 && d > -1e-3) }' tabs.sum
	assert_success
}

@test "tokens: vocab, featurize and gen read TABs as separators too" {
	cd "$BATS_TEST_TMPDIR"
	corpus
	run diff <(vocab tabs.tok) <(vocab spaces.tok)
	assert_success
	# featurize takes one TAB between tokens (canonical: no empty token)
	printf 'le\tchat dort .\nqui\tdort\n' >one-tab.tok
	printf 'le chat dort .\nqui dort\n' >one-space.tok
	featurize --top 5 one-tab.tok >tab.fz 2>/dev/null
	featurize --top 5 one-space.tok >space.fz 2>/dev/null
	cmp tab.fz space.fz
	run_err 1 "tabs.tok:1: empty token" featurize tabs.tok
	featurize --top 20 train.tok >train.fz 2>/dev/null
	train -q -s 1 --hidden 8 --embed 8 --layers 1 --threads 1 --epochs 1 -o m train.fz
	run diff <(gen -m m -s 2 -n 3 -p $'le\tchat' --logprob) <(gen -m m -s 2 -n 3 -p 'le chat' --logprob)
	assert_success
}

# Every writer puts a regular file in place through a temporary and a
# rename; a special file is written in place instead: renaming over
# /dev/null would replace the device (as root) with a file.  A FIFO stands
# for /dev/null here, so a regression cannot damage the machine.
@test "tools: -o a FIFO writes into it and leaves it a FIFO (text, tensor and ARPA writers)" {
	cd "$BATS_TEST_TMPDIR"
	corpus
	mkfifo out.fifo fifo.arpa
	check_fifo() { # FIFO OUT CMD...: CMD -o FIFO with a reader, compared with CMD -o OUT
		local fifo=$1 want=$2
		shift 2
		timeout 20 cat "$fifo" >got &
		local reader=$!
		"$@" -o "$fifo" 2>/dev/null
		wait $reader
		[ -p "$fifo" ]
		"$@" -o "$want" 2>/dev/null
		cmp got "$want"
	}
	tok --from tagged -l "$BROWN" 2>/dev/null | head -n 300 >brown.tok
	check_fifo out.fifo tok.out tok spaces.tok
	check_fifo out.fifo stream.fz featurize --top 5 spaces.tok
	check_fifo fifo.arpa lm.arpa train -q --ngram 2 brown.tok
	check_fifo out.fifo lm.bin train -q --ngram 2 brown.tok
	# and no temporary was left beside it
	run bash -c 'ls | grep tmp'
	assert_failure
}
