/*
 * fuzz_tensor.c - the tensor stream reader (lib/tensor/tensorio.c): open
 * any archive, then read every member as a tensor, as text, or as the
 * sparse matrix it starts, as the tools would.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(fuzz_file(data, size), NULL, &e);
	if (!r)
		return 0;
	const char *name;
	int k = 0;
	while (llr_tr_next(r, &name, &e) > 0) {
		size_t n = strlen(name);
		if (n > 7 && !strcmp(name + n - 7, "/indptr")) {
			char base[256];
			snprintf(base, sizeof base, "%.*s", (int)(n - 7), name);
			llr_csr *c = NULL;
			if (llr_tr_csr(r, base, 1 << 20, &c, &e) == LLR_OK)
				llr_csr_free(c);
		} else if (k++ % 2) {
			char *t = NULL;
			if (llr_tr_text(r, &t, NULL, &e) == LLR_OK)
				free(t);
		} else {
			llr_tensor *t = NULL;
			if (llr_tr_tensor(r, &t, &e) == LLR_OK)
				llr_tensor_free(t);
		}
	}
	llr_tr_close(r);
	return 0;
}
