#!/usr/bin/env bats
# score --fsa, --regex and --grammar on a language model (issue 51, the
# mask-only mode scored): each sentence's log-probability is the one gen
# --logprob reports under the same constraint, the masked model sums to
# 1 over a finite language (and the plain one does not), the three
# spellings of one language score alike, a sentence outside it is -inf
# from its first rejected token, and what cannot be masked is refused.
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
	run_err 1 "score: .*trained.llrnn: --fsa: the model was trained under an automaton background" \
		score -m "$M/trained.llrnn" --fsa /dev/null s
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
