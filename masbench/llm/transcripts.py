"""Call transcripts: what each call sent and got back, as store records.

A :class:`TranscriptRecorder` turns one call (its ``calls`` row, the request messages the gateway
sent and the reply) into :class:`~masbench.store.rows.TextRow` and
:class:`~masbench.store.rows.MessageRow` records for a sink (normally ``StoreWriter.put``):

- every distinct text once: a message's content is named by its
  :func:`~masbench.store.texts.text_hash`; the recorder remembers the hashes it has put (one recorder
  per run in a process), and the store's insert of new hashes only keeps other processes' and earlier
  sessions' copies out;
- one ``call_messages`` row per request message (direction ``input``, position 0..n-1 in order)
  and one for the reply (``output``, position 0; none when the call got no reply), whose
  ``extra`` holds the reply's ``tool_calls`` when it asked for some (its text may then be "");
- content that is not a string (a list of parts, ``None`` beside tool calls) is stored as its JSON
  text with ``content_type`` ``json``; of a message's other fields only :data:`MESSAGE_EXTRA`
  (``name``, ``tool_calls``, ``tool_call_id``) are kept, as JSON in ``extra``. Nothing else of a
  message, and nothing of the request's parameters, keys or headers, is recorded here.

The mode (:data:`~masbench.spec.suite.TranscriptMode`) says which calls are kept: ``full`` every
call, ``errors`` the calls whose status is not ``ok``, ``none`` no call. It runs on every call's
path: per message one hash and a set lookup, and one record per new text and per message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from ..spec.suite import TRANSCRIPT_MODES, TranscriptMode
from ..store.rows import CallRow, MessageRow, Row, TextRow
from ..store.texts import text_hash

RecordSink = Callable[[Row], None]
"""Where store records go (texts, call messages, …), e.g. ``StoreWriter.put``."""

MESSAGE_EXTRA = ("name", "tool_calls", "tool_call_id")
"""The message fields kept in ``call_messages.extra`` besides role and content (never others)."""

_KEEPS: dict[TranscriptMode, Callable[[str | None], bool]] = {
    "full": lambda status: True,
    "errors": lambda status: status != "ok",
    "none": lambda status: False,
}
"""Mode → whether a call of this status is recorded."""


def _json(value: object) -> str:
    """Compact JSON text of a value from a message (non-JSON values as their ``str``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class TranscriptRecorder:
    """Records the transcripts of calls to ``sink`` under ``mode`` (see the module docstring)."""

    __slots__ = ("sink", "mode", "_keeps", "_seen", "messages", "texts")

    def __init__(self, sink: RecordSink, mode: TranscriptMode = "full"):
        """``sink``: receives the records; ``mode``: ``full``, ``errors`` or ``none``."""
        if mode not in _KEEPS:
            raise ValueError(f"unknown transcripts mode {mode!r} (known: {', '.join(TRANSCRIPT_MODES)})")
        self.sink = sink
        self.mode: TranscriptMode = mode
        self._keeps = _KEEPS[mode]
        self._seen: set[str] = set()
        self.messages = 0
        """``call_messages`` records sent."""
        self.texts = 0
        """``texts`` records sent (distinct texts this recorder saw)."""

    def keeps(self, status: str | None) -> bool:
        """Whether a call of this status is recorded under the mode."""
        return self._keeps(status)

    def _text(self, text: str) -> str:
        """The text's hash, sending its :class:`TextRow` the first time this recorder sees it."""
        h = text_hash(text)
        if h not in self._seen:
            self._seen.add(h)
            self.texts += 1
            self.sink(TextRow(text_hash=h, text=text, chars=len(text)))
        return h

    def record(self, call: CallRow, messages: Sequence[Mapping[str, object]], reply: str | None,
               tool_calls: Sequence[Mapping[str, object]] | None = None) -> int:
        """Record one call: ``call`` is its ``calls`` row (id, cell tags and status), ``messages``
        what the gateway sent, ``reply`` the reply text (None: the call got no reply; "" beside
        tool calls), ``tool_calls`` the tool calls the reply asked for (kept in the output row's
        ``extra`` as ``{"tool_calls": [...]}``). Returns the ``call_messages`` records sent (0 when
        the mode does not keep the call)."""
        if not self._keeps(call.status):
            return 0
        cid, run, purpose, design, task, seed = (call.call_id, call.run_id, call.purpose, call.design, call.task_id,
                                                 call.seed)
        sink, n = self.sink, 0
        for i, m in enumerate(messages):
            content = m.get("content")
            kind = "text"
            if not isinstance(content, str):
                content, kind = _json(content), "json"
            extra = {k: m[k] for k in MESSAGE_EXTRA if k in m}
            role = m.get("role")
            sink(MessageRow(call_id=cid, direction="input", position=i, text_hash=self._text(content), run_id=run,
                            purpose=purpose, design=design, task_id=task, seed=seed,
                            role=role if isinstance(role, str) else None, content_type=kind,
                            extra=_json(extra) if extra else None))
            n += 1
        if reply is not None:
            sink(MessageRow(call_id=cid, direction="output", position=0, text_hash=self._text(reply), run_id=run,
                            purpose=purpose, design=design, task_id=task, seed=seed, role="assistant",
                            extra=_json({"tool_calls": list(tool_calls)}) if tool_calls else None))
            n += 1
        self.messages += n
        return n


__all__ = ["MESSAGE_EXTRA", "RecordSink", "TranscriptRecorder"]
