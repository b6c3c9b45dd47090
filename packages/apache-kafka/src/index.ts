export {
  makeTestCertificates,
  type TestCertificateOptions,
  type TestCertificates,
} from './certs.js';
export { KafkaToolError, MissingProgramError } from './errors.js';
export {
  type EnsureKafkaJarsOptions,
  ensureJmxExporter,
  ensureKafkaJars,
  JMX_EXPORTER_CONFIG,
  JMX_EXPORTER_VERSION,
  type JmxExporter,
  type KafkaJars,
} from './jars.js';
export {
  type KafkaToolResult,
  type LogLevel,
  type RunKafkaToolOptions,
  runKafkaTool,
  TOOL_JVM_ARGS,
} from './java.js';
export {
  type ConsumerPerformanceSummary,
  type ProducerPerformanceSummary,
  parseConsumerPerformance,
  parseProducerPerformance,
} from './parse.js';
export { KAFKA_VERSION, kafkaCacheDir, kbenchCache, kbenchHome } from './paths.js';
export {
  type ConsumerPerformanceOptions,
  type ConsumerPerformanceResult,
  consumerPerformance,
  type ProducerPerformanceOptions,
  type ProducerPerformanceResult,
  producerPerformance,
} from './perf.js';
export { answersApiVersions, freePort, kafkaRequest, metadataBrokerIds } from './ports.js';
export {
  type ApacheKafka,
  type ApacheKafkaNode,
  type ManagedClientAuth,
  type ManagedSasl,
  type ManagedSaslMechanism,
  type ManagedTls,
  type NodeLayout,
  newClusterId,
  SERVER_JVM_ARGS,
  type StartApacheKafkaOptions,
  serverProperties,
  startApacheKafka,
  tlsFiles,
} from './server.js';
export { type UnsecuredJwtOptions, unsecuredJwt } from './unsecured-jwt.js';
