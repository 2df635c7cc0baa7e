fn main() {
    println!("navi {}", env!("CARGO_PKG_VERSION"));
}
