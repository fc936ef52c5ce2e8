//! Helpers for tests of rab's crates that need an MCP server: the in-repo test server's
//! binary, and the reference servers CI installs with npm. Not part of rab's API.

use std::path::{Path, PathBuf};
use std::process::Command;

const TEST_SERVER: &str = "rab-mcp-test-server";

/// `target/<profile>/` of the running test executable (`target/<profile>/deps/x`).
fn profile_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let dir = if dir.file_name().is_some_and(|n| n == "deps") { dir.parent()? } else { dir };
    Some(dir.to_path_buf())
}

/// The path of the `rab-mcp-test-server` binary next to the running test executable,
/// building it first (once, under a file lock) with `cargo build -p rab-mcp-test-server`
/// in the same target directory and profile when it is missing.
///
/// # Panics
/// When the binary cannot be found or built: this is for tests only.
pub fn test_server_path() -> PathBuf {
    #[allow(clippy::expect_used)]
    let dir = profile_dir().expect("the test executable's directory");
    let path = dir.join(TEST_SERVER);
    if path.is_file() {
        return path;
    }
    #[allow(clippy::expect_used)]
    build_test_server(&dir).expect("building rab-mcp-test-server");
    path
}

fn build_test_server(profile_dir: &Path) -> Result<(), String> {
    let lock_path = profile_dir.join(".rab-mcp-test-server.lock");
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock().map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    if profile_dir.join(TEST_SERVER).is_file() {
        return Ok(());
    }
    let target_dir = profile_dir.parent().ok_or("the profile directory has no parent")?;
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "-p", TEST_SERVER, "--profile", profile, "--target-dir"])
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!("cargo build -p {TEST_SERVER} failed: {status}")),
    }
}

/// The installed entry point of a reference server from
/// `@modelcontextprotocol/server-<name>` (`everything`, `filesystem`), run with `node`.
/// CI installs them into `target/mcp-reference` when npm is available; `None` when they
/// are not installed (tests then skip).
pub fn reference_server(name: &str) -> Option<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.parent()?;
    let mut roots = vec![workspace.join("target")];
    if let Some(target) = profile_dir().and_then(|d| d.parent().map(Path::to_path_buf)) {
        roots.push(target);
    }
    roots.into_iter().find_map(|root| {
        let package = root
            .join("mcp-reference/node_modules/@modelcontextprotocol")
            .join(format!("server-{name}"));
        let manifest = std::fs::read_to_string(package.join("package.json")).ok()?;
        let manifest: serde_json::Value = serde_json::from_str(&manifest).ok()?;
        let entry = match &manifest["bin"] {
            serde_json::Value::String(bin) => bin.clone(),
            serde_json::Value::Object(bins) => bins.values().next()?.as_str()?.to_owned(),
            _ => manifest["main"].as_str()?.to_owned(),
        };
        let path = package.join(entry);
        path.is_file().then_some(path)
    })
}
