//! Hand-written PostgreSQL statements that stay prepared on their connection.
//!
//! diesel prepares and plans every `sql_query` and every query with an SQL literal anew on
//! each execution; for the statements an action runs, planning cost more than executing.
//! [`Prepared`] marks its SQL as safe to cache, so diesel keeps one prepared statement per
//! connection. Each [`Sql`] names a type of its own that diesel keys its cache by: keyed by
//! the text instead, diesel would build the text anew and hash it on every execution, which
//! for the action's commit (several KB) was a visible share of the server's time under load.

use std::marker::PhantomData;

use chrono::NaiveDateTime;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text, Timestamp, Untyped};
use diesel::{QueryResult, RunQueryDsl};

/// One bound value.
pub enum Bind<'a> {
    /// `text`.
    Text(&'a str),
    /// Nullable `text`.
    OptText(Option<&'a str>),
    /// `bigint`.
    BigInt(i64),
    /// `integer`.
    Int(i32),
    /// Nullable `timestamp`.
    OptTimestamp(Option<NaiveDateTime>),
    /// `timestamp`.
    Timestamp(NaiveDateTime),
    /// `text[]`.
    TextArray(Vec<&'a str>),
    /// `text[]` with nulls.
    OptTextArray(Vec<Option<&'a str>>),
    /// `bigint[]`.
    BigIntArray(Vec<i64>),
    /// `integer[]`.
    IntArray(Vec<i32>),
    /// `timestamp[]` with nulls.
    OptTimestampArray(Vec<Option<NaiveDateTime>>),
}

/// The text of a [`Prepared`] statement, split once at its placeholders (`$1`, `$2`, … in
/// order of appearance, each used once). `K` keys the statement in diesel's cache: every
/// text needs a type of its own (an uninhabited `enum`), and the same bind types on every
/// execution.
pub struct Sql<K> {
    text: &'static str,
    pieces: std::sync::OnceLock<Vec<&'static str>>,
    key: PhantomData<fn() -> K>,
}

impl<K> Sql<K> {
    /// A statement text, split on first use.
    pub const fn new(text: &'static str) -> Self {
        Self {
            text,
            pieces: std::sync::OnceLock::new(),
            key: PhantomData,
        }
    }

    /// The statement's text.
    pub fn text(&self) -> &'static str {
        self.text
    }

    /// The SQL between the placeholders (one more piece than placeholders).
    fn pieces(&self) -> &[&'static str] {
        self.pieces.get_or_init(|| {
            let text = self.text;
            let bytes = text.as_bytes();
            let mut pieces = Vec::new();
            let (mut start, mut i) = (0, 0);
            while i < bytes.len() {
                if bytes[i] == b'$' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    pieces.push(&text[start..i]);
                    i += 1;
                    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                        i += 1;
                    }
                    start = i;
                } else {
                    i += 1;
                }
            }
            pieces.push(&text[start..]);
            pieces
        })
    }
}

/// A statement with one [`Bind`] per placeholder.
pub struct Prepared<'a, K: 'static> {
    sql: &'static Sql<K>,
    binds: Vec<Bind<'a>>,
}

impl<'a, K> Prepared<'a, K> {
    /// The statement `sql` with its values.
    pub fn new(sql: &'static Sql<K>, binds: Vec<Bind<'a>>) -> Self {
        Self { sql, binds }
    }
}

impl<K> QueryId for Prepared<'_, K> {
    type QueryId = K;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<K> Query for Prepared<'_, K> {
    type SqlType = Untyped;
}

impl<K, Conn> RunQueryDsl<Conn> for Prepared<'_, K> {}

impl<K> QueryFragment<Pg> for Prepared<'_, K> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let pieces = self.sql.pieces();
        if pieces.len() != self.binds.len() + 1 {
            return Err(diesel::result::Error::QueryBuilderError(
                format!(
                    "{} placeholders for {} values",
                    pieces.len() - 1,
                    self.binds.len()
                )
                .into(),
            ));
        }
        for (piece, bind) in pieces.iter().zip(&self.binds) {
            out.push_sql(piece);
            match bind {
                Bind::Text(v) => out.push_bind_param::<Text, _>(v)?,
                Bind::OptText(v) => out.push_bind_param::<Nullable<Text>, _>(v)?,
                Bind::BigInt(v) => out.push_bind_param::<BigInt, _>(v)?,
                Bind::Int(v) => out.push_bind_param::<Integer, _>(v)?,
                Bind::OptTimestamp(v) => out.push_bind_param::<Nullable<Timestamp>, _>(v)?,
                Bind::Timestamp(v) => out.push_bind_param::<Timestamp, _>(v)?,
                Bind::TextArray(v) => out.push_bind_param::<Array<Text>, _>(v)?,
                Bind::OptTextArray(v) => out.push_bind_param::<Array<Nullable<Text>>, _>(v)?,
                Bind::BigIntArray(v) => out.push_bind_param::<Array<BigInt>, _>(v)?,
                Bind::IntArray(v) => out.push_bind_param::<Array<Integer>, _>(v)?,
                Bind::OptTimestampArray(v) => {
                    out.push_bind_param::<Array<Nullable<Timestamp>>, _>(v)?;
                }
            }
        }
        out.push_sql(pieces[pieces.len() - 1]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_at_each_placeholder() {
        enum Key {}
        static SQL: Sql<Key> = Sql::new("SELECT $1, x FROM t WHERE a = $2 AND b = '$' AND c = $10");
        assert_eq!(
            SQL.pieces(),
            vec![
                "SELECT ",
                ", x FROM t WHERE a = ",
                " AND b = '$' AND c = ",
                ""
            ]
        );
    }
}
