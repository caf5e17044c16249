#!/usr/bin/env bats
# 94-open-vocab-seeds.bats - pipelines/open-vocab.mk's `make seeds` (issue
# 47): ll-open's feature variant chosen on validation (scripts/open-select),
# ll-open and rnn-spell over seeds to one stopping rule, their test
# outputs kept with the OOV columns, the table (scripts/lm-seeds --oov)
# checked by scripts/results-check, and seeds-resume.  A tiny run on the
# UD French fixtures (tiny network, order-3 spelling, the fixtures' mini
# hunspell dictionary); Brown's wiring by dry runs.  Guards the wiring,
# not the figures of the full run.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
}

MK="$TOP/pipelines/open-vocab.mk"

knobs() {
	echo W=w RESULTS=res BIN="$TOP/bin" SCRIPTS="$TOP/scripts" DATA="$UD" ARCHIVE="$BROWN" BROWN_TRAIN=3 \
		EMBED=8 HIDDEN=8 BATCH=8 THREADS=1 TOP=50 SPELL=3 HUNSPELL_ud-french="$FIXTURES/open/mini" HUNSPELL_brown= \
		PATIENCE=1 SEEDS_EPOCHS=2
}

@test "open-vocab.mk seeds: variants chosen on validation, two seeds to one rule, outputs kept, the table checked" {
	cd "$BATS_TEST_TMPDIR"
	local k
	read -ra k <<<"$(knobs)"
	k+=(CORPORA=ud-french SEEDS="1 2" SEL_HUNSPELL="1 0" SEL_OOV="1 0" SEL_SUFFIX=3)
	make -s -f "$MK" "${k[@]}" seeds -j2 >make.log 2>&1 || { cat make.log; false; }
	S=w/seeds/ud-french O=res/outputs/open-vocab-seeds
	# the four variants: hunspell and the OOV: features on and off
	grep -q -- '--hunspell .*fixtures/open/mini' <(make -n -B -f "$MK" "${k[@]}" $S/sel/hs1-oov1-suf3.fz)
	run make -n -B -f "$MK" "${k[@]}" $S/sel/hs0-oov0-suf3.fz
	assert_output --partial '--no-oov-features --suffix 3'
	refute_output --partial '--hunspell'
	# nothing of test in any stream: test-only words are in no vocabulary
	only=$(awk 'FNR == NR { seen[$1] = 1; next } { for (i = 1; i <= NF; i++) if (!($i in seen)) print $i }' \
		<(cat w/ud-french/train.tok w/ud-french/valid.tok | tr ' ' '\n') w/ud-french/test.tok | sort -u | head -n 20)
	[ -n "$only" ]
	for f in $S/sel/*.fz w/ud-french/rnn-spell.fz; do
		tar -xOf "$f" vocab | cut -f1 | sort -u >v
		[ -z "$(comm -12 v <(echo "$only"))" ]
	done
	# the choice: the lowest validation figure at each run's kept epoch
	run cut -f1,6 $S/select.tsv
	[ "${#lines[@]}" -eq 5 ]
	want=$(for v in hs1-oov1-suf3 hs1-oov0-suf3 hs0-oov1-suf3 hs0-oov0-suf3; do
		b=$(tar -xOf $S/sel/$v.model meta | sed -n 's/^best_epoch=//p')
		awk -F '\t' -v b="$b" -v v=$v '$1 == b { print $5 "\t" v }' $S/sel/$v.log.tsv
	done | sort -g -s -k1,1 | head -n 1 | cut -f2)
	[ "$(awk -F '\t' '$6 == "yes" { print $1 }' $S/select.tsv)" = "$want" ]
	cmp $S/ll-open.fz $S/sel/$want.fz
	# seed 1 of ll-open is the chosen selection run; seed 2 trained anew
	cmp $S/ll-open-s1.model $S/sel/$want.model
	run sh -c "tar -xOf $S/ll-open-s2.model meta | grep -E '^(output|seed)=' | sort"
	assert_output "$(printf 'output=loglinear\nseed=2')"
	run sh -c "tar -xOf $S/rnn-spell-s1.model meta | grep -E '^(output|seed)=' | sort"
	assert_output "$(printf 'output=softmax\nseed=1')"
	run cmp -s $S/rnn-spell-s1.model $S/rnn-spell-s2.model
	assert_failure
	# every run by one rule: patience 1 or the 2-epoch cap, no max-time
	for m in $S/sel/*.model $S/*-s[12].model; do
		tar -xOf "$m" meta | grep -Eqx 'stopped=(patience|epochs)'
	done
	# the kept output: score's per-token lines, column 3 the tokens whose
	# type is not in the training text, column 4 their log-probability
	score -q -m $S/rnn-spell-s2.model --open --per-token --batch 64 --threads 1 w/ud-french/test.tok >want.lp
	xz -dc $O/ud-french-rnn-spell-s2.test.tsv.xz >got.lp
	cmp <(cut -f1,2,4- want.lp) <(cut -f1,2,5- got.lp)
	n=$(awk 'FNR == NR { seen[$1] = 1; next } { for (i = 1; i <= NF; i++) if (!($i in seen)) o++ } END { print o + 0 }' \
		w/ud-french/train.types w/ud-french/test.tok)
	[ "$n" -gt 0 ]
	[ "$(awk -F '\t' '{ s += $3 } END { print s }' got.lp)" -eq "$n" ]
	python3 - got.lp <<-'EOF'
	import sys
	types = set(open('w/ud-french/train.types').read().split('\n'))
	for line in open(sys.argv[1]):
	    f = line.rstrip('\n').split('\t')
	    oov = [float(t.rsplit('=', 1)[1]) for t in f[4:-1] if t.rsplit('=', 1)[0] not in types]
	    assert int(f[2]) == len(oov), line
	    assert abs(float(f[3]) - sum(oov)) < 1e-3, line
	EOF
	# the table: both models, mean and sd over the two seeds, OOV columns
	run cut -f1,2,4 res/open-vocab-seeds.tsv
	assert_output "$(printf 'model\tseeds\tstopped\nud-french/ll-open\t1,2\t%s\nud-french/rnn-spell\t1,2\t%s' \
		"$(for s in 1 2; do tar -xOf $S/ll-open-s$s.model meta | sed -n 's/^stopped=//p'; done | paste -sd,)" \
		"$(for s in 1 2; do tar -xOf $S/rnn-spell-s$s.model meta | sed -n 's/^stopped=//p'; done | paste -sd,)")"
	head -n1 res/open-vocab-seeds.tsv | grep -q "$(printf '\ttest_oov_pct\toov_test_mean\toov_test_sd$')"
	# the OOV figure: nats per OOV token, mean of the seeds
	want=$(for s in 1 2; do xz -dc $O/ud-french-ll-open-s$s.test.tsv.xz | awk -F '\t' '{ l += $4; n += $3 } END { printf "%.10f\n", -l / n }'; done |
		awk '{ s += $1 } END { printf "%.4f", s / NR }')
	[ "$(awk -F '\t' '$1 == "ud-french/ll-open" { print $10 }' res/open-vocab-seeds.tsv)" = "$want" ]
	# intervals on all tokens and on the OOV tokens; the choice in the md
	run cut -f1-3 $O/diffs.tsv
	assert_output "$(printf 'metric\ta\tb\nlogppl\tud-french/ll-open\tud-french/rnn-spell\nlogppl:4,3\tud-french/ll-open\tud-french/rnn-spell')"
	grep -q '^| ud-french/ll-open − ud-french/rnn-spell | OOV | ' res/open-vocab-seeds.md
	grep -q "^ll-open on ud-french: the feature variant chosen on validation, \*\*$(awk -F '\t' '$6 == "yes" { print $1 }' $S/select.tsv)\*\*" res/open-vocab-seeds.md
	grep -q '^| hs0-oov0-suf3 | ' res/open-vocab-seeds.md
	# results-check recomputes every figure, and catches a changed one
	printf 'table\tstatus\ttest_columns\tnote\nopen-vocab-seeds\tchecked\ttest_mean,test_sd,oov_test_mean,oov_test_sd\t\n' \
		>res/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line 'results-check: 8 figures checked, 0 tables pending'
	awk -F '\t' -v OFS='\t' 'NR == 2 { $10 = sprintf("%.4f", $10 + 0.001) } { print }' res/open-vocab-seeds.tsv >t && mv t res/open-vocab-seeds.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure 1
	assert_output --partial "row 'model=ud-french/ll-open', oov_test_mean: the table says"
	# nothing left to do
	make -q -f "$MK" "${k[@]}" seeds
}

@test "open-vocab.mk seeds-resume: continues a selection run and a seed's run cut by SEEDS_MAXTIME, then nothing" {
	cd "$BATS_TEST_TMPDIR"
	local k
	read -ra k <<<"$(knobs)"
	k+=(CORPORA=ud-french SEEDS="1 2" SEL_HUNSPELL=0 SEL_OOV=1 SEL_SUFFIX=3 SEEDS_MAXTIME=0.001)
	make -s -f "$MK" "${k[@]}" w/seeds/ud-french/sel/hs0-oov1-suf3.model w/seeds/ud-french/rnn-spell-s2.model >make.log 2>&1 ||
		{ cat make.log; false; }
	run tar -xOf w/seeds/ud-french/rnn-spell-s2.model meta
	assert_line 'stopped=max-time'
	n=$(wc -l <w/seeds/ud-french/rnn-spell-s2.log.tsv)
	# open-select refuses the cut selection run
	run_err 2 '^open-select: .*hs0-oov1-suf3.model: stopped=max-time: continue it' make -s -f "$MK" "${k[@]}" seeds-select
	run make -f "$MK" "${k[@]}" SEEDS_MAXTIME= seeds-resume
	assert_success
	assert_line "resuming w/seeds/ud-french/sel/hs0-oov1-suf3.model"
	assert_line "resuming w/seeds/ud-french/rnn-spell-s2.model"
	for m in w/seeds/ud-french/sel/hs0-oov1-suf3.model w/seeds/ud-french/rnn-spell-s2.model; do
		tar -xOf "$m" meta | grep -Eqx 'stopped=(patience|epochs)'
	done
	# the same run continued: its curve goes on in the same file
	[ "$(wc -l <w/seeds/ud-french/rnn-spell-s2.log.tsv)" -gt "$n" ]
	# and the selection goes on from the continued run
	make -s -f "$MK" "${k[@]}" SEEDS_MAXTIME= seeds-select
	[ "$(cut -f1,6 w/seeds/ud-french/select.tsv)" = "$(printf 'variant\tchosen\nhs0-oov1-suf3\tyes')" ]
	run make -f "$MK" "${k[@]}" SEEDS_MAXTIME= seeds-resume
	assert_success
	refute_output --partial resuming
}

@test "open-vocab.mk seeds: Brown and the default grid by a dry run; without a dictionary, no hunspell variant" {
	# from the tree's top, as a lane runs it (make -n writes nothing)
	cd "$TOP"
	run make -n -f "$TOP/pipelines/open-vocab.mk" W=w RESULTS=res DATA="$UD" ARCHIVE="$BROWN" seeds
	assert_success
	# 12 variants a corpus, each featurized and trained with seed 1
	[ "$(grep -c '^bin/featurize .* -o w/seeds/brown/sel/hs[01]-oov[01]-suf[234].fz ' <<<"$output")" -eq 12 ]
	[ "$(grep -c '^bin/featurize .* -o w/seeds/ud-french/sel/hs[01]-oov[01]-suf[234].fz ' <<<"$output")" -eq 12 ]
	[ "$(grep -c '^bin/train --output loglinear .* -s 1 --log w/seeds/brown/sel/' <<<"$output")" -eq 12 ]
	assert_output --partial '--tagged w/brown/train.tagged --ortho --hunspell /usr/share/hunspell/en_US  --suffix 4 --spelling 5'
	assert_output --partial '--ortho  --no-oov-features --suffix 2 --spelling 5'
	# one rule for the 24 selection runs and the 10 of the seeds: 30 epochs, patience 2, no max-time
	# by default; featurize never reads the test text
	[ "$(grep -c '^bin/train .* --epochs 30 --patience 2  --threads 2 --progress 0 --valid w/\(brown\|ud-french\)/valid.tok' <<<"$output")" -eq 34 ]
	refute_output --partial 'max-time'
	[ -z "$(grep featurize <<<"$output" | grep -E 'test\.(tok|tagged)|-test\.conllu')" ]
	# the seeds: rnn-spell 3 a corpus, ll-open 2 trained and seed 1 copied
	[ "$(grep -c '^bin/train --output softmax .* -s [123] --log w/seeds/\(brown\|ud-french\)/rnn-spell-s[123].log.tsv' <<<"$output")" -eq 6 ]
	[ "$(grep -c '^bin/train --output loglinear .* -s [23] --log w/seeds/\(brown\|ud-french\)/ll-open-s[23].log.tsv' <<<"$output")" -eq 4 ]
	[ "$(grep -c 'cp w/seeds/\(brown\|ud-french\)/sel/$v.model w/seeds/\(brown\|ud-french\)/ll-open-s1.model' <<<"$output")" -eq 2 ]
	assert_output --partial '--diff ud-french/ll-open,ud-french/rnn-spell --diff brown/ll-open,brown/rnn-spell'
	run make -n -f "$TOP/pipelines/open-vocab.mk" W=w RESULTS=res DATA="$UD" ARCHIVE="$BROWN" SEEDS_MAXTIME=3h seeds
	[ "$(grep -c -- '--max-time 3h' <<<"$output")" -eq 34 ]
	# a corpus without a dictionary has the variants without hunspell only
	run make -n -f "$TOP/pipelines/open-vocab.mk" W=w RESULTS=res DATA="$UD" ARCHIVE="$BROWN" HUNSPELL_brown= seeds
	assert_success
	[ "$(grep -c '^bin/featurize .* -o w/seeds/brown/sel/hs0-oov[01]-suf[234].fz ' <<<"$output")" -eq 6 ]
	[ "$(grep -c '^bin/featurize .* -o w/seeds/ud-french/sel/hs[01]-oov[01]-suf[234].fz ' <<<"$output")" -eq 12 ]
	[ -z "$(grep 'sel/hs1-.* w/brown/train.tok' <<<"$output")" ]
	[ -z "$(grep -- '--tagged .*--hunspell' <<<"$output")" ]
}

@test "open-oov-columns: the OOV tokens of each line and their log-probability as columns 3 and 4; usage" {
	cd "$BATS_TEST_TMPDIR"
	printf 'le\t12\nchat\t3\n' >types
	printf -- '-9.5\t4\t0\tle=-1.5\tzorglub=-6\tchat=-1\t</s>=-1\n-4\t2\t0\tzz=a=-3\t</s>=-1\n' >lp
	run "$TOP/scripts/open-oov-columns" types lp
	assert_success
	assert_output "$(printf -- '-9.5\t4\t1\t-6.000000\tle=-1.5\tzorglub=-6\tchat=-1\t</s>=-1\n-4\t2\t1\t-3.000000\tzz=a=-3\t</s>=-1')"
	run "$TOP/scripts/open-oov-columns" types <lp
	assert_line --index 1 "$(printf -- '-4\t2\t1\t-3.000000\tzz=a=-3\t</s>=-1')"
	run_err 2 '^open-oov-columns: expected the types file and at most one file$' "$TOP/scripts/open-oov-columns"
	grep -qx 'usage: open-oov-columns TYPES \[FILE\]' "$BATS_TEST_TMPDIR/err.err"
	run_err 1 '^open-oov-columns: nosuch: cannot read it$' "$TOP/scripts/open-oov-columns" nosuch lp
	run_err 1 '^open-oov-columns: nosuch: cannot read it$' "$TOP/scripts/open-oov-columns" types nosuch
}
