"""Fixtures for the Python client suite: one khata node for the whole run, a driver session, cqlsh.

The suite checks khata against what the Python `cassandra-driver` and `cqlsh` expect from
Cassandra 4.1. It builds nothing: CI (and a developer) runs `cargo build -p khata` first, and the
fixture starts `target/debug/khata` (or the binary named by `KHATA_BIN`) on a free loopback port
in a temporary data directory. The node is stopped with SIGTERM at the end of the session and
must exit with status 0 (a clean shutdown is part of what is tested); if it does not stop within
`STOP_TIMEOUT_S` it is killed. On Linux the node also gets SIGKILL from the kernel if the pytest
process dies, so no run leaves a node behind.

Tests share one node and one driver session. Each test module works in its own keyspace (the
`keyspace` fixture) and never runs `USE`, so modules do not see each other's tables.

A test that fails because khata lacks a feature, or because of a khata bug, carries
`@pytest.mark.xfail(strict=True, reason=...)`: `xfail_strict` is also set in `pytest.ini`, so the
test fails the run the moment it starts passing and someone must remove the marker.
"""

from __future__ import annotations

import ctypes
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cassandra.cluster import Cluster

REPO_ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
START_TIMEOUT_S = 30
START_ATTEMPTS = 3
STOP_TIMEOUT_S = 30
CQLSH_TIMEOUT_S = 60
LOG_TAIL_BYTES = 8000


def _free_port() -> int:
    """A loopback port that was free a moment ago (bound, then released for the node to take)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGKILL it when the pytest process dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass  # not Linux: teardown still stops the node


def _log_tail(log_path: Path) -> str:
    try:
        data = log_path.read_bytes()
    except OSError as err:
        return f"(no log: {err})"
    return data[-LOG_TAIL_BYTES:].decode("utf-8", "replace")


def _wait_for_port(proc: subprocess.Popen, port: int, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(
                f"khata exited with status {proc.returncode} before accepting connections; "
                f"log:\n{_log_tail(log_path)}"
            )
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"khata did not accept connections on {HOST}:{port} within "
                f"{START_TIMEOUT_S} s; log:\n{_log_tail(log_path)}"
            )
        time.sleep(0.05)


def _stop(proc: subprocess.Popen) -> int | None:
    """SIGTERM, then SIGKILL after STOP_TIMEOUT_S. Returns the exit status, None if it was killed."""
    if proc.poll() is not None:
        return proc.returncode
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def _start_node(binary: Path, tmp_path: Path) -> tuple[subprocess.Popen, int, int, Path]:
    """Starts a node and waits for its CQL and DynamoDB ports. Retries with other ports if the
    node exits early (another process may have taken a free port in the meantime)."""
    env = dict(os.environ)
    env.setdefault("RUST_LOG", "info")
    env["NO_COLOR"] = "1"
    env.pop("KHATA_CHECK_CONFIG", None)  # that variable makes the binary exit after parsing
    for attempt in range(START_ATTEMPTS):
        port = _free_port()
        dynamo_port = _free_port()
        log_path = tmp_path / f"khata-{attempt}.log"
        command = [
            str(binary), "server",
            "--data-dir", str(tmp_path / "data"),
            "--cql-port", str(port),
            "--admin-port", "0",
            "--dynamo-port", str(dynamo_port),
            "--internode-port", "0",
            # The TTL tests watch items expire: look for them every second (default 60).
            "--set", "ttl_scan_period_seconds=1",
        ]  # fmt: skip
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=tmp_path,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        try:
            _wait_for_port(proc, port, log_path)
            _wait_for_port(proc, dynamo_port, log_path)
            return proc, port, dynamo_port, log_path
        except BaseException:
            exited_early = proc.poll() is not None
            _stop(proc)
            if not exited_early or attempt + 1 == START_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def khata_process():
    """One khata node for the session: yields `{"host", "cql_port", "dynamo_port"}`."""
    default = REPO_ROOT / "target" / "debug" / "khata"
    # Absolute: the node runs with its temporary directory as working directory.
    binary = Path(os.environ.get("KHATA_BIN") or default).resolve()
    if not binary.is_file():
        pytest.exit(
            f"khata binary not found at {binary}: run `cargo build -p khata` first "
            "(or set KHATA_BIN)",
            returncode=2,
        )
    with tempfile.TemporaryDirectory(prefix="khata-pytest-") as tmp:
        proc, port, dynamo_port, log_path = _start_node(binary, Path(tmp))
        try:
            yield {"host": HOST, "cql_port": port, "dynamo_port": dynamo_port}
        finally:
            status = _stop(proc)
            if status != 0:
                what = "was killed after ignoring SIGTERM" if status is None else (
                    f"exited with status {status} on SIGTERM")
                pytest.fail(f"khata {what}; log:\n{_log_tail(log_path)}", pytrace=False)


@pytest.fixture(scope="session")
def khata_node(khata_process):
    """`(host, port)` of the session node's CQL listener."""
    return (khata_process["host"], khata_process["cql_port"])


@pytest.fixture(scope="session")
def dynamodb_endpoint(khata_process):
    """`http://host:port` of the session node's DynamoDB API."""
    return f"http://{khata_process['host']}:{khata_process['dynamo_port']}"


@pytest.fixture(scope="session")
def dynamodb(dynamodb_endpoint):
    """A boto3 DynamoDB client for the session node: region us-east-1, dummy keys (the node
    has no access keys configured, so any signature is accepted)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "dynamodb",
        endpoint_url=dynamodb_endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDKHATATEST",
        aws_secret_access_key="khata-test-secret",
        config=Config(retries={"max_attempts": 1}),
    )


@pytest.fixture(scope="session")
def dynamodbstreams(dynamodb_endpoint):
    """A boto3 DynamoDB Streams client for the session node (the same endpoint)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "dynamodbstreams",
        endpoint_url=dynamodb_endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDKHATATEST",
        aws_secret_access_key="khata-test-secret",
        config=Config(retries={"max_attempts": 1}),
    )


@pytest.fixture(scope="session")
def cluster(khata_node):
    host, port = khata_node
    cluster = Cluster([host], port=port)
    try:
        yield cluster
    finally:
        cluster.shutdown()


@pytest.fixture(scope="session")
def session(cluster):
    """A driver session shared by every test. Tests qualify table names and never run `USE`."""
    return cluster.connect()


@pytest.fixture(scope="module")
def keyspace(session, request):
    """A keyspace for the calling test module, named after it (`test_lwt.py` -> `lwt`)."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    session.execute(
        f"CREATE KEYSPACE IF NOT EXISTS {name} "
        "WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    return name


@pytest.fixture(scope="session")
def cqlsh(khata_node, tmp_path_factory):
    """Runs cqlsh against the node: `cqlsh("SELECT ...")` returns the CompletedProcess.

    cqlsh runs with the interpreter running pytest (`python -m cqlshlib`, so the same
    environment's cqlsh), or with the command in `CQLSH` if that is set. It reads an empty
    cqlshrc, not the user's, and is killed after `timeout` seconds.
    """
    host, port = khata_node
    home = tmp_path_factory.mktemp("cqlsh-home")
    cqlshrc = home / "cqlshrc"
    cqlshrc.write_text("")
    base = shlex.split(os.environ["CQLSH"]) if os.environ.get("CQLSH") else [
        sys.executable, "-m", "cqlshlib"]

    def run(statement: str, *, cwd: Path | None = None, timeout: float = CQLSH_TIMEOUT_S):
        command = base + [
            "--cqlshrc", str(cqlshrc),
            "--request-timeout", "20",
            "-e", statement,
            host, str(port),
        ]  # fmt: skip
        env = dict(os.environ, HOME=str(home))
        return subprocess.run(
            command,
            cwd=cwd or home,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
