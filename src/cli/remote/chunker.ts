import {
  CHUNK_BODY_BYTES_MAX as SERVICE_CHUNK_BODY_BYTES_MAX,
  CHUNK_RECORDS_MAX as SERVICE_CHUNK_RECORDS_MAX,
} from '../../modules/ingestion/chunk-body.js';
import type { Place } from './record-sources.js';

/** Largest chunk body sent, in bytes as serialised: just under the service's limit. */
export const CHUNK_BODY_BYTES_MAX = SERVICE_CHUNK_BODY_BYTES_MAX - 1;
/**
 * Most records in one chunk: half of what the service takes, so that tiny records do not make
 * one chunk slow to validate or its answer of failed records large.
 */
export const CHUNK_RECORDS_MAX = SERVICE_CHUNK_RECORDS_MAX / 2;

/** A chunk ready to send: its body `{ chunkName, data }` already serialised. */
export interface Chunk {
  /** 1, 2, ... in file order; part of the chunk's idempotency key. */
  no: number;
  name: string;
  body: string;
  bytes: number;
  records: number;
  /** Where each record came from in the file, by index in `data`. */
  places: Place[];
}

/**
 * Packs record texts (each one serialised JSON object) into chunk bodies of at most `bytesMax`
 * bytes and `recordsMax` records, measuring the exact serialised size as records are added.
 * Pure; the caller feeds records in file order.
 */
export class ChunkBuilder {
  private no = 0;
  private name = '';
  private overheadBytes = 0;
  private texts: string[] = [];
  private places: Place[] = [];
  private bytes = 0;

  constructor(
    private readonly namePrefix: string,
    private readonly bytesMax = CHUNK_BODY_BYTES_MAX,
    private readonly recordsMax = CHUNK_RECORDS_MAX,
  ) {
    this.open();
  }

  /**
   * Adds a record. Returns the chunk it completed, when the record did not fit in the open one
   * (the record then opens the next chunk). Throws RangeError when the record alone exceeds
   * a chunk; the caller reports it and goes on.
   */
  add(text: string, place: Place): Chunk | undefined {
    const recordBytes = Buffer.byteLength(text);
    // One byte spare: the next chunk's name may be a digit longer than the open one's.
    if (this.overheadBytes + 1 + recordBytes > this.bytesMax) {
      throw new RangeError(
        `the record is ${recordBytes} bytes serialised; a chunk carries at most ${this.bytesMax} bytes`,
      );
    }
    const separatorBytes = this.texts.length === 0 ? 0 : 1;
    let completed: Chunk | undefined;
    if (this.bytes + separatorBytes + recordBytes > this.bytesMax || this.texts.length >= this.recordsMax) {
      completed = this.finish();
    }
    this.bytes += (this.texts.length === 0 ? 0 : 1) + recordBytes;
    this.texts.push(text);
    this.places.push(place);
    return completed;
  }

  /** The open chunk when it holds a record (then a new one is opened), else undefined. */
  finish(): Chunk | undefined {
    if (this.texts.length === 0) return undefined;
    const chunk: Chunk = {
      no: this.no,
      name: this.name,
      body: `{"chunkName":${JSON.stringify(this.name)},"data":[${this.texts.join(',')}]}`,
      bytes: this.bytes,
      records: this.texts.length,
      places: this.places,
    };
    this.open();
    return chunk;
  }

  private open(): void {
    this.no += 1;
    this.name = `${this.namePrefix}-${this.no}`;
    this.overheadBytes = Buffer.byteLength(`{"chunkName":${JSON.stringify(this.name)},"data":[]}`);
    this.texts = [];
    this.places = [];
    this.bytes = this.overheadBytes;
  }
}
