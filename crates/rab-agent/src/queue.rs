//! Steering and follow-up queues: messages typed while the agent works.
//!
//! Steering is injected after the current tool batch (skipping the batch's remaining
//! calls); follow-ups wait until the agent would otherwise stop.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rab_ai::Message;

/// How many queued messages are taken at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DrainMode {
    /// One message per injection point.
    #[default]
    OneAtATime,
    /// Everything queued.
    All,
}

#[derive(Debug, Default)]
struct Inner {
    steering: VecDeque<Message>,
    follow_up: VecDeque<Message>,
}

/// A cloneable handle to an agent's queues, usable from other tasks while it runs.
#[derive(Clone, Debug, Default)]
pub struct Queues {
    inner: Arc<Mutex<Inner>>,
}

impl Queues {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a steering message.
    pub fn steer(&self, message: Message) {
        self.lock().steering.push_back(message);
    }

    /// Queues a follow-up message.
    pub fn follow_up(&self, message: Message) {
        self.lock().follow_up.push_back(message);
    }

    /// How many messages wait (steering and follow-up).
    pub fn len(&self) -> usize {
        let inner = self.lock();
        inner.steering.len() + inner.follow_up.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether steering is waiting.
    pub fn has_steering(&self) -> bool {
        !self.lock().steering.is_empty()
    }

    /// Takes steering messages per `mode`.
    pub fn take_steering(&self, mode: DrainMode) -> Vec<Message> {
        drain(&mut self.lock().steering, mode)
    }

    /// Takes follow-up messages per `mode`.
    pub fn take_follow_up(&self, mode: DrainMode) -> Vec<Message> {
        drain(&mut self.lock().follow_up, mode)
    }

    /// Removes and returns everything queued (steering first), e.g. to put it back in
    /// the editor after an interrupt.
    pub fn clear(&self) -> Vec<Message> {
        let mut inner = self.lock();
        let mut all: Vec<Message> = inner.steering.drain(..).collect();
        all.extend(inner.follow_up.drain(..));
        all
    }
}

fn drain(q: &mut VecDeque<Message>, mode: DrainMode) -> Vec<Message> {
    match mode {
        DrainMode::OneAtATime => q.pop_front().into_iter().collect(),
        DrainMode::All => q.drain(..).collect(),
    }
}
