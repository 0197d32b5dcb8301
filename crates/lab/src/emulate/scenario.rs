//! The scenario file: nodes, links, content placement and consumer load, in TOML.
//!
//! The topology is a chain: the consumer, then the routers in the order `[[node]]` lists them,
//! each `[[link]]` joining two neighbours of the chain. Content `i` (of `contents`) has
//! `segments` chunks named `<prefix>/c<i>/seg=<n>` of `segment_bytes` bytes each; a router
//! `holds = [first, end)` has contents `first..end` in its L2 store when a run starts.

use serde::Deserialize;

/// The built-in scenario of `--scenario nbcache`.
pub const NBCACHE: &str = include_str!("../../../../scenarios/nbcache.toml");

/// The consumer's node name in `[[link]]`.
pub const CONSUMER: &str = "consumer";

/// Most routers in a chain.
pub const MAX_NODES: usize = 16;

/// Most chunks in a catalogue.
pub const MAX_CHUNKS: u64 = 4_000_000;

/// A scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Its name, for reports.
    pub name: String,
    /// The catalogue.
    pub content: Content,
    /// The consumer's load.
    pub consumer: ConsumerLoad,
    /// Settings every router shares.
    #[serde(default)]
    pub router: RouterSettings,
    /// The routers, from the consumer's neighbour to the far end.
    #[serde(rename = "node")]
    pub nodes: Vec<Node>,
    /// The links of the chain.
    #[serde(rename = "link", default)]
    pub links: Vec<Link>,
}

/// The catalogue of contents.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Content {
    /// Name prefix of every content.
    pub prefix: String,
    /// Contents.
    pub contents: u64,
    /// Chunks per content.
    pub segments: u64,
    /// Content bytes per chunk.
    pub segment_bytes: usize,
    /// Whether a producer behind the last router answers what no store holds during the runs
    /// (it always serves the placement).
    #[serde(default)]
    pub producer_in_run: bool,
}

/// The consumer's load: `requests` unique names, drawn at random from the catalogue, sent at
/// `rate_pps` (open loop).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumerLoad {
    /// Interests per run, each for another name.
    pub requests: u64,
    /// Interests per second offered.
    pub rate_pps: u64,
    /// InterestLifetime; an Interest unanswered this long counts as a timeout.
    pub lifetime_ms: u64,
    /// Seed of the name draw.
    #[serde(default = "one")]
    pub seed: u64,
}

fn one() -> u64 {
    1
}

/// What every router of the chain is configured with (besides its case).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterSettings {
    /// `workers.count`.
    pub workers: usize,
    /// `store.bypass_threshold` (cases with `aqm`).
    pub threshold: usize,
    /// `store.queue_depth`: L2 reads in flight per worker.
    pub queue_depth: usize,
    /// `workers.ring_capacity`.
    pub ring_capacity: usize,
    /// `workers.buffers`.
    pub buffers: usize,
    /// `pit.capacity`.
    pub pit_capacity: usize,
    /// The thresholds of `--sweep threshold`.
    pub thresholds: Vec<usize>,
}

impl Default for RouterSettings {
    fn default() -> Self {
        RouterSettings {
            workers: 1,
            threshold: 64,
            queue_depth: 1024,
            ring_capacity: 4096,
            buffers: 16384,
            pit_capacity: 131_072,
            thresholds: vec![1, 16, 64, 200, 400, 600],
        }
    }
}

/// One router.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Its name (also its network namespace's suffix).
    pub name: String,
    /// Contents `[first, end)` in its store.
    #[serde(default)]
    pub holds: [u64; 2],
    /// Most reads per second of its store (0: the disk's own speed).
    #[serde(default)]
    pub read_iops: u64,
}

/// A link of the chain.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// Its two ends (node names, or `consumer`).
    pub between: [String; 2],
    /// Rate in Mbit/s each way (`tc tbf`; 0: unlimited).
    #[serde(default)]
    pub rate_mbit: u64,
}

impl Scenario {
    /// Parses and checks a scenario; an error names the key.
    pub fn from_toml(text: &str) -> Result<Scenario, String> {
        let s: Scenario = toml::from_str(text).map_err(|e| e.to_string().replace('\n', " "))?;
        s.validate()?;
        Ok(s)
    }

    /// `nbcache` (the built-in scenario), or the file at `arg`.
    pub fn load(arg: &str) -> Result<Scenario, String> {
        if arg == "nbcache" {
            return Scenario::from_toml(NBCACHE).map_err(|e| format!("scenario nbcache: {e}"));
        }
        let text =
            std::fs::read_to_string(arg).map_err(|e| format!("cannot read scenario {arg}: {e}"))?;
        Scenario::from_toml(&text).map_err(|e| format!("scenario {arg}: {e}"))
    }

    /// Checks every key (after overrides); an error names the key.
    pub fn validate(&self) -> Result<(), String> {
        let c = &self.content;
        wire::Name::from_uri(&c.prefix).map_err(|e| format!("content.prefix: {e}"))?;
        if c.contents == 0 || c.segments == 0 || c.contents.saturating_mul(c.segments) > MAX_CHUNKS
        {
            return Err(format!(
                "content.contents x content.segments: must be 1..={MAX_CHUNKS} chunks"
            ));
        }
        if !(1..=8000).contains(&c.segment_bytes) {
            return Err(format!(
                "content.segment_bytes: {} is outside 1..=8000",
                c.segment_bytes
            ));
        }
        let l = &self.consumer;
        if l.requests == 0 || l.requests > c.contents * c.segments {
            return Err(format!(
                "consumer.requests: {} is outside 1..={} (the catalogue: each name once)",
                l.requests,
                c.contents * c.segments
            ));
        }
        if !(1..=10_000_000).contains(&l.rate_pps) {
            return Err(format!(
                "consumer.rate_pps: {} is outside 1..=10000000",
                l.rate_pps
            ));
        }
        if !(100..=120_000).contains(&l.lifetime_ms) {
            return Err(format!(
                "consumer.lifetime_ms: {} is outside 100..=120000",
                l.lifetime_ms
            ));
        }
        if self.nodes.is_empty() || self.nodes.len() > MAX_NODES {
            return Err(format!("node: 1..={MAX_NODES} routers"));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let ok = !n.name.is_empty()
                && n.name.len() <= 8
                && n.name.chars().all(|ch| ch.is_ascii_alphanumeric())
                && n.name != CONSUMER;
            if !ok {
                return Err(format!(
                    "node {:?}: a name of 1..=8 letters and digits, not `consumer`",
                    n.name
                ));
            }
            if self.nodes[..i].iter().any(|m| m.name == n.name) {
                return Err(format!("node {:?}: named twice", n.name));
            }
            let [first, end] = n.holds;
            if first > end || end > c.contents {
                return Err(format!(
                    "node {}: holds [{first}, {end}) is not within [0, {}]",
                    n.name, c.contents
                ));
            }
        }
        self.router.validate()?;
        self.check_chain()
    }

    /// The links must be the chain consumer - node 1 - ... - node n, each pair once.
    fn check_chain(&self) -> Result<(), String> {
        let order: Vec<&str> = std::iter::once(CONSUMER)
            .chain(self.nodes.iter().map(|n| n.name.as_str()))
            .collect();
        if self.links.len() != order.len() - 1 {
            return Err(format!(
                "link: a chain of {} nodes needs {} links, not {}",
                order.len(),
                order.len() - 1,
                self.links.len()
            ));
        }
        for pair in order.windows(2) {
            let n = self
                .links
                .iter()
                .filter(|l| {
                    let [a, b] = &l.between;
                    (a == pair[0] && b == pair[1]) || (a == pair[1] && b == pair[0])
                })
                .count();
            if n != 1 {
                return Err(format!(
                    "link: only chains are emulated; {} - {} must be linked once (consumer first, then the nodes in order)",
                    pair[0], pair[1]
                ));
            }
        }
        Ok(())
    }

    /// The rate of the link between the consumer or node `i - 1` and node `i` (0: unlimited).
    pub fn link_rate_mbit(&self, i: usize) -> u64 {
        let a = if i == 0 {
            CONSUMER
        } else {
            &self.nodes[i - 1].name
        };
        let b = &self.nodes[i].name;
        self.links
            .iter()
            .find(|l| {
                let [x, y] = &l.between;
                (x == a && y == b) || (x == b && y == a)
            })
            .map_or(0, |l| l.rate_mbit)
    }

    /// Chunks in the catalogue.
    pub fn chunks(&self) -> u64 {
        self.content.contents * self.content.segments
    }

    /// Chunks node `i` holds.
    pub fn held_chunks(&self, i: usize) -> u64 {
        let [first, end] = self.nodes[i].holds;
        (end - first) * self.content.segments
    }

    /// The first node (from the consumer) whose store holds content `c`, if any.
    pub fn holder_of(&self, c: u64) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| (n.holds[0]..n.holds[1]).contains(&c))
    }
}

impl RouterSettings {
    fn validate(&self) -> Result<(), String> {
        let range = |key: &str, v: usize, lo: usize, hi: usize| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("router.{key}: {v} is outside {lo}..={hi}"))
            }
        };
        range("workers", self.workers, 1, 64)?;
        range("threshold", self.threshold, 1, 1 << 20)?;
        range("queue_depth", self.queue_depth, 1, 4096)?;
        range("ring_capacity", self.ring_capacity, 64, 1 << 20)?;
        range("buffers", self.buffers, 256, 1 << 22)?;
        range("pit_capacity", self.pit_capacity, 64, 1 << 30)?;
        if self.thresholds.is_empty() || self.thresholds.len() > 64 {
            return Err("router.thresholds: 1..=64 values".into());
        }
        for &t in &self.thresholds {
            range("thresholds", t, 1, 1 << 20)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_scenario_is_the_papers() {
        let s = Scenario::load("nbcache").unwrap();
        let holds: Vec<u64> = s.nodes.iter().map(|n| n.holds[1] - n.holds[0]).collect();
        assert_eq!(holds, [200, 75, 50, 500]);
        assert_eq!(s.content.contents, 500);
        assert_eq!(s.content.segment_bytes, 4096);
        assert_eq!((s.consumer.rate_pps, s.router.threshold), (100_000, 64));
        assert!(s.nodes[0].read_iops > 0);
        assert_eq!(s.holder_of(0), Some(0));
        assert_eq!(s.holder_of(210), Some(1));
        assert_eq!(s.holder_of(499), Some(3));
        assert_eq!(s.link_rate_mbit(0), 10_000);
        assert_eq!(s.held_chunks(3), s.chunks());
    }

    fn tiny(extra: &str, links: &str) -> String {
        format!(
            "name = \"t\"\n[content]\nprefix = \"/t\"\ncontents = 4\nsegments = 2\n\
             segment_bytes = 100\n[consumer]\nrequests = 8\nrate_pps = 100\nlifetime_ms = 1000\n\
             {extra}[[node]]\nname = \"A\"\nholds = [0, 2]\n[[node]]\nname = \"B\"\nholds = [0, 4]\n{links}"
        )
    }

    const CHAIN: &str =
        "[[link]]\nbetween = [\"consumer\", \"A\"]\n[[link]]\nbetween = [\"B\", \"A\"]\n";

    #[test]
    fn errors_name_the_key() {
        assert!(Scenario::from_toml(&tiny("", CHAIN)).is_ok());
        let cases = [
            (tiny("[router]\nqueue_depth = 0\n", CHAIN), "router.queue_depth"),
            (tiny("", "[[link]]\nbetween = [\"consumer\", \"A\"]\n"), "link"),
            (
                tiny(
                    "",
                    "[[link]]\nbetween = [\"consumer\", \"B\"]\n[[link]]\nbetween = [\"A\", \"B\"]\n",
                ),
                "only chains",
            ),
            (tiny("", CHAIN).replace("requests = 8", "requests = 9"), "consumer.requests"),
            (tiny("", CHAIN).replace("holds = [0, 4]", "holds = [3, 5]"), "node B"),
            (tiny("", CHAIN).replace("name = \"A\"", "name = \"A-1\""), "node \"A-1\""),
            (tiny("", CHAIN).replace("segments = 2", "segmnts = 2"), "segmnts"),
        ];
        for (text, key) in cases {
            let e = Scenario::from_toml(&text).unwrap_err();
            assert!(e.contains(key), "{key}: {e}");
        }
    }
}
