#!/usr/bin/env bats
# Features of any string (issue 14): the row featurize gives a word, and
# the row llr_lexicon_any_row computes from the features stream for the
# same string as if featurize had never seen it, agree word by word; the
# model carries the lexicon entries and the hunspell dictionary, so score
# and gen featurize an unseen word without the original files.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
	Z="$FIXTURES/featurize"
	O="$FIXTURES/open"
	CMP="$TOP/build/tests/test_anyword"
	[ -x "$CMP" ] || skip "build/tests/test_anyword not built (make check builds it)"
}

# featurize ARGS twice (stream and --dump), then compare every row.
same_rows() {
	featurize "$@" -o s.llrnn 2>/dev/null
	featurize "$@" --dump >d.tsv 2>/dev/null
	run "$CMP" s.llrnn d.tsv
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok 1 - "*" words, 0 rows differ"* ]]
}

@test "open features: featurize's rows and any_row agree (lexicons, mini hunspell, every extractor)" {
	llrnn_hs=$(featurize --hunspell "$O/mini" "$O/tiny.tok" --dump 2>&1 >/dev/null || true)
	hs=(--hunspell "$O/mini")
	[[ "$llrnn_hs" == *"without hunspell"* ]] && hs=()
	same_rows --top 3 --ortho --suffix 2 --char-ngrams 2-3 "${hs[@]}" --conllu "$Z/tiny.conllu" \
		--lexicon "$Z/tiny.lex" --tagged "$Z/tiny.tagged" "$O/tiny.tok"
	# the stream holds the lexicon entries, among them a word outside the vocabulary
	tar xOf s.llrnn any/words | grep -qx chien
}

@test "open features: agree with -l, --top 0 and --min-feature-count 2" {
	same_rows -l --top 0 --min-feature-count 2 --ortho --suffix 3 --conllu "$Z/tiny.conllu" "$O/tiny.tok"
}

@test "open features: agree on the UD French slice (CoNLL-U tags, --ortho --suffix 3, hunspell-fr when installed)" {
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -300 >train.tok
	hs=()
	[ -r /usr/share/hunspell/fr_FR.dic ] && hs=(--hunspell /usr/share/hunspell/fr_FR)
	same_rows --top 100 -l --conllu "$UD/fr_sequoia-ud-dev.conllu.gz" --ortho --suffix 3 "${hs[@]}" train.tok
}

@test "open features: the model carries them; gen shows an unseen word's lexicon entry and hunspell analyses with the files gone" {
	cp "$O/mini.aff" "$O/mini.dic" .
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	featurize --top 3 --ortho --suffix 2 --hunspell ./mini --lexicon "$Z/tiny.lex" "$O/tiny.tok" -o s.llrnn 2>/dev/null
	rm mini.aff mini.dic
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o m.llrnn s.llrnn
	gen -m m.llrnn -s 1 -n 1 --show-features -p "chien zorgs 4817" >out
	sed -n 1p out | grep -Fqx $'chien\tTOP:@notTop POS:NOUN animal ORTH:len5-7 SUF:n$'
	sed -n 2p out | grep -Fqx $'zorgs\tTOP:@notTop HS:@known HS:po:noun HS:is:plur ORTH:len5-7 SUF:s$'
	sed -n 3p out | grep -Fqx $'4817\tTOP:@notTop ORTH:len3-4 ORTH:number ORTH:has-digit'
	# score reads them too (an unseen word's input row), and gives finite numbers
	echo "le chien boit" | score -q -m m.llrnn | awk -F'\t' '$1 ~ /^-[0-9]+\.[0-9]+$/ { ok = 1 } END { exit !ok }'
}

@test "open features: a dictionary without morphological fields (as en_US): HS:@known for every word it knows, the affix rule HS:fl:, in featurize and for an unseen word" {
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	echo "walked frogs tolerant zorglub walk" >t.tok
	run featurize --top 0 --hunspell "$O/bare" --dump t.tok
	assert_success
	assert_line $'walked\tHS:@known HS:fl:D'
	assert_line $'frogs\tHS:@known HS:fl:S'
	assert_line $'tolerant\tHS:@known'
	assert_line $'walk\tHS:@known'
	assert_line $'zorglub\t'
	same_rows --top 0 --hunspell "$O/bare" t.tok
	# an unseen word gets them from the dictionary the model carries
	featurize --top 0 --suffix 1 --hunspell "$O/bare" t.tok -o s.llrnn 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o m.llrnn s.llrnn
	gen -m m.llrnn -s 1 -n 1 --show-features -p "walks frog zorgs" >out
	sed -n 1p out | grep -Fqx $'walks\tHS:@known HS:fl:S SUF:s$'
	sed -n 2p out | grep -Fqx $'frog\tHS:@known'
	sed -n 3p out | grep -Fqx $'zorgs\tSUF:s$'
}

@test "open features: an embedded dictionary that cannot be unpacked is an error, not a silent row" {
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	featurize --top 3 --suffix 2 --hunspell "$O/mini" "$O/tiny.tok" -o s.llrnn 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 -o m.llrnn s.llrnn
	TMPDIR=/nonexistent/dir run_err 1 "hunspell dictionary mini.dic: .*temporary directory" \
		gen -m m.llrnn -s 1 -n 1 --show-features -p "zorgs"
}

# --- the features of the strings outside the vocabulary (OOV:) ---

# The rows of matrix $2 (phi or sig/phi) of stream $1 as feature names,
# one row a line (python3 alone: .npy v1.0, int32 indices).
rows_of() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import array, ast, struct, sys, tarfile
t = tarfile.open(sys.argv[1])
def npy(name):
    b = t.extractfile(name).read()
    n = struct.unpack('<H', b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode())
    a = array.array({'<i4': 'i', '<i8': 'q'}[h['descr']])
    a.frombytes(b[10 + n:])
    return a
f = t.extractfile('features').read().decode().split('\n')
p, c = npy(sys.argv[2] + '/indptr.npy'), npy(sys.argv[2] + '/indices.npy')
for r in range(len(p) - 1):
    print(' '.join(f[k] for k in c[p[r]:p[r + 1]]))
PY
}

# tests/fixtures/open/en.tok with the bare dictionary: V is the words
# seen twice (the frog walked .); walks and tolerant are outside it and
# known to the dictionary, zorglub outside it and unknown.
en_stream() {
	featurize --vocab <(vocab --min-count 2 "$O/en.tok") --top 0 --suffix 1 --hunspell "$O/bare" --spelling 2 \
		--signature-samples 2000 "$@" "$O/en.tok"
}

@test "open features: OOV:@oov and OOV:HS:@known for the strings outside the vocabulary only: featurize, signature rows, any_row, gen, score" {
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	/usr/bin/python3 -c '' 2>/dev/null || skip "python3 not installed"
	en_stream -o s.fz 2>err
	cat err
	grep -q '^featurize: 6 types, 14 features (top 2, hunspell 3, suffix 7, oov 2), ' err
	[ "$(tar xOf s.fz meta | sed -n 's/^oov_features=//p')" = 'OOV:@oov,OOV:HS:@known' ]
	# no word of V has them
	rows_of s.fz phi >phi
	[ "$(wc -l <phi)" -eq 6 ]
	! grep -q 'OOV:' phi || false
	# every signature has OOV:@oov, OOV:HS:@known exactly where HS:@known is
	rows_of s.fz sig/phi >sig
	[ "$(tar xOf s.fz meta | sed -n 's/^sig\.count=//p')" -eq "$(wc -l <sig)" ]
	[ "$(grep -c 'OOV:@oov' sig)" -eq "$(wc -l <sig)" ]
	[ "$(grep -c 'HS:@known' sig | head -1)" -gt 0 ]
	awk '{ k = / HS:@known/ || /^HS:@known/; o = /OOV:HS:@known/; if (k != o) exit 1 }' sig
	# any_row gives every word of V featurize's row, none of them an OOV: feature
	featurize --top 0 --suffix 1 --hunspell "$O/bare" --dump <(vocab --min-count 2 "$O/en.tok" | cut -f1 | grep -v '^</s>$') >d.tsv 2>/dev/null
	run "$CMP" s.fz d.tsv
	echo "$output"
	[[ "$output" == *"ok 1 - 4 words, 0 rows differ"* ]]
	# gen and score give them to unseen words, with the model alone
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 --threads 1 -o m.llrnn s.fz
	[[ "$(tar xOf m.llrnn meta | sed -n 's/^open_bias_fit=//p')" == 'HS:@known='*' OOV:@oov='*' OOV:HS:@known='* ]]
	gen -m m.llrnn -s 1 -n 1 --show-features -p "walked walks zorglub tolerant frog" >out
	cat out
	sed -n 1p out | grep -Fqx $'walked\tHS:@known HS:fl:D SUF:d$'
	sed -n 2p out | grep -Fqx $'walks\tHS:@known HS:fl:S SUF:s$ OOV:@oov OOV:HS:@known'
	sed -n 3p out | grep -Fqx $'zorglub\tSUF:b$ OOV:@oov'
	sed -n 4p out | grep -Fqx $'tolerant\tHS:@known SUF:t$ OOV:@oov OOV:HS:@known'
	sed -n 5p out | grep -Fqx $'frog\tHS:@known SUF:g$'
	echo "the zorglub walks . the tolerant frog walked ." | score -q -m m.llrnn --per-token >lp
	cat lp
	awk -F '\t' '$1 ~ /^-[0-9]+\.[0-9]+$/ { ok = 1 } END { exit !ok }' lp
	! grep -E -q 'inf|nan' lp || false
}

@test "open features: --no-oov-features, and a stream made before the OOV: features: none anywhere, the same stream, trains and scores" {
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	# old-open.fz: en_stream's by featurize before the OOV: features
	# (commit dc3da59); --no-oov-features writes it again, byte for byte
	# but for its meta, which says so, and the signature masses, whose
	# digit strings are now exact
	en_stream --no-oov-features -o n.fz 2>/dev/null
	for m in $(tar tf "$O/old-open.fz"); do
		[[ "$m" = meta || "$m" = sig/* ]] || cmp <(tar xOf "$O/old-open.fz" "$m") <(tar xOf n.fz "$m")
	done
	[ "$(tar tf "$O/old-open.fz" | paste -sd' ')" = "$(tar tf n.fz | paste -sd' ')" ]
	[ "$(tar xOf n.fz meta | sed -n 's/^oov_features=//p')" = none ]
	[ -z "$(tar xOf "$O/old-open.fz" meta | sed -n 's/^oov_features=//p')" ]
	! tar xOf "$O/old-open.fz" features | grep -q '^OOV:' || false
	# the old stream trains (no OOV: weight to report) and its model
	# featurizes an unseen word as before
	train --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 --threads 1 -o m.llrnn "$O/old-open.fz" 2>err
	grep -q '^train: open vocabulary: fitted bias HS:@known=[-0-9.]*$' err
	gen -m m.llrnn -s 1 -n 1 --show-features -p "walks zorglub" >out
	sed -n 1p out | grep -Fqx $'walks\tHS:@known HS:fl:S SUF:s$'
	sed -n 2p out | grep -Fqx $'zorglub\tSUF:b$'
	echo "the zorglub walks ." | score -q -m m.llrnn --per-token >lp
	awk -F '\t' '$1 ~ /^-[0-9]+\.[0-9]+$/ { ok = 1 } END { exit !ok }' lp
	! grep -E -q 'inf|nan' lp || false
	# an old model scores as the model of the same stream written with
	# --no-oov-features, but for the signature masses: the old stream
	# drew its short strings and digit strings, the new one sums them
	# exactly, so Z differs a little (0.051 nats a token at most here)
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 --threads 1 -o n.llrnn n.fz
	echo "the zorglub walks . the tolerant frog walked ." | score -q -m m.llrnn --per-token >a
	echo "the zorglub walks . the tolerant frog walked ." | score -q -m n.llrnn --per-token >b
	cut -f4- a | tr '\t' '\n' >ta
	cut -f4- b | tr '\t' '\n' >tb
	[ "$(cut -d= -f1 ta | paste -sd' ')" = "$(cut -d= -f1 tb | paste -sd' ')" ]
	paste -d= ta tb | awk -F= '{ d = $2 - $4; if (d < 0) d = -d; if (d > m) m = d } END { print "largest difference " m; exit !(NR == 10 && m < 0.1) }'
	! cmp -s a b || false
	# misuse: without --spelling; the prefix OOV: in a lexicon
	run_err 2 'no-oov-features: goes with --spelling' featurize --no-oov-features "$O/en.tok"
	printf 'frog\tOOV:x\n' >l.tsv
	run_err 1 "l.tsv:1: feature 'OOV:x': the prefix OOV: is reserved" featurize --lexicon l.tsv "$O/en.tok"
}

# --- open scoring through the features (signature masses, score) ---

# A tiny LL-RNN with a spelling model and signature masses, on 300
# sentences of the UD French slice.
open_model() {
	[ -s "$BATS_FILE_TMPDIR/open.llrnn" ] && return 0
	local d="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -n 300 >"$d/otrain.tok"
	tok --from conllu -l "$UD/fr_sequoia-ud-test.conllu.gz" | head -n 20 >"$d/otest.tok"
	featurize --top 50 --ortho --suffix 2 --spelling 4 --signature-samples 200000 -o "$d/open.fz" "$d/otrain.tok" 2>"$d/open.err"
	train -q --hidden 16 --embed 16 --layers 1 --threads 1 --epochs 1 -s 3 -o "$d/open.llrnn" "$d/open.fz"
}

# The same with the signature masses exact (featurize's default), the
# spelling model of order 3: the exact pass over order 4's classes took
# four times the CPU (12 s in featurize, 13 s in score's check), for the
# same code.
exact_model() {
	open_model
	[ -s "$BATS_FILE_TMPDIR/exact.llrnn" ] && return 0
	local d="$BATS_FILE_TMPDIR"
	featurize --top 50 --ortho --suffix 2 --spelling 3 -o "$d/exact.fz" "$d/otrain.tok" 2>"$d/exact.err"
	train -q --hidden 16 --embed 16 --layers 1 --threads 1 --epochs 1 -s 3 -o "$d/exact.llrnn" "$d/exact.fz"
}

@test "open scoring: exact signature masses by default: featurize says so, the meta, score --check-norm sums exactly and checks rows" {
	exact_model
	local d="$BATS_FILE_TMPDIR"
	cat "$d/exact.err"
	grep -q '^featurize: signature masses: [0-9]* signatures, every string outside the vocabulary summed exactly: [0-9]* classes of the spelling model.s forward pass, [0-9]* strings listed apart, 0 types of the corpus outside it; q unassigned [0-9.e-]*$' "$d/exact.err"
	! grep -q 'drawn' "$d/exact.err" || false
	meta() { tar xOf "$d/exact.llrnn" meta | sed -n "s/^$1=//p"; }
	[ "$(meta sig.exact)" -gt 100 ]
	[ "$(meta sig.listed)" -gt 1100 ] # the years and Roman ordinals at least
	[ "$(meta sig.samples)" = 0 ]
	awk -v u="$(meta sig.unassigned)" 'BEGIN { exit !(u >= 0 && u < 1e-15) }'
	run --separate-stderr score -m "$d/exact.llrnn" --check-norm --norm-samples 20000 --per-token "$d/otest.tok"
	echo "$stderr" | tail -6
	assert_success
	echo "$stderr" | grep -q '^score: open vocabulary (LL-RNN): lambda 0\.[0-9]*, [0-9]* signatures, every string outside the vocabulary summed exactly'
	echo "$stderr" | grep -q '^score: norm check: every string outside the vocabulary summed exactly (the spelling model.s forward pass, [0-9]* strings listed apart), recomputed from the model.s spelling model and features$'
	echo "$stderr" | grep -qx 'score: norm check: the rows of 20000 strings drawn outside the vocabulary and the lists: 0 differ from their class.s'
	echo "$stderr" | grep -qx 'score: norm check: within 0.001 at every position'
	echo "$stderr" | grep -q '^score: norm check: max |sum p - 1| = [0-9.e-]*, 0 batch(es) over 0.001$'
	# the largest deviation is float rounding (the spelling model's
	# probabilities are floats), far inside 1e-3
	dev=$(echo "$stderr" | sed -n 's/^score: norm check: max |sum p - 1| = \([0-9.e-]*\), .*/\1/p')
	awk -v d="$dev" 'BEGIN { print "deviation " d; exit !(d != "" && d < 1e-5) }'
	[ "$(printf '%s\n' "$output" | awk -F '\t' '{ s += $3 } END { print s }')" -gt 20 ]
	! printf '%s\n' "$output" | grep -E -q 'inf|nan' || false
	# --signature-samples asks for the draws instead
	grep -q '^featurize: signature masses: [0-9]* signatures from 200000 strings drawn' "$d/open.err"
	[ -z "$(tar xOf "$d/open.llrnn" meta | sed -n 's/^sig\.exact=//p')" ]
}

@test "open scoring: features beyond the exact pass (CNG:) are drawn, and featurize says why" {
	featurize --top 50 --ortho --char-ngrams 2-3 --spelling 3 -o c.fz "$O/en.tok" 2>err
	cat err
	grep -qx 'featurize: signature masses: not exact (the character n-gram features (CNG:) are beyond the exact pass): drawn' err
	grep -q '^featurize: signature masses: [0-9]* signatures from 200000 strings drawn' err
	[ -z "$(tar xOf c.fz meta | sed -n 's/^sig\.exact=//p')" ]
}

@test "open scoring: featurize --spelling stores the signature masses (the reader checks they sum to 1)" {
	open_model
	grep -q '^featurize: signature masses: [0-9]* signatures from 200000 strings drawn outside the vocabulary and 0 types of the corpus outside it$' "$BATS_FILE_TMPDIR/open.err"
	tar tf "$BATS_FILE_TMPDIR/open.llrnn" | grep -qx 'sig/logm.npy'
	[ "$(tar xOf "$BATS_FILE_TMPDIR/open.llrnn" meta | sed -n 's/^sig\.samples=//p')" = 200000 ]
	# the digit strings exactly (order 4: groups by length and last 3
	# digits; the extractors read at most 2), in the meta
	grep -q '^featurize: signature masses: the digit strings outside the vocabulary exactly: [0-9]* groups, q 0\.[0-9]*$' "$BATS_FILE_TMPDIR/open.err"
	g=$(sed -n 's/.*exactly: \([0-9]*\) groups.*/\1/p' "$BATS_FILE_TMPDIR/open.err")
	[ "$(tar xOf "$BATS_FILE_TMPDIR/open.llrnn" meta | sed -n 's/^sig\.digits=//p')" = "$g" ]
	[ "$g" -gt 1000 ]
	tar xOf "$BATS_FILE_TMPDIR/open.llrnn" meta | grep -Eq '^sig\.digits_q=0\.[0-9]+(e-[0-9]+)?$'
	# the strings of at most 3 seen characters, listed
	grep -q '^featurize: signature masses: the strings of at most 3 characters outside the vocabulary exactly: [0-9]*, q 0\.[0-9]*$' "$BATS_FILE_TMPDIR/open.err"
	n=$(sed -n 's/.*3 characters outside the vocabulary exactly: \([0-9]*\), .*/\1/p' "$BATS_FILE_TMPDIR/open.err")
	[ "$(tar xOf "$BATS_FILE_TMPDIR/open.llrnn" meta | sed -n 's/^sig\.short=//p')" = "$n" ]
	[ "$n" -gt 10000 ]
	# a spelling model of order 6 is beyond the groups: drawn, said so
	featurize --top 50 --ortho --suffix 2 --spelling 6 --signature-samples 1000 -o o6.fz "$BATS_FILE_TMPDIR/otrain.tok" 2>o6.err
	grep -qx "featurize: signature masses: the digit strings drawn with the rest: the spelling model's order is not 2 to 5" o6.err
	! tar xOf o6.fz meta | grep -q '^sig\.digits' || false
	run_err 2 'signature-samples: goes with --spelling' featurize --signature-samples 10 "$BATS_FILE_TMPDIR/otrain.tok"
	run_err 2 'signature-samples' featurize --spelling 3 --signature-samples 0 "$BATS_FILE_TMPDIR/otrain.tok"
}

# (1000000 draws for the check: with 100000 its standard error, 2e-4
# here, leaves the bar unresolved.)
@test "open scoring: --check-norm over all strings (V exactly, the rest by importance sampling) is 1 within 1e-3" {
	skip_sanitized "a bar resolved by 1000000 draws (7 CPU s plain); the sampled norm check runs under it in 'the norm check's draws' and 'fails on signature masses from 10 draws'"
	open_model
	run --separate-stderr score -m "$BATS_FILE_TMPDIR/open.llrnn" --check-norm --norm-samples 1000000 --per-token "$BATS_FILE_TMPDIR/otest.tok"
	echo "$stderr" | tail -3
	assert_success
	echo "$stderr" | grep -q '^score: open vocabulary (LL-RNN): lambda 0\.[0-9]*, [0-9]* signatures from 200000 draws'
	echo "$stderr" | grep -q '^score: norm check: max |sum p - 1| = [0-9.e-]*, 0 batch(es) over 0.001 by more than 3 standard errors$'
	# and the total mass where it is furthest from 1: 1 +- that deviation (%.3g)
	dev=$(echo "$stderr" | sed -n 's/^score: norm check: max |sum p - 1| = \([0-9.e-]*\), .*/\1/p')
	mass=$(echo "$stderr" | sed -n 's/^score: norm check: total mass \([0-9]\.[0-9]\{9\}\) at the position furthest from 1$/\1/p')
	awk -v d="$dev" -v m="$mass" 'BEGIN { e = m - 1; if (e < 0) e = -e; print "mass " m ", deviation " d; exit !(m != "" && e < 1e-3 && e - d < 1e-8 + d * 5e-3 && d - e < 1e-8 + d * 5e-3) }'
	# OOV words were scored, every token finite
	[ "$(printf '%s\n' "$output" | awk -F '\t' '{ s += $3 } END { print s }')" -gt 20 ]
	! printf '%s\n' "$output" | grep -E -q 'inf|nan' || false
	# the check's standard error there, and the signature masses' (the
	# same spread over 200000 draws, not 1000000): sqrt(5) times it
	se=$(echo "$stderr" | sed -n 's/^score: norm check: standard error \([0-9.e-]*\) there (1000000 draws outside the vocabulary); .*/\1/p')
	sse=$(echo "$stderr" | sed -n 's/.*; the signature masses. own there \([0-9.e-]*\) (200000 draws)$/\1/p')
	awk -v s="$se" -v t="$sse" 'BEGIN { print "se " s ", signature masses " t; exit !(s > 0 && s < 2e-4 && t / s > 2.1 && t / s < 2.4) }'
	echo "$stderr" | grep -qx 'score: norm check: within 0.001 at every position: |sum p - 1| + 3 standard errors at most 0.001'
	echo "$stderr" | grep -q '^score: norm check: the digit strings outside the vocabulary summed exactly ([0-9]* groups), the draws from the rest$'
	echo "$stderr" | grep -q '^score: norm check: the strings of at most 3 characters outside the vocabulary summed exactly ([0-9]*), the draws from the rest$'
	# the baseline's line (p(<unk> | K) spread by spelling) is not this model's
	! echo "$stderr" | grep -q 'OOV words scored as' || false
}

@test "open scoring: the hunspell dictionary's word forms outside the vocabulary are summed exactly (featurize, meta, score --check-norm)" {
	featurize --hunspell no-such 2>&1 | grep -q 'without hunspell' && skip "llrnn built without hunspell"
	# bare's forms: walk walked walks frog frogs tolerant; V' holds the
	# frog walked, the corpus the known tolerant walks: walk and frogs left
	en_stream -o d.fz 2>err
	grep -q "^featurize: signature masses: the hunspell dictionary's word forms outside the vocabulary exactly: 2, q 0\.[0-9]*$" err
	[ "$(tar xOf d.fz meta | sed -n 's/^sig\.dict=//p')" = 2 ]
	tar xOf d.fz meta | grep -Eq '^sig\.dict_q=[0-9.]+(e-[0-9]+)?$'
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -s 1 --threads 1 -o d.llrnn d.fz
	score -m d.llrnn --check-norm --norm-samples 20000 "$O/en.tok" 2>serr >/dev/null
	# the check sums the corpus's known strings with the rest of q: four
	grep -qx "score: norm check: the hunspell dictionary's word forms outside the vocabulary summed exactly (4), the draws from the rest" serr
	grep -q '^score: norm check: max |sum p - 1| = ' serr
	# an affix file the listing cannot read (an entry past its header's
	# count, which hunspell lets by): the forms are drawn, and featurize
	# says why; the meta has no sig.dict
	printf 'SET UTF-8\nSFX D Y 1\nSFX D 0 ed .\nSFX D 0 ing .\n\nSFX S Y 1\nSFX S 0 s .\n' >x.aff
	cp "$O/bare.dic" x.dic
	featurize --vocab <(vocab --min-count 2 "$O/en.tok") --top 0 --suffix 1 --hunspell x --spelling 2 \
		--signature-samples 2000 -o x.fz "$O/en.tok" 2>xerr
	grep -qx "featurize: signature masses: the hunspell dictionary's word forms drawn with the rest: affix file line 4: SFX D: not a header (cross product Y or N, count)" xerr
	! tar xOf x.fz meta | grep -q '^sig\.dict' || false
	# without a dictionary: no such line
	featurize --top 0 --suffix 1 --spelling 2 --signature-samples 2000 -o n.fz "$O/en.tok" 2>nerr
	! grep -q "dictionary's word forms" nerr || false
}

@test "open scoring: the norm check's draws: -s and --norm-samples, the standard error grows with fewer, bad values" {
	open_model
	local m="$BATS_FILE_TMPDIR/open.llrnn" t="$BATS_FILE_TMPDIR/otest.tok"
	check() { score -q -m "$m" --check-norm "$@" "$t" 2>&1 >/dev/null | grep '^score: norm check: '; }
	score -m "$m" --check-norm -s 5 "$t" 2>&1 >/dev/null | grep '^score: norm check: ' >s5
	score -m "$m" --check-norm -s 5 "$t" 2>&1 >/dev/null | grep '^score: norm check: ' >s5b
	score -m "$m" --check-norm -s 6 "$t" 2>&1 >/dev/null | grep '^score: norm check: ' >s6
	score -m "$m" --check-norm --norm-samples 1000 "$t" 2>&1 >/dev/null | grep '^score: norm check: ' >k1000
	cat s5 s6 k1000
	cmp s5 s5b
	! cmp -s <(sed -n 2p s5) <(sed -n 2p s6) || false
	grep -q '(1000 draws outside the vocabulary)' k1000
	se5=$(sed -n 's/^score: norm check: standard error \([0-9.e-]*\) there .*/\1/p' s5)
	sek=$(sed -n 's/^score: norm check: standard error \([0-9.e-]*\) there .*/\1/p' k1000)
	awk -v a="$se5" -v b="$sek" 'BEGIN { exit !(a > 0 && b > 3 * a) }'
	run_err 2 'norm-samples' score -m "$m" --check-norm --norm-samples 0 "$t"
	run_err 2 'norm-samples' score -m "$m" --check-norm --norm-samples many "$t"
	run_err 2 '\-s' score -m "$m" --check-norm -s -1 "$t"
	# the signature masses' own seed would redraw their strings
	own=$(tar xOf "$m" meta | sed -n 's/^sig\.seed=//p')
	run_err 1 "^score: --check-norm: norm check: seed $own is the signature masses' own" score -m "$m" --check-norm -s "$own" "$t"
}

@test "open scoring: the norm check fails on signature masses from 10 draws, beyond its own error" {
	open_model
	local d="$BATS_FILE_TMPDIR"
	featurize --top 50 --ortho --suffix 2 --spelling 4 --signature-samples 10 -o few.fz "$d/otrain.tok" 2>/dev/null
	train -q --hidden 16 --embed 16 --layers 1 --threads 1 --epochs 1 -s 3 -o few.llrnn few.fz
	run --separate-stderr score -m few.llrnn --check-norm "$d/otest.tok"
	echo "$stderr" | tail -4
	assert_failure 1
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 20 ] # every line scored first
	echo "$stderr" | grep -q '^score: .*otest.tok:[0-9-]*: distribution sums to 1 [-+][0-9.e-]* (standard error [0-9.e-]*)$'
	echo "$stderr" | grep -qx 'score: norm check: beyond 0.001 by more than 3 standard errors'
	echo "$stderr" | grep -q '^score: norm check failed at [1-9][0-9]* batch(es)'
}

@test "open scoring: two unseen words with the same features differ by their spelling only" {
	open_model
	local m="$BATS_FILE_TMPDIR/open.llrnn"
	# same row: TOP:@notTop ORTH:len5-7 SUF:e$ SUF:le$
	gen -m "$m" -s 1 -n 1 --show-features -p "tarbule mirbule" | head -2 | cut -f2 | uniq >rows
	[ "$(wc -l <rows)" -eq 1 ]
	a=$(echo "le tarbule est là ." | score -q -m "$m" --per-token | cut -f5)
	b=$(echo "le mirbule est là ." | score -q -m "$m" --per-token | cut -f5)
	[[ "$a" == tarbule=-* && "$b" == mirbule=-* ]]
	spell_ngram "$m" "$PWD/spell.bin"
	printf 't a r b u l e\nm i r b u l e\n' | score -m spell.bin >sp 2>/dev/null
	# every character seen by the spelling model: no OOV column
	[ "$(cut -f3 sp | paste -sd' ')" = "0 0" ]
	awk -v a="${a#*=}" -v b="${b#*=}" 'NR == 1 { s1 = $1 } NR == 2 { s2 = $1 }
		END { d = (a - b) - (s1 - s2); if (d < 0) d = -d; print "open " a - b ", spelling " s1 - s2; exit !(d < 2e-4) }' sp
}

# The paper's example on the UD French slice (all eight files: 1000
# sentences, neither word among them).  The LL-RNN with the paper's
# features plus --ortho --suffix 3; the baseline (as rnn-spell in
# pipelines/open-vocab.mk) a softmax RNN on the words seen twice with the
# same spelling model.  Both words are <unk> to the baseline, so its
# margin is the spelling model's alone; the LL-RNN's is wider by what
# their features say after "le prix est de".  (With these sizes and
# seed, the LL-RNN without --ortho, or with no feature telling the two
# apart, falls short of the bar.)
@test "open scoring: 'le prix est de 4817 euros .' beats 'zorglub' by 3 nats more than the softmax-plus-spelling baseline (UD French)" {
	skip_sanitized "a margin after 10 epochs of two models (165 s under ASan); featurize's exact pass, train and score run under it in tests 7 to 9"
	tok --from conllu -l "$UD"/*.conllu.gz | sed '/^$/d' >train.tok
	[ "$(wc -l <train.tok)" -eq 1000 ]
	! grep -q -w -e 4817 -e zorglub train.tok || false
	conllu=()
	for f in "$UD"/*.conllu.gz; do conllu+=(--conllu "$f"); done
	featurize -l --top 100 "${conllu[@]}" --ortho --suffix 3 --spelling 4 -o ll.fz train.tok 2>/dev/null
	vocab --min-count 2 train.tok >v2.tsv
	featurize --vocab v2.tsv --spelling 4 -o sm.fz train.tok 2>/dev/null
	local sizes="--hidden 64 --embed 64 --layers 1 --threads 1 --epochs 10 -s 1"
	train -q $sizes -o ll.llrnn ll.fz
	train -q --output softmax $sizes -o sm.llrnn sm.fz
	printf 'le prix est de 4817 euros .\nle prix est de zorglub euros .\n' >pair.tok
	ll=$(score -q -m ll.llrnn pair.tok | cut -f1 | paste -sd' ')
	sm=$(score -q -m sm.llrnn pair.tok | cut -f1 | paste -sd' ')
	# the baseline's margin is the spelling model's difference, exactly
	spell_ngram "$PWD/sm.fz" "$PWD/spell.bin"
	sp=$(printf '4 8 1 7\nz o r g l u b\n' | score -q -m spell.bin | cut -f1 | paste -sd' ')
	echo "LL-RNN $ll; softmax + spelling $sm; p_spell $sp"
	echo "$ll $sm $sp" | awk '{ ll = $1 - $2; sm = $3 - $4; sp = $5 - $6
		print "margins: LL-RNN " ll ", baseline " sm ", spelling " sp
		d = sm - sp; if (d < 0) d = -d
		exit !(d < 1e-3 && ll > 0 && ll >= sm + 3) }'
}
