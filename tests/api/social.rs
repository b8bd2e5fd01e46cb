//! Friends and blocks: two requests make friends; a block keeps the blocked user away from
//! the blocker's tables, invitations and friendship.

use serde_json::{Value, json};

use crate::common::play::{delete, get, post, put};
use crate::common::{TestDb, register};

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["user"]["username"].as_str().unwrap())
        .collect()
}

fn feed_kinds(feed: &Value) -> Vec<(String, Value)> {
    feed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["type"].as_str().unwrap().to_owned(), n["data"].clone()))
        .collect()
}

#[actix_web::test]
async fn two_requests_make_friends_and_either_can_end_it() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let ann = register(&app, "ann_f").await;
    let bob = register(&app, "bob_f").await;

    let asked = put(&app, "/api/v1/me/friends/BOB_F", &ann.access).await;
    assert_eq!(asked.status, 201, "{}", asked.text);
    assert_eq!(asked.json["state"], "requested");
    assert_eq!(asked.json["user"]["username"], "bob_f");
    let again = put(&app, "/api/v1/me/friends/bob_f", &ann.access).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.json["state"], "requested");

    let bobs = get(&app, "/api/v1/me/friends", &bob.access).await;
    assert_eq!(bobs.status, 200);
    assert_eq!(names(&bobs.json["incoming"]), ["ann_f"]);
    assert!(names(&bobs.json["friends"]).is_empty());
    let anns = get(&app, "/api/v1/me/friends", &ann.access).await;
    assert_eq!(names(&anns.json["outgoing"]), ["bob_f"]);

    // One notification for the new request, none for the repeated one.
    let feed = get(&app, "/api/v1/me/notifications", &bob.access).await;
    let kinds = feed_kinds(&feed.json);
    assert_eq!(kinds.len(), 1, "{kinds:?}");
    assert_eq!(kinds[0].0, "friend_request");
    assert_eq!(kinds[0].1["username"], "ann_f");
    assert_eq!(kinds[0].1["friends"], false);

    let accepted = put(&app, "/api/v1/me/friends/ann_f", &bob.access).await;
    assert_eq!(accepted.status, 201, "{}", accepted.text);
    assert_eq!(accepted.json["state"], "friends");
    let feed = get(&app, "/api/v1/me/notifications", &ann.access).await;
    let kinds = feed_kinds(&feed.json);
    assert_eq!(kinds.last().unwrap().0, "friend_request");
    assert_eq!(kinds.last().unwrap().1["friends"], true);
    for who in [&ann, &bob] {
        let lists = get(&app, "/api/v1/me/friends", &who.access).await;
        assert_eq!(names(&lists.json["friends"]).len(), 1, "{}", lists.text);
        assert!(names(&lists.json["incoming"]).is_empty());
        assert!(names(&lists.json["outgoing"]).is_empty());
    }

    let ended = delete(&app, "/api/v1/me/friends/ann_f", &bob.access).await;
    assert_eq!(ended.status, 204, "{}", ended.text);
    let lists = get(&app, "/api/v1/me/friends", &ann.access).await;
    assert!(names(&lists.json["friends"]).is_empty(), "{}", lists.text);
    assert!(names(&lists.json["outgoing"]).is_empty(), "{}", lists.text);
    assert_eq!(
        delete(&app, "/api/v1/me/friends/ann_f", &bob.access)
            .await
            .status,
        204
    );

    put(&app, "/api/v1/me/friends/nobody_here", &ann.access)
        .await
        .assert_problem(404, "not_found");
    put(&app, "/api/v1/me/friends/ann_f", &ann.access)
        .await
        .assert_problem(400, "validation_failed");
}

#[actix_web::test]
async fn asking_again_within_a_day_does_not_notify_again() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = crate::common::app(state.clone()).await;
    let ann = register(&app, "ann_q").await;
    let cid = register(&app, "cid_q").await;
    let dan = register(&app, "dan_q").await;
    let requests_to_cid = || async {
        let feed = get(&app, "/api/v1/me/notifications", &cid.access).await;
        feed_kinds(&feed.json)
            .into_iter()
            .filter(|(kind, _)| kind == "friend_request")
            .map(|(_, data)| data)
            .collect::<Vec<_>>()
    };

    // Ask, withdraw, ask: the second request is recorded but silent.
    assert_eq!(
        put(&app, "/api/v1/me/friends/cid_q", &ann.access)
            .await
            .status,
        201
    );
    assert_eq!(
        delete(&app, "/api/v1/me/friends/cid_q", &ann.access)
            .await
            .status,
        204
    );
    let again = put(&app, "/api/v1/me/friends/cid_q", &ann.access).await;
    assert_eq!(again.status, 201, "{}", again.text);
    assert_eq!(again.json["state"], "requested");
    // Declined, and asked again: still one notification.
    assert_eq!(
        delete(&app, "/api/v1/me/friends/ann_q", &cid.access)
            .await
            .status,
        204
    );
    assert_eq!(
        put(&app, "/api/v1/me/friends/cid_q", &ann.access)
            .await
            .status,
        201
    );
    let cids = get(&app, "/api/v1/me/friends", &cid.access).await;
    assert_eq!(names(&cids.json["incoming"]), ["ann_q"], "{}", cids.text);
    assert_eq!(requests_to_cid().await.len(), 1);

    // Another user's request still notifies, and accepting still tells the asker.
    assert_eq!(
        put(&app, "/api/v1/me/friends/cid_q", &dan.access)
            .await
            .status,
        201
    );
    let to_cid = requests_to_cid().await;
    assert_eq!(to_cid.len(), 2, "{to_cid:?}");
    assert_eq!(to_cid[1]["username"], "dan_q");
    let accepted = put(&app, "/api/v1/me/friends/ann_q", &cid.access).await;
    assert_eq!(accepted.json["state"], "friends", "{}", accepted.text);
    let feed = get(&app, "/api/v1/me/notifications", &ann.access).await;
    let to_ann = feed_kinds(&feed.json);
    assert_eq!(to_ann.len(), 1, "{to_ann:?}");
    assert_eq!(to_ann[0].1["friends"], true);

    // A day after the notification, a new request notifies again.
    assert_eq!(
        delete(&app, "/api/v1/me/friends/ann_q", &cid.access)
            .await
            .status,
        204
    );
    {
        use diesel::RunQueryDsl;
        let mut conn = state.db.conn().unwrap();
        diesel::sql_query(
            "UPDATE notifications SET created_at = '2020-01-01 00:00:00' \
             WHERE kind = 'friend_request'",
        )
        .execute(&mut conn)
        .unwrap();
    }
    assert_eq!(
        put(&app, "/api/v1/me/friends/cid_q", &ann.access)
            .await
            .status,
        201
    );
    let to_cid = requests_to_cid().await;
    assert_eq!(to_cid.len(), 3, "{to_cid:?}");
    assert_eq!(to_cid[2]["username"], "ann_q");
}

#[actix_web::test]
async fn a_blocked_user_cannot_join_invite_or_befriend_the_blocker() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let ann = register(&app, "ann_b").await;
    let bob = register(&app, "bob_b").await;
    let cat = register(&app, "cat_b").await;

    // Friends first: the block ends it.
    put(&app, "/api/v1/me/friends/bob_b", &ann.access).await;
    put(&app, "/api/v1/me/friends/ann_b", &bob.access).await;
    let blocked = put(&app, "/api/v1/me/blocks/bob_b", &ann.access).await;
    assert_eq!(blocked.status, 201, "{}", blocked.text);
    assert_eq!(blocked.json["user"]["username"], "bob_b");
    let again = put(&app, "/api/v1/me/blocks/bob_b", &ann.access).await;
    assert_eq!(again.status, 200, "{}", again.text);
    let lists = get(&app, "/api/v1/me/friends", &bob.access).await;
    assert!(names(&lists.json["friends"]).is_empty(), "{}", lists.text);
    let blocks = get(&app, "/api/v1/me/blocks", &ann.access).await;
    assert_eq!(names(&blocks.json["items"]), ["bob_b"]);
    // Blocking again changes nothing, not even since when.
    assert_eq!(again.json["since"], blocked.json["since"]);
    assert_eq!(blocks.json["items"][0]["since"], blocked.json["since"]);

    // Friendship, both ways.
    put(&app, "/api/v1/me/friends/ann_b", &bob.access)
        .await
        .assert_problem(403, "blocked");
    put(&app, "/api/v1/me/friends/bob_b", &ann.access)
        .await
        .assert_problem(403, "blocked");

    // A table where the blocker sits.
    let game = post(
        &app,
        "/api/v1/games",
        json!({"visibility": "public"}),
        &ann.access,
    )
    .await;
    assert_eq!(game.status, 201, "{}", game.text);
    let id = game.json["id"].as_str().unwrap().to_owned();
    // The lobby does not offer the blocked user a table that would refuse them.
    let listed = |lobby: &Value| -> Vec<String> {
        lobby["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let bobs = get(&app, "/api/v1/games", &bob.access).await;
    assert!(!listed(&bobs.json).contains(&id), "{}", bobs.text);
    let cats = get(&app, "/api/v1/games", &cat.access).await;
    assert!(listed(&cats.json).contains(&id), "{}", cats.text);
    // Bob's own table stays in his lobby when the one who blocks him sits down at it.
    let bobs_table = post(&app, "/api/v1/games", json!({}), &bob.access).await;
    let bobs_id = bobs_table.json["id"].as_str().unwrap().to_owned();
    let joined = post(
        &app,
        &format!("/api/v1/games/{bobs_id}/join"),
        json!({}),
        &ann.access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);
    let bobs = get(&app, "/api/v1/games", &bob.access).await;
    assert!(listed(&bobs.json).contains(&bobs_id), "{}", bobs.text);
    post(
        &app,
        &format!("/api/v1/games/{id}/join"),
        json!({}),
        &bob.access,
    )
    .await
    .assert_problem(403, "blocked");
    let joined = post(
        &app,
        &format!("/api/v1/games/{id}/join"),
        json!({}),
        &cat.access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);

    // An invitation of the blocker.
    post(
        &app,
        "/api/v1/games",
        json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "ann_b"}, {"kind": "open"}, {"kind": "open"}]}),
        &bob.access,
    )
    .await
    .assert_problem(403, "blocked");
    // Nor may the blocker invite the blocked user, nor anyone invite both: the join would
    // refuse the blocked one whenever the blocker sits first, and the seat would wait for
    // nothing.
    let refused = post(
        &app,
        "/api/v1/games",
        json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "bob_b"}, {"kind": "open"}, {"kind": "open"}]}),
        &ann.access,
    )
    .await;
    refused.assert_problem(403, "blocked");
    assert!(
        refused.json["detail"]
            .as_str()
            .unwrap()
            .contains("you block bob_b")
    );
    for pair in [["ann_b", "bob_b"], ["bob_b", "ann_b"]] {
        let refused = post(
            &app,
            "/api/v1/games",
            json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": pair[0]}, {"kind": "invite", "username": pair[1]}, {"kind": "open"}]}),
            &cat.access,
        )
        .await;
        refused.assert_problem(403, "blocked");
    }
    let mine = get(&app, "/api/v1/me/games?status=waiting", &cat.access).await;
    assert_eq!(
        mine.json["items"].as_array().unwrap().len(),
        1,
        "{}",
        mine.text
    );

    // Unblocked, the table is open to them again.
    assert_eq!(
        delete(&app, "/api/v1/me/blocks/bob_b", &ann.access)
            .await
            .status,
        204
    );
    let joined = post(
        &app,
        &format!("/api/v1/games/{id}/join"),
        json!({}),
        &bob.access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);
    let blocks = get(&app, "/api/v1/me/blocks", &ann.access).await;
    assert!(names(&blocks.json["items"]).is_empty());
}

#[actix_web::test]
async fn the_lobby_can_list_only_friends_games() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let ann = register(&app, "ann_l").await;
    let bob = register(&app, "bob_l").await;
    let cat = register(&app, "cat_l").await;
    let dan = register(&app, "dan_l").await;
    put(&app, "/api/v1/me/friends/bob_l", &ann.access).await;
    put(&app, "/api/v1/me/friends/ann_l", &bob.access).await;
    // A request alone does not make a friend.
    put(&app, "/api/v1/me/friends/dan_l", &ann.access).await;
    let mut ids = Vec::new();
    for who in [&bob, &cat, &dan] {
        let game = post(
            &app,
            "/api/v1/games",
            json!({"visibility": "public"}),
            &who.access,
        )
        .await;
        assert_eq!(game.status, 201, "{}", game.text);
        ids.push(game.json["id"].as_str().unwrap().to_owned());
    }
    let all = get(&app, "/api/v1/games", &ann.access).await;
    assert_eq!(
        all.json["items"].as_array().unwrap().len(),
        3,
        "{}",
        all.text
    );
    let friends = get(&app, "/api/v1/games?friends=true", &ann.access).await;
    assert_eq!(friends.status, 200, "{}", friends.text);
    let listed: Vec<&str> = friends.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[0].as_str()]);
    get(&app, "/api/v1/me/games?friends=true", &ann.access)
        .await
        .assert_problem(400, "validation_failed");
}

#[actix_web::test]
async fn a_block_withdraws_the_blocked_users_invitations_to_the_blockers_waiting_tables() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let host = register(&app, "wd_host").await;
    let guest = register(&app, "wd_guest").await;
    let other = register(&app, "wd_other").await;
    let filler = register(&app, "wd_fill").await;
    let invite = |name: &str| json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": name}, {"kind": "open"}, {"kind": "open"}]});
    // The blocker's own table, a table where the blocker sits at another's, and one without
    // the blocker.
    let own = post(&app, "/api/v1/games", invite("wd_guest"), &host.access).await;
    assert_eq!(own.status, 201, "{}", own.text);
    let sat = post(&app, "/api/v1/games", invite("wd_guest"), &other.access).await;
    let elsewhere = post(&app, "/api/v1/games", invite("wd_guest"), &filler.access).await;
    let [own, sat, elsewhere] =
        [own, sat, elsewhere].map(|g| g.json["id"].as_str().unwrap().to_owned());
    let joined = post(
        &app,
        &format!("/api/v1/games/{sat}/join"),
        json!({}),
        &host.access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);

    let blocked = put(&app, "/api/v1/me/blocks/wd_guest", &host.access).await;
    assert_eq!(blocked.status, 201, "{}", blocked.text);

    for id in [&own, &sat] {
        let view = get(&app, &format!("/api/v1/games/{id}"), &host.access).await;
        assert_eq!(view.json["seats"][1]["open"], true, "{}", view.text);
        assert!(view.json["seats"][1]["invited"].is_null(), "{}", view.text);
        let events = get(&app, &format!("/api/v1/games/{id}/events"), &host.access).await;
        let last = events.json["events"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["type"], "seat_changed", "{}", events.text);
        assert_eq!(last["data"]["reason"], "invite_withdrawn");
        assert_eq!(last["data"]["seat"], 1);
        assert!(last["data"]["user_id"].is_null(), "names nobody: {last}");
    }
    // The invitation the blocker has no part in stays; the others are gone from the
    // guest's list, and their seats are anyone's.
    let mine = get(&app, "/api/v1/me/games?status=waiting", &guest.access).await;
    let ids: Vec<&str> = mine.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [elsewhere.as_str()], "{}", mine.text);
    let taken = post(
        &app,
        &format!("/api/v1/games/{own}/join"),
        json!({"seat": 1}),
        &filler.access,
    )
    .await;
    assert_eq!(taken.status, 200, "{}", taken.text);
    // Blocking again withdraws nothing more.
    let again = put(&app, "/api/v1/me/blocks/wd_guest", &host.access).await;
    assert_eq!(again.status, 200, "{}", again.text);
}

#[actix_web::test]
async fn the_block_list_pages_like_every_list_the_latest_blocked_first() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let me = register(&app, "pager_b").await;
    let mut blocked = Vec::new();
    for i in 0..5 {
        let name = format!("paged_{i}");
        register(&app, &name).await;
        let put = put(&app, &format!("/api/v1/me/blocks/{name}"), &me.access).await;
        assert_eq!(put.status, 201, "{}", put.text);
        blocked.push(name);
    }
    // A deleted account leaves the list.
    let gone = register(&app, "paged_gone").await;
    put(&app, "/api/v1/me/blocks/paged_gone", &me.access).await;
    assert_eq!(delete(&app, "/api/v1/me", &gone.access).await.status, 204);

    let mut seen: Vec<Value> = Vec::new();
    let mut uri = "/api/v1/me/blocks?limit=2".to_owned();
    let mut pages = 0;
    loop {
        let page = get(&app, &uri, &me.access).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let items = page.json["items"].as_array().unwrap();
        assert!(items.len() <= 2, "{}", page.text);
        seen.extend(items.iter().cloned());
        pages += 1;
        match page.json["next_cursor"].as_str() {
            Some(cursor) => uri = format!("/api/v1/me/blocks?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let seen_list = Value::Array(seen.clone());
    let mut names: Vec<&str> = names(&seen_list);
    let since: Vec<&str> = seen.iter().map(|e| e["since"].as_str().unwrap()).collect();
    assert!(
        since.windows(2).all(|w| w[0] >= w[1]),
        "latest first: {since:?}"
    );
    names.sort_unstable();
    assert_eq!(names, blocked, "each once, and no deleted account");
    // Without a limit, the default page holds them all.
    let whole = get(&app, "/api/v1/me/blocks", &me.access).await;
    assert_eq!(whole.json["items"].as_array().unwrap().len(), 5);
    assert!(whole.json["next_cursor"].is_null());
    for bad in ["limit=0", "limit=201", "cursor=junk"] {
        get(&app, &format!("/api/v1/me/blocks?{bad}"), &me.access)
            .await
            .assert_problem(400, "validation_failed");
    }
}

#[actix_web::test]
async fn a_forged_cursor_with_a_time_no_list_can_hold_is_400_on_every_list() {
    use base64::Engine;
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let me = register(&app, "forger").await;
    let id = "00000000-0000-0000-0000-000000000000";
    // Before PostgreSQL's first timestamp (4713 BC), and after the years this server makes.
    for at in ["-5000-01-01T00:00:00", "12026-01-01T00:00:00"] {
        for (list, key) in [
            ("/api/v1/games", format!("{at}|{id}")),
            ("/api/v1/me/blocks", format!("{at}|{id}")),
            (
                "/api/v1/me/games",
                format!("u:1|{at}|2026-01-01T00:00:00|{id}"),
            ),
            ("/api/v1/me/games", format!("u:0||{at}|{id}")),
        ] {
            let cursor = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key);
            get(&app, &format!("{list}?cursor={cursor}"), &me.access)
                .await
                .assert_problem(400, "validation_failed");
        }
    }
}
