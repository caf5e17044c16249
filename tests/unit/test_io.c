/*
 * test_io.c - unit tests for text input: llr_input over plain and
 * compressed files, the UTF-8 decoder and line reader (CRLF, final line,
 * invalid bytes, replacement, the 64 MiB cap, lines checked in runs), and llr_archive over tar,
 * zip and plain text.  Compressed files and archives are made with the
 * command-line tools (gzip, bzip2, xz, zstd, tar, zip); a missing tool
 * skips only its own case, said in a TAP comment.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llrnn.h"
#include "test.h"

static char path_buf[8][512];

/* A path in the scratch directory (rotating buffers). */
static const char *tpath(const char *name)
{
	static int k;
	char *p = path_buf[k++ % 8];
	snprintf(p, sizeof path_buf[0], "%s/%s", test_tmpdir(), name);
	return p;
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fwrite(data, 1, n, f);
	fclose(f);
}

static int have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static int sh(const char *fmt, const char *a)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, fmt, a, a, a, a);
	return system(cmd);
}

/* ----------------------------------------------- an in-memory byte source */

typedef struct memsrc {
	const char *p;
	size_t n, pos, step; /* hand out at most step bytes per call */
} memsrc;

static ssize_t mem_read(void *src, void *buf, size_t n, llr_err *err)
{
	memsrc *m = src;
	size_t k = m->n - m->pos;
	if (k > n)
		k = n;
	if (m->step && k > m->step)
		k = m->step;
	memcpy(buf, m->p + m->pos, k);
	m->pos += k;
	return (ssize_t)k;
}

/* All lines of data joined with '|' (NULs shown as '0'). */
static int collect(const char *data, size_t n, size_t step, int flags, char *out, size_t outsz, llr_err *e)
{
	memsrc m = {data, n, 0, step};
	llr_lines *l = llr_lines_from(mem_read, &m, "mem", flags);
	const char *s;
	size_t len, o = 0;
	int r;
	out[0] = 0;
	while ((r = llr_lines_next(l, &s, &len, e)) > 0) {
		for (size_t i = 0; i < len && o + 2 < outsz; i++)
			out[o++] = s[i] ? s[i] : '0';
		if (o + 2 < outsz)
			out[o++] = '|';
		out[o] = 0;
		if (strlen(s) != len && !(flags & LLR_LINES_NO_VALIDATE))
			r = -100; /* a NUL slipped through */
	}
	llr_lines_close(l);
	return r;
}

static void test_utf8(void)
{
	int32_t cp;
	CHECK(llr_utf8_decode("A", 1, &cp) == 1 && cp == 'A');
	CHECK(llr_utf8_decode("\xC3\xA9", 2, &cp) == 2 && cp == 0xE9);
	CHECK(llr_utf8_decode("\xE2\x82\xAC", 3, &cp) == 3 && cp == 0x20AC);
	CHECK(llr_utf8_decode("\xF0\x9F\x98\x80", 4, &cp) == 4 && cp == 0x1F600);
	CHECK(llr_utf8_decode("\xF4\x8F\xBF\xBF", 4, &cp) == 4 && cp == 0x10FFFF);
	CHECK(llr_utf8_decode("\xED\x9F\xBF", 3, &cp) == 3 && cp == 0xD7FF);
	/* overlongs */
	CHECK(llr_utf8_decode("\xC0\x80", 2, &cp) == -1);
	CHECK(llr_utf8_decode("\xC1\xBF", 2, &cp) == -1);
	CHECK(llr_utf8_decode("\xE0\x80\x80", 3, &cp) == -1);
	CHECK(llr_utf8_decode("\xE0\x9F\xBF", 3, &cp) == -1);
	CHECK(llr_utf8_decode("\xF0\x80\x80\x80", 4, &cp) == -1);
	CHECK(llr_utf8_decode("\xF0\x8F\xBF\xBF", 4, &cp) == -1);
	/* surrogates, above U+10FFFF, stray bytes, cut short */
	CHECK(llr_utf8_decode("\xED\xA0\x80", 3, &cp) == -1);
	CHECK(llr_utf8_decode("\xED\xBF\xBF", 3, &cp) == -1);
	CHECK(llr_utf8_decode("\xF4\x90\x80\x80", 4, &cp) == -1);
	CHECK(llr_utf8_decode("\xF5\x80\x80\x80", 4, &cp) == -1);
	CHECK(llr_utf8_decode("\xFF", 1, &cp) == -1);
	CHECK(llr_utf8_decode("\x80", 1, &cp) == -1);
	CHECK(llr_utf8_decode("\xE2\x82", 2, &cp) == -1);
	CHECK(llr_utf8_decode("\xE2\x82\xAC", 2, &cp) == -1);
	CHECK(llr_utf8_decode("", 0, &cp) == -1);
	CHECK(llr_utf8_decode("\0", 1, &cp) == 1 && cp == 0);

	const char *s = "caf\xC3\xA9 na\xC3\xAFve 0123456789abcdef";
	CHECK(llr_utf8_valid_prefix(s, strlen(s)) == strlen(s));
	CHECK(llr_utf8_valid_prefix("abcdefghij\xFFxyz", 14) == 10);
	CHECK(llr_utf8_valid_prefix("abcdefghijk\xE2\x82", 13) == 11);
	CHECK(llr_utf8_valid_prefix("abcdefgh\0ijk", 12) == 8);
	CHECK(llr_utf8_valid_prefix("ab\0", 3) == 2);
}

static void test_lines_basic(void)
{
	char out[256];
	llr_err e = {0};
	const char *d = "one\r\ntwo\n\nthree\rx\nlast";
	for (size_t step = 1; step <= 4; step++) {
		CHECK(collect(d, strlen(d), step, 0, out, sizeof out, &e) == 0);
		CHECK(!strcmp(out, "one|two||three\rx|last|"));
	}
	/* a final "\r" without "\n" stays; a final "\n" adds no empty line */
	CHECK(collect("a\r", 2, 0, 0, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, "a\r|"));
	CHECK(collect("a\n", 2, 0, 0, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, "a|"));
	CHECK(collect("\n", 1, 0, 0, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, "|"));
	CHECK(collect("", 0, 0, 0, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, ""));

	/* line numbers and the name */
	memsrc m = {"a\nb\nc", 5, 0, 0};
	llr_lines *l = llr_lines_from(mem_read, &m, "mem", 0);
	const char *s;
	size_t n;
	CHECK(!strcmp(llr_lines_name(l), "mem"));
	CHECK(llr_lines_next(l, &s, &n, &e) == 1 && llr_lines_lineno(l) == 1);
	CHECK(llr_lines_next(l, &s, &n, &e) == 1 && llr_lines_lineno(l) == 2 && !strcmp(s, "b"));
	CHECK(llr_lines_next(l, &s, &n, &e) == 1 && llr_lines_lineno(l) == 3 && n == 1 && !strcmp(s, "c"));
	CHECK(llr_lines_next(l, &s, &n, &e) == 0);
	CHECK(llr_lines_next(l, &s, &n, &e) == 0);
	llr_lines_close(l);
	llr_lines_close(NULL);
}

static void test_lines_invalid(void)
{
	char out[256];
	llr_err e = {0};
	const char *d = "ok\nfine \xC3\xA9\nbad \xFF here\nafter\n";
	CHECK(collect(d, strlen(d), 0, 0, out, sizeof out, &e) == LLR_EUTF8);
	CHECK(e.code == LLR_EUTF8);
	CHECK(!strncmp(e.msg, "mem:3: invalid UTF-8", 20));
	CHECK(strstr(e.msg, "0xFF") && strstr(e.msg, "column 5"));
	CHECK(!strcmp(out, "ok|fine \xC3\xA9|"));

	/* overlong, surrogate, too large, NUL: each an error on its line */
	const char *bad[] = {"x\xC0\xAFy", "x\xED\xA0\x80y", "x\xF4\x90\x80\x80y", "x\xE0\x80\xAFy", "caf\xC3"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char buf[64];
		int n = snprintf(buf, sizeof buf, "good\n%s\n", bad[i]);
		memset(&e, 0, sizeof e);
		CHECK(collect(buf, (size_t)n, 0, 0, out, sizeof out, &e) == LLR_EUTF8);
		CHECK(!strncmp(e.msg, "mem:2: invalid UTF-8", 20));
	}
	memset(&e, 0, sizeof e);
	CHECK(collect("a\nb\0c\n", 6, 0, 0, out, sizeof out, &e) == LLR_EUTF8);
	CHECK(!strncmp(e.msg, "mem:2: invalid UTF-8", 20) && strstr(e.msg, "NUL"));

	/* errors are sticky */
	memsrc m = {"\xFF\nok\n", 5, 0, 0};
	llr_lines *l = llr_lines_from(mem_read, &m, "mem", 0);
	const char *s;
	size_t n;
	CHECK(llr_lines_next(l, &s, &n, &e) == LLR_EUTF8);
	memset(&e, 0, sizeof e);
	CHECK(llr_lines_next(l, &s, &n, &e) == LLR_EUTF8 && e.code == LLR_EUTF8);
	llr_lines_close(l);

	/* NO_VALIDATE hands the bytes over as they are */
	CHECK(collect("b\0c\xFF\n", 5, 0, LLR_LINES_NO_VALIDATE, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, "b0c\xFF|"));
}

static void test_lines_replace(void)
{
	llr_err e = {0};
	/* one U+FFFD per maximal invalid subpart (Unicode 3.9, U+FFFD
	 * substitution of maximal subparts) */
	static const char d[] = "a\xFF"
	                        "b\xE0\x80"
	                        "c\xE2\x82"
	                        "d\xF0\x9F\x98"
	                        "\nz\0z\xED\xA0\x80\n";
	size_t dn = sizeof d - 1;
	memsrc m = {d, dn, 0, 3};
	llr_lines *l = llr_lines_from(mem_read, &m, "mem", LLR_LINES_REPLACE_INVALID);
	const char *s;
	size_t n;
	CHECK(llr_lines_next(l, &s, &n, &e) == 1);
	const char *want1 = "a\xEF\xBF\xBD"
	                    "b\xEF\xBF\xBD\xEF\xBF\xBD"
	                    "c\xEF\xBF\xBD"
	                    "d\xEF\xBF\xBD";
	CHECK(n == strlen(want1) && !strcmp(s, want1));
	CHECK(llr_lines_replaced(l) == 5);
	CHECK(llr_lines_next(l, &s, &n, &e) == 1);
	const char *want2 = "z\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD";
	CHECK(n == strlen(want2) && !strcmp(s, want2));
	CHECK(llr_lines_replaced(l) == 9);
	CHECK(llr_utf8_valid_prefix(s, n) == n);
	CHECK(llr_lines_next(l, &s, &n, &e) == 0);
	llr_lines_close(l);
}

/* Lines are checked in runs across the buffer (lines.c), so a line's
 * result must not depend on its neighbours or on how the bytes arrive:
 * random text of ASCII runs, valid and invalid UTF-8, NULs, "\r" and
 * "\n", read in pieces of 1 to 64 bytes, strict and replacing, against
 * each of its lines read on its own. */
static void test_lines_runs(void)
{
	static const char *piece[] = {"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ!", " ", "\n", "\n", "\r", "\xC3\xA9",
	                              "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xFF", "\x80", "\xE2\x82", "\xED\xA0\x80", "\0"};
	static const size_t steps[] = {0, 1, 3, 7, 64};
	uint64_t st = 2026;
	int bad = 0;
	for (int rep = 0; rep < 300 && bad < 3; rep++) {
		char data[4096], out[16384], want[16384], one[4096];
		size_t n = 0;
		int rare = rep % 3; /* 0: no invalid bytes; else 1 in 20 or 1 in 4 pieces */
		while (n + 64 < sizeof data && n < 200 + (size_t)rep * 10) {
			st = st * 6364136223846793005ull + 1442695040888963407ull;
			unsigned k = (unsigned)(st >> 33) % 100;
			/* 60% ASCII runs, 10% spaces, 10% line ends, 10% UTF-8, 10% invalid */
			static const unsigned char pick[10] = {0, 0, 0, 0, 0, 0, 1, 2, 5, 8};
			size_t i = pick[k / 10] + (k / 10 >= 7 ? k % (k / 10 == 9 ? 5 : 3) : 0);
			if (i >= 8 && (!rare || (rare == 1 && k % 5)))
				i = 0;
			size_t len = i == 0 ? 1 + (st >> 45) % 63 : i == 12 ? 1
			                                                    : strlen(piece[i]);
			memcpy(data + n, piece[i] + (i == 0 ? (st >> 20) % (64 - len) : 0), len);
			n += len;
		}
		for (int flags = 0; flags <= LLR_LINES_REPLACE_INVALID; flags += LLR_LINES_REPLACE_INVALID) {
			/* the reference: each line on its own */
			size_t w = 0, a = 0, line = 0;
			int want_rc = 0;
			char want_msg[256] = "";
			want[0] = 0;
			while (a < n && !want_rc) {
				const char *nl = memchr(data + a, '\n', n - a);
				size_t b = nl ? (size_t)(nl - data) + 1 : n;
				llr_err e1 = {0};
				line++;
				int rc = collect(data + a, b - a, 0, flags, one, sizeof one, &e1);
				if (rc < 0) {
					want_rc = rc;
					snprintf(want_msg, sizeof want_msg, "mem:%zu:%s", line, strchr(e1.msg + 4, ':') + 1);
				} else if (w + strlen(one) < sizeof want) {
					memcpy(want + w, one, strlen(one) + 1);
					w += strlen(one);
				}
				a = b;
			}
			for (size_t si = 0; si < sizeof steps / sizeof *steps; si++) {
				llr_err e = {0};
				int rc = collect(data, n, steps[si], flags, out, sizeof out, &e);
				if (rc != want_rc || strcmp(out, want) || (rc && strcmp(e.msg, want_msg))) {
					printf("#   rep %d flags %d step %zu: rc %d/%d '%s' / '%s'\n", rep, flags, steps[si], rc, want_rc, e.msg, want_msg);
					bad++;
				}
			}
		}
	}
	CHECK(bad == 0);
}

/* A source of `len` bytes 'a', then "\r\n", then `len2` bytes 'b'. */
typedef struct gensrc {
	size_t len, len2, pos;
} gensrc;

static ssize_t gen_read(void *src, void *buf, size_t n, llr_err *err)
{
	gensrc *g = src;
	size_t total = g->len + 2 + g->len2, k = 0;
	char *p = buf;
	while (k < n && g->pos < total) {
		size_t i = g->pos;
		if (i < g->len) {
			size_t run = g->len - i < n - k ? g->len - i : n - k;
			memset(p + k, 'a', run);
			k += run;
			g->pos += run;
			continue;
		}
		p[k++] = i == g->len ? '\r' : i == g->len + 1 ? '\n'
		                                              : 'b';
		g->pos++;
	}
	return (ssize_t)k;
}

static void test_lines_long(void)
{
	/* exactly LLR_MAX_LINE bytes is a line; one more is LLR_ERANGE */
	gensrc g = {LLR_MAX_LINE, LLR_MAX_LINE + 1, 0};
	llr_lines *l = llr_lines_from(gen_read, &g, "gen", 0);
	const char *s;
	size_t n;
	llr_err e = {0};
	CHECK(llr_lines_next(l, &s, &n, &e) == 1);
	CHECK(n == LLR_MAX_LINE && s[0] == 'a' && s[n - 1] == 'a' && s[n] == 0);
	CHECK(llr_lines_next(l, &s, &n, &e) == LLR_ERANGE);
	CHECK(!strcmp(e.msg, "gen:2: line longer than 64 MiB"));
	llr_lines_close(l);

	/* the limit also holds when the long line ends in "\r\n" */
	gensrc g2 = {LLR_MAX_LINE + 1, 0, 0};
	l = llr_lines_from(gen_read, &g2, "gen", 0);
	memset(&e, 0, sizeof e);
	CHECK(llr_lines_next(l, &s, &n, &e) == LLR_ERANGE);
	CHECK(!strcmp(e.msg, "gen:1: line longer than 64 MiB"));
	llr_lines_close(l);
}

/* Lines of a file through llr_lines_open joined with '|'. */
static int file_lines(const char *path, char *out, size_t outsz, llr_err *e)
{
	llr_lines *l = llr_lines_open(path, 0, e);
	if (!l)
		return e->code;
	const char *s;
	size_t len, o = 0;
	int r;
	out[0] = 0;
	while ((r = llr_lines_next(l, &s, &len, e)) > 0) {
		if (o + len + 2 >= outsz)
			continue;
		memcpy(out + o, s, len);
		o += len;
		out[o++] = '|';
		out[o] = 0;
	}
	llr_lines_close(l);
	return r;
}

static void test_input_compressed(void)
{
	const char *text = "premi\xC3\xA8re ligne\r\nsecond line\n\nlast without newline";
	const char *want = "premi\xC3\xA8re ligne|second line||last without newline|";
	const char *plain = tpath("text.txt");
	write_file(plain, text, strlen(text));
	char out[512];
	llr_err e = {0};
	CHECK(file_lines(plain, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, want));

	const char *tools[][2] = {{"gzip", "gz"}, {"bzip2", "bz2"}, {"xz", "xz"}, {"zstd", "zst"}};
	for (size_t i = 0; i < 4; i++) {
		if (!have(tools[i][0])) {
			printf("# %s not installed: its case skipped\n", tools[i][0]);
			continue;
		}
		char cmd[2048], name[64];
		snprintf(name, sizeof name, "text.txt.%s", tools[i][1]);
		const char *cp = tpath(name);
		snprintf(cmd, sizeof cmd, "%s -c < '%s' > '%s' 2>/dev/null", tools[i][0], plain, cp);
		CHECK(system(cmd) == 0);
		memset(&e, 0, sizeof e);
		CHECK(file_lines(cp, out, sizeof out, &e) == 0);
		CHECK(!strcmp(out, want));
		/* and byte by byte through llr_input */
		llr_input *in = llr_input_open(cp, &e);
		CHECK(in != NULL);
		if (in) {
			CHECK(!strcmp(llr_input_name(in), cp));
			char buf[512];
			size_t got = 0;
			ssize_t r;
			while ((r = llr_input_read(in, buf + got, 7, &e)) > 0)
				got += (size_t)r;
			CHECK(r == 0 && got == strlen(text) && !memcmp(buf, text, got));
			llr_input_close(in);
		}
	}

	/* a truncated gzip stream is an error naming the file */
	if (have("gzip")) {
		const char *big = tpath("big.txt"), *gz = tpath("big.txt.gz"), *cut = tpath("cut.gz");
		FILE *f = fopen(big, "w");
		for (int i = 0; i < 20000; i++)
			fprintf(f, "line %d of a text that compresses %d\n", i, i * 7919 % 10007);
		fclose(f);
		char cmd[2048];
		snprintf(cmd, sizeof cmd, "gzip -c < '%s' > '%s' && head -c 20000 '%s' > '%s'", big, gz, gz, cut);
		CHECK(system(cmd) == 0);
		memset(&e, 0, sizeof e);
		CHECK(file_lines(cut, out, sizeof out, &e) == LLR_ETRUNC);
		CHECK(!strncmp(e.msg, cut, strlen(cut)) && strstr(e.msg, "truncated"));
	}

	/* an empty file has no lines; a missing one is an error */
	const char *empty = tpath("empty.txt");
	write_file(empty, "", 0);
	CHECK(file_lines(empty, out, sizeof out, &e) == 0 && out[0] == 0);
	const char *missing = tpath("missing.txt");
	memset(&e, 0, sizeof e);
	CHECK(llr_lines_open(missing, 0, &e) == NULL);
	CHECK(e.code == LLR_EIO && strstr(e.msg, "missing.txt: No such file or directory"));
	/* invalid UTF-8 in a compressed file names the file and line */
	if (have("gzip")) {
		const char *bad = tpath("bad.txt");
		write_file(bad, "a\nb\n\xC0\x80\n", 7);
		sh("gzip -f '%s'", bad);
		memset(&e, 0, sizeof e);
		CHECK(file_lines(tpath("bad.txt.gz"), out, sizeof out, &e) == LLR_EUTF8);
		CHECK(strstr(e.msg, "bad.txt.gz:3: invalid UTF-8") != NULL);
	}
}

/* Members of an archive as "name=content;" (content up to 64 bytes). */
static int archive_members(const char *path, char *out, size_t outsz, llr_err *e)
{
	llr_archive *a = llr_archive_open(path, e);
	if (!a)
		return e->code;
	const char *name;
	int64_t size;
	int r;
	size_t o = 0;
	out[0] = 0;
	while ((r = llr_archive_next(a, &name, &size, e)) > 0) {
		char buf[65];
		ssize_t k, got = 0;
		while ((k = llr_archive_read(a, buf + got, (size_t)(64 - got), e)) > 0 && got < 64)
			got += k;
		if (k < 0) {
			r = (int)k;
			break;
		}
		buf[got] = 0;
		o += (size_t)snprintf(out + o, outsz - o, "%s=%s;", name, buf);
		if (size >= 0 && size != got)
			o += (size_t)snprintf(out + o, outsz - o, "(size %lld)", (long long)size);
	}
	llr_archive_close(a);
	return r;
}

/* Sorted ';'-separated items, for formats whose member order varies. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_items(char *s)
{
	char *items[32], copy[1024];
	int n = 0;
	snprintf(copy, sizeof copy, "%s", s);
	for (char *t = strtok(copy, ";"); t && n < 32; t = strtok(NULL, ";"))
		items[n++] = t;
	qsort(items, (size_t)n, sizeof *items, cmp_str);
	s[0] = 0;
	for (int i = 0; i < n; i++)
		strcat(strcat(s, items[i]), ";");
}

static void test_archive(void)
{
	char dir[600];
	snprintf(dir, sizeof dir, "%s", tpath("docs"));
	char cmd[4096], out[1024];
	llr_err e = {0};
	snprintf(cmd, sizeof cmd,
	         "mkdir -p '%s/sub' && cd '%s' && printf 'first doc\\n' > a.txt && printf 'second\\n' > sub/b.txt && "
	         "ln -sf a.txt link.txt && tar cf ../docs.tar a.txt sub link.txt && tar czf ../docs.tgz a.txt sub link.txt",
	         dir, dir);
	CHECK(system(cmd) == 0);
	const char *want = "a.txt=first doc\n;sub/b.txt=second\n;";
	CHECK(archive_members(tpath("docs.tar"), out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, want));
	CHECK(archive_members(tpath("docs.tgz"), out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, want));
	if (have("zip")) {
		snprintf(cmd, sizeof cmd, "cd '%s' && zip -qry ../docs.zip a.txt sub link.txt", dir);
		CHECK(system(cmd) == 0);
		memset(&e, 0, sizeof e);
		CHECK(archive_members(tpath("docs.zip"), out, sizeof out, &e) == 0);
		sort_items(out);
		CHECK(!strcmp(out, want));
	} else {
		printf("# zip not installed: zip case skipped\n");
	}
	if (have("cpio")) {
		snprintf(cmd, sizeof cmd, "cd '%s' && printf 'a.txt\\nsub\\nsub/b.txt\\nlink.txt\\n' | cpio -o -H newc 2>/dev/null | xz > ../docs.cpio.xz", dir);
		CHECK(system(cmd) == 0);
		CHECK(archive_members(tpath("docs.cpio.xz"), out, sizeof out, &e) == 0);
		CHECK(!strcmp(out, want));
	}
	/* Debian's deterministic `ar rc` writes members with no file-type bits */
	snprintf(cmd, sizeof cmd, "cd '%s' && cp sub/b.txt b.txt && rm -f ../docs.a && ar rc ../docs.a a.txt b.txt 2>/dev/null", dir);
	CHECK(system(cmd) == 0);
	memset(&e, 0, sizeof e);
	CHECK(archive_members(tpath("docs.a"), out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, "a.txt=first doc\n;b.txt=second\n;"));

	/* not an archive: one document named after the file, compressed or not */
	const char *txt = tpath("plain.txt");
	write_file(txt, "just text\nwith key=value lines\n", 31);
	char w2[1200];
	snprintf(w2, sizeof w2, "%s=just text\nwith key=value lines\n;", txt);
	CHECK(archive_members(txt, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, w2));
	/* text that mtree's bidder would take */
	const char *mt = tpath("mtree.txt");
	write_file(mt, "#mtree\n. type=dir\n", 18);
	snprintf(w2, sizeof w2, "%s=#mtree\n. type=dir\n;", mt);
	CHECK(archive_members(mt, out, sizeof out, &e) == 0);
	CHECK(!strcmp(out, w2));
	if (have("gzip")) {
		sh("gzip -kf '%s'", txt);
		char gz[1100];
		snprintf(gz, sizeof gz, "%s.gz", txt);
		snprintf(w2, sizeof w2, "%s=just text\nwith key=value lines\n;", gz);
		CHECK(archive_members(gz, out, sizeof out, &e) == 0);
		CHECK(!strcmp(out, w2));
	}
	/* an empty file has no documents */
	const char *empty = tpath("empty.bin");
	write_file(empty, "", 0);
	CHECK(archive_members(empty, out, sizeof out, &e) == 0 && out[0] == 0);
	/* a missing one is an error */
	memset(&e, 0, sizeof e);
	CHECK(llr_archive_open(tpath("nope.tar"), &e) == NULL && e.code == LLR_EIO);
	CHECK(strstr(e.msg, "nope.tar: No such file or directory") != NULL);

	/* truncated archives: an error naming the archive, never a quiet end */
	char big[1100];
	snprintf(big, sizeof big, "%s/big.txt", dir);
	FILE *f = fopen(big, "w");
	for (int i = 0; i < 3000; i++)
		fprintf(f, "sentence %d with some words %d\n", i, i * 31337 % 1009);
	fclose(f);
	snprintf(cmd, sizeof cmd, "cd '%s' && tar cf ../big.tar a.txt big.txt sub && gzip -c ../big.tar > ../big.tgz", dir);
	CHECK(system(cmd) == 0);
	const char *cuts[][2] = {{"big.tgz", "4000"}, {"big.tar", "1500"}, {"big.tar", "30000"}, {"big.tar", "700"}};
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		char src[600], dst[700];
		snprintf(src, sizeof src, "%s", tpath(cuts[i][0]));
		snprintf(dst, sizeof dst, "%s.cut%zu", src, i);
		snprintf(cmd, sizeof cmd, "head -c %s '%s' > '%s'", cuts[i][1], src, dst);
		CHECK(system(cmd) == 0);
		memset(&e, 0, sizeof e);
		int r = archive_members(dst, out, sizeof out, &e);
		CHECK(r == LLR_ETRUNC);
		CHECK(!strncmp(e.msg, dst, strlen(dst)));
		if (r != LLR_ETRUNC)
			printf("#   %s: %d %s\n", dst, r, e.msg);
	}
	/* the member is named when its data is cut */
	snprintf(cmd, sizeof cmd, "head -c 5000 '%s' > '%s.cutm'", tpath("big.tar"), tpath("big.tar"));
	CHECK(system(cmd) == 0);
	memset(&e, 0, sizeof e);
	char cutm[1100];
	snprintf(cutm, sizeof cutm, "%s.cutm", tpath("big.tar"));
	CHECK(archive_members(cutm, out, sizeof out, &e) == LLR_ETRUNC);
	CHECK(strstr(e.msg, "big.txt") != NULL);
}

/* "-" is stdin, called <stdin>; compressed input works there too. */
static void test_stdin(void)
{
	if (!have("gzip")) {
		printf("# gzip not installed: stdin case skipped\n");
		return;
	}
	const char *txt = tpath("stdin.txt");
	write_file(txt, "x\ny\n", 4);
	sh("gzip -kf '%s'", txt);
	char gz[1100];
	snprintf(gz, sizeof gz, "%s.gz", txt);
	int saved = dup(0);
	FILE *f = fopen(gz, "rb");
	CHECK(f && dup2(fileno(f), 0) == 0);
	llr_err e = {0};
	llr_lines *l = llr_lines_open("-", 0, &e);
	CHECK(l != NULL);
	if (l) {
		const char *s;
		size_t n;
		CHECK(!strcmp(llr_lines_name(l), "<stdin>"));
		CHECK(llr_lines_next(l, &s, &n, &e) == 1 && !strcmp(s, "x"));
		CHECK(llr_lines_next(l, &s, &n, &e) == 1 && !strcmp(s, "y"));
		CHECK(llr_lines_next(l, &s, &n, &e) == 0);
		llr_lines_close(l);
	}
	fclose(f);
	dup2(saved, 0);
	close(saved);
}

int main(void)
{
	PLAN(9);
	RUN(test_utf8);
	RUN(test_lines_basic);
	RUN(test_lines_invalid);
	RUN(test_lines_replace);
	RUN(test_lines_runs);
	RUN(test_lines_long);
	RUN(test_input_compressed);
	RUN(test_archive);
	RUN(test_stdin);
	DONE();
}
