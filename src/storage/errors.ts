/**
 * The store cannot be reached, opened or created. Its message is one line that says what is
 * wrong and what to do, with no password and no stack, for start-up to print as it is.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
