"""masbench: does this multi-agent system beat CoT-SC at the same budget? Measured, in DuckDB."""

__version__ = "0.1.0"
