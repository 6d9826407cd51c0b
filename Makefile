# The two commands of the README's Quick start: `make site` and `make test`.
ifneq ($(CONDA_PREFIX)$(VIRTUAL_ENV),)
PY := python
BIN :=
else
PY := .venv/bin/python
BIN := .venv/bin/
# dvc stages and tests call `thruput`, `dvc` and `jupyter` by name
export PATH := $(CURDIR)/.venv/bin:$(PATH)
endif

.PHONY: site install test fuzz bench clean

site: install            ## install everything, then build _site/ from the bundled campaigns
	$(BIN)dvc repro

install:                 ## tools (apt, as root) and the Python package with all extras
	bash tools/bootstrap.sh

test:                    ## the whole test suite
	$(PY) -m pytest -n 2 -q

fuzz:                    ## the seeded fuzzer at length (FUZZ_COUNT damaged copies per format, FUZZ_SEED)
	THRUPUT_FUZZ_COUNT=$(or $(FUZZ_COUNT),3000) THRUPUT_FUZZ_SEED=$(or $(FUZZ_SEED),1) \
		$(PY) -m pytest -n 2 -q -p no:cacheprovider tests/test_fuzz.py -k seeded

bench:                   ## the benchmarks under benchmarks/ (not part of the tests)
	$(PY) -m benchmarks

clean:
	rm -rf _site .quarto tests/output benchmarks/output
