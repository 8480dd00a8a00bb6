//! An HTTP/2 client's side of the wire: frames and request header blocks as a client writes
//! them, a server's output read back into what each stream got (`wire`), and a burst of
//! concurrent echoed streams (`burst`).

pub mod burst;
pub mod wire;
