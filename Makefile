# Two set-up commands for a fresh machine (see README):
#   make demo   installs the suite, runs the main job on the offline default, prints its summary and builds its site
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

# The demo's attacks run at a quarter of the cpu profile's budget (10 reference-decoder epochs, 75 UnSplit
# alternations), which keeps it within 5 minutes on 2 cores; its table's caption says so. DEMO_BUDGET=1 for the full budget.
DEMO_BUDGET ?= 0.25

demo: install
	bench run --profile cpu --defense raw,lightsplit-f --cr 8 --attack prior,decoder-ref,unsplit --attack-budget $(DEMO_BUDGET) --seeds 0 --jobs 2 --out results/demo
	@echo
	bench report --results results/demo --table demo --attack-budget $(DEMO_BUDGET)
	bench site --results results/demo --out results/demo/site
	@echo "Open the site in a browser: file://$(CURDIR)/results/demo/site/index.html (no server needed);"
	@echo "rebuild it with: bench site --results results/demo --out results/demo/site"

lint: install-test
	$(PYTHON) -m ruff check .

test: install-test
	$(PYTHON) -m pytest tests -n $(TEST_JOBS) --dist loadgroup

# After `make test` (as in CI) the suite is installed: the mutants install it only where it is not.
mutants:
	@$(PYTHON) -c "import importlib.metadata as m; m.version('splitbench'); m.version('pytest-xdist')" 2>/dev/null || $(MAKE) install-test
	$(PYTHON) -m tests.mutants --jobs $(TEST_JOBS)
