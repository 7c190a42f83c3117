// How every actor keeps its state: its main record under one key (read it, read it or refuse with
// not_found, write it) and families of records under a key prefix, one per id. Writes are
// committed with the turn, like every state change.

import { GatewayError } from '../../lib/errors';
import type { ActorState } from './port';

export class StateRecord<T> {
  /** `upgrade` brings a record written in an older shape to the current one as it is read. */
  constructor(
    private readonly state: ActorState,
    private readonly key: string,
    private readonly missing: string,
    private readonly upgrade?: (stored: T) => T,
  ) {}

  async load(): Promise<T | undefined> {
    const stored = await this.state.get<T>(this.key);
    return stored === undefined || !this.upgrade ? stored : this.upgrade(stored);
  }

  async required(): Promise<T> {
    const value = await this.load();
    if (value === undefined) throw new GatewayError('not_found', this.missing);
    return value;
  }

  save(value: T): void {
    this.state.set(this.key, value);
  }
}

/** A family of records under one key prefix, one per id (an ended hold, a lease, a credit reference, a workspace's sessions). */
export class StateRecords<T> {
  constructor(private readonly state: ActorState, private readonly prefix: string) {}

  get(id: string): Promise<T | undefined> {
    return this.state.get<T>(this.prefix + id);
  }

  set(id: string, value: T, options?: { keep?: boolean }): void {
    this.state.set(this.prefix + id, value, options);
  }
}
