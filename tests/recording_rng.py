"""A seeded ``random.Random`` that records its ``randrange`` calls, for the generator tests.

``randint(a, b)`` goes through ``randrange(a, b + 1)`` (CPython), ``sample``, ``choice`` and ``shuffle``
do not: a test reads which range a generator drew from, and what it drew, off ``draws``."""

from __future__ import annotations

import random


class RecordingRandom(random.Random):
    """Draws like ``random.Random(seed)``; ``draws`` lists each ``randrange`` call's (args, result)."""

    def __init__(self, seed: int | str) -> None:
        self.draws: list[tuple[tuple[int, ...], int]] = []
        super().__init__(seed)

    def randrange(self, *args: int) -> int:  # type: ignore[override]
        r = super().randrange(*args)
        self.draws.append((args, r))
        return r
