//! Cascade's NB-Cache dataset, `/localhost/nfd/cs/nbcache`: one [`NbCacheInfo`], the
//! forwarder's bypasses of its content store and its congestion control (Pan et al., "NB-Cache:
//! Non-Blocking In-Network Caching for High-Performance Content Routers"), summed over the
//! workers.
//!
//! NFD does not know the name (it leaves the Interest unanswered); NFD's own datasets are not
//! changed. Encoding as [`super::tiers`]: every field a NonNegativeInteger under an even
//! TLV-TYPE of Cascade's (0xCB00..), so that a decoder skips the fields it does not know.

use wire::tlv::{write_nested, write_nni_tlv, Element};

/// TLV-TYPE numbers of the dataset.
pub mod tlv {
    /// NbCacheInfo: the whole entry.
    pub const NB_CACHE_INFO: u32 = 0xCB00;
    /// Interests the Bloom filter found surely absent: neither the CS nor L2 was asked.
    pub const N_FILTER_SKIPS: u32 = 0xCB02;
    /// Positives of the Bloom filter that no tier held (false positives).
    pub const N_FILTER_FALSE_POSITIVES: u32 = 0xCB04;
    /// Interests for names L2 held sent upstream because its queue was past the threshold.
    pub const N_QUEUE_BYPASSES: u32 = 0xCB06;
    /// Interests past the threshold that waited for L2 because no upstream was available.
    pub const N_QUEUE_NO_UPSTREAM: u32 = 0xCB08;
    /// Of those, the ones whose upstreams were all under a Nack-α (NB-CC).
    pub const N_BYPASS_UNAVAILABLE: u32 = 0xCB0A;
    /// Nack-α sent to downstreams.
    pub const N_ALPHA_SENT: u32 = 0xCB0C;
    /// Nack-β sent.
    pub const N_BETA_SENT: u32 = 0xCB0E;
    /// Nack-α received from upstreams.
    pub const N_ALPHA_RECEIVED: u32 = 0xCB10;
    /// Nack-β received.
    pub const N_BETA_RECEIVED: u32 = 0xCB12;
    /// Times a Nack-α made an available upstream unavailable.
    pub const N_FACES_MADE_UNAVAILABLE: u32 = 0xCB14;
    /// Upstream faces under a Nack-α now (per worker, summed).
    pub const N_FACES_UNAVAILABLE: u32 = 0xCB16;
    /// Data this forwarder marked with a CongestionMark (marks passed on are not counted).
    pub const N_DATA_MARKED: u32 = 0xCB18;
    /// NDNLPv2 IDLE packets sent to carry a Nack-α or Nack-β to a downstream that had no
    /// packet going its way.
    pub const N_IDLE_SENT: u32 = 0xCB1A;
}

/// The NB-Cache counters. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NbCacheInfo {
    /// Bloom filter sure misses.
    pub n_filter_skips: u64,
    /// Bloom filter false positives.
    pub n_filter_false_positives: u64,
    /// Queue-threshold bypasses.
    pub n_queue_bypasses: u64,
    /// Past the threshold, no upstream available: waited for L2.
    pub n_queue_no_upstream: u64,
    /// Of those, upstreams all under a Nack-α.
    pub n_bypass_unavailable: u64,
    /// Nack-α sent.
    pub n_alpha_sent: u64,
    /// Nack-β sent.
    pub n_beta_sent: u64,
    /// Nack-α received.
    pub n_alpha_received: u64,
    /// Nack-β received.
    pub n_beta_received: u64,
    /// Times an upstream was made unavailable.
    pub n_faces_made_unavailable: u64,
    /// Upstreams unavailable now.
    pub n_faces_unavailable: u64,
    /// Data marked by this forwarder.
    pub n_data_marked: u64,
    /// IDLE packets sent to carry a signal.
    pub n_idle_sent: u64,
}

impl NbCacheInfo {
    fn fields(&self) -> [(u32, u64); 13] {
        use tlv::*;
        [
            (N_FILTER_SKIPS, self.n_filter_skips),
            (N_FILTER_FALSE_POSITIVES, self.n_filter_false_positives),
            (N_QUEUE_BYPASSES, self.n_queue_bypasses),
            (N_QUEUE_NO_UPSTREAM, self.n_queue_no_upstream),
            (N_BYPASS_UNAVAILABLE, self.n_bypass_unavailable),
            (N_ALPHA_SENT, self.n_alpha_sent),
            (N_BETA_SENT, self.n_beta_sent),
            (N_ALPHA_RECEIVED, self.n_alpha_received),
            (N_BETA_RECEIVED, self.n_beta_received),
            (N_FACES_MADE_UNAVAILABLE, self.n_faces_made_unavailable),
            (N_FACES_UNAVAILABLE, self.n_faces_unavailable),
            (N_DATA_MARKED, self.n_data_marked),
            (N_IDLE_SENT, self.n_idle_sent),
        ]
    }

    fn field_mut(&mut self, typ: u32) -> Option<&mut u64> {
        use tlv::*;
        Some(match typ {
            N_FILTER_SKIPS => &mut self.n_filter_skips,
            N_FILTER_FALSE_POSITIVES => &mut self.n_filter_false_positives,
            N_QUEUE_BYPASSES => &mut self.n_queue_bypasses,
            N_QUEUE_NO_UPSTREAM => &mut self.n_queue_no_upstream,
            N_BYPASS_UNAVAILABLE => &mut self.n_bypass_unavailable,
            N_ALPHA_SENT => &mut self.n_alpha_sent,
            N_BETA_SENT => &mut self.n_beta_sent,
            N_ALPHA_RECEIVED => &mut self.n_alpha_received,
            N_BETA_RECEIVED => &mut self.n_beta_received,
            N_FACES_MADE_UNAVAILABLE => &mut self.n_faces_made_unavailable,
            N_FACES_UNAVAILABLE => &mut self.n_faces_unavailable,
            N_DATA_MARKED => &mut self.n_data_marked,
            N_IDLE_SENT => &mut self.n_idle_sent,
            _ => return None,
        })
    }

    /// This entry's figures and `other`'s summed (another worker's).
    pub fn merged(mut self, other: &NbCacheInfo) -> NbCacheInfo {
        for (t, v) in other.fields() {
            if let Some(x) = self.field_mut(t) {
                *x += v;
            }
        }
        self
    }

    /// Appends the NbCacheInfo TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, tlv::NB_CACHE_INFO, |o| {
            for (t, v) in self.fields() {
                write_nni_tlv(o, t, v);
            }
        });
    }

    /// Decodes one NbCacheInfo element: absent fields are 0, unknown non-critical (even)
    /// fields are skipped, unknown critical (odd) ones are an error.
    pub fn from_element(e: Element<'_>) -> wire::Result<Self> {
        super::tiers::decode_nni_fields(e, tlv::NB_CACHE_INFO, NbCacheInfo::field_mut)
    }

    /// Decodes a whole `cs/nbcache` dataset.
    pub fn decode_dataset(content: &[u8]) -> wire::Result<Vec<Self>> {
        wire::nfd::decode_dataset(content, Self::from_element)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_merge_and_evolvability() {
        let a = NbCacheInfo {
            n_filter_skips: 1,
            n_filter_false_positives: 2,
            n_queue_bypasses: 3,
            n_queue_no_upstream: 4,
            n_bypass_unavailable: 5,
            n_alpha_sent: 6,
            n_beta_sent: 7,
            n_alpha_received: 8,
            n_beta_received: 9,
            n_faces_made_unavailable: 10,
            n_faces_unavailable: 11,
            n_data_marked: 1 << 40,
            n_idle_sent: 13,
        };
        let mut out = Vec::new();
        a.encode(&mut out);
        assert_eq!(&out[..3], &[0xFD, 0xCB, 0x00]);
        assert_eq!(NbCacheInfo::decode_dataset(&out).unwrap(), vec![a]);
        let m = a.merged(&a);
        assert_eq!((m.n_alpha_sent, m.n_faces_unavailable), (12, 22));
        assert_eq!(m.n_idle_sent, 26);
        let with = |typ: u32| {
            let mut v = Vec::new();
            write_nested(&mut v, tlv::NB_CACHE_INFO, |o| {
                write_nni_tlv(o, tlv::N_DATA_MARKED, 5);
                write_nni_tlv(o, typ, 1);
            });
            v
        };
        assert_eq!(
            NbCacheInfo::decode_dataset(&with(0xCB80)).unwrap()[0].n_data_marked,
            5
        );
        assert!(NbCacheInfo::decode_dataset(&with(0xCB81)).is_err());
        assert!(NbCacheInfo::decode_dataset(&[0x80, 0]).is_err());
    }
}
