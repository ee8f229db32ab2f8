"""Field docstrings become descriptions as pydantic's ``use_attribute_docstrings`` makes them (its own
extractor is the reference), the JSON Schemas of every kind carry them, and the models are built
on first use (a class made in a function is documented too)."""

from __future__ import annotations

import json
import subprocess
import sys

from pydantic import BaseModel, ConfigDict
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import masbench.spec.handbook  # noqa: F401  (its classes are Spec subclasses too; imported on demand)
from masbench.bench.types import Score, TaskInstance
from masbench.spec import KINDS, DesignSpec, Spec, SuiteSpec, json_schema
from masbench.spec.base import attribute_docstrings


def _spec_classes() -> list[type[BaseModel]]:
    out: list[type[BaseModel]] = []
    todo: list[type[BaseModel]] = [Spec]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return out


def test_each_models_docstrings_are_pydantics():
    classes = [c for c in _spec_classes() if "<locals>" not in c.__qualname__] + [TaskInstance, Score]
    assert len(classes) > 30
    documented = 0
    for cls in classes:
        expected = extract_docstrings_from_cls(cls, use_inspect=True)
        assert attribute_docstrings(cls) == expected, cls.__qualname__
        for name, doc in expected.items():
            field = cls.__pydantic_fields__.get(name)
            if field is not None and name in cls.__annotations__:
                assert field.description is not None
                documented += 1
    assert documented > 200


def test_a_class_made_in_a_function_is_documented_and_matches_pydantics():
    class Local(Spec):
        """A kind made in a test."""

        size: int = 1
        """How big.

        On two lines."""
        name: str = "x"
        plain: bool = False
        """Plain."""

    assert Local.model_fields["size"].description == "How big.\n\nOn two lines."
    assert Local.model_fields["name"].description is None
    assert Local.model_fields["plain"].description == "Plain."
    assert attribute_docstrings(Local) == extract_docstrings_from_cls(Local, use_inspect=True)


def test_schemas_have_the_descriptions_and_models_build_on_first_use():
    for kind in KINDS:
        schema = json_schema(kind)
        props = schema["properties"]
        assert props and all(p.get("description") for p in props.values()), kind
    suite = json_schema("suite")
    assert suite["properties"]["designs"]["description"] == extract_docstrings_from_cls(SuiteSpec, use_inspect=True)["designs"]
    assert json.dumps(json_schema("design")).count('"description"') > 30
    assert DesignSpec.__pydantic_complete__


def test_importing_the_specs_builds_no_model_and_validating_a_suite_builds_only_what_it_uses():
    code = ("from masbench.library import Library\n"
            "from masbench.spec import HandbookSpec, SuiteSpec, ProgramSpec\n"
            "before = [SuiteSpec.__pydantic_complete__, HandbookSpec.__pydantic_complete__]\n"
            "Library().load_path('tasks/quickstart.yaml')\n"
            "print(before, [SuiteSpec.__pydantic_complete__, HandbookSpec.__pydantic_complete__, "
            "ProgramSpec.__pydantic_complete__])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[False, False] [True, False, False]"
