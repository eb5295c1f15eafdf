#!/usr/bin/env bash
# latte (`cargo install latte-cli --locked`) on khata-bench cql's workloads: starts a node in a
# temporary directory on a free port, loads bench.kv and bench.wide, runs insert, get (SELECT by
# key) and newest50 as fast as they go with the same concurrency and connections as
# khata-bench cql, then insert and get again at half the rate just measured; stops the node.
#
#   crates/khata-bench/latte/run.sh target/release/khata [latte]
#
# Prints one line per run: function, throughput (op/s), p50, p99, p99.9 (ms). The settings
# below match khata-bench cql's defaults; override them through the environment.
set -euo pipefail

khata=${1:?usage: run.sh PATH_TO_KHATA [PATH_TO_LATTE]}
latte=${2:-latte}
here=$(cd "$(dirname "$0")" && pwd)
rows=${ROWS:-500000}
concurrency=${CONCURRENCY:-64}
duration=${DURATION:-10s}
warmup=${WARMUP:-2s}

dir=$(mktemp -d -t khata-latte-XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$khata" server --data-dir "$dir/data" --cql-port "$port" --admin-port 0 --dynamo-port 0 \
    2>"$dir/node.log" &
node=$!
stop() {
    kill -TERM "$node" 2>/dev/null || true
    wait "$node" 2>/dev/null || true
    rm -rf "$dir"
}
trap stop EXIT
for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done
address=127.0.0.1:$port
cd "$dir" # latte writes its JSON reports to the working directory

# One run; prints "function op/s p50 p99 p999" from latte's summary.
run() {
    local workload=$1 function=$2
    shift 2
    "$latte" run "$here/$workload" -f "$function" -P "rows=$rows" -p "$concurrency" -c 1 \
        -d "$duration" -w "$warmup" -q "$@" "$address" 2>&1 |
        sed 's/\x1b\[[0-9;]*m//g' >"$dir/out.txt"
    awk -v f="$function" '
        /Throughput/ && /op\/s/ && !t { t = $3 }
        /^CYCLE LATENCY/ { in_lat = 1 }
        in_lat && $1 == "50" { p50 = $2 }
        in_lat && $1 == "99" { p99 = $2 }
        in_lat && $1 == "99.9" { p999 = $2 }
        END { printf "%-10s %8.0f op/s  p50 %s  p99 %s  p99.9 %s ms\n", f, t, p50, p99, p999 }
    ' "$dir/out.txt"
}

for workload in kv.rn wide.rn; do
    "$latte" schema "$here/$workload" "$address" >/dev/null 2>&1
    "$latte" load "$here/$workload" -P "rows=$rows" --concurrency "$concurrency" -q "$address" \
        >/dev/null 2>&1
done
insert=$(run kv.rn insert)
echo "$insert"
get=$(run kv.rn get)
echo "$get"
run wide.rn newest50
half() { awk '{ printf "%d", $2 / 2 }' <<<"$1"; }
echo "at half the rate:"
run kv.rn insert -r "$(half "$insert")"
run kv.rn get -r "$(half "$get")"
