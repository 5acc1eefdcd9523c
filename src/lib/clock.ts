/** The source of "now" for everything that depends on time, injected so tests control it. */
export interface Clock {
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that tests move by hand. */
export class ManualClock implements Clock {
  #nowMs: number;

  constructor(start: Date | string) {
    this.#nowMs = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#nowMs);
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.#nowMs += ms;
  }

  set(at: Date | string): void {
    this.#nowMs = new Date(at).getTime();
  }
}
