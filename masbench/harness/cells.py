"""What a suite expands to: design cells (design × task × seed) and pool cells (task × seed)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from ..spec import DesignRef, SuiteSpec


@dataclass(frozen=True)
class DesignEntry:
    """One design of a suite, with its label (the name it has in the store and reports)."""

    label: str
    name: str
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def design_entries(suite: SuiteSpec) -> list[DesignEntry]:
    out: list[DesignEntry] = []
    seen: set[str] = set()
    for ref in suite.designs:
        if isinstance(ref, str):
            ref = DesignRef(design=ref)
        label = ref.label or (ref.design if not ref.params else
                              ref.design + "[" + ",".join(f"{k}={v}" for k, v in sorted(ref.params.items())) + "]")
        if label in seen:
            raise ValueError(f"two designs in suite {suite.name!r} share the label {label!r}; give one a `label`")
        seen.add(label)
        out.append(DesignEntry(label, ref.design, dict(ref.params)))
    return out


@dataclass(frozen=True, slots=True)
class Cell:
    """A unit of work. ``kind`` is ``design`` (one design on one task and seed) or ``pool``
    (the k_max CoT samples of one task and seed). Slotted: a run's driver holds one per cell
    to run (64 bytes each, its strings shared with the tasks and designs)."""

    kind: str
    task_id: str
    seed: int
    design: str = ""  # label; empty for pool cells

    @property
    def key(self) -> str:
        return f"{self.kind}|{self.design}|{self.task_id}|{self.seed}"

    def shard(self, n: int) -> int:
        """Stable shard index in [0, n) — the same in every process (no Python hash seed)."""
        return int.from_bytes(hashlib.blake2b(self.key.encode(), digest_size=8).digest(), "big") % n


NOT_IDENTITY = {"transcripts"}
_LATER_DEFAULTS: tuple[tuple[tuple[str, ...], str, object], ...] = (
    (("cot_sc",), "kind", None), (("cot_sc",), "params", {}),
    (("models", "*"), "function_calling", None), (("models", "*", "sim"), "tools", None),
    (("stats",), "test", "sign-flip"), (("stats",), "bet", "agrapa"), (("tasks", "*"), "distinct", False),
    ((), "judge", None), (("models", "*", "sim"), "grading", None),
)
"""(path in the suite's dump, field, default) of fields added after runs were stored: left out of
the hash while at their default, so an older suite resumes its run (``*``: every entry of a mapping or list)."""


def _at_path(data: object, path: tuple[str, ...]) -> list[dict]:
    """The mappings found at ``path`` in a JSON dump (``*`` fans out over a mapping's values)."""
    found = [data]
    for part in path:
        nxt: list[object] = []
        for obj in found:
            if isinstance(obj, dict):
                nxt.extend(obj.values() if part == "*" else [obj[part]] if part in obj else [])
            elif isinstance(obj, list) and part == "*":
                nxt.extend(obj)
        found = nxt
    return [o for o in found if isinstance(o, dict)]
"""Suite fields that are not part of a run's configuration identity (:func:`config_hash`)."""


def config_hash(suite: SuiteSpec, overrides: Mapping[str, str | dict[str, Any]], limit: int | None,
                base_dir: Path | None, sequential: dict[str, Any] | None = None) -> str:
    """Identity of a run's configuration: the same suite, overrides and limit resume one run.
    ``transcripts`` is left out: what a run records of its calls is not what it measures (and a
    suite from before the setting hashes as it did); so is a model's ``client`` (and
    ``sdk_wire``), which changes how a call is sent, not what it records. ``sequential``: a ``--until-decided`` run's
    settings (task cap, batch, matching unit), hashed only when given — a fixed-n run hashes
    exactly as before, and a sequential run never resumes a fixed-n one (or the reverse)."""
    data = suite.model_dump(mode="json", by_alias=True, exclude=NOT_IDENTITY)
    for path, key, default in _LATER_DEFAULTS:  # added later: a suite that leaves them unset hashes as before
        for obj in _at_path(data, path):
            if obj.get(key, default) == default:
                obj.pop(key, None)
    for model in _at_path(data, ("models", "*")):  # the HTTP client records the same rows (docs/backends.md)
        model.pop("client", None)
        model.pop("sdk_wire", None)
    stats = data.get("stats")
    if isinstance(stats, dict) and stats.get("match") == "budget":
        # the statistics define no cell: the new default unit hashes as the old default did, so a
        # suite that leaves `stats.match` unset resumes the run it started before the default changed
        stats["match"] = "tokens"
    ident: dict[str, Any] = {"suite": data, "overrides": overrides, "limit": limit}
    if sequential is not None:
        ident["until_decided"] = sequential
    blob = json.dumps(ident, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
