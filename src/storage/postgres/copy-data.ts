/**
 * The rows of a `COPY table (columns) FROM STDIN` statement in PostgreSQL's text format, passed
 * as the statement's one parameter: the pooled connection streams them to the server instead of
 * binding them (`storage/bulk-insert.ts`, `postgres/pool.ts`).
 */
export class CopyData {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}
