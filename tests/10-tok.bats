#!/usr/bin/env bats
# tok: tokenization, sentence splitting, CoNLL-U and word/TAG input,
# character mode, golden outputs, error paths, real UD French and Brown.

load test_helper

T="$FIXTURES/tok"

@test "tok: the French acceptance sentence" {
	run tok --lang fr -l <<<"L'homme qu'il a vu coûte 3,5 euros."
	assert_success
	assert_output "l' homme qu' il a vu coûte 3,5 euros ."
}

@test "tok: French elisions keep the apostrophe, ’ included; aujourd'hui stays whole" {
	run tok --lang fr <<<"jusqu'à aujourd'hui, l’homme s’en va"
	assert_success
	assert_output "jusqu' à aujourd'hui , l’ homme s’ en va"
}

@test "tok: English clitics the Penn Treebank way" {
	run tok --lang en <<<"Don't! John's they're I'm we've he'll I'd can't o'clock"
	assert_success
	assert_output "Do n't ! John 's they 're I 'm we 've he 'll I 'd ca n't o'clock"
}

@test "tok: numbers, URLs and e-mail addresses stay whole; no HTML escaping" {
	run tok <<<'Pay 1.000 or 3,5 or -12.5 (1/2) at 12:30 & see https://ex.com/a?b=1&c=2. Mail a.b@ex.org. 1<2 & "x"'
	assert_success
	assert_output 'Pay 1.000 or 3,5 or -12.5 ( 1/2 ) at 12:30 & see https://ex.com/a?b=1&c=2 . Mail a.b@ex.org . 1 < 2 & " x "'
}

@test "tok: NFC by default, NFKC on request" {
	run tok <<<$'cafe\xcc\x81 \xef\xac\x81n 2\xc2\xbd'
	assert_success
	assert_output $'caf\xc3\xa9 \xef\xac\x81n 2\xc2\xbd'
	run tok --nfkc <<<$'cafe\xcc\x81 \xef\xac\x81n 2\xc2\xbd'
	assert_success
	assert_output $'caf\xc3\xa9 fin 21\xe2\x81\x842'
}

@test "tok: -l lowercases beyond ASCII" {
	run tok -l <<<"ÉCOLE ΣΟΦΙΑ Ça"
	assert_success
	assert_output "école σοφια ça"
}

@test "tok: --chars makes each character a token, U+2581 for spaces" {
	run tok --chars -l <<<"Où  es-tu ?"
	assert_success
	assert_output "o ù ▁ e s - t u ▁ ?"
}

@test "tok: golden outputs (fr, en)" {
	tok --lang fr "$T/fr.txt" >"$BATS_TEST_TMPDIR/fr.out"
	cmp "$T/fr.golden" "$BATS_TEST_TMPDIR/fr.out"
	tok --lang en "$T/en.txt" >"$BATS_TEST_TMPDIR/en.out"
	cmp "$T/en.golden" "$BATS_TEST_TMPDIR/en.out"
}

@test "tok: --sentences splits with abbreviation lists, keeps paragraphs (golden)" {
	tok --lang fr -l --sentences "$T/sentences-fr.txt" >"$BATS_TEST_TMPDIR/s.out"
	cmp "$T/sentences-fr.golden" "$BATS_TEST_TMPDIR/s.out"
	tok --lang en -l --sentences "$T/sentences-en.txt" >"$BATS_TEST_TMPDIR/s.out"
	cmp "$T/sentences-en.golden" "$BATS_TEST_TMPDIR/s.out"
}

@test "tok: quotes and brackets after the final punctuation stay with the sentence" {
	run tok --sentences --lang en <<<'He said "Stop!" Then (he left.) And?'
	assert_success
	assert_output $'He said " Stop ! "\nThen ( he left . )\nAnd ?'
}

@test "tok: documents are separated by one empty line; blank runs collapse" {
	printf 'a b\n\n\n\nc\n\n' >"$BATS_TEST_TMPDIR/d.txt"
	run tok "$BATS_TEST_TMPDIR/d.txt" "$BATS_TEST_TMPDIR/d.txt"
	assert_success
	assert_output $'a b\n\nc\n\na b\n\nc'
}

@test "tok: compressed input and -o FILE" {
	gzip -c "$T/fr.txt" >"$BATS_TEST_TMPDIR/fr.txt.gz"
	run tok --lang fr -o "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/fr.txt.gz"
	assert_success
	assert_output ""
	cmp "$T/fr.golden" "$BATS_TEST_TMPDIR/out"
}

@test "tok: archive members are documents" {
	tar -C "$T" -czf "$BATS_TEST_TMPDIR/docs.tgz" fr.txt en.txt
	run tok "$BATS_TEST_TMPDIR/docs.tgz"
	assert_success
	{ tok "$T/fr.txt"; echo; tok "$T/en.txt"; } >"$BATS_TEST_TMPDIR/want"
	assert_output "$(cat "$BATS_TEST_TMPDIR/want")"
}

@test "tok --from conllu: syntactic words, spaces in a form become U+00A0 (golden)" {
	tok --from conllu "$T/mini.conllu" >"$BATS_TEST_TMPDIR/c.out"
	cmp "$T/mini.golden" "$BATS_TEST_TMPDIR/c.out"
	grep -q $'17\xc2\xa0451' "$BATS_TEST_TMPDIR/c.out"
}

@test "tok --from conllu --surface: multiword tokens instead of their parts (golden)" {
	tok --from conllu --surface -l "$T/mini.conllu" >"$BATS_TEST_TMPDIR/c.out"
	cmp "$T/mini-surface.golden" "$BATS_TEST_TMPDIR/c.out"
}

@test "tok --from tagged: words of word/TAG lines, split at the last /, bad members skipped" {
	mkdir -p "$BATS_TEST_TMPDIR/package"
	cp "$T/brown-a.txt" "$BATS_TEST_TMPDIR/package/ca01"
	cp "$T/brown-b.txt" "$BATS_TEST_TMPDIR/package/ca02"
	cp "$T/package.json" "$T/README" "$BATS_TEST_TMPDIR/package/"
	tar -C "$BATS_TEST_TMPDIR" -czf "$BATS_TEST_TMPDIR/b.tgz" package/package.json package/ca01 package/README package/ca02
	tok --from tagged -l "$BATS_TEST_TMPDIR/b.tgz" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err"
	run cat "$BATS_TEST_TMPDIR/out"
	assert_output $'the jury said `` 1/2\nof it .\natlanta\'s mayor .\n\na second document .'
	run cat "$BATS_TEST_TMPDIR/err"
	assert_line --partial "tok: $BATS_TEST_TMPDIR/b.tgz(package/package.json): not in word/TAG format, skipped"
	assert_line --partial "(package/README):1: not in word/TAG format, skipped"
}

@test "tok: --replace-invalid puts U+FFFD for invalid UTF-8" {
	run tok --replace-invalid <<<$'ab\xffcd ok'
	assert_success
	assert_output $'ab\xef\xbf\xbdcd ok'
}

@test "tok: a pipe is answered line by line (coprocess), and compressed or archived stdin still reads" {
	coproc TK { tok --lang fr -l; }
	pid=$TK_PID
	echo "L'homme arrive." >&"${TK[1]}"
	read -t 30 -r first <&"${TK[0]}"
	echo "Qu'il vienne." >&"${TK[1]}"
	read -t 30 -r second <&"${TK[0]}"
	exec {TK[1]}>&-
	wait "$pid"
	[ "$first" = "l' homme arrive ." ]
	[ "$second" = "qu' il vienne ." ]
	run bash -c 'printf "Un deux.\n" | gzip | tok'
	assert_success
	assert_output "Un deux ."
	cd "$BATS_TEST_TMPDIR"
	printf 'Doc one.\n' >a.txt
	printf 'Doc two.\n' >b.txt
	run bash -c 'tar c a.txt b.txt | tok'
	assert_success
	assert_output "$(printf 'Doc one .\n\nDoc two .')"
}

@test "tok: -h prints usage on stdout" {
	run tok -h
	assert_success
	assert_output --partial "usage: tok"
}

@test "tok: error: invalid UTF-8 names file:line" {
	printf '\n\nok \xc3\x28\n' >"$BATS_TEST_TMPDIR/bad.txt"
	run_err 1 "^tok: $BATS_TEST_TMPDIR/bad.txt:3: invalid UTF-8" tok "$BATS_TEST_TMPDIR/bad.txt"
	run_err 1 "^tok: <stdin>:1: invalid UTF-8" tok <<<$'\xff'
}

@test "tok: error: invalid UTF-8 after good lines keeps what was written, no partial -o file" {
	printf 'good line\nbad \xff\n' >"$BATS_TEST_TMPDIR/bad.txt"
	run tok "$BATS_TEST_TMPDIR/bad.txt"
	assert_failure 1
	assert_line --index 0 "good line"
	assert_line --index 1 --partial "bad.txt:2: invalid UTF-8"
	run_err 1 "bad.txt:2: invalid UTF-8" tok -o "$BATS_TEST_TMPDIR/o" "$BATS_TEST_TMPDIR/bad.txt"
	[ ! -e "$BATS_TEST_TMPDIR/o" ]
	[ -z "$(ls "$BATS_TEST_TMPDIR" | grep '^o\.tmp')" ]
}

@test "tok: error: missing file" {
	run_err 1 "^tok: $BATS_TEST_TMPDIR/nope: No such file" tok "$BATS_TEST_TMPDIR/nope"
}

@test "tok: error: bad options exit 2 with usage" {
	run_err 2 "^tok: --bogus: unknown option" tok --bogus
	run_err 2 "^usage: tok" tok -x
	run_err 2 "^tok: --from: unknown format 'xml'" tok --from xml
	run_err 2 "^tok: --lang: unknown language 'de'" tok --lang de
	run_err 2 "missing argument" tok --from
	run_err 2 "^tok: --surface needs --from conllu" tok --surface
	run_err 2 "^tok: --sentences needs --from text" tok --sentences --from conllu
}

@test "tok: error: malformed CoNLL-U names file:line" {
	printf '# c\n1\tx\t_\n' >"$BATS_TEST_TMPDIR/bad.conllu"
	run_err 1 "^tok: $BATS_TEST_TMPDIR/bad.conllu:2: expected 10 tab-separated columns, found 3" tok --from conllu "$BATS_TEST_TMPDIR/bad.conllu"
	printf 'x\ta\t_\t_\t_\t_\t_\t_\t_\t_\n' >"$BATS_TEST_TMPDIR/bad.conllu"
	run_err 1 "bad.conllu:1: bad ID 'x'" tok --from conllu "$BATS_TEST_TMPDIR/bad.conllu"
}

@test "tok: real data: --from conllu -l reproduces ud_prep.py on every UD French split" {
	# fixtures/ud-french/ud_prep/ is what the reference's own CoNLL-U
	# reader wrote for the slice (see its README).
	check() { # split files...
		local split=$1 f args=()
		shift
		for f in "$@"; do args+=("$UD/$f.conllu.gz"); done
		tok --from conllu -l "${args[@]}" | grep -v '^$' | sed 's/\xc2\xa0/_/g' >"$BATS_TEST_TMPDIR/$split.tok"
		gzip -dc "$UD/ud_prep/$split.txt.gz" | cmp - "$BATS_TEST_TMPDIR/$split.tok"
	}
	check train fr_sequoia-ud-train fr_partut-ud-train fr_gsd-ud-dev
	check valid fr_sequoia-ud-dev fr_partut-ud-dev
	check test fr_sequoia-ud-test fr_partut-ud-test fr_gsd-ud-test
	[ "$(wc -l <"$BATS_TEST_TMPDIR/train.tok")" -eq 500 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/test.tok")" -eq 250 ]
}

@test "tok: real data: --from tagged reads the Brown archive slice (20 documents, 46,246 words)" {
	tok --from tagged "$BROWN" >"$BATS_TEST_TMPDIR/brown" 2>"$BATS_TEST_TMPDIR/err"
	run wc -w <"$BATS_TEST_TMPDIR/brown"
	assert_output 46246
	head -n 1 "$BATS_TEST_TMPDIR/brown" | grep -q '^The Fulton County Grand Jury said Friday'
	grep -q 'package.json): not in word/TAG format, skipped' "$BATS_TEST_TMPDIR/err"
	grep -q 'categories.pickle):1: not in word/TAG format, skipped' "$BATS_TEST_TMPDIR/err"
	# 20 documents, separated by one empty line each
	[ "$(grep -c '^$' "$BATS_TEST_TMPDIR/brown")" -eq 19 ]
	[ "$(grep -c . "$BATS_TEST_TMPDIR/brown")" -eq 2280 ]
}

@test "tok --tags: word/UPOS from CoNLL-U (-l lowers the word only), word/TAG from Brown" {
	run tok --from conllu --tags -l "$T/mini.conllu"
	assert_success
	assert_line --index 0 $'de/ADP le/DET chocolat/NOUN co\xc3\xbbte/VERB 17\xc2\xa0451/NUM euros/NOUN ./PUNCT'
	# one token a word, as without --tags, each with its tag
	[ "$(tok --from conllu -l "$T/mini.conllu" | wc -w)" -eq "$(tok --from conllu --tags "$T/mini.conllu" | wc -w)" ]
	# the UPOS column, in order, of every syntactic word of the UD slice
	zcat "$UD/fr_sequoia-ud-test.conllu.gz" | awk -F'\t' '$1 ~ /^[0-9]+$/ {print $4}' >"$BATS_TEST_TMPDIR/upos"
	tok --from conllu --tags "$UD/fr_sequoia-ud-test.conllu.gz" | tr ' ' '\n' | grep . | sed 's|.*/||' >"$BATS_TEST_TMPDIR/got"
	cmp "$BATS_TEST_TMPDIR/upos" "$BATS_TEST_TMPDIR/got"
	tok --from tagged --tags -l "$BROWN" >"$BATS_TEST_TMPDIR/brown" 2>/dev/null
	head -n 1 "$BATS_TEST_TMPDIR/brown" | grep -q '^the/at fulton/np-tl county/nn-tl grand/jj-tl jury/nn-tl said/vbd friday/nr '
	# split at the last /: Brown's own tokens, tags untouched by -l
	[ "$(grep -c . "$BATS_TEST_TMPDIR/brown")" -eq 2280 ]
	[ "$(tr ' ' '\n' <"$BATS_TEST_TMPDIR/brown" | grep -c .)" -eq 46246 ]
	printf 'A/at 1/2/cd B/NP\n' | tok --from tagged --tags -l | grep -qx 'a/at 1/2/cd b/NP'
}

@test "tok --tags: errors (no tag in a tagged line, with text, --surface or --chars)" {
	# (a first line not in word/TAG form skips the member, as without --tags)
	printf 'a/x b/y\nc/z d\n' >"$BATS_TEST_TMPDIR/t.txt"
	run_err 1 "^tok: $BATS_TEST_TMPDIR/t.txt:2: token 'd' has no /TAG" tok --from tagged --tags -o "$BATS_TEST_TMPDIR/o" "$BATS_TEST_TMPDIR/t.txt"
	assert_file_not_exist "$BATS_TEST_TMPDIR/o"
	printf 'a/x b/y\na/x b/\n' >"$BATS_TEST_TMPDIR/t.txt"
	run_err 1 "t.txt:2: token 'b/' has no /TAG" tok --from tagged --tags -o "$BATS_TEST_TMPDIR/o" "$BATS_TEST_TMPDIR/t.txt"
	run_err 2 "^tok: --tags needs --from conllu or --from tagged" tok --tags
	run_err 2 "^tok: --tags: not with --surface" tok --tags --from conllu --surface
	run_err 2 "^tok: --tags: not with --chars" tok --tags --from tagged --chars
}

@test "tok: man page EXAMPLES run as written" {
	cd "$T"
	run tok --lang fr -l fr.txt
	assert_success
	assert_line --index 0 "l' homme qu' il a vu coûte 3,5 euros ."
	run sh -c 'echo "L'"'"'homme qu'"'"'il a vu coûte 3,5 euros." | tok --lang fr -l'
	assert_success
	assert_output "l' homme qu' il a vu coûte 3,5 euros ."
	run tok --lang en --sentences sentences-en.txt
	assert_success
	assert_line --index 0 "Mr. Smith went to Washington ."
	run tok --from conllu -l mini.conllu
	assert_success
	assert_line --index 0 $'de le chocolat co\xc3\xbbte 17\xc2\xa0451 euros .'
	run sh -c 'tok --from conllu --tags mini.conllu | head -n 1'
	assert_success
	assert_output $'de/ADP le/DET Chocolat/NOUN co\xc3\xbbte/VERB 17\xc2\xa0451/NUM euros/NOUN ./PUNCT'
	run tok --chars -l <<<"Oui."
	assert_success
	assert_output "o u i ."
}
