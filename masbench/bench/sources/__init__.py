"""Task sources for published data, loaded as published (no conversion step by the user).

A data source is a **reader** (``path`` → groups of rows) and a **format** (rows → tasks), each
looked up by name in a registry (:data:`READERS`, :data:`FORMATS`, defined in :mod:`.base`; one
module per reader or format). The general form of a suite ``tasks:`` entry is
``{path: P, reader: R, format: F}``; the short keys are sugar (:data:`masbench.spec.suite.SUGAR`):

============  ==================  ===========  ========================================================================
key           reader              format       reads
============  ==================  ===========  ========================================================================
``masbench``  ``masbench-dir``    masbench     a local copy of ``Salesforce/MASBench`` (``<config>/<split>-*.parquet``)
``smfr``      ``file``            smfr         the Illusion paper's SMFR jsonl rows (file, folder or glob)
``gsm8k``     ``file``            gsm8k        GSM8K rows (``####`` answers)
``math``      ``file``            math         MATH rows (``\\boxed{}`` in the solution; level and type kept)
``aime``      ``file``            aime         AIME-style rows (integer answers)
``choice``    ``file``            choice       GPQA-style multiple choice (seeded, recorded shuffle)
``table``     ``file``            table        any JSONL/CSV/parquet: dotted ``fields`` paths, ``gold_sep``
``hf``        ``hf``              ``format:``  rows through ``datasets.load_dataset`` (default format ``table``)
``jsonl``     ``legacy-jsonl``    guess        the older generic JSONL reading (columns guessed)
``parquet``   ``legacy-parquet``  guess        the older generic parquet reading
============  ==================  ===========  ========================================================================

Each format names its scorer (the format's own name; ``table``/``guess``: ``params.scorer``, default
``numeric``). Bad data raises :class:`~masbench.bench.errors.TaskDataError` naming the file, row and field.
"""

from __future__ import annotations

from ..errors import TaskDataError
from .base import FORMATS, READERS, Format, Reader, Row, RowGroup
from .load import check_sources, read_source, read_source_counted
from .masbench import CONFIGS, HORIZON_SEP

__all__ = ["CONFIGS", "FORMATS", "HORIZON_SEP", "READERS", "Format", "Reader", "Row", "RowGroup", "TaskDataError",
           "check_sources", "read_source", "read_source_counted"]
