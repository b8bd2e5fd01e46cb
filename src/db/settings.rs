//! Server-wide settings stored in the database.

use diesel::prelude::*;

use super::AnyConnection;
use super::schema::server_settings;

/// The value of a setting.
pub fn get(conn: &mut AnyConnection, key: &str) -> QueryResult<Option<String>> {
    server_settings::table
        .find(key)
        .select(server_settings::value)
        .first(conn)
        .optional()
}

/// Sets a setting if it is not set yet and returns the value that is stored, so two
/// processes that race both end with the same value.
pub fn get_or_insert(conn: &mut AnyConnection, key: &str, value: &str) -> QueryResult<String> {
    if let Some(existing) = get(conn, key)? {
        return Ok(existing);
    }
    let inserted = diesel::insert_into(server_settings::table)
        .values((
            server_settings::key.eq(key),
            server_settings::value.eq(value),
            server_settings::updated_at.eq(super::now()),
        ))
        .execute(conn);
    match inserted {
        Ok(_)
        | Err(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        )) => get(conn, key)?.ok_or(diesel::result::Error::NotFound),
        Err(e) => Err(e),
    }
}
