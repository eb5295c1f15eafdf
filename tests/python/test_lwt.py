"""Lightweight transactions: the seed's username claim and compare-and-set.

Cassandra 4.1 answers a conditional statement with a row whose first column is `[applied]`
(boolean). When the condition fails it adds the current values: every column for
`IF NOT EXISTS` / `IF EXISTS`, the columns named in the condition for `IF col = x`.
"""

from __future__ import annotations

import pytest
from cassandra import InvalidRequest
from cassandra.query import UNSET_VALUE


@pytest.fixture(scope="module")
def usernames(session, keyspace):
    session.execute(f"""
        CREATE TABLE {keyspace}.usernames (
          username text PRIMARY KEY,
          user_id  bigint,
          email    text)""")
    return f"{keyspace}.usernames"


def row_dict(result):
    row = result.one()
    return dict(zip(result.column_names, row))


def test_claim_a_free_username(session, usernames):
    result = session.execute(
        f"INSERT INTO {usernames} (username, user_id, email) VALUES ('ana', 1, 'ana@x') "
        "IF NOT EXISTS")
    assert result.column_names[0] == "[applied]"
    assert result.was_applied is True
    assert row_dict(result) == {"[applied]": True}

    result = session.execute(
        f"INSERT INTO {usernames} (username, user_id, email) VALUES ('ana', 2, 'imposter@x') "
        "IF NOT EXISTS")
    assert result.was_applied is False
    assert row_dict(result) == {
        "[applied]": False, "username": "ana", "user_id": 1, "email": "ana@x"}
    row = session.execute(f"SELECT user_id, email FROM {usernames} WHERE username = 'ana'").one()
    assert (row.user_id, row.email) == (1, "ana@x")


def test_claim_with_a_prepared_statement(session, usernames):
    claim = session.prepare(
        f"INSERT INTO {usernames} (username, user_id) VALUES (?, ?) IF NOT EXISTS")
    assert session.execute(claim, ("bo", 10)).was_applied is True
    lost = session.execute(claim, ("bo", 11))
    assert lost.was_applied is False
    assert lost.one().user_id == 10


def test_concurrent_claims_have_exactly_one_winner(session, usernames):
    claim = session.prepare(
        f"INSERT INTO {usernames} (username, user_id) VALUES (?, ?) IF NOT EXISTS")
    futures = [session.execute_async(claim, ("popular", user)) for user in range(100, 120)]
    results = [f.result() for f in futures]
    winners = [user for user, r in zip(range(100, 120), results) if r.was_applied]
    assert len(winners) == 1
    for result in results:
        if not result.was_applied:
            assert result.one().user_id == winners[0]
    row = session.execute(f"SELECT user_id FROM {usernames} WHERE username = 'popular'").one()
    assert row.user_id == winners[0]


def test_update_if_column_equals(session, usernames):
    session.execute(f"INSERT INTO {usernames} (username, user_id) VALUES ('cy', 20)")
    result = session.execute(
        f"UPDATE {usernames} SET user_id = 21 WHERE username = 'cy' IF user_id = 20")
    assert result.was_applied is True
    assert result.column_names == ["[applied]"]

    result = session.execute(
        f"UPDATE {usernames} SET user_id = 22 WHERE username = 'cy' IF user_id = 20")
    assert result.was_applied is False
    assert row_dict(result) == {"[applied]": False, "user_id": 21}
    assert session.execute(
        f"SELECT user_id FROM {usernames} WHERE username = 'cy'").one().user_id == 21


def test_update_if_exists_on_a_missing_row(session, usernames):
    result = session.execute(
        f"UPDATE {usernames} SET user_id = 1 WHERE username = 'nobody' IF EXISTS")
    assert result.was_applied is False
    assert list(session.execute(f"SELECT * FROM {usernames} WHERE username = 'nobody'")) == []


def test_delete_if_exists(session, usernames):
    session.execute(f"INSERT INTO {usernames} (username, user_id) VALUES ('di', 30)")
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'di' IF EXISTS")
    assert result.was_applied is True
    assert list(session.execute(f"SELECT * FROM {usernames} WHERE username = 'di'")) == []
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'di' IF EXISTS")
    assert result.was_applied is False


def test_delete_if_column_equals(session, usernames):
    """Releasing a username only if it is still yours."""
    session.execute(f"INSERT INTO {usernames} (username, user_id) VALUES ('ed', 40)")
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'ed' IF user_id = 41")
    assert result.was_applied is False
    assert row_dict(result) == {"[applied]": False, "user_id": 40}
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'ed' IF user_id = 40")
    assert result.was_applied is True
    assert list(session.execute(f"SELECT * FROM {usernames} WHERE username = 'ed'")) == []


def test_a_released_username_can_be_claimed_again(session, usernames):
    claim = f"INSERT INTO {usernames} (username, user_id) VALUES ('fi', %s) IF NOT EXISTS"
    assert session.execute(claim, (50,)).was_applied
    assert session.execute(
        f"DELETE FROM {usernames} WHERE username = 'fi' IF user_id = 50").was_applied
    assert session.execute(claim, (51,)).was_applied
    assert session.execute(
        f"SELECT user_id FROM {usernames} WHERE username = 'fi'").one().user_id == 51


@pytest.fixture(scope="module")
def orders(session, keyspace):
    session.execute(f"""
        CREATE TABLE {keyspace}.orders (
          order_id int,
          item_id  int,
          quantity int,
          status   text,
          PRIMARY KEY (order_id, item_id))""")
    session.execute(f"CREATE TABLE {keyspace}.other (order_id int PRIMARY KEY, note text)")
    return keyspace


def test_conditional_batch_applies_all_or_nothing(session, orders):
    t = f"{orders}.orders"
    session.execute(f"INSERT INTO {t} (order_id, item_id, quantity, status) VALUES (1, 1, 5, 'pending')")
    batch = (
        "BEGIN BATCH "
        f"INSERT INTO {t} (order_id, item_id, quantity, status) VALUES (1, 3, 1, 'pending') IF NOT EXISTS; "
        f"UPDATE {t} SET status = 'confirmed' WHERE order_id = 1 AND item_id = 1 IF status = 'pending'; "
        f"UPDATE {t} SET quantity = 9 WHERE order_id = 1 AND item_id = 2; "
        "APPLY BATCH")
    result = session.execute(batch)
    assert result.was_applied is True
    assert row_dict(result) == {"[applied]": True}
    rows = {r.item_id: (r.quantity, r.status) for r in session.execute(
        f"SELECT item_id, quantity, status FROM {t} WHERE order_id = 1")}
    assert rows == {1: (5, "confirmed"), 2: (9, None), 3: (1, "pending")}

    # Run again: item 3 exists and item 1 is no longer pending, so nothing is written, and the
    # answer has one row per existing checked row, keyed by its primary key.
    # (The driver's `was_applied` wants one row unless the query is a BatchStatement.)
    result = session.execute(batch.replace("quantity = 9", "quantity = 10"))
    assert result.column_names[0] == "[applied]"
    got = [dict(zip(result.column_names, r)) for r in result.current_rows]
    assert [(g["[applied]"], g["order_id"], g["item_id"]) for g in got] == [
        (False, 1, 1), (False, 1, 3)]
    assert got[0]["status"] == "confirmed"
    assert session.execute(
        f"SELECT quantity FROM {t} WHERE order_id = 1 AND item_id = 2").one().quantity == 9


def test_conditional_batch_on_conditions_only(session, orders):
    t = f"{orders}.orders"
    session.execute(f"INSERT INTO {t} (order_id, item_id, status) VALUES (2, 1, 'a')")
    session.execute(f"INSERT INTO {t} (order_id, item_id, status) VALUES (2, 2, 'b')")
    result = session.execute(
        "BEGIN BATCH "
        f"UPDATE {t} SET status = 'x' WHERE order_id = 2 AND item_id = 1 IF status = 'a'; "
        f"UPDATE {t} SET status = 'y' WHERE order_id = 2 AND item_id = 2 IF status = 'wrong'; "
        "APPLY BATCH")
    got = [dict(zip(result.column_names, r)) for r in result.current_rows]
    assert got == [
        {"[applied]": False, "order_id": 2, "item_id": 1, "status": "a"},
        {"[applied]": False, "order_id": 2, "item_id": 2, "status": "b"},
    ]
    statuses = [r.status for r in session.execute(f"SELECT status FROM {t} WHERE order_id = 2")]
    assert statuses == ["a", "b"]
    # Nothing exists to report: just [applied] = false.
    result = session.execute(
        "BEGIN BATCH "
        f"UPDATE {t} SET status = 'z' WHERE order_id = 3 AND item_id = 1 IF EXISTS; "
        "APPLY BATCH")
    assert result.was_applied is False
    assert result.column_names == ["[applied]"]


def test_conditional_batch_with_prepared_statements(session, orders):
    from cassandra.query import BatchStatement
    t = f"{orders}.orders"
    claim = session.prepare(
        f"INSERT INTO {t} (order_id, item_id, status) VALUES (?, ?, ?) IF NOT EXISTS")
    batch = BatchStatement()
    batch.add(claim, (4, 1, "new"))
    batch.add(claim, (4, 2, "new"))
    assert session.execute(batch).was_applied is True
    batch = BatchStatement()
    batch.add(claim, (4, 2, "again"))
    batch.add(claim, (4, 3, "again"))
    result = session.execute(batch)
    assert result.was_applied is False
    assert [r.status for r in session.execute(f"SELECT status FROM {t} WHERE order_id = 4")] == [
        "new", "new"]


@pytest.mark.parametrize("body,message", [
    ("INSERT INTO {ks}.orders (order_id, item_id) VALUES (5, 1) IF NOT EXISTS; "
     "INSERT INTO {ks}.orders (order_id, item_id) VALUES (6, 1) IF NOT EXISTS;",
     "Batch with conditions cannot span multiple partitions"),
    ("INSERT INTO {ks}.orders (order_id, item_id) VALUES (5, 1) IF NOT EXISTS; "
     "INSERT INTO {ks}.other (order_id, note) VALUES (5, 'n');",
     "Batch with conditions cannot span multiple tables"),
])
def test_conditional_batch_refusals(session, orders, body, message):
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest, match=message):
        session.execute("BEGIN BATCH " + body.format(ks=orders) + " APPLY BATCH")
    with pytest.raises(InvalidRequest, match="Cannot provide custom timestamp for conditional BATCH"):
        session.execute(
            f"BEGIN BATCH USING TIMESTAMP 5 INSERT INTO {orders}.orders (order_id, item_id) "
            "VALUES (7, 1) IF NOT EXISTS; APPLY BATCH")


def test_an_absent_collection_is_the_empty_one_in_conditions(session, keyspace):
    """A non-frozen collection has no empty value: `IF l = []` holds on a row without `l`
    (Cassandra's InsertUpdateIfConditionCollectionsTest.testNonFrozenEmptyCollection)."""
    table = f"{keyspace}.colls"
    session.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, l list<int>, m map<int, int>, "
                    "s set<int>, v int)")
    session.execute(f"INSERT INTO {table} (k, v) VALUES (0, 0)")
    applied = lambda condition: session.execute(  # noqa: E731
        f"UPDATE {table} SET v = 1 WHERE k = 0 IF {condition}").was_applied
    assert applied("l = []")
    assert applied("l = null AND m = {} AND s <= {1}")
    assert applied("l < [1] AND l >= [] AND l IN ([], [5])")
    assert not applied("l != []")
    assert not applied("l > []")
    prepared = session.prepare(f"UPDATE {table} SET v = 2 WHERE k = 0 IF l = ?")
    assert session.execute(prepared, [[]]).was_applied


def test_conditional_batch_cells_take_the_batchs_time(session, keyspace):
    """Paxos commits a conditional batch at its ballot's time: a statement's own USING
    TIMESTAMP gives way, so a later write wins over it."""
    table = f"{keyspace}.lwtb"
    session.execute(f"CREATE TABLE {table} (k int, c int, v int, w int, PRIMARY KEY (k, c))")
    session.execute(f"INSERT INTO {table} (k, c, v) VALUES (0, 0, 0)")
    result = session.execute(
        f"BEGIN BATCH UPDATE {table} SET v = 1 WHERE k = 0 AND c = 0 IF v = 0; "
        f"UPDATE {table} USING TIMESTAMP 5 SET w = 7 WHERE k = 0 AND c = 1; APPLY BATCH")
    assert result.was_applied
    row = session.execute(f"SELECT w, writetime(w) AS t FROM {table} WHERE k = 0 AND c = 1").one()
    assert row.w == 7 and row.t > 1_000_000_000_000_000
    session.execute(f"UPDATE {table} USING TIMESTAMP 6 SET w = 8 WHERE k = 0 AND c = 1")
    assert session.execute(f"SELECT w FROM {table} WHERE k = 0 AND c = 1").one().w == 7
    with pytest.raises(InvalidRequest, match="IN on the clustering key columns is not supported "
                       "with conditional updates"):
        session.execute(
            f"BEGIN BATCH UPDATE {table} SET v = 2 WHERE k = 0 AND c = 0 IF v = 1; "
            f"UPDATE {table} SET v = 1 WHERE k = 0 AND c IN (1, 2); APPLY BATCH")


@pytest.mark.parametrize("condition, message", [
    ("d > 1s", "Slice conditions ( > ) are not supported on durations"),
    ("d <= 1s", "Slice conditions ( <= ) are not supported on durations"),
    ("l > [1s]", "Slice conditions are not supported on collections containing durations"),
    ("t < (1, 1s)", "Slice conditions are not supported on tuples containing durations"),
    ("l[-1] = 1s", "Invalid negative list index -1"),
])
def test_condition_refusals(session, keyspace, condition, message):
    table = f"{keyspace}.durs"
    session.execute(f"CREATE TABLE IF NOT EXISTS {table} (k int PRIMARY KEY, v int, d duration, "
                    "l list<duration>, t tuple<int, duration>)")
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        session.execute(f"UPDATE {table} SET v = 1 WHERE k = 0 IF {condition}")


def test_failed_conditions_answer_regular_then_static_columns(session, keyspace):
    table = f"{keyspace}.stat"
    session.execute(f"CREATE TABLE {table} (k int, c int, s int static, v int, "
                    "PRIMARY KEY (k, c))")
    session.execute(f"INSERT INTO {table} (k, c, s, v) VALUES (0, 0, 5, 1)")
    result = session.execute(f"UPDATE {table} SET v = 2 WHERE k = 0 AND c = 0 IF s = 4 AND v = 1")
    assert result.column_names == ["[applied]", "v", "s"]
    assert list(result.one()) == [False, 1, 5]
    # A missing row, conditions on regular columns only: the static row is not read.
    result = session.execute(f"DELETE v FROM {table} WHERE k = 0 AND c = 9 IF v = 3")
    assert result.column_names == ["[applied]"]
    # Unset values in an IN list are left out.
    prepared = session.prepare(f"UPDATE {table} SET v = 3 WHERE k = 0 AND c = 0 IF v IN (?, ?)")
    assert session.execute(prepared, [UNSET_VALUE, 1]).was_applied


def test_failed_static_conditions_show_a_partition_without_static_values(session, keyspace):
    # InsertUpdateIfConditionTest.testConditionalUpdatesWithNullValues: rows but no static
    # value; the static column is shown as null, and a batch shows the partition's first row.
    table = f"{keyspace}.stat_null"
    session.execute(f"CREATE TABLE {table} (a int, b int, s int static, d text, "
                    "PRIMARY KEY (a, b))")
    session.execute(f"INSERT INTO {table} (a, b, d) VALUES (3, 1, 'x')")
    result = session.execute(f"UPDATE {table} SET s = 30 WHERE a = 3 IF s IN (10, 20, 30)")
    assert result.column_names == ["[applied]", "s"]
    assert list(result.one()) == [False, None]
    result = session.execute(
        f"BEGIN BATCH INSERT INTO {table} (a, b, s, d) VALUES (3, 3, 40, 'a'); "
        f"UPDATE {table} SET s = 50 WHERE a = 3 IF s > 5; APPLY BATCH")
    assert result.column_names == ["[applied]", "a", "b", "s"]
    assert list(result.one()) == [False, 3, 1, None]


def test_contains_conditions_on_collections(session, keyspace):
    """`IF c CONTAINS v` and `IF m CONTAINS KEY k` test a collection's members (Cassandra
    5.0's conditions, CASSANDRA-10537), with literals and markers bound as the member's type;
    on a column of another kind they are refused in its words."""
    t = f"{keyspace}.lwt_contains"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v text, s set<int>, l list<text>, "
                    "m map<text, int>, fs frozen<set<int>>)")
    session.execute(f"INSERT INTO {t} (k, v, s, l, m, fs) VALUES (0, 'A', {{1, 2}}, ['A'], "
                    "{'a': 1}, {5})")
    assert session.execute(f"UPDATE {t} SET v = 'B' WHERE k = 0 IF s CONTAINS 1").one()[0]
    assert not session.execute(f"UPDATE {t} SET v = 'C' WHERE k = 0 IF s CONTAINS 3").one()[0]
    assert session.execute(
        f"UPDATE {t} SET v = 'D' WHERE k = 0 IF l CONTAINS 'A' AND m CONTAINS KEY 'a' "
        "AND m CONTAINS 1 AND fs CONTAINS 5").one()[0]
    prepared = session.prepare(f"UPDATE {t} SET v = ? WHERE k = 0 IF m CONTAINS KEY ?")
    assert not session.execute(prepared, ["E", "b"]).one()[0]
    assert session.execute(prepared, ["F", "a"]).one()[0]
    assert not session.execute(f"UPDATE {t} SET v = 'G' WHERE k = 1 IF s CONTAINS 1").one()[0]
    assert session.execute(f"SELECT v FROM {t} WHERE k = 0").one().v == "F"
    with pytest.raises(InvalidRequest, match="Cannot use CONTAINS on non-collection column v"):
        session.execute(f"UPDATE {t} SET v = 'H' WHERE k = 0 IF v CONTAINS 'A'")
    with pytest.raises(InvalidRequest, match="Cannot use CONTAINS KEY on non-map column l"):
        session.execute(f"UPDATE {t} SET v = 'H' WHERE k = 0 IF l CONTAINS KEY 'A'")
    # An unset member: the condition does not hold; a null one is refused in Cassandra's words.
    assert not session.execute(prepared, ["I", UNSET_VALUE]).one()[0]
    with pytest.raises(InvalidRequest,
                       match='Invalid comparison with null for operator "CONTAINS KEY"'):
        session.execute(prepared, ["J", None])
