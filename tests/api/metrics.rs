//! `GET /metrics`: Prometheus text that parses, and counters that move with traffic.

use std::collections::BTreeMap;

use actix_web::test::TestRequest;
use serde_json::json;

use crate::common::play::{action_count, game_of, get, legal_action, post};
use crate::common::{self, TestDb, register, send};

/// One sample of the text exposition format.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the Prometheus text format strictly enough to catch a malformed exposition:
/// `# HELP name text` / `# TYPE name type` comments, and samples
/// `name{label="value",…} number [timestamp]`, label values with `\\`, `\"`, `\n` escapes.
fn parse(text: &str) -> Result<Vec<Sample>, String> {
    fn is_name(s: &str, colon: bool) -> bool {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
    }
    fn number(s: &str) -> Option<f64> {
        match s {
            "+Inf" => Some(f64::INFINITY),
            "-Inf" => Some(f64::NEG_INFINITY),
            "NaN" => Some(f64::NAN),
            _ => s.parse().ok(),
        }
    }
    let mut samples = Vec::new();
    let mut types = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let err = |why: &str| format!("line {}: {why}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut parts = comment.trim_start().splitn(3, ' ');
            match parts.next() {
                Some("HELP") => {
                    let name = parts.next().ok_or_else(|| err("HELP without a name"))?;
                    if !is_name(name, true) {
                        return Err(err("bad metric name"));
                    }
                }
                Some("TYPE") => {
                    let name = parts.next().ok_or_else(|| err("TYPE without a name"))?;
                    let kind = parts.next().ok_or_else(|| err("TYPE without a type"))?;
                    if !matches!(
                        kind,
                        "counter" | "gauge" | "histogram" | "summary" | "untyped"
                    ) {
                        return Err(err("unknown type"));
                    }
                    types.insert(name.to_owned(), kind.to_owned());
                }
                _ => {}
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).ok_or_else(|| err("no value"))?;
        let name = &line[..name_end];
        if !is_name(name, true) {
            return Err(err("bad metric name"));
        }
        let mut rest = &line[name_end..];
        let mut labels = BTreeMap::new();
        if let Some(after) = rest.strip_prefix('{') {
            let mut chars = after.char_indices().peekable();
            loop {
                // A label name, `=`, a quoted value, then `,` or `}`.
                let start = chars
                    .peek()
                    .map(|(i, _)| *i)
                    .ok_or_else(|| err("open labels"))?;
                if after[start..].starts_with('}') {
                    chars.next();
                    break;
                }
                let eq = after[start..]
                    .find('=')
                    .ok_or_else(|| err("label without ="))?
                    + start;
                let label = &after[start..eq];
                if !is_name(label, false) {
                    return Err(err("bad label name"));
                }
                while chars.peek().is_some_and(|(i, _)| *i <= eq) {
                    chars.next();
                }
                if chars.next().map(|(_, c)| c) != Some('"') {
                    return Err(err("label value not quoted"));
                }
                let mut value = String::new();
                loop {
                    match chars
                        .next()
                        .ok_or_else(|| err("unterminated label value"))?
                    {
                        (_, '\\') => match chars.next().map(|(_, c)| c) {
                            Some('\\') => value.push('\\'),
                            Some('"') => value.push('"'),
                            Some('n') => value.push('\n'),
                            _ => return Err(err("bad escape")),
                        },
                        (_, '"') => break,
                        (_, c) => value.push(c),
                    }
                }
                labels.insert(label.to_owned(), value);
                match chars.next().map(|(_, c)| c) {
                    Some(',') => {}
                    Some('}') => break,
                    _ => return Err(err("expected , or }")),
                }
            }
            let consumed = chars.peek().map_or(after.len(), |(i, _)| *i);
            rest = &after[consumed..];
        }
        let mut fields = rest
            .strip_prefix(' ')
            .ok_or_else(|| err("no space before the value"))?
            .split(' ');
        let value = fields
            .next()
            .and_then(number)
            .ok_or_else(|| err("bad value"))?;
        if let Some(ts) = fields.next()
            && ts.parse::<i64>().is_err()
        {
            return Err(err("bad timestamp"));
        }
        if fields.next().is_some() {
            return Err(err("trailing fields"));
        }
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .filter(|base| types.contains_key(*base))
            .unwrap_or(name);
        if !types.contains_key(family) {
            return Err(err("sample without a TYPE line"));
        }
        samples.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    Ok(samples)
}

/// The sum of the samples named `name` whose labels include `want`.
fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

async fn scrape<S, B>(app: &S) -> Vec<Sample>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let reply = send(app, TestRequest::get().uri("/metrics")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    parse(&reply.text).unwrap_or_else(|e| panic!("{e}\n{}", reply.text))
}

#[test]
fn the_parser_refuses_malformed_lines() {
    let ok = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"{id}\",y=\"q\\\"\"} 3\n";
    let samples = parse(ok).unwrap();
    assert_eq!(samples[0].labels["x"], "{id}");
    assert_eq!(samples[0].labels["y"], "q\"");
    for bad in [
        "# TYPE a counter\na 1 2 3\n",
        "# TYPE a counter\na{x=1} 1\n",
        "# TYPE a counter\na{x=\"1\" 1\n",
        "# TYPE a counter\na one\n",
        "b 1\n",
        "# TYPE a counter\n1a 1\n",
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}

#[actix_web::test]
async fn metrics_are_public_prometheus_text_that_parses() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    send(&app, TestRequest::get().uri("/healthz")).await;
    // A request that uses the database, so the pool has opened a connection (on SQLite it
    // opens none ahead).
    send(&app, TestRequest::get().uri("/readyz")).await;
    let reply = send(&app, TestRequest::get().uri("/metrics")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.content_type(), "text/plain; version=0.0.4");
    let samples = parse(&reply.text).unwrap_or_else(|e| panic!("{e}\n{}", reply.text));
    for name in [
        "leekha_actions_applied_total",
        "leekha_version_conflicts_total",
        "leekha_turn_timeouts_total",
        "leekha_db_pool_connections",
        "leekha_db_pool_idle_connections",
        "leekha_db_pool_max_connections",
        "leekha_db_up",
        "leekha_active_games",
        "leekha_open_streams",
        "leekha_max_streams",
        "leekha_group_commit_writes_total",
        "leekha_group_commit_statements_total",
        "leekha_http_requests_total",
        "leekha_http_request_duration_seconds_bucket",
        "leekha_http_request_duration_seconds_count",
    ] {
        assert!(
            samples.iter().any(|s| s.name == name),
            "{name} missing:\n{}",
            reply.text
        );
    }
    assert_eq!(value(&samples, "leekha_db_up", &[]), 1.0);
    assert!(value(&samples, "leekha_db_pool_max_connections", &[]) >= 1.0);
    assert!(value(&samples, "leekha_db_pool_connections", &[]) >= 1.0);

    let spec = send(&app, TestRequest::get().uri("/openapi.json")).await;
    let op = &spec.json["paths"]["/metrics"]["get"];
    assert_eq!(op["tags"][0], "operations");
    assert_eq!(op["security"], serde_json::json!([]), "public: no scheme");
}

#[actix_web::test]
async fn request_counters_move_with_traffic_by_route_pattern_and_status() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let player = register(&app, "counted").await;
    let game = game_of(&app, std::slice::from_ref(&player), json!({})).await;
    let route = [
        ("method", "GET"),
        ("route", "/api/v1/games/{id}"),
        ("status", "200"),
    ];
    let before = scrape(&app).await;
    for _ in 0..3 {
        let r = get(&app, &format!("/api/v1/games/{game}"), &player.access).await;
        assert_eq!(r.status, 200);
    }
    get(
        &app,
        &format!("/api/v1/games/{}", uuid::Uuid::new_v4()),
        &player.access,
    )
    .await
    .assert_problem(404, "not_found");
    send(&app, TestRequest::get().uri("/no/such/path/1")).await;
    send(&app, TestRequest::get().uri("/no/such/path/2")).await;
    let after = scrape(&app).await;

    let delta =
        |name: &str, want: &[(&str, &str)]| value(&after, name, want) - value(&before, name, want);
    assert_eq!(delta("leekha_http_requests_total", &route), 3.0);
    assert_eq!(
        delta(
            "leekha_http_requests_total",
            &[("route", "/api/v1/games/{id}"), ("status", "404")]
        ),
        1.0
    );
    assert_eq!(
        delta(
            "leekha_http_requests_total",
            &[("route", "unmatched"), ("status", "404")]
        ),
        2.0
    );
    assert_eq!(
        delta(
            "leekha_http_request_duration_seconds_count",
            &[("method", "GET"), ("route", "/api/v1/games/{id}")]
        ),
        4.0
    );
    assert_eq!(
        delta(
            "leekha_http_request_duration_seconds_bucket",
            &[("route", "/api/v1/games/{id}"), ("le", "+Inf")]
        ),
        4.0
    );
    // Raw paths never become labels.
    assert!(after.iter().all(|s| {
        s.labels
            .get("route")
            .is_none_or(|r| !r.contains(&game) && !r.contains("/no/such"))
    }),);
    // The scrape before was counted too.
    assert!(
        value(
            &after,
            "leekha_http_requests_total",
            &[("route", "/metrics")]
        ) >= 1.0
    );
}

#[actix_web::test]
async fn actions_conflicts_and_active_games_are_counted() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let before = scrape(&app).await;
    assert_eq!(value(&before, "leekha_active_games", &[]), 0.0);

    let player = register(&app, "counted").await;
    let bots =
        json!({"seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]});
    let game = game_of(&app, std::slice::from_ref(&player), bots).await;
    let uri = format!("/api/v1/games/{game}");
    let at_start = action_count(&app, &game, &player.access).await;
    let before = scrape(&app).await;
    // The player passes, then plays twice; the bots act after each.
    for _ in 0..3 {
        let view = get(&app, &uri, &player.access).await;
        let action = legal_action(&view.json).expect("the player's turn");
        let r = post(&app, &format!("{uri}/actions"), action, &player.access).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let applied = action_count(&app, &game, &player.access).await - at_start;
    assert!(applied > 3, "bots acted too: {applied}");

    // A stale version is a counted conflict.
    post(
        &app,
        &format!("{uri}/actions"),
        json!({"type": "play", "card": "2C", "expected_version": 0}),
        &player.access,
    )
    .await
    .assert_problem(409, "version_conflict");

    let after = scrape(&app).await;
    let delta = |name: &str| value(&after, name, &[]) - value(&before, name, &[]);
    assert_eq!(
        delta("leekha_actions_applied_total"),
        applied as f64,
        "every applied action is counted once, bots' included"
    );
    assert_eq!(delta("leekha_version_conflicts_total"), 1.0);
    assert_eq!(value(&after, "leekha_active_games", &[]), 1.0);
    assert_eq!(delta("leekha_turn_timeouts_total"), 0.0);
}

#[actix_web::test]
async fn the_hooks_for_timeouts_and_webhooks_show_in_the_scrape() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    state.metrics.turn_timeout();
    state.metrics.webhook_delivery("delivered");
    state.metrics.webhook_delivery("delivered");
    state.metrics.webhook_delivery("failed");
    let samples = scrape(&app).await;
    assert_eq!(value(&samples, "leekha_turn_timeouts_total", &[]), 1.0);
    assert_eq!(
        value(
            &samples,
            "leekha_webhook_deliveries_total",
            &[("outcome", "delivered")]
        ),
        2.0
    );
    assert_eq!(
        value(
            &samples,
            "leekha_webhook_deliveries_total",
            &[("outcome", "failed")]
        ),
        1.0
    );
    // Another app in the same process counts apart.
    let other = TestDb::migrated();
    let other_app = common::app(other.state()).await;
    let samples = scrape(&other_app).await;
    assert_eq!(value(&samples, "leekha_turn_timeouts_total", &[]), 0.0);
}

#[actix_web::test]
async fn actions_of_a_seat_handed_to_a_bot_are_counted() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = crate::admin::admin(&app, &state, "boss").await;
    let player = register(&app, "leaving").await;
    let bots = json!({
        "seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}],
        "rules": {"target_score": 26},
    });
    let game = game_of(&app, std::slice::from_ref(&player), bots).await;
    let at_start = action_count(&app, &game, &player.access).await;
    let before = scrape(&app).await;
    assert_eq!(value(&before, "leekha_active_games", &[]), 1.0);
    let r = post(
        &app,
        &format!("/api/v1/admin/games/{game}/seats/0/bot"),
        json!({}),
        &boss.access,
    )
    .await;
    assert_eq!(r.json["status"], "active", "{}", r.text);
    common::play_out_bots(&state);
    let applied = action_count(&app, &game, &player.access).await - at_start;
    let after = scrape(&app).await;
    assert_eq!(
        value(&after, "leekha_actions_applied_total", &[])
            - value(&before, "leekha_actions_applied_total", &[]),
        applied as f64
    );
    assert_eq!(value(&after, "leekha_active_games", &[]), 0.0);
}
