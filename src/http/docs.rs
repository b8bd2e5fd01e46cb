//! The API's description of itself: the OpenAPI document at `/openapi.json`, and `/docs`,
//! the way into the Swagger UI that reads it (served from the binary: it works offline).

use actix_web::http::header;
use actix_web::{HttpResponse, get, web};

/// The finished OpenAPI document, rendered once when the app is built.
#[derive(Debug, Clone)]
pub struct Document(pub web::Bytes);

/// The OpenAPI document.
///
/// This server's OpenAPI 3.1 document: every operation, schema, example and problem code.
/// The same text as `leekha openapi` prints and `openapi/openapi.json` holds.
#[utoipa::path(operation_id = "openapi_document", tag = "operations",
    responses(
        (status = 200, description = "The OpenAPI document", body = Object,
         content_type = "application/json",
         example = json!({"openapi": "3.1.0", "info": {"title": "Leekha server", "version": "1.1.0"}, "paths": {}}))))]
#[get("/openapi.json")]
pub async fn document(document: web::Data<Document>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(header::ContentType::json())
        .body(document.0.clone())
}

/// The browsable documentation.
///
/// Redirects (308) to `/docs/`, the Swagger UI of the OpenAPI document, served from the
/// binary.
#[utoipa::path(operation_id = "docs", tag = "operations",
    responses(
        (status = 308, description = "The Swagger UI is at `/docs/`",
         headers(("Location" = String, description = "`/docs/`")))))]
#[get("/docs")]
pub async fn docs() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, "/docs/"))
        .finish()
}
