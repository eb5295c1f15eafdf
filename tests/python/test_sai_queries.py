"""Cassandra 5.0's Storage-Attached Indexes (SAI) serving a query together.

As in Cassandra 5.0, a WHERE clause whose every restriction some SAI of the table supports
needs no ALLOW FILTERING: `=` on any indexed column, and the slices (`<`, `<=`, `>`, `>=`) on
the types SAI keeps in order (numbers, dates and times, timeuuid, inet, blob), on regular,
clustering and partition key columns, alone or combined. Text, ascii, boolean and uuid are
indexed for `=` only, so a slice on them, or any restriction on a column no SAI covers, still
needs ALLOW FILTERING, in Cassandra's words. Each answer is checked against the rows computed
here from what was written, also paged and prepared.

An `IN` on a column outside the primary key filters (Cassandra 4.1); no index serves it.
A partition key `IN` with an index in use is refused, as Cassandra's
`validateSecondaryIndexSelections` refuses it (with regular indexes too).
"""

from __future__ import annotations

import datetime
import uuid

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

FILTERING = "use ALLOW FILTERING"

ROWS = [
    # (id, ts, age, name, score, born, flag)
    (i % 5, i, 20 + i, f"n{i % 3}", i * 1.5, datetime.date(2024, 1, 1 + i), i % 2 == 0)
    for i in range(20)
]


@pytest.fixture(scope="module")
def ks(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.people (id int, ts int, age int, name text, score double, "
        "born date, flag boolean, note text, PRIMARY KEY (id, ts))")
    for column in ("age", "name", "score", "born", "flag", "ts"):
        session.execute(
            f"CREATE CUSTOM INDEX people_{column} ON {keyspace}.people ({column}) "
            "USING 'StorageAttachedIndex'")
    insert = session.prepare(
        f"INSERT INTO {keyspace}.people (id, ts, age, name, score, born, flag, note) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'x')")
    for row in ROWS:
        session.execute(insert, row)
    return keyspace


def keys(rows):
    return sorted((r.id, r.ts) for r in rows)


def model(predicate):
    return sorted((r[0], r[1]) for r in ROWS if predicate(*r))


@pytest.mark.parametrize("where,predicate", [
    ("age > 35", lambda i, t, a, n, s, b, f: a > 35),
    ("age >= 30 AND age < 33", lambda i, t, a, n, s, b, f: 30 <= a < 33),
    ("age <= 21", lambda i, t, a, n, s, b, f: a <= 21),
    ("age > 30 AND age < 25", lambda i, t, a, n, s, b, f: False),
    ("score <= 3.0", lambda i, t, a, n, s, b, f: s <= 3.0),
    ("born >= '2024-01-15'", lambda i, t, a, n, s, b, f: b >= datetime.date(2024, 1, 15)),
    ("name = 'n1' AND score > 10", lambda i, t, a, n, s, b, f: n == "n1" and s > 10),
    ("age > 30 AND name = 'n1'", lambda i, t, a, n, s, b, f: a > 30 and n == "n1"),
    ("flag = true AND age < 28", lambda i, t, a, n, s, b, f: f and a < 28),
    ("age > 25 AND score < 20 AND born < '2024-01-12'",
     lambda i, t, a, n, s, b, f: a > 25 and s < 20 and b < datetime.date(2024, 1, 12)),
    # The partition key given, an SAI range within it.
    ("id = 1 AND age > 30", lambda i, t, a, n, s, b, f: i == 1 and a > 30),
    ("id = 2 AND ts > 3 AND age < 38", lambda i, t, a, n, s, b, f: i == 2 and t > 3 and a < 38),
    # A clustering column with an SAI, without the partition key.
    ("ts > 15", lambda i, t, a, n, s, b, f: t > 15),
    ("ts > 5 AND age < 37", lambda i, t, a, n, s, b, f: t > 5 and a < 37),
])
def test_sai_restrictions_need_no_allow_filtering(session, ks, where, predicate):
    rows = session.execute(f"SELECT id, ts FROM {ks}.people WHERE {where}")
    assert keys(rows) == model(predicate)
    # Paged: the same rows.
    paged = session.execute(
        SimpleStatement(f"SELECT id, ts FROM {ks}.people WHERE {where}", fetch_size=3))
    assert keys(paged) == model(predicate)
    # With ALLOW FILTERING: the same rows too.
    assert keys(session.execute(
        f"SELECT id, ts FROM {ks}.people WHERE {where} ALLOW FILTERING")) == model(predicate)


def test_sai_ranges_prepared_and_counted(session, ks):
    prepared = session.prepare(
        f"SELECT id, ts FROM {ks}.people WHERE age >= ? AND score < ?")
    for low, high in [(20, 100.0), (25, 15.0), (39, 0.0), (30, 28.5)]:
        assert keys(session.execute(prepared, (low, high))) == model(
            lambda i, t, a, n, s, b, f: a >= low and s < high)
    count = session.execute(f"SELECT count(*) FROM {ks}.people WHERE age > 30").one()[0]
    assert count == len(model(lambda i, t, a, n, s, b, f: a > 30))


def test_sai_ranges_follow_writes_and_deletes(session, ks):
    session.execute(
        f"INSERT INTO {ks}.people (id, ts, age, name) VALUES (9, 100, 1000, 'late')")
    assert keys(session.execute(f"SELECT id, ts FROM {ks}.people WHERE age > 999")) == [
        (9, 100)]
    session.execute(f"UPDATE {ks}.people SET age = 5 WHERE id = 9 AND ts = 100")
    assert keys(session.execute(f"SELECT id, ts FROM {ks}.people WHERE age > 999")) == []
    assert keys(session.execute(f"SELECT id, ts FROM {ks}.people WHERE age < 6")) == [
        (9, 100)]
    session.execute(f"DELETE FROM {ks}.people WHERE id = 9")
    assert keys(session.execute(f"SELECT id, ts FROM {ks}.people WHERE age < 6")) == []


@pytest.mark.parametrize("where", [
    # Text, ascii, boolean and uuid are indexed for equality only.
    "name > 'n1'",
    "flag < true",
    # A column no SAI covers.
    "age > 30 AND note = 'x'",
    "note = 'x'",
])
def test_what_no_sai_serves_still_needs_allow_filtering(session, ks, where):
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT id, ts FROM {ks}.people WHERE {where}")
    session.execute(f"SELECT id, ts FROM {ks}.people WHERE {where} ALLOW FILTERING")


def test_partition_key_in_with_an_index_is_refused(session, ks):
    message = "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported"
    with pytest.raises(InvalidRequest, match=message):
        session.execute(f"SELECT id, ts FROM {ks}.people WHERE id IN (1, 2) AND age > 30")
    with pytest.raises(InvalidRequest, match=message):
        session.execute(
            f"SELECT id, ts FROM {ks}.people WHERE id IN (1, 2) AND name = 'n1' ALLOW FILTERING")
    # A regular index too (Cassandra's check does not depend on the kind of index).
    session.execute(f"CREATE TABLE {ks}.legacy (k int, c int, v int, PRIMARY KEY (k, c))")
    session.execute(f"CREATE INDEX ON {ks}.legacy (v)")
    with pytest.raises(InvalidRequest, match=message):
        session.execute(f"SELECT * FROM {ks}.legacy WHERE k IN (1, 2) AND v = 3")
    # Without a restriction outside the primary key, no index is in use.
    session.execute(f"SELECT * FROM {ks}.legacy WHERE k IN (1, 2) AND c = 3")
    session.execute(f"SELECT id, ts FROM {ks}.people WHERE id IN (1, 2) AND ts > 3")


def test_order_by_with_an_sai_restriction_is_refused(session, ks):
    with pytest.raises(InvalidRequest, match="ORDER BY with 2ndary indexes is not supported"):
        session.execute(
            f"SELECT id, ts FROM {ks}.people WHERE id = 1 AND age > 30 ORDER BY ts DESC")


def test_sai_on_key_columns_of_other_types(session, ks):
    session.execute(
        f"CREATE TABLE {ks}.events (a int, b int, at timestamp, seen timeuuid, ip inet, "
        "payload blob, PRIMARY KEY ((a, b), at))")
    for column in ("b", "at", "seen", "ip", "payload"):
        session.execute(f"CREATE INDEX ON {ks}.events ({column}) USING 'sai'")
    base = datetime.datetime(2025, 3, 1)
    written = []
    for n in range(12):
        at = base + datetime.timedelta(hours=n)
        seen = uuid.uuid1(clock_seq=n)
        ip = f"10.0.0.{n}"
        payload = bytes([n])
        session.execute(
            f"INSERT INTO {ks}.events (a, b, at, seen, ip, payload) VALUES (%s, %s, %s, %s, %s, %s)",
            (n % 2, n % 4, at, seen, ip, payload))
        written.append((n % 2, n % 4, at, ip, payload))

    def found(where):
        return sorted((r.a, r.b, r.at) for r in session.execute(
            f"SELECT a, b, at FROM {ks}.events WHERE {where}"))

    def expect(predicate):
        return sorted((a, b, at) for a, b, at, ip, payload in written
                      if predicate(a, b, at, ip, payload))

    # A partition key component: its slice, served by the SAI.
    assert found("b >= 2") == expect(lambda a, b, at, ip, p: b >= 2)
    assert found("b = 1") == expect(lambda a, b, at, ip, p: b == 1)
    assert found("at > '2025-03-01 05:00:00+0000'") == expect(
        lambda a, b, at, ip, p: at > base + datetime.timedelta(hours=5))
    assert found("ip <= '10.0.0.3'") == expect(lambda a, b, at, ip, p: int(ip.split('.')[-1]) <= 3)
    assert found("payload > 0x08") == expect(lambda a, b, at, ip, p: p > b"\x08")
    assert found("b < 2 AND payload < 0x06") == expect(
        lambda a, b, at, ip, p: b < 2 and p < b"\x06")
    # The partition key's other component is not indexed: filtering.
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT a FROM {ks}.events WHERE a = 1 AND ip > '10.0.0.1'")


def test_in_on_regular_and_static_columns_filters(session, keyspace):
    """Cassandra 4.1's `testInRestrictionsWithAllowFiltering` (CASSANDRA-14344): an `IN` on a
    regular, static, clustering or partition key column filters with ALLOW FILTERING; no
    index serves it."""
    t = f"{keyspace}.in_filter"
    session.execute(
        f"CREATE TABLE {t} (pk1 int, pk2 int, c text, s int static, v int, "
        "PRIMARY KEY ((pk1, pk2), c))")
    insert = session.prepare(f"INSERT INTO {t} (pk1, pk2, c, s, v) VALUES (?, ?, ?, ?, ?)")
    for row in [(1, 0, "5", 1, 3), (1, 0, "7", 1, 2), (1, 1, "7", 1, 3), (2, 0, "4", 2, 1),
                (2, 3, "6", 2, 8)]:
        session.execute(insert, row)

    def found(where, values=()):
        return sorted(tuple(r) for r in session.execute(
            f"SELECT pk1, pk2, c, s, v FROM {t} WHERE {where} ALLOW FILTERING", values))

    assert found("v IN (4, 3)") == [(1, 0, "5", 1, 3), (1, 1, "7", 1, 3)]
    prepared = session.prepare(f"SELECT pk1, pk2, c, s, v FROM {t} WHERE v IN ? ALLOW FILTERING")
    assert sorted(tuple(r) for r in session.execute(prepared, ([4, 3],))) == [
        (1, 0, "5", 1, 3), (1, 1, "7", 1, 3)]
    assert found("c IN ('7', '6', '8')") == [
        (1, 0, "7", 1, 2), (1, 1, "7", 1, 3), (2, 3, "6", 2, 8)]
    assert found("pk1 IN (1, 3)") == [(1, 0, "5", 1, 3), (1, 0, "7", 1, 2), (1, 1, "7", 1, 3)]
    assert found("s IN (1, 3)") == [(1, 0, "5", 1, 3), (1, 0, "7", 1, 2), (1, 1, "7", 1, 3)]
    # An SAI on the column does not serve IN in Cassandra 5.0: still filtering.
    session.execute(f"CREATE INDEX ON {t} (v) USING 'sai'")
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT * FROM {t} WHERE v IN (4, 3)")
    assert found("v IN (4, 3)") == [(1, 0, "5", 1, 3), (1, 1, "7", 1, 3)]
    # Counters too.
    counters = f"{keyspace}.in_counters"
    session.execute(f"CREATE TABLE {counters} (pk int PRIMARY KEY, v counter)")
    for pk, by in [(1, 1), (2, 2), (3, 1)]:
        session.execute(f"UPDATE {counters} SET v = v + {by} WHERE pk = {pk}")
    assert sorted(r.pk for r in session.execute(
        f"SELECT pk FROM {counters} WHERE v IN (0, 1) ALLOW FILTERING")) == [1, 3]


def test_sai_equality_on_a_decimal_compares_values(session, keyspace):
    """SAI compares decimals by value: `1.10` finds `1.1` (Cassandra 5.0's SAI encodes
    decimals by value), for `=` as for ranges."""
    t = f"{keyspace}.decimals"
    session.execute(f"CREATE TABLE {t} (pk int PRIMARY KEY, dec decimal, tags set<decimal>)")
    session.execute(f"CREATE INDEX ON {t} (dec) USING 'sai'")
    session.execute(f"CREATE INDEX ON {t} (tags) USING 'sai'")
    session.execute(f"INSERT INTO {t} (pk, dec, tags) VALUES (1, 1.1, {{2.50}})")
    session.execute(f"INSERT INTO {t} (pk, dec, tags) VALUES (2, 1.2, {{2.6}})")
    for where in ("dec = 1.10", "dec = 1.1", "dec = 11e-1", "dec >= 1.10 AND dec <= 1.10",
                  "tags CONTAINS 2.5"):
        assert [r.pk for r in session.execute(f"SELECT pk FROM {t} WHERE {where}")] == [1], where


def test_slices_on_two_sai_clustering_columns(session, keyspace):
    """Cassandra 5.0's AllowFilteringTest: slices on two clustering columns that SAIs index
    need no ALLOW FILTERING."""
    t = f"{keyspace}.two_slices"
    session.execute(f"CREATE TABLE {t} (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))")
    session.execute(f"CREATE INDEX ON {t} (c1) USING 'sai'")
    session.execute(f"CREATE INDEX ON {t} (c2) USING 'sai'")
    for k in range(2):
        for c1 in range(3):
            for c2 in range(3):
                session.execute(
                    f"INSERT INTO {t} (k, c1, c2, v) VALUES ({k}, {c1}, {c2}, {c1 * c2})")
    found = sorted(tuple(r) for r in session.execute(
        f"SELECT k, c1, c2 FROM {t} WHERE c1 > 1 AND c2 > 1"))
    assert found == [(0, 2, 2), (1, 2, 2)]
    found = sorted(tuple(r) for r in session.execute(
        f"SELECT k, c1, c2 FROM {t} WHERE c2 > 0 AND c1 < 1"))
    assert found == [(0, 0, 1), (0, 0, 2), (1, 0, 1), (1, 0, 2)]
    found = sorted(tuple(r) for r in session.execute(
        f"SELECT k, c1, c2 FROM {t} WHERE k = 1 AND c1 >= 1 AND c2 < 1"))
    assert found == [(1, 1, 0), (1, 2, 0)]
    # An unindexed column still needs ALLOW FILTERING.
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT * FROM {t} WHERE c1 > 1 AND c2 > 1 AND v = 4")


@pytest.mark.parametrize("using", ["USING 'sai'", ""])
def test_an_index_on_a_clustering_column_does_not_serve_a_regular_filter(session, keyspace,
                                                                         using):
    """Cassandra 5.0's AllowFilteringTest: with the partition key given, an index on a
    clustering column serves none of the filters on other columns."""
    t = f"{keyspace}.ck_index_{'sai' if using else 'regular'}"
    session.execute(f"CREATE TABLE {t} (k int, c int, v int, PRIMARY KEY (k, c))")
    session.execute(f"CREATE INDEX ON {t} (c) {using}")
    session.execute(f"INSERT INTO {t} (k, c, v) VALUES (0, 0, 1)")
    for where in ("k = 0 AND v = 1", "k = 0 AND c = 0 AND v = 1", "c = 0 AND v = 1"):
        with pytest.raises(InvalidRequest, match=FILTERING):
            session.execute(f"SELECT * FROM {t} WHERE {where}")
        assert len(list(session.execute(f"SELECT * FROM {t} WHERE {where} ALLOW FILTERING"))) \
            == 1
    assert len(list(session.execute(f"SELECT * FROM {t} WHERE c = 0"))) == 1


@pytest.mark.parametrize("function", [None, "cosine", "euclidean"])
def test_vectors_an_sai_cannot_index_are_refused_on_write(session, keyspace, function):
    """Cassandra 5.0's `validateIndexable`: no component may be NaN, infinite or of magnitude
    over 1e17, and cosine similarity (the default) cannot index the zero vector."""
    t = f"{keyspace}.vec_{function or 'default'}"
    session.execute(f"CREATE TABLE {t} (pk int PRIMARY KEY, v vector<float, 2>)")
    options = f" WITH OPTIONS = {{'similarity_function': '{function}'}}" if function else ""
    session.execute(f"CREATE INDEX ON {t} (v) USING 'sai'{options}")
    insert = session.prepare(f"INSERT INTO {t} (pk, v) VALUES (?, ?)")
    for bad, message in [([1.0, float("nan")], r"non-finite value at vector\[1\]=NaN"),
                         ([float("inf"), 1.0], r"non-finite value at vector\[0\]=Infinity"),
                         ([1e18, 1.0], r"Out-of-bounds value at vector\[0\]=1.0E18")]:
        with pytest.raises(InvalidRequest, match=message):
            session.execute(insert, (1, bad))
    zero = "Zero vectors cannot be indexed or queried with cosine similarity"
    if function == "euclidean":
        session.execute(insert, (1, [0.0, 0.0]))
    else:
        with pytest.raises(InvalidRequest, match=zero):
            session.execute(insert, (1, [0.0, 0.0]))
        with pytest.raises(InvalidRequest, match=zero):
            session.execute(f"SELECT pk FROM {t} ORDER BY v ANN OF [0.0, 0.0] LIMIT 1")
    session.execute(insert, (2, [0.5, 1.0]))
    assert [r.pk for r in session.execute(f"SELECT pk FROM {t} WHERE pk = 2")] == [2]


def test_sai_ddl_refusals_as_cassandra_5_words_them(session, keyspace):
    """Cassandra 5.0's StorageAttachedIndexDDLTest: one SAI per column whatever alias names
    the class, none over several columns, none on a column whose name is not a plain
    identifier; `target` among the options is taken and replaced."""
    t = f"{keyspace}.sai_ddl"
    session.execute(f'CREATE TABLE {t} (k int PRIMARY KEY, v int, w int, "/odd" text)')
    session.execute(f"CREATE INDEX sai_ddl_a ON {t} (v) USING 'sai'")
    with pytest.raises(InvalidRequest, match="Cannot create more than one storage-attached "
                                             "index on the same column: v"):
        session.execute(f"CREATE INDEX sai_ddl_b ON {t} (v) USING 'StorageAttachedIndex'")
    # A regular index beside it is allowed (MixedIndexImplementationsTest).
    session.execute(f"CREATE INDEX sai_ddl_legacy ON {t} (v)")
    with pytest.raises(InvalidRequest, match="A storage-attached index cannot be created over "
                                             "multiple columns: v, w"):
        session.execute(f"CREATE CUSTOM INDEX ON {t} (v, w) USING 'StorageAttachedIndex'")
    with pytest.raises(InvalidRequest, match="Column '/odd' is longer than the permissible name "
                                             "length of 48 characters or contains "
                                             "non-alphanumeric-underscore characters"):
        session.execute(f'CREATE INDEX ON {t} ("/odd") USING \'sai\'')
    session.execute(f"CREATE INDEX sai_ddl_w ON {t} (w) USING 'sai' "
                    "WITH OPTIONS = {'target': 'whatever'}")
    session.execute(f"INSERT INTO {t} (k, v, w) VALUES (1, 2, 3)")
    assert [r.k for r in session.execute(f"SELECT k FROM {t} WHERE w > 2")] == [1]
