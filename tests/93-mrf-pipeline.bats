#!/usr/bin/env bats
# 93-mrf-pipeline.bats - pipelines/mrf.mk's tagging experiment (issue 53)
# end to end on the fixtures (the UD French slice, the Brown slice split
# by word position), few L-BFGS iterations: every corpus and model's
# per-token outputs, the table recomputed from them by results-check;
# the bound experiment's gaps, recomputed likewise from their outputs;
# the lm experiment (the chain MRF LM on brown-ladder.mk's split, its
# checked bound per token, the neighbours of its embeddings and the
# feed-forward LM's), the resume target, scripts/word-neighbours; and
# scripts/brown-tags, the Brown tag reduction and universal mapping.
# Guards the wiring, not the figures of the full run: the intervals from
# 1000 resamples (10000 drew 2e8 multinomial counts over the 21186 Brown
# test tokens, 12 CPU s a paired-bootstrap call, six of them).

bats_require_minimum_version 1.5.0
load test_helper

mrfmk() {
	make -s -C "$TOP" -f pipelines/mrf.mk W="$BATS_TEST_TMPDIR/w" RESULTS="$BATS_TEST_TMPDIR/r" UD="$UD" \
		ARCHIVE="$BROWN" TRAIN_WORDS=20000 VALID_WORDS=5000 EPOCHS=5 NICE= BOOT_SAMPLES=1000 "$@"
}

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
	cd "$BATS_TEST_TMPDIR"
}

# checked TABLE COLUMNS N LINE FIELD DELTA: results-check recomputes the N
# figures of r/TABLE.tsv (its test columns COLUMNS) from their outputs,
# then fails once field FIELD of line LINE is moved by DELTA (its output
# in $output, for the caller to look at).
checked() {
	printf 'table\tstatus\ttest_columns\tnote\n%s\tchecked\t%s\t\n' "$1" "$2" >r/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results r
	assert_success
	assert_line "results-check: $3 figures checked, 0 tables pending"
	awk -F'\t' -v l="$4" -v f="$5" -v d="$6" 'BEGIN { OFS = "\t" } NR == l { $f = $f + d } { print }' "r/$1.tsv" >t && mv t "r/$1.tsv"
	run "$TOP/scripts/results-check" --results r
	assert_failure
}

@test "mrf.mk: tagging on the fixtures, per-token outputs for every corpus and model, the table checked from them" {
	run mrfmk -j2 tagging
	assert_success
	run cut -f 1,2,3 r/mrf-tagging.tsv
	assert_output "$(printf 'corpus\tmodel\ttags\nud-french\tmrf\t17\nud-french\thmm\t17\nbrown87\tmrf\t%s\nbrown87\thmm\t%s\nbrownu\tmrf\t12\nbrownu\thmm\t12' \
		"$(tr ' ' '\n' <w/brown87.train.tt | sed 's/.*\///' | sort -u | wc -l)" "$(tr ' ' '\n' <w/brown87.train.tt | sed 's/.*\///' | sort -u | wc -l)")"
	# the split by word position: train starts the archive, test is what follows valid
	grep -q '^train: [0-9]* sentences, 2000[0-9] words$' w/brown-split.log
	# every output: one line a test token, the words of the test set in order
	for c in ud-french brown87 brownu; do
		for m in mrf hmm; do
			xz -dc "r/outputs/mrf-tagging/$c-$m.test.tsv.xz" | cut -f 5 >got
			tr ' ' '\n' <"w/$c.test.tt" | sed 's/\/[^\/]*$//' | grep . | cmp - got
		done
	done
	# MRF - HMM with its interval, accuracy and unknown-word accuracy, each corpus
	run cut -f 1,2 r/outputs/mrf-tagging/diffs.tsv
	assert_output "$(printf 'corpus\tmetric\nud-french\tmean*100\nud-french\tratio:3,4*100\nbrown87\tmean*100\nbrown87\tratio:3,4*100\nbrownu\tmean*100\nbrownu\tratio:3,4*100')"
	# from BOOT_SAMPLES resamples each
	awk -F'\t' 'NR > 1 && $8 != 1000 { exit 1 }' r/outputs/mrf-tagging/diffs.tsv
	# the MRF stopped on its 5 iterations
	awk -F'\t' '$2 == "mrf" && $10 != "epochs" { exit 1 }' r/mrf-tagging.tsv
	# the table checked from its outputs; a figure that disagrees with them fails
	checked mrf-tagging accuracy,unknown_accuracy 12 2 7 1
}

@test "mrf.mk resume: continues the MRF runs MAXTIME cut (counting EPOCHS on), leaves the others" {
	run mrfmk MAXTIME=0.001 "$PWD/w/ud-french.mrf" "$PWD/w/brownu.mrf"
	assert_success
	run mrfmk "$PWD/w/brown87.mrf"
	assert_success
	for c in ud-french brownu; do
		tar -xOf "w/$c.mrf" meta | grep -qx 'stopped=max-time'
		tar -xOf "w/$c.mrf" meta | grep -qx 'iterations_done=1'
	done
	tar -xOf w/brown87.mrf meta | grep -qx 'stopped=epochs'
	cp w/brown87.mrf keep.mrf
	run mrfmk resume
	assert_success
	assert_output "$(printf 'resuming %s/w/ud-french.mrf\nresuming %s/w/brownu.mrf' "$PWD" "$PWD")"
	for c in ud-french brownu; do
		tar -xOf "w/$c.mrf" meta | grep -qx 'stopped=epochs'
		tar -xOf "w/$c.mrf" meta | grep -qx 'iterations_done=5'
		grep -q '; resuming ' "w/$c.mrf.log"
	done
	cmp keep.mrf w/brown87.mrf
	run mrfmk resume
	assert_success
	assert_output ""
}

@test "brown-tags: the base set and the universal tags; a tag outside the map, a bad mode" {
	printf 'The/at-tl It/pps+bez doesn'"'"'t/doz* not/* Fe/fw-nn-tl ./.\n' >in.tt
	run "$TOP/scripts/brown-tags" 87 <in.tt
	assert_success
	assert_output "The/at It/pps doesn't/doz not/* Fe/nn ./."
	run "$TOP/scripts/brown-tags" universal <in.tt
	assert_success
	assert_output "The/DET It/PRON doesn't/VERB not/ADV Fe/NOUN ./."
	printf 'x/zz\n' >bad.tt
	run_err 1 "^brown-tags: line 1: tag zz \(from x/zz\) is not in " "$TOP/scripts/brown-tags" universal <bad.tt
	run --separate-stderr "$TOP/scripts/brown-tags" 86 <bad.tt
	assert_failure 2
	assert_output ""
	[ "$stderr" = "usage: brown-tags 87|universal [MAP] < in.tt > out.tt" ]
}

# bound: `mrfmk BOUND_SEEDS=1 bound`, made once for the file's two bound
# tests (the same run; the second changes its table), its results copied
# to r/ here; make's output on stdout.
bound() {
	local b="$BATS_FILE_TMPDIR/bound"
	[ -e "$b.status" ] || {
		mrfmk W="$b/w" RESULTS="$b/r" BOUND_SEEDS=1 bound >"$b.out" 2>&1
		echo $? >"$b.status"
	}
	cat "$b.out"
	[ "$(cat "$b.status")" -eq 0 ] || return 1
	cp -R "$b/r" r
}

@test "mrf.mk bound: the gap between the lifted bound and the exact log Z, per token, N = 3 .. 14, never negative; the plot" {
	run bound
	assert_success
	[ "$(head -n 1 r/mrf-bound.tsv)" = "$(printf 'model\tN\tmass\tgap_per_token')" ]
	[ "$(tail -n +2 r/mrf-bound.tsv | cut -f 2 | tr '\n' ' ')" = "3 4 5 6 7 8 9 10 11 12 13 14 " ]
	awk -F'\t' 'NR > 1 && !($3 > 0 && $3 <= 1 && $4 >= 0) { exit 1 }' r/mrf-bound.tsv
	[ "$(head -c 8 r/mrf-bound.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	printf 'model\tN\tmass\tgap_per_token\nx\t3\t0.5\t0.9\n' >bad.tsv
	run_err 1 "^mrf-bound-plot: bad.tsv: line 2: N >= 1, mass in \(0, 1\], gap_per_token = -ln\(mass\) / N" \
		"$TOP/scripts/mrf-bound-plot" bad.tsv x.png
	assert_file_not_exist x.png
}

@test "mrf.mk bound: each gap recomputed by results-check from its output (ln mass, N, score's line)" {
	run bound
	assert_success
	[ "$(ls r/outputs/mrf-bound | grep -c '^syn-1-[0-9]*\.tsv$')" -eq 12 ]
	grep -q $'^-[0-9.e-]*\t7\tscore: norm check: total mass ' r/outputs/mrf-bound/syn-1-7.tsv
	# every gap checked; a gap that disagrees with its output fails the check
	checked mrf-bound gap_per_token 12 5 4 0.001
	assert_output --partial 'model=corpus 1,N=6'
}

# The lm experiment tiny: rank 4, 3 L-BFGS iterations and 2 dual steps,
# a feed-forward LM of order 3, 8 wide, 2 epochs, words seen 10 times or more (the cost of an iteration
# grows as V^2), three queries of the slice.
lmmk() {
	mrfmk LM_RANK=4 LM_EPOCHS=3 LM_DUAL_STEPS=2 MIN_COUNT=10 FF_ORDER=3 FF_EMBED=8 FF_HIDDEN=8 FF_EPOCHS=2 NEIGHBOURS=3 QUERIES="he said of" "$@"
}

@test "mrf.mk lm: brown-ladder.mk's split, the bound on valid and test checked from the outputs, neighbours of every query" {
	run lmmk lm
	assert_success
	# the same text and split as brown-ladder.mk
	run make -s -C "$TOP" -f pipelines/brown-ladder.mk W="$BATS_TEST_TMPDIR/bl" ARCHIVE="$BROWN" TRAIN_WORDS=20000 VALID_WORDS=5000 \
		"$BATS_TEST_TMPDIR/bl/train.tok" "$BATS_TEST_TMPDIR/bl/valid.tok" "$BATS_TEST_TMPDIR/bl/test.tok"
	assert_success
	for p in train valid test; do cmp "bl/$p.tok" "w/lm.$p.tok"; done
	grep -q '^train: [0-9]* sentences, 2000[0-9] words$' w/lm-split.log
	# one row a part: its tokens with </s>, the bound per token, how the MRF stopped
	run cut -f 1,2,5,10 r/mrf-lm.tsv
	assert_output "$(printf 'model\tpart\ttokens\tstopped\nmrf\tvalid\t%d\tepochs\nmrf\ttest\t%d\tepochs' \
		$(($(wc -w <w/lm.valid.tok) + $(wc -l <w/lm.valid.tok))) $(($(wc -w <w/lm.test.tok) + $(wc -l <w/lm.test.tok))))"
	awk -F'\t' 'NR > 1 && !($6 > 0 && $8 > 0 && $9 == 3) { exit 1 }' r/mrf-lm.tsv
	# an output line a text line
	[ "$(xz -dc r/outputs/mrf-lm/mrf.test.tsv.xz | wc -l)" = "$(wc -l <w/lm.test.tok)" ]
	checked mrf-lm bound_logppl 2 3 6 0.01
	assert_output --partial "row 'model=mrf,part=test', bound_logppl"
	# 3 neighbours of each query for the MRF's u, its v and the feed-forward LM, never
	# the query itself, vocabulary words, the cosines falling
	n=r/outputs/mrf-lm/neighbours.tsv
	[ "$(head -n 1 $n)" = "$(printf 'model\tquery\trank\tneighbour\tcosine')" ]
	run sh -c "tail -n +2 $n | cut -f 1,2,3 | tr '\t' ' ' | tr '\n' ';'"
	assert_output "$(for m in mrf-u mrf-v ff; do for q in he said of; do for r in 1 2 3; do printf '%s %s %s;' $m $q $r; done; done; done)"
	awk -F'\t' 'NR == FNR { v[$1] = 1; next } FNR > 1 && (!($4 in v) || $4 == $2 || $5 > 1.0005 || $5 < -1.0005 || \
		($1 $2 == k && $5 > c + 1e-9)) { exit 1 } { k = $1 $2; c = $5 }' w/lm.vocab.tsv $n
	# the baseline: a feed-forward LM on the same stream, early-stopped on
	# valid; its vectors are its input table's rows, 8 wide
	[ "$(meta w/lm.ff family)" = fflm ]
	[ "$(meta w/lm.ff embed)" = 8 ]
	[ "$(meta w/lm.ff stopped)" = epochs ]
	[ "$(wc -l <w/lm.ff.vec)" = "$(wc -l <w/lm.words)" ]
	awk -F'\t' 'NF != 8 { exit 1 }' w/lm.ff.vec
	grep -q '^Regenerated by `make -f pipelines/mrf.mk lm`' r/mrf-lm.md
	grep -q '^Baseline: `train --feedforward 3 .*a Bengio-style feed-forward LM' r/mrf-lm.md
	for q in he said of; do grep -q "^| $q | [^|]*, [^|]* | [^|]*, [^|]* | [^|]*, [^|]* |$" r/mrf-lm.md; done
	[ "$(meta w/lm.mrf iterations_done)" = 3 ]
	# a query outside the vocabulary is left out, and the report names it
	rm r/outputs/mrf-lm/neighbours.tsv r/mrf-lm.md
	run lmmk QUERIES="he zzqx said" lm
	assert_success
	[ "$(cut -f 2 r/outputs/mrf-lm/neighbours.tsv | sort -u | tr '\n' ' ')" = "he query said " ]
	grep -qx 'Left out, not in the vocabulary (words seen 10 times or more): zzqx.' r/mrf-lm.md
	# a fit cut by LM_MAXTIME: resume-lm takes it on to LM_EPOCHS in all
	rm w/lm.mrf
	run lmmk LM_MAXTIME=0.001s "$BATS_TEST_TMPDIR/w/lm.mrf"
	assert_success
	[ "$(meta w/lm.mrf stopped)" = max-time ]
	[ "$(meta w/lm.mrf iterations_done)" = 1 ]
	run lmmk resume-lm
	assert_success
	assert_output "resuming $BATS_TEST_TMPDIR/w/lm.mrf"
	[ "$(meta w/lm.mrf stopped)" = epochs ]
	[ "$(meta w/lm.mrf iterations_done)" = 3 ]
	# a finished fit is left alone
	run lmmk resume-lm
	assert_success
	assert_output ""
}

@test "word-neighbours: the nearest by cosine, a column range; a missing query, unequal files, bad usage" {
	printf 'a\nb\nc\nz\n' >w.txt
	printf '1\t0\t9\n0.9\t0.1\t-9\n0\t1\t9\n0\t0\t0\n' >v.tsv
	run "$TOP/scripts/word-neighbours" -n 2 --columns 1:2 w.txt v.tsv c a
	assert_success
	assert_output "$(printf 'c\t1\tb\t0.110\nc\t2\ta\t0.000\na\t1\tb\t0.994\na\t2\tc\t0.000')"
	run "$TOP/scripts/word-neighbours" -n 1 w.txt v.tsv a
	assert_output "$(printf 'a\t1\tc\t0.988')"
	run_err 1 "^word-neighbours: query 'q': not in w.txt$" "$TOP/scripts/word-neighbours" w.txt v.tsv a q
	run_err 1 "^word-neighbours: query 'z': its vector is zero$" "$TOP/scripts/word-neighbours" w.txt v.tsv z
	head -n 3 v.tsv >short.tsv
	run_err 1 '^word-neighbours: w.txt has 4 lines, short.tsv 3$' "$TOP/scripts/word-neighbours" w.txt short.tsv a
	printf '1\tx\n' >bad.tsv
	run_err 1 '^word-neighbours: bad.tsv: line 1: not TAB-separated numbers$' "$TOP/scripts/word-neighbours" w.txt bad.tsv a
	run --separate-stderr "$TOP/scripts/word-neighbours" --columns 3:1 w.txt v.tsv a
	assert_failure 2
	assert_output ""
	[ "$stderr" = "usage: word-neighbours [-n N] [--columns FIRST:LAST] WORDS VECTORS QUERY..." ]
}
