//! Running the `slicehub` command in a fresh directory, as an operator would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::workspace_root;

/// `slicehub ARGS` in `dir` (data in `dir/data`), with `env` on top of a clean slate.
pub fn run(bin: &str, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(bin);
    command
        .args(args)
        .current_dir(dir)
        .env("SLICEHUB_DATA_DIR", dir.join("data"))
        .env_remove("SLICEHUB_CONFIG")
        .env_remove("RUST_LOG");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("slicehub runs")
}

/// Standard output and standard error together.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The binary and site `cargo leptos build` made, for browser tests (SLICEHUB_BIN overrides).
pub fn built_portal() -> PathBuf {
    let bin = std::env::var("SLICEHUB_BIN")
        .map(Into::into)
        .unwrap_or_else(|_| workspace_root().join("target/debug/slicehub"));
    let wasm = workspace_root().join("target/site/pkg/slicehub.wasm");
    assert!(
        bin.exists() && wasm.exists(),
        "browser tests need `cargo leptos build` first (scripts/test.sh runs it): {} / {}",
        bin.display(),
        wasm.display()
    );
    bin
}
