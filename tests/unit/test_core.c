/*
 * test_core.c - unit tests for errors, allocation, the RNG, tensors, CSR
 * matrices, string interning, CRC-32C and numbers as text.
 */
#include <stdint.h>

#include "internal.h"
#include "test.h"

static void test_err(void)
{
	llr_err e = {0};
	CHECK(llr_err_set(&e, LLR_EFORMAT, "%s:%d: bad", "f", 3) == LLR_EFORMAT);
	CHECK(!strcmp(e.msg, "f:3: bad"));
	llr_err_prefix(&e, "tool");
	CHECK(!strcmp(e.msg, "tool: f:3: bad"));
	CHECK(!strcmp(llr_strerror(LLR_EUTF8), "invalid UTF-8"));
	CHECK(llr_err_set(NULL, LLR_EIO, "x") == LLR_EIO);
}

static void test_buf(void)
{
	llr_buf b = {0};
	for (int i = 0; i < 1000; i++)
		CHECK(llr_buf_printf(&b, "%d,", i) == LLR_OK);
	CHECK(b.len == strlen(b.data));
	CHECK(!strncmp(b.data, "0,1,2,", 6));
	llr_buf_clear(&b);
	CHECK(b.len == 0 && b.data[0] == 0);
	llr_buf_free(&b);
	CHECK(llr_reallocarray(NULL, SIZE_MAX / 2, 4) == NULL);
}

/* Whether llr_buf_fixed(v, d) writes what snprintf's %.*f does (a
 * mismatch printed). */
static int fixed_as_printf(double v, int d)
{
	char want[400];
	snprintf(want, sizeof want, "%.*f", d, v);
	llr_buf b = {0};
	int ok = llr_buf_fixed(&b, v, d) == LLR_OK && b.len == strlen(want) && !memcmp(b.data, want, b.len);
	if (!ok)
		printf("#   %%.%df of %.17g: printf %s, llr_buf_fixed %s\n", d, v, want, b.len ? b.data : "");
	llr_buf_free(&b);
	return ok;
}

/* llr_buf_fixed and llr_buf_uint against printf: log-probabilities of
 * every size, exact halves of the last digit (binary fractions), values
 * just either side of a half, signed zeros, non-finite values and the
 * numbers too large for the fast path. */
static void test_numfmt(void)
{
	static const double edge[] = {0.0, -0.0, 0.03125, -0.03125, 2.5e-5, -2.5e-5, 0.00005, 1.00005, 123.45675, -0.00004999,
	                              1e-12, -1e-12, 999999999.99995, 1e9, -1e9, 1.7976931348623157e308, 5e-324, INFINITY,
	                              -INFINITY, NAN, 0.5, 1.5, 2.5, -0.5};
	int bad = 0;
	for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
		for (int d = 0; d <= 9; d++)
			bad += !fixed_as_printf(edge[i], d);
	llr_rng r;
	llr_rng_seed(&r, 7);
	for (int i = 0; i < 300000 && bad < 10; i++) {
		double mag = pow(10, 8 * llr_rng_uniform(&r) - 3), v = (llr_rng_uniform(&r) < 0.7 ? -mag : mag);
		int d = (int)(llr_rng_u64(&r) % 10);
		bad += !fixed_as_printf(v, d);
		/* k + 1/2 units of the last digit, and its neighbours */
		double h = (floor(v * 1e4) + 0.5) / 1e4;
		bad += !fixed_as_printf(h, 4) + !fixed_as_printf(nextafter(h, 0), 4) + !fixed_as_printf(nextafter(h, 1e300), 4);
		/* exact binary halves: m / 2^k */
		double x = ldexp((double)(int64_t)(llr_rng_u64(&r) % 2000001) - 1000000, -(int)(llr_rng_u64(&r) % 30));
		bad += !fixed_as_printf(x, (int)(llr_rng_u64(&r) % 10));
	}
	CHECK(bad == 0);
	static const uint64_t us[] = {0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, UINT64_MAX};
	for (size_t i = 0; i < sizeof us / sizeof *us; i++) {
		char want[32];
		snprintf(want, sizeof want, "%llu", (unsigned long long)us[i]);
		llr_buf b = {0};
		CHECK(llr_buf_uint(&b, us[i]) == LLR_OK && !strcmp(b.data, want));
		llr_buf_free(&b);
	}
}

static void test_rng(void)
{
	llr_rng a, b;
	llr_rng_seed(&a, 42);
	llr_rng_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		CHECK(llr_rng_u64(&a) == llr_rng_u64(&b));
	llr_rng_seed(&b, 43);
	CHECK(llr_rng_u64(&a) != llr_rng_u64(&b));
	double sum = 0, sq = 0;
	int n = 100000, hist[10] = {0};
	for (int i = 0; i < n; i++) {
		double u = llr_rng_uniform(&a);
		CHECK(u >= 0 && u < 1);
		hist[llr_rng_below(&a, 10)]++;
		double z = llr_rng_normal(&a);
		sum += z;
		sq += z * z;
	}
	CHECK_NEAR(sum / n, 0.0, 0.02);
	CHECK_NEAR(sq / n, 1.0, 0.03);
	for (int i = 0; i < 10; i++)
		CHECK_NEAR(hist[i] / (double)n, 0.1, 0.01);
	int32_t p[50];
	for (int i = 0; i < 50; i++)
		p[i] = i;
	llr_rng_shuffle_i32(&a, p, 50);
	int seen[50] = {0}, moved = 0;
	for (int i = 0; i < 50; i++) {
		seen[p[i]]++;
		moved += p[i] != i;
	}
	for (int i = 0; i < 50; i++)
		CHECK(seen[i] == 1);
	CHECK(moved > 30);
}

static void test_tensor(void)
{
	llr_err e = {0};
	int64_t shape[2] = {3, 4};
	llr_tensor *t = llr_tensor_new(LLR_F32, 2, shape, &e);
	CHECK(t && llr_tensor_numel(t) == 12 && llr_tensor_nbytes(t) == 48);
	CHECK(((float *)t->data)[11] == 0.0f);
	char buf[32];
	CHECK(!strcmp(llr_shape_str(2, shape, buf, sizeof buf), "3x4"));
	llr_tensor_free(t);
	int64_t bad[1] = {-1};
	CHECK(llr_tensor_new(LLR_I32, 1, bad, &e) == NULL && e.code == LLR_ERANGE);
	llr_tensor_free(NULL);
}

static void test_csr(void)
{
	llr_err e = {0};
	llr_csr_builder *b = llr_csr_builder_new(5);
	int32_t c0[] = {3, 1, 3};
	float v0[] = {1, 2, 0.5f};
	CHECK(llr_csr_builder_row(b, c0, v0, 3, &e) == LLR_OK);
	CHECK(llr_csr_builder_row(b, NULL, NULL, 0, &e) == LLR_OK);
	int32_t c2[] = {4};
	CHECK(llr_csr_builder_row(b, c2, NULL, 1, &e) == LLR_OK);
	int32_t bad[] = {5};
	CHECK(llr_csr_builder_row(b, bad, NULL, 1, &e) == LLR_EINVAL);
	llr_csr *m = llr_csr_builder_finish(b, &e);
	CHECK(m && m->rows == 3 && m->cols == 5 && m->nnz == 3);
	CHECK(m->indices[0] == 1 && m->data[0] == 2 && m->indices[1] == 3 && m->data[1] == 1.5f);
	CHECK(m->indptr[1] == 2 && m->indptr[2] == 2 && m->indptr[3] == 3);
	CHECK(llr_csr_check(m, &e) == LLR_OK);
	m->indices[1] = 1;
	CHECK(llr_csr_check(m, &e) == LLR_EFORMAT);
	llr_csr_free(m);
	llr_csr *id = llr_csr_identity(4, &e);
	CHECK(id && llr_csr_check(id, &e) == LLR_OK && id->nnz == 4);
	llr_csr *cp = llr_csr_copy(id, &e);
	CHECK(cp && cp->indices[3] == 3);
	llr_csr_free(id);
	llr_csr_free(cp);
}

static void test_strmap(void)
{
	llr_strmap *m = llr_strmap_new();
	char s[32];
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(s, sizeof s, "w%d", i);
		CHECK(llr_strmap_add(m, s, (size_t)n) == i);
	}
	CHECK(llr_strmap_size(m) == 5000);
	CHECK(llr_strmap_get(m, "w4321", 5) == 4321);
	CHECK(llr_strmap_get(m, "w4321x", 6) == -1);
	CHECK(llr_strmap_add(m, "w7", 2) == 7);
	CHECK(!strcmp(llr_strmap_str(m, 99), "w99") && llr_strmap_len(m, 99) == 3);
	CHECK(llr_strmap_add(m, "a\0b", 3) == 5000);
	CHECK(llr_strmap_get(m, "a", 1) == -1);
	llr_strmap_free(m);
	llr_strmap_free(NULL);
}

/* RFC 3720 B.4 vectors and the usual check value; the result must not
 * depend on how the input is split (the slicing path against the tail). */
static void test_crc32c(void)
{
	CHECK(llr_crc32c(0, "123456789", 9) == 0xE3069283u);
	CHECK(llr_crc32c(0, "", 0) == 0);
	unsigned char b[48];
	memset(b, 0, sizeof b);
	CHECK(llr_crc32c(0, b, 32) == 0x8A9136AAu);
	memset(b, 0xff, sizeof b);
	CHECK(llr_crc32c(0, b, 32) == 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	CHECK(llr_crc32c(0, b, 32) == 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)(31 - i);
	CHECK(llr_crc32c(0, b, 32) == 0x113FDB5Cu);
	static const unsigned char iscsi[48] = {
	    0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
	    0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
	CHECK(llr_crc32c(0, iscsi, 48) == 0xD9963A56u);
	for (size_t cut = 0; cut <= 48; cut++)
		CHECK(llr_crc32c(llr_crc32c(0, iscsi, cut), iscsi + cut, 48 - cut) == 0xD9963A56u);
}

/* llr_alloc_large: small and huge-page sizes, zeroed when asked, every
 * byte writable, freed with free(); an overflowing size is NULL. */
static void test_alloc_large(void)
{
	static const size_t sizes[] = {1, 1000, (1 << 20) - 8, 1 << 20, (2 << 20) + 4, 5 << 20};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		size_t n = sizes[i] / sizeof(int64_t) + 1;
		int64_t *z = llr_alloc_large(n, sizeof *z, 1), *u = llr_alloc_large(n, sizeof *u, 0);
		CHECK(z && u);
		int64_t nonzero = 0;
		for (size_t k = 0; z && u && k < n; k++) {
			nonzero += z[k] != 0;
			u[k] = (int64_t)k;
			z[k] = u[k] + 1;
		}
		CHECK(nonzero == 0);
		CHECK(z && u && z[n - 1] == (int64_t)n && u[n / 2] == (int64_t)(n / 2));
		free(z);
		free(u);
	}
	CHECK(llr_alloc_large(SIZE_MAX / 4, 8, 0) == NULL);
}

int main(void)
{
	PLAN(9);
	RUN(test_err);
	RUN(test_buf);
	RUN(test_numfmt);
	RUN(test_rng);
	RUN(test_tensor);
	RUN(test_csr);
	RUN(test_strmap);
	RUN(test_crc32c);
	RUN(test_alloc_large);
	DONE();
}
