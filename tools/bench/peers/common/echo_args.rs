// echo_args.rs — the flags of the Rust echo servers of the tcp_echo scenario, the same as the C++
// servers' (tools/bench/echo_server_args.hpp): `--port P [--threads N]`. Included by
// tools/bench/peers/{tokio,smol}/src/bin/*_echo.rs through `#[path]`.
//
// Numbers are the whole of their text in decimal and inside their range (no '+', no wrapping); a
// bad flag ends the program with one line naming it and exit status 2.
#![allow(dead_code)]

pub const THREADS_MAX: u64 = 64;
pub const THREADS_DEFAULT: usize = 2;
/// Bytes a server reads at once: the scenario's largest message (4 KiB) fits whole.
pub const BUFFER_BYTES: usize = 16 * 1024;
const EXIT_USAGE: i32 = 2;

pub struct EchoArgs {
    pub port: u16,
    pub threads: usize,
}

fn usage_error(program: &str, flag: &str, message: &str) -> ! {
    eprintln!("{}: {}: {}", program, flag, message);
    std::process::exit(EXIT_USAGE);
}

fn parse_integer(program: &str, flag: &str, text: Option<String>, min: u64, max: u64) -> u64 {
    let text = text.unwrap_or_else(|| usage_error(program, flag, "needs a value"));
    let range = format!("[{}, {}]", min, max);
    let negative = text.len() > 1 && text.starts_with('-') && text[1..].bytes().all(|b| b.is_ascii_digit());
    if negative {
        usage_error(program, flag, &format!("{} is outside the accepted range {}", text, range));
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        usage_error(program, flag, &format!("'{}' is not a decimal integer; accepted: {}", text, range));
    }
    match text.parse::<u64>() {
        Ok(v) if v >= min && v <= max => v,
        _ => usage_error(program, flag, &format!("{} is outside the accepted range {}", text, range)),
    }
}

pub fn parse_echo_args(program: &str) -> EchoArgs {
    let mut port = None;
    let mut threads = THREADS_DEFAULT;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--port" => port = Some(parse_integer(program, &flag, it.next(), 1, 65535) as u16),
            "--threads" => threads = parse_integer(program, &flag, it.next(), 1, THREADS_MAX) as usize,
            _ => usage_error(program, &flag, "unknown flag; accepted: --port P, --threads N"),
        }
    }
    let port = port.unwrap_or_else(|| usage_error(program, "--port", "required flag missing"));
    EchoArgs { port, threads }
}

/// A connection's echo loop: read into a buffer, write back what was read, until end of stream
/// or an error (a reset: the client is done). Written once for both servers as a macro because
/// their streams implement different traits (tokio's, futures-io's) with the same method names;
/// the caller imports its runtime's read/write extension traits.
macro_rules! echo_until_closed {
    ($stream:expr) => {{
        let mut buf = vec![0u8; BUFFER_BYTES];
        loop {
            let n = match $stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if $stream.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    }};
}
