"""Batched decoding of the embedded model: concurrent samples of one prompt step together.

A CoT-SC pool asks for k samples of the same prompt at once. Decoded one after another, each
sample pays a full forward pass per token; in one ``llama_decode`` the k next tokens of k
sequences share the weight reads, which is where a small model's time goes on a CPU
(measured 2.1x for k = 8 on 2 cores, ``benchmarks/embedded_throughput.py``). The technique is
llama.cpp's own "parallel" example (sequences sharing a prompt's KV cells via
``llama_memory_seq_cp``, one batch carrying one token per live sequence); this is our
implementation of it on llama-cpp-python's low-level bindings.

Sampling semantics do not depend on batching: every request has its own llama.cpp sampler
chain (top-k 40, top-p, min-p 0.05, temperature, then a ``dist`` sampler seeded with the
request's seed; greedy at temperature 0 — llama-cpp-python's ``create_completion`` defaults),
so a sample is the same function of (prompt, seed) whether it was decoded alone or next to
others. Batched logits can differ from single-sequence ones in float rounding only.

Sequence 0 is the prompt cache: after a group it holds the prompt and the first request's
generated tokens, and a next group with the same prompt evaluates only its last token (for
fresh logits); any other prompt is evaluated into an empty cache (see :meth:`BatchDecoder._start`). Requests that arrive while a group
is decoding join it at the next step when their prompt is the same and a sequence slot and KV
cells are free (they copy the prompt's cells); others wait for the next group. Different
prompts are not batched: evaluated into cells after another sequence's, a prompt's logits
changed (see :meth:`BatchDecoder.run`). A finished sequence keeps its slot and cells
until its group ends (freeing them mid-group changes the other sequences' logits in llama.cpp;
see :meth:`BatchDecoder.run`). Checked: 144 of 144 samples (8 seeds, two prompts, alone, all
at once and joining mid-way) were token-identical to the same seed decoded alone from an empty cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from litellm.llms.custom_llm import CustomLLMError

N_SEQ = 8
"""Sequences decoded together at most (the pool's k above this is served in several groups)."""

_TOP_K, _MIN_P = 40, 0.05  # llama-cpp-python's create_completion defaults


@dataclass(slots=True)
class SampleRequest:
    """One completion to decode: the prompt's tokens and how to sample and stop.

    Attributes:
        prompt: prompt token ids (already checked against the context size).
        n_max: at most this many tokens are generated.
        stops: stop strings (the text is cut before the first one); end-of-generation tokens
            always stop.
        temperature: sampling temperature; 0 (or below) means greedy.
        top_p: nucleus mass kept.
        seed: seed of this request's ``dist`` sampler.
        finish: called once on the worker thread with the :class:`EmbeddedCallResult`, as soon as
            this request is finished (others of its group may still be decoding).
    """

    prompt: list[int]
    n_max: int
    stops: list[str]
    temperature: float
    top_p: float
    seed: int
    finish: Callable[[Any], None]


@dataclass
class EmbeddedCallResult:
    """What one call produced, with llama.cpp's real token counts.

    Attributes:
        text: generated text (stop sequences removed).
        finish_reason: ``"stop"`` or ``"length"``.
        prompt_tokens: tokens in the prompt.
        completion_tokens: tokens generated.
        prompt_tokens_evaluated: prompt tokens actually run through the model (the rest
            were reused from the KV cache of the previous call).
        seconds: wall time of the call on the worker thread.
    """

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    prompt_tokens_evaluated: int
    seconds: float

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens reused from the KV cache."""
        return max(0, self.prompt_tokens - self.prompt_tokens_evaluated)


@dataclass(slots=True)
class _Seq:
    req: SampleRequest
    seq: int
    sampler: Any
    pending: int  # the token to evaluate next for this sequence
    pos: int  # its position
    evaluated: int  # prompt tokens this request evaluated
    reason: str = "length"
    t0: float = field(default_factory=time.perf_counter)
    tokens: list[int] = field(default_factory=list)
    raw: bytearray = field(default_factory=bytearray)
    text: str = ""


class BatchDecoder:
    """Owns a llama.cpp context with ``N_SEQ`` sequences over a unified KV cache of ``n_ctx``
    cells and decodes groups of requests in it. Not thread-safe: one worker thread uses it."""

    def __init__(self, llm: Any, n_ctx: int, threads: int) -> None:
        import llama_cpp  # the engine checked it is installed before building a decoder

        self._ll = llama_cpp
        self._llm = llm
        p = llama_cpp.llama_context_default_params()
        p.n_ctx, p.n_batch, p.n_ubatch, p.n_seq_max = n_ctx, 512, 512, N_SEQ
        p.n_threads = p.n_threads_batch = threads
        p.kv_unified = True  # one pool of cells: sequences share the prompt's cells
        ctx = llama_cpp.llama_init_from_model(llm.model, p)
        if not ctx:
            raise RuntimeError("llama.cpp could not create a context for the embedded model")
        mem = llama_cpp.llama_get_memory(ctx)
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        if mem is None or vocab is None:  # NULL only on a broken context or model
            raise RuntimeError("llama.cpp gave no KV memory or vocabulary for the embedded model")
        self._ctx = ctx
        self.n_ctx = n_ctx
        self._mem = mem
        self._vocab = vocab
        self._batch = llama_cpp.llama_batch_init(512, 0, 1)
        self._kv0: list[int] = []  # tokens held by sequence 0, by position (the prefix cache)
        self.decode_calls = 0
        self.peak_group = 0

    # ------------------------------------------------------------------ low level
    def _decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        """One llama_decode of (token, pos, seq, wants_logits) items (at most 512)."""
        b = self._batch
        b.n_tokens = len(items)
        for j, (tok, pos, seq, logits) in enumerate(items):
            b.token[j], b.pos[j], b.n_seq_id[j], b.logits[j] = tok, pos, 1, logits
            b.seq_id[j][0] = seq
        rc = self._ll.llama_decode(self._ctx, b)
        self.decode_calls += 1
        if rc != 0:
            raise CustomLLMError(status_code=500, message=f"llama_decode failed with code {rc} (batch of {len(items)})")
        for tok, pos, seq, _ in items:
            if seq == 0:
                del self._kv0[pos:]
                self._kv0.append(tok)

    def _sampler(self, r: SampleRequest) -> Any:
        ll = self._ll
        chain = ll.llama_sampler_chain_init(ll.llama_sampler_chain_default_params())
        if r.temperature <= 0:
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_greedy())
        else:
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_top_k(_TOP_K))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_top_p(r.top_p, 1))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_min_p(_MIN_P, 1))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_temp(r.temperature))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_dist(r.seed & 0xFFFFFFFF))
        return chain

    def holds(self, prompt: list[int]) -> bool:
        """The prefix cache holds all but the last token of ``prompt`` (a next group of it
        evaluates one token)."""
        return self._kv0[:len(prompt) - 1] == prompt[:-1]

    def reset(self) -> None:
        """Forget the prefix cache (the next prompt is evaluated in full)."""
        self._ll.llama_memory_clear(self._mem, True)
        self._kv0 = []

    # ------------------------------------------------------------------ a group
    def _start(self, prompt: list[int]) -> int:
        """Leave ``prompt[:-1]`` in sequence 0, reusing the cached prefix, and empty the other
        sequences; return the number of prompt tokens evaluated for it (the last prompt token is
        evaluated in the first step)."""
        keep = len(prompt) - 1
        if not self.holds(prompt):
            # Only a whole-prompt hit is reused. A prompt evaluated after a partial prefix went
            # into whichever cells llama.cpp picked, and its logits then differed from the
            # same prompt evaluated into an empty cache (up to ~1 on logits of scale 30), so a
            # sample depended on the calls before it. From an empty cache every prompt sits in
            # cells 0..n-2, the layout all samples are checked against.
            self.reset()
            keep = 0
        self._ll.llama_memory_seq_rm(self._mem, 0, keep, -1)
        del self._kv0[keep:]
        for s in range(1, N_SEQ):
            self._ll.llama_memory_seq_rm(self._mem, s, -1, -1)
        self._eval_prompt(prompt, keep, 0)
        return len(prompt) - 1 - keep

    def _eval_prompt(self, prompt: list[int], start: int, seq: int) -> None:
        """Evaluate ``prompt[start:-1]`` into ``seq`` (no logits: the last token comes with the step)."""
        n = len(prompt)
        for i in range(start, n - 1, 512):
            self._decode([(t, i + j, seq, False) for j, t in enumerate(prompt[i:min(i + 512, n - 1)])])

    def run(self, first: SampleRequest, poll: Callable[[Callable[[SampleRequest], bool]], None]) -> None:
        """Decode ``first`` together with the requests that join it. Before the first step and
        after each one, ``poll(take)`` offers waiting requests (in arrival order) to ``take``,
        which returns True when one joined: the same prompt as ``first``, a free sequence slot and
        KV cells for ``n_max + 1`` tokens. A joiner copies the cells of all but the prompt's last
        token from sequence 0. Each request's ``finish`` is called as soon as it is done; on a
        llama.cpp failure this raises (the cache is reset; the caller fails the requests that
        were not finished)."""
        cells = self.n_ctx - (len(first.prompt) - 1) - (first.n_max + 1)  # cells left for joiners
        live: list[_Seq] = []
        free = list(range(1, N_SEQ))

        def take(r: SampleRequest) -> bool:
            nonlocal cells
            # Only samples of the same prompt join: a different prompt evaluated into cells
            # after another sequence's came out with different logits (up to 1.0 on logits of
            # scale 30, llama-cpp-python 0.3.36; its samples then depended on what ran beside
            # it), so it waits for its own group.
            if r.prompt != first.prompt:
                return False
            if not free or r.n_max + 1 > cells:
                return False
            seq = free.pop(0)
            cells -= r.n_max + 1
            n = len(r.prompt)
            self._ll.llama_memory_seq_cp(self._mem, 0, seq, 0, n - 1)  # all but the last prompt token
            live.append(_Seq(r, seq, self._sampler(r), r.prompt[-1], n - 1, 1))
            return True

        try:
            evaluated = self._start(first.prompt)
            live.append(_Seq(first, 0, self._sampler(first), first.prompt[-1], len(first.prompt) - 1, evaluated + 1))
            while live:
                if free:
                    poll(take)
                self.peak_group = max(self.peak_group, len(live))
                self._decode([(s.pending, s.pos, s.seq, True) for s in live])
                still: list[_Seq] = []
                for j, s in enumerate(live):
                    if self._step(s, self._ll.llama_sampler_sample(s.sampler, self._ctx, j)):
                        still.append(s)
                        continue
                    # A finished sequence keeps its cells and its slot until the group ends:
                    # freeing them mid-group lets llama.cpp place later tokens in the freed
                    # cells, and the other sequences' logits then change (measured: up to 0.8
                    # on logits of scale 30, llama-cpp-python 0.3.36), so samples would depend
                    # on what was decoded beside them.
                    s.req.finish(self._finish(s))
                live[:] = still
        except BaseException:
            for s in live:
                self._free(s)
            self.reset()
            raise

    def _step(self, s: _Seq, tok: int) -> bool:
        """Take the sampled token; False when the sequence is finished."""
        if self._ll.llama_vocab_is_eog(self._vocab, tok):
            s.reason = "stop"
            return False
        s.tokens.append(tok)
        s.raw += self._llm.detokenize([tok])
        if s.req.stops:  # without stop strings the text is decoded once, at the end
            s.text = s.raw.decode("utf-8", errors="ignore")
            for stop in s.req.stops:
                cut = s.text.find(stop)
                if cut >= 0:
                    s.text, s.reason = s.text[:cut], "stop"
                    return False
        if len(s.tokens) >= s.req.n_max:
            return False
        s.pending, s.pos = tok, s.pos + 1
        return True

    def _free(self, s: _Seq) -> None:
        if s.sampler is not None:
            self._ll.llama_sampler_free(s.sampler)
            s.sampler = None

    def _finish(self, s: _Seq) -> EmbeddedCallResult:
        self._free(s)
        if not s.req.stops:
            s.text = s.raw.decode("utf-8", errors="ignore")
        return EmbeddedCallResult(text=s.text, finish_reason=s.reason,
                       prompt_tokens=len(s.req.prompt), completion_tokens=len(s.tokens),
                       prompt_tokens_evaluated=s.evaluated, seconds=time.perf_counter() - s.t0)


__all__ = ["N_SEQ", "BatchDecoder", "EmbeddedCallResult", "SampleRequest"]
