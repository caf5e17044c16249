/*
 * discread.h - disc-pairs output read into token ids, for train --task
 * (train_disc.c) and score --task (score/task.c).  CLI-only.
 */
#ifndef LLR_DISCREAD_H
#define LLR_DISCREAD_H

#include "llrnn.h"

/* The examples of one task: the index of each one's first sentence (its
 * sentences follow in order) and its label.  Example i of a shard is the
 * task's example i * shard_size + shard_rank of the file. */
typedef struct dset_task {
	size_t *first;
	int32_t *label;
	size_t n, cap;
	size_t total; /* the task's examples in the file, every shard's */
} dset_task;

/* Examples of the three tasks (0 ORDER, 1 NEXT, 2 CONJ; LLR_TASK_* is
 * 1 << index), their sentences as ids (sentence i: ids[off[i]..off[i+1])). */
typedef struct dset {
	int32_t *ids;
	size_t n_ids, cap_ids;
	size_t *off;
	size_t n_sent, cap_sent;
	dset_task task[3];
	char (*conj)[32]; /* the CONJ class names (caller's table) */
	int n_conj;
	uint64_t tokens, unknown, skipped;
	int shard_rank, shard_size; /* set before dset_read; 0 and 0 or 1: all */
} dset;

/* The nine classes of disc-pairs' built-in marker tables. */
void dset_conj_builtin(char conj[][32], int *n);
/* Read a disc-pairs TSV file (compressed or not; "-" stdin): lines of the
 * tasks in the tasks mask (others are counted in skipped).  Bad lines stop
 * the tool with file:line: reason.  A CONJ class not in d->conj is added
 * when add_classes, else an error.  With d->shard_size > 1 (train
 * --distributed) only the shard's examples are kept, but every line is
 * checked and every class added, so all shards stop on the same bad line
 * and number the CONJ classes alike. */
void dset_read(dset *d, const char *path, const llr_lexicon *lex, int tasks, int add_classes);
void dset_free(dset *d);

/* Batch buffers. */
typedef struct dset_buf {
	int32_t *ids;
	size_t *off;
	int32_t *label;
	size_t cap_ids, cap_off, cap_lab;
	size_t tokens;
} dset_buf;
/* The examples idx[0..n) of task index t as a batch (pointing into b). */
void dset_batch(const dset *d, int t, const size_t *idx, size_t n, dset_buf *b, llr_senc_batch *out);
void dset_buf_free(dset_buf *b);

#endif
