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
