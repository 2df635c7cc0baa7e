use super::*;
use crate::agent::echo_align::{similar, word_spans};

/// The lean system prompt as navi sends it with the terminal tool.
const SYSTEM: &str = "You are navi, a helpful assistant in a terminal. Use the terminal tool to look \
at files, the system or to compute; then answer briefly.\nTool terminal: Run a shell command \
(sh -c, no stdin); returns exit code, stdout, stderr.\n";

/// Pieces of navi's prompt no answer may show.
const PERSONA: &[&str] = &[
    "Use the terminal tool",
    "look at files",
    "Tool terminal",
    "Run a shell command",
    "no stdin",
    "helpful assistant",
    "You are navi",
];

/// Streams `answer` in token-sized pieces (2 to 5 bytes, split inside
/// words and inside multi-byte characters' neighbours).
fn pieces(answer: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut n = 0;
    while start < answer.len() {
        let mut end = (start + 2 + n % 4).min(answer.len());
        while !answer.is_char_boundary(end) {
            end += 1;
        }
        out.push(&answer[start..end]);
        start = end;
        n += 1;
    }
    out
}

fn guard(user: &str, answer: &str) -> (String, bool, u32) {
    run_all(Reference::new(SYSTEM, user), &pieces(answer))
}

fn assert_no_persona(shown: &str) {
    for p in PERSONA {
        assert!(!shown.contains(p), "{p:?} shown in {shown:?}");
    }
}

#[test]
fn an_exact_echo_that_loops_is_dropped_and_stopped() {
    let answer = format!("{SYSTEM}\n\nwho wrote Hamlet\n{SYSTEM}\n\nwho wrote Hamlet\n{SYSTEM}");
    let (shown, stopped, echoes) = guard("who wrote Hamlet", &answer);
    assert_eq!(shown, "");
    assert!(stopped, "the loop back into the prompt stops the call");
    assert_eq!(echoes, 2);
}

#[test]
fn a_fuzzy_echo_with_changed_words_is_dropped() {
    // The answer seen from Gemma 3 270M, word for word.
    let once = "You are a modeler, a helper in a terminal. Use the terminal tool to look at \
files, the system or to compute; then answer briefly.\nTool terminal: Run a shell command (sh -c, \
no stdin); returns exit code, stdout, stderr.\n\n\nWho wrote Hamlet? mendatanguser\n";
    let (shown, stopped, _) = guard("Who wrote Hamlet?", &once.repeat(4));
    assert_eq!(shown, "");
    assert!(stopped);
    // Other changes: words left out, a sentence of its own in front.
    for answer in [
        "You are a model user. Use the terminal tool to look at files, the system or to compute.",
        "You are a terminal assistant. Use the terminal tool to look at files, the system or to compute.\n\nWhat is the prime number in the string?",
        "You are a large river in Germany. Use the terminal tool to look at files, the system or to compute; then answer briefly.",
    ] {
        let (shown, _, echoes) = guard("Name a large river in Germany.", answer);
        assert_no_persona(&shown);
        assert!(echoes >= 1, "{answer}");
        assert!(!shown.starts_with("You are"), "{shown:?}");
    }
}

#[test]
fn the_answer_after_a_leading_echo_streams_on() {
    let answer = "You are a model. Use the terminal tool to look at files, the system or to \
compute; then answer briefly.\nWho wrote Hamlet? William Shakespeare wrote Hamlet around 1600.";
    let (shown, stopped, echoes) = guard("Who wrote Hamlet?", answer);
    assert_eq!(shown, "William Shakespeare wrote Hamlet around 1600.");
    assert!(!stopped);
    assert_eq!(echoes, 1);
}

#[test]
fn an_echo_after_real_text_stops_the_call_and_keeps_the_text() {
    let answer =
        format!("Shakespeare wrote Hamlet. {SYSTEM}\nwho wrote Hamlet\n{SYSTEM}{SYSTEM}{SYSTEM}");
    let (shown, stopped, _) = guard("who wrote Hamlet", &answer);
    assert_eq!(shown.trim_end(), "Shakespeare wrote Hamlet.");
    assert!(stopped);
    // The tool line alone, after an answer (Gemma: "The spider has a single leg.").
    let answer = "The spider has a single leg.\nTool terminal: Run a shell command (sh -c, no \
stdin); returns exit code, stdout, stderr.\n\n\nhow many legs does a spider have";
    let (shown, stopped, _) = guard("how many legs does a spider have", answer);
    assert_eq!(shown.trim_end(), "The spider has a single leg.");
    assert!(stopped);
}

#[test]
fn the_question_echoed_is_dropped() {
    let (shown, stopped, _) = guard(
        "who wrote Hamlet",
        "who wrote Hamlet devenue who wrote Hamlet devenue who wrote Hamlet devenue",
    );
    assert_eq!(shown, "");
    assert!(stopped);
    let (shown, stopped, _) = guard(
        "What is the capital of France?",
        "What is the capital of France? The capital of France is Paris.",
    );
    assert_eq!(shown, "The capital of France is Paris.");
    assert!(!stopped);
    // After an answer, the question coming back ends the call there.
    let (shown, stopped, _) = guard(
        "explain what photosynthesis is",
        "Plants turn light into sugar.\n\n\nexplain what photosynthesis is vuonna\n penyakitmodel\nPlants",
    );
    assert_eq!(shown.trim_end(), "Plants turn light into sugar.");
    assert!(stopped);
}

#[test]
fn sentences_that_open_like_the_persona_are_echo() {
    // Gemma 3 270M through navi: the persona's opening with the question's
    // words put in, over and over.
    for answer in [
        "You are a river user in Germany. You are a river user. You are a river user. You are",
        "You are a modeler. You are a modeler. You are a modeler. You are a modeler.",
        "You are a model, a model that is a model of a computer. Use the terminal tool to look at files, the system or to compute; then answer briefly.\nYou are a model, a",
    ] {
        let (shown, stopped, echoes) = guard("Name a large river in Germany.", answer);
        assert_eq!(shown, "", "{answer}");
        assert!(stopped && echoes == 2, "{answer}");
    }
    // One echo cut off by the token cap: nothing of it is left.
    let answer = "You are a spider. Use the terminal tool to look at files, the system or to compute; then a";
    let (shown, stopped, echoes) = guard("how many legs does a spider have", answer);
    assert_eq!((shown.as_str(), stopped, echoes), ("", false, 1));
    // The opening, then an answer.
    let (shown, stopped, _) = guard(
        "what is the capital of France",
        "You are a geography helper.\nThe capital of France is Paris.",
    );
    assert_eq!(
        (shown.as_str(), stopped),
        ("The capital of France is Paris.", false)
    );
    // "You are" alone is not the persona's opening.
    for answer in [
        "You are right, Paris is the capital of France.",
        "You are welcome! Ask me anything else.",
    ] {
        assert_eq!(guard("thanks", answer).0, answer);
    }
}

#[test]
fn real_answers_that_share_words_are_untouched() {
    let cases = [
        (
            "what is the capital of France",
            "The capital of France is Paris.",
        ),
        (
            "what is a prime number",
            "A prime number is a number greater than 1 whose only divisors are 1 and itself.",
        ),
        (
            "how do I see hidden files",
            "Use ls -a in the terminal to look at hidden files, the ones whose names start with a dot.",
        ),
        (
            "who are you",
            "You are talking to a small model. I can answer briefly or run a command.",
        ),
        (
            "tell me a short poem about the sea",
            "The sea is wide,\nthe sea is deep;\nits waves roll in\nwhile sailors sleep.",
        ),
        (
            "translate 'the quick brown fox jumps over the lazy dog' to French",
            "In French: le rapide renard brun saute par-dessus le chien paresseux. The quick brown fox jumps over the lazy dog.",
        ),
        ("hi", "Hello! How can I help you today?"),
        (
            "what colour is the sky on a clear day",
            "How long is the battery life of a 12V battery\nことをmodel\n",
        ),
        (
            "",
            "Nothing was asked, so here is a fact: water boils at 100 °C.",
        ),
    ];
    for (user, answer) in cases {
        let (shown, stopped, echoes) = guard(user, answer);
        assert_eq!(shown, answer, "for {user:?}");
        assert!(!stopped && echoes == 0, "for {user:?}");
    }
}

#[test]
fn non_ascii_answers_and_questions() {
    let cases = [
        (
            "Wer schrieb Hamlet?",
            "Hamlet schrieb William Shakespeare, um 1600.",
        ),
        ("東京は日本の首都ですか", "はい、東京は日本の首都です。"),
        (
            "Что такое простое число?",
            "Простое число делится только на 1 и на себя.",
        ),
    ];
    for (user, answer) in cases {
        let (shown, stopped, _) = guard(user, answer);
        assert_eq!(shown, answer);
        assert!(!stopped);
    }
    let (shown, _, echoes) = guard(
        "Wer schrieb Hamlet über Dänemark?",
        "Wer schrieb Hamlet über Dänemark? Shakespeare, ganz sicher.",
    );
    assert_eq!((shown.as_str(), echoes), ("Shakespeare, ganz sicher.", 1));
    let (shown, _, echoes) = guard(
        "東京は日本の首都ですか",
        "東京は日本の首都ですか。はい、そうです。",
    );
    assert_eq!((shown.as_str(), echoes), ("はい、そうです。", 1));
    // A persona in another language is matched the same way.
    let system = "Du bist navi, ein hilfreicher Assistent im Terminal. Antworte kurz und genau.";
    let answer = "Du bist ein Modell, ein hilfreicher Assistent im Terminal. Antworte kurz und genau. Berlin.";
    let (shown, _, echoes) = run_all(Reference::new(system, "Hauptstadt?"), &pieces(answer));
    assert_eq!((shown.as_str(), echoes), ("Berlin.", 1));
}

#[test]
fn a_plain_answer_is_held_back_a_few_words_at_most() {
    let answer = "Paris is the capital and the largest city of France, on the river Seine, \
with about two million people living in the city itself and many more around it.";
    let mut g = EchoGuard::new(Reference::new(SYSTEM, "what is the capital of France"));
    let mut shown = String::new();
    let mut fed = String::new();
    for w in answer.split_inclusive(' ') {
        fed.push_str(w);
        shown.push_str(&g.push(w).show);
        let held = fed[shown.len()..].split_whitespace().count();
        assert!(held <= 5, "{held} words held after {fed:?}");
    }
    shown.push_str(&g.finish());
    assert_eq!(shown, answer);
}

#[test]
fn gemma_answers_recorded_through_navi_show_no_persona() {
    // Two runs of the 10 plain questions of benches/small_tools.py on
    // Gemma 3 270M without the guard (first 700 bytes of each answer).
    let runs = [
        include_str!("../../tests/fixtures/gemma_echo_answers.json"),
        include_str!("../../tests/fixtures/gemma_echo_answers_2.json"),
    ];
    for (n, run) in runs.iter().enumerate() {
        let recorded: Vec<(String, String)> = serde_json::from_str(run).unwrap();
        assert_eq!(recorded.len(), 10);
        let mut echoed = 0;
        for (user, answer) in &recorded {
            let (shown, _, echoes) = guard(user, answer);
            assert_no_persona(&shown);
            assert!(!shown.starts_with("You are a"), "run {n}: {shown:?}");
            echoed += usize::from(echoes > 0);
            if answer.starts_with("The capital of France is Paris.") {
                assert!(
                    shown.starts_with("The capital of France is Paris."),
                    "{shown}"
                );
            }
        }
        assert!(echoed >= 7, "run {n}: {echoed}");
    }
}

#[test]
fn without_a_reference_everything_passes() {
    let (shown, stopped, echoes) = run_all(Reference::new("", ""), &["You are navi", "."]);
    assert_eq!(shown, "You are navi.");
    assert!(!stopped && echoes == 0);
}

#[test]
fn words_and_similarity() {
    assert_eq!(
        word_spans("Hi, 東京 ok", true),
        vec![(0, 2), (4, 7), (7, 10), (11, 13)]
    );
    assert_eq!(word_spans("one two", false), vec![(0, 3)]);
    assert!(similar("helpful", "helper") && similar("model", "modeler"));
    assert!(!similar("navi", "name") && !similar("terminal", "tool"));
}

#[test]
fn odd_input_passes_through_whole() {
    let cases = [
        "",
        "...",
        "🙂🙂 ok 🙂",
        "e\u{301}te\u{301} déjà vu",
        "a\r\nb\r\n",
        "東京",
        "   \n\n  ",
        "You",
        "You are",
    ];
    for answer in cases {
        for user in ["", "you", "東京は", "?"] {
            // One character at a time.
            let chars: Vec<String> = answer.chars().map(String::from).collect();
            let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
            let (shown, stopped, _) = run_all(Reference::new(SYSTEM, user), &pieces);
            assert_eq!(shown, answer, "{answer:?} for {user:?}");
            assert!(!stopped);
        }
    }
}
