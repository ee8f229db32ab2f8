"""Content addressing of transcript texts: one :class:`~.rows.TextRow` per distinct text.

:func:`text_hash` is the key every ``call_messages`` row names its content by; it is a keyed-free
BLAKE2b digest of the UTF-8 bytes (128 bits: collisions are not a practical concern at any store
size), so the same text gets the same key in every process, worker part and store.
"""

from __future__ import annotations

import hashlib

HASH_CHARS = 32
"""Hex characters of :func:`text_hash` (128 bits)."""


def text_hash(text: str) -> str:
    """The content key of ``text`` (32 hex characters)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=HASH_CHARS // 2).hexdigest()


__all__ = ["HASH_CHARS", "text_hash"]
