#!/usr/bin/env bats
# The feed-forward language model (train --feedforward N, family fflm;
# issue 50): training with both outputs and direct connections, score and
# gen round trips (gen's log-probabilities are score's; beam search;
# features), score --embed (the input table's rows), the Python module's numbers, --resume to the byte of the
# uninterrupted model, dropout (training only, kept and fixed on
# --resume), --distributed against one process, train(1)'s
# EXAMPLES, and the bad inputs (orders,
# outputs, streams without features, a stream that does not fit).  Tiny
# models on 200 sentences of the UD French slice.

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 8 --threads 1 -q"

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -250 >"$m/all.tok"
	head -200 "$m/all.tok" >"$m/train.tok"
	tail -50 "$m/all.tok" >"$m/valid.tok"
	featurize --top 50 --conllu "$UD/fr_sequoia-ud-dev.conllu.gz" -l --ortho --suffix 2 \
		"$m/train.tok" >"$m/feats" 2>/dev/null
	featurize --top 100000 "$m/train.tok" >"$m/plain" 2>/dev/null
	train $TINY --feedforward 3 --epochs 3 -s 1 --valid "$m/valid.tok" -o "$m/ll.bin" "$m/feats"
	train $TINY --feedforward 4 --direct --layers 2 --output softmax --epochs 3 -s 1 -o "$m/sm.bin" "$m/plain"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "train --feedforward: the model file (family fflm, its configuration, params in order)" {
	[ "$(meta "$M/ll.bin" family)" = fflm ]
	[ "$(meta "$M/ll.bin" order)" = 3 ]
	[ "$(meta "$M/ll.bin" output)" = loglinear ]
	[ "$(meta "$M/ll.bin" direct)" = 0 ]
	[ "$(meta "$M/ll.bin" stopped)" = epochs ]
	[ "$(meta "$M/sm.bin" output)" = softmax ]
	[ "$(meta "$M/sm.bin" layers)" = 2 ]
	tar tf "$M/sm.bin" | grep '^params/' >list
	printf 'params/%s.npy\n' embed bos hidden0/w hidden0/b hidden1/w hidden1/b direct/w out/w out/b | diff - list
	# the validation loss fell
	awk -F'\t' 'NR > 1 { v[NR] = $5 } END { exit !(v[NR] < v[2]) }' < <(train $TINY --feedforward 3 --epochs 2 --valid "$M/valid.tok" --log /dev/stdout -o x.bin "$M/feats")
}

@test "score: one line per sentence, finite; a sentence's log p is the sum of its tokens'" {
	for m in ll sm; do
		score -m "$M/$m.bin" "$M/valid.tok" >out 2>err
		[ "$(wc -l <out)" -eq 50 ]
		run grep -E 'inf|nan' out
		assert_failure
		grep -q '^score: perplexity' err
		score -q -m "$M/$m.bin" --per-token "$M/valid.tok" | head -5 >pt
		awk -F'\t' '{ s = 0; for (i = 4; i <= NF; i++) { split($i, a, "="); s += a[length(a)] } d = s - $1; if (d < -0.01 || d > 0.01) exit 1 }' pt
	done
	# --check-norm: the distributions sum to 1
	score -q -m "$M/sm.bin" --check-norm "$M/valid.tok" >/dev/null 2>err || { cat err; false; }
}

@test "gen: sampling, greedy and beam search; the log-probabilities are score's" {
	for m in ll sm; do
		gen -m "$M/$m.bin" -n 20 -s 3 --logprob --max-len 200 >out
		[ "$(wc -l <out)" -eq 20 ]
		gen -m "$M/$m.bin" -n 5 -s 3 --max-len 200 | cmp - <(head -5 out | cut -f1)
		# score skips blank lines, and adds </s> to a sentence cut at
		# --max-len: the others
		awk -F'\t' '$1 != "" && split($1, w, " ") < 200' out >kept
		cut -f1 kept >sents
		cut -f2 kept >want
		score -q -m "$M/$m.bin" sents | cut -f1 | diff - want
	done
	gen -m "$M/ll.bin" --greedy --logprob -p "le" --max-len 30 >g
	[ "$(wc -l <g)" -eq 1 ]
	gen -m "$M/ll.bin" --beam 4 --nbest 3 --logprob --max-len 30 >b
	[ "$(wc -l <b)" -eq 3 ]
	gen -m "$M/ll.bin" --show-features -n 1 -s 2 --max-len 3 | grep -q 'TOP:'
}

@test "score --embed: a word's vector is its row of the input table, a line's the mean of its words'" {
	# 20 words of the vocabulary, one a line, and an unseen one (<unk>'s row)
	tr ' ' '\n' <"$M/train.tok" | awk 'NF && !s[$0]++' | head -20 >words
	score --embed -m "$M/sm.bin" words >vec
	[ "$(wc -l <vec)" -eq 20 ]
	tar -xOf "$M/sm.bin" params/embed.npy >embed.npy
	# each vector a row of the table (an embedding, not bos or another layer),
	# distinct words distinct rows
	/usr/bin/python3 -c 'import numpy as n, sys
e = n.load("embed.npy"); v = n.loadtxt("vec", ndmin=2)
assert v.shape == (20, 8), v.shape
r = [int(n.argmin(abs(e - x).max(1))) for x in v]
assert all(abs(e[i] - x).max() < 1e-5 for i, x in zip(r, v)) and len(set(r)) == 20, r'
	# a line's vector: the mean of its words' (log-linear output: through psi)
	printf '%s %s\n%s\n%s\n' "$(sed -n 1p words)" "$(sed -n 2p words)" "$(sed -n 1p words)" "$(sed -n 2p words)" >two
	score --embed -m "$M/ll.bin" two >v2
	awk -F'\t' '{ for (i = 1; i <= NF; i++) x[NR, i] = $i } END { for (i = 1; i <= 8; i++) { d = x[1, i] - (x[2, i] + x[3, i]) / 2; if (d > 1e-5 || d < -1e-5) exit 1 } }' v2
	printf 'qqqunseenqqq\n<unk>\n' >unk
	score --embed -m "$M/sm.bin" unk >vu
	[ "$(sed -n 1p vu)" = "$(sed -n 2p vu)" ]
}

@test "llrnn.Model (Python) scores a feed-forward model as score does" {
	python_module_env || return 1
	head -20 "$M/valid.tok" >in.tok
	score -q -m "$M/ll.bin" --per-token in.tok >want
	/usr/bin/python3 "$TOP/tests/api/score-lines.py" "$M/ll.bin" <in.tok >got
	diff want got
	/usr/bin/python3 -c 'import llrnn, sys; m = llrnn.Model(sys.argv[1]); print(m.info.family, m.order)' "$M/sm.bin" >info
	[ "$(cat info)" = "fflm 4" ]
}

@test "train --feedforward: --resume after SIGINT, and at an epoch end, ends with the uninterrupted model" {
	local o="--feedforward 3 --hidden 16 --embed 8 --threads 1 --batch 32"
	train -q $o --epochs 2 --valid "$M/valid.tok" -o part.bin "$M/feats"
	train -q $o --epochs 4 --valid "$M/valid.tok" -o full.bin "$M/feats"
	run train --threads 1 --resume part.bin --epochs 4 --valid "$M/valid.tok" "$M/feats"
	assert_success
	assert_output --partial "resuming at epoch 3"
	cmp full.bin part.bin
	train --progress 1 $o --epochs 100000 -o int.bin "$M/feats" 2>err.txt &
	pid=$!
	for i in $(seq 1200); do [ -f int.bin ] && break; sleep 0.05; done
	sleep 0.2
	kill -INT $pid
	status=0
	wait $pid || status=$?
	[ "$status" -eq 130 ]
	grep -q 'saved int.bin; continue with --resume int.bin' err.txt
	e=$(tar xOf int.bin state/info | sed -n 's/^epoch=//p')
	n=$((e + 2))
	train -q $o --epochs "$n" -o full2.bin "$M/feats"
	train -q --threads 1 --resume int.bin --epochs "$n" "$M/feats"
	cmp full2.bin int.bin
}

@test "train --feedforward --dropout: in the meta, changes training only, fixed on --resume, resumes to the byte" {
	local o="--feedforward 3 --direct --hidden 16 --embed 8 --threads 1 --batch 32 -s 3"
	train -q $o --epochs 2 -o plain.bin "$M/feats"
	train -q $o --dropout 0.3 --epochs 2 -o drop.bin "$M/feats"
	[ "$(meta drop.bin dropout)" = 0.300000012 ]
	[ -z "$(meta plain.bin dropout)" ]
	# the masks change the weights; scoring is deterministic and needs no rescaling
	! cmp -s plain.bin drop.bin || false
	score -q -m drop.bin "$M/valid.tok" >a
	score -q -m drop.bin "$M/valid.tok" >b
	cmp a b
	run grep -E 'inf|nan' a
	assert_failure
	# the masks are drawn from the run's saved random state: a resumed run
	# ends with the uninterrupted model
	train -q $o --dropout 0.3 --epochs 1 -o part.bin "$M/feats"
	train -q --threads 1 --resume part.bin --epochs 2 "$M/feats"
	cmp drop.bin part.bin
	cp part.bin keep.bin
	run_err 2 '^train: --dropout 0.5: the resumed model has dropout=0.3' train --resume part.bin --dropout 0.5 --epochs 3 "$M/feats"
	cmp part.bin keep.bin
}

@test "train --feedforward --l2: one SGD step adds l2 w to the gradient of every weight; in the meta, fixed on --resume" {
	local o="--feedforward 3 --direct --hidden 16 --embed 8 --threads 1 --batch 32 -s 3 --optim sgd --lr 0.5 --max-tokens 32 -q"
	train $o -o plain.bin "$M/feats"
	train $o --l2 0.01 -o a.bin "$M/feats"
	train $o --l2 0.02 -o b.bin "$M/feats"
	[ "$(meta a.bin l2)" = 0.01 ]
	[ -z "$(meta plain.bin l2)" ]
	# SGD: w - lr (g + l2 w), so plain - a = lr 0.01 w0 and plain - b twice
	# that (the biases start at 0, so this step cannot tell whether they
	# are penalised: they move alike in all three)
	for m in plain a b; do
		mkdir "$m.d" && tar -xf "$m.bin" -C "$m.d" params
	done
	/usr/bin/python3 -c 'import numpy as n, glob, os
seen = set()
for f in sorted(glob.glob("plain.d/params/**/*.npy", recursive=True)):
    t = f[len("plain.d/params/"):-4]
    p, a, b = (n.load(m + ".d/params/" + t + ".npy").astype(n.float64) for m in ("plain", "a", "b"))
    d1, d2 = p - a, p - b
    if t.endswith("/b"):
        assert abs(d1).max() < 1e-7 and abs(d2).max() < 1e-7, t
    else:
        assert abs(d1).max() > 1e-6, t
        assert abs(d2 - 2 * d1).max() < 1e-6 + 1e-3 * abs(d1).max(), t
        w0 = d1 / (0.5 * 0.01)
        assert abs(w0).max() < 2, t
    seen.add(t)
assert {"embed", "bos", "hidden0/w", "hidden0/b", "direct/w", "out/w", "out/b"} <= seen, seen'
	train -q --feedforward 3 --hidden 16 --embed 8 --threads 1 -s 3 --l2 0.001 --epochs 1 -o part.bin "$M/feats"
	cp part.bin keep.bin
	run_err 2 '^train: --l2 0.01: the resumed model has l2=0.001' train --resume part.bin --l2 0.01 --epochs 2 "$M/feats"
	cmp part.bin keep.bin
	train -q --threads 1 --resume part.bin --l2 0.001 --epochs 2 "$M/feats"
	[ "$(meta part.bin l2)" = 0.001 ]
	run_err 2 '^train: --l2: ' train --feedforward 3 --l2 -1 -o x.bin "$M/feats"
}

@test "train --feedforward: bad orders, outputs and streams are refused, nothing written" {
	run_err 2 '^train: --feedforward: ' train --feedforward 0 -o x.bin "$M/feats"
	run_err 2 '^train: --feedforward: ' train --feedforward 65 -o x.bin "$M/feats"
	printf 'le chat dort\nil pleut\n' >short.tok
	featurize --top 10 short.tok >short.fz 2>/dev/null
	run_err 1 'short.fz: --feedforward 6: a context of 5 words, but the longest sentence has 4 tokens' train -q --feedforward 6 -o x.bin short.fz
	train -q --feedforward 5 --epochs 1 --hidden 4 --embed 4 -o short.bin short.fz
	run_err 2 'no tree or classes output' train --feedforward 3 --output tree -o x.bin "$M/feats"
	run_err 2 '^train: --direct: needs a hidden layer' train --feedforward 3 --direct --layers 0 -o x.bin "$M/feats"
	run_err 2 '^train: --dropout: ' train --feedforward 3 --dropout 0.99 -o x.bin "$M/feats"
	run_err 1 'plain: --output loglinear: the stream has no word features' train --feedforward 3 --output loglinear -o x.bin "$M/plain"
	# a model trained with psi features, resumed on a stream without them
	cp "$M/ll.bin" r.bin
	run_err 1 '^train: r.bin: does not fit .*plain: ' train --resume r.bin --epochs 9 "$M/plain"
	cmp r.bin "$M/ll.bin"
	run_err 2 '^train: --feedforward: the resumed model r.bin has order=3' train --feedforward 4 --resume r.bin --epochs 9 "$M/feats"
	[ ! -e x.bin ]
}

@test "train(1) EXAMPLES: a feed-forward 5-gram model, its perplexity and a beam search" {
	cp "$M/train.tok" train.tok
	cp "$M/valid.tok" valid.tok
	featurize --top 2500 train.tok >train.fz 2>/dev/null
	train --feedforward 5 --direct --embed 32 --hidden 64 --epochs 5 \
		--valid valid.tok -o ff.bin train.fz 2>err
	grep -q 'train: stopped' err
	score -m ff.bin valid.tok >/dev/null 2>err
	grep -q '^score: perplexity' err
	run gen -m ff.bin --beam 4
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	mandoc -Tlint -W warning "$TOP/man/train.1" "$TOP/man/llrnn-model.5"
}

@test "train --feedforward --distributed: two ranks follow the single process (validation loss); with dropout, resume to the byte" {
	need_mpi
	local o="--feedforward 3 --hidden 16 --embed 8 --epochs 2 -s 1 --valid $M/valid.tok -q"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 train --distributed --threads 1 $o -o dist.bin "$M/feats"
	train --threads 2 $o -o one.bin "$M/feats"
	awk -v a="$(meta dist.bin valid_logppl)" -v b="$(meta one.bin valid_logppl)" 'BEGIN { d = a - b; exit !(d < 1e-4 && d > -1e-4) }'
	# with dropout every rank draws its masks from its own seed, taken from
	# the state they share, so a resumed run ends with the uninterrupted one
	o="--feedforward 3 --hidden 16 --embed 8 --dropout 0.3 -s 1 -q"
	local mpi="mpirun --oversubscribe -np 2 train --distributed --threads 1"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $mpi $o --epochs 2 -o dfull.bin "$M/feats"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $mpi $o --epochs 1 -o dpart.bin "$M/feats"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $mpi -q --resume dpart.bin --epochs 2 "$M/feats"
	cmp dfull.bin dpart.bin
}
