"""The package's version and the name it is installed by: a leaf module, so the store and the
telemetry can read them without importing the root package (whose ``__getattr__`` reaches the API)."""

__version__ = "0.1.0"

DISTRIBUTION = "masbench-eval"
"""The name to ``pip install`` (and to read the installed metadata by); ``masbench`` on PyPI is an
unrelated project. The import name and the command are ``masbench``."""

__all__ = ["DISTRIBUTION", "__version__"]
