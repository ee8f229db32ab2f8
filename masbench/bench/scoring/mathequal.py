"""Math answer equivalence: normalized string equality, else symbolic equality by ``math-verify``.

Normalized equality (:func:`~masbench.text.normalize_answer`, which keeps the one number of a span
like ``"12 dollars"``) decides only for answers without math notation: on an
expression it would keep a number and drop the math (``"x+1"`` and ``"\\sqrt{2}"`` both normalize
towards a bare number), so those go to the symbolic check.

``math-verify`` (Hugging Face) parses LaTeX / plain expressions with sympy and compares them
(``\\frac{1}{2}`` = ``0.5`` = ``1/2``; ``\\sqrt{2}/2`` = ``\\frac{\\sqrt2}{2}``). We do not write our
own symbolic comparison. Its parse/verify timeouts use SIGALRM, which only works in the main
thread, so they are switched off elsewhere.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

from ...text import _clean, normalize_answer

# math notation: a LaTeX command, ^ _ = *, or a one-letter variable next to a number or an operator
_MATH = re.compile(r"\\[A-Za-z]|[\^_=*]|(?<![A-Za-z])[A-Za-z](?![A-Za-z])\s*[\d+\-/(]"
                   r"|[\d+\-/)]\s*(?<![A-Za-z])[A-Za-z](?![A-Za-z])")


def _has_math(text: str) -> bool:
    return _MATH.search(text) is not None


def _timeout() -> int | None:
    return 5 if threading.current_thread() is threading.main_thread() else None


@lru_cache(maxsize=4096)
def _parsed(text: str):  # noqa: ANN202 - sympy objects
    # math_verify pulls in sympy and an ANTLR parser (~1 s): imported on first use, for start-up time
    from math_verify import parse

    wrapped = text if ("$" in text or "\\boxed" in text) else f"${text}$"
    # math_verify types parsing_timeout as int, but its docs and code take None: no timeout
    out = parse(wrapped, parsing_timeout=_timeout())  # pyright: ignore[reportArgumentType]  # see above
    return out or parse(text, parsing_timeout=_timeout())  # pyright: ignore[reportArgumentType]  # see above


def math_equal(predicted: str, gold: str) -> bool:
    """True if ``predicted`` and ``gold`` are the same answer (string or symbolic equality)."""
    if predicted is None or gold is None:
        return False
    p, g = str(predicted).strip(), str(gold).strip()
    if not p or not g:
        return False
    if p == g or _clean(p) == _clean(g):
        return True
    if not (_has_math(p) or _has_math(g)) and normalize_answer(p) == normalize_answer(g):
        return True
    from math_verify import verify  # see _parsed

    gp, pp = _parsed(g), _parsed(p)
    if not gp or not pp:
        return False
    try:
        return bool(verify(gp, pp, timeout_seconds=_timeout()))
    except Exception:  # noqa: BLE001 - a comparison sympy cannot do is "not equal"
        return False
