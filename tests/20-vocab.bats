#!/usr/bin/env bats
# vocab: counting, </s> per sentence, order, --min-count, --top, merging
# count files, error paths.

load test_helper

V="$FIXTURES/vocab"

@test "vocab: golden counts (</s> per sentence, empty lines count nothing, ties in byte order)" {
	vocab "$V/tokens.txt" >"$BATS_TEST_TMPDIR/out"
	cmp "$V/tokens.golden" "$BATS_TEST_TMPDIR/out"
}

@test "vocab: ties are in byte order (memcmp), most frequent first" {
	run vocab <<<$'b \xc3\xa9 ab a B a'
	assert_success
	assert_output $'a\t2\n</s>\t1\nB\t1\nab\t1\nb\t1\n\xc3\xa9\t1'
}

@test "vocab: --min-count and --top (after sorting; </s> counts like any token)" {
	run vocab --min-count 2 "$V/tokens.txt"
	assert_success
	assert_output $'</s>\t4\nchat\t2\ndort\t2\nle\t2'
	run vocab --top 2 "$V/tokens.txt"
	assert_success
	assert_output $'</s>\t4\nchat\t2'
	run vocab --top 0 "$V/tokens.txt"
	assert_success
	assert_output ""
	run vocab --min-count 2 --top 3 "$V/tokens.txt"
	assert_success
	assert_output $'</s>\t4\nchat\t2\ndort\t2'
}

@test "vocab -m: merging shard counts equals counting the concatenation" {
	split -l 2 "$V/tokens.txt" "$BATS_TEST_TMPDIR/shard."
	for s in "$BATS_TEST_TMPDIR"/shard.*; do vocab -o "$s.tsv" "$s"; done
	vocab -m "$BATS_TEST_TMPDIR"/shard.*.tsv >"$BATS_TEST_TMPDIR/merged"
	cmp "$V/tokens.golden" "$BATS_TEST_TMPDIR/merged"
	gzip -c "$BATS_TEST_TMPDIR/merged" >"$BATS_TEST_TMPDIR/merged.gz"
	run vocab --merge --top 1 "$BATS_TEST_TMPDIR/merged.gz" "$BATS_TEST_TMPDIR/merged"
	assert_success
	assert_output $'</s>\t8'
}

@test "vocab: tok | vocab on real text" {
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | vocab >"$BATS_TEST_TMPDIR/v"
	sents=$(tok --from conllu "$UD/fr_sequoia-ud-dev.conllu.gz" | grep -c .)
	[ "$sents" -eq 200 ]
	[ "$(grep -P '^</s>\t' "$BATS_TEST_TMPDIR/v" | cut -f2)" -eq "$sents" ]
	# counts are non-increasing
	cut -f2 "$BATS_TEST_TMPDIR/v" | sort -c -n -r
	grep -qP '^de\t[0-9]+$' "$BATS_TEST_TMPDIR/v"
}

@test "vocab: -h prints usage on stdout" {
	run vocab -h
	assert_success
	assert_output --partial "usage: vocab"
}

@test "vocab: the man page EXAMPLES" {
	cd "$V"
	run sh -c 'tok -l tokens.txt | vocab --min-count 2'
	assert_success
	assert_line --index 0 $'</s>\t4'
	vocab -o "$BATS_TEST_TMPDIR/a.tsv" tokens.txt
	vocab -o "$BATS_TEST_TMPDIR/b.tsv" tokens.txt
	run vocab -m "$BATS_TEST_TMPDIR/a.tsv" "$BATS_TEST_TMPDIR/b.tsv"
	assert_success
	assert_line --index 0 $'</s>\t8'
}

@test "vocab: error: malformed count files name file:line" {
	printf 'a\t1\nb 2\n' >"$BATS_TEST_TMPDIR/c.tsv"
	run_err 1 "^vocab: $BATS_TEST_TMPDIR/c.tsv:2: expected token<TAB>count" vocab -m "$BATS_TEST_TMPDIR/c.tsv"
	printf 'a\tx\n' >"$BATS_TEST_TMPDIR/c.tsv"
	run_err 1 "c.tsv:1: bad count 'x'" vocab -m "$BATS_TEST_TMPDIR/c.tsv"
	printf '\t3\n' >"$BATS_TEST_TMPDIR/c.tsv"
	run_err 1 "c.tsv:1: empty token" vocab -m "$BATS_TEST_TMPDIR/c.tsv"
	printf 'a\t99999999999999999999\n' >"$BATS_TEST_TMPDIR/c.tsv"
	run_err 1 "c.tsv:1: count too large" vocab -m "$BATS_TEST_TMPDIR/c.tsv"
	printf 'a\t9223372036854775807\na\t1\n' >"$BATS_TEST_TMPDIR/c.tsv"
	run_err 1 "c.tsv:2: count overflows" vocab -m "$BATS_TEST_TMPDIR/c.tsv"
}

@test "vocab: error: invalid UTF-8, missing file, no partial -o file" {
	printf 'a b\n\xff\n' >"$BATS_TEST_TMPDIR/bad.txt"
	run_err 1 "^vocab: $BATS_TEST_TMPDIR/bad.txt:2: invalid UTF-8" vocab -o "$BATS_TEST_TMPDIR/o" "$BATS_TEST_TMPDIR/bad.txt"
	[ ! -e "$BATS_TEST_TMPDIR/o" ]
	run_err 1 "^vocab: $BATS_TEST_TMPDIR/nope: No such file" vocab "$BATS_TEST_TMPDIR/nope"
}

@test "vocab: error: bad options exit 2 with usage" {
	run_err 2 "^vocab: --bogus: unknown option" vocab --bogus
	run_err 2 "^usage: vocab" vocab -z
	run_err 2 "^vocab: --min-count: not an integer: 'x'" vocab --min-count x
	run_err 2 "^vocab: --top: -1 out of range" vocab --top -1
	run_err 2 "missing argument" vocab --top
}
