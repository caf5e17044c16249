#!/usr/bin/env bats
# The MRF tagger (train --mrf --tags, family mrf-tagger) and score
# --tags with it: on the UD French slice (Sequoia train -> Sequoia test,
# UPOS) it fits its training set, beats the HMM on unknown words and is
# in a range in all; training is deterministic; llr_model_tag gives the
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
}
