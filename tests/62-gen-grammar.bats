#!/usr/bin/env bats
# gen --grammar (issue 51, the mask-only mode): examples/numbers.gbnf, a
# grammar that nests, over the Brown slice's vocabulary; 1,000 sentences
# of a 3-gram model checked by an independent recogniser
# (fixtures/gbnf/numbers.py: Python's re and recursive descent, not the
# grammar), every decoding mode of a tiny LSTM, --max-len honoured by
# steering towards acceptance, the prefix read by the grammar, every
# bad grammar refused with its file:line or rule, the words of its
# literals no token can be named, and the notice of a trimming past its
# budget (LLRNN_GRAMMAR_BUDGET makes it small).

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from tagged "$BROWN" >"$m/brown.tok" 2>/dev/null
	train -q --ngram 3 --discount-fallback -o "$m/brown.arpa" "$m/brown.tok" 2>/dev/null
	featurize --top 200 "$m/brown.tok" >"$m/f.llr" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o "$m/model.llrnn" "$m/f.llr"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	G="$TOP/examples/numbers.gbnf"
	CHECK="$FIXTURES/gbnf/numbers.py"
	cd "$BATS_TEST_TMPDIR"
}

@test "gen --grammar: 1,000 sentences of the 3-gram model, every one valid by an independent recogniser" {
	# the checker itself: it accepts and rejects what the grammar does
	printf '%s\n' '1958 .' '( 2 ) , $1,000 and 5.3 .' '( ( 1 , ( 2 ) ) and 3 ) .' '12,345,678 .' >good
	/usr/bin/python3 "$CHECK" <good
	printf '%s\n' '( 1 .' '1 , .' '1,00 .' '1  .' '1 ) .' '01,000 .' 'and 1 .' '1 and 2 and 3 .' >bad
	run -1 /usr/bin/python3 "$CHECK" <bad
	[ "${#lines[@]}" -eq 8 ]
	gen -m "$M/brown.arpa" -s 1 -n 1000 --grammar "$G" >out
	[ "$(wc -l <out)" -eq 1000 ]
	/usr/bin/python3 "$CHECK" <out
	# the language is not a trivial one: nesting, lists, several numbers
	grep -q '( .* ( ' out || grep -q ' ( ' out
	grep -q ' and ' out
	[ "$(sort -u out | wc -l)" -gt 100 ]
	# without the grammar the same model writes other things
	gen -m "$M/brown.arpa" -s 1 -n 100 >free
	run -1 /usr/bin/python3 "$CHECK" <free
	[ "${#lines[@]}" -gt 90 ]
}

@test "gen --grammar: every decoding mode of an LSTM stays in the language, within --max-len" {
	for mode in "-n 100 --max-len 30" "-n 30 --top-k 3 --max-len 30" "-n 100 --top-p 0.5 --max-len 30" \
		"-n 100 --temperature 2 --max-len 30" "--greedy" "--beam 4 --nbest 4 --max-len 30" "-n 100 --max-len 4" \
		"--beam 3 --nbest 2 --max-len 2" "-n 50 --logprob --max-len 30"; do
		gen -m "$M/model.llrnn" -s 2 $mode --grammar "$G" >out
		n=$(wc -l <out)
		case "$mode" in
		-n\ 100*) [ "$n" -eq 100 ] ;;
		-n\ 50*) [ "$n" -eq 50 ] ;;
		-n\ 30*) [ "$n" -eq 30 ] ;;
		--greedy) [ "$n" -eq 1 ] ;;
		--beam\ 4*) [ "$n" -eq 4 ] ;;
		*) [ "$n" -eq 2 ] ;;
		esac
		/usr/bin/python3 "$CHECK" <out || { echo "$mode"; false; }
	done
	# --max-len bounds the words, </s> after them
	gen -m "$M/model.llrnn" -s 3 -n 100 --max-len 4 --grammar "$G" | awk 'NF > 4 { bad = 1 } END { exit bad }'
	gen -m "$M/model.llrnn" -s 3 --beam 3 --nbest 2 --max-len 2 --grammar "$G" | awk 'NF != 2 { bad = 1 } END { exit bad }'
	# the LSTM nests deeply (it likes "("), and still closes every aside
	gen -m "$M/model.llrnn" -s 4 -n 5 --top-k 3 --grammar "$G" >deep
	/usr/bin/python3 "$CHECK" <deep
	awk '{ for (i = 1; i <= NF; i++) if ($i == "(") { d++; if (d > m) m = d } else if ($i == ")") d-- } END { exit m < 10 }' deep
}

@test "gen --grammar: recursion to any depth, and the shortest way out within --max-len" {
	# balanced parentheses around one number: a context-free language
	printf 'root ::= "( " root " )" | [0-9]+\n' >paren.gbnf
	gen -m "$M/model.llrnn" -s 5 -n 300 --max-len 9 --grammar paren.gbnf >out
	[ "$(wc -l <out)" -eq 300 ]
	# an awk recogniser: k opening, one number, k closing, nothing else
	awk '{ k = 0; while ($(k + 1) == "(") k++; ok = NF == 2 * k + 1 && $(k + 1) ~ /^[0-9]+$/;
	       for (i = k + 2; i <= NF; i++) ok = ok && $i == ")"; if (!ok) { print; bad = 1 } } END { exit bad }' out
	# depth reached: the LSTM likes "(", so some sentences nest
	awk '$1 == "(" && $2 == "(" { f = 1 } END { exit !f }' out
	awk 'NF > 9 { bad = 1 } END { exit bad }' out
	# a prefix is read by the grammar and continued inside it
	gen -m "$M/brown.arpa" -s 6 -n 20 -p "( ( (" --max-len 7 --grammar paren.gbnf >out
	awk '$1 != "(" || $2 != "(" || $3 != "(" || $NF != ")" || NF != 7 { bad = 1 } END { exit bad }' out
	run_err 1 "gen: the prefix: the grammar rejects word 2 '\\)'" gen -m "$M/brown.arpa" -p "( )" --grammar paren.gbnf
	run_err 1 "gen: no accepting state is reachable within --max-len 3: every sentence of the grammar after the prefix needs more words" \
		gen -m "$M/brown.arpa" -p "( ( (" --max-len 3 --grammar paren.gbnf
	run_err 1 "gen: no accepting state is reachable within --max-len 1" gen -m "$M/brown.arpa" --max-len 1 --grammar "$G"
}

@test "gen --grammar: bad grammars are refused with file:line and the rule named" {
	printf 'root ::= list " ."\nlist ::= item (" , " itme)*\nitem ::= [0-9]+\n' >g
	run_err 1 "^gen: g:2: undefined rule 'itme'$" gen -m "$M/brown.arpa" --grammar g
	printf '# sums\nroot ::= sum " ."\nsum ::= sum " + " num | num\nnum ::= [0-9]+\n' >g
	run_err 1 "^gen: g:3: rule 'sum' is left-recursive \\(sum -> sum\\)$" gen -m "$M/brown.arpa" --grammar g
	printf 'root ::= a\na ::= b "x"\nb ::= " "? a | "y"\n' >g
	run_err 1 "^gen: g:2: rule 'a' is left-recursive \\(a -> b -> a\\)$" gen -m "$M/brown.arpa" --grammar g
	printf 'root ::= "1" \n\n  | ( "2" \n' >g
	run_err 1 "^gen: g:3: '\\(' without its '\\)'$" gen -m "$M/brown.arpa" --grammar g
	printf 'root ::= "1\n' >g
	run_err 1 "^gen: g:1: unterminated string or class$" gen -m "$M/brown.arpa" --grammar g
	printf 'root ::= [0-9] %%\n' >g
	run_err 1 "^gen: g:1: unexpected character '%'$" gen -m "$M/brown.arpa" --grammar g
	printf 'root ::= "1" root\n' >g
	run_err 1 "^gen: g: the grammar accepts nothing" gen -m "$M/brown.arpa" --grammar g
	printf 'list ::= "1"\n' >g
	run_err 1 "^gen: g: no rule 'root'$" gen -m "$M/brown.arpa" --grammar g
	printf 'root ::= "zq" [0-9]\n' >g
	run_err 1 "^gen: g: the grammar accepts no sentence of the tokens of .*brown.arpa$" gen -m "$M/brown.arpa" --grammar g
	# ambiguous: 2^k parses alive after k "(", refused once past the limit
	printf 'root ::= "( " root " )" | "( " root " ]" | [0-9]+\n' >g
	run_err 1 "^gen: the grammar is too ambiguous: more than 16384 parses alive at once$" \
		gen -m "$M/brown.arpa" -p "$(printf '( %.0s' $(seq 16))" --grammar g
	run_err 1 "^gen: nosuch.gbnf: " gen -m "$M/brown.arpa" --grammar nosuch.gbnf
	run_err 2 "^gen: --grammar excludes --fsa and --regex$" gen -m "$M/brown.arpa" --grammar "$G" --regex a
}

@test "gen, score, featurize --grammar: the words of its literals no token can be are named once; the rest of the grammar applies" {
	# zzqq can be no token; qq no token's beginning; qzx no token's end; "1" and "." are tokens
	printf 'root ::= [0-9]+ " ." | "zzqq ." | "( " [a-z]+ " qq" | "qzx" " ." | "1 ."\n' >w.gbnf
	gen -m "$M/brown.arpa" -s 1 -n 20 --grammar w.gbnf >out 2>err
	[ "$(wc -l <out)" -eq 20 ]
	run grep -vcE '^[0-9]+ \.$' out
	assert_output 0
	printf 'gen: w.gbnf: 3 words of its literals no token of the vocabulary can be, so the alternatives that hold them never apply: zzqq, qq, qzx\n' | diff - err
	printf '1 .\n' | score -q -m "$M/model.llrnn" --grammar w.gbnf >/dev/null 2>err
	grep -c 'zzqq, qq, qzx$' err | grep -qx 1
	{ cat "$M/brown.tok"; echo '12 .'; } >t.tok
	featurize -q --top 10 --background grammar:w.gbnf --skip-rejected -o f.llr t.tok 2>err
	grep -qx 'featurize: w.gbnf: 3 words of its literals no token of the vocabulary can be, so the alternatives that hold them never apply: zzqq, qq, qzx' err
	# a grammar whose every word some token can be: nothing said
	gen -m "$M/brown.arpa" -s 1 -n 5 --grammar "$G" >out 2>err
	[ ! -s err ]
}

# The notice of a grammar's trimming past its budget (gen(1), Grammars).
PAST='trimming the grammar against the vocabulary ran past its budget of work: the states not decided by then are allowed untrimmed, so a sentence may reach a dead end (a state from which no sentence of the vocabulary'"'"'s tokens ends)'

@test "gen --grammar: past the trimming's budget (LLRNN_GRAMMAR_BUDGET), one notice naming the grammar; the sentences still come, valid" {
	printf 'root ::= [a-z]+ (" " [a-z]+)*\n' >words.gbnf
	# (20 sentences: untrimmed, each step tries every word of the 3-gram's
	# vocabulary against the grammar, about 0.1 CPU s a sentence)
	LLRNN_GRAMMAR_BUDGET=100 gen -m "$M/brown.arpa" -s 1 -n 20 --grammar words.gbnf >out 2>err
	[ "$(wc -l <out)" -eq 20 ]
	[ "$(cat err)" = "gen: words.gbnf: $PAST" ]
	run grep -cvxE '[a-z]+( [a-z]+)*' out
	[ "$output" = 0 ]
	# a grammar that nests, from the n-gram and from the LSTM: valid all the same
	LLRNN_GRAMMAR_BUDGET=100 gen -m "$M/brown.arpa" -s 1 -n 200 --grammar "$G" >out 2>err
	[ "$(wc -l <out)" -eq 200 ]
	[ "$(cat err)" = "gen: $G: $PAST" ]
	/usr/bin/python3 "$CHECK" <out
	LLRNN_GRAMMAR_BUDGET=100 gen -m "$M/model.llrnn" -s 2 -n 20 --max-len 30 --grammar "$G" >out 2>err
	[ "$(wc -l <out)" -eq 20 ]
	[ "$(cat err)" = "gen: $G: $PAST" ]
	/usr/bin/python3 "$CHECK" <out
	# from standard input, named so
	LLRNN_GRAMMAR_BUDGET=100 gen -m "$M/brown.arpa" -s 1 -n 5 --grammar - <words.gbnf >out 2>err
	[ "$(wc -l <out)" -eq 5 ]
	[ "$(cat err)" = "gen: <stdin>: $PAST" ]
	# a budget that is no number of steps is refused
	for v in abc 0 -5 12x ' 7'; do
		LLRNN_GRAMMAR_BUDGET=$v run_err 1 "^gen: LLRNN_GRAMMAR_BUDGET: '$v' is not a number of steps \(1 or more\)$" \
			gen -m "$M/brown.arpa" --grammar words.gbnf
	done
}

@test "gen --grammar: within the trimming's budget, nothing on stderr" {
	printf 'root ::= [a-z]+ (" " [a-z]+)*\n' >words.gbnf
	for g in words.gbnf "$G"; do
		gen -m "$M/brown.arpa" -s 1 -n 50 --grammar "$g" >out 2>err
		[ "$(wc -l <out)" -eq 50 ]
		[ ! -s err ]
		LLRNN_GRAMMAR_BUDGET= gen -m "$M/model.llrnn" -s 1 -n 5 --max-len 30 --grammar "$g" >out 2>err
		[ "$(wc -l <out)" -eq 5 ]
		[ ! -s err ]
	done
}

@test "gen(1) EXAMPLES: the grammar example runs as written" {
	cp "$M/brown.tok" brown.tok
	cp "$G" numbers.gbnf
	grep -qF 'train --ngram 3 -o brown.arpa brown.tok' "$TOP/man/gen.1"
	grep -qF 'gen -m brown.arpa -n 100 -s 1 --grammar numbers.gbnf > out.txt' "$TOP/man/gen.1"
	grep -qF 'gen -m brown.arpa --greedy --max-len 8 --grammar numbers.gbnf' "$TOP/man/gen.1"
	train --ngram 3 -o brown.arpa brown.tok 2>/dev/null
	gen -m brown.arpa -n 100 -s 1 --grammar numbers.gbnf > out.txt
	[ "$(wc -l <out.txt)" -eq 100 ]
	/usr/bin/python3 "$CHECK" <out.txt
	gen -m brown.arpa --greedy --max-len 8 --grammar numbers.gbnf >out
	[ "$(wc -l <out)" -eq 1 ]
	/usr/bin/python3 "$CHECK" <out
	awk 'NF > 8 { exit 1 }' out
	mandoc -Tlint -W warning "$TOP/man/gen.1"
}
