//! A test plugin built from text (this machine has no wasm32 Rust target): a core module
//! in WAT, given the `rab:plugin` world's metadata and made a component with
//! wit-component. Tool `echo` returns its arguments; a tool whose name starts with `u`
//! traps, `s` spins forever, `g` eats memory, anything else fails on purpose.
#![allow(clippy::expect_used)]

const WIT: &str = include_str!("../wit/plugin.wit");

/// The module; `SELF_TEST` is 0 (ok) or 1 (an error).
const WAT: &str = r#"
(module
  (import "rab:plugin/host" "log" (func $log (param i32 i32 i32 i32)))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 8192))
  (data (i32.const 100) "test-plugin")
  (data (i32.const 200) "echo")
  (data (i32.const 220) "Echoes its arguments")
  (data (i32.const 300) "{\"type\":\"object\"}")
  (data (i32.const 400) "Echo")
  (data (i32.const 500) "read-only")
  (data (i32.const 600) "failed on purpose")
  (data (i32.const 700) "info")
  (data (i32.const 720) "echoing")
  (data (i32.const 800) "self-test says no")
  ;; name: (ptr, len)
  (data (i32.const 1000) "\64\00\00\00\0b\00\00\00")
  ;; tools: one tool-def at 1100 (four strings)
  (data (i32.const 1008) "\4c\04\00\00\01\00\00\00")
  (data (i32.const 1100) "\c8\00\00\00\04\00\00\00\dc\00\00\00\14\00\00\00\2c\01\00\00\11\00\00\00\90\01\00\00\04\00\00\00")
  ;; commands: none
  (data (i32.const 1016) "\00\00\00\00\00\00\00\00")
  ;; tool-levels: [("echo", "read-only")] at 1200
  (data (i32.const 1024) "\b0\04\00\00\01\00\00\00")
  (data (i32.const 1200) "\c8\00\00\00\04\00\00\00\f4\01\00\00\09\00\00\00")

  (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $p) (local.get $size)))
    ;; Grow when the heap passes the end of memory (it never frees).
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.div_u (local.get $size) (i32.const 65536)) (i32.const 1))))))
    (local.get $p))

  (func (export "name") (result i32) (i32.const 1000))
  (func (export "tools") (result i32) (i32.const 1008))
  (func (export "commands") (result i32) (i32.const 1016))
  (func (export "tool-levels") (result i32) (i32.const 1024))
  (func (export "self-test") (result i32)
    (i32.store8 (i32.const 1040) (i32.const SELF_TEST))
    (i32.store (i32.const 1044) (i32.const 800))
    (i32.store (i32.const 1048) (i32.const 17))
    (i32.const 1040))

  ;; execute-command(name, args): says hello.
  (func (export "execute-command") (param i32 i32 i32 i32) (result i32)
    (i32.store8 (i32.const 1080) (i32.const 0))
    (i32.store (i32.const 1084) (i32.const 100))
    (i32.store (i32.const 1088) (i32.const 11))
    (i32.const 1080))

  ;; execute-tool(name, call-id, args) -> result<string, string>, by the name's first
  ;; letter: e(cho) returns the arguments, u(nreachable) traps, s(pin) never ends,
  ;; g(row) asks for memory forever, anything else is an error.
  (func (export "execute-tool")
    (param $np i32) (param $nl i32) (param $cp i32) (param $cl i32) (param $ap i32) (param $al i32)
    (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $np)))
    (if (i32.eq (local.get $c) (i32.const 101)) ;; e
      (then
        (call $log (i32.const 700) (i32.const 4) (i32.const 720) (i32.const 7))
        (i32.store8 (i32.const 1060) (i32.const 0))
        (i32.store (i32.const 1064) (local.get $ap))
        (i32.store (i32.const 1068) (local.get $al))
        (return (i32.const 1060))))
    (if (i32.eq (local.get $c) (i32.const 117)) (then unreachable)) ;; u
    (if (i32.eq (local.get $c) (i32.const 115)) (then (loop $l (br $l)))) ;; s
    (if (i32.eq (local.get $c) (i32.const 103)) ;; g
      (then (loop $l (drop (memory.grow (i32.const 16))) (br $l))))
    (i32.store8 (i32.const 1060) (i32.const 1))
    (i32.store (i32.const 1064) (i32.const 600))
    (i32.store (i32.const 1068) (i32.const 17))
    (i32.const 1060))
)
"#;

/// The test plugin as a component, its self-test passing or not.
pub fn component(self_test_passes: bool) -> Vec<u8> {
    build(&WAT.replace("SELF_TEST", if self_test_passes { "0" } else { "1" }))
}

/// The test plugin with `functions` more functions of straight-line arithmetic (none
/// called): a component of a given size, for load-time figures.
pub fn large_component(functions: usize) -> Vec<u8> {
    let mut filler = String::new();
    for i in 0..functions {
        filler.push_str(&format!("  (func $f{i} (param i32) (result i32) (local.get 0)"));
        for k in 0..40 {
            filler.push_str(&format!(" (i32.const {}) (i32.add) (i32.const 3) (i32.mul)", i + k));
        }
        filler.push_str(")\n");
    }
    let wat = WAT.replace("SELF_TEST", "0");
    let end = wat.rfind(')').unwrap_or(wat.len());
    build(&format!("{}{filler}{}", &wat[..end], &wat[end..]))
}

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
const FILES_WAT: &str = r#"
(module
  (import "wasi:filesystem/preopens@0.2.0" "get-directories" (func $dirs (param i32)))
  (import "wasi:filesystem/types@0.2.0" "[method]descriptor.open-at"
    (func $open (param i32 i32 i32 i32 i32 i32 i32)))
  (import "wasi:filesystem/types@0.2.0" "[method]descriptor.read"
    (func $read (param i32 i64 i64 i32)))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 8192))
  (data (i32.const 100) "file-reader")
  (data (i32.const 200) "read_file")
  (data (i32.const 220) "Reads a file")
  (data (i32.const 300) "{\"type\":\"object\"}")
  (data (i32.const 400) "Read")
  (data (i32.const 500) "read-only")
  (data (i32.const 600) "no folder granted")
  (data (i32.const 2300) "error-code ")
  (data (i32.const 1000) "\64\00\00\00\0b\00\00\00")
  (data (i32.const 1008) "\4c\04\00\00\01\00\00\00")
  (data (i32.const 1100) "\c8\00\00\00\09\00\00\00\dc\00\00\00\0c\00\00\00\2c\01\00\00\11\00\00\00\90\01\00\00\04\00\00\00")
  (data (i32.const 1016) "\00\00\00\00\00\00\00\00")
  (data (i32.const 1024) "\b0\04\00\00\01\00\00\00")
  (data (i32.const 1200) "\c8\00\00\00\09\00\00\00\f4\01\00\00\09\00\00\00")

  (func (export "cabi_realloc") (param i32 i32 i32) (param $size i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $p) (local.get $size)))
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.div_u (local.get $size) (i32.const 65536)) (i32.const 1))))))
    (local.get $p))
  (func (export "name") (result i32) (i32.const 1000))
  (func (export "tools") (result i32) (i32.const 1008))
  (func (export "commands") (result i32) (i32.const 1016))
  (func (export "tool-levels") (result i32) (i32.const 1024))
  (func (export "self-test") (result i32)
    (i32.store8 (i32.const 1040) (i32.const 0))
    (i32.const 1040))
  ;; execute-command: it has none (Err "no folder granted" would do; any error).
  (func (export "execute-command") (param i32 i32 i32 i32) (result i32)
    (i32.store8 (i32.const 1080) (i32.const 1))
    (i32.store (i32.const 1084) (i32.const 600))
    (i32.store (i32.const 1088) (i32.const 17))
    (i32.const 1080))

  ;; Err("error-code N") for the code at `at`.
  (func $fail (param $at i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $at)))
    (i32.store8 (i32.const 2311) (i32.add (i32.const 48) (i32.div_u (local.get $c) (i32.const 10))))
    (i32.store8 (i32.const 2312) (i32.add (i32.const 48) (i32.rem_u (local.get $c) (i32.const 10))))
    (i32.store8 (i32.const 1060) (i32.const 1))
    (i32.store (i32.const 1064) (i32.const 2300))
    (i32.store (i32.const 1068) (i32.const 13))
    (i32.const 1060))

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
)
"#;

/// The arguments the file-reading plugin reads: `{"path":"…"}`.
pub fn path_args(path: &str) -> String {
    serde_json::json!({ "path": path }).to_string()
}

/// The file-reading test plugin (see `FILES_WAT`) as a component importing
/// `wasi:filesystem`.
pub fn files_component() -> Vec<u8> {
    build_world(FILES_WAT, &[WASI_FS, FILES_WORLD], "file-plugin")
}

fn build(wat: &str) -> Vec<u8> {
    build_world(wat, &[], "rab-plugin")
}

fn build_world(wat: &str, extra: &[&str], world: &str) -> Vec<u8> {
    let mut module = wat::parse_str(wat).expect("the test module parses");
    let mut resolve = wit_parser::Resolve::default();
    let mut pkg = resolve.push_str("plugin.wit", WIT).expect("the WIT parses");
    for (i, text) in extra.iter().enumerate() {
        pkg = resolve.push_str(format!("extra{i}.wit"), text).expect("the test WIT parses");
    }
    let world = resolve.select_world(&[pkg], Some(world)).expect("the world is there");
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .expect("the metadata embeds");
    wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|e| e.validate(true).encode())
        .expect("the component encodes")
}
