/*
 * describe.c - what the encoder families (encdec, sentenc) tell
 * llr_model_describe alike: the kind, the (target) vocabulary and the
 * network sizes their meta records (family.h).
 */
#include "family/family.h"

void llr_family_describe_vocab(const llr_lexicon *lex, llr_model_info *info)
{
	info->kind = "model";
	info->vocab = (int64_t)llr_strmap_size(lex->vocab);
	info->has_unk = lex->unk_id >= 0;
}

void llr_family_describe_lex(const llr_lexicon *lex, const llr_meta *meta, const char *layers_key, llr_model_info *info)
{
	int64_t v;
	llr_family_describe_vocab(lex, info);
	if (llr_meta_get_i64(meta, "embed", &v, NULL) == LLR_OK)
		info->embed = (int)v;
	if (llr_meta_get_i64(meta, "hidden", &v, NULL) == LLR_OK)
		info->hidden = (int)v;
	if (llr_meta_get_i64(meta, layers_key, &v, NULL) == LLR_OK)
		info->layers = (int)v;
}
