// The two KeyValueStore adapters behind AccountStore.

import type { Database } from 'lmdb';
import type { DaprSidecar } from '../../../lib/dapr-http';
import { GatewayError } from '../../../lib/errors';
import type { KeyValueStore } from './store';

export class LmdbKeyValueStore implements KeyValueStore {
  constructor(private readonly db: Database<unknown, string>) {}

  async get<T>(key: string): Promise<T | undefined> {
    return this.db.get(key) as T | undefined;
  }

  async put(key: string, value: unknown): Promise<void> {
    this.db.putSync(key, value);
  }
}

/** Records in the Dapr state store (Redis), shared by every gateway instance. */
export class DaprStateKeyValueStore implements KeyValueStore {
  constructor(private readonly sidecar: DaprSidecar, private readonly storeName = 'statestore') {}

  async get<T>(key: string): Promise<T | undefined> {
    const { status, json } = await this.sidecar.request('GET', `/v1.0/state/${this.storeName}/${encodeURIComponent(key)}`);
    if (status === 204) return undefined;
    if (status !== 200) throw new GatewayError('actor_unavailable', `state store read failed with ${status}`);
    return json as T;
  }

  async put(key: string, value: unknown): Promise<void> {
    const { status } = await this.sidecar.request('POST', `/v1.0/state/${this.storeName}`, [{ key, value }]);
    if (status !== 204 && status !== 200) throw new GatewayError('actor_unavailable', `state store write failed with ${status}`);
  }
}
