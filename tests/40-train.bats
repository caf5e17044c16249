#!/usr/bin/env bats
# 40-train.bats - train(1): learning on real data (the UD French slice,
# 300 sentences, tiny networks), determinism, interruption and --resume, early
# stopping, the --log curve, divergence, and every error path.

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -n 300 > "$d/train.tok"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -n 60 > "$d/valid.tok"
	featurize --top 50 "$d/train.tok" > "$d/train.fz" 2>/dev/null
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	FZ="$BATS_FILE_TMPDIR/train.fz"
	VALID="$BATS_FILE_TMPDIR/valid.tok"
	TRAIN_TOK="$BATS_FILE_TMPDIR/train.tok"
}

# a copy of archive $1 as $2 with only the members named after it, in
# order; tar drops the members' checksums, so meta loses its checksum key
# (llrnn-tensor(5): the copy loads as a file from before checksums)
rebuild() {
	local from=$1 to=$2
	shift 2
	rm -rf x && mkdir x && tar xf "$from" -C x && sed -i '/^checksum=/d' x/meta && tar --format=pax -cf "$to" -C x "$@"
}

# wait up to 60 s for training process $2 to write its first checkpoint $1;
# if it never does, stop the process and fail
wait_for_file() {
	local i
	for i in $(seq 1200); do
		[ -f "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	[ -f "$1" ] && return 0
	kill -KILL "$2" 2>/dev/null || true
	echo "no checkpoint $1 within 60 s (or train $2 ended first)" >&2
	return 1
}

@test "train -h prints the usage on stdout" {
	run train -h
	assert_success
	assert_line --index 0 --partial "usage: train"
	run train --help
	assert_success
}

@test "train: a tiny model trains to a lower validation loss (log TSV)" {
	run train $TINY --lr 0.01 --epochs 3 --valid "$VALID" --log curve.tsv -o m.bin "$FZ"
	assert_success
	assert_output --regexp "epoch 3 train [0-9.]+ valid [0-9.]+"
	assert_file_exists m.bin
	run head -n 1 curve.tsv
	assert_output "$(printf 'epoch\tstep\tseconds\ttrain\tvalid\tlr')"
	[ "$(wc -l < curve.tsv)" -eq 5 ]
	# every row has 6 columns; epoch 0 is the untrained model
	awk -F'\t' 'NF != 6 { exit 1 }' curve.tsv
	awk -F'\t' 'NR == 2 && !($1 == 0 && $2 == 0 && $4 == "nan") { exit 1 }' curve.tsv
	awk -F'\t' 'NR == 5 && !($1 == 3 && $2 == 30 && $6 == 0.01) { exit 1 }' curve.tsv
	v0=$(awk -F'\t' 'NR == 2 { print $5 }' curve.tsv)
	best=$(meta m.bin valid_logppl)
	awk -v a="$v0" -v b="$best" 'BEGIN { exit !(b < a - 0.1) }'
	# the train loss falls too
	awk -F'\t' 'NR == 3 { t1 = $4 } NR == 5 { exit !($4 < t1) }' curve.tsv
	[ "$(meta m.bin kind)" = model ]
	[ "$(meta m.bin output)" = loglinear ]
	[ "$(meta m.bin epochs_done)" = 3 ]
	[ "$(meta m.bin stopped)" = epochs ]
	[ "$(meta m.bin vocab_size)" = "$(tar xOf "$FZ" meta | sed -n 's/^vocab_size=//p')" ]
}

@test "train: the softmax baseline from the same stream" {
	run train -q $TINY --output softmax --epochs 1 -o s.bin "$FZ"
	assert_success
	assert_output ""
	[ "$(meta s.bin output)" = softmax ]
	tar tf s.bin | grep -qx 'params/out/w.npy'
	# V x H output weights: 2102 rows of 16 floats
	V=$(meta s.bin vocab_size)
	[ "$V" -gt 1000 ]
	tar xOf s.bin params/out/w.npy | head -c 128 | grep -aq "'shape': ($V, 16)"
	H=$(( $(meta s.bin n_params) ))
	[ "$H" -gt $(( V * 16 * 2 )) ]
}

@test "train: same seed and --threads 1 give byte-identical models; another seed does not" {
	train -q $TINY --epochs 2 --valid "$VALID" -s 7 -o a.bin "$FZ"
	train -q $TINY --epochs 2 --valid "$VALID" -s 7 -o b.bin < "$FZ"
	cmp a.bin b.bin
	train -q $TINY --epochs 2 --valid "$VALID" -s 8 -o c.bin "$FZ"
	run ! cmp -s a.bin c.bin
}

@test "train: SIGINT saves and exits 130; --resume ends with the uninterrupted model" {
	# far too many epochs to end before the signal, whatever the load
	train --progress 1 $TINY --epochs 100000 -o part.bin "$FZ" 2> err.txt &
	pid=$!
	# interrupt once the first epoch has been saved
	wait_for_file part.bin "$pid"
	kill -INT $pid
	status=0
	wait $pid || status=$?
	[ "$status" -eq 130 ]
	grep -q '^train: interrupted: epoch [0-9]* batch [0-9]*: saved part.bin; continue with --resume part.bin' err.txt
	[ "$(meta part.bin stopped)" = interrupted ]
	tar xOf part.bin state/info | grep -q '^epoch=[1-9]'
	e=$(tar xOf part.bin state/info | sed -n 's/^epoch=//p')
	# the uninterrupted run, to two epochs past the interruption
	n=$((e + 2))
	train -q $TINY --epochs "$n" -o full.bin "$FZ"
	run train --threads 1 --resume part.bin --epochs "$n" "$FZ"
	assert_success
	assert_line --index 0 --partial "resuming at epoch $((e + 1))"
	refute_output --partial "epoch 1 train"
	assert_output --partial "epoch $n train"
	[ "$(meta part.bin epochs_done)" = "$n" ]
	cmp full.bin part.bin
}

@test "train: SIGTERM saves and exits 143" {
	train -q $TINY --epochs 100000 -o t.bin "$FZ" &
	pid=$!
	wait_for_file t.bin "$pid"
	kill -TERM $pid
	status=0
	wait $pid || status=$?
	[ "$status" -eq 143 ]
	[ "$(meta t.bin stopped)" = interrupted ]
	# the saved model loads and resumes
	run train -q --resume t.bin --epochs 1 "$FZ"
	assert_success
}

@test "train: one run at a time on a model; a second -o or --resume of it stops, naming the first" {
	train -q $TINY --epochs 100000 -o t.bin "$FZ" &
	pid=$!
	wait_for_file t.bin "$pid"
	[ "$(cat t.bin.lock)" = "$pid" ]
	cp t.bin before.bin
	for args in "--resume t.bin" "$TINY --epochs 1 -o t.bin"; do
		run --separate-stderr train -q $args "$FZ"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "$stderr" = "train: t.bin is being trained by another train (pid $pid, holding t.bin.lock); wait for it or stop it first" ]
	done
	# the first run goes on; stopped, it saves and lets go of the lock
	kill -TERM $pid
	wait $pid || true
	[ "$(meta t.bin stopped)" = interrupted ]
	[ ! -e t.bin.lock ]
	run train -q --resume t.bin --epochs 1 "$FZ"
	assert_success
	[ ! -e t.bin.lock ]
	# a run killed outright leaves the file, unlocked: the next run takes it
	train -q $TINY --epochs 100000 -o k.bin "$FZ" &
	pid=$!
	wait_for_file k.bin "$pid"
	kill -KILL $pid
	wait $pid || true
	[ -e k.bin.lock ]
	run train -q --resume k.bin --epochs 1 "$FZ"
	assert_success
	[ ! -e k.bin.lock ]
}

@test "train: early stopping with --patience keeps the best epoch" {
	run train $TINY --hidden 32 --embed 32 --lr 0.05 --patience 1 --epochs 30 --valid "$VALID" --log l.tsv -o p.bin "$FZ"
	assert_success
	assert_output --partial "stopped (patience)"
	[ "$(meta p.bin stopped)" = patience ]
	done_=$(meta p.bin epochs_done)
	best=$(meta p.bin best_epoch)
	[ "$done_" -lt 30 ]
	[ "$best" -eq $((done_ - 1)) ]
	[ "$(wc -l < l.tsv)" -eq $((done_ + 2)) ]
	# params hold the best epoch, state/weights the last one
	tar tf p.bin | grep -qx 'state/weights.npy'
	# resuming a finished run has nothing to do and rewrites the same model
	cp p.bin p0.bin
	run train --resume p.bin --valid "$VALID" -o p2.bin "$FZ"
	assert_success
	assert_output --partial "stopped (patience) after epoch $done_"
	refute_output --partial "train: epoch"
	cmp p.bin p0.bin
	cmp p.bin p2.bin
	# a larger --patience continues the run
	run train --resume p.bin --patience 5 --valid "$VALID" --epochs $((done_ + 1)) "$FZ"
	assert_success
	assert_output --partial "train: epoch $((done_ + 1)) train"
}

@test "train: --max-tokens stops after that many tokens and reports tokens/s" {
	run train $TINY --epochs 100 --max-tokens 500 -o mk.bin "$FZ"
	assert_success
	assert_output --regexp "train: max-tokens: [0-9]+ training tokens in [0-9.]+ s: [0-9]+ tokens/s"
	[ "$(meta mk.bin stopped)" = max-tokens ]
	n=$(echo "$output" | sed -n 's/.*max-tokens: \([0-9]*\) training tokens.*/\1/p')
	# stops at the first step that reaches 500 (a batch is well under 3500)
	[ "$n" -ge 500 ]
	[ "$n" -lt 4000 ]
	[ "$(meta mk.bin epochs_done)" -eq 0 ]
	# fewer tokens than an epoch means fewer steps than with more tokens
	run train $TINY --epochs 100 --max-tokens 2000 -q -o mk2.bin "$FZ"
	assert_success
	assert_output ""
	[ "$(meta mk2.bin steps)" -gt "$(meta mk.bin steps)" ]
	# the run resumes from there
	run train --resume mk.bin --epochs 1 -q "$FZ"
	assert_success
	[ "$(meta mk.bin epochs_done)" -eq 1 ]
}

@test "train: --max-tokens must be a positive integer" {
	run_err 2 '--max-tokens' train --max-tokens 0 -o m.bin "$FZ"
	run_err 2 '--max-tokens' train --max-tokens x -o m.bin "$FZ"
}

@test "train: --max-time stops mid-run and the model resumes" {
	run train $TINY --epochs 100000 --max-time 0.3 -o mt.bin "$FZ"
	assert_success
	assert_output --partial "max-time"
	[ "$(meta mt.bin stopped)" = max-time ]
	run train -q --resume mt.bin --epochs 1 "$FZ"
	assert_success
}

@test "train: SGD with the RNNLM schedule" {
	run train $TINY --optim sgd --epochs 30 --valid "$VALID" --log s.tsv -o sgd.bin "$FZ"
	assert_success
	[ "$(meta sgd.bin optim)" = sgd ]
	# the rate is halved before stopping (converged or patience)
	awk -F'\t' 'NR > 2 && $6 < 1 { h = 1 } END { exit !h }' s.tsv
}

@test "train --lr-decay: a stall restores the best weights and decays the rate; --resume goes on exactly" {
	S="--lr 0.01 --patience 10 --lr-decay 0.5"
	train $TINY -q $S --epochs 8 --valid "$VALID" --log d.tsv -o d.bin "$FZ"
	# the first epoch that did not beat the best by --min-improvement
	# (0.003); the next one ran at half its rate
	e=$(awk -F'\t' 'NR == 2 { b = $5 } NR > 2 { if ($5 > b - 0.003) { print $1; exit } b = $5 }' d.tsv)
	[ -n "$e" ]
	[ "$e" -lt 8 ]
	awk -F'\t' -v e="$e" '$1 == e { r = $6 } $1 == e + 1 { n = $6 } END { exit !(n > 0 && (n - r / 2) ^ 2 < 1e-10 * r * r) }' d.tsv
	[ "$(meta d.bin lr_decay)" = 0.5 ]
	# cut at that epoch: the best weights are back in the net (no
	# state/weights), one decay done; without the schedule the stalled
	# weights stay the current ones
	train $TINY -q $S --epochs "$e" --valid "$VALID" -o c.bin "$FZ"
	run -0 tar tf c.bin
	assert_line state/info
	refute_line --partial state/weights
	tar xOf c.bin state/info | grep -qx decays=1
	train $TINY -q --lr 0.01 --patience 10 --epochs "$e" --valid "$VALID" -o k.bin "$FZ"
	tar tf k.bin | grep -qx state/weights.npy
	# --resume after the decay, and from before it, ends with the
	# uninterrupted model
	train -q --threads 1 --resume c.bin --epochs 8 --valid "$VALID" "$FZ"
	cmp c.bin d.bin
	train $TINY -q $S --epochs 1 --valid "$VALID" -o c1.bin "$FZ"
	train -q --threads 1 --resume c1.bin --epochs 8 --valid "$VALID" "$FZ"
	cmp c1.bin d.bin
	# no decay left: the first stall stops training
	train $TINY -q $S --lr-decays 0 --epochs 8 --valid "$VALID" -o z.bin "$FZ"
	[ "$(meta z.bin stopped)" = converged ]
	[ "$(meta z.bin epochs_done)" = "$e" ]
	run_err 2 'lr-decay needs --valid' train $TINY --lr-decay 0.5 -o x.bin "$FZ"
	run_err 2 'lr-decays' train $TINY --lr-decay 0.5 --lr-decays -1 --valid "$VALID" -o x.bin "$FZ"
	run_err 2 'not for the discourse encoders' train --task order --features "$FZ" --lr-decay 0.5 -o x.bin
	[ ! -e x.bin ]
}

@test "train: progress lines every --progress steps when stderr is not a tty" {
	run train --progress 5 $TINY --epochs 1 -o m.bin "$FZ"
	assert_success
	assert_line --regexp '^train: epoch 1 step 5 batch 5/10 loss [0-9.]+ [0-9]+ tok/s ETA [0-9]+s run ETA [0-9]+s$'
	assert_line --regexp '^train: epoch 1 step 10 batch 10/10 .* ETA 0s run ETA 0s$'
	refute_line --regexp 'step (1|2|3|4|6) '
	assert_line --regexp '^train: epoch 1 train [0-9.]+ lr 0.001 '
}

@test "train: the run's ETA counts the epochs left, at most what is left of --max-time" {
	# 10 batches an epoch: at step 5 of 2000 epochs, 19995 batches to go
	# (--max-tokens ends the run there); the pace is measured, so compare
	# with the epoch's own ETA
	run train --progress 5 $TINY --epochs 2000 --max-tokens 3000 -o m.bin "$FZ"
	assert_success
	line=$(printf '%s\n' "${lines[@]}" | grep '^train: epoch 1 step 5 ')
	[[ $line =~ ETA\ ([0-9hms]+)\ run\ ETA\ ([0-9hms]+)$ ]]
	secs() { # 1h02m, 3m04s, 5s -> seconds
		local t=$1 s=0
		[[ $t =~ ([0-9]+)h ]] && s=$((s + 3600 * 10#${BASH_REMATCH[1]}))
		[[ $t =~ ([0-9]+)m ]] && s=$((s + 60 * 10#${BASH_REMATCH[1]}))
		[[ $t =~ ([0-9]+)s ]] && s=$((s + 10#${BASH_REMATCH[1]}))
		echo $s
	}
	epoch=$(secs "${BASH_REMATCH[1]}") run=$(secs "${BASH_REMATCH[2]}")
	[ "$run" -ge 1 ]
	[ "$run" -ge "$epoch" ]
	# --max-time bounds it: 1 hour of 20 million epochs (about 140 billion
	# tokens, more than an hour at any speed this model trains at)
	run train --progress 5 $TINY --epochs 20000000 --max-time 1h --max-tokens 3000 -o m.bin "$FZ"
	assert_success
	assert_line --regexp '^train: epoch 1 step 5 batch 5/10 .* run ETA (59m[0-9]{2}s|1h00m)$'
}

@test "train: divergence stops with status 1 and keeps the last good model" {
	train -q $TINY --optim sgd --epochs 1 -o d.bin "$FZ"
	cp d.bin d0.bin
	# Whether lr 1e30 overflows depends on the kernels' summation: with
	# OpenBLAS's generic ones (and its Haswell ones) the loss turns
	# infinite in the second epoch, with its SkylakeX ones it stays near
	# 1e30, finite, and the run is no divergence.  Prescott runs on any
	# x86-64.
	OPENBLAS_CORETYPE=Prescott run_err 1 'diverged; d.bin keeps the model of epoch 1' train -q --resume d.bin --lr 1e30 --clip 0 --epochs 3 "$FZ"
	cmp d.bin d0.bin
	OPENBLAS_CORETYPE=Prescott run_err 1 'diverged before the first epoch ended; no model written' train -q $TINY --optim sgd --lr 1e30 --clip 0 -o nan.bin "$FZ"
	assert_file_not_exists nan.bin
}

@test "train: --init torch (the default) draws weights the way PyTorch does; --init checks its value" {
	train $TINY --epochs 0 --init torch -o t.bin "$FZ" 2>/dev/null
	train $TINY --epochs 0 --init uniform -o u.bin "$FZ" 2>/dev/null
	train $TINY --epochs 0 -o d.bin "$FZ" 2>/dev/null
	[ "$(meta t.bin init)" = torch ]
	[ "$(meta u.bin init)" = uniform ]
	# the default is torch: the same model, byte for byte
	[ "$(meta d.bin init)" = torch ]
	cmp d.bin t.bin
	run cmp -s d.bin u.bin
	assert_failure
	run /usr/bin/python3 - t.bin u.bin <<'PY'
import io, sys, tarfile, numpy as np
def load(path, name):
    with tarfile.open(path) as t:
        return np.load(io.BytesIO(t.extractfile("params/" + name + ".npy").read()))
t, u = sys.argv[1], sys.argv[2]
e = load(t, "embed")
assert 0.8 < e.std() < 1.2, e.std()            # N(0, 1)
w = load(t, "lstm0/wx")
assert abs(w).max() <= 0.25 and w.std() > 0.1  # U(+-1/sqrt(16))
b = load(t, "lstm0/b")
assert abs(b).max() <= 0.5 and abs(b[16:32] - 1).max() > 0.4  # no forget bias 1
assert abs(load(u, "embed")).max() <= 0.08
assert (load(u, "lstm0/b")[16:32] == 1).all()
print("ok")
PY
	assert_success
	assert_output ok
	run_err 2 "--init: expected uniform or torch" train --init normal -o x.bin "$FZ"
}

@test "train: usage errors exit 2" {
	run_err 2 '-o model is required' train "$FZ"
	run_err 2 'unknown optimiser' train --optim lbfgs -o m.bin "$FZ"
	run_err 2 'is not loglinear, softmax, tree or classes' train --output dense -o m.bin "$FZ"
	run_err 2 '--lr' train --lr 0 -o m.bin "$FZ"
	run_err 2 '--hidden' train --hidden x -o m.bin "$FZ"
	run_err 2 '--max-time' train --max-time 5x -o m.bin "$FZ"
	run_err 2 'unknown option' train --frobnicate -o m.bin "$FZ"
	# an option of another family is refused, not ignored
	run_err 2 '^train: --features: for the discourse encoders only \(--task\)$' train --features "$FZ" -o m.bin "$FZ"
	run_err 2 '^train: --closed: not for the discourse encoders \(--task\)$' train --task all --closed -o m.bin p.tsv
	run_err 2 '^train: --attention: not for n-gram estimation \(--ngram\)$' train --ngram 3 --attention dot
	run_err 2 'must be a file' train -o - "$FZ"
}

@test "train: bad streams are clear errors with status 1" {
	rebuild "$FZ" noids.fz meta vocab features phi/indptr.npy phi/indices.npy phi/data.npy logb.npy
	run_err 1 '^train: noids.fz: no ids/ members: empty corpus' train -o m.bin noids.fz
	rebuild "$FZ" nologb.fz meta vocab features phi/indptr.npy phi/indices.npy phi/data.npy ids/000000.npy
	run_err 1 '^train: nologb.fz: member logb: expected here' train -o m.bin nologb.fz
	head -c 20000 "$FZ" > cut.fz
	run_err 1 '^train: cut.fz: .*[Tt]runcated' train -o m.bin cut.fz
	run_err 1 '^train: <stdin>: empty, not an llrnn tensor archive' train -o m.bin < /dev/null
	run_err 1 '^train: nope.fz: No such file' train -o m.bin nope.fz
	train -q $TINY --epochs 0 -o m0.bin "$FZ"
	run_err 1 "is a 'model' archive" train -o m.bin m0.bin
	assert_file_not_exists m.bin
}

@test "train: validation files without known words are errors" {
	echo "zzzq qqqz" > unk.tok
	run_err 1 '^train: unk.tok: no known word in the validation set' train -o m.bin --valid unk.tok "$FZ"
	: > empty.tok
	run_err 1 '^train: empty.tok: no validation sentence' train -o m.bin --valid empty.tok "$FZ"
	run_err 1 '^train: absent.tok: No such file' train -o m.bin --valid absent.tok "$FZ"
	assert_file_not_exists m.bin
}

@test "train: --resume checks the model against the stream and the options" {
	train -q $TINY --epochs 1 -o r.bin "$FZ"
	head -n 100 "$TRAIN_TOK" | featurize --top 20 > other.fz 2>/dev/null
	run_err 1 '^train: r.bin: does not fit other.fz: vocabularies differ' train --resume r.bin other.fz
	run_err 2 '^train: --hidden 32: the resumed model has hidden=16' train --resume r.bin --hidden 32 "$FZ"
	run_err 2 '^train: --optim adam: the resumed model has optim=rmsprop' train --resume r.bin --optim adam "$FZ"
	run_err 2 '^train: --dropout 0.2: the resumed model has dropout=0$' train --resume r.bin --dropout 0.2 "$FZ"
	# a seed is compared whole, not as a double (2^53 + 1 against 2^53)
	train -q $TINY --epochs 1 -s 9007199254740993 -o big.bin "$FZ"
	run_err 2 '^train: -s 9007199254740992: the resumed model has seed=9007199254740993$' train --resume big.bin -s 9007199254740992 "$FZ"
	run_err 1 '^train: absent.bin: No such file' train --resume absent.bin "$FZ"
	train -q $TINY --epochs 0 -o m0.bin "$FZ"
	# a model file truncated in its state part
	head -c $(( $(wc -c < r.bin) - 3000 )) r.bin > rcut.bin
	run_err 1 '^train: rcut.bin: .*[Tt]runcated' train --resume rcut.bin "$FZ"
}

@test "train --eps: RMSprop's and Adam's eps, in the meta and the state, replaced on --resume; SGD has none" {
	train -q $TINY --epochs 1 -o d.bin "$FZ"
	train -q $TINY --epochs 1 --eps 1e-8 -o e8.bin "$FZ"
	cmp d.bin e8.bin
	[ "$(meta d.bin eps)" = 1e-08 ]
	train -q $TINY --epochs 1 --eps 0.01 -o e2.bin "$FZ"
	[ "$(meta e2.bin eps)" = 0.01 ]
	tar xOf e2.bin state/info | grep -q '^optim_eps=0\.00999999'
	! cmp -s <(tar xOf d.bin params/out/w.npy) <(tar xOf e2.bin params/out/w.npy) || false
	train -q $TINY --epochs 1 --optim adam --eps 0.001 -o a.bin "$FZ"
	[ "$(meta a.bin eps)" = 0.001 ]
	# --resume keeps the model's, or replaces it
	train -q --resume a.bin --epochs 2 "$FZ"
	[ "$(meta a.bin eps)" = 0.001 ]
	train -q --resume e2.bin --epochs 2 --eps 0.0001 "$FZ"
	[ "$(meta e2.bin eps)" = 0.0001 ]
	tar xOf e2.bin state/info | grep -q '^optim_eps=9\.99999'
	# SGD has none
	run_err 2 '^train: --eps: for --optim rmsprop and adam' train $TINY --optim sgd --eps 0.001 --valid "$VALID" -o s.bin "$FZ"
	train -q $TINY --optim sgd --epochs 1 --valid "$VALID" -o sg.bin "$FZ"
	[ -z "$(meta sg.bin eps)" ]
	cp sg.bin sg0.bin
	run_err 2 '^train: --eps: the resumed model trains with SGD' train --resume sg.bin --eps 0.001 --valid "$VALID" "$FZ"
	cmp sg.bin sg0.bin
	train -q --resume sg.bin --epochs 2 --valid "$VALID" "$FZ"
	[ "$(meta sg.bin epochs_done)" = 2 ]
	[ -z "$(meta sg.bin eps)" ]
	for bad in 0 -1 2 nan x ''; do
		run_err 2 '^train: --eps' train $TINY --eps "$bad" -o b.bin "$FZ"
	done
	[ ! -e s.bin ]
	[ ! -e b.bin ]
}

@test "train: the man page examples run (tiny sizes)" {
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -n 200 > train.tok
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -n 40 > valid.tok
	featurize --top 2500 train.tok > train.fz 2>/dev/null
	train -q $TINY --epochs 2 --valid valid.tok --log curve.tsv -o model.bin train.fz
	[ "$(wc -l < curve.tsv)" -eq 4 ]
	train -q $TINY --output softmax --max-time 1h --epochs 1 --valid valid.tok \
		-o softmax.bin train.fz
	[ "$(meta softmax.bin output)" = softmax ]
	train -q --resume model.bin --epochs 3 --valid valid.tok train.fz
	[ "$(meta model.bin epochs_done)" = 3 ]
	[ "$(wc -l < curve.tsv)" -eq 4 ]
	tar tvf model.bin > /dev/null
	tar xOf model.bin meta | grep -qx 'kind=model'
	mandoc -Tlint -W warning "$TOP/man/train.1" "$TOP/man/llrnn-model.5"
}
