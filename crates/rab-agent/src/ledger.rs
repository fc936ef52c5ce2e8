//! One spending ledger per session: what the main agent and every sub-agent spent, and
//! the one limit they share. Before each request an agent reserves its worst case: the
//! input's price plus its output limit at the output price. The output limit is cut to
//! what fits beside the spending so far and the other requests under way; when not even
//! a useful minimum fits, the request waits for those under way to be priced, or is
//! refused when none is. A response can never bill more output than its limit, so the
//! agents together spend at most the limit plus the error of the input's estimate. The
//! response's real cost replaces the reservation.

use std::sync::{Arc, Mutex, PoisonError};

use rab_ai::Usage;

/// Usage, cost and requests of one kind of agent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spending {
    /// Summed usage of every response.
    pub usage: Usage,
    /// Dollars.
    pub cost: f64,
    /// Responses counted.
    pub requests: u32,
}

impl Spending {
    /// Counts one response (or dollars spent without one, with no tokens).
    pub fn add(&mut self, usage: &Usage, cost: f64) {
        self.usage.add(usage);
        self.cost += cost;
        // Dollars without tokens (a handoff's summary, priced elsewhere) are no request.
        self.requests += u32::from(usage.total() > 0);
    }
}

/// Counts a response of `model` in a per-model list ([`Ledger::by_model`]'s).
pub fn add_to_model(models: &mut Vec<(String, Spending)>, model: &str, usage: &Usage, cost: f64) {
    match models.iter_mut().find(|(m, _)| m == model) {
        Some((_, s)) => s.add(usage, cost),
        None => {
            let mut s = Spending::default();
            s.add(usage, cost);
            models.push((model.to_owned(), s));
        }
    }
}

#[derive(Debug, Default)]
struct Book {
    main: Spending,
    sub: Spending,
    /// What each model spent, main and sub-agents together, in the order first used
    /// (a handful of models at most).
    models: Vec<(String, Spending)>,
    /// Worst cases of the requests under way.
    reserved: f64,
    /// How many requests are under way.
    open: u32,
}

/// What a session's agents spent, and their shared limit.
#[derive(Debug, Default)]
pub struct Ledger {
    limit: Option<f64>,
    book: Mutex<Book>,
    /// Woken when a request under way is priced (its reservation released).
    released: tokio::sync::Notify,
}

/// A request would pass the limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverBudget {
    /// The limit, in dollars.
    pub limit: f64,
    /// Spent so far by every agent, with what requests under way reserved.
    pub spent: f64,
}

/// What a request needs reserved before it is sent: its worst case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Need {
    /// Dollars of its input.
    pub input: f64,
    /// Dollars per output token.
    pub per_output_token: f64,
    /// The output limit it would be sent with.
    pub max_tokens: u64,
    /// The least output limit worth sending it with: when not even that fits, it waits
    /// for the requests under way, or is refused when there are none.
    pub min_tokens: u64,
}

/// Why a reservation was not made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Refused {
    /// The worst case does not fit the limit, and no request under way could free room.
    Over(OverBudget),
    /// Cancelled while waiting for room.
    Cancelled,
}

/// A request's reservation: its worst case, held against the limit until the response
/// is priced ([`Spend::record`]); dropped unpriced (the request failed before it
/// streamed), it is released.
#[derive(Debug)]
pub struct Reservation {
    ledger: Option<Arc<Ledger>>,
    dollars: f64,
    max_tokens: Option<u64>,
}

impl Reservation {
    /// No reservation: no limit, or a request outside the budget's count.
    pub fn none() -> Self {
        Self { ledger: None, dollars: 0.0, max_tokens: None }
    }

    /// The output limit the request must be sent with to stay within its reservation
    /// (`None`: no limit applies).
    pub fn max_tokens(&self) -> Option<u64> {
        self.max_tokens
    }

    /// The dollars held.
    pub fn dollars(&self) -> f64 {
        self.dollars
    }

    fn release(&mut self) {
        if let Some(ledger) = self.ledger.take() {
            let mut b = ledger.book();
            b.reserved = (b.reserved - self.dollars).max(0.0);
            b.open = b.open.saturating_sub(1);
            drop(b);
            ledger.released.notify_waiters();
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.release();
    }
}

enum Attempt {
    Granted { dollars: f64, max_tokens: u64 },
    Wait,
    Over(OverBudget),
}

impl Ledger {
    /// A ledger with an optional limit in dollars.
    pub fn new(limit: Option<f64>) -> Arc<Self> {
        Arc::new(Self { limit, ..Self::default() })
    }

    /// The limit, if any.
    pub fn limit(&self) -> Option<f64> {
        self.limit
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Dollars spent by every agent.
    pub fn spent(&self) -> f64 {
        let b = self.book();
        b.main.cost + b.sub.cost
    }

    /// What the main agent spent.
    pub fn main_agent(&self) -> Spending {
        self.book().main
    }

    /// What sub-agents spent, all together.
    pub fn sub_agents(&self) -> Spending {
        self.book().sub
    }

    /// One try: the largest output limit up to `need.max_tokens` whose worst case fits
    /// beside what was spent and what the requests under way reserved.
    fn try_reserve(&self, limit: f64, need: &Need) -> Attempt {
        let mut b = self.book();
        let committed = b.main.cost + b.sub.cost + b.reserved;
        let room = limit - committed - need.input;
        let affordable = if room < 0.0 {
            0
        } else if need.per_output_token > 0.0 {
            // Saturates for a room too large to count in tokens.
            (room / need.per_output_token).floor() as u64
        } else {
            u64::MAX
        };
        let max_tokens = need.max_tokens.min(affordable);
        if room >= 0.0 && max_tokens >= need.min_tokens.min(need.max_tokens).max(1) {
            let dollars = need.input + max_tokens as f64 * need.per_output_token;
            b.reserved += dollars;
            b.open += 1;
            Attempt::Granted { dollars, max_tokens }
        } else if b.open > 0 {
            Attempt::Wait
        } else {
            Attempt::Over(OverBudget { limit, spent: committed })
        }
    }

    /// Reserves a request's worst case: at once when it fits (with the output limit cut
    /// to what fits, never below `need.min_tokens`), after requests under way are priced
    /// when it fits only then, and refused when it cannot fit.
    pub async fn reserve(
        self: &Arc<Self>,
        need: Need,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Reservation, Refused> {
        let Some(limit) = self.limit else { return Ok(Reservation::none()) };
        loop {
            // Registered before the try, so a release between the try and the wait is
            // not missed.
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            match self.try_reserve(limit, &need) {
                Attempt::Granted { dollars, max_tokens } => {
                    return Ok(Reservation {
                        ledger: Some(self.clone()),
                        dollars,
                        max_tokens: Some(max_tokens),
                    });
                }
                Attempt::Over(over) => return Err(Refused::Over(over)),
                Attempt::Wait => {
                    tracing::debug!("budget: waiting for requests under way to be priced");
                    tokio::select! {
                        () = &mut released => {}
                        () = cancel.cancelled() => return Err(Refused::Cancelled),
                    }
                }
            }
        }
    }

    /// Sets what the session's agents have spent (a resumed or reloaded session: its
    /// earlier requests), so the limit applies to the session's whole spending, and
    /// what each model spent of it, as [`Ledger::by_model`] lists it. Requests under way
    /// keep their reservations.
    pub fn set_spent(&self, main: Spending, sub: Spending, models: Vec<(String, Spending)>) {
        let mut b = self.book();
        b.main = main;
        b.sub = sub;
        b.models = models;
    }

    /// What each model spent, main agent and sub-agents together, in the order first
    /// used. A resumed session's earlier responses count to their models; what its
    /// sub-agents spent before is not listed (the tape keeps only their dollars).
    pub fn by_model(&self) -> Vec<(String, Spending)> {
        self.book().models.clone()
    }

    /// Records a response of `model`, releasing what its request reserved.
    pub fn record(
        &self,
        is_sub: bool,
        model: &str,
        usage: &Usage,
        cost: f64,
        mut reservation: Reservation,
    ) {
        {
            let mut b = self.book();
            if is_sub {
                b.sub.add(usage, cost)
            } else {
                b.main.add(usage, cost)
            }
            add_to_model(&mut b.models, model, usage, cost);
        }
        reservation.release();
    }
}

/// An agent's handle on its session's ledger.
#[derive(Clone, Debug)]
pub struct Spend {
    ledger: Arc<Ledger>,
    is_sub: bool,
}

impl Spend {
    /// The main agent's handle.
    pub fn new(ledger: Arc<Ledger>) -> Self {
        Self { ledger, is_sub: false }
    }

    /// The handle a sub-agent gets: same ledger, counted as a sub-agent.
    pub fn for_sub_agent(&self) -> Self {
        Self { ledger: self.ledger.clone(), is_sub: true }
    }

    /// The ledger.
    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// Whether this is a sub-agent's handle.
    pub fn is_sub_agent(&self) -> bool {
        self.is_sub
    }

    pub(crate) async fn reserve(
        &self,
        need: Need,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Reservation, Refused> {
        self.ledger.reserve(need, cancel).await
    }

    /// Records the cost of a response of `model`, releasing `reservation`.
    pub fn record(&self, model: &str, usage: &Usage, cost: f64, reservation: Reservation) {
        self.ledger.record(self.is_sub, model, usage, cost, reservation);
    }
}

#[cfg(test)]
mod tests;
