# common.sh - shell helpers shared by the bench/ scripts (sourced, not run):
# paths, the UD French data preparation for both systems, measuring one
# command under /usr/bin/time -v, medians and the machine description.
# Not a benchmark itself; see bench/README.md.

BENCH=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
BIN=${BIN:-$ROOT/bin}
SHARED=${SHARED:-$ROOT/../shared}
DATA=${DATA:-$SHARED/data/ud-french}
TORCH_REF=${TORCH_REF:-$SHARED/bench/torch_ref.py}
UD_PREP=${UD_PREP:-$SHARED/bench/ud_prep.py}
PY=${PY:-/usr/bin/python3}
# The OpenBLAS kernels for both systems: the ones our tools pick (they
# replace OpenBLAS's generic fallback on a CPU it does not know: llrnn(1)
# ENVIRONMENT), exported so that torch, which loads the same library,
# runs them too.
if [ -z "${OPENBLAS_CORETYPE-}" ] && [ -x "$BIN/score" ]; then
	OPENBLAS_CORETYPE=$(env -u OPENBLAS_CORETYPE OPENBLAS_VERBOSE=2 "$BIN/score" -h 2>&1 >/dev/null | sed -n 's/^Core: //p' | tail -n 1)
	[ -n "$OPENBLAS_CORETYPE" ] && export OPENBLAS_CORETYPE || unset OPENBLAS_CORETYPE
fi
WORK=${WORK:-$BENCH/work}
RESULTS=${RESULTS:-$BENCH/results}

die() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# prep_ud DIR: the UD French splits of issue 7 for both systems, made once.
#   DIR/{train,valid,test}.tok   tok --from conllu -l (ours)
#   DIR/ll.fz                    featurize --top 2500 + CoNLL-U tags (ours)
#   DIR/ref/{train,valid,test}.txt, lexicon.tsv   ud_prep.py (reference)
prep_ud() {
	local d=$1 f conllu=
	[ -s "$d/ll.fz" ] && [ -s "$d/ref/lexicon.tsv" ] && return 0
	[ -d "$DATA" ] || die "$DATA: no UD French data (set DATA)"
	mkdir -p "$d"
	"$BIN/tok" --from conllu -l -o "$d/train.tok" "$DATA/fr_sequoia-ud-train.conllu.gz" \
		"$DATA/fr_partut-ud-train.conllu.gz" "$DATA/fr_gsd-ud-dev.conllu.gz" || die "tok failed"
	"$BIN/tok" --from conllu -l -o "$d/valid.tok" "$DATA/fr_sequoia-ud-dev.conllu.gz" \
		"$DATA/fr_partut-ud-dev.conllu.gz" || die "tok failed"
	"$BIN/tok" --from conllu -l -o "$d/test.tok" "$DATA/fr_sequoia-ud-test.conllu.gz" \
		"$DATA/fr_partut-ud-test.conllu.gz" "$DATA/fr_gsd-ud-test.conllu.gz" || die "tok failed"
	for f in sequoia-ud-train partut-ud-train gsd-ud-dev sequoia-ud-dev partut-ud-dev \
		sequoia-ud-test partut-ud-test gsd-ud-test; do
		conllu="$conllu --conllu $DATA/fr_$f.conllu.gz"
	done
	# shellcheck disable=SC2086
	"$BIN/featurize" --top 2500 $conllu -l --extra "$d/valid.tok" --extra "$d/test.tok" \
		-o "$d/ll.fz" "$d/train.tok" 2>"$d/featurize.log" || die "featurize failed (see $d/featurize.log)"
	"$PY" "$UD_PREP" "$DATA" "$d/ref" >"$d/ud_prep.log" 2>&1 || die "ud_prep.py failed (see $d/ud_prep.log)"
}

# measure OUT CMD...: run CMD with stdout+stderr in OUT.log and the
# /usr/bin/time -v report in OUT.time; prints the peak RSS in MiB.
measure() {
	local out=$1
	shift
	/usr/bin/time -v -o "$out.time" "$@" >"$out.log" 2>&1 || {
		printf '%s: command failed: %s (see %s.log)\n' "${0##*/}" "$*" "$out" >&2
		return 1
	}
	awk -F': ' '/Maximum resident set size/ { printf "%.1f\n", $2 / 1024 }' "$out.time"
}

# train_rate LOG: the training tokens/s train printed into LOG under
# --max-tokens ("max-tokens: N training tokens in S s: R tokens/s"), or
# nothing.
train_rate() {
	sed -n 's/.*training tokens in [0-9.]* s: \([0-9]*\) tokens\/s.*/\1/p' "$1"
}

# tokens_of FILE: the tokens a scorer predicts in FILE (words and </s>).
tokens_of() {
	awk '{ n += NF + 1 } END { print n + 0 }' "$1"
}

# score_rate SCORE LOG INPUT TOKENS EMPTY ARGS...: tokens per second of
# `SCORE -q ARGS INPUT` (TOKENS tokens) less the same command on the
# empty file EMPTY (start-up and loading); its stderr in LOG; a failure
# stops the bench naming LOG.
score_rate() {
	local score=$1 log=$2 in=$3 n=$4 empty=$5 t0 t1 t2
	shift 5
	t0=$(date +%s.%N)
	"$score" -q "$@" "$empty" >/dev/null 2>"$log" || die "score $* failed (see $log)"
	t1=$(date +%s.%N)
	"$score" -q "$@" "$in" >/dev/null 2>"$log" || die "score $* failed (see $log)"
	t2=$(date +%s.%N)
	awk -v n="$n" -v e="$t0" -v a="$t1" -v b="$t2" 'BEGIN { printf "%.0f", n / ((b - a) - (a - e)) }'
}

# median: the median of the numbers on stdin (mean of the middle two).
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# machine: one line per fact, for the README.
machine() {
	printf 'date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf 'nproc: %s\n' "$(nproc)"
	printf 'cpu: %s\n' "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	printf 'openblas: %s\n' "$(dpkg-query -W -f '${Package} ${Version}\n' 'libopenblas0*' 2>/dev/null | awk '$2 != "" { printf "%s%s %s", s, $1, $2; s = ", " }')"
	# the kernels OpenBLAS picked (both systems load the same library, and
	# both inherit OPENBLAS_CORETYPE, set above when the user did not)
	printf 'openblas core: %s%s\n' "$(OPENBLAS_VERBOSE=2 "$BIN/score" -h 2>&1 | sed -n 's/^Core: //p' | tail -n 1)" \
		"${OPENBLAS_CORETYPE:+ (OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE)}"
	printf 'torch: %s\n' "$("$PY" -c 'try: import torch; print(torch.__version__)
except ImportError: print("not installed (Debian package python3-torch)")' 2>/dev/null)"
	printf 'load: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
}
