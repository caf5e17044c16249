#!/usr/bin/env bats
# 52-model-api.bats - the one model interface (issue 45): a program that
# links libllrnn and uses only llr_model_open, llr_model_describe and
# llr_model_score (tests/api/score-sentence.c) gets exactly score(1)'s
# per-token numbers and OOV counts, OOV words included: for an LL-RNN
# (an unseen word's input features), an open-vocabulary LL-RNN (its own
# features and spelling), a softmax RNN with a spelling model (<unk>'s
# share) and an ARPA n-gram.  Tiny models on the UD French slice.

load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1 --epochs 1 -s 3"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	ud_slice "$d"
	featurize --top 50 --conllu "$UD/fr_sequoia-ud-train.conllu.gz" -l --ortho --suffix 2 -o "$d/f.fz" "$d/train.tok" 2>/dev/null
	train -q $TINY -o "$d/ll.llrnn" "$d/f.fz"
	vocab --min-count 2 "$d/train.tok" >"$d/cut.tsv"
	featurize --vocab "$d/cut.tsv" --top 50 --ortho --suffix 2 --spelling 3 --signature-samples 20000 \
		-o "$d/open.fz" "$d/train.tok" 2>/dev/null
	train -q $TINY -o "$d/open.llrnn" "$d/open.fz"
	featurize --vocab "$d/cut.tsv" --spelling 4 -o "$d/base.fz" "$d/train.tok" 2>/dev/null
	train -q $TINY --output softmax -o "$d/spell.llrnn" "$d/base.fz"
	train -q --ngram 3 -o "$d/lm.arpa" "$d/train.tok"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	API="$TOP/build/tests/api/score-sentence"
	if [ ! -x "$API" ]; then
		echo "build/tests/api/score-sentence not built (make builds it)" >&2
		return 1
	fi
	# zorglub and 4817 are in no vocabulary here
	printf '%s\n' "le zorglub mange 4817 pommes ." "la ville de paris" >in.tok
}

# score's per-token fields from the third on (OOVs, word=logp) against the
# program's; describe's line into desc.
same_as_score() {
	score -q -m "$1" --per-token in.tok | cut -f3- >want
	"$API" "$1" <in.tok >got 2>desc
	diff want got
	# the sentence with OOVs has some, and its scores are finite
	[ "$(head -1 got | cut -f1)" -ge 1 ]
	! grep -q 'inf\|nan' got
}

@test "llr_model_score: an LL-RNN, unseen words through their input features, as score" {
	same_as_score "$D/ll.llrnn"
	[ "$(cat desc)" = "model rnnlm $(tar xOf "$D/ll.llrnn" meta | sed -n 's/^vocab_size=//p') 0" ]
}

@test "llr_model_score: an open-vocabulary LL-RNN (its own features and spelling), as score" {
	same_as_score "$D/open.llrnn"
	[[ "$(cat desc)" == "model rnnlm "*" 2" ]]
}

@test "llr_model_score: a softmax RNN with a spelling model (<unk>'s share), as score" {
	same_as_score "$D/spell.llrnn"
	[[ "$(cat desc)" == "model rnnlm "*" 1" ]]
}

@test "llr_model_score: an ARPA n-gram, as score" {
	same_as_score "$D/lm.arpa"
	[[ "$(cat desc)" == "ngram ngram "*" 0" ]]
}

@test "llr_model_open: a file that is no model says so" {
	echo "not a model" >bad.llrnn
	run "$API" bad.llrnn </dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == "score-sentence: bad.llrnn: "* ]]
}
