//! `khata admin`'s command line.

use clap::Parser;
use khata_server::cli::{AdminArgs, AdminVerb, Cli, Command, TableScope};

fn admin(argv: &[&str]) -> AdminArgs {
    let full = ["khata", "admin"].iter().chain(argv).copied();
    match Cli::try_parse_from(full)
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
        .into_command()
    {
        Command::Admin(args) => args,
        other => panic!("{other:?}"),
    }
}

fn scope(keyspace: Option<&str>, table: Option<&str>) -> TableScope {
    TableScope {
        keyspace: keyspace.map(str::to_owned),
        table: table.map(str::to_owned),
    }
}

#[test]
fn verbs() {
    assert_eq!(admin(&["status"]).verb, AdminVerb::Status);
    assert_eq!(admin(&["info"]).verb, AdminVerb::Info);
    assert_eq!(admin(&["flush"]).verb, AdminVerb::Flush(scope(None, None)));
    assert_eq!(
        admin(&["flush", "ks"]).verb,
        AdminVerb::Flush(scope(Some("ks"), None))
    );
    assert_eq!(
        admin(&["flush", "ks", "t"]).verb,
        AdminVerb::Flush(scope(Some("ks"), Some("t")))
    );
    assert_eq!(
        admin(&["compact"]).verb,
        AdminVerb::Compact(scope(None, None))
    );
    assert_eq!(
        admin(&["compact", "ks", "t"]).verb,
        AdminVerb::Compact(scope(Some("ks"), Some("t")))
    );
    assert_eq!(
        admin(&["tablestats"]).verb,
        AdminVerb::Tablestats { target: None }
    );
    assert_eq!(
        admin(&["tablestats", "ks"]).verb,
        AdminVerb::Tablestats {
            target: Some(scope(Some("ks"), None))
        }
    );
    assert_eq!(
        admin(&["tablestats", "ks.t"]).verb,
        AdminVerb::Tablestats {
            target: Some(scope(Some("ks"), Some("t")))
        }
    );
}

#[test]
fn host_and_port() {
    let a = admin(&["status"]);
    assert_eq!((a.host.as_str(), a.port), ("127.0.0.1", 7070));
    let a = admin(&["--host", "127.0.0.2", "--port", "7071", "info"]);
    assert_eq!((a.host.as_str(), a.port), ("127.0.0.2", 7071));
    // After the verb too, as nodetool users type it.
    let a = admin(&["flush", "ks", "--host", "node3", "--port", "7072"]);
    assert_eq!((a.host.as_str(), a.port), ("node3", 7072));
    assert_eq!(a.verb, AdminVerb::Flush(scope(Some("ks"), None)));
}

#[test]
fn refused() {
    for argv in [
        &[][..],
        &["repairz"],
        &["flush", "ks", "t", "extra"],
        &["tablestats", "ks."],
        &["tablestats", ".t"],
        &["tablestats", "a.b.c"],
        &["status", "--port", "x"],
        &["status", "--port", "70000"],
    ] {
        let full = ["khata", "admin"].iter().chain(argv).copied();
        assert!(Cli::try_parse_from(full).is_err(), "{argv:?}");
    }
}
