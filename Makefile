# The commands of the README's Quick start: `make site`, `make test`, and, in any new shell
# (no environment to activate: the targets find ./.venv or the active conda env/virtualenv),
# `make repro`, `make serve`, `make lab`.
ifneq ($(CONDA_PREFIX)$(VIRTUAL_ENV),)
PY := python
BIN :=
else
PY := .venv/bin/python
BIN := .venv/bin/
# dvc stages and tests call `thruput`, `dvc` and `jupyter` by name
export PATH := $(CURDIR)/.venv/bin:$(PATH)
endif

PORT ?= 8000
STAGES ?=

.PHONY: site install repro serve lab test test-generated fuzz bench clean

site: install            ## install everything, then build _site/ from the bundled campaigns
	$(BIN)dvc repro

repro:                   ## dvc repro: rebuild what is stale (after adding a campaign, say)
	$(BIN)dvc repro $(STAGES)

serve:                   ## serve the built site on http://127.0.0.1:$(PORT)/
	$(BIN)thruput site serve --dir _site --port $(PORT)

lab:                     ## JupyterLab on the project, offline (charts draw with no network)
	$(BIN)jupyter lab --notebook-dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

install:                 ## tools (apt, as root) and the Python package with all extras
	bash tools/bootstrap.sh

test:                    ## the whole test suite
	$(PY) -m pytest -n 2 -q

test-generated:          ## generated monitor campaigns at length (GENERATED_COUNT random ones from GENERATED_SEED)
	THRUPUT_GENERATED_COUNT=$(or $(GENERATED_COUNT),40) THRUPUT_GENERATED_SEED=$(or $(GENERATED_SEED),1) \
		THRUPUT_GENERATED_ROWS=$(or $(GENERATED_ROWS),3000) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_generated_campaigns.py

fuzz:                    ## the seeded fuzzer at length (FUZZ_COUNT damaged copies per format, FUZZ_SEED)
	THRUPUT_FUZZ_COUNT=$(or $(FUZZ_COUNT),3000) THRUPUT_FUZZ_SEED=$(or $(FUZZ_SEED),1) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_fuzz.py -k seeded
	$(PY) -m tests.fuzz_summary

bench:                   ## the benchmarks under benchmarks/ (not part of the tests)
	$(PY) -m benchmarks

clean:
	rm -rf _site .quarto tests/output benchmarks/output
