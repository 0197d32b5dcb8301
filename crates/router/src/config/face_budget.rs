//! `[faces] on_demand_faces_per_s` and `on_demand_faces_burst`: the creation budget of
//! on-demand faces (UDP and Ethernet), a token bucket per I/O loop, each its share (see
//! `face::table`'s creation budget). A datagram from a new remote past it is dropped and
//! counted (`on_demand_refused_budget`); faces that exist are never touched by it, and a
//! quarter of the burst is kept for hosts that made no on-demand face in the last 10 s.

use super::Faces;

/// Largest value of either key: ten million faces (per second, or at once).
const MAX_FACES: u64 = 10_000_000;

/// Checks the two keys: the rate 0 (no bound) or 1 to 10^7, the burst 1 to 10^7.
pub(super) fn validate(f: &Faces) -> Result<(), String> {
    if f.on_demand_faces_per_s > MAX_FACES {
        return Err(format!(
            "faces.on_demand_faces_per_s: {} is out of range (0 to turn it off, or 1 to {MAX_FACES})",
            f.on_demand_faces_per_s
        ));
    }
    if !(1..=MAX_FACES).contains(&f.on_demand_faces_burst) {
        return Err(format!(
            "faces.on_demand_faces_burst: {} is out of range (1 to {MAX_FACES})",
            f.on_demand_faces_burst
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Config;

    #[test]
    fn the_budget_is_read_and_its_range_checked() {
        let d = Config::default();
        let b = d.face_bounds();
        assert_eq!(
            (b.on_demand_faces_per_s, b.on_demand_faces_burst),
            (
                face::table::DEFAULT_ON_DEMAND_FACES_PER_S,
                face::table::DEFAULT_ON_DEMAND_FACES_BURST
            )
        );
        let c =
            Config::from_toml("[faces]\non_demand_faces_per_s = 0\non_demand_faces_burst = 7\n")
                .unwrap();
        let b = c.face_bounds();
        assert_eq!((b.on_demand_faces_per_s, b.on_demand_faces_burst), (0, 7));
        for (text, key) in [
            (
                "on_demand_faces_per_s = 10000001",
                "faces.on_demand_faces_per_s:",
            ),
            ("on_demand_faces_burst = 0", "faces.on_demand_faces_burst:"),
            (
                "on_demand_faces_burst = 10000001",
                "faces.on_demand_faces_burst:",
            ),
        ] {
            let e = Config::from_toml(&format!("[faces]\n{text}\n")).unwrap_err();
            assert!(e.starts_with(key), "{text}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
