"""Cassandra 5.0 vector search: SAI indexes and `ORDER BY v ANN OF [...] LIMIT k`.

Checked against a brute-force ranking computed here, for each similarity function, with a
partition restriction, an indexed filter, paging (fetch size 3, LIMIT 10) and a prepared
statement; the index as `system_schema.indexes` and DESCRIBE show it, before and after a
restart; Cassandra's refusals.

This module starts its own node (it restarts it on the same data directory), on a port in
22000-22099, in a directory under `KHATA_TEST_TMP` (the system's temporary directory when
unset), with the binary the session suite uses (`KHATA_BIN`, else `target/debug/khata`).
"""

from __future__ import annotations

import math
import os
import random
import socket
import struct
import tempfile
from pathlib import Path

import pytest
from cassandra import InvalidRequest
from cassandra.protocol import ConfigurationException
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement

import conftest

DIMENSION = 4
FUNCTIONS = {"cosine": "v_cos", "euclidean": "v_euc", "dot_product": "v_dot"}


def _port_in_range() -> int:
    for port in range(22000, 22100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((conftest.HOST, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 22000-22099")


class Node:
    """A khata node this module starts, stops and starts again on the same data."""

    def __init__(self, binary: Path, tmp: Path):
        self.binary, self.tmp, self.proc, self.attempt = binary, tmp, None, 0

    def start(self):
        import subprocess

        env = dict(os.environ, NO_COLOR="1")
        env.pop("KHATA_CHECK_CONFIG", None)
        for _ in range(conftest.START_ATTEMPTS):
            self.attempt += 1
            port = _port_in_range()
            self.port = port
            log = self.tmp / f"khata-{self.attempt}.log"
            self.log = log
            with open(log, "wb") as out:
                self.proc = subprocess.Popen(
                    [str(self.binary), "server", "--data-dir", str(self.tmp / "data"),
                     "--cql-port", str(port), "--admin-port", "0", "--dynamo-port", "0",
                     "--internode-port", "0"],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                    cwd=self.tmp, preexec_fn=conftest._die_with_parent,
                )  # fmt: skip
            try:
                conftest._wait_for_port(self.proc, port, log)
                break
            except RuntimeError:
                if self.proc.poll() is None:
                    raise
        self.cluster = Cluster([conftest.HOST], port=self.port)
        self.session = self.cluster.connect()
        return self.session

    def stop(self):
        self.cluster.shutdown()
        status = conftest._stop(self.proc)
        assert status == 0, conftest._log_tail(self.log)


@pytest.fixture(scope="module")
def node():
    default = conftest.REPO_ROOT / "target" / "debug" / "khata"
    binary = Path(os.environ.get("KHATA_BIN") or default).resolve()
    base = os.environ.get("KHATA_TEST_TMP")
    if base:
        Path(base).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="khata-vector-", dir=base) as tmp:
        n = Node(binary, Path(tmp))
        n.start()
        try:
            yield n
        finally:
            n.stop()


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def score(function: str, a, b) -> float:
    if function == "cosine":
        dot = sum(x * y for x, y in zip(a, b))
        return (1 + dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))) / 2
    if function == "euclidean":
        return 1 / (1 + sum((x - y) ** 2 for x, y in zip(a, b)))
    return (1 + sum(x * y for x, y in zip(a, b))) / 2


@pytest.fixture(scope="module")
def data(node):
    s = node.session
    s.execute(
        "CREATE KEYSPACE vs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    s.execute(
        f"CREATE TABLE vs.items (pk int, ck int, label text, v_cos vector<float, {DIMENSION}>, "
        f"v_euc vector<float, {DIMENSION}>, v_dot vector<float, {DIMENSION}>, "
        "PRIMARY KEY (pk, ck))"
    )
    rng = random.Random(7)
    rows = {}
    insert = s.prepare(
        "INSERT INTO vs.items (pk, ck, label, v_cos, v_euc, v_dot) VALUES (?, ?, ?, ?, ?, ?)"
    )
    for pk in range(6):
        for ck in range(12):
            v = [f32(rng.uniform(-1, 1)) for _ in range(DIMENSION)]
            label = "even" if ck % 2 == 0 else "odd"
            rows[(pk, ck)] = (v, label)
            s.execute(insert, [pk, ck, label, v, v, v])
    # Rows without a vector are never in an ANN result.
    s.execute("INSERT INTO vs.items (pk, ck, label) VALUES (0, 100, 'even')")
    s.execute("CREATE CUSTOM INDEX cos_idx ON vs.items (v_cos) USING 'StorageAttachedIndex'")
    s.execute(
        "CREATE CUSTOM INDEX euc_idx ON vs.items (v_euc) USING 'sai' "
        "WITH OPTIONS = {'similarity_function': 'euclidean'}"
    )
    s.execute(
        "CREATE CUSTOM INDEX IF NOT EXISTS dot_idx ON vs.items (v_dot) "
        "USING 'org.apache.cassandra.index.sai.StorageAttachedIndex' "
        "WITH OPTIONS = {'similarity_function': 'DOT_PRODUCT'}"
    )
    s.execute("CREATE INDEX label_idx ON vs.items (label) USING 'sai'")
    return rows


def brute_force(rows, function, query, k, keep=lambda key, label: True):
    scored = [
        (score(function, v, query), key)
        for key, (v, label) in rows.items()
        if keep(key, label)
    ]
    scored.sort(key=lambda e: -e[0])
    return scored[:k]


def check_result(rows, function, query, result, expected):
    """`result`: rows of (pk, ck, server score). Equal to the brute force up to float noise:
    the same scores in the same order, each row's score its own."""
    assert len(result) == len(expected)
    for row, (want, _) in zip(result, expected):
        assert row[2] == pytest.approx(want, abs=1e-5)
        v, _ = rows[(row[0], row[1])]
        assert row[2] == pytest.approx(score(function, v, query), abs=1e-5)
    scores = [r[2] for r in result]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_ann_equals_brute_force(node, data, function):
    column = FUNCTIONS[function]
    rng = random.Random(function)
    for _ in range(3):
        query = [f32(rng.uniform(-1, 1)) for _ in range(DIMENSION)]
        literal = "[" + ", ".join(repr(x) for x in query) + "]"
        result = node.session.execute(
            f"SELECT pk, ck, similarity_{function}({column}, {literal}) FROM vs.items "
            f"ORDER BY {column} ANN OF {literal} LIMIT 7"
        )
        check_result(data, function, query, list(result), brute_force(data, function, query, 7))


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_ann_within_a_partition(node, data, function):
    column = FUNCTIONS[function]
    query = [0.5, -0.25, 0.75, 0.1]
    result = node.session.execute(
        f"SELECT pk, ck, similarity_{function}({column}, %s) FROM vs.items WHERE pk = 3 "
        f"ORDER BY {column} ANN OF %s LIMIT 5",
        [query, query],
    )
    expected = brute_force(data, function, query, 5, lambda key, _: key[0] == 3)
    result = list(result)
    assert {r[0] for r in result} == {3}
    check_result(data, function, query, result, expected)


def test_ann_with_an_indexed_filter(node, data):
    query = [0.1, 0.2, 0.3, 0.4]
    result = list(
        node.session.execute(
            "SELECT pk, ck, similarity_cosine(v_cos, %s), label FROM vs.items "
            "WHERE label = 'odd' ORDER BY v_cos ANN OF %s LIMIT 6",
            [query, query],
        )
    )
    assert {r.label for r in result} == {"odd"}
    expected = brute_force(data, "cosine", query, 6, lambda _, label: label == "odd")
    check_result(data, "cosine", query, result, expected)


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_ann_pages_return_the_top_k(node, data, function):
    column = FUNCTIONS[function]
    query = [-0.3, 0.8, 0.05, -0.6]
    cql = (
        f"SELECT pk, ck, similarity_{function}({column}, %s) FROM vs.items "
        f"ORDER BY {column} ANN OF %s LIMIT 10"
    )
    whole = list(node.session.execute(SimpleStatement(cql, fetch_size=None), [query, query]))
    result = node.session.execute(SimpleStatement(cql, fetch_size=3), [query, query])
    first = list(result.current_rows)
    assert len(first) == 3 and result.has_more_pages
    paged = list(node.session.execute(SimpleStatement(cql, fetch_size=3), [query, query]))
    assert [(r[0], r[1]) for r in paged] == [(r[0], r[1]) for r in whole]
    check_result(data, function, query, paged, brute_force(data, function, query, 10))


def test_ann_prepared_with_the_vector_bound(node, data):
    prepared = node.session.prepare(
        "SELECT pk, ck, similarity_euclidean(v_euc, ?) FROM vs.items "
        "ORDER BY v_euc ANN OF ? LIMIT ?"
    )
    marker = prepared.column_metadata[1]
    assert marker.name == "v_euc"
    assert "VectorType" in marker.type.cass_parameterized_type(True) or "vector" in str(
        marker.type
    ).lower()
    query = [0.9, 0.1, -0.4, 0.2]
    result = list(node.session.execute(prepared, [query, query, 4]))
    check_result(data, "euclidean", query, result, brute_force(data, "euclidean", query, 4))


def test_index_schema_rows_and_describe(node, data):
    s = node.session
    rows = {
        r.index_name: (r.kind, dict(r.options))
        for r in s.execute(
            "SELECT index_name, kind, options FROM system_schema.indexes "
            "WHERE keyspace_name = 'vs' AND table_name = 'items'"
        )
    }
    assert rows == {
        "cos_idx": ("CUSTOM", {"class_name": "StorageAttachedIndex", "target": "v_cos"}),
        "euc_idx": (
            "CUSTOM",
            {"class_name": "sai", "similarity_function": "euclidean", "target": "v_euc"},
        ),
        "dot_idx": (
            "CUSTOM",
            {
                "class_name": "org.apache.cassandra.index.sai.StorageAttachedIndex",
                "similarity_function": "DOT_PRODUCT",
                "target": "v_dot",
            },
        ),
        "label_idx": ("CUSTOM", {"class_name": "sai", "target": "label"}),
    }
    describe = {r.name: r.create_statement for r in s.execute("DESCRIBE TABLE vs.items")}
    assert describe["cos_idx"] == (
        "CREATE CUSTOM INDEX cos_idx ON vs.items (v_cos) USING 'StorageAttachedIndex';"
    )
    assert describe["euc_idx"] == (
        "CREATE CUSTOM INDEX euc_idx ON vs.items (v_euc) USING 'sai' "
        "WITH OPTIONS = {'similarity_function': 'euclidean'};"
    )
    assert list(s.execute("DESCRIBE INDEX vs.dot_idx"))[0].create_statement == (
        "CREATE CUSTOM INDEX dot_idx ON vs.items (v_dot) USING "
        "'org.apache.cassandra.index.sai.StorageAttachedIndex' "
        "WITH OPTIONS = {'similarity_function': 'DOT_PRODUCT'};"
    )
    built = {r.index_name for r in s.execute('SELECT * FROM system."IndexInfo"') if r.table_name == "vs"}
    assert built >= {"cos_idx", "euc_idx", "dot_idx", "label_idx"}


def test_sai_on_a_text_column_answers_equality(node, data):
    result = node.session.execute("SELECT pk, ck FROM vs.items WHERE label = 'odd'")
    assert sorted((r.pk, r.ck) for r in result) == sorted(
        key for key, (_, label) in data.items() if label == "odd"
    )


@pytest.mark.parametrize(
    "cql, message",
    [
        ("SELECT * FROM vs.items ORDER BY v_cos ANN OF [1.0, 0.0, 0.0, 0.0]",
         "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. "
         "LIMIT was NO LIMIT"),
        ("SELECT * FROM vs.items ORDER BY v_cos ANN OF [1.0, 0.0, 0.0, 0.0] LIMIT 1001",
         "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. "
         "LIMIT was 1001"),
        ("SELECT * FROM vs.items WHERE pk = 1 ORDER BY v_cos ANN OF [1.0, 0.0, 0.0, 0.0], ck "
         "LIMIT 3", "ANN ordering does not support any other ordering"),
        ("SELECT * FROM vs.items ORDER BY v_cos ANN OF [1.0, 0.0, 0.0, 0.0] DESC LIMIT 3",
         "Descending ANN ordering is not supported"),
        ("SELECT * FROM vs.items ORDER BY v_cos ANN OF [1.0, 0.0] LIMIT 3",
         "Invalid vector literal for v_cos of type vector<float, 4>; expected 4 elements, "
         "but given 2"),
        ("SELECT * FROM vs.items ORDER BY label ANN OF [1.0, 0.0, 0.0, 0.0] LIMIT 3",
         "ANN ordering is only supported on float vector indexes"),
        ("SELECT * FROM vs.items ORDER BY v_cos ANN OF null LIMIT 3",
         "Unsupported null value for column v_cos"),
        ("SELECT * FROM vs.items ORDER BY nope ANN OF [1.0] LIMIT 3",
         "Undefined column name nope in table vs.items"),
        ("SELECT * FROM vs.items WHERE ck = 1 ORDER BY v_cos ANN OF [1.0, 0.0, 0.0, 0.0] LIMIT 3",
         "ANN ordering by vector requires all restricted column(s) to be indexed"),
        ("SELECT * FROM vs.items WHERE v_cos = [1.0, 0.0, 0.0, 0.0]",
         "Vector indexes only support ANN queries"),
        ("CREATE CUSTOM INDEX ON vs.items (v_cos) USING 'sai' "
         "WITH OPTIONS = {'similarity_function': 'manhattan'}",
         "Similarity function MANHATTAN was not recognized for index items_v_cos_idx. "
         "Valid values are: EUCLIDEAN, DOT_PRODUCT, COSINE"),
        ("CREATE CUSTOM INDEX ON vs.items (label) USING 'sai' "
         "WITH OPTIONS = {'similarity_function': 'cosine'}",
         "CQL type text cannot have vector options"),
        ("CREATE CUSTOM INDEX ON vs.items (label) USING 'org.example.Other'",
         "Unsupported index class 'org.example.Other'"),
        ("CREATE CUSTOM INDEX ON vs.items (label)",
         "CUSTOM index requires specifying the index class"),
    ],
)  # fmt: skip
def test_refusals(node, data, cql, message):
    with pytest.raises(InvalidRequest) as e:
        node.session.execute(cql)
    assert message in str(e.value)


def test_ann_without_an_index_and_unknown_options(node, data):
    s = node.session
    s.execute("CREATE TABLE vs.plain (k int PRIMARY KEY, v vector<float, 2>)")
    with pytest.raises(InvalidRequest, match="ANN ordering by vector requires the column to be indexed"):
        s.execute("SELECT * FROM vs.plain ORDER BY v ANN OF [1.0, 2.0] LIMIT 1")
    with pytest.raises(ConfigurationException) as e:
        s.execute("CREATE CUSTOM INDEX ON vs.plain (v) USING 'sai' WITH OPTIONS = {'foo': 'bar'}")
    assert "Properties specified [foo] are not understood by StorageAttachedIndex" in str(e.value)
    s.execute("CREATE CUSTOM INDEX plain_v ON vs.plain (v) USING 'sai'")
    s.execute("INSERT INTO vs.plain (k, v) VALUES (1, [1.0, 0.0])")
    s.execute("INSERT INTO vs.plain (k, v) VALUES (2, [0.0, 1.0])")
    assert [r.k for r in s.execute("SELECT k FROM vs.plain ORDER BY v ANN OF [0.1, 1.0] LIMIT 2")] == [2, 1]
    s.execute("DROP INDEX vs.plain_v")
    with pytest.raises(InvalidRequest, match="ANN ordering by vector requires the column to be indexed"):
        s.execute("SELECT * FROM vs.plain ORDER BY v ANN OF [1.0, 2.0] LIMIT 1")
    # Created again after the drop, over the data already there.
    s.execute("CREATE CUSTOM INDEX plain_v ON vs.plain (v) USING 'StorageAttachedIndex'")
    assert [r.k for r in s.execute("SELECT k FROM vs.plain ORDER BY v ANN OF [1.0, 0.1] LIMIT 1")] == [1]


def test_indexes_survive_a_restart(node, data):
    s = node.session
    query = [0.3, 0.3, -0.2, 0.9]
    cql = (
        "SELECT pk, ck, similarity_dot_product(v_dot, %s) FROM vs.items "
        "ORDER BY v_dot ANN OF %s LIMIT 8"
    )
    before = [tuple(r) for r in s.execute(cql, [query, query])]
    describe_before = [tuple(r) for r in s.execute("DESCRIBE TABLE vs.items")]
    node.stop()
    s = node.start()
    assert [tuple(r) for r in s.execute(cql, [query, query])] == before
    assert [tuple(r) for r in s.execute("DESCRIBE TABLE vs.items")] == describe_before
    check_result(data, "dot_product", query, before, brute_force(data, "dot_product", query, 8))


def test_a_cassio_vector_store(node):
    """The statements LangChain's Cassandra vector store (through cassio) sends: a metadata
    map with an SAI on its entries, an ANN query filtered by a metadata entry, all prepared."""
    s = node.session
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS vs WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    s.execute(
        "CREATE TABLE IF NOT EXISTS vs.store (row_id text PRIMARY KEY, attributes_blob text, "
        "body_blob text, metadata_s map<text, text>, vector vector<float, 2>)"
    )
    for _ in range(2):  # IF NOT EXISTS, as every start of the store sends them
        s.execute(
            "CREATE CUSTOM INDEX IF NOT EXISTS idx_vector_store ON vs.store (vector) "
            "USING 'org.apache.cassandra.index.sai.StorageAttachedIndex' "
            "WITH OPTIONS = {'similarity_function': 'cosine'}"
        )
        s.execute(
            "CREATE CUSTOM INDEX IF NOT EXISTS eidx_metadata_s_store ON vs.store "
            "(ENTRIES(metadata_s)) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex'"
        )
    insert = s.prepare(
        "INSERT INTO vs.store (row_id, body_blob, metadata_s, vector) VALUES (?, ?, ?, ?) "
        "USING TTL ?"
    )
    vectors = {}
    for i in range(30):
        v = [f32(math.cos(i / 4)), f32(math.sin(i / 4))]
        vectors[f"r{i}"] = (v, "odd" if i % 2 else "even")
        s.execute(insert, [f"r{i}", f"body {i}", {"parity": vectors[f"r{i}"][1]}, v, 0])
    search = s.prepare(
        "SELECT row_id, body_blob, similarity_cosine(vector, ?) AS score FROM vs.store "
        "WHERE metadata_s[?] = ? ORDER BY vector ANN OF ? LIMIT ?"
    )
    query = [0.6, 0.8]
    rows = list(s.execute(search, [query, "parity", "odd", query, 5]))
    expected = sorted(
        ((score("cosine", v, query), key) for key, (v, parity) in vectors.items() if parity == "odd"),
        reverse=True,
    )[:5]
    assert [r.score for r in rows] == pytest.approx([e[0] for e in expected], abs=1e-5)
    assert all(vectors[r.row_id][1] == "odd" for r in rows)
    assert [r.body_blob for r in rows] == [f"body {r.row_id[1:]}" for r in rows]
