// What the simulated adapters of one entry share: the entry's name (default 'sim') and the
// request-size limit they report (default 32 MiB; the gateway enforces it, not the sim).

export interface SimulatedProviderOptions {
  name?: string;
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

export abstract class SimulatedAdapter {
  readonly name: string;
  readonly maxBodyBytes: number;

  constructor(options: SimulatedProviderOptions = {}) {
    this.name = options.name ?? 'sim';
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }
}
