// Cancellation shared by the runner (checked between timed batches), the tuner (between configs) and the
// worker (between stages): one error type, so every layer can tell a cancel from a failure.

/** Thrown when the caller's `cancelled()` said stop. */
export class CancelledError extends Error {
  constructor(message = 'cancelled') {
    super(message);
    this.name = 'CancelledError';
  }
}

/**
 * Throw CancelledError when `cancelled` says so.
 * @example checkCancelled(opts.cancelled); // between two batches
 */
export function checkCancelled(cancelled: (() => boolean) | undefined): void {
  if (cancelled?.()) throw new CancelledError();
}
