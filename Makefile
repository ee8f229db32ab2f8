# The two commands of the README. Both set everything up first (idempotent).
.PHONY: setup setup-demo demo test test-fast typecheck bench clean readme-plot

# Python's bytecode caches on, whatever the environment says: with PYTHONDONTWRITEBYTECODE set (as in
# this machine's environment) nothing under masbench/ is ever cached, so every xdist worker, every
# `masbench` subprocess a test starts and every Ray or process-engine worker compiles masbench from
# source again, and pytest rewrites every test module's asserts again on every run. Measured: one
# `pytest --collect-only` took 13.6 s of CPU without the caches and 7.6 s with them; importing
# masbench's CLI, harness, report and viewer 1.48 s against 1.25-1.33 s.
unexport PYTHONDONTWRITEBYTECODE

# Everything: masbench, the embedded model, the test tools and extras (`make test` needs them).
setup:
	@bash scripts/setup.sh

# What `make demo` needs and no more: masbench, llama-cpp-python and the SmolLM2 GGUF. A later
# `make setup`/`make test` adds the rest; after a full setup this does nothing.
setup-demo:
	@bash scripts/setup.sh demo

# The main job: the quickstart suite on the embedded local model -> DuckDB store + report with plots.
# It ends with the verdict tables per level (`masbench compare`) and the path of the report to open.
demo: setup-demo
	@.venv/bin/masbench run quickstart
	@.venv/bin/masbench report --store runs/quickstart.duckdb --out reports/quickstart > /dev/null
	@COLUMNS=$${COLUMNS:-140} .venv/bin/masbench compare --store runs/quickstart.duckdb --axis arithmetic --axis depth
	@echo "report: $$(pwd)/reports/quickstart/index.html"
	@echo "traces: .venv/bin/masbench view --store runs/quickstart.duckdb  (then open http://127.0.0.1:8765/)"

# The README's plot, regenerated from the demo's store (run `make demo` first).
readme-plot:
	@bash scripts/readme_plot.sh

# The suite on pytest-xdist workers, one per core by default (TEST_WORKERS=auto; e.g. 4 to overlap
# more of the tests that wait on servers, subprocesses and sleeps). Each worker imports and collects
# the whole suite (~20 s of CPU), so more workers than cores only pays where waiting dominates: on
# tests/llm, 4 workers on 2 shared cores took 330 s against 225 s for one process.
# pytest exits non-zero on any failure and on no test run.
TEST_WORKERS ?= auto
PYTEST = .venv/bin/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS)

# lint-imports first, then basedpyright beside pytest (scripts/test.sh: it is single-threaded and the
# workers leave cores idle while tests wait); both outputs are printed, either failing fails.
test: setup
	@bash scripts/setup_browser.sh
	@.venv/bin/python scripts/review_signals.py
	@bash scripts/test.sh $(PYTEST)

# The edit loop: every test not marked slow (no embedded model, subprocess, browser or whole-suite
# run), on the same workers; no lint, no type check.
test-fast: setup
	$(PYTEST) -m "not slow"

# The type checker alone over masbench/ ([tool.basedpyright] in pyproject.toml: standard mode, 0 errors;
# `make test` runs it too).
typecheck: setup
	.venv/bin/basedpyright

bench: setup
	for f in benchmarks/*.py; do .venv/bin/python $$f || exit 1; done

clean:
	rm -rf runs reports .pytest_cache
