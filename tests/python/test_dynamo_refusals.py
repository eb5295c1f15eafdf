"""DynamoDB requests refused as DynamoDB refuses them (messages from DynamoDB-validated test
suites: dynalite's and Alternator's): index start keys, Select with a projection, Query key
conditions, table definitions, stream settings, billing mode switches, shard iterators, update
expressions through missing paths, function operands, key updates, and placeholders given without
an expression to use them; and the wording DynamoDB took up in 2026 (moto's AWS-verified tests,
moto PR #10198), which wraps some refusals, operation by operation, in "1 validation error
detected: ".
"""

from __future__ import annotations

import time
import uuid

import pytest

from khata_helpers import dynamo_refused as refused


@pytest.fixture(scope="module")
def indexed(dynamodb):
    """Hash `a`, range `b`; LSI `lsi` on (a, c); GSI `gsi` on c (keys only); all strings."""
    name = f"refusals-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "a", "KeyType": "HASH"},
                   {"AttributeName": "b", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in "abc"],
        LocalSecondaryIndexes=[{
            "IndexName": "lsi",
            "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"},
                          {"AttributeName": "c", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        GlobalSecondaryIndexes=[{
            "IndexName": "gsi",
            "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        BillingMode="PAY_PER_REQUEST")
    dynamodb.put_item(TableName=name, Item={"a": {"S": "x"}, "b": {"S": "1"}, "c": {"S": "k"}})
    yield name
    dynamodb.delete_table(TableName=name)


def test_index_start_keys_with_an_extra_or_missing_attribute(dynamodb, indexed):
    s = {"S": "x"}
    assert refused(dynamodb.scan, TableName=indexed, IndexName="gsi",
                   ExclusiveStartKey={"a": s, "b": s, "c": s, "z": s}) == \
        "The provided starting key is invalid"
    assert refused(dynamodb.scan, TableName=indexed, IndexName="gsi",
                   ExclusiveStartKey={"a": s, "b": s}) == "The provided starting key is invalid"
    assert refused(dynamodb.query, TableName=indexed, IndexName="lsi",
                   KeyConditionExpression="a = :a", ExpressionAttributeValues={":a": s},
                   ExclusiveStartKey={"a": s, "b": s, "c": s, "d": s}) == \
        "The provided starting key is invalid"
    # The right attributes page as before.
    page = dynamodb.scan(TableName=indexed, IndexName="gsi",
                         ExclusiveStartKey={"a": s, "b": {"S": "0"}, "c": {"S": "a"}})
    assert page["Count"] == 1


def test_select_with_a_projection(dynamodb, indexed):
    x = {":a": {"S": "x"}}
    assert refused(dynamodb.query, TableName=indexed, IndexName="lsi",
                   KeyConditionExpression="a = :a", ExpressionAttributeValues=x,
                   Select="ALL_PROJECTED_ATTRIBUTES", ProjectionExpression="b") == \
        "1 validation error detected: Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"
    assert refused(dynamodb.scan, TableName=indexed, Select="ALL_ATTRIBUTES",
                   ProjectionExpression="b") == \
        "1 validation error detected: Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"
    assert refused(dynamodb.scan, TableName=indexed, Select="COUNT",
                   AttributesToGet=["b"]) == \
        "1 validation error detected: Cannot specify the AttributesToGet when choosing to get only the Count"


def test_query_key_conditions_name_the_missing_key(dynamodb, indexed):
    eq = lambda v: {"AttributeValueList": [{"S": v}], "ComparisonOperator": "EQ"}  # noqa: E731
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditions={"a": eq("x"), "z": eq("1")}) == \
        "Query condition missed key schema element: b"
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditionExpression="z = :z AND a = :a",
                   ExpressionAttributeValues={":a": {"S": "x"}, ":z": {"S": "1"}}) == \
        "Query condition missed key schema element: b"
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditions={"z": eq("1"), "b": eq("1")}) == \
        "Query condition missed key schema element: a"
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditions={"a": eq("x"), "b": eq("1"), "z": eq("1")}) == \
        "Conditions can be of length 1 or 2 only"


def test_table_definitions_and_stream_settings(dynamodb, indexed):
    message = refused(
        dynamodb.create_table, TableName="name_doesnt_matter", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "xyz", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "xyz", "AttributeType": "S"},
                              {"AttributeName": "xyz", "AttributeType": "N"}])
    assert message == "Attribute Name is duplicated: xyz"
    message = refused(
        dynamodb.update_table, TableName=indexed,
        AttributeDefinitions=[{"AttributeName": "c", "AttributeType": "N"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "gsi2", "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    assert "Attributes cannot be redefined" in message
    message = refused(dynamodb.update_table, TableName=indexed,
                      StreamSpecification={"StreamEnabled": False})
    assert message == f"Table has no stream to disable: TableName: {indexed}"


def test_leaving_on_demand_needs_each_global_indexs_throughput(dynamodb, indexed):
    throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    assert refused(dynamodb.update_table, TableName=indexed, BillingMode="PROVISIONED",
                   ProvisionedThroughput=throughput) == \
        "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: gsi"
    dynamodb.update_table(
        TableName=indexed, BillingMode="PROVISIONED", ProvisionedThroughput=throughput,
        GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "gsi",
                                                 "ProvisionedThroughput": throughput}}])
    table = dynamodb.describe_table(TableName=indexed)["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 5


def test_shard_iterators_take_a_sequence_number_only_where_they_use_one(dynamodb,
                                                                         dynamodbstreams):
    name = f"refusals-stream-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    try:
        dynamodb.put_item(TableName=name, Item={"p": {"S": "1"}})
        arn = dynamodb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
        shard = dynamodbstreams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        seq = shard["SequenceNumberRange"]["StartingSequenceNumber"]
        for kind in ["TRIM_HORIZON", "LATEST"]:
            refused(dynamodbstreams.get_shard_iterator, StreamArn=arn,
                    ShardId=shard["ShardId"], ShardIteratorType=kind, SequenceNumber=seq)
        dynamodbstreams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                           ShardIteratorType="AT_SEQUENCE_NUMBER",
                                           SequenceNumber=seq)
    finally:
        dynamodb.delete_table(TableName=name)


BAD_PATH = "The document path provided in the update expression is invalid for update"


def test_remove_through_a_missing_attribute_applies_nothing(dynamodb, indexed):
    # Alternator's test_nested_attribute_update_bad_path_dot and _array, and
    # test_nested_attribute_remove_from_missing_item, all checked against DynamoDB.
    key = {"a": {"S": "bp"}, "b": {"S": "1"}}
    item = {**key, "v": {"S": "hello"}, "l": {"L": [{"S": "hi"}]},
            "m": {"M": {"k": {"N": "1"}}}, "ss": {"SS": ["x", "y"]}}
    dynamodb.put_item(TableName=indexed, Item=item)
    update = lambda expr, **kw: dynamodb.update_item(  # noqa: E731
        TableName=indexed, Key=key, UpdateExpression=expr, **kw)
    ss = {":ss": {"SS": ["x"]}}
    for expr, values in [("REMOVE q.c, v", {}), ("REMOVE q[0], v", {}), ("REMOVE v.c", {}),
                         ("REMOVE v[0]", {}), ("REMOVE l.c", {}), ("REMOVE m[0]", {}),
                         ("REMOVE m.q.c", {}), ("DELETE q.c :ss REMOVE v", ss),
                         ("DELETE ss :ss REMOVE q.c", ss)]:
        kw = {"ExpressionAttributeValues": values} if values else {}
        assert refused(update, expr=expr, **kw) == BAD_PATH, expr
    stored = dynamodb.get_item(TableName=indexed, Key=key, ConsistentRead=True)["Item"]
    assert stored == item
    # A key or index the parent lacks is no error: there is nothing to remove.
    update("REMOVE m.q, l[17]")
    stored = dynamodb.get_item(TableName=indexed, Key=key, ConsistentRead=True)["Item"]
    assert stored == item
    # On an item that does not exist, DynamoDB removes nothing and creates nothing.
    missing = {"a": {"S": "bp"}, "b": {"S": "missing"}}
    for expr in ["REMOVE x.y", "REMOVE x[0]"]:
        dynamodb.update_item(TableName=indexed, Key=missing, UpdateExpression=expr)
    dynamodb.update_item(TableName=indexed, Key=missing, UpdateExpression="DELETE x.y :ss",
                         ExpressionAttributeValues=ss)
    assert "Item" not in dynamodb.get_item(TableName=indexed, Key=missing, ConsistentRead=True)


def test_function_operands(dynamodb, indexed):
    key = {"a": {"S": "fn"}, "b": {"S": "1"}}
    n = lambda x: {"N": str(x)}  # noqa: E731
    # attribute_type takes a value first (Alternator's test_update_condition_attribute_type),
    dynamodb.update_item(TableName=indexed, Key=key, UpdateExpression="SET t = :v",
                         ConditionExpression="attribute_type(:v, :t)",
                         ExpressionAttributeValues={":v": n(0), ":t": {"S": "N"}})
    # but not a path second (..._second_arg).
    assert refused(dynamodb.update_item, TableName=indexed, Key=key,
                   UpdateExpression="SET t = :v", ConditionExpression="attribute_type(t, d)",
                   ExpressionAttributeValues={":v": n(1)}) == \
        "Invalid ConditionExpression: Incorrect operand type for operator or function; " \
        "operator or function: attribute_type, operand type: {NS,SS,L,BS,N,M,B,BOOL,NULL,S}"
    # A function's arguments are operands, not sums (..._function_plus_nesting).
    dynamodb.update_item(TableName=indexed, Key=key,
                         UpdateExpression="SET n = if_not_exists(n, :v)+:w",
                         ExpressionAttributeValues={":v": n(2), ":w": n(3)})
    assert refused(dynamodb.update_item, TableName=indexed, Key=key,
                   UpdateExpression="SET n = if_not_exists(n, :v+:w)",
                   ExpressionAttributeValues={":v": n(2), ":w": n(3)}) == \
        'Invalid UpdateExpression: Syntax error; token: "+", near: ":v+:w"'
    # No list_append inside another; an if_not_exists inside one is fine
    # (..._function_nesting).
    w = {":w": {"L": [{"S": "x"}]}}
    assert refused(dynamodb.update_item, TableName=indexed, Key=key,
                   UpdateExpression="SET l = list_append(list_append(:w, :w), :w)",
                   ExpressionAttributeValues=w) == \
        "Invalid UpdateExpression: The function is not allowed to be used this way in an " \
        "expression; function: list_append"
    dynamodb.update_item(TableName=indexed, Key=key,
                         UpdateExpression="SET l = list_append(if_not_exists(l, :w), :w)",
                         ExpressionAttributeValues=w)
    stored = dynamodb.get_item(TableName=indexed, Key=key, ConsistentRead=True)["Item"]
    assert stored["n"] == n(5) and stored["l"] == {"L": [{"S": "x"}, {"S": "x"}]}


def test_add_or_delete_on_a_key_names_the_key(dynamodb, indexed):
    # Alternator's test_update_expression_cannot_modify_key, on an item that does not exist:
    # the key is refused before the operand's type is checked against it.
    key = {"a": {"S": "key"}, "b": {"S": "none"}}
    for expr, value in [("ADD a :v", {"N": "4"}), ("ADD b :v", {"N": "4"}),
                        ("DELETE a :v", {"SS": ["cat", "mouse"]}),
                        ("DELETE b :v", {"SS": ["cat", "mouse"]})]:
        assert refused(dynamodb.update_item, TableName=indexed, Key=key, UpdateExpression=expr,
                       ExpressionAttributeValues={":v": value}) == \
            f"One or more parameter values were invalid: Cannot update attribute {expr[-4]}. " \
            "This attribute is part of the key", expr
    assert "Item" not in dynamodb.get_item(TableName=indexed, Key=key, ConsistentRead=True)


def test_placeholders_without_expressions(dynamodb, indexed):
    # dynalite's getItem, batchGetItem, query, scan, putItem and updateItem tests: names given
    # (even empty) to a request with no expression, before "must not be empty"; values given
    # to one with no expression that takes values, naming those expressions.
    only_names = "ExpressionAttributeNames can only be specified when using expressions"
    key = {"a": {"S": "x"}, "b": {"S": "1"}}
    eq = {"a": {"AttributeValueList": [{"S": "x"}], "ComparisonOperator": "EQ"}}
    for names in [{}, {"#a": "a"}]:
        assert refused(dynamodb.get_item, TableName=indexed, Key=key, AttributesToGet=["a"],
                       ExpressionAttributeNames=names) == only_names
        assert refused(dynamodb.batch_get_item, RequestItems={indexed: {
            "Keys": [key], "AttributesToGet": ["a"], "ExpressionAttributeNames": names}}) == \
            only_names
        assert refused(dynamodb.transact_get_items, TransactItems=[{"Get": {
            "TableName": indexed, "Key": key, "ExpressionAttributeNames": names}}]) == only_names
        assert refused(dynamodb.query, TableName=indexed, KeyConditions=eq,
                       ExpressionAttributeNames=names) == only_names
        assert refused(dynamodb.scan, TableName=indexed, ExpressionAttributeNames=names) == \
            only_names
        assert refused(dynamodb.transact_write_items, TransactItems=[{"Put": {
            "TableName": indexed, "Item": key, "ExpressionAttributeNames": names}}]) == \
            only_names
        assert refused(dynamodb.update_item, TableName=indexed, Key=key,
                       AttributeUpdates={"c": {"Value": {"S": "v"}, "Action": "PUT"}},
                       ExpressionAttributeNames=names, ExpressionAttributeValues={}) == \
            only_names
    only_values = "ExpressionAttributeValues can only be specified when using expressions: "
    for values in [{}, {":v": {"S": "v"}}]:
        assert refused(dynamodb.query, TableName=indexed, KeyConditions=eq,
                       ExpressionAttributeValues=values) == \
            only_values + "FilterExpression and KeyConditionExpression are null"
        assert refused(dynamodb.scan, TableName=indexed, ProjectionExpression="a",
                       ExpressionAttributeValues=values) == \
            only_values + "FilterExpression is null"
        assert refused(dynamodb.put_item, TableName=indexed, Item=key,
                       ExpressionAttributeValues=values) == \
            only_values + "ConditionExpression is null"
        assert refused(dynamodb.update_item, TableName=indexed, Key=key,
                       AttributeUpdates={"c": {"Value": {"S": "v"}, "Action": "PUT"}},
                       ExpressionAttributeValues=values) == \
            only_values + "UpdateExpression and ConditionExpression are null"


ENVELOPE = "1 validation error detected: "


def test_single_item_writes_wrap_expression_refusals(dynamodb, indexed):
    k = {"a": {"S": "w"}, "b": {"S": "1"}}
    one = {":one": {"N": "1"}, ":a": {"S": "v"}}
    update = lambda **kw: refused(dynamodb.update_item, TableName=indexed, Key=k, **kw)  # noqa: E731
    assert update(UpdateExpression="ADD x :one SET y = :a ADD z :one",
                  ExpressionAttributeValues=one) == \
        ENVELOPE + 'Invalid UpdateExpression: The "ADD" section can only be used once in an ' \
        "update expression;"
    assert update(UpdateExpression="REMOVE x SET y = :a REMOVE z",
                  ExpressionAttributeValues={":a": {"S": "v"}}) == \
        ENVELOPE + 'Invalid UpdateExpression: The "REMOVE" section can only be used once in an ' \
        "update expression;"
    assert update(UpdateExpression="") == \
        ENVELOPE + "Invalid UpdateExpression: The expression can not be empty;"
    assert update(UpdateExpression="SET s = :a, s.n = :a",
                  ExpressionAttributeValues={":a": {"S": "v"}}) == \
        ENVELOPE + "Invalid UpdateExpression: Two document paths overlap with each other; must " \
        "remove or rewrite one of these paths; path one: [s], path two: [s, n]"
    assert update(UpdateExpression="SET y = :a", ExpressionAttributeValues={":a": {"S": "v"}},
                  ExpressionAttributeNames={"#count": "count"}) == \
        ENVELOPE + "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}"
    assert update(UpdateExpression="SET y = :a", ExpressionAttributeValues=one) == \
        ENVELOPE + "Value provided in ExpressionAttributeValues unused in expressions: keys: {:one}"
    assert update(UpdateExpression="SET y = :a", ExpressionAttributeValues={}) == \
        ENVELOPE + "ExpressionAttributeValues must not be empty"
    assert update(UpdateExpression="ADD x :e", ExpressionAttributeValues={":e": {"SS": []}}) == \
        ENVELOPE + "One or more parameter values were invalid: An string set  may not be empty"
    assert update(UpdateExpression="SET y = :e", ExpressionAttributeValues={":e": {"NS": []}}) == \
        ENVELOPE + "One or more parameter values were invalid: An number set  may not be empty"
    assert refused(dynamodb.put_item, TableName=indexed, Item={**k, "n": {"NS": []}}) == \
        ENVELOPE + "One or more parameter values were invalid: An number set  may not be empty"
    assert refused(dynamodb.put_item, TableName=indexed, Item={**k, "s": {"SS": []}}) == \
        ENVELOPE + "One or more parameter values were invalid: An string set  may not be empty"
    for write, given in [(dynamodb.put_item, {"Item": k}), (dynamodb.delete_item, {"Key": k})]:
        assert refused(write, TableName=indexed, ConditionExpression="attribute_not_exists(q)",
                       ExpressionAttributeNames={"#count": "count"}, **given) == \
            ENVELOPE + "Value provided in ExpressionAttributeNames unused in expressions: " \
            "keys: {#count}"
    # Nothing was written.
    assert "Item" not in dynamodb.get_item(TableName=indexed, Key=k)


def test_refusals_other_operations_answer_bare(dynamodb, indexed):
    # Scan's and GetItem's unused names, and a transaction's update expression, stay bare.
    assert refused(dynamodb.scan, TableName=indexed, FilterExpression="#h = :h",
                   ExpressionAttributeNames={"#h": "a", "#count": "count"},
                   ExpressionAttributeValues={":h": {"S": "x"}}) == \
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}"
    assert refused(dynamodb.get_item, TableName=indexed,
                   Key={"a": {"S": "x"}, "b": {"S": "1"}}, ProjectionExpression="a",
                   ExpressionAttributeNames={"#count": "count"}) == \
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}"
    message = refused(dynamodb.transact_write_items, TransactItems=[{"Update": {
        "TableName": indexed, "Key": {"a": {"S": "x"}, "b": {"S": "1"}},
        "UpdateExpression": "SET p = :v SET q = :v",
        "ExpressionAttributeValues": {":v": {"S": "v"}}}}])
    assert 'Invalid UpdateExpression: The "SET" section can only be used once in an update ' \
        "expression;" in message


def test_select_refusals_in_2026_wording(dynamodb, indexed):
    x = {":a": {"S": "x"}}
    query = {"TableName": indexed, "KeyConditionExpression": "a = :a",
             "ExpressionAttributeValues": x}
    for read, given in [(dynamodb.query, query), (dynamodb.scan, {"TableName": indexed})]:
        assert refused(read, Select="ALL_PROJECTED_ATTRIBUTES", **given) == \
            ENVELOPE + "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"
        assert refused(read, Select="SPECIFIC_ATTRIBUTES", **given) == \
            ENVELOPE + "Must specify the AttributesToGet or ProjectionExpression when choosing " \
            "to get SPECIFIC_ATTRIBUTES"
        assert refused(read, Select="COUNT", ProjectionExpression="b", **given) == \
            ENVELOPE + "Cannot specify the ProjectionExpression when choosing to get only the Count"


def test_between_a_null_operand_scan_segments_and_partiql_indexes(dynamodb, indexed):
    for lo, hi in [({"NULL": True}, {"N": "100"}), ({"N": "1"}, {"NULL": True})]:
        assert refused(dynamodb.scan, TableName=indexed, FilterExpression="p BETWEEN :lo AND :hi",
                       ExpressionAttributeValues={":lo": lo, ":hi": hi}) == \
            "Invalid FilterExpression: Incorrect operand type for operator or function; " \
            "operator or function: BETWEEN, operand type: NULL"
    assert refused(dynamodb.scan, TableName=indexed, Segment=3, TotalSegments=3) == \
        "The Segment parameter is zero-based and must be less than parameter TotalSegments"
    assert refused(dynamodb.execute_statement,
                   Statement=f'SELECT * FROM "{indexed}"."test_gsi"') == \
        "The table does not have the specified index"
