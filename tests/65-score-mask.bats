#!/usr/bin/env bats
# score --fsa, --regex and --grammar on a language model (issue 51, the
# mask-only mode scored): each sentence's log-probability is the one gen
# --logprob reports under the same constraint, the masked model sums to
# 1 over a finite language (and the plain one does not), the three
# spellings of one language score alike, a sentence outside it is -inf
# from its first rejected token, what cannot be masked is refused, and
# a grammar's trimming past its budget is told on stderr.
# Tiny LL-RNNs (log-linear output: featurize --top 3 gives the other
# tokens @notTop) on fixtures/fsa/train.tok, sentences over a .. f.

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local m="$BATS_FILE_TMPDIR" t="$FIXTURES/fsa/train.tok"
	featurize --top 3 "$t" >"$m/f.llr" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 2 -s 1 -o "$m/ll.llrnn" "$m/f.llr"
	featurize --top 10 "$t" >"$m/one.llr" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o "$m/softmax.llrnn" "$m/one.llr"
	featurize --top 3 -q --skip-rejected --background 'regex:(a|b)+ c (d c)*' "$t" >"$m/c.llr" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o "$m/trained.llrnn" "$m/c.llr"
	# the same language as a grammar
	printf 'root ::= ("a" | "b") (" a" | " b")* " c" (" d c")*\n' >"$m/a.gbnf"
	featurize --top 3 -q --skip-rejected --background "grammar:$m/a.gbnf" "$t" >"$m/g.llr" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o "$m/gtrained.llrnn" "$m/g.llr"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
	R='(a|b)+ c (d c)*'
}

# close A B: the first columns of A and B agree within 1e-3, line by line.
close() {
	paste "$1" "$2" | awk -F'\t' '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3 || NF < 2) { print NR ": " $0; bad = 1 } } END { exit bad }'
}

# gen_is_score MODEL PREFIX OPT ARG: 40 sentences drawn by gen under OPT
# ARG after PREFIX (may be empty) into drawn, each gen --logprob's
# figure what score gives it under OPT ARG (within 1e-3).
gen_is_score() {
	gen -m "$1" -s 5 -n 40 --max-len 8 ${2:+-p "$2"} "$3" "$4" --logprob >drawn
	cut -f1 drawn | score -q -m "$1" "$3" "$4" | cut -f1 >masked
	cut -f2 drawn >want
	close want masked || { echo "$3 $4 -p '$2'"; paste drawn masked | head; false; }
}

# gen_is_score_each MODEL REGEX FST GBNF ERE PREFIX...: gen_is_score
# under each of --regex REGEX, --fsa FST and --grammar GBNF after each
# PREFIX, every sentence drawn the prefix continued and matching ERE.
gen_is_score_each() {
	local m=$1 ere=$5 i p
	local -a opt=(--regex --fsa --grammar) arg=("$2" "$3" "$4")
	shift 5
	for i in 0 1 2; do
		for p in "$@"; do
			gen_is_score "$m" "$p" "${opt[i]}" "${arg[i]}"
			cut -f1 drawn | grep -vxE "$ere" >bad || true
			cut -f1 drawn | awk -v p="${p:+$p }" 'index($0 " ", p) != 1' >>bad
			[ ! -s bad ] || { echo "${opt[i]} ${arg[i]} -p '$p'"; head bad; false; }
		done
	done
}

@test "score --regex: each sentence's log p is gen --regex --logprob's, and differs from the unmasked model's" {
	gen -m "$M/ll.llrnn" -s 3 -n 100 --regex "$R" --logprob >drawn
	cut -f1 drawn >sent
	score -q -m "$M/ll.llrnn" --regex "$R" sent | cut -f1 >masked
	cut -f2 drawn >want
	close want masked
	# unmasked, every sentence is less likely: the mask took mass away from the others
	score -q -m "$M/ll.llrnn" sent | cut -f1 >plain
	paste plain masked | awk -F'\t' '!($1 < $2 - 1e-4) { bad = 1 } END { exit bad }'
	# a batch of lines and threads give the same figures
	score -q -m "$M/ll.llrnn" --regex "$R" --batch 16 --threads 2 sent | cut -f1 | cmp - masked
}

@test "score --regex, --fsa, --grammar: gen --logprob with a prefix gives each sentence score's total, the prefix's words renormalised too" {
	printf '0 1 a\n0 1 b 0.5\n1 1 a 1\n1 1 b\n1 2 c\n2 1 d 0.3\n2\n' >l.fst
	printf 'root ::= ("a" | "b") (" a" | " b")* " c" (" d" (" a" | " b")* " c")*\n' >l.gbnf
	gen_is_score_each "$M/ll.llrnn" "$R" l.fst l.gbnf '(a|b)( (a|b))* c( d( (a|b))* c)*' "a" "a b" "b a c d"
	# a prefix the constraint rejects: its first rejected token named
	run_err 1 "^gen: the prefix: the automaton rejects word 3 'c'$" gen -m "$M/ll.llrnn" -p "a c c" --regex "$R" --logprob
	run_err 1 "^gen: the prefix: the automaton rejects word 3 'c'$" gen -m "$M/ll.llrnn" -p "a c c" --fsa l.fst --logprob
	run_err 1 "^gen: the prefix: the grammar rejects word 3 'c'$" gen -m "$M/ll.llrnn" -p "a c c" --grammar l.gbnf --logprob
}

@test "score --regex, --fsa, --grammar B on a model trained under A: gen --logprob's figures under the intersection, with and without a prefix" {
	# A is (a|b)+ c (d c)*; B keeps the sentences of a's
	printf '0 0 a\n0 1 c\n1 2 d 0.7\n2 1 c\n1\n' >b.fst
	printf 'root ::= "a" (" a")* " c" (" d c")*\n' >b.gbnf
	gen_is_score_each "$M/trained.llrnn" 'a+ c (d c)*' b.fst b.gbnf 'a( a)* c( d c)*' "" "a" "a a c"
	# the model alone gives them less: A's other sentences hold the rest
	cut -f1 drawn | score -q -m "$M/trained.llrnn" | cut -f1 | paste - masked |
		awk -F'\t' '!($1 < $2 - 1e-4) { bad = 1 } END { exit bad }'
	# a sentence of B outside A, and one of A outside B: -inf
	printf 'a d c\nb c\n' | score -q -m "$M/trained.llrnn" --fsa b.fst | cut -f1 >out
	[ "$(tr '\n' ,  <out)" = "-inf,-inf," ]
	# empty: A has no sentence without c
	printf '0 1 a\n1\n' >noc.fst
	run_err 1 "^score: $M/trained.llrnn: the model's automaton and --fsa: no sentence is accepted by both: their intersection is empty$" \
		score -m "$M/trained.llrnn" --fsa noc.fst s
	run_err 1 "^score: $M/trained.llrnn: the model's automaton and --regex: no sentence is accepted by both" \
		score -m "$M/trained.llrnn" --regex 'd+' s
}

@test "score --fsa B on a model trained under a weighted A: A and B's sentences sum to 1, each as gen's beam gives it (both weights, A's not twice)" {
	awk 'BEGIN { split("a b d", f); split("c d -", m)
	             for (i = 0; i < 270; i++) { x = m[i % 3 + 1]; print f[int(i / 3) % 3 + 1] (x == "-" ? "" : " " x) " e" } }' >lang.tok
	printf '0 1 a\n0 1 b 2.0\n0 1 d\n1 2 c\n1 2 d\n1 3 e\n2 3 e\n3\n' >a.fst
	featurize -q --top 3 --background fsa:a.fst -o w.fz lang.tok
	train -q --hidden 8 --embed 8 --layers 1 --epochs 2 -s 1 -o w.llrnn w.fz
	# B: a, b (weighed e^-0.5) or e, then c e, e e or d; of A's 9
	# sentences B keeps a c e and b c e, and after "a" or "b" both allow
	# e, which no sentence of both continues
	printf '0 1 a\n0 1 b 0.5\n0 1 e\n1 2 c 1.0\n1 2 e\n2 3 e\n1 3 d\n3\n' >b.fst
	printf '%s\n' a b d | while read -r f; do printf '%s e\n%s c e\n%s d e\n' "$f" "$f" "$f"; done >a.txt
	score -q -m w.llrnn --fsa b.fst a.txt | cut -f1 | paste a.txt - >sc
	[ "$(awk -F'\t' '$2 != "-inf" { print $1 }' sc | tr '\n' ,)" = "a c e,b c e," ]
	awk -F'\t' '{ s += exp($2) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-4) { print s; exit 1 } }' sc
	gen -m w.llrnn --beam 4 --nbest 4 --fsa b.fst --logprob | sort >beam
	[ "$(cut -f1 beam | tr '\n' ,)" = "a c e,b c e," ]
	sort sc | join -t "$(printf '\t')" - beam >both
	[ "$(wc -l <both)" -eq 2 ]
	awk -F'\t' '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }' both
	# --check-norm: every step normalised over the intersection
	score -m w.llrnn --fsa b.fst --check-norm a.txt >/dev/null 2>err
	grep -q 'norm check: max |sum p - 1| = .*, 0 batch(es)' err
}

# sums_to_one MODEL OPT ARG: score's probabilities of the sentences of
# file all under OPT ARG sum to 1 (within 1e-4), gen's beam finds those
# of finite log p with score's figures, and "b a" (which both the
# model's language and B allow, but no sentence of both continues) is
# -inf from its "a" on.
sums_to_one() {
	score -q -m "$1" "$2" "$3" --per-token all >pt
	cut -f1 pt | paste all - >sc
	[ "$(awk -F'\t' '$2 != "-inf" { print $1 }' sc | tr '\n' ,)" = "a c,b c d c," ]
	awk -F'\t' '{ s += exp($2) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-4) { print s; exit 1 } }' sc
	sed -n 3p pt | cut -f4,5 | grep -Eq '^b=-[0-9.]+	a=-inf$'
	gen -m "$1" --beam 4 --nbest 4 "$2" "$3" --logprob | sort >beam
	[ "$(cut -f1 beam | tr '\n' ,)" = "a c,b c d c," ]
	sort sc | join -t "$(printf '\t')" - beam >both
	[ "$(wc -l <both)" -eq 2 ]
	awk -F'\t' '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }' both
	gen_is_score "$1" "" "$2" "$3"
}

@test "score, gen: a grammar on either side of the intersection, B's and the model's sentences sum to 1, \"b a\" trimmed" {
	# the model's language is (a|b)+ c (d c)*, B's four sentences; both
	# allow a after b, but "b a" ends B's sentence and not A's: of B's
	# sentences only "a c" and "b c d c" are A's
	printf 'a c\na d c\nb a\nb c d c\n' >all
	printf 'root ::= "a c" | "a d c" | "b a" | "b c d c"\n' >b.gbnf
	# the model's regex against B's grammar, the model's grammar against B's regex
	sums_to_one "$M/trained.llrnn" --grammar b.gbnf
	sums_to_one "$M/gtrained.llrnn" --regex 'a c|a d c|b a|b c d c'
	printf '0 1 a\n1 2 c\n1 3 d\n3 2 c\n0 4 b\n4 2 a\n4 5 c\n5 6 d\n6 2 c\n2\n' >b.fst
	sums_to_one "$M/gtrained.llrnn" --fsa b.fst
}

@test "score, gen: past a grammar's trimming budget, one notice of each trimming cut short, naming the grammar; the untrimmed \"b a\" then keeps mass" {
	local vocab="trimming the grammar against the vocabulary ran past its budget of work: the states not decided by then are allowed untrimmed, so a sentence may reach a dead end (a state from which no sentence of the vocabulary's tokens ends)"
	local both="trimming the grammar's intersection with the model's automaton ran past its budget of work: the states not decided by then are allowed untrimmed, so a sentence may reach a dead end (a state from which no sentence of both ends)"
	printf 'a c\na d c\nb a\nb c d c\n' >all
	printf 'root ::= "a c" | "a d c" | "b a" | "b c d c"\n' >b.gbnf
	score -q -m "$M/trained.llrnn" --grammar b.gbnf all >exact 2>err
	[ ! -s err ]
	LLRNN_GRAMMAR_BUDGET=1 score -q -m "$M/trained.llrnn" --grammar b.gbnf all >over 2>err
	[ "$(wc -l <over)" -eq 4 ]
	printf 'score: b.gbnf: %s\nscore: b.gbnf: %s\n' "$vocab" "$both" >want
	diff want err
	# exact, the model's two sentences of B sum to 1; untrimmed, "b a"
	# (B's, not the model's: a dead end) keeps some of the mass
	awk -F'\t' '$1 != "-inf" { s += exp($1) } END { d = s - 1; if (d < 0) d = -d; exit d > 1e-4 }' exact
	awk -F'\t' '$1 != "-inf" { s += exp($1) } END { exit !(s < 0.9) }' over
	[ "$(cut -f1 over | sed -n 2p)" = -inf ]
	# gen says the same, and still draws the model's sentences
	LLRNN_GRAMMAR_BUDGET=1 gen -m "$M/trained.llrnn" -s 1 -n 20 --grammar b.gbnf >out 2>err
	[ "$(wc -l <out)" -eq 20 ]
	sed 's/^score:/gen:/' want | diff - err
	grep -vxE 'a c|b c d c' out >bad || true
	[ ! -s bad ]
	# a grammar alone (no dead end in it): the notice, the same figures
	printf 'root ::= ("a" | "b") (" c" | " d")? " e"\n' >l.gbnf
	printf 'a e\nb d e\na c e\n' >s
	score -q -m "$M/ll.llrnn" --grammar l.gbnf s >exact 2>err
	[ ! -s err ]
	LLRNN_GRAMMAR_BUDGET=10 score -q -m "$M/ll.llrnn" --grammar l.gbnf s >over 2>err
	[ "$(cat err)" = "score: l.gbnf: $vocab" ]
	diff exact over
}

@test "score, gen: a model trained under a grammar with --grammar: refused (two grammars), nothing on stdout" {
	printf 'a c\n' >s
	printf 'root ::= "a c"\n' >b.gbnf
	local why="two grammars: whether two context-free grammars share a sentence is undecidable, so their intersection cannot be trimmed"
	run_err 1 "^score: $M/gtrained.llrnn: the model's grammar and --grammar: $why" score -m "$M/gtrained.llrnn" --grammar b.gbnf s
	run_err 1 "^gen: $M/gtrained.llrnn: the model's grammar and --grammar: $why" gen -m "$M/gtrained.llrnn" --grammar b.gbnf
}

@test "score --regex: the masked model sums to 1 over a finite language, the plain one does not" {
	printf 'a e\nb e\na c e\na d e\nb c e\nb d e\n' >all
	score -q -m "$M/ll.llrnn" --regex '(a|b) (c|d)? e' all |
		awk -F'\t' '{ s += exp($1) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-4) { print s; exit 1 } }'
	score -q -m "$M/ll.llrnn" all | awk -F'\t' '{ s += exp($1) } END { exit !(s < 0.9) }'
	# and --check-norm finds every masked step normalised
	score -m "$M/ll.llrnn" --regex '(a|b) (c|d)? e' --check-norm all >/dev/null 2>err
	grep -q 'norm check: max |sum p - 1| = .*, 0 batch(es)' err
}

@test "score --fsa, --grammar: the same language as an automaton and as a grammar scores as the regular expression" {
	printf '0 1 a\n0 1 b\n1 2 c\n1 2 d\n1 3 e\n2 3 e\n3\n' >l.fst
	printf 'root ::= ("a" | "b") (" c" | " d")? " e"\n' >l.gbnf
	printf 'a e\nb d e\na c e\n' >s
	score -q -m "$M/ll.llrnn" --regex '(a|b) (c|d)? e' s | cut -f1 >r
	score -q -m "$M/ll.llrnn" --fsa l.fst s | cut -f1 >f
	score -q -m "$M/ll.llrnn" --grammar l.gbnf s | cut -f1 >g
	close r f
	close r g
	# a weight on an arc reweighs the mask: e^-1 on d moves mass to c
	printf '0 1 a\n0 1 b\n1 2 c\n1 2 d 1\n1 3 e\n2 3 e\n3\n' >w.fst
	score -q -m "$M/ll.llrnn" --fsa w.fst s | cut -f1 >fw
	paste f fw | sed -n 2p | awk -F'\t' '{ exit !($2 < $1 - 0.1) }'
	paste f fw | sed -n 3p | awk -F'\t' '{ exit !($2 > $1) }'
}

@test "score --regex: a sentence outside the language is -inf from its first rejected token on" {
	printf 'a c\na d c\n' >s
	score -q -m "$M/ll.llrnn" --regex "$R" --per-token s >out
	run cut -f1 out
	assert_line --index 0 --regexp '^-[0-9]'
	assert_line --index 1 '-inf'
	sed -n 2p out | cut -f4-6 | grep -Eq '^a=-[0-9.]+	d=-inf	c=-inf$'
}

@test "score --fsa, --regex, --grammar: refused where they cannot mask, with the reason" {
	printf 'a c\n' >s
	run_err 1 "score: .*softmax.llrnn: --regex: scoring under a mask needs the log-linear output, and the model's is softmax" \
		score -m "$M/softmax.llrnn" --regex "$R" s
	run_err 1 "score: regex: 1 token the model cannot produce \\(not in the vocabulary\\): zz" \
		score -m "$M/ll.llrnn" --regex 'a zz' s
	run_err 1 "score: regex: character 4: \\( without \\)" score -m "$M/ll.llrnn" --regex 'a (' s
	printf '0 1 a\n1 x b\n' >bad.fst
	run_err 1 "score: bad.fst:2: bad state 'x'" score -m "$M/ll.llrnn" --fsa bad.fst s
	printf 'root ::= "a" undefined\n' >bad.gbnf
	run_err 1 "score: bad.gbnf:1: .*undefined" score -m "$M/ll.llrnn" --grammar bad.gbnf s
	run_err 2 "score: --fsa, --regex and --grammar exclude each other" score -m "$M/ll.llrnn" --regex a --fsa bad.fst s
	run_err 2 "score: --regex: one -m" score -m "$M/ll.llrnn" -m "$M/ll.llrnn" --regex a s
	run_err 2 "score: --fsa, --regex, --grammar: not with --embed" score -m "$M/ll.llrnn" --embed --regex a s
	train -q --ngram 2 --discount-fallback -o lm.arpa "$FIXTURES/fsa/train.tok" 2>/dev/null
	run_err 1 "score: lm.arpa: n-gram models take no --fsa, --regex or --grammar when scoring" score -m lm.arpa --regex a s
}

@test "score(1) EXAMPLES: constrained scoring runs as written, its two columns alike" {
	cp "$M/ll.llrnn" ll.llrnn
	grep -qF "gen -m ll.llrnn -n 5 -s 1 --regex '(a|b)+ c' --logprob > out.tsv" "$TOP/man/score.1"
	grep -qF "cut -f1 out.tsv | score -q -m ll.llrnn --regex '(a|b)+ c' | cut -f1 | paste out.tsv -" "$TOP/man/score.1"
	gen -m ll.llrnn -n 5 -s 1 --regex '(a|b)+ c' --logprob > out.tsv
	cut -f1 out.tsv | score -q -m ll.llrnn --regex '(a|b)+ c' | cut -f1 | paste out.tsv - >both
	[ "$(wc -l <both)" -eq 5 ]
	awk -F'\t' '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3 || NF != 3) bad = 1 } END { exit bad }' both
}
