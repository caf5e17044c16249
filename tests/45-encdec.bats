#!/usr/bin/env bats
# The encoder-decoder through the tools (issue 15): featurize --source on
# the CMUdict slice (tests/fixtures/g2p, split by scripts/g2p-prep), train
# on a source stream, gen and score with -m, the man pages' EXAMPLES, and
# the error paths (misaligned files, an empty source line, a model
# without a source given --source).

load test_helper

G2P="$FIXTURES/g2p/cmudict-slice.tgz"
LEX="$TOP/lexicons/arpabet-phonology.lex"

setup_file() {
	export D="$BATS_FILE_TMPDIR/g2p"
	mkdir -p "$D"
	python3 "$TOP/scripts/g2p-prep" "$G2P" "$D" 2>/dev/null
}

@test "featurize --source: the source side in the stream, ids aligned with the target's" {
	cd "$D"
	featurize --top 100 --lexicon "$LEX" --source train.src -o ll.feat train.tgt 2>err
	grep -q 'source train.src: 1442 lines' err
	tar tf ll.feat >list
	for m in source/vocab source/features source/psi/indptr.npy source/ids/000000.npy ids/000000.npy; do
		grep -qx "$m" list
	done
	tar xOf ll.feat meta | grep -qx 'prime=none'
	tar xOf ll.feat source/features | grep -qx 'SRC:a'
	/usr/bin/python3 - <<'PY'
import io, tarfile, numpy
t = tarfile.open("ll.feat")
get = lambda n: numpy.load(io.BytesIO(t.extractfile(n).read()))
meta = dict(l.split("=", 1) for l in t.extractfile("meta").read().decode().splitlines())
sv = t.extractfile("source/vocab").read().decode().split("\n")
tv = t.extractfile("vocab").read().decode().split("\n")
s, y = get("source/ids/000000.npy"), get("ids/000000.npy")
se, te = int(meta["source_eos_id"]), int(meta["eos_id"])
src = [l.split() for l in open("train.src")]
tgt = [l.split() for l in open("train.tgt")]
def split(ids, eos, vocab):
    out, cur = [], []
    for i in ids:
        if i == eos:
            out.append(cur); cur = []
        else:
            cur.append(vocab[i])
    assert not cur
    return out
assert split(s, se, sv) == src, "source ids"
assert split(y, te, tv) == tgt, "target ids"
PY
}

@test "featurize --source: an empty source line is a pair with an empty source" {
	cd "$BATS_TEST_TMPDIR"
	printf 'a b\n\nc\n' >s.txt
	printf 'X\nY Z\nX\n' >t.txt
	featurize --source s.txt -o p.feat t.txt 2>err
	grep -q '3 lines (1 empty)' err
	/usr/bin/python3 -c '
import io, tarfile, numpy
t = tarfile.open("p.feat")
s = numpy.load(io.BytesIO(t.extractfile("source/ids/000000.npy").read()))
e = int(dict(l.split("=", 1) for l in t.extractfile("meta").read().decode().splitlines())["source_eos_id"])
assert list(s).count(e) == 3 and s[2] == e, s'
}

@test "featurize --source: misaligned files name both files and the line" {
	cd "$BATS_TEST_TMPDIR"
	printf 'a b\nc\nd\n' >s.txt
	printf 'X\nY\n' >t.txt
	run_err 1 "s.txt \(3 lines\) and t.txt \(2 lines\) are not aligned: they diverge at line 3" featurize --source s.txt -o p.feat t.txt
	[ ! -e p.feat ]
	run_err 1 "t.txt \(2 lines\) and s.txt \(3 lines\).*line 3, which only s.txt has" featurize --source t.txt -o p.feat s.txt
	printf 'a\nb\n' >s2.txt
	printf 'X\n\n' >t2.txt
	run_err 1 "t2.txt:2: an empty target line" featurize --source s2.txt -o p.feat t2.txt
	run_err 2 "exactly one target file" featurize --source s.txt -o p.feat t.txt t.txt
	run_err 2 "not with --dump" featurize --source s.txt --dump t.txt
	run_err 1 "nosuch" featurize --source nosuch -o p.feat t.txt
}

@test "featurize(1) EXAMPLES: parallel data" {
	cd "$D"
	mkdir -p lexicons && cp "$LEX" lexicons/
	featurize --top 100 --lexicon lexicons/arpabet-phonology.lex \
		--source train.src -o g2p.feat train.tgt
	run sh -c "tar tf g2p.feat | grep '^source/'"
	assert_success
	assert_line 'source/vocab'
	assert_line 'source/ids/000000.npy'
}

# A tiny network: seconds on the slice.
TINY="--hidden 32 --embed 16 --attn-hidden 16 --threads 1 -q"

feat_ll() { featurize --top 100 --lexicon "$LEX" --source "$D/train.src" -o "$1" "$D/train.tgt" 2>/dev/null; }

@test "train: an encoder-decoder from a featurize --source stream, every attention, both outputs, primed" {
	cd "$BATS_TEST_TMPDIR"
	feat_ll ll.fz
	featurize --source "$D/train.src" -o sm.fz "$D/train.tgt" 2>/dev/null
	for a in dot bilinear mlp; do
		train $TINY --attention $a --epochs 2 --valid-source "$D/valid.src" --valid "$D/valid.tgt" --log $a.tsv -o $a.bin ll.fz
		tar xOf $a.bin meta >meta
		grep -qx family=encdec meta
		grep -qx attention=$a meta
		grep -qx output=loglinear meta
		# the validation log-perplexity fell below the untrained model's
		awk -F'\t' 'NR == 2 { v0 = $5 } NR > 2 { v = $5 } END { exit !(v < v0) }' $a.tsv
	done
	train $TINY --output softmax --epochs 1 -o sm.bin sm.fz
	tar xOf sm.bin meta | grep -qx output=softmax
	train $TINY --prime table --prime-iters 2 --epochs 1 -o pr.bin ll.fz
	tar xOf pr.bin meta >meta
	grep -qx primed=1 meta
	grep -qx prime_iters=2 meta
	tar tf pr.bin | grep -qx source/table.npy
}

@test "train: encoder-decoder runs are deterministic and --resume ends with the uninterrupted model" {
	cd "$BATS_TEST_TMPDIR"
	feat_ll ll.fz
	V="--valid-source $D/valid.src --valid $D/valid.tgt"
	train $TINY --dropout 0.2 --prime table --epochs 3 $V -o a.bin ll.fz
	train $TINY --dropout 0.2 --prime table --epochs 3 $V -o b.bin ll.fz
	cmp a.bin b.bin
	train $TINY --dropout 0.2 --prime table --epochs 1 $V -o c.bin ll.fz
	train --threads 1 -q --resume c.bin --epochs 3 $V ll.fz
	cmp a.bin c.bin
	run_err 2 "--attention: the resumed model c.bin has attention=mlp" train --resume c.bin --attention dot ll.fz
	# --eps (Adam's, by default 1e-8): in the meta and the state, replaced by --resume
	[ "$(tar xOf a.bin meta | sed -n 's/^eps=//p')" = 1e-08 ]
	train $TINY --epochs 1 $V -o f.bin ll.fz
	train $TINY --eps 0.01 --epochs 1 $V -o e.bin ll.fz
	[ "$(tar xOf e.bin meta | sed -n 's/^eps=//p')" = 0.01 ]
	# other weights than with the default (meta and state aside)
	mkdir f e && tar xf f.bin -C f && tar xf e.bin -C e
	! diff -rq -x meta -x state f e >/dev/null || false
	train --threads 1 -q --resume e.bin --epochs 2 --eps 0.0001 $V ll.fz
	[ "$(tar xOf e.bin meta | sed -n 's/^eps=//p')" = 0.0001 ]
	tar xOf e.bin state/info | grep -q '^optim_eps=9\.99999'
}

@test "train: the library alone (llr_encdec_fresh and the driver, tests/api/train-model.c) writes the tool's encoder-decoder byte for byte" {
	API="$TOP/build/tests/api/train-model"
	[ -x "$API" ] || { echo "build/tests/api/train-model not built (make builds it)" >&2; return 1; }
	cd "$BATS_TEST_TMPDIR"
	feat_ll ll.fz
	train --hidden 32 --embed 16 --attn-hidden 16 --threads 1 -q --epochs 1 -o tool.bin ll.fz
	# the program sets the OpenBLAS kernels the tools pick, as an embedding
	# program does (llrnn(1), ENVIRONMENT): training's bits depend on them
	OPENBLAS_CORETYPE=$(blas_core) run "$API" encdec api.bin ll.fz 1
	assert_success
	cmp tool.bin api.bin
	# errors come back as messages, not exits
	featurize -o lm.fz "$D/train.tgt" 2>/dev/null
	run "$API" encdec x.bin lm.fz 1
	assert_failure 1
	assert_output "train-model: lm.fz: no source side: not made by featurize --source (an encoder-decoder needs parallel data)"
	[ ! -e x.bin ]
}

@test "train --lr-decay: a stall restores the best weights and decays the rate; --resume goes on exactly" {
	cd "$BATS_TEST_TMPDIR"
	feat_ll ll.fz
	V="--valid-source $D/valid.src --valid $D/valid.tgt"
	S="--lr 0.02 --patience 10 --lr-decay 0.5"
	train $TINY $S --epochs 8 $V --log d.tsv -o d.bin ll.fz
	# the first epoch that did not beat the best by --min-improvement
	# (0.003); the next one ran at half its rate
	e=$(awk -F'\t' 'NR == 2 { b = $5 } NR > 2 { if ($5 > b - 0.003) { print $1; exit } b = $5 }' d.tsv)
	[ -n "$e" ]
	[ "$e" -lt 8 ]
	awk -F'\t' -v e="$e" '$1 == e { r = $6 } $1 == e + 1 { n = $6 } END { exit !(n > 0 && (n - r / 2) ^ 2 < 1e-10 * r * r) }' d.tsv
	tar xOf d.bin meta >meta
	grep -qx lr_decay=0.5 meta
	grep -qx lr_patience=1 meta
	# cut at that epoch: the best weights are back in the net (no
	# state/weights: the current weights are the params), one decay done
	train $TINY $S --epochs "$e" $V -o c.bin ll.fz
	tar tf c.bin >list
	grep -qx state/info list
	[ -z "$(grep state/weights list)" ]
	tar xOf c.bin state/info | grep -qx decays=1
	# without the schedule the stalled weights stay the current ones
	train $TINY --lr 0.02 --patience 10 --epochs "$e" $V -o k.bin ll.fz
	tar tf k.bin | grep -q '^state/weights'
	# --resume after the decay, and from before it, ends with the
	# uninterrupted model
	train --threads 1 -q --resume c.bin --epochs 8 $V ll.fz
	cmp c.bin d.bin
	train $TINY $S --epochs 1 $V -o c1.bin ll.fz
	train --threads 1 -q --resume c1.bin --epochs 8 $V ll.fz
	cmp c1.bin d.bin
	# --lr-patience 2: a run cut after the first stall counts it on
	train $TINY $S --lr-patience 2 --epochs 8 $V -o p.bin ll.fz
	train $TINY $S --lr-patience 2 --epochs "$e" $V -o p2.bin ll.fz
	tar xOf p2.bin state/info | grep -qx stalls=1
	train --threads 1 -q --resume p2.bin --epochs 8 $V ll.fz
	cmp p.bin p2.bin
	# no decay left: the first stall stops training
	train $TINY $S --lr-decays 0 --epochs 8 $V -o z.bin ll.fz
	tar xOf z.bin meta >meta
	grep -qx stopped=converged meta
	grep -qx "epochs_done=$e" meta
	run_err 2 "lr-decay needs --valid" train $TINY --lr-decay 0.5 -o x.bin ll.fz
	run_err 2 "lr-decay" train $TINY --lr-decay 1 $V -o x.bin ll.fz
	run_err 2 "lr-patience" train $TINY --lr-decay 0.5 --lr-patience 0 $V -o x.bin ll.fz
	[ ! -e x.bin ]
}

@test "train: encoder-decoder error paths" {
	cd "$BATS_TEST_TMPDIR"
	feat_ll ll.fz
	featurize -o lm.fz "$D/train.tgt" 2>/dev/null
	run_err 2 "--attention: 'cosine' is not dot, bilinear or mlp" train --attention cosine -o m.bin ll.fz
	run_err 2 "--valid and --valid-source go together" train --valid "$D/valid.tgt" -o m.bin ll.fz
	run_err 2 "--layers: the encoder-decoder has --enc-layers" train --layers 2 -o m.bin ll.fz
	run_err 2 "--hidden: must be even" train --hidden 33 -o m.bin ll.fz
	run_err 2 "--prime table: the background of a softmax output is uniform" train --output softmax --prime table -o m.bin ll.fz
	run_err 2 "--eps: for --optim rmsprop and adam" train --optim sgd --eps 0.001 -o m.bin ll.fz
	run_err 2 "--eps" train --eps 0 -o m.bin ll.fz
	train $TINY --optim sgd --epochs 1 -o s.bin ll.fz
	! tar xOf s.bin meta | grep -q '^eps=' || false
	cp s.bin s0.bin
	run_err 2 "--eps: the resumed model trains with SGD" train --resume s.bin --eps 0.001 ll.fz
	cmp s.bin s0.bin
	rm s.bin s0.bin
	run_err 1 "lm.fz: no source side: not made by featurize --source" train --attention dot -o m.bin lm.fz
	head -n 5 "$D/valid.tgt" >short.tgt
	run_err 1 "are not aligned: they diverge at line 6" train $TINY --valid-source "$D/valid.src" --valid short.tgt -o m.bin ll.fz
	[ ! -e m.bin ]
}


# the largest absolute difference between the numbers of two files, read
# in order (the files must hold the same count of numbers)
max_diff() {
	paste <(grep -oE -- '-?[0-9]+\.[0-9]+' "$1") <(grep -oE -- '-?[0-9]+\.[0-9]+' "$2") |
		awk -F'\t' 'NF != 2 || $2 == "" { bad = 1 } { d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d }
			END { if (bad || NR == 0) print "mismatch"; else printf "%.6f\n", m }'
}

@test "train --distributed: an encoder-decoder on two ranks follows one process's loss curve, step by step" {
	need_mpi
	cd "$BATS_TEST_TMPDIR"
	feat_ll ll.fz
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	R="--hidden 32 --embed 16 --attn-hidden 16 --threads 1 --batch 50 --epochs 2 --progress 1 -s 3"
	V="--valid-source $D/valid.src --valid $D/valid.tgt"
	train $R $V --log one.tsv -o one.bin ll.fz 2>one.err
	mpirun --oversubscribe -np 2 train --distributed $R $V --log two.tsv -o two.bin ll.fz 2>two.err
	grep -q 'distributed: 2 ranks' two.err
	grep -o 'loss [0-9.]*' one.err >one.loss
	grep -o 'loss [0-9.]*' two.err >two.loss
	[ "$(wc -l <one.loss)" -eq 58 ] # 1442 pairs in batches of 50: 29 steps an epoch, 2 epochs
	[ "$(wc -l <two.loss)" -eq 58 ] # rank 0 alone prints
	d=$(max_diff one.loss two.loss)
	echo "largest step difference: $d"
	awk -v d="$d" 'BEGIN { exit !(d != "mismatch" && d <= 0.0001) }'
	# the validation figures of the log, too
	d=$(max_diff <(cut -f5 one.tsv) <(cut -f5 two.tsv))
	echo "largest validation difference: $d"
	awk -v d="$d" 'BEGIN { exit !(d != "mismatch" && d <= 0.0001) }'
	tar xOf two.bin meta | grep -qx epochs_done=2
}

@test "train --distributed: encoder-decoder runs repeat, rank 0 alone writes, --resume continues the run" {
	need_mpi
	cd "$BATS_TEST_TMPDIR"
	feat_ll ll.fz
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	M="mpirun --oversubscribe -np 2 train --distributed"
	V="--valid-source $D/valid.src --valid $D/valid.tgt"
	$M $TINY --dropout 0.2 --epochs 3 $V --log a.tsv -o a.bin ll.fz
	$M $TINY --dropout 0.2 --epochs 3 $V -o b.bin ll.fz
	cmp a.bin b.bin
	[ "$(grep -c . a.tsv)" -eq 5 ] # header, epoch 0 and three epochs: one writer
	$M $TINY --dropout 0.2 --epochs 1 $V -o c.bin ll.fz
	$M --threads 1 -q --resume c.bin --epochs 3 $V ll.fz
	cmp a.bin c.bin
	ls >files
	[ "$(grep -c . files)" -eq 6 ] # a.bin a.tsv b.bin c.bin files ll.fz: no second writer's leftovers
}

@test "train(1) EXAMPLES: the g2p encoder-decoder" {
	cd "$D"
	cp "$LEX" .
	featurize --top 100 --lexicon arpabet-phonology.lex \
		--source train.src -o g2p.fz train.tgt
	train --attention mlp --prime table --valid-source valid.src \
		--valid valid.tgt --epochs 2 -o g2p.bin g2p.fz
	tar xOf g2p.bin meta | grep -qx stopped=epochs
	# (tiny sizes, 3 epochs)
	train $TINY --attention mlp --lr-decay 0.5 --lr-decays 4 --patience 10 \
		--max-time 1h --valid-source valid.src --valid valid.tgt \
		--epochs 3 -o g2p-decay.bin g2p.fz
	tar xOf g2p-decay.bin meta >meta
	grep -qx lr_decay=0.5 meta
	grep -qx lr_decays=4 meta
	grep -qx max_epochs=3 meta
}

# Two tiny trained models for gen and score, made once.
tiny_models() {
	[ -e "$D/m1.bin" ] && return 0
	feat_ll "$D/ll.fz"
	train $TINY --epochs 3 -o "$D/m1.bin" "$D/ll.fz"
	train $TINY --epochs 3 --attention dot -s 2 -o "$D/m2.bin" "$D/ll.fz"
}

@test "gen -m: one output per source, empty and unknown sources included; beam, n-best, log-probs agree with score" {
	tiny_models
	cd "$BATS_TEST_TMPDIR"
	head -n 20 "$D/test.src" >in.src
	printf '\nq @ q\n' >>in.src
	gen -m "$D/m1.bin" in.src >greedy.out
	[ "$(wc -l <greedy.out)" -eq 22 ]
	gen -m "$D/m1.bin" --beam 4 --logprob <in.src >beam.out
	[ "$(wc -l <beam.out)" -eq 22 ]
	# the log-probability gen reports is score's forced decoding of the same output
	cut -f1 beam.out >hyp.tgt
	awk -F'\t' '{ print $2 }' beam.out >gen.lp
	score -m "$D/m1.bin" --source in.src hyp.tgt | cut -f1 >score.lp
	paste gen.lp score.lp | awk '{ d = $1 - $2; if (d < -0.01 || d > 0.01) { print "differ: " $0; exit 1 } }'
	# n-best: N lines per source, ranked, numbered
	gen -m "$D/m1.bin" --beam 4 --nbest 3 <in.src >nbest.out
	awk -F'\t' 'NF != 4 { exit 1 } { n[$1]++ } $1 == p && $3 > s + 1e-9 { exit 1 } { p = $1; s = $3 } END { for (k in n) if (n[k] != 3) exit 1; if (length(n) != 22) exit 1 }' nbest.out
	# beam 1 is the greedy search
	gen -m "$D/m1.bin" --beam 1 in.src | cmp - greedy.out
	gen -q -m "$D/m1.bin" in.src | cmp - greedy.out
}

@test "gen -m A -m B: an ensemble; --show-attention rows sum to 1" {
	tiny_models
	cd "$BATS_TEST_TMPDIR"
	head -n 10 "$D/test.src" >in.src
	gen -m "$D/m1.bin" -m "$D/m2.bin" --beam 3 in.src >ens.out
	[ "$(wc -l <ens.out)" -eq 10 ]
	echo 'p h o n e' | gen -m "$D/m1.bin" --show-attention >att.out
	head -n 1 att.out | grep -vq '^#'
	sed -n 2p att.out | grep -qx '#	p h o n e </s>'
	awk -F'\t' 'NR > 2 { n = split($3, w, " "); if (n != 6) exit 1; t = 0; for (i = 1; i <= n; i++) t += w[i]; if (t < 0.99 || t > 1.01) exit 1; rows++ } END { exit !(rows == NR - 2 && rows >= 1) }' att.out
}

@test "score -m --source: one line per pair; refused for a language model and misaligned files" {
	tiny_models
	cd "$BATS_TEST_TMPDIR"
	score -m "$D/m1.bin" --source "$D/valid.src" "$D/valid.tgt" >s.out
	[ "$(wc -l <s.out)" -eq "$(wc -l <"$D/valid.tgt")" ]
	awk -F'\t' 'NF != 3 || $1 >= 0 || $3 != 0 { exit 1 }' s.out
	# tokens column: the phonemes + </s>
	awk '{ print NF + 1 }' "$D/valid.tgt" | cmp - <(cut -f2 s.out)
	score -m "$D/m1.bin" --source "$D/valid.src" --batch 1 <"$D/valid.tgt" | cmp - s.out
	# -q, as for any model (nothing to silence here)
	score -q -m "$D/m1.bin" --source "$D/valid.src" "$D/valid.tgt" | cmp - s.out
	featurize -o lm.fz "$D/train.tgt" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 -o lm.bin lm.fz
	run_err 1 "lm.bin: a language model, trained without a source" score -m lm.bin --source "$D/valid.src" "$D/valid.tgt"
	run_err 1 "lm.bin: a language model, trained without a source" gen -m "$D/m1.bin" -m lm.bin
	head -n 3 "$D/valid.tgt" >short.tgt
	run_err 1 "valid.src and short.tgt are not aligned: they diverge at line 4, which only .*valid.src has" score -m "$D/m1.bin" --source "$D/valid.src" short.tgt
	run_err 2 "--source SRC is required" score -m "$D/m1.bin" "$D/valid.tgt"
	run_err 2 "--nbest 3 is more than --beam 2" gen -m "$D/m1.bin" --beam 2 --nbest 3
	run_err 2 "--greedy and --beam exclude each other" gen -m "$D/m1.bin" --greedy --beam 2
}

@test "gen(1) and score(1) EXAMPLES: g2p" {
	tiny_models
	cd "$BATS_TEST_TMPDIR"
	cp "$D/m1.bin" g2p.bin
	cp "$D/m2.bin" g2p-2.bin
	cp "$D/test.src" "$D/valid.src" "$D/valid.tgt" .
	run sh -c "printf 'l l a m a\nz y x\n' | gen -m g2p.bin --beam 5"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	run sh -c "echo 'p h o n e' | gen -m g2p.bin --beam 5 --nbest 3"
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	echo 'p h o n e' | gen -m g2p.bin --show-attention | grep -q '^#	p h o n e </s>$'
	gen -m g2p.bin -m g2p-2.bin --beam 5 test.src >test.hyp
	[ "$(wc -l <test.hyp)" -eq "$(wc -l <test.src)" ]
	run sh -c "score -m g2p.bin --source valid.src valid.tgt | head -n 3"
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	mandoc -Tlint -W warning "$TOP/man/gen.1" "$TOP/man/score.1" "$TOP/man/train.1" "$TOP/man/featurize.1"
}

@test "g2p.mk: a tiny run on the slice writes the table, the report and the attention plot" {
	cd "$BATS_TEST_TMPDIR"
	make -s -f "$TOP/pipelines/g2p.mk" ARCHIVE="$G2P" BIN="$TOP/bin" SCRIPTS="$TOP/scripts" LEXICON="$LEX" \
		WORK=w RESULTS=r ROWS='ll-mlp-100 ll-primed-dot-10 softmax-bilinear-100-e2' \
		HIDDEN=16 EMBED=8 ATTN_HIDDEN=8 EPOCHS=2 MAXTIME= THREADS=1 >make.log 2>&1 || { cat make.log; false; }
	head -n 1 r/g2p.tsv | grep -qx 'output	attention	train_fraction	ensemble	beam	wer	per	train_seconds'
	[ "$(wc -l <r/g2p.tsv)" -eq 4 ]
	grep -q '^ll	mlp	1	1	5	[0-9.]*	[0-9.]*	[0-9]*$' r/g2p.tsv
	grep -q '^ll-primed	dot	0.1	1	5	' r/g2p.tsv
	grep -q '^softmax	bilinear	1	2	5	' r/g2p.tsv
	# the rows are g2p-eval's figures for gen's beam-5 output
	gen -m w/ll-mlp-100-s1.bin --beam 5 w/data/test.src >hyp
	python3 "$TOP/scripts/g2p-eval" w/data/test.ref hyp >eval
	read -r _ _ _ wer _ per <eval
	grep -q "^ll	mlp	1	1	5	$wer	$per	" r/g2p.tsv
	grep -q '^| ll-primed | dot | 0.1 | 1 | 5 |' r/g2p.md
	# CPU seconds and the load beside the wall-clock seconds; the schedule
	grep -q '^| ll | mlp | 1 | 1 | 5 | [0-9.]* | [0-9.]* | [0-9]* | [0-9]* | [0-9.]* [0-9.]* [0-9.]* | 2 | epochs |$' r/g2p.md
	tar xOf w/ll-mlp-100-s1.bin meta | grep -qx lr_decay=0.5
	file r/g2p-attention.png | grep -q 'PNG image'
}

@test "g2p.mk seeds: rows over seeds, per-word evaluations kept, a table results-check recomputes, intervals" {
	cd "$BATS_TEST_TMPDIR"
	make -s -f "$TOP/pipelines/g2p.mk" ARCHIVE="$G2P" BIN="$TOP/bin" SCRIPTS="$TOP/scripts" LEXICON="$LEX" \
		WORK=w RESULTS=r SEED_ROWS='softmax-dot-10 ll-dot-10' SEEDS='1 2' BEAM=2 \
		HIDDEN=16 EMBED=8 ATTN_HIDDEN=8 EPOCHS=2 MAXTIME= THREADS=1 seeds >make.log 2>&1 || { cat make.log; false; }
	head -n 1 r/g2p-seeds.tsv | grep -qx 'output	attention	train_fraction	seeds	epochs	stopped	valid_mean	valid_sd	wer_mean	wer_sd	per_mean	per_sd	cpu_s_mean	cpu_s_runs'
	[ "$(wc -l <r/g2p-seeds.tsv)" -eq 3 ]
	grep -q '^ll	dot	0.1	1,2	2([12]),2([12])	epochs,epochs	' r/g2p-seeds.tsv
	# a seed's evaluation is g2p-eval's, of gen's beam output for that model
	gen -m w/ll-dot-10-s2.bin --beam 2 w/data/test.src >hyp
	python3 "$TOP/scripts/g2p-eval" --per-word pw w/data/test.ref hyp >eval
	cmp pw <(xz -dc r/outputs/g2p-seeds/ll-dot-10-s2.test.tsv.xz)
	[ "$(cut -f 5 pw)" = "$(cat hyp)" ]
	# the table's figures are recomputed from the outputs
	printf 'table\tstatus\ttest_columns\tnote\ng2p-seeds\tchecked\twer_mean,wer_sd,per_mean,per_sd\t\n' \
		>r/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results r
	assert_success
	assert_line 'results-check: 8 figures checked, 0 tables pending'
	# one interval per figure: ll against softmax, in WER and in PER
	run cut -f 1-3 r/outputs/g2p-seeds/diffs.tsv
	assert_output "$(printf 'figure\ta\tb\nwer\tll-dot-10\tsoftmax-dot-10\nper\tll-dot-10\tsoftmax-dot-10')"
	grep -q '^| ll-dot-10 − softmax-dot-10 | PER |' r/g2p-seeds.md
	grep -q '^softmax	dot	.*	[0-9]*	2$' r/g2p-seeds.tsv
	# a run a signal cut before bash's time printed has no CPU time: the
	# mean is over the other seeds, and says of how many
	: >w/ll-dot-10-s1.time
	"$TOP/scripts/g2p-seeds" --work w --outputs r/outputs/g2p-seeds --results r --rows 'softmax-dot-10 ll-dot-10' --seeds '1 2'
	grep -q '^ll	dot	.*	[0-9]*	1$' r/g2p-seeds.tsv
	grep -q '^| ll | dot | .* | [0-9]* (1 of 2) |$' r/g2p-seeds.md
	# a seed's output missing: named, and nothing written
	rm r/g2p-seeds.tsv r/outputs/g2p-seeds/softmax-dot-10-s1.test.tsv.xz
	run_err 1 'g2p-seeds: .*softmax-dot-10-s1.test.tsv.xz' "$TOP/scripts/g2p-seeds" --work w \
		--outputs r/outputs/g2p-seeds --results r --rows 'softmax-dot-10 ll-dot-10' --seeds '1 2'
	assert_file_not_exist r/g2p-seeds.tsv
}

@test "g2p.mk resume: continues the seeds' models that MAXTIME cut, until they stop on their own" {
	cd "$BATS_TEST_TMPDIR"
	mk() { make -s -f "$TOP/pipelines/g2p.mk" ARCHIVE="$G2P" BIN="$TOP/bin" SCRIPTS="$TOP/scripts" LEXICON="$LEX" \
		WORK=w RESULTS=r ROWS= SEED_ROWS='ll-dot-100' SEEDS='1' HIDDEN=32 EMBED=8 ATTN_HIDDEN=8 EPOCHS=8 PATIENCE=8 \
		LR_DECAY=0 THREADS=1 "$@"; }
	mk MAXTIME=1s w/ll-dot-100-s1.bin >make.log 2>&1 || { cat make.log; false; }
	if ! tar xOf w/ll-dot-100-s1.bin meta | grep -qx stopped=max-time; then
		skip "the 8 epochs took less than the 1 s of MAXTIME here: nothing to continue"
	fi
	# a model a signal cut before its first run wrote .secs: the time
	# starts from its curve
	rm w/ll-dot-100-s1.secs
	mk MAXTIME= resume >resume.log 2>&1 || { cat resume.log; false; }
	grep -q 'resume w/ll-dot-100-s1.bin' resume.log
	grep -Eqx '[0-9]+' w/ll-dot-100-s1.secs
	tar xOf w/ll-dot-100-s1.bin meta | grep -qx epochs_done=8
	tar xOf w/ll-dot-100-s1.bin meta | grep -qx stopped=epochs
	# nothing is left to continue
	mk MAXTIME= resume >again.log 2>&1
	! grep -q resume again.log
}

@test "g2p-attention-plot: a heat map PNG with gnuplot alone; usage, bad input and a missing gnuplot" {
	cd "$BATS_TEST_TMPDIR"
	printf 'K AE1\n#\tc a </s>\n#\tK\t0.9 0.1 0\n#\tAE1\t0.2 0.7 0.1\n#\t</s>\t0 0 1\n' >att.txt
	run "$TOP/scripts/g2p-attention-plot" att.txt att.png
	assert_success
	assert_output ""
	# a pixel box per source letter across, per output token down
	run file -b att.png
	assert_output --partial 'PNG image data, 370 x 285,'
	run ls
	assert_output "$(printf 'att.png\natt.txt')"
	run "$TOP/scripts/g2p-attention-plot" -h
	assert_success
	assert_output "usage: g2p-attention-plot ATTENTION.txt OUT.png"
	run "$TOP/scripts/g2p-attention-plot" att.txt
	assert_failure 2
	assert_output "usage: g2p-attention-plot ATTENTION.txt OUT.png"
	run_err 1 "g2p-attention-plot: nope.txt: No such file or directory" "$TOP/scripts/g2p-attention-plot" nope.txt x.png
	printf 'K\n#\tc a </s>\n#\tK\t0.9 0.1\n' >short.txt
	run_err 1 "g2p-attention-plot: short.txt: attention line 2: expected token and 3 weights" \
		"$TOP/scripts/g2p-attention-plot" short.txt x.png
	plot_without_gnuplot g2p-attention-plot att.txt
}

@test "g2p-eval: WER and PER against any of a word's pronunciations; --no-stress drops the stress digits" {
	cd "$BATS_TEST_TMPDIR"
	printf 'AH0 B AW1 T\tEY1 B AW2 T\nK AE1 T\n' >ref
	printf 'AH1 B AW1 T\nK AE1 T S\n' >hyp
	run python3 "$TOP/scripts/g2p-eval" ref hyp
	[ "$output" = "words 2 wer 100.00 per 28.57" ] # 1 + 1 edits over 4 + 3 phonemes
	run python3 "$TOP/scripts/g2p-eval" --no-stress ref hyp
	[ "$output" = "words 2 wer 50.00 per 14.29" ]
	printf 'K AE1 T\n' >one
	run_err 1 "ref has 2 lines, one has 1" "$TOP/scripts/g2p-eval" ref one
	run python3 "$TOP/scripts/g2p-eval" --no-stress ref
	[ "$status" -eq 2 ]
}

@test "g2p-eval --per-word: each word's error, edits, closest reference length, hypothesis and reference" {
	cd "$BATS_TEST_TMPDIR"
	printf 'AH0 B AW1 T\tEY1 B AW2 T\nK AE1 T\n' >ref
	printf 'AH0 B AW1 T\nK AE1 T S\n' >hyp
	run python3 "$TOP/scripts/g2p-eval" --per-word pw ref hyp
	assert_success
	assert_output "words 2 wer 50.00 per 14.29"
	assert_equal "$(cat pw)" "$(printf '0\t1\t0\t4\tAH0 B AW1 T\tAH0 B AW1 T\n1\t1\t1\t3\tK AE1 T S\tK AE1 T')"
	# "-": the words on stdout, the summary on stderr
	python3 "$TOP/scripts/g2p-eval" --per-word - ref hyp >out 2>err
	cmp out pw
	assert_equal "$(cat err)" "words 2 wer 50.00 per 14.29"
	# WER and PER back from the words (scripts/outputs.py's metrics)
	run "$TOP/scripts/paired-bootstrap" --samples 10 --metric 'mean*100' -a pw -b pw
	assert_line --index 1 --regexp $'^mean\\*100\t50.0000\t50.0000\t'
	run "$TOP/scripts/paired-bootstrap" --samples 10 --metric 'ratio:3,4*100' -a pw -b pw
	assert_line --index 1 --regexp $'^ratio:3,4\\*100\t14.2857\t14.2857\t'
	run_err 1 'g2p-eval: .*nodir/pw' "$TOP/scripts/g2p-eval" --per-word nodir/pw ref hyp
}
