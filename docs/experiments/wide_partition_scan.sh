#!/bin/bash
# Start a khata node on an empty data directory, run wide_partition_scan.py against it, stop
# it (docs/benchmarks.md, "A scan reads a page of a wide partition, not all of it").
#   docs/experiments/wide_partition_scan.sh <khata binary> <rows> [memtable]
set -u
bin=$1; rows=$2; mode=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d /tmp/khata-wide.XXXX)
"$bin" server --data-dir "$d" --cql-port 19142 --dynamo-port 19800 --admin-port 19070 \
    --internode-port 19700 > "$d.log" 2>&1 &
pid=$!
sleep 1.5
KHATA_PID=$pid python3 "$here/wide_partition_scan.py" 19142 19070 "$rows" $mode
kill "$pid"; wait "$pid" 2>/dev/null
rm -rf "$d" "$d.log"
