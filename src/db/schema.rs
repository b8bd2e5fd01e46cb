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
