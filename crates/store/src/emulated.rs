//! An emulated L2, as Mansilha et al. ("Exploiting parallelism in hierarchical content
//! stores for high-speed ICN routers", Computer Networks, 2017) build it to reproduce their
//! curves (their Table 1).
//!
//! A batch read of `n` chunks of `|c|` bytes takes `d = n·|c|/τ_L2` (with `n = B` for a full
//! batch), spent by busy-waiting on the clock ([`EmuDelay::Busy`], precise, burns the core) or
//! by sleeping ([`EmuDelay::Sleep`], imprecise below about a millisecond). The chunks come from
//! memory allocated once at start-up ([`EmuMemory::Static`]: `|L2|` is bounded by RAM) or from
//! a batch buffer allocated and filled on every read and freed afterwards
//! ([`EmuMemory::Dynamic`]: any `|L2|`, at the cost of an allocation per read — the paper's
//! technique, kept on purpose because its overhead is what the paper measured).
//!
//! The read is synchronous: the calling thread spends the delay, exactly like the paper's
//! single-threaded NFD-HCS. Chunks are addressed by their position in the catalogue.

use std::time::{Duration, Instant};

/// Where the emulated chunks live (Mansilha et al., Table 1, `M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmuMemory {
    /// All of L2 preallocated at start-up.
    #[default]
    Static,
    /// One batch buffer allocated per read.
    Dynamic,
}

/// How the read delay is spent (Mansilha et al., Table 1, `D`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmuDelay {
    /// Spin on the clock.
    #[default]
    Busy,
    /// `thread::sleep`.
    Sleep,
}

/// Configuration of an [`EmulatedL2`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmulatedL2Config {
    /// Chunks L2 holds (static memory allocates `capacity_chunks × chunk_bytes`); positions
    /// beyond wrap around.
    pub capacity_chunks: u64,
    /// Bytes per chunk `|c|` (the paper: 8 KiB).
    pub chunk_bytes: u32,
    /// L2 throughput `τ_L2` in Gbit/s (the paper: 4..64).
    pub throughput_gbps: f64,
    /// Static or dynamic memory.
    pub memory: EmuMemory,
    /// Busy-wait or sleep.
    pub delay: EmuDelay,
}

impl Default for EmulatedL2Config {
    fn default() -> Self {
        EmulatedL2Config {
            capacity_chunks: 1 << 16,
            chunk_bytes: 8192,
            throughput_gbps: 4.0,
            memory: EmuMemory::Static,
            delay: EmuDelay::Busy,
        }
    }
}

/// The paper's emulated L2.
#[derive(Debug)]
pub struct EmulatedL2 {
    config: EmulatedL2Config,
    data: Vec<u8>,
    reads: u64,
    bytes_read: u64,
}

impl EmulatedL2 {
    /// Allocates (static memory: and fills) the store. Errors on a zero size or a throughput
    /// that is not positive and finite.
    pub fn new(config: EmulatedL2Config) -> Result<Self, String> {
        if config.capacity_chunks == 0 || config.chunk_bytes == 0 {
            return Err("emulated L2 needs at least one chunk of at least one byte".into());
        }
        if !(config.throughput_gbps.is_finite() && config.throughput_gbps > 0.0) {
            return Err(format!(
                "emulated L2 throughput must be positive, got {} Gbps",
                config.throughput_gbps
            ));
        }
        let data = match config.memory {
            EmuMemory::Static => {
                let bytes = config
                    .capacity_chunks
                    .checked_mul(u64::from(config.chunk_bytes))
                    .and_then(|b| usize::try_from(b).ok())
                    .ok_or("emulated L2 too large for static memory")?;
                let mut v = vec![0u8; bytes];
                for (i, chunk) in v.chunks_mut(config.chunk_bytes as usize).enumerate() {
                    fill_chunk(chunk, i as u64);
                }
                v
            }
            EmuMemory::Dynamic => Vec::new(),
        };
        Ok(EmulatedL2 {
            config,
            data,
            reads: 0,
            bytes_read: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &EmulatedL2Config {
        &self.config
    }

    /// The delay of a read of `chunks` chunks: `chunks × |c| × 8 / τ_L2`.
    pub fn read_delay(&self, chunks: u32) -> Duration {
        let bits = f64::from(chunks) * f64::from(self.config.chunk_bytes) * 8.0;
        Duration::from_secs_f64(bits / (self.config.throughput_gbps * 1e9))
    }

    /// Batch reads so far.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Reads `n` chunks at catalogue positions `first..first + n`, hands each to `f` (index in
    /// the batch, bytes), and returns once [`EmulatedL2::read_delay`]`(n)` has passed since
    /// the call began.
    pub fn read_batch(&mut self, first: u64, n: u32, mut f: impl FnMut(u32, &[u8])) {
        let start = Instant::now();
        let c = self.config.chunk_bytes as usize;
        match self.config.memory {
            EmuMemory::Static => {
                for i in 0..n {
                    let pos = (first + u64::from(i)) % self.config.capacity_chunks;
                    let at = pos as usize * c;
                    f(i, &self.data[at..at + c]);
                }
            }
            EmuMemory::Dynamic => {
                let mut batch = vec![0u8; n as usize * c];
                for (i, chunk) in batch.chunks_mut(c).enumerate() {
                    fill_chunk(chunk, first + i as u64);
                    f(i as u32, chunk);
                }
            }
        }
        self.reads += 1;
        self.bytes_read += u64::from(n) * c as u64;
        let d = self.read_delay(n);
        match self.config.delay {
            EmuDelay::Busy => {
                while start.elapsed() < d {
                    std::hint::spin_loop();
                }
            }
            EmuDelay::Sleep => {
                if let Some(rest) = d.checked_sub(start.elapsed()) {
                    std::thread::sleep(rest);
                }
            }
        }
    }
}

/// The synthetic bytes of the chunk at catalogue position `pos`: its position, then a pattern.
pub fn fill_chunk(chunk: &mut [u8], pos: u64) {
    let tag = pos.to_le_bytes();
    let n = tag.len().min(chunk.len());
    chunk[..n].copy_from_slice(&tag[..n]);
    if chunk.len() > n {
        chunk[n..].fill(pos as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_is_batch_bits_over_throughput() {
        let l2 = EmulatedL2::new(EmulatedL2Config {
            capacity_chunks: 4,
            throughput_gbps: 4.0,
            ..EmulatedL2Config::default()
        })
        .unwrap();
        // B = 10 chunks of 8 KiB at 4 Gbps: 655,360 bits / 4e9 = 163.84 µs.
        assert_eq!(l2.read_delay(10), Duration::from_nanos(163_840));
        assert_eq!(l2.read_delay(0), Duration::ZERO);
    }

    #[test]
    fn static_and_dynamic_serve_the_same_chunks() {
        let mut got = Vec::new();
        for memory in [EmuMemory::Static, EmuMemory::Dynamic] {
            let mut l2 = EmulatedL2::new(EmulatedL2Config {
                capacity_chunks: 100,
                chunk_bytes: 64,
                throughput_gbps: 1000.0,
                memory,
                delay: EmuDelay::Sleep,
            })
            .unwrap();
            let mut v = Vec::new();
            l2.read_batch(40, 10, |i, c| {
                assert_eq!(c.len(), 64);
                assert_eq!(
                    u64::from_le_bytes(c[..8].try_into().unwrap()),
                    40 + u64::from(i)
                );
                v.push(c.to_vec());
            });
            assert_eq!((l2.reads(), l2.bytes_read()), (1, 640));
            got.push(v);
        }
        assert_eq!(got[0], got[1]);
    }

    #[test]
    fn bad_configs_are_refused() {
        for c in [
            EmulatedL2Config {
                capacity_chunks: 0,
                ..EmulatedL2Config::default()
            },
            EmulatedL2Config {
                throughput_gbps: 0.0,
                ..EmulatedL2Config::default()
            },
            EmulatedL2Config {
                throughput_gbps: f64::NAN,
                ..EmulatedL2Config::default()
            },
        ] {
            assert!(EmulatedL2::new(c).is_err(), "{c:?}");
        }
    }
}
