//! Table definitions shared by both engines (written to match `migrations/postgres`).

// @generated-style: keep in step with the migrations; one definition serves both engines.

diesel::table! {
    /// Server-wide settings.
    server_settings (key) {
        /// Setting name.
        key -> Text,
        /// Setting value.
        value -> Text,
        /// Last change (UTC).
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// Accounts.
    users (id) {
        /// UUID.
        id -> Text,
        /// As chosen, case preserved.
        username -> Text,
        /// Lower-cased username, unique.
        username_key -> Text,
        /// Argon2id PHC string; NULL for a guest without a password.
        password_hash -> Nullable<Text>,
        /// `player` or `admin`.
        role -> Text,
        /// Made by `POST /auth/guest` and not upgraded yet.
        is_guest -> Bool,
        /// When an admin banned the account.
        banned_at -> Nullable<Timestamp>,
        /// Why.
        ban_reason -> Nullable<Text>,
        /// When the account was deleted.
        deleted_at -> Nullable<Timestamp>,
        /// Finished games with a seat.
        games_played -> Integer,
        /// Finished games won.
        games_won -> Integer,
        /// Creation time (UTC).
        created_at -> Timestamp,
        /// Last change (UTC).
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// Refresh tokens, stored hashed.
    refresh_tokens (id) {
        /// UUID.
        id -> Text,
        /// Owner.
        user_id -> Text,
        /// The login this token descends from.
        family_id -> Text,
        /// SHA-256 hex of the token.
        token_hash -> Text,
        /// Issued.
        created_at -> Timestamp,
        /// Expires.
        expires_at -> Timestamp,
        /// Exchanged for a new pair.
        spent_at -> Nullable<Timestamp>,
        /// Revoked by logout, reuse or ban.
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::joinable!(refresh_tokens -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(users, refresh_tokens, server_settings);
