"""DynamoDB Streams through boto3's `dynamodbstreams` client on the same endpoint: records of
every kind with the images of each view type, iterator types, paging, the end of a closed
shard, and errors.
"""

from __future__ import annotations

import time
import uuid

import pytest
from botocore.exceptions import ClientError


def code(error: ClientError) -> str:
    return error.response["Error"]["Code"]


def create(dynamodb, view_type: str | None = "NEW_AND_OLD_IMAGES", range_key: bool = False) -> str:
    name = f"streams-{uuid.uuid4().hex[:8]}"
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    if range_key:
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
        defs.append({"AttributeName": "sk", "AttributeType": "N"})
    args = dict(TableName=name, KeySchema=keys, AttributeDefinitions=defs,
                BillingMode="PAY_PER_REQUEST")
    if view_type:
        args["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view_type}
    dynamodb.create_table(**args)
    return name


def stream_arn(dynamodb, table: str) -> str:
    return dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]


def read_all(streams, arn: str, limit: int | None = None) -> list[dict]:
    """Every record of every shard from the trim horizon (one pass, no waiting)."""
    out = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while it:
            args = {"ShardIterator": it}
            if limit:
                args["Limit"] = limit
            page = streams.get_records(**args)
            out.extend(page["Records"])
            if not page["Records"]:
                break
            it = page.get("NextShardIterator")
    return out


def test_records_of_every_kind_in_order(dynamodb, dynamodbstreams):
    table = create(dynamodb)
    try:
        arn = stream_arn(dynamodb, table)
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
        dynamodb.update_item(TableName=table, Key={"pk": {"S": "a"}},
                             UpdateExpression="SET v = v + :one",
                             ExpressionAttributeValues={":one": {"N": "1"}})
        # The same item again: no change, no record (as DynamoDB).
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "a"}, "v": {"N": "2"}})
        dynamodb.delete_item(TableName=table, Key={"pk": {"S": "a"}})
        # Deleting an absent item changes nothing: no record.
        dynamodb.delete_item(TableName=table, Key={"pk": {"S": "a"}})
        records = read_all(dynamodbstreams, arn)
        assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "REMOVE"]
        insert, modify, remove = records
        for r in records:
            assert r["eventSource"] == "aws:dynamodb"
            assert r["awsRegion"] == "us-east-1"
            assert r["eventVersion"] == "1.1"
            assert r["dynamodb"]["Keys"] == {"pk": {"S": "a"}}
            assert r["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
            assert r["dynamodb"]["SizeBytes"] > 0
            assert "userIdentity" not in r
        assert insert["dynamodb"]["NewImage"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
        assert "OldImage" not in insert["dynamodb"]
        assert modify["dynamodb"]["OldImage"]["v"] == {"N": "1"}
        assert modify["dynamodb"]["NewImage"]["v"] == {"N": "2"}
        assert remove["dynamodb"]["OldImage"]["v"] == {"N": "2"}
        assert "NewImage" not in remove["dynamodb"]
        seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
        assert seqs == sorted(seqs) and len(set(seqs)) == 3
        assert len({r["eventID"] for r in records}) == 3
    finally:
        dynamodb.delete_table(TableName=table)


@pytest.mark.parametrize("view", ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE"])
def test_view_types_choose_the_images(dynamodb, dynamodbstreams, view):
    table = create(dynamodb, view, range_key=True)
    try:
        key = {"pk": {"S": "k"}, "sk": {"N": "5"}}
        dynamodb.put_item(TableName=table, Item={**key, "x": {"S": "one"}})
        dynamodb.put_item(TableName=table, Item={**key, "x": {"S": "two"}})
        records = read_all(dynamodbstreams, stream_arn(dynamodb, table))
        assert [r["eventName"] for r in records] == ["INSERT", "MODIFY"]
        modify = records[1]["dynamodb"]
        assert modify["Keys"] == key
        assert modify["StreamViewType"] == view
        assert ("NewImage" in modify) == (view == "NEW_IMAGE")
        assert ("OldImage" in modify) == (view == "OLD_IMAGE")
        if view == "NEW_IMAGE":
            assert modify["NewImage"]["x"] == {"S": "two"}
        if view == "OLD_IMAGE":
            assert modify["OldImage"]["x"] == {"S": "one"}
    finally:
        dynamodb.delete_table(TableName=table)


def test_paging_latest_and_after(dynamodb, dynamodbstreams):
    table = create(dynamodb, "KEYS_ONLY")
    try:
        arn = stream_arn(dynamodb, table)
        for i in range(7):
            dynamodb.put_item(TableName=table, Item={"pk": {"S": f"p{i}"}})
        paged = read_all(dynamodbstreams, arn, limit=3)
        assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in paged] == [f"p{i}" for i in range(7)]
        shard = dynamodbstreams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        sid = shard["ShardId"]
        # AFTER the third record: the fourth on.
        third = paged[2]["dynamodb"]["SequenceNumber"]
        it = dynamodbstreams.get_shard_iterator(
            StreamArn=arn, ShardId=sid, ShardIteratorType="AFTER_SEQUENCE_NUMBER",
            SequenceNumber=third)["ShardIterator"]
        got = dynamodbstreams.get_records(ShardIterator=it)["Records"]
        assert got[0]["dynamodb"]["Keys"]["pk"]["S"] == "p3"
        it = dynamodbstreams.get_shard_iterator(
            StreamArn=arn, ShardId=sid, ShardIteratorType="AT_SEQUENCE_NUMBER",
            SequenceNumber=third)["ShardIterator"]
        got = dynamodbstreams.get_records(ShardIterator=it)["Records"]
        assert got[0]["dynamodb"]["Keys"]["pk"]["S"] == "p2"
        # LATEST: only what is written after.
        it = dynamodbstreams.get_shard_iterator(
            StreamArn=arn, ShardId=sid, ShardIteratorType="LATEST")["ShardIterator"]
        page = dynamodbstreams.get_records(ShardIterator=it)
        assert page["Records"] == []
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "late"}})
        page = dynamodbstreams.get_records(ShardIterator=page["NextShardIterator"])
        assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in page["Records"]] == ["late"]
    finally:
        dynamodb.delete_table(TableName=table)


def test_disable_keeps_the_stream_readable_and_enable_starts_a_new_one(dynamodb, dynamodbstreams):
    table = create(dynamodb, "NEW_IMAGE")
    try:
        first = stream_arn(dynamodb, table)
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "before"}})
        dynamodb.update_table(TableName=table, StreamSpecification={"StreamEnabled": False})
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "unrecorded"}})
        d = dynamodbstreams.describe_stream(StreamArn=first)["StreamDescription"]
        assert d["StreamStatus"] == "DISABLED"
        shard = d["Shards"][0]
        assert "EndingSequenceNumber" in shard["SequenceNumberRange"]
        it = dynamodbstreams.get_shard_iterator(StreamArn=first, ShardId=shard["ShardId"],
                                                ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        page = dynamodbstreams.get_records(ShardIterator=it)
        assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in page["Records"]] == ["before"]
        # The end of a closed shard: no next iterator.
        assert "NextShardIterator" not in page
        time.sleep(0.01)  # a new label (milliseconds)
        dynamodb.update_table(TableName=table, StreamSpecification={
            "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        second = stream_arn(dynamodb, table)
        assert second != first
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "after"}})
        records = read_all(dynamodbstreams, second)
        assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in records] == ["after"]
        listed = dynamodbstreams.list_streams(TableName=table)["Streams"]
        assert {s["StreamArn"] for s in listed} == {first, second}
        assert all(s["TableName"] == table for s in listed)
        page = dynamodbstreams.list_streams(TableName=table, Limit=1)
        assert len(page["Streams"]) == 1 and "LastEvaluatedStreamArn" in page
        rest = dynamodbstreams.list_streams(
            TableName=table, ExclusiveStartStreamArn=page["LastEvaluatedStreamArn"])
        assert len(rest["Streams"]) == 1 and "LastEvaluatedStreamArn" not in rest
    finally:
        dynamodb.delete_table(TableName=table)


def test_describe_stream(dynamodb, dynamodbstreams):
    table = create(dynamodb, "NEW_AND_OLD_IMAGES", range_key=True)
    try:
        described = dynamodb.describe_table(TableName=table)["Table"]
        arn = described["LatestStreamArn"]
        assert arn.endswith("/stream/" + described["LatestStreamLabel"])
        d = dynamodbstreams.describe_stream(StreamArn=arn)["StreamDescription"]
        assert d["StreamArn"] == arn
        assert d["StreamStatus"] == "ENABLED"
        assert d["StreamViewType"] == "NEW_AND_OLD_IMAGES"
        assert d["TableName"] == table
        assert d["StreamLabel"] == described["LatestStreamLabel"]
        assert [k["AttributeName"] for k in d["KeySchema"]] == ["pk", "sk"]
        assert d["CreationRequestDateTime"].year >= 2024
        (shard,) = d["Shards"]
        assert shard["ShardId"].startswith("shardId-")
        assert len(shard["SequenceNumberRange"]["StartingSequenceNumber"]) >= 21
        assert "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    finally:
        dynamodb.delete_table(TableName=table)


def test_errors(dynamodb, dynamodbstreams):
    table = create(dynamodb, "KEYS_ONLY")
    plain = create(dynamodb, None)
    try:
        arn = stream_arn(dynamodb, table)
        missing = arn.replace(table, "no-such-table")
        with pytest.raises(ClientError) as e:
            dynamodbstreams.describe_stream(StreamArn=missing)
        assert code(e.value) == "ResourceNotFoundException"
        with pytest.raises(ClientError) as e:
            dynamodbstreams.describe_stream(StreamArn=arn[:-3] + "999")
        assert code(e.value) == "ResourceNotFoundException"
        with pytest.raises(ClientError) as e:
            dynamodbstreams.get_shard_iterator(StreamArn=arn, ShardId="shardId-" + "0" * 28,
                                               ShardIteratorType="TRIM_HORIZON")
        assert code(e.value) == "ResourceNotFoundException"
        sid = dynamodbstreams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0][
            "ShardId"]
        with pytest.raises(ClientError) as e:
            dynamodbstreams.get_shard_iterator(StreamArn=arn, ShardId=sid,
                                               ShardIteratorType="AT_SEQUENCE_NUMBER")
        assert code(e.value) == "ValidationException"
        # A sequence number older than the 24-hour retention.
        with pytest.raises(ClientError) as e:
            dynamodbstreams.get_shard_iterator(StreamArn=arn, ShardId=sid,
                                               ShardIteratorType="AT_SEQUENCE_NUMBER",
                                               SequenceNumber="1".rjust(21, "0"))
        assert code(e.value) == "TrimmedDataAccessException"
        # An iterator issued more than 15 minutes ago.
        it = dynamodbstreams.get_shard_iterator(StreamArn=arn, ShardId=sid,
                                                ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        head, issued = it.rsplit("|", 1)
        old = f"{head}|{int(issued) - 16 * 60 * 1_000_000}"
        with pytest.raises(ClientError) as e:
            dynamodbstreams.get_records(ShardIterator=old)
        assert code(e.value) == "ExpiredIteratorException"
        with pytest.raises(ClientError) as e:
            dynamodbstreams.get_records(ShardIterator=it, Limit=1001)
        assert code(e.value) == "ValidationException"
        # A table without a stream lists none.
        assert dynamodbstreams.list_streams(TableName=plain)["Streams"] == []
        assert "LatestStreamArn" not in dynamodb.describe_table(TableName=plain)["Table"]
    finally:
        dynamodb.delete_table(TableName=table)
        dynamodb.delete_table(TableName=plain)
