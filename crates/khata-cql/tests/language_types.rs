//! Parsed types convert to khata's `CqlType`, applying CQL's freezing rules.

use khata_cql::language::ast::{TypeError, TypeExpr};
use khata_cql::language::{Statement, parse_statement};
use khata_types::schema::CqlType;

fn column_type(ty: &str) -> TypeExpr {
    let text = format!("CREATE TABLE t (k int PRIMARY KEY, c {ty})");
    match parse_statement(&text).unwrap().statement {
        Statement::CreateTable(table) => table.columns[1].ty.clone(),
        other => panic!("{other:?}"),
    }
}

fn resolve(ty: &str) -> Result<CqlType, TypeError> {
    column_type(ty).to_cql_type(&|keyspace, name| {
        (name == "address").then(|| {
            (
                keyspace.unwrap_or("ks").to_string(),
                vec![("street".to_string(), CqlType::Text)],
            )
        })
    })
}

#[test]
fn types_resolve() {
    assert_eq!(resolve("varchar"), Ok(CqlType::Text));
    assert_eq!(
        resolve("frozen<list<set<int>>>"),
        Ok(CqlType::List {
            element: Box::new(CqlType::Set {
                element: Box::new(CqlType::Int),
                frozen: true,
            }),
            frozen: true,
        })
    );
    assert_eq!(
        resolve("map<text, frozen<address>>"),
        Ok(CqlType::Map {
            key: Box::new(CqlType::Text),
            value: Box::new(CqlType::Udt {
                keyspace: "ks".into(),
                name: "address".into(),
                fields: vec![("street".into(), CqlType::Text)],
                frozen: true,
            }),
            frozen: false,
        })
    );
    assert_eq!(
        resolve("tuple<int, list<int>>"),
        Ok(CqlType::Tuple(vec![
            CqlType::Int,
            CqlType::List {
                element: Box::new(CqlType::Int),
                frozen: true,
            },
        ]))
    );
    assert_eq!(
        resolve("vector<float, 3>"),
        Ok(CqlType::Vector {
            element: Box::new(CqlType::Float),
            dimension: 3,
        })
    );
}

#[test]
fn bad_types_are_refused() {
    assert!(matches!(
        resolve("list<list<int>>"),
        Err(TypeError::NonFrozenNested(_))
    ));
    assert!(matches!(
        resolve("list<address>"),
        Err(TypeError::NonFrozenNested(_))
    ));
    assert!(matches!(
        resolve("set<counter>"),
        Err(TypeError::NestedCounter(_))
    ));
    assert_eq!(resolve("frozen<int>"), Err(TypeError::FrozenNative));
    assert!(matches!(resolve("nowhere"), Err(TypeError::UnknownType(_))));
    assert!(matches!(
        resolve("'org.Foo'"),
        Err(TypeError::CustomType(_))
    ));
    assert!(matches!(
        resolve("'org.apache.cassandra.db.marshal.LexicalUUIDType'"),
        Err(TypeError::CustomType(_))
    ));
    // A marshal class of a native type is that type, as Cassandra makes it.
    assert_eq!(
        resolve("'org.apache.cassandra.db.marshal.BytesType'"),
        Ok(CqlType::Blob)
    );
    assert_eq!(resolve("'Int32Type'"), Ok(CqlType::Int));
    assert_eq!(
        resolve("'org.apache.cassandra.db.marshal.TimeUUIDType'"),
        Ok(CqlType::Timeuuid)
    );
    assert_eq!(
        resolve("vector<float, 0>"),
        Err(TypeError::VectorDimension(0))
    );
}
