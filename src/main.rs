//! The `seneschal` binary: parse argv, act, return an exit code.

fn main() -> std::process::ExitCode {
    seneschal::cli::main()
}
