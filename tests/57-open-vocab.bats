#!/usr/bin/env bats
# 57-open-vocab.bats - open-vocabulary scoring, the spelling side (issue
# 14): featurize --spelling puts the spelling model and lambda in the
# stream, train copies them into the model unchanged, and the error
# paths.  The library side (round trips, the open background's mass) is
# tests/unit/test_openbg.c.  Data: the UD French slice (300 training
# sentences, tiny networks).

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	ud_slice "$d"
	featurize --top 50 --spelling 4 -o "$d/sp.fz" "$d/train.tok" 2>"$d/fz.err"
	train -q $TINY --epochs 1 -s 3 -o "$d/sp.llrnn" "$d/sp.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

@test "featurize --spelling: the stream carries the character n-gram and lambda = (n1 + n_unk) / N" {
	[ "$(meta "$D/sp.fz" spell.order)" = 4 ]
	tar tf "$D/sp.fz" >list
	grep -qx 'spell/vocab' list
	grep -qx 'spell/4/logp.npy' list
	# the members come after logb and before the ids
	[ "$(grep -n -x -e logb.npy -e spell/vocab -e ids/000000.npy list | cut -d: -f2 | tr '\n' ' ')" = "logb.npy spell/vocab ids/000000.npy " ]
	# lambda from the counts, independently: the types seen once over
	# every token and </s>
	vocab "$D/train.tok" >v.tsv
	read -r n1 N < <(awk -F '\t' '$1 != "</s>" && $2 == 1 { n1++ } { N += $2 } END { print n1, N }' v.tsv)
	[ "$(meta "$D/sp.fz" spell.n1)" = "$n1" ]
	[ "$(meta "$D/sp.fz" spell.n_unk)" = 0 ]
	[ "$(meta "$D/sp.fz" spell.events)" = "$N" ]
	[ "$(meta "$D/sp.fz" spell.types)" = "$(awk -F '\t' '$1 != "</s>"' v.tsv | wc -l)" ]
	awk -v l="$(meta "$D/sp.fz" spell.lambda)" -v n1="$n1" -v N="$N" 'BEGIN { d = l - n1 / N; exit !(d < 1e-12 && d > -1e-12) }'
	# the summary line says them
	grep -q "^featurize: spelling model: order 4 on [0-9]* types, [0-9]* character n-grams; lambda [0-9.]* = ($n1 + 0) / $N; p_spell outside the vocabulary 0\.[0-9]*$" "$D/fz.err"
	m=$(meta "$D/sp.fz" spell.mass_outside)
	awk -v m="$m" 'BEGIN { exit !(m > 0 && m < 1) }'
}

@test "featurize: no spelling model unless asked" {
	featurize --top 50 -o plain.fz "$D/train.tok" 2>err
	! tar tf plain.fz | grep -q '^spell/'
	! tar xOf plain.fz meta | grep -q '^spell\.'
	! grep -q 'spelling' err
}

@test "train: the model carries the spelling model byte for byte" {
	[ "$(meta "$D/sp.llrnn" spell.lambda)" = "$(meta "$D/sp.fz" spell.lambda)" ]
	[ "$(meta "$D/sp.llrnn" spell.estimator)" = "good-turing (n1 + n_unk) / N" ]
	tar tf "$D/sp.fz" | grep '^spell/' >want
	[ "$(wc -l <want)" -ge 8 ]
	tar tf "$D/sp.llrnn" | grep '^spell/' >got
	cmp want got
	while read -r m; do
		cmp <(tar xOf "$D/sp.fz" "$m") <(tar xOf "$D/sp.llrnn" "$m")
	done <want
	# and the model still scores
	run --separate-stderr score -m "$D/sp.llrnn" "$D/valid.tok"
	assert_success
	[ "${#lines[@]}" -eq 60 ]
}

@test "featurize --spelling with --vocab: the corpus's tokens outside it are n_unk, its types outside it train the spelling model; from stdin the file's <unk> count and types" {
	vocab "$D/train.tok" >v.tsv
	read -r n1 N < <(awk -F '\t' '$1 != "</s>" && $2 == 1 { n1++ } { N += $2 } END { print n1, N }' v.tsv)
	{ grep -v '^</s>' v.tsv | awk -F '\t' '$2 >= 2'; printf '</s>\t300\n<unk>\t1700\n'; } >cut.tsv
	# a file: read again, the words seen once are the tokens outside
	featurize --vocab cut.tsv --top 50 --spelling 3 -o cut.fz "$D/train.tok" 2>err
	[ "$(meta cut.fz spell.n1)" = 0 ]
	[ "$(meta cut.fz spell.n_unk)" = "$n1" ]
	[ "$(meta cut.fz spell.events)" = "$N" ]
	! grep -q 'lambda is its floor' err
	# every type of the corpus trains the spelling model, those the
	# vocabulary dropped too: the character n-gram of the full vocabulary
	# (the same n-gram counts and probabilities; the characters' ids may
	# differ)
	[ "$(meta cut.fz spell.types)" = "$(meta "$D/sp.fz" spell.types)" ]
	featurize --vocab cut.tsv --top 50 --spelling 4 -o cut4.fz "$D/train.tok" 2>/dev/null
	for k in 1 2 3 4; do [ "$(meta cut4.fz spell.ngram.$k)" = "$(meta "$D/sp.fz" spell.ngram.$k)" ]; done
	spell_ngram "$D/sp.fz" "$PWD/full.bin"
	spell_ngram "$PWD/cut4.fz" "$PWD/cut.bin"
	tr ' ' '\n' <"$D/valid.tok" | sort -u | head -n 300 | LC_ALL=C.UTF-8 sed 's/./& /g; s/ $//' >spelled
	score -q -m full.bin spelled | cut -f1 >a
	score -q -m cut.bin spelled | cut -f1 >b
	[ "$(wc -l <a)" -eq 300 ]
	paste a b | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-4) { print NR ": " $0; bad = 1 } } END { exit bad }'
	# standard input: the file's counts, <unk>'s line included
	featurize --vocab cut.tsv --top 50 --spelling 3 -o cut2.fz <"$D/train.tok" 2>err
	[ "$(meta cut2.fz spell.n_unk)" = 1700 ]
	[ "$(meta cut2.fz spell.events)" = "$(awk -F '\t' '{ N += $2 } END { print N }' cut.tsv)" ]
	# only the file's types with a count (the corpus is read once)
	[ "$(meta cut2.fz spell.types)" = "$(grep -v -e '^</s>' -e '^<unk>' cut.tsv | wc -l)" ]
	# and without that line, lambda falls to its floor, with a warning
	grep -v '^<unk>' cut.tsv >nounk.tsv
	featurize --vocab nounk.tsv --top 50 --spelling 3 -o nounk.fz <"$D/train.tok" 2>err
	grep -q '^featurize: <stdin>: --spelling: no type seen once and no token outside the vocabulary: lambda is its floor 1/' err
	N2=$(meta nounk.fz spell.events)
	awk -v l="$(meta nounk.fz spell.lambda)" -v N="$N2" 'BEGIN { d = l - 1 / N; exit !(d < 1e-12 && d > -1e-12) }'
}

@test "featurize --spelling: usage errors" {
	run_err 2 'featurize: .*--spelling' featurize --spelling 0 "$D/train.tok"
	run_err 2 'featurize: .*--spelling' featurize --spelling 9 "$D/train.tok"
	run_err 2 'featurize: .*--spelling' featurize --spelling x "$D/train.tok"
	run_err 2 'featurize: --spelling: not with --dump' featurize --spelling 3 --dump "$D/train.tok"
}

@test "train, score: a stream or model whose spelling model is damaged is refused, naming it" {
	mkdir x && tar xf "$D/sp.fz" -C x
	# without checksum=crc32c the re-made archive reads as one from
	# before checksums (tar drops their pax headers)
	sed -i -e 's/^spell\.lambda=.*/spell.lambda=1.5/' -e '/^checksum=/d' x/meta
	tar --format=pax -cf bad.fz -C x $(tar tf "$D/sp.fz")
	run_err 1 "train: .*bad.fz: .*meta: spell.lambda: '1.5' is not a number in \(0, 1\)" train -q $TINY -o m.llrnn bad.fz
	[ ! -e m.llrnn ]
	mkdir y && tar xf "$D/sp.llrnn" -C y
	sed -i '/^checksum=/d' y/meta
	tar --format=pax -cf cut.llrnn -C y $(tar tf "$D/sp.llrnn" | grep -v '^spell/4/logp')
	run_err 1 'score: .*cut.llrnn: .*spell' score -m cut.llrnn "$D/valid.tok"
}

# ------------------------------------------------ score: open vocabulary

# The softmax-plus-spelling baseline: a softmax RNN on the words seen
# twice or more (so <unk> is trained) and a character 4-gram.
base_model() {
	if [ ! -e "$D/base.llrnn" ]; then
		vocab --min-count 2 "$D/train.tok" >"$D/v2.tsv"
		featurize --vocab "$D/v2.tsv" --spelling 4 -o "$D/base.fz" "$D/train.tok" 2>/dev/null
		train -q --output softmax $TINY --epochs 1 -s 3 -o "$D/base.llrnn" "$D/base.fz"
	fi
}

@test "score: an OOV word gets p(<unk> | K) p_spell(w) / (1 - S_V), the n-gram scorer's p_spell checked" {
	base_model
	score -m "$D/base.llrnn" --closed --per-token "$D/valid.tok" >closed 2>/dev/null
	score -m "$D/base.llrnn" --per-token "$D/valid.tok" >open 2>/dev/null
	spell_ngram "$D/base.llrnn" "$PWD/spell.bin"
	# token by token: the same tokens; in-vocabulary ones (and </s>)
	# unchanged; the others are the OOVs, one line each: "word<TAB>closed<TAB>open"
	paste closed open | awk -F '\t' '{
		n = NF / 2
		if ($2 != $(n + 2) || $3 != $(n + 3)) { print "counts differ at line " NR > "/dev/stderr"; exit 1 }
		d = 0
		for (i = 4; i <= n; i++) {
			a = $i; b = $(n + i); ka = a; kb = b
			sub(/=[^=]*$/, "", ka); sub(/=[^=]*$/, "", kb)
			if (ka != kb) { print "tokens differ at line " NR > "/dev/stderr"; exit 1 }
			va = substr(a, length(ka) + 2); vb = substr(b, length(kb) + 2)
			if (va != vb) { d++; print ka "\t" va "\t" vb > "oov" }
		}
		if (d != $3) { print "line " NR ": " d " tokens changed, " $3 " OOVs" > "/dev/stderr"; exit 1 }
	}'
	[ "$(wc -l <oov)" -gt 20 ]
	cut -f1 oov | LC_ALL=C.UTF-8 sed 's/./& /g; s/ $//' >spelled
	score -m spell.bin spelled >spell.lp 2>/dev/null
	out=$(tar xOf "$D/base.llrnn" meta | sed -n 's/^spell\.mass_outside=//p')
	# only the words whose every character the spelling model saw (an
	# unseen one costs a share the n-gram scorer does not add)
	paste oov spell.lp | awk -F '\t' -v out="$out" '
		$6 == 0 { n++; want = $2 + $4 - log(out); d = $3 - want; if (d < 0) d = -d
			if (d > 3e-4) { print $1 ": open " $3 ", want " want > "/dev/stderr"; bad++ } }
		END { print n " OOV words checked" > "/dev/stderr"; exit !(n > 20 && !bad) }'
}

@test "score: the open summary: nats per token, the OOV tokens' share, bits per character" {
	base_model
	run --separate-stderr score -m "$D/base.llrnn" "$D/valid.tok"
	assert_success
	printf '%s\n' "$output" >lines
	L=$(awk -F '\t' '{ s += $1 } END { printf "%.4f", s }' lines)
	T=$(awk -F '\t' '{ s += $2 } END { print s }' lines)
	O=$(awk -F '\t' '{ s += $3 } END { print s }' lines)
	C=$(LC_ALL=C.UTF-8 wc -m <"$D/valid.tok")
	echo "$stderr" | grep -q '^score: open vocabulary: OOV words scored as p(<unk> | K) p_spell(w) / (1 - S_V), 1 - S_V = 0\.[0-9]*$'
	npt=$(echo "$stderr" | sed -n "s/^score: nats per token: \([0-9.]*\) over $T tokens (words + <\/s>)$/\1/p")
	awk -v a="$npt" -v L="$L" -v T="$T" 'BEGIN { d = a + L / T; exit !(d < 1e-3 && d > -1e-3) }'
	share=$(awk -v O="$O" -v T="$T" 'BEGIN { printf "%.2f", 100 * O / T }')
	echo "$stderr" | grep -q "^score: OOV tokens: $O, $share% of the tokens, [0-9.]*% of the nats, [0-9.]* nats per OOV token$"
	bpc=$(echo "$stderr" | sed -n "s/^score: bits per character: \([0-9.]*\) over $C characters (code points of the words + 1 a word)$/\1/p")
	awk -v a="$bpc" -v L="$L" -v C="$C" 'BEGIN { d = a + L / log(2) / C; exit !(a > 0 && d < 1e-3 && d > -1e-3) }'
	# the figures with OOVs are over all strings and say so; ppl leaves
	# the OOVs (words outside the vocabulary) out, as SRILM would
	echo "$stderr" | grep -q "^score: logprob (base e): -[0-9.]* over $T tokens (words + </s>, OOVs scored by their spelling)$"
	echo "$stderr" | grep -q "^score: perplexity (words + </s>, OOVs scored by their spelling): "
	npo=$(echo "$stderr" | sed -n 's/^score: OOV tokens: .*, \([0-9.]*\) nats per OOV token$/\1/p')
	ppl=$(echo "$stderr" | sed -n 's/^score: ppl (words - OOVs - zeroprobs + <\/s>, as SRILM): //p')
	awk -v p="$ppl" -v L="$L" -v T="$T" -v O="$O" -v x="$npo" 'BEGIN { want = exp(-(L + x * O) / (T - O)); d = p / want - 1
		exit !(O > 0 && d < 1e-3 && d > -1e-3) }'
	# closed scoring says none of it
	score -m "$D/base.llrnn" --closed "$D/valid.tok" 2>err >/dev/null
	! grep -q -e 'nats per token' -e 'open vocabulary' err
	grep -q '(words + </s>, OOVs scored as <unk>)$' err
}

@test "score: without a spelling model nothing changes; --closed scores as before" {
	base_model
	featurize --vocab "$D/v2.tsv" -o plain.fz "$D/train.tok" 2>/dev/null
	train -q --output softmax $TINY --epochs 1 -s 3 -o plain.llrnn plain.fz
	score -m plain.llrnn --per-token "$D/valid.tok" >a 2>/dev/null
	score -m plain.llrnn --closed --per-token "$D/valid.tok" >b 2>/dev/null
	cmp a b
	# the same network with and without a spelling model scores alike
	# when closed
	score -m "$D/base.llrnn" --closed --per-token "$D/valid.tok" >c 2>/dev/null
	cmp a c
}

@test "score: random valid UTF-8 and a 100,000-character word never give -inf or nan" {
	base_model
	LC_ALL=C awk -v seed=7 -v lines=150 -f "$BATS_TEST_DIRNAME/fixtures/score/random-utf8.awk" >rnd.txt
	iconv -f UTF-8 -t UTF-8 rnd.txt >/dev/null
	LC_ALL=C awk 'BEGIN { s = ""; for (i = 0; i < 100000; i++) s = s "\xc3\xa9"; print "le " s " ." }' >long.txt
	for f in rnd.txt long.txt; do
		for mode in --open --closed; do
			score -m "$D/base.llrnn" $mode --per-token $f >out 2>err
			[ "$(wc -l <out)" -eq "$(wc -l <$f)" ]
			! grep -q -i -e inf -e nan out
			! grep -q -i -e '-inf' -e nan err
			score -m "$D/base.llrnn" $mode --json --per-token $f >out 2>/dev/null
			! grep -q -e null -e nan out
		done
	done
	# the long word costs about its length in characters, finitely
	lp=$(score -q -m "$D/base.llrnn" long.txt | cut -f1)
	awk -v l="$lp" 'BEGIN { exit !(l < -10000 && l > -10000000) }'
}

@test "score --open: refused without a spelling model, with an n-gram, or with --closed" {
	base_model
	featurize --vocab "$D/v2.tsv" -o plain.fz "$D/train.tok" 2>/dev/null
	train -q --output softmax $TINY --epochs 1 -o plain.llrnn plain.fz
	run_err 1 '^score: plain.llrnn: --open: the model has no spelling model \(featurize --spelling N makes one\)$' \
		score -m plain.llrnn --open "$D/valid.tok"
	train -q --ngram 2 -o lm.arpa "$D/train.tok"
	run_err 1 '^score: lm.arpa: --open: the model has no spelling model \(an n-gram model\)$' score -m lm.arpa --open "$D/valid.tok"
	run_err 2 '^score: --open and --closed exclude each other' score -m "$D/base.llrnn" --open --closed "$D/valid.tok"
}

@test "score(1) EXAMPLES: the softmax-plus-spelling baseline runs as written (tiny sizes)" {
	cp "$D/train.tok" train.tok
	cp "$D/valid.tok" test.tok
	vocab --min-count 2 train.tok >vocab.tsv
	featurize --vocab vocab.tsv --spelling 5 -o open.feat train.tok 2>/dev/null
	train -q $TINY --epochs 1 --output softmax -o open.llrnn open.feat
	run --separate-stderr score -m open.llrnn --per-token test.tok
	assert_success
	echo "$stderr" | grep -q '^score: bits per character: '
	! echo "$output" | grep -q '<unk>'
}

@test "open-vocab.mk: a tiny run writes the table: every corpus and model, figures from score's own" {
	skip_sanitized "the pipeline's table (92 s under ASan); featurize --spelling, train and score --check-norm run under it in this file's other tests and 58-open-features.bats, the character LSTM in 45-chars-tree.bats"
	# spelling order 3 and 3000 norm-check draws: with the pipeline's
	# order 5 and 30000 draws this one test took 270 s of the plain suite
	# and more than 600 s under ASan, most of CI's critical path
	knobs=(W=w RESULTS=res BIN="$TOP/bin" DATA="$UD" ARCHIVE="$BROWN" BROWN_TRAIN=3 EMBED=8 HIDDEN=8 EPOCHS=1
		MAXTIME=2m THREADS=1 TOP=50 NORM_SAMPLES=3000 SPELL=3 HUNSPELL_ud-french= HUNSPELL_brown=)
	make -s -f "$TOP/pipelines/open-vocab.mk" "${knobs[@]}" >make.log 2>&1 || { cat make.log; false; }
	[ "$(head -n 1 res/open-vocab.tsv)" = "$(printf 'corpus\tmodel\tnats_per_token\toov_nats_per_token\tbits_per_char\tcheck_norm')" ]
	[ "$(tail -n +2 res/open-vocab.tsv | cut -f1,2 | tr '\t\n' ': ')" = "ud-french:ll-open ud-french:rnn-spell ud-french:char-lstm brown:ll-open brown:rnn-spell brown:char-lstm " ]
	# numbers where due: no OOV column for the character model; the
	# norm check a total mass near 1
	awk -F '\t' 'NR > 1 { if ($3 !~ /^[0-9]+\.[0-9]+$/ || $5 !~ /^[0-9]+\.[0-9]+$/ || $6 !~ /^[01]\.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$/) exit 1
		if (($2 == "char-lstm") != ($4 == "")) exit 1
		if ($6 < 0.9 || $6 > 1.1) exit 1 }' res/open-vocab.tsv
	# the word models: score's nats per token, bits per character and
	# total mass; the LL-RNN scored through its features
	for c in ud-french brown; do
		for m in ll-open rnn-spell; do
			row=$(grep "^$c	$m	" res/open-vocab.tsv)
			log=w/$c/$m.lp.log
			[ "$(echo "$row" | cut -f3)" = "$(sed -n 's/^score: nats per token: \([0-9.]*\) .*/\1/p' $log)" ]
			[ "$(echo "$row" | cut -f5)" = "$(sed -n 's/^score: bits per character: \([0-9.]*\) .*/\1/p' $log)" ]
			[ "$(echo "$row" | cut -f6)" = "$(sed -n 's/^score: norm check: total mass \([0-9.]*\) at the position furthest from 1$/\1/p' $log)" ]
		done
		grep -q '^score: open vocabulary (LL-RNN): lambda ' w/$c/ll-open.lp.log
		# ll-open's norm check: exact, its draws checking rows, in the md
		rows=$(sed -n 's/^score: norm check: \(the rows of 3000 strings drawn outside the vocabulary and the lists: 0 differ from their class.s\)$/\1/p' w/$c/ll-open.lp.log)
		[ -n "$rows" ]
		grep -A 8 "^$c ll-open, the norm check" res/open-vocab.md | grep -qxF "    $rows"
		grep -q '^featurize: signature masses: [0-9]* signatures, every string outside the vocabulary summed exactly' w/$c/ll-open.fz.log
		awk -F '\t' -v c=$c '$1 == c && $2 == "ll-open" { e = $6 - 1; exit !(e < 1e-6 && e > -1e-6) }' res/open-vocab.tsv
		# the OOV tokens: types not in the training text
		n=$(awk 'FNR == NR { seen[$1] = 1; next } { for (i = 1; i <= NF; i++) if (!($i in seen)) o++ } END { print o + 0 }' \
			w/$c/train.types w/$c/test.tok)
		grep -q "^- $c rnn-spell: [0-9]* tokens, $n OOV" res/open-vocab.md
		grep -q "^- $c ll-open: [0-9]* tokens, $n OOV" res/open-vocab.md
		# the bars line, from the table
		grep -q "^- $c: all tokens $(grep "^$c	ll-open	" res/open-vocab.tsv | cut -f3) against $(grep "^$c	rnn-spell	" res/open-vocab.tsv | cut -f3) nats/token" res/open-vocab.md
	done
	# ll-open's features: the training annotations, ortho, suffixes, OOV:@oov
	grep -q '^featurize: .* features (top 52, conllu [0-9]*, ortho 13, suffix [0-9]*, oov 1)' w/ud-french/ll-open.fz.log
	grep -q '^featurize: .* features (top 52, tagged [0-9]*, ortho 13, suffix [0-9]*, oov 1)' w/brown/ll-open.fz.log
	# the paper's example: both sentences by both models, their margins
	grep -q "^| ud-french | ll-open | " res/open-vocab.md
	for m in ll-open rnn-spell; do
		read -r a b < <(score -q -m w/ud-french/$m.model w/ud-french/paper.tok | cut -f1 | paste -sd' ')
		grep -q "^| $m | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a - b }') |$" res/open-vocab.md
	done
	grep -q "^ll-open's margin is -*[0-9.]* nats wider than rnn-spell's (the bar: 3).  In the training text: 4817: 0 training type(s); zorglub: 0 training type(s).$" res/open-vocab.md
	# nothing to redo
	make -q -f "$TOP/pipelines/open-vocab.mk" "${knobs[@]}"
	# hand-written notes (NOTES) end the md
	[ -z "$(grep -x '## Notes' res/open-vocab.md)" ]
	printf 'A remark on the run.\n' >res/open-vocab-notes.md
	make -s -f "$TOP/pipelines/open-vocab.mk" "${knobs[@]}" >make.log 2>&1 || { cat make.log; false; }
	[ "$(tail -n 3 res/open-vocab.md)" = "$(printf '## Notes\n\nA remark on the run.')" ]
}
