#!/usr/bin/env bats
# How a corpus was tokenised, recorded by featurize (tok.* in the meta,
# from tok's options or seen in the corpus), carried by train into the
# model, and checked by score and gen against their input: a warning
# with counts, --strict, score --raw, old models without a record.
# Tiny models on 200 sentences of the UD French slice.

bats_require_minimum_version 1.5.0
load test_helper

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

@test "score: cased text on a lowercased model: one warning with counts at the end, the scores still written" {
	tok --from conllu "$UD/fr_sequoia-ud-test.conllu.gz" | head -40 >cased.tok
	tok --from conllu -l "$UD/fr_sequoia-ud-test.conllu.gz" | head -40 >lower.tok
	caps=$(tr ' ' '\n' <cased.tok | grep -c '[[:upper:]]')
	total=$(wc -w <cased.tok)
	run --separate-stderr score -m "$M/lower.model" cased.tok
	assert_success
	[ "${#lines[@]}" -eq 40 ]
	[ "$(printf '%s\n' "${stderr_lines[@]}" | grep -c 'the model was')" -eq 1 ]
	[ "${stderr_lines[-1]}" = "score: $caps of $total tokens have capitals (first: 'UE'); the model was trained on lowercased text (tok -l)" ]
	# also under -q
	run --separate-stderr score -q -m "$M/lower.model" cased.tok
	assert_success
	[ "$stderr" = "score: $caps of $total tokens have capitals (first: 'UE'); the model was trained on lowercased text (tok -l)" ]
	# the text the model was trained on: no warning
	run --separate-stderr score -q -m "$M/lower.model" lower.tok
	assert_success
	[ -z "$stderr" ]
}

@test "score: a cased model given only lowercased text, many words of it, warns" {
	tok --from conllu -l "$UD/fr_sequoia-ud-test.conllu.gz" | head -40 >lower.tok
	run --separate-stderr score -q -m "$M/cased.model" lower.tok
	assert_success
	[ "$stderr" = "score: none of $(wc -w <lower.tok) tokens has a capital; the model was trained on cased text (tok without -l)" ]
	# a few words prove nothing
	run --separate-stderr score -q -m "$M/cased.model" <<<"le chat dort ."
	assert_success
	[ -z "$stderr" ]
	tok --from conllu "$UD/fr_sequoia-ud-test.conllu.gz" | head -40 >cased.tok
	run --separate-stderr score -q -m "$M/cased.model" cased.tok
	assert_success
	[ -z "$stderr" ]
}

@test "score: NFC, elisions and punctuation against the record" {
	printf 'le cafe\xcc\x81\n' >nfd.tok
	run --separate-stderr score -q -m "$M/lower.model" nfd.tok
	assert_success
	# the example as it was written: decomposed
	[ "$stderr" = "score: 1 of 2 tokens are not NFC-normalised (first: '$(printf 'cafe\xcc\x81')'); the model was trained on NFC text (tok)" ]
	printf "l'homme qu'il a vu\nle chat\n" >att.tok
	run --separate-stderr score -q -m "$M/lower.model" att.tok
	assert_success
	[ "$stderr" = "score: 2 of 6 tokens have a French elision attached (first: 'l'homme'); the model was trained on text with them split off (tok --lang fr)" ]
	printf 'le chat, dort\n' >punct.tok
	run --separate-stderr score -q -m "$M/lower.model" punct.tok
	assert_success
	[ "$stderr" = "score: 1 of 3 tokens have punctuation attached (first: 'chat,'); the model was trained on text with punctuation split off (tok)" ]
	# two mismatches, one line each
	printf "Le chat, l'homme\n" >two.tok
	run --separate-stderr score -q -m "$M/lower.model" two.tok
	assert_success
	[ "${#stderr_lines[@]}" -eq 3 ]
}

@test "score --strict: a mismatch fails at its line, and -o leaves no file" {
	printf 'le chat\nLe chien\nla vache\n' >in.tok
	run --separate-stderr score --strict -m "$M/lower.model" in.tok
	[ "$status" -eq 1 ]
	# the lines before it are scored and written
	[ "${#lines[@]}" -eq 1 ]
	[ "${stderr_lines[-1]}" = "score: in.tok:2: 1 of 4 tokens have capitals (first: 'Le'); the model was trained on lowercased text (tok -l) (--strict)" ]
	run_err 1 "^score: <stdin>:1: 1 of 2 tokens have capitals .*\\(--strict\\)$" score --strict -m "$M/lower.model" <<<"Le chat"
	run_err 1 '^score: in.tok:2: .*\(--strict\)$' score --strict --batch 8 -m "$M/lower.model" -o out in.tok
	assert_file_not_exist out
	# what only the whole input shows fails at the end, before -o is in place
	tok --from conllu -l "$UD/fr_sequoia-ud-test.conllu.gz" | head -40 >lower.tok
	run_err 1 '^score: none of [0-9]+ tokens has a capital; .* \(--strict\)$' score -q --strict -m "$M/cased.model" -o out lower.tok
	assert_file_not_exist out
	# the text of the model: as without --strict
	run score -q --strict -m "$M/lower.model" -o out lower.tok
	assert_success
	cmp out <(score -q -m "$M/lower.model" lower.tok)
}

@test "score --raw: raw text tokenised with the model's record scores as tok with those options does" {
	grep -hv '^$' "$FIXTURES/tok/fr.txt" "$FIXTURES/tok/sentences-fr.txt" >raw.txt
	# the record of the lowercased UD model: tok -l --lang fr
	tok -l --lang fr raw.txt | score -m "$M/lower.model" >want 2>want.err
	run --separate-stderr score --raw -m "$M/lower.model" raw.txt
	assert_success
	[ "${#lines[@]}" -eq "$(wc -l <raw.txt)" ]
	printf '%s\n' "${lines[@]}" | cmp - want
	[ "$stderr" = "$(cat want.err)" ]
	# raw text scored as tokens: warned, and a different figure
	run --separate-stderr score -q -m "$M/lower.model" raw.txt
	assert_success
	[[ "$stderr" == *"have capitals"* ]]
	[[ "$stderr" == *"punctuation attached"* ]]
	run ! cmp -s <(score -q -m "$M/lower.model" raw.txt 2>/dev/null) want
	# --raw with the cased model: tok --lang fr, no -l
	tok --lang fr raw.txt | score -q -m "$M/cased.model" >want.cased
	score -q --raw -m "$M/cased.model" raw.txt | cmp - want.cased
	# a line of nothing but spaces: an empty sentence, one score line still
	printf 'Le chat.\n   \n' | score -q --raw -m "$M/lower.model" >out
	[ "$(wc -l <out)" -eq 2 ]
}

@test "score --raw and --strict: errors" {
	run_err 1 "^score: .*old-model.llrnn: the model records no tokenisation" score --raw -m "$FIXTURES/tensor/old-model.llrnn" <<<"Le chat."
	printf 'le\xff chat\n' >bad.txt
	run_err 1 '^score: bad.txt:1: ' score --raw -m "$M/lower.model" bad.txt
	run_err 2 '^score: --raw: not with --embed, --task or --tags' score --raw --embed -m "$M/lower.model" </dev/null
	run_err 2 '^score: --strict: not with --embed, --task or --tags' score --strict --task order -m "$M/lower.model" </dev/null
	# an n-gram model records no tokenisation
	train --ngram 2 -o ng.arpa "$M/lower.tok" 2>/dev/null
	run_err 1 '^score: ng.arpa: the model records no tokenisation' score --raw -m ng.arpa <<<"Le chat."
	run --separate-stderr score -q -m ng.arpa <<<"Le chat"
	assert_success
	[ -z "$stderr" ]
}

@test "score: a model without a record (an older file) loads and warns of nothing" {
	old="$FIXTURES/tensor/old-model.llrnn"
	[ "$(meta "$old" lowercase)" = 1 ]
	[ -z "$(meta "$old" tok.lowercase)" ]
	run --separate-stderr score -q --strict -m "$old" <<<"Le Chat , l'homme"
	assert_success
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	# a record with a value it never takes is a bad model file
	"${PY:-python3}" - "$M/lower.model" bad.model <<'PY'
import sys, tarfile, io
src, dst = sys.argv[1], sys.argv[2]
with tarfile.open(src) as t, tarfile.open(dst, "w", format=tarfile.USTAR_FORMAT) as o:
    for m in t.getmembers():
        data = t.extractfile(m).read()
        if m.name == "meta":
            # written as before checksums (no crc32c in the headers)
            data = data.replace(b"tok.lowercase=1\n", b"tok.lowercase=yes\n").replace(b"checksum=crc32c\n", b"")
        n = tarfile.TarInfo(m.name); n.size = len(data); n.mode = 0o644
        o.addfile(n, io.BytesIO(data))
PY
	run_err 1 '^score: .*bad.model: meta: tok.lowercase=yes: ' score -m bad.model <<<"le chat"
}

@test "gen: a prefix unlike the model's text warns; --strict fails" {
	run --separate-stderr gen -m "$M/lower.model" -n 2 -s 1 -p "Le chat"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = "gen: 1 of 2 tokens have capitals (first: 'Le'); the model was trained on lowercased text (tok -l)" ]
	run_err 1 "^gen: -p: 1 of 2 tokens have capitals .*\\(--strict\\)$" gen --strict -m "$M/lower.model" -n 2 -s 1 -p "Le chat"
	printf 'le chat\nla Vache\n' >prefixes.txt
	run --separate-stderr gen --strict -m "$M/lower.model" -n 1 -s 1 --prefix-file prefixes.txt
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "${stderr_lines[-1]}" = "gen: prefixes.txt:2: 1 of 4 tokens have capitals (first: 'Vache'); the model was trained on lowercased text (tok -l) (--strict)" ]
	run_err 1 '^gen: prefixes.txt:2: ' gen --strict -m "$M/lower.model" -n 1 -s 1 -o out --prefix-file prefixes.txt
	assert_file_not_exist out
	# no prefix, or the model's own kind of text: nothing to say
	run --separate-stderr gen --strict -m "$M/lower.model" -n 2 -s 1 -p "le chat"
	assert_success
	[ -z "$stderr" ]
	run --separate-stderr gen -m "$M/lower.model" -n 2 -s 1
	assert_success
	[ -z "$stderr" ]
}

@test "featurize(1), score(1), gen(1) EXAMPLES of the record run as written" {
	ln -s "$M/lower.model" model.llrnn
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -300 >train.tok
	run bash -c "featurize --top 2500 -l --lang fr train.tok >train.feat 2>/dev/null && tar xOf train.feat meta | grep '^tok\.'"
	assert_success
	assert_output "$(printf 'tok.lowercase=1\ntok.norm=nfc\ntok.clitics=fr\ntok.punct=split')"
	grep -hv '^$' "$FIXTURES/tok/fr.txt" >text.txt
	score --raw -m model.llrnn text.txt >raw.scores 2>/dev/null
	[ "$(wc -l <raw.scores)" -eq "$(wc -l <text.txt)" ]
	tok -l --lang fr text.txt | score --strict -m model.llrnn >strict.scores 2>/dev/null
	cmp raw.scores strict.scores
	run bash -c "echo \"L'homme\" | tok -l --lang fr | gen --strict -m model.llrnn --prefix-file - -n 2"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == "l' homme"* ]]
	# the same prefix left untokenised fails
	run_err 1 "^gen: <stdin>:1: .*have capitals" gen --strict -m model.llrnn --prefix-file - -n 2 <<<"L'homme"
}
