//! 10,000 random corruptions of an L2 store's files, from a fixed seed: bit flips anywhere in
//! the data file or its index, truncations, slots swapped within and across extents, a stale
//! index (written by an earlier clean close of the same file) and mixes of them. After each,
//! the store is opened as a router opens it and every name it ever held is read back through
//! [`L2Tier`]: no Data that differs from the one stored under its name is ever handed out
//! (a corrupt slot is dropped and counted, an unreadable file is refused or created again).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use store::layout::{Superblock, SUPERBLOCK_BYTES};
use store::{Admit, L2Config, L2File, L2Tier};
use wire::{Data, Name};

const TRIALS: usize = 10_000;
const EXTENTS: u32 = 8;
const BATCH: u32 = 4;
const SLOT_BYTES: u32 = 1024;

/// xorshift64*: the test's only randomness, from a fixed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn config(dir: &Path) -> L2Config {
    L2Config {
        slot_bytes: SLOT_BYTES,
        batch: BATCH,
        queue_depth: 4,
        io_threads: 1,
        ..L2Config::new(dir.join("l2"), EXTENTS)
    }
}

/// Name TLV value and signed Data of segment `seg` of object `obj`; the content depends on
/// both, so that a Data served under another name is told apart.
fn chunk(obj: u32, seg: u64) -> (Vec<u8>, Vec<u8>) {
    let name = Name::from_uri(&format!("/c/o{obj}/seg={seg}")).unwrap();
    let content = format!(
        "object {obj} segment {seg} {}",
        "x".repeat((seg % 7) as usize)
    );
    let mut d = Data::new(name.clone(), content.into_bytes());
    d.sign_digest_sha256();
    (name.to_wire()[2..].to_vec(), d.to_wire())
}

/// Writes objects `objs` (two batches each) into the store at `cfg` and closes it cleanly.
fn fill(cfg: &L2Config, objs: std::ops::Range<u32>, expected: &mut HashMap<Vec<u8>, Vec<u8>>) {
    let mut t = L2Tier::new(L2File::open(cfg).unwrap(), 256);
    for obj in objs {
        for seg in 0..u64::from(2 * BATCH) {
            let (n, d) = chunk(obj, seg);
            loop {
                match t.admit(&n, &d) {
                    Admit::Busy => t.l2_mut().flush(),
                    a => {
                        assert!(matches!(a, Admit::Writing | Admit::Present), "{a:?}");
                        break;
                    }
                }
            }
            expected.insert(n, d);
        }
    }
    t.close().unwrap();
}

/// Reads every name in `expected` back from a freshly opened store: (names served, Data
/// served that differ from what was stored under their name).
fn read_back(cfg: &L2Config, expected: &HashMap<Vec<u8>, Vec<u8>>) -> (u64, u64) {
    let Ok(l2) = L2File::open(cfg) else {
        return (0, 0); // refused (a superblock that is not ours): nothing served
    };
    let mut t = L2Tier::new(l2, 256);
    let (mut served, mut wrong) = (HashSet::new(), 0);
    let mut check = |name: &[u8], data: Option<&[u8]>| {
        if let Some(d) = data {
            served.insert(name.to_vec());
            if expected.get(name).map(Vec::as_slice) != Some(d) {
                wrong += 1;
            }
        }
    };
    for (i, name) in expected.keys().enumerate() {
        while !t.lookup(i as u64, name) && t.holds(name) {
            // Held but the queue is full: make room.
            if !t.wait(|c| check(c.name_value, c.data)) {
                break;
            }
        }
    }
    while t.wait(|c| check(c.name_value, c.data)) {}
    (served.len() as u64, wrong)
}

#[test]
fn no_wrong_data_is_served_after_ten_thousand_random_corruptions() {
    // In RAM when there is a tmpfs: 10,000 opens sync the file often.
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let cfg = config(dir.path());
    let idx = cfg.index_path();
    let mut expected = HashMap::new();
    // An earlier clean state (its index is the stale one), then more objects that evict some
    // of the first ones' extents and overwrite their slots.
    fill(&cfg, 0..3, &mut expected);
    let stale_index = std::fs::read(&idx).unwrap();
    fill(&cfg, 3..6, &mut expected);
    let file = std::fs::read(&cfg.path).unwrap();
    let index = std::fs::read(&idx).unwrap();
    let sb = Superblock::decode(&file[..SUPERBLOCK_BYTES as usize]).unwrap();
    let slot = SLOT_BYTES as usize;
    let slot_at = |r: &mut Rng| {
        let e = r.below(u64::from(EXTENTS)) as u32;
        let s = r.below(u64::from(BATCH)) as u32;
        sb.slot_offset(e, s) as usize
    };
    // Untouched, every chunk still held is served, and only right ones.
    std::fs::write(&idx, &index).unwrap();
    let (clean, wrong) = read_back(&cfg, &expected);
    assert_eq!(wrong, 0);
    assert_eq!(
        clean,
        u64::from(EXTENTS * BATCH),
        "a full store serves every slot"
    );

    let mut rng = Rng(0x0c0a_57ed);
    let (mut served, mut wrong) = (0u64, 0u64);
    let mut kinds = [0u32; 6];
    for _ in 0..TRIALS {
        let mut f = file.clone();
        let mut ix = Some(index.clone());
        let kind = rng.below(6) as usize;
        kinds[kind] += 1;
        let flips = 1 + rng.below(4);
        match kind {
            // Bit flips anywhere in the data file.
            0 => {
                for _ in 0..flips {
                    let at = rng.below(f.len() as u64) as usize;
                    f[at] ^= 1 << rng.below(8);
                }
            }
            // Bit flips inside slots (headers, names, payloads): the likeliest to be read.
            1 => {
                for _ in 0..flips {
                    let at = slot_at(&mut rng) + rng.below(slot as u64) as usize;
                    f[at] ^= 1 << rng.below(8);
                }
            }
            // A truncated file (it is extended back and scanned).
            2 => f.truncate(rng.below(f.len() as u64) as usize),
            // Two slots swapped (same extent or not), index kept or not.
            3 => {
                let (a, b) = (slot_at(&mut rng), slot_at(&mut rng));
                let sa = f[a..a + slot].to_vec();
                f.copy_within(b..b + slot, a);
                f[b..b + slot].copy_from_slice(&sa);
                if rng.below(2) == 0 {
                    ix = None;
                }
            }
            // The stale index of the earlier clean close, sometimes with a flipped slot too.
            4 => {
                ix = Some(stale_index.clone());
                if rng.below(2) == 0 {
                    let at = slot_at(&mut rng) + rng.below(slot as u64) as usize;
                    f[at] ^= 1 << rng.below(8);
                }
            }
            // Bit flips in the index file.
            _ => {
                let x = ix.as_mut().unwrap();
                for _ in 0..flips {
                    let at = rng.below(x.len() as u64) as usize;
                    x[at] ^= 1 << rng.below(8);
                }
            }
        }
        std::fs::write(&cfg.path, &f).unwrap();
        match &ix {
            Some(x) => std::fs::write(&idx, x).unwrap(),
            None => {
                let _ = std::fs::remove_file(&idx);
            }
        }
        let (s, w) = read_back(&cfg, &expected);
        served += s;
        wrong += w;
    }
    println!(
        "{TRIALS} corruptions (flips {} + {} in slots, truncations {}, swaps {}, stale index {}, \
         index flips {}): {served} Data served, {wrong} wrong",
        kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5]
    );
    assert_eq!(wrong, 0, "wrong Data served");
    assert!(
        served > TRIALS as u64,
        "the stores served next to nothing: {served}"
    );
}
