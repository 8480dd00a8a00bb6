//! A request's header block: HEADERS and its CONTINUATIONs assembled within their limits,
//! decoded with HPACK, checked as RFC 9113 8.2-8.3 asks, and the stream opened and answered
//! (or refused, reset, or the connection ended).

use super::*;

impl H2Session {
    pub(super) fn headers<F: Each>(
        &mut self,
        head: Head,
        payload: &[u8],
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        if head.stream == 0 {
            return Err(Code::Protocol);
        }
        let mut fragment = unpad(head, payload)?;
        self.block_problem = None;
        if head.flags & frame::PRIORITY_FLAG != 0 {
            if fragment.len() < 5 {
                return Err(Code::FrameSize);
            }
            if dependency(fragment) == head.stream {
                self.block_problem = Some(Problem::Malformed);
            }
            fragment = &fragment[5..];
        }
        if head.stream > self.last_id {
            if head.stream.is_multiple_of(2) {
                return Err(Code::Protocol);
            }
        } else {
            match self.find(head.stream) {
                // Trailers end the request; a second HEADERS after it is on a closed stream.
                Some(i) if !self.streams[i].ended_in => {
                    if head.flags & frame::END_STREAM == 0 {
                        self.block_problem = Some(Problem::Malformed);
                    }
                }
                Some(_) => self.block_problem = Some(Problem::StreamClosed),
                None => match self.was_closed(head.stream) {
                    Some(Closed::Finished) => return Err(Code::StreamClosed),
                    Some(Closed::ResetByUs) => self.block_problem = Some(Problem::StreamClosed),
                    // A stream identifier below the last, never opened (RFC 9113 5.1.1).
                    None => return Err(Code::Protocol),
                },
            }
        }
        self.block.clear();
        self.block_stream = head.stream;
        self.block_end_stream = head.flags & frame::END_STREAM != 0;
        self.continuations = 0;
        self.fragment(fragment, head.flags & frame::END_HEADERS != 0, out, each, fed)
    }

    /// A piece of the header block; at its end, the block is decoded and acted on.
    pub(super) fn fragment<F: Each>(
        &mut self,
        fragment: &[u8],
        end: bool,
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        if self.block.len() + fragment.len() > MAX_BLOCK {
            return Err(Code::EnhanceYourCalm);
        }
        self.block.extend_from_slice(fragment);
        self.expecting_continuation = !end;
        if !end {
            return Ok(());
        }
        let id = self.block_stream;
        let mut f = Fields::default();
        let block = std::mem::take(&mut self.block);
        let path = &mut self.path;
        path.clear();
        let decoded = self
            .decoder
            .decode(&block, MAX_DECODED, &mut |name, value| field(&mut f, path, name, value));
        self.block = block;
        decoded.map_err(|e| match e {
            hpack::BadBlock::TooLarge => Code::EnhanceYourCalm,
            hpack::BadBlock::Invalid => Code::Compression,
        })?;
        let existing = self.find(id);
        if let Some(problem) = self.block_problem {
            let code = match problem {
                Problem::Malformed => Code::Protocol,
                Problem::StreamClosed => Code::StreamClosed,
            };
            if id > self.last_id {
                self.last_id = id;
            }
            self.reset(out, id, code, fed);
            return Ok(());
        }
        if let Some(i) = existing {
            // Trailers: no pseudo-headers, and they end the request.
            if f.method.is_some() || f.scheme || f.path || f.authority || f.malformed {
                self.reset(out, id, Code::Protocol, fed);
            } else {
                self.end_request(i, out, fed);
                if let Some(i) = self.find(id) {
                    self.flush_stream(i, out);
                }
            }
            return Ok(());
        }
        self.last_id = id;
        if self.peer_gone {
            fed.streams.refused += 1;
            self.remember(id, Closed::ResetByUs);
            frame::rst_stream(out, id, Code::RefusedStream);
            return Ok(());
        }
        if self.streams.len() >= self.limits.max_streams as usize {
            fed.streams.refused += 1;
            self.remember(id, Closed::ResetByUs);
            frame::rst_stream(out, id, Code::RefusedStream);
            return Ok(());
        }
        fed.streams.opened += 1;
        let mut s = self.spare.pop().unwrap_or_else(|| Stream {
            id,
            recv_window: 0,
            send_window: 0,
            recv_owed: 0,
            pending: Vec::new(),
            method: Method::Other,
            ended_in: false,
            abort_in: false,
            end_out: false,
            done_out: false,
            expect_len: None,
            got_len: 0,
        });
        s.open(id, self.peer_initial_window);
        self.streams.push(s);
        let i = self.streams.len() - 1;
        let whole = if f.connect {
            f.authority && !f.scheme && !f.path
        } else {
            f.scheme && f.path
        };
        let Some(method) = f.method.filter(|_| whole && !f.malformed) else {
            self.reset(out, id, Code::Protocol, fed);
            return Ok(());
        };
        self.streams[i].method = method;
        self.streams[i].expect_len = f.content_length;
        if self.block_end_stream {
            if f.content_length.is_some_and(|n| n != 0) {
                // Its content-length promised a body that will not come.
                self.reset(out, id, Code::Protocol, fed);
                return Ok(());
            }
            self.streams[i].ended_in = true;
        }
        // The answer, after the request's work.
        let status: &[u8] = if f.list_size > MAX_HEAD {
            b"431"
        } else if method == Method::Other {
            b"405"
        } else if method == Method::Echo && f.content_length.is_some_and(|n| n > self.limits.max_body as u64) {
            b"413"
        } else if each(Request { target: &self.path }, out) == Answer::Refuse {
            b"400"
        } else {
            b"200"
        };
        fed.requests += 1;
        let s = &mut self.streams[i];
        if status != b"200" {
            // Refused with a status and a short body; a body still coming is not wanted.
            s.method = Method::Other;
            s.pending.extend_from_slice(refusal_body(status));
            self.held += s.pending.len();
            s.end_out = true;
            response_head(out, id, status, None, s.pending.len(), false);
            s.abort_in = !s.ended_in;
            self.flush_stream(i, out);
            return Ok(());
        }
        match method {
            Method::Get => {
                s.pending.extend_from_slice(BODY);
                self.held += BODY.len();
                s.end_out = true;
                response_head(out, id, b"200", Some(b"text/html"), BODY.len(), false);
            }
            Method::Head => {
                s.end_out = true;
                s.done_out = true;
                response_head(out, id, b"200", Some(b"text/html"), BODY.len(), true);
            }
            Method::Echo => {
                let len = f.content_length.map_or(usize::MAX, |n| n as usize);
                response_head(out, id, b"200", Some(b"application/octet-stream"), len, false);
                s.end_out = s.ended_in;
            }
            Method::Other => unreachable!("refused above"),
        }
        self.flush_stream(i, out);
        Ok(())
    }
}
