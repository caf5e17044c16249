#!/usr/bin/env bats
# 86-compress.bats - -o FILE.gz, .bz2, .xz and .zst: every tool writes its
# output compressed by the name's suffix (text and tensor archives alike),
# the same bytes as plain -o once decompressed, atomically; standard
# output is never compressed.  Fixtures only.

bats_require_minimum_version 1.5.0
load test_helper

SUFFIXES="gz bz2 xz zst"

unz() { # FILE: its decompressed bytes on stdout, by the tool of its suffix
	case $1 in
	*.gz) gzip -dc "$1" ;;
	*.bz2) bzip2 -dc "$1" ;;
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -qdc "$1" ;;
	esac
}

# check NAME CMD...: CMD -o NAME, then CMD -o NAME.SUF for every suffix;
# each decompresses to NAME's bytes, really is compressed, and no
# temporary is left behind.
check() {
	local name=$1
	shift
	"$@" -o "$name" 2>/dev/null
	[ -s "$name" ]
	for s in $SUFFIXES; do
		"$@" -o "$name.$s" 2>/dev/null
		unz "$name.$s" | cmp - "$name"
		! cmp -s "$name.$s" "$name"
	done
	run bash -c 'ls | grep tmp'
	assert_failure
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	cat "$FIXTURES/featurize/tiny.tok" "$FIXTURES/tok/fr.golden" >train.tok
}

@test "compress: tok, vocab and featurize --dump write .gz .bz2 .xz .zst" {
	check tok.out tok --lang fr "$FIXTURES/tok/fr.txt"
	check vocab.out vocab train.tok
	check dump.out featurize --top 5 --ortho --dump train.tok
	# standard output and other names are never compressed
	tok --lang fr "$FIXTURES/tok/fr.txt" >stdout.out
	tok --lang fr -o - "$FIXTURES/tok/fr.txt" >dash.out
	tok --lang fr -o plain.gzip "$FIXTURES/tok/fr.txt"
	cmp stdout.out tok.out
	cmp dash.out tok.out
	cmp plain.gzip tok.out
}

@test "compress: featurize's tensor stream and train's n-gram models (ARPA, binary)" {
	check stream.fz featurize --top 5 --ortho train.tok
	# a compressed stream trains as the plain one does
	featurize --top 5 --ortho -o s.fz.zst train.tok
	run train -q -s 1 --hidden 8 --embed 8 --layers 1 --threads 1 --epochs 1 -o m.llrnn s.fz.zst
	assert_success
	check lm.arpa train -q --ngram 2 --discount-fallback train.tok
	check lm.bin train -q --ngram 2 --discount-fallback train.tok
	# and score reads the compressed ARPA
	echo 'le chat dort' >one.tok
	score -q -m lm.arpa one.tok >plain.score
	run --separate-stderr score -q -m lm.arpa.xz one.tok
	assert_success
	assert_output "$(cat plain.score)"
}

@test "compress: train's model, score, gen and disc-pairs" {
	featurize --top 5 --ortho -o train.fz train.tok
	train -q -s 1 --hidden 8 --embed 8 --layers 1 --threads 1 --epochs 1 -o m.llrnn.gz train.fz
	gzip -dc m.llrnn.gz >m.llrnn
	tar tf m.llrnn | grep -qx meta
	head -n 5 train.tok >five.tok
	check scores.out score -q -m m.llrnn five.tok
	# the compressed model scores as the plain one
	run --separate-stderr score -q -m m.llrnn.gz five.tok
	assert_success
	assert_output "$(cat scores.out)"
	check gen.out gen -m m.llrnn -n 5 -s 7 --max-len 8
	check pairs.out disc-pairs -s 1 "$FIXTURES/disc-pairs/garden.txt"
}

@test "compress: an unwritable directory is an error and leaves nothing behind" {
	mkdir ro
	chmod 555 ro
	if touch ro/probe 2>/dev/null; then
		rm -f ro/probe
		skip "running as a user who can write a mode 555 directory (root)"
	fi
	for s in $SUFFIXES; do
		run_err 1 "^tok: ro/out\.$s: Permission denied" tok --lang fr -o "ro/out.$s" "$FIXTURES/tok/fr.txt"
		run_err 1 "^featurize: ro/s\.fz\.$s: Permission denied" featurize --top 5 -o "ro/s.fz.$s" train.tok
		run_err 1 "^train: ro/lm\.arpa\.$s: Permission denied" train -q --ngram 2 --discount-fallback -o "ro/lm.arpa.$s" train.tok
	done
	run ls -A ro
	assert_output ""
	# once writable, the same commands write compressed files
	chmod 755 ro
	tok --lang fr "$FIXTURES/tok/fr.txt" >tok.out
	for s in $SUFFIXES; do
		tok --lang fr -o "ro/out.$s" "$FIXTURES/tok/fr.txt"
		unz "ro/out.$s" | cmp - tok.out
	done
}

@test "compress: a file where the directory should be is an error and leaves nothing behind" {
	touch notdir
	for s in $SUFFIXES; do
		run_err 1 "^tok: notdir/out\.$s: Not a directory" tok --lang fr -o "notdir/out.$s" "$FIXTURES/tok/fr.txt"
		run_err 1 "^featurize: notdir/s\.fz\.$s: Not a directory" featurize --top 5 -o "notdir/s.fz.$s" train.tok
		run_err 1 "^train: notdir/lm\.arpa\.$s: Not a directory" train -q --ngram 2 --discount-fallback -o "notdir/lm.arpa.$s" train.tok
	done
	[ ! -s notdir ]
	run bash -c 'ls | grep tmp'
	assert_failure
	# where the directory is one, the same commands write compressed files
	rm notdir
	mkdir notdir
	tok --lang fr "$FIXTURES/tok/fr.txt" >tok.out
	for s in $SUFFIXES; do
		tok --lang fr -o "notdir/out.$s" "$FIXTURES/tok/fr.txt"
		unz "notdir/out.$s" | cmp - tok.out
	done
}

@test "compress: a write error in a compressed file leaves nothing behind" {
	# a file-size limit (SIGXFSZ ignored, so write(2) fails with EFBIG)
	# stands in for a full disk
	tok --from tagged -l "$BROWN" 2>/dev/null >big.tok
	vocab -o big.gz big.tok
	[ "$(stat -c %s big.gz)" -gt 4096 ]
	for s in $SUFFIXES; do
		run --separate-stderr bash -c "trap '' XFSZ; ulimit -f 2; exec vocab -o out.$s big.tok"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[[ $stderr == "vocab: out.$s: write error: File too large" ]]
		[ ! -e "out.$s" ]
	done
	run bash -c 'ls | grep tmp'
	assert_failure
	# without the limit, the same command writes it whole
	vocab big.tok >big.vocab
	for s in $SUFFIXES; do
		vocab -o "out.$s" big.tok
		unz "out.$s" | cmp - big.vocab
	done
}
