/*
 * fuzz_disc.c - what disc-pairs reads (lib/discourse): the input as
 * documents through the reader (the first byte picks the format, the
 * HTML unit and a small member cap; archives, nested ones, HTML through
 * libxml2) with every paragraph's ORDER, NEXT and CONJ examples built;
 * then the same bytes as a marker file and as disc-pairs output read
 * back into ids.
 */
#include "fuzz.h"

static llr_tokenizer *tok;
static llr_disc_markers *markers;
static llr_disc_tasks *tasks;
static FILE *sink;

static int paragraph(void *arg, const llr_disc_para *p, const char *doc, uint64_t index)
{
	(void)arg;
	(void)index;
	return llr_disc_tasks_paragraph(tasks, p, doc);
}

static void notice(void *arg, int error, const char *msg)
{
	(void)arg;
	(void)error;
	(void)msg;
}

static void setup(void)
{
	llr_err e = {0};
	llr_tok_opts to = {.lang = "en"};
	tok = llr_tokenizer_new(&to, &e);
	markers = tok ? llr_disc_markers_builtin("en", tok, &e) : NULL;
	sink = fopen("/dev/null", "w");
	llr_disc_opts o = {.tasks = LLR_TASK_ALL, .min_par = 8, .min_len = 1, .max_len = 50, .max_ratio = 5.0,
	                   .provenance = 1, .markers = markers, .seed = 1};
	tasks = markers && sink ? llr_disc_tasks_new(&o, sink, &e) : NULL;
	if (!tasks)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!tasks)
		setup();
	if (size == 0)
		return 0;
	int opt = data[0];
	const char *path = fuzz_file(data + 1, size - 1);
	llr_err e = {0};
	llr_disc_read_opts ro = {.format = opt & 3, .html_runs = (opt >> 2) & 1, .lower = (opt >> 3) & 1,
	                         .max_member = (opt & 16) ? 4096 : (uint64_t)1 << 24, .tok = tok,
	                         .paragraph = paragraph, .notice = notice};
	llr_disc_reader *r = llr_disc_reader_new(&ro, &e);
	llr_archive *a = r ? llr_archive_open(path, &e) : NULL;
	if (a)
		llr_disc_reader_read(r, a, &e);
	llr_archive_close(a);
	llr_disc_reader_free(r);

	llr_disc_markers_free(llr_disc_markers_load(path, tok, &e));

	llr_strmap *v = llr_strmap_new();
	if (!v)
		return 0;
	llr_strmap_add(v, "<unk>", 5);
	llr_strmap_add(v, "the", 3);
	char conj[LLR_SENC_MAX_CONJ][32];
	llr_disc_set d = {.conj = conj};
	llr_disc_conj_builtin(conj, &d.n_conj);
	if (llr_disc_set_read(&d, path, v, 0, LLR_TASK_ALL, opt & 32, &e) == LLR_OK) {
		llr_disc_batch_buf b = {0};
		llr_senc_batch batch;
		for (int t = 0; t < 3; t++)
			for (size_t i = 0; i < d.task[t].n; i++)
				llr_disc_set_batch(&d, t, &i, 1, &b, &batch);
		llr_disc_batch_buf_free(&b);
	}
	llr_disc_set_free(&d);
	llr_strmap_free(v);
	return 0;
}
