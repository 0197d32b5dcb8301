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
//! Inside `<...>`, the component pattern is an ECMAScript regular expression matched against the
//! whole of the component's URI form, as ndn-cxx's `std::regex`; the subset read is the one
//! configurations write (classes, `\d \w \s`, counted repetitions, alternatives, groups). The
//! component pattern's own capturing groups take their numbers in the pattern's sequence of groups,
//! as in ndn-cxx, and a back reference to one expands to a generic component of the text it
//! captured ([`Capture::Text`]).
//!
//! Matching backtracks, with at most [`MAX_STEPS`] steps a match, the component patterns' steps
//! included (a name that would take more does not match), so that no pattern and name make
//! the manager spin.

use wire::{Component, Name};

mod component;

use component::CompPattern;

/// Steps one match may take before it gives up (no match).
pub const MAX_STEPS: u32 = 100_000;

/// How many groups a pattern may hold (nesting included).
const MAX_GROUPS: usize = 32;

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
pub type Captures = Vec<Option<Capture>>;

/// What one group captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capture {
    /// The name's components from the first index to the second (excluded).
    Components(usize, usize),
    /// A component pattern's group: a generic component of the text it matched.
    Text(Component),
}

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
        let mut p = CompPattern::parse(&self.s[start..start + end])?;
        p.first_group = self.groups + 1;
        for _ in 0..p.groups {
            self.new_group()?;
        }
        Ok(p)
    }

    /// Numbers a new group.
    fn new_group(&mut self) -> Result<usize, String> {
        self.groups += 1;
        if self.groups > MAX_GROUPS {
            return Err(format!("more than {MAX_GROUPS} groups in {:?}", self.s));
        }
        Ok(self.groups)
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
                    let n = self.new_group()?;
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
            atom: Atom::Comp(CompPattern::parse("").expect("the empty pattern")),
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
                match caps.get(i)? {
                    Some(Capture::Components(a, b)) => {
                        out.components.extend_from_slice(&name.components[*a..*b]);
                    }
                    Some(Capture::Text(c)) => out.push(c.clone()),
                    None => {}
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

    /// If `p` matches the component at `pos` (from the match's step budget), its groups'
    /// texts.
    fn captured(&mut self, p: &CompPattern, pos: usize) -> Option<Vec<Component>> {
        p.match_component(&self.comps[pos], &mut self.steps)
    }

    /// `p` against the component at `pos`, then `k`.
    fn component(
        &mut self,
        p: &CompPattern,
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(&mut Self, usize, &mut Captures) -> bool,
    ) -> bool {
        self.captured(p, pos)
            .is_some_and(|texts| self.then(p, texts, pos, caps, k))
    }

    /// With `p`'s groups set to `texts` (`p` matched the component at `pos`), `k` from the
    /// next component; the groups are restored if it fails.
    fn then(
        &mut self,
        p: &CompPattern,
        texts: Vec<Component>,
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(&mut Self, usize, &mut Captures) -> bool,
    ) -> bool {
        if texts.is_empty() {
            return k(self, pos + 1, caps);
        }
        let groups = p.first_group..p.first_group + texts.len();
        let before = caps[groups.clone()].to_vec();
        for (slot, t) in caps[groups.clone()].iter_mut().zip(texts) {
            *slot = Some(Capture::Text(t));
        }
        if k(self, pos + 1, caps) {
            return true;
        }
        caps[groups].clone_from_slice(&before);
        false
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
            Atom::Comp(p) => pos < self.comps.len() && self.component(p, pos, caps, k),
            Atom::Set { negated: false, of } => {
                // The first pattern of the set that matches the component, as ndn-cxx tries
                // them.
                pos < self.comps.len()
                    && of
                        .iter()
                        .find_map(|p| self.captured(p, pos).map(|t| (p, t)))
                        .is_some_and(|(p, texts)| self.then(p, texts, pos, caps, k))
            }
            Atom::Set { negated: true, of } => {
                pos < self.comps.len()
                    && !of.iter().any(|p| self.captured(p, pos).is_some())
                    && k(self, pos + 1, caps)
            }
            Atom::Group(g, items) => {
                let g = *g;
                let mut inner = |m: &mut Self, p: usize, c: &mut Captures| {
                    let before = c[g].replace(Capture::Components(pos, p));
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
    fn component_patterns_as_validator_configurations_write_them() {
        // NLSR's sample nlsr.conf: sets of literal components around `[^...]*`.
        let lsa = Regex::new("^<localhop>([^<nlsr><LSA>]*)<nlsr><LSA>(<>*)<><><><>$").unwrap();
        assert_eq!(
            lsa.expand(
                &n("/localhop/ndn/site/nlsr/LSA/ndn/site/rtr/NAME/1/2/3"),
                "\\1"
            ),
            Some(n("/ndn/site"))
        );
        let op = Regex::new("^([^<KEY><%C1.Operator>]*)<%C1.Operator>[^<KEY>]*<KEY><>{1,3}$");
        let op = op.unwrap();
        assert!(op.is_match(&n("/ndn/site/%C1.Operator/op/KEY/k1")));
        assert!(!op.is_match(&n("/ndn/site/%C1.Router/op/KEY/k1")));
        // ECMAScript inside `<...>`: classes, escapes, counts, alternatives, groups.
        let ver = Regex::new("^<ndn><[a-z0-9_-]+><v=\\d{1,3}><KEY|ID-CERT>$").unwrap();
        assert!(ver.is_match(&n("/ndn/edu-ucla_1/v=12/KEY")));
        assert!(ver.is_match(&n("/ndn/x/v=123/ID-CERT")));
        assert!(
            !ver.is_match(&n("/ndn/Edu/v=12/KEY")),
            "upper case is outside the class"
        );
        assert!(!ver.is_match(&n("/ndn/x/v=1234/KEY")));
        assert!(!ver.is_match(&n("/ndn/x/v=1/KEYS")), "the whole component");
        let set = Regex::new("^[<(ab)+><[^x]>]+$").unwrap();
        assert!(set.is_match(&n("/abab/y/z")));
        assert!(!set.is_match(&n("/aba")));
        // A component pattern's groups take their numbers in the pattern's order and expand
        // to their text, as in ndn-cxx (its own test, tests/unit/util/regex.t.cpp).
        let dns = Regex::new("^<ndn><(.*)\\.(.*)><DNS>(<>*)<>").unwrap();
        assert_eq!(dns.groups(), 3);
        assert!(dns.check_expand("<ndn>\\2\\1\\3").is_ok());
        assert_eq!(
            dns.expand(&n("/ndn/ucla.edu/DNS/yingdi/mac/ksk-1"), "<ndn>\\2\\1\\3"),
            Some(n("/ndn/edu/ucla/yingdi/mac"))
        );
        // In a set: the pattern that matched sets its groups, the others none.
        let set = Regex::new("^<a>[<x(\\d)><y(\\d)>]$").unwrap();
        assert_eq!(set.groups(), 2);
        assert_eq!(set.expand(&n("/a/y7"), "\\2\\1<z>"), Some(n("/7/z")));
        assert_eq!(set.expand(&n("/a/x3"), "\\1\\2<z>"), Some(n("/3/z")));
        assert!(Regex::new(&format!("^{}", "<(a)>".repeat(33))).is_err());
    }

    #[test]
    fn component_steps_count_in_the_match_budget() {
        // Each component matches (by the second alternative) after an exhaustive first one:
        // under the budget alone, over it all together. A budget per component would match.
        let one = CompPattern::parse("(a+)+b|a*").unwrap();
        let text = "a".repeat(12);
        let mut steps = 0;
        assert!(one.matches(&text, &mut steps));
        let per_component = steps;
        assert!(per_component * 4 < MAX_STEPS, "{per_component}");
        let re = Regex::new("^<(a+)+b|a*>*$").unwrap();
        let name = |count: u32| n(&format!("/{text}").repeat(count as usize));
        assert!(re.is_match(&name(4)));
        assert!(!re.is_match(&name(MAX_STEPS / per_component + 1)));
    }

    #[test]
    fn bad_patterns_are_refused_and_hard_ones_bounded() {
        for bad in [
            "^<a",
            "^(<a>",
            "^<a>)",
            "^<[ab>",
            "^<a\\1>",
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
