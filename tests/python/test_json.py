"""INSERT JSON and SELECT JSON as Cassandra 4.1 does them (column values to and from JSON)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def table(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.docs (k int, c text, v double, ts timestamp, tags set<text>, "
        "m map<int, text>, PRIMARY KEY (k, c))")
    return f"{keyspace}.docs"


def test_insert_json_then_select_json(session, table):
    session.execute(
        f"INSERT INTO {table} JSON '{{\"k\": 1, \"c\": \"a\", \"v\": 1.5, "
        "\"ts\": \"2024-01-31 10:00:00.000Z\", \"tags\": [\"y\", \"x\"], \"m\": {\"1\": \"one\"}}'")
    row = session.execute(f"SELECT JSON * FROM {table} WHERE k = 1").one()
    assert json.loads(row.json) == {
        "k": 1, "c": "a", "m": {"1": "one"}, "tags": ["x", "y"],
        "ts": "2024-01-31 10:00:00.000Z", "v": 1.5,
    }
    # Cassandra's own spacing, and the column order of SELECT *.
    assert row.json.startswith('{"k": 1, "c": "a", "m": {"1": "one"}, "tags": ["x", "y"]')


def test_prepared_insert_json_and_default_unset(session, table):
    insert = session.prepare(f"INSERT INTO {table} JSON ?")
    session.execute(insert, ['{"k": 2, "c": "b", "v": 2, "tags": ["t"]}'])
    # Without DEFAULT UNSET, a missing column is written as null.
    session.execute(f"INSERT INTO {table} JSON '{{\"k\": 2, \"c\": \"b\", \"v\": 3}}'")
    row = session.execute(f"SELECT v, tags FROM {table} WHERE k = 2 AND c = 'b'").one()
    assert (row.v, row.tags) == (3.0, None)
    session.execute(f"INSERT INTO {table} JSON '{{\"k\": 2, \"c\": \"b\", \"tags\": [\"u\"]}}' "
                    "DEFAULT UNSET")
    row = session.execute(f"SELECT v, tags FROM {table} WHERE k = 2 AND c = 'b'").one()
    assert (row.v, set(row.tags)) == (3.0, {"u"})


def test_select_json_with_aliases(session, table):
    session.execute(f"INSERT INTO {table} (k, c, v) VALUES (3, 'x', 0.25)")
    row = session.execute(f"SELECT JSON k, v AS value FROM {table} WHERE k = 3").one()
    assert row.json == '{"k": 3, "value": 0.25}'


def test_bad_json_is_invalid(session, table):
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest, match="unrecognized column"):
        session.execute(f"INSERT INTO {table} JSON '{{\"k\": 4, \"c\": \"d\", \"nope\": 1}}'")
    with pytest.raises(InvalidRequest):
        session.execute(f"INSERT INTO {table} JSON 'not json'")
