#!/usr/bin/env bats
# Features of any string (issue 14): the row featurize gives a word, and
# the row llr_lexicon_any_row computes from the features stream for the
# same string as if featurize had never seen it, agree word by word; the
# model carries the lexicon entries and the hunspell dictionary, so score
# and gen featurize an unseen word without the original files.

load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
	Z="$FIXTURES/featurize"
	O="$FIXTURES/open"
	CMP="$TOP/build/tests/test_anyword"
	[ -x "$CMP" ] || skip "build/tests/test_anyword not built (make check builds it)"
}

# featurize ARGS twice (stream and --dump), then compare every row.
same_rows() {
	featurize "$@" -o s.llrnn 2>/dev/null
	featurize "$@" --dump >d.tsv 2>/dev/null
	run "$CMP" s.llrnn d.tsv
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok 1 - "*" words, 0 rows differ"* ]]
}

@test "open features: featurize's rows and any_row agree (lexicons, mini hunspell, every extractor)" {
	llrnn_hs=$(featurize --hunspell "$O/mini" "$O/tiny.tok" --dump 2>&1 >/dev/null || true)
	hs=(--hunspell "$O/mini")
	[[ "$llrnn_hs" == *"without hunspell"* ]] && hs=()
	same_rows --top 3 --ortho --suffix 2 --char-ngrams 2-3 "${hs[@]}" --conllu "$Z/tiny.conllu" \
		--lexicon "$Z/tiny.lex" --tagged "$Z/tiny.tagged" "$O/tiny.tok"
	# the stream holds the lexicon entries, among them a word outside the vocabulary
	tar xOf s.llrnn any/words | grep -qx chien
}

@test "open features: agree with -l, --top 0 and --min-feature-count 2" {
	same_rows -l --top 0 --min-feature-count 2 --ortho --suffix 3 --conllu "$Z/tiny.conllu" "$O/tiny.tok"
}

@test "open features: agree on the UD French slice (CoNLL-U tags, --ortho --suffix 3, hunspell-fr when installed)" {
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -300 >train.tok
	hs=()
	[ -r /usr/share/hunspell/fr_FR.dic ] && hs=(--hunspell /usr/share/hunspell/fr_FR)
	same_rows --top 100 -l --conllu "$UD/fr_sequoia-ud-dev.conllu.gz" --ortho --suffix 3 "${hs[@]}" train.tok
}

@test "open features: the model carries them; gen shows an unseen word's lexicon entry and hunspell analyses with the files gone" {
	cp "$O/mini.aff" "$O/mini.dic" .
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	featurize --top 3 --ortho --suffix 2 --hunspell ./mini --lexicon "$Z/tiny.lex" "$O/tiny.tok" -o s.llrnn 2>/dev/null
	rm mini.aff mini.dic
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o m.llrnn s.llrnn
	gen -m m.llrnn -s 1 -n 1 --show-features -p "chien zorgs 4817" >out
	sed -n 1p out | grep -Fqx $'chien\tTOP:@notTop POS:NOUN animal ORTH:len5-7 SUF:n$'
	sed -n 2p out | grep -Fqx $'zorgs\tTOP:@notTop HS:po:noun HS:is:plur ORTH:len5-7 SUF:s$'
	sed -n 3p out | grep -Fqx $'4817\tTOP:@notTop ORTH:len3-4 ORTH:number ORTH:has-digit'
	# score reads them too (an unseen word's input row), and gives finite numbers
	echo "le chien boit" | score -q -m m.llrnn | awk -F'\t' '$1 ~ /^-[0-9]+\.[0-9]+$/ { ok = 1 } END { exit !ok }'
}

@test "open features: an embedded dictionary that cannot be unpacked is an error, not a silent row" {
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	featurize --top 3 --suffix 2 --hunspell "$O/mini" "$O/tiny.tok" -o s.llrnn 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o m.llrnn s.llrnn
	TMPDIR=/nonexistent/dir run_err 1 "hunspell dictionary mini.dic: .*temporary directory" \
		gen -m m.llrnn -s 1 -n 1 --show-features -p "zorgs"
}
