"""The one place litellm is imported: offline price map, quiet, registered models."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch of the price map
os.environ.setdefault("LITELLM_LOG", "ERROR")

import litellm  # noqa: E402

litellm.suppress_debug_info = True
litellm.drop_params = True  # providers that lack a param (e.g. seed) get it dropped, not an error
litellm.telemetry = False

__all__ = ["litellm"]
