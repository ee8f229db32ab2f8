"""Where litellm loaded its price map from: shared by the root conftest's session check and
tests/test_offline.py (a module of its own: with several conftest.py files, ``from conftest import``
is ambiguous)."""

from __future__ import annotations

import sys


def litellm_price_map_source() -> dict | None:
    """Where the imported litellm loaded its price map from (None: litellm not imported)."""
    if "litellm" not in sys.modules:
        return None
    from litellm.litellm_core_utils.get_model_cost_map import get_model_cost_map_source_info

    return get_model_cost_map_source_info()
