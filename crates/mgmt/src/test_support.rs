//! Helpers of the unit tests: command Interests as a client signs them.

use std::sync::atomic::{AtomicU64, Ordering};

use wire::data::signature_type;
use wire::nfd::ControlParameters;
use wire::{tt, Component, Data, Interest, MetaInfo, Name, SignatureInfo};

/// Component 4 of a command name: the ControlParameters.
pub(crate) fn cp_component(p: &ControlParameters) -> Component {
    let mut v = Vec::new();
    p.encode(&mut v);
    Component::generic(v)
}

/// A DigestSha256 SignatureInfo.
pub(crate) fn digest_sig() -> SignatureInfo {
    SignatureInfo {
        signature_type: signature_type::DIGEST_SHA256,
        ..SignatureInfo::default()
    }
}

/// A signing time: the clock's, later than the last one given (as a client signs).
pub(crate) fn signing_time_ms() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    LAST.fetch_max(crate::manager::wall_ms(), Ordering::Relaxed);
    LAST.fetch_add(1, Ordering::Relaxed) + 1
}

/// A v0.3 signed command Interest: `prefix` and the ControlParameters component, signed
/// DigestSha256 now ([`signing_time_ms`]).
pub(crate) fn v03_interest(prefix: &str, cp: Component) -> Vec<u8> {
    let mut sig_info = digest_sig();
    sig_info.nonce = Some(vec![1, 2, 3, 4]);
    sig_info.time_ms = Some(signing_time_ms());
    let mut i = Interest::new(Name::from_uri(prefix).unwrap().with(cp), [9, 9, 9, 9]);
    i.app_params = Some(Vec::new());
    i.signature_info = Some(sig_info);
    i.signature_value = Some(vec![0xAB; 32]);
    i.to_wire()
}

/// A prefix announcement Data of `prefix` (`<prefix>/32=PA/v=7/seg=0`), with this Content and
/// ContentType.
pub(crate) fn pa_data(prefix: &str, content: Vec<u8>, ct: u64) -> Vec<u8> {
    let name = Name::from_uri(prefix)
        .unwrap()
        .with(Component {
            typ: tt::KEYWORD as u16,
            value: b"PA".to_vec(),
        })
        .with(Component::version(7))
        .with(Component::segment(0));
    let mut d = Data::new(name, content);
    d.meta_info = Some(MetaInfo {
        content_type: Some(ct),
        freshness_ms: None,
        final_block_id: None,
    });
    d.sign_digest_sha256();
    d.to_wire()
}

/// A v0.3 signed `rib/announce` Interest under `prefix` carrying `app_params`.
pub(crate) fn announce_interest(prefix: &str, app_params: Vec<u8>, signed: bool) -> Vec<u8> {
    let mut i = Interest::new(Name::from_uri(prefix).unwrap(), [7, 7, 7, 7]);
    i.app_params = Some(app_params);
    if signed {
        i.signature_info = Some(digest_sig());
        i.signature_value = Some(vec![0xAB; 32]);
    }
    i.to_wire()
}
