#!/usr/bin/env bats
# 54-python.bats - the Python module llrnn (python/llrnn/, ctypes over
# build/libllrnn.so; issue 48): Model.score, full_scores and perplexity
# give score(1)'s numbers, in base e and in base 10 (KenLM's convention,
# score --base 10), OOVs included, for an LL-RNN, an open-vocabulary
# LL-RNN and an ARPA n-gram (tiny models on the UD French slice, as
# tests/52-model-api.bats), an ARPA model's log10 scores also against
# KenLM's query convention computed from the file itself; its
# description of a model; every bad input
# raising with a message; how it finds the library; its ctypes
# structures against the C compiler's.  tests/api/score-lines.py prints
# the module's numbers in score's --per-token columns.

load test_helper

PY=/usr/bin/python3

setup_file() {
	api_models "$BATS_FILE_TMPDIR"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	python_module_env || return 1
	LINES="$TOP/tests/api/score-lines.py"
	# the validation slice, then words in no vocabulary here (zorglub,
	# 4817), and a line with the markers score takes off
	{
		cat "$D/valid.tok"
		printf '%s\n' "le zorglub mange 4817 pommes ." "<s> la ville de paris </s>"
	} >in.tok
}

# The module's columns against score's, base e and base 10, every line.
same_as_score() {
	local b
	for b in e 10; do
		score -q -m "$1" --base "$b" --per-token in.tok >want
		run "$PY" "$LINES" --base "$b" "$1" <in.tok
		assert_success
		printf '%s\n' "$output" >got
		diff want got
	done
	[ "$(wc -l <got)" -eq "$(wc -l <in.tok)" ]
	# the line with unknown words has some, scored finite
	[ "$(tail -2 got | head -1 | cut -f3)" -ge 2 ]
	run grep -E $'(^|=)-?(inf|nan)(\t|$)' got
	assert_failure
}

@test "llrnn.Model: an LL-RNN (unseen words through their input features), as score, base e and 10" {
	same_as_score "$D/ll.llrnn"
}

@test "llrnn.Model: an open-vocabulary LL-RNN (its own features and spelling), as score, base e and 10" {
	same_as_score "$D/open.llrnn"
	# --closed: OOVs as <unk>
	score -q -m "$D/open.llrnn" --closed --per-token in.tok >want
	"$PY" "$LINES" --closed "$D/open.llrnn" <in.tok >got
	diff want got
	! cmp -s want <(score -q -m "$D/open.llrnn" --per-token in.tok)
}

@test "llrnn.Model: an ARPA n-gram, as score; log10 by default, as KenLM's score and score --base 10" {
	same_as_score "$D/lm.arpa"
	score -q -m "$D/lm.arpa" --base 10 in.tok | cut -f1 >want
	run "$PY" -c '
import sys, llrnn
m = llrnn.Model(sys.argv[1])
for line in open("in.tok"):
    print("%.4f" % m.score(line))
' "$D/lm.arpa"
	assert_success
	diff want <(printf '%s\n' "$output")
}

@test "llrnn.Model: an ARPA model's log10 scores are KenLM's query convention, computed from the file itself, and score --base 10's" {
	# KenLM's query: log10 p(w | h) is the longest listed n-gram's log10
	# prob plus the backoffs of the longer contexts that were not found;
	# an unknown word is <unk>.  Computed here from lm.arpa alone.
	cat >kenlm.py <<'PY'
import sys
import llrnn
prob, bo, order, sec = {}, {}, 0, 0
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("\\") and line.endswith("-grams:"):
        sec = int(line[1:line.index("-")])
        order = max(order, sec)
        continue
    if not sec or not line or line.startswith("\\"):
        continue
    f = line.split("\t")
    g = tuple(f[1].split(" "))
    prob[g] = float(f[0])
    if len(f) > 2:
        bo[g] = float(f[2])
def lp(h, w):
    n = min(len(h), order - 1)
    for k in range(n, -1, -1):
        if tuple(h[len(h) - k:]) + (w,) in prob:
            return prob[tuple(h[len(h) - k:]) + (w,)] + sum(bo.get(tuple(h[len(h) - j:]), 0.0) for j in range(k + 1, n + 1))
m = llrnn.Model(sys.argv[1])
for line in open("in.tok"):
    words = line.split()
    words = words[words[:1] == ["<s>"]:len(words) - (words[-1:] == ["</s>"])]
    h, total, toks = ["<s>"], 0.0, []
    for w in words + ["</s>"]:
        w = w if (w,) in prob else "<unk>"
        toks.append(lp(h, w))
        total += toks[-1]
        h.append(w)
    got = list(m.full_scores(line))
    assert len(got) == len(toks) and all(abs(a - b.logprob) < 1e-5 for a, b in zip(toks, got)), (line, toks, got)
    assert abs(total - m.score(line)) < 1e-5, (line, total, m.score(line))
    print("%.4f" % total)
PY
	score -q -m "$D/lm.arpa" --base 10 in.tok | cut -f1 >want
	run "$PY" kenlm.py "$D/lm.arpa"
	assert_success
	printf '%s\n' "$output" | diff want -
	grep -q '<unk>' "$D/lm.arpa"
	[ "$(wc -l <want)" -eq "$(wc -l <in.tok)" ]
}

@test "llrnn.Model: perplexity is exp(-logprob / tokens) of score's line; eos=False leaves </s> out" {
	score -q -m "$D/ll.llrnn" --per-token in.tok | head -3 >sc
	run "$PY" -c '
import math, sys, llrnn
with llrnn.Model(sys.argv[1]) as m:
    for line in sys.stdin:
        lp, n, _ = line.split("\t")[:3]
        eos = float(line.rstrip("\n").split("\t")[-1].split("=")[-1])
        words = " ".join(f.rsplit("=", 1)[0] for f in line.rstrip("\n").split("\t")[3:-1])
        want = math.exp(-float(lp) / int(n))
        got = m.perplexity(words)
        assert abs(got - want) <= want * 1e-3, (got, want)
        no_eos = m.score(words, True, False, "e")  # KenLM order: bos, eos
        assert abs(no_eos - (float(lp) - eos)) < 2e-4, (no_eos, lp, eos)
        assert len(list(m.full_scores(words, eos=False))) == int(n) - 1
print("ok")
' "$D/ll.llrnn" <sc
	assert_success
	assert_output ok
}

@test "llrnn.Model: info, order, vocab_size and family describe the model as llr_model_describe does" {
	run "$PY" -c '
import sys, llrnn
for p in sys.argv[1:]:
    with llrnn.Model(p) as m:
        i = m.info
        print(i.kind, i.family, i.vocab_size, i.order, i.layers, i.output, i.cell, i.spelling, i.oov, ",".join(i.operations))
        assert (m.order, m.vocab_size, m.family) == (i.order, i.vocab_size, i.family)
' "$D/ll.llrnn" "$D/open.llrnn" "$D/lm.arpa"
	assert_success
	v=$(tar xOf "$D/ll.llrnn" meta | sed -n 's/^vocab_size=//p')
	assert_line --index 0 "model rnnlm $v 0 1 loglinear lstm False unk describe,score,embed,gen,beam,gen_features"
	assert_line --index 1 --regexp '^model rnnlm [0-9]+ 0 1 loglinear lstm True features describe,score,embed,gen,beam,gen_features$'
	assert_line --index 2 --regexp '^ngram ngram [0-9]+ 3 0 None None False unk describe,score,gen$'
}

@test "llrnn.Model: a missing or corrupt model raises llrnn.Error with the library's message and code; bad arguments raise" {
	echo "not a model" >bad.llrnn
	run "$PY" -c '
import sys, llrnn
for p in sys.argv[1:]:
    try:
        llrnn.Model(p)
    except llrnn.Error as e:
        print("%s|%d" % (e, e.code))
' none.llrnn bad.llrnn
	assert_success
	assert_line --index 0 --regexp '^none\.llrnn: .*No such file or directory\|-2$'
	assert_line --index 1 --regexp '^bad\.llrnn: .+\|-[0-9]+$'
	# uncaught: a traceback ending in the message, status 1
	run "$PY" -c 'import llrnn; llrnn.Model("none.llrnn")'
	assert_failure 1
	assert_line --index -1 --regexp '^llrnn\.Error: none\.llrnn: '
	# arguments: not a path, not an open mode
	run "$PY" -c '
import sys, llrnn
for a, k in ((None, {}), (sys.argv[1], {"open": "yes"})):
    try:
        llrnn.Model(a, **k)
    except (TypeError, ValueError) as e:
        print("%s: %s" % (type(e).__name__, e))
' "$D/lm.arpa"
	assert_success
	assert_line --index 0 "TypeError: path: expected a file name, got NoneType"
	assert_line --index 1 "ValueError: open: expected None (the model's default), True or False, got 'yes'"
	# the error program's path: status 1, nothing on stdout, the message
	run_err 1 '^score-lines\.py: bad\.llrnn: ' "$LINES" bad.llrnn
}

@test "llrnn.Model: bad sentences and a closed model raise, naming what is wrong; the interpreter survives" {
	run "$PY" -c '
import sys, llrnn
m = llrnn.Model(sys.argv[1])
for s in (None, 42, ["le", "chat"], "", "  \t ", "<s> </s>", "le </s> chat", "a\nb", b"le \xff chat", "le \udcff chat"):
    try:
        m.score(s)
        print("no error for %r" % (s,))
    except (TypeError, ValueError) as e:
        print("%s: %s" % (type(e).__name__, e))
for k in ({"base": 7}, {"bos": False}):
    try:
        m.score("le chat", **k)
    except ValueError as e:
        print(e)
print("%.4f" % m.score(b"le chat", base="e"), "%.4f" % m.score("le chat\r\n", base="e"))
m.close()
m.close()
for f in (lambda: m.score("le chat"), lambda: list(m.full_scores("le")), lambda: m.perplexity("le")):
    try:
        f()
    except ValueError as e:
        print(e)
with llrnn.Model(sys.argv[1]) as m2:
    pass
print(m2.closed)
' "$D/ll.llrnn"
	assert_success
	assert_line --index 0 "TypeError: sentence: expected str (tokens separated by spaces), got NoneType"
	assert_line --index 1 "TypeError: sentence: expected str (tokens separated by spaces), got int"
	assert_line --index 2 "TypeError: sentence: expected str (tokens separated by spaces), got list"
	assert_line --index 3 "ValueError: sentence: empty (no word besides the markers)"
	assert_line --index 4 "ValueError: sentence: empty (no word besides the markers)"
	assert_line --index 5 "ValueError: sentence: empty (no word besides the markers)"
	assert_line --index 6 "ValueError: sentence: </s> inside the sentence (a marker only as its first or last token)"
	assert_line --index 7 "ValueError: sentence: a newline or NUL inside (one sentence, one line)"
	# invalid UTF-8: UnicodeDecodeError and UnicodeEncodeError, ValueErrors
	assert_line --index 8 --regexp "^UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"
	assert_line --index 9 --regexp "^UnicodeEncodeError: 'utf-8' codec can't encode character '\\\\udcff'"
	assert_line --index 10 "base: expected 10, 2 or 'e', got 7"
	assert_line --index 11 "bos=False: llrnn scores every sentence from <s> (the library has no other context)"
	want=$(echo "le chat" | score -q -m "$D/ll.llrnn" | cut -f1)
	assert_line --index 12 "$want $want"
	assert_line --index 13 "llrnn.Model: the model is closed"
	assert_line --index 14 "llrnn.Model: the model is closed"
	assert_line --index 15 "llrnn.Model: the model is closed"
	assert_line --index 16 "True"
	refute_output --partial "no error"
}

@test "llrnn: the library from LLRNN_LIB, beside the module, or by its soname; none: OSError saying what to do" {
	run env LLRNN_LIB="$BATS_TEST_TMPDIR/none.so" "$PY" -c 'import llrnn; llrnn.Model("x")'
	assert_failure 1
	assert_output --partial "OSError: llrnn: cannot load the llrnn library ($BATS_TEST_TMPDIR/none.so: no such file); build it (make) and set LLRNN_LIB"
	# importing needs no library: help works without it
	run env LLRNN_LIB="$BATS_TEST_TMPDIR/none.so" "$PY" -c 'import llrnn; print(llrnn.Model.score.__doc__)'
	assert_success
	assert_output --partial "log10 by default, as"
	# a copy of the module with the library beside it, no LLRNN_LIB
	mkdir -p copy
	cp -r "$TOP/python/llrnn" copy/
	so=$(sed -n 's/^SONAME = "\(.*\)"$/\1/p' "$TOP/python/llrnn/_capi.py")
	[ "$so" = "$(readlink "$TOP/build/libllrnn.so")" ]
	run env -u LLRNN_LIB PYTHONPATH=copy "$PY" -c 'import llrnn; print("%.4f" % llrnn.Model(__import__("sys").argv[1]).score("le chat", base="e"))' "$D/lm.arpa"
	assert_failure
	assert_output --partial "cannot load the llrnn library"
	cp "$TOP/build/$so" copy/llrnn/
	run env -u LLRNN_LIB PYTHONPATH=copy "$PY" -c 'import llrnn; print("%.4f" % llrnn.Model(__import__("sys").argv[1]).score("le chat", base="e"))' "$D/lm.arpa"
	assert_success
	assert_output "$(echo "le chat" | score -q -m "$D/lm.arpa" | cut -f1)"
	# the soname, where the dynamic loader looks
	run env -u LLRNN_LIB LD_LIBRARY_PATH="$TOP/build" "$PY" -c 'import llrnn; print(llrnn.Model(__import__("sys").argv[1]).order)' "$D/lm.arpa"
	assert_success
	assert_output 3
}

@test "llrnn: its ctypes structures have the C compiler's offsets and sizes (tests/api/struct-layout.c)" {
	[ -x "$TOP/build/tests/api/struct-layout" ] || { echo "build/tests/api/struct-layout not built (make builds it)" >&2; return 1; }
	"$TOP/build/tests/api/struct-layout" >want
	"$PY" - >got <<'PY'
import ctypes
from llrnn import _capi
for py, c in ((_capi.Err, "llr_err"), (_capi.Opts, "llr_model_opts"), (_capi.Info, "llr_model_info"),
              (_capi.Sentence, "llr_sentence"), (_capi.SampleOpts, "llr_sample_opts"),
              (_capi.GenOpts, "llr_gen_opts"), (_capi.GenResult, "llr_gen_result"), (_capi.Rng, "llr_rng")):
    for f in py._fields_:
        print("%s.%s %d" % (c, f[0], getattr(py, f[0]).offset))
    print(c, ctypes.sizeof(py))
print("LLR_GEN_BATCH", _capi.GEN_BATCH)
PY
	diff want got
}

@test "llrnn: help(llrnn) documents the module, Model and its methods" {
	run "$PY" -c 'import pydoc, llrnn; print(pydoc.render_doc(llrnn, renderer=pydoc.plaintext))'
	assert_success
	assert_output --partial "llrnn - score sentences with llrnn's language models from Python"
	for f in full_scores perplexity score close order info generate embed features score_batch score_pair Generated; do
		assert_output --partial " $f"
	done
	run "$PY" -c 'import llrnn; print(llrnn.Error.__module__, llrnn.Model.__module__)'
	assert_output "llrnn llrnn.model"
}

@test "llrnn.Model: threads sharing one model take turns and get the numbers of one thread" {
	run "$PY" -c '
import sys, threading, llrnn
lines = open("in.tok").read().splitlines()
with llrnn.Model(sys.argv[1]) as m:
    want = [m.score(l) for l in lines]
    got = {}
    def work(k):
        got[k] = [m.score(l) for l in lines]
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
print(all(got[k] == want for k in range(4)), len(got))
' "$D/ll.llrnn"
	assert_success
	assert_output "True 4"
}
