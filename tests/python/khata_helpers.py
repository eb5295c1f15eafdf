"""Small helpers shared by the test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import time


def wait_until(predicate, timeout_s: float, interval_s: float = 0.1) -> bool:
    """Polls `predicate` until it returns true or `timeout_s` passes; returns its last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return bool(predicate())
        time.sleep(interval_s)


def execute_with_warnings(session, statement, parameters=None):
    """Runs `statement`; returns `(rows, warnings)` with the server's warnings (None if none).

    The driver keeps a response's warnings on the `ResponseFuture` (and logs them), not on the
    `ResultSet`, so this goes through `execute_async`.
    """
    future = session.execute_async(statement, parameters)
    rows = list(future.result())
    return rows, future.warnings
