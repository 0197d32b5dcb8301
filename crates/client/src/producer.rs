//! The producer side: serving one Data ([`serve_one`]) or a whole file as versioned, segmented
//! Data ([`serve_file`], [`serve_content`]).
//!
//! A file is cut into segments named `<prefix>/v=<version>/seg=<n>`, each signed DigestSha256
//! or, as ndnputchunks with `-S`, by a key of the key chain ([`segment_data_signed`]: every
//! segment signed once, before serving, on every core; the RDR metadata by the same key), with
//! FreshnessPeriod and FinalBlockId (the last segment's number) on every one, as
//! ndnputchunks does. Interests are taken as ndnputchunks 24.07's three Interest filters take
//! them ([`put_answer`]): under `<prefix>/v=<version>`, or exactly `<prefix>`, an Interest
//! naming an existing segment gets it, one that segment 0 satisfies (CanBePrefix, and
//! MustBeFresh only with a FreshnessPeriod) gets segment 0, any other gets a Nack without a
//! reason (a segment past the last, a version-prefix Interest without CanBePrefix, ...). An
//! Interest for `<prefix>/32=metadata` with CanBePrefix is answered with RDR metadata naming
//! `<prefix>/v=<version>` ([`crate::rdr`]), without CanBePrefix with a Nack. Every answer
//! echoes the Interest's PitToken. An Interest no filter takes (another version, another name
//! under the prefix) is left unanswered.
//!
//! Serving stops when the `stop` flag is set (checked at least every [`POLL`]), or, with
//! [`ServeOptions::once`], when every segment has been sent at least once.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wire::{Component, Data, MetaInfo, Name};

use crate::error::{Error, Result};
use crate::face::{Face, InterestPacket, Received};
use crate::keychain::Signer;

/// How often a serving loop checks its stop flag.
pub const POLL: Duration = Duration::from_millis(100);

/// Default segment size (ndnputchunks' default), in bytes of content.
pub const DEFAULT_SEGMENT_SIZE: usize = 8000;

/// Default FreshnessPeriod of served Data, in milliseconds.
pub const DEFAULT_FRESHNESS_MS: u64 = 10_000;

/// Options of [`serve_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// Content bytes per segment (at least 1).
    pub segment_size: usize,
    /// FreshnessPeriod of every segment, in milliseconds.
    pub freshness_ms: u64,
    /// The version; `None` uses the current time in milliseconds since the Unix epoch.
    pub version: Option<u64>,
    /// Stop once every segment has been sent at least once.
    pub once: bool,
    /// Register the prefix with `rib/register` first.
    pub register: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            segment_size: DEFAULT_SEGMENT_SIZE,
            freshness_ms: DEFAULT_FRESHNESS_MS,
            version: None,
            once: false,
            register: true,
        }
    }
}

/// What a serving loop did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// The version served.
    pub version: u64,
    /// Segments in the content.
    pub segments: u64,
    /// Interests received.
    pub interests: u64,
    /// Data sent (metadata included).
    pub data_sent: u64,
    /// RDR metadata Data sent.
    pub metadata_sent: u64,
    /// Interests left unanswered (not for this content).
    pub unanswered: u64,
    /// Interests Nacked (for this content, but nothing satisfies them).
    pub nacked: u64,
}

/// How ndnputchunks answers an Interest ([`put_answer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutAnswer {
    /// This segment.
    Segment(u64),
    /// The RDR metadata.
    Metadata,
    /// A Nack without a reason (ndn-cxx's `lp::Nack(interest)`).
    Nack,
    /// Nothing: no Interest filter takes it.
    Ignore,
}

/// ndnputchunks 24.07's answer to `interest`, for content served under `prefix`/v=`version`
/// with `count` segments whose FreshnessPeriod is non-zero when `fresh`. See the
/// [module docs](self).
pub fn put_answer(
    interest: &wire::Interest,
    prefix: &Name,
    version: u64,
    count: u64,
    fresh: bool,
) -> PutAnswer {
    let n = &interest.name;
    if crate::rdr::is_metadata_interest(interest, prefix) {
        return match interest.can_be_prefix {
            true => PutAnswer::Metadata,
            false => PutAnswer::Nack,
        };
    }
    let versioned = prefix.clone().with(Component::version(version));
    if !versioned.is_prefix_of(n) && n != prefix {
        return PutAnswer::Ignore;
    }
    if n.len() == versioned.len() + 1 && versioned.is_prefix_of(n) {
        if let Some(seg) = crate::face::segment_number(&n.components[versioned.len()]) {
            return match seg < count {
                true => PutAnswer::Segment(seg),
                false => PutAnswer::Nack,
            };
        }
    }
    // Does segment 0 satisfy it (ndn-cxx's `Interest::matchesData`)?
    let first = versioned.with(Component::segment(0));
    let name_ok = n == &first || (interest.can_be_prefix && n.is_prefix_of(&first));
    match name_ok && (!interest.must_be_fresh || fresh) {
        true => PutAnswer::Segment(0),
        false => PutAnswer::Nack,
    }
}

/// Cuts `content` into signed segments `<prefix>/v=<version>/seg=<n>` of at most
/// `segment_size` bytes (at least one segment, empty for empty content). Returns the encoded
/// Data packets, signed DigestSha256.
pub fn segment_data(
    prefix: &Name,
    version: u64,
    content: &[u8],
    segment_size: usize,
    freshness_ms: u64,
) -> Vec<Vec<u8>> {
    segment_data_signed(prefix, version, content, segment_size, freshness_ms, None)
        .expect("DigestSha256 signing cannot fail")
}

/// As [`segment_data`], every segment signed by `signer` (`None`: DigestSha256), the
/// segments shared out among the machine's cores (scoped threads, one contiguous run each).
pub fn segment_data_signed(
    prefix: &Name,
    version: u64,
    content: &[u8],
    segment_size: usize,
    freshness_ms: u64,
    signer: Option<&Signer>,
) -> Result<Vec<Vec<u8>>> {
    let chunks: Vec<&[u8]> = if content.is_empty() {
        vec![&[]]
    } else {
        content.chunks(segment_size.max(1)).collect()
    };
    let last = Component::segment(chunks.len() as u64 - 1);
    let versioned = prefix.clone().with(Component::version(version));
    let make = |i: usize, c: &[u8]| -> Result<Vec<u8>> {
        let mut d = Data::new(
            versioned.clone().with(Component::segment(i as u64)),
            c.to_vec(),
        );
        d.meta_info = Some(MetaInfo {
            content_type: None,
            freshness_ms: Some(freshness_ms),
            final_block_id: Some(last.clone()),
        });
        match signer {
            Some(s) => s.sign_data(&mut d).map_err(Error::Protocol)?,
            None => d.sign_digest_sha256(),
        }
        Ok(d.to_wire())
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A signature (or digest) costs microseconds a segment: a thread per 64 segments at most.
    let threads = cores.min(chunks.len().div_ceil(64)).max(1);
    let per = chunks.len().div_ceil(threads);
    let runs: Vec<Result<Vec<Vec<u8>>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = chunks
            .chunks(per)
            .enumerate()
            .map(|(k, run)| {
                let make = &make;
                sc.spawn(move || {
                    run.iter()
                        .enumerate()
                        .map(|(j, c)| make(k * per + j, c))
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut out = Vec::with_capacity(chunks.len());
    for run in runs {
        out.extend(run?);
    }
    Ok(out)
}

/// Content cut into segments, ready to serve ([`serve_segments_seeing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segmented {
    /// The version: segments are `<prefix>/v=<version>/seg=<n>`.
    pub version: u64,
    /// The encoded, signed segments, in order ([`segment_data_signed`]).
    pub segments: Vec<Vec<u8>>,
}

/// Which segment answers `interest` for content served under `prefix`/v=`version` with
/// `count` segments, if any ([`put_answer`]'s segment).
pub fn answering_segment(
    interest: &wire::Interest,
    prefix: &Name,
    version: u64,
    count: u64,
    fresh: bool,
) -> Option<u64> {
    match put_answer(interest, prefix, version, count, fresh) {
        PutAnswer::Segment(s) => Some(s),
        _ => None,
    }
}

/// Serves `content` under `prefix` until `stop` is set (or, with `once`, every segment was
/// sent). See the [module docs](self).
pub fn serve_content(
    face: &mut Face,
    prefix: &Name,
    content: &[u8],
    opts: &ServeOptions,
    stop: &AtomicBool,
) -> Result<ServeStats> {
    serve_content_seeing(face, prefix, content, opts, stop, |_, _| {})
}

/// As [`serve_content`], telling `seen` of every Interest that comes and of the Data that
/// answered it (`None`: none did), as ndnputchunks' verbose output does.
pub fn serve_content_seeing(
    face: &mut Face,
    prefix: &Name,
    content: &[u8],
    opts: &ServeOptions,
    stop: &AtomicBool,
    seen: impl FnMut(&InterestPacket, Option<&[u8]>),
) -> Result<ServeStats> {
    if opts.segment_size == 0 {
        return Err(Error::Config("segment size must be at least 1 byte".into()));
    }
    let version = opts.version.unwrap_or_else(crate::unix_time_ms);
    let segments = segment_data(
        prefix,
        version,
        content,
        opts.segment_size,
        opts.freshness_ms,
    );
    let content = Segmented { version, segments };
    serve_segments_seeing(face, prefix, &content, opts, None, stop, seen)
}

/// Serves segments already made (`opts.segment_size` and `opts.version` unused), as
/// [`serve_content_seeing`]; the RDR metadata signed by `signer` (`None`: DigestSha256).
pub fn serve_segments_seeing(
    face: &mut Face,
    prefix: &Name,
    content: &Segmented,
    opts: &ServeOptions,
    signer: Option<&Signer>,
    stop: &AtomicBool,
    mut seen: impl FnMut(&InterestPacket, Option<&[u8]>),
) -> Result<ServeStats> {
    let (version, segments) = (content.version, &content.segments);
    if opts.register {
        face.register(prefix)?;
    }
    let count = segments.len() as u64;
    let mut sent = vec![false; segments.len()];
    let mut unsent = segments.len();
    let mut st = ServeStats {
        version,
        segments: count,
        ..ServeStats::default()
    };
    let finished = |unsent: usize| opts.once && unsent == 0;
    while !stop.load(Ordering::Relaxed) && !finished(unsent) {
        let Some(Received::Interest(i)) = face.recv(POLL)? else {
            continue;
        };
        st.interests += 1;
        match put_answer(&i.interest, prefix, version, count, opts.freshness_ms > 0) {
            PutAnswer::Metadata => {
                let versioned = prefix.clone().with(Component::version(version));
                let mut meta = crate::rdr::metadata_data(prefix, &versioned, crate::unix_time_ms());
                if let Some(s) = signer {
                    meta = resign(&meta, s)?;
                }
                seen(&i, Some(&meta));
                face.put_data(&meta, i.pit_token)?;
                st.data_sent += 1;
                st.metadata_sent += 1;
            }
            PutAnswer::Segment(s) => {
                seen(&i, Some(&segments[s as usize]));
                face.put_data(&segments[s as usize], i.pit_token)?;
                st.data_sent += 1;
                if !sent[s as usize] {
                    sent[s as usize] = true;
                    unsent -= 1;
                }
            }
            PutAnswer::Nack => {
                seen(&i, None);
                face.put_nack(&i, None)?;
                st.nacked += 1;
            }
            PutAnswer::Ignore => st.unanswered += 1,
        }
    }
    Ok(st)
}

/// The encoded Data `wire` signed again by `signer`.
fn resign(wire: &[u8], signer: &Signer) -> Result<Vec<u8>> {
    let view = wire::DataView::decode(wire, &wire::Limits::default())
        .map_err(|e| Error::Protocol(format!("{e}")))?;
    let mut d = view.to_data();
    signer.sign_data(&mut d).map_err(Error::Protocol)?;
    Ok(d.to_wire())
}

/// Reads the file at `path` and serves it with [`serve_content`].
pub fn serve_file(
    face: &mut Face,
    prefix: &Name,
    path: &Path,
    opts: &ServeOptions,
    stop: &AtomicBool,
) -> Result<ServeStats> {
    let content =
        std::fs::read(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    serve_content(face, prefix, &content, opts, stop)
}

/// Does an Interest ask for a Data named exactly `name` (equal name, or a prefix of it with
/// CanBePrefix; with MustBeFresh only if the Data is fresh)?
pub fn wants(interest: &wire::Interest, name: &Name, fresh: bool) -> bool {
    (!interest.must_be_fresh || fresh)
        && (interest.name == *name || (interest.can_be_prefix && interest.name.is_prefix_of(name)))
}

/// Registers `name` (if `register`), waits for one Interest that `data` (an encoded Data named
/// `name`) answers, and sends it. Returns the Interest answered, or `None` if `stop` was set or
/// `timeout` passed first.
pub fn serve_one(
    face: &mut Face,
    name: &Name,
    data: &[u8],
    fresh: bool,
    register: bool,
    timeout: Option<Duration>,
    stop: &AtomicBool,
) -> Result<Option<InterestPacket>> {
    if register {
        face.register(name)?;
    }
    serve_one_seeing(face, name, data, fresh, timeout, stop, |_, _| {})
}

/// As [`serve_one`] (the prefix registered already), telling `seen` of every Interest that
/// comes and whether `data` answers it (as ndnpoke's verbose output does).
pub fn serve_one_seeing(
    face: &mut Face,
    name: &Name,
    data: &[u8],
    fresh: bool,
    timeout: Option<Duration>,
    stop: &AtomicBool,
    mut seen: impl FnMut(&InterestPacket, bool),
) -> Result<Option<InterestPacket>> {
    let deadline = timeout.map(|t| Instant::now() + t);
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let wait = match deadline {
            Some(d) if d <= now => return Ok(None),
            Some(d) => (d - now).min(POLL),
            None => POLL,
        };
        if let Some(Received::Interest(i)) = face.recv(wait)? {
            let answered = wants(&i.interest, name, fresh);
            seen(&i, answered);
            if answered {
                face.put_data(data, i.pit_token)?;
                return Ok(Some(i));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{DataView, Interest, Limits};

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    #[test]
    fn segmentation_names_sizes_and_final_block() {
        let content: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let segs = segment_data(&name("/file"), 7, &content, 1000, 5000);
        assert_eq!(segs.len(), 3);
        let mut joined = Vec::new();
        for (i, w) in segs.iter().enumerate() {
            let d = DataView::decode(w, &Limits::default()).unwrap();
            assert_eq!(d.name().to_string(), format!("/file/v=7/seg={i}"));
            assert_eq!(d.freshness_ms(), Some(5000));
            assert_eq!(d.final_block_id().unwrap().to_string(), "seg=2");
            assert!(d.verify_digest_sha256());
            joined.extend_from_slice(d.content().unwrap());
        }
        assert_eq!(joined, content);
        // Exact multiple: no empty trailing segment. Empty content: one empty segment.
        assert_eq!(segment_data(&name("/f"), 1, &[0; 2000], 1000, 0).len(), 2);
        let e = segment_data(&name("/f"), 1, &[], 1000, 0);
        assert_eq!(e.len(), 1);
        let d = DataView::decode(&e[0], &Limits::default()).unwrap();
        assert_eq!(d.content(), Some(&[][..]));
    }

    #[test]
    fn segments_made_on_many_threads_keep_their_order() {
        // Enough segments for every core's run; unsigned, the same as one thread's.
        let content: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        let one = segment_data(&name("/big"), 3, &content, 97, 1000);
        let many = segment_data_signed(&name("/big"), 3, &content, 97, 1000, None).unwrap();
        assert_eq!(one, many);
        assert_eq!(one.len(), content.len().div_ceil(97));
        for (i, w) in one.iter().enumerate() {
            let d = DataView::decode(w, &Limits::default()).unwrap();
            assert_eq!(d.name().to_string(), format!("/big/v=3/seg={i}"));
            assert_eq!(
                d.content().unwrap(),
                &content[i * 97..((i + 1) * 97).min(content.len())]
            );
        }
    }

    #[test]
    fn which_interests_are_answered() {
        let p = name("/file");
        let ask = |uri: &str, cbp: bool, mbf: bool| {
            let mut i = Interest::new(name(uri), [0; 4]);
            i.can_be_prefix = cbp;
            i.must_be_fresh = mbf;
            answering_segment(&i, &p, 7, 3, true)
        };
        assert_eq!(ask("/file/v=7/seg=2", false, false), Some(2));
        // MustBeFresh is not looked at for a segment named exactly (as ndnputchunks).
        assert_eq!(ask("/file/v=7/seg=2", false, true), Some(2));
        assert_eq!(ask("/file/v=7/seg=3", false, false), None);
        assert_eq!(ask("/file/v=8/seg=0", false, false), None);
        assert_eq!(ask("/file", true, true), Some(0));
        assert_eq!(ask("/file/v=7", true, true), Some(0));
        assert_eq!(ask("/file", false, true), None);
        assert_eq!(ask("/", true, false), None);
        assert_eq!(ask("/other", true, false), None);
        // MustBeFresh cannot be met by Data with FreshnessPeriod 0.
        let mut i = Interest::new(name("/file"), [0; 4]);
        i.can_be_prefix = true;
        i.must_be_fresh = true;
        assert_eq!(answering_segment(&i, &p, 7, 3, false), None);
        assert!(wants(&i, &name("/file/x"), true));
        assert!(!wants(&i, &name("/file/x"), false));
    }
}

#[cfg(test)]
mod put_answer_tests {
    use super::*;
    use wire::Interest;

    #[test]
    fn ndnputchunks_nacks_what_its_filters_take_but_cannot_satisfy() {
        let p = Name::from_uri("/file").unwrap();
        let ask = |uri: &str, cbp: bool| {
            let mut i = Interest::new(Name::from_uri(uri).unwrap(), [0; 4]);
            i.can_be_prefix = cbp;
            put_answer(&i, &p, 7, 3, true)
        };
        use PutAnswer::*;
        // Under the versioned prefix: a segment, segment 0, or a Nack.
        assert_eq!(ask("/file/v=7/seg=1", false), Segment(1));
        assert_eq!(ask("/file/v=7/seg=3", false), Nack);
        assert_eq!(ask("/file/v=7", true), Segment(0));
        assert_eq!(ask("/file/v=7", false), Nack);
        assert_eq!(ask("/file/v=7/x", true), Nack);
        assert_eq!(ask("/file/v=7/seg=0/x", false), Nack);
        // Exactly the prefix: segment 0 with CanBePrefix, else a Nack.
        assert_eq!(ask("/file", true), Segment(0));
        assert_eq!(ask("/file", false), Nack);
        // RDR discovery: metadata with CanBePrefix, else a Nack.
        assert_eq!(ask("/file/32=metadata", true), Metadata);
        assert_eq!(ask("/file/32=metadata", false), Nack);
        // No filter takes these.
        assert_eq!(ask("/file/v=8/seg=0", false), Ignore);
        assert_eq!(ask("/file/other", true), Ignore);
        assert_eq!(ask("/other", true), Ignore);
    }
}
