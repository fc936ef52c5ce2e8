//! What a plugin may reach: nothing without a grant, only the granted folders with one
//! (WASI preopens), never a path outside them — by `..`, an absolute path or a link.

use std::path::Path;

use crate::config::{DirGrant, Grants, Settings};
use crate::test_support::{files_component, host_args, http_component, path_args};
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

/// A server on loopback answering `count` requests: the first with 200, the rest with a
/// redirect to an address that would answer too.
fn local_server(count: usize) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for (i, stream) in listener.incoming().take(count).enumerate() {
            let mut stream = stream.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
            }
            let reply: &[u8] = if i == 0 {
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
            } else {
                b"HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:9/\r\ncontent-length: 0\r\n\r\n"
            };
            let _ = stream.write_all(reply);
        }
    });
    addr.to_string()
}

fn http_plugin(network: bool, private_network: bool) -> Plugin {
    let grants = Grants { network, private_network, ..Grants::default() };
    let settings = Settings { grants, ..Settings::default() };
    Host::shared().unwrap().load_bytes(Path::new("http.wasm"), &http_component(), settings).unwrap()
}

#[test]
fn http_needs_a_grant_and_reaches_private_addresses_only_when_allowed() {
    let server = local_server(2);
    let port = server.rsplit(':').next().unwrap().to_owned();
    // No grant: denied before anything leaves (15: HTTP-request-denied).
    let none = http_plugin(false, false);
    assert_eq!(none.execute_tool("get", "c", &host_args(&server)).unwrap_err(), "error-code 15");
    // The network granted: public addresses only (4: destination-IP-prohibited), by
    // address or by a name that resolves to one.
    let public = http_plugin(true, false);
    for host in [server.clone(), format!("localhost:{port}"), format!("[::1]:{port}")] {
        let err = public.execute_tool("get", "c", &host_args(&host)).unwrap_err();
        assert_eq!(err, "error-code 04", "{host}");
    }
    // With private-network too, the local server answers; a redirect is not followed
    // for the plugin (it sees the 302 and decides).
    let private = http_plugin(true, true);
    assert_eq!(private.execute_tool("get", "c", &host_args(&server)).unwrap(), "status 200");
    assert_eq!(private.execute_tool("get", "c", &host_args(&server)).unwrap(), "status 302");
    // Never a raw socket, whatever the grants (1: access-denied).
    for plugin in [&none, &public, &private] {
        assert_eq!(plugin.execute_tool("tcp", "c", "{}").unwrap_err(), "error-code 01");
    }
}
