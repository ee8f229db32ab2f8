"""``python -m masbench.cli …``."""

from . import app

app()
