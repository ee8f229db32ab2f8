"""Structured output: the JSON object in a reply, validated against the node's declared schema
(``{"subtasks": "list[str]", "correct": "bool"}``) by a pydantic ``TypeAdapter`` built from it.

pydantic's lax mode does the coercion (``"3"`` → 3, ``2.0`` → 2, ``"1.5"`` → 1.5); a few
before-validators keep the leniency and strictness models need: ``"yes"``/``"no"`` are booleans
but ``1`` is not, a boolean is never a number, numbers and booleans read as text, and a lone
string stands for a one-item ``list[str]``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BeforeValidator, Strict, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from ..text import json_objects


def _no_bool(v: Any) -> Any:
    if isinstance(v, bool):
        raise ValueError("a boolean is not a number")
    return v


def _as_bool(v: Any) -> Any:
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "yes", "no"):
        return v.strip().lower() in ("true", "yes")
    return v


def _as_str(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None or isinstance(v, (int, float)):
        return str(v)
    return v


def _one_item(v: Any) -> Any:
    return [v] if isinstance(v, str) and v.strip() else v


_SCALARS: dict[str, Any] = {
    "str": Annotated[str, BeforeValidator(_as_str)],
    "int": Annotated[int, BeforeValidator(_no_bool)],
    "float": Annotated[float, BeforeValidator(_no_bool)],
    "bool": Annotated[bool, Strict(), BeforeValidator(_as_bool)],
}


def _field_type(t: str) -> Any:
    if t.startswith("list[") and t.endswith("]"):
        inner = t[5:-1]
        lst = list[_SCALARS[inner]]
        return Annotated[lst, BeforeValidator(_one_item)] if inner == "str" else lst
    return _SCALARS[t]


@lru_cache(maxsize=256)
def _adapter(schema: tuple[tuple[str, str], ...]) -> TypeAdapter:
    fields = {f: _field_type(t) for f, t in schema}
    # the fields are built at run time, but the functional TypedDict form is typed for a dict literal only
    return TypeAdapter(TypedDict("Structured", fields))  # pyright: ignore[reportArgumentType]  # see above


def parse_structured(text: str, schema: dict[str, str]) -> tuple[dict | None, str | None]:
    """The last JSON object in ``text`` with every schema field, coerced to its type; or the
    error of the last object tried (fields are reported in schema order)."""
    objs = [o for o in json_objects(text) if isinstance(o, dict)]
    if not objs:
        return None, "no JSON object found in the reply"
    adapter = _adapter(tuple(schema.items()))
    err = None
    for obj in reversed(objs):
        missing = next((f for f in schema if f not in obj), None)
        if missing is not None:
            err = f"missing field {missing!r}"
            continue
        try:
            return {**obj, **adapter.validate_python(obj)}, None
        except ValidationError as exc:
            bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
            f = next(f for f in schema if f in bad)
            err = f"field {f!r} must be {schema[f]}, got {json.dumps(obj[f], default=str)[:60]}"
    return None, err


__all__ = ["parse_structured"]
