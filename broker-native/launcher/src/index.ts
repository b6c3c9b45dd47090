export { type BundledBroker, bundledBrokerBinary, startBundledBroker } from './broker.js';
export {
  type BundledCluster,
  type BundledClusterNode,
  type BundledClusterOptions,
  startBundledCluster,
} from './cluster.js';
