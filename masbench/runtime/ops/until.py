"""A loop's ``until`` condition, judged on the value of the body node it names: that node carries
the :class:`StopRule` (its base field ``until``), bound when the design is compiled."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..info import Until
from ..scope import Scope
from ..values import OK, Val, truthy


@dataclass(frozen=True, slots=True, eq=False)
class StopRule:
    """A loop's stop condition, on the body node it reads."""

    loop: str
    """The loop it stops."""
    until: Until
    rx: re.Pattern[str] | None
    """The stop word's pattern, when the condition is a word."""

    @classmethod
    def of(cls, loop: str, until: Until) -> StopRule:
        """The rule of a parsed condition (its word compiled once)."""
        rx = re.compile(rf"(?<!\w){re.escape(until.word.strip())}(?!\w)", re.I) if until.word else None
        return cls(loop, until, rx)

    def check(self, sc: Scope, val: Val) -> None:
        """Stop the loop (``sc.stop[loop] = "until"``) if the condition holds on ``val``."""
        u = self.until
        if val.status != OK:
            return
        if u.word is not None:
            rx = self.rx
            assert rx is not None  # compiled whenever the condition has a word
            hit = all(rx.search(m.text or "") for m in val.members())
        elif u.field is not None:
            if u.field == "answer":
                hit = all(bool(m.answers) for m in val.members())
            elif u.field == "text":
                hit = all(bool(m.text) for m in val.members())
            else:
                hit = all(isinstance(m.data, dict) and truthy(m.data.get(u.field)) for m in val.members())
        else:
            hit = all(truthy(m.data) if m.data is not None else bool(m.text) for m in val.members())
        if u.negate:
            hit = not hit
        if hit:
            sc.stop[self.loop] = "until"


__all__ = ["StopRule"]
