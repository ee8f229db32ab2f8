"""Failed cells: superseding them on resume (so a rerun replaces them without double counting),
the run-stopping error of a misconfigured model, and the closing summary's failure reasons.

A cell *failed* when its result has status ``failed`` (model errors after retries, a harness
error) or, for a pool cell, any of its samples has an error. Budget-exhausted and degraded cells
are results, not failures, and are never rerun. Superseding moves the cell's calls to
``calls_superseded`` (still spent, no longer counted; the ``run_spend`` view tells both) and
deletes its other rows; the cell then runs again like one never run. Which tables hold a cell's
rows, and the ``cell_failures`` view both the summary and ``masbench status`` read, are the
store's (:mod:`masbench.store.cells`).
"""

from __future__ import annotations

from ..llm.errors import misconfig_hint
from ..store import RunFailed, failure_reasons, supersede_failed


class RunAborted(RunFailed):
    """A systemic error (a misconfigured model): the run stops at its first occurrence, marked failed
    with this message as the reason."""


def aborted_message(gateway) -> str:
    """One line naming the alias, the litellm id, the error and what to set."""
    alias, model_id, reason = gateway.fatal
    spec = gateway.models.get(alias)
    hint = misconfig_hint(model_id, getattr(spec, "api_key_env", None), reason)
    return f"model {alias!r} ({model_id}) is misconfigured: {hint}. First error: {reason}"


__all__ = ["RunAborted", "aborted_message", "failure_reasons", "supersede_failed"]
