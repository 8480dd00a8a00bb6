//! HPACK (RFC 7541): the decoder a server needs for request headers (static and dynamic table,
//! Huffman strings, table size updates) and the few encodings its responses use. The dynamic
//! table lives in one byte buffer that is compacted in place, so a decoder that has warmed up
//! allocates nothing.

mod decode;
mod encode;
pub(crate) mod huffman;
mod static_table;
mod table;
#[cfg(test)]
mod tests;

pub use decode::{BadBlock, Decoder};
pub use encode::{put_indexed, put_integer, put_literal, put_string, static_index};
pub use static_table::{CONTENT_LENGTH, CONTENT_TYPE, SERVER, STATUS};
pub use table::{ENTRY_OVERHEAD, TABLE_SIZE};
