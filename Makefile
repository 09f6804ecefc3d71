# Two set-up commands for a fresh machine (see README):
#   make demo   installs the suite and runs the main job on the offline default
#   make test   installs the suite with its test dependencies and runs the tests
#   make mutants runs the quality tests under each mutant (tests/mutants/) and fails unless every one fails
# CI (.ci/run) runs `make lint` (ruff, configured in pyproject.toml), `make test` and `make mutants`.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
# pytest-xdist workers: one per core (the conftest keeps each worker's torch at one thread).
TEST_JOBS ?= auto

.PHONY: install install-test demo lint test mutants

install:
	$(PIP) install -q -e .

install-test:
	$(PIP) install -q -e '.[test]'

demo: install
	bench run --profile cpu --defense raw,lightsplit-f --cr 8 --attack decoder-ref,unsplit --seeds 0 --jobs 2 --out results/demo

lint: install-test
	$(PYTHON) -m ruff check .

test: install-test
	$(PYTHON) -m pytest tests -n $(TEST_JOBS) --dist loadgroup

# After `make test` (as in CI) the suite is installed: the mutants install it only where it is not.
mutants:
	@$(PYTHON) -c "import importlib.metadata as m; m.version('splitbench'); m.version('pytest-xdist')" 2>/dev/null || $(MAKE) install-test
	$(PYTHON) -m tests.mutants --jobs $(TEST_JOBS)
