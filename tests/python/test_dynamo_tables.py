"""The DynamoDB control plane through boto3: tables created, described, listed in pages,
updated and deleted; tags; TTL settings; DynamoDB's errors; the framing botocore checks
(x-amz-crc32 is verified by botocore on every DynamoDB response, so a wrong one would fail
every call here)."""

from __future__ import annotations

import json
import urllib.request

import pytest
from botocore.exceptions import ClientError

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/{}"


def _create(dynamodb, name, **extra):
    args = dict(
        TableName=name,
        KeySchema=[
            {"AttributeName": "PK", "KeyType": "HASH"},
            {"AttributeName": "SK", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    args.update(extra)
    return dynamodb.create_table(**args)


def _error(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err.get("Message", "")


@pytest.fixture(scope="module")
def names(dynamodb):
    """Tables this module creates, deleted at the end."""
    created: list[str] = []
    yield created
    for name in created:
        try:
            dynamodb.delete_table(TableName=name)
        except ClientError:
            pass


def test_create_describe_and_delete(dynamodb, names):
    names.append("py-orders")
    out = _create(
        dynamodb,
        "py-orders",
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
            {"AttributeName": "GSI1PK", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GSI1",
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        Tags=[{"Key": "env", "Value": "test"}],
    )
    assert out["TableDescription"]["TableStatus"] == "ACTIVE"
    dynamodb.get_waiter("table_exists").wait(TableName="py-orders")
    table = dynamodb.describe_table(TableName="py-orders")["Table"]
    assert table["TableName"] == "py-orders"
    assert table["KeySchema"][0] == {"AttributeName": "PK", "KeyType": "HASH"}
    assert table["TableArn"] == ARN.format("py-orders")
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert table["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    assert table["StreamSpecification"]["StreamViewType"] == "NEW_IMAGE"
    assert table["LatestStreamArn"].startswith(ARN.format("py-orders") + "/stream/")
    assert table["ItemCount"] == 0
    assert "CreationDateTime" in table

    deleted = dynamodb.delete_table(TableName="py-orders")["TableDescription"]
    assert deleted["TableStatus"] == "DELETING"
    # DeleteTable's description leaves out the table's structure, as DynamoDB's does
    # (Alternator's test_delete_table_description and _with_si, checked against DynamoDB).
    assert deleted["TableName"] == "py-orders"
    assert deleted["TableId"] == table["TableId"]
    assert deleted["TableArn"] == table["TableArn"]
    assert deleted["BillingModeSummary"] == table["BillingModeSummary"]
    assert "LastUpdateToPayPerRequestDateTime" in deleted["BillingModeSummary"]
    assert deleted["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
    for member in ["CreationDateTime", "KeySchema", "AttributeDefinitions",
                   "GlobalSecondaryIndexes", "LocalSecondaryIndexes"]:
        assert member not in deleted, member
    dynamodb.get_waiter("table_not_exists").wait(TableName="py-orders")
    with pytest.raises(ClientError) as e:
        dynamodb.describe_table(TableName="py-orders")
    assert _error(e) == (
        "ResourceNotFoundException",
        "Requested resource not found: Table: py-orders not found",
    )


def test_list_tables_pages(dynamodb, names):
    mine = [f"py-list-{i}" for i in range(5)]
    for name in mine:
        names.append(name)
        _create(dynamodb, name)
    seen: list[str] = []
    kwargs: dict = {"Limit": 2}
    while True:
        page = dynamodb.list_tables(**kwargs)
        assert len(page["TableNames"]) <= 2
        seen.extend(page["TableNames"])
        if "LastEvaluatedTableName" not in page:
            break
        kwargs["ExclusiveStartTableName"] = page["LastEvaluatedTableName"]
    assert [n for n in seen if n.startswith("py-list-")] == mine
    assert seen == sorted(seen)
    paginated = [
        n
        for p in dynamodb.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 3})
        for n in p["TableNames"]
    ]
    assert paginated == seen


def test_errors(dynamodb, names):
    names.append("py-dup")
    _create(dynamodb, "py-dup")
    with pytest.raises(ClientError) as e:
        _create(dynamodb, "py-dup")
    assert _error(e) == ("ResourceInUseException", "Table already exists: py-dup")

    with pytest.raises(ClientError) as e:
        dynamodb.create_table(
            TableName="py-bad",
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "Other", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    code, message = _error(e)
    assert code == "ValidationException"
    assert "Some index key attributes are not defined in AttributeDefinitions" in message

    with pytest.raises(ClientError) as e:
        dynamodb.create_table(
            TableName="py-bad",
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        )
    code, message = _error(e)
    assert code == "ValidationException"
    assert "BillingMode is PROVISIONED" in message

    with pytest.raises(ClientError) as e:
        dynamodb.delete_table(TableName="py-missing")
    assert _error(e)[0] == "ResourceNotFoundException"

    with pytest.raises(ClientError) as e:
        dynamodb.create_backup(TableName="py-dup", BackupName="backup")
    assert _error(e) == ("ValidationException",
                         "operation CreateBackup is not supported by khata yet")


def test_update_table(dynamodb, names):
    names.append("py-update")
    _create(dynamodb, "py-update")
    out = dynamodb.update_table(
        TableName="py-update",
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 3},
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    )
    description = out["TableDescription"]
    assert description["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert description["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"
    table = dynamodb.describe_table(TableName="py-update")["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    with pytest.raises(ClientError) as e:
        dynamodb.update_table(
            TableName="py-update",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        )
    assert _error(e)[0] == "ValidationException"
    # The same throughput again is not a change; more than 10^12 units is out of bounds.
    with pytest.raises(ClientError) as e:
        dynamodb.update_table(
            TableName="py-update",
            ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 3})
    assert _error(e) == ("ValidationException", (
        "The provisioned throughput for the table will not change. The requested value equals "
        "the current value. Current ReadCapacityUnits provisioned for the table: 2. Requested "
        "ReadCapacityUnits: 2. Current WriteCapacityUnits provisioned for the table: 3. "
        "Requested WriteCapacityUnits: 3. Refer to the Amazon DynamoDB Developer Guide for "
        "current limits and how to request higher limits."))
    with pytest.raises(ClientError) as e:
        dynamodb.update_table(
            TableName="py-update",
            ProvisionedThroughput={"ReadCapacityUnits": 1000000000001, "WriteCapacityUnits": 3})
    assert _error(e) == ("ValidationException",
                         "Given value 1000000000001 for ReadCapacityUnits is out of bounds")
    # Rises and falls are dated, and the falls of the day counted (dynalite's AWS-validated
    # "should triple rates and then reduce").
    before = dynamodb.describe_table(TableName="py-update")["Table"]["ProvisionedThroughput"]
    assert before["NumberOfDecreasesToday"] == 0 and "LastIncreaseDateTime" not in before
    dynamodb.update_table(TableName="py-update",
                          ProvisionedThroughput={"ReadCapacityUnits": 6, "WriteCapacityUnits": 9})
    tripled = dynamodb.describe_table(TableName="py-update")["Table"]["ProvisionedThroughput"]
    assert "LastIncreaseDateTime" in tripled and "LastDecreaseDateTime" not in tripled
    dynamodb.update_table(TableName="py-update",
                          ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 3})
    reduced = dynamodb.describe_table(TableName="py-update")["Table"]["ProvisionedThroughput"]
    assert reduced["NumberOfDecreasesToday"] == 1
    assert reduced["LastDecreaseDateTime"] >= reduced["LastIncreaseDateTime"]
    assert (reduced["ReadCapacityUnits"], reduced["WriteCapacityUnits"]) == (2, 3)


def test_tags(dynamodb, names):
    names.append("py-tags")
    _create(dynamodb, "py-tags", Tags=[{"Key": "a", "Value": "1"}])
    arn = ARN.format("py-tags")
    dynamodb.tag_resource(ResourceArn=arn, Tags=[{"Key": "b", "Value": "2"}])
    dynamodb.untag_resource(ResourceArn=arn, TagKeys=["a"])
    tags = dynamodb.list_tags_of_resource(ResourceArn=arn)["Tags"]
    assert tags == [{"Key": "b", "Value": "2"}]
    with pytest.raises(ClientError) as e:
        dynamodb.list_tags_of_resource(ResourceArn=ARN.format("py-nothing"))
    assert _error(e)[0] == "ResourceNotFoundException"
    # What is no ARN at all is refused as DynamoDB refuses it (Alternator's
    # test_tag_resource_incorrect).
    with pytest.raises(ClientError) as e:
        dynamodb.tag_resource(ResourceArn="I_do_not_exist", Tags=[{"Key": "7", "Value": "8"}])
    assert _error(e) == ("ValidationException", "Invalid ResourceArn provided as input: "
                         "ARNs must start with 'arn:': I_do_not_exist")
    # Tags hold letters, numbers, spaces and + - = . _ : / @ only (Alternator's
    # test_tag_forbidden_chars, checked against DynamoDB); the refused ones change nothing.
    pattern = r"Member must satisfy regular expression pattern: [\p{L}\p{Z}\p{N}_.:/=+\-@]*"
    for bad in ["hi!", "d%g", '"hello"', "#!%%^$$&", "<><", "tab\there"]:
        for key, value, at in [(bad, "dog", "key"), ("dog", bad, "value")]:
            with pytest.raises(ClientError) as e:
                dynamodb.tag_resource(ResourceArn=arn, Tags=[{"Key": key, "Value": value}])
            assert _error(e) == ("ValidationException", (
                f"1 validation error detected: Value '{bad}' at 'tags.1.member.{at}' "
                f"failed to satisfy constraint: {pattern}"))
    with pytest.raises(ClientError) as e:
        dynamodb.tag_resource(ResourceArn=arn, Tags=[])
    assert _error(e) == ("ValidationException", (
        "1 validation error detected: Value '[]' at 'tags' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1"))
    dynamodb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k +-=._:/@ 7", "Value": "א é"}])
    assert dynamodb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [
        {"Key": "b", "Value": "2"}, {"Key": "k +-=._:/@ 7", "Value": "א é"}]


def test_tag_and_untag_answer_an_empty_body(dynamodb, dynamodb_endpoint, names):
    names.append("py-tag-body")
    _create(dynamodb, "py-tag-body")
    arn = ARN.format("py-tag-body")
    for target, body in [
            ("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]}),
            ("UntagResource", {"ResourceArn": arn, "TagKeys": ["k"]})]:
        request = urllib.request.Request(
            dynamodb_endpoint + "/", data=json.dumps(body).encode(),
            headers={"X-Amz-Target": f"DynamoDB_20120810.{target}",
                     "Content-Type": "application/x-amz-json-1.0"})
        with urllib.request.urlopen(request) as answer:
            assert answer.status == 200
            assert answer.read() == b""
            assert answer.headers["x-amz-crc32"] == "0"
    assert dynamodb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


def test_time_to_live(dynamodb, names):
    names.append("py-ttl")
    _create(dynamodb, "py-ttl")
    status = dynamodb.describe_time_to_live(TableName="py-ttl")["TimeToLiveDescription"]
    assert status["TimeToLiveStatus"] == "DISABLED"
    out = dynamodb.update_time_to_live(
        TableName="py-ttl",
        TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"},
    )
    assert out["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "expires"}
    status = dynamodb.describe_time_to_live(TableName="py-ttl")["TimeToLiveDescription"]
    assert status == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    with pytest.raises(ClientError) as e:
        dynamodb.update_time_to_live(
            TableName="py-ttl",
            TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"},
        )
    assert _error(e) == ("ValidationException", "TimeToLive is already enabled")


def test_limits_endpoints_and_health(dynamodb, dynamodb_endpoint):
    limits = dynamodb.describe_limits()
    assert limits["TableMaxWriteCapacityUnits"] == 40000
    endpoints = dynamodb.describe_endpoints()["Endpoints"]
    assert endpoints[0]["CachePeriodInMinutes"] == 1440
    with urllib.request.urlopen(dynamodb_endpoint + "/") as answer:
        assert answer.status == 200
        assert answer.read().decode().startswith("healthy: ")


def test_raw_errors(dynamodb_endpoint):
    def post(target: str, body: bytes):
        request = urllib.request.Request(
            dynamodb_endpoint + "/",
            data=body,
            headers={
                "X-Amz-Target": target,
                "Content-Type": "application/x-amz-json-1.0",
            },
        )
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as err:
            return err.code, err.headers, err.read()

    status, headers, body = post("DynamoDB_20120810.ListTables", b"{not json")
    assert status == 400
    assert json.loads(body)["__type"] == "com.amazon.coral.service#SerializationException"
    assert headers["x-amzn-RequestId"]
    status, _, body = post("DynamoDB_20120810.Nope", b"{}")
    assert status == 400
    assert json.loads(body) == {"__type": "com.amazon.coral.service#UnknownOperationException"}


def test_table_class_is_kept_and_reported(dynamodb, names):
    """TableClass is accepted, kept and reported, not acted on (Alternator's
    test_tableclass.py, checked against DynamoDB)."""
    names.append("py-class")
    _create(dynamodb, "py-class", TableClass="STANDARD_INFREQUENT_ACCESS")
    table = dynamodb.describe_table(TableName="py-class")["Table"]
    assert table["TableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    dynamodb.put_item(TableName="py-class", Item={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert "Item" in dynamodb.get_item(TableName="py-class",
                                       Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    # UpdateTable with only a TableClass is a change.
    dynamodb.update_table(TableName="py-class", TableClass="STANDARD")
    summary = dynamodb.describe_table(TableName="py-class")["Table"]["TableClassSummary"]
    assert summary["TableClass"] == "STANDARD"
    assert "LastUpdateDateTime" in summary
    with pytest.raises(ClientError) as e:
        dynamodb.update_table(TableName="py-class", TableClass="junk")
    invalid = ("ValidationException", (
        "Invalid table-class parameter provided. Please try again with a valid table-class "
        "value: [STANDARD, STANDARD_INFREQUENT_ACCESS]."))
    assert _error(e) == invalid
    with pytest.raises(ClientError) as e:
        _create(dynamodb, "py-class-bad", TableClass="standard")
    assert _error(e) == invalid
    # A table never given a class reports none.
    names.append("py-classless")
    _create(dynamodb, "py-classless")
    assert "TableClassSummary" not in dynamodb.describe_table(TableName="py-classless")["Table"]


def test_on_demand_throughput_is_kept_and_reported(dynamodb, names):
    """OnDemandThroughput (an on-demand table's maximum request units, as CDK's
    `Billing.onDemand({maxReadRequestUnits})` sets it) is kept and reported, not acted on;
    a unit not given reads -1 (no maximum), and UpdateTable changing one keeps the other."""
    names.append("py-ondemand")
    created = _create(dynamodb, "py-ondemand",
                      OnDemandThroughput={"MaxReadRequestUnits": 100})["TableDescription"]
    assert created["OnDemandThroughput"] == {"MaxReadRequestUnits": 100,
                                             "MaxWriteRequestUnits": -1}
    dynamodb.update_table(TableName="py-ondemand",
                          OnDemandThroughput={"MaxWriteRequestUnits": 50})
    assert dynamodb.describe_table(TableName="py-ondemand")["Table"]["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
    names.append("py-no-max")
    _create(dynamodb, "py-no-max")
    assert "OnDemandThroughput" not in dynamodb.describe_table(TableName="py-no-max")["Table"]


def test_warm_throughput_is_kept_and_reported(dynamodb, names):
    """WarmThroughput is accepted, kept and reported, not acted on (Alternator's
    test_warm_throughput.py, checked against DynamoDB)."""
    names.append("py-warm")
    warm = {"ReadUnitsPerSecond": 12240, "WriteUnitsPerSecond": 4080}
    created = _create(dynamodb, "py-warm", WarmThroughput=warm)["TableDescription"]
    assert created["WarmThroughput"] == {**warm, "Status": "ACTIVE"}
    assert dynamodb.describe_table(TableName="py-warm")["Table"]["WarmThroughput"] == \
        {**warm, "Status": "ACTIVE"}
    # Once configured it cannot be lowered; raising one unit keeps the other.
    with pytest.raises(ClientError) as e:
        dynamodb.update_table(TableName="py-warm",
                              WarmThroughput={"ReadUnitsPerSecond": 12120})
    assert _error(e)[0] == "ValidationException"
    assert "lower than current WarmThroughput" in _error(e)[1]
    dynamodb.update_table(TableName="py-warm", WarmThroughput={"ReadUnitsPerSecond": 13000})
    assert dynamodb.describe_table(TableName="py-warm")["Table"]["WarmThroughput"] == {
        "ReadUnitsPerSecond": 13000, "WriteUnitsPerSecond": 4080, "Status": "ACTIVE"}
    # An on-demand table starts at DynamoDB's baseline, the least one may configure.
    names.append("py-cold")
    _create(dynamodb, "py-cold")
    assert dynamodb.describe_table(TableName="py-cold")["Table"]["WarmThroughput"] == {
        "ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    for unit, units in [("ReadUnitsPerSecond", (11999, 4000)),
                        ("WriteUnitsPerSecond", (12000, 3999))]:
        with pytest.raises(ClientError) as e:
            dynamodb.update_table(TableName="py-cold", WarmThroughput={
                "ReadUnitsPerSecond": units[0], "WriteUnitsPerSecond": units[1]})
        assert _error(e) == ("ValidationException", (
            f"One or more parameter values were invalid: {unit} for WarmThroughput is lower "
            f"than the minimum of {12000 if unit.startswith('Read') else 4000}"))
    dynamodb.update_table(TableName="py-cold", WarmThroughput=warm)
    assert dynamodb.describe_table(TableName="py-cold")["Table"]["WarmThroughput"] == \
        {**warm, "Status": "ACTIVE"}


def test_large_answers_are_gzipped_for_clients_that_accept_it(dynamodb, dynamodb_endpoint,
                                                              names):
    """As DynamoDB does (Alternator's test_crc.py *_with_compression and
    test_http_headers.py::test_server_header): an answer over 4 KB is gzipped when the request
    accepts gzip, x-amz-crc32 is the checksum of the bytes sent, and every answer names
    `Server`."""
    import binascii
    import gzip

    names.append("py-gzip")
    _create(dynamodb, "py-gzip")
    key = {"PK": {"S": "big"}, "SK": {"S": "1"}}
    dynamodb.put_item(TableName="py-gzip", Item={**key, "data": {"S": "x" * 5000}})
    dynamodb.put_item(TableName="py-gzip", Item={"PK": {"S": "small"}, "SK": {"S": "1"}})

    def get(pk, encoding=None):
        headers = {"X-Amz-Target": "DynamoDB_20120810.GetItem",
                   "Content-Type": "application/x-amz-json-1.0"}
        if encoding:
            headers["Accept-Encoding"] = encoding
        body = {"TableName": "py-gzip", "Key": {"PK": {"S": pk}, "SK": {"S": "1"}},
                "ConsistentRead": True}
        request = urllib.request.Request(dynamodb_endpoint + "/",
                                         data=json.dumps(body).encode(), headers=headers)
        with urllib.request.urlopen(request) as answer:
            raw = answer.read()
            assert answer.headers["Server"] == "Server"
            assert int(answer.headers["x-amz-crc32"]) == binascii.crc32(raw)
            return answer.headers.get("Content-Encoding"), raw

    encoding, raw = get("big", "gzip, deflate")
    assert encoding == "gzip" and raw[:2] == b"\x1f\x8b"
    assert json.loads(gzip.decompress(raw))["Item"]["data"] == {"S": "x" * 5000}
    for offer in [None, "identity", "gzip;q=0"]:
        encoding, raw = get("big", offer)
        assert encoding is None
        assert json.loads(raw)["Item"]["data"] == {"S": "x" * 5000}
    encoding, raw = get("small", "gzip")
    assert encoding is None and json.loads(raw)["Item"]["PK"] == {"S": "small"}
    # Errors name the server too.
    with pytest.raises(ClientError) as e:
        dynamodb.describe_table(TableName="py-nothing-here")
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"]["server"] == "Server"
