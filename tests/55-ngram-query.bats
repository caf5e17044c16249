#!/usr/bin/env bats
# n-gram queries: the probing form (train --format probing, --convert),
# mapped at load; the same bytes out of score and gen for ARPA text, the
# trie form and the probing form; old trie files; the checksums checked
# lazily or at load (--verify), and corrupt files refused, never scored.
# Data: the Brown slice, and tests/fixtures/ngram (see its README).

load test_helper

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from tagged -l "$BROWN" 2>/dev/null >"$m/all.tok"
	head -n 1500 "$m/all.tok" >"$m/train.tok"
	# test lines with words the model has not seen (OOVs)
	{ tail -n +1501 "$m/all.tok" | head -n 300; echo "zzunseen the zzother word ."; } >"$m/test.tok"
	# the norm checks' lines: the first 60 and the OOV line (--check-norm
	# sums the vocabulary at every position: 4.4 CPU s over all 301)
	{ head -n 60 "$m/test.tok"; tail -n 1 "$m/test.tok"; } >"$m/norm.tok"
	train -q --ngram 4 -o "$m/lm.arpa" "$m/train.tok"
	train -q --convert "$m/lm.arpa" --format probing -o "$m/lm.probing"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

# flip FILE MEMBER: flip one byte of MEMBER's data, 200 bytes before its end.
flip() {
	python3 - "$1" "$2" <<'EOF'
import sys, tarfile
path, member = sys.argv[1], sys.argv[2]
with tarfile.open(path) as t:
    m = t.getmember(member)
    off = m.offset_data + max(0, m.size - 200)
with open(path, "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x40]))
EOF
}

@test "probing form: ARPA, trie and probing give the same bytes (per token, summaries, OOVs, norm check)" {
	train -q --ngram 4 -o lm.trie "$M/train.tok"
	train -q --ngram 4 --format probing -o lm.probing "$M/train.tok"
	cmp lm.probing "$M/lm.probing"
	[ "$(tar xOf lm.probing meta | sed -n 's/^structure=//p')" = probing ]
	[ "$(tar xOf lm.probing meta | sed -n 's/^probing.closed=//p')" = 1 ]
	for f in "$M/lm.arpa" lm.trie lm.probing; do
		score --per-token -m "$f" "$M/test.tok" >"$(basename "$f").out" 2>"$(basename "$f").err"
		score --per-token --check-norm -m "$f" "$M/norm.tok" 2>"$(basename "$f").norm" |
			cmp - <(head -n 60 "$(basename "$f").out"; tail -n 1 "$(basename "$f").out")
	done
	grep -Eq ' [1-9][0-9]* OOVs' lm.arpa.err
	cmp lm.arpa.out lm.trie.out
	cmp lm.arpa.out lm.probing.out
	cmp lm.arpa.err lm.probing.err
	cmp lm.arpa.norm lm.probing.norm
	gen -m "$M/lm.arpa" -n 5 -s 3 --logprob >g.arpa
	gen -m lm.probing -n 5 -s 3 --logprob >g.probing
	cmp g.arpa g.probing
}

@test "batches: the lookups fetched across sentences give the bytes of one sentence at a time, written a batch at a time" {
	for f in "$M/lm.arpa" "$M/lm.probing"; do
		score --per-token -m "$f" "$M/test.tok" >one.out 2>one.err
		for b in 2 7 64 4096; do
			score --per-token --batch "$b" -m "$f" "$M/test.tok" >b.out 2>b.err
			cmp one.out b.out
			cmp one.err b.err
			# to a pipe: whole batches, every line there
			score --per-token --batch "$b" -m "$f" <"$M/test.tok" | cat >pipe.out
			cmp one.out pipe.out
		done
		score --per-token --check-norm --batch 9 -m "$f" "$M/norm.tok" 2>/dev/null | cmp - <(head -n 60 one.out; tail -n 1 one.out)
	done
	[ "$(wc -l <one.out)" -eq "$(wc -l <"$M/test.tok")" ]
}

@test "probing form: a model whose n-grams' suffixes are not all listed is queried context by context, same bytes" {
	# drop five 2-grams that end 3-grams but begin none: their 3-grams'
	# suffixes go missing
	awk -F '\t' '
		/^\\2-grams:/ { sec = 2 } /^\\3-grams:/ { sec = 3 } /^\\4-grams:/ { sec = 4 }
		sec == 3 && NF >= 2 { n = split($2, w, " "); pre[w[1] " " w[2]] = 1; suf[w[2] " " w[3]] = 1 }
		END { for (s in suf) if (!(s in pre) && s !~ /<s>/ && k < 5) { print s; k++ } }' "$M/lm.arpa" >drop
	[ "$(wc -l <drop)" -eq 5 ]
	awk -F '\t' 'NR == FNR { d[$0] = 1; next }
		/^\\2-grams:/ { sec = 2 } /^\\3-grams:/ { sec = 3 }
		sec == 2 && ($2 in d) { next }
		/^ngram 2=/ { sub(/=.*/, "=" substr($0, index($0, "=") + 1) - 5) }
		{ print }' drop "$M/lm.arpa" >open.arpa
	train -q --convert open.arpa --format probing -o open.probing
	[ "$(tar xOf open.probing meta | sed -n 's/^probing.closed=//p')" = 0 ]
	# the dropped 2-grams, and the 3-grams that end in them, as sentences
	awk -F '\t' 'NR == FNR { d[$0] = 1; print; next }
		/^\\3-grams:/ { sec = 3 } /^\\4-grams:/ { sec = 4 }
		sec == 3 && NF >= 2 { n = split($2, w, " "); if ((w[2] " " w[3]) in d) print $2 }' drop "$M/lm.arpa" | grep -v '<s>' >t
	cat "$M/test.tok" >>t
	score --per-token -m open.arpa t >a 2>ae
	score --per-token -m open.probing t >b 2>be
	cmp a b
	cmp ae be
	score --per-token -m "$M/lm.arpa" t 2>/dev/null >c
	run cmp -s a c
	[ "$status" -eq 1 ]
}

@test "old trie files still load and give the bytes they gave before the probing form" {
	score --per-token -m "$FIXTURES/ngram/old-trie.bin" "$FIXTURES/ngram/test.tok" 2>/dev/null | cmp - "$FIXTURES/ngram/old-trie.scores"
	train -q --convert "$FIXTURES/ngram/old-trie.bin" --format probing -o p.bin
	score --per-token -m p.bin "$FIXTURES/ngram/test.tok" 2>/dev/null | cmp - "$FIXTURES/ngram/old-trie.scores"
	score --verify --per-token -m "$FIXTURES/ngram/old-trie.bin" "$FIXTURES/ngram/test.tok" 2>/dev/null | cmp - "$FIXTURES/ngram/old-trie.scores"
}

@test "probing form: a corrupt table is found on use (what was written before is right) or at load with --verify" {
	score -q -m "$M/lm.probing" "$M/test.tok" >good
	cp "$M/lm.probing" bad.probing
	flip bad.probing 3/table.npy
	run score -q -m bad.probing "$M/test.tok"
	[ "$status" -eq 1 ]
	score -q -m bad.probing "$M/test.tok" >out 2>err || true
	grep -q '^score: bad.probing: member 3/table.npy: block [0-9]*: checksum mismatch (corrupted file)$' err
	# the lines written (batches scored before the bad block was touched) are right
	[ "$(wc -l <out)" -lt "$(wc -l <good)" ]
	head -n "$(wc -l <out)" good | cmp - out
	run_err 1 'member 3/table.npy: checksum mismatch \(corrupted file\)' score --verify -m bad.probing "$M/test.tok"
	run_err 1 'member 3/table.npy: block [0-9]+: checksum mismatch' gen -m bad.probing -n 3 -s 1
	# the untouched copy passes --verify
	score -q --verify -m "$M/lm.probing" "$M/test.tok" | cmp - good
}

@test "probing form: corrupt vocabulary, 1-grams, block checksums or meta are refused at load" {
	for m in vocab 1/prob.npy 2/crc.npy meta; do
		cp "$M/lm.probing" bad.probing
		flip bad.probing "$m"
		run score -q -m bad.probing "$M/test.tok"
		[ "$status" -eq 1 ]
		[[ "$output" == *"checksum mismatch (corrupted file)"* ]] || [[ "$output" == *"score: bad.probing: "* ]]
		score -q -m bad.probing "$M/test.tok" 2>/dev/null | [ "$(wc -c)" -eq 0 ]
	done
	head -c 30000 "$M/lm.probing" >cut.probing
	run_err 1 'cut.probing' score -m cut.probing "$M/test.tok"
}

@test "trie form: a corrupt member (meta, vocabulary, any level's table) or a truncated file is refused at load, with or without --verify, nothing scored" {
	train -q --convert "$M/lm.arpa" -o lm.trie
	score -q -m lm.trie "$M/test.tok" >good
	[ -s good ]
	for m in meta vocab 1/logp.npy 2/child.npy 3/backoff.npy 4/word.npy 4/logp.npy; do
		cp lm.trie bad.trie
		flip bad.trie "$m"
		run_err 1 "^score: bad.trie: member $m: checksum mismatch \\(corrupted file\\)$" score -q -m bad.trie "$M/test.tok"
		run_err 1 "^score: bad.trie: member $m: checksum mismatch" score -q --verify -m bad.trie "$M/test.tok"
		run_err 1 "^gen: bad.trie: member $m: checksum mismatch" gen -m bad.trie -n 3 -s 1
	done
	head -c "$(($(stat -c %s lm.trie) / 2))" lm.trie >cut.trie
	run_err 1 '^score: cut.trie: .*(Truncated|truncated)' score -q -m cut.trie "$M/test.tok"
	# the untouched copy still scores
	score -q --verify -m lm.trie "$M/test.tok" | cmp - good
}

@test "probing form: compressed, as a background, with bad options: clear errors" {
	xz -c "$M/lm.probing" >lm.probing.xz
	run_err 1 'decompress it' score -m lm.probing.xz "$M/test.tok"
	run_err 1 'trie form' featurize --background ngram:"$M/lm.probing" -o x.fz "$M/train.tok"
	[ ! -e x.fz ]
	run_err 2 '--format: must be trie or probing' train --ngram 3 --format hash -o x.bin "$M/train.tok"
	run_err 2 '--format: for a binary output' train --ngram 3 --format probing -o x.arpa "$M/train.tok"
	run_err 2 '--convert: -o FILE is required' train --convert "$M/lm.arpa"
	run_err 2 'no file operands' train --convert "$M/lm.arpa" -o x.bin "$M/train.tok"
	run_err 1 'a 4-gram model, not 3' train --ngram 3 --convert "$M/lm.arpa" -o x.bin
	run_err 1 'trie form' train --convert "$M/lm.probing" -o x.bin
	[ ! -e x.bin ]
}
