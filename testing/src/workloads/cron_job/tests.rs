//! Ports of `utils_test.go`'s `TestMostRecentScheduleTime`, `TestNextScheduleTime` and
//! `TestNextScheduleTimeDuration`, and robfig/cron's `TestNext`.

use super::*;

fn top_of_the_hour() -> Timestamp {
    "2016-05-19T10:00:00Z".parse().unwrap()
}

fn after(d: SignedDuration) -> Timestamp {
    top_of_the_hour() + d
}

fn mins(m: i64) -> SignedDuration {
    SignedDuration::from_mins(m)
}

fn cron_job(
    created: Timestamp,
    schedule: &str,
    last: Option<Timestamp>,
    deadline: Option<i64>,
) -> Value {
    let mut cj = json!({"metadata": {"name": "cj", "creationTimestamp": rfc3339(created)},
                        "spec": {"schedule": schedule}, "status": {}});
    if let Some(last) = last {
        cj["status"]["lastScheduleTime"] = json!(rfc3339(last));
    }
    if let Some(deadline) = deadline {
        cj["spec"]["startingDeadlineSeconds"] = json!(deadline);
    }
    cj
}

#[test]
fn most_recent_schedule_times_match_upstream() {
    let top = top_of_the_hour();
    let half = after(mins(30));
    let hours = SignedDuration::from_hours;
    #[allow(clippy::type_complexity)]
    let cases: Vec<(
        &str,
        Value,
        bool,
        Timestamp,
        Timestamp,
        Option<Timestamp>,
        Missed,
    )> = vec![
        (
            "now before next schedule",
            cron_job(top, "0 * * * *", None, None),
            false,
            top + SignedDuration::from_secs(30),
            top,
            None,
            Missed::None,
        ),
        (
            "now just after next schedule",
            cron_job(top, "0 * * * *", None, None),
            false,
            after(mins(61)),
            top,
            Some(after(mins(60))),
            Missed::None,
        ),
        (
            "missed 5 schedules",
            cron_job(
                after(SignedDuration::from_secs(10)),
                "0 * * * *",
                None,
                None,
            ),
            false,
            after(mins(301)),
            after(SignedDuration::from_secs(10)),
            Some(after(mins(300))),
            Missed::Few,
        ),
        (
            "complex schedule",
            cron_job(top, "30 6-16/4 * * 1-5", Some(half), None),
            false,
            after(hours(24) + mins(31)),
            half,
            Some(after(hours(24) + mins(30))),
            Missed::Few,
        ),
        (
            "another complex schedule",
            cron_job(top, "30 10,11,12 * * 1-5", Some(half), None),
            false,
            after(hours(30) + mins(30)),
            half,
            None,
            Missed::Few,
        ),
        (
            "longer diff",
            cron_job(top, "30 6-16/4 * * 1-5", Some(half), None),
            false,
            after(hours(96) + mins(31)),
            half,
            Some(after(hours(96) + mins(30))),
            Missed::Few,
        ),
        (
            "earliest being LastScheduleTime",
            cron_job(top, "*/5 * * * *", Some(half), None),
            false,
            after(mins(31)),
            half,
            None,
            Missed::None,
        ),
        (
            "within StartingDeadlineSeconds",
            cron_job(top, "*/5 * * * *", Some(half), Some(60)),
            false,
            after(mins(31)),
            half,
            None,
            Missed::None,
        ),
        (
            "outside StartingDeadlineSeconds",
            cron_job(top, "*/5 * * * *", Some(half), Some(60)),
            true,
            after(mins(32)),
            after(mins(31)),
            None,
            Missed::None,
        ),
    ];
    for (name, cj, include, now, earliest, recent, missed) in cases {
        let schedule = cron::parse(cj["spec"]["schedule"].as_str().unwrap()).unwrap();
        let (got_earliest, result) = most_recent_schedule_time(&cj, now, &schedule, include);
        assert_eq!(got_earliest, earliest, "{name}");
        assert_eq!(result, Ok((recent, missed)), "{name}");
    }
    // "rogue cronjob": February 31st never comes.
    let rogue = cron_job(
        after(SignedDuration::from_secs(10)),
        "59 23 31 2 *",
        None,
        None,
    );
    let schedule = cron::parse("59 23 31 2 *").unwrap();
    assert!(
        most_recent_schedule_time(&rogue, after(hours(1)), &schedule, false)
            .1
            .is_err()
    );
}

#[test]
fn next_schedule_times_are_the_following_activation_plus_a_delta() {
    // `TestNextScheduleTimeDuration`.
    let top = top_of_the_hour();
    let schedule = cron::parse("0 * * * *").unwrap();
    let delta = NEXT_SCHEDULE_DELTA;
    let cj = cron_job(top, "0 * * * *", None, None);
    assert_eq!(
        next_schedule_time_after(&cj, after(mins(30)), &schedule),
        Some(after(mins(60)) + delta)
    );
    let scheduled = cron_job(top, "0 * * * *", Some(after(mins(60))), None);
    assert_eq!(
        next_schedule_time_after(&scheduled, after(mins(61)), &schedule),
        Some(after(mins(120)) + delta)
    );
    let missed = cron_job(top, "0 * * * *", None, None);
    assert_eq!(
        next_schedule_time_after(&missed, after(mins(185)), &schedule),
        Some(after(mins(240)) + delta)
    );
}

#[test]
fn robfig_schedules_activate_as_upstream() {
    // robfig/cron `TestNext` (the five-field rows).
    let cases = [
        (
            "2012-07-09T14:45:00Z",
            "0/15 * * * *",
            "2012-07-09T15:00:00Z",
        ),
        (
            "2012-07-09T14:59:00Z",
            "0/15 * * * *",
            "2012-07-09T15:00:00Z",
        ),
        (
            "2012-07-09T23:46:00Z",
            "*/15 * * * *",
            "2012-07-10T00:00:00Z",
        ),
        (
            "2012-07-09T23:45:00Z",
            "20-35/15 * * * *",
            "2012-07-10T00:20:00Z",
        ),
        ("2012-07-09T23:35:00Z", "0 12 9 * *", "2012-08-09T12:00:00Z"),
        (
            "2012-07-09T23:35:00Z",
            "0 0 * Feb Mon",
            "2013-02-04T00:00:00Z",
        ),
        (
            "2012-07-09T23:35:00Z",
            "0 0 1 Apr ?",
            "2013-04-01T00:00:00Z",
        ),
        (
            "2012-07-09T23:35:00Z",
            "0 0 29 Feb ?",
            "2016-02-29T00:00:00Z",
        ),
        (
            "2012-07-09T23:35:00Z",
            "0 0 * * 1-5",
            "2012-07-10T00:00:00Z",
        ),
        ("2012-07-09T23:35:00Z", "@weekly", "2012-07-15T00:00:00Z"),
        ("2012-07-09T23:35:00Z", "@monthly", "2012-08-01T00:00:00Z"),
        (
            "2012-07-09T23:35:00Z",
            "TZ=America/New_York 0 0 * * *",
            "2012-07-10T04:00:00Z",
        ),
        (
            "2012-07-09T23:35:30.5Z",
            "@every 90s",
            "2012-07-09T23:37:00Z",
        ),
    ];
    for (from, spec, want) in cases {
        let schedule = cron::parse(spec).unwrap();
        let from: Timestamp = from.parse().unwrap();
        assert_eq!(
            schedule.next(from),
            Some(want.parse().unwrap()),
            "{spec} after {from}"
        );
    }
    assert_eq!(
        cron::parse("0 0 30 Feb ?").unwrap().next(top_of_the_hour()),
        None
    );
}

#[test]
fn jobs_are_named_after_their_scheduled_minute() {
    let cj = cron_job(top_of_the_hour(), "* * * * *", None, None);
    assert_eq!(job_name(&cj, top_of_the_hour()), "cj-24394200");
    let zone = jiff::tz::TimeZone::get("Europe/Paris").unwrap();
    assert_eq!(
        go_rfc3339(&top_of_the_hour().to_zoned(zone)),
        "2016-05-19T12:00:00+02:00"
    );
    assert_eq!(
        go_rfc3339(&top_of_the_hour().to_zoned(jiff::tz::TimeZone::UTC)),
        "2016-05-19T10:00:00Z"
    );
}
