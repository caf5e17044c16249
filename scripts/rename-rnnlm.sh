#!/bin/sh
# rename-rnnlm.sh - the pure rename of issue 45's first step: the LSTM LM
# model file's struct llr_model and its functions become llr_rnnlm and
# llr_rnnlm_*, which frees the name llr_model for the one model interface.
# Idempotent; run from the top of a checkout (e.g. on a branch that still
# uses the old names, after a rebase).
set -eu
files=$(grep -rlE '\bllr_model(_(load_state|load|free|save|fits|config|net_new|new)\b|_\*|\b)' \
	lib tools tests bench man 2>/dev/null || true)
[ -n "$files" ] || exit 0
# shellcheck disable=SC2086
sed -i -E \
	-e 's/\bllr_model_(load_state|load|free|save|fits|config|net_new|new)\b/llr_rnnlm_\1/g' \
	-e 's/\bllr_model_\*/llr_rnnlm_*/g' \
	-e 's/\bllr_model\b/llr_rnnlm/g' \
	$files
