#!/usr/bin/env bats
# 45-chars-tree.bats - the LSTM LM's character-aware input (train --input
# chars|word+chars) and its tree and class softmax outputs (--output
# tree|classes), on the UD French slice with tiny networks: the model
# file's members, exact normalisation in score --check-norm, unseen words
# read through their spelling in score and gen, threads and batches
# agreeing, the man page EXAMPLES, every error path of the options,
# --distributed training of these models (two ranks under mpirun), and
# the Python module (tests/api/score-lines.py, gen-lines.py) against
# score and gen on both kinds.

bats_require_minimum_version 1.5.0
load test_helper

CH="--char-embed 4 --char-filters 1:4,2:4,3:8"
TINY="--hidden 16 --embed 16 --layers 1 --threads 1 $CH"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -n 300 > "$d/train.tok"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -n 60 > "$d/valid.tok"
	featurize --top 50 "$d/train.tok" > "$d/train.fz" 2>/dev/null
	train -q $TINY --input chars --output tree --tree-update 2 --epochs 2 --valid "$d/valid.tok" -o "$d/ct.bin" "$d/train.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	FZ="$BATS_FILE_TMPDIR/train.fz"
	VALID="$BATS_FILE_TMPDIR/valid.tok"
	CT="$BATS_FILE_TMPDIR/ct.bin"
}

@test "train --input chars --output tree: the model file carries the characters and the tree" {
	[ "$(meta "$CT" output)" = tree ]
	[ "$(meta "$CT" input)" = chars ]
	[ "$(meta "$CT" char_widths)" = 1,2,3 ]
	[ "$(meta "$CT" char_filters)" = 4,4,8 ]
	[ "$(meta "$CT" highway)" = 1 ]
	[ "$(meta "$CT" tree_depth)" = 3 ]
	tar tf "$CT" > members
	grep -qx 'chars.npy' members
	grep -qx 'tree/group.npy' members
	grep -qx 'params/chars/embed.npy' members
	grep -qx 'params/highway0/w.npy' members
	grep -qx 'params/tree/words/w.npy' members
	! grep -q 'params/embed.npy' members
	! grep -q 'params/out/w.npy' members
	# the tree moved words away from the frequency order (--tree-update 2)
	python3 - "$CT" <<'PY'
import ast, struct, sys, tarfile
t = tarfile.open(sys.argv[1])
def npy_i32(name):
    b = t.extractfile(name).read()
    n = struct.unpack("<H", b[8:10])[0]
    hdr = ast.literal_eval(b[10:10 + n].decode())
    assert hdr["descr"] == "<i4", hdr
    return list(struct.unpack("<%di" % hdr["shape"][0], b[10 + n:]))
g = npy_i32("tree/group.npy")
meta = dict(l.split("=", 1) for l in t.extractfile("meta").read().decode().splitlines())
cap = int(meta["tree_cap"])
assert max(g.count(x) for x in set(g)) <= cap, "a group over capacity"
V = len(g)
G = int(meta["tree_arity"]) ** (int(meta["tree_depth"]) - 1)
per = -(-V // G)
assert sum(g[w] != w // per for w in range(V)) > 0, "the tree was never re-learned"
PY
}

@test "score: a tree and a class model sum to 1 at every position" {
	run score -m "$CT" --check-norm "$VALID"
	[ "$status" -eq 0 ]
	[[ "$output" =~ norm\ check:\ max\ \|sum\ p\ -\ 1\|\ =\ ([0-9.e+-]+),\ 0\ batch ]]
	python3 -c "import sys; assert float(sys.argv[1]) < 1e-5" "${BASH_REMATCH[1]}"
	train -q $TINY --input word+chars --output classes --classes 20 --epochs 1 -o cl.bin "$FZ"
	[ "$(meta cl.bin classes)" = 20 ]
	[ "$(meta cl.bin combine)" = concat ]
	score -q -m cl.bin --check-norm "$VALID" > /dev/null
}

@test "score: unseen words are read through their spelling" {
	# two sentences that differ only in an unseen word: a word model reads
	# both as <unk> (same log-probability of what follows), the character
	# model does not
	printf 'le zorglub est là\nle xqwvk est là\n' > in.tok
	score -q -m "$CT" --per-token in.tok > chars.out
	[ "$(sed -n 2p chars.out | cut -f3)" = 1 ]
	a=$(sed -n 1p chars.out | cut -f1) b=$(sed -n 2p chars.out | cut -f1)
	[ "$a" != "$b" ]
	train -q --hidden 16 --embed 16 --layers 1 --threads 1 --output tree --epochs 1 -o w.bin "$FZ"
	score -q -m w.bin in.tok > word.out
	[ "$(sed -n 1p word.out | cut -f1)" = "$(sed -n 2p word.out | cut -f1)" ]
}

@test "score: batches agree with line-at-a-time scoring (float rounding), and runs repeat exactly" {
	score -q -m "$CT" --per-token "$VALID" > one
	score -q -m "$CT" --per-token --batch 16 --threads 2 "$VALID" > many
	score -q -m "$CT" --per-token --batch 16 --threads 2 "$VALID" > again
	cmp many again
	python3 - <<'PY'
import re
a, b = open("one").read().split(), open("many").read().split()
assert len(a) == len(b) and len(a) > 1000
num = lambda x: float(re.sub(r".*=", "", x))
assert all(abs(num(x) - num(y)) < 2e-3 for x, y in zip(a, b))
PY
}

@test "train --combine sum and --output softmax with characters; resume keeps the tree" {
	train -q --hidden 16 --embed 16 --layers 1 --threads 1 --input word+chars --combine sum --char-filters 1:6,2:10 \
		--output tree --tree-depth 2 --tree-arity 8 --epochs 1 -o s.bin "$FZ"
	[ "$(meta s.bin combine)" = sum ]
	[ "$(meta s.bin tree_arity)" = 8 ]
	score -q -m s.bin --check-norm "$VALID" > /dev/null
	train -q --resume s.bin --epochs 2 "$FZ"
	[ "$(meta s.bin epochs_done)" = 2 ]
	train -q $TINY --input chars --output softmax --epochs 1 -o sm.bin "$FZ"
	score -q -m sm.bin --check-norm "$VALID" > /dev/null
}

@test "gen: a character-aware tree model's log-probabilities are score's" {
	gen -m "$CT" -p "le zorglub" -n 3 -s 5 --logprob > out.tsv
	[ "$(wc -l < out.tsv)" -eq 3 ]
	grep -q '^le zorglub' out.tsv
	cut -f1 out.tsv | score -q -m "$CT" --blank-lines score | cut -f1 > scores
	cut -f2 out.tsv > logprobs
	python3 - <<'PY'
a = [float(x) for x in open("scores")]
b = [float(x) for x in open("logprobs")]
assert len(a) == 3 and all(abs(x - y) < 1e-3 for x, y in zip(a, b)), (a, b)
PY
}

@test "llrnn.Model (Python): a character-aware tree model and a word+chars class model score, sample and beam as score and gen do, unseen words included" {
	python_module_env || return 1
	train -q $TINY --input word+chars --output classes --classes 20 --epochs 1 -o cl.bin "$FZ"
	{ head -20 "$VALID"; echo "le zorglub mange 4817 pommes ."; } >in.tok
	for m in "$CT" cl.bin; do
		for b in e 10; do
			score -q -m "$m" --base "$b" --per-token in.tok >want
			/usr/bin/python3 "$TOP/tests/api/score-lines.py" --base "$b" "$m" <in.tok >got
			diff want got
		done
		[ "$(tail -1 got | cut -f3)" -ge 2 ]
		gen -q -m "$m" -p "le zorglub" -s 5 -n 6 --logprob >want
		/usr/bin/python3 "$TOP/tests/api/gen-lines.py" "$m" "prefix='le zorglub'" seed=5 n=6 >got
		diff want got
		gen -q -m "$m" --beam 4 --nbest 3 --logprob >want
		/usr/bin/python3 "$TOP/tests/api/gen-lines.py" "$m" beam=4 nbest=3 >got
		diff want got
	done
}

@test "train, score, gen: the man page EXAMPLES of the character and tree models run (tiny sizes)" {
	cp "$FZ" train.fz
	cp "$VALID" valid.tok
	train -q $TINY --input chars --output tree --valid valid.tok --epochs 1 -o chars.bin train.fz
	score -m chars.bin --check-norm valid.tok > out 2> err
	grep -q 'norm check' err
	train -q --hidden 16 --layers 1 --threads 1 --epochs 1 \
		--input word+chars --combine sum --embed 256 \
		--char-filters 1:16,2:32,3:48,4:64,5:96 --output classes \
		--valid valid.tok -o sum.bin train.fz
	[ "$(meta sum.bin output)" = classes ]
	cp chars.bin chars.llrnn
	cp valid.tok test.tok
	score -m chars.llrnn --check-norm test.tok > /dev/null 2>&1
	gen -m chars.llrnn -p "le zorglub" -n 3 --logprob > out.tsv
	cut -f1 out.tsv | score -q -m chars.llrnn --blank-lines score | cut -f1 > s
	[ "$(wc -l < s)" -eq 3 ]
	mandoc -Tlint -W warning "$TOP/man/train.1" "$TOP/man/score.1" "$TOP/man/gen.1" "$TOP/man/llrnn-model.5"
}

@test "train: bad character and tree options are usage errors" {
	run_err 2 "--output: 'trees' is not loglinear, softmax, tree or classes" train --output trees -o m.bin "$FZ"
	run_err 2 "--input: 'letters' is not word, chars or word\+chars" train --input letters -o m.bin "$FZ"
	run_err 2 "--combine: 'mean' is neither concat nor sum" train --input word+chars --combine mean -o m.bin "$FZ"
	run_err 2 "--char-filters: '1:4,x' is not a list" train --input chars --char-filters 1:4,x -o m.bin "$FZ"
	run_err 2 "--char-filters: '0:4' is not a list" train --input chars --char-filters 0:4 -o m.bin "$FZ"
	run_err 2 "--char-filters: '1:4:5' is not a list" train --input chars --char-filters 1:4:5 -o m.bin "$FZ"
	run_err 2 "need --input chars or word\+chars" train --char-filters 1:4 -o m.bin "$FZ"
	run_err 2 "need --input chars or word\+chars" train --highway 2 -o m.bin "$FZ"
	run_err 2 "--highway" train --input chars --highway 9 -o m.bin "$FZ"
	run_err 2 "--combine sum needs --input word\+chars" train --input chars --combine sum -o m.bin "$FZ"
	run_err 2 "the 16 filters of --char-filters must add up to --embed 32" train --input word+chars --combine sum --embed 32 --char-filters 1:16 -o m.bin "$FZ"
	run_err 2 "need --output tree" train --tree-depth 3 -o m.bin "$FZ"
	run_err 2 "need --output tree" train --output classes --tree-arity 4 -o m.bin "$FZ"
	run_err 2 "--classes needs --output classes" train --output tree --classes 10 -o m.bin "$FZ"
	run_err 2 "--tree-depth" train --output tree --tree-depth 9 -o m.bin "$FZ"
	run_err 2 "--classes" train --output classes --classes 1 -o m.bin "$FZ"
	run_err 2 "cannot change" train --resume "$CT" --input word "$FZ"
	[ ! -e m.bin ]
	# a tree too small for the vocabulary is refused by the library
	run_err 1 "cannot hold" train --output tree --tree-depth 2 --tree-arity 2 --tree-cap 3 -o m.bin "$FZ"
	[ ! -e m.bin ]
}

@test "score: a model cut inside its character vocabulary is refused" {
	n=$(tar tvf "$CT" | awk '{ s += $3 } /chars.npy/ { print s; exit }')
	head -c $(( n + 600 )) "$CT" > cut.bin
	run_err 1 'cut.bin: .*' score -m cut.bin "$VALID"
}


# Open MPI refuses root unless told (CI runs as root); two ranks on a
# machine that may have fewer free cores
MPIRUN="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2"

@test "train --distributed: character inputs and tree, class outputs follow one process's loss curve, step by step" {
	need_mpi
	run="$TINY --batch 8 --epochs 2 -s 7 --valid $VALID --progress 1"
	# --tree-update 0: no re-learning (its samples are each rank's own)
	for v in "--input chars --output tree --tree-update 0" "--input word+chars --output classes --classes 9" \
		"--input word+chars --combine sum --output softmax" "--input chars --output loglinear"; do
		echo "# $v"
		train $run $v -o one.bin "$FZ" 2> one.err
		$MPIRUN train --distributed $run $v -o two.bin "$FZ" 2> two.err
		grep -q 'distributed: 2 ranks' two.err
		grep -o 'loss [0-9.]*' one.err > one.loss
		grep -o 'loss [0-9.]*' two.err > two.loss
		[ "$(wc -l < one.loss)" -eq 76 ] # 38 steps an epoch, 2 epochs
		paste one.loss two.loss | awk '{ d = $2 - $4; if (d < 0) d = -d; if (d > m) m = d }
			END { printf "largest step difference %g\n", m; exit !(NR == 76 && m <= 0.0001) }'
		[ "$(meta one.bin valid_logppl)" = "$(meta two.bin valid_logppl)" ]
		# the tree or classes built from both ranks' counts are the single process's
		if tar tf one.bin | grep -q '^tree/group.npy$'; then
			cmp <(tar xOf one.bin tree/group.npy) <(tar xOf two.bin tree/group.npy)
		fi
	done
}

@test "train --distributed: a re-learned tree is rank 0's on every rank, and the run repeats" {
	need_mpi
	run="-q $TINY --batch 8 --epochs 2 -s 7 --input chars --output tree --tree-update 5"
	# every rank takes rank 0's tree after a re-learning; the ranks check
	# at each epoch's end that their trees agree (without the broadcast
	# this run exits 1: "the ranks hold different trees")
	$MPIRUN train --distributed $run -o a.bin "$FZ"
	$MPIRUN train --distributed $run -o b.bin "$FZ"
	cmp a.bin b.bin
	[ "$(meta a.bin epochs_done)" = 2 ]
	train $run --tree-update 0 -o frozen.bin "$FZ"
	! cmp -s <(tar xOf a.bin tree/group.npy) <(tar xOf frozen.bin tree/group.npy) # it was re-learned
	score -q -m a.bin --check-norm "$VALID" > /dev/null
}

@test "train: one process updates only the rows a batch used, and its model is the dense update's, byte for byte" {
	need_mpi
	# train --distributed without mpirun is a single rank that sums and
	# updates the whole gradient; a plain train reads and updates only the
	# embedding rows and the tree or class words of each batch
	run="-q --hidden 16 --embed 16 --layers 1 --threads 1 --batch 8 --epochs 2 -s 7 --valid $VALID"
	for v in "$CH --input word+chars --output tree --tree-update 5" "--output classes --optim sgd" \
		"--output softmax --dropout 0.2" "$CH --input word+chars --output tree --optim adam" ""; do
		echo "# $v"
		train $run $v -o sparse.bin "$FZ"
		train --distributed $run $v -o dense.bin "$FZ"
		cmp sparse.bin dense.bin
	done
	# a run stopped mid-epoch and resumed too (the optimiser state is
	# caught up before it is written)
	for d in "" --distributed; do
		train $d $run --output tree --max-tokens 3000 -o part$d.bin "$FZ"
		[ "$(meta part$d.bin epochs_done)" = 0 ]
		train $d -q --resume part$d.bin "$FZ"
		[ "$(meta part$d.bin epochs_done)" = 2 ]
	done
	cmp part.bin part--distributed.bin
}
