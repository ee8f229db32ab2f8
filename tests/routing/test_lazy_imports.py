"""A worker process imports no pandas: routing's evaluation, learning and matrix members load on
first use, and every name the facade exports still resolves to its module's object."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_worker_imports_no_pandas_and_every_routing_name_resolves():
    code = textwrap.dedent("""
        import sys
        import masbench.harness.worker_main
        print("worker pandas", "pandas" in sys.modules)
        import masbench.routing as r
        from masbench.routing import evaluation, learn, matrix
        lazy = {"evaluate": evaluation, "plot_pareto": evaluation, "learn_handbook": learn, "refine": learn,
                "to_arrays": matrix, "matrix_from_store": matrix}
        print("same", all(getattr(r, n) is getattr(m, n) for n, m in lazy.items()))
        print("all", all(hasattr(r, n) for n in r.__all__))
        try:
            r.no_such_name
        except AttributeError as exc:
            print("missing", exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["worker pandas False", "same True", "all True",
                   "missing module 'masbench.routing' has no attribute 'no_such_name'"]
