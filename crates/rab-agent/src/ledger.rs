//! One spending ledger per session: what the main agent and every sub-agent spent, and
//! the one limit they share. Before each request an agent reserves its estimate; the
//! reservation fails when the spending so far, the other agents' open reservations and
//! this estimate together would pass the limit, so parallel sub-agents cannot each
//! spend the whole budget. The response's real cost replaces the reservation.

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
    fn add(&mut self, usage: &Usage, cost: f64) {
        self.usage.input += usage.input;
        self.usage.output += usage.output;
        self.usage.cache_read += usage.cache_read;
        self.usage.cache_write += usage.cache_write;
        self.usage.reasoning += usage.reasoning;
        self.cost += cost;
        // Dollars without tokens (a handoff's summary, priced elsewhere) are no request.
        self.requests += u32::from(usage.total() > 0);
    }
}

#[derive(Debug, Default)]
struct Book {
    main: Spending,
    sub: Spending,
    /// Estimates of requests under way.
    reserved: f64,
}

/// What a session's agents spent, and their shared limit.
#[derive(Debug, Default)]
pub struct Ledger {
    limit: Option<f64>,
    book: Mutex<Book>,
}

/// A request would pass the limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverBudget {
    /// The limit, in dollars.
    pub limit: f64,
    /// Spent so far by every agent, with what requests under way reserved.
    pub spent: f64,
}

impl Ledger {
    /// A ledger with an optional limit in dollars.
    pub fn new(limit: Option<f64>) -> Arc<Self> {
        Arc::new(Self { limit, book: Mutex::new(Book::default()) })
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

    /// Reserves `estimate` dollars for a request, unless that would pass the limit.
    pub fn reserve(&self, estimate: f64) -> Result<f64, OverBudget> {
        let Some(limit) = self.limit else { return Ok(0.0) };
        let mut b = self.book();
        let spent = b.main.cost + b.sub.cost + b.reserved;
        if spent + estimate > limit {
            return Err(OverBudget { limit, spent });
        }
        b.reserved += estimate;
        Ok(estimate)
    }

    /// Records a response (`reserved`: what its request reserved, now released).
    pub fn record(&self, is_sub: bool, usage: &Usage, cost: f64, reserved: f64) {
        let mut b = self.book();
        b.reserved = (b.reserved - reserved).max(0.0);
        if is_sub { b.sub.add(usage, cost) } else { b.main.add(usage, cost) }
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

    pub(crate) fn reserve(&self, estimate: f64) -> Result<f64, OverBudget> {
        self.ledger.reserve(estimate)
    }

    pub(crate) fn record(&self, usage: &Usage, cost: f64, reserved: f64) {
        self.ledger.record(self.is_sub, usage, cost, reserved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_reservations_share_one_limit() {
        let ledger = Ledger::new(Some(1.0));
        let a = Spend::new(ledger.clone());
        let b = a.for_sub_agent();
        let ra = a.reserve(0.6).unwrap();
        // B's estimate fits the limit alone, not with A's request under way.
        assert_eq!(b.reserve(0.5), Err(OverBudget { limit: 1.0, spent: 0.6 }));
        a.record(&Usage { input: 10, ..Usage::default() }, 0.3, ra);
        let rb = b.reserve(0.5).unwrap();
        b.record(&Usage { output: 5, ..Usage::default() }, 0.9, rb);
        assert!((ledger.spent() - 1.2).abs() < 1e-9);
        assert_eq!(ledger.sub_agents().requests, 1);
        assert_eq!(ledger.sub_agents().usage.output, 5);
        assert_eq!(ledger.main_agent().usage.input, 10);
        assert!(a.reserve(0.0001).is_err());
    }

    #[test]
    fn without_a_limit_everything_is_counted_and_nothing_refused() {
        let ledger = Ledger::new(None);
        let s = Spend::new(ledger.clone()).for_sub_agent();
        assert_eq!(s.reserve(1e9), Ok(0.0));
        s.record(&Usage::default(), 2.0, 0.0);
        assert_eq!(ledger.sub_agents().cost, 2.0);
    }
}
