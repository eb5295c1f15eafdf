"""The native functions Cassandra 5.0 added, in the selection: vector similarities
(`VectorFctsTest`), collection functions (`CollectionFctsTest`), math functions
(`MathFctsTest`) and the snake_case names of the older functions."""

from __future__ import annotations

import math
import re
from decimal import Decimal

import pytest
from cassandra import FunctionFailure, InvalidRequest


@pytest.fixture(scope="module")
def table(session, keyspace):
    t = f"{keyspace}.natives"
    session.execute(
        f"CREATE TABLE {t} (pk int PRIMARY KEY, value vector<float, 2>, l list<float>, "
        "fl frozen<list<float>>, v1 vector<float, 1>, v_int vector<int, 2>, "
        "m map<text, int>, s set<int>, li list<int>, e frozen<list<int>>, "
        "d decimal, i int, t tinyint, f float, dbl double, vi varint, ts timestamp)")
    session.execute(
        f"INSERT INTO {t} (pk, value, l, fl, v1, v_int, m, s, li, e, d, i, t, f, dbl, vi, ts) "
        "VALUES (0, [1, 2], [1, 2], [1, 2], [1], [1, 2], {'b': 2, 'a': 1}, {3, 1, 2}, "
        "[5, 7, 9], [], -1.5, -7, -128, 2.5, -2.5, 1000, '2026-12-05 10:00:00+0000')")
    return t


def one(session, query, *args):
    return list(session.execute(query, args or None))[0]


# jvector's scores of [1, 2] against itself and against [0, 0].
SIMILARITY = {
    "similarity_cosine": 1.0,
    "similarity_euclidean": 1.0,
    "similarity_dot_product": 3.0,
}
SIMILARITY_TO_ZERO = {"similarity_euclidean": 1 / 6, "similarity_dot_product": 0.5}


@pytest.mark.parametrize("function", sorted(SIMILARITY))
def test_vector_similarity_of_columns_literals_and_markers(session, table, function):
    want = SIMILARITY[function]
    for args in ["value, value", "value, [1, 2]", "[1, 2], value", "[1, 2], [1, 2]"]:
        row = one(session, f"SELECT system.{function}({args}) FROM {table}")
        assert row[0] == pytest.approx(want), args
    prepared = session.prepare(f"SELECT {function}(value, ?) FROM {table}")
    assert session.execute(prepared, [[1.0, 2.0]]).one()[0] == pytest.approx(want)
    assert one(session, f"SELECT {function}(value, null) FROM {table}")[0] is None
    assert session.execute(prepared, [None]).one()[0] is None


@pytest.mark.parametrize("function", sorted(SIMILARITY))
def test_vector_similarity_refusals(session, table, function):
    def refused(args, message):
        with pytest.raises(InvalidRequest, match=re.escape(message)):
            session.execute(f"SELECT {function}({args}) FROM {table}")

    name = f"system.{function}"
    refused("l, value",
            f"Function {name} requires a float vector argument, but found argument l of type list<float>")
    refused("value, fl", f"found argument fl of type frozen<list<float>>")
    refused("v_int, [1, 2]", "found argument v_int of type vector<int, 2>")
    refused("value, [1]", "All arguments must have the same vector dimensions")
    refused("value, v1", "All arguments must have the same vector dimensions")
    refused("value, ['a', 'b']", "Type error: ['a', 'b'] cannot be passed as argument 1")
    refused("null, null", "Cannot infer type of argument NULL")
    if function == "similarity_cosine":
        refused("value, [0, 0]", f"Function {name} doesn't support all-zero vectors")
    else:
        row = one(session, f"SELECT {function}(value, [0, 0]) FROM {table}")
        assert row[0] == pytest.approx(SIMILARITY_TO_ZERO[function])


def test_collection_functions(session, table):
    row = one(session,
              f"SELECT map_keys(m), map_values(m), collection_count(m), collection_count(s), "
              f"collection_min(s), collection_max(li), collection_sum(li), collection_avg(li), "
              f"collection_sum(e), collection_avg(e), collection_min(e) FROM {table}")
    assert sorted(row[0]) == ["a", "b"]
    assert row[1] == [1, 2]
    assert row[2:8] == (2, 3, 1, 9, 21, 7)
    # An empty (frozen, so not null) list sums and averages to 0; it has no min.
    assert row[8:] == (0, 0, None)


@pytest.mark.parametrize("call, message", [
    ("map_keys(s)", "Function system.map_keys requires a map argument, but found argument s of type set<int>"),
    ("collection_count(i)", "Function system.collection_count requires a collection argument"),
    ("collection_min(m)", "Function system.collection_min requires a set or list argument"),
    ("collection_sum(m)", "Function system.collection_sum requires a numeric set/list argument"),
    ("map_keys(m, m)", "Invalid number of arguments for function system.map_keys(map)"),
    # An undefined column is the statement's error, not a type the function cannot infer.
    ("map_keys(nosuch)", "Undefined column name nosuch"),
    ("collection_max(nosuch)", "Undefined column name nosuch"),
    ("abs(nosuch)", "Undefined column name nosuch"),
    ("similarity_cosine(nosuch, [1, 2])", "Undefined column name nosuch"),
])
def test_collection_function_refusals(session, table, call, message):
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        session.execute(f"SELECT {call} FROM {table}")


def test_math_functions_keep_the_argument_type(session, table):
    row = one(session,
              f"SELECT abs(d), round(d), abs(i), exp(i), abs(t), round(f), round(dbl), "
              f"exp(dbl), log10(vi), log(vi) FROM {table}")
    assert row[0] == Decimal("1.5")
    assert row[1] == Decimal("-2")  # half up, away from zero
    assert row[2] == 7
    assert row[3] == 0  # (int) Math.exp(-7)
    assert row[4] == -128  # (byte) Math.abs(-128)
    assert row[5] == 3.0
    assert row[6] == -2.0  # Math.round: ties toward positive infinity
    assert row[7] == pytest.approx(math.exp(-2.5))
    assert row[8] == 3
    assert row[9] == 6  # ln 1000 = 6.9, truncated


def test_decimal_math_has_32_significant_digits(session, table):
    row = one(session, f"SELECT exp((decimal)1), log((decimal)2), log10((decimal)100), "
                       f"exp(d) FROM {table}")
    assert str(row[0]) == "2.7182818284590452353602874713527"
    assert str(row[1]) == "0.69314718055994530941723212145818"
    assert row[2] == 2
    assert str(row[3]) == "0.22313016014842982893328047076401"
    with pytest.raises(FunctionFailure, match=re.escape(
            "execution of 'system.log[decimal]' failed: java.lang.ArithmeticException: "
            "Natural log of number zero or less")):
        session.execute(f"SELECT log(d) FROM {table}")


def test_math_function_refusals(session, table):
    with pytest.raises(InvalidRequest, match="Ambiguous call to function system.abs"):
        session.execute(f"SELECT abs(1) FROM {table}")
    with pytest.raises(InvalidRequest, match=re.escape(
            "Invalid call to function system.abs, none of its type signatures match")):
        session.execute(f"SELECT abs(m) FROM {table}")


def test_snake_case_names_of_the_older_functions(session, table):
    row = one(session,
              f"SELECT to_unix_timestamp(ts), to_date(ts), blob_as_int(int_as_blob(i)), "
              f"to_json(li) FROM {table}")
    assert row[0] == 1796464800000
    assert str(row[1]) == "2026-12-05"
    assert row[2] == -7
    assert row[3] == "[5, 7, 9]"
    assert row._fields[0] == "system_to_unix_timestamp_ts"
    # In values too.
    session.execute(f"UPDATE {table} SET ts = to_timestamp(current_timeuuid()) WHERE pk = 1")
    assert one(session, f"SELECT ts FROM {table} WHERE pk = 1")[0] is not None
