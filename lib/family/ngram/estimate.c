/*
 * estimate.c - the n-gram family's side of train(1) ("N-gram models"):
 * its options (--ngram chooses it), and `train --ngram N`, which counts
 * the token files and estimates an interpolated modified Kneser-Ney
 * model (lib/ngram/), then writes it as ARPA text (.arpa, .arpa.gz and
 * the other compressed suffixes, or standard output) or as the binary
 * tensor archive (any other name) in the trie or the probing form
 * (--format); `train --convert MODEL` rewrites a model instead of
 * estimating one.  Not a gradient-step family: no job for the training
 * driver.
 */
#include "family/family.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define SECTION "N-gram models (train --ngram N):"
static const llr_train_opt opts[] = {
	{"ngram", 0, LLR_TOPT_INT, LLR_TOPT_SELECTS, 1, LLR_NGRAM_MAX_ORDER, .arg = "N",
	 .help = "estimate a Kneser-Ney n-gram model of order N instead", .section = SECTION},
	{"prune", 0, LLR_TOPT_TEXT, 0, .arg = "n,n,...", .help = "with --ngram: drop order k's n-grams counted at most n_k times",
	 .msg = "--prune, --memory, --temp-dir, --discount-fallback and --format need --ngram", .section = SECTION},
	{"discount-fallback", 0, LLR_TOPT_FLAG, 0, .help = "with --ngram: fixed discounts when the counts give none",
	 .msg = "--prune, --memory, --temp-dir, --discount-fallback and --format need --ngram", .section = SECTION},
	{"verbose", 'v', LLR_TOPT_FLAG, 0, .help = "with --ngram: say whether the estimation runs in memory or on disk, and why",
	 .section = SECTION},
	{"memory", 0, LLR_TOPT_SIZE, 0, 1 << 20, .dflt = "1G", .arg = "size",
	 .help = "with --ngram: the most memory to hold, the program included (default 1G)",
	 .bad = "'%s' is not a size of 1M or more (a number with K, M or G)",
	 .msg = "--prune, --memory, --temp-dir, --discount-fallback and --format need --ngram", .section = SECTION},
	{"temp-dir", 0, LLR_TOPT_PATH, 0, .arg = "dir",
	 .help = "with --ngram: where counts beyond --memory go (default $TMPDIR, else /tmp)",
	 .msg = "--prune, --memory, --temp-dir, --discount-fallback and --format need --ngram", .section = SECTION},
	{"threads", 0, LLR_TOPT_INT, 0, 1, 64, .arg = "n",
	 .help = "with --ngram: threads of counting and estimation (default: the cores; the same output)", .section = SECTION},
	{"format", 0, LLR_TOPT_CHOICE, 0, .choices = "trie|probing", .arg = "trie|probing",
	 .help = "with --ngram: the binary form written (default trie)", .bad = "must be trie or probing, not '%s'",
	 .msg = "--prune, --memory, --temp-dir, --discount-fallback and --format need --ngram", .section = SECTION},
	{"convert", 0, LLR_TOPT_PATH, LLR_TOPT_SELECTS, .arg = "MODEL",
	 .help = "rewrite the n-gram model MODEL (ARPA or trie) as -o says", .section = SECTION},
	{"distributed", 0, LLR_TOPT_REFUSED,
	 .msg = "--distributed: n-gram estimation (--ngram) counts, it does not train by gradient steps; it runs in one process"},
	{0},
};

/* "0,0,1" -> thresholds for orders 1, 2, 3... (the last one repeats). */
static int parse_prune(const char *s, llr_kn_opts *kn, int order, llr_err *err)
{
	int n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		if (n == LLR_NGRAM_MAX_ORDER || *p < '0' || *p > '9')
			return llr_train_usage_err(err, "--prune: '%s' is not a list of counts such as 0,0,1", s);
		kn->prune[n++] = strtoull(p, &end, 10);
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return llr_train_usage_err(err, "--prune: '%s' is not a list of counts such as 0,0,1", s);
	}
	for (int k = n; k > 0 && k < LLR_NGRAM_MAX_ORDER; k++)
		kn->prune[k] = kn->prune[n - 1];
	if (kn->prune[0] > 0)
		return llr_train_usage_err(err, "--prune: 1-grams cannot be pruned (the first count must be 0)");
	for (int k = 1; k < order; k++)
		if (kn->prune[k] < kn->prune[k - 1])
			return llr_train_usage_err(err, "--prune: the counts must not decrease with the order");
	return LLR_OK;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* name.arpa, or name.arpa.gz (.bz2, .xz, .zst): ARPA text. */
static int is_arpa_name(const char *path)
{
	static const char *const suffixes[] = {".arpa", ".arpa.gz", ".arpa.bz2", ".arpa.xz", ".arpa.zst"};
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
		if (ends_with(path, suffixes[i]))
			return 1;
	return 0;
}

/* Does -o name ARPA text (none, "-", or an .arpa name)? */
static int arpa_output(const llr_train_args *a)
{
	const char *out = llr_train_args_str(a, "o");
	return !out || !strcmp(out, "-") || is_arpa_name(out);
}

/* a line of a training file to the counter (llr_lines_each) */
static int count_line(void *c, const char *line, size_t len, llr_err *err)
{
	return llr_ngram_count_line(c, line, len, err);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int write_model(const llr_train_args *a, const llr_ngram *m, llr_err *err);

static void report(const llr_train_args *a, int order, const int64_t *count, const double *D, uint64_t tokens, size_t bytes, double secs)
{
	llr_train_note(a, "%d-gram model from %llu tokens (words + </s>) in %.2fs, counts held in %.1f MiB", order,
	               (unsigned long long)tokens, secs, (double)bytes / (1 << 20));
	for (int n = 1; n <= order; n++)
		llr_train_note(a, "  %d-grams %lld, discounts D1 %.4f D2 %.4f D3+ %.4f", n, (long long)count[n - 1],
		               D[(n - 1) * 3], D[(n - 1) * 3 + 1], D[(n - 1) * 3 + 2]);
}

/* The bytes this process holds resident now (/proc/self/statm on Linux;
 * 0 where it cannot be read): its code, libraries and stacks, before
 * counting, all within --memory. */
static size_t resident_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	unsigned long long size = 0, res = 0;
	int ok = f && fscanf(f, "%llu %llu", &size, &res) == 2;
	if (f)
		fclose(f);
	long page = sysconf(_SC_PAGESIZE);
	return ok && page > 0 ? (size_t)res * (size_t)page : 0;
}

/* The temporary folder (--temp-dir, else $TMPDIR, else /tmp), the
 * process's resident bytes taken off --memory, and the sorting knob
 * LLRNN_NGRAM_SORT=RECORDS,FANIN (train(1), ENVIRONMENT). */
static int disk_setup(const llr_train_args *a, llr_ngram_disk *d, llr_err *err)
{
	memset(d, 0, sizeof *d);
	d->dir = llr_train_args_str(a, "temp-dir");
	if (d->dir) {
		struct stat sb;
		if (stat(d->dir, &sb) != 0)
			return llr_err_set(err, LLR_EIO, "%s: %s (--temp-dir)", d->dir, strerror(errno));
		if (!S_ISDIR(sb.st_mode) || access(d->dir, W_OK | X_OK) != 0)
			return llr_err_set(err, LLR_EIO, "%s: not a folder this process can write in (--temp-dir)", d->dir);
	} else {
		d->dir = getenv("TMPDIR");
		if (!d->dir || !*d->dir)
			d->dir = "/tmp";
	}
	d->threads = (int)llr_train_args_int(a, "threads");
	if (!llr_train_args_given(a, "threads")) { /* the cores, at most 64 */
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		d->threads = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
	}
	d->base = resident_bytes();
	const char *k = getenv("LLRNN_NGRAM_SORT");
	if (k && *k) {
		char *end;
		unsigned long long run = strtoull(k, &end, 10), fan = 0;
		if (*end == ',')
			fan = strtoull(end + 1, &end, 10);
		if (*end || run == 0 || fan == 1 || fan > 4096)
			return llr_err_set(err, LLR_EINVAL, "LLRNN_NGRAM_SORT: '%s' is not RECORDS[,FANIN] (RECORDS >= 1, FANIN 2 to 4096)", k);
		d->run_records = (size_t)run;
		d->fanin = (int)fan;
	}
	return LLR_OK;
}

/* Estimate the counts of c, written to -o: in memory, or on disk (ARPA
 * or the trie form) when they went there or when estimating them in
 * memory would pass --memory (the probing form is built in memory: it is
 * estimated in memory all the same, and refused when the counts went to
 * disk). */
static int estimate_counts(const llr_train_args *a, llr_ngram_counter *c, size_t base, const llr_kn_opts *kn, int64_t *count, double *D,
                           llr_err *err)
{
	const char *out = llr_train_args_str(a, "o"), *form = llr_train_args_str(a, "format");
	int arpa = arpa_output(a), verbose = (int)llr_train_args_int(a, "verbose");
	int probing = !arpa && form && !strcmp(form, "probing");
	size_t budget = (size_t)llr_train_args_int(a, "memory");
	int spilled = llr_ngram_counter_spilled(c), disk = spilled;
	if (!disk) {
		size_t need = llr_ngram_estimate_bytes(c, kn);
		disk = !probing && need + base > budget;
		if (verbose)
			llr_train_note(a, "estimating in memory takes at most %.1f MiB, %s --memory (%.1f MiB): %s", (double)(need + base) / (1 << 20),
			               need + base > budget ? "more than" : "within", (double)budget / (1 << 20),
			               disk ? "estimating on disk" : need + base > budget ? "in memory all the same, for the probing form" : "estimating in memory");
	} else if (verbose) {
		llr_train_note(a, "the counts outgrew --memory: estimating on disk");
	}
	if (disk) {
		if (probing)
			return llr_err_set(err, LLR_ERANGE,
			                   "%s: the counts outgrew --memory and were sorted on disk, where the probing form cannot be built (it is a hash table "
			                   "in memory): write the trie form (--format trie) or ARPA, then train --convert FILE --format probing -o %s",
			                   out, out);
		llr_ngram_disk_stats st;
		int rc = (arpa ? llr_ngram_estimate_arpa : llr_ngram_estimate_trie)(c, kn, out, D, &st, err);
		if (rc == LLR_OK && !llr_train_args_int(a, "quiet"))
			llr_train_note(a, "counts %ssorted on disk: %llu runs, %llu merge passes, at most %.1f MiB of temporary files",
			               spilled ? "beyond --memory " : "", (unsigned long long)st.runs, (unsigned long long)st.passes, (double)st.disk / (1 << 20));
		memcpy(count, st.count, sizeof st.count);
		return rc;
	}
	llr_ngram *m = NULL;
	int rc = llr_ngram_estimate(c, kn, &m, D, err);
	if (rc == LLR_OK)
		rc = write_model(a, m, err);
	for (int n = 1; rc == LLR_OK && n <= llr_ngram_order(m); n++)
		count[n - 1] = llr_ngram_count(m, n);
	llr_ngram_free(m);
	return rc;
}

/* Count the token files (none: stdin), estimate the model and write it. */
static int count_and_estimate(const llr_train_args *a, const llr_kn_opts *kn, int order, int64_t *count, double *D,
                              uint64_t *tokens, size_t *bytes, llr_err *err)
{
	llr_ngram_disk disk;
	int rc = disk_setup(a, &disk, err);
	if (rc != LLR_OK)
		return rc;
	llr_ngram_counter *c = llr_ngram_counter_new(order, (size_t)llr_train_args_int(a, "memory"), err);
	if (!c)
		return err->code ? err->code : LLR_ENOMEM;
	int n = llr_train_args_noperands(a);
	if (llr_train_args_int(a, "verbose"))
		llr_train_note(a, "the program holds %.1f MiB before counting, taken off --memory (%.1f MiB)", (double)disk.base / (1 << 20),
		               (double)llr_train_args_int(a, "memory") / (1 << 20));
	rc = llr_ngram_counter_spill(c, &disk, err);
	if (rc == LLR_OK && n == 0)
		rc = llr_lines_each("-", count_line, c, err);
	for (int i = 0; rc == LLR_OK && i < n; i++)
		rc = llr_lines_each(llr_train_args_operand(a, i), count_line, c, err);
	*tokens = llr_ngram_counter_tokens(c);
	if (rc == LLR_OK)
		rc = llr_ngram_counter_end(c, err);
	if (rc == LLR_OK)
		rc = estimate_counts(a, c, disk.base, kn, count, D, err);
	*bytes = llr_ngram_counter_bytes(c); /* its last merge is in the estimate */
	llr_ngram_counter_free(c);
	return rc;
}

/* --format names a binary form: refused with an ARPA output, before any
 * counting. */
static int check_form(const llr_train_args *a, llr_err *err)
{
	if (arpa_output(a) && llr_train_args_given(a, "format"))
		return llr_train_usage_err(err, "--format: for a binary output (-o FILE not ending in .arpa)");
	return LLR_OK;
}

/* m to -o: ARPA text by its name, else the --format binary. */
static int write_model(const llr_train_args *a, const llr_ngram *m, llr_err *err)
{
	const char *out = llr_train_args_str(a, "o"), *form = llr_train_args_str(a, "format");
	int arpa = arpa_output(a);
	if (arpa)
		return llr_ngram_write_arpa(m, out, err);
	return form && !strcmp(form, "probing") ? llr_ngram_save_probing(m, out, err) : llr_ngram_save(m, out, err);
}

/* train --convert MODEL: the model read (ARPA or the trie form), written. */
static int convert(const llr_train_args *a, llr_err *err)
{
	const char *in = llr_train_args_str(a, "convert"), *out = llr_train_args_str(a, "o");
	if (llr_train_args_noperands(a))
		return llr_train_usage_err(err, "--convert reads MODEL: no file operands");
	if (llr_train_args_given(a, "prune") || llr_train_args_given(a, "memory") || llr_train_args_given(a, "temp-dir") ||
	    llr_train_args_given(a, "discount-fallback"))
		return llr_train_usage_err(err, "--convert: --prune, --memory, --temp-dir and --discount-fallback are for estimation");
	if (!out)
		return llr_train_usage_err(err, "--convert: -o FILE is required");
	if (check_form(a, err) < 0)
		return LLR_EUSAGE;
	double t0 = now();
	llr_ngram *m;
	int rc = llr_ngram_load(in, &m, err);
	if (rc < 0)
		return rc;
	int order = (int)llr_train_args_int(a, "ngram");
	if (llr_train_args_given(a, "ngram") && order != llr_ngram_order(m))
		rc = llr_err_set(err, LLR_EINVAL, "%s: a %d-gram model, not %d (--ngram)", in, llr_ngram_order(m), order);
	if (rc == LLR_OK)
		rc = write_model(a, m, err);
	if (rc == LLR_OK && !llr_train_args_int(a, "quiet"))
		llr_train_note(a, "%s: %d-gram model written to %s in %.2fs", in, llr_ngram_order(m), out, now() - t0);
	llr_ngram_free(m);
	return rc;
}

static int estimate(llr_train_args *a, llr_err *err)
{
	if (llr_train_args_given(a, "convert"))
		return convert(a, err);
	if (check_form(a, err) < 0)
		return LLR_EUSAGE;
	int order = (int)llr_train_args_int(a, "ngram");
	llr_kn_opts kn;
	llr_kn_opts_init(&kn);
	kn.discount_fallback = (int)llr_train_args_int(a, "discount-fallback");
	const char *prune = llr_train_args_str(a, "prune");
	if (prune && parse_prune(prune, &kn, order, err) < 0)
		return LLR_EUSAGE;
#ifdef __GLIBC__
	/* Counting and estimation free large arrays as they go; a fixed mmap
	 * threshold keeps glibc from raising it and serving the later arrays
	 * from the heap, where freed pages stay resident. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
	double t0 = now();
	double D[LLR_NGRAM_MAX_ORDER * 3];
	int64_t count[LLR_NGRAM_MAX_ORDER];
	uint64_t tokens;
	size_t bytes;
	int rc = count_and_estimate(a, &kn, order, count, D, &tokens, &bytes, err);
	if (rc == LLR_OK && !llr_train_args_int(a, "quiet"))
		report(a, order, count, D, tokens, bytes, now() - t0);
	return rc;
}

const llr_trainer llr_ngram_trainer = {
	.opts = opts,
	.synopsis = "train --ngram N [-qv] [-o FILE] [--prune N,N,...] [--discount-fallback]\n"
	            "             [--memory SIZE] [--temp-dir DIR] [--threads N] [--format trie|probing]\n"
	            "             [file ...]\n"
	            "       train --convert MODEL [-q] -o FILE [--format trie|probing]\n",
	.usage = "usage: train --ngram N [-qv] [-o FILE] [--prune N,N,...] [--discount-fallback]\n"
	         "             [--memory SIZE] [--temp-dir DIR] [--threads N] [--format trie|probing]\n"
	         "             [file ...]\n"
	         "       train --convert MODEL [-q] -o FILE [--format trie|probing]\n",
	.foreign = "not for n-gram estimation (--ngram)",
	.estimate = estimate,
};
