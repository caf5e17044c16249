#!/usr/bin/env bats
# 57-open-vocab.bats - open-vocabulary scoring, the spelling side (issue
# 14): featurize --spelling puts the spelling model and lambda in the
# stream, train copies them into the model unchanged, and the error
# paths.  The library side (round trips, the open background's mass) is
# tests/unit/test_openbg.c.  Data: the UD French slice (300 training
# sentences, tiny networks).

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	tok --from conllu -l "$UD/fr_sequoia-ud-train.conllu.gz" | head -n 300 >"$d/train.tok"
	tok --from conllu -l "$UD/fr_sequoia-ud-dev.conllu.gz" | head -n 60 >"$d/valid.tok"
	featurize --top 50 --spelling 4 -o "$d/sp.fz" "$d/train.tok" 2>"$d/fz.err"
	train -q $TINY --epochs 1 -s 3 -o "$d/sp.llrnn" "$d/sp.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

meta() {
	tar xOf "$1" meta | sed -n "s/^$2=//p"
}

@test "featurize --spelling: the stream carries the character n-gram and lambda = (n1 + n_unk) / N" {
	[ "$(meta "$D/sp.fz" spell.order)" = 4 ]
	tar tf "$D/sp.fz" >list
	grep -qx 'spell/vocab' list
	grep -qx 'spell/4/logp.npy' list
	# the members come after logb and before the ids
	[ "$(grep -n -x -e logb.npy -e spell/vocab -e ids/000000.npy list | cut -d: -f2 | tr '\n' ' ')" = "logb.npy spell/vocab ids/000000.npy " ]
	# lambda from the counts, independently: the types seen once over
	# every token and </s>
	vocab "$D/train.tok" >v.tsv
	read -r n1 N < <(awk -F '\t' '$1 != "</s>" && $2 == 1 { n1++ } { N += $2 } END { print n1, N }' v.tsv)
	[ "$(meta "$D/sp.fz" spell.n1)" = "$n1" ]
	[ "$(meta "$D/sp.fz" spell.n_unk)" = 0 ]
	[ "$(meta "$D/sp.fz" spell.events)" = "$N" ]
	[ "$(meta "$D/sp.fz" spell.types)" = "$(awk -F '\t' '$1 != "</s>"' v.tsv | wc -l)" ]
	awk -v l="$(meta "$D/sp.fz" spell.lambda)" -v n1="$n1" -v N="$N" 'BEGIN { d = l - n1 / N; exit !(d < 1e-12 && d > -1e-12) }'
	# the summary line says them
	grep -q "^featurize: spelling model: order 4 on [0-9]* types, [0-9]* character n-grams; lambda [0-9.]* = ($n1 + 0) / $N; p_spell outside the vocabulary 0\.[0-9]*$" "$D/fz.err"
	m=$(meta "$D/sp.fz" spell.mass_outside)
	awk -v m="$m" 'BEGIN { exit !(m > 0 && m < 1) }'
}

@test "featurize: no spelling model unless asked" {
	featurize --top 50 -o plain.fz "$D/train.tok" 2>err
	! tar tf plain.fz | grep -q '^spell/'
	! tar xOf plain.fz meta | grep -q '^spell\.'
	! grep -q 'spelling' err
}

@test "train: the model carries the spelling model byte for byte" {
	[ "$(meta "$D/sp.llrnn" spell.lambda)" = "$(meta "$D/sp.fz" spell.lambda)" ]
	[ "$(meta "$D/sp.llrnn" spell.estimator)" = "good-turing (n1 + n_unk) / N" ]
	tar tf "$D/sp.fz" | grep '^spell/' >want
	[ "$(wc -l <want)" -ge 8 ]
	tar tf "$D/sp.llrnn" | grep '^spell/' >got
	cmp want got
	while read -r m; do
		cmp <(tar xOf "$D/sp.fz" "$m") <(tar xOf "$D/sp.llrnn" "$m")
	done <want
	# and the model still scores
	run --separate-stderr score -m "$D/sp.llrnn" "$D/valid.tok"
	assert_success
	[ "${#lines[@]}" -eq 60 ]
}

@test "featurize --spelling with --vocab: <unk>'s count is n_unk; none warns" {
	vocab "$D/train.tok" >v.tsv
	{ grep -v '^</s>' v.tsv | awk -F '\t' '$2 >= 2'; printf '</s>\t300\n<unk>\t1700\n'; } >cut.tsv
	featurize --vocab cut.tsv --top 50 --spelling 3 -o cut.fz "$D/train.tok" 2>err
	[ "$(meta cut.fz spell.n1)" = 0 ]
	[ "$(meta cut.fz spell.n_unk)" = 1700 ]
	! grep -q 'lambda is its floor' err
	grep -v '^<unk>' cut.tsv >nounk.tsv
	featurize --vocab nounk.tsv --top 50 --spelling 3 -o nounk.fz "$D/train.tok" 2>err
	grep -q '^featurize: .*train.tok: --spelling: no type seen once and no <unk> count: lambda is its floor 1/' err
	N=$(meta nounk.fz spell.events)
	awk -v l="$(meta nounk.fz spell.lambda)" -v N="$N" 'BEGIN { d = l - 1 / N; exit !(d < 1e-12 && d > -1e-12) }'
}

@test "featurize --spelling: usage errors" {
	run_err 2 'featurize: .*--spelling' featurize --spelling 0 "$D/train.tok"
	run_err 2 'featurize: .*--spelling' featurize --spelling 9 "$D/train.tok"
	run_err 2 'featurize: .*--spelling' featurize --spelling x "$D/train.tok"
	run_err 2 'featurize: --spelling: not with --dump' featurize --spelling 3 --dump "$D/train.tok"
}

@test "train, score: a stream or model whose spelling model is damaged is refused, naming it" {
	mkdir x && tar xf "$D/sp.fz" -C x
	# without checksum=crc32c the re-made archive reads as one from
	# before checksums (tar drops their pax headers)
	sed -i -e 's/^spell\.lambda=.*/spell.lambda=1.5/' -e '/^checksum=/d' x/meta
	tar --format=pax -cf bad.fz -C x $(tar tf "$D/sp.fz")
	run_err 1 "train: .*bad.fz: .*meta: spell.lambda: '1.5' is not a number in \(0, 1\)" train -q $TINY -o m.llrnn bad.fz
	[ ! -e m.llrnn ]
	mkdir y && tar xf "$D/sp.llrnn" -C y
	sed -i '/^checksum=/d' y/meta
	tar --format=pax -cf cut.llrnn -C y $(tar tf "$D/sp.llrnn" | grep -v '^spell/4/logp')
	run_err 1 'score: .*cut.llrnn: .*spell' score -m cut.llrnn "$D/valid.tok"
}
