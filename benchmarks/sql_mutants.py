"""SQL mutants for benchmarks/sql_mutation.py: a small tokenizer and the mutation operators.

The tokenizer keeps every token's span in the original text and skips string literals, quoted
identifiers and comments (nothing inside them is ever mutated), so a mutant is the original text
with one or two spans replaced: its formatting, and so its diff, stay readable. Operators (the
name each mutant carries):

- ``cmp``: ``<`` ↔ ``<=``, ``>`` ↔ ``>=``, ``=`` → ``<>``, ``<>`` / ``!=`` → ``=``;
  ``IS NOT DISTINCT FROM`` → ``=``, ``IS NULL`` ↔ ``IS NOT NULL``
- ``where``: drop a WHERE / HAVING / QUALIFY clause; ``term``: drop one operand of an AND
  (anywhere: WHERE, ON, FILTER, CASE WHEN, select expressions)
- ``filter``: drop an aggregate's ``FILTER (...)``
- ``order``: ASC ↔ DESC (an ORDER BY item without a direction gets DESC)
- ``swap``: swap two adjacent SELECT-list expressions (keeping the aliases where they are; bare
  columns only in a UNION, where position is what matches them: elsewhere swapping two bare
  columns only reorders the view's columns, not what any column holds) or two
  adjacent arguments of a function (not of ``least``/``greatest``, which commute)
- ``join``: JOIN / INNER JOIN → LEFT JOIN, LEFT JOIN → JOIN
- ``andor``: AND ↔ OR
- ``agg``: sum ↔ max, min → max, floor ↔ ceil, count(DISTINCT x) → count(x)
- ``nullif``: ``nullif(x, y)`` → ``x``
- ``coalesce``: a literal default ``coalesce(..., 0)`` → 1, 1 → 0, false ↔ true

The same edit on identical lines (a template rendered twice into one view) is one mutant.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:[^']|'')*')
  | (?P<qident>"(?:[^"]|"")*")
  | (?P<num>\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)
  | (?P<word>\$?[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op><=|>=|<>|!=|::|\|\||->>|->|[-+*/%^<>=!.,;()\[\]{}:?])
""", re.VERBOSE | re.DOTALL)


@dataclass(frozen=True)
class Tok:
    kind: str  # ws | comment | string | qident | num | word | op
    text: str
    start: int
    end: int
    depth: int  # parenthesis depth before the token (a "(" has the depth outside it)

    @property
    def up(self) -> str:
        return self.text.upper() if self.kind == "word" else self.text


def tokenize(sql: str) -> list[Tok]:
    """The significant tokens of ``sql`` (no whitespace or comments), with spans and depths."""
    out: list[Tok] = []
    pos, depth = 0, 0
    while pos < len(sql):
        m = _TOKEN.match(sql, pos)
        if m is None:
            raise ValueError(f"cannot tokenize SQL at {sql[pos:pos + 30]!r}")
        kind = m.lastgroup or ""
        text = m.group()
        if kind not in ("ws", "comment"):
            if text == ")":
                depth -= 1
            out.append(Tok(kind, text, m.start(), m.end(), depth))
            if text == "(":
                depth += 1
        pos = m.end()
    return out


@dataclass(frozen=True)
class Mutant:
    op: str
    edits: tuple[tuple[int, int, str], ...]  # (start, end, replacement) spans of the original text

    def apply(self, sql: str) -> str:
        for start, end, new in sorted(self.edits, reverse=True):
            sql = sql[:start] + new + sql[end:]
        return sql


def diff(before: str, after: str) -> str:
    """The changed lines as ``-old`` / ``+new`` (what :func:`mutation._diff_body` prints)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return "\n".join(x for x in lines if x.startswith(("-", "+")) and not x.startswith(("---", "+++")))


# keywords that end an operand of AND/OR, a SELECT item or a clause (at the operand's depth)
_STOP = {"SELECT", "FROM", "WHERE", "GROUP", "ORDER", "LIMIT", "QUALIFY", "WINDOW", "HAVING", "UNION", "EXCEPT",
         "INTERSECT", "THEN", "ELSE", "END", "WHEN", "JOIN", "LEFT", "RIGHT", "INNER", "CROSS", "FULL", "ON",
         "USING", "AS", "AND", "OR", "CASE"}
_CLAUSE_END = {"GROUP", "ORDER", "LIMIT", "QUALIFY", "WINDOW", "HAVING", "UNION", "EXCEPT", "INTERSECT"}
_AGG = {"SUM": "max", "MAX": "sum", "MIN": "max", "FLOOR": "ceil", "CEIL": "floor"}
_COMMUTE = {"LEAST", "GREATEST"}
_NOT_CALLS = _STOP | _COMMUTE | {"VALUES", "FILTER", "OVER", "IN", "EXISTS", "EXCLUDE", "COUNT", "DISTINCT", "NOT",
                                 "ALL", "ANY", "BY", "USING", "PARTITION"}
"""Words before a "(" that are no function (or whose arguments commute): no argument swaps."""


class _Gen:
    def __init__(self, sql: str):
        self.sql = sql
        self.t = tokenize(sql)
        self.out: list[Mutant] = []

    def add(self, op: str, *edits: tuple[int, int, str]) -> None:
        self.out.append(Mutant(op, tuple(edits)))

    def span(self, i: int, j: int) -> tuple[int, int]:
        """Text span of tokens i..j (inclusive)."""
        return self.t[i].start, self.t[j].end

    def close(self, i: int) -> int:
        """Index of the ")" matching the "(" at i."""
        d = self.t[i].depth
        for j in range(i + 1, len(self.t)):
            if self.t[j].text == ")" and self.t[j].depth == d:
                return j
        raise ValueError("unbalanced parentheses")

    def is_kw(self, i: int, *words: str) -> bool:
        return 0 <= i < len(self.t) and self.t[i].kind == "word" and self.t[i].up in words

    # ----- operand bounds ------------------------------------------------------------------
    def _left(self, i: int) -> int:
        """First token of the operand ending just before token i (same depth)."""
        d = self.t[i].depth
        j = i - 1
        while j >= 0:
            tk = self.t[j]
            if tk.depth < d or (tk.depth == d and (tk.text == "," or (tk.kind == "word" and tk.up in _STOP))):
                break
            j -= 1
        return j + 1

    def _right(self, i: int) -> int:
        """Last token of the operand starting just after token i (same depth)."""
        d = self.t[i].depth
        j = i + 1
        while j < len(self.t):
            tk = self.t[j]
            if tk.depth < d or (tk.depth == d and (tk.text in (",", ";") or (tk.kind == "word" and tk.up in _STOP))):
                break
            j += 1
        return j - 1

    def _clause_end(self, i: int) -> int:
        """Last token of the clause opened by the keyword at i."""
        d = self.t[i].depth
        j = i + 1
        while j < len(self.t):
            tk = self.t[j]
            if tk.depth < d or (tk.depth == d and tk.kind == "word" and tk.up in _CLAUSE_END | {"WINDOW"}) \
                    or (tk.depth == d and tk.text == ";"):
                break
            j += 1
        return j - 1

    def _items(self, start: int, stop_words: set[str]) -> list[tuple[int, int]]:
        """Comma-separated items (token index ranges) from ``start`` at its depth, until a stop."""
        d = self.t[start].depth
        items, j, first = [], start, start
        while j < len(self.t):
            tk = self.t[j]
            if tk.depth < d or (tk.depth == d and tk.kind == "word" and tk.up in stop_words):
                break
            if tk.depth == d and tk.text == ",":
                items.append((first, j - 1))
                first = j + 1
            j += 1
        if first <= j - 1:
            items.append((first, j - 1))
        return items

    # ----- operators -----------------------------------------------------------------------
    def run(self) -> list[Mutant]:
        t = self.t
        for i, tk in enumerate(t):
            w = tk.up if tk.kind == "word" else None
            self._cmp(i, tk)
            if w in ("AND", "OR") and not self._between_and(i):
                self.add("andor", (tk.start, tk.end, "OR" if w == "AND" else "AND"))
                a = self._left(i)
                b = self._right(i)
                if w == "AND" and a < i and b > i:
                    self.add("term", (t[a].start, t[i + 1].start, ""))
                    self.add("term", (t[i - 1].end, t[b].end, ""))
            elif w in ("WHERE", "HAVING", "QUALIFY") and not (t[i - 1].text == "(" and self.is_kw(i - 2, "FILTER")):
                e = self._clause_end(i)
                self.add("where", (tk.start, t[e].end, ""))
            elif w == "FILTER" and i + 1 < len(t) and t[i + 1].text == "(":
                self.add("filter", (t[i - 1].end, t[self.close(i + 1)].end, ""))
            elif w == "ORDER" and self.is_kw(i + 1, "BY"):
                self._order(i + 2)
            elif w == "SELECT":
                self._select(i + 1)
            elif w == "JOIN":
                self._join(i)
            elif w in _AGG and i + 1 < len(t) and t[i + 1].text == "(":
                self.add("agg", (tk.start, tk.end, _AGG[w]))
            elif w == "COUNT" and self.is_kw(i + 2, "DISTINCT"):
                self.add("agg", (t[i + 2].start, t[i + 3].start, ""))
            elif w == "NULLIF":
                c = self.close(i + 1)
                args = self._items(i + 2, set())
                if args:
                    self.add("nullif", (tk.start, t[c].end, self.sql[t[args[0][0]].start:t[args[0][1]].end]))
            if w == "COALESCE":
                self._coalesce(i)
            if tk.kind == "word" and i + 1 < len(t) and t[i + 1].text == "(" and w not in _NOT_CALLS:
                args = self._items(i + 2, set())
                if t[self.close(i + 1)].start > t[i + 1].end:
                    self._swaps(args)
        return self.out

    def _between_and(self, i: int) -> bool:
        a = self._left(i)
        return any(self.is_kw(j, "BETWEEN") for j in range(a, i))

    def _cmp(self, i: int, tk: Tok) -> None:
        flip = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "=": "<>", "<>": "=", "!=": "="}
        if tk.kind == "op" and tk.text in flip:
            self.add("cmp", (tk.start, tk.end, flip[tk.text]))
        if self.is_kw(i, "IS"):
            if self.is_kw(i + 1, "NOT") and self.is_kw(i + 2, "DISTINCT") and self.is_kw(i + 3, "FROM"):
                self.add("cmp", (tk.start, self.t[i + 3].end, "="))
            elif self.is_kw(i + 1, "NOT") and self.is_kw(i + 2, "NULL"):
                self.add("cmp", (tk.end, self.t[i + 1].end, ""))
            elif self.is_kw(i + 1, "NULL"):
                self.add("cmp", (tk.start, tk.end, "IS NOT"))

    def _order(self, start: int) -> None:
        stops = {"LIMIT", "ROWS", "RANGE", "GROUPS", "OFFSET", "QUALIFY", "WINDOW"}
        for a, b in self._items(start, stops):
            last = self.t[b]
            if last.kind == "word" and last.up in ("ASC", "DESC"):
                self.add("order", (last.start, last.end, "DESC" if last.up == "ASC" else "ASC"))
            else:
                self.add("order", (last.end, last.end, " DESC"))

    def _select(self, start: int) -> None:
        t = self.t
        if self.is_kw(start, "DISTINCT"):
            start += 1
        items = self._items(start, {"FROM", "WHERE", "GROUP", "ORDER", "LIMIT", "UNION", "WINDOW", "QUALIFY",
                                    "HAVING", "EXCEPT", "INTERSECT"})
        union = self._in_union(start)
        exprs: list[tuple[int, int] | None] = []
        for a, b in items:
            if any(t[j].text == "*" and (j == a or t[j - 1].text in (".", ",")) for j in range(a, b + 1)):
                exprs.append(None)  # a star item: nothing to swap
            elif b - 1 > a and self.is_kw(b - 1, "AS"):
                exprs.append((a, b - 2))  # the alias stays where it is: the values swap columns
            else:  # a bare column keeps its name: swapping only reorders, which matters in a UNION
                exprs.append((a, b) if union else None)
        self._swaps(exprs)

    def _in_union(self, i: int) -> bool:
        """Is the SELECT whose list starts at i one side of a UNION (columns matched by position)?"""
        d = self.t[i].depth
        j = i
        while j < len(self.t) and self.t[j].depth >= d:
            if self.t[j].depth == d and self.is_kw(j, "UNION"):
                return True
            j += 1
        j = i - 1
        while j >= 0 and self.t[j].depth >= d:
            if self.t[j].depth == d and self.is_kw(j, "UNION"):
                return True
            j -= 1
        return False

    def _swaps(self, ranges: list[tuple[int, int] | None]) -> None:
        for x, y in zip(ranges, ranges[1:]):
            if x is None or y is None:
                continue
            xs, ys = self.span(*x), self.span(*y)
            a, b = self.sql[xs[0]:xs[1]], self.sql[ys[0]:ys[1]]
            if a != b:
                self.add("swap", (xs[0], xs[1], b), (ys[0], ys[1], a))

    def _join(self, i: int) -> None:
        t = self.t
        if self.is_kw(i - 1, "LEFT"):
            self.add("join", (t[i - 1].start, t[i].start, ""))
        elif self.is_kw(i - 2, "LEFT") and self.is_kw(i - 1, "OUTER"):
            self.add("join", (t[i - 2].start, t[i].start, ""))
        elif self.is_kw(i - 1, "INNER"):
            self.add("join", (t[i - 1].start, t[i - 1].end, "LEFT"))
        elif not self.is_kw(i - 1, "CROSS", "RIGHT", "FULL", "OUTER", "ANTI", "SEMI", "ASOF", "POSITIONAL"):
            self.add("join", (t[i].start, t[i].start, "LEFT "))

    def _coalesce(self, i: int) -> None:
        args = self._items(i + 2, set())
        if len(args) < 2 or args[-1][0] != args[-1][1]:
            return
        last = self.t[args[-1][0]]
        new = {"0": "1", "1": "0", "FALSE": "true", "TRUE": "false", "0.0": "1.0"}.get(last.up)
        if new is not None:
            self.add("coalesce", (last.start, last.end, new))


def _norm(sql: str) -> str:
    return " ".join(x.text for x in tokenize(sql))


def mutants(sql: str) -> list[Mutant]:
    """Every mutant of ``sql``: deduplicated by the mutated text's tokens, none equal to the
    original, and the same edit of identical lines merged into one mutant."""
    seen = {_norm(sql)}
    by_line: dict[tuple[str, str], int] = {}
    out: list[Mutant] = []
    for m in _Gen(sql).run():
        try:
            key = _norm(m.apply(sql))
        except ValueError:
            continue
        if key in seen:
            continue
        seen.add(key)
        line = (m.op, diff(sql, m.apply(sql)))
        if line in by_line:  # the same edit elsewhere on an identical line: one mutant
            k = by_line[line]
            out[k] = Mutant(m.op, out[k].edits + m.edits)
        else:
            by_line[line] = len(out)
            out.append(m)
    return out


__all__ = ["Mutant", "Tok", "diff", "mutants", "tokenize"]
