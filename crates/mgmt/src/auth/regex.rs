//! NDN name regular expressions, as ndn-cxx's `Regex` (the "NDN Regular Expression" of its
//! documentation) reads them for a validator configuration's `regex`, `k-regex` and
//! `p-regex`, and their expansions (`k-expand`, `p-expand`).
//!
//! A pattern is a sequence of component matchers: `<x>` (one component whose URI form matches
//! `x`; `<>` any component), `[<a><b>]` (one of them; `[^<a><b>]` none of them) and groups
//! `( ... )`, each optionally repeated (`*`, `+`, `?`, `{n}`, `{n,}`, `{,m}`, `{n,m}`). `^`
//! anchors it at the name's start and `$` at its end; without them it may match anywhere.
//! Groups are numbered by their opening parenthesis from 1, and an expansion is a sequence of
//! back references (`\1`; `\0` the whole match) and literal components (`<x>`).
//!
//! Inside `<...>`, the component pattern is the subset of ECMAScript regular expressions a
//! configuration names components with: literal characters (as the component's URI form
//! writes them), `.`, the repetitions `*`, `+`, `?`, and `\` escaping the next character.
//! Character classes, alternatives and the like are refused when the pattern is read.
//!
//! Matching backtracks, with at most [`MAX_STEPS`] steps a match (a name that would take more
//! does not match), so that no pattern and name make the manager spin.

use wire::{Component, Name};

/// Steps one match may take before it gives up (no match).
pub const MAX_STEPS: u32 = 100_000;

/// How many groups a pattern may hold (nesting included).
const MAX_GROUPS: usize = 32;

/// One component pattern (inside `<...>`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum CharItem {
    /// This character.
    Lit(char),
    /// Any character.
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CharRep {
    item: CharItem,
    min: u32,
    max: u32,
}

/// A pattern for one component's URI form; empty: any component.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CompPattern(Vec<CharRep>);

impl CompPattern {
    fn parse(s: &str) -> Result<CompPattern, String> {
        let mut out: Vec<CharRep> = Vec::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            let item = match c {
                '\\' => CharItem::Lit(chars.next().ok_or("a trailing \\ in a component")?),
                '.' => CharItem::Any,
                '*' | '+' | '?' => {
                    let last = out
                        .last_mut()
                        .filter(|r| r.min == 1 && r.max == 1)
                        .ok_or_else(|| format!("nothing to repeat before {c:?} in <{s}>"))?;
                    (last.min, last.max) = match c {
                        '*' => (0, u32::MAX),
                        '+' => (1, u32::MAX),
                        _ => (0, 1),
                    };
                    continue;
                }
                '[' | ']' | '(' | ')' | '|' | '{' | '}' | '^' | '$' => {
                    return Err(format!(
                        "{c:?} in the component pattern <{s}> is not supported (literal \
                         characters, '.', '*', '+', '?')"
                    ))
                }
                c => CharItem::Lit(c),
            };
            out.push(CharRep {
                item,
                min: 1,
                max: 1,
            });
        }
        Ok(CompPattern(out))
    }

    fn matches(&self, c: &Component) -> bool {
        if self.0.is_empty() {
            return true;
        }
        let text: Vec<char> = c.to_string().chars().collect();
        let mut steps = 0;
        chars_match(&self.0, &text, &mut steps)
    }
}

/// Whether `pat` matches all of `text` (backtracking, bounded by [`MAX_STEPS`]).
fn chars_match(pat: &[CharRep], text: &[char], steps: &mut u32) -> bool {
    *steps += 1;
    if *steps > MAX_STEPS {
        return false;
    }
    let Some((first, rest)) = pat.split_first() else {
        return text.is_empty();
    };
    let ok = |c: &char| match first.item {
        CharItem::Any => true,
        CharItem::Lit(l) => l == *c,
    };
    let most = text
        .iter()
        .take_while(|c| ok(c))
        .count()
        .min(first.max as usize);
    (first.min as usize..=most)
        .rev()
        .any(|n| n >= first.min as usize && chars_match(rest, &text[n..], steps))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Atom {
    Comp(CompPattern),
    Set { negated: bool, of: Vec<CompPattern> },
    Group(usize, Vec<Item>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    atom: Atom,
    min: u32,
    max: u32,
}

/// A compiled NDN regular expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regex {
    source: String,
    items: Vec<Item>,
    groups: usize,
}

/// What a match captured: per group (0: the whole match), the components' range.
pub type Captures = Vec<Option<(usize, usize)>>;

struct Parser<'a> {
    s: &'a str,
    at: usize,
    groups: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.s[self.at..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    /// `<...>` (the `<` already read).
    fn component(&mut self) -> Result<CompPattern, String> {
        let start = self.at;
        let end = self.s[start..]
            .find('>')
            .ok_or_else(|| format!("an unclosed '<' in {:?}", self.s))?;
        self.at = start + end + 1;
        CompPattern::parse(&self.s[start..start + end])
    }

    /// Items up to `close` (or the end when `None`).
    fn items(&mut self, close: Option<char>) -> Result<Vec<Item>, String> {
        let mut items = Vec::new();
        loop {
            let atom = match self.bump() {
                None if close.is_none() => return Ok(items),
                None => return Err(format!("an unclosed '(' in {:?}", self.s)),
                Some(c) if Some(c) == close => return Ok(items),
                Some('$') if close.is_none() && self.peek().is_none() => return Ok(items),
                Some('<') => Atom::Comp(self.component()?),
                Some('[') => {
                    let negated = self.peek() == Some('^');
                    if negated {
                        self.bump();
                    }
                    let mut of = Vec::new();
                    loop {
                        match self.bump() {
                            Some('<') => of.push(self.component()?),
                            Some(']') if !of.is_empty() => break,
                            _ => return Err(format!("a bad component set in {:?}", self.s)),
                        }
                    }
                    Atom::Set { negated, of }
                }
                Some('(') => {
                    self.groups += 1;
                    if self.groups > MAX_GROUPS {
                        return Err(format!("more than {MAX_GROUPS} groups in {:?}", self.s));
                    }
                    let n = self.groups;
                    Atom::Group(n, self.items(Some(')'))?)
                }
                Some(c) => return Err(format!("unexpected {c:?} in {:?}", self.s)),
            };
            let (min, max) = self.repeat()?;
            items.push(Item { atom, min, max });
        }
    }

    /// A repetition after an atom (none: exactly once).
    fn repeat(&mut self) -> Result<(u32, u32), String> {
        let one = match self.peek() {
            Some('*') => (0, u32::MAX),
            Some('+') => (1, u32::MAX),
            Some('?') => (0, 1),
            Some('{') => return self.braces(),
            _ => return Ok((1, 1)),
        };
        self.bump();
        Ok(one)
    }

    /// `{n}`, `{n,}`, `{,m}` or `{n,m}` (at the `{`).
    fn braces(&mut self) -> Result<(u32, u32), String> {
        let start = self.at + 1;
        let end = self.s[start..]
            .find('}')
            .ok_or_else(|| format!("an unclosed '{{' in {:?}", self.s))?;
        let body = &self.s[start..start + end];
        self.at = start + end + 1;
        let bad = || format!("a bad repetition {{{body}}} in {:?}", self.s);
        let num = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
        let (min, max) = match body.split_once(',') {
            None => (num(body)?, num(body)?),
            Some((a, b)) => (
                if a.trim().is_empty() { 0 } else { num(a)? },
                if b.trim().is_empty() {
                    u32::MAX
                } else {
                    num(b)?
                },
            ),
        };
        if min > max {
            return Err(bad());
        }
        Ok((min, max))
    }
}

impl Regex {
    /// Compiles `source`; the error says what is wrong with it.
    pub fn new(source: &str) -> Result<Regex, String> {
        let (anchored_start, body) = match source.strip_prefix('^') {
            Some(b) => (true, b),
            None => (false, source),
        };
        let mut p = Parser {
            s: body,
            at: 0,
            groups: 0,
        };
        let mut items = p.items(None)?;
        let anchored_end = body.ends_with('$') && !body.ends_with("\\$");
        let any = || Item {
            atom: Atom::Comp(CompPattern(Vec::new())),
            min: 0,
            max: u32::MAX,
        };
        if !anchored_start {
            items.insert(0, any());
        }
        if !anchored_end {
            items.push(any());
        }
        Ok(Regex {
            source: source.to_string(),
            items: vec![Item {
                atom: Atom::Group(0, items),
                min: 1,
                max: 1,
            }],
            groups: p.groups,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// How many groups the pattern has.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// The captures of `name`'s match, if it matches.
    pub fn captures(&self, name: &Name) -> Option<Captures> {
        let mut m = Matcher {
            comps: &name.components,
            steps: 0,
        };
        let mut caps: Captures = vec![None; self.groups + 1];
        let len = name.components.len();
        let mut out = None;
        m.seq_with(&self.items, 0, &mut caps, &mut |_, p, c| {
            if p == len {
                out = Some(c.clone());
                true
            } else {
                false
            }
        });
        out
    }

    /// Whether `name` matches.
    pub fn is_match(&self, name: &Name) -> bool {
        self.captures(name).is_some()
    }

    /// `expand` (back references `\N`, literal components `<x>`) on `name`'s match; `None` if
    /// it does not match or a reference is out of range.
    pub fn expand(&self, name: &Name, expand: &str) -> Option<Name> {
        let caps = self.captures(name)?;
        let mut out = Name::new();
        let mut rest = expand.trim();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('<') {
                let end = r.find('>')?;
                out.push(Component::from_uri(&r[..end]).ok()?);
                rest = &r[end + 1..];
            } else if rest.starts_with('\\') {
                let r = rest.trim_start_matches('\\');
                let digits = r.chars().take_while(char::is_ascii_digit).count();
                let i: usize = r[..digits].parse().ok()?;
                if let Some((a, b)) = *caps.get(i)? {
                    out.components.extend_from_slice(&name.components[a..b]);
                }
                rest = &r[digits..];
            } else {
                return None;
            }
        }
        Some(out)
    }

    /// Checks `expand` against this pattern: the error names what is wrong.
    pub fn check_expand(&self, expand: &str) -> Result<(), String> {
        let mut rest = expand.trim();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('<') {
                let end = r
                    .find('>')
                    .ok_or_else(|| format!("an unclosed '<' in {expand:?}"))?;
                Component::from_uri(&r[..end])
                    .map_err(|e| format!("{:?} in {expand:?}: {e}", &r[..end]))?;
                rest = &r[end + 1..];
            } else if rest.starts_with('\\') {
                let r = rest.trim_start_matches('\\');
                let digits = r.chars().take_while(char::is_ascii_digit).count();
                let i: usize = r[..digits]
                    .parse()
                    .map_err(|_| format!("a '\\' without a group number in {expand:?}"))?;
                if i > self.groups {
                    return Err(format!(
                        "\\{i} in {expand:?}: {:?} has {} groups",
                        self.source, self.groups
                    ));
                }
                rest = &r[digits..];
            } else {
                return Err(format!("{expand:?} is not \\N and <component> items"));
            }
        }
        Ok(())
    }
}

struct Matcher<'n> {
    comps: &'n [Component],
    steps: u32,
}

impl Matcher<'_> {
    fn budget(&mut self) -> bool {
        self.steps += 1;
        self.steps <= MAX_STEPS
    }

    /// `item` repeated, `n` times so far, then `k` (greedy).
    fn rep(
        &mut self,
        item: &Item,
        n: u32,
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(&mut Self, usize, &mut Captures) -> bool,
    ) -> bool {
        if !self.budget() {
            return false;
        }
        if n < item.max {
            let more = self.atom(&item.atom, pos, caps, &mut |m: &mut Self, p, c| {
                // An empty iteration past the minimum would loop forever.
                (p > pos || n < item.min) && m.rep(item, n + 1, p, c, k)
            });
            if more {
                return true;
            }
        }
        n >= item.min && k(self, pos, caps)
    }

    fn atom(
        &mut self,
        atom: &Atom,
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(&mut Self, usize, &mut Captures) -> bool,
    ) -> bool {
        match atom {
            Atom::Comp(p) => {
                pos < self.comps.len() && p.matches(&self.comps[pos]) && k(self, pos + 1, caps)
            }
            Atom::Set { negated, of } => {
                pos < self.comps.len()
                    && of.iter().any(|p| p.matches(&self.comps[pos])) != *negated
                    && k(self, pos + 1, caps)
            }
            Atom::Group(g, items) => {
                let g = *g;
                let mut inner = |m: &mut Self, p: usize, c: &mut Captures| {
                    let before = c[g];
                    c[g] = Some((pos, p));
                    if k(m, p, c) {
                        return true;
                    }
                    c[g] = before;
                    false
                };
                self.seq_with(items, pos, caps, &mut inner)
            }
        }
    }

    fn seq_with(
        &mut self,
        items: &[Item],
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(&mut Self, usize, &mut Captures) -> bool,
    ) -> bool {
        match items.split_first() {
            None => k(self, pos, caps),
            Some((first, rest)) => self.rep(first, 0, pos, caps, &mut |m: &mut Self, p, c| {
                m.seq_with(rest, p, c, k)
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    #[test]
    fn ndn_cxx_regex_cases() {
        let cmd = Regex::new("^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$").unwrap();
        assert!(cmd.is_match(&n("/localhop/nfd/rib/register/x")));
        assert!(cmd.is_match(&n("/localhop/nfd/rib/unregister/x/y/z")));
        assert!(!cmd.is_match(&n("/localhop/nfd/rib/register")));
        assert!(!cmd.is_match(&n("/localhop/nfd/rib/register/a/b/c/d")));
        assert!(!cmd.is_match(&n("/localhop/nfd/rib/announce/x")));
        let key = Regex::new("^<>*<KEY><>{1,3}$").unwrap();
        assert!(key.is_match(&n("/a/b/KEY/k")));
        assert!(key.is_match(&n("/KEY/k/self/v=1")));
        assert!(!key.is_match(&n("/a/KEY")));
        assert!(!key.is_match(&n("/a/KEY/1/2/3/4")));
        // Unanchored: anywhere in the name.
        let mid = Regex::new("<b><c>").unwrap();
        assert!(mid.is_match(&n("/a/b/c/d")));
        assert!(!mid.is_match(&n("/a/b/d/c")));
        let not = Regex::new("^[^<x><y>]+$").unwrap();
        assert!(not.is_match(&n("/a/b")));
        assert!(!not.is_match(&n("/a/y")));
        // Component patterns.
        let v = Regex::new("^<a><v=.*><s.?g+>$").unwrap();
        assert!(v.is_match(&n("/a/v=3/sgg")));
        assert!(v.is_match(&n("/a/v=7/sxg")));
        assert!(!v.is_match(&n("/a/w3/sg")));
        assert!(Regex::new("^<>{2,}$").unwrap().is_match(&n("/a/b/c")));
        assert!(!Regex::new("^<>{,1}$").unwrap().is_match(&n("/a/b")));
    }

    #[test]
    fn groups_expand_as_ndn_cxx_hyper_relations() {
        let k = Regex::new("^(<>*)<KEY><>{1,3}$").unwrap();
        assert_eq!(k.groups(), 1);
        assert_eq!(
            k.expand(&n("/site/user/KEY/k1/issuer/v=1"), "\\1"),
            Some(n("/site/user"))
        );
        assert_eq!(k.expand(&n("/site/KEY/k1"), "\\\\1<x>"), Some(n("/site/x")));
        assert_eq!(k.expand(&n("/site/x"), "\\1"), None, "no match");
        assert_eq!(
            Regex::new("^(<a>)(<b>*)$")
                .unwrap()
                .expand(&n("/a/b/b"), "\\2\\1"),
            Some(n("/b/b/a"))
        );
        assert_eq!(
            Regex::new("^(<>)*$").unwrap().expand(&n("/a/b/c"), "\\1"),
            Some(n("/c")),
            "a repeated group captures its last iteration"
        );
        assert!(k.check_expand("\\2").is_err());
        assert!(k.check_expand("\\1<ok>").is_ok());
        assert!(k.check_expand("x").is_err());
    }

    #[test]
    fn bad_patterns_are_refused_and_hard_ones_bounded() {
        for bad in [
            "^<a",
            "^(<a>",
            "^<a>)",
            "^<[ab]>",
            "^<a|b>",
            "^[]",
            "^<a>{3,1}",
            "^<a>{x}",
            "^x",
            "^<*>",
        ] {
            assert!(Regex::new(bad).is_err(), "{bad}");
        }
        // Nested unbounded repetitions on a name that fails at the end: the step budget ends
        // the search (no match) rather than exploring every split.
        let hard = Regex::new("^((<>*)*)*<z>$").unwrap();
        let long = n(&"/a".repeat(40));
        assert!(!hard.is_match(&long));
        assert!(hard.is_match(&n("/a/a/z")));
    }
}
