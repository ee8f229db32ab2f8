"""The trace page of a tool-using node, on a hand-built store (rows written through StoreWriter):
its tool calls from ``tool_calls`` in step order with tool, arguments, status, latency, bytes,
truncation and the observation joined on its text hash; the tool calls a model reply asked for
(from its ``call_messages`` extra); hostile text in a tool result, an argument and an error
escaped; GET only."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from masbench.store import (CallRow, MessageRow, NodeRow, ResultRow, Store, StoreWriter, TextRow, ToolCallRow,
                            text_hash)
from masbench.view import create_app
from masbench.view.trace import trace

RUN, DESIGN, TASK = "tool-run", "react", "hop-2-0000"
HOSTILE = "<script>alert('tool')</script><img src=x onerror=alert(3)>"
CELL = {"run_id": RUN, "purpose": "design", "design": DESIGN, "task_id": TASK, "seed": 0}
ASKED = [{"id": "call_a", "type": "function", "function": {"name": "search", "arguments": '{"query": "Quillon"}'}},
         {"id": "call_b", "type": "function", "function": {"name": "read_document", "arguments": '{"doc_id": "d7"}'}}]
OBS = {"search": "[d7] Quillon Institute — on the Vell\n[d9] Quillon Mill", "read": "The Quillon Institute " + HOSTILE}
# (step, position, tool, arguments, status, error, latency, bytes, truncated, observation key), written out of order
TOOL_ROWS = [
    (1, 0, "read_document", '{"doc_id": "d7"}', "ok", None, 0.004, 5120, True, "read"),
    (0, 1, "calculator", json.dumps(HOSTILE), "invalid_args", f"expr: {HOSTILE}", 0.0001, None, None, None),
    (0, 0, "search", '{"query": "Quillon", "k": 5}', "ok", None, 0.0123, 812, False, "search"),
]


def _text(w: StoreWriter, text: str) -> str:
    h = text_hash(text)
    w.put(TextRow(text_hash=h, text=text, chars=len(text)))
    return h


def _store(path: Path) -> Path:
    st = Store(path)
    st.sql("INSERT INTO runs(run_id, suite, status) VALUES (?, 'hand', 'finished')", [RUN])
    w = StoreWriter(st)
    w.put(ResultRow(run_id=RUN, design=DESIGN, task_id=TASK, seed=0, answer="the Vell", gold="the Vell", correct=True,
                    status="ok", tokens=300, calls=2, ts=1000.0))
    w.put(NodeRow(run_id=RUN, design=DESIGN, task_id=TASK, seed=0, node="act", op="react", agent="searcher",
                  calls=2, tokens=300, status="ok", output="the Vell", t_start=990.0, t_end=999.0, ts=999.0))
    w.put(CallRow(call_id="c1", model_alias="m", model="openai/fake", node="act", agent="searcher", status="ok",
                  finish_reason="tool_calls", t_start=990.0, ts=991.0, latency_s=1.0, **CELL))
    w.put(MessageRow(call_id="c1", direction="input", position=0, text_hash=_text(w, "Which river?"), role="user",
                     content_type="text", **CELL))
    w.put(MessageRow(call_id="c1", direction="output", position=0, text_hash=_text(w, ""), role="assistant",
                     extra=json.dumps({"tool_calls": ASKED}), **CELL))
    for step, pos, tool, args, status, err, lat, nbytes, trunc, obs in TOOL_ROWS:
        w.put(ToolCallRow(tool=tool, status=status, call_id="c1", tool_call_id=f"tc-{step}-{pos}", node="act",
                          step=step, position=pos, arguments=args, error=err, latency_s=lat, bytes_out=nbytes,
                          truncated=trunc, text_hash=_text(w, OBS[obs]) if obs else None, t_start=992.0 + step,
                          ts=993.0 + step, **CELL))
    w.close()
    st.close()
    return path


@pytest.fixture
def tool_store(tmp_path: Path) -> Path:
    return _store(tmp_path / "tools.duckdb")


def _page(store: Path) -> str:
    r = TestClient(create_app(store)).get("/trace", params={"run": RUN, "design": DESIGN, "task": TASK, "seed": 0})
    assert r.status_code == 200
    return r.text


def test_tool_calls_render_in_step_order_with_their_columns(tool_store: Path) -> None:
    page = _page(tool_store)
    body = page.split('<table class="tool-calls">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr data-tool-call="([^"]*)">(.*?)</tr>', body, re.S)
    assert [r[0] for r in rows] == ["tc-0-0", "tc-0-1", "tc-1-0"]  # step, then position
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r[1], re.S)]
             for r in rows]
    assert cells[0][:9] == ["act", "0", "0", "search", '{"query": "Quillon", "k": 5}', "ok", "12.3 ms", "812", "no"]
    assert cells[0][9].startswith("[d7] Quillon Institute — on the Vell")
    assert cells[1][3] == "calculator" and cells[1][5] == f"invalid_args: expr: {HOSTILE}"
    assert cells[1][7:10] == ["–", "–", "–"]  # no bytes, truncation or observation recorded
    assert cells[2][3] == "read_document" and cells[2][7] == "5,120" and cells[2][8] == "yes"
    assert "Tool calls (3)" in page


def test_the_reply_that_asked_for_tools_lists_them(tool_store: Path) -> None:
    page = _page(tool_store)
    asked = page.split('<ol class="asked-tools">', 1)[1].split("</ol>", 1)[0]
    text = html.unescape(re.sub(r"<[^>]+>", "", asked))
    assert "asked for search" in text and '{"query": "Quillon"}' in text and "call_a" in text
    assert text.index("search") < text.index("read_document")
    st = Store(tool_store, read_only=True)
    try:
        (call,) = trace(st, RUN, DESIGN, TASK, 0).calls
    finally:
        st.close()
    assert call.reply is not None and [tc["name"] for tc in call.reply.tool_calls] == ["search", "read_document"]
    assert call.reply.other_extra is None


def test_hostile_text_in_tool_results_arguments_and_errors_is_escaped(tool_store: Path) -> None:
    page = _page(tool_store)
    assert "<script>alert(" not in page and "<img src=x" not in page
    assert html.escape(HOSTILE, quote=False).replace("'", "&#39;") in page  # the observation, escaped
    assert page.count("&lt;script&gt;") >= 3  # observation, arguments (JSON string), error
    client = TestClient(create_app(tool_store))
    assert client.post("/trace", params={"run": RUN, "design": DESIGN, "task": TASK, "seed": 0}).status_code == 405


def test_a_cell_without_tool_calls_shows_no_tool_table(tool_store: Path) -> None:
    st = Store(tool_store)
    st.sql("DELETE FROM tool_calls")
    st.close()
    page = _page(tool_store)
    assert "tool-calls" not in page and "Tool calls (" not in page
