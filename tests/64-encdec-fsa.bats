#!/usr/bin/env bats
# 64-encdec-fsa.bats - the encoder-decoder's output automaton (train
# --output-fsa, issue 51) on the CMUdict slice (tests/fixtures/g2p, split
# by scripts/g2p-prep): the two shipped automata are scripts/stress-fsa's
# output; training under one-primary-stress.fst refuses the references
# it rejects (stream pair, file:line) or skips and counts them, as many
# as an awk recogniser finds; greedy and beam outputs are checked by that
# independent recogniser, and so are those of such a model under gen
# --fsa (the intersection); over a finite language the model's
# probabilities sum to 1 (enumerated with score); the model keeps the
# automaton (fsa/ members under the CRC, --resume); and the bad-input
# paths.  The normaliser itself is checked by hand and by finite
# differences in tests/unit/test_encdec_fsa.c.

bats_require_minimum_version 1.5.0
load test_helper

G2P="$FIXTURES/g2p/cmudict-slice.tgz"
LEX="$TOP/lexicons/arpabet-phonology.lex"
ONE="$TOP/lexicons/one-primary-stress.fst"
INV="$TOP/lexicons/arpabet-inventory.fst"
TINY="--hidden 32 --embed 16 --attn-hidden 16 --threads 1"

# AWK programs: the lines of the target files that break the rule, by
# number ('bad') or the outputs that do ('check'); the inventory is the
# lexicon's first column, read first.
ONE_AWK='FNR == NR { inv[$1] = 1; next }
{ n = 0; ok = NF > 0; for (i = 1; i <= NF; i++) { if (!($i in inv)) ok = 0; if ($i ~ /^[A-Z]+1$/) n++ } if (!ok || n != 1) print FNR }'
INV_AWK='FNR == NR { inv[$1] = 1; next }
{ ok = NF > 0; for (i = 1; i <= NF; i++) { if (!($i in inv)) ok = 0; v = $i ~ /^(AA|AE|AH|AO|AW|AY|EH|ER|EY|IH|IY|OW|OY|UH|UW)/; d = $i ~ /[012]$/; if (v != d) ok = 0 } if (!ok) print FNR }'

setup_file() {
	export D="$BATS_FILE_TMPDIR/g2p"
	mkdir -p "$D"
	python3 "$TOP/scripts/g2p-prep" "$G2P" "$D" 2>/dev/null
	featurize --top 100 --lexicon "$LEX" --source "$D/train.src" -o "$D/ll.fz" "$D/train.tgt" 2>/dev/null
	train $TINY --epochs 2 -s 1 --output-fsa "$ONE" --skip-rejected --valid-source "$D/valid.src" --valid "$D/valid.tgt" \
		-o "$D/one.bin" "$D/ll.fz" 2>"$D/one.err"
	train $TINY -q --epochs 1 -s 1 --output-fsa "$INV" -o "$D/inv.bin" "$D/ll.fz"
	head -40 "$D/test.src" >"$D/t40.src"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# fin_fst: fin.fst, a finite language of five strings (K AE1, AE1, K AE1 T, AE1 T, T AH1).
fin_fst() {
	printf '0 1 K\n0 2 AE1\n0 3 T\n1 2 AE1\n2 4 T\n3 5 AH1\n2\n4\n5\n' >fin.fst
}

# fin_model: free.bin, a model trained without an automaton on pairs
# whose outputs are those of fin.fst (also written), a finite language.
fin_model() {
	fin_fst
	for i in $(seq 1 12); do
		printf 'k a t\ncat\na t\nt\nt u\nk a t t\n'
	done >p.src
	for i in $(seq 1 12); do
		printf 'K AE1 T\nK AE1\nAE1 T\nAE1\nT AH1\nK AE1 T T\n'
	done >p.tgt
	featurize -q --source p.src -o p.fz p.tgt
	train -q --hidden 8 --embed 8 --attn-hidden 8 --threads 1 --batch 8 --epochs 3 -s 1 -o free.bin p.fz
}

# beam_is_score MODEL SRC OPT ARG: gen's beam of 5 under OPT ARG after
# source SRC (into masked), its log-probabilities summing to 1 (the
# language has at most five strings) and each score's under OPT ARG.
beam_is_score() {
	echo "$2" | gen -m "$1" "$3" "$4" --beam 5 --nbest 5 --logprob >masked
	awk -F '\t' '{ s += exp($5) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-4) { print s; exit 1 } }' masked
	cut -f4 masked >m.tgt
	yes "$2" | head -n "$(wc -l <masked)" >m.src
	score -q -m "$1" "$3" "$4" --source m.src m.tgt | cut -f1 | paste <(cut -f5 masked) - >both
	awk -F'\t' '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-4) { print; bad = 1 } } END { exit bad }' both
}

@test "stress-fsa: the shipped automata are its output from the phoneme inventory; bad input is refused" {
	"$TOP/scripts/stress-fsa" primary | cmp - "$ONE"
	"$TOP/scripts/stress-fsa" inventory | cmp - "$INV"
	# 69 phonemes: 15 vowels with 3 digits, 24 consonants
	[ "$(grep -v '^#' "$INV" | awk 'NF == 3 && $1 == 0' | wc -l)" -eq 69 ]
	[ "$(grep -v '^#' "$ONE" | awk 'NF == 3 && $1 == 0 && $2 == 1' | wc -l)" -eq 15 ]
	printf 'AA\tCLASS:vowel\n' >bad.lex
	run -1 "$TOP/scripts/stress-fsa" inventory bad.lex
	[[ "$output" == *"bad.lex:1: AA: a vowel needs one stress digit"* ]]
	run -2 "$TOP/scripts/stress-fsa" both
}

@test "train --output-fsa: a reference the automaton rejects is an error naming its pair and line, as the awk recogniser finds" {
	first=$(awk "$ONE_AWK" "$LEX" "$D/train.tgt" | head -1)
	[ "$first" -gt 0 ]
	run_err 1 "^train: .*ll.fz: pair $first \(line $first of the target file featurize read\): the automaton rejects token [0-9]+ '[A-Z]+1' after '.*' \(--skip-rejected skips it\)$" \
		train $TINY --epochs 1 --output-fsa "$ONE" -o m.bin "$D/ll.fz"
	[ ! -e m.bin ]
	# a validation pair is named by its file and line (the inventory
	# accepts every training target; XX is <unk>, which it never allows)
	[ -z "$(awk "$INV_AWK" "$LEX" "$D/train.tgt")" ]
	printf 'c a t\nk x t\n' >v.src
	printf 'K AE1 T\nK XX T\n' >v.tgt
	run_err 1 "^train: v.tgt:2: the automaton rejects token 2 '<unk>' after 'K' \(--skip-rejected skips it\)$" \
		train $TINY --epochs 1 --output-fsa "$INV" --valid-source v.src --valid v.tgt -o m.bin "$D/ll.fz"
	[ ! -e m.bin ]
}

@test "train --skip-rejected: the rejected pairs are counted, as many as awk finds; the automaton's unused targets are listed" {
	nt=$(awk "$ONE_AWK" "$LEX" "$D/train.tgt" | wc -l)
	nv=$(awk "$ONE_AWK" "$LEX" "$D/valid.tgt" | wc -l)
	grep -qx "train: .*ll.fz: $nt pairs whose target the automaton rejects skipped (--skip-rejected)" "$D/one.err"
	grep -qx "train: .*valid.tgt: $nv pairs\{0,1\} whose target the automaton rejects skipped (--skip-rejected)" "$D/one.err"
	total=$(wc -l <"$D/train.tgt")
	grep -q "ll.fz: $((total - nt)) pairs" "$D/one.err"
	grep -q "target token it never allows (probability 0): <unk>$" "$D/one.err"
	[ "$(meta "$D/one.bin" output_fsa)" = "$ONE" ]
	[ "$(meta "$D/one.bin" fsa.states)" -eq 2 ]
}

@test "gen: greedy and beam outputs of the constrained models are in their languages (awk recogniser)" {
	gen -m "$D/one.bin" "$D/t40.src" >greedy
	gen -m "$D/one.bin" --beam 4 "$D/t40.src" >beam
	gen -m "$D/one.bin" --beam 4 --nbest 4 "$D/t40.src" >nbest
	[ "$(wc -l <greedy)" -eq 40 ] && [ "$(wc -l <beam)" -eq 40 ]
	for f in greedy beam; do
		run -0 awk "$ONE_AWK" "$LEX" "$f"
		[ -z "$output" ]
	done
	[ "$(wc -l <nbest)" -eq 160 ]
	cut -f4 nbest | awk "$ONE_AWK" "$LEX" - >bad
	[ ! -s bad ]
	# control: the same tiny model trained without the automaton breaks the rule
	train $TINY -q --epochs 2 -s 1 -o free.bin "$D/ll.fz"
	gen -m free.bin "$D/t40.src" | awk "$ONE_AWK" "$LEX" - >bad
	[ -s bad ]
	gen -m "$D/inv.bin" --beam 3 "$D/t40.src" >inv
	run -0 awk "$INV_AWK" "$LEX" inv
	[ -z "$output" ]
	# a short --max-len still ends in the language, or says none fits
	gen -m "$D/one.bin" --max-len 2 "$D/t40.src" >short
	run -0 awk "$ONE_AWK" "$LEX" short
	[ -z "$output" ]
	[ "$(awk 'NF != 1' short | wc -l)" -eq 0 ]
	run_err 1 "^gen: .*no accepting state is reachable within --max-len 1: the shortest output of the automaton needs 1 token and </s>" \
		gen -m "$D/one.bin" --max-len 1 "$D/t40.src"
}

@test "gen --fsa: a model trained without the automaton decoded inside it (mask-only): greedy, beam and n-best outputs in the language" {
	train $TINY -q --epochs 2 -s 1 -o free.bin "$D/ll.fz"
	gen -m free.bin "$D/t40.src" | awk "$ONE_AWK" "$LEX" - >bad
	[ -s bad ] # the control breaks the rule
	gen -m free.bin --fsa "$ONE" "$D/t40.src" >greedy
	gen -m free.bin --fsa "$ONE" --beam 4 "$D/t40.src" >beam
	gen -m free.bin --fsa "$ONE" --beam 4 --nbest 4 "$D/t40.src" >nbest
	[ "$(wc -l <greedy)" -eq 40 ] && [ "$(wc -l <beam)" -eq 40 ] && [ "$(wc -l <nbest)" -eq 160 ]
	for f in greedy beam; do
		run -0 awk "$ONE_AWK" "$LEX" "$f"
		[ -z "$output" ]
	done
	cut -f4 nbest | awk "$ONE_AWK" "$LEX" - >bad
	[ ! -s bad ]
	# an ensemble of unconstrained models is masked too
	train $TINY -q --epochs 2 -s 2 -o free2.bin "$D/ll.fz"
	gen -m free.bin -m free2.bin --fsa "$ONE" --beam 3 "$D/t40.src" | awk "$ONE_AWK" "$LEX" - >bad
	[ ! -s bad ]
	gen -m free.bin --fsa "$ONE" --max-len 2 "$D/t40.src" >short
	run -0 awk "$ONE_AWK" "$LEX" short
	[ -z "$output" ]
	run_err 1 "^gen: .*no accepting state is reachable within --max-len 1" gen -m free.bin --fsa "$ONE" --max-len 1 "$D/t40.src"
}

@test "gen --fsa and score --fsa on an encoder-decoder: the masked distribution is renormalised over the language (a finite one sums to 1)" {
	fin_model
	# beam 5 finds the language's five strings; their masked
	# probabilities sum to 1, the unmasked ones to less
	echo 'k a t' | gen -m free.bin --fsa fin.fst --beam 5 --nbest 5 --logprob >masked
	[ "$(cut -f4 masked | sort | tr '\n' ,)" = "AE1,AE1 T,K AE1,K AE1 T,T AH1," ]
	awk -F '\t' '{ s += exp($5) } END { printf "%.6f\n", s; exit !(s > 0.9999 && s < 1.0001) }' masked
	echo 'k a t' | gen -m free.bin --beam 5 --nbest 5 --logprob >plain
	awk -F '\t' '{ s += exp($5) } END { exit !(s < 0.99) }' plain
	# score --fsa gives each string gen's masked log p; a string outside
	# the language -inf, from its first rejected token on
	cut -f4 masked >m.tgt
	yes 'k a t' | head -5 >m.src
	score -m free.bin --fsa fin.fst --source m.src m.tgt 2>/dev/null | cut -f1 >got
	cmp got <(cut -f5 masked)
	[ "$(score -m free.bin --source m.src m.tgt 2>/dev/null | cut -f1 | paste -d ' ' - got | awk '$1 == $2' | wc -l)" -eq 0 ]
	printf 'K AE1 T T\nK AE1 T\n' >out.tgt
	printf 'k a t\nk a t\n' >out.src
	score -m free.bin --fsa fin.fst --per-token --source out.src out.tgt 2>/dev/null >pt
	# the prefix's steps as in the accepted string, then -inf on
	[ "$(sed -n 1p pt | cut -f 1-3,7,8)" = "$(printf -- '-inf\t5\t0\tT=-inf\t</s>=-inf')" ]
	[ "$(sed -n 1p pt | cut -f 4-6)" = "$(sed -n 2p pt | cut -f 4-6)" ]
	[ "$(sed -n 2p pt | cut -f 1)" != -inf ]
}

@test "gen --fsa B on a model trained under the output automaton A: greedy, beam and n-best outputs in A and B (awk); empty A and B refused" {
	# B: the inventory's outputs of at most 3 phonemes, weighted
	awk '{ for (q = 0; q < 3; q++) printf "%d %d %s%s\n", q, q + 1, $1, q ? "" : " 0.5"; } END { for (q = 1; q <= 3; q++) print q }' "$LEX" >short.fst
	for mode in "" "--beam 4" "--beam 4 --nbest 4"; do
		gen -m "$D/one.bin" --fsa short.fst $mode "$D/t40.src" >out
		[ "$(wc -l <out)" -eq $([ "$mode" = "--beam 4 --nbest 4" ] && echo 160 || echo 40) ]
		[ "$mode" = "--beam 4 --nbest 4" ] && { cut -f4 out >o; mv o out; }
		awk "$ONE_AWK" "$LEX" out >bad
		awk 'NF > 3 { print }' out >>bad
		[ ! -s bad ] || { echo "$mode:"; head bad; false; }
	done
	# the model alone writes longer outputs; B alone breaks A's rule
	gen -m "$D/one.bin" "$D/t40.src" | awk 'NF > 3' | grep -q .
	# an ensemble: the first model's automaton meets B, the others' mask their log p
	train $TINY -q --epochs 1 -s 1 -o free.bin "$D/ll.fz"
	gen -m "$D/one.bin" -m free.bin --fsa short.fst --beam 3 "$D/t40.src" >ens
	[ "$(wc -l <ens)" -eq 40 ]
	awk "$ONE_AWK" "$LEX" ens >bad
	[ ! -s bad ]
	# no output with a primary stress: none of A
	awk '$1 !~ /1$/ { print "0 1 " $1 } END { print 1 }' "$LEX" >nostress.fst
	run_err 1 "^gen: .*one.bin: the model's automaton and --fsa: no sentence is accepted by both: their intersection is empty$" \
		gen -m "$D/one.bin" --fsa nostress.fst "$D/t40.src"
}

@test "score --fsa B on a model trained under the output automaton A: gen --fsa B's figures, the outputs of both sum to 1; empty A and B refused" {
	# B: six outputs, five with one primary stress (A's rule); after
	# K AE0 both allow T, which no output of both continues
	printf '0 1 K\n0 2 AE1 0.5\n0 3 T\n1 2 AE1\n1 6 AE0\n2 4 T\n3 5 AH1\n6 4 T\n2\n4\n5\n' >fin.fst
	printf 'K AE1\nK AE1 T\nK AE0 T\nAE1\nAE1 T\nT AH1\n' >all.tgt
	for src in 'k a t' 'a t'; do
		echo "$src" | gen -m "$D/one.bin" --fsa fin.fst --beam 5 --nbest 5 --logprob >masked
		[ "$(cut -f4 masked | sort | tr '\n' ,)" = "AE1,AE1 T,K AE1,K AE1 T,T AH1," ]
		cut -f4 masked >m.tgt
		yes "$src" | head -5 >m.src
		score -q -m "$D/one.bin" --fsa fin.fst --source m.src m.tgt | cut -f1 | paste <(cut -f5 masked) - >both
		awk -F'\t' '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-4) { print; bad = 1 } } END { exit bad }' both
		# over B's six outputs: the five of both sum to 1, K AE0 T is -inf
		yes "$src" | head -6 >a.src
		score -q -m "$D/one.bin" --fsa fin.fst --source a.src all.tgt | cut -f1 >sc
		[ "$(sed -n 3p sc)" = -inf ]
		awk '{ s += exp($1) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-4) { print s; exit 1 } }' sc
		# the model alone gives them less
		score -q -m "$D/one.bin" --source a.src all.tgt | cut -f1 | paste - sc |
			awk -F'\t' 'NR != 3 && !($1 < $2 - 1e-4) { bad = 1 } END { exit bad }'
	done
	awk '$1 !~ /1$/ { print "0 1 " $1 } END { print 1 }' "$LEX" >nostress.fst
	run_err 1 "^score: .*one.bin: the model's automaton and --fsa: no sentence is accepted by both: their intersection is empty$" \
		score -m "$D/one.bin" --fsa nostress.fst --source m.src m.tgt
}

@test "gen --regex, --grammar and score --regex, --grammar on an encoder-decoder: the finite language as --fsa gives it, summing to 1" {
	fin_model
	printf 'root ::= ("K " | "") "AE1" (" T")? | "T AH1"\n' >fin.gbnf
	for src in 'k a t' 'a t'; do
		echo "$src" | gen -m free.bin --fsa fin.fst --beam 5 --nbest 5 --logprob >fsa
		[ "$(cut -f4 fsa | sort | tr '\n' ,)" = "AE1,AE1 T,K AE1,K AE1 T,T AH1," ]
		beam_is_score free.bin "$src" --regex '(K AE1|AE1) T?|T AH1'
		cmp <(cut -f4,5 masked) <(cut -f4,5 fsa)
		beam_is_score free.bin "$src" --grammar fin.gbnf
		cmp <(cut -f4,5 masked) <(cut -f4,5 fsa)
	done
}

@test "gen --grammar, --regex B on a model trained under the output automaton A: the outputs of both sum to 1, \"K AE0\" trimmed" {
	# B: six outputs, five with one primary stress (A's rule); after
	# K AE0 both allow T, which no output of both continues
	printf 'root ::= "K AE1" (" T")? | "K AE0 T" | "AE1" (" T")? | "T AH1"\n' >b.gbnf
	printf 'K AE1\nK AE1 T\nK AE0 T\nAE1\nAE1 T\nT AH1\n' >all.tgt
	yes 'k a t' | head -6 >a.src
	for opt in --grammar=b.gbnf '--regex=K AE1 T?|K AE0 T|AE1 T?|T AH1'; do
		beam_is_score "$D/one.bin" 'k a t' "${opt%%=*}" "${opt#*=}"
		[ "$(cut -f4 masked | sort | tr '\n' ,)" = "AE1,AE1 T,K AE1,K AE1 T,T AH1," ]
		score -q -m "$D/one.bin" "${opt%%=*}" "${opt#*=}" --per-token --source a.src all.tgt >pt
		awk -F'\t' '{ s += exp($1) } END { d = s - 1; if (d < 0) d = -d; if (d > 1e-4) { print s; exit 1 } }' pt
		# AE0 after K is the token trimmed
		[ "$(sed -n 3p pt | cut -f1,5)" = "$(printf -- '-inf\tAE0=-inf')" ]
		cut -f1 pt >"sc${opt%%=*}"
	done
	cmp sc--grammar sc--regex
}

@test "score --fsa on an encoder-decoder: foreign tokens listed, a missing file named; --regex and --grammar's errors as well" {
	train $TINY -q --epochs 1 -s 1 -o free.bin "$D/ll.fz"
	printf '0 1 K\n0 1 XX1\n1\n' >alpha.fst
	run_err 1 "^gen: .*alpha.fst: 1 token the model cannot produce \(not in the vocabulary\): XX1 \(line 2\)" \
		gen -m free.bin --fsa alpha.fst "$D/t40.src"
	run_err 1 "^gen: .*nosuch.fst" gen -m free.bin --fsa nosuch.fst "$D/t40.src"
	run_err 1 "^gen: regex: 1 token the model cannot produce \(not in the vocabulary\): XX1" gen -m free.bin --regex 'K XX1' "$D/t40.src"
	run_err 1 "^gen: nosuch.gbnf" gen -m free.bin --grammar nosuch.gbnf "$D/t40.src"
	run_err 2 "^gen: --fsa, --regex and --grammar exclude each other" gen -m free.bin --regex K --fsa alpha.fst "$D/t40.src"
	# score --fsa likewise
	head -3 "$D/test.src" >s3.src
	head -3 "$D/test.ref" | cut -f1 >s3.tgt
	run_err 1 "^score: .*alpha.fst: 1 token the model cannot produce \(not in the vocabulary\): XX1 \(line 2\)" \
		score -m free.bin --fsa alpha.fst --source s3.src s3.tgt
	run_err 1 "^score: .*nosuch.fst" score -m free.bin --fsa nosuch.fst --source s3.src s3.tgt
	run_err 1 "^score: regex: 1 token the model cannot produce \(not in the vocabulary\): XX1" \
		score -m free.bin --regex 'K XX1' --source s3.src s3.tgt
	printf 'root ::= "K" undefined\n' >bad.gbnf
	run_err 1 "^score: bad.gbnf:1: .*undefined" score -m free.bin --grammar bad.gbnf --source s3.src s3.tgt
	run_err 2 "^score: --fsa, --regex and --grammar exclude each other" score -m free.bin --grammar bad.gbnf --fsa alpha.fst --source s3.src s3.tgt
}

@test "score: a reference outside the language has probability 0 (-inf), the others are scored" {
	printf 'c a t\nc a t\nc a t\n' >s.src
	printf 'K AE1 T\nK AE1 T AH1\nK AE0 T\n' >s.tgt
	run -0 --separate-stderr score -m "$D/one.bin" --source s.src s.tgt
	[ "${lines[0]%%$'\t'*}" != -inf ]
	[ "${lines[1]%%$'\t'*}" = -inf ]
	[ "${lines[2]%%$'\t'*}" = -inf ]
}

@test "over a finite language the model's probabilities of its strings sum to 1 (enumerated); without it they do not" {
	fin_fst
	for i in $(seq 1 12); do
		printf 'k a t\ncat\na t\nt\nt u\n'
	done >p.src
	for i in $(seq 1 12); do
		printf 'K AE1 T\nK AE1\nAE1 T\nAE1\nT AH1\n'
	done >p.tgt
	featurize -q --source p.src -o p.fz p.tgt
	train -q --hidden 8 --embed 8 --attn-hidden 8 --threads 1 --batch 8 --epochs 3 -s 1 --output-fsa fin.fst -o fin.bin p.fz
	yes 'k a t' | head -5 >all.src
	printf 'K AE1 T\nK AE1\nAE1 T\nAE1\nT AH1\n' >all.tgt
	score -m fin.bin --source all.src all.tgt 2>/dev/null | awk '{ s += exp($1) } END { printf "%.6f\n", s; exit !(s > 0.999 && s < 1.001) }'
	train -q --hidden 8 --embed 8 --attn-hidden 8 --threads 1 --batch 8 --epochs 3 -s 1 -o free.bin p.fz
	score -m free.bin --source all.src all.tgt 2>/dev/null | awk '{ s += exp($1) } END { printf "%.6f\n", s; exit !(s < 0.99) }'
}

@test "the model keeps the automaton: fsa/ members under the CRC, --resume continues under it" {
	for m in fsa/arcs.npy fsa/arcw.npy fsa/states.npy fsa/statew.npy; do
		tar tf "$D/one.bin" | grep -qx "$m"
	done
	cp "$D/one.bin" m.bin
	/usr/bin/python3 - <<'PY'
import tarfile
m = [x for x in tarfile.open("m.bin").getmembers() if x.name == "fsa/arcs.npy"][0]
b = bytearray(open("m.bin", "rb").read())
b[m.offset_data + m.size - 3] ^= 4
open("bad.bin", "wb").write(b)
PY
	run_err 1 "^gen: bad.bin: member fsa/arcs.npy: checksum mismatch \(corrupted file\)$" gen -m bad.bin "$D/t40.src"
	run_err 1 "^score: bad.bin: member fsa/arcs.npy: checksum mismatch \(corrupted file\)$" score -m bad.bin --source "$D/t40.src" "$D/t40.src"
	train -q --resume m.bin --epochs 3 --skip-rejected "$D/ll.fz"
	[ "$(meta m.bin fsa.states)" -eq 2 ]
	gen -m m.bin "$D/t40.src" | awk "$ONE_AWK" "$LEX" - >bad
	[ ! -s bad ]
	run_err 1 "pair [0-9]+ .*the automaton rejects" train -q --resume m.bin --epochs 4 "$D/ll.fz"
	run_err 2 "^train: --output-fsa: not with --resume" train -q --resume m.bin --epochs 4 --output-fsa "$ONE" "$D/ll.fz"
}

@test "train --output-fsa: bad automata and usage fail with a clear message and no model" {
	printf '0 1 K\n0 x AE1\n1\n' >bad.fst
	run_err 1 "^train: --output-fsa: .*bad.fst:2: bad state 'x'" train $TINY --epochs 1 --output-fsa bad.fst -o m.bin "$D/ll.fz"
	printf '0 1 K\n0 1 XX1\n1 2 QQ\n2\n' >alpha.fst
	run_err 1 "^train: --output-fsa: .*alpha.fst: 2 tokens the model cannot produce \(not in the vocabulary\): XX1 \(line 2\), QQ \(line 3\)$" \
		train $TINY --epochs 1 --output-fsa alpha.fst -o m.bin "$D/ll.fz"
	printf '0 1 K\n1 2 T\n' >none.fst
	run_err 1 "^train: --output-fsa: .*accepts nothing" train $TINY --epochs 1 --output-fsa none.fst -o m.bin "$D/ll.fz"
	printf '0 1 ZH\n1\n' >zh.fst
	run_err 1 "^train: .*ll.fz: the automaton rejects the target of every pair$" \
		train $TINY --epochs 1 --output-fsa zh.fst --skip-rejected -o m.bin "$D/ll.fz"
	run_err 1 "nosuch.fst" train $TINY --epochs 1 --output-fsa nosuch.fst -o m.bin "$D/ll.fz"
	run_err 2 "^train: --skip-rejected: only with --output-fsa" train $TINY --epochs 1 --skip-rejected -o m.bin "$D/ll.fz"
	[ ! -e m.bin ]
}

@test "train(1) EXAMPLES: a g2p model under the one-primary-stress automaton" {
	cp "$D/train.src" "$D/train.tgt" "$LEX" .
	ln -s "$TOP/lexicons" lexicons
	featurize --top 100 --lexicon arpabet-phonology.lex \
		--source train.src -o g2p.fz train.tgt 2>/dev/null
	train --hidden 32 --embed 16 --epochs 1 \
		--output-fsa lexicons/one-primary-stress.fst --skip-rejected \
		-o g2p-stress.llrnn g2p.fz 2>/dev/null
	echo 'c a t' | gen -m g2p-stress.llrnn | awk "$ONE_AWK" "$LEX" - >bad
	[ ! -s bad ]
}
