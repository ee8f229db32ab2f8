# The two commands of the README. Both set everything up first (idempotent).
.PHONY: setup demo test typecheck bench clean readme-plot

setup:
	@bash scripts/setup.sh

# The main job: the quickstart suite on the embedded local model -> DuckDB store + report with plots.
# It ends with the verdict tables per level (`masbench compare`) and the path of the report to open.
demo: setup
	@.venv/bin/masbench run quickstart
	@.venv/bin/masbench report --store runs/quickstart.duckdb --out reports/quickstart > /dev/null
	@COLUMNS=$${COLUMNS:-140} .venv/bin/masbench compare --store runs/quickstart.duckdb --axis arithmetic --axis depth
	@echo "report: $$(pwd)/reports/quickstart/index.html"
	@echo "traces: .venv/bin/masbench view --store runs/quickstart.duckdb  (then open http://127.0.0.1:8765/)"

# The README's plot, regenerated from the demo's store (run `make demo` first).
readme-plot:
	@bash scripts/readme_plot.sh

test: setup
	@bash scripts/setup_browser.sh
	@.venv/bin/python scripts/review_signals.py
	.venv/bin/lint-imports --no-cache
	.venv/bin/basedpyright
	.venv/bin/python -m pytest -q -p no:cacheprovider

# The type checker alone over masbench/ ([tool.basedpyright] in pyproject.toml: standard mode, 0 errors;
# `make test` runs it too).
typecheck: setup
	.venv/bin/basedpyright

bench: setup
	for f in benchmarks/*.py; do .venv/bin/python $$f || exit 1; done

clean:
	rm -rf runs reports .pytest_cache
