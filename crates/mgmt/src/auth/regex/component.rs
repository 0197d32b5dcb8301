//! One component's pattern (the text inside `<...>`): ndn-cxx matches it with `std::regex`
//! (ECMAScript grammar, `regex_match`: the whole text) against the component's URI form.
//!
//! The subset read here is what validator configurations write: literal characters, `.`,
//! character classes (`[a-z0-9_-]`, `[^...]`), the escapes `\d \w \s` (and `\D \W \S`, inside
//! classes too) and `\` before any other punctuation, the repetitions `*`, `+`, `?`, `{n}`,
//! `{n,}`, `{n,m}` (a trailing `?`, ECMAScript's lazy form, changes no whole-text match and is
//! accepted), alternatives `|`, groups `( ... )` and `(?: ... )`, and `^` / `$`. Back
//! references, look-arounds, word boundaries and the other escapes are refused when the
//! pattern is read.
//!
//! A capturing group's text is handed to the name pattern's back references as a generic
//! component of that text (for a group repeated, the last iteration's; a group inside a
//! repeated group keeps the text of the last iteration it took part in, where ECMAScript would
//! forget it when a later iteration skips it).
//!
//! Matching backtracks with a step budget the caller shares with the name's match (see
//! [`super::MAX_STEPS`]): a text that would take more does not match.

use wire::Component;

/// A class member.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ClassItem {
    /// From this character to that one, both included.
    Range(char, char),
    /// `\d`, `\w`, `\s` (`negated`: `\D`, `\W`, `\S`).
    Named { kind: char, negated: bool },
}

impl ClassItem {
    fn contains(&self, c: char) -> bool {
        match *self {
            ClassItem::Range(a, b) => a <= c && c <= b,
            ClassItem::Named { kind, negated } => {
                let is = match kind {
                    'd' => c.is_ascii_digit(),
                    'w' => c.is_ascii_alphanumeric() || c == '_',
                    _ => c.is_whitespace(),
                };
                is != negated
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Atom {
    /// Any character of the class (none of them when `negated`); `.` is an empty negated
    /// class, a literal a one-character range.
    Class { negated: bool, of: Vec<ClassItem> },
    /// `( ... )` (its capture's index among the pattern's) or `(?: ... )` (`None`).
    Group(Option<usize>, Alternatives),
    /// `^`.
    Start,
    /// `$`.
    End,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    atom: Atom,
    min: u32,
    max: u32,
}

/// `a|b|...`, each a sequence of pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Alternatives(Vec<Vec<Piece>>);

/// How deep groups may nest in one component pattern.
const MAX_NESTING: usize = 16;

/// A compiled component pattern; empty: any component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CompPattern {
    alts: Alternatives,
    empty: bool,
    /// Capturing groups (numbered with the name pattern's groups, as ndn-cxx does).
    pub(super) groups: usize,
    /// The name pattern's number for the first of them.
    pub(super) first_group: usize,
}

struct Parser<'a> {
    src: &'a str,
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    groups: usize,
}

impl Parser<'_> {
    fn err(&self, what: impl std::fmt::Display) -> String {
        format!("{what} in the component pattern <{}>", self.src)
    }

    fn alternatives(&mut self, depth: usize) -> Result<Alternatives, String> {
        if depth > MAX_NESTING {
            return Err(self.err(format!("groups nested more than {MAX_NESTING} deep")));
        }
        let mut alts = vec![Vec::new()];
        loop {
            let atom = match self.chars.peek().copied() {
                None => return Ok(Alternatives(alts)),
                Some(')') if depth > 0 => return Ok(Alternatives(alts)),
                Some('|') => {
                    self.chars.next();
                    alts.push(Vec::new());
                    continue;
                }
                Some(_) => self.atom(depth)?,
            };
            let (min, max) = self.repetition()?;
            if (min, max) != (1, 1) && matches!(atom, Atom::Start | Atom::End) {
                return Err(self.err("a repeated '^' or '$'"));
            }
            alts.last_mut()
                .expect("one alternative at least")
                .push(Piece { atom, min, max });
        }
    }

    fn atom(&mut self, depth: usize) -> Result<Atom, String> {
        let lit = |c| Atom::Class {
            negated: false,
            of: vec![ClassItem::Range(c, c)],
        };
        Ok(match self.chars.next().expect("peeked") {
            '.' => Atom::Class {
                negated: true,
                of: Vec::new(),
            },
            '^' => Atom::Start,
            '$' => Atom::End,
            '[' => self.class()?,
            '(' => {
                let capture = if self.chars.peek() == Some(&'?') {
                    self.chars.next();
                    if self.chars.next() != Some(':') {
                        return Err(self.err("a look-around or other '(?' group"));
                    }
                    None
                } else {
                    self.groups += 1;
                    Some(self.groups - 1)
                };
                let inner = self.alternatives(depth + 1)?;
                if self.chars.next() != Some(')') {
                    return Err(self.err("an unclosed '('"));
                }
                Atom::Group(capture, inner)
            }
            '\\' => match self.escape()? {
                ClassItem::Range(c, _) => lit(c),
                named => Atom::Class {
                    negated: false,
                    of: vec![named],
                },
            },
            c @ (')' | ']' | '{' | '}' | '*' | '+' | '?') => {
                return Err(self.err(format!("an unexpected {c:?}")))
            }
            c => lit(c),
        })
    }

    /// After a `\`: a class (`\d`, ...) or the character it escapes.
    fn escape(&mut self) -> Result<ClassItem, String> {
        match self.chars.next() {
            None => Err(self.err("a trailing '\\'")),
            Some(k @ ('d' | 'w' | 's')) => Ok(ClassItem::Named {
                kind: k,
                negated: false,
            }),
            Some(k @ ('D' | 'W' | 'S')) => Ok(ClassItem::Named {
                kind: k.to_ascii_lowercase(),
                negated: true,
            }),
            Some('t') => Ok(ClassItem::Range('\t', '\t')),
            Some('n') => Ok(ClassItem::Range('\n', '\n')),
            Some(c) if c.is_ascii_punctuation() => Ok(ClassItem::Range(c, c)),
            Some(c) => Err(self.err(format!("the escape \\{c}"))),
        }
    }

    /// `[...]` (the `[` read).
    fn class(&mut self) -> Result<Atom, String> {
        let negated = self.chars.peek() == Some(&'^');
        if negated {
            self.chars.next();
        }
        let mut of = Vec::new();
        loop {
            let item = match self.chars.next() {
                None => return Err(self.err("an unclosed '['")),
                Some(']') => return Ok(Atom::Class { negated, of }),
                Some('\\') => self.escape()?,
                Some(c) => ClassItem::Range(c, c),
            };
            // `a-z`: a range, unless the '-' closes the class.
            let ClassItem::Range(lo, _) = item else {
                of.push(item);
                continue;
            };
            let mut ahead = self.chars.clone();
            if ahead.next() == Some('-') && !matches!(ahead.peek(), Some(']') | None) {
                self.chars.next();
                let hi = match self.chars.next().expect("peeked") {
                    '\\' => match self.escape()? {
                        ClassItem::Range(c, _) => c,
                        _ => return Err(self.err("a class escape ending a range")),
                    },
                    c => c,
                };
                if hi < lo {
                    return Err(self.err(format!("the range {lo}-{hi} out of order")));
                }
                of.push(ClassItem::Range(lo, hi));
            } else {
                of.push(item);
            }
        }
    }

    /// A repetition after an atom (none: exactly once).
    fn repetition(&mut self) -> Result<(u32, u32), String> {
        let r = match self.chars.peek() {
            Some('*') => (0, u32::MAX),
            Some('+') => (1, u32::MAX),
            Some('?') => (0, 1),
            Some('{') => {
                self.chars.next();
                let body: String = self.chars.by_ref().take_while(|&c| c != '}').collect();
                let bad = || self.err(format!("the repetition {{{body}}}"));
                let num = |t: &str| t.parse::<u32>().map_err(|_| bad());
                let (min, max) = match body.split_once(',') {
                    None => (num(&body)?, num(&body)?),
                    Some((a, "")) => (num(a)?, u32::MAX),
                    Some((a, b)) => (num(a)?, num(b)?),
                };
                if min > max {
                    return Err(bad());
                }
                self.lazy();
                return Ok((min, max));
            }
            _ => return Ok((1, 1)),
        };
        self.chars.next();
        self.lazy();
        Ok(r)
    }

    /// A lazy quantifier's `?`: a whole-text match is the same either way.
    fn lazy(&mut self) {
        if self.chars.peek() == Some(&'?') {
            self.chars.next();
        }
    }
}

impl CompPattern {
    /// Reads `s`; the error says what is wrong with it.
    pub(super) fn parse(s: &str) -> Result<CompPattern, String> {
        let mut p = Parser {
            src: s,
            chars: s.chars().peekable(),
            groups: 0,
        };
        let alts = p.alternatives(0)?;
        if p.chars.next().is_some() {
            return Err(p.err("an unmatched ')'"));
        }
        Ok(CompPattern {
            alts,
            empty: s.is_empty(),
            groups: p.groups,
            first_group: 0,
        })
    }

    /// If the pattern matches `c`'s URI form (spending `steps`), what its groups captured,
    /// each as a generic component of the text (an empty one for a group that took no part),
    /// as ndn-cxx's `RegexComponentMatcher` hands them to back references.
    pub(super) fn match_component(&self, c: &Component, steps: &mut u32) -> Option<Vec<Component>> {
        if self.empty {
            return Some(Vec::new());
        }
        let text: Vec<char> = c.to_string().chars().collect();
        let caps = self.captures(&text, steps)?;
        let texts = caps.iter().map(|c| {
            let (a, b) = c.unwrap_or((0, 0));
            Component::generic(text[a..b].iter().collect::<String>().into_bytes())
        });
        Some(texts.collect())
    }

    /// Whether the pattern matches all of `text` (a component's URI form), spending `steps`.
    #[cfg(test)]
    pub(super) fn matches(&self, text: &str, steps: &mut u32) -> bool {
        let text: Vec<char> = text.chars().collect();
        self.empty || self.captures(&text, steps).is_some()
    }

    /// The groups' ranges of `text` if the pattern matches all of it.
    fn captures(&self, text: &[char], steps: &mut u32) -> Option<Captures> {
        let mut m = Matcher {
            text,
            steps,
            caps: vec![None; self.groups],
        };
        let end = text.len();
        m.alts(&self.alts, 0, &mut |_, p| p == end)
            .then_some(m.caps)
    }
}

/// Per group, the range of the text it last captured.
type Captures = Vec<Option<(usize, usize)>>;

struct Matcher<'a> {
    text: &'a [char],
    steps: &'a mut u32,
    caps: Captures,
}

type Next<'k> = dyn FnMut(&mut Matcher<'_>, usize) -> bool + 'k;

impl Matcher<'_> {
    fn budget(&mut self) -> bool {
        *self.steps += 1;
        *self.steps <= super::MAX_STEPS
    }

    fn alts(&mut self, a: &Alternatives, pos: usize, k: &mut Next<'_>) -> bool {
        a.0.iter().any(|seq| self.seq(seq, pos, k))
    }

    fn seq(&mut self, seq: &[Piece], pos: usize, k: &mut Next<'_>) -> bool {
        match seq.split_first() {
            None => k(self, pos),
            Some((first, rest)) => self.rep(first, 0, pos, &mut |m: &mut Matcher<'_>, p| {
                m.seq(rest, p, k)
            }),
        }
    }

    /// `piece` repeated, `n` times so far, then `k` (greedy).
    fn rep(&mut self, piece: &Piece, n: u32, pos: usize, k: &mut Next<'_>) -> bool {
        if !self.budget() {
            return false;
        }
        if n < piece.max {
            let more = self.atom(&piece.atom, pos, &mut |m: &mut Matcher<'_>, p| {
                // An empty iteration past the minimum would loop forever.
                (p > pos || n < piece.min) && m.rep(piece, n + 1, p, k)
            });
            if more {
                return true;
            }
        }
        n >= piece.min && k(self, pos)
    }

    fn atom(&mut self, atom: &Atom, pos: usize, k: &mut Next<'_>) -> bool {
        match atom {
            Atom::Class { negated, of } => {
                self.text
                    .get(pos)
                    .is_some_and(|&c| of.iter().any(|i| i.contains(c)) != *negated)
                    && k(self, pos + 1)
            }
            Atom::Group(None, a) => self.alts(a, pos, k),
            Atom::Group(Some(g), a) => {
                let g = *g;
                self.alts(a, pos, &mut |m: &mut Matcher<'_>, p| {
                    let before = m.caps[g];
                    m.caps[g] = Some((pos, p));
                    if k(m, p) {
                        return true;
                    }
                    m.caps[g] = before;
                    false
                })
            }
            Atom::Start => pos == 0 && k(self, pos),
            Atom::End => pos == self.text.len() && k(self, pos),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is(pattern: &str, text: &str) -> bool {
        let mut steps = 0;
        CompPattern::parse(pattern)
            .unwrap_or_else(|e| panic!("{pattern}: {e}"))
            .matches(text, &mut steps)
    }

    #[test]
    fn ecmascript_subset_matches_the_whole_text() {
        // Classes, ranges, negation, a '-' closing the class.
        assert!(is("[a-z0-9_-]+", "node-7_a"));
        assert!(!is("[a-z0-9_-]+", "Node"));
        assert!(is("[^/=]+", "abc"));
        assert!(!is("[^/=]+", "v=1"));
        assert!(is("[\\]x]", "]"));
        // Escapes, inside classes too.
        assert!(is("\\d{3}", "123"));
        assert!(!is("\\d{3}", "12a"));
        assert!(is("\\w+\\.\\w+", "a_1.b"));
        assert!(is("[\\d.]+", "1.25"));
        assert!(is("\\S+", "x%20y"));
        assert!(!is("\\D", "5"));
        // Counted repetitions, lazy forms, whole-text semantics.
        assert!(is("a{2,3}", "aaa"));
        assert!(!is("a{2,3}", "aaaa"));
        assert!(is("a{2,}", "aaaaa"));
        assert!(is("a.*?z", "abcz"));
        assert!(!is("abc", "abcd"), "regex_match: the whole text");
        // Alternatives and groups, capturing or not.
        assert!(is("KEY|ID-CERT", "ID-CERT"));
        assert!(!is("KEY|ID-CERT", "KEYID-CERT"));
        assert!(is("(ab|cd)+e", "abcdabe"));
        assert!(is("v=(?:\\d+)", "v=12"));
        assert!(is("^a|b$", "b"));
        assert!(is("x()*y", "xy"), "an empty group repeated ends");
        assert!(is("", "anything"));
        assert_eq!(CompPattern::parse("(a)(?:b)((c))").unwrap().groups, 3);
    }

    #[test]
    fn groups_capture_text_as_ndn_cxx_hands_it_to_back_references() {
        let caps = |pattern: &str, text: &str| {
            let mut steps = 0;
            let c = Component::from_uri(text).unwrap();
            CompPattern::parse(pattern)
                .unwrap()
                .match_component(&c, &mut steps)
                .map(|v| v.iter().map(|c| c.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(caps("(.*)\\.(.*)", "ucla.edu").unwrap(), ["ucla", "edu"]);
        // An empty component (URI `...`) for a group that took no part.
        assert_eq!(caps("(x)|(y)", "y").unwrap(), ["...", "y"]);
        // Typed components are matched in their URI form.
        assert_eq!(caps("v=(\\d+)", "v=17").unwrap(), ["17"]);
        assert_eq!(caps("(a)", "b"), None);
    }

    #[test]
    fn unsupported_or_broken_patterns_are_refused() {
        for bad in [
            "[a", "(a", "a)", "*a", "a{3,1}", "a{x}", "a{,2}", "\\1", "\\b", "(?=a)", "[z-a]",
            "^*", "a\\",
        ] {
            assert!(CompPattern::parse(bad).is_err(), "{bad}");
        }
        let deep = format!("{}a{}", "(".repeat(40), ")".repeat(40));
        assert!(CompPattern::parse(&deep).is_err());
    }

    #[test]
    fn catastrophic_patterns_are_bounded_by_the_shared_budget() {
        // (a+)+b on a's without b: exponential for a plain backtracker.
        let p = CompPattern::parse("(a+)+b").unwrap();
        let text = "a".repeat(60);
        let mut steps = 0;
        assert!(!p.matches(&text, &mut steps));
        assert!(steps > super::super::MAX_STEPS, "the budget ended it");
        // A spent budget matches nothing more.
        assert!(!p.matches("ab", &mut steps));
        let mut fresh = 0;
        assert!(p.matches("ab", &mut fresh));
    }
}
