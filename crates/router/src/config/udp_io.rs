//! `[workers] udp_io` and `udp_gro`: how the UDP sockets receive.

use serde::Deserialize;

/// How the UDP sockets receive (`[workers] udp_io`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum UdpIo {
    /// The cheaper of the two as measured on the project's machine (docs/performance.md):
    /// [`UdpIo::Recvmmsg`].
    #[default]
    Auto,
    /// A multishot `recvmsg` on io_uring into a ring of provided buffers: no system call per
    /// datagram or batch; `recvmmsg` where the kernel refuses io_uring (before Linux 6.0,
    /// `kernel.io_uring_disabled`, seccomp), with one log line.
    Uring,
    /// `recvmmsg` batches (up to 64 datagrams a call) when a socket is readable.
    Recvmmsg,
}

impl UdpIo {
    /// Its name in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            UdpIo::Auto => "auto",
            UdpIo::Uring => "uring",
            UdpIo::Recvmmsg => "recvmmsg",
        }
    }

    /// What the face tables are set up with; `gro` (`[workers] udp_gro`) applies to io_uring
    /// receives only.
    pub fn rx(self, gro: bool) -> face::UdpRx {
        match self {
            UdpIo::Uring => face::UdpRx::Uring { gro },
            UdpIo::Auto | UdpIo::Recvmmsg => face::UdpRx::Recvmmsg,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn udp_io_parses_and_maps_to_the_face_tables_setting() {
        let c: Config = toml::from_str("[workers]\nudp_io = \"recvmmsg\"\nudp_gro = true").unwrap();
        assert_eq!(c.workers.udp_io, UdpIo::Recvmmsg);
        assert_eq!(
            c.workers.udp_io.rx(c.workers.udp_gro),
            face::UdpRx::Recvmmsg
        );
        let d = Config::default();
        assert_eq!(d.workers.udp_io, UdpIo::Auto);
        assert_eq!(d.workers.udp_io.rx(true), face::UdpRx::Recvmmsg);
        assert!(!d.workers.udp_gro);
        assert_eq!(UdpIo::Uring.rx(true), face::UdpRx::Uring { gro: true });
        assert!(toml::from_str::<Config>("[workers]\nudp_io = \"epoll\"").is_err());
        for m in [UdpIo::Auto, UdpIo::Uring, UdpIo::Recvmmsg] {
            let t = format!("[workers]\nudp_io = \"{}\"", m.name());
            assert_eq!(toml::from_str::<Config>(&t).unwrap().workers.udp_io, m);
        }
    }
}
