#!/usr/bin/env bats
# The encoder-decoder through the tools (issue 15): featurize --source on
# the CMUdict slice (tests/fixtures/g2p, split by scripts/g2p-prep), train
# on a source stream, gen and score with -m, the man pages' EXAMPLES, and
# the error paths (misaligned files, an empty source line, a model
# without a source given --source).

load test_helper

G2P="$FIXTURES/g2p/cmudict-slice.tgz"
LEX="$TOP/lexicons/arpabet-phonology.lex"

setup_file() {
	export D="$BATS_FILE_TMPDIR/g2p"
	mkdir -p "$D"
	python3 "$TOP/scripts/g2p-prep" "$G2P" "$D" 2>/dev/null
}

@test "featurize --source: the source side in the stream, ids aligned with the target's" {
	cd "$D"
	featurize --top 100 --lexicon "$LEX" --source train.src -o ll.feat train.tgt 2>err
	grep -q 'source train.src: 1442 lines' err
	tar tf ll.feat >list
	for m in source/vocab source/features source/psi/indptr.npy source/ids/000000.npy ids/000000.npy; do
		grep -qx "$m" list
	done
	tar xOf ll.feat meta | grep -qx 'prime=none'
	tar xOf ll.feat source/features | grep -qx 'SRC:a'
	/usr/bin/python3 - <<'PY'
import io, tarfile, numpy
t = tarfile.open("ll.feat")
get = lambda n: numpy.load(io.BytesIO(t.extractfile(n).read()))
meta = dict(l.split("=", 1) for l in t.extractfile("meta").read().decode().splitlines())
sv = t.extractfile("source/vocab").read().decode().split("\n")
tv = t.extractfile("vocab").read().decode().split("\n")
s, y = get("source/ids/000000.npy"), get("ids/000000.npy")
se, te = int(meta["source_eos_id"]), int(meta["eos_id"])
src = [l.split() for l in open("train.src")]
tgt = [l.split() for l in open("train.tgt")]
def split(ids, eos, vocab):
    out, cur = [], []
    for i in ids:
        if i == eos:
            out.append(cur); cur = []
        else:
            cur.append(vocab[i])
    assert not cur
    return out
assert split(s, se, sv) == src, "source ids"
assert split(y, te, tv) == tgt, "target ids"
PY
}

@test "featurize --source: an empty source line is a pair with an empty source" {
	cd "$BATS_TEST_TMPDIR"
	printf 'a b\n\nc\n' >s.txt
	printf 'X\nY Z\nX\n' >t.txt
	featurize --source s.txt -o p.feat t.txt 2>err
	grep -q '3 lines (1 empty)' err
	/usr/bin/python3 -c '
import io, tarfile, numpy
t = tarfile.open("p.feat")
s = numpy.load(io.BytesIO(t.extractfile("source/ids/000000.npy").read()))
e = int(dict(l.split("=", 1) for l in t.extractfile("meta").read().decode().splitlines())["source_eos_id"])
assert list(s).count(e) == 3 and s[2] == e, s'
}

@test "featurize --source: misaligned files name both files and the line" {
	cd "$BATS_TEST_TMPDIR"
	printf 'a b\nc\nd\n' >s.txt
	printf 'X\nY\n' >t.txt
	run_err 1 "s.txt \(3 lines\) and t.txt \(2 lines\) are not aligned: they diverge at line 3" featurize --source s.txt -o p.feat t.txt
	[ ! -e p.feat ]
	run_err 1 "t.txt \(2 lines\) and s.txt \(3 lines\).*line 3, which only s.txt has" featurize --source t.txt -o p.feat s.txt
	printf 'a\nb\n' >s2.txt
	printf 'X\n\n' >t2.txt
	run_err 1 "t2.txt:2: an empty target line" featurize --source s2.txt -o p.feat t2.txt
	run_err 2 "exactly one target file" featurize --source s.txt -o p.feat t.txt t.txt
	run_err 2 "not with --dump" featurize --source s.txt --dump t.txt
	run_err 1 "nosuch" featurize --source nosuch -o p.feat t.txt
}

@test "featurize(1) EXAMPLES: parallel data" {
	cd "$D"
	mkdir -p lexicons && cp "$LEX" lexicons/
	featurize --top 100 --lexicon lexicons/arpabet-phonology.lex \
		--source train.src -o g2p.feat train.tgt
	run sh -c "tar tf g2p.feat | grep '^source/'"
	assert_success
	assert_line 'source/vocab'
	assert_line 'source/ids/000000.npy'
}
