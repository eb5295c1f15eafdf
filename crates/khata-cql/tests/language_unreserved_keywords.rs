//! Unreserved keywords (Parser.g's `unreserved_keyword`) work as names everywhere a name
//! goes; reserved keywords are refused with a clear error unless quoted.

use khata_cql::language::ast::{
    Assignment, AssignmentOp, Name, QualifiedName, Relation, Selectable, Selection, Statement,
};
use khata_cql::language::{Keyword, KeywordClass, ParseErrorKind, parse_statement};

fn parse(text: &str) -> Statement {
    let statement = parse_statement(text)
        .unwrap_or_else(|e| panic!("{text}\n{e}"))
        .statement;
    let canonical = statement.to_string();
    let again = parse_statement(&canonical)
        .unwrap_or_else(|e| panic!("{canonical}\n{e}"))
        .statement;
    assert_eq!(again, statement, "{text} -> {canonical}");
    statement
}

fn unreserved() -> impl Iterator<Item = &'static str> {
    Keyword::ALL
        .iter()
        .filter(|k| k.class() != KeywordClass::Reserved)
        .map(|k| k.text())
}

#[test]
fn the_common_ones_are_unreserved() {
    let words: Vec<&str> = unreserved().collect();
    for word in [
        "key",
        "type",
        "values",
        "ttl",
        "writetime",
        "count",
        "json",
        "filtering",
        "distinct",
        "timestamp",
        "date",
        "text",
        "exists",
        "static",
        "users",
        "options",
        "keys",
        "as",
        "map",
        "list",
        "custom",
        "partition",
        "group",
        "like",
    ] {
        assert!(words.contains(&word), "{word} should be unreserved");
    }
}

#[test]
fn unreserved_keywords_name_columns_tables_and_keyspaces() {
    for word in unreserved() {
        let upper = word.to_uppercase();
        let Statement::CreateTable(table) = parse(&format!(
            "CREATE TABLE {word}.{word} (k int, {upper} int, PRIMARY KEY (k, {word}))"
        )) else {
            panic!("not a CREATE TABLE");
        };
        assert_eq!(table.name, QualifiedName::qualified(word, word));
        assert_eq!(table.columns[1].name, Name::from(word));
        assert_eq!(table.primary_key.clustering, vec![Name::from(word)]);

        let Statement::Select(select) =
            parse(&format!("SELECT {word} FROM {word} WHERE {word} = 1"))
        else {
            panic!("not a SELECT");
        };
        let Selection::Selectors(selectors) = &select.selection else {
            panic!("{word}: not selectors");
        };
        assert_eq!(
            selectors[0].selectable,
            Selectable::Column(Name::from(word))
        );
        assert!(matches!(
            &select.where_clause[0],
            Relation::Column { column, .. } if column.as_str() == word
        ));
        assert!(!select.json && !select.distinct, "{word}");

        parse(&format!("SELECT {word}, k AS {word} FROM t"));
        parse(&format!("INSERT INTO t (k, {word}) VALUES (1, 2)"));
        let Statement::Update(update) = parse(&format!(
            "UPDATE t SET {word}[1] = 2, {word} = {word} + 1 WHERE k = 1 IF {word} = 2"
        )) else {
            panic!("not an UPDATE");
        };
        assert_eq!(
            update.assignments[1],
            Assignment {
                column: Name::from(word),
                op: AssignmentOp::Add(update_value(&update.assignments[1].op)),
            }
        );
        parse(&format!("DELETE {word} FROM t WHERE {word} IN (1, 2)"));
        parse(&format!("USE {word}"));
        parse(&format!("ALTER TABLE t RENAME {word} TO x"));
    }
}

fn update_value(op: &AssignmentOp) -> khata_cql::language::ast::Term {
    match op {
        AssignmentOp::Add(term) => term.clone(),
        other => panic!("not an addition: {other:?}"),
    }
}

#[test]
fn json_and_distinct_are_flags_only_before_a_selection() {
    let select = |text: &str| match parse(text) {
        Statement::Select(select) => (select.json, select.distinct, select.selection.to_string()),
        other => panic!("not a SELECT: {other:?}"),
    };
    assert_eq!(
        select("SELECT json FROM t"),
        (false, false, "\"json\"".into())
    );
    assert_eq!(
        select("SELECT JSON json FROM t"),
        (true, false, "\"json\"".into())
    );
    assert_eq!(select("SELECT JSON * FROM t"), (true, false, "*".into()));
    assert_eq!(
        select("SELECT distinct FROM t"),
        (false, false, "\"distinct\"".into())
    );
    assert_eq!(
        select("SELECT DISTINCT distinct FROM t"),
        (false, true, "\"distinct\"".into())
    );
    assert_eq!(
        select("SELECT JSON DISTINCT k FROM t"),
        (true, true, "k".into())
    );
    assert_eq!(
        select("SELECT json, distinct FROM t"),
        (false, false, "\"json\", \"distinct\"".into())
    );
}

#[test]
fn function_like_keywords_are_columns_without_parentheses() {
    let Statement::Select(select) = parse("SELECT ttl, ttl(v), count, count(*), writetime FROM t")
    else {
        panic!("not a SELECT");
    };
    assert_eq!(
        select.selection.to_string(),
        "\"ttl\", TTL(v), \"count\", count(*), \"writetime\""
    );
}

#[test]
fn exists_is_a_column_in_a_condition() {
    let Statement::Update(update) = parse("UPDATE t SET a = 1 WHERE k = 1 IF exists = true") else {
        panic!("not an UPDATE");
    };
    assert_eq!(
        update.if_clause.unwrap().to_string(),
        "IF \"exists\" = true"
    );
}

#[test]
fn reserved_keywords_are_refused_as_names_unless_quoted() {
    let reserved: Vec<&str> = Keyword::ALL
        .iter()
        .filter(|k| k.is_reserved())
        .map(|k| k.text())
        .collect();
    for word in [
        "select", "from", "where", "table", "token", "order", "limit", "in",
    ] {
        assert!(reserved.contains(&word), "{word} should be reserved");
    }
    for word in reserved {
        let text = format!("CREATE TABLE t (k int PRIMARY KEY, {word} int)");
        let error = parse_statement(&text).expect_err(&text);
        assert_eq!(
            error.kind,
            ParseErrorKind::ReservedKeyword,
            "{text}: {error}"
        );
        assert_eq!(error.position.column, 35, "{error}");
        assert!(
            error.to_string().contains("reserved keyword"),
            "{text}: {error}"
        );
        let Statement::CreateTable(table) = parse(&format!(
            "CREATE TABLE t (k int PRIMARY KEY, \"{word}\" int)"
        )) else {
            panic!("not a CREATE TABLE");
        };
        assert_eq!(table.columns[1].name, Name::from(word));
    }
}

#[test]
fn quoted_names_keep_case_and_quotes() {
    let Statement::Select(select) = parse(r#"SELECT "MixedCase", "with ""quotes""" FROM "Ks"."T""#)
    else {
        panic!("not a SELECT");
    };
    assert_eq!(select.table, QualifiedName::qualified("Ks", "T"));
    assert_eq!(
        select.selection.to_string(),
        r#""MixedCase", "with ""quotes""""#
    );
    let Statement::Select(select) = parse("SELECT MixedCase FROM KS.T") else {
        panic!("not a SELECT");
    };
    assert_eq!(select.table, QualifiedName::qualified("ks", "t"));
    assert_eq!(select.selection.to_string(), "mixedcase");
}
