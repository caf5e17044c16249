# kept-runs.mk - a finished training run kept beside a pipeline's results
# (issue 47), so that runs trained in different sessions, on different
# machines, make one table.  Included by brown-ladder.mk and
# discourse.mk.
#
# A model file is not committed; what a table reads of it is: its meta
# member (epochs, kept epoch, why it stopped, parameters) and its train
# --log curve, copied to a folder under results/ once the run finished
# (stopped by patience or its epoch cap), and committed with the run's
# outputs.  scripts/runs.py's model_or_meta reads DIR/NAME.meta where the
# model file is gone.  A run still to be resumed (stopped=max-time,
# interrupted or running) is refused, naming the model, so no cut run is
# kept.
#
# $(call KEPT_RUN,MODEL,CURVE,DIR,NAME,DATA): the rule for DIR/NAME.meta
#   and DIR/NAME.log.tsv, from MODEL and its curve CURVE; once
#   DIR/NAME.meta is there (committed), it needs no model.  DATA (files:
#   the split a run trains, validates and is tested on) must be the data
#   of every run kept in DIR: DIR/data.sha256 holds their SHA-256 sums
#   (by file name) from the first run kept, and a run on other data (a
#   source that changed between sessions) is refused, naming the file.
# $(call kept_or,FILE,PREREQUISITES): PREREQUISITES, or none once FILE
#   is there: a kept output is final (delete it, and the run's kept
#   files, to train and score the run again).

define KEPT_RUN
$(3)/$(4).meta $(3)/$(4).log.tsv &: $(call kept_or,$(3)/$(4).meta,$(1))
	mkdir -p $(3)
	tar -xOf $(1) meta >$(3)/$(4).meta.tmp
	if grep -Eqx 'stopped=(max-time|interrupted|running)' $(3)/$(4).meta.tmp; then \
		echo "$(notdir $(firstword $(MAKEFILE_LIST))): $(1): $$$$(grep '^stopped=' $(3)/$(4).meta.tmp); resume it first" >&2; \
		rm -f $(3)/$(4).meta.tmp; exit 1; fi
	$(if $(5),$(call same_data,$(3),$(5),$(3)/$(4).sha256.tmp) || { rm -f $(3)/$(4).meta.tmp; exit 1; })
	cp $(2) $(3)/$(4).log.tsv
	mv $(3)/$(4).meta.tmp $(3)/$(4).meta
endef

# $(call same_data,DIR,DATA,TMP): a recipe line; DIR/data.sha256 is
# written the first time, compared afterwards (TMP: the run's own file,
# as runs are kept in parallel under make -j).
same_data = (cd $(dir $(firstword $(2))) && sha256sum $(notdir $(2))) >$(3) && \
	if [ ! -e $(1)/data.sha256 ]; then mv $(3) $(1)/data.sha256; \
	elif cmp -s $(1)/data.sha256 $(3); then rm -f $(3); \
	else echo "$(notdir $(firstword $(MAKEFILE_LIST))): $$$$(diff $(1)/data.sha256 $(3) | sed -n 's/^> [0-9a-f]*  //p' | head -n 1) differs from the data of the runs kept in $(1) (data.sha256)" >&2; \
		rm -f $(3); false; fi

kept_or = $(if $(wildcard $(1)),,$(2))
