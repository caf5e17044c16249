#!/usr/bin/env bats
# 90-pipelines.bats - pipelines/ud-french.mk end to end on a tiny slice of
# UD French (the first sentences of each file, tiny network, one epoch, two
# values of M), and its helper scripts (scripts/ud-*).  Guards the
# pipeline's wiring and outputs, not the figures of the full run.

load test_helper

MK="$TOP/pipelines/ud-french.mk"

# A tiny copy of the UD folder in the test's temporary directory (the same
# file names, N sentences each) and the make command line on it.
tiny_data() {
	local n=${1:-25} f
	mkdir -p "$BATS_TEST_TMPDIR/ud"
	for f in "$DATA"/ud-french/*.conllu.gz; do
		zcat "$f" | awk -v n="$n" 'BEGIN { RS = ""; ORS = "\n\n" } NR <= n' \
			> "$BATS_TEST_TMPDIR/ud/$(basename "$f" .gz)"
	done
}
tiny_make() {
	make -C "$TOP" -f "$MK" DATA="$BATS_TEST_TMPDIR/ud" \
		WORK="$BATS_TEST_TMPDIR/work" RESULTS="$BATS_TEST_TMPDIR/res" \
		MS="5 20" EPOCHS=1 EMBED=8 HIDDEN=8 BATCH=8 "$@"
}

@test "ud-french.mk: tiny run writes the table, the report and the plots" {
	need_data ud-french
	tiny_data 20
	run tiny_make -j2
	assert_success
	W="$BATS_TEST_TMPDIR/work" R="$BATS_TEST_TMPDIR/res"
	assert_file_exist "$R/ud-french.tsv"
	assert_file_exist "$R/ud-french.md"
	# Header plus the RNN and two M values in two settings.
	run head -n 1 "$R/ud-french.tsv"
	assert_output "$(printf 'setting\tmodel\tM\tV\tF\tepochs\tbest_epoch\tstopped\ttrain\tvalid\ttest\tref_epochs\tref_valid\tref_test')"
	run cut -f 1-3 "$R/ud-french.tsv"
	assert_output "$(printf 'setting\tmodel\tM\nboth\trnn\t-\npaper\tll-rnn\t5\npaper\tll-rnn\t20\nclean\tll-rnn\t5\nclean\tll-rnn\t20')"
	# One vocabulary (train+valid+test types, </s>, <unk>) for every model.
	types=$(cat "$W/train.tok" "$W/valid.tok" "$W/test.tok" | tr ' ' '\n' | sort -u | wc -l)
	run cut -f 4 "$R/ud-french.tsv"
	assert_output "$(printf 'V\n%s\n%s\n%s\n%s\n%s' $((types + 2)) $((types + 2)) $((types + 2)) $((types + 2)) $((types + 2)))"
	# F = M identities + TOP:</s> + TOP:@notTop + the same tags for both M.
	run awk -F'\t' 'NR > 2 { print $5 - $3 }' "$R/ud-french.tsv"
	[ "$(printf '%s\n' "$output" | sort -u | wc -l)" -eq 1 ]
	# Every log-perplexity is a positive number, one epoch each.
	run awk -F'\t' 'NR > 1 && !($9 > 0 && $10 > 0 && $11 > 0 && $6 == 1) { print "bad: " $0 }' "$R/ud-french.tsv"
	assert_output ""
	# The report has a Table-4 block per setting and the paper's figures.
	run grep -c '^| LL-RNN | 20 |' "$R/ud-french.md"
	assert_output 2
	run grep -c '6.07 | 5.08' "$R/ud-french.md"
	assert_output 1
	if command -v gnuplot >/dev/null; then
		for p in test-vs-m valid-curves; do
			run file -b "$R/ud-french-$p.png"
			assert_output --partial 'PNG image data'
		done
	fi
	# The learning curves are kept with the results.
	for b in rnn paper-ll-5 paper-ll-20 clean-ll-5 clean-ll-20; do
		run cut -f 1 "$R/ud-french-logs/$b.tsv"
		assert_output "$(printf 'epoch\n0\n1')"
	done
	# Nothing left to do afterwards.
	run tiny_make -q
	assert_success
}

@test "ud-french.mk: log-perplexity is score's total over words and </s>, and the paper background sums to 1" {
	need_data ud-french
	tiny_data 20
	run tiny_make SETTINGS=paper MS=5 models
	assert_success
	W="$BATS_TEST_TMPDIR/work"
	# score's summary gives the perplexity over words + </s>; its log is
	# the valid figure of the pipeline's .eval (to the 4 printed decimals).
	score -m "$W/paper/ll-5.model" "$W/valid.tok" >/dev/null 2>"$BATS_TEST_TMPDIR/sum"
	ppl=$(sed -n 's/.*perplexity (words + <\/s>)[^0-9]*\([0-9.][0-9.]*\).*/\1/p' "$BATS_TEST_TMPDIR/sum")
	[ -n "$ppl" ]
	lp=$(awk '$1 == "valid" { print $2 }' "$W/paper/ll-5.eval")
	awk -v p="$ppl" -v l="$lp" 'BEGIN { d = log(p) - l; exit !(d < 0.002 && d > -0.002) }'
	# The background lists every type of the three splits, </s> and <unk>.
	run awk -F'\t' '{ s += $2 } END { printf "%.6f %d\n", s, NR }' "$W/background-paper.tsv"
	types=$(cat "$W/train.tok" "$W/valid.tok" "$W/test.tok" | tr ' ' '\n' | sort -u | wc -l)
	assert_output "1.000000 $((types + 2))"
}

@test "ud-french.mk: a changed background retrains only the paper models" {
	need_data ud-french
	tiny_data 15
	run tiny_make MS=5 models
	assert_success
	touch "$BATS_TEST_TMPDIR/work/background-paper.tsv"
	run tiny_make -n MS=5 models
	assert_success
	assert_output --partial "paper/ll-5.model"
	refute_output --partial "clean/ll-5.model"
	refute_output --partial "rnn.model"
	refute_output --partial "bin/tok "
}

@test "ud-french.mk: runs cut by MAXTIME are continued by make resume" {
	need_data ud-french
	tiny_data 15
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 MAXTIME=0.001 models
	assert_success
	W="$BATS_TEST_TMPDIR/work"
	run cut -f 6-8 "$W/rnn.row"
	assert_output "$(printf '0\t0\tmax-time')"
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 resume
	assert_success
	assert_output --partial "resuming $W/rnn.model"
	assert_output --partial "resuming $W/clean/ll-5.model"
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 models
	assert_success
	run cut -f 6,8 "$W/rnn.row" "$W/clean/ll-5.row"
	assert_output "$(printf '2\tepochs\n2\tepochs')"
	# The curve holds every epoch once, across both runs.
	run cut -f 1 "$W/rnn.log.tsv"
	assert_output "$(printf 'epoch\n0\n1\n2')"
	# Nothing capped is left: resume is then a no-op.
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 resume
	assert_success
	refute_output --partial resuming
}

@test "ud-french.mk: a missing UD file stops the pipeline" {
	need_data ud-french
	tiny_data 5
	rm "$BATS_TEST_TMPDIR/ud/fr_partut-ud-dev.conllu"
	run tiny_make MS=5 models
	assert_failure
	assert_output --partial "fr_partut-ud-dev"
	assert_file_not_exist "$BATS_TEST_TMPDIR/work/valid.tok"
}

@test "ud-background: counts to probabilities, <unk> added, bad lines refused" {
	printf 'de\t3\n</s>\t1\n' >"$BATS_TEST_TMPDIR/c.tsv"
	run "$TOP/scripts/ud-background" -v unk=1e-6 "$BATS_TEST_TMPDIR/c.tsv"
	assert_success
	assert_output "$(printf 'de\t0.75\n</s>\t0.25\n<unk>\t1e-06')"
	printf 'de\tx\n' >"$BATS_TEST_TMPDIR/bad.tsv"
	run_err 1 'bad.tsv:1: not a token<TAB>count line' "$TOP/scripts/ud-background" "$BATS_TEST_TMPDIR/bad.tsv"
}

@test "ud-row, ud-table, ud-plots: usage and data errors" {
	run_err 2 'usage: ud-row' "$TOP/scripts/ud-row"
	printf 'x\n' >"$BATS_TEST_TMPDIR/row"
	run_err 1 'expected 11 columns' "$TOP/scripts/ud-table" --work "$BATS_TEST_TMPDIR" \
		--tsv "$BATS_TEST_TMPDIR/t.tsv" --md "$BATS_TEST_TMPDIR/t.md" "$BATS_TEST_TMPDIR/row"
	assert_file_not_exist "$BATS_TEST_TMPDIR/t.tsv"
	run_err 2 'usage: ud-plots' "$TOP/scripts/ud-plots" bogus
	run_err 1 'cannot read' "$TOP/scripts/ud-plots" test-vs-m "$BATS_TEST_TMPDIR/none.tsv" "$BATS_TEST_TMPDIR/x.png"
}
