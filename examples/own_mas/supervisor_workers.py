"""A langgraph MAS: a supervisor routes the task among two workers (a solver and a checker) over a
``StateGraph`` until it decides to finish, then answers. Every agent calls its model through the
``openai`` SDK, so the app runs unchanged against any OpenAI-compatible server — here masbench's
metering endpoint, one client (and token) per agent."""

from __future__ import annotations

from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from openai import AsyncOpenAI

STOP = ["\n\n\n", "Question:"]
MAX_STEPS = 3


class State(TypedDict):
    question: str
    notes: list[str]
    steps: int
    next: str
    answer: str


def build(endpoint) -> StateGraph:
    clients = {name: AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.agent(name).api_key)
               for name in ("supervisor", "solver", "checker")}

    async def ask(agent: str, system: str, user: str, max_tokens: int) -> str:
        r = await clients[agent].chat.completions.create(
            model="default", temperature=0.2, max_tokens=max_tokens, stop=STOP,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
        return r.choices[0].message.content or ""

    def seen(state: State) -> str:
        return "\n".join(state["notes"]) or "(nothing yet)"

    async def supervisor(state: State) -> dict:
        if state["steps"] >= MAX_STEPS:
            return {"next": "finish"}
        reply = await ask("supervisor", "You manage a solver and a checker. Reply with one word: solver, checker "
                          "or finish.", f"{state['question']}\n\nWork so far:\n{seen(state)}\n\nWho works next?", 4)
        word = reply.strip().lower()
        nxt = next((w for w in ("solver", "checker", "finish") if w in word), "")
        if not nxt or (nxt == "finish" and not state["notes"]):  # a weak model's reply: keep the work going
            nxt = "solver" if not state["notes"] else "checker"
        return {"next": nxt}

    async def solver(state: State) -> dict:
        text = await ask("solver", "You are a careful problem solver.",
                         f"{state['question']}\n\nThink step by step, briefly. End with \"Answer: <final answer>\".", 64)
        return {"notes": state["notes"] + [f"solver: {text}"], "steps": state["steps"] + 1}

    async def checker(state: State) -> dict:
        text = await ask("checker", "You check the work so far.",
                         f"{state['question']}\n\nWork so far:\n{seen(state)}\n\nIs it right? "
                         "End with \"Answer: <final answer>\".", 48)
        return {"notes": state["notes"] + [f"checker: {text}"], "steps": state["steps"] + 1}

    async def finish(state: State) -> dict:
        text = await ask("supervisor", "You give the team's final answer.",
                         f"{state['question']}\n\nWork so far:\n{seen(state)}\n\nEnd with \"Answer: <final answer>\".", 32)
        return {"answer": text}

    g = StateGraph(State)
    g.add_node("supervisor", supervisor)
    g.add_node("solver", solver)
    g.add_node("checker", checker)
    g.add_node("finish", finish)
    g.add_edge(START, "supervisor")
    g.add_conditional_edges("supervisor", lambda s: s["next"], ["solver", "checker", "finish"])
    g.add_edge("solver", "supervisor")
    g.add_edge("checker", "supervisor")
    g.add_edge("finish", END)
    return g


async def run(task: dict, endpoint) -> str:
    app = build(endpoint).compile()
    out = await app.ainvoke({"question": task["question"], "notes": [], "steps": 0, "next": "", "answer": ""})
    return out["answer"]
