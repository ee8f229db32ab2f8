"""The ``masbench`` command line: one module per command group, mounted explicitly from
:data:`COMMANDS`, no logic here.

Each group module imports what it needs at its top and exposes ``register(app)``. The root group
loads a module only when one of its commands runs (or its own ``--help`` is asked for), so
``masbench --help`` starts without DuckDB, langgraph, litellm or matplotlib; the short help shown in
the listing is the table's (a test keeps it equal to each command's docstring). A module that fails
to import fails the command loudly — nothing is skipped silently. A command's modules are imported
with the cyclic GC paused and then frozen (``gc.freeze``): they live as long as the process, and
collecting while they are made was ~10% of a run's start-up.
"""

from __future__ import annotations

import gc
import importlib
import logging
from typing import Annotated, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup


class Command(NamedTuple):
    module: str
    """The group module that registers it."""
    help: str
    """Short help for the top-level listing (the first line of the command's docstring)."""


COMMANDS: dict[str, Command] = {
    "validate": Command("masbench.cli.spec", "Check YAML files: syntax, types, unknown keys, missing fields, "
                                             "references, design graphs."),
    "schema": Command("masbench.cli.spec", "Print the JSON Schema of a YAML kind (all kinds if none given), "
                                           "for editor autocompletion."),
    "run": Command("masbench.cli.run", "Run a suite (designs × tasks × seeds + the CoT-SC pool) into DuckDB. "
                                           "Rerun to resume."),
    "doctor": Command("masbench.cli.doctor", "Make one cheap call per model of a suite and say which ones work "
                                             "(exit 3 if one is misconfigured)."),
    "runs": Command("masbench.cli.store", "List the runs in a store."),
    "status": Command("masbench.cli.status", "Show a run's progress (cells, calls, tokens, USD, failures), also "
                                             "while it runs."),
    "view": Command("masbench.cli.view", "Browse a store's runs, task grids, traces and CoT-SC pools in a local "
                                         "web viewer (read-only)."),
    "export": Command("masbench.cli.store",
                      "Export the store: its tables to Parquet, or its runs as inspect_ai eval logs."),
    "reprice": Command("masbench.cli.costs", "Re-price a finished run's token classes under other price tables "
                                             "(counterfactual pricing)."),
    "report": Command("masbench.cli.report", "Write cost/accuracy plots, marginal-utility tables (CSV, Markdown) "
                                             "and index.html."),
    "compare": Command("masbench.cli.report", "Print the marginal-utility table against CoT-SC and a verdict per "
                                              "design."),
    "plan": Command("masbench.cli.stats", "How many tasks (and seeds) detect a Δ-point gap against CoT-SC at 80% "
                                          "power."),
    "stats": Command("masbench.cli.stats", "Recompute a stored run's exact CoT-SC curve and paired tests (its "
                                           "recorded settings)."),
    "graph": Command("masbench.cli.graph", "Render a design: Mermaid text on stdout, and a PNG."),
    "tasks": Command("masbench.cli.tasks", "Show and export benchmark tasks."),
    "diagnose": Command("masbench.cli.design", "Architecture diagnostics of a run: nodes, depth, calls/task, "
                                               "unanimity at once, verifier"),
    "design": Command("masbench.cli.design", "Automatic MAS design: one-shot holistic designer, per-task "
                                             "meta-designer, generated designs (stored, exported, listed)."),
    "skills": Command("masbench.cli.routing", "Skill handbooks: learn competence and cost from traces, show them."),
    "route": Command("masbench.cli.routing", "Routers: evaluate them on an outcome matrix; fill decision outcomes."),
    "judge": Command("masbench.cli.judge", "Model judges as scorers: measure a judge against rule-checkable golds."),
    "list": Command("masbench.cli.listing", "List agents, designs, suites, models, ops, formats, backends, scorers, "
                                            "tools: one line each, with where it comes from."),
}
"""Every top-level command, in listing order → the module that registers it."""


class LazyGroup(TyperGroup):
    """A root group whose commands are loaded from :data:`COMMANDS` on first use."""

    def _load(self, name: str) -> None:
        spec = COMMANDS[name]
        sub = typer.Typer()
        # start-up: importing a command's modules (``run``: the harness, the specs, DuckDB, ...) makes
        # ~64,000 GC-tracked objects that live as long as the process, and the cyclic GC traversed them
        # again and again while they were made (~10% of a simulated run's CPU to its first call). It is
        # paused while they are imported, then they are frozen (``gc.freeze``: never traversed again;
        # the ~250 objects of cyclic garbage the imports leave, ~0.1 MB, stay)
        enabled = gc.isenabled()
        gc.disable()
        try:
            importlib.import_module(spec.module).register(sub)
        finally:
            gc.freeze()
            if enabled:
                gc.enable()
        group = typer.main.get_group(sub)
        for cmd_name, cmd in group.commands.items():
            self.commands[cmd_name] = cmd

    # The context and command types are Typer's own (it vendors Click): the overrides leave ``ctx``
    # unannotated so it takes the base method's type.
    def list_commands(self, ctx) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self.commands]))

    def get_command(self, ctx, cmd_name: str):
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        # Listing only: a stand-in with the short help; resolve_command loads the real one.
        return TyperCommand(cmd_name, help=spec.help, short_help=spec.help)

    def resolve_command(self, ctx, args: list[str]):
        if args and args[0] in COMMANDS and args[0] not in self.commands:
            self._load(args[0])
        return super().resolve_command(ctx, args)


app = typer.Typer(cls=LazyGroup, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="masbench: is this multi-agent system worth its cost against CoT-SC at the same budget?")


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log more.")] = False) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def load_all() -> LazyGroup:
    """The root group with every command loaded (for tests and documentation)."""
    group = typer.main.get_group(app)
    assert isinstance(group, LazyGroup)  # app is built with cls=LazyGroup
    for name in COMMANDS:
        if name not in group.commands:
            group._load(name)
    return group


__all__ = ["COMMANDS", "Command", "LazyGroup", "app", "load_all"]
