//! What a session can do with its tape besides running the agent: branch (`/tree`),
//! fork (`/fork`), name (`/name`), anchors (`/anchor`), and hand off to a fresh session
//! with a summary (`/handoff`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rab_ai::{Content, Message};
use rab_session::{Entry, EntryBody, EntryKind, Tape};
use tokio_util::sync::CancellationToken;

use crate::AgentSession;

/// A user message in the session tree, for `/tree`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeItem {
    /// Its entry id.
    pub entry_id: String,
    /// Its parent entry (`None` for the first message).
    pub parent_id: Option<String>,
    /// Nesting: how many branch points lie above it.
    pub depth: usize,
    /// First line of the message (at most 100 characters).
    pub text: String,
    /// The whole text of the message (to edit and resend it).
    pub full_text: String,
    /// On the active branch.
    pub is_active: bool,
}

/// The text of a user message (not a summary): `(first line, whole text)`.
fn user_text(m: &Message) -> Option<(String, String)> {
    let Message::User(u) = m else { return None };
    if m.is_summary() {
        return None;
    }
    let full = Content::join_text(&u.content);
    let first = full.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
    Some((first.chars().take(100).collect(), full))
}

impl AgentSession {
    fn add_summary_cost(&mut self, usage: &rab_ai::Usage) {
        let price = self.agent.config().model.cost.clone();
        self.agent.add_spent(price.of(usage));
        crate::session::add_request(&mut self.totals, &mut self.turns, usage, &price, true);
    }

    fn reload_messages(&mut self) {
        let (ids, messages) = self.tape.messages_with_ids();
        self.ids = ids;
        self.agent.set_messages(messages);
        self.restore_context();
    }

    /// The user messages of every branch, depth-first, oldest first.
    pub fn tree(&self) -> Vec<TreeItem> {
        let entries = self.tape.entries();
        let mut children: HashMap<Option<&str>, Vec<&Entry>> = HashMap::new();
        for e in &entries {
            children.entry(e.parent_id.as_deref()).or_default().push(e);
        }
        let active: std::collections::HashSet<&str> =
            self.tape.active_branch().into_iter().map(|e| e.id.as_str()).collect();
        let mut out = Vec::new();
        let mut stack: Vec<(&Entry, usize)> = children
            .get(&None)
            .map(|v| v.iter().rev().map(|e| (*e, 0)).collect())
            .unwrap_or_default();
        while let Some((e, depth)) = stack.pop() {
            let kids = children.get(&Some(e.id.as_str())).cloned().unwrap_or_default();
            let mut depth_here = depth;
            if let Some((text, full_text)) = e.message().and_then(user_text) {
                out.push(TreeItem {
                    entry_id: e.id.clone(),
                    parent_id: e.parent_id.clone(),
                    depth,
                    text,
                    full_text,
                    is_active: active.contains(e.id.as_str()),
                });
                depth_here = depth;
            }
            let next = if kids.len() > 1 { depth_here + 1 } else { depth_here };
            for k in kids.iter().rev() {
                stack.push((k, next));
            }
        }
        out
    }

    /// Rewinds to `target` (`rewind.rs`): the files from the checkpoints in `store`,
    /// and with `what.conversation` the conversation (the next message continues there).
    pub fn rewind(
        &mut self,
        store: &rab_session::CheckpointStore,
        target: Option<&str>,
        what: crate::rewind::What,
    ) -> Result<crate::rewind::Report, String> {
        let report = crate::rewind::rewind(&mut self.tape, store, target, what)?;
        if what.conversation {
            self.reload_messages();
        }
        Ok(report)
    }

    /// `/rewind`: to `point` (a prompt number or an entry; `None` undoes the last
    /// rewind), saying what was done.
    pub fn rewind_to(
        &mut self,
        store: &rab_session::CheckpointStore,
        point: Option<&str>,
        what: crate::rewind::What,
    ) -> Result<String, String> {
        let report = match point {
            None => self.undo_rewind(store, what.force)?,
            Some(p) => {
                let target = crate::rewind::resolve_point(&self.tape, p)?;
                self.rewind(store, target.as_deref(), what)?
            }
        };
        let mut lines = report.lines();
        if lines.is_empty() {
            lines.push("no file to restore".to_owned());
        }
        if what.conversation || point.is_none() {
            let n = self.agent.messages().len();
            lines.push(format!("the conversation goes on from there ({n} messages)"));
        }
        lines.push("/rewind undo puts it back".to_owned());
        Ok(lines.join("\n"))
    }

    /// Undoes the last rewind on the active branch.
    pub fn undo_rewind(
        &mut self,
        store: &rab_session::CheckpointStore,
        force: bool,
    ) -> Result<crate::rewind::Report, String> {
        let report = crate::rewind::undo(&mut self.tape, store, force)?;
        self.reload_messages();
        Ok(report)
    }

    /// Continues from `entry_id`: the next message starts a new branch there (the old
    /// branch stays in the file). With `summary`, the model summarises the abandoned
    /// part and the summary is added to the new branch.
    pub async fn branch_to(
        &mut self,
        entry_id: Option<&str>,
        summarise_abandoned: bool,
        cancel: CancellationToken,
    ) -> Result<(), String> {
        let old_ids = self.ids.clone();
        let old_messages = self.agent.messages().to_vec();
        self.tape.branch_from(entry_id).map_err(|e| e.to_string())?;
        self.reload_messages();
        if !summarise_abandoned {
            return Ok(());
        }
        // What the old branch had that the new one does not.
        let abandoned: Vec<Message> = old_ids
            .iter()
            .zip(old_messages)
            .filter(|(id, _)| id.as_ref().is_some_and(|id| !self.ids.contains(&Some(id.clone()))))
            .map(|(_, m)| m)
            .collect();
        if abandoned.is_empty() {
            return Ok(());
        }
        let Some(c) = self.compactor.clone() else {
            return Err("summaries need compaction set up".into());
        };
        let config = self.agent.config().clone();
        let (summary, usage) =
            c.summary(&abandoned, &config.model, &config.options, None, &cancel).await?;
        self.add_summary_cost(&usage);
        let message = Message::user(format!(
            "<abandoned_branch_summary>\n{}\n</abandoned_branch_summary>\nThat summarises work on a branch \
             the user left; continue from here.",
            summary.trim()
        ));
        self.tape
            .append(EntryBody::Message { message, details: None })
            .map_err(|e| e.to_string())?;
        self.reload_messages();
        Ok(())
    }

    /// Copies the active branch into a new session file in `dir` (linked to this one
    /// through its header) and continues there. Returns the new file.
    pub fn fork(&mut self, dir: &Path) -> Result<PathBuf, String> {
        let new = self.tape.forked(dir).map_err(|e| e.to_string())?;
        let path = new.path().map(Path::to_path_buf).unwrap_or_default();
        self.tape = new;
        self.reload_messages();
        Ok(path)
    }

    /// [`AgentSession::fork`] from `point` (an entry of the active branch; `None`: its
    /// start) instead of the leaf. With `files`, the files the agent changed after the
    /// point get their content at the point back first (recorded in both sessions, so
    /// `/rewind undo` in the new one puts them back).
    pub fn fork_at(
        &mut self,
        dir: &Path,
        point: Option<&str>,
        files: Option<&rab_session::CheckpointStore>,
    ) -> Result<(PathBuf, Option<crate::rewind::Report>), String> {
        let what = crate::rewind::What { files: true, conversation: false, force: false };
        let report = match files {
            Some(store) => Some(crate::rewind::rewind(&mut self.tape, store, point, what)?),
            None => None,
        };
        let leaf = self.tape.leaf().map(|e| e.id.clone());
        self.tape.branch_from(point).map_err(|e| e.to_string())?;
        let forked = self.tape.forked(dir);
        self.tape.branch_from(leaf.as_deref()).map_err(|e| e.to_string())?;
        let new = forked.map_err(|e| e.to_string())?;
        let path = new.path().map(Path::to_path_buf).unwrap_or_default();
        self.tape = new;
        if let (Some(report), Some(store)) = (&report, files) {
            crate::rewind::record(&mut self.tape, store, point, &report.restored)?;
        }
        self.reload_messages();
        Ok((path, report))
    }

    /// Whether the conversation is compacted automatically before it overflows.
    pub fn auto_compaction(&self) -> bool {
        self.compactor.as_ref().is_some_and(|c| c.auto())
    }

    /// Turns automatic compaction on or off; refused when compaction is not set up.
    pub fn set_auto_compaction(&mut self, on: bool) -> Result<(), String> {
        let c = self.compactor.as_ref().ok_or("compaction is not set up for this session")?;
        c.set_auto(on);
        Ok(())
    }

    /// How steering and follow-up messages are taken from their queues.
    pub fn set_drain_modes(
        &mut self,
        steering: Option<rab_agent::DrainMode>,
        follow_up: Option<rab_agent::DrainMode>,
    ) {
        let config = self.agent.config_mut();
        if let Some(mode) = steering {
            config.steering_mode = mode;
        }
        if let Some(mode) = follow_up {
            config.follow_up_mode = mode;
        }
    }

    /// How often a failed model request is tried again (0: never).
    pub fn set_max_retries(&mut self, retries: u32) {
        self.agent.config_mut().options.retry.max_retries = retries;
    }

    /// Names the session (shown by the session picker).
    pub fn set_name(&mut self, name: &str) -> Result<(), String> {
        let target_id = self.tape.id().to_owned();
        let body = EntryBody::Label { target_id, label: Some(name.trim().to_owned()) };
        self.tape.append(body).map(|_| ()).map_err(|e| e.to_string())
    }

    /// The session's name, if it has one.
    pub fn name(&self) -> Option<String> {
        let id = self.tape.id();
        self.tape.entries_of(EntryKind::Label).iter().rev().find_map(|e| match &e.body {
            EntryBody::Label { target_id, label } if target_id == id => Some(label.clone()),
            _ => None,
        })?
    }

    /// Marks the current point with a name.
    pub fn add_anchor(&mut self, name: &str) -> Result<(), String> {
        let Some(target_id) = self.tape.leaf().map(|e| e.id.clone()) else {
            return Err("nothing to anchor yet: send a message first".into());
        };
        let body = EntryBody::Label { target_id, label: Some(name.trim().to_owned()) };
        self.tape.append(body).map(|_| ()).map_err(|e| e.to_string())
    }

    /// Anchors, newest first: `(name, entry id)`.
    pub fn anchors(&self) -> Vec<(String, String)> {
        let session = self.tape.id();
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for e in self.tape.entries_of(EntryKind::Label).iter().rev() {
            if let EntryBody::Label { target_id, label: Some(name) } = &e.body
                && target_id != session
                && !seen.contains(name)
            {
                seen.push(name.clone());
                out.push((name.clone(), target_id.clone()));
            }
        }
        out
    }

    /// Summarises the session and continues in a fresh one in `dir`, linked both ways:
    /// the new header names the old file, and the old tape records the new one.
    pub async fn handoff(
        &mut self,
        focus: Option<&str>,
        dir: &Path,
        cancel: CancellationToken,
    ) -> Result<PathBuf, String> {
        let Some(c) = self.compactor.clone() else {
            return Err("handoff needs compaction set up".into());
        };
        let messages = self.agent.messages().to_vec();
        if messages.is_empty() {
            return Err("nothing to hand off yet".into());
        }
        let config = self.agent.config().clone();
        let (summary, usage) =
            c.summary(&messages, &config.model, &config.options, focus, &cancel).await?;
        self.add_summary_cost(&usage);
        let old_path = self.tape.path().map(|p| p.display().to_string());
        let cwd = PathBuf::from(&self.tape.header().cwd);
        let mut new = Tape::create(dir, &cwd, old_path.clone());
        new.append(EntryBody::Message { message: Message::summary(&summary), details: None })
            .map_err(|e| e.to_string())?;
        let new_path = new.path().map(Path::to_path_buf).unwrap_or_default();
        let link = serde_json::json!({"to": new_path.display().to_string(), "summary": summary});
        self.tape
            .append(EntryBody::Custom { custom_type: "handoff".into(), data: link })
            .map_err(|e| e.to_string())?;
        self.tape = new;
        self.reload_messages();
        Ok(new_path)
    }
}
