//! Scheduled prompts: `cron_create`, `cron_list`, `cron_delete` and the scheduler a
//! long-running mode (the terminal UI, a chat channel) polls for the next due prompt.
//! In the UI, the REPL and RPC jobs live as long as the rab process; a chat's jobs are
//! durable ([`Scheduler::durable`]): kept in a file under rab's home, restored when rab
//! starts again, with missed runs handled by [`MISSED_GRACE_MS`]'s rule. Schedules are
//! five-field cron expressions (minute hour day-of-month month day-of-week) in UTC, with
//! `*`, `*/n`, `a-b`, `a-b/n` and lists.
//!
//! Time comes from tokio's clock offset from the wall clock at start, so tests can
//! pause and advance it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio::time::Instant;

/// Most jobs at once.
pub const MAX_JOBS: usize = 50;

/// The missed-run rule of durable jobs: a run that came due while rab was not running
/// runs once, late, when rab starts again if it was due at most this long ago (12
/// hours; several missed runs of a recurring job count as one); a run missed by more is
/// skipped: a recurring job waits for its next time, a one-off job is dropped. Either
/// way the chat is told.
pub const MISSED_GRACE_MS: u64 = 12 * 60 * MINUTE_MS;
const MINUTE_MS: u64 = 60_000;

/// A parsed schedule: the allowed values of each field as bit sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    minutes: u64,
    hours: u32,
    days: u32,
    months: u16,
    weekdays: u8,
    is_day_any: bool,
    is_weekday_any: bool,
    text: String,
}

fn field(text: &str, min: u32, max: u32, name: &str) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s.parse().map_err(|_| format!("{name}: bad step '{s}'"))?;
                if step == 0 {
                    return Err(format!("{name}: step must be at least 1"));
                }
                (r, step)
            }
            None => (part, 1),
        };
        let (lo, hi) = if range == "*" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            let num = |x: &str| x.parse::<u32>().map_err(|_| format!("{name}: bad value '{x}'"));
            (num(a)?, num(b)?)
        } else {
            let v: u32 = range.parse().map_err(|_| format!("{name}: bad value '{range}'"))?;
            (v, if step > 1 { max } else { v })
        };
        if lo < min || hi > max || lo > hi {
            return Err(format!("{name}: {part} is outside {min}-{max}"));
        }
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            v += step;
        }
    }
    Ok((bits, text == "*"))
}

impl Schedule {
    /// Parses `minute hour day-of-month month day-of-week`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split_whitespace().collect();
        let [m, h, dom, mon, dow] = parts.as_slice() else {
            return Err(format!(
                "'{text}' is not a cron expression: give five fields, minute hour \
                 day-of-month month day-of-week, e.g. '*/10 * * * *' (UTC)"
            ));
        };
        let (minutes, _) = field(m, 0, 59, "minute")?;
        let (hours, _) = field(h, 0, 23, "hour")?;
        let (days, is_day_any) = field(dom, 1, 31, "day of month")?;
        let (months, _) = field(mon, 1, 12, "month")?;
        let (mut weekdays, is_weekday_any) = field(dow, 0, 7, "day of week")?;
        if weekdays & (1 << 7) != 0 {
            weekdays |= 1; // 7 is Sunday too.
        }
        Ok(Self {
            minutes,
            hours: hours as u32,
            days: days as u32,
            months: months as u16,
            weekdays: (weekdays & 0x7f) as u8,
            is_day_any,
            is_weekday_any,
            text: parts.join(" "),
        })
    }

    fn matches_day(&self, days: i64) -> bool {
        let (_, month, day) = rab_session::time::civil_from_days(days);
        if self.months & (1 << month) == 0 {
            return false;
        }
        let weekday = (days + 4).rem_euclid(7) as u32; // 1970-01-01 was a Thursday.
        let dom = self.days & (1 << day) != 0;
        let dow = self.weekdays & (1 << weekday) != 0;
        match (self.is_day_any, self.is_weekday_any) {
            (true, true) => true,
            (false, true) => dom,
            (true, false) => dow,
            // Both restricted: either matches, as in cron.
            (false, false) => dom || dow,
        }
    }

    /// The first matching minute strictly after `after_ms` (Unix milliseconds, UTC),
    /// within about four years.
    pub fn next_after(&self, after_ms: u64) -> Option<u64> {
        let mut minute = after_ms / MINUTE_MS + 1;
        let limit = minute + 4 * 366 * 1440;
        while minute < limit {
            let days = (minute / 1440) as i64;
            if !self.matches_day(days) {
                minute = (minute / 1440 + 1) * 1440;
                continue;
            }
            let in_day = minute % 1440;
            let (h, m) = (in_day / 60, in_day % 60);
            if self.hours & (1 << h) == 0 {
                minute = minute - m + 60;
                continue;
            }
            if self.minutes & (1 << m) != 0 {
                return Some(minute * MINUTE_MS);
            }
            minute += 1;
        }
        None
    }
}

/// A scheduled prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// `cron_1`, …
    pub id: String,
    /// When.
    pub schedule: Schedule,
    /// What to send.
    pub prompt: String,
    /// Runs again after firing.
    pub is_recurring: bool,
    /// Next run, Unix ms.
    pub next_ms: u64,
}

impl Job {
    /// The schedule as written.
    pub fn schedule_text(&self) -> &str {
        &self.schedule.text
    }

    /// One line for lists: `cron_1 [0 8 * * *] recurring, next 2026-…Z: the prompt`.
    pub fn line(&self) -> String {
        let kind = if self.is_recurring { "recurring" } else { "once" };
        format!(
            "{} [{}] {kind}, next {}: {}",
            self.id,
            self.schedule.text,
            when(self.next_ms),
            self.prompt
        )
    }
}

#[derive(Debug, Default)]
struct Jobs {
    list: Vec<Job>,
    counter: u64,
}

/// The file form of the jobs.
#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    counter: u64,
    jobs: Vec<SavedJob>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedJob {
    id: String,
    cron: String,
    prompt: String,
    recurring: bool,
    next_ms: u64,
}

/// The jobs and the clock.
#[derive(Debug)]
pub struct Scheduler {
    jobs: Mutex<Jobs>,
    changed: Notify,
    start_wall_ms: u64,
    start: Instant,
    /// Where the jobs are kept, for a durable scheduler.
    file: Option<PathBuf>,
}

impl Scheduler {
    /// A scheduler whose clock reads `wall_ms` now.
    pub fn new(wall_ms: u64) -> Arc<Self> {
        Arc::new(Self {
            jobs: Mutex::new(Jobs::default()),
            changed: Notify::new(),
            start_wall_ms: wall_ms,
            start: Instant::now(),
            file: None,
        })
    }

    /// A scheduler whose jobs are kept in `file` (created when the first job is added)
    /// and restored from it now, with the missed-run rule applied ([`MISSED_GRACE_MS`]):
    /// besides the scheduler, one line per job the rule touched, for the user. A file
    /// that cannot be read or is not a job list is an error naming it.
    pub fn durable(file: &Path, wall_ms: u64) -> Result<(Arc<Self>, Vec<String>), String> {
        let saved: Saved = match std::fs::read(file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                format!(
                    "{} is not a list of scheduled jobs ({e}); fix or remove it",
                    file.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Saved { counter: 0, jobs: Vec::new() }
            }
            Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
        };
        let mut notes = Vec::new();
        let mut list = Vec::new();
        for j in saved.jobs {
            let schedule = Schedule::parse(&j.cron)
                .map_err(|e| format!("{}: job {}: {e}", file.display(), j.id))?;
            let mut job = Job {
                id: j.id,
                schedule,
                prompt: j.prompt,
                is_recurring: j.recurring,
                next_ms: j.next_ms,
            };
            if job.next_ms <= wall_ms {
                let due = when(job.next_ms);
                let what = format!("{} ({}, \"{}\")", job.id, job.schedule.text, job.prompt);
                if wall_ms - job.next_ms <= MISSED_GRACE_MS {
                    notes.push(format!(
                        "{what} was due at {due} while rab was not running: it runs now"
                    ));
                } else if let Some(next) =
                    job.is_recurring.then(|| job.schedule.next_after(wall_ms)).flatten()
                {
                    job.next_ms = next;
                    notes.push(format!(
                        "{what} missed its run at {due} (over 12 hours ago): skipped, next at {}",
                        when(next)
                    ));
                } else {
                    notes.push(format!(
                        "{what} missed its run at {due} (over 12 hours ago): dropped"
                    ));
                    continue;
                }
            }
            list.push(job);
        }
        let scheduler = Arc::new(Self {
            jobs: Mutex::new(Jobs { list, counter: saved.counter }),
            changed: Notify::new(),
            start_wall_ms: wall_ms,
            start: Instant::now(),
            file: Some(file.to_path_buf()),
        });
        if !notes.is_empty()
            && let Ok(jobs) = scheduler.jobs.lock()
        {
            scheduler.save(&jobs)?;
        }
        Ok((scheduler, notes))
    }

    /// Whether its jobs are kept in a file.
    pub fn is_durable(&self) -> bool {
        self.file.is_some()
    }

    /// Writes the jobs to the scheduler's file, if it has one (atomically, readable only
    /// by the user: prompts may say private things).
    fn save(&self, jobs: &Jobs) -> Result<(), String> {
        let Some(file) = &self.file else { return Ok(()) };
        let saved = Saved {
            counter: jobs.counter,
            jobs: jobs
                .list
                .iter()
                .map(|j| SavedJob {
                    id: j.id.clone(),
                    cron: j.schedule.text.clone(),
                    prompt: j.prompt.clone(),
                    recurring: j.is_recurring,
                    next_ms: j.next_ms,
                })
                .collect(),
        };
        let bytes = serde_json::to_vec_pretty(&saved).map_err(|e| e.to_string())?;
        write_private(file, &bytes).map_err(|e| format!("cannot save {}: {e}", file.display()))
    }

    /// Wall-clock now, Unix ms.
    pub fn now_ms(&self) -> u64 {
        self.start_wall_ms + self.start.elapsed().as_millis() as u64
    }

    /// Adds a job; errors name what is wrong.
    pub fn add(&self, cron: &str, prompt: &str, is_recurring: bool) -> Result<Job, String> {
        let schedule = Schedule::parse(cron)?;
        if prompt.trim().is_empty() {
            return Err("prompt is empty".into());
        }
        let next_ms = schedule.next_after(self.now_ms()).ok_or("the schedule never fires")?;
        let mut jobs = self.jobs.lock().map_err(|_| "the scheduler is unavailable")?;
        if jobs.list.len() >= MAX_JOBS {
            return Err(format!("at most {MAX_JOBS} jobs; delete one with cron_delete"));
        }
        jobs.counter += 1;
        let job = Job {
            id: format!("cron_{}", jobs.counter),
            schedule,
            prompt: prompt.to_owned(),
            is_recurring,
            next_ms,
        };
        jobs.list.push(job.clone());
        // A durable job that cannot be kept is not taken.
        if let Err(e) = self.save(&jobs) {
            jobs.list.pop();
            jobs.counter -= 1;
            return Err(e);
        }
        drop(jobs);
        self.changed.notify_one();
        Ok(job)
    }

    /// Removes a job; false when there is none with that id.
    pub fn remove(&self, id: &str) -> bool {
        let removed = self.jobs.lock().is_ok_and(|mut j| {
            let before = j.list.len();
            j.list.retain(|job| job.id != id);
            let removed = j.list.len() != before;
            if removed && let Err(e) = self.save(&j) {
                tracing::warn!("{e}");
            }
            removed
        });
        self.changed.notify_one();
        removed
    }

    /// The jobs, soonest first.
    pub fn list(&self) -> Vec<Job> {
        let mut list = self.jobs.lock().map(|j| j.list.clone()).unwrap_or_default();
        list.sort_by_key(|j| j.next_ms);
        list
    }

    /// Waits for the next due job and returns it (rescheduled or removed).
    pub async fn next_due(&self) -> Job {
        loop {
            let changed = self.changed.notified();
            let soonest = self.list().first().map(|j| j.next_ms);
            let now = self.now_ms();
            match soonest {
                Some(at) if at <= now => {
                    if let Some(job) = self.take_due(now) {
                        return job;
                    }
                }
                Some(at) => {
                    let wait = std::time::Duration::from_millis(at - now);
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }

    fn take_due(&self, now: u64) -> Option<Job> {
        let mut jobs = self.jobs.lock().ok()?;
        let i = jobs
            .list
            .iter()
            .enumerate()
            .filter(|(_, j)| j.next_ms <= now)
            .min_by_key(|(_, j)| j.next_ms)?
            .0;
        let fired = jobs.list[i].clone();
        if fired.is_recurring {
            match fired.schedule.next_after(now) {
                Some(next) => jobs.list[i].next_ms = next,
                None => {
                    jobs.list.remove(i);
                }
            }
        } else {
            jobs.list.remove(i);
        }
        if let Err(e) = self.save(&jobs) {
            tracing::warn!("{e}");
        }
        Some(fired)
    }
}

fn when(ms: u64) -> String {
    rab_session::time::rfc3339(ms)
}

/// `bytes` to `path` atomically, the file readable only by the user (as the bot's own
/// state file is written).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    rab_tools::atomic_write::write_atomic(path, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

mod tools;

pub use tools::{CronCreate, CronDelete, CronList, cron_tools};

#[cfg(test)]
mod tests;
