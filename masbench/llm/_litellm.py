"""The one place litellm is imported: offline price map, quiet, registered models."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch of the price map
os.environ.setdefault("LITELLM_LOG", "ERROR")

import logging  # noqa: E402

import litellm  # noqa: E402

# litellm logs price-map notes (e.g. on register_model for local models) as warnings; they are
# not actionable for masbench users. Errors still surface through exceptions and our call log.
for _name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
    logging.getLogger(_name).setLevel(logging.ERROR)

litellm.suppress_debug_info = True
litellm.drop_params = True  # providers that lack a param (e.g. seed) get it dropped, not an error
# the telemetry flag of the litellm releases the pin allows (>=1.70); current releases have none
# (so it is not in their annotations), where setting it does nothing
setattr(litellm, "telemetry", False)

__all__ = ["litellm"]
