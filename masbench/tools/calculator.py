"""Safe arithmetic: the one expression parser (an ``ast`` walk that admits numbers,
``+ - * / // % **`` and parentheses only — nothing is evaluated), and the ``calculator`` tool
(:data:`TOOL`, ``{"expression": str}`` → the value).

The ``python:`` node functions ``calculator`` / ``calculate_in_text`` / ``sum_list``
(:mod:`masbench.runtime.pyfuncs`) use the same parser: there is one.
"""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction

from pydantic import BaseModel, ConfigDict, Field

from .base import Tool, ToolContext, ToolOutput

_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}
MAX_LEN = 2000
"""Longest expression accepted (characters, after cleaning)."""
MAX_MAGNITUDE = 10 ** 100
"""Largest absolute value of any intermediate result."""


class CalculatorError(ValueError):
    """The text is not an arithmetic expression the calculator accepts."""


def as_fraction(x: object) -> Fraction:
    """A number as an exact fraction (floats limited to a 10¹² denominator); booleans, non-finite
    floats and anything else are a :class:`CalculatorError`."""
    if isinstance(x, bool):
        raise CalculatorError("booleans are not numbers")
    if isinstance(x, int):
        return Fraction(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            raise CalculatorError("not a finite number")
        return Fraction(x).limit_denominator(10 ** 12)
    raise CalculatorError(f"not a number: {x!r}")


def _binop(op: ast.operator, a: Fraction, b: Fraction) -> Fraction:
    if isinstance(op, ast.Pow):
        if b.denominator != 1 or abs(b) > 64 or (a == 0 and b < 0):
            raise CalculatorError("exponent must be an integer in [-64, 64]")
        if abs(a) > 10 ** 6 and b > 8:
            raise CalculatorError("power too large")
        r = a ** int(b)
    else:
        fn = _BINOPS.get(type(op))
        if fn is None:
            raise CalculatorError(f"operator {type(op).__name__} is not allowed")
        if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)) and b == 0:
            raise CalculatorError("division by zero")
        r = fn(a, b)
    if abs(r) > MAX_MAGNITUDE:
        raise CalculatorError("number too large")
    return Fraction(r)


def _walk(root: ast.AST) -> Fraction:
    """The value of a parsed expression, left operand before right; iterative, so a long chain
    (``1 + 0 + … + 0``, ``- - … - 1`` within :data:`MAX_LEN`) is not limited by Python's recursion
    limit and every refusal is a :class:`CalculatorError`."""
    todo: list[tuple[ast.AST, bool]] = [(root, False)]
    values: list[Fraction] = []
    while todo:
        node, operands_done = todo.pop()
        if isinstance(node, ast.Expression):
            todo.append((node.body, False))
        elif isinstance(node, ast.Constant):
            values.append(as_fraction(node.value))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            if not operands_done:
                todo += [(node, True), (node.operand, False)]
            elif isinstance(node.op, ast.USub):
                values.append(-values.pop())
        elif isinstance(node, ast.BinOp):
            if not operands_done:
                todo += [(node, True), (node.right, False), (node.left, False)]  # the left is popped first
            else:
                b = values.pop()
                values.append(_binop(node.op, values.pop(), b))
        else:
            raise CalculatorError(f"{type(node).__name__} is not allowed (numbers, + - * / // % ** and "
                                  "parentheses only)")
    return values.pop()


def expression_of(x: object) -> str:
    """The expression text in a value: a string, a number, a one-item list, or a dict's
    ``result`` / ``expression`` / ``expr`` / ``answer`` / ``value`` field."""
    if isinstance(x, dict):
        for k in ("result", "expression", "expr", "answer", "value"):
            if k in x:
                return expression_of(x[k])
        raise CalculatorError(f"no expression field in {sorted(map(str, x))}")
    if isinstance(x, (list, tuple)):
        if len(x) != 1:
            raise CalculatorError("expected one expression, got a list")
        return expression_of(x[0])
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return repr(x)
    if isinstance(x, str):
        return x
    raise CalculatorError(f"cannot compute a {type(x).__name__}")


def _clean_expression(s: str) -> str:
    lines = [ln for ln in s.strip().splitlines() if ln.strip()]
    s = lines[-1] if lines else ""  # a reply with reasoning lines first: its last line
    s = re.sub(r"^\s*(?:answer|expression|result)\s*:", "", s, flags=re.I)  # "Expression: 3 + 4"
    s = s.strip().strip("`").strip()
    if "=" in s:  # "3 + 4 = 7" → left side; "x = 3 + 4" → right side
        left, right = s.split("=", 1)
        s = right if re.search(r"[A-Za-z]", left) and not re.search(r"[A-Za-z]", right) else left
    s = s.replace("×", "*").replace("÷", "/").replace("−", "-").replace("^", "**")
    s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s)  # 1,000 → 1000
    s = s.replace("$", "")
    return s.strip()


def calculate(expr: object) -> int | float:
    """Value of an arithmetic expression (a string, a number, or a dict with a ``result`` /
    ``expression`` field). Integers stay exact; other results are floats. Raises
    :class:`CalculatorError` on anything but numbers, ``+ - * / // % **`` and parentheses."""
    s = _clean_expression(expression_of(expr))
    if not s:
        raise CalculatorError("empty expression")
    if len(s) > MAX_LEN:
        raise CalculatorError("expression too long")
    try:
        tree = ast.parse(s, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError(f"not an arithmetic expression: {s!r} ({exc.msg})") from None
    v = _walk(tree)
    if v.denominator == 1:
        return int(v)
    return float(v)


class CalculatorArgs(BaseModel):
    """The calculator tool's arguments."""

    model_config = ConfigDict(extra="forbid")
    expression: str = Field(description="An arithmetic expression: numbers, + - * / // % ** and parentheses, "
                                        "e.g. (17 + 25) * 3")
    """The expression to compute (parsed by :func:`calculate`; never evaluated as code)."""


class Calculator(Tool):
    """``calculator``: the value of an arithmetic expression (an invalid one is an ``error`` result
    that tells the model why)."""

    name = "calculator"
    description = ("Compute an arithmetic expression exactly: numbers, + - * / // % ** and parentheses. "
                   "Returns its value.")
    Args = CalculatorArgs
    max_result_chars = 200

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput | str:
        """The value of ``args.expression`` (pure CPU, bounded by :data:`MAX_LEN`: run inline)."""
        assert isinstance(args, CalculatorArgs)
        value = calculate(args.expression)
        return ToolOutput(str(value), value)


TOOL = Calculator()
"""The registered instance (:data:`masbench.tools.TOOLS` ``["calculator"]``)."""

__all__ = ["MAX_LEN", "MAX_MAGNITUDE", "TOOL", "Calculator", "CalculatorArgs", "CalculatorError", "as_fraction",
           "calculate", "expression_of"]
