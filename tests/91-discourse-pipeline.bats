#!/usr/bin/env bats
# 91-discourse-pipeline.bats - pipelines/discourse.mk end to end on a tiny
# run (the Brown slice of fixtures/ and a .deb-like package of the kernel
# HTML page fixture, tiny encoders, one epoch), and its scripts:
# disc-split (by document), disc-probe, disc-report, disc-plot.  Guards the wiring and
# the outputs, not the figures of the full run.

load test_helper
bats_require_minimum_version 1.5.0

setup() {
	skip_sanitized "$PIPELINE_SANITIZED"
}

MK="$TOP/pipelines/discourse.mk"

tiny_deb() {
	local d="$BATS_TEST_TMPDIR/deb${1:+-$1}"
	mkdir -p "$d/data/usr/share/doc/x" "$d/c"
	cp "$FIXTURES/disc-pairs/${1:-howto}.html" "$d/data/usr/share/doc/x/"
	printf 'Package: x\n' >"$d/c/control"
	echo 2.0 >"$d/debian-binary"
	tar -C "$d/c" -cJf "$d/control.tar.xz" ./control
	tar -C "$d/data" -cJf "$d/data.tar.xz" ./usr
	(cd "$d" && ar rc x.deb debian-binary control.tar.xz data.tar.xz)
	echo "$d/x.deb"
}

@test "discourse.mk: tiny run writes the table, the report and the probe" {
	local deb pydoc
	deb=$(tiny_deb)
	pydoc=$(tiny_deb runs)
	# a manual of DOC_SOURCES, already downloaded to W/NAME.deb
	mkdir -p "$BATS_TEST_TMPDIR/w"
	cp "$(tiny_deb runs)" "$BATS_TEST_TMPDIR/w/pgdoc.deb"
	run make -C "$TOP" -f "$MK" W="$BATS_TEST_TMPDIR/w" RESULTS="$BATS_TEST_TMPDIR/res" BROWN="$BROWN" DEB="$deb" \
		PYDOC="$pydoc" SOURCES="brown kdoc pydoc pgdoc" ENCODERS="cbow bigru" TASKS="order all" EPOCHS=1 HIDDEN=4 EMBED=4 TOP=500 MAX_TIME=30s MAX_TIME_bigru=20s
	assert_success
	local R="$BATS_TEST_TMPDIR/res" W="$BATS_TEST_TMPDIR/w"
	run cat "$R/discourse.tsv"
	assert_line --index 0 "$(printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc')"
	assert_line --index 1 --regexp "$(printf '^cbow\torder\t[0-9.]+\t\t$')"
	assert_line --index 2 --regexp "$(printf '^cbow\tall\t[0-9.]+\t[0-9.]*\t[0-9.]*$')"
	assert_line --index 4 --regexp "$(printf '^bigru\tall\t[0-9.]+\t[0-9.]*\t[0-9.]*$')"
	[ "${#lines[@]}" -eq 5 ]
	# the accuracies are score's on the test part
	acc=$(awk -F'\t' '$1=="ORDER"{n++; c+=($2==$3)} END{printf "%.2f", 100*c/n}' "$W/bigru-all.test")
	assert_line --index 4 --regexp "$(printf '^bigru\tall\t%s\t' "$acc")"
	grep -q '^| bigru | all | ' "$R/discourse.md"
	grep -qx 'Plot: discourse.png (scripts/disc-plot).' "$R/discourse.md"
	# the plot: a PNG (its 8-byte signature), more than an empty frame
	[ "$(head -c 8 "$R/discourse.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	[ "$(wc -c <"$R/discourse.png")" -gt 10000 ]
	[ -z "$(ls "$R" | grep -F discourse.png.)" ]
	grep -q 'kdoc: 1 HTML document' "$R/discourse.md"
	grep -q 'pydoc: 1 HTML document' "$R/discourse.md"
	grep -q "Python's HTML documentation" "$R/discourse.md"
	grep -q 'pgdoc: 1 HTML document' "$R/discourse.md"
	grep -q "+ the HTML documentation of postgresql-doc-15, split by document" "$R/discourse.md"
	grep -q '^Settings: SOURCES=brown kdoc pydoc pgdoc, HTML_UNIT=p, NEXT_STRIDE=none, MAX_TIME=30s a model, bigru 20s, HIDDEN' "$R/discourse.md"
	grep -q 'runs.html' "$W/all.pairs"
	grep -qE '^- split: dropped [0-9]+ valid and [0-9]+ test examples that repeat a training example$' "$R/discourse.md"
	run cat "$R/discourse-probe.tsv"
	assert_line --index 0 "$(printf 'features\taccuracy')"
	assert_line --index 1 --regexp "$(printf '^majority\t[0-9.]+$')"
	assert_line --index 2 --regexp "$(printf '^bigru-all\t[0-9.]+$')"
	assert_line --index 3 --regexp "$(printf '^cbow-all\t[0-9.]+$')"
	assert_line --index 4 --regexp "$(printf '^lm-input-mean\t[0-9.]+$')"
	[ "${#lines[@]}" -eq 5 ]
	# the probe's LL-RNN: the encoders' vocabulary, trained on the probe's
	# training documents only (the Brown sentences of genre.tsv whose
	# document disc-probe puts in its training part)
	cmp <(tar -xOf "$W/vocab.fz" vocab) <(tar -xOf "$W/lm.bin" vocab)
	[ -s "$W/genre-train.tok" ]
	[ "$(wc -l <"$W/genre-train.tok")" -lt "$(wc -l <"$W/genre.tsv")" ]
	[ "$(head -n1 "$W/genre.lm.vec" | awk -F'\t' '{print NF}')" -eq 4 ]
	# the split is by document: no document's examples in two parts
	for p in train valid test; do
		[ -s "$W/$p.pairs" ]
	done
	awk -F'\t' '{print $NF}' "$W/all.pairs" | sed 's/:[0-9]*$//' | sort -u >"$BATS_TEST_TMPDIR/docs"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/docs")" -gt 3 ]
}

@test "discourse.mk: NEXT_STRIDE reaches both disc-pairs runs, and only when set" {
	run make -n -C "$TOP" -f "$MK" W="$BATS_TEST_TMPDIR/w" BROWN=b.tgz DEB=x.deb NEXT_STRIDE=1 \
		"$BATS_TEST_TMPDIR/w/brown.pairs" "$BATS_TEST_TMPDIR/w/kdoc.pairs"
	assert_success
	[ "$(grep -c -- 'disc-pairs .*--next-stride 1 ' <<<"$output")" -eq 2 ]
	assert_output --partial "--exclude '*/translations/*'"
	run make -n -C "$TOP" -f "$MK" W="$BATS_TEST_TMPDIR/w" BROWN=b.tgz DEB=x.deb \
		"$BATS_TEST_TMPDIR/w/brown.pairs" "$BATS_TEST_TMPDIR/w/kdoc.pairs"
	assert_success
	[ "$(grep -c 'disc-pairs ' <<<"$output")" -eq 2 ]
	refute_output --partial "next-stride"
}

@test "discourse.mk: SOURCES picks the archives, HTML_UNIT reaches the HTML ones" {
	run make -n -C "$TOP" -f "$MK" W="$BATS_TEST_TMPDIR/w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb HTML_UNIT=run \
		SOURCES="brown pydoc" "$BATS_TEST_TMPDIR/w/train.pairs"
	assert_success
	assert_output --partial "disc-pairs --include '*.html' --html-unit run --min-par 8  --provenance p.deb"
	refute_output --partial "x.deb"
	assert_output --partial "--format tagged"
	run make -n -C "$TOP" -f "$MK" W="$BATS_TEST_TMPDIR/w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb "$BATS_TEST_TMPDIR/w/train.pairs"
	assert_success
	[ "$(grep -c -- '--html-unit p ' <<<"$output")" -eq 22 ]
	run make -n -C "$TOP" -f "$MK" W="$BATS_TEST_TMPDIR/w" PYDOC="$BATS_TEST_TMPDIR/w/py.deb" "$BATS_TEST_TMPDIR/w/py.deb"
	assert_output --partial "apt-get download python3.11-doc"
}

@test "discourse.mk: the probe's table makes RESULTS if the tables have not" {
	local w="$BATS_TEST_TMPDIR/w" r="$BATS_TEST_TMPDIR/new/res"
	run make -n -C "$TOP" -f "$MK" W="$w" RESULTS="$r" BROWN=b.tgz DEB=x.deb PYDOC=p.deb "$r/discourse-probe.tsv"
	assert_success
	local mk probe
	mk=$(grep -n -m1 -- "mkdir -p $r\$" <<<"$output" | cut -d: -f1)
	probe=$(grep -n -m1 -- "disc-probe $w/genre.tsv" <<<"$output" | cut -d: -f1)
	[ -n "$mk" ] && [ -n "$probe" ] && [ "$mk" -lt "$probe" ]
}

@test "discourse.mk: MAX_TIME_<encoder> caps that encoder's models only" {
	local w="$BATS_TEST_TMPDIR/w"
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb MAX_TIME=3m MAX_TIME_bigru=7m \
		"$w/bigru-next.bin" "$w/gru-next.bin" "$w/cbow-all.bin"
	assert_success
	[ "$(grep -c -- '--encoder bigru' <<<"$output")" -eq 1 ]
	[ "$(grep -c -- '--max-time 7m' <<<"$output")" -eq 1 ]
	[ "$(grep -c -- '--max-time 3m' <<<"$output")" -eq 2 ]
	[[ "$(grep -A3 -- '--encoder bigru' <<<"$output")" == *"--max-time 7m"* ]]
}

@test "discourse.mk: DROPOUT and WORD_DROPOUT reach every encoder's training, none without them" {
	local w="$BATS_TEST_TMPDIR/w"
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb DROPOUT=0.5 WORD_DROPOUT=0.1 \
		"$w/bigru-next.bin" "$w/gru-order.bin" "$w/cbow-all.bin"
	assert_success
	[ "$(grep -c -- '--dropout 0.5 ' <<<"$output")" -eq 3 ]
	[ "$(grep -c -- '--word-dropout 0.1 ' <<<"$output")" -eq 3 ]
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb "$w/bigru-next.bin"
	assert_success
	[[ "$output" == *"--encoder bigru"* && "$output" != *"-dropout"* ]]
}

# The train command of make -n output $output for task $1, encoder $2, its
# continued lines joined.
train_line() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' <<<"$output" | grep -- "--task $1 --encoder $2 "; }

@test "discourse.mk: DROPOUT_<encoder>, WORD_DROPOUT_<encoder> for one encoder; TASK_CAP for the joint models only" {
	local w="$BATS_TEST_TMPDIR/w" line
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb DROPOUT=0.1 DROPOUT_bigru=0.3 WORD_DROPOUT_bigru=0.2 \
		TASK_CAP=40000 TASK_CAP_cbow=9000 "$w/bigru-next.bin" "$w/bigru-all.bin" "$w/cbow-all.bin" "$w/cbow-order.bin"
	assert_success
	line=$(train_line next bigru)
	[[ "$line" == *"--dropout 0.3 "* && "$line" == *"--word-dropout 0.2 "* && "$line" != *"--task-cap"* ]] || { echo "$line"; false; }
	line=$(train_line all bigru)
	[[ "$line" == *"--dropout 0.3 "* && "$line" == *"--word-dropout 0.2 "* && "$line" == *"--task-cap 40000 "* ]] || { echo "$line"; false; }
	line=$(train_line all cbow)
	[[ "$line" == *"--dropout 0.1 "* && "$line" == *"--task-cap 9000 "* && "$line" != *"--word-dropout"* ]] || { echo "$line"; false; }
	line=$(train_line order cbow)
	[[ "$line" == *"--dropout 0.1 "* && "$line" != *"--task-cap"* ]] || { echo "$line"; false; }
}

@test "discourse.mk: NEXT_NEGATIVES reaches the models that train NEXT (batch by default), not the others" {
	local w="$BATS_TEST_TMPDIR/w" line
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb \
		"$w/bigru-next.bin" "$w/gru-all.bin" "$w/cbow-order.bin" "$w/bigru-conj.bin"
	assert_success
	for line in "$(train_line next bigru)" "$(train_line all gru)"; do
		[[ "$line" == *"--next-negatives batch "* ]] || { echo "$line"; false; }
	done
	for line in "$(train_line order cbow)" "$(train_line conj bigru)"; do
		[[ -n "$line" && "$line" != *"--next-negatives"* ]] || { echo "$line"; false; }
	done
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb NEXT_NEGATIVES=own "$w/cbow-next.bin"
	assert_success
	[[ "$(train_line next cbow)" == *"--next-negatives own "* ]]
}

@test "discourse.mk: the Debian manuals of DOC_SOURCES are sources by default, each fetched and read alike" {
	local w="$BATS_TEST_TMPDIR/w"
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb "$w/train.pairs"
	assert_success
	local name pkg
	for name in racket=racket-doc pgdoc=postgresql-doc-15 erlang=erlang-doc qt=qtbase5-doc-html bdb=db5.3-doc \
		django=python-django-doc llvm=llvm-15-doc sqlite=sqlite3-doc exim=exim4-doc-html rust=rust-doc \
		lo=libreoffice-help-en-us octave=octave-doc boost=libboost1.74-doc zsh=zsh-doc nodejs=nodejs-doc \
		cmake=cmake-doc apache=apache2-doc postfix=postfix-doc bind=bind9-doc gimp=gimp-help-en; do
		pkg=${name#*=} name=${name%%=*}
		assert_output --partial "apt-get download $pkg && mv ${pkg}_*_all.deb $name.deb"
		assert_output --partial "--provenance $w/$name.deb > $w/$name.pairs"
	done
	# a manual's DOCOPTS take the place of the default --include '*.html'
	assert_output --partial "disc-pairs --include '*.html' --exclude '*/AMDGPU/*' --html-unit p"
	assert_output --partial "disc-pairs --include '*/manual/en/*.html' --html-unit p --min-par 8  --provenance $w/apache.deb"
	assert_output --partial "--include '*/html/nomicon/*.html' --include '*/html/rust-by-example/*.html'"
	assert_output --partial "--exclude '*/print.html' --html-unit p --min-par 8  --provenance $w/rust.deb"
	assert_output --partial "disc-pairs --include '*.html' --html-unit p --min-par 8  --provenance $w/sqlite.deb"
	assert_output --partial "disc-pairs --include '*.html' --exclude '*/api/all.html' --html-unit p --min-par 8  --provenance $w/nodejs.deb"
	[ "$(grep -c 'disc-pairs ' <<<"$output")" -eq 23 ]
	# a name with no package is refused before anything runs
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz SOURCES="brown nosuch" "$w/train.pairs"
	assert_failure
	assert_output --partial "nosuch: not a source of this pipeline (no DOC_nosuch)"
}

@test "disc-probe --train-sentences: the sentences of the training documents, as the probe splits them" {
	cd "$BATS_TEST_TMPDIR"
	for d in ca01 ca02 cb07 cn01 cn02 cp11 cr03 cr09; do printf 'g\t%s\ts of %s\n' $d $d; done >g.tsv
	run "$TOP/scripts/disc-probe" --train-sentences g.tsv
	assert_success
	local want
	want=$(/usr/bin/python3 -c 'import sys, zlib; [print("s of " + d) for d in sys.argv[1:] if zlib.crc32(d.encode()) % 10 < 8]' ca01 ca02 cb07 cn01 cn02 cp11 cr03 cr09)
	assert_output "$want"
	[ "${#lines[@]}" -ge 1 ] && [ "${#lines[@]}" -lt 8 ]
}

@test "disc-html-census: the words of a page by what keeps or drops them; a missing file" {
	cd "$BATS_TEST_TMPDIR"
	run "$TOP/scripts/disc-html-census" "$FIXTURES/disc-pairs/runs.html"
	assert_success
	assert_output "$(printf '%s\n' 'keep:p	54	73.0' 'keep:li>p	12	16.2' 'keep:section	4	5.4' 'drop:h	3	4.1' \
		'drop:.highlight	1	1.4' 'total	74	100.0')"
	# names on stdin, NUL-separated: the same
	printf '%s\0' "$FIXTURES/disc-pairs/runs.html" | "$TOP/scripts/disc-html-census" >stdin.out
	[ "$(cat stdin.out)" = "$output" ]
	run --separate-stderr "$TOP/scripts/disc-html-census" nope.html
	assert_failure
	assert_output ""
	[[ "$stderr" == "disc-html-census: nope.html: No such file or directory" ]] || { echo "$stderr"; false; }
}

@test "disc-split: every document goes whole to one part, the provenance column dropped" {
	cd "$BATS_TEST_TMPDIR"
	disc-pairs --format tagged --provenance "$BROWN" >p.tsv 2>/dev/null
	run --separate-stderr "$TOP/scripts/disc-split" p.tsv tr va te
	assert_success
	local dropped
	dropped=$(sed -n 's/^disc-split: dropped \([0-9]*\) valid and \([0-9]*\) test examples that repeat a training example$/\1 + \2/p' <<<"$stderr")
	[ -n "$dropped" ] || { echo "$stderr"; false; }
	[ "$(cat tr va te | wc -l)" -eq "$(($(wc -l <p.tsv) - dropped))" ]
	[ -s tr ] && [ -s va ] && [ -s te ]
	# rebuild each part's documents from p.tsv by its lines: no overlap
	for f in tr va te; do
		awk -F'\t' 'NR == FNR { want[$0]; next } { line = $1; for (i = 2; i < NF; i++) line = line "\t" $i; if (line in want) { d = $NF; sub(/:[0-9]+$/, "", d); print d } }' $f p.tsv | sort -u >$f.docs
	done
	[ -z "$(comm -12 tr.docs va.docs)" ] && [ -z "$(comm -12 tr.docs te.docs)" ] && [ -z "$(comm -12 va.docs te.docs)" ]
	# the lines keep their columns but the provenance
	[ "$(awk -F'\t' '$1=="ORDER"{print NF}' tr | sort -u)" = 4 ]
	run "$TOP/scripts/disc-split" p.tsv tr va
	assert_failure 2
}

@test "disc-split: valid and test keep no example that repeats a training one, whatever its label or order" {
	cd "$BATS_TEST_TMPDIR"
	# 40 documents, each with the same ORDER pair (shown either way), the
	# same CONJ pair (with another label in half of them) and a pair of its own
	for d in $(seq 1 40); do
		if [ $((d % 2)) -eq 0 ]; then
			printf 'ORDER\t0\tFirst one .\tSecond one .\tx.deb:doc%d.html:1\n' "$d"
			printf 'CONJ\tcontrast\tIt rains .\tit is warm .\tx.deb:doc%d.html:2\n' "$d"
		else
			printf 'ORDER\t1\tSecond one .\tFirst one .\tx.deb:doc%d.html:1\n' "$d"
			printf 'CONJ\taddition\tIt rains .\tit is warm .\tx.deb:doc%d.html:2\n' "$d"
		fi
		printf 'ORDER\t0\tOwn %d .\tOwn %d again .\tx.deb:doc%d.html:3\n' "$d" "$d" "$d"
	done >p.tsv
	run --separate-stderr "$TOP/scripts/disc-split" p.tsv tr va te
	assert_success
	local nva nte
	nva=$(grep -c '^ORDER.*Own' va) nte=$(grep -c '^ORDER.*Own' te)
	[ "$nva" -gt 0 ] && [ "$nte" -gt 0 ]
	[[ "$stderr" == "disc-split: dropped $((2 * nva)) valid and $((2 * nte)) test examples that repeat a training example" ]] || { echo "$stderr"; false; }
	# the repeated pairs stay in train only, every document's own pair stays
	grep -q 'First one' tr && grep -q 'It rains' tr
	! grep -q 'First one\|It rains' va te || false
	[ "$(cat va te | wc -l)" -eq $((nva + nte)) ]
	[ "$(cat tr va te | grep -c Own)" -eq 40 ]
}

@test "disc-split: the split depends on the archive's name, not on the folder it lies in" {
	cd "$BATS_TEST_TMPDIR"
	mkdir -p a/deep/er b
	cp "$BROWN" a/deep/er/brown-slice.tgz
	cp "$BROWN" b/brown-slice.tgz
	disc-pairs --format tagged --provenance a/deep/er/brown-slice.tgz >a.tsv 2>/dev/null
	(cd b && disc-pairs --format tagged --provenance brown-slice.tgz) >b.tsv 2>/dev/null
	! cmp -s a.tsv b.tsv
	"$TOP/scripts/disc-split" a.tsv tr1 va1 te1
	"$TOP/scripts/disc-split" b.tsv tr2 va2 te2
	cmp tr1 tr2
	cmp va1 va2
	cmp te1 te2
	[ -s va1 ]
	[ -s te1 ]
}

@test "disc-probe: usage and a vector file of the wrong length" {
	cd "$BATS_TEST_TMPDIR"
	run "$TOP/scripts/disc-probe"
	assert_failure
	assert_output --partial "usage: disc-probe"
	printf 'news\tca01\ta b\nnews\tca01\tc d\nfiction\tcn01\te f\n' >g.tsv
	printf '1\t2\n3\t4\n' >v.tsv
	run "$TOP/scripts/disc-probe" g.tsv x=v.tsv
	assert_failure
	assert_output --partial "v.tsv: 2 vectors for 3 sentences"
}

@test "disc-plot: a PNG of any subset of the table, empty cells; a missing or malformed table writes nothing" {
	cd "$BATS_TEST_TMPDIR"
	printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc\ncbow\torder\t51.20\t\t\nbigru\tall\t53.30\t20.10\t\n' >t.tsv
	run --separate-stderr "$TOP/scripts/disc-plot" t.tsv t.png "Brown"
	assert_success
	assert_output ""
	[ "$(head -c 8 t.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	[ "$(ls | grep -c -F t.png)" -eq 1 ]
	[ "$(wc -c <t.png)" -gt 10000 ]
	# a row without accuracies between two others: left out, the others
	# drawn (gnuplot warns of a clause with no points)
	printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc\ncbow\torder\t51.2\t\t\ngru\tnext\t\t\t\nbigru\torder\t40\t\t\n' >g.tsv
	run --separate-stderr "$TOP/scripts/disc-plot" g.tsv g.png
	assert_success
	[ -z "$stderr" ] || { echo "$stderr"; false; }
	[ "$(wc -c <g.png)" -gt 10000 ]
	# the committed table draws too
	"$TOP/scripts/disc-plot" "$TOP/results/discourse.tsv" full.png
	[ "$(wc -c <full.png)" -gt "$(wc -c <t.png)" ]
	run --separate-stderr "$TOP/scripts/disc-plot" nope.tsv out.png
	assert_failure 1
	assert_output ""
	[[ "$stderr" == "disc-plot: nope.tsv: cannot read" ]] || { echo "$stderr"; false; }
	[ ! -e out.png ]
	printf 'encoder\ttasks\n' >h.tsv
	run --separate-stderr "$TOP/scripts/disc-plot" h.tsv out.png
	assert_failure 1
	assert_output ""
	[[ "$stderr" == "disc-plot: h.tsv: line 1: header is not "* ]] || { echo "$stderr"; false; }
	printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc\ncbow\torder\tx\t\t\n' >v.tsv
	run --separate-stderr "$TOP/scripts/disc-plot" v.tsv out.png
	assert_failure 1
	[[ "$stderr" == 'disc-plot: v.tsv: line 2: accuracy "x" not a percentage' ]] || { echo "$stderr"; false; }
	printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc\ncbow\torder\t50\n' >c.tsv
	run --separate-stderr "$TOP/scripts/disc-plot" c.tsv out.png
	assert_failure 1
	[[ "$stderr" == "disc-plot: c.tsv: line 2: 3 columns, not 5" ]] || { echo "$stderr"; false; }
	printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc\n' >e.tsv
	run --separate-stderr "$TOP/scripts/disc-plot" e.tsv out.png
	assert_failure 1
	[[ "$stderr" == "disc-plot: e.tsv: no accuracies to plot" ]] || { echo "$stderr"; false; }
	[ ! -e out.png ]
	[ -z "$(ls | grep -F out.png)" ]
	run --separate-stderr "$TOP/scripts/disc-plot" t.tsv
	assert_failure 2
	[[ "$stderr" == *"usage: disc-plot TSV OUT.png [DATA]"* ]] || { echo "$stderr"; false; }
}

# The Brown slice's pairs (a NEXT window at every sentence) as W/brown.pairs,
# split by example, every fifth to test and the next to valid: split by
# document (disc-split), the slice's test part has ORDER examples only.
# make takes the split as made (train.pairs newer than brown.pairs).
split_pairs() {
	local w=$1
	mkdir -p "$w"
	disc-pairs --format tagged --next-stride 1 --provenance "$BROWN" >"$w/brown.pairs" 2>/dev/null
	touch -d '-1 minute' "$w/brown.pairs"
	awk -v w="$w" '{ print >(w "/" (NR % 5 == 0 ? "test" : NR % 5 == 1 ? "valid" : "train") ".pairs") }' "$w/brown.pairs"
	cat "$w/brown.pairs" >"$w/all.pairs"
}

@test "discourse.mk seeds: every model over seeds to one rule, outputs kept by task, the table checked" {
	local w="$BATS_TEST_TMPDIR/w" R="$BATS_TEST_TMPDIR/res"
	cd "$BATS_TEST_TMPDIR"
	split_pairs "$w"
	run make -C "$TOP" -f "$MK" W="$w" RESULTS="$R" BROWN="$BROWN" SOURCES=brown \
		ENCODERS="cbow gru" SEEDS="1 2" SEEDS_TASKS="order conj all" SEEDS_EPOCHS=2 PATIENCE=1 HIDDEN=4 EMBED=4 TOP=500 seeds -j2
	assert_success
	local D="$w/seeds" O="$R/outputs/discourse-seeds"
	# one rule: patience or the epoch cap, never max-time (none given)
	for m in "$D"/*-s[12].bin; do
		tar -xOf "$m" meta | grep -Eqx 'stopped=(patience|epochs)'
	done
	[ "$(ls "$D"/*-s[12].bin | wc -l)" -eq 12 ]
	run sh -c "tar -xOf '$D/gru-conj-s2.bin' meta | grep -E '^seed=' "
	assert_output 'seed=2'
	run cmp -s "$D/gru-conj-s1.bin" "$D/gru-conj-s2.bin"
	assert_failure
	# a single-task model's output is its task's lines of score --task all;
	# a joint model's, split by task
	score --task all --threads 1 -m "$D/gru-all-s2.bin" "$w/test.pairs" >all.pred 2>/dev/null
	for t in ORDER CONJ NEXT; do
		k=$(echo $t | tr A-Z a-z)
		cmp <(grep "^$t	" all.pred) <(xz -dc "$O/gru-all-s2.$k.test.tsv.xz")
	done
	[ "$(ls "$O" | grep -c '^gru-order-s[12]\.order\.test\.tsv\.xz$')" -eq 2 ]
	[ -z "$(ls "$O" | grep '^gru-order-s.\.\(conj\|next\)')" ]
	# the table: a line per encoder, task set and task; accuracies from the outputs
	run cut -f1-4 "$R/discourse-seeds.tsv"
	assert_output "$(printf 'encoder\ttasks\ttask\tseeds
cbow\torder\torder\t1,2\ncbow\tconj\tconj\t1,2\ncbow\tall\torder\t1,2\ncbow\tall\tnext\t1,2\ncbow\tall\tconj\t1,2
gru\torder\torder\t1,2\ngru\tconj\tconj\t1,2\ngru\tall\torder\t1,2\ngru\tall\tnext\t1,2\ngru\tall\tconj\t1,2')"
	acc=$(for s in 1 2; do xz -dc "$O/cbow-order-s$s.order.test.tsv.xz" | awk -F '\t' '{ n++; c += ($2 == $3) } END { printf "%.10f\n", 100 * c / n }'; done |
		awk '{ s += $1 } END { printf "%.2f", s / NR }')
	[ "$(awk -F '\t' '$1 == "cbow" && $2 == "order" { print $9 }' "$R/discourse-seeds.tsv")" = "$acc" ]
	# the intervals: gru against cbow on each task trained alone
	run cut -f1-3 "$O/diffs.tsv"
	assert_output "$(printf 'task\ta\tb\norder\tgru\tcbow\nconj\tgru\tcbow')"
	grep -q '^| ORDER | gru − cbow | ' "$R/discourse-seeds.md"
	grep -q '^Training: SOURCES=brown, .*early stopping on valid with patience 1, at most 2 epochs, 1 thread(s) a model\.$' "$R/discourse-seeds.md"
	# results-check recomputes all 20 figures, and catches a changed one
	printf 'table\tstatus\ttest_columns\tnote\ndiscourse-seeds\tchecked\ttest_mean,test_sd\t\n' >"$R/outputs/TABLES.tsv"
	run "$TOP/scripts/results-check" --results "$R"
	assert_success
	assert_line 'results-check: 20 figures checked, 0 tables pending'
	# each run's meta member and curve are kept: with the models gone the
	# table is the same, and nothing is trained or scored again
	cmp <(tar -xOf "$D/gru-all-s1.bin" meta) "$R/discourse-seeds-logs/gru-all-s1.meta"
	cmp "$D/cbow-order-s2.log.tsv" "$R/discourse-seeds-logs/cbow-order-s2.log.tsv"
	cp "$R/discourse-seeds.tsv" kept.tsv
	mkdir gone && mv "$D"/*.bin gone/ && rm "$R/discourse-seeds.tsv"
	run make -C "$TOP" -f "$MK" W="$w" RESULTS="$R" BROWN="$BROWN" SOURCES=brown \
		ENCODERS="cbow gru" SEEDS="1 2" SEEDS_TASKS="order conj all" SEEDS_EPOCHS=2 PATIENCE=1 HIDDEN=4 EMBED=4 TOP=500 seeds
	assert_success
	cmp kept.tsv "$R/discourse-seeds.tsv"
	[ -z "$(ls "$D"/*.bin 2>/dev/null)" ]
	mv gone/*.bin "$D"/
	awk -F '\t' -v OFS='\t' '$1 == "gru" && $3 == "next" { $9 = sprintf("%.2f", $9 + 0.5) } { print }' "$R/discourse-seeds.tsv" >t
	mv t "$R/discourse-seeds.tsv"
	run "$TOP/scripts/results-check" --results "$R"
	assert_failure 1
	assert_output --partial "row 'encoder=gru,tasks=all,task=next', test_mean: the table says"
	# a seed's output missing: named, nothing written
	rm "$R/discourse-seeds.tsv" "$O/cbow-conj-s2.conj.test.tsv.xz"
	run_err 1 '^disc-seeds: .*cbow-conj-s2.conj.test.tsv.xz' "$TOP/scripts/disc-seeds" --name discourse-seeds \
		--results "$R" --work "$D" --seeds "1 2" --encoders "cbow gru" --tasks "order conj all"
	[ ! -e "$R/discourse-seeds.tsv" ]
}

@test "discourse.mk seeds-resume: continues the models SEEDS_MAX_TIME cut, until none is left" {
	local w="$BATS_TEST_TMPDIR/w"
	split_pairs "$w"
	local k=(-C "$TOP" -f "$MK" W="$w" RESULTS="$BATS_TEST_TMPDIR/res" BROWN="$BROWN" SOURCES=brown
		ENCODERS=gru SEEDS=1 SEEDS_TASKS="order next" SEEDS_EPOCHS=2 PATIENCE=1 HIDDEN=4 EMBED=4 TOP=500)
	run make "${k[@]}" SEEDS_MAX_TIME=0.001 seeds-models
	assert_success
	run tar -xOf "$w/seeds/gru-order-s1.bin" meta
	assert_line 'stopped=max-time'
	# a cut run is neither kept nor scored
	run make "${k[@]}" seeds
	assert_failure
	assert_output --regexp "discourse.mk: $w/seeds/gru-(order|next)-s1.bin: stopped=max-time; resume it first"
	[ -z "$(find "$BATS_TEST_TMPDIR/res" -type f 2>/dev/null)" ]
	run make "${k[@]}" seeds-resume
	assert_success
	assert_line "resuming $w/seeds/gru-order-s1.bin"
	assert_line "resuming $w/seeds/gru-next-s1.bin"
	for t in order next; do
		tar -xOf "$w/seeds/gru-$t-s1.bin" meta | grep -Eqx 'stopped=(patience|epochs)'
	done
	run make "${k[@]}" seeds-resume
	assert_success
	refute_output --partial resuming
}

@test "discourse.mk seeds: the full table's models by a dry run, one rule for every encoder" {
	local w="$BATS_TEST_TMPDIR/w"
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb MAX_TIME=12m MAX_TIME_bigru=30m \
		SEEDS_MAX_TIME=4h seeds-models
	assert_success
	# 3 encoders x 4 task sets x 3 seeds, each to patience 2 within 30 epochs, one max-time for all
	[ "$(grep -c -- '--epochs 30 --patience 2 --max-time 4h --threads 1 --valid '"$w"'/valid.pairs -s [123] --log '"$w"'/seeds/' <<<"$output")" -eq 36 ]
	refute_output --partial -- '--max-time 12m'
	refute_output --partial -- '--max-time 30m'
	[[ "$(train_line all bigru)" == *"-s 3 --log $w/seeds/bigru-all-s3.log.tsv -o $w/seeds/bigru-all-s3.bin"* ]]
	run make -n -C "$TOP" -f "$MK" W="$w" BROWN=b.tgz DEB=x.deb PYDOC=p.deb seeds-models
	refute_output --partial -- '--max-time'
}
