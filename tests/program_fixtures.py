"""Program designs for the tests: the programs' code, their design files, and a suite that lists
them, written into a test's tmp folder (importable: pytest puts tests/ on the path)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import duckdb

SOLVER_CRITIC = '''
from openai import AsyncOpenAI

async def solve(task, endpoint):
    solver = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.agent("solver").api_key)
    critic = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.agent("critic").api_key)
    q = task["question"]
    r = await solver.chat.completions.create(model="default", max_tokens=96,
        messages=[{"role": "user", "content": q + "\\nThink step by step. End with Answer: <x>"}])
    draft = r.choices[0].message.content
    r = await critic.chat.completions.create(model="default", max_tokens=96,
        messages=[{"role": "user", "content": q + "\\nProposed solution:\\n" + draft + "\\nCheck it. End with Answer: <x>"}])
    return r.choices[0].message.content
'''

LOOPER = '''
import asyncio
from openai import AsyncOpenAI

async def solve(task, endpoint):
    client = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key)
    while True:  # never stops by itself: only the budget stops it
        await client.chat.completions.create(model="default", max_tokens=64,
            messages=[{"role": "user", "content": task["question"]}])
'''

SLEEPER = '''
import asyncio
from openai import AsyncOpenAI

async def solve(task, endpoint):
    client = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key)
    await client.chat.completions.create(model="default", messages=[{"role": "user", "content": task["question"]}])
    await asyncio.sleep(3600)
'''

RAISER = '''
def solve(task, endpoint):
    if task["id"].endswith("1"):
        raise ValueError("the program gave up on " + task["id"])
    return {"answer": "7", "text": "It is 7."}
'''

SYNC_SDK = '''
from openai import OpenAI

def solve(task, endpoint):  # a plain function on the sync client: run in a thread
    client = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key)
    r = client.chat.completions.create(model="default", messages=[{"role": "user", "content": task["question"]}],
                                       user="solo")
    return r.choices[0].message.content
'''

SUITE = """name: {name}
models: {{default: {model}}}
tasks:
  - {{generator: masbench.depth, values: [1], n: {n}, seed: 3}}
designs: {designs}
cot_sc: {{k_max: 2}}
budget: {{per_task_tokens: {budget}}}
concurrency: 4
store: {store}
"""


def write_program(root: Path, name: str, code: str | None, design: str) -> None:
    """``root/<name>.py`` (when ``code``) and ``root/orchestrators/<name>.yaml`` (``design``'s text)."""
    (root / "orchestrators").mkdir(parents=True, exist_ok=True)
    if code is not None:
        (root / f"{name}.py").write_text(textwrap.dedent(code))
        sys.modules.pop(name, None)
    (root / "orchestrators" / f"{name}.yaml").write_text(textwrap.dedent(design))


def write_suite(root: Path, name: str, designs: str, model: str = "sim/p60", n: int = 4, budget: int = 20000) -> Path:
    (root / "tasks").mkdir(parents=True, exist_ok=True)
    p = root / "tasks" / f"{name}.yaml"
    p.write_text(SUITE.format(name=name, model=model, n=n, designs=designs, budget=budget,
                              store=root / "runs" / f"{name}.duckdb"))
    return p


def q(store: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


COMMAND = '''
import json, os, sys

task = json.load(sys.stdin)
if task["params"].get("fail"):
    print("something broke in the program", file=sys.stderr)
    sys.exit(3)
if task["params"].get("hang"):
    import time
    open("hung.pid", "w").write(str(os.getpid()))
    time.sleep(3600)
from openai import OpenAI

client = OpenAI()  # unmodified: OPENAI_BASE_URL / OPENAI_API_KEY from the environment
env = json.dumps(dict(os.environ), sort_keys=True)
keys = json.loads(os.environ["MASBENCH_AGENT_KEYS"])
r = client.chat.completions.create(model="default", messages=[
    {"role": "system", "content": "Everything I can see: " + env},
    {"role": "user", "content": task["question"]}])
worker = OpenAI(api_key=keys["worker"])
worker.chat.completions.create(model="default", messages=[{"role": "user", "content": "check " + task["question"]}])
print(json.dumps({"text": r.choices[0].message.content + " | env: " + env, "answer": "5"}))
'''


ECHO_META = '''
import json

def solve(task, endpoint):  # writes down what it was handed, so a test can see it
    with open("handed.json", "w") as f:
        json.dump({"task": task, "models": endpoint.models, "seed": endpoint.seed}, f)
    return ["0"]
'''
