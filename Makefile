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

.PHONY: site install repro serve lab test fuzz bench clean

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

fuzz:                    ## the seeded fuzzers at length (FUZZ_COUNT damaged copies per format, FILES_COUNT hostile files per strategy, FUZZ_SEED)
	THRUPUT_FUZZ_COUNT=$(or $(FUZZ_COUNT),3000) THRUPUT_FUZZ_SEED=$(or $(FUZZ_SEED),1) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_fuzz.py -k seeded
	THRUPUT_FILES_COUNT=$(or $(FILES_COUNT),60) THRUPUT_FILES_HEAVY=1 THRUPUT_FUZZ_SEED=$(or $(FUZZ_SEED),1) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_hostile_files.py
	$(PY) -m tests.fuzz_summary

bench:                   ## the benchmarks under benchmarks/ (not part of the tests)
	$(PY) -m benchmarks

clean:
	rm -rf _site .quarto tests/output benchmarks/output
