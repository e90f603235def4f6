"""Input errors that name the file, the line and the field."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: carries the file, 1-based line and field name so every door can report them."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        super().__init__(self.describe())

    def describe(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
        if self.field is not None:
            where += f": field {self.field}"
        return f"{where}: {self.message}"
