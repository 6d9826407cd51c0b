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

.PHONY: site install repro serve lab test test-fast typecheck test-designs test-generated fuzz test-piles bench clean release

site: install            ## install everything, then build _site/ from the bundled campaigns
	$(BIN)dvc repro

repro:                   ## dvc repro: rebuild what is stale (after adding a campaign, say)
	$(BIN)dvc repro $(STAGES)

serve:                   ## serve the built site on http://127.0.0.1:$(PORT)/
	$(BIN)thruput site serve --dir _site --port $(PORT)

lab:                     ## JupyterLab on the project, offline (charts draw with no network)
	$(BIN)jupyter lab --notebook-dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

release:                 ## release/thruput-$(VERSION)/: the citable, validated deposit (make release VERSION=1.0.0)
	@test -n "$(VERSION)" || { echo "make release VERSION=1.0.0 (MAJOR.MINOR.PATCH)"; exit 2; }
	$(BIN)thruput release $(VERSION) $(if $(RAW_LIMIT),--raw-limit $(RAW_LIMIT))

install:                 ## tools (apt, as root) and the Python package with all extras
	bash tools/bootstrap.sh

test:                    ## the whole test suite
	$(PY) -m pytest -n 2 -q --durations=20

# the edit-test loop: no network namespace, browser, site build, DVC round trip, kernel or whole pipeline
FAST_SKIP := slow or netns or browser or site or kernel or heavy
test-fast:               ## the fast subset (under 3 minutes on 2 cores)
	$(PY) -m pytest -n 2 -q -p no:cacheprovider -m "not ($(FAST_SKIP))"

typecheck:               ## mypy over the typed public API (pyproject.toml [tool.mypy])
	$(PY) -m mypy

test-designs:            ## the generated design pages at length (DESIGN_SEEDS random designs, 8 notebooks)
	THRUPUT_DESIGN_SEEDS=$(or $(DESIGN_SEEDS),300) THRUPUT_DESIGN_SEED0=$(or $(DESIGN_SEED0),0) \
		THRUPUT_DESIGN_NOTEBOOKS=$(or $(DESIGN_NOTEBOOKS),8) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_design_pages.py

test-generated:          ## generated monitor campaigns at length (GENERATED_COUNT random ones from GENERATED_SEED)
	THRUPUT_GENERATED_COUNT=$(or $(GENERATED_COUNT),40) THRUPUT_GENERATED_SEED=$(or $(GENERATED_SEED),1) \
		THRUPUT_GENERATED_ROWS=$(or $(GENERATED_ROWS),3000) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_generated_campaigns.py

fuzz:                    ## the seeded fuzzers at length (FUZZ_COUNT damaged copies per format, FILES_COUNT hostile files per strategy, FUZZ_SEED)
	THRUPUT_FUZZ_COUNT=$(or $(FUZZ_COUNT),3000) THRUPUT_FUZZ_SEED=$(or $(FUZZ_SEED),1) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_fuzz.py -k seeded
	THRUPUT_FILES_COUNT=$(or $(FILES_COUNT),60) THRUPUT_FILES_HEAVY=1 THRUPUT_FUZZ_SEED=$(or $(FUZZ_SEED),1) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_hostile_files.py
	$(PY) -m tests.fuzz_summary

test-piles:              ## generated piles at length (PILES piles, PILES_SEED the first seed)
	THRUPUT_PILES=$(or $(PILES),200) THRUPUT_PILES_SEED=$(or $(PILES_SEED),1) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_piles.py

bench:                   ## the benchmarks under benchmarks/ (not part of the tests)
	$(PY) -m benchmarks

clean:
	rm -rf _site .quarto tests/output benchmarks/output
