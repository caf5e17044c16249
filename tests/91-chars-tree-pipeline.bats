#!/usr/bin/env bats
# 91-chars-tree-pipeline.bats - pipelines/chars-tree.mk end to end on the
# fixtures (the Brown slice, a tiny cut of the UD French slice), tiny
# networks and seconds of training: the wiring and the tables' layout, not
# the figures of the full run.

load test_helper

MK="$TOP/pipelines/chars-tree.mk"

tiny_make() {
	make -C "$TOP" -f "$MK" WORK="$BATS_TEST_TMPDIR/work" RESULTS="$BATS_TEST_TMPDIR/res" \
		MAXTIME=2s EPOCHS=2 EMBED=8 HIDDEN=8 LAYERS=1 THREADS=1 SPEED_TOKENS=200 "$@"
}

@test "chars-tree.mk tree: the Brown table of the softmax, class and tree outputs" {
	run tiny_make tree BROWN="$BROWN"
	assert_success
	R="$BATS_TEST_TMPDIR/res/tree.tsv"
	assert_file_exist "$R"
	run cut -f 1 "$R"
	assert_output "$(printf 'output\nsoftmax\nclasses\ntree')"
	# V, tokens/s and a finite test log-perplexity on every row
	run awk -F'\t' 'NR > 1 && !($2 > 1000 && $3 > 0 && $4 > 0 && $4 < 20) { print "bad row: " $0 }' "$R"
	assert_output ""
}

@test "chars-tree.mk chars: the UD French table of word and character inputs" {
	mkdir -p "$BATS_TEST_TMPDIR/ud"
	for f in "$UD"/*.conllu.gz; do
		zcat "$f" | awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 20' > "$BATS_TEST_TMPDIR/ud/$(basename "$f" .gz)"
	done
	run tiny_make chars UD="$BATS_TEST_TMPDIR/ud"
	assert_success
	R="$BATS_TEST_TMPDIR/res/chars.tsv"
	run cut -f 1,2 "$R"
	assert_output "$(printf 'input\toutput\nword\tsoftmax\nchars\tsoftmax\nchars\tll-2500')"
	run awk -F'\t' 'NR > 1 && !($3 > 0 && $4 > 0 && $5 > 0) { print "bad row: " $0 }' "$R"
	assert_output ""
}
