//! Cascade's content-store tiers dataset, `/localhost/nfd/cs/tiers`: one [`CsTierInfo`] per
//! storage tier behind the RAM CS (today at most one, the L2 on disk, summed over the workers).
//!
//! NFD's `cs/info` (CsInfo) stays as NFD defines it, for ndn-cxx clients; this dataset carries
//! what CsInfo cannot. A router without L2 answers an empty dataset; NFD does not know the
//! name. Encoding: the usual dataset shape (entries back to back), every field a
//! NonNegativeInteger under a TLV-TYPE of Cascade's (0xCA00..), even so that it is
//! non-critical: a decoder skips types it does not know (and this one skips unknown even types,
//! rejecting unknown odd ones, as NDN packet format v0.3 says).

use wire::tlv::{write_nested, write_nni_tlv, Element, Reader};

/// TLV-TYPE numbers of the dataset.
pub mod tlv {
    /// CsTierInfo: one tier.
    pub const CS_TIER_INFO: u32 = 0xCA00;
    /// Level: 2 for the L2 tier (the RAM CS is level 1, reported by CsInfo).
    pub const LEVEL: u32 = 0xCA02;
    /// Workers whose tiers the entry sums.
    pub const WORKERS: u32 = 0xCA04;
    /// Capacity in chunks.
    pub const CAPACITY: u32 = 0xCA06;
    /// Chunks stored.
    pub const N_ENTRIES: u32 = 0xCA08;
    /// Lookups (RAM CS misses that asked this tier).
    pub const N_LOOKUPS: u32 = 0xCA0A;
    /// Lookups that found the chunk (answered pending).
    pub const N_HITS: u32 = 0xCA0C;
    /// Lookups that did not.
    pub const N_MISSES: u32 = 0xCA0E;
    /// Batch reads submitted to the device.
    pub const N_READS: u32 = 0xCA10;
    /// Bytes read.
    pub const N_READ_BYTES: u32 = 0xCA12;
    /// Chunk writes submitted.
    pub const N_WRITES: u32 = 0xCA14;
    /// Bytes written.
    pub const N_WRITE_BYTES: u32 = 0xCA16;
    /// Slots whose checksum failed on read (dropped, never served).
    pub const N_CHECKSUM_FAILURES: u32 = 0xCA18;
    /// Chunks of read batches put into the RAM CS that nobody was waiting for.
    pub const N_PREFETCHED: u32 = 0xCA1A;
    /// Of those, how many were served from the RAM CS afterwards.
    pub const N_PREFETCH_USED: u32 = 0xCA1C;
    /// Chunks not admitted because the write backlog was full.
    pub const N_ADMIT_DROPPED: u32 = 0xCA1E;
    /// Operations in flight per worker at most.
    pub const QUEUE_DEPTH: u32 = 0xCA20;
    /// Operations in flight now (all workers).
    pub const N_IN_FLIGHT: u32 = 0xCA22;
    /// Chunks per batch.
    pub const BATCH: u32 = 0xCA24;
    /// Longest storage time in one forwarding-loop iteration, µs (max over workers).
    pub const STALL_MAX_US: u32 = 0xCA26;
    /// 99.9th percentile of the storage time per iteration, µs (max over workers).
    pub const STALL_P999_US: u32 = 0xCA28;
    /// Iterations whose storage time exceeded 1 ms.
    pub const N_STALLS_OVER_1MS: u32 = 0xCA2A;
    /// Longest whole forwarding-loop iteration, µs (max over workers).
    pub const LOOP_MAX_US: u32 = 0xCA2C;
    /// 99.9th percentile of the whole iteration, µs (max over workers).
    pub const LOOP_P999_US: u32 = 0xCA2E;
    /// RAM-CS hits on a batch's penultimate chunk for which the tier named a next batch
    /// (prefetch-ahead offers).
    pub const N_AHEAD_OFFERED: u32 = 0xCA30;
    /// Prefetch-ahead batch reads started (offers whose next batch was neither in the RAM CS
    /// nor already being read).
    pub const N_AHEAD_READS: u32 = 0xCA32;
    /// Slots whose checksum held but whose Data carried another name than the slot's (dropped,
    /// never served).
    pub const N_NAME_MISMATCHES: u32 = 0xCA34;
    /// Workers whose tier a storage fault (EIO, ENOSPC, a read-only file system...) turned
    /// off, at open or since: they forward from RAM only.
    pub const N_WORKERS_OFF: u32 = 0xCA36;
    /// Reads and writes that failed.
    pub const N_IO_ERRORS: u32 = 0xCA38;
    /// Forwarding-loop iterations in which a worker held its input back while L2 writes were
    /// in flight (back-pressure).
    pub const N_INPUT_HELD: u32 = 0xCA3A;
    /// Lookups that found the queue full for a chunk the tier holds and waited for room.
    pub const N_DEFERRED: u32 = 0xCA3C;
    /// CanBePrefix lookups asked of the tier's prefix index.
    pub const N_PREFIX_LOOKUPS: u32 = 0xCA3E;
    /// Of those, answered pending (a batch under the prefix is being read).
    pub const N_PREFIX_PENDING: u32 = 0xCA40;
    /// Pending CanBePrefix lookups the batch read had no (fresh) chunk for.
    pub const N_PREFIX_STALE: u32 = 0xCA42;
    /// CanBePrefix Interests a worker's L2 missed and handed on to the next worker whose L2
    /// may hold their name.
    pub const N_PREFIX_HANDOVERS: u32 = 0xCA44;
    /// Of those misses, the ones whose hand-over found the next worker's ring full (forwarded
    /// upstream instead).
    pub const N_PREFIX_HANDOVERS_FULL: u32 = 0xCA46;
    /// CanBePrefix lookups the prefix index had nothing for (a Bloom filter's false positive
    /// included) or that found the queue full, completed without data so that the worker may
    /// hand the Interest on.
    pub const N_PREFIX_MISSED: u32 = 0xCA48;
    /// Chunks the workers took for L2 from their own traffic (satisfying or evicted Data).
    pub const N_ADMIT_TAKEN: u32 = 0xCA4A;
    /// Chunks workers received from the worker that took them (hand-overs to the owner).
    pub const N_ADMIT_RECEIVED: u32 = 0xCA4C;
    /// Chunks offered to a store with an outcome (anything but a full write queue).
    pub const N_ADMIT_OFFERED: u32 = 0xCA4E;
    /// Chunks handed over to the worker that owns them.
    pub const N_ADMIT_HANDED: u32 = 0xCA50;
    /// Hand-overs received that carried no chunk (refused).
    pub const N_ADMIT_MALFORMED: u32 = 0xCA52;
}

/// One storage tier's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsTierInfo {
    /// 2 for the L2 tier.
    pub level: u64,
    /// Workers summed.
    pub workers: u64,
    /// Capacity in chunks.
    pub capacity: u64,
    /// Chunks stored.
    pub n_entries: u64,
    /// Lookups.
    pub n_lookups: u64,
    /// Lookups that hit.
    pub n_hits: u64,
    /// Lookups that missed.
    pub n_misses: u64,
    /// Batch reads.
    pub n_reads: u64,
    /// Bytes read.
    pub n_read_bytes: u64,
    /// Chunk writes.
    pub n_writes: u64,
    /// Bytes written.
    pub n_write_bytes: u64,
    /// Checksum failures.
    pub n_checksum_failures: u64,
    /// Prefetched chunks.
    pub n_prefetched: u64,
    /// Prefetched chunks served afterwards.
    pub n_prefetch_used: u64,
    /// Chunks not admitted (backlog full).
    pub n_admit_dropped: u64,
    /// Queue depth per worker.
    pub queue_depth: u64,
    /// Operations in flight.
    pub n_in_flight: u64,
    /// Chunks per batch.
    pub batch: u64,
    /// Longest storage time in one loop iteration, µs.
    pub stall_max_us: u64,
    /// 99.9th percentile of it, µs.
    pub stall_p999_us: u64,
    /// Iterations whose storage time exceeded 1 ms.
    pub n_stalls_over_1ms: u64,
    /// Longest loop iteration, µs.
    pub loop_max_us: u64,
    /// 99.9th percentile of it, µs.
    pub loop_p999_us: u64,
    /// Prefetch-ahead offers.
    pub n_ahead_offered: u64,
    /// Prefetch-ahead batch reads started.
    pub n_ahead_reads: u64,
    /// Slots whose Data carried another name.
    pub n_name_mismatches: u64,
    /// Workers whose tier a storage fault turned off.
    pub n_workers_off: u64,
    /// Reads and writes that failed.
    pub n_io_errors: u64,
    /// Loop iterations whose input was held back while L2 writes were in flight.
    pub n_input_held: u64,
    /// Lookups that waited for room in the queue.
    pub n_deferred: u64,
    /// CanBePrefix lookups.
    pub n_prefix_lookups: u64,
    /// CanBePrefix lookups answered pending.
    pub n_prefix_pending: u64,
    /// Pending CanBePrefix lookups with no (fresh) chunk in their batch.
    pub n_prefix_stale: u64,
    /// CanBePrefix L2 misses handed on to another worker.
    pub n_prefix_handovers: u64,
    /// CanBePrefix L2 misses whose hand-over found a full ring.
    pub n_prefix_handovers_full: u64,
    /// CanBePrefix lookups completed without data for want of a chunk (or of queue room).
    pub n_prefix_missed: u64,
    /// Chunks taken for L2 from the workers' own traffic.
    pub n_admit_taken: u64,
    /// Chunks received from the worker that took them.
    pub n_admit_received: u64,
    /// Chunks offered to a store with an outcome.
    pub n_admit_offered: u64,
    /// Chunks handed over to their owner.
    pub n_admit_handed: u64,
    /// Malformed hand-overs refused.
    pub n_admit_malformed: u64,
}

impl CsTierInfo {
    fn fields(&self) -> [(u32, u64); 41] {
        use tlv::*;
        [
            (LEVEL, self.level),
            (WORKERS, self.workers),
            (CAPACITY, self.capacity),
            (N_ENTRIES, self.n_entries),
            (N_LOOKUPS, self.n_lookups),
            (N_HITS, self.n_hits),
            (N_MISSES, self.n_misses),
            (N_READS, self.n_reads),
            (N_READ_BYTES, self.n_read_bytes),
            (N_WRITES, self.n_writes),
            (N_WRITE_BYTES, self.n_write_bytes),
            (N_CHECKSUM_FAILURES, self.n_checksum_failures),
            (N_PREFETCHED, self.n_prefetched),
            (N_PREFETCH_USED, self.n_prefetch_used),
            (N_ADMIT_DROPPED, self.n_admit_dropped),
            (QUEUE_DEPTH, self.queue_depth),
            (N_IN_FLIGHT, self.n_in_flight),
            (BATCH, self.batch),
            (STALL_MAX_US, self.stall_max_us),
            (STALL_P999_US, self.stall_p999_us),
            (N_STALLS_OVER_1MS, self.n_stalls_over_1ms),
            (LOOP_MAX_US, self.loop_max_us),
            (LOOP_P999_US, self.loop_p999_us),
            (N_AHEAD_OFFERED, self.n_ahead_offered),
            (N_AHEAD_READS, self.n_ahead_reads),
            (N_NAME_MISMATCHES, self.n_name_mismatches),
            (N_WORKERS_OFF, self.n_workers_off),
            (N_IO_ERRORS, self.n_io_errors),
            (N_INPUT_HELD, self.n_input_held),
            (N_DEFERRED, self.n_deferred),
            (N_PREFIX_LOOKUPS, self.n_prefix_lookups),
            (N_PREFIX_PENDING, self.n_prefix_pending),
            (N_PREFIX_STALE, self.n_prefix_stale),
            (N_PREFIX_HANDOVERS, self.n_prefix_handovers),
            (N_PREFIX_HANDOVERS_FULL, self.n_prefix_handovers_full),
            (N_PREFIX_MISSED, self.n_prefix_missed),
            (N_ADMIT_TAKEN, self.n_admit_taken),
            (N_ADMIT_RECEIVED, self.n_admit_received),
            (N_ADMIT_OFFERED, self.n_admit_offered),
            (N_ADMIT_HANDED, self.n_admit_handed),
            (N_ADMIT_MALFORMED, self.n_admit_malformed),
        ]
    }

    fn field_mut(&mut self, typ: u32) -> Option<&mut u64> {
        use tlv::*;
        Some(match typ {
            LEVEL => &mut self.level,
            WORKERS => &mut self.workers,
            CAPACITY => &mut self.capacity,
            N_ENTRIES => &mut self.n_entries,
            N_LOOKUPS => &mut self.n_lookups,
            N_HITS => &mut self.n_hits,
            N_MISSES => &mut self.n_misses,
            N_READS => &mut self.n_reads,
            N_READ_BYTES => &mut self.n_read_bytes,
            N_WRITES => &mut self.n_writes,
            N_WRITE_BYTES => &mut self.n_write_bytes,
            N_CHECKSUM_FAILURES => &mut self.n_checksum_failures,
            N_PREFETCHED => &mut self.n_prefetched,
            N_PREFETCH_USED => &mut self.n_prefetch_used,
            N_ADMIT_DROPPED => &mut self.n_admit_dropped,
            QUEUE_DEPTH => &mut self.queue_depth,
            N_IN_FLIGHT => &mut self.n_in_flight,
            BATCH => &mut self.batch,
            STALL_MAX_US => &mut self.stall_max_us,
            STALL_P999_US => &mut self.stall_p999_us,
            N_STALLS_OVER_1MS => &mut self.n_stalls_over_1ms,
            LOOP_MAX_US => &mut self.loop_max_us,
            LOOP_P999_US => &mut self.loop_p999_us,
            N_AHEAD_OFFERED => &mut self.n_ahead_offered,
            N_AHEAD_READS => &mut self.n_ahead_reads,
            N_NAME_MISMATCHES => &mut self.n_name_mismatches,
            N_WORKERS_OFF => &mut self.n_workers_off,
            N_IO_ERRORS => &mut self.n_io_errors,
            N_INPUT_HELD => &mut self.n_input_held,
            N_DEFERRED => &mut self.n_deferred,
            N_PREFIX_LOOKUPS => &mut self.n_prefix_lookups,
            N_PREFIX_PENDING => &mut self.n_prefix_pending,
            N_PREFIX_STALE => &mut self.n_prefix_stale,
            N_PREFIX_HANDOVERS => &mut self.n_prefix_handovers,
            N_PREFIX_HANDOVERS_FULL => &mut self.n_prefix_handovers_full,
            N_PREFIX_MISSED => &mut self.n_prefix_missed,
            N_ADMIT_TAKEN => &mut self.n_admit_taken,
            N_ADMIT_RECEIVED => &mut self.n_admit_received,
            N_ADMIT_OFFERED => &mut self.n_admit_offered,
            N_ADMIT_HANDED => &mut self.n_admit_handed,
            N_ADMIT_MALFORMED => &mut self.n_admit_malformed,
            _ => return None,
        })
    }

    /// This tier's figures and `other`'s (the same tier of another worker) together: the
    /// per-worker maxima (queue depth, batch, stall and loop times) are the larger of the two,
    /// the level is this one's, every other figure is summed.
    pub fn merged(mut self, other: &CsTierInfo) -> CsTierInfo {
        use tlv::*;
        for (t, v) in other.fields() {
            let Some(x) = self.field_mut(t) else { continue };
            match t {
                LEVEL => {}
                QUEUE_DEPTH | BATCH | STALL_MAX_US | STALL_P999_US | LOOP_MAX_US | LOOP_P999_US => {
                    *x = (*x).max(v)
                }
                _ => *x += v,
            }
        }
        self
    }

    /// Share of prefetched chunks served afterwards (`None` before any prefetch).
    pub fn prefetch_usefulness(&self) -> Option<f64> {
        (self.n_prefetched > 0).then(|| self.n_prefetch_used as f64 / self.n_prefetched as f64)
    }

    /// Appends the CsTierInfo TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, tlv::CS_TIER_INFO, |o| {
            for (t, v) in self.fields() {
                write_nni_tlv(o, t, v);
            }
        });
    }

    /// Decodes one CsTierInfo element: absent fields are 0, unknown non-critical (even)
    /// fields are skipped, unknown critical (odd) ones are an error.
    pub fn from_element(e: Element<'_>) -> wire::Result<Self> {
        decode_nni_fields(e, tlv::CS_TIER_INFO, CsTierInfo::field_mut)
    }

    /// Decodes a whole `cs/tiers` dataset.
    pub fn decode_dataset(content: &[u8]) -> wire::Result<Vec<Self>> {
        wire::nfd::decode_dataset(content, Self::from_element)
    }
}

/// Decodes element `e` of type `outer` whose fields are NonNegativeIntegers into a `T`:
/// `field` names the member of each TLV-TYPE; absent fields stay at their default, unknown
/// non-critical (even) ones are skipped, unknown critical (odd) ones are an error.
pub(crate) fn decode_nni_fields<T: Default>(
    e: Element<'_>,
    outer: u32,
    field: fn(&mut T, u32) -> Option<&mut u64>,
) -> wire::Result<T> {
    let e = e.expect(outer)?;
    let mut info = T::default();
    let mut r: Reader<'_> = e.reader();
    while let Some(f) = r.next_element() {
        let f = f?;
        match field(&mut info, f.typ) {
            Some(x) => *x = f.nni()?,
            None if f.typ & 1 == 0 => {}
            None => {
                return Err(wire::Error::new(
                    wire::ErrorKind::UnknownCritical(f.typ),
                    f.offset,
                ))
            }
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_evolvability() {
        let a = CsTierInfo {
            level: 2,
            workers: 2,
            capacity: 100_000,
            n_entries: 1234,
            n_hits: 7,
            n_read_bytes: 1 << 40,
            n_prefetched: 10,
            n_prefetch_used: 9,
            batch: 10,
            stall_max_us: 420,
            loop_p999_us: 77,
            n_ahead_offered: 12,
            n_ahead_reads: 11,
            n_name_mismatches: 2,
            n_workers_off: 1,
            n_io_errors: 3,
            ..CsTierInfo::default()
        };
        let mut out = Vec::new();
        a.encode(&mut out);
        let b = CsTierInfo { level: 3, ..a };
        b.encode(&mut out);
        assert_eq!(CsTierInfo::decode_dataset(&out).unwrap(), vec![a, b]);
        assert_eq!(a.prefetch_usefulness(), Some(0.9));
        assert_eq!(CsTierInfo::default().prefetch_usefulness(), None);
        // First bytes: the 3-byte TLV-TYPE 0xCA00.
        assert_eq!(&out[..3], &[0xFD, 0xCA, 0x00]);
        // An unknown even field is skipped, an unknown odd one is an error.
        let with = |typ: u32| {
            let mut v = Vec::new();
            write_nested(&mut v, tlv::CS_TIER_INFO, |o| {
                write_nni_tlv(o, tlv::CAPACITY, 5);
                write_nni_tlv(o, typ, 1);
            });
            v
        };
        assert_eq!(
            CsTierInfo::decode_dataset(&with(0xCA80)).unwrap()[0].capacity,
            5
        );
        assert!(CsTierInfo::decode_dataset(&with(0xCA81)).is_err());
        // Not a tier entry (a CsInfo, type 0x80): an error, not an empty tier.
        assert!(CsTierInfo::decode_dataset(&[0x80, 0]).is_err());
        assert!(CsTierInfo::decode_dataset(&[]).unwrap().is_empty());
    }

    #[test]
    fn the_l2_backpressure_and_prefix_counters_round_trip_and_old_decoders_skip_them() {
        let a = CsTierInfo {
            level: 2,
            capacity: 9,
            n_input_held: 41,
            n_deferred: 42,
            n_prefix_lookups: 43,
            n_prefix_pending: 44,
            n_prefix_stale: 45,
            n_prefix_handovers: 46,
            n_prefix_handovers_full: 47,
            n_prefix_missed: 48,
            n_admit_taken: 49,
            n_admit_received: 50,
            n_admit_offered: 51,
            n_admit_handed: 52,
            n_admit_malformed: 53,
            ..CsTierInfo::default()
        };
        let mut out = Vec::new();
        a.encode(&mut out);
        assert_eq!(CsTierInfo::decode_dataset(&out).unwrap(), vec![a]);
        // Summed over workers.
        let two = a.merged(&a);
        assert_eq!(
            [two.n_input_held, two.n_deferred, two.n_prefix_lookups],
            [82, 84, 86]
        );
        assert_eq!([two.n_prefix_pending, two.n_prefix_stale], [88, 90]);
        assert_eq!(
            [
                two.n_prefix_handovers,
                two.n_prefix_handovers_full,
                two.n_prefix_missed
            ],
            [92, 94, 96]
        );
        assert_eq!(
            [
                two.n_admit_taken,
                two.n_admit_received,
                two.n_admit_offered,
                two.n_admit_handed,
                two.n_admit_malformed
            ],
            [98, 100, 102, 104, 106]
        );
        // A decoder that knows only the fields before them reads the rest unchanged.
        fn old(t: &mut CsTierInfo, typ: u32) -> Option<&mut u64> {
            (typ <= tlv::N_IO_ERRORS).then_some(())?;
            t.field_mut(typ)
        }
        let e = wire::tlv::Reader::new(&out)
            .next_element()
            .unwrap()
            .unwrap();
        let seen = decode_nni_fields(e, tlv::CS_TIER_INFO, old).unwrap();
        assert_eq!(
            seen,
            CsTierInfo {
                level: 2,
                capacity: 9,
                ..CsTierInfo::default()
            }
        );
    }
}
