//! The contents: chunk `k` of the catalogue is segment `k mod S` of content `k div S`, named
//! `<prefix>/c<content>/seg=<segment>`, its payload a pattern of its number, signed
//! DigestSha256 as a producer would.

use wire::{tt, Component, Data, MetaInfo, Name, NameView};

use super::scenario::Content;

/// The catalogue of a scenario.
#[derive(Debug, Clone)]
pub struct Catalogue {
    prefix: Name,
    /// The prefix's components as encoded (the start of every name's value).
    prefix_value: Vec<u8>,
    segments: u64,
    chunks: u64,
    segment_bytes: usize,
}

impl Catalogue {
    /// The catalogue of `[content]` (already checked).
    pub fn new(c: &Content) -> Catalogue {
        let prefix = Name::from_uri(&c.prefix).unwrap_or_default();
        let mut prefix_value = Vec::new();
        for comp in &prefix.components {
            comp.encode(&mut prefix_value);
        }
        Catalogue {
            prefix,
            prefix_value,
            segments: c.segments,
            chunks: c.contents * c.segments,
            segment_bytes: c.segment_bytes,
        }
    }

    /// The common prefix.
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// Chunks in the catalogue.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// The chunks of contents `[first, end)`.
    pub fn chunks_of(&self, [first, end]: [u64; 2]) -> std::ops::Range<u64> {
        first * self.segments..end * self.segments
    }

    /// The name of chunk `k`.
    pub fn name(&self, k: u64) -> Name {
        let content = format!("c{}", k / self.segments);
        self.prefix
            .clone()
            .with(Component::generic(content.into_bytes()))
            .with(Component::segment(k % self.segments))
    }

    /// The chunk number of a name of the catalogue.
    pub fn index_of(&self, name: &NameView<'_>) -> Option<u64> {
        let n = name.len();
        if n != self.prefix.len() + 2 || !name.value().starts_with(&self.prefix_value) {
            return None;
        }
        let seg = name.get(n - 1)?;
        if u32::from(seg.typ) != tt::SEGMENT {
            return None;
        }
        let content = name.get(n - 2)?;
        let digits = content.value.strip_prefix(b"c")?;
        let c: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
        let s = seg.as_number()?;
        let k = c.checked_mul(self.segments)?.checked_add(s)?;
        (s < self.segments && k < self.chunks).then_some(k)
    }

    /// Chunk `k` as an encoded, signed Data packet.
    pub fn data(&self, k: u64) -> Vec<u8> {
        let payload: Vec<u8> = k
            .to_be_bytes()
            .iter()
            .copied()
            .cycle()
            .take(self.segment_bytes)
            .collect();
        let mut d = Data::new(self.name(k), payload);
        d.meta_info = Some(MetaInfo {
            content_type: None,
            freshness_ms: Some(3_600_000),
            final_block_id: Some(Component::segment(self.segments - 1)),
        });
        d.sign_digest_sha256();
        d.to_wire()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{DataView, Limits};

    #[test]
    fn names_map_back_to_their_chunk() {
        let c = Catalogue::new(&Content {
            prefix: "/emu".into(),
            contents: 10,
            segments: 7,
            segment_bytes: 100,
            producer_in_run: false,
        });
        assert_eq!(c.chunks(), 70);
        assert_eq!(c.chunks_of([2, 4]), 14..28);
        for k in [0, 6, 7, 69] {
            let w = c.data(k);
            let d = DataView::decode(&w, &Limits::default()).unwrap();
            assert_eq!(c.index_of(&d.name()), Some(k));
            assert_eq!(d.content().unwrap().len(), 100);
            assert!(d.verify_digest_sha256());
        }
        assert_eq!(c.name(15).to_string(), "/emu/c2/seg=1");
        for other in [
            "/emu/c2/seg=7",
            "/emu/c10/seg=0",
            "/emu/x2/seg=1",
            "/emu/c2",
            "/e/c2/seg=1",
        ] {
            let n = Name::from_uri(other).unwrap();
            let w = n.to_wire();
            let v = NameView::decode(&w, &Limits::default()).unwrap();
            assert_eq!(c.index_of(&v), None, "{other}");
        }
    }
}
