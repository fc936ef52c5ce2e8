//! `rab-fake-telegram`: the fake Bot API server on its own, for benchmarks. Prints its
//! API base on the first line of stdout and serves until stdin closes.

fn main() {
    let tg = rab_fake_telegram::FakeTelegram::start();
    println!("{}", tg.api_base());
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {
        sink.clear();
    }
}
