#!/usr/bin/env bats
# How a corpus was tokenised, recorded by featurize (tok.* in the meta,
# from tok's options or seen in the corpus), carried by train into the
# model.
# Tiny models on 200 sentences of the UD French slice.

bats_require_minimum_version 1.5.0
load test_helper

meta() {
	tar xOf "$1" meta | sed -n "s/^$2=//p"
}

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -200 >"$m/lower.tok"
	tok --from conllu "$UD/fr_sequoia-ud-dev.conllu.gz" | head -200 >"$m/cased.tok"
	featurize --top 50 --ortho "$m/lower.tok" >"$m/lower.llr" 2>/dev/null
	featurize --top 50 --ortho "$m/cased.tok" >"$m/cased.llr" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o "$m/lower.model" "$m/lower.llr"
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o "$m/cased.model" "$m/cased.llr"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "featurize: the tokenisation seen in the corpus, when tok's options are not given" {
	# UD French through tok -l: lowercased, NFC, elisions split (l' homme)
	[ "$(meta "$M/lower.llr" tok.lowercase)" = 1 ]
	[ "$(meta "$M/lower.llr" tok.norm)" = nfc ]
	[ "$(meta "$M/lower.llr" tok.clitics)" = fr ]
	[ "$(meta "$M/lower.llr" tok.punct)" = split ]
	[ "$(meta "$M/cased.llr" tok.lowercase)" = 0 ]
	# English, with and without tok --lang en
	tok <"$FIXTURES/tok/en.txt" >attached.tok
	tok --lang en <"$FIXTURES/tok/en.txt" >split.tok
	featurize --top 5 attached.tok >a.llr 2>/dev/null
	featurize --top 5 split.tok >s.llr 2>/dev/null
	[ "$(meta a.llr tok.clitics)" = none ]
	[ "$(meta s.llr tok.clitics)" = en ]
	[ "$(meta s.llr tok.lowercase)" = 0 ]
	# French with its elisions attached (tok without --lang)
	tok <"$FIXTURES/tok/fr.txt" >fr.tok
	featurize --top 5 fr.tok >f.llr 2>/dev/null
	[ "$(meta f.llr tok.clitics)" = none ]
	# text that is not NFC (e + U+0301), punctuation glued to words, no clitics
	printf 'cafe\xcc\x81 noir\nle chat, dort\n' >odd.tok
	featurize --top 5 odd.tok >o.llr 2>/dev/null
	[ "$(meta o.llr tok.norm)" = none ]
	[ "$(meta o.llr tok.punct)" = attached ]
	[ "$(meta o.llr tok.lowercase)" = 1 ]
	[ -z "$(meta o.llr tok.clitics)" ] # nothing seen: unknown
	# --vocab: the vocabulary file's types tell
	vocab attached.tok >v.tsv
	featurize --top 5 --vocab v.tsv attached.tok >va.llr 2>/dev/null
	[ "$(meta va.llr tok.clitics)" = none ]
	[ "$(meta va.llr tok.lowercase)" = 0 ]
}

@test "featurize: tok's options, when given, are recorded over what the corpus shows" {
	tok <"$FIXTURES/tok/en.txt" >en.tok
	featurize --top 5 -l --nfkc --lang fr en.tok >x.llr 2>/dev/null
	[ "$(meta x.llr tok.lowercase)" = 1 ]
	[ "$(meta x.llr tok.norm)" = nfkc ]
	[ "$(meta x.llr tok.clitics)" = fr ]
	featurize --top 5 --lang en en.tok >y.llr 2>/dev/null
	[ "$(meta y.llr tok.clitics)" = en ]
	[ "$(meta y.llr tok.lowercase)" = 0 ]
	run_err 2 "^featurize: --lang: unknown language 'de'" featurize --lang de en.tok
	# --nfkc normalises the lexicon's words as tok --nfkc does (U+FB01: fi)
	printf 'e\xef\xac\x81l\tPOS:NOUN\n' >lex.tsv
	printf 'efil\n' >w.tok
	featurize --top 0 --nfkc --lexicon lex.tsv --dump w.tok 2>/dev/null >dump
	grep -q '^efil	.*POS:NOUN' dump
}

@test "train: the model keeps the record" {
	for k in tok.lowercase tok.norm tok.clitics tok.punct; do
		[ "$(meta "$M/lower.model" $k)" = "$(meta "$M/lower.llr" $k)" ]
	done
	[ "$(meta "$M/cased.model" tok.lowercase)" = 0 ]
}
