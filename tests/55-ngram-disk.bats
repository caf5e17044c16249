#!/usr/bin/env bats
# n-gram estimation on disk (issue 49): train --ngram with counts beyond
# --memory sorts them in runs in --temp-dir and estimates from sorted
# streams.  The ARPA file must be byte for byte the in-memory one; the
# knob LLRNN_NGRAM_SORT=RECORDS,FANIN (train(1), ENVIRONMENT) forces
# small runs and a fan-in of 2, so a slice of Brown goes through several
# runs and multi-pass merges at every stage.  Then the error paths: the
# temporary folder missing, not a folder, unwritable or full, a budget
# too small, the probing form past the budget.  The trie form is built
# from the same streams, member by member, the in-memory bytes too.

load test_helper

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from tagged -l "$BROWN" 2>/dev/null >"$m/all.tok"
	head -n 800 "$m/all.tok" >"$m/c.tok"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
	mkdir tmp
}

# A tmpfs mounted by a test (a full file system) is unmounted, pass or fail.
teardown() {
	if [ -n "${MOUNTED-}" ]; then
		umount "$MOUNTED"
	fi
}

# held [OPTION...]: the MiB train holds before counting (taken off
# --memory) with those options, rounded up:
# more under a sanitizer.
held() {
	printf 'a b\n' >held.tok
	train -v --ngram 2 --discount-fallback "$@" -o held.arpa held.tok 2>&1 |
		awk '/^train: the program holds [0-9.]* MiB before counting/ { print int($5) + 1 }'
	rm -f held.tok held.arpa
}

# The folder of temporary files is empty.
tmp_empty() {
	[ -z "$(ls -A "${1:-tmp}")" ] || { ls -la "${1:-tmp}" >&2; return 1; }
}

@test "train --ngram on disk: the in-memory ARPA bytes, orders 2 to 5, with --prune and --discount-fallback, through multi-pass merges" {
	export LLRNN_NGRAM_SORT=100,2
	# one thread (test 6 runs the threads): a run of 100 records handed to
	# a thread of its own costs a wait on the scheduler, and thousands of
	# them took 16 s a model against 0.4 s on a loaded machine
	for n in 2 3 4 5; do
		for extra in "" "--prune 0,1" "--prune 0,0,1,2" "--discount-fallback" "--prune 0,1,1 --discount-fallback"; do
			LLRNN_NGRAM_SORT= train -q --ngram $n $extra -o mem.arpa "$M/c.tok"
			train --ngram $n $extra --threads 1 --temp-dir tmp -o disk.arpa "$M/c.tok" 2>err
			grep -Eq '^train: counts beyond --memory sorted on disk: [0-9]+ runs, [1-9][0-9]* merge passes' err || { cat err >&2; false; }
			cmp mem.arpa disk.arpa
			# the trie form, built from the sorted streams: the in-memory bytes
			LLRNN_NGRAM_SORT= train -q --ngram $n $extra -o mem.bin "$M/c.tok"
			train -q --ngram $n $extra --threads 1 --temp-dir tmp -o disk.bin "$M/c.tok"
			cmp mem.bin disk.bin
		done
	done
	tmp_empty
	# the fan-in bounds the merges: 2 takes more passes than 64
	LLRNN_NGRAM_SORT=100,2 train --ngram 3 --threads 1 --temp-dir tmp -o two.arpa "$M/c.tok" 2>two.err
	LLRNN_NGRAM_SORT=100,64 train --ngram 3 --threads 1 --temp-dir tmp -o wide.arpa "$M/c.tok" 2>wide.err
	two=$(sed -n 's/.* runs, \([0-9]*\) merge passes.*/\1/p' two.err)
	wide=$(sed -n 's/.* runs, \([0-9]*\) merge passes.*/\1/p' wide.err)
	[ "$two" -gt "$wide" ] || { echo "passes: fan-in 2 $two, 64 $wide" >&2; false; }
	# where the discounts need the fallback: the same model, the same error without it
	printf 'a b a\nb a c\n' >tiny.tok
	LLRNN_NGRAM_SORT= train -q --ngram 3 --discount-fallback -o mem.arpa tiny.tok
	LLRNN_NGRAM_SORT=1,2 train -q --ngram 3 --discount-fallback --threads 1 --temp-dir tmp -o disk.arpa tiny.tok
	cmp mem.arpa disk.arpa
	LLRNN_NGRAM_SORT=1,2 run_err 1 '^train: cannot compute the Kneser-Ney discounts of the 1-grams: no 1-gram has adjusted count 3' train --ngram 3 --threads 1 --temp-dir tmp -o x.arpa tiny.tok
	[ ! -e x.arpa ]
	tmp_empty
}

# below_memory N FILE: a budget 1 MiB under what train -v says estimating
# FILE's N-grams in memory takes (the program itself included), so the
# budget alone sends them to disk; the 4-gram of all.tok takes about
# 14 MiB in memory and 11 on disk, a window wider than the program's own
# size varies between runs
below_memory() {
	train -v --ngram "$1" -o below.arpa "$2" 2>&1 >/dev/null |
		awk '/^train: estimating in memory takes at most [0-9.]* MiB/ { print int($8 * 1024) - 1024 "K" }'
	rm -f below.arpa
}

@test "train --ngram on disk: the budget alone sends the counts to disk, with the same ARPA bytes" {
	b=$(below_memory 4 "$M/all.tok")
	[ -n "$b" ]
	train -q --ngram 4 -o mem.arpa "$M/all.tok"
	train --ngram 4 --memory "$b" --temp-dir tmp -o disk.arpa "$M/all.tok" 2>err
	grep -q 'sorted on disk' err
	cmp mem.arpa disk.arpa
	TMPDIR="$PWD/tmp" train -v --ngram 4 --memory "$b" "$M/all.tok" 2>err >disk4.arpa
	grep -q 'sorted on disk' err
	cmp mem.arpa disk4.arpa
	tmp_empty
}

@test "train --ngram on disk: from a pipe, to standard output or a compressed file" {
	export LLRNN_NGRAM_SORT=100,3
	# one thread, as in test 1
	LLRNN_NGRAM_SORT= train -q --ngram 3 -o mem.arpa "$M/c.tok"
	cat "$M/c.tok" | train -q --ngram 3 --threads 1 --temp-dir tmp >out.arpa
	cmp mem.arpa out.arpa
	cat "$M/c.tok" | train -q --ngram 3 --threads 1 --temp-dir tmp -o - - >dash.arpa
	cmp mem.arpa dash.arpa
	train -q --ngram 3 --threads 1 --temp-dir tmp -o lm.arpa.gz "$M/c.tok"
	gzip -dc lm.arpa.gz | cmp - mem.arpa
	tmp_empty
}

@test "train --ngram on disk: error paths (temporary folder missing, not a folder, unwritable, full; budget too small; the probing form)" {
	export LLRNN_NGRAM_SORT=100,2
	run_err 1 '^train: nowhere: No such file or directory \(--temp-dir\)$' train --ngram 3 --temp-dir nowhere -o x.arpa "$M/c.tok"
	touch afile
	run_err 1 '^train: afile: not a folder this process can write in \(--temp-dir\)$' train --ngram 3 --temp-dir afile -o x.arpa "$M/c.tok"
	# TMPDIR, the default, is only looked at when the counts spill
	TMPDIR="$PWD/gone" run_err 1 "^train: $PWD/gone: cannot create a temporary file: No such file or directory$" train --ngram 3 -o x.arpa "$M/c.tok"
	[ ! -e x.arpa ]
	if [ "$(id -u)" != 0 ]; then
		mkdir ro && chmod 555 ro
		run_err 1 '^train: ro: not a folder' train --ngram 3 --temp-dir ro -o x.arpa "$M/c.tok"
		TMPDIR="$PWD/ro" run_err 1 "^train: $PWD/ro: cannot create a temporary file: Permission denied$" train --ngram 3 -o x.arpa "$M/c.tok"
		tmp_empty ro
	fi
	# a full disk, as a file size limit (SIGXFSZ ignored, so write fails
	# with EFBIG): to a file and to standard output, nothing written
	for o in "-o x.arpa" ""; do
		set +e
		(trap '' XFSZ; ulimit -f 32; exec train --ngram 4 --temp-dir tmp $o "$M/c.tok") >out 2>err
		rc=$?
		set -e
		[ "$rc" -eq 1 ] || { echo "status $rc" >&2; cat err >&2; false; }
		[ ! -s out ]
		grep -q '^train: tmp: cannot write a temporary file: File too large$' err
	done
	[ ! -e x.arpa ]
	tmp_empty
	[ "$(ls)" = "$(printf 'afile\nerr\nerr.err\nerr.out\nout\ntmp')" ]
	# a budget too small for the vocabulary: refused with the least that works
	seq 1 40000 | awk '{ print "w" $1, "v" $1 }' >wide.tok
	LLRNN_NGRAM_SORT= run_err 1 '^train: wide.tok:[0-9]+: a memory budget of 1 MiB is too small to count 3-grams on disk: give at least [0-9]+ MiB \(--memory\)$' train --ngram 3 --memory 1M --temp-dir tmp -o x.arpa wide.tok
	[ ! -e x.arpa ]
	# that least counts the program itself (held), not a part of the 1 MiB
	[ "$(sed -n 's/.* give at least \([0-9]*\) MiB (--memory)$/\1/p' err.err)" -ge "$(held)" ]
	# counted, but too small to estimate: refused with a least that works
	# (its stream buffers grow with the budget), which gives the bytes of
	# the in-memory path.  The least budget that counts is found, not
	# assumed: what the program holds varies by a fraction of a MiB from
	# run to run (8.9 to 9.2 MiB here: held + 4 counted in one run and not
	# in another), and under AddressSanitizer by --threads (45 MiB at
	# --threads 1 against 29), so the budget rises a MiB at a time from
	# what it holds; the first that counts must stop at the estimation.
	# (One thread: counting with two holds their counts twice.)
	h=$(held --threads 1)
	b=$h
	while :; do
		set +e
		LLRNN_NGRAM_SORT= train --ngram 3 --threads 1 --discount-fallback --memory "${b}M" --temp-dir tmp -o x.arpa wide.tok >out 2>err
		rc=$?
		set -e
		grep -q 'too small to count' err || break
		[ "$b" -lt "$((h + 32))" ] || { echo "no budget up to $b MiB counts" >&2; false; }
		b=$((b + 1))
	done
	# (that run itself is checked: the same budget may count in one run
	# and not in the next)
	[ "$rc" -eq 1 ] || { echo "status $rc" >&2; cat err >&2; false; }
	[ ! -s out ]
	grep -Eqx "train: a memory budget of $b MiB is too small to estimate on disk: this vocabulary needs [0-9]+ MiB at least" err || { cat err >&2; false; }
	[ ! -e x.arpa ]
	least=$(sed -n 's/.* needs \([0-9]*\) MiB at least$/\1/p' err)
	[ "$least" -gt "$b" ]
	train -q --ngram 3 --threads 1 --discount-fallback --memory "${least}M" --temp-dir tmp -o x.arpa wide.tok
	train -q --ngram 3 --discount-fallback -o mem.arpa wide.tok
	cmp mem.arpa x.arpa
	rm x.arpa mem.arpa
	# the probing form is a hash table built in memory: refused on disk,
	# with the way round (the trie form is built on disk, tested above)
	run_err 1 '^train: lm.bin: the counts outgrew --memory and were sorted on disk, where the probing form cannot be built .*write the trie form \(--format trie\) or ARPA' \
		train --ngram 3 --format probing --temp-dir tmp -o lm.bin "$M/c.tok"
	[ ! -e lm.bin ]
	# --format with an ARPA output is refused before any counting
	run_err 2 '^train: --format: for a binary output' train --ngram 3 --format trie --temp-dir tmp -o x.arpa "$M/c.tok"
	[ ! -e x.arpa ]
	LLRNN_NGRAM_SORT=abc run_err 1 "^train: LLRNN_NGRAM_SORT: 'abc' is not RECORDS\[,FANIN\]" train --ngram 3 -o x.arpa "$M/c.tok"
	tmp_empty
}

@test "train --ngram on disk: a file system that fills up (a tmpfs of 256 KiB) under the temporary files or the output: ENOSPC named, nothing left behind" {
	mkdir fs
	mount -t tmpfs -o size=256k tmpfs fs 2>/dev/null || skip "cannot mount a tmpfs here (root only)"
	MOUNTED=$PWD/fs
	export LLRNN_NGRAM_SORT=100,2
	# the temporary files: to a file and to standard output
	run_err 1 '^train: fs: cannot write a temporary file: No space left on device$' train --ngram 4 --temp-dir fs -o x.arpa "$M/c.tok"
	[ ! -e x.arpa ]
	run_err 1 '^train: fs: cannot write a temporary file: No space left on device$' train --ngram 4 --temp-dir fs "$M/c.tok"
	tmp_empty fs
	# the output, estimated on disk and in memory, plain and compressed:
	# no half-written file (nor its temporary) stays
	run_err 1 '^train: fs/x.arpa: No space left on device$' train --ngram 4 --temp-dir tmp -o fs/x.arpa "$M/c.tok"
	tmp_empty fs
	tmp_empty
	LLRNN_NGRAM_SORT= run_err 1 '^train: fs/x.arpa: No space left on device$' train --ngram 4 -o fs/x.arpa "$M/c.tok"
	LLRNN_NGRAM_SORT= run_err 1 '^train: fs/x.arpa.gz: No space left on device$' train --ngram 4 -o fs/x.arpa.gz "$M/c.tok"
	LLRNN_NGRAM_SORT= run_err 1 '^train: fs/x.bin: .*No space left on device$' train --ngram 4 -o fs/x.bin "$M/c.tok"
	run_err 1 '^train: fs/x.bin: .*No space left on device$' train --ngram 4 --temp-dir tmp -o fs/x.bin "$M/c.tok"
	tmp_empty fs
	tmp_empty
	# the trie form's members gather in the temporary folder
	run_err 1 '^train: fs: .*No space left on device$' train --ngram 4 --temp-dir fs -o x.bin "$M/c.tok"
	[ ! -e x.bin ]
	tmp_empty fs
	# the same runs fit on a larger disk: the failures were the space
	train -q --ngram 4 --temp-dir tmp -o x.arpa "$M/c.tok"
	[ "$(stat -c %s x.arpa)" -gt 262144 ]
}

@test "train --ngram on disk: --threads 2 and 3 (runs sorted and spilled in threads, each order's lines written while the next is interpolated) give the bytes of one thread and of the in-memory path; their errors; --threads out of range refused" {
	export LLRNN_NGRAM_SORT=500,3
	train -q --ngram 4 --prune 0,0,1 --threads 1 --temp-dir tmp -o one.arpa "$M/c.tok"
	train -q --ngram 4 --prune 0,0,1 --threads 1 --temp-dir tmp -o one.bin "$M/c.tok"
	for t in 2 3; do
		train --ngram 4 --prune 0,0,1 --threads $t --temp-dir tmp -o t$t.arpa "$M/c.tok" 2>err
		grep -Eq '^train: counts beyond --memory sorted on disk: [0-9]+ runs, [1-9][0-9]* merge passes' err || { cat err >&2; false; }
		cmp one.arpa t$t.arpa
		train -q --ngram 4 --prune 0,0,1 --threads $t --temp-dir tmp -o t$t.bin "$M/c.tok"
		cmp one.bin t$t.bin
	done
	# the default is the cores: the same bytes
	train -q --ngram 4 --prune 0,0,1 --temp-dir tmp -o dflt.arpa "$M/c.tok"
	cmp one.arpa dflt.arpa
	# in memory (its sorts split among the threads too): the same bytes
	for t in 1 3; do
		LLRNN_NGRAM_SORT= train -q --ngram 4 --prune 0,0,1 --threads $t -o mem.arpa "$M/c.tok"
		cmp one.arpa mem.arpa
		LLRNN_NGRAM_SORT= train -q --ngram 4 --prune 0,0,1 --threads $t -o mem.bin "$M/c.tok"
		cmp one.bin mem.bin
	done
	tmp_empty
	# a write that fails in a spill's thread or in the lines' writer
	# thread: the same error as with one thread, nothing left
	for t in 1 2; do
		for o in "-o x.arpa" "-o x.bin" ""; do
			set +e
			(trap '' XFSZ; ulimit -f 32; exec train --ngram 4 --threads $t --temp-dir tmp $o "$M/c.tok") >out 2>err
			rc=$?
			set -e
			[ "$rc" -eq 1 ] || { echo "--threads $t $o: status $rc" >&2; cat err >&2; false; }
			[ ! -s out ]
			grep -q '^train: tmp: cannot write a temporary file: File too large$' err || { cat err >&2; false; }
			[ ! -e x.arpa ] && [ ! -e x.bin ]
			tmp_empty
		done
	done
	run_err 2 '^train: --threads' train --ngram 3 --threads 0 -o x.arpa "$M/c.tok"
	run_err 2 '^train: --threads' train --ngram 3 --threads 65 -o x.arpa "$M/c.tok"
	[ ! -e x.arpa ]
}

# The peak resident memory of a command, in KiB, to the file $RSS (the
# command's status kept): getrusage of the children, Python's standard library.
peak_rss() {
	/usr/bin/python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$RSS" "$@"
}

@test "train --ngram: counts that fit --memory but whose estimation in memory would not are estimated on disk, within the budget, the same ARPA and trie bytes" {
	# 388,186 tokens of 30,000 types drawn with a skew (awk's rand):
	# 4-grams counted in about 18 MiB, estimated in memory in about 40
	# (and the program: held)
	awk 'BEGIN { srand(7); for (s = 0; s < 25000; s++) { n = 5 + int(rand() * 20); line = "";
		for (i = 0; i < n; i++) line = line (i ? " " : "") "w" int(rand() * rand() * 30000); print line } }' >gen.tok
	train -q --ngram 4 --discount-fallback -o mem.arpa gen.tok
	b=$(($(held) + 22))
	RSS=mem.rss peak_rss train -v --ngram 4 --discount-fallback -o mem2.arpa gen.tok 2>mem.err
	grep -q '^train: estimating in memory takes at most [0-9.]* MiB, within --memory (1024.0 MiB): estimating in memory$' mem.err
	cmp mem.arpa mem2.arpa
	RSS=disk.rss peak_rss train -v --ngram 4 --discount-fallback --memory ${b}M --temp-dir tmp -o disk.arpa gen.tok 2>disk.err
	cat disk.err >&2
	# counted in memory (not "beyond --memory"), estimated on disk
	grep -q "^train: estimating in memory takes at most [0-9.]* MiB, more than --memory ($b.0 MiB): estimating on disk\$" disk.err
	grep -q '^train: counts sorted on disk: [0-9]* runs' disk.err
	cmp mem.arpa disk.arpa
	tmp_empty
	# within the budget, the program itself (about 10 MiB of code and
	# libraries before counting) included, where the in-memory estimation
	# goes past it (not under a sanitizer, whose shadow memory is RSS too)
	mem=$(cat mem.rss) disk=$(cat disk.rss)
	echo "peak RSS: in memory $mem KiB, --memory ${b}M $disk KiB" >&2
	if [ -z "${SANITIZE:-}" ]; then
		[ "$disk" -le $((b * 1024)) ]
		[ "$mem" -gt $((b * 1024)) ]
	fi
	# the trie form is built on disk within the budget too, the bytes of
	# the in-memory one
	RSS=trie.rss peak_rss train -v --ngram 4 --discount-fallback --memory ${b}M --temp-dir tmp -o lm.bin gen.tok 2>trie.err
	grep -q "more than --memory ($b.0 MiB): estimating on disk\$" trie.err
	train -q --convert mem.arpa -o mem.bin
	cmp lm.bin mem.bin
	tmp_empty
	trie=$(cat trie.rss)
	echo "peak RSS: the trie form, --memory ${b}M $trie KiB" >&2
	if [ -z "${SANITIZE:-}" ]; then
		[ "$trie" -le $((b * 1024)) ]
	fi
	# the probing form needs the model in memory: estimated there all the
	# same, and -v says so
	train -v --ngram 4 --discount-fallback --memory ${b}M --format probing --temp-dir tmp -o lm.probing gen.tok 2>bin.err
	grep -q "more than --memory ($b.0 MiB): in memory all the same, for the probing form\$" bin.err
	train -q --convert mem.arpa --format probing -o mem.probing
	cmp lm.probing mem.probing
	tmp_empty
}
