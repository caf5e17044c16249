# ud-french.mk - replicate Table 4 of Dymetman & Xiao (2016) on UD French
# with the llrnn tools only: tok -> featurize -> train -> score.
#
#   make -f pipelines/ud-french.mk DATA=../shared/data/ud-french -j2
#   make -f pipelines/ud-french.mk reference     # PyTorch reference (slow)
#                 # and llrnn's counterparts at equal settings (sec. 7)
#   make -f pipelines/ud-french.mk resume MAXTIME=1h   # continue capped runs
#   make -f pipelines/ud-french.mk headline -j2   # the headline over seeds (sec. 8)
#   make -f pipelines/ud-french.mk chars-table -j2   # character input over seeds (sec. 9)
#
# Every intermediate file is a target under $(WORK), so changing one input
# rebuilds only what depends on it, and -j2 trains two models at once.
# Results go to $(RESULTS)/ud-french.tsv, .md and the PNG plots.
# Not a benchmark (see bench/) and not a general experiment driver: the
# splits, models and hyperparameters are those of the paper's sec. 5.2.
#
# Models: in each setting, the softmax RNN and the LL-RNN with top-M
# identities plus the CoNLL-U tag unions (POS and morphological features),
# for M in $(MS):
#   paper  the replication, which uses test words: vocabulary = types of
#          train+valid+test, tags from every UD file of the splits,
#          background = unigram relative frequencies over all three
#          splits (as the paper did; <unk>, which never occurs, gets
#          UNK_MASS before renormalising)
#   clean  nothing from test (issue 47): vocabulary = types of
#          train+valid, tags from the train and valid files, background =
#          add-0.5 unigram on train; test words outside the vocabulary are
#          OOVs, scored as <unk>
# Each model's test output (score --per-token, xz) goes to
# $(RESULTS)/outputs/ud-french/, from which scripts/results-check
# recomputes the table's test column.
#
# Knobs (make VAR=value): DATA WORK RESULTS BIN MS SETTINGS EPOCHS MAXTIME
# PATIENCE EMBED HIDDEN LAYERS BATCH LR SEED INIT (train --init of the
# table's models; empty: train's default) THREADS SCORE_BATCH UNK_MASS
# PYTHON TORCH_REF UD_PREP REF_THREADS REF_EPOCHS REF_MODELS REF_INIT
# REF_OURS, HEADLINE_SEEDS HEADLINE_M for `make headline` (sec. 8), and
# CHARS_SEEDS for `make chars-seeds` and `chars-table` (sec. 9).  EPOCHS and MAXTIME (per model and invocation; `make resume`
# continues) cap training when time is short; the results then say how
# many epochs ran.  REF_EPOCHS caps the reference and llrnn's counterparts
# of it, REF_INIT (default torch: PyTorch's initial-weight distributions)
# is the counterparts' train --init, and REF_OURS (default
# $(WORK)/ref-ours-$(REF_INIT), so each init has its own folder) is where
# they are trained.  A folder is built once: after changing REF_EPOCHS,
# remove it or name another REF_OURS.

DATA ?= ../shared/data/ud-french
WORK ?= work/ud-french
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts

MS ?= 2500 10 500 1000 5000 10000
SETTINGS ?= paper clean

EPOCHS ?= 30
MAXTIME ?=
PATIENCE ?= 3
EMBED ?= 256
HIDDEN ?= 256
LAYERS ?= 2
BATCH ?= 32
LR ?= 0.001
SEED ?= 1
INIT ?=
THREADS ?= 1
SCORE_BATCH ?= 64
UNK_MASS ?= 1e-9

PYTHON ?= /usr/bin/python3
TORCH_REF ?= ../shared/bench/torch_ref.py
UD_PREP ?= ../shared/bench/ud_prep.py
REF_THREADS ?= 1
REF_EPOCHS ?= $(EPOCHS)
REF_MODELS ?= rnn ll-2500
REF_INIT ?= torch

TRAIN_SETS := fr_sequoia-ud-train fr_partut-ud-train fr_gsd-ud-dev
VALID_SETS := fr_sequoia-ud-dev fr_partut-ud-dev
TEST_SETS := fr_sequoia-ud-test fr_partut-ud-test fr_gsd-ud-test

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

# A split's files, compressed or not.
ud = $(foreach s,$(1),$(firstword $(wildcard $(DATA)/$(s).conllu.gz $(DATA)/$(s).conllu) $(DATA)/$(s).conllu.gz))
TRAIN_UD := $(call ud,$(TRAIN_SETS))
VALID_UD := $(call ud,$(VALID_SETS))
TEST_UD := $(call ud,$(TEST_SETS))
ALL_UD := $(TRAIN_UD) $(VALID_UD) $(TEST_UD)
CONLLU_OPTS := $(foreach f,$(ALL_UD),--conllu $(f))

TRAIN_OPTS = --seed $(SEED) $(MODEL_OPTS)
MODEL_OPTS = --threads $(THREADS) $(if $(INIT),--init $(INIT)) --embed $(EMBED) \
	--hidden $(HIDDEN) --layers $(LAYERS) --batch $(BATCH) --optim rmsprop \
	--lr $(LR) --patience $(PATIENCE) --epochs $(EPOCHS) \
	$(if $(MAXTIME),--max-time $(MAXTIME)) --progress 0

# Most important models first: with -j2 make starts them in this order.
LL_BASES := $(foreach m,$(MS),$(foreach s,$(SETTINGS),$(s)/ll-$(m)))
# rnn is the paper setting's RNN (also the reference's counterpart)
BASES := $(if $(filter paper,$(SETTINGS)),rnn) $(if $(filter clean,$(SETTINGS)),clean/rnn) $(LL_BASES)
ROWS := $(BASES:%=$(WORK)/%.row)
REF_OUT := $(REF_MODELS:%=$(WORK)/ref/%.out)
REF_OURS ?= $(WORK)/ref-ours-$(or $(REF_INIT),default)
REF_MS := $(patsubst ll-%,%,$(filter ll-%,$(REF_MODELS)))
REF_OURS_ROWS := $(if $(filter rnn,$(REF_MODELS)),$(REF_OURS)/rnn.row) \
	$(REF_MS:%=$(REF_OURS)/paper/ll-%.row)

.PHONY: all models reference ref-ours resume clean-work
all: $(RESULTS)/ud-french.tsv $(RESULTS)/ud-french.md \
	$(RESULTS)/ud-french-test-vs-m.png $(RESULTS)/ud-french-valid-curves.png \
	$(WORK)/logs.stamp
models: $(ROWS)

# 1. Tokens: lowercased syntactic words, one sentence per line (tok
# separates documents with an empty line; those are dropped).
$(WORK)/train.tok: $(TRAIN_UD) | $(WORK)
	$(BIN)/tok --from conllu -l $^ | sed '/^$$/d' > $@.tmp && mv $@.tmp $@
$(WORK)/valid.tok: $(VALID_UD) | $(WORK)
	$(BIN)/tok --from conllu -l $^ | sed '/^$$/d' > $@.tmp && mv $@.tmp $@
$(WORK)/test.tok: $(TEST_UD) | $(WORK)
	$(BIN)/tok --from conllu -l $^ | sed '/^$$/d' > $@.tmp && mv $@.tmp $@

SPLITS := $(WORK)/train.tok $(WORK)/valid.tok $(WORK)/test.tok

# 2. The paper's background: unsmoothed unigram over the three splits.
$(WORK)/counts-all.tsv: $(SPLITS)
	$(BIN)/vocab -o $@ $^
$(WORK)/background-paper.tsv: $(WORK)/counts-all.tsv $(SCRIPTS)/ud-background
	$(SCRIPTS)/ud-background -v unk=$(UNK_MASS) $< > $@.tmp && mv $@.tmp $@

# 3. Feature streams.  In the paper setting the vocabulary is
# train+valid+test types (--extra), in the clean one train+valid types.
EXTRA := --extra $(WORK)/valid.tok --extra $(WORK)/test.tok
TRAINVALID_UD := $(TRAIN_UD) $(VALID_UD)
$(WORK)/rnn.fz: $(SPLITS)
	$(BIN)/featurize --top 134217728 $(EXTRA) -o $@ $< 2> $@.err
$(WORK)/paper/ll-%.fz: $(SPLITS) $(WORK)/background-paper.tsv $(ALL_UD) | $(WORK)/paper
	$(BIN)/featurize -l --top $* $(CONLLU_OPTS) $(EXTRA) \
		--background $(WORK)/background-paper.tsv -o $@ $< 2> $@.err
$(WORK)/clean/rnn.fz: $(WORK)/train.tok $(WORK)/valid.tok | $(WORK)/clean
	$(BIN)/featurize --top 134217728 --extra $(WORK)/valid.tok -o $@ $< 2> $@.err
$(WORK)/clean/ll-%.fz: $(WORK)/train.tok $(WORK)/valid.tok $(TRAINVALID_UD) | $(WORK)/clean
	$(BIN)/featurize -l --top $* $(foreach f,$(TRAINVALID_UD),--conllu $(f)) \
		--extra $(WORK)/valid.tok --background unigram:0.5 -o $@ $< 2> $@.err

# 4. Models, with the learning curve in %.log.tsv and train's messages in
# %.train.err (the plots read the curves after the rows are written).
# The model file keeps the best epoch's weights.
$(WORK)/rnn.model $(WORK)/clean/rnn.model: $(WORK)/%.model: $(WORK)/%.fz $(WORK)/valid.tok
	$(BIN)/train --output softmax $(TRAIN_OPTS) --valid $(WORK)/valid.tok \
		--log $(WORK)/$*.log.tsv -o $@ $< 2> $(WORK)/$*.train.err
$(WORK)/%.model: $(WORK)/%.fz $(WORK)/valid.tok
	$(BIN)/train --output loglinear $(TRAIN_OPTS) --valid $(WORK)/valid.tok \
		--log $(WORK)/$*.log.tsv -o $@ $< 2> $(WORK)/$*.train.err

# A run stopped by MAXTIME keeps its training state: `make resume`
# continues every such model (train --resume takes the same steps as an
# uninterrupted run) under a new MAXTIME, then `make` rescores it.
resume: $(BASES:%=resume/%)
resume/%:
	@f=$(WORK)/$*.model; if [ -f $$f ] && tar -xOf $$f meta | grep -qx 'stopped=max-time'; then \
		echo "resuming $$f"; \
		$(BIN)/train --resume $$f --epochs $(EPOCHS) --patience $(PATIENCE) \
			--threads $(THREADS) $(if $(MAXTIME),--max-time $(MAXTIME)) --progress 0 \
			--valid $(WORK)/valid.tok --log $(WORK)/$*.log.tsv $(WORK)/$*.fz \
			2>> $(WORK)/$*.train.err; \
	fi

# 5. Log-perplexity per predicted token (words and one </s> a sentence),
# base e: minus the summed log-probabilities over the summed token counts
# of score's per-line output.
$(WORK)/%.eval: $(WORK)/%.model $(SPLITS)
	for s in train valid test; do \
		$(BIN)/score -q --threads 1 --batch $(SCORE_BATCH) -m $< $(WORK)/$$s.tok | \
		awk -v s=$$s 'BEGIN { FS = "\t" } { l += $$1; n += $$2; o += $$3 } \
			END { printf "%s\t%.4f\t%d\t%d\n", s, -l / n, n, o }'; \
	done > $@.tmp && mv $@.tmp $@

# One row of the table: setting model M V F epochs best_epoch stopped
# train valid test (log-ppl).
$(WORK)/%.row: $(WORK)/%.eval $(WORK)/%.model $(SCRIPTS)/ud-row
	$(SCRIPTS)/ud-row $(WORK)/$*.model $< $* > $@.tmp && mv $@.tmp $@

# The test outputs, one per row: OUT/rnn, clean-rnn, paper-ll-M,
# clean-ll-M .test.tsv.xz.
OUT := $(RESULTS)/outputs/ud-french
OUTPUTS := $(foreach b,$(BASES),$(OUT)/$(subst /,-,$(b)).test.tsv.xz)
define TEST_OUTPUT
$(OUT)/$(subst /,-,$(1)).test.tsv.xz: $(WORK)/$(1).model $(WORK)/test.tok | $(OUT)
	$(BIN)/score -q --threads 1 --batch $(SCORE_BATCH) --per-token -m $$< $(WORK)/test.tok | xz -9e > $$@.tmp && mv $$@.tmp $$@
endef
$(foreach b,$(BASES),$(eval $(call TEST_OUTPUT,$(b))))
$(OUT):
	mkdir -p $@

CONFIG_NET = embedding $(EMBED), $(LAYERS) LSTM layers of $(HIDDEN), \
	RMSprop lr $(LR), batch $(BATCH), gradient clip 5, early stopping on \
	valid with patience $(PATIENCE), at most $(EPOCHS) epochs
CONFIG_RUN = $(THREADS) thread(s), initialisation $(or $(INIT),train's default (torch)); <unk> mass in the paper background $(UNK_MASS)
CONFIG_TEXT = $(CONFIG_NET)$(if $(MAXTIME), and $(MAXTIME) per model), seed $(SEED), $(CONFIG_RUN)
# the headline's models have their own seeds (HEADLINE_SEEDS), and MAXTIME
# only cuts a run that headline-resume continues
HL_CONFIG_TEXT = $(CONFIG_NET)$(if $(MAXTIME), (in runs of at most $(MAXTIME), each continued by make headline-resume)), $(CONFIG_RUN)

# 6. Tables and plots.  The reference columns appear when `make reference`
# has produced $(WORK)/ref/*.out.
# NOTES: hand-written remarks on a measured run, appended to the report.
NOTES ?= $(RESULTS)/ud-french-notes.md
$(RESULTS)/ud-french.tsv $(RESULTS)/ud-french.md &: $(ROWS) $(OUTPUTS) $(wildcard $(REF_OUT) $(REF_OURS_ROWS) $(NOTES)) $(SCRIPTS)/ud-table | $(RESULTS)
	$(SCRIPTS)/ud-table --work $(WORK) --tsv $(RESULTS)/ud-french.tsv \
		--md $(RESULTS)/ud-french.md --config "$(CONFIG_TEXT)" --outputs $(OUT) \
		$(if $(wildcard $(REF_OURS)/*.row $(REF_OURS)/paper/*.row),--ref-ours $(REF_OURS) $(if $(REF_INIT),--ref-init $(REF_INIT))) \
		$(if $(wildcard $(NOTES)),--notes $(NOTES)) $(ROWS)
$(RESULTS)/ud-french-test-vs-m.png: $(RESULTS)/ud-french.tsv $(SCRIPTS)/ud-plots
	$(SCRIPTS)/ud-plots test-vs-m $< $@
$(RESULTS)/ud-french-valid-curves.png: $(RESULTS)/ud-french.tsv $(ROWS) $(SCRIPTS)/ud-plots
	$(SCRIPTS)/ud-plots valid-curves $< $@ $(WORK)

# The learning curves (train --log) and the reference's output, kept with
# the results: LOGDIR/<setting>-ll-M.tsv, rnn.tsv, torch-*.out and the
# counterparts' curves, ref-ours-<REF_INIT>-rnn.tsv ... (named after the
# REF_OURS folder).
LOGDIR := $(RESULTS)/ud-french-logs
$(WORK)/logs.stamp: $(ROWS) $(wildcard $(REF_OUT) $(REF_OURS_ROWS))
	mkdir -p $(LOGDIR)
	for b in $(BASES); do cp $(WORK)/$$b.log.tsv $(LOGDIR)/$$(echo $$b | tr / -).tsv; done
	for f in $(wildcard $(REF_OUT)); do cp $$f $(LOGDIR)/torch-$$(basename $$f); done
	for b in $(REF_OURS_ROWS:$(REF_OURS)/%.row=%); do \
		if [ -f $(REF_OURS)/$$b.log.tsv ]; then cp $(REF_OURS)/$$b.log.tsv $(LOGDIR)/$(notdir $(REF_OURS))-$$(echo $$b | tr / -).tsv; fi; done
	touch $@

# 8. The headline, over seeds (issue 47): the RNN and the LL-RNN M=2500
# in two settings, each trained with every seed of HEADLINE_SEEDS, all
# stopped by the same rule (early stopping on valid, PATIENCE, at most
# EPOCHS; MAXTIME only caps one invocation, and `make headline-resume`
# continues until patience, so no row ends on max-time; it also continues
# a run a signal stopped, or a crash left at its last checkpoint, meta
# stopped=running):
#   paper  the replication: vocabulary = train+valid+test types, the
#          treebank tags of all eight files, background = unigram over
#          all three splits (the sweep's paper models; it uses test words)
#   clean  nothing from test: vocabulary = train+valid types, tags from
#          the train and valid CoNLL-U files only, background = add-0.5
#          unigram on train; test words outside the vocabulary are OOVs,
#          scored as <unk> (counted in score's OOV column)
# Each model's test output (score --per-token) is kept, xz-compressed,
# under $(RESULTS)/outputs/ud-french-headline/, and scripts/ud-headline
# writes the table (mean and sd over seeds), its checks.tsv for
# scripts/results-check and the paired bootstrap intervals.
HEADLINE_SEEDS ?= 1 2 3
HEADLINE_M ?= 2500
HL := $(WORK)/headline
HL_OUT := $(RESULTS)/outputs/ud-french-headline
HL_BASES := paper/rnn paper/ll-$(HEADLINE_M) clean/rnn clean/ll-$(HEADLINE_M)
HL_RUNS := $(foreach b,$(HL_BASES),$(foreach s,$(HEADLINE_SEEDS),$(b)-s$(s)))
HL_OUTPUTS := $(foreach r,$(HL_RUNS),$(HL_OUT)/$(subst /,-,$(r)).test.tsv.xz)
.PHONY: headline headline-resume
headline: $(RESULTS)/ud-french-headline.tsv

$(HL)/paper/rnn.fz: $(WORK)/rnn.fz | $(HL)/paper
	ln -f $< $@
$(HL)/paper/ll-%.fz: $(WORK)/paper/ll-%.fz | $(HL)/paper
	ln -f $< $@
$(HL)/clean/rnn.fz: $(WORK)/clean/rnn.fz | $(HL)/clean
	ln -f $< $@
$(HL)/clean/ll-%.fz: $(WORK)/clean/ll-%.fz | $(HL)/clean
	ln -f $< $@

# hl_output(kind): the train --input and --output of a headline base
hl_output = $(if $(findstring /chars,$(1)),--input chars --output softmax,--output $(if $(findstring /rnn,$(1)),softmax,loglinear))
# HL_RUN(base, seed, outputs folder)
define HL_RUN
$(HL)/$(1)-s$(2).model: $(HL)/$(1).fz $(WORK)/valid.tok
	$(BIN)/train $(call hl_output,$(1)) --seed $(2) $(MODEL_OPTS) \
		--valid $(WORK)/valid.tok --log $(HL)/$(1)-s$(2).log.tsv -o $$@ $$< 2> $(HL)/$(1)-s$(2).train.err
$(3)/$(subst /,-,$(1))-s$(2).test.tsv.xz: $(HL)/$(1)-s$(2).model $(WORK)/test.tok | $(3)
	$(BIN)/score -q --threads 1 --batch $(SCORE_BATCH) --per-token -m $$< $(WORK)/test.tok | xz -9e > $$@.tmp && mv $$@.tmp $$@
endef
$(foreach b,$(HL_BASES),$(foreach s,$(HEADLINE_SEEDS),$(eval $(call HL_RUN,$(b),$(s),$(HL_OUT)))))

# 9. Character-aware input against word input over seeds (issue 47; issue
# 16's question under the headline's rules): the clean setting's stream,
# training options and stopping rule, train --input chars; its word
# counterpart is the headline's clean RNN (same seeds, same outputs).
# `make chars-seeds` trains the CHARS_SEEDS models and keeps their test
# outputs under $(RESULTS)/outputs/chars-clean/; `make headline-resume`
# continues them as it does the headline's; `make chars-table` writes
# $(RESULTS)/chars-clean.tsv and .md (scripts/lm-seeds: mean and sd over
# seeds, the paired interval of chars - word, checks for results-check).
CHARS_SEEDS ?= $(HEADLINE_SEEDS)
CH_OUT := $(RESULTS)/outputs/chars-clean
CH_RUNS := $(foreach s,$(CHARS_SEEDS),clean/chars-s$(s))
.PHONY: chars-seeds
chars-seeds: $(CH_RUNS:clean/%=$(CH_OUT)/clean-%.test.tsv.xz)
$(HL)/clean/chars.fz: $(HL)/clean/rnn.fz
	ln -f $< $@
.PHONY: chars-table
chars-table: $(RESULTS)/chars-clean.tsv
$(RESULTS)/chars-clean.tsv: $(CH_RUNS:clean/%=$(CH_OUT)/clean-%.test.tsv.xz) \
		$(CHARS_SEEDS:%=$(HL_OUT)/clean-rnn-s%.test.tsv.xz) $(SCRIPTS)/lm-seeds $(SCRIPTS)/paired-bootstrap
	$(SCRIPTS)/lm-seeds --name chars-clean --results $(RESULTS) --seeds "$(CHARS_SEEDS)" \
		--title 'Character-aware input against word input on UD French (clean setting), over seeds' \
		--row word=$(HL)/clean/rnn:../ud-french-headline/clean-rnn --row chars=$(HL)/clean/chars:clean-chars \
		--about 'The headline'"'"'s clean setting (pipelines/ud-french.mk sec. 8 and 9): vocabulary from train+valid, test words outside it scored as `<unk>`; softmax output; word: the headline'"'"'s clean RNN; chars: the same with train --input chars (character CNN and highway input, train'"'"'s defaults). Same options, seeds and stopping rule; nothing tuned.' \
		--config "$(HL_CONFIG_TEXT)"
$(foreach s,$(CHARS_SEEDS),$(eval $(call HL_RUN,clean/chars,$(s),$(CH_OUT))))

$(RESULTS)/ud-french-headline.tsv: $(HL_OUTPUTS) $(SCRIPTS)/ud-headline $(SCRIPTS)/paired-bootstrap
	$(SCRIPTS)/ud-headline --work $(HL) --outputs $(HL_OUT) --results $(RESULTS) \
		--m $(HEADLINE_M) --seeds "$(HEADLINE_SEEDS)" --config "$(HL_CONFIG_TEXT)"

# Continue every headline model that an invocation's MAXTIME stopped, or
# a signal interrupted (train saves on SIGINT and SIGTERM).
headline-resume: $(HL_RUNS:%=headline-resume/%) $(CH_RUNS:%=headline-resume/%)
headline-resume/%:
	@f=$(HL)/$*.model; if [ -f $$f ] && tar -xOf $$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$f"; \
		$(BIN)/train --resume $$f --epochs $(EPOCHS) --patience $(PATIENCE) \
			--threads $(THREADS) $(if $(MAXTIME),--max-time $(MAXTIME)) --progress 0 \
			--valid $(WORK)/valid.tok --log $(HL)/$*.log.tsv $(HL)/$(firstword $(subst -s, ,$*)).fz \
			2>> $(HL)/$*.train.err; \
	fi

$(HL)/paper $(HL)/clean $(HL_OUT) $(CH_OUT):
	mkdir -p $@

# 7. The PyTorch reference (../shared/bench/torch_ref.py) on the same
# splits read by its own ud_prep.py: REF_MODELS, the RNN and LL-RNN
# M=2500, paper setting (--background all), same sizes, optimiser, batch,
# patience and seed, at most REF_EPOCHS epochs.  Its llrnn counterparts
# are always trained too, in $(REF_OURS) (a make of this file on that
# folder): the same models and hyperparameters, but train --init
# $(REF_INIT) (the reference's initial-weight distributions), at most
# REF_EPOCHS epochs and no MAXTIME, so the reference section of the report
# compares torch and llrnn at equal settings.  The table's own models
# ($(WORK), INIT, EPOCHS) are not touched.
reference: $(REF_OUT) ref-ours
ref-ours:
	$(MAKE) -f $(firstword $(MAKEFILE_LIST)) WORK=$(REF_OURS) \
		INIT=$(REF_INIT) EPOCHS=$(REF_EPOCHS) MAXTIME= MS="$(REF_MS)" SETTINGS=paper \
		$(REF_OURS_ROWS)
$(WORK)/ref/train.txt: $(ALL_UD) | $(WORK)
	$(PYTHON) $(UD_PREP) $(DATA) $(WORK)/ref
$(WORK)/ref/rnn.out: $(WORK)/ref/train.txt
	$(PYTHON) $(TORCH_REF) --train $(WORK)/ref/train.txt \
		--valid $(WORK)/ref/valid.txt --test $(WORK)/ref/test.txt \
		--model rnn --background all --hidden $(HIDDEN) --layers $(LAYERS) \
		--batch $(BATCH) --lr $(LR) --epochs $(REF_EPOCHS) --patience $(PATIENCE) \
		--threads $(REF_THREADS) --seed $(SEED) > $@.tmp && mv $@.tmp $@
$(WORK)/ref/ll-%.out: $(WORK)/ref/train.txt
	$(PYTHON) $(TORCH_REF) --train $(WORK)/ref/train.txt \
		--valid $(WORK)/ref/valid.txt --test $(WORK)/ref/test.txt \
		--lexicon $(WORK)/ref/lexicon.tsv --model ll --top $* \
		--background all --hidden $(HIDDEN) --layers $(LAYERS) \
		--batch $(BATCH) --lr $(LR) --epochs $(REF_EPOCHS) --patience $(PATIENCE) \
		--threads $(REF_THREADS) --seed $(SEED) > $@.tmp && mv $@.tmp $@

$(WORK) $(WORK)/paper $(WORK)/clean $(RESULTS):
	mkdir -p $@

clean-work:
	rm -rf $(WORK)
