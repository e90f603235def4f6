"""Noticing, inside one process, that a table was changed: `TableChanges` calls back when an ``UPDATE`` or
``DELETE`` of the table runs through SQLAlchemy on any engine of the process, and again when its connection
goes back to the pool (after the commit). The API's key cache listens to ``api_keys`` with it, so that a key
revoked in the server's process is refused from the next request on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.pool import Pool


class TableChanges:
    """Calls ``changed()`` on every ``UPDATE``/``DELETE`` of ``table`` between the first `watch` and as many
    `unwatch` calls (a statement that names the table anywhere counts: a spurious call costs a cache refill,
    a missed one a stale cache)."""

    def __init__(self, table: str, changed: Callable[[], None]) -> None:
        self.table = table
        self.changed = changed
        self._flag = f"reviewdepth.table_changes.{table}.{id(self)}"
        self._lock = threading.Lock()
        self._watchers = 0

    def _after_cursor_execute(self, conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        head = statement.lstrip()[:6].upper()
        if head in ("UPDATE", "DELETE") and self.table in statement:
            conn.info[self._flag] = True
            self.changed()

    def _checkin(self, _dbapi_connection: Any, record: Any) -> None:
        if record is not None and record.info.pop(self._flag, False):
            self.changed()

    def watch(self) -> None:
        with self._lock:
            self._watchers += 1
            if self._watchers == 1:
                event.listen(Engine, "after_cursor_execute", self._after_cursor_execute)
                event.listen(Pool, "checkin", self._checkin)

    def unwatch(self) -> None:
        with self._lock:
            self._watchers -= 1
            if self._watchers == 0:
                event.remove(Engine, "after_cursor_execute", self._after_cursor_execute)
                event.remove(Pool, "checkin", self._checkin)
