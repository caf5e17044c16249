/*
 * fuzz_input.c - the line and archive input layer (lib/text/input.c,
 * lib/text/lines.c): the input as a (possibly compressed) text read line
 * by line, UTF-8 checked, then as an archive of documents, member by
 * member, each through the line reader again.
 */
#include "fuzz.h"

static ssize_t arch_read(void *src, void *buf, size_t n, llr_err *err)
{
	return llr_archive_read(src, buf, n, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	llr_err e = {0};
	const char *line;
	size_t len;
	llr_lines *l = llr_lines_open(path, 0, &e);
	if (l) {
		while (llr_lines_next(l, &line, &len, &e) > 0)
			;
		llr_lines_close(l);
	}
	llr_archive *a = llr_archive_open(path, &e);
	if (!a)
		return 0;
	const char *name;
	int64_t msize;
	for (int k = 0; k < 64 && llr_archive_next(a, &name, &msize, &e) > 0; k++) {
		llr_lines *m = llr_lines_from(arch_read, a, name, LLR_LINES_REPLACE_INVALID);
		if (!m)
			break;
		while (llr_lines_next(m, &line, &len, &e) > 0)
			;
		llr_lines_close(m);
	}
	llr_archive_close(a);
	return 0;
}
