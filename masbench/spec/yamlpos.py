"""YAML parsing that remembers where every value came from (file, line, column).

PyYAML's composer gives each node a start mark; we build plain Python data and, beside it,
a map from the path of each value (a tuple of keys and list indices) to its 1-based line and
column. Validation errors carry a path; :func:`locate` turns it into ``FILE:LINE:COL``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .limits import FAST_SAFE_LOADER, USER_FILE_LIMITS, YamlLimitError, YamlLimits, check_expansion, check_size, check_tokens

Pos = tuple[int, int]
PathKey = tuple[Any, ...]


class YamlSyntaxError(ValueError):
    """Malformed YAML, with the position the parser stopped at."""

    def __init__(self, file: str, line: int, col: int, message: str):
        super().__init__(f"{file}:{line}:{col}: yaml: {message}")
        self.file, self.line, self.col, self.msg = file, line, col, message


class YamlLimitExceeded(YamlSyntaxError):
    """A document over a :class:`~masbench.spec.limits.YamlLimits` limit (never parsed further)."""

    def __init__(self, err: YamlLimitError):
        super().__init__(err.file, err.line, err.col, err.msg)


@dataclass
class Located:
    """Parsed YAML data plus the position of every value in it."""

    data: Any
    file: str
    positions: dict[PathKey, Pos] = field(default_factory=dict)
    key_positions: dict[PathKey, Pos] = field(default_factory=dict)

    def locate(self, path: PathKey) -> Pos:
        """Position of the deepest existing prefix of ``path``: a wrong value points at the value,
        a missing field at the mapping that lacks it."""
        path = tuple(path)
        while path:
            if path in self.positions:
                return self.positions[path]
            if path in self.key_positions:
                return self.key_positions[path]
            path = path[:-1]
        return self.positions.get((), (1, 1))


def _construct(node: yaml.Node, path: PathKey, out: Located) -> Any:
    out.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlSyntaxError(out.file, key_node.start_mark.line + 1,
                                      key_node.start_mark.column + 1, "merge keys (<<) are not supported")
            key = _construct(key_node, path + ("<key>",), out)
            if isinstance(key, (list, dict)):
                raise YamlSyntaxError(out.file, key_node.start_mark.line + 1,
                                      key_node.start_mark.column + 1, "a mapping key must be a scalar")
            if key in result:
                raise YamlSyntaxError(out.file, key_node.start_mark.line + 1,
                                      key_node.start_mark.column + 1, f"duplicate key {key!r}")
            out.key_positions[path + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _construct(value_node, path + (key,), out)
        out.positions.pop(path + ("<key>",), None)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_construct(child, path + (i,), out) for i, child in enumerate(node.value)]
    if not isinstance(node, yaml.ScalarNode):  # the composer makes only mapping, sequence and scalar nodes
        raise TypeError(f"unexpected YAML node {type(node).__name__}")
    # Scalars: let SafeLoader resolve the tag (int, float, bool, null, str).
    return _scalar(node)


_SCALAR_LOADER = yaml.SafeLoader("")


def _scalar(node: yaml.ScalarNode) -> Any:
    return _SCALAR_LOADER.construct_object(node, deep=True)


def parse_yaml(text: str, file: str = "<string>", limits: YamlLimits = USER_FILE_LIMITS) -> Located:
    """Parse one YAML document into data plus positions, within ``limits`` (size, nesting,
    alias expansion: checked before anything is built). Raises :class:`YamlSyntaxError` (a
    limit: :class:`~masbench.spec.limits.YamlLimitError`, its subclass here)."""
    out = Located(data=None, file=file)
    try:
        check_size(text, limits, file)
        check_tokens(text, limits, file)
    except YamlLimitError as exc:
        raise YamlLimitExceeded(exc) from None
    try:
        try:
            node = yaml.compose(text, Loader=FAST_SAFE_LOADER)
        except yaml.YAMLError:
            # The pure-Python parser again, for its messages: the same position, but it names what
            # it found ("found character '\\t' that cannot start any token", "found undefined alias
            # 'x'") where libyaml does not.
            node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise YamlSyntaxError(file, line, col, str(exc.problem or exc.context or exc)) from None
    except yaml.YAMLError as exc:  # pragma: no cover - composer raises Marked errors
        raise YamlSyntaxError(file, 1, 1, str(exc)) from None
    if node is None:
        out.data = None
        return out
    try:
        check_expansion(node, limits, file)
    except YamlLimitError as exc:
        raise YamlLimitExceeded(exc) from None
    try:
        out.data = _construct(node, (), out)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise YamlSyntaxError(file, mark.line + 1 if mark else 1, mark.column + 1 if mark else 1,
                              str(exc.problem)) from None
    return out


def load_yaml_file(path: str | Path, limits: YamlLimits = USER_FILE_LIMITS) -> Located:
    """Read and parse a YAML file (UTF-8) within ``limits``; a file over ``max_bytes`` is refused
    after reading only that much of it."""
    p = Path(path)
    try:
        if p.stat().st_size > limits.max_bytes:
            with p.open("rb") as fh:
                head = fh.read(limits.max_bytes).decode("utf-8", "replace")
            line = head.count("\n") + 1
            raise YamlLimitExceeded(YamlLimitError(str(p), line, 1, f"file is {p.stat().st_size} bytes, over the "
                                                   f"{limits.max_bytes}-byte limit (not parsed)"))
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise YamlSyntaxError(str(p), 1, 1, f"not UTF-8 text ({exc.reason})") from None
    return parse_yaml(text, str(p))
