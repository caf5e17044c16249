#!/usr/bin/env bats
# The MRF tagger (train --mrf --tags, family mrf-tagger) and score
# --tags with it: on the UD French slice (Sequoia train -> Sequoia test,
# UPOS) it fits its training set, beats the HMM on unknown words and is
# in a range in all; training is deterministic; a fit cut (--epochs,
# --max-time, SIGTERM) and resumed ends where the whole fit does, and a
# resume on other text or options is refused; llr_model_tag gives the
# tags score --tags gives; the man page examples; every error path.
# (tests/unit/test_mrftag.c has log Z and Viterbi against brute force,
# the gradient against finite differences and the file's round trip.)

load test_helper

setup_file() {
	local m="$BATS_FILE_TMPDIR"
	tok --from conllu --tags "$UD/fr_sequoia-ud-train.conllu.gz" >"$m/train.tt"
	tok --from conllu --tags "$UD/fr_sequoia-ud-test.conllu.gz" >"$m/test.tt"
	train -q --mrf --tags -o "$m/fr.mrft" "$m/train.tt"
	train -q --hmm -o "$m/fr.hmm" "$m/train.tt"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

# The three accuracies of score --tags's summary (stderr in $1): total,
# known, unknown.
acc() {
	sed -n 's/^score: accuracy \([0-9.]*\)% .*known words \([0-9.]*\)% .*unknown words \([0-9.]*\)% .*/\1 \2 \3/p' "$1"
}

words() {
	awk '{ for (i = 1; i <= NF; i++) sub(/\/[^\/]*$/, "", $i); print }' "$@"
}

# x >= a
atleast() {
	awk -v x="$1" -v a="$2" 'BEGIN { exit !(x >= a) }'
}

@test "train --mrf --tags: fits its training set; on the test set in its range and ahead of the HMM on unknown words" {
	score --tags -m "$M/fr.mrft" "$M/train.tt" >/dev/null 2>err
	total=$(sed -n 's/^score: accuracy \([0-9.]*\)% .*/\1/p' err)
	atleast "$total" 99
	score --tags -m "$M/fr.mrft" "$M/test.tt" >out 2>err
	[ "$(wc -l <out)" -eq "$(wc -l <"$M/test.tt")" ]
	diff <(words "$M/test.tt") <(words out)
	read -r total known unknown < <(acc err)
	score --tags -m "$M/fr.hmm" "$M/test.tt" >/dev/null 2>herr
	read -r htotal hknown hunknown < <(acc herr)
	echo "mrf $total $known $unknown hmm $htotal $hknown $hunknown" >&3
	atleast "$total" 88
	atleast "$unknown" "$(awk -v u="$hunknown" 'BEGIN { print u + 5 }')"
	atleast "$total" "$htotal"
}

@test "train --mrf --tags: deterministic (L-BFGS from zero): two trainings tag alike; the model's meta" {
	train -q --mrf --tags -o again.mrft "$M/train.tt"
	score -q --tags -m "$M/fr.mrft" "$M/test.tt" >a
	score -q --tags -m again.mrft "$M/test.tt" >b
	cmp a b
	run tar -xOf again.mrft meta
	assert_success
	assert_line family=mrf-tagger
	assert_line window=1
	assert_line stopped=converged
	assert_line --regexp '^l2=0\.000150943'  # 1 / 6625 tokens
}

@test "train --mrf --tags: --word-window 0 and 2 train and tag; more iterations than --epochs are not taken" {
	run train --mrf --tags --word-window 0 --epochs 3 -o w0.mrft "$M/train.tt"
	assert_success
	assert_line --regexp '^train: MRF tagger: 6625 tokens, 300 sentences, 15 tags, [0-9]+ features, word window 0, '
	assert_line --regexp '^train: stopped \(epochs, '
	refute_line --regexp '^train: iteration 4 '
	train -q --mrf --tags --word-window 2 --epochs 10 -o w2.mrft "$M/train.tt"
	echo "il a vu le chat ." | score -q --tags -m w2.mrft >o
	[ "$(words o)" = "il a vu le chat ." ]
}

# meta KEY MODEL: the value of KEY in MODEL's meta.
meta() {
	tar -xOf "$2" meta | sed -n "s/^$1=//p"
}

# within A B TOL: |A - B| <= TOL
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'
}

@test "train --mrf --tags --resume: a fit cut by --epochs, then by --max-time, resumed to convergence, ends where the whole fit does" {
	train -q --mrf --tags --epochs 4 -o cut.mrft "$M/train.tt"
	[ "$(meta stopped cut.mrft)" = epochs ]
	[ "$(meta iterations_done cut.mrft)" = 4 ]
	s1=$(meta train_seconds cut.mrft)
	o4=$(meta train_objective cut.mrft)
	run train --mrf --tags --resume cut.mrft --max-time 0.001 "$M/train.tt"
	assert_success
	assert_line --regexp '; resuming cut\.mrft$'
	assert_line --regexp '^train: iteration 5 objective '
	refute_line --regexp '^train: iteration [1-4] '
	assert_line --regexp '^train: stopped \(max-time, .* after 5 iterations '
	[ "$(meta stopped cut.mrft)" = max-time ]
	# from the saved weights, not from zero: below the objective of iteration 4
	o5=$(printf '%s\n' "${lines[@]}" | sed -n 's/^train: iteration 5 objective \([0-9.]*\) .*/\1/p')
	awk -v a="$o5" -v b="$o4" 'BEGIN { exit !(a < b) }'
	run train --mrf --tags --resume cut.mrft -o done.mrft "$M/train.tt"
	assert_success
	assert_line --regexp '^train: stopped \(converged, '
	[ "$(meta stopped done.mrft)" = converged ]
	[ "$(meta stopped cut.mrft)" = max-time ]
	# iterations and seconds counted on; the objective of the whole fit within 1e-4
	n=$(meta iterations_done done.mrft)
	want=$(meta iterations_done "$M/fr.mrft")
	echo "resumed: $n iterations, objective $(meta train_objective done.mrft); whole: $want, $(meta train_objective "$M/fr.mrft")" >&3
	[ "$n" -gt 5 ] && [ "$n" -le $((want + 10)) ]
	awk -v a="$(meta train_seconds done.mrft)" -v b="$s1" 'BEGIN { exit !(a > b) }'
	within "$(meta train_objective done.mrft)" "$(meta train_objective "$M/fr.mrft")" 1e-4
	# tags the test text (nearly) as the whole fit does: at most 10 of 2737
	# tokens differ (L-BFGS restarts without its curvature pairs, so the
	# two stop at nearby points; 4 differed when this was written)
	score -q --tags -m "$M/fr.mrft" "$M/test.tt" | tr ' ' '\n' >a
	score -q --tags -m done.mrft "$M/test.tt" | tr ' ' '\n' >b
	d=$(diff a b | grep -c '^<' || :)
	echo "test tokens tagged otherwise: $d" >&3
	[ "$d" -le 10 ]
	# a resumed fit past --epochs already: written again as it was
	run train --mrf --tags --resume cut.mrft --epochs 5 -o same.mrft "$M/train.tt"
	assert_success
	refute_line --regexp '^train: iteration '
	assert_line --regexp '^train: stopped \(epochs, .* after 5 iterations '
	score -q --tags -m same.mrft "$M/test.tt" >c
	score -q --tags -m cut.mrft "$M/test.tt" >d
	cmp c d
}

@test "train --mrf --tags: SIGTERM mid-fit saves the model (stopped=interrupted), --resume continues it" {
	train --mrf --tags -o sig.mrft "$M/train.tt" 2>err &
	pid=$!
	# up to 60 s: a sanitizer build on a loaded machine is slow to start
	for _ in $(seq 3000); do grep -q '^train: iteration 3 ' err && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	cat err
	[ "$rc" -eq 143 ]
	grep -q '^train: terminated: saved sig\.mrft; continue with --resume sig\.mrft$' err
	grep -q '^train: stopped (interrupted, ' err
	[ "$(meta stopped sig.mrft)" = interrupted ]
	n=$(meta iterations_done sig.mrft)
	[ "$n" -ge 3 ]
	saved=$(meta train_objective sig.mrft)
	run train --mrf --tags --resume sig.mrft "$M/train.tt"
	assert_success
	assert_line --regexp "^train: iteration $((n + 1)) objective "
	o=$(printf '%s\n' "${lines[@]}" | sed -n "s/^train: iteration $((n + 1)) objective \([0-9.]*\) .*/\1/p")
	awk -v a="$o" -v b="$saved" 'BEGIN { exit !(a < b) }'
	[ "$(meta stopped sig.mrft)" = converged ]
	within "$(meta train_objective sig.mrft)" "$(meta train_objective "$M/fr.mrft")" 1e-4
}

@test "train --mrf --tags --resume: another text, a changed --word-window or --l2, a model of another family: refused, nothing written" {
	train -q --mrf --tags --epochs 2 -o cut.mrft "$M/train.tt"
	cp cut.mrft keep.mrft
	run_err 1 "^train: .*test\.tt: not the text cut\.mrft was fitted on: 14 tags, the model's 15$" \
		train --mrf --tags --resume cut.mrft -o new.mrft "$M/test.tt"
	head -n 299 "$M/train.tt" >less.tt
	run_err 1 "^train: less\.tt: not the text cut\.mrft was fitted on: [0-9]+ features, the model's [0-9]+$" \
		train --mrf --tags --resume cut.mrft less.tt
	# the same tags and features, one sentence twice
	cat "$M/train.tt" <(head -n 1 "$M/train.tt") >more.tt
	run_err 1 "^train: more\.tt: not the text cut\.mrft was fitted on: [0-9]+ tokens in 301 sentences, the model's 6625 in 300$" \
		train --mrf --tags --resume cut.mrft more.tt
	run_err 2 "^train: --word-window 2: the resumed model has window=1$" \
		train --mrf --tags --resume cut.mrft --word-window 2 -o new.mrft "$M/train.tt"
	run_err 2 "^train: --l2 0\.01: the resumed model has l2=0\.000150943" \
		train --mrf --tags --resume cut.mrft --l2 0.01 "$M/train.tt"
	# without --tags, --resume is the chain MRF LM's, which a tagger is not
	run_err 1 "^train: cut\.mrft: a model of family mrf-tagger, not a chain MRF" train --mrf --resume cut.mrft "$M/train.tt"
	# a model of another family chooses it (train(1)): --mrf is then not its option
	run_err 2 "^train: --mrf: not for an HMM tagger \(--hmm\)$" train --mrf --tags --resume "$M/fr.hmm" -o new.mrft "$M/train.tt"
	assert_file_not_exist new.mrft
	cmp cut.mrft keep.mrft
	# the same option values are taken
	train -q --mrf --tags --resume cut.mrft --word-window 1 --l2 0.000150943396 --epochs 3 "$M/train.tt"
	[ "$(meta iterations_done cut.mrft)" = 3 ]
}

@test "llr_model_tag: a C program tags with the MRF tagger as score --tags does" {
	words "$M/test.tt" | head -n 40 >bare
	score --tags -m "$M/fr.mrft" bare >want 2>err
	"$TOP/build/tests/api/tag-sentences" "$M/fr.mrft" <bare >got 2>got.err
	cmp want got
	[ "$(cat got.err)" = "$(sed -n 's/.*, \([0-9]*\) unknown (not in the training lexicon)/\1 unknown/p' err)" ]
}

@test "train --mrf --tags: errors (untagged text, an empty corpus, no -o, options of the other model)" {
	printf 'le/DET chat/NOUN\nle chien/NOUN\n' >untagged.tt
	run_err 1 "^train: untagged.tt:2: token 'le' has no /TAG \(train --mrf --tags reads word/TAG text" \
		train --mrf --tags -o m.mrft untagged.tt
	assert_file_not_exist m.mrft
	printf '\n\n' >empty.tt
	run_err 1 "^train: empty.tt: no tagged sentence \(an empty corpus\)$" train --mrf --tags -o m.mrft empty.tt
	run_err 1 "^train: <stdin>: no tagged sentence" train --mrf --tags -o m.mrft </dev/null
	assert_file_not_exist m.mrft
	run_err 2 "^train: --tags: -o FILE is required" train --mrf --tags "$M/train.tt"
	run_err 2 "^train: --rank: not for the tagger \(--tags\)" train --mrf --tags --rank 4 -o m.mrft "$M/train.tt"
	run_err 2 "^train: --dual-steps: not for the tagger" train --mrf --tags --dual-steps 4 -o m.mrft "$M/train.tt"
	run_err 2 "^train: --neighbours: the tagger \(--tags\) links each tag to the next one only" \
		train --mrf --tags --neighbours 2 -o m.mrft "$M/train.tt"
	run_err 2 "^train: --word-window: with --tags only" train --mrf --word-window 2 -o m.mrft "$M/train.tt"
	run_err 2 "need --mrf" train --tags -o m.mrft "$M/train.tt"
	run_err 2 "^train: --word-window: " train --mrf --tags --word-window 9 -o m.mrft "$M/train.tt"
	assert_file_not_exist m.mrft
}

@test "train --mrf --tags: no memory for L-BFGS's work space is an error, no model (not zero weights saved as stopped=line-search)" {
	skip_sanitized "ulimit -v and the sanitizers' shadow memory"
	# 1,000 tags and 12,617 features: 13.6M parameters, 109 MB a copy;
	# the model and its copy fit under 768 MiB (and BLAS's 129 MiB a core),
	# liblbfgs's 18 copies do not
	awk 'BEGIN { for (s = 0; s < 300; s++) { l = ""; for (j = 0; j < 10; j++) { k = s * 10 + j; l = l (j ? " " : "") "w" k "/t" (k % 1000) } print l } }' >big.tt
	(
		ulimit -v $((786432 + 132096 * $(getconf _NPROCESSORS_ONLN)))
		export OPENBLAS_NUM_THREADS=1
		run_err 1 "^train: out of memory for L-BFGS's work space \(13619000 parameters\)$" train -q --mrf --tags --epochs 1 -o big.mrft big.tt
	)
	assert_file_not_exist big.mrft
}

@test "score with an MRF tagger: what it cannot do; a damaged model file" {
	run_err 1 "^score: .*fr.mrft: MRF taggers have no llr_model_score yet \(an MRF tagger: score --tags tags sentences with it\)$" \
		score -m "$M/fr.mrft" "$M/test.tt"
	run_err 1 "^score: .*fr.mrft: MRF taggers have no --embed" score --embed -m "$M/fr.mrft" "$M/test.tt"
	head -c 3000 "$M/fr.mrft" >cut.mrft
	run_err 1 "^score: .*cut.mrft" score --tags -m cut.mrft "$M/test.tt"
}

@test "mrf tagger: man page examples (train(1), score(1)) run as written" {
	cp "$M/train.tt" "$M/test.tt" .
	run train --mrf --tags -o fr.mrft train.tt
	assert_success
	assert_line --index 0 --regexp '^train: MRF tagger: 6625 tokens, 300 sentences, 15 tags, '
	run score --tags -m fr.mrft test.tt
	assert_success
	assert_line --regexp '^score: accuracy [0-9.]+% \([0-9]+ of 2737\); known words '
	run sh -c 'echo "il a vu le chat ." | score -q --tags -m fr.mrft'
	assert_success
	assert_output "il/PRON a/AUX vu/VERB le/DET chat/NOUN ./PUNCT"
	run train --mrf --tags --epochs 10 -o part.mrft train.tt
	assert_success
	assert_line --regexp '^train: stopped \(epochs, .* after 10 iterations '
	run train --mrf --tags --resume part.mrft train.tt
	assert_success
	assert_line --regexp '^train: iteration 11 objective '
	assert_line --regexp '^train: stopped \(converged, '
	[ "$(meta stopped part.mrft)" = converged ]
}
