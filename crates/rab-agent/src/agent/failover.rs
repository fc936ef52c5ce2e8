//! Failover: when the model stays out of capacity after the provider's retries (rate
//! limited, overloaded, out of quota), the turn continues on the next of the session's
//! fallback models — of any provider and wire format; each adapter converts the
//! conversation, dropping thinking signatures that cannot cross. The next run starts on
//! the primary model again.

use rab_ai::Model;

use super::Agent;
use crate::event::{AgentEvent, EventSink};

/// A model to continue on, with its key.
#[derive(Clone, Debug)]
pub struct Fallback {
    /// The model.
    pub model: Model,
    /// Its key (`None` for servers that take none).
    pub api_key: Option<String>,
    /// What to do when its key is missing or rejected.
    pub auth_hint: Option<String>,
}

/// The fallback chain and where the agent is in it.
#[derive(Clone, Debug, Default)]
pub(super) struct Chain {
    /// In order of preference.
    pub fallbacks: Vec<Fallback>,
    /// How many fallbacks this run has moved past (0: on the primary).
    pub used: usize,
    /// The primary's model and key, while on a fallback.
    pub primary: Option<Fallback>,
}

/// `provider/model`.
pub(super) fn model_ref(m: &Model) -> String {
    format!("{}/{}", m.provider, m.id)
}

impl Agent {
    /// The models to continue on, in order, when the model stays out of capacity.
    pub fn set_fallbacks(&mut self, fallbacks: Vec<Fallback>) {
        self.chain.fallbacks = fallbacks;
    }

    /// The fallback models.
    pub fn fallbacks(&self) -> &[Fallback] {
        &self.chain.fallbacks
    }

    /// Back on the primary model after a failover (runs start there). `true` when the
    /// model changed.
    pub fn restore_primary(&mut self) -> bool {
        self.chain.used = 0;
        let Some(primary) = self.chain.primary.take() else { return false };
        self.config.options.api_key = primary.api_key;
        self.config.options.auth_hint = primary.auth_hint;
        self.config.model = primary.model;
        true
    }

    /// The model in use becomes the primary (the user switched models).
    pub fn forget_primary(&mut self) {
        self.chain.used = 0;
        self.chain.primary = None;
    }

    /// Moves to the next fallback after `error`, emitting the switch; `false` when the
    /// error is not about capacity or no fallback is left.
    pub(super) fn fail_over(
        &mut self,
        error: &rab_ai::Error,
        sink: &mut dyn EventSink,
    ) -> Result<bool, String> {
        if !error.is_capacity() {
            return Ok(false);
        }
        let Some(next) = self.chain.fallbacks.get(self.chain.used).cloned() else {
            return Ok(false);
        };
        self.chain.used += 1;
        let from = model_ref(&self.config.model);
        let options = &mut self.config.options;
        let old = Fallback {
            api_key: std::mem::replace(&mut options.api_key, next.api_key),
            auth_hint: std::mem::replace(&mut options.auth_hint, next.auth_hint),
            model: std::mem::replace(&mut self.config.model, next.model),
        };
        if self.chain.primary.is_none() {
            self.chain.primary = Some(old);
        }
        tracing::info!(%from, to = %model_ref(&self.config.model), "failing over");
        sink.emit(AgentEvent::Fallback {
            from,
            to: model_ref(&self.config.model),
            message: error.to_string(),
            cost: self.config.model.cost.clone(),
        })?;
        Ok(true)
    }
}
