//! TCP socket setup: listen (backlog, SO_REUSEPORT), accept4, timeouts, addresses.

use std::io;
use std::mem;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::cvt;

fn to_raw(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe {
                (&mut storage as *mut libc::sockaddr_storage)
                    .cast::<libc::sockaddr_in>()
                    .write(sin)
            };
            mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe {
                (&mut storage as *mut libc::sockaddr_storage)
                    .cast::<libc::sockaddr_in6>()
                    .write(sin6)
            };
            mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

fn from_raw(storage: &libc::sockaddr_storage) -> io::Result<SocketAddr> {
    match storage.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin = unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Ok(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6 = unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Ok(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        f => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected address family {f}"),
        )),
    }
}

fn setsockopt_int(fd: impl AsFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: value lives for the call and its size is passed.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// A new TCP socket for `addr`'s family, close-on-exec, optionally non-blocking.
pub fn tcp_socket(addr: &SocketAddr, nonblocking: bool) -> io::Result<OwnedFd> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    let mut ty = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    if nonblocking {
        ty |= libc::SOCK_NONBLOCK;
    }
    // SAFETY: socket() takes plain integers.
    let fd = cvt(unsafe { libc::socket(family, ty, 0) })?;
    // SAFETY: fd was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Binds and listens: SO_REUSEADDR always, SO_REUSEPORT when asked (one listener per worker).
pub fn listen(addr: SocketAddr, backlog: i32, reuseport: bool) -> io::Result<OwnedFd> {
    let fd = tcp_socket(&addr, false)?;
    setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    if reuseport {
        setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
    }
    bind(&fd, &addr)?;
    // SAFETY: listen() takes plain integers.
    cvt(unsafe { libc::listen(fd.as_fd().as_raw_fd(), backlog) })?;
    Ok(fd)
}

/// `connect` or `bind`: a call that takes a descriptor and a socket address.
type AddrCall = unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int;

fn with_addr(call: AddrCall, fd: impl AsFd, addr: &SocketAddr) -> io::Result<()> {
    let (storage, len) = to_raw(addr);
    // SAFETY: storage holds a valid sockaddr of length len; the descriptor is borrowed, so
    // open for the call.
    cvt(unsafe {
        call(
            fd.as_fd().as_raw_fd(),
            (&storage as *const libc::sockaddr_storage).cast(),
            len,
        )
    })?;
    Ok(())
}

/// Connects `fd` to `addr`; on a non-blocking socket this returns `EINPROGRESS`.
pub fn connect(fd: impl AsFd, addr: &SocketAddr) -> io::Result<()> {
    with_addr(libc::connect, fd, addr)
}

/// Binds a socket to an address (a client's source address; port 0: any).
pub fn bind(fd: impl AsFd, addr: &SocketAddr) -> io::Result<()> {
    with_addr(libc::bind, fd, addr)
}

/// Accepts one connection (accept4), close-on-exec, non-blocking when asked.
pub fn accept(listener: impl AsFd, nonblocking: bool) -> io::Result<OwnedFd> {
    let mut flags = libc::SOCK_CLOEXEC;
    if nonblocking {
        flags |= libc::SOCK_NONBLOCK;
    }
    // SAFETY: null address pointers are allowed by accept4.
    let fd = cvt(unsafe {
        libc::accept4(
            listener.as_fd().as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            flags,
        )
    })?;
    // SAFETY: fd was just returned by accept4 and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The address a socket is bound to.
pub fn local_addr(fd: impl AsFd) -> io::Result<SocketAddr> {
    // SAFETY: zeroed sockaddr_storage is valid; len is its size.
    let mut storage: libc::sockaddr_storage = unsafe { mem::zeroed() };
    let mut len = mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: storage and len are valid for writes.
    cvt(unsafe {
        libc::getsockname(
            fd.as_fd().as_raw_fd(),
            (&mut storage as *mut libc::sockaddr_storage).cast(),
            &mut len,
        )
    })?;
    from_raw(&storage)
}

/// Sets SO_RCVTIMEO and SO_SNDTIMEO: a blocking accept / read / write returns EAGAIN after `d`,
/// which is how blocking models notice shutdown and idle timeouts without signals.
pub fn set_timeouts(fd: impl AsFd, d: Duration) -> io::Result<()> {
    timeouts(fd, d, &[libc::SO_RCVTIMEO, libc::SO_SNDTIMEO])
}

/// SO_RCVTIMEO alone: how long a blocking read waits.
pub fn set_read_timeout(fd: impl AsFd, d: Duration) -> io::Result<()> {
    timeouts(fd, d, &[libc::SO_RCVTIMEO])
}

fn timeouts(fd: impl AsFd, d: Duration, opts: &[libc::c_int]) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: d.as_secs() as libc::time_t,
        tv_usec: d.subsec_micros() as libc::suseconds_t,
    };
    for &opt in opts {
        // SAFETY: tv lives for the call and its size is passed.
        cvt(unsafe {
            libc::setsockopt(
                fd.as_fd().as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&tv as *const libc::timeval).cast(),
                mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        })?;
    }
    Ok(())
}

/// IP_BIND_ADDRESS_NO_PORT: a client bound to a source address gets its port at connect()
/// time, per destination, so many source addresses multiply the ports available.
pub fn set_bind_no_port(fd: impl AsFd) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT, 1)
}

/// TCP_DEFER_ACCEPT: accept() returns a connection only once its first data has arrived (or
/// after `secs`), so a server's first read finds the request (nginx's `listen ... deferred`).
pub fn set_defer_accept(fd: impl AsFd, secs: i32) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_DEFER_ACCEPT, secs)
}

/// Disables Nagle's algorithm.
pub fn set_nodelay(fd: impl AsFd) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
}

/// SO_LINGER with a zero timeout: close() sends RST (a client simulating a reset).
pub fn set_linger_reset(fd: impl AsFd) -> io::Result<()> {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: l lives for the call and its size is passed.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// The pending error of a socket (SO_ERROR), used to finish a non-blocking connect.
pub fn take_error(fd: impl AsFd) -> io::Result<Option<io::Error>> {
    let mut v: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: v and len are valid for writes.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    })?;
    Ok(if v == 0 {
        None
    } else {
        Some(io::Error::from_raw_os_error(v))
    })
}

/// Whether a TCP connection is over from the peer's side: an error is pending (read and
/// cleared here), or the connection is closed (a reset whose error a write already took). A
/// peer that only half-closed (its FIN, `CLOSE_WAIT`) still waits for its answers: not over.
pub fn peer_gone(fd: impl AsFd) -> io::Result<bool> {
    if take_error(fd.as_fd())?.is_some() {
        return Ok(true);
    }
    // SAFETY: tcp_info is plain data; zeroed is a valid value of it.
    let mut info: libc::tcp_info = unsafe { mem::zeroed() };
    let mut len = mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: info and len are valid for writes of len bytes.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    })?;
    Ok(info.tcpi_state == TCP_CLOSE)
}

/// The kernel's `TCP_CLOSE` state (include/net/tcp_states.h), which libc does not name.
const TCP_CLOSE: u8 = 7;

/// shutdown(SHUT_RDWR): wakes threads blocked in accept() on a listener (Linux).
pub fn shutdown(fd: impl AsFd) -> io::Result<()> {
    // SAFETY: plain integers.
    cvt(unsafe { libc::shutdown(fd.as_fd().as_raw_fd(), libc::SHUT_RDWR) })?;
    Ok(())
}

/// `n` loopback ports free now and distinct from each other: each is held until all are
/// picked (a port freed at once may be handed out again).
pub fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let held = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<Vec<_>>>()?;
    held.iter().map(|l| l.local_addr().map(|a| a.port())).collect()
}
