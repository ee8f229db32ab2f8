"""`run` and `compare` print verdicts without importing matplotlib or the trace viewer; writing a
report imports matplotlib, and the viewer only for its trace links."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_printing_verdicts_leaves_matplotlib_unimported_until_a_report_is_written():
    code = textwrap.dedent("""
        import sys
        import masbench.cli.report, masbench.cli.run, masbench.report
        from masbench.report import compare, verdicts
        print("before", "matplotlib" in sys.modules)
        from masbench.report import ReportResult, write_report
        print("after", "matplotlib" in sys.modules, write_report.__module__, ReportResult.__name__)
        try:
            masbench.report.no_such_name
        except AttributeError as exc:
            print("missing", exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["before False", "after True masbench.report.build ReportResult",
                   "missing module 'masbench.report' has no attribute 'no_such_name'"]


def test_compare_leaves_the_viewer_unimported_and_report_links_import_it():
    code = textwrap.dedent("""
        import sys
        import masbench.cli.report, masbench.cli.run
        print("before", "masbench.view" in sys.modules)
        masbench.cli.report.trace_links("none", None, None, "")
        print("none", "masbench.view" in sys.modules)
        masbench.cli.report.trace_links("live", None, None, "http://127.0.0.1:8765/")
        print("live", "masbench.view" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["before False", "none False", "live True"]
