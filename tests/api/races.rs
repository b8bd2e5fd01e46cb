//! Seat changes and social requests sent from several phones at once are judged one after
//! the other, as README promises for every change: on PostgreSQL as on SQLite. Each race
//! runs a few times, since one run may happen to come out in order.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::common::play::{delete, get, get_all, post, put};
use crate::common::{self, Session, TestDb, register};

/// How many times each race is run.
const RUNS: usize = 6;

/// The `seat_changed` events of a game, as `(seat, reason)`.
async fn seat_changes<S, B>(app: &S, id: &str, token: &str) -> Vec<(u64, String)>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let events = get_all(app, &format!("/api/v1/games/{id}/events"), "events", token).await;
    events.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "seat_changed")
        .map(|e| {
            let data = &e["data"];
            (
                data["seat"].as_u64().unwrap(),
                data["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn statuses(replies: &[common::Reply]) -> Vec<u16> {
    let mut all: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    all.sort_unstable();
    all
}

/// Every seat of an active game is held by someone: a human or a bot.
fn every_seat_held(view: &Value) -> bool {
    view["seats"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| !s["player"].is_null() || !s["bot"].is_null())
}

#[actix_web::test]
async fn joins_racing_for_seats_get_one_seat_each_and_the_rest_409() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let host = register(&app, "race_host").await;
    let mut rivals = Vec::new();
    for i in 0..5 {
        rivals.push(register(&app, &format!("race_rival{i}")).await);
    }
    for _ in 0..RUNS {
        // Five phones want seat 1.
        let created = post(&app, "/api/v1/games", json!({}), &host.access).await;
        let id = created.json["id"].as_str().unwrap().to_owned();
        let join = format!("/api/v1/games/{id}/join");
        let replies = join_all(
            rivals
                .iter()
                .map(|r| post(&app, &join, json!({"seat": 1}), &r.access)),
        )
        .await;
        assert_eq!(statuses(&replies), [200, 409, 409, 409, 409]);
        let (winner, _) = rivals
            .iter()
            .zip(&replies)
            .find(|(_, r)| r.status == 200)
            .unwrap();
        for reply in replies.iter().filter(|r| r.status != 200) {
            reply.assert_problem(409, "seat_taken");
        }
        let view = get(&app, &format!("/api/v1/games/{id}"), &host.access).await;
        assert_eq!(
            view.json["seats"][1]["player"]["username"],
            *winner.username
        );
        let joined: Vec<_> = seat_changes(&app, &id, &host.access).await;
        assert_eq!(joined, [(1, "joined".to_owned())]);

        // Three phones, two open seats left: two get one, the game starts.
        let replies = join_all(
            rivals
                .iter()
                .filter(|r| r.username != winner.username)
                .take(3)
                .map(|r| post(&app, &join, json!({}), &r.access)),
        )
        .await;
        assert_eq!(statuses(&replies), [200, 200, 409]);
        let view = get(&app, &format!("/api/v1/games/{id}"), &host.access).await;
        assert_eq!(view.json["status"], "active", "{}", view.text);
        assert!(every_seat_held(&view.json), "{}", view.text);
        assert_eq!(seat_changes(&app, &id, &host.access).await.len(), 3);
    }
}

#[actix_web::test]
async fn a_leave_racing_the_last_join_never_starts_a_game_with_an_empty_seat() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players: Vec<Session> = {
        let mut all = Vec::new();
        for name in ["lr_host", "lr_one", "lr_two", "lr_late"] {
            all.push(register(&app, name).await);
        }
        all
    };
    for _ in 0..RUNS {
        let id = common::play::game_of(
            &app,
            &players[..3],
            json!({"seats": [{"kind": "me"}, {"kind": "open"}, {"kind": "open"}, {"kind": "open"}]}),
        )
        .await;
        let (left, joined) = futures_util::future::join(
            post(
                &app,
                &format!("/api/v1/games/{id}/leave"),
                json!({}),
                &players[2].access,
            ),
            post(
                &app,
                &format!("/api/v1/games/{id}/join"),
                json!({}),
                &players[3].access,
            ),
        )
        .await;
        assert_eq!(joined.status, 200, "{}", joined.text);
        let view = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
        match left.status.as_u16() {
            // The leave came first: the late player took a seat of a game still waiting.
            200 => {
                assert_eq!(view.json["status"], "waiting", "{}", view.text);
                let held = view.json["seats"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|s| !s["player"].is_null())
                    .count();
                assert_eq!(held, 3, "{}", view.text);
            }
            // The join came first and started the game.
            _ => {
                left.assert_problem(409, "game_not_waiting");
                assert_eq!(view.json["status"], "active", "{}", view.text);
                assert!(every_seat_held(&view.json), "{}", view.text);
            }
        }
    }
}

#[actix_web::test]
async fn the_last_humans_leaving_at_once_abort_the_game() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let host = register(&app, "la_host").await;
    let guest = register(&app, "la_guest").await;
    for _ in 0..RUNS {
        let id = common::play::game_of(&app, &[host.clone(), guest.clone()], json!({})).await;
        let leave = format!("/api/v1/games/{id}/leave");
        let (a, b) = futures_util::future::join(
            post(&app, &leave, json!({}), &host.access),
            post(&app, &leave, json!({}), &guest.access),
        )
        .await;
        assert_eq!(
            (a.status.as_u16(), b.status.as_u16()),
            (200, 200),
            "{} {}",
            a.text,
            b.text
        );
        let view = get(&app, &format!("/api/v1/games/{id}"), &host.access).await;
        assert_eq!(view.json["status"], "aborted", "{}", view.text);
    }
}

#[actix_web::test]
async fn two_phones_resigning_one_seat_resign_it_once_and_four_resigns_finish_the_game() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = common::play::four(&app, "rs_").await;
    for _ in 0..RUNS {
        let id = common::play::game_of(&app, &players, json!({"rated": false})).await;
        let resign = format!("/api/v1/games/{id}/resign");
        // One player's two phones.
        let replies =
            join_all((0..2).map(|_| post(&app, &resign, json!({}), &players[0].access))).await;
        assert_eq!(statuses(&replies), [200, 409]);
        replies
            .iter()
            .find(|r| r.status == 409)
            .unwrap()
            .assert_problem(409, "already_resigned");
        // The three others at the same moment: no human is left, so the bots play it out.
        let replies = join_all(
            players[1..]
                .iter()
                .map(|p| post(&app, &resign, json!({}), &p.access)),
        )
        .await;
        assert_eq!(statuses(&replies), [200, 200, 200]);
        let resigned = seat_changes(&app, &id, &players[0].access)
            .await
            .into_iter()
            .filter(|(_, reason)| reason == "resigned")
            .count();
        assert_eq!(resigned, 4);
        common::play_out_bots(&state);
        let view = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
        assert_eq!(view.json["status"], "finished", "{}", view.text);
    }
}

#[actix_web::test]
async fn joins_racing_into_many_games_keep_to_the_cap_of_running_games() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.max_active_games_per_user = 2;
    let app = common::app(common::state_for(config)).await;
    let me = register(&app, "cap_racer").await;
    let mut hosts = Vec::new();
    for i in 0..5 {
        hosts.push(register(&app, &format!("cap_host{i}")).await);
    }
    // Five games, each one seat short of starting.
    let mut games = Vec::new();
    for host in &hosts {
        let body =
            json!({"seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "open"}]});
        let created = post(&app, "/api/v1/games", body, &host.access).await;
        assert_eq!(created.status, 201, "{}", created.text);
        games.push(created.json["id"].as_str().unwrap().to_owned());
    }
    let joins: Vec<String> = games
        .iter()
        .map(|id| format!("/api/v1/games/{id}/join"))
        .collect();
    let replies = join_all(
        joins
            .iter()
            .map(|join| post(&app, join, json!({}), &me.access)),
    )
    .await;
    assert_eq!(statuses(&replies), [200, 200, 409, 409, 409]);
    for reply in replies.iter().filter(|r| r.status == 409) {
        reply.assert_problem(409, "too_many_active_games");
    }
}

#[actix_web::test]
async fn requests_and_blocks_between_two_users_at_once_end_as_if_one_came_first() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for run in 0..RUNS {
        let x = register(&app, &format!("pair_x{run}")).await;
        let y = register(&app, &format!("pair_y{run}")).await;
        // Both ask at once: the second request makes them friends, and says so.
        let (to_y, to_x) = futures_util::future::join(
            put(
                &app,
                &format!("/api/v1/me/friends/{}", y.username),
                &x.access,
            ),
            put(
                &app,
                &format!("/api/v1/me/friends/{}", x.username),
                &y.access,
            ),
        )
        .await;
        let mut states = [
            to_y.json["state"].as_str().unwrap_or_default().to_owned(),
            to_x.json["state"].as_str().unwrap_or_default().to_owned(),
        ];
        states.sort();
        assert_eq!(
            states,
            ["friends", "requested"],
            "{} {}",
            to_y.text,
            to_x.text
        );
        // X blocks Y while Y asks again after X ended the friendship: whichever came
        // first, nothing is pending between them afterwards but the block.
        let ended = delete(
            &app,
            &format!("/api/v1/me/friends/{}", y.username),
            &x.access,
        )
        .await;
        assert_eq!(ended.status, 204, "{}", ended.text);
        let (blocked, asked) = futures_util::future::join(
            put(
                &app,
                &format!("/api/v1/me/blocks/{}", y.username),
                &x.access,
            ),
            put(
                &app,
                &format!("/api/v1/me/friends/{}", x.username),
                &y.access,
            ),
        )
        .await;
        assert_eq!(blocked.status, 201, "{}", blocked.text);
        if asked.status != 201 {
            asked.assert_problem(403, "blocked");
        }
        let friends = get(&app, "/api/v1/me/friends", &x.access).await;
        for list in ["friends", "incoming", "outgoing"] {
            assert_eq!(friends.json[list], json!([]), "{list}: {}", friends.text);
        }
    }
}

/// A table planned with invitations meets the invited users' own requests: invitations
/// both ways, a friend request, a block, a rematch. Each takes the accounts it meets in
/// one order, so none is a deadlock's 500 (on PostgreSQL: opposite orders were).
#[actix_web::test]
async fn invitations_racing_each_other_and_social_requests_never_fail() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let invite = |name: &str| {
        json!({"rated": false, "seats": [{"kind": "me"}, {"kind": "invite", "username": name},
                                         {"kind": "open"}, {"kind": "open"}]})
    };
    for run in 0..RUNS {
        let x = register(&app, &format!("inv_x{run}")).await;
        let y = register(&app, &format!("inv_y{run}")).await;
        // x plans a table for y while y plans one for x, asks x to be friends, blocks x.
        for (method, uri) in [
            ("POST", "/api/v1/games".to_owned()),
            ("PUT", format!("/api/v1/me/friends/{}", x.username)),
            ("PUT", format!("/api/v1/me/blocks/{}", x.username)),
        ] {
            let theirs = async {
                match method {
                    "POST" => post(&app, &uri, invite(&x.username), &y.access).await,
                    _ => put(&app, &uri, &y.access).await,
                }
            };
            let (mine, theirs) = futures_util::future::join(
                post(&app, "/api/v1/games", invite(&y.username), &x.access),
                theirs,
            )
            .await;
            assert_eq!(theirs.status, 201, "{uri}: {}", theirs.text);
            // A block that came first refuses the invitation; nothing else may.
            if uri.contains("blocks") && mine.status != 201 {
                mine.assert_problem(403, "blocked");
            } else {
                assert_eq!(mine.status, 201, "{uri}: {}", mine.text);
            }
        }
    }
}

/// An invitation meets a block from a player at the table, or a ban of the invited user:
/// whichever comes first, no seat stays reserved for someone who can never take it.
#[actix_web::test]
async fn an_invitation_racing_a_block_or_a_ban_leaves_no_seat_waiting_for_nobody() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = crate::admin::admin(&app, &state, "race_boss").await;
    for run in 0..RUNS {
        let x = register(&app, &format!("hold_x{run}")).await;
        let y = register(&app, &format!("hold_y{run}")).await;
        let z = register(&app, &format!("hold_z{run}")).await;
        let created = post(&app, "/api/v1/games", json!({}), &x.access).await;
        let id = created.json["id"].as_str().unwrap().to_owned();
        let joined = post(
            &app,
            &format!("/api/v1/games/{id}/join"),
            json!({"seat": 2}),
            &z.access,
        )
        .await;
        assert_eq!(joined.status, 200, "{}", joined.text);
        let seat = format!("/api/v1/games/{id}/seats/1");
        let asked = json!({"kind": "invite", "username": y.username});
        let (invited, blocked) = futures_util::future::join(
            crate::common::play::put_json(&app, &seat, asked.clone(), &x.access),
            put(
                &app,
                &format!("/api/v1/me/blocks/{}", y.username),
                &z.access,
            ),
        )
        .await;
        assert_eq!(blocked.status, 201, "{}", blocked.text);
        if invited.status != 200 {
            invited.assert_problem(403, "blocked");
        }
        let view = get(&app, &format!("/api/v1/games/{id}"), &x.access).await;
        assert!(view.json["seats"][1]["invited"].is_null(), "{}", view.text);

        let w = register(&app, &format!("hold_w{run}")).await;
        let asked = json!({"kind": "invite", "username": w.username});
        let (invited, banned) = futures_util::future::join(
            crate::common::play::put_json(&app, &seat, asked, &x.access),
            post(
                &app,
                &format!("/api/v1/admin/users/{}/ban", w.id),
                json!({"reason": "race"}),
                &boss.access,
            ),
        )
        .await;
        assert_eq!(banned.status, 200, "{}", banned.text);
        if invited.status != 200 {
            invited.assert_problem(400, "validation_failed");
        }
        let view = get(&app, &format!("/api/v1/games/{id}"), &x.access).await;
        assert!(view.json["seats"][1]["invited"].is_null(), "{}", view.text);
    }
}

/// A player goes away as the last seat of their table is taken: the game starts with the
/// bot in their seat whichever comes first (away first: at the deal; the start first: then
/// away hands it over).
#[actix_web::test]
async fn going_away_as_the_table_fills_leaves_the_seat_with_the_bot() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for run in 0..RUNS {
        let x = register(&app, &format!("fill_x{run}")).await;
        let y = register(&app, &format!("fill_y{run}")).await;
        let z = register(&app, &format!("fill_z{run}")).await;
        let created = post(
            &app,
            "/api/v1/games",
            json!({"seats": [{"kind": "me"}, {"kind": "open"}, {"kind": "open"}, {"kind": "bot"}]}),
            &x.access,
        )
        .await;
        let id = created.json["id"].as_str().unwrap().to_owned();
        let join = format!("/api/v1/games/{id}/join");
        let sat = post(&app, &join, json!({"seat": 1}), &y.access).await;
        assert_eq!(sat.status, 200, "{}", sat.text);
        let until = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
        let (joined, away) = futures_util::future::join(
            post(&app, &join, json!({}), &z.access),
            crate::common::play::put_json(
                &app,
                "/api/v1/me/away",
                json!({"until": until}),
                &y.access,
            ),
        )
        .await;
        assert_eq!(
            (joined.status.as_u16(), away.status.as_u16()),
            (200, 200),
            "{} {}",
            joined.text,
            away.text
        );
        let view = get(&app, &format!("/api/v1/games/{id}"), &x.access).await;
        assert_eq!(view.json["status"], "active", "{}", view.text);
        assert!(view.json["seats"][1]["bot"].is_string(), "{}", view.text);
    }
}

/// Two administrators demote, or ban, each other at once: one is judged first, and the other,
/// no administrator any more, is refused (403, or 401 once its banned session is gone) as it
/// would be a moment later, so the last two cannot remove each other.
#[actix_web::test]
async fn two_administrators_removing_each_other_at_once_remove_one() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    for run in 0..RUNS {
        for (action, body) in [
            ("role", json!({"role": "player", "reason": "race"})),
            ("ban", json!({"reason": "race"})),
        ] {
            let a = crate::admin::admin(&app, &state, &format!("adm_a{run}{action}")).await;
            let b = crate::admin::admin(&app, &state, &format!("adm_b{run}{action}")).await;
            let on = |target: &Session, by: &Session| {
                let uri = format!("/api/v1/admin/users/{}/{action}", target.id);
                let body = body.clone();
                let token = by.access.clone();
                let app = &app;
                async move {
                    match action {
                        "role" => crate::common::play::put_json(app, &uri, body, &token).await,
                        _ => post(app, &uri, body, &token).await,
                    }
                }
            };
            let (first, second) = futures_util::future::join(on(&b, &a), on(&a, &b)).await;
            let mut codes = [first.status.as_u16(), second.status.as_u16()];
            codes.sort_unstable();
            // The loser is no administrator any more (403), or, banned, has no session left
            // by the time its request is read (401).
            if action == "ban" && codes == [200, 401] {
                codes = [200, 403];
            }
            assert_eq!(
                codes,
                [200, 403],
                "{action}: {} {}",
                first.text,
                second.text
            );
        }
    }
}

/// A guest's upgrade sent twice at once (two taps, two phones): one keeps the account, with
/// its name and password; the other is refused as it would be a moment later (a full
/// account's password changes only with `current_password`), not told 200 for a name and
/// password that do not work.
#[actix_web::test]
async fn a_guests_upgrade_sent_twice_at_once_upgrades_it_once() {
    use actix_web::test::TestRequest;
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for run in 0..RUNS {
        let guest = common::send(&app, TestRequest::post().uri("/api/v1/auth/guest")).await;
        let access = guest.json["access_token"].as_str().unwrap().to_owned();
        let upgrade = |name: String| {
            let patch = TestRequest::patch().uri("/api/v1/me").set_json(
                json!({"username": name, "password": format!("{}-{name}", common::PASSWORD)}),
            );
            common::send(&app, common::bearer(patch, &access))
        };
        let (a, b) = futures_util::future::join(
            upgrade(format!("twice_a{run}")),
            upgrade(format!("twice_b{run}")),
        )
        .await;
        let (won, lost) = if a.status == 200 { (a, b) } else { (b, a) };
        assert_eq!(won.status, 200, "{}", won.text);
        lost.assert_problem(400, "validation_failed");
        let name = won.json["username"].as_str().unwrap().to_owned();
        let login = common::send(
            &app,
            common::post_json(
                "/api/v1/auth/login",
                json!({"username": name, "password": format!("{}-{name}", common::PASSWORD)}),
            ),
        )
        .await;
        assert_eq!(login.status, 200, "{}", login.text);
    }
}

#[test]
fn verify_finds_nothing_wrong_in_games_played_while_it_reads() {
    let db = TestDb::migrated();
    let state = db.state();
    actix_web::rt::System::new().block_on(async {
        let app = common::app(state.clone()).await;
        let host = register(&app, "verify_host").await;
        let against_bots =
            json!({"seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]});
        for _ in 0..4 {
            let created = post(&app, "/api/v1/games", against_bots.clone(), &host.access).await;
            let id = created.json["id"].as_str().unwrap().to_owned();
            let resigned = post(
                &app,
                &format!("/api/v1/games/{id}/resign"),
                json!({}),
                &host.access,
            )
            .await;
            assert_eq!(resigned.status, 200, "{}", resigned.text);
        }
    });
    // The bots play the four games out in short transactions while verify reads them.
    let players = {
        let state = state.clone();
        std::thread::spawn(move || common::play_out_bots(&state))
    };
    let mut conn = state.db.conn().unwrap();
    let mut checks = 0;
    while !players.is_finished() || checks == 0 {
        let (_, mismatches) = leekha::games::verify::verify_all(&mut conn).unwrap();
        assert!(
            mismatches.is_empty(),
            "after {checks} checks: {mismatches:?}"
        );
        checks += 1;
    }
    assert!(players.join().unwrap() > 0);
}
