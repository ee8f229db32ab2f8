"""scripts/uv_index.sh (sourced by scripts/setup.sh): pip's index-url, from PIP_INDEX_URL or a
pip.conf, becomes uv's (UV_INDEX_URL), a UV_* index already set wins, and the URL (which may carry a
token) is never printed. Runs the script with bash and the real pip of this interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECRET = "https://user:s3cret-token@mirror.example/simple"


def _source(tmp_path: Path, **env: str) -> tuple[str, str]:
    """(UV_INDEX_URL after sourcing the script, or "<unset>"; what the script printed)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    py = venv / "bin" / "python"  # this interpreter, with its pip (a symlink would lose its venv)
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_INDEX", "UV_"))}
    base.update({"PIP_CONFIG_FILE": os.devnull, "VENV": str(venv)}, **env)
    out = subprocess.run(["bash", "-c", 'source scripts/uv_index.sh; echo "UV=${UV_INDEX_URL:-<unset>}"'],
                         cwd=ROOT, env=base, capture_output=True, text=True, check=True)
    *printed, last = out.stdout.strip().splitlines()
    return last.removeprefix("UV="), "\n".join(printed) + out.stderr


def test_pip_index_url_from_the_environment_is_uvs_and_never_printed(tmp_path):
    uv, printed = _source(tmp_path, PIP_INDEX_URL=SECRET)
    assert uv == SECRET
    assert "pip's index-url" in printed and "s3cret" not in printed and "mirror.example" not in printed


def test_pip_index_url_from_a_pip_conf_is_uvs(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nindex-url = {SECRET}\n")
    uv, printed = _source(tmp_path, PIP_CONFIG_FILE=str(conf))
    assert uv == SECRET and "s3cret" not in printed


def test_a_uv_index_already_set_wins_and_no_index_leaves_uv_on_its_default(tmp_path):
    assert _source(tmp_path, PIP_INDEX_URL=SECRET, UV_INDEX_URL="https://mine.example/simple")[0] == \
        "https://mine.example/simple"
    assert _source(tmp_path, PIP_INDEX_URL=SECRET, UV_DEFAULT_INDEX="https://mine.example/simple")[0] == "<unset>"
    assert _source(tmp_path) == ("<unset>", "")
