// An in-memory KeyValueStore for unit tests of code above the account store (values are copied
// in and out, as a real store serialises them).

import type { KeyValueStore } from '../../services/gateway/accounts/store';

export class MemoryKeyValueStore implements KeyValueStore {
  /** What is stored, by key (tests look at the raw records). */
  readonly values = new Map<string, unknown>();
  async get<T>(key: string): Promise<T | undefined> {
    return structuredClone(this.values.get(key)) as T | undefined;
  }
  async put(key: string, value: unknown): Promise<void> {
    this.values.set(key, structuredClone(value));
  }
}
