#!/usr/bin/env bats
# The tensor archive at the command line (llrnn-tensor(5)): the man page
# EXAMPLES, tar and NumPy reading what featurize wrote, byte-identical
# output, compressed and truncated streams through the tools that read
# archives.  The library side is tested in tests/unit/test_tensorio.c.

load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
	printf 'le chat dort .\nle chien dort .\nun chat mange .\n' >tokens.txt
}

@test "llrnn-tensor(5) EXAMPLES: tar tvf, tar xOf meta, numpy.load, xz" {
	featurize -o features.bin tokens.txt 2>/dev/null
	run tar tvf features.bin
	assert_success
	assert_line --index 0 --regexp '^-rw-r--r-- 0/0 +[0-9]+ 1970-01-01 00:00 meta$'
	assert_output --partial 'logb.npy'
	run tar xOf features.bin meta
	assert_success
	assert_line --index 0 'format=llrnn'
	assert_line --index 1 'version=1'
	assert_line --index 2 'kind=features'
	if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
		skip "python3-numpy not installed (scripts/install-deps installs it)"
	fi
	run /usr/bin/python3 -c 'import io, tarfile, numpy
t = tarfile.open("features.bin")
print(numpy.load(io.BytesIO(t.extractfile("logb.npy").read())).shape)'
	assert_success
	V=$(tar xOf features.bin meta | sed -n 's/^vocab_size=//p')
	assert_output "($V,)"
	xz -k features.bin
	run sh -c 'xz -dc features.bin.xz | tar tf - | head -n 1'
	assert_output meta
}

@test "tensor archive: every member loads in NumPy with the shape tar and meta promise" {
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy not installed"
	featurize -o features.bin tokens.txt 2>/dev/null
	run /usr/bin/python3 - features.bin <<'EOF'
import io, sys, tarfile
import numpy as np
t = tarfile.open(sys.argv[1])
meta = dict(l.split("=", 1) for l in t.extractfile("meta").read().decode().splitlines())
V = int(meta["vocab_size"])
arrays = {m.name[:-4]: np.load(io.BytesIO(t.extractfile(m).read()), allow_pickle=False)
          for m in t.getmembers() if m.name.endswith(".npy")}
assert arrays["logb"].shape == (V,) and arrays["logb"].dtype == np.float32
ip = arrays["phi/indptr"]
assert ip.shape == (V + 1,) and ip[0] == 0 and ip[-1] == len(arrays["phi/indices"])
ids = np.concatenate([arrays[k] for k in sorted(arrays) if k.startswith("ids/")])
# the tokens, maybe with one </s> per sentence
assert ids.dtype == np.int32 and int(meta["tokens"]) <= len(ids) <= int(meta["tokens"]) + int(meta["sentences"]), (len(ids), meta)
assert ids.min() >= 0 and ids.max() < V
print("ok", V, meta["tokens"])
EOF
	assert_success
	assert_output --regexp '^ok [0-9]+ 12$'
}

@test "tensor archive: identical input gives byte-identical output, file or stdout" {
	featurize -o a.bin tokens.txt 2>/dev/null
	featurize -o b.bin tokens.txt 2>/dev/null
	featurize tokens.txt >c.bin 2>/dev/null
	cmp a.bin b.bin
	cmp a.bin c.bin
	# no temporary files left beside the output
	run ls
	refute_output --partial '.tmp-'
}

@test "tensor archive: train refuses a cut or foreign stream, writing nothing" {
	[ -x "$TOP/bin/train" ] || skip "train is not built yet"
	featurize -o features.bin tokens.txt 2>/dev/null
	size=$(wc -c <features.bin)
	head -c $((size - 1024)) features.bin >cut.bin
	run_err 1 'cut.bin: truncated' train -q -o model.bin cut.bin
	[ ! -e model.bin ]
	head -c 700 features.bin >cut2.bin
	run_err 1 'cut2.bin: .*(truncated|Truncated)' train -q -o model.bin cut2.bin
	printf 'not an archive\n' >text.bin
	run_err 1 'text.bin: not an llrnn tensor archive' train -q -o model.bin text.bin
}

@test "tensor archive: a features stream where a model is needed says what to do" {
	[ -x "$TOP/bin/score" ] || skip "score is not built yet"
	featurize -o features.bin tokens.txt 2>/dev/null
	run_err 1 "features.bin: is a 'features' archive.*expected a 'model'; make one with 'train'" score -m features.bin tokens.txt
}
