//! What the sandbox helper is asked to build, as the arguments rab passes it
//! (`rab __sandbox [OPTIONS] -- PROGRAM ARGS…`): one type written by [`super::Sandbox`]
//! and read by the helper, so the two cannot drift.

use std::ffi::OsString;
use std::path::PathBuf;

use super::protected::Guarded;

/// The confinement of one spawned program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    /// Run in new user, mount, PID and IPC namespaces (else Landlock alone).
    pub namespaces: bool,
    /// Build the view in a second stage, as on kernels without proc's `pidns` option,
    /// even where it has it (for the tests of that path).
    pub two_stage: bool,
    /// Folders (and a few files) the program may write.
    pub writable: Vec<PathBuf>,
    /// Folders the view would otherwise lose that stay readable (a home folder inside
    /// the temp folder, which the private `/tmp` replaces).
    pub visible: Vec<PathBuf>,
    /// Protected paths mounted read-only.
    pub read_only: Vec<PathBuf>,
    /// Folders mounted onto themselves so they cannot be renamed away.
    pub pinned: Vec<PathBuf>,
    /// Protected paths put back as they were when the program ends.
    pub guarded: Vec<Guarded>,
    /// Roots without a `.git` when the program started (see [`super::protected::Plan`]).
    pub fresh_git: Vec<PathBuf>,
    /// Paths replaced by an empty, unreadable stand-in (rab's home, read deny rules).
    pub hidden: Vec<PathBuf>,
    /// The folder that is the program's `/tmp` (private to this rab).
    pub tmp: Option<PathBuf>,
    /// A folder the program sees with its changes kept apart: `(target, private
    /// folder)`; the changes land in the private folder, never in the target.
    pub overlay: Option<(PathBuf, PathBuf)>,
    /// Variables set for the program (`PYTHONUSERBASE` when there is no `~/.local`
    /// to put a layer on).
    pub env: Vec<(String, String)>,
    /// Whether the program may use the network.
    pub network: bool,
    /// Made ready before the command is known (`standby.rs`): the namespaces, the view
    /// and the confinement are built, then the program, its arguments, its working
    /// folder and its standard streams are read from standard input. No program here.
    pub standby: bool,
    /// rab's process id: when rab ends (killed included), the helper ends the
    /// program and everything it started and puts protected paths back at once, not
    /// when the program ends on its own (`owner.rs`).
    pub owner: Option<u32>,
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl Spec {
    /// The helper's arguments (what follows `__sandbox`).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        let flag = |out: &mut Vec<OsString>, name: &str, path: &PathBuf| {
            out.push(name.into());
            out.push(path.into());
        };
        for p in &self.writable {
            flag(&mut out, "--write", p);
        }
        for p in &self.visible {
            flag(&mut out, "--see", p);
        }
        for p in &self.read_only {
            flag(&mut out, "--ro", p);
        }
        for p in &self.pinned {
            flag(&mut out, "--pin", p);
        }
        for p in &self.hidden {
            flag(&mut out, "--hide", p);
        }
        if let Some(t) = &self.tmp {
            flag(&mut out, "--tmp", t);
        }
        for p in &self.fresh_git {
            flag(&mut out, "--fresh-git", p);
        }
        for g in &self.guarded {
            match &g.link {
                None => flag(&mut out, "--guard", &g.root),
                Some(_) => flag(&mut out, "--guard-link", &g.root),
            }
            out.push((&g.path).into());
            if let Some(target) = &g.link {
                out.push(target.into());
            }
        }
        if let Some((target, private)) = &self.overlay {
            out.push("--overlay".into());
            out.push(target.into());
            out.push(private.into());
        }
        for (k, v) in &self.env {
            out.push("--env".into());
            out.push(format!("{k}={v}").into());
        }
        if self.namespaces {
            out.push("--ns".into());
        }
        if self.two_stage {
            out.push("--two-stage".into());
        }
        if self.network {
            out.push("--net".into());
        }
        if self.standby {
            out.push("--standby".into());
        }
        if let Some(pid) = self.owner {
            out.push("--owner".into());
            out.push(pid.to_string().into());
        }
        out.push("--".into());
        if self.standby && self.program.is_empty() {
            return out;
        }
        out.push(self.program.clone());
        out.extend(self.args.iter().cloned());
        out
    }

    /// Reads what [`Spec::to_args`] wrote.
    pub fn parse(args: Vec<OsString>) -> Result<Self, String> {
        let mut it = args.into_iter();
        let mut spec = Self::default();
        let path = |it: &mut std::vec::IntoIter<OsString>, flag: &str| {
            it.next().map(PathBuf::from).ok_or_else(|| format!("{flag} needs a path"))
        };
        loop {
            let Some(arg) = it.next() else { return Err("missing `-- PROGRAM`".into()) };
            match arg.to_str() {
                Some("--write") => spec.writable.push(path(&mut it, "--write")?),
                Some("--see") => spec.visible.push(path(&mut it, "--see")?),
                Some("--ro") => spec.read_only.push(path(&mut it, "--ro")?),
                Some("--pin") => spec.pinned.push(path(&mut it, "--pin")?),
                Some("--hide") => spec.hidden.push(path(&mut it, "--hide")?),
                Some("--tmp") => spec.tmp = Some(path(&mut it, "--tmp")?),
                Some("--fresh-git") => spec.fresh_git.push(path(&mut it, "--fresh-git")?),
                Some(flag @ ("--guard" | "--guard-link")) => {
                    let root = path(&mut it, flag)?;
                    let p = path(&mut it, flag)?;
                    let link = if flag == "--guard" { None } else { Some(path(&mut it, flag)?) };
                    spec.guarded.push(Guarded { root, path: p, link });
                }
                Some("--overlay") => {
                    let target = path(&mut it, "--overlay")?;
                    spec.overlay = Some((target, path(&mut it, "--overlay")?));
                }
                Some("--env") => {
                    let pair = it.next().ok_or("--env needs NAME=VALUE")?;
                    let pair = pair.to_string_lossy();
                    let (k, v) = pair.split_once('=').ok_or("--env needs NAME=VALUE")?;
                    spec.env.push((k.to_owned(), v.to_owned()));
                }
                Some("--ns") => spec.namespaces = true,
                Some("--two-stage") => spec.two_stage = true,
                Some("--net") => spec.network = true,
                Some("--standby") => spec.standby = true,
                Some("--owner") => {
                    let pid = it.next().ok_or("--owner needs a process id")?;
                    let pid = pid.to_str().and_then(|p| p.parse().ok());
                    spec.owner = Some(pid.ok_or("--owner needs a process id")?);
                }
                Some("--") => break,
                _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
            }
        }
        spec.program = match it.next() {
            Some(program) => program,
            None if spec.standby => OsString::new(),
            None => return Err("missing the program after --".into()),
        };
        spec.args = it.collect();
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn arguments_read_back_as_written() {
        let spec = Spec {
            namespaces: true,
            two_stage: true,
            writable: vec!["/w".into(), "/c a".into()],
            visible: vec!["/tmp/home".into()],
            read_only: vec!["/w/.git/config".into()],
            pinned: vec!["/w/.git".into()],
            guarded: vec![
                Guarded { root: "/w".into(), path: "/w/.mcp.json".into(), link: None },
                Guarded {
                    root: "/w".into(),
                    path: "/w/AGENTS.md".into(),
                    link: Some("CLAUDE.md".into()),
                },
            ],
            fresh_git: vec!["/v".into()],
            hidden: vec!["/h/.rab".into()],
            tmp: Some("/tmp/rab-1/tmp".into()),
            overlay: Some(("/h/.local".into(), "/tmp/rab-1/local".into())),
            env: vec![("PYTHONUSERBASE".into(), "/tmp/.local".into())],
            network: true,
            standby: false,
            owner: Some(4242),
            program: "sh".into(),
            args: vec!["-c".into(), "echo --ns".into()],
        };
        assert_eq!(Spec::parse(spec.to_args()).unwrap(), spec);
        let served = Spec { standby: true, program: OsString::new(), args: vec![], ..spec };
        assert_eq!(Spec::parse(served.to_args()).unwrap(), served);
        assert!(Spec::parse(vec!["--ns".into(), "--".into()]).unwrap_err().contains("program"));
        assert!(Spec::parse(vec!["--bogus".into()]).unwrap_err().contains("--bogus"));
        assert!(Spec::parse(vec!["--write".into()]).unwrap_err().contains("--write needs"));
    }
}
