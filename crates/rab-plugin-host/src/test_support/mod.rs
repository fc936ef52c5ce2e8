//! A test plugin built from text (this machine has no wasm32 Rust target): a core module
//! in WAT, given the `rab:plugin` world's metadata and made a component with
//! wit-component. Tool `echo` returns its arguments; a tool whose name starts with `u`
//! traps, `s` spins forever, `g` eats memory, anything else fails on purpose.
#![allow(clippy::expect_used)]

const WIT: &str = include_str!("../../wit/plugin.wit");

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
  ;; commands: one, `greet`, at 1300
  (data (i32.const 850) "greet")
  (data (i32.const 860) "Greets from the plugin")
  (data (i32.const 1016) "\14\05\00\00\01\00\00\00")
  (data (i32.const 1300) "\52\03\00\00\05\00\00\00\5c\03\00\00\16\00\00\00")
  ;; an empty list
  (data (i32.const 1032) "\00\00\00\00\00\00\00\00")
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

  ;; execute-command(name, args): answers with the plugin's name.
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

/// The test plugin with its tool named `spin` (read-only), which never returns.
pub fn spinner_component() -> Vec<u8> {
    build(
        &WAT.replace("SELF_TEST", "0")
            .replace(r#"(data (i32.const 200) "echo")"#, r#"(data (i32.const 200) "spin")"#),
    )
}

/// The test plugin with its tool named `name` (1 to 20 characters; it fails on purpose
/// unless the name starts with `e`).
pub fn named_tool_component(name: &str) -> Vec<u8> {
    assert!((1..=20).contains(&name.len()), "1 to 20 characters");
    let len = format!("\\c8\\00\\00\\00\\{:02x}\\00\\00\\00", name.len());
    build(
        &WAT.replace("SELF_TEST", "0")
            .replace(
                r#"(data (i32.const 200) "echo")"#,
                &format!(r#"(data (i32.const 200) "{name}")"#),
            )
            .replace(r#"\c8\00\00\00\04\00\00\00"#, &len),
    )
}

/// The test plugin declaring no level for its tool (`tool-levels` is empty), so `echo`
/// counts as running programs.
pub fn undeclared_component() -> Vec<u8> {
    let wat = WAT.replace("SELF_TEST", "0").replace(
        r#"(func (export "tool-levels") (result i32) (i32.const 1024))"#,
        r#"(func (export "tool-levels") (result i32) (i32.const 1032))"#,
    );
    build(&wat)
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

mod files;
mod http;

/// What a one-tool test plugin says about itself (see [`module`]).
pub(crate) struct Meta<'a> {
    pub name: &'a str,
    pub tool: &'a str,
    pub description: &'a str,
    pub level: &'a str,
    /// Its `execute-command` error, also free for its tool to return (at 600).
    pub message: &'a str,
}

/// A one-tool plugin module: `imports`, the exports every such test plugin has (its
/// metadata laid out from `meta`, a passing self-test, an `execute-command` that fails
/// with `meta.message`, a bump allocator), the helper `$fail` (at: a byte error code
/// → `Err("error-code NN")`), and `body`, which defines `execute-tool`.
pub(crate) fn module(imports: &str, meta: &Meta<'_>, body: &str) -> String {
    let le = |n: usize| -> String {
        u32::try_from(n).unwrap_or(0).to_le_bytes().iter().map(|b| format!("\\{b:02x}")).collect()
    };
    let text =
        |at: usize, s: &str| format!("  (data (i32.const {at}) \"{}\")\n", s.replace('"', "\\\""));
    let params = r#"{"type":"object"}"#;
    let mut data = String::new();
    for (at, s) in [
        (100, meta.name),
        (200, meta.tool),
        (220, meta.description),
        (300, params),
        (400, meta.tool),
        (500, meta.level),
        (600, meta.message),
        (2300, "error-code "),
    ] {
        data.push_str(&text(at, s));
    }
    let record = |at: usize, fields: &[(usize, usize)]| {
        let bytes: String = fields.iter().map(|(p, l)| le(*p) + &le(*l)).collect();
        format!("  (data (i32.const {at}) \"{bytes}\")\n")
    };
    data.push_str(&record(1000, &[(100, meta.name.len())]));
    data.push_str(&record(1008, &[(1100, 1)]));
    data.push_str(&record(
        1100,
        &[
            (200, meta.tool.len()),
            (220, meta.description.len()),
            (300, params.len()),
            (400, meta.tool.len()),
        ],
    ));
    data.push_str(&record(1016, &[(0, 0)]));
    data.push_str(&record(1024, &[(1200, 1)]));
    data.push_str(&record(1200, &[(200, meta.tool.len()), (500, meta.level.len())]));
    let message = meta.message.len();
    format!(
        r#"(module
{imports}
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 8192))
{data}
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
  (func (export "execute-command") (param i32 i32 i32 i32) (result i32)
    (i32.store8 (i32.const 1080) (i32.const 1))
    (i32.store (i32.const 1084) (i32.const 600))
    (i32.store (i32.const 1088) (i32.const {message}))
    (i32.const 1080))
  ;; Err("error-code NN") for the byte code at `at`.
  (func $fail (param $at i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $at)))
    (i32.store8 (i32.const 2311) (i32.add (i32.const 48) (i32.div_u (local.get $c) (i32.const 10))))
    (i32.store8 (i32.const 2312) (i32.add (i32.const 48) (i32.rem_u (local.get $c) (i32.const 10))))
    (i32.store8 (i32.const 1060) (i32.const 1))
    (i32.store (i32.const 1064) (i32.const 2300))
    (i32.store (i32.const 1068) (i32.const 13))
    (i32.const 1060))
{body}
)"#
    )
}

pub use files::{files_component, path_args};
pub use http::{host_args, http_component};

fn build(wat: &str) -> Vec<u8> {
    build_world(wat, &[], "rab-plugin")
}

pub(crate) fn build_world(wat: &str, extra: &[&str], world: &str) -> Vec<u8> {
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
