#!/usr/bin/env bats
# 94-g2p-constrained.bats - issue 51's G2P experiment (pipelines/g2p.mk
# constrained, scripts/g2p-constrained) run end to end on the CMUdict
# slice (tests/fixtures/g2p) at a tiny size: the table's shape, the
# per-word outputs against gen, g2p-eval, score and an awk recogniser of
# the stress rule, results-check recomputing every figure, the
# intervals, and that nothing from test reaches training or selection.
# Only the full-data fraction: the slice's tenth (140 pairs) lacks 7 of
# the 69 phonemes, so the automaton's alphabet check refuses it.

bats_require_minimum_version 1.5.0
load test_helper

G2P="$FIXTURES/g2p/cmudict-slice.tgz"
LEX="$TOP/lexicons/arpabet-phonology.lex"
ONE="$TOP/lexicons/one-primary-stress.fst"
ONE_AWK='FNR == NR { inv[$1] = 1; next }
{ n = 0; ok = NF > 0; for (i = 1; i <= NF; i++) { if (!($i in inv)) ok = 0; if ($i ~ /^[A-Z]+1$/) n++ } print (ok && n == 1) ? 0 : 1 }'

mk() {
	make -s -f "$TOP/pipelines/g2p.mk" ARCHIVE="$G2P" BIN="$TOP/bin" SCRIPTS="$TOP/scripts" LEXICON="$LEX" \
		STRESS_FSA="$ONE" WORK=w RESULTS=r CON_FRACS=100 CON_SEEDS_100='1 2' BEAM=2 \
		HIDDEN=16 EMBED=8 ATTN_HIDDEN=8 EPOCHS=2 CON_EPOCHS_100=2 MAXTIME= THREADS=1 "$@"
}

setup_file() {
	sanitized && return 0
	export P="$BATS_FILE_TMPDIR/p"
	mkdir -p "$P"
	cd "$P"
	mk constrained >make.log 2>&1 || { cat make.log; false; }
}

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
	cd "$P"
}

@test "g2p.mk constrained: a row per constraint, every figure filled" {
	run head -n 1 r/g2p-constrained.tsv
	assert_output "$(printf 'constraint\ttrain_fraction\tseeds\tepochs\tstopped\twer_mean\twer_sd\tper_mean\tper_sd\tbreaks_mean\tbreaks_sd\tref_ll_mean\tref_ll_sd\trefs_accepted\trefs_rejected')"
	[ "$(wc -l <r/g2p-constrained.tsv)" -eq 4 ]
	[ "$(cut -f 1-5 r/g2p-constrained.tsv | tail -n +2 | tr '\t\n' ' ;')" = \
		"none 1 1,2 2(2),2(2) epochs,epochs;mask 1 1,2 2(2),2(2) epochs,epochs;trained 1 1,2 2(2),2(2) epochs,epochs;" ]
	n=$(awk -F '\t' '{ n += NF } END { print n }' w/data/test.ref)
	num='-?[0-9]+\.[0-9]+'
	for row in none mask trained; do
		grep -Eq "^$row	1	1,2	[^	]*	[^	]*	($num	){8}[0-9]+	[0-9]+$" r/g2p-constrained.tsv
	done
	# accepted + rejected references: every reference of the test words
	awk -F '\t' -v n="$n" 'NR > 1 && $14 + $15 != n { exit 1 }' r/g2p-constrained.tsv
	# decoded under the automaton, no output breaks the rule
	awk -F '\t' '$1 != "none" && NR > 1 && $10 != "0.00" { exit 1 }' r/g2p-constrained.tsv
	grep -q '^| trained | 1 | 2(2), 2(2) | epochs, epochs |' r/g2p-constrained.md
	grep -q '^At 100% of the data every model stopped at the same epoch budget' r/g2p-constrained.md
	grep -q '^Training at 100% of the data: .*at most 2 epochs (no time limit)' r/g2p-constrained.md
}

@test "g2p.mk constrained: each run's per-word output is g2p-eval's of gen's output, the rule's awk verdict and score's log p" {
	ls r/outputs/g2p-constrained/*.test.tsv.xz | sed 's|.*/||' >files
	[ "$(tr '\n' ' ' <files)" = "mask-100-s1.test.tsv.xz mask-100-s2.test.tsv.xz none-100-s1.test.tsv.xz none-100-s2.test.tsv.xz trained-100-s1.test.tsv.xz trained-100-s2.test.tsv.xz " ]
	for run in none:ll-mlp-100-ep2-s2: mask:ll-mlp-100-ep2-s2:--fsa trained:ll-fsa-mlp-100-ep2-s1:; do
		IFS=: read -r row model opt <<<"$run"
		seed=${model##*-s}
		xz -dc "r/outputs/g2p-constrained/$row-100-s$seed.test.tsv.xz" >words
		gen -q -m "w/$model.bin" ${opt:+$opt "$ONE"} --beam 2 w/data/test.src >hyp
		"$TOP/scripts/g2p-eval" --per-word pw w/data/test.ref hyp >/dev/null
		cmp <(cut -f 1-6 words) pw
		cmp <(cut -f 7 words) <(awk "$ONE_AWK" "$LEX" hyp)
		# column 8: the summed log p of each word's accepted references
		# (the mask row's under the automaton as a mask)
		score -q -m "w/$model.bin" ${opt:+$opt "$ONE"} --source w/con/refs.src w/con/refs.tgt | cut -f 1 |
			paste - w/con/refs.word <(awk "$ONE_AWK" "$LEX" w/con/refs.tgt) |
			awk -F '\t' '$3 == 0 { s[$2] += $1 } END { for (w in s) printf "%d\t%.4f\n", w, s[w] }' | sort -n >want
		awk -F '\t' '$9 > 0 { printf "%d\t%.4f\n", NR, $8 }' words >got
		cmp want got
	done
}

@test "g2p.mk constrained: results-check recomputes every figure from the outputs, and catches a changed one" {
	cp -r r rc
	printf 'table\tstatus\ttest_columns\tnote\ng2p-constrained\tchecked\twer_mean,wer_sd,per_mean,per_sd,breaks_mean,breaks_sd,ref_ll_mean,ref_ll_sd,refs_accepted,refs_rejected\t\n' \
		>rc/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results rc
	assert_success
	# each row: 4 figures x mean and sd + 2 counts
	assert_line 'results-check: 30 figures checked, 0 tables pending'
	awk 'BEGIN { FS = OFS = "\t" } $1 == "trained" { $12 = sprintf("%.4f", $12 - 0.01) } { print }' \
		r/g2p-constrained.tsv >rc/g2p-constrained.tsv
	run "$TOP/scripts/results-check" --results rc
	assert_failure
	assert_line --partial "row 'constraint=trained,train_fraction=1', ref_ll_mean"
}

@test "g2p.mk constrained: paired intervals trained - mask and mask - none (WER, PER, breaks, ref LL)" {
	run cut -f 1-3,9-12 r/outputs/g2p-constrained/diffs.tsv
	assert_output "$(printf 'figure\ta\tb\tsamples\truns_a\truns_b\titems
wer\ttrained-100\tmask-100\t10000\t2\t2\t58
per\ttrained-100\tmask-100\t10000\t2\t2\t58
breaks\ttrained-100\tmask-100\t10000\t2\t2\t58
ref_ll\ttrained-100\tmask-100\t10000\t2\t2\t58
wer\tmask-100\tnone-100\t10000\t2\t2\t58
per\tmask-100\tnone-100\t10000\t2\t2\t58
breaks\tmask-100\tnone-100\t10000\t2\t2\t58
ref_ll\tmask-100\tnone-100\t10000\t2\t2\t58')"
	# the ref LL interval is paired-bootstrap's over the same files
	run "$TOP/scripts/paired-bootstrap" --metric ratio:8,9 \
		-a r/outputs/g2p-constrained/mask-100-s1.test.tsv.xz -a r/outputs/g2p-constrained/mask-100-s2.test.tsv.xz \
		-b r/outputs/g2p-constrained/none-100-s1.test.tsv.xz -b r/outputs/g2p-constrained/none-100-s2.test.tsv.xz
	assert_success
	[ "$(echo "${lines[1]}" | cut -f 2-6)" = "$(tail -n 1 r/outputs/g2p-constrained/diffs.tsv | cut -f 4-8)" ]
}

@test "g2p.mk constrained: nothing from test reaches training or selection" {
	# the models and their streams depend on no test file: changing
	# test.src and test.ref leaves them up to date
	models="w/ll-mlp-100-ep2-s1.bin w/ll-mlp-100-ep2-s2.bin w/ll-fsa-mlp-100-ep2-s1.bin w/ll-fsa-mlp-100-ep2-s2.bin"
	cp -p w/data/test.src test.src.keep
	cp -p w/data/test.ref test.ref.keep
	sleep 1
	touch w/data/test.src w/data/test.ref
	run mk -q $models
	assert_success
	# and no command that trains or featurizes names a test file
	mk -n -B $models >cmds
	grep -q 'bin/train .*--output-fsa .*--skip-rejected' cmds
	grep -q 'valid-source w/data/valid.src --valid w/data/valid.tgt' cmds
	run grep -E 'bin/(train|featurize) .*data/test\.' cmds
	assert_failure
	# while the outputs do depend on test
	run mk -q r/outputs/g2p-constrained/none-100-s1.test.tsv.xz
	assert_failure
	cp -p test.src.keep w/data/test.src
	cp -p test.ref.keep w/data/test.ref
}

@test "g2p-constrained table: a run whose model is gone is read from runs.tsv; one known nowhere is refused" {
	[ "$(head -n 1 r/outputs/g2p-constrained/runs.tsv)" = "$(printf 'run\tmodel\tepochs_done\tbest_epoch\tstopped\tconfig')" ]
	grep -q "^trained-100-s2	ll-fsa-mlp-100-ep2-s2.bin	2	2	epochs	.*at most 2 epochs" r/outputs/g2p-constrained/runs.tsv
	[ "$(wc -l <r/outputs/g2p-constrained/runs.tsv)" -eq 7 ]
	cp -r r r2
	mkdir w2
	table=("$TOP/scripts/g2p-constrained" table --work w2 --outputs r2/outputs/g2p-constrained --results r2
		--fracs 100 --seeds 100:1,2 --samples 200)
	run "${table[@]}" --epochs 100:2
	assert_success
	cmp r/g2p-constrained.tsv r2/g2p-constrained.tsv
	cmp r/outputs/g2p-constrained/runs.tsv r2/outputs/g2p-constrained/runs.tsv
	grep -q '^| trained | 1 | 2(2), 2(2) | epochs, epochs |' r2/g2p-constrained.md
	# another epoch budget names other models, which nothing knows
	run_err 1 "^g2p-constrained: w2/ll-mlp-100-ep3-s1.bin: no such model, and r2/outputs/g2p-constrained/runs.tsv has no line for run none-100-s1 with that model$" "${table[@]}" --epochs 100:3
	rm r2/outputs/g2p-constrained/runs.tsv
	run_err 1 "^g2p-constrained: w2/ll-mlp-100-ep2-s1.bin: no such model" "${table[@]}" --epochs 100:2
	cmp r/g2p-constrained.tsv r2/g2p-constrained.tsv
}

@test "g2p-constrained words: a reference the rule rejects is counted apart, and must score -inf under a constrained model" {
	cd "$BATS_TEST_TMPDIR"
	mkdir refs
	printf 'c a t\tk ae t\n' >test.src
	printf 'K AE1 T\tK AE1 T AH1\n' >test.ref
	"$TOP/scripts/g2p-constrained" refs test.src test.ref refs
	[ "$(cat refs/refs.tgt)" = "$(printf 'K AE1 T\nK AE1 T AH1')" ]
	[ "$(cat refs/refs.word)" = "$(printf '1\n1')" ]
	printf '0\t1\t0\t3\tK AE1 T\tK AE1 T\n' >eval
	# a constrained model: the rejected reference scores -inf
	printf -- '-1.5\t4\n-inf\t5\n' >scores
	"$TOP/scripts/g2p-constrained" words --lexicon "$LEX" --eval eval --refs refs --scores scores --constrained -o out
	[ "$(cat out)" = "$(printf '0\t1\t0\t3\tK AE1 T\tK AE1 T\t0\t-1.500000\t1\t1')" ]
	# a plain model scores it, and it is left out of column 8 all the same
	printf -- '-1.5\t4\n-7.25\t5\n' >plain
	"$TOP/scripts/g2p-constrained" words --lexicon "$LEX" --eval eval --refs refs --scores plain -o out
	[ "$(cat out)" = "$(printf '0\t1\t0\t3\tK AE1 T\tK AE1 T\t0\t-1.500000\t1\t1')" ]
	# the recognisers disagree: refused
	run_err 1 '^g2p-constrained: plain:2: the reference "K AE1 T AH1" is rejected by the rule but scores -7.25$' \
		"$TOP/scripts/g2p-constrained" words --lexicon "$LEX" --eval eval --refs refs --scores plain --constrained -o out2
	run_err 1 '^g2p-constrained: scores:2: the reference "K AE1 T AH1" is rejected by the rule but scores -inf under a model without the automaton$' \
		"$TOP/scripts/g2p-constrained" words --lexicon "$LEX" --eval eval --refs refs --scores scores -o out2
	[ ! -e out2 ]
}
