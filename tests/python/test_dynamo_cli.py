"""The AWS CLI (`awscli` from PyPI, run as `python -m awscli`) against khata's DynamoDB endpoint:
a user's first session from the shell, each answer parsed as the CLI prints it (`--output json`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

CLI_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def aws(dynamodb_endpoint, tmp_path_factory):
    """Runs `aws dynamodb <args>` against the node; answers the parsed JSON output, or raises
    with the CLI's stderr. The CLI reads no user configuration: HOME is a fresh directory."""
    home = tmp_path_factory.mktemp("aws-home")
    env = dict(os.environ,
               HOME=str(home),
               AWS_ACCESS_KEY_ID="khata",
               AWS_SECRET_ACCESS_KEY="khata",
               AWS_DEFAULT_REGION="us-east-1",
               AWS_PAGER="")
    for name in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
                 "AWS_SESSION_TOKEN"):
        env.pop(name, None)

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess | dict:
        command = [sys.executable, "-m", "awscli", "dynamodb", *args,
                   "--endpoint-url", dynamodb_endpoint, "--output", "json"]
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=CLI_TIMEOUT_S)
        if not check:
            return done
        if done.returncode != 0:
            raise AssertionError(f"aws {' '.join(args)} failed ({done.returncode}):\n"
                                 f"{done.stderr}")
        return json.loads(done.stdout) if done.stdout.strip() else {}

    return run


def test_a_first_session_with_the_aws_cli(aws):
    name = f"cli-{uuid.uuid4().hex[:8]}"
    created = aws("create-table", "--table-name", name,
                  "--attribute-definitions",
                  "AttributeName=PK,AttributeType=S", "AttributeName=SK,AttributeType=S",
                  "--key-schema", "AttributeName=PK,KeyType=HASH",
                  "AttributeName=SK,KeyType=RANGE",
                  "--billing-mode", "PAY_PER_REQUEST")
    assert created["TableDescription"]["TableName"] == name
    assert created["TableDescription"]["TableStatus"] == "ACTIVE"

    aws("wait", "table-exists", "--table-name", name)
    assert name in aws("list-tables")["TableNames"]

    for i in range(1, 4):
        aws("put-item", "--table-name", name, "--item", json.dumps({
            "PK": {"S": "USER#42"}, "SK": {"S": f"ORDER#2026-11-0{i}#{i}"},
            "amount": {"N": str(10 * i)}}))
    got = aws("get-item", "--table-name", name, "--key",
              json.dumps({"PK": {"S": "USER#42"}, "SK": {"S": "ORDER#2026-11-02#2"}}))
    assert got["Item"]["amount"] == {"N": "20"}

    newest = aws("query", "--table-name", name,
                 "--key-condition-expression", "PK = :pk AND begins_with(SK, :o)",
                 "--expression-attribute-values",
                 json.dumps({":pk": {"S": "USER#42"}, ":o": {"S": "ORDER#"}}),
                 "--no-scan-index-forward", "--max-items", "2")
    assert [i["SK"]["S"] for i in newest["Items"]] == [
        "ORDER#2026-11-03#3", "ORDER#2026-11-02#2"]
    # The CLI pages for itself and hands back a token for the rest.
    assert "NextToken" in newest

    updated = aws("update-item", "--table-name", name, "--key",
                  json.dumps({"PK": {"S": "USER#42"}, "SK": {"S": "ORDER#2026-11-01#1"}}),
                  "--update-expression", "SET amount = amount + :d",
                  "--expression-attribute-values", json.dumps({":d": {"N": "5"}}),
                  "--return-values", "UPDATED_NEW")
    assert updated["Attributes"] == {"amount": {"N": "15"}}

    # A scan the CLI pages through with a small page size still sees every item.
    scanned = aws("scan", "--table-name", name, "--page-size", "1")
    assert scanned["Count"] == 3

    failed = aws("put-item", "--table-name", name, "--item",
                 json.dumps({"PK": {"S": "USER#42"}, "SK": {"S": "ORDER#2026-11-01#1"}}),
                 "--condition-expression", "attribute_not_exists(PK)", check=False)
    assert failed.returncode != 0
    assert "ConditionalCheckFailedException" in failed.stderr

    described = aws("describe-table", "--table-name", name)
    assert described["Table"]["KeySchema"][1] == {"AttributeName": "SK", "KeyType": "RANGE"}

    aws("delete-table", "--table-name", name)
    missing = aws("describe-table", "--table-name", name, check=False)
    assert missing.returncode != 0
    assert "ResourceNotFoundException" in missing.stderr
