use super::*;
use pretty_assertions::assert_eq;
use rab_agent::{AgentTool, ToolContext};

/// 2026-11-23T10:07:30Z.
const NOW: u64 = 1_795_428_450_000;

#[test]
fn schedules_parse_and_find_the_next_minute() {
    let every10 = Schedule::parse("*/10 * * * *").unwrap();
    assert_eq!(
        rab_session::time::rfc3339(every10.next_after(NOW).unwrap()),
        "2026-11-23T10:10:00.000Z"
    );
    let weekday9 = Schedule::parse("0 9 * * 1-5").unwrap();
    // The 23rd is a Monday: the next 09:00 on a weekday is the 24th.
    assert_eq!(
        rab_session::time::rfc3339(weekday9.next_after(NOW).unwrap()),
        "2026-11-24T09:00:00.000Z"
    );
    let new_year = Schedule::parse("30 0 1 1 *").unwrap();
    assert_eq!(
        rab_session::time::rfc3339(new_year.next_after(NOW).unwrap()),
        "2027-01-01T00:30:00.000Z"
    );
    for bad in ["* * *", "60 * * * *", "*/0 * * * *", "x * * * *", "5-1 * * * *"] {
        assert!(Schedule::parse(bad).is_err(), "{bad}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_job_fires_on_schedule_with_a_paused_clock() {
    let s = Scheduler::new(NOW);
    let (create, list, delete) = cron_tools(&s);
    let cx = || ToolContext::detached("c");
    create
        .execute(serde_json::json!({"cron": "*/10 * * * *", "prompt": "check the build"}), cx())
        .await
        .unwrap();
    create
        .execute(
            serde_json::json!({"cron": "0 12 * * *", "prompt": "lunch", "recurring": false}),
            cx(),
        )
        .await
        .unwrap();
    let started = tokio::time::Instant::now();
    let job = s.next_due().await;
    assert_eq!((job.id.as_str(), job.prompt.as_str()), ("cron_1", "check the build"));
    // 2.5 minutes of (paused, auto-advanced) time, no real waiting.
    assert_eq!(started.elapsed().as_secs(), 150);
    let again = s.next_due().await;
    assert_eq!(again.id, "cron_1");
    assert_eq!(started.elapsed().as_secs(), 750, "recurring: fired again 10 minutes later");
    let out = list.execute(serde_json::json!({}), cx()).await.unwrap();
    let rab_ai::Content::Text { text } = &out.content[0] else { panic!() };
    assert!(
        text.starts_with("cron_1 [*/10 * * * *] recurring, next 2026-11-23T10:30:00.000Z"),
        "{text}"
    );
    delete.execute(serde_json::json!({"id": "cron_1"}), cx()).await.unwrap();
    let lunch = s.next_due().await;
    assert_eq!(lunch.prompt, "lunch");
    assert!(s.list().is_empty(), "a one-off job is gone after it fired");
    let err = delete.execute(serde_json::json!({"id": "cron_9"}), cx()).await.unwrap_err();
    assert!(err.to_string().contains("no job cron_9"));
}

/// A durable scheduler keeps its jobs in a file across restarts; at start a missed run
/// of a recurring job is skipped when over 12 hours late (next time kept), and a file
/// that is not a job list is an error naming it.
#[tokio::test(start_paused = true)]
async fn durable_jobs_are_restored_with_the_missed_run_rule() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cron/chat.json");
    let (s, notes) = Scheduler::durable(&file, NOW).unwrap();
    assert!(notes.is_empty() && s.is_durable());
    s.add("0 9 * * *", "morning check", true).unwrap();
    s.add("0 11 * * *", "at eleven", false).unwrap();
    assert!(s.remove("cron_2"));
    s.add("*/10 * * * *", "often", true).unwrap();
    // Restarted two days later: the daily one missed by far more than 12 hours.
    let later = NOW + 2 * 86_400_000;
    let (s2, notes) = Scheduler::durable(&file, later).unwrap();
    let jobs = s2.list();
    assert_eq!(jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(), ["cron_3", "cron_1"]);
    assert!(jobs.iter().all(|j| j.next_ms > later), "{jobs:?}");
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("cron_1") && n.contains("skipped, next at")));
    assert_eq!(s2.add("0 1 * * *", "next id", true).unwrap().id, "cron_4", "ids go on");
    // Half an hour late: it runs once, now.
    let (s3, notes) = Scheduler::durable(&file, jobs[1].next_ms + 1_800_000).unwrap();
    assert!(notes.iter().any(|n| n.contains("cron_1") && n.contains("it runs now")), "{notes:?}");
    // cron_4 (01:00) and cron_1 (09:00) ran late within 12 hours; the ten-minute one
    // missed its run by almost a day and waits for its next time.
    assert_eq!(s3.next_due().await.id, "cron_4");
    assert_eq!(s3.next_due().await.id, "cron_1");
    assert!(notes.iter().any(|n| n.contains("cron_3") && n.contains("skipped")), "{notes:?}");
    std::fs::write(&file, "not json").unwrap();
    let err = Scheduler::durable(&file, NOW).unwrap_err();
    assert!(err.contains("chat.json is not a list of scheduled jobs"), "{err}");
}
