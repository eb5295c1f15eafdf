#!/bin/bash
# What a restart after `kill -9` replays (docs/benchmarks.md, "Stop 27"): start a node on an
# empty data directory, load and rewrite `bench.kv` with `khata-bench cql` (10 s of INSERTs),
# kill -9 it, count the commit-log segments left, start it again on the same directory and
# report how long until it serves, and what it replayed.
#   docs/experiments/restart_after_kill.sh <khata binary> <khata-bench binary>
set -u
bin=$1; bench=$2
d=$(mktemp -d /tmp/khata-restart.XXXX)
start_node() {
    "$bin" server --data-dir "$d" --cql-port 19142 --dynamo-port 19800 --admin-port 19070 \
        --internode-port 19700 > "$1" 2>&1 &
    pid=$!
}
start_node "$d.1.log"
sleep 1
"$bench" cql --address 127.0.0.1:19142 --workloads insert --duration 10 --warmup 1 \
    --rows 100000 --rate-fraction 0 2>&1 | grep -E '^(workload|insert)'
sleep 2
echo "commit log before the kill: $(ls "$d/commitlog" | wc -l) files, $(du -sm "$d/commitlog" | cut -f1) MiB"
kill -9 "$pid"; wait "$pid" 2>/dev/null
began=$(date +%s.%N)
start_node "$d.2.log"
for _ in $(seq 1 1200); do grep -q 'node started' "$d.2.log" && break; sleep 0.05; done
ended=$(date +%s.%N)
echo "serving again after $(echo "$ended - $began" | bc) s"
sed 's/\x1b\[[0-9;]*m//g' "$d.2.log" | grep -oE 'replayed=[0-9]+ skipped=[0-9]+|elapsed_ms=[0-9]+'
kill "$pid"; wait "$pid" 2>/dev/null
rm -rf "$d" "$d".*.log
