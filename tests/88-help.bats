#!/usr/bin/env bats
# 88-help.bats - --help lists every option of man/TOOL.1 (the options of
# its .It Fl lines), one line each, and no other: every option it lists
# is in the man page and in the tool's getopt tables.  Fixtures only.

bats_require_minimum_version 1.5.0
load test_helper

TOOLS="tok vocab featurize train score gen disc-pairs"

# man_opts TOOL: the options named on the .It lines of man/TOOL.1 (every
# word after an Fl macro), one a line: -x or --long.
man_opts() {
	sed -n 's/^\.It //p' "$TOP/man/$1.1" | sed 's/\\-/-/g' | tr ' ' '\n' |
		awk 'fl { sub(/[,;.]+$/, ""); if ($0 ~ /^-?[A-Za-z0-9][A-Za-z0-9-]*$/) print "-" $0 } { fl = ($0 == "Fl") }' |
		sort -u
}

# help_opts TOOL: the options of the option lines of TOOL --help (lines
# "  -x, --long ARG  description"), one a line.
help_opts() {
	"$1" --help | awk '/^  -/ { sub(/^  /, ""); split($0, f, /  +/); print f[1] }' |
		grep -oE '(^|[ ,])--?[A-Za-z0-9][A-Za-z0-9-]*' | sed 's/^[ ,]//' | sort -u
}

# src_opts TOOL: the long options of the tool's getopt tables ("name",
# ..._argument in tools/TOOL.c, tools/TOOL_*.c, tools/TOOL*.h, tools/TOOL/ and the
# common ones of cli.h) and the letters of its cli_getopt short options.
src_opts() {
	local u=${1//-/_}
	local files=("$TOP/tools/$1.c" "$TOP/tools/cli.h")
	local f
	for f in "$TOP/tools/${u}"_*.c "$TOP/tools/${u}"*.h "$TOP/tools/$1"/*.[ch]; do
		[ ! -e "$f" ] || files+=("$f")
	done
	# train's option rows are the library's (llr_train_opt, lib/family/),
	# its short options made from them after cli_getopt's -h
	local rows=()
	[ "$1" != train ] || rows=("$TOP"/lib/family/*.c "$TOP"/lib/family/*/*.c)
	{
		grep -hoE '"[a-z0-9-]+", *(no|required|optional)_argument' "${files[@]}" | sed 's/"\([^"]*\)".*/--\1/'
		grep -ho 'cli_getopt([^"]*"[^"]*"' "${files[@]}" | sed 's/.*"\(.*\)"/\1/' | tr -d ':' | fold -w1 | sed 's/^/-/'
		[ ${#rows[@]} -eq 0 ] || grep -hoE '\{"[a-z0-9-]+", (0|'"'"'[a-z]'"'"'), LLR_TOPT_[A-Z]+, [^,}]*' "${rows[@]}" |
			awk -F', ' '{ n = substr($1, 3, length($1) - 3); l = $2; gsub(/'"'"'/, "", l)
				if ($4 !~ /NOLONG/) print "--" n; if (l != "0") print "-" l } END { print "-h" }'
	} | sort -u
}

@test "help: --help and -h print the usage, every option with a line on it, and 'See tool(1).'; usage errors do not" {
	for t in $TOOLS; do
		run --separate-stderr "$t" --help
		assert_success
		[ -z "$stderr" ]
		assert_line --index 0 --partial "usage: $t"
		assert_line --index $((${#lines[@]} - 1)) "See $t(1)."
		# every option line has a description after its options
		run bash -c "$t --help | grep '^  -' | grep -Ev '^  [^ ].*[^ ]  +[^ ]'"
		assert_output ""
		[ "$($t -h)" = "$($t --help)" ]
		# a usage error still goes to stderr with status 2, the usage
		# without the option list
		run_err 2 "^$t: --bogus: unknown option" "$t" --bogus
		grep -q "usage: $t" "$BATS_TEST_TMPDIR/err.err"
		! grep -q "See $t(1)" "$BATS_TEST_TMPDIR/err.err"
		! grep -q '^  -' "$BATS_TEST_TMPDIR/err.err"
	done
}

@test "help: --help lists exactly the options of the man page, each in the getopt tables" {
	cd "$BATS_TEST_TMPDIR"
	for t in $TOOLS; do
		man_opts "$t" >man.$t
		help_opts "$t" >help.$t
		src_opts "$t" >src.$t
		[ -s man.$t ] && [ -s help.$t ] && [ -s src.$t ]
		run comm -23 man.$t help.$t
		[ -z "$output" ] || { echo "$t: in $t(1), not in --help: $output"; false; }
		run comm -13 man.$t help.$t
		[ -z "$output" ] || { echo "$t: in --help, not in $t(1): $output"; false; }
		run comm -23 help.$t src.$t
		[ -z "$output" ] || { echo "$t: in --help, not in the getopt tables: $output"; false; }
	done
}

# help_groups TOOL: "TITLE<TAB>option" for every option line of TOOL
# --help under a group title other than Options: (the title up to its
# " (" or ":").
help_groups() {
	"$1" --help | awk '/^[A-Z][^:]*:$/ { g = $0; sub(/ \(.*/, "", g); sub(/:$/, "", g); if (g == "Options") g = ""; next }
		/^  -/ && g != "" { sub(/^  /, ""); split($0, f, /  +/); n = split(f[1], o, /[ ,]+/)
			for (i = 1; i <= n; i++) if (o[i] ~ /^--?[A-Za-z0-9]/) print g "\t" o[i] }'
}

# man_groups TOOL: "TITLE<TAB>option" for every option on an .It Fl line
# under a .Ss subsection of man/TOOL.1.
man_groups() {
	sed 's/\\-/-/g' "$TOP/man/$1.1" | awk '/^\.S[hs] / { g = ($1 == ".Ss") ? substr($0, 5) : ""; next }
		/^\.It / && g != "" { n = split($0, w, " "); for (i = 2; i <= n; i++) if (w[i - 1] == "Fl") { x = w[i]; sub(/[,;.]+$/, "", x); print g "\t-" x } }'
}

@test "help: --help's groups are the man page's subsections, in its order, each option under its own" {
	cd "$BATS_TEST_TMPDIR"
	for t in $TOOLS; do
		help_groups "$t" >hg.$t
		man_groups "$t" >mg.$t
		[ -s hg.$t ] || continue
		# every option of a group is on an .It line of that subsection
		run bash -c "sort -u hg.$t | comm -23 - <(sort -u mg.$t)"
		[ -z "$output" ] || { echo "$t: --help groups options its man page lists elsewhere: $output"; false; }
		# the groups come in the man page's order
		run bash -c "cut -f1 hg.$t | uniq | awk '!s[\$0]++' >ho.$t; grep '^\.Ss ' '$TOP/man/$t.1' | cut -c5- | grep -Fxf ho.$t | diff - ho.$t"
		[ -z "$output" ] || { echo "$t: --help's groups out of the man page's order: $output"; false; }
	done
	# the tools with groups have them read (the loop skips a tool without)
	for t in train featurize score gen; do
		[ -s hg.$t ] || { echo "$t: no grouped option read from --help"; false; }
	done
}
