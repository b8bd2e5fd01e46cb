//! The group commit of PostgreSQL's action path: writes that queue while the writer's
//! statement runs go out together, each still guarded by its own game, and nothing of their
//! meaning changes (every action applied once, feeds and sequences contiguous).

use std::sync::mpsc;
use std::time::Duration;

use diesel::prelude::*;
use leekha::games::act::{Act, Acted};
use serde_json::{Value, json};

use crate::common::play::{four, game_of, get, legal_action, wanted};
use crate::common::{Session, TestDb};

/// One action through the service, as the handler runs it, on a thread of its own.
fn act_on_thread(
    state: &leekha::app::AppState,
    id: &str,
    player: &Session,
    action: &Value,
) -> std::thread::JoinHandle<Result<Acted, leekha::error::Error>> {
    let act = Act {
        game_id: id.to_owned(),
        user_id: player.id.clone(),
        wanted: wanted(action),
        expected_version: None,
        idempotency: None,
    };
    let (state, id, user) = (state.clone(), id.to_owned(), player.id.clone());
    std::thread::spawn(move || {
        let shortcuts = leekha::games::Shortcuts {
            hot: &state.hot,
            group: state.db.group_commit().map(|g| &**g),
        };
        leekha::games::act(
            &mut state.db.conn().unwrap(),
            shortcuts,
            leekha::games::Submission {
                game_id: id,
                user_id: user,
                command: Ok(act),
                render: |_, _| Ok(String::new()),
                refusal: |_| (500, String::new()),
            },
        )
    })
}

/// Who may act in `id` now, with a legal action: every such player (four while they pass,
/// one in a trick).
async fn movers<S, B>(app: &S, id: &str, players: &[Session]) -> Vec<(usize, Value)>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut found = Vec::new();
    for (i, p) in players.iter().enumerate() {
        let view = get(app, &format!("/api/v1/games/{id}"), &p.access).await;
        if let Some(action) = legal_action(&view.json) {
            found.push((i, action));
        }
    }
    found
}

#[actix_web::test]
async fn writes_queued_behind_a_statement_commit_together_and_each_applies_once() {
    let db = TestDb::migrated();
    let state = db.state();
    let Some(group) = state.db.group_commit().cloned() else {
        return; // SQLite: every action takes the write lock; there is no writer to batch.
    };
    let app = crate::common::app(state.clone()).await;
    let players = four(&app, "batch").await;
    // Seven games of the same four players: the first to block the writer; five in play, so
    // that the batch notifies one of the four twice at least; one still passing, whose two
    // passes queue together.
    let mut games = Vec::new();
    for _ in 0..7 {
        games.push(game_of(&app, &players, json!({})).await);
    }
    for id in &games[..6] {
        // Everyone passes, so that the game is in its first trick.
        for (i, action) in movers(&app, id, &players).await {
            let url = format!("/api/v1/games/{id}/actions");
            let done = crate::common::play::post(&app, &url, action, &players[i].access).await;
            assert_eq!(done.status, 200, "{}", done.text);
        }
    }
    let mut planned = Vec::new();
    for id in &games[..6] {
        let mut movers = movers(&app, id, &players).await;
        assert_eq!(movers.len(), 1, "one player leads the first trick");
        planned.push((id.clone(), movers.remove(0)));
    }
    let passing = movers(&app, &games[6], &players).await;
    assert_eq!(passing.len(), 4);
    let feeds_before = feeds(&state);
    let counted_before = group.counts().get();

    // Another transaction holds the first game's row, so the writer's statement for it waits.
    let (release, released) = mpsc::channel::<()>();
    let (locked, is_locked) = mpsc::channel::<()>();
    let holder = {
        let (state, id) = (state.clone(), games[0].clone());
        std::thread::spawn(move || {
            let mut conn = state.db.conn().unwrap();
            conn.transaction::<_, diesel::result::Error, _>(|conn| {
                diesel::sql_query("SELECT 1 FROM games WHERE id = $1 FOR UPDATE")
                    .bind::<diesel::sql_types::Text, _>(&id)
                    .execute(conn)?;
                locked.send(()).unwrap();
                released.recv().unwrap();
                Ok(())
            })
            .unwrap();
        })
    };
    is_locked.recv().unwrap();
    let (first, (i, action)) = &planned[0];
    let blocked = act_on_thread(&state, first, &players[*i], action);
    std::thread::sleep(Duration::from_millis(300));
    let mut queued = Vec::new();
    for (id, (i, action)) in &planned[1..] {
        queued.push(act_on_thread(&state, id, &players[*i], action));
    }
    for (i, action) in &passing[..2] {
        queued.push(act_on_thread(&state, &games[6], &players[*i], action));
    }
    std::thread::sleep(Duration::from_millis(500));
    release.send(()).unwrap();
    holder.join().unwrap();
    for done in std::iter::once(blocked).chain(queued) {
        let acted = done.join().unwrap().expect("the action applies");
        assert!(
            matches!(acted, Acted::Fresh { applied: 1, .. }),
            "{acted:?}"
        );
    }

    // The blocked write went alone; the six games queued behind it went in one statement.
    // The second pass of the passing game was handed back and written by its caller, which
    // either lost to the batch (and then applied under the lock) or won (and then the
    // batch's pass was judged again, from a fresh read, through the writer once more).
    let (writes, statements, largest) = group.counts().get();
    let (writes, statements) = (writes - counted_before.0, statements - counted_before.1);
    assert!(
        (writes, statements) == (7, 2) || (writes, statements) == (8, 3),
        "{writes} writes in {statements} statements"
    );
    assert_eq!(largest, 6);
    // The same counts at /metrics.
    let metrics =
        crate::common::send(&app, actix_web::test::TestRequest::get().uri("/metrics")).await;
    let sample = |name: &str| -> u64 {
        let line = metrics
            .text
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")));
        line.unwrap_or_else(|| panic!("{name} missing"))
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    let total = group.counts().get();
    assert_eq!(sample("leekha_group_commit_writes_total"), total.0);
    assert_eq!(sample("leekha_group_commit_statements_total"), total.1);
    let mut conn = state.db.conn().unwrap();
    for id in &games {
        let table = leekha::games::Table::load(&mut conn, id).unwrap();
        let expected = if id == &games[6] { 2 } else { 5 };
        assert_eq!(table.row.action_count, expected, "{id}");
        let actions = leekha::db::games::actions(&mut conn, id).unwrap();
        let seqs: Vec<i64> = actions.iter().map(|a| a.seq).collect();
        assert_eq!(seqs, (1..=expected).collect::<Vec<_>>(), "{id}");
        let events = leekha::db::games::all_events(&mut conn, id).unwrap();
        let seqs: Vec<i64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(
            seqs,
            (1..=table.row.event_count).collect::<Vec<_>>(),
            "{id}"
        );
    }
    // Each of the six plays made it someone's turn: six "your turn" more, and every feed
    // still numbered 1, 2, … with its counter at its last number.
    let feeds_after = feeds(&state);
    let added: usize = feeds_after
        .iter()
        .zip(&feeds_before)
        .map(|(after, before)| after.1.len() - before.1.len())
        .sum();
    assert_eq!(added, 6);
    for (counter, seqs) in feeds_after {
        assert_eq!(seqs, (1..=counter).collect::<Vec<_>>());
    }
}

/// Every user's feed counter and the numbers of their notifications, by user id.
fn feeds(state: &leekha::app::AppState) -> Vec<(i64, Vec<i64>)> {
    use leekha::db::schema::{notifications, users};
    let mut conn = state.db.conn().unwrap();
    let counters: Vec<(String, i64)> = users::table
        .select((users::id, users::notification_count))
        .order(users::id)
        .load(&mut conn)
        .unwrap();
    counters
        .into_iter()
        .map(|(id, counter)| {
            let seqs = notifications::table
                .filter(notifications::user_id.eq(&id))
                .select(notifications::seq)
                .order(notifications::seq)
                .load(&mut conn)
                .unwrap();
            (counter, seqs)
        })
        .collect()
}
