#!/usr/bin/env bats
# 04-results-check.bats - scripts/results-check, which recomputes the test
# figures of results/*.tsv from the outputs committed under
# results/outputs/, and scripts/paired-bootstrap, the paired interval of
# a claimed difference (issue 47).  Each runs on a small results folder
# made here, with outputs in score(1)'s per-line layout.

load test_helper

setup() {
	skip_sanitized "Python only, no C of ours"
}

# A results folder: table "lm" with two models, A over seeds 1 and 2, B
# over seed 1, three sentences each; A's mean and sd, B's value.
mk_results() {
	mkdir -p res/outputs/lm
	printf '%s\t%s\t0\n' -10.0 5 -4.0 2 -6.0 3 >res/outputs/lm/a-s1.tsv
	printf '%s\t%s\t0\n' -11.0 5 -4.5 2 -6.5 3 >res/outputs/lm/a-s2.tsv
	printf '%s\t%s\t0\n' -12.0 5 -5.0 2 -7.0 3 | xz >res/outputs/lm/b-s1.tsv.xz
	# A: 20/10 = 2.0 and 22/10 = 2.2, mean 2.1, sd 0.1414; B: 24/10 = 2.4
	printf 'model\ttest\ttest_sd\na\t2.100\t0.14\nb\t2.40\t\n' >res/lm.tsv
	printf 'table\tstatus\ttest_columns\tnote\nlm\tchecked\ttest,test_sd\t\n' >res/outputs/TABLES.tsv
	printf 'row\tcolumn\tstat\tmetric\tfiles\n' >res/outputs/lm/checks.tsv
	printf 'model=a\ttest\tmean\tlogppl\ta-s1.tsv a-s2.tsv\n' >>res/outputs/lm/checks.tsv
	printf 'model=a\ttest_sd\tsd\tlogppl\ta-s1.tsv a-s2.tsv\n' >>res/outputs/lm/checks.tsv
	printf 'model=b\ttest\tvalue\tlogppl\tb-s1.tsv.xz\n' >>res/outputs/lm/checks.tsv
}

@test "results-check: the tree's own results pass, every table checked or pending" {
	run "$TOP/scripts/results-check"
	assert_success
	assert_line --regexp '^results-check: [0-9]+ figures checked, [0-9]+ tables pending$'
	for t in "$TOP"/results/*.tsv; do
		assert_line --regexp "^$(basename "$t" .tsv) +(pending|[0-9]+ figures)"
	done
}

@test "results-check: figures recomputed from the outputs agree to the printed precision" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line --regexp '^lm +3 figures, ok$'
	assert_line 'results-check: 3 figures checked, 0 tables pending'
}

@test "results-check: a cell that the outputs do not give fails, naming row, column and both figures" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	sed -i 's/^b\t2.40/b\t2.41/' res/lm.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
	assert_line --partial "lm.tsv: row 'model=b', test: the table says 2.41, the outputs give 2.400000"
	# one decimal more than the outputs support is a mismatch too
	mk_results
	sed -i 's/^a\t2.100/a\t2.101/' res/lm.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
}

@test "results-check: an unchecked cell, an unlisted table, a missing output and a bad selector fail" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	sed -i '$d' res/outputs/lm/checks.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
	assert_line --partial 'lm.tsv: row model=b,test=2.40,test_sd=, test = 2.40: no check recomputes it'
	mk_results
	printf 'x\ttest\n' >res/other.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
	assert_line --partial 'other.tsv: not in outputs/TABLES.tsv'
	mk_results
	rm res/outputs/lm/a-s2.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
	assert_line --partial 'a-s2.tsv'
	mk_results
	sed -i 's/^model=b\t/model=c\t/' res/outputs/lm/checks.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
	assert_line --partial "row 'model=c' matches 0 rows, not 1"
}

@test "results-check: a pending table is listed with its reason and not checked" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	printf 'table\tstatus\ttest_columns\tnote\nlm\tpending\ttest\tnot regenerated yet\n' >res/outputs/TABLES.tsv
	sed -i 's/^b\t2.40/b\t9.99/' res/lm.tsv
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line --regexp '^lm +pending: not regenerated yet$'
	assert_line 'results-check: 0 figures checked, 1 tables pending'
}

@test "results-check: a pending table may have no .tsv yet (not run); a checked one may not" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	printf 'table\tstatus\ttest_columns\tnote\nlm\tpending\ttest\tnot regenerated yet\nnew\tpending\ttest\tready, not run\n' \
		>res/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line --regexp '^new +pending, not run: ready, not run$'
	assert_line 'results-check: 0 figures checked, 2 tables pending'
	sed -i 's/^new\tpending/new\tchecked/' res/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
	assert_line --partial 'outputs/TABLES.tsv: new: no new.tsv'
}

@test "paired-bootstrap: a constant per-sentence shift gives that difference and a degenerate interval" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	# B is A's seed 1 with every token 0.1 nats worse: diff exactly -0.1
	awk 'BEGIN { FS = OFS = "\t" } { $1 = $1 - 0.1 * $2; print }' res/outputs/lm/a-s1.tsv >b.tsv
	run "$TOP/scripts/paired-bootstrap" --samples 500 -a res/outputs/lm/a-s1.tsv -b b.tsv
	assert_success
	assert_line --index 0 $'metric\ta\tb\tdiff\tlo\thi\tsamples\truns_a\truns_b\titems\tsignificant'
	assert_line --index 1 $'logppl\t2.0000\t2.1000\t-0.1000\t-0.1000\t-0.1000\t500\t1\t1\t3\tyes'
	# the same runs against themselves: no difference
	run "$TOP/scripts/paired-bootstrap" --samples 500 -a res/outputs/lm/a-s1.tsv -a res/outputs/lm/a-s2.tsv \
		-b res/outputs/lm/a-s1.tsv -b res/outputs/lm/a-s2.tsv
	assert_success
	assert_line --index 1 --regexp $'^logppl\t2.1000\t2.1000\t0.0000\t0.0000\t0.0000\t500\t2\t2\t3\tno$'
}

@test "paired-bootstrap: the interval repeats with its seed and covers the observed difference" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	run "$TOP/scripts/paired-bootstrap" -a res/outputs/lm/a-s1.tsv -a res/outputs/lm/a-s2.tsv -b res/outputs/lm/b-s1.tsv.xz
	assert_success
	first=${lines[1]}
	IFS=$'\t' read -r _ a b d lo hi _ <<<"$first"
	[ "$a" = 2.1000 ] && [ "$b" = 2.4000 ] && [ "$d" = -0.3000 ]
	awk -v lo="$lo" -v hi="$hi" -v d="$d" 'BEGIN { exit !(lo <= d && d <= hi && lo < hi) }'
	run "$TOP/scripts/paired-bootstrap" -a res/outputs/lm/a-s1.tsv -a res/outputs/lm/a-s2.tsv -b res/outputs/lm/b-s1.tsv.xz
	assert_equal "${lines[1]}" "$first"
}

@test "paired-bootstrap: different test sets, unreadable files and bad usage fail with a message" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	head -n 2 res/outputs/lm/a-s1.tsv >short.tsv
	run_err 1 'paired-bootstrap: A has 3 items and B 2: not the same test set' \
		"$TOP/scripts/paired-bootstrap" -a res/outputs/lm/a-s1.tsv -b short.tsv
	run_err 1 'paired-bootstrap: .*nothing.tsv' "$TOP/scripts/paired-bootstrap" -a res/outputs/lm/a-s1.tsv -b nothing.tsv
	printf 'x\ty\n' >bad.tsv
	run_err 1 'paired-bootstrap: bad.tsv:1: expected numbers' "$TOP/scripts/paired-bootstrap" -a bad.tsv -b bad.tsv
	run "$TOP/scripts/paired-bootstrap" --metric nats -a bad.tsv -b bad.tsv
	assert_equal "$status" 2
	run "$TOP/scripts/paired-bootstrap" -a bad.tsv
	assert_equal "$status" 2
	run "$TOP/scripts/paired-bootstrap" --metric 'ratio:3*100' -a bad.tsv -b bad.tsv
	assert_equal "$status" 2
	assert_output --partial 'the columns after : are not two column numbers'
	run_err 1 'paired-bootstrap: .*a-s1.tsv:1: expected numbers in columns 2 and 4' \
		"$TOP/scripts/paired-bootstrap" --metric 'ratio:2,4' -a res/outputs/lm/a-s1.tsv -b res/outputs/lm/a-s1.tsv
}

@test "results-check: a metric over other columns (:C,C) checks a table from them" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	# columns 3 and 4: 1 + 0 + 1 errors over 4 + 2 + 4 = 20 percent
	printf '0\t1\t1\t4\n1\t1\t0\t2\n1\t1\t1\t4\n' >res/outputs/lm/g-s1.tsv
	printf 'model\ttest\ttest_sd\tper\na\t2.100\t0.14\t\nb\t2.40\t\t20.0\n' >res/lm.tsv
	printf 'table\tstatus\ttest_columns\tnote\nlm\tchecked\ttest,test_sd,per\t\n' >res/outputs/TABLES.tsv
	printf 'model=b\tper\tvalue\tratio:3,4*100\tg-s1.tsv\n' >>res/outputs/lm/checks.tsv
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line 'results-check: 4 figures checked, 0 tables pending'
	sed -i 's/20.0$/21.0/' res/lm.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure 1
	assert_output --partial "the table says 21.0, the outputs give 20.000000"
}

@test "results-check and paired-bootstrap: match compares two columns as strings (score --task's gold and predicted)" {
	cd "$BATS_TEST_TMPDIR"
	mk_results
	# seed 1: 3 of 4 right, seed 2: 2 of 4 (labels are strings: "10" is not "10.0")
	printf 'CONJ\tcontrast\tcontrast\nCONJ\ttime\tresult\nORDER\t1\t1\nORDER\t10\t10\n' >res/outputs/lm/t-s1.tsv
	printf 'CONJ\tcontrast\tcontrast\nCONJ\ttime\tresult\nORDER\t1\t1\nORDER\t10\t10.0\n' | xz >res/outputs/lm/t-s2.tsv.xz
	printf 'model\ttest\ttest_sd\tacc\tacc_sd\na\t2.100\t0.14\t62.50\t17.68\nb\t2.40\t\t\t\n' >res/lm.tsv
	printf 'table\tstatus\ttest_columns\tnote\nlm\tchecked\ttest,test_sd,acc,acc_sd\t\n' >res/outputs/TABLES.tsv
	printf 'model=a\tacc\tmean\tmatch*100\tt-s1.tsv t-s2.tsv.xz\n' >>res/outputs/lm/checks.tsv
	printf 'model=a\tacc_sd\tsd\tmatch:2,3*100\tt-s1.tsv t-s2.tsv.xz\n' >>res/outputs/lm/checks.tsv
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line 'results-check: 5 figures checked, 0 tables pending'
	sed -i 's/62.50/75.00/' res/lm.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure 1
	assert_output --partial "the table says 75.00, the outputs give 62.500000"
	# a line without the columns is named
	printf 'CONJ\tcontrast\n' >res/outputs/lm/t-s1.tsv
	run_err 1 'paired-bootstrap: res/outputs/lm/t-s1.tsv:1: expected columns 2 and 3' \
		"$TOP/scripts/paired-bootstrap" --metric match -a res/outputs/lm/t-s1.tsv -b res/outputs/lm/t-s2.tsv.xz
	# paired: A right where B is wrong on one item of four, 25 points
	printf 'ORDER\t1\t1\nORDER\t1\t1\nORDER\t0\t0\nORDER\t0\t0\n' >a.tsv
	printf 'ORDER\t1\t1\nORDER\t1\t0\nORDER\t0\t0\nORDER\t0\t0\n' >b.tsv
	run "$TOP/scripts/paired-bootstrap" --metric 'match*100' -a a.tsv -b b.tsv
	assert_success
	assert_line --index 1 --regexp "$(printf '^match\\*100\t100.0000\t75.0000\t25.0000\t0.0000\t')"
}

@test "runs.diffs_in_words: each interval in words, significant where it excludes 0, better or worse by the figure's direction" {
	cd "$BATS_TEST_TMPDIR"
	/usr/bin/python3 - "$TOP/scripts" >got <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import runs
d = lambda a, b, fig, diff, lo, hi, sig: dict(a=a, b=b, figure=fig, diff=diff, lo=lo, hi=hi, significant=sig)
for line in runs.diffs_in_words(
        [d('x', 'y', 'wer', '-0.5', '-0.9', '-0.1', 'yes'), d('x', 'y', 'll', '-0.5', '-0.9', '-0.1', 'yes'),
         d('y', 'x', 'll', '0.2', '-0.1', '0.5', 'no')],
        {'x': 'the model x', 'y': 'the model y'}, {'wer': 'WER', 'll': 'LL'}, lower_better=('wer',)):
    print(line)
PY
	cat >want <<'TXT'
- The model x against the model y, WER: -0.5000 [-0.9000, -0.1000], better for the model x, significant (the interval excludes 0).
- The model x against the model y, LL: -0.5000 [-0.9000, -0.1000], worse for the model x, significant (the interval excludes 0).
- The model y against the model x, LL: +0.2000 [-0.1000, +0.5000], not significant (the interval contains 0).
TXT
	diff want got
}
