//! "Did you mean …?" for names a user mistyped (profiles, tools, keys).

/// `; did you mean 'x'?` for a near miss, else an empty string.
pub fn suggest_name(name: &str, known: &[String]) -> String {
    known
        .iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| format!("; did you mean '{k}'?"))
        .unwrap_or_default()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
