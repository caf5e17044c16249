/*
 * lexicon_fixture.h - the unit tests' lexicon round trip: write a lexicon
 * to a features archive under the test's scratch folder (one meta key
 * tampered with when key is given) and read it back.  NULL, with the
 * reader's reason in e, when the archive is refused.
 */
#ifndef LLR_LEXICON_FIXTURE_H
#define LLR_LEXICON_FIXTURE_H

#include <stdio.h>
#include <unistd.h>

#include "llrnn.h"
#include "test.h"

static inline llr_lexicon *lexicon_round_trip(const llr_lexicon *x, const char *key, const char *val, llr_err *e)
{
	char path[512];
	snprintf(path, sizeof path, "%s/lexicon-round-trip.llrnn", test_tmpdir());
	llr_meta *m = llr_meta_new();
	CHECK_OK(llr_lexicon_to_meta(x, m));
	if (key)
		llr_meta_set(m, key, val);
	llr_tensor_writer *w = llr_tw_open(path, "features", m, e);
	llr_meta_free(m);
	CHECK(w && llr_lexicon_write(w, x, e) == LLR_OK && llr_tw_close(w, e) == LLR_OK);
	llr_tensor_reader *r = llr_tr_open(path, "features", e);
	llr_lexicon *y = NULL;
	if (r && llr_lexicon_read(r, &y, e) < 0)
		y = NULL;
	llr_tr_close(r);
	unlink(path);
	return y;
}

#endif
