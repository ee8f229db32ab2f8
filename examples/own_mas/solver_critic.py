"""A two-agent MAS on the ``openai`` SDK: a solver drafts, a critic checks the draft and gives the
final answer. Nothing masbench-specific but the endpoint it is handed: each agent is a client
with its own token (``endpoint.agent(name)``), so every call is attributed to it."""

from __future__ import annotations

from openai import AsyncOpenAI

STOP = ["\n\n\n", "Question:"]


async def solve(task: dict, endpoint) -> str:
    solver = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.agent("solver").api_key)
    critic = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.agent("critic").api_key)
    question = task["question"]
    draft = await solver.chat.completions.create(
        model="default", temperature=0.8, max_tokens=64, stop=STOP,
        messages=[{"role": "system", "content": "You are a careful problem solver."},
                  {"role": "user", "content": f"{question}\n\nThink step by step, briefly. "
                                              "End with \"Answer: <final answer>\"."}])
    check = await critic.chat.completions.create(
        model="default", temperature=0.1, max_tokens=48, stop=STOP,
        messages=[{"role": "system", "content": "You check a solution and give the final answer."},
                  {"role": "user", "content": f"{question}\n\nProposed solution:\n{draft.choices[0].message.content}"
                                              "\n\nIs it right? End with \"Answer: <final answer>\"."}])
    return check.choices[0].message.content or ""
