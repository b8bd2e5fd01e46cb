//! The batched version probes of views on PostgreSQL: views served from the instance's
//! copies while the prober's query runs ask together, and each still hears its own answer
//! (its own seat and hand, the game's version of the moment).

use std::sync::mpsc;
use std::time::Duration;

use diesel::prelude::*;
use futures_util::future::join_all;
use leekha::db::schema::users;
use serde_json::json;

use crate::common::TestDb;
use crate::common::play::{four, game_of, get, legal_action, post};

#[actix_web::test]
async fn probes_queued_behind_a_query_go_out_together_and_each_answers_its_caller() {
    let db = TestDb::migrated();
    let state = db.state();
    let Some(probes) = state.db.probes().cloned() else {
        return; // SQLite: a probe is a local read; there is no prober to batch.
    };
    let app = crate::common::app(state.clone()).await;
    let players = four(&app, "probe").await;
    let mut games = Vec::new();
    for _ in 0..3 {
        games.push(game_of(&app, &players, json!({})).await);
    }
    // The games at different versions: in game g, g players have passed.
    for (g, id) in games.iter().enumerate() {
        for p in &players[..g] {
            let view = get(&app, &format!("/api/v1/games/{id}"), &p.access).await;
            let pass = legal_action(&view.json).unwrap();
            let url = format!("/api/v1/games/{id}/actions");
            assert_eq!(post(&app, &url, pass, &p.access).await.status, 200);
        }
    }
    // One full read of each game keeps it in the instance's copies; its version for later.
    let mut versions = Vec::new();
    for id in &games {
        let view = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
        assert_eq!(view.status, 200, "{}", view.text);
        versions.push(view.json["version"].as_i64().unwrap());
    }

    assert!(versions[0] < versions[1] && versions[1] < versions[2]);

    let before = probes.counts().get();
    let lock = lock_games(&state);
    let asked: Vec<(usize, usize)> = (0..games.len())
        .flat_map(|g| (0..players.len()).map(move |p| (g, p)))
        .collect();
    let uris: Vec<String> = asked
        .iter()
        .map(|&(g, _)| format!("/api/v1/games/{}", games[g]))
        .collect();
    let views = join_all(
        asked
            .iter()
            .zip(&uris)
            .map(|(&(_, p), uri)| get(&app, uri, &players[p].access)),
    )
    .await;
    lock.join().unwrap();

    let after = probes.counts().get();
    assert_eq!(
        after.0 - before.0,
        asked.len() as u64,
        "every view was served from a copy, probed through the prober"
    );
    assert!(
        after.1 - before.1 <= 2,
        "the first probe alone, then the {} that queued behind it together; {} queries",
        asked.len() - 1,
        after.1 - before.1
    );
    for (&(g, p), view) in asked.iter().zip(&views) {
        assert_eq!(view.status, 200, "{}", view.text);
        assert_eq!(view.json["id"], games[g].as_str());
        assert_eq!(view.json["version"], versions[g]);
        let seat = view.json["my_seat"]
            .as_u64()
            .expect("a seated player's view") as usize;
        let seated = view.json["seats"][seat]["player"]["id"].as_str();
        assert_eq!(
            seated,
            Some(players[p].id.as_str()),
            "the caller's own seat"
        );
        // The caller's own hand: three cards fewer once they passed.
        let hand = if p < g { 10 } else { 13 };
        assert_eq!(
            view.json["round"]["hand"].as_array().map(Vec::len),
            Some(hand)
        );
        assert_eq!(view.json["round"]["passed"].is_array(), p < g);
    }

    // Asked together, each probe answers for its own game and its own caller: one caller is
    // banned, and one game does not exist.
    diesel::update(users::table.find(&players[3].id))
        .set(users::banned_at.eq(Some(chrono::Utc::now().naive_utc())))
        .execute(&mut *state.db.conn().unwrap())
        .unwrap();
    let missing = uuid::Uuid::new_v4().to_string();
    let lock = lock_games(&state);
    let answers = join_all(asked.iter().map(|&(g, p)| {
        let game = if g == 1 { &missing } else { &games[g] };
        probes.probe(game, &players[p].id)
    }))
    .await;
    lock.join().unwrap();
    for (&(g, p), answer) in asked.iter().zip(answers) {
        let answer = answer.expect("the prober answered");
        if g == 1 {
            assert!(answer.is_none(), "no such game: {answer:?}");
            continue;
        }
        let probe = answer.expect("the game exists");
        assert_eq!(probe.version, versions[g]);
        assert_eq!(probe.caller.map(|c| c.banned), Some(p == 3));
    }
}

/// Locks the games table in another transaction for 300 ms, so that the prober's first query
/// waits while other probes queue behind it. Returns once the lock is held.
fn lock_games(state: &leekha::app::AppState) -> std::thread::JoinHandle<()> {
    let (locked, is_locked) = mpsc::channel::<()>();
    let state = state.clone();
    let holder = std::thread::spawn(move || {
        let mut conn = state.db.conn().unwrap();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            diesel::sql_query("LOCK TABLE games IN ACCESS EXCLUSIVE MODE").execute(conn)?;
            locked.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            Ok(())
        })
        .unwrap();
    });
    is_locked.recv().unwrap();
    holder
}

/// The prober and the group-commit writer run statements over arrays, whose plans PostgreSQL
/// would otherwise make anew on every execution: their connections keep the generic plan. That
/// plan is made at the first execution, on a young database with tables of a page or two,
/// and kept as the tables grow: it must find every row by its key, never read a table whole.
#[test]
fn connections_for_batches_keep_a_generic_plan_that_reads_no_table_whole() {
    #[derive(QueryableByName)]
    struct Mode {
        #[diesel(sql_type = diesel::sql_types::Text)]
        plan_cache_mode: String,
    }
    #[derive(QueryableByName)]
    struct Line {
        #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
        text: String,
    }
    let db = TestDb::migrated();
    let config = db.config();
    if config.database_url.backend() != leekha::config::Backend::Postgres {
        return;
    }
    let mut pg = leekha::db::batcher::connect_for_batches(&config.database_url).unwrap();
    let mode: Vec<Mode> = diesel::sql_query("SHOW plan_cache_mode")
        .load(&mut pg)
        .unwrap();
    assert_eq!(mode[0].plan_cache_mode, "force_generic_plan");
    // The tables are empty: the plans are made as for a database's first minutes.
    for (i, text) in leekha::db::games::statements_for_batches()
        .into_iter()
        .enumerate()
    {
        let placeholders = (1..)
            .take_while(|n| text.contains(&format!("${n}")))
            .count();
        diesel::sql_query(format!("PREPARE batch_{i} AS {text}"))
            .execute(&mut pg)
            .unwrap();
        let nulls = vec!["NULL"; placeholders].join(", ");
        let plan: Vec<String> = diesel::sql_query(format!("EXPLAIN EXECUTE batch_{i}({nulls})"))
            .load::<Line>(&mut pg)
            .unwrap()
            .into_iter()
            .map(|l| l.text)
            .collect();
        let plan = plan.join("\n");
        assert!(
            plan.contains("Index"),
            "statement {i} uses no index:\n{plan}"
        );
        for whole in ["Seq Scan", "Hash Join", "Merge Join"] {
            assert!(!plan.contains(whole), "statement {i}: {whole}\n{plan}");
        }
    }
}
