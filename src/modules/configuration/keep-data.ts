/**
 * What an upload that keeps the processing data (`keep=processing-data`) must check against the
 * stored data (docs/adr/0018-keep-data-safety.md): a change of the rules is safe when every stored
 * record still conforms to its entity and the journal definition still has the fields stored
 * journals use. Which changes could break that is read from the two configurations
 * ({@link StoredDataRisks}); whether the data stored now is concerned is a question to the store
 * ({@link StoredDataTest}), answered with a few index-bounded queries per risky change.
 */
import type { Configuration } from './model.js';

/** A question to the store about the data stored now; true ("found") makes its change blocking. */
export type StoredDataTest =
  /** Any record of the entity. */
  | { kind: 'records'; namespace: string; entity: string }
  /** Any record of the entity with a non-null value of the attribute. */
  | { kind: 'records-with'; namespace: string; entity: string; attribute: string }
  /** Any record of the entity without a value of the attribute (absent, null or empty text). */
  | { kind: 'records-without'; namespace: string; entity: string; attribute: string }
  /** Any journal. */
  | { kind: 'journals' }
  /** Any journal line whose stored record (the fields no column holds) has a value of the field. */
  | { kind: 'lines-with'; field: string };

/** A change that would break the stored data if the store finds what its test asks about. */
export interface StoredDataRisk {
  /**
   * JSON Pointer into the candidate configuration (into the stored one for a removal), such as
   * `/entities/0`; the service makes it a pointer into the uploaded document before it asks the
   * store, so that the store answers blocking changes with document pointers.
   */
  path: string;
  reason: string;
  test: StoredDataTest;
}

/** A change that the stored data forbids: where, and why. */
export interface BlockingChange {
  /**
   * JSON Pointer into the uploaded document (into the stored one for a removal), as a 400 names
   * the problems of an upload: `/configuration/entities/0/attributes/3/type`.
   */
  path: string;
  reason: string;
}

/**
 * The changes from `stored` to `candidate` that could break stored data, each with the test that
 * tells. A function of the entities module given by the composition root, since it knows how a
 * configuration defines its entities; pure.
 */
export type StoredDataRisks = (stored: Configuration, candidate: Configuration) => StoredDataRisk[];

/** Whether an upload could keep the processing data, as the dry run of a plain upload answers it. */
export type KeepPossibility = { possible: true } | { possible: false; blocking: BlockingChange[] };

/** How many of the records that failed processing would post under a candidate configuration. */
export interface WhatIfAnswer {
  wouldPost: number;
  /** Records that would still fail, by error code. */
  wouldStillFail: Record<string, number>;
  /** A few of the records run, as the what-if function describes them. */
  examples: Record<string, unknown>[];
}
