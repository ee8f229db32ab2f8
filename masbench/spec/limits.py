"""Limits on YAML before anything is built: size, nesting, tags and alias expansion — one set
of checks for user files (suites, designs, models…) and for model-written designs.

PyYAML's scanner is iterative and builds nothing, so nesting and tags are checked on tokens;
its composer shares an aliased node instead of copying it, so an alias bomb composes in
microseconds and its *expanded* size is counted on the node graph (memoized per node) before
the constructor would copy it out. Every violation is a :class:`YamlLimitError` with the
file and line where the limit was crossed.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

FAST_SAFE_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it (its wheels do), else the pure-Python one: the same
tokens, nodes and marks (every bundled file: the same data and positions), ~7x faster; every
process parses its library and suites, so this is start-up time of every command. On a syntax
error the pure-Python parser runs again for its message (:func:`~masbench.spec.yamlpos.parse_yaml`):
libyaml's give the same position in vaguer words."""


@dataclass(frozen=True)
class YamlLimits:
    """How big a YAML document may be."""

    max_bytes: int = 4 * 1024 * 1024
    """Largest text (UTF-8 bytes) that is parsed at all."""
    max_depth: int = 64
    """Deepest mapping/sequence nesting."""
    max_values: int = 200_000
    """Most values after alias expansion (what the document would build)."""
    allow_aliases: bool = True
    """Anchors and aliases (``&a`` / ``*a``) allowed at all."""
    allow_tags: bool = True
    """Explicit tags (``!!str``) allowed at all (the safe loader refuses ``!!python/...`` anyway)."""


USER_FILE_LIMITS = YamlLimits()
"""The limits of every YAML file the library loads (generated designs use tighter ones)."""


class YamlLimitError(ValueError):
    """A YAML document over a limit, with the position where the limit was crossed."""

    def __init__(self, file: str, line: int, col: int, message: str):
        super().__init__(f"{file}:{line}:{col}: yaml: {message}")
        self.file, self.line, self.col, self.msg = file, line, col, message


def check_size(text: str, limits: YamlLimits, file: str) -> None:
    """Refuse a text over ``max_bytes`` (the line reported is where the limit falls)."""
    if len(text) > limits.max_bytes or len(text.encode("utf-8", "replace")) > limits.max_bytes:
        line = text.count("\n", 0, limits.max_bytes) + 1
        raise YamlLimitError(file, line, 1, f"document is over the {limits.max_bytes}-byte limit (not parsed)")


def check_tokens(text: str, limits: YamlLimits, file: str) -> None:
    """Refuse deep nesting, and tags / aliases where not allowed, from the token stream. Syntax
    errors are left to the parser (it reports them with their position)."""
    depth = 0
    opens = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken,
             yaml.FlowSequenceStartToken)
    closes = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    try:
        for tok in yaml.scan(text, Loader=FAST_SAFE_LOADER):
            m = tok.start_mark
            if isinstance(tok, opens):
                depth += 1
                if depth > limits.max_depth:
                    raise YamlLimitError(file, m.line + 1, m.column + 1, f"nesting deeper than {limits.max_depth} levels")
            elif isinstance(tok, closes):
                depth -= 1
            elif isinstance(tok, yaml.TagToken) and not limits.allow_tags:
                raise YamlLimitError(file, m.line + 1, m.column + 1, f"YAML tags are not allowed (found "
                                     f"{tok.value[0]}{tok.value[1]} at line {m.line + 1}); a design is plain data")
            elif isinstance(tok, yaml.AliasToken) and not limits.allow_aliases:
                raise YamlLimitError(file, m.line + 1, m.column + 1,
                                     f"YAML aliases are not allowed (found *{tok.value} at line {m.line + 1})")
    except yaml.YAMLError:
        return


def check_expansion(root: yaml.Node, limits: YamlLimits, file: str) -> int:
    """The number of values ``root`` expands to (aliases copied out); raises at the first node
    whose expansion passes ``max_values``. Iterative, memoized per node: linear in the composed
    graph, whatever the expansion."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.MappingNode):
            children = [c for kv in node.value for c in kv]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            sizes[id(node)] = 1
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        total = 1 + sum(sizes[id(c)] for c in children)
        if total > limits.max_values:
            m = node.start_mark
            raise YamlLimitError(file, m.line + 1, m.column + 1, f"the document expands to more than "
                                 f"{limits.max_values} values (aliases copied out): an alias bomb?")
        sizes[id(node)] = total
    return sizes[id(root)]


__all__ = ["USER_FILE_LIMITS", "YamlLimitError", "YamlLimits", "check_expansion", "check_size", "check_tokens"]
