//! Helpers of the unit tests: command Interests as a client signs them.

use wire::data::signature_type;
use wire::nfd::ControlParameters;
use wire::{Component, Interest, Name, SignatureInfo};

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

/// A v0.3 signed command Interest: `prefix` and the ControlParameters component.
pub(crate) fn v03_interest(prefix: &str, cp: Component) -> Vec<u8> {
    let mut sig_info = digest_sig();
    sig_info.nonce = Some(vec![1, 2, 3, 4]);
    sig_info.time_ms = Some(1_700_000_000_000);
    let mut i = Interest::new(Name::from_uri(prefix).unwrap().with(cp), [9, 9, 9, 9]);
    i.app_params = Some(Vec::new());
    i.signature_info = Some(sig_info);
    i.signature_value = Some(vec![0xAB; 32]);
    i.to_wire()
}
