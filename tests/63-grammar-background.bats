#!/usr/bin/env bats
# 63-grammar-background.bats - a GBNF grammar as a factor of the
# background (featurize --background grammar:FILE, issue 51): on the
# Brown slice, the sentences whose parentheses are balanced and that end
# in . ? or ! (the kept ones and the count of the skipped ones checked
# by awk, not by the library); the stream and the model carry the
# grammar's text; train's loss is over the constrained language; score
# gives finite log-probabilities that normalise (--check-norm) and -inf
# outside the language; the probabilities of a finite language sum to 1
# (enumerated); gen stays inside it; composed with an n-gram background;
# the error paths (syntax with file:line, a rejected sentence with
# file:line, a grammar too ambiguous, one no token can start), and the
# notice of the grammar's words no token of the vocabulary can be.  The
# normaliser against an equivalent regular expression, the threads and
# the members are tests/unit/test_gbnfbg.c.

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 8 --embed 8 --layers 1 --threads 1"

# in_language < FILE: one line a sentence, 1 when the sentence is in
# parens.gbnf's language (balanced "(" and ")" tokens, no other token
# with a parenthesis, at least one token before a last token . ? or !),
# else 0; empty lines (paragraph breaks) are skipped
in_language() {
	awk 'NF { d = 0; ok = NF >= 2 && $NF ~ /^[.?!]$/
		for (i = 1; ok && i < NF; i++)
			if ($i == "(") d++
			else if ($i == ")") { if (--d < 0) ok = 0 }
			else if ($i ~ /[()]/) ok = 0
		print (ok && !d) ? 1 : 0 }'
}

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	tok --from tagged "$BROWN" 2>/dev/null | head -n 200 >"$d/brown.tok"
	cat >"$d/parens.gbnf" <<-'EOF'
		# sentences ending in . ? or !, their parentheses balanced
		root  ::= item (" " item)* " " end
		end   ::= "." | "?" | "!"
		item  ::= plain | "(" (" " item)* " )"
		plain ::= [^ ()]+
	EOF
	featurize -q --top 50 --skip-rejected --background "grammar:$d/parens.gbnf" -o "$d/g.fz" "$d/brown.tok" 2>"$d/fz.err"
	train -q $TINY --epochs 2 -s 1 -o "$d/g.llrnn" "$d/g.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	G="$D/parens.gbnf"
}

# unspelled GRAMMAR WORDS...: featurize's notice of the words of GRAMMAR's
# literals that no token of the vocabulary can be
unspelled() {
	local g=$1 n=$(($# - 1)) w
	shift
	w=$(printf '%s, ' "$@")
	if [ "$n" -eq 1 ]; then
		echo "featurize: $g: 1 word of its literals no token of the vocabulary can be, so the alternatives that hold it never apply: ${w%, }"
	else
		echo "featurize: $g: $n words of its literals no token of the vocabulary can be, so the alternatives that hold them never apply: ${w%, }"
	fi
}

@test "featurize --background grammar: the stream and the model carry the grammar's text (fsa/grammar, meta)" {
	[ "$(meta "$D/g.fz" background_fsa)" = "grammar:$G" ]
	[ "$(meta "$D/g.fz" fsa.grammar)" = "$(wc -c <"$G")" ]
	[ -z "$(meta "$D/g.fz" fsa.states)" ]
	tar xOf "$D/g.fz" fsa/grammar | cmp - "$G"
	# the model needs neither the file nor an option to stay constrained
	[ "$(meta "$D/g.llrnn" background_fsa)" = "grammar:$G" ]
	tar xOf "$D/g.llrnn" fsa/grammar | cmp - "$G"
}

@test "featurize --skip-rejected: the sentences left out are those awk finds outside the language" {
	in_language <"$D/brown.tok" >ok.txt
	out=$(grep -c '^0$' ok.txt)
	kept=$(grep -c '^1$' ok.txt)
	[ "$out" -gt 5 ] && [ "$kept" -gt 150 ]
	# the first 200 sentences have no "!": the grammar's end "!" is named
	[ "$(cat "$D/fz.err")" = "$(unspelled "$G" '!')
featurize: $out sentences the grammar rejects skipped" ]
	[ "$(meta "$D/g.fz" sentences)" = "$kept" ]
	# with --vocab the corpus is checked as it is mapped: the same count
	vocab "$D/brown.tok" >v.tsv
	run -0 --separate-stderr featurize -q --vocab v.tsv --skip-rejected --background "grammar:$G" -o s.fz "$D/brown.tok"
	[ "$stderr" = "$(unspelled "$G" '!')
featurize: $out sentences the grammar rejects skipped" ]
}

@test "featurize: a corpus sentence outside the grammar is an error naming file:line and the first rejected token" {
	printf '%s\n' 'the jury said ( so ) .' 'it did ( not .' 'a ) b .' >t.tok
	run -1 --separate-stderr featurize --background "grammar:$G" -o out.fz t.tok
	[ -z "$output" ]
	[ ! -e out.fz ]
	[ "$stderr" = "$(unspelled "$G" '?' '!')
featurize: t.tok:2: the grammar rejects the sentence: it may not end after 'it did ( not .' (--skip-rejected skips it)" ]
	printf '%s\n' 'the jury said ( so ) .' 'a ) b .' >u.tok
	run -1 --separate-stderr featurize --background "grammar:$G" -o out.fz u.tok
	[ -z "$output" ]
	[ "$stderr" = "$(unspelled "$G" '?' '!')
featurize: u.tok:2: the grammar rejects token 2 ')' after 'a' (--skip-rejected skips it)" ]
	# the first line of the Brown slice that awk rejects is the one named
	first=$(in_language <"$D/brown.tok" | grep -n '^0$' | head -n 1 | cut -d: -f1)
	first=$(awk -v k="$first" 'NF && ++n == k { print NR; exit }' "$D/brown.tok")
	run -1 --separate-stderr featurize --background "grammar:$G" -o out.fz "$D/brown.tok"
	[ -z "$output" ]
	[[ "$stderr" == "$(unspelled "$G" '!')
featurize: $D/brown.tok:$first: the grammar rejects "* ]]
	printf 'x ( .\n' >none.tok
	run -1 --separate-stderr featurize --skip-rejected --background "grammar:$G" -o out.fz none.tok
	[ -z "$output" ]
	[[ "$stderr" == *"the grammar rejects every sentence of the corpus"* ]]
	# no end token: no sentence of the vocabulary at all
	printf 'x y\n' >none.tok
	run -1 --separate-stderr featurize --skip-rejected --background "grammar:$G" -o out.fz none.tok
	[ -z "$output" ]
	[ "$stderr" = "featurize: $G: the grammar accepts no sentence of the vocabulary's tokens (no token can be these words of its literals: (, ), ., ?, !)" ]
}

@test "score: finite log-probabilities that normalise (--check-norm); a sentence outside the grammar has probability 0" {
	in_language <"$D/brown.tok" | paste - <(grep -v '^$' "$D/brown.tok") | awk -F'\t' '$1 == 1 { print $2 }' | head -n 20 >in.tok
	echo 'the jury ( said .' >>in.tok
	run -0 --separate-stderr score -m "$D/g.llrnn" --check-norm in.tok
	[ "${#lines[@]}" -eq 21 ]
	for i in $(seq 0 19); do
		v=${lines[$i]%%$'\t'*}
		[[ "$v" =~ ^-[0-9]+\.[0-9]+$ ]]
	done
	[ "${lines[20]%%$'\t'*}" = -inf ]
	[[ "$stderr" == *"score: 21 sentences, "*", 1 zeroprobs"* ]]
	[[ "$stderr" == *"score: norm check: max |sum p - 1| = "* ]]
	[[ "$stderr" != *"norm check failed"* ]]
}

@test "train under a grammar: the probabilities of the eight sentences of a finite language sum to 1 (enumerated)" {
	printf '%s\n' 'root ::= ("the" | "a") " " ("jury" | "man") " " ("said" | "left") " ."' >f.gbnf
	awk 'BEGIN { for (i = 0; i < 160; i++) print (i % 2 ? "the" : "a"), (i % 3 ? "jury" : "man"), (i % 5 ? "said" : "left"), "." }' >f.tok
	featurize -q --top 10 --background grammar:f.gbnf -o f.fz f.tok
	train -q $TINY --epochs 3 -s 1 -o f.llrnn f.fz
	for a in the a; do for b in jury man; do for c in said left; do echo "$a $b $c ."; done; done; done >all.tok
	score -m f.llrnn all.tok | awk '{ s += exp($1) } END { printf "%.6f\n", s; exit !(s > 0.999 && s < 1.001) }'
	# the same data without the grammar leave mass outside the language
	featurize -q --top 10 -o u.fz f.tok
	train -q $TINY --epochs 3 -s 1 -o u.llrnn u.fz
	score -m u.llrnn all.tok | awk '{ s += exp($1) } END { exit !(s < 0.99) }'
}

@test "gen: the model trained under the grammar writes only sentences of the language, ending within --max-len" {
	gen -m "$D/g.llrnn" -s 3 -n 100 --max-len 30 >out
	[ "$(wc -l <out)" -eq 100 ]
	in_language <out >ok
	[ "$(wc -l <ok)" -eq 100 ]
	run -1 grep -vx 1 ok
	awk 'NF > 30 { exit 1 }' out
	[ "$(sort -u out | wc -l)" -gt 90 ]
	gen -m "$D/g.llrnn" --beam 3 --nbest 3 --max-len 12 >beam
	[ "$(wc -l <beam)" -eq 3 ]
	in_language <beam >okb
	run -1 grep -vx 1 okb
	# a prefix outside the language is refused, as with --grammar
	run -1 --separate-stderr gen -m "$D/g.llrnn" -n 1 --prefix ')'
	[ -z "$output" ]
	[[ "$stderr" == *"the prefix: the model's grammar rejects word 1 ')'"* ]]
}

@test "featurize --background ngram:LM --background grammar: the product, normalised by the output (score --check-norm)" {
	train -q --ngram 2 --discount-fallback -o lm.arpa "$D/brown.tok" 2>/dev/null
	featurize -q --top 20 --skip-rejected --background ngram:lm.arpa --background "grammar:$G" -o p.fz "$D/brown.tok" 2>/dev/null
	[ "$(meta p.fz background)" = ngram ]
	[ "$(meta p.fz background_fsa)" = "grammar:$G" ]
	train -q $TINY --epochs 1 -s 1 -o p.llrnn p.fz
	head -n 5 "$D/brown.tok" | in_language | grep -c 1 >/dev/null
	in_language <"$D/brown.tok" | paste - <(grep -v '^$' "$D/brown.tok") | awk -F'\t' '$1 == 1 { print $2 }' | head -n 10 >in.tok
	run -0 --separate-stderr score -m p.llrnn --check-norm in.tok
	[ "${#lines[@]}" -eq 10 ]
	[[ "$output" != *-inf* ]]
	[[ "$stderr" == *"score: norm check: max |sum p - 1| = "* ]]
	[[ "$stderr" != *"norm check failed"* ]]
}

@test "train: a validation sentence outside the grammar is an error naming file:line" {
	printf '%s\n' 'the jury said .' 'the ( jury said .' >v.tok
	run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 --valid v.tok -o m.llrnn "$D/g.fz"
	[ -z "$output" ]
	[ ! -e m.llrnn ]
	[[ "$stderr" == "train: v.tok:2: the grammar rejects the sentence: it may not end after 'the ( jury said .' (a validation sentence must be in the language)"* ]]
}

@test "featurize: bad grammars (syntax, undefined rule, no token can start it, too ambiguous) fail with a clear message and no output" {
	printf 'root ::= "a"\nitem ::= ( "b"\n' >syn.gbnf
	run -1 --separate-stderr featurize --background grammar:syn.gbnf -o o.fz "$D/brown.tok"
	[ -z "$output" ]
	[ ! -e o.fz ]
	[[ "$stderr" == "featurize: syn.gbnf:2: "* ]]
	printf 'root ::= item " ."\n' >undef.gbnf
	run -1 --separate-stderr featurize --background grammar:undef.gbnf -o o.fz "$D/brown.tok"
	[ -z "$output" ]
	[[ "$stderr" == "featurize: undef.gbnf:1: "*"item"* ]]
	printf 'root ::= "zzqx" " ."\n' >none.gbnf
	run -1 --separate-stderr featurize --background grammar:none.gbnf -o o.fz "$D/brown.tok"
	[ -z "$output" ]
	[ "$stderr" = "featurize: none.gbnf: the grammar accepts no sentence of the vocabulary's tokens (no token can be these words of its literals: zzqx)" ]
	# 2^k parses alive after k a's: refused at the line that gets there
	printf 'root ::= "a " root " b" | "a " root " c" | "x"\n' >amb.gbnf
	{ echo 'a x b'; printf 'a %.0s' $(seq 1 20); echo x; } >amb.tok
	run -1 --separate-stderr featurize --background grammar:amb.gbnf -o o.fz amb.tok
	[ -z "$output" ]
	[ ! -e o.fz ]
	[[ "$stderr" == "$(unspelled amb.gbnf c)
featurize: amb.tok:2: grammar background: the grammar is too ambiguous: more than 16384 parses alive at once"* ]]
	# a model of that grammar scores what it can follow and stops at what it cannot
	for i in $(seq 1 30); do echo 'a x b'; echo 'a a x c b'; done >amb-ok.tok
	featurize -q --top 5 --background grammar:amb.gbnf -o amb.fz amb-ok.tok
	train -q $TINY --epochs 1 -s 1 -o amb.llrnn amb.fz
	run -1 --separate-stderr score -m amb.llrnn amb.tok
	[ "${#lines[@]}" -le 1 ]
	[[ "$stderr" == *"score: grammar background: the grammar is too ambiguous: more than 16384 parses alive at once"* ]]
	run -1 --separate-stderr featurize --background grammar:missing.gbnf -o o.fz "$D/brown.tok"
	[ -z "$output" ]
	[[ "$stderr" == "featurize: missing.gbnf: "* ]]
	run -2 featurize --background grammar: "$D/brown.tok"
	run -2 featurize --background "grammar:$G" --background regex:a "$D/brown.tok"
	[[ "$output" == *"one automaton or grammar only"* ]]
}

@test "featurize(1) EXAMPLES: a grammar background runs, and score gives the rejected sentences -inf" {
	cat >parens.gbnf <<'EOF'
root  ::= item (" " item)* " " end
end   ::= "." | "?" | "!"
item  ::= plain | "(" (" " item)* " )"
plain ::= [^ ()]+
EOF
	cp "$D/brown.tok" train.tok
	featurize --top 50 --skip-rejected \
		--background grammar:parens.gbnf -o p.feat train.tok 2>/dev/null
	train --hidden 8 --embed 8 --epochs 1 -o p.llrnn p.feat 2>/dev/null
	run -0 --separate-stderr score -m p.llrnn --check-norm train.tok
	rejected=$(in_language <train.tok | grep -c '^0$')
	[[ "$stderr" == *", $rejected zeroprobs"* ]]
	[[ "$stderr" == *"score: norm check: max |sum p - 1| = "* ]]
	[[ "$stderr" != *"failed"* ]]
}

@test "train: shards must carry the same grammar (its text compared)" {
	vocab "$D/brown.tok" >v.tsv
	cp "$G" same.gbnf
	{ cat "$G"; echo '# another comment'; } >other.gbnf
	featurize -q --vocab v.tsv --top 20 --skip-rejected --background "grammar:$G" -o s1.fz "$D/brown.tok" 2>/dev/null
	featurize -q --vocab v.tsv --top 20 --skip-rejected --background grammar:same.gbnf -o s2.fz "$D/brown.tok" 2>/dev/null
	featurize -q --vocab v.tsv --top 20 --skip-rejected --background grammar:other.gbnf -o s3.fz "$D/brown.tok" 2>/dev/null
	featurize -q --vocab v.tsv --top 20 --skip-rejected --background 'regex:.+' -o s4.fz "$D/brown.tok" 2>/dev/null
	train -q $TINY --epochs 1 -s 1 -o ok.llrnn s1.fz s2.fz
	run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 -o m.llrnn s1.fz s3.fz
	[ -z "$output" ]
	[ ! -e m.llrnn ]
	[[ "$stderr" == "train: s3.fz: not a shard of s1.fz's corpus: automaton backgrounds differ"* ]]
	run -1 --separate-stderr train -q $TINY --epochs 1 -s 1 -o m.llrnn s1.fz s4.fz
	[[ "$stderr" == *"automaton backgrounds differ"* ]]
}
