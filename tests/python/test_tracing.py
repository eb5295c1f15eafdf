"""Query tracing: cqlsh's `TRACING ON` and the Python driver's `trace=True`.

A traced request's answer carries a tracing id, and `system_traces.sessions` and
`system_traces.events` hold what it did, in Cassandra's words, by the time the answer arrives:
cqlsh prints the trace after the result, the driver's `get_query_trace()` reads it back.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def table(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.t (pk int, ck int, v text, PRIMARY KEY (pk, ck))")
    session.execute(f"INSERT INTO {keyspace}.t (pk, ck, v) VALUES (1, 1, 'a')")
    session.execute(f"DELETE FROM {keyspace}.t WHERE pk = 1 AND ck = 2")
    return f"{keyspace}.t"


def test_cqlsh_prints_the_trace_of_a_traced_select(cqlsh, table):
    result = cqlsh(f"TRACING ON; SELECT v FROM {table} WHERE pk = 1;")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Tracing session: " in out
    for step in ("Execute CQL3 query", f"Parsing SELECT v FROM {table} WHERE pk = 1",
                 "Preparing statement", "Executing single-partition query on t",
                 "Read 1 live rows and 1 tombstone cells", "Request complete"):
        assert step in out, out
    assert "Statement trace did not complete" not in out


def test_the_driver_reads_back_a_traced_write(session, table):
    result = session.execute(f"INSERT INTO {table} (pk, ck, v) VALUES (2, 1, 'b')", trace=True)
    trace = result.get_query_trace(max_wait_sec=10)
    assert trace.request_type == "Execute CQL3 query"
    assert trace.duration.total_seconds() > 0
    assert trace.coordinator == "127.0.0.1"
    assert trace.parameters["query"] == f"INSERT INTO {table} (pk, ck, v) VALUES (2, 1, 'b')"
    activities = [e.description for e in trace.events]
    assert activities[-3:] == ["Determining replicas for mutation", "Appending to commitlog",
                               "Adding to t memtable"], activities


def test_untraced_requests_leave_no_trace(session, table):
    result = session.execute(f"SELECT * FROM {table} WHERE pk = 1")
    assert result.get_all_query_traces() == []
