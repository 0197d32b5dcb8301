//! Control commands: parsing, authorization and the answer.
//!
//! [`parse_command`] turns a command Interest (`/localhost/nfd/<module>/<verb>/<ControlParameters>`
//! plus a signature, in either signed-Interest form) into a [`Command`], or into the
//! [`ControlResponse`] to send back; [`response_data`] wraps a ControlResponse into the Data that
//! answers the command. Signatures are not verified here: [`crate::auth`] judges a
//! `/localhost` command's signature (NFD's default configuration accepts any command, signed or
//! not), and a `/localhop/nfd/rib` one's with NFD's `localhop_security`
//! ([`crate::auth::Authorizations::localhop`]); a `/localhop` command must carry one.

use wire::data::{content_type, SignatureInfoView};
use wire::nfd::{ControlParameters, ControlResponse};
use wire::tlv::Reader;
use wire::{tt, ComponentView, Data, InterestView, Limits, MetaInfo, Name};

/// Index of the ControlParameters component in a command name.
pub const PARAMETERS_INDEX: usize = 4;

/// StatusCode and StatusText used by this crate (texts follow NFD where it has a fixed one).
pub mod status {
    /// 200: the command succeeded.
    pub const OK: (u64, &str) = (200, "OK");
    /// 400: the name or the ControlParameters could not be parsed, or are invalid for the verb.
    pub const MALFORMED: (u64, &str) = (400, "Malformed command");
    /// 403: the command came through the wrong scope, or carries no parsable signature (NFD's
    /// dispatcher's words).
    pub const UNAUTHORIZED: (u64, &str) = (403, "authorization rejected");
    /// 404: the command refers to something that does not exist (a face, a route, ...).
    pub const NOT_FOUND: (u64, &str) = (404, "Not found");
    /// 501: unknown module or verb.
    pub const UNSUPPORTED: (u64, &str) = (501, "Unknown command");
}

/// 200 "OK" echoing `params` (ndn-cxx wants Name, FaceId, Origin, Cost and Flags echoed).
pub fn ok(params: ControlParameters) -> ControlResponse {
    ControlResponse::with_parameters(status::OK.0, status::OK.1, params)
}

/// 400 "Malformed command".
pub fn malformed() -> ControlResponse {
    ControlResponse::new(status::MALFORMED.0, status::MALFORMED.1)
}

/// 403 "authorization rejected".
pub fn unauthorized() -> ControlResponse {
    ControlResponse::new(status::UNAUTHORIZED.0, status::UNAUTHORIZED.1)
}

/// 404 "Not found".
pub fn not_found() -> ControlResponse {
    ControlResponse::new(status::NOT_FOUND.0, status::NOT_FOUND.1)
}

/// 501 "Unknown command" (unknown module or verb).
pub fn unsupported() -> ControlResponse {
    ControlResponse::new(status::UNSUPPORTED.0, status::UNSUPPORTED.1)
}

/// A parsed control command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Module: `rib`, `faces`, `fib`, `cs`, `strategy-choice`, ...
    pub module: String,
    /// Verb: `register`, `unregister`, `create`, `add-nexthop`, ...
    pub verb: String,
    /// The ControlParameters from name component 4 (empty for `rib/announce`, whose
    /// parameters are the Interest's ApplicationParameters).
    pub params: ControlParameters,
    /// The ApplicationParameters of `rib/announce` (the prefix announcement), else `None`.
    pub app_params: Option<Vec<u8>>,
}

/// Which management prefix a name starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Localhost,
    Localhop,
}

fn generic_str<'a>(c: &ComponentView<'a>) -> Option<&'a str> {
    if u32::from(c.typ) != tt::GENERIC_COMPONENT {
        return None;
    }
    core::str::from_utf8(c.value).ok()
}

/// The scope rule: `/localhost/nfd` and `/localhop/nfd` are both accepted from local faces;
/// from a non-local face, only `/localhop/nfd/rib/...` and only where `remote_rib` allows it
/// (NFD serves `/localhop/nfd/rib` to its neighbours when `localhop_security` is configured).
fn scope_allows(scope: Scope, module: &str, from_local_face: bool, remote_rib: bool) -> bool {
    from_local_face || (scope == Scope::Localhop && remote_rib && module == "rib")
}

/// True if the element that fills `buf` is a TLV of type `typ` whose value is a parsable
/// SignatureInfo.
fn parses_as_signature_info(buf: &[u8], typ: u32) -> bool {
    let mut r = Reader::new(buf);
    match r.read() {
        Ok(e) if e.typ == typ && r.is_empty() => {
            SignatureInfoView::from_element(e, &Limits::default()).is_ok()
        }
        _ => false,
    }
}

/// True if `buf` is exactly one TLV element of type `typ`.
fn is_single_tlv(buf: &[u8], typ: u32) -> bool {
    let mut r = Reader::new(buf);
    matches!(r.read(), Ok(e) if e.typ == typ) && r.is_empty()
}

/// Parses a control command Interest.
///
/// Accepted names are `/localhost/nfd/<module>/<verb>/<ControlParameters>/...` and
/// `/localhop/nfd/...`, where component 4 is a generic component whose value is the
/// ControlParameters TLV. A `/localhop` command must be signed, in either form (parsed here,
/// verified by [`crate::auth`], as a `/localhost` one):
/// - v0.3 signed Interest: ParametersSha256Digest in the name, ApplicationParameters,
///   InterestSignatureInfo and InterestSignatureValue;
/// - the older form: four components after the ControlParameters, namely timestamp, nonce,
///   SignatureInfo (a SignatureInfo TLV) and SignatureValue (a SignatureValue TLV).
///
/// Errors, as the ControlResponse to send back:
/// - 403 ([`unauthorized`]): the command arrived on a non-local face (either prefix), or is a
///   `/localhop` command with no parsable signature in either form;
/// - 400 ([`malformed`]): anything wrong with the name or the ControlParameters.
pub fn parse_command(
    interest: &InterestView<'_>,
    from_local_face: bool,
) -> Result<Command, ControlResponse> {
    parse_command_with(interest, from_local_face, false)
}

/// [`parse_command`], also accepting `/localhop/nfd/rib/...` from a non-local face when
/// `remote_rib` is set (NFD's `localhop_security`). `rib/announce` carries no ControlParameters
/// component: its name is `/localhost/nfd/rib/announce` and a ParametersSha256Digest, the
/// announcement is in the ApplicationParameters ([`Command::app_params`]), and it must be a
/// v0.3 signed Interest.
pub fn parse_command_with(
    interest: &InterestView<'_>,
    from_local_face: bool,
    remote_rib: bool,
) -> Result<Command, ControlResponse> {
    let name = interest.name();
    let comps: Vec<ComponentView<'_>> = name.components().collect();
    let scope = match comps.first().and_then(generic_str) {
        Some("localhost") => Scope::Localhost,
        Some("localhop") => Scope::Localhop,
        _ => return Err(malformed()),
    };
    let module_text = comps.get(2).and_then(generic_str).unwrap_or("");
    if !scope_allows(scope, module_text, from_local_face, remote_rib) {
        return Err(unauthorized());
    }
    if comps.get(1).and_then(generic_str) != Some("nfd") || comps.len() <= PARAMETERS_INDEX {
        return Err(malformed());
    }
    let module = comps.get(2).and_then(generic_str).filter(|s| !s.is_empty());
    let verb = comps.get(3).and_then(generic_str).filter(|s| !s.is_empty());
    let (Some(module), Some(verb)) = (module, verb) else {
        return Err(malformed());
    };
    let v03_signed = interest.signature_info().is_some()
        && interest.signature_value().is_some()
        && name.params_digest_count() == 1;
    if (module, verb) == ("rib", "announce") {
        if !v03_signed {
            return Err(unauthorized());
        }
        return Ok(Command {
            module: module.to_owned(),
            verb: verb.to_owned(),
            params: ControlParameters::default(),
            app_params: interest.app_params().map(<[u8]>::to_vec),
        });
    }
    let cp = &comps[PARAMETERS_INDEX];
    if u32::from(cp.typ) != tt::GENERIC_COMPONENT {
        return Err(malformed());
    }
    let params = ControlParameters::decode(cp.value).map_err(|_| malformed())?;

    let n = comps.len();
    let old_signed = n == PARAMETERS_INDEX + 5
        && parses_as_signature_info(comps[n - 2].value, tt::SIGNATURE_INFO)
        && is_single_tlv(comps[n - 1].value, tt::SIGNATURE_VALUE);
    // Under /localhost the authorizations judge the signature ([`crate::auth`]).
    if scope == Scope::Localhop && !v03_signed && !old_signed {
        return Err(unauthorized());
    }
    Ok(Command {
        module: module.to_owned(),
        verb: verb.to_owned(),
        params,
        app_params: None,
    })
}

/// The Data answering a command: named exactly as the command Interest, FreshnessPeriod
/// [`FRESHNESS_MS`](crate::FRESHNESS_MS), Content = the ControlResponse TLV, signed DigestSha256.
pub fn response_data(command_interest_name: &Name, resp: &ControlResponse) -> Vec<u8> {
    let mut content = Vec::new();
    resp.encode(&mut content);
    crate::signed_data(command_interest_name.clone(), content, None)
}

/// The Data refusing a dataset request, as ndn-cxx's dispatcher refuses one: named as the
/// Interest, ContentType Nack (3), Content = the ControlResponse TLV, FreshnessPeriod
/// [`FRESHNESS_MS`](crate::FRESHNESS_MS), signed DigestSha256.
pub fn nack_data(interest_name: &Name, resp: &ControlResponse) -> Vec<u8> {
    let mut content = Vec::new();
    resp.encode(&mut content);
    let mut d = Data::new(interest_name.clone(), content);
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::NACK),
        freshness_ms: Some(crate::FRESHNESS_MS),
        final_block_id: None,
    });
    d.sign_digest_sha256();
    d.to_wire()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cp_component, digest_sig, v03_interest};
    use crate::FRESHNESS_MS;
    use wire::{Component, DataView, Interest};

    fn register_params() -> ControlParameters {
        ControlParameters {
            name: Some(Name::from_uri("/example/app").unwrap()),
            face_id: Some(0),
            origin: Some(0),
            cost: Some(0),
            flags: Some(1),
            ..ControlParameters::default()
        }
    }

    fn old_interest(prefix: &str, cp: Component) -> Vec<u8> {
        let mut si = Vec::new();
        digest_sig().encode(&mut si, tt::SIGNATURE_INFO);
        let mut sv = Vec::new();
        wire::tlv::write_tlv(&mut sv, tt::SIGNATURE_VALUE, &[0xCD; 32]);
        let name = Name::from_uri(prefix)
            .unwrap()
            .with(cp)
            .with(Component::number(
                tt::GENERIC_COMPONENT as u16,
                1_700_000_000_000,
            ))
            .with(Component::generic(vec![1, 2, 3, 4, 5, 6, 7, 8]))
            .with(Component::generic(si))
            .with(Component::generic(sv));
        Interest::new(name, [1, 2, 3, 4]).to_wire()
    }

    fn parse(buf: &[u8], local: bool) -> Result<Command, ControlResponse> {
        let v = InterestView::decode(buf, &Limits::default()).unwrap();
        parse_command(&v, local)
    }

    fn code(r: Result<Command, ControlResponse>) -> u64 {
        r.unwrap_err().status_code
    }

    #[test]
    fn v03_signed_command() {
        let p = register_params();
        let w = v03_interest("/localhost/nfd/rib/register", cp_component(&p));
        let c = parse(&w, true).unwrap();
        assert_eq!(c.module, "rib");
        assert_eq!(c.verb, "register");
        assert_eq!(c.params, p);
    }

    #[test]
    fn old_signed_command() {
        let p = register_params();
        let w = old_interest("/localhost/nfd/rib/unregister", cp_component(&p));
        let c = parse(&w, true).unwrap();
        assert_eq!(c.module, "rib");
        assert_eq!(c.verb, "unregister");
        assert_eq!(c.params, p);
        // /localhop from a local face is accepted too.
        let w = old_interest("/localhop/nfd/faces/create", cp_component(&p));
        let c = parse(&w, true).unwrap();
        assert_eq!((c.module.as_str(), c.verb.as_str()), ("faces", "create"));
    }

    #[test]
    fn missing_or_garbage_parameters_is_400() {
        // No ControlParameters component at all (old-form signature directly after the verb
        // would put it at index 4, so use a v0.3 Interest with a short name).
        let mut i = Interest::new(
            Name::from_uri("/localhost/nfd/rib/register").unwrap(),
            [0; 4],
        );
        i.app_params = Some(Vec::new());
        i.signature_info = Some(digest_sig());
        i.signature_value = Some(vec![0; 32]);
        // The name gets a ParametersSha256Digest at index 4: not a generic component.
        assert_eq!(code(parse(&i.to_wire(), true)), 400);
        let w = Interest::new(Name::from_uri("/localhost/nfd/rib").unwrap(), [0; 4]).to_wire();
        assert_eq!(code(parse(&w, true)), 400);
        // Garbage in component 4.
        let w = v03_interest(
            "/localhost/nfd/rib/register",
            Component::generic(vec![1, 2, 3]),
        );
        assert_eq!(code(parse(&w, true)), 400);
        // A well-formed TLV of the wrong type.
        let w = v03_interest(
            "/localhost/nfd/rib/register",
            Component::generic(vec![7, 0]),
        );
        assert_eq!(code(parse(&w, true)), 400);
        // Not a management prefix.
        let w = v03_interest(
            "/localhost/xyz/rib/register",
            cp_component(&register_params()),
        );
        assert_eq!(code(parse(&w, true)), 400);
    }

    #[test]
    fn non_local_faces_are_refused_403() {
        let p = register_params();
        let w = v03_interest("/localhost/nfd/rib/register", cp_component(&p));
        assert_eq!(code(parse(&w, false)), 403);
        let w = v03_interest("/localhop/nfd/rib/register", cp_component(&p));
        assert_eq!(code(parse(&w, false)), 403);
        let w = old_interest("/localhop/nfd/rib/register", cp_component(&p));
        assert_eq!(code(parse(&w, false)), 403);
        assert!(parse(&w, true).is_ok());
    }

    #[test]
    fn unsigned_command_is_left_to_the_authorizations_under_localhost_only() {
        let unsigned = |prefix: &str| {
            let name = Name::from_uri(prefix)
                .unwrap()
                .with(cp_component(&register_params()));
            Interest::new(name, [0; 4]).to_wire()
        };
        assert!(parse(&unsigned("/localhost/nfd/rib/register"), true).is_ok());
        assert_eq!(
            code(parse(&unsigned("/localhop/nfd/rib/register"), true)),
            403
        );
    }

    #[test]
    fn response_data_round_trips() {
        let p = register_params();
        let w = v03_interest("/localhost/nfd/rib/register", cp_component(&p));
        let iv = InterestView::decode(&w, &Limits::default()).unwrap();
        let cmd = parse_command(&iv, true).unwrap();
        let iname = iv.name().to_name();
        for resp in [
            ok(cmd.params.clone()),
            malformed(),
            unauthorized(),
            not_found(),
            unsupported(),
        ] {
            let d = response_data(&iname, &resp);
            let dv = DataView::decode(&d, &Limits::default()).unwrap();
            assert_eq!(dv.name().to_name(), iname);
            assert_eq!(dv.freshness_ms(), Some(FRESHNESS_MS));
            assert!(dv.verify_digest_sha256());
            let back = ControlResponse::decode(dv.content().unwrap()).unwrap();
            assert_eq!(back, resp);
        }
        let back = ControlResponse::decode(
            DataView::decode(&response_data(&iname, &ok(p.clone())), &Limits::default())
                .unwrap()
                .content()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(back.status_code, 200);
        assert_eq!(back.status_text, "OK");
        assert_eq!(back.parameters(), Some(&p));
    }
}
