"""Small helpers shared by the test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import time

import pytest


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


def dynamo_refused(call, **kwargs) -> str:
    """Makes the DynamoDB request `call(**kwargs)`, which must be refused with a
    ValidationException; returns the refusal's message."""
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as e:
        call(**kwargs)
    assert e.value.response["Error"]["Code"] == "ValidationException", e.value.response
    return e.value.response["Error"]["Message"]
