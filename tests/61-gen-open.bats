#!/usr/bin/env bats
# 61-gen-open.bats - gen with an open vocabulary (issue 14, item 5): an
# LL-RNN with a spelling model and signature masses draws unseen words
# (a signature, then a spelling of it), the softmax-plus-spelling
# baseline spells the <unk> it draws; the share of unseen words matches
# the model's unseen mass (computed independently with score), every
# drawn word has its signature's features, the log-probabilities are
# score's, --closed is the generation of a model without a spelling
# model.  Data: 300 sentences of the UD French slice, tiny networks.

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	ud_slice "$d"
	# order 3: the exact signature masses over order 4's classes took
	# four times the CPU (12 s), for the same code (gen(1)'s example below
	# runs order 4 as written)
	featurize --top 50 --ortho --suffix 2 --spelling 3 -o "$d/open.fz" "$d/train.tok" 2>/dev/null
	train -q $TINY --epochs 1 -s 3 -o "$d/open.llrnn" "$d/open.fz"
	# the baseline: a softmax RNN over the words seen twice, <unk> for the rest
	vocab --min-count 2 "$d/train.tok" >"$d/v2.tsv"
	featurize --vocab "$d/v2.tsv" --spelling 4 -o "$d/base.fz" "$d/train.tok" 2>/dev/null
	train -q --output softmax $TINY --epochs 4 --lr 0.01 -s 3 -o "$d/base.llrnn" "$d/base.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

# The model's vocabulary, one word a line.
vocab_of() {
	tar xOf "$1" vocab
}

# 1 - sum over the vocabulary but <unk> of p(v | <s> PREFIX): the mass
# the model gives the strings outside it after PREFIX, from score.
unseen_mass() {
	vocab_of "$1" | grep -v -x -e '<unk>' -e '</s>' | sed "s/^/$2 /" >cont
	echo "$2" >>cont
	score -q -m "$1" --per-token cont | awk -F'\t' '{ n = split($5, a, "="); s += exp(a[n]) } END { printf "%.8f\n", 1 - s }'
}

# The generated second words of FILE outside MODEL's vocabulary, and
# how many there are: "k n".
count_unseen() {
	vocab_of "$1" >V.txt
	awk 'NR == FNR { v[$0] = 1; next } { n++; if (NF > 1 && !($2 in v)) k++ } END { print k + 0, n }' V.txt "$2"
}

@test "gen, open LL-RNN: the share of unseen words is the model's unseen mass (binomial, 4 standard deviations)" {
	p=$(unseen_mass "$D/open.llrnn" de)
	awk -v p="$p" 'BEGIN { exit !(p > 0.02 && p < 0.98) }'
	run --separate-stderr gen -v -m "$D/open.llrnn" -p de --max-len 1 -n 1500 -s 11
	assert_success
	printf '%s\n' "$output" >g.txt
	read -r k n < <(count_unseen "$D/open.llrnn" g.txt)
	echo "unseen $k of $n, mass $p; $stderr"
	[ "$n" -eq 1500 ]
	awk -v k="$k" -v n="$n" -v p="$p" 'BEGIN { d = k - n * p; if (d < 0) d = -d; exit !(d <= 4 * sqrt(n * p * (1 - p))) }'
	echo "$stderr" | grep -q "^gen: open vocabulary (LL-RNN, a signature then its spelling): $k unseen words from [0-9]* draws of p_spell"
}

@test "gen, softmax-plus-spelling baseline: <unk> is spelled, as often as the model gives <unk>" {
	p=$(unseen_mass "$D/base.llrnn" de)
	awk -v p="$p" 'BEGIN { exit !(p > 0.02 && p < 0.98) }'
	gen -m "$D/base.llrnn" -p de --max-len 1 -n 1500 -s 12 >g.txt
	! grep -q '<unk>' g.txt || false
	read -r k n < <(count_unseen "$D/base.llrnn" g.txt)
	echo "unseen $k of $n, mass $p"
	awk -v k="$k" -v n="$n" -v p="$p" 'BEGIN { d = k - n * p; if (d < 0) d = -d; exit !(d <= 4 * sqrt(n * p * (1 - p))) }'
	# --closed: <unk> as before
	gen -m "$D/base.llrnn" --closed -p de --max-len 1 -n 300 -s 12 >c.txt
	grep -q '^de <unk>$' c.txt
	read -r k n < <(count_unseen "$D/base.llrnn" c.txt)
	[ "$k" -eq 0 ]
}

@test "gen, open LL-RNN: every drawn unseen word has its signature's features" {
	gen -m "$D/open.llrnn" -n 40 -s 5 --show-features >f.tsv
	vocab_of "$D/open.llrnn" >V.txt
	# the drawn unseen words with the features gen gives (their signature's row)
	awk -F'\t' 'NR == FNR { v[$0] = 1; next } NF == 2 && !($1 in v) { print }' V.txt f.tsv >sig.tsv
	[ "$(wc -l <sig.tsv)" -ge 10 ]
	# the same words' features computed from the strings (a closed prefix)
	gen -m "$D/open.llrnn" --closed -p "$(cut -f1 sig.tsv | paste -sd' ')" --max-len 1 --show-features |
		head -n "$(wc -l <sig.tsv)" >own.tsv
	diff sig.tsv own.tsv
}

# gen's --logprob of its sentences that ended, against score's of them
same_as_score() { # model, gen options...
	local m=$1
	shift
	gen -m "$m" --logprob --max-len 60 "$@" >out
	awk -F'\t' 'split($1, w, " ") < 60' out >ended
	[ -s ended ]
	cut -f1 ended | score -q -m "$m" --blank-lines score | cut -f1 | paste - ended |
		awk -F'\t' '{ d = $1 - $3; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }'
}

@test "gen, open models: the log-probabilities are score's, unseen words included" {
	for m in open base; do
		same_as_score "$D/$m.llrnn" -n 30 -s 3
		vocab_of "$D/$m.llrnn" >V.txt
		# some of the compared sentences hold unseen words
		cut -f1 ended | tr ' ' '\n' | awk 'NR == FNR { v[$0] = 1; next } !($0 in v) { k++ } END { exit !(k >= 3) }' V.txt -
	done
	# the baseline with <unk>s given up, and beam search: never the string <unk>
	# (score reads it as a string outside the vocabulary)
	for o in "--spell-tries 1 -n 30 -s 5" "--beam 3"; do
		# shellcheck disable=SC2086
		same_as_score "$D/base.llrnn" $o
		! grep -q '<unk>' out || false
	done
}

@test "gen, open: the same seed repeats, another differs, sentence i does not depend on -n" {
	gen -m "$D/open.llrnn" -n 12 -s 21 >a
	gen -m "$D/open.llrnn" -n 12 -s 21 >b
	cmp a b
	gen -m "$D/open.llrnn" -n 12 -s 22 >c
	run ! cmp -s a c
	gen -m "$D/open.llrnn" -n 3 -s 21 | cmp - <(head -3 a)
	gen -m "$D/open.llrnn" -n 40 -s 21 | head -12 | cmp - a
	read -r k n < <(count_unseen "$D/open.llrnn" <(tr ' ' '\n' <a | sed 's/^/x /'))
	[ "$k" -ge 1 ]
}

@test "gen --closed: the generation of the same model without a spelling model" {
	featurize --top 50 --ortho --suffix 2 -o plain.fz "$D/train.tok" 2>/dev/null
	train -q $TINY --epochs 1 -s 3 -o plain.llrnn plain.fz
	# train --closed: the weights a stream without the spelling model gives
	train -q $TINY --epochs 1 -s 3 --closed -o closed.llrnn "$D/open.fz"
	gen -m plain.llrnn -n 20 -s 4 --logprob >want
	gen -m closed.llrnn --closed -n 20 -s 4 --logprob >got
	cmp want got
	# and it is not the open generation
	gen -m closed.llrnn -n 20 -s 4 --logprob >open
	run ! cmp -s want open
	# nor the open model's (trained open, its weights differ)
	gen -m "$D/open.llrnn" --closed -n 20 -s 4 --logprob >openw
	run ! cmp -s want openw
}

@test "gen, open: --spell-tries bounds the draws; a signature given up is drawn again without it" {
	gen -v -m "$D/open.llrnn" -n 20 -s 5 --spell-tries 1 --show-features >out 2>err
	cat err
	grep -q '^gen: open vocabulary (LL-RNN, a signature then its spelling): [0-9]* unseen words from [0-9]* draws of p_spell; [1-9][0-9]* signatures given up after 1 draws$' err
	[ "$(grep -c '^$' out)" -eq 20 ]
	# with enough tries, fewer give-ups
	gen -v -m "$D/open.llrnn" -n 20 -s 5 --show-features 2>err2 >/dev/null
	awk '{ print $(NF - 6) }' err err2 | paste -sd' ' | awk '{ exit !($2 < $1) }'
	# the baseline: a <unk> not spelled in one draw is drawn again without it
	gen -v -m "$D/base.llrnn" -n 30 -s 5 --spell-tries 1 >out 2>err
	cat err
	grep -q '^gen: open vocabulary (<unk> spelled from p_spell): [0-9]* unseen words from [0-9]* draws of p_spell; [1-9][0-9]* <unk>s given up after 1 draws$' err
	[ "$(grep -c '^$' out)" -eq 0 ] && [ "$(wc -l <out)" -eq 30 ]
	! grep -q '<unk>' out || false
	run_err 2 'spell-tries' gen -m "$D/open.llrnn" --spell-tries 0
	run_err 2 'spell-tries' gen -m "$D/open.llrnn" --spell-tries x
}

@test "gen, open: --greedy, --beam and --no-unk stay in the vocabulary" {
	vocab_of "$D/open.llrnn" >V.txt
	for o in --greedy "--beam 3" "--no-unk -n 30 -s 2"; do
		# shellcheck disable=SC2086
		gen -m "$D/open.llrnn" $o --max-len 30 | tr ' ' '\n' | sed '/^$/d' >w
		awk 'NR == FNR { v[$0] = 1; next } !($0 in v) { print; bad = 1 } END { exit bad }' V.txt w
	done
	# the baseline's <unk> is not a word of the open vocabulary either
	vocab_of "$D/base.llrnn" | grep -v -x '<unk>' >V2.txt
	for o in "--no-unk -n 30 -s 2" --greedy "--beam 3"; do
		# shellcheck disable=SC2086
		gen -m "$D/base.llrnn" $o --max-len 30 | tr ' ' '\n' | sed '/^$/d' >w
		awk 'NR == FNR { v[$0] = 1; next } !($0 in v) { print; bad = 1 } END { exit bad }' V2.txt w
	done
}

@test "gen and score, open: random valid UTF-8 never gives -inf or nan (LL-RNN and baseline)" {
	LC_ALL=C awk -v seed=7 -v lines=60 -f "$BATS_TEST_DIRNAME/fixtures/score/random-utf8.awk" >rnd.txt
	iconv -f UTF-8 -t UTF-8 rnd.txt >/dev/null
	for m in open base; do
		score -m "$D/$m.llrnn" --per-token rnd.txt >out 2>err
		[ "$(wc -l <out)" -eq "$(wc -l <rnd.txt)" ]
		! grep -q -i -e inf -e nan out err || false
		# the lines as prefixes: finite log-probabilities
		gen -m "$D/$m.llrnn" --prefix-file rnd.txt --max-len 3 -s 1 --logprob >g 2>err
		[ "$(wc -l <g)" -eq "$(wc -l <rnd.txt)" ]
		! cut -f2 g | grep -q -i -e inf -e nan || false
	done
}

@test "gen(1) EXAMPLES: the open LL-RNN's sentences run as written (tiny sizes)" {
	cp "$D/train.tok" train.tok
	featurize --top 50 --ortho --suffix 2 --spelling 4 -o open.fz train.tok 2>/dev/null
	train -q $TINY --epochs 1 -o open.llrnn open.fz
	gen -v -m open.llrnn -n 3 -s 5 --logprob --show-features >out 2>err
	[ "$(grep -c '^$' out)" -eq 3 ]
	grep -q '^gen: open vocabulary (LL-RNN, a signature then its spelling): ' err
	# the page says what the examples do
	grep -q 'gen -v -m open.llrnn -n 3 -s 5 --logprob --show-features' "$TOP/man/gen.1"
}

@test "score, open LL-RNN: --threads N --batch B scores groups at once, the one-thread numbers up to float rounding" {
	tok --from conllu -l "$UD/fr_sequoia-ud-test.conllu.gz" | head -n 80 >test.tok
	score -m "$D/open.llrnn" --per-token --batch 16 --threads 1 test.tok >one 2>err1
	grep -q '^score: open vocabulary (LL-RNN)' err1
	grep -q '^score: OOV tokens: [1-9]' err1
	for n in 2 3; do
		score -m "$D/open.llrnn" --per-token --batch 16 --threads $n test.tok >many 2>err
		[ "$(wc -l <many)" -eq 80 ]
		# the same tokens, OOV counts and numbers (the groups' products
		# may round the fourth decimal differently, as for a closed model)
		paste one many | awk -F'\t' '{ h = NF / 2; if ($2 != $(h + 2) || $3 != $(h + 3)) bad = 1
			for (i = 1; i <= h; i++) { a = $i; b = $(h + i); sub(/.*=/, "", a); sub(/.*=/, "", b)
				d = a - b; if (d < 0) d = -d; if (d > 1e-3 * (i == 1 ? $2 : 1)) { print NR, i, $i, $(h + i); bad = 1 } } } END { exit bad }'
		grep '^score: OOV tokens' err1 | cut -d, -f1,2 >o1
		grep '^score: OOV tokens' err | cut -d, -f1,2 | cmp o1 -
	done
}
