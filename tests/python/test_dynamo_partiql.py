"""PartiQL for DynamoDB through boto3: ExecuteStatement's SELECT (Query or Scan, paging with
NextToken, IN, projections, conditions), INSERT, UPDATE and DELETE with their conditions and
RETURNING, BatchExecuteStatement's per-statement responses, ExecuteTransaction's all or
nothing, and the refusals in DynamoDB's words.
"""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError


@pytest.fixture(scope="module")
def table(dynamodb):
    """A table keyed by pk (S) and sk (N), with a GSI on g, holding items a/1..a/5, b/1."""
    name = f"pq-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "byg",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    for i in range(1, 6):
        dynamodb.put_item(TableName=name, Item={
            "pk": {"S": "a"}, "sk": {"N": str(i)}, "n": {"N": str(i * 10)},
            "g": {"S": "even" if i % 2 == 0 else "odd"},
            "doc": {"M": {"tags": {"L": [{"S": f"t{i}"}, {"S": "x"}]}}}})
    dynamodb.put_item(TableName=name, Item={"pk": {"S": "b"}, "sk": {"N": "1"}, "n": {"N": "7"}})
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture
def simple(dynamodb):
    """A fresh table keyed by pk (S) alone."""
    name = f"pqs-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                          KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
    yield name
    dynamodb.delete_table(TableName=name)


def _sks(items):
    return [int(i["sk"]["N"]) for i in items]


def _error(e):
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


# -- SELECT ---------------------------------------------------------------------------------

def test_select_on_the_partition_key_is_a_query_in_key_order(dynamodb, table):
    r = dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}" WHERE pk = ?',
                                   Parameters=[{"S": "a"}])
    assert _sks(r["Items"]) == [1, 2, 3, 4, 5]
    assert "NextToken" not in r


@pytest.mark.parametrize("cond,params,expected", [
    ("sk = ?", [{"N": "3"}], [3]),
    ("sk < 3", [], [1, 2]),
    ("sk <= 3", [], [1, 2, 3]),
    ("sk > 3", [], [4, 5]),
    ("sk >= ?", [{"N": "4"}], [4, 5]),
    ("sk BETWEEN 2 AND 4", [], [2, 3, 4]),
    ("n > 25 AND sk < 5", [], [3, 4]),
    ("contains(doc.tags, 't2')", [], [2]),
    ("doc.tags[0] = 't5'", [], [5]),
    ("size(doc.tags) = 2 AND NOT sk IN (1, 2)", [], [3, 4, 5]),
    ("x IS MISSING AND n IS NOT MISSING AND sk <> 1", [], [2, 3, 4, 5]),
    ("attribute_exists(g) AND (sk = 1 OR sk = 5)", [], [1, 5]),
])
def test_select_conditions(dynamodb, table, cond, params, expected):
    kwargs = {"Parameters": [{"S": "a"}] + params}
    r = dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}" WHERE pk = ? AND {cond}',
                                   **kwargs)
    assert _sks(r["Items"]) == expected


def test_select_without_a_key_condition_is_a_scan(dynamodb, table):
    r = dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}" WHERE n = 7')
    assert [i["pk"]["S"] for i in r["Items"]] == ["b"]
    r = dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}"')
    assert len(r["Items"]) == 6


def test_filters_on_key_attributes(dynamodb, table):
    r = dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}" WHERE sk = 1')
    assert sorted(i["pk"]["S"] for i in r["Items"]) == ["a", "b"]
    r = dynamodb.execute_statement(
        Statement=f"SELECT sk FROM \"{table}\".\"byg\" WHERE g = 'odd' AND sk > 1 AND pk = 'a'")
    assert sorted(_sks(r["Items"])) == [3, 5]
    assert set(r["Items"][0]) == {"sk"}


def test_select_in_on_the_partition_key(dynamodb, table):
    r = dynamodb.execute_statement(
        Statement=f"SELECT pk, sk FROM \"{table}\" WHERE pk IN ('b', 'a') AND sk = 1")
    assert [(i["pk"]["S"], i["sk"]["N"]) for i in r["Items"]] == [("b", "1"), ("a", "1")]
    assert set(r["Items"][0]) == {"pk", "sk"}


def test_select_begins_with_on_a_string_sort_key_and_projection(dynamodb, simple):
    r = dynamodb.execute_statement(Statement=f"INSERT INTO \"{simple}\" VALUE {{'pk': 'p1', 'a': {{'b': [1, 2]}}, 'c': 3}}")
    # A write answers an empty Items (moto's AWS-verified test_insert_data).
    assert r["Items"] == []
    r = dynamodb.execute_statement(
        Statement=f"SELECT a.b[1], c FROM \"{simple}\" WHERE begins_with(pk, 'p')")
    assert r["Items"] == [{"a": {"M": {"b": {"L": [{"N": "2"}]}}}, "c": {"N": "3"}}]


def test_select_on_an_index(dynamodb, table):
    r = dynamodb.execute_statement(Statement=f"SELECT sk FROM \"{table}\".\"byg\" WHERE g = 'even'")
    assert sorted(_sks(r["Items"])) == [2, 4]


def test_paging_with_limit_and_next_token(dynamodb, table):
    seen, token, pages = [], None, 0
    while True:
        kwargs = {"NextToken": token} if token else {}
        r = dynamodb.execute_statement(Statement=f"SELECT * FROM \"{table}\" WHERE pk = 'a'",
                                       Limit=2, ConsistentRead=True, **kwargs)
        seen += _sks(r["Items"])
        pages += 1
        token = r.get("NextToken")
        if not token:
            break
    assert seen == [1, 2, 3, 4, 5] and pages >= 3
    # A Scan pages the same way, and IN across partitions too.
    for statement in (f'SELECT * FROM "{table}"',
                      f"SELECT * FROM \"{table}\" WHERE pk IN ['a', 'b']"):
        seen, token = [], None
        while True:
            kwargs = {"NextToken": token} if token else {}
            r = dynamodb.execute_statement(Statement=statement, Limit=4, **kwargs)
            seen += [(i["pk"]["S"], i["sk"]["N"]) for i in r["Items"]]
            token = r.get("NextToken")
            if not token:
                break
        assert sorted(seen) == [("a", str(i)) for i in range(1, 6)] + [("b", "1")]


def test_consumed_capacity(dynamodb, table):
    r = dynamodb.execute_statement(Statement=f"SELECT * FROM \"{table}\" WHERE pk = 'b'",
                                   ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"]["TableName"] == table
    assert r["ConsumedCapacity"]["CapacityUnits"] > 0


# -- INSERT, UPDATE, DELETE -----------------------------------------------------------------

def test_insert_and_duplicate(dynamodb, simple):
    dynamodb.execute_statement(
        Statement=f"INSERT INTO \"{simple}\" VALUE {{'pk': ?, 's': <<'x', 'y'>>, 'ns': <<1, 2>>, "
                  "'l': [true, null, 'z'], 'm': {'k': -1.5}}",
        Parameters=[{"S": "k1"}])
    item = dynamodb.get_item(TableName=simple, Key={"pk": {"S": "k1"}})["Item"]
    assert sorted(item["s"]["SS"]) == ["x", "y"] and sorted(item["ns"]["NS"]) == ["1", "2"]
    assert item["l"] == {"L": [{"BOOL": True}, {"NULL": True}, {"S": "z"}]}
    assert item["m"] == {"M": {"k": {"N": "-1.5"}}}
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f"INSERT INTO \"{simple}\" VALUE {{'pk': 'k1'}}")
    assert _error(e) == ("DuplicateItemException", "Duplicate primary key exists in table")


def test_update_set_remove_condition_and_returning(dynamodb, simple):
    dynamodb.put_item(TableName=simple, Item={"pk": {"S": "u"}, "n": {"N": "1"},
                                              "m": {"M": {"c": {"N": "5"}}}, "d": {"S": "gone"}})
    r = dynamodb.execute_statement(
        Statement=f"UPDATE \"{simple}\" SET n = n + ? SET m.c = m.c - 1 REMOVE d "
                  "WHERE pk = 'u' AND n = 1 RETURNING ALL NEW *",
        Parameters=[{"N": "2"}])
    assert r["Items"] == [{"pk": {"S": "u"}, "n": {"N": "3"}, "m": {"M": {"c": {"N": "4"}}}}]
    r = dynamodb.execute_statement(
        Statement=f"UPDATE \"{simple}\" SET n = 9 WHERE pk = 'u' RETURNING MODIFIED OLD *")
    assert r["Items"] == [{"n": {"N": "3"}}]
    r = dynamodb.execute_statement(
        Statement=f"UPDATE \"{simple}\" SET s = set_add(s, <<'a'>>) WHERE pk = 'u' RETURNING MODIFIED NEW *")
    assert r["Items"] == [{"s": {"SS": ["a"]}}]
    r = dynamodb.execute_statement(Statement=f"UPDATE \"{simple}\" SET l = list_append([1], [2]) WHERE pk = 'u'")
    assert r["Items"] == []  # a write without RETURNING: empty, as for INSERT
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f"UPDATE \"{simple}\" SET n = 0 WHERE pk = 'u' AND n > 100")
    assert _error(e) == ("ConditionalCheckFailedException", "The conditional request failed")
    # An UPDATE never creates an item.
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f"UPDATE \"{simple}\" SET n = 0 WHERE pk = 'absent'")
    assert _error(e)[0] == "ConditionalCheckFailedException"
    assert "Item" not in dynamodb.get_item(TableName=simple, Key={"pk": {"S": "absent"}})


def test_update_needs_the_whole_key(dynamodb, table):
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f"UPDATE \"{table}\" SET n = 1 WHERE pk = 'a'")
    assert _error(e) == ("ValidationException",
                         "Where clause does not contain a mandatory equality on all key attributes")


def test_condition_failure_returns_the_item_when_asked(dynamodb, simple):
    dynamodb.put_item(TableName=simple, Item={"pk": {"S": "c"}, "n": {"N": "1"}})
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f"DELETE FROM \"{simple}\" WHERE pk = 'c' AND n = 2",
                                   ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert e.value.response["Item"] == {"pk": {"S": "c"}, "n": {"N": "1"}}


def test_delete_with_returning(dynamodb, simple):
    dynamodb.put_item(TableName=simple, Item={"pk": {"S": "d"}, "n": {"N": "1"}})
    r = dynamodb.execute_statement(Statement=f"DELETE FROM \"{simple}\" WHERE pk = ? RETURNING ALL OLD *",
                                   Parameters=[{"S": "d"}])
    assert r["Items"] == [{"pk": {"S": "d"}, "n": {"N": "1"}}]
    assert "Item" not in dynamodb.get_item(TableName=simple, Key={"pk": {"S": "d"}})
    # Deleting an absent item is not an error.
    r = dynamodb.execute_statement(Statement=f"DELETE FROM \"{simple}\" WHERE pk = 'd' RETURNING ALL OLD *")
    assert r["Items"] == []
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f"DELETE FROM \"{simple}\" WHERE pk = 'd' RETURNING ALL NEW *")
    assert _error(e)[0] == "ValidationException"


def test_write_consumed_capacity(dynamodb, simple):
    r = dynamodb.execute_statement(Statement=f"INSERT INTO \"{simple}\" VALUE {{'pk': 'cap'}}",
                                   ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"]["TableName"] == simple
    assert r["ConsumedCapacity"]["CapacityUnits"] == 1.0


# -- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize("statement", [
    "SELEC * FROM t", "SELECT * FROM", "SELECT * FROM \"t\" WHERE", "UPDATE \"t\" WHERE pk = 1",
    "INSERT INTO \"t\" VALUE 'x'", "SELECT * FROM \"t\" WHERE a = 'open",
    "SELECT * FROM \"t\" WHERE " + "(" * 200 + "a = 1" + ")" * 200,
])
def test_malformed_statements(dynamodb, statement):
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=statement)
    code, message = _error(e)
    assert code == "ValidationException"
    assert message.startswith("Statement wasn't well formed, can't be processed: ")


def test_not_a_statement(dynamodb):
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement="DROP TABLE t")
    assert _error(e) == ("ValidationException",
                         "Statement wasn't well formed, can't be processed: Expected data manipulation")


def test_parameter_count(dynamodb, table):
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}" WHERE pk = ?')
    assert _error(e) == ("ValidationException",
                         "Number of parameters in request and statement don't match.")


def test_unknown_table(dynamodb):
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement='SELECT * FROM "no-such-table"')
    assert _error(e)[0] == "ResourceNotFoundException"


def test_too_long(dynamodb):
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement="SELECT * FROM t WHERE a = '" + "x" * 9000 + "'")
    assert _error(e)[0] == "ValidationException"


def test_bad_next_token(dynamodb, table):
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}"', NextToken="garbage!")
    assert _error(e) == ("ValidationException", "Invalid NextToken")
    token = dynamodb.execute_statement(Statement=f'SELECT * FROM "{table}"', Limit=1)["NextToken"]
    with pytest.raises(ClientError) as e:
        dynamodb.execute_statement(Statement=f"SELECT * FROM \"{table}\" WHERE pk = 'a'", NextToken=token)
    assert _error(e) == ("ValidationException", "NextToken does not match request")


# -- BatchExecuteStatement ------------------------------------------------------------------

def test_batch_reads_answer_in_order(dynamodb, table):
    r = dynamodb.batch_execute_statement(Statements=[
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = ? AND sk = ?",
         "Parameters": [{"S": "a"}, {"N": "2"}]},
        {"Statement": f"SELECT n FROM \"{table}\" WHERE pk = 'b' AND sk = 1", "ConsistentRead": True},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'zz' AND sk = 1"},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'a'"},
        {"Statement": "SELECT * FROM \"no-such-table\" WHERE pk = 'a' AND sk = 1"},
    ], ReturnConsumedCapacity="TOTAL")
    out = r["Responses"]
    assert len(out) == 5
    assert out[0]["Item"]["sk"] == {"N": "2"} and out[0]["TableName"] == table
    assert out[1]["Item"] == {"n": {"N": "7"}}
    assert "Item" not in out[2] and "Error" not in out[2]
    assert out[3]["Error"] == {"Code": "ValidationError", "Message":
                               "Where clause does not contain a mandatory equality on all key attributes"}
    assert out[4]["Error"]["Code"] == "ResourceNotFound"
    assert [c["TableName"] for c in r["ConsumedCapacity"]] == [table]


def test_batch_writes_fail_one_by_one(dynamodb, simple):
    dynamodb.put_item(TableName=simple, Item={"pk": {"S": "there"}, "n": {"N": "1"}})
    r = dynamodb.batch_execute_statement(Statements=[
        {"Statement": f"INSERT INTO \"{simple}\" VALUE {{'pk': 'new'}}"},
        {"Statement": f"INSERT INTO \"{simple}\" VALUE {{'pk': 'there'}}"},
        {"Statement": f"UPDATE \"{simple}\" SET n = 5 WHERE pk = 'there' AND n = 2",
         "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        {"Statement": f"DELETE FROM \"{simple}\" WHERE pk = ?", "Parameters": [{"S": "new"}]},
        {"Statement": "INSERT INTO"},
    ])
    out = r["Responses"]
    assert "Error" not in out[0]
    assert out[1]["Error"] == {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
    assert out[2]["Error"]["Code"] == "ConditionalCheckFailed"
    assert out[2]["Error"]["Item"] == {"pk": {"S": "there"}, "n": {"N": "1"}}
    assert "Error" not in out[3]
    assert out[4]["Error"]["Code"] == "ValidationError"
    assert "Item" not in dynamodb.get_item(TableName=simple, Key={"pk": {"S": "new"}})


def test_batch_refusals(dynamodb, simple):
    with pytest.raises(ClientError) as e:
        dynamodb.batch_execute_statement(Statements=[
            {"Statement": f"SELECT * FROM \"{simple}\" WHERE pk = 'a'"},
            {"Statement": f"DELETE FROM \"{simple}\" WHERE pk = 'a'"}])
    assert _error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        dynamodb.batch_execute_statement(Statements=[
            {"Statement": f"SELECT * FROM \"{simple}\" WHERE pk = 'a'"}] * 26)
    assert _error(e)[0] == "ValidationException"


# -- ExecuteTransaction ---------------------------------------------------------------------

def _balances(dynamodb, table, *pks):
    out = []
    for pk in pks:
        item = dynamodb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True).get("Item")
        out.append(None if item is None else int(item["n"]["N"]))
    return out


def test_transaction_applies_whole(dynamodb, simple):
    for pk in ("ann", "bob", "cy"):
        dynamodb.put_item(TableName=simple, Item={"pk": {"S": pk}, "n": {"N": "100"}})
    r = dynamodb.execute_transaction(TransactStatements=[
        {"Statement": f"UPDATE \"{simple}\" SET n = n - ? WHERE pk = 'ann' AND n >= ?",
         "Parameters": [{"N": "40"}, {"N": "40"}]},
        {"Statement": f"UPDATE \"{simple}\" SET n = n + 40 WHERE pk = 'bob'"},
        {"Statement": f"INSERT INTO \"{simple}\" VALUE {{'pk': 'log1', 'n': 0}}"},
        {"Statement": f"EXISTS(SELECT * FROM \"{simple}\" WHERE pk = 'cy' AND frozen IS MISSING)"},
    ], ReturnConsumedCapacity="TOTAL")
    assert _balances(dynamodb, simple, "ann", "bob", "log1") == [60, 140, 0]
    assert [c["TableName"] for c in r["ConsumedCapacity"]] == [simple]


def test_transaction_cancels_whole_with_reasons(dynamodb, simple):
    for pk in ("cat", "dan", "eve"):
        dynamodb.put_item(TableName=simple, Item={"pk": {"S": pk}, "n": {"N": "10"}})
    with pytest.raises(ClientError) as e:
        dynamodb.execute_transaction(TransactStatements=[
            {"Statement": f"UPDATE \"{simple}\" SET n = n + 1 WHERE pk = 'cat'"},
            {"Statement": f"INSERT INTO \"{simple}\" VALUE {{'pk': 'dan'}}"},
            {"Statement": f"UPDATE \"{simple}\" SET n = 0 WHERE pk = 'nobody'"},
            {"Statement": f"DELETE FROM \"{simple}\" WHERE pk = 'eve' AND n > 50",
             "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        ])
    assert e.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = e.value.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["None", "ValidationError", "ConditionalCheckFailed",
                                            "ConditionalCheckFailed"]
    assert reasons[1]["Message"] == "Duplicate primary key exists in table"
    assert reasons[3]["Item"] == {"pk": {"S": "eve"}, "n": {"N": "10"}}
    assert "[None, ValidationError, ConditionalCheckFailed, ConditionalCheckFailed]" in _error(e)[1]
    assert _balances(dynamodb, simple, "cat", "dan", "eve", "nobody") == [10, 10, 10, None]


def test_transaction_idempotency(dynamodb, simple):
    dynamodb.put_item(TableName=simple, Item={"pk": {"S": "ctr"}, "n": {"N": "0"}})
    statements = [{"Statement": f"UPDATE \"{simple}\" SET n = n + 1 WHERE pk = 'ctr'"}]
    token = uuid.uuid4().hex
    for _ in range(2):
        dynamodb.execute_transaction(TransactStatements=statements, ClientRequestToken=token)
    assert _balances(dynamodb, simple, "ctr") == [1]
    with pytest.raises(ClientError) as e:
        dynamodb.execute_transaction(
            TransactStatements=[{"Statement": f"UPDATE \"{simple}\" SET n = n + 2 WHERE pk = 'ctr'"}],
            ClientRequestToken=token)
    assert _error(e)[0] == "IdempotentParameterMismatchException"


def test_transaction_reads(dynamodb, table):
    r = dynamodb.execute_transaction(TransactStatements=[
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 3"},
        {"Statement": f"SELECT n FROM \"{table}\" WHERE pk = 'b' AND sk = ?", "Parameters": [{"N": "1"}]},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'zz' AND sk = 1"},
    ])
    out = r["Responses"]
    assert out[0]["Item"]["n"] == {"N": "30"}
    assert out[1]["Item"] == {"n": {"N": "7"}}
    assert "Item" not in out[2]


def test_transaction_refusals(dynamodb, simple):
    for statements in (
        [{"Statement": f"SELECT * FROM \"{simple}\" WHERE pk = 'a'"},
         {"Statement": f"DELETE FROM \"{simple}\" WHERE pk = 'a'"}],
        [{"Statement": f"DELETE FROM \"{simple}\" WHERE pk = 'a'"}] * 101,
        [{"Statement": "UPDATE"}],
        [{"Statement": f"DELETE FROM \"{simple}\" WHERE pk = 'a' RETURNING ALL OLD *"}],
        [{"Statement": f"SELECT * FROM \"{simple}\" WHERE pk = 'a' AND x = 1"}],
    ):
        with pytest.raises(ClientError) as e:
            dynamodb.execute_transaction(TransactStatements=statements)
        assert _error(e)[0] == "ValidationException"
