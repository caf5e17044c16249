#!/usr/bin/env bats
# gen from a model trained under an automaton background (issue 51,
# featurize --background regex: or fsa:), without --fsa, --regex or
# --grammar: every decoding mode ends every sentence in an accepting
# state of the model's own automaton, even when --max-len cuts it short,
# or says that none is reachable; the prefix is read by the automaton;
# --logprob stays the model's (score's: the automaton's weights are not
# applied twice).  With --regex, --fsa or --grammar B as well, gen follows
# the intersection: every sentence is in both (awk and grep -E), --logprob
# is the model's log p renormalised at each step over the tokens both
# allow (computed here from score --per-token over the enumerated
# language), and an empty intersection is an error.
# Each sentence is checked by awk, not by the library.  Data: the Brown
# fixture's sentences that open with "the" or "a" and end with their only
# "." (featurize --skip-rejected keeps those).

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 8 --embed 8 --layers 1 --threads 1"
R='(the|a) [^\.]* \.'

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	tok --from tagged -l "$BROWN" 2>/dev/null >"$d/brown.tok"
	featurize -q --top 50 --skip-rejected --background "regex:$R" -o "$d/the.fz" "$d/brown.tok" 2>/dev/null
	train -q $TINY --epochs 2 -s 1 -o "$d/the.llrnn" "$d/the.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

# rejected FILE: the lines of FILE (first column) outside the language:
# "the" or "a", then tokens other than ".", then ".".
rejected() {
	cut -f1 "$1" | awk '{ ok = NF >= 2 && ($1 == "the" || $1 == "a") && $NF == "."
	                      for (i = 2; i < NF; i++) if ($i == ".") ok = 0
	                      if (!ok) print }'
}

@test "gen: a model trained under regex: ends every sentence in the language in every mode, within a small --max-len" {
	[ "$(meta "$D/the.llrnn" background_fsa)" = "regex:$R" ]
	[ "$(meta "$D/the.fz" sentences)" -gt 300 ]
	for mode in "-n 200" "-n 200 --top-k 3" "-n 200 --top-p 0.5" "-n 200 --temperature 2" \
		"--greedy" "--beam 4 --nbest 4" "-n 200 --logprob"; do
		for len in 2 3 4 8; do
			gen -m "$D/the.llrnn" -s 2 --max-len $len $mode >out
			case "$mode" in
			-n*) [ "$(wc -l <out)" -eq 200 ] ;;
			--greedy) [ "$(wc -l <out)" -eq 1 ] ;;
			*) [ "$(wc -l <out)" -eq $((len == 2 ? 2 : 4)) ] ;; # within 2 words: the . and a .
			esac
			rejected out >bad
			[ ! -s bad ] || { echo "$mode --max-len $len:"; head bad; false; }
			# --max-len bounds the words, the final "." included
			cut -f1 out | awk -v n=$len 'NF > n { bad = 1 } END { exit bad }'
		done
	done
	# cut at 3 words, the language has room for one between "the" and "."
	gen -m "$D/the.llrnn" -s 5 -n 200 --max-len 3 | awk 'NF == 3 { n++ } END { exit !(n > 0) }'
}

@test "gen: the model's automaton reads the prefix, and the continuation stays in the language" {
	gen -m "$D/the.llrnn" -s 3 -n 100 --max-len 3 -p "a man" >out
	[ "$(wc -l <out)" -eq 100 ]
	[ "$(grep -c '^a man ' out)" -eq 100 ]
	rejected out >bad
	[ ! -s bad ]
	# three words after the prefix at most
	awk 'NF > 5 { bad = 1 } END { exit bad }' out
	gen -m "$D/the.llrnn" --beam 3 --nbest 3 --max-len 1 -p "the" >out
	[ "$(cat out)" = "the ." ]
	# a word outside the vocabulary is read as <unk>, which [^\.] allows,
	# by gen's prefix and by the network (score gives it <unk>'s figure)
	gen -m "$D/the.llrnn" -s 3 -n 20 --max-len 2 -p "the zzqq" >out
	[ "$(wc -l <out)" -eq 20 ]
	[ "$(grep -c '^the zzqq ' out)" -eq 20 ]
	rejected out >bad
	[ ! -s bad ]
	printf 'the zzqq .\nthe <unk> .\n' | score -m "$D/the.llrnn" 2>/dev/null | cut -f1 >sc.txt
	[ "$(sed -n 1p sc.txt)" != -inf ]
	[ "$(sed -n 1p sc.txt)" = "$(sed -n 2p sc.txt)" ]
	run_err 1 "^gen: the prefix: the model's automaton rejects word 1 'man'$" gen -m "$D/the.llrnn" -p "man"
	run_err 1 "^gen: the prefix: the model's automaton rejects word 3 'the'$" gen -m "$D/the.llrnn" -p "the . the"
	run_err 1 "^gen: the prefix: the model's automaton rejects word 1 'zzqq' \\(read as <unk>\\)$" \
		gen -m "$D/the.llrnn" --greedy -p "zzqq"
}

@test "gen: no accepting state of the model's automaton within --max-len: exit 1, nothing on stdout, the reason" {
	for mode in "-n 5" "--top-k 3" "--top-p 0.5" "--greedy" "--beam 3"; do
		run_err 1 "^gen: no accepting state is reachable within --max-len 1: the shortest sentence of the model's automaton needs 2 words$" \
			gen -m "$D/the.llrnn" -s 1 --max-len 1 $mode
	done
	# after a prefix: a language of a d? b c
	awk 'BEGIN { for (i = 0; i < 100; i++) print i % 2 ? "a b c" : "a d b c" }' >abc.tok
	featurize -q --top 10 --background 'regex:a d? b c' -o abc.fz abc.tok
	train -q $TINY --epochs 1 -s 1 -o abc.llrnn abc.fz
	for mode in "-n 5" "--greedy" "--beam 2"; do
		run_err 1 "^gen: no accepting state is reachable within --max-len 1: the shortest sentence of the model's automaton after the prefix needs 2 words$" \
			gen -m abc.llrnn --max-len 1 -p "a d" $mode
	done
	gen -m abc.llrnn --max-len 2 -p "a d" --greedy >out
	[ "$(cat out)" = "a d b c" ]
	# a prefix file stops at its first such line, with what came before written
	printf 'a d b\na d\n' >pre.txt
	run -1 --separate-stderr gen -m abc.llrnn --greedy --max-len 1 --prefix-file pre.txt
	[ "$output" = "a d b c" ]
	[[ "$stderr" == "gen: "*"no accepting state is reachable within --max-len 1"* ]]
}

@test "gen --logprob of a model trained under an automaton is the model's (score's), the weights not applied twice" {
	gen -m "$D/the.llrnn" -s 4 -n 30 --max-len 6 --logprob >lp.tsv
	cut -f1 lp.tsv | score -m "$D/the.llrnn" 2>/dev/null | cut -f1 >sc.txt
	cut -f2 lp.tsv | paste - sc.txt | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }'
	# a weighted automaton: exp(-2) on 'b'
	awk 'BEGIN { for (i = 0; i < 240; i++) print (i % 3 ? "a" : "b") (i % 2 ? " c" : "") " e" }' >lang.tok
	printf '0 1 a\n0 1 b 2.0\n1 2 c\n1 3 e\n2 3 e\n3\n' >w.fst
	featurize -q --top 10 --background fsa:w.fst -o w.fz lang.tok
	train -q $TINY --epochs 2 -s 1 -o w.llrnn w.fz
	gen -m w.llrnn --beam 4 --nbest 4 --logprob >beam.tsv
	cut -f1 beam.tsv | sort >got
	printf '%s\n' 'a c e' 'a e' 'b c e' 'b e' | cmp - got
	cut -f1 beam.tsv | score -m w.llrnn 2>/dev/null | cut -f1 >sc.txt
	cut -f2 beam.tsv | paste - sc.txt | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }'
}

@test "gen --regex, --fsa, --grammar B on a model trained under A: every sentence of every mode is in A and in B (awk, grep -E)" {
	printf '0 1 the\n0 1 a\n0 1 of\n1 1 of\n1 1 and\n1 1 to\n1 1 in\n1 2 .\n2\n' >b.fst
	printf 'root ::= ("the" | "a" | "of") (" " [a-m]+)* " ."\n' >b.gbnf
	# each constraint with grep -E's pattern for the words of A that B accepts
	local -a opt=(--regex --fsa --grammar) arg=('.* (of|in) .*' b.fst b.gbnf)
	local -a ere=('.* (of|in) .*' '(the|a)( (of|and|to|in))* \.' '(the|a)( [a-m]+)* \.')
	for i in 0 1 2; do
		for mode in "-n 100" "-n 100 --top-k 3" "-n 100 --top-p 0.5" "-n 100 --temperature 2" "--greedy" "--beam 4 --nbest 4"; do
			for len in 3 4 8; do
				gen -m "$D/the.llrnn" -s 2 --max-len $len $mode "${opt[i]}" "${arg[i]}" >out
				case "$mode" in
				-n*) [ "$(wc -l <out)" -eq 100 ] ;;
				--greedy) [ "$(wc -l <out)" -eq 1 ] ;;
				*) [ "$(wc -l <out)" -ge 1 ] ;;
				esac
				rejected out >bad
				grep -vxE "${ere[i]}" out >>bad || true
				[ ! -s bad ] || { echo "${opt[i]} ${arg[i]} $mode --max-len $len:"; head bad; false; }
				awk -v n=$len 'NF > n { bad = 1 } END { exit bad }' out
			done
		done
	done
	# B alone lets through what A forbids, and A alone what B forbids
	gen -m "$D/the.llrnn" -s 2 -n 300 --max-len 8 >free
	grep -vxE "${ere[2]}" free | grep -q .
	# a prefix read by both, continued in both
	gen -m "$D/the.llrnn" -s 3 -n 50 --max-len 4 -p "a he" --grammar b.gbnf >out
	[ "$(grep -cxE 'a he( [a-m]+)* \.' out)" -eq 50 ]
	run_err 1 "^gen: the prefix: the intersection of the model's automaton and the grammar rejects word 2 'was'$" \
		gen -m "$D/the.llrnn" -p "a was" --grammar b.gbnf
	# the shortest sentence of both needs 3 words
	for mode in "-n 5" "--greedy" "--beam 3"; do
		run_err 1 "^gen: no accepting state is reachable within --max-len 2: every sentence of the intersection of the model's automaton and the regular expression needs more words$" \
			gen -m "$D/the.llrnn" --max-len 2 $mode --regex "${arg[0]}"
	done
}

# language FILE: the sentences of up to 3 tokens over a b c d e that both
# the weighted A and B (two grep -E patterns) accept, into FILE.
language() {
	awk 'BEGIN { split("a b c d e", t); for (i = 1; i <= 5; i++) { print t[i]
	     for (j = 1; j <= 5; j++) { print t[i] " " t[j]; for (k = 1; k <= 5; k++) print t[i] " " t[j] " " t[k] } } }' |
		grep -xE '(a|b|d)( c| d)? e' | grep -xE "$1" >"$2"
}

# renormalised LANG GEN: the lines of GEN (sentence, TAB, gen's log p)
# whose figure is not log p under the model masked to LANG and
# renormalised: at each step the sum of the model's p (score --per-token,
# LANG's sentences) over the tokens that continue the words so far
# inside LANG (</s> where they are one of its sentences).
renormalised() {
	score -m w.llrnn --per-token "$1" 2>/dev/null | cut -f 4- | paste "$1" - |
		awk -F '\t' 'FNR == NR { n = split($1, w, " "); ctx = ""
		                         for (i = 1; i <= n + 1; i++) { t = $(i + 1); sub(/.*=/, "", t)
		                                                      lp[ctx, i <= n ? w[i] : "</s>"] = t; ctx = ctx " " w[i] }
		                         next }
		             FNR == 1 { for (k in lp) { split(k, p, SUBSEP); z[p[1]] += exp(lp[k]) } }
		             { n = split($1, w, " "); ctx = ""; want = 0
		               for (i = 1; i <= n + 1; i++) { x = i <= n ? w[i] : "</s>"
		                                            if (!((ctx, x) in lp)) { print "outside: " $0; next }
		                                            want += lp[ctx, x] - log(z[ctx]); ctx = ctx " " x }
		               d = want - $2; if (d < 0) d = -d
		               if (d > 1e-3) print $0 "\twant " want }' - "$2"
}

@test "gen --regex, --fsa, --grammar B on a model trained under a weighted A: --logprob is log p renormalised over A and B, A's weights not applied twice" {
	awk 'BEGIN { split("a b d", f); split("c d -", m)
	             for (i = 0; i < 270; i++) { x = m[i % 3 + 1]; print f[int(i / 3) % 3 + 1] (x == "-" ? "" : " " x) " e" } }' >lang.tok
	printf '0 1 a\n0 1 b 2.0\n0 1 d\n1 2 c\n1 2 d\n1 3 e\n2 3 e\n3\n' >a.fst
	featurize -q --top 10 --background fsa:a.fst -o w.fz lang.tok
	train -q $TINY --epochs 2 -s 1 -o w.llrnn w.fz
	printf '0 1 a\n0 1 b\n1 2 c\n1 3 e\n2 3 e\n3\n' >b.fst
	printf 'root ::= ("a" | "b") " c"? " e"\n' >b.gbnf
	language '(a|b)( c)? e' ab.txt
	[ "$(sort ab.txt | tr '\n' ,)" = "a c e,a e,b c e,b e," ]
	gen -m w.llrnn --beam 4 --nbest 4 --logprob --regex '(a|b) c? e' >beam.tsv
	[ "$(cut -f1 beam.tsv | sort | tr '\n' ,)" = "a c e,a e,b c e,b e," ]
	renormalised ab.txt beam.tsv >bad
	[ ! -s bad ] || { cat bad; false; }
	# the four sentences of the intersection sum to 1
	awk -F '\t' '{ s += exp($2) } END { exit !(s > 0.999 && s < 1.001) }' beam.tsv
	for b in "--fsa b.fst" "--grammar b.gbnf"; do
		gen -m w.llrnn --beam 4 --nbest 4 --logprob $b | cmp - beam.tsv
	done
	gen -m w.llrnn -s 1 -n 200 --logprob --regex '(a|b) c? e' >sample.tsv
	[ "$(cut -f1 sample.tsv | sort -u | wc -l)" -eq 4 ]
	renormalised ab.txt sample.tsv >bad
	[ ! -s bad ] || { head bad; false; }
	# a B that leaves one sentence of A gives it log p 0
	gen -m w.llrnn -s 1 -n 3 --logprob --regex 'd c e' >one.tsv
	awk -F '\t' '$1 == "d c e" && $2 * $2 < 1e-8 { n++ } END { exit n != 3 }' one.tsv
}

@test "gen: A and B that share no sentence: exit 1, nothing on stdout, both named" {
	printf '0 1 of\n1 2 .\n2\n' >of.fst
	printf 'root ::= "of ." | "the"\n' >of.gbnf
	for mode in "-n 5" "--greedy" "--beam 3"; do
		run_err 1 "^gen: $D/the.llrnn: the model's automaton and --regex: no sentence is accepted by both: their intersection is empty$" \
			gen -m "$D/the.llrnn" $mode --regex 'of .* \.'
		run_err 1 "^gen: $D/the.llrnn: the model's automaton and --fsa: no sentence is accepted by both: their intersection is empty$" \
			gen -m "$D/the.llrnn" $mode --fsa of.fst
		run_err 1 "^gen: $D/the.llrnn: the model's automaton and --grammar: no sentence is accepted by both: their intersection is empty$" \
			gen -m "$D/the.llrnn" $mode --grammar of.gbnf
	done
	# a grammar's is searched too: "the" (... .)+ never ends in A's one "."
	printf 'root ::= "the" (" ." " the")* " . ."\n' >dots.gbnf
	run_err 1 "^gen: $D/the.llrnn: the model's automaton and --grammar: no sentence is accepted by both" \
		gen -m "$D/the.llrnn" --grammar dots.gbnf
}

@test "gen(1) EXAMPLES: a model trained under a regular language, cut short by --max-len, and held to a --regex as well" {
	cp "$D/brown.tok" brown.tok
	grep -qF "    --background 'regex:(the|a) [^\\e.]* \\e.' -o the.feat brown.tok" "$TOP/man/gen.1"
	grep -qF 'train --epochs 5 -o the.llrnn the.feat' "$TOP/man/gen.1"
	grep -qF 'gen -m the.llrnn -n 100 -s 1 --max-len 4 > out.txt' "$TOP/man/gen.1"
	mandoc -Tascii "$TOP/man/gen.1" | col -b | grep -qF "grep -cvE '^(the|a)( ([^ .][^ ]*|\\.[^ ]+))* \\.\$' out.txt"
	featurize --top 50 --skip-rejected \
		--background 'regex:(the|a) [^\.]* \.' -o the.feat brown.tok 2>/dev/null
	# the suite's network is tiny; the page's line trains the default one
	train -q $TINY --epochs 5 -o the.llrnn the.feat
	gen -m the.llrnn -n 100 -s 1 --max-len 4 > out.txt
	[ "$(wc -l <out.txt)" -eq 100 ]
	run grep -cvE '^(the|a)( ([^ .][^ ]*|\.[^ ]+))* \.$' out.txt
	[ "$output" = 0 ]
	rejected out.txt >bad
	[ ! -s bad ]
	# the same model held to a regular expression as well
	grep -qF "gen -m the.llrnn -n 100 -s 1 --max-len 6 --regex '.* (of|in) .*' > both.txt" "$TOP/man/gen.1"
	mandoc -Tascii "$TOP/man/gen.1" | col -b |
		grep -qF "grep -cvE '^(the|a)( ([^ .][^ ]*|\\.[^ ]+))* (of|in)( ([^ .][^ ]*|\\.[^ ]+))* \\.\$' both.txt"
	gen -m the.llrnn -n 100 -s 1 --max-len 6 --regex '.* (of|in) .*' > both.txt
	[ "$(wc -l <both.txt)" -eq 100 ]
	run grep -cvE '^(the|a)( ([^ .][^ ]*|\.[^ ]+))* (of|in)( ([^ .][^ ]*|\.[^ ]+))* \.$' both.txt
	[ "$output" = 0 ]
	rejected both.txt >bad
	grep -vE ' (of|in) ' both.txt >>bad || true
	[ ! -s bad ]
}
