//! Table talk: the seated chat in text or phrases, as events and notifications; blocks hide
//! an author's words from the blocker; moderators hide messages and mute users.

use serde_json::{Value, json};

use crate::admin::admin;
use crate::common::play::{four, game_of, get, get_all, legal_action, of_kind, post};
use crate::common::{TestDb, register};

fn texts(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["text"]
                .as_str()
                .or(m["phrase"].as_str())
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn chat_events(events: &Value) -> Vec<Value> {
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "chat_message")
        .map(|e| e["data"].clone())
        .collect()
}

#[actix_web::test]
async fn seated_players_chat_in_text_and_phrases_as_events() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let players = four(&app, "talk_").await;
    let id = game_of(&app, &players, json!({})).await;
    let chat = format!("/api/v1/games/{id}/chat");

    let phrases = crate::common::send(
        &app,
        actix_web::test::TestRequest::get().uri("/api/v1/chat/phrases"),
    )
    .await;
    assert_eq!(phrases.status, 200);
    let first = &phrases.json["items"][0];
    assert!(
        first["en"].is_string() && first["ar"].is_string(),
        "{}",
        phrases.text
    );

    let said = post(
        &app,
        &chat,
        json!({"text": "  Cafe\u{301} time!  "}),
        &players[0].access,
    )
    .await;
    assert_eq!(said.status, 201, "{}", said.text);
    assert_eq!(said.json["text"], "Caf\u{e9} time!", "trimmed and NFC");
    assert_eq!(said.json["seat"], 0);
    assert_eq!(said.header("location").unwrap(), chat);
    assert!(said.header("ratelimit-remaining").is_some());
    let phrase = post(
        &app,
        &chat,
        json!({"phrase": "good_luck"}),
        &players[2].access,
    )
    .await;
    assert_eq!(phrase.status, 201, "{}", phrase.text);
    assert!(phrase.json["text"].is_null());

    let page = get(&app, &chat, &players[1].access).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(texts(&page.json), ["Caf\u{e9} time!", "good_luck"]);
    let after = said.json["seq"].as_i64().unwrap();
    let rest = get(&app, &format!("{chat}?after={after}"), &players[1].access).await;
    assert_eq!(texts(&rest.json), ["good_luck"]);
    let last = phrase.json["seq"].as_i64().unwrap();
    assert_eq!(rest.json["last_seq"], last);
    let none = get(&app, &format!("{chat}?after={last}"), &players[1].access).await;
    assert_eq!(
        none.json["last_seq"], last,
        "nothing new: where the client was"
    );
    // An `after` past the game's last event comes back as that event's seq, as the events
    // list does: taken as the next `after`, it skips no message posted later.
    let ahead = get(
        &app,
        &format!("{chat}?after={}", i64::MAX),
        &players[1].access,
    )
    .await;
    assert_eq!(ahead.status, 200, "{}", ahead.text);
    assert_eq!(ahead.json["last_seq"], last);

    // Each message is the game's event at its seq, and the action after it still works.
    let events = get_all(
        &app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &players[3].access,
    )
    .await;
    let said_events = chat_events(&events.json);
    assert_eq!(said_events.len(), 2);
    assert_eq!(said_events[0]["text"], "Caf\u{e9} time!");
    assert_eq!(said_events[1]["phrase"], "good_luck");
    let view = get(&app, &format!("/api/v1/games/{id}"), &players[3].access).await;
    let action = legal_action(&view.json).unwrap();
    let acted = post(
        &app,
        &format!("/api/v1/games/{id}/actions"),
        action,
        &players[3].access,
    )
    .await;
    assert_eq!(acted.status, 200, "{}", acted.text);

    // The others hear of it in their feed; the author does not.
    let feed = get(&app, "/api/v1/me/notifications", &players[1].access).await;
    let chats = of_kind(&feed.json, "chat_message").len();
    assert_eq!(chats, 2);
    let feed = get(&app, "/api/v1/me/notifications", &players[0].access).await;
    let own = of_kind(&feed.json, "chat_message").len();
    assert_eq!(own, 1, "only the other's message");

    for bad in [
        json!({"text": "   "}),
        json!({"text": "x".repeat(201)}),
        json!({"text": "bell\u{7}"}),
        json!({"text": "right\u{202E}left"}),
        json!({"text": "one line\u{2028}another"}),
        json!({"text": "one paragraph\u{2029}another"}),
        json!({"text": "\u{200B}"}),
        json!({"text": "\u{FEFF}\u{200F} \u{2060}"}),
        // Nothing visible either: a lone variation selector or combining mark, a tag, the
        // Hangul filler, the blank Braille pattern, a noncharacter.
        json!({"text": "\u{FE0F}"}),
        json!({"text": "\u{0301}"}),
        json!({"text": "\u{E0041}"}),
        json!({"text": "\u{3164}"}),
        json!({"text": "\u{2800} \u{2800}"}),
        json!({"text": "\u{FFFF}"}),
        // Text nobody sees beside text everyone does: tags spelling "hi", an annotation.
        json!({"text": "nice game\u{E0068}\u{E0069}"}),
        json!({"text": "\u{FFF9}shown\u{FFFA}hidden\u{FFFB}"}),
        json!({"phrase": "no_such_phrase"}),
        json!({"text": "a", "phrase": "hello"}),
        json!({}),
    ] {
        post(&app, &chat, bad.clone(), &players[0].access)
            .await
            .assert_problem(400, "validation_failed");
    }
    // Whatever shows something passes: an emoji alone, a digit, a mark on its letter.
    for fine in [
        "\u{1F44D}",
        "\u{0663}",
        "!",
        "e\u{0301}",
        "\u{2764}\u{FE0F}",
        // England's flag: tags, but the ones a region's flag is made of.
        "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
    ] {
        let posted = post(&app, &chat, json!({ "text": fine }), &players[0].access).await;
        assert_eq!(posted.status, 201, "{fine:?}: {}", posted.text);
    }
    assert_eq!(
        post(
            &app,
            &chat,
            json!({"text": "é".repeat(200)}),
            &players[0].access
        )
        .await
        .status,
        201,
        "200 characters, not bytes"
    );
    // The limit is the kept text's: white space around it, or accents sent as combining
    // marks, do not count (so the schema states no maxLength for what is sent).
    for long in [format!("  {}  ", "x".repeat(200)), "e\u{301}".repeat(200)] {
        let posted = post(&app, &chat, json!({ "text": long }), &players[0].access).await;
        assert_eq!(posted.status, 201, "{}", posted.text);
        assert_eq!(posted.json["text"].as_str().unwrap().chars().count(), 200);
    }
    // The direction marks Arabic needs stay, beside visible text.
    let arabic = post(
        &app,
        &chat,
        json!({"text": "\u{200F}مرحبا 3\u{200F}"}),
        &players[0].access,
    )
    .await;
    assert_eq!(arabic.status, 201, "{}", arabic.text);
    // A public game: an outsider watches it, reads the table talk, but is not at the table.
    let outsider = register(&app, "talk_outsider").await;
    post(&app, &chat, json!({"text": "hi"}), &outsider.access)
        .await
        .assert_problem(403, "not_seated");
    let read = get(&app, &chat, &outsider.access).await;
    assert_eq!(read.status, 200, "{}", read.text);
    let seated = get(&app, &chat, &players[1].access).await;
    assert_eq!(read.json, seated.json);
}

#[actix_web::test]
async fn a_player_who_resigned_reads_the_chat_as_a_spectator_and_no_longer_posts_or_hears_it() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let players = four(&app, "gone_").await;
    let id = game_of(&app, &players, json!({})).await;
    let chat = format!("/api/v1/games/{id}/chat");
    let resigned = post(
        &app,
        &format!("/api/v1/games/{id}/resign"),
        json!({}),
        &players[1].access,
    )
    .await;
    assert_eq!(resigned.status, 200, "{}", resigned.text);

    post(&app, &chat, json!({"text": "gg"}), &players[1].access)
        .await
        .assert_problem(403, "not_seated");
    let said = post(&app, &chat, json!({"text": "hello"}), &players[0].access).await;
    assert_eq!(said.status, 201, "{}", said.text);
    // They read it, as a spectator does, but do not report it nor hear of it in their feed.
    let page = get(&app, &chat, &players[1].access).await;
    assert_eq!(texts(&page.json), ["hello"]);
    let message = said.json["id"].as_str().unwrap();
    post(
        &app,
        &format!("{chat}/{message}/report"),
        json!({"reason": "rude"}),
        &players[1].access,
    )
    .await
    .assert_problem(403, "not_seated");
    let chats = |feed: &Value| of_kind(feed, "chat_message").len();
    let feed = get(&app, "/api/v1/me/notifications", &players[1].access).await;
    assert_eq!(chats(&feed.json), 0, "{}", feed.text);
    let feed = get(&app, "/api/v1/me/notifications", &players[2].access).await;
    assert_eq!(chats(&feed.json), 1, "{}", feed.text);
}

#[actix_web::test]
async fn chat_is_rate_limited_per_user() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let players = four(&app, "chatty_").await;
    let id = game_of(&app, &players, json!({})).await;
    let chat = format!("/api/v1/games/{id}/chat");
    for i in 0..20 {
        let said = post(
            &app,
            &chat,
            json!({"text": format!("message {i}")}),
            &players[0].access,
        )
        .await;
        assert_eq!(said.status, 201, "{}", said.text);
    }
    let refused = post(
        &app,
        &chat,
        json!({"text": "one too many"}),
        &players[0].access,
    )
    .await;
    refused.assert_problem(429, "rate_limited");
    assert!(refused.header("retry-after").is_some());
    // Others are not affected.
    let other = post(&app, &chat, json!({"text": "hello"}), &players[1].access).await;
    assert_eq!(other.status, 201, "{}", other.text);
}

#[actix_web::test]
async fn a_blocker_never_reads_the_blocked_users_words() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let players = four(&app, "hush_").await;
    let id = game_of(&app, &players, json!({})).await;
    let chat = format!("/api/v1/games/{id}/chat");
    // Blocking after the game started: the game goes on.
    let blocked = crate::common::send(
        &app,
        crate::common::bearer(
            actix_web::test::TestRequest::put().uri("/api/v1/me/blocks/hush_0"),
            &players[1].access,
        ),
    )
    .await;
    assert_eq!(blocked.status, 201, "{}", blocked.text);
    post(
        &app,
        &chat,
        json!({"text": "you will not read this"}),
        &players[0].access,
    )
    .await;
    post(&app, &chat, json!({"text": "but this"}), &players[2].access).await;

    let page = get(&app, &chat, &players[1].access).await;
    assert_eq!(texts(&page.json), ["but this"]);
    let page = get(&app, &chat, &players[3].access).await;
    assert_eq!(texts(&page.json), ["you will not read this", "but this"]);
    let events = get_all(
        &app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &players[1].access,
    )
    .await;
    assert!(
        !events.text.contains("you will not read this"),
        "{}",
        events.text
    );
    let said = chat_events(&events.json);
    assert_eq!(said[0]["hidden"], true);
    assert!(said[0]["text"].is_null());
    assert_eq!(said[1]["text"], "but this");
    // Nor is the blocker told that the blocked user spoke; others are.
    let speakers = |feed: &Value| -> Vec<String> {
        of_kind(feed, "chat_message")
            .iter()
            .map(|n| n["data"]["username"].as_str().unwrap().to_owned())
            .collect()
    };
    let feed = get(&app, "/api/v1/me/notifications", &players[1].access).await;
    assert_eq!(speakers(&feed.json), ["hush_2"], "{}", feed.text);
    let feed = get(&app, "/api/v1/me/notifications", &players[3].access).await;
    assert_eq!(speakers(&feed.json), ["hush_0", "hush_2"], "{}", feed.text);
}

#[actix_web::test]
async fn moderators_hide_messages_for_everyone_and_mute_users() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = crate::common::app(state.clone()).await;
    let players = four(&app, "mod_").await;
    let boss = admin(&app, &state, "mod_boss").await;
    let id = game_of(&app, &players, json!({})).await;
    let chat = format!("/api/v1/games/{id}/chat");
    let rude = post(
        &app,
        &chat,
        json!({"text": "something rude"}),
        &players[0].access,
    )
    .await;
    let message = rude.json["id"].as_str().unwrap().to_owned();

    let report = format!("{chat}/{message}/report");
    post(
        &app,
        &report,
        json!({"reason": "nul\u{0} byte"}),
        &players[1].access,
    )
    .await
    .assert_problem(400, "validation_failed");
    // A text area's line break (CRLF) is a line break, kept as one LF.
    let reported = post(
        &app,
        &report,
        json!({"reason": "insults\r\nand threats"}),
        &players[1].access,
    )
    .await;
    assert_eq!(reported.status, 202, "{}", reported.text);
    assert_eq!(reported.json["new"], true);
    let again = post(
        &app,
        &report,
        json!({"reason": "insults"}),
        &players[1].access,
    )
    .await;
    assert_eq!(again.json["new"], false);
    post(&app, &report, json!({"reason": "mine"}), &players[0].access)
        .await
        .assert_problem(400, "validation_failed");
    // A spectator reads the message but has no seat to report it from.
    let watcher = crate::common::register(&app, "mod_watcher").await;
    let read = get(&app, &chat, &watcher.access).await;
    assert_eq!(read.status, 200, "{}", read.text);
    post(&app, &report, json!({"reason": "insults"}), &watcher.access)
        .await
        .assert_problem(403, "not_seated");

    let queue = get(&app, "/api/v1/admin/reports", &boss.access).await;
    assert_eq!(queue.status, 200, "{}", queue.text);
    assert_eq!(queue.json["items"].as_array().unwrap().len(), 1);
    assert_eq!(queue.json["items"][0]["message"]["text"], "something rude");
    assert_eq!(queue.json["items"][0]["reason"], "insults\nand threats");
    assert_eq!(queue.json["items"][0]["reporter"]["username"], "mod_1");
    assert_eq!(
        queue.json["items"][0]["message"]["user"]["username"], players[0].username,
        "{}",
        queue.text
    );
    get(&app, "/api/v1/admin/reports", &players[1].access)
        .await
        .assert_problem(403, "forbidden");

    let hidden = post(
        &app,
        &format!("/api/v1/admin/chat/{message}/hide"),
        json!({"reason": "insults"}),
        &boss.access,
    )
    .await;
    assert_eq!(hidden.status, 200, "{}", hidden.text);
    post(
        &app,
        &format!("/api/v1/admin/chat/{message}/hide"),
        json!({"reason": "insults"}),
        &boss.access,
    )
    .await
    .assert_problem(409, "already_hidden");
    for p in &players {
        let page = get(&app, &chat, &p.access).await;
        assert!(texts(&page.json).is_empty(), "{}", page.text);
        let events = get(&app, &format!("/api/v1/games/{id}/events"), &p.access).await;
        assert!(!events.text.contains("something rude"), "{}", events.text);
        assert_eq!(chat_events(&events.json)[0]["hidden"], true);
    }
    let queue = get(&app, "/api/v1/admin/reports", &boss.access).await;
    assert!(queue.json["items"].as_array().unwrap().is_empty());
    let audit = get(
        &app,
        "/api/v1/admin/audit?action=hide_message",
        &boss.access,
    )
    .await;
    assert_eq!(
        audit.json["items"].as_array().unwrap().len(),
        1,
        "{}",
        audit.text
    );
    // The administrators can still read what was hidden, in the audit log.
    assert_eq!(
        audit.json["items"][0]["details"]["text"], "something rude",
        "{}",
        audit.text
    );

    let until = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let muted = post(
        &app,
        &format!("/api/v1/admin/users/{}/mute", players[0].id),
        json!({"until": until, "reason": "insults"}),
        &boss.access,
    )
    .await;
    assert_eq!(muted.status, 200, "{}", muted.text);
    assert!(muted.json["muted_until"].is_string());
    post(&app, &chat, json!({"phrase": "sorry"}), &players[0].access)
        .await
        .assert_problem(403, "muted");
    // A muted player still plays.
    let view = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
    let action = legal_action(&view.json).unwrap();
    let acted = post(
        &app,
        &format!("/api/v1/games/{id}/actions"),
        action,
        &players[0].access,
    )
    .await;
    assert_eq!(acted.status, 200, "{}", acted.text);
    let lifted = post(
        &app,
        &format!("/api/v1/admin/users/{}/mute", players[0].id),
        json!({"until": null, "reason": "served"}),
        &boss.access,
    )
    .await;
    assert_eq!(lifted.status, 200, "{}", lifted.text);
    assert!(lifted.json["muted_until"].is_null());
    assert_eq!(
        post(&app, &chat, json!({"phrase": "sorry"}), &players[0].access)
            .await
            .status,
        201
    );

    // An ended game keeps its chat, read-only.
    let aborted = post(
        &app,
        &format!("/api/v1/admin/games/{id}/abort"),
        json!({"reason": "test"}),
        &boss.access,
    )
    .await;
    assert_eq!(aborted.status, 200, "{}", aborted.text);
    post(&app, &chat, json!({"text": "hello?"}), &players[1].access)
        .await
        .assert_problem(409, "chat_closed");
    let page = get(&app, &chat, &players[1].access).await;
    assert_eq!(texts(&page.json), ["sorry"]);
}

#[actix_web::test]
async fn moderators_dismiss_reports_and_the_message_stays() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = crate::common::app(state.clone()).await;
    let players = four(&app, "dis_").await;
    let boss = admin(&app, &state, "dis_boss").await;
    let id = game_of(&app, &players, json!({})).await;
    let chat = format!("/api/v1/games/{id}/chat");
    let said = post(
        &app,
        &chat,
        json!({"text": "nice lead"}),
        &players[0].access,
    )
    .await;
    let message = said.json["id"].as_str().unwrap().to_owned();
    let report = format!("{chat}/{message}/report");
    for p in &players[1..3] {
        let filed = post(&app, &report, json!({"reason": "spam?"}), &p.access).await;
        assert_eq!(filed.status, 202, "{}", filed.text);
    }
    let dismiss = format!("/api/v1/admin/chat/{message}/dismiss");
    post(&app, &dismiss, json!({}), &players[1].access)
        .await
        .assert_problem(403, "forbidden");

    let dismissed = post(&app, &dismiss, json!({"reason": "harmless"}), &boss.access).await;
    assert_eq!(dismissed.status, 200, "{}", dismissed.text);
    assert_eq!(dismissed.json["dismissed"], 2);
    assert_eq!(dismissed.json["message_id"], message.as_str());
    let queue = get(&app, "/api/v1/admin/reports", &boss.access).await;
    assert!(
        queue.json["items"].as_array().unwrap().is_empty(),
        "{}",
        queue.text
    );
    // The message stays for everyone.
    let page = get(&app, &chat, &players[2].access).await;
    assert_eq!(texts(&page.json), ["nice lead"]);
    post(&app, &dismiss, json!({}), &boss.access)
        .await
        .assert_problem(409, "no_open_reports");
    let audit = get(
        &app,
        "/api/v1/admin/audit?action=dismiss_reports",
        &boss.access,
    )
    .await;
    let entries = audit.json["items"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{}", audit.text);
    assert_eq!(entries[0]["target_type"], "chat_message");
    assert_eq!(entries[0]["target_id"], message.as_str());
    assert_eq!(entries[0]["reason"], "harmless");
    assert_eq!(entries[0]["details"]["reports"], 2);

    // A later report queues again; an empty body dismisses it too.
    let filed = post(
        &app,
        &report,
        json!({"reason": "again"}),
        &players[3].access,
    )
    .await;
    assert_eq!(filed.status, 202, "{}", filed.text);
    let queue = get(&app, "/api/v1/admin/reports", &boss.access).await;
    assert_eq!(queue.json["items"].as_array().unwrap().len(), 1);
    let req = crate::common::bearer(
        actix_web::test::TestRequest::post().uri(&dismiss),
        &boss.access,
    );
    let empty = crate::common::send(&app, req).await;
    assert_eq!(empty.status, 200, "{}", empty.text);
    assert_eq!(empty.json["dismissed"], 1);
    let unknown = format!("/api/v1/admin/chat/{}/dismiss", uuid::Uuid::new_v4());
    post(&app, &unknown, json!({}), &boss.access)
        .await
        .assert_problem(404, "not_found");
}
