use super::*;
use tokio_util::sync::CancellationToken;

fn need(input: f64, max_tokens: u64) -> Need {
    // $1 per thousand output tokens.
    Need { input, per_output_token: 0.001, max_tokens, min_tokens: 100 }
}

#[tokio::test]
async fn the_worst_case_is_reserved_and_the_output_limit_cut_to_fit() {
    let ledger = Ledger::new(Some(1.0));
    let a = Spend::new(ledger.clone());
    let cancel = CancellationToken::new();
    // $0.1 of input and up to 2,000 tokens ($2): cut to the 900 tokens that fit.
    let r = a.reserve(need(0.1, 2_000), &cancel).await.unwrap();
    assert_eq!(r.max_tokens(), Some(900));
    assert!((r.dollars() - 1.0).abs() < 1e-9);
    a.record("m", &Usage { input: 10, output: 300, ..Usage::default() }, 0.4, r);
    assert!((ledger.spent() - 0.4).abs() < 1e-9);
    // The next one gets what is left.
    let r = a.reserve(need(0.1, 2_000), &cancel).await.unwrap();
    assert_eq!(r.max_tokens(), Some(500));
    drop(r);
    // Not even the minimum fits and nothing is under way: refused with the reason.
    a.record("m", &Usage::default(), 0.55, Reservation::none());
    let refused = a.reserve(need(0.01, 2_000), &cancel).await.unwrap_err();
    assert!(matches!(refused, Refused::Over(OverBudget { limit, .. }) if limit == 1.0));
}

#[tokio::test]
async fn a_request_that_does_not_fit_waits_for_those_under_way() {
    let ledger = Ledger::new(Some(1.0));
    let a = Spend::new(ledger.clone());
    let b = a.for_sub_agent();
    let cancel = CancellationToken::new();
    let ra = a.reserve(need(0.0, 950), &cancel).await.unwrap();
    let waiting = tokio::spawn({
        let b = b.clone();
        let cancel = cancel.clone();
        async move { b.reserve(need(0.0, 500), &cancel).await.map(|r| r.max_tokens()) }
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!waiting.is_finished(), "it waits while A's request is under way");
    // A's response cost less than its worst case: B fits now.
    a.record("m", &Usage { output: 200, ..Usage::default() }, 0.2, ra);
    assert_eq!(waiting.await.unwrap(), Ok(Some(500)));
    assert_eq!(ledger.sub_agents().requests, 0);
}

#[tokio::test]
async fn a_wait_ends_in_a_refusal_when_the_room_is_spent_and_on_cancel() {
    let ledger = Ledger::new(Some(1.0));
    let a = Spend::new(ledger.clone());
    let cancel = CancellationToken::new();
    let ra = a.reserve(need(0.0, 950), &cancel).await.unwrap();
    let b = a.for_sub_agent();
    let waiting = tokio::spawn({
        let cancel = cancel.clone();
        async move { b.reserve(need(0.0, 500), &cancel).await.map(|r| r.max_tokens()) }
    });
    tokio::task::yield_now().await;
    a.record("m", &Usage { output: 950, ..Usage::default() }, 0.95, ra);
    assert!(matches!(waiting.await.unwrap(), Err(Refused::Over(_))));
    // Cancelled while waiting.
    let ledger = Ledger::new(Some(1.0));
    let a = Spend::new(ledger.clone());
    let _held = a.reserve(need(0.0, 1_000), &cancel).await.unwrap();
    let other = CancellationToken::new();
    other.cancel();
    assert_eq!(a.reserve(need(0.0, 500), &other).await.unwrap_err(), Refused::Cancelled);
}

#[tokio::test]
async fn a_reservation_dropped_unpriced_is_released() {
    let ledger = Ledger::new(Some(1.0));
    let a = Spend::new(ledger.clone());
    let cancel = CancellationToken::new();
    drop(a.reserve(need(0.0, 1_000), &cancel).await.unwrap());
    assert_eq!(a.reserve(need(0.0, 1_000), &cancel).await.unwrap().max_tokens(), Some(1_000));
}

#[tokio::test]
async fn without_a_limit_everything_is_counted_and_nothing_refused() {
    let ledger = Ledger::new(None);
    let s = Spend::new(ledger.clone()).for_sub_agent();
    let r = s.reserve(need(1e9, 1), &CancellationToken::new()).await.unwrap();
    assert_eq!(r.max_tokens(), None);
    s.record("m", &Usage::default(), 2.0, r);
    assert_eq!(ledger.sub_agents().cost, 2.0);
}

#[test]
fn each_model_has_its_own_spending_main_and_sub_agents_together() {
    let ledger = Ledger::new(None);
    let main = Spend::new(ledger.clone());
    let sub = main.for_sub_agent();
    let searched = Usage { input: 10, output: 5, web_searches: 2, ..Usage::default() };
    main.record("big", &searched, 0.5, Reservation::none());
    sub.record(
        "small",
        &Usage { input: 3, output: 1, ..Usage::default() },
        0.01,
        Reservation::none(),
    );
    main.record("big", &Usage { cache_read: 7, ..Usage::default() }, 0.25, Reservation::none());
    let models = ledger.by_model();
    assert_eq!(models.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(), ["big", "small"]);
    let big = models[0].1;
    assert_eq!((big.usage.input, big.usage.cache_read, big.usage.web_searches), (10, 7, 2));
    assert_eq!((big.cost, big.requests), (0.75, 2));
    assert_eq!((models[1].1.usage.input, models[1].1.cost), (3, 0.01));
    // Web searches count in the agents' sums too.
    assert_eq!(ledger.main_agent().usage.web_searches, 2);
}
