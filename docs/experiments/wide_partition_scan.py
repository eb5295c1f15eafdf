"""Scan a table holding one wide partition through the Python driver, 5,000 rows a page: a
full-table scan (`SELECT * FROM w.t`), its first page alone, `LIMIT 10`, `DISTINCT`,
`PER PARTITION LIMIT 1`, and the partition read (`WHERE p = 0`).

    python3 docs/experiments/wide_partition_scan.py <cql port> <admin port> <rows> [memtable]

against a node started on an empty data directory (see docs/benchmarks.md, "Paging a full
scan through a wide partition"). The rows are flushed to an SSTable first unless `memtable`
is given. With the node's pid in `KHATA_PID`, each line also gives the node's peak resident
memory (VmHWM) after the query.
"""
import gc, os, sys, time, urllib.request
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement
from cassandra.concurrent import execute_concurrent_with_args
port, admin, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
in_memtable = len(sys.argv) > 4 and sys.argv[4] == "memtable"
pid = os.environ.get("KHATA_PID")


def peak_rss():
    if not pid:
        return ""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return f", node peak RSS {int(line.split()[1]) / 1024:.0f} MiB"
    return ""


c = Cluster(['127.0.0.1'], port=port); s = c.connect()
s.execute("CREATE KEYSPACE IF NOT EXISTS w WITH replication = {'class':'SimpleStrategy','replication_factor':1}")
s.execute("CREATE TABLE IF NOT EXISTS w.t (p int, c int, v text, PRIMARY KEY (p, c))")
ins = s.prepare("INSERT INTO w.t (p, c, v) VALUES (0, ?, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')")
# The load's 200,000 argument tuples and results are dropped before the queries: kept alive,
# they made the Python garbage collector's passes during a 200,000-row scan take seconds.
for _ in execute_concurrent_with_args(s, ins, ((i,) for i in range(n)), concurrency=64, results_generator=True):
    pass
gc.collect()
if not in_memtable:
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{admin}/flush", method="POST")).read()
time.sleep(3)
print(f"loaded{peak_rss()}")
queries = [
    ("first page", "SELECT * FROM w.t", True),
    ("LIMIT 10", "SELECT * FROM w.t LIMIT 10", False),
    ("DISTINCT", "SELECT DISTINCT p FROM w.t", False),
    ("PER PARTITION LIMIT 1", "SELECT * FROM w.t PER PARTITION LIMIT 1", False),
    ("whole scan", "SELECT * FROM w.t", False),
    ("partition read", "SELECT * FROM w.t WHERE p = 0", False),
]
for name, q, first_page_only in queries:
    t = time.time()
    result = s.execute(SimpleStatement(q, fetch_size=5000))
    rows = len(result.current_rows) if first_page_only else sum(1 for _ in result)
    print(f"{name}: {q}: {rows} rows in {time.time()-t:.3f} s{peak_rss()}")
