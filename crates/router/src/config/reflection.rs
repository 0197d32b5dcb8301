//! `[faces] unproven_send_bytes_per_s`: the budget of bytes per second that all on-demand UDP
//! faces whose address is unproven are sent together (a token bucket per I/O loop, each its
//! share; see `face::table`'s proof of address). A forged source address can make the router
//! send Data to a victim that never asked; a face proves its address by answering (a Data, a
//! Nack, an NDNLPv2 Ack of a TxSequence the router sent it), and until then it shares this
//! budget with every other unproven face. 0 turns the bound off.

use super::Faces;

/// Largest value the key takes (1 TiB/s: no bound in practice).
const MAX_BYTES_PER_S: u64 = 1 << 40;
/// Smallest non-zero value: one largest packet per second.
const MIN_BYTES_PER_S: u64 = wire::MAX_NDN_PACKET_BYTES as u64;

/// Checks the range of `faces.unproven_send_bytes_per_s`: 0, or one largest packet to 2^40.
pub(super) fn validate(f: &Faces) -> Result<(), String> {
    let v = f.unproven_send_bytes_per_s;
    if v != 0 && !(MIN_BYTES_PER_S..=MAX_BYTES_PER_S).contains(&v) {
        return Err(format!(
            "faces.unproven_send_bytes_per_s: {v} is out of range (0 to turn it off, or \
             {MIN_BYTES_PER_S} to 2^40)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_or_one_packet_per_second_to_two_to_the_forty() {
        let with = |v: u64| Faces {
            unproven_send_bytes_per_s: v,
            ..Faces::default()
        };
        assert!(validate(&Faces::default()).is_ok());
        assert!(validate(&with(0)).is_ok());
        assert!(validate(&with(MIN_BYTES_PER_S)).is_ok());
        let e = validate(&with(MIN_BYTES_PER_S - 1)).unwrap_err();
        assert!(e.starts_with("faces.unproven_send_bytes_per_s:"), "{e}");
        assert!(validate(&with(MAX_BYTES_PER_S + 1)).is_err());
        let e = super::super::Config::from_toml("[faces]\nunproven_send_bytes_per_s = 5\n")
            .unwrap_err();
        assert!(e.contains("faces.unproven_send_bytes_per_s"), "{e}");
    }
}
