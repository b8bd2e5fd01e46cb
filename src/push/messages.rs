//! The words of a push: title and body in the device's language (English, or Arabic for an
//! `ar` locale), naming the game and what happened.

use serde_json::Value;

/// Whether the locale asks for Arabic (`ar`, `ar-SA`, `ar_EG`…); anything else is English.
fn arabic(locale: Option<&str>) -> bool {
    locale.is_some_and(|l| {
        let l = l.to_ascii_lowercase();
        l == "ar" || l.starts_with("ar-") || l.starts_with("ar_")
    })
}

/// A game's short name as players see it: the first eight characters of its id.
fn game_name(game_id: Option<&str>) -> String {
    game_id.map_or_else(String::new, |g| g.chars().take(8).collect())
}

/// Title and body of a notification of `kind` about `game_id` with `data`.
pub fn render(
    kind: &str,
    game_id: Option<&str>,
    data: &Value,
    locale: Option<&str>,
) -> (String, String) {
    let phase = data.get("phase").and_then(Value::as_str);
    // English and Arabic side by side, so that a new kind gets both; `{game}` is the game.
    let title = match kind {
        "your_turn" => ("Your turn in game {game}", "دورك في اللعبة {game}"),
        "turn_reminder" => (
            "Reminder: your turn in game {game}",
            "تذكير: دورك في اللعبة {game}",
        ),
        "game_started" => ("Game {game} started", "بدأت اللعبة {game}"),
        "game_finished" => ("Game {game} finished", "انتهت اللعبة {game}"),
        "invited" => ("You are invited to game {game}", "دعوة إلى اللعبة {game}"),
        "seat_taken_by_bot" => (
            "A bot took your seat in game {game}",
            "أخذ روبوت مقعدك في اللعبة {game}",
        ),
        "chat_message" => ("New message in game {game}", "رسالة في اللعبة {game}"),
        "friend_request" => ("New friend request", "طلب صداقة جديد"),
        _ => ("Leekha: {game}", "ليخة: {game}"),
    };
    let body = match (kind, phase) {
        ("your_turn" | "turn_reminder", Some("passing")) => {
            ("Choose three cards to pass.", "اختر ثلاث أوراق لتمريرها.")
        }
        ("your_turn" | "turn_reminder", _) => ("Play a card.", "العب ورقة."),
        ("game_started", _) => ("The cards are dealt.", "وُزّعت الأوراق."),
        ("game_finished", _) => ("See the result.", "شاهد النتيجة."),
        ("invited", _) => ("Join the table.", "انضم إلى الطاولة."),
        ("seat_taken_by_bot", _) => (
            "A bot plays for you; you can take your seat back.",
            "يلعب روبوت بدلاً منك؛ يمكنك العودة إلى مقعدك.",
        ),
        _ => ("Open Leekha.", "افتح ليخة."),
    };
    let in_arabic = arabic(locale);
    let pick = |(english, arabic): (&'static str, &'static str)| {
        if in_arabic { arabic } else { english }
    };
    (
        pick(title).replace("{game}", &game_name(game_id)),
        pick(body).to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_name_the_game_in_the_devices_language() {
        let data = serde_json::json!({"phase": "passing"});
        let game = Some("1a2b3c4d-0000-4000-8000-000000000000");
        let (t, b) = render("your_turn", game, &data, Some("en-GB"));
        assert_eq!(t, "Your turn in game 1a2b3c4d");
        assert_eq!(b, "Choose three cards to pass.");
        let (t, _) = render("your_turn", game, &data, Some("ar-SA"));
        assert_eq!(t, "دورك في اللعبة 1a2b3c4d");
        let (t, _) = render("game_finished", game, &data, None);
        assert_eq!(t, "Game 1a2b3c4d finished");
    }
}
