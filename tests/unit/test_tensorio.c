/*
 * test_tensorio.c - unit tests for meta and the tensor archive: round trips
 * of every dtype, text and CSR members; byte-identical output; kind and
 * version checks and their messages; hand-made foreign or broken .npy
 * members; truncation at every 97th offset, a stream given up on standard
 * output, compressed streams and random garbage (an error, never a
 * crash); and the NumPy proof: Debian's
 * python3 with tarfile + numpy.load reads what the library wrote.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llrnn.h"
#include "test.h"

static const char *tpath(const char *name)
{
	static char bufs[8][512];
	static int k;
	char *p = bufs[k++ % 8];
	snprintf(p, sizeof bufs[0], "%s/%s", test_tmpdir(), name);
	return p;
}

static int have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *b = malloc(cap);
	size_t k;
	while ((k = fread(b + len, 1, cap - len, f)) > 0) {
		len += k;
		if (len == cap)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	*n = len;
	return b;
}

static char *find(const char *hay, size_t n, const char *needle);

static void spit(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fwrite(p, 1, n, f);
	fclose(f);
}

/* ------------------------------------------------------------------ meta */

static void test_meta(void)
{
	llr_meta *m = llr_meta_new();
	llr_err e = {0};
	CHECK(llr_meta_set(m, "dims.V", "1200") == LLR_OK);
	CHECK(llr_meta_setf(m, "lr", "%g", 0.001) == LLR_OK);
	CHECK(llr_meta_set(m, "note", "spaces and = signs are fine") == LLR_OK);
	CHECK(llr_meta_set(m, "dims.V", "1300") == LLR_OK); /* replace, keep place */
	CHECK(llr_meta_set(m, "bad key", "x") == LLR_EINVAL);
	CHECK(llr_meta_set(m, "", "x") == LLR_EINVAL);
	CHECK(llr_meta_set(m, "k", "two\nlines") == LLR_EINVAL);
	char longv[1000];
	memset(longv, 'v', sizeof longv - 1);
	longv[sizeof longv - 1] = 0;
	CHECK(llr_meta_setf(m, "long", "%s", longv) == LLR_OK);
	CHECK(llr_meta_count(m) == 4);
	const char *k, *v;
	llr_meta_at(m, 0, &k, &v);
	CHECK(!strcmp(k, "dims.V") && !strcmp(v, "1300"));
	int64_t i;
	double d;
	CHECK(llr_meta_get_i64(m, "dims.V", &i, &e) == LLR_OK && i == 1300);
	CHECK(llr_meta_get_f64(m, "lr", &d, &e) == LLR_OK && d == 0.001);
	CHECK(llr_meta_get_i64(m, "lr", &i, &e) == LLR_EFORMAT && strstr(e.msg, "lr=0.001 is not an integer"));
	CHECK(llr_meta_get_i64(m, "nope", &i, &e) == LLR_EFORMAT && strstr(e.msg, "missing key 'nope'"));
	CHECK(llr_meta_get(m, "nope") == NULL);
	CHECK(strlen(llr_meta_get(m, "long")) == 999);

	llr_buf b = {0};
	CHECK(llr_meta_format(m, &b) == LLR_OK);
	CHECK(!strncmp(b.data, "dims.V=1300\nlr=0.001\nnote=spaces and = signs are fine\nlong=vvv", 62));
	llr_meta *m2 = llr_meta_new();
	CHECK(llr_meta_parse(m2, b.data, b.len, &e) == LLR_OK);
	CHECK(llr_meta_count(m2) == 4 && !strcmp(llr_meta_get(m2, "note"), "spaces and = signs are fine"));
	llr_meta_free(m2);
	llr_buf_free(&b);

	/* parse errors name the line */
	const char *bad[][2] = {
		{"a=1\nno equals sign\n", "line 2: expected key=value"},
		{"a=1\n\n# comment\nb c=2\n", "line 4: bad key 'b c'"},
		{"a=1\na=2\n", "line 2: key 'a' given twice"},
		{"=1\n", "line 1: bad key ''"},
		{"a=x\r\n", "line 1: value of 'a' holds a control character"},
	};
	for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
		m2 = llr_meta_new();
		memset(&e, 0, sizeof e);
		CHECK(llr_meta_parse(m2, bad[j][0], strlen(bad[j][0]), &e) == LLR_EFORMAT);
		CHECK(!strncmp(e.msg, bad[j][1], strlen(bad[j][1])));
		if (strncmp(e.msg, bad[j][1], strlen(bad[j][1])))
			printf("#   got '%s'\n", e.msg);
		llr_meta_free(m2);
	}
	m2 = llr_meta_new();
	CHECK(llr_meta_parse(m2, "x=1\n\ny=\nz=a=b", 13, &e) == LLR_OK);
	CHECK(llr_meta_count(m2) == 3 && !strcmp(llr_meta_get(m2, "y"), "") && !strcmp(llr_meta_get(m2, "z"), "a=b"));
	llr_meta_free(m2);
	llr_meta_free(m);
	llr_meta_free(NULL);
}

/* --------------------------------------------------------- a test archive */

static float F[6] = {1.5f, -2.25f, 0.0f, 3.0e-7f, 1e30f, -0.0f};
static int32_t I32[4] = {0, -1, 2147483647, -2147483647 - 1};
static int64_t I64[8] = {1, -2, 3, -4, 5, 6, (int64_t)1 << 40, -((int64_t)1 << 50)};
static double D = 2.718281828459045;
static const char *TEXT = "the\t10\nof\t7\n\xC3\xA9t\xC3\xA9\t3\n";

static llr_csr *test_csr(void)
{
	llr_csr_builder *b = llr_csr_builder_new(5);
	int32_t c0[] = {0, 3}, c2[] = {4};
	float v0[] = {1, 0.5f}, v2[] = {2};
	llr_csr_builder_row(b, c0, v0, 2, NULL);
	llr_csr_builder_row(b, NULL, NULL, 0, NULL);
	llr_csr_builder_row(b, c2, v2, 1, NULL);
	return llr_csr_builder_finish(b, NULL);
}

static int write_test_archive(const char *path, const char *kind)
{
	llr_err e = {0};
	llr_meta *m = llr_meta_new();
	llr_meta_set(m, "dims.V", "3");
	llr_meta_set(m, "kind", "ignored"); /* the writer's kind wins */
	llr_tensor_writer *w = llr_tw_open(path, kind, m, &e);
	llr_meta_free(m);
	if (!w) {
		printf("#   llr_tw_open: %s\n", e.msg);
		return -1;
	}
	int rc = 0;
	int64_t s23[] = {2, 3}, s4[] = {4}, s222[] = {2, 2, 2}, s03[] = {0, 3};
	rc |= llr_tw_put_raw(w, "weights/f32", LLR_F32, 2, s23, F, &e);
	rc |= llr_tw_put_raw(w, "ids/000000", LLR_I32, 1, s4, I32, &e);
	rc |= llr_tw_put_text(w, "vocab", TEXT, strlen(TEXT), &e);
	rc |= llr_tw_put_raw(w, "i64", LLR_I64, 3, s222, I64, &e);
	rc |= llr_tw_put_raw(w, "scalar", LLR_F64, 0, NULL, &D, &e);
	rc |= llr_tw_put_raw(w, "empty", LLR_F32, 2, s03, NULL, &e);
	llr_csr *c = test_csr();
	rc |= llr_tw_put_csr(w, "phi", c, &e);
	llr_csr_free(c);
	if (rc) {
		printf("#   put: %s\n", e.msg);
		llr_tw_abort(w);
		return -1;
	}
	if (llr_tw_close(w, &e) < 0) {
		printf("#   close: %s\n", e.msg);
		return -1;
	}
	return 0;
}

/* Read everything; returns LLR_OK or the first error.  With check, also
 * compares every value with what write_test_archive wrote. */
static int read_all(const char *path, const char *kind, int check, llr_err *e)
{
	llr_tensor_reader *r = llr_tr_open(path, kind, e);
	if (!r)
		return e->code ? e->code : -100;
	int rc = 0, n = 0;
	const char *name;
	static const char *names[] = {"weights/f32", "ids/000000", "vocab", "i64", "scalar", "empty", "phi/indptr"};
	if (check) {
		const llr_meta *m = llr_tr_meta(r);
		const char *k, *v;
		CHECK(llr_meta_count(m) == 5);
		llr_meta_at(m, 0, &k, &v);
		CHECK(!strcmp(k, "format") && !strcmp(v, "llrnn"));
		llr_meta_at(m, 1, &k, &v);
		CHECK(!strcmp(k, "version") && !strcmp(v, "1"));
		llr_meta_at(m, 2, &k, &v);
		CHECK(!strcmp(k, "kind") && !strcmp(v, "features"));
		llr_meta_at(m, 3, &k, &v);
		CHECK(!strcmp(k, "checksum") && !strcmp(v, "crc32c"));
		CHECK(!strcmp(llr_meta_get(m, "dims.V"), "3"));
	}
	while ((rc = llr_tr_next(r, &name, e)) > 0) {
		if (check && n < 7)
			CHECK(!strcmp(name, names[n]));
		n++;
		llr_tensor *t = NULL;
		if (!strcmp(name, "vocab")) {
			char *text;
			size_t len;
			rc = llr_tr_text(r, &text, &len, e);
			if (rc == 0 && check)
				CHECK(len == strlen(TEXT) && !strcmp(text, TEXT));
			if (rc == 0)
				free(text);
		} else if (!strcmp(name, "phi/indptr")) {
			llr_csr *c = NULL;
			rc = llr_tr_csr(r, "phi", 5, &c, e);
			if (rc == 0 && check) {
				llr_csr *want = test_csr();
				CHECK(c->rows == 3 && c->cols == 5 && c->nnz == 3);
				CHECK(!memcmp(c->indptr, want->indptr, 4 * sizeof(int32_t)));
				CHECK(!memcmp(c->indices, want->indices, 3 * sizeof(int32_t)));
				CHECK(!memcmp(c->data, want->data, 3 * sizeof(float)));
				llr_csr_free(want);
			}
			llr_csr_free(c);
		} else {
			rc = llr_tr_tensor(r, &t, e);
			if (rc == 0 && check) {
				if (!strcmp(name, "weights/f32"))
					CHECK(t->dtype == LLR_F32 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 && !memcmp(t->data, F, sizeof F));
				else if (!strcmp(name, "ids/000000"))
					CHECK(t->dtype == LLR_I32 && t->ndim == 1 && t->shape[0] == 4 && !memcmp(t->data, I32, sizeof I32));
				else if (!strcmp(name, "i64"))
					CHECK(t->dtype == LLR_I64 && t->ndim == 3 && t->shape[2] == 2 && !memcmp(t->data, I64, sizeof I64));
				else if (!strcmp(name, "scalar"))
					CHECK(t->dtype == LLR_F64 && t->ndim == 0 && *(double *)t->data == D);
				else if (!strcmp(name, "empty"))
					CHECK(t->dtype == LLR_F32 && t->ndim == 2 && t->shape[0] == 0 && t->shape[1] == 3);
			}
			llr_tensor_free(t);
		}
		if (rc < 0)
			break;
	}
	if (check && rc == 0)
		CHECK(n == 7);
	llr_tr_close(r);
	return rc;
}

static void test_roundtrip(void)
{
	const char *p = tpath("a.llr");
	CHECK(write_test_archive(p, "features") == 0);
	llr_err e = {0};
	CHECK(read_all(p, "features", 1, &e) == 0);
	CHECK(read_all(p, NULL, 1, &e) == 0);
	if (e.code)
		printf("#   %s\n", e.msg);

	/* no temporary left behind */
	DIR *d = opendir(test_tmpdir());
	struct dirent *de;
	int tmps = 0;
	while ((de = readdir(d)))
		tmps += strstr(de->d_name, ".tmp-") != NULL;
	closedir(d);
	CHECK(tmps == 0);

	/* byte-identical output, to a file or to stdout */
	const char *p2 = tpath("b.llr"), *p3 = tpath("c.llr");
	CHECK(write_test_archive(p2, "features") == 0);
	fflush(stdout);
	int saved = dup(1), fd = open(p3, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	close(fd);
	int rc = write_test_archive("-", "features");
	dup2(saved, 1);
	close(saved);
	CHECK(rc == 0);
	size_t n1, n2, n3;
	char *a = slurp(p, &n1), *b = slurp(p2, &n2), *c = slurp(p3, &n3);
	CHECK(a && b && c && n1 == n2 && n1 == n3 && !memcmp(a, b, n1) && !memcmp(a, c, n1));
	/* the tar headers: a pax header with the CRC of meta alone, then
	 * meta's: mtime 0, uid/gid 0, no user names; .npy data 64-byte
	 * aligned; the archive ends right after its zero blocks */
	CHECK(!memcmp(a, "PaxHeader/meta", 15));
	CHECK(find(a + 512, 512, "SCHILY.xattr.user.llrnn.crc32c=") && !find(a + 512, 512, "LIBARCHIVE"));
	CHECK(!memcmp(a + 1024, "meta", 5));
	CHECK(!memcmp(a + 1024 + 108, "000000 ", 7) && !memcmp(a + 1024 + 116, "000000 ", 7)); /* uid, gid */
	CHECK(!memcmp(a + 1024 + 136, "00000000000", 11));                                     /* mtime */
	CHECK(a[1024 + 265] == 0 && a[1024 + 297] == 0);                                       /* uname, gname */
	CHECK(n1 % 512 == 0);
	char *npy = memchr(a + 1024, 0x93, n1 - 1024);
	CHECK(npy && !memcmp(npy, "\x93NUMPY\x01\x00", 8));
	if (npy) {
		size_t hl = (unsigned char)npy[8] | (size_t)(unsigned char)npy[9] << 8;
		CHECK((10 + hl) % 64 == 0 && npy[10 + hl - 1] == '\n');
		CHECK(!strncmp(npy + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }  ", 61));
	}
	free(a);
	free(b);
	free(c);
}

/* The members of a tar image: data offset, size, name (pax headers
 * skipped); returns how many, at most max. */
typedef struct tar_member {
	size_t off, size;
	char name[101];
} tar_member;

static int tar_members(const char *a, size_t n, tar_member *out, int max)
{
	int k = 0;
	for (size_t off = 0; off + 512 <= n && a[off] && k < max;) {
		size_t size = (size_t)strtoull(a + off + 124, NULL, 8);
		if (a[off + 156] != 'x') { /* not a pax header */
			out[k].off = off + 512;
			out[k].size = size;
			memcpy(out[k].name, a + off, 100);
			out[k].name[100] = 0;
			k++;
		}
		off += 512 + (size + 511) / 512 * 512;
	}
	return k;
}

static char *find(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(hay + i, needle, k))
			return (char *)hay + i;
	return NULL;
}

/* A flipped bit in any member's bytes, a damaged or missing CRC: refused,
 * naming the member; a member the caller skips is checked too. */
static void test_checksums(void)
{
	const char *p = tpath("crc.llr"), *q = tpath("crc-bad.llr");
	llr_err e = {0};
	CHECK(write_test_archive(p, "features") == 0);
	CHECK(read_all(p, "features", 1, &e) == LLR_OK);
	size_t n;
	char *a = slurp(p, &n);
	tar_member m[32];
	int k = tar_members(a, n, m, 32);
	CHECK(k == 10); /* meta, 6 members, 3 of phi */
	char want[200];
	for (int i = 0; i < k; i++) {
		if (!m[i].size)
			continue;
		/* the first byte (magic, meta's "format"), the middle, the last */
		size_t at[3] = {m[i].off, m[i].off + m[i].size / 2, m[i].off + m[i].size - 1};
		for (int j = 0; j < 3; j++) {
			a[at[j]] ^= (char)(1 << (j + 2));
			spit(q, a, n);
			a[at[j]] ^= (char)(1 << (j + 2));
			memset(&e, 0, sizeof e);
			int rc = read_all(q, "features", 0, &e);
			snprintf(want, sizeof want, "crc-bad.llr: member %s: checksum mismatch (corrupted file)", m[i].name);
			CHECK(rc == LLR_EFORMAT && strstr(e.msg, want));
			if (!strstr(e.msg, want))
				printf("#   %s byte %zu: %s\n", m[i].name, at[j] - m[i].off, e.msg);
		}
	}
	/* skipped: flip vocab, step over every member without reading */
	for (int i = 0; i < k; i++)
		if (!strcmp(m[i].name, "vocab")) {
			a[m[i].off + 1] ^= 1;
			spit(q, a, n);
			a[m[i].off + 1] ^= 1;
		}
	llr_tensor_reader *r = llr_tr_open(q, "features", &e);
	const char *name;
	int rc;
	while (r && (rc = llr_tr_next(r, &name, &e)) > 0)
		;
	CHECK(r && rc == LLR_EFORMAT && strstr(e.msg, "member vocab: checksum mismatch"));
	llr_tr_close(r);
	/* a malformed CRC; a CRC key renamed away, on a member and on meta */
	char *key = find(a + 512, n - 512, "llrnn.crc32c="); /* meta's */
	char *key2 = key ? find(key + 13, n - (size_t)(key + 13 - a), "llrnn.crc32c=") : NULL;
	CHECK(key && key2);
	if (key && key2) {
		char c = key2[13];
		key2[13] = 'g';
		spit(q, a, n);
		key2[13] = c;
		CHECK(read_all(q, "features", 0, &e) == LLR_EFORMAT && strstr(e.msg, "member weights/f32.npy: malformed checksum in its header (corrupted file)"));
		key2[11] = 'x';
		spit(q, a, n);
		key2[11] = 'c';
		CHECK(read_all(q, "features", 0, &e) == LLR_EFORMAT && strstr(e.msg, "member weights/f32.npy: no checksum in its header (corrupted file)"));
		key[11] = 'x';
		spit(q, a, n);
		key[11] = 'c';
		CHECK(read_all(q, "features", 0, &e) == LLR_EFORMAT && strstr(e.msg, "member meta: no checksum in its header (corrupted file)"));
		spit(q, a, n);
		CHECK(read_all(q, "features", 1, &e) == LLR_OK);
	}
	free(a);
}

static void test_writer_errors(void)
{
	llr_err e = {0};
	const char *p = tpath("w.llr");
	llr_tensor_writer *w = llr_tw_open(p, "features", NULL, &e);
	CHECK(w != NULL);
	struct stat st;
	CHECK(stat(p, &st) < 0); /* nothing at the final path until close */
	int64_t s1[] = {1}, sneg[] = {-1}, shuge[] = {(int64_t)1 << 31, (int64_t)1 << 31};
	float one = 1;
	const char *bad[] = {"", "/abs", "a//b", "a/", "../up", "a/./b", "meta", "x.npy", "sp ace", "t\xC3\xA9"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&e, 0, sizeof e);
		CHECK(llr_tw_put_raw(w, bad[i], LLR_F32, 1, s1, &one, &e) == LLR_EINVAL);
	}
	CHECK(llr_tw_put_text(w, "meta", "x", 1, &e) == LLR_EINVAL);
	CHECK(llr_tw_put_text(w, "t.npy", "x", 1, &e) == LLR_EINVAL);
	CHECK(llr_tw_put_raw(w, "neg", LLR_F32, 1, sneg, &one, &e) == LLR_ERANGE);
	CHECK(llr_tw_put_raw(w, "huge", LLR_F32, 2, shuge, &one, &e) == LLR_ERANGE);
	CHECK(llr_tw_put_raw(w, "dims", LLR_F32, 5, shuge, &one, &e) == LLR_EINVAL);
	CHECK(llr_tw_put_raw(w, "ok", LLR_F32, 1, s1, &one, &e) == LLR_OK);
	memset(&e, 0, sizeof e);
	CHECK(llr_tw_put_raw(w, "ok", LLR_F32, 1, s1, &one, &e) == LLR_EINVAL);
	CHECK(strstr(e.msg, "'ok' written twice") != NULL);
	llr_tw_abort(w);
	CHECK(stat(p, &st) < 0);
	DIR *d = opendir(test_tmpdir());
	struct dirent *de;
	int tmps = 0;
	while ((de = readdir(d)))
		tmps += strstr(de->d_name, "w.llr") != NULL;
	closedir(d);
	CHECK(tmps == 0);

	memset(&e, 0, sizeof e);
	CHECK(llr_tw_open(tpath("no/such/dir/x.llr"), "model", NULL, &e) == NULL);
	CHECK(e.code == LLR_EIO && strstr(e.msg, "x.llr: No such file or directory"));
	CHECK(llr_tw_open(p, "bad kind", NULL, &e) == NULL && e.code == LLR_EINVAL);
	CHECK(llr_tw_close(NULL, &e) == LLR_OK);
	llr_tw_abort(NULL);
	llr_tr_close(NULL);
}

/* Make a tar from files written in dir: name/content pairs, in order. */
static const char *make_tar(const char *tarname, const char *const *files, const size_t *sizes, const char *const *contents, int n)
{
	char dir[600], cmd[4096];
	snprintf(dir, sizeof dir, "%s.d", tpath(tarname));
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
	if (system(cmd))
		return NULL;
	size_t o = (size_t)snprintf(cmd, sizeof cmd, "cd '%s' && tar cf ../%s", dir, tarname);
	for (int i = 0; i < n; i++) {
		char p[800];
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		spit(p, contents[i], sizes[i] ? sizes[i] : strlen(contents[i]));
		o += (size_t)snprintf(cmd + o, sizeof cmd - o, " %s", files[i]);
	}
	if (system(cmd))
		return NULL;
	return tpath(tarname);
}

static void test_kind_version(void)
{
	const char *p = tpath("f.llr");
	CHECK(write_test_archive(p, "features") == 0);
	llr_err e = {0};
	CHECK(llr_tr_open(p, "model", &e) == NULL);
	CHECK(e.code == LLR_EKIND);
	char want[700];
	snprintf(want, sizeof want, "%s: is a 'features' archive (made by featurize), expected a 'model'; make one with 'train'", p);
	CHECK(!strcmp(e.msg, want));
	if (strcmp(e.msg, want))
		printf("#   got: %s\n", e.msg);

	const char *files[] = {"meta", "x"};
	const char *v2[] = {"format=llrnn\nversion=2\nkind=model\n", "x"};
	const char *tp = make_tar("v2.tar", files, (size_t[]){0, 0}, v2, 2);
	memset(&e, 0, sizeof e);
	CHECK(tp && llr_tr_open(tp, "model", &e) == NULL);
	CHECK(e.code == LLR_EKIND && strstr(e.msg, "v2.tar: written by a newer llrnn (version 2 > 1): upgrade llrnn"));

	const char *nofmt[] = {"version=1\nkind=model\n", "x"};
	tp = make_tar("nofmt.tar", files, (size_t[]){0, 0}, nofmt, 2);
	memset(&e, 0, sizeof e);
	CHECK(tp && llr_tr_open(tp, NULL, &e) == NULL);
	CHECK(e.code == LLR_EKIND && strstr(e.msg, "nofmt.tar: not an llrnn tensor archive"));

	const char *badmeta[] = {"format=llrnn\nversion=1\nkind=model\nbad line\n", "x"};
	tp = make_tar("badmeta.tar", files, (size_t[]){0, 0}, badmeta, 2);
	memset(&e, 0, sizeof e);
	CHECK(tp && llr_tr_open(tp, NULL, &e) == NULL);
	CHECK(e.code == LLR_EFORMAT && strstr(e.msg, "badmeta.tar: meta: line 4: expected key=value"));

	const char *nokind[] = {"format=llrnn\nversion=1\n", "x"};
	tp = make_tar("nokind.tar", files, (size_t[]){0, 0}, nokind, 2);
	memset(&e, 0, sizeof e);
	CHECK(tp && llr_tr_open(tp, NULL, &e) == NULL);
	CHECK(e.code == LLR_EFORMAT && strstr(e.msg, "missing key 'kind'"));

	const char *files2[] = {"x", "meta"};
	const char *wrongorder[] = {"x", "format=llrnn\nversion=1\nkind=model\n"};
	tp = make_tar("order.tar", files2, (size_t[]){0, 0}, wrongorder, 2);
	memset(&e, 0, sizeof e);
	CHECK(tp && llr_tr_open(tp, NULL, &e) == NULL);
	CHECK(e.code == LLR_EKIND && strstr(e.msg, "order.tar: not an llrnn tensor archive (first member is 'x', not 'meta')"));

	/* plain text, empty file, missing file, a directory */
	const char *txt = tpath("plain.txt");
	spit(txt, "hello world\n", 12);
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_open(txt, "model", &e) == NULL);
	CHECK(e.code == LLR_EKIND && strstr(e.msg, "plain.txt: not an llrnn tensor archive"));
	const char *empty = tpath("empty.llr");
	spit(empty, "", 0);
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_open(empty, "model", &e) == NULL);
	CHECK(e.code == LLR_EKIND && strstr(e.msg, "empty.llr: empty, not an llrnn tensor archive"));
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_open(tpath("missing.llr"), "model", &e) == NULL);
	CHECK(e.code == LLR_EIO && strstr(e.msg, "missing.llr: No such file or directory"));
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_open(test_tmpdir(), "model", &e) == NULL && e.code < 0);
}

/* A .npy member built by hand: header dict h, then nbytes of payload. */
static int npy_case(const char *tag, const char *dict, size_t payload, int major, llr_err *e)
{
	char npy[4096];
	size_t hl = strlen(dict), pre = major == 1 ? 10 : 12;
	memcpy(npy, "\x93NUMPY", 6);
	npy[6] = (char)major;
	npy[7] = 0;
	npy[8] = (char)(hl & 0xff);
	npy[9] = (char)(hl >> 8);
	if (major > 1)
		npy[10] = npy[11] = 0;
	memcpy(npy + pre, dict, hl);
	memset(npy + pre + hl, 0x3f, payload);
	const char *files[] = {"meta", "t.npy"};
	const char *contents[] = {"format=llrnn\nversion=1\nkind=model\n", npy};
	char tarname[64];
	snprintf(tarname, sizeof tarname, "npy-%s.tar", tag);
	const char *tp = make_tar(tarname, files, (size_t[]){0, pre + hl + payload}, contents, 2);
	if (!tp)
		return -100;
	llr_tensor_reader *r = llr_tr_open(tp, "model", e);
	if (!r)
		return -101;
	const char *name;
	int rc = llr_tr_next(r, &name, e);
	if (rc == 1) {
		llr_tensor *t = NULL;
		rc = llr_tr_tensor(r, &t, e);
		if (rc == 0 && (t->ndim != 2 || t->shape[0] != 2 || t->shape[1] != 2 || ((float *)t->data)[3] != 0.74705880880355835f))
			rc = -102;
		llr_tensor_free(t);
	}
	llr_tr_close(r);
	return rc;
}

static void test_npy_members(void)
{
	llr_err e = {0};
	/* what numpy.save writes for np.full((2,2), 0x3f3f3f3f as float) */
	CHECK(npy_case("ok", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }          \n", 16, 1, &e) == 0);
	CHECK(npy_case("ok2", "{\"shape\":(2,2),\"descr\":\"<f4\",\"fortran_order\":False}\n", 16, 2, &e) == 0);
	struct {
		const char *tag, *dict;
		size_t payload;
		int code;
		const char *msg;
	} cases[] = {
		{"fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", 16, LLR_EFORMAT, "Fortran order not supported"},
		{"bigend", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }\n", 16, LLR_EFORMAT, "dtype '>f4' not supported"},
		{"u8", "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }\n", 4, LLR_EFORMAT, "dtype '|u1' not supported"},
		{"short", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", 15, LLR_ETRUNC, "needs 16 bytes, the member holds 15"},
		{"long", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", 17, LLR_EFORMAT, "1 stray bytes"},
		{"huge", "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000), }\n", 16, LLR_ERANGE, "over the 4 GiB member limit"},
		{"over", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 16, LLR_EFORMAT, "malformed 'shape'"},
		{"5d", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }\n", 4, LLR_EFORMAT, "more than 4 dimensions"},
		{"neg", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }\n", 16, LLR_EFORMAT, "malformed 'shape'"},
		{"noshape", "{'descr': '<f4', 'fortran_order': False, }\n", 16, LLR_EFORMAT, "lacks 'shape'"},
		{"extra", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}\n", 16, LLR_EFORMAT, "unknown header key 'x'"},
		{"junk", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), } junk\n", 16, LLR_EFORMAT, "junk after"},
		{"notdict", "['descr']\n", 16, LLR_EFORMAT, "not a dict"},
		{"unterminated", "{'descr': '<f4", 0, LLR_EFORMAT, "malformed"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memset(&e, 0, sizeof e);
		int rc = npy_case(cases[i].tag, cases[i].dict, cases[i].payload, 1, &e);
		CHECK(rc == cases[i].code && strstr(e.msg, cases[i].msg) && strstr(e.msg, "member t.npy"));
		if (rc != cases[i].code || !strstr(e.msg, cases[i].msg))
			printf("#   %s: %d %s\n", cases[i].tag, rc, e.msg);
	}
	/* bad magic, header length past the member, a member too short */
	const char *files[] = {"meta", "t.npy"};
	const char *magic[] = {"format=llrnn\nversion=1\nkind=model\n", "\x93NUMPX\x01\x00\x10\x00{}              "};
	const char *tp = make_tar("magic.tar", files, (size_t[]){0, 26}, magic, 2);
	llr_tensor_reader *r = llr_tr_open(tp, NULL, &e);
	const char *name;
	llr_tensor *t;
	CHECK(r && llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "t"));
	memset(&e, 0, sizeof e);
	CHECK(r && llr_tr_tensor(r, &t, &e) == LLR_EFORMAT && strstr(e.msg, "bad magic"));
	llr_tr_close(r);
	const char *past[] = {magic[0], "\x93NUMPY\x01\x00\xff\x00{}"};
	tp = make_tar("past.tar", files, (size_t[]){0, 12}, past, 2);
	r = llr_tr_open(tp, NULL, &e);
	CHECK(r && llr_tr_next(r, &name, &e) == 1);
	memset(&e, 0, sizeof e);
	CHECK(r && llr_tr_tensor(r, &t, &e) == LLR_ETRUNC && strstr(e.msg, "runs past"));
	llr_tr_close(r);
	const char *tiny[] = {magic[0], "\x93NUM"};
	tp = make_tar("tiny.tar", files, (size_t[]){0, 0}, tiny, 2);
	r = llr_tr_open(tp, NULL, &e);
	CHECK(r && llr_tr_next(r, &name, &e) == 1);
	memset(&e, 0, sizeof e);
	CHECK(r && llr_tr_tensor(r, &t, &e) == LLR_ETRUNC && strstr(e.msg, "too short"));
	llr_tr_close(r);
}

static void test_reader_misuse(void)
{
	const char *p = tpath("m.llr");
	CHECK(write_test_archive(p, "features") == 0);
	llr_err e = {0};
	llr_tensor_reader *r = llr_tr_open(p, "features", &e);
	const char *name;
	llr_tensor *t = NULL;
	char *text;
	size_t len;
	CHECK(llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "weights/f32"));
	/* expect: wrong shape and dtype, named */
	int64_t s33[] = {3, 3}, sany[] = {-1, 3};
	CHECK(llr_tr_tensor_expect(r, LLR_F32, 2, s33, &t, &e) == LLR_EFORMAT);
	CHECK(strstr(e.msg, "member weights/f32.npy: float32 2x3, expected float32 3x3") != NULL);
	llr_tr_close(r);
	r = llr_tr_open(p, "features", &e);
	CHECK(llr_tr_next(r, &name, &e) == 1);
	CHECK(llr_tr_tensor_expect(r, LLR_F32, 2, sany, &t, &e) == LLR_OK && t->shape[0] == 2);
	llr_tensor_free(t);
	CHECK(llr_tr_tensor(r, &t, &e) == LLR_EINVAL); /* already read */
	CHECK(llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "ids/000000"));
	CHECK(llr_tr_tensor_expect(r, LLR_F32, 1, sany, &t, &e) == LLR_EFORMAT && strstr(e.msg, "int32 4, expected float32 *"));
	CHECK(llr_tr_text(r, &text, &len, &e) == LLR_EFORMAT && strstr(e.msg, "is a .npy tensor, not text"));
	CHECK(llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "vocab"));
	CHECK(llr_tr_tensor(r, &t, &e) == LLR_EFORMAT && strstr(e.msg, "member vocab is text"));
	/* CSR read from the wrong member */
	llr_csr *c;
	CHECK(llr_tr_csr(r, "phi", 5, &c, &e) == LLR_EFORMAT && strstr(e.msg, "expected member phi/indptr.npy, found vocab"));
	llr_tr_close(r);

	/* CSR shape checks */
	llr_tensor_writer *w = llr_tw_open(p, "features", NULL, &e);
	int32_t ip[] = {0, 1, 3}, ix[] = {0, 2, 1}, ixbad[] = {0, 7, 1};
	float dv[] = {1, 2, 3};
	int64_t s3[] = {3}, s2[] = {2}, s0[] = {0};
	llr_tw_put_raw(w, "a/indptr", LLR_I32, 1, s3, ip, &e);
	llr_tw_put_raw(w, "a/indices", LLR_I32, 1, s3, ix, &e);
	llr_tw_put_raw(w, "a/data", LLR_F32, 1, s2, dv, &e); /* too short */
	llr_tw_put_raw(w, "b/indptr", LLR_I32, 1, s3, ip, &e);
	llr_tw_put_raw(w, "b/indices", LLR_I32, 1, s3, ixbad, &e);
	llr_tw_put_raw(w, "b/data", LLR_F32, 1, s3, dv, &e);
	llr_tw_put_raw(w, "c/indptr", LLR_I32, 1, s0, ip, &e); /* no rows+1 */
	llr_tw_put_raw(w, "c/indices", LLR_I32, 1, s0, ix, &e);
	llr_tw_put_raw(w, "c/data", LLR_F32, 1, s0, dv, &e);
	llr_tw_put_raw(w, "d/indptr", LLR_I32, 1, s3, ip, &e);
	CHECK(llr_tw_close(w, &e) == LLR_OK);
	r = llr_tr_open(p, "features", &e);
	CHECK(llr_tr_next(r, &name, &e) == 1);
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_csr(r, "a", 3, &c, &e) == LLR_EFORMAT && strstr(e.msg, "a: indices has 3 entries, data 2"));
	CHECK(llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "b/indptr"));
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_csr(r, "b", 3, &c, &e) == LLR_EFORMAT && strstr(e.msg, "b: sparse matrix: row 0") == NULL && strstr(e.msg, "column 7 out of range"));
	CHECK(llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "c/indptr"));
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_csr(r, "c", 3, &c, &e) == LLR_EFORMAT && strstr(e.msg, "c/indptr: 0 entries"));
	CHECK(llr_tr_next(r, &name, &e) == 1 && !strcmp(name, "d/indptr"));
	memset(&e, 0, sizeof e);
	CHECK(llr_tr_csr(r, "d", 3, &c, &e) == LLR_EFORMAT && strstr(e.msg, "missing member d/indices.npy"));
	llr_tr_close(r);
}

/* Truncate the archive at every 97th offset (and at every 512-byte
 * boundary, where a cut falls between members): always an error. */
static void test_truncation(void)
{
	const char *p = tpath("t.llr");
	CHECK(write_test_archive(p, "features") == 0);
	size_t n;
	char *a = slurp(p, &n);
	const char *cut = tpath("cut.llr");
	int tried = 0, failed_ok = 0;
	llr_err e;
	for (size_t k = 0; a && k + 512 < n; k += 97) {
		for (int pass = 0; pass < 2; pass++) {
			size_t at = pass ? (k / 512) * 512 : k;
			if (pass && at % (512 * 97) != 0 && k % 512 >= 97)
				continue; /* each 512 boundary once */
			spit(cut, a, at);
			memset(&e, 0, sizeof e);
			int rc = read_all(cut, "features", 0, &e);
			tried++;
			if (rc < 0 && e.code == rc && e.msg[0] && !strncmp(e.msg, cut, strlen(cut)))
				failed_ok++;
			else
				printf("#   cut at %zu: rc %d '%s'\n", at, rc, e.msg);
		}
	}
	CHECK(tried > 20 && failed_ok == tried);
	/* cut within the end-of-archive blocks: everything is there, fine */
	spit(cut, a, n - 512);
	CHECK(read_all(cut, "features", 1, &e) == 0);

	/* compressed: the reader takes any libarchive filter; a cut
	 * compressed stream is an error too */
	const char *tools[][2] = {{"gzip", "gz"}, {"xz", "xz"}, {"zstd", "zst"}, {"bzip2", "bz2"}};
	for (int i = 0; i < 4; i++) {
		if (!have(tools[i][0])) {
			printf("# %s not installed: skipped\n", tools[i][0]);
			continue;
		}
		char cmd[2048], cp[600];
		snprintf(cp, sizeof cp, "%s.%s", p, tools[i][1]);
		snprintf(cmd, sizeof cmd, "%s -c < '%s' > '%s' 2>/dev/null", tools[i][0], p, cp);
		CHECK(system(cmd) == 0);
		memset(&e, 0, sizeof e);
		CHECK(read_all(cp, "features", 1, &e) == 0);
		size_t cn;
		char *c = slurp(cp, &cn);
		int bad = 0;
		for (size_t k = 1; c && k < cn; k += 97) {
			spit(cut, c, k);
			memset(&e, 0, sizeof e);
			int rc = read_all(cut, "features", 0, &e);
			if (!(rc < 0 && e.msg[0]))
				bad++, printf("#   %s cut at %zu: rc %d '%s'\n", tools[i][0], k, rc, e.msg);
		}
		CHECK(bad == 0);
		free(c);
	}
	free(a);
}

/* A writer to standard output given up after some members, the first
 * blocks already out (a pipe cannot be taken back): what is left is cut,
 * without the end-of-archive blocks, and the reader refuses it as
 * truncated, never as a shorter whole archive.  Closed, the same members
 * read back. */
static int write_members(int abort_it, size_t nbig)
{
	llr_err e = {0};
	llr_tensor_writer *w = llr_tw_open("-", "features", NULL, &e);
	if (!w)
		return -1;
	float *big = calloc(nbig, sizeof *big);
	int64_t shape[1] = {(int64_t)nbig};
	int rc = big ? llr_tw_put_raw(w, "ids/000000", LLR_F32, 1, shape, big, &e) : -1;
	if (rc == 0)
		rc = llr_tw_put_text(w, "vocab", "a\nb\n", 4, &e);
	free(big);
	if (abort_it || rc < 0) {
		llr_tw_abort(w);
		return rc;
	}
	return llr_tw_close(w, &e);
}

static void test_abort_stdout(void)
{
	const size_t sizes[] = {3, 2560, 2560 * 8 + 17};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		const char *p = tpath("abort.llr");
		for (int abort_it = 0; abort_it < 2; abort_it++) {
			fflush(stdout);
			int saved = dup(1), fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dup2(fd, 1);
			close(fd);
			int rc = write_members(abort_it, sizes[i]);
			dup2(saved, 1);
			close(saved);
			CHECK(rc == 0);
			llr_err e = {0};
			llr_tensor_reader *r = llr_tr_open(p, "features", &e);
			const char *name;
			int n = 0;
			while (r && (rc = llr_tr_next(r, &name, &e)) > 0)
				n++;
			if (!abort_it) {
				CHECK(r && rc == 0 && n == 2);
			} else {
				/* nothing (all still buffered), or a cut stream: an
				 * error naming the file */
				int ok = (r == NULL && strstr(e.msg, "empty")) || (r && rc < 0 && strstr(e.msg, "runcated"));
				if (!ok || e.code >= 0 || strncmp(e.msg, p, strlen(p)))
					printf("#   %zu floats, aborted: %d members, rc %d '%s'\n", sizes[i], n, rc, e.msg);
				CHECK(ok && e.code < 0 && !strncmp(e.msg, p, strlen(p)));
				CHECK(i == 0 || r != NULL); /* blocks were out before the abort */
			}
			llr_tr_close(r);
		}
	}
}

/* Random bytes, and the archive with random bytes overwritten: an error
 * or (for bytes in a payload) a clean read, never a crash or a hang. */
static void test_garbage(void)
{
	llr_rng rng;
	llr_rng_seed(&rng, 7);
	const char *g = tpath("garbage.llr");
	llr_err e;
	char buf[8192];
	int errors = 0;
	for (int i = 0; i < 40; i++) {
		size_t n = (size_t)llr_rng_below(&rng, sizeof buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = (char)llr_rng_u64(&rng);
		spit(g, buf, n);
		memset(&e, 0, sizeof e);
		errors += read_all(g, NULL, 0, &e) < 0 && e.msg[0];
	}
	CHECK(errors == 40);

	const char *p = tpath("g.llr");
	CHECK(write_test_archive(p, "features") == 0);
	size_t n;
	char *a = slurp(p, &n);
	char *b = malloc(n);
	for (int i = 0; a && i < 300; i++) {
		memcpy(b, a, n);
		int flips = 1 + (int)llr_rng_below(&rng, 4);
		for (int f = 0; f < flips; f++)
			b[llr_rng_below(&rng, n)] = (char)llr_rng_u64(&rng);
		spit(g, b, n);
		memset(&e, 0, sizeof e);
		int rc = read_all(g, NULL, 0, &e);
		CHECK(rc == 0 || (rc < 0 && e.msg[0]));
	}
	free(a);
	free(b);
}

/* The NumPy proof: Debian's python3 reads every member with tarfile and
 * numpy.load and checks the values. */
static int test_numpy(void)
{
	if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
		return -1;
	const char *p = tpath("np.llr");
	CHECK(write_test_archive(p, "features") == 0);
	const char *py = tpath("check.py");
	const char *script =
		"import io, sys, tarfile\n"
		"import numpy as np\n"
		"t = tarfile.open(sys.argv[1])\n"
		"names = t.getnames()\n"
		"assert names[0] == 'meta', names\n"
		"meta = dict(l.split('=', 1) for l in t.extractfile('meta').read().decode().splitlines())\n"
		"assert meta['format'] == 'llrnn' and meta['version'] == '1' and meta['kind'] == 'features', meta\n"
		"def load(n):\n"
		"    return np.load(io.BytesIO(t.extractfile(n).read()), allow_pickle=False)\n"
		"f = load('weights/f32.npy')\n"
		"assert f.dtype == np.float32 and f.shape == (2, 3), (f.dtype, f.shape)\n"
		"assert (f == np.array([[1.5, -2.25, 0], [3e-7, 1e30, -0.0]], dtype=np.float32)).all(), f\n"
		"i = load('ids/000000.npy')\n"
		"assert i.dtype == np.int32 and list(i) == [0, -1, 2**31 - 1, -2**31], i\n"
		"l = load('i64.npy')\n"
		"assert l.dtype == np.int64 and l.shape == (2, 2, 2) and l[1, 1, 1] == -2**50 and l[1, 1, 0] == 2**40\n"
		"s = load('scalar.npy')\n"
		"assert s.dtype == np.float64 and s.shape == () and s == 2.718281828459045\n"
		"e = load('empty.npy')\n"
		"assert e.shape == (0, 3) and e.dtype == np.float32\n"
		"ip, ix, d = load('phi/indptr.npy'), load('phi/indices.npy'), load('phi/data.npy')\n"
		"assert list(ip) == [0, 2, 2, 3] and list(ix) == [0, 3, 4] and list(d) == [1, 0.5, 2]\n"
		"assert t.extractfile('vocab').read().decode() == 'the\\t10\\nof\\t7\\n\\u00e9t\\u00e9\\t3\\n'\n"
		"for m in t.getmembers():\n"
		"    assert m.mtime == 0 and m.uid == 0 and m.gid == 0 and m.uname == '' and m.mode == 0o644, m\n"
		"print('numpy-ok')\n";
	FILE *f = fopen(py, "w");
	fputs(script, f);
	fclose(f);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' | grep -qx numpy-ok", py, p);
	CHECK(system(cmd) == 0);
	/* and through a gzip pipe, as tarfile's stream mode would read it */
	snprintf(cmd, sizeof cmd, "gzip -c '%s' | /usr/bin/python3 -c 'import sys, tarfile; t = tarfile.open(fileobj=sys.stdin.buffer, mode=\"r|gz\"); print(\",\".join(m.name for m in t))' | grep -qx 'meta,weights/f32.npy,ids/000000.npy,vocab,i64.npy,scalar.npy,empty.npy,phi/indptr.npy,phi/indices.npy,phi/data.npy'", p);
	CHECK(system(cmd) == 0);
	return 0;
}

int main(void)
{
	PLAN(11);
	RUN(test_meta);
	RUN(test_roundtrip);
	RUN(test_checksums);
	RUN(test_writer_errors);
	RUN(test_kind_version);
	RUN(test_npy_members);
	RUN(test_reader_misuse);
	RUN(test_truncation);
	RUN(test_abort_stdout);
	RUN(test_garbage);
	/* the NumPy proof, skipped (said so) without python3-numpy */
	t_failed_checks = 0;
	if (test_numpy() < 0) {
		printf("ok %d - test_numpy # SKIP python3-numpy not installed\n", ++t_number);
	} else {
		printf("%sok %d - test_numpy\n", t_failed_checks ? "not " : "", ++t_number);
		t_any_failed |= t_failed_checks != 0;
	}
	DONE();
}
