// What the simulated adapters of one entry share: the entry's name (default 'sim') and the
// request-size limit they report (default 32 MiB; the gateway enforces it, not the sim).

import { HARD_BODY_LIMIT as DEFAULT_MAX_BODY_BYTES } from '../../lib/config';

export interface SimulatedProviderOptions {
  name?: string;
  maxBodyBytes?: number;
}

export abstract class SimulatedAdapter {
  readonly name: string;
  readonly maxBodyBytes: number;

  constructor(options: SimulatedProviderOptions = {}) {
    this.name = options.name ?? 'sim';
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }
}
