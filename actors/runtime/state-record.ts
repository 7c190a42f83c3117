// An actor's main record under one state key: read it, read it or refuse with not_found, write it
// (committed with the turn, like every state change).

import { GatewayError } from '../../lib/errors';
import type { ActorState } from './port';

export class StateRecord<T> {
  constructor(private readonly state: ActorState, private readonly key: string, private readonly missing: string) {}

  load(): Promise<T | undefined> {
    return this.state.get<T>(this.key);
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
