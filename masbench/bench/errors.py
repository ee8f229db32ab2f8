"""The one error bad task data raises: it names the file, the row and the field."""

from __future__ import annotations


class TaskDataError(ValueError):
    """Task data that cannot be read as its format says: ``FILE row N field F: what is wrong``.

    The CLI prints it on one line and exits 2."""

    def __init__(self, file: object, message: str, row: int | None = None, field: str | None = None):
        self.file, self.row, self.field = str(file), row, field
        where = self.file
        if row is not None:
            where += f" row {row}"
        if field is not None:
            where += f" field {field!r}"
        super().__init__(f"{where}: {message}")
