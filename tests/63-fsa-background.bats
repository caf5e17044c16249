#!/usr/bin/env bats
# 63-fsa-background.bats - an automaton as a factor of the background
# (featurize --background fsa:FILE or regex:PATTERN, issue 51): the
# stream and the model carry it, train's loss is over the constrained
# language, the trained model's probabilities over a finite language
# sum to 1 (enumerated) and score/gen stay inside it without being told;
# rejected sentences (file:line, --skip-rejected) and the bad-input
# paths.  The sparse normaliser itself is checked against a dense sum
# and by finite differences in tests/unit/test_fsabg.c.
# Data: fixtures/fsa/train.tok (400 random sentences over a .. f) and a
# finite language written by awk below.

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 8 --embed 8 --layers 1 --threads 1"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	# 240 sentences of the language (a|b) (c|d)? e, six strings
	awk 'BEGIN { for (i = 0; i < 240; i++) { s = i % 2 ? "a" : "b"; if (i % 3 == 1) s = s " c"; else if (i % 3 == 2) s = s " d"; if (i % 5 == 0 && i % 3 == 0) s = "a"; print s " e" } }' >"$d/lang.tok"
	featurize -q --top 10 --background 'regex:(a|b) (c|d)? e' -o "$d/c.fz" "$d/lang.tok"
	train -q $TINY --epochs 3 -s 1 -o "$d/c.llrnn" "$d/c.fz"
	printf '%s\n' 'a e' 'b e' 'a c e' 'a d e' 'b c e' 'b d e' >"$d/all.tok"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	T="$FIXTURES/fsa/train.tok"
	R='(a|b)+ c (d c)*'
	ERE='^((a|b) )+c( d c)*$'
}

@test "featurize --background regex: the stream carries the automaton (fsa/ members, meta)" {
	[ "$(meta "$D/c.fz" background_fsa)" = 'regex:(a|b) (c|d)? e' ]
	[ "$(meta "$D/c.fz" background)" = unigram:0.5 ]
	[ "$(meta "$D/c.fz" fsa.states)" -ge 3 ]
	tar tf "$D/c.fz" | grep -qx 'fsa/arcs.npy'
	tar tf "$D/c.fz" | grep -qx 'fsa/statew.npy'
	# and so does the model, which needs no option to stay constrained
	[ "$(meta "$D/c.llrnn" background_fsa)" = 'regex:(a|b) (c|d)? e' ]
	tar tf "$D/c.llrnn" | grep -qx 'fsa/states.npy'
}

@test "featurize: a corpus sentence the automaton rejects is an error naming file:line, the token and the prefix" {
	printf 'a c\nb a c d c\na d\n' >t.tok
	run -1 --separate-stderr featurize --background "regex:$R" -o out.fz t.tok
	[ -z "$output" ]
	[ ! -e out.fz ]
	[[ "$stderr" == "featurize: t.tok:3: the automaton rejects token 2 'd' after 'a' (--skip-rejected skips it)"* ]]
	printf 'a b\nc d\n' >u.tok
	vocab u.tok >u.tsv
	run -1 --separate-stderr featurize --vocab u.tsv --background "regex:$R" -o u.fz u.tok
	[ ! -e u.fz ]
	[ -z "$output" ]
	[[ "$stderr" == "featurize: u.tok:1: the automaton rejects the sentence: it may not end after 'a b'"* ]]
}

@test "featurize --skip-rejected: the rejected sentences are left out and counted, the kept ones are those grep -E matches" {
	want=$(grep -cvE "$ERE" "$T")
	kept=$(grep -cE "$ERE" "$T")
	[ "$want" -gt 300 ] && [ "$kept" -gt 0 ]
	run -0 --separate-stderr featurize -q --skip-rejected --background "regex:$R" -o s.fz "$T"
	[ "$stderr" = "featurize: $want sentences the automaton rejects skipped" ]
	[ "$(meta s.fz sentences)" = "$kept" ]
	# with --vocab the corpus is mapped as it is read, and checked so
	vocab "$T" >v.tsv
	run -0 --separate-stderr featurize -q --vocab v.tsv --skip-rejected --background "regex:$R" -o s2.fz "$T"
	[ "$stderr" = "featurize: $want sentences the automaton rejects skipped" ]
	# (the stream is being written then: -o leaves no file)
	run -1 --separate-stderr featurize --vocab v.tsv --background "regex:$R" -o s3.fz "$T"
	[ -z "$output" ]
	[ ! -e s3.fz ]
	[[ "$stderr" == "featurize: $T:1: the automaton rejects token "* ]]
	run -2 featurize --skip-rejected "$T"
}

@test "featurize --vocab: a sentence rejected late leaves no -o file, and on stdout a cut stream that train refuses" {
	vocab "$D/lang.tok" >v.tsv
	# early: the stream's first blocks are out, the ids still buffered
	{ cat "$D/lang.tok"; echo 'a a e'; } >late.tok
	# late: a million ids and more, the first ids/ member partly out
	for i in $(seq 1200); do cat "$D/lang.tok"; done >big.tok
	echo 'b e a' >>big.tok
	n=$(wc -l <big.tok)
	for t in late.tok big.tok; do
		line=$([ $t = late.tok ] && echo 241 || echo "$n")
		run -1 --separate-stderr featurize --vocab v.tsv --top 10 --background 'regex:(a|b) (c|d)? e' -o out.fz $t
		[ -z "$output" ]
		[ ! -e out.fz ]
		[ -z "$(ls -A | grep '^out\.fz')" ] # no temporary left either
		[[ "$stderr" == "featurize: $t:$line: the automaton rejects "* ]]
		rc=0
		featurize --vocab v.tsv --top 10 --background 'regex:(a|b) (c|d)? e' $t >cut.fz 2>err || rc=$?
		[ "$rc" -eq 1 ]
		[[ "$(cat err)" == "featurize: $t:$line: the automaton rejects "* ]]
		[ -s cut.fz ]
		run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 -o m.llrnn cut.fz
		[ -z "$output" ]
		[ ! -e m.llrnn ]
		case $t in
		late.tok) [[ "$stderr" == "train: cut.fz: truncated stream (ends after member "*" without the end-of-archive blocks)" ]] ;;
		*) [ "$stderr" = "train: cut.fz: member ids/000000.npy: Truncated tar archive" ] ;;
		esac
		# through a pipe too
		run -1 --separate-stderr sh -c "featurize --vocab v.tsv --top 10 --background 'regex:(a|b) (c|d)? e' $t 2>/dev/null | train -q $TINY --epochs 1 -s 1 -o m.llrnn"
		[ -z "$output" ]
		[ ! -e m.llrnn ]
		[[ "$stderr" == "train: <stdin>: "*"runcated"* ]]
	done
}

@test "train under the constraint: the probabilities of the six strings of the language sum to 1 (enumerated)" {
	score -m "$D/c.llrnn" --check-norm "$D/all.tok" >s.txt 2>s.err
	grep -q '^score: norm check: max |sum p - 1| = ' s.err
	awk '{ s += exp($1) } END { printf "%.6f\n", s; exit !(s > 0.999 && s < 1.001) }' s.txt
	# a model of the same data without the constraint leaves mass outside
	featurize -q --top 10 -o u.fz "$D/lang.tok"
	train -q $TINY --epochs 3 -s 1 -o u.llrnn u.fz
	score -m u.llrnn "$D/all.tok" | awk '{ s += exp($1) } END { printf "%.6f\n", s; exit !(s < 0.99) }'
}

@test "score: a sentence outside the language has probability 0 (-inf, zeroprobs), the others are scored" {
	printf 'a c e\na e e\nb d e\n' >in.tok
	run -0 --separate-stderr score -m "$D/c.llrnn" --check-norm in.tok
	[ "${lines[1]%%$'\t'*}" = -inf ]
	[ "${lines[0]%%$'\t'*}" != -inf ] && [ "${lines[2]%%$'\t'*}" != -inf ]
	[[ "$stderr" == *"score: 3 sentences, 9 words, 0 OOVs, 2 zeroprobs"* ]]
	[[ "$stderr" == *"score: norm check: max |sum p - 1| = "* ]]
	[[ "$stderr" != *"norm check failed"* ]]
}

@test "gen: the model trained under the constraint samples only strings of the language, without --regex" {
	gen -m "$D/c.llrnn" -s 4 -n 300 >out
	[ "$(wc -l <out)" -eq 300 ]
	run -1 grep -vxE '(a|b)( (c|d))? e' out
	gen -m "$D/c.llrnn" --beam 6 --nbest 6 --logprob >beam
	[ "$(wc -l <beam)" -eq 6 ]
	cut -f1 beam | sort >got
	sort "$D/all.tok" >want
	cmp got want
}

@test "featurize --background ngram:LM --background regex: the product, normalised by the output (score --check-norm)" {
	train -q --ngram 2 --discount-fallback -o lm.arpa "$D/lang.tok" 2>/dev/null
	featurize -q --top 10 --background ngram:lm.arpa --background 'regex:(a|b) (c|d)? e' -o p.fz "$D/lang.tok"
	[ "$(meta p.fz background)" = ngram ]
	[ "$(meta p.fz background_fsa)" = 'regex:(a|b) (c|d)? e' ]
	train -q $TINY --epochs 2 -s 1 -o p.llrnn p.fz
	score -m p.llrnn --check-norm "$D/all.tok" >s.txt 2>s.err
	[[ "$(cat s.err)" != *"norm check failed"* ]]
	awk '{ s += exp($1) } END { exit !(s > 0.999 && s < 1.001) }' s.txt
}

@test "featurize --background fsa: a weighted OpenFst automaton is a non-uniform b over the language" {
	printf '0 1 a\n0 1 b 2.0\n1 2 c\n1 2 d\n1 3 e\n2 3 e\n3\n' >w.fst
	featurize -q --top 10 --background fsa:w.fst -o w.fz "$D/lang.tok"
	[ "$(meta w.fz background_fsa)" = fsa:w.fst ]
	# an untrained network predicts its background: with the weights
	# exp(-2) on b, 'b e' takes less than 'a e'
	train -q $TINY --epochs 1 --lr 1e-9 -s 1 -o w.llrnn w.fz
	score -m w.llrnn "$D/all.tok" >s.txt
	awk '{ s += exp($1) } END { exit !(s > 0.999 && s < 1.001) }' s.txt
	a=$(sed -n 1p s.txt | cut -f1)
	b=$(sed -n 2p s.txt | cut -f1)
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a - b > 1.5) }'
}

@test "train: a validation sentence outside the language is an error naming file:line; a sentence longer than --max-len is refused" {
	printf 'a e\nb c d e\n' >v.tok
	run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 --valid v.tok -o m.llrnn "$D/c.fz"
	[ -z "$output" ]
	[ ! -e m.llrnn ]
	[[ "$stderr" == "train: v.tok:2: the automaton rejects token 3 'd' after 'b c' (a validation sentence must be in the language)"* ]]
	run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 --max-len 2 -o m.llrnn "$D/c.fz"
	[ -z "$output" ]
	[[ "$stderr" == *"a sentence of more than 2 tokens: with an automaton background sentences are not cut, raise --max-len"* ]]
}

@test "featurize: bad automata (syntax, accepting nothing, tokens the vocabulary lacks) fail with a clear message and no output" {
	printf '0 1 a\n0 x b\n1\n' >bad.fst
	run -1 --separate-stderr featurize --background fsa:bad.fst "$D/lang.tok"
	[ -z "$output" ]
	[[ "$stderr" == "featurize: bad.fst:2: "* ]]
	printf '0 1 a\n1 2 b\n' >none.fst
	run -1 --separate-stderr featurize --background fsa:none.fst "$D/lang.tok"
	[ -z "$output" ]
	[[ "$stderr" == "featurize: "*"accepts nothing"* ]]
	run -1 --separate-stderr featurize --background 'regex:a (zz|yy) e' "$D/lang.tok"
	[ -z "$output" ]
	[[ "$stderr" == "featurize: regex '"*"zz"* ]]
	[[ "$stderr" == *yy* ]]
	run -1 --separate-stderr featurize --background 'regex:a (c' "$D/lang.tok"
	[ -z "$output" ]
	[[ "$stderr" == "featurize: regex 'a (c': "* ]]
	run -2 featurize --background regex:a --background fsa:w.fst "$D/lang.tok"
	run -2 featurize --background regex: "$D/lang.tok"
	run -1 --separate-stderr featurize --background $'regex:a\ne' "$D/lang.tok"
	[ -z "$output" ]
	[ "$stderr" = "featurize: --background regex: a newline in the pattern" ]
}

@test "featurize(1) and train(1) EXAMPLES of automaton backgrounds run" {
	cp "$T" train.tok
	featurize --top 10 --skip-rejected \
		--background 'regex:(a|b)+ c (d c)*' -o c.feat train.tok 2>/dev/null
	train --hidden 8 --embed 8 -o c.llrnn c.feat 2>/dev/null
	gen -m c.llrnn -n 5 >out
	[ "$(wc -l <out)" -eq 5 ]
	run -1 grep -vxE "$ERE" out
	cp "$D/lang.tok" lang.tok
	featurize --top 10 --background 'regex:(a|b) (c|d)? e' \
		-o lang.fz lang.tok 2>/dev/null
	train --hidden 8 --embed 8 -o lang.llrnn lang.fz 2>/dev/null
	run -0 --separate-stderr score -m lang.llrnn --check-norm lang.tok
	[[ "$stderr" == *"score: norm check: max |sum p - 1| = "* ]]
	[[ "$stderr" != *"failed"* ]]
}

@test "train --feedforward, --context, --mrf: a stream with an automaton background is refused (their outputs would ignore it)" {
	for fam in "--feedforward 3" "--context 3" "--mrf"; do
		run_err 1 "^train: $D/c.fz: ${fam%% *} does not take an automaton background \\(featurize --background fsa:, regex: or grammar:\\): its output would ignore it" \
			train -q $fam -o m "$D/c.fz"
		[ ! -e m ]
	done
}

@test "train: shards must carry the same automaton" {
	vocab "$D/lang.tok" >v.tsv
	featurize -q --vocab v.tsv --top 10 --background 'regex:(a|b) (c|d)? e' -o s1.fz "$D/lang.tok"
	featurize -q --vocab v.tsv --top 10 --background 'regex:(a|b) (c|d)? e' -o s2.fz "$D/lang.tok"
	featurize -q --vocab v.tsv --top 10 --background 'regex:(a|b)+ (c|d)? e' -o s3.fz "$D/lang.tok"
	featurize -q --vocab v.tsv --top 10 -o s4.fz "$D/lang.tok"
	train -q $TINY --epochs 1 -s 1 -o ok.llrnn s1.fz s2.fz
	run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 -o m.llrnn s1.fz s3.fz
	[ -z "$output" ]
	[[ "$stderr" == "train: s3.fz: not a shard of s1.fz's corpus: automaton backgrounds differ"* ]]
	run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 -o m.llrnn s1.fz s4.fz
	[[ "$stderr" == *"background differs (an automaton in s1.fz only)"* ]]
}
