"""The base of every YAML kind: strict (unknown keys are errors), documented fields.

A field's docstring (the string literal right under its annotation) is its description, as
pydantic's ``use_attribute_docstrings`` would make it, but read more cheaply: pydantic re-parses
the source around each class as it is defined (~0.1 s over the spec modules), where
:func:`document_fields` parses each module once. Models are built on first use
(``defer_build``): a command that validates a suite does not build the handbook's validators.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from typing import Any

from pydantic import BaseModel, ConfigDict

_TREES: dict[str, ast.Module | None] = {}
"""Module name → its parsed source (None if it has none): parsed once, for every class in it."""


def _module_tree(module: str) -> ast.Module | None:
    if module not in _TREES:
        file = getattr(sys.modules.get(module), "__file__", None)
        try:
            with open(file or "", "rb") as f:  # bytes: ast reads the coding cookie as the import did
                _TREES[module] = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            _TREES[module] = None
    return _TREES[module]


def _class_node(cls: type) -> ast.ClassDef | None:
    """The ``class`` statement of ``cls``: found by its qualified name in its module's tree, else
    (a class made inside a function) from ``inspect``'s source of it."""
    tree = _module_tree(cls.__module__)
    if tree is not None and "<locals>" not in cls.__qualname__:
        body: list[ast.stmt] = tree.body
        node: ast.ClassDef | None = None
        for part in cls.__qualname__.split("."):
            node = next((s for s in reversed(body) if isinstance(s, ast.ClassDef) and s.name == part), None)
            if node is None:
                break
            body = node.body
        if node is not None:
            return node
    try:
        stmt = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    return stmt if isinstance(stmt, ast.ClassDef) else None


def attribute_docstrings(cls: type) -> dict[str, str]:
    """Field name → the docstring under its annotation in ``cls``'s own body (cleaned as
    ``inspect.cleandoc`` cleans it): the docstrings pydantic's ``use_attribute_docstrings`` reads."""
    node = _class_node(cls)
    if node is None:
        return {}
    out: dict[str, str] = {}
    for stmt, after in zip(node.body, node.body[1:]):
        if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            out[stmt.target.id] = inspect.cleandoc(after.value.value)
    return out


def document_fields(cls: type[BaseModel]) -> None:
    """Give each field of ``cls`` that has no description its docstring (before the model is built:
    the class must be made with ``defer_build``)."""
    docs = attribute_docstrings(cls)
    for name, field in cls.__pydantic_fields__.items():
        if field.description is None and name in docs:
            field.description = docs[name]


class Spec(BaseModel):
    """Base for every declarative kind. Unknown keys are errors, so a typo never passes silently.

    Field docstrings become JSON Schema descriptions (:func:`document_fields`), so
    ``masbench schema`` documents itself.
    """

    model_config = ConfigDict(
        extra="forbid",
        defer_build=True,
        validate_default=True,
        populate_by_name=True,
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        document_fields(cls)
