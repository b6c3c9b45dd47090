#!/usr/bin/env node
// Writes crates/wire/src/shapes/*.rs: the wire layout (field order, types, the versions each field
// is present in, and tags) of every request our broker decodes, every response our load engine
// decodes, the response header and the consumer protocol's embedded messages, read from Apache
// Kafka's message definitions. Both sides walk bytes from the network with these shapes before
// kafka-protocol decodes them, so that no count on the wire is trusted (see crates/wire).
//
// The definitions ship inside the kafka-clients jar (common/message/*.json). Use the version
// kafka-protocol was generated from (4.1.0 for kafka-protocol 0.18):
//   mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.1.0
//   node scripts/gen-shapes.mjs ~/.m2/repository/org/apache/kafka/kafka-clients/4.1.0/kafka-clients-4.1.0.jar
// Run from broker-native/; then `cargo fmt`.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** The APIs our broker serves (requests it decodes) and whose responses the load engine decodes. */
const APIS = [
  'Produce',
  'Fetch',
  'ListOffsets',
  'Metadata',
  'OffsetCommit',
  'OffsetFetch',
  'FindCoordinator',
  'JoinGroup',
  'Heartbeat',
  'LeaveGroup',
  'SyncGroup',
  'DescribeGroups',
  'ListGroups',
  'ApiVersions',
  'CreateTopics',
  'DeleteTopics',
  'InitProducerId',
  'DescribeConfigs',
  'AlterConfigs',
  'CreatePartitions',
  'IncrementalAlterConfigs',
  'DescribeCluster',
  'SaslHandshake',
  'SaslAuthenticate',
];

/** Messages carried inside a response rather than framed on their own. */
const HEADERS = ['ResponseHeader'];
const DATA = ['ConsumerProtocolSubscription', 'ConsumerProtocolAssignment'];

const jar = process.argv[2];
if (!jar) {
  console.error('usage: node scripts/gen-shapes.mjs <kafka-clients.jar>');
  process.exit(2);
}

function readDefinition(name) {
  const text = execFileSync('unzip', ['-p', jar, `common/message/${name}.json`], { encoding: 'utf8' });
  // The files carry a licence header and notes as // comments, which JSON does not allow.
  const json = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
  return JSON.parse(json);
}

const MAX = 32767;

/** "3+", "0-12", "5" or "none" as an inclusive [low, high] pair; "none" is empty. */
function range(spec) {
  if (spec === undefined || spec === 'none') return [1, 0];
  const text = String(spec).trim();
  if (text.endsWith('+')) return [Number(text.slice(0, -1)), MAX];
  const dash = text.indexOf('-');
  if (dash > 0) return [Number(text.slice(0, dash)), Number(text.slice(dash + 1))];
  return [Number(text), Number(text)];
}

const PRIMITIVES = {
  bool: 'Ty::Fixed(1)',
  int8: 'Ty::Fixed(1)',
  int16: 'Ty::Fixed(2)',
  uint16: 'Ty::Fixed(2)',
  int32: 'Ty::Fixed(4)',
  uint32: 'Ty::Fixed(4)',
  int64: 'Ty::Fixed(8)',
  float64: 'Ty::Fixed(8)',
  uuid: 'Ty::Fixed(16)',
  string: 'Ty::Str',
  bytes: 'Ty::Bytes',
  records: 'Ty::Bytes',
};

function typeOf(field, common) {
  let name = field.type.trim();
  const array = name.startsWith('[]');
  if (array) name = name.slice(2);
  let inner = PRIMITIVES[name];
  if (!inner) {
    const fields = field.fields ?? common.get(name)?.fields;
    if (!fields) throw new Error(`no definition for struct ${name} (field ${field.name})`);
    inner = `Ty::Struct(&[${fields.map((f) => fieldOf(f, common)).join(', ')}])`;
  }
  return array ? `Ty::Array(&${inner})` : inner;
}

function fieldOf(field, common) {
  if (field.flexibleVersions !== undefined) {
    // Only RequestHeader's ClientId has one; a message using it needs the walker taught first.
    throw new Error(`field ${field.name} overrides flexibleVersions`);
  }
  const [vlo, vhi] = range(field.versions);
  const tag = field.tag === undefined ? -1 : Number(field.tag);
  return `Field { versions: (${vlo}, ${vhi}), tag: ${tag}, ty: ${typeOf(field, common)} }`;
}

function snake(name) {
  return name.replace(/([a-z])([A-Z])/g, '$1_$2');
}

/** One message's shape as a Rust constant named `constant`. */
function shapeOf(message, constant) {
  const def = readDefinition(message);
  const common = new Map((def.commonStructs ?? []).map((s) => [s.name, s]));
  const [vlo, vhi] = range(def.validVersions);
  const [flexible] = range(def.flexibleVersions);
  const fields = def.fields.map((f) => fieldOf(f, common)).join(',\n    ');
  return {
    apiKey: def.apiKey ?? -1,
    constant,
    text: `/// ${def.name}, versions ${def.validVersions}, flexible ${def.flexibleVersions}.
pub const ${constant}: Shape = Shape {
    name: "${def.name}",
    api_key: ${def.apiKey ?? -1},
    versions: (${vlo}, ${vhi}),
    flexible_from: ${def.flexibleVersions === 'none' ? MAX : flexible},
    fields: &[
    ${fields}
    ],
};`,
  };
}

/** A module of shapes: every message in `messages`, plus lookup by API key when they have one. */
function writeModule(file, about, messages, suffix) {
  const shapes = messages.map((m) => shapeOf(`${m}${suffix}`, snake(m).toUpperCase()));
  const byKey = shapes.every((s) => s.apiKey >= 0)
    ? `
/// The shape of API \`api_key\`, if it is one of [\`ALL\`].
pub fn by_key(api_key: i16) -> Option<&'static Shape> {
    match api_key {
        ${shapes.map((s) => `${s.apiKey} => Some(&${s.constant}),`).join('\n        ')}
        _ => None,
    }
}
`
    : '';
  const out = `//! Generated by scripts/gen-shapes.mjs from Apache Kafka's message definitions
//! (kafka-clients 4.1.0, common/message/*.json). Do not edit.
//!
//! ${about}

use crate::shape::{Field, Shape, Ty};

/// Every shape in this module.
pub const ALL: &[Shape] = &[${shapes.map((s) => s.constant).join(', ')}];
${byKey}
${shapes.map((s) => s.text).join('\n\n')}
`;
  writeFileSync(`crates/wire/src/shapes/${file}`, out);
  console.log(`wrote crates/wire/src/shapes/${file} (${shapes.length} shapes)`);
}

writeModule('requests.rs', 'Request bodies (after the request header).', APIS, 'Request');
writeModule('responses.rs', 'Response bodies (after the response header).', APIS, 'Response');
writeModule('headers.rs', 'The response header.', HEADERS, '');
writeModule(
  'data.rs',
  "The consumer protocol's messages, carried as bytes inside JoinGroup and SyncGroup.",
  DATA,
  '',
);
