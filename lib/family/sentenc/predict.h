/*
 * predict.h - a sentence encoder's predictions of labelled examples
 * (predict.c), the family's llr_model_predict.  Private to
 * lib/family/sentenc.
 */
#ifndef LLR_SENTENC_PREDICT_H
#define LLR_SENTENC_PREDICT_H

#include "internal.h"

/* llr_model_predict for sentence encoder m, loaded from model_path. */
int llr_sentenc_predict(llr_senc_model *m, const char *model_path, unsigned tasks, const char *path, size_t batch,
                        int (*each)(void *ctx, const llr_prediction *p), void *ctx, llr_err *err);

#endif
