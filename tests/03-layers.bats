#!/usr/bin/env bats
# 03-layers.bats - scripts/layers (issue 45): the folders of lib/ form a
# DAG in the layer order the script holds, read from the objects'
# symbols and from the #include lines.  It holds on the tree; on a copy
# of lib/ and build/lib with one upward call (a new object), one upward
# or sideways include, a folder outside the layers or a Makefile whose
# LIB_LAYERS differs, it fails and names the edge, the file and the
# symbol or header.

load test_helper

# A copy of the sources and objects to break: lib/ and build/lib under
# $BATS_TEST_TMPDIR/tree (objects in tree/obj).
copy_tree() {
	mkdir -p "$BATS_TEST_TMPDIR/tree"
	cp -R "$TOP/lib" "$BATS_TEST_TMPDIR/tree/lib"
	cp -R "$TOP/build/lib" "$BATS_TEST_TMPDIR/tree/obj"
}

layers_copy() {
	run "$TOP/scripts/layers" --lib "$BATS_TEST_TMPDIR/tree/lib" --objects "$BATS_TEST_TMPDIR/tree/obj"
}

@test "layers: the tree's folders form a DAG, edges from symbols and includes, printed with counts and an example" {
	run "$TOP/scripts/layers"
	assert_success
	assert_line --index 0 'layers: core < text, tensor < features, ngram, discourse, fsa < nn < lexicon < lm, featurize < family < train'
	assert_line --regexp '^nn +-> ngram +[0-9]+ symbols +0 includes  e\.g\. lib/nn/[a-z]+\.c: llr_ngram_[a-z0-9_]+ \(lib/ngram/[a-z]+\.c\)$'
	assert_line --regexp '^lm +-> nn +[0-9]+ symbols +[1-9][0-9]* includes  e\.g\. '
	refute_output --partial 'upward'
	refute_output --partial 'cycle'
}

@test "layers: a call from ngram up into lexicon fails, naming the edge, the file, the symbol and the cycle" {
	copy_tree
	printf 'void llr_lexicon_free(void *x);\nvoid llr_upcall(void)\n{\n\tllr_lexicon_free(0);\n}\n' >"$BATS_TEST_TMPDIR/tree/lib/ngram/upcall.c"
	cc -c -o "$BATS_TEST_TMPDIR/tree/obj/ngram/upcall.o" "$BATS_TEST_TMPDIR/tree/lib/ngram/upcall.c"
	layers_copy
	assert_failure 1
	assert_line --regexp '^ngram +-> lexicon +1 symbols +0 includes  e\.g\. lib/ngram/upcall\.c: llr_lexicon_free \(lib/lexicon/lexicon\.c\)  \[upward\]$'
	assert_line 'layers: upward edge ngram -> lexicon: lib/ngram/upcall.c calls llr_lexicon_free (lib/lexicon/lexicon.c)'
	assert_line --regexp '^layers: cycle ngram -> lexicon -> ngram: ngram -> lexicon \(lib/ngram/upcall\.c: llr_lexicon_free \(lib/lexicon/lexicon\.c\)\); lexicon -> ngram \(lib/lexicon/'
	# without its object the new file is not checked: the script says so
	rm "$BATS_TEST_TMPDIR/tree/obj/ngram/upcall.o"
	layers_copy
	assert_failure 2
	assert_output --partial 'upcall.o: missing or older than its source; build first'
}

@test "layers: includes count too: an upward one (text -> nn) and a sideways one between peers (features -> ngram, relative path)" {
	copy_tree
	printf '#include "nn/nn.h"\n' >"$BATS_TEST_TMPDIR/tree/lib/text/peek.h"
	printf '#include "../ngram/ngram.h"\n' >"$BATS_TEST_TMPDIR/tree/lib/features/side.h"
	layers_copy
	assert_failure 1
	assert_line 'layers: upward edge text -> nn: lib/text/peek.h: #include "nn/nn.h"'
	assert_line 'layers: sideways (peers) edge features -> ngram: lib/features/side.h: #include "../ngram/ngram.h"'
	# nn calls text (llr_utf8_decode), so the include closes a circle
	assert_line --regexp '^layers: cycle text -> nn -> text: text -> nn \(lib/text/peek\.h: #include "nn/nn\.h"\); nn -> text \(lib/nn/'
}

@test "layers: a folder outside the layers and a Makefile whose LIB_LAYERS differs fail" {
	copy_tree
	mkdir "$BATS_TEST_TMPDIR/tree/lib/extra"
	printf '/* nothing */\n' >"$BATS_TEST_TMPDIR/tree/lib/extra/x.h"
	printf 'LIB_LAYERS := core text tensor features nn lexicon lm ngram\n' >"$BATS_TEST_TMPDIR/tree/Makefile"
	layers_copy
	assert_failure 1
	assert_line 'layers: lib/extra: a folder outside the layers (core text tensor features ngram discourse fsa nn lexicon lm featurize family train)'
	assert_line "layers: Makefile: LIB_LAYERS is 'core text tensor features nn lexicon lm ngram', the layers are 'core text tensor features ngram discourse fsa nn lexicon lm featurize family train'"
}
