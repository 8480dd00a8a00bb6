//! HTTP/2 framing (RFC 9113 section 4 and 6): the frame header, the types, flags, settings and
//! error codes the session uses, and writers for the frames a server sends.

mod format;
mod reader;

pub use format::{
    dependency, goaway, head, rst_stream, settings, unpad, window_update, Code, Head, ACK, CONTINUATION, DATA,
    END_HEADERS, END_STREAM, GOAWAY, HEADERS, HEADER_LEN, INITIAL_WINDOW, MAX_FRAME, MAX_WINDOW, PADDED, PING, PREFACE,
    PRIORITY, PRIORITY_FLAG, PUSH_PROMISE, RST_STREAM, SETTINGS, SETTINGS_ENABLE_PUSH, SETTINGS_INITIAL_WINDOW_SIZE,
    SETTINGS_MAX_CONCURRENT_STREAMS, SETTINGS_MAX_FRAME_SIZE, SETTINGS_MAX_HEADER_LIST_SIZE, WINDOW_UPDATE,
};
pub use reader::{Block, Frame, ReadError, Reader};
