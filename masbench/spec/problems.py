"""Problems found in user files, each pinned to ``FILE:LINE:COL: field: message``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from pydantic import ValidationError

from .yamlpos import Located


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one file, at one place."""

    file: str
    line: int
    col: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.field}: {self.message}"


@dataclass(frozen=True)
class FlagProblem(Problem):
    """A problem with a command-line flag rather than a file: ``str()`` is ``FLAG: message`` (the
    flag as given, e.g. ``--model default=openai/smollm2``), with no file, line or column."""

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def flag_problem(flag: str, message: str) -> Problem:
    """A :class:`FlagProblem` about ``flag`` (its text as the user gave it)."""
    return FlagProblem("<command line>", 0, 0, flag, message)


class SpecError(ValueError):
    """One or more problems in user files. ``str()`` gives one line per problem."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def field_name(path: tuple[Any, ...]) -> str:
    """``('nodes', 'plan', 'agent')`` → ``nodes.plan.agent``; list indices as ``[i]``."""
    out = ""
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        else:
            out += ("." if out else "") + str(seg)
    return out or "<document>"


def problem_at(located: Located, path: tuple[Any, ...], message: str) -> Problem:
    """A problem at a data path of a located document."""
    line, col = located.locate(path)
    return Problem(located.file, line, col, field_name(path), message)


def _data_path(data: Any, loc: tuple[Any, ...], names_key: bool = True) -> tuple[tuple[Any, ...], bool]:
    """Keep the loc segments that walk real data (pydantic adds union-branch tags such as
    ``'str'`` or ``'RouteSpec'``). Returns (path, fully_exists)."""
    path: list[Any] = []
    cur = data
    for i, seg in enumerate(loc):
        if isinstance(cur, dict) and seg in cur:
            path.append(seg)
            cur = cur[seg]
        elif isinstance(cur, list) and isinstance(seg, int) and 0 <= seg < len(cur):
            path.append(seg)
            cur = cur[seg]
        elif names_key and isinstance(cur, dict) and isinstance(seg, str) and i == len(loc) - 1:
            path.append(seg)  # a missing (or unknown) key: name it
            return tuple(path), False
        # else: a union tag or function-after marker — skip it
    return tuple(path), True


def _clean(msg: str) -> str:
    return msg.replace("Value error, ", "")


def problems_from_validation(located: Located, exc: ValidationError, prefix: tuple[Any, ...] = ()) -> list[Problem]:
    """Turn a pydantic ValidationError into located problems, one per field, sorted by position.

    A union (e.g. ``str | RouteSpec``) reports one error per branch; a bare type mismatch at a
    field is dropped when another branch got further (its error is deeper), so the user sees
    the real mistake, not "Input should be a valid string"."""
    sub = located.data
    for seg in prefix:
        sub = sub[seg]
    errs = []
    for err in exc.errors(include_url=False):
        path, _exists = _data_path(sub, tuple(err.get("loc", ())),
                                   names_key=err.get("type") in ("missing", "extra_forbidden"))
        errs.append((prefix + path, err))
    paths = [p for p, _ in errs]
    by_path: dict[tuple[Any, ...], list[str]] = {}
    key_level: set[tuple[Any, ...]] = set()
    for path, err in errs:
        etype = str(err.get("type", ""))
        if (etype.endswith("_type") or etype == "model_attributes_type") and any(
                len(o) > len(path) and o[:len(path)] == path for o in paths):
            continue
        msg = _clean(err.get("msg", "invalid"))
        if etype == "extra_forbidden":
            msg = "unknown field (check the spelling; see `masbench schema`)"
            key_level.add(path)
        elif etype == "missing":
            msg = "required field is missing"
        msgs = by_path.setdefault(path, [])
        if msg not in msgs:
            msgs.append(msg)
    problems = []
    for path, msgs in by_path.items():
        if path in key_level and path in located.key_positions:
            line, col = located.key_positions[path]
            problems.append(Problem(located.file, line, col, field_name(path), "; or ".join(msgs[:3])))
        else:
            problems.append(problem_at(located, path, "; or ".join(msgs[:3])))
    return sorted(problems, key=lambda p: (p.line, p.col))
