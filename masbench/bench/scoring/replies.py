"""Finding the answer part of a reply the way the benchmarks' own scorers do."""

from __future__ import annotations

import re
import string

from ...text import _clean, boxed_spans, extract_raw

_ANSWER_TAG = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.IGNORECASE | re.DOTALL)


def answer_region(reply: str) -> str:
    """The body of the last ``<answer>…</answer>`` tag (MAS-Orchestra's sub-agent format), else the reply."""
    found = _ANSWER_TAG.findall(reply or "")
    return found[-1].strip() if found and found[-1].strip() else (reply or "")


def final_span(reply: str) -> str | None:
    """The single final answer: the answer tag's last ``\\boxed{}``, else an "Answer:" line, a JSON
    ``answer`` field (a list kept whole) or the last number — :func:`extract_raw` ``auto``."""
    region = answer_region(reply)
    boxes = boxed_spans(region)
    if boxes:
        return boxes[-1]
    found = extract_raw(region, n=1, how="auto")
    return found[0] if found else None


def gsm8k_span(reply: str) -> str | None:
    """lm-eval's GSM8K order: the number after ``####`` (strict match), else the final span."""
    m = re.findall(r"####\s*(-?[\d.,]+)", reply or "")
    if m:
        return m[-1]
    return final_span(reply)


_L = r"(?-i:([A-Z]))"  # the letter itself is case-sensitive: "answer is a number" names no option
_LETTER_PATTERNS = (
    rf"\\boxed\{{\s*(?:\\text\{{)?\s*\(?{_L}\)?\s*\}}?\s*\}}",
    rf"answer(?:\s+is)?\s*[:=]?\s*\**\s*(?:option\s+)?\(?{_L}\)?(?![\w])",
    rf"(?:option|choice)\s+\(?{_L}\)?(?![\w])",
    rf"\({_L}\)",
    rf"^\s*\**\(?{_L}\)?[.):\s]*\**\s*$",
)


def letter_of(reply: str, letters: str = string.ascii_uppercase[:4]) -> str | None:
    """The option letter a reply chooses: a boxed letter, "answer is (C)", "option C", "(C)", a line
    that is just a letter, else the last stand-alone option letter in the prose (not the article "A")."""
    text = reply or ""
    for pattern in _LETTER_PATTERNS:
        hits = [h for h in re.findall(pattern, text, re.IGNORECASE | re.MULTILINE)]
        hits = [h for h in hits if h in letters]
        if hits:
            return hits[-1]
    prose = [m.group(1) for m in re.finditer(r"(?<![\w'])([A-Z])(?![\w'])", text)
             if m.group(1) in letters and not (m.group(1) == "A" and re.match(r"\s+[a-z]", text[m.end():]))]
    return prose[-1] if prose else None


def clean(s: str) -> str:
    """The span without markdown / LaTeX wrappers."""
    return _clean(s)


_TAG = re.compile(r"<answer>", re.IGNORECASE)


def raw_vote_key(task: object, reply: str | None) -> str | None:
    """The raw answer string the papers' CoT-SC votes on: the ``<answer>`` body (MASBench's
    ``Counter.most_common`` over raw ``<answer>`` strings), else the raw extracted answer span(s)
    — the ``\\boxed{}`` bodies for several golds — stripped. Empty and "None" give None (Illusion's
    vote ignores them), so they never win."""
    text = reply or ""
    n = max(1, len(getattr(task, "answers", []) or []))
    if _TAG.search(text):
        key = answer_region(text).strip()
    else:
        boxes = boxed_spans(text)
        spans = boxes[-n:] if n > 1 and len(boxes) >= n else extract_raw(text, n=n, how="auto")
        key = ", ".join(s.strip() for s in spans).strip()
    return None if key in ("", "None", "none") else key
