//! ndn-cxx's validator configuration (`ValidatorConfig`, the file format of its "Validator
//! Configuration File Format" documentation), the subset NFD's `localhop_security` uses: the
//! rules that say which packets a signer may sign, and the trust anchors.
//!
//! The file is in Boost's INFO format: `key value` lines, `key { ... }` sections, `;` comments,
//! values quoted with `"` where they hold spaces. What is read, as ndn-cxx reads it:
//!
//! - `rule { id ...; for interest|data; filter {...}*; checker {...}+ }`: the first rule whose
//!   `for` is the packet's kind and one of whose filters matches its name (every name when it
//!   has none) checks it; no rule: the packet is refused. For a signed Interest the name is
//!   taken without its signature components (the ParametersSha256Digest, or the old form's
//!   last four).
//! - `filter { type name; name N; relation R }` or `{ type name; regex X }` ([`super::regex`]);
//!   relations `equal`, `is-prefix-of`, `is-strict-prefix-of`.
//! - `checker { type customized; sig-type T; key-locator { type name; ... } }`, the
//!   key-locator by `name N; relation R` (against the signer's identity: the KeyLocator
//!   before its `KEY` component), by `regex X`, or by `hyper-relation { k-regex; k-expand;
//!   h-relation; p-regex; p-expand }`; `checker { type hierarchical; sig-type T }` is the
//!   hyper-relation "the signer's identity is a prefix of the packet's name". `sig-type`:
//!   `ecdsa-sha256` (the default), `rsa-sha256`, `sha256`.
//! - `trust-anchor { type file; file-name F; refresh R }`, `{ type dir; dir D; refresh R }`,
//!   `{ type base64; base64-string S }`, `{ type any }` (no validation at all).
//!
//! Anything else is an error that names the line.

use wire::data::signature_type;
use wire::Name;

use super::regex::Regex;

/// The packets a rule is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum For {
    /// Signed Interests (commands).
    Interest,
    /// Data (certificates fetched along a chain).
    Data,
}

/// A relation between two names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The same name.
    Equal,
    /// The first is a prefix of the second (or equal).
    IsPrefixOf,
    /// The first is a proper prefix of the second.
    IsStrictPrefixOf,
}

impl Relation {
    fn parse(s: &str) -> Result<Relation, String> {
        match s.to_ascii_lowercase().as_str() {
            "equal" => Ok(Relation::Equal),
            "is-prefix-of" => Ok(Relation::IsPrefixOf),
            "is-strict-prefix-of" => Ok(Relation::IsStrictPrefixOf),
            _ => Err(format!(
                "unknown relation {s:?} (equal, is-prefix-of, is-strict-prefix-of)"
            )),
        }
    }

    /// Whether `a` stands in this relation to `b`.
    pub fn holds(self, a: &Name, b: &Name) -> bool {
        match self {
            Relation::Equal => a == b,
            Relation::IsPrefixOf => a.is_prefix_of(b),
            Relation::IsStrictPrefixOf => a.is_prefix_of(b) && a.len() < b.len(),
        }
    }
}

/// A rule's filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// `name N; relation R`: N stands in R to the packet's name.
    Relation(Name, Relation),
    /// `regex X`: the packet's name matches.
    Regex(Regex),
}

/// How a checker judges the KeyLocator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocatorCheck {
    /// Any KeyLocator (`sig-type sha256` without `key-locator`).
    Any,
    /// `name N; relation R`: N stands in R to the signer's identity.
    Relation(Name, Relation),
    /// `regex X`: the KeyLocator matches.
    Regex(Regex),
    /// `hyper-relation`: the KeyLocator's expansion stands in the relation to the packet
    /// name's.
    Hyper {
        /// `k-regex`, `k-expand`.
        k: (Regex, String),
        /// `h-relation`.
        relation: Relation,
        /// `p-regex`, `p-expand`.
        p: (Regex, String),
    },
}

/// A checker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checker {
    /// The signature type it wants.
    pub sig_type: u64,
    /// The KeyLocator check.
    pub key_locator: KeyLocatorCheck,
}

impl Checker {
    /// Whether a packet named `name` (signature components removed) signed with `sig_type`
    /// under KeyLocator `kl` passes.
    pub fn passes(&self, sig_type: u64, name: &Name, kl: &Name) -> bool {
        if sig_type != self.sig_type {
            return false;
        }
        match &self.key_locator {
            KeyLocatorCheck::Any => true,
            KeyLocatorCheck::Relation(n, r) => r.holds(n, &identity_of(kl)),
            KeyLocatorCheck::Regex(x) => x.is_match(kl),
            KeyLocatorCheck::Hyper { k, relation, p } => {
                match (k.0.expand(kl, &k.1), p.0.expand(name, &p.1)) {
                    (Some(ke), Some(pe)) => relation.holds(&ke, &pe),
                    _ => false,
                }
            }
        }
    }
}

/// The identity a KeyLocator names: the name before its `KEY` component when it is a key name
/// (`/<identity>/KEY/<key-id>`) or a certificate name (`.../<issuer>/<version>`), else the
/// name itself (ndn-cxx's `extractIdentityNameFromKeyLocator`).
pub fn identity_of(kl: &Name) -> Name {
    let n = kl.len();
    for back in [2, 4] {
        if n >= back && kl.components[n - back].value == b"KEY" {
            return kl.prefix(n - back);
        }
    }
    kl.clone()
}

/// A rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// `id`.
    pub id: String,
    /// `for`.
    pub kind: For,
    /// The filters (none: every packet).
    pub filters: Vec<Filter>,
    /// The checkers (one must pass).
    pub checkers: Vec<Checker>,
}

impl Rule {
    fn matches(&self, name: &Name) -> bool {
        self.filters.is_empty()
            || self.filters.iter().any(|f| match f {
                Filter::Relation(n, r) => r.holds(n, name),
                Filter::Regex(x) => x.is_match(name),
            })
    }
}

/// A trust anchor as the file names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchorSpec {
    /// `type file`: the file (as written; relative to the configuration file's directory) and
    /// `refresh`.
    File(String, Option<String>),
    /// `type dir`: the directory and `refresh`.
    Dir(String, Option<String>),
    /// `type base64`: the certificate (decoded).
    Base64(Vec<u8>),
    /// `type any`.
    Any,
}

/// A validator configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The rules, in the file's order.
    pub rules: Vec<Rule>,
    /// The trust anchors, in the file's order.
    pub anchors: Vec<AnchorSpec>,
}

/// Why a packet is refused by the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    /// No rule is for it.
    NoRule,
    /// The rule's checkers all refuse it.
    Checker,
}

impl Policy {
    /// What NFD's sample `localhop_security` says (the shorthand
    /// `[[rib.localhop_trust_anchor]]` stands for it): a RIB command signed with ECDSA by any
    /// key, and certificates each signed by a key of an identity that is a prefix of theirs
    /// (the testbed's hierarchy).
    pub fn nfd_sample(anchors: Vec<AnchorSpec>) -> Policy {
        let text = r#"
            rule {
              id "RIB Command Interest"
              for interest
              filter { type name
                       regex ^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$ }
              checker { type customized
                        sig-type ecdsa-sha256
                        key-locator { type name
                                      regex ^<>*<KEY><>{1,3}$ } }
            }
            rule {
              id "NDN Testbed Certificate Hierarchy"
              for data
              filter { type name
                       regex ^<>*<KEY><>{3}$ }
              checker { type hierarchical
                        sig-type ecdsa-sha256 }
            }
        "#;
        let mut p = Policy::parse(text).expect("the sample parses");
        p.anchors = anchors;
        p
    }

    /// Judges a packet of kind `kind` named `name` (signature components removed), signed
    /// with `sig_type` under KeyLocator `kl`.
    pub fn check(&self, kind: For, name: &Name, sig_type: u64, kl: &Name) -> Result<(), RuleError> {
        let rule = self
            .rules
            .iter()
            .find(|r| r.kind == kind && r.matches(name))
            .ok_or(RuleError::NoRule)?;
        if rule.checkers.iter().any(|c| c.passes(sig_type, name, kl)) {
            Ok(())
        } else {
            Err(RuleError::Checker)
        }
    }

    /// Whether a trust anchor is `type any` (validation bypassed).
    pub fn any(&self) -> bool {
        self.anchors.contains(&AnchorSpec::Any)
    }

    /// Reads a configuration's text; the error is one line naming the line and the problem.
    pub fn parse(text: &str) -> Result<Policy, String> {
        let tree = parse_info(text)?;
        let mut p = Policy {
            rules: Vec::new(),
            anchors: Vec::new(),
        };
        for e in &tree {
            match e.key.to_ascii_lowercase().as_str() {
                "rule" => p.rules.push(rule(e)?),
                "trust-anchor" => p.anchors.push(anchor(e)?),
                k => return Err(at(e, format!("unknown section {k:?} (rule, trust-anchor)"))),
            }
        }
        Ok(p)
    }
}

/// One INFO entry: `key value { children }`.
#[derive(Debug, Clone)]
struct Entry {
    key: String,
    value: String,
    children: Vec<Entry>,
    line: usize,
}

fn at(e: &Entry, why: String) -> String {
    format!("line {}: {why}", e.line)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Open,
    Close,
}

fn tokens(text: &str) -> Result<Vec<(Tok, usize)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        let mut chars = line.chars().peekable();
        while let Some(&c) = chars.peek() {
            match c {
                ';' => break,
                c if c.is_whitespace() => {
                    chars.next();
                }
                '{' | '}' => {
                    chars.next();
                    out.push((if c == '{' { Tok::Open } else { Tok::Close }, ln));
                }
                '"' => {
                    chars.next();
                    let mut s = String::new();
                    loop {
                        match chars.next() {
                            None => return Err(format!("line {ln}: an unclosed '\"'")),
                            Some('"') => break,
                            Some('\\') => match chars.next() {
                                Some('n') => s.push('\n'),
                                Some('t') => s.push('\t'),
                                Some('0') => s.push('\0'),
                                Some(c) => s.push(c),
                                None => return Err(format!("line {ln}: an unclosed '\"'")),
                            },
                            Some(c) => s.push(c),
                        }
                    }
                    out.push((Tok::Word(s), ln));
                }
                _ => {
                    let mut s = String::new();
                    while let Some(&c) = chars.peek() {
                        // As Boost's bare strings: braces inside a word are its own (a
                        // regex's `{1,3}`).
                        if c.is_whitespace() || matches!(c, ';' | '"') {
                            break;
                        }
                        s.push(c);
                        chars.next();
                    }
                    out.push((Tok::Word(s), ln));
                }
            }
        }
    }
    Ok(out)
}

/// Boost's INFO format, as far as a validator configuration uses it.
fn parse_info(text: &str) -> Result<Vec<Entry>, String> {
    let toks = tokens(text)?;
    let mut i = 0;
    let entries = entries(&toks, &mut i, 0)?;
    Ok(entries)
}

/// How deep sections may nest.
const MAX_NESTING: usize = 8;

fn entries(toks: &[(Tok, usize)], i: &mut usize, depth: usize) -> Result<Vec<Entry>, String> {
    if depth > MAX_NESTING {
        let ln = toks.get(*i).map_or(0, |t| t.1);
        return Err(format!(
            "line {ln}: sections nested deeper than {MAX_NESTING}"
        ));
    }
    let mut out = Vec::new();
    while let Some((t, ln)) = toks.get(*i) {
        match t {
            Tok::Close if depth > 0 => {
                *i += 1;
                return Ok(out);
            }
            Tok::Close => return Err(format!("line {ln}: an unmatched '}}'")),
            Tok::Open => return Err(format!("line {ln}: a '{{' without a key")),
            Tok::Word(key) => {
                *i += 1;
                let mut e = Entry {
                    key: key.clone(),
                    value: String::new(),
                    children: Vec::new(),
                    line: *ln,
                };
                // A value is on the key's line.
                if let Some((Tok::Word(v), vl)) = toks.get(*i) {
                    if vl == ln {
                        e.value = v.clone();
                        *i += 1;
                    }
                }
                if let Some((Tok::Open, _)) = toks.get(*i) {
                    *i += 1;
                    e.children = entries(toks, i, depth + 1)?;
                }
                out.push(e);
            }
        }
    }
    if depth > 0 {
        return Err("an unclosed '{' at the end of the file".into());
    }
    Ok(out)
}

/// A section's children as an ordered list to walk, ndn-cxx fashion.
struct Walk<'a> {
    of: &'a Entry,
    items: &'a [Entry],
    at: usize,
}

impl<'a> Walk<'a> {
    fn new(of: &'a Entry) -> Self {
        Walk {
            of,
            items: &of.children,
            at: 0,
        }
    }

    fn peek_is(&self, key: &str) -> bool {
        self.items
            .get(self.at)
            .is_some_and(|e| e.key.eq_ignore_ascii_case(key))
    }

    /// The next entry, which must be `key`.
    fn expect(&mut self, key: &str, what: &str) -> Result<&'a Entry, String> {
        match self.items.get(self.at) {
            Some(e) if e.key.eq_ignore_ascii_case(key) => {
                self.at += 1;
                Ok(e)
            }
            Some(e) => Err(at(
                e,
                format!("expecting <{what}.{key}>, found {:?}", e.key),
            )),
            None => Err(at(self.of, format!("expecting <{what}.{key}>"))),
        }
    }

    fn optional(&mut self, key: &str) -> Option<&'a Entry> {
        if self.peek_is(key) {
            self.at += 1;
            Some(&self.items[self.at - 1])
        } else {
            None
        }
    }

    fn end(&self, what: &str) -> Result<(), String> {
        match self.items.get(self.at) {
            Some(e) => Err(at(e, format!("unexpected {:?} in <{what}>", e.key))),
            None => Ok(()),
        }
    }
}

fn name_of(e: &Entry, what: &str) -> Result<Name, String> {
    Name::from_uri(&e.value)
        .map_err(|err| at(e, format!("invalid <{what}> {:?}: {err:?}", e.value)))
}

fn regex_of(e: &Entry, what: &str) -> Result<Regex, String> {
    Regex::new(&e.value).map_err(|err| at(e, format!("invalid <{what}>: {err}")))
}

fn relation_of(e: &Entry) -> Result<Relation, String> {
    Relation::parse(&e.value).map_err(|err| at(e, err))
}

fn rule(e: &Entry) -> Result<Rule, String> {
    let mut w = Walk::new(e);
    let id = w.expect("id", "rule")?.value.clone();
    let f = w.expect("for", "rule")?;
    let kind = match f.value.to_ascii_lowercase().as_str() {
        "interest" => For::Interest,
        "data" => For::Data,
        v => {
            return Err(at(
                f,
                format!("unknown <rule.for> {v:?} in rule {id:?} (interest, data)"),
            ))
        }
    };
    let mut filters = Vec::new();
    while let Some(f) = w.optional("filter") {
        filters.push(filter(f)?);
    }
    let mut checkers = Vec::new();
    while let Some(c) = w.optional("checker") {
        checkers.push(checker(c)?);
    }
    w.end("rule")?;
    if checkers.is_empty() {
        return Err(at(e, format!("no <rule.checker> in rule {id:?}")));
    }
    Ok(Rule {
        id,
        kind,
        filters,
        checkers,
    })
}

fn filter(e: &Entry) -> Result<Filter, String> {
    let mut w = Walk::new(e);
    let t = w.expect("type", "filter")?;
    if !t.value.eq_ignore_ascii_case("name") {
        return Err(at(t, format!("unknown <filter.type> {:?} (name)", t.value)));
    }
    let f = if let Some(n) = w.optional("name") {
        let name = name_of(n, "filter.name")?;
        Filter::Relation(name, relation_of(w.expect("relation", "filter")?)?)
    } else if let Some(x) = w.optional("regex") {
        Filter::Regex(regex_of(x, "filter.regex")?)
    } else {
        return Err(at(e, "expecting <filter.name> or <filter.regex>".into()));
    };
    w.end("filter")?;
    Ok(f)
}

fn sig_type(e: &Entry) -> Result<u64, String> {
    match e.value.to_ascii_lowercase().as_str() {
        "ecdsa-sha256" => Ok(signature_type::SHA256_WITH_ECDSA),
        "rsa-sha256" => Ok(signature_type::SHA256_WITH_RSA),
        "sha256" => Ok(signature_type::DIGEST_SHA256),
        v => Err(at(
            e,
            format!("unknown <checker.sig-type> {v:?} (ecdsa-sha256, rsa-sha256, sha256)"),
        )),
    }
}

fn checker(e: &Entry) -> Result<Checker, String> {
    let mut w = Walk::new(e);
    let t = w.expect("type", "checker")?;
    let sig = match w.optional("sig-type") {
        Some(s) => sig_type(s)?,
        None => signature_type::SHA256_WITH_ECDSA,
    };
    let key_locator = match t.value.to_ascii_lowercase().as_str() {
        "hierarchical" => KeyLocatorCheck::Hyper {
            k: (Regex::new("^(<>*)<KEY><>{1,3}$")?, "\\1".into()),
            relation: Relation::IsPrefixOf,
            p: (Regex::new("^(<>*)$")?, "\\1".into()),
        },
        "customized" => match w.optional("key-locator") {
            Some(k) => key_locator(k)?,
            None if sig == signature_type::DIGEST_SHA256 => KeyLocatorCheck::Any,
            None => return Err(at(e, "expecting <checker.key-locator>".into())),
        },
        v => {
            return Err(at(
                t,
                format!("unknown <checker.type> {v:?} (customized, hierarchical)"),
            ))
        }
    };
    w.end("checker")?;
    Ok(Checker {
        sig_type: sig,
        key_locator,
    })
}

fn key_locator(e: &Entry) -> Result<KeyLocatorCheck, String> {
    let mut w = Walk::new(e);
    let t = w.expect("type", "checker.key-locator")?;
    if !t.value.eq_ignore_ascii_case("name") {
        return Err(at(
            t,
            format!("unknown <checker.key-locator.type> {:?} (name)", t.value),
        ));
    }
    let what = "checker.key-locator";
    let check = if let Some(n) = w.optional("name") {
        let name = name_of(n, "checker.key-locator.name")?;
        KeyLocatorCheck::Relation(name, relation_of(w.expect("relation", what)?)?)
    } else if let Some(x) = w.optional("regex") {
        KeyLocatorCheck::Regex(regex_of(x, "checker.key-locator.regex")?)
    } else if let Some(h) = w.optional("hyper-relation") {
        let what = "checker.key-locator.hyper-relation";
        let mut hw = Walk::new(h);
        let k = regex_of(hw.expect("k-regex", what)?, "k-regex")?;
        let ke = hw.expect("k-expand", what)?;
        k.check_expand(&ke.value).map_err(|err| at(ke, err))?;
        let relation = relation_of(hw.expect("h-relation", what)?)?;
        let p = regex_of(hw.expect("p-regex", what)?, "p-regex")?;
        let pe = hw.expect("p-expand", what)?;
        p.check_expand(&pe.value).map_err(|err| at(pe, err))?;
        hw.end(what)?;
        KeyLocatorCheck::Hyper {
            k: (k, ke.value.clone()),
            relation,
            p: (p, pe.value.clone()),
        }
    } else {
        return Err(at(
            e,
            "expecting <checker.key-locator.name>, regex or hyper-relation".into(),
        ));
    };
    w.end(what)?;
    Ok(check)
}

fn anchor(e: &Entry) -> Result<AnchorSpec, String> {
    let mut w = Walk::new(e);
    let t = w.expect("type", "trust-anchor")?;
    let refresh = |w: &mut Walk<'_>| -> Result<Option<String>, String> {
        Ok(match w.optional("refresh") {
            Some(r) => {
                check_refresh(&r.value).map_err(|err| at(r, err))?;
                Some(r.value.clone())
            }
            None => None,
        })
    };
    let a = match t.value.to_ascii_lowercase().as_str() {
        "file" => {
            let f = w.expect("file-name", "trust-anchor")?.value.clone();
            AnchorSpec::File(f, refresh(&mut w)?)
        }
        "dir" => {
            let d = w.expect("dir", "trust-anchor")?.value.clone();
            AnchorSpec::Dir(d, refresh(&mut w)?)
        }
        "base64" => {
            let b = w.expect("base64-string", "trust-anchor")?;
            let clean: String = b.value.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes = data_encoding::BASE64
                .decode(clean.as_bytes())
                .map_err(|_| at(b, "cannot decode certificate from base64-string".into()))?;
            super::Certificate::decode(&bytes).map_err(|err| at(b, err))?;
            AnchorSpec::Base64(bytes)
        }
        "any" => AnchorSpec::Any,
        v => {
            return Err(at(
                t,
                format!("unknown <trust-anchor.type> {v:?} (file, dir, base64, any)"),
            ))
        }
    };
    w.end("trust-anchor")?;
    Ok(a)
}

/// ndn-cxx's `refresh`: a count and `h`, `m` or `s`.
fn check_refresh(s: &str) -> Result<(), String> {
    let bad = || format!("bad refresh {s:?} (<n>h, <n>m or <n>s)");
    let unit = s.chars().last().ok_or_else(bad)?;
    if !matches!(unit, 'h' | 'm' | 's') {
        return Err(bad());
    }
    s[..s.len() - 1].parse::<u32>().map(drop).map_err(|_| bad())
}

/// The name a rule judges for a signed Interest: without its ParametersSha256Digest (v0.3),
/// or its last four components (the old form); `None` if it has not got them.
pub fn command_name(name: &Name, v03: bool) -> Option<Name> {
    let n = name.len();
    if v03 {
        let last = name.components.last()?;
        (u32::from(last.typ) == wire::tt::PARAMETERS_SHA256_DIGEST).then(|| name.prefix(n - 1))
    } else {
        n.checked_sub(4).map(|k| name.prefix(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    const NFD_SAMPLE: &str = r#"
      ; NFD's nfd.conf.sample localhop_security, as an operator copies it
      rule
      {
        id "RIB Command Interest"
        for interest
        filter
        {
          type name
          regex ^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$
        }
        checker
        {
          type customized
          sig-type ecdsa-sha256
          key-locator
          {
            type name
            regex ^<>*<KEY><>{1,3}$
          }
        }
      }
      rule
      {
        id "NDN Testbed Certificate Hierarchy"
        for data
        filter
        {
          type name
          regex ^<>*<KEY><>{3}$
        }
        checker
        {
          type customized
          sig-type ecdsa-sha256
          key-locator
          {
            type name
            hyper-relation
            {
              k-regex ^(<>*)<KEY><>{1,3}$
              k-expand \\1
              h-relation is-prefix-of
              p-regex ^(<>*)$
              p-expand \\1
            }
          }
        }
      }
      trust-anchor
      {
        type file
        file-name keys/default.ndncert
      }
      trust-anchor { type dir
                     dir "anchors dir"
                     refresh 1h }
    "#;

    #[test]
    fn nfd_sample_reads_and_judges_as_ndn_cxx() {
        let p = Policy::parse(NFD_SAMPLE).unwrap();
        assert_eq!(p.rules.len(), 2);
        assert_eq!(
            p.anchors,
            [
                AnchorSpec::File("keys/default.ndncert".into(), None),
                AnchorSpec::Dir("anchors dir".into(), Some("1h".into())),
            ]
        );
        let ecdsa = signature_type::SHA256_WITH_ECDSA;
        let cmd = n("/localhop/nfd/rib/register/params");
        let user_key = n("/site/user/KEY/k1");
        assert_eq!(p.check(For::Interest, &cmd, ecdsa, &user_key), Ok(()));
        assert_eq!(
            p.check(
                For::Interest,
                &cmd,
                signature_type::SHA256_WITH_RSA,
                &user_key
            ),
            Err(RuleError::Checker),
            "sig-type"
        );
        assert_eq!(
            p.check(For::Interest, &cmd, ecdsa, &n("/site/user")),
            Err(RuleError::Checker),
            "no KEY in the KeyLocator"
        );
        assert_eq!(
            p.check(
                For::Interest,
                &n("/localhop/nfd/faces/create/x"),
                ecdsa,
                &user_key
            ),
            Err(RuleError::NoRule)
        );
        // Certificates: the issuer's identity must be a prefix of the certificate's name.
        let user_cert = n("/site/user/KEY/k1/site/v=1");
        assert_eq!(
            p.check(For::Data, &user_cert, ecdsa, &n("/site/KEY/k2")),
            Ok(())
        );
        assert_eq!(
            p.check(For::Data, &user_cert, ecdsa, &n("/other/KEY/k2/root/v=1")),
            Err(RuleError::Checker)
        );
        assert_eq!(
            p.check(
                For::Data,
                &n("/site/user/not-a-cert"),
                ecdsa,
                &n("/site/KEY/k2")
            ),
            Err(RuleError::NoRule)
        );
        // The shorthand is the same rules.
        assert_eq!(Policy::nfd_sample(p.anchors.clone()).rules.len(), 2);
        assert_eq!(
            Policy::nfd_sample(vec![]).check(For::Data, &user_cert, ecdsa, &n("/site/KEY/k2")),
            Ok(())
        );
    }

    #[test]
    fn relation_filters_and_checkers() {
        let p = Policy::parse(
            r#"rule { id r
                      for interest
                      filter { type name
                               name /localhop/nfd/rib
                               relation is-strict-prefix-of }
                      checker { type customized
                                sig-type rsa-sha256
                                key-locator { type name
                                              name /ops
                                              relation is-prefix-of } } }
               trust-anchor { type any }"#,
        )
        .unwrap();
        assert!(p.any());
        let rsa = signature_type::SHA256_WITH_RSA;
        let cmd = n("/localhop/nfd/rib/register/x");
        assert_eq!(
            p.check(For::Interest, &cmd, rsa, &n("/ops/alice/KEY/k")),
            Ok(())
        );
        assert_eq!(
            p.check(For::Interest, &cmd, rsa, &n("/ops/KEY/k/self/v=1")),
            Ok(())
        );
        assert_eq!(
            p.check(For::Interest, &cmd, rsa, &n("/eve/KEY/k")),
            Err(RuleError::Checker)
        );
        assert_eq!(
            p.check(
                For::Interest,
                &n("/localhop/nfd/rib"),
                rsa,
                &n("/ops/KEY/k")
            ),
            Err(RuleError::NoRule),
            "strict prefix"
        );
        assert_eq!(identity_of(&n("/a/b")), n("/a/b"));
        assert_eq!(identity_of(&n("/a/KEY/k")), n("/a"));
        assert_eq!(identity_of(&n("/a/KEY/k/i/v=2")), n("/a"));
    }

    #[test]
    fn bad_files_name_the_line_and_the_problem() {
        for (text, line, words) in [
            ("rule { id x\nfor cheese\nchecker { type hierarchical } }", 2, "rule.for"),
            ("rule { id x\nfor data }", 1, "no <rule.checker>"),
            ("rule { for data }", 1, "rule.id"),
            ("rule { id x\nfor data\nchecker { type fancy } }", 3, "checker.type"),
            (
                "rule { id x\nfor data\nchecker { type customized\nsig-type dsa } }",
                4,
                "sig-type",
            ),
            (
                "rule { id x\nfor data\nchecker { type customized } }",
                3,
                "key-locator",
            ),
            (
                "rule { id x\nfor data\nfilter { type name\nregex ^<a }\nchecker { type hierarchical } }",
                4,
                "filter.regex",
            ),
            (
                "rule { id x\nfor data\nfilter { type name\nname /a\nrelation near }\nchecker { type hierarchical } }",
                5,
                "relation",
            ),
            (
                "rule { id x\nfor data\nchecker { type customized\nkey-locator { type name\nhyper-relation { k-regex ^(<>*)$\nk-expand \\\\2\nh-relation equal\np-regex ^(<>*)$\np-expand \\\\1 } } } }",
                6,
                "groups",
            ),
            ("trust-anchor { type file }", 1, "file-name"),
            ("trust-anchor { type dir\ndir /d\nrefresh 1d }", 3, "refresh"),
            ("trust-anchor { type base64\nbase64-string !!! }", 2, "base64"),
            ("trust-anchor { type ftp }", 1, "trust-anchor.type"),
            ("trust-anchor { type any\nextra 1 }", 2, "extra"),
            ("validator { }", 1, "unknown section"),
            ("rule { id x", 0, "unclosed"),
            ("}", 1, "unmatched"),
            ("rule { id \"x }", 1, "unclosed"),
        ] {
            let e = Policy::parse(text).unwrap_err();
            if line > 0 {
                assert!(e.starts_with(&format!("line {line}:")), "{text}: {e}");
            }
            assert!(e.contains(words), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn signed_interest_names_lose_their_signature_components() {
        let d = wire::Component::parameters_digest([0; 32]);
        let v03 = n("/localhop/nfd/rib/register/p").with(d);
        assert_eq!(
            command_name(&v03, true),
            Some(n("/localhop/nfd/rib/register/p"))
        );
        assert_eq!(command_name(&n("/a/b"), true), None);
        assert_eq!(command_name(&n("/a/b/c/d/e"), false), Some(n("/a")));
        assert_eq!(command_name(&n("/a/b/c"), false), None);
    }
}
