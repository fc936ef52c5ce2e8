//! The file-reading test plugin: `wasi:filesystem` through the folders it was granted.
#![allow(clippy::expect_used)]

use super::{Meta, build_world, module};

/// The part of `wasi:filesystem` the file-reading test plugin imports (a subset of the
/// interface; the host provides all of it).
const WASI_FS: &str = r#"
package wasi:filesystem@0.2.0;

  interface types {
    type filesize = u64;
    flags descriptor-flags { read, write, file-integrity-sync, data-integrity-sync, requested-write-sync, mutate-directory }
    flags path-flags { symlink-follow }
    flags open-flags { create, directory, exclusive, truncate }
    enum error-code {
      access, would-block, already, bad-descriptor, busy, deadlock, quota, exist,
      file-too-large, illegal-byte-sequence, in-progress, interrupted, invalid, io,
      is-directory, loop, too-many-links, message-size, name-too-long, no-device, no-entry,
      no-lock, insufficient-memory, insufficient-space, not-directory, not-empty,
      not-recoverable, unsupported, no-tty, no-such-device, overflow, not-permitted, pipe,
      read-only, invalid-seek, text-file-busy, cross-device,
    }
    resource descriptor {
      read: func(length: filesize, offset: filesize) -> result<tuple<list<u8>, bool>, error-code>;
      open-at: func(path-flags: path-flags, path: string, open-flags: open-flags, %flags: descriptor-flags) -> result<descriptor, error-code>;
    }
  }
  interface preopens {
    use types.{descriptor};
    get-directories: func() -> list<tuple<descriptor, string>>;
  }
"#;

/// The file-reading test plugin's world: rab's, and the part of `wasi:filesystem` above.
const FILES_WORLD: &str = r#"
package rab:plugin-test;

world file-plugin {
  include rab:plugin/rab-plugin;
  import wasi:filesystem/preopens@0.2.0;
  import wasi:filesystem/types@0.2.0;
}
"#;

/// A plugin (`file-reader`) with one tool, `read_file`, whose arguments are exactly
/// `{"path":"…"}` (see [`path_args`]; no JSON parsing in WAT): it opens the path under
/// the first folder it was granted (WASI preopens) and returns the first 4 KiB, or
/// `error-code N` (the `wasi:filesystem` error's number, e.g. 31 for `not-permitted`),
/// or `no folder granted`.
const FILES_BODY: &str = r#"
  (func (export "execute-tool")
    (param $np i32) (param $nl i32) (param $cp i32) (param $cl i32) (param $ap i32) (param $al i32)
    (result i32)
    (call $dirs (i32.const 2000))
    (if (i32.eqz (i32.load (i32.const 2004)))
      (then
        (i32.store8 (i32.const 1060) (i32.const 1))
        (i32.store (i32.const 1064) (i32.const 600))
        (i32.store (i32.const 1068) (i32.const 17))
        (return (i32.const 1060))))
    ;; open-at(first folder, symlink-follow, path, no open flags, read); the path is
    ;; the arguments `{"path":"…"}` without their first 9 and last 2 bytes.
    (call $open (i32.load (i32.load (i32.const 2000))) (i32.const 1)
      (i32.add (local.get $ap) (i32.const 9)) (i32.sub (local.get $al) (i32.const 11))
      (i32.const 0) (i32.const 1) (i32.const 2100))
    (if (i32.load8_u (i32.const 2100)) (then (return (call $fail (i32.const 2104)))))
    (call $read (i32.load (i32.const 2104)) (i64.const 4096) (i64.const 0) (i32.const 2200))
    (if (i32.load8_u (i32.const 2200)) (then (return (call $fail (i32.const 2204)))))
    (i32.store8 (i32.const 1060) (i32.const 0))
    (i32.store (i32.const 1064) (i32.load (i32.const 2204)))
    (i32.store (i32.const 1068) (i32.load (i32.const 2208)))
    (i32.const 1060))
"#;

const FILES_IMPORTS: &str = r#"
  (import "wasi:filesystem/preopens@0.2.0" "get-directories" (func $dirs (param i32)))
  (import "wasi:filesystem/types@0.2.0" "[method]descriptor.open-at"
    (func $open (param i32 i32 i32 i32 i32 i32 i32)))
  (import "wasi:filesystem/types@0.2.0" "[method]descriptor.read"
    (func $read (param i32 i64 i64 i32)))
"#;

/// The arguments the file-reading plugin reads: `{"path":"…"}`.
pub fn path_args(path: &str) -> String {
    serde_json::json!({ "path": path }).to_string()
}

/// The file-reading test plugin (see `FILES_BODY`) as a component importing
/// `wasi:filesystem`.
pub fn files_component() -> Vec<u8> {
    let meta = Meta {
        name: "file-reader",
        tool: "read_file",
        description: "Reads a file",
        level: "read-only",
        message: "no folder granted",
    };
    build_world(&module(FILES_IMPORTS, &meta, FILES_BODY), &[WASI_FS, FILES_WORLD], "file-plugin")
}
