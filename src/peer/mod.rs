//! The other side of the protocols, for tests, fuzz targets and tools: what a client writes and
//! how it reads a server back, sans I/O. Not the load generator's client (`load`), which
//! measures; these only speak.

pub mod h2;
