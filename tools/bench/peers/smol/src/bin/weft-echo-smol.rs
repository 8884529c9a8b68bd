// weft-echo-smol — the tcp_echo scenario's server on smol's pieces: one `async_executor::Executor`
// run by --threads threads (each `async_io::block_on(ex.run(..))`, as smol does and as the
// scenarios peer does), one `async_io::Async<TcpListener>` on 127.0.0.1:P whose accept loop
// spawns a task per connection that reads into a buffer and writes back what it read
// (`write_all`) until the peer closes. async-io's reactor is driven by whichever thread is idle.
//
//   weft-echo-smol --port P [--threads N]
#[path = "../../../common/echo_args.rs"]
#[macro_use]
mod echo_args;

use async_executor::Executor;
use async_io::Async;
use echo_args::*;
use futures_lite::{future, AsyncReadExt, AsyncWriteExt};
use std::net::{TcpListener, TcpStream};

async fn serve(mut stream: Async<TcpStream>) {
    echo_until_closed!(stream);
}

fn main() {
    let a = parse_echo_args("weft-echo-smol");
    // Leaked: the accept loop spawns onto it for the whole life of the process.
    let ex: &'static Executor<'static> = Box::leak(Box::new(Executor::new()));
    let listener = Async::<TcpListener>::bind(([127, 0, 0, 1], a.port)).unwrap_or_else(|e| {
        eprintln!("weft-echo-smol: bind 127.0.0.1:{}: {}", a.port, e);
        std::process::exit(1);
    });
    ex.spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("weft-echo-smol: accept: {}", e);
                    continue;
                }
            };
            stream.get_ref().set_nodelay(true).ok(); // best effort: a peer may already have reset
            ex.spawn(serve(stream)).detach();
        }
    })
    .detach();
    let threads: Vec<_> = (0..a.threads)
        .map(|_| std::thread::spawn(move || async_io::block_on(ex.run(future::pending::<()>()))))
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
