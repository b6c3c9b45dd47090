fn main() {
    afl::fuzz!(|data: &[u8]| kbench_broker_fuzz::recovery::run(data));
}
