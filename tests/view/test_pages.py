"""The viewer's pages without a browser (Starlette's TestClient over the real app) on a finished
simulated run: status and content of every page kind, escaping of hostile model text, 404s that
say what is missing, GET only, and the static export (relative links, no secrets)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import urlencode

import duckdb
import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from masbench.cli import app as cli_app
from masbench.view import FILTERS, Grid, StaticLinks, Trace, create_app, export_site, filename, trace_href
from viewrun import FIRST_TASK, HOSTILE, debater_call, discordant_cell, view_run  # noqa: F401 - fixture

CANARY = "sk-canary-VIEW-0123456789abcdef"


def page_text(page: str) -> str:
    """What a reader sees of an HTML page: its tags dropped and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def client(view_run):
    store, _ = view_run
    return TestClient(create_app(store))


def _q(kind: str, **p) -> str:
    return f"/{kind}?{urlencode(p)}"


@pytest.mark.slow
def test_runs_list_links_to_the_run(client, view_run):
    store, run = view_run
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert f'href="/run?run={run}"' in r.text and "SIMULATED" in r.text
    con = duckdb.connect(str(store), read_only=True)
    cells, calls = con.execute("SELECT (SELECT count(*) FROM results WHERE run_id = $1), "
                               "(SELECT count(*) FROM calls WHERE run_id = $1)", [run]).fetchall()[0]
    con.close()
    assert f'<td class="n">{cells}</td><td class="n">{calls}</td>' in r.text  # the run's cells and calls
    assert "script-src" not in r.headers["content-security-policy"] and "default-src 'none'" in \
        r.headers["content-security-policy"]


def test_overview_shows_the_reports_tables_and_links_the_filters(client, view_run):
    _, run = view_run
    r = client.get(_q("run", run=run))
    assert r.status_code == 200
    for d in ("cot", "cot-sc[k=3]", "debate-tiny"):
        assert d in page_text(r.text)
    assert "Marginal utility" in r.text and "Verdicts" in r.text and "<svg" in r.text
    assert "accuracy [95% CI]" in r.text  # the report's own headers
    for name in FILTERS:
        assert f"filter={name}" in r.text


@pytest.mark.slow
def test_grid_filters_match_their_sql_rules(client, view_run):
    store, run = view_run
    con = duckdb.connect(str(store), read_only=True)
    wrong = con.execute("SELECT count(DISTINCT (task_id, seed)) FROM results WHERE run_id = ? AND design = 'debate-tiny' "
                        "AND NOT coalesce(correct, false)", [run]).fetchall()[0][0]
    trunc = con.execute("SELECT count(DISTINCT (task_id, seed)) FROM calls WHERE run_id = ? AND purpose = 'design' "
                        "AND status = 'truncated'", [run]).fetchall()[0][0]
    con.close()
    r = client.get(_q("grid", run=run, filter="wrong", design="debate-tiny"))
    assert r.status_code == 200 and f"{wrong} task" in r.text
    assert client.get(_q("grid", run=run, filter="truncated")).text.count("<tr>") - 1 == trunc
    sc = client.get(_q("grid", run=run, filter="wrong-sc-right", design="debate-tiny"))
    assert sc.status_code == 200 and "rounded to the nearest stored k" in sc.text and "k_match" in sc.text
    for name in FILTERS:
        assert client.get(_q("grid", run=run, filter=name)).status_code == 200


def test_trace_shows_messages_tokens_pool_and_graph(client, view_run):
    store, run = view_run
    task, seed = discordant_cell(store, run, "debate-tiny")
    call = debater_call(store, run, "debate-tiny", task, seed)
    r = client.get(_q("trace", run=run, design="debate-tiny", task=task, seed=seed))
    assert r.status_code == 200
    shown = page_text(r.text)  # the text a reader sees (tags dropped, entities decoded)
    assert call["reply"] in shown and call["inputs"][-1] in shown
    rows = re.findall(r'<tr class="tokens">(.*?)</tr>', r.text, re.S)
    first = [c for c in re.findall(r'<td class="n"[^>]*>([^<]*)', rows[0])]
    assert first[:7] == [str(call[k]) for k in ("prompt_tokens", "completion_tokens", "prompt_fresh_tokens",
                                                  "cached_tokens", "cache_write_tokens", "completion_visible_tokens",
                                                  "reasoning_tokens")]
    assert "Vote tally" in r.text and "design graph" in r.text and "tl-bar" in r.text
    assert "debate.argue" in r.text and "tiny-decider" in r.text


def test_side_by_side_shows_both_designs(client, view_run):
    _, run = view_run
    r = client.get(_q("compare", run=run, a="cot", b="debate-tiny", task=FIRST_TASK, seed=0))
    assert r.status_code == 200 and "cot ⇆ debate-tiny" in r.text and r.text.count('class="call"') >= 1 + 5


def test_hostile_model_text_is_escaped(client, view_run):
    _, run = view_run
    pages = [client.get(_q("trace", run=run, design="cot", task=FIRST_TASK, seed=0)).text,
             client.get(_q("grid", run=run, filter="all")).text,
             client.get(_q("compare", run=run, a="cot", b="debate-tiny", task=FIRST_TASK, seed=0)).text]
    for text in pages:
        assert "<script" not in text and "<img" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_unknown_things_are_404_with_a_message(client, view_run):
    _, run = view_run
    r = client.get(_q("run", run="no-such-run"))
    assert r.status_code == 404 and "no run &#39;no-such-run&#39;" in r.text
    r = client.get(_q("trace", run=run, design="cot", task="no-such-task", seed=0))
    assert r.status_code == 404 and "has no cell" in r.text and "no-such-task" in r.text
    assert client.get(_q("grid", run=run, filter="nope")).status_code == 404
    assert client.get(_q("grid", run=run, filter="all", page=99)).status_code == 404
    assert client.get("/nosuchkind").status_code == 404
    assert client.get(_q("trace", run=run, design="cot", task=FIRST_TASK, seed="x")).status_code == 404


def test_only_get_is_served(client, view_run):
    _, run = view_run
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.request(method, "/").status_code == 405
        assert client.request(method, _q("run", run=run)).status_code == 405
    assert client.head("/").status_code == 200


@pytest.mark.slow
def test_static_export_has_every_linked_page_no_dead_link_and_no_secret(view_run, tmp_path, monkeypatch):
    store, run = view_run
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    res = CliRunner().invoke(cli_app, ["view", "--store", str(store), "--export", str(tmp_path / "site"), "--run", run])
    assert res.exit_code == 0, res.output
    site = tmp_path / "site"
    files = {p.name for p in site.iterdir()}
    con = duckdb.connect(str(store), read_only=True)
    cells = con.execute("SELECT design, task_id, seed FROM results WHERE run_id = ?", [run]).fetchall()
    con.close()
    assert {filename(Trace(run, d, t, s)) for d, t, s in cells} <= files  # every trace of the run
    assert {filename(Grid(run, f, None, 1)) for f in FILTERS} <= files
    for p in site.iterdir():
        text = p.read_text(encoding="utf-8")
        assert CANARY not in text
        for href in re.findall(r'href="([^"]+)"', text):
            assert "/" not in href and href in files, (p.name, href)  # relative, and written
    assert trace_href(run, "debate-tiny", FIRST_TASK, 0, base="viewer/") == "viewer/" + filename(
        Trace(run, "debate-tiny", FIRST_TASK, 0))


def test_static_names_are_safe_and_unique_for_any_task_id():
    ids = ["a/b", "a\\b", "..", "a b", "A:B", "ünï💥", "x" * 300, "a?b#c", "CON", "a/b "]
    names = {filename(Trace("r", "d", t, 0)) for t in ids}
    assert len(names) == len(ids)
    for n in names:
        assert re.fullmatch(r"[a-z0-9.\-]+\.html", n) and len(n) < 100


def test_the_command_refuses_a_missing_store_and_a_public_host(tmp_path):
    r = CliRunner().invoke(cli_app, ["view", "--store", str(tmp_path / "none.duckdb")])
    assert r.exit_code == 2 and "no store at" in r.output
    (tmp_path / "s.duckdb").write_bytes(b"")
    r = CliRunner().invoke(cli_app, ["view", "--store", str(tmp_path / "s.duckdb"), "--host", "0.0.0.0"])
    assert r.exit_code == 2 and "loopback" in r.output


@pytest.mark.slow
def test_export_links_are_the_pages_of_static_links(view_run, tmp_path):
    store, run = view_run
    res = export_site(store, tmp_path / "x", run)
    assert res.missing == [] and res.pages == len(list((tmp_path / "x").iterdir()))
    assert StaticLinks(base="v/").href(Grid(run)).startswith("v/grid-")


@pytest.mark.slow
def test_export_reports_progress_page_by_page(view_run, tmp_path):
    store, run = view_run
    seen: list[tuple[int, int]] = []
    res = export_site(store, tmp_path / "site", run, progress=lambda w, k: seen.append((w, k)))
    assert [w for w, _ in seen] == list(range(1, res.pages + 1))  # once per page written, in order
    assert all(k >= w for w, k in seen) and seen[-1] == (res.pages, res.pages)
    assert len(list((tmp_path / "site").glob("*.html"))) == res.pages


def _expected_discordant(store: Path, run: str, design: str) -> tuple[set, set]:
    """(wrong where the CoT-SC majority is right, right where it is wrong) for ``design``, worked out
    here from the raw rows: the stored k nearest the verdict row's k_match (ties to the smaller k),
    the cell's maj@k accuracy at that k > 0.5 (right) or < 0.5 (wrong)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        ks = sorted(k for (k,) in con.execute("SELECT DISTINCT k FROM cot_sc_task_curve WHERE run_id = ?", [run]).fetchall())
        units = {u for (u,) in con.execute("SELECT unit FROM paired_tests WHERE run_id = ? AND is_verdict",
                                            [run]).fetchall()}
        assert len(units) == 1  # the run's verdict unit (baselines' rows carry no verdict, but have this unit too)
        km = con.execute("SELECT k_match FROM paired_tests WHERE run_id = ? AND design = ? AND against = 'curve' "
                         "AND axis = 'all' AND unit = ?", [run, design, units.pop()]).fetchall()
        acc = {(t, s): a for t, s, k, a in con.execute(
            "SELECT task_id, seed, k, accuracy FROM cot_sc_task_curve WHERE run_id = ?", [run]).fetchall()}
        acc_k: dict = {}
        if km and km[0][0] is not None:
            k = min(ks, key=lambda k: (abs(k - km[0][0]), k))
            acc_k = {(t, s): a for (t, s, kk, a) in con.execute(
                "SELECT task_id, seed, k, accuracy FROM cot_sc_task_curve WHERE run_id = ? AND k = ?", [run, k]).fetchall()}
        assert acc  # the run has a pool curve
        cells = con.execute("SELECT task_id, seed, correct FROM results WHERE run_id = ? AND design = ?",
                            [run, design]).fetchall()
    finally:
        con.close()
    loses = {(t, s) for t, s, c in cells if not c and (t, s) in acc_k and acc_k[(t, s)] > 0.5}
    wins = {(t, s) for t, s, c in cells if c and (t, s) in acc_k and acc_k[(t, s)] < 0.5}
    return loses, wins


def _listed(page: str) -> set:
    return {(t, int(s)) for t, s in re.findall(r'<tr><td>([^<]+)</td><td class="n">(\d+)</td>', page)}


@pytest.mark.slow
def test_discordant_filters_list_exactly_the_paired_tests_discordant_tasks(client, view_run):
    store, run = view_run
    seen_any = False
    for design in ("cot", "cot-sc[k=3]", "debate-tiny"):
        loses, wins = _expected_discordant(store, run, design)
        seen_any |= bool(loses or wins)
        for name, want in (("wrong-sc-right", loses), ("right-sc-wrong", wins)):
            r = client.get(_q("grid", run=run, filter=name, design=design))
            assert r.status_code == 200
            assert _listed(r.text) == want, (design, name)
    assert seen_any  # the fixture run has discordant tasks to list
