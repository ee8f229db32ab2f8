"""The base of every YAML kind: strict (unknown keys are errors), documented fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Spec(BaseModel):
    """Base for every declarative kind. Unknown keys are errors, so a typo never passes silently.

    Field docstrings become JSON Schema descriptions (``use_attribute_docstrings``), so
    ``masbench schema`` documents itself.
    """

    model_config = ConfigDict(
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=True,
        populate_by_name=True,
    )
