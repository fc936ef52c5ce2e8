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
