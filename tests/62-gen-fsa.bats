#!/usr/bin/env bats
# gen --fsa and --regex (issue 51, the mask-only mode): every sentence of
# every decoding mode is accepted by an independent recogniser (grep -E
# on the joined tokens, or an awk automaton), the automaton's weights
# shape the draws, the masked distribution sums to 1 over a finite
# language, --max-len is honoured by steering towards a final state, and
# every bad automaton or pattern is refused with its reason.  Tiny models
# (an LSTM, a 3-gram, a feed-forward and a log-linear LM) trained on
# fixtures/fsa/train.tok, 400 random sentences over the tokens a .. f.

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local m="$BATS_FILE_TMPDIR" t="$FIXTURES/fsa/train.tok"
	featurize --top 10 "$t" >"$m/f.llr" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 2 -s 1 -o "$m/model.llrnn" "$m/f.llr"
	train -q --ngram 3 --discount-fallback -o "$m/lm.arpa" "$t" 2>/dev/null
	train -q --feedforward 3 --hidden 8 --embed 8 --epochs 1 -s 1 -o "$m/ff.llrnn" "$m/f.llr"
	train -q --context 2 --epochs 1 -s 1 -o "$m/loglm.llrnn" "$m/f.llr"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
	R='(a|b)+ c (d c)*'
	ERE='^((a|b) )+c( d c)*$'
}

# count_bad FILE: lines of FILE's first column that ERE does not match.
count_bad() {
	cut -f1 "$1" | grep -cvE "$ERE" || true
}

@test "gen --regex: 200 sentences of each decoding mode all match the pattern (grep -E)" {
	for mode in "-n 200" "-n 200 --top-k 2" "-n 200 --top-p 0.5" "-n 200 --temperature 2" \
		"--greedy" "--beam 4 --nbest 4" "-n 200 --max-len 3" "--beam 3 --nbest 2 --max-len 2"; do
		gen -m "$M/model.llrnn" -s 2 $mode --regex "$R" >out
		n=$(wc -l <out)
		case "$mode" in
		-n*) [ "$n" -eq 200 ] ;;
		--greedy) [ "$n" -eq 1 ] ;;
		--beam\ 4*) [ "$n" -eq 4 ] ;;
		*) [ "$n" -eq 2 ] ;; # a c and b c: all the language has within 2 words
		esac
		[ "$(count_bad out)" -eq 0 ] || { echo "$mode"; grep -vE "$ERE" out | head; false; }
	done
	# without the constraint the same model strays from the language
	gen -m "$M/model.llrnn" -s 2 -n 200 >free
	[ "$(count_bad free)" -gt 150 ]
	# --max-len is a bound on the words, </s> comes after them
	gen -m "$M/model.llrnn" -s 3 -n 200 --max-len 3 --regex "$R" | awk 'NF > 3 { bad = 1 } END { exit bad }'
	# the 3-gram model, sampled and greedy
	gen -m "$M/lm.arpa" -s 4 -n 200 --regex "$R" >out
	[ "$(wc -l <out)" -eq 200 ] && [ "$(count_bad out)" -eq 0 ]
	gen -m "$M/lm.arpa" --greedy --max-len 5 --regex "$R" >out
	[ "$(count_bad out)" -eq 0 ]
	# the feed-forward and log-linear (maximum-entropy) models, sampled and beam-searched
	for m in ff loglm; do
		gen -m "$M/$m.llrnn" -s 4 -n 200 --regex "$R" >out
		[ "$(wc -l <out)" -eq 200 ] && [ "$(count_bad out)" -eq 0 ]
		gen -m "$M/$m.llrnn" --beam 4 --nbest 4 --max-len 3 --regex "$R" >out
		[ "$(wc -l <out)" -eq 4 ] && [ "$(count_bad out)" -eq 0 ]
	done
}

# An awk recogniser of a b* c (d | e f), the automaton of abc.fst.
accepted() {
	awk '{ s = 0
	       for (i = 1; i <= NF; i++) {
	         t = $i
	         if (s == 0 && t == "a") s = 1
	         else if (s == 1 && t == "b") s = 1
	         else if (s == 1 && t == "c") s = 2
	         else if (s == 2 && t == "d") s = 3
	         else if (s == 2 && t == "e") s = 4
	         else if (s == 4 && t == "f") s = 3
	         else { s = -1; break }
	       }
	       if (s != 3) { print "rejected: " $0; bad = 1 } }
	     END { exit bad }' "$1"
}

@test "gen --fsa: an OpenFst text automaton, sampled, greedy and beam; its weights shape the draws" {
	cat >abc.fst <<-'EOF'
		# a b* c, then d or e f
		0	1	a
		1 1 b b
		1 2 c
		2 3 d
		2 4 e 0
		4 3 f f 0
		3
		9 10 a
	EOF
	for mode in "-n 200" "-n 200 --top-k 1" "-n 200 --top-p 0.3" "--greedy" "--beam 5 --nbest 5" "-n 200 --max-len 3"; do
		gen -m "$M/model.llrnn" -s 5 $mode --fsa abc.fst >out
		[ -s out ]
		accepted out
	done
	# the recogniser rejects what it should: the test can fail
	printf 'a b c e\n' >wrong
	run ! accepted wrong
	# a cost of 30 on d makes it e^-30 times less likely than without
	gen -m "$M/model.llrnn" -s 6 -n 200 --fsa abc.fst >plain
	grep -q ' d$' plain
	sed 's/^2 3 d$/2 3 d 30/' abc.fst >heavy.fst
	gen -m "$M/model.llrnn" -s 6 -n 200 --fsa heavy.fst >heavy
	accepted heavy
	run ! grep -q ' d$' heavy
	# a final weight weighs </s>: a b* with a cost of 30 on stopping runs
	# to --max-len, where </s> is the only way left
	printf '0 1 a\n1 1 b\n1\n' >ab.fst
	gen -m "$M/model.llrnn" -s 6 -n 100 --max-len 5 --fsa ab.fst | sort | uniq -c | awk '{ print $1 > "/dev/stderr" } END { exit NR < 2 }'
	printf '0 1 a\n1 1 b\n1 30\n' >ab.fst
	gen -m "$M/model.llrnn" -s 6 -n 100 --max-len 5 --fsa ab.fst | sort -u >out
	[ "$(cat out)" = "a b b b b" ]
}

@test "gen --regex: the masked distribution sums to 1 over a finite language (every sentence from the beam)" {
	# 6 sentences: a e, b e, a c e, a d e, b c e, b d e
	for m in model.llrnn; do
		gen -m "$M/$m" --beam 20 --nbest 6 --regex '(a|b) (c|d)? e' --logprob >all
		[ "$(wc -l <all)" -eq 6 ]
		[ "$(cut -f1 all | sort -u | wc -l)" -eq 6 ]
		awk -F'\t' '{ s += exp($2) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-3) { print s; exit 1 } }' all
	done
	# sampling reports the same figures for the sentences it draws
	gen -m "$M/model.llrnn" -s 7 -n 50 --regex '(a|b) (c|d)? e' --logprob | sort -u >drawn
	join -t "$(printf '\t')" drawn <(sort all) | awk -F'\t' '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3) bad = 1 } END { exit bad }'
}

@test "gen --regex: a prefix is read by the automaton and continued inside it" {
	gen -m "$M/model.llrnn" -s 8 -n 50 -p "a b" --regex "$R" >out
	[ "$(wc -l <out)" -eq 50 ]
	[ "$(count_bad out)" -eq 0 ]
	[ "$(grep -c '^a b ' out)" -eq 50 ]
	run_err 1 "the prefix: the automaton rejects word 2 'd'" gen -m "$M/model.llrnn" -p "a d" --regex "$R"
	run_err 1 "rejects word 1 'zz' \\(not in the vocabulary\\)" gen -m "$M/model.llrnn" -p "zz" --regex "$R"
}

@test "gen --regex --logprob: a prefix's words are masked and renormalised as the generated ones, in every family" {
	# a language of one sentence: every word of it, the prefix's too, has p 1
	for m in model.llrnn lm.arpa ff.llrnn loglm.llrnn; do
		gen -m "$M/$m" -s 1 -n 3 -p "a b" --regex 'a b c' --logprob >one
		[ "$(cut -f1 one | sort -u)" = "a b c" ] || { echo "$m"; cat one; false; }
		awk -F'\t' '{ d = $2 < 0 ? -$2 : $2; if (d > 1e-4) bad = 1 } END { exit bad }' one || { echo "$m"; cat one; false; }
	done
	# the sentences that continue a and those that continue b sum to 1
	for m in model.llrnn ff.llrnn loglm.llrnn; do
		gen -m "$M/$m" --beam 20 --nbest 3 -p a --regex '(a|b) (c|d)? e' --logprob >all
		gen -m "$M/$m" --beam 20 --nbest 3 -p b --regex '(a|b) (c|d)? e' --logprob >>all
		[ "$(cut -f1 all | sort -u | wc -l)" -eq 6 ]
		awk -F'\t' '{ s += exp($2) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-3) { print s; exit 1 } }' all ||
			{ echo "$m"; cat all; false; }
	done
	# the 3-gram model (no beam search): a sentence drawn after the prefix
	# "a" gets the figure it gets when drawn without one
	gen -m "$M/lm.arpa" -s 5 -n 100 --regex '(a|b) (c|d)? e' --logprob | grep '^a ' | sort -u >free
	gen -m "$M/lm.arpa" -s 6 -n 100 -p a --regex '(a|b) (c|d)? e' --logprob | sort -u >pre
	[ "$(wc -l <pre)" -ge 2 ]
	join -t "$(printf '\t')" free pre >both
	[ "$(wc -l <both)" -ge 2 ]
	awk -F'\t' '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }' both
}

@test "gen --fsa, --regex: bad automata and patterns are refused with their reason" {
	run_err 1 "gen: no accepting state is reachable within --max-len 3: the shortest sentence of the automaton needs 4 words" \
		gen -m "$M/model.llrnn" --regex 'a a a c' --max-len 3
	run_err 1 "after the prefix needs 3 words" gen -m "$M/model.llrnn" -p a --regex 'a a a c' --max-len 2
	run_err 1 "gen: regex: 2 tokens the model cannot produce \\(not in the vocabulary\\): zz, yy" \
		gen -m "$M/model.llrnn" --regex 'a zz (yy|zz)'
	# a step where the model gives every allowed token -inf, reported with the prefix
	for mode in "" --greedy "--beam 3"; do
		run_err 1 "^gen: after 'a': the model gives no token the automaton allows a finite probability \\(--no-unk: not <unk>\\)$" \
			gen -m "$M/model.llrnn" --no-unk $mode --regex 'a <unk> c'
	done
	run_err 1 "^gen: after 'b a': the model gives no token the automaton allows" gen -m "$M/model.llrnn" -p b --no-unk --regex 'b a <unk> c'
	run_err 1 "^gen: after 'a': the model gives no token the automaton allows" gen -m "$M/lm.arpa" --no-unk --regex 'a <unk> c'
	run_err 1 "gen: regex: character 5: \\( without \\)" gen -m "$M/model.llrnn" --regex 'a (b'
	run_err 1 "gen: regex: character 1: nothing to repeat" gen -m "$M/model.llrnn" --regex '* a'
	run_err 1 "gen: regex: the automaton accepts nothing" gen -m "$M/model.llrnn" --regex 'a []'
	printf '0 1 a\n1 x b\n' >bad.fst
	run_err 1 "gen: bad.fst:2: bad state 'x'" gen -m "$M/model.llrnn" --fsa bad.fst
	printf '0 1 a\n1 2 qq\n2 3 rr\n3\n' >bad.fst
	run_err 1 "gen: bad.fst: 2 tokens the model cannot produce \\(not in the vocabulary\\): qq \\(line 2\\), rr \\(line 3\\)" \
		gen -m "$M/model.llrnn" --fsa bad.fst
	printf '0 1 a\n1 2 b\n' >bad.fst
	run_err 1 "gen: bad.fst: the automaton accepts nothing" gen -m "$M/model.llrnn" --fsa bad.fst
	printf '0 1 a\n0 1 </s>\n1\n' >bad.fst
	run_err 1 "gen: bad.fst:2: </s> is not a label: a sentence ends in a final state" gen -m "$M/model.llrnn" --fsa bad.fst
	printf '0 1 a 1\n0 2 a\n1\n2\n' >bad.fst
	run_err 1 "gen: bad.fst:2: the automaton is weighted and not deterministic" gen -m "$M/model.llrnn" --fsa bad.fst
	printf '0 1 a b\n1\n' >bad.fst
	run_err 1 "gen: bad.fst:1: input label 'a' and output label 'b' differ" gen -m "$M/model.llrnn" --fsa bad.fst
	run_err 1 "gen: nosuch.fst" gen -m "$M/model.llrnn" --fsa nosuch.fst
	run_err 2 "gen: --fsa and --regex exclude each other" gen -m "$M/model.llrnn" --fsa bad.fst --regex a
	# an unweighted automaton with <eps> and two arcs of one label is determinised
	printf '0 1 a\n0 2 a\n1 3 c\n2 3 d\n3 4 <eps>\n4\n' >nd.fst
	gen -m "$M/model.llrnn" -s 9 -n 100 --fsa nd.fst | sort -u >out
	printf 'a c\na d\n' | cmp - out
}

@test "gen(1) EXAMPLES: constrained generation runs as written" {
	cp "$M/model.llrnn" model.llrnn
	grep -qF "gen -m model.llrnn -n 200 -s 1 --regex '(a|b)+ c (d c)*' > out.txt" "$TOP/man/gen.1"
	grep -qF "grep -cvE '^((a|b) )+c( d c)*\$' out.txt" "$TOP/man/gen.1"
	grep -qF 'gen -m model.llrnn --fsa abc.fst --beam 5 --nbest 3 --max-len 4 --logprob' "$TOP/man/gen.1"
	gen -m model.llrnn -n 200 -s 1 --regex '(a|b)+ c (d c)*' > out.txt
	run grep -cvE '^((a|b) )+c( d c)*$' out.txt
	[ "$output" = 0 ]
	printf '0 1 a\n0 1 b\n1 1 a\n1 1 b\n1 2 c\n2 3 d\n3 2 c\n2\n' > abc.fst
	# the page writes the backslashes as \e; rendered, the line is the one above
	mandoc -Tascii "$TOP/man/gen.1" | col -b | grep -qF "printf '0 1 a\\n0 1 b\\n1 1 a\\n1 1 b\\n1 2 c\\n2 3 d\\n3 2 c\\n2\\n' > abc.fst"
	gen -m model.llrnn --fsa abc.fst --beam 5 --nbest 3 --max-len 4 --logprob >out
	[ "$(wc -l <out)" -eq 3 ]
	[ "$(count_bad out)" -eq 0 ]
	awk -F'\t' 'split($1, w, " ") > 4 { exit 1 }' out
	mandoc -Tlint -W warning "$TOP/man/gen.1"
}
