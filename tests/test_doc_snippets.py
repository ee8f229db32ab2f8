"""The documentation cannot rot: every fenced ```yaml, ```bash and ```shell block of README.md and
docs/yaml.md is run.

- A YAML block is a whole file. Its first line may name where it goes (``# agents/my-solver.yaml``);
  otherwise it goes into the folder of its kind (``masbench.library.FOLDERS``) under its ``name``.
  All blocks of a page are written into one temporary library root, then each is loaded through the
  real loader (``Library.load_path``: schema, references, design graph), so a later shell block can
  use them by name.
- A Python block whose first line names a file (``# my_mas.py``: a program design's code) is
  written there too, before the YAML is loaded; other Python blocks are not run.
- A shell block runs with bash (``-e -o pipefail``) as a subprocess in that root, in page order;
  ``.venv`` there links to the checkout's, so ``.venv/bin/masbench …`` lines run as written, and
  stores named relatively land in the temporary root.
- A block that must not run here (``make demo`` itself, a command needing the network or an API
  key, a run of many minutes) is marked by an HTML comment on the line before its fence:
  ``<!-- snippet: skip REASON -->``. The reason is required, and at least one block of each kind
  must run.

The ReAct design of the README must also equal docs/tools.md's and run on the search benchmark."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
import yaml

from masbench.harness import RunOptions, run_suite
from masbench.library import FOLDERS, Library
from masbench.runtime import check_design
from masbench.spec import DesignSpec
from masbench.spec.problems import SpecError
from masbench.spec.yamlpos import load_yaml_file

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "docs" / "yaml.md"]
SHELL = {"bash", "shell", "sh"}
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
SKIP = re.compile(r"^<!--\s*snippet:\s*skip\b(.*?)-->\s*$")
BLOCK_TIMEOUT_S = 1200
"""A guard, not a speed target: a tutorial block takes well under a minute on an idle 2-core machine
(most of it the embedded model on 2 tasks), many minutes on a loaded one."""
PATH_LINE = re.compile(r"^#\s*((?:[\w.-]+/)*[\w.-]+\.ya?ml)\s*$")
PY_PATH_LINE = re.compile(r"^#\s*((?:[\w.-]+/)*[\w.-]+\.py)\s*$")


@dataclass(frozen=True)
class Snippet:
    """One fenced block of a page."""

    page: Path
    line: int
    lang: str
    text: str
    skip: str | None
    """None: the block runs; else the reason given in its ``snippet: skip`` comment ("" if none)."""

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"


def snippets(page: Path) -> list[Snippet]:
    """Every fenced block of ``page`` with a language, and whether it is marked skipped."""
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        before = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
        skip = SKIP.match(before[-1].strip()) if before else None
        out.append(Snippet(page, text.count("\n", 0, m.start()) + 1, m.group(1).lower(), m.group(2),
                           skip.group(1).strip() if skip else None))
    return out


def _all() -> list[Snippet]:
    return [s for p in PAGES for s in snippets(p)]


def test_the_fence_parser_sees_blocks_and_skip_marks(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("a\n\n```yaml\nname: x\n```\n\n<!-- snippet: skip needs a key -->\n```bash\nmake demo\n```\n"
                    "<!-- snippet: skip -->\n\n```shell\nls\n```\n```\nplain\n```\n")
    got = [(s.line, s.lang, s.text, s.skip) for s in snippets(page)]
    assert got == [(3, "yaml", "name: x\n", None), (8, "bash", "make demo\n", "needs a key"),
                   (13, "shell", "ls\n", ""), (16, "", "plain\n", None)]


def test_every_skipped_block_says_why_and_blocks_of_each_kind_run():
    snips = [s for s in _all() if s.lang == "yaml" or s.lang in SHELL]
    unexplained = [s.where for s in snips if s.skip is not None and len(s.skip) < 8]
    assert not unexplained, f"`<!-- snippet: skip REASON -->` needs a reason: {unexplained}"
    for page in PAGES:
        kinds = {("yaml" if s.lang == "yaml" else "shell") for s in snips if s.page == page and s.skip is None}
        assert kinds == {"yaml", "shell"}, f"{page.name}: no runnable block of {({'yaml', 'shell'} - kinds)}"


def _target(s: Snippet, root: Path) -> Path:
    first = s.text.splitlines()[0] if s.text.strip() else ""
    m = PATH_LINE.match(first)
    if m:
        return root / m.group(1)
    data = yaml.safe_load(s.text)
    assert isinstance(data, dict) and isinstance(data.get("name"), str), \
        f"{s.where}: a YAML block is a whole file with a name (or starts with `# folder/file.yaml`)"
    kind = "design" if "nodes" in data else "suite" if "tasks" in data else "agent" if "prompt" in data else None
    folder = {"agent": "agents", "design": "orchestrators", "suite": "tasks"}.get(kind or "", ".")
    return root / folder / f"{data['name']}.yaml"


def write_yaml_blocks(page: Path, root: Path) -> list[tuple[Snippet, Path]]:
    """Write the runnable YAML blocks of ``page`` into the library root ``root`` (and the Python
    blocks that name their file: the code the YAML's program designs run)."""
    out = []
    for s in snippets(page):
        m = PY_PATH_LINE.match(s.text.splitlines()[0]) if s.lang == "python" and s.text.strip() else None
        if m and s.skip is None:
            (root / m.group(1)).parent.mkdir(parents=True, exist_ok=True)
            (root / m.group(1)).write_text(s.text)
        if s.lang == "yaml" and s.skip is None:
            f = _target(s, root)
            assert not f.exists(), f"{s.where}: a second block writes {f.relative_to(root)}"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(s.text)
            out.append((s, f))
    return out


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_yaml_block_loads_through_the_real_loader(page, tmp_path):
    written = write_yaml_blocks(page, tmp_path)
    assert written, f"{page.name} has no runnable YAML block"
    lib = Library([tmp_path], include_cwd=False)
    for s, f in written:
        try:
            lib.load_path(f)
        except SpecError as exc:
            pytest.fail(f"{s.where}: the block does not load:\n" + "\n".join(map(str, exc.problems)))


def test_a_bad_yaml_block_is_refused_by_the_loader(tmp_path):
    # the check above can fail: a `map:` given as a list is refused with the field named
    f = tmp_path / "orchestrators" / "bad.yaml"
    f.parent.mkdir()
    f.write_text("name: bad\nnodes:\n  solve: {agent: cot-solver, map: [a, b]}\noutput: solve\n")
    with pytest.raises(SpecError) as exc:
        Library([tmp_path], include_cwd=False).load_path(f)
    assert "nodes.solve.map" in "\n".join(map(str, exc.value.problems))
    assert load_yaml_file(f).data["nodes"]["solve"]["map"] == ["a", "b"]


def run_shell_blocks(page: Path, root: Path) -> int:
    """Run ``page``'s runnable shell blocks in order in ``root`` (its YAML blocks written there)."""
    write_yaml_blocks(page, root)
    (root / ".venv").symlink_to(ROOT / ".venv")
    env = {k: v for k, v in os.environ.items() if k != "MASBENCH_PATH"}
    env["COLUMNS"] = "140"
    # one llama.cpp thread: ggml's threads spin, and on a loaded 2-core machine (load 15-19) the
    # README's 2-task embedded run took 15 min with 2 threads (1,604 tokens), while one thread
    # evaluated and decoded ~620 tokens in 61 s (benchmarks/embedded_threads_numerics.py)
    env.setdefault("MASBENCH_EMBEDDED_THREADS", "1")
    ran = 0
    for s in snippets(page):
        if s.lang not in SHELL or s.skip is not None:
            continue
        # its own process group, so a timeout ends the masbench processes the block started too
        p = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", s.text], cwd=root, env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = p.communicate(timeout=BLOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            pytest.fail(f"{s.where}: still running after {BLOCK_TIMEOUT_S} s (a loaded machine slows the embedded "
                        f"model many times over)\n--- stdout\n{out[-4000:]}")
        assert p.returncode == 0, (f"{s.where}: exit {p.returncode}\n--- block\n{s.text}--- stdout\n"
                                   f"{out[-4000:]}--- stderr\n{err[-4000:]}")
        ran += 1
    return ran


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.timeout(2 * BLOCK_TIMEOUT_S)
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_shell_block_runs(page, tmp_path):
    assert run_shell_blocks(page, tmp_path) > 0


def test_a_failing_shell_block_fails_and_a_skipped_one_is_not_run(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("```bash\ntouch ran\n```\n\n<!-- snippet: skip never run here -->\n```bash\nexit 9\n```\n")
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    assert run_shell_blocks(page, first) == 1 and (first / "ran").exists()
    page.write_text("```bash\nfalse | cat\n```\n")
    with pytest.raises(AssertionError, match="exit 1"):
        run_shell_blocks(page, second)


# ----- the README's ReAct design -------------------------------------------------------------------

def _design_snippet(doc: Path) -> str:
    blocks = re.findall(r"```yaml\n(# a design: one ReAct searcher.*?)```", doc.read_text(), re.S)
    assert len(blocks) == 1, f"{doc.name}: the ReAct design snippet is missing or repeated"
    return blocks[0]


def test_the_readme_and_the_tools_page_show_the_same_design():
    assert _design_snippet(ROOT / "README.md") == _design_snippet(ROOT / "docs" / "tools.md")


async def test_the_readme_react_design_checks_and_runs(tmp_path):
    text = _design_snippet(ROOT / "README.md")
    spec = DesignSpec.model_validate(yaml.safe_load(text))
    assert check_design(spec, None, Library()) == []
    lib = tmp_path / "lib"
    (lib / "orchestrators").mkdir(parents=True)
    (lib / "orchestrators" / "my_react.yaml").write_text(text)
    suite = tmp_path / "snippet.yaml"
    suite.write_text(
        "name: snippet\n"
        "models:\n  default: {id: sim/searcher, sim: {accuracy: {default: 0.9}, tools: {search: 1.0}}}\n"
        "tasks:\n  - {generator: search, values: [2], n: 2, seed: 0, params: {corpus_size: 200}}\n"
        "designs: [my-react]\ncot_sc: {enabled: false}\n"
        f"store: {tmp_path / 'snippet.duckdb'}\n")
    s = await run_suite(RunOptions(suite=str(suite), lib=[lib]))
    con = duckdb.connect(str(s.store), read_only=True)
    try:
        ok = con.execute("SELECT count(*) FROM results WHERE run_id = ? AND status = 'ok'", [s.run_id]).fetchall()[0][0]
        searches = con.execute("SELECT count(*) FROM tool_calls WHERE run_id = ? AND tool = 'search' AND status = 'ok'",
                               [s.run_id]).fetchall()[0][0]
    finally:
        con.close()
    assert ok == 2 and searches >= 2
