//! What this machine's kernel lets the sandbox enforce: Landlock's features, and
//! whether unprivileged user namespaces work (sandbox v2). `rab doctor` shows both,
//! with the fix where something is refused.

use std::path::Path;

/// What the kernel's Landlock enforces of what the sandbox asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LandlockSupport {
    /// File reads and writes (ABI 1): without it nothing is confined.
    pub files: bool,
    /// Truncating files (ABI 3): without it a confined program may still truncate a
    /// file it can open for reading only through `truncate(2)`.
    pub truncate: bool,
    /// TCP bind and connect (ABI 4): without it `sandbox.network: false` is not enforced.
    pub network: bool,
    /// ioctl on devices (ABI 5).
    pub ioctl: bool,
    /// Abstract Unix sockets and signals scoped to the sandbox (ABI 6).
    pub scopes: bool,
    /// The newest ABI whose features are all enforced (0 to 6).
    pub abi: u8,
}

impl LandlockSupport {
    /// What the sandbox asks for and this kernel does not enforce (`block_network`:
    /// whether network is to be blocked), in words.
    pub fn missing(&self, block_network: bool) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.files {
            return vec!["all file confinement (Landlock is off or missing)"];
        }
        if !self.truncate {
            out.push("truncate (Linux 6.2+)");
        }
        if block_network && !self.network {
            out.push("network blocking (Linux 6.7+)");
        }
        if !self.ioctl {
            out.push("device ioctl (Linux 6.10+)");
        }
        if !self.scopes {
            out.push("abstract socket and signal scoping (Linux 6.12+)");
        }
        out
    }
}

/// Whether confined programs can run in namespaces of their own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamespaceSupport {
    /// They can.
    pub is_available: bool,
    /// Why not, when not.
    pub why_not: Option<String>,
    /// What the user can do about it.
    pub fix: Option<String>,
}

impl NamespaceSupport {
    /// Namespaces were not tried (the sandbox is off, or not on Linux).
    pub fn not_tried(why: &str) -> Self {
        Self { is_available: false, why_not: Some(why.to_owned()), fix: None }
    }
}

/// Tries the whole namespace sandbox once, by running `/bin/sh -c true` through it
/// (`helper` is rab's executable); on failure, says why and, where user namespaces are
/// refused, what setting would allow them (the sysctls and AppArmor switch
/// distributions use).
pub fn probe_namespaces(helper: &Path) -> NamespaceSupport {
    if !cfg!(target_os = "linux") {
        return NamespaceSupport::not_tried("namespaces are a Linux feature");
    }
    // Not rab itself: it may live in a folder the view replaces (`/tmp`).
    let spec = super::spec::Spec {
        namespaces: true,
        program: "/bin/sh".into(),
        args: vec!["-c".into(), "true".into()],
        ..super::spec::Spec::default()
    };
    let out = std::process::Command::new(helper)
        .arg(super::HELPER_ARG)
        .args(spec.to_args())
        .stdin(std::process::Stdio::null())
        .output();
    let (why, is_refused) = match out {
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr).trim().to_owned();
            let is_refused = err.contains("refused");
            if o.status.success() && !is_refused {
                return NamespaceSupport { is_available: true, why_not: None, fix: None };
            }
            let err =
                if err.is_empty() { format!("the probe exited with {}", o.status) } else { err };
            (err, is_refused)
        }
        Err(e) => (format!("could not run the probe: {e}"), false),
    };
    let fix = if is_refused {
        fix_hint()
    } else {
        "the namespace sandbox could not be set up here (please report it with `rab doctor`'s \
         output); meanwhile commands run under Landlock alone"
            .into()
    };
    NamespaceSupport { is_available: false, why_not: Some(why), fix: Some(fix) }
}

/// [`probe_namespaces`], remembered in `cache` (a file in rab's home) until the
/// machine restarts, rab's executable changes or a setting that refuses user
/// namespaces does: the probe starts rab twice over, which a start-up should not pay
/// each time. Where the cache cannot be read or written, the probe runs.
pub fn probe_namespaces_cached(helper: &Path, cache: &Path) -> NamespaceSupport {
    let key = cache_key(helper);
    let cached = std::fs::read(cache)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .filter(|v| v["key"].as_str() == Some(key.as_str()));
    if let Some(v) = cached {
        let text = |k: &str| v[k].as_str().map(str::to_owned);
        return NamespaceSupport {
            is_available: v["available"].as_bool().unwrap_or(false),
            why_not: text("whyNot"),
            fix: text("fix"),
        };
    }
    let support = probe_namespaces(helper);
    let record = serde_json::json!({
        "key": key,
        "available": support.is_available,
        "whyNot": support.why_not,
        "fix": support.fix,
    });
    if let Some(dir) = cache.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Err(e) = crate::atomic_write::write_atomic(cache, record.to_string().as_bytes())
    {
        tracing::debug!("could not remember the namespace probe: {e}");
    }
    support
}

/// What the probe's answer depends on: this boot, rab's executable, and the settings
/// distributions use to refuse user namespaces.
fn cache_key(helper: &Path) -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default().trim().to_owned();
    let exe = std::fs::metadata(helper).ok();
    let modified = exe
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok().map(|d| d.as_nanos()));
    format!(
        "{} {} {} {:?} {} {} {}",
        read("/proc/sys/kernel/random/boot_id"),
        helper.display(),
        exe.map_or(0, |m| m.len()),
        modified,
        read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
        read("/proc/sys/kernel/unprivileged_userns_clone"),
        read("/proc/sys/user/max_user_namespaces"),
    )
}

/// The setting that refuses unprivileged user namespaces here, and how to change it.
fn fix_hint() -> String {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return "AppArmor restricts unprivileged user namespaces: allow them for rab with an \
                AppArmor profile (`abi <abi/4.0>, profile rab /path/to/rab flags=(unconfined) \
                { userns, }` in /etc/apparmor.d/rab), or `sudo sysctl \
                kernel.apparmor_restrict_unprivileged_userns=0`"
            .into();
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return "unprivileged user namespaces are off: `sudo sysctl \
                kernel.unprivileged_userns_clone=1`"
            .into();
    }
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return "user namespaces are off: `sudo sysctl user.max_user_namespaces=15000`".into();
    }
    "user namespaces may be blocked by a container's seccomp profile or a chroot; run rab \
     outside the container, or allow unshare(CLONE_NEWUSER) there"
        .into()
}
