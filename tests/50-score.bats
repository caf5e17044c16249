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

@test "score: one line out per line in, empty lines and OOV-only lines included" {
	printf 'le chat\n\nzzqxa wwqyb kkqzc\n\n\nla\n' >in.tok
	run score -q -m "$M/ll.llrnn" in.tok
	assert_success
	[ "${#lines[@]}" -eq 6 ]
	# empty line: only </s>, no OOV
	[ "$(echo "${lines[1]}" | cut -f2,3)" = "$(printf '1\t0')" ]
	[ "$(echo "${lines[2]}" | cut -f2,3)" = "$(printf '4\t3')" ]
	[ "$(echo "${lines[5]}" | cut -f2,3)" = "$(printf '2\t0')" ]
	# the empty lines all get the same score
	[ "${lines[1]}" = "${lines[3]}" ]
	[ "${lines[1]}" = "${lines[4]}" ]
	# every first column is a finite negative number
	score -q -m "$M/ll.llrnn" in.tok | awk -F'\t' '$1 !~ /^-[0-9]+\.[0-9][0-9][0-9][0-9]$/ { exit 1 }'
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
	score -q -m "$M/ll.llrnn" --json --per-token in.tok >out.json
	score -q -m "$M/ll.llrnn" in.tok >out.tsv
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

@test "score: the summary's counts and perplexities follow the documented formulas" {
	printf 'le chat\n\nzzqxa le\n' >in.tok
	cat "$M/test.tok" >>in.tok
	score -m "$M/ll.llrnn" --json --per-token in.tok >out 2>err
	"$PY" - out err <<'EOF'
import json, math, re, sys
S = W = O = 0
L = Loov = 0.0
for line in open(sys.argv[1]):
    j = json.loads(line)
    S += 1; W += j["tokens"] - 1; O += j["oovs"]
    for p in j["per_token"]:
        L += p["logprob"]
        if p["oov"]:
            Loov += p["logprob"]
err = open(sys.argv[2]).read()
assert "score: %d sentences, %d words, %d OOVs\n" % (S, W, O) in err, err
assert O > 0
def ppl(what):
    return float(re.search(re.escape("perplexity " + what) + r": ([0-9.]+)", err).group(1))
def close(a, b):
    return abs(a - b) <= 1e-3 * max(1, abs(b))
assert close(ppl("(words + </s>)"), math.exp(-L / (W + S))), err
assert close(ppl("(ppl1, words only)"), math.exp(-L / W)), err
assert close(ppl("(excluding OOVs)"), math.exp(-(L - Loov) / (W - O + S))), err
m = re.search(r"logprob \(base e\): (-[0-9.]+) over (\d+) tokens", err)
assert close(float(m.group(1)), L) and int(m.group(2)) == W + S, err
EOF
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
	score -q -m model.llrnn test.tok | paste - test.tok | sort -g | head >worst
	[ "$(wc -l <worst)" -eq 10 ]
}

@test "score: the man page is lint-clean" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	mandoc -Tlint -W warning "$TOP/man/score.1"
}
