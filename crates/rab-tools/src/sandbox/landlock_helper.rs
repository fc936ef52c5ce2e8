//! The Landlock side of the sandbox: the helper that confines itself and `exec`s the
//! program, and the probe that says whether the kernel enforces Landlock at all.

use std::convert::Infallible;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

/// The newest ABI whose file rights we ask for. Best effort: an older kernel enforces
/// what it knows.
const FS_ABI: ABI = ABI::V5;
/// TCP rules came with ABI 4.
const NET_ABI: ABI = ABI::V4;
/// Scoping of abstract Unix sockets and signals came with ABI 6.
const SCOPE_ABI: ABI = ABI::V6;

/// Whether the running kernel enforces Landlock (creates a ruleset without using it).
pub fn is_landlock_available() -> bool {
    enforces_fs(AccessFs::from_all(ABI::V1))
}

/// Whether the kernel enforces rules over `access` (a ruleset that must handle it is
/// created and dropped).
fn enforces_fs(access: landlock::BitFlags<AccessFs>) -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(access)
        .and_then(|r| r.create())
        .is_ok()
}

/// What this kernel's Landlock enforces of what the sandbox asks for.
pub fn landlock_support() -> super::LandlockSupport {
    let net = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessNet::from_all(NET_ABI))
        .and_then(|r| r.create())
        .is_ok();
    let scopes = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .scope(Scope::from_all(SCOPE_ABI))
        .and_then(|r| r.create())
        .is_ok();
    let mut support = super::LandlockSupport {
        files: is_landlock_available(),
        truncate: enforces_fs(AccessFs::Truncate.into()),
        network: net,
        ioctl: enforces_fs(AccessFs::IoctlDev.into()),
        scopes,
        abi: 0,
    };
    support.abi = landlock_abi(&support);
    support
}

/// Landlock alone (where namespaces are refused, or were not asked for): confines this
/// process, drops every capability and `exec`s the program; returns only on failure.
/// If the kernel does not enforce Landlock the program runs unconfined (rab said so at
/// start-up).
pub(super) fn exec_confined(spec: &super::spec::Spec) -> Result<Infallible, String> {
    let status = confine(&spec.writable, spec.network, true)
        .map_err(|e| format!("could not set up Landlock: {e}"))?;
    if status == RulesetStatus::NotEnforced {
        tracing::debug!("Landlock not enforced by this kernel");
    }
    super::hardening::drop_capabilities().map_err(|e| format!("dropping capabilities: {e}"))?;
    let err = std::process::Command::new(&spec.program).args(&spec.args).exec();
    Err(format!("could not run {}: {err}", spec.program.to_string_lossy()))
}

/// Confines this process (and what it starts): reading everywhere, writing under
/// `writable` and to devices, TCP only when `network`; with `scoped`, no abstract Unix
/// socket or signal reaches a process outside (ABI 6, best effort).
pub(super) fn confine(
    writable: &[PathBuf],
    network: bool,
    scoped: bool,
) -> Result<RulesetStatus, landlock::RulesetError> {
    let all = AccessFs::from_all(FS_ABI);
    let read = AccessFs::from_read(FS_ABI);
    let mut ruleset = Ruleset::default().handle_access(all)?;
    if !network {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?;
    }
    if scoped {
        ruleset = ruleset.scope(Scope::from_all(SCOPE_ABI))?;
    }
    let mut rules = Vec::new();
    let mut allow = |path: &std::path::Path, access| {
        // A directory that vanished since start-up simply gets no rule.
        if let Ok(fd) = PathFd::new(path) {
            rules.push(Ok::<_, landlock::RulesetError>(PathBeneath::new(fd, access)));
        }
    };
    allow(std::path::Path::new("/"), read);
    // Terminals and /dev/null are written by nearly every program.
    allow(std::path::Path::new("/dev"), read | AccessFs::WriteFile | AccessFs::IoctlDev);
    for dir in writable {
        allow(dir, all);
    }
    let created = ruleset.create()?.add_rules(rules)?;
    Ok(created.restrict_self()?.ruleset)
}

/// The newest Landlock ABI whose features this kernel enforces, 1 to 6 (0: none);
/// later ABIs add nothing the sandbox uses.
fn landlock_abi(support: &super::LandlockSupport) -> u8 {
    let refer = enforces_fs(AccessFs::Refer.into());
    let ladder =
        [support.files, refer, support.truncate, support.network, support.ioctl, support.scopes];
    u8::try_from(ladder.iter().take_while(|has| **has).count()).unwrap_or(0)
}
