"""PutItem and Query cost of GSIs, and backfill speed, through boto3 (8 client threads).

Usage: python3 tests/python/bench_dynamo_indexes.py target/debug/khata
Figures: docs/benchmarks.md ("Secondary indexes"). Client-bound on a small machine: boto3 tops
out near 1000 requests/s here, so it shows what indexes add to latency, not server capacity.
"""
import os, socket, subprocess, sys, tempfile, time, statistics, threading
import boto3
from botocore.config import Config

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

binary = sys.argv[1]
tmp = tempfile.mkdtemp()
cql, dyn = free_port(), free_port()
proc = subprocess.Popen([binary, "server", "--data-dir", tmp + "/data", "--cql-port", str(cql),
                         "--admin-port", "0", "--dynamo-port", str(dyn), "--internode-port", "0"],
                        stdout=open(tmp + "/log", "wb"), stderr=subprocess.STDOUT, cwd=tmp)
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", dyn)).close(); break
    except OSError:
        time.sleep(0.05)
print("pid", proc.pid)
ddb = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{dyn}", region_name="us-east-1",
                   aws_access_key_id="x", aws_secret_access_key="y",
                   config=Config(retries={"max_attempts": 1}, max_pool_connections=16))
def create(name, gsis):
    defs = [("PK", "S"), ("SK", "S")] + [(f"G{i}PK", "S") for i in range(gsis)] + [(f"G{i}SK", "S") for i in range(gsis)]
    args = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in defs])
    if gsis:
        args["GlobalSecondaryIndexes"] = [{"IndexName": f"GSI{i}", "KeySchema": [
            {"AttributeName": f"G{i}PK", "KeyType": "HASH"}, {"AttributeName": f"G{i}SK", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}} for i in range(gsis)]
    ddb.create_table(**args)

N = 4000
THREADS = 8
def load(name, gsis, conditional):
    lat = []
    def worker(t):
        for i in range(t, N, THREADS):
            item = {"PK": {"S": f"P{i % 100}"}, "SK": {"S": f"S{i:06d}"}, "v": {"S": "x" * 100}}
            for g in range(gsis):
                item[f"G{g}PK"] = {"S": f"g{i % 20}"}
                item[f"G{g}SK"] = {"S": f"{i:06d}"}
            kw = {"ConditionExpression": "attribute_not_exists(PK) OR attribute_exists(PK)"} if conditional else {}
            t0 = time.perf_counter(); ddb.put_item(TableName=name, Item=item, **kw); lat.append(time.perf_counter() - t0)
    ths = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    t0 = time.perf_counter()
    for th in ths: th.start()
    for th in ths: th.join()
    el = time.perf_counter() - t0
    lat.sort()
    return N / el, lat[len(lat)//2] * 1e3, lat[int(len(lat)*.99)] * 1e3

def query(name, index, n=300):
    lat = []
    for i in range(n):
        t0 = time.perf_counter()
        if index:
            r = ddb.query(TableName=name, IndexName=index, KeyConditionExpression="G0PK = :p",
                          ExpressionAttributeValues={":p": {"S": f"g{i % 20}"}}, Limit=20, ScanIndexForward=False)
        else:
            r = ddb.query(TableName=name, KeyConditionExpression="PK = :p",
                          ExpressionAttributeValues={":p": {"S": f"P{i % 100}"}}, Limit=20, ScanIndexForward=False)
        lat.append(time.perf_counter() - t0)
        assert len(r["Items"]) == 20
    lat.sort()
    return lat[len(lat)//2] * 1e3, lat[int(len(lat)*.99)] * 1e3

try:
    for gsis in (0, 1, 3):
        create(f"tab{gsis}", gsis)
        tput, p50, p99 = load(f"tab{gsis}", gsis, False)
        print(f"PutItem, {gsis} GSIs: {tput:.0f} items/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms")
        create(f"cond{gsis}", gsis)
        tput, p50, p99 = load(f"cond{gsis}", gsis, True)
        print(f"conditional PutItem, {gsis} GSIs: {tput:.0f} items/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    p50, p99 = query("tab1", None)
    print(f"Query newest 20 on the table: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    p50, p99 = query("tab1", "GSI0")
    print(f"Query newest 20 on a GSI (ALL): p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    # Backfill: a GSI added over the 4000 items of t0.
    t0 = time.perf_counter()
    ddb.update_table(TableName="tab0", AttributeDefinitions=[{"AttributeName": "v", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {"IndexName": "by-v", "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
                                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    while ddb.describe_table(TableName="tab0")["Table"]["GlobalSecondaryIndexes"][0]["IndexStatus"] != "ACTIVE":
        time.sleep(0.01)
    print(f"backfill of {N} items: {time.perf_counter() - t0:.2f} s")
finally:
    proc.terminate(); proc.wait()
