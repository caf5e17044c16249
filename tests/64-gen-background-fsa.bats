#!/usr/bin/env bats
# gen from a model trained under an automaton background (issue 51,
# featurize --background regex: or fsa:), without --fsa, --regex or
# --grammar: every decoding mode ends every sentence in an accepting
# state of the model's own automaton, even when --max-len cuts it short,
# or says that none is reachable; the prefix is read by the automaton;
# --logprob stays the model's (score's: the automaton's weights are not
# applied twice); a command-line constraint on such a model is refused.
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

@test "gen: --regex, --fsa or --grammar given to a model trained under an automaton is refused" {
	local why="the model was trained under an automaton background, which gen follows without being told; --fsa, --regex and --grammar do not combine with it"
	run_err 1 "^gen: $D/the.llrnn: $why" gen -m "$D/the.llrnn" --regex "$R"
	printf '0 1 the\n1 2 .\n2\n' >t.fst
	run_err 1 "^gen: $D/the.llrnn: $why" gen -m "$D/the.llrnn" --beam 2 --fsa t.fst
	printf 'root ::= "the ."\n' >t.gbnf
	run_err 1 "^gen: $D/the.llrnn: $why" gen -m "$D/the.llrnn" --greedy --grammar t.gbnf
}

@test "gen(1) EXAMPLES: a model trained under a regular language, cut short by --max-len" {
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
}
