//! Real-world statements (shapes from Cassandra's CQL documentation and the seed's chat
//! schema) parse to the expected syntax tree.

use khata_cql::language::ast::*;
use khata_cql::language::{ParsedStatement, Statement, parse_statement, parse_statements};

fn parse(text: &str) -> ParsedStatement {
    parse_statement(text).unwrap_or_else(|e| panic!("{text}\n{e}"))
}

fn n(name: &str) -> Name {
    Name::from(name)
}

fn int(value: &str) -> Term {
    Term::Literal(Literal::Integer(value.to_string()))
}

fn string(value: &str) -> Term {
    Term::Literal(Literal::String(value.to_string()))
}

fn marker(index: usize) -> Term {
    Term::Marker(BindMarker { index, name: None })
}

fn eq(column: &str, value: Term) -> Relation {
    Relation::Column {
        column: n(column),
        op: ComparisonOp::Equal,
        value,
    }
}

fn column(name: &str, ty: TypeExpr) -> ColumnDefinition {
    ColumnDefinition {
        name: n(name),
        ty,
        is_static: false,
    }
}

fn native(ty: NativeType) -> TypeExpr {
    TypeExpr::Native(ty)
}

fn string_map(entries: &[(&str, Literal)]) -> PropertyValue {
    PropertyValue::Map(
        entries
            .iter()
            .map(|(k, v)| (Literal::String(k.to_string()), v.clone()))
            .collect(),
    )
}

#[test]
fn chat_schema() {
    let statements = parse_statements(
        "CREATE KEYSPACE IF NOT EXISTS chat WITH replication = \
             {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND durable_writes = true;
         CREATE TABLE chat.messages_by_channel (
             channel_id uuid,
             bucket int,
             message_id timeuuid,
             author_id uuid,
             body text,
             PRIMARY KEY ((channel_id, bucket), message_id)
         ) WITH CLUSTERING ORDER BY (message_id DESC)
           AND compaction = {'class': 'TimeWindowCompactionStrategy',
                             'compaction_window_unit': 'DAYS', 'compaction_window_size': 1}
           AND default_time_to_live = 2592000;",
    )
    .unwrap();
    assert_eq!(statements.len(), 2);
    assert_eq!(
        statements[0].statement,
        Statement::CreateKeyspace(CreateKeyspace {
            if_not_exists: true,
            name: n("chat"),
            properties: vec![
                Property {
                    name: n("replication"),
                    value: string_map(&[
                        ("class", Literal::String("NetworkTopologyStrategy".into())),
                        ("dc1", Literal::Integer("3".into())),
                    ]),
                },
                Property {
                    name: n("durable_writes"),
                    value: PropertyValue::Constant(Literal::Boolean(true)),
                },
            ],
        })
    );
    assert_eq!(
        statements[1].statement,
        Statement::CreateTable(Box::new(CreateTable {
            if_not_exists: false,
            name: QualifiedName::qualified("chat", "messages_by_channel"),
            columns: vec![
                column("channel_id", native(NativeType::Uuid)),
                column("bucket", native(NativeType::Int)),
                column("message_id", native(NativeType::Timeuuid)),
                column("author_id", native(NativeType::Uuid)),
                column("body", native(NativeType::Text)),
            ],
            primary_key: PrimaryKey {
                partition_key: vec![n("channel_id"), n("bucket")],
                clustering: vec![n("message_id")],
            },
            clustering_order: vec![(n("message_id"), OrderDirection::Desc)],
            properties: vec![
                Property {
                    name: n("compaction"),
                    value: string_map(&[
                        (
                            "class",
                            Literal::String("TimeWindowCompactionStrategy".into())
                        ),
                        ("compaction_window_unit", Literal::String("DAYS".into())),
                        ("compaction_window_size", Literal::Integer("1".into())),
                    ]),
                },
                Property {
                    name: n("default_time_to_live"),
                    value: PropertyValue::Constant(Literal::Integer("2592000".into())),
                },
            ],
        }))
    );
}

#[test]
fn newest_messages_of_a_channel() {
    let parsed = parse(
        "SELECT message_id, author_id, body FROM chat.messages_by_channel \
         WHERE channel_id = ? AND bucket = ? AND message_id < ? ORDER BY message_id DESC LIMIT 50",
    );
    let columns = ["message_id", "author_id", "body"];
    assert_eq!(
        parsed.statement,
        Statement::Select(Box::new(Select {
            json: false,
            distinct: false,
            selection: Selection::Selectors(
                columns
                    .iter()
                    .map(|c| Selector {
                        selectable: Selectable::Column(n(c)),
                        alias: None,
                    })
                    .collect()
            ),
            table: QualifiedName::qualified("chat", "messages_by_channel"),
            where_clause: vec![
                eq("channel_id", marker(0)),
                eq("bucket", marker(1)),
                Relation::Column {
                    column: n("message_id"),
                    op: ComparisonOp::Less,
                    value: marker(2),
                },
            ],
            group_by: vec![],
            order_by: vec![Ordering {
                column: n("message_id"),
                ann_of: None,
                direction: OrderDirection::Desc,
            }],
            per_partition_limit: None,
            limit: Some(IntValue::Literal(50)),
            allow_filtering: false,
        }))
    );
    assert_eq!(parsed.bind_markers, vec![None, None, None]);
}

#[test]
fn user_conversations_with_a_static_column_and_a_set() {
    let parsed = parse(
        "CREATE TABLE IF NOT EXISTS user_conversations (
            user_id uuid, conversation_id timeuuid, display_name text STATIC,
            participants frozen<set<uuid>>, last_read map<uuid, timestamp>,
            PRIMARY KEY (user_id, conversation_id))",
    );
    let Statement::CreateTable(table) = parsed.statement else {
        panic!("not a CREATE TABLE");
    };
    assert!(table.if_not_exists);
    assert_eq!(
        table.columns[2],
        ColumnDefinition {
            name: n("display_name"),
            ty: native(NativeType::Text),
            is_static: true,
        }
    );
    assert_eq!(
        table.columns[3].ty,
        TypeExpr::Frozen(Box::new(TypeExpr::Set(Box::new(native(NativeType::Uuid)))))
    );
    assert_eq!(
        table.columns[4].ty,
        TypeExpr::Map(
            Box::new(native(NativeType::Uuid)),
            Box::new(native(NativeType::Timestamp))
        )
    );
    assert_eq!(
        table.primary_key,
        PrimaryKey {
            partition_key: vec![n("user_id")],
            clustering: vec![n("conversation_id")],
        }
    );
}

#[test]
fn username_claim_is_an_lwt_insert_with_ttl() {
    let parsed = parse(
        "INSERT INTO usernames (username, user_id) VALUES ('alice', :uid) IF NOT EXISTS \
         USING TTL 86400",
    );
    assert_eq!(
        parsed.statement,
        Statement::Insert(Box::new(Insert {
            table: QualifiedName::new("usernames"),
            values: InsertValues::Columns {
                columns: vec![n("username"), n("user_id")],
                values: vec![
                    string("alice"),
                    Term::Marker(BindMarker {
                        index: 0,
                        name: Some(n("uid")),
                    }),
                ],
            },
            if_not_exists: true,
            using: Using {
                ttl: Some(IntValue::Literal(86400)),
                timestamp: None,
            },
        }))
    );
    assert_eq!(parsed.bind_markers, vec![Some(n("uid"))]);
}

#[test]
fn update_with_collections_counters_and_conditions() {
    let parsed = parse(
        "UPDATE t USING TTL ? AND TIMESTAMP 1000 SET
             tags = tags + {'a'}, history = ['x'] + history, scores = scores - [1],
             prefs['theme'] = 'dark', addr.city = 'Pune', hits = hits + 1, misses -= 2
         WHERE id = 1 IF version = 3 AND prefs['theme'] IN ('light', 'dark')",
    );
    let Statement::Update(update) = parsed.statement else {
        panic!("not an UPDATE");
    };
    assert_eq!(
        update.using,
        Using {
            ttl: Some(IntValue::Marker(BindMarker {
                index: 0,
                name: None
            })),
            timestamp: Some(IntValue::Literal(1000)),
        }
    );
    let ops: Vec<AssignmentOp> = update.assignments.into_iter().map(|a| a.op).collect();
    assert_eq!(
        ops,
        vec![
            AssignmentOp::Add(Term::Set(vec![string("a")])),
            AssignmentOp::Prepend(Term::List(vec![string("x")])),
            AssignmentOp::Subtract(Term::List(vec![int("1")])),
            AssignmentOp::SetElement {
                key: string("theme"),
                value: string("dark"),
            },
            AssignmentOp::SetField {
                field: n("city"),
                value: string("Pune"),
            },
            AssignmentOp::Add(int("1")),
            AssignmentOp::Subtract(int("2")),
        ]
    );
    assert_eq!(
        update.if_clause,
        Some(IfClause::Conditions(vec![
            Condition {
                column: n("version"),
                selector: None,
                predicate: ConditionPredicate::Compare(ComparisonOp::Equal, int("3")),
            },
            Condition {
                column: n("prefs"),
                selector: Some(ElementSelector::Element(string("theme"))),
                predicate: ConditionPredicate::In(InValues::Terms(vec![
                    string("light"),
                    string("dark")
                ])),
            },
        ]))
    );
}

#[test]
fn delete_cells_rows_and_ranges() {
    let parsed = parse(
        "DELETE body, reactions['+1'], meta.edited FROM messages USING TIMESTAMP 42 \
         WHERE channel_id = 1 AND bucket = 2 AND message_id >= 10 AND message_id < 20 IF EXISTS",
    );
    let Statement::Delete(delete) = parsed.statement else {
        panic!("not a DELETE");
    };
    assert_eq!(
        delete.targets,
        vec![
            DeleteTarget {
                column: n("body"),
                selector: None
            },
            DeleteTarget {
                column: n("reactions"),
                selector: Some(ElementSelector::Element(string("+1"))),
            },
            DeleteTarget {
                column: n("meta"),
                selector: Some(ElementSelector::Field(n("edited"))),
            },
        ]
    );
    assert_eq!(delete.timestamp, Some(IntValue::Literal(42)));
    assert_eq!(delete.where_clause.len(), 4);
    assert_eq!(delete.if_clause, Some(IfClause::Exists));

    let Statement::Delete(whole) = parse("DELETE FROM t WHERE k = 1").statement else {
        panic!("not a DELETE");
    };
    assert!(whole.targets.is_empty());
}

#[test]
fn batch_numbers_markers_across_its_statements() {
    let parsed = parse(
        "BEGIN BATCH USING TIMESTAMP 5
           INSERT INTO messages (channel_id, message_id, body) VALUES (?, ?, ?);
           UPDATE channels SET last_message = ? WHERE channel_id = ?;
           DELETE FROM drafts WHERE user_id = ?
         APPLY BATCH;",
    );
    let Statement::Batch(batch) = parsed.statement else {
        panic!("not a BATCH");
    };
    assert_eq!(batch.kind, BatchKind::Logged);
    assert_eq!(batch.using.timestamp, Some(IntValue::Literal(5)));
    assert_eq!(batch.statements.len(), 3);
    assert_eq!(parsed.bind_markers.len(), 6);
    let BatchStatement::Update(update) = &batch.statements[1] else {
        panic!("not an UPDATE");
    };
    assert_eq!(update.assignments[0].op, AssignmentOp::Set(marker(3)));

    for (text, kind) in [
        ("BEGIN UNLOGGED BATCH APPLY BATCH", BatchKind::Unlogged),
        (
            "BEGIN COUNTER BATCH UPDATE c SET n = n + 1 WHERE k = 1 APPLY BATCH",
            BatchKind::Counter,
        ),
    ] {
        let Statement::Batch(batch) = parse(text).statement else {
            panic!("not a BATCH");
        };
        assert_eq!(batch.kind, kind);
    }
}

#[test]
fn select_selectors() {
    let Statement::Select(select) = parse(
        "SELECT JSON DISTINCT count(*), count(1), min(a), WRITETIME(b), TTL(c), maxwritetime(d),
                token(k1, k2), CAST(e AS text), now(), toTimestamp(now()), m['k'], l[1..3],
                u.street AS st, system.uuid(), (bigint) x, a + 1 * 2
         FROM ks.t",
    )
    .statement
    else {
        panic!("not a SELECT");
    };
    assert!(select.json);
    assert!(select.distinct);
    let Selection::Selectors(selectors) = select.selection else {
        panic!("not selectors");
    };
    let col = |c: &str| Box::new(Selectable::Column(n(c)));
    let call = |name: &str, args: Vec<Selectable>| Selectable::FunctionCall {
        name: QualifiedName::new(name),
        args,
    };
    let expected = vec![
        Selectable::CountRows,
        call("count", vec![Selectable::Term(int("1"))]),
        call("min", vec![Selectable::Column(n("a"))]),
        Selectable::Writetime {
            kind: WritetimeKind::Writetime,
            column: col("b"),
        },
        Selectable::Writetime {
            kind: WritetimeKind::Ttl,
            column: col("c"),
        },
        Selectable::Writetime {
            kind: WritetimeKind::MaxWritetime,
            column: col("d"),
        },
        call(
            "token",
            vec![Selectable::Column(n("k1")), Selectable::Column(n("k2"))],
        ),
        Selectable::Cast {
            selectable: col("e"),
            ty: NativeType::Text,
        },
        call("now", vec![]),
        call("totimestamp", vec![call("now", vec![])]),
        Selectable::Element {
            selectable: col("m"),
            key: string("k"),
        },
        Selectable::Slice {
            selectable: col("l"),
            from: Some(int("1")),
            to: Some(int("3")),
        },
        Selectable::Field {
            selectable: col("u"),
            field: n("street"),
        },
        Selectable::FunctionCall {
            name: QualifiedName::qualified("system", "uuid"),
            args: vec![],
        },
        Selectable::TypeHint {
            ty: native(NativeType::Bigint),
            selectable: col("x"),
        },
        Selectable::Arithmetic {
            op: ArithmeticOp::Add,
            left: col("a"),
            right: Box::new(Selectable::Arithmetic {
                op: ArithmeticOp::Multiply,
                left: Box::new(Selectable::Term(int("1"))),
                right: Box::new(Selectable::Term(int("2"))),
            }),
        },
    ];
    let got: Vec<Selectable> = selectors.iter().map(|s| s.selectable.clone()).collect();
    assert_eq!(got, expected);
    assert_eq!(selectors[12].alias, Some(n("st")));
}

#[test]
fn select_relations_and_clauses() {
    let Statement::Select(select) = parse(
        "SELECT * FROM t WHERE (a, b) > (1, 2) AND (a, b) IN ((1, 2), (3, 4)) AND (c) IN ?
           AND token(k1, k2) > token(?, ?) AND token(k1, k2) <= ? AND x IN (1, 2) AND y IN ?
           AND tags CONTAINS 'x' AND prefs CONTAINS KEY 'theme' AND z IS NOT NULL
           AND m['k'] = 'v' AND w != 3
         GROUP BY a, b ORDER BY b ASC, c DESC PER PARTITION LIMIT 2 LIMIT :lim ALLOW FILTERING",
    )
    .statement
    else {
        panic!("not a SELECT");
    };
    assert_eq!(select.selection, Selection::Wildcard);
    let r = &select.where_clause;
    assert_eq!(r.len(), 12);
    assert_eq!(
        r[0],
        Relation::MultiColumn {
            columns: vec![n("a"), n("b")],
            op: ComparisonOp::Greater,
            value: Term::Tuple(vec![int("1"), int("2")]),
        }
    );
    assert_eq!(
        r[1],
        Relation::MultiColumnIn {
            columns: vec![n("a"), n("b")],
            negated: false,
            values: InValues::Terms(vec![
                Term::Tuple(vec![int("1"), int("2")]),
                Term::Tuple(vec![int("3"), int("4")]),
            ]),
        }
    );
    assert_eq!(
        r[2],
        Relation::MultiColumnIn {
            columns: vec![n("c")],
            negated: false,
            values: InValues::Marker(BindMarker {
                index: 0,
                name: None
            }),
        }
    );
    assert_eq!(
        r[3],
        Relation::Token {
            columns: vec![n("k1"), n("k2")],
            op: ComparisonOp::Greater,
            value: Term::FunctionCall {
                name: QualifiedName::new("token"),
                args: vec![marker(1), marker(2)],
            },
        }
    );
    assert_eq!(
        r[4],
        Relation::Token {
            columns: vec![n("k1"), n("k2")],
            op: ComparisonOp::LessEqual,
            value: marker(3),
        }
    );
    assert_eq!(
        r[5],
        Relation::In {
            column: n("x"),
            negated: false,
            values: InValues::Terms(vec![int("1"), int("2")]),
        }
    );
    assert_eq!(
        r[7],
        Relation::Column {
            column: n("tags"),
            op: ComparisonOp::Contains,
            value: string("x"),
        }
    );
    assert_eq!(
        r[8],
        Relation::Column {
            column: n("prefs"),
            op: ComparisonOp::ContainsKey,
            value: string("theme"),
        }
    );
    assert_eq!(r[9], Relation::IsNotNull { column: n("z") });
    assert_eq!(
        r[10],
        Relation::MapElement {
            column: n("m"),
            key: string("k"),
            op: ComparisonOp::Equal,
            value: string("v"),
        }
    );
    assert_eq!(select.group_by.len(), 2);
    assert_eq!(select.order_by[0].direction, OrderDirection::Asc);
    assert_eq!(select.order_by[1].direction, OrderDirection::Desc);
    assert_eq!(select.per_partition_limit, Some(IntValue::Literal(2)));
    assert_eq!(
        select.limit,
        Some(IntValue::Marker(BindMarker {
            index: 5,
            name: Some(n("lim"))
        }))
    );
    assert!(select.allow_filtering);
}

#[test]
fn literals_and_terms() {
    let Statement::Insert(insert) = parse(
        "INSERT INTO t (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r) VALUES (
            -1, 1.5e10, NaN, -Infinity, true, 1h30m, P1DT2H, 0xCAFE,
            123e4567-e89b-12d3-a456-426614174000, 'it''s', $$a 'quoted' $$, null,
            [1, 2], {1, 2}, {'k': 1}, {street: 'x', zip: 1}, (1, 'a'), (int) 3 + 4)",
    )
    .statement
    else {
        panic!("not an INSERT");
    };
    let InsertValues::Columns { values, .. } = insert.values else {
        panic!("not columns");
    };
    let lit = |l: Literal| Term::Literal(l);
    assert_eq!(
        values,
        vec![
            int("-1"),
            lit(Literal::Float("1.5e10".into())),
            lit(Literal::NaN),
            lit(Literal::NegativeInfinity),
            lit(Literal::Boolean(true)),
            lit(Literal::Duration("1h30m".into())),
            lit(Literal::Duration("P1DT2H".into())),
            lit(Literal::Hex("CAFE".into())),
            lit(Literal::Uuid(
                "123e4567-e89b-12d3-a456-426614174000".parse().unwrap()
            )),
            string("it's"),
            string("a 'quoted' "),
            lit(Literal::Null),
            Term::List(vec![int("1"), int("2")]),
            Term::Set(vec![int("1"), int("2")]),
            Term::Map(vec![(string("k"), int("1"))]),
            Term::UserType(vec![(n("street"), string("x")), (n("zip"), int("1"))]),
            Term::Tuple(vec![int("1"), string("a")]),
            Term::Arithmetic {
                op: ArithmeticOp::Add,
                left: Box::new(Term::TypeHint {
                    ty: native(NativeType::Int),
                    term: Box::new(int("3")),
                }),
                right: Box::new(int("4")),
            },
        ]
    );
}

#[test]
fn json_insert() {
    let Statement::Insert(insert) =
        parse(r#"INSERT INTO t JSON '{"id": 1, "name": "x"}' DEFAULT UNSET IF NOT EXISTS"#)
            .statement
    else {
        panic!("not an INSERT");
    };
    assert_eq!(
        insert.values,
        InsertValues::Json {
            value: string(r#"{"id": 1, "name": "x"}"#),
            default_unset: true,
        }
    );
    assert!(insert.if_not_exists);
}

#[test]
fn schema_statements() {
    let cases: &[(&str, &str)] = &[
        ("use Chat", "USE chat"),
        (r#"USE "Chat""#, r#"USE "Chat""#),
        (
            "CREATE KEYSPACE ks WITH REPLICATION = { 'class' : 'SimpleStrategy', 'replication_factor' : 1 }",
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        ),
        (
            "ALTER KEYSPACE IF EXISTS ks WITH durable_writes = false",
            "ALTER KEYSPACE IF EXISTS ks WITH durable_writes = false",
        ),
        ("DROP KEYSPACE IF EXISTS ks", "DROP KEYSPACE IF EXISTS ks"),
        ("DROP SCHEMA ks", "DROP KEYSPACE ks"),
        (
            "CREATE TABLE monkey_species (species text PRIMARY KEY, common_name text, population varint, average_size int) WITH comment='Important biological records'",
            "CREATE TABLE monkey_species (species text, common_name text, population varint, average_size int, PRIMARY KEY (species)) WITH comment = 'Important biological records'",
        ),
        (
            // Cassandra's `'(' tableColumns ( ',' tableColumns? )* ')'`: empty entries.
            "CREATE TABLE t (pk int, ck int, , v int, PRIMARY KEY (pk, ck),)",
            "CREATE TABLE t (pk int, ck int, v int, PRIMARY KEY (pk, ck))",
        ),
        (
            "CREATE TABLE timeline (userid uuid, posted_month int, posted_time uuid, body text, posted_by text, PRIMARY KEY (userid, posted_month, posted_time)) WITH compaction = { 'class' : 'LeveledCompactionStrategy' }",
            "CREATE TABLE timeline (userid uuid, posted_month int, posted_time uuid, body text, posted_by text, PRIMARY KEY (userid, posted_month, posted_time)) WITH compaction = {'class': 'LeveledCompactionStrategy'}",
        ),
        (
            "CREATE TABLE loads (machine inet, cpu int, mtime timeuuid, load float, PRIMARY KEY ((machine, cpu), mtime)) WITH CLUSTERING ORDER BY (mtime DESC) AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'} AND gc_grace_seconds = 864000 AND bloom_filter_fp_chance = 0.01 AND speculative_retry = '99PERCENTILE'",
            "CREATE TABLE loads (machine inet, cpu int, mtime timeuuid, load float, PRIMARY KEY ((machine, cpu), mtime)) WITH CLUSTERING ORDER BY (mtime DESC) AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'} AND gc_grace_seconds = 864000 AND bloom_filter_fp_chance = 0.01 AND speculative_retry = '99PERCENTILE'",
        ),
        (
            "CREATE COLUMNFAMILY t (k int PRIMARY KEY, e vector<float, 384>, p frozen<tuple<int, text>>, u address, d duration, c counter, v varchar)",
            "CREATE TABLE t (k int, e vector<float, 384>, p frozen<tuple<int, text>>, u address, d duration, c counter, v text, PRIMARY KEY (k))",
        ),
        (
            "ALTER TABLE addamsFamily ADD gravesite varchar",
            "ALTER TABLE addamsfamily ADD (gravesite text)",
        ),
        (
            "ALTER TABLE t ADD IF NOT EXISTS (a int, b set<text> static)",
            "ALTER TABLE t ADD IF NOT EXISTS (a int, b set<text> STATIC)",
        ),
        (
            "ALTER TABLE t DROP (a, b) USING TIMESTAMP 10",
            "ALTER TABLE t DROP (a, b) USING TIMESTAMP 10",
        ),
        (
            "ALTER TABLE t RENAME id TO key_id AND c1 TO c2",
            "ALTER TABLE t RENAME id TO key_id AND c1 TO c2",
        ),
        (
            "ALTER TABLE t WITH comment = 'x' AND default_time_to_live = 10",
            "ALTER TABLE t WITH comment = 'x' AND default_time_to_live = 10",
        ),
        (
            "ALTER TABLE t ALTER v TYPE blob",
            "ALTER TABLE t ALTER v TYPE blob",
        ),
        ("DROP TABLE IF EXISTS ks.t", "DROP TABLE IF EXISTS ks.t"),
        ("TRUNCATE ks.t", "TRUNCATE TABLE ks.t"),
        ("TRUNCATE TABLE t", "TRUNCATE TABLE t"),
        (
            "CREATE TYPE IF NOT EXISTS ks.address (street text, city text, zip int, phones map<text, frozen<phone>>,)",
            "CREATE TYPE IF NOT EXISTS ks.address (street text, city text, zip int, phones map<text, frozen<phone>>)",
        ),
        (
            "ALTER TYPE address ADD country text",
            "ALTER TYPE address ADD country text",
        ),
        (
            "ALTER TYPE address RENAME zip TO zipcode AND street TO line1",
            "ALTER TYPE address RENAME zip TO zipcode AND street TO line1",
        ),
        ("DROP TYPE IF EXISTS address", "DROP TYPE IF EXISTS address"),
        (
            "CREATE INDEX userIndex ON NerdMovies (user)",
            r#"CREATE INDEX userindex ON nerdmovies ("user")"#,
        ),
        (
            "CREATE INDEX IF NOT EXISTS ON t (keys(m)); ",
            "CREATE INDEX IF NOT EXISTS ON t (KEYS(m))",
        ),
        (
            "create index on t (values(l), entries(m), full(f))",
            "CREATE INDEX ON t (VALUES(l), ENTRIES(m), FULL(f))",
        ),
        (
            "CREATE CUSTOM INDEX idx ON t (v) USING 'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'cosine'}",
            "CREATE CUSTOM INDEX idx ON t (v) USING 'StorageAttachedIndex' WITH \"options\" = {'similarity_function': 'cosine'}",
        ),
        ("DROP INDEX IF EXISTS ks.idx", "DROP INDEX IF EXISTS ks.idx"),
    ];
    for (input, canonical) in cases {
        let parsed = parse(input);
        assert_eq!(&parsed.statement.to_string(), canonical, "{input}");
    }
}

#[test]
fn describe_statements_as_cqlsh_sends_them() {
    let cases: &[(&str, DescribeTarget, bool)] = &[
        ("DESCRIBE CLUSTER", DescribeTarget::Cluster, false),
        (
            "DESCRIBE SCHEMA",
            DescribeTarget::Schema { full: false },
            false,
        ),
        (
            "DESCRIBE FULL SCHEMA",
            DescribeTarget::Schema { full: true },
            false,
        ),
        ("DESCRIBE KEYSPACES", DescribeTarget::Keyspaces, false),
        (
            "DESCRIBE KEYSPACE",
            DescribeTarget::Keyspace {
                only: false,
                name: None,
            },
            false,
        ),
        (
            "DESCRIBE ONLY KEYSPACE chat WITH INTERNALS",
            DescribeTarget::Keyspace {
                only: true,
                name: Some(n("chat")),
            },
            true,
        ),
        ("DESC TABLES", DescribeTarget::Tables, false),
        (
            "DESCRIBE TABLE chat.messages_by_channel",
            DescribeTarget::Table(QualifiedName::qualified("chat", "messages_by_channel")),
            false,
        ),
        (
            "DESCRIBE INDEX idx",
            DescribeTarget::Index(QualifiedName::new("idx")),
            false,
        ),
        (
            "DESCRIBE MATERIALIZED VIEW ks.mv",
            DescribeTarget::MaterializedView(QualifiedName::qualified("ks", "mv")),
            false,
        ),
        ("DESCRIBE TYPES", DescribeTarget::Types, false),
        (
            "DESCRIBE TYPE ks.address",
            DescribeTarget::Type(QualifiedName::qualified("ks", "address")),
            false,
        ),
        ("DESCRIBE FUNCTIONS", DescribeTarget::Functions, false),
        (
            "DESCRIBE FUNCTION ks.f",
            DescribeTarget::Function(QualifiedName::qualified("ks", "f")),
            false,
        ),
        ("DESCRIBE AGGREGATES", DescribeTarget::Aggregates, false),
        (
            "DESCRIBE AGGREGATE avg2",
            DescribeTarget::Aggregate(QualifiedName::new("avg2")),
            false,
        ),
        (
            r#"DESCRIBE "Chat"."Messages""#,
            DescribeTarget::Generic(QualifiedName::qualified("Chat", "Messages")),
            false,
        ),
        (
            "DESC system",
            DescribeTarget::Generic(QualifiedName::new("system")),
            false,
        ),
    ];
    for (input, target, with_internals) in cases {
        assert_eq!(
            parse(input).statement,
            Statement::Describe(Describe {
                target: target.clone(),
                with_internals: *with_internals,
            }),
            "{input}"
        );
    }
}

#[test]
fn statement_sources_and_empty_statements() {
    let text = "USE ks;\n;SELECT * FROM t ;  UPDATE t SET a = 1 WHERE k = ?;";
    let statements = parse_statements(text).unwrap();
    assert_eq!(statements.len(), 3);
    let sources: Vec<&str> = statements.iter().map(|s| &text[s.source.clone()]).collect();
    assert_eq!(
        sources,
        vec![
            "USE ks",
            "SELECT * FROM t",
            "UPDATE t SET a = 1 WHERE k = ?"
        ]
    );
    assert_eq!(statements[2].bind_markers, vec![None]);
    assert!(parse_statements("  -- nothing here\n").unwrap().is_empty());
}

/// Cassandra's lexer reads `-1` as one negative number, so `(int) -1` is a type hint of -1
/// while `(int) - 1` subtracts 1 from a column named `int` in parentheses.
#[test]
fn a_type_hint_takes_an_adjacent_negative_number() {
    let selection = |text: &str| match parse(text).statement {
        Statement::Select(s) => match s.selection {
            Selection::Selectors(mut v) => v.remove(0).selectable,
            Selection::Wildcard => panic!("{text}"),
        },
        other => panic!("{other:?}"),
    };
    assert_eq!(
        selection("SELECT (int) -1 FROM t"),
        Selectable::TypeHint {
            ty: native(NativeType::Int),
            selectable: Box::new(Selectable::Term(int("-1"))),
        }
    );
    assert_eq!(
        selection("SELECT (int) - 1 FROM t"),
        Selectable::Arithmetic {
            op: ArithmeticOp::Subtract,
            left: Box::new(Selectable::Tuple(vec![Selectable::Column(n("int"))])),
            right: Box::new(Selectable::Term(int("1"))),
        }
    );
}
