//! The lexer and parser never panic: random text, random token soup and mutated valid
//! statements all end in a tree or a positioned error; whatever parses round-trips.

use khata_cql::language::{ParseError, parse_statement, parse_statements};
use proptest::prelude::*;

const CORPUS: &str = include_str!("language_corpus.cql");

/// Fragments that make token soup likely to get deep into the grammar.
const FRAGMENTS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "BEGIN",
    "BATCH",
    "APPLY",
    "UNLOGGED",
    "COUNTER",
    "CREATE",
    "ALTER",
    "DROP",
    "TABLE",
    "KEYSPACE",
    "TYPE",
    "INDEX",
    "ON",
    "USING",
    "TTL",
    "TIMESTAMP",
    "IF",
    "NOT",
    "EXISTS",
    "IN",
    "CONTAINS",
    "KEY",
    "IS",
    "NULL",
    "token",
    "count",
    "writetime",
    "CAST",
    "AS",
    "JSON",
    "DISTINCT",
    "ORDER",
    "BY",
    "DESC",
    "ASC",
    "LIMIT",
    "PER",
    "PARTITION",
    "ALLOW",
    "FILTERING",
    "GROUP",
    "PRIMARY",
    "STATIC",
    "WITH",
    "CLUSTERING",
    "frozen",
    "list",
    "map",
    "set",
    "tuple",
    "vector",
    "int",
    "text",
    "DESCRIBE",
    "KEYSPACES",
    "TRUNCATE",
    "USE",
    "t",
    "k",
    "ks",
    "c",
    "\"Q\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "=",
    "!=",
    "<=",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "+=",
    "-=",
    ",",
    ";",
    ".",
    "..",
    ":",
    "?",
    ":n",
    "1",
    "-1",
    "1.5",
    "1e3",
    "'s'",
    "$$d$$",
    "0xff",
    "true",
    "NaN",
    "Infinity",
    "1h30m",
    "P1D",
    "123e4567-e89b-12d3-a456-426614174000",
    "--c\n",
    "/*c*/",
];

/// The checks every outcome must pass: an error's position lies in the input; a tree's
/// canonical text parses back to it.
fn check(input: &str, result: Result<Vec<khata_cql::language::ParsedStatement>, ParseError>) {
    match result {
        Ok(statements) => {
            for parsed in statements {
                assert!(parsed.source.end <= input.len());
                let canonical = parsed.statement.to_string();
                let again = parse_statement(&canonical)
                    .unwrap_or_else(|e| panic!("input {input:?}\ncanonical {canonical}\n{e}"));
                assert_eq!(again.statement, parsed.statement, "{canonical}");
            }
        }
        Err(error) => {
            let lines: Vec<&str> = input.split('\n').collect();
            let line = error.position.line as usize;
            assert!(line >= 1 && line <= lines.len(), "{input:?}: {error}");
            let width = lines[line - 1].chars().count();
            assert!(
                error.position.column as usize <= width,
                "{input:?}: {error}"
            );
            assert!(!error.to_string().is_empty());
        }
    }
}

fn check_both(input: &str) {
    check(input, parse_statements(input));
    check(input, parse_statement(input).map(|p| vec![p]));
}

fn corpus() -> Vec<String> {
    parse_statements(CORPUS)
        .unwrap()
        .into_iter()
        .map(|p| CORPUS[p.source].to_string())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_text(input in "\\PC{0,200}") {
        check_both(&input);
    }

    #[test]
    fn random_bytes_as_text(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        check_both(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soup(parts in proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..40)) {
        check_both(&parts.join(" "));
    }

    #[test]
    fn mutated_statements(
        index in any::<proptest::sample::Index>(),
        edits in proptest::collection::vec(
            (0u8..4, any::<proptest::sample::Index>(), proptest::sample::select(FRAGMENTS), 0usize..8),
            1..4,
        ),
    ) {
        let statements = corpus();
        let mut text: Vec<char> = index.get(&statements).chars().collect();
        for (kind, at, fragment, len) in edits {
            let at = at.index(text.len() + 1);
            match kind {
                // Delete a few characters.
                0 => {
                    let end = (at + len).min(text.len());
                    text.drain(at..end);
                }
                // Insert a fragment.
                1 => {
                    let inserted: Vec<char> = format!(" {fragment} ").chars().collect();
                    text.splice(at..at, inserted);
                }
                // Truncate.
                2 => text.truncate(at),
                // Duplicate a span.
                _ => {
                    let end = (at + len).min(text.len());
                    let span: Vec<char> = text[at..end].to_vec();
                    text.splice(at..at, span);
                }
            }
        }
        let input: String = text.into_iter().collect();
        check_both(&input);
    }
}

#[test]
fn every_prefix_of_the_corpus() {
    for statement in corpus() {
        let chars: Vec<(usize, char)> = statement.char_indices().collect();
        for &(end, _) in &chars {
            check_both(&statement[..end]);
        }
    }
}
