"""Values, operations and functions in statements where Cassandra 4.1's rules and words are
pinned: operations a column's type does not take, UDT field writes and deletions, tuple and
UDT literals, functions as terms, inet forms, and JSON (see also test_json.py)."""

from __future__ import annotations

import pytest
from cassandra import InvalidRequest


@pytest.fixture(scope="module")
def ks(session, keyspace):
    session.execute(f"CREATE TYPE {keyspace}.ut (a int, b text)")
    session.execute(
        f"CREATE TABLE {keyspace}.u (k int PRIMARY KEY, u ut, fu frozen<ut>, i int, "
        "t frozen<tuple<int, int>>)")
    return keyspace


def refused(session, statement, message, params=None):
    with pytest.raises(InvalidRequest) as error:
        session.execute(statement, params)
    assert message in str(error.value), str(error.value)


def test_udt_takes_no_addition_or_subtraction(session, ks):
    session.execute(f"INSERT INTO {ks}.u (k, u) VALUES (0, {{a: 7, b: 'keep me'}})")
    refused(session, f"UPDATE {ks}.u SET u = u + {{a: 1}} WHERE k = 0",
            "Invalid operation (u = u + {a: 1}) for non counter column u")
    refused(session, f"UPDATE {ks}.u SET u = u - {{a: 1}} WHERE k = 0",
            "Invalid operation (u = u - {a: 1}) for non counter column u")
    row = session.execute(f"SELECT u FROM {ks}.u WHERE k = 0").one()
    assert (row.u.a, row.u.b) == (7, "keep me")


def test_field_writes_and_deletions_of_frozen_or_non_udt_columns(session, ks):
    refused(session, f"DELETE fu.a FROM {ks}.u WHERE k = 0",
            "Frozen UDT column fu does not support field deletions")
    refused(session, f"DELETE i.a FROM {ks}.u WHERE k = 0",
            "Invalid field deletion operation for non-UDT column i")
    refused(session, f"UPDATE {ks}.u SET fu.a = 0 WHERE k = 0",
            "Invalid operation (fu.a = 0) for frozen UDT column fu")
    refused(session, f"UPDATE {ks}.u SET i.a = 0 WHERE k = 0",
            "Invalid operation (i.a = 0) for non-UDT column i")
    refused(session, f"DELETE i[0] FROM {ks}.u WHERE k = 0",
            "Invalid deletion operation for non collection column i")
