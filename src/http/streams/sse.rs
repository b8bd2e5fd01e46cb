//! One open event stream: reads what is new after its position, writes it as SSE frames,
//! and waits for the next wake-up of its topic (or a heartbeat's time) in between.
//!
//! Memory per stream is bounded: it reads at most [`BATCH`] events at a time and reads again
//! only when the previous frames were taken by the connection, so a slow client holds at
//! most one batch (the connection's write buffer aside) and never the game's history.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::web::Bytes;
use futures_util::future::select;

use crate::app::AppState;
use crate::app::notifier::Topic;
use crate::app::presence::Watch;
use crate::error::Error;
use crate::http::games::{reseats, viewer_now};
use crate::http::views::events::EventView;
use crate::notifications::{self, NotificationView};
use crate::rules::Seat;

/// Events read at a time per stream.
pub const BATCH: i64 = 100;

/// How often an open spectator stream renews its watch (which lasts a minute).
const RENEW_EVERY: Duration = Duration::from_secs(20);

/// The first frame: how long a browser waits before it reconnects (ms).
const RETRY_FRAME: &[u8] = b"retry: 2000\n\n";
/// The heartbeat: a comment line, ignored by clients, that keeps proxies from closing an
/// idle connection.
const HEARTBEAT_FRAME: &[u8] = b": keep-alive\n\n";

/// What a stream follows.
#[derive(Debug)]
pub enum Source {
    /// A game's events, as `viewer` sees them (`None`: a spectator's copy).
    Game {
        /// The game id.
        id: String,
        /// The caller's seat.
        viewer: Option<Seat>,
        /// The game was over when the stream opened: it ends once the rest is sent.
        over: bool,
    },
    /// The caller's notification feed.
    Feed,
}

/// The caller's account topic, as seen when the stream was opened: a later targeted wake-up
/// (ban, deletion) ends the stream; a catch-up wake-up makes it re-check. The same for the
/// session's topic, woken by its logout.
#[derive(Debug)]
pub struct AccountWatch {
    /// The topic.
    pub topic: Arc<Topic>,
    /// Its generation when subscribed.
    pub generation: u64,
    /// Its targeted count when subscribed.
    pub targeted: u64,
    /// The session's topic and its targeted count when subscribed, for a token that names
    /// its session.
    pub session: Option<(Arc<Topic>, u64)>,
}

impl AccountWatch {
    /// Subscribes to `user_id`'s account topic. The stream's first read re-checks the
    /// account once, so a ban or a deletion committed between the request's check and this
    /// subscription still ends it.
    pub fn subscribe(state: &AppState, user_id: &str, session: Option<&str>) -> Self {
        let topic = state
            .notifier
            .subscribe(&crate::db::wake::account_topic(user_id));
        let session = session.map(|sid| {
            let topic = state
                .notifier
                .subscribe(&crate::db::wake::session_topic(sid));
            let targeted = topic.targeted();
            (topic, targeted)
        });
        Self {
            generation: topic.generation().wrapping_sub(1),
            targeted: topic.targeted(),
            topic,
            session,
        }
    }

    /// The topic whose wake-up ends the stream besides the account's: the session's, or
    /// the account's again when the token named no session.
    fn session_topic(&self) -> Arc<Topic> {
        self.session
            .as_ref()
            .map_or_else(|| self.topic.clone(), |(topic, _)| topic.clone())
    }

    /// Whether the session was logged out since the stream opened.
    fn session_ended(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|(topic, targeted)| topic.targeted() != *targeted)
    }
}

/// What a stream follows, for whom, and what holds it open.
pub struct Subscription {
    /// The application state.
    pub state: AppState,
    /// The caller.
    pub user_id: String,
    /// The game's events or the caller's notifications.
    pub source: Source,
    /// The last position sent.
    pub after: i64,
    /// Woken when the source has something new.
    pub topic: Arc<Topic>,
    /// What ends the stream: a ban, a logout, a deletion.
    pub account: AccountWatch,
    /// The stream's place under `LEEKHA_MAX_STREAMS`, held while it is open.
    pub watch: Watch,
}

/// An open stream.
pub struct EventStream {
    sub: Subscription,
    queue: VecDeque<Bytes>,
    ending: bool,
    /// When a spectator's watch was last renewed (see `db::watchers`).
    renewed: Option<Instant>,
    /// When the stream ends at the latest (`LEEKHA_STREAM_MAX_SECONDS`).
    closes_at: Option<Instant>,
}

impl EventStream {
    /// A stream of what `sub` follows.
    pub fn new(sub: Subscription) -> Self {
        Self {
            queue: VecDeque::from([Bytes::from_static(RETRY_FRAME)]),
            ending: false,
            renewed: None,
            closes_at: Some(sub.state.config.stream_max_age)
                .filter(|age| !age.is_zero())
                .map(|age| Instant::now() + age),
            sub,
        }
    }

    /// The response body: frames until the stream ends.
    pub fn into_body(
        self,
    ) -> impl futures_util::Stream<Item = Result<Bytes, actix_web::Error>> + 'static {
        futures_util::stream::unfold(self, |mut s| async move {
            let frame = s.next_frame().await?;
            Some((Ok(frame), s))
        })
    }

    async fn next_frame(&mut self) -> Option<Bytes> {
        loop {
            if let Some(frame) = self.queue.pop_front() {
                return Some(frame);
            }
            if self.ending || self.sub.state.notifier.is_shutting_down() {
                return None;
            }
            let topic = self.sub.topic.clone();
            let account = self.sub.account.topic.clone();
            let session = self.sub.account.session_topic();
            // Armed before reading: a change in between still wakes the stream.
            let woken = topic.notified();
            let ended = account.notified();
            let logged_out = session.notified();
            tokio::pin!(woken, ended, logged_out);
            woken.as_mut().enable();
            ended.as_mut().enable();
            logged_out.as_mut().enable();
            if !self.still_allowed().await {
                return None;
            }
            self.renew_spectator().await;
            if let Err(e) = self.read(topic.generation()).await {
                // The client resumes with `Last-Event-ID` on reconnecting; nothing is lost.
                tracing::warn!(user.id = %self.sub.user_id, error = %e, "an event stream failed; closing it");
                return None;
            }
            if !self.queue.is_empty() || self.ending {
                continue;
            }
            let heartbeat = self.sub.state.config.stream_heartbeat;
            let left = self
                .closes_at
                .map(|at| at.saturating_duration_since(Instant::now()));
            if left.is_some_and(|left| left.is_zero()) {
                // Everything read so far went out first; the client resumes after it.
                return None;
            }
            let wait = left.map_or(heartbeat, |left| left.min(heartbeat));
            if tokio::time::timeout(wait, select(woken, select(ended, logged_out)))
                .await
                .is_err()
                && wait == heartbeat
            {
                self.queue.push_back(Bytes::from_static(HEARTBEAT_FRAME));
            }
        }
    }

    /// Keeps a spectator counted while the stream is open: the loop comes round at least
    /// once a heartbeat, and a watch counts for a minute.
    async fn renew_spectator(&mut self) {
        let Source::Game {
            id, viewer: None, ..
        } = &self.sub.source
        else {
            return;
        };
        if self.renewed.is_some_and(|at| at.elapsed() < RENEW_EVERY) {
            return;
        }
        self.renewed = Some(Instant::now());
        crate::http::games::spectate(&self.sub.state, id, None, &self.sub.user_id).await;
    }

    /// False once the account's topic says the stream must end: at once after a ban, a logout
    /// or a deletion; after a catch-up wake-up (the listener reconnected, and may have missed
    /// one) only if the account is now refused.
    async fn still_allowed(&mut self) -> bool {
        let topic = &self.sub.account.topic;
        if topic.targeted() != self.sub.account.targeted || self.sub.account.session_ended() {
            return false;
        }
        let generation = topic.generation();
        if generation == self.sub.account.generation {
            return true;
        }
        self.sub.account.generation = generation;
        let user = self.sub.user_id.clone();
        self.sub
            .state
            .db
            .run(move |conn| crate::auth::check_account(conn, &user))
            .await
            .is_ok()
    }

    /// Queues the frames of what is new after `self.sub.after` (at most [`BATCH`]).
    async fn read(&mut self, generation: u64) -> Result<(), Error> {
        match &self.sub.source {
            Source::Game { id, viewer, over } => {
                let (rows, _) = self
                    .sub
                    .state
                    .tails
                    .after(
                        &self.sub.state.db,
                        id,
                        (self.sub.after, BATCH),
                        generation,
                        false,
                    )
                    .await?;
                if rows.is_empty() && *over {
                    self.ending = true;
                }
                // A stream keeps the copy of the seat its caller held when it opened. When the
                // seats are taken or change hands and the caller's copy is another one now
                // (they left, joined, or may no longer see the game), the stream ends before
                // that event, and a reconnection resumes there as whoever the caller is then.
                let mut stop_at = None;
                if let Some(first) = rows.iter().find(|r| reseats(&r.kind)) {
                    let now = viewer_now(&self.sub.state, id, &self.sub.user_id).await?;
                    if now != Some(*viewer) {
                        stop_at = Some(first.seq);
                    }
                }
                // As in the event list: hidden messages and the words of users the caller
                // blocks lose their text (one read per batch that holds any chat).
                let without_text = if rows.iter().any(|r| r.kind == "chat_message") {
                    let (gid, me) = (id.clone(), self.sub.user_id.clone());
                    self.sub
                        .state
                        .db
                        .run(move |conn| crate::chat::blocked_seqs(conn, &gid, &me))
                        .await?
                } else {
                    Vec::new()
                };
                for row in rows {
                    let last = matches!(row.kind.as_str(), "game_finished" | "game_aborted");
                    let seq = row.seq;
                    if stop_at == Some(seq) {
                        self.ending = true;
                        break;
                    }
                    let render = |row| -> Result<Bytes, Error> {
                        let view = EventView::of(row, *viewer);
                        let view = if without_text.contains(&seq) {
                            view.without_chat_text()
                        } else {
                            view
                        };
                        Ok(frame(seq, &view.kind, &serde_json::to_string(&view)?))
                    };
                    // Chat is rendered per reader (blocks, hides); every other event once
                    // per copy for all the game's streams.
                    let rendered = if row.kind == "chat_message" {
                        render(row)?
                    } else {
                        let copy = viewer.map_or(4, |s| s.number());
                        self.sub
                            .state
                            .tails
                            .rendered(id, seq, copy, || render(row))?
                    };
                    self.sub.after = seq;
                    self.queue.push_back(rendered);
                    if last {
                        // The game is over: nothing follows.
                        self.ending = true;
                        break;
                    }
                }
            }
            Source::Feed => {
                let (user, after) = (self.sub.user_id.clone(), self.sub.after);
                let rows = self
                    .sub
                    .state
                    .db
                    .run(move |conn| Ok(notifications::after(conn, &user, after, BATCH)?))
                    .await?;
                for row in &rows {
                    let view = NotificationView::from(row);
                    self.sub.after = view.seq;
                    self.queue.push_back(frame(
                        view.seq,
                        &view.kind,
                        &serde_json::to_string(&view)?,
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One SSE event. The JSON is compact, so it has no line break and fits one `data:` line.
fn frame(seq: i64, kind: &str, json: &str) -> Bytes {
    Bytes::from(format!("id: {seq}\nevent: {kind}\ndata: {json}\n\n"))
}
