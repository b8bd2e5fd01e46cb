//! The embedded web client: `/` serves the page and `/app/…` its assets, with their types,
//! entity tags and a strict CSP; the first load stays small; every other path keeps its
//! meaning (an unknown API path is still a problem+json 404).

use std::collections::BTreeSet;

use actix_web::test::TestRequest;

use crate::common::{self, TestDb, send};

/// The same-origin URLs a text asset names: `/app/…` links and `./x.js` imports.
fn references(from: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    for quote in ['"', '\''] {
        for piece in text.split(quote).skip(1).step_by(2) {
            let file = piece.rsplit('/').next().is_some_and(|f| f.contains('.'));
            if piece.starts_with("/app/") && file && !piece.contains('$') {
                out.push(piece.to_owned());
            } else if let Some(name) = piece.strip_prefix("./")
                && name.ends_with(".js")
            {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out
}

#[actix_web::test]
async fn the_root_serves_the_client_page_with_a_strict_policy() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let page = send(&app, TestRequest::get().uri("/")).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.content_type(), "text/html; charset=utf-8");
    assert!(
        page.text
            .contains(r#"<script type="module" src="/app/js/main.js">"#)
    );
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'self'") && csp.contains("script-src 'self'"));
    assert!(!csp.contains("unsafe-inline"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("cache-control"), Some("no-cache"));

    let etag = page.header("etag").unwrap().to_owned();
    let again = send(
        &app,
        TestRequest::get()
            .uri("/")
            .insert_header(("if-none-match", etag.as_str())),
    )
    .await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());

    let head = send(
        &app,
        TestRequest::default()
            .method(actix_web::http::Method::HEAD)
            .uri("/"),
    )
    .await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("etag"), Some(etag.as_str()));
}

#[actix_web::test]
async fn every_asset_the_page_names_is_served_with_its_type_and_no_other_host() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let mut todo = vec!["/".to_owned(), "/sw.js".to_owned()];
    let mut seen = BTreeSet::new();
    while let Some(uri) = todo.pop() {
        if !seen.insert(uri.clone()) {
            continue;
        }
        let reply = send(&app, TestRequest::get().uri(&uri)).await;
        assert_eq!(reply.status, 200, "{uri}");
        let expected = match uri.rsplit('.').next() {
            Some("js") => "text/javascript; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            Some("svg") => "image/svg+xml",
            Some("webmanifest") => "application/manifest+json",
            Some("json") => "application/json",
            _ => "text/html; charset=utf-8",
        };
        assert_eq!(reply.content_type(), expected, "{uri}");
        // The SVG namespace is a name, never fetched; any other absolute URL would be.
        let foreign = reply
            .text
            .replace("http://www.w3.org/2000/svg", "")
            .contains("://");
        assert!(!foreign, "{uri} names another host");
        todo.extend(references(&uri, &reply.text));
    }
    assert!(seen.len() >= 10, "{seen:?}");

    let worker = send(&app, TestRequest::get().uri("/sw.js")).await;
    assert_eq!(worker.header("service-worker-allowed"), Some("/"));
}

#[actix_web::test]
async fn the_first_load_is_under_200_kb_compressed() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let index = send(&app, TestRequest::get().uri("/")).await;
    let mut uris: BTreeSet<String> = references("/", &index.text).into_iter().collect();
    let mut frontier: Vec<String> = uris.iter().cloned().collect();
    while let Some(uri) = frontier.pop() {
        let reply = send(&app, TestRequest::get().uri(&uri)).await;
        for next in references(&uri, &reply.text) {
            if uris.insert(next.clone()) {
                frontier.push(next);
            }
        }
    }
    uris.insert("/".to_owned());
    let mut total = 0;
    for uri in &uris {
        let reply = send(
            &app,
            TestRequest::get()
                .uri(uri)
                .insert_header(("accept-encoding", "gzip")),
        )
        .await;
        assert_eq!(reply.status, 200, "{uri}");
        total += reply.body.len();
    }
    assert!(total <= 200 * 1024, "the first load is {total} bytes gzip");
}

#[actix_web::test]
async fn unknown_paths_keep_their_problem_json_404() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for uri in [
        "/api/v1/nothing-here",
        "/api/nothing",
        "/app/nothing.js",
        "/elsewhere",
    ] {
        send(&app, TestRequest::get().uri(uri))
            .await
            .assert_problem(404, "not_found");
    }
    let health = send(&app, TestRequest::get().uri("/healthz")).await;
    assert_eq!(health.json["status"], "ok");
    let spec = send(&app, TestRequest::get().uri("/openapi.json")).await;
    assert!(spec.json["paths"].is_object());
    assert!(
        spec.json["paths"].get("/").is_none(),
        "the client is no API"
    );
}
