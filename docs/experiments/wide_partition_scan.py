"""Page through one wide partition with a full-table scan (`SELECT * FROM w.t`) and with a
partition read (`WHERE p = 0`), 5,000 rows a page, through the Python driver.

    python3 docs/experiments/wide_partition_scan.py <cql port> <admin port> <rows>

against a node started on an empty data directory (see docs/benchmarks.md, "Paging a full
scan through a wide partition").
"""
import sys, time, urllib.request
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement
from cassandra.concurrent import execute_concurrent_with_args
port, admin, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
c = Cluster(['127.0.0.1'], port=port); s = c.connect()
s.execute("CREATE KEYSPACE IF NOT EXISTS w WITH replication = {'class':'SimpleStrategy','replication_factor':1}")
s.execute("CREATE TABLE IF NOT EXISTS w.t (p int, c int, v text, PRIMARY KEY (p, c))")
ins = s.prepare("INSERT INTO w.t (p, c, v) VALUES (0, ?, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')")
execute_concurrent_with_args(s, ins, [(i,) for i in range(n)], concurrency=64)
urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{admin}/flush", method="POST")).read()
time.sleep(3)
for q in ["SELECT * FROM w.t", "SELECT * FROM w.t WHERE p = 0"]:
    t = time.time(); rows = sum(1 for _ in s.execute(SimpleStatement(q, fetch_size=5000)))
    print(f"{q}: {rows} rows in {time.time()-t:.2f} s")
