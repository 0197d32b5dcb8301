//! What the configuration asks of the fixed shares and index widths between it and the
//! engines and face tables, checked at load so that nothing is clamped silently at start-up:
//! the PIT each worker gets (`pit.capacity` over the workers, at least 64 entries each), the
//! on-demand quota each I/O loop gets (`faces.max_on_demand_faces` over the loops of a sharded
//! router, at least one each), and the face slots the engines index per-face state by (the
//! face id space of `faces.max_faces` over the loops, at most
//! [`engine::table::pit_cs::MAX_FACE_SLOTS`]; `faces.max_faces`' own range keeps it far
//! below).

use engine::table::pit_cs::MAX_FACE_SLOTS;

use super::{Config, Threads};

/// Fewest PIT entries a worker's engine takes.
pub const MIN_PIT_PER_WORKER: usize = 64;

/// Checks the shares of `c` on a machine of `cores` cores: one line naming the key.
pub(super) fn validate(c: &Config, cores: usize) -> Result<(), String> {
    // As the router starts: the workers, and one I/O loop per worker when sharded.
    let workers = c.worker_count(cores).clamp(1, 255);
    let loops = if c.thread_mode(cores) == Threads::Sharded {
        workers
    } else {
        1
    };
    if c.pit.capacity < MIN_PIT_PER_WORKER * workers {
        return Err(format!(
            "pit.capacity: {} is less than {MIN_PIT_PER_WORKER} entries for each of the \
             {workers} workers (at least {})",
            c.pit.capacity,
            MIN_PIT_PER_WORKER * workers
        ));
    }
    let quota = c.faces.max_on_demand_faces;
    if quota > 0 && quota < loops {
        return Err(format!(
            "faces.max_on_demand_faces: {quota} is less than one for each of the {loops} I/O \
             loops (workers.threads = \"sharded\"; 0 turns on-demand faces off)"
        ));
    }
    face_slots(c.faces.max_faces, loops)
}

/// Checks that the face ids of `loops` face tables of `max_faces` together fit the engines'
/// per-face state.
fn face_slots(max_faces: usize, loops: usize) -> Result<(), String> {
    let per_loop = max_faces.div_ceil(loops.max(1));
    let slots = face::table::FaceIdSpace::for_tables(loops, per_loop).slots();
    if slots > MAX_FACE_SLOTS {
        return Err(format!(
            "faces.max_faces: {max_faces} needs {slots} face slots over {loops} I/O loops, more \
             than the engine's {MAX_FACE_SLOTS}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str, cores: usize) -> String {
        let c: Config = toml::from_str(text).unwrap();
        validate(&c, cores).unwrap_err()
    }

    #[test]
    fn shares_below_one_per_thread_are_refused() {
        assert!(validate(&Config::default(), 2).is_ok());
        assert!(validate(&Config::default(), 64).is_ok());
        let e = err("[workers]\ncount = 4\n[pit]\ncapacity = 255\n", 2);
        assert!(e.starts_with("pit.capacity: 255 "), "{e}");
        assert!(e.contains("at least 256"), "{e}");
        let c: Config = toml::from_str("[workers]\ncount = 4\n[pit]\ncapacity = 256\n").unwrap();
        assert!(validate(&c, 2).is_ok());
        // Sharded: one I/O loop per worker, each at least one on-demand face.
        let sharded = "[workers]\nthreads = \"sharded\"\ncount = 4\n[faces]\n";
        let e = err(&format!("{sharded}max_on_demand_faces = 3\n"), 2);
        assert!(e.starts_with("faces.max_on_demand_faces: 3 "), "{e}");
        for ok in ["max_on_demand_faces = 4\n", "max_on_demand_faces = 0\n"] {
            let c: Config = toml::from_str(&format!("{sharded}{ok}")).unwrap();
            assert!(validate(&c, 2).is_ok(), "{ok}");
        }
        // Not sharded: one loop holds every face.
        let c: Config =
            toml::from_str("[workers]\ncount = 4\n[faces]\nmax_on_demand_faces = 1\n").unwrap();
        assert!(validate(&c, 2).is_ok());
        for e in [
            err("[workers]\ncount = 4\n[pit]\ncapacity = 64\n", 2),
            err(&format!("{sharded}max_on_demand_faces = 1\n"), 2),
        ] {
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn face_ids_beyond_the_engines_slots_are_refused() {
        // The largest max_faces the key's range allows fits over any number of loops.
        for loops in [1, 2, 64, 255] {
            assert!(face_slots(1 << 20, loops).is_ok(), "{loops}");
        }
        let e = face_slots(1 << 23, 4).unwrap_err();
        assert!(e.starts_with("faces.max_faces: 8388608 needs "), "{e}");
        assert!(e.contains(&MAX_FACE_SLOTS.to_string()), "{e}");
    }
}
