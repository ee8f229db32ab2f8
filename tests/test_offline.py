"""The tests never reach the network, whatever the environment says: the price map is litellm's
bundled copy even when the environment asks for the remote one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from offline_support import litellm_price_map_source

ROOT = Path(__file__).resolve().parents[1]


def test_litellm_price_map_is_the_bundled_copy_in_this_session() -> None:
    import litellm  # noqa: F401  (imported on purpose: the check needs the loaded map)

    info = litellm_price_map_source()
    assert info is not None and info["source"] == "local" and info["url"] is None and info["is_env_forced"]


@pytest.mark.slow
def test_conftest_overrides_an_environment_that_asks_for_the_remote_map() -> None:
    # conftest is imported first (as pytest does), then litellm; the environment says "fetch".
    code = ("import sys; sys.path.insert(0, 'tests'); import conftest; import litellm; "
            "from litellm.litellm_core_utils.get_model_cost_map import get_model_cost_map_source_info as i; "
            "print(i()['source'], i()['url'])")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "False", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["local", "None"]
