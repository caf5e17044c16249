#!/usr/bin/env bats
# The chain MRF language model (train --mrf, family chain-mrf; issue 53):
# the model file, train's progress (an objective that rises at every
# iteration) and limits (--epochs, --max-time),
# score's lower bound (a batch's numbers summing to its line totals, the
# exact log-partition of --check-norm: mass 1 for K = 1, below 1 for
# K = 2, refused on a long batch), --embed's u and v, train(1)'s
# EXAMPLES, and the bad inputs.  Tiny models on 200 sentences of the UD
# French slice over a 30-word vocabulary.

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -250 >"$m/all.tok"
	head -200 "$m/all.tok" >"$m/train.tok"
	tail -50 "$m/all.tok" >"$m/valid.tok"
	vocab --top 30 "$m/train.tok" >"$m/v30.tsv"
	featurize --vocab "$m/v30.tsv" "$m/train.tok" >"$m/small.fz" 2>/dev/null
	train --mrf --neighbours 2 --rank 4 --epochs 15 -o "$m/k2.bin" "$m/small.fz" 2>"$m/k2.err"
	train -q --mrf --neighbours 1 --rank 4 --epochs 15 -o "$m/k1.bin" "$m/small.fz"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "train --mrf: the model file (family chain-mrf, K, D, V + 2KVD parameters, the bound in the meta)" {
	[ "$(meta "$M/k2.bin" family)" = chain-mrf ]
	[ "$(meta "$M/k2.bin" neighbours)" = 2 ]
	[ "$(meta "$M/k2.bin" rank)" = 4 ]
	local V
	V=$(meta "$M/k2.bin" vocab_size)
	[ "$(meta "$M/k2.bin" n_params)" = $((V + 2 * 2 * V * 4)) ]
	[ -n "$(meta "$M/k2.bin" train_bound)" ]
	[ "$(meta "$M/k2.bin" train_tokens)" = "$(awk '{ n += NF + 1 } END { print n }' "$M/train.tok")" ]
}

@test "train --mrf: a progress line an L-BFGS iteration on stderr, and --epochs bounds them" {
	run grep -c '^train: iteration [0-9]* objective' "$M/k2.err"
	[ "$output" -ge 2 ] && [ "$output" -le 15 ]
	grep -q '^train: stopped (' "$M/k2.err"
	train --mrf --neighbours 2 --rank 4 --epochs 2 -o two.bin "$M/small.fz" 2>err
	[ "$(grep -c '^train: iteration' err)" -le 2 ]
	[ "$(meta two.bin stopped)" = epochs ]
	# more iterations, a higher lower bound on the log-likelihood
	awk -v a="$(meta two.bin train_loglik_lower)" -v b="$(meta "$M/k2.bin" train_loglik_lower)" 'BEGIN { exit !(b > a) }'
}

@test "train --mrf: the objective rises at every L-BFGS iteration, each in a few evaluations" {
	# each line search's trial points tightened from the accepted point's
	# dual (the objective a function of the weights), b started centred
	run awk '/^train: iteration [0-9]* objective/ { n++; if (n > 1 && !($5 > f)) bad = 1; if ($10 > 10) bad = 1; f = $5 }
		END { exit !(n >= 3 && !bad) }' "$M/k2.err"
	[ "$status" -eq 0 ]
}

@test "train --mrf --max-time: stops after the iteration that passes it" {
	train --mrf --neighbours 2 --rank 4 --epochs 1000 --max-time 0.001s -o t.bin "$M/small.fz" 2>err
	[ "$(meta t.bin stopped)" = max-time ]
	[ "$(grep -c '^train: iteration' err)" -eq 1 ]
}

@test "train --mrf --resume: a cut fit goes on, its iterations and seconds counted on; the options it fixes and another stream refused" {
	train --mrf --neighbours 2 --rank 4 --epochs 1000 --max-time 0.001s -o cut.bin "$M/small.fz" 2>/dev/null
	[ "$(meta cut.bin stopped)" = max-time ]
	[ "$(meta cut.bin iterations_done)" = 1 ]
	local secs
	secs=$(meta cut.bin train_seconds)
	train --mrf --resume cut.bin --epochs 4 -o more.bin "$M/small.fz" 2>err
	grep -q '; resuming cut.bin$' err
	# the numbering goes on from the cut fit's: iterations 2, 3, 4
	[ "$(sed -n 's/^train: iteration \([0-9]*\) .*/\1/p' err | tr '\n' ' ')" = "2 3 4 " ]
	[ "$(meta more.bin stopped)" = epochs ]
	[ "$(meta more.bin iterations_done)" = 4 ]
	[ "$(meta more.bin seed)" = "$(meta cut.bin seed)" ]
	awk -v a="$secs" -v b="$(meta more.bin train_seconds)" 'BEGIN { exit !(b > a) }'
	# the fit goes on from the cut weights: a higher bound on the likelihood
	awk -v a="$(meta cut.bin train_loglik_lower)" -v b="$(meta more.bin train_loglik_lower)" 'BEGIN { exit !(b > a) }'
	# without -o the resumed file is rewritten
	cp cut.bin same.bin
	train -q --mrf --resume same.bin --epochs 2 "$M/small.fz"
	[ "$(meta same.bin iterations_done)" = 2 ]
	# the model fixes K, D, the dual steps and l2; the stream must be its own
	run --separate-stderr train --mrf --resume cut.bin --rank 8 -o x.bin "$M/small.fz"
	assert_failure 2
	[[ "$stderr" == "train: --rank 8: the resumed model has rank=4"* ]]
	run --separate-stderr train --mrf --resume cut.bin --l2 0.5 -o x.bin "$M/small.fz"
	assert_failure 2
	[[ "$stderr" == "train: --l2 0.5: the resumed model has l2=0.0001"* ]]
	head -100 "$M/train.tok" >half.tok
	featurize --vocab "$M/v30.tsv" half.tok >half.fz 2>/dev/null
	run --separate-stderr train --mrf --resume cut.bin -o x.bin half.fz
	assert_failure 1
	[ -z "$output" ]
	[[ "$stderr" == "train: not the stream cut.bin was fitted on: "*" tokens, the model's "* ]]
	run --separate-stderr train --mrf --resume more.bin --epochs 4 -o x.bin "$M/small.fz"
	assert_failure 1
	[[ "$stderr" == *"train: --epochs 4: the resumed fit has done 4 iterations already" ]]
	[ ! -e x.bin ]
}

@test "train --mrf --threads: one BLAS thread gives the same fit; --threads out of range is a usage error" {
	train --mrf --neighbours 2 --rank 4 --epochs 3 --threads 1 -o one.bin "$M/small.fz" 2>/dev/null
	train --mrf --neighbours 2 --rank 4 --epochs 3 --threads 2 -o two.bin "$M/small.fz" 2>/dev/null
	awk -v a="$(meta one.bin train_bound)" -v b="$(meta two.bin train_bound)" \
		'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-6 * (a < 0 ? -a : a)) }'
	run_err 2 "--threads" train --mrf --threads 2000 -o bad.bin "$M/small.fz"
	[ ! -e bad.bin ]
}

@test "score: a chain MRF's numbers (the lower bound) sum to each line's total" {
	head -5 "$M/valid.tok" >v5.tok
	run score -q -m "$M/k2.bin" --per-token v5.tok
	assert_success
	[ "${#lines[@]}" -eq 5 ]
	printf '%s\n' "${lines[@]}" | awk -F'\t' '{ s = 0; for (i = 4; i <= NF; i++) { sub(/.*=/, "", $i); s += $i }
		if (s - $1 > 1e-3 || $1 - s > 1e-3) exit 1 }'
}

@test "score --check-norm: the exact log-partition (mass 1 for K = 1, below 1 for K = 2; refused on a long batch)" {
	head -3 "$M/valid.tok" >v3.tok
	run score -m "$M/k1.bin" --check-norm v3.tok
	assert_success
	run score -m "$M/k2.bin" --check-norm v3.tok
	assert_failure 1
	assert_output --partial 'norm check failed'
	run --separate-stderr score -m "$M/k2.bin" --check-norm --batch 100 "$M/train.tok"
	assert_failure 1
	[ -z "$output" ]
	[[ "$stderr" == *"too long for the exact log-partition of a chain MRF"* ]]
}

@test "score --embed: a word's u and v (2 K D numbers), a line's the mean of its words'" {
	run score -q --embed -m "$M/k2.bin" <<<"de"
	assert_success
	[ "$(awk -F'\t' '{print NF}' <<<"$output")" -eq 16 ]
	local de="$output"
	run score -q --embed -m "$M/k2.bin" <<<"de de"
	[ "$output" = "$de" ]
	local la
	la=$(score -q --embed -m "$M/k2.bin" <<<"la")
	run score -q --embed -m "$M/k2.bin" <<<"de la"
	paste <(tr '\t' '\n' <<<"$de") <(tr '\t' '\n' <<<"$la") <(tr '\t' '\n' <<<"$output") |
		awk '{ d = ($1 + $2) / 2 - $3; if (d > 1e-5 || d < -1e-5) exit 1 }'
}

@test "train(1) EXAMPLES: a chain MRF, its bound on held-out text and a word's u and v" {
	cp "$M/train.tok" train.tok
	cp "$M/valid.tok" valid.tok
	vocab --top 50 train.tok >v50.tsv
	featurize --vocab v50.tsv train.tok >small.fz 2>/dev/null
	train --mrf --neighbours 2 --rank 8 --epochs 20 -o mrf.bin small.fz 2>err
	grep -q 'train: stopped' err
	score -m mrf.bin valid.tok >/dev/null 2>err
	grep -q '^score: perplexity' err
	run score -q --embed -m mrf.bin <<<"de"
	assert_success
	[ "$(awk -F'\t' '{print NF}' <<<"$output")" -eq 32 ]
	mandoc -Tlint -W warning "$TOP/man/train.1" "$TOP/man/score.1"
}

@test "train --mrf: bad input (a corpus too short, --rank 0, --neighbours 0, no -o)" {
	head -1 "$M/train.tok" | cut -d' ' -f1 >one.tok
	featurize --vocab "$M/v30.tsv" one.tok >one.fz 2>/dev/null
	run --separate-stderr train --mrf --neighbours 2 -o x.bin one.fz
	assert_failure 1
	[ -z "$output" ]
	[[ "$stderr" == "train: one.fz: a corpus of 2 tokens, too short for --neighbours 2"* ]]
	[ ! -e x.bin ]
	run --separate-stderr train --mrf --rank 0 -o x.bin "$M/small.fz"
	assert_failure 2
	[ -z "$output" ]
	[[ "$stderr" == "train: --rank: 0 out of range [1, 4096]"* ]]
	run --separate-stderr train --mrf --neighbours 0 -o x.bin "$M/small.fz"
	assert_failure 2
	[ -z "$output" ]
	[[ "$stderr" == "train: --neighbours: 0 out of range [1, 8]"* ]]
	run --separate-stderr train --mrf "$M/small.fz"
	assert_failure 2
	[[ "$stderr" == "train: --mrf: -o FILE is required"* ]]
	run --separate-stderr train --feedforward 3 --neighbours 2 -o x.bin "$M/small.fz"
	assert_failure 2
	[[ "$stderr" == "train: --neighbours:"* ]]
	[ ! -e x.bin ]
}
