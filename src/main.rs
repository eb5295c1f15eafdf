//! `khata`: one node of the khata database (`khata server`, the default) or its admin client
//! (`khata admin`). Everything is in `khata-server`; this package exists so that
//! `cargo run --release` at the root of the workspace starts a node.

/// mimalloc: a request allocates and frees blocks of a few KiB (a task's future), which
/// glibc's malloc serves from its bins rather than its per-thread cache.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    khata_server::run::main()
}
