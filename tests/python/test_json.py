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


@pytest.fixture(scope="module")
def edges(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.edges (k int PRIMARY KEY, dec decimal, dt date, du duration, "
        "vi varint)")
    return f"{keyspace}.edges"


def test_decimals_dates_and_durations_in_text_and_json(session, edges):
    """Java's text forms: BigDecimal.toString() in JSON (an exponent once the scale is negative
    or the number small), toPlainString() for CAST to text, ISO dates with a sign beyond years
    0-9999; a duration's string form is accepted from JSON."""
    for k, dec, dt in [(1, "1e2", "'-0001-01-01'"), (2, "123456789.123e5", "'+5881580-07-11'"),
                       (3, "-1.5E-10", "0"), (4, "0.0000001", "'2024-02-29'")]:
        session.execute(f"INSERT INTO {edges} (k, dec, dt) VALUES ({k}, {dec}, {dt})")
    rows = {r.k: r for r in session.execute(
        f"SELECT k, toJson(dec) AS j, CAST(dec AS text) AS t, toJson(dt) AS d FROM {edges}")}
    assert {k: (float(r.j), r.t, json.loads(r.d)) for k, r in rows.items()} == {
        1: (100.0, "100", "-0001-01-01"),
        2: (12345678912300.0, "12345678912300", "+5881580-07-11"),
        3: (-1.5e-10, "-0.00000000015", "-5877641-06-23"),
        4: (1e-7, "0.0000001", "2024-02-29"),
    }
    # JSON writes the exponent form (serde_json spells it `1e+2` for Java's `1E+2`).
    assert rows[1].j.lower() == "1e+2" and rows[4].j.lower() == "1e-7"
    for k, text in [(5, "1h"), (6, "P1W"), (7, "-2d3h")]:
        session.execute(f"INSERT INTO {edges} JSON '{{\"k\": {k}, \"du\": \"{text}\"}}'")
    durations = {r.k: r.d for r in session.execute(
        f"SELECT k, toJson(du) AS d FROM {edges} WHERE k IN (5, 6, 7)")}
    assert durations == {5: '"1h"', 6: '"7d"', 7: '"-2d3h"'}


@pytest.mark.parametrize("doc,message", [
    ('{"k": 9, "dt": 16630}',
     "Error decoding JSON value for dt: Expected a string representation of a date value, "
     "but got a Integer: 16630"),
    ('{"k": 9, "dec": ""}',
     "Error decoding JSON value for dec: Value '' is not a valid representation of a decimal value"),
    ('{"k": 9, "vi": "x"}',
     "Error decoding JSON value for vi: Value 'x' is not a valid representation of a varint value"),
])
def test_json_values_refused_in_cassandras_words(session, edges, doc, message):
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(")):
        session.execute(f"INSERT INTO {edges} JSON '{doc}'")


@pytest.mark.parametrize("cql_type", [
    "int", "bigint", "varint", "decimal", "double", "float", "timestamp", "uuid", "timeuuid",
    "inet", "boolean"])
def test_empty_value_is_an_empty_json_string(session, keyspace, cql_type):
    """An empty (not null) value shows as "" in JSON, as each type's toJSONString writes it
    (Cassandra's EmptyValuesTest)."""
    table = f"{keyspace}.empty_{cql_type}"
    session.execute(f"CREATE TABLE IF NOT EXISTS {table} (k int PRIMARY KEY, v {cql_type})")
    session.execute(f"INSERT INTO {table} (k, v) VALUES (1, blobAs{cql_type}(0x))")
    assert session.execute(f"SELECT {cql_type}AsBlob(v) AS b FROM {table}").one().b == b""
    assert session.execute(f"SELECT JSON * FROM {table}").one().json == '{"k": 1, "v": ""}'
    assert session.execute(f"SELECT toJson(v) AS j FROM {table}").one().j == '""'
