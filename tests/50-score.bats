#!/usr/bin/env bats
# score: one line out per line in, agreement with a NumPy forward pass from
# the model's own tensors, batching, coprocess use, the summary, errors.
# Tiny models are trained once per file on 200 sentences of the UD French
# slice.

load test_helper

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

setup_file() {
	local d="$UD" m="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$d/fr_sequoia-ud-dev.conllu.gz" | head -200 >"$m/train.tok"
	tok --from conllu -l "$d/fr_sequoia-ud-test.conllu.gz" | head -40 >"$m/test.tok"
	featurize --top 50 --conllu "$d/fr_sequoia-ud-dev.conllu.gz" -l --ortho --suffix 2 \
		"$m/train.tok" >"$m/feats" 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 2 --epochs 2 -s 1 -o "$m/ll.llrnn" "$m/feats"
	train -q --output softmax --hidden 8 --embed 8 --layers 1 --epochs 2 -s 1 -o "$m/sm.llrnn" "$m/feats"
}

setup() {
	M="$BATS_FILE_TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

@test "score: log-linear scores agree with NumPy on the model's own tensors" {
	head -20 "$M/train.tok" >in.tok
	score -q -m "$M/ll.llrnn" in.tok | cut -f1 >ours
	"$PY" "$FIXTURES/score/numpy_score.py" "$M/ll.llrnn" <in.tok >ref
	[ "$(wc -l <ours)" -eq 20 ]
	paste ours ref | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3) { print "line " NR ": " $0; bad = 1 } } END { exit bad }'
}

@test "score: softmax scores with OOVs agree with NumPy" {
	score -q -m "$M/sm.llrnn" "$M/test.tok" | cut -f1 >ours
	"$PY" "$FIXTURES/score/numpy_score.py" "$M/sm.llrnn" <"$M/test.tok" >ref
	[ "$(wc -l <ours)" -eq 40 ]
	paste ours ref | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3) { print "line " NR ": " $0; bad = 1 } } END { exit bad }'
	# the test sentences do hold OOVs
	[ "$(score -q -m "$M/sm.llrnn" "$M/test.tok" | awk '{ s += $3 } END { print s }')" -gt 0 ]
}

@test "score: one line out per line in, blank lines and OOV-only lines included" {
	printf 'le chat\n\nzzqxa wwqyb kkqzc\n \t\n\nla\n' >in.tok
	score -q -m "$M/ll.llrnn" in.tok >out
	[ "$(wc -l <out)" -eq 6 ]
	# blank lines (no token) are skipped: an empty line out for each
	[ "$(sed -n '2p;4p;5p' out | tr -d '\n')" = "" ]
	[ "$(sed -n 3p out | cut -f2,3)" = "$(printf '4\t3')" ]
	[ "$(sed -n 6p out | cut -f2,3)" = "$(printf '2\t0')" ]
	# every other first column is a finite negative number
	sed -n '1p;3p;6p' out | awk -F'\t' '$1 !~ /^-[0-9]+\.[0-9][0-9][0-9][0-9]$/ { exit 1 }'
	# --blank-lines score: the empty sentence, </s> alone, no OOV
	score -q -m "$M/ll.llrnn" --blank-lines score in.tok >all
	[ "$(wc -l <all)" -eq 6 ]
	[ "$(sed -n 2p all | cut -f2,3)" = "$(printf '1\t0')" ]
	[ "$(sed -n '2p;4p;5p' all | sort -u | wc -l)" -eq 1 ]
	[ "$(sed -n '1p;3p;6p' all)" = "$(sed -n '1p;3p;6p' out)" ]
}

@test "score: blank lines are counted apart and leave the figures alone" {
	head -4 "$M/test.tok" >four.tok
	{ head -2 four.tok; echo; echo; tail -2 four.tok; } >blank.tok
	score -m "$M/ll.llrnn" four.tok >four.out 2>four.err
	score -m "$M/ll.llrnn" blank.tok >blank.out 2>blank.err
	grep -v '^$' blank.out | cmp - four.out
	[ "$(wc -l <blank.out)" -eq 6 ]
	grep -q '^score: 4 sentences, [0-9]* words, [0-9]* OOVs, 0 zeroprobs, 0 blank lines skipped$' four.err
	sed 's/, 0 blank lines skipped$/, 2 blank lines skipped/' four.err | cmp - blank.err
	# scored, each is a sentence of one token, </s>
	score -m "$M/ll.llrnn" --blank-lines score blank.tok >scored.out 2>scored.err
	grep -q '^score: 6 sentences, [0-9]* words, [0-9]* OOVs, 0 zeroprobs, 0 blank lines skipped$' scored.err
	! cmp -s scored.err four.err
	[ "$(sed -n 3p scored.out | cut -f2,3)" = "$(printf '1\t0')" ]
}

@test "score: <s> first and </s> last are markers, not scored" {
	head -3 "$M/test.tok" >plain.tok
	sed '1s/^/<s> /; 2s/$/ <\/s>/; 3s/.*/<s> & <\/s>/' plain.tok >marked.tok
	grep -q '^<s> .* </s>$' marked.tok
	score -m "$M/ll.llrnn" --per-token plain.tok >plain.out 2>plain.err
	score -m "$M/ll.llrnn" --per-token marked.tok >marked.out 2>marked.err
	cmp plain.out marked.out
	cmp plain.err marked.err
	# a line of markers alone is the empty sentence, not a blank line
	printf '<s> </s>\n<s>\n</s>\n' | score -q -m "$M/ll.llrnn" >empty.out
	[ "$(cut -f2,3 empty.out | sort -u)" = "$(printf '1\t0')" ]
	[ "$(sort -u empty.out | wc -l)" -eq 1 ]
	# <unk> stays a word, an OOV
	[ "$(echo 'le <unk>' | score -q -m "$M/ll.llrnn" | cut -f2,3)" = "$(printf '3\t1')" ]
}

@test "score: a marker inside a line stops with file:line after the lines before it" {
	printf 'le chat\nla petite\nle <s> chat\nla\n' >bos.tok
	printf 'le chat\nla petite\nle </s> chat\nla\n' >eos.tok
	printf 'le chat\nla petite\n</s> le <s>\nla\n' >swap.tok
	head -2 bos.tok | score -q -m "$M/ll.llrnn" >want
	for b in 1 8; do
		for f in bos eos swap; do
			run bash -c "score -m '$M/ll.llrnn' --batch $b $f.tok >out 2>err"
			[ "$status" -eq 1 ]
			cmp out want
			[ "$(wc -l <err)" -eq 1 ]
			grep -q "^score: $f.tok:3: </*s> inside the sentence" err
		done
		run bash -c "score -m '$M/ll.llrnn' --format srilm --batch $b bos.tok >out 2>err"
		[ "$status" -eq 1 ]
		[ ! -s out ]
		grep -q '^score: bos.tok:3: <s> inside the sentence (a marker only as its first token)$' err
	done
}

@test "score: --per-token fields sum to the sentence log-probability" {
	run score -q -m "$M/ll.llrnn" --per-token "$M/test.tok"
	assert_success
	[ "${#lines[@]}" -eq 40 ]
	score -q -m "$M/ll.llrnn" --per-token "$M/test.tok" | awk -F'\t' '{
		s = 0; n = 0
		for (i = 4; i <= NF; i++) { v = $i; sub(/.*=/, "", v); s += v; n++ }
		if (n != $2) { print "token count " n " != " $2; exit 1 }
		if ($NF !~ /^<\/s>=/) { print "last field " $NF; exit 1 }
		d = s - $1; if (d < 0) d = -d
		if (d > 0.0005 * n) { print "sum " s " != " $1; exit 1 } }'
}

@test "score: compressed text on a pipe is read like a compressed file" {
	run bash -c "printf 'le chat dort\n' | gzip | score -q -m '$M/ll.llrnn'"
	assert_success
	assert_output "$(echo 'le chat dort' | score -q -m "$M/ll.llrnn")"
}

@test "score: works as a coprocess (a line in, its score out, before the next)" {
	coproc SC { score -q -m "$M/ll.llrnn"; }
	pid=$SC_PID
	echo "le chat dort" >&"${SC[1]}"
	read -t 30 -r a b c <&"${SC[0]}"
	echo "la petite" >&"${SC[1]}"
	read -t 30 -r d e f <&"${SC[0]}"
	exec {SC[1]}>&-
	wait "$pid"
	[ "$b" = 4 ]
	[ -n "$c" ]
	[ "$e" = 3 ]
	[ "$a" = "$(echo 'le chat dort' | score -q -m "$M/ll.llrnn" | cut -f1)" ]
}

# The same output up to float32 rounding (score(1), --batch): the same
# text around the numbers, and every number within 1e-4 + 2e-6 |x|.
same_scores() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
num = re.compile(r'-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')
a, b = (open(p).read().splitlines() for p in sys.argv[1:3])
assert a and len(a) == len(b), (len(a), len(b))
for i, (x, y) in enumerate(zip(a, b), 1):
    assert num.sub('#', x) == num.sub('#', y), i
    for u, v in zip(num.findall(x), num.findall(y)):
        u, v = float(u), float(v)
        assert abs(u - v) <= 1e-4 + 2e-6 * abs(u), (i, u, v)
PY
}

@test "score: --batch N and --threads give line at a time's output byte for byte" {
	{ cat "$M/test.tok"; echo; echo "zzqxa le"; head -13 "$M/train.tok"; } >in.tok
	for m in ll sm; do
		score -q -m "$M/$m.llrnn" --per-token in.tok >one
		for b in 7 64; do
			score -q -m "$M/$m.llrnn" --per-token --batch "$b" in.tok | cmp - one
			# --threads 3 scores groups of lines of a batch at once
			score -q -m "$M/$m.llrnn" --per-token --batch "$b" --threads 3 in.tok | cmp - one
		done
		score -q -m "$M/$m.llrnn" --json --per-token --batch 5 in.tok >j5
		score -q -m "$M/$m.llrnn" --json --per-token in.tok | cmp - j5
	done
}

@test "score: --check-norm passes on trained log-linear and softmax models" {
	for m in ll sm; do
		run score -m "$M/$m.llrnn" --check-norm --batch 4 "$M/test.tok"
		assert_success
		assert_output --partial "norm check: max |sum p - 1|"
		assert_output --partial "0 batch(es) over 0.001"
	done
}

@test "score: unseen words are read through their extracted features" {
	# In the log-linear model 2024 is read as a number (ORTH:number...),
	# so </s> after it differs from </s> after the literal <unk>; the
	# softmax model reads both as <unk>.
	# field 5 is the word's own score, field 6 the </s> after it
	[[ "$(echo "le 2024" | score -q -m "$M/ll.llrnn" --per-token | cut -f5)" == 2024=-* ]]
	[[ "$(echo "le <unk>" | score -q -m "$M/ll.llrnn" --per-token | cut -f5)" == '<unk>=-'* ]]
	ll1=$(echo "le 2024" | score -q -m "$M/ll.llrnn" --per-token | cut -f6)
	ll2=$(echo "le <unk>" | score -q -m "$M/ll.llrnn" --per-token | cut -f6)
	[[ "$ll1" == '</s>=-'* ]]
	[[ "$ll2" == '</s>=-'* ]]
	[ "${ll1#*=}" != "${ll2#*=}" ]
	sm1=$(echo "le 2024" | score -q -m "$M/sm.llrnn" | cut -f1)
	sm2=$(echo "le <unk>" | score -q -m "$M/sm.llrnn" | cut -f1)
	[ "$sm1" = "$sm2" ]
	# both count one OOV
	[ "$(echo "le 2024" | score -q -m "$M/ll.llrnn" | cut -f3)" = 1 ]
}

@test "score: --json lines parse, escape strings and carry per-token arrays" {
	printf 'le "chat\\\\ x\n\n' >in.tok
	score -q -m "$M/ll.llrnn" --json --per-token --blank-lines score in.tok >out.json
	score -q -m "$M/ll.llrnn" --blank-lines score in.tok >out.tsv
	# a blank line skipped is an object of its own
	[ "$(score -q -m "$M/ll.llrnn" --json in.tok | sed -n 2p)" = '{"blank":true}' ]
	"$PY" - out.json out.tsv <<'EOF'
import json, sys
js = [json.loads(l) for l in open(sys.argv[1])]
ts = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
assert len(js) == len(ts) == 2, (js, ts)
for j, t in zip(js, ts):
    assert set(j) == {"logprob", "tokens", "oovs", "per_token"}, j
    assert "%.4f" % j["logprob"] == t[0] and j["tokens"] == int(t[1]) and j["oovs"] == int(t[2]), (j, t)
    assert len(j["per_token"]) == j["tokens"] and j["per_token"][-1]["token"] == "</s>"
assert [p["token"] for p in js[0]["per_token"]] == ["le", '"chat\\\\', "x", "</s>"], js[0]
assert sum(p["oov"] for p in js[0]["per_token"]) == js[0]["oovs"]
EOF
}

@test "score: --base 2 and 10 rescale every figure" {
	e=$(head -3 "$M/test.tok" | score -q -m "$M/ll.llrnn" | cut -f1 | paste -sd' ')
	t=$(head -3 "$M/test.tok" | score -q -m "$M/ll.llrnn" --base 10 | cut -f1 | paste -sd' ')
	two=$(head -3 "$M/test.tok" | score -q -m "$M/ll.llrnn" --base 2 | cut -f1 | paste -sd' ')
	"$PY" -c '
import math, sys
e, t, two = (list(map(float, a.split())) for a in sys.argv[1:4])
for a, b, c in zip(e, t, two):
    assert abs(a / math.log(10) - b) < 2e-4 and abs(a / math.log(2) - c) < 2e-4, (a, b, c)
' "$e" "$t" "$two"
	run score -m "$M/ll.llrnn" --base 10 "$M/test.tok"
	assert_success
	assert_output --partial "logprob (base 10)"
}

# oov_types MODEL FILE: each token type of FILE, a TAB, 1 if the model
# has it outside its vocabulary, else 0 (one line of one word each).
oov_types() {
	tr ' ' '\n' <"$2" | grep -v '^$' | sort -u >types.tok
	score -q -m "$1" types.tok | cut -f3 | paste types.tok -
}

# SRILM's counts and log-probabilities recomputed from score's --per-token
# lines on stdin and the OOV types (oov_types) in $1: per line, or with
# "total" in $2 for the file, "S W O B L Lin" (L over every token, Lin
# over the tokens that are not OOVs, natural log).
by_hand() {
	awk -F'\t' -v what="${2:-line}" 'NR == FNR { oov[$1] = $2; next }
		NF == 0 { B++; next }
		{ s = 1; w = $2 - 1; o = 0; l = 0; lin = 0
		  for (i = 4; i <= NF; i++) {
			t = $i; v = $i; sub(/=[^=]*$/, "", t); sub(/.*=/, "", v)
			l += v
			if (i < NF && oov[t]) o++; else lin += v
		  }
		  if (o != $3) { print "line " FNR ": " o " OOVs by type, " $3 " in column 3" > "/dev/stderr"; exit 1 }
		  if (what == "line") printf "%d %d %d 0 %.6f %.6f\n", s, w, o, l, lin
		  S += s; W += w; O += o; L += l; Lin += lin }
		END { if (what == "total") printf "%d %d %d %d %.6f %.6f\n", S, W, O, B, L, Lin }' "$1" -
}

# near A B: the same words, numbers within 2e-3 + 1e-4 |x| (the
# per-token figures are printed with four decimals).
near() {
	[ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ] || { echo "$1 and $2: line counts differ"; return 1; }
	paste -d'\n' "$1" "$2" | awk 'NR % 2 { n = split($0, a, " "); next }
		{ m = split($0, b, " "); if (m != n) { print "line " NR / 2 ": " n " words, " m; bad = 1; next }
		  for (i = 1; i <= n; i++) {
			if (a[i] ~ /^-?[0-9.]+(e[-+][0-9]+)?$/ && b[i] ~ /^-?[0-9.]+(e[-+][0-9]+)?$/) {
				d = a[i] - b[i]; if (d < 0) d = -d; x = b[i] < 0 ? -b[i] : b[i]
				if (d > 2e-3 + 1e-4 * x) { print "line " NR / 2 ": " a[i] " != " b[i]; bad = 1 }
			} else if (a[i] != b[i]) { print "line " NR / 2 ": " a[i] " != " b[i]; bad = 1 }
		  } }
		END { exit bad }'
}

summary_in() {
	{ printf 'le chat\n\nzzqxa le\n\n'; cat "$M/test.tok"; echo 'le <unk> zzqxa'; } >in.tok
}

@test "score: the summary's logprobs, perplexity, ppl and ppl1, by hand from --per-token" {
	summary_in
	oov_types "$M/ll.llrnn" in.tok >oov.tsv
	grep -q '^zzqxa	1$' oov.tsv
	score -m "$M/ll.llrnn" --per-token in.tok >pt 2>err
	read -r S W O B L Lin < <(by_hand oov.tsv total <pt)
	[ "$S" -eq 43 ]
	[ "$B" -eq 2 ]
	[ "$O" -gt 2 ]
	awk -v S="$S" -v W="$W" -v O="$O" -v B="$B" -v L="$L" -v Lin="$Lin" 'BEGIN {
		printf "score: %d sentences, %d words, %d OOVs, 0 zeroprobs, %d blank lines skipped\n", S, W, O, B
		printf "score: logprob (base e): %.4f over %d tokens (words + </s>, OOVs scored as <unk>)\n", L, W + S
		printf "score: perplexity (words + </s>, OOVs scored as <unk>): %.4f\n", exp(-L / (W + S))
		printf "score: logprob without OOVs (base e): %.4f over %d tokens (words - OOVs - zeroprobs + </s>)\n", Lin, W - O + S
		printf "score: ppl (words - OOVs - zeroprobs + </s>, as SRILM): %.4f\n", exp(-Lin / (W - O + S))
		printf "score: ppl1 (words - OOVs - zeroprobs, as SRILM): %.4f\n", exp(-Lin / (W - O)) }' >want
	near err want
	# in base 10 the logprobs scale, the perplexities stay
	score -m "$M/ll.llrnn" --base 10 in.tok 2>err10 >/dev/null
	grep -q '^score: logprob (base 10): ' err10
	grep -q '^score: logprob without OOVs (base 10): ' err10
	awk -v L="$L" -v Lin="$Lin" '{ sub(/\(base e\)/, "(base 10)") }
		/^score: logprob \(/ { sub(/: -[0-9.]+ over/, sprintf(": %.4f over", L / log(10))) }
		/^score: logprob without/ { sub(/: -[0-9.]+ over/, sprintf(": %.4f over", Lin / log(10))) } 1' want >want10
	near err10 want10
	# and it can fail: SRILM's ppl1 is not today's words-only figure over every token
	awk -v S="$S" -v W="$W" -v L="$L" '/^score: ppl1/ { sub(/: [0-9.]+$/, sprintf(": %.4f", exp(-L / W))) } 1' want >wrong
	run near err wrong
	assert_failure
}

@test "score: --format srilm prints SRILM's -ppl lines, by hand from --per-token" {
	summary_in
	oov_types "$M/ll.llrnn" in.tok >oov.tsv
	score -q -m "$M/ll.llrnn" --per-token in.tok >pt
	score -q -m "$M/ll.llrnn" --format srilm in.tok >out
	[ "$(wc -l <out)" -eq 2 ]
	grep -Eq '^file in\.tok: 43 sentences, [0-9]+ words, [0-9]+ OOVs$' out
	grep -Eq '^0 zeroprobs, logprob= -[0-9]+\.[0-9]+ ppl= [0-9]+\.[0-9]+ ppl1= [0-9]+\.[0-9]+$' out
	# seven significant digits, as SRILM's streams print them
	[ "$(sed -n '2s/.*logprob= -\([0-9.]*\) .*/\1/p' out | tr -d . | wc -c)" -eq 8 ]
	by_hand oov.tsv total <pt | awk '{ S = $1; W = $2; O = $3; Lin = $6 / log(10)
		printf "file in.tok: %d sentences, %d words, %d OOVs\n", S, W, O
		printf "0 zeroprobs, logprob= %.7g ppl= %.7g ppl1= %.7g\n", Lin, 10 ^ (-Lin / (W - O + S)), 10 ^ (-Lin / (W - O)) }' >want
	near out want
	# stdin is the file -, as for ngram -ppl -
	score -q -m "$M/ll.llrnn" --format srilm <in.tok | sed 's/^file -:/file in.tok:/' | cmp - out
	# the stderr summary gives the same ppl and ppl1
	score -m "$M/ll.llrnn" --format srilm in.tok 2>err >/dev/null
	p=$(sed -n 's/^score: ppl (.*): //p' err) p1=$(sed -n 's/^score: ppl1 (.*): //p' err)
	awk -v p="$p" -v p1="$p1" '{ d = p - $6; e = p1 - $8; exit !(d * d < 1e-6 * p * p && e * e < 1e-6 * p1 * p1) }' <(sed -n 2p out)
}

@test "score: --format srilm --debug 1 adds SRILM's lines for every sentence" {
	summary_in
	oov_types "$M/ll.llrnn" in.tok >oov.tsv
	score -q -m "$M/ll.llrnn" --per-token in.tok >pt
	score -q -m "$M/ll.llrnn" --format srilm --debug 1 in.tok >out
	# 43 sentences of four lines each (the sentence, two lines of
	# figures, an empty line), then the file's two lines
	[ "$(wc -l <out)" -eq $((43 * 4 + 2)) ]
	grep -v '^$' in.tok >sentences
	awk 'NR % 4 == 1' out | head -43 | cmp - sentences
	by_hand oov.tsv <pt | paste sentences - | awk -F'\t' '{ split($2, f, " "); Lin = f[6] / log(10)
		print $1
		printf "1 sentences, %d words, %d OOVs\n", f[2], f[3]
		printf "0 zeroprobs, logprob= %.7g ppl= %.7g", Lin, 10 ^ (-Lin / (f[2] - f[3] + 1))
		if (f[2] > f[3]) printf " ppl1= %.7g\n\n", 10 ^ (-Lin / (f[2] - f[3])); else printf " ppl1= undefined\n\n" }' >want
	score -q -m "$M/ll.llrnn" --format srilm in.tok >>want
	near out want
	# the OOV-only line: ppl1 over no word
	grep -A2 '^zzqxa le$' out | grep -q ' ppl1= [0-9.]*$'
	echo zzqxa | score -q -m "$M/ll.llrnn" --format srilm --debug 1 | grep -q '^0 zeroprobs, logprob= -[0-9.]* ppl= [0-9.]* ppl1= undefined$'
}

@test "score: --format, --debug and --blank-lines misuse exits 2" {
	run_err 2 '--format: must be tsv, json or srilm' score -m "$M/ll.llrnn" --format csv
	run_err 2 '--debug' score -m "$M/ll.llrnn" --format srilm --debug 2
	run_err 2 '--debug goes with --format srilm' score -m "$M/ll.llrnn" --debug 1
	run_err 2 '--blank-lines: must be skip or score' score -m "$M/ll.llrnn" --blank-lines keep
	run_err 2 'no --per-token' score -m "$M/ll.llrnn" --format srilm --per-token
	run_err 2 "no --base but 10" score -m "$M/ll.llrnn" --format srilm --base e
	run score -q -m "$M/ll.llrnn" --format srilm --base 10 "$M/test.tok"
	assert_success
}

@test "score: invalid UTF-8 stops with file:line after writing the lines before it" {
	printf 'le chat\nla petite\nle \377 chat\nla\n' >bad.tok
	for b in 1 8; do
		run bash -c "score -q -m '$M/ll.llrnn' --batch $b bad.tok >out 2>err"
		[ "$status" -eq 1 ]
		[ "$(wc -l <out)" -eq 2 ]
		grep -q '^score: bad.tok:3: .*UTF-8' err
	done
}

@test "score: several files in order, and - for stdin" {
	head -2 "$M/test.tok" >a.tok
	sed -n 3,4p "$M/test.tok" >b.tok
	head -4 "$M/test.tok" | score -q -m "$M/ll.llrnn" >want
	score -q -m "$M/ll.llrnn" a.tok b.tok | cmp - want
	score -q -m "$M/ll.llrnn" a.tok - <b.tok | cmp - want
	gzip -c b.tok >b.tok.gz
	score -q -m "$M/ll.llrnn" a.tok b.tok.gz | cmp - want
}

@test "score: -o writes the file whole" {
	score -q -m "$M/ll.llrnn" -o out.tsv "$M/test.tok"
	[ "$(wc -l <out.tsv)" -eq 40 ]
	run_err 1 'nosuch.tok: No such file' score -q -m "$M/ll.llrnn" -o out2.tsv nosuch.tok
	[ ! -e out2.tsv ]
	[ -z "$(ls | grep 'out2.tsv.tmp' || true)" ]
}

@test "score: | head -1 ends quietly" {
	# 200000 lines of scores overflow any pipe buffer: score really meets
	# EPIPE, dies of the default SIGPIPE (141) or ends 0, and says nothing
	yes "le chat dort" | head -200000 >big.tok
	run bash -c "score -q -m '$M/ll.llrnn' big.tok 2>err | head -1 >out; echo \${PIPESTATUS[0]} >st"
	assert_success
	[ "$(wc -l <out)" -eq 1 ]
	grep -Eq $'^-[0-9]+\\.[0-9]{4}\t4\t[0-9]+$' out
	[ ! -s err ]
	st=$(cat st)
	[ "$st" = 0 ] || [ "$st" = 141 ]
}

@test "score: usage errors exit 2 with the usage" {
	run_err 2 'no model' score
	run_err 2 'usage: score' score
	run_err 2 '--base' score -m "$M/ll.llrnn" --base 3
	run_err 2 '--batch' score -m "$M/ll.llrnn" --batch 0
	run_err 2 '--batch' score -m "$M/ll.llrnn" --batch x
	run_err 2 'usage' score -m "$M/ll.llrnn" --no-such-option
	run score -h
	assert_success
	assert_output --partial "usage: score"
}

@test "score: a missing, foreign, wrong-kind or truncated model is refused" {
	run_err 1 'nosuch.llrnn: No such file' score -m nosuch.llrnn "$M/test.tok"
	run_err 1 "features.*expected a 'model'" score -m "$M/feats" "$M/test.tok"
	head -c 3000 "$M/ll.llrnn" >trunc.llrnn
	run_err 1 'trunc.llrnn: .*[Tt]runcated' score -m trunc.llrnn "$M/test.tok"
	echo "not a model" >text.llrnn
	run_err 1 'text.llrnn: not an llrnn tensor archive' score -m text.llrnn "$M/test.tok"
	run_err 1 'nosuch.tok: No such file' score -m "$M/ll.llrnn" nosuch.tok
}

@test "score: the man page examples run" {
	cp "$M/ll.llrnn" model.llrnn
	cp "$M/test.tok" test.tok
	sed 's/ \([.,]\) /\1 /g' test.tok >text.txt
	score -m model.llrnn test.tok > test.scores 2> test.summary
	[ "$(wc -l <test.scores)" -eq 40 ]
	grep -q 'perplexity' test.summary
	score -m model.llrnn --base 10 --per-token --json test.tok >out.json 2>/dev/null
	[ "$(wc -l <out.json)" -eq 40 ]
	tok -l < text.txt | score -m model.llrnn --batch 64 --check-norm >out 2>err
	[ "$(wc -l <out)" -eq "$(tok -l <text.txt | wc -l)" ]
	coproc SCORE { score -q -m model.llrnn; }
	pid=$SCORE_PID
	echo "le chat dort" >&"${SCORE[1]}"
	read -t 30 -r logprob ntok noov <&"${SCORE[0]}"
	echo "$logprob" >lp
	exec {SCORE[1]}>&-
	wait "$pid"
	[ "$ntok" = 4 ]
	score -q -m model.llrnn --format srilm --debug 1 test.tok > test.ppl
	[ "$(wc -l <test.ppl)" -eq $((40 * 4 + 2)) ]
	tail -2 test.ppl | head -1 | grep -q '^file test.tok: 40 sentences, '
	score -q -m model.llrnn test.tok | paste - test.tok | sort -g | head >worst
	[ "$(wc -l <worst)" -eq 10 ]
}

@test "score: the man page is lint-clean" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	mandoc -Tlint -W warning "$TOP/man/score.1"
}
