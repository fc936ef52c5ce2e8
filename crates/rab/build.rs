//! Link options for the `rab` binary.
//!
//! On Linux with glibc 2.36 or newer, relative relocations are packed (DT_RELR). rab
//! is a position-independent executable with about 55,000 relative relocations; in the
//! classic format the dynamic loader reads 1.3 MB of relocation records at every start,
//! and all of it counts towards resident memory. Packed, the table is a few kilobytes.
//!
//! The packed format needs a loader that understands it (glibc 2.36, 2022), and the linker
//! marks the binary so an older loader refuses it with a clear message instead of
//! crashing. So the option is used only when the glibc being linked against is new enough,
//! and `RAB_PORTABLE_LINK=1` turns it off for binaries meant for older systems.
//!
//! In a release build for x86-64 Linux (linked by rust-lld, Rust's default there), the
//! functions a typical run executes are placed side by side, in the order of
//! `link-order.txt` (written by `bench/link_order.py`): the kernel maps the pages around
//! each page a run touches, so code spread over the whole `.text` keeps most of it
//! resident. `RAB_LINK_ORDER=0` turns it off.
//!
//! Release binaries are stripped here, at link time (see [`strip`]).

use std::process::Command;

fn main() {
    println!("cargo::rerun-if-env-changed=RAB_PORTABLE_LINK");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let native = std::env::var("TARGET").ok() == std::env::var("HOST").ok();
    let portable = std::env::var_os("RAB_PORTABLE_LINK").is_some_and(|v| v != "0");
    if os == "linux" && env == "gnu" && native && !portable && glibc_at_least(2, 36) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    link_order(native);
    strip(&os);
}

/// Release binaries without symbols (`RAB_LINK_STRIP=0` keeps them, for
/// `bench/link_order.py`): done by the linker rather than the profile's `strip`, which
/// would change the symbols' hashes and so the names in `link-order.txt`.
fn strip(os: &str) {
    println!("cargo::rerun-if-env-changed=RAB_LINK_STRIP");
    let keep = std::env::var_os("RAB_LINK_STRIP").is_some_and(|v| v == "0");
    if keep || !std::env::var("PROFILE").is_ok_and(|p| p == "release") {
        return;
    }
    match os {
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" => {
            println!("cargo::rustc-link-arg-bins=-Wl,--strip-all");
        }
        "macos" | "ios" => println!("cargo::rustc-link-arg-bins=-Wl,-S,-x"),
        _ => {}
    }
}

/// The symbol ordering of a release build, where the linker takes one.
fn link_order(native: bool) {
    println!("cargo::rerun-if-env-changed=RAB_LINK_ORDER");
    println!("cargo::rerun-if-changed=link-order.txt");
    let is_off = std::env::var_os("RAB_LINK_ORDER").is_some_and(|v| v == "0");
    let is_release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let is_lld_default = std::env::var("TARGET").is_ok_and(|t| t == "x86_64-unknown-linux-gnu");
    // A linker chosen in RUSTFLAGS may not take the option.
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let is_linker_chosen = flags.contains("fuse-ld") || flags.contains("linker");
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else { return };
    let file = std::path::Path::new(&dir).join("link-order.txt");
    if is_off || !is_release || !is_lld_default || !native || is_linker_chosen || !file.exists() {
        return;
    }
    println!("cargo::rustc-link-arg-bin=rab=-Wl,--symbol-ordering-file={}", file.display());
    println!("cargo::rustc-link-arg-bin=rab=-Wl,--no-warn-symbol-ordering");
}

/// Whether the build machine's glibc (which a native build links against) is at least
/// `major.minor`, as `getconf GNU_LIBC_VERSION` reports it ("glibc 2.36").
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}
