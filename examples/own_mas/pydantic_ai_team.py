"""A third-party agent framework, unmodified: two Pydantic AI agents (a solver, then a reviewer that
checks its work — Pydantic AI's "programmatic hand-off" pattern), each on an OpenAI-compatible
model whose base URL is masbench's endpoint and whose key is that agent's token. Nothing else
in the framework knows about masbench; its calls are metered, budgeted and attributed at the wire."""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

STOP = ["\n\n\n", "Question:"]


def _model(endpoint, agent: str) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=endpoint.base_url, api_key=endpoint.agent(agent).api_key)
    return OpenAIChatModel(endpoint.model, provider=provider)


async def solve(task: dict, endpoint) -> str:
    solver = Agent(_model(endpoint, "solver"), instructions="You are a careful problem solver.",
                   model_settings={"temperature": 0.8, "max_tokens": 64, "stop_sequences": STOP})
    reviewer = Agent(_model(endpoint, "reviewer"), instructions="You check a solution and give the final answer.",
                     model_settings={"temperature": 0.1, "max_tokens": 48, "stop_sequences": STOP})
    question = task["question"]
    draft = await solver.run(f"{question}\n\nThink step by step, briefly. End with \"Answer: <final answer>\".")
    final = await reviewer.run(f"{question}\n\nProposed solution:\n{draft.output}\n\n"
                               "Is it right? End with \"Answer: <final answer>\".")
    return final.output
