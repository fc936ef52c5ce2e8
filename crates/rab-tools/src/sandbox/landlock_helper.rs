//! The Landlock side of the sandbox: the helper that confines itself and `exec`s the
//! program, and the probe that says whether the kernel enforces Landlock at all.

use std::convert::Infallible;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus,
};

/// The newest ABI whose file rights we ask for. Best effort: an older kernel enforces
/// what it knows.
const FS_ABI: ABI = ABI::V5;
/// TCP rules came with ABI 4.
const NET_ABI: ABI = ABI::V4;

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
    super::LandlockSupport {
        files: is_landlock_available(),
        truncate: enforces_fs(AccessFs::Truncate.into()),
        network: net,
        ioctl: enforces_fs(AccessFs::IoctlDev.into()),
    }
}

struct HelperArgs {
    writable: Vec<PathBuf>,
    is_network_allowed: bool,
    program: OsString,
    args: Vec<OsString>,
}

fn parse(args: Vec<OsString>) -> Result<HelperArgs, String> {
    let mut it = args.into_iter();
    let mut writable = Vec::new();
    let mut is_network_allowed = false;
    loop {
        let Some(arg) = it.next() else { return Err("missing `-- PROGRAM`".into()) };
        match arg.to_str() {
            Some("--write") => {
                let dir = it.next().ok_or("--write needs a directory")?;
                writable.push(PathBuf::from(dir));
            }
            Some("--net") => is_network_allowed = true,
            Some("--") => break,
            _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
        }
    }
    let program = it.next().ok_or("missing the program after --")?;
    Ok(HelperArgs { writable, is_network_allowed, program, args: it.collect() })
}

/// The helper: `args` are what follows `__sandbox` (`--write DIR`…, `--net`, `--`,
/// program, arguments). Confines this process and `exec`s the program; returns only on
/// failure. If the kernel does not enforce Landlock the program runs unconfined (rab
/// said so at start-up).
pub fn run_helper(args: Vec<OsString>) -> Result<Infallible, String> {
    let parsed = parse(args)?;
    let status = confine(&parsed).map_err(|e| format!("could not set up Landlock: {e}"))?;
    if status == RulesetStatus::NotEnforced {
        tracing::debug!("Landlock not enforced by this kernel");
    }
    let err = std::process::Command::new(&parsed.program).args(&parsed.args).exec();
    Err(format!("could not run {}: {err}", parsed.program.to_string_lossy()))
}

fn confine(args: &HelperArgs) -> Result<RulesetStatus, landlock::RulesetError> {
    let all = AccessFs::from_all(FS_ABI);
    let read = AccessFs::from_read(FS_ABI);
    let mut ruleset = Ruleset::default().handle_access(all)?;
    if !args.is_network_allowed {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?;
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
    for dir in &args.writable {
        allow(dir, all);
    }
    let created = ruleset.create()?.add_rules(rules)?;
    Ok(created.restrict_self()?.ruleset)
}
