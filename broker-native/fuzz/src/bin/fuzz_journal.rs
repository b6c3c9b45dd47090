fn main() {
    afl::fuzz!(|data: &[u8]| kbench_broker_fuzz::journal::run(data));
}
