//! Start-up of the safety parts: the sandbox the tools run in, the permission policy,
//! hooks and secret firewall behind one [`Gate`], and who answers permission questions
//! (nobody when headless: the call is refused; the front end may install an approver
//! that tells the user).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rab_agent::BoxFuture;
use rab_config::{Auth, Env, Paths, Settings};
use rab_tools::{Sandbox, SandboxMode};
use tokio_util::sync::CancellationToken;

use super::{SafetyChoice, SetupError};
use crate::hooks::HookRunner;
use crate::permissions::{PermissionMode, Policy, PolicyContext};
use crate::secrets::Redactor;
use crate::{Approval, ApprovalRequest, Approver, Gate, ModeSwitch};

/// What the safety settings resolved to.
pub struct Safety {
    /// The sandbox for tools and spawned programs.
    pub sandbox: Sandbox,
    /// The gate every tool call passes.
    pub gate: Arc<Gate>,
    /// Who answers questions; modes install theirs.
    pub approver: Arc<SwitchApprover>,
    /// Whether yolo is in the Shift+Tab cycle.
    pub has_yolo: bool,
}

/// The rules of `--allowed-tools`/`--disallowed-tools` values (`a,b(c d),e` or
/// `a b(c,d)`).
fn split_rules(values: &[String]) -> Vec<String> {
    values.iter().flat_map(|v| crate::rule_list::split_rule_list(v)).collect()
}

/// Environment variables the keys rab uses live in: `*_API_KEY`, and any whose value
/// is a credential rab read — a key stored in auth.json, the model's key (from any
/// variable models.json names), a chat bot's token (`credentials`). `sandbox.allowEnv`
/// keeps some.
fn scrubbed_env(env: &Env, auth: &Auth, allowed: &[String], credentials: &[&str]) -> Vec<String> {
    let mut used: Vec<&str> = auth.keys().map(|(_, k)| k).collect();
    used.extend(credentials);
    used.retain(|k| !k.trim().is_empty());
    let holds_one = |v: &str| used.iter().any(|k| v.trim() == k.trim());
    env.names()
        .filter(|n| n.ends_with("_API_KEY") || env.get(n).is_some_and(holds_one))
        .filter(|n| !allowed.iter().any(|a| a == n))
        .map(str::to_owned)
        .collect()
}

/// Secrets the firewall knows from the start.
fn known_secrets(
    env: &Env,
    auth: &Auth,
    api_key: Option<&str>,
    credentials: &[(String, String)],
) -> Vec<(String, String)> {
    let mut known: Vec<(String, String)> = env
        .names()
        .filter(|n| n.ends_with("_API_KEY") || n.ends_with("_TOKEN") || n.ends_with("_SECRET"))
        .filter_map(|n| env.get(n).map(|v| (n.to_owned(), v.to_owned())))
        .collect();
    known.extend(auth.keys().map(|(p, k)| (format!("{p} key from auth.json"), k.to_owned())));
    if let Some(k) = api_key {
        known.push(("the model's API key".into(), k.to_owned()));
    }
    known.extend(credentials.iter().cloned());
    known
}

/// Everything the safety settings say, checked: a bad rule, mode or hook is an error.
/// `helper`: the program that confines commands, used where Landlock works.
#[allow(clippy::too_many_arguments)]
pub fn build(
    choice: &SafetyChoice,
    helper: Option<PathBuf>,
    settings: &Settings,
    layers: &[rab_config::SafetyLayer],
    env: &Env,
    paths: &Paths,
    cwd: &Path,
    tools: &crate::ToolCatalog,
    api_key: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Safety, SetupError> {
    let mode_name = match (choice.yolo, &choice.permission_mode, &settings.permissions.default_mode)
    {
        (true, _, _) => "yolo".to_owned(),
        (false, Some(m), _) | (false, None, Some(m)) => m.clone(),
        (false, None, None) => "default".to_owned(),
    };
    let mode = PermissionMode::parse(&mode_name).ok_or_else(|| {
        SetupError::usage(format!(
            "unknown permission mode '{mode_name}'; use default, accept-edits, plan or yolo"
        ))
    })?;
    let home = env.get("HOME").map(PathBuf::from);
    let cx = PolicyContext { tools, root: cwd, home: home.as_deref() };
    let policy = Policy::load(
        layers,
        &split_rules(&choice.allowed_tools),
        &split_rules(&choice.disallowed_tools),
        &cx,
    )
    .map_err(|e| SetupError::usage(e.to_string()))?;
    warnings.extend(policy.skipped().iter().cloned());
    let mut policy = policy;
    let chosen = choice.sandbox.clone().or_else(|| settings.sandbox.mode.clone());
    // Asked once: which of what the sandbox asks for this kernel enforces.
    let landlock = if chosen.as_deref() == Some("off") {
        rab_tools::sandbox::LandlockSupport::default()
    } else {
        rab_tools::sandbox::landlock_support()
    };
    // On by default where Landlock confines commands; off where it cannot.
    let sandbox_name =
        chosen.unwrap_or_else(|| if landlock.files { "workspace-write" } else { "off" }.to_owned());
    let sandbox_mode = SandboxMode::parse(&sandbox_name).ok_or_else(|| {
        SetupError::usage(format!(
            "unknown sandbox '{sandbox_name}'; use read-only, workspace-write or off"
        ))
    })?;
    let auth = Auth::load(&paths.auth_file()).unwrap_or_default();
    let mut roots = vec![cwd.to_path_buf()];
    roots.extend(choice.add_dirs.iter().map(|d| cwd.join(d)));
    roots.extend(settings.permissions.additional_directories.iter().map(|d| {
        match (d.strip_prefix("~/"), &home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => cwd.join(d),
        }
    }));
    policy.set_protected(&roots, home.as_deref(), Some(paths.home()));
    let temp = PathBuf::from(env.get("TMPDIR").unwrap_or("/tmp"));
    let is_network_allowed = settings.sandbox.network.unwrap_or(true);
    let helper = if sandbox_mode == SandboxMode::Off {
        None
    } else if landlock.files {
        let missing = landlock.missing(!is_network_allowed);
        if !missing.is_empty() {
            let message = format!(
                "this kernel's Landlock does not enforce {}: the sandbox confines commands \
                 without it",
                missing.join(", ")
            );
            tracing::warn!("{message}");
            warnings.push(message);
        }
        if helper.is_none() {
            warnings.push(
                "no sandbox helper was given (RuntimeOptions::sandbox_helper): commands run \
                 unconfined; only the file-path and permission checks protect the sandbox"
                    .into(),
            );
        }
        helper
    } else {
        warnings.push(
            "Landlock is not available on this system: commands run unconfined; only the \
             file-path and permission checks protect the sandbox"
                .into(),
        );
        None
    };
    let caches =
        rab_tools::sandbox::tool_caches(home.as_deref(), |v| env.get(v).map(str::to_owned));
    let probe_cache = paths.home().join("cache/namespaces.json");
    let view = view_parts(sandbox_mode, helper.as_deref(), env, &temp, &probe_cache, warnings);
    let credentials = &choice.credentials.0;
    let mut used: Vec<&str> = credentials.iter().map(|(_, v)| v.as_str()).collect();
    used.extend(api_key);
    let mut hidden = vec![paths.home().to_path_buf()];
    hidden.extend(read_denied_paths(&mut policy, warnings));
    let sandbox = Sandbox::new(sandbox_mode, &roots, &[temp])
        .with_caches(&caches)
        .with_network(is_network_allowed)
        .with_helper(helper)
        .with_namespaces(view.has_namespaces)
        .with_hidden(&hidden)
        .with_home(home.clone())
        .with_private_dir(view.private)
        .with_scrubbed_env(scrubbed_env(env, &auth, &settings.sandbox.allow_env, &used));
    let hooks = HookRunner::new(&settings.hooks, cwd.to_path_buf(), sandbox.clone(), warnings)
        .map_err(|e| SetupError::usage(e.to_string()))?;
    let redactor = settings
        .secret_firewall
        .enabled
        .then(|| Arc::new(Redactor::new(known_secrets(env, &auth, api_key, credentials))));
    if let Some(redactor) = &redactor {
        learn_denied_files(redactor, &hidden[1..]);
    }
    let approver = Arc::new(SwitchApprover::default());
    let gate = Arc::new(Gate::new(
        policy,
        Arc::new(ModeSwitch::new(mode)),
        Arc::new(hooks),
        approver.clone(),
        redactor,
        (paths.answers_file(), rab_config::canonical_dir(cwd)),
    ));
    Ok(Safety { sandbox, gate, approver, has_yolo: mode == PermissionMode::Yolo })
}

/// What the namespace sandbox needs from start-up: whether it works here, and this
/// rab's private folder.
struct ViewParts {
    has_namespaces: bool,
    private: Option<Arc<rab_tools::sandbox::PrivateDir>>,
}

/// Probes the namespace sandbox (where commands are confined at all) and makes the
/// private folder; what fails is a warning, and commands run under Landlock alone.
fn view_parts(
    mode: SandboxMode,
    helper: Option<&Path>,
    env: &Env,
    temp: &Path,
    probe_cache: &Path,
    warnings: &mut Vec<String>,
) -> ViewParts {
    let support = match helper.filter(|_| mode != SandboxMode::Off) {
        // An escape hatch for a system where the namespace sandbox gets in the way:
        // Landlock alone, as where namespaces are refused.
        Some(_) if env.get("RAB_SANDBOX_NAMESPACES") == Some("0") => {
            rab_tools::sandbox::NamespaceSupport::not_tried("RAB_SANDBOX_NAMESPACES=0 is set")
        }
        Some(helper) => rab_tools::sandbox::probe_namespaces_cached(helper, probe_cache),
        None => rab_tools::sandbox::NamespaceSupport::not_tried("the sandbox is off"),
    };
    if !support.is_available && mode != SandboxMode::Off && helper.is_some() {
        let why = support.why_not.unwrap_or_default();
        let fix = support.fix.map(|f| format!(" To enable them: {f}.")).unwrap_or_default();
        warnings.push(format!(
            "the sandbox cannot use namespaces here ({why}): commands run under Landlock \
             alone, which cannot keep them from servers outside the sandbox, hide rab's home \
             or make protected paths read-only (rab doctor shows each layer).{fix}"
        ));
    }
    let runtime = env
        .get("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .unwrap_or_else(|| temp.to_path_buf());
    #[cfg(unix)]
    let private = match rab_tools::sandbox::PrivateDir::create(&runtime) {
        Ok(dir) => Some(Arc::new(dir)),
        Err(e) => {
            warnings.push(format!(
                "could not make rab's private folder in {}: {e}; sandboxed commands get an \
                 empty /tmp each time and bash logs go to the temp folder",
                runtime.display()
            ));
            None
        }
    };
    #[cfg(not(unix))]
    let private = {
        let _ = runtime;
        None
    };
    ViewParts { has_namespaces: support.is_available, private }
}

/// The paths the read deny rules cover that exist, for the sandbox to hide: a rule's
/// folder (`read(~/.ssh/**)`) or file as is, a pattern's matches found now (at most
/// [`MAX_HIDDEN`]; files made later are covered by the file tools only).
fn read_denied_paths(policy: &mut Policy, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let (paths, is_cut) = policy.read_denied_paths(MAX_HIDDEN);
    if is_cut {
        warnings.push(format!(
            "the read deny rules match more than {MAX_HIDDEN} paths: sandboxed commands see \
             those past the first {MAX_HIDDEN} (narrow the rules to folders to hide them all)"
        ));
    }
    paths
}

/// Teaches the firewall what the files the read deny rules name hold: commands can
/// still print such a file another way (from git's objects, through a hard link made
/// before rab started), and the firewall then masks it.
fn learn_denied_files(redactor: &Redactor, denied: &[PathBuf]) {
    const MAX_FILE: u64 = 64 * 1024;
    let mut budget: usize = 128;
    for path in denied {
        let Ok(meta) = std::fs::metadata(path) else { continue };
        if !meta.is_file() || meta.len() > MAX_FILE || budget == 0 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let what = format!("{} (read denied)", path.display());
        budget = budget.saturating_sub(redactor.learn_denied_file(&what, &text, budget));
    }
}

/// The most paths the sandbox hides for read deny rules (each is a mount per command).
const MAX_HIDDEN: usize = 64;

/// The approver in use, replaceable: headless until a mode installs its own.
#[derive(Default)]
pub struct SwitchApprover {
    inner: RwLock<Option<Arc<dyn Approver>>>,
}

impl SwitchApprover {
    /// Makes `approver` answer from now on.
    pub fn install(&self, approver: Arc<dyn Approver>) {
        if let Ok(mut inner) = self.inner.write() {
            *inner = Some(approver);
        }
    }
}

impl Approver for SwitchApprover {
    fn approve<'a>(
        &'a self,
        request: ApprovalRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Approval> {
        let inner = self.inner.read().ok().and_then(|i| i.clone());
        match inner {
            Some(a) => Box::pin(async move { a.approve(request, cancel).await }),
            // Headless: nobody to ask; the model gets the refusal.
            None => Box::pin(async { Approval::Unavailable }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_split_at_top_level_commas_only() {
        let v = vec!["read,bash(a, b)".to_owned(), "edit(src/**)".to_owned()];
        assert_eq!(split_rules(&v), ["read", "bash(a, b)", "edit(src/**)"]);
    }
}
