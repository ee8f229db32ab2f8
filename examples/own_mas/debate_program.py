"""LLM debate (the bundled ``debate-tiny`` design) written as a plain Python program on the
``openai`` SDK: the same prompts, parameters and seeds, so on the same model it makes the same
calls as the YAML design — the metering endpoint adds nothing and loses nothing.

Each role argues in parallel; from round 2 on it sees the previous round's arguments; a decider
gives the final answer. Sample indices follow the YAML design's: ``seed + round × 10007 + role``
for the debaters, ``seed`` for the decider."""

from __future__ import annotations

import asyncio
import re

from openai import AsyncOpenAI

ROUND_STRIDE = 10_007
STOP = ["\n\n\n", "Question:"]
DEBATER_SYSTEM = "You are a {role}. You debate with other experts to find the right answer."
DEBATER_PROMPT = ("{question}\n\n{inputs}\n\nConsider the other agents' solutions, if any, then give your own "
                  "solution briefly.\nEnd with \"Answer: <final answer>\".\n")
DECIDER_SYSTEM = "You are a careful judge who weighs several solutions."
DECIDER_PROMPT = "{question}\n\nSolutions to consider:\n{inputs}\n\nGive the final answer. End with \"Answer: <final answer>\".\n"
_BLANKS = re.compile(r"\n\s*\n(?:\s*\n)+")


def _numbered(texts: list[str]) -> str:
    return "\n\n".join(f"[{i}] {t}" for i, t in enumerate(texts, 1))


def _user(text: str) -> str:
    return _BLANKS.sub("\n\n", text) if "\n\n\n" in text else text


async def debate(task: dict, endpoint) -> str:
    roles = task["params"].get("roles", ["Math Professor", "Grade School Teacher"])
    rounds = int(task["params"].get("rounds", 2))
    debater = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.agent("tiny-debater").api_key)
    decider = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.agent("tiny-decider").api_key)
    question = task["question"]

    async def argue(r: int, i: int, role: str, previous: list[str]) -> str:
        inputs = f"argue (previous round):\n{_numbered(previous)}" if previous else ""
        reply = await debater.chat.completions.create(
            model="default", temperature=0.8, max_tokens=64, stop=STOP, seed=endpoint.seed + r * ROUND_STRIDE + i,
            messages=[{"role": "system", "content": DEBATER_SYSTEM.format(role=role)},
                      {"role": "user", "content": _user(DEBATER_PROMPT.format(question=question, inputs=inputs))}])
        return reply.choices[0].message.content or ""

    args: list[str] = []
    for r in range(1, rounds + 1):
        args = list(await asyncio.gather(*(argue(r, i, role, args) for i, role in enumerate(roles))))
    reply = await decider.chat.completions.create(
        model="default", temperature=0.1, max_tokens=32, stop=STOP, seed=endpoint.seed,
        messages=[{"role": "system", "content": DECIDER_SYSTEM},
                  {"role": "user", "content": _user(DECIDER_PROMPT.format(question=question,
                                                                          inputs=f"debate:\n{_numbered(args)}"))}])
    return reply.choices[0].message.content or ""
