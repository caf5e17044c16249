#!/bin/sh
# fsa-constrained.sh - trained under an automaton background against
# mask-only decoding (issue 51), on a toy finite language of 36 strings,
# L = (a|b) (a|b)? (c|d) (e|f)?, drawn with skewed probabilities: the mean
# held-out log-likelihood (base e, per sentence) of
#   plain       an LL-RNN trained without the constraint (score)
#   mask-only   the same model, renormalised over the allowed tokens at
#               each step (gen --regex; every string of L from the beam)
#   trained     an LL-RNN trained under featurize --background regex:L
# over SEEDS seeds.  Prints one TSV line per seed and system on stdout.
# Not a result under results/: a quick look, run by hand.
set -eu
BENCH=$(cd "$(dirname "$0")" && pwd)
BIN=${BIN:-$BENCH/../bin}
PATH="$BIN:$PATH"
WORK=${WORK:-$BENCH/work/fsa-constrained}
SEEDS=${SEEDS:-1 2 3}
EPOCHS=${EPOCHS:-5}
L='(a|b) (a|b)? (c|d) (e|f)?'
mkdir -p "$WORK"
cd "$WORK"
# draws: a 0.8 / b 0.2 first, a second token with p 0.4, then c 0.7 /
# d 0.3 with the second token's identity shifting it, e or f or nothing
gen_data() { # SEED N
	awk -v seed="$1" -v n="$2" 'BEGIN { srand(seed); for (i = 0; i < n; i++) {
		s = rand() < 0.8 ? "a" : "b"; two = rand() < 0.4
		if (two) s = s " " (rand() < 0.5 ? "a" : "b")
		s = s " " (rand() < (two ? 0.3 : 0.8) ? "c" : "d")
		r = rand(); if (r < 0.3) s = s " e"; else if (r < 0.45) s = s " f"
		print s } }'
}
printf 'seed\tsystem\tmean_loglik\tsentences\n'
for s in $SEEDS; do
	gen_data "$s" 300 >train.tok
	gen_data "$((s + 100))" 200 >test.tok
	featurize -q --top 10 -o plain.fz train.tok
	featurize -q --top 10 --background "regex:$L" -o c.fz train.tok
	train -q --hidden 16 --embed 16 --layers 1 --epochs "$EPOCHS" -s "$s" --output loglinear -o plain.llrnn plain.fz
	train -q --hidden 16 --embed 16 --layers 1 --epochs "$EPOCHS" -s "$s" -o c.llrnn c.fz
	score -q -m plain.llrnn test.tok | awk -v s="$s" '{ t += $1; n++ } END { printf "%s\tplain\t%.4f\t%d\n", s, t / n, n }'
	gen -m plain.llrnn --regex "$L" --beam 64 --nbest 64 --max-len 6 --logprob >masked.tsv
	[ "$(wc -l <masked.tsv)" -eq 36 ] || { echo "fsa-constrained.sh: the beam did not list the 36 strings" >&2; exit 1; }
	awk -F '\t' -v s="$s" 'NR == FNR { lp[$1] = $2; next } { t += lp[$0]; n++ } END { printf "%s\tmask-only\t%.4f\t%d\n", s, t / n, n }' masked.tsv test.tok
	score -q -m c.llrnn test.tok | awk -v s="$s" '{ t += $1; n++ } END { printf "%s\ttrained\t%.4f\t%d\n", s, t / n, n }'
done
