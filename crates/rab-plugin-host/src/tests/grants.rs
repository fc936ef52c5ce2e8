//! What a plugin may reach: nothing without a grant, only the granted folders with one
//! (WASI preopens), never a path outside them — by `..`, an absolute path or a link.

use std::path::Path;

use crate::config::{DirGrant, Grants, Settings};
use crate::test_support::{files_component, path_args};
use crate::{Host, Plugin};

fn load(grants: Grants) -> Plugin {
    let settings = Settings { grants, ..Settings::default() };
    Host::shared()
        .unwrap()
        .load_bytes(Path::new("files.wasm"), &files_component(), settings)
        .unwrap()
}

fn grant(dir: &Path, write: bool) -> Grants {
    let host = dir.canonicalize().unwrap();
    let guest = vec![host.to_string_lossy().into_owned()];
    Grants { dirs: vec![DirGrant { host, guest, write }], ..Grants::default() }
}

#[test]
fn without_a_grant_a_plugin_sees_no_files() {
    let plugin = load(Grants::default());
    assert_eq!(
        plugin.execute_tool("read_file", "c", &path_args("/etc/hostname")).unwrap_err(),
        "no folder granted"
    );
}

#[test]
fn a_granted_folder_can_be_read_and_nothing_outside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.txt"), "inside").unwrap();
    std::fs::write(tmp.path().join("secret.txt"), "outside").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(tmp.path().join("secret.txt"), docs.join("link.txt")).unwrap();
    let plugin = load(grant(&docs, false));
    assert_eq!(plugin.execute_tool("read_file", "c", &path_args("a.txt")).unwrap(), "inside");
    let secret = tmp.path().join("secret.txt");
    let tries = [
        "../secret.txt".to_owned(),
        "./../secret.txt".to_owned(),
        secret.to_string_lossy().into_owned(),
        "/etc/passwd".to_owned(),
        "link.txt".to_owned(),
    ];
    for path in tries {
        let err = plugin.execute_tool("read_file", "c", &path_args(&path)).unwrap_err();
        assert!(err.starts_with("error-code "), "{path}: {err}");
    }
    // A refused path is the plugin's own error, not a trap: it goes on.
    assert!(!plugin.is_disabled());
    assert_eq!(plugin.execute_tool("read_file", "c", &path_args("a.txt")).unwrap(), "inside");
}
