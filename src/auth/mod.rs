//! Authentication: access tokens (JWT), refresh tokens, password hashing, rate limits, and
//! the validated input types of the accounts API.

pub mod ratelimit;
pub mod tickets;
pub mod tokens;

use std::fmt;

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

use crate::error::Error;

pub use crate::secret::Secret;

/// A user's role.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Plays games.
    Player,
    /// Plays games and administers the server.
    Admin,
}

impl Role {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Admin => "admin",
        }
    }

    /// Parses the stored name; unknown values are refused.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "player" => Some(Role::Player),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

/// How every guest's generated username starts.
pub const GUEST_PREFIX: &str = "guest_";

/// A valid username: 3–32 characters of `a-z`, `0-9`, `_` (letters in either case; unique
/// ignoring case).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username(String);

impl Username {
    /// Checks the rules.
    ///
    /// # Errors
    /// 400 `validation_failed` saying which rule is broken.
    pub fn parse(raw: &str) -> Result<Self, Error> {
        Error::check_length("username", raw, 3, 32)?;
        if let Some(c) = raw
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(Error::validation(format!(
                "username may contain only letters A–Z and a–z, digits and '_', not {c:?}"
            )));
        }
        Ok(Self(raw.to_owned()))
    }

    /// A name a user chooses (at registration, in a rename): as
    /// [`Username::parse`], but a name starting `guest_` (in any case) stays the guests':
    /// no one may pass for a guest, nor take a name the guest generator may hand out.
    /// `current` is the caller's present name, which they may keep.
    ///
    /// # Errors
    /// 400 `validation_failed`, as [`Username::parse`] or for the reserved prefix.
    pub fn chosen(raw: &str, current: Option<&str>) -> Result<Self, Error> {
        let name = Self::parse(raw)?;
        let keeps_own = current.is_some_and(|c| c.eq_ignore_ascii_case(raw));
        if !keeps_own && name.key().starts_with(GUEST_PREFIX) {
            return Err(Error::validation(format!(
                "usernames starting with {GUEST_PREFIX} are kept for guest accounts"
            )));
        }
        Ok(name)
    }

    /// As entered.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The case-insensitive key that must be unique.
    pub fn key(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

/// A password that meets the length rule (8–128 characters).
#[derive(Clone)]
pub struct Password(Secret);

impl Password {
    /// Checks the length.
    ///
    /// # Errors
    /// 400 `validation_failed`.
    pub fn parse(raw: &str) -> Result<Self, Error> {
        Error::check_length("password", raw, 8, 128)?;
        Ok(Self(Secret::new(raw)))
    }

    /// Hashes with argon2id (random salt, the crate's recommended parameters).
    ///
    /// # Errors
    /// 500 if the hasher fails (it does not for valid lengths).
    pub fn hash(&self) -> Result<String, Error> {
        let _permit = HashingGate::enter();
        let hash = Argon2::default()
            .hash_password(self.0.expose().as_bytes())
            .map_err(|e| Error::internal(format!("argon2: {e}")))?;
        Ok(hash.to_string())
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

/// Checks a password against a stored hash. With no hash (unknown user, guest) it still
/// spends the time of one verification, so timing does not tell which case it was.
pub fn verify_password(password: &str, hash: Option<&str>) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let dummy = DUMMY.get_or_init(|| {
        Password(Secret::new("not-a-real-password"))
            .hash()
            .unwrap_or_default()
    });
    let (hash, real) = match hash {
        Some(h) => (h, true),
        None => (dummy.as_str(), false),
    };
    let _permit = HashingGate::enter();
    let ok = Argon2::default()
        .verify_password(password.as_bytes(), hash)
        .is_ok();
    ok && real
}

/// Bounds how many argon2 computations run at once to the number of cores. Each one takes
/// 19 MiB and a core for tens of milliseconds: a burst of logins beyond the cores only
/// queues, instead of multiplying memory (which the allocator then keeps) and starving
/// every other request of CPU.
struct HashingGate;

/// A slot of [`HashingGate`], given back on drop.
struct HashingPermit;

static GATE: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

impl HashingGate {
    fn enter() -> HashingPermit {
        static SLOTS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let slots = *SLOTS.get_or_init(|| {
            std::thread::available_parallelism()
                .map(std::num::NonZeroUsize::get)
                .unwrap_or(2)
        });
        let (busy, freed) = &GATE;
        let mut busy = busy.lock().unwrap_or_else(|e| e.into_inner());
        while *busy >= slots {
            busy = freed.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy += 1;
        HashingPermit
    }
}

impl Drop for HashingPermit {
    fn drop(&mut self) {
        let (busy, freed) = &GATE;
        let mut busy = busy.lock().unwrap_or_else(|e| e.into_inner());
        *busy = busy.saturating_sub(1);
        freed.notify_one();
    }
}

/// 403 `banned`: the account is banned, whatever it tries (a request, a login, a refresh).
pub fn banned() -> Error {
    Error::new(
        crate::error::Kind::Forbidden,
        "banned",
        "this account is banned",
    )
}

/// The rules every authenticated request applies to the caller's account as stored now
/// (`None`: it does not exist), so a ban, a deletion or a role change takes effect at once.
///
/// # Errors
/// `invalid_token` (401) when it no longer exists, `banned` (403).
pub fn judge(state: Option<crate::db::games::CallerState>) -> Result<Role, Error> {
    let state = state
        .filter(|s| !s.deleted)
        .ok_or_else(|| Error::unauthorized("invalid_token", "the account no longer exists"))?;
    if state.banned {
        return Err(banned());
    }
    Role::parse(&state.role).ok_or_else(|| Error::internal("unknown role in database"))
}

/// Loads the account `user_id` and applies [`judge`].
///
/// # Errors
/// As [`judge`], and database errors.
pub fn check_account(
    conn: &mut crate::db::AnyConnection,
    user_id: &str,
) -> Result<(crate::db::users::UserRow, Role), Error> {
    let user = crate::db::users::by_id(conn, user_id)?;
    let role = judge(user.as_ref().map(|u| crate::db::games::CallerState {
        deleted: u.deleted_at.is_some(),
        banned: u.banned_at.is_some(),
        role: u.role.clone(),
    }))?;
    let user = user.ok_or_else(|| Error::internal("judged a missing account"))?;
    Ok((user, role))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_follow_the_rules() {
        for good in ["abc", "Alice_99", "a_b_c", &"x".repeat(32)] {
            assert!(Username::parse(good).is_ok(), "{good}");
        }
        for bad in ["ab", &"x".repeat(33), "al ice", "älice", "a-b", "x@y", ""] {
            assert!(Username::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Username::parse("Alice").unwrap().key(), "alice");
        for reserved in ["guest_abcdefghij", "Guest_x", "GUEST_"] {
            assert!(Username::parse(reserved).is_ok(), "{reserved} exists");
            assert!(Username::chosen(reserved, None).is_err(), "{reserved}");
        }
        assert!(
            Username::chosen("guest_abc", Some("GUEST_ABC")).is_ok(),
            "one's own"
        );
        assert!(Username::chosen("guestroom", None).is_ok());
    }

    #[test]
    fn passwords_are_8_to_128_characters_and_hash_with_argon2id() {
        assert!(Password::parse("short").is_err());
        assert!(Password::parse(&"p".repeat(129)).is_err());
        let p = Password::parse("correct horse").unwrap();
        let hash = p.hash().unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(verify_password("correct horse", Some(&hash)));
        assert!(!verify_password("wrong horse!", Some(&hash)));
        assert!(!verify_password("correct horse", None));
        assert!(!format!("{p:?}").contains("horse"));
    }
}
