//! `khata`: one node of the khata database (`khata server`, the default) or its admin client
//! (`khata admin`). Everything is in `khata-server`; this package exists so that
//! `cargo run --release` at the root of the workspace starts a node.

fn main() -> std::process::ExitCode {
    khata_server::run::main()
}
