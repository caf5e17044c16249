#!/usr/bin/env bats
# 56-ngram-background.bats - the n-gram as context-dependent background
# (featurize --background ngram:LM): the stream and the model carry the
# n-gram, train/score/gen use it, score --check-norm holds within 1e-5,
# the OOV policy is said, and the error paths.  The sparse normaliser
# itself is checked against the dense sum in tests/unit/test_ngbg.c.
# Data: the UD French slice (300 training sentences, tiny networks).

bats_require_minimum_version 1.5.0
load test_helper

TINY="--hidden 16 --embed 16 --layers 1 --threads 1"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	ud_slice "$d"
	train -q --ngram 3 -o "$d/lm.arpa" "$d/train.tok"
	featurize --top 50 --extra "$d/valid.tok" --background "ngram:$d/lm.arpa" -o "$d/bg.fz" "$d/train.tok" 2>"$d/fz.err"
	train -q $TINY --epochs 2 -s 3 -o "$d/bg.llrnn" "$d/bg.fz"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
}

@test "featurize --background ngram: the stream carries the n-gram, logb is its unigram level" {
	[ "$(meta "$D/bg.fz" background)" = ngram ]
	[ "$(meta "$D/bg.fz" bg.order)" = 3 ]
	[ "$(meta "$D/bg.fz" bg.ngram.1)" = "$(sed -n 's/^ngram 1=//p' "$D/lm.arpa")" ]
	tar tf "$D/bg.fz" | grep -qx 'bg/3/logp.npy'
	# the vocabulary words of valid.tok the n-gram lacks are counted
	# and said: they take its <unk> probability
	n=$(meta "$D/bg.fz" background_absent)
	[ "$n" -gt 0 ]
	grep -q "^featurize: .*lm.arpa: $n vocabulary words are not in the n-gram: they take its <unk> probability" "$D/fz.err"
}

@test "train: the model carries the n-gram and scores sum to 1 within 1e-5 (score --check-norm)" {
	[ "$(meta "$D/bg.llrnn" background)" = ngram ]
	tar tf "$D/bg.llrnn" | grep -qx 'bg/vocab'
	run --separate-stderr score -m "$D/bg.llrnn" --check-norm "$D/valid.tok"
	assert_success
	[ "${#lines[@]}" -eq 60 ]
	max=$(echo "$stderr" | sed -n 's/.*norm check: max |sum p - 1| = \([^,]*\), 0 batch(es) over.*/\1/p')
	[ -n "$max" ]
	awk -v m="$max" 'BEGIN { exit !(m <= 1e-5) }'
	# a finite perplexity
	echo "$stderr" | grep -Eq 'perplexity \(words \+ </s>, OOVs scored as <unk>\): [0-9]+\.[0-9]+'
}

@test "score: the same numbers in batches, on threads and one line at a time" {
	score -m "$D/bg.llrnn" "$D/valid.tok" >one 2>/dev/null
	score -m "$D/bg.llrnn" --batch 16 --threads 2 "$D/valid.tok" >many 2>/dev/null
	[ "$(wc -l <one)" -eq 60 ] && [ "$(wc -l <many)" -eq 60 ]
	paste one many | awk -F '\t' '{ d = $1 - $4; if (d < 0) d = -d; if (d > 1e-3 * (1 + ($1 < 0 ? -$1 : $1))) bad++ } END { exit bad > 0 }'
}

@test "train: an n-gram background model trains deterministically (same seed, same bytes)" {
	train -q $TINY --epochs 1 -s 3 -o a.llrnn "$D/bg.fz"
	train -q $TINY --epochs 1 -s 3 -o b.llrnn "$D/bg.fz"
	cmp a.llrnn b.llrnn
}

@test "gen: samples from a model with an n-gram background, seeded" {
	gen -m "$D/bg.llrnn" -n 5 -s 9 >a
	gen -m "$D/bg.llrnn" -n 5 -s 9 >b
	cmp a b
	[ "$(wc -l <a)" -eq 5 ]
}

@test "featurize --background ngram: error paths" {
	run_err 1 'featurize: nosuch.arpa: ' featurize --top 5 --background ngram:nosuch.arpa "$D/train.tok"
	run_err 2 'featurize: .*ngram: needs a file' featurize --top 5 --background ngram: "$D/train.tok"
	# a malformed ARPA file: file:line: reason
	sed 's/^ngram 2=.*/ngram 2=3/' "$D/lm.arpa" >bad.arpa
	run_err 1 'featurize: bad.arpa:[0-9]+: ' featurize --top 5 --background ngram:bad.arpa "$D/train.tok"
	# no <unk> in the n-gram and a vocabulary word it lacks: refused
	printf '\\data\\\nngram 1=3\n\n\\1-grams:\n-0.5\t</s>\n-99\t<s>\n-0.2\tle\n\n\\end\\\n' >nounk.arpa
	run_err 1 "featurize: nounk.arpa: the n-gram has no <unk> and lacks the word" featurize --top 5 --background ngram:nounk.arpa "$D/train.tok"
	[ ! -e out.fz ]
}

@test "score: a model whose n-gram member is cut is refused" {
	mkdir x && tar xf "$D/bg.llrnn" -C x
	tar --format=pax -cf cut.llrnn -C x $(tar tf "$D/bg.llrnn" | grep -v '^bg/3/logp')
	run_err 1 'score: .*cut.llrnn' score -m cut.llrnn "$D/valid.tok"
}

@test "featurize(1) EXAMPLES: the adaptation recipe runs as written (tiny sizes)" {
	cp "$D/train.tok" general.tok
	head -n 40 "$D/valid.tok" >domain.tok
	tail -n 20 "$D/valid.tok" >test.tok
	train -q --ngram 4 -o general.arpa general.tok
	featurize --top 2500 --background ngram:general.arpa \
		-o domain.feat domain.tok 2>/dev/null
	train -q $TINY --epochs 1 -o adapted.llrnn domain.feat
	run --separate-stderr score -m adapted.llrnn --check-norm test.tok
	assert_success
	echo "$stderr" | grep -q ', 0 batch(es) over'
}

@test "scripts/lm-adapt-report: nats per token of each row and lambda tuned on valid" {
	mkdir w
	# two sentences of two tokens each: the n-gram and the RNN each put
	# 0.9 on a different token and 0.1 on the other, so the best mixture
	# is lambda = 0.5 (0.5 on each), -log 0.5 nats per token
	a=$(awk 'BEGIN { printf "%.6f", log(0.9) }') b=$(awk 'BEGIN { printf "%.6f", log(0.1) }')
	for p in dvalid dtest; do
		for m in kn-general kn-domain ll-unigram ll-ngram; do
			printf -- '-2\t2\t0\tx=-1\t</s>=-1\n-4\t2\t0\tx=-2\t</s>=-2\n' >w/$m.$p.lp
		done
		t=$(awk -v a="$a" -v b="$b" 'BEGIN { print a + b }')
		printf -- '%s\t2\t0\tx=%s\t</s>=%s\n' "$t" "$a" "$b" "$t" "$a" "$b" >w/kn-all.$p.lp
		printf -- '%s\t2\t0\tx=%s\t</s>=%s\n' "$t" "$b" "$a" "$t" "$b" "$a" >w/rnn.$p.lp
	done
	for m in rnn ll-unigram ll-ngram; do
		printf 'epochs_done=3\nstopped=patience\ntrain_tokens=10\n' >meta
		tar --format=pax -cf w/$m.model meta
	done
	"$TOP/scripts/lm-adapt-report" -s "test" w out
	[ "$(cut -f1 out.tsv | tr '\n' ' ')" = "model kn-general kn-domain kn-all rnn ll-unigram ll-ngram interp " ]
	grep -qx 'kn-general	1.5000	1.5000' out.tsv
	grep -qx 'kn-all	1.2040	1.2040' out.tsv
	grep -qx 'interp	0.6931	0.6931' out.tsv
	grep -q 'lambda = 0.5 for kn-all' out.md
	grep -q '^rnn: 3 epochs (patience), 10 training tokens' out.md
}

# brown.tgz: the Brown slice where four of its documents play genre j
genre_j_archive() {
	mkdir -p a/package && tar xzf "$BROWN" -C a
	i=0
	for f in $(ls a/package | grep -E '^c[a-r][0-9][0-9]$' | grep -v '^cj' | tail -n 4); do
		i=$((i + 1)) && mv "a/package/$f" "a/package/cj0$i"
	done
	tar czf brown.tgz -C a package
}

# pipelines/lm-adaptation.mk's seeds section on brown.tgz, tiny networks
seeds_make() {
	make -s -f "$TOP/pipelines/lm-adaptation.mk" ARCHIVE=brown.tgz W=w RESULTS=res BIN="$TOP/bin" \
		SCRIPTS="$TOP/scripts" DTRAIN=2 DVALID=1 DTEST=1 ORDER=3 TOP=50 EMBED=8 HIDDEN=8 EPOCHS=2 THREADS=1 "$@"
}

@test "pipelines/lm-adaptation.mk: a tiny run on the Brown slice writes the table, its note and the plot" {
	genre_j_archive
	run make -s -f "$TOP/pipelines/lm-adaptation.mk" ARCHIVE=brown.tgz W=w RESULTS=res BIN="$TOP/bin" \
		SCRIPTS="$TOP/scripts" DTRAIN=2 DVALID=1 DTEST=1 ORDER=3 TOP=50 EMBED=8 HIDDEN=8 EPOCHS=1 MAXTIME=30s THREADS=1
	assert_success
	[ "$(cut -f1 res/lm-adaptation.tsv | tr '\n' ' ')" = "model kn-general kn-domain kn-all rnn ll-unigram ll-ngram interp " ]
	awk -F '\t' 'NR > 1 && !($2 > 0 && $3 > 0 && $2 < 20 && $3 < 20) { bad++ } END { exit bad > 0 }' res/lm-adaptation.tsv
	grep -q '^interp: lambda = ' res/lm-adaptation.md
	[ "$(tar xOf w/ll-ngram.model meta | sed -n 's/^background=//p')" = ngram ]
	if command -v gnuplot >/dev/null; then [ -s res/lm-adaptation.png ]; fi
}

@test "lm-interp: lambda tuned on valid, the test output is the per-token mixture in score's shape" {
	printf -- '-2\t2\t0\ta=-1\t</s>=-1\n' >va
	printf -- '-4\t2\t1\ta=-3\t</s>=-1\n' >vb
	cp va ta && cp vb tb
	run "$TOP/scripts/lm-interp" --valid va vb --test ta tb --valid-out vo --test-out to.xz
	assert_success
	assert_line 'lambda=1'
	assert_line 'valid=1.0000'
	xz -dc to.xz >to
	grep -qx -- '-2.000000	2	1	a=-1.000000	</s>=-1.000000' to
	# a token count that differs: named, nothing written
	printf -- '-1\t1\t0\ta=-1\n' >vc
	run_err 1 'lm-interp: va:1: 2 tokens, vc:1: 1' "$TOP/scripts/lm-interp" --valid va vc --test ta tb \
		--valid-out vo2 --test-out to2
	[ ! -e vo2 ] && [ ! -e to2 ]
}

@test "pipelines/lm-adaptation.mk seeds: a clean vocabulary, the interp output is the mixture, results-check recomputes the table" {
	genre_j_archive
	run seeds_make SEEDS="1 2" seeds -j2
	assert_success
	O=res/outputs/lm-adaptation-seeds
	[ "$(cut -f1,2 res/lm-adaptation-seeds.tsv | tr '\t\n' ': ')" = \
		"model:seeds kn-general:- kn-domain:- kn-all:- rnn:1,2 ll-unigram:1,2 ll-ngram:1,2 interp:1,2 " ]
	[ "$(tar xOf w/seeds/rnn-s1.model meta | sed -n 's/^output=//p')" = classes ]
	[ "$(tar xOf w/seeds/ll-ngram-s2.model meta | sed -n 's/^background=//p')" = ngram ]
	# the clean vocabulary: general + dtrain + dvalid, no word only in dtest
	cat w/general.tok w/dtrain.tok w/dvalid.tok | tr ' ' '\n' | sort -u >seen
	tr ' ' '\n' <w/dtest.tok | sort -u | comm -23 - seen >test-only
	[ -s test-only ]
	for f in uni ng; do
		tar xOf w/seeds/$f.fz vocab | sort -u | comm -12 - test-only >leak
		[ ! -s leak ]
		tr ' ' '\n' <w/dvalid.tok | sort -u | comm -23 - <(tar xOf w/seeds/$f.fz vocab | sort -u) >missing
		[ ! -s missing ]
	done
	# so the test outputs count OOVs, and the table says their share
	[ "$(xz -dc $O/rnn-s1.test.tsv.xz | awk -F '\t' '{ o += $3 } END { print (o > 0) }')" = 1 ]
	awk -F '\t' 'NR > 1 && $9 == "" { exit 1 }' res/lm-adaptation-seeds.tsv
	# the brown tags of the streams come from the documents without dtest's
	! tar tf w/seeds/tagged.tar | grep -qx "$(cat w/brown/dtest.txt)"
	# interp: per token, lambda kn-all + (1 - lambda) rnn, lambda from valid
	l=$(sed -n 's/^lambda=//p' w/seeds/interp-s2.lambda)
	paste w/kn-all.dtest.lp w/seeds/rnn-s2.dtest.lp | awk -F '\t' -v l="$l" '{
		n = $2; t = 0
		for (i = 1; i <= n; i++) {
			a = $(3 + i); b = $(n + 6 + i); sub(/.*=/, "", a); sub(/.*=/, "", b)
			t += log(l * exp(a) + (1 - l) * exp(b))
		}
		printf "%.6f\t%d\n", t, n
	}' >want
	xz -dc $O/interp-s2.test.tsv.xz | cut -f 1,2 | paste - want | awk -F '\t' '
		$2 != $4 || $1 - $3 > 1e-4 || $3 - $1 > 1e-4 { bad++ } END { exit bad > 0 || NR == 0 }'
	# every kept output is score --per-token's
	xz -dc $O/ll-ngram-s1.test.tsv.xz | cmp - w/seeds/ll-ngram-s1.dtest.lp
	xz -dc $O/kn-all.test.tsv.xz | cmp - w/kn-all.dtest.lp
	# the four intervals
	[ "$(cut -f1,2 $O/diffs.tsv | tr '\t\n' ', ')" = "a,b ll-ngram,kn-all ll-ngram,interp ll-ngram,ll-unigram rnn,kn-all " ]
	grep -q '^| ll-ngram − interp | ' res/lm-adaptation-seeds.md
	grep -q '^interp: lambda for kn-all per seed (tuned on dvalid): seed 1 [0-9.]*; seed 2 [0-9.]*\.$' res/lm-adaptation-seeds.md
	# results-check: 3 n-gram values + 4 rows x (mean, sd)
	printf 'table\tstatus\ttest_columns\tnote\nlm-adaptation-seeds\tchecked\ttest_mean,test_sd\t\n' >res/outputs/TABLES.tsv
	rm res/lm-adaptation.tsv 2>/dev/null || true
	run "$TOP/scripts/results-check" --results res
	assert_success
	assert_line 'results-check: 11 figures checked, 0 tables pending'
	# an altered cell fails, named
	cp res/lm-adaptation-seeds.tsv kept
	awk -F '\t' 'BEGIN { OFS = "\t" } $1 == "interp" { $7 = sprintf("%.4f", $7 + 0.01) } 1' kept >res/lm-adaptation-seeds.tsv
	run "$TOP/scripts/results-check" --results res
	assert_failure
	assert_output --partial "lm-adaptation-seeds.tsv: row 'model=interp', test_mean"
	cp kept res/lm-adaptation-seeds.tsv
	touch -d '-1 minute' res/lm-adaptation-seeds.tsv  # older than the notes, whatever the clock's grain
	# hand-written notes end the .md
	printf '## Notes\n\nby hand\n' >res/lm-adaptation-seeds-notes.md
	run seeds_make SEEDS="1 2" seeds
	assert_success
	[ "$(tail -n 1 res/lm-adaptation-seeds.md)" = 'by hand' ]
	# a seed's output missing: named, nothing written
	rm res/lm-adaptation-seeds.tsv res/lm-adaptation-seeds.md $O/checks.tsv $O/interp-s2.test.tsv.xz
	run_err 1 'lm-seeds: .*interp-s2.test.tsv.xz' "$TOP/scripts/lm-seeds" --name lm-adaptation-seeds --results res \
		--title t --seeds "1 2" --row "rnn=w/seeds/rnn:rnn" --scored 'interp=w/seeds/interp-s{s}.dvalid.lp:interp-s{s}'
	[ ! -e res/lm-adaptation-seeds.tsv ] && [ ! -e res/lm-adaptation-seeds.md ] && [ ! -e $O/checks.tsv ]
}

@test "pipelines/lm-adaptation.mk seeds-resume: continues the runs SEEDS_MAXTIME cut, with the same options" {
	genre_j_archive
	run seeds_make SEEDS=1 SEEDS_MAXTIME=0.001 seeds-models
	assert_success
	for m in rnn ll-unigram ll-ngram; do
		[ "$(tar xOf w/seeds/$m-s1.model meta | sed -n 's/^stopped=//p')" = max-time ]
	done
	run seeds_make SEEDS=1 seeds-resume
	assert_success
	assert_output --partial 'resuming w/seeds/rnn-s1.model'
	assert_output --partial 'resuming w/seeds/ll-ngram-s1.model'
	for m in rnn ll-unigram ll-ngram; do
		[ "$(tar xOf w/seeds/$m-s1.model meta | sed -n 's/^stopped=//p')" = epochs ]
		[ "$(cut -f 1 w/seeds/$m-s1.log.tsv | tr '\n' ' ')" = "epoch 0 1 2 " ]
	done
	[ "$(tar xOf w/seeds/rnn-s1.model meta | sed -n 's/^output=//p')" = classes ]
	run seeds_make SEEDS=1 seeds-resume
	assert_success
	refute_output --partial resuming
}

@test "train: the encoder-decoder refuses an n-gram background, writing nothing" {
	head -n 20 "$D/train.tok" >tgt.tok
	head -n 20 "$D/valid.tok" >src.tok
	featurize --top 20 --background "ngram:$D/lm.arpa" --source src.tok -o ed.fz tgt.tok 2>/dev/null
	run_err 1 'train: an n-gram background .* is for the LSTM language model' train -q --hidden 8 --embed 8 --threads 1 --epochs 1 -o ed.llrnn ed.fz
	[ ! -e ed.llrnn ]
}
