//! Free text that people write and others read: what no such text may hold, and the
//! reasons given with reports and administrators' actions (a player reads an abort's).
//!
//! May import: `error`. Nothing else.

use unicode_normalization::UnicodeNormalization;

use crate::error::Error;

/// The longest reason, in characters (after trimming and Unicode NFC).
pub const MAX_REASON_CHARS: usize = 500;

/// Characters that make a text read as something else: line and paragraph separators (a
/// one-line text shown as two), bidirectional overrides and isolates (a line shown in
/// another order) and the interlinear annotation marks (text shown over other text, or not
/// at all). The direction marks Arabic needs (U+200E, U+200F, U+061C) are not.
#[must_use]
pub fn is_disguise(c: char) -> bool {
    matches!(
        c,
        '\u{2028}'
            | '\u{2029}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

/// The black flag that an emoji tag sequence starts from (🏴 then the tags of a region).
const TAG_BASE: char = '\u{1F3F4}';
/// The tag that ends an emoji tag sequence.
const CANCEL_TAG: char = '\u{E007F}';

/// Whether `text` carries tag characters (U+E0000..=U+E007F) other than in the flags of
/// regions (🏴 then up to six tag letters or digits and the cancel tag, as England's):
/// tags show nothing, and a run of them spells a hidden text that some programs read.
#[must_use]
pub fn has_stray_tags(text: &str) -> bool {
    let is_tag = |c: char| ('\u{E0000}'..='\u{E007F}').contains(&c);
    let is_region_tag =
        |c: char| matches!(c, '\u{E0030}'..='\u{E0039}' | '\u{E0061}'..='\u{E007A}');
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == TAG_BASE {
            let spec = chars[i + 1..]
                .iter()
                .take_while(|c| is_region_tag(**c))
                .count();
            if (1..=6).contains(&spec) && chars.get(i + 1 + spec) == Some(&CANCEL_TAG) {
                i += spec + 2;
                continue;
            }
        } else if is_tag(chars[i]) {
            return true;
        }
        i += 1;
    }
    false
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
        || has_stray_tags(&text)
    {
        return Err(Error::validation(
            "reason must not contain control characters (line breaks and tabs aside), line \
             or paragraph separators, direction overrides, annotation marks or tag characters \
             (a region's flag aside)",
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
            "a\u{FFF9}b\u{FFFA}c\u{FFFB}",
            "ok\u{E0041}\u{E0042}",
        ] {
            assert!(check_reason(bad).is_err(), "{bad:?}");
        }
        assert!(
            check_reason("\u{200F}سبب\u{200F}").is_ok(),
            "Arabic keeps its marks"
        );
    }

    #[test]
    fn tags_are_allowed_only_in_the_flag_of_a_region() {
        let england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
        assert!(!has_stray_tags(&format!("go {england}{england}!")));
        assert!(!has_stray_tags("plain \u{1F3F4} black flag"));
        for hidden in [
            "hi\u{E0068}\u{E0069}",
            "\u{E0001}\u{E0065}\u{E006E}",
            // A flag whose tags run on past a region's code, or never end.
            "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E0078}\u{E0079}\u{E007F}",
            "\u{1F3F4}\u{E0067}\u{E0062}",
            "\u{1F3F4}\u{E007F}",
            "\u{E007F}",
        ] {
            assert!(has_stray_tags(hidden), "{hidden:?}");
        }
    }
}
