//! Bringing up the loopback interface of a new network namespace (it starts down), so
//! a sandboxed command without network can still reach servers it starts itself on
//! 127.0.0.1. One `RTM_NEWLINK` request over a route netlink socket, built by hand: the
//! message is five integers.

use std::io;

use rustix::net::netlink::SocketAddrNetlink;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};

/// `RTM_NEWLINK`.
const RTM_NEWLINK: u16 = 16;
/// `NLM_F_REQUEST | NLM_F_ACK`.
const REQUEST_ACK: u16 = 1 | 4;
/// `NLMSG_ERROR`: the kernel's answer, an error code (0 is success).
const NLMSG_ERROR: u16 = 2;
/// `IFF_UP`.
const IFF_UP: u32 = 1;
/// The loopback interface is always the first of a new namespace.
const LO_INDEX: i32 = 1;

/// Sets `lo` up.
pub(super) fn loopback_up() -> io::Result<()> {
    // No protocol is NETLINK_ROUTE (0).
    let sock = rustix::net::socket(AddressFamily::NETLINK, SocketType::RAW, None)?;
    // struct nlmsghdr (16 bytes) + struct ifinfomsg (16 bytes), native endian.
    let mut msg = Vec::with_capacity(32);
    msg.extend_from_slice(&32u32.to_ne_bytes());
    msg.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    msg.extend_from_slice(&REQUEST_ACK.to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    msg.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel fills it in
    msg.extend_from_slice(&[0, 0]); // family AF_UNSPEC, padding
    msg.extend_from_slice(&0u16.to_ne_bytes()); // device type
    msg.extend_from_slice(&LO_INDEX.to_ne_bytes());
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // flags
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // which flags change
    rustix::net::sendto(&sock, &msg, SendFlags::empty(), &SocketAddrNetlink::new(0, 0))?;
    let mut answer = [0u8; 64];
    let (n, _) = rustix::net::recv(&sock, &mut answer, RecvFlags::empty())?;
    let field = |at: usize| answer.get(at..at + 4).and_then(|b| b.try_into().ok());
    let kind = answer.get(4..6).and_then(|b| b.try_into().ok()).map(u16::from_ne_bytes);
    match (n >= 20, kind, field(16).map(i32::from_ne_bytes)) {
        (true, Some(NLMSG_ERROR), Some(0)) => Ok(()),
        (true, Some(NLMSG_ERROR), Some(code)) => Err(io::Error::from_raw_os_error(-code)),
        _ => Err(io::Error::other("unexpected netlink answer")),
    }
}
