//! The management client: NFD control commands and status datasets.
//!
//! **Commands.** [`command_interest`] builds `/localhost/nfd/<module>/<verb>/<ControlParameters>`
//! as a v0.3 signed Interest: empty ApplicationParameters, InterestSignatureInfo with
//! SignatureType DigestSha256, a SignatureNonce and a SignatureTime (NFD's command-Interest
//! validator wants the time), and InterestSignatureValue = SHA-256 of the signed portion (the
//! name's components without the ParametersSha256DigestComponent, then ApplicationParameters and
//! InterestSignatureInfo). NFD's default configuration accepts such commands from local faces.
//! [`Controller::with_signer`] signs them with a key of the key chain instead
//! ([`mgmt::keychain`]: SignatureSha256WithEcdsa or WithRsa, KeyLocator the key name).
//! The answer is a Data whose Content is a ControlResponse; a StatusCode other than 200 is
//! [`Error::Command`].
//!
//! **Datasets.** [`Controller::dataset`] sends an Interest for the dataset name with CanBePrefix
//! and MustBeFresh, takes the version from the answer (`<name>/v=<version>/seg=<n>`), fetches the
//! remaining segments up to FinalBlockId and concatenates their contents.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wire::data::signature_type;
use wire::nfd::{
    decode_dataset, ControlParameters, ControlResponse, CsInfo, FaceStatus, FibEntry,
    ForwarderStatus, RibEntry, StrategyChoice,
};
use wire::{sha256, tlv, tt, Component, Interest, Name, SignatureInfo};

pub use mgmt::keychain::Signer;
pub use mgmt::{CsTierInfo, NbCacheInfo};

use crate::error::{Error, Result};
use crate::face::{DataPacket, Face, Outcome};

/// The management prefix for local faces.
pub const LOCALHOST_NFD: &str = "/localhost/nfd";

/// Default time to wait for a command's or a dataset segment's answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(4);

/// Most segments a dataset may have.
pub const MAX_DATASET_SEGMENTS: u64 = 4096;

/// Route origin of applications (`rib/register` from a producer).
pub const ORIGIN_APP: u64 = 0;

/// Route origin of static routes (nfdc's default for `route add`).
pub const ORIGIN_STATIC: u64 = 255;

/// The SignatureTime of the next command: the current time in milliseconds since the Unix
/// epoch, but always above the previous command's (NFD's command validator rejects a time not
/// above the last one it accepted from the same key, and every DigestSha256 command shares one).
pub fn command_time_ms() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = crate::unix_time_ms();
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let t = now.max(last + 1);
        match LAST.compare_exchange_weak(last, t, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return t,
            Err(seen) => last = seen,
        }
    }
}

/// Builds a signed command Interest for `/localhost/nfd/<module>/<verb>` with `params`, at
/// `time_ms` (SignatureTime, ms since the Unix epoch), with SignatureNonce `sig_nonce` and
/// Interest Nonce `nonce`. See the [module docs](self) for the form.
pub fn command_interest(
    module: &str,
    verb: &str,
    params: &ControlParameters,
    time_ms: u64,
    sig_nonce: [u8; 8],
    nonce: [u8; 4],
) -> Interest {
    let mut cp = Vec::new();
    params.encode(&mut cp);
    let name = Name::from_uri(LOCALHOST_NFD)
        .unwrap_or_default()
        .with_str(module)
        .with_str(verb)
        .with(Component::generic(cp));
    let sig_info = SignatureInfo {
        signature_type: signature_type::DIGEST_SHA256,
        nonce: Some(sig_nonce.to_vec()),
        time_ms: Some(time_ms),
        ..SignatureInfo::default()
    };
    let app_params: Vec<u8> = Vec::new();
    let mut signed = Vec::new();
    for c in &name.components {
        c.encode(&mut signed);
    }
    tlv::write_tlv(&mut signed, tt::APPLICATION_PARAMETERS, &app_params);
    sig_info.encode(&mut signed, tt::INTEREST_SIGNATURE_INFO);
    Interest {
        name,
        nonce: Some(nonce),
        app_params: Some(app_params),
        signature_info: Some(sig_info),
        signature_value: Some(sha256(&[&signed]).to_vec()),
        ..Interest::default()
    }
}

/// Talks NFD's management protocol over a [`Face`].
#[derive(Debug)]
pub struct Controller<'f> {
    face: &'f mut Face,
    timeout: Duration,
    signer: Option<&'f Signer>,
}

impl<'f> Controller<'f> {
    /// A controller on `face`, waiting [`DEFAULT_TIMEOUT`] for each answer.
    pub fn new(face: &'f mut Face) -> Self {
        Controller {
            face,
            timeout: DEFAULT_TIMEOUT,
            signer: None,
        }
    }

    /// Signs the commands with `signer` (a key of the key chain, [`mgmt::keychain`]) instead of
    /// DigestSha256 (`None`).
    pub fn with_signer(mut self, signer: Option<&'f Signer>) -> Self {
        self.signer = signer;
        self
    }

    /// Sets how long to wait for each answer.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn lifetime_ms(&self) -> u64 {
        self.timeout.as_millis().clamp(1, u128::from(u32::MAX)) as u64
    }

    /// Sends a command and returns the ControlResponse as it came, whatever its StatusCode.
    pub fn command_response(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
    ) -> Result<ControlResponse> {
        let mut sig_nonce = [0u8; 8];
        crate::fill_random(&mut sig_nonce);
        let mut i = command_interest(
            module,
            verb,
            params,
            command_time_ms(),
            sig_nonce,
            crate::random_nonce(),
        );
        i.lifetime_ms = Some(self.lifetime_ms());
        if let Some(s) = self.signer {
            let mut info = s.signature_info();
            info.nonce = Some(sig_nonce.to_vec());
            info.time_ms = i.signature_info.as_ref().and_then(|d| d.time_ms);
            s.sign_interest(&mut i, info).map_err(Error::Protocol)?;
        }
        let what = format!("{module}/{verb}");
        match self.face.express(&i)? {
            Outcome::Data(d) => ControlResponse::decode(d.content()).map_err(|e| {
                Error::Protocol(format!(
                    "the answer to {what} is not a ControlResponse: {e}"
                ))
            }),
            Outcome::Nack(n) => Err(Error::Nack {
                name: Name::from_uri(LOCALHOST_NFD)
                    .unwrap_or_default()
                    .with_str(module)
                    .with_str(verb),
                reason: n.reason,
            }),
            Outcome::Timeout => Err(Error::Timeout(format!(
                "no answer to {what} from {}",
                self.face.remote()
            ))),
        }
    }

    /// Sends a command; on StatusCode 200 returns the ControlParameters of the answer (empty
    /// when it carried none), otherwise [`Error::Command`].
    pub fn command(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
    ) -> Result<ControlParameters> {
        let r = self.command_response(module, verb, params)?;
        if r.status_code != 200 {
            return Err(Error::Command {
                code: r.status_code,
                text: r.status_text,
            });
        }
        Ok(r.parameters().cloned().unwrap_or_default())
    }

    /// Fetches a status dataset (e.g. `/localhost/nfd/faces/list`) and returns its content:
    /// all segments of the newest version, concatenated.
    pub fn dataset(&mut self, name: &Name) -> Result<Vec<u8>> {
        let mut first = Interest::new(name.clone(), crate::random_nonce());
        first.can_be_prefix = true;
        first.must_be_fresh = true;
        first.lifetime_ms = Some(self.lifetime_ms());
        let d = self.face.fetch(&first)?;
        let bad = |why: &str| Error::Protocol(format!("dataset {name}: {why}"));
        let seg = d
            .segment()
            .ok_or_else(|| bad("the answer is not a segment"))?;
        let versioned = d.name.prefix(d.name.len() - 1);
        if versioned.len() != name.len() + 1 || !name.is_prefix_of(&versioned) {
            return Err(bad("the answer is not named <dataset>/<version>/<segment>"));
        }
        let last = d.final_segment().ok_or_else(|| bad("no FinalBlockId"))?;
        if last >= MAX_DATASET_SEGMENTS {
            return Err(bad("more segments than the limit"));
        }
        if seg > last {
            return Err(bad("a segment beyond FinalBlockId"));
        }
        let mut segments: Vec<Option<DataPacket>> = vec![None; last as usize + 1];
        segments[seg as usize] = Some(d);
        for s in 0..=last {
            if segments[s as usize].is_some() {
                continue;
            }
            let mut i = Interest::new(
                versioned.clone().with(Component::segment(s)),
                crate::random_nonce(),
            );
            i.lifetime_ms = Some(self.lifetime_ms());
            segments[s as usize] = Some(self.face.fetch(&i)?);
        }
        let mut out = Vec::new();
        for d in segments.iter().flatten() {
            out.extend_from_slice(d.content());
        }
        Ok(out)
    }

    fn dataset_at(&mut self, suffix: &str) -> Result<Vec<u8>> {
        let name = Name::from_uri(&format!("{LOCALHOST_NFD}/{suffix}"))
            .map_err(|e| Error::Config(e.to_string()))?;
        self.dataset(&name)
    }

    /// `status/general`.
    pub fn forwarder_status(&mut self) -> Result<ForwarderStatus> {
        let c = self.dataset_at("status/general")?;
        ForwarderStatus::decode(&c).map_err(|e| Error::Protocol(format!("status/general: {e}")))
    }

    /// `faces/list`.
    pub fn faces(&mut self) -> Result<Vec<FaceStatus>> {
        let c = self.dataset_at("faces/list")?;
        decode_dataset(&c, FaceStatus::from_element)
            .map_err(|e| Error::Protocol(format!("faces/list: {e}")))
    }

    /// `fib/list`.
    pub fn fib(&mut self) -> Result<Vec<FibEntry>> {
        let c = self.dataset_at("fib/list")?;
        decode_dataset(&c, FibEntry::from_element)
            .map_err(|e| Error::Protocol(format!("fib/list: {e}")))
    }

    /// `rib/list`.
    pub fn rib(&mut self) -> Result<Vec<RibEntry>> {
        let c = self.dataset_at("rib/list")?;
        decode_dataset(&c, RibEntry::from_element)
            .map_err(|e| Error::Protocol(format!("rib/list: {e}")))
    }

    /// `cs/info`.
    pub fn cs_info(&mut self) -> Result<CsInfo> {
        let c = self.dataset_at("cs/info")?;
        let mut v = decode_dataset(&c, CsInfo::from_element)
            .map_err(|e| Error::Protocol(format!("cs/info: {e}")))?;
        if v.is_empty() {
            return Err(Error::Protocol("cs/info: empty dataset".into()));
        }
        Ok(v.swap_remove(0))
    }

    /// Cascade's `cs/tiers` (the storage tiers behind the RAM CS; empty when there are none),
    /// waiting at most `timeout`: NFD does not serve this dataset and leaves the Interest
    /// unanswered.
    pub fn cs_tiers(&mut self, timeout: Duration) -> Result<Vec<CsTierInfo>> {
        let saved = std::mem::replace(&mut self.timeout, timeout);
        let c = self.dataset_at("cs/tiers");
        self.timeout = saved;
        CsTierInfo::decode_dataset(&c?).map_err(|e| Error::Protocol(format!("cs/tiers: {e}")))
    }

    /// Cascade's `cs/nbcache` (NB-Cache's bypass and congestion counters), waiting at most
    /// `timeout`: NFD does not serve this dataset and leaves the Interest unanswered.
    pub fn cs_nbcache(&mut self, timeout: Duration) -> Result<NbCacheInfo> {
        let saved = std::mem::replace(&mut self.timeout, timeout);
        let c = self.dataset_at("cs/nbcache");
        self.timeout = saved;
        let mut v = NbCacheInfo::decode_dataset(&c?)
            .map_err(|e| Error::Protocol(format!("cs/nbcache: {e}")))?;
        match v.len() {
            1 => Ok(v.swap_remove(0)),
            n => Err(Error::Protocol(format!("cs/nbcache: {n} entries, not 1"))),
        }
    }

    /// `strategy-choice/list`.
    pub fn strategy_choices(&mut self) -> Result<Vec<StrategyChoice>> {
        let c = self.dataset_at("strategy-choice/list")?;
        decode_dataset(&c, StrategyChoice::from_element)
            .map_err(|e| Error::Protocol(format!("strategy-choice/list: {e}")))
    }
}

/// The ControlParameters a producer sends with `rib/register`: the prefix, FaceId 0 (the
/// requesting face), Origin 0 (application), Cost 0, Flags CHILD_INHERIT.
pub fn register_params(prefix: &Name) -> ControlParameters {
    ControlParameters {
        name: Some(prefix.clone()),
        face_id: Some(0),
        origin: Some(ORIGIN_APP),
        cost: Some(0),
        flags: Some(wire::nfd::ROUTE_FLAG_CHILD_INHERIT),
        ..ControlParameters::default()
    }
}

impl Face {
    /// Registers `prefix` towards this face (`rib/register` with [`register_params`]) and
    /// returns the parameters the forwarder answered with.
    pub fn register(&mut self, prefix: &Name) -> Result<ControlParameters> {
        Controller::new(self).command("rib", "register", &register_params(prefix))
    }

    /// Removes this face's application route for `prefix` (`rib/unregister`).
    pub fn unregister(&mut self, prefix: &Name) -> Result<ControlParameters> {
        let p = ControlParameters {
            name: Some(prefix.clone()),
            face_id: Some(0),
            origin: Some(ORIGIN_APP),
            ..ControlParameters::default()
        };
        Controller::new(self).command("rib", "unregister", &p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{InterestView, Limits};

    #[test]
    fn command_times_strictly_increase() {
        let mut last = command_time_ms();
        for _ in 0..1000 {
            let t = command_time_ms();
            assert!(t > last);
            last = t;
        }
        // Within a few ms of the clock (1000 calls cannot run 1000 ms ahead of it by much).
        assert!(last <= crate::unix_time_ms() + 1000);
    }

    #[test]
    fn command_interest_is_accepted_by_the_server_parser() {
        let p = register_params(&Name::from_uri("/example/app").unwrap());
        let i = command_interest("rib", "register", &p, 1_700_000_000_000, [7; 8], [1; 4]);
        let w = i.to_wire();
        // Decoding checks the ParametersSha256DigestComponent against the parameters.
        let v = InterestView::decode(&w, &Limits::default()).unwrap();
        let c = mgmt::parse_command(&v, true).unwrap();
        assert_eq!((c.module.as_str(), c.verb.as_str()), ("rib", "register"));
        assert_eq!(c.params, p);
        // From a non-local face the same command is refused, as the server should.
        assert_eq!(mgmt::parse_command(&v, false).unwrap_err().status_code, 403);
    }

    #[test]
    fn command_interest_signature_is_digest_sha256_of_the_signed_portion() {
        let p = ControlParameters {
            face_id: Some(7),
            ..ControlParameters::default()
        };
        let w = command_interest("faces", "destroy", &p, 42, [1; 8], [2; 4]).to_wire();
        let v = InterestView::decode(&w, &Limits::default()).unwrap();
        let si = v.signature_info().unwrap();
        assert_eq!(si.signature_type, signature_type::DIGEST_SHA256);
        assert_eq!(si.time_ms, Some(42));
        assert_eq!(si.nonce, Some(&[1u8; 8][..]));
        assert_eq!(v.app_params(), Some(&[][..]));
        // Recompute the signed portion from the wire: name components except the last
        // (ParametersSha256Digest), then ApplicationParameters and InterestSignatureInfo.
        let comps: Vec<_> = v.name().components().collect();
        assert_eq!(
            u32::from(comps.last().unwrap().typ),
            tt::PARAMETERS_SHA256_DIGEST
        );
        let mut signed = Vec::new();
        for c in &comps[..comps.len() - 1] {
            signed.extend_from_slice(c.wire);
        }
        let mut r = wire::tlv::Reader::new(v.wire());
        let outer = r.read().unwrap();
        let mut inner = outer.reader();
        while let Some(e) = inner.next_element() {
            let e = e.unwrap();
            if e.typ == tt::APPLICATION_PARAMETERS || e.typ == tt::INTEREST_SIGNATURE_INFO {
                signed.extend_from_slice(e.wire);
            }
        }
        assert_eq!(v.signature_value().unwrap(), sha256(&[&signed]));
        // The old four-component form is not what we send.
        assert_eq!(v.name().len(), 6);
    }
}
