#!/usr/bin/env bats
# 91-chars-tree-pipeline.bats - pipelines/chars-tree.mk end to end on the
# fixtures (the Brown slice, a tiny cut of the UD French slice), tiny
# networks and seconds of training: the wiring and the tables' layout, not
# the figures of the full run.  And scripts/valid-curves, which draws the
# pipeline's plots.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
}

MK="$TOP/pipelines/chars-tree.mk"

tiny_make() {
	make -C "$TOP" -f "$MK" WORK="$BATS_TEST_TMPDIR/work" RESULTS="$BATS_TEST_TMPDIR/res" \
		MAXTIME=2s EPOCHS=2 EMBED=8 HIDDEN=8 LAYERS=1 THREADS=1 "$@"
}

# the tree comparison on the Brown slice: two seeds, one epoch, tiny networks
tree_make() {
	tiny_make BROWN="$BROWN" TREE_SEEDS="1 2" EPOCHS=1 TREE_EMBED=8 TREE_HIDDEN=8 "$@"
}

stopped() { # the stop reason in a model's meta
	tar xOf "$1" meta | sed -n 's/^stopped=//p'
}

@test "chars-tree.mk tree: the softmax, class and tree outputs over seeds, cut runs resumed, outputs kept, the table checked" {
	cd "$BATS_TEST_TMPDIR"
	W=$BATS_TEST_TMPDIR/work/brown O=res/outputs/tree
	# a summary as bench/tree-speed writes it (a row it lacks gets "-")
	printf 'model\trepeats\ttrain_tokens_per_s\tscore_tokens_per_s\nsoftmax\t3\t448\t1066\ntree\t3\t10089\t35042\n' >speeds.tsv
	run tree_make TREE_SPEEDS=nothere.tsv tree
	assert_failure
	assert_output --partial "chars-tree.mk: nothere.tsv: no speed summary; run bench/tree-speed first"
	[ ! -e res/tree.tsv ]
	[ ! -e work/brown/softmax-s1.model ]
	# every run cut by a tiny max-time (a softmax epoch takes seconds here)
	run tree_make TREE_MAXTIME=0.1s -j2 outputs
	assert_success
	for s in 1 2; do
		[ "$(stopped $W/softmax-s$s.model)" = max-time ]
	done
	# make resume continues the cut runs, and only them, to the same rule
	run tree_make -j2 resume
	assert_success
	assert_line "resuming $W/softmax-s1.model"
	assert_line "resuming $W/softmax-s2.model"
	for r in softmax-s1 softmax-s2 classes-s1 classes-s2 tree-s1 tree-s2; do
		[ "$(stopped $W/$r.model)" = epochs ]
		tar xOf $W/$r.model meta | grep -qx epochs_done=1
	done
	run tree_make resume
	assert_success
	refute_output --partial resuming
	run tree_make TREE_SPEEDS="$BATS_TEST_TMPDIR/speeds.tsv" -j2 tree
	assert_success
	# one model per seed; each kept output is score --per-token's of the
	# resumed model, on both parts
	run cmp -s $W/tree-s1.model $W/tree-s2.model
	assert_failure
	for r in softmax-s1 softmax-s2 classes-s1 classes-s2 tree-s1 tree-s2; do
		tar xOf $W/$r.model meta | grep -qx "output=${r%-s*}"
		for p in valid test; do
			"$TOP/bin/score" -q --per-token --threads 1 --batch 64 -m $W/$r.model $W/$p.tok | cmp - <(xz -dc $O/$r.$p.tsv.xz)
		done
		head -n 1 res/chars-tree-logs/brown-$r.tsv | grep -qx "$(printf 'epoch\tstep\tseconds\ttrain\tvalid\tlr')"
	done
	# the table: three rows with their seeds, every run stopped by its epochs
	run cut -f 1-4 res/tree.tsv
	assert_output "$(printf 'model\tseeds\tepochs\tstopped\nsoftmax\t1,2\t1(1),1(1)\tepochs,epochs\nclasses\t1,2\t1(1),1(1)\tepochs,epochs\ntree\t1,2\t1(1),1(1)\tepochs,epochs')"
	# each row's test figure is the mean over seeds of its own outputs'
	for o in softmax classes tree; do
		for s in 1 2; do xz -dc $O/$o-s$s.test.tsv.xz | awk -F'\t' '{ l += $1; n += $2 } END { print -l / n }'; done >want
		awk -F'\t' -v o=$o 'NR == FNR { t += $1; k++; next } $1 == o { d = $7 - t / k; ok = d < 1e-4 && d > -1e-4 } END { exit !ok }' \
			want res/tree.tsv
	done
	run cut -f 1,13,14 res/tree.tsv
	assert_output "$(printf 'model\ttrain_tok_s\tscore_tok_s\nsoftmax\t448\t1066\nclasses\t-\t-\ntree\t10089\t35042')"
	grep -q 'medians of 3 repeats of `bench/tree-speed`' res/tree.md
	grep -q "V = $(tar xOf $W/tree-s1.model meta | sed -n 's/^vocab_size=//p'); " res/tree.md
	run cut -f 1,2 $O/diffs.tsv
	assert_output "$(printf 'a\tb\ntree\tsoftmax\nclasses\tsoftmax')"
	is_png res/tree.png
	# results-check recomputes every test figure from the kept outputs
	printf 'table\tstatus\ttest_columns\tnote\ntree\tchecked\ttest_mean,test_sd\t\n' >res/outputs/TABLES.tsv
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line 'results-check: 6 figures checked, 0 tables pending'
}

@test "chars-tree.mk chars: the UD French table of word and character inputs" {
	mkdir -p "$BATS_TEST_TMPDIR/ud"
	for f in "$UD"/*.conllu.gz; do
		zcat "$f" | awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 20' > "$BATS_TEST_TMPDIR/ud/$(basename "$f" .gz)"
	done
	run tiny_make chars UD="$BATS_TEST_TMPDIR/ud" DROPOUT=0.25 LR_DECAY=0.5 OPTIM=adam LR=0.002 EPS=0.001
	assert_success
	R="$BATS_TEST_TMPDIR/res/chars.tsv"
	# DROPOUT, LR_DECAY, OPTIM, LR and EPS reach every model and its row
	run cut -f 8-12 "$R"
	assert_output "$(printf 'dropout\tlr_decay\toptim\tlr\teps\n0.25\t0.5\tadam\t0.002\t0.001\n0.25\t0.5\tadam\t0.002\t0.001\n0.25\t0.5\tadam\t0.002\t0.001')"
	for m in word-softmax chars-softmax chars-ll-2500; do
		tar xOf "$BATS_TEST_TMPDIR/work/ud/$m.model" meta >"$BATS_TEST_TMPDIR/meta"
		grep -qx dropout=0.25 "$BATS_TEST_TMPDIR/meta"
		grep -qx lr_decay=0.5 "$BATS_TEST_TMPDIR/meta"
		grep -qx optim=adam "$BATS_TEST_TMPDIR/meta"
		grep -qx eps=0.001 "$BATS_TEST_TMPDIR/meta"
	done
	run cut -f 1,2 "$R"
	assert_output "$(printf 'input\toutput\nword\tsoftmax\nchars\tsoftmax\nchars\tll-2500')"
	run awk -F'\t' 'NR > 1 && !($3 > 0 && $4 > 0 && $5 > 0) { print "bad row: " $0 }' "$R"
	assert_output ""
	is_png "$BATS_TEST_TMPDIR/res/chars.png"
	[ "$(ls "$BATS_TEST_TMPDIR/res/chars-tree-logs")" = "$(printf 'ud-chars-ll-2500.tsv\nud-chars-softmax.tsv\nud-word-softmax.tsv')" ]
}

# a PNG (its 8-byte signature), more than an empty frame, no temporary left
is_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	[ "$(wc -c <"$1")" -gt 10000 ]
	[ -z "$(ls "$(dirname "$1")" | grep -F "$(basename "$1")".)" ]
}

log_of() { # valid figures of epochs 0..: a train --log file
	printf 'epoch\tstep\tseconds\ttrain\tvalid\tlr\n'
	awk -v s="$*" 'BEGIN { n = split(s, v, " "); for (i = 1; i <= n; i++) printf "%d\t%d\t%d\t%s\t%s\t0.001\n", i - 1, 10 * (i - 1), 30 * (i - 1), i == 1 ? "nan" : v[i] + 0.2, v[i] }'
}

@test "valid-curves: a PNG of several logs; a missing, malformed or empty log, or a bad label, writes nothing" {
	cd "$BATS_TEST_TMPDIR"
	log_of 10.7 7.0 6.6 6.5 >a.tsv
	log_of 10.7 7.2 6.9 >b.tsv
	run --separate-stderr "$TOP/scripts/valid-curves" -t "Brown, V = 100" c.png "softmax=a.tsv" "tree (learned)=b.tsv"
	assert_success
	assert_output ""
	[ -z "$stderr" ] || { echo "$stderr"; false; }
	is_png c.png
	# the committed logs draw too
	"$TOP/scripts/valid-curves" full.png $(for f in "$TOP"/results/chars-tree-logs/*.tsv; do echo "$(basename "$f" .tsv)=$f"; done)
	is_png full.png
	run --separate-stderr "$TOP/scripts/valid-curves" out.png "x=nope.tsv"
	assert_failure 1
	assert_output ""
	[ "$stderr" = "valid-curves: nope.tsv: cannot read" ] || { echo "$stderr"; false; }
	log_of 10.7 >e.tsv
	run --separate-stderr "$TOP/scripts/valid-curves" out.png "x=a.tsv" "y=e.tsv"
	assert_failure 1
	[ "$stderr" = "valid-curves: e.tsv: no epoch to draw" ] || { echo "$stderr"; false; }
	printf 'epoch\tvalid\n1\t6.5\n' >h.tsv
	run --separate-stderr "$TOP/scripts/valid-curves" out.png "x=h.tsv"
	assert_failure 1
	[[ "$stderr" == "valid-curves: h.tsv: line 1: not a train --log file"* ]] || { echo "$stderr"; false; }
	{ log_of 10.7 7.0; printf '2\t20\t60\t6.9\n'; } >c.tsv
	run --separate-stderr "$TOP/scripts/valid-curves" out.png "x=c.tsv"
	assert_failure 1
	[ "$stderr" = "valid-curves: c.tsv: line 4: 4 columns, not 6" ] || { echo "$stderr"; false; }
	run --separate-stderr "$TOP/scripts/valid-curves" out.png 'a"b=a.tsv'
	assert_failure 1
	[[ "$stderr" == 'valid-curves: label "a"b": '* ]] || { echo "$stderr"; false; }
	run --separate-stderr "$TOP/scripts/valid-curves" out.png a.tsv
	assert_failure 1
	[ "$stderr" = "valid-curves: a.tsv: not LABEL=LOG" ] || { echo "$stderr"; false; }
	[ -z "$(ls | grep -F out.png)" ]
	run --separate-stderr "$TOP/scripts/valid-curves" out.png
	assert_failure 2
	[[ "$stderr" == *"usage: valid-curves [-t TITLE] OUT.png LABEL=LOG ..."* ]] || { echo "$stderr"; false; }
}

# token-classes on train.txt, $1 and $2 fails with status 1, no output,
# and the message "token-classes: $3".
classes_refuse() {
	run --separate-stderr "$TOP/scripts/token-classes" train.txt "$1" "$2"
	assert_failure 1
	assert_output ""
	[ "$stderr" = "token-classes: $3" ] || { echo "$stderr"; false; }
}

@test "token-classes: two models' nats by the training count of the target word, of the word before, of both; mismatched or malformed files write nothing" {
	cd "$BATS_TEST_TMPDIR"
	printf 'a b a b a a\na\n' >train.txt
	printf -- '-3.5\t3\t0\ta=-1\tb=-2\t</s>=-0.5\n-14.5\t3\t0\tz=-10\tx=y=-4\t</s>=-0.5\n' >a.pt
	printf -- '-4\t3\t0\ta=-0.5\tb=-3\t</s>=-0.5\n-16.5\t3\t0\tz=-12\tx=y=-4\t</s>=-0.5\n' >b.pt
	run --separate-stderr "$TOP/scripts/token-classes" train.txt a.pt b.pt
	assert_success
	[ -z "$stderr" ] || { echo "$stderr"; false; }
	assert_output "$(printf '%b\n' 'by\tclass\ttokens\ta_nats\tb_nats\tshare_of_b_minus_a' \
		'target\tunseen\t2\t7.0000\t8.0000\t+0.3333' 'target\trare\t1\t2.0000\t3.0000\t+0.1667' \
		'target\tfrequent\t3\t0.6667\t0.5000\t-0.0833' 'previous\tunseen\t2\t2.2500\t2.2500\t+0.0000' \
		'previous\trare\t1\t0.5000\t0.5000\t+0.0000' 'previous\tfrequent\t3\t4.3333\t5.1667\t+0.4167' \
		'both\tunseen/unseen\t1\t4.0000\t4.0000\t+0.0000' 'both\tunseen/frequent\t1\t10.0000\t12.0000\t+0.3333' \
		'both\trare/frequent\t1\t2.0000\t3.0000\t+0.1667' 'both\tfrequent/unseen\t1\t0.5000\t0.5000\t+0.0000' \
		'both\tfrequent/rare\t1\t0.5000\t0.5000\t+0.0000' 'both\tfrequent/frequent\t1\t1.0000\t0.5000\t-0.0833' \
		'all\tall\t6\t3.0000\t3.4167\t+0.4167')"
	head -n 1 b.pt >short.pt
	classes_refuse a.pt short.pt "short.pt: fewer lines than a.pt"
	classes_refuse short.pt a.pt "a.pt: more lines than short.pt"
	sed 's/z=/w=/' b.pt >other.pt
	classes_refuse a.pt other.pt "a.pt:2: token 1: z against w in other.pt"
	printf 'not a score line\n' >bad.pt
	classes_refuse bad.pt b.pt "bad.pt:1: not a score --per-token line"
	sed '2s/z=-12/z=oops/' b.pt >nan.pt
	classes_refuse a.pt nan.pt "nan.pt:2: token 1: log-probability oops: not a finite number"
	sed '1s/^-4\t3/-4\t4/' b.pt >count.pt
	classes_refuse a.pt count.pt "count.pt:1: 3 tokens, the line says 4"
	# an empty training text: every target unseen but </s>
	: >empty.txt
	run --separate-stderr "$TOP/scripts/token-classes" empty.txt a.pt b.pt
	assert_success
	assert_line --index 1 "$(printf 'target\tunseen\t4\t4.2500\t4.8750\t+0.4167')"
	classes_refuse a.pt nope.pt "nope.pt: cannot read"
}
