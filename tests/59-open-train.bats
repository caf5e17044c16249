#!/usr/bin/env bats
# 59-open-train.bats - training an open-vocabulary LL-RNN (issue 14):
# featurize --vocab --spelling writes the training words outside the
# vocabulary as V + s, s their signature (the signature masses hold the
# corpus's types outside the vocabulary exactly), counts them in the
# features' columns, and train trains the distribution score scores: its
# validation loss is score's nats per token.  A softmax trains those
# words as <unk>.  The library side (the stratified signature masses, the
# open output's loss and gradient) is tests/unit/test_opensig.c.  Data:
# the UD French slice (300 training sentences, tiny networks).

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	ud_slice "$d"
	vocab --min-count 2 "$d/train.tok" >"$d/cut.tsv"
	featurize --vocab "$d/cut.tsv" --top 50 --ortho --suffix 2 --spelling 3 --signature-samples 20000 \
		-o "$d/open.fz" "$d/train.tok" 2>"$d/open.err"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

# The stream's ids, one a line.
ids() {
	/usr/bin/python3 - "$1" <<'EOF'
import io, sys, tarfile
import numpy as np
t = tarfile.open(sys.argv[1])
ids = [np.load(io.BytesIO(t.extractfile(m).read()), allow_pickle=False)
       for m in t.getmembers() if m.name.startswith("ids/")]
print("\n".join(str(int(i)) for i in np.concatenate(ids)))
EOF
}

@test "featurize --vocab --spelling: the words outside the vocabulary are written as V + their signature" {
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy not installed"
	# the tokens and types the cut vocabulary leaves out: the hapaxes
	read -r n1 <<<"$(vocab "$D/train.tok" | awk -F '\t' '$1 != "</s>" && $2 == 1 { n++ } END { print n }')"
	[ "$n1" -gt 100 ]
	V=$(meta "$D/open.fz" vocab_size)
	S=$(meta "$D/open.fz" sig.count)
	[ "$(meta "$D/open.fz" sig.known)" = "$n1" ]
	ids "$D/open.fz" >ids
	# every hapax token as a signature id, none as <unk>, all in range
	[ "$(awk -v V="$V" '$1 >= V' ids | wc -l)" = "$n1" ]
	awk -v V="$V" -v S="$S" '$1 < 0 || $1 >= V + S { exit 1 }' ids
	unk=$(tar xOf "$D/open.fz" vocab | grep -nx '<unk>' | cut -d: -f1)
	[ "$(grep -cx "$((unk - 1))" ids)" = 0 ]
	grep -q "^featurize: [0-9]* tokens in 300 sentences, $n1 unknown ($n1 as their signature)" "$D/open.err"
	grep -q "^featurize: signature masses: $S signatures from 20000 strings drawn outside the vocabulary and $n1 types of the corpus outside it\$" "$D/open.err"
	# without --spelling they are <unk>, as before
	featurize --vocab "$D/cut.tsv" --top 50 --ortho --suffix 2 -o closed.fz "$D/train.tok" 2>err
	ids closed.fz >cids
	[ "$(grep -cx "$((unk - 1))" cids)" = "$n1" ]
	awk -v V="$V" '$1 >= V { exit 1 }' cids
	# so the two streams differ in exactly those positions
	[ "$(paste ids cids | awk '$1 != $2' | wc -l)" = "$n1" ]
}

@test "featurize --vocab --spelling: a feature only the words outside the vocabulary have is kept" {
	printf 'le chat dort\nle chat mange\nle zorglubx dort\n' >t.tok
	printf 'le\t3\nchat\t2\ndort\t2\n</s>\t3\n' >v.tsv
	featurize --vocab v.tsv --top 0 --suffix 2 --spelling 2 -o o.fz t.tok 2>/dev/null
	# without --spelling the columns are the vocabulary's alone; with it
	# those of the types outside it (mange, zorglubx) join them, and
	# OOV:@oov, which only they have
	featurize --vocab v.tsv --top 0 --suffix 2 -o c.fz t.tok 2>/dev/null
	tar xOf o.fz features | sort >with
	tar xOf c.fz features | sort >without
	[ "$(comm -23 with without | paste -sd ' ')" = 'OOV:@oov SUF:bx$ SUF:ge$ SUF:x$' ]
	[ -z "$(comm -13 with without)" ]
	featurize --vocab v.tsv --top 0 --suffix 2 --spelling 2 --no-oov-features -o n.fz t.tok 2>/dev/null
	tar xOf n.fz features | sort >no
	[ "$(comm -23 no without | paste -sd ' ')" = 'SUF:bx$ SUF:ge$ SUF:x$' ]
}

@test "train: an open stream trains the open model; its validation loss is score's nats per token" {
	train $TINY --epochs 1 -s 3 --valid "$D/valid.tok" -o m.llrnn "$D/open.fz" 2>err
	n1=$(meta "$D/open.fz" sig.known)
	grep -q "^train: open vocabulary: $(meta "$D/open.fz" sig.count) signatures, lambda 0\.[0-9]*; [0-9]* training tokens outside the vocabulary, each as its signature$" err
	[ -n "$(meta m.llrnn open_training)" ]
	best=$(sed -n 's/.*best valid \([0-9.]*\) at epoch 1;.*/\1/p' err)
	[ -n "$best" ]
	run --separate-stderr score -m m.llrnn "$D/valid.tok"
	assert_success
	read -r L T < <(echo "$stderr" | sed -n 's/^score: logprob (base e): \([-0-9.]*\) over \([0-9]*\) tokens.*/\1 \2/p')
	echo "valid $best, score $L / $T"
	# every validation token scored, the words outside the vocabulary by
	# their own rows and spellings, as score does
	awk -v b="$best" -v L="$L" -v T="$T" 'BEGIN { d = b + L / T; exit !(T > 1000 && d < 6e-4 && d > -6e-4) }'
}

@test "train: the library alone (llr_rnnlm_fresh, llr_lm_open_*, tests/api/train-model.c) writes the tool's open model byte for byte" {
	API="$TOP/build/tests/api/train-model"
	[ -x "$API" ] || { echo "build/tests/api/train-model not built (make builds it)" >&2; return 1; }
	train --hidden 16 --embed 16 --layers 1 --threads 1 -q --epochs 1 --valid "$D/valid.tok" -o tool.llrnn "$D/open.fz"
	# the program sets the OpenBLAS kernels the tools pick, as an embedding
	# program does (llrnn(1), ENVIRONMENT): training's bits depend on them
	OPENBLAS_CORETYPE=$(blas_core) run "$API" lm api.llrnn "$D/open.fz" 1 "$D/valid.tok"
	assert_success
	[ -n "$(meta api.llrnn open_bias_init)" ]
	cmp tool.llrnn api.llrnn
	run "$API" lm x.llrnn "$D/open.fz" 1 nonexistent.tok
	assert_failure 1
	assert_output --partial "train-model: nonexistent.tok"
}

@test "train: a softmax or classes output, or --closed, on an open stream trains the words outside the vocabulary as <unk>" {
	train $TINY --output softmax --epochs 1 -s 3 -o s.llrnn "$D/open.fz" 2>err
	grep -q "^train: $(meta "$D/open.fz" sig.known) training tokens outside the vocabulary trained as <unk> (not a log-linear output)$" err
	[ -z "$(meta s.llrnn open_training)" ]
	# a classes output too, which counts the words before training
	train $TINY --output classes --epochs 1 -s 3 -o k.llrnn "$D/open.fz" 2>err
	grep -q "^train: $(meta "$D/open.fz" sig.known) training tokens outside the vocabulary trained as <unk> (not a log-linear output)$" err
	# an LL-RNN with --closed likewise
	train $TINY --closed --epochs 1 -s 3 -o l.llrnn "$D/open.fz" 2>err
	grep -q "^train: $(meta "$D/open.fz" sig.known) training tokens outside the vocabulary trained as <unk> (--closed)$" err
	[ -z "$(meta l.llrnn open_training)" ]
	# and learns what the stream with them as <unk> teaches (featurize
	# reads standard input once: no types outside, no signatures of them)
	featurize --vocab "$D/cut.tsv" --top 50 --ortho --suffix 2 --spelling 3 --signature-samples 20000 -o c.fz <"$D/train.tok" 2>/dev/null
	train $TINY --output softmax --epochs 1 -s 3 -o c.llrnn c.fz 2>/dev/null
	score -q --closed -m s.llrnn "$D/valid.tok" >a
	score -q --closed -m c.llrnn "$D/valid.tok" >b
	cmp a b
}

@test "train: open training starts the output bias at the context-free fit (--no-bias-fit: the --init scheme's); not on --resume or --closed" {
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy not installed"
	train $TINY --epochs 0 -s 3 -o f.llrnn "$D/open.fz" 2>err
	line=$(grep '^train: open vocabulary: output bias fitted context-free (300 Adam steps): mean log-likelihood ' err)
	read -r before after < <(echo "$line" | sed -n 's/.*log-likelihood \([-0-9.]*\) -> \([-0-9.]*\), gradient norm .*/\1 \2/p')
	echo "$before -> $after"
	awk -v a="$before" -v b="$after" 'BEGIN { exit !(a < 0 && b > a + 0.001) }'
	[[ "$(meta f.llrnn open_bias_init)" == "fit: 300 Adam steps, mean log-likelihood "*" over "*" targets" ]]
	train $TINY --epochs 0 -s 3 --no-bias-fit -o z.llrnn "$D/open.fz" 2>err
	[ -z "$(grep 'bias fitted' err)" ]
	[ -z "$(meta z.llrnn open_bias_init)" ]
	# the same network but for the output bias
	for t in embed out/w lstm0/wx; do
		cmp <(tar xOf f.llrnn "params/$t.npy") <(tar xOf z.llrnn "params/$t.npy")
	done
	! cmp -s <(tar xOf f.llrnn params/out/b.npy) <(tar xOf z.llrnn params/out/b.npy) || false
	# a resumed model keeps its bias; --closed trains no open model to fit
	train --resume f.llrnn --epochs 1 -o r.llrnn "$D/open.fz" 2>err
	[ -z "$(grep 'bias fitted' err)" ]
	train $TINY --closed --epochs 0 -s 3 -o c.llrnn "$D/open.fz" 2>err
	[ -z "$(grep 'bias fitted' err)" ]
	[ -z "$(meta c.llrnn open_bias_init)" ]
}

@test "featurize --lexicon-scope vocab: the words outside the vocabulary are featurized by their spelling alone" {
	printf 'le chat dort\nle chat dort\nle chien mange\n' >t.tok
	printf 'chat\tPOS:NOUN Gender:Masc\nchien\tPOS:NOUN animal\nloup\tPOS:NOUN animal\n' >l.lex
	printf 'le\t3\nchat\t2\ndort\t2\n</s>\t3\n' >v.tsv
	# all (the default): chien, outside the vocabulary, brings its entry's
	# features to the columns, and the model keeps the entries beyond it
	featurize --vocab v.tsv --top 0 --lexicon l.lex --suffix 2 --spelling 2 -o all.fz t.tok 2>/dev/null
	tar xOf all.fz features | grep -qx animal
	[ "$(tar xOf all.fz any/words | sort | paste -sd ' ')" = 'chat chien loup' ]
	# vocab: neither, so a training word outside it looks like a new word
	featurize --vocab v.tsv --top 0 --lexicon l.lex --suffix 2 --spelling 2 --lexicon-scope vocab -o voc.fz t.tok 2>/dev/null
	[ -z "$(tar xOf voc.fz features | grep -x animal)" ]
	tar xOf voc.fz features | grep -qx POS:NOUN
	[ "$(tar xOf voc.fz any/words | paste -sd ' ')" = chat ]
	# --lexicon-scope all is the default, byte for byte
	featurize --vocab v.tsv --top 0 --lexicon l.lex --suffix 2 --spelling 2 --lexicon-scope all -o all2.fz t.tok 2>/dev/null
	cmp all.fz all2.fz
	run_err 2 "lexicon-scope: want vocab or all, got 'some'" featurize --lexicon-scope some t.tok
	run_err 2 'lexicon-scope vocab: not with --vocab-from corpus\+lexicon' \
		featurize --lexicon l.lex --vocab-from corpus+lexicon --lexicon-scope vocab t.tok
}
