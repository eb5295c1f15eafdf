"""cqlsh against khata: `-e` output, DESCRIBE, COPY TO / COPY FROM, exit status.

cqlsh 6 sends DESCRIBE to the server as a statement when the server's release_version is 4.0 or
later, and formats a SELECT result only for tables in the driver's schema metadata.
"""

from __future__ import annotations

import csv
import datetime
import uuid

import pytest


@pytest.fixture(scope="module")
def table(session, keyspace):
    session.execute(f"""
        CREATE TABLE {keyspace}.people (
          team    int,
          id      int,
          name    text,
          email   text,
          active  boolean,
          score   double,
          joined  timestamp,
          ref     uuid,
          tags    set<text>,
          attrs   map<text, int>,
          PRIMARY KEY (team, id)
        ) WITH CLUSTERING ORDER BY (id DESC) AND comment = 'cqlsh test'""")
    insert = session.prepare(
        f"INSERT INTO {keyspace}.people (team, id, name, email, active, score, joined, ref, "
        "tags, attrs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    base = datetime.datetime(2026, 1, 2, 3, 4, 5)
    for team in range(3):
        for i in range(40):
            session.execute(insert, (
                team, i,
                f"person {team}-{i}" if i % 7 else f'quote "{i}", comma',
                None if i % 5 == 0 else f"p{i}@example.com",
                i % 2 == 0,
                i / 4,
                base + datetime.timedelta(minutes=i, milliseconds=i),
                uuid.UUID(int=team * 1000 + i),
                {f"t{i % 3}", "all"} if i % 4 else None,
                {"a": i, "b": -i} if i % 3 else None,
            ))
    return f"{keyspace}.people"


def test_select_output(cqlsh, table):
    result = cqlsh(f"SELECT id, name, active FROM {table} WHERE team = 1 LIMIT 3")
    assert result.returncode == 0, result.stderr
    lines = [line.rstrip() for line in result.stdout.splitlines() if line.strip()]
    header = next(i for i, line in enumerate(lines) if line.split("|")[0].strip() == "id")
    assert [c.strip() for c in lines[header].split("|")] == ["id", "name", "active"]
    assert set(lines[header + 1]) <= {"-", "+"}
    rows = [[c.strip() for c in line.split("|")] for line in lines[header + 2:header + 5]]
    assert rows == [["39", "person 1-39", "False"], ["38", "person 1-38", "True"],
                    ["37", "person 1-37", "False"]]
    assert "(3 rows)" in result.stdout


def test_several_statements_in_one_execute(cqlsh, keyspace):
    result = cqlsh(
        f"CREATE TABLE {keyspace}.notes (k int PRIMARY KEY, v text); "
        f"INSERT INTO {keyspace}.notes (k, v) VALUES (1, 'from cqlsh'); "
        f"SELECT v FROM {keyspace}.notes WHERE k = 1;")
    assert result.returncode == 0, result.stderr
    assert "from cqlsh" in result.stdout
    assert "(1 rows)" in result.stdout


def test_a_failing_statement_exits_with_status_2(cqlsh, keyspace):
    result = cqlsh(f"SELECT * FROM {keyspace}.no_such_table")
    assert result.returncode == 2
    assert "no_such_table" in result.stderr
    result = cqlsh("SELEC * FROM system.local")
    assert result.returncode == 2
    assert "SyntaxException" in result.stderr


DESCRIBE_MISSING = ("khata: DESCRIBE statements are not implemented (cqlsh 6 sends them to the "
                    "server, which answers Invalid 'DESCRIBE is not supported by khata yet')")


def test_describe_keyspaces(cqlsh, keyspace, table):
    result = cqlsh("DESCRIBE KEYSPACES")
    assert result.returncode == 0, result.stderr
    names = result.stdout.split()
    for name in (keyspace, "system", "system_auth", "system_distributed", "system_schema",
                 "system_traces"):
        assert name in names


def test_describe_keyspace_shows_create_statements(cqlsh, keyspace, table):
    result = cqlsh(f"DESCRIBE KEYSPACE {keyspace}")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert f"CREATE KEYSPACE {keyspace} WITH replication = " in text
    assert "'class': 'SimpleStrategy'" in text
    assert f"CREATE TABLE {table} (" in text
    assert "PRIMARY KEY (team, id)" in text
    assert "WITH CLUSTERING ORDER BY (id DESC)" in text
    assert "AND comment = 'cqlsh test'" in text


def test_describe_table(cqlsh, table):
    result = cqlsh(f"DESCRIBE TABLE {table}")
    assert result.returncode == 0, result.stderr
    assert f"CREATE TABLE {table} (" in result.stdout
    assert "tags set<text>" in result.stdout
    assert "attrs map<text, int>" in result.stdout


def test_copy_to_then_copy_from(cqlsh, session, keyspace, table, tmp_path):
    csv_path = tmp_path / "people.csv"
    result = cqlsh(f"COPY {table} TO '{csv_path}' WITH HEADER = true", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "120 rows exported" in result.stdout
    with open(csv_path, newline="") as f:
        records = list(csv.reader(f))
    assert records[0][:2] == ["team", "id"]
    assert set(records[0]) == {"team", "id", "name", "email", "active", "score", "joined", "ref",
                               "tags", "attrs"}
    assert len(records) == 121

    session.execute(f"CREATE TABLE {keyspace}.people_copy (team int, id int, name text, "
                    "email text, active boolean, score double, joined timestamp, ref uuid, "
                    "tags set<text>, attrs map<text, int>, PRIMARY KEY (team, id)) "
                    "WITH CLUSTERING ORDER BY (id DESC)")
    result = cqlsh(f"COPY {keyspace}.people_copy FROM '{csv_path}' WITH HEADER = true",
                   cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "120 rows imported" in result.stdout

    def everything(name):
        rows = session.execute(f"SELECT * FROM {name}")
        return sorted(
            (r.team, r.id, r.name, r.email, r.active, r.score, r.joined, r.ref,
             tuple(sorted(r.tags)) if r.tags else None,
             tuple(sorted(r.attrs.items())) if r.attrs else None)
            for r in rows)

    original = everything(table)
    assert len(original) == 120
    assert everything(f"{keyspace}.people_copy") == original
