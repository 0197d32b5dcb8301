//! nfdc's command line (NFD 24.07): `NOUN VERB [ARG...]`, each argument given as `name value`
//! (a flag as `name` alone) or, for the positional ones, as the bare value in their order. The
//! parse follows nfdc's: a named argument ends the positional ones; a positional argument that
//! is optional and does not parse leaves the token to the next; a required one must parse.
//! Every error is a usage error (status 2) with nfdc's message.

use std::collections::HashMap;

use wire::nfd::FacePersistency;
use wire::Name;

use super::{FaceRef, Failure};

/// The type of an argument's value (nfdc's `ArgValueType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    /// A flag: the name alone.
    None,
    /// on/off, true/false, enabled/disabled, yes/no, 1/0.
    Bool,
    /// A non-negative integer.
    Unsigned,
    /// Any string.
    Str,
    /// `text` or `xml`.
    ReportFormat,
    /// An NDN name.
    Name,
    /// A face URI (`scheme://...`).
    FaceUri,
    /// A FaceId, else a face URI.
    FaceIdOrUri,
    /// `persistent` or `permanent`.
    Persistency,
    /// A route origin: a number or `app`, `static`, `nlsr`, ...
    Origin,
}

impl Ty {
    /// The placeholder nfdc prints for a value of this type.
    fn metavar(self) -> &'static str {
        match self {
            Ty::None => "",
            Ty::Bool => "bool",
            Ty::Unsigned => "uint",
            Ty::Str => "str",
            Ty::ReportFormat => "fmt",
            Ty::Name => "name",
            Ty::FaceUri => "uri",
            Ty::FaceIdOrUri => "face",
            Ty::Persistency => "persistency",
            Ty::Origin => "origin",
        }
    }
}

/// One argument of a command.
struct Arg {
    name: &'static str,
    ty: Ty,
    required: bool,
    positional: bool,
}

const fn arg(name: &'static str, ty: Ty, required: bool, positional: bool) -> Arg {
    Arg {
        name,
        ty,
        required,
        positional,
    }
}

/// One command: noun, verb, the line `help` prints, its arguments in order.
pub(super) struct Def {
    pub(super) noun: &'static str,
    pub(super) verb: &'static str,
    pub(super) title: &'static str,
    args: &'static [Arg],
}

const fn def(
    noun: &'static str,
    verb: &'static str,
    title: &'static str,
    args: &'static [Arg],
) -> Def {
    Def {
        noun,
        verb,
        title,
        args,
    }
}

const REQ: bool = true;
const OPT: bool = false;
const POS: bool = true;
const NAMED: bool = false;

/// nfdc 24.07's commands, in the order `help` lists them; `local-fields` on `face create` is
/// Cascade's (NFD sets that flag with `faces/update` only).
#[rustfmt::skip]
pub(super) const DEFS: &[Def] = &[
    def("status", "report", "print full status report", &[arg("format", Ty::ReportFormat, OPT, POS)]),
    def("status", "show", "print general status", &[]),
    def("channel", "list", "print channel list", &[]),
    def("fib", "list", "print FIB entries", &[]),
    def("cs", "info", "print CS information", &[]),
    def("face", "list", "print face list", &[arg("remote", Ty::FaceUri, OPT, POS), arg("local", Ty::FaceUri, OPT, NAMED), arg("scheme", Ty::Str, OPT, NAMED)]),
    def("face", "show", "show face information", &[arg("id", Ty::Unsigned, REQ, POS)]),
    def("face", "create", "create a face", &[arg("remote", Ty::FaceUri, REQ, POS), arg("persistency", Ty::Persistency, OPT, POS), arg("local", Ty::FaceUri, OPT, NAMED), arg("reliability", Ty::Bool, OPT, NAMED), arg("congestion-marking", Ty::Bool, OPT, NAMED), arg("congestion-marking-interval", Ty::Unsigned, OPT, NAMED), arg("default-congestion-threshold", Ty::Unsigned, OPT, NAMED), arg("mtu", Ty::Str, OPT, NAMED), arg("local-fields", Ty::Bool, OPT, NAMED)]),
    def("face", "destroy", "destroy a face", &[arg("face", Ty::FaceIdOrUri, REQ, POS)]),
    def("route", "list", "print RIB routes", &[arg("nexthop", Ty::FaceIdOrUri, OPT, POS), arg("origin", Ty::Origin, OPT, NAMED)]),
    def("route", "show", "show routes toward a prefix", &[arg("prefix", Ty::Name, REQ, POS)]),
    def("route", "add", "add a route", &[arg("prefix", Ty::Name, REQ, POS), arg("nexthop", Ty::FaceIdOrUri, REQ, POS), arg("origin", Ty::Origin, OPT, NAMED), arg("cost", Ty::Unsigned, OPT, NAMED), arg("no-inherit", Ty::None, OPT, NAMED), arg("capture", Ty::None, OPT, NAMED), arg("expires", Ty::Unsigned, OPT, NAMED)]),
    def("route", "remove", "remove a route", &[arg("prefix", Ty::Name, REQ, POS), arg("nexthop", Ty::FaceIdOrUri, REQ, POS), arg("origin", Ty::Origin, OPT, NAMED)]),
    def("cs", "config", "change CS configuration", &[arg("capacity", Ty::Unsigned, OPT, NAMED), arg("admit", Ty::Bool, OPT, NAMED), arg("serve", Ty::Bool, OPT, NAMED)]),
    def("cs", "erase", "erase cached Data", &[arg("prefix", Ty::Name, REQ, POS), arg("count", Ty::Unsigned, OPT, NAMED)]),
    def("strategy", "list", "print strategy choices", &[]),
    def("strategy", "show", "show strategy choice of an entry", &[arg("prefix", Ty::Name, REQ, POS)]),
    def("strategy", "set", "set strategy choice for a name prefix", &[arg("prefix", Ty::Name, REQ, POS), arg("strategy", Ty::Str, REQ, POS)]),
    def("strategy", "unset", "clear strategy choice at a name prefix", &[arg("prefix", Ty::Name, REQ, POS)]),
];

/// The verb a noun alone stands for (nfdc's aliases: `nfdc route` is `nfdc route list`).
fn default_verb(noun: &str) -> Option<&'static str> {
    Some(match noun {
        "status" => "show",
        "channel" | "fib" | "face" | "route" | "strategy" => "list",
        "cs" => "info",
        _ => return None,
    })
}

/// A parsed argument value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// A flag that was given.
    Flag,
    /// A boolean.
    Bool(bool),
    /// A number (also a route origin).
    U64(u64),
    /// A string, a face URI or a report format.
    Str(String),
    /// A name.
    Name(Name),
    /// A FaceId or a face URI.
    Face(FaceRef),
    /// A face persistency.
    Persistency(FacePersistency),
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(2, message)
}

const BAD_CAST: &str = "bad lexical cast: source type value could not be interpreted as target";

fn parse_unsigned(s: &str) -> Result<u64, String> {
    match s.parse::<i64>() {
        Ok(v) if v < 0 => Err(format!("value '{s}' is negative")),
        Ok(v) => Ok(v as u64),
        Err(_) => Err(BAD_CAST.into()),
    }
}

/// A route origin by name (case-insensitive, as ndn-cxx) or number (0..=65535).
pub(super) fn parse_origin(s: &str) -> Result<u64, String> {
    const NAMES: &[(&str, u64)] = &[
        ("none", 65535),
        ("app", 0),
        ("autoreg", 64),
        ("client", 65),
        ("autoconf", 66),
        ("nlsr", 128),
        ("prefixann", 129),
        ("static", 255),
    ];
    if let Some((_, v)) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)) {
        return Ok(*v);
    }
    match s.parse::<u64>() {
        Ok(v) if v <= 65535 => Ok(v),
        _ => Err(BAD_CAST.into()),
    }
}

/// A face URI as ndn-cxx's FaceUri parses it: `scheme://rest`, the scheme made of letters,
/// digits, `+`, `-` and `.`.
fn parse_face_uri(s: &str) -> Result<String, String> {
    let ok = s.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if ok {
        Ok(s.to_owned())
    } else {
        Err(format!("Malformed URI: {s}"))
    }
}

fn parse_value(ty: Ty, s: &str) -> Result<Value, String> {
    Ok(match ty {
        Ty::None => Value::Flag,
        Ty::Bool => match s {
            "on" | "true" | "enabled" | "yes" | "1" => Value::Bool(true),
            "off" | "false" | "disabled" | "no" | "0" => Value::Bool(false),
            _ => return Err(format!("unrecognized boolean value '{s}'")),
        },
        Ty::Unsigned => Value::U64(parse_unsigned(s)?),
        Ty::Str => Value::Str(s.to_owned()),
        Ty::ReportFormat => match s {
            "text" | "xml" => Value::Str(s.to_owned()),
            _ => return Err(format!("unrecognized ReportFormat '{s}'")),
        },
        Ty::Name => Value::Name(Name::from_uri(s).map_err(|e| e.to_string())?),
        Ty::FaceUri => Value::Str(parse_face_uri(s)?),
        Ty::FaceIdOrUri => Value::Face(match s.parse::<u64>() {
            Ok(id) => FaceRef::Id(id),
            Err(_) => FaceRef::Uri(parse_face_uri(s)?),
        }),
        Ty::Persistency => Value::Persistency(match s {
            "persistent" => FacePersistency::Persistent,
            "permanent" => FacePersistency::Permanent,
            _ => return Err(format!("unrecognized FacePersistency '{s}'")),
        }),
        Ty::Origin => Value::U64(parse_origin(s)?),
    })
}

/// The arguments of one parsed command line, by name.
#[derive(Debug, Default)]
pub(super) struct Args(HashMap<&'static str, Value>);

impl Args {
    pub(super) fn flag(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
    pub(super) fn u64(&self, name: &str) -> Option<u64> {
        match self.0.get(name) {
            Some(Value::U64(v)) => Some(*v),
            _ => None,
        }
    }
    pub(super) fn bool(&self, name: &str) -> Option<bool> {
        match self.0.get(name) {
            Some(Value::Bool(v)) => Some(*v),
            _ => None,
        }
    }
    pub(super) fn str(&self, name: &str) -> Option<&str> {
        match self.0.get(name) {
            Some(Value::Str(v)) => Some(v),
            _ => None,
        }
    }
    pub(super) fn name(&self, name: &str) -> Option<&Name> {
        match self.0.get(name) {
            Some(Value::Name(v)) => Some(v),
            _ => None,
        }
    }
    pub(super) fn face(&self, name: &str) -> Option<&FaceRef> {
        match self.0.get(name) {
            Some(Value::Face(v)) => Some(v),
            _ => None,
        }
    }
    pub(super) fn persistency(&self, name: &str) -> Option<FacePersistency> {
        match self.0.get(name) {
            Some(Value::Persistency(v)) => Some(*v),
            _ => None,
        }
    }
}

/// The command `tokens` name (noun, then verb or nothing for the noun's default) and its
/// arguments, parsed as nfdc does.
pub(super) fn parse(tokens: &[String]) -> Result<(&'static Def, Args), Failure> {
    let noun = tokens.first().map_or("", String::as_str);
    let verb = tokens.get(1).map_or("", String::as_str);
    let (verb, start) = match (verb, default_verb(noun)) {
        ("", Some(v)) => (v, 1),
        _ => (verb, 2),
    };
    let def = DEFS
        .iter()
        .find(|d| d.noun == noun && d.verb == verb)
        .ok_or_else(|| usage(format!("No such command: {noun} {verb}")))?;
    let args = parse_args(def, tokens.get(start..).unwrap_or(&[]))?;
    Ok((def, args))
}

fn parse_args(def: &Def, tokens: &[String]) -> Result<Args, Failure> {
    let positional: Vec<&Arg> = def.args.iter().filter(|a| a.positional).collect();
    let mut ca = Args::default();
    let mut next_pos = 0;
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i].as_str();
        if let Some(a) = def.args.iter().find(|a| a.name == token) {
            if a.ty == Ty::None {
                ca.0.insert(a.name, Value::Flag);
            } else {
                let Some(v) = tokens.get(i + 1) else {
                    return Err(usage(format!("{}: {} is missing", a.name, a.ty.metavar())));
                };
                i += 1;
                let value = parse_value(a.ty, v).map_err(|e| {
                    usage(format!(
                        "{}: cannot parse '{v}' as {} ({e})",
                        a.name,
                        a.ty.metavar()
                    ))
                })?;
                ca.0.insert(a.name, value);
            }
            // No positional argument after a named one.
            next_pos = positional.len();
            i += 1;
            continue;
        }
        let mut taken = false;
        while next_pos < positional.len() {
            let a = positional[next_pos];
            next_pos += 1;
            match parse_value(a.ty, token) {
                Ok(v) => {
                    ca.0.insert(a.name, v);
                    taken = true;
                    break;
                }
                Err(e) if a.required => {
                    return Err(usage(format!(
                        "cannot parse '{token}' as an argument name or as {} for {} ({e})",
                        a.ty.metavar(),
                        a.name
                    )));
                }
                // An optional positional argument may leave the token to the next one.
                Err(_) => {}
            }
        }
        if !taken {
            return Err(usage(format!("cannot parse '{token}' as an argument name")));
        }
        i += 1;
    }
    if let Some(a) = def
        .args
        .iter()
        .find(|a| a.required && !ca.0.contains_key(a.name))
    {
        return Err(usage(format!("{}: required argument is missing", a.name)));
    }
    Ok(ca)
}

/// nfdc's list of commands (`nfdc`, `nfdc help`), or of one noun's.
pub(super) fn help_list(noun: &str) -> String {
    let mut s = String::from(
        "nfdc [-h|--help] [-V|--version] [-f|--batch <batch-file>] [<command> [<args>]]\n\n",
    );
    if noun.is_empty() {
        s.push_str("All subcommands:\n");
    } else {
        s.push_str(&format!("Subcommands starting with {noun}:\n"));
    }
    let defs: Vec<&Def> = DEFS
        .iter()
        .filter(|d| noun.is_empty() || d.noun == noun)
        .collect();
    if defs.is_empty() {
        s.push_str("  (none)\n");
        return s;
    }
    for d in defs {
        let pad = 16usize.saturating_sub(d.noun.len() + d.verb.len() + 2);
        s.push_str(&format!(
            "  {} {} {:pad$}{}\n",
            d.noun,
            d.verb,
            "",
            d.title,
            pad = pad
        ));
    }
    s.push_str("\nSee 'nfdc help <command>' to read about a specific subcommand.\n");
    s
}

/// What `nfdc help NOUN` shows in place of the man page nfdc opens (`nfdc-NOUN`): the man
/// page's synopsis, one usage line a command of the noun, the default verb in brackets and
/// the arguments in nfdc's notation (`[name] VALUE` positional, `[name VALUE]` optional
/// named), then the noun's commands as `help_list` lists them. `None` for a noun nfdc does
/// not have.
pub(super) fn help_noun(noun: &str) -> Option<String> {
    let defs: Vec<&Def> = DEFS.iter().filter(|d| d.noun == noun).collect();
    if defs.is_empty() {
        return None;
    }
    let mut s = String::from("Synopsis:\n");
    for d in defs {
        s.push_str(&usage_line(d));
        s.push('\n');
    }
    s.push('\n');
    s.push_str(&help_list(noun));
    Some(s)
}

/// One command's usage line, as nfdc's man pages write it (`nfdc route show [prefix] PREFIX`).
fn usage_line(d: &Def) -> String {
    let mut args = String::new();
    for a in d.args {
        let value = match a.ty {
            Ty::None => String::new(),
            Ty::Bool => "on|off".into(),
            Ty::ReportFormat => "text|xml".into(),
            Ty::FaceUri => "FACEURI".into(),
            Ty::FaceIdOrUri => "FACEID|FACEURI".into(),
            Ty::Persistency => "PERSISTENCY".into(),
            Ty::Origin => "ORIGIN".into(),
            Ty::Unsigned if a.name == "id" => "FACEID".into(),
            Ty::Unsigned | Ty::Str | Ty::Name => a.name.to_uppercase(),
        };
        let one = match (a.ty, a.positional, a.required) {
            (Ty::None, _, _) => format!("[{}]", a.name),
            (_, true, true) => format!("[{}] {value}", a.name),
            (_, true, false) => format!("[[{}] {value}]", a.name),
            (_, false, true) => format!("{} {value}", a.name),
            (_, false, false) => format!("[{} {value}]", a.name),
        };
        args.push(' ');
        args.push_str(&one);
    }
    if default_verb(d.noun) == Some(d.verb) {
        format!("  nfdc {} [{}{args}]", d.noun, d.verb)
    } else {
        format!("  nfdc {} {}{args}", d.noun, d.verb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Result<(&'static str, &'static str, Args), Failure> {
        let t: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        parse(&t).map(|(d, a)| (d.noun, d.verb, a))
    }

    fn err(line: &str) -> String {
        let e = p(line).err().unwrap();
        assert_eq!(e.status, 2, "{line}: {e}");
        e.message
    }

    #[test]
    fn positional_and_named_arguments_as_nfdc() {
        let (_, verb, a) = p("route add /a 300 cost 10 no-inherit origin nlsr")
            .ok()
            .unwrap();
        assert_eq!(verb, "add");
        assert_eq!(a.name("prefix"), Some(&Name::from_uri("/a").unwrap()));
        assert_eq!(a.face("nexthop"), Some(&FaceRef::Id(300)));
        assert_eq!((a.u64("cost"), a.u64("origin")), (Some(10), Some(128)));
        assert!(a.flag("no-inherit") && !a.flag("capture"));
        let (_, _, a) = p("route add prefix /a nexthop udp4://192.0.2.1:6363 expires 5000")
            .ok()
            .unwrap();
        assert_eq!(
            a.face("nexthop"),
            Some(&FaceRef::Uri("udp4://192.0.2.1:6363".into()))
        );
        assert_eq!(a.u64("expires"), Some(5000));
        // The optional positional `persistency`.
        let (_, _, a) = p("face create udp4://192.0.2.1:6363 permanent mtu auto")
            .ok()
            .unwrap();
        assert_eq!(
            a.persistency("persistency"),
            Some(FacePersistency::Permanent)
        );
        assert_eq!(a.str("mtu"), Some("auto"));
        // A noun alone is its default verb.
        assert_eq!(p("route").ok().unwrap().1, "list");
        assert_eq!(p("cs").ok().unwrap().1, "info");
        assert_eq!(p("status").ok().unwrap().1, "show");
        let (_, _, a) = p("cs config admit off serve yes capacity 7").ok().unwrap();
        assert_eq!(
            (a.bool("admit"), a.bool("serve"), a.u64("capacity")),
            (Some(false), Some(true), Some(7))
        );
        assert_eq!(
            p("route list origin 0").ok().unwrap().2.u64("origin"),
            Some(0)
        );
    }

    #[test]
    fn errors_carry_nfdcs_messages() {
        assert_eq!(err("route frob"), "No such command: route frob");
        assert_eq!(err("nope"), "No such command: nope ");
        assert_eq!(err("route add /a"), "nexthop: required argument is missing");
        assert_eq!(err("route add /a 1 cost"), "cost: uint is missing");
        assert_eq!(
            err("route add /a 1 cost -3"),
            "cost: cannot parse '-3' as uint (value '-3' is negative)"
        );
        assert_eq!(
            err("route add /a 1 origin bogus"),
            format!("origin: cannot parse 'bogus' as origin ({BAD_CAST})")
        );
        assert_eq!(
            err("route add /a 1 2"),
            "cannot parse '2' as an argument name"
        );
        assert_eq!(
            err("face show x"),
            format!("cannot parse 'x' as an argument name or as uint for id ({BAD_CAST})")
        );
        assert_eq!(
            err("face create nowhere"),
            "cannot parse 'nowhere' as an argument name or as uri for remote \
             (Malformed URI: nowhere)"
        );
        assert_eq!(
            err("cs config admit maybe"),
            "admit: cannot parse 'maybe' as bool (unrecognized boolean value 'maybe')"
        );
        // A named argument ends the positional ones.
        assert_eq!(
            err("route add prefix /a cost 1 300"),
            "cannot parse '300' as an argument name"
        );
    }

    #[test]
    fn help_lists_every_command() {
        let h = help_list("");
        assert!(h.contains("  route add       add a route\n"), "{h}");
        assert_eq!(
            h.lines().filter(|l| l.starts_with("  ")).count(),
            DEFS.len()
        );
        let r = help_list("strategy");
        assert!(
            r.contains("strategy unset") && !r.contains("route add"),
            "{r}"
        );
        assert!(help_list("bogus").contains("(none)"));
    }

    #[test]
    fn help_of_a_noun_is_its_man_pages_synopsis_then_its_commands() {
        // nfdc-route(1)'s synopsis: the default verb in brackets, positional arguments as
        // `[name] VALUE`, optional named ones as `[name VALUE]`, flags as `[name]`.
        let r = help_noun("route").unwrap();
        let (synopsis, _) = r.split_once("\n\n").unwrap();
        assert_eq!(
            synopsis.lines().collect::<Vec<_>>(),
            [
                "Synopsis:",
                "  nfdc route [list [[nexthop] FACEID|FACEURI] [origin ORIGIN]]",
                "  nfdc route show [prefix] PREFIX",
                "  nfdc route add [prefix] PREFIX [nexthop] FACEID|FACEURI [origin ORIGIN] \
                 [cost COST] [no-inherit] [capture] [expires EXPIRES]",
                "  nfdc route remove [prefix] PREFIX [nexthop] FACEID|FACEURI [origin ORIGIN]",
            ]
        );
        // Then the noun's commands, as nfdc lists them.
        assert_eq!(r, format!("{synopsis}\n\n{}", help_list("route")));
        let f = help_noun("face").unwrap();
        assert!(f.contains("  nfdc face show [id] FACEID\n"), "{f}");
        assert!(
            f.contains("  nfdc face create [remote] FACEURI [[persistency] PERSISTENCY] "),
            "{f}"
        );
        assert!(help_noun("status")
            .unwrap()
            .contains("  nfdc status [show]\n"));
        assert!(help_noun("cs")
            .unwrap()
            .contains("  nfdc cs config [capacity CAPACITY] [admit on|off] [serve on|off]\n"));
        assert_eq!(help_noun("bogus"), None);
    }
}
