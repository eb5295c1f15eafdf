//! The workspace's layering rules (DESIGN.md §2), checked rather than remembered.
//!
//! Two checks run over the real workspace:
//!
//! 1. **Crate dependencies.** Every member crate's `Cargo.toml` (normal, dev and build
//!    dependencies, target-specific ones included, renamed ones by their `package`) may name
//!    only the khata crates its row of [`RULES`] allows. A khata crate missing from the table
//!    fails the test until someone adds its row, so the rules stay written down here.
//! 2. **Nondeterminism.** Only `khata-env` (the seam) and `khata-server` (the wiring) may call
//!    the real clock or randomness: a text scan of `crates/*/src` in every other crate (except
//!    `khata-bench`, the load generator, which is not part of a node) rejects
//!    `SystemTime::now`, `Instant::now` and `rand::`. Comment lines are skipped.
//!
//! **Opt-out, decided:** a code line may end with `// layering: allowed (reason)`. It is meant
//! for *pacing* only, where the engine needs real elapsed time and the value never reaches
//! data: the commit log's periodic sync and group-commit window, compaction throughput
//! throttling. `Instant` has no epoch, so it cannot leak into write timestamps, TTLs or
//! `now` for reads; those still come from `khata_env::Clock`. A per-line marker (rather than a
//! blanket exception for `khata-storage`) keeps each use visible in review. Wall-clock time
//! (`SystemTime::now`) and randomness have no such use outside the seam; the marker is
//! accepted for them too, but a reviewer should ask why.
//!
//! The checker is tested on small synthetic workspaces too, so a rule that silently stopped
//! matching would be caught.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// Which khata crates a crate may depend on.
#[derive(Debug, Clone, Copy)]
enum Allowed {
    /// Exactly these.
    Only(&'static [&'static str]),
    /// Every crate in [`RULES`] except these (and itself).
    AllExcept(&'static [&'static str]),
}

/// One row per khata crate, in layer order (DESIGN.md §2). `khata-bench` and `khata-sim` are
/// not libraries of the node, so nothing but each other's opposite may depend on them: the
/// server and the simulator may use every layer but never the load generator, and only the
/// bench itself may name everything.
const RULES: &[(&str, Allowed)] = &[
    ("khata-types", Allowed::Only(&[])),
    ("khata-env", Allowed::Only(&[])),
    (
        "khata-storage",
        Allowed::Only(&["khata-types", "khata-env"]),
    ),
    (
        "khata-replica",
        Allowed::Only(&["khata-storage", "khata-types", "khata-env"]),
    ),
    // The cluster layer reaches storage only through the replica layer.
    (
        "khata-cluster",
        Allowed::Only(&["khata-replica", "khata-types", "khata-env"]),
    ),
    (
        "khata-coordinator",
        Allowed::Only(&["khata-cluster", "khata-replica", "khata-types", "khata-env"]),
    ),
    // Front ends never reach past the coordinator.
    (
        "khata-cql",
        Allowed::Only(&["khata-coordinator", "khata-types", "khata-env"]),
    ),
    (
        "khata-dynamo",
        Allowed::Only(&["khata-coordinator", "khata-types", "khata-env"]),
    ),
    (
        "khata-server",
        Allowed::AllExcept(&["khata-sim", "khata-bench"]),
    ),
    ("khata-sim", Allowed::AllExcept(&["khata-bench"])),
    ("khata-bench", Allowed::AllExcept(&[])),
    // The workspace's root package: the `khata` binary, a thin `main` over khata-server.
    ("khata", Allowed::Only(&["khata-server"])),
];

/// Crates whose `src` may touch the real clock and randomness.
const NONDETERMINISM_ALLOWED: &[&str] = &["khata-env", "khata-server", "khata-bench"];

/// Calls that reach the real clock or randomness.
const FORBIDDEN_CALLS: &[&str] = &["SystemTime::now", "Instant::now", "rand::"];

/// The per-line opt-out marker.
const OPT_OUT: &str = "// layering: allowed";

fn is_khata_crate(name: &str) -> bool {
    name == "khata" || name.starts_with("khata-")
}

fn rule_for(name: &str) -> Option<Allowed> {
    RULES.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
}

fn allows(crate_name: &str, rule: Allowed, dep: &str) -> bool {
    match rule {
        Allowed::Only(list) => list.contains(&dep),
        Allowed::AllExcept(list) => {
            dep != crate_name && rule_for(dep).is_some() && !list.contains(&dep)
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Violation {
    UnknownCrate {
        name: String,
    },
    ForbiddenDependency {
        name: String,
        section: String,
        dep: String,
    },
    Nondeterminism {
        file: PathBuf,
        line: usize,
        call: &'static str,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::UnknownCrate { name } => write!(
                f,
                "{name} has no row in RULES (crates/khata-env/tests/workspace_layering.rs): \
                 add one saying which khata crates it may depend on (DESIGN.md §2)"
            ),
            Violation::ForbiddenDependency { name, section, dep } => write!(
                f,
                "{name} may not depend on {dep} (found in [{section}]); see RULES and DESIGN.md §2"
            ),
            Violation::Nondeterminism { file, line, call } => write!(
                f,
                "{}:{line}: `{call}` outside khata-env and khata-server; take time and \
                 randomness from khata_env, or end the line with `{OPT_OUT} (reason)` if it \
                 only paces work",
                file.display()
            ),
        }
    }
}

/// Member crate directories: `members` entries, with a trailing `/*` expanded.
fn member_dirs(root: &Path) -> Vec<PathBuf> {
    let text = fs::read_to_string(root.join("Cargo.toml")).expect("read root Cargo.toml");
    let manifest: toml::Table = text.parse().expect("parse root Cargo.toml");
    let members = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .expect("root Cargo.toml has [workspace] members");
    let mut dirs = Vec::new();
    for member in members {
        let member = member.as_str().expect("members are strings");
        match member.strip_suffix("/*") {
            Some(parent) => {
                for entry in fs::read_dir(root.join(parent)).expect("read members directory") {
                    let path = entry.expect("directory entry").path();
                    if path.join("Cargo.toml").is_file() {
                        dirs.push(path);
                    }
                }
            }
            None => {
                assert!(
                    !member.contains('*'),
                    "only `dir/*` globs are understood: {member}"
                );
                dirs.push(root.join(member));
            }
        }
    }
    dirs.sort();
    dirs
}

/// `(section, dependency package name)` for every dependency of a crate manifest.
fn dependencies(manifest: &toml::Table) -> Vec<(String, String)> {
    const SECTIONS: &[&str] = &[
        "dependencies",
        "dev-dependencies",
        "dev_dependencies",
        "build-dependencies",
        "build_dependencies",
    ];
    let mut tables: Vec<(String, &toml::Table)> = Vec::new();
    for section in SECTIONS {
        if let Some(t) = manifest.get(*section).and_then(|v| v.as_table()) {
            tables.push((section.to_string(), t));
        }
    }
    if let Some(targets) = manifest.get("target").and_then(|v| v.as_table()) {
        for (cfg, target) in targets {
            for section in SECTIONS {
                if let Some(t) = target.get(*section).and_then(|v| v.as_table()) {
                    tables.push((format!("target.{cfg}.{section}"), t));
                }
            }
        }
    }
    let mut deps = Vec::new();
    for (section, table) in tables {
        for (key, value) in table {
            let package = value.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            deps.push((section.clone(), package.to_string()));
        }
    }
    deps
}

/// A crate's parsed manifest and its `package.name`.
fn manifest(dir: &Path) -> (toml::Table, String) {
    let text = fs::read_to_string(dir.join("Cargo.toml")).expect("read crate Cargo.toml");
    let manifest: toml::Table = text.parse().expect("parse crate Cargo.toml");
    let name = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .expect("crate has package.name")
        .to_string();
    (manifest, name)
}

fn check_dependencies(crate_dirs: &[PathBuf]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for dir in crate_dirs {
        let (manifest, name) = manifest(dir);
        let Some(rule) = rule_for(&name) else {
            violations.push(Violation::UnknownCrate { name });
            continue;
        };
        for (section, dep) in dependencies(&manifest) {
            if is_khata_crate(&dep) && !allows(&name, rule, &dep) {
                violations.push(Violation::ForbiddenDependency {
                    name: name.clone(),
                    section,
                    dep,
                });
            }
        }
    }
    violations
}

/// Whether `needle` occurs in `line` at a word boundary (so `rand::` does not match
/// `Operand::`).
fn mentions(line: &str, needle: &str) -> bool {
    line.match_indices(needle).any(|(at, _)| {
        !line[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn check_nondeterminism(crate_dirs: &[PathBuf]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for dir in crate_dirs {
        let (_, name) = manifest(dir);
        if NONDETERMINISM_ALLOWED.contains(&name.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        files.sort();
        for file in files {
            let text = fs::read_to_string(&file).expect("read source file");
            for (index, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") || line.contains(OPT_OUT) {
                    continue;
                }
                for call in FORBIDDEN_CALLS {
                    if mentions(code, call) {
                        violations.push(Violation::Nondeterminism {
                            file: file.clone(),
                            line: index + 1,
                            call,
                        });
                    }
                }
            }
        }
    }
    violations
}

fn check_workspace(root: &Path) -> Vec<Violation> {
    let dirs = member_dirs(root);
    assert!(
        !dirs.is_empty(),
        "no member crates found under {}",
        root.display()
    );
    let mut violations = check_dependencies(&dirs);
    violations.extend(check_nondeterminism(&dirs));
    violations
}

fn report(violations: &[Violation]) -> String {
    violations.iter().map(|v| format!("  - {v}\n")).collect()
}

#[test]
fn workspace_follows_layering_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let violations = check_workspace(&root);
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        report(&violations)
    );
}

#[test]
fn every_rule_names_known_crates() {
    for (name, rule) in RULES {
        let listed = match rule {
            Allowed::Only(list) | Allowed::AllExcept(list) => list,
        };
        for dep in *listed {
            assert!(
                rule_for(dep).is_some(),
                "{name}'s rule names {dep}, which has no row"
            );
        }
    }
}

/// Checks of the checker on synthetic workspaces.
mod checker {
    use super::*;

    struct Fake {
        dir: tempfile::TempDir,
    }

    impl Fake {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            fs::write(
                dir.path().join("Cargo.toml"),
                "[workspace]\nmembers = [\"crates/*\"]\n",
            )
            .unwrap();
            Fake { dir }
        }

        fn krate(&self, name: &str, manifest_tail: &str, src: &str) -> &Self {
            let dir = self.dir.path().join("crates").join(name);
            fs::create_dir_all(dir.join("src")).unwrap();
            let manifest = format!("[package]\nname = \"{name}\"\n{manifest_tail}");
            fs::write(dir.join("Cargo.toml"), manifest).unwrap();
            fs::write(dir.join("src/lib.rs"), src).unwrap();
            self
        }

        fn check(&self) -> Vec<Violation> {
            check_workspace(self.dir.path())
        }
    }

    #[test]
    fn clean_workspace_passes() {
        let ws = Fake::new();
        ws.krate("khata-types", "", "")
            .krate(
                "khata-env",
                "",
                "fn f() { let _ = std::time::Instant::now(); }",
            )
            .krate(
                "khata-storage",
                "[dependencies]\nkhata-types.workspace = true\n",
                "",
            );
        assert_eq!(ws.check(), vec![]);
    }

    #[test]
    fn front_end_reaching_storage_fails() {
        let ws = Fake::new();
        ws.krate(
            "khata-cql",
            "[dependencies]\nkhata-storage = { path = \"../x\" }\n",
            "",
        );
        let v = ws.check();
        assert!(
            matches!(&v[..], [Violation::ForbiddenDependency { dep, section, .. }]
                if dep == "khata-storage" && section == "dependencies"),
            "{v:?}"
        );
    }

    #[test]
    fn dev_build_target_and_renamed_dependencies_count() {
        let ws = Fake::new();
        ws.krate(
            "khata-storage",
            "[dev-dependencies]\nkhata-replica.workspace = true\n\
             [build-dependencies]\nkhata-cluster.workspace = true\n\
             [target.'cfg(unix)'.dependencies]\nkhata-cql.workspace = true\n\
             [dependencies]\nnet = { package = \"khata-coordinator\", path = \"x\" }\n",
            "",
        );
        let deps: Vec<String> = ws
            .check()
            .into_iter()
            .map(|v| match v {
                Violation::ForbiddenDependency { dep, .. } => dep,
                other => panic!("unexpected {other}"),
            })
            .collect();
        assert_eq!(deps.len(), 4, "{deps:?}");
        for dep in [
            "khata-replica",
            "khata-cluster",
            "khata-cql",
            "khata-coordinator",
        ] {
            assert!(
                deps.contains(&dep.to_string()),
                "{dep} missing from {deps:?}"
            );
        }
    }

    #[test]
    fn nobody_depends_on_bench_or_unknown_crates() {
        let ws = Fake::new();
        ws.krate("khata-server", "[dependencies]\nkhata-bench.workspace = true\nkhata-new.workspace = true\nkhata-cql.workspace = true\n", "");
        let deps: Vec<String> = ws
            .check()
            .into_iter()
            .filter_map(|v| match v {
                Violation::ForbiddenDependency { dep, .. } => Some(dep),
                _ => None,
            })
            .collect();
        assert_eq!(
            deps,
            vec!["khata-bench".to_string(), "khata-new".to_string()]
        );
    }

    #[test]
    fn unknown_crate_fails_until_added() {
        let ws = Fake::new();
        ws.krate("khata-graphql", "", "");
        assert_eq!(
            ws.check(),
            vec![Violation::UnknownCrate {
                name: "khata-graphql".into()
            }]
        );
    }

    #[test]
    fn clock_and_randomness_outside_env_fail() {
        let ws = Fake::new();
        let src = "\
            // Instant::now in a comment is fine\n\
            fn a() { let _ = std::time::SystemTime::now(); }\n\
            fn b() { let _ = Instant::now(); } // layering: allowed (compaction throttle)\n\
            fn c() { let _ = rand::random::<u8>(); }\n\
            fn d() { let _ = Operand::X; }\n";
        ws.krate("khata-storage", "", src)
            .krate("khata-server", "", src);
        let lines: Vec<(usize, &str)> = ws
            .check()
            .into_iter()
            .map(|v| match v {
                Violation::Nondeterminism { line, call, .. } => (line, call),
                other => panic!("unexpected {other}"),
            })
            .collect();
        assert_eq!(lines, vec![(2, "SystemTime::now"), (4, "rand::")]);
    }
}
