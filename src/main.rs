fn main() -> std::process::ExitCode {
    navi::cli::main()
}
