// weft-echo-tokio — the tcp_echo scenario's server on tokio: a multi-thread runtime of --threads
// workers, one `tokio::net::TcpListener` on 127.0.0.1:P, a task spawned per connection that
// reads into a buffer and writes back what it read (`write_all`) until the peer closes. tokio's
// ordinary server shape; tasks go where tokio's scheduler puts them (tools/bench/README.md).
//
//   weft-echo-tokio --port P [--threads N]
#[path = "../../../common/echo_args.rs"]
#[macro_use]
mod echo_args;

use echo_args::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn serve(mut stream: TcpStream) {
    echo_until_closed!(stream);
}

fn main() {
    let a = parse_echo_args("weft-echo-tokio");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(a.threads)
        .enable_io()
        .build()
        .expect("tokio runtime");
    rt.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", a.port)).await.unwrap_or_else(|e| {
            eprintln!("weft-echo-tokio: bind 127.0.0.1:{}: {}", a.port, e);
            std::process::exit(1);
        });
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("weft-echo-tokio: accept: {}", e);
                    continue;
                }
            };
            stream.set_nodelay(true).ok(); // best effort: a peer may already have reset
            tokio::spawn(serve(stream));
        }
    });
}
