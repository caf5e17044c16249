#!/usr/bin/env bats
# n-gram models: train --ngram (modified Kneser-Ney, ARPA and binary
# output), score -m and gen -m with ARPA files, IRSTLM interoperability
# (when IRSTLM is installed), the man page examples and the error paths.
# Data: a corpus worked by hand (tests/unit/test_ngram.c has the working)
# and the Brown slice.

load test_helper

IRST=/usr/lib/irstlm/bin

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from tagged -l "$BROWN" 2>/dev/null >"$m/all.tok"
	head -n 1500 "$m/all.tok" >"$m/train.tok"
	tail -n +1501 "$m/all.tok" | head -n 300 >"$m/test.tok"
	train -q --ngram 3 -o "$m/lm.arpa" "$m/train.tok"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

# |$1 - $2| <= $3
near() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# The log10 probability (field 1) or backoff (field 3) of an ARPA n-gram.
arpa_field() {
	awk -F '\t' -v g="$2" -v f="$3" '$2 == g { print $f; exit }' "$1"
}

@test "train --ngram: the corpus worked by hand, its discounts, probabilities and backoffs" {
	printf 'c a\nc\nc\na\nb\n' >hand.tok
	run train --ngram 2 -o hand.arpa hand.tok
	assert_success
	assert_output --partial '1-grams 6, discounts D1 0.5000 D2 0.5000 D3+ 3.0000'
	assert_output --partial '2-grams 7, discounts D1 0.5000 D2 1.2500 D3+ 3.0000'
	near "$(arpa_field hand.arpa c 1)" -0.698970 1e-6            # log10 0.2
	near "$(arpa_field hand.arpa a 1)" -0.464887 1e-6            # log10 12/35
	near "$(arpa_field hand.arpa '<unk>' 1)" -0.890856 1e-6      # log10 4.5/35
	near "$(arpa_field hand.arpa '<s>' 3)" -0.096910 1e-6        # log10 0.8
	near "$(arpa_field hand.arpa 'c' 3)" -0.234083 1e-6          # log10 7/12
	near "$(arpa_field hand.arpa 'c </s>' 1)" -0.488117 1e-6     # log10 0.325
	[ "$(arpa_field hand.arpa '<s>' 1)" = 0 ]
	[ "$(arpa_field hand.arpa '</s>' 3)" = 0 ]
	grep -qx 'ngram 2=7' hand.arpa
	tail -n 1 hand.arpa | grep -qx '\\end\\'
}

@test "train --ngram: ARPA, gzipped ARPA, binary and stdout give the same scores" {
	train -q --ngram 3 -o lm.arpa.gz "$M/train.tok"
	train -q --ngram 3 -o lm.bin "$M/train.tok"
	train -q --ngram 3 "$M/train.tok" >lm.stdout.arpa
	cmp lm.stdout.arpa "$M/lm.arpa"
	[ "$(head -c 2 lm.arpa.gz | od -An -tx1 | tr -d ' ')" = 1f8b ]
	zcat lm.arpa.gz | cmp - "$M/lm.arpa"
	tar xOf lm.bin meta | grep -qx 'kind=ngram'
	score -q -m "$M/lm.arpa" "$M/test.tok" >a
	score -q -m lm.arpa.gz "$M/test.tok" >b
	score -q -m lm.bin "$M/test.tok" >c
	cmp a b
	cmp a c
	[ "$(wc -l <a)" -eq 300 ]
}

@test "score -m lm.arpa: per-token sums, OOVs as <unk>, the summary, the norm check" {
	printf 'the man said .\nthe zzqxj said .\n\n' >in.tok
	run score -m "$M/lm.arpa" --per-token --check-norm in.tok
	assert_success
	score -q -m "$M/lm.arpa" --per-token in.tok >out
	[ "$(wc -l <out)" -eq 3 ]
	# line 2: 5 tokens, 1 OOV, scored as <unk>
	[ "$(sed -n 2p out | cut -f2,3)" = "$(printf '5\t1')" ]
	# the line's logprob is the sum of its tokens'
	sed -n 1p out | tr '\t' '\n' | awk -F= 'NR == 1 { t = $1 } NR > 3 { s += $2 } END { d = t - s; if (d < 0) d = -d; exit !(d < 2e-3) }'
	# the blank line is skipped; scored, it predicts </s> from <s> only
	[ "$(sed -n 3p out)" = "" ]
	[ "$(score -q -m "$M/lm.arpa" --blank-lines score in.tok | sed -n 3p | cut -f2,3)" = "$(printf '1\t0')" ]
	score -m "$M/lm.arpa" --check-norm in.tok 2>err >/dev/null
	grep -q 'OOVs' err
	max=$(sed -n 's/.*max |sum p - 1| = \([^,]*\),.*/\1/p' err)
	near "$max" 0 1e-5
}

@test "score -m: an ARPA file with <unk> missing scores OOVs 0 and counts them (SRILM)" {
	grep -v $'\t<unk>\t' "$M/lm.arpa" | awk '/^ngram 1=/ { sub(/=.*/, "=" substr($0, index($0, "=") + 1) - 1) } { print }' >nounk.arpa
	printf 'the zzqxj said .\n' >in.tok
	score -q -m nounk.arpa --per-token in.tok >out
	[ "$(cut -f3 out)" = 1 ]
	cut -f5 out | grep -qx 'zzqxj=0.0000'
}

@test "score -m: an ARPA file without <unk> warns once, and the summary says what its OOVs count" {
	grep -v $'\t<unk>\t' "$M/lm.arpa" | awk '/^ngram 1=/ { sub(/=.*/, "=" substr($0, index($0, "=") + 1) - 1) } { print }' >nounk.arpa
	printf 'the man said .\nthe zzqxj said .\na wwqyb and zzqxj .\n' >in.tok
	score -m nounk.arpa --per-token in.tok >out 2>err
	[ "$(grep -c '^score: nounk.arpa: ' err)" -eq 1 ]
	grep -qx "score: nounk.arpa: the model has no <unk>: OOV words (the first at in.tok:2) get log p 0 and cut the context, as in SRILM; ppl and ppl1 leave them out, the figures with OOVs count them at 0" err
	grep -q '^score: 3 sentences, 13 words, 3 OOVs, 0 zeroprobs, 0 blank lines skipped$' err
	grep -q '^score: logprob (base e): -[0-9.]* over 16 tokens (words + </s>, OOVs at log p 0: the model has no <unk>)$' err
	grep -q '^score: perplexity (words + </s>, OOVs at log p 0: the model has no <unk>): ' err
	# -q leaves the warning, which is about the lines too
	score -q -m nounk.arpa in.tok 2>errq >/dev/null
	[ "$(wc -l <errq)" -eq 1 ]
	grep -q '^score: nounk.arpa: the model has no <unk>' errq
	# SRILM's figures leave the OOVs out: by hand from the per-token logprobs
	L=$(tr '\t' '\n' <out | awk -F= '/=/ { s += $NF } END { printf "%.6f", s }')
	score -q -m nounk.arpa --format srilm in.tok >srilm
	sed -n 1p srilm | grep -qx 'file in.tok: 3 sentences, 13 words, 3 OOVs'
	awk -v L="$L" 'NR == 2 { l = L / log(10); p = 10 ^ (-l / 13); p1 = 10 ^ (-l / 10)
		d = $4 - l; e = $6 / p - 1; f = $8 / p1 - 1
		exit !(d * d < 1e-6 && e * e < 1e-8 && f * f < 1e-8) }' srilm
	# no warning without an OOV, nor from a model with <unk>
	head -1 in.tok | score -q -m nounk.arpa 2>err1 >/dev/null
	[ ! -s err1 ]
	score -m "$M/lm.arpa" in.tok 2>err2 >/dev/null
	! grep -q 'no <unk>' err2
	grep -q '(words + </s>, OOVs scored as <unk>)' err2
}

@test "gen -m lm.arpa: reproducible samples; score agrees with their --logprob" {
	gen -m "$M/lm.arpa" -n 5 -s 3 --logprob >one
	gen -m "$M/lm.arpa" -n 5 -s 3 --logprob >two
	cmp one two
	[ "$(wc -l <one)" -eq 5 ]
	cut -f1 one | score -q -m "$M/lm.arpa" | cut -f1 >scored
	paste <(cut -f2 one) scored | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 2e-3) exit 1 }'
	gen -m "$M/lm.arpa" -p "the" --greedy >g
	grep -q '^the ' g
	run_err 2 'beam' gen -m "$M/lm.arpa" --beam 3
}

@test "n-gram man page examples run (train, score, gen)" {
	cp "$M/train.tok" train.tok
	cp "$M/test.tok" test.tok
	train --ngram 4 -o lm.arpa.gz train.tok 2>/dev/null
	train --ngram 4 --prune 0,0,1 -o lm.bin train.tok 2>/dev/null
	[ "$(zcat lm.arpa.gz | grep -c '^ngram')" -eq 4 ]
	train --ngram 4 -o lm.arpa train.tok 2>/dev/null
	score -m lm.arpa test.tok >test.scores 2>/dev/null
	[ "$(wc -l <test.scores)" -eq 300 ]
	train --ngram 3 -o lm.arpa train.tok 2>/dev/null
	gen -m lm.arpa -n 3 -s 1 --logprob >g
	[ "$(wc -l <g)" -eq 3 ]
	# pruning dropped 3- and 4-grams seen once
	[ "$(tar xOf lm.bin meta | sed -n 's/^ngram.4=//p')" -lt "$(zcat lm.arpa.gz | sed -n 's/^ngram 4=//p')" ]
	# train(1): the probing form, estimated and converted, the same file
	train --ngram 4 --format probing -o lm.probing train.tok 2>/dev/null
	cp lm.probing lm.probing.1
	train --convert lm.arpa.gz --format probing -o lm.probing 2>/dev/null
	cmp lm.probing lm.probing.1
	# score(1): the probing form, checked whole first
	train -q --convert lm.arpa --format probing -o lm.bin
	score --verify -m lm.bin test.tok >test.scores.bin 2>/dev/null
	score -m lm.arpa test.tok 2>/dev/null | cmp - test.scores.bin
	# train(1): a corpus larger than memory, from a pipe (here forced to
	# disk by its knob), then converted
	xz -c train.tok >big.tok.xz
	mkdir var
	xzcat big.tok.xz | LLRNN_NGRAM_SORT=1000 train --ngram 5 --memory 1G --temp-dir var \
		-o big.arpa.gz 2>big.err
	grep -q 'sorted on disk' big.err
	xzcat big.tok.xz | LLRNN_NGRAM_SORT=1000 train --ngram 5 --memory 1G --temp-dir var \
		-o big.bin 2>big.err
	grep -q 'sorted on disk' big.err
	score -m big.bin test.tok 2>/dev/null | cmp - <(score -m big.arpa.gz test.tok 2>/dev/null)
	[ -z "$(ls -A var)" ]
	train --convert big.arpa.gz --format probing -o big.probing 2>/dev/null
	[ "$(tar xOf big.probing meta | sed -n 's/^order=//p')" = 5 ] || tar xOf big.probing meta | head -20 >&2
	mandoc -Tlint -W warning "$TOP/man/train.1" "$TOP/man/score.1" "$TOP/man/gen.1"
}

@test "score -m: malformed ARPA files get file:line: reason and exit 1" {
	head -n 8 "$M/lm.arpa" >cut.arpa
	run_err 1 'cut.arpa: .*(no \\end\\|section has fewer)' score -m cut.arpa "$M/test.tok"
	sed 's/^ngram 2=\([0-9]*\)/ngram 2=1\1/' "$M/lm.arpa" >counts.arpa
	run_err 1 'counts.arpa:[0-9]+: \\data\\ says [0-9]+ 2-grams, the section has fewer' score -m counts.arpa "$M/test.tok"
	sed '0,/^-[0-9.]*\tthe\t/s//-0.5x\tthe\t/' "$M/lm.arpa" >num.arpa
	run_err 1 'num.arpa:[0-9]+: .*not a number' score -m num.arpa "$M/test.tok"
	awk '!/^\\2-grams:/' "$M/lm.arpa" >sect.arpa
	run_err 1 'sect.arpa:[0-9]+: missing section \\2-grams:' score -m sect.arpa "$M/test.tok"
	printf '\\data\\\nngram 1=2\nngram 2=1\nngram 3=1\n\n\\1-grams:\n-1\ta\t0\n-1\tb\t0\n\n\\2-grams:\n-1\ta b\t0\n\n\\3-grams:\n-1\tb a b\n\n\\end\\\n' >prefix.arpa
	run_err 1 'prefix.arpa:14: the prefix of this 3-gram is not listed' score -m prefix.arpa "$M/test.tok"
	printf 'not a model\n' >junk.txt
	run_err 1 'junk.txt: not an llrnn tensor archive' score -m junk.txt "$M/test.tok"
	printf '\\data\\\nngram 1=x\n' >junk.arpa
	run_err 1 'junk.arpa:2: .*not an "ngram N=count" line' score -m junk.arpa "$M/test.tok"
}

@test "train --ngram: error paths" {
	printf 'a b\na <s> b\n' >bos.tok
	run_err 1 'bos.tok:2: the reserved token' train --ngram 2 -o x.arpa bos.tok
	[ ! -e x.arpa ]
	printf 'a b a\n' >tiny.tok
	run_err 1 'discounts' train --ngram 3 -o x.arpa tiny.tok
	train -q --ngram 3 --discount-fallback -o x.arpa tiny.tok
	run_err 2 'must not decrease' train --ngram 3 --prune 0,2,1 "$M/train.tok"
	run_err 2 'cannot be pruned' train --ngram 3 --prune 1 "$M/train.tok"
	run_err 2 'need --ngram' train --prune 0,1 -o m.bin "$M/train.tok"
	run_err 2 '--memory' train --ngram 3 --memory lots "$M/train.tok"
	run_err 2 '--ngram' train --ngram 9 "$M/train.tok"
	run_err 1 'nope.tok' train --ngram 2 nope.tok
	# the options of gradient training mean nothing to counting: refused,
	# not ignored, and nothing written
	run_err 2 '^train: --optim: not for n-gram estimation \(--ngram\)$' train --ngram 3 --optim adam -o y.arpa "$M/train.tok"
	run_err 2 '^train: --hidden: not for n-gram estimation' train --hidden 7 --ngram 3 -o y.arpa "$M/train.tok"
	run_err 2 '^train: --seed: not for n-gram estimation' train --ngram 3 -s 4 -o y.arpa "$M/train.tok"
	run_err 2 '^train: --task: not for n-gram estimation' train --ngram 3 --task next -o y.arpa "$M/train.tok"
	run_err 2 '^train: --lr-decay: not for n-gram estimation' train --ngram 3 --lr-decay 0.5 -o y.arpa "$M/train.tok"
	[ ! -e y.arpa ]
	# its own options still go together
	train -q --ngram 3 --prune 0,1 --memory 64M --discount-fallback -o y.arpa "$M/train.tok"
	[ -s y.arpa ]
}

@test "IRSTLM interop: the same total log-probability both ways (compile-lm --eval)" {
	[ -x "$IRST/compile-lm" ] || skip "IRSTLM is not installed ($IRST)"
	export IRSTLM=${IRST%/bin}
	"$IRST/add-start-end.sh" <"$M/train.tok" >train.se
	"$IRST/add-start-end.sh" <"$M/test.tok" >test.se
	"$IRST/tlm" -tr=train.se -n=3 -lm=msb -o=irst.arpa >/dev/null 2>&1
	for lm in irst.arpa "$M/lm.arpa"; do
		v=$(sed -n 's/^ngram *1= *//p' "$lm")
		theirs=$("$IRST/compile-lm" "$lm" --eval=test.se --dub=$((v + 1)) --debug=1 2>&1 | grep -a 'logPr=' | tail -n 1 | sed 's/.*logPr=//')
		# add-start-end.sh makes a blank line <s> </s>, which IRSTLM
		# scores; score skips blank lines unless told (score(1))
		ours=$(score -m "$lm" --base 10 --blank-lines score "$M/test.tok" 2>&1 >/dev/null | sed -n 's/.*logprob (base 10): \([-0-9.]*\) .*/\1/p')
		echo "$lm: IRSTLM $theirs, llrnn $ours"
		awk -v a="$theirs" -v b="$ours" 'BEGIN { d = (a - b) / a; if (d < 0) d = -d; exit !(a < 0 && d <= 1e-4) }'
	done
}
