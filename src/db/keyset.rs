//! Keyset pagination: a list ordered by `(time, id)` goes on strictly past the last row of
//! the previous page, so that rows added meanwhile neither repeat nor skip a row.

use chrono::NaiveDateTime;
use diesel::dsl;
use diesel::prelude::*;
use diesel::query_dsl::methods::{FilterDsl, OrderDsl};
use diesel::sql_types::{Text, Timestamp};

/// A keyset position: the `(time, id)` of the last row of the previous page.
pub type Keyset = (NaiveDateTime, String);

/// Which way a keyset-paged list runs.
#[derive(Debug, Clone, Copy)]
pub(super) enum Direction {
    /// Newest first: a page goes on before the keyset position.
    NewestFirst,
    /// Oldest first: a page goes on after the keyset position.
    OldestFirst,
}

type Before<T, I> =
    dsl::Or<dsl::Lt<T, NaiveDateTime>, dsl::And<dsl::Eq<T, NaiveDateTime>, dsl::Lt<I, String>>>;
type After<T, I> =
    dsl::Or<dsl::Gt<T, NaiveDateTime>, dsl::And<dsl::Eq<T, NaiveDateTime>, dsl::Gt<I, String>>>;

/// `query` ordered by the columns `time` then `id` in `direction`, strictly past `from` when
/// given.
pub(super) fn page<Q, T, I>(
    query: Q,
    time: T,
    id: I,
    direction: Direction,
    from: Option<Keyset>,
) -> Q
where
    Q: OrderDsl<(dsl::Desc<T>, dsl::Desc<I>), Output = Q>
        + OrderDsl<(dsl::Asc<T>, dsl::Asc<I>), Output = Q>
        + FilterDsl<Before<T, I>, Output = Q>
        + FilterDsl<After<T, I>, Output = Q>,
    T: Expression<SqlType = Timestamp> + Copy,
    I: Expression<SqlType = Text> + Copy,
{
    let query = match direction {
        Direction::NewestFirst => OrderDsl::order(query, (time.desc(), id.desc())),
        Direction::OldestFirst => OrderDsl::order(query, (time.asc(), id.asc())),
    };
    let Some((at, key)) = from else {
        return query;
    };
    let same_time = time.eq(at);
    match direction {
        Direction::NewestFirst => {
            FilterDsl::filter(query, time.lt(at).or(same_time.and(id.lt(key))))
        }
        Direction::OldestFirst => {
            FilterDsl::filter(query, time.gt(at).or(same_time.and(id.gt(key))))
        }
    }
}
