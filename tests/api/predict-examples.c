/*
 * predict-examples MODEL TASKS FILE - a program that uses libllrnn only
 * through the one model interface (tests/53-model-embed.bats): it
 * predicts the labels of the disc-pairs examples in FILE for the tasks of
 * the LLR_TASK_* mask TASKS with llr_model_predict and prints what
 * score(1) --task prints: a line per example (task, gold, predicted) on
 * stdout, then "TASK n correct" per task on stderr.
 */
#include <stdio.h>
#include <stdlib.h>

#include "llrnn.h"

static int put(void *ctx, const llr_prediction *p)
{
	(void)ctx;
	if (p->gold)
		printf("%s\t%s\t%s\n", p->name, p->gold, p->pred);
	else
		fprintf(stderr, "%s %zu %zu\n", p->name, p->n, p->correct);
	return 0;
}

int main(int argc, char **argv)
{
	llr_model *m = NULL;
	llr_err err = {0};
	int status = 1;
	if (argc != 4)
		return fprintf(stderr, "usage: predict-examples MODEL TASKS FILE\n"), 2;
	llr_blas_set_fixed_order(1); /* as score does */
	if (llr_model_open(argv[1], NULL, &m, &err) == LLR_OK &&
	    llr_model_predict(m, (unsigned)atoi(argv[2]), argv[3], 64, put, NULL, &err) == LLR_OK)
		status = 0;
	else
		fprintf(stderr, "predict-examples: %s\n", err.msg);
	llr_model_close(m);
	return status;
}
