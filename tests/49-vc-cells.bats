#!/usr/bin/env bats
# The variable-computation cells of the LSTM language model (train --cell
# vcrnn|vcgru, issue 52): the model file (its cell, sharpness and
# tensors), the schedule of lambda to 1 and the multiply-adds line
# (fewer than the dense cell's under a hard mask and the penalty), score
# (finite, the same at --batch 1 and 8 and on 2 threads) and gen,
# --resume to the byte of the uninterrupted model, two ranks against one
# process, and the bad values; and the dense baselines, train --cell
# gru|rnn (the same layer without a scheduler): their model files, score,
# --resume; the cell in the model's description; score --show-computation,
# llr_model_score_computation (the C API against it, its UTF-8 check)
# and scripts/vc-schedule-plot.  A tiny character-level
# LM: 200 sentences of the UD French slice (150 to train on, 50 to
# validate) cut into characters, spaces as '_'.

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 24 --embed 8 --threads 1 -s 1"

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -200 |
		sed 's/ /_/g; s/./& /g; s/ $//' >"$m/all.tok"
	head -150 "$m/all.tok" >"$m/train.tok"
	tail -50 "$m/all.tok" >"$m/valid.tok"
	featurize --top 100000 "$m/train.tok" >"$m/chars" 2>/dev/null
	train $TINY --cell vcgru --epochs 2 --vc-target 0.4 --vc-penalty 0.01 --valid "$m/valid.tok" -o "$m/vg.bin" "$m/chars" 2>"$m/vg.err"
	train $TINY -q --cell vcrnn --epochs 2 -o "$m/vr.bin" "$m/chars"
	# ten epochs: lambda 1, a hard mask that the penalty makes cut
	train $TINY --cell vcgru --epochs 10 --vc-target 0.2 --vc-penalty 0.5 -o "$m/sharp.bin" "$m/chars" 2>"$m/sharp.err"
	train $TINY --cell gru --epochs 2 --valid "$m/valid.tok" -o "$m/gru.bin" "$m/chars" 2>"$m/gru.err"
	train $TINY -q --cell rnn --epochs 2 -o "$m/rnn.bin" "$m/chars"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "train --cell: the model file (cell, one layer, lambda of the last epoch, vc0 tensors in order)" {
	[ "$(meta "$M/vg.bin" cell)" = vcgru ]
	[ "$(meta "$M/vg.bin" layers)" = 1 ]
	[ "$(meta "$M/vg.bin" vc_lambda)" = 0.200000003 ]
	[ "$(meta "$M/vg.bin" vc_target)" = 0.4 ]
	[ "$(meta "$M/vg.bin" vc_penalty)" = 0.01 ]
	[ "$(meta "$M/vr.bin" cell)" = vcrnn ]
	tar tf "$M/vg.bin" | grep '^params/' >list
	printf 'params/%s.npy\n' embed bos vc0/wx vc0/wh vc0/bx vc0/bh vc0/u vc0/ub out/w out/b | diff - list
	tar tf "$M/vr.bin" | grep '^params/vc0/' >list
	printf 'params/vc0/%s.npy\n' wx wh bx u ub | diff - list
	# an LSTM's file has no cell key, as before
	train $TINY -q --layers 1 --epochs 1 -o l.bin "$M/chars"
	[ -z "$(meta l.bin cell)" ]
	# each epoch's line of multiply-adds, lambda 0.1 then 0.2
	grep -q '^train: vcgru: lambda 0\.1, [0-9]* multiply-adds per position in the recurrent layer, the dense cell.s [0-9]* ([0-9.]*%); [0-9]* more done past the mask$' "$M/vg.err"
	grep -q '^train: vcgru: lambda 0\.2, ' "$M/vg.err"
	grep -q '^train: epoch 2 train .* valid ' "$M/vg.err"
	# lambda 1 after ten epochs; the hard mask computes less than the
	# dense cell (the multiply-adds of all ten epochs' passes under 90%)
	[ "$(meta "$M/sharp.bin" vc_lambda)" = 1 ]
	tail -n 2 "$M/sharp.err" | sed -n 's/^train: vcgru: lambda 1\.0, .*(\([0-9.]*\)%); [0-9]* more done past the mask$/\1/p' >pct
	[ -s pct ]
	awk '{ exit !($1 > 0 && $1 < 90) }' pct
	grep -q '^train: .*/chars: 150 sentences, .*, softmax output, vcgru cell, [0-9]* parameters$' "$M/vg.err"
}

@test "score: finite, the same at --batch 1 and 8 and on 2 threads; gen samples" {
	for m in vg vr sharp; do
		score -q -m "$M/$m.bin" --batch 1 "$M/valid.tok" >b1
		score -q -m "$M/$m.bin" --batch 8 "$M/valid.tok" >b8
		[ "$(wc -l <b1)" -eq 50 ]
		run grep -Ei 'inf|nan' b1
		assert_failure
		cmp b1 b8
		# the streams split across threads (copies of the net)
		score -q -m "$M/$m.bin" --batch 8 --threads 2 "$M/valid.tok" | cmp b1 -
		gen -m "$M/$m.bin" -n 3 -s 1 >g
		[ "$(wc -l <g)" -eq 3 ]
	done
}

@test "train --resume after epoch 1 ends with the model of the uninterrupted run" {
	for cell in vcgru vcrnn; do
		S="$TINY -q --cell $cell --vc-target 0.3 --vc-penalty 0.05"
		train $S --epochs 2 -o full.bin "$M/chars"
		train $S --epochs 1 -o part.bin "$M/chars"
		[ "$(meta part.bin vc_lambda)" = 0.100000001 ]
		train -q --threads 1 --resume part.bin --epochs 2 "$M/chars"
		cmp full.bin part.bin
	done
	run_err 2 '^train: --cell vcrnn: the resumed model.s cell is vcgru' train --resume "$M/vg.bin" --cell vcrnn --epochs 3 -o x.bin "$M/chars"
	run_err 2 '^train: --vc-target 0.5: the resumed model has vc_target=0.4' train --resume "$M/vg.bin" --vc-target 0.5 --epochs 3 -o x.bin "$M/chars"
}

@test "train --cell, --vc-target, --vc-penalty: bad values are usage errors" {
	run_err 2 '^train: --vc-target: 0: the target mean of m_t must be in \(0, 1\]' train --cell vcgru --vc-target 0 -o x.bin "$M/chars"
	run_err 2 '^train: --vc-target: 1.5 out of range' train --cell vcgru --vc-target 1.5 -o x.bin "$M/chars"
	run_err 2 "^train: --cell: 'foo' is not lstm, gru, rnn, vcrnn or vcgru" train --cell foo -o x.bin "$M/chars"
	run_err 2 '^train: --vc-penalty: -1 out of range' train --cell vcrnn --vc-penalty -1 -o x.bin "$M/chars"
	run_err 2 '^train: --cell vcgru: --layers 2: a variable-computation cell has one layer' train --cell vcgru --layers 2 -o x.bin "$M/chars"
	run_err 2 '^train: --vc-target and --vc-penalty need --cell vcrnn or vcgru' train --vc-penalty 0.1 -o x.bin "$M/chars"
	[ ! -e x.bin ]
}

@test "train --distributed --cell vcgru|gru: two ranks follow one process's learning curve" {
	need_mpi
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	for cell in "vcgru --vc-penalty 0.05" gru; do
		S="$TINY -q --cell $cell --batch 8 --epochs 2 --valid $M/valid.tok"
		train $S --log one.tsv -o one.bin "$M/chars"
		mpirun --oversubscribe -np 2 train --distributed $S --log two.tsv -o two.bin "$M/chars"
		[ "$(wc -l <two.tsv)" -eq 4 ] # the header, epochs 0, 1, 2
		# train and valid log-perplexities of epochs 1 and 2 within 1e-4
		paste <(cut -f4,5 one.tsv) <(cut -f4,5 two.tsv) |
			awk -F'\t' 'NR > 2 { for (i = 1; i <= 2; i++) { d = $i - $(i + 2); if (d < 0) d = -d; if (d > 1e-4) exit 1 } }'
		[ "$(meta two.bin cell)" = "${cell%% *}" ]
	done
}

@test "train --cell gru|rnn: the model file (cell, one layer, no scheduler), score, the dense line" {
	[ "$(meta "$M/gru.bin" cell)" = gru ]
	[ "$(meta "$M/gru.bin" layers)" = 1 ]
	[ "$(meta "$M/rnn.bin" cell)" = rnn ]
	for k in vc_lambda vc_target vc_penalty; do
		[ -z "$(meta "$M/gru.bin" $k)" ]
		[ -z "$(meta "$M/rnn.bin" $k)" ]
	done
	tar tf "$M/gru.bin" | grep '^params/' >list
	printf 'params/%s.npy\n' embed bos gru0/wx gru0/wh gru0/bx gru0/bh out/w out/b | diff - list
	tar tf "$M/rnn.bin" | grep '^params/' >list
	printf 'params/%s.npy\n' embed bos rnn0/wx rnn0/wh rnn0/bx out/w out/b | diff - list
	grep -q '^train: .*/chars: 150 sentences, .*, softmax output, gru cell, [0-9]* parameters$' "$M/gru.err"
	grep -q '^train: epoch 2 train .* valid ' "$M/gru.err"
	# no multiply-adds line: there is no scheduler
	run grep -c 'multiply-adds' "$M/gru.err"
	assert_output 0
	for m in gru rnn; do
		score -q -m "$M/$m.bin" --batch 1 "$M/valid.tok" >b1
		[ "$(wc -l <b1)" -eq 50 ]
		run grep -Ei 'inf|nan' b1
		assert_failure
		score -q -m "$M/$m.bin" --batch 8 --threads 2 "$M/valid.tok" | cmp b1 -
		gen -m "$M/$m.bin" -n 3 -s 1 >g
		[ "$(wc -l <g)" -eq 3 ]
	done
	# the GRU learns: its valid log-perplexity falls from epoch 1 to 2
	grep '^train: epoch [12] ' "$M/gru.err" | sed -n 's/.* valid \([0-9.]*\).*/\1/p' >v
	[ "$(wc -l <v)" -eq 2 ]
	awk 'NR == 1 { a = $1 } NR == 2 { exit !($1 < a) }' v
}

@test "train --cell gru|rnn: --resume ends with the uninterrupted model; bad combinations" {
	for cell in gru rnn; do
		train $TINY -q --cell $cell --epochs 2 -o full.bin "$M/chars"
		train $TINY -q --cell $cell --epochs 1 -o part.bin "$M/chars"
		train -q --threads 1 --resume part.bin --epochs 2 "$M/chars"
		cmp full.bin part.bin
	done
	run_err 2 '^train: --cell gru: the resumed model.s cell is rnn' train --resume "$M/rnn.bin" --cell gru --epochs 3 -o x.bin "$M/chars"
	run_err 2 '^train: --vc-target and --vc-penalty: the resumed model.s cell is gru' train --resume "$M/gru.bin" --vc-penalty 0.1 --epochs 3 -o x.bin "$M/chars"
	run_err 2 '^train: --vc-target and --vc-penalty need --cell vcrnn or vcgru' train --cell gru --vc-target 0.3 -o x.bin "$M/chars"
	run_err 2 '^train: --cell rnn: --layers 2: the cell has one layer' train --cell rnn --layers 2 -o x.bin "$M/chars"
	[ ! -e x.bin ]
}

@test "the cell in the model's description: llrnn.Model.info.cell (llr_model_info.cell)" {
	python_module_env || return 1
	run /usr/bin/python3 -c '
import sys, llrnn
for p in sys.argv[1:]:
    with llrnn.Model(p) as m:
        print(m.info.cell, m.info.layers)
' "$M/vg.bin" "$M/vr.bin" "$M/gru.bin" "$M/rnn.bin"
	assert_success
	assert_output "$(printf '%s 1\n' vcgru vcrnn gru rnn)"
}

# score --show-computation's TOKEN=m fields of a line: the tokens read
# (<s>, then the words), one a line.
read_tokens() {
	cut -f4- | tr '\t' '\n' | sed 's/=[^=]*$//'
}

@test "score --show-computation: m_t of every step, after score's columns; the same at --batch 8 on 2 threads; JSON" {
	score -q -m "$M/vg.bin" "$M/valid.tok" >plain
	score -q -m "$M/vg.bin" --show-computation "$M/valid.tok" >comp
	[ "$(wc -l <comp)" -eq 50 ]
	cut -f1-3 comp | cmp plain -
	# one field a step: <s> and the words read, as many as the predictions
	head -n 1 comp | read_tokens >got
	{ echo '<s>'; head -n 1 "$M/valid.tok" | tr ' ' '\n'; } >want
	diff want got
	awk -F '\t' '{ if (NF - 3 != $2) exit 1; for (i = 4; i <= NF; i++) { m = $i; sub(/.*=/, "", m); if (!(m > 0 && m <= 1)) exit 1 } }' comp
	# the scheduler's m_t varies along a sentence
	head -n 1 comp | cut -f4- | tr '\t' '\n' | sed 's/.*=//' | sort -u | wc -l >distinct
	[ "$(cat distinct)" -gt 1 ]
	score -q -m "$M/vg.bin" --show-computation --batch 8 --threads 2 "$M/valid.tok" | cmp comp -
	score -q -m "$M/vr.bin" --show-computation --batch 8 "$M/valid.tok" >vr
	[ "$(wc -l <vr)" -eq 50 ]
	score -q -m "$M/vg.bin" --show-computation --json "$M/valid.tok" >comp.json
	/usr/bin/python3 - comp.json comp <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cols = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
assert len(rows) == len(cols) == 50
for r, c in zip(rows, cols):
    steps = r["computation"]
    assert len(steps) == r["tokens"] and steps[0]["token"] == "<s>", r
    assert ["%s=%.4f" % (s["token"], s["m"]) for s in steps] == c[3:], (r, c)
PY
}

@test "llr_model_score_computation: the C API gives score --show-computation's m_t; invalid UTF-8 is LLR_EUTF8, as llr_model_score" {
	api="$TOP/build/tests/api/score-sentence"
	# the program reads at most 256 tokens a line
	awk 'NF <= 250' "$M/valid.tok" >short.tok
	[ "$(wc -l <short.tok)" -ge 40 ]
	score -q -m "$M/vg.bin" --show-computation short.tok | cut -f3- >want
	"$api" --computation "$M/vg.bin" <short.tok >got 2>/dev/null
	diff want got
	printf 'a \377b c\n' >bad.tok
	run_err 1 '^score-sentence: .*/vg\.bin: sentence 1, word 2: invalid UTF-8 \(byte 0xFF at byte 1\)$' "$api" --computation "$M/vg.bin" <bad.tok
	run_err 1 '^score-sentence: .*/gru\.bin: .*no m_t to show' "$api" --computation "$M/gru.bin" <"$M/valid.tok"
}

@test "score --show-computation: a model without a scheduler is an error; bad combinations are usage errors" {
	train $TINY -q --layers 1 --epochs 1 -o lstm.bin "$M/chars"
	run_err 1 '^score: lstm.bin: the model.s cell is lstm, not a variable-computation cell \(vcrnn, vcgru\): no m_t to show$' \
		score -m lstm.bin --show-computation "$M/valid.tok"
	run_err 1 ': the model.s cell is gru, not a variable-computation cell' score -m "$M/gru.bin" --show-computation "$M/valid.tok"
	train --ngram 2 -o lm.arpa "$M/train.tok" 2>/dev/null
	run_err 1 '^score: lm.arpa: n-gram models have no variable-computation cell \(no m_t to show\)$' \
		score -m lm.arpa --show-computation "$M/valid.tok"
	run_err 2 '^score: --show-computation: not with --per-token' score -m "$M/vg.bin" --show-computation --per-token "$M/valid.tok"
	run_err 2 '^score: --show-computation: not with --format srilm' score -m "$M/vg.bin" --show-computation --format srilm "$M/valid.tok"
}

@test "score(1) EXAMPLES: the computation of a variable-computation model runs as written" {
	cp "$M/vg.bin" vc.llrnn
	cp "$M/valid.tok" chars.tok
	run --separate-stderr bash -c 'score -q -m vc.llrnn --show-computation chars.tok | head -n 1'
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" =~ ^-[0-9]+\.[0-9]{4}$'\t'[0-9]+$'\t'0$'\t'"<s>="(0\.[0-9]{4}|1\.0000)$'\t' ]]
}

@test "vc-schedule-plot: a bar per step of the first line, PNG with gnuplot alone; usage, bad input, a missing gnuplot" {
	printf -- '-12.3456\t4\t0\t<s>=0.5000\tl=0.2500\te=0.9000\t_=1.0000\n-1.0\t1\t0\t<s>=0.1000\n' >comp.tsv
	run "$TOP/scripts/vc-schedule-plot" comp.tsv sched.png
	assert_success
	assert_output ""
	run file -b sched.png
	assert_output --partial 'PNG image data, 520 x 360,'
	run ls
	assert_output "$(printf 'comp.tsv\nsched.png')"
	# as wide as the sentence is long: 22 pixels a step past 16 steps
	{ printf -- '-9.0\t30\t0\t<s>=0.5'; for i in $(seq 29); do printf '\ta=0.5'; done; echo; } >long.tsv
	"$TOP/scripts/vc-schedule-plot" long.tsv long.png
	run file -b long.png
	assert_output --partial 'PNG image data, 820 x 360,'
	# score's own output goes through
	score -q -m "$M/vg.bin" --show-computation "$M/valid.tok" >real.tsv
	"$TOP/scripts/vc-schedule-plot" real.tsv real.png
	[ -s real.png ]
	run "$TOP/scripts/vc-schedule-plot" -h
	assert_success
	assert_output "usage: vc-schedule-plot COMPUTATION.tsv OUT.png"
	run "$TOP/scripts/vc-schedule-plot" comp.tsv
	assert_failure 2
	assert_output "usage: vc-schedule-plot COMPUTATION.tsv OUT.png"
	run_err 1 "^vc-schedule-plot: nope.tsv: No such file or directory$" "$TOP/scripts/vc-schedule-plot" nope.tsv x.png
	score -q -m "$M/vg.bin" --per-token "$M/valid.tok" | head -n 1 | sed 's/\t[^\t]*$//' >short.tsv
	run_err 1 "^vc-schedule-plot: short.tsv: line 1: not score --show-computation's columns" "$TOP/scripts/vc-schedule-plot" short.tsv x.png
	printf -- '-1.0\t1\t0\t<s>=1.5\n' >big.tsv
	run_err 1 "^vc-schedule-plot: big.tsv: line 1: '<s>=1.5': expected token=m, m in \(0, 1\]$" "$TOP/scripts/vc-schedule-plot" big.tsv x.png
	plot_without_gnuplot vc-schedule-plot comp.tsv
}
