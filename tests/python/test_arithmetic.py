"""Arithmetic in terms and selectors, as Cassandra 4.1's OperationFctsTest pins it: result
types, Java semantics (wrapping integers; decimals as DecimalType computes them since
CASSANDRA-15232: 10,000 digits for + - *, 32 past the first for /, exact %), literals'
preferred types, ambiguity, division by zero as a function failure, timestamps and dates with
durations."""

from __future__ import annotations

import datetime
import sys
from decimal import Decimal

import pytest
from cassandra import FunctionFailure, InvalidRequest


@pytest.fixture(scope="module")
def numbers(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.numbers (a tinyint, b smallint, c int, d bigint, e float, "
        "f double, g varint, h decimal, PRIMARY KEY (a, b, c))")
    session.execute(
        f"INSERT INTO {keyspace}.numbers (a, b, c, d, e, f, g, h) "
        "VALUES (1, 2, 3, 4, 5.5, 6.5, 7, 8.5)")
    return f"{keyspace}.numbers"


def test_operations_take_the_wider_type(session, numbers):
    rs = session.execute(
        f"SELECT a + a, b + a, c + a, d + a, e + a, f + a, g + a, h + a FROM {numbers} "
        "WHERE a = 1 AND b = 2 AND c = 1 + 2")
    assert rs.column_names == ["a + a", "b + a", "c + a", "d + a", "e + a", "f + a", "g + a",
                               "h + a"]
    assert list(rs.one()) == [2, 3, 4, 5, 6.5, 7.5, 8, Decimal("9.5")]
    types = [t.typename for t in rs.column_types]
    assert types == ["tinyint", "smallint", "int", "bigint", "float", "double", "varint", "decimal"]
    row = session.execute(
        f"SELECT a / c, b / c, c / c, d / c, e / c, f / c, g / c, h / c FROM {numbers}").one()
    assert list(row)[:4] == [0, 0, 1, 1]
    assert row[5] == pytest.approx(2.1666666666666665)
    assert str(row[7]) == "2.83333333333333333333333333333333"
    # Integers become decimals through Java's BigDecimal.valueOf(double): 3 is 3.0.
    row = session.execute(
        f"SELECT a * h, c * h, g * h, h * h, h % h, g % h, h % g FROM {numbers}").one()
    assert [str(v) for v in row] == ["8.50", "25.50", "59.5", "72.25", "0.0", "7", "1.5"]
    row = session.execute(f"SELECT -a, -e, -g, -h FROM {numbers}").one()
    assert list(row) == [-1, -5.5, -7, Decimal("-8.5")]


def test_literals_prefer_int_and_double(session, numbers):
    rs = session.execute(
        f"SELECT a + 1, e + 1, a + 5.5, e + 5.5, 1 + 1, 2 % 1, (int) -1, c + 3000000000 "
        f"FROM {numbers}")
    assert list(rs.one()) == [2, 6.5, 6.5, 11.0, 2, 0, -1, 3000000003]
    types = [t.typename for t in rs.column_types]
    assert types == ["int", "float", "double", "double", "int", "int", "int", "bigint"]
    assert rs.column_names[6] == "(int)-1"


def test_precedence_and_parentheses(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.prec (a int, b int, c int, d int, PRIMARY KEY (a, b))")
    session.execute(f"INSERT INTO {keyspace}.prec (a, b, c, d) VALUES (2, 5, 25, 4)")
    rs = session.execute(
        f"SELECT a - c / b + d, (c - b) / a + d, -(c - a) % d / a + d, "
        f"(int)((c - a) % d / (a + d)) AS result FROM {keyspace}.prec")
    assert rs.column_names == ["a - c / b + d", "(c - b) / a + d", "-(c - a) % d / a + d",
                               "result"]
    assert list(rs.one()) == [1, 14, 3, 0]
    prepared = session.prepare(
        f"SELECT * FROM {keyspace}.prec WHERE a = ? AND b = (int) ? / 2 - 5")
    assert [c.type.typename for c in prepared.column_metadata] == ["int", "int"]
    assert list(session.execute(prepared, [2, 20]).one()) == [2, 5, 25, 4]


def test_terms_resolve_against_their_receiver(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.lits (pk int, c1 tinyint, c2 smallint, v bigint, "
        "PRIMARY KEY (pk, c1, c2))")
    session.execute(f"INSERT INTO {keyspace}.lits (pk, c1, c2, v) VALUES (1 + 1, 2, 2, 3 * 4)")
    rows = session.execute(
        f"SELECT v FROM {keyspace}.lits WHERE pk = 2 AND c1 = 1 + 1 AND c2 = 1 * (1 + 1)")
    assert [r.v for r in rows] == [12]
    # Only tinyint + tinyint gives a tinyint: the marker is a tinyint.
    prepared = session.prepare(f"SELECT v FROM {keyspace}.lits WHERE pk = 2 AND c1 = 1 + ?")
    assert [r.v for r in session.execute(prepared, [1])] == [12]
    # PREPARE refuses what cannot be typed.
    with pytest.raises(InvalidRequest, match=r"Ambiguous '\+' operation: use type casts"):
        session.prepare(f"SELECT * FROM {keyspace}.lits WHERE pk = ? + 1 AND c1 = 2")
    with pytest.raises(InvalidRequest, match=r"Ambiguous '\+' operation"):
        session.prepare(f"SELECT 1 + ? FROM {keyspace}.lits")


def test_failures_and_refusals(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.bad (a int PRIMARY KEY, b boolean, c text, "
                    "d decimal, t tinyint)")
    session.execute(f"INSERT INTO {keyspace}.bad (a, b, c, d, t) VALUES (1, true, 'x', 1, 127)")
    with pytest.raises(InvalidRequest, match="the '\\+' operation is not supported between a and b"):
        session.execute(f"SELECT a + b FROM {keyspace}.bad")
    with pytest.raises(InvalidRequest, match="Cannot infer type for term 1 in selection clause"):
        session.execute(f"SELECT 1 FROM {keyspace}.bad")
    with pytest.raises(FunctionFailure, match="the operation 'int / int' failed: / by zero"):
        session.execute(f"SELECT a / 0 FROM {keyspace}.bad")
    with pytest.raises(FunctionFailure, match="'decimal \\+ double' failed: A NaN cannot be"):
        session.execute(f"SELECT d + NaN FROM {keyspace}.bad")
    # Fixed-size integers wrap around as Java's do.
    wrap = session.prepare(f"SELECT t + (tinyint) 1, a + (int) ? FROM {keyspace}.bad")
    assert [c.name for c in wrap.column_metadata] == ["[selection]"]
    row = session.execute(wrap, [2147483647]).one()
    assert list(row) == [-128, -2147483648]


def test_timestamps_and_dates_with_durations(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.events (pk int, time timestamp, day date, v int, "
                    "PRIMARY KEY (pk, time))")
    for minute, v in [(10, 1), (15, 4), (21, 5), (22, 6)]:
        session.execute(
            f"INSERT INTO {keyspace}.events (pk, time, day, v) "
            f"VALUES (1, '2016-09-27 16:{minute}:00+0000', '2016-01-31', {v})")
    start = datetime.datetime(2016, 9, 27, 16, 20)
    since = session.prepare(f"SELECT v FROM {keyspace}.events WHERE pk = 1 AND time > ? - 5m")
    assert [c.name for c in since.column_metadata] == ["arg0(system._substract)"]
    rows = session.execute(since, [start])
    assert [r.v for r in rows] == [5, 6]
    row = session.execute(
        f"SELECT time - 10m, day + 1mo FROM {keyspace}.events WHERE pk = 1 LIMIT 1").one()
    assert row[0] == datetime.datetime(2016, 9, 27, 16, 0)
    assert str(row[1]) == "2016-02-29"
    with pytest.raises(FunctionFailure, match="must have a millisecond precision. Was: 10us"):
        session.execute(session.prepare(
            f"SELECT * FROM {keyspace}.events WHERE pk = 1 AND time > ? - 10us"), [start])
    with pytest.raises(InvalidRequest, match="the '\\*' operation is not supported between time"):
        session.execute(f"SELECT time * 10m FROM {keyspace}.events WHERE pk = 1")


def test_decimal_precision_as_cassandra_4(session, keyspace):
    """Cassandra 4's DecimalType (CASSANDRA-15232), as ScyllaDB's test_type_decimal.py states
    it: + keeps 10,000 digits, rounded half up; / has a scale of 32 past the quotient's first
    digit (at least the operands' scales and 32, at most 1000), half up, trailing zeros
    stripped; % is exact. Work beyond khata's digit limit fails instead of running away."""
    table = f"{keyspace}.decimals"
    session.execute(f"CREATE TABLE {table} (p int PRIMARY KEY, a decimal, b decimal)")
    insert = session.prepare(f"INSERT INTO {table} (p, a, b) VALUES (?, ?, ?)")
    cases = {
        1: ("1e40", "1"), 2: ("1", "3"), 3: ("1", "6"), 4: ("1", "30"), 5: ("10", "3"),
        6: ("1." + "0" * 40, "3"), 7: ("1", "4"), 8: ("1e35", "3"), 9: ("1.7", "0.5"),
        10: ("1e1000000", "3"), 11: ("1e9999", "1"), 12: ("1e10000", "5"), 13: ("100", "1"),
    }
    for p, (a, b) in cases.items():
        session.execute(insert, [p, Decimal(a), Decimal(b)])
    one = lambda selector, p: session.execute(
        f"SELECT {selector} FROM {table} WHERE p = {p}").one()[0]
    assert one("a + b", 1) == Decimal("1" + "0" * 39 + "1")
    assert str(one("a / b", 2)) == "0." + "3" * 32
    assert str(one("a / b", 3)) == "0.1" + "6" * 30 + "7"
    assert str(one("a / b", 4)) == "0.0" + "3" * 32
    assert str(one("a / b", 5)) == "3." + "3" * 32
    assert str(one("a / b", 6)) == "0." + "3" * 40
    assert one("a / b", 7).as_tuple() == Decimal("0.25").as_tuple()
    assert one("a / b", 13).as_tuple() == Decimal("1E+2").as_tuple()
    assert one("a % b", 8) == Decimal(1)
    assert str(one("a % b", 9)) == "0.2"
    # The driver reads a decimal through int(str): Python limits that to 4300 digits.
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(20_000)
    try:
        assert one("a + b", 11) == Decimal("1" + "0" * 9998 + "1")
        assert one("a + b", 12) == Decimal("1" + "0" * 9998 + "10")
    finally:
        sys.set_int_max_str_digits(limit)
    with pytest.raises(FunctionFailure,
                       match="'decimal / decimal' failed: the decimal result would need more"):
        one("a / b", 10)
    with pytest.raises(FunctionFailure, match="'decimal / double' failed: BigInteger divide by zero"):
        session.execute(f"SELECT a / 0.0 FROM {table} WHERE p = 1")
