//! Signed Interests as a verifier reads them, in both forms ndn-cxx signs command Interests in:
//!
//! - packet format v0.3: `ApplicationParameters`, `InterestSignatureInfo` (0x2c, whose
//!   SignatureTime 0x28 the command-Interest rules need) and `InterestSignatureValue` (0x2e),
//!   the name ending in a ParametersSha256DigestComponent; the signed portion is the name's
//!   components before that digest, then everything from ApplicationParameters to the end of
//!   InterestSignatureInfo;
//! - the older command Interest: four name components after the command, namely a timestamp
//!   (milliseconds since the Unix epoch, a NonNegativeInteger), a random nonce, a SignatureInfo
//!   TLV and a SignatureValue TLV; the signed portion is the name's components but the last.
//!
//! [`SignedInterestView::of`] finds which form an Interest is in and reads what a verifier needs,
//! in the order ndn-cxx's command-Interest policy reads it: first the time (an Interest without
//! one is refused as the policy refuses it), then the SignatureInfo (one that cannot be read is
//! a malformed signature). Verifying the signature against a key is the caller's part.

use crate::data::SignatureInfoView;
use crate::interest::InterestView;
use crate::tlv::Reader;
use crate::{tt, Limits};

/// Which of the two forms a signed Interest is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedForm {
    /// Packet format v0.3: InterestSignatureInfo and InterestSignatureValue.
    V03,
    /// The older command Interest: timestamp, nonce, SignatureInfo and SignatureValue as the
    /// last four name components.
    Old,
}

/// Why an Interest cannot be read as a signed command Interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedError {
    /// No signing time: no SignatureTime (v0.3), or a name too short for the old form or whose
    /// timestamp component is no NonNegativeInteger (ndn-cxx: a policy error).
    NoTime,
    /// The old form's SignatureInfo component is no SignatureInfo (ndn-cxx: a malformed
    /// signature or an invalid KeyLocator).
    Malformed,
}

/// Number of name components the old form appends: timestamp, nonce, SignatureInfo and
/// SignatureValue.
pub const OLD_FORM_COMPONENTS: usize = 4;

/// A signed Interest as its verifier needs it.
#[derive(Debug, Clone, Copy)]
pub struct SignedInterestView<'a> {
    /// The form it is signed in.
    pub form: SignedForm,
    /// Its SignatureInfo (InterestSignatureInfo in v0.3, the name component in the old form).
    pub info: SignatureInfoView<'a>,
    /// The signed portion, in two pieces to be read one after the other (the second is empty
    /// in the old form).
    pub signed: [&'a [u8]; 2],
    /// The signature's bits: InterestSignatureValue's value (v0.3), the SignatureValue
    /// component's value (old form); `None` when absent or not a TLV.
    pub value: Option<&'a [u8]>,
    /// When it was signed, in milliseconds since the Unix epoch: SignatureTime (v0.3) or the
    /// timestamp component (old form).
    pub time_ms: u64,
}

impl<'a> SignedInterestView<'a> {
    /// Reads `interest` as a signed command Interest: v0.3 when it carries an
    /// InterestSignatureInfo, the old form otherwise.
    pub fn of(interest: &InterestView<'a>) -> Result<Self, SignedError> {
        let name = interest.name();
        match interest.signature_info() {
            Some(info) => {
                let time_ms = info.time_ms.ok_or(SignedError::NoTime)?;
                // The components before the first ParametersSha256DigestComponent.
                let mut end = name.value().len();
                let mut r = Reader::new(name.value());
                while let Some(Ok(c)) = r.next_element() {
                    if c.typ == tt::PARAMETERS_SHA256_DIGEST {
                        end = c.offset;
                        break;
                    }
                }
                Ok(SignedInterestView {
                    form: SignedForm::V03,
                    info,
                    signed: [
                        &name.value()[..end],
                        interest.signed_parameters().unwrap_or_default(),
                    ],
                    value: interest.signature_value(),
                    time_ms,
                })
            }
            None => {
                let n = name.len();
                if n < OLD_FORM_COMPONENTS {
                    return Err(SignedError::NoTime);
                }
                let time_ms = name
                    .get(n - OLD_FORM_COMPONENTS)
                    .and_then(|c| c.as_number())
                    .ok_or(SignedError::NoTime)?;
                let info_comp = name.get(n - 2).ok_or(SignedError::Malformed)?;
                let info = single(info_comp.value, tt::SIGNATURE_INFO)
                    .and_then(|e| SignatureInfoView::from_element(e, &Limits::default()).ok())
                    .ok_or(SignedError::Malformed)?;
                let value_comp = name.get(n - 1).ok_or(SignedError::Malformed)?;
                // Where the last component starts in the name's value.
                let mut r = Reader::new(name.value());
                let mut last_start = 0;
                while let Some(Ok(c)) = r.next_element() {
                    last_start = c.offset;
                }
                Ok(SignedInterestView {
                    form: SignedForm::Old,
                    info,
                    signed: [&name.value()[..last_start], &[]],
                    value: single(value_comp.value, tt::SIGNATURE_VALUE).map(|e| e.value),
                    time_ms,
                })
            }
        }
    }
}

/// The one TLV element of type `typ` that fills `buf`.
fn single(buf: &[u8], typ: u32) -> Option<crate::tlv::Element<'_>> {
    let mut r = Reader::new(buf);
    let e = r.read().ok().filter(|e| e.typ == typ)?;
    r.is_empty().then_some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{signature_type, KeyLocator, SignatureInfo};
    use crate::{Component, Interest, Name};

    fn sig_info(time_ms: Option<u64>) -> SignatureInfo {
        SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(Name::from_uri("/op/KEY/k").unwrap())),
            time_ms,
            ..SignatureInfo::default()
        }
    }

    fn decode(i: &Interest) -> Vec<u8> {
        let mut out = Vec::new();
        i.encode(&mut out);
        out
    }

    #[test]
    fn v03_signed_portion_skips_the_digest_and_the_value() {
        let info = sig_info(Some(1_700_000_000_000));
        let mut i = Interest::new(
            Name::from_uri("/localhost/nfd/rib/register").unwrap(),
            [1; 4],
        );
        i.app_params = Some(vec![7, 7]);
        i.signature_info = Some(info);
        i.signature_value = Some(vec![9; 8]);
        let wire = decode(&i);
        let v = InterestView::decode(&wire, &Limits::default()).unwrap();
        let s = SignedInterestView::of(&v).unwrap();
        assert_eq!(s.form, SignedForm::V03);
        assert_eq!(s.time_ms, 1_700_000_000_000);
        assert_eq!(s.value, Some(&[9u8; 8][..]));
        let mut expect = Vec::new();
        for c in &Name::from_uri("/localhost/nfd/rib/register")
            .unwrap()
            .components
        {
            c.encode(&mut expect);
        }
        assert_eq!(s.signed[0], &expect[..]);
        let p = s.signed[1];
        assert_eq!(p[0] as u32, tt::APPLICATION_PARAMETERS);
        assert!(wire.windows(p.len()).any(|w| w == p));
        assert!(
            !p.windows(8).any(|w| w == [9; 8]),
            "the value is not signed"
        );
    }

    #[test]
    fn v03_without_signature_time_has_no_time() {
        let mut i = Interest::new(Name::from_uri("/localhost/nfd/cs/config").unwrap(), [1; 4]);
        i.app_params = Some(Vec::new());
        i.signature_info = Some(sig_info(None));
        i.signature_value = Some(vec![1]);
        let wire = decode(&i);
        let v = InterestView::decode(&wire, &Limits::default()).unwrap();
        assert_eq!(SignedInterestView::of(&v).unwrap_err(), SignedError::NoTime);
    }

    fn old_form(info: Vec<u8>, time: Component) -> Vec<u8> {
        let mut value = Vec::new();
        crate::tlv::write_tlv(&mut value, tt::SIGNATURE_VALUE, &[5; 4]);
        let name = Name::from_uri("/localhost/nfd/fib/add-nexthop/x")
            .unwrap()
            .with(time)
            .with(Component::generic(vec![3; 8]))
            .with(Component::generic(info))
            .with(Component::generic(value));
        decode(&Interest::new(name, [2; 4]))
    }

    #[test]
    fn old_form_reads_the_last_four_components() {
        let mut info = Vec::new();
        sig_info(None).encode(&mut info, tt::SIGNATURE_INFO);
        let wire = old_form(info, Component::number(tt::GENERIC_COMPONENT as u16, 1234));
        let v = InterestView::decode(&wire, &Limits::default()).unwrap();
        let s = SignedInterestView::of(&v).unwrap();
        assert_eq!(s.form, SignedForm::Old);
        assert_eq!(s.time_ms, 1234);
        assert_eq!(s.value, Some(&[5u8; 4][..]));
        assert!(s.signed[1].is_empty());
        let name = v.name();
        let last = name.last().unwrap();
        let signed_len = name.value().len() - (2 + last.value.len());
        assert_eq!(s.signed[0], &name.value()[..signed_len]);
    }

    #[test]
    fn old_form_without_timestamp_or_signature_info() {
        let garbage = old_form(vec![1, 2, 3], Component::number(8, 1));
        let v = InterestView::decode(&garbage, &Limits::default()).unwrap();
        assert_eq!(
            SignedInterestView::of(&v).unwrap_err(),
            SignedError::Malformed
        );
        let no_time = old_form(Vec::new(), Component::generic(b"abc".to_vec()));
        let v = InterestView::decode(&no_time, &Limits::default()).unwrap();
        assert_eq!(SignedInterestView::of(&v).unwrap_err(), SignedError::NoTime);
        let short = decode(&Interest::new(Name::from_uri("/a/b").unwrap(), [0; 4]));
        let v = InterestView::decode(&short, &Limits::default()).unwrap();
        assert_eq!(SignedInterestView::of(&v).unwrap_err(), SignedError::NoTime);
    }

    #[test]
    fn every_one_bit_change_reads_or_fails_without_panic() {
        let mut info = Vec::new();
        sig_info(Some(9)).encode(&mut info, tt::SIGNATURE_INFO);
        let mut v03 = Interest::new(Name::from_uri("/localhost/nfd/a/b").unwrap(), [1; 4]);
        v03.app_params = Some(vec![1]);
        v03.signature_info = Some(sig_info(Some(9)));
        v03.signature_value = Some(vec![2; 16]);
        for packet in [old_form(info, Component::number(8, 7)), decode(&v03)] {
            let mut read = 0;
            for i in 0..packet.len() * 8 {
                let mut p = packet.clone();
                p[i / 8] ^= 1 << (i % 8);
                if let Ok(v) = InterestView::decode(&p, &Limits::default()) {
                    read += usize::from(SignedInterestView::of(&v).is_ok());
                }
            }
            assert!(read > 0);
        }
    }
}
