#!/usr/bin/env bats
# 90-pipelines.bats - pipelines/ud-french.mk end to end on a tiny cut of the
# UD French slice of fixtures/ (the first sentences of each file, tiny
# network, one epoch, two values of M), and its helper scripts (scripts/ud-*); the reference's
# wiring (make reference, llrnn's counterparts at equal settings) by dry
# runs and ud-table on hand-written files, never running torch.  Guards the
# pipeline's wiring and outputs, not the figures of the full run.

load test_helper

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
}

MK="$TOP/pipelines/ud-french.mk"

# A tiny copy of the UD French slice in the test's temporary directory (the
# same file names, N sentences each) and the make command line on it.
tiny_data() {
	local n=${1:-25} f
	mkdir -p "$BATS_TEST_TMPDIR/ud"
	for f in "$UD"/*.conllu.gz; do
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
	tiny_data 20
	run tiny_make -j2
	assert_success
	W="$BATS_TEST_TMPDIR/work" R="$BATS_TEST_TMPDIR/res"
	assert_file_exist "$R/ud-french.tsv"
	assert_file_exist "$R/ud-french.md"
	# Header plus, in each setting, the RNN and two M values.
	run head -n 1 "$R/ud-french.tsv"
	assert_output "$(printf 'setting\tmodel\tM\tV\tF\tepochs\tbest_epoch\tstopped\ttrain\tvalid\ttest\tref_epochs\tref_valid\tref_test\tref_best_epoch\tref_ours_init\tref_ours_epochs\tref_ours_best_epoch\tref_ours_valid\tref_ours_test')"
	run cut -f 1-3 "$R/ud-french.tsv"
	assert_output "$(printf 'setting\tmodel\tM\npaper\trnn\t-\npaper\tll-rnn\t5\npaper\tll-rnn\t20\nclean\trnn\t-\nclean\tll-rnn\t5\nclean\tll-rnn\t20')"
	# The vocabulary: paper, train+valid+test types; clean, train+valid
	# types (nothing from test); </s> and <unk> in both.
	all=$(cat "$W/train.tok" "$W/valid.tok" "$W/test.tok" | tr ' ' '\n' | sort -u | wc -l)
	tv=$(cat "$W/train.tok" "$W/valid.tok" | tr ' ' '\n' | sort -u | wc -l)
	[ "$tv" -lt "$all" ]
	run cut -f 4 "$R/ud-french.tsv"
	assert_output "$(printf 'V\n%s\n%s\n%s\n%s\n%s\n%s' $((all + 2)) $((all + 2)) $((all + 2)) $((tv + 2)) $((tv + 2)) $((tv + 2)))"
	# F = M identities + TOP:</s> + TOP:@notTop + the same tags for both M
	# of a setting; the clean setting's tags, from train and valid only,
	# are fewer.
	run awk -F'\t' '$2 == "ll-rnn" { print $1, $5 - $3 }' "$R/ud-french.tsv"
	[ "$(printf '%s\n' "$output" | sort -u | wc -l)" -eq 2 ]
	paper_t=$(awk -F'\t' '$1 == "paper" && $2 == "ll-rnn" { print $5 - $3; exit }' "$R/ud-french.tsv")
	clean_t=$(awk -F'\t' '$1 == "clean" && $2 == "ll-rnn" { print $5 - $3; exit }' "$R/ud-french.tsv")
	[ "$clean_t" -lt "$paper_t" ]
	# The clean models count the test words outside their vocabulary as
	# OOVs, in their kept per-token test output.
	oovs=$(tr ' ' '\n' <"$W/test.tok" | grep -cvxFf <(cat "$W/train.tok" "$W/valid.tok" | tr ' ' '\n'))
	[ "$oovs" -gt 0 ]
	got=$(xz -dc "$R/outputs/ud-french/clean-ll-5.test.tsv.xz" | awk -F'\t' '{ o += $3 } END { print o }')
	assert_equal "$got" "$oovs"
	got=$(xz -dc "$R/outputs/ud-french/rnn.test.tsv.xz" | awk -F'\t' '{ o += $3 } END { print o }')
	assert_equal "$got" 0
	# results-check recomputes each of the six test figures from the
	# outputs, and catches a changed one.
	printf 'table\tstatus\ttest_columns\tnote\nud-french\tchecked\ttest\t\n' >"$R/outputs/TABLES.tsv"
	run "$TOP/scripts/results-check" --results "$R"
	assert_success
	assert_line 'results-check: 6 figures checked, 0 tables pending'
	cp -p "$R/ud-french.tsv" "$BATS_TEST_TMPDIR/keep.tsv"
	awk -F'\t' -v OFS='\t' '$1 == "clean" && $2 == "rnn" { $11 = sprintf("%.4f", $11 + 0.001) } 1' \
		"$BATS_TEST_TMPDIR/keep.tsv" >"$R/ud-french.tsv"
	run "$TOP/scripts/results-check" --results "$R"
	assert_failure 1
	assert_output --partial "row 'setting=clean,model=rnn,M=-'"
	cp -p "$BATS_TEST_TMPDIR/keep.tsv" "$R/ud-french.tsv"
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
	for b in rnn paper-ll-5 paper-ll-20 clean-rnn clean-ll-5 clean-ll-20; do
		run cut -f 1 "$R/ud-french-logs/$b.tsv"
		assert_output "$(printf 'epoch\n0\n1')"
	done
	# Nothing left to do afterwards.
	run tiny_make -q
	assert_success
}

@test "ud-french.mk: log-perplexity is score's total over words and </s>, and the paper background sums to 1" {
	tiny_data 20
	run tiny_make SETTINGS=paper MS=5 models
	assert_success
	W="$BATS_TEST_TMPDIR/work"
	# score's summary gives the perplexity over words + </s>; its log is
	# the valid figure of the pipeline's .eval (to the 4 printed decimals).
	score -m "$W/paper/ll-5.model" "$W/valid.tok" >/dev/null 2>"$BATS_TEST_TMPDIR/sum"
	ppl=$(sed -n 's/.*perplexity (words + <\/s>, OOVs [^)]*): \([0-9.][0-9.]*\).*/\1/p' "$BATS_TEST_TMPDIR/sum")
	[ -n "$ppl" ]
	lp=$(awk '$1 == "valid" { print $2 }' "$W/paper/ll-5.eval")
	awk -v p="$ppl" -v l="$lp" 'BEGIN { d = log(p) - l; exit !(d < 0.002 && d > -0.002) }'
	# The background lists every type of the three splits, </s> and <unk>.
	run awk -F'\t' '{ s += $2 } END { printf "%.6f %d\n", s, NR }' "$W/background-paper.tsv"
	types=$(cat "$W/train.tok" "$W/valid.tok" "$W/test.tok" | tr ' ' '\n' | sort -u | wc -l)
	assert_output "1.000000 $((types + 2))"
}

@test "ud-french.mk: a changed background retrains only the paper models" {
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
	tiny_data 15
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 MAXTIME=0.001 models
	assert_success
	W="$BATS_TEST_TMPDIR/work"
	run cut -f 6-8 "$W/clean/rnn.row"
	assert_output "$(printf '0\t0\tmax-time')"
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 resume
	assert_success
	assert_output --partial "resuming $W/clean/rnn.model"
	assert_output --partial "resuming $W/clean/ll-5.model"
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 models
	assert_success
	run cut -f 6,8 "$W/clean/rnn.row" "$W/clean/ll-5.row"
	assert_output "$(printf '2\tepochs\n2\tepochs')"
	# The curve holds every epoch once, across both runs.
	run cut -f 1 "$W/clean/rnn.log.tsv"
	assert_output "$(printf 'epoch\n0\n1\n2')"
	# Nothing capped is left: resume is then a no-op.
	run tiny_make SETTINGS=clean MS=5 EPOCHS=2 resume
	assert_success
	refute_output --partial resuming
}

@test "ud-french.mk: make headline trains every seed of both settings, keeps the test outputs, and results-check recomputes the table" {
	tiny_data 20
	run tiny_make HEADLINE_M=5 HEADLINE_SEEDS="1 2" headline -j2
	assert_success
	W="$BATS_TEST_TMPDIR/work" R="$BATS_TEST_TMPDIR/res"
	run cut -f 1-3,6 "$R/ud-french-headline.tsv"
	assert_output "$(printf 'setting\tmodel\tM\tseeds\npaper\trnn\t-\t1,2\npaper\tll-rnn\t5\t1,2\nclean\trnn\t-\t1,2\nclean\tll-rnn\t5\t1,2')"
	# The seeds differ: two distinct models per row.
	! cmp -s "$W/headline/clean/ll-5-s1.model" "$W/headline/clean/ll-5-s2.model"
	# clean: no test word in the vocabulary (train+valid types, </s>, <unk>),
	# and test words outside it counted as OOVs; paper: every test word in.
	types=$(cat "$W/train.tok" "$W/valid.tok" | tr ' ' '\n' | sort -u | wc -l)
	run awk -F'\t' '$1 == "clean" { print $4 }' "$R/ud-french-headline.tsv"
	assert_output "$(printf '%s\n%s' $((types + 2)) $((types + 2)))"
	oovs=$(tr ' ' '\n' <"$W/test.tok" | grep -cvxFf <(cat "$W/train.tok" "$W/valid.tok" | tr ' ' '\n'))
	got=$(xz -dc "$R/outputs/ud-french-headline/clean-rnn-s1.test.tsv.xz" | awk -F'\t' '{ o += $3 } END { print o }')
	assert_equal "$got" "$oovs"
	run awk -F'\t' '$1 == "paper" { print $13 }' "$R/ud-french-headline.tsv"
	assert_output "$(printf '0.00\n0.00')"
	# The clean LL-RNN's tags come from train and valid only: fewer features
	# than the paper's, whose tags come from all eight files.
	run awk -F'\t' '$2 == "ll-rnn" { print $1, $5 }' "$R/ud-french-headline.tsv"
	paper_f=$(awk -F'\t' '$1 == "paper" && $2 == "ll-rnn" { print $5 }' "$R/ud-french-headline.tsv")
	clean_f=$(awk -F'\t' '$1 == "clean" && $2 == "ll-rnn" { print $5 }' "$R/ud-french-headline.tsv")
	[ "$clean_f" -lt "$paper_f" ]
	# A test mean is score's total over the kept outputs, by hand.
	want=$(for s in 1 2; do xz -dc "$R/outputs/ud-french-headline/paper-ll-5-s$s.test.tsv.xz" |
		awk -F'\t' '{ l += $1; n += $2 } END { printf "%.10f\n", -l / n }'; done |
		awk '{ t += $1 } END { printf "%.4f", t / 2 }')
	run awk -F'\t' '$1 == "paper" && $2 == "ll-rnn" { print $11 }' "$R/ud-french-headline.tsv"
	assert_output "$want"
	# results-check recomputes all eight test figures from the outputs.
	printf 'table\tstatus\ttest_columns\tnote\nud-french-headline\tchecked\ttest_mean,test_sd\t\n' >"$R/outputs/TABLES.tsv"
	run "$TOP/scripts/results-check" --results "$R"
	assert_success
	assert_line 'results-check: 8 figures checked, 0 tables pending'
	# The report gives both intervals and flags runs that did not stop on
	# patience (here: the one-epoch cap).
	run grep -c '^| \(paper\|clean\) | [0-9.-]* | [0-9.-]* | -\?[0-9.]* | \[' "$R/ud-french-headline.md"
	assert_output 2
	assert_file_contains "$R/ud-french-headline.md" 'Not at equal stopping rules'
}

@test "ud-french.mk: make chars-seeds and chars-table: character-input models on the clean stream over seeds, their outputs kept, the table checked" {
	tiny_data 20
	run tiny_make CHARS_SEEDS="1 2" chars-seeds -j2
	assert_success
	W="$BATS_TEST_TMPDIR/work" R="$BATS_TEST_TMPDIR/res"
	cd "$BATS_TEST_TMPDIR"
	for s in 1 2; do
		run sh -c "tar xOf '$W/headline/clean/chars-s$s.model' meta | grep -E '^(input|output|seed)=' | sort"
		assert_output "$(printf 'input=chars\noutput=softmax\nseed=%s' $s)"
	done
	! cmp -s "$W/headline/clean/chars-s1.model" "$W/headline/clean/chars-s2.model"
	# the clean stream, the headline's word model's: the same vocabulary
	cmp "$W/headline/clean/chars.fz" "$W/headline/clean/rnn.fz"
	# the kept output is score --per-token's on test
	score -q --threads 1 --batch 64 --per-token -m "$W/headline/clean/chars-s2.model" "$W/test.tok" >want
	xz -dc "$R/outputs/chars-clean/clean-chars-s2.test.tsv.xz" | cmp - want
	# the table: word (the headline's clean RNN) and chars, checked by results-check
	run tiny_make CHARS_SEEDS="1 2" HEADLINE_SEEDS="1 2" chars-table -j2
	assert_success
	run cut -f 1,2,4 "$R/chars-clean.tsv"
	assert_output "$(printf 'model\tseeds\tstopped\nword\t1,2\tepochs,epochs\nchars\t1,2\tepochs,epochs')"
	grep -q '^| chars − word | ' "$R/chars-clean.md"
	grep -q '^\*\*Not at equal stopping rules:\*\* word, chars did not stop on patience' "$R/chars-clean.md"
	printf 'table\tstatus\ttest_columns\tnote\nchars-clean\tchecked\ttest_mean,test_sd\t\n' >"$R/outputs/TABLES.tsv"
	run "$TOP/scripts/results-check" --results "$R"
	assert_success
	assert_line 'results-check: 4 figures checked, 0 tables pending'
	# a seed's output missing: named, nothing written
	rm "$R/chars-clean.tsv" "$R/outputs/chars-clean/clean-chars-s1.test.tsv.xz"
	run_err 1 'lm-seeds: .*clean-chars-s1.test.tsv.xz' "$TOP/scripts/lm-seeds" --name chars-clean --results "$R" \
		--title t --seeds "1 2" --row "word=$W/headline/clean/rnn:../ud-french-headline/clean-rnn" \
		--row "chars=$W/headline/clean/chars:clean-chars"
	assert_file_not_exist "$R/chars-clean.tsv"
}

@test "ud-french.mk: make headline-resume continues the headline models MAXTIME cut, until none is left" {
	tiny_data 15
	run tiny_make HEADLINE_M=5 HEADLINE_SEEDS=1 EPOCHS=2 MAXTIME=0.001 headline
	assert_success
	W="$BATS_TEST_TMPDIR/work"
	run tar -xOf "$W/headline/clean/rnn-s1.model" meta
	assert_line 'stopped=max-time'
	run tiny_make HEADLINE_M=5 HEADLINE_SEEDS=1 EPOCHS=2 headline-resume
	assert_success
	assert_output --partial "resuming $W/headline/paper/rnn-s1.model"
	assert_output --partial "resuming $W/headline/clean/ll-5-s1.model"
	run tar -xOf "$W/headline/clean/rnn-s1.model" meta
	assert_line 'stopped=epochs'
	run cut -f 1 "$W/headline/clean/rnn-s1.log.tsv"
	assert_output "$(printf 'epoch\n0\n1\n2')"
	run tiny_make HEADLINE_M=5 HEADLINE_SEEDS=1 EPOCHS=2 headline-resume
	assert_success
	refute_output --partial resuming
	# a run killed outright (a reset machine) leaves its last epoch's
	# checkpoint, stopped=running: that is continued too
	m="$W/headline/clean/rnn-s1.model"
	cp "$m" "$BATS_TEST_TMPDIR/before.model"
	train --resume "$m" --epochs 1000000 --patience 1000000 --progress 0 "$W/headline/clean/rnn.fz" 2>/dev/null &
	pid=$!
	for _ in $(seq 600); do cmp -s "$m" "$BATS_TEST_TMPDIR/before.model" || break; sleep 0.05; done
	kill -9 "$pid"
	wait "$pid" || true
	run tar -xOf "$m" meta
	assert_line 'stopped=running'
	run tiny_make HEADLINE_M=5 HEADLINE_SEEDS=1 EPOCHS=2 headline-resume
	assert_success
	assert_line "resuming $m"
	[ "$(grep -c '^resuming' <<<"$output")" -eq 1 ]
}

@test "ud-french.mk: a missing UD file stops the pipeline" {
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

# The reference's command lines, without data or running anything: empty
# UD files under the usual names and make -n.
dry_make() {
	local s
	mkdir -p "$BATS_TEST_TMPDIR/dry"
	for s in fr_sequoia-ud-train fr_partut-ud-train fr_gsd-ud-dev fr_sequoia-ud-dev \
		fr_partut-ud-dev fr_sequoia-ud-test fr_partut-ud-test fr_gsd-ud-test; do
		: >"$BATS_TEST_TMPDIR/dry/$s.conllu"
	done
	make -n -C "$TOP" -f "$MK" DATA="$BATS_TEST_TMPDIR/dry" \
		WORK="$BATS_TEST_TMPDIR/w" RESULTS="$BATS_TEST_TMPDIR/res" "$@"
}

@test "ud-french.mk: make reference always trains llrnn's counterparts with --init torch at REF_EPOCHS" {
	# Even when REF_EPOCHS equals EPOCHS (the default).
	run dry_make MAXTIME=5m reference
	assert_success
	W="$BATS_TEST_TMPDIR/w/ref-ours-torch"
	run grep -c '^bin/train ' <<<"$output"
	assert_output 2
	run dry_make MAXTIME=5m REF_EPOCHS=2 reference
	assert_success
	all=$output
	refute_output --partial -- "--max-time"
	assert_output --partial "-o $W/rnn.model $W/rnn.fz"
	assert_output --partial "-o $W/paper/ll-2500.model $W/paper/ll-2500.fz"
	run grep -c -- "^bin/train --output softmax .*--init torch .*--patience 3 --epochs 2 " <<<"$all"
	assert_output 1
	run grep -c -- "^bin/train --output loglinear .*--init torch .*--patience 3 --epochs 2 " <<<"$all"
	assert_output 1
	# The reference itself: same epoch cap and patience.
	run grep -c -- '--epochs 2 --patience 3 ' <<<"$all"
	assert_output 2
	# Another init has its own folder.
	run dry_make REF_INIT=uniform reference
	assert_success
	assert_output --partial "--init uniform "
	assert_output --partial "ref-ours-uniform/rnn.model"
	refute_output --partial "--init torch"
	# The table's own models keep INIT (empty: train's default).
	run dry_make MS=5 models
	assert_success
	assert_output --partial "bin/train --output loglinear"
	refute_output --partial "--init"
	run dry_make MS=5 INIT=uniform models
	assert_output --partial "--init uniform"
	refute_output --partial "--init torch"
}

@test "ud-french.mk: the table is built with the counterparts and their init" {
	run dry_make MS=5 SETTINGS=paper -o "$BATS_TEST_TMPDIR/w/rnn.row" -o "$BATS_TEST_TMPDIR/w/paper/ll-5.row" \
		"$BATS_TEST_TMPDIR/res/ud-french.tsv"
	assert_success
	refute_output --partial -- "--ref-ours"
	mkdir -p "$BATS_TEST_TMPDIR/w/ref-ours-torch"
	: >"$BATS_TEST_TMPDIR/w/ref-ours-torch/rnn.row"
	run dry_make MS=5 SETTINGS=paper -o "$BATS_TEST_TMPDIR/w/rnn.row" -o "$BATS_TEST_TMPDIR/w/paper/ll-5.row" \
		"$BATS_TEST_TMPDIR/res/ud-french.tsv"
	assert_success
	assert_output --partial -- "--ref-ours $BATS_TEST_TMPDIR/w/ref-ours-torch --ref-init torch "
}

# Hand-written rows, torch outputs and counterparts for ud-table: torch's
# RNN ran 4 epochs and kept epoch 2 (epoch 4 gains less than 1e-4), llrnn's
# at equal settings is 0.05 above it on test (within the tolerance), its
# LL-RNN M=5 0.20 above (not within).
fake_ref() {
	W="$BATS_TEST_TMPDIR/fw" R2="$BATS_TEST_TMPDIR/fw/ref-ours-torch"
	mkdir -p "$W/paper" "$W/ref" "$R2/paper"
	printf 'paper\trnn\t-\t100\t100\t9\t6\tpatience\t4.9154\t5.9127\t6.2448\n' >"$W/rnn.row"
	printf 'paper\tll-rnn\t5\t100\t30\t7\t4\tpatience\t4.8\t5.3\t5.4\n' >"$W/paper/ll-5.row"
	cat >"$W/ref/rnn.out" <<-EOF
	model=rnn V=99 F=99 top=2500 background=all train_tokens=1000 threads=1
	epoch 1 train_logppl 6.5000 valid_logppl 6.0000 tokens_per_s 50
	epoch 2 train_logppl 6.0000 valid_logppl 5.9000 tokens_per_s 50
	epoch 3 train_logppl 5.8000 valid_logppl 5.9500 tokens_per_s 50
	epoch 4 train_logppl 5.7000 valid_logppl 5.89992 tokens_per_s 50
	RESULT model=rnn top=2500 background=all epochs=4 valid_logppl=5.9000 test0_logppl=6.1000
	EOF
	cat >"$W/ref/ll-5.out" <<-EOF
	model=ll V=99 F=30 top=5 background=all train_tokens=1000 threads=1
	epoch 1 train_logppl 6.0000 valid_logppl 5.5000 tokens_per_s 50
	epoch 2 train_logppl 5.4000 valid_logppl 5.3000 tokens_per_s 50
	RESULT model=ll top=5 background=all epochs=2 valid_logppl=5.3000 test0_logppl=5.4000
	EOF
	printf 'paper\trnn\t-\t100\t100\t3\t3\tepochs\t5.7\t5.93\t6.15\n' >"$R2/rnn.row"
	printf 'epoch\tstep\tseconds\ttrain\tvalid\tlr\n0\t0\t1\tnan\t9.7\t0.001\n1\t10\t2\t6.6\t6.1\t0.001\n2\t20\t3\t6.2\t6.0\t0.001\n3\t30\t4\t5.9\t5.93\t0.001\n' >"$R2/rnn.log.tsv"
	printf 'paper\tll-rnn\t5\t100\t30\t2\t2\tepochs\t5.2\t5.5\t5.6\n' >"$R2/paper/ll-5.row"
	printf 'epoch\tstep\tseconds\ttrain\tvalid\tlr\n1\t10\t2\t6.1\t5.7\t0.001\n2\t20\t3\t5.5\t5.5\t0.001\n' >"$R2/paper/ll-5.log.tsv"
}
ud_table() {
	"$TOP/scripts/ud-table" --work "$W" --tsv "$BATS_TEST_TMPDIR/t.tsv" --md "$BATS_TEST_TMPDIR/t.md" "$@"
}

@test "ud-table: the reference section gives torch vs llrnn at equal settings, Δ test and the 0.05 verdict" {
	fake_ref
	run ud_table --ref-ours "$R2" --ref-init torch "$W/rnn.row" "$W/paper/ll-5.row"
	assert_success
	assert_output ""
	M="$BATS_TEST_TMPDIR/t.md"
	run grep -F '| RNN (softmax) | – | 4 (2) |' "$M"
	assert_output '| RNN (softmax) | – | 4 (2) | 5.9000 | 6.1000 | 3 (3) cap | 5.9300 | 6.1500 | +0.0500 | yes | 9 (6), 6.2448 |'
	run grep -F '| LL-RNN | 5 | 2 (2) |' "$M"
	assert_output '| LL-RNN | 5 | 2 (2) | 5.3000 | 5.4000 | 2 (2) cap | 5.5000 | 5.6000 | +0.2000 | no | 7 (4), 5.4000 |'
	run grep -c -F 'trained with `train --init torch`, PyTorch'"'"'s initial-weight distributions' "$M"
	assert_output 1
	run grep -c -F 'exceeds 0.05 nats for LL-RNN M=5 (+0.20); it is within for RNN (softmax).' "$M"
	assert_output 1
	run grep -c -F "torch's \"(best)\" is derived from its per-epoch validation" "$M"
	assert_output 1
	# The per-epoch table spans every epoch either ran (not llrnn's epoch 0).
	run sed -n '/^Log-perplexity after each epoch/,/^Plots:/{/^| [RL]/p}' "$M"
	assert_output "$(cat <<-'EOF'
	| RNN (softmax) | – | 1 | 6.6000 | 6.5000 | 6.1000 | 6.0000 | +0.1000 |
	| RNN (softmax) | – | 2 | 6.2000 | 6.0000 | 6.0000 | 5.9000 | +0.1000 |
	| RNN (softmax) | – | 3 | 5.9000 | 5.8000 | 5.9300 | 5.9500 | -0.0200 |
	| RNN (softmax) | – | 4 |  | 5.7000 |  | 5.8999 |  |
	| LL-RNN | 5 | 1 | 6.1000 | 6.0000 | 5.7000 | 5.5000 | +0.2000 |
	| LL-RNN | 5 | 2 | 5.5000 | 5.4000 | 5.5000 | 5.3000 | +0.2000 |
	EOF
	)"
	run cut -f 2,12- "$BATS_TEST_TMPDIR/t.tsv"
	assert_output "$(printf 'model\tref_epochs\tref_valid\tref_test\tref_best_epoch\tref_ours_init\tref_ours_epochs\tref_ours_best_epoch\tref_ours_valid\tref_ours_test\nrnn\t4\t5.9000\t6.1000\t2\ttorch\t3\t3\t5.9300\t6.1500\nll-rnn\t2\t5.3000\t5.4000\t2\ttorch\t2\t2\t5.5000\t5.6000')"
	# Both within the tolerance: the verdict says so.
	printf 'paper\tll-rnn\t5\t100\t30\t2\t2\tepochs\t5.2\t5.3\t5.37\n' >"$R2/paper/ll-5.row"
	run ud_table --ref-ours "$R2" --ref-init torch "$W/rnn.row" "$W/paper/ll-5.row"
	assert_success
	run grep -c -F '| -0.0300 | yes |' "$BATS_TEST_TMPDIR/t.md"
	assert_output 1
	run grep -c -F 'llrnn matches the reference: |Δ test| ≤ 0.05 nats for both models compared.' "$BATS_TEST_TMPDIR/t.md"
	assert_output 1
}

@test "ud-table: without counterparts nothing is compared; a counterpart of another init is refused" {
	fake_ref
	run ud_table "$W/rnn.row" "$W/paper/ll-5.row"
	assert_success
	run grep -c '| not run |' "$BATS_TEST_TMPDIR/t.md"
	assert_output 2
	run grep -c -F "counterparts have not been trained" "$BATS_TEST_TMPDIR/t.md"
	assert_output 1
	# The model's meta says which init it was trained with.
	printf 'format=llrnn\ninit=uniform\n' >"$BATS_TEST_TMPDIR/meta"
	tar -cf "$R2/rnn.model" -C "$BATS_TEST_TMPDIR" meta
	rm -f "$BATS_TEST_TMPDIR/t.tsv"
	run_err 1 'rnn.model: trained with --init uniform, not torch' "$TOP/scripts/ud-table" --work "$W" \
		--tsv "$BATS_TEST_TMPDIR/t.tsv" --md "$BATS_TEST_TMPDIR/t.md" --ref-ours "$R2" --ref-init torch "$W/rnn.row" "$W/paper/ll-5.row"
	assert_file_not_exist "$BATS_TEST_TMPDIR/t.tsv"
	# --outputs: a row without its test output is refused, nothing written.
	mkdir -p "$BATS_TEST_TMPDIR/out"
	run_err 1 'out/rnn.test.tsv.xz: missing .the test output of rnn.' "$TOP/scripts/ud-table" --work "$W" \
		--tsv "$BATS_TEST_TMPDIR/t.tsv" --md "$BATS_TEST_TMPDIR/t.md" --outputs "$BATS_TEST_TMPDIR/out" "$W/rnn.row" "$W/paper/ll-5.row"
	assert_file_not_exist "$BATS_TEST_TMPDIR/t.tsv"
	assert_file_not_exist "$BATS_TEST_TMPDIR/out/checks.tsv"
	# Without --ref-init the report states the models' own init.
	run ud_table --ref-ours "$R2" "$W/rnn.row" "$W/paper/ll-5.row"
	assert_success
	run grep -c -F 'trained with `train --init uniform`, not PyTorch' "$BATS_TEST_TMPDIR/t.md"
	assert_output 1
	printf 'format=llrnn\ninit=torch\n' >"$BATS_TEST_TMPDIR/meta"
	tar -cf "$R2/rnn.model" -C "$BATS_TEST_TMPDIR" meta
	run ud_table --ref-ours "$R2" --ref-init torch "$W/rnn.row" "$W/paper/ll-5.row"
	assert_success
}
