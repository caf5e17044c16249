#!/usr/bin/env bats
# The log-linear (maximum-entropy) language model (train --context N,
# family loglm; issue 50): training with n-gram, skip and bag features,
# with the softmax output and the log-linear one over word features
# (--output loglinear: tags, orthographic classes, suffixes), score and
# gen round trips (gen's log-probabilities are score's; beam search;
# features; the norm check), --resume to the byte of the uninterrupted
# model, train(1)'s EXAMPLES, and the bad inputs (orders, hash sizes,
# penalties, outputs, a stream without word features, options of other
# families, a resumed model's fixed options, a context longer than the
# corpus's sentences).  Tiny models on 200 sentences of the UD French
# slice.

bats_require_minimum_version 1.5.0
load test_helper

SMALL="--hash-size 65536 -q"

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -250 >"$m/all.tok"
	head -200 "$m/all.tok" >"$m/train.tok"
	tail -50 "$m/all.tok" >"$m/valid.tok"
	featurize --top 1000 "$m/train.tok" >"$m/plain" 2>/dev/null
	featurize --top 50 --conllu "$UD/fr_sequoia-ud-dev.conllu.gz" -l --ortho --suffix 2 \
		"$m/train.tok" >"$m/feats" 2>/dev/null
	train $SMALL --context 3 --skip 3 --bag --l2 1e-5 --epochs 3 -s 1 --valid "$m/valid.tok" -o "$m/ll.bin" "$m/plain"
	train $SMALL --context 2 --optim sgd --lr 0.5 --l1 1e-4 --epochs 2 -s 1 -o "$m/bi.bin" "$m/plain"
	# the same features, softmax and log-linear outputs, on the stream with word features
	train $SMALL --context 3 --skip 2 --bag --epochs 3 -s 1 --valid "$m/valid.tok" -o "$m/fsm.bin" "$m/feats"
	train $SMALL --context 3 --skip 2 --bag --epochs 3 -s 1 --valid "$m/valid.tok" --output loglinear -o "$m/flo.bin" "$m/feats"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "train --context: the model file (family loglm, its features, params bias and theta)" {
	[ "$(meta "$M/ll.bin" family)" = loglm ]
	[ "$(meta "$M/ll.bin" order)" = 3 ]
	[ "$(meta "$M/ll.bin" skip)" = 3 ]
	[ "$(meta "$M/ll.bin" bag)" = 1 ]
	[ "$(meta "$M/ll.bin" hash_size)" = 65536 ]
	[ "$(meta "$M/ll.bin" l2)" = 1e-05 ]
	[ "$(meta "$M/ll.bin" optim)" = rmsprop ]
	[ "$(meta "$M/ll.bin" stopped)" = epochs ]
	[ "$(meta "$M/bi.bin" optim)" = sgd ]
	[ "$(meta "$M/bi.bin" l1)" = 0.0001 ]
	[ "$(meta "$M/ll.bin" output)" = softmax ]
	tar tf "$M/ll.bin" | grep '^params/' >list
	printf 'params/%s.npy\n' bias theta | diff - list
	# the validation loss fell, epoch after epoch
	train -q --context 3 --hash-size 65536 --epochs 3 --valid "$M/valid.tok" --log log.tsv -o x.bin "$M/plain"
	awk -F'\t' 'NR > 2 && !($5 < prev) { exit 1 } NR > 1 { prev = $5 }' log.tsv
}

@test "train --context --output loglinear: the model file (output, params alpha); the word features help" {
	[ "$(meta "$M/flo.bin" family)" = loglm ]
	[ "$(meta "$M/flo.bin" output)" = loglinear ]
	[ "$(meta "$M/fsm.bin" output)" = softmax ]
	tar tf "$M/flo.bin" | grep '^params/' >list
	printf 'params/%s.npy\n' bias theta alpha | diff - list
	# n_params: bias V, theta and alpha H each
	local V
	V=$(meta "$M/flo.bin" vocab_size)
	[ "$(meta "$M/flo.bin" n_params)" -eq $((V + 2 * 65536)) ]
	[ "$(meta "$M/fsm.bin" n_params)" -eq $((V + 65536)) ]
	# the same seed, features and epochs: the log-linear output's
	# validation loss is below the softmax's (words the stream's lexicon
	# knows, seen in no training sentence, reach it through their tags,
	# classes and suffixes)
	awk -v l="$(meta "$M/flo.bin" valid_logppl)" -v s="$(meta "$M/fsm.bin" valid_logppl)" 'BEGIN { exit !(l < s) }'
	# train says what it trains
	run train --context 2 --hash-size 4096 --epochs 1 --output loglinear -o x.bin "$M/feats"
	assert_success
	assert_output --partial "loglinear output over $(meta "$M/flo.bin" n_features) features"
}

@test "score: one line per sentence, finite; a sentence's log p is the sum of its tokens'; the norm holds" {
	for m in ll bi flo; do
		score -m "$M/$m.bin" "$M/valid.tok" >out 2>err
		[ "$(wc -l <out)" -eq 50 ]
		run grep -E 'inf|nan' out
		assert_failure
		grep -q '^score: perplexity' err
		score -q -m "$M/$m.bin" --per-token "$M/valid.tok" | head -5 >pt
		awk -F'\t' '{ s = 0; for (i = 4; i <= NF; i++) { split($i, a, "="); s += a[length(a)] } d = s - $1; if (d < -0.01 || d > 0.01) exit 1 }' pt
		# </s> is the last token of every line
		awk -F'\t' '$NF !~ /^<\/s>=/ { exit 1 }' pt
		score -q -m "$M/$m.bin" --check-norm "$M/valid.tok" >/dev/null 2>err || { cat err; false; }
	done
	# an unseen word is <unk>, flagged as an OOV
	printf 'le xyzzyq de la\n' >oov.tok
	score -q -m "$M/ll.bin" oov.tok >o
	[ "$(cut -f3 o)" = 1 ]
	# the bag makes a word's context the whole sentence before it
	printf 'le chat de la maison\n' >a.tok
	printf 'un chat de la maison\n' >b.tok
	pa=$(score -q -m "$M/ll.bin" --per-token a.tok | awk -F'\t' '{ print $NF }')
	pb=$(score -q -m "$M/ll.bin" --per-token b.tok | awk -F'\t' '{ print $NF }')
	[ "$pa" != "$pb" ]
}

@test "gen: sampling, greedy and beam search; the log-probabilities are score's" {
	for m in ll bi flo; do
		gen -m "$M/$m.bin" -n 20 -s 3 --logprob --max-len 200 >out
		[ "$(wc -l <out)" -eq 20 ]
		gen -m "$M/$m.bin" -n 5 -s 3 --max-len 200 | cmp - <(head -5 out | cut -f1)
		awk -F'\t' '$1 != "" && split($1, w, " ") < 200' out >kept
		cut -f1 kept >sents
		cut -f2 kept >want
		score -q -m "$M/$m.bin" sents | cut -f1 | diff - want
	done
	# greedy and beam search, with either output
	for m in ll flo; do
		gen -m "$M/$m.bin" --greedy --logprob -p "le" --max-len 30 >g
		[ "$(wc -l <g)" -eq 1 ]
		gen -m "$M/$m.bin" --beam 4 --nbest 3 --logprob --max-len 200 >b
		[ "$(wc -l <b)" -eq 3 ]
		# the finished ones (under --max-len), at least one
		awk -F'\t' 'split($1, w, " ") < 200' b >bk
		[ -s bk ]
		cut -f1 bk >bs
		score -q -m "$M/$m.bin" bs | cut -f1 | diff - <(cut -f2 bk)
	done
	gen -m "$M/ll.bin" --show-features -n 1 -s 2 --max-len 3 | grep -q 'TOP:'
}

@test "llrnn.Model (Python) scores a log-linear model as score does" {
	python_module_env || return 1
	head -20 "$M/valid.tok" >in.tok
	score -q -m "$M/ll.bin" --per-token in.tok >want
	/usr/bin/python3 "$TOP/tests/api/score-lines.py" "$M/ll.bin" <in.tok >got
	diff want got
	/usr/bin/python3 -c 'import llrnn, sys; m = llrnn.Model(sys.argv[1]); print(m.info.family, m.order)' "$M/bi.bin" >info
	[ "$(cat info)" = "loglm 2" ]
	/usr/bin/python3 -c 'import llrnn, sys; print(*(llrnn.Model(p).info.output for p in sys.argv[1:]))' "$M/bi.bin" "$M/flo.bin" >out
	[ "$(cat out)" = "softmax loglinear" ]
	score -q -m "$M/flo.bin" --per-token in.tok >want
	/usr/bin/python3 "$TOP/tests/api/score-lines.py" "$M/flo.bin" <in.tok >got
	diff want got
}

@test "train --context: --resume at an epoch end ends with the uninterrupted model" {
	local o="--context 3 --skip 2 --hash-size 4096 --l2 1e-4 --l1 1e-5"
	train -q $o --epochs 2 --valid "$M/valid.tok" -o part.bin "$M/plain"
	train -q $o --epochs 4 --valid "$M/valid.tok" -o full.bin "$M/plain"
	run train --resume part.bin --epochs 4 --valid "$M/valid.tok" "$M/plain"
	assert_success
	assert_output --partial "resuming at epoch 3"
	cmp full.bin part.bin
	# the same with SGD, whose update is row-sparse too
	train -q $o --optim sgd --epochs 1 -o p2.bin "$M/plain"
	train -q $o --optim sgd --epochs 3 -o f2.bin "$M/plain"
	train -q --resume p2.bin --epochs 3 "$M/plain"
	cmp f2.bin p2.bin
	# the log-linear output, its second ring row-sparse as the first
	o="$o --output loglinear"
	train -q $o --epochs 1 --valid "$M/valid.tok" -o p3.bin "$M/feats"
	train -q $o --epochs 3 --valid "$M/valid.tok" -o f3.bin "$M/feats"
	train -q --resume p3.bin --epochs 3 --valid "$M/valid.tok" "$M/feats"
	cmp f3.bin p3.bin
	train -q --resume p3.bin --output loglinear --epochs 4 --threads 2 --valid "$M/valid.tok" "$M/feats"
	[ "$(meta p3.bin output)" = loglinear ]
	[ "$(meta p3.bin epochs_done)" = 4 ]
}

@test "train --context: bad orders, hash sizes, penalties and options are refused, nothing written" {
	run_err 2 '^train: --context: 0 out of range' train --context 0 -o x.bin "$M/plain"
	run_err 2 '^train: --context: 17 out of range' train --context 17 -o x.bin "$M/plain"
	run_err 2 '^train: --context 1: no feature of the context' train --context 1 -o x.bin "$M/plain"
	run_err 2 '^train: --hash-size: 1000 is not a power of two' train --context 3 --hash-size 1000 -o x.bin "$M/plain"
	run_err 2 '^train: --hash-size: 32 out of range' train --context 3 --hash-size 32 -o x.bin "$M/plain"
	run_err 2 '^train: --l2: -1 out of range' train --context 3 --l2 -1 -o x.bin "$M/plain"
	run_err 2 "^train: --l1: not a number: 'x'" train --context 3 --l1 x -o x.bin "$M/plain"
	run_err 2 '^train: --skip: 99 out of range' train --context 3 --skip 99 -o x.bin "$M/plain"
	run_err 2 '^train: --skip: for the log-linear model' train --skip 2 -o x.bin "$M/plain"
	run_err 2 '^train: --bag: not for the feed-forward model' train --feedforward 3 --bag -o x.bin "$M/plain"
	run_err 2 '^train: --dropout: not for the log-linear model' train --context 3 --dropout 0.1 -o x.bin "$M/plain"
	run_err 2 '^train: --hidden: not for the log-linear model' train --context 3 --hidden 8 -o x.bin "$M/plain"
	run_err 2 '^train: --eps: for --optim rmsprop and adam' train --context 3 --optim sgd --eps 0.1 -o x.bin "$M/plain"
	run_err 2 "^train: --output: 'tree' is neither loglinear nor softmax \\(a log-linear LM has no tree" \
		train --context 3 --output tree -o x.bin "$M/plain"
	# the log-linear output needs word features
	featurize --top 100000 "$M/train.tok" >ids.fz 2>/dev/null
	run_err 1 '^train: ids.fz: --output loglinear: the stream has no word features' \
		train --context 3 --output loglinear -o x.bin ids.fz
	printf 'le chat dort\nil pleut\n' >short.tok
	featurize --top 10 short.tok >short.fz 2>/dev/null
	run_err 1 'short.fz: --context 6: a context of 5 words, but the longest sentence has 4 tokens' train -q --context 6 -o x.bin short.fz
	train -q --context 5 --hash-size 64 --epochs 1 -o short.bin short.fz
	# a resumed model's fixed options, and a stream it does not fit
	cp "$M/bi.bin" r.bin
	run_err 2 '^train: --context: the resumed model r.bin has order=2' train --context 3 --resume r.bin --epochs 9 "$M/plain"
	run_err 2 '^train: --bag: the resumed model r.bin has bag=0' train --bag --resume r.bin --epochs 9 "$M/plain"
	run_err 2 '^train: --hash-size: the resumed model r.bin has hash_size=65536' train --hash-size 4096 --resume r.bin --epochs 9 "$M/plain"
	run_err 2 '^train: --output: the resumed model r.bin has output=softmax' train --output loglinear --resume r.bin --epochs 9 "$M/plain"
	run_err 1 '^train: r.bin: does not fit short.fz: ' train --resume r.bin --epochs 9 short.fz
	cmp r.bin "$M/bi.bin"
	[ ! -e x.bin ]
}

@test "train(1) EXAMPLES: a log-linear trigram model, its perplexity and three sentences" {
	cp "$M/train.tok" train.tok
	cp "$M/valid.tok" valid.tok
	featurize --top 2500 train.tok >train.fz 2>/dev/null
	train --context 3 --skip 3 --bag --hash-size 262144 --l2 1e-4 \
		--epochs 3 --valid valid.tok -o ll.bin train.fz 2>err
	grep -q 'train: stopped' err
	score -m ll.bin valid.tok >/dev/null 2>err
	grep -q '^score: perplexity' err
	run gen -m ll.bin -n 3 -s 1
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	mandoc -Tlint -W warning "$TOP/man/train.1" "$TOP/man/llrnn-model.5"
}

@test "train --context --distributed: two ranks follow the single process (validation loss), either output" {
	need_mpi
	local o="--context 3 --skip 2 --hash-size 4096 --epochs 2 -s 1 --valid $M/valid.tok -q"
	# the softmax output, and the log-linear one (its second ring updated densely too)
	for run in "$M/plain" "--output loglinear $M/feats"; do
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 train --distributed $o -o dist.bin $run
		train $o -o one.bin $run
		awk -v a="$(meta dist.bin valid_logppl)" -v b="$(meta one.bin valid_logppl)" 'BEGIN { d = a - b; exit !(d < 1e-4 && d > -1e-4) }'
	done
	[ "$(meta dist.bin output)" = loglinear ]
}
