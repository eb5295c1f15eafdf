//! Syntax errors name the line, column, offending token and what was expected, in the shape
//! of Cassandra's `SyntaxException` messages; refusals say why.

use khata_cql::language::{ParseErrorKind, parse_statement, parse_statements};

/// (input, kind, line, column, offending, message prefix after `line L:C `)
const CASES: &[(&str, ParseErrorKind, u32, u32, &str, &str)] = &[
    (
        "SELECT FROM t",
        ParseErrorKind::NoViableAlternative,
        1,
        7,
        "FROM",
        "no viable alternative at input 'FROM'",
    ),
    (
        "INSERT INTO t (a, b) VALUES (1, 2;",
        ParseErrorKind::MismatchedInput,
        1,
        33,
        ";",
        "mismatched input ';' expecting ')'",
    ),
    (
        "SELECT * FROM t LIMT 5",
        ParseErrorKind::MismatchedInput,
        1,
        16,
        "LIMT",
        "mismatched input 'LIMT' expecting EOF",
    ),
    (
        "SELECT * FROM",
        ParseErrorKind::MismatchedInput,
        1,
        13,
        "<EOF>",
        "mismatched input '<EOF>' expecting IDENT",
    ),
    (
        "SELECT *\nFROM t\nWHERE k = 1 AND\n  ORDER BY k",
        ParseErrorKind::ReservedKeyword,
        4,
        2,
        "ORDER",
        "mismatched input 'ORDER' expecting IDENT: 'order' is a reserved keyword",
    ),
    (
        "UPDATE t SET a = b + 1 WHERE k = 1",
        ParseErrorKind::Recognition,
        1,
        17,
        "b",
        "Only expressions of the form X = X +<value> are supported.",
    ),
    (
        "UPDATE t SET a = [1] + b WHERE k = 1",
        ParseErrorKind::Recognition,
        1,
        23,
        "b",
        "Only expressions of the form X = <value> + X are supported.",
    ),
    (
        // `-2mo` is one duration token (Cassandra's DURATION rule), not a subtraction.
        "INSERT INTO t (p, d) VALUES (1, 1y-2mo)",
        ParseErrorKind::MismatchedInput,
        1,
        34,
        "-2mo",
        "mismatched input '-2mo' expecting ')'",
    ),
    (
        "SELECT * FROM t WHERE a = 'open",
        ParseErrorKind::UnterminatedLiteral,
        1,
        26,
        "'''",
        "mismatched character '<EOF>' expecting '''",
    ),
    (
        "SELECT * FROM t WHERE a = #",
        ParseErrorKind::InvalidCharacter,
        1,
        26,
        "#",
        "no viable alternative at character '#'",
    ),
    (
        "CREATE TABLE t (a int, b int)",
        ParseErrorKind::Invalid,
        1,
        15,
        "(",
        "No PRIMARY KEY specified for table 't' (exactly one required)",
    ),
    (
        "CREATE TABLE t (a int PRIMARY KEY, b int, PRIMARY KEY (b))",
        ParseErrorKind::Invalid,
        1,
        15,
        "(",
        "Multiple PRIMARY KEYs specified (exactly one required)",
    ),
    (
        "CREATE TABLE t (a int PRIMARY KEY) WITH COMPACT STORAGE",
        ParseErrorKind::Unsupported,
        1,
        40,
        "COMPACT",
        "COMPACT STORAGE tables are not allowed starting with version 4.0",
    ),
    (
        "CREATE ROLE alice WITH PASSWORD = 'x'",
        ParseErrorKind::Unsupported,
        1,
        0,
        "CREATE",
        "CREATE ROLE statements are not supported by khata",
    ),
    (
        "GRANT SELECT ON ALL KEYSPACES TO alice",
        ParseErrorKind::Unsupported,
        1,
        0,
        "GRANT",
        "GRANT SELECT statements are not supported by khata",
    ),
    (
        "INSERT INTO t (a, b) VALUES (1)",
        ParseErrorKind::Invalid,
        1,
        28,
        "(",
        "Unmatched column names/values",
    ),
    (
        "SELECT * FROM t LIMIT 99999999999999999999",
        ParseErrorKind::Invalid,
        1,
        22,
        "99999999999999999999",
        "Invalid integer 99999999999999999999: out of range",
    ),
    (
        "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy'} AND replication = {}",
        ParseErrorKind::Recognition,
        1,
        69,
        "replication",
        "Multiple definition for property 'replication'",
    ),
    (
        "CREATE KEYSPACE k WITH replication = {'class': 'NetworkTopologyStrategy', \
         'datacenter1': 2, 'datacenter1': 3}",
        ParseErrorKind::Recognition,
        1,
        92,
        "'datacenter1'",
        "Multiple definition for property datacenter1",
    ),
    (
        "ALTER KEYSPACE k WITH replication = {'class': ?}",
        ParseErrorKind::Recognition,
        1,
        37,
        "'class'",
        "Invalid property value: ? for property: 'class' (bind variables are not supported in \
         DDL queries)",
    ),
    (
        "CREATE KEYSPACE k WITH replication = {1: 'a', 'b': null}",
        ParseErrorKind::Recognition,
        1,
        46,
        "'b'",
        "Invalid property value: null for property: 'b'",
    ),
    (
        "INSERT INTO t (a) VALUES (1) USING TTL 1 AND TTL 2",
        ParseErrorKind::Invalid,
        1,
        45,
        "TTL",
        "TTL given more than once",
    ),
    (
        "CREATE TYPE byte (a int)",
        ParseErrorKind::Recognition,
        1,
        12,
        "byte",
        "Invalid (reserved) user type name byte",
    ),
    (
        "SELECT * FROM ?",
        ParseErrorKind::Recognition,
        1,
        14,
        "?",
        "Bind variables cannot be used for table names",
    ),
    (
        "SELECT * FROM ?.t",
        ParseErrorKind::Recognition,
        1,
        14,
        "?",
        "Bind variables cannot be used for keyspace names",
    ),
    (
        "INSERT INTO ks.? (a) VALUES (1)",
        ParseErrorKind::Recognition,
        1,
        15,
        "?",
        "Bind variables cannot be used for table names",
    ),
    (
        "USE ?",
        ParseErrorKind::Recognition,
        1,
        4,
        "?",
        "Bind variables cannot be used for keyspace names",
    ),
    (
        "DROP KEYSPACE ?",
        ParseErrorKind::Recognition,
        1,
        14,
        "?",
        "Bind variables cannot be used for keyspace names",
    ),
    (
        "CREATE INDEX ? ON t (v)",
        ParseErrorKind::Recognition,
        1,
        13,
        "?",
        "Bind variables cannot be used for index names",
    ),
    (
        "DROP INDEX ks.?",
        ParseErrorKind::Recognition,
        1,
        14,
        "?",
        "Bind variables cannot be used for index names",
    ),
    (
        "UPDATE t SET a = 1, a = 2 WHERE k = 1",
        ParseErrorKind::Recognition,
        1,
        20,
        "a",
        "Multiple incompatible setting of column a",
    ),
    (
        "SELECT * FROM t WHERE a = 0 AND (b, c) > ()",
        ParseErrorKind::NoViableAlternative,
        1,
        42,
        ")",
        "no viable alternative at input ')'",
    ),
    (
        "SELECT * FROM t WHERE a = 0 AND (b, c) IN ((1, 2), ())",
        ParseErrorKind::NoViableAlternative,
        1,
        52,
        ")",
        "no viable alternative at input ')'",
    ),
    (
        "FOO BAR",
        ParseErrorKind::NoViableAlternative,
        1,
        0,
        "FOO",
        "no viable alternative at input 'FOO'",
    ),
    (
        "BEGIN BATCH SELECT * FROM t APPLY BATCH",
        ParseErrorKind::MismatchedInput,
        1,
        12,
        "SELECT",
        "mismatched input 'SELECT' expecting K_INSERT, K_UPDATE, K_DELETE, K_APPLY",
    ),
];

#[test]
fn errors_are_positioned_and_say_what_was_expected() {
    for &(input, kind, line, column, offending, message) in CASES {
        let error = parse_statement(input).expect_err(input);
        assert_eq!(error.kind, kind, "{input}: {error}");
        assert_eq!(
            (error.position.line, error.position.column),
            (line, column),
            "{input}: {error}"
        );
        assert_eq!(error.offending, offending, "{input}: {error}");
        // A check of Cassandra's parser reads as its text alone.
        let prefix = if kind == ParseErrorKind::Recognition {
            message.to_string()
        } else {
            format!("line {line}:{column} {message}")
        };
        assert!(
            error.to_string().starts_with(&prefix),
            "{input}\n  got:  {error}\n  want: {prefix}..."
        );
    }
}

#[test]
fn the_message_quotes_the_statement_around_the_offending_token() {
    let error = parse_statement("SELECT FROM t").unwrap_err();
    assert_eq!(
        error.to_string(),
        "line 1:7 no viable alternative at input 'FROM' (SELECT [FROM] t)"
    );
    let error = parse_statement(
        "SELECT a, b, c, d, e, f, g FROM t WHERE k = 1 AND c > 2 LIMT 10 ALLOW FILTERING",
    )
    .unwrap_err();
    assert_eq!(error.expected, vec!["EOF".to_string()]);
    assert_eq!(
        error.to_string(),
        "line 1:56 mismatched input 'LIMT' expecting EOF \
         (...FROM t WHERE k = 1 AND c > 2 [LIMT] 10 ALLOW...)"
    );
}

#[test]
fn syntax_errors_and_refusals_are_told_apart() {
    assert!(
        parse_statement("SELECT FROM t")
            .unwrap_err()
            .is_syntax_error()
    );
    assert!(
        !parse_statement("CREATE ROLE r")
            .unwrap_err()
            .is_syntax_error()
    );
    assert!(
        !parse_statement("CREATE TABLE t (a int, b int)")
            .unwrap_err()
            .is_syntax_error()
    );
    // Cassandra's parser's own checks (`addRecognitionError`) are syntax errors.
    assert!(
        parse_statement("UPDATE t SET a = b + 1 WHERE k = 1")
            .unwrap_err()
            .is_syntax_error()
    );
}

#[test]
fn an_error_in_a_later_statement_points_into_it() {
    let error = parse_statements("USE ks;\nSELECT * FROM t;\nSELECT * FROM t WHERE;").unwrap_err();
    assert_eq!((error.position.line, error.position.column), (3, 21));
    let error = parse_statements("USE ks SELECT").unwrap_err();
    assert_eq!(
        error.message,
        "mismatched input 'SELECT' expecting ';', EOF"
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = format!(
        "SELECT * FROM t WHERE a = {}1{}",
        "[".repeat(500),
        "]".repeat(500)
    );
    let error = parse_statement(&deep).unwrap_err();
    assert_eq!(error.kind, ParseErrorKind::TooDeep);
    let shallow = format!(
        "SELECT * FROM t WHERE a = {}1{}",
        "[".repeat(40),
        "]".repeat(40)
    );
    assert!(parse_statement(&shallow).is_ok());
    for deep in [
        format!("SELECT {}a{} FROM t", "(".repeat(5000), ")".repeat(5000)),
        format!(
            "SELECT * FROM t WHERE {}a = 1{}",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
        format!(
            "CREATE TABLE t (k {}int{} PRIMARY KEY)",
            "frozen<list<".repeat(3000),
            ">>".repeat(3000)
        ),
        format!("SELECT * FROM t WHERE a = {}1", "-".repeat(5000)),
        format!("SELECT {}a FROM t", "-".repeat(5000)),
        format!(
            "SELECT * FROM t WHERE a = {}1{}",
            "f(".repeat(5000),
            ")".repeat(5000)
        ),
    ] {
        let error = parse_statement(&deep).unwrap_err();
        assert!(
            matches!(
                error.kind,
                ParseErrorKind::TooDeep | ParseErrorKind::NoViableAlternative
            ),
            "{error}"
        );
    }
}

/// A flat chain of operators makes a tree as deep as it is long: it counts against the
/// nesting limit, so a long one is refused instead of overflowing the stack (found by the
/// server's bad-input fuzzing: `WHERE key = 1 + 1 + ...` with 10,000 terms).
#[test]
fn long_operator_chains_are_refused_not_overflowed() {
    for op in [" + 1", " * 2", " - 3"] {
        let long = format!("SELECT * FROM t WHERE k = 1{}", op.repeat(20_000));
        let e = khata_cql::language::parse_statement(&long).unwrap_err();
        assert!(e.to_string().contains("nested more than"), "{e}");
        let selector = format!("SELECT 1{} FROM t", op.repeat(20_000));
        assert!(khata_cql::language::parse_statement(&selector).is_err());
        let short = format!("SELECT * FROM t WHERE k = 1{}", op.repeat(50));
        khata_cql::language::parse_statement(&short).unwrap();
    }
}
