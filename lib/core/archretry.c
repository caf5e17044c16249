/*
 * archretry.c - libarchive's two reading calls with ARCHIVE_RETRY taken
 * care of once for the whole library (lib/text/input.c, the tensor
 * archive reader).  libarchive may answer ARCHIVE_RETRY for ever on a
 * damaged input (a tar member with out-of-order sparse blocks does, found
 * by tests/fuzz/fuzz_input.c): a few tries, then the caller sees
 * ARCHIVE_RETRY, a negative code, and fails as on any error.
 */
#include <archive.h>

#include "internal.h"

enum { TRIES = 8 };

ssize_t llr_archive_data(struct archive *a, void *buf, size_t n)
{
	la_ssize_t r;
	int tries = 0;
	do
		r = archive_read_data(a, buf, n);
	while (r == ARCHIVE_RETRY && ++tries < TRIES);
	return r;
}

int llr_archive_header(struct archive *a, struct archive_entry **ent)
{
	int r, tries = 0;
	do
		r = archive_read_next_header(a, ent);
	while (r == ARCHIVE_RETRY && ++tries < TRIES);
	return r;
}
