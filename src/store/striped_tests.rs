//! A striped keyspace (`striped:N`) under the sessions: the same answers as one table, and
//! MSET and MGET atomic across stripes.

use super::protocol_tests::{talk_to, whole, Keyed, RESP_SESSION};
use super::Striped;
use crate::proto::keyed::{Op, Outcome, Replies};
use crate::proto::Protocol;
use crate::proto::{Answer, Each, Proto, Request, Session};

#[test]
fn a_striped_keyspace_answers_every_command_as_one_table_does() {
    let memcache: &[u8] = b"set a 0 0 1\r\n1\r\nset b 5 0 2\r\nxy\r\nget a b c\r\ngets a\r\nincr a 9\r\n\
delete b\r\ndelete b 0\r\nadd a 0 0 1\r\nz\r\nreplace c 0 0 1\r\nz\r\ntouch a 10\r\nflush_all\r\nget a\r\n";
    let mut more = RESP_SESSION.to_vec();
    more.extend_from_slice(
        b"MSET a 1 b 2 c 3 d 4 e 5 f 6\r\nMGET f e d c b a z\r\nDEL a c e z\r\nEXISTS a b c d\r\nDBSIZE\r\nINFO\r\n",
    );
    for (proto, input) in [(Proto::Resp, &more[..]), (Proto::Memcache, memcache)] {
        for stripes in [1, 3, 16] {
            let striped = Keyed::striped(stripes);
            assert_eq!(
                talk_to(striped, proto, &[input]),
                whole(proto, input),
                "{stripes} stripes"
            );
        }
    }
}

#[test]
fn a_striped_mset_is_seen_whole_or_not_at_all() {
    // One thread writes MSET a N b N ... over keys of many stripes; another reads them all
    // with MGET: every read sees one MSET's values, never a mix.
    let store = std::sync::Arc::new(Striped::new(8, Default::default()));
    let keys: Vec<String> = (0..8).map(|i| format!("key{i}")).collect();
    let writer = {
        let (store, keys) = (store.clone(), keys.clone());
        std::thread::spawn(move || {
            for n in 0..3000 {
                let mut cmd = format!("*{}\r\n$4\r\nMSET\r\n", 1 + 2 * keys.len());
                for k in &keys {
                    let v = n.to_string();
                    cmd += &format!("${}\r\n{k}\r\n${}\r\n{v}\r\n", k.len(), v.len());
                }
                run_on(&store, Proto::Resp, cmd.as_bytes());
            }
        })
    };
    // Each read's replies: a missing key is `$-1`, a value its bulk's line; all the same.
    let mget = format!("MGET {}\r\n", keys.join(" "));
    let (mut mixed, mut reads) = (0, 0);
    loop {
        let done = writer.is_finished();
        let out = run_on(&store, Proto::Resp, mget.as_bytes());
        let values: Vec<&str> = out
            .split("\r\n")
            .skip(1)
            .filter(|l| !l.is_empty() && (*l == "$-1" || !l.starts_with('$')))
            .collect();
        assert_eq!(values.len(), keys.len(), "{out}");
        mixed += usize::from(values.iter().any(|v| *v != values[0]));
        reads += 1;
        if done {
            break;
        }
    }
    writer.join().unwrap();
    assert_eq!(mixed, 0, "reads (of {reads}) that saw two MSETs at once");
    assert_eq!(run_on(&store, Proto::Resp, b"GET key7\r\n"), "$4\r\n2999\r\n");
}

/// Runs `input` on a session over `store`: its replies.
fn run_on(store: &Striped, proto: Proto, input: &[u8]) -> String {
    struct On<'a>(&'a Striped);
    impl Each for On<'_> {
        fn request(&mut self, _: Request<'_>, _: &mut Vec<u8>) -> Answer {
            Answer::Serve
        }
        fn command(&mut self, op: Op<'_>, replies: &mut dyn Replies) -> Outcome {
            self.0.run(op, std::time::Instant::now(), replies)
        }
    }
    let mut s = Session::new(proto);
    let mut out = Vec::new();
    s.feed_each(input, &mut out, &mut On(store));
    String::from_utf8_lossy(&out).into_owned()
}

/// `--max-keys` holds to the key over stripes, and uniform keys fill it: each stripe holds the
/// floor of an even share and the remainder is spread (before: each the ceiling, so
/// `striped:16 --max-keys 1000` held 1,008 after 5,000 distinct SETs).
#[test]
fn max_keys_holds_to_the_key_over_stripes_and_uniform_keys_fill_it() {
    for (stripes, max) in [(16, 1000), (7, 100), (3, 3)] {
        let store = Striped::new(
            stripes,
            super::Bounds {
                max_keys: Some(max),
                max_bytes: None,
            },
        );
        let mut sets = String::new();
        for k in 0..5 * max {
            sets += &format!("SET key:{k} v\r\n");
        }
        run_on(&store, Proto::Resp, sets.as_bytes());
        let held: i64 = run_on(&store, Proto::Resp, b"DBSIZE\r\n")
            .trim()
            .trim_start_matches(':')
            .parse()
            .unwrap();
        assert!(held <= max as i64, "{stripes} stripes, --max-keys {max}: held {held}");
        assert!(
            held * 100 >= max as i64 * 95,
            "{stripes} stripes, --max-keys {max}: held only {held}"
        );
    }
}
