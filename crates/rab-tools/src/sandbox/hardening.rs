//! Process hardening, as Codex's `process-hardening` does it: rab itself is made not
//! dumpable at start (so a same-user process cannot read `/proc/<rab>/environ` or
//! `/proc/<rab>/mem`, nor ptrace it, to get the keys), and writes no core dumps (which
//! would hold them). The sandbox helper drops every capability before the program
//! runs, so a command started by root cannot read a non-dumpable rab either.

use std::io;

/// Makes this process not dumpable and turns off its core dumps. Call first thing in
/// `main`; what fails is returned so the caller can say so (rab runs on).
#[cfg(unix)]
pub fn harden_process() -> io::Result<()> {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let no_core = setrlimit(Resource::Core, Rlimit { current: Some(0), maximum: Some(0) });
    #[cfg(target_os = "linux")]
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
    no_core.map_err(io::Error::from)
}

/// Nothing to harden off Unix.
#[cfg(not(unix))]
pub fn harden_process() -> io::Result<()> {
    Ok(())
}

/// Overwrites the value of `option` (`--api-key KEY` or `--api-key=KEY`) in this
/// process's command line, the argument strings `/proc/<pid>/cmdline` and `ps` show
/// every local user: read first (the command line is parsed), then hidden, with `*` of
/// the same length. Call before any thread starts. `true` when the command line no
/// longer holds a value of `option`.
#[cfg(target_os = "linux")]
pub fn hide_option_value(option: &str) -> bool {
    let Some((start, end)) = argument_block() else { return false };
    if end <= start || end - start > 1 << 20 {
        return false;
    }
    // SAFETY: [start, end) is this process's argument block as the kernel reports it:
    // mapped and writable (the initial stack), and no Rust value refers to it (std
    // keeps raw pointers into it and copies from them); no other thread runs yet.
    #[allow(unsafe_code)]
    let block = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    mask_option_value(block, option.as_bytes());
    std::fs::read("/proc/self/cmdline").is_ok_and(|c| !holds_option_value(&c, option.as_bytes()))
}

/// Off Linux the command line is not rewritten.
#[cfg(not(target_os = "linux"))]
pub fn hide_option_value(_option: &str) -> bool {
    false
}

/// Where this process's argument strings are: fields 48 and 49 of `/proc/self/stat`
/// (`arg_start`, `arg_end`), counted after the command name, which is in parentheses
/// and may hold spaces and parentheses itself.
#[cfg(target_os = "linux")]
fn argument_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // `rest` starts at field 3 (the state).
    let start = fields.get(48 - 3)?.parse().ok()?;
    let end = fields.get(49 - 3)?.parse().ok()?;
    Some((start, end))
}

/// In NUL-separated arguments, the argument after `option` and what follows `option=`
/// become `*`s.
fn mask_option_value(block: &mut [u8], option: &[u8]) {
    let mut after_option = false;
    for arg in block.split_mut(|&b| b == 0) {
        if after_option {
            arg.fill(b'*');
            after_option = false;
        } else if arg == option {
            after_option = true;
        } else if arg.len() > option.len() && arg.starts_with(option) && arg[option.len()] == b'=' {
            arg[option.len() + 1..].fill(b'*');
        }
    }
}

/// Whether NUL-separated arguments still hold a value of `option` that is not masked.
fn holds_option_value(block: &[u8], option: &[u8]) -> bool {
    let masked = |v: &[u8]| v.iter().all(|&b| b == b'*');
    let mut after_option = false;
    for arg in block.split(|&b| b == 0) {
        if after_option && !masked(arg) {
            return true;
        }
        after_option = arg == option;
        if arg.len() > option.len()
            && arg.starts_with(option)
            && arg[option.len()] == b'='
            && !masked(&arg[option.len() + 1..])
        {
            return true;
        }
    }
    false
}

/// Whether this process is dumpable (for `rab doctor` and the tests).
#[cfg(target_os = "linux")]
pub fn is_dumpable() -> bool {
    !matches!(
        rustix::process::dumpable_behavior(),
        Ok(rustix::process::DumpableBehavior::NotDumpable)
    )
}

/// Off Linux, say dumpable: nothing here changes it.
#[cfg(not(target_os = "linux"))]
pub fn is_dumpable() -> bool {
    true
}

/// The capabilities stage two of the helper needs across its `exec`: mounting and
/// new namespaces, bringing up loopback, and dropping the bounding set afterwards.
#[cfg(target_os = "linux")]
pub(super) fn setup_capabilities() -> rustix::thread::CapabilitySet {
    use rustix::thread::CapabilitySet;
    CapabilitySet::SYS_ADMIN | CapabilitySet::NET_ADMIN | CapabilitySet::SETPCAP
}

/// Keeps [`setup_capabilities`] across the next `exec` (in a user namespace this
/// process has them all; a non-root user would lose them at `exec` otherwise).
#[cfg(target_os = "linux")]
pub(super) fn keep_setup_capabilities() -> io::Result<()> {
    use rustix::thread::{CapabilitySet, capabilities, configure_capability_in_ambient_set};
    let mut sets = capabilities(None)?;
    sets.inheritable |= setup_capabilities();
    rustix::thread::set_capabilities(None, sets)?;
    for cap in [CapabilitySet::SYS_ADMIN, CapabilitySet::NET_ADMIN, CapabilitySet::SETPCAP] {
        configure_capability_in_ambient_set(cap, true)?;
    }
    Ok(())
}

/// Drops every capability for good: the ambient set, the bounding set (so no `exec`
/// can give any back, not even to root) and the current sets; and sets no-new-privs
/// (no set-user-ID program or file capability gives any back either). A process
/// without `CAP_SETPCAP` (an ordinary user's) has none to drop from the bounding set
/// that an `exec` could use.
#[cfg(target_os = "linux")]
pub(super) fn drop_capabilities() -> io::Result<()> {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    rustix::thread::set_no_new_privs(true)?;
    rustix::thread::clear_ambient_capability_set()?;
    let can_drop = rustix::thread::capabilities(None)
        .is_ok_and(|sets| sets.effective.contains(CapabilitySet::SETPCAP));
    for bit in (0..64u32).filter(|_| can_drop) {
        let Some(cap) = CapabilitySet::from_bits(1u64 << bit) else { continue };
        match rustix::thread::remove_capability_from_bounding_set(cap) {
            // Past the kernel's last capability.
            Ok(()) | Err(rustix::io::Errno::INVAL) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let none = CapabilitySet::empty();
    rustix::thread::set_capabilities(
        None,
        CapabilitySets { effective: none, permitted: none, inheritable: none },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_options_value_is_masked_in_both_spellings_and_nothing_else() {
        let mut block = b"rab\0--api-key\0sk-123\0-p\0k\0--api-key=sk-456\0--api-keyx=1\0".to_vec();
        assert!(holds_option_value(&block, b"--api-key"));
        mask_option_value(&mut block, b"--api-key");
        assert_eq!(block, b"rab\0--api-key\0******\0-p\0k\0--api-key=******\0--api-keyx=1\0");
        assert!(!holds_option_value(&block, b"--api-key"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_argument_block_is_found() {
        let (start, end) = argument_block().expect("arg_start and arg_end");
        let cmdline = std::fs::read("/proc/self/cmdline").unwrap();
        assert_eq!(end - start, cmdline.len());
    }
}
