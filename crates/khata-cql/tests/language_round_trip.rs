//! Every statement's `Display` is canonical CQL that parses back to the same tree, and
//! printing is a fixed point after one round.

use khata_cql::language::{parse_statement, parse_statements};

const CORPUS: &str = include_str!("language_corpus.cql");

#[test]
fn the_corpus_round_trips() {
    let statements = parse_statements(CORPUS).unwrap_or_else(|e| panic!("{e}"));
    assert!(statements.len() >= 60, "{} statements", statements.len());
    for parsed in statements {
        let canonical = parsed.statement.to_string();
        let again = parse_statement(&canonical).unwrap_or_else(|e| panic!("{canonical}\n{e}"));
        assert_eq!(again.statement, parsed.statement, "{canonical}");
        assert_eq!(again.bind_markers, parsed.bind_markers, "{canonical}");
        assert_eq!(again.statement.to_string(), canonical);
    }
}

#[test]
fn names_that_need_quotes_are_quoted() {
    for (input, canonical) in [
        (
            r#"SELECT "Upper", "two words", "key", "true", "1st" FROM "T""#,
            r#"SELECT "Upper", "two words", "key", "true", "1st" FROM "T""#,
        ),
        (
            r#"SELECT "token"(a), "ttl"(b) FROM t"#,
            r#"SELECT token(a), "ttl"(b) FROM t"#,
        ),
        (
            r#"CREATE TYPE "enum" (a int)"#,
            r#"CREATE TYPE "enum" (a int)"#,
        ),
        (
            r#"SELECT * FROM t WHERE "from" = 1"#,
            r#"SELECT * FROM t WHERE "from" = 1"#,
        ),
    ] {
        let parsed = parse_statement(input).unwrap_or_else(|e| panic!("{input}\n{e}"));
        assert_eq!(parsed.statement.to_string(), canonical);
        let again = parse_statement(canonical).unwrap();
        assert_eq!(again.statement, parsed.statement);
    }
}
