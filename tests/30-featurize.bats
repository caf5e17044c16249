#!/usr/bin/env bats
# featurize: the lexicon text (--dump) against golden output and against
# the reference's ud_prep.py on the UD French slice, the tensor stream (tar listing,
# NumPy load, ids decode), features of unseen words (--ortho, --suffix,
# hunspell), the backgrounds, and every error path.

load test_helper

Z="$FIXTURES/featurize"
PY=/usr/bin/python3

ud_conllu() { # --conllu FILE for every UD French file
	local f
	for f in "$UD"/*.conllu.gz; do printf -- '--conllu\n%s\n' "$f"; done
}

# Feature sets per word, one "word feature" pair a line, sorted.
pairs() {
	awk -F'[\t ]' '{ for (i = 2; i <= NF; i++) if ($i != "") print $1, $i }' "$1" | LC_ALL=C sort
}

@test "featurize -h: usage on stdout, exit 0" {
	run featurize -h
	assert_success
	assert_line --index 0 --partial "usage: featurize"
}

@test "featurize: usage errors exit 2 with the usage" {
	run_err 2 "unknown option" featurize --bogus "$Z/tiny.tok"
	run_err 2 "--top: not an integer" featurize --top many "$Z/tiny.tok"
	run_err 2 "--char-ngrams" featurize --char-ngrams 3-2 "$Z/tiny.tok"
	run_err 2 "--suffix" featurize --suffix 0 "$Z/tiny.tok"
	run_err 2 "--vocab-from" featurize --vocab-from everything "$Z/tiny.tok"
	run_err 2 "needs a lexicon source" featurize --vocab-from corpus+lexicon "$Z/tiny.tok"
	run_err 2 "--input-features: unknown source" featurize --input-features top,colour "$Z/tiny.tok"
	run_err 2 "unigram:K" featurize --background unigram:lots "$Z/tiny.tok"
	run_err 2 "^featurize: --top: missing argument" featurize --top
	run_err 2 "usage: featurize" featurize --min-feature-count 0 "$Z/tiny.tok"
}

@test "featurize --dump: golden lexicon (TOP, CoNLL-U unions with -l, TSV lexicon, ortho, suffixes)" {
	featurize --top 3 --conllu "$Z/tiny.conllu" --lexicon "$Z/tiny.lex" -l --ortho --suffix 2 --dump \
		"$Z/tiny.tok" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err"
	cmp "$Z/tiny.golden" "$BATS_TEST_TMPDIR/out"
	grep -Eq '^featurize: 16 types, 52 features \(top 5, conllu 17, lexicon 1, ortho 9, suffix 20\), nnz\(phi\) 91' "$BATS_TEST_TMPDIR/err"
	grep -q 'coverage 100.00%' "$BATS_TEST_TMPDIR/err"
}

@test "featurize --dump output read back with --lexicon gives the same feature sets" {
	featurize --lexicon "$Z/tiny.golden" --dump "$Z/tiny.tok" >"$BATS_TEST_TMPDIR/back" 2>/dev/null
	pairs "$Z/tiny.golden" >"$BATS_TEST_TMPDIR/a"
	pairs "$BATS_TEST_TMPDIR/back" >"$BATS_TEST_TMPDIR/b"
	cmp "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
}

@test "featurize: multi-valued FEATS are split, multiword tokens skipped, spaces in forms become U+00A0" {
	run featurize --conllu "$Z/tiny.conllu" -l --dump "$Z/tiny.tok"
	assert_success
	assert_line $'qui\tPOS:PRON PronType:Int PronType:Rel'
	assert_line $'new\xc2\xa0york\tPOS:PROPN'
	assert_line $'du\t'
}

@test "featurize: UD French --conllu --dump has the tag sets of ud_prep.py's lexicon.tsv (70 tags)" {
	mapfile -t C < <(ud_conllu)
	gzip -dc "$UD/ud_prep/lexicon.tsv.gz" >"$BATS_TEST_TMPDIR/lexicon.tsv"
	tok --from conllu -l "$UD"/*.conllu.gz | featurize "${C[@]}" -l --dump >"$BATS_TEST_TMPDIR/dump"
	run "$PY" "$Z/cmp_lexicon.py" "$BATS_TEST_TMPDIR/dump" "$BATS_TEST_TMPDIR/lexicon.tsv"
	assert_success
	assert_output "types 5370 tags 70"
	# the comparison sees a changed tag set
	sed -i '0,/POS:NOUN/s/POS:NOUN/POS:VERB/' "$BATS_TEST_TMPDIR/dump"
	run "$PY" "$Z/cmp_lexicon.py" "$BATS_TEST_TMPDIR/dump" "$BATS_TEST_TMPDIR/lexicon.tsv"
	assert_failure
}

@test "featurize: UD French train stream with --top 1000: tar lists it, NumPy loads it, ids decode to the tokens" {
	[ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null || skip "no python3 with numpy"
	mapfile -t C < <(ud_conllu)
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" >"$BATS_TEST_TMPDIR/train.tok"
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" |
		featurize --top 1000 "${C[@]}" -l >"$BATS_TEST_TMPDIR/s.feat" 2>"$BATS_TEST_TMPDIR/err"
	tar tvf "$BATS_TEST_TMPDIR/s.feat" >"$BATS_TEST_TMPDIR/list"
	run awk '{ print $NF }' "$BATS_TEST_TMPDIR/list"
	# any/: the CoNLL-U entries, for the rows of words never seen (llr_lexicon_any_row)
	assert_output $'meta\nvocab\nfeatures\nphi/indptr.npy\nphi/indices.npy\nphi/data.npy\nlogb.npy\nany/words\nany/phi/indptr.npy\nany/phi/indices.npy\nany/phi/data.npy\nids/000000.npy'
	run "$PY" "$Z/check_stream.py" "$BATS_TEST_TMPDIR/s.feat" "$BATS_TEST_TMPDIR/train.tok"
	assert_success
	# 2102 types (</s>, <unk>), 1000 identities + TOP:</s> + TOP:@notTop
	# + the 67 tags of the training types, 6625 words + 300 </s>
	assert_output 'ok 2102 1069 6925 1'
	run tar xOf "$BATS_TEST_TMPDIR/s.feat" meta
	assert_line "kind=features"
	assert_line "psi=same"
	assert_line "background=unigram:0.5"
	assert_line "sources=top,conllu"
}

@test "featurize: the library's builder (llr_featurizer, tests/api/featurize-stream.c) writes the tool's stream byte for byte" {
	API="$TOP/build/tests/api/featurize-stream"
	[ -x "$API" ] || { echo "build/tests/api/featurize-stream not built (make builds it)" >&2; return 1; }
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -n 200 >"$BATS_TEST_TMPDIR/train.tok"
	featurize -q --top 100 --ortho -o "$BATS_TEST_TMPDIR/tool.fz" "$BATS_TEST_TMPDIR/train.tok" "$Z/tiny.tok"
	run "$API" "$BATS_TEST_TMPDIR/api.fz" 100 "$BATS_TEST_TMPDIR/train.tok" "$Z/tiny.tok"
	assert_success
	assert_output --regexp '^featurize-stream: [0-9]+ types, [0-9]+ features$'
	cmp "$BATS_TEST_TMPDIR/tool.fz" "$BATS_TEST_TMPDIR/api.fz"
	# errors come back as messages, not exits: the tool's file:line text
	run "$API" "$BATS_TEST_TMPDIR/bad.fz" 5 "$BATS_TEST_TMPDIR/nonexistent.tok"
	assert_failure 1
	assert_output --partial "featurize-stream: $BATS_TEST_TMPDIR/nonexistent.tok: "
	assert_file_not_exists "$BATS_TEST_TMPDIR/bad.fz"
}

@test "featurize --input-features: psi members when psi differs from phi" {
	[ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null || skip "no python3 with numpy"
	featurize --top 2 --conllu "$Z/tiny.conllu" --ortho --input-features top,ortho -o "$BATS_TEST_TMPDIR/s.feat" "$Z/tiny.tok" 2>/dev/null
	run tar tf "$BATS_TEST_TMPDIR/s.feat"
	assert_output $'meta\nvocab\nfeatures\nfeatures_in\nphi/indptr.npy\nphi/indices.npy\nphi/data.npy\npsi/indptr.npy\npsi/indices.npy\npsi/data.npy\nlogb.npy\nany/words\nany/phi/indptr.npy\nany/phi/indices.npy\nany/phi/data.npy\nids/000000.npy'
	run tar xOf "$BATS_TEST_TMPDIR/s.feat" features_in
	refute_output --partial "POS:"
	assert_output --partial "ORTH:len2"
	run tar xOf "$BATS_TEST_TMPDIR/s.feat" meta
	assert_line "psi=own"
}

@test "featurize --ortho --suffix: an --extra word never seen in training gets features" {
	printf 'le chat dort .\n' >"$BATS_TEST_TMPDIR/train"
	printf 'les chiens aboient en 1998 .\n' >"$BATS_TEST_TMPDIR/extra"
	run featurize --top 10 --ortho --suffix 3 --extra "$BATS_TEST_TMPDIR/extra" --dump "$BATS_TEST_TMPDIR/train"
	assert_success
	assert_line $'1998\tTOP:@notTop ORTH:len3-4 ORTH:number ORTH:year ORTH:has-digit SUF:8$ SUF:98$ SUF:998$'
	assert_line --regexp $'^chiens\tTOP:@notTop .*SUF:s\\$ SUF:ns\\$ SUF:ens\\$$'
	assert_line $'chat\tTOP:chat ORTH:len3-4 SUF:t$ SUF:at$ SUF:hat$'
}

@test "featurize --vocab-from corpus+lexicon: lexicon-only words join the vocabulary" {
	run featurize --lexicon "$Z/tiny.lex" --dump "$Z/tiny.tok"
	assert_success
	assert_line $'chat\tPOS:NOUN Gender:Masc animal=0.5'
	refute_line --partial chien
	run featurize --lexicon "$Z/tiny.lex" --vocab-from corpus+lexicon --dump "$Z/tiny.tok"
	assert_success
	assert_line $'chien\tPOS:NOUN animal'
}

@test "featurize --hunspell: hunspell-fr analyses for a French word absent from the treebanks" {
	[ -r /usr/share/hunspell/fr_FR.dic ] || skip "hunspell-fr absent: /usr/share/hunspell/fr_FR.dic (scripts/install-deps installs it)"
	# CI installs libhunspell-dev and hunspell-fr: with the dictionary
	# present, a build without hunspell is a failure, not a skip
	if featurize --hunspell /usr/share/hunspell/fr_FR "$Z/tiny.tok" --dump 2>&1 >/dev/null | grep -q 'without hunspell'; then
		echo "hunspell-fr is installed but featurize was built without hunspell (install libhunspell-dev, rebuild)" >&2
		return 1
	fi
	run sh -c "zcat '$UD'/*.conllu.gz | cut -f2 | grep -ixc anticonstitutionnellement"
	assert_output 0
	printf 'anticonstitutionnellement maisons\n' >"$BATS_TEST_TMPDIR/extra"
	run featurize --top 3 --hunspell /usr/share/hunspell/fr_FR.dic --extra "$BATS_TEST_TMPDIR/extra" --dump "$Z/tiny.tok"
	assert_success
	assert_line $'anticonstitutionnellement\tTOP:@notTop HS:@known HS:po:adv'
	assert_line $'maisons\tTOP:@notTop HS:@known HS:po:nom HS:is:fem HS:is:pl'
	refute_output --partial "HS:st:"
	run_err 1 "no readable hunspell dictionary" featurize --hunspell /nonexistent/xx_XX "$Z/tiny.tok"
}

@test "featurize --tagged: word/TAG unions, from a file and from the Brown archive" {
	run featurize --tagged "$Z/tiny.tagged" -l --dump "$Z/tagged.tok"
	assert_success
	assert_line $'jury\tPOS:nn POS:nn-tl'
	assert_line $'the\tPOS:at'
	printf 'the jury said .\n' >"$BATS_TEST_TMPDIR/t"
	run featurize --tagged "$BROWN" -l --dump "$BATS_TEST_TMPDIR/t"
	assert_success
	assert_line --regexp $'^jury\t(.* )?POS:nn( |$)'
	assert_line --regexp $'^said\t.*POS:vbd'
}

@test "featurize --vocab: a fixed vocabulary streams the tokens, unknown ones to <unk>" {
	[ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null || skip "no python3 with numpy"
	printf 'le\t5\nchat\t2\n</s>\t3\n' >"$BATS_TEST_TMPDIR/v.tsv"
	printf 'le chat dort\nle chien\n' >"$BATS_TEST_TMPDIR/t"
	featurize --vocab "$BATS_TEST_TMPDIR/v.tsv" --top 1 -o "$BATS_TEST_TMPDIR/s.feat" "$BATS_TEST_TMPDIR/t" 2>"$BATS_TEST_TMPDIR/err"
	grep -q '5 tokens in 2 sentences, 2 unknown' "$BATS_TEST_TMPDIR/err"
	printf 'le chat <unk>\nle <unk>\n' >"$BATS_TEST_TMPDIR/want"
	run "$PY" "$Z/check_stream.py" "$BATS_TEST_TMPDIR/s.feat" "$BATS_TEST_TMPDIR/want"
	assert_success
	run tar xOf "$BATS_TEST_TMPDIR/s.feat" vocab
	assert_output $'le\n</s>\nchat\n<unk>'
}

@test "featurize --background: uniform, unigram:k and a file are proper distributions" {
	[ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null || skip "no python3 with numpy"
	featurize --background uniform -o "$BATS_TEST_TMPDIR/u.feat" "$Z/tiny.tok" 2>/dev/null
	tar xOf "$BATS_TEST_TMPDIR/u.feat" logb.npy >"$BATS_TEST_TMPDIR/u.npy"
	run "$PY" -c "import numpy as n; b = n.load('$BATS_TEST_TMPDIR/u.npy'); print(len(b), round(float(n.exp(b).sum()), 5), bool(n.allclose(b, -n.log(len(b)))))"
	assert_output "16 1.0 True"
	featurize --background unigram:1 -o "$BATS_TEST_TMPDIR/g.feat" "$Z/tiny.tok" 2>/dev/null
	tar xOf "$BATS_TEST_TMPDIR/g.feat" logb.npy >"$BATS_TEST_TMPDIR/g.npy"
	# </s> 3 + tokens 19 = 22 counts, V = 16, k = 1: p(</s>) = 4/38, p(<unk>) = 1/38
	run "$PY" -c "import numpy as n; b = n.exp(n.load('$BATS_TEST_TMPDIR/g.npy').astype('f8')); print(round(b[0]*38, 4), round(b[-1]*38, 4), round(b.sum(), 5))"
	assert_output "4.0 1.0 1.0"
	featurize --dump "$Z/tiny.tok" 2>/dev/null | cut -f1 | awk '{ print $0 "\t" ($0 == "le" ? 6 : 2) }' >"$BATS_TEST_TMPDIR/bg.tsv"
	printf 'notinvocab\t7\n' >>"$BATS_TEST_TMPDIR/bg.tsv"
	featurize --background "$BATS_TEST_TMPDIR/bg.tsv" -o "$BATS_TEST_TMPDIR/f.feat" "$Z/tiny.tok" 2>/dev/null
	run tar xOf "$BATS_TEST_TMPDIR/f.feat" meta
	assert_line "background=file"
	tar xOf "$BATS_TEST_TMPDIR/f.feat" logb.npy >"$BATS_TEST_TMPDIR/f.npy"
	tar xOf "$BATS_TEST_TMPDIR/f.feat" vocab >"$BATS_TEST_TMPDIR/f.vocab"
	# le 6, the 15 other words 2, notinvocab ignored: renormalised over
	# the vocabulary, p(le) = 6/36 and every other word 2/36
	run "$PY" - "$BATS_TEST_TMPDIR/f.npy" "$BATS_TEST_TMPDIR/f.vocab" <<'EOF'
import sys
import numpy as n
b = n.load(sys.argv[1]).astype("f8")
v = open(sys.argv[2], encoding="utf-8").read().splitlines()
assert b.shape == (len(v),) == (16,), (b.shape, len(v))
assert abs(n.exp(b).sum() - 1) < 1e-5, n.exp(b).sum()
want = n.array([6 / 36 if w == "le" else 2 / 36 for w in v])
assert n.allclose(n.exp(b), want, rtol=1e-5), (v, n.exp(b))
print("ok")
EOF
	assert_success
	assert_output "ok"
}

@test "featurize --min-feature-count drops rare features but keeps TOP identities" {
	run featurize --top 3 --conllu "$Z/tiny.conllu" --min-feature-count 2 --dump "$Z/tiny.tok"
	assert_success
	assert_line $'qui\tTOP:@notTop'
	assert_line $'chat\tTOP:chat Gender:Masc Number:Sing POS:NOUN'
	assert_line $'le\tTOP:le Gender:Masc Number:Sing'
	refute_output --partial 'PronType:Int'
}

@test "featurize: malformed lexicon lines are file:line errors" {
	run_err 1 "bad-notab.lex:2: expected token<TAB>features" featurize --lexicon "$Z/bad-notab.lex" "$Z/tiny.tok"
	run_err 1 "bad-value.lex:1: feature 'animal=lots': bad value" featurize --lexicon "$Z/bad-value.lex" --dump "$Z/tiny.tok"
	printf 'chat\tPOS:NOUN  x\n' >"$BATS_TEST_TMPDIR/l"
	run_err 1 ":1: empty feature" featurize --lexicon "$BATS_TEST_TMPDIR/l" --dump "$Z/tiny.tok"
	printf 'chat\tPOS:NOUN\tx\n' >"$BATS_TEST_TMPDIR/l"
	run_err 1 ":1: a TAB inside the features" featurize --lexicon "$BATS_TEST_TMPDIR/l" --dump "$Z/tiny.tok"
	printf '\tPOS:NOUN\n' >"$BATS_TEST_TMPDIR/l"
	run_err 1 ":1: empty token" featurize --lexicon "$BATS_TEST_TMPDIR/l" --dump "$Z/tiny.tok"
	run_err 1 "nonexistent: No such file" featurize --lexicon "$BATS_TEST_TMPDIR/nonexistent" --dump "$Z/tiny.tok"
}

@test "featurize: bad CoNLL-U (column count, FEATS) and bad word/TAG lines are file:line errors" {
	run_err 1 "bad-cols.conllu:1: expected 10 tab-separated columns" featurize --conllu "$Z/bad-cols.conllu" "$Z/tiny.tok"
	run_err 1 "bad-feats.conllu:1: bad FEATS pair 'Gender'" featurize --conllu "$Z/bad-feats.conllu" "$Z/tiny.tok"
	run_err 1 "bad.tagged:1: 'the': expected word/TAG" featurize --tagged "$Z/bad.tagged" "$Z/tiny.tok"
	run_err 1 "bad-name.conllu:1: feature 'POS:NO UN': feature name contains a space" featurize --conllu "$Z/bad-name.conllu" "$Z/tiny.tok"
}

@test "featurize: bad --background files" {
	printf 'le\t0.5\n' >"$BATS_TEST_TMPDIR/bg"
	run_err 1 "no probability for vocabulary word" featurize --background "$BATS_TEST_TMPDIR/bg" "$Z/tiny.tok"
	printf 'le\tlots\n' >"$BATS_TEST_TMPDIR/bg"
	run_err 1 "bg:1: bad probability 'lots'" featurize --background "$BATS_TEST_TMPDIR/bg" "$Z/tiny.tok"
	printf 'le\t0\n' >"$BATS_TEST_TMPDIR/bg"
	run_err 1 "bg:1: zero probability" featurize --background "$BATS_TEST_TMPDIR/bg" "$Z/tiny.tok"
	printf 'le 0.5\n' >"$BATS_TEST_TMPDIR/bg"
	run_err 1 "bg:1: expected token<TAB>probability" featurize --background "$BATS_TEST_TMPDIR/bg" "$Z/tiny.tok"
}

@test "featurize: empty corpus, bad tokens and unreadable input fail cleanly" {
	run_err 1 "<stdin>: empty corpus" featurize </dev/null
	printf '\n\n' >"$BATS_TEST_TMPDIR/empty"
	run_err 1 "empty corpus" featurize --vocab "$Z/../vocab/tokens.golden" "$BATS_TEST_TMPDIR/empty"
	printf 'le  chat\n' >"$BATS_TEST_TMPDIR/t"
	run_err 1 "t:1: empty token" featurize "$BATS_TEST_TMPDIR/t"
	printf 'le <s> chat\n' >"$BATS_TEST_TMPDIR/t"
	run_err 1 "t:1: the reserved token '<s>'" featurize "$BATS_TEST_TMPDIR/t"
	printf 'le \xff\n' >"$BATS_TEST_TMPDIR/t"
	run_err 1 "t:1: .*UTF-8" featurize "$BATS_TEST_TMPDIR/t"
	run_err 1 "nonexistent: No such file" featurize "$BATS_TEST_TMPDIR/nonexistent"
}

@test "featurize: -o writes atomically; no file is left behind on an error" {
	featurize -o "$BATS_TEST_TMPDIR/s.feat" "$Z/tiny.tok" 2>/dev/null
	run tar tf "$BATS_TEST_TMPDIR/s.feat"
	assert_line --index 0 meta
	run_err 1 "bad-cols.conllu:1" featurize --conllu "$Z/bad-cols.conllu" -o "$BATS_TEST_TMPDIR/t.feat" "$Z/tiny.tok"
	printf 'le chat\nle  chat\n' >"$BATS_TEST_TMPDIR/t"
	run_err 1 "t:2: empty token" featurize --vocab "$Z/../vocab/tokens.golden" -o "$BATS_TEST_TMPDIR/u.feat" "$BATS_TEST_TMPDIR/t"
	run ls "$BATS_TEST_TMPDIR"
	refute_output --partial "t.feat"
	refute_output --partial "u.feat"
}

@test "featurize: refuses to write the tensor stream to a terminal" {
	command -v script >/dev/null || skip "no script(1) to give a pty"
	run script -qec "featurize '$Z/tiny.tok'" /dev/null
	assert_failure 1
	assert_output --partial "featurize: refusing to write a tensor stream to a terminal"
	run script -qec "featurize --dump '$Z/tiny.tok'" /dev/null
	assert_success
}

@test "featurize(1) EXAMPLES run" {
	cd "$BATS_TEST_TMPDIR"
	ln -s "$UD" ud
	tok --from conllu -l ud/fr_sequoia-ud-train.conllu.gz >train.tok
	tok --from conllu -l ud/fr_sequoia-ud-test.conllu.gz >test.tok
	featurize --top 2500 --conllu ud/fr_sequoia-ud-train.conllu.gz -l train.tok >train.feat
	tar tvf train.feat >list
	grep -q ' phi/indptr.npy$' list
	run sh -c "featurize --conllu ud/fr_sequoia-ud-train.conllu.gz -l --ortho --suffix 3 --dump train.tok | grep '^années	'"
	assert_success
	assert_output --partial "POS:NOUN"
	vocab train.tok >vocab.tsv
	featurize --vocab vocab.tsv --top 2500 --ortho --background unigram:0.1 -o train.feat train.tok
	tar xOf train.feat meta | grep -qx 'background=unigram:0.1'
	featurize --ortho --suffix 3 --extra test.tok --dump train.tok >lexicon.txt
	[ "$(wc -l <lexicon.txt)" -gt "$(vocab train.tok | wc -l)" ]
}
