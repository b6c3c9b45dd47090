import { describe, expect, it } from 'vitest';
import { newClusterId } from '../src/index.js';

// kafka-storage format's argument parser reads `--cluster-id -abc…` as a missing value followed by
// an option, so an id starting with '-' failed one format in 64 (it did in CI).
describe('newClusterId', () => {
  it('makes 16-byte URL-safe ids that never start with a dash', () => {
    const ids = Array.from({ length: 5000 }, () => newClusterId());
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
