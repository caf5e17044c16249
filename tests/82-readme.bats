#!/usr/bin/env bats
# README.md: every example block marked "<!-- example: ... -->" runs as a
# reader pasting them in order would, from the root of the clone: one
# shell, the blocks in order, bin/ on PATH only as the README puts it
# there.  The data variables (D=, B=) are the only lines changed: they
# point at the slices under tests/fixtures instead of the data sets
# beside the clone.

load test_helper

# The marked blocks of README.md, in order, as one script: the indented
# lines after each marker (up to the first line that is neither indented
# nor blank), unindented.
readme_blocks() {
	awk '
		/^<!-- example/ { want = 1; inblock = 0; next }
		want && /^    / { inblock = 1; print substr($0, 5); next }
		want && /^[ \t]*$/ { if (inblock) print ""; next }
		want { want = 0; inblock = 0; nblocks++ }
		END { if (want) nblocks++; print "# " nblocks + 0 " blocks" > "/dev/stderr" }
	' "$TOP/README.md"
}

@test "README: the marked example blocks run as written, on the fixture slices" {
	cd "$BATS_TEST_TMPDIR"
	readme_blocks >blocks.sh 2>count
	# the UD French run and the Brown run, at least
	[ "$(sed -n 's/^# \([0-9]*\) blocks$/\1/p' count)" -ge 2 ]
	# each data variable is set once and then pointed at a fixture
	[ "$(grep -c '^D=' blocks.sh)" -eq 1 ]
	[ "$(grep -c '^B=' blocks.sh)" -eq 1 ]
	sed -e "s|^D=[^ ]*|D=$UD|" -e "s|^B=[^ ]*|B=$BROWN|" blocks.sh >run.sh
	run grep -n 'shared' run.sh
	assert_failure
	# PATH without bin/: the README itself must put it there
	export PATH=/usr/local/bin:/usr/bin:/bin
	export TMPDIR="$BATS_TEST_TMPDIR"
	cd "$TOP"
	run bash -e "$BATS_TEST_TMPDIR/run.sh"
	assert_success
	refute_output --partial 'command not found'
	# the blocks worked in a scratch directory, not in the clone
	for f in train.tok valid.tok train.llr model.llr brown.tok brown.llr brown.model pairs.tsv; do
		assert_file_not_exist "$TOP/$f"
	done
	d=$(find "$BATS_TEST_TMPDIR" -mindepth 2 -name train.tok -printf '%h\n')
	[ -n "$d" ]
	# the UD French run: tokens, a model, one score line per validation line
	[ -s "$d/train.tok" ]
	[ -s "$d/valid.tok" ]
	[ -s "$d/model.llr" ]
	# (and the Brown run's one line of raw text)
	[ "$(grep -cE $'^-[0-9]+\\.[0-9]{4}\t[1-9][0-9]*\t[0-9]+$' <<<"$output")" -eq $(($(wc -l <"$d/valid.tok") + 1)) ]
	# the Brown run: its record of the tokenisation, pairs
	assert_line 'tok.lowercase=0'
	assert_line 'tok.clitics=none'
	[ -s "$d/pairs.tsv" ]
	cut -f1 "$d/pairs.tsv" | sort -u | grep -qx ORDER
}
