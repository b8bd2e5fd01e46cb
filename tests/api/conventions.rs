//! The HTTP conventions of API 1.1 that hold across endpoints: `Location` on every 201,
//! compression, CORS, 415 for non-JSON bodies, problem type pages, `RateLimit-*` headers,
//! `HEAD` on the probes.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::common::{self, TestDb, bearer, post_json, send};

/// Every documented operation as (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            out.push((method.clone(), path.clone(), op.clone()));
        }
    }
    out
}

#[actix_web::test]
async fn every_201_names_the_new_resource_in_location() {
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    let mut created: Vec<String> = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op["responses"].get("201").is_some())
        .map(|(method, path, _)| format!("{method} {path}"))
        .collect();
    created.sort();
    assert_eq!(
        created,
        [
            "post /api/v1/auth/guest",
            "post /api/v1/auth/register",
            "post /api/v1/games"
        ],
        "a new 201 needs its Location checked here"
    );

    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let registered = send(
        &app,
        post_json(
            "/api/v1/auth/register",
            json!({"username": "lina", "password": common::PASSWORD}),
        ),
    )
    .await;
    assert_eq!(registered.status, 201, "{}", registered.text);
    assert_eq!(registered.header("location").unwrap(), "/api/v1/me");
    let token = registered.json["access_token"].as_str().unwrap();
    let me = send(&app, bearer(TestRequest::get().uri("/api/v1/me"), token)).await;
    assert_eq!(me.json["id"], registered.json["user"]["id"]);

    let guest = send(&app, TestRequest::post().uri("/api/v1/auth/guest")).await;
    assert_eq!(guest.status, 201, "{}", guest.text);
    assert_eq!(guest.header("location").unwrap(), "/api/v1/me");

    let game = send(
        &app,
        bearer(TestRequest::post().uri("/api/v1/games"), token),
    )
    .await;
    assert_eq!(game.status, 201, "{}", game.text);
    let location = game.header("location").unwrap();
    assert_eq!(
        location,
        format!("/api/v1/games/{}", game.json["id"].as_str().unwrap())
    );
    let shown = send(&app, bearer(TestRequest::get().uri(location), token)).await;
    assert_eq!(shown.status, 200, "{}", shown.text);
    assert_eq!(shown.json["id"], game.json["id"]);
}

#[actix_web::test]
async fn head_on_the_probes_answers_like_get_without_a_body() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for path in ["/healthz", "/readyz"] {
        let get = send(&app, TestRequest::get().uri(path)).await;
        let head = send(&app, TestRequest::default().method(Method::HEAD).uri(path)).await;
        assert_eq!(get.status, 200, "{path}");
        assert_eq!(head.status, get.status, "{path}");
        assert_eq!(head.content_type(), get.content_type(), "{path}");
        assert!(
            !get.text.is_empty() && head.text.is_empty(),
            "{path}: {}",
            head.text
        );
    }
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    assert!(doc["paths"]["/healthz"]["head"].is_object());
    assert!(doc["paths"]["/readyz"]["head"].is_object());
}

#[actix_web::test]
async fn head_on_readyz_reports_an_unmigrated_database() {
    let db = TestDb::empty();
    let app = common::app(db.state()).await;
    let head = send(
        &app,
        TestRequest::default().method(Method::HEAD).uri("/readyz"),
    )
    .await;
    assert_eq!(head.status, 503);
}
