//! The session's spending survives what replaces its agent: a `/reload` (also run when
//! `/settings` closes) carries it over, and a resumed session counts what its tape
//! records, so `/cost`, the footer and `--max-budget-usd` see the session's whole total.

use rab_agent::Spending;
use rab_ai::ModelCost;
use rab_session::Spent;

use crate::AgentSession;
use crate::session::add_request;

impl AgentSession {
    /// Takes over `old`'s usage, cost and per-request list, and what its ledger
    /// counted for the main agent and sub-agents (a reload of the same session).
    pub fn take_spending_of(&mut self, old: &AgentSession) {
        self.totals = old.totals;
        self.turns = old.turns.clone();
        self.agent.restore_spent(old.agent.spent());
        if let (Some(new), Some(was)) = (&self.agent.config().spend, &old.agent.config().spend) {
            let l = was.ledger();
            new.ledger().set_spent(l.main_agent(), l.sub_agents(), l.by_model());
        }
    }

    /// Counts what the tape records as spent (a resumed session): each response at
    /// the prices `price` gives for its provider and model (the session's model's when
    /// unknown), and what sub-agents reported spending.
    pub fn restore_spending(
        &mut self,
        spent: &[Spent],
        price: impl Fn(&str, &str) -> Option<ModelCost>,
    ) {
        let current = self.agent.config().model.cost.clone();
        let (mut main, mut sub) = (Spending::default(), Spending::default());
        let mut models: Vec<(String, Spending)> = Vec::new();
        // Responses come in runs of one model: its price is looked up once a run.
        let mut priced: Option<(&str, &str, ModelCost)> = None;
        for s in spent {
            match s {
                Spent::Response { provider, model, usage } => {
                    if !matches!(&priced, Some((p, m, _)) if p == provider && m == model) {
                        let cost = price(provider, model).unwrap_or_else(|| current.clone());
                        priced = Some((provider, model, cost));
                    }
                    let Some((_, _, cost)) = &priced else { continue };
                    add_request(&mut self.totals, &mut self.turns, usage, cost, false);
                    let dollars = cost.of(usage);
                    main.usage.add(usage);
                    main.cost += dollars;
                    main.requests += 1;
                    rab_agent::add_to_model(&mut models, model, usage, dollars);
                }
                Spent::SubAgent(dollars) => sub.cost += dollars,
            }
        }
        self.agent.restore_spent(main.cost);
        if let Some(spend) = &self.agent.config().spend {
            spend.ledger().set_spent(main, sub, models);
        }
    }
}
