"""``run_cells``: flushes one at a time, and ``progress.saved`` never counts a cell whose rows the
store has not committed (a sharded run's live file reports it; a test kills a run once its parts
hold rows by it). On a real store, with a writer slowed so that cells finish during its flushes."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

from masbench.harness.cells import Cell
from masbench.harness.engine_inprocess import run_cells
from masbench.harness.progress import Progress
from masbench.store import PoolRow, Store, StoreWriter


class SlowWriter(StoreWriter):
    """A writer whose flush takes 30 ms before writing, counting rows committed and flushes in flight."""

    def __init__(self, store: Store):
        super().__init__(store, flush_rows=10_000, flush_interval_s=0.0)
        self.committed = 0
        self.inflight = 0
        self.most_inflight = 0
        self._count = threading.Lock()

    def flush(self) -> int:
        with self._count:
            self.inflight += 1
            self.most_inflight = max(self.most_inflight, self.inflight)
        try:
            time.sleep(0.03)
            n = super().flush()
        finally:
            with self._count:
                self.inflight -= 1
        self.committed += n
        return n


class OneRowRunner:
    """A cell runner whose every cell takes a few ms and writes one pool row."""

    def __init__(self, writer: SlowWriter):
        self.writer = writer
        self.gateway = SimpleNamespace(fatal=None)

    async def run_cell(self, cell: Cell) -> bool:
        await asyncio.sleep(0.004)
        self.writer.put(PoolRow(run_id="r", task_id=cell.task_id, seed=0, sample_index=0, answer="1", correct=True,
                                prompt_tokens=1, completion_tokens=1, tokens=2, cost_usd=0.0, error=None,
                                ts=time.time(), budget_spent=2.0))
        return True


async def test_saved_counts_only_committed_cells_and_flushes_run_one_at_a_time(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    writer = SlowWriter(store)
    progress = Progress(total=40)
    seen: list[tuple[int, int, int]] = []

    def on_progress() -> None:  # while other cells' flushes are still running
        seen.append((progress.done, progress.saved, writer.committed))

    cells = [Cell("pool", f"t{i}", 0) for i in range(40)]
    await run_cells(OneRowRunner(writer), cells, 4, progress, on_progress)  # type: ignore[arg-type]
    assert all(saved <= committed for _, saved, committed in seen), seen
    assert any(0 < saved < done for done, saved, _ in seen)  # it lagged behind `done` during the run
    assert writer.most_inflight == 1
    assert progress.done == progress.saved == writer.committed == 40
    assert store.sql("SELECT count(*) FROM pool")[0][0] == 40
    store.close()
