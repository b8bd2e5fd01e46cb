//! Free text that people write and others read: what no such text may hold, and the
//! reasons given with reports and administrators' actions (a player reads an abort's).
//!
//! May import: `error`. Nothing else.

use unicode_normalization::UnicodeNormalization;

use crate::error::Error;

/// The longest reason, in characters (after trimming and Unicode NFC).
pub const MAX_REASON_CHARS: usize = 500;

/// Characters that make a text read as something else: line and paragraph separators (a
/// one-line text shown as two) and bidirectional overrides and isolates (a line shown in
/// another order). The direction marks Arabic needs (U+200E, U+200F, U+061C) are not.
#[must_use]
pub fn is_disguise(c: char) -> bool {
    matches!(
        c,
        '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Whether a character shows something on its own: a letter, number, punctuation mark or
/// symbol, but not one of the blank fillers of those classes (the Hangul fillers, the blank
/// Braille pattern). Spaces, format characters (zero-width, direction marks, tags),
/// combining marks with nothing to combine with, private-use and unassigned code points do
/// not.
#[must_use]
pub fn is_visible(c: char) -> bool {
    use unicode_properties::{GeneralCategoryGroup as G, UnicodeGeneralCategory};
    matches!(
        c.general_category_group(),
        G::Letter | G::Number | G::Punctuation | G::Symbol
    ) && !matches!(
        c,
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
    )
}

/// Checks and normalizes a reason (a report's, an administrator's): trimmed, Unicode NFC,
/// 1..=[`MAX_REASON_CHARS`] characters with at least one visible; line breaks and tabs are
/// allowed, other control characters (terminal escapes among them) and [disguises](is_disguise)
/// are not. A line break is kept as `\n` however it came: a browser's text area and Windows
/// send `\r\n`, old Macs `\r`.
///
/// # Errors
/// `validation_failed` saying what is wrong.
pub fn check_reason(raw: &str) -> Result<String, Error> {
    let text: String = raw
        .trim()
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .nfc()
        .collect();
    let n = text.chars().count();
    if n == 0 || n > MAX_REASON_CHARS {
        return Err(Error::validation(format!(
            "reason must be 1–{MAX_REASON_CHARS} characters, got {n}"
        )));
    }
    if text
        .chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_disguise(c))
    {
        return Err(Error::validation(
            "reason must not contain control characters (line breaks and tabs aside), line \
             or paragraph separators, or direction overrides",
        ));
    }
    if !text.chars().any(is_visible) {
        return Err(Error::validation("reason has no visible character"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_counted_as_kept_and_holds_nothing_that_disguises_it() {
        for (sent, kept) in [
            ("  spam\nand more\t \n", "spam\nand more"),
            ("one\r\ntwo\rthree\r\n", "one\ntwo\nthree"),
        ] {
            assert_eq!(check_reason(sent).unwrap(), kept);
        }
        // Counted after NFC: an accent sent as a combining mark is one character.
        assert!(check_reason(&"e\u{301}".repeat(500)).is_ok());
        assert!(check_reason(&"é".repeat(501)).is_err());
        for bad in [
            "",
            "   ",
            "\u{200B}",
            "red \u{1b}[31m",
            "bell\u{7}",
            "one\u{2028}two",
            "abc\u{202E}def",
            "x\u{2066}y",
        ] {
            assert!(check_reason(bad).is_err(), "{bad:?}");
        }
        assert!(
            check_reason("\u{200F}سبب\u{200F}").is_ok(),
            "Arabic keeps its marks"
        );
    }
}
