// The engine's test files whose runs must have the machine to themselves: each kills, pauses or
// restarts nodes mid-run and waits a set time for the recovery, or compares figures measured under
// load. Two files at a time, a run's broker shares two cores with another file's and a fault test's
// recovery can miss its window (cluster-faults did not get back to 90% of its rate in time, and a
// managed Kafka's rolling restart did not finish, when tried). They run alone, one after another;
// the other files run two at a time after them.
export const ALONE = [
  'test/managed-kafka-faults.test.ts',
  'test/cluster-faults.test.ts',
  'test/cluster-fault-kinds.test.ts',
  'test/replication-checker.test.ts',
  'test/fault-sampling.test.ts',
  'test/coordinated-omission.test.ts',
  'test/cross-check.test.ts',
];
