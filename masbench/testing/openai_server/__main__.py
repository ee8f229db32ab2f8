"""``python -m masbench.testing.openai_server``."""

from .cli import main

raise SystemExit(main())
