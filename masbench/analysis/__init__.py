"""Read-only tools over a store (layer 7): architecture diagnostics of a run's designs, per-node
ablation, and the Illusion paper's table. They read rows and views; they never change a run.

Public API::

    diagnose(store, run_id=None, designs=None, library=None, ablate_n=0) -> [row per design]
    unanimity(store, run_id, design, ...) / verifier_choices(store, run_id, design, ...)
    ablate(store, run_id, design, n, library) / drop_node(spec, node, library)
    illusion_table(store, run_id=None, library=None) -> pandas.DataFrame
    design_spec(store, library, name)

(``structure`` / ``collapse`` of a spec need no store: :mod:`masbench.design.topology`.)
"""

from .ablation import ablate, ablate_async, drop_node
from .behaviour import approvals, unanimity, verifier_choices
from .diagnose import diagnose
from .illusion import illusion_table
from .lookup import design_spec, entry_params

__all__ = ["ablate", "ablate_async", "approvals", "design_spec", "diagnose", "drop_node", "entry_params", "illusion_table",
           "unanimity", "verifier_choices"]
