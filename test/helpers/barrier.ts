/**
 * A meeting point for `parties` concurrent callers: each call resolves once `parties` calls are
 * waiting, and at once from then on. Concurrency tests hold each side there to show that the
 * interleaving they test happened.
 */
export function barrier(parties: number): () => Promise<void> {
  let waiting = 0;
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return async () => {
    waiting += 1;
    if (waiting >= parties) release();
    await released;
  };
}
